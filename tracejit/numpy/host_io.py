"""The host-side functions of jax.numpy: reading arrays from bytes, text, iterables and files (frombuffer,
fromstring, fromiter, load), writing them (save, savez), and printing them (array_repr, array_str and NumPy's
print options). They work on concrete values only, as JAX's: tracejit's arrays are NumPy arrays, so they are
NumPy's functions, with JAX's one addition, load's recovery of bfloat16."""
import numpy as np

from ..core.avals import bfloat16
from ..core.trace import Tracer

# JAX exports NumPy's own functions under these names; tracejit's arrays are NumPy arrays, so the same holds.
save, savez = np.save, np.savez
printoptions, get_printoptions, set_printoptions = np.printoptions, np.get_printoptions, np.set_printoptions


def _concrete(name, x):
    if isinstance(x, Tracer):
        raise TypeError(f"{name}: needs a concrete array, got a traced value {x.aval.str_short()} (under jit, "
                        "print with tracejit.debug.print)")
    return x


def array_repr(arr, max_line_width=None, precision=None, suppress_small=None):
    """np.array_repr of a concrete array (a traced value is a TypeError naming it: its values are not known)."""
    return np.array_repr(np.asarray(_concrete("array_repr", arr)), max_line_width, precision, suppress_small)


def array_str(a, max_line_width=None, precision=None, suppress_small=None):
    """np.array_str of a concrete array (a traced value is a TypeError naming it)."""
    return np.array_str(np.asarray(_concrete("array_str", a)), max_line_width, precision, suppress_small)


def frombuffer(buffer, dtype=float, count=-1, offset=0, *, like=None):
    """The array a buffer's bytes hold (np.frombuffer), as a fresh array the caller owns (JAX copies too); like
    is NumPy's array-creation dispatch, passed on."""
    return np.array(np.frombuffer(buffer, dtype=dtype, count=count, offset=offset, like=like))


def fromstring(string, dtype=float, count=-1, *, sep):
    """The array a string of numbers separated by sep holds (np.fromstring; sep is required, as in JAX)."""
    return np.fromstring(string, dtype=dtype, count=count, sep=sep)


def fromiter(iter, dtype, count=-1, *, like=None):
    """The 1-d array of an iterable's values (np.fromiter), read on the host. JAX refuses fromiter (the iterable
    is consumed, an effect jit would run once, at trace time); tracejit's arrays are NumPy arrays, so it is
    NumPy's: under jit the iterable is read once, when the function is traced, and its values become constants."""
    return np.fromiter(iter, dtype=dtype, count=count, like=like)


def load(file, *args, **kwargs):
    """np.load, with JAX's one change: an array that np.save wrote from bfloat16 (which NumPy stores as the
    2-byte void dtype 'V2') comes back as bfloat16."""
    out = np.load(file, *args, **kwargs)
    if isinstance(out, np.ndarray) and out.dtype == np.dtype("V2"):
        out = out.view(bfloat16)
    return out
