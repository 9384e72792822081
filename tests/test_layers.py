"""The package's layers (issue 23): no import cycles, each layer imports only those below it, no function-local
imports in primitives/ and numpy/ without a comment saying why, and the primitives and the reference
interpreter work without llvmlite."""
import ast
import pathlib
import subprocess
import sys
import textwrap

import pytest

ROOT = pathlib.Path(__file__).resolve().parent.parent / "tracejit"

# What each layer may import at module level (besides the standard library and numpy). Importing
# tracejit.backend.rules runs the backend package's __init__ first: allowed, and kept light by the backend.
ALLOWED = {
    "tracejit.core": ("tracejit.core",),
    "tracejit.passes": ("tracejit.core", "tracejit.passes"),
    "tracejit.transforms": ("tracejit.core", "tracejit.passes", "tracejit.transforms"),
    "tracejit.primitives": ("tracejit.core", "tracejit.passes", "tracejit.transforms", "tracejit.primitives",
                            "tracejit.backend.rules", "tracejit.backend="),
    "tracejit.numpy": ("tracejit.core", "tracejit.primitives", "tracejit.numpy"),
    "tracejit.backend.rules": (),
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


def import_graph(deferred_in=()):
    """Module -> the modules importing it executes: its imports and their enclosing packages (whose __init__
    runs first), except the packages the importer itself is inside (already running). Function-local imports
    count too for the modules in the packages `deferred_in`: a cycle they close is a cycle all the same."""
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
    layers = ["tracejit.core", "tracejit.passes", "tracejit.primitives", "tracejit.numpy", "tracejit.lax"]
    assert find_cycle(import_graph(deferred_in=layers)) is None


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


REFUSE_LLVMLITE = """
import importlib.abc, sys, traceback

class RefuseLlvmlite(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path, target=None):
        if name == "llvmlite" or name.startswith("llvmlite."):
            importer = [f.filename for f in traceback.extract_stack() if "/tracejit/" in f.filename]
            print("LLVMLITE_IMPORTED_FROM", importer[-1] if importer else "?")
            raise ImportError("llvmlite is not installed (refused by the test)")
        return None

sys.meta_path.insert(0, RefuseLlvmlite())
"""

EVAL_IR = """
import numpy as np
import tracejit.primitives
from tracejit.core.ops import ops
from tracejit.core.trace import eval_ir, trace_flat
from tracejit.core.avals import ShapedArray

def f(x):
    step = trace_flat(lambda c, y: [ops.add(c, ops.sin(y)), ops.mul(c, y)], [ShapedArray((), np.float64)] * 2)
    carry, ys = ops.scan(np.float64(0), x, body=step, length=3, reverse=False, num_consts=0, num_carry=1)
    return [carry, ops.reduce_sum(ys, axes=(0,))]

closed = trace_flat(f, [ShapedArray((3,), np.float64)])
x = np.array([0.5, 1.0, 2.0])
carry, total = eval_ir(closed, x)
assert np.isclose(carry, np.sin(x).sum()), carry
assert "llvmlite" not in sys.modules
print("OK")
"""


SKIP_PACKAGE_INITS = """
import sys, types
for name, path in {paths!r}:   # the root and backend packages, without running their __init__
    sys.modules[name] = types.ModuleType(name)
    sys.modules[name].__path__ = [path]
"""


def _run_without_llvmlite(prelude=""):
    script = textwrap.dedent(REFUSE_LLVMLITE) + prelude + "import sys\n" + textwrap.dedent(EVAL_IR)
    run = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    importer = next((line.split()[1] for line in run.stdout.splitlines() if line.startswith("LLVMLITE_IMPORTED_FROM")),
                    None)
    return run.returncode == 0 and run.stdout.strip().endswith("OK"), importer, run.stdout + run.stderr


def test_primitives_and_eval_ir_work_without_llvmlite():
    """The primitives and the NumPy reference interpreter import nothing from the backend but its rule kinds
    (pure Python): a machine without llvmlite can trace and evaluate IR."""
    ok, importer, output = _run_without_llvmlite()
    if not ok and importer and "/tracejit/backend/" in importer and not importer.endswith("rules.py"):
        paths = [("tracejit", str(ROOT)), ("tracejit.backend", str(ROOT / "backend"))]
        layers_ok, _, layers_output = _run_without_llvmlite(SKIP_PACKAGE_INITS.format(paths=paths))
        assert layers_ok, layers_output       # what is below the backend's __init__ needs no llvmlite already
        pytest.xfail(f"the backend package still loads llvmlite on import ({importer}); issue 23 item 1 splits it")
    assert ok, output
