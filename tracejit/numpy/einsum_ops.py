"""einsum as NumPy has it (implicit output, '...', repeated indices, the sublist form) on any number of
operands: contracted two at a time in a greedy order (opt_einsum's 'greedy' heuristic: the pair that shares
indices and leaves the smallest result first), each pair one dot_general."""
import itertools
import math
import string

from ..core.errors import ShapeError
from ._base import astype, aval, promote, reject_out
from .creation import zeros
from .linalg_ops import _dot_general, check_precision, diagonal
from .reductions import sum
from .shape_ops import squeeze, transpose
from .ufuncs import not_equal

_SUBLIST_LETTERS = string.ascii_uppercase + string.ascii_lowercase   # NumPy's letters for sublist labels 0..51


def einsum(*operands, out=None, optimize=True, precision=None, preferred_element_type=None):
    """einsum(subscripts, *arrays) or einsum(a, sublist_a, b, sublist_b, ..., [sublist_out]). `optimize` is
    accepted and changes nothing (the greedy order is always used); precision and preferred_element_type as
    in tnp.dot."""
    reject_out("einsum", out)
    check_precision("einsum", precision)
    subscripts, arrays = _as_subscripts(operands)
    arrays = promote(*arrays)
    if preferred_element_type is not None:
        arrays = [astype(x, preferred_element_type) for x in arrays]
    if arrays and aval(arrays[0]).dtype.kind == "b":     # NumPy's bool einsum: whether any product is true
        return not_equal(_einsum(subscripts, [astype(x, "int64") for x in arrays]), 0)
    return _einsum(subscripts, arrays)


def _as_subscripts(operands):
    if not operands:
        raise TypeError("einsum: needs subscripts and at least one operand")
    if isinstance(operands[0], str):
        return operands[0], list(operands[1:])
    output = operands[-1] if len(operands) % 2 else None
    pairs = operands[:len(operands) - len(operands) % 2]
    inputs = ",".join(_sublist_letters(s) for s in pairs[1::2])
    return inputs + ("" if output is None else "->" + _sublist_letters(output)), list(pairs[0::2])


def _sublist_letters(sublist):
    try:
        return "".join("..." if s is Ellipsis else _SUBLIST_LETTERS[s] for s in sublist)
    except (TypeError, IndexError):
        raise ValueError(f"einsum: a sublist holds integers from 0 to 51 and Ellipsis, got {sublist!r}") from None


def _einsum(subscripts, arrays):
    specs, output = _parse(subscripts.replace(" ", ""), [aval(x).ndim for x in arrays])
    operands = [_diagonals(x, spec) for x, spec in zip(arrays, specs)]
    sizes = _sizes(operands, subscripts)
    operands = [_drop_broadcast_axes(x, spec, sizes) for x, spec in operands]
    out_shape = tuple(sizes[c] for c in output)
    if any(sizes[c] == 0 for c in sizes if c not in output):     # an empty sum is 0 (not 0 * inf)
        return zeros(out_shape, aval(arrays[0]).dtype)
    while len(operands) > 1:
        i, j = _greedy_pair(operands, output, sizes)
        rest = [op for k, op in enumerate(operands) if k not in (i, j)]
        needed = set(output).union(*(spec for _, spec in rest))
        operands = rest[:i] + [_contract(operands[i], operands[j], needed)] + rest[i:]    # in the first's place
    x, spec = _sum_out(*operands[0], set(output))
    return transpose(x, [spec.index(c) for c in output])


def _parse(subscripts, ndims):
    """Each operand's labels (letters, and integers for the axes under '...', counted so that they align from
    the right across operands) and the output's (NumPy's implicit output: '...' then the letters that appear
    once, sorted)."""
    inputs, arrow, output = subscripts.partition("->")
    parts = inputs.split(",")
    if len(parts) != len(ndims):
        raise ValueError(f"einsum: {subscripts!r} names {len(parts)} operands, got {len(ndims)}")
    ellipsis_rank = max((n - len(p.replace("...", "")) for p, n in zip(parts, ndims) if "..." in p), default=0)
    specs = [_labels(p, subscripts, ellipsis_rank, n) for p, n in zip(parts, ndims)]
    if not arrow:
        counts = [c for spec in specs for c in spec if isinstance(c, str)]
        return specs, list(range(ellipsis_rank)) + sorted(c for c in set(counts) if counts.count(c) == 1)
    if ellipsis_rank and "..." not in output:
        raise ValueError(f"einsum: the operands of {subscripts!r} have {ellipsis_rank} axes under '...', so the "
                         "output needs a '...' for them (as in NumPy)")
    out = _labels(output, subscripts, ellipsis_rank, None)
    present = set().union(*specs)
    for c in out:
        if out.count(c) > 1 or c not in present:
            raise ValueError(f"einsum: output label {c!r} of {subscripts!r} " +
                             ("repeats" if out.count(c) > 1 else "is in no operand"))
    return specs, out


def _labels(part, subscripts, ellipsis_rank, ndim):
    """The labels of one operand (ndim given: its rank must fit) or of the output (ndim None)."""
    before, dots, after = part.partition("...")
    if "." in before + after or not all(c in string.ascii_letters for c in before + after):
        raise ValueError(f"einsum: subscripts hold letters and at most one '...' per operand, got {subscripts!r}")
    rank = (ndim - len(before) - len(after)) if ndim is not None else ellipsis_rank
    if ndim is not None and (rank < 0 or (rank and not dots)):
        raise ShapeError(f"einsum: subscripts {part!r} do not fit an operand of rank {ndim} in {subscripts!r}")
    return list(before) + list(range(ellipsis_rank - rank, ellipsis_rank)) * bool(dots) + list(after)


def _diagonals(x, spec):
    """A label repeated within one operand ('ii') takes the diagonal of those axes."""
    while len(set(spec)) < len(spec):
        p, q = next((p, q) for p, q in itertools.combinations(range(len(spec)), 2) if spec[p] == spec[q])
        if aval(x).shape[p] != aval(x).shape[q]:
            raise ShapeError(f"einsum: repeated label {spec[p]!r} on axes of sizes {aval(x).shape[p]} and "
                             f"{aval(x).shape[q]}")
        x = diagonal(x, 0, p, q)
        spec = [c for k, c in enumerate(spec) if k not in (p, q)] + [spec[p]]
    return x, spec


def _sizes(operands, subscripts):
    sizes = {}
    for x, spec in operands:
        for c, d in zip(spec, aval(x).shape):
            if sizes.get(c, 1) not in (1, d) and d != 1:
                raise ShapeError(f"einsum: label {c!r} of {subscripts!r} has sizes {sizes[c]} and {d}")
            sizes[c] = d if sizes.get(c, 1) == 1 else sizes[c]
    return sizes


def _drop_broadcast_axes(x, spec, sizes):
    """An axis of size 1 that meets a longer one broadcasts: drop it and its label from this operand."""
    ones = [k for k, c in enumerate(spec) if aval(x).shape[k] == 1 and sizes[c] != 1]
    return (squeeze(x, tuple(ones)) if ones else x), [c for k, c in enumerate(spec) if k not in ones]


def _sum_out(x, spec, keep):
    """Sum the axes whose labels no one else needs (in x's own dtype, as NumPy's einsum)."""
    drop = tuple(k for k, c in enumerate(spec) if c not in keep)
    if not drop:
        return x, spec
    return sum(x, drop, dtype=aval(x).dtype), [c for c in spec if c in keep]


def _greedy_pair(operands, output, sizes):
    def cost(i, j):
        (_, a), (_, b) = operands[i], operands[j]
        others = set(output).union(*(spec for k, (_, spec) in enumerate(operands) if k not in (i, j)))
        kept = [c for c in dict.fromkeys(a + b) if c in others]
        size = math.prod(sizes[c] for c in kept)
        return (not set(a) & set(b), size - math.prod(sizes[c] for c in a) - math.prod(sizes[c] for c in b))
    return min(itertools.combinations(range(len(operands)), 2), key=lambda pair: cost(*pair))


def _contract(a, b, needed):
    """One dot_general: labels in both operands are batch axes if needed later, else contracted."""
    (x, sa), (y, sb) = _sum_out(*a, needed | set(b[1])), _sum_out(*b, needed | set(a[1]))
    batch = [c for c in sa if c in sb and c in needed]
    contracted = [c for c in sa if c in sb and c not in needed]
    out = _dot_general(x, y, (tuple(sa.index(c) for c in contracted), tuple(sb.index(c) for c in contracted)),
                       (tuple(sa.index(c) for c in batch), tuple(sb.index(c) for c in batch)))
    return out, batch + [c for c in sa if c not in sb] + [c for c in sb if c not in sa]
