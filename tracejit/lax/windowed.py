"""jax.lax.reduce_window on the windowed primitives, and pooling shorthands.

reduce_window with lax.add, lax.max or lax.min and their identity as the initial value binds reduce_window_sum,
_max or _min (whose derivatives pick the first extremum of a window, as JAX's); any other computation (or
several operands) is folded over the window offsets: init, then computation(acc, elements) per offset, on the
operand padded (and dilated) with init, as XLA defines it."""
import numpy as np

from ..core.pytree import tree_flatten, tree_unflatten
from ..core.trace import Tracer, bind
from ..numpy._base import asarray, aval, broadcast_to_shape
from ..primitives import shapes as sh
from ..primitives import windowed as wd
from ..primitives.base import identity
from ..primitives.window_geometry import dilate_dim, window_out_shape
from .convolution import padtype_to_pads


def _window_params(shape, window_dimensions, window_strides, padding, base_dilation, window_dilation):
    n = len(shape)
    window_dimensions = tuple(int(w) for w in window_dimensions)
    window_strides = (1,) * n if window_strides is None else tuple(int(s) for s in window_strides)
    base_dilation = (1,) * n if base_dilation is None else tuple(int(b) for b in base_dilation)
    window_dilation = (1,) * n if window_dilation is None else tuple(int(d) for d in window_dilation)
    if isinstance(padding, str):
        dilated = [dilate_dim(w, d) for w, d in zip(window_dimensions, window_dilation)]
        padding = padtype_to_pads([dilate_dim(d, b) for d, b in zip(shape, base_dilation)], dilated,
                                  window_strides, padding)
    padding = tuple((int(lo), int(hi)) for lo, hi in padding)
    return {"window_dimensions": window_dimensions, "window_strides": window_strides, "padding": padding,
            "base_dilation": base_dilation, "window_dilation": window_dilation}


def reduce_window_shape_tuple(operand_shape, window_dimensions, window_strides, padding, base_dilation=None,
                              window_dilation=None):
    """The shape of reduce_window's result (padding: (low, high) pairs)."""
    p = _window_params(operand_shape, window_dimensions, window_strides, padding, base_dilation, window_dilation)
    return window_out_shape(tuple(operand_shape), *p.values())


def _bind_window(prim, operand, window_dimensions, window_strides, padding, base_dilation, window_dilation):
    operand = asarray(operand)
    return bind(prim, operand, **_window_params(aval(operand).shape, window_dimensions, window_strides, padding,
                                                base_dilation, window_dilation))


def reduce_window_sum(operand, window_dimensions, window_strides=None, padding="VALID", base_dilation=None,
                      window_dilation=None):
    """The sum of every window (sum pooling)."""
    return _bind_window(wd.reduce_window_sum_p, operand, window_dimensions, window_strides, padding, base_dilation,
                        window_dilation)


def reduce_window_max(operand, window_dimensions, window_strides=None, padding="VALID", base_dilation=None,
                      window_dilation=None):
    """The maximum of every window (max pooling); its gradient goes to the first maximum of a window."""
    return _bind_window(wd.reduce_window_max_p, operand, window_dimensions, window_strides, padding, base_dilation,
                        window_dilation)


def reduce_window_min(operand, window_dimensions, window_strides=None, padding="VALID", base_dilation=None,
                      window_dilation=None):
    """The minimum of every window; its gradient goes to the first minimum of a window."""
    return _bind_window(wd.reduce_window_min_p, operand, window_dimensions, window_strides, padding, base_dilation,
                        window_dilation)


def _monoid(computation, inits):
    """The windowed primitive's function when computation is lax.add/max/min with its identity as init."""
    from . import add, max, min  # this package's own functions: it imports this module first
    if len(inits) != 1 or isinstance(inits[0], Tracer) or np.ndim(inits[0]):
        return None
    init = np.asarray(inits[0])
    for op, fn, value in ((add, reduce_window_sum, 0), (max, reduce_window_max, identity(init.dtype, False)),
                          (min, reduce_window_min, identity(init.dtype, True))):
        if computation is op and init == value:
            return fn
    return None


def reduce_window(operand, init_value, computation, window_dimensions, window_strides=None, padding="VALID",
                  base_dilation=None, window_dilation=None):
    """computation folded over every window of operand (a pytree of arrays, init_value a matching pytree of
    scalars), as jax.lax.reduce_window."""
    operands, tree = tree_flatten(operand)
    inits, init_tree = tree_flatten(init_value)
    if tree != init_tree or not operands:
        raise ValueError(f"reduce_window: operand and init_value must be pytrees of the same structure (and not "
                         f"empty), got {tree} and {init_tree}")
    operands = [asarray(x) for x in operands]
    shape = aval(operands[0]).shape
    params = _window_params(shape, window_dimensions, window_strides, padding, base_dilation, window_dilation)
    fn = _monoid(computation, inits)
    if fn is not None:
        return tree_unflatten(tree, [fn(operands[0], **params)])
    out_shape = window_out_shape(shape, *params.values())
    inits = [asarray(np.asarray(i, aval(x).dtype) if not isinstance(i, Tracer) else i) for i, x in zip(inits, operands)]
    grids = [bind(sh.pad_p, x, i, padding_config=tuple((lo, hi, b - 1) for (lo, hi), b in
                                                      zip(params["padding"], params["base_dilation"])))
             for x, i in zip(operands, inits)]
    accs = [broadcast_to_shape(i, out_shape) for i in inits]
    for offset in np.ndindex(*params["window_dimensions"]):
        starts = [o * d for o, d in zip(offset, params["window_dilation"])]
        limits = [s + (q - 1) * st + 1 if q else s for s, q, st in zip(starts, out_shape, params["window_strides"])]
        elements = [bind(sh.slice_p, g, start_indices=tuple(starts), limit_indices=tuple(limits),
                         strides=params["window_strides"]) for g in grids]
        out = computation(tree_unflatten(tree, accs), tree_unflatten(tree, elements))
        accs, out_tree = tree_flatten(out)
        if out_tree != tree:
            raise ValueError(f"reduce_window: computation must return the operand's structure {tree}, got {out_tree}")
    return tree_unflatten(tree, accs)


def _pool_window(x, window_shape, strides):
    """Window dimensions and strides over the axes between a leading batch axis (if any) and the feature axis."""
    ndim, k = aval(x).ndim, len(window_shape)
    if ndim not in (k + 1, k + 2):
        raise ValueError(f"pooling: a window of {k} axes needs inputs of rank {k + 1} or {k + 2}, got {ndim}")
    lead = (1,) * (ndim - k - 1)
    strides = (1,) * k if strides is None else tuple(strides)
    return lead + tuple(window_shape) + (1,), lead + strides + (1,)


def max_pool(inputs, window_shape, strides=None, padding="VALID"):
    """Max pooling over the spatial axes of (batch, spatial..., features) or (spatial..., features), as
    flax.linen.max_pool."""
    window, strides = _pool_window(inputs, window_shape, strides)
    return reduce_window_max(inputs, window, strides, padding)


def avg_pool(inputs, window_shape, strides=None, padding="VALID", count_include_pad=True):
    """Average pooling, as flax.linen.avg_pool: the window's sum over its size, or over the count of the input's
    elements it holds (count_include_pad=False)."""
    window, strides = _pool_window(inputs, window_shape, strides)
    total = reduce_window_sum(inputs, window, strides, padding)
    if count_include_pad:
        return total / np.asarray(np.prod(window_shape), aval(total).dtype)
    ones = np.ones(aval(inputs).shape, aval(total).dtype)
    return total / reduce_window_sum(ones, window, strides, padding)
