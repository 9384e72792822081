"""Devices, as JAX code asks for them. tracejit computes on one device, this machine's CPU (compiled code
spreads large loops over its cores), and its arrays are numpy arrays in host memory; so these functions
are honest about that: one CPU device, nothing to copy to, nothing to wait for."""
import numpy as np

from .core.pytree import tree_map
from .core.trace import Tracer


class Device:
    """The CPU, with the attributes JAX code reads (platform, id, device_kind, process_index)."""

    platform = "cpu"
    device_kind = "cpu"
    id = 0
    process_index = 0

    def __repr__(self):
        return f"CpuDevice(id={self.id})"

    def __str__(self):
        return f"{self.platform}:{self.id}"


CPU = Device()


def _check_backend(backend):
    if backend not in (None, "cpu"):
        raise RuntimeError(f"tracejit computes on the CPU only: backend {backend!r} is not available "
                           "(the one backend is 'cpu')")


def devices(backend=None):
    """[the CPU device]: tracejit has one device (backend None or "cpu"; another is an error)."""
    _check_backend(backend)
    return [CPU]


def local_devices(process_index=None, backend=None):
    """[the CPU device], as devices(): one process, one device."""
    _check_backend(backend)
    if process_index not in (None, 0):
        raise ValueError(f"local_devices: there is one process, index 0; got process_index={process_index!r}")
    return [CPU]


def device_count(backend=None):
    """1: the CPU."""
    _check_backend(backend)
    return 1


def local_device_count(backend=None):
    """1: the CPU."""
    return device_count(backend)


def default_backend():
    """'cpu'."""
    return "cpu"


def device_put(x, device=None, *, src=None, donate=False, may_alias=None):
    """The leaves of x as numpy arrays, as jax.device_put: there is one device and it uses host memory, so
    `device`, `src` and `donate` are accepted and ignored, and an array is returned as it is unless may_alias=False
    asks for a copy. Tracers (inside jit) stay tracers."""
    def put(leaf):
        if isinstance(leaf, Tracer):
            return leaf
        return np.array(leaf) if may_alias is False else np.asarray(leaf)
    return tree_map(put, x)


def live_arrays(platform=None):
    """[]: jax.live_arrays lists the device buffers JAX's runtime holds for live jax.Arrays. tracejit's runtime holds
    no arrays: its results are numpy arrays owned by the caller (freed by Python when unreferenced, untracked by
    tracejit, and not countable through gc either), and its compiled code keeps only scratch memory between calls.
    So there is nothing of its own to list, and code that deletes or counts live arrays to find leaks finds none
    here; use tracemalloc to see the memory numpy arrays hold. platform None or "cpu"."""
    _check_backend(platform)
    return []


def block_until_ready(x):
    """x itself: tracejit's calls return only once their results are computed, so there is nothing to wait
    for (jax.block_until_ready, for code written for asynchronous dispatch)."""
    return x
