"""The JAX harness's reports (test_against_jax.results), computed in a child process that starts when the test
session has collected its tests and runs beside the other test files: its XLA compiles are most of a minute of
CPU that the session's second core can take, so the harness's tests, which run last, find them ready."""
import os
import pickle
import shutil
import subprocess
import sys
import tempfile
import warnings

_child = {}

_PROGRAM = """
import pickle, sys
sys.path.insert(0, {tests!r})
import test_against_jax
reports = test_against_jax.compute_results()
with open({path!r}, "wb") as f:
    pickle.dump(reports, f)
"""


def start():
    """Start computing the reports in a child process."""
    _child["folder"] = tempfile.mkdtemp(prefix="tracejit-jax-oracle-")
    path = os.path.join(_child["folder"], "reports.pickle")
    program = _PROGRAM.format(tests=os.path.dirname(os.path.abspath(__file__)), path=path)
    with open(path + ".stderr", "wb") as errors:      # (a pipe could fill up and stall the child)
        _child["process"] = subprocess.Popen([sys.executable, "-c", program], stdout=subprocess.DEVNULL,
                                             stderr=errors)
    _child["path"] = path


def result():
    """The child's reports, once it is done; None where no child ran or it failed (the caller computes them)."""
    process = _child.pop("process", None)
    if process is None:
        return None
    process.wait()
    if process.returncode:
        with open(_child["path"] + ".stderr", errors="replace") as errors:
            warnings.warn(f"the JAX oracle's child process failed; computing in process:\n{errors.read()[-2000:]}")
        return None
    with open(_child["path"], "rb") as f:
        return pickle.load(f)


def stop():
    """Kill the child if it still runs (the session stopped early) and remove its files."""
    process = _child.pop("process", None)
    if process is not None and process.poll() is None:
        process.kill()
        process.wait()
    if "folder" in _child:
        shutil.rmtree(_child.pop("folder"), ignore_errors=True)
