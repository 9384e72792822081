"""Jitted objects travel by pickle (Dask, Ray, multiprocessing, concurrent.futures) with their compiled code.

What travels (`state`): the function (pickled by cloudpickle when it is installed, whatever pickler the
caller uses: by reference when it is importable, by value when it is a lambda, a closure or defined in
__main__; plain pickle otherwise), the jit options, and unless `ship_code=False`, for
each compiled signature: its key (argument tree, shapes and dtypes, static arguments), the optimised IR,
the output tree, and the object code in the disk-cache format with its key and a SHA-256 digest
(disk_cache.ObjectCode.entry), with the description of the host that compiled it (CPU, its features, the
versions of tracejit, LLVM, llvmlite and numpy).

All of it is pickled into one body (bytes) with a SHA-256 digest next to it. On unpickling (`restore`):
the format and the digest are checked first (a corrupted pickle raises pickle.UnpicklingError saying so;
a truncated one fails in pickle itself, "pickle data was truncated"), then the function and options are
unpickled; the signatures are kept as they came. The first call that misses the loaded entries opens
them (`unpack`): when the host description equals this process's, the signatures are unpickled and kept
pending; otherwise they are dropped (logged) and never unpickled, and the function is traced and compiled
here. So a process that never calls the function (a Dask scheduler) neither loads LLVM nor reads IR. A call
that fits a pending signature runs the backend's code generation on the shipped IR (no tracing, no
passes, no LLVM) and links the shipped object code when the module it generates has the entry's key (host,
signature and LLVM text: equal text means equal code); otherwise, e.g. on a machine with another number
of cores, which changes how loops are split, it compiles that IR here.

Identity: a Jitted gets a token when first pickled; unpickling it in a process that already holds the
object with that token returns that object, and the client gets its own object back. A process keeps the
KEEP_RECEIVED objects it unpickled most recently alive, so that a Dask worker, which drops a task's
function with the task, links each signature once however many submissions carry the function. A
decorated module-level function (`@jit def f` in an importable module) is pickled by reference to that
module's object.

Trust: unpickling runs whatever code the pickle names, so a pickle is trusted entirely or not at all
(pickle's own rule); shipped machine code adds nothing to what a pickle can already do. So shipped entries
are not signed with the disk cache's per-user HMAC key (which never leaves its machine): they are checked
for damage (SHA-256) and for fit (host and key) only, and they are never written to the receiving
process's disk cache, whose entries stay those its own user compiled.
"""
import collections
import hashlib
import importlib
import io
import logging
import pickle
import sys
import threading
import uuid
import weakref

import numpy as np

from .backend import disk_cache, fft_kernels, kernel_library, vecmath
from .core.trace import Primitive

try:
    from cloudpickle import Pickler as _BasePickler  # by value: lambdas, closures, __main__
except ImportError:                                   # pragma: no cover -- cloudpickle is optional
    _BasePickler = pickle.Pickler

log = logging.getLogger("tracejit")

FORMAT = b"tracejit-jitted-2"
KEEP_RECEIVED = 16        # unpickled Jitted objects kept alive (the most recently received)

_received = weakref.WeakValueDictionary()    # token -> the Jitted of that token in this process
_kept = collections.OrderedDict()            # token -> Jitted: the KEEP_RECEIVED most recently unpickled
_lock = threading.Lock()


class Shipped:
    """A signature that came with a pickle, not yet linked: its optimised IR, output tree, argument names,
    the dtypes its Python int arguments must fit (CacheEntry.fits), object code entry ({key: entry}) and its
    payload as received (shipped on as it is)."""
    __slots__ = ("closed", "entries", "fits", "names", "out_tree", "payload")

    def __init__(self, closed, out_tree, names, fits, entries, payload):
        self.closed, self.out_tree, self.names, self.fits = closed, out_tree, names, fits
        self.entries, self.payload = entries, payload


def _primitive(module, name):
    prim = getattr(importlib.import_module(module), name, None)
    if not isinstance(prim, Primitive):
        raise pickle.UnpicklingError(f"tracejit: {module}.{name} is not a primitive in this version of tracejit")
    return prim


_primitive_names = {}     # id(primitive) -> (module, name), for the primitives of tracejit's modules


def _primitive_name(prim):
    """Where a primitive is defined, found among the loaded modules of tracejit (pickled by reference: the
    IR's primitives must be the receiver's own objects, which passes and lowering compare by identity)."""
    if id(prim) not in _primitive_names:
        for module_name, module in list(sys.modules.items()):
            if module_name.split(".")[0] == "tracejit":
                for name, value in list(vars(module).items()):
                    if isinstance(value, Primitive):
                        _primitive_names.setdefault(id(value), (module_name, name))
    if id(prim) not in _primitive_names:
        raise pickle.PicklingError(f"tracejit: primitive {prim.name} is not defined in a tracejit module")
    return _primitive_names[id(prim)]


class _Pickler(_BasePickler):
    """cloudpickle's pickler (plain pickle's without it), with primitives by reference and numpy's built-in
    dtypes as their canonical objects (the fast entry compares an array's dtype by address)."""

    def reducer_override(self, obj):
        if isinstance(obj, Primitive):
            return _primitive, _primitive_name(obj)
        if isinstance(obj, np.dtype) and obj.isbuiltin:
            return np.dtype, (obj.type,)
        base = getattr(super(), "reducer_override", None)
        return NotImplemented if base is None else base(obj)


def _dumps(obj):
    buffer = io.BytesIO()
    _Pickler(buffer, protocol=pickle.HIGHEST_PROTOCOL).dump(obj)
    return buffer.getvalue()


def _reference(jitted):
    """(module, qualified name) when jitted is what its function's module holds under the function's name
    (a decorated module-level function), else None."""
    module, qualname = getattr(jitted.fun, "__module__", None), getattr(jitted.fun, "__qualname__", "")
    if module in (None, "__main__") or "<" in qualname or module not in sys.modules:
        return None
    obj = sys.modules[module]
    for part in qualname.split("."):
        obj = getattr(obj, part, None)
    return (module, qualname) if obj is jitted else None


def _payloads(jitted):
    """The pickled signatures of jitted that can travel: compiled ones whose code fits other processes, and
    those it received and has not linked yet."""
    out = []
    for key, entry in list(jitted._signatures.entries.items()):
        exe = entry.executable
        if exe is None or exe.object_code.key is None:
            continue
        try:
            out.append(_dumps((key, entry.closed, entry.out_tree, entry.names, entry.fits,
                               {exe.object_code.key: exe.object_code.entry(), **vecmath.entries(exe.object_code.library),
                                **fft_kernels.entries(exe.object_code.symbols),
                                **kernel_library.entries(exe.object_code.symbols)})))
        except Exception as e:  # noqa: BLE001 -- a signature that does not pickle is compiled where it goes
            log.info("tracejit: signature of %s not shipped (it compiles where it goes): %s", jitted.__name__, e)
    return out + [s.payload for s in list(jitted._signatures.shipped.values())]


def state(jitted):
    """What Jitted.__reduce__ pickles: (format, SHA-256 of body, body)."""
    if jitted.ship_code and jitted._signatures.parcels:
        with jitted._lock:
            unpack(jitted)
    reference = _reference(jitted)
    if reference is None:
        if jitted._token is None:
            jitted._token = uuid.uuid4().hex
            with _lock:
                _received[jitted._token] = jitted
        reference = jitted._token
    payloads = _payloads(jitted) if jitted.ship_code and jitted.backend == "llvm" else []
    body = _dumps((reference, None if isinstance(reference, tuple) else jitted.fun, jitted.options(),
                   disk_cache.host() if payloads else None, payloads))
    return FORMAT, hashlib.sha256(body).digest(), body


def restore(make, fmt, digest, body):
    """The Jitted of a pickled state (see the module's docstring); make(fun, **options) makes a new one."""
    if fmt != FORMAT:
        raise pickle.UnpicklingError(f"tracejit: cannot unpickle a jitted function of format {fmt!r} "
                                     f"(this version reads {FORMAT!r})")
    if not isinstance(body, bytes) or hashlib.sha256(body).digest() != digest:
        raise pickle.UnpicklingError("tracejit: the pickled jitted function is damaged: its SHA-256 checksum does "
                                     "not match (corrupted or truncated in transit)")
    reference, fun, options, host, payloads = pickle.loads(body)
    if isinstance(reference, tuple):
        jitted = _lookup(*reference)
        if not isinstance(jitted, make):
            raise pickle.UnpicklingError(f"tracejit: {'.'.join(reference)} is no longer a jitted function here")
    else:
        with _lock:
            jitted = _received.get(reference)
            if jitted is None:                   # (the object pickled in this process is never in _kept)
                jitted = _received[reference] = _kept[reference] = make(fun, **options)
                jitted._token = reference
                while len(_kept) > KEEP_RECEIVED:
                    _kept.popitem(last=False)
            elif reference in _kept:
                _kept.move_to_end(reference)
    if payloads:
        jitted._signatures.parcels.append((host, payloads))
    return jitted


def unpack(jitted):
    """Open the shipments jitted received (under its lock): on the host they were compiled for, their
    signatures become pending (SignatureCache.shipped); elsewhere they are dropped. Done on the first call
    that misses, not when unpickling: a process that never calls the function (a Dask scheduler) neither
    loads LLVM nor unpickles IR."""
    parcels = jitted._signatures.parcels
    while parcels:
        host, payloads = parcels.pop()
        mine = disk_cache.host()
        if host != mine:
            differs = ", ".join(f"{k} {host.get(k)!r} here {mine[k]!r}" for k in sorted(mine) if host.get(k) != mine[k])
            log.info("tracejit: %s came with code for another host (%s): it compiles here", jitted.__name__, differs)
            continue
        for payload in payloads:
            try:
                key, closed, out_tree, names, fits, entries = pickle.loads(payload)
            except Exception as e:  # noqa: BLE001 -- e.g. a class the sender had and this process lacks
                log.info("tracejit: a shipped signature of %s does not unpickle here (it compiles here): %s",
                         jitted.__name__, e)
                continue
            jitted._signatures.receive(key, Shipped(closed, out_tree, names, fits, entries, payload))


def _lookup(module, qualname):
    """The object named qualname in module (a decorated module-level function)."""
    obj = importlib.import_module(module)
    for part in qualname.split("."):
        obj = getattr(obj, part)
    return obj
