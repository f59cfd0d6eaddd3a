"""Implicit time steps of a 2-D Brusselator by Newton's method with a sparse Jacobian.

    du/dt = 1 + u^2 v - 4.4 u + alpha Laplacian(u)
    dv/dt = 3.4 u - u^2 v + alpha Laplacian(v)          on an n x n periodic grid

Each backward-Euler step solves  G(y) = y - y_old - dt f(y) = 0  by Newton's method:
J(y) step = -G(y), with J = dG/dy from s2s_ad.jacobian(step_residual, sparse=True), a
scipy.sparse.csr_matrix, and the step from scipy.sparse.linalg.spsolve.  The sparsity pattern and
its colouring are found at the first call and kept: each later Jacobian costs one tangent pass per
colour (and one that checks the kept pattern) instead of one per unknown.

Run: python examples/sparse_newton.py [--grid 32] [--steps 5]
"""
import argparse
import time

import numpy as np
from scipy.sparse.linalg import spsolve

import s2s_ad


def brusselator(y, n, alpha):
    u = y[:n * n].reshape(n, n)
    v = y[n * n:].reshape(n, n)
    lap_u = np.roll(u, 1, axis=0) + np.roll(u, -1, axis=0) + np.roll(u, 1, axis=1) + np.roll(u, -1, axis=1) - 4.0 * u
    lap_v = np.roll(v, 1, axis=0) + np.roll(v, -1, axis=0) + np.roll(v, 1, axis=1) + np.roll(v, -1, axis=1) - 4.0 * v
    du = 1.0 + u * u * v - 4.4 * u + alpha * lap_u
    dv = 3.4 * u - u * u * v + alpha * lap_v
    return np.concatenate([du.ravel(), dv.ravel()])


def step_residual(y, y_old, dt, n, alpha):
    return y - y_old - dt * brusselator(y, n, alpha)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--grid", type=int, default=32)
    parser.add_argument("--steps", type=int, default=5)
    options = parser.parse_args()
    n, dt = options.grid, 0.1
    alpha = 0.001 * n ** 2  # a diffusion of 0.001 over a grid spacing of 1 / n
    x = np.linspace(0.0, 1.0, n, endpoint=False)
    u0 = 22.0 * (x[None, :] * (1.0 - x[None, :])) ** 1.5 * np.ones((n, 1))
    v0 = 27.0 * (x[:, None] * (1.0 - x[:, None])) ** 1.5 * np.ones((1, n))
    y = np.concatenate([u0.ravel(), v0.ravel()])
    jacobian = s2s_ad.jacobian(step_residual, sparse=True)
    print(f"grid {n}x{n}: {y.size} unknowns")
    for step in range(options.steps):
        y_old, norms, seconds = y.copy(), [], []
        for _ in range(20):
            g = step_residual(y, y_old, dt, n, alpha)
            norms.append(np.linalg.norm(g))
            if norms[-1] < 1e-10:
                break
            start = time.perf_counter()
            jac = jacobian(y, y_old, dt, n, alpha)
            seconds.append(time.perf_counter() - start)
            y = y + spsolve(jac.tocsc(), -g)
        print(f"step {step + 1}: {len(norms) - 1} Newton iterations, |G| " + " -> ".join(f"{r:.1e}" for r in norms)
              + f"; Jacobian {seconds[0] * 1e3:.1f} ms first, {min(seconds) * 1e3:.2f} ms least")
    print(f"{int(jacobian.colors.max()) + 1} colours ({jacobian.mode} mode), {jacobian.sparsity.nnz} nonzeros; "
          f"mean u {y[:n * n].mean():.6f}")


if __name__ == "__main__":
    main()
