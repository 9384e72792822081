"""User settings: `tracejit.config.update("log_compiles", True)` or `tracejit.config.log_compiles = True`.

Each setting starts from an environment variable, read when tracejit is imported:

    log_compiles     TRACEJIT_LOG_COMPILES=1    log every compile-cache miss and why (logger "tracejit")
    disk_cache       TRACEJIT_DISK_CACHE=0      turns the persistent compile cache off (default on)
    cache_dir        TRACEJIT_CACHE_DIR         where it lives (default $XDG_CACHE_HOME/tracejit or
                                                ~/.cache/tracejit)
    cache_max_bytes  TRACEJIT_CACHE_MAX_BYTES   its size cap; least recently used entries go first
                                                (default 512 MiB)
    memory_cache_max_entries TRACEJIT_MEMORY_CACHE_MAX_ENTRIES  compiled signatures kept in memory per jitted
                                                function; least recently used ones are evicted and their
                                                machine code freed (default 256)
    memory_cache_max_bytes TRACEJIT_MEMORY_CACHE_MAX_BYTES  the same, for all jitted functions of the process
                                                together, by the estimated size of their entries (default 512 MiB)
    symbolic_dims_after TRACEJIT_SYMBOLIC_DIMS_AFTER  compile an axis symbolically once it has been seen
                                                with this many sizes (default 2; 0: never; see jit)
    scan_checkpoint  TRACEJIT_SCAN_CHECKPOINT=sqrt   scans of at least 256 iterations that do not say otherwise
                                                checkpoint sqrt(length) segments, so that reverse mode stores
                                                O(sqrt(length)) carries (see tj.lax.scan; default: off)
    debug_nans       TRACEJIT_DEBUG_NANS=1       a jitted function that returns a NaN raises FloatingPointError
                                                naming the first equation (and line of code) that made one
                                                (see tracejit.debug; default off)
    traceback_filtering TRACEJIT_TRACEBACK_FILTERING=off  show tracejit's own frames in the tracebacks of
                                                errors raised through jit, grad, vmap ... (default: only
                                                the user's frames, as JAX does)
    disable_jit      TRACEJIT_DISABLE_JIT=1      jitted functions run their Python function as it is, on the values
                                                they are given (default off); set it with `with tj.disable_jit():`,
                                                which also makes functions compiled before leave their fast path
    numpy_dtype_promotion TRACEJIT_NUMPY_DTYPE_PROMOTION=strict  "standard" (NumPy 2's promotion) or "strict":
                                                tracejit.numpy refuses implicit promotion between different dtypes
                                                (tracejit.dtypes.TypePromotionError), as JAX's strict mode
"""
import os
import warnings

from .core import promotion


def _flag(name, default):
    value = os.environ.get(name)
    return default if value is None else value.strip().lower() not in ("0", "false", "no", "off", "")


def _set_promotion(value):
    """Set numpy_dtype_promotion. Turning strict on drops the compiled code held in memory, so that functions
    compiled under standard promotion are traced again and raise where strict promotion refuses what they do (JAX
    keys its jit cache on the setting); code compiled under strict stays valid under standard."""
    before = promotion.mode()
    promotion.set_mode(value)
    if before != "strict" and promotion.mode() == "strict":
        from .dispatch import clear_caches  # (dispatch reads this module's config)
        clear_caches()


def _default_cache_dir():
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "tracejit")


class Config:
    """The settings; `update(name, value)` refuses names that are not settings."""

    def __init__(self):
        self.log_compiles = _flag("TRACEJIT_LOG_COMPILES", False)
        self.disk_cache = _flag("TRACEJIT_DISK_CACHE", True)
        self.cache_dir = os.environ.get("TRACEJIT_CACHE_DIR") or _default_cache_dir()
        self.cache_max_bytes = int(os.environ.get("TRACEJIT_CACHE_MAX_BYTES", str(512 << 20)))
        self.memory_cache_max_entries = int(os.environ.get("TRACEJIT_MEMORY_CACHE_MAX_ENTRIES", "256"))
        self.memory_cache_max_bytes = int(os.environ.get("TRACEJIT_MEMORY_CACHE_MAX_BYTES", str(512 << 20)))
        self.symbolic_dims_after = int(os.environ.get("TRACEJIT_SYMBOLIC_DIMS_AFTER", "2"))
        self.traceback_filtering = _flag("TRACEJIT_TRACEBACK_FILTERING", True)
        self.scan_checkpoint = os.environ.get("TRACEJIT_SCAN_CHECKPOINT") or None
        self.debug_nans = _flag("TRACEJIT_DEBUG_NANS", False)
        self.disable_jit = _flag("TRACEJIT_DISABLE_JIT", False)
        promotion.set_mode(os.environ.get("TRACEJIT_NUMPY_DTYPE_PROMOTION", "standard"))

    def update(self, name, value):
        """Set a setting; JAX's names work too (`jax_debug_nans`, and `jax_enable_x64`, `jax_platforms` ...,
        which describe what tracejit always does: accepted, and a warning where the value asks for more)."""
        if name.startswith("jax_") and (name[4:] in vars(self) or name == "jax_numpy_dtype_promotion"):
            name = name[4:]
        if name in _JAX_ONLY:
            if not _JAX_ONLY[name](value):
                warnings.warn(f"tracejit.config: {name}={value!r} is not supported and changes nothing "
                              f"(tracejit {_JAX_MEANING[name]})", stacklevel=2)
            return
        if name not in vars(self) and name != "numpy_dtype_promotion":
            raise AttributeError(f"tracejit.config has no setting {name!r}; settings: {', '.join(vars(self))}")
        if name == "numpy_dtype_promotion":
            _set_promotion(value)
            return
        setattr(self, name, value)

    numpy_dtype_promotion = property(lambda self: promotion.mode(), lambda self, value: _set_promotion(value),
                                     doc="'standard' or 'strict' (tracejit.core.promotion holds it)")

    def __getattr__(self, name):      # (only for names that are not settings)
        if name.startswith("jax_") and (name[4:] in vars(self) or name == "jax_numpy_dtype_promotion"):
            return getattr(self, name[4:])
        if name == "jax_enable_x64":
            return True
        raise AttributeError(f"tracejit.config has no setting {name!r}")

    def __repr__(self):
        settings = {**vars(self), "numpy_dtype_promotion": self.numpy_dtype_promotion}
        return "Config(" + ", ".join(f"{k}={v!r}" for k, v in settings.items()) + ")"


# JAX's settings that describe what tracejit always does: name -> whether a value asks for nothing else
_JAX_ONLY = {
    "jax_enable_x64": bool,
    "jax_platform_name": lambda v: v in ("cpu", None, ""),
    "jax_platforms": lambda v: v is None or "cpu" in str(v).split(","),
    "jax_default_matmul_precision": lambda v: True,
    "jax_numpy_rank_promotion": lambda v: v == "allow",
    "jax_default_device": lambda v: True,
}
_JAX_MEANING = {
    "jax_enable_x64": "follows NumPy's dtypes, float64 by default, as JAX with x64",
    "jax_platform_name": "runs on this machine's CPU",
    "jax_platforms": "runs on this machine's CPU",
    "jax_default_matmul_precision": "computes matmuls in their dtype",
    "jax_numpy_rank_promotion": "broadcasts as NumPy",
    "jax_default_device": "has one device",
}

config = Config()
