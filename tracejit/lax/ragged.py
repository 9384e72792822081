"""jax.lax.ragged_dot_general and RaggedDotDimensionNumbers: a dot_general in which one lhs dimension is cut into g
consecutive groups (group_sizes; the rest of it past their sum counts in none). As JAX computes it without its
ragged-dot instruction, each ragged operand is expanded to g masked copies (a leading axis of g, the entries outside
group i zeroed in copy i) and one dot_general contracts them, so it differentiates and batches as dot_general does.
Three modes, by the kind of the ragged lhs dimension:
- non-contracting (m): rhs has a group dimension of size g, and row r of group i is multiplied by rhs's group i;
- contracting (k): lhs and rhs are both cut along k, and the result has a leading axis of g partial products;
- batch: the groups change nothing (a plain dot_general)."""
from .. import numpy as tnp
from ..core.avals import index_arg
from ..numpy._base import asarray, aval
from ..numpy.linalg_ops import check_precision
from ..primitives import linalg as dot_prims


class RaggedDotDimensionNumbers:
    """The dimensions of ragged_dot_general: dot_dimension_numbers ((lhs contracting, rhs contracting), (lhs batch,
    rhs batch)) as dot_general's, lhs_ragged_dimensions (one lhs dimension) and rhs_group_dimensions (one rhs
    dimension of size g when the ragged dimension is non-contracting, none otherwise), as JAX's."""

    __slots__ = ("dot_dimension_numbers", "lhs_ragged_dimensions", "rhs_group_dimensions")

    def __init__(self, dot_dimension_numbers, lhs_ragged_dimensions, rhs_group_dimensions):
        what = "RaggedDotDimensionNumbers"
        dims = tuple(tuple(tuple(index_arg(d, f"{what}: dot_dimension_numbers") for d in side) for side in pair)
                     for pair in dot_dimension_numbers)
        if len(dims) != 2 or any(len(pair) != 2 for pair in dims):
            raise ValueError(f"{what}: dot_dimension_numbers must be ((lhs contracting, rhs contracting), "
                             f"(lhs batch, rhs batch)), got {dot_dimension_numbers!r}")
        object.__setattr__(self, "dot_dimension_numbers", dims)
        object.__setattr__(self, "lhs_ragged_dimensions",
                           tuple(index_arg(d, f"{what}: lhs_ragged_dimensions") for d in lhs_ragged_dimensions))
        object.__setattr__(self, "rhs_group_dimensions",
                           tuple(index_arg(d, f"{what}: rhs_group_dimensions") for d in rhs_group_dimensions))

    def __setattr__(self, name, value):
        raise AttributeError("RaggedDotDimensionNumbers is immutable")

    def _key(self):
        return self.dot_dimension_numbers, self.lhs_ragged_dimensions, self.rhs_group_dimensions

    def __eq__(self, other):
        return isinstance(other, RaggedDotDimensionNumbers) and self._key() == other._key()

    def __hash__(self):
        return hash(self._key())

    def __repr__(self):
        return (f"RaggedDotDimensionNumbers(dot_dimension_numbers={self.dot_dimension_numbers}, "
                f"lhs_ragged_dimensions={self.lhs_ragged_dimensions}, "
                f"rhs_group_dimensions={self.rhs_group_dimensions})")


def _prefix(mode, rank, ragged, batch, contract):
    """The dimensions of an operand that group_sizes' leading axes stand for (JAX's [b..., x..., g])."""
    free = [d for d in range(rank) if d not in contract and d not in batch]
    if mode == "noncontracting":
        return list(batch) + free[:free.index(ragged)]
    if mode == "contracting":
        return list(batch) + list(contract[:contract.index(ragged)])
    return list(batch[:batch.index(ragged)])


def _expand(x, dim, group_sizes, axes):
    """x as [g, *x.shape]: copy i keeps the entries of x whose index along dim lies in group i, zeros elsewhere.
    group_sizes is [x.shape[a] for a in axes..., g]: each group's size for every index along those axes."""
    shape = aval(x).shape
    g = aval(group_sizes).shape[-1]
    order = sorted(range(len(axes)), key=lambda i: axes[i])
    kept = [1] * len(shape)
    for a in axes:
        kept[a] = shape[a]

    def placed(v):      # [*axes' sizes, g] -> [g, *kept]: the sizes along x's axes, in x's order
        v = tnp.transpose(tnp.moveaxis(v, -1, 0), [0] + [i + 1 for i in order])
        return v.reshape((g, *kept))

    ends = tnp.cumsum(group_sizes, axis=-1)
    starts, ends = placed(ends - group_sizes), placed(ends)
    index = tnp.arange(shape[dim]).reshape(tuple(shape[dim] if a == dim + 1 else 1 for a in range(len(shape) + 1)))
    mask = (starts <= index) & (index < ends)
    return tnp.where(mask, x[None], tnp.zeros((), aval(x).dtype))


def ragged_dot_general(lhs, rhs, group_sizes, ragged_dot_dimension_numbers, precision=None,
                       preferred_element_type=None, group_offset=None, out_sharding=None):
    """The ragged dot_general of lhs and rhs, as jax.lax.ragged_dot_general (see the module's docstring for the
    three modes): group_sizes is [g] integers, or [b..., x..., g] with the sizes for each index of the lhs batch
    dimensions and of those outer to the ragged one (x). The result is dot_general's, with a leading g axis when
    the ragged dimension is contracting. precision is checked; group_offset is refused (as JAX's implementation
    does); out_sharding is accepted (one device)."""
    check_precision("ragged_dot_general", precision)
    if group_offset is not None:
        raise NotImplementedError("ragged_dot_general: group_offset is not supported (as in JAX)")
    dn = ragged_dot_dimension_numbers
    if not isinstance(dn, RaggedDotDimensionNumbers):
        raise TypeError(f"ragged_dot_general: ragged_dot_dimension_numbers must be a RaggedDotDimensionNumbers, "
                        f"got {dn!r}")
    lhs, rhs, group_sizes = asarray(lhs), asarray(rhs), asarray(group_sizes)
    if preferred_element_type is not None:
        lhs, rhs = lhs.astype(preferred_element_type), rhs.astype(preferred_element_type)
    (lc, rc), (lb, rb) = dn.dot_dimension_numbers
    mode, ragged = _mode(aval(lhs).ndim, dn)
    gs = aval(group_sizes)
    if gs.dtype.kind not in "iu" or gs.ndim == 0:
        raise TypeError(f"ragged_dot_general: group_sizes must be integers of rank >= 1, got {gs.str_short()}")
    g = gs.shape[-1]
    l_prefix = _prefix(mode, aval(lhs).ndim, ragged, lb, lc)
    expected = tuple(aval(lhs).shape[d] for d in l_prefix) + (g,)
    if gs.ndim == 1:
        group_sizes = tnp.broadcast_to(group_sizes, expected)
    elif gs.shape != expected:
        raise TypeError(f"ragged_dot_general: expected group_sizes to have shape {expected}, got {gs.shape}")
    _check_groups(mode, dn.rhs_group_dimensions, aval(rhs), rc, rb, g)
    if mode == "noncontracting":
        dims = (([d + 1 for d in lc] + [0], [*rc, dn.rhs_group_dimensions[0]]), ([d + 1 for d in lb], list(rb)))
        return dot_prims.dot_general(_expand(lhs, ragged, group_sizes, l_prefix), rhs, _tuples(dims))
    if mode == "contracting":
        r_ragged = rc[lc.index(ragged)]
        r_prefix = _prefix(mode, aval(rhs).ndim, r_ragged, rb, rc)
        dims = (([d + 1 for d in lc], [d + 1 for d in rc]), ([0] + [d + 1 for d in lb], [0] + [d + 1 for d in rb]))
        return dot_prims.dot_general(_expand(lhs, ragged, group_sizes, l_prefix),
                                     _expand(rhs, r_ragged, group_sizes, r_prefix), _tuples(dims))
    return dot_prims.dot_general(lhs, rhs, dn.dot_dimension_numbers)


def _tuples(dims):
    return tuple(tuple(tuple(side) for side in pair) for pair in dims)


def _mode(rank, dn):
    if len(dn.lhs_ragged_dimensions) != 1:
        raise TypeError("ragged_dot_general expects exactly one lhs ragged dimension, got "
                        f"{dn.lhs_ragged_dimensions}")
    ragged = dn.lhs_ragged_dimensions[0]
    if not 0 <= ragged < rank:
        raise TypeError(f"ragged_dot_general: lhs ragged dimension {ragged} is out of range for lhs of rank {rank}")
    (lc, _), (lb, _) = dn.dot_dimension_numbers
    return ("contracting" if ragged in lc else "batch" if ragged in lb else "noncontracting"), ragged


def _check_groups(mode, group_dims, rhs, rc, rb, g):
    if mode != "noncontracting":
        if group_dims:
            raise TypeError("ragged_dot_general requires zero group dimensions in the rhs when lhs ragged dimension "
                            f"is contracting or batch, got {group_dims}")
        return
    if len(group_dims) != 1:
        raise TypeError("ragged_dot_general requires exactly one rhs group dimension when lhs ragged dimension is "
                        f"noncontracting, got {group_dims}")
    d = group_dims[0]
    if not 0 <= d < rhs.ndim or d in rc or d in rb:
        raise TypeError(f"ragged_dot_general: rhs group dimension {d} must be a dimension of rhs (rank {rhs.ndim}) "
                        "that is neither contracting nor batch")
    if rhs.shape[d] != g:
        raise TypeError(f"ragged_dot_general: expected rhs group dimension size to be {g}, got {rhs.shape[d]}")


__all__ = ["RaggedDotDimensionNumbers", "ragged_dot_general"]
