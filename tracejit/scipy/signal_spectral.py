"""tracejit.scipy.signal's spectral analysis: stft, istft, welch and csd, as jax.scipy.signal's (SciPy's
algorithms), on tracejit.numpy and its differentiable FFTs.

As JAX's: segment lengths, overlaps and FFT lengths are static; the signal (and an array window) may be traced, so
every result traces, differentiates and batches. Inputs are promoted to one inexact dtype as JAX's
promote_dtypes_inexact (integers of up to 32 bits to float32), and the spectra are complex64 or complex128 to
match. A window is 'hann' (computed here), another name or (name, parameter) tuple of scipy.signal.get_window
(the common ones computed here, the rest through SciPy, as JAX does), or a 1-d array. JAX's own deviations from
SciPy are kept: csd(x, y) is complex even for y equal to x (csd(x, None) is the real auto-spectrum), a callable
detrend sees the segments with `axis` moved last (JAX's order), and istft's times are arange(x.shape[0]) / fs."""
import functools
import warnings

import numpy as np

from .. import numpy as tnp
from ..core.avals import index_arg, normalize_axis
from ..numpy._base import asarray, astype, aval, promote_inexact

__all__ = ["csd", "istft", "stft", "welch"]

_BOUNDARIES = ("even", "odd", "constant", "zeros", None)


def _complex_dtype(dtype):
    """complex128 for 64-bit floats and complex128, complex64 for the others (JAX's to_complex_dtype)."""
    return np.dtype(np.complex128 if dtype in (np.float64, np.complex128) else np.complex64)


# scipy.signal.get_window's windows computed here (symmetric, of M points, float64): periodic ones (fftbins=True,
# get_window's default) are the symmetric window of M + 1 points less its last one.
def _general_cosine(*a):
    def window(M):
        phase = np.linspace(-np.pi, np.pi, M)
        return sum(c * np.cos(k * phase) for k, c in enumerate(a))
    return window


_WINDOWS = {
    "hamming": _general_cosine(0.54, 0.46),
    "blackman": _general_cosine(0.42, 0.5, 0.08),
    "bartlett": lambda M: np.bartlett(M),
    "boxcar": np.ones,
    "kaiser": lambda M, beta: np.kaiser(M, beta),
}


def get_window(window, nperseg):
    """The periodic window of nperseg points, in float64, as scipy.signal.get_window(window, nperseg): 'hann' as
    JAX computes it (sin(pi n / nperseg) ** 2), hamming, blackman, bartlett, boxcar and ('kaiser', beta) here,
    any other name or tuple by SciPy (an ImportError without it, as JAX's)."""
    name, *params = window if isinstance(window, tuple) else (window,)
    if name == "hann" and not params:
        return np.ones(1) if nperseg == 1 else np.sin(np.linspace(0, np.pi, nperseg, endpoint=False)) ** 2
    if name in _WINDOWS and len(params) == (name == "kaiser"):
        return _WINDOWS[name](nperseg + 1, *params)[:-1] if nperseg > 1 else np.ones(nperseg)
    try:
        # optional, as in JAX: scipy is not a dependency of tracejit
        from scipy.signal import get_window as scipy_get_window
    except ImportError as err:
        raise ImportError(f"scipy must be available to use window={window!r}") from err
    return scipy_get_window(window, nperseg)


def _triage_window(window, nperseg, input_length, dtype):
    """(window as an array of dtype, nperseg): a named window of nperseg points (at most the input's length,
    with a warning, as JAX's; the input's length by default); an array window sets nperseg."""
    if isinstance(window, (str, tuple)):
        n = input_length if nperseg is None else nperseg
        if n > input_length:
            warnings.warn(f"nperseg={n} is greater than input_length={input_length}, using nperseg={input_length}",
                          stacklevel=4)
            n = input_length
        return astype(np.asarray(get_window(window, n)), dtype), n
    win = astype(asarray(window), dtype)
    size = aval(win).size
    n = size if nperseg is None else nperseg
    if aval(win).ndim != 1:
        raise ValueError(f"window must be 1-D, got shape {aval(win).shape}")
    if input_length < size:
        raise ValueError(f"window is longer than input signal ({size} > {input_length})")
    if n != size:
        raise ValueError(f"value specified for nperseg ({n}) is different from length of window ({size})")
    return win, n


def _pad_last(x, n, mode, **kwargs):
    widths = [(0, 0)] * (aval(x).ndim - 1) + [(n, n)]
    return tnp.pad(x, widths, mode, **kwargs)


def _odd_extension(x, n):
    """x extended by n points at both ends of its last axis, point-reflected about its end values (SciPy's
    odd_ext)."""
    if n < 1:
        return x
    length = aval(x).shape[-1]
    if n > length - 1:
        raise ValueError(f"The extension length n ({n}) is too big. It must not exceed x.shape[axis]-1, which is "
                         f"{length - 1}.")
    left = 2 * x[..., :1] - tnp.flip(x[..., 1:n + 1], -1)
    right = 2 * x[..., -1:] - tnp.flip(x[..., length - n - 1:length - 1], -1)
    return tnp.concatenate([left, x, right], -1)


_EXTEND = {
    "even": lambda x, n: _pad_last(x, n, "reflect"),
    "odd": _odd_extension,
    "constant": lambda x, n: _pad_last(x, n, "edge"),
    "zeros": lambda x, n: _pad_last(x, n, "constant"),
}


def detrend_last_axis(d, type):
    """Each segment (the last axis) less its mean ('constant') or its least-squares line ('linear'), as
    jax.scipy.signal.detrend(d, axis=-1, type=type)."""
    if type not in ("constant", "linear"):
        raise ValueError(f"Trend type must be 'linear' or 'constant', got {type!r}")
    centred = d - tnp.mean(d, -1, keepdims=True)
    if type == "constant":
        return centred
    n = aval(d).shape[-1]
    t = np.arange(n) - (n - 1) / 2
    real = tnp.finfo(aval(d).dtype).dtype
    slope = tnp.sum(d * (t / (np.sum(t * t) or 1.0)).astype(real), -1, keepdims=True)
    return centred - t.astype(real) * slope


def _detrend_function(detrend, axis):
    if isinstance(detrend, str):
        return functools.partial(detrend_last_axis, type=detrend)
    if callable(detrend):
        # JAX's wrapping: the callable sees the segments with `axis` (already non-negative) moved last
        return lambda d: tnp.moveaxis(detrend(tnp.moveaxis(d, axis, -1)), -1, axis)
    if not detrend:
        return lambda d: d
    raise ValueError(f"Unsupported detrend type: {detrend}")


def _segment_spectra(x, win, detrend, nperseg, noverlap, nfft, sides):
    """The FFTs of the detrended, windowed segments of x's last axis: shape (..., segments, frequencies). The
    segments are one gather of x with a constant index table, so they differentiate and batch as x does."""
    length = aval(x).shape[-1]
    starts = np.arange(0, length - nperseg + 1, nperseg - noverlap)
    segments = x[..., starts[:, None] + np.arange(nperseg)]
    segments = detrend(segments)
    if aval(win).dtype.kind == "c" and aval(segments).dtype.kind != "c":
        segments = astype(segments, _complex_dtype(aval(segments).dtype))
    segments = win * segments
    if sides == "twosided":
        return tnp.fft.fft(segments, n=nfft)
    return tnp.fft.rfft(tnp.real(segments), n=nfft)


def _spectral_helper(x, y, fs, window, nperseg, noverlap, nfft, detrend, return_onesided, scaling, axis, mode,
                     boundary=None, padded=False):
    """(frequencies, segment times, spectra): the windowed FFTs of x's segments along axis ('stft'), or their
    periodograms, of x alone (y None) or crossed with y's ('psd'), with the frequency axis at axis and the
    segments last. SciPy's _spectral_helper, as JAX's."""
    if mode not in ("psd", "stft"):
        raise ValueError(f"Unknown value for mode {mode}, must be one of: ('psd', 'stft')")
    if boundary not in _BOUNDARIES:
        raise ValueError(f"Unknown boundary option '{boundary}', must be one of: {list(_BOUNDARIES)}")
    axis = normalize_axis(index_arg(axis, "axis of windowed-FFT"), aval(asarray(x)).ndim, "axis")
    if y is None:
        (x,) = promote_inexact(x)
        outer = aval(x).shape[:axis] + aval(x).shape[axis + 1:]
    else:
        if mode != "psd":
            raise ValueError("two-argument mode is available only when mode=='psd'")
        x, y = promote_inexact(x, y)
        xs, ys = aval(x).shape, aval(y).shape
        if len(xs) != len(ys):
            raise ValueError(f"two-arguments must have the same rank ({len(xs)} vs {len(ys)}).")
        try:
            outer = np.broadcast_shapes(xs[:axis] + xs[axis + 1:], ys[:axis] + ys[axis + 1:])
        except ValueError as err:
            raise ValueError("x and y cannot be broadcast together.") from err
    dtype = aval(x).dtype
    result_dtype = _complex_dtype(dtype)
    freq_dtype = np.finfo(result_dtype).dtype
    if nperseg is not None:
        nperseg = index_arg(nperseg, "nperseg of windowed-FFT")
        if nperseg < 1:
            raise ValueError(f"nperseg must be a positive integer, got {nperseg}")
    win, nperseg = _triage_window(window, nperseg, aval(x).shape[axis], dtype)
    noverlap = nperseg // 2 if noverlap is None else index_arg(noverlap, "noverlap of windowed-FFT")
    nfft = nperseg if nfft is None else index_arg(nfft, "nfft of windowed-FFT")
    if aval(x).size == 0 or (y is not None and aval(y).size == 0):
        n = aval(x).shape[axis] if y is None else min(aval(x).shape[axis], aval(y).shape[axis])
        shape = aval(x).shape if y is None else tuple(outer[:axis]) + (n,) + tuple(outer[axis:])
        return np.zeros(shape, freq_dtype), np.zeros(shape, freq_dtype), np.zeros(shape, result_dtype)
    x = tnp.moveaxis(x, axis, -1)
    if y is not None:
        y = tnp.moveaxis(y, axis, -1)
        gap = aval(y).shape[-1] - aval(x).shape[-1]     # the shorter one zero-padded at its end
        if gap:
            x, y = (tnp.pad(v, [(0, 0)] * (aval(v).ndim - 1) + [(0, max(g, 0))]) for v, g in ((x, gap), (y, -gap)))
    if nfft < nperseg:
        raise ValueError(f"nfft must be greater than or equal to nperseg, got nfft={nfft} and nperseg={nperseg}.")
    if noverlap >= nperseg:
        raise ValueError(f"noverlap must be less than nperseg, got noverlap={noverlap} and nperseg={nperseg}.")
    nstep = nperseg - noverlap
    signals = [x] if y is None else [x, y]
    if boundary is not None:
        signals = [_EXTEND[boundary](s, nperseg // 2) for s in signals]
    if padded:
        extra = (-(aval(signals[0]).shape[-1] - nperseg) % nstep) % nperseg
        signals = [tnp.pad(s, [(0, 0)] * (aval(s).ndim - 1) + [(0, extra)]) for s in signals]
    detrend = _detrend_function(detrend, axis)
    if scaling == "density":
        scale = 1.0 / (fs * tnp.sum(win * win))
    elif scaling == "spectrum":
        scale = 1.0 / tnp.sum(win) ** 2
    else:
        raise ValueError(f"Unknown scaling: {scaling}")
    if mode == "stft":
        scale = tnp.sqrt(scale)
    sides = "onesided" if return_onesided else "twosided"
    if return_onesided and any(aval(s).dtype.kind == "c" for s in signals):
        sides = "twosided"
        warnings.warn("Input data is complex, switching to return_onesided=False", stacklevel=3)
    frequencies = (tnp.fft.fftfreq if sides == "twosided" else tnp.fft.rfftfreq)(nfft, 1 / fs, dtype=freq_dtype)
    spectra = [_segment_spectra(s, win, detrend, nperseg, noverlap, nfft, sides) for s in signals]
    if y is not None:
        result = tnp.conj(spectra[0]) * spectra[1]
    elif mode == "psd":
        result = tnp.conj(spectra[0]) * spectra[0]
    else:
        result = spectra[0]
    result = result * scale
    if sides == "onesided" and mode == "psd":
        doubled = np.ones(aval(result).shape[-1])          # every frequency but 0 and Nyquist (even nfft) twice
        doubled[1:None if nfft % 2 else -1] = 2
        result = result * doubled.astype(np.finfo(aval(result).dtype).dtype)
    length = aval(signals[0]).shape[-1]
    times = tnp.divide(np.arange(nperseg / 2, length - nperseg / 2 + 1, nstep).astype(freq_dtype), fs)
    if boundary is not None:
        times = times - tnp.divide(astype(np.asarray(nperseg / 2), freq_dtype), fs)
    result = astype(result, result_dtype)
    if y is None and mode != "stft":
        result = tnp.real(result)
    return frequencies, times, tnp.moveaxis(result, -1, axis)


def stft(x, fs=1.0, window="hann", nperseg=256, noverlap=None, nfft=None, detrend=False, return_onesided=True,
         boundary="zeros", padded=True, axis=-1):
    """The short-time Fourier transform of x along axis, as scipy.signal.stft: (frequencies, segment times, Zxx)
    with Zxx's frequencies at axis and its segments last, scaled as SciPy's 'spectrum' (by 1 / sum(window))."""
    return _spectral_helper(x, None, fs, window, nperseg, noverlap, nfft, detrend, return_onesided, "spectrum",
                            axis, "stft", boundary, padded)


def _median_bias(n):
    """The median of n periodograms over their mean (Allen et al., FINDCHIRP, appendix B)."""
    even = np.arange(2.0, n, 2)
    return 1 + np.sum(1.0 / (even + 1) - 1.0 / even)


def csd(x, y, fs=1.0, window="hann", nperseg=None, noverlap=None, nfft=None, detrend="constant",
        return_onesided=True, scaling="density", axis=-1, average="mean"):
    """The cross power spectral density of x and y by Welch's method, as scipy.signal.csd: (frequencies, Pxy),
    the periodograms of overlapping segments averaged ('mean', or 'median' of real and imaginary parts over its
    bias). As JAX's, Pxy is complex whenever y is given; y=None gives x's real power spectral density."""
    frequencies, _, pxy = _spectral_helper(x, y, fs, window, nperseg, noverlap, nfft, detrend, return_onesided,
                                           scaling, axis, "psd")
    if y is not None and aval(asarray(pxy)).dtype.kind != "c":
        pxy = astype(pxy, _complex_dtype(aval(asarray(pxy)).dtype))
    shape = aval(asarray(pxy)).shape
    if len(shape) < 2 or 0 in shape:
        return frequencies, pxy
    if shape[-1] == 1:
        return frequencies, tnp.reshape(pxy, shape[:-1])
    if average == "median":
        bias = _median_bias(shape[-1])
        if aval(pxy).dtype.kind == "c":
            pxy = tnp.median(tnp.real(pxy), axis=-1) + 1j * tnp.median(tnp.imag(pxy), axis=-1)
        else:
            pxy = tnp.median(pxy, axis=-1)
        return frequencies, pxy / astype(np.asarray(bias), aval(pxy).dtype)
    if average == "mean":
        return frequencies, tnp.mean(pxy, axis=-1)
    raise ValueError(f'average must be "median" or "mean", got {average}')


def welch(x, fs=1.0, window="hann", nperseg=None, noverlap=None, nfft=None, detrend="constant",
          return_onesided=True, scaling="density", axis=-1, average="mean"):
    """The power spectral density of x by Welch's method, as scipy.signal.welch: (frequencies, Pxx), csd of x
    with itself, real."""
    frequencies, pxx = csd(x, None, fs=fs, window=window, nperseg=nperseg, noverlap=noverlap, nfft=nfft,
                           detrend=detrend, return_onesided=return_onesided, scaling=scaling, axis=axis,
                           average=average)
    return frequencies, tnp.real(pxx)


def _overlap_add(frames, step):
    """The frames (..., count, length) summed, frame i starting at i * step: (..., step * (count - 1) + length).
    Each frame is cut into blocks of step points (the last zero-padded); block j of frame i lands in output block
    i + j, so the output is a sum of a few shifted copies: one per block of a frame."""
    *batch, count, length = aval(frames).shape
    blocks = -(-length // step)
    frames = tnp.pad(frames, [(0, 0)] * (len(batch) + 1) + [(0, blocks * step - length)])
    frames = tnp.reshape(frames, (*batch, count, blocks, step))
    edges = [(0, 0)] * len(batch)
    out = sum(tnp.pad(frames[..., j, :], edges + [(j, blocks - 1 - j), (0, 0)]) for j in range(blocks))
    return tnp.reshape(out, (*batch, (count + blocks - 1) * step))[..., :step * (count - 1) + length]


def istft(Zxx, fs=1.0, window="hann", nperseg=None, noverlap=None, nfft=None, input_onesided=True, boundary=True,
          time_axis=-1, freq_axis=-2):
    """The inverse short-time Fourier transform, as scipy.signal.istft: (times, x), the inverse FFTs of Zxx's
    segments windowed, overlap-added and divided by the overlap-added squared window (where above 1e-10);
    boundary=True crops the nperseg // 2 points stft's boundary extension added at each end."""
    Zxx = asarray(Zxx)
    ndim = aval(Zxx).ndim
    if ndim < 2:
        raise ValueError(f"Input stft must be at least 2d!, got shape {aval(Zxx).shape}")
    freq_axis = normalize_axis(freq_axis, ndim, "freq_axis")
    time_axis = normalize_axis(time_axis, ndim, "time_axis")
    if freq_axis == time_axis:
        raise ValueError("Must specify differing time and frequency axes!")
    Zxx = astype(Zxx, _complex_dtype(aval(promote_inexact(Zxx)[0]).dtype))
    n_default = 2 * (aval(Zxx).shape[freq_axis] - 1) if input_onesided else aval(Zxx).shape[freq_axis]
    nperseg_int = index_arg(nperseg or n_default, "nperseg: segment length of STFT")
    if nperseg_int < 1:
        raise ValueError(f"nperseg must be a positive integer, got {nperseg_int}")
    if nfft is None:
        nfft_int = n_default + (input_onesided and nperseg_int == n_default + 1)    # odd nperseg, no padding
    else:
        nfft_int = index_arg(nfft, "nfft of STFT")
    if nfft_int < nperseg_int:
        raise ValueError(f"FFT length ({nfft_int}) must be longer than nperseg ({nperseg_int}).")
    noverlap_int = index_arg(noverlap or nperseg_int // 2, "noverlap of STFT")
    if noverlap_int >= nperseg_int:
        raise ValueError(f"noverlap must be less than nperseg, got noverlap={noverlap_int} and nperseg={nperseg_int}.")
    nstep = nperseg_int - noverlap_int
    if time_axis != ndim - 1 or freq_axis != ndim - 2:
        outer = tuple(i for i in range(ndim) if i not in (time_axis, freq_axis))
        Zxx = tnp.transpose(Zxx, outer + (freq_axis, time_axis))
    inverse = tnp.fft.irfft if input_onesided else tnp.fft.ifft
    xsubs = inverse(Zxx, n=nfft, axis=-2)[..., :nperseg_int, :]     # (..., segment points, segments)
    real = aval(xsubs).dtype
    if isinstance(window, (str, tuple)):
        win = astype(np.asarray(get_window(window, nperseg_int)), real)
    else:
        win = asarray(window)
        if aval(win).ndim != 1:
            raise ValueError(f"window must be 1-D, got shape {aval(win).shape}")
        if aval(win).shape[0] != nperseg_int:
            raise ValueError(f"window must have length of {nperseg_int}, got {aval(win).shape[0]}")
    xsubs = xsubs * tnp.sum(win)                                   # undoes stft's 'spectrum' scaling
    win = tnp.reshape(win, (nperseg_int, 1))
    x = _overlap_add(tnp.swapaxes(xsubs * win, -2, -1), nstep)
    segments = aval(xsubs).shape[-1]
    norm = _overlap_add(tnp.swapaxes(tnp.broadcast_to(win * win, (nperseg_int, segments)), -2, -1), nstep)
    if boundary:
        half = nperseg_int // 2
        x, norm = x[..., half:-half], norm[..., half:-half]       # as JAX's: empty for nperseg 1
    x = x / tnp.where(norm > 1e-10, norm, 1.0)
    if aval(x).ndim > 1 and time_axis != ndim - 1:
        x = tnp.moveaxis(x, -1, time_axis - (freq_axis < time_axis))
    times = tnp.divide(np.arange(aval(x).shape[0]).astype(np.finfo(aval(x).dtype).dtype), fs)
    return times, x
