"""``vjp`` under ``backend="numba"`` against the Python backend, ratios taken in one run.

    python -m benchmarks.pullbacks [--quick]

The benchmarks' pendulum (1,000 Euler steps into preallocated arrays, a squared error: ``workloads.py``)
and RK4 (500 steps of a two-number system). ``vjp`` runs the forward sweep; each ``vjp_fn(cotangent)``
call the reverse sweep (here, as both functions write into arrays, after the first call the forward
sweep again: the reverse sweep put the overwritten elements back). Under Numba both parts are compiled,
the tape handed from one to the other as a tuple of arrays (``targets/numba/handed.py``). Each is
called once first (building, and for Numba compiling), then timed: the least time per call over a few
repeats. The adjoints are compared with the Python backend's (the largest difference over the largest adjoint, per argument); a fallback to Python is said in its row.
"""
from __future__ import annotations

import argparse
import warnings
from typing import Any

import numpy as np

import s2s_ad

from .cases import CASES
from .hessians import least_seconds


def _pulled(fn: Any, args: tuple, backend: str) -> tuple[Any, Any]:
    """``vjp``'s pullback of ``fn`` at ``args`` and whether a fallback was said."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", s2s_ad.CompileFallbackWarning)
        _, pullback = s2s_ad.vjp(fn, *args, backend=backend)
        pullback(1.0)
    return pullback, bool(caught)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="small sizes, fewer repeats (a test runs it so)")
    options = parser.parse_args()
    repeats, number = (2, 3) if options.quick else (5, 20)
    print("| workload | part | numba | python | python / numba | largest relative difference | fallback |")
    print("|---|---|---|---|---|---|---|")
    for case in CASES:
        if case.name not in ("pendulum", "rk4"):
            continue
        args = tuple(case.make_args(options.quick))
        compiled, fell = _pulled(case.function, args, "numba")
        python, _ = _pulled(case.function, args, "python")
        difference = max(float(np.max(np.abs(np.asarray(a, dtype=float) - np.asarray(b, dtype=float))))
                         / max(float(np.max(np.abs(b))), 1e-300)
                         for a, b in zip(compiled(1.0), python(1.0)) if a is not None)
        rows = [("vjp (forward sweep)", lambda backend: s2s_ad.vjp(case.function, *args, backend=backend)),
                ("vjp_fn(1.0)", lambda backend: (compiled if backend == "numba" else python)(1.0))]
        for part, call in rows:
            t_numba = least_seconds(lambda: call("numba"), repeats, number)
            t_python = least_seconds(lambda: call("python"), repeats, number)
            print(f"| {case.name} | {part} | {t_numba * 1e3:.3f} ms | {t_python * 1e3:.3f} ms | "
                  f"{t_python / t_numba:.1f} | {difference:.1e} | {'yes' if fell else 'no'} |")


if __name__ == "__main__":
    main()
