"""jax.errors's names for tracejit's errors, so that `except jax.errors.X` code catches what tracejit raises.

Python's `except` matches by class inheritance, so each JAX name is bound to the tracejit class that is raised in
its situation (tracejit has one ConcretizationError where JAX distinguishes bool(), int() and array conversions of
a tracer: each of those names catches it). JAX's KeyReuseError has no counterpart (tracejit does not check key
reuse); JaxRuntimeError is RuntimeError, which tracejit raises where JAX's runtime would (a pure_callback whose
result does not match its declared shape)."""
from .core.avals import SymbolicDimError
from .core.errors import ConcretizationError, EscapedTracerError, ShapeError, TracejitError
from .core.ir import IRCheckError

ConcretizationTypeError = ConcretizationError
TracerBoolConversionError = ConcretizationError
TracerIntegerConversionError = ConcretizationError
TracerArrayConversionError = ConcretizationError
NonConcreteBooleanIndexError = ConcretizationError     # x[mask] with a traced mask
UnexpectedTracerError = EscapedTracerError
InconclusiveDimensionOperation = SymbolicDimError      # an operation that needs a symbolic dimension's size
JaxprTypeError = IRCheckError                          # an ill-typed IR (tj.check_ir)
JAXTypeError = TracejitError                           # the bases of JAX's own errors: tracejit's base
JAXIndexError = TracejitError
JaxRuntimeError = RuntimeError

__all__ = ["ConcretizationError", "ConcretizationTypeError", "EscapedTracerError", "InconclusiveDimensionOperation",
           "JAXIndexError", "JAXTypeError", "JaxRuntimeError", "JaxprTypeError", "NonConcreteBooleanIndexError",
           "ShapeError", "TracejitError", "TracerArrayConversionError", "TracerBoolConversionError",
           "TracerIntegerConversionError", "UnexpectedTracerError"]
