"""Every primitive, each defined once with all its rules (see DESIGN.md section 5), registered by name so that
rules apply one another through tracejit.core.ops.

Layers: the families (elementwise, bitcast, shapes, reductions, linalg, indexing, threefry) import only core and the
backend's rule kinds; cond, while and scan sit above the transforms they apply to their bodies."""
from ..core.ops import register
from . import bitcast, cond, elementwise, indexing, linalg, reductions, scan, shapes, threefry, while_loop

ALL = register([elementwise, bitcast, shapes, reductions, linalg, indexing, threefry, cond, while_loop, scan])
