"""The typed SSA IR: variables, literals, equations, IRs and closed IRs, with the checker and the printer."""
import numpy as np

from .avals import HALF_FLOATS, ShapedArray
from .dag import Edge, Graph, Node


class Var:
    """An SSA variable; identity is the name, the printer assigns letters."""

    __slots__ = ("aval",)

    def __init__(self, aval):
        self.aval = aval

    def __repr__(self):
        return f"Var<{self.aval.str_short()}>"


class Literal:
    """A scalar constant written inline in the IR text (`2.0:f32[]`)."""

    __slots__ = ("aval", "value")

    def __init__(self, value, aval):
        self.value = np.asarray(value, dtype=aval.dtype)[()]
        self.aval = aval

    val = property(lambda self: self.value)        # JAX's name, so code that walks a jaxpr runs unchanged

    def _key(self):
        return (self.aval.dtype, self.value.tobytes())

    def __repr__(self):
        return f"Literal({format_literal(self)})"


class Eqn:
    """outvars = prim[params](*inputs). `source_info` is where the user's code made it, a
    (filename, line, function) tuple or None; nothing prints it but error reports (debug_nans) and
    print_saved_residuals."""

    __slots__ = ("inputs", "outvars", "params", "prim", "source_info")

    def __init__(self, prim, inputs, params, outvars, source_info=None):
        self.prim, self.inputs, self.params, self.outvars = prim, list(inputs), dict(params), list(outvars)
        self.source_info = source_info

    primitive = property(lambda self: self.prim)    # JAX's names, so code that walks a jaxpr runs unchanged
    invars = property(lambda self: self.inputs)

    def replace(self, prim=None, inputs=None, params=None, outvars=None):
        """A copy with some parts changed, keeping where it came from."""
        return Eqn(prim or self.prim, self.inputs if inputs is None else inputs,
                   self.params if params is None else params, self.outvars if outvars is None else outvars,
                   self.source_info)


class IR:
    __slots__ = ("constvars", "eqns", "invars", "outvars")

    def __init__(self, constvars, invars, eqns, outvars):
        self.constvars, self.invars = list(constvars), list(invars)
        self.eqns, self.outvars = list(eqns), list(outvars)

    in_avals = property(lambda self: [v.aval for v in self.invars])
    out_avals = property(lambda self: [v.aval for v in self.outvars])

    def __str__(self):
        return print_ir(self)

    def __rich__(self):
        return print_ir(self, rich=True)


class ClosedIR:
    """An IR with the values of its constants (numpy arrays, or tracers of an enclosing trace)."""

    __slots__ = ("consts", "ir")

    def __init__(self, ir, consts):
        assert len(ir.constvars) == len(consts)
        self.ir, self.consts = ir, list(consts)

    in_avals = property(lambda self: self.ir.in_avals)
    out_avals = property(lambda self: self.ir.out_avals)
    eqns = property(lambda self: self.ir.eqns)
    jaxpr = property(lambda self: self.ir)             # JAX's ClosedJaxpr.jaxpr

    def __str__(self):
        return print_ir(self.ir)

    def __repr__(self):
        return print_ir(self.ir)

    def __rich__(self):
        return print_ir(self.ir, rich=True)

    def to_graph(self):
        """The IR as a DAG (a core.dag.Graph): nodes, edges, Kahn order, degrees, depth, critical path."""
        return ir_graph(self.ir)

    def to_dot(self, groups=()):
        """Graphviz text of the IR; sub-IRs are clusters, `groups` (title, equations) extra clusters."""
        return self.to_graph().to_dot(groups)

    def to_mermaid(self, groups=()):
        """Mermaid flowchart text of the IR, as to_dot."""
        return self.to_graph().to_mermaid(groups)


def named_sub_irs(eqn):
    """(param name, IR) for each IR an equation carries in its params (branches, loop bodies)."""
    for key, value in eqn.params.items():
        for i, item in enumerate(value if isinstance(value, tuple) else (value,)):
            if isinstance(item, (IR, ClosedIR)):
                name = f"{key}[{i}]" if isinstance(value, tuple) else key
                yield name, item.ir if isinstance(item, ClosedIR) else item


def sub_irs(eqn):
    """The IRs an equation carries in its params (branches, loop bodies)."""
    return (ir for _, ir in named_sub_irs(eqn))


def effectful(eqn):
    """Whether an equation has an effect, itself or in a sub-IR: it runs once, where the program has it, so
    no pass or transform removes, merges, moves or repeats it."""
    return eqn.prim.effectful or (bool(eqn.params) and any(effectful(e) for sub in sub_irs(eqn) for e in sub.eqns))


# ---------------------------------------------------------------------------------------------- checker

class IRCheckError(Exception):
    pass


def check_ir(ir):
    """Re-derive every equation's output types from its primitive's shape rule; check SSA scoping."""
    if isinstance(ir, ClosedIR):
        ir = ir.ir
    defined = set()

    def define(v):
        if not isinstance(v, Var):
            raise IRCheckError(f"binder {v!r} is not a Var")
        if v in defined:
            raise IRCheckError(f"variable {v!r} is bound twice")
        defined.add(v)

    def use(x, where):
        if isinstance(x, Literal):
            return x.aval
        if x not in defined:
            raise IRCheckError(f"{where}: variable {x!r} is used before it is bound")
        return x.aval

    for v in ir.constvars + ir.invars:
        define(v)
    for eqn in ir.eqns:
        where = f"equation `{print_eqn_one_line(eqn)}`"
        in_avals = [use(x, where) for x in eqn.inputs]
        for sub in sub_irs(eqn):
            check_ir(sub)
        try:
            expected = eqn.prim.abstract_eval(*in_avals, **eqn.params)
        except Exception as e:
            raise IRCheckError(f"{where}: shape rule rejects its inputs: {e}") from e
        if len(expected) != len(eqn.outvars):
            raise IRCheckError(f"{where}: {len(eqn.outvars)} outputs, the rule gives {len(expected)}")
        for v, aval in zip(eqn.outvars, expected):
            if (v.aval.shape, v.aval.dtype) != (aval.shape, aval.dtype):
                raise IRCheckError(f"{where}: output typed {v.aval.str_short()}, rule gives {aval.str_short()}")
            define(v)
    for x in ir.outvars:
        use(x, "output")
    return True


# ---------------------------------------------------------------------------------------------- printer

STYLES = {"prim": "bold cyan", "type": "green", "literal": "magenta", "keyword": "bold"}


def var_name(i):
    """a..z, ba, bb, ...: base 26 digits written as letters, as jaxprs are."""
    name = ""
    while True:
        name = chr(ord("a") + i % 26) + name
        i //= 26
        if i == 0:
            return name


def format_literal(lit):
    """`2.0:f32[]`; a 16-bit float shows its exact value, as jaxprs do (`0.0999755859375:f16[]`)."""
    value, dtype = lit.value, lit.aval.dtype
    text = str(bool(value)) if dtype == np.bool_ else repr(float(value)) if dtype in HALF_FLOATS else str(value)
    return f"{text}:{lit.aval.str_short()}"


class _Printer:
    """Collects (text, style) segments so that plain text and rich text come from one walk."""

    def __init__(self):
        self.names, self.segments = {}, []
        self.taken = set()        # names given, and those of symbolic dimensions, which variables skip

    def emit(self, text, style=None):
        self.segments.append((text, style))

    def name(self, v):
        if v not in self.names:
            k = len(self.names)
            while var_name(k) in self.taken:
                k += 1
            self.names[v] = var_name(k)
            self.taken.add(self.names[v])
        return self.names[v]

    def atom(self, x):
        if isinstance(x, Literal):
            self.emit(format_literal(x), "literal")
        else:
            self.emit(self.name(x))

    def binder(self, v, used=True):
        self.emit(self.name(v) if used else "_")
        self.emit(":" + v.aval.str_short(), "type")

    def ir(self, ir, indent):
        pad = " " * indent
        self.taken |= {str(d) for v in [*ir.constvars, *ir.invars] for d in v.aval.shape if not isinstance(d, int)}
        self.emit("{ ")
        self.emit("lambda", "keyword")
        for v in ir.constvars:
            self.emit(" ")
            self.binder(v)
        self.emit(" ;")
        for v in ir.invars:
            self.emit(" ")
            self.binder(v)
        self.emit(". ")
        self.emit("let", "keyword")
        used = _used_vars(ir)
        for eqn in ir.eqns:
            self.emit("\n" + pad + "    ")
            self.eqn(eqn, used, indent + 4)
        self.emit("\n" + pad + "  ")
        self.emit("in", "keyword")
        self.emit(" (")
        for i, x in enumerate(ir.outvars):
            self.emit(", " if i else "")
            self.atom(x)
        self.emit(",)" if len(ir.outvars) == 1 else ")")
        self.emit(" }")

    def eqn(self, eqn, used, indent):
        for i, v in enumerate(eqn.outvars):
            self.emit(" " if i else "")
            self.binder(v, v in used)
        self.emit(" = " if eqn.outvars else "")
        self.emit(eqn.prim.name, "prim")
        params = sorted(eqn.params.items())
        nested = any(True for _ in sub_irs(eqn))
        if params and not nested and self._line_length(eqn, params, indent) <= 100:
            self.emit("[" + _param_text(params) + "]")
        elif params:
            self.emit("[")
            for k, v in params:
                self.emit("\n" + " " * (indent + 2) + k + "=")
                self.param(v, indent + 2)
            self.emit("\n" + " " * indent + "]")
        for x in eqn.inputs:
            self.emit(" ")
            self.atom(x)

    def _line_length(self, eqn, params, indent):
        """Length of the equation on one line (its binders were just named, its inputs are named)."""
        binders = sum(len(self.names.get(v, "_")) + 1 + len(v.aval.str_short()) + 1 for v in eqn.outvars)
        inputs = sum(1 + len(format_literal(x) if isinstance(x, Literal) else self.name(x)) for x in eqn.inputs)
        return indent + binders + 2 + len(eqn.prim.name) + len(_param_text(params)) + 2 + inputs

    def param(self, value, indent):
        if isinstance(value, (IR, ClosedIR)):
            self.ir(value.ir if isinstance(value, ClosedIR) else value, indent)
        elif isinstance(value, tuple) and value and all(isinstance(v, (IR, ClosedIR)) for v in value):
            self.emit("(")
            for v in value:
                self.emit("\n" + " " * (indent + 2))
                self.param(v, indent + 2)
            self.emit("\n" + " " * indent + ")")
        else:
            self.emit(_format_param(value))


def _format_param(value):
    if isinstance(value, np.dtype):
        return str(value)
    if isinstance(value, tuple):
        inner = ", ".join(_format_param(v) for v in value)
        return f"({inner},)" if len(value) == 1 else f"({inner})"
    if isinstance(value, ShapedArray):
        return value.str_short()
    if callable(value) and hasattr(value, "__name__"):
        return value.__name__
    return str(value)


def _param_text(params):
    return " ".join(f"{k}={_format_param(v)}" for k, v in params)


def _used_vars(ir):
    used = {x for e in ir.eqns for x in e.inputs if isinstance(x, Var)}
    return used | {x for x in ir.outvars if isinstance(x, Var)}


def print_ir(ir, rich=False):
    printer = _Printer()
    printer.ir(ir, 0)
    if not rich:
        return "".join(text for text, _ in printer.segments)
    from rich.text import Text
    out = Text()
    for text, style in printer.segments:
        out.append(text, style=STYLES.get(style))
    return out


def print_eqn_one_line(eqn):
    printer = _Printer()
    printer.eqn(eqn, set(eqn.outvars), 0)
    return " ".join("".join(t for t, _ in printer.segments).split())


# ------------------------------------------------------------------------------------------- graph view

def ir_graph(ir, names=None, graph_id=""):
    """The IR as a core.dag.Graph: a node per constant, input, equation and output, an edge per data
    dependency (labelled with the value when its producer has several), and each sub-IR a subgraph of
    its equation's node. Values keep the names of the IR text."""
    if names is None:
        printer = _Printer()
        printer.ir(ir, 0)
        names = printer.names
    prefix = graph_id + "_" if graph_id else ""

    def binder(v):
        return f"{names.get(v, '_')}:{v.aval.str_short()}"

    nodes, edges, producer = [], {}, {}     # producer: Var -> (node id, edge label)

    def connect(x, dst):
        if isinstance(x, Var):
            edges.setdefault((*producer[x], dst))

    for kind, short, binders in (("const", "c", ir.constvars), ("input", "in", ir.invars)):
        for i, v in enumerate(binders):
            nodes.append(Node(f"{prefix}{short}{i}", kind, [binder(v)]))
            producer[v] = (nodes[-1].id, "")
    for i, eqn in enumerate(ir.eqns):
        node_id = f"{prefix}e{i}"
        for x in eqn.inputs:
            connect(x, node_id)
        subgraphs = [(title, ir_graph(sub, names, f"{node_id}_{k}"))
                     for k, (title, sub) in enumerate(named_sub_irs(eqn))]
        operands = (format_literal(x) if isinstance(x, Literal) else names[x] for x in eqn.inputs)
        params = " ".join(_clip(f"{k}={_format_param(v)}") for k, v in sorted(eqn.params.items())
                          if not _is_sub_ir(v) and not callable(v))
        label = [_clip(" ".join([eqn.prim.name, *operands])), *([params] if params else []),
                 " ".join(map(binder, eqn.outvars))]
        nodes.append(Node(node_id, "eqn", label, eqn, subgraphs))
        for v in eqn.outvars:
            producer[v] = (node_id, binder(v) if len(eqn.outvars) > 1 else "")
    for i, x in enumerate(ir.outvars):
        value = format_literal(x) if isinstance(x, Literal) else names[x]
        nodes.append(Node(f"{prefix}out{i}", "output", [f"out {i}: {value}"]))
        connect(x, nodes[-1].id)
    return Graph(nodes, [Edge(src, dst, label) for src, label, dst in edges], graph_id)


def _is_sub_ir(value):
    return any(isinstance(v, (IR, ClosedIR)) for v in (value if isinstance(value, tuple) else (value,)))


def _clip(text, limit=48):
    return text if len(text) <= limit else text[:limit - 3] + "..."
