"""The FFT library: the passes of a Stockham autosort FFT of length 2^a 3^b 5^c, the real transforms' passes
and Bluestein's (their code: fft_code.py), compiled (or read from the disk cache, or taken from a pickle) once
per process when first called, only those a transform calls: the code compiled for a transform names them as
external symbols (primitives/fft_lowering.py plans the passes and writes the calls) and compile_ir resolves them
(`symbols`), having started compiling the missing ones on threads while LLVM compiles its module (`prefetch`),
as one module per free core (`GROUPS`), with the light pass pipeline (llvm.LIGHT_PASSES): rfft 1024 f32's four
functions in ~20 ms CPU, against 50 ms for its five at O3, one module each (main at c447a55).

Twiddles and chirps are computed in float64 with NumPy and rounded once to the transform's precision
(`twiddles`, `chirps`); the code names them as constants of its module (the twiddles filled while LLVM compiles it).
"""
import concurrent.futures
import functools
import os
import re
import threading

import numpy as np

from . import disk_cache, llvm, runtime
from .fft_code import chirp_function, join_function, pass_function, split_function
from .llvm_text import Module

# Modules at most per compile of the library's missing functions (_groups): the cores but the one compiling the
# module that calls them (rfft 1024 f32 on 2 loaded cores: 39-48 ms CPU as one module, 45-61 as two, 44-50 as five)
GROUPS = max(1, runtime.NUM_THREADS - 1)
_lock = threading.Lock()
_addresses = {}           # symbol -> address of the functions this process has
_objects = {}             # symbol -> its group's disk_cache.ObjectCode (what a pickle ships)
_pending = {}             # symbol -> Future of its group's ObjectCode, compiling ahead of the module calling it
_codes = []               # the library's Code objects, kept (their engine stays as long as the process)
_threads = None           # the ThreadPoolExecutor compiling the library's functions


def stages(n):
    """(radix, sub-length, stride) of each pass of a complex transform of length n (2^a 3^b 5^c): radix 4 first
    (the strides of the passes after them powers of two: the column passes' lanes), then 3, then 5, radix 2 last
    where a is odd (m = 1: no twiddles; a real transform's split does it where it fits in the cache)."""
    out, s = [], 1
    for r in (4, 3, 5, 2):
        while n % r == 0 and n > 1:
            out.append((r, n, s))
            n, s = n // r, s * r
    if n > 1:
        raise ValueError(f"the library's passes are of radix 2, 3, 4 and 5: {n * s} has the factor {n}")
    return out


@functools.lru_cache(maxsize=8)     # (tables up to twice the data; a module keeps its own alive)
def twiddles(n, dtype, real=False):
    """For a complex transform of length n in dtype (complex64/128): (table, offsets, fill), offsets[i] the
    position in table of pass i's twiddles w^p, w^2p ... w^(r-1)p (r - 1 runs of n_i/r; none for radix 2), and
    offsets[-1] that of a real transform's e^(-2 pi i k/2n), k < n (real only). fill() writes the table, once: the
    module naming it calls it after its text has gone to LLVM (Module.before_run), so that the library's functions
    start compiling before it (at 2**20 it takes 8 ms, which a first call spent first)."""
    offsets, at = [], 0
    for r, m_n, _ in stages(n):
        offsets.append(at)
        at += (r - 1) * (m_n // r) if r != 2 else 0
    offsets.append(at)
    table = np.empty(at + (n if real else 0), dtype)
    return table, tuple(offsets), _once(functools.partial(_fill_twiddles, table, n, real))


def _once(fn):
    """fn, called at most once whichever threads call this."""
    lock, done = threading.Lock(), []

    def run():
        with lock:
            if not done:
                fn()
                done.append(True)
    return run


def _fill_twiddles(table, n, real):
    """Write twiddles' table. All are roots of unity (_roots): n-th ones, 2n-th for a real transform, up to the
    largest index used (below (r - 1)n/r of n for radix r: 3n/4 of a power of two, half the work of 2n's, which
    took 120 ms at 2**20 of a first call's 180)."""
    step = 2 if real else 1                     # the position of the n-th root k among the roots computed
    plan = [(r, m_n) for r, m_n, _ in stages(n) if r != 2]
    used = max([(r - 1) * step * n // r for r, _ in plan] + [n if real else 1])
    roots = _roots(step * n, table.dtype, used)
    parts = [roots[::step * j * (n // m_n)][:m_n // r] for r, m_n in plan for j in range(1, r)]
    np.concatenate([*parts, roots[:n] if real else roots[:0]], out=table)


def _roots(n, dtype=np.complex128, count=None):
    """e^(-2 pi i k/n) for k < count (n unless given) in dtype: cos and sin of the first octant's angles in
    float64, rounded once to dtype's parts, the others by the symmetries that swap and negate them exactly (where
    8 does not divide n, each k's angle reduced to the first octant of the 8n-th roots)."""
    count = n if count is None else count
    part = np.float32 if np.dtype(dtype) == np.complex64 else np.float64
    if 4 % n == 0:
        return np.array([1, -1j, -1, 1j], dtype)[np.arange(count) * 4 // n]
    if n % 8:                                   # k in octant o of the turn: its angle reduced to the first octant
        out = np.empty(count, dtype)
        for o in range(8):
            lo, hi = -(-o * n // 8), min(-(-(o + 1) * n // 8), count)
            k = np.arange(lo, max(lo, hi))
            angle = np.pi / (4 * n) * (8 * k - o * n if o % 2 == 0 else (o + 1) * n - 8 * k)   # 8n-th turns
            c, s = np.cos(angle).astype(part), np.sin(angle).astype(part)
            re, im = (c, -s) if o % 2 == 0 else (s, -c)                   # e^(-i a) = -i e^(i (pi/2 - a))
            for _ in range(o // 2):                                         # times -i per quadrant
                re, im = im, -re
            out.real[lo:hi], out.imag[lo:hi] = re, im
        return out
    angle = 2 * np.pi * np.arange(n // 8 + 1) / n
    c, s = np.cos(angle).astype(part), np.sin(angle).astype(part)
    q = n // 4
    out = np.empty(max(count, q), dtype)
    re, im = out.real, out.imag
    re[:q // 2 + 1], im[:q // 2 + 1] = c, -s
    re[q // 2 + 1:q], im[q // 2 + 1:q] = s[-2:0:-1], -c[-2:0:-1]   # e^(-i a) = -i e^(i (pi/2 - a))
    for start in range(q, count, q):               # times -i, -1, i: exact (parts swapped and negated)
        end = min(start + q, count)
        re[start:end], im[start:end] = im[start - q:end - q], -re[start - q:end - q]
    return out[:count]


@functools.lru_cache(maxsize=8)     # (tables up to twice the data; a module keeps its own alive)
def chirps(n, dtype, inverse):
    """Bluestein's transform of any length n as a cyclic convolution of length m = 2**k >= 2n - 1: with the chirp
    w_j = e^(-+i pi j^2/n), X_k = w_k sum_j (x_j w_j) conj(w_(k-j)). Returns (m, table): table holds w_j (j < n),
    then the transform of the padded conj(w) divided by m (the convolution's other operand, as the inverse pass
    leaves it unscaled), then w_k scaled by 1/n for the inverse (k < n); computed in float64, rounded once."""
    m = 1 << (2 * n - 2).bit_length()
    j = np.arange(n)
    angle = np.pi * ((j * j) % (2 * n)) / n          # j^2 mod 2n exactly: the angle stays small
    w = np.cos(angle) + 1j * np.sin(angle) * (1 if inverse else -1)
    h = np.zeros(m, complex)
    h[:n], h[m - n + 1:] = np.conj(w), np.conj(w[1:][::-1])
    table = np.concatenate([w, np.fft.fft(h) / m, w / n if inverse else w])
    return m, table.astype(dtype)


def symbol(kind, ty, inverse):
    """The library function's name: kind '4p8', '4w16', '5w4'... (radix, then p innermost and how many at a time,
    or the lanes), 'split8' (a real transform's last pass, 8 pairs at a time), 'fsplit8' (the same fused with
    the complex transform's last pass, a radix-2 one) or 'join8' (an inverse real transform's first), or
    Bluestein's products by a table (fft_code.chirp_function). The code calling it names it as an external
    symbol, which `symbols` resolves."""
    return f"tj_fft{kind}_{ty}_{'inv' if inverse else 'fwd'}"


_SYMBOL = re.compile(r"tj_fft(\d[pw]|fsplit|split|join|chirpre|chirpr|chirph|chirp)(\d*)_(float|double)_(fwd|inv)$")


def called(names):
    """The library's functions among the external symbols names, sorted."""
    return sorted(name for name in names if _SYMBOL.match(name))


def prefetch(names):
    """Start compiling, on other threads, the library's functions among names that this process lacks (while
    LLVM compiles the module calling them); `symbols` then takes them."""
    with _lock:
        for group in _groups([name for name in called(names) if name not in _addresses and name not in _pending]):
            future = _submit(group, None)
            _pending.update((name, future) for name in group)


def symbols(names, shipped=None):
    """{symbol: address} of the library's functions among names, each compiled (or read from the disk cache,
    or taken from `shipped`, {key: entry} that came with a pickle) the first time a process needs it: the
    missing ones in groups on threads at once (one of the groups not started yet on this thread), linked in
    one load."""
    needed = called(names)
    with _lock:
        missing = [name for name in needed if name not in _addresses]
        if missing:
            futures = {id(future): future for future in map(_pending.get, missing) if future is not None}
            running = [future for future in futures.values() if not future.cancel()]
            for future in futures.values():
                for name in future.group:
                    _pending.pop(name, None)
            left = sorted({*missing, *(name for future in futures.values() if future.cancelled()
                                       for name in future.group)} - {n for f in running for n in f.group})
            groups = _shipped_groups(left, shipped)
            groups += _groups(sorted(set(left).difference(*groups)))
            running += [_submit(group, shipped) for group in groups[1:]]
            codes = [_object_code(groups[0], shipped, False)] if groups else []
            codes += [future.result() for future in running]
            for c in codes:
                _objects.update(dict.fromkeys(c.names, c))
            code = llvm.load_objects([o for c in codes for o in c.objects], [n for c in codes for n in c.names], {},
                                     permanent=True)
            _codes.append(code)
            _addresses.update(code.addresses)
        return {name: _addresses[name] for name in needed}


def entries(names):
    """{key: entry} of the object code of the library's functions among names, for a pickle to ship."""
    return {_objects[name].key: _objects[name].entry() for name in called(names) if name in _objects}


# LLVM's time on a function, roughly, by its kind's radix and form (the split, join and chirp passes: 2)
_WEIGHTS = {"4p": 3, "4w": 3, "2p": 2, "2w": 2, "3p": 3, "3w": 3, "5p": 4, "5w": 4}


def _groups(names):
    """names (sorted) in at most GROUPS groups, each a module compiled on a thread, balanced by weight: a module
    costs LLVM about 2 ms besides its functions' code, and the cores are two or few."""
    groups = [[] for _ in range(min(GROUPS, len(names)))]
    weights = [0] * len(groups)
    for name in sorted(names, key=lambda n: -_WEIGHTS.get(_SYMBOL.match(n).group(1), 2)):
        k = weights.index(min(weights))
        groups[k].append(name)
        weights[k] += _WEIGHTS.get(_SYMBOL.match(name).group(1), 2)
    return [tuple(sorted(group)) for group in groups]


def _shipped_groups(names, shipped):
    """The groups of the entries in shipped (that came with a pickle) that hold some of names and none that this
    process has (a group made where other functions had been compiled before may hold more than names)."""
    groups = {tuple(disk_cache.entry_names(entry)) for entry in (shipped or {}).values()}
    return sorted(group for group in groups if set(group) & set(names) and called(group) == list(group)
                  and not set(group) & _addresses.keys())


def _object_code(group, shipped, alone):
    """The ObjectCode of the library's functions in group (sorted names), one module."""
    module = Module()
    for name in group:
        kind, count, ty, direction = _SYMBOL.match(name).groups()
        inverse = direction == "inv"
        if kind[0].isdigit():
            pass_function(module, name, ty, int(kind[0]), kind[1], int(count), inverse)
        elif kind == "join":
            join_function(module, name, ty, int(count))
        elif kind.endswith("split"):
            split_function(module, name, ty, int(count), fused=kind == "fsplit")
        else:
            chirp_function(module, name, ty, kind)
    return disk_cache.cached_object_code(f"fft {' '.join(group)}", module.text(), list(group), {}, shipped=shipped,
                                         folder="fft", alone=alone, passes=llvm.LIGHT_PASSES)


def _submit(group, shipped):
    """A Future of _object_code(group, shipped) compiling on the library's threads (made on first use), its
    group an attribute: counted by llvm.compiling_elsewhere, so that the group is not split in parts again."""
    global _threads
    _threads = _threads or concurrent.futures.ThreadPoolExecutor(runtime.NUM_THREADS, thread_name_prefix="tracejit-fft")
    future = _threads.submit(_object_code, group, shipped, True)
    future.group = group
    llvm.compiling_elsewhere(future)    # a module compiled meanwhile (this group's or its caller) takes the cores left
    return future


def _after_fork():
    """A forked child has none of the parent's threads, nor the compiles they were running (nor the twiddle
    tables they were filling: a fill's lock could be held for good)."""
    global _lock, _threads
    _lock, _threads = threading.Lock(), None
    _pending.clear()
    twiddles.cache_clear()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_after_fork)
