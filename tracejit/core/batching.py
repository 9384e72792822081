"""Where a batch axis lies, for batching rules and vmap. A batch dim is an int, or None for a value that is the
same for every example."""
import contextlib

from .ad_util import aval
from .ops import ops
from .trace import _stack


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


@contextlib.contextmanager
def named_axis(name, size):
    """While vmap(axis_name=name) traces its function: the axis `name` has `size` examples (the collectives ask)."""
    saved = _stack.axis_sizes
    _stack.axis_sizes = {**saved, name: size}
    try:
        yield
    finally:
        _stack.axis_sizes = saved


def axis_size(name):
    """The size of the named axis of an enclosing vmap; JAX's NameError where there is none."""
    try:
        return _stack.axis_sizes[name]
    except KeyError:
        raise NameError(f"unbound axis name: {name}. The axis name of a collective must be that of an enclosing "
                        f"vmap (vmap(f, axis_name=...))") from None
