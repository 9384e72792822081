"""fft: the discrete Fourier transform over the trailing len(fft_lengths) axes, as JAX's lax.fft defines it, with
fft_type FFT (complex to complex), IFFT (its inverse, scaled by 1/n), RFFT (real to the n//2 + 1 non-negative
frequencies) and IRFFT (back to n reals, scaled by 1/n). It is linear: its jvp applies it to the tangent, and its
transposes are JAX's (FFT and IFFT are symmetric maps; RFFT's and IRFFT's account for the frequencies that the
half spectrum holds once, with JAX's convention for complex cotangents).

Compiled, a transform over one axis with fixed shapes is generated code (fft_lowering.py) where its length is a
product of 2s, 3s and 5s (Stockham passes) or where Bluestein's algorithm beats NumPy, and one over several axes is
one such transform per axis (`_axis_by_axis`); the others run NumPy's pocketfft on the buffers (the Python driver
calls the impl, as for sort). float32 data is
transformed in float32 (complex64 results), as NumPy 2 and JAX both do."""
import enum
import inspect
import math

import numpy as np

from ..core.ad_util import Zero, aval
from ..core.avals import ShapedArray, complex_dtype, is_symbolic, real_dtype
from ..core.batching import move_batch_axis
from ..core.errors import ShapeError
from ..core.ops import ops
from .base import linear_primitive
from .fft_lowering import compiled, fft_kernel


class FftType(enum.IntEnum):
    """Which transform fft computes (jax.lax.FftType)."""

    FFT = 0
    IFFT = 1
    RFFT = 2
    IRFFT = 3

    def __str__(self):      # as the IR text prints it
        return self.name


def fft_type_arg(fft_type):
    """An FftType from an FftType or its name ("fft", "RFFT" ...)."""
    if isinstance(fft_type, FftType):
        return fft_type
    if isinstance(fft_type, str) and fft_type.upper() in FftType.__members__:
        return FftType[fft_type.upper()]
    raise ValueError(f"fft: fft_type must be an FftType or one of 'fft', 'ifft', 'rfft', 'irfft', got {fft_type!r}")


def _fft_shape(x, fft_type, fft_lengths):
    k = len(fft_lengths)
    if not 1 <= k <= x.ndim or any(not isinstance(n, int) or n < 1 for n in fft_lengths):
        raise ShapeError(f"fft: fft_lengths must be 1 to {x.ndim} positive ints for an operand of shape {x.shape}, "
                         f"got {fft_lengths}")
    if fft_type == FftType.RFFT and (x.dtype.kind != "f" or x.dtype.itemsize < 4):
        raise TypeError(f"fft: RFFT needs float32 or float64, got {x.str_short()}")
    if fft_type != FftType.RFFT and x.dtype.kind != "c":
        raise TypeError(f"fft: {fft_type} needs complex64 or complex128, got {x.str_short()}")
    batch = x.shape[:-k]
    half = fft_lengths[:-1] + (fft_lengths[-1] // 2 + 1,)    # the non-negative frequencies of the last axis
    minor, out, dtype = {FftType.FFT: (fft_lengths, fft_lengths, x.dtype),
                         FftType.IFFT: (fft_lengths, fft_lengths, x.dtype),
                         FftType.RFFT: (fft_lengths, half, complex_dtype(x.dtype)),
                         FftType.IRFFT: (half, fft_lengths, real_dtype(x.dtype))}[fft_type]
    if tuple(x.shape[-k:]) != minor:
        raise ShapeError(f"fft: {fft_type} with fft_lengths {fft_lengths} needs trailing axes {minor}, got "
                         f"shape {x.shape}")
    return ShapedArray(batch + out, dtype)


_NUMPY = {FftType.FFT: (np.fft.fft, np.fft.fftn), FftType.IFFT: (np.fft.ifft, np.fft.ifftn),
          FftType.RFFT: (np.fft.rfft, np.fft.rfftn), FftType.IRFFT: (np.fft.irfft, np.fft.irfftn)}


def _fft_impl(x, fft_type, fft_lengths):
    """NumPy's transform (its 1-D function for one axis: less overhead); its dtypes are the shape rule's."""
    one_axis, many_axes = _NUMPY[fft_type]
    if len(fft_lengths) == 1:
        return one_axis(x, fft_lengths[0])
    x = np.asarray(x)
    return many_axes(x, s=fft_lengths, axes=tuple(range(x.ndim - len(fft_lengths), x.ndim)))


PARALLEL_FFT = 1 << 16       # elements per chunk of rows that the Python driver hands to the threads, at least
FFT_CHUNKS = 8
_WRITES_OUT = "out" in inspect.signature(np.fft.fft).parameters      # NumPy 2's out=


def _fft_into(parallel_for, out, x, fft_type, fft_lengths):
    """The impl writing into out, for the Python driver: a one-axis transform's rows in chunks that parallel_for
    runs over the threads (pocketfft releases the GIL), each written in place (NumPy 2): the fft of 1000 rows of 1000
    complex128 took 9.0 ms through the impl and a copy, now 2.6, NumPy's 4.7 (8 chunks of 1000 x 100 f64 took 0.22
    ms, 2 0.18, NumPy's 0.16)."""
    if len(fft_lengths) != 1 or not _WRITES_OUT:
        np.copyto(out, _fft_impl(x, fft_type, fft_lengths))
        return
    transform = _NUMPY[fft_type][0]
    rows, dest = x.reshape(-1, x.shape[-1]), out.reshape(-1, out.shape[-1])
    chunks = max(1, min(FFT_CHUNKS, len(rows), max(x.size, out.size) // PARALLEL_FFT))

    def chunk(c):
        part = slice(c * len(rows) // chunks, (c + 1) * len(rows) // chunks)
        transform(rows[part], fft_lengths[0], out=dest[part])
    parallel_for(chunk, chunks)


def _half_spectrum_weights(ct, fft_lengths):
    """Per frequency of a half spectrum (the last axis of ct): 1 for the zero (and, n even, the Nyquist)
    frequency, which the full spectrum holds once, 2 for the others, which it holds twice; broadcast to ct."""
    shape = aval(ct).shape
    weights = np.full(shape[-1], 2.0)
    weights[0] = 1.0
    if fft_lengths[-1] % 2 == 0:
        weights[-1] = 1.0
    return ops.broadcast_in_dim(weights.astype(aval(ct).dtype), shape=shape, broadcast_dimensions=(len(shape) - 1,))


def _fft_transpose(ct, x, fft_type, fft_lengths):
    if isinstance(ct, Zero):
        return [None]
    params = {"fft_lengths": fft_lengths}
    size = math.prod(fft_lengths)
    if fft_type == FftType.RFFT:
        # sum_k ct_k X_k = sum_j x_j Re(sum_k ct_k w^jk): an inverse real FFT of conj(ct), each frequency of the
        # half spectrum once (its mirror image supplies the other half), times n
        halved = ops.div(ops.conj(ct), _half_spectrum_weights(ct, fft_lengths))
        out = ops.fft(halved, fft_type=FftType.IRFFT, **params)
        return [ops.mul(out, np.asarray(size, aval(out).dtype)[()])]
    if fft_type == FftType.IRFFT:
        spectrum = ops.fft(ct, fft_type=FftType.RFFT, **params)
        scale = ops.div(_half_spectrum_weights(spectrum, fft_lengths), np.asarray(size, aval(spectrum).dtype)[()])
        return [ops.conj(ops.mul(spectrum, scale))]       # JAX's convention for complex cotangents
    return [ops.fft(ct, fft_type=fft_type, **params)]     # the DFT matrix is symmetric


def _fft_batch(args, dims, fft_type, fft_lengths):
    (x,), (d,) = args, dims
    if d >= aval(x).ndim - len(fft_lengths):
        x, d = move_batch_axis(x, d, 0, aval(x).shape[d]), 0
    return ops.fft(x, fft_type=fft_type, fft_lengths=fft_lengths), d


def _native(eqn):
    """Whether fft_lowering compiles the equation: one axis of a length it takes (fft_lowering.compiled), fixed
    shapes."""
    lengths, shapes = eqn.params["fft_lengths"], [eqn.inputs[0].aval.shape, eqn.outvars[0].aval.shape]
    return (len(lengths) == 1 and all(isinstance(d, int) for shape in shapes for d in shape)
            and compiled(lengths[0], _KINDS[eqn.params["fft_type"]], math.prod(shapes[0][:-1])))


_KINDS = {FftType.FFT: "fft", FftType.IFFT: "ifft", FftType.RFFT: "rfft", FftType.IRFFT: "irfft"}


def _axis_by_axis(eqn, producer):
    """A transform over several axes is one transform per axis (a real one over the last axis first, or last for
    IRFFT; complex ones over the others, each moved last and back), where each of them is compiled code: the whole
    ran NumPy's pocketfft through the Python driver (fft2 of 512 x 512 f32 took 7.5 ms; NumPy 6.5)."""
    lengths, kind = eqn.params["fft_lengths"], eqn.params["fft_type"]
    x, out = eqn.inputs[0].aval, eqn.outvars[0].aval
    if len(lengths) == 1 or is_symbolic(x.shape) or is_symbolic(out.shape):
        return None
    nd, first = x.ndim, x.ndim - len(lengths)
    inner = FftType.IFFT if kind in (FftType.IFFT, FftType.IRFFT) else FftType.FFT
    last_batch = math.prod(x.shape[:-1]) if kind != FftType.IRFFT else math.prod(out.shape[:-1])
    if not compiled(lengths[-1], _KINDS[kind], last_batch) or not all(
            compiled(n, _KINDS[inner], out.size // n) for n in lengths[:-1]):
        return None

    def along(v, axis, fft_type, n):
        perm = (*(a for a in range(nd) if a != axis), axis)
        moved = v if axis == nd - 1 else ops.transpose(v, permutation=perm)
        done = ops.fft(moved, fft_type=fft_type, fft_lengths=(n,))
        return done if axis == nd - 1 else ops.transpose(done, permutation=tuple(np.argsort(perm).tolist()))

    def transform(v):
        if kind != FftType.IRFFT:
            v = along(v, nd - 1, kind, lengths[-1])
        for axis in range(first, nd - 1):
            v = along(v, axis, inner, lengths[axis - first])
        return along(v, nd - 1, kind, lengths[-1]) if kind == FftType.IRFFT else v
    return transform


fft_p = linear_primitive("fft", _fft_shape, _fft_impl, _fft_transpose, batch=_fft_batch, simplify=_axis_by_axis,
                         lower=fft_kernel(_KINDS.__getitem__, _native), into=_fft_into)
