"""Measures the accuracy of tracejit's compiled special-function kernels (the table in
tracejit/backend/specmath.py): max f64 error in ulp against mpmath (30 digits) on random arguments, max distance in
ulp from SciPy on dense grids including the tails, and max f32 error in f32 ulp against SciPy's float64 values.

    python scripts/measure_special_math.py [--mpmath-points N] [name ...]
"""
import argparse
import os
import sys

import mpmath as mp
import numpy as np
import scipy.special as sc

import tracejit as tj
from tracejit.scipy import special as S

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests"))
from test_specmath import REFERENCE  # the mpmath references the tests use

# name: (tracejit, SciPy, mpmath, grid from u = 10**uniform)
FUNCTIONS = {
    "erf": (S.erf, sc.erf, REFERENCE["erf"], lambda r, n: np.concatenate([r.uniform(-6, 6, n), r.choice([-1, 1], n) * 10 ** r.uniform(-300, 0.8, n)])),
    "erfc": (S.erfc, sc.erfc, REFERENCE["erfc"], lambda r, n: np.concatenate([r.uniform(-6, 27.2, n), r.uniform(-1, 1, n)])),
    "erfcx": (S.erfcx, sc.erfcx, REFERENCE["erfcx"], lambda r, n: np.concatenate([r.uniform(-26, 50, n), 10 ** r.uniform(-300, 300, n)])),
    "erfinv": (S.erfinv, sc.erfinv, REFERENCE["erf_inv"],
               lambda r, n: np.concatenate([r.uniform(-1, 1, n), 1 - 10 ** r.uniform(-16, 0, n)])),
    "ndtr": (S.ndtr, sc.ndtr, REFERENCE["ndtr"], lambda r, n: r.uniform(-38, 9, 2 * n)),
    "ndtri": (S.ndtri, sc.ndtri, REFERENCE["ndtri"],
              lambda r, n: np.concatenate([r.uniform(0, 1, n), 10 ** r.uniform(-300, 0, n)])),
    "log_ndtr": (S.log_ndtr, sc.log_ndtr, REFERENCE["log_ndtr"], lambda r, n: np.concatenate([r.uniform(-60, 40, n), -10 ** r.uniform(1, 150, n)])),
    "gammaln": (S.gammaln, sc.gammaln, REFERENCE["lgamma"], lambda r, n: np.concatenate([r.uniform(0, 30, n), 10 ** r.uniform(-300, 305, n)])),
    "digamma": (S.digamma, sc.digamma, REFERENCE["digamma"], lambda r, n: np.concatenate([r.uniform(0, 30, n), 10 ** r.uniform(-300, 305, n)])),
    "gamma": (S.gamma, sc.gamma, REFERENCE["gamma"], lambda r, n: np.concatenate([r.uniform(-170, 171, n), 10 ** r.uniform(-300, 0, n)])),
    "i0e": (S.i0e, sc.i0e, REFERENCE["i0e"], lambda r, n: np.concatenate([r.uniform(-40, 40, n), r.choice([-1, 1], n) * 10 ** r.uniform(-300, 300, n)])),
    "i1e": (S.i1e, sc.i1e, REFERENCE["i1e"], lambda r, n: np.concatenate([r.uniform(-40, 40, n), r.choice([-1, 1], n) * 10 ** r.uniform(-300, 300, n)])),
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
    parser.add_argument("names", nargs="*", help="the functions to measure (default: all)")
    args = parser.parse_args()
    rng = np.random.default_rng(0)
    print(f"{'function':10s} {'f64 ulp (mpmath)':>17s} {'f64 ulp (SciPy)':>16s} {'f32 ulp (SciPy)':>16s}")
    for name in args.names or FUNCTIONS:
        ours, scipy_fn, reference, draw = FUNCTIONS[name]
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
