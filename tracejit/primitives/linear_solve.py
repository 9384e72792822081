"""custom_linear_solve: x with matvec(x) = b, computed by a solve sub-IR and differentiated implicitly, as JAX's
linear_solve_p (user-facing side: tracejit/lax/linear_solve.py).

    custom_linear_solve[const_lengths matvec vecmat solve transpose_solve]
        *matvec_consts *vecmat_consts *solve_consts *transpose_solve_consts *b  ->  *x *aux

The four sub-IRs are constant-free ClosedIRs taking their consts then a vector shaped as b (x and b have the same
leaves): matvec and vecmat (its transpose) return one, solve and transpose_solve one and the aux values.
vecmat and transpose_solve are None when no transposed solve was given. Evaluated, the equation runs solve;
compiled, it is solve inlined (passes/inline.py); only the transforms read the others:

- jvp: from d(matvec(x)) = db, x' = solve(b' - (d matvec) x), another custom_linear_solve of the same sub-IRs
  (so the loop inside solve is never differentiated); aux gets no tangent, nor do the solves' consts.
- transpose (linear in b): the transposed problem, matvec <-> vecmat and solve <-> transpose_solve, applied to
  the cotangent of x.
- batching: the sub-IRs vmapped, with the vector's leaves batched where any of them makes them so.
"""
from ..core.ad_util import UndefinedPrimal, Zero, add_tangents, aval, instantiate
from ..core.batching import move_batch_axis
from ..core.ir_surgery import hoist_consts
from ..core.ops import ops
from ..core.trace import Primitive, bind, eval_ir
from ..transforms.ad import jvp_eval
from ..transforms.vmap import vmap_ir
from . import control_flow as cf

ROLES = ("matvec", "vecmat", "solve", "transpose_solve")


def linear_solve(irs, consts, b):
    """Bind custom_linear_solve of the sub-IRs `irs` (one ClosedIR or None per role, in ROLES' order) with
    `consts` (a list of operands per role) on the leaves b; constants a sub-IR holds become its leading operands."""
    params, groups = {}, []
    for role, closed, group in zip(ROLES, irs, consts):
        if closed is not None and closed.consts:
            closed, hoisted = hoist_consts(closed)
            group = list(hoisted) + list(group)
        params[role] = closed
        groups.append(list(group))
    return bind(custom_linear_solve_p, *[x for g in groups for x in g], *b,
                const_lengths=tuple(map(len, groups)), **params)


def _split(args, const_lengths):
    *consts, b = cf.split(args, const_lengths)
    return consts, b


def _shape(*avals, const_lengths, **irs):
    consts, b = _split(avals, const_lengths)
    if irs["solve"] is None or irs["matvec"] is None:
        raise TypeError("custom_linear_solve: matvec and solve are required")
    if (irs["vecmat"] is None) != (irs["transpose_solve"] is None):
        raise TypeError("custom_linear_solve: vecmat and transpose_solve are given together or not at all")
    for role, group in zip(ROLES, consts):
        closed = irs[role]
        if closed is None:
            if group:
                raise TypeError(f"custom_linear_solve: {len(group)} consts for the missing {role}")
            continue
        if not cf.same_types(closed.in_avals, group + b):
            raise TypeError(f"custom_linear_solve: {role} takes ({cf.types_text(closed.in_avals)}), operands are "
                            f"({cf.types_text(group + b)})")
        out = closed.out_avals
        if not cf.same_types(out[:len(b)], b) or (len(out) != len(b) and role in ("matvec", "vecmat")):
            raise TypeError(f"custom_linear_solve: {role} returns ({cf.types_text(out)}), expected "
                            f"({cf.types_text(b)}{', aux...' if 'solve' in role else ''})")
    return [a.strip_weak() for a in b] + [a.strip_weak() for a in irs["solve"].out_avals[len(b):]]


def _impl(*args, const_lengths, **irs):
    consts, b = _split(args, const_lengths)
    return eval_ir(irs["solve"], *consts[2], *b)


def _called(eqn):
    """What the equation computes, solve on its consts and b, which the passes inline (the other sub-IRs serve
    the transforms only, which are done by then)."""
    consts, b = _split(eqn.inputs, eqn.params["const_lengths"])
    return eqn.params["solve"], consts[2] + b


def _jvp(primals, tangents, const_lengths, **irs):
    """x' = solve(b' - (d matvec) x), (d matvec) x the tangent of matvec(x) from its consts' tangents alone."""
    consts, b = _split(primals, const_lengths)
    const_tangents, b_dot = _split(tangents, const_lengths)
    out = bind(custom_linear_solve_p, *primals, const_lengths=const_lengths, **irs)
    x, n = out[:len(b)], len(b)
    rhs = [t if nz else Zero(aval(v)) for v, t, nz in zip(b, b_dot, cf.nonzeros(b, b_dot))]
    mv_nz = cf.nonzeros(consts[0], const_tangents[0])
    if any(mv_nz):
        mv_tangents = [t if nz else Zero(aval(v)) for v, t, nz in zip(consts[0], const_tangents[0], mv_nz)]
        _, dA_x = jvp_eval(irs["matvec"], consts[0] + x, mv_tangents + [Zero(aval(v)) for v in x])
        rhs = [add_tangents(r, t if isinstance(t, Zero) else ops.neg(t)) for r, t in zip(rhs, dA_x)]
    zeros = [Zero(aval(v)) for v in out]
    if all(isinstance(r, Zero) for r in rhs):
        return out, zeros
    x_dot = bind(custom_linear_solve_p, *[v for g in consts for v in g], *map(instantiate, rhs),
                 const_lengths=const_lengths, **irs)
    return out, x_dot[:n] + zeros[n:]


def _transpose(cts, *args, const_lengths, matvec, vecmat, solve, transpose_solve):
    """b's cotangent is transpose_solve(vecmat, x's cotangent): the same equation with the roles transposed."""
    if transpose_solve is None:
        raise TypeError("transpose_solve required for backwards mode automatic differentiation of "
                        "custom_linear_solve")
    consts, b = _split(args, const_lengths)
    if any(isinstance(v, UndefinedPrimal) for g in consts for v in g):
        raise NotImplementedError("custom_linear_solve is linear in b only: its transpose with respect to the "
                                  "values matvec or solve close over is not defined")
    x_ct = cts[:len(b)]
    none = [None] * sum(const_lengths)
    if all(isinstance(c, Zero) for c in x_ct):
        return none + [None] * len(b)
    m, v, s, t = consts
    b_ct = linear_solve((vecmat, matvec, transpose_solve, solve), (v, m, t, s), [instantiate(c) for c in x_ct])
    return none + [c if isinstance(x, UndefinedPrimal) else None for c, x in zip(b_ct, b)]


def _batch(args, dims, const_lengths, **irs):
    """Each sub-IR vmapped with its consts batched (at 0) as given and the vector's leaves batched where b is or
    where any sub-IR's result is (a fixed point, so that all four agree on the vector's type); aux values are
    batched where the solves make them so."""
    size = cf.batch_size(args, dims)
    consts, b = _split(args, const_lengths)
    const_dims, b_dims = _split(dims, const_lengths)
    const_flags = [[d is not None for d in g] for g in const_dims]
    n = len(b)

    def natural(role, k, flags):
        closed = irs[role]
        if closed is None:
            return [False] * n
        in_dims = [0 if f else None for f in const_flags[k] + flags]
        return [d is not None for d in vmap_ir(closed, in_dims, size)[1]]

    vector = cf.grow([d is not None for d in b_dims],
                     lambda f: [any(o) for o in zip(*[natural(r, k, f)[:n] for k, r in enumerate(ROLES)])])
    batched_irs, out_flags = [], vector + natural("solve", 2, vector)[n:]
    for k, role in enumerate(ROLES):
        closed = irs[role]
        if closed is None:
            batched_irs.append(None)
            continue
        aux = natural(role, k, vector)[n:]
        in_dims = [0 if f else None for f in const_flags[k] + vector]
        batched_irs.append(vmap_ir(closed, in_dims, size, [0 if f else None for f in vector + aux])[0])
    new_consts = [[x if d is None else move_batch_axis(x, d, 0, size) for x, d in zip(g, gd)]
                  for g, gd in zip(consts, const_dims)]
    new_b = [move_batch_axis(x, d, 0, size) if f else x for x, d, f in zip(b, b_dims, vector)]
    return linear_solve(batched_irs, new_consts, new_b), [0 if f else None for f in out_flags]


custom_linear_solve_p = Primitive("custom_linear_solve", _shape, _impl, multiple_results=True, jvp=_jvp,
                                  transpose=_transpose, batch=_batch, called=_called, inline=True)

__all__ = ["ROLES", "custom_linear_solve_p", "linear_solve"]
