"""Seeing values while a program runs, as jax.debug: print and callback, staged as effects in the IR
(primitives/debug.py), so that they run under jit, vmap (once per example), grad (in the forward pass) and
inside cond, while and scan, in program order; and the debug_nans mode.

debug_nans (`tj.config.update("debug_nans", True)` or TRACEJIT_DEBUG_NANS=1): when a jitted function returns
a NaN, its IR is run again with NumPy, equation by equation, and the first equation whose result holds a NaN
is reported as a FloatingPointError, with the line of user code that made it (as JAX re-runs op by op).
"""
import builtins

import numpy as np

from .core.api_util import canonicalize_input, name_of
from .core.avals import is_inexact
from .core.ir import print_eqn_one_line
from .core.pytree import tree_flatten, tree_unflatten
from .core.trace import bind, eval_ir, watching
from .primitives.debug import debug_callback_p


class _Callback:
    """debug_callback's param: calls `fn` with the operand values as the pytree (args, kwargs) they came in;
    named in the IR text."""

    def __init__(self, fn, tree, name):
        self.fn, self.tree, self.__name__ = fn, tree, name

    def __call__(self, *values):
        args, kwargs = tree_unflatten(self.tree, values)
        self.fn(*args, **kwargs)


def _stage(fn, name, args, kwargs):
    leaves, tree = tree_flatten((tuple(args), dict(kwargs)))
    leaves = [canonicalize_input(x, f"{name} argument leaf {i}") for i, x in enumerate(leaves)]
    bind(debug_callback_p, *leaves, callback=_Callback(fn, tree, name))


def callback(callback, *args, ordered=False, **kwargs):
    """Call callback(*args, **kwargs) with the values of the arrays in args and kwargs (pytrees), as NumPy
    arrays, each time this point of the program runs; its result is ignored. Calls run in program order
    (`ordered` is accepted for JAX's signature)."""
    if not callable(callback):
        raise TypeError(f"debug.callback: the first argument must be a function, got {callback!r}")
    _stage(callback, f"callback {name_of(callback)}", args, kwargs)


def print(fmt, *args, ordered=False, **kwargs):
    """Print fmt.format(*args, **kwargs) with the values of the arrays (pytrees) in args and kwargs, each time
    this point of the program runs, as jax.debug.print."""
    if not isinstance(fmt, str):
        raise TypeError(f"debug.print: the format must be a string, got {type(fmt).__name__} {fmt!r}")

    def formatted(*values, **named):
        builtins.print(fmt.format(*values, **named))
    _stage(formatted, f"print {fmt!r}", args, kwargs)


# ------------------------------------------------------------------------------------------------ debug_nans

def _has_nan(x):
    x = np.asarray(x)
    return is_inexact(x.dtype) and bool(np.isnan(x).any())


def _where(eqn):
    if eqn.source_info is None:
        return "an unknown line"
    filename, line, function = eqn.source_info
    return f"{filename}:{line} ({function})"


def _raise_at_nan(eqn, outs):
    """eval_ir's hook, raising at the first equation whose results hold a NaN (the arguments hold none, and
    equations inside control flow run before the equation that holds them)."""
    if any(_has_nan(o) for o in outs if isinstance(o, (np.ndarray, np.generic))):
        raise FloatingPointError(f"invalid value (nan) encountered in {eqn.prim.name}: `{print_eqn_one_line(eqn)}` "
                                 f"at {_where(eqn)}")


def check_nans(function, closed, names, leaves, outs):
    """After a compiled call of `function` (its IR closed, argument names and leaves): when an output holds a
    NaN, re-run the IR with NumPy to name the equation that made it, and raise FloatingPointError."""
    if not any(_has_nan(o) for o in outs):
        return
    for name, x in zip(names, leaves):
        if _has_nan(x):
            raise FloatingPointError(f"invalid value (nan) in the argument {name} of {function} (debug_nans)")
    with watching(_raise_at_nan), np.errstate(all="ignore"):
        eval_ir(closed, *leaves)
    index = next(i for i, o in enumerate(outs) if _has_nan(o))
    raise FloatingPointError(f"invalid value (nan) in output {index} of {function}'s compiled code; running its IR "
                             "with NumPy made no NaN (the compiled code's floating-point may differ; debug_nans)")


__all__ = ["callback", "check_nans", "print"]
