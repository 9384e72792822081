"""Strict dtype promotion (JAX's jax_numpy_dtype_promotion="strict"): the mode, set through tracejit.config or
tj.numpy_dtype_promotion, and the check tracejit.numpy's promotion applies to its operands."""
from .avals import dtype_kind

MODES = ("standard", "strict")
_mode = {"value": "standard"}     # the setting's one home: tracejit.config reads and writes it here


class TypePromotionError(ValueError):
    """An implicit promotion refused by strict mode (tj.numpy_dtype_promotion("strict")), as jax.dtypes'."""


def set_mode(value):
    """Sets the mode: "standard" or "strict" (None: standard); anything else is a ValueError, as in JAX."""
    value = "standard" if value is None else value
    if value not in MODES:
        raise ValueError(f"numpy_dtype_promotion: expected 'standard' or 'strict', got {value!r}")
    _mode["value"] = value


def mode():
    """The mode now: "standard" or "strict"."""
    return _mode["value"]


_KINDS = {"b": 0, "i": 1, "u": 1, "f": 2, "c": 3}
_PY_NAMES = {0: "<class 'bool'>", 1: "<class 'int'>", 2: "<class 'float'>", 3: "<class 'complex'>"}


def check_promotion(operands):
    """In strict mode, a TypePromotionError unless the operands' avals share one dtype (Python scalars, weakly
    typed, may join arrays of their kind or a higher one: `x_f32 * 2` is allowed, `x_i32 * 2.5` and `x_bool + 1`
    are not), as JAX's strict mode; nothing in standard mode."""
    if _mode["value"] != "strict":
        return
    strong = sorted({a.dtype for a in operands if not a.weak_type}, key=str)
    weak = max((_KINDS[dtype_kind(a.dtype)] for a in operands if a.weak_type), default=-1)
    if len(strong) > 1 or (strong and weak > _KINDS[dtype_kind(strong[0])]):
        names = [str(d) for d in strong] + ([_PY_NAMES[weak]] if weak >= 0 and strong else [])
        raise TypePromotionError(f"Input dtypes {tuple(names)} have no available implicit dtype promotion path "
                                 "when numpy_dtype_promotion=strict. Try explicitly casting inputs to the desired "
                                 "output type, or set numpy_dtype_promotion=standard.")
