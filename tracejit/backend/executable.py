"""A compiled IR ready to run. In: the Frame, the linked steps and the fast entries' names (compile_ir).
Out: `run(leaves)`, the general path (the Python driver: fills the table, runs the steps, copies the
outputs the frame leaves to the caller), and the dispatch fast path: `native_call`, the builtin function
of the native entry (fast_entry.emit_py_entry), or where there is none `fast_call`, Python around the
ctypes fast entry.
"""
import collections
import ctypes
import functools

import numpy as np

from ..core.avals import Dim, check_nonempty, shape_size, substitute_dims
from ..core.errors import ShapeError
from ..core.ir import Literal
from ..core.trace import eager
from . import generic_entry, llvm, native_call, runtime
from .frame import ALIGN, STACK_ARENA
from .fusion import domain_size
from .steps import PythonStep, SplitStep

MISS = object()   # the fast path declined: take the general path
NO_ARENA = np.empty(0, np.uint8)   # for symbolic code whose arena fits on the stack

# The plan of a call of symbolic code, per sizes: output (shape, dtype)s, arena bytes, the int64 table
# slots (the sizes, then the intermediates' arena offsets), {Dim: size}, {Buffer: offset}, the steps, and
# for the fast entry: the ctypes function (holding the GIL or not, by the sizes) and the arena argument
# (none, NO_ARENA when the arena fits on the stack, None when the caller must pass one of its own).
Plan = collections.namedtuple("Plan", "outs arena_bytes extra env offsets steps cfunc arena_arg")


@functools.cache
def _fast_prototypes(n_objects):
    """(ctypes prototype keeping the GIL, one releasing it) of a fast entry taking n_objects arrays (made
    once: each PYFUNCTYPE call makes a new class, about 3 KiB)."""
    signature = [ctypes.c_int, *[ctypes.py_object] * n_objects]
    return ctypes.PYFUNCTYPE(*signature), ctypes.CFUNCTYPE(*signature)


COPY_TILE = 128        # the side of the tiles in which a transposed input is copied (`_c_copy`)


def _c_copy(a):
    """A C-contiguous copy of a. An array whose last axis is not its fastest in memory (a transposed one) is
    copied in tiles of COPY_TILE x COPY_TILE over its last two axes, whose rows stay in the cache: NumPy's own copy
    of a 2048 x 2048 f32 transpose took 27 ms, in tiles 5."""
    if a.ndim < 2 or a.nbytes < 1 << 20 or abs(a.strides[-1]) <= abs(a.strides[-2]):
        return np.array(a, order="C")
    out = np.empty(a.shape, a.dtype)
    rows, cols = a.shape[-2:]
    for i in range(0, rows, COPY_TILE):
        for j in range(0, cols, COPY_TILE):
            out[..., i:i + COPY_TILE, j:j + COPY_TILE] = a[..., i:i + COPY_TILE, j:j + COPY_TILE]
    return out


class Executable:
    """run(leaves) -> list of fresh output arrays. `native_call` or `fast_call(n)` gives the dispatch fast
    path. frame: the Frame; steps: linked steps; code: the llvm.Code they run; fast, py_fast: the names of
    the ctypes and native fast entries or None; arrays: what the code names by address (kept alive);
    llvm_text, object_code (a disk_cache.ObjectCode: what a pickle ships, with the vector math library's
    functions the code calls), times: what compiling it took; kernel_functions: the KernelFunctions written
    (kernels.py), for `kernels()`."""

    def __init__(self, frame, steps, code, fast, arrays, llvm_text, object_code, times, kernel_functions=(),
                 py_fast=None, generic=None):
        self.frame, self.steps, self.code, self._keep = frame, steps, code, arrays
        self._kernel_info = [k.describe() for k in kernel_functions]
        self.llvm_text, self.object_code, self.times = llvm_text, object_code, times
        self.source = object_code.source                 # "compiled", "disk" or "shipped"
        self.code_size = sum(map(len, object_code.objects))
        self.in_avals = [b.aval for b in frame.inputs]
        self.in_dtypes = [a.dtype for a in self.in_avals]
        self.out_avals = [b.aval for b in frame.outputs]
        self.arena_bytes = frame.arena_bytes
        self._arenas = []           # a pool, so that threads calling at once each get their own
        # Symbolic dimensions: where each is read (its first input axis), and per sizes the plan of a call.
        first = {}
        for i, b in enumerate(frame.inputs):
            for a, d in enumerate(b.aval.shape):
                if isinstance(d, Dim):
                    first.setdefault(d, (i, a))
        self.dim_sources = [first[d] for d in frame.dims]
        self._plans = {}
        self._blocks = frame.block_plan() if frame.symbolic else None
        self._fast_gil = self._fast = None
        self._py_fast = py_fast and code.addresses[py_fast]
        self._descriptor = None
        if generic is not None:        # generic_entry.py's entry, the steps' addresses filled in
            self._descriptor, names, first = generic
            self._descriptor[first:first + 3 * len(names):3] = [code.addresses[n] for n in names]
        if fast is not None:
            prototypes = _fast_prototypes(len(frame.inputs) + len(frame.outputs) + frame.fast_takes_arena)
            self._fast_gil, self._fast = (code.function(p, fast) for p in prototypes)
            if self._small([a.shape for a in self.out_avals] + [b.aval.shape for b in frame.inputs]):
                self._fast = self._fast_gil

    @staticmethod
    def _small(shapes):
        """Whether a call is small enough to keep the GIL (a cheaper call); others release it so that
        threads run at once."""
        return sum(domain_size(s) for s in shapes) < 4096

    def kernels(self):
        """One dict per kernel, sub-IRs' included: its name, kind ('loop': a fused loop nest, 'kernel',
        'control', or 'python': an equation the Python driver runs with NumPy), its ops, its loop domain's
        elements and whether its loops may vectorize (loops only): what a benchmark names when it loses."""
        python = [{"kernel": None, "kind": "python", "ops": [s.eqn.prim.name], "elements": None, "vectorized": None}
                  for s in self.steps if isinstance(s, PythonStep)]
        return [dict(k) for k in self._kernel_info] + python

    def optimized_llvm(self):
        return str(llvm.optimize(self.llvm_text)[0])

    # ------------------------------------------------------------------------------- general path
    def _arena(self, nbytes):
        try:
            arena = self._arenas.pop()
        except IndexError:
            arena = None
        return arena if arena is not None and arena.nbytes >= nbytes + ALIGN else np.empty(nbytes + ALIGN, np.uint8)

    def plan(self, sizes):
        """The Plan of a call of symbolic code for these sizes of its dimensions (cached): the arena plan
        is the one the fast entry evaluates (Frame.block_plan), the split steps resolved. Sizes the program
        has no result for (a max over no elements) raise here, so every path checks them once per new size."""
        plan = self._plans.get(sizes)
        if plan is None:
            check_nonempty(self.frame.dims, sizes)
            frame, env = self.frame, dict(zip(self.frame.dims, sizes))
            offsets, nbytes = frame.arena_layout(self._blocks, env)
            extra = frame.size_slots(sizes, offsets)
            outs = [(substitute_dims(a.shape, env), a.dtype) for a in self.out_avals]
            steps = [t for s in self.steps for t in (s.choose(env) if isinstance(s, SplitStep) else [s])]
            small = self._small([s for s, _ in outs] + [substitute_dims(b.aval.shape, env) for b in frame.inputs])
            arena_arg = (() if not frame.fast_takes_arena else (NO_ARENA,) if nbytes <= STACK_ARENA else None)
            if len(self._plans) > 256:
                self._plans.clear()
            plan = self._plans[sizes] = Plan(outs, nbytes, extra, env, offsets, steps,
                                             self._fast_gil if small else self._fast, arena_arg)
        return plan

    def _sizes(self, ins):
        """The sizes of the symbolic dimensions, checked against every axis that has one."""
        sizes = tuple(ins[i].shape[a] for i, a in self.dim_sources)
        env = dict(zip(self.frame.dims, sizes))
        for x, b in zip(ins, self.frame.inputs):
            if np.ndim(x) != b.aval.ndim or any(n != env.get(d, d) for n, d in zip(np.shape(x), b.aval.shape)):
                raise ShapeError(f"argument of shape {np.shape(x)} does not fit the compiled {b.aval.str_short()}")
        return sizes

    def _view(self, b, ins, outs, arena, plan=None):
        if b.kind == "in":
            return ins[b.slot]
        if b.kind == "out":
            return outs[b.slot - len(ins)]
        if b.kind == "const":
            return b.value
        offset, shape = (b.offset, b.aval.shape) if plan is None else (plan.offsets[b],
                                                                       substitute_dims(b.aval.shape, plan.env))
        start = (-runtime.data_pointer(arena)) % ALIGN + offset
        return arena[start:start + shape_size(shape) * b.aval.dtype.itemsize].view(b.aval.dtype).reshape(shape)

    def run(self, leaves):
        frame = self.frame
        ins = []
        for x, dtype in zip(leaves, self.in_dtypes):
            a = np.asarray(x, dtype=dtype)
            if not (a.flags.c_contiguous and a.flags.aligned):
                a = _c_copy(a)
            ins.append(a)
        plan = self.plan(self._sizes(ins)) if frame.symbolic else None
        shapes = [b.aval.shape for b in frame.outputs] if plan is None else [s for s, _ in plan.outs]
        outs = [None if j in frame.copies else np.empty(shape, b.aval.dtype)
                for j, (shape, b) in enumerate(zip(shapes, frame.outputs))]
        return self._execute(ins, outs, plan)

    def _execute(self, ins, outs, plan):
        """Run the steps on C-contiguous aligned inputs and the fresh outputs (None for those the frame
        copies); returns the outputs."""
        frame = self.frame
        arena = self._arena(self.arena_bytes if plan is None else plan.arena_bytes)
        table = frame.fill_table(ins, outs, arena, () if plan is None else plan.extra)
        address = runtime.data_pointer(table)
        for step in self.steps if plan is None else plan.steps:
            if isinstance(step, PythonStep):
                self._python_step(step.eqn, ins, outs, arena)
            else:
                step.run(address)
        for j, v in frame.copies.items():
            outs[j] = (np.array(v.value, dtype=v.aval.dtype) if isinstance(v, Literal)
                       else np.array(self._view(frame.buffers[id(v)], ins, outs, arena, plan)))
        self._arenas.append(arena)
        return outs

    def _python_step(self, eqn, ins, outs, arena):
        """An equation without a lowering rule: its NumPy impl on views of the buffers. The impl is called as bind
        would call it, without bind's shape rule: the equation was checked when traced (that rule took a fifth of a
        1024-point rfft's call); results are cast to the buffers' dtypes as bind casts them. A primitive with an `into`
        rule writes its result into the output's buffer itself (a sort, in place)."""
        bufs = self.frame.buffers
        args = [x.value if isinstance(x, Literal) else self._view(bufs[id(x)], ins, outs, arena)
                for x in eqn.inputs]
        if eqn.prim.into is not None and (out := bufs.get(id(eqn.outvars[0]))) is not None:
            eqn.prim.into(runtime.parallel_for, self._view(out, ins, outs, arena), *args, **eqn.params)
            return
        with eager():
            results = eqn.prim.impl(*args, **eqn.params)
        for v, r in zip(eqn.outvars, results if eqn.prim.multiple_results else [results]):
            b = bufs.get(id(v))
            if b is not None:
                np.copyto(self._view(b, ins, outs, arena), r, casting="unsafe")

    # ------------------------------------------------------------------------------------ fast path
    def native_call(self, counter, int_dtypes):
        """The builtin function f(leaves) of the Python-callable entry (fast_entry.py, native_call.py), or
        None: the output (a tuple of them unless there is one), or MISS. It counts its hits in counter (an
        int64[1] array); int_dtypes: per input, the dtypes a Python int there must fit (its own, and those
        of NumPy 2's overflow checks)."""
        bounds = native_call.int_bounds(int_dtypes)
        if self._descriptor is not None:
            return native_call.py_function(generic_entry.address(), counter, bounds, self.code, self._descriptor)
        if self._py_fast is None:
            return None
        return native_call.py_function(self._py_fast, counter, bounds, self.code)

    def fast_call(self, n_args, counter, single):
        """f(args) -> the output (single) or the list of outputs, or MISS when an argument is not a
        C-contiguous aligned ndarray of the compiled shape and dtype object (checked by the generated
        code). Counts hits on `counter.hits` (not the cache entry itself: an entry holding its fast path
        that refers back to it would be a cycle, which only the garbage collector frees)."""
        if n_args != len(self.in_dtypes) or self._fast is None and self.frame.symbolic:
            return None
        if self._fast is None:
            return self._driven_fast_call(n_args, counter, single)
        if self.frame.symbolic:
            return self._symbolic_fast_call(n_args, counter, single)
        cfunc, empty = self._fast, np.empty
        specs = [(a.shape, a.dtype) for a in self.out_avals]
        if not self.frame.fast_takes_arena and len(specs) == 1 and single:
            (shape, dtype), = specs
            if n_args == 1:
                def fast(args):
                    out = empty(shape, dtype)
                    if len(args) != 1 or cfunc(args[0], out):
                        return MISS
                    counter.hits += 1
                    return out
                return fast

            def fast(args):
                out = empty(shape, dtype)
                if len(args) != n_args or cfunc(*args, out):
                    return MISS
                counter.hits += 1
                return out
            return fast
        arenas, make_arena, arena_bytes = self._arenas, self._arena, self.arena_bytes
        with_arena = self.frame.fast_takes_arena

        def fast(args):
            if len(args) != n_args:
                return MISS
            outs = [empty(s, d) for s, d in specs]
            if with_arena:
                arena = make_arena(arena_bytes)
                failed = cfunc(*args, *outs, arena)
                arenas.append(arena)
            else:
                failed = cfunc(*args, *outs)
            if failed:
                return MISS
            counter.hits += 1
            return outs[0] if single else outs
        return fast

    def _driven_fast_call(self, n_args, counter, single):
        """The fast path of code without a native entry (the Python driver runs NumPy impls between its steps: a
        sort): the arguments checked here, then the steps. A sort of 100 f32 took 17 us a call through the general
        path (flattening the call, the signature's lookup), NumPy's 0.7."""
        ins = [(a.shape, a.dtype) for a in self.in_avals]
        outs = [(a.shape, a.dtype) for a in self.out_avals]
        copies, execute, empty, ndarray = self.frame.copies, self._execute, np.empty, np.ndarray

        def fast(args):
            if len(args) != n_args:
                return MISS
            for x, (shape, dtype) in zip(args, ins):
                if type(x) is not ndarray or x.dtype != dtype or x.shape != shape or not (
                        x.flags.c_contiguous and x.flags.aligned):
                    return MISS
            counter.hits += 1
            results = execute(list(args), [None if j in copies else empty(s, d) for j, (s, d) in enumerate(outs)],
                              None)
            return results[0] if single else results
        return fast

    def _symbolic_fast_call(self, n_args, counter, single):
        """The fast path of code compiled for symbolic dimensions: the generated code reads the sizes from
        the arguments' dimensions, checks every axis and plans the arena (on the stack, or in an arena of
        ours when it is too large); Python reads the sizes only to allocate the outputs (shapes cached per
        sizes in the Plan). When the generated code declines with 2 (a split group goes parallel) the
        steps run here."""
        empty, plans, plan, execute, sources = np.empty, self._plans, self.plan, self._execute, self.dim_sources
        arenas, make_arena = self._arenas, self._arena

        def misfits(failed, args, outs, p):
            """Whether the generated code declined because an argument does not fit (1); when it declined
            because a split group goes parallel (2), the steps run here."""
            if failed == 2:
                execute(list(args), outs, p)
            return failed == 1

        def call(args, outs, p):
            """The generated code on args and outs, with an arena of ours where the stack is too small."""
            if p.arena_arg is not None:
                return p.cfunc(*args, *outs, *p.arena_arg)
            arena = make_arena(p.arena_bytes)
            failed = p.cfunc(*args, *outs, arena)
            arenas.append(arena)
            return failed

        if single and len(self.out_avals) == 1 and sources == [(0, 0)]:
            # The common case, kept lean: one dimension, the leading axis of the first argument (len() does
            # not build the shape tuple), one output; per size: its shape, function and arena argument.
            dtype, lean = self.out_avals[0].dtype, {}

            def fast(args):
                if len(args) != n_args:
                    return MISS
                try:
                    shape, cfunc, arena_arg = lean[len(args[0])]
                except KeyError:
                    return first_of_size(args)
                except TypeError:
                    return MISS
                out = empty(shape, dtype)
                failed = cfunc(*args, out, *arena_arg)
                if failed and misfits(failed, args, [out], plan((len(args[0]),))):
                    return MISS
                counter.hits += 1
                return out

            def first_of_size(args):
                p = plan((len(args[0]),))
                out = empty(p.outs[0][0], dtype)
                failed = call(args, [out], p)
                if failed and misfits(failed, args, [out], p):
                    return MISS
                if p.arena_arg is not None:
                    if len(lean) > 256:
                        lean.clear()
                    lean[len(args[0])] = p.outs[0][0], p.cfunc, p.arena_arg
                counter.hits += 1
                return out
            return fast

        def fast(args):
            if len(args) != n_args:
                return MISS
            try:
                sizes = tuple([args[i].shape[a] for i, a in sources])
            except (AttributeError, IndexError):
                return MISS
            p = plans.get(sizes) or plan(sizes)
            outs = [empty(s, d) for s, d in p.outs]
            failed = call(args, outs, p)
            if failed and misfits(failed, args, outs, p):
                return MISS
            counter.hits += 1
            return outs[0] if single else outs
        return fast
