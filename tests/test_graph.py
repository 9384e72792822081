"""Graph views of the IR: Kahn's order, degrees, depth and critical path on hand-checked graphs; DOT text
that parses (Graphviz's `dot` when installed, always a small grammar check written here) and Mermaid text;
clusters for control flow; deterministic text; the `python -m tracejit.graph` command with and without dot."""
import itertools
import os
import re
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

import tracejit as tj
import tracejit.numpy as tnp
from tracejit import lax
from tracejit.core.dag import Edge, Graph, Node

X3 = np.ones(3, np.float32)
C3 = np.arange(3.0, dtype=np.float32)
REPO = Path(tj.__file__).resolve().parent.parent
DOT = shutil.which("dot")


# ------------------------------------------------------------------------------ functions with control flow

def with_cond(x):
    return lax.cond(x.sum() > 0, lambda v: v * 2.0, lambda v: v - 1.0, x)


def with_while(x):
    return lax.while_loop(lambda c: c[0] < 3, lambda c: (c[0] + 1, c[1] * 2.0), (0, x))[1]


def with_scan(x):
    return lax.scan(lambda c, t: (c + t, c * t), 0.0, x)


@tj.custom_jvp
def soft(x):
    return tnp.log1p(tnp.exp(x))


soft.defjvp(lambda p, t: (soft(p[0]), t[0] / (1.0 + tnp.exp(-p[0]))))


def with_custom_jvp(x):
    return soft(x) * 2.0


def everything(x, y):
    """All of the above, a constant, and a nested loop inside a branch."""
    def doubled_twice(v):
        return lax.fori_loop(0, 2, lambda i, a: a * 2.0, v)

    a = lax.cond(x.sum() > 0, doubled_twice, lambda v: v - 1.0, x)
    c, ys = with_scan(y)
    return a + with_while(y) + c + soft(x) + C3, ys


def predict(w, x):
    """The README's example, and model.predict in the command's tests."""
    return tnp.tanh(x @ w).sum()


PREDICT_ARGS = (np.ones((4, 3), np.float32), np.ones((2, 4), np.float32))


def mlp_loss(w, x):
    return tnp.sum(tnp.tanh(x @ w) ** 2)


EXAMPLES = {"cond": (with_cond, (X3,)), "while": (with_while, (X3,)), "scan": (with_scan, (X3,)),
            "custom_jvp": (with_custom_jvp, (X3,)), "everything": (everything, (X3, X3)),
            "mlp_grad": (tj.grad(mlp_loss), PREDICT_ARGS)}


# ------------------------------------------------------------------------------------- text checks

QUOTED = r'"(?:[^"\\]|\\.)*"'
ATTRS = rf'\[(?:[^\]"]|{QUOTED})*\]'
DOT_NODE = re.compile(rf"({QUOTED}) {ATTRS};")
DOT_EDGE = re.compile(rf"({QUOTED}) -> ({QUOTED})(?: ({ATTRS}))?;")
DOT_CLUSTER = re.compile(rf"subgraph ({QUOTED}) {{")
DOT_SETTING = re.compile(rf"(?:(?:node|edge) {ATTRS}|(?:\w+=(?:\w+|{QUOTED});\s*)+)\s*;?")


def check_dot_grammar(text):
    """Every line a node, an edge, a cluster's start or end or a setting; ids quoted; braces balanced;
    each edge's ends declared nodes and each lhead a declared cluster."""
    lines = [line.strip() for line in text.strip().splitlines()]
    assert lines[0] == "digraph tracejit {" and lines[-1] == "}"
    nodes, clusters, edges, depth = set(), set(), [], 0
    for line in lines[1:-1]:
        if m := DOT_NODE.fullmatch(line):
            assert m[1] not in nodes, f"node {m[1]} declared twice"
            nodes.add(m[1])
        elif m := DOT_EDGE.fullmatch(line):
            edges.append((m[1], m[2], m[3] or ""))
        elif m := DOT_CLUSTER.fullmatch(line):
            assert m[1].startswith('"cluster_') and m[1] not in clusters
            clusters.add(m[1])
            depth += 1
        elif line == "}":
            depth -= 1
            assert depth >= 0, "unbalanced braces"
        else:
            assert DOT_SETTING.fullmatch(line), f"not DOT this checker knows: {line!r}"
    assert depth == 0, "unbalanced braces"
    for src, dst, attrs in edges:
        assert src in nodes and dst in nodes, f"edge {src} -> {dst} names an undeclared node"
        if m := re.search(rf"lhead=({QUOTED})", attrs):
            assert m[1] in clusters
    return nodes, clusters, edges


def check_dot(text):
    """The grammar check, and Graphviz itself when it is installed (no errors, no warnings)."""
    parsed = check_dot_grammar(text)
    if DOT:
        done = subprocess.run(check=False, args=[DOT, "-Tsvg"], input=text, text=True, capture_output=True)
        assert done.returncode == 0 and done.stderr == "", done.stderr
        assert "<svg" in done.stdout
    return parsed


def check_mermaid(text):
    """Nodes and subgraphs declared before edges use them; subgraph/end balanced; ids plain words."""
    lines = [line.strip() for line in text.strip().splitlines()]
    assert lines[0] == "flowchart TB"
    declared, depth = set(), 0
    for line in lines[1:]:
        if m := re.fullmatch(r'subgraph (\w+) \[".*"\]', line):
            declared.add(m[1])
            depth += 1
        elif line == "end":
            depth -= 1
        elif m := re.fullmatch(r'(\w+) -(?:->|\.->)(?:\|"[^"]*"\|)? (\w+)', line):
            assert m[1] in declared and m[2] in declared, line
        elif m := re.fullmatch(r'(\w+)(\(\[|\[\(|\[\[|\[)"[^"]*"(\]\)|\)\]|\]\]|\])', line):
            assert m[1] not in declared
            declared.add(m[1])
        else:
            assert line == "direction TB", f"not Mermaid this checker knows: {line!r}"
        assert depth >= 0
    assert depth == 0


def all_graphs(g):
    yield g
    for n in g.nodes:
        for _, sub in n.subgraphs:
            yield from all_graphs(sub)


# ---------------------------------------------------------------------------------- hand-checked graphs

def ids(nodes):
    return [n.id for n in nodes]


def test_diamond():
    g = tj.graph(lambda x: tnp.sin(x) * tnp.cos(x))(X3)
    assert ids(g.nodes) == ["in0", "e0", "e1", "e2", "out0"]
    assert [(e.src, e.dst) for e in g.edges] == [("in0", "e0"), ("in0", "e1"), ("e0", "e2"), ("e1", "e2"),
                                                 ("e2", "out0")]
    assert g.in_degree == {"in0": 0, "e0": 1, "e1": 1, "e2": 2, "out0": 1}
    assert g.out_degree == {"in0": 2, "e0": 1, "e1": 1, "e2": 1, "out0": 0}
    assert g.depth == {"in0": 0, "e0": 1, "e1": 1, "e2": 2, "out0": 3}
    assert ids(g.critical_path) == ["in0", "e0", "e2", "out0"]
    assert [n.label[0] for n in g.critical_path] == ["a:f32[3]", "sin a", "mul b c", "out 0: d"]


def test_chain():
    g = tj.graph(lambda x: tnp.exp(tnp.sin(tnp.cos(x))))(X3)
    assert ids(g.order) == ids(g.nodes) == ids(g.critical_path) == ["in0", "e0", "e1", "e2", "out0"]
    assert list(g.depth.values()) == [0, 1, 2, 3, 4]


def test_constant_is_a_source():
    """(x + c) * y: the constant, first in position, wins the tie for the critical path's start."""
    g = tj.graph(lambda x, y: (x + C3) * y)(X3, X3)
    assert [(n.id, n.kind) for n in g.nodes] == [("c0", "const"), ("in0", "input"), ("in1", "input"),
                                                 ("e0", "eqn"), ("e1", "eqn"), ("out0", "output")]
    assert g.depth == {"c0": 0, "in0": 0, "in1": 0, "e0": 1, "e1": 2, "out0": 3}
    assert ids(g.critical_path) == ["c0", "e0", "e1", "out0"]
    assert ids(g.order) == ["c0", "in0", "in1", "e0", "e1", "out0"]


def test_kahn_goes_wave_by_wave():
    """Kahn's queue takes ready nodes in program order, so cos(y) comes before exp(sin(x))'s exp."""
    g = tj.graph(lambda x, y: tnp.exp(tnp.sin(x)) + tnp.cos(y))(X3, X3)
    assert [n.label[0] for n in g.nodes][2:5] == ["sin a", "exp c", "cos b"]
    assert ids(g.order) == ["in0", "in1", "e0", "e2", "e1", "e3", "out0"]
    assert ids(g.critical_path) == ["in0", "e0", "e1", "e3", "out0"]


def test_literal_output_and_unused_input():
    g = tj.graph(lambda x, y: (x * 2.0, 1.0))(X3, X3)
    assert g.node("out1").label == ["out 1: 1.0:f64[]"] and g.in_degree["out1"] == 0
    assert g.out_degree["in1"] == 0 and g.depth["in1"] == 0


def test_special_characters_are_escaped():
    g = Graph([Node("a", "input", ['say "hi"', "<x> \\ #1"]), Node("b", "output", ["out"])], [Edge("a", "b", '"v"')])
    dot, mermaid = g.to_dot(), g.to_mermaid()
    assert '[label="say \\"hi\\"\\n<x> \\\\ #1"' in dot and '[label="\\"v\\""]' in dot
    check_dot(dot)
    assert 'a(["say #quot;hi#quot;<br/>#lt;x#gt; \\ #35;1"])' in mermaid
    check_mermaid(mermaid)


def test_graph_checks_its_input():
    a, b = Node("a", "eqn", ["a"]), Node("b", "eqn", ["b"])
    with pytest.raises(ValueError, match="not acyclic"):
        _ = Graph([a, b], [Edge("a", "b"), Edge("b", "a")]).order
    with pytest.raises(ValueError, match="names node 'c'"):
        Graph([a, b], [Edge("a", "c")])
    with pytest.raises(ValueError, match="distinct"):
        Graph([a, a], [])


# ------------------------------------------------------------------------- properties on real programs

@pytest.mark.parametrize("optimize", [False, True])
@pytest.mark.parametrize("name", list(EXAMPLES))
def test_order_degrees_depth(name, optimize):
    fun, args = EXAMPLES[name]
    for g in all_graphs(tj.graph(fun, optimize=optimize)(*args)):
        position = {n.id: i for i, n in enumerate(g.order)}
        assert sorted(position) == sorted(n.id for n in g.nodes) and len(g.order) == len(g.nodes)
        assert all(position[e.src] < position[e.dst] for e in g.edges)
        assert sum(g.in_degree.values()) == sum(g.out_degree.values()) == len(g.edges)
        for n in g.nodes:
            assert g.in_degree[n.id] == sum(e.dst == n.id for e in g.edges)
            assert g.depth[n.id] == max((g.depth[e.src] + 1 for e in g.edges if e.dst == n.id), default=0)
        path = g.critical_path
        assert g.depth[path[0].id] == 0 and g.depth[path[-1].id] == max(g.depth.values()) == len(path) - 1
        assert all(any(e.src == a.id and e.dst == b.id for e in g.edges) for a, b in itertools.pairwise(path))


@pytest.mark.parametrize("optimize", [False, True])
@pytest.mark.parametrize("name", list(EXAMPLES))
def test_text_parses_and_is_deterministic(name, optimize):
    fun, args = EXAMPLES[name]
    closed = tj.make_ir(fun, optimize=optimize)(*args)
    dot, mermaid = closed.to_dot(), closed.to_mermaid()
    nodes, _, edges = check_dot(dot)
    check_mermaid(mermaid)
    graphs = list(all_graphs(closed.to_graph()))
    assert len(nodes) == sum(len(g.nodes) for g in graphs)
    links = sum(len(n.subgraphs) for g in graphs for n in g.nodes)
    assert len(edges) == sum(len(g.edges) for g in graphs) + links
    again = tj.make_ir(fun, optimize=optimize)(*args)
    assert again.to_dot() == dot and again.to_mermaid() == mermaid
    assert tj.graph(fun, optimize=optimize)(*args).to_dot() == dot


def test_labels_use_the_names_of_the_ir_text():
    closed = tj.make_ir(everything)(X3, X3)
    text = str(closed)
    for g in all_graphs(closed.to_graph()):
        for n in g.nodes:
            if n.kind == "eqn":
                assert f"= {n.label[0]}" in text or f"= {n.label[0].split()[0]}[" in text
                assert all(b in text for b in n.label[-1].split())


@pytest.mark.parametrize("name, prim, titles", [
    ("cond", "cond", ["branches[0]", "branches[1]"]), ("while", "while", ["body", "cond"]),
    ("scan", "scan", ["body"]), ("custom_jvp", "custom_jvp_call", ["call"])])
def test_control_flow_is_drawn_as_clusters(name, prim, titles):
    fun, args = EXAMPLES[name]
    closed = tj.make_ir(fun)(*args)
    g = closed.to_graph()
    (node,) = [n for n in g.nodes if n.label[0].split()[0] == prim]
    assert sorted(title for title, _ in node.subgraphs) == titles
    _, clusters, edges = check_dot(closed.to_dot())
    for k, (title, sub) in enumerate(node.subgraphs):
        assert sub.id == f"{node.id}_{k}" and f'"cluster_{sub.id}"' in clusters
        assert {n.kind for n in sub.nodes} >= {"input", "eqn", "output"}
        assert all(n.id.startswith(sub.id + "_") for n in sub.nodes)
        assert (f'"{node.id}"', f'"{sub.nodes[0].id}"') in [(s, d) for s, d, _ in edges]
        assert f'{node.id} -.->|"{title}"| {sub.id}' in closed.to_mermaid()


def test_nested_clusters():
    g = tj.graph(everything)(X3, X3)
    (cond,) = [n for n in g.nodes if n.label[0].startswith("cond ")]
    loops = [n for _, sub in cond.subgraphs for n in sub.nodes if n.subgraphs]
    assert loops and loops[0].subgraphs[0][1].id.count("_") == 3
    check_dot(g.to_dot())


def test_several_outputs_label_their_edges():
    closed = tj.make_ir(with_scan)(X3)
    assert "b:f32[] c:f32[3] = scan[" in str(closed)
    g = closed.to_graph()
    (scan,) = [n for n in g.nodes if n.label[0].startswith("scan")]
    assert [(e.label, e.dst) for e in g.edges if e.src == scan.id] == [("b:f32[]", "out0"), ("c:f32[3]", "out1")]
    assert all(e.label == "" for e in g.edges if e.src != scan.id)


def test_groups_draw_clusters_around_equations():
    """The hook for fusion groups: (title, equations) pairs; a node in two groups is drawn in the first."""
    closed = tj.make_ir(lambda x, y: tnp.exp(x * y) + tnp.sin(y))(X3, X3)
    mul, exp, sin, add = closed.eqns
    groups = [("loop nest 0", [mul, exp, add]), ("loop nest 1", [sin, mul])]
    dot = closed.to_dot(groups)
    _, clusters, _ = check_dot(dot)
    assert clusters == {'"cluster_group0"', '"cluster_group1"'}
    body = dot.split('subgraph "cluster_group1"')[1].split("}")[0]
    assert '"e2"' in body and '"e0"' not in body
    mermaid = closed.to_mermaid(groups)
    check_mermaid(mermaid)
    assert 'subgraph group0 ["loop nest 0"]' in mermaid
    assert closed.to_dot([("empty", [])]) == closed.to_dot()


def test_groups_reach_into_sub_irs():
    closed = tj.make_ir(with_while)(X3)
    (loop,) = [e for e in closed.eqns if e.prim.name == "while"]
    body = loop.params["body"].ir
    _, clusters, _ = check_dot(closed.to_dot([("body loop", body.eqns)]))
    (node,) = [n for n in closed.to_graph().nodes if n.key is loop]
    (body_graph,) = [sub for title, sub in node.subgraphs if title == "body"]
    assert clusters == {f'"cluster_{sub.id}"' for _, sub in node.subgraphs} | {f'"cluster_{body_graph.id}group0"'}


# ---------------------------------------------------------------------------------------- the command

@pytest.fixture
def workdir(tmp_path):
    (tmp_path / "model.py").write_text(textwrap.dedent("""
        import tracejit.numpy as tnp
        def predict(w, x):
            return tnp.tanh(x @ w).sum()
        """))
    return tmp_path


def run_cli(workdir, *args, path=None):
    env = {**os.environ, "PYTHONPATH": str(REPO), "PYTHONHASHSEED": str(len(args))}
    if path is not None:
        env["PATH"] = str(path)
    return subprocess.run(check=False, args=[sys.executable, "-m", "tracejit.graph", "model:predict", *args], cwd=workdir, env=env,
                          text=True, capture_output=True)


SHAPES = ("--shapes", "f32[4,3]", "f32[2,4]")


def test_cli_text_formats(workdir):
    done = run_cli(workdir, *SHAPES, "--format", "dot")
    assert done.returncode == 0, done.stderr
    assert done.stdout == tj.graph(predict)(*PREDICT_ARGS).to_dot()
    check_dot(done.stdout)
    done = run_cli(workdir, *SHAPES, "--optimize", "--format", "mermaid", "-o", "g.mmd")
    assert done.returncode == 0, done.stderr
    check_mermaid((workdir / "g.mmd").read_text())


def test_cli_lowered(workdir):
    done = run_cli(workdir, *SHAPES, "--lowered", "--format", "dot")
    assert done.returncode == 0, done.stderr
    assert done.stdout == tj.jit(predict).lower(*PREDICT_ARGS).to_dot()
    assert 'label="kernel 0: dot_general by BLAS gemm"' in done.stdout
    check_dot(done.stdout)
    done = run_cli(workdir, "--shapes", "f32[4,3]", "f32[n,4]", "--lowered")
    assert done.returncode == 2 and "--lowered draws code compiled for sizes" in done.stderr
    done = run_cli(workdir, *SHAPES, "--lowered", "--optimize")
    assert done.returncode == 2 and "not allowed with argument" in done.stderr


def test_cli_symbolic_and_bad_arguments(workdir):
    done = run_cli(workdir, "--shapes", "f32[4,3]", "f32[n,4]", "--format", "dot")
    assert done.returncode == 0 and "f32[n,3]" in done.stdout
    done = run_cli(workdir, "--shapes", "f32[4,3]", "float[2]")
    assert done.returncode == 2 and "--shapes: 'float[2]' is not a type like f32[3,4]" in done.stderr
    done = subprocess.run(check=False, args=[sys.executable, "-m", "tracejit.graph", "model:nothing"], cwd=workdir, text=True,
                          capture_output=True, env={**os.environ, "PYTHONPATH": str(REPO)})
    assert done.returncode == 2 and "'model' has no attribute 'nothing'" in done.stderr


@pytest.mark.skipif(DOT is None, reason="Graphviz's dot is not installed (the case without it is tested below)")
@pytest.mark.parametrize("fmt, magic", [("svg", b"<svg"), ("png", b"\x89PNG")])
def test_cli_renders_with_dot(workdir, fmt, magic):
    done = run_cli(workdir, *SHAPES, "--format", fmt)
    assert done.returncode == 0, done.stderr
    assert magic in (workdir / f"predict.{fmt}").read_bytes()[:1000]
    assert done.stdout == f"wrote predict.{fmt}\n"


def test_cli_without_dot_writes_the_dot_text_and_says_how_to_install(workdir):
    empty = workdir / "bin"
    empty.mkdir()
    done = run_cli(workdir, *SHAPES, "-o", "picture.svg", path=empty)
    assert done.returncode == 1 and not (workdir / "picture.svg").exists()
    for hint in ("`dot` program is not on PATH", "apt-get install graphviz", "brew install graphviz",
                 "conda install", "picture.dot"):
        assert hint in done.stderr
    check_dot((workdir / "picture.dot").read_text())


def test_readme_example_is_current():
    readme = (REPO / "README.md").read_text()
    block = readme.split("```mermaid\n")[1].split("```")[0]
    g = tj.graph(predict)(*PREDICT_ARGS)
    assert g.to_mermaid() == block
    assert "# ['in0', 'e0', 'e1', 'e2', 'out0']" in readme and ids(g.critical_path) == ["in0", "e0", "e1", "e2", "out0"]


# ------------------------------------------------------------------------------- lowered: fusion groups

def fused_program(w, x):
    """Matmuls (BLAS), elementwise work (fused loops), a scan (a control kernel with its own groups) and a
    callback (the Python driver)."""
    h = tnp.tanh(x @ w)
    tj.debug.callback(lambda v: None, h)
    c, _ = lax.scan(lambda c, t: (c * tnp.sin(t) + 1.0, None), 0.0, h.sum(axis=1))
    return tnp.sum(h ** 2) + c


def test_lowered_views_draw_the_fusion_groups():
    from tracejit.backend.fusion_view import lowered_view
    lowered = tj.jit(tj.grad(fused_program)).lower(*PREDICT_ARGS)
    dot = lowered.to_dot()
    _, clusters, _ = check_dot(dot)
    check_mermaid(lowered.to_mermaid())
    titles = re.findall(r'label="([^"]*)"; style=rounded', dot)
    for expected in (r"fused loop \d+: \d+ ops? over \[2,3\]", r"kernel \d+: dot_general by BLAS gemm",
                     r"control \d+: scan, its sub-IRs compiled as functions",
                     r"Python driver \d+: debug_callback by NumPy", r"reduction loop \d+: \d+ ops? over \[2,3\]"):
        assert any(re.fullmatch(expected, t) for t in titles), (expected, titles)
    closed, groups = lowered_view(lowered._entry.closed)
    scans = [e for e in closed.eqns if e.prim.name == "scan"]
    every = closed.eqns + [e for scan in scans for e in scan.params["body"].eqns]
    assert len(scans) == 2 and {id(e) for _, eqns in groups for e in eqns} == set(map(id, every))
    for node in closed.to_graph().nodes:      # each scan body's groups are drawn inside its cluster
        if node.key in scans:
            assert any(c.startswith(f'"cluster_{node.subgraphs[0][1].id}group') for c in clusters)


def test_lowered_view_is_what_compiles():
    """The drawn IR is the one lowering compiles: the passes' output with every call inlined."""
    from tracejit.backend.fusion_view import lowered_view
    lowered = tj.jit(tj.grad(tj.checkpoint(mlp_loss))).lower(*PREDICT_ARGS)
    assert "checkpoint" in lowered.as_text()
    closed, _ = lowered_view(lowered._entry.closed)
    assert "checkpoint" not in str(closed) and "checkpoint" not in lowered.to_dot()
