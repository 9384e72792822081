"""The wide suite (issue 20): what users run, each workload with a fair NumPy equivalent and JAX when importable.

    python -m benchmarks --suite wide [--only NAME,...] [--match TEXT] [--json FILE] [--repeat N]

Math chains (`x = f(x) * 0.5 + 0.25`, each function at 1, 8 and 32 steps over 1e3 and 1e6 elements, f32
and f64; erf is scipy.special.erf in NumPy's column, what a NumPy user calls, and jax.scipy.special.erf in
JAX's), transformer pieces, strided access, gradients, control flow and small calls with pytree
arguments. Every row also holds the first call (trace + compile) of tracejit and JAX, and the kernels of
tracejit's code that ran scalar or through the Python driver (`Compiled.kernels()`); the report ends with
the geometric means and the list of workloads where tracejit loses, with those kernels as the reason.
"""
import contextlib
import time

import numpy as np
import scipy.special

import tracejit as tj
import tracejit.numpy as tnp
import tracejit.scipy.special
from benchmarks import run
from benchmarks.run import f32, jax, jnp, timeit_round_robin
from tracejit.backend.kernels import MIN_VECTOR_LOOP

WORKLOADS = {}
MATCH = ""      # --match: only the rows whose name contains it


def workload(name):
    return run.workload(name, WORKLOADS)


def _first(fn, *args):
    """(seconds of the first call, its result)."""
    t0 = time.perf_counter()
    out = fn(*args)
    if jax is not None:
        jax.block_until_ready(out)
    return time.perf_counter() - t0, out


def problems(jitted, *args):
    """The kernels of jitted's code for args that run scalar or through the Python driver, as short strings
    (not loops shorter than a vector, such as a loop condition's compare)."""
    found = []
    for k in jitted.lower(*args).compile().kernels():
        ops = ",".join(dict.fromkeys(k["ops"]))[:60]
        if k["kind"] == "python":
            found.append(f"python driver: {ops}")
        elif k["kind"] == "loop" and not k["vectorized"] and k["elements"] >= MIN_VECTOR_LOOP:
            found.append(f"scalar loop {k['kernel']} ({ops}; {k['elements']} elements)")
    return found


def compare(name, make, args, repeat, numpy=None, jax_make=None, tol=None):
    """One row: tracejit's jit(make(tnp)), NumPy's make(np) (or `numpy`), JAX's jit(make(jnp)) (or
    jax_make()), called on args; tol: check tracejit against NumPy first (rtol = atol = tol). No row unless
    the name contains MATCH."""
    if MATCH not in name:
        return []
    f = tj.jit(make(tnp))
    row = {"workload": name}
    row["tracejit first ms"], out = _first(f, *args)
    row["tracejit first ms"] *= 1e3
    impls = {"tracejit": lambda: f(*args), "numpy": numpy or (lambda: make(np)(*args))}
    if tol is not None:
        ref = impls["numpy"]()
        for a, b in zip(_leaves(out), _leaves(ref)):
            np.testing.assert_allclose(np.asarray(a, np.float64), np.asarray(b, np.float64), rtol=tol, atol=tol)
    if jax is not None:
        with _jax_precision(args):
            jf = jax.jit(jax_make() if jax_make else make(jnp))
            jargs = jax.tree_util.tree_map(jnp.asarray, args)
            row["jax first ms"] = _first(jf, *jargs)[0] * 1e3
        impls["jax"] = lambda: jax.block_until_ready(jf(*jargs))
    row.update(timeit_round_robin(impls, repeat, min_seconds=0.01, context=lambda impl: _jax_precision(args)
                                  if impl == "jax" else contextlib.nullcontext()))
    row["problems"] = problems(f, *args)
    return [row]


def _jax_precision(args):
    """JAX computes in 32 bits unless 64-bit types are enabled: enabled for a row with 64-bit float arguments,
    so that JAX computes what NumPy and tracejit compute."""
    wide = any(np.asarray(x).dtype in (np.float64, np.complex128) for x in _leaves(args))
    return jax.enable_x64(True) if wide else contextlib.nullcontext()


def _leaves(x):
    if isinstance(x, dict):
        return [v for k in sorted(x) for v in _leaves(x[k])]
    if isinstance(x, (list, tuple)):
        return [v for y in x for v in _leaves(y)]
    return [x]


# ---------------------------------------------------------------------------------------------- math chains

CHAIN_STEPS = {       # f(M, x): a step that keeps x in the function's domain (x starts in [0, 1))
    "exp": lambda M, x: M.exp(-x), "log": lambda M, x: M.log(x + 1.5), "log1p": lambda M, x: M.log1p(x),
    "tanh": lambda M, x: M.tanh(x), "sin": lambda M, x: M.sin(x), "cos": lambda M, x: M.cos(x),
    "pow": lambda M, x: M.power(x, 0.75), "erf": lambda M, x: _special(M).erf(x),
}


def _special(M):
    """scipy.special for the array module M (NumPy, tracejit.numpy or jax.numpy)."""
    if M is np:
        return scipy.special
    if M is tnp:
        return tracejit.scipy.special
    from jax.scipy import special
    return special


def chain(fn, length):
    step = CHAIN_STEPS[fn]

    def make(M):
        def f(x):
            for _ in range(length):
                x = step(M, x) * 0.5 + 0.25
            return x
        return f
    return make


@workload("math_chains")
def math_chains(repeat):
    out = []
    for dtype in (np.float32, np.float64):
        for n in (10**3, 10**6):
            x = np.random.default_rng(0).random(n).astype(dtype)
            for fn in CHAIN_STEPS:
                for length in (1, 8, 32):
                    name = f"{fn} x{length} {n:.0e} {np.dtype(dtype).name}"
                    out += compare(name, chain(fn, length), (x,), repeat, tol=1e-4 if dtype == np.float32 else 1e-10)
    return out


@workload("long_chain")
def long_chain(repeat):
    """1000 ops alternating sin(x) * 1.0001 and x + 0.5: the first call is the compile time."""
    def make(M):
        def f(x):
            for i in range(500):
                x = M.sin(x) * 1.0001 + 0.5
            return x
        return f
    return compare("1000-op sin chain 1e3 f32", make, (f32(1000),), max(3, repeat // 2), tol=1e-3)


# ---------------------------------------------------------------------------------------------- transformer

def gelu(M):
    return lambda x: 0.5 * x * (1 + M.tanh(0.7978845608 * (x + 0.044715 * x * x * x)))


def layernorm(M):
    def f(x, g, b):
        m = M.mean(x, axis=-1, keepdims=True)
        v = M.mean((x - m) ** 2, axis=-1, keepdims=True)
        return (x - m) / M.sqrt(v + 1e-5) * g + b
    return f


def softmax(M):
    def f(x):
        e = M.exp(x - M.max(x, axis=-1, keepdims=True))
        return e / M.sum(e, axis=-1, keepdims=True)
    return f


def attention(M):
    def f(q, k, v):
        s = M.matmul(q, M.swapaxes(k, -1, -2)) * 0.125
        e = M.exp(s - M.max(s, axis=-1, keepdims=True))
        return M.matmul(e / M.sum(e, axis=-1, keepdims=True), v)
    return f


@workload("transformer")
def transformer(repeat):
    x = f32(1024, 768)
    g, b = f32(768, seed=1), f32(768, seed=2)
    q, k, v = (f32(8, 512, 64, seed=s) for s in (3, 4, 5))
    return (compare("gelu 1024x768 f32", gelu, (x,), repeat, tol=1e-4)
            + compare("layernorm 1024x768 f32", layernorm, (x, g, b), repeat, tol=1e-3)
            + compare("softmax rows 1024x768 f32", softmax, (x,), repeat, tol=1e-5)
            + compare("attention 8x512x64 f32", attention, (q, k, v), repeat, tol=1e-4))


# ---------------------------------------------------------------------------------------------- strided

@workload("strided")
def strided(repeat):
    """Strided access, and short axes (stop 43): exp, norms and the centroid of 1e6 points (n, 3)."""
    points = f32(1_000_000, 3)
    return (compare("column sums 4096x1024 f32", lambda M: lambda x: M.sum(x, axis=0), (f32(4096, 1024),), repeat,
                    tol=1e-2)
            + compare("x + x.T 2048x2048 f32", lambda M: lambda x: x + x.T, (f32(2048, 2048),), repeat, tol=0)
            + [row for name, make in (("exp", lambda M: M.exp), ("norms", lambda M: lambda p: M.linalg.norm(p, axis=1)),
                                      ("centroid", lambda M: lambda p: p.mean(0)))
               for row in compare(f"{name} of points 1e6x3 f32", make, (points,), repeat, tol=1e-4)])


# ------------------------------------------------------------------------ products, searches, scans, copies

@workload("vectors")
def vectors(repeat):
    """Matrix-vector products and dots (not matrix products: no BLAS gemm), argmax, a running sum down the rows
    and a transposed copy."""
    m, v, u = f32(2048, 2048, seed=21), f32(2048, seed=22), f32(1_000_000, seed=23)
    t = m.T.copy()
    return (compare("M @ v 2048x2048 f32", lambda M: lambda m, v: m @ v, (m, v), repeat, tol=1e-3)
            + compare("v @ M 2048x2048 f32", lambda M: lambda m, v: v @ m, (m, v), repeat, tol=1e-3)
            + compare("dot 1e6 f32", lambda M: lambda a, b: M.dot(a, b), (u, u[::-1].copy()), repeat, tol=1e-1)
            + compare("einsum ij,ij->i 2048x2048 f32", lambda M: lambda a, b: M.einsum("ij,ij->i", a, b), (m, t), repeat,
                      tol=1e-3)
            + compare("argmax 1e6 f32", lambda M: lambda a: M.argmax(a), (u,), repeat, tol=0)
            + compare("argmax rows 2048x2048 f32", lambda M: lambda a: M.argmax(a, axis=1), (m,), repeat, tol=0)
            + compare("cumsum axis 0 2048x2048 f32", lambda M: lambda a: M.cumsum(a, axis=0), (m,), repeat, tol=1e-2)
            + compare("x.T copy 2048x2048 f32", lambda M: lambda a: a.T + 0, (m,), repeat, numpy=lambda: m.T.copy(),
                      tol=0)
            + compare("repeat x4 250K f32", lambda M: lambda a: M.repeat(a, 4), (u[:250_000],), repeat, tol=0))


@workload("layouts")
def layouts(repeat):
    """Transposes inside the function, and inputs that arrive in Fortran order (a pandas frame's values, a LAPACK
    result): NumPy reads them in place."""
    m, v = f32(2048, 2048, seed=24), f32(2048, seed=25)
    fm = np.asfortranarray(m)

    def softmax(M):
        def f(x):
            e = M.exp(x - x.max(1, keepdims=True))
            return e / e.sum(1, keepdims=True)
        return f

    return (compare("A.T @ v 2048x2048 f32", lambda M: lambda a, v: a.T @ v, (m, v), repeat, tol=1e-3)
            + compare("tanh(x.T) 2048x2048 f32", lambda M: lambda a: M.tanh(a.T), (m,), repeat, tol=1e-6)
            + compare("Fortran input: M @ v 2048x2048 f32", lambda M: lambda a, v: a @ v, (fm, v), repeat, tol=1e-3)
            + compare("Fortran input: tanh 2048x2048 f32", lambda M: lambda a: M.tanh(a), (fm,), repeat, tol=1e-6)
            + compare("Fortran input: row sums 2048x2048 f32", lambda M: lambda a: a.sum(1), (fm,), repeat, tol=1e-2)
            + compare("Fortran input: softmax rows 2048x2048 f32", softmax, (fm,), repeat, tol=1e-6))


# ---------------------------------------------------------------------------------------------- gradients

@workload("grads")
def grads(repeat):
    table, idx = f32(10000, 64) * 0.1, np.random.default_rng(6).integers(0, 10000, 4096).astype(np.int32)

    def embed_numpy():
        g = np.zeros_like(table)
        np.add.at(g, idx, 1 - np.tanh(table[idx]) ** 2)
        return g

    rows = compare("grad of embedding gather 10000x64[4096]", lambda M: _grad(M)(lambda t, i: M.sum(M.tanh(t[i]))),
                   (table, idx), repeat, numpy=embed_numpy, tol=1e-5)
    w1, b1, w2, b2 = f32(256, 512, seed=7) * 0.05, np.zeros(512, np.float32), f32(512, 10, seed=8) * 0.05, \
        np.zeros(10, np.float32)
    xb, yb = f32(128, 256, seed=9), f32(128, 10, seed=10)
    params = (w1, b1, w2, b2)

    def mlp_loss(M):
        def loss(p, x, y):
            h = M.tanh(x @ p[0] + p[1])
            return M.mean((h @ p[2] + p[3] - y) ** 2)
        return loss

    def mlp_numpy():
        h = np.tanh(xb @ w1 + b1)
        d = 2 * (h @ w2 + b2 - yb) / yb.size
        dh = (d @ w2.T) * (1 - h * h)
        return xb.T @ dh, dh.sum(0), h.T @ d, d.sum(0)

    return rows + compare("grad of MLP 256-512-10 b128", lambda M: _grad(M)(mlp_loss(M)), (params, xb, yb), repeat,
                          numpy=mlp_numpy, tol=1e-4)


def _grad(M):
    """M's grad: tracejit's or JAX's (NumPy workloads are written by hand)."""
    return tj.grad if M is tnp else jax.grad


# ---------------------------------------------------------------------------------------------- control flow

def _lax(M):
    return tj.lax if M is tnp else jax.lax


def lorenz_step(s):
    x, y, z = s
    dt = 0.001
    return (x + dt * 10.0 * (y - x), y + dt * (x * (28.0 - z) - y), z + dt * (x * y - 8.0 / 3.0 * z))


@workload("control")
def control(repeat):
    s0 = (np.float64(1.0), np.float64(1.0), np.float64(1.0))

    def ode_python():
        s = (1.0, 1.0, 1.0)
        for _ in range(1000):
            s = lorenz_step(s)
        return s

    out = compare("fori_loop Lorenz ODE 1000 steps f64", lambda M: lambda s: _lax(M).fori_loop(
        0, 1000, lambda i, s: lorenz_step(s), s), (s0,), repeat, numpy=ode_python, tol=1e-9)

    a = np.random.default_rng(11).random(10**5) + 0.5

    def newton(M):
        def f(a):
            def body(c):
                i, x = c
                return i + 1, x - (x * x * x - a) / (3 * x * x)
            return _lax(M).while_loop(lambda c: c[0] < 30, body, (0, a))[1]
        return f

    def newton_numpy():
        x = a
        for _ in range(30):
            x = x - (x * x * x - a) / (3 * x * x)
        return x

    out += compare("while_loop 30 Newton steps 1e5 f64", newton, (a,), repeat, numpy=newton_numpy, tol=1e-12)
    big = f32(10**6, seed=15)

    def big_carry(M):      # a large elementwise carry: each iteration costs what the same body does outside a loop
        return lambda c: _lax(M).fori_loop(0, 10, lambda i, c: M.tanh(c) * 0.9 + 0.1, c)

    def big_carry_numpy():
        c = big
        for _ in range(10):
            c = np.tanh(c) * 0.9 + 0.1
        return c

    out += compare("fori_loop 10 x tanh(c)*0.9+0.1 1e6 f32", big_carry, (big,), repeat, numpy=big_carry_numpy,
                   tol=1e-5)

    xs, c0 = f32(2000, 64, seed=12) * 0.1, np.zeros(64, np.float32)

    def rnn(M):
        return lambda c, xs: _lax(M).scan(lambda c, x: (M.tanh(c * 0.9 + x),) * 2, c, xs)[0]

    def rnn_numpy():
        c = c0
        for x in xs:
            c = np.tanh(c * 0.9 + x)
        return c

    out += compare("scan tanh(c*0.9+x) 2000x64 f32", rnn, (c0, xs), repeat, numpy=rnn_numpy, tol=1e-5)
    w, ys = f32(64, 64, seed=13) * 0.1, f32(1000, 64, seed=14)

    def rnn_mm(M):
        return lambda c, xs: _lax(M).scan(lambda c, x: (M.tanh(c @ w + x),) * 2, c, xs)[0]

    def rnn_mm_numpy():
        c = c0
        for x in ys:
            c = np.tanh(c @ w + x)
        return c

    return out + compare("scan tanh(c@W+x) 1000 steps 64x64 f32", rnn_mm, (c0, ys), repeat, numpy=rnn_mm_numpy,
                         tol=1e-4)


# ---------------------------------------------------------------------------------------------- small calls

@workload("library")
def library(repeat):
    """Library functions where tracejit fell off cliffs a new user found (stop 34): the shuffle of
    random.permutation (two stable sorts), transforms over two axes, complex64 abs, float16 arithmetic (stop 43),
    counts, uniques, a concatenate of many small arrays, and batched small inverses (first call: the compile)."""
    u, i = f32(1_000_000, seed=26), np.random.default_rng(27).integers(0, 2000, 1_000_000).astype(np.int32)
    z = (u + 1j * u[::-1]).astype(np.complex64)
    parts, small = [f32(10, seed=30 + k) for k in range(50)], f32(10000, 8, 8, seed=28) + 8 * np.eye(8, dtype=np.float32)
    key, rng = tj.random.PRNGKey(0), np.random.default_rng(0)
    return (compare("random.permutation 1e5", lambda M: lambda k: tj.random.permutation(k, 100_000), (key,), repeat,
                    numpy=lambda: rng.permutation(100_000),
                    jax_make=lambda: lambda k: jax.random.permutation(k, 100_000))
            + compare("fft2 512x512 f32", lambda M: lambda x: M.fft.fft2(x), (u[:512 * 512].reshape(512, 512),), repeat)
            + compare("abs 1e6 c64", lambda M: lambda z: M.abs(z), (z,), repeat, tol=1e-6)
            + compare("x * 2 + 1 1e6 f16", lambda M: lambda h: h * 2 + 1, (u.astype(np.float16),), repeat, tol=1e-3)
            + compare("argsort stable 1e6 f32", lambda M: lambda x: M.argsort(x, stable=True), (u,), repeat, tol=0)
            + compare("bincount 1e6 int32 in 2000", lambda M: lambda i: M.bincount(i, length=2000), (i,), repeat,
                      numpy=lambda: np.bincount(i, minlength=2000), tol=0)
            + compare("unique 1e6 int32 (size 2000)", lambda M: lambda i: M.unique(i, size=2000), (i,), repeat,
                      numpy=lambda: np.unique(i), tol=0)
            + compare("concatenate 50 x 10 f32", lambda M: lambda *xs: M.concatenate(xs), tuple(parts), repeat, tol=0)
            + compare("inverse 10000x8x8 f32", lambda M: lambda a: M.linalg.inv(a), (small,), repeat, tol=1e-3))


@workload("library2")
def library2(repeat):
    """More of them (stop 36): top_k of a long vector, LAPACK's factorizations at sizes where its row-major interface
    cost, least squares, and many FFTs of a length that is not a power of two (1000: mixed-radix passes since stop 44)."""
    u, a = f32(1_000_000, seed=31), np.random.default_rng(32).standard_normal((1024, 1024))
    rows = np.random.default_rng(33).standard_normal((1000, 1000))
    return (compare("top_k 10 of 1e6 f32", lambda M: lambda x: tj.lax.top_k(x, 10), (u,), repeat,
                    jax_make=lambda: lambda x: jax.lax.top_k(x, 10), numpy=lambda: np.sort(np.partition(u, -10)[-10:]))
            + compare("slogdet 1024x1024 f64", lambda M: lambda a: M.linalg.slogdet(a)[1], (a,), repeat, tol=1e-8)
            + compare("inv 256x256 f64", lambda M: lambda a: M.linalg.inv(a), (a[:256, :256],), repeat, tol=1e-6)
            + compare("lstsq 512x512, 2 rhs f64", lambda M: lambda a, b: M.linalg.lstsq(a, b)[0],
                      (a[:512, :512], a[:512, :2]), repeat, tol=1e-6)
            + compare("rfft rows 1000x1000 f64", lambda M: lambda x: M.fft.rfft(x, axis=1), (rows,), repeat,
                      tol=1e-9))


@workload("library3")
def library3(repeat):
    """More (stop 41): a concatenate and a stack of 100 blocks along a later axis, a tile and a kron (broadcasts
    reshaped), scatter-adds into zeros, sinh, and the sine of complex numbers."""
    m, g = np.random.default_rng(34).standard_normal((1000, 100)), np.random.default_rng(35)
    parts, i, x = [m[k:k + 10].copy() for k in range(0, 1000, 10)], g.integers(0, 10**6, 10**6), g.standard_normal(10**6)
    z, out = (f32(1_000_000, seed=36) + 1j * f32(1_000_000, seed=37)).astype(np.complex64), np.zeros(10**6)
    return (compare("concatenate 100 blocks of a 1000x100 f64 on axis 1", lambda M: lambda m: M.concatenate(
                [m[k:k + 10] for k in range(0, 1000, 10)], axis=1), (m,), repeat, tol=0)
            + compare("stack 100 x (10,100) f64 on axis 1", lambda M: lambda *ps: M.stack(ps, axis=1), tuple(parts),
                      repeat, tol=0)
            + compare("tile 1000x100 f64 by (3, 2)", lambda M: lambda m: M.tile(m, (3, 2)), (m,), repeat, tol=0)
            + compare("kron 30x30 f64", lambda M: lambda m: M.kron(m[:30, :30], m[30:60, :30]), (m,), repeat, tol=1e-12)
            + compare("zeros(1e6).at[i].add(x) f64", lambda M: lambda x, i: M.zeros(10**6).at[i].add(x), (x, i), repeat,
                      numpy=lambda: (out.fill(0), np.add.at(out, i, x), out)[2], tol=1e-9)
            + compare("sinh 1e6 f64", lambda M: lambda x: M.sinh(x), (x,), repeat, tol=1e-12)
            + compare("sin 1e6 c64", lambda M: lambda z: M.sin(z), (z,), repeat, tol=1e-5))


@workload("library4")
def library4(repeat):
    """More (stop 44): float remainders (angle wrapping) and hypot, which ran the C library per element; batched
    small Cholesky factorizations and solves of one vector; the singular values of a tall matrix; a depthwise
    convolution, whose tiles stored element by element."""
    x, rng = np.random.default_rng(44).standard_normal(10**6) * 10, np.random.default_rng(45)
    spd = rng.standard_normal((100, 64, 64))
    spd = spd @ spd.transpose(0, 2, 1) + 64 * np.eye(64)
    a, b = rng.standard_normal((200, 200)) + 200 * np.eye(200), rng.standard_normal(200)
    tall = rng.standard_normal((512, 256))
    img, w = f32(8, 32, 32, 32, seed=46), f32(3, 3, 1, 32, seed=47)
    padded, dn = np.pad(img, ((0, 0), (1, 1), (1, 1), (0, 0))), ("NHWC", "HWIO", "NHWC")
    return (compare("(x + pi) % (2 pi) - pi 1e6 f64", lambda M: lambda x: (x + np.pi) % (2 * np.pi) - np.pi, (x,),
                    repeat, tol=1e-12)
            + compare("hypot 1e6 f64", lambda M: lambda x: M.hypot(x, x[::-1]), (x,), repeat, tol=1e-15)
            + compare("cholesky 100x64x64 f64", lambda M: lambda s: M.linalg.cholesky(s), (spd,), repeat, tol=1e-10)
            + compare("solve 200x200 f64, one vector", lambda M: lambda a, b: M.linalg.solve(a, b), (a, b), repeat,
                      tol=1e-10)
            + compare("svd values 512x256 f64", lambda M: lambda t: M.linalg.svd(t, compute_uv=False), (tall,), repeat,
                      tol=1e-10)
            + compare("depthwise conv 3x3 8x32x32x32 f32", lambda M: lambda x, w: _lax(M).conv_general_dilated(
                x, w, (1, 1), "SAME", dimension_numbers=dn, feature_group_count=32), (img, w), repeat, tol=1e-3,
                numpy=lambda: sum(padded[:, i:i + 32, j:j + 32] * w[i, j, 0] for i in range(3) for j in range(3))))


@workload("samplers")
def samplers(repeat):
    """Random draws by rejection (stop 38): a while loop per draw, under vmap (JAX's draws, bit for bit); NumPy's
    own samplers (other algorithms, other streams) as the reference speed."""
    key, rng, n = tj.random.PRNGKey(0), np.random.default_rng(0), 1_000_000
    rows = []
    f = np.float32      # (JAX draws float32 here; NumPy's beta and t only float64)
    for name, ours, numpy in [
            ("gamma(2)", lambda R, k: R.gamma(k, 2.0, (n,), f), lambda: rng.standard_gamma(2.0, n, f)),
            ("beta(2, 3)", lambda R, k: R.beta(k, 2.0, 3.0, (n,), f), lambda: rng.beta(2.0, 3.0, n)),
            ("t(3)", lambda R, k: R.t(k, 3.0, (n,), f), lambda: rng.standard_t(3.0, n)),
            ("poisson(4)", lambda R, k: R.poisson(k, 4.0, (n,)), lambda: rng.poisson(4.0, n))]:
        rows += compare(f"random.{name} 1e6 f32", lambda M, ours=ours: lambda k: ours(tj.random, k), (key,), repeat,
                        numpy=numpy, jax_make=lambda ours=ours: lambda k: ours(jax.random, k))
    return rows


@workload("small_calls")
def small_calls(repeat):
    p = {"w": f32(8, 8, seed=15), "b": f32(8, seed=16)}
    x = f32(4, 8, seed=17)
    q, y = {"a": f32(8, seed=18), "b": f32(8, seed=19)}, f32(8, seed=20)
    return (compare("tanh(x @ p['w'] + p['b']) dict 8x8, 4x8", lambda M: lambda p, x: M.tanh(x @ p["w"] + p["b"]),
                    (p, x), repeat * 2, tol=1e-5)
            + compare("p['a'] * x + p['b'] dict of two + one array, 8 f32",
                      lambda M: lambda p, x: p["a"] * x + p["b"], (q, y), repeat * 2, tol=1e-6))
