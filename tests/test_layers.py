"""The package's layers (issue 23): no import cycles, each layer imports only those below it, no function-local
imports in primitives/ and numpy/ without a comment saying why. (test_backend checks that the primitives and
the reference interpreter work without llvmlite.)"""
import ast
import functools
import pathlib

import pytest

ROOT = pathlib.Path(__file__).resolve().parent.parent / "tracejit"

# What each layer may import at module level (besides the standard library and numpy). Importing
# tracejit.backend.rules runs the backend package's __init__ first: allowed, and kept light by the backend. The
# special-function primitives' NumPy impls run the compiled code's own kernels (tracejit.backend.specmath, plain
# Python that writes LLVM text or computes on arrays; it needs no llvmlite; zeta's derivative takes specmath_zeta's
# Bernoulli numbers).
ALLOWED = {
    "tracejit.core": ("tracejit.core",),
    "tracejit.passes": ("tracejit.core", "tracejit.passes"),
    "tracejit.transforms": ("tracejit.core", "tracejit.passes", "tracejit.transforms"),
    "tracejit.primitives": ("tracejit.core", "tracejit.passes", "tracejit.transforms", "tracejit.primitives",
                            "tracejit.backend.rules", "tracejit.backend.specmath", "tracejit.backend.specmath_zeta",
                            "tracejit.backend="),
    "tracejit.numpy": ("tracejit.core", "tracejit.primitives", "tracejit.numpy"),
    "tracejit.backend.rules": ("tracejit.core", "tracejit.backend.half_floats"),   # the dtypes; 16-bit floats
    "tracejit.backend.half_floats": (),
}


def module_name(path):
    parts = list(path.relative_to(ROOT.parent).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


MODULES = {module_name(p): p for p in ROOT.rglob("*.py")}


def _is_package(name):
    return MODULES[name].name == "__init__.py"


def _resolve(importer, node):
    """The tracejit modules an import statement loads (a `from` import of submodules loads each of them)."""
    if isinstance(node, ast.Import):
        return [a.name for a in node.names if a.name.startswith("tracejit")]
    if node.level:
        base = importer if _is_package(importer) else importer.rpartition(".")[0]
        for _ in range(node.level - 1):
            base = base.rpartition(".")[0]
        target = f"{base}.{node.module}" if node.module else base
    else:
        target = node.module or ""
    if not target.startswith("tracejit"):
        return []
    return [f"{target}.{a.name}" if f"{target}.{a.name}" in MODULES else target for a in node.names]


def _top_level_imports(tree):
    """Import statements run when the module loads: at module level, also inside top-level if/try blocks."""
    stack = list(tree.body)
    while stack:
        node = stack.pop()
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            yield node
        elif isinstance(node, (ast.If, ast.Try)):
            stack.extend(ast.iter_child_nodes(node))


def _all_imports(tree):
    return (node for node in ast.walk(tree) if isinstance(node, (ast.Import, ast.ImportFrom)))


@functools.cache
def import_graph(deferred_in=()):
    """Module -> the modules importing it executes: its imports and their enclosing packages (whose __init__
    runs first), except the packages the importer itself is inside (already running). Function-local imports
    count too for the modules in the packages `deferred_in`: a cycle they close is a cycle all the same.
    (Cached: the parametrized tests share one parse of the tree.)"""
    graph = {}
    for name, path in MODULES.items():
        edges = set()
        tree = ast.parse(path.read_text())
        deferred = any(name == p or name.startswith(p + ".") for p in deferred_in)
        for node in (_all_imports if deferred else _top_level_imports)(tree):
            for target in _resolve(name, node):
                parts = target.split(".")
                for k in range(2, len(parts) + 1):
                    ancestor = ".".join(parts[:k])
                    if ancestor in MODULES and not (name + ".").startswith(ancestor + ".") and ancestor != name:
                        edges.add(ancestor)
        graph[name] = edges
    return graph


def find_cycle(graph):
    state, path = {}, []

    def visit(node):
        state[node] = "open"
        path.append(node)
        for nxt in sorted(graph.get(node, ())):
            if state.get(nxt) == "open":
                return path[path.index(nxt):] + [nxt]
            if nxt not in state:
                found = visit(nxt)
                if found:
                    return found
        state[node] = "done"
        path.pop()
        return None

    for node in sorted(graph):
        if node not in state:
            found = visit(node)
            if found:
                return found
    return None


def test_the_import_graph_has_no_cycles():
    assert find_cycle(import_graph()) is None


def test_no_cycles_through_function_local_imports_of_the_lower_layers():
    layers = ["tracejit.core", "tracejit.passes", "tracejit.transforms", "tracejit.primitives", "tracejit.numpy",
              "tracejit.lax"]
    assert find_cycle(import_graph(deferred_in=tuple(layers))) is None


def test_the_graph_finds_a_cycle_through_a_package_init():
    graph = {"p": {"p.a"}, "p.a": {"q.b", "q"}, "q": {"q.b"}, "q.b": {"p"}}
    assert find_cycle(graph) == ["p", "p.a", "q", "q.b", "p"]


@pytest.mark.parametrize("layer", sorted(ALLOWED))
def test_each_layer_imports_only_the_layers_below(layer):
    graph = import_graph()
    wrong = {f"{m} imports {t}" for m, targets in graph.items() if m == layer or m.startswith(layer + ".")
             for t in targets if not any(t == a or t + "=" == a or t.startswith(a + ".") for a in ALLOWED[layer])}
    assert not wrong


@pytest.mark.parametrize("package", ["primitives", "numpy"])
def test_no_function_local_imports_without_a_reason(package):
    """A function-local import needs a comment on its line or the line above saying why it is not at the top."""
    unexplained = []
    for path in (ROOT / package).glob("*.py"):
        lines = path.read_text().splitlines()
        tree = ast.parse(path.read_text())
        top = set(map(id, _top_level_imports(tree)))
        for node in ast.walk(tree):
            if isinstance(node, (ast.Import, ast.ImportFrom)) and id(node) not in top:
                here, above = lines[node.lineno - 1], lines[node.lineno - 2].strip()
                if "#" not in here and not above.startswith("#"):
                    unexplained.append(f"{path.name}:{node.lineno}: {here.strip()}")
    assert not unexplained


def test_no_module_is_long():
    """A module a newcomer reads in one sitting: about 500 lines at most (DESIGN.md section 4)."""
    long = {str(p.relative_to(ROOT.parent)): n for p in ROOT.rglob("*.py")
            if (n := len(p.read_text().splitlines())) > 520}
    assert not long, long
