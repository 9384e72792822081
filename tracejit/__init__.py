"""tracejit: a tracing JIT for numerical Python, with JAX's API and NumPy's numerics.

    import tracejit as tj, tracejit.numpy as tnp
    tj.jit(f)          compile f per input signature        tj.make_ir(f)(*args)   its IR, as jax.make_jaxpr
    tj.grad(f)         reverse-mode gradient                tj.vmap(f)             batching over an axis
    tj.jvp, tj.vjp, tj.linearize, tj.jacfwd, tj.jacrev, tj.hessian, tj.value_and_grad, tj.eval_shape
    tj.lax, tj.nn, tj.numpy, tj.random, tj.tree, tj.tree_util, tj.custom_jvp, tj.custom_vjp, tj.config, tj.graph
    tj.clear_caches()   drop compiled code held in memory
    tj.checkpoint (tj.remat), tj.checkpoint_policies, tj.ad_checkpoint   recompute instead of store (reverse mode)
    tj.debug.print, tj.debug.callback   see values while compiled code runs; tj.config.debug_nans finds NaNs
    tj.scipy, tj.image, tj.dtypes, tj.errors, tj.typing (tj.Array), tj.pure_callback, tj.custom_gradient, tj.disable_jit,
    tj.flatten_util.ravel_pytree, tj.pmap (one device), tj.experimental.ode.odeint, tj.experimental.io_callback,
    tj.shard_map with tj.make_mesh, tj.P, tj.NamedSharding, tj.sharding (one device: mesh axes of size 1),
    tj.custom_batching.custom_vmap, tj.enable_x64, tj.numpy_dtype_promotion ...
                        JAX's other top-level names for one CPU process (compat.py, derivative_tools.py)

help(tj.jit) explains compilation and its cache; the README, the examples.
"""
import contextlib

from . import (
    ad_checkpoint,
    custom_batching,
    debug,
    dtypes,
    eager,
    errors,
    experimental,
    flatten_util,
    lax,
    nn,
    numpy,
    ops,
    random,
    sharding,
    test_util,
    tree,
    tree_util,
    typing,
)
from ._config import config
from .ad_checkpoint import checkpoint, checkpoint_policies, remat
from .api import eval_shape, jit, make_ir
from .backend import llvm as _llvm
from .batching import vmap
from .callback import pure_callback
from .compat import (
    debug_nans,
    default_device,
    default_matmul_precision,
    device_get,
    disable_jit,
    effects_barrier,
    enable_x64,
    ensure_compile_time_eval,
    host_count,
    host_id,
    log_compiles,
    named_call,
    named_scope,
    numpy_dtype_promotion,
    numpy_rank_promotion,
    print_environment_info,
    process_count,
    process_index,
    typeof,
)
from .core.api_util import ShapeDtypeStruct
from .core.errors import ConcretizationError, EscapedTracerError, ShapeError
from .core.ir import check_ir
from .core.trace import eval_ir
from .custom_derivatives import custom_jvp, custom_vjp
from .derivative_tools import closure_convert, custom_gradient, linear_transpose
from .derivatives import grad, hessian, jacfwd, jacrev, jvp, linearize, value_and_grad, vjp
from .devices import (
    block_until_ready,
    default_backend,
    device_count,
    device_put,
    devices,
    live_arrays,
    local_device_count,
    local_devices,
)
from .dispatch import clear_caches
from .graph import graph
from .nn import initializers as _initializers
from .nn import stop_gradient
from .pmap import pmap
from .shard_map import shard_map
from .sharding import NamedSharding, P, make_mesh, set_mesh
from .typing import Array

make_jaxpr = make_ir
jacobian = jacrev      # jax.jacobian is jax.jacrev
float0 = dtypes.float0


def __getattr__(name):
    """tj.scipy and tj.image load on first use (as `import jax` gives jax.scipy), which keeps them out of
    `import tracejit`'s time (about 14 ms)."""
    if name in ("scipy", "image"):
        import importlib
        return importlib.import_module(f".{name}", __name__)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__():
    return sorted(set(globals()) | {"scipy", "image"})

# The compiler loads with tracejit, as JAX's does, not on the first call (about 18 ms). Without llvmlite,
# tracing and the interpreter work, and compiling raises the ImportError.
with contextlib.suppress(ImportError):
    _llvm.load()


__version__ = "0.1.0"
