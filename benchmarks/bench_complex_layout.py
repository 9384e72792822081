"""Complex layouts in compiled code (issue 16): NumPy's interleaved storage read and written as pairs of registers
(what the backend does) against split planes (real and imaginary parts in separate float arrays), with the same
complex arithmetic inside the fused loop, on 1e6 complex64.

    python -m benchmarks.bench_complex_layout

The split layout is emulated with tracejit itself: the planes are float32 arguments joined by lax.complex and the
results' parts returned separately, so the loop reads and writes planes. "+ boundary" adds what a split layout
pays when arguments and results are NumPy's complex arrays: splitting them into planes and interleaving back.
Medians of repeated calls; compare only within one run.
"""
import numpy as np

import tracejit as tj
import tracejit.numpy as tnp
from benchmarks.run import timeit
from tracejit import lax

N = 10**6


def median_ms(fn, *args):
    return timeit(lambda: fn(*args), repeat=21)[0] * 1e3


def compare(name, body, x, z, w):
    interleaved = tj.jit(body)

    def planar_body(x, zr, zi, wr, wi):
        h = body(x, lax.complex(zr, zi), lax.complex(wr, wi))
        return tnp.real(h), tnp.imag(h)

    planar = tj.jit(planar_body)
    planes = [np.ascontiguousarray(a) for a in (z.real, z.imag, w.real, w.imag)]

    def planar_with_boundary(x, z, w):
        re, im = planar(x, *[np.ascontiguousarray(a) for a in (z.real, z.imag, w.real, w.imag)])
        out = np.empty(re.shape, z.dtype)
        out.real, out.imag = re, im
        return out

    np.testing.assert_allclose(interleaved(x, z, w), planar_with_boundary(x, z, w), rtol=1e-5)
    print(f"{name:28s} interleaved {median_ms(interleaved, x, z, w):7.2f} ms | "
          f"planes {median_ms(planar, x, *planes):7.2f}"
          f" ms | planes + boundary {median_ms(planar_with_boundary, x, z, w):7.2f} ms")


def main():
    rng = np.random.default_rng(0)
    x = rng.normal(size=N).astype(np.float32)
    z, w = ((rng.normal(size=N) + 1j * rng.normal(size=N)).astype(np.complex64) for _ in range(2))
    compare("exp(1j*x) * z + conj(z)", lambda x, z, w: tnp.exp(1j * x) * z + tnp.conj(z), x, z, w)
    compare("z * w + conj(z)", lambda x, z, w: z * w + tnp.conj(z), x, z, w)
    compare("sum(z * w)", lambda x, z, w: tnp.sum(z * w), x, z, w)


if __name__ == "__main__":
    main()
