"""Windowed reductions and max pooling's derivatives, one block each: reduce_window_sum, reduce_window_max,
reduce_window_min, select_and_gather_add (the jvp of max/min: per window, the tangent at the selected element)
and select_and_scatter_add (its transpose: per window, the cotangent added at that element).

Every window operation takes the same params: window_dimensions, window_strides, padding ((low, high) per axis),
base_dilation (holes between the operand's elements) and window_dilation (holes between the window's). Padding
and holes hold the reduction's identity. The selected element of a window is XLA's: the first one in row-major
order of the window offsets, replaced by each later one that `select_prim` does not prefer it to (ge: the first
maximum; le: the first minimum), so ties give the gradient to the first extremum, as JAX does; a selected
padding element or hole takes no gradient.

The reductions and select_and_gather_add lower to index maps that unroll the window, so that pooling fuses with
the activation before it; select_and_scatter_add to a kernel."""
import numpy as np

from ..backend.rules import IndexMap, Kernel, memory_type
from ..core.ad_util import aval
from ..core.avals import ShapedArray, dtype_kind
from ..core.batching import move_batch_axis
from ..core.errors import ShapeError
from ..core.ops import ops
from ..core.trace import Primitive, bind
from .base import identity, linear_primitive
from .window_geometry import dilate_dim, dilated_and_padded, kept_range, transpose_padding, window_out_shape

_PARAMS = ("window_dimensions", "window_strides", "padding", "base_dilation", "window_dilation")


def _check(name, x, window_dimensions, window_strides, padding, base_dilation, window_dilation):
    """The window's result shape, after checking the params against operand x."""
    params = dict(zip(_PARAMS, (window_dimensions, window_strides, padding, base_dilation, window_dilation)))
    for key, value in params.items():
        if len(value) != x.ndim:
            raise ShapeError(f"{name}: {key} needs {x.ndim} entries for operand {x.str_short()}, got {value}")
    if any(v < 1 for v in window_dimensions + window_strides + base_dilation + window_dilation):
        raise ValueError(f"{name}: window dimensions, strides and dilations must be positive, got {params}")
    if any(dilate_dim(d, b) + lo + hi < 0 for d, b, (lo, hi) in zip(x.shape, base_dilation, padding)):
        raise ValueError(f"{name}: padding {padding} removes more than operand {x.shape} has")
    return window_out_shape(x.shape, window_dimensions, window_strides, padding, base_dilation, window_dilation)


def _grid(x, fill, params):
    """The operand dilated and padded with fill, as the windows see it."""
    return dilated_and_padded(x, fill, params["base_dilation"], params["padding"])


def _views(grid, out_shape, window_dimensions, window_strides, window_dilation, **_):
    """Per window offset (row-major), the grid's elements it contributes to each window."""
    if 0 in out_shape:
        return
    for offset in np.ndindex(*window_dimensions):
        yield grid[tuple(slice(o * d, o * d + (q - 1) * s + 1, s)
                         for o, d, q, s in zip(offset, window_dilation, out_shape, window_strides))]


def _out_shape(x, params):
    return window_out_shape(np.shape(x), *(params[k] for k in _PARAMS))


def _window_indices(b, idx, shape, window_dimensions, window_strides, padding, base_dilation, window_dilation,
                    **_):
    """Per window offset (row-major) at output index idx: the operand index (clamped) and whether the element is
    the operand's (not padding or a hole), an i1 or a Python bool. An axis whose windows never reach past the
    operand there (at no output index) needs no check."""
    out_shape = window_out_shape(shape, window_dimensions, window_strides, padding, base_dilation, window_dilation)
    for offset in np.ndindex(*window_dimensions):
        src, conds = [], []
        for i, o, n, s, d, (lo, _), bd, q in zip(idx, offset, shape, window_strides, window_dilation, padding,
                                                 base_dilation, out_shape):
            p = b.iop("sub", b.iop("add", b.iop("mul", i, s), o * d), lo)
            if bd == 1 and 0 <= o * d - lo and (q - 1) * s + o * d - lo < n:
                src.append(p)            # inside the operand for every output index
                continue
            conds.append(b.in_range(p, 0, dilate_dim(n, bd)))
            if bd > 1:
                on_grid = p % bd == 0 if isinstance(p, int) else b(f"icmp eq i64 {b.iop('srem', p, bd)}, 0")
                conds.append(on_grid)
                p = b.iop("sdiv", p, bd)
            src.append(b.clamp_index(p, 0, max(n - 1, 0)))
        yield src, b.all_of(conds)


def _windowed(name, kinds, np_op, largest, lower_op):
    """A reduce_window primitive: its shape rule, impl and lowering (sum: largest None, identity 0)."""
    def shape_rule(x, **params):
        if dtype_kind(x.dtype) not in kinds:
            raise TypeError(f"{name}: does not accept {x.dtype} operands")
        return ShapedArray(_check(name, x, **params), x.dtype, x.weak_type)

    def start(dtype):
        return 0 if largest is None else identity(dtype, largest)

    def impl(x, **params):
        x = np.asarray(x)
        out = np.full(_out_shape(x, params), start(x.dtype), x.dtype)
        for view in _views(_grid(x, start(x.dtype), params), out.shape, **params):
            out = np_op(out, view).astype(x.dtype, copy=False)
        return out

    def lower(b, idx, read, **params):
        dtype = b.dtype()
        acc = b.const(start(dtype), dtype)
        for src, inside in _window_indices(b, idx, b.in_avals[0].shape, **params):
            if inside is not False:
                v = read(0, src)
                acc = lower_op(b, acc, v if inside is True else b.select(inside, v, b.const(start(dtype))))
        return acc

    return shape_rule, impl, IndexMap(lower)


def _add(b, x, y):
    return b.binop("fadd", "add", x, y)


def _reduce_window_sum_transpose(ct, x, **params):
    """The cotangent, dilated by the strides and padded, summed over windows of the same size (JAX's rule)."""
    pads = transpose_padding(x.aval.shape, params["window_dimensions"], params["window_strides"], aval(ct).shape,
                             params["padding"], params["base_dilation"], params["window_dilation"])
    padded = ops.pad(ct, np.zeros((), aval(ct).dtype),
                     padding_config=tuple((lo, hi, s - 1) for (lo, hi), s in zip(pads, params["window_strides"])))
    ones = (1,) * len(pads)
    return [ops.reduce_window_sum(padded, window_dimensions=params["window_dimensions"],
                                  window_strides=params["base_dilation"], padding=((0, 0),) * len(pads),
                                  base_dilation=ones, window_dilation=params["window_dilation"])]


def _trivial_axis_at(params, axis):
    """The params with a window of one element inserted at `axis` (a batch axis)."""
    extra = {"window_dimensions": 1, "window_strides": 1, "padding": (0, 0), "base_dilation": 1, "window_dilation": 1}
    return {k: tuple(v[:axis]) + (extra[k],) + tuple(v[axis:]) for k, v in params.items()}


def _reduce_window_batch(prim):
    def batch(args, dims, **params):
        return bind(prim, args[0], **_trivial_axis_at(params, dims[0])), dims[0]
    return batch


_sum_shape, _sum_impl, _sum_lower = _windowed("reduce_window_sum", "fiu", np.add, None, _add)
reduce_window_sum_p = linear_primitive("reduce_window_sum", _sum_shape, _sum_impl, _reduce_window_sum_transpose,
                                       lower=_sum_lower)
reduce_window_sum_p.set(batch=_reduce_window_batch(reduce_window_sum_p))


def _chooser(name, np_op, largest, lower_op, select_prim):
    shape_rule, impl, lower = _windowed(name, "fiub", np_op, largest, lower_op)
    prim = Primitive(name, shape_rule, impl, lower=lower)

    def jvp(primals, tangents, **params):
        (x,), (t,) = primals, tangents
        return bind(prim, x, **params), ops.select_and_gather_add(t, x, select_prim=select_prim, **params)

    return prim.set(jvp=jvp, batch=_reduce_window_batch(prim))


reduce_window_max_p = _chooser("reduce_window_max", np.maximum, False, lambda b, x, y: b.maximum(x, y), "ge")
reduce_window_min_p = _chooser("reduce_window_min", np.minimum, True, lambda b, x, y: b.minimum(x, y), "le")

# ------------------------------------------------------------------------- select_and_gather/scatter_add


def _selected(operand, select_prim, out_shape, params):
    """Per window, the row-major offset of its selected element (over the padded, dilated operand)."""
    grid = _grid(operand, identity(np.asarray(operand).dtype, select_prim == "le"), params)
    prefer = np.greater_equal if select_prim == "ge" else np.less_equal
    best, choice = None, np.zeros(out_shape, np.int64)
    for k, view in enumerate(_views(grid, out_shape, **params)):
        if best is None:
            best = view
            continue
        replace = ~prefer(best, view)
        best, choice = np.where(replace, view, best), np.where(replace, k, choice)
    return choice


def _select_shape(name, out_of):
    def rule(x, operand, *, select_prim, **params):
        if (select_prim not in ("ge", "le") or dtype_kind(x.dtype) not in "fiu"
                or dtype_kind(operand.dtype) not in "fiub"):
            raise TypeError(f"{name}: needs select_prim 'ge' or 'le' and numeric operands, got {select_prim!r}, "
                            f"{x.str_short()} and {operand.str_short()}")
        shape = _check(name, operand, **params)
        if out_of == "windows" and x.shape != operand.shape or out_of == "operand" and x.shape != shape:
            raise ShapeError(f"{name}: {x.str_short()} does not fit operand {operand.str_short()} and its windows "
                             f"{shape}")
        return ShapedArray(shape if out_of == "windows" else operand.shape, x.dtype)
    return rule


def _select_and_gather_add_impl(tangents, operand, *, select_prim, **params):
    out_shape = _out_shape(operand, params)
    choice = _selected(operand, select_prim, out_shape, params)
    grid = _grid(tangents, 0, params)
    out = np.zeros(out_shape, np.asarray(tangents).dtype)
    for k, view in enumerate(_views(grid, out_shape, **params)):
        out = np.where(choice == k, view, out)
    return out


def _select_and_scatter_add_impl(source, operand, *, select_prim, **params):
    operand, source = np.asarray(operand), np.asarray(source)
    choice = _selected(operand, select_prim, source.shape, params)
    pads, base = params["padding"], params["base_dilation"]
    grid = np.zeros(_grid(operand, 0, params).shape, source.dtype)
    windows = np.indices(source.shape)
    offsets = np.unravel_index(choice, params["window_dimensions"])
    at = tuple(w * s + o * d for w, o, s, d in zip(windows, offsets, params["window_strides"],
                                                    params["window_dilation"]))
    np.add.at(grid, at, source)
    out = np.zeros(operand.shape, source.dtype)   # the operand's elements of the grid (cropped ones get none)
    src, dst = [], []
    for n, g, b, (lo, _) in zip(operand.shape, grid.shape, base, pads):
        first, last = kept_range(n, b, lo, g)
        dst.append(slice(first, max(first, last)))
        src.append(slice(first * b + lo, first * b + lo + max(0, last - first - 1) * b + 1, b))
    if all(s.stop > s.start for s in dst):
        out[tuple(dst)] = grid[tuple(src)]
    return out


def _prefer_not(b, select_prim, best, v, dtype):
    """Whether v replaces best: `select_prim` does not prefer best to v (NaN-aware, as XLA's select)."""
    if b.kind(dtype) == "f":
        return b(f"fcmp {'ult' if select_prim == 'ge' else 'ugt'} {b.ty(dtype)} {best}, {v}")
    return b.cmp("lt" if select_prim == "ge" else "gt", best, v, dtype)


def _choose(b, select_prim, windows, value, dtype, carried):
    """Fold the window: (value, carried...) of the selected element; carried(src, inside) -> values to keep."""
    best = keep = None
    for src, inside in windows:
        v, kept = value(src, inside), carried(src, inside)
        if best is None:
            best, keep = v, [x for x, _ in kept]
            continue
        replace = _prefer_not(b, select_prim, best, v, dtype)
        best = b.select(replace, v, best, dtype)
        keep = [b.select(replace, x, y, t) for (x, t), y in zip(kept, keep)]
    return keep


def _lower_select_and_gather_add(b, idx, read, select_prim, **params):
    t_dtype, x_aval = b.in_avals[0].dtype, b.in_avals[1]
    fill = b.const(identity(x_aval.dtype, select_prim == "le"), x_aval.dtype)
    zero = b.const(0, t_dtype)

    def guarded(i, fallback, dtype):
        return lambda src, inside: (fallback if inside is False else read(i, src) if inside is True else
                                    b.select(inside, read(i, src), fallback, dtype))

    value = guarded(1, fill, x_aval.dtype)
    tangent = guarded(0, zero, t_dtype)
    out, = _choose(b, select_prim, _window_indices(b, idx, x_aval.shape, **params), value, x_aval.dtype,
                        lambda src, inside: [(tangent(src, inside), t_dtype)])
    return out


def _tiling(operand_shape, source_shape, window_dimensions, window_strides, padding, base_dilation, window_dilation):
    """Whether the windows cover the operand exactly once each (pooling with stride = window, no padding)."""
    return (window_strides == window_dimensions and all(p == (0, 0) for p in padding)
            and all(d == 1 for d in base_dilation + window_dilation)
            and all(q * s == n for q, s, n in zip(source_shape, window_strides, operand_shape)))


def _lower_select_and_scatter_add(k, outs, ins, select_prim, **params):
    """Per window, out[selected element] += source (nothing when a padding element or hole is), out zeroed first;
    where the windows tile the operand, each window writes its elements directly (the source or 0)."""
    (out,), (source, operand) = outs, ins
    b, shape, dtype, o_dtype = k.b, operand.aval.shape, operand.aval.dtype, out.aval.dtype
    tiles = _tiling(shape, source.aval.shape, **params)
    if not tiles:
        with k.loop_nest(shape) as i:
            k.store(out, i, b.const(0, o_dtype))
    if source.aval.size == 0 or out.aval.size == 0:
        return
    fill = b.const(identity(dtype, select_prim == "le"), dtype)
    strides = [int(np.prod(shape[d + 1:])) for d in range(len(shape))]
    with k.loop_nest(source.aval.shape) as w:
        elements = list(_window_indices(b, w, shape, **params))

        def value(src, inside):
            return fill if inside is False else k.load(operand, src) if inside is True else \
                b.select(inside, k.load(operand, src), fill, dtype)

        def flat(src, inside):
            at = 0
            for s, st in zip(src, strides):
                at = b.iop("add", at, b.iop("mul", s, st))
            return [(at, np.int64), (b.const(bool(inside), np.bool_) if isinstance(inside, bool) else inside,
                                     np.bool_)]

        at, inside = _choose(b, select_prim, elements, value, dtype, flat)
        contribution = k.load(source, w)
        if tiles:
            zero = b.const(0, o_dtype)
            for src, _ in elements:
                hit = b.cmp("eq", at, flat(src, True)[0][0], np.int64)
                k.store(out, src, b.select(hit, contribution, zero, o_dtype))
            return
        ty = memory_type(o_dtype)
        ptr = k.f.emit(f"getelementptr inbounds {ty}, ptr {out.ptr}, i64 {at}")
        old = b.from_memory(k.f.emit(f"load {ty}, ptr {ptr}, align {o_dtype.itemsize}"), o_dtype)
        new = b.to_memory(b.select(inside, b.binop("fadd", "add", old, contribution, o_dtype), old, o_dtype), o_dtype)
        k.line(f"store {ty} {new}, ptr {ptr}, align {o_dtype.itemsize}")


def _front(args, dims, params):
    """Both operands with the batch axis first (broadcast where unbatched), and params with a trivial window
    there."""
    size = next(aval(a).shape[d] for a, d in zip(args, dims) if d is not None)
    return [move_batch_axis(a, d, 0, size) for a, d in zip(args, dims)], _trivial_axis_at(params, 0)


def _select_batch(prim):
    def batch(args, dims, select_prim, **params):
        args, params = _front(args, dims, params)
        return bind(prim, *args, select_prim=select_prim, **params), 0
    return batch


select_and_gather_add_p = linear_primitive(
    "select_and_gather_add", _select_shape("select_and_gather_add", "windows"), _select_and_gather_add_impl,
    lambda ct, t, x, **params: [ops.select_and_scatter_add(ct, x, **params), None], (0,),
    lower=IndexMap(_lower_select_and_gather_add))
select_and_scatter_add_p = linear_primitive(
    "select_and_scatter_add", _select_shape("select_and_scatter_add", "operand"), _select_and_scatter_add_impl,
    lambda ct, s, x, **params: [ops.select_and_gather_add(ct, x, **params), None], (0,),
    lower=Kernel(_lower_select_and_scatter_add))
select_and_gather_add_p.set(batch=_select_batch(select_and_gather_add_p))
select_and_scatter_add_p.set(batch=_select_batch(select_and_scatter_add_p))
