"""Writing LLVM IR as text. In: instructions from the kernel, step and entry writers. Out: the module text.

`Function` is one function body (SSA names, blocks, loops; allocas hoisted to the entry block) and
`Module` the functions of one compiled IR, the math functions they call (tracejit.backend.mathlib), their
loops' metadata and the external symbols they name. The text holds no address of this process:
constants, numpy's type objects, libm and the BLAS are named external symbols (`Module.symbols`: name ->
address) that loading resolves, so that the object code can be cached on disk and loaded by another
process.
"""
import contextlib

from ..core.avals import Dim
from . import cmathlib, libcalls, llvm, mathlib, specmath


class Function:
    """One LLVM function body. `dim_slots` ({Dim: table slot}) says where a symbolic dimension's size is
    read from (%table)."""

    def __init__(self, module, header, dim_slots):
        self.module, self.header, self.dim_slots = module, header, dim_slots
        self.lines, self.allocas, self.n = [], [], 0
        self.latches = []         # (line index of a loop's back edge, its hints)
        self.innermost = set()    # the line indices of the back edges of loops that hold no loop
        self.loop_library_calls = {}  # back edge's line index -> the library calls inside that loop
        self.count = 0            # instructions emitted; with math_calls, a cost estimate
        self.math_calls = 0       # calls of math functions whose bodies are inlined (mathlib, cmathlib)
        self.library_calls = 0    # calls of the vector math library (vecmath.py)
        self.vector_types = set()     # the types of both kinds of calls ("float", "double"): kernels.py sets the
                                      # vector width of loops that make them
        self.dims = {}            # Dim -> its i64 SSA value, loaded from %table in the entry block
        self.bounds = {}          # i64 SSA value -> (lo, hi) it provably lies in: loop indices and index arithmetic
                                  # on them (rules.Emitter), so that clamps and range checks that cannot fire go

    @property
    def target_f16c(self):
        """Whether the code's target converts float16 in hardware (half_floats.py)."""
        return llvm.has_f16c()

    def size(self, d):
        """An i64 operand for a size: the int itself, or a symbolic dimension's run-time value."""
        if not isinstance(d, Dim):
            return d
        if d not in self.dims:
            self.n += 1
            self.allocas.append(f"  %dp{self.n} = getelementptr i64, ptr %table, i64 {self.dim_slots[d]}")
            self.allocas.append(f"  %dim{self.n} = load i64, ptr %dp{self.n}")
            self.dims[d] = f"%dim{self.n}"
        return self.dims[d]

    def emit(self, rhs):
        self.n += 1
        self.count += 1
        name = f"%v{self.n}"
        self.lines.append(f"  {name} = {rhs}")
        return name

    def bound(self, v):
        """(lo, hi) that the i64 operand v lies in, or None."""
        return (v, v) if isinstance(v, int) else self.bounds.get(v)

    def line(self, text):
        self.lines.append(f"  {text}")

    def math_call(self, name, ty, args):
        """The call of mathlib's function name on args of type ty: of the vector math library's function
        (libcalls.LIBRARY, libcalls.library_call), else of the inlined definition."""
        operands = ", ".join(f"{ty} {a}" for a in args)
        if name in libcalls.LIBRARY:
            if name in libcalls.VARIANTS:
                self.module.variants.add((name, ty))
            self.library_calls += 1
            self.vector_types.add(ty)
            return libcalls.library_call(name, ty, operands)
        self.module.math.add((name, ty))
        self.math_calls += 1
        self.vector_types.add(ty)
        return f"call {ty} {mathlib.math_symbol(name, ty)}({operands})"

    def label(self, stem):
        self.n += 1
        return f"{stem}{self.n}"

    def block(self, label):
        self.lines.append(f"{label}:")

    def alloca(self, ty):
        self.n += 1
        name = f"%a{self.n}"
        self.allocas.append(f"  {name} = alloca {ty}")
        return name

    @contextlib.contextmanager
    def loop(self, lo, hi, **hints):
        """for (i = lo; i < hi; i++): yields i. hints become llvm.loop metadata of the loop (e.g.
        interleave_count=4)."""
        lo, hi = self.size(lo), self.size(hi)
        first, last = self.bound(lo), self.bound(hi)
        iv = self.alloca("i64")
        head, body, done = self.label("head"), self.label("body"), self.label("done")
        self.line(f"store i64 {lo}, ptr {iv}")
        self.line(f"br label %{head}")
        self.block(head)
        i = self.emit(f"load i64, ptr {iv}")
        if first and last:
            self.bounds[i] = (first[0], last[1] - 1)
        self.line(f"br i1 {self.emit(f'icmp slt i64 {i}, {hi}')}, label %{body}, label %{done}")
        self.block(body)
        closed_before, calls_before = len(self.latches), self.library_calls
        yield i
        self.line(f"store i64 {self.emit(f'add nuw nsw i64 {i}, 1')}, ptr {iv}")
        if len(self.latches) == closed_before:
            self.innermost.add(len(self.lines))
        self.loop_library_calls[len(self.lines)] = self.library_calls - calls_before
        self.latches.append((len(self.lines), hints))
        self.line(f"br label %{head}")
        self.block(done)

    @contextlib.contextmanager
    def when(self, cond):
        """if (cond) {...}: the code emitted inside runs only where the i1 cond holds (always when it is True, never
        when it is False: dead code that LLVM drops)."""
        if cond is True:
            yield
            return
        cond = "false" if cond is False else cond
        then, done = self.label("then"), self.label("endif")
        self.line(f"br i1 {cond}, label %{then}, label %{done}")
        self.block(then)
        yield
        self.line(f"br label %{done}")
        self.block(done)

    @contextlib.contextmanager
    def loop_nest(self, shape):
        """Loops over every index of shape (row-major); yields the index list."""
        with contextlib.ExitStack() as stack:
            yield [stack.enter_context(self.loop(0, d)) for d in shape]

    def text(self):
        return "\n".join([f"{self.header} {{", "entry:", *self.allocas, *self.lines, "}"])


class Module:
    """The LLVM module of one compiled IR, its sub-IRs' functions included, written in order."""

    def __init__(self):
        self.functions = []       # function texts in the order they were written
        self.math = set()         # (name, type) of the mathlib and specmath functions called, inlined
        self.cmath = set()        # (name, part type) of the cmathlib functions called
        self.variants = set()     # (name, type) of the libcalls.VARIANTS functions called (they are declared)
        self.metadata = []        # metadata lines (!k = ...)
        self.kernels = []         # the KernelFunctions written, sub-IRs' included (introspection)
        self.symbols = {}         # external name -> address in this process
        self.arrays = {}          # address -> array, for every array whose address is named (kept alive)
        self.before_run = []      # what to call once LLVM has its text, before its code runs (fill an FFT's twiddles)
        self._const_names = {}    # address -> its tj_const<k> name
        self._entries = 0

    def add(self, f):
        """Append the function f, each loop's hints attached as llvm.loop metadata; returns its text."""
        for k, hints in f.latches:
            if hints:
                node = f"!{len(self.metadata)}"
                ops = []
                for key, value in sorted(hints.items()):
                    ops.append(f"!{len(self.metadata) + 1}")
                    operand = ("" if value is None else f", i1 {str(value).lower()}" if isinstance(value, bool)
                               else f", i32 {value}")
                    self.metadata.append(f'{ops[-1]} = !{{!"llvm.loop.{key.replace("_", ".")}"{operand}}}')
                self.metadata.append(f"{node} = distinct !{{{node}, {', '.join(ops)}}}")
                f.lines[k] += f", !llvm.loop {node}"
        self.functions.append(f.text())
        return self.functions[-1]

    def symbol(self, address, name=None):
        """`@name`: an external symbol that loading resolves to address (default name: tj_const<k>, k in
        order of first use, so that the module text is the same in every process)."""
        name = name or self._const_names.setdefault(address, f"tj_const{len(self._const_names)}")
        self.symbols[name] = address
        return f"@{name}"

    def array(self, arr):
        """The symbol of a C-contiguous array's data; the array is kept as long as the module."""
        self.arrays.setdefault(arr.ctypes.data, arr)
        return self.symbol(arr.ctypes.data)

    def entry_name(self, stem):
        """step0, par1, step2, ...: entry points numbered in the order they are made."""
        self._entries += 1
        return f"{stem}{self._entries - 1}"

    def text(self):
        externals = "\n".join(f"@{name} = external global i8" for name in self.symbols)
        special = {(name, ty) for name, ty in self.math if name in specmath.KERNELS}
        cmath = cmathlib.module_ir(self.cmath)
        math = [mathlib.math_module_ir(self.math - special), specmath.math_module_ir(special), cmath]
        declarations = libcalls.declarations(self.variants | libcalls.called(cmath))   # the library's, called by name
        return "\n\n".join([llvm.module_header(), externals, declarations, *self.functions, *math,
                            "\n".join(self.metadata)])
