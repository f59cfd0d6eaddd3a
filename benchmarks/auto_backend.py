"""``backend="auto"`` against the faster of the two backends, on each of the eight workloads.

    python -m benchmarks.auto_backend [--quick] [--only NAME ...]

For every workload: the backend "auto" chose (and why, in a line below the table), the time per
call of ``grad(f, wrt=..., backend=...)`` for "python", "numba" and "auto" (each called once
before it is timed: that call builds, and for Numba compiles, the code, auto's compile, in a thread,
waited for; the repeats taken in
turn, the minimum kept: ``timing.py``), and auto's time over the faster backend's (issue #36 asks
for at most 1.1).  The three gradients' numbers are compared with each other first.  Needs Numba.
"""
from __future__ import annotations

import argparse
import os
import sys
import warnings

for _variable in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_variable, "1")  # before NumPy is first imported (as command_line.py)

if __package__ in (None, ""):  # run as a script: make the repository's top folder importable
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import numpy as np  # noqa: E402

import s2s_ad  # noqa: E402
from benchmarks.cases import Case, select  # noqa: E402
from benchmarks.timing import FULL, QUICK, Budget, best_seconds_each, steady_allocator  # noqa: E402

BACKENDS = ("python", "numba", "auto")


def measure(case: Case, budget: Budget) -> tuple[str, dict[str, float]]:
    """The choice "auto" made (a sentence), and the seconds per call of each backend."""
    args = case.make_args(False)
    gradients = {b: s2s_ad.grad(case.function, wrt=case.wrt, backend=b) for b in BACKENDS}
    results = {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", s2s_ad.CompileFallbackWarning)  # (a fallback is timed as it runs)
        for backend, gradient in gradients.items():
            gradient(*args)
            # (auto's Numba compiles in a thread, its calls running as Python meanwhile: timed once compiled)
            assert gradient.wait_compiled(), f"{case.name}: {backend}'s compile did not end"
            results[backend] = gradient(*args)
    for backend in ("numba", "auto"):
        for got, expected in zip(results[backend], results["python"]):
            np.testing.assert_allclose(got, expected, rtol=1e-9, atol=1e-12)
    seconds = best_seconds_each({b: (g, args) for b, g in gradients.items()}, budget)
    return str(gradients["auto"].backend_chosen), seconds


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer, shorter repeats")
    parser.add_argument("--only", nargs="+", metavar="NAME", help="these workloads alone")
    options = parser.parse_args(argv)
    steady_allocator()
    budget = QUICK if options.quick else FULL
    print("| workload | auto chose | python | numba | auto | auto / faster |")
    print("|---|---|---:|---:|---:|---:|")
    reasons = []
    for case in select(options.only):
        chosen, seconds = measure(case, budget)
        faster = min(seconds["python"], seconds["numba"])
        backend = chosen.split("chose ", 1)[1].split(":", 1)[0].strip("'")
        print(f"| {case.name} | {backend} | {seconds['python'] * 1e6:.1f} us | {seconds['numba'] * 1e6:.1f} us | "
              f"{seconds['auto'] * 1e6:.1f} us | {seconds['auto'] / faster:.2f} |", flush=True)
        reasons.append(f"- {case.name}: {chosen}")
    print("\n" + "\n".join(reasons))
    return 0


if __name__ == "__main__":
    sys.exit(main())
