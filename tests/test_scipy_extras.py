"""tracejit.scipy.fft (dct, idct, dctn, idctn), tracejit.scipy.ndimage.map_coordinates and
tracejit.scipy.integrate.trapezoid: values against SciPy and JAX (eager and compiled, float32 kept), derivatives
against JAX's, batching, and the errors JAX raises."""
import numpy as np
import pytest

import tracejit as tj
import tracejit.numpy as tnp
import tracejit.scipy as tsp
from tracejit.scipy import fft as tfft
from tracejit.scipy import integrate, ndimage

sfft = pytest.importorskip("scipy.fft")
sndimage = pytest.importorskip("scipy.ndimage")
sintegrate = pytest.importorskip("scipy.integrate")
try:
    import jax
    import jax.numpy as jnp
    import jax.scipy as jsp

    jax.config.update("jax_enable_x64", True)
except ImportError:
    jax = jnp = jsp = None

needs_jax = pytest.mark.skipif(jax is None, reason="JAX is the reference")
rng = np.random.default_rng(0)
MODES = ("constant", "nearest", "wrap", "mirror", "reflect")
# JAX's 'constant' and 'wrap' are SciPy's 'grid-constant' and 'grid-wrap' (SciPy kept its old modes' behaviour)
SCIPY_MODE = {"constant": "grid-constant", "wrap": "grid-wrap"}


def test_registered():
    assert tsp.fft is tfft and tsp.ndimage is ndimage and tsp.integrate is integrate
    assert {"fft", "integrate", "ndimage"} <= set(tsp.__all__)


@pytest.mark.parametrize("shape, axis", [((7,), -1), ((3, 8), 0), ((3, 8), -1), ((2, 5, 4), 1)])
@pytest.mark.parametrize("name", ["dct", "idct"])
def test_dct_against_scipy(name, shape, axis):
    """Every length (cropped, as given, zero-padded) and norm, eagerly and compiled."""
    x = rng.normal(size=shape)
    ours, theirs = getattr(tfft, name), getattr(sfft, name)
    for n in (None, 2, shape[axis] + 3):
        for norm in (None, "backward", "ortho"):
            np.testing.assert_allclose(ours(x, n=n, axis=axis, norm=norm), theirs(x, n=n, axis=axis, norm=norm),
                                       rtol=1e-12, atol=1e-12, err_msg=f"{n} {norm}")
    compiled = tj.jit(lambda x: ours(x, n=5, axis=axis, norm="ortho"))(x)
    np.testing.assert_allclose(compiled, theirs(x, n=5, axis=axis, norm="ortho"), rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("s, axes", [(None, None), ((3, 6), None), ((5,), (0,)), ((2, 3, 7), (2, 0, 1)),
                                     (None, (-1, 0)), (4, None)])
@pytest.mark.parametrize("name", ["dctn", "idctn"])
def test_dctn_against_scipy(name, s, axes):
    x = rng.normal(size=(4, 5, 3))
    ours, theirs = getattr(tfft, name), getattr(sfft, name)
    for norm in (None, "ortho"):
        np.testing.assert_allclose(ours(x, s=s, axes=axes, norm=norm), theirs(x, s=s, axes=axes, norm=norm),
                                   rtol=1e-11, atol=1e-11)
    compiled = tj.jit(lambda x: ours(x, s=s, axes=axes, norm="ortho"))(x)
    np.testing.assert_allclose(compiled, theirs(x, s=s, axes=axes, norm="ortho"), rtol=1e-11, atol=1e-11)


@needs_jax
@pytest.mark.parametrize("s, axes", [((3, 6), (1,)), ((6,), (0, 2)), ([2, 2], None)])
def test_dctn_pairs_s_and_axes_as_jax(s, axes):
    """JAX pairs s with axes as far as both go (SciPy refuses lengths that differ)."""
    x = rng.normal(size=(4, 5, 3))
    want = jax.jit(lambda x: [jsp.fft.dctn(x, s=s, axes=axes), jsp.fft.idctn(x, s=s, axes=axes)])(x)
    for ours, theirs in zip((tfft.dctn, tfft.idctn), want):
        np.testing.assert_allclose(ours(x, s=s, axes=axes), theirs, rtol=1e-11, atol=1e-11)


def test_dct_dtypes_and_inverse():
    """float32 stays float32 (within float32's accuracy), complex input is transformed by parts, integers in
    float64; idct inverts dct for either norm."""
    x = rng.normal(size=(6, 5))
    for fn in (tfft.dct, tfft.idct, tfft.dctn, tfft.idctn):
        theirs = getattr(sfft, fn.__name__)
        for got in (fn(x.astype(np.float32)), tj.jit(fn)(x.astype(np.float32))):
            assert got.dtype == np.float32
            np.testing.assert_allclose(got, theirs(x.astype(np.float32).astype(np.float64)), rtol=2e-5, atol=2e-5)
        z = x + 1j * rng.normal(size=x.shape)
        for got in (fn(z), tj.jit(fn)(z)):
            assert got.dtype == np.complex128
            np.testing.assert_allclose(got, theirs(z), rtol=1e-12, atol=1e-12)
        assert fn(z.astype(np.complex64)).dtype == np.complex64
        k = np.arange(12).reshape(3, 4)
        assert fn(k).dtype == np.float64
        np.testing.assert_allclose(fn(k), theirs(k.astype(np.float64)), rtol=1e-12, atol=1e-12)
    for norm in (None, "ortho"):
        np.testing.assert_allclose(tfft.idct(tfft.dct(x, norm=norm), norm=norm), x, atol=1e-13)
        np.testing.assert_allclose(tfft.idctn(tfft.dctn(x, norm=norm), norm=norm), x, atol=1e-13)


def _coordinates(shape, size=9):
    """Coordinates inside, between and well outside every axis's samples."""
    return [rng.uniform(-2.5 * n - 1, 2.5 * n + 1, size) for n in shape]


@needs_jax
@pytest.mark.parametrize("shape", [(6,), (4, 5), (1, 3), (3, 2, 4)])
def test_map_coordinates_against_jax(shape):
    """Every mode and order, eager and compiled, a cval, and single-sample axes (which mirror onto themselves)."""
    image, coordinates = rng.normal(size=shape), _coordinates(shape)
    compiled = tj.jit(ndimage.map_coordinates, static_argnums=(2, 3))
    cases = [(mode, order) for mode in MODES for order in (0, 1)]
    wants = jax.jit(lambda i, c: [jsp.ndimage.map_coordinates(i, c, order, mode=mode, cval=1.5)
                                  for mode, order in cases])(image, coordinates)
    for (mode, order), want in zip(cases, wants):
        for got in (ndimage.map_coordinates(image, coordinates, order, mode=mode, cval=1.5),
                    compiled(image, coordinates, order, mode, 1.5)):
            assert got.dtype == np.float64
            np.testing.assert_allclose(got, want, rtol=1e-13, atol=1e-13, err_msg=f"{mode} {order}")


@pytest.mark.parametrize("order", [0, 1])
@pytest.mark.parametrize("mode", MODES)
def test_map_coordinates_against_scipy(mode, order):
    image = rng.normal(size=(5, 7))
    coordinates = _coordinates(image.shape, 20)
    want = sndimage.map_coordinates(image, coordinates, order=order, mode=SCIPY_MODE.get(mode, mode), cval=-2.0)
    np.testing.assert_allclose(ndimage.map_coordinates(image, coordinates, order, mode=mode, cval=-2.0), want,
                               rtol=1e-12, atol=1e-12)


@needs_jax
def test_map_coordinates_dtypes_as_jax():
    """float32 kept (with float64 coordinates), integer images rounded (halves away from zero), integer
    coordinates, broadcast coordinates, an array of coordinates, halves rounded away from zero at order 0."""
    image = rng.normal(size=(4, 6))
    cases = [
        (image.astype(np.float32), _coordinates((4, 6)), 1),
        (np.arange(24).reshape(4, 6), [np.array([0.25, 1.5, 2.5, 3.9]), np.array([0.5, 2.5, 1.75, -0.5])], 1),
        (image, [np.array([0, 3, -1]), np.array([5, 2, 7])], 0),
        (image, [np.array([0.5, -0.5, 1.5, 2.5]), np.array([1.5, 2.5, -1.5, 4.5])], 0),
        (image, [rng.uniform(0, 3, (3, 1)), rng.uniform(0, 5, (1, 4))], 1),
        (image, np.stack(_coordinates((4, 6))), 1),
    ]
    for img, coordinates, order in cases:
        want = np.asarray(jax.jit(jsp.ndimage.map_coordinates, static_argnums=(2, 3))(img, coordinates, order,
                                                                                      "reflect"))
        for got in (ndimage.map_coordinates(img, coordinates, order, mode="reflect"),
                    tj.jit(ndimage.map_coordinates, static_argnums=(2, 3))(img, coordinates, order, "reflect")):
            assert got.dtype == want.dtype and got.shape == want.shape
            np.testing.assert_allclose(got, want, rtol=1e-6 if img.dtype == np.float32 else 1e-13)


@pytest.mark.parametrize("x, dx, axis", [(None, 1.0, -1), (None, 0.25, 0), ("1d", 1.0, 1), ("nd", 1.0, 0)])
def test_trapezoid(x, dx, axis):
    y = rng.normal(size=(4, 5))
    xs = {None: None, "1d": np.sort(rng.normal(size=y.shape[axis])), "nd": np.sort(rng.normal(size=y.shape), axis=0)}[x]
    want = sintegrate.trapezoid(y, xs, dx=dx, axis=axis)
    for got in (integrate.trapezoid(y, xs, dx, axis), tj.jit(integrate.trapezoid, static_argnums=3)(y, xs, dx, axis)):
        np.testing.assert_allclose(got, want, rtol=1e-12)
    if jax is not None:
        np.testing.assert_allclose(integrate.trapezoid(y, xs, dx, axis), jsp.integrate.trapezoid(y, xs, dx, axis),
                                   rtol=1e-12)
    assert integrate.trapezoid(y.astype(np.float32), dx=dx, axis=axis).dtype == np.float32
    assert integrate.trapezoid(np.arange(5)).dtype == np.float64


@needs_jax
@pytest.mark.parametrize("name", ["dct", "idct", "dctn", "idctn"])
def test_dct_grad_and_vmap_against_jax(name):
    """Plain and compiled derivatives, and batching over the rows."""
    x, w = rng.normal(size=(4, 6)), rng.normal(size=(4, 6))
    ours, theirs = getattr(tfft, name), getattr(jsp.fft, name)
    want = jax.jit(jax.grad(lambda x: jnp.sum(w * theirs(x, norm="ortho") ** 2)))(x)
    loss = tj.grad(lambda x: tnp.sum(w * ours(x, norm="ortho") ** 2))
    for got in (loss(x), tj.jit(loss)(x)):
        np.testing.assert_allclose(got, want, rtol=1e-10)
    np.testing.assert_allclose(tj.vmap(ours)(x), jax.jit(jax.vmap(theirs))(x), rtol=1e-12, atol=1e-12)


@needs_jax
@pytest.mark.parametrize("mode", ["constant", "mirror"])
def test_map_coordinates_grad_and_vmap_against_jax(mode):
    """Derivatives in the image and in each axis's coordinates, plain and compiled; batching over points."""
    image, (rows, cols) = rng.normal(size=(4, 5)), _coordinates((4, 5), 6)

    def ours(i, r, c):
        return tnp.sum(ndimage.map_coordinates(i, [r, c], 1, mode=mode, cval=0.5) ** 2)

    def theirs(i, r, c):
        return jnp.sum(jsp.ndimage.map_coordinates(i, [r, c], 1, mode=mode, cval=0.5) ** 2)
    for argnum in (0, 1, 2):
        want = jax.jit(jax.grad(theirs, argnum))(image, rows, cols)
        np.testing.assert_allclose(tj.grad(ours, argnum)(image, rows, cols), want, rtol=1e-10)
        np.testing.assert_allclose(tj.jit(tj.grad(ours, argnum))(image, rows, cols), want, rtol=1e-10)
    points = rng.uniform(-1, 4, (3, 2, 5))
    np.testing.assert_allclose(tj.vmap(lambda p: ndimage.map_coordinates(image, p, 1, mode=mode))(points),
                               jax.jit(jax.vmap(lambda p: jsp.ndimage.map_coordinates(image, p, 1, mode=mode)))(points),
                               rtol=1e-13)


@needs_jax
@pytest.mark.parametrize("argnum", [0, 1])
def test_trapezoid_grad_against_jax(argnum):
    y, xs = rng.normal(size=(3, 5)), np.sort(rng.normal(size=5))
    want = jax.jit(jax.grad(lambda y, x: jnp.sum(jsp.integrate.trapezoid(y, x) ** 2), argnum))(y, xs)
    got = tj.grad(lambda y, x: tnp.sum(integrate.trapezoid(y, x) ** 2), argnum)(y, xs)
    np.testing.assert_allclose(got, want, rtol=1e-12)


X = np.ones((3, 4))
C = [np.array([0.5]), np.array([1.5])]
# each called with tracejit.scipy and with jax.scipy: ours must raise JAX's exception (or a subclass)
ERRORS = {
    "dct type 1": (lambda m: m.fft.dct(X, type=1)),
    "idct type 3": (lambda m: m.fft.idct(X, type=3)),
    "dctn type 4": (lambda m: m.fft.dctn(X, type=4)),
    "idctn type 1": (lambda m: m.fft.idctn(X, type=1)),
    "dct norm forward": (lambda m: m.fft.dct(X, norm="forward")),
    "idctn norm bad": (lambda m: m.fft.idctn(X, norm="bad")),
    "dct axis out of bounds": (lambda m: m.fft.dct(X, axis=2)),
    "dct of a scalar": (lambda m: m.fft.dct(np.float64(1.0))),
    "dctn long s": (lambda m: m.fft.dctn(X, s=(2, 3, 4))),
    "idctn repeated axes": (lambda m: m.fft.idctn(X, axes=(0, -2))),
    "map_coordinates too few coordinates": (lambda m: m.ndimage.map_coordinates(X, C[:1], 1)),
    "map_coordinates order 2": (lambda m: m.ndimage.map_coordinates(X, C, 2)),
    "map_coordinates mode grid-wrap": (lambda m: m.ndimage.map_coordinates(X, C, 1, mode="grid-wrap")),
    "trapezoid axis out of bounds": (lambda m: m.integrate.trapezoid(X, axis=2)),
    "trapezoid mismatched x": (lambda m: m.integrate.trapezoid(X, x=np.ones(3))),
}


@needs_jax
@pytest.mark.parametrize("case", ERRORS)
def test_errors_as_jax(case):
    with pytest.raises(Exception) as theirs:
        ERRORS[case](jsp)
    with pytest.raises(theirs.type):
        ERRORS[case](tsp)


def test_dct_refuses_empty_lengths():
    """n < 1 is a ValueError, as SciPy's (JAX fails inside its slicing with a TypeError)."""
    for fn in (tfft.dct, tfft.idct):
        with pytest.raises(ValueError, match="invalid number of data points"):
            fn(X, n=0)
    with pytest.raises(ValueError):
        tfft.dctn(X, s=(0, 2))
