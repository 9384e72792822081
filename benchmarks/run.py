"""The benchmark harness: each workload with tracejit and NumPy (and JAX when importable) in one process.

    python -m benchmarks [--suite default|wide] [--only NAME[,NAME...]] [--match TEXT] [--json FILE] [--repeat N]

Prints a table of medians, spreads (interquartile range as a percentage of the median) and the ratio
NumPy time / tracejit time (above 1: tracejit is faster). Timings are medians of repeated runs, each
run timing a loop of calls long enough to be measured. Workloads whose API is missing print a note.
Compare numbers only within one run: the machine is shared and noisy. For a comparison with numpy's
BLAS unset OPENBLAS_CORETYPE and OPENBLAS_L2_SIZE (`env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE`).
The persistent compile cache is off unless --disk-cache, so that first calls time real compiles.
`--suite wide` runs benchmarks/bench_wide.py's workloads (issue 20) and ends with their geometric means
and the workloads where tracejit loses, with the kernels that ran scalar or through the Python driver.
The first-call workloads (compile, scan_compile, shape_storm) live in benchmarks/bench_first_calls.py; the other
bench_*.py scripts (autodiff cost, IR sizes, CNN layers ...) run on their own.
"""
# ruff: noqa: B023 -- each lambda is timed right away, inside its loop iteration
import argparse
import contextlib
import json
import os
import time

import numpy as np

import tracejit as tj
import tracejit.numpy as tnp

try:
    import jax
    import jax.numpy as jnp
except ImportError:
    jax = jnp = None

WORKLOADS = {}


def workload(name, registry=WORKLOADS):
    def register(fn):
        registry[name] = fn
        return fn
    return register


def timeit(fn, repeat=15, min_seconds=0.02):
    """(median, iqr) seconds per call of fn(); calls are batched so each sample lasts >= min_seconds."""
    number = _batch_size(fn, min_seconds)
    return _median_iqr([_batch(fn, number) for _ in range(repeat)])


SETTLE = 0.002     # seconds between two implementations' batches


def timeit_round_robin(impls, repeat=15, min_seconds=0.02, context=lambda impl: contextlib.nullcontext()):
    """{impl: (median, iqr) seconds per call} of each fn in impls, their samples taken in turn (one batch of
    each per round, a batch lasting >= min_seconds, inside context(impl)), with SETTLE seconds after each batch
    for the threads it woke (JAX's, OpenBLAS's, tracejit's pool) to go idle. Timed back to back, tracejit after
    JAX, 3 wide-suite runs of 6 timed a third of tracejit's rows 1.5-2.5x slower (serial ones too; NumPy's and
    JAX's unchanged); with the pause, none of 5."""
    number = {}
    for impl, fn in impls.items():
        with context(impl):
            number[impl] = _batch_size(fn, min_seconds)
    samples = {impl: [] for impl in impls}
    for _ in range(repeat):
        for impl, fn in impls.items():
            with context(impl):
                samples[impl].append(_batch(fn, number[impl]))
            time.sleep(SETTLE)
    return {impl: _median_iqr(values) for impl, values in samples.items()}


def _batch_size(fn, min_seconds):
    """Calls of fn (run twice first: warm) that last about min_seconds."""
    fn()
    t0 = time.perf_counter()
    fn()
    return max(1, int(min_seconds / max(time.perf_counter() - t0, 1e-7)))


def _batch(fn, number):
    """Seconds per call of fn over number calls."""
    t0 = time.perf_counter()
    for _ in range(number):
        fn()
    return (time.perf_counter() - t0) / number


def _median_iqr(samples):
    q1, med, q3 = np.percentile(samples, [25, 50, 75])
    return float(med), float(q3 - q1)


def first_call(make, *args):
    """Seconds of the first call of a freshly made jitted function (trace + passes + compile + run)."""
    f = make()
    t0 = time.perf_counter()
    f(*args)
    return time.perf_counter() - t0, f


def f32(*shape, seed=0):
    return np.random.default_rng(seed).standard_normal(shape).astype(np.float32)


def rows(name, impls, repeat, extra=None):
    """Time each implementation; one result row per workload."""
    row = {"workload": name}
    row.update(timeit_round_robin({impl: fn for impl, fn in impls.items() if fn is not None}, repeat))
    row.update(extra or {})
    return [row]


# --------------------------------------------------------------------------------------------- workloads

@workload("dispatch")
def dispatch(repeat):
    x = np.arange(8, dtype=np.float32)
    f = tj.jit(lambda x: x + 1)
    impls = {"tracejit": lambda: f(x), "numpy": lambda: x + 1}
    if jax:
        jf = jax.jit(lambda x: x + 1)
        jx = jnp.asarray(x)
        impls["jax"] = lambda: jf(jx).block_until_ready()
    out = rows("dispatch x+1 (8 f32)", impls, repeat * 2)
    # a dict of arrays and a Python scalar: the tree and the scalar are checked in Python
    p, lr = {"w": x * 0.5, "b": x + 1}, 0.1
    g = tj.jit(lambda p, x, lr: p["w"] * x + p["b"] * lr)
    impls = {"tracejit": lambda: g(p, x, lr), "numpy": lambda: p["w"] * x + p["b"] * lr}
    if jax:
        jg = jax.jit(lambda p, x, lr: p["w"] * x + p["b"] * lr)
        jp = {k: jnp.asarray(v) for k, v in p.items()}
        impls["jax"] = lambda: jg(jp, jx, lr).block_until_ready()
    return out + rows("dispatch dict + scalar args (8 f32)", impls, repeat * 2)


def _chain_np(x, y):
    return np.sum(np.tanh(x * y + 1) * 0.5 + np.exp(-x * x))


def _chain(x, y):
    return tnp.sum(tnp.tanh(x * y + 1) * 0.5 + tnp.exp(-x * x))


@workload("chain")
def chain(repeat):
    out = []
    for n in (10**6, 10**7):
        x, y = f32(n, seed=1), f32(n, seed=2)
        f = tj.jit(_chain)
        impls = {"tracejit": lambda: f(x, y), "numpy": lambda: _chain_np(x, y)}
        if jax:
            jf = jax.jit(lambda a, b: jnp.sum(jnp.tanh(a * b + 1) * 0.5 + jnp.exp(-a * a)))
            ja, jb = jnp.asarray(x), jnp.asarray(y)
            impls["jax"] = lambda: jf(ja, jb).block_until_ready()
        out += rows(f"fused chain {n:.0e} f32", impls, max(5, repeat // 2))
    return out


@workload("dtypes")
def dtypes(repeat):
    """uint8 image normalisation and a float16 chain (NumPy's float16 loops convert one element at a time)."""
    rng = np.random.default_rng(10)
    img = rng.integers(0, 256, (256, 3, 64, 64), dtype=np.uint8)
    mean = np.array([0.485, 0.456, 0.406], np.float32).reshape(1, 3, 1, 1)
    std = np.array([0.229, 0.224, 0.225], np.float32).reshape(1, 3, 1, 1)

    def normalise(M):
        return lambda img, mean, std: (img.astype(np.float32) / 255 - mean) / std

    x, y = (rng.standard_normal(10**6).astype(np.float16) for _ in range(2))

    def chain(M):
        return lambda x, y: M.tanh(x * y + 1) * 0.5 + M.exp(-x * x)

    out = []
    for name, make, args, tol in (("uint8 image normalisation 256x3x64x64", normalise, (img, mean, std), 1e-6),
                                  ("float16 chain tanh(x*y+1)*0.5+exp(-x*x) 1e6", chain, (x, y), 2e-3)):
        f, g = tj.jit(make(tnp)), make(np)
        np.testing.assert_allclose(f(*args).astype(np.float32), g(*args).astype(np.float32), rtol=tol, atol=tol)
        impls = {"tracejit": lambda: f(*args), "numpy": lambda: g(*args)}
        if jax:
            jf, jargs = jax.jit(make(jnp)), [jnp.asarray(a) for a in args]
            impls["jax"] = lambda: jf(*jargs).block_until_ready()
        out += rows(name, impls, max(5, repeat // 2))
    return out


@workload("matmul")
def matmul(repeat):
    out = []
    for dtype in (np.float32, np.float64):
        for n in (256, 512, 1024):
            out += _matmul_rows(f32(n, n, seed=3).astype(dtype), f32(n, n, seed=4).astype(dtype), repeat)
    return out


def _matmul_rows(a, b, repeat):
    """a @ b timed, with GFLOP/s (a complex multiply-add is 8 flops, a real one 2)."""
    f = tj.jit(lambda a, b: a @ b)
    impls = {"tracejit": lambda: f(a, b), "numpy": lambda: a @ b}
    if jax:
        jf = jax.jit(lambda a, b: a @ b)
        ja, jb = jnp.asarray(a), jnp.asarray(b)
        impls["jax"] = lambda: jf(ja, jb).block_until_ready()
    n = a.shape[0]
    r = rows(f"matmul {n} {a.dtype.name}", impls, max(5, repeat // 2))
    for impl in ("tracejit", "numpy", "jax"):
        if impl in r[0]:
            r[0][f"{impl} GFLOP/s"] = (8 if a.dtype.kind == "c" else 2) * n**3 / r[0][impl][0] / 1e9
    return r


def c64(*shape, seed=0):
    rng = np.random.default_rng(seed)
    return (rng.standard_normal(shape) + 1j * rng.standard_normal(shape)).astype(np.complex64)


@workload("complex")
def complex_workloads(repeat):
    """Complex matmul through cgemm/zgemm (8 n**3 flops), and a fused complex chain (issue 16's targets: 0.9x
    and 2x NumPy)."""
    out = []
    for dtype in (np.complex64, np.complex128):
        out += _matmul_rows(c64(512, 512, seed=3).astype(dtype), c64(512, 512, seed=4).astype(dtype), repeat)
    x, z = f32(10**6, seed=5), c64(10**6, seed=6)
    f = tj.jit(lambda x, z: tnp.exp(1j * x) * z + tnp.conj(z))
    impls = {"tracejit": lambda: f(x, z), "numpy": lambda: np.exp(1j * x) * z + np.conj(z)}
    if jax:
        jf = jax.jit(lambda x, z: jnp.exp(1j * x) * z + jnp.conj(z))
        jx, jz = jnp.asarray(x), jnp.asarray(z)
        impls["jax"] = lambda: jf(jx, jz).block_until_ready()
    return out + rows("exp(1j*x)*z + conj(z), 1e6 c64", impls, max(5, repeat // 2))


@workload("fft")
def fft_workloads(repeat):
    """fft, ifft, rfft, irfft of 2**20 and 1024 float32/complex64 values (generated code, fft_lowering.py), with
    each first call (trace and compile: the FFT library's functions are compiled once per process, by the first
    row that calls them)."""
    out = []
    for n in (2**20, 1024):
        x, z = f32(n, seed=7), c64(n, seed=8)
        for name, arg in (("rfft", x), ("irfft", z[: n // 2 + 1]), ("fft", z), ("ifft", z)):
            first, f = first_call(lambda: tj.jit(getattr(tnp.fft, name)), arg)
            g = getattr(np.fft, name)
            impls = {"tracejit": lambda f=f, arg=arg: f(arg), "numpy": lambda g=g, arg=arg: g(arg)}
            extra = {"tracejit first ms": first * 1e3}
            if jax:
                jf, ja = jax.jit(getattr(jnp.fft, name)), jnp.asarray(arg)
                t0 = time.perf_counter()
                jf(ja).block_until_ready()
                extra["jax first ms"] = (time.perf_counter() - t0) * 1e3
                impls["jax"] = lambda jf=jf, ja=ja: jf(ja).block_until_ready()
            out += rows(f"{name} {n} {'f32' if name == 'rfft' else 'c64'}", impls, repeat, extra)
    return out


def _mlp_loss(params, x, labels):
    w1, b1, w2, b2 = params
    h = tnp.tanh(x @ w1 + b1)
    logits = h @ w2 + b2
    logp = logits - tj.nn.logsumexp(logits, axis=1, keepdims=True)
    return -tnp.mean(tnp.sum(logp * labels, axis=1))


def _mlp_numpy_step(params, x, labels, lr=0.1):
    w1, b1, w2, b2 = params
    h = np.tanh(x @ w1 + b1)
    logits = h @ w2 + b2
    logits = logits - logits.max(axis=1, keepdims=True)
    p = np.exp(logits)
    p /= p.sum(axis=1, keepdims=True)
    loss = -np.mean(np.sum((logits - np.log(np.sum(np.exp(logits), axis=1, keepdims=True))) * labels, axis=1))
    d_logits = (p - labels) / x.shape[0]
    g_w2, g_b2 = h.T @ d_logits, d_logits.sum(axis=0)
    d_h = (d_logits @ w2.T) * (1 - h * h)
    g_w1, g_b1 = x.T @ d_h, d_h.sum(axis=0)
    return loss, [w1 - lr * g_w1, b1 - lr * g_b1, w2 - lr * g_w2, b2 - lr * g_b2]


@workload("mlp")
def mlp(repeat):
    if not hasattr(tj, "value_and_grad"):
        print("note: mlp skipped (tracejit.value_and_grad is missing)")
        return []
    params = [f32(784, 512, seed=5) * 0.05, np.zeros(512, np.float32), f32(512, 10, seed=6) * 0.05,
              np.zeros(10, np.float32)]
    x = f32(128, 784, seed=7)
    labels = np.eye(10, dtype=np.float32)[np.random.default_rng(8).integers(0, 10, 128)]

    def step(params, x, labels):
        loss, grads = tj.value_and_grad(_mlp_loss)(params, x, labels)
        return loss, [p - 0.1 * g for p, g in zip(params, grads)]

    first, f = first_call(lambda: tj.jit(step), params, x, labels)
    loss_tj, _ = f(params, x, labels)
    loss_np, _ = _mlp_numpy_step(params, x, labels)
    assert np.allclose(loss_tj, loss_np, rtol=1e-4), (loss_tj, loss_np)
    impls = {"tracejit": lambda: f(params, x, labels), "numpy": lambda: _mlp_numpy_step(params, x, labels)}
    return rows("MLP 784-512-10 SGD step b128", impls, repeat, {"first call ms": first * 1e3})


@workload("logsumexp")
def logsumexp(repeat):
    x = f32(1024, 1024, seed=9)
    f = tj.jit(lambda x: tj.nn.logsumexp(x, axis=1))

    def np_lse(x):
        m = x.max(axis=1, keepdims=True)
        return np.log(np.sum(np.exp(x - m), axis=1)) + m[:, 0]

    np.testing.assert_allclose(f(x), np_lse(x), rtol=1e-5)
    impls = {"tracejit": lambda: f(x), "numpy": lambda: np_lse(x)}
    if jax:
        jf = jax.jit(lambda x: jax.nn.logsumexp(x, axis=1))
        jx = jnp.asarray(x)
        impls["jax"] = lambda: jf(jx).block_until_ready()
    return rows("logsumexp rows 1024x1024 f32", impls, repeat)


@workload("libm")
def libm(repeat):
    """hypot (a C math library call, one element at a time) and arctan2 (vectorized) against NumPy:
    polar coordinates of 1e6 f64 points."""
    x, y = f32(10**6, seed=3).astype(np.float64), f32(10**6, seed=4).astype(np.float64)
    f = tj.jit(lambda x, y: (tnp.hypot(x, y), tnp.arctan2(y, x)))
    impls = {"tracejit": lambda: f(x, y), "numpy": lambda: (np.hypot(x, y), np.arctan2(y, x))}
    if jax:
        jf = jax.jit(lambda x, y: (jnp.hypot(x, y), jnp.arctan2(y, x)))
        jx, jy = jnp.asarray(x), jnp.asarray(y)
        impls["jax"] = lambda: [o.block_until_ready() for o in jf(jx, jy)]
    return rows("polar coords 1e6 f64 (hypot, arctan2)", impls, max(5, repeat // 2))


@workload("special")
def special(repeat):
    """erf and gammaln on 1e6 float32 against scipy.special in the numpy column (issue 18's target: 2x; SciPy
    computes float32 in double one element at a time). benchmarks/bench_special.py times the other kernels."""
    try:
        import scipy.special as sc
    except ImportError:
        print("note: special skipped (scipy is not installed)")
        return []
    from tracejit.scipy import special as S
    rng = np.random.default_rng(10)
    out = []
    for name, x in (("erf", (rng.standard_normal(10**6) * 2).astype(np.float32)),
                    ("gammaln", rng.uniform(0.01, 50, 10**6).astype(np.float32))):
        f, theirs = tj.jit(getattr(S, name)), getattr(sc, name)
        np.testing.assert_allclose(f(x), theirs(x), rtol=2e-6)
        impls = {"tracejit": lambda: f(x), "numpy": lambda: theirs(x)}
        if jax:
            from jax.scipy import special as js
            jf, jx = jax.jit(getattr(js, name)), jnp.asarray(x)
            impls["jax"] = lambda: jf(jx).block_until_ready()
        out += rows(f"{name} 1e6 f32 (numpy column: scipy.special)", impls, repeat)
    return out


@workload("per_example_grads")
def per_example_grads(repeat):
    if not (hasattr(tj, "vmap") and hasattr(tj, "grad")):
        print("note: per_example_grads skipped (tracejit.vmap or tracejit.grad is missing)")
        return []
    w, xs = f32(1000, seed=10), f32(256, 1000, seed=11)
    ys = f32(256, seed=12)

    def loss(w, x, y):
        return (tnp.dot(x, w) - y) ** 2

    f = tj.jit(tj.vmap(tj.grad(loss), in_axes=(None, 0, 0)))

    def np_grads(w, xs, ys):
        return 2 * (xs @ w - ys)[:, None] * xs

    np.testing.assert_allclose(f(w, xs, ys), np_grads(w, xs, ys), rtol=1e-4, atol=1e-3)
    impls = {"tracejit": lambda: f(w, xs, ys), "numpy": lambda: np_grads(w, xs, ys)}
    return rows("per-example grads 256x1000 (vmap(grad))", impls, repeat)


@workload("random")
def random_uniforms(repeat):
    """1e7 float32 uniforms: tracejit.random under jit (threefry2x32 fused with the conversion to floats, one
    vectorized loop over the cores) against NumPy's Generator.random (PCG64) and JAX's jit; tracejit's and
    JAX's values are the same, bit for bit."""
    n, repeat = 10**7, max(5, repeat // 2)
    key = tj.random.PRNGKey(0)
    f = tj.jit(lambda k: tj.random.uniform(k, (n,), np.float32))
    generator = np.random.default_rng(0)
    impls = {"tracejit": lambda: f(key), "numpy": lambda: generator.random(n, np.float32)}
    # tracejit and NumPy first: XLA's threads keep spinning after JAX's calls, taking a core from both
    cpu = {f"{impl} cpu ns/value": cpu_seconds(fn) / n * 1e9 for impl, fn in impls.items()}
    (row,) = rows("random.uniform 1e7 f32 (numpy: Generator.random)", impls, repeat, cpu)
    if jax:
        jf = jax.jit(lambda k: jax.random.uniform(k, (n,), np.float32))
        jkey = jax.random.PRNGKey(0)
        assert np.array_equal(f(key), np.asarray(jf(jkey)))
        row["jax"] = timeit(lambda: jf(jkey).block_until_ready(), repeat)
        row["jax cpu ns/value"] = cpu_seconds(lambda: jf(jkey).block_until_ready()) / n * 1e9
    return [row]


def cpu_seconds(fn, repeat=9):
    """Median CPU time of fn() over all of the process's threads: the work done, which a loaded machine
    distorts less than the wall time (tracejit's second thread only shortens the wall time where a core is
    free)."""
    fn()
    samples = []
    for _ in range(repeat):
        t0 = time.process_time()
        fn()
        samples.append(time.process_time() - t0)
    return float(np.median(samples))


@workload("hessian")
def hessian(repeat):
    if not hasattr(tj, "hessian"):
        print("note: hessian skipped (tracejit.hessian is missing)")
        return []
    x = f32(100, seed=15).astype(np.float64)

    def fn(x):
        return tnp.sum(tnp.sin(x) * x ** 3)

    first, f = first_call(lambda: tj.jit(tj.hessian(fn)), x)
    d = -np.sin(x) * x**3 + 6 * np.cos(x) * x**2 + 6 * x * np.sin(x)
    np.testing.assert_allclose(f(x), np.diag(d), rtol=1e-8, atol=1e-8)
    return rows("hessian sum(sin(x)*x**3) n=100", {"tracejit": lambda: f(x)}, repeat,
                {"first call ms": first * 1e3})


# ------------------------------------------------------------------------------------------------ report

def _fmt_time(t):
    if t is None:
        return "-"
    med, iqr = t
    unit, scale = (("s", 1), ("ms", 1e3), ("us", 1e6))[0 if med >= 1 else 1 if med >= 1e-3 else 2]
    return f"{med * scale:.3g} {unit} ±{100 * iqr / med:.0f}%" if med else "-"


def report(results):
    from rich.console import Console
    from rich.table import Table
    impls = ["tracejit", "numpy"] + (["jax"] if any("jax" in r for r in results) else [])
    table = Table(title="tracejit benchmarks (median ± IQR; ratio = other / tracejit, > 1: tracejit faster)")
    table.add_column("workload")
    for impl in impls:
        table.add_column(impl, justify="right")
    table.add_column("numpy/tracejit", justify="right")
    if "jax" in impls:
        table.add_column("jax/tracejit", justify="right")
    table.add_column("notes")
    for r in results:
        cells = [r["workload"]] + [_fmt_time(r.get(i)) for i in impls]
        for other in impls[1:]:
            ok = other in r and "tracejit" in r and r["tracejit"][0]
            cells.append(f"{r[other][0] / r['tracejit'][0]:.2f}x" if ok else "-")
        notes = [f"{k} {v:.1f}" for k, v in r.items() if isinstance(v, float)]
        cells.append(", ".join(notes))
        table.add_row(*cells)
    Console(width=200).print(table)


def main(argv=None):
    from benchmarks import bench_first_calls  # noqa: F401 -- registers its workloads (it imports this module)
    parser = argparse.ArgumentParser(prog="python -m benchmarks", description=__doc__.split("\n")[0])
    parser.add_argument("--suite", choices=("default", "wide"), default="default")
    parser.add_argument("--only", help="comma-separated workloads: " + ", ".join(WORKLOADS) + " (wide: see --suite)")
    parser.add_argument("--match", help="wide suite: only the rows whose name contains this text (e.g. 'pow x8')")
    parser.add_argument("--json", help="write the results to this file")
    parser.add_argument("--repeat", type=int, default=15)
    parser.add_argument("--disk-cache", action="store_true",
                        help="keep the persistent compile cache on (first calls then time cache loads)")
    args = parser.parse_args(argv)
    wide = None
    if args.suite == "wide":     # (imported here: it imports this module's helpers)
        from benchmarks import bench_wide as wide
        from benchmarks import wide_report
        wide.MATCH = args.match or ""
    elif args.match:
        parser.error("--match selects rows of the wide suite")
    workloads = wide.WORKLOADS if wide else WORKLOADS
    names = args.only.split(",") if args.only else list(workloads)
    unknown = [n for n in names if n not in workloads]
    if unknown:
        parser.error(f"unknown workloads {unknown}; choose from {list(workloads)}")
    tj.config.update("disk_cache", args.disk_cache)   # off: first calls here are cold compiles (bench_cache.py)
    results = []
    for name in names:
        results += workloads[name](args.repeat)
    report(results)
    output = results
    if wide:
        output = {"load average": os.getloadavg(), "rows": results, "summary": wide_report.summary(results, wide.MATCH)}
    if args.json:
        with open(args.json, "w") as f:
            json.dump(output, f, indent=1)
    return results
