"""io_callback: a call of an impure Python function on its operands' values, with declared result types
(tracejit.experimental.io_callback is built on it, as jax.experimental.io_callback).

    io_callback[callback ordered result_avals]  *operands -> *results

It is `effectful`, as debug_callback: no pass removes it (even with its results unused), merges two equal calls,
folds it at compile time or moves it, so it runs each time this point of the program runs, in program order.
Its results are checked against the declared types as pure_callback's are. It has no derivative (JAX's raises
"IO callbacks do not support JVP"); under vmap an unordered one is called once per example, in order (JAX maps
it sequentially), and an ordered one is a ValueError, as in JAX.
"""
from ..core.ad_util import aval
from ..core.batching import move_batch_axis
from ..core.trace import Primitive, bind
from .pure_callback import _impl as _checked_call
from .pure_callback import _Sequential


def _impl(*args, callback, ordered, result_avals):
    return _checked_call(*args, callback=callback, result_avals=result_avals, vmap_method=None)


def _jvp(primals, tangents, **params):
    raise ValueError("IO callbacks do not support JVP.")


def _batch(args, dims, callback, ordered, result_avals):
    if ordered:
        raise ValueError("Cannot `vmap` ordered IO callback.")
    size = next(aval(x).shape[d] for x, d in zip(args, dims) if d is not None)
    args = [move_batch_axis(x, d, 0, size) if d is not None else x for x, d in zip(args, dims)]
    out_avals = tuple(a.update(shape=(size, *a.shape)) for a in result_avals)
    outs = bind(io_callback_p, *args, callback=_Sequential(callback, [d is not None for d in dims]),
                ordered=False, result_avals=out_avals)
    return outs, [0] * len(outs)


io_callback_p = Primitive("io_callback", lambda *avals, callback, ordered, result_avals: list(result_avals),
                          _impl, multiple_results=True, effectful=True, jvp=_jvp, batch=_batch)
