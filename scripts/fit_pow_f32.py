"""Fits the two polynomials of tracejit/backend/mathlib_pow.py (float32 pow in f32 arithmetic) and prints them with
their max error (log2 of it): least squares on Chebyshev nodes against mpmath, weighted by what an error costs
the result, the coefficients rounded to f32 one at a time from the highest and the others refitted after each.

    python scripts/fit_pow_f32.py
"""
import mpmath as mp
import numpy as np

mp.mp.dps = 60
K = 2 / mp.log(2)


def fit(func, lo, hi, degree, weight, n=2000):
    x = (lo + hi) / 2 + (hi - lo) / 2 * np.cos(np.pi * (np.arange(n) + 0.5) / n)
    y = np.array([float(func(mp.mpf(float(v)))) for v in x])
    w = weight(x)
    fixed = {}
    for j in range(degree, -1, -1):
        rest = y - sum(c * x**k for k, c in fixed.items())
        c = np.linalg.lstsq(np.stack([x**k for k in range(j + 1)], 1) * w[:, None], rest * w, rcond=None)[0]
        fixed[j] = float(np.float32(c[j]))
    coefs = tuple(fixed[k] for k in range(degree + 1))
    return coefs, np.log2(np.max(np.abs(sum(c * x**k for k, c in enumerate(coefs)) - y) * w))


def log_tail(z):
    """Q(z) with log2(m) = K*s + K*s**3/3 + s**3 * z * Q(z), z = s**2 (the error of log2(m) relative to K*s is
    z**2 * dQ / K)."""
    s = mp.sqrt(z)
    return K / 5 if z == 0 else K * (mp.atanh(s) / s - 1 - z / 3) / z**2


def exp2_tail(r):
    """P(r) with 2**r = 1 + r*ln2 + r**2 * P(r) (error relative to 2**r: r**2 * dP / 2**r)."""
    return mp.log(2)**2 / 2 if r == 0 else (mp.power(2, r) - 1 - r * mp.log(2)) / r**2


def main():
    zmax = float(((mp.sqrt(2) - 1) / (mp.sqrt(2) + 1))**2) * 1.001
    for name, func, lo, hi, degree, weight in (("log2", log_tail, 0.0, zmax, 2, lambda z: z**2 / float(K)),
                                               ("exp2", exp2_tail, -0.5, 0.5, 4, lambda r: r**2 / 2.0**r)):
        coefs, error = fit(func, lo, hi, degree, weight)
        print(f"    # 2**{error:.1f}\n    {name!r}: {coefs!r},")


if __name__ == "__main__":
    main()
