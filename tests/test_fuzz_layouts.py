"""Property-based fuzzing of the backend's copy and view paths: concatenates and stacks copied block by block
(2 to 260 operands: arguments, windows with steps, reshapes, transposes, broadcasts, constants, stored and
computed values), values stored straight into an output's buffer (tile, repeat, kron, flattened outer products),
scatters computed in their output's buffer (into zeros, ones, an argument or a computed value; indices in and
out of range under modes drop, fill and promise_in_bounds; bincount), reductions with keepdims feeding
elementwise consumers, and outputs that alias each other or an input, under jit, vmap (in_axes 0, last or
None), grad and symbolic dimensions. Compiled results are compared with NumPy and with the reference
interpreter (bit for bit where the program only moves values or computes exactly) on three calls (fresh inputs,
then Fortran-ordered and strided ones), and the inputs must come back unchanged. (x.at offers no mode 'clip',
nor multiply with traced indices: neither is drawn.)

Examples are derandomized (conftest's profile); TRACEJIT_HYPOTHESIS=explore TRACEJIT_FUZZ_EXAMPLES=5000
searches further.
"""
import os
import warnings

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import tracejit as tj
import tracejit.numpy as tnp
from tracejit.core.avals import SymbolicDimError

EXAMPLES = int(os.environ.get("TRACEJIT_FUZZ_EXAMPLES", "0"))
ROWS = [1, 2, 3, 4, 7, 8, 9, 15, 16, 17, 31, 32, 33, 63, 64, 65, 100, 127, 128, 129, 200]
SMALL = [0, 1, 1, 2, 3, 5]
DTYPES = ["float32", "float64", "int32", "bool", "complex64", "float16"]
EPS = {"float16": 2e-3, "float32": 1e-6, "complex64": 1e-6, "float64": 1e-12, "complex128": 1e-12}


def fuzz_settings(n):
    return settings(max_examples=EXAMPLES or n, deadline=None, print_blob=True,
                    suppress_health_check=list(HealthCheck))


def shape_str(shape, sym=None, ref=None):
    """A shape as source: the symbolic axis (sym) written as ref's size, so the code holds for any size."""
    dims = [f"{ref}.shape[{sym[1]}]" if sym is not None and i == sym[0] else str(d) for i, d in enumerate(shape)]
    return "(" + "".join(d + ", " for d in dims) + ")"


class Program:
    """A random program drawn as source text f(M, a0, a1, ...), M being numpy or tracejit.numpy; args holds
    each argument's (shape, dtype, symbolic axis or None); exact says whether every step is exact."""

    def __init__(self, draw, dtype, sym):
        self.draw, self.dtype, self.sym = draw, dtype, sym
        self.args, self.lines, self.exact, self.n_tmp, self.shared = [], [], True, 0, {}

    def pick(self, options):
        return self.draw(st.sampled_from(options))

    def arg(self, shape, symax=None, dtype=None):
        self.args.append((tuple(shape), dtype or self.dtype, symax))
        return f"a{len(self.args) - 1}"

    def let(self, code):
        self.n_tmp += 1
        self.lines.append(f"t{self.n_tmp} = {code}")
        return f"t{self.n_tmp}"

    def operand(self, shape, symax=None, depth=0, const=True):
        """Source of a value of this shape (symax: the axis of the symbolic size, kept as is); const: whether it
        may be a NumPy constant (x.at needs a traced array)."""
        shape, r = tuple(shape), len(shape)
        free = [d for d in range(r) if d != symax]
        kinds = ["arg", "arg", "window", "reshape", "transpose", "broadcast", "computed", "keepdims", "cast", "const",
                 "shared"]
        kinds += ["expand"] * (1 in [shape[d] for d in free]) + ["squeeze"] * (symax is None)
        kind = self.pick(kinds if depth < 2 else ["arg"])
        if kind == "window" and free:
            d, step, start, extra = (self.pick(free), self.pick([1, 1, 2, 3, -1]), self.pick([0, 1, 2]),
                                     self.pick([0, 1, 3]))
            big = list(shape)
            big[d] = start + (shape[d] - 1) * abs(step) + 1 + extra if shape[d] else start + extra
            a = self.operand(big, symax, depth + 1, const) if self.draw(st.booleans()) else self.arg(big, symax)
            if step < 0:
                a = f"{a}[{':, ' * d}::-1]"
            window = f"{start}:{start + shape[d] * abs(step)}:{abs(step)}" if shape[d] else f"{start}:{start}"
            return f"{a}[{':, ' * d}{window}]"
        if kind == "reshape" and r:
            if symax is None:
                flat = int(np.prod(shape))
                split = self.pick([(flat,), (shape[0], flat // shape[0]) if shape[0] else (0, 3), shape[::-1]])
                if int(np.prod(split)) != flat:
                    split = (flat,)
                return f"{self.arg(split)}.reshape({shape_str(shape)})"
            if symax == 0 and r >= 2:
                a = self.arg((shape[0], int(np.prod(shape[1:]))), 0)
                return f"{a}.reshape({shape_str(shape, (0, 0), a)})"
        if kind == "transpose" and r >= 2:
            perm = list(self.draw(st.permutations(range(r))))
            big = [0] * r
            for i, p in enumerate(perm):
                big[p] = shape[i]
            inner = self.operand(big, None if symax is None else perm[symax], depth + 1, const)
            return f"M.transpose({inner}, {tuple(perm)})"
        if kind == "broadcast" and free:
            ones = self.draw(st.sets(st.sampled_from(free), min_size=1))
            small = [1 if d in ones else s for d, s in enumerate(shape)]
            lead = self.pick([0, 1]) if symax is None and ones == set(range(min(free), min(free) + 1)) else 0
            a = self.arg(small[lead:], None if symax is None else symax - lead)
            return f"M.broadcast_to({a}, {shape_str(shape, None if symax is None else (symax, symax - lead), a)})"
        if kind == "shared":     # a value stored for several readers (a window of it reads its buffer)
            key = (shape, symax, const)
            if key not in self.shared or self.draw(st.booleans()):
                self.shared[key] = self.let(self.operand(shape, symax, depth + 1, const))
            return self.shared[key]
        if kind == "const" and symax is None and const:       # a NumPy constant (the program's const buffer)
            return f"(np.arange({int(np.prod(shape))}) % 7 - 3).astype({self.dtype!r}).reshape({shape_str(shape)})"
        if kind == "cast" and self.dtype != "int32":     # (of small integers: exact)
            return f"{self.arg(shape, symax, 'int32')}.astype({self.dtype!r})"
        if kind == "computed":      # (a 16-bit float chain rounds once where fused, NumPy's every step)
            self.exact &= self.dtype != "float16"
            inner = self.operand(shape, symax, depth + 1, const)
            if self.dtype == "bool":
                return f"M.logical_not({inner})"
            if self.draw(st.booleans()):
                return f"({inner} + {self.operand(shape, symax, depth + 1, const)})"
            return f"({inner} * 2 + {'1j' if self.dtype.startswith('complex') else '1'})"
        if kind == "keepdims" and free and self.dtype != "bool":
            d = self.pick(free)
            if shape[d] == 1:
                big = list(shape)
                big[d] = self.pick(ROWS)
                red = self.pick(["sum", "mean"] if self.dtype == "complex64" else
                                ["sum", "max", "min"] + ["mean"] * (self.dtype != "int32"))
                self.exact &= red in ("max", "min") or self.dtype == "int32"
                return f"M.{red}({self.arg(big, symax)}, axis={d}, keepdims=True)"
        if kind == "expand":
            d = self.pick([d for d in free if shape[d] == 1])
            inner = self.operand(shape[:d] + shape[d + 1:], None if symax is None else symax - (symax > d), depth + 1,
                                 const)
            return f"M.expand_dims({inner}, {d})"
        if kind == "squeeze" and symax is None:
            d = self.pick(range(r + 1))
            return f"M.squeeze({self.operand(shape[:d] + (1,) + shape[d:], None, depth + 1, const)}, {d})"
        return self.arg(shape, symax)

    def shape(self, rank, n, big=False):
        """A shape whose last axis is a row length straddling vector widths; the symbolic axis 0 has size n;
        big: sometimes a long axis 0, whose loop the threads split."""
        shape = [self.pick(SMALL) for _ in range(rank - 1)] + [self.pick(ROWS)] if rank else []
        if self.sym and rank:
            shape[0] = n
        elif big and rank >= 2 and self.draw(st.integers(0, 9)) == 0:
            shape[0] = self.pick([1000, 3001])
            shape[1:] = [min(d, 3) for d in shape[1:-1]] + [min(shape[-1], 129)]
        return shape

    def concatenate(self, n):
        rank = self.pick([1, 2, 2, 3])
        k = self.pick([2, 2, 3, 4, 5, 9, 17, 40, 130, 260])      # (the generic entry takes up to 256 inputs)
        shape, axes = self.shape(rank, n, k < 5), [a for a in range(rank) if not (self.sym and a == 0)]
        if not axes:
            return self.stack(n)
        axis = self.pick(axes)
        if k > 5:      # many operands: small blocks
            shape = [min(s, 9 if k < 100 else 2) if i != len(shape) - 1 or k > 100 else s
                     for i, s in enumerate(shape)]
        ops = []
        for _ in range(k):
            if ops and self.draw(st.integers(0, 5)) == 0:
                ops.append(self.pick(ops))        # the same operand again
                continue
            shape[axis] = self.pick(ROWS[:8] + [0]) if axis != rank - 1 or k > 5 else self.pick(ROWS + [0])
            ops.append(self.operand(shape, 0 if self.sym else None))
        axis = self.pick([axis, axis - rank] + [None] * (not self.sym))     # (None: of the operands flattened)
        return f"M.concatenate([{', '.join(ops)}], axis={axis})"

    def stack(self, n):
        rank = self.pick([0, 1, 2, 3] if not self.sym else [1, 2])
        k = self.pick([2, 3, 4, 9, 40, 257])
        shape = self.shape(rank, n, k < 5)
        if k > 4:
            shape = [min(s, 9) if i else s for i, s in enumerate(shape)]
        ops = []
        for _ in range(k):
            ops.append(self.pick(ops) if ops and self.draw(st.integers(0, 5)) == 0
                       else self.operand(shape, 0 if self.sym and rank else None))
        return f"M.stack([{', '.join(ops)}], axis={self.pick(range(-rank - 1, rank + 1))})"

    def layout(self, n):
        """tile, repeat, kron and flattened outer products: a value stored into its output reshaped."""
        kind = self.pick(["tile", "repeat", "kron", "outer"] if not self.sym else ["tile", "repeat"])
        if self.dtype == "bool" and kind in ("kron", "outer"):
            kind = "tile"
        # (a product: complex ones round differently in NumPy; a 16-bit one, rounded where NumPy rounds it, may
        # differ after a later step fused with it, which rounds once)
        self.exact &= kind in ("tile", "repeat") or self.dtype not in ("complex64", "float16")
        if kind in ("tile", "repeat"):
            rank = self.pick([1, 2, 3] if not self.sym else [2])
            shape = self.shape(rank, n, True)
            x = self.operand(shape, 0 if self.sym else None)
            if kind == "tile":
                reps = tuple(self.pick([1, 2, 3]) for _ in range(self.pick([1, rank, rank + 1])))
                if self.sym:
                    reps = (1,) + reps[1:] if len(reps) == rank else reps[:rank - 1] + (reps[-1],)
                return f"M.tile({x}, {reps})"
            axis = self.pick([a for a in range(-1, rank) if not (self.sym and a == 0)])
            return f"M.repeat({x}, {self.pick([1, 2, 3, 5])}, axis={axis})"
        if kind == "kron":
            a = self.operand([self.pick(SMALL), self.pick(ROWS[:12])])
            return f"M.kron({a}, {self.operand([self.pick(SMALL), self.pick(ROWS[:12])])})"
        u, v = self.operand([self.pick(ROWS)]), self.operand([self.pick(ROWS[:12])])
        return self.pick([f"M.outer({u}, {v}).reshape(-1)", f"({u}[:, None] * {v}[None, :]).reshape(-1)"])

    def scatter(self, n):
        size = n if self.sym else self.pick([0, 1, 3, 8, 64, 65, 200])
        rows = [] if self.draw(st.booleans()) else [self.pick([1, 3, 17])]
        if not self.sym and self.draw(st.integers(0, 4)) == 0 and size and not rows:
            weights = self.draw(st.booleans()) and self.dtype in ("float32", "float64")
            k = self.pick([1, 5, 40])
            idx = self.arg((k,), None, ("index", 0, size, size))
            w = f", weights={self.arg((k,))}" if weights else ""
            self.exact &= not weights
            return f"BINCOUNT(M, {idx}{w}, length={size})"
        # (x.at offers no "clip"; symbolic code runs at other sizes: indices past them must be dropped)
        mode = self.pick(["drop", "fill"] + [None, "promise_in_bounds"] * (not self.sym))
        op = self.pick({"bool": ["set", "max", "min"], "complex64": ["add", "set"]}.get(self.dtype,
                                                                                     ["add", "set", "max", "min"]))
        in_range = mode in ("promise_in_bounds", None)
        lo, hi = (-size, size) if in_range else (-size - 5, size + 5)
        if not size:
            lo, hi = (0, 0) if in_range else (-3, 3)
        if self.sym:
            lo, hi = 0, size + 5
        k = self.pick([0, 1, 5, 40])
        if op == "set" or (in_range and not size):
            k = min(k, size)
        unique = op == "set"
        self.exact &= op in ("set", "max", "min") or self.dtype == "int32" or unique
        idx = self.arg((k,), None, ("unique" if unique else "index", lo, hi, size))
        if self.sym:
            base = self.pick([f"M.zeros_like({self.arg([n] + rows, 0)})", self.arg([n] + rows, 0)])
        else:
            base = self.pick([f"M.zeros({(size, *rows)}, {self.dtype!r})", f"M.ones({(size, *rows)}, {self.dtype!r})",
                              self.arg([size] + rows),
                              self.operand([size] + rows, const=False)])
        upd = self.operand([k] + rows) if self.draw(st.booleans()) else self.pick(["2", "1"])
        if self.dtype == "bool" and upd in ("1", "2"):
            upd = "True"
        return f"SCATTER(M, {base}, {idx}, {upd}, {op!r}, {mode!r})"

    def reduction(self, n):
        rank = self.pick([1, 2, 3])
        shape = self.shape(rank, n, True)
        x = self.let(self.operand(shape, 0 if self.sym else None))
        axes = [a for a in range(-1, rank) if not (self.sym and a == 0)] or [-1]
        axis = self.pick(axes + ([(0, rank - 1), None] if rank >= 2 and not self.sym else []))
        reds = {"bool": ["max", "min", "any"], "complex64": ["sum", "mean"]}.get(self.dtype,
                                                                              ["sum", "mean", "max", "min"])
        red = self.pick(reds)
        self.exact &= red in ("max", "min", "any") or (self.dtype == "int32" and red == "sum")
        r = f"M.{red}({x}, axis={axis}, keepdims=True)"
        if self.dtype == "bool":
            return self.pick([r, f"M.logical_xor({x}, {r})"])
        out = self.pick([r, f"{x} - {r}", f"{r} * 2", f"{x} * {r}"])
        self.exact &= self.dtype != "float16" or not out.endswith(f"* {r}")
        return out

    def build(self, n):
        form = self.pick(["concatenate", "stack", "layout", "scatter", "reduction"])
        r = self.let(getattr(self, form)(n))
        if self.draw(st.integers(0, 3)) == 0:       # a second form reading the first one's result
            r = self.let(self.pick([f"M.concatenate([{r}, {r}], axis=-1)", f"M.stack([{r}, {r}])",
                                    f"M.tile({r}, 2)", f"{r} * 2" if self.dtype != "bool" else f"~{r}"]))
        outs = [r]
        for _ in range(self.pick([0, 0, 1, 2])):      # outputs that alias each other or an input
            t = self.pick([f"t{k}" for k in range(1, self.n_tmp + 1)])
            extra = [r, t, f"{t}.T"] + ([] if self.sym else [f"{t}.reshape(-1)"])
            extra += ["a0"] + ([] if self.sym else ["a0.reshape(-1)"]) if self.args else []
            outs.append(self.pick(extra))
        body = "".join(f"    {line}\n" for line in self.lines)
        names = ", ".join(f"a{i}" for i in range(len(self.args)))
        return f"def f(M, {names}):\n{body}    return ({', '.join(outs)},)\n"


def SCATTER(M, base, idx, upd, op, mode):
    """base.at[idx].<op>(upd, mode=mode); with NumPy, the updates at in-range indices (negative ones count from
    the end), in order."""
    if M is tnp:
        return getattr(base.at[idx], op)(upd, mode=mode)
    out, n = np.array(base, copy=True), len(base)
    idx = np.where(idx < 0, idx + n, idx)
    upd = np.broadcast_to(np.asarray(upd, out.dtype), idx.shape + out.shape[1:])
    keep = (idx >= 0) & (idx < n)
    idx, upd = idx[keep], upd[keep]
    if op == "set":
        out[idx] = upd
    else:
        getattr(np, {"add": "add", "max": "maximum", "min": "minimum"}[op]).at(out, idx, upd)
    return out


def BINCOUNT(M, idx, weights=None, length=0):
    """bincount of a fixed length (tracejit needs it under jit; NumPy's minlength, the indices being below it)."""
    if M is tnp:
        return tnp.bincount(idx, weights, length=length)
    return np.bincount(idx, weights, minlength=length)


def relaid(rng, a):
    """a's values in another memory layout: Fortran order, or a view with steps (negative ones too)."""
    kind = rng.integers(3)
    if kind == 0 or not a.ndim:
        return a
    if kind == 1:
        return np.asfortranarray(a)
    steps = rng.choice([1, 2, -1, -2], a.ndim)
    big = np.zeros(tuple(d * abs(int(s)) for d, s in zip(a.shape, steps)), a.dtype)
    view = big[tuple(slice(None, None, int(s)) for s in steps)]
    view[...] = a
    return view


def make_args(rng, specs, n=None):
    out = []
    for shape, dtype, symax in specs:
        if n is not None and symax is not None:
            shape = shape[:symax] + (n,) + shape[symax + 1:]
        if isinstance(dtype, tuple):
            kind, lo, hi, size = dtype
            if kind == "unique":     # distinct places: an in-range negative index is its place - size
                a = rng.permutation(np.arange(lo, hi))
                _, first = np.unique(np.where((a < 0) & (a >= -size), a + size, a), return_index=True)
                a = a[np.sort(first)][:shape[0]]
            else:
                a = rng.integers(lo, hi, shape) if hi > lo else np.zeros(shape, np.int64)
            out.append(np.asarray(a, np.int32))
        elif dtype == "bool":
            out.append(rng.random(shape) < 0.5)
        elif dtype == "int32":
            out.append(rng.integers(-50, 50, shape).astype(np.int32))
        elif dtype == "complex64":
            out.append((rng.standard_normal(shape) + 1j * rng.standard_normal(shape)).astype(dtype))
        else:
            out.append(rng.standard_normal(shape).astype(dtype))
    return out


def agree(got, want, exact, args, what, source, width=None):
    """Shapes, dtypes and values agree: bit for bit where exact, else within a few roundings of sums of up to
    `width` terms (by default the longest axis of the args) of the args' magnitude."""
    got, want = list(got), list(want)
    assert len(got) == len(want), (what, source)
    scale = max([float(np.max(np.abs(a))) for a in args if a.size and a.dtype.kind in "fc"], default=1.0)
    width = width or max([max(a.shape, default=1) for a in args] + [256])      # (a sum of a broadcast's copies)
    for k, (g, w) in enumerate(zip(got, want)):
        g, w = np.asarray(g), np.asarray(w)
        msg = f"{what}: output {k} of\n{source}"
        assert g.shape == w.shape and g.dtype == w.dtype, f"{g.shape} {g.dtype} != {w.shape} {w.dtype}: {msg}"
        if exact or w.dtype.kind in "biu":
            np.testing.assert_array_equal(g, w, err_msg=msg)
        else:
            eps = EPS[w.dtype.name]
            np.testing.assert_allclose(g, w, rtol=eps, atol=8 * eps * scale * width, err_msg=msg)


def compile_source(source):
    scope = {"M": None, "SCATTER": SCATTER, "BINCOUNT": BINCOUNT, "np": np}
    exec(source, scope)  # noqa: S102 -- the generated program
    return scope["f"]


def named(f, n_args):
    """f(tnp, ...) with parameters named a0, a1, ... (dynamic_dims names them)."""
    names = ", ".join(f"a{i}" for i in range(n_args))
    scope = {"f": f, "tnp": tnp}
    exec(f"def g({names}):\n    return f(tnp, {names})\n", scope)  # noqa: S102 -- named parameters
    return scope["g"]


def run_numpy(f, args):
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return f(np, *args)


def refused(f, args, run):
    """Whether NumPy refuses the program on args (a max over no elements); then tracejit must refuse it too,
    symbolic code when it is called (test_symbolic_dims.py: test_symbolic_max_of_no_elements)."""
    try:
        run_numpy(f, args)
    except ValueError:
        with pytest.raises((ValueError, TypeError)):
            run()
        return True
    return False


def check_program(source, specs, exact, seed, n=None, n2=None, rows=False):
    """jit (three calls: fresh inputs, then other layouts) against NumPy and the reference interpreter; where n2,
    axis 0 symbolic (n, n2, n) and, where rows, the last axes too (a dimension per length, kept)."""
    f, rng = compile_source(source), np.random.default_rng(seed)
    g = named(f, len(specs))
    dims = None
    if n2 is not None:
        dims = {f"a{i}": {s: "n"} for i, (_, _, s) in enumerate(specs) if s is not None}
        for i, (shape, _, s) in enumerate(specs):
            if rows and s is not None and len(shape) - 1 != s:
                dims[f"a{i}"][len(shape) - 1] = f"m{shape[-1]}"
    jitted = tj.jit(g, cache=False, dynamic_dims=dims)
    reference = tj.jit(g, backend="reference")
    for call, size in enumerate([n, n2, n] if n2 is not None else [None, None, None]):
        args = make_args(rng, specs, size)
        if call == 2:
            args = [relaid(rng, a) for a in args]
        kept = [a.copy() for a in args]
        if refused(f, kept, lambda args=args: jitted(*args)):
            return
        try:
            got = jitted(*args)
        except SymbolicDimError:
            assert n2 is not None
            return
        want = run_numpy(f, kept)
        agree(got, want, exact, kept, "jit against NumPy", source)
        agree(got, reference(*args), exact, kept, "jit against the reference", source)
        for a, k in zip(args, kept):
            assert a.tobytes() == k.tobytes(), f"an input was modified by\n{source}"
        for o in got:
            assert not any(np.shares_memory(o, a) for a in args), f"an output is an input's memory:\n{source}"
    if n2 is not None:
        assert jitted.misses == 1, source


def check_vmap(source, specs, exact, seed, batch):
    """vmap over each argument's axis 0, its last axis or none (in_axes), against NumPy per example."""
    f, rng = compile_source(source), np.random.default_rng(seed)
    axes = [[0, 0, len(shape), None][rng.integers(4)] for shape, _, _ in specs]
    if all(a is None for a in axes):
        return
    g = named(f, len(specs))
    examples = [make_args(rng, specs) for _ in range(batch)]
    args = [s[0] if a is None else np.stack(s, axis=a) for a, s in zip(axes, zip(*examples))]
    kept = [a.copy() for a in args]
    vf = tj.jit(tj.vmap(g, in_axes=tuple(axes)), cache=False)
    if refused(f, examples[0], lambda: vf(*args)):
        return
    got = vf(*args)
    per = [run_numpy(f, [x if a is None else np.take(x, b, axis=a) for a, x in zip(axes, kept)]) for b in range(batch)]
    want = [np.stack([p[k] for p in per]) for k in range(len(per[0]))]
    agree(got, want, exact, kept, f"vmap (in_axes {axes}) against NumPy", source)
    for a, k in zip(args, kept):
        assert a.tobytes() == k.tobytes(), f"an input was modified by vmap of\n{source}"


def check_grad(source, specs, seed):
    """The gradient of a fixed linear function of the float outputs (well conditioned: it does not depend on
    the outputs' roundings), compiled against the reference interpreter's."""
    f, rng = compile_source(source), np.random.default_rng(seed)
    diff = tuple(i for i, (_, d, _) in enumerate(specs) if d in ("float32", "float64"))
    if not diff:
        return
    g = named(f, len(specs))

    def loss(*args):
        outs = [o for o in g(*args) if o.dtype.kind == "f"]
        weights = [np.cos(np.arange(o.size)).reshape(o.shape) for o in outs]
        return sum(tnp.sum(o.astype("float64") * w) for o, w in zip(outs, weights)) if outs else \
            tnp.sum(args[diff[0]] * 0)
    args = make_args(rng, specs)
    if refused(f, args, lambda: tj.jit(tj.grad(loss, argnums=diff), cache=False)(*args)):
        return
    got = tj.jit(tj.grad(loss, argnums=diff), cache=False)(*args)
    want = tj.jit(tj.grad(loss, argnums=diff), backend="reference")(*args)
    terms = sum(np.size(o) for o in run_numpy(f, args))        # (a gradient sums over the outputs' elements)
    agree(got, want, False, [np.ones(1)], "grad against the reference", source, terms)


@st.composite
def programs(draw, sym=False, dtypes=DTYPES):
    dtype = draw(st.sampled_from(dtypes))
    n = draw(st.sampled_from([1, 2, 3, 5, 17, 64, 65])) if sym else None
    p = Program(draw, dtype, sym)
    source = p.build(n)
    return source, p.args, p.exact, n


@fuzz_settings(30)
@given(programs(), st.integers(0, 2**32 - 1))
def test_jit_agrees_with_numpy_and_reference(program, seed):
    source, specs, exact, _ = program
    check_program(source, specs, exact, seed)


@fuzz_settings(25)
@given(programs(), st.integers(0, 2**32 - 1), st.integers(1, 3))
def test_vmap_agrees_with_numpy(program, seed, batch):
    source, specs, exact, _ = program
    check_vmap(source, specs, exact, seed, batch)


@fuzz_settings(15)
@given(programs(dtypes=["float32", "float64"]), st.integers(0, 2**32 - 1))
def test_grad_agrees_with_reference(program, seed):
    source, specs, _, _ = program
    check_grad(source, specs, seed)


@fuzz_settings(25)
@given(programs(sym=True), st.integers(0, 2**32 - 1), st.sampled_from([0, 1, 4, 33, 100]), st.booleans())
def test_symbolic_dims_agree_with_numpy(program, seed, n2, rows):
    source, specs, exact, n = program
    check_program(source, specs, exact, seed, n, n2, rows)


@pytest.mark.parametrize("n_in,n_out", [(256, 255), (257, 1)])
def test_generic_entry_at_its_limits(n_in, n_out):
    """Inputs of every kind the generic entry reads (arrays, 0-d arrays, NumPy scalars, Python floats and ints):
    256 of them and 255 outputs (a table of 512 pointers, its most), or 257 (one more: the module's own entry);
    each output a concatenate of two inputs; two calls on fresh inputs."""
    rng = np.random.default_rng(0)

    def program(M, *xs):
        return tuple(M.concatenate([M.atleast_1d(xs[j]), M.atleast_1d(xs[(j + 1) % n_in])]) for j in range(n_out))
    kinds = [lambda: rng.standard_normal(3), lambda: float(rng.standard_normal()), lambda: np.float64(rng.normal()),
             lambda: np.array(rng.standard_normal()), lambda: int(rng.integers(-9, 9))]
    jitted = tj.jit(lambda *xs: program(tnp, *xs), cache=False)
    which = rng.integers(0, len(kinds), n_in)
    for _ in range(2):
        args = [kinds[k]() for k in which]
        got, want = jitted(*args), program(np, *args)
        assert len(got) == n_out
        for g, w in zip(got, want):
            assert g.dtype == w.dtype
            np.testing.assert_array_equal(g, w)


@pytest.mark.parametrize("dtype", ["int8", "uint8", "int32", "uint32", "int64", "uint64"])
def test_scatter_indices_at_their_dtype_extremes(dtype):
    """Indices at their dtype's extremes, at -n, n - 1 and n: added and set (at distinct places) into zeros (the
    output's own buffer) and into an argument, each mode, as NumPy's at the indices that are in range."""
    info, n = np.iinfo(dtype), 5
    near = [info.min, info.max, info.min + 1, info.max - 1, 0, -1, n - 1, n, -n, n + 1, 2, 1]
    idx = np.array([c for c in near if info.min <= c <= info.max], dtype)
    at = np.where(idx.astype(np.int64) < 0, idx.astype(np.int64) + n, idx.astype(np.int64))
    distinct = np.array([k == list(at).index(p) for k, p in enumerate(at)])
    upd, base = np.arange(1.0, len(idx) + 1), np.arange(n) * 10.0

    def program(b, i, u):
        return [getattr(start.at[i[keep]], op)(u[keep], mode=mode) for start in (tnp.zeros(n), b)
                for op, keep in (("add", slice(None)), ("set", distinct)) for mode in ("drop", "fill", None)]
    got = tj.jit(program, cache=False)(base, idx, upd)
    inside = (at >= 0) & (at < n)
    for k, (start, op, keep) in enumerate((s, op, keep) for s in (np.zeros(n), base)
                                           for op, keep in (("add", np.ones(len(idx), bool)), ("set", distinct))
                                           for _ in range(3)):
        want = start.copy()
        if op == "add":
            np.add.at(want, at[keep & inside], upd[keep & inside])
        else:
            want[at[keep & inside]] = upd[keep & inside]
        np.testing.assert_array_equal(got[k], want, err_msg=f"{op} output {k}")


def test_large_transposed_inputs_through_copies_and_views():
    """Fortran-ordered inputs of 1 MiB or more run on code compiled for their layout (transposed_inputs): through
    concatenates along each axis, a stack, tile, reshapes into outputs and a scatter into it, on both layouts."""
    def program(M, z, i):
        return (M.concatenate([z, z[:5]], axis=0), M.concatenate([z, z[:, :5]], axis=1),
                M.concatenate([z.T, z.T[:5]], axis=0), M.stack([z, z[::-1]], axis=1), M.tile(z[:40], (2, 3)),
                z.reshape(-1), (z * 2).T.reshape(-1), SCATTER(M, z, i, 3.0, "set", None))
    rng = np.random.default_rng(0)
    jitted = tj.jit(lambda z, i: program(tnp, z, i), cache=False)
    for z in (np.asfortranarray(rng.standard_normal((600, 300))), rng.standard_normal((600, 300))):
        i = np.array([1, 5, -7], np.int32)
        for g, w in zip(jitted(z, i), program(np, z, i)):
            np.testing.assert_array_equal(g, w)
