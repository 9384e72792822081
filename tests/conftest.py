import atexit
import importlib.util
import os
import shutil
import tempfile

import numpy as np
import oracle_process
import pytest
from hypothesis import settings

# Property tests draw the same examples on every run, so that CI is reproducible; explore new ones with
# TRACEJIT_HYPOTHESIS=explore (random examples, failures kept in .hypothesis/ and replayed).
settings.register_profile("deterministic", derandomize=True, database=None)
settings.register_profile("explore")
settings.load_profile(os.environ.get("TRACEJIT_HYPOTHESIS", "deterministic"))

# The persistent compile cache of the test run lives in a fresh folder, never in the user's home.
_cache_dir = tempfile.mkdtemp(prefix="tracejit-test-cache-")
atexit.register(shutil.rmtree, _cache_dir, ignore_errors=True)
os.environ["TRACEJIT_CACHE_DIR"] = _cache_dir


def pytest_collection_modifyitems(session, config, items):
    """The JAX harness's tests run last, and their oracle starts now in a child process (oracle_process.py),
    beside the other tests, where the session runs others too. Not in a pytest-xdist worker: there the other
    workers keep the cores busy, and the worker given the harness's file (--dist loadfile) computes it."""
    harness = [item for item in items if item.path.name == "test_against_jax.py"]
    in_worker = "PYTEST_XDIST_WORKER" in os.environ
    if harness and len(harness) < len(items) and importlib.util.find_spec("jax") is not None and not in_worker:
        others = [item for item in items if item.path.name != "test_against_jax.py"]
        items[:] = others + harness
        oracle_process.start()


def pytest_sessionfinish(session, exitstatus):
    oracle_process.stop()


@pytest.fixture
def rng():
    return np.random.default_rng(0)


@pytest.fixture
def cache_dir(tmp_path, monkeypatch):
    """A fresh persistent compile cache folder (not made yet), in use for the test."""
    import tracejit as tj  # (imported here: tracejit reads TRACEJIT_CACHE_DIR, set above, when imported)
    d = tmp_path / "cache"
    monkeypatch.setattr(tj.config, "cache_dir", str(d))
    monkeypatch.setattr(tj.config, "disk_cache", True)
    return d


@pytest.fixture(autouse=True)
def fresh_cache_warnings(monkeypatch):
    """The compile cache warns once per reason and process: each test sees its own warnings."""
    from tracejit.backend import disk_cache
    monkeypatch.setattr(disk_cache, "_warned", set())


@pytest.fixture(autouse=True)
def own_function_caches(monkeypatch):
    """jit(f) in a test does not reuse the code another test compiled for f (under other settings, which
    tests patch): each test starts a fresh registry of function caches (dispatch.shared_cache)."""
    import weakref

    from tracejit import dispatch
    monkeypatch.setattr(dispatch, "_by_function", weakref.WeakKeyDictionary())


# JAX, where installed, is the reference for semantics and derivatives; it runs with 64-bit types for the
# whole session (tracejit follows NumPy: float64 by default), set here once so that no test module's import
# changes another's reference.
try:
    import jax
except ImportError:
    pass
else:
    jax.config.update("jax_enable_x64", True)


@pytest.fixture(scope="module")
def jax64():
    """JAX (with 64-bit values, as set above), the reference of tests that compare with it; skipped without it."""
    return pytest.importorskip("jax")
