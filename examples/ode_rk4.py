"""Integrate an ODE with classical Runge-Kutta (RK4) in lax.fori_loop, and differentiate the final state with
respect to the initial one.

The system: a damped pendulum, y = (angle, angular velocity). With static bounds fori_loop becomes a scan, so the
loop is traced once and is differentiable in both modes: the Jacobian d y(T) / d y(0) comes from reverse mode
(jacrev: one reverse scan per output) and from forward mode (jacfwd), and is checked against central finite
differences.

    python examples/ode_rk4.py
"""
import time

import numpy as np

import tracejit as tj
import tracejit.numpy as tnp
from tracejit import lax


def pendulum(y, damping=0.1):
    angle, velocity = y[0], y[1]
    return tnp.stack([velocity, -tnp.sin(angle) - damping * velocity])


def rk4_step(y, dt):
    k1 = pendulum(y)
    k2 = pendulum(y + 0.5 * dt * k1)
    k3 = pendulum(y + 0.5 * dt * k2)
    k4 = pendulum(y + dt * k3)
    return y + dt / 6.0 * (k1 + 2.0 * k2 + 2.0 * k3 + k4)


def final_state(y0, t_end=10.0, steps=500):
    dt = t_end / steps
    return lax.fori_loop(0, steps, lambda i, y: rk4_step(y, dt), y0)


def finite_differences(f, y0, eps=1e-6):
    columns = [(f(y0 + eps * e) - f(y0 - eps * e)) / (2 * eps) for e in np.eye(len(y0))]
    return np.stack(columns, axis=1)


def main():
    y0 = np.array([2.0, 0.0])
    solve = tj.jit(final_state)
    print(f"y(0) = {y0}, y(10) = {solve(y0)}")
    start = time.perf_counter()
    jac_rev = tj.jit(tj.jacrev(final_state))(y0)
    jac_fwd = tj.jit(tj.jacfwd(final_state))(y0)
    seconds = time.perf_counter() - start
    jac_fd = finite_differences(solve, y0)
    np.set_printoptions(precision=8, suppress=True)
    print(f"d y(10) / d y(0), reverse mode (jacrev):\n{jac_rev}")
    print(f"forward mode (jacfwd):\n{jac_fwd}")
    print(f"central finite differences:\n{jac_fd}")
    print(f"max |rev - fd| = {np.abs(jac_rev - jac_fd).max():.2e}, max |rev - fwd| = {np.abs(jac_rev - jac_fwd).max():.2e}"
          f" (both Jacobians in {seconds:.2f} s)")
    energy = tj.grad(lambda y: tnp.sum(final_state(y) ** 2))(y0)
    print(f"gradient of |y(10)|^2 with respect to y(0): {energy}, by the chain rule: {2 * solve(y0) @ jac_rev}")


if __name__ == "__main__":
    main()
