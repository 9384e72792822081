"""The compiled FFT of power-of-two lengths (primitives/fft_lowering.py, backend/fft_kernels.py): errors against
numpy.fft in float64 at pocketfft's level for every size 1 ... 2**20, kind and precision; Bluestein's over lengths
with other prime factors; norms, axes, batches (split over threads), the reference interpreter, derivatives and
vmap under jit against JAX; the program runs no Python step. (Lengths 2^a 3^b 5^c: test_fft_mixed_radix.py.)"""
import numpy as np
import pytest

import tracejit as tj
import tracejit.numpy as tnp
from tracejit.backend import fft_kernels, runtime
from tracejit.backend.fft_kernels import _roots
from tracejit.backend.steps import ParallelStep, PythonStep
from tracejit.primitives.fft_lowering import compiled, direct

try:
    import jax
    import jax.numpy as jnp
except ImportError:
    jax = None

tfft = tnp.fft
rng = np.random.default_rng(1)
COMPLEX = {np.float32: np.complex64, np.float64: np.complex128}


def cnormal(*shape, dtype=np.complex128):
    return (rng.standard_normal(shape) + 1j * rng.standard_normal(shape)).astype(dtype)


def argument(kind, n, dtype, batch=()):
    """An argument of kind's transform of length n: n reals (rfft), n//2 + 1 complex values (irfft; the imaginary
    parts of the zero and Nyquist frequencies, which irfft ignores, not zero), else n complex values."""
    if kind == "rfft":
        return rng.standard_normal((*batch, n)).astype(dtype)
    return cnormal(*batch, n // 2 + 1 if kind == "irfft" else n, dtype=COMPLEX[dtype])


def transform(lib, kind, n, **kw):
    return (lambda x: lib.fft.irfft(x, n=n, **kw)) if kind == "irfft" else (lambda x: getattr(lib.fft, kind)(x, **kw))


def relative_rms(got, want):
    return np.sqrt(np.mean(np.abs(got - want) ** 2) / max(np.mean(np.abs(want) ** 2), 1e-300))


def bound(n, dtype):
    """pocketfft's level: float64 ~1e-16 log2 n, float32 ~1e-7 (both measured below half of it)."""
    eps = 5e-17 if dtype == np.float64 else 2.5e-8
    return eps * (np.log2(n) + 2)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("kind", ["fft", "ifft", "rfft", "irfft"])
def test_every_power_of_two_against_numpy_in_float64(kind, dtype):
    for k in range(21):
        n = 2 ** k
        x = argument(kind, n, dtype, batch=(2,) if n < 4096 else ())
        f = tj.jit(transform(tnp, kind, n))
        got = f(x)
        want = transform(np, kind, n)(x.astype(np.complex128 if x.dtype.kind == "c" else np.float64))
        assert got.dtype == transform(np, kind, n)(x).dtype, (kind, n)
        assert got.shape == want.shape
        assert relative_rms(got, want) <= bound(n, dtype), (kind, n, dtype, relative_rms(got, want))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("kind", ["fft", "ifft", "rfft", "irfft"])
def test_other_lengths_by_bluestein_against_numpy_in_float64(kind, dtype):
    for n in (7, 11, 14, 22, 98, 1001, 2047):
        assert compiled(n, kind) and not direct(n, kind)
        x = argument(kind, n, dtype, batch=(3,))
        got = tj.jit(transform(tnp, kind, n))(x)
        want = transform(np, kind, n)(x.astype(np.complex128 if x.dtype.kind == "c" else np.float64))
        assert got.dtype == transform(np, kind, n)(x).dtype
        # three transforms of length m ~ 2n to 4n: errors up to ~3x a direct transform's
        m = 1 << (2 * n - 2).bit_length()
        assert relative_rms(got, want) <= 3 * bound(m, dtype), (kind, n, dtype, relative_rms(got, want))


def python_steps(fn, x):
    return sum(isinstance(s, PythonStep) for s in tj.jit(fn).lower(x)._entry.executable.steps)


def test_the_program_runs_generated_code_where_it_is_faster():
    for n, steps in ((64, 0), (2, 0), (1, 0), (48, 0), (10**5, 0), (100003, 1)):
        for kind in ("fft", "ifft", "rfft", "irfft"):
            x = argument(kind, n, np.float32)
            assert python_steps(transform(tnp, kind, n), x) == steps, (kind, n)
            np.testing.assert_allclose(tj.jit(transform(tnp, kind, n))(x), transform(np, kind, n)(x), rtol=1e-4,
                                       atol=1e-4 * np.abs(x).max() * np.sqrt(n))
    x = rng.standard_normal((64, 101))   # many short transforms: pocketfft (the Python step's cost shared)
    assert python_steps(tfft.rfft, x) == 1 and python_steps(tfft.rfft, x[0]) == 0
    kernels = tj.jit(tfft.rfft).lower(np.ones(8, np.float32)).compile().kernels()
    assert [k["ops"] for k in kernels if k["kind"] == "kernel"] == [["fft"]]


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_several_axes_run_one_compiled_transform_per_axis(dtype):
    """fft2, fftn and their inverses and real forms become one compiled transform per axis (the real one over the
    last axis first, or last for irfftn), the other axes moved last and back: no Python step, NumPy's values,
    over 2-d and 3-d arrays, power-of-two and Bluestein lengths, and axes in any order."""
    cases = [("fft2", (32, 64), {}), ("ifft2", (16, 24), {}), ("rfft2", (64, 32), {}), ("irfft2", (8, 33), {}),
             ("fftn", (4, 6, 8), {}), ("rfftn", (4, 6, 10), {}), ("irfftn", (4, 6, 10), {"s": (4, 6, 18)}),
             ("fft2", (4, 6, 8), {"axes": (2, 0)}), ("rfft2", (4, 6, 8), {"axes": (0, 2)})]
    rng = np.random.default_rng(21)
    for name, shape, kw in cases:
        x = rng.standard_normal(shape)
        if name[0] == "i" or name.startswith("irfft"):
            x = x + 1j * rng.standard_normal(shape)
        x = x.astype(dtype if x.dtype.kind == "f" else np.result_type(dtype, np.complex64))
        f = tj.jit(lambda v, name=name, kw=kw: getattr(tfft, name)(v, **kw))
        steps = f.lower(x)._entry.executable.steps
        assert not any(isinstance(s, PythonStep) for s in steps), name
        assert str(f.lower(x).as_text()).count("fft_lengths=(") >= 2, name
        want = getattr(np.fft, name)(x, **kw)
        tol = 1e-5 if dtype == np.float32 else 1e-12
        np.testing.assert_allclose(f(x), want, rtol=tol, atol=tol * np.abs(want).max())


@pytest.mark.parametrize("norm", [None, "backward", "ortho", "forward"])
def test_every_norm(norm):
    for kind in ("fft", "ifft", "rfft", "irfft"):
        for n in (16, 2048):
            x = argument(kind, n, np.float64, batch=(3,))
            got = tj.jit(transform(tnp, kind, n, norm=norm))(x)
            np.testing.assert_allclose(got, transform(np, kind, n, norm=norm)(x), rtol=1e-13, atol=1e-13)


def test_axes_batches_and_padding():
    z, x = cnormal(3, 16, 5), rng.standard_normal((2, 3, 64))
    cases = [
        (lambda f, z: f.fft(z, axis=1), z),
        (lambda f, z: f.ifft(z, n=32, axis=-2), z),                 # zero padded
        (lambda f, x: f.rfft(x, n=32), x),                          # cropped
        (lambda f, x: f.irfft(f.rfft(x, axis=0) * 2, n=2, axis=0), x[:, :2]),
        (lambda f, z: f.fft(f.ifft(z, axis=0), axis=2), cnormal(4, 3, 8)),
        (lambda f, x: f.rfft(x), np.zeros((0, 8))),                  # an empty batch
    ]
    for fn, arg in cases:
        np.testing.assert_allclose(tj.jit(lambda a, fn=fn: fn(tfft, a))(arg), fn(np.fft, arg), rtol=1e-12, atol=1e-12)


def test_a_batch_split_over_threads_matches_rows():
    x = rng.standard_normal((64, 4096)).astype(np.float32)
    steps = tj.jit(tfft.rfft).lower(x)._entry.executable.steps
    assert runtime.NUM_THREADS == 1 or any(isinstance(s, ParallelStep) for s in steps)
    got = tj.jit(tfft.rfft)(x)
    rows = tj.jit(tfft.rfft)(x[5])
    np.testing.assert_array_equal(got[5], rows)
    assert relative_rms(got, np.fft.rfft(x.astype(np.float64))) <= bound(4096, np.float32)
    z = cnormal(64, 2**15, dtype=np.complex128)
    assert relative_rms(tj.jit(tfft.ifft)(z), np.fft.ifft(z)) <= bound(2**15, np.float64)


def test_against_the_reference_interpreter():
    def fn(x, z):
        return tfft.irfft(tfft.rfft(x) * z, n=256), tfft.ifft(tfft.fft(z) * 2.0)

    x, z = rng.standard_normal(256), cnormal(129)
    closed = tj.make_ir(fn)(x, z)
    for got, want in zip(tj.jit(fn)(x, z), tj.eval_ir(closed, x, z)):
        np.testing.assert_allclose(got, want, rtol=1e-13, atol=1e-13)


def test_twiddles_are_rounded_once():
    for n in (1, 2, 4, 8, 64, 2**16):
        k = np.arange(n, dtype=np.longdouble)
        angle = -2 * np.arccos(np.longdouble(-1)) * k / n
        want = np.cos(angle).astype(np.float64) + 1j * np.sin(angle).astype(np.float64)
        assert np.abs(_roots(n) - want).max() <= 2.3e-16, n


def test_twiddles_fill_once_and_before_the_code_runs():
    """twiddles() gives the table unfilled and a fill that writes it once, whichever threads call it; compile_ir
    calls it once LLVM has the module (Module.before_run), and a transform reads the filled table."""
    import threading

    fft_kernels.twiddles.cache_clear()
    try:
        table, offsets, fill = fft_kernels.twiddles(256, np.complex128, True)
        table[:] = np.nan
        threads = [threading.Thread(target=fill) for _ in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        roots = _roots(512)
        assert offsets[-1] == len(table) - 256 and np.array_equal(table[offsets[-1]:], roots[:256])
        assert np.array_equal(table[:64], roots[::2][:64]) and not np.isnan(table).any()
        table[:] = np.nan
        fill()                                  # once: the table stays as it is
        assert np.isnan(table).all()
    finally:
        fft_kernels.twiddles.cache_clear()
    x = rng.standard_normal(2 * 4096).astype(np.float32)
    np.testing.assert_allclose(tj.jit(tfft.rfft)(x), np.fft.rfft(x), rtol=2e-4, atol=2e-3)


def _rfft_in_child(queue, x):
    queue.put(np.asarray(tj.jit(tfft.rfft)(x)))


@pytest.mark.filterwarnings("ignore:os.fork:RuntimeWarning")     # (JAX's, when other tests imported it)
def test_a_child_forked_during_a_twiddle_fill_makes_its_own(monkeypatch):
    """A child forked while another thread fills a twiddle table (holding that table's lock, which the child
    inherits held) makes its own table: it neither waits for the lock forever nor reads a half-filled table."""
    import multiprocessing
    import threading

    started, release = threading.Event(), threading.Event()
    fill_twiddles = fft_kernels._fill_twiddles

    def slow_fill(*args):
        started.set()
        release.wait(60)
        fill_twiddles(*args)

    fft_kernels.twiddles.cache_clear()
    monkeypatch.setattr(fft_kernels, "_fill_twiddles", slow_fill)
    x = rng.standard_normal(2 * 8192).astype(np.float32)
    _, _, fill = fft_kernels.twiddles(8192, np.dtype(np.complex64), True)    # rfft's, as fft_lowering asks
    filler = threading.Thread(target=fill)
    filler.start()
    started.wait(60)
    monkeypatch.setattr(fft_kernels, "_fill_twiddles", fill_twiddles)
    try:
        context = multiprocessing.get_context("fork")
        queue = context.Queue()
        child = context.Process(target=_rfft_in_child, args=(queue, x))
        child.start()
        got = queue.get(timeout=120)
        child.join(timeout=60)
    finally:
        release.set()
        filler.join()
        fft_kernels.twiddles.cache_clear()
    assert child.exitcode == 0
    np.testing.assert_allclose(got, np.fft.rfft(x), rtol=2e-4, atol=2e-3)


GRADS = {   # name: (tracejit function, JAX function, argument)
    "fft": (lambda z: tfft.fft(z, norm="ortho"), lambda z: jnp.fft.fft(z, norm="ortho"), cnormal(3, 8)),
    "ifft": (lambda z: tfft.ifft(z, axis=0), lambda z: jnp.fft.ifft(z, axis=0), cnormal(16, 2)),
    "rfft": (tfft.rfft, lambda x: jnp.fft.rfft(x), rng.standard_normal((2, 32))),
    "irfft": (lambda z: tfft.irfft(z, norm="forward"), lambda z: jnp.fft.irfft(z, norm="forward"), cnormal(2, 9)),
    "power_spectrum": (lambda x: tnp.sum(tnp.abs(tfft.rfft(tnp.sin(x))) ** 2),
                       lambda x: jnp.sum(jnp.abs(jnp.fft.rfft(jnp.sin(x))) ** 2), rng.standard_normal(1024)),
}


@pytest.mark.skipif(jax is None, reason="JAX is not installed")
@pytest.mark.parametrize("name", list(GRADS))
def test_gradients_under_jit_against_jax(name):
    fn, theirs, arg = GRADS[name]
    w = cnormal(*np.shape(fn(arg)))

    def projected(lib, f):
        return lambda a: lib.real(lib.sum(f(a) * w))

    want = jax.jit(jax.grad(projected(jnp, theirs)))(arg)
    got = tj.jit(tj.grad(projected(tnp, fn)))(arg)
    np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-10)


def test_vmap_under_jit_against_a_loop():
    z = cnormal(3, 5, 16)
    fn = tfft.fft
    expected = np.stack([np.fft.fft(z[:, i]) for i in range(5)])
    np.testing.assert_allclose(tj.jit(tj.vmap(fn, in_axes=1))(z), expected, rtol=1e-12, atol=1e-12)


def test_pickle_ships_the_fft_library_functions_it_calls(tmp_path):
    """A pickled jitted function calling the FFT library (powers of two, f32 and f64, and Bluestein's) runs in a
    fresh process without the disk cache parsing no module but the empty one an engine costs: the library's
    functions came with it."""
    import json
    import os
    import subprocess
    import sys
    import textwrap

    import cloudpickle
    f = tj.jit(lambda x: tnp.fft.irfft(tnp.fft.rfft(x) * 2, n=x.shape[0]))
    args = [rng.standard_normal(n).astype(dtype) for n, dtype in ((1024, np.float32), (1000, np.float64))]
    for x in args:
        np.testing.assert_allclose(f(x), 2 * x, rtol=1e-4, atol=1e-4)
    (tmp_path / "f.pkl").write_bytes(cloudpickle.dumps((f, args)))
    code = textwrap.dedent(f"""
        import json, pickle, numpy as np
        import llvmlite.binding as ll
        from tracejit.backend import generic_entry
        generic_entry.address()     # (the process's own, compiled as it imports)
        parsed, parse = [], ll.parse_assembly
        ll.parse_assembly = lambda text, *a, **k: parsed.append(len(text)) or parse(text, *a, **k)
        f, args = pickle.loads(open({str(tmp_path / "f.pkl")!r}, "rb").read())
        ok = all(np.allclose(f(x), 2 * x, rtol=1e-4, atol=1e-4) for x in args)
        print(json.dumps([ok, [s.source for s in f.cache_info().signatures], sorted(set(parsed))]))
    """)
    env = {**os.environ, "TRACEJIT_DISK_CACHE": "0"}
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300, env=env,
                          check=False)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert json.loads(proc.stdout.strip().splitlines()[-1]) == [True, ["shipped", "shipped"], [0]]


def test_library_functions_compile_once_per_process_in_groups():
    """A fresh process compiles the FFT library's functions a transform lacks as at most fft_kernels.GROUPS
    modules (rfft 1024 f32: four functions, its last radix-2 pass inside the split), each function once: fft
    1024 f32 after it compiles none (its passes are rfft's), irfft 1024 f32 its join and the radix-2 pass that
    rfft did in its split (irfft runs the forward passes)."""
    import json
    import os
    import subprocess
    import sys
    import textwrap

    code = textwrap.dedent("""
        import json, re, numpy as np
        import tracejit as tj, tracejit.numpy as tnp
        from tracejit.backend import fft_code, fft_kernels, llvm
        modules, compile_objects = [], llvm.compile_objects
        def recording(text, *args, **kwargs):
            modules.append(sorted(re.findall(r"define void @(tj_fft\\w+)\\(", text)))
            return compile_objects(text, *args, **kwargs)
        llvm.compile_objects = recording
        out = []
        for kind, x in (("rfft", np.ones(1024, np.float32)), ("fft", np.ones(1024, np.complex64)),
                        ("irfft", np.ones(513, np.complex64))):
            del modules[:]
            got = tj.jit(getattr(tnp.fft, kind))(x)
            assert np.allclose(got, getattr(np.fft, kind)(x), atol=1e-4)
            out.append([m for m in modules if m])
        print(json.dumps([fft_kernels.GROUPS, fft_code.vector_width("float"), out]))
    """)
    env = {**os.environ, "TRACEJIT_DISK_CACHE": "0"}
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300, env=env,
                          check=False)
    assert proc.returncode == 0, proc.stderr[-3000:]
    groups, width, (rfft, fft, irfft) = json.loads(proc.stdout.strip().splitlines()[-1])
    assert 1 <= len(rfft) <= groups and len(irfft) <= groups
    assert sorted(n for m in rfft for n in m) == sorted(
        f"tj_fft{k}_float_fwd" for k in (f"4p{width}", "4w4", "4w16", f"fsplit{width}"))
    assert fft == []
    assert sorted(n for m in irfft for n in m) == ["tj_fft2w16_float_fwd", f"tj_fftjoin{width}_float_fwd"]
