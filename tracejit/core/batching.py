"""Where a batch axis lies, for batching rules and vmap. A batch dim is an int, or None for a value that is the
same for every example."""
from .ad_util import aval
from .ops import ops


def batched_axis(axis, bdim):
    """Where axis `axis` of one example lies in a value whose batch axis is `bdim`."""
    return axis + (axis >= bdim)


def move_batch_axis(x, bdim, dst, size):
    """x with its batch axis at `dst`: transposed there, or broadcast along it when x is unbatched."""
    shape = aval(x).shape
    if bdim is None:
        out_shape = shape[:dst] + (size,) + shape[dst:]
        return ops.broadcast_in_dim(x, shape=out_shape,
                                    broadcast_dimensions=tuple(i for i in range(len(out_shape)) if i != dst))
    if bdim == dst:
        return x
    permutation = [i for i in range(len(shape)) if i != bdim]
    permutation.insert(dst, bdim)
    return ops.transpose(x, permutation=tuple(permutation))
