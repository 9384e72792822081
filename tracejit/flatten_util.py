"""jax.flatten_util: ravel_pytree, a pytree of arrays as one 1-D array, and the function taking such an array back.
Under jit the concatenate of the raveled leaves is one loop of memcpy calls (backend/loops.py, LoopBuilder._copies)."""
import functools

import numpy as np

from . import numpy as tnp
from .tree_util import tree_flatten, tree_unflatten


def ravel_pytree(pytree):
    """(The leaves raveled and concatenated, in their promoted dtype; an empty float32 array for no leaves, the
    function taking an array of that length back to the pytree), as jax.flatten_util.ravel_pytree. With leaves of
    one dtype the function keeps the dtype of the array it gets; with several it takes the promoted dtype only and
    casts each leaf back to its own."""
    leaves, treedef = tree_flatten(pytree)
    if not leaves:
        return tnp.zeros(0, np.float32), functools.partial(_unravel, treedef, (), (), None, 0)
    leaves = [tnp.asarray(x) for x in leaves]
    dtypes = tuple(x.dtype for x in leaves)
    to_dtype = tnp.result_type(*dtypes)
    mixed = any(d != to_dtype for d in dtypes)
    flat = tnp.concatenate([tnp.ravel(x.astype(to_dtype) if mixed else x) for x in leaves])
    shapes = tuple(tnp.shape(x) for x in leaves)
    return flat, functools.partial(_unravel, treedef, shapes, dtypes if mixed else (), to_dtype, flat.shape[0])


def _unravel(treedef, shapes, from_dtypes, to_dtype, size, flat):
    if tnp.shape(flat) != (size,):
        raise ValueError(f"the unravel function of ravel_pytree expected an array of shape {(size,)}, got shape "
                         f"{tnp.shape(flat)}")
    if from_dtypes and tnp.result_type(flat) != to_dtype:
        raise TypeError(f"unravel function given array of dtype {tnp.result_type(flat)}, but expected dtype {to_dtype}")
    ends = np.cumsum([int(np.prod(s)) for s in shapes]).tolist()
    chunks = [flat[start:end].reshape(shape) for start, end, shape in zip([0, *ends], ends, shapes)]
    return tree_unflatten(treedef, [c.astype(d) for c, d in zip(chunks, from_dtypes)] if from_dtypes else chunks)
