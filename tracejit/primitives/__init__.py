"""Every primitive, each defined once with all its rules (see DESIGN.md section 5), registered by name so that
rules apply one another through tracejit.core.ops.

Layers: the families (elementwise, special, bitcast, complex_parts, shapes, reductions, linalg, fft, indexing,
scatter, threefry) import only core and the backend's rule kinds (special also the backend's specmath kernels, which
it runs on NumPy arrays); cond, while, scan and custom_linear_solve sit above the transforms they apply to their
sub-IRs."""
from ..core.ops import register
from . import (
               bitcast,
               collectives,
               complex_parts,
               cond,
               convolution,
               cumulative,
               debug,
               elementwise,
               fft,
               fma,
               indexing,
               linalg,
               linalg_eig,
               linalg_factor,
               linalg_lstsq,
               linalg_schur,
               linalg_solve,
               linalg_tridiagonal,
               linear_solve,
               reductions,
               remat,
               scan,
               scatter,
               shapes,
               sorting,
               special,
               threefry,
               top_k,
               while_loop,
               windowed,
)

ALL = register([elementwise, fma, special, bitcast, complex_parts, shapes, reductions, cumulative, linalg, linalg_factor,
                linalg_lstsq, linalg_solve, linalg_eig, linalg_schur, linalg_tridiagonal, fft, indexing, sorting, top_k, scatter, convolution, windowed, threefry, cond, while_loop, scan,
                debug, remat, linear_solve])
# The collectives exist only inside a vmap of their axis name (which resolves them), so the per-primitive tests
# of ALL (jvp, batching and lowering of an example alone) do not apply: tests/test_collectives.py compares them
# with JAX under vmap, jit and grad.
COLLECTIVES = register([collectives])
