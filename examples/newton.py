"""Newton's method on the Rosenbrock function, with s2s_ad.grad and s2s_ad.hessian.

    rosenbrock(x) = sum(100 (x[i+1] - x[i]**2)**2 + (1 - x[i])**2),  minimum 0 at (1, 1, ..., 1)

Each Newton step solves  hessian(x) step = -gradient(x). s2s_ad generates
both from the one line of NumPy below: the gradient by reverse mode, the
Hessian by forward mode over it. From the classic start (-1.2, 1), plain
Newton reaches (1, 1) in a handful of steps. In four dimensions, from
(-1.2, 1, -1.2, 1), plain Newton is drawn to a saddle point (f = 3.708,
where the gradient vanishes too), so the second run adds the two textbook
safeguards: shift the Hessian until it is positive definite (so the step
goes downhill) and halve the step until f decreases enough.

Run: python examples/newton.py
"""
import numpy as np

import s2s_ad


def rosenbrock(x):
    return np.sum(100.0 * (x[1:] - x[:-1] ** 2) ** 2 + (1.0 - x[:-1]) ** 2)


gradient = s2s_ad.grad(rosenbrock)
hessian = s2s_ad.hessian(rosenbrock)


def downhill_direction(h, g):
    """Solve (h + shift I) d = -g, doubling the shift from 0 until h + shift I is positive definite."""
    shift = 0.0
    while True:
        shifted = h + shift * np.eye(len(g))
        try:
            np.linalg.cholesky(shifted)
            return np.linalg.solve(shifted, -g)
        except np.linalg.LinAlgError:
            shift = max(2 * shift, 1e-3 * np.max(np.abs(h)))


def backtrack(x, direction, g):
    """Halve the step until f falls by at least a small fraction of what the slope promises (Armijo)."""
    length = 1.0
    while rosenbrock(x + length * direction) > rosenbrock(x) + 1e-4 * length * (g @ direction):
        length /= 2
    return length


def newton(x, safeguarded, tolerance=1e-10, max_iterations=100):
    """Newton's method from x; prints one line per iterate, with the step length that led to it."""
    print(f"{'iter':>4} {'f(x)':>11} {'|gradient|':>11} {'step':>6}   x")
    length = None
    for iteration in range(max_iterations):
        g = gradient(x)
        taken = "" if length is None else f"{length:.3f}"
        print(f"{iteration:>4} {rosenbrock(x):11.3e} {np.linalg.norm(g):11.3e} {taken:>6}  " + " ".join(f"{v:10.6f}" for v in x))
        if np.linalg.norm(g) < tolerance:
            break
        if safeguarded:
            direction = downhill_direction(hessian(x), g)
            length = backtrack(x, direction, g)
        else:
            direction, length = np.linalg.solve(hessian(x), -g), 1.0
        x = x + length * direction
    return x


def solve(start, safeguarded):
    x = newton(np.array(start), safeguarded)
    print(f"n={len(x)}: max |x - 1| = {np.max(np.abs(x - 1.0)):.1e}")
    print()


def main():
    x, y = -1.2, 1.0
    by_hand = [[1200 * x ** 2 - 400 * y + 2, -400 * x], [-400 * x, 200.0]]
    print("Hessian at (-1.2, 1) from s2s_ad.hessian:", np.round(hessian(np.array([x, y])), 6).tolist())
    print("by hand, [[1200 x^2 - 400 y + 2, -400 x], [-400 x, 200]]:", np.round(by_hand, 6).tolist())
    print()
    print("plain Newton, n=2, from (-1.2, 1):")
    solve([-1.2, 1.0], safeguarded=False)
    print("safeguarded Newton, n=4, from (-1.2, 1, -1.2, 1):")
    solve([-1.2, 1.0, -1.2, 1.0], safeguarded=True)


if __name__ == "__main__":
    main()
