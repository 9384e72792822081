"""tracejit.image (jax.image): resize and scale_and_translate against JAX for every method, with and without
antialias (values, dtypes, shapes), compiled and batched, their derivatives in the image and in the scale and
translation against finite differences, and JAX's errors. Each JAX reference costs a compile (about 0.2 s): the
compiled, batched and differentiated results are held against the eager ones, which are held against JAX."""
import numpy as np
import pytest

import tracejit as tj
import tracejit.image
import tracejit.numpy as tnp

ti = tracejit.image
jax = pytest.importorskip("jax")
jnp = jax.numpy
rng = np.random.default_rng(0)
METHODS = ("nearest", "linear", "cubic", "lanczos3", "lanczos5", "cubic-pytorch", "area")
IMAGE = rng.normal(size=(2, 5, 7, 3)).astype(np.float32)


# JAX compiles each (method, antialias, shape) once, about 0.2 s: one output shape that shrinks one dimension,
# enlarges another and keeps the rest; antialias off for one kernel function and for cubic-pytorch, whose kernel
# and edge padding it changes ('area' ignores it)
CASES = [(method, True) for method in METHODS] + [(m, False) for m in ("lanczos3", "cubic-pytorch")]


@pytest.mark.parametrize("method, antialias", CASES)
def test_resize_against_jax(method, antialias):
    """float32 kept, values as JAX's."""
    shape = (1, 9, 4, 3)
    ours = ti.resize(IMAGE, shape, method, antialias=antialias)
    theirs = np.asarray(jax.image.resize(IMAGE, shape, method, antialias=antialias))
    assert ours.dtype == theirs.dtype == np.float32 and ours.shape == shape
    np.testing.assert_allclose(ours, theirs, rtol=2e-6, atol=2e-6)


def test_resize_dtypes_and_method_objects():
    """Integers: 'nearest' keeps them, the other methods give float32 up to 32 bits and float64 for 64-bit
    integers (JAX's promotion with x64); ResizeMethod members and aliases name the same methods; an unchanged
    shape is the identity."""
    ints = np.arange(12, dtype=np.uint8).reshape(3, 4)
    np.testing.assert_array_equal(ti.resize(ints, (5, 7), "nearest"), jax.image.resize(ints, (5, 7), "nearest"))
    assert ti.resize(ints, (5, 7), "nearest").dtype == np.uint8
    for dtype, rtol in ((np.int32, 1e-6), (np.int64, 1e-13)):
        ours = ti.resize(ints.astype(dtype), (5, 7), ti.ResizeMethod.LINEAR)
        theirs = np.asarray(jax.image.resize(ints.astype(dtype), (5, 7), "bilinear"))
        assert ours.dtype == theirs.dtype
        np.testing.assert_allclose(ours, theirs, rtol=rtol, atol=rtol)
    assert ti.ResizeMethod.from_string("tricubic") is ti.ResizeMethod.CUBIC
    np.testing.assert_array_equal(ti.resize(IMAGE, IMAGE.shape, "lanczos3"), IMAGE)
    for precision in (None, "highest", tj.lax.Precision.DEFAULT):    # accepted, as JAX's (CPU sums in full)
        np.testing.assert_allclose(ti.resize(IMAGE, (1, 9, 4, 3), "linear", precision=precision),
                                   ti.resize(IMAGE, (1, 9, 4, 3), "linear"), rtol=1e-6)
    assert ti.resize(IMAGE, (2, 0, 7, 3), "linear").shape == (2, 0, 7, 3)


@pytest.mark.parametrize("method, antialias", [("lanczos3", True), ("cubic-pytorch", False), ("area", True)])
def test_scale_and_translate_against_jax(method, antialias):
    scale, translation = np.array([1.3, 0.6]), np.array([0.2, -0.4])

    def warp(module, x, s, t):
        return module.scale_and_translate(x, (2, 6, 5, 3), (1, 2), s, t, method, antialias)
    ours = warp(ti, IMAGE, scale, translation)
    theirs = np.asarray(jax.jit(lambda x, s, t: warp(jax.image, x, s, t))(IMAGE, scale, translation))
    assert ours.dtype == theirs.dtype == np.float32
    np.testing.assert_allclose(ours, theirs, rtol=2e-6, atol=2e-6)


def test_compiled_batched_and_constant_weights():
    """Under jit and vmap (over images, and over traced scales and translations) as the eager results, which the
    tests above hold against JAX; resize's weight matrices are constants of the program (only the contractions
    are traced)."""
    images = rng.normal(size=(4, 5, 7))
    ours = tj.jit(tj.vmap(lambda x: ti.resize(x, (8, 3), "cubic")))(images)
    np.testing.assert_allclose(ours, [ti.resize(x, (8, 3), "cubic") for x in images], rtol=1e-13, atol=1e-14)
    scales, translations = np.array([[1.3, 0.6], [0.8, 2.0]]), np.array([[0.2, -0.4], [0.0, 1.5]])

    def warp(s, t):
        return ti.scale_and_translate(images[0], (6, 5), (0, 1), s, t, "lanczos3")
    ours = tj.jit(tj.vmap(warp))(scales, translations)
    np.testing.assert_allclose(ours, [warp(s, t) for s, t in zip(scales, translations)], rtol=1e-13, atol=1e-14)
    text = str(tj.make_ir(lambda x: ti.resize(x, (4, 3), "linear"))(np.ones((2, 5), np.float32)))
    assert "iota" not in text and text.count("dot_general") == 2


def test_gradients():
    """d/d(image, scale, translation) through scale_and_translate and d/d(image) through resize, both modes,
    against finite differences, and a compiled reverse-mode gradient as the eager one."""
    image = rng.normal(size=(5, 7))
    scale, translation = np.array([1.3, 0.6]), np.array([0.2, -0.4])

    def warp(x, s, t):
        return ti.scale_and_translate(x, (6, 5), (0, 1), s, t, "cubic")
    # the cubic kernel is C1 only (its second derivative jumps at |x| = 1): a small step keeps the differences
    # within the tolerance
    tj.test_util.check_grads(warp, (image, scale, translation), order=1, eps=1e-7)
    tj.test_util.check_grads(lambda x: ti.resize(x, (3, 9), "lanczos5"), (image,), order=1)

    def loss(x, s, t):
        return tnp.sum(warp(x, s, t) ** 2)
    compiled = tj.jit(tj.grad(loss, argnums=(0, 1, 2)))(image, scale, translation)
    for a, b in zip(compiled, tj.grad(loss, argnums=(0, 1, 2))(image, scale, translation)):
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-14)


def test_errors_as_jax():
    with pytest.raises(ValueError, match="shape must have length equal"):
        ti.resize(IMAGE, (5, 6), "linear")
    with pytest.raises(ValueError, match='Unknown resize method "foo"'):
        ti.resize(IMAGE, IMAGE.shape, "foo")
    with pytest.raises(TypeError, match="concrete values of integer type"):
        ti.resize(IMAGE, (2, 5.0, 7, 3), "linear")
    with pytest.raises(ValueError, match="Nearest neighbor resampling is not currently supported"):
        ti.scale_and_translate(IMAGE, IMAGE.shape, (1,), np.ones(1), np.zeros(1), "nearest")
    with pytest.raises(ValueError, match=r"scale must have shape \(2,\)"):
        ti.scale_and_translate(IMAGE, IMAGE.shape, (1, 2), np.ones(3), np.zeros(2), "linear")
