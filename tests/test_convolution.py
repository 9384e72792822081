# ruff: noqa: B023 -- the functions made in loops are called within their iteration
"""lax.conv_general_dilated and its helpers (issue 19): against a direct NumPy reference written from the definition
for random dimension numbers, strides, padding, dilations and groups (hypothesis), against JAX, compiled against
eager, gradients to order 2, vmap; tnp.convolve/correlate against NumPy."""
import itertools

import numpy as np
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

import tracejit as tj
import tracejit.numpy as tnp
from tracejit import lax
from tracejit.test_util import check_grads


def dilate(d, k):
    return 0 if d == 0 else 1 + k * (d - 1)


def reference_conv(lhs, rhs, strides, padding, lhs_dilation, rhs_dilation, dnums, groups=1, batch_groups=1):
    """From the definition, one output position and kernel offset at a time: out[n, o, q] sums lhs[n', c, s] *
    rhs[o, i, k] over the in features i of o's group and the offsets k, where s = (q * stride + k * rhs_dilation -
    low padding) / lhs_dilation is a whole input position; with batch groups n' = group * (N / groups) + n."""
    lhs_spec, rhs_spec, out_spec = (tuple(s) for s in dnums)
    x, w = np.transpose(lhs, lhs_spec), np.transpose(rhs, rhs_spec)
    n, (o, i), space, kernel = x.shape[0], w.shape[:2], x.shape[2:], w.shape[2:]
    per_group = o // (groups * batch_groups)
    n_out = n // batch_groups
    out_space = [max(0, (dilate(d, ld) + lo + hi - dilate(k, rd)) // s + 1) for d, k, s, (lo, hi), ld, rd in
                 zip(space, kernel, strides, padding, lhs_dilation, rhs_dilation)]
    out = np.zeros((n_out, o, *out_space), np.result_type(lhs, rhs))
    for q in np.ndindex(*out_space):
        for k in np.ndindex(*kernel):
            pos = [qd * s + kd * rd - lo for qd, kd, s, rd, (lo, _) in zip(q, k, strides, rhs_dilation, padding)]
            if any(p % ld or not 0 <= p // ld < d for p, ld, d in zip(pos, lhs_dilation, space)):
                continue
            src = tuple(p // ld for p, ld in zip(pos, lhs_dilation))
            for f in range(o):
                g = f // per_group
                if batch_groups > 1:
                    xs = x[(slice(g * n_out, (g + 1) * n_out), slice(None)) + src]
                else:
                    xs = x[(slice(None), slice(g * i, (g + 1) * i)) + src]
                out[(slice(None), f) + q] += xs @ w[(f, slice(None)) + k]
    return np.transpose(out, np.argsort(out_spec))


def _permuted(rng, letters):
    return "".join(rng.permutation(list(letters)))


@st.composite
def conv_problems(draw):
    """A random convolution: 1 to 3 spatial axes, any layouts, strides, padding (negative too), dilations and
    feature or batch groups."""
    n_sp = draw(st.integers(1, 3))
    space = [draw(st.integers(1, 5)) for _ in range(n_sp)]
    kernel = [draw(st.integers(1, 3)) for _ in range(n_sp)]
    strides = [draw(st.integers(1, 3)) for _ in range(n_sp)]
    lhs_dil = [draw(st.integers(1, 2)) for _ in range(n_sp)]
    rhs_dil = [draw(st.integers(1, 2)) for _ in range(n_sp)]
    padding = [(draw(st.integers(-1, 2)), draw(st.integers(-1, 2))) for _ in range(n_sp)]
    for d, k, ld, rd, (lo, hi) in zip(space, kernel, lhs_dil, rhs_dil, padding):
        assume(dilate(d, ld) + lo + hi >= dilate(k, rd))
    groups = draw(st.sampled_from([(1, 1), (2, 1), (3, 1), (1, 2)]))
    in_per_group, out_per_group, batch = draw(st.integers(1, 2)), draw(st.integers(1, 2)), draw(st.integers(1, 2))
    fg, bg = groups
    rng = np.random.default_rng(draw(st.integers(0, 2 ** 16)))
    names = "HWD"[:n_sp]
    specs = (_permuted(rng, "NC" + names), _permuted(rng, "OI" + names), _permuted(rng, "NC" + names))
    canonical = {"N": batch * bg, "C": in_per_group * fg, "O": out_per_group * fg * bg, "I": in_per_group}
    lhs_sizes = dict(canonical, **dict(zip(names, space)))
    rhs_sizes = dict(canonical, **dict(zip(names, kernel)))
    lhs = rng.integers(-3, 4, [lhs_sizes[ch] for ch in specs[0]]).astype(np.float64)
    rhs = rng.integers(-3, 4, [rhs_sizes[ch] for ch in specs[1]]).astype(np.float64)
    params = {"window_strides": strides, "padding": padding, "lhs_dilation": lhs_dil, "rhs_dilation": rhs_dil,
              "dimension_numbers": specs, "feature_group_count": fg, "batch_group_count": bg}
    return lhs, rhs, params


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
@given(conv_problems(), st.sampled_from([np.float64, np.float32, np.int32]))
def test_against_the_definition(problem, dtype):
    """Eager, and compiled in one dtype, against the reference (small integers: exact in every dtype)."""
    lhs, rhs, params = problem
    dn = lax.conv_dimension_numbers(lhs.shape, rhs.shape, params["dimension_numbers"])
    want = reference_conv(lhs, rhs, params["window_strides"], params["padding"], params["lhs_dilation"],
                          params["rhs_dilation"], dn, params["feature_group_count"], params["batch_group_count"])
    conv = lambda a, b: lax.conv_general_dilated(a, b, **params)
    np.testing.assert_array_equal(conv(lhs, rhs), want)
    got = tj.jit(conv)(lhs.astype(dtype), rhs.astype(dtype))
    assert got.dtype == dtype
    np.testing.assert_array_equal(got, want.astype(dtype))


@st.composite
def kernel_lanes_problems(draw):
    """A random convolution whose kernel is long and output short (a kernel gradient's shape: the lanes run along
    the kernel): 1 to 3 spatial axes, any layouts, padding, strides and dilations but the input's along its last
    axis (which the lanes need undilated), feature or batch groups."""
    n_sp = draw(st.integers(1, 3))
    kernel = [draw(st.integers(1, 2)) for _ in range(n_sp - 2)] + [draw(st.integers(8, 11)) for _ in range(min(n_sp, 2))]
    if n_sp == 1:
        kernel = [draw(st.integers(66, 80))]
    space = [k + draw(st.integers(-1, 1)) for k in kernel]
    strides = [draw(st.integers(1, 2)) for _ in range(n_sp)]
    lhs_dil = [draw(st.integers(1, 2)) for _ in range(n_sp - 1)] + [1]
    rhs_dil = [draw(st.integers(1, 2)) for _ in range(n_sp - 2)] + [1] * min(n_sp, 2)
    padding = [(draw(st.integers(-1, 1)), draw(st.integers(-1, 1))) for _ in range(n_sp)]
    for d, k, ld, rd, (lo, hi) in zip(space, kernel, lhs_dil, rhs_dil, padding):
        assume(dilate(d, ld) + lo + hi >= dilate(k, rd))
    fg, bg = draw(st.sampled_from([(1, 1), (2, 1), (1, 2)]))
    in_per_group, out_per_group, batch = draw(st.integers(1, 2)), draw(st.integers(1, 3)), draw(st.integers(1, 2))
    rng = np.random.default_rng(draw(st.integers(0, 2 ** 16)))
    names = "HWD"[:n_sp]
    rhs_spec = list(_permuted(rng, "OI" + names))    # the spatial axes in order (the rhs's order is canonical)
    rhs_spec = "".join(next(iter_names) if ch in names else ch for iter_names in [iter(names)] for ch in rhs_spec)
    specs = (_permuted(rng, "NC" + names), rhs_spec, _permuted(rng, "NC" + names))
    canonical = {"N": batch * bg, "C": in_per_group * fg, "O": out_per_group * fg * bg, "I": in_per_group}
    lhs = rng.integers(-3, 4, [dict(canonical, **dict(zip(names, space)))[ch] for ch in specs[0]])
    rhs = rng.integers(-3, 4, [dict(canonical, **dict(zip(names, kernel)))[ch] for ch in specs[1]])
    params = {"window_strides": strides, "padding": padding, "lhs_dilation": lhs_dil, "rhs_dilation": rhs_dil,
              "dimension_numbers": specs, "feature_group_count": fg, "batch_group_count": bg}
    return lhs.astype(np.float64), rhs.astype(np.float64), params


def _lowering_geometry(lhs, rhs, dtype, params):
    """The compiled lowering's view of this convolution (conv_lowering's tiling choice)."""
    from tracejit.core.avals import ShapedArray
    from tracejit.primitives import conv_lowering

    dn = lax.conv_dimension_numbers(lhs.shape, rhs.shape, params["dimension_numbers"])
    out = lax.conv_general_dilated(lhs, rhs, **params).shape
    avals = [ShapedArray(s, np.dtype(dtype)) for s in (lhs.shape, rhs.shape, out)]
    return conv_lowering._Geometry(*avals, **{**params, "dimension_numbers": dn,
                                              "padding": tuple(map(tuple, params["padding"]))})


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
@given(kernel_lanes_problems(), st.sampled_from([np.float64, np.float32, np.int32]))
def test_kernel_lanes_against_the_definition(problem, dtype):
    """Long kernels, short outputs: compiled, with the lanes along the kernel, against the reference (exact)."""
    lhs, rhs, params = problem
    assert _lowering_geometry(lhs, rhs, dtype, params).along_kernel
    dn = lax.conv_dimension_numbers(lhs.shape, rhs.shape, params["dimension_numbers"])
    want = reference_conv(lhs, rhs, params["window_strides"], params["padding"], params["lhs_dilation"],
                          params["rhs_dilation"], dn, params["feature_group_count"], params["batch_group_count"])
    got = tj.jit(lambda a, b: lax.conv_general_dilated(a, b, **params))(lhs.astype(dtype), rhs.astype(dtype))
    np.testing.assert_array_equal(got, want.astype(dtype))


# name, lhs shape, rhs shape, strides, padding, options
JAX_CASES = [
    ("NCHW valid", (2, 3, 7, 6), (4, 3, 3, 2), (1, 1), "VALID", {}),
    ("NHWC same strided", (2, 7, 6, 3), (3, 2, 3, 4), (2, 1), "SAME", {"dimension_numbers": ("NHWC", "HWIO", "NHWC")}),
    ("depthwise same_lower", (2, 7, 6, 4), (3, 2, 1, 8), (1, 2), "SAME_LOWER",
     {"dimension_numbers": ("NHWC", "HWIO", "NHWC"), "feature_group_count": 4}),
    ("1d batch groups, dilations", (4, 3, 9), (6, 3, 3), (2,), ((2, -1),),
     {"lhs_dilation": (2,), "rhs_dilation": (2,), "batch_group_count": 2}),
    ("3d", (2, 3, 5, 4, 3), (2, 3, 2, 2, 2), (1, 2, 1), ((1, 0), (0, 1), (1, 1)), {"rhs_dilation": (1, 2, 1)}),
    ("odd layouts, transposed", (3, 2, 6, 5), (3, 4, 3, 3), (1, 1), ((1, 2), (0, 1)),
     {"dimension_numbers": ("CNHW", "IOHW", "HNWC"), "lhs_dilation": (2, 1)}),
    ("lenet conv2", (4, 12, 12, 6), (5, 5, 6, 16), (1, 1), "VALID", {"dimension_numbers": ("NHWC", "HWIO", "NHWC")}),
    # few input channels: the forward's tiles along x stored by shuffles into NHWC, the kernel gradient's lanes
    # along the kernel (conv_kernel_lanes)
    ("lenet conv1", (3, 28, 28, 1), (5, 5, 1, 6), (1, 1), "VALID", {"dimension_numbers": ("NHWC", "HWIO", "NHWC")}),
    ("2 channels padded, row dilation", (2, 17, 19, 2), (5, 3, 2, 6), (1, 1), ((2, 1), (1, 3)),
     {"dimension_numbers": ("NHWC", "HWIO", "NHWC"), "rhs_dilation": (2, 1), "lhs_dilation": (2, 1)}),
    ("3 channels strided, NCHW", (2, 3, 16, 15), (5, 3, 3, 3), (2, 2), "SAME", {}),
    ("1 channel per group, 3d", (2, 5, 11, 10, 2), (2, 3, 3, 1, 4), (1, 1, 1), "VALID",
     {"dimension_numbers": ("NDHWC", "DHWIO", "NDHWC"), "feature_group_count": 2}),
]


@pytest.mark.parametrize("case", JAX_CASES, ids=[c[0] for c in JAX_CASES])
def test_against_jax(jax64, case):
    """Values and both gradients against JAX's; for two of the cases vmap over lhs, rhs and both too."""
    _, lhs_shape, rhs_shape, strides, padding, options = case
    rng = np.random.default_rng(1)
    x, w = rng.normal(size=lhs_shape), rng.normal(size=rhs_shape)

    def ours(x, w):
        return lax.conv_general_dilated(x, w, strides, padding, **options)

    def theirs(x, w):
        return jax64.lax.conv_general_dilated(x, w, strides, padding, **options)

    out = ours(x, w)
    np.testing.assert_allclose(out, theirs(x, w), rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(tj.jit(ours)(x, w), out, rtol=1e-12, atol=1e-12)
    ct = rng.normal(size=out.shape)
    grads = tj.jit(tj.grad(lambda x, w: tnp.sum(ours(x, w) * ct), argnums=(0, 1)))(x, w)
    want = jax64.grad(lambda x, w: (theirs(x, w) * ct).sum(), argnums=(0, 1))(x, w)
    for g, v in zip(grads, want):
        np.testing.assert_allclose(g, v, rtol=1e-11, atol=1e-11)
    if case[0] not in ("NHWC same strided", "1d batch groups, dilations"):
        return
    xs, ws = rng.normal(size=(3, *lhs_shape)), rng.normal(size=(3, *rhs_shape))
    for axes in ((0, 0), (0, None), (None, 0)):
        args = (xs if axes[0] is not None else x, ws if axes[1] is not None else w)
        np.testing.assert_allclose(tj.vmap(ours, in_axes=axes)(*args), jax64.vmap(theirs, in_axes=axes)(*args),
                                   rtol=1e-11, atol=1e-11, err_msg=str(axes))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("groups", [1, 2, 3])
def test_narrow_feature_tiles_scatter_to_channels_last_outputs(jax64, dtype, groups):
    """Depthwise-like NHWC convolutions (1 to 3 output features per group) store each tile's vectors by strided
    scatters: values as JAX's, rows whose length (37) leaves a partial vector, and the LLVM text has the scatters
    (the code a 3x3 depthwise convolution compiled held one store per element before)."""
    rng = np.random.default_rng(7)
    x = rng.normal(size=(2, 5, 37, 6)).astype(dtype)
    w = rng.normal(size=(3, 3, 6 // 6, 6 * groups)).astype(dtype)
    dn = ("NHWC", "HWIO", "NHWC")

    def conv(lax_, x, w):
        return lax_.conv_general_dilated(x, w, (1, 1), "SAME", dimension_numbers=dn, feature_group_count=6)
    f = tj.jit(lambda x, w: conv(lax, x, w))
    tol = 1e-4 if dtype == np.float32 else 1e-12
    np.testing.assert_allclose(f(x, w), conv(jax64.lax, x, w), rtol=tol, atol=tol)
    assert "llvm.masked.scatter" in f.lower(x, w).as_llvm()


@pytest.mark.parametrize("groups", [(1, 1), (2, 1), (1, 2)])
def test_gradients_to_second_order(groups):
    fg, bg = groups
    rng = np.random.default_rng(2)
    x, w = rng.normal(size=(2 * bg, 2 * fg, 5, 4)), rng.normal(size=(2 * fg * bg, 2, 3, 2))

    def f(x, w):
        out = lax.conv_general_dilated(x, w, (2, 1), ((1, 0), (0, 1)), lhs_dilation=(1, 2), rhs_dilation=(2, 1),
                                       feature_group_count=fg, batch_group_count=bg)
        return tnp.tanh(out)

    check_grads(f, (x, w), order=2)


def test_vmap_with_batch_axes_anywhere():
    rng = np.random.default_rng(3)
    x = rng.normal(size=(2, 4, 3, 6))
    xs, ws = rng.normal(size=(2, 4, 3, 3, 6)), rng.normal(size=(6, 2, 3, 2, 3))

    def f(x, w):
        return lax.conv_general_dilated(x, w, (1, 2), "SAME", dimension_numbers=("NCWH", "OIWH", "NHWC"),
                                        feature_group_count=2)

    got = tj.vmap(f, in_axes=(3, 4), out_axes=1)(xs, ws)
    want = np.stack([f(xs[:, :, :, k], ws[..., k]) for k in range(3)], axis=1)
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)
    got = tj.jit(tj.vmap(f, in_axes=(None, 4)))(x, ws)
    np.testing.assert_allclose(got, np.stack([f(x, ws[..., k]) for k in range(3)]), rtol=1e-12, atol=1e-12)


def test_the_ir_names_the_primitive_with_jax_params():
    x, w = np.ones((1, 2, 5), np.float32), np.ones((3, 2, 2), np.float32)
    text = str(tj.make_ir(lambda x, w: lax.conv(x, w, (1,), "SAME"))(x, w))
    assert "conv_general_dilated[" in text and "padding=((0, 1),)" in text and "feature_group_count=1" in text


def test_shape_helpers_and_dimension_numbers():
    dn = lax.conv_dimension_numbers((1, 28, 28, 3), (5, 5, 3, 8), ("NHWC", "HWIO", "NHWC"))
    assert dn == lax.ConvDimensionNumbers((0, 3, 1, 2), (3, 2, 0, 1), (0, 3, 1, 2))
    assert lax.conv_general_permutations(("NCHW", "OIHW", "NCHW")) == ((0, 1, 2, 3),) * 3
    assert lax.conv_general_shape_tuple((4, 28, 28, 1), (5, 5, 1, 6), (1, 1), "VALID",
                                        ("NHWC", "HWIO", "NHWC")) == (4, 24, 24, 6)
    assert lax.conv_general_shape_tuple((4, 1, 28, 28), (6, 1, 5, 5), (2, 2), "SAME", None) == (4, 6, 14, 14)
    assert lax.conv_shape_tuple((4, 1, 9), (6, 1, 3), (2,), [(1, 1)]) == (4, 6, 5)
    assert lax.padtype_to_pads((7, 8), (3, 2), (2, 3), "SAME") == [(1, 1), (0, 0)]
    assert lax.padtype_to_pads((7, 8), (4, 3), (2, 3), "SAME_LOWER") == [(2, 1), (1, 0)]
    assert lax.padtype_to_pads((7, 8), (4, 3), (2, 3), "same") == [(1, 2), (0, 1)]
    assert lax.conv_transpose_shape_tuple((2, 5, 5, 3), (3, 3, 3, 4), (2, 2), "SAME",
                                          ("NHWC", "HWIO", "NHWC")) == (2, 10, 10, 4)


def test_shorthands_against_jax(jax64):
    rng = np.random.default_rng(4)
    x, w = rng.normal(size=(2, 3, 7, 6)), rng.normal(size=(4, 3, 3, 2))
    np.testing.assert_allclose(lax.conv(x, w, (2, 1), "SAME"), jax64.lax.conv(x, w, (2, 1), "SAME"), atol=1e-12)
    np.testing.assert_allclose(lax.conv_with_general_padding(x, w, (1, 1), ((1, 0), (2, 1)), (2, 1), (1, 2)),
                               jax64.lax.conv_with_general_padding(x, w, (1, 1), ((1, 0), (2, 1)), (2, 1), (1, 2)),
                               atol=1e-12)
    xt = rng.normal(size=(2, 5, 4, 3))
    for padding, kernel in itertools.product(["SAME", "VALID", ((1, 2), (0, 1))], [False, True]):
        wt = rng.normal(size=(3, 3, 4, 3) if kernel else (3, 3, 3, 4))    # (in, out) swapped by transpose_kernel
        got = tj.jit(lambda a, b: lax.conv_transpose(a, b, (2, 2), padding, transpose_kernel=kernel))(xt, wt)
        want = jax64.lax.conv_transpose(xt, wt, (2, 2), padding, transpose_kernel=kernel)
        np.testing.assert_allclose(got, want, atol=1e-12, err_msg=str((padding, kernel)))


def test_preferred_element_type_and_dtypes():
    x, w = np.arange(12, dtype=np.int32).reshape(1, 2, 6), np.ones((1, 2, 3), np.int32)
    out = tj.jit(lambda x, w: lax.conv(x, w, (1,), "VALID", preferred_element_type=np.float64))(x, w)
    assert out.dtype == np.float64
    np.testing.assert_array_equal(out, lax.conv(x.astype(np.float64), w.astype(np.float64), (1,), "VALID"))
    grad = tj.grad(lambda w: tnp.sum(lax.conv(x.astype(np.float32), w, (1,), "VALID",
                                              preferred_element_type=np.float64)))(w.astype(np.float32))
    assert grad.dtype == np.float32
    np.testing.assert_array_equal(grad, [[[6, 10, 14], [30, 34, 38]]])      # sums of 4 neighbours


def test_bad_arguments_are_named():
    x, w = np.ones((1, 4, 5, 5), np.float32), np.ones((6, 3, 3, 3), np.float32)
    with pytest.raises(tj.ShapeError, match="feature_group_count"):
        lax.conv(x, w, (1, 1), "VALID")
    with pytest.raises(TypeError, match="share a numeric"):
        lax.conv(x, w.astype(np.float64)[:, :1].repeat(4, 1), (1, 1), "VALID")
    with pytest.raises(ValueError, match="window_strides"):
        lax.conv(x, np.ones((6, 4, 3, 3), np.float32), (1,), "VALID")
    with pytest.raises(TypeError, match="exactly once"):
        lax.conv_general_dilated(x, w, (1, 1), "VALID", dimension_numbers=("NCHH", "OIHW", "NCHW"))
    with pytest.raises(ValueError, match="padding"):
        lax.conv(x, np.ones((6, 4, 3, 3), np.float32), (1, 1), "FULL")
    with pytest.raises(ValueError, match="lhs_dilation"):
        lax.conv_general_dilated(x, np.ones((6, 4, 3, 3), np.float32), (1, 1), "SAME", lhs_dilation=(2, 2))


@pytest.mark.parametrize("mode", ["full", "same", "valid"])
def test_numpy_convolve_and_correlate(mode):
    rng = np.random.default_rng(5)
    for la, lv in [(7, 3), (3, 7), (6, 4), (4, 6), (5, 5), (1, 4), (8, 1)]:
        a, v = rng.normal(size=la), rng.normal(size=lv)
        for ours, theirs in ((tnp.convolve, np.convolve), (tnp.correlate, np.correlate)):
            np.testing.assert_allclose(tj.jit(lambda a, v: ours(a, v, mode))(a, v), theirs(a, v, mode),
                                       atol=1e-12, err_msg=f"{theirs.__name__} {la} {lv}")
    a, v = np.array([1, 2, 3]), np.array([0, 1, 5, 2])
    np.testing.assert_array_equal(tnp.convolve(a, v, mode), np.convolve(a, v, mode))
    assert tnp.convolve(a, v, mode).dtype == np.convolve(a, v, mode).dtype
    with pytest.raises(ValueError, match="mode"):
        tnp.convolve(a, v, "circular")


def test_empty_operands():
    """Zero batch, features, kernel or input sizes: the shapes JAX gives (it refuses zero-size windows), zeros."""
    for lhs, rhs, padding in [((2, 0, 5), (3, 0, 2), "VALID"), ((2, 3, 5), (3, 3, 0), ((1, 1),)),
                              ((0, 3, 5), (3, 3, 2), "VALID"), ((2, 3, 0), (3, 3, 1), ((1, 1),)),
                              ((2, 3, 4), (0, 3, 2), "VALID")]:
        x, w = np.ones(lhs), np.ones(rhs)
        conv = lambda x, w: lax.conv_general_dilated(x, w, (1,), padding)
        want = reference_conv(x, w, (1,), lax.padtype_to_pads(lhs[2:], rhs[2:], (1,), padding)
                              if isinstance(padding, str) else padding, (1,), (1,), ((0, 1, 2),) * 3)
        np.testing.assert_array_equal(conv(x, w), want)
        np.testing.assert_array_equal(tj.jit(conv)(x, w), want)
        grads = tj.jit(tj.grad(lambda x, w: tnp.sum(conv(x, w) ** 2), argnums=(0, 1)))(x, w)
        assert [g.shape for g in grads] == [lhs, rhs] and not any(np.any(g) for g in grads)
    # an empty output along the second last axis: once a division by zero when the tiles were planned
    out = tj.jit(lambda x, w: lax.conv_general_dilated(x, w, (1, 1), ((0, 0), (0, -1))))(np.ones((1, 1, 2, 1)),
                                                                                           np.ones((1, 1, 1, 1)))
    assert out.shape == (1, 1, 2, 0)
