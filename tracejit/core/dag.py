"""Directed acyclic graphs of computations: Kahn's topological order, degrees, depth and the critical path,
and their Graphviz (DOT) and Mermaid text. Nothing here knows the IR (core.ir builds Graphs from IRs), so
this module sits below it; the fusion groups of a lowered program arrive as plain `groups` of node keys."""
from collections import deque
from functools import cached_property

# Graphviz node attributes and Mermaid node brackets, per kind of node.
DOT_STYLE = {"input": 'shape=ellipse style=filled fillcolor="#dbeafe"',
             "const": 'shape=note style=filled fillcolor="#fef3c7"',
             "eqn": 'shape=box style=rounded',
             "output": 'shape=ellipse style=filled fillcolor="#dcfce7"'}
MERMAID_SHAPE = {"input": ("([", "])"), "const": ("[(", ")]"), "eqn": ("[", "]"), "output": ("[[", "]]")}


class Node:
    """One vertex: `kind` is input, const, eqn or output; `label` its lines of text; `subgraphs` the
    (title, Graph) pairs drawn as clusters inside it (a cond's branches, a loop's body); `key` the object
    it stands for (an equation), by which `groups` find it."""

    __slots__ = ("id", "key", "kind", "label", "subgraphs")

    def __init__(self, id, kind, label, key=None, subgraphs=()):
        self.id, self.kind, self.label, self.key, self.subgraphs = id, kind, list(label), key, list(subgraphs)

    def __repr__(self):
        return f"Node({self.id}: {' | '.join(self.label)})"


class Edge:
    """A data dependency from node `src` to node `dst` (ids); `label` names the value where that helps."""

    __slots__ = ("dst", "label", "src")

    def __init__(self, src, dst, label=""):
        self.src, self.dst, self.label = src, dst, label

    def __repr__(self):
        return f"Edge({self.src} -> {self.dst}{' ' + self.label if self.label else ''})"


class Graph:
    """Nodes in program order (their position breaks every tie, so that all results are deterministic)
    and the edges between them."""

    def __init__(self, nodes, edges, id=""):
        self.id, self.nodes, self.edges = id, list(nodes), list(edges)
        self.position = {n.id: i for i, n in enumerate(self.nodes)}
        if len(self.position) != len(self.nodes):
            raise ValueError("Graph: node ids must be distinct")
        for e in self.edges:
            for end in (e.src, e.dst):
                if end not in self.position:
                    raise ValueError(f"Graph: edge {e!r} names node {end!r}, which is not in the graph")
        self.successors = {n.id: [] for n in self.nodes}
        self.predecessors = {n.id: [] for n in self.nodes}
        for e in self.edges:
            self.successors[e.src].append(e.dst)
            self.predecessors[e.dst].append(e.src)

    def node(self, id):
        return self.nodes[self.position[id]]

    @cached_property
    def in_degree(self):
        return {n: len(p) for n, p in self.predecessors.items()}

    @cached_property
    def out_degree(self):
        return {n: len(s) for n, s in self.successors.items()}

    @cached_property
    def order(self):
        """Kahn's algorithm: a queue of the nodes whose predecessors have all been emitted, filled in
        program order, so the result lists the graph wave by wave."""
        waiting = dict(self.in_degree)
        queue = deque(n.id for n in self.nodes if waiting[n.id] == 0)
        order = []
        while queue:
            ready = queue.popleft()
            order.append(self.node(ready))
            for succ in sorted(self.successors[ready], key=self.position.get):
                waiting[succ] -= 1
                if waiting[succ] == 0:
                    queue.append(succ)
        if len(order) != len(self.nodes):
            stuck = [n.id for n in self.nodes if waiting[n.id] > 0]
            raise ValueError(f"Graph: not acyclic; nodes {stuck} lie on or after a cycle")
        return order

    @cached_property
    def depth(self):
        """Per node, the edges on the longest path reaching it from a node with no predecessors."""
        depth = {}
        for n in self.order:
            depth[n.id] = max((depth[p] + 1 for p in self.predecessors[n.id]), default=0)
        return depth

    @cached_property
    def critical_path(self):
        """One longest path, as a list of nodes: ending at the first deepest node, each step back to the
        first predecessor one level shallower."""
        if not self.nodes:
            return []
        end = max(self.nodes, key=lambda n: (self.depth[n.id], -self.position[n.id]))
        path = [end.id]
        while self.depth[path[-1]] > 0:
            level = self.depth[path[-1]] - 1
            path.append(min((p for p in self.predecessors[path[-1]] if self.depth[p] == level),
                            key=self.position.get))
        return [self.node(n) for n in reversed(path)]

    def to_dot(self, groups=()):
        """Graphviz text. `groups` is a sequence of (title, keys): the nodes whose key is among keys, here or
        in a subgraph, are drawn in one cluster (a fusion group); a node in several groups in the first."""
        lines = ["digraph tracejit {", "  compound=true;", "  node [fontname=Helvetica fontsize=10];",
                 "  edge [fontname=Helvetica fontsize=9];"]
        _DotWriter(lines).graph(self, groups, "  ")
        return "\n".join(lines + ["}", ""])

    def to_mermaid(self, groups=()):
        """Mermaid flowchart text (renders in GitHub Markdown); `groups` as for to_dot."""
        lines = ["flowchart TB"]
        _MermaidWriter(lines).graph(self, groups, "  ")
        return "\n".join(lines + [""])

    def __repr__(self):
        return f"Graph({len(self.nodes)} nodes, {len(self.edges)} edges, depth {max(self.depth.values(), default=0)})"


def _grouped(graph, groups):
    """[(title or None, nodes)]: the group clusters in order, then the nodes in no group."""
    owner = {}
    for i, (_, keys) in enumerate(groups):
        for key in keys:
            owner.setdefault(id(key), i)
    members = [[] for _ in groups]
    loose = []
    for n in graph.nodes:
        i = owner.get(id(n.key)) if n.key is not None else None
        (loose if i is None else members[i]).append(n)
    return [(title, nodes) for (title, _), nodes in zip(groups, members) if nodes] + [(None, loose)]


class _Writer:
    """The walk both formats share: node groups, nodes, their sub-graph clusters, then the edges."""

    def __init__(self, lines):
        self.lines = lines

    def graph(self, graph, groups, pad):
        for i, (title, nodes) in enumerate(_grouped(graph, groups)):
            inner = pad if title is None else pad + "  "
            if title is not None:
                self.open_cluster(f"{graph.id}group{i}", title, pad, dashed=False)
            for n in nodes:
                self.node(n, inner)
                for sub_title, sub in n.subgraphs:
                    self.open_cluster(sub.id, sub_title, inner, dashed=True)
                    self.graph(sub, groups, inner + "  ")
                    self.close_cluster(inner)
                    if sub.nodes:
                        self.link(n, sub, sub_title, inner)
            if title is not None:
                self.close_cluster(pad)
        for e in graph.edges:
            self.edge(e, pad)


def _dot_quote(text):
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'


class _DotWriter(_Writer):
    def open_cluster(self, id, title, pad, dashed):
        self.lines += [f"{pad}subgraph {_dot_quote('cluster_' + id)} {{",
                       f"{pad}  label={_dot_quote(title)}; style={'dashed' if dashed else 'rounded'}; color=gray40;"]

    def close_cluster(self, pad):
        self.lines.append(pad + "}")

    def node(self, n, pad):
        label = _dot_quote("\n".join(n.label))
        self.lines.append(f"{pad}{_dot_quote(n.id)} [label={label} {DOT_STYLE[n.kind]}];")

    def link(self, n, sub, title, pad):
        """A dashed edge from the equation to its sub-IR's cluster (Graphviz clips it at the border)."""
        cluster, label = _dot_quote("cluster_" + sub.id), _dot_quote(title)
        self.lines.append(f"{pad}{_dot_quote(n.id)} -> {_dot_quote(sub.nodes[0].id)} "
                          f"[lhead={cluster} style=dashed arrowhead=empty label={label}];")

    def edge(self, e, pad):
        label = f" [label={_dot_quote(e.label)}]" if e.label else ""
        self.lines.append(f"{pad}{_dot_quote(e.src)} -> {_dot_quote(e.dst)}{label};")


def _mermaid_quote(*lines):
    """A quoted Mermaid string: quotes and angle brackets as entity codes, lines joined by <br/>."""
    def escape(text):
        for char, code in (("#", "#35;"), ('"', "#quot;"), ("<", "#lt;"), (">", "#gt;")):
            text = text.replace(char, code)
        return text
    return '"' + "<br/>".join(map(escape, lines)) + '"'


class _MermaidWriter(_Writer):
    def open_cluster(self, id, title, pad, dashed):
        self.lines += [f"{pad}subgraph {id} [{_mermaid_quote(title)}]", f"{pad}  direction TB"]

    def close_cluster(self, pad):
        self.lines.append(pad + "end")

    def node(self, n, pad):
        left, right = MERMAID_SHAPE[n.kind]
        self.lines.append(f"{pad}{n.id}{left}{_mermaid_quote(*n.label)}{right}")

    def link(self, n, sub, title, pad):
        self.lines.append(f"{pad}{n.id} -.->|{_mermaid_quote(title)}| {sub.id}")

    def edge(self, e, pad):
        label = f"|{_mermaid_quote(e.label)}|" if e.label else ""
        self.lines.append(f"{pad}{e.src} -->{label} {e.dst}")
