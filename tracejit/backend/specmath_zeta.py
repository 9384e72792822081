"""specmath's Hurwitz zeta(s, q) = sum_k (q + k)**-s, as SciPy's (and so polygamma, written on it).

Euler-Maclaurin: ten direct terms (q + k)**-s, the integral of the rest from a = q + 10, a**(1-s) / (s - 1), half
its first term and the Bernoulli corrections B_2j s (s+1)...(s+2j-2) / (2j)! a**(-s-2j+1) while they shrink. Each
power is exp(-s log b), log b a double-double; the direct terms are a loop of ten passes (Body.repeat), whose code
compiles once: the library's first compile took 95 ms unrolled, 38 so (JAX's first call 57). That code for
q >= -1 is the vector math library's function (libcalls) on every lane of a vector; a vector with a lane below -1
goes lane by lane to the scalar definition, whose loop (Body.loop) first adds the terms up to q + k >= -1 (for
integer s; SciPy's range goes down to q = -1e4). 1e5 trigamma values (polygamma(1, x)) took 83 ms as NumPy
passes, 2.8 so (JAX 8.1).

Special values are SciPy's: inf at s = 1 and at q = 0 or a negative integer, NaN for s < 1 and for negative q
with a non-integer s, zeta(s, inf) = 0; zeta(inf, q) is inf below q = 1, 1 at 1 and NaN above (SciPy's).
"""
from .specmath_base import INF as _INF
from .specmath_base import pick as _pick

_NAN = float("nan")
_DIRECT = 10
_LOWEST = -1e4      # the least q computed (SciPy's range)
BERNOULLI_2K = (1 / 6, -1 / 30, 1 / 42, -1 / 30, 5 / 66, -691 / 2730, 7 / 6, -3617 / 510, 43867 / 798,
                -174611 / 330, 854513 / 138, -236364091 / 2730)


def _power(f, b, s):
    """b**-s for b != 0: exp(-s log|b|), negated for b < 0 where s is odd (s an integer there)."""
    hi, lo = f.log_dd(f.abs(b))
    p, e = f.two_prod(f.neg(s), hi)
    far = f.cmp("ogt", f.abs(p), 2000.0)       # exp is 0 or inf there (and its low part need not be small)
    magnitude = f.exp(f.sel(far, f.call("copysign", 2000.0, p), p), f.sel(far, 0.0, f.fma(f.neg(s), lo, e)))
    odd = f.cmp("une", f.call("floor", f.mul(s, 0.5)), f.mul(s, 0.5))
    return f.sel(f.both(f.cmp("olt", b, 0.0), odd), f.neg(magnitude), magnitude)


def _euler_maclaurin(f, s, q):
    """zeta(s, q) for q >= -1 away from the poles."""
    def term(state):
        s, q, k, total = state
        return [s, q, f.add(k, 1.0), f.add(total, _power(f, f.add(q, k), s))]
    total = f.repeat([s, q, 0.0, 0.0], term, _DIRECT)[-1]
    a = f.add(q, float(_DIRECT))
    a_s = _power(f, a, s)
    total = f.add(total, f.fma(a_s, 0.5, f.div(f.mul(a, a_s), f.sub(s, 1.0))))
    factor, scale, previous = f.div(f.mul(s, a_s), a), 1.0, _INF
    inverse_a2 = f.div(1.0, f.mul(a, a))
    for j, b2j in enumerate(BERNOULLI_2K, 1):
        scale /= (2 * j - 1) * 2 * j
        term = f.mul(factor, b2j * scale)
        use = f.cmp("olt", f.abs(term), previous)
        total = f.add(total, f.sel(use, term, 0.0))
        previous = f.sel(use, f.abs(term), 0.0)
        factor = f.mul(factor, f.mul(f.mul(f.add(s, 2 * j - 1.0), f.add(s, 2.0 * j)), inverse_a2))
    return total


def _computed(f, s, q):
    """Where the series applies: s > 1, q above SciPy's bound and not a pole, and q >= 0 unless s is an integer."""
    q_fraction, s_integer = f.cmp("une", f.call("floor", q), q), f.cmp("oeq", f.call("floor", s), s)
    ok = f.both(f.cmp("ogt", s, 1.0), f.cmp("ogt", q, _LOWEST))
    ok = f.both(ok, f.either(f.cmp("ogt", q, 0.0), q_fraction))
    return f.both(ok, f.either(f.cmp("oge", q, 0.0), s_integer))


def shifted(f, s, q):
    """The lanes that need the scalar loop: computed ones with q < -1."""
    return f.both(_computed(f, s, q), f.cmp("olt", q, -1.0))


def zeta(f, s, q, shift=True):
    """zeta(s, q) with SciPy's special values; without shift, only for lanes not `shifted`."""
    ok = _computed(f, s, q)
    start = 0.0
    if shift:
        def step(state):
            s, q, total = state
            total = f.add(total, _power(f, q, s))
            q = f.add(q, 1.0)
            return [s, q, total], f.cmp("olt", q, -1.0)
        active = f.both(ok, f.cmp("olt", q, -1.0))
        _, moved, total = f.loop([s, q, 0.0], step, int(-_LOWEST) + 1, active)
        q, start = f.sel(active, moved, q), f.sel(active, total, 0.0)
    value = f.sel(ok, f.add(start, _euler_maclaurin(f, s, q)), _NAN)
    pole = f.either(f.cmp("oeq", s, 1.0),
                    f.both(f.cmp("ogt", s, 1.0), f.both(f.cmp("ole", q, 0.0), f.cmp("oeq", f.call("floor", q), q))))
    value = f.sel(pole, _INF, value)
    value = f.sel(f.both(ok, f.cmp("oeq", q, _INF)), 0.0, value)
    at_inf = _pick(f, [f.cmp("olt", q, 1.0), f.cmp("oeq", q, 1.0)], [_INF, 1.0, _NAN])     # SciPy's
    return f.sel(f.cmp("oeq", s, _INF), at_inf, value)
