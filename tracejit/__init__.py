"""tracejit: a tracing JIT for numerical Python (see DESIGN.md)."""
from . import lax, nn, numpy, test_util, tree_util
from ._config import config
from .api import jit, make_ir
from .core.api_util import ShapeDtypeStruct
from .core.errors import ConcretizationError, EscapedTracerError, ShapeError
from .core.ir import check_ir
from .core.trace import eval_ir
from .custom_derivatives import custom_jvp, custom_vjp
from .graph import graph
from .nn import stop_gradient
from .transforms.ad import grad, hessian, jacfwd, jacrev, jvp, linearize, value_and_grad, vjp
from .transforms.vmap import vmap

make_jaxpr = make_ir


__version__ = "0.1.0"
