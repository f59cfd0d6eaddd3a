"""Checkpointing: peak memory and time of a gradient through a long loop, against storing every step.

    python benchmarks/checkpointing.py [--steps N] [--size M]

Prints ratios taken in one run (checkpointed / store-all): peak traced
memory during the gradient call (tracemalloc), and the minimum time over a
few repeats.  The gradients are compared too: they must be identical.
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
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=10_000)
    parser.add_argument("--size", type=int, default=100, help="length of the state vector")
    options = parser.parse_args()
    u0, k, n = np.linspace(0.1, 0.9, options.size), 0.3, options.steps
    checkpointed = s2s_ad.grad(simulation, wrt=(0, 1))
    stored = s2s_ad.grad(simulation_store_all, wrt=(0, 1))
    ours, theirs = checkpointed(u0, k, n), stored(u0, k, n)  # also builds both
    same = np.array_equal(ours[0], theirs[0]) and ours[1] == theirs[1]
    memory = peak_bytes(checkpointed, u0, k, n), peak_bytes(stored, u0, k, n)
    seconds = best_seconds(checkpointed, u0, k, n), best_seconds(stored, u0, k, n)
    print(f"loop of {n} steps, state of {options.size} floats")
    print(f"{'':>14} {'checkpointed':>14} {'store-all':>12} {'ratio':>7}")
    print(f"{'peak memory':>14} {memory[0] / 1e6:>11.2f} MB {memory[1] / 1e6:>9.2f} MB {memory[0] / memory[1]:>7.3f}")
    print(f"{'time':>14} {seconds[0]:>12.3f} s {seconds[1]:>10.3f} s {seconds[0] / seconds[1]:>7.2f}")
    print(f"gradients identical: {same}")


if __name__ == "__main__":
    main()
