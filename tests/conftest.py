import atexit
import os
import shutil
import tempfile

import numpy as np
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


@pytest.fixture
def rng():
    return np.random.default_rng(0)


@pytest.fixture(scope="module")
def jax64():
    """JAX with 64-bit values (the reference of tests that compare with it; skipped where JAX is missing)."""
    jax = pytest.importorskip("jax")
    previous = jax.config.jax_enable_x64
    jax.config.update("jax_enable_x64", True)
    yield jax
    jax.config.update("jax_enable_x64", previous)
