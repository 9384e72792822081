"""Cumulative reductions along one axis besides cumsum (in reductions.py): cumprod, cummax, cummin, cumlogsumexp
(from the end with reverse=True), and associative_scan, the parallel prefix scan that defines their derivatives.

As in JAX, the jvp of each is the jvp of associative_scan with its combining function (JAX's tree of combines),
so ties split a tangent as JAX's do (cummax: half to each of two equal maxima at a combine). The values (impl
and lowering) come from a running accumulator, in NumPy's sequential order."""
import numpy as np

from ..backend.rules import Kernel
from ..core.ad_util import Zero, aval, scalar
from ..core.avals import HALF_FLOATS, dtype_kind
from ..core.batching import batched_axis
from ..core.errors import ShapeError
from ..core.ops import ops, primitive
from ..core.trace import Primitive, bind
from .base import identity

# ------------------------------------------------------------------------------------------ associative_scan


def _slice(x, start, stop, stride, axis):
    shape = aval(x).shape
    starts, limits, strides = [0] * len(shape), list(shape), [1] * len(shape)
    starts[axis], limits[axis], strides[axis] = start, max(start, stop), stride
    return ops.slice(x, start_indices=tuple(starts), limit_indices=tuple(limits), strides=tuple(strides))


def _interleave(a, b, axis):
    """a[0], b[0], a[1], b[1], ... along axis (a as long as b or one longer)."""
    same = aval(a).shape[axis] == aval(b).shape[axis]
    pads = [[(0, 0, 0)] * aval(a).ndim for _ in range(2)]
    pads[0][axis], pads[1][axis] = (0, 1 if same else 0, 1), (1, 0 if same else 1, 1)
    a, b = (ops.pad(x, scalar(0, x), padding_config=tuple(p)) for x, p in zip((a, b), pads))
    return ops.or_(a, b) if aval(a).dtype == np.bool_ else ops.add(a, b)


def _scan(fn, elems, axis):
    """Combine neighbours, scan the half as long result, and fill in the other half from it (Blelloch)."""
    n = aval(elems[0]).shape[axis]
    if n < 2:
        return elems
    odd = _scan(fn, fn([_slice(e, 0, n - 1, 2, axis) for e in elems], [_slice(e, 1, n, 2, axis) for e in elems]),
                axis)
    rest = [_slice(e, 2, n, 2, axis) for e in elems]
    even = fn([_slice(e, 0, aval(e).shape[axis] - 1, 1, axis) for e in odd] if n % 2 == 0 else odd, rest)
    even = [ops.concatenate(_slice(e, 0, 1, 1, axis), r, dimension=axis) for e, r in zip(elems, even)]
    return [_interleave(a, b, axis) for a, b in zip(even, odd)]


def associative_scan(fn, elems, axis, reverse=False):
    """The prefix combinations of the arrays `elems` along axis: [a, fn(a, b), fn(fn(a, b), c), ...] (from the
    end with reverse), fn taking and returning lists of arrays like elems; fn must be associative."""
    if reverse:
        elems = [ops.rev(e, dimensions=(axis,)) for e in elems]
    out = _scan(fn, list(elems), axis)
    return [ops.rev(e, dimensions=(axis,)) for e in out] if reverse else out

# ------------------------------------------------------------------------------------ the cumulative primitives


def _shape(name, kinds):
    def rule(x, axis, reverse=False):
        if not 0 <= axis < x.ndim:
            raise ShapeError(f"{name}: axis {axis} out of range for shape {x.shape}")
        if dtype_kind(x.dtype) not in kinds:
            raise TypeError(f"{name}: does not accept {x.dtype} operands")
        return x
    return rule


def _logaddexp(b, x, y):
    """log(exp(x) + exp(y)) in generated code; x + y where their difference is NaN (NaNs, or infinities of one
    sign), as JAX's logaddexp."""
    ty = b.ty()
    delta = b.binop("fsub", "sub", x, y)
    tail = b.math("log1p", b.math("exp", b(f"fneg {ty} {b.intrinsic('fabs', delta)}")))
    finite = b.binop("fadd", "add", b.maximum(x, y), tail)
    return b.select(b(f"fcmp uno {ty} {delta}, {delta}"), b.binop("fadd", "add", x, y), finite)


def running(combine, start):
    """The Kernel computing a running combination along `axis`, in NumPy's sequential order: combine(b, acc, x)
    from start(dtype), so that the first total is x[0] itself (cumsum starts from -0.0: -0.0 stays -0.0). Along an
    axis that is not the last, the loop runs over the rows in memory order, each row combining the previous row's
    totals with its own elements (a vector loop): along the running index, cumsum over 2048 x 2048 f32 along
    axis 0 took 57 ms (NumPy's time; JAX's 27), by rows 1.2. 16-bit floats keep the running index inner: their
    totals stay float32 between elements."""
    def lower(k, outs, ins, axis, reverse=False):
        (out,), (x,) = outs, ins
        b, shape = k.b, x.aval.shape
        n, ty = shape[axis], b.ty()

        def at(outer, i, inner):
            return [*outer, b.iop("sub", n - 1, i) if reverse else i, *inner]

        if any(d != 1 for d in shape[axis + 1:]) and x.aval.dtype not in HALF_FLOATS:
            with k.loop_nest(shape[:axis]) as outer, k.loop(0, n) as i, k.loop_nest(shape[axis + 1:]) as inner:
                first, own = b(f"icmp eq i64 {i}, 0"), k.load(x, at(outer, i, inner))
                before = k.load(out, at(outer, b.select(first, 0, b.iop("sub", i, 1), np.int64), inner))
                k.store(out, at(outer, i, inner), b.select(first, own, combine(b, before, own)))
            return
        acc = k.variable(x.aval.dtype)
        with k.loop_nest([d for a, d in enumerate(shape) if a != axis]) as others:
            k.store_var(acc, ty, b.const(start(x.aval.dtype)))
            with k.loop(0, n) as i:
                idx = at(others[:axis], i, others[axis:])
                total = combine(b, k.load_var(acc, ty), k.load(x, idx))
                k.store_var(acc, ty, total)
                k.store(out, idx, total)
    return Kernel(lower)


def _logaddexp_jvp(primals, tangents):
    """JAX's: each tangent times exp(operand - result), +inf read as 0 on both sides."""
    (x, y), (tx, ty) = primals, tangents
    out = _logaddexp_ops(x, y)

    def weight(v):
        def finite(z):
            return ops.select_n(ops.eq(z, scalar(np.inf, z)), z, ops.broadcast_in_dim(
                scalar(0, z), shape=aval(z).shape, broadcast_dimensions=()))
        return ops.exp(ops.sub(finite(v), finite(out)))

    return out, ops.add(ops.mul(tx, weight(x)), ops.mul(ty, weight(y)))


def _logaddexp_ops(x, y):
    """The larger operand plus log1p(exp(-|x - y|)), the larger and -|x - y| by selects (as tnp.logaddexp):
    through max and abs the second derivative of the jvp's result vanished at ties."""
    delta = ops.sub(x, y)
    x_larger = ops.ge(delta, scalar(0, delta))
    gap = ops.log1p(ops.exp(ops.select_n(x_larger, delta, ops.neg(delta))))
    finite = ops.add(ops.select_n(x_larger, y, x), gap)
    return ops.select_n(ops.ne(delta, delta), finite, ops.add(x, y))


def _cumulative(name, kinds, accumulate, pair_jvp, combine, start):
    """A cumulative primitive: impl by NumPy's `accumulate`, lowering by `combine`(b, acc, x) from `start`(dtype),
    jvp through associative_scan of `pair_jvp`((a, b), (ta, tb)) -> (combined, its tangent)."""
    def impl(x, axis, reverse=False):
        x = np.asarray(x)
        if reverse:
            return np.flip(accumulate(np.flip(x, axis), axis=axis), axis).astype(x.dtype, copy=False)
        return accumulate(x, axis=axis).astype(x.dtype, copy=False)

    prim = Primitive(name, _shape(name, kinds), impl, lower=running(combine, start))

    def jvp(primals, tangents, axis, reverse=False):
        (x,), (t,) = primals, tangents
        out = bind(prim, x, axis=axis, reverse=reverse)
        if isinstance(t, Zero):
            return out, t

        def fn(a, b):
            return list(pair_jvp((a[0], b[0]), (a[1], b[1])))

        return out, associative_scan(fn, [x, t], axis, reverse)[1]

    def batch(args, dims, axis, reverse=False):
        return bind(prim, args[0], axis=batched_axis(axis, dims[0]), reverse=reverse), dims[0]

    return prim.set(jvp=jvp, batch=batch)


def _primitive_jvp(name):
    return lambda primals, tangents: primitive(name).jvp(list(primals), list(tangents))


cumprod_p = _cumulative("cumprod", "fiu", np.cumprod, _primitive_jvp("mul"),
                        lambda b, acc, x: b.binop("fmul", "mul", acc, x), lambda dtype: 1)
cummax_p = _cumulative("cummax", "fiu", np.maximum.accumulate, _primitive_jvp("max"),
                       lambda b, acc, x: b.maximum(acc, x), lambda dtype: identity(dtype, False))
cummin_p = _cumulative("cummin", "fiu", np.minimum.accumulate, _primitive_jvp("min"),
                       lambda b, acc, x: b.minimum(acc, x), lambda dtype: identity(dtype, True))
cumlogsumexp_p = _cumulative("cumlogsumexp", "f", np.logaddexp.accumulate, _logaddexp_jvp, _logaddexp,
                             lambda dtype: -np.inf)
