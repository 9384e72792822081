"""Type annotations, as jax.typing: `Array` for values a function computes with (tracejit's arrays are numpy
arrays, and inside a trace they are tracers), `ArrayLike` for what it accepts, `DTypeLike` for dtype arguments.

`Array` is an abstract base class with numpy.ndarray and the Tracer registered, so that `isinstance(x, tj.Array)`
holds for every value a tracejit function sees, as `isinstance(x, jax.Array)` holds for JAX's arrays and tracers."""
import abc
from typing import Any, Protocol, Union, runtime_checkable

import numpy as np

from .core.trace import Tracer


class Array(abc.ABC):
    """The type of tracejit's arrays: numpy.ndarray outside a trace, tracers inside one (as jax.Array)."""

    __slots__ = ()


Array.register(np.ndarray)
Array.register(Tracer)


@runtime_checkable
class SupportsDType(Protocol):
    """Anything with a dtype attribute (np.float32, an array, a ShapeDtypeStruct)."""

    @property
    def dtype(self) -> np.dtype: ...


ArrayLike = Union[Array, np.ndarray, np.bool_, np.number, bool, int, float, complex]   # noqa: UP007
DTypeLike = Union[str, type[Any], np.dtype, SupportsDType]                            # noqa: UP007

__all__ = ["Array", "ArrayLike", "DTypeLike", "SupportsDType"]
