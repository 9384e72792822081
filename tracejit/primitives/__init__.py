"""Every primitive, each defined once with all its rules (see DESIGN.md section 5)."""
from ..core.trace import Primitive
from . import control_flow, elementwise, indexing, linalg, reductions, shapes

ALL = {p.name: p for m in (elementwise, shapes, reductions, linalg, indexing, control_flow)
       for p in vars(m).values() if isinstance(p, Primitive)}
