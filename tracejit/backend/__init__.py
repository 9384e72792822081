"""The LLVM backend: lower an optimised ClosedIR to native code and run it (see codegen.py for the plan)."""
from .executable import MISS, Executable


def compile_ir(closed, fuse=True, cache=True):
    """An Executable for a ClosedIR whose constants are arrays (fuse=False: one loop per equation;
    cache=False: never the disk cache)."""
    return Executable(closed, fuse, cache)


class Compiled:
    """A compiled signature: call it with the flat arguments' pytree as the jitted function takes them."""

    def __init__(self, jitted, entry):
        self._jitted, self._entry = jitted, entry

    def as_asm(self):
        from .llvm import assembly
        return assembly(self._entry.executable.optimized_llvm())

    def __call__(self, *args, **kwargs):
        return self._jitted(*args, **kwargs)


class Lowered:
    """jit(f).lower(*args): the optimised IR and the LLVM IR of one signature."""

    def __init__(self, jitted, entry):
        self._jitted, self._entry = jitted, entry

    def as_text(self):
        return str(self._entry.closed)

    def as_llvm(self):
        return self._entry.executable.optimized_llvm()

    def compile(self):
        return Compiled(self._jitted, self._entry)


__all__ = ["MISS", "Compiled", "Executable", "Lowered", "compile_ir"]
