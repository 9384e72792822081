"""tj.graph(f)(*args): the IR of f as a DAG (nodes, edges, Kahn order, degrees, depth, critical path), with
.to_dot() and .to_mermaid(). `python -m tracejit.graph` draws it from the command line (see __main__).
jit(f).lower(*args).to_dot() draws the compiled program with its fusion groups (backend/fusion_view.py)."""
from ..api import make_ir
from ..core.dag import Edge, Graph, Node


def graph(fun, *, static_argnums=(), static_argnames=(), optimize=False):
    """A function of example arguments (arrays or ShapeDtypeStructs) returning f's IR as a core.dag.Graph;
    the arguments are those of make_ir. Control-flow sub-IRs are subgraphs of their equation's node."""
    make = make_ir(fun, static_argnums=static_argnums, static_argnames=static_argnames, optimize=optimize)
    return lambda *args, **kwargs: make(*args, **kwargs).to_graph()


__all__ = ["Edge", "Graph", "Node", "graph"]
