"""What one call of compiled code holds in memory, from its Frame: the arguments, the fresh outputs and the
arena, whose size is the first-fit plan over the groups' liveness (frame.py), control-flow scratch included.
The fields are JAX's (CompiledMemoryStats); the host_* ones are zeros, since the CPU's memory is the device
memory here, as in JAX's CPU backend. Buffers NumPy allocates while the Python driver runs an equation without
a compiled form are not counted."""
import dataclasses
import math

from ..core.avals import Dim


@dataclasses.dataclass(frozen=True)
class CompiledMemoryStats:
    generated_code_size_in_bytes: int   # object code of the signature
    argument_size_in_bytes: int
    output_size_in_bytes: int
    alias_size_in_bytes: int            # outputs sharing an argument's memory: never (no donation)
    temp_size_in_bytes: int             # the arena: every intermediate, reusing memory once a value is dead
    peak_memory_in_bytes: int           # all of the above held at once during a call (code aside)
    host_generated_code_size_in_bytes: int = 0
    host_argument_size_in_bytes: int = 0
    host_output_size_in_bytes: int = 0
    host_alias_size_in_bytes: int = 0
    host_temp_size_in_bytes: int = 0


def memory_analysis(executable, arg_shapes):
    """The CompiledMemoryStats of a call of executable on arguments of these shapes (which give the sizes of
    symbolic dimensions)."""
    frame = executable.frame
    sizes = {}
    for b, shape in zip(frame.inputs, arg_shapes):
        sizes.update((d, n) for d, n in zip(b.aval.shape, shape) if isinstance(d, Dim))
    unsized = [str(d) for d in frame.dims if not isinstance(sizes.get(d), int)]
    if unsized:
        raise ValueError(f"memory_analysis: the code was lowered for symbolic dimensions without sizes "
                         f"({', '.join(unsized)}); lower it with arrays or ShapeDtypeStructs of concrete shapes")

    def nbytes(bufs):
        return sum(math.prod(sizes.get(d, d) for d in b.aval.shape) * b.aval.dtype.itemsize for b in bufs)

    if frame.symbolic:
        temp = frame.arena_layout(frame.block_plan(), sizes)[1]
    else:
        temp = frame.arena_bytes
    args, outs = nbytes(frame.inputs), nbytes(frame.outputs)
    return CompiledMemoryStats(generated_code_size_in_bytes=executable.code_size, argument_size_in_bytes=args,
                               output_size_in_bytes=outs, alias_size_in_bytes=0, temp_size_in_bytes=temp,
                               peak_memory_in_bytes=args + outs + temp)
