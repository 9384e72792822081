"""tracejit.scipy.interpolate.RegularGridInterpolator, tracejit.scipy.spatial.transform (Rotation, Slerp) and
tracejit.scipy.cluster.vq: values against SciPy (which JAX's follow), against JAX where JAX's differ from SciPy's
(gimbal lock, extrapolation), JAX's dtypes, as pytrees under jit and vmap, derivatives against finite differences,
and JAX's errors. JAX itself is called once, jitted: its first eager calls of these many small operations take
seconds, and the whole file has a budget of a few."""
import functools

import numpy as np
import pytest

import tracejit as tj
import tracejit.numpy as tnp
import tracejit.random as trandom
import tracejit.scipy as tsp
import tracejit.scipy.spatial.transform
from tracejit.scipy.cluster.vq import vq
from tracejit.scipy.interpolate import RegularGridInterpolator
from tracejit.scipy.spatial.transform import Rotation, Slerp

jax = pytest.importorskip("jax")
jnp = jax.numpy
scipy_interpolate = pytest.importorskip("scipy.interpolate")
scipy_transform = pytest.importorskip("scipy.spatial.transform")
scipy_vq = pytest.importorskip("scipy.cluster.vq")

rng = np.random.default_rng(0)
GRID = (np.array([0.0, 1.0, 2.5]), np.array([-1.0, 0.0, 1.0, 3.0]))
VALUES = rng.normal(size=(3, 4, 2))
POINTS = rng.uniform(-1.5, 3.5, size=(5, 7, 2))    # about half of them outside the grid
QUATS = rng.normal(size=(6, 4))
SEQS = ("xyz", "ZYX", "xyx", "ZXZ", "yzx", "XZY")
GIMBAL = np.array([[0.3, 0.0, 0.2], [0.3, np.pi, 0.2], [0.1, np.pi / 2, 0.4], [0.1, -np.pi / 2, 0.4]])
SLERP_TIMES = np.array([0.0, 1.0, 2.5, 3.0, 4.0, 6.0])


def _jax_specific(module, quats):
    """What JAX computes differently from SciPy: Euler angles in gimbal lock (SciPy warns and splits the angle its
    own way), for one symmetric extrinsic and one asymmetric intrinsic sequence (JAX compiles each in about a
    second)."""
    rotation = module.Rotation
    return {seq: rotation.from_euler(seq, GIMBAL).as_euler(seq, degrees=True) for seq in ("xyx", "ZYX")}


@functools.cache
def jax_reference():
    jax = pytest.importorskip("jax")
    from jax.scipy.spatial import transform
    return jax.jit(lambda q: _jax_specific(transform, q))(QUATS)


def test_registered():
    assert tsp.interpolate.RegularGridInterpolator is RegularGridInterpolator
    assert tsp.spatial.transform.Rotation is Rotation and tsp.cluster.vq.vq is vq
    assert {"interpolate", "spatial", "cluster"} <= set(tsp.__all__)


# ------------------------------------------------------------------------------------------------- interpolate

@pytest.mark.parametrize("method", ["linear", "nearest"])
def test_interpolator_against_scipy(method):
    """NaN, a number and None (extrapolation) as fill values, trailing value dimensions, a tuple of coordinate
    arrays and a 1-D array of one point."""
    for fill_value in (np.nan, 0.5, None):
        ours = RegularGridInterpolator(GRID, VALUES, method, fill_value=fill_value)(POINTS)
        theirs = scipy_interpolate.RegularGridInterpolator(GRID, VALUES, method, bounds_error=False,
                                                          fill_value=fill_value)(POINTS)
        assert ours.shape == (5, 7, 2) and ours.dtype == np.float64
        np.testing.assert_allclose(ours, theirs, rtol=1e-13, atol=1e-14)
    ours = RegularGridInterpolator(GRID, VALUES[..., 0], method, fill_value=None)
    theirs = scipy_interpolate.RegularGridInterpolator(GRID, VALUES[..., 0], method, bounds_error=False,
                                                      fill_value=None)
    np.testing.assert_allclose(ours((POINTS[..., 0], POINTS[..., 1])), theirs((POINTS[..., 0], POINTS[..., 1])),
                               rtol=1e-13, atol=1e-14)
    np.testing.assert_allclose(ours(np.array([0.3, 2.0])), theirs(np.array([0.3, 2.0])), rtol=1e-13)


def test_interpolator_dtypes_as_jax():
    """float32 grid, values and points stay float32; int32 values become float32, int64 float64 (JAX's
    promotion); a float64 grid makes float32 values' distances, and the result, float64."""
    grid32 = tuple(g.astype(np.float32) for g in GRID)
    points32 = POINTS.astype(np.float32)
    ours = RegularGridInterpolator(grid32, VALUES[..., 0].astype(np.float32))(points32)
    assert ours.dtype == np.float32
    np.testing.assert_allclose(ours, RegularGridInterpolator(GRID, VALUES[..., 0])(POINTS), rtol=2e-5, atol=2e-5)
    ints = np.arange(12).reshape(3, 4)
    assert RegularGridInterpolator(grid32, ints.astype(np.int32), "nearest")(points32).dtype == np.float32
    assert RegularGridInterpolator(grid32, ints, "nearest")(points32).dtype == np.float64
    assert RegularGridInterpolator(GRID, VALUES.astype(np.float32))(POINTS).dtype == np.float64


def test_interpolator_is_a_pytree_under_jit_vmap_and_grad():
    interpolator = RegularGridInterpolator(GRID, VALUES, fill_value=None)
    leaves, treedef = tj.tree_util.tree_flatten(interpolator)
    assert len(leaves) == 3 and tj.tree_util.tree_unflatten(treedef, leaves).method == "linear"
    np.testing.assert_allclose(tj.jit(lambda r, q: r(q))(interpolator, POINTS), interpolator(POINTS), rtol=1e-14)
    batched = tj.vmap(lambda v: RegularGridInterpolator(GRID, v)(POINTS[0]))(np.stack([VALUES, 2 * VALUES]))
    np.testing.assert_allclose(batched[1], 2 * batched[0], rtol=1e-14)
    grads = tj.jit(tj.grad(lambda r, q: tnp.sum(tnp.sin(r(q))), argnums=(0, 1)))(interpolator, POINTS)
    assert isinstance(grads[0], RegularGridInterpolator)
    tj.test_util.check_grads(lambda v, q: RegularGridInterpolator(GRID, v, fill_value=None)(q), (VALUES, POINTS[0]),
                             order=1)
    np.testing.assert_allclose(grads[1][0], tj.grad(lambda q: tnp.sum(tnp.sin(interpolator(q))))(POINTS)[0],
                               rtol=1e-13)


def test_interpolator_errors_as_jax():
    with pytest.raises(ValueError, match="method 'cubic' is not defined"):
        RegularGridInterpolator(GRID, VALUES, "cubic")
    with pytest.raises(NotImplementedError, match="bounds_error"):
        RegularGridInterpolator(GRID, VALUES, bounds_error=True)
    with pytest.raises(ValueError, match="fill_value must be either 'None' or of a type compatible"):
        RegularGridInterpolator(GRID, VALUES, fill_value=1j)
    with pytest.raises(ValueError, match="there are 3 point arrays, but values has 2 dimensions"):
        RegularGridInterpolator(GRID + GRID[:1], VALUES[..., 0])
    with pytest.raises(ValueError, match="sample points xi have dimension 3"):
        RegularGridInterpolator(GRID, VALUES)(np.ones((4, 3)))
    with pytest.raises(ValueError, match="method 'cubic' is not defined"):
        RegularGridInterpolator(GRID, VALUES)(POINTS, method="cubic")


# ------------------------------------------------------------------------------------------------- Rotation

def test_rotation_against_scipy():
    vectors = rng.normal(size=(6, 3))
    ours, theirs = Rotation.from_quat(QUATS), scipy_transform.Rotation.from_quat(QUATS)
    pairs = [(ours.as_quat(), theirs.as_quat()),
             (ours.as_quat(canonical=True, scalar_first=True), theirs.as_quat(canonical=True, scalar_first=True)),
             (ours.as_matrix(), theirs.as_matrix()), (ours.as_rotvec(), theirs.as_rotvec()),
             (ours.as_rotvec(degrees=True), theirs.as_rotvec(degrees=True)), (ours.as_mrp(), theirs.as_mrp()),
             (ours.magnitude(), theirs.magnitude()), (ours.inv().as_quat(), theirs.inv().as_quat()),
             ((ours * ours[::-1]).as_quat(), (theirs * theirs[::-1]).as_quat()),
             (ours.apply(vectors), theirs.apply(vectors)),
             (ours.apply(vectors, inverse=True), theirs.apply(vectors, inverse=True)),
             (ours[0].apply(vectors), theirs[0].apply(vectors)), (ours[2:4].as_quat(), theirs[2:4].as_quat())]
    matrices, rotvecs, mrps = theirs.as_matrix(), theirs.as_rotvec(), theirs.as_mrp()
    pairs += [(Rotation.from_matrix(matrices).as_quat(canonical=True), theirs.as_quat(canonical=True)),
              (Rotation.from_rotvec(rotvecs).as_quat(canonical=True), theirs.as_quat(canonical=True)),
              (Rotation.from_rotvec(np.rad2deg(rotvecs), degrees=True).as_quat(canonical=True),
               theirs.as_quat(canonical=True)),
              (Rotation.from_mrp(mrps).as_quat(canonical=True), theirs.as_quat(canonical=True)),
              (Rotation.from_rotvec(np.full(3, 1e-5)).as_quat(),   # below 1e-3 rad: the series
               scipy_transform.Rotation.from_rotvec(np.full(3, 1e-5)).as_quat())]
    for seq in SEQS:
        angles = rng.uniform(-1, 1, size=(2, 3, 3))
        pairs += [(ours.as_euler(seq), theirs.as_euler(seq)),
                  (Rotation.from_euler(seq, angles, degrees=True).as_matrix(),
                   scipy_transform.Rotation.from_euler(seq, angles.reshape(-1, 3), degrees=True).as_matrix()
                   .reshape(2, 3, 3, 3))]
    for n, (a, b) in enumerate(pairs):
        assert a.shape == b.shape and a.dtype == np.float64, n
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-13, err_msg=str(n))
    stack32 = Rotation.from_quat(QUATS.astype(np.float32))    # float32 kept, as JAX's
    for value in (stack32.as_quat(), stack32.as_matrix(), stack32.as_rotvec(), stack32.as_mrp(),
                  stack32.magnitude(), stack32.as_euler("xyz"), stack32.apply(vectors.astype(np.float32)),
                  Rotation.from_mrp(stack32.as_mrp()).as_quat(), Rotation.from_matrix(stack32.as_matrix()).quat):
        assert value.dtype == np.float32
    single = Rotation.from_euler("y", 30, degrees=True)
    np.testing.assert_allclose(single.as_quat(), scipy_transform.Rotation.from_euler("y", 30, degrees=True).as_quat(),
                               rtol=1e-15)


def test_rotation_gimbal_lock_as_jax():
    ours = _jax_specific(tracejit.scipy.spatial.transform, QUATS)
    theirs = jax_reference()
    for name in ours:
        np.testing.assert_allclose(ours[name], theirs[name], rtol=1e-12, atol=1e-12, err_msg=name)
    for seq in SEQS:    # every kind of sequence: the angles chosen in gimbal lock give back the rotation
        rotations = Rotation.from_euler(seq, GIMBAL)
        np.testing.assert_allclose(Rotation.from_euler(seq, rotations.as_euler(seq)).as_matrix(),
                                   rotations.as_matrix(), atol=1e-12, err_msg=seq)


def test_rotation_single_identity_mean_random_concatenate():
    single = Rotation.from_rotvec(np.array([0.1, -0.2, 0.3]))
    assert single.single and single.as_matrix().shape == (3, 3)
    with pytest.raises(TypeError, match="Single rotation has no len"):
        len(single)
    with pytest.raises(TypeError, match="not subscriptable"):
        single[0]
    np.testing.assert_array_equal(Rotation.identity().as_matrix(), np.eye(3))
    assert Rotation.identity(3).as_quat().shape == (3, 4)
    assert Rotation.identity(dtype=np.float32).as_quat().dtype == np.float32
    stack = Rotation.from_quat(QUATS)
    assert len(Rotation.concatenate([single, stack])) == 7
    weights = np.arange(1.0, 7.0)
    np.testing.assert_allclose(stack.mean(weights).as_matrix(),
                               scipy_transform.Rotation.from_quat(QUATS).mean(weights).as_matrix(), atol=1e-12)
    drawn = Rotation.random(trandom.PRNGKey(0), 2000).as_matrix()
    np.testing.assert_allclose(np.linalg.norm(Rotation.random(trandom.PRNGKey(1)).as_quat()), 1.0, rtol=1e-14)
    assert np.abs(drawn.mean(axis=0)).max() < 0.06    # Haar-uniform rotations average to the zero matrix
    for bad in (lambda: Rotation.from_euler("xxz", np.zeros(3)), lambda: Rotation.from_euler("xyzx", np.zeros(4)),
                lambda: Rotation.from_euler("xYz", np.zeros(3)), lambda: Rotation.from_euler("z", np.zeros(2)),
                lambda: stack.as_euler("xy"), lambda: stack.mean(np.ones(4)),
                lambda: Rotation.from_quat(np.ones(3)), lambda: Rotation.from_matrix(np.eye(4))):
        with pytest.raises(ValueError):
            bad()


def test_rotation_is_a_pytree_under_jit_vmap_and_grad():
    stack = Rotation.from_quat(QUATS)
    composed = tj.jit(lambda a, b: a * b.inv())(stack, stack[::-1])
    assert isinstance(composed, Rotation)
    np.testing.assert_allclose(composed.as_quat(), (stack * stack[::-1].inv()).as_quat(), rtol=1e-12)
    euler = tj.vmap(lambda q: Rotation.from_quat(q).as_euler("ZYZ"))(QUATS)
    np.testing.assert_allclose(euler, stack.as_euler("ZYZ"), rtol=1e-12, atol=1e-14)
    vectors = rng.normal(size=(6, 3))

    def f(rotvec, v):
        r = Rotation.from_rotvec(rotvec)
        return (r.apply(v), r.as_euler("xzy"), Rotation.from_matrix(r.as_matrix()).as_mrp(), r.magnitude(),
                (r * r[::-1]).as_quat())
    tj.test_util.check_grads(f, (stack.as_rotvec(), vectors), order=1)
    grads = tj.jit(tj.grad(lambda r, v: tnp.sum(f(r, v)[1] ** 2), argnums=(0, 1)))(stack.as_rotvec(), vectors)
    np.testing.assert_allclose(grads[0], tj.grad(lambda r: tnp.sum(f(r, vectors)[1] ** 2))(stack.as_rotvec()),
                               rtol=1e-12)


def test_slerp_against_scipy_and_jax():
    at = np.array([0.0, 0.3, 1.2, 2.9, 5.9, 6.0])
    ours = Slerp.init(SLERP_TIMES, Rotation.from_quat(QUATS))
    theirs = scipy_transform.Slerp(SLERP_TIMES, scipy_transform.Rotation.from_quat(QUATS))
    np.testing.assert_allclose(ours(at).as_quat(), theirs(at).as_quat(), rtol=1e-12, atol=1e-14)
    assert ours(1.5).single
    # outside the key times (SciPy raises) JAX's: the first interval extrapolated before it; after the last key,
    # rotations[-2] turned by (t - t[-1]) / (t[-1] - t[-2]) of the last interval (JAX's clamped gathers)
    keys = scipy_transform.Rotation.from_quat(QUATS)
    for t, i, start in ((-1.0, 0, SLERP_TIMES[0]), (7.0, 4, SLERP_TIMES[-1])):
        step = (keys[i].inv() * keys[i + 1]).as_rotvec()
        alpha = (t - start) / (SLERP_TIMES[i + 1] - SLERP_TIMES[i])
        want = keys[i] * scipy_transform.Rotation.from_rotvec(alpha * step)
        np.testing.assert_allclose(ours(t).as_matrix(), want.as_matrix(), rtol=1e-12, atol=1e-13)
    compiled = tj.jit(lambda s, t: s(t))(ours, at)
    assert isinstance(compiled, Rotation)
    np.testing.assert_allclose(compiled.as_quat(), ours(at).as_quat(), rtol=1e-13, atol=1e-15)
    tj.test_util.check_grads(lambda q, t: Slerp.init(SLERP_TIMES, Rotation.from_quat(q))(t).as_quat(),
                             (QUATS, at[1:-1]), order=1)
    with pytest.raises(ValueError, match="at least 2 rotations"):
        Slerp.init([0.0], Rotation.from_quat(QUATS[:1]))
    with pytest.raises(ValueError, match="equal to number of timestamps"):
        Slerp.init(SLERP_TIMES[:3], Rotation.from_quat(QUATS))
    with pytest.raises(TypeError, match="must be a `Rotation` instance"):
        Slerp.init(SLERP_TIMES, QUATS)


# ------------------------------------------------------------------------------------------------- vq

def test_vq_against_scipy():
    """Codes and distances as SciPy's; JAX's dtypes (int32 observations give float32 distances)."""
    obs, code_book = rng.normal(size=(9, 3)), rng.normal(size=(4, 3))
    for o, c in [(obs, code_book), (obs[:, 0], code_book[:, 0]),
                 (obs.astype(np.float32), code_book.astype(np.float32))]:
        code, dist = vq(o, c)
        want_code, want_dist = scipy_vq.vq(o, c)
        np.testing.assert_array_equal(code, want_code)
        assert code.dtype == np.int64 and dist.dtype == o.dtype
        np.testing.assert_allclose(dist, want_dist, rtol=1e-6 if o.dtype == np.float32 else 1e-13)
    assert vq(np.arange(6).reshape(3, 2), np.arange(4).reshape(2, 2))[1].dtype == np.float64
    assert vq(np.arange(6, dtype=np.int32).reshape(3, 2), np.arange(4).reshape(2, 2))[1].dtype == np.float64
    assert vq(np.arange(6, dtype=np.int32), np.arange(4, dtype=np.int32))[1].dtype == np.float32
    codes = tj.jit(tj.vmap(lambda o: vq(o, code_book)[0]))(obs.reshape(3, 3, 3))
    np.testing.assert_array_equal(codes.ravel(), scipy_vq.vq(obs, code_book)[0])
    tj.test_util.check_grads(lambda o, c: vq(o, c)[1], (obs, code_book), order=1)
    with pytest.raises(ValueError, match="same rank"):
        vq(obs, code_book[:, 0])
    with pytest.raises(ValueError, match="ndim different than 1 or 2"):
        vq(obs[None], code_book[None])
