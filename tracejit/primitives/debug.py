"""debug_callback: an effect staged in the IR, which calls a Python function with its operands' values each
time it runs (tracejit/debug.py builds tj.debug.print and tj.debug.callback on it).

    debug_callback[callback]  *operands -> (no outputs)

It is `effectful`: no pass removes, merges, folds or moves it, reverse mode runs it in the forward pass only
(never again in a checkpoint's recomputation), and loops keep it in their bodies. Compiled code runs it
through the Python driver, in program order with the compiled steps. Under vmap it calls the function once
per example, in order, as JAX's does.
"""
import numpy as np

from ..core.trace import Primitive, bind


def _debug_callback_impl(*args, callback):
    callback(*[np.array(a) for a in args])    # copies: the operands may be views of memory the program reuses
    return []


def _debug_callback_jvp(primals, tangents, callback):
    return bind(debug_callback_p, *primals, callback=callback), []


class PerExample:
    """The callback of a batched debug_callback: calls `callback` once per example, slicing the batched
    operands (batch axis `dims[i]`, None: not batched) along their batch axis."""

    def __init__(self, callback, dims):
        self.callback, self.dims = callback, tuple(dims)
        self.__name__ = getattr(callback, "__name__", "callback")

    def __call__(self, *args):
        size = next(np.shape(x)[d] for x, d in zip(args, self.dims) if d is not None)
        for i in range(size):
            self.callback(*[x if d is None else np.take(x, i, axis=d) for x, d in zip(args, self.dims)])


def _debug_callback_batch(args, dims, callback):
    return bind(debug_callback_p, *args, callback=PerExample(callback, dims)), []


debug_callback_p = Primitive("debug_callback", lambda *avals, callback: [], _debug_callback_impl,
                             multiple_results=True, effectful=True, jvp=_debug_callback_jvp,
                             batch=_debug_callback_batch)
