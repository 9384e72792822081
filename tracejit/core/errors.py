"""The errors users see, and where they point."""
import os
import sys

import numpy as np

_PACKAGE_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def is_internal(frame):
    """Whether the frame runs tracejit's own code."""
    return internal_file(frame.f_code.co_filename)


def internal_file(filename):
    """Whether the source file is one of tracejit's own."""
    return os.path.abspath(filename).startswith(_PACKAGE_DIR + os.sep)


def user_frame():
    """The innermost stack frame outside tracejit: the line a user wants in an error."""
    frame = sys._getframe(1)
    while frame is not None:
        if not is_internal(frame) and "importlib" not in frame.f_code.co_filename:
            return frame
        frame = frame.f_back
    return None


def user_location():
    frame = user_frame()
    if frame is None:
        return ""
    return f"{frame.f_code.co_filename}:{frame.f_lineno}"


class TracejitError(Exception):
    """Base class of tracejit's own errors."""


class ShapeError(TracejitError, ValueError):
    """Operands whose shapes do not fit the operation; names both shapes and the user's line."""

    def __init__(self, message):
        where = user_location()
        super().__init__(f"{message}\n  (at {where})" if where else message)


class ConcretizationError(TracejitError, TypeError):
    """A traced value was used where Python needs a concrete one (if, float(), int(), np.asarray)."""


class EscapedTracerError(TracejitError, RuntimeError):
    """A tracer was used after the trace that made it had ended."""


class AxisError(ShapeError, np.exceptions.AxisError):
    """An axis out of bounds: a ValueError and an IndexError, and caught by `except np.exceptions.AxisError`,
    as NumPy's."""
