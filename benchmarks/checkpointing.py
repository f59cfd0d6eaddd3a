"""Checkpointing: peak memory and time of a gradient through a long loop, against storing every step.

    python benchmarks/checkpointing.py [--steps N] [--size M] [--snapshots 10 20 40]

Prints, for storing every step, the default square-root segments and the
binomial schedule (``snapshots=c``) with each ``c`` asked for: peak traced
memory during the gradient call (tracemalloc) and its ratio to storing
every step, the minimum time over a few repeats over storing every step,
and for the binomial schedule the advances ``df.stats()`` counted against
Revolve's ``t(n, c)``.  The gradients are compared too: they must be
identical.  Then a fixed-point solve (``--iterations`` of a contraction on a
state of ``--size`` floats, about 1,000 by default), recorded against
``fixed_point``'s two-phase adjoint: memory, time, and how far apart the two
gradients are (the fixed point's gradient agrees to the solver's tolerance).
"""
from __future__ import annotations

import argparse
import time
import tracemalloc

import numpy as np

import s2s_ad


def simulation(u0, k, n):
    u = u0
    for t in s2s_ad.checkpointed(range(n)):
        u = u + k * (u * u - u) * 0.01
    return np.sum(u * u)


def simulation_binomial(u0, k, n, c):
    u = u0
    for t in s2s_ad.checkpointed(range(n), snapshots=c):
        u = u + k * (u * u - u) * 0.01
    return np.sum(u * u)


def simulation_store_all(u0, k, n):
    u = u0
    for t in range(n):
        u = u + k * (u * u - u) * 0.01
    return np.sum(u * u)


def solve(p, b, iterations):
    x = b * 0.0
    count = 0
    while s2s_ad.fixed_point(count < iterations):
        x_new = 0.5 * np.tanh(p * x) + b
        count = count + 1
        x = x_new
    return np.sum(x * x)


def solve_recorded(p, b, iterations):
    x = b * 0.0
    count = 0
    while count < iterations:
        x_new = 0.5 * np.tanh(p * x) + b
        count = count + 1
        x = x_new
    return np.sum(x * x)


def fixed_point_rows(size: int, iterations: int) -> None:
    p, b = 0.9, np.linspace(-1.0, 1.0, size)
    recorded, two_phase = s2s_ad.grad(solve_recorded, wrt=(0, 1)), s2s_ad.grad(solve, wrt=(0, 1))
    theirs, ours = recorded(p, b, iterations), two_phase(p, b, iterations)
    base_memory, base_seconds = peak_bytes(recorded, p, b, iterations), best_seconds(recorded, p, b, iterations)
    memory, seconds = peak_bytes(two_phase, p, b, iterations), best_seconds(two_phase, p, b, iterations)
    apart = max(abs(ours[0] - theirs[0]) / abs(theirs[0]), float(np.max(np.abs(ours[1] - theirs[1]))
                                                                  / np.max(np.abs(theirs[1]))))
    print(f"\nfixed-point solve, {iterations} iterations, state of {size} floats")
    print(f"{'':>16} {'peak memory':>12} {'ratio':>7} {'time':>9} {'/ recorded':>10}  relative difference")
    print(f"{'recorded':>16} {base_memory / 1e6:>9.2f} MB {1:>7.3f} {base_seconds:>7.3f} s {1:>10.2f}")
    print(f"{'fixed_point':>16} {memory / 1e6:>9.2f} MB {memory / base_memory:>7.3f} {seconds:>7.3f} s "
          f"{seconds / base_seconds:>10.2f}  {apart:.1e}")


def peak_bytes(gradient, *args) -> int:
    tracemalloc.start()
    try:
        gradient(*args)
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def best_seconds(gradient, *args, repeats: int = 3) -> float:
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        gradient(*args)
        times.append(time.perf_counter() - start)
    return min(times)


def main() -> None:
    from s2s_ad.core import revolve

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=10_000)
    parser.add_argument("--size", type=int, default=100, help="length of the state vector")
    parser.add_argument("--snapshots", type=int, nargs="*", default=[10, 20, 40])
    parser.add_argument("--iterations", type=int, default=1_000, help="of the fixed-point solve")
    options = parser.parse_args()
    u0, k, n = np.linspace(0.1, 0.9, options.size), 0.3, options.steps
    stored = s2s_ad.grad(simulation_store_all, wrt=(0, 1))
    theirs = stored(u0, k, n)
    base_memory, base_seconds = peak_bytes(stored, u0, k, n), best_seconds(stored, u0, k, n)
    print(f"loop of {n} steps, state of {options.size} floats")
    print(f"{'':>16} {'peak memory':>12} {'ratio':>7} {'time':>9} {'/ stored':>8} {'advances':>9} {'t(n, c)':>8}  identical")
    print(f"{'store-all':>16} {base_memory / 1e6:>9.2f} MB {1:>7.3f} {base_seconds:>7.3f} s {1:>8.2f}")
    runs = [("sqrt segments", s2s_ad.grad(simulation, wrt=(0, 1)), (u0, k, n), None)]
    runs += [(f"binomial c={c}", s2s_ad.grad(simulation_binomial, wrt=(0, 1)), (u0, k, n, c), c)
             for c in options.snapshots]
    for name, gradient, args, c in runs:
        ours = gradient(*args)  # also builds it
        same = np.array_equal(ours[0], theirs[0]) and ours[1] == theirs[1]
        counted = gradient.stats()
        memory, seconds = peak_bytes(gradient, *args), best_seconds(gradient, *args)
        advances = f"{counted[0]['advances']:>9} {revolve.advances(n, c):>8}" if c else f"{'':>9} {'':>8}"
        print(f"{name:>16} {memory / 1e6:>9.2f} MB {memory / base_memory:>7.3f} {seconds:>7.3f} s "
              f"{seconds / base_seconds:>8.2f} {advances}  {same}")
    fixed_point_rows(options.size, options.iterations)


if __name__ == "__main__":
    main()
