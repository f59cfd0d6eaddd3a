"""Sparse Jacobians and Hessians by colouring, against the dense ones, and vector forward mode against one
pass per element; ratios taken in one run.

    python benchmarks/jacobians.py [--backend python|numba] [--quick]

Three problems: a tridiagonal residual of 2,000 unknowns, a 2-D Brusselator reaction-diffusion
residual on a 32x32 periodic grid (2,048 unknowns), and the Hessian of a chained Rosenbrock
function of 2,000 variables.  For each: the colours, the dense matrix's time (a call after the first:
one sweep per chunk of input elements), the sparse matrix's first call (the pattern, found by one
NaN-tangent pass per input element, its colouring, and the passes) and its later calls (one pass per
colour and one pass that checks the kept pattern), the least time over a few repeats, and the largest
difference from the dense matrix.  Then vector forward mode (``jacobian``/``hessian``, 64 directions per sweep of the
tangent code): a dense Jacobian of a map from 200 numbers to 200 against 200 separate ``jvp`` calls and
against one pass per element (``chunk=1``), and a dense Hessian of a function of 200 numbers against
one pass per element.  Vector mode is one run of the tangent code's vector version per chunk
(``s2s_ad/ad/vector``; on the Python backend, where it has none, the tangent code with its tangents
wrapped, ``s2s_ad/api/batched.py``).  With ``--backend numba`` every column is compiled: one pass per element the compiled
tangent code run once per direction inside one compiled loop, and each separate ``jvp`` a call of the
compiled tangent code.  ``--quick`` takes small sizes (a test runs it so).
"""
from __future__ import annotations

import argparse
import time
from typing import Any, Callable

import numpy as np

import s2s_ad

try:  # (imported here, so the first sparse call does not count the import, a third of a second)
    import scipy.sparse  # noqa: F401
except ImportError:
    raise SystemExit("benchmarks/jacobians.py needs SciPy: pip install scipy") from None


def tridiagonal(u):
    r = 2.0 * u + u ** 3
    r[1:] -= u[:-1]
    r[:-1] -= u[1:]
    return r


def brusselator(y, n):
    u = y[:n * n].reshape(n, n)
    v = y[n * n:].reshape(n, n)
    lap_u = np.roll(u, 1, axis=0) + np.roll(u, -1, axis=0) + np.roll(u, 1, axis=1) + np.roll(u, -1, axis=1) - 4.0 * u
    lap_v = np.roll(v, 1, axis=0) + np.roll(v, -1, axis=0) + np.roll(v, 1, axis=1) + np.roll(v, -1, axis=1) - 4.0 * v
    du = 1.0 + u * u * v - 4.4 * u + 10.0 * lap_u
    dv = 3.4 * u - u * u * v + 10.0 * lap_v
    return np.concatenate([du.ravel(), dv.ravel()])


def rosenbrock(x):
    return np.sum(100.0 * (x[1:] - x[:-1] ** 2) ** 2 + (1.0 - x[:-1]) ** 2)


def dense_map(x, w):
    """A map from n numbers to n, every output depending on every input."""
    return np.tanh(w @ x) + x ** 2 * np.sum(np.sin(x))


def dense_scalar(x, w):
    """A function of n numbers whose Hessian is dense."""
    return np.sum(np.tanh(w @ x) ** 2) + np.sum(x ** 4) * np.mean(x)


def separate_jvps(fn: Callable, x: np.ndarray, w: np.ndarray, backend: str) -> np.ndarray:
    """The Jacobian as n separate ``jvp`` calls, one unit tangent each."""
    eye = np.eye(x.size)
    return np.stack([s2s_ad.jvp(fn, (x, w), (eye[i], None), backend=backend)[1] for i in range(x.size)], axis=-1)


def dense_rows(n: int, repeats: int, backend: str) -> list[dict]:
    """Vector forward mode (chunks of 64 directions per sweep) against one sweep per input element."""
    rng = np.random.default_rng(1)
    x, w = rng.normal(size=n), rng.normal(size=(n, n)) / np.sqrt(n)
    rows = []
    for name, vector, baselines in [
        (f"dense Jacobian {n}->{n}", s2s_ad.jacobian(dense_map, backend=backend),
         [(f"{n} separate jvp calls", lambda: separate_jvps(dense_map, x, w, backend)),
          ("one pass per element", lambda: s2s_ad.jacobian(dense_map, chunk=1, backend=backend)(x, w))]),
        (f"dense Hessian of {n}", s2s_ad.hessian(dense_scalar, backend=backend),
         [("one pass per element", lambda: s2s_ad.hessian(dense_scalar, chunk=1, backend=backend)(x, w))]),
    ]:
        vector(x, w)  # (built and cached before timing)
        fast, matrix = seconds(lambda: vector(x, w), repeats)
        for baseline, call in baselines:
            slow, reference = seconds(call, 2)
            rows.append({"problem": name, "baseline": baseline, "vector s": fast, "baseline s": slow,
                         "ratio": slow / fast, "max diff": float(np.max(np.abs(matrix - reference)))})
    return rows


def seconds(call: Callable[[], Any], repeats: int) -> tuple[float, Any]:
    best, result = float("inf"), None
    for _ in range(repeats):
        start = time.perf_counter()
        result = call()
        best = min(best, time.perf_counter() - start)
    return best, result


def compare(name: str, dense_of: Callable, sparse_of: Any, args: tuple, repeats: int) -> dict:
    start = time.perf_counter()
    first = sparse_of(*args)
    first_call = time.perf_counter() - start
    again, matrix = seconds(lambda: sparse_of(*args), repeats)
    dense_of(*args)  # (built, and under numba compiled or loaded from the disk cache, before timing)
    dense_time, dense = seconds(lambda: dense_of(*args), 2)
    difference = float(np.max(np.abs(matrix.toarray() - dense)))
    same_first = float(np.max(np.abs(first.toarray() - dense)))
    row = {"problem": name, "unknowns": args[0].size, "colours": int(sparse_of.colors.max()) + 1,
           "mode": sparse_of.mode, "dense s": dense_time, "sparse first s": first_call, "sparse s": again,
           "dense/sparse": dense_time / again, "max |sparse - dense|": max(difference, same_first)}
    return row


def main(argv: Any = None) -> list[dict]:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--backend", default="python", choices=["python", "numba"])
    parser.add_argument("--quick", action="store_true", help="small sizes (a smoke run)")
    options = parser.parse_args(argv)
    unknowns, grid, repeats = (100, 6, 2) if options.quick else (2000, 32, 5)
    rng = np.random.default_rng(0)
    backend = options.backend
    rows = [
        compare("tridiagonal residual", s2s_ad.jacobian(tridiagonal, backend=backend),
                s2s_ad.jacobian(tridiagonal, sparse=True, backend=backend), (rng.normal(size=unknowns),), repeats),
        compare(f"Brusselator {grid}x{grid}", s2s_ad.jacobian(brusselator, backend=backend),
                s2s_ad.jacobian(brusselator, sparse=True, backend=backend),
                (rng.uniform(size=2 * grid * grid), grid), repeats),
        compare("chained Rosenbrock Hessian", s2s_ad.hessian(rosenbrock, backend=backend),
                s2s_ad.hessian(rosenbrock, sparse=True, backend=backend), (rng.normal(size=unknowns),), repeats),
    ]
    print(f"backend {backend}; times are the least of {repeats} calls (the dense ones: of 2)")
    print(f"{'problem':<28} {'n':>5} {'colours':>7} {'mode':>8} {'dense s':>9} {'first s':>9} {'sparse s':>9} "
          f"{'dense/sparse':>12} {'max diff':>9}")
    for r in rows:
        print(f"{r['problem']:<28} {r['unknowns']:>5} {r['colours']:>7} {r['mode']:>8} {r['dense s']:>9.4f} "
              f"{r['sparse first s']:>9.4f} {r['sparse s']:>9.5f} {r['dense/sparse']:>12.1f} "
              f"{r['max |sparse - dense|']:>9.1e}")
    dense = dense_rows(40 if options.quick else 200, repeats, backend)
    print(f"\nvector forward mode, chunks of 64 directions, against the baseline (the least of {repeats} calls)")
    print(f"{'problem':<26} {'baseline':<26} {'vector s':>9} {'baseline s':>10} {'ratio':>6} {'max diff':>9}")
    for r in dense:
        print(f"{r['problem']:<26} {r['baseline']:<26} {r['vector s']:>9.4f} {r['baseline s']:>10.4f} "
              f"{r['ratio']:>6.1f} {r['max diff']:>9.1e}")
    return rows + dense


if __name__ == "__main__":
    main()
