"""The persistent compile cache: object code on disk, keyed by everything that determines it. In: a module's
text, its entry points and external symbols. Out: its object code (`object_code`): shipped with a pickle,
read from disk, or compiled (llvm.compile_objects) and written there.

Key: SHA-256 of the host description (format, tracejit, its backend's sources, llvmlite, LLVM and numpy
versions, target triple, CPU name and features), the input signature and the LLVM module text. The module text is what
the backend made of the optimised IR, with every decision it took (fusion, threads, BLAS, numpy's layout)
and no address of the process (see llvm_text.py): equal text means equal code. It stands for the IR text,
which would add nothing to the key but its printing (5 ms for 1,000 equations, 8% of their LLVM time).

Entry `<key>.tjc` (no pickle, nothing executed but the object code itself):

    magic b"TJCACHE\\x03" | u32 metadata length | u64 objects' length | digest of metadata + objects
    metadata: UTF-8 JSON {"key", "host", "names" (entry points), "symbols" (external names),
              "library" (the vector math library's functions called: [name, type, lanes] each),
              "objects" (the length of each object)}
    objects: the relocatable object code LLVM emitted (one object per part of a module compiled in
             parts), linked at load with this process's addresses

The digest is an HMAC-SHA-256 under this user's key (the file `hmac.key` in the folder, 32 random bytes,
mode 0600) for entries on disk, and a plain SHA-256 for entries shipped inside a pickle (`shipped`), whose
trust is the pickle's own (see tracejit/shipping.py). An entry is used only when its length, digest, key
and host all match; anything else (truncated, corrupted, copied from another user or machine, written on
another CPU or by another version) is ignored and overwritten by a fresh compile.

Trust model. An entry is machine code that this process will run: the digest detects damage and entries
made elsewhere, and the key that they fit, but a writer holding the HMAC key (this user) is trusted. So
the cache is read only when nobody else can write to it: the folder must be owned by this user and not
writable by group or others (it is created 0700), and so must each entry, which must also be a regular
file (a FIFO would block open(), a symbolic link could point out of the folder: both are refused). A
refused folder or entry is not read, a warning says why (once per reason), and compiles proceed.

Writes go to a temporary file (0600) in the same folder and are renamed into place, so readers and racing
writers only ever see whole entries. A hit refreshes the entry's mtime; after a write that may take the
folder past `config.cache_max_bytes`, the least recently used entries are deleted until it is under.
A module that still bakes an address into its code (an `inttoptr (i64 N to ptr)` constant) is never
cached: its key would hold the address but not the data there.
"""
import dataclasses
import functools
import hashlib
import hmac
import json
import logging
import os
import pathlib
import stat
import struct
import tempfile
import time

import numpy as np

from .._config import config
from . import libcalls, llvm

log = logging.getLogger("tracejit")

MAGIC = b"TJCACHE\x04"
HEADER = struct.Struct("<8sIQ32s")
SUFFIX = ".tjc"
KEY_FILE = "hmac.key"
KEY_BYTES = 32
RESCAN_SECONDS = 60     # how old this process's count of a folder's bytes may grow before a write scans again
_counted = {}           # folder -> (bytes of its entries at this process's last scan plus its writes since, when)


@functools.cache
def host():
    """What the object code depends on besides its module text. The backend's sources count too (1 ms to hash):
    what it does to a module's text after writing it (the pass pipeline, the vector math library's renaming)
    changes between commits of one version, and an entry made before such a change ran the old code."""
    import tracejit  # here: tracejit's __init__ imports this module and sets its version after that
    cpu, features = llvm.host_cpu()
    backend = hashlib.sha256()
    for path in sorted(pathlib.Path(__file__).parent.glob("*.py")):
        backend.update(path.read_bytes())
    return {"format": MAGIC[-1], "tracejit": tracejit.__version__, "backend": backend.hexdigest(),
            **llvm.versions(), "numpy": np.__version__, "triple": llvm.triple(), "cpu": cpu, "features": features}


def entry_key(signature, llvm_text):
    h = hashlib.sha256(json.dumps(host(), sort_keys=True).encode())
    for part in (signature, llvm_text):
        h.update(b"\0" + part.encode())
    return h.hexdigest()


_warned = set()


def _refuse(what, why):
    """Warn, once per reason, that `what` (a folder or an entry) is not read."""
    if why not in _warned:
        _warned.add(why)
        log.warning("tracejit: compile cache %s not read: %s. The cache holds machine code, so tracejit reads only "
                    "regular files in a folder that nobody but you can write to; compiling instead.", what, why)


def _unsafe(st, private=False):
    """Why a file or folder with this stat is not trusted, or None."""
    if hasattr(os, "getuid") and st.st_uid != os.getuid():
        return f"owned by user id {st.st_uid}, not by you ({os.getuid()})"
    if st.st_mode & (0o077 if private else 0o022):
        return (f"{'readable or writable' if private else 'writable'} by group or others "
                f"(mode {stat.S_IMODE(st.st_mode):o})")
    return None


def read_private(path, private=False):
    """(bytes of the regular file at path, None) or (None, why not): refuses symbolic links, FIFOs, devices
    and files that are not ours or that group or others may write to (private: read either)."""
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        return None, "missing"
    except OSError as e:
        return None, f"cannot stat: {e}"
    if not stat.S_ISREG(st.st_mode):
        return None, "a symbolic link" if stat.S_ISLNK(st.st_mode) else "not a regular file"
    flags = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)
    try:
        fd = os.open(path, flags)
    except OSError as e:
        return None, f"cannot open: {e}"
    with os.fdopen(fd, "rb") as f:
        st = os.fstat(fd)       # the file opened, which may have been swapped in since lstat
        why = "not a regular file" if not stat.S_ISREG(st.st_mode) else _unsafe(st, private)
        return (None, why) if why else (f.read(), None)


@functools.cache
def _usable(directory):
    """directory, created 0700 if missing, or None when it cannot be made or is not safely ours."""
    try:
        os.makedirs(directory, mode=0o700, exist_ok=True)
        st = os.stat(directory)
    except OSError as e:
        log.warning("tracejit: compile cache disabled, cannot create %s: %s", directory, e)
        return None
    why = _unsafe(st)
    if why:
        _refuse(f"folder {directory}", f"the folder is {why}")
        return None
    return directory


@functools.cache
def mac_key(directory):
    """This user's HMAC key for the entries in directory (made on first use), or None when its file is not
    safely ours."""
    path = os.path.join(directory, KEY_FILE)
    for _ in range(2):
        key, why = read_private(path, private=True)
        if key is not None and len(key) == KEY_BYTES:
            return key
        if key is not None:
            why = f"{len(key)} bytes, expected {KEY_BYTES} (delete it to start afresh)"
        if why != "missing":
            _refuse(f"key {path}", f"the key file is {why}")
            return None
        try:      # a whole file or none: written aside, then linked into place (fails if another was first)
            fd, tmp = tempfile.mkstemp(dir=directory, prefix=".tmp-")
            try:
                with os.fdopen(fd, "wb") as f:
                    f.write(os.urandom(KEY_BYTES))
                os.link(tmp, path)
            finally:
                os.unlink(tmp)
        except FileExistsError:
            continue
        except OSError as e:
            log.warning("tracejit: compile cache disabled, cannot create its key %s: %s", path, e)
            return None
    return None


@dataclasses.dataclass(frozen=True)
class ObjectCode:
    """A module's object code and what it fits: its key (None for a module with a baked address, which fits
    this process only), objects, entry point names, external symbol names, the vector math library's
    functions it calls (a frozenset of (name, type, lanes): vecmath.symbols gives their addresses) and where
    it came from ("shipped", "disk" or "compiled")."""
    key: str
    objects: list
    names: list
    symbols: list
    library: frozenset
    source: str

    def entry(self):
        """The entry in the disk-cache format with a SHA-256 digest, as a pickle ships it."""
        return encode(self.key, (self.objects, self.library), self.names, self.symbols)


def object_code(closed, llvm_text, names, symbols, use_disk=True, shipped=None):
    """The ObjectCode of llvm_text: shipped, read from disk, or compiled. names: its entry points; symbols:
    the external names it uses (name -> address), both recorded in entries; shipped: {key: entry} that
    came with a pickle (checked by SHA-256)."""
    return cached_object_code(" ".join(repr(v.aval) for v in closed.ir.invars), llvm_text, names, symbols, use_disk,
                              shipped)


def cached_object_code(signature, llvm_text, names, symbols, use_disk=True, shipped=None, folder=None, alone=False,
                       passes=None):
    """object_code for a module whose key is made from signature (a string), its text and passes; folder: a
    subfolder of the cache's folder that holds such entries (the vector math library's); alone and passes: as
    llvm.compile_objects's (alone: several threads compile at once)."""
    baked = "inttoptr (i64 " in llvm_text
    key = None if baked else entry_key(signature if passes is None else f"{signature} {passes}", llvm_text)

    def made(compiled, source):
        objects, library = compiled
        return ObjectCode(key, objects, list(names), sorted(symbols), frozenset(library), source)

    if shipped and key in shipped:
        compiled, why = decode(shipped[key], key, names, symbols)
        if compiled is not None:
            return made(compiled, "shipped")
        log.info("tracejit: shipped code not used: %s", why)
    directory = _usable(os.path.abspath(config.cache_dir)) if use_disk and config.disk_cache and not baked else None
    if directory is not None and folder:
        directory = _usable(os.path.join(directory, folder))
    mac = mac_key(directory) if directory is not None else None
    if mac is None:
        return made(llvm.compile_objects(llvm_text, alone, passes), "compiled")
    path = os.path.join(directory, key + SUFFIX)
    compiled = read_entry(path, key, names, symbols, mac)
    if compiled is not None:
        return made(compiled, "disk")
    compiled = llvm.compile_objects(llvm_text, alone, passes)
    _written(directory, path, write_entry(path, key, compiled, names, symbols, mac))
    return made(compiled, "compiled")


def _digest(data, mac):
    return hmac.new(mac, data, hashlib.sha256).digest() if mac is not None else hashlib.sha256(data).digest()


def encode(key, compiled, names, symbols, mac=None):
    """An entry's bytes for compiled = (objects, the library functions they call); its digest an HMAC under
    mac, or a SHA-256 when mac is None."""
    objects, library = compiled
    meta = json.dumps({"key": key, "host": host(), "names": list(names), "symbols": sorted(symbols),
                       "library": sorted(map(list, library)), "objects": [len(o) for o in objects]},
                      sort_keys=True).encode()
    body = b"".join(objects)
    return HEADER.pack(MAGIC, len(meta), len(body), _digest(meta + body, mac)) + meta + body


def decode(data, key, names, symbols, mac=None):
    """((The objects of an entry, the library functions they call), None), or (None, the reason it was
    refused)."""
    if len(data) < HEADER.size:
        return None, "truncated header"
    magic, n_meta, n_obj, digest = HEADER.unpack_from(data)
    if magic != MAGIC:
        return None, "not a tracejit cache entry of this format"
    if len(data) != HEADER.size + n_meta + n_obj:
        return None, f"length {len(data)}, expected {HEADER.size + n_meta + n_obj} (truncated)"
    body = memoryview(data)[HEADER.size:]
    if not hmac.compare_digest(_digest(body, mac), digest):
        return None, ("HMAC mismatch (corrupted, or written with another key: another user or machine)"
                      if mac is not None else "checksum mismatch (corrupted)")
    try:
        meta = json.loads(bytes(body[:n_meta]))
    except ValueError:
        return None, "unreadable metadata"
    if not isinstance(meta, dict) or meta.get("key") != key:
        return None, "written for another key"
    if meta.get("host") != host():
        return None, "written for another host, CPU or version"
    if meta.get("names") != list(names) or meta.get("symbols") != sorted(symbols):
        return None, "entry points or symbols differ"
    lengths = meta.get("objects")
    if (not isinstance(lengths, list) or not all(isinstance(n, int) and n > 0 for n in lengths)
            or sum(lengths) != n_obj):
        return None, "object lengths do not add up"
    library = meta.get("library")
    if not isinstance(library, list) or not all(_library_function(f) for f in library):
        return None, "unreadable library functions"
    starts = [n_meta + sum(lengths[:k]) for k in range(len(lengths))]
    return ([bytes(body[a:a + n]) for a, n in zip(starts, lengths)], {tuple(f) for f in library}), None


def entry_names(data):
    """The entry points an entry says it holds (unchecked: decode checks them against what its user expects),
    or [] where its metadata is unreadable."""
    try:
        _, n_meta, _, _ = HEADER.unpack_from(data)
        names = json.loads(bytes(data[HEADER.size:HEADER.size + n_meta])).get("names")
    except (struct.error, ValueError, AttributeError):
        return []
    return names if isinstance(names, list) and all(isinstance(n, str) for n in names) else []


MAX_LANES = 256     # the widest vector of a library function an entry may name (libcalls.library_calls)


def _library_function(f):
    """Whether an entry's item of "library" is a [name, type, lanes] of the vector math library."""
    return (isinstance(f, list) and len(f) == 3 and f[0] in libcalls.LIBRARY and f[1] in ("float", "double")
            and type(f[2]) is int and 1 <= f[2] <= MAX_LANES)


def read_entry(path, key, names, symbols, mac):
    data, why = read_private(path)
    if data is None:
        if why != "missing":
            _refuse(f"entry {path}", f"an entry is {why}")
        return None
    compiled, why = decode(data, key, names, symbols, mac)
    if compiled is None:
        log.info("tracejit: ignoring compile cache entry %s: %s", path, why)
        return None
    try:
        os.utime(path, follow_symlinks=False)
    except OSError:
        pass
    return compiled


def write_entry(path, key, compiled, names, symbols, mac):
    """Write atomically (temporary file + rename); failures only cost the cache. Returns the bytes written."""
    data = encode(key, compiled, names, symbols, mac)
    try:
        fd, tmp = tempfile.mkstemp(dir=os.path.dirname(path), prefix=".tmp-", suffix=SUFFIX)
        try:
            with os.fdopen(fd, "wb") as f:
                f.write(data)
            os.replace(tmp, path)
        except BaseException:
            os.unlink(tmp)
            raise
    except OSError as e:
        log.info("tracejit: could not write compile cache entry %s: %s", path, e)
        return 0
    return len(data)


def _written(directory, path, nbytes):
    """Evict after a write of nbytes only when the folder may now be past the cap by this process's count, or
    the count is old (other processes write too): a scan of every entry after each compile cost O(entries),
    45 ms a compile at 6,000 entries (quadratic over a session: a test run's largest cost)."""
    counted = _counted.get(directory)
    if counted is None or counted[0] + nbytes > config.cache_max_bytes or \
            time.monotonic() - counted[1] > RESCAN_SECONDS:
        evict(directory, keep=path)
    else:
        _counted[directory] = (counted[0] + nbytes, counted[1])


def evict(directory, keep=None):
    """Delete least recently used entries until the folder holds at most config.cache_max_bytes; count the
    bytes left (`_written`)."""
    entries, total = [], 0
    try:
        with os.scandir(directory) as it:
            for e in it:
                if e.name.endswith(SUFFIX) and not e.name.startswith(".") and e.is_file(follow_symlinks=False):
                    st = e.stat(follow_symlinks=False)
                    entries.append((st.st_mtime, e.path, st.st_size))
                    total += st.st_size
    except OSError:
        return
    entries.sort()
    for _, path, size in entries:
        if total <= config.cache_max_bytes:
            break
        if path == keep:
            continue
        try:
            os.unlink(path)
        except OSError:
            continue
        total -= size
    _counted[directory] = (total, time.monotonic())
