"""einsum_path: the order in which tracejit's einsum contracts its operands, in opt_einsum's path format (as
jax.numpy.einsum_path, which asks opt_einsum, gives it), so that a program can see, and print, what einsum does."""
import math

import numpy as np

from .einsum_ops import _as_subscripts, _greedy_pair, _parse


def _specs_and_sizes(subscripts, shapes):
    """Each operand's distinct labels (a repeated label is one diagonal axis) with size-1 broadcast axes
    dropped, the output's labels and every label's size, as einsum sees them."""
    specs, output = _parse(subscripts.replace(" ", ""), [len(s) for s in shapes])
    sizes = {}
    for spec, shape in zip(specs, shapes):
        for c, d in zip(spec, shape):
            if sizes.get(c, 1) not in (1, d) and d != 1:
                raise ValueError(f"einsum_path: label {c!r} of {subscripts!r} has sizes {sizes[c]} and {d}")
            sizes[c] = d if sizes.get(c, 1) == 1 else sizes[c]
    kept = [[c for c, d in dict(zip(spec, shape)).items() if not (d == 1 and sizes[c] != 1)]
            for spec, shape in zip(specs, shapes)]
    return kept, output, sizes


def _text(c):
    return c if isinstance(c, str) else "."


def einsum_path(subscripts, /, *operands, optimize="auto"):
    """(path, description): the pairs of operands tracejit's einsum contracts, in order, in opt_einsum's format (a
    list of index tuples into the list of operands, where each contraction removes its two operands and
    appends its result), and a text that lists them. tracejit's einsum always contracts greedily (the pair that
    leaves the smallest result first, opt_einsum's 'greedy'), whatever `optimize` asks, so that is the path
    given for optimize 'auto', 'greedy', 'optimal' or True; optimize=False gives the left-to-right path; an
    explicit path (a list of tuples) is returned as it is. JAX asks opt_einsum, whose 'auto' can choose another
    order of the same cost or, for five or more operands, a cheaper one."""
    subscripts, arrays = _as_subscripts((subscripts, *operands))
    shapes = [np.shape(x) for x in arrays]
    specs, output, sizes = _specs_and_sizes(subscripts, shapes)
    n = len(specs)
    if isinstance(optimize, (list, tuple)):
        path = [tuple(p) for p in optimize if p != "einsum_path"]
    elif n == 1:
        path = [(0,)]
    elif optimize is False:
        path = [(0, 1)] * (n - 1)
    elif optimize in (True, "auto", "greedy", "optimal", "dp", "branch-all", "branch-2", "auto-hq"):
        path = _greedy_path(specs, output, sizes)
    else:
        raise ValueError(f"einsum_path: optimize must be a bool, a strategy name ('auto', 'greedy' ...) or a path, "
                         f"got {optimize!r}")
    steps = _describe(path, specs, output, sizes)
    lines = [f"  Complete contraction:  {subscripts}", "  (tracejit's einsum contracts greedily, two at a time)",
             *steps]
    return path, "\n".join(lines)


def _greedy_path(specs, output, sizes):
    """The greedy order of tracejit's einsum, with each step's indices in opt_einsum's convention."""
    ops = [(spec, k) for k, spec in enumerate(specs)]                 # (labels, id) in einsum's order
    listed = list(range(len(specs)))                                  # ids in opt_einsum's order
    path, next_id = [], len(specs)
    while len(ops) > 1:
        i, j = _greedy_pair([(None, spec) for spec, _ in ops], output, sizes)
        rest = [op for k, op in enumerate(ops) if k not in (i, j)]
        needed = set(output).union(*(spec for spec, _ in rest))
        (a, id_a), (b, id_b) = ops[i], ops[j]
        batch = [c for c in a if c in b and c in needed]
        new = batch + [c for c in a if c not in b and c in needed | set(b)] + \
            [c for c in b if c not in a and c in needed | set(a)]
        path.append(tuple(sorted((listed.index(id_a), listed.index(id_b)))))
        listed = [x for x in listed if x not in (id_a, id_b)] + [next_id]
        ops = rest[:i] + [(new, next_id)] + rest[i:]
        next_id += 1
    return path


def _describe(path, specs, output, sizes):
    """One line per contraction: the operands' labels, the result's, and the multiplications it costs."""
    ops, lines = [list(s) for s in specs], []
    for step in path:
        picked = [ops[k] for k in step]
        ops = [op for k, op in enumerate(ops) if k not in step]
        needed = set(output).union(*ops)
        labels = list(dict.fromkeys(c for op in picked for c in op))
        result = [c for c in labels if c in needed] if ops else list(output)
        cost = math.prod(sizes[c] for c in labels)
        lines.append(f"  {','.join(''.join(map(_text, op)) for op in picked)}->{''.join(map(_text, result))}"
                     f"  ({cost} multiply-adds)")
        ops.append(result)
    return lines
