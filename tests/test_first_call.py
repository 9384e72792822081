"""What a process's first call pays: LLVM loads with tracejit (not on the first call), while the primitives and
the reference interpreter still import and run without llvmlite (tests/test_backend.py runs them with it
hidden)."""
import concurrent.futures
import os
import subprocess
import sys

import numpy as np
import pytest

import tracejit as tj
import tracejit.numpy as tnp
from tracejit.backend import generic_entry, llvm, runtime, vecmath

LOADED = """
import sys
import tracejit.primitives
from tracejit.core.trace import eval_ir
from tracejit.backend import llvm
print("llvmlite.binding" in sys.modules, llvm._machine.cache_info().currsize)
"""


def test_importing_tracejit_loads_llvm():
    """Importing any part of tracejit loads llvmlite and makes the target machine, as JAX loads its compiler at
    import; the first compile then starts from there."""
    proc = subprocess.run([sys.executable, "-c", LOADED], capture_output=True, text=True, timeout=120, check=False)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split() == ["True", "1"]


@pytest.mark.parametrize("shape", [(64, 512), (100_003,)])
def test_the_library_compiles_what_the_module_calls_and_no_more(shape, monkeypatch):
    """A module's library functions start compiling while LLVM compiles it (vecmath.py), each width exactly as
    its loops call it once optimised: rows of 512 need no scalar remainder, so no scalar exp is compiled for
    nothing (nothing is left pending); a long 1-D loop has a remainder, whose scalar exp is compiled."""
    monkeypatch.setattr(vecmath, "_addresses", {})     # as in a fresh process
    monkeypatch.setattr(vecmath, "_objects", {})
    monkeypatch.setattr(vecmath, "_pending", {})
    x = np.linspace(-2.0, 2.0, np.prod(shape), dtype=np.float32).reshape(shape)
    f = tj.jit(lambda x: tnp.sum(tnp.exp(x), axis=-1) * 0.5)
    np.testing.assert_allclose(f(x), np.sum(np.exp(x), axis=-1) * 0.5, rtol=1e-5)
    library = f.lower(x).compile()._entry.executable.object_code.library
    assert {name for name, _, _ in library} == {"exp"}
    assert (1 in {lanes for _, _, lanes in library}) == (len(shape) == 1)
    assert set(vecmath._addresses) == library and not vecmath._pending


def test_a_module_is_split_over_the_cores_other_compiles_leave(monkeypatch):
    """A module above PARALLEL_TEXT compiles in parts on the free cores, when its parts are balanced enough
    (SPLIT_SAVING): none is free while the library's functions compile on the other (the first call of a
    process), so it compiles whole then."""
    def attention(q, k, v):
        s = tnp.matmul(q, tnp.swapaxes(k, -1, -2)) * 0.125
        e = tnp.exp(s - tnp.max(s, axis=-1, keepdims=True))
        return tnp.matmul(e / tnp.sum(e, axis=-1, keepdims=True), v)
    q, k, v = (np.full((8, 512, 64), s, np.float32) for s in (0.5, 0.25, 1.0))
    text = tj.jit(attention).lower(q, k, v)._entry.executable.llvm_text
    monkeypatch.setattr(llvm, "PARALLEL_TEXT", min(llvm.PARALLEL_TEXT, len(text) - 1))   # (its kernels: 3 of 7K)
    monkeypatch.setattr(runtime, "NUM_THREADS", 2)
    split = llvm.split_module
    threads = []
    monkeypatch.setattr(llvm, "split_module", lambda text, n: threads.append(n) or split(text, n))
    library = concurrent.futures.Future()
    llvm.compiling_elsewhere(library)
    whole, _ = llvm.compile_objects(text)
    library.set_result(None)
    parts, _ = llvm.compile_objects(text)
    assert threads == [2] and len(whole) == 1 and len(parts) == len(split(text, 2)) > 1
    # parts that leave less than SPLIT_SAVING characters outside the largest one are not worth their fixed costs
    saving = len(text) - max(map(len, split(text, 2)))
    assert saving >= llvm.SPLIT_SAVING
    monkeypatch.setattr(llvm, "SPLIT_SAVING", saving + 1)
    assert len(llvm.compile_objects(text)[0]) == 1


FORK_AFTER_IMPORT = """
import os
import numpy as np
import tracejit as tj
from tracejit.backend import generic_entry
pid = os.fork()           # while the generic entry may be compiling on its thread (the fork waits for it)
f = tj.jit(lambda x: x * 2 + 1)
x = np.arange(5.0)
ok = all((f(x) == x * 2 + 1).all() for _ in range(3)) and f._fast.__self__[5] is not None
if pid == 0:
    os._exit(0 if ok else 1)
_, status = os.waitpid(pid, 0)
print(ok, os.waitstatus_to_exitcode(status), generic_entry._loaded[1])
"""


@pytest.mark.skipif(not generic_entry.OK or not hasattr(os, "fork"), reason="no generic entry or no fork here")
def test_the_generic_entry_compiles_as_tracejit_imports_and_survives_a_fork(tmp_path):
    """generic_entry.py's code compiles (or is read from the disk cache) on a thread started as tracejit
    imports; a process forked right after the import runs jitted code through it in both parent and child."""
    env = {**os.environ, "TRACEJIT_CACHE_DIR": str(tmp_path)}
    for source in ("compiled", "disk"):
        proc = subprocess.run([sys.executable, "-c", FORK_AFTER_IMPORT], capture_output=True, text=True,
                              timeout=120, check=False, env=env)
        assert proc.returncode == 0, proc.stderr
        assert proc.stdout.split() == ["True", "0", source]
        assert "Traceback" not in proc.stderr
