"""Measures the accuracy of tracejit's compiled special-function kernels (the table in
tracejit/backend/specmath.py): max f64 error in ulp against mpmath (30 digits) on random arguments, max distance in
ulp from SciPy on dense grids including the tails, and max f32 error in f32 ulp against SciPy's float64 values.

    python scripts/measure_special_math.py [--mpmath-points N]
"""
import argparse

import mpmath as mp
import numpy as np
import scipy.special as sc

import tracejit as tj
from tracejit.scipy import special as S


def _erfcinv(q):
    z = mp.sqrt(-mp.log(q))
    for _ in range(60):
        step = (mp.log(mp.erfc(z)) - mp.log(q)) * mp.erfc(z) * mp.sqrt(mp.pi) / -2 * mp.exp(z * z)
        z -= step
        if abs(step) < 1e-24 * z:
            break
    return z


def _erfcx(v):
    if v > 1e7:
        return (1 - 1 / (2 * v * v) + 3 / (4 * v**4)) / (mp.sqrt(mp.pi) * v)
    with mp.workdps(30 + int(2 * max(0, mp.log10(abs(v) + 1)))):
        return +(mp.exp(v * v) * mp.erfc(v))


def _log_ndtr(v):
    if v >= 0:
        return mp.log1p(-mp.ncdf(-v))
    if v > -1e4:
        return mp.log(mp.ncdf(v))
    return -v * v / 2 - mp.log(-v * mp.sqrt(2 * mp.pi)) + mp.log1p(-1 / v**2 + 3 / v**4)


# name: (tracejit, SciPy, mpmath, grid from u = 10**uniform)
FUNCTIONS = {
    "erf": (S.erf, sc.erf, mp.erf, lambda r, n: np.concatenate([r.uniform(-6, 6, n), r.choice([-1, 1], n) * 10 ** r.uniform(-300, 0.8, n)])),
    "erfc": (S.erfc, sc.erfc, mp.erfc, lambda r, n: np.concatenate([r.uniform(-6, 27.2, n), r.uniform(-1, 1, n)])),
    "erfcx": (S.erfcx, sc.erfcx, _erfcx, lambda r, n: np.concatenate([r.uniform(-26, 50, n), 10 ** r.uniform(-300, 300, n)])),
    "erfinv": (S.erfinv, sc.erfinv, lambda y: mp.sign(y) * _erfcinv(1 - abs(y)) if abs(y) > 0.5 else mp.erfinv(y),
               lambda r, n: np.concatenate([r.uniform(-1, 1, n), 1 - 10 ** r.uniform(-16, 0, n)])),
    "ndtr": (S.ndtr, sc.ndtr, mp.ncdf, lambda r, n: r.uniform(-38, 9, 2 * n)),
    "ndtri": (S.ndtri, sc.ndtri, lambda p: -mp.sqrt(2) * _erfcinv(2 * p) if p < 0.5 else mp.sqrt(2) * _erfcinv(2 - 2 * p),
              lambda r, n: np.concatenate([r.uniform(0, 1, n), 10 ** r.uniform(-300, 0, n)])),
    "log_ndtr": (S.log_ndtr, sc.log_ndtr, _log_ndtr, lambda r, n: np.concatenate([r.uniform(-60, 40, n), -10 ** r.uniform(1, 150, n)])),
    "gammaln": (S.gammaln, sc.gammaln, mp.loggamma, lambda r, n: np.concatenate([r.uniform(0, 30, n), 10 ** r.uniform(-300, 305, n)])),
    "digamma": (S.digamma, sc.digamma, mp.digamma, lambda r, n: np.concatenate([r.uniform(0, 30, n), 10 ** r.uniform(-300, 305, n)])),
    "gamma": (S.gamma, sc.gamma, mp.gamma, lambda r, n: np.concatenate([r.uniform(-170, 171, n), 10 ** r.uniform(-300, 0, n)])),
}


def ulp_against_mpmath(y, x, reference):
    worst = 0.0
    with mp.workdps(30):
        for xi, yi in zip(x, y):
            ref = reference(mp.mpf(float(xi)))
            hi = float(ref)
            if np.isfinite(hi) and abs(hi) >= np.finfo(np.float64).tiny:
                worst = max(worst, float(abs(mp.mpf(float(yi)) - ref)) / np.spacing(abs(hi)))
    return worst


def ulp_from_scipy(y, want):
    """Where SciPy's result is a normal float."""
    normal = np.isfinite(want) & (np.abs(want) >= np.finfo(np.float64).tiny)
    return float(np.max(np.abs(y[normal] - want[normal]) / np.spacing(np.abs(want[normal])), initial=0))


def f32_ulp(y, want):
    want32 = want.astype(np.float32)
    ok = np.isfinite(want32) & (want32 != 0)
    return float(np.max(np.abs(y[ok].astype(np.float64) - want[ok]) / np.spacing(np.abs(want32[ok])), initial=0))


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--mpmath-points", type=int, default=5000)
    parser.add_argument("--grid-points", type=int, default=500_000)
    args = parser.parse_args()
    rng = np.random.default_rng(0)
    print(f"{'function':10s} {'f64 ulp (mpmath)':>17s} {'f64 ulp (SciPy)':>16s} {'f32 ulp (SciPy)':>16s}")
    for name, (ours, scipy_fn, reference, draw) in FUNCTIONS.items():
        x = draw(rng, args.mpmath_points // 2)
        exact = ulp_against_mpmath(tj.jit(ours)(x), x, reference)
        grid = draw(rng, args.grid_points // 2)
        with np.errstate(all="ignore"):
            versus_scipy = ulp_from_scipy(tj.jit(ours)(grid), scipy_fn(grid))
            grid32 = grid.astype(np.float32)
            single = f32_ulp(tj.jit(ours)(grid32), scipy_fn(grid32.astype(np.float64)))
        print(f"{name:10s} {exact:17.2f} {versus_scipy:16.3g} {single:16.2f}")


if __name__ == "__main__":
    main()
