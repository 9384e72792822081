"""Every registered primitive (tracejit.primitives.ALL) from one table of examples, three ways: its jvp against
finite differences, its batching rule against a loop over examples (vmap), and its compiled form against its
NumPy impl (jit against eval_ir). A primitive without examples fails all three, so none goes unchecked; the
elementwise ones are also compiled in every dtype they accept, on special values (inf, nan, -0.0, extremes)."""
import numpy as np
import pytest
from test_backend import ALL_DTYPES, accepts, assert_same, check, compiled_and_reference, sample

import tracejit as tj
import tracejit.numpy as tnp
from tracejit import lax, vmap
from tracejit.core.ir import check_ir
from tracejit.core.trace import bind
from tracejit.primitives import ALL
from tracejit.scipy import special
from tracejit.test_util import check_jvp
from tracejit.transforms.vmap import vmap_ir

B = 3
rng = np.random.default_rng(0)


def f64(*shape):
    return rng.normal(size=shape)


def f32(*shape):
    return rng.normal(size=shape).astype(np.float32)


def pos(*shape):
    return rng.uniform(0.5, 2.0, size=shape)


def ints(lo, hi, *shape):
    """An int example whose batched copies are drawn from [lo, hi]."""
    return np.full(shape, lo, np.int64) if lo == hi else rng.integers(lo, hi + 1, size=shape)


def bools(*shape):
    return rng.random(size=shape) < 0.5


def c128(*shape):
    return rng.normal(size=shape) + 1j * rng.normal(size=shape)


def c64(*shape):
    return c128(*shape).astype(np.complex64)


def applied(name, **params):
    """The primitive `name` bound directly."""
    return lambda *xs: bind(ALL[name], *xs, **params)


def _linear_solve(a, b, symmetric=False):
    """x with m x = b, m = diag(a) + 0.1 tril(1) (+ its transpose when symmetric): matvec closes over a, so x varies
    with a and b; the solves are exact (LAPACK), so finite differences see the implicit derivative."""
    m = tnp.diag(a) + 0.1 * tnp.tril(tnp.ones((a.shape[0],) * 2))
    m = m + m.T if symmetric else m
    return lax.custom_linear_solve(lambda v: m @ v, b, lambda mv, r: tnp.linalg.solve(m, r),
                                   None if symmetric else (lambda vm, r: tnp.linalg.solve(m.T, r)),
                                   symmetric=symmetric)


WINDOW = {"window_dimensions": (2, 2), "window_strides": (1, 1), "padding": ((0, 0), (1, 0)), "base_dilation": (1, 1),
          "window_dilation": (1, 1)}

# name: [(function, example arguments)]: each function applies the primitive, spelled as users write it where
# tnp or lax has it. Batching draws B fresh arguments like each example (ints from its range, positives stay
# positive). A third element, (arguments, tangents) -> output tangent, replaces finite differences where the
# derivative is not the numerical one by definition.
EXAMPLES = {
    # elementwise
    "neg": [(lambda x: -x, [f64(3, 4)])],
    "exp": [(tnp.exp, [f32(3, 4)])],
    "log": [(tnp.log, [pos(3, 4)])],
    "log1p": [(tnp.log1p, [pos(4)])],
    "expm1": [(tnp.expm1, [f64(4)])],
    "sin": [(tnp.sin, [f64(2, 3)])],
    "cos": [(tnp.cos, [f64(2, 3)])],
    "tan": [(tnp.tan, [f64(2, 3)])],
    "tanh": [(tnp.tanh, [f64(2, 3)])],
    "logistic": [(tj.nn.sigmoid, [f64(2, 3)])],
    "sqrt": [(tnp.sqrt, [pos(3)])],
    "rsqrt": [(lax.rsqrt, [pos(3)])],
    "abs": [(tnp.abs, [f64(3)])],
    "sign": [(tnp.sign, [f64(3)])],
    "floor": [(tnp.floor, [f64(3)])],
    "ceil": [(tnp.ceil, [f64(3)])],
    "round": [(lambda x: lax.round(x * 3), [f64(3)])],
    "not": [(tnp.invert, [ints(-5, 5, 2, 3)]), (tnp.logical_not, [bools(4)])],
    "is_finite": [(lambda x: tnp.isfinite(tnp.log(x)), [f64(4)])],
    "stop_gradient": [(tj.stop_gradient, [f64(3)], lambda args, tangents: np.zeros(3))],
    "integer_pow": [(lambda x: lax.integer_pow(x, 3), [f64(3)])],
    "asin": [(tnp.arcsin, [f64(3, 2) * 0.5])],
    "acos": [(tnp.arccos, [f64(3, 2) * 0.5])],
    "atan": [(tnp.arctan, [f64(3, 2)])],
    "sinh": [(tnp.sinh, [f64(3, 2)])],
    "cosh": [(tnp.cosh, [f64(3, 2)])],
    "asinh": [(tnp.arcsinh, [f64(3, 2)])],
    "acosh": [(lambda x: tnp.arccosh(x + 1.0), [pos(3, 2)])],
    "atanh": [(tnp.arctanh, [f64(3, 2) * 0.5])],
    "log2": [(tnp.log2, [pos(3, 2)])],
    "log10": [(tnp.log10, [pos(3, 2)])],
    "exp2": [(tnp.exp2, [f64(3, 2)])],
    "cbrt": [(tnp.cbrt, [pos(3, 2)])],
    "add": [(lambda x, y: x + y, [f64(3, 4), f64(4)]), (lambda x, y: x + y, [f64(3, 4), f64()])],
    "sub": [(lax.sub, [f64(3, 4), f64(3, 4)])],
    "mul": [(lambda x, y: x * y * 2.0, [f32(2, 3), f32(2, 3)])],
    "div": [(lambda x, y: x / y, [f64(3), pos(3)])],
    "rem": [(lax.rem, [f64(3), pos(3)]), (lax.rem, [ints(-9, 9, 4), ints(1, 4, 4)])],
    "pow": [(lax.pow, [pos(3), f64(3)])],
    "max": [(tnp.maximum, [f64(2, 3), f64(3)])],
    "min": [(tnp.minimum, [f64(2, 3), f64(2, 3)])],
    "and": [(tnp.bitwise_and, [ints(0, 9, 3), ints(0, 9, 3)])],
    "shift_left": [(tnp.left_shift, [ints(-9, 9, 4), ints(0, 70, 4)]),
                   (lax.shift_left, [ints(0, 255, 3).astype(np.uint8), ints(0, 9, 3).astype(np.uint8)])],
    "shift_right_arithmetic": [(tnp.right_shift, [ints(-99, 99, 4), ints(0, 70, 4)])],
    "shift_right_logical": [(lax.shift_right_logical, [ints(-99, 99, 4), ints(0, 70, 4)]),
                            (tnp.right_shift, [ints(0, 60000, 3).astype(np.uint16), ints(0, 20, 3).astype(np.uint16)])],
    "population_count": [(lax.population_count, [ints(-99, 99, 4)])],
    "clz": [(lax.clz, [ints(-99, 99, 4).astype(np.int16)])],
    "or": [(tnp.logical_or, [bools(3), bools(3)])],
    "xor": [(tnp.bitwise_xor, [ints(0, 9, 3), ints(0, 9, 3)])],
    "eq": [(lambda x, y: x == y, [ints(0, 2, 4), ints(0, 2, 4)])],
    "ne": [(lambda x, y: x != y, [ints(0, 2, 4), ints(0, 2, 4)])],
    "lt": [(lambda x, y: x < y, [f64(4), f64(4)])],
    "le": [(lambda x, y: x <= y, [f64(4), f64()])],
    "gt": [(lambda x, y: x > y, [f64(2, 4), f64(4)])],
    "ge": [(lambda x: x >= 0.5, [f64(4)])],
    "atan2": [(tnp.arctan2, [f64(3, 2), f64(3, 2)])],
    "hypot": [(tnp.hypot, [f64(3, 2), f64(3, 2)])],
    "select_n": [(lambda p, x, y: tnp.where(p > 0, x, y), [f64(3, 2), f64(3, 2), f64(2)]),
                 (lambda p, x, y: lax.select(p > 0, x, y), [f64(), f64(3), f64(3)]),
                 (lambda p: tnp.where(p > 0, 1.0, -1.0), [f64()])],
    "clamp": [(lambda lo, x: lax.clamp(lo, x, 1.0), [f64(), f64(4)]),
              (lambda lo: lax.clamp(lo, 0.5, 1.0), [f64()]),
              (lambda lo, x, hi: lax.clamp(lo, x, hi), [f64(4) - 1, f64(4), f64(4) + 1])],
    "fma": [(applied("fma"), [f64(3, 4), f64(3, 4), f64(3, 4)]), (applied("fma"), [f64(), f64(4), f64()])],
    "threefry2x32": [(applied("threefry2x32", output="pair"), [ints(0, 2 ** 32 - 1).astype(np.uint32),
                                                              ints(0, 2 ** 32 - 1).astype(np.uint32),
                                                              ints(0, 9, 3).astype(np.uint32),
                                                              ints(0, 2 ** 32 - 1, 3).astype(np.uint32)]),
                     (applied("threefry2x32", output="xor"), [ints(0, 2 ** 32 - 1, 2, 3).astype(np.uint32)] * 4)],
    "real": [(tnp.real, [c128(3, 2)]), (lambda z: z.real * 2, [c64(4)])],
    "imag": [(tnp.imag, [c128(3, 2)]), (lambda z: z.imag * 2, [c64(4)])],
    "conj": [(tnp.conj, [c128(3, 2)]), (lambda z: z.conj() * z, [c64(4)])],
    "complex": [(lax.complex, [f64(3, 2), f64(3, 2)]), (lambda x, y: lax.complex(x, y) * 1j, [f32(4), f32()])],
    "bitcast_convert_type": [(lambda x: lax.bitcast_convert_type(x, np.int64), [f64(3)]),
                             (lambda x: lax.bitcast_convert_type(x, np.uint8), [f32(2, 3)]),
                             (lambda x: lax.bitcast_convert_type(x, np.float32), [ints(0, 255, 3, 4).astype(np.uint8)])],
    "convert_element_type": [(lambda x: lax.convert_element_type(x * 3, np.int32), [f64(3)]),
                             (lambda x: lax.convert_element_type(x, np.float64), [f32(3)])],
    # structural
    "broadcast_in_dim": [(lambda x: lax.broadcast_in_dim(x, (2, 3, 4), (0, 2)), [f64(2, 4)]),
                         (lambda x: lax.broadcast_in_dim(x, (2, 3), ()), [f64()])],
    "reshape": [(lambda x: tnp.reshape(x, (4, 3)), [f64(2, 6)])],
    "transpose": [(lambda x: tnp.transpose(x, (2, 0, 1)), [f64(2, 3, 4)])],
    "squeeze": [(lambda x: lax.squeeze(x, (0, 2)), [f64(1, 3, 1, 2)])],
    "expand_dims": [(lambda x: lax.expand_dims(x, (0, 3)), [f64(2, 3)])],
    "rev": [(lambda x: lax.rev(x, (1,)), [f64(2, 3)])],
    "slice": [(lambda x: lax.slice(x, (0, 1), (3, 4), (2, 1)), [f64(3, 4)])],
    "pad": [(lambda x: lax.pad(x, 0.5, ((1, 2, 1), (0, -1, 0))), [f64(2, 3)]),
            (lambda x, v: lax.pad(x, v, ((1, 0, 0), (2, 1, 1))), [f64(2, 3), f64()])],
    "concatenate": [(lambda x, y: tnp.concatenate([x, y, x], axis=1), [f64(2, 3), f64(2, 1)])],
    "iota": [(lambda x: x + lax.broadcasted_iota(np.float64, (2, 3), 1), [f64(2, 3)])],
    "dim_size": [(lambda x: x * applied("dim_size", dim=3)(), [f64(2, 3)])],
    # reductions
    "reduce_sum": [(lambda x: tnp.sum(x, axis=(0, 2)), [f64(2, 3, 4)])],
    "reduce_max": [(lambda x: tnp.max(x, axis=1), [f64(2, 3, 4)])],
    "reduce_min": [(lambda x: tnp.min(x, axis=0), [f64(2, 3)])],
    "reduce_prod": [(tnp.prod, [f64(2, 3)])],
    "argmax": [(lambda x: tnp.argmax(x, axis=1), [f64(2, 3, 4)])],
    "argmin": [(lambda x: tnp.argmin(x, axis=0), [f64(3, 2)])],
    "cumsum": [(lambda x: tnp.cumsum(x, axis=1), [f64(2, 3)]),
               (lambda x: lax.cumsum(x, axis=0, reverse=True), [f64(4, 2)])],
    "cumprod": [(lambda x: lax.cumprod(x, axis=1), [f64(3, 4)])],
    "cummax": [(lambda x: lax.cummax(x, axis=0, reverse=True), [f64(4, 3)])],
    "cummin": [(lambda x: lax.cummin(x, axis=1), [f64(2, 5)])],
    "cumlogsumexp": [(lambda x: lax.cumlogsumexp(x, axis=1, reverse=True), [f64(2, 4)])],
    # windows
    "reduce_window_sum": [(lambda x: lax.reduce_window_sum(x, (2, 2), (1, 2), ((1, 0), (0, 1))), [f64(4, 5)])],
    "reduce_window_max": [(lambda x: lax.max_pool(x, (2, 2), (1, 1), "SAME"), [f64(2, 4, 5, 3)])],
    "reduce_window_min": [(lambda x: lax.reduce_window(x, np.inf, lax.min, (3,), (2,), "VALID", (2,), None), [f64(6)])],
    "select_and_gather_add": [(applied("select_and_gather_add", select_prim="ge", **WINDOW), [f64(3, 4), f64(3, 4)])],
    "select_and_scatter_add": [(applied("select_and_scatter_add", select_prim="le", **WINDOW), [f64(2, 4), f64(3, 4)])],
    "conv_general_dilated": [
        (lambda x, w: lax.conv_general_dilated(x, w, (2, 1), ((1, 0), (0, 1)), rhs_dilation=(1, 2),
                                               dimension_numbers=("NHWC", "HWIO", "NHWC")),
         [f64(2, 5, 4, 2), f64(2, 2, 2, 3)]),
        (lambda x, w: lax.conv_general_dilated(x, w, (1,), ((1, 1),), lhs_dilation=(2,), feature_group_count=2),
         [f64(1, 4, 5), f64(4, 2, 3)])],
    # linear algebra
    "dot_general": [(lambda a, v: a @ v, [f64(3, 4), f64(4)]),
                    (tnp.matmul, [f64(2, 3), f64(3, 5)]),
                    (tnp.dot, [f64(4), f64(4)]),
                    (lambda a, b: lax.dot_general(a, b, (((2,), (1,)), ((0,), (0,)))), [f64(2, 3, 4), f64(2, 4, 5)]),
                    (lambda a, b: lax.dot_general(a, b, (((0,), (1,)), ((), ()))), [f64(4, 3), f64(2, 4)])],
    "cholesky": [(lambda x: lax.linalg.cholesky(x @ x.T + 4.0 * tnp.eye(3)), [f64(3, 3)])],
    "triangular_solve": [(lambda a, b: lax.linalg.triangular_solve(a + 4 * tnp.eye(3, dtype=a.dtype), b,
                                                                   left_side=True, lower=True), [f64(3, 3), f64(3, 2)]),
                         (lambda a, b: lax.linalg.triangular_solve(a + 4 * tnp.eye(3, dtype=a.dtype), b,
                                                                   transpose_a=True, conjugate_a=True,
                                                                   unit_diagonal=True), [f64(3, 3), f64(2, 3)]),
                         (lambda a, b: lax.linalg.triangular_solve(a + 4 * tnp.eye(3, dtype=a.dtype), b,
                                                                   left_side=True, conjugate_a=True),
                          [f64(3, 3), f64(3, 2)])],
    "solve": [(lambda a, b: tnp.linalg.solve(a + 4.0 * tnp.eye(3), b), [f64(3, 3), f64(3, 2)]),
              (lambda a, b: tnp.linalg.solve(a + 4.0 * tnp.eye(10), b), [f64(10, 10), f64(10)])],
    "lu": [(lambda a: lax.linalg.lu(a)[0], [f64(4, 3)])],
    "lu_pivots_to_permutation": [(lambda a: lax.linalg.lu_pivots_to_permutation(lax.linalg.lu(a)[1], 5), [f64(4, 3)])],
    "qr": [(lambda a: tnp.concatenate(lax.linalg.qr(a, full_matrices=False), axis=0), [f64(4, 3)]),
           (lambda a: applied("qr", full_matrices=True, compute_q=False)(a)[1], [f64(4, 3)])],      # (q pruned)
    "eigh": [(lambda x: lax.linalg.eigh(x + x.T)[1], [f64(3, 3)])],
    "eig": [(lambda x: tnp.linalg.eigvals(x), [f64(3, 3)]),
            (lambda x: tnp.abs(tnp.stack(lax.linalg.eig(x, enable_eigvec_derivs=True)[1:])), [f64(3, 3)])],
    "svd": [(lambda x: tnp.concatenate(lax.linalg.svd(x, full_matrices=False)[::2], axis=0), [f64(4, 3)]),
            (lambda x: lax.linalg.svd(x, compute_uv=False), [f64(3, 4)])],
    "tridiagonal_solve": [(lambda dl, d, du, b: lax.linalg.tridiagonal_solve(dl, d + 4.0, du, b),
                           [f64(4), f64(4), f64(4), f64(4, 2)]),
                          (lambda dl, d, du, b: lax.linalg.tridiagonal_solve(dl, d + 4.0, du, b, perturb_singular=True),
                           [f64(5), f64(5), f64(5), f64(5, 1)])],
    # LAPACK's forms without a derivative (in JAX too; their jvp raises): applied to rounded matrices, whose tangent
    # is zero, so that the jvp test checks a zero derivative and the batching and lowering tests run
    "schur": [(lambda x: tnp.concatenate(lax.linalg.schur(tnp.round(x * 3)), axis=0), [f64(3, 3)])],
    "hessenberg": [(lambda x: lax.linalg.hessenberg(tnp.round(x * 3))[0], [f64(4, 4)])],
    "householder_product": [(lambda x: lax.linalg.householder_product(*lax.linalg.hessenberg(tnp.round(x * 3))),
                             [f64(4, 4)])],
    "tridiagonal": [(lambda x: tnp.concatenate(lax.linalg.tridiagonal(tnp.round(x * 3))[1:3]), [f64(4, 4)])],
    "fft": [(tnp.fft.fft, [c128(3, 4)]), (lambda x: tnp.fft.rfft2(x), [f64(3, 4)]),
            (lambda z: tnp.fft.irfft(z, n=6), [c128(2, 4)])],
    # indexing
    "dynamic_slice": [(lambda x, i, j: lax.dynamic_slice(x, (i, j), (2, 2)), [f64(4, 5), ints(-1, 4), ints(0, 5)]),
                      (lambda x: lax.dynamic_slice(x, (1, 2), (2, 2)), [f64(4, 5)])],
    "dynamic_update_slice": [(lambda x, u, i: lax.dynamic_update_slice(x, u, (i, np.int32(1))),
                              [f64(4, 5), f64(2, 3), ints(-1, 4)]),
                             (lambda x, u: lax.dynamic_update_slice(x, u, (2, 0)), [f64(4, 3), f64(2, 3)])],
    "gather": [(lambda x, i: x[i], [f64(5, 3), ints(0, 4, 2, 2)]),
               (lambda x, i: applied("gather", axes=(2, 0), mode="fill")(x, i), [f64(3, 2, 4), ints(-1, 4, 5, 2)])],
    "scatter_add": [(tj.jit(lambda x, i, v: x.at[i].add(v)), [f64(5, 2), ints(0, 4, 3), f64(3, 2)]),
                    (lambda x, i, u: applied("scatter_add", axes=(2, 0), mode="drop")(x, i, u),
                     [f64(3, 2, 4), ints(-1, 4, 5, 2), f64(5, 2)])],
    "scatter": [(tj.jit(lambda x, i, v: x.at[i].set(v)), [f64(5, 2), ints(0, 4, 3), f64(3, 2)]),
                (lambda x, i, u: applied("scatter", axes=(2, 0), mode="drop")(x, i, u),
                 [f64(3, 2, 4), ints(-1, 4, 5, 2), f64(5, 2)]),
                (lambda x, i, u: applied("scatter", axes=(0,), mode="clip")(x, i, u),
                 [f64(4, 3), ints(-2, 6, 7, 1), f64(7, 3)])],
    "lstsq": [(lambda a, b: tnp.linalg.lstsq(a, b)[0], [f64(5, 3), f64(5, 2)]),
              (lambda a, b: tnp.linalg.lstsq(a, b)[3], [f64(3, 4), f64(3, 1)])],
    "scatter_max": [(tj.jit(lambda x, i, v: x.at[i].max(v)), [f64(5, 2), ints(0, 4, 3), f64(3, 2)]),
                    (lambda x, i, u: applied("scatter_max", axes=(2, 0), mode="drop")(x, i, u),
                     [f64(3, 2, 4), ints(-1, 4, 5, 2), f64(5, 2)])],
    "scatter_min": [(tj.jit(lambda x, i, v: x.at[i].min(v)), [f64(5, 2), ints(0, 4, 3), f64(3, 2)]),
                    (lambda x, i, u: applied("scatter_min", axes=(0,), mode="clip")(x, i, u),
                     [f64(4, 3), ints(-2, 6, 7, 1), f64(7, 3)])],
    "sort": [(lambda x: tnp.sort(x, axis=0), [f64(4, 3)])],
    "argsort": [(lambda x: tnp.argsort(x, kind="stable"), [f64(2, 5)])],
    "top_k": [(lambda x: tj.lax.top_k(x, 2)[1], [f64(3, 5)])],
    "searchsorted": [(lambda a, v: tnp.searchsorted(tnp.sort(a), v), [f64(6), f64(2, 3)]),
                     (lambda a, v: tnp.searchsorted(tnp.sort(a), v, side="right"), [f64(6), f64(4)])],
    # control flow
    "cond": [(lambda p, x: lax.cond(p > 0, tnp.sin, lambda x: x * 2.0, x), [f64(), f64(3)]),
             (lambda p, x, c: lax.cond(p > 0, lambda x, c: x + c, lambda x, c: c * 2.0, x, c), [f64(), f64(3), f64(3)]),
             (lambda i, x: lax.switch(i, [tnp.sin, tnp.cos, lambda x: -x], x), [ints(-1, 3), f64(2, 3)])],
    "while": [(lambda x: lax.while_loop(lambda c: c[0] < 10.0, lambda c: (c[0] * 2.0 + 1.0, c[1] + 1), (x, 0))[1],
               [pos()]),
              (lambda n, x: lax.fori_loop(0, n, lambda i, c: c * 0.5 + i, x), [ints(0, 4), f64(2)])],
    "scan": [(lambda c, xs: lax.scan(lambda c, x: (c * 0.9 + x, c * x), c, xs)[1], [f64(2), f64(4, 2)]),
             (lambda w, xs: lax.scan(lambda c, x: (c + x * w, None), tnp.zeros(3), xs, reverse=True)[0],
              [f64(3), f64(5, 3)])],
    "custom_linear_solve": [(_linear_solve, [pos(3), f64(3)]),
                            (lambda a, b: _linear_solve(a, b, symmetric=True), [pos(4), f64(4)])],
    # special functions (tracejit.primitives.special); arguments mapped into each function's domain
    "erf": [(special.erf, [f64(3)]), (special.erf, [f32(2, 2)])],
    "erfc": [(special.erfc, [f64(3)])],
    "erfcx": [(special.erfcx, [f64(4)])],
    "erf_inv": [(lambda x: special.erfinv(tnp.tanh(x)), [f64(3)])],
    "ndtr": [(special.ndtr, [f64(3)])],
    "ndtri": [(lambda x: special.ndtri(tj.nn.sigmoid(x)), [f64(3)])],
    "log_ndtr": [(special.log_ndtr, [f64(4) * 3])],
    "lgamma": [(special.gammaln, [pos(3)]), (lambda x: special.gammaln(x - 3.0), [pos(2)])],
    "digamma": [(special.digamma, [pos(3)])],
    "gamma": [(special.gamma, [pos(3)])],
    "igamma": [(special.gammainc, [pos(3), pos(3)])],
    "igammac": [(special.gammaincc, [pos(3), pos(3)])],
    "igamma_grad_a": [(lambda x: bind(ALL["igamma_grad_a"], tnp.full_like(x, 2.5), x), [pos(3)])],
    "regularized_incomplete_beta": [(lambda x: special.betainc(2.0, 3.5, tj.nn.sigmoid(x)), [f64(3)])],
    "zeta": [(lambda s, q: special.zeta(s + 1.5, q), [pos(3), pos(3)])],
    "polygamma": [(lambda x: special.polygamma(2, x), [pos(3)])],
    "bessel_i0e": [(special.i0e, [f64(3)])],
    "bessel_i1e": [(special.i1e, [f64(3)])],
    # checkpointing and debugging
    "checkpoint": [(tj.checkpoint(lambda x, y: tnp.sin(x) * y), [f64(3), f64(3)]),
                   (tj.checkpoint(lambda w, x: tnp.tanh(x @ w), policy=tj.checkpoint_policies.dots_saveable),
                    [f64(3, 2), f64(4, 3)])],
    "name": [(lambda x: tj.ad_checkpoint.checkpoint_name(tnp.sin(x), "s") * 2.0, [f64(2, 3)])],
    "debug_callback": [(lambda x: (tj.debug.callback(lambda v: None, x), x * 2.0)[1], [f64(3)])],
}

NAMES = sorted(ALL)


def examples(name):
    if name not in EXAMPLES:
        pytest.fail(f"primitive {name!r} has no examples: add them to EXAMPLES in tests/test_primitives.py (a "
                    "function that applies it and its arguments), which checks its jvp, batching and lowering")
    return EXAMPLES[name]


def test_every_example_applies_its_primitive():
    assert set(EXAMPLES) <= set(ALL), set(EXAMPLES) - set(ALL)
    for name, cases in EXAMPLES.items():
        for f, args, *_ in cases:
            assert name in {e.prim.name for e in tj.make_ir(f)(*args).eqns}, name

# ------------------------------------------------------------------------------------------------- jvp


@pytest.mark.parametrize("name", NAMES)
def test_jvp_against_finite_differences(name):
    """Tangents of float outputs match central differences along a random direction; outputs that are not
    floats (comparisons, indices) have zero tangents."""
    assert ALL[name].jvp is not None, f"{name} has no jvp rule"
    for f, args, *derivative in examples(name):
        tangents = [np.ones_like(a) if np.asarray(a).dtype.kind in "fc" else np.zeros_like(a) for a in args]
        out, out_tangent = tj.jvp(f, tuple(args), tuple(tangents))
        if derivative:
            np.testing.assert_allclose(out_tangent, derivative[0](args, tangents))
        else:
            check_jvp(f, args, err_msg=f"JVP of {name}")
        if np.asarray(out).dtype.kind not in "fc":
            assert not np.any(out_tangent), name

# -------------------------------------------------------------------------------------------- batching


def draw(example, axis):
    """B fresh examples like `example`, stacked along `axis`."""
    if example.dtype == bool:
        copies = [bools(*example.shape) for _ in range(B)]
    elif example.dtype.kind == "c":
        copies = [c128(*example.shape).astype(example.dtype) for _ in range(B)]
    elif example.dtype.kind in "iu":
        lo, hi = int(example.min()), int(example.max())
        copies = [rng.integers(lo, hi + 1, size=example.shape).astype(example.dtype) for _ in range(B)]
    elif np.all(example > 0):
        copies = [pos(*example.shape).astype(example.dtype) for _ in range(B)]
    else:
        copies = [rng.normal(size=example.shape).astype(example.dtype) for _ in range(B)]
    return np.stack(copies, axis=axis)


def axes_variants(f, examples):
    """(in_axes, out_axes) pairs: all leading, all trailing, the first argument unbatched, a middle axis."""
    n, out_ndim = len(examples), np.ndim(tj.jit(f)(*examples))
    out = [((0,) * n, 0), (tuple(-1 for _ in examples), -1)]
    if n > 1:
        out.append(((None,) + tuple(min(1, e.ndim) for e in examples[1:]), 0))
    out.append((tuple(min(1, e.ndim) for e in examples), min(1, out_ndim)))
    return out


def loop_reference(f, args, in_axes, out_axes):
    """One call of the unbatched program per example, stacked with NumPy."""
    f = tj.jit(f)
    outs = [np.asarray(f(*[a if ax is None else np.take(a, i, axis=ax) for a, ax in zip(args, in_axes)]))
            for i in range(B)]
    return np.stack(outs, axis=out_axes if out_axes >= 0 else outs[0].ndim + 1 + out_axes)


@pytest.mark.parametrize("name", NAMES)
def test_batching_against_a_loop(name):
    """vmap matches a loop over examples for every placement of the batch axes, the batched IR type-checks, and
    its size does not grow with the batch size (a while with a batched predicate runs large batches in blocks:
    one IR for small batches, another for large ones)."""
    assert ALL[name].batch is not None, f"{name} has no batching rule"
    for f, example_args, *_ in examples(name):
        example_args = [np.asarray(e) for e in example_args]
        for in_axes, out_axes in axes_variants(f, example_args):
            args = [e if ax is None else draw(e, ax) for e, ax in zip(example_args, in_axes)]
            expected = loop_reference(f, args, in_axes, out_axes)
            got = vmap(f, in_axes=in_axes, out_axes=out_axes)(*args)
            assert got.dtype == expected.dtype and got.shape == expected.shape, (in_axes, out_axes)
            np.testing.assert_allclose(got, expected, rtol=1e-6, atol=1e-12, err_msg=f"{in_axes} -> {out_axes}")
            check_ir(tj.make_ir(vmap(f, in_axes=in_axes, out_axes=out_axes))(*args))
        closed = tj.make_ir(f)(*example_args)
        sizes = [len(vmap_ir(closed, [0] * len(example_args), size)[0].eqns) for size in (1, 7, 1000, 100003)]
        assert sizes[0] == sizes[1] and sizes[2] == sizes[3], sizes

# -------------------------------------------------------------------------------------------- lowering


def _eqn_of(name, f, args):
    return next(e for e in tj.make_ir(f)(*args).eqns if e.prim.name == name)


def _below(limit, at=0):
    """Operand `at` with values beyond +-limit replaced by 2 (outside the range where compiled code and NumPy
    are meant to agree)."""
    def fit(operands):
        x = operands[at]
        return operands[:at] + [np.where(np.abs(x) > limit, 2.0, x).astype(x.dtype)] + operands[at + 1:]
    return fit


def _complex_below(limit):
    """_below for complex operands (all of them) only."""
    def fit(operands):
        if operands[0].dtype.kind != "c":
            return operands
        for at in range(len(operands)):
            operands = _below(limit, at)(operands)
        return operands
    return fit


def _pow_operands(operands):
    if operands[0].dtype == np.float32:
        return _below(30, at=1)(operands)
    return _complex_below(3)(operands)


# What the compiled sweep feeds instead of the samples: mathlib's sin, cos and tan reduce arguments exactly up to
# 2**43 only, so do the complex functions made of them (exp, tanh: of the imaginary part); a float32 pow with an
# exponent past 30 overflows where NumPy's does not; NumPy's complex64 power computes exp(w log z) in float32,
# whose error grows with |w log z|.
SWEEP_OPERANDS = {"sin": _below(1e10), "cos": _below(1e10), "tan": _below(1e10), "exp": _complex_below(1e10),
                  "tanh": _complex_below(1e10), "pow": _pow_operands}


@pytest.mark.parametrize("name", NAMES)
def test_compiled_against_the_impl(name):
    """The examples compiled, fused and unfused, against eval_ir (the NumPy impls); an elementwise primitive
    whose operands share one dtype also in each dtype it accepts, on special values, and with a rank-0 last
    operand."""
    for f, args, *_ in examples(name):
        check(f, *args, normwise=not ALL[name].elementwise)
    f, args, *_ = examples(name)[0]
    eqn = _eqn_of(name, f, args)
    if not ALL[name].elementwise or len({x.aval.dtype for x in eqn.inputs}) != 1:
        return
    prim, arity = ALL[name], len(eqn.inputs)
    sweep = []      # (dtype, operands): one program computes every dtype's (one compile instead of ~30)
    for dtype in ALL_DTYPES:
        operands = SWEEP_OPERANDS.get(name, list)([sample(dtype, seed=k + 1) for k in range(arity)])
        if accepts(prim, *[tj.ShapeDtypeStruct(x.shape, x.dtype) for x in operands], **eqn.params):
            sweep.append((dtype, operands))

    def every_dtype(*xs):
        outs, xs = [], list(xs)
        for _, operands in sweep:
            mine, xs = xs[:arity], xs[arity:]
            outs.append(bind(prim, *mine, **eqn.params))
            if arity > 1:       # a rank-0 last operand
                outs.append(bind(prim, *mine[:-1], operands[-1][3], **eqn.params))
        return outs

    with np.errstate(all="ignore"):      # NumPy warns on the specials, as it does for its users
        got, want = compiled_and_reference(every_dtype, *[x for _, operands in sweep for x in operands])
    for k, (g, w) in enumerate(zip(got, want, strict=True)):
        try:
            assert_same(g, w)
        except AssertionError as e:
            raise AssertionError(f"{name} in {sweep[k // (1 + (arity > 1))][0]}") from e



def _as_complex(args, dtype):
    """The float arguments of an example as complex ones of its shape: special values in either part."""
    return [sample(dtype, np.shape(a), seed=k + 1) if np.asarray(a).dtype.kind == "f" else a
            for k, a in enumerate(args)]


@pytest.mark.parametrize("name", NAMES)
def test_compiled_in_complex_dtypes(name):
    """Every example whose float arguments may be complex (complex numbers are not ordered: comparisons,
    max, sort keys... refuse them), compiled with complex64 and complex128 arguments holding special values,
    fused and unfused, against eval_ir."""
    for f, args, *_ in examples(name):
        for dtype in (np.complex64, np.complex128):
            complex_args = _as_complex(args, dtype)
            try:
                tj.make_ir(f)(*complex_args)
            except TypeError:
                continue
            with np.errstate(all="ignore"):
                check(f, *complex_args, normwise=not ALL[name].elementwise)
