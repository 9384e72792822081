"""Eager binds of costly primitives (core.trace's `costly` flag: the special functions and threefry, whose NumPy
impls run 20-100x slower than their compiled loops) run compiled code: on large arrays at once, on small ones
from the HOT_CALLS + 1-th call with the same signature (a compile costs 20-30 ms, one call of a small impl
0.1-1 ms). One jitted program per primitive, params and which operands are scalars, the others flattened to one
symbolic dimension, so that one compile per dtype serves every size. Through the impls, eager ndtri of 1e6
float64 took 216 ms (compiled: 4.7, after a first call of 17), gammainc of 1e5 81 (7.3), gelu(approximate=False)
of 1e6 734 (3.6), a scalar ndtri 177 us (compiled: 16)."""
import collections
import functools
import math

import numpy as np

from .api import jit
from .core.trace import COSTLY_SIZE, bind, compile_costly_binds

HOT_CALLS = 3                       # eager binds of a small signature that run the impl before it compiles
_calls = collections.Counter()      # of each small signature so far


@functools.cache
def _program(prim, params, scalar):
    """The jitted bind of prim to vectors (one symbolic length) and scalars, at the positions `scalar` marks."""
    def program(vectors, scalars):
        vectors, scalars = iter(vectors), iter(scalars)
        return bind(prim, *[next(scalars) if s else next(vectors) for s in scalar], **dict(params))
    program.__name__ = prim.name
    return jit(program, dynamic_dims={"vectors": {0: "n"}} if not all(scalar) else None)


def _run(prim, arrays, params):
    """The primitive on arrays (of one shape, or rank 0: it is elementwise) by its compiled program; None (the
    impl runs) for the first HOT_CALLS calls of a signature under COSTLY_SIZE elements."""
    shape = np.broadcast_shapes(*(np.shape(a) for a in arrays))
    scalar = tuple(np.ndim(a) == 0 for a in arrays)
    if math.prod(shape) < COSTLY_SIZE:
        signature = (prim, tuple(sorted(params.items())), scalar, tuple(np.asarray(a).dtype for a in arrays))
        _calls[signature] += 1
        if _calls[signature] <= HOT_CALLS:
            return None
    vectors = tuple(np.ascontiguousarray(np.broadcast_to(a, shape)).reshape(-1)
                    for a, s in zip(arrays, scalar) if not s)
    outs = _program(prim, tuple(sorted(params.items())), scalar)(vectors, tuple(a for a, s in zip(arrays, scalar) if s))
    if prim.multiple_results:
        return [np.reshape(o, shape) for o in outs]
    return np.reshape(outs, shape)


compile_costly_binds(_run)
