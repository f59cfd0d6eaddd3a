"""Checkpointing: peak memory and time of a gradient through a long loop, against storing every step.

    python benchmarks/checkpointing.py [--steps N] [--size M] [--snapshots 10 20 40]

Prints, for storing every step, the default square-root segments and the
binomial schedule (``snapshots=c``) with each ``c`` asked for: peak traced
memory during the gradient call (tracemalloc) and its ratio to storing
every step, the minimum time over a few repeats over storing every step,
and for the binomial schedule the advances ``df.stats()`` counted against
Revolve's ``t(n, c)``.  The gradients are compared too: they must be
identical.
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


if __name__ == "__main__":
    main()
