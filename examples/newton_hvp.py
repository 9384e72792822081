"""Newton-CG with Hessian-vector products: minimise the n-dimensional Rosenbrock function.

Each Newton step solves H p = -g with conjugate gradients; CG only needs products H v, computed as the
forward-mode derivative of the gradient (jvp of grad: forward-over-reverse), never forming H. Both the
gradient and the Hessian-vector product are jitted.

    python examples/newton_hvp.py
"""
import numpy as np

import tracejit as tj
import tracejit.numpy as tnp


def rosenbrock(x):
    return tnp.sum(100.0 * (x[1:] - x[:-1] ** 2) ** 2 + (1.0 - x[:-1]) ** 2)


value_and_grad = tj.jit(tj.value_and_grad(rosenbrock))
hvp = tj.jit(lambda x, v: tj.jvp(tj.grad(rosenbrock), (x,), (v,))[1])


def conjugate_gradient(matvec, b, tol, max_iters):
    """Solve A p = b for symmetric A; stop early at negative curvature (truncated Newton)."""
    p, r = np.zeros_like(b), b.copy()
    d, rr = r.copy(), r @ r
    for _ in range(max_iters):
        ad = matvec(d)
        curvature = d @ ad
        if curvature <= 0:
            return p if p.any() else b
        alpha = rr / curvature
        p, r = p + alpha * d, r - alpha * ad
        rr_new = r @ r
        if np.sqrt(rr_new) < tol:
            break
        d, rr = r + (rr_new / rr) * d, rr_new
    return p


def newton_cg(x, steps=50, tol=1e-10):
    for k in range(steps):
        f, g = value_and_grad(x)
        gnorm = np.linalg.norm(g)
        print(f"iter {k:2d}  f {float(f):.3e}  |grad| {gnorm:.3e}")
        if gnorm < tol:
            break
        p = conjugate_gradient(lambda v, x=x: hvp(x, v), -g, tol=min(0.5, np.sqrt(gnorm)) * gnorm, max_iters=len(x))
        t = 1.0  # backtracking line search (Armijo)
        while value_and_grad(x + t * p)[0] > f + 1e-4 * t * (g @ p) and t > 1e-8:
            t *= 0.5
        x = x + t * p
    return x


if __name__ == "__main__":
    x0 = np.array([1.3, 0.7, 0.8, 1.9, 1.2, 0.9, 1.1, 0.6])
    x = newton_cg(x0)
    print("solution:", np.round(x, 6))
    assert np.allclose(x, 1.0, atol=1e-6)
