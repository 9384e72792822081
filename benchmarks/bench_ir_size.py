"""IR size before and after the optimisation passes, on a suite of programs (issue 6's bar).

For each program: equations that `tj.make_ir(f)` prints, equations after `optimize=True`, and, when jax is
importable, equations that `jax.make_jaxpr` prints for the same program written with jax.numpy (jax is not
a dependency; the column is left empty without it). Equations inside sub-IRs count too; JAX's call
wrappers (pjit, custom_jvp_call...) count as their bodies.

    python benchmarks/bench_ir_size.py [--json]
"""
import argparse
import json
import sys

import numpy as np

import tracejit as tj
import tracejit.numpy as tnp
from tracejit.core.ir import sub_irs

F32 = np.float32


def _x(*shape):
    return np.linspace(-1.0, 1.5, int(np.prod(shape))).astype(F32).reshape(shape)


# Each program: name -> (API names it needs, build(api, xnp, nn) -> (function, args)). Written once for
# the tracejit namespace (tj, tnp, tj.nn) and the JAX one (jax, jax.numpy, jax.nn).

def _mlp_params():
    return (_x(8, 16) * 0.3, _x(16) * 0.1, _x(16, 4) * 0.3, _x(4) * 0.1)


def _mlp_loss(xnp, nn):
    def loss(params, x, labels):
        w1, b1, w2, b2 = params
        hidden = xnp.tanh(x @ w1 + b1)
        logits = hidden @ w2 + b2
        return -xnp.mean(xnp.sum(nn.log_softmax(logits) * labels, axis=1))
    return loss


def _onehot():
    return np.eye(4, dtype=F32)[np.arange(5) % 4]


def _sum_tanh_sq(xnp):
    return lambda x: xnp.sum(xnp.tanh(x) ** 2)


def _lsq(xnp):
    return lambda w, x, y: xnp.mean((x @ w - y) ** 2)


def _layernorm(xnp):
    def f(x, gamma):
        mean = xnp.mean(x, axis=-1, keepdims=True)
        var = xnp.mean((x - mean) ** 2, axis=-1, keepdims=True)
        return xnp.sum(((x - mean) / xnp.sqrt(var + 1e-5)) * gamma)
    return f


def _vec(xnp):
    return lambda x: xnp.sin(x) * xnp.cumsum(x) + x[::-1] * 2.0


PROGRAMS = {
    "sum_tanh_sq": ((), lambda api, xnp, nn: (_sum_tanh_sq(xnp), (_x(3),))),
    "grad_sum_tanh_sq": (("grad",), lambda api, xnp, nn: (api.grad(_sum_tanh_sq(xnp)), (_x(3),))),
    "value_and_grad_sum_tanh_sq": (("value_and_grad",),
                                   lambda api, xnp, nn: (api.value_and_grad(_sum_tanh_sq(xnp)), (_x(3),))),
    "hessian_sin_cubed": (("hessian",),
                          lambda api, xnp, nn: (api.hessian(lambda x: xnp.sum(xnp.sin(x) ** 3)), (_x(4),))),
    "grad_grad_scalar": (("grad",), lambda api, xnp, nn: (
        api.grad(api.grad(lambda x: xnp.sin(x) * x ** 3)), (F32(0.5),))),
    "mlp_loss": ((), lambda api, xnp, nn: (_mlp_loss(xnp, nn), (_mlp_params(), _x(5, 8), _onehot()))),
    "grad_mlp_loss": (("grad",), lambda api, xnp, nn: (
        api.grad(_mlp_loss(xnp, nn)), (_mlp_params(), _x(5, 8), _onehot()))),
    "value_and_grad_mlp_loss": (("value_and_grad",), lambda api, xnp, nn: (
        api.value_and_grad(_mlp_loss(xnp, nn)), (_mlp_params(), _x(5, 8), _onehot()))),
    "vmap_grad_lsq": (("vmap", "grad"), lambda api, xnp, nn: (
        api.vmap(api.grad(_lsq(xnp)), in_axes=(None, 0, 0)), (_x(6), _x(10, 1, 6), _x(10, 1)))),
    "grad_lsq": (("grad",), lambda api, xnp, nn: (api.grad(_lsq(xnp)), (_x(6), _x(10, 6), _x(10)))),
    "logsumexp_rows": ((), lambda api, xnp, nn: (lambda x: nn.logsumexp(x, axis=1), (_x(4, 5),))),
    "grad_logsumexp": (("grad",), lambda api, xnp, nn: (api.grad(lambda x: nn.logsumexp(x)), (_x(6),))),
    "softmax": ((), lambda api, xnp, nn: (lambda x: nn.softmax(x, axis=-1), (_x(3, 4),))),
    "jacfwd_vec": (("jacfwd",), lambda api, xnp, nn: (api.jacfwd(_vec(xnp)), (_x(4),))),
    "jacrev_vec": (("jacrev",), lambda api, xnp, nn: (api.jacrev(_vec(xnp)), (_x(4),))),
    "jvp_vec": (("jvp",), lambda api, xnp, nn: (lambda x, t: api.jvp(_vec(xnp), (x,), (t,)), (_x(4), _x(4)))),
    "vjp_vec": (("vjp",), lambda api, xnp, nn: (lambda x, ct: api.vjp(_vec(xnp), x)[1](ct), (_x(4), _x(4)))),
    "grad_layernorm": (("grad",), lambda api, xnp, nn: (api.grad(_layernorm(xnp)), (_x(3, 8), _x(8)))),
    "grad_relu_weighted": (("grad",), lambda api, xnp, nn: (
        api.grad(lambda x: xnp.sum(nn.relu(x) * x)), (_x(5),))),
    "grad_gaussian_nll": (("grad",), lambda api, xnp, nn: (api.grad(
        lambda mu, log_sigma, x: xnp.sum(log_sigma + 0.5 * ((x - mu) / xnp.exp(log_sigma)) ** 2), argnums=(0, 1)),
        (F32(0.1), F32(0.2), _x(7)))),
    "vmap_matvec": (("vmap",), lambda api, xnp, nn: (api.vmap(lambda m, v: m @ v, in_axes=(None, 0)),
                                                     (_x(3, 4), _x(5, 4)))),
    "polynomial_const_coeffs": ((), lambda api, xnp, nn: (
        lambda x: sum(c * x ** i for i, c in enumerate(xnp.asarray(np.arange(1.0, 5.0, dtype=F32)) * 2.0)),
        (_x(6),))),
    "normalize": ((), lambda api, xnp, nn: (lambda x: (x - xnp.mean(x)) / xnp.std(x), (_x(8),))),
    "identities": ((), lambda api, xnp, nn: (
        lambda x: (x * 1.0 + 0.0) * xnp.ones_like(x) + xnp.zeros_like(x), (_x(4),))),
}


def count_eqns(ir):
    """Equations of a tracejit IR, including those in sub-IRs."""
    return sum(1 + sum(count_eqns(sub) for sub in sub_irs(eqn)) for eqn in ir.eqns)


def count_jax_eqns(jaxpr):
    """Equations of a jaxpr; call wrappers (pjit, custom_jvp_call, ...) count as their bodies."""
    total = 0
    for eqn in jaxpr.eqns:
        values = [item for v in eqn.params.values() for item in (v if isinstance(v, tuple) else (v,))]
        subs = [getattr(v, "jaxpr", v) for v in values if hasattr(v, "eqns")]
        if subs and eqn.primitive.name in ("pjit", "jit", "closed_call", "custom_jvp_call", "custom_vjp_call",
                                           "custom_vjp_call_jaxpr", "remat"):
            total += sum(count_jax_eqns(s) for s in subs)
        else:
            total += 1 + sum(count_jax_eqns(s) for s in subs)
    return total


def _jax():
    try:
        import jax
        import jax.numpy as jnp
    except ImportError:
        return None
    return jax, jnp, jax.nn


def measure(name, needs, build, jax_ns):
    missing = [n for n in needs if not hasattr(tj, n)]
    if missing:
        return {"program": name, "skipped": f"tj.{', tj.'.join(missing)} missing"}
    fun, args = build(tj, tnp, tj.nn)
    before = tj.make_ir(fun)(*args)
    after = tj.make_ir(fun, optimize=True)(*args)
    row = {"program": name, "before": count_eqns(before.ir), "after": count_eqns(after.ir), "jax": None}
    if jax_ns is not None:
        jax, jnp, jnn = jax_ns
        jfun, jargs = build(jax, jnp, jnn)
        row["jax"] = count_jax_eqns(jax.make_jaxpr(jfun)(*jargs).jaxpr)
    return row


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", action="store_true", help="print the rows as JSON")
    opts = parser.parse_args()
    jax_ns = _jax()
    rows = [measure(name, needs, build, jax_ns) for name, (needs, build) in PROGRAMS.items()]
    if opts.json:
        json.dump(rows, sys.stdout, indent=2)
        print()
        return
    print(f"{'program':32} {'before':>7} {'after':>7} {'jax':>7}")
    for row in rows:
        if "skipped" in row:
            print(f"{row['program']:32} skipped: {row['skipped']}")
            continue
        jax_count = "-" if row["jax"] is None else str(row["jax"])
        print(f"{row['program']:32} {row['before']:7d} {row['after']:7d} {jax_count:>7}")
    measured = [r for r in rows if "skipped" not in r]
    print(f"\n{len(measured)} programs; equations {sum(r['before'] for r in measured)} -> "
          f"{sum(r['after'] for r in measured)} after optimisation"
          + ("" if jax_ns else " (jax is not installed: no jax.make_jaxpr column)"))
    if jax_ns:
        worse = [r["program"] for r in measured if r["after"] > r["jax"]]
        print("more equations than jax.make_jaxpr: " + (", ".join(worse) if worse else "none"))


if __name__ == "__main__":
    main()
