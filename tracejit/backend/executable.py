"""A compiled IR: the native steps, the Python driver that runs them on numpy buffers, the fast path."""
import ctypes
import time

import numpy as np

from ..core.ir import Literal
from ..core.trace import bind, eager
from . import disk_cache, llvm, runtime
from .codegen import ALIGN, Program

MISS = object()   # the fast path declined: take the general path


class Executable:
    """run(leaves) -> list of fresh output arrays. `fast_call(n)` gives the dispatch fast path."""

    def __init__(self, closed, fuse=True, cache=True):
        t0 = time.perf_counter()
        self.closed = closed
        prog = self.program = Program(closed, fuse)
        self.llvm_text = prog.build()
        t1 = time.perf_counter()
        names = [s[1] for s in prog.steps if s[0] != "py"] + (["fast"] if prog.fast else [])
        addresses, self.from_disk, self.code_size = disk_cache.native_code(closed, self.llvm_text, names,
                                                                           prog.symbols, cache)
        addrs = dict(zip(names, addresses))
        t2 = time.perf_counter()
        self.times = {"codegen": t1 - t0, "llvm": t2 - t1}
        self._keep = (prog.literal_arrays, [b.value for b in prog.buffers.values() if b.kind == "const"])
        step_type = ctypes.CFUNCTYPE(None, ctypes.c_void_p)
        par_type = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_int64, ctypes.c_int64)
        self.steps = []
        for s in prog.steps:
            if s[0] == "step":
                self.steps.append(("step", step_type(addrs[s[1]])))
            elif s[0] == "par":
                self.steps.append(("par", par_type(addrs[s[1]]), s[2]))
            else:
                self.steps.append(s)
        self.in_dtypes = [v.aval.dtype for v in closed.ir.invars]
        self.out_avals = [v.aval for v in closed.ir.outvars]
        self.arena_bytes = prog.arena_bytes
        self._arenas = []           # a pool, so that threads calling at once each get their own
        n_obj = len(prog.inputs) + len(prog.outputs) + (self.arena_bytes > 0)
        # Small programs keep the GIL (a cheaper call); others release it so that threads run at once.
        small = sum(a.size for a in self.out_avals) + sum(b.aval.size for b in prog.inputs) < 4096
        kind = ctypes.PYFUNCTYPE if small else ctypes.CFUNCTYPE
        self._fast = kind(ctypes.c_int, *[ctypes.py_object] * n_obj)(addrs["fast"]) if prog.fast else None

    def optimized_llvm(self):
        return str(llvm.optimize(self.llvm_text))

    # ------------------------------------------------------------------------------- general path
    def _arena(self):
        try:
            return self._arenas.pop()
        except IndexError:
            return np.empty(self.arena_bytes + ALIGN, np.uint8)

    def _view(self, b, ins, outs, arena):
        if b.kind == "in":
            return ins[b.slot]
        if b.kind == "out":
            return outs[b.slot - len(ins)]
        if b.kind == "const":
            return b.value
        start = (-runtime.data_pointer(arena)) % ALIGN + b.offset
        return arena[start:start + b.nbytes].view(b.aval.dtype).reshape(b.aval.shape)

    def run(self, leaves):
        prog = self.program
        ins = []
        for x, dtype in zip(leaves, self.in_dtypes):
            a = np.asarray(x, dtype=dtype)
            if not (a.flags.c_contiguous and a.flags.aligned):
                a = np.array(a, order="C")
            ins.append(a)
        outs = [np.empty(b.aval.shape, b.aval.dtype) if kind == "buf" else None for kind, b in prog.outputs]
        arena = self._arena()
        table = np.empty(len(ins) + len(outs) + 1, np.uint64)
        table[:len(ins)] = [runtime.data_pointer(a) for a in ins]
        table[len(ins):-1] = [runtime.data_pointer(a) if a is not None else 0 for a in outs]
        table[-1] = -(-runtime.data_pointer(arena) // ALIGN) * ALIGN
        address = runtime.data_pointer(table)
        for step in self.steps:
            if step[0] == "step":
                step[1](address)
            elif step[0] == "par":
                runtime.parallel_for(lambda c, fn=step[1], n=step[2]: fn(address, c, n), step[2])
            else:
                self._python_step(step[1], ins, outs, arena)
        for j, (kind, v) in enumerate(prog.outputs):
            if kind == "copy":
                outs[j] = (np.array(v.value, dtype=v.aval.dtype) if isinstance(v, Literal)
                           else np.array(self._view(prog.buffers[id(v)], ins, outs, arena)))
        self._arenas.append(arena)
        return outs

    def _python_step(self, eqn, ins, outs, arena):
        """An equation without a lowering rule: its NumPy impl on views of the buffers."""
        bufs = self.program.buffers
        args = [x.value if isinstance(x, Literal) else self._view(bufs[id(x)], ins, outs, arena)
                for x in eqn.inputs]
        with eager():
            results = bind(eqn.prim, *args, **eqn.params)
        for v, r in zip(eqn.outvars, results if eqn.prim.multiple_results else [results]):
            b = bufs.get(id(v))
            if b is not None:
                np.copyto(self._view(b, ins, outs, arena), r)

    # ------------------------------------------------------------------------------------ fast path
    def fast_call(self, n_args, entry, single):
        """f(args) -> the output (single) or the list of outputs, or MISS when an argument is not a
        C-contiguous aligned ndarray of the compiled shape and dtype object (checked by the generated
        code). Counts hits on `entry`."""
        if self._fast is None or n_args != len(self.in_dtypes):
            return None
        cfunc, empty = self._fast, np.empty
        specs = [(a.shape, a.dtype) for a in self.out_avals]
        if self.arena_bytes == 0 and len(specs) == 1 and single:
            (shape, dtype), = specs
            if n_args == 1:
                def fast(args):
                    out = empty(shape, dtype)
                    if len(args) != 1 or cfunc(args[0], out):
                        return MISS
                    entry.hits += 1
                    return out
                return fast

            def fast(args):
                out = empty(shape, dtype)
                if len(args) != n_args or cfunc(*args, out):
                    return MISS
                entry.hits += 1
                return out
            return fast
        arenas, make_arena, with_arena = self._arenas, self._arena, self.arena_bytes > 0

        def fast(args):
            if len(args) != n_args:
                return MISS
            outs = [empty(s, d) for s, d in specs]
            if with_arena:
                arena = make_arena()
                failed = cfunc(*args, *outs, arena)
                arenas.append(arena)
            else:
                failed = cfunc(*args, *outs)
            if failed:
                return MISS
            entry.hits += 1
            return outs[0] if single else outs
        return fast
