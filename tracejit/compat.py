"""JAX's small top-level helpers, so that JAX code runs unchanged: the host/process queries of one CPU process,
device_get, typeof, the name-stack pass-throughs, and the context managers disable_jit, ensure_compile_time_eval,
debug_nans and log_compiles. Each is what JAX's does on one CPU process; where tracejit has less to do (no name
stack, no devices to copy from) it says so."""
import contextlib
import os
import platform
import sys

import numpy as np

from . import dispatch
from ._config import config
from .core.api_util import leaf_aval
from .core.avals import ShapedArray
from .core.pytree import tree_map
from .core.trace import Tracer, eager
from .devices import _check_backend, device_count, local_device_count

# ------------------------------------------------------------------------------------------ processes, hosts

def process_index(backend=None):
    """0: tracejit runs in one process (jax.process_index)."""
    _check_backend(backend)
    return 0


def process_count(backend=None):
    """1: one process (jax.process_count)."""
    _check_backend(backend)
    return 1


host_id = process_index          # JAX's older names
host_count = process_count


def print_environment_info(return_string=False):
    """The versions and platform a bug report needs (jax.print_environment_info); returned as a string with
    return_string=True, else printed."""
    from . import __version__
    try:
        import llvmlite
        llvm = llvmlite.__version__
    except ImportError:
        llvm = "not installed (tracing and the interpreter only)"
    lines = [f"tracejit: {__version__}", f"numpy:    {np.__version__}", f"llvmlite: {llvm}",
             f"python:   {sys.version.replace(chr(10), ' ')}",
             f"device info: cpu-{device_count()}, {local_device_count()} local devices, {os.cpu_count()} cores",
             f"process_count: {process_count()}", f"platform: {platform.uname()}"]
    lines += [f"{k}={v}" for k, v in sorted(os.environ.items()) if k.startswith("TRACEJIT_")]
    info = "\n".join(lines)
    if return_string:
        return info
    print(info)
    return None


# ------------------------------------------------------------------------------------------ values, types

def device_get(x):
    """x with its arrays as numpy arrays (jax.device_get): tracejit's arrays already live in host memory, so
    an ndarray comes back as it is; other leaves with __array__ are converted, the rest (Python scalars) and
    tracers are returned unchanged."""
    def get(leaf):
        if isinstance(leaf, Tracer) or not hasattr(leaf, "__array__"):
            return leaf
        return np.asarray(leaf)
    return tree_map(get, x)


def typeof(x):
    """The abstract value of x (shape, dtype, weak_type) as a ShapeDtypeStruct, as jax.typeof: a Python scalar
    is weakly typed, a tracer gives its aval; anything else that is not an array is a TypeError."""
    if isinstance(x, ShapedArray):
        return x
    try:
        return leaf_aval(x)
    except TypeError:
        raise TypeError(f"Argument '{x!r}' of type '{type(x).__name__}' is not a valid tracejit type "
                        "(an array, a tracer or a scalar)") from None


# -------------------------------------------------------------------------------------------- name stack

def named_call(fun, *, name=None):
    """fun itself: JAX adds `name` to the names of the operations it stages; tracejit's IR has no name stack, so
    there is nothing to add (accepted so that JAX code runs)."""
    if not callable(fun):
        raise TypeError(f"named_call: expected a callable, got {type(fun).__name__}")
    return fun


@contextlib.contextmanager
def named_scope(name):
    """A context manager (or decorator) that does nothing: JAX names the operations staged inside it; tracejit's
    IR has no name stack. A name that is not a string is a TypeError, as in JAX."""
    if not isinstance(name, str):
        raise TypeError("named_scope name argument must be a string.")
    yield


# ------------------------------------------------------------------------------------------ context managers

@contextlib.contextmanager
def ensure_compile_time_eval():
    """Inside the block, operations on concrete values compute with NumPy even while a function is traced (under
    jit), so that Python code can read their values; operations on traced values are still staged, as in JAX."""
    with eager():
        yield


@contextlib.contextmanager
def disable_jit(disable=True):
    """Inside the block, calling a jitted function runs its Python function as it is, on the values it is given
    (jax.disable_jit): print() shows values, a debugger stops in it, Python control flow reads its arguments;
    other transformations (grad, vmap) still trace. The setting is process-wide (tj.config.disable_jit), where
    JAX's is per thread."""
    saved = config.disable_jit
    config.disable_jit = bool(disable)
    if disable:
        dispatch.drop_fast_paths()
    try:
        yield
    finally:
        config.disable_jit = saved


class _Setting:
    """A boolean setting of tj.config as JAX's config states (jax.debug_nans, jax.log_compiles): `with
    tj.debug_nans(True):` sets it for the block (process-wide; JAX's is per thread), `.value` reads it."""

    def __init__(self, name):
        self.__name__ = self.name = name
        self.__doc__ = f"Context manager for the `{name}` setting of tracejit.config (see tracejit.config)."

    @property
    def value(self):
        return getattr(config, self.name)

    @contextlib.contextmanager
    def __call__(self, new_val=True):
        saved = getattr(config, self.name)
        config.update(self.name, new_val)
        try:
            yield
        finally:
            config.update(self.name, saved)

    def __bool__(self):
        raise TypeError(f"bool() of tracejit.{self.name}, a context manager; read tracejit.config.{self.name} "
                        f"(or tracejit.{self.name}.value)")

    def __repr__(self):
        return f"tracejit.{self.name} (now {self.value})"


debug_nans = _Setting("debug_nans")
log_compiles = _Setting("log_compiles")

_NO_VALUE = object()


class _ValueSetting(_Setting):
    """A setting that takes its value as an argument (jax.numpy_dtype_promotion): `with
    tj.numpy_dtype_promotion("strict"):`; called without one, a TypeError, as JAX's."""

    @contextlib.contextmanager
    def __call__(self, new_val=_NO_VALUE):
        if new_val is _NO_VALUE:
            raise TypeError(f"Context manager for {self.name} config option requires an argument representing the "
                            "new value for the config option.")
        with super().__call__(new_val):
            yield


class _FixedSetting(_ValueSetting):
    """A JAX setting that describes what tracejit always does (x64 types, matmuls in their dtype, NumPy's
    broadcasting, one device): `with` accepts any value JAX accepts, and tracejit.config warns where the value
    asks for something tracejit does not do; `.value` is what tracejit does. default_device remembers the
    device it was given inside the block (there is one device, so it changes nothing)."""

    def __init__(self, name, value, default_arg=_NO_VALUE, remember=False):
        super().__init__(name)
        self.fixed, self.default_arg, self.remember = value, default_arg, remember
        self.current = value

    @property
    def value(self):
        return self.current

    @contextlib.contextmanager
    def __call__(self, new_val=_NO_VALUE):
        new_val = self.default_arg if new_val is _NO_VALUE else new_val
        if new_val is _NO_VALUE:
            raise TypeError(f"Context manager for {self.name} config option requires an argument representing the "
                            "new value for the config option.")
        config.update(f"jax_{self.name}", new_val)
        saved = self.current
        self.current = new_val if self.remember else self.fixed
        try:
            yield
        finally:
            self.current = saved


numpy_dtype_promotion = _ValueSetting("numpy_dtype_promotion")
enable_x64 = _FixedSetting("enable_x64", True, default_arg=True)
default_matmul_precision = _FixedSetting("default_matmul_precision", None)
numpy_rank_promotion = _FixedSetting("numpy_rank_promotion", "allow")
default_device = _FixedSetting("default_device", None, remember=True)


def effects_barrier():
    """Waits until the effects of the calls made so far have run (jax.effects_barrier): returns at once, since a
    tracejit call runs its effects (debug.print, debug.callback, io_callback) before it returns."""
    return



__all__ = ["debug_nans", "default_device", "default_matmul_precision", "device_get", "disable_jit",
           "effects_barrier", "enable_x64", "ensure_compile_time_eval", "host_count", "host_id", "log_compiles",
           "named_call", "named_scope", "numpy_dtype_promotion", "numpy_rank_promotion", "print_environment_info",
           "process_count", "process_index", "typeof"]
