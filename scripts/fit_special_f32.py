"""Fits the f32 polynomial sets of tracejit/backend/specmath_f32.py and prints them (with each one's max error in
units of 2**-24: relative to the function, to 1 + R for the *_excess sets R, absolute for erf_big): least squares on Chebyshev nodes against mpmath, the coefficients rounded
to f32 one at a time from the highest, the others refitted after each; the constant term kept as a pair of f32.

    python scripts/fit_special_f32.py
"""
import mpmath as mp
import numpy as np

from tracejit.backend.specmath_f32 import ERFINV_PIECES

mp.mp.dps = 90


def fit(func, lo, hi, arg, degree, weight, n=800):
    """(coefficients, max error) of func(x) ~ sum c_k arg(x)**k over [lo, hi], the error times weight(func(x))."""
    x = (lo + hi) / 2 + (hi - lo) / 2 * np.cos(np.pi * (np.arange(n) + 0.5) / n)
    y = np.array([float(func(mp.mpf(float(v)))) for v in x])
    z, w = arg(x), weight(y)
    fixed = {}
    for j in range(degree, -1, -1):
        free = range(j + 1)
        rest = y - sum(c * z**k for k, c in fixed.items())
        c = np.linalg.lstsq(np.stack([z**k for k in free], 1) * w[:, None], rest * w, rcond=None)[0]
        fixed[j] = c[j] if j == 0 else float(np.float32(c[j]))
    coefs = [fixed[k] for k in range(degree + 1)]
    hi0 = float(np.float32(coefs[0]))
    coefs[0] = hi0 + float(np.float32(coefs[0] - hi0))
    error = np.max(np.abs(sum(c * z**k for k, c in enumerate(coefs)) - y) * w)
    return tuple(coefs), error / 2.0**-24


def erfcx(u):
    with mp.workdps(120):
        return mp.exp(u * u) * mp.erfc(u)


def erfcinv_of_s(scale):
    return lambda s: scale * mp.erfinv(1 - mp.exp(-s * s))


def main():
    sets = {
        "erfcx_low": (lambda z: (4 + 4 * (z + 0.5) / (1.5 - z)) * erfcx(4 * (z + 0.5) / (1.5 - z)), -0.5, 0.5,
                      lambda z: z, 10),
        "erfcx_high": (lambda z: 8 / (z + 0.5) * erfcx(8 / (z + 0.5) - 4) if z > -0.5 else 1 / mp.sqrt(mp.pi),
                       -0.5, 0.5, lambda z: z, 10),
        "erf_excess": (lambda x: mp.erf(x) / x - 1 if x else 2 / mp.sqrt(mp.pi) - 1, 0, 1, lambda x: x * x, 6),
        "erf_big": (mp.erf, 1, 4, lambda x: x - 2.5, 14),
    }
    for name, scale in (("erfinv", 1), ("ndtri", mp.sqrt(2))):
        sets[f"{name}_excess"] = (lambda y, scale=scale: scale * mp.erfinv(y) / y - 1 if y else
                                  scale * mp.sqrt(mp.pi) / 2 - 1, 0, 0.5, lambda y: y * y, 6)
        start = float(mp.sqrt(mp.log(2)))
        for i, ((end, centre), back) in enumerate(zip(ERFINV_PIECES, (0, 0, 0.05)), 1):
            sets[f"{name}_tail{i}"] = (erfcinv_of_s(scale), start - back, min(end, 10.2), lambda s, c=centre: s - c, 9)
            start = end
    for name, (func, lo, hi, arg, degree) in sets.items():
        weight = {"erf_big": np.ones_like}.get(name, lambda y, excess="excess" in name: 1 / np.abs(1 + y if excess else y))
        coefs, error = fit(func, lo, hi, arg, degree, weight)
        print(f"    # max error {error:.2f}\n    {name!r}: {coefs!r},")


if __name__ == "__main__":
    main()
