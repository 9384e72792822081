"""Compile-time accounting: the share of a jit compile's tracing that transforms (grad, vmap...) took.

`recording()` collects {phase: seconds} for the `@timed(phase)` calls its thread makes inside it; a timed
call inside another timed call counts once (in the outer). Outside a recording, a timed call costs one
thread-local lookup.
"""
import contextlib
import functools
import threading
import time

_local = threading.local()


@contextlib.contextmanager
def recording():
    outer = getattr(_local, "record", None)
    _local.record, _local.busy = {}, False
    try:
        yield _local.record
    finally:
        _local.record = outer


def timed(phase):
    def decorate(fun):
        @functools.wraps(fun)
        def wrapper(*args, **kwargs):
            record = getattr(_local, "record", None)
            if record is None or _local.busy:
                return fun(*args, **kwargs)
            _local.busy, t0 = True, time.perf_counter()
            try:
                return fun(*args, **kwargs)
            finally:
                _local.busy = False
                record[phase] = record.get(phase, 0.0) + time.perf_counter() - t0
        return wrapper
    return decorate
