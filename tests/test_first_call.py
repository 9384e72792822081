"""What a process's first call pays: LLVM loads with tracejit (not on the first call), while the primitives and
the reference interpreter still import and run without llvmlite (tests/test_backend.py runs them with it
hidden)."""
import subprocess
import sys

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
