"""The persistent compile cache: object code on disk, keyed by everything that determines it. In: a module's
text, its entry points and external symbols. Out: its object code (`object_code`), read from disk or
compiled (llvm.compile_objects) and written there.

Key: SHA-256 of the host description (format, tracejit, llvmlite, LLVM and numpy versions, target
triple, CPU name and features), the input signature and the LLVM module text. The module text is what
the backend made of the optimised IR, with every decision it took (fusion, threads, BLAS, numpy's layout)
and no address of the process (see llvm_text.py): equal text means equal code. It stands for the IR text,
which would add nothing to the key but its printing (5 ms for 1,000 equations, 8% of their LLVM time).

Entry `<key>.tjc` (no pickle, nothing executed but the object code itself):

    magic b"TJCACHE\\x02" | u32 metadata length | u64 objects' length | SHA-256 of metadata + objects
    metadata: UTF-8 JSON {"key", "host", "names" (entry points), "symbols" (external names),
              "objects" (the length of each object)}
    objects: the relocatable object code LLVM emitted (one object per part of a module compiled in
             parts), linked at load with this process's addresses

An entry is used only when its length, checksum, key and host all match; anything else (truncated,
corrupted, written on another CPU or by another version) is ignored and overwritten by a fresh compile.
Writes go to a temporary file in the same folder and are renamed into place, so readers and racing
writers only ever see whole entries. A hit refreshes the entry's mtime; after a write, the least
recently used entries are deleted until the folder is under `config.cache_max_bytes`. The folder is
created 0700 and refused (with a warning) when another user owns it or others can write to it.
A module that still bakes an address into its code (an `inttoptr (i64 N to ptr)` constant) is never
cached: its key would hold the address but not the data there.
"""
import functools
import hashlib
import json
import logging
import os
import struct
import tempfile

import numpy as np

from .._config import config
from . import llvm

log = logging.getLogger("tracejit")

MAGIC = b"TJCACHE\x02"
HEADER = struct.Struct("<8sIQ32s")
SUFFIX = ".tjc"


@functools.cache
def host():
    """What the object code depends on besides its module text."""
    import tracejit     # here: tracejit's __init__ imports this module and sets its version after that
    cpu, features = llvm.host_cpu()
    return {"format": MAGIC[-1], "tracejit": tracejit.__version__, **llvm.versions(), "numpy": np.__version__,
            "triple": llvm.triple(), "cpu": cpu, "features": features}


def entry_key(signature, llvm_text):
    h = hashlib.sha256(json.dumps(host(), sort_keys=True).encode())
    for part in (signature, llvm_text):
        h.update(b"\0" + part.encode())
    return h.hexdigest()


@functools.cache
def _usable(directory):
    """directory, created 0700 if missing, or None when it cannot be made or is not safely ours."""
    try:
        os.makedirs(directory, mode=0o700, exist_ok=True)
        st = os.stat(directory)
    except OSError as e:
        log.warning("tracejit: compile cache disabled, cannot create %s: %s", directory, e)
        return None
    if (hasattr(os, "getuid") and st.st_uid != os.getuid()) or st.st_mode & 0o022:
        log.warning("tracejit: compile cache disabled, %s is not owned by this user or is writable by others",
                    directory)
        return None
    return directory


def object_code(closed, llvm_text, names, symbols, use_disk=True):
    """(the object code of llvm_text as a list of objects, whether it came from disk). names: its entry
    points; symbols: the external names it uses (name -> address), both recorded in the entry."""
    use_disk = use_disk and config.disk_cache and "inttoptr (i64 " not in llvm_text
    directory = _usable(os.path.abspath(config.cache_dir)) if use_disk else None
    if directory is None:
        return llvm.compile_objects(llvm_text), False
    signature = " ".join(repr(v.aval) for v in closed.ir.invars)
    key = entry_key(signature, llvm_text)
    path = os.path.join(directory, key + SUFFIX)
    objects = read_entry(path, key, names, symbols)
    if objects is not None:
        return objects, True
    objects = llvm.compile_objects(llvm_text)
    write_entry(path, key, objects, names, symbols)
    evict(directory, keep=path)
    return objects, False


def encode(key, objects, names, symbols):
    meta = json.dumps({"key": key, "host": host(), "names": list(names), "symbols": sorted(symbols),
                       "objects": [len(o) for o in objects]}, sort_keys=True).encode()
    body = b"".join(objects)
    return HEADER.pack(MAGIC, len(meta), len(body), hashlib.sha256(meta + body).digest()) + meta + body


def decode(data, key, names, symbols):
    """(The objects of an entry, None), or (None, the reason it was refused)."""
    if len(data) < HEADER.size:
        return None, "truncated header"
    magic, n_meta, n_obj, digest = HEADER.unpack_from(data)
    if magic != MAGIC:
        return None, "not a tracejit cache entry of this format"
    if len(data) != HEADER.size + n_meta + n_obj:
        return None, f"length {len(data)}, expected {HEADER.size + n_meta + n_obj} (truncated)"
    body = memoryview(data)[HEADER.size:]
    if hashlib.sha256(body).digest() != digest:
        return None, "checksum mismatch (corrupted)"
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
    starts = [n_meta + sum(lengths[:k]) for k in range(len(lengths))]
    return [bytes(body[a:a + n]) for a, n in zip(starts, lengths)], None


def read_entry(path, key, names, symbols):
    try:
        with open(path, "rb") as f:
            data = f.read()
    except OSError:
        return None
    objects, why = decode(data, key, names, symbols)
    if objects is None:
        log.info("tracejit: ignoring compile cache entry %s: %s", path, why)
        return None
    try:
        os.utime(path)
    except OSError:
        pass
    return objects


def write_entry(path, key, objects, names, symbols):
    """Write atomically (temporary file + rename); failures only cost the cache."""
    data = encode(key, objects, names, symbols)
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


def evict(directory, keep=None):
    """Delete least recently used entries until the folder holds at most config.cache_max_bytes."""
    entries, total = [], 0
    try:
        with os.scandir(directory) as it:
            for e in it:
                if e.name.endswith(SUFFIX) and not e.name.startswith(".") and e.is_file():
                    st = e.stat()
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
