"""pmap, as jax.pmap on one CPU device: a jitted vmap with a named axis. JAX runs one example per device and
raises when the mapped axis is longer than the device count; tracejit has one device, so an axis of size 1
runs (the collectives of tracejit.lax see its name) and a longer one raises, pointing at vmap. Data-parallel
JAX programs written for `jax.device_count()` devices (the spmd MNIST example) thus run unchanged."""
import functools

from .api import jit
from .batching import _axes_per_leaf, vmap
from .core.api_util import name_of
from .core.pytree import tree_flatten
from .devices import CPU, _check_backend, device_count
from .traceback_util import api_boundary


def pmap(fun, axis_name=None, *, in_axes=0, out_axes=0, static_broadcasted_argnums=(), devices=None,
         backend=None, axis_size=None, donate_argnums=()):
    """fun mapped over a leading (in_axes) axis of its arguments, one example per device, compiled; axis_name
    names that axis for psum, pmean, all_gather ... inside. Arguments in static_broadcasted_argnums are static
    (hashable, the same for every example, as jit's static_argnums). One CPU device: the mapped axis must have
    size 1 (use tj.vmap to batch more examples on it). donate_argnums is accepted (buffers are never reused)."""
    if not callable(fun):
        raise TypeError(f"pmap: expected a callable, got {type(fun).__name__}")
    _check_backend(backend)
    if devices is not None and (len(devices) > 1 or any(d is not CPU for d in devices)):
        raise ValueError(f"pmap: devices must be a list of this process's devices ([{CPU!r}]), got {devices!r}")
    static = ((static_broadcasted_argnums,) if isinstance(static_broadcasted_argnums, int)
              else tuple(static_broadcasted_argnums))
    name = name_of(fun)

    def per_device(*args, **kwargs):
        positions = [k for k in range(len(args)) if k not in static]
        axes = tuple(in_axes[k] for k in positions) if isinstance(in_axes, (tuple, list)) else in_axes

        def on_mapped(*mapped, **kw):
            full = list(args)
            for k, x in zip(positions, mapped):
                full[k] = x
            return fun(*full, **kw)

        if not static:      # fun's signature names the arguments in vmap's errors
            on_mapped = functools.wraps(fun)(on_mapped)
        return vmap(on_mapped, axes, out_axes, axis_name=axis_name, axis_size=axis_size)(
            *[args[k] for k in positions], **kwargs)

    compiled = jit(per_device, static_argnums=static)

    @api_boundary
    @functools.wraps(fun)
    def mapped(*args, **kwargs):
        size = _mapped_size(args, kwargs, in_axes, static, axis_size)
        if size is not None and size > device_count():
            raise ValueError(f"pmap({name}) maps an axis of size {size}, which needs {size} devices; tracejit "
                             f"has {device_count()} (the CPU). Give the mapped axis size "
                             f"jax.device_count() ({device_count()}), or batch the examples with tj.vmap")
        return compiled(*args, **kwargs)

    return mapped


def _mapped_size(args, kwargs, in_axes, static, axis_size):
    """The longest mapped axis among the arguments (vmap itself reports mismatches), else axis_size."""
    spec = tuple(None if k in static else (in_axes[k] if isinstance(in_axes, (tuple, list)) else in_axes)
                 for k in range(len(args)))
    if isinstance(in_axes, (tuple, list)) and len(in_axes) != len(args):
        return axis_size    # vmap raises its own error for the count
    axes = _axes_per_leaf(spec, tuple(args), "in_axes", "the positional arguments")
    axes += [0] * len(tree_flatten(kwargs)[0])
    leaves = tree_flatten(tuple(args))[0] + tree_flatten(kwargs)[0]
    sizes = [_size(x, axis) for x, axis in zip(leaves, axes) if axis is not None]
    sizes = [s for s in sizes if s is not None]
    return max(sizes) if sizes else axis_size


def _size(x, axis):
    shape = getattr(x, "shape", ())
    return shape[axis] if -len(shape) <= axis < len(shape) else None


__all__ = ["pmap"]
