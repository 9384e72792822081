"""Bounds on the values of integer arrays, for simplify rules: a gather whose indices provably lie in range reads
without clamping them (mode "inside"), and a comparison that provably always holds (or never) picks its select's
case. Indices computed as `x % n` (a periodic grid, a hash table) carry a floor-mod's sign fix and a negative
index's wrap-around, both selects that never fire, and a clamp per index and element: autograd's fluidsim spent
28% of its LLVM time on them.

`value_range(v, producer)` walks v's producers with interval arithmetic, giving up (None) where a value may wrap
around its dtype, past DEPTH equations or after VISITS of them. A select's cases are bounded under what its
predicate says where each is picked (`_Walk.assumptions`): a comparison of a value with a literal bounds that value
in that case. Such an assumption holds element by element, so it travels only through elementwise equations, from
the select down and from its predicate down to the compared value; any other equation reads its operands at other
positions."""
import numpy as np

from ..core.ir import Literal

DEPTH = 16
VISITS = 400
EMPTY = ()      # the range of a case that is never picked under the assumptions made
_PASSING = {"broadcast_in_dim", "reshape", "expand_dims", "squeeze", "transpose", "rev", "slice", "reduce_max",
            "reduce_min", "dynamic_slice"}   # values of operand 0, moved or picked
_FLIPPED = {"lt": "gt", "gt": "lt", "le": "ge", "ge": "le", "eq": "eq", "ne": "ne"}
_NEGATED = {"lt": "ge", "ge": "lt", "gt": "le", "le": "gt", "eq": "ne", "ne": "eq"}


def value_range(v, producer):
    """(lo, hi) with lo <= every element of the integer array v <= hi, or None."""
    found = _Walk(producer).range(v, DEPTH, ())
    return found or None


def known_truth(pred, producer):
    """True (False) where every element of the bool pred provably holds (fails), else None."""
    walk = _Walk(producer)
    holds, fails = (walk.assumptions(pred, truth, DEPTH, ()) for truth in (True, False))
    return None if walk.visits > VISITS else True if holds and not fails else False if fails and not holds else None


def _bounds(dtype):
    if dtype.kind == "b":
        return 0, 1
    info = np.iinfo(dtype)
    return int(info.min), int(info.max)


def _span(ranges):
    return min(r[0] for r in ranges), max(r[1] for r in ranges)


def _rem(ranges):
    """C's remainder (the dividend's sign) by a divisor whose range excludes 0."""
    (lo, hi), (dlo, dhi) = ranges
    if dlo <= 0 <= dhi:
        return None
    m = max(abs(dlo), abs(dhi)) - 1
    return (max(lo, -m) if lo < 0 else 0), (min(hi, m) if hi > 0 else 0)


def _and(ranges):
    """x & y is in [0, y] where y >= 0, whatever x."""
    highs = [hi for lo, hi in ranges if lo >= 0]
    return (0, min(highs)) if highs else None


_ARITHMETIC = {
    "concatenate": _span, "pad": _span, "convert_element_type": lambda r: r[0],   # (range() drops what does not fit)
    "max": lambda r: (max(a for a, _ in r), max(b for _, b in r)),
    "min": lambda r: (min(a for a, _ in r), min(b for _, b in r)),
    "add": lambda r: (r[0][0] + r[1][0], r[0][1] + r[1][1]),
    "sub": lambda r: (r[0][0] - r[1][1], r[0][1] - r[1][0]),
    "mul": lambda r: _span([(a * b, a * b) for a in r[0] for b in r[1]]),
    "clamp": lambda r: (min(max(r[1][0], r[0][0]), r[2][0]), min(max(r[1][1], r[0][1]), r[2][1])),
    "rem": _rem, "and": _and,
}


class _Walk:
    """One query's walk over the producers, within its budget of VISITS equations."""

    def __init__(self, producer):
        self.producer, self.visits = producer, 0

    def range(self, v, depth, assumed):
        """(lo, hi), EMPTY, or None (unknown) for integer v; assumed: ((var, lo, hi), ...) that hold where we look."""
        if isinstance(v, Literal):
            value = np.asarray(v.value)
            return (int(value.min()), int(value.max())) if value.size and value.dtype.kind in "iub" else None
        if v.aval.dtype.kind not in "iub":
            return None
        self.visits += 1
        bounds = _bounds(v.aval.dtype)
        eqn = self.producer(v) if depth > 0 and self.visits <= VISITS else None
        found = self._rule(eqn, depth - 1, assumed) if eqn is not None and not eqn.prim.multiple_results else None
        if found == EMPTY:
            return EMPTY
        lo, hi = found if found is not None and bounds[0] <= found[0] and found[1] <= bounds[1] else bounds
        for var, a, b in assumed:
            if var is v:
                lo, hi = max(lo, a), min(hi, b)
        return EMPTY if lo > hi else None if (lo, hi) == bounds else (lo, hi)

    def _rule(self, eqn, depth, assumed):
        name, ins, out = eqn.prim.name, eqn.inputs, eqn.outvars[0]
        kept = assumed if eqn.prim.elementwise else ()
        if name == "iota":
            n = out.aval.shape[eqn.params["dimension"]]
            return (0, n - 1) if isinstance(n, int) and n > 0 else None
        if name in ("argsort", "argmax", "argmin", "top_k", "searchsorted"):
            axis = {"argsort": lambda: eqn.params["axis"], "searchsorted": lambda: 0,
                    "top_k": lambda: ins[0].aval.ndim - 1}.get(name, lambda: eqn.params["axes"][0])()
            n = ins[0].aval.shape[axis]
            return (0, n - (name != "searchsorted")) if isinstance(n, int) and n > 0 else None
        if name == "select_n":
            return self._select(ins, depth, kept)
        if name == "gather" and eqn.params["mode"] == "fill":
            ranges = [self.range(ins[0], depth, ()), (0, 0)]
        elif name in _PASSING or name == "gather":
            ranges = [self.range(ins[0], depth, ())]
            name = "concatenate"
        elif name in _ARITHMETIC and all(x.aval.dtype.kind in "iub" for x in ins):
            ranges = [self.range(x, depth, kept) for x in ins]
            ranges = [_bounds(x.aval.dtype) if r is None else r for x, r in zip(ins, ranges)]   # unknown: any value
        else:
            return None
        if EMPTY in ranges:
            return EMPTY
        return None if None in ranges else _ARITHMETIC.get(name, _span)(ranges)

    def _select(self, ins, depth, assumed):
        """The union of the cases' ranges, each under what the predicate says where it is picked."""
        pred, cases = ins[0], ins[1:]
        if len(cases) != 2 or pred.aval.dtype.kind != "b":
            ranges = [r for r in (self.range(c, depth, assumed) for c in cases) if r != EMPTY]
            return None if None in ranges else _span(ranges) if ranges else EMPTY
        ranges = []
        for case, truth in zip(cases, (False, True)):
            for alternative in self.assumptions(pred, truth, depth, assumed):
                r = self.range(case, depth, assumed + alternative)
                if r is None:
                    return None
                ranges += [r] if r != EMPTY else []
        return _span(ranges) if ranges else EMPTY

    def assumptions(self, pred, truth, depth, assumed):
        """Where bool pred is `truth`, a list of alternatives (one of them holds), each a tuple of (var, lo, hi):
        [] where pred is provably never `truth`, [()] where nothing is known."""
        if isinstance(pred, Literal):
            return [()] if (np.asarray(pred.value) == truth).any() else []
        self.visits += 1
        eqn = self.producer(pred) if depth > 0 and self.visits <= VISITS else None
        if eqn is None or not eqn.prim.elementwise or eqn.prim.multiple_results:
            return [()]
        name, ins = eqn.prim.name, eqn.inputs
        if name == "not":
            return self.assumptions(ins[0], not truth, depth - 1, assumed)
        if name in ("and", "or"):
            parts = [self.assumptions(x, truth, depth - 1, assumed) for x in ins]
            if (name == "and") == truth:      # both hold: every pair of their alternatives
                return [a + b for a in parts[0] for b in parts[1]]
            return parts[0] + parts[1]        # one of them holds
        if name not in _FLIPPED:
            return [()]
        a, b = ins
        if a.aval.dtype.kind == "b" and isinstance(b, Literal) and not np.ndim(b.value):   # p != False is p ...
            return self.assumptions(a, truth == ((name == "eq") == bool(b.value)), depth - 1, assumed)
        if isinstance(a, Literal) and not isinstance(b, Literal):
            a, b, name = b, a, _FLIPPED[name]
        if not isinstance(b, Literal) or np.ndim(b.value) or a.aval.dtype.kind not in "iu":
            return [()]
        span = self.range(a, depth - 1, assumed)
        if span == EMPTY:
            return []
        (lo, hi), c = span or _bounds(a.aval.dtype), int(b.value)
        choices = {"lt": [(lo, c - 1)], "le": [(lo, c)], "gt": [(c + 1, hi)], "ge": [(c, hi)], "eq": [(c, c)],
                   "ne": [(lo, c - 1), (c + 1, hi)]}[name if truth else _NEGATED[name]]
        return [((a, x, y),) for x, y in choices if max(x, lo) <= min(y, hi)]
