"""Reductions over axes (sum, max, min, prod, argmax, argmin) and cumsum, one block each. Results keep the
operand dtype.

The reductions lower to loop accumulators (tracejit.backend.rules.Reduce): the operand is computed inside the
reduction loop; argmax and argmin become a max (min) and a min of positions before lowering (their simplify rule). reassoc lets LLVM vectorize float sums and products (the order differs from NumPy's pairwise
sum). float32 sums accumulate in float64 (`wide`): the loop adds blocks in float32 with `combine` and the block
totals into the wide accumulator with `update` (backend.loops.LoopBuilder._reduce); a float32 accumulator per vector
lane lost 7e-4 relative on the mean of 1e7 values (NumPy's pairwise sum: 1e-8)."""
import math

import numpy as np

from ..backend.rules import Kernel, Reduce
from ..core.ad_util import aval, full, scalar
from ..core.avals import HALF_FLOATS, Dim, ShapedArray, dtype_kind, is_symbolic
from ..core.batching import batched_axis
from ..core.errors import ShapeError
from ..core.ops import ops, primitive
from ..core.trace import Primitive, bind
from .base import LINEAR, ZERO, identity, jvp_rule
from .cumulative import running


def _reduction(name, shape_rule, impl, derivative, lower, **rules_and_flags):
    """A primitive reducing the `axes` param (the same axes of every example when batched: the batch axis moves
    left past the reduced axes before it)."""
    prim = Primitive(name, shape_rule, impl, lower=lower, **rules_and_flags)

    def batch(args, dims, axes, **params):
        (x,), (d,) = args, dims
        return bind(prim, x, axes=tuple(batched_axis(a, d) for a in axes), **params), d - sum(a < d for a in axes)

    return prim.set(jvp=jvp_rule(prim, derivative), batch=batch)


def _reduce_shape(name, kinds):
    def rule(x, axes):
        if any(not 0 <= a < x.ndim for a in axes) or len(set(axes)) != len(axes):
            raise ShapeError(f"{name}: axes {axes} out of range for shape {x.shape}")
        if dtype_kind(x.dtype) not in kinds:
            raise TypeError(f"{name}: does not accept {x.dtype} operands")
        return ShapedArray([d for i, d in enumerate(x.shape) if i not in axes], x.dtype, x.weak_type)
    return rule


def _no_axes_is_a_no_op(eqn, producer):
    return _untransposed(eqn, producer) if eqn.params["axes"] else eqn.inputs[0]


def _untransposed(eqn, producer):
    """A reduction of a transpose as the reduction of its operand over the same axes, where the kept axes stay in
    order (x.T.sum(1) is x.sum(0)): the loop then reads the operand in memory order (over 2048 x 2048 f32, the
    transposed read took 40x the time)."""
    t = producer(eqn.inputs[0])
    if t is None or t.prim is not primitive("transpose"):
        return None
    perm, axes = t.params["permutation"], eqn.params["axes"]
    kept = [perm[a] for a in range(len(perm)) if a not in axes]
    if kept != sorted(kept):
        return None
    return eqn.prim, [t.inputs[0]], {**eqn.params, "axes": tuple(sorted(perm[a] for a in axes))}


def _expand(y, x_aval, axes):
    """Broadcast a reduced value back to the operand's shape."""
    kept = tuple(i for i in range(x_aval.ndim) if i not in axes)
    return ops.broadcast_in_dim(y, shape=x_aval.shape, broadcast_dimensions=kept)


def _sum(x, axes):
    return ops.reduce_sum(x, axes=axes)


def _in_float32(reduce):
    """A NumPy reduction of 16-bit floats accumulated in float32, rounded once (as NumPy's float16 sum, which
    accumulates pairwise in float32, nearly does; ml_dtypes' bfloat16 sum rounds every step)."""
    def impl(x, axes):
        x = np.asarray(x)
        if x.dtype not in HALF_FLOATS:
            return reduce(x, axes)
        return reduce(x.astype(np.float32), axes).astype(x.dtype)
    return impl


# float sums add up blocks in float32 (16-bit floats are float32 in registers) or complex64 into a wide accumulator
_WIDE = {np.dtype(np.float32): np.dtype(np.float64), np.dtype(np.complex64): np.dtype(np.complex128),
         **{half: np.dtype(np.float64) for half in HALF_FLOATS}}


def _lower_reduce(identity, fop, iop=None):
    def wide(b):
        return _WIDE.get(b.dtype(), b.dtype()) if fop == "fadd" else b.dtype()

    def held(b):     # the dtype of the values in registers (float32 for the 16-bit floats: not rounded here)
        return np.dtype(np.float32) if b.dtype() in HALF_FLOATS else b.dtype()

    def op(b, x, y, dtype=None):
        if fop in ("max", "min"):
            return b.maximum(x, y, dtype) if fop == "max" else b.minimum(x, y, dtype)
        return b.binop(f"{fop} reassoc", iop, x, y, dtype)

    return Reduce(lambda b, axes: [(b.const(identity(b.dtype()), wide(b)), wide(b))],
                  lambda b, accs, x, axes: [op(b, accs[0], b.convert(x, held(b), wide(b)), wide(b))],
                  lambda b, accs, axes: b.convert(accs[0], wide(b), b.dtype()),
                  lambda b, accs, others, axes: [op(b, accs[0], others[0])])

# --------------------------------------------------------------------------------- sum, max, min, prod


def _chosen_location_jvp(t, x, out, axes):
    """Tangent of max/min: the mean of the tangents at the positions that attain the extremum."""
    hit = ops.convert_element_type(ops.eq(x, _expand(out, aval(x), axes)), new_dtype=aval(x).dtype, weak_type=False)
    return ops.div(_sum(ops.mul(t, hit), axes), _sum(hit, axes))


reduce_sum_p = _reduction("reduce_sum", _reduce_shape("reduce_sum", "fiuc"),
                          _in_float32(lambda x, axes: np.sum(x, axis=axes, dtype=x.dtype)), LINEAR,
                          _lower_reduce(lambda dtype: 0, "fadd", "add"), simplify=_no_axes_is_a_no_op, linear=True,
                          transpose=lambda ct, x, axes: [_expand(ct, x.aval, axes)])
reduce_max_p = _reduction("reduce_max", _reduce_shape("reduce_max", "fiub"),
                          lambda x, axes: np.max(x, axis=axes, initial=identity(np.asarray(x).dtype, False)),
                          _chosen_location_jvp, _lower_reduce(lambda dtype: identity(dtype, False), "max"),
                          simplify=_no_axes_is_a_no_op)
reduce_min_p = _reduction("reduce_min", _reduce_shape("reduce_min", "fiub"),
                          lambda x, axes: np.min(x, axis=axes, initial=identity(np.asarray(x).dtype, True)),
                          _chosen_location_jvp, _lower_reduce(lambda dtype: identity(dtype, True), "min"),
                          simplify=_no_axes_is_a_no_op)


def _shift_in_ones(v, by):
    """v moved `by` places along its last axis, ones filling in: [1, v0, v1, ...] for by=1."""
    config = ((0, 0, 0),) * (aval(v).ndim - 1) + ((by, -by, 0),)
    return ops.pad(v, scalar(1, v), padding_config=config)


def _exclusive_products(v):
    """Products of the elements before each position along the last axis, by log-depth doubling."""
    v = _shift_in_ones(v, 1)
    step = 1
    while step < aval(v).shape[-1]:
        v = ops.mul(v, _shift_in_ones(v, step))
        step *= 2
    return v


def _prod_partial(x, axes):
    """d prod / dx_i = the product of the other elements: exclusive prefix times exclusive suffix products.
    Only multiplications, so it is exact at zeros and differentiates again."""
    shape = aval(x).shape
    kept = [i for i in range(len(shape)) if i not in axes]
    moved = ops.transpose(x, permutation=tuple(kept + list(axes)))
    flat = ops.reshape(moved, new_sizes=tuple(shape[i] for i in kept) + (math.prod(shape[i] for i in axes),))
    last = (aval(flat).ndim - 1,)
    suffix = ops.rev(_exclusive_products(ops.rev(flat, dimensions=last)), dimensions=last)
    others = ops.reshape(ops.mul(_exclusive_products(flat), suffix), new_sizes=aval(moved).shape)
    return ops.transpose(others, permutation=tuple(np.argsort(kept + list(axes)).tolist()))


reduce_prod_p = _reduction("reduce_prod", _reduce_shape("reduce_prod", "fiuc"),
                           _in_float32(lambda x, axes: np.prod(x, axis=axes, dtype=x.dtype)),
                           lambda t, x, out, axes: _sum(ops.mul(t, _prod_partial(x, axes)), axes),
                           _lower_reduce(lambda dtype: 1, "fmul", "mul"), simplify=_no_axes_is_a_no_op)

# ------------------------------------------------------------------------------------- argmax, argmin


def _arg_shape(name):
    def rule(x, axes, index_dtype):
        if len(axes) != 1 or not 0 <= axes[0] < x.ndim:
            raise ShapeError(f"{name}: needs one axis in range for shape {x.shape}, got {axes}")
        if isinstance(x.shape[axes[0]], Dim):
            x.shape[axes[0]].require_nonempty(f"{name}: zero-size reduction over dimension {{dim}} has no identity")
        elif x.shape[axes[0]] == 0:
            raise ShapeError(f"{name}: axis {axes[0]} of shape {x.shape} is empty")
        if x.dtype.kind == "c":
            raise TypeError(f"{name}: complex numbers are not ordered here, got {x.str_short()}")
        return ShapedArray([d for i, d in enumerate(x.shape) if i != axes[0]], index_dtype)
    return rule


LONG = 4096     # a vector of this many values or more: argmax (argmin) calls the library's search (_write_search)


def _first_hit(x, extreme, axis, dtype, offset=None):
    """The first position along axis (plus offset) where x equals extreme or is NaN, as dtype; dtype's maximum
    where none does."""
    hit = ops.eq(x, _expand(extreme, aval(x), (axis,)))
    if dtype_kind(aval(x).dtype) == "f":
        hit = ops.or_(hit, ops.ne(x, x))
    positions = ops.iota(dtype=dtype, shape=aval(x).shape, dimension=axis)
    if offset is not None:
        positions = ops.add(positions, _expand(offset, aval(positions), tuple(range(aval(x).ndim))))
    nowhere = full(aval(positions), np.iinfo(dtype).max)
    return ops.reduce_min(ops.select_n(hit, nowhere, positions), axes=(axis,))


def _long(x, axes):
    """Whether argmax (argmin) over axes of x (an aval) calls the library's search: a vector of a size known only at
    run time, or long."""
    return x.ndim == 1 and (is_symbolic(x.shape) or x.shape[0] >= LONG) and dtype_kind(x.dtype) in "fiub"


def _first_extremum(extremum):
    """argmax (argmin)'s simplify rule: the first position that holds the maximum (minimum), or a NaN, as
    reductions that vectorize and split over the threads (a loop carrying a value and its position ran scalar:
    2.8 ms for 1e6 float32 against NumPy's 0.1); the extremum is NaN when a NaN is there, and then no number equals
    it. Positions are 32-bit where they fit (twice the lanes of 64-bit ones). A long vector keeps the primitive,
    whose lowering calls the library's search (one pass; the block search it replaced compiled seven loops,
    49 ms of a 53 ms first call). An IR compiled without the passes runs argmax's NumPy impl."""
    def simplify(eqn, producer):
        untransposed = _untransposed(eqn, producer)
        if untransposed is not None:
            return untransposed
        (axis,), index_dtype = eqn.params["axes"], eqn.params["index_dtype"]
        if _long(eqn.inputs[0].aval, (axis,)):
            return None

        def expansion(x):
            shape = aval(x).shape
            if is_symbolic([shape[axis]]) or shape[axis] >= 2 ** 31:
                return _first_hit(x, bind(extremum, x, axes=(axis,)), axis, index_dtype)
            first = _first_hit(x, bind(extremum, x, axes=(axis,)), axis, np.dtype(np.int32))
            if aval(first).dtype == index_dtype:
                return first
            return ops.convert_element_type(first, new_dtype=index_dtype, weak_type=False)
        return expansion
    return simplify


def _search(name):
    """argmax (argmin)'s lowering, for a long vector (_long): a call of the library's search (compiled once per
    process: _write_search), its position stored as index_dtype."""
    def lower(kb, outs, ins, axes, index_dtype):
        from ..backend import kernel_library  # (when code is generated: the backend sits above the primitives)
        (out,), (x,) = outs, ins
        callee = kernel_library.symbol(kb.f.module, f"tj_{name}_{x.aval.dtype.name}", _write_search, light=True)
        at = kb.f.emit(f"call i64 {callee}(ptr {x.ptr}, i64 {kb.f.size(x.aval.shape[0])})")
        index = f"i{8 * index_dtype.itemsize}"
        if index != "i64":
            at = kb.f.emit(f"trunc i64 {at} to {index}")
        kb.line(f"store {index} {at}, ptr {out.ptr}")
    return Kernel(lower, available=lambda eqn: _long(eqn.inputs[0].aval, eqn.params["axes"]))


def _write_search(module, name):
    """Write `i64 name(ptr x, i64 n)` (name: tj_argmax_<dtype> or tj_argmin_<dtype>, n at least 1): the first
    position of the largest (smallest) of x's n values, or of the first NaN. A vector of SPLIT values or more is
    searched in as many chunks as there are threads (thread_pool's tj_parallel_for: 1e6 f32 on two cores in half
    the time of one), and the first of the chunks' answers that no later one beats is the answer."""
    from ..backend import runtime, thread_pool  # (as _search's import)
    from ..backend.llvm_text import Function  # (as _search's import)
    kind, dtype = name.split("_", 2)[1:]
    dtype, largest = np.dtype(dtype), kind == "argmax"
    _write_range(module, name, dtype, largest)
    threads, value_type = runtime.NUM_THREADS, f"i{8 * dtype.itemsize}"

    def element(f, ptr, i, ty="i64"):
        return f.emit(f"getelementptr {ty}, ptr {ptr}, i64 {i}")

    # chunk c of `chunks`: its search, its answer in slot c + 2 of the table (x, n, answers...)
    g = Function(module, f"define internal void @{name}_chunk(ptr %table, i64 %c, i64 %chunks) nounwind", {})
    x, n = g.emit("load ptr, ptr %table"), g.emit(f"load i64, ptr {element(g, '%table', 1)}")
    size = g.emit(f"add i64 {g.emit(f'udiv i64 {n}, %chunks')}, 1")      # the chunks cover n
    start = g.emit(f"mul i64 %c, {size}")
    count = g.emit(f"call i64 @llvm.umin.i64(i64 {size}, i64 {g.emit(f'sub i64 {n}, {start}')})")
    found = g.emit(f"call i64 @{name}_range(ptr {element(g, x, start, value_type)}, i64 {count})")
    g.line(f"store i64 {g.emit(f'add i64 {found}, {start}')}, ptr {element(g, '%table', g.emit('add i64 %c, 2'))}")
    g.line("ret void")
    module.add(g)

    f = Function(module, f"define i64 @{name}(ptr noalias %x, i64 %n) nounwind", {})
    one = _Values(f, dtype, largest, 1)
    chunks = f.emit(f"call i64 @llvm.umin.i64(i64 {threads}, i64 {f.emit(f'udiv i64 %n, {SPLIT}')})")
    alone, split = f.label("alone"), f.label("split")
    f.line(f"br i1 {f.emit(f'icmp ult i64 {chunks}, 2')}, label %{alone}, label %{split}")
    f.block(alone)
    f.line(f"ret i64 {f.emit(f'call i64 @{name}_range(ptr %x, i64 %n)')}")
    f.block(split)
    table, where, value = f.alloca(f"[{threads + 2} x i64]"), f.alloca("i64"), f.alloca(one.ty)
    f.line(f"store ptr %x, ptr {table}")
    f.line(f"store i64 %n, ptr {element(f, table, 1)}")
    thread_pool.emit_call(f, f"@{name}_chunk", table, chunks, True)
    first = f.emit(f"load i64, ptr {element(f, table, 2)}")
    f.line(f"store i64 {first}, ptr {where}")
    f.line(f"store {one.ty} {one.load(element(f, '%x', first, value_type))}, ptr {value}")
    with f.loop(1, chunks) as c:      # the first chunk's answer that no later one beats
        at = f.emit(f"load i64, ptr {element(f, table, f.emit(f'add i64 {c}, 2'))}")
        candidate, best = one.load(element(f, "%x", at, value_type)), f.emit(f"load {one.ty}, ptr {value}")
        better = one.better(candidate, best)
        if one.floats:      # or a NaN where the best is none
            number = f.emit(f"xor i1 {one.nan(best)}, true")
            better = f.emit(f"or i1 {better}, {f.emit(f'and i1 {one.nan(candidate)}, {number}')}")
        with f.when(better):
            f.line(f"store {one.ty} {candidate}, ptr {value}")
            f.line(f"store i64 {at}, ptr {where}")
    f.line(f"ret i64 {f.emit(f'load i64, ptr {where}')}")
    module.add(f)


SPLIT = 1 << 18     # values per chunk at least, where the search runs over the threads (~30 us of f32 each)


def _write_range(module, name, dtype, largest):
    """Write `i64 name_range(ptr x, i64 n)`: the search of `name` on one thread, in one pass. Each lane of a vector
    keeps its best value and the vector it came from (the first: strictly better ones only), then the first
    position among the lanes that hold the best of them, then the values after the last whole vector one at a
    time; a NaN seen on the way (float32 and float64: the 16-bit floats' keys put NaN first) is then searched for
    from the start. 1e6 f32: as fast as NumPy's argmax."""
    from ..backend.llvm_text import Function  # (as _search's import)
    f = Function(module, f"define internal i64 @{name}_range(ptr noalias %x, i64 %n) nounwind", {})
    lanes = 64 // dtype.itemsize
    vector, one, blocks = _Values(f, dtype, largest, lanes), _Values(f, dtype, largest, 1), f"<{lanes} x i32>"

    def at(i):
        return f.emit(f"getelementptr inbounds i{8 * dtype.itemsize}, ptr %x, i64 {i}")

    def spread(value, ty, lane):
        single = f.emit(f"insertelement {ty} poison, {lane} {value}, i64 0")
        return f.emit(f"shufflevector {ty} {single}, {ty} poison, <{lanes} x i32> zeroinitializer")

    def load(ty, slot):
        return f.emit(f"load {ty}, ptr {slot}")

    def store(ty, value, slot):
        f.line(f"store {ty} {value}, ptr {slot}")

    def update(slot, ty, cond, new):
        store(ty, f.emit(f"select {cond}, {ty} {new}, {ty} {load(ty, slot)}"), slot)

    where, value, seen = f.alloca("i64"), f.alloca(one.ty), f.alloca("i1")     # the best so far: x[0] first
    store("i64", 0, where)
    store(one.ty, one.load("%x"), value)
    store("i1", "false", seen)
    best, block, nan = f.alloca(vector.ty), f.alloca(blocks), f.alloca(vector.mask)
    whole = f.emit(f"udiv i64 %n, {lanes}")
    with f.when(f.emit(f"icmp ne i64 {whole}, 0")):
        values = vector.load("%x")
        store(vector.ty, values, best)
        store(blocks, "zeroinitializer", block)
        store(vector.mask, vector.nan(values), nan)
        with f.loop(1, whole) as b:
            values = vector.load(at(f.emit(f"mul i64 {b}, {lanes}")))
            better = f"{vector.mask} {vector.better(values, load(vector.ty, best))}"
            update(best, vector.ty, better, values)
            update(block, blocks, better, spread(f.emit(f"trunc i64 {b} to i32"), blocks, "i32"))
            store(vector.mask, f.emit(f"or {vector.mask} {vector.nan(values)}, {load(vector.mask, nan)}"), nan)
        kept = load(vector.ty, best)
        top = vector.reduce(kept)
        holds = vector.equal(kept, spread(top, vector.ty, one.ty))
        wide = f"<{lanes} x i64>"
        start = f.emit(f"mul {wide} {f.emit(f'zext {blocks} {load(blocks, block)} to {wide}')}, splat (i64 {lanes})")
        position = f.emit(f"add {wide} {start}, <{', '.join(f'i64 {j}' for j in range(lanes))}>")
        first = f.emit(f"select {vector.mask} {holds}, {wide} {position}, {wide} splat (i64 -1)")
        store("i64", f.emit(f"call i64 @llvm.vector.reduce.umin.v{lanes}i64({wide} {first})"), where)
        store(one.ty, top, value)
        store("i1", f.emit(f"call i1 @llvm.vector.reduce.or.v{lanes}i1({vector.mask} {load(vector.mask, nan)})"), seen)
    with f.loop(f.emit(f"mul i64 {whole}, {lanes}"), "%n") as i:
        candidate = one.load(at(i))
        store("i1", f.emit(f"or i1 {one.nan(candidate)}, {load('i1', seen)}"), seen)
        with f.when(one.better(candidate, load(one.ty, value))):
            store(one.ty, candidate, value)
            store("i64", i, where)
    with f.when(load("i1", seen) if vector.floats else False):   # the first NaN, which is there: no bound
        step, head, found = f.alloca("i64"), f.label("nan"), f.label("found")
        store("i64", 0, step)
        f.line(f"br label %{head}")
        f.block(head)
        i = load("i64", step)
        store("i64", f.emit(f"add i64 {i}, 1"), step)
        f.line(f"br i1 {one.nan(one.load(at(i)))}, label %{found}, label %{head}")
        f.block(found)
        store("i64", i, where)
    f.line(f"ret i64 {load('i64', where)}")
    module.add(f)


class _Values:
    """Generated code for `lanes` values of dtype (1: a scalar) as argmax (argmin) compares them: float32 and
    float64 as floats (NaN never better: `nan` finds them), the 16-bit floats as unsigned keys that order as the
    values do, -0.0 and 0.0 alike, NaN above every other (argmax) or below (argmin), integers as themselves."""

    def __init__(self, f, dtype, largest, lanes):
        self.f, self.dtype, self.largest, self.lanes = f, dtype, largest, lanes
        self.floats = dtype in (np.float32, np.float64)
        self.bits = 8 * dtype.itemsize
        scalar = {4: "float", 8: "double"}[dtype.itemsize] if self.floats else f"i{self.bits}"
        self.ty = scalar if lanes == 1 else f"<{lanes} x {scalar}>"
        self.mask = "i1" if lanes == 1 else f"<{lanes} x i1>"
        signed = dtype_kind(dtype) == "i"
        self.compare = (f"fcmp {'ogt' if largest else 'olt'}" if self.floats else
                        f"icmp {('s' if signed else 'u') + ('gt' if largest else 'lt')}")
        name = ("f" if self.floats else "s" if signed else "u") + ("max" if largest else "min")
        self.reduction = f"@llvm.vector.reduce.{name}.v{lanes}{'f' if self.floats else 'i'}{self.bits}"

    def c(self, value):
        return str(value) if self.lanes == 1 else f"splat (i{self.bits} {value})"

    def load(self, ptr):
        v = self.f.emit(f"load {self.ty}, ptr {ptr}, align {self.dtype.itemsize}")
        return self._keys(v) if dtype_kind(self.dtype) == "f" and not self.floats else v

    def better(self, a, b):
        return self.f.emit(f"{self.compare} {self.ty} {a}, {b}")

    def equal(self, a, b):
        return self.f.emit(f"{'fcmp oeq' if self.floats else 'icmp eq'} {self.ty} {a}, {b}")

    def nan(self, v):
        return self.f.emit(f"fcmp uno {self.ty} {v}, {v}") if self.floats else "false" if self.lanes == 1 else (
            "zeroinitializer")

    def reduce(self, v):
        """The best of the lanes of v (which holds no NaN)."""
        return self.f.emit(f"call {self.ty.split(' x ')[1][:-1]} {self.reduction}({self.ty} {v})")

    def _keys(self, v):
        f, ty, c, bits = self.f, self.ty, self.c, self.bits
        sign = c(-(1 << (bits - 1)))
        magnitude = f.emit(f"and {ty} {v}, {c((1 << (bits - 1)) - 1)}")
        negative = f.emit(f"ashr {ty} {v}, {c(bits - 1)}")      # all ones where negative: flip all, else the sign
        flipped = f.emit(f"xor {ty} {f.emit(f'or {ty} {negative}, {sign}')}, {v}")
        zero = f.emit(f"icmp eq {ty} {magnitude}, {c(0)}")
        ordered = f.emit(f"select {self.mask} {zero}, {ty} {sign}, {ty} {flipped}")
        nan = f.emit(f"icmp ugt {ty} {magnitude}, {c(0x7F80 if self.dtype.name == 'bfloat16' else 0x7C00)}")
        return f.emit(f"select {self.mask} {nan}, {ty} {c(-1 if self.largest else 0)}, {ty} {ordered}")


argmax_p = _reduction("argmax", _arg_shape("argmax"),
                      lambda x, axes, index_dtype: np.argmax(x, axis=axes[0]).astype(index_dtype), ZERO,
                      _search("argmax"), simplify=_first_extremum(reduce_max_p))
argmin_p = _reduction("argmin", _arg_shape("argmin"),
                      lambda x, axes, index_dtype: np.argmin(x, axis=axes[0]).astype(index_dtype), ZERO,
                      _search("argmin"), simplify=_first_extremum(reduce_min_p))

# ----------------------------------------------------------------------------------------------- cumsum


def _cumsum_shape(x, axis, reverse=False):
    if not 0 <= axis < x.ndim:
        raise ShapeError(f"cumsum: axis {axis} out of range for shape {x.shape}")
    if dtype_kind(x.dtype) not in "fiuc":
        raise TypeError(f"cumsum: does not accept {x.dtype} operands")
    return x


def _negative_zero(dtype):
    """The sum's start: -0.0 + x is x, -0.0 too."""
    return {"f": -0.0, "c": complex(-0.0, -0.0)}.get(dtype_kind(dtype), 0)


def _cumsum_impl(x, axis, reverse=False):
    """A running sum; of 16-bit floats in float32, each total rounded on its own."""
    x = np.asarray(x)
    acc = np.float32 if x.dtype in HALF_FLOATS else x.dtype
    if reverse:
        return np.flip(np.cumsum(np.flip(x, axis), axis=axis, dtype=acc), axis).astype(x.dtype)
    return np.cumsum(x, axis=axis, dtype=acc).astype(x.dtype)


cumsum_p = Primitive("cumsum", _cumsum_shape, _cumsum_impl, linear=True,
                     lower=running(lambda b, acc, x: b.binop("fadd", "add", acc, x), _negative_zero),
                     transpose=lambda ct, x, axis, reverse=False: [ops.cumsum(ct, axis=axis, reverse=not reverse)],
                     batch=lambda args, dims, axis, reverse=False: (
                         ops.cumsum(args[0], axis=batched_axis(axis, dims[0]), reverse=reverse), dims[0]))
cumsum_p.set(jvp=jvp_rule(cumsum_p, LINEAR))
