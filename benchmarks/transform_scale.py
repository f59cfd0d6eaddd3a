"""How transform time grows with the size of the function: ``python benchmarks/transform_scale.py``.

Writes functions of N statements (``a{i} = math.sin(a{i-1}) * 0.5 + y * c``)
to a temporary folder, and times the first gradient call (reverse mode) and the
first ``jvp`` (forward mode) of each: parse, lower, analyse, generate,
optimize, emit and compile, with the code run once.  Each figure is the
minimum of ``--repeats`` fresh functions; the time should grow in proportion
to N.  Then a loop of a million iterations is differentiated, which must not
hit Python's recursion limit.
"""
from __future__ import annotations

import argparse
import importlib.util
import tempfile
import time
from pathlib import Path
from typing import Callable

import s2s_ad


def write_function(folder: Path, n: int, tag: str) -> Callable[..., float]:
    """A fresh module (so nothing is cached) defining ``big(x, y)`` with ``n`` statements."""
    lines = ["import math", "", "", "def big(x, y):", "    a0 = x"]
    lines += [f"    a{i} = math.sin(a{i - 1}) * 0.5 + y * {0.001 * (i % 7)}" for i in range(1, n)]
    lines.append(f"    return a{n - 1}")
    path = folder / f"big_{n}_{tag}.py"
    path.write_text("\n".join(lines) + "\n")
    spec = importlib.util.spec_from_file_location(path.stem, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.big


def first_call_seconds(call: Callable[[], object]) -> float:
    start = time.perf_counter()
    call()
    return time.perf_counter() - start


def long_loop(x: float, n: int) -> float:
    s = x
    for i in range(n):
        s = s * 0.999999 + 0.000001 * x
    return s


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="250,500,1000,2000", help="statement counts, comma-separated")
    parser.add_argument("--repeats", type=int, default=3, help="fresh functions per size (the minimum is shown)")
    options = parser.parse_args()
    s2s_ad.grad(long_loop)(0.5, 2)  # load the rules first: that one-off cost is not the function's
    print(f"{'statements':>10}  {'reverse':>9}  {'forward':>9}")
    with tempfile.TemporaryDirectory() as folder:
        for n in map(int, options.sizes.split(",")):
            reverse = forward = float("inf")
            for k in range(options.repeats):
                f = write_function(Path(folder), n, f"r{k}")
                reverse = min(reverse, first_call_seconds(lambda: s2s_ad.grad(f, wrt=(0, 1))(0.3, 0.2)))
                g = write_function(Path(folder), n, f"f{k}")
                forward = min(forward, first_call_seconds(lambda: s2s_ad.jvp(g, (0.3, 0.2), (1.0, 0.0))))
            print(f"{n:>10}  {reverse:>8.3f}s  {forward:>8.3f}s")
    seconds = first_call_seconds(lambda: s2s_ad.grad(long_loop)(0.5, 10 ** 6))
    print(f"a loop of 10**6 iterations: gradient in {seconds:.3f} s")


if __name__ == "__main__":
    main()
