"""Tracebacks that show the user's code, as JAX's do.

An error raised while tracejit runs user code (tracing it under jit, grad, vmap ...) passes through
tracejit's own frames, 12 to 46 of them. The public entry points are boundaries: an exception that leaves
the outermost one has tracejit's frames removed from its traceback (the user's frames and the `(at
file:line)` pointer of shape errors stay), and a shape or index error raised on traced values says which
arguments of the traced function those values came from. `TRACEJIT_TRACEBACK_FILTERING=off` (or
`tracejit.config.traceback_filtering = False`) keeps every frame.
"""
import functools
import sys
import types

from ._config import config
from .core.errors import ShapeError, is_internal
from .core.trace import Tracer

NOTE = ("(tracejit removed its own frames from this traceback; TRACEJIT_TRACEBACK_FILTERING=off "
        "shows them)")

_boundaries = set()   # the code objects of the entry points, to find the outermost one on the stack


def mark_boundary(function):
    """Count `function` (one that calls `present` when an exception leaves it) as an entry point."""
    _boundaries.add(function.__code__)
    return function


def api_boundary(fun):
    """fun as a public entry point (the result of jit, grad, vmap ...)."""
    @functools.wraps(fun)
    def entry_point(*args, **kwargs):
        try:
            return fun(*args, **kwargs)
        except Exception as e:
            present(e)
            raise
    mark_boundary(entry_point)
    return entry_point


def present(error):
    """Called by an entry point that an exception is leaving: unless an enclosing entry point will do it,
    name the arguments behind a shape or index error and drop tracejit's frames from the traceback."""
    frame = sys._getframe(2)   # the entry point's caller
    while frame is not None:
        if frame.f_code in _boundaries:
            return
        frame = frame.f_back
    frames = []
    tb = error.__traceback__
    while tb is not None:
        frames.append(tb)
        tb = tb.tb_next
    _name_arguments(error, frames)
    if config.traceback_filtering and NOTE not in getattr(error, "__notes__", ()):
        filtered = None
        for tb in reversed(frames):
            if not is_internal(tb.tb_frame):
                filtered = types.TracebackType(filtered, tb.tb_frame, tb.tb_lasti, tb.tb_lineno)
        error.with_traceback(filtered)
        if hasattr(error, "add_note"):   # Python >= 3.11
            error.add_note(NOTE)


def _name_arguments(error, frames):
    """Append to a shape or index error the arguments that the traced operands of the failing operation
    (the tracers held by tracejit's frames below the user's innermost one) were derived from."""
    if not isinstance(error, (ShapeError, IndexError)) or not error.args or not isinstance(error.args[0], str):
        return
    users = [i for i, tb in enumerate(frames) if not is_internal(tb.tb_frame)]
    if not users:
        return
    sources = set()
    for tb in frames[users[-1] + 1:]:
        for value in tb.tb_frame.f_locals.values():
            for x in value if isinstance(value, (list, tuple)) else (value,):
                if isinstance(x, Tracer):
                    sources |= x.sources
    if sources:
        names = ", ".join(f"'{s}'" for s in sorted(sources))
        text = f"\n  (the operands are traced values derived from argument{'s' if len(sources) > 1 else ''} {names})"
        if not error.args[0].endswith(text):
            error.args = (error.args[0] + text,) + error.args[1:]
