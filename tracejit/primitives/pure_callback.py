"""pure_callback: a call of a Python function on its operands' values, with declared result types (tracejit's
tj.pure_callback is built on it, as jax.pure_callback).

    pure_callback[callback result_avals vmap_method]  *operands -> *results

Unlike debug_callback it is pure: the passes may remove it when its results are unused, merge equal calls, or
call it once at compile time when its operands are constants. Compiled code runs it through the Python driver
(it has no lowering). It has no derivative (a nonzero tangent is an error, as in JAX: give the function a
custom_jvp); under vmap, `vmap_method` says how the callback sees the batch:
  sequential (or sequential_unrolled)  once per example, results stacked;
  expand_dims   once, batched operands with the batch axis first, the others with a leading axis of size 1;
  broadcast_all once, every operand with the batch axis first (the unbatched ones broadcast).
"""
import numpy as np

from ..core.ad_util import aval
from ..core.batching import move_batch_axis
from ..core.trace import Primitive, bind

VMAP_METHODS = ("sequential", "sequential_unrolled", "expand_dims", "broadcast_all")


def _impl(*args, callback, result_avals, vmap_method):
    results = callback(*[np.array(a) for a in args])   # copies: the operands may be views of reused memory
    if len(results) != len(result_avals):
        raise RuntimeError(f"pure_callback {callback.__name__}: the callback returned {len(results)} arrays, "
                           f"{len(result_avals)} were declared")
    outs = []
    for k, (r, a) in enumerate(zip(results, result_avals)):
        r = np.asarray(r)
        if r.shape != a.shape or r.dtype != a.dtype:
            raise RuntimeError(f"pure_callback {callback.__name__}: result {k} is {r.dtype}{list(r.shape)}, but "
                               f"{a.dtype}{list(a.shape)} was declared (result_shape_dtypes)")
        outs.append(r)
    return outs


def _jvp(primals, tangents, **params):
    raise ValueError("Pure callbacks do not support JVP. Please use `tracejit.custom_jvp` to use callbacks while "
                     "taking gradients.")


class _Sequential:
    """The callback of a batched pure_callback that calls `callback` once per example (batch axis 0 of the
    batched operands) and stacks its results."""

    def __init__(self, callback, batched):
        self.callback, self.batched, self.__name__ = callback, tuple(batched), callback.__name__

    def __call__(self, *args):
        size = next(np.shape(x)[0] for x, b in zip(args, self.batched) if b)
        per_example = [self.callback(*[x[i] if b else x for x, b in zip(args, self.batched)]) for i in range(size)]
        return [np.stack(rs) for rs in zip(*per_example)]


class _ExpandDims:
    """The callback of a batched pure_callback with vmap_method expand_dims: unbatched operands get a leading
    axis of size 1."""

    def __init__(self, callback, batched):
        self.callback, self.batched, self.__name__ = callback, tuple(batched), callback.__name__

    def __call__(self, *args):
        return self.callback(*[x if b else np.expand_dims(x, 0) for x, b in zip(args, self.batched)])


def _batch(args, dims, callback, result_avals, vmap_method):
    if vmap_method not in VMAP_METHODS:
        raise NotImplementedError(f"vmap of pure_callback {callback.__name__} needs vmap_method, one of "
                                  f"{', '.join(VMAP_METHODS)}; got vmap_method={vmap_method!r} (as in JAX)")
    size = next(aval(x).shape[d] for x, d in zip(args, dims) if d is not None)
    batched = [d is not None for d in dims]
    if vmap_method == "broadcast_all":
        args, batched = [move_batch_axis(x, d, 0, size) for x, d in zip(args, dims)], [True] * len(args)
    else:
        args = [move_batch_axis(x, d, 0, size) if d is not None else x for x, d in zip(args, dims)]
    wrapper = _ExpandDims if vmap_method in ("expand_dims", "broadcast_all") else _Sequential
    out_avals = tuple(a.update(shape=(size, *a.shape)) for a in result_avals)
    outs = bind(pure_callback_p, *args, callback=wrapper(callback, batched), result_avals=out_avals,
                vmap_method=vmap_method)
    return outs, [0] * len(outs)


pure_callback_p = Primitive("pure_callback", lambda *avals, callback, result_avals, vmap_method: list(result_avals),
                            _impl, multiple_results=True, jvp=_jvp, batch=_batch)
