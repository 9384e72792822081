"""`ArrayBody`: mathlib_body.Body's instruction set executed on NumPy float64 arrays, so that one kernel written
for Body (tracejit.backend.specmath) is both the compiled code and the NumPy reference impl of its primitive.

The arithmetic is IEEE double as in the compiled code, but fma is not fused (one rounding more: long double
would cost ten times as much); the exact products and sums the kernels rely on (two_prod, two_sum) are exact here
too, in long double (x87's 64-bit significand). mathlib's functions (exp, log ...) are NumPy's, in long double
where the compiled code keeps a double-double. Results agree with the compiled ones to a few ulp, not bit for bit.
"""
import numpy as np

_LD = np.longdouble


def _ordered(pred, a, b):
    """LLVM's fcmp predicates: o* hold only when neither operand is NaN, u* also when one is."""
    if pred in ("uno", "ord"):
        nan = np.isnan(a) | np.isnan(b)
        return nan if pred == "uno" else ~nan
    rel = {"eq": np.equal, "ne": np.not_equal, "lt": np.less, "le": np.less_equal, "gt": np.greater,
           "ge": np.greater_equal}[pred[1:]](a, b)
    if pred in ("une", "olt", "ole", "ogt", "oge", "oeq"):      # NumPy's comparisons already are these
        return rel
    nan = np.isnan(a) | np.isnan(b)
    return (rel & ~nan) if pred[0] == "o" else (rel | nan)


_CALLS = {"floor": np.floor, "ceil": np.ceil, "sqrt": np.sqrt, "fabs": np.abs, "copysign": np.copysign,
          "roundeven": np.rint, "trunc": np.trunc}


class ArrayBody:
    """Computes in double; operands are float64 arrays (or Python floats), conditions bool arrays."""

    ty = "double"

    def ext(self, x, ty):
        return np.asarray(x, np.float64)

    def add(self, a, b):
        return np.add(a, b)

    def sub(self, a, b):
        return np.subtract(a, b)

    def mul(self, a, b):
        return np.multiply(a, b)

    def div(self, a, b):
        return np.divide(a, b)

    def neg(self, a):
        return np.negative(a)

    def call(self, fn, *args):
        return _CALLS[fn](*args)

    def fma(self, a, b, c):
        return np.add(np.multiply(a, b), c)

    def abs(self, a):
        return np.abs(a)

    def cmp(self, pred, a, b):
        return _ordered(pred, np.asarray(a), np.asarray(b))

    def sel(self, cond, a, b):
        return np.where(cond, a, b)

    def min(self, a, c):
        return np.where(np.less(a, c), a, c)

    def max(self, a, c):
        return np.where(np.greater(a, c), a, c)

    def both(self, c1, c2):
        return c1 & c2

    def either(self, c1, c2):
        return c1 | c2

    def poly(self, t, coefs):
        acc = np.broadcast_to(coefs[-1], np.shape(t))
        for c in reversed(coefs[:-1]):
            acc = acc * t + c
        return acc

    def two_sum(self, a, b):
        s = np.add(a, b)
        return s, (_LD(a) + _LD(b) - _LD(s)).astype(np.float64)

    def two_prod(self, a, b):
        p = np.multiply(a, b)
        return p, (_LD(a) * _LD(b) - _LD(p)).astype(np.float64)

    def loop(self, state, step, limit, active):
        """Body.loop on arrays: each active element's state steps until its go fails (at most `limit` times). An
        element's state is recorded when it finishes; the arrays shrink to the unfinished elements once a tenth
        of them finished (a finished element steps on meanwhile, its later values ignored)."""
        shape = np.broadcast_shapes(np.shape(active), *(np.shape(v) for v in state))
        out = [np.array(np.broadcast_to(v, shape), np.float64).reshape(-1) for v in state]
        at = np.flatnonzero(np.broadcast_to(active, shape))
        current, live, dead = [v[at] for v in out], np.ones(at.size, bool), 0
        for _ in range(limit):
            if not at.size:
                break
            new, go = step(current)
            changed = [v is not c for v, c in zip(new, current)]       # (the step passes invariants through)
            current = [np.broadcast_to(v, at.shape) for v in new]
            finished = np.flatnonzero(live & ~np.broadcast_to(go, at.shape))
            if finished.size:
                for o, v, c in zip(out, current, changed):
                    if c:
                        o[at[finished]] = v[finished]
                live[finished] = False
                dead += finished.size
                if dead * 10 >= at.size:
                    keep = np.flatnonzero(live)
                    at, live, current, dead = at[keep], live[keep], [v[keep] for v in current], 0
        for o, v in zip(out, current):
            o[at[live]] = v[live]
        return [o.reshape(shape) for o in out]

    def repeat(self, state, step, count):
        for _ in range(count):
            state = step(state)
        return state

    # mathlib's functions
    def exp(self, x, lo=None):
        return np.exp(np.asarray(x, _LD) + (0 if lo is None else _LD(lo))).astype(np.float64)

    def log(self, x):
        return np.log(x)

    def log1p(self, x):
        return np.log1p(x)

    def log_dd(self, x):
        full = np.log(np.asarray(x, _LD))
        hi = full.astype(np.float64)
        return hi, np.where(np.isfinite(hi), full - hi, 0).astype(np.float64)
