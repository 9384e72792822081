"""tracejit.scipy.spatial.transform: jax.scipy.spatial.transform's Rotation and Slerp, written on tracejit.numpy so
that they trace, differentiate and batch. Both are NamedTuples, hence pytrees: a Rotation holds its unit quaternions
(x, y, z, w: scalar last, as SciPy), one of shape (4,) or a stack of shape (..., 4).

The conversions are JAX's, which are SciPy's: the quaternion of a matrix from its largest diagonal entry or trace
(Shepperd's method), rotation vectors with a series below 1e-3 rad, Euler angles from the quaternion directly
(Bernardes and Viollet, as SciPy >= 1.10), the mean as the dominant eigenvector of sum w q q^T (Markley). Every
function works on stacks of any leading shape with ordinary broadcasting instead of a vectorize per function.
Beyond JAX: Rotation.random (JAX raises NotImplementedError) draws SciPy's way, normalised Gaussian quaternions;
identity takes num; concatenate accepts single rotations."""
import re
import typing

import numpy as np

from ... import numpy as tnp
from ... import random as trandom
from ...numpy._base import aval, promote_inexact
from ...numpy.indexing import take_clamped

__all__ = ["Rotation", "Slerp"]


def _norm(v):
    return tnp.sqrt(tnp.sum(v * v, axis=-1))


def _normalize(quat):
    return quat / _norm(quat)[..., None]


def _compose(p, q):
    """The quaternion product p q (apply q, then p)."""
    cross = tnp.cross(p[..., :3], q[..., :3])
    pw, qw = p[..., 3:], q[..., 3:]
    vector = pw * q[..., :3] + qw * p[..., :3] + cross
    scalar = p[..., 3] * q[..., 3] - tnp.sum(p[..., :3] * q[..., :3], axis=-1)
    return tnp.concatenate([vector, scalar[..., None]], axis=-1)


def _as_matrix(quat):
    x, y, z, w = (quat[..., k] for k in range(4))
    x2, y2, z2, w2 = x * x, y * y, z * z, w * w
    xy, zw, xz, yw, yz, xw = x * y, z * w, x * z, y * w, y * z, x * w
    rows = [[x2 - y2 - z2 + w2, 2 * (xy - zw), 2 * (xz + yw)],
            [2 * (xy + zw), -x2 + y2 - z2 + w2, 2 * (yz - xw)],
            [2 * (xz - yw), 2 * (yz + xw), -x2 - y2 + z2 + w2]]
    return tnp.stack([tnp.stack(row, axis=-1) for row in rows], axis=-2)


def _from_matrix(matrix):
    """Shepperd's method: of the four ways to read the quaternion off the matrix, the one whose divisor is the
    largest of m00, m11, m22 and the trace (the best conditioned); all four are computed and one is selected, so
    that stacks of matrices batch."""
    m = matrix
    trace = m[..., 0, 0] + m[..., 1, 1] + m[..., 2, 2]
    decision = tnp.stack([m[..., 0, 0], m[..., 1, 1], m[..., 2, 2], trace], axis=-1)
    candidates = []
    for i in range(3):
        j, k = (i + 1) % 3, (i + 2) % 3
        q = [None] * 4
        q[i] = 1 - trace + 2 * m[..., i, i]
        q[j] = m[..., j, i] + m[..., i, j]
        q[k] = m[..., k, i] + m[..., i, k]
        q[3] = m[..., k, j] - m[..., j, k]
        candidates.append(tnp.stack(q, axis=-1))
    candidates.append(tnp.stack([m[..., 2, 1] - m[..., 1, 2], m[..., 0, 2] - m[..., 2, 0],
                                 m[..., 1, 0] - m[..., 0, 1], 1 + trace], axis=-1))
    choice = tnp.argmax(decision, axis=-1)[..., None]
    quat = candidates[3]
    for i in range(3):
        quat = tnp.where(choice == i, candidates[i], quat)
    return _normalize(quat)


def _as_rotvec(quat, degrees):
    """axis * angle with the angle in [0, pi] (w made non-negative); angle / sin(angle / 2) by its series
    2 + a^2 / 12 + 7 a^4 / 2880 below 1e-3, where the quotient loses its digits."""
    quat = tnp.where(quat[..., 3:] < 0, -quat, quat)
    angle = 2 * tnp.arctan2(_norm(quat[..., :3]), quat[..., 3])
    angle2 = angle * angle
    small = 2 + angle2 / 12 + 7 * angle2 * angle2 / 2880
    small_angle = angle <= 1e-3
    large = angle / tnp.sin(tnp.where(small_angle, 1.0, angle) / 2)   # no 0/0 where the series is taken
    scale = tnp.where(small_angle, small, large)
    if degrees:
        scale = tnp.rad2deg(scale)
    return scale[..., None] * quat[..., :3]


def _from_rotvec(rotvec, degrees):
    """sin(angle / 2) / angle by its series below 1e-3 rad."""
    if degrees:
        rotvec = tnp.deg2rad(rotvec)
    angle = _norm(rotvec)
    angle2 = angle * angle
    small = 0.5 - angle2 / 48 + angle2 * angle2 / 3840
    small_angle = angle <= 1e-3
    large = tnp.sin(angle / 2) / tnp.where(small_angle, 1.0, angle)
    scale = tnp.where(small_angle, small, large)
    return tnp.concatenate([scale[..., None] * rotvec, tnp.cos(angle / 2)[..., None]], axis=-1)


def _as_mrp(quat):
    """Modified Rodrigues parameters of the quaternion with w >= 0 (the shorter of the two, norm <= 1)."""
    sign = tnp.astype(tnp.where(quat[..., 3:] < 0, -1, 1), aval(quat).dtype)
    return sign * quat[..., :3] / (1 + sign * quat[..., 3:])


def _from_mrp(mrp):
    squared_plus_1 = tnp.sum(mrp * mrp, axis=-1, keepdims=True) + 1
    return tnp.concatenate([2 * mrp, 2 - squared_plus_1], axis=-1) / squared_plus_1


def _inv(quat):
    return tnp.concatenate([-quat[..., :3], quat[..., 3:]], axis=-1)


def _magnitude(quat):
    return 2 * tnp.arctan2(_norm(quat[..., :3]), tnp.abs(quat[..., 3]))


def _make_canonical(quat):
    """The one of q and -q with w > 0, ties broken by the first non-zero of x, y, z being positive (SciPy's)."""
    neg, zero = quat < 0, quat == 0
    flip = (neg[..., 3] | (zero[..., 3] & neg[..., 0]) | (zero[..., 3] & zero[..., 0] & neg[..., 1])
            | (zero[..., 3] & zero[..., 0] & zero[..., 1] & neg[..., 2]))
    return tnp.where(flip[..., None], -quat, quat)


def _parse_seq(seq, lengths):
    """(axis indices, intrinsic) of an Euler sequence: 'xyz' extrinsic, 'XYZ' intrinsic, no axis twice in a row."""
    if not isinstance(seq, str) or len(seq) not in lengths:
        expected = "a non-empty string of upto 3 characters" if len(lengths) > 1 else "3 axes"
        raise ValueError(f"Expected axis specification to be {expected}, got {seq}")
    intrinsic = re.match(r"^[XYZ]{1,3}$", seq) is not None
    if not (intrinsic or re.match(r"^[xyz]{1,3}$", seq)):
        raise ValueError(f"Expected axes from `seq` to be from ['x', 'y', 'z'] or ['X', 'Y', 'Z'], got {seq}")
    if any(seq[i] == seq[i + 1] for i in range(len(seq) - 1)):
        raise ValueError(f"Expected consecutive axes to be different, got {seq}")
    return ["xyz".index(axis) for axis in seq.lower()], intrinsic


def _elementary_quat(axis, angle):
    parts = [tnp.zeros_like(angle)] * 3 + [tnp.cos(angle / 2)]
    parts[axis] = tnp.sin(angle / 2)
    return tnp.stack(parts, axis=-1)


def _euler_from_quat(quat, axes, extrinsic, degrees):
    """Bernardes and Viollet's direct method (SciPy's, JAX's), with the axes known statically. In the gimbal-lock
    cases (middle angle 0 or pi) the first angle of the array takes the whole rotation and the other is 0, as JAX."""
    first, third = (0, 2) if extrinsic else (2, 0)
    i, j, k = axes if extrinsic else axes[::-1]
    symmetric = i == k
    if symmetric:
        k = 3 - i - j
    sign = (i - j) * (j - k) * (k - i) // 2
    q = [quat[..., n] for n in range(4)]
    if symmetric:
        a, b, c, d = q[3], q[i], q[j], q[k] * sign
    else:
        a, b, c, d = q[3] - q[j], q[i] + q[k] * sign, q[j] + q[3], q[k] * sign - q[i]
    middle = 2 * tnp.arctan2(tnp.hypot(c, d), tnp.hypot(a, b))
    eps = 1e-7
    at_zero = tnp.abs(middle) <= eps
    regular = ~at_zero & (tnp.abs(middle - np.pi) > eps)
    half_sum, half_diff = tnp.arctan2(b, a), tnp.arctan2(d, c)
    angles = [None, middle, tnp.zeros_like(middle)]
    angles[0] = tnp.where(at_zero, 2 * half_sum, 2 * half_diff * (-1 if extrinsic else 1))
    angles[first] = tnp.where(regular, half_sum - half_diff, angles[first])
    angles[third] = tnp.where(regular, half_sum + half_diff, angles[third])
    if not symmetric:
        angles[third] = angles[third] * sign
        angles[1] = angles[1] - np.pi / 2
    angles = tnp.remainder(tnp.stack(angles, axis=-1) + np.pi, 2 * np.pi) - np.pi
    return tnp.rad2deg(angles) if degrees else angles


def _float_array(x, name):
    x = tnp.asarray(x)
    if aval(x).dtype.kind == "c":
        raise TypeError(f"{name} must be real, got {aval(x).dtype}")
    return promote_inexact(x)[0]


def _check_last(x, name, size):
    shape = aval(x).shape
    if not shape or shape[-1] != size:
        raise ValueError(f"Expected `{name}` to have shape (..., {size}), got {shape}.")
    return x


class Rotation(typing.NamedTuple):
    """Rotations in 3 dimensions, as jax.scipy.spatial.transform.Rotation (SciPy's Rotation): one rotation or a
    stack, stored as unit quaternions (x, y, z, w). Build with the from_* class methods, compose with *."""

    quat: typing.Any

    @classmethod
    def concatenate(cls, rotations):
        """One stack of the rotations of a sequence of Rotation objects (single rotations count as one)."""
        return cls(tnp.concatenate([tnp.atleast_2d(r.quat) for r in rotations]))

    @classmethod
    def from_euler(cls, seq, angles, degrees=False):
        """From Euler angles about the axes of seq: lower case extrinsic (fixed axes), upper case intrinsic."""
        axes, intrinsic = _parse_seq(seq, (1, 2, 3))
        angles = tnp.atleast_1d(_float_array(angles, "angles"))
        if aval(angles).shape[-1] != len(axes):
            raise ValueError(f"Expected angles of shape (..., {len(axes)}) for seq {seq!r}, got "
                             f"{aval(angles).shape}")
        if degrees:
            angles = tnp.deg2rad(angles)
        result = _elementary_quat(axes[0], angles[..., 0])
        for n in range(1, len(axes)):
            quat = _elementary_quat(axes[n], angles[..., n])
            result = _compose(result, quat) if intrinsic else _compose(quat, result)
        return cls(result)

    @classmethod
    def from_matrix(cls, matrix):
        """From rotation matrices of shape (..., 3, 3)."""
        matrix = _float_array(matrix, "matrix")
        if aval(matrix).shape[-2:] != (3, 3):
            raise ValueError(f"Expected `matrix` to have shape (3, 3) or (N, 3, 3), got {aval(matrix).shape}")
        return cls(_from_matrix(matrix))

    @classmethod
    def from_mrp(cls, mrp):
        """From Modified Rodrigues Parameters, axis * tan(angle / 4)."""
        return cls(_from_mrp(_check_last(_float_array(mrp, "mrp"), "mrp", 3)))

    @classmethod
    def from_quat(cls, quat):
        """From quaternions (x, y, z, w), normalised."""
        return cls(_normalize(_check_last(_float_array(quat, "quat"), "quat", 4)))

    @classmethod
    def from_rotvec(cls, rotvec, degrees=False):
        """From rotation vectors, axis * angle."""
        return cls(_from_rotvec(_check_last(_float_array(rotvec, "rotvec"), "rotvec", 3), degrees))

    @classmethod
    def identity(cls, num=None, dtype=float):
        """The identity rotation, or a stack of num of them."""
        quat = tnp.array([0.0, 0.0, 0.0, 1.0], dtype=dtype)
        return cls(quat if num is None else tnp.tile(quat, (num, 1)))

    @classmethod
    def random(cls, random_key, num=None):
        """Rotations drawn uniformly (Haar measure): normalised standard normal quaternions, as SciPy draws them,
        from a tracejit.random key (JAX leaves this unimplemented)."""
        return cls.from_quat(trandom.normal(random_key, (4,) if num is None else (num, 4)))

    def __getitem__(self, indexer):
        """The rotation(s) at the index of a stack."""
        if self.single:
            raise TypeError("Single rotation is not subscriptable.")
        return Rotation(self.quat[indexer])

    def __len__(self):
        """The number of rotations in a stack."""
        if self.single:
            raise TypeError("Single rotation has no len().")
        return aval(self.quat).shape[0]

    def __mul__(self, other):
        """self composed with other: other applied first, then self."""
        if not isinstance(other, Rotation):
            return NotImplemented
        return Rotation.from_quat(_compose(self.quat, other.quat))

    def apply(self, vectors, inverse=False):
        """The rotated vectors (shape (..., 3), broadcast against the stack); inverse applies the inverse."""
        matrix = self.as_matrix()
        matrix = tnp.where(inverse, tnp.swapaxes(matrix, -1, -2), matrix)
        vectors = _check_last(tnp.asarray(vectors), "vectors", 3)
        return tnp.matmul(matrix, vectors[..., None])[..., 0]

    def as_euler(self, seq, degrees=False):
        """Euler angles about the three axes of seq (lower case extrinsic, upper case intrinsic), the middle one
        in [0, pi] (symmetric sequences) or [-pi/2, pi/2], the others in [-pi, pi)."""
        axes, intrinsic = _parse_seq(seq, (3,))
        return _euler_from_quat(self.quat, axes, not intrinsic, degrees)

    def as_matrix(self):
        """The rotation matrices, shape (..., 3, 3)."""
        return _as_matrix(self.quat)

    def as_mrp(self):
        """Modified Rodrigues Parameters (of norm at most 1)."""
        return _as_mrp(self.quat)

    def as_rotvec(self, degrees=False):
        """Rotation vectors, axis * angle with the angle in [0, pi]."""
        return _as_rotvec(self.quat, degrees)

    def as_quat(self, canonical=False, scalar_first=False):
        """The quaternions, (x, y, z, w) or with scalar_first (w, x, y, z); canonical picks w >= 0."""
        quat = _make_canonical(self.quat) if canonical else self.quat
        return tnp.roll(quat, 1, axis=-1) if scalar_first else quat

    def inv(self):
        """The inverse rotation(s)."""
        return Rotation(_inv(self.quat))

    def magnitude(self):
        """The rotation angle(s), in [0, pi]."""
        return _magnitude(self.quat)

    def mean(self, weights=None):
        """The (weighted) mean rotation of a stack: the unit quaternion maximising sum w (q . q_i)^2, the
        eigenvector of the largest eigenvalue of sum w q_i q_i^T (its sign is arbitrary; both signs are the same
        rotation)."""
        dtype = aval(self.quat).dtype
        n = len(self)
        w = tnp.ones(n, dtype=dtype) if weights is None else tnp.asarray(weights, dtype=dtype)
        if aval(w).ndim != 1:
            raise ValueError(f"Expected `weights` to be 1 dimensional, got shape {aval(w).shape}.")
        if aval(w).shape[0] != n:
            raise ValueError("Expected `weights` to have number of values equal to number of rotations, got "
                             f"{aval(w).shape[0]} values and {n} rotations.")
        k = tnp.matmul(w[None, :] * self.quat.T, self.quat)
        _, vectors = tnp.linalg.eigh(k)
        return Rotation(vectors[:, -1])

    @property
    def single(self):
        """Whether this is one rotation (quat of shape (4,)) rather than a stack."""
        return aval(self.quat).ndim == 1


class Slerp(typing.NamedTuple):
    """Spherical linear interpolation of rotations, as jax.scipy.spatial.transform.Slerp: build with
    Slerp.init(times, rotations), call with times. Between key times t_i < t < t_i+1 the rotation turns at a
    constant rate about one axis from rotations[i] to rotations[i+1]. Outside the key times SciPy raises (under jit
    nothing can): before the first, the first interval is extrapolated; after the last, the result is JAX's,
    rotations[-2] turned by (t - t[-1]) / (t[-1] - t[-2]) of the last interval (JAX clamps the interval's index in
    its gathers, but reads the time at the unclamped one)."""

    times: typing.Any
    timedelta: typing.Any
    rotations: Rotation
    rotvecs: typing.Any

    @classmethod
    def init(cls, times, rotations):
        """The interpolator of rotations (a stack of at least 2) at the increasing key times."""
        if not isinstance(rotations, Rotation):
            raise TypeError("`rotations` must be a `Rotation` instance.")
        if rotations.single or len(rotations) == 1:
            raise ValueError("`rotations` must be a sequence of at least 2 rotations.")
        times = tnp.asarray(times, dtype=aval(rotations.quat).dtype)
        if aval(times).ndim != 1:
            raise ValueError(f"Expected times to be specified in a 1 dimensional array, got {aval(times).ndim} "
                             "dimensions.")
        if aval(times).shape[0] != len(rotations):
            raise ValueError("Expected number of rotations to be equal to number of timestamps given, got "
                             f"{len(rotations)} rotations and {aval(times).shape[0]} timestamps.")
        start = Rotation(rotations.quat[:-1])
        return cls(times=times, timedelta=tnp.diff(times), rotations=start,
                   rotvecs=(start.inv() * Rotation(rotations.quat[1:])).as_rotvec())

    def __call__(self, times):
        """The interpolated rotation(s) at times (a scalar gives a single rotation)."""
        times = tnp.asarray(times, dtype=aval(self.times).dtype)
        if aval(times).ndim > 1:
            raise ValueError("`times` must be at most 1-dimensional.")
        single = aval(times).ndim == 0
        times = tnp.atleast_1d(times)
        index = tnp.maximum(tnp.searchsorted(self.times, times) - 1, 0)
        # past the last key time the index runs one beyond the intervals: clamped there, as JAX's gathers clamp
        alpha = (times - take_clamped(self.times, index)) / tnp.take(self.timedelta, index, mode="clip")
        start = Rotation(tnp.take(self.rotations.quat, index, axis=0, mode="clip"))
        result = start * Rotation.from_rotvec(tnp.take(self.rotvecs, index, axis=0, mode="clip") * alpha[:, None])
        return result[0] if single else result
