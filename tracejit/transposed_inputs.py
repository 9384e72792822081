"""Layouts at the boundary of compiled code. Large inputs that arrive transposed (Fortran order: a pandas frame's
`.values`, a LAPACK result, `x.T`) run on code compiled for their layout, not on a C-order copy of them (`with_layouts`);
outputs that are transposes of computed values come back as transposed views of them (`transposed_outputs`,
`as_views`), for every signature.

Such a code is the signature's IR with the input taken as its transpose, which is C-contiguous (a view, no copy),
and a transpose of it as the IR's first equation; the passes then move that transpose down through elementwise
operations and fold it into the equations that read it: a matrix product reads it as it is (TransA, or a loop in
its memory order), a reduction reduces the other axes; an output that is still a transpose is returned as the
transposed view of the value it transposes, as NumPy's elementwise functions keep their operand's order (tanh of a
Fortran-ordered array is Fortran-ordered). A copy of a 2048 x 2048 f32 transpose took 5-6 ms (in tiles:
executable._c_copy), where NumPy's gemv reads it in place in 0.3. The code for a set of transposed positions is
compiled on its first call and kept with the entry.
"""
import os
import threading
from concurrent.futures import Future

import numpy as np

from . import passes
from .backend import llvm
from .backend.executable import MISS
from .core.avals import is_symbolic
from .core.ir import IR, ClosedIR, Eqn, Var
from .core.ops import primitive

TRANSPOSED_BYTES = 1 << 20     # inputs from this size on take their own code; a smaller one is copied


def transposed_positions(leaves, avals):
    """The positions of the leaves that are large Fortran-ordered arrays of the compiled dtype (ndim >= 2)."""
    return tuple(i for i, (x, a) in enumerate(zip(leaves, avals))
                 if type(x) is np.ndarray and x.ndim >= 2 and x.nbytes >= TRANSPOSED_BYTES and x.dtype == a.dtype
                 and x.flags.f_contiguous and x.flags.aligned and not x.flags.c_contiguous)


def transposed_ir(closed, positions):
    """closed taking the inputs at positions as their transposes (axes reversed)."""
    ir, eqns, invars = closed.ir, [], list(closed.ir.invars)
    for i in positions:
        v = invars[i]
        invars[i] = Var(v.aval.update(shape=v.aval.shape[::-1]))
        eqns.append(Eqn(primitive("transpose"), [invars[i]], {"permutation": tuple(range(v.aval.ndim))[::-1]}, [v]))
    return ClosedIR(IR(ir.constvars, invars, eqns + list(ir.eqns), ir.outvars), closed.consts)


def transposed_outputs(closed):
    """(closed with each output that is a transpose of a value replaced by that value, {output: permutation}): the
    value nothing else returns, so that the view returned for it shares memory with no other output."""
    ir, made = closed.ir, {id(v): e for e in closed.ir.eqns for v in e.outvars}
    outs, perms = list(ir.outvars), {}
    for j, v in enumerate(outs):
        t = made.get(id(v))
        if t is not None and t.prim is primitive("transpose") and ir.outvars.count(v) == 1 and \
                all(x is not t.inputs[0] for x in ir.outvars):
            outs[j], perms[j] = t.inputs[0], tuple(t.params["permutation"])
    if not perms:
        return closed, perms
    return passes.dce(ClosedIR(IR(ir.constvars, ir.invars, ir.eqns, outs), closed.consts)), perms


def as_views(run, views, single):
    """run (on leaves: its outputs, one alone if single, MISS where it declines) with the outputs at `views`
    ({output: permutation}) transposed, as views."""
    if not views:
        return run
    if single:
        (perm,) = views.values()
        return lambda leaves: out if (out := run(leaves)) is MISS else out.transpose(perm)

    def viewed(leaves):
        outs = run(leaves)
        if outs is MISS:
            return outs
        outs = list(outs)
        for j, perm in views.items():
            outs[j] = outs[j].transpose(perm)
        return outs
    return viewed


def compile_soon(traced, leaves, in_avals, compile_ir):
    """{positions: a Future of the variant's run} for the large transposed inputs among a first call's leaves, the
    variant compiling on a thread of its own while the signature's C-order code compiles (counted as a compile
    elsewhere: each takes one core). Fortran row sums' first call: 28 -> 17 ms on 2 cores."""
    positions = transposed_positions(leaves, in_avals)
    if not positions or any(is_symbolic(a.shape) for a in in_avals):
        return {}
    future = Future()
    llvm.compiling_elsewhere(future)

    def work():
        try:
            future.set_result(_variant(traced, positions, len(in_avals), compile_ir))
        except BaseException as e:  # noqa: BLE001 -- raised where the call waits for it
            future.set_exception(e)
        finally:
            _compiling.discard(thread)
    thread = threading.Thread(target=work, name="tracejit-layout")
    _compiling.add(thread)
    thread.start()
    return {positions: future}


_compiling = set()      # the threads compile_soon started that still run


def _before_fork():
    """A fork waits for them: LLVM's state must not be mid-compile in the child."""
    for thread in list(_compiling):
        if thread is not threading.current_thread():
            thread.join()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(before=_before_fork)


def _variant(closed, positions, n_inputs, compile_ir):
    """The run, on leaves with those at positions transposed, of closed's code for them: through its native entry
    where it has one."""
    optimized, views = transposed_outputs(passes.optimize(transposed_ir(closed, positions)))
    exe = compile_ir(optimized)
    fast = exe.native_call(np.zeros(1, np.int64), [()] * n_inputs)
    single = len(exe.out_avals) == 1

    def run_variant(leaves):
        out = MISS if fast is None else fast(tuple(leaves))
        return exe.run(leaves) if out is MISS else [out] if single else list(out)
    return as_views(run_variant, views, False)


def with_layouts(run, closed, in_avals, compile_ir, soon=None):
    """run(leaves), except that a call with large transposed inputs runs the code compiled for their positions
    (compile_ir: an optimised ClosedIR -> Executable; soon: compile_soon's futures). Symbolic signatures keep the
    copy: their loop nests are not tiled (loop_axes.transposed_read)."""
    if any(is_symbolic(a.shape) for a in in_avals):
        return run
    variants = dict(soon or {})    # positions -> the variant's run on leaves (or a Future of it)

    def call(leaves):
        positions = transposed_positions(leaves, in_avals)
        if not positions:
            return run(leaves)
        found = variants.get(positions)
        if found is None:
            found = variants.setdefault(positions, _variant(closed, positions, len(in_avals), compile_ir))
        elif isinstance(found, Future):
            found = variants[positions] = found.result()
        return found(_transposed_at(leaves, positions))

    def transposed(leaves):
        """call(leaves) where they are arrays of the signature's shapes and dtypes with large transposed ones whose
        code is compiled, else MISS: the dispatch fast path tries it when the C-order one declines (at 2048 x 2048
        f32, each Python layer between a call and the code cost 15-25 us: the matrix evicts the interpreter's
        data from the caches)."""
        if len(leaves) != len(in_avals):
            return MISS
        for x, a in zip(leaves, in_avals):
            if type(x) is not np.ndarray or x.shape != a.shape or x.dtype != a.dtype:
                return MISS
        positions = transposed_positions(leaves, in_avals)
        run_variant = variants.get(positions) if positions else None
        if run_variant is None or isinstance(run_variant, Future):
            return MISS
        return run_variant(_transposed_at(leaves, positions))
    call.transposed = transposed
    return call


def _transposed_at(leaves, positions):
    """The leaves with those at positions transposed (their C-order views)."""
    return [x.T if i in positions else x for i, x in enumerate(leaves)]
