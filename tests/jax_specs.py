"""How the differential suite (test_against_jax.py) calls tracejit.numpy.linalg, tracejit.numpy.fft and lax's
convolutions, windowed reductions, cumulative operations and sorts: qualified name -> cases. Their derivatives
are compared to first order (tests/test_linalg.py, test_fft.py and test_convolution.py compare second ones;
compiling them for every case here would double the suite's cost)."""
import numpy as np
from jax_oracle import Case, axis_cases, complex_draw

R = np.random.default_rng(20240602)


def r(*shape):
    return R.uniform(-3, 3, shape)


def z(*shape):
    return complex_draw(R, *shape)


# --------------------------------------------------------------------------------------------- linalg
# Well-conditioned matrices; eigenvectors and singular vectors up to sign (their absolute values are compared);
# each LAPACK-backed function also on a complex matrix.
def square(*shape):
    """Random matrices, diagonally dominant (well conditioned)."""
    return r(*shape) + 4 * np.eye(shape[-1])


def spd(*shape):
    """Random symmetric positive definite matrices."""
    a = r(*shape)
    return a @ np.swapaxes(a, -1, -2) + 3 * np.eye(shape[-1])


def _with_complex(cases, *args):
    return cases + [Case("complex", tuple(a + 0.5j * r(*np.shape(a)) for a in args))]


def _up_to_sign(M, fn, *args, **kwargs):
    """fn's outputs with the vectors (the 2-D ones: eigenvectors, singular vectors) as absolute values."""
    return [M.numpy.abs(out) if out.ndim >= 2 else out for out in fn(*args, **kwargs)]


def _symmetric(M, w):
    """Functions of eigenvalues that do not depend on their order (which NumPy and LAPACK do not fix)."""
    return M.numpy.sum(w, axis=-1), M.numpy.prod(w, axis=-1), M.numpy.sum(w * w * w, axis=-1)


LINALG = {
    "linalg.cholesky": lambda: _with_complex([Case("spd", (spd(3, 3),)), Case("batched", (spd(2, 3, 3),))], spd(3, 3)),
    "linalg.det": lambda: _with_complex([Case("square", (square(3, 3),)), Case("batched", (square(2, 3, 3),)),
                                         Case("singular", (np.ones((3, 3)),))], square(3, 3)),
    "linalg.slogdet": lambda: _with_complex([Case("square", (square(3, 3),)), Case("negative", (-square(3, 3),))],
                                            square(3, 3)),
    "linalg.inv": lambda: _with_complex([Case("square", (square(3, 3),)), Case("batched", (square(2, 3, 3),))], square(3, 3)),
    "linalg.solve": lambda: _with_complex([Case("vector", (square(3, 3), r(3))), Case("matrix", (square(3, 3), r(3, 2))),
                                           Case("batched", (square(2, 3, 3), r(2, 3, 2)))], square(3, 3), r(3)),
    "linalg.matrix_power": lambda: [Case(f"n={n}", (square(3, 3), n)) for n in (3, 1, 0, -2)],
    "linalg.multi_dot": lambda: [Case("three", ([r(2, 3), r(3, 4), r(4, 2)],)), Case("vectors", ([r(3), r(3, 4), r(4)],))],
    "linalg.tensorinv": lambda: [Case("ind=1", (square(6, 6).reshape(6, 2, 3), 1))],
    "linalg.tensorsolve": lambda: [Case("two", (square(6, 6).reshape(2, 3, 6), r(2, 3)))],
    "linalg.eigh": lambda: _with_complex([Case("spd", (spd(3, 3),), call=_up_to_sign),
                                          Case("batched", (spd(2, 3, 3),), call=_up_to_sign)], spd(3, 3)),
    "linalg.eigvalsh": lambda: [Case("spd", (spd(3, 3),)), Case("batched", (spd(2, 3, 3),))],
    "linalg.svd": lambda: _with_complex([Case("tall", (r(4, 3), False), call=_up_to_sign),
                                         Case("wide", (r(2, 3, 4), False), call=_up_to_sign),
                                         Case("values", (r(3, 4),), {"compute_uv": False})], r(4, 3)),
    "linalg.svdvals": lambda: [Case("tall", (r(4, 3),)), Case("batched", (r(2, 3, 4),))],
    "linalg.qr": lambda: _with_complex([Case("tall", (r(4, 3),)), Case("complete", (r(4, 3), "complete")),
                                        Case("r", (r(3, 4), "r"))], r(4, 3)),
    "linalg.lstsq": lambda: [Case("tall", (r(4, 3), r(4))), Case("matrix", (r(4, 3), r(4, 2))), Case("wide", (r(3, 4), r(3)))],
    "linalg.pinv": lambda: _with_complex([Case("tall", (r(4, 3),)), Case("batched", (r(2, 3, 4),))], r(4, 3)),
    "linalg.matrix_rank": lambda: [Case("full", (r(3, 4),)), Case("deficient", (np.outer(r(3), r(4)),)),
                                   Case("vector", (r(3),)), Case("zeros", (np.zeros(3),)),
                                   Case("tol", (np.outer(r(3), r(4)) + 1e-6 * r(3, 4), 1e-3))],
    "linalg.cond": lambda: [Case(f"ord={o}", (square(3, 3), o)) for o in (None, "fro", 1, -np.inf, -2, "nuc")],
    "linalg.norm": lambda: axis_cases("linalg.norm", {"axis": None, "keepdims": False}) + [
        Case(f"ord={o}", (x, o)) for o, x in ((2, r(3, 4)), ("nuc", r(3, 4)), (-1, r(3, 4)), (np.inf, r(4)), (0.5, r(4)))],
    "linalg.eig": lambda: [Case("values", (r(3, 3),), call=lambda M, fn, a: _symmetric(M, fn(a)[0]))],
    "linalg.eigvals": lambda: [Case("square", (r(3, 3),), call=lambda M, fn, a: _symmetric(M, fn(a))),
                               Case("batched", (r(2, 3, 3),), call=lambda M, fn, a: _symmetric(M, fn(a)))],
}


# ------------------------------------------------------------------------------------------------ fft
def _fft_cases(real_input):
    x = r(2, 8) if real_input else z(2, 8)
    return [Case("rows", (x,)), Case("pad", (x, 10)), Case("crop", (x, 6)), Case("axis0", (x, None, 0)),
            Case("ortho", (x,), {"norm": "ortho"}), Case("forward", (x,), {"norm": "forward"}),
            Case("complex", (z(5),)), Case("one", (r(1),))]


def _fftn_cases():
    return [Case("all", (z(2, 3, 4),)), Case("s", (z(2, 3, 4), (4, 2), (0, 2))), Case("real", (r(3, 4),)),
            Case("ortho", (z(3, 4),), {"norm": "ortho"})]


def _irfft_cases():
    return [Case("rows", (z(2, 5),)), Case("n_odd", (z(2, 5), 9)), Case("axis0", (z(5, 2), None, 0)),
            Case("ortho", (z(5),), {"norm": "ortho"})]


def _irfftn_cases():
    return [Case("all", (z(2, 3, 5),)), Case("s", (z(3, 5), (3, 8))), Case("ortho", (z(3, 5),), {"norm": "ortho"})]


FFT = {
    **{f"fft.{n}": lambda: _fft_cases(real_input=False) for n in ("fft", "ifft")},
    "fft.rfft": lambda: _fft_cases(real_input=True),
    "fft.ihfft": lambda: _fft_cases(real_input=True),
    **{f"fft.{n}": _fftn_cases for n in ("fftn", "ifftn", "fft2", "ifft2")},
    "fft.rfftn": lambda: [Case("all", (r(2, 3, 4),)), Case("s", (r(3, 4), (4, 6))), Case("axes", (r(3, 4), None, (0,)))],
    "fft.rfft2": lambda: [Case("all", (r(2, 3, 4),)), Case("s", (r(3, 4), (4, 6)))],
    "fft.irfft": _irfft_cases,
    "fft.hfft": _irfft_cases,
    "fft.irfftn": _irfftn_cases,
    "fft.irfft2": _irfftn_cases,
    "fft.fftfreq": lambda: [Case("even", (8,)), Case("odd", (7, 0.5)), Case("dtype", (4,), {"dtype": np.float32})],
    "fft.rfftfreq": lambda: [Case("even", (8,)), Case("odd", (7, 0.5))],
    "fft.fftshift": lambda: [Case("odd", (r(5),)), Case("matrix", (r(3, 4),)), Case("axis", (r(3, 4), 1)),
                             Case("complex", (z(4),))],
    "fft.ifftshift": lambda: [Case("odd", (r(5),)), Case("matrix", (r(3, 4),)), Case("axis", (r(3, 4), (0,)))],
    "lax.fft": lambda: [Case("fft", (z(2, 8), "fft", (8,))), Case("ifft", (z(2, 3, 4), "ifft", (3, 4))),
                        Case("rfft", (r(2, 8), "rfft", (8,))), Case("irfft", (z(2, 5), "irfft", (8,)))],
}


# ---------------------------------------------------------------------------------------- convolutions
NHWC = ("NHWC", "HWIO", "NHWC")


CONV = {
    "lax.conv_general_dilated": lambda: [
        Case("valid", (r(2, 2, 5, 5), r(3, 2, 3, 3), (1, 1), "VALID")),
        Case("same_strided", (r(1, 2, 6, 5), r(2, 2, 3, 2), (2, 1), "SAME")),
        Case("pads_dilated", (r(1, 2, 5, 5), r(2, 2, 2, 2), (1, 1), ((1, 0), (2, 1)), (2, 1), (1, 2))),
        Case("nhwc_groups", (r(1, 4, 4, 4), r(2, 2, 2, 4), (1, 1), "SAME"),
             {"dimension_numbers": NHWC, "feature_group_count": 2}),
        Case("batch_groups", (r(2, 2, 4, 4), r(4, 2, 2, 2), (1, 1), "VALID"), {"batch_group_count": 2}),
        Case("1d", (r(2, 3, 7), r(4, 3, 3), (2,), "SAME_LOWER"))],
    "lax.conv": lambda: [Case("valid", (r(2, 2, 5, 5), r(3, 2, 3, 3), (1, 1), "VALID")),
                         Case("same", (r(1, 1, 4, 4), r(2, 1, 3, 3), (2, 2), "SAME"))],
    "lax.conv_with_general_padding": lambda: [
        Case("dilated", (r(1, 2, 5, 5), r(2, 2, 3, 3), (2, 1), ((1, 1), (0, 1)), (1, 1), (1, 2)))],
    "lax.conv_transpose": lambda: [
        Case("same", (r(1, 4, 4, 2), r(3, 3, 2, 3), (2, 2), "SAME"), {"dimension_numbers": NHWC}),
        Case("valid_kernel", (r(1, 3, 3, 2), r(2, 2, 3, 2), (1, 1), "VALID"),
             {"dimension_numbers": NHWC, "transpose_kernel": True})],
    "lax.conv_dimension_numbers": lambda: [Case("nhwc", ((1, 5, 5, 2), (3, 3, 2, 4), NHWC), traceable=False),
                                           Case("none", ((1, 2, 5, 5), (4, 2, 3, 3), None), traceable=False)],
    "lax.conv_general_permutations": lambda: [Case("nhwc", (NHWC,), traceable=False)],
    "lax.conv_shape_tuple": lambda: [Case("pads", ((1, 2, 5, 5), (4, 2, 3, 3), (2, 1), ((1, 1), (0, 2))), traceable=False)],
    "lax.conv_general_shape_tuple": lambda: [
        Case("nhwc", ((1, 5, 5, 2), (3, 3, 2, 4), (2, 1), ((1, 1), (0, 2)), NHWC), traceable=False)],
    "lax.conv_transpose_shape_tuple": lambda: [
        Case("nhwc", ((1, 5, 5, 2), (3, 3, 2, 4), (2, 1), ((1, 1), (0, 2)), NHWC), traceable=False)],
    "lax.padtype_to_pads": lambda: [Case(p, ((5, 6), (3, 2), (2, 1), p), traceable=False) for p in ("SAME", "VALID", "SAME_LOWER")],
    "lax.reduce_window_shape_tuple": lambda: [Case("strided", ((5, 6), (2, 3), (2, 1), ((0, 1), (1, 1))), traceable=False)],
    "numpy.convolve": lambda: [Case(m, (r(6), r(3), m)) for m in ("full", "same", "valid")] + [
        Case("short_first", (r(2), r(5))), Case("complex_real", (z(2), r(5), "same"))],
    "numpy.correlate": lambda: [Case(m, (r(6), r(3), m)) for m in ("full", "same", "valid")] + [
        Case("complex", (z(5), z(3), "full")), Case("short_first", (z(2), z(4), "same"))],
}


# ----------------------------------------------------------------------- windowed and cumulative reductions
TIES = np.array([[1.0, 3.0, 3.0, 0.0, 2.0], [2.0, 2.0, 2.0, 2.0, -1.0], [-1.0, 0.0, 0.0, -1.0, 0.0]])


def _window(op, init):
    def call(M, fn, x, *window):
        return fn(x, init, getattr(M.lax, op), *window)
    return call


WINDOWED = {
    "lax.reduce_window": lambda: [
        Case(f"{op} {label}", (x, *window), call=_window(op, init))
        for op, init in (("add", 0.0), ("max", -np.inf), ("min", np.inf), ("mul", 1.0))
        for label, x, window in (("valid", r(3, 5), ((2, 2), (1, 1))), ("ties", TIES, ((2, 3), (1, 2), "SAME")),
                                 ("padded", r(4, 4), ((3, 2), (2, 1), ((1, 1), (0, 1)))))] + [
        Case("dilated add", (r(5, 5), (2, 2), (1, 1), "VALID", (1, 1), (2, 1)), call=_window("add", 0.0)),
        Case("base dilated max", (r(3, 3), (2, 2), (1, 1), "VALID", (2, 1)), call=_window("max", -np.inf))],
    **{f"lax.{n}": lambda: [Case("rows", (r(3, 4),)), Case("axis1 reverse", (r(3, 4), 1, True)),
                            Case("axis0 reverse", (np.stack([TIES, TIES[::-1] * 0.5]), 0, True)),   # (no draw from R)
                            Case("ties", (TIES, 1)), Case("one", (r(1),)), Case("empty", (r(0, 2),)),
                            Case("complex", (z(3, 4),))]
       for n in ("cumsum", "cumprod", "cummax", "cummin", "cumlogsumexp")},
    "lax.associative_scan": lambda: [
        Case("add", (r(6),), call=lambda M, fn, x: fn(M.lax.add, x)),
        Case("max reverse", (TIES,), call=lambda M, fn, x: fn(M.lax.max, x, reverse=True, axis=1)),
        Case("pairs", (r(5), r(5)), call=lambda M, fn, a, b: fn(lambda p, q: (p[0] * q[0], q[0] * p[1] + q[1]), (a, b)))],
    "lax.sort": lambda: [Case("rows", (r(3, 4),)), Case("ties", (TIES, 0)), Case("two", ((TIES[0], r(5)),)),
                         Case("two_keys", ((TIES[1], TIES[0], r(5)), 0, True, 2))],
    "lax.sort_key_val": lambda: [Case("rows", (r(3, 4), r(3, 4))), Case("ties", (TIES, r(3, 5), 0))],
    "lax.top_k": lambda: [Case("k=2", (r(3, 5), 2)), Case("ties", (TIES, 3)), Case("all", (r(4), 4))],
}

def _first_order(spec):
    def cases():
        out = spec()
        for case in out:
            case.second_order = False
        return out
    return cases


SPECS = {**{q: _first_order(spec) for q, spec in {**LINALG, **FFT, **CONV}.items()}, **WINDOWED}

NOT_IN_JAX = {
    "lax.reduce_window_sum": "JAX keeps it private (jax._src.lax.windowed_reductions): tracejit's lax.reduce_window "
                             "calls it for add, and is compared with JAX's there",
    "lax.reduce_window_max": "as lax.reduce_window_sum, for max",
    "lax.reduce_window_min": "as lax.reduce_window_sum, for min",
    "lax.max_pool": "Flax's and stax's pooling (flax.linen.max_pool), which jax.lax does not have: lax.reduce_window "
                    "with max, compared with JAX's there",
    "lax.avg_pool": "Flax's and stax's pooling (flax.linen.avg_pool): lax.reduce_window with add, divided",
}
NOT_IN_JAX_SPECS = {
    "lax.reduce_window_sum": lambda: _pool_cases(),
    "lax.reduce_window_max": lambda: _pool_cases(),
    "lax.reduce_window_min": lambda: _pool_cases(),
    "lax.max_pool": lambda: [Case("nhwc", (r(1, 4, 4, 2), (2, 2), (2, 2))), Case("same", (r(1, 5, 5, 1), (3, 3), (2, 2), "SAME"))],
    "lax.avg_pool": lambda: [Case("nhwc", (r(1, 4, 4, 2), (2, 2), (2, 2))), Case("same", (r(1, 5, 5, 1), (3, 3), (2, 2), "SAME"))],
}


def _pool_cases():
    return [Case("valid", (r(3, 5), (2, 2), (1, 1))), Case("ties", (TIES, (2, 3), (1, 2), "SAME"))]
