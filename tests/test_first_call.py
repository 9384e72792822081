"""What a process's first call pays: LLVM loads with tracejit (not on the first call), while the primitives and
the reference interpreter still import and run without llvmlite (tests/test_backend.py runs them with it
hidden)."""
import subprocess
import sys

import numpy as np
import pytest

import tracejit as tj
import tracejit.numpy as tnp
from tracejit.backend import vecmath

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
