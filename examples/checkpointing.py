"""Checkpointing: the gradient of a 4,000-step simulation in a fraction of the memory.

A population spreads around a ring of 64 cells and grows logistically
(a discretised Fisher-KPP equation). The gradient of the final mean density
with respect to the starting densities and the growth rate needs, in its
reverse sweep, the state of every step. The plain loop keeps all 4,000 of
them on the tape. Writing

    for t in s2s_ad.checkpointed(range(n)):

instead keeps a snapshot every ceil(sqrt(n)) steps and recomputes each
segment when the reverse sweep reaches it. This example differentiates both
versions, measures peak memory (tracemalloc) and time, and checks that the
two gradients are identical, bit for bit. (Measured on 2026-11-26: 8% of
the peak memory with the default 4,000 steps, in about 10 s; 4% with
--steps 20000, in about a minute. The share falls as 1 / sqrt(steps).)

Run: python examples/checkpointing.py [--steps N]
"""
import argparse
import time
import tracemalloc

import numpy as np

import s2s_ad


def step(density, rate):
    """One time step: spread to both neighbours on the ring, grow towards 1."""
    spread = np.roll(density, 1) - 2.0 * density + np.roll(density, -1)
    return density + 0.01 * (0.5 * spread + rate * density * (1.0 - density))


def simulate_checkpointed(start, rate, steps):
    density = start
    for t in s2s_ad.checkpointed(range(steps)):
        density = step(density, rate)
    return np.mean(density)


def simulate(start, rate, steps):
    density = start
    for t in range(steps):
        density = step(density, rate)
    return np.mean(density)


def timed(function, *args):
    """What function(*args) returns, and the seconds it took."""
    begin = time.perf_counter()
    result = function(*args)
    return result, time.perf_counter() - begin


def peak_megabytes(function, *args):
    """Peak memory allocated by Python and NumPy while function(*args) runs."""
    tracemalloc.start()
    try:
        function(*args)
        return tracemalloc.get_traced_memory()[1] / 1e6
    finally:
        tracemalloc.stop()


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=4_000)
    options = parser.parse_args()

    start = 0.5 * np.exp(-np.linspace(-3, 3, 64) ** 2)
    rate, steps = 0.01, options.steps
    plain = s2s_ad.grad(simulate, wrt=("start", "rate"))
    checkpointed = s2s_ad.grad(simulate_checkpointed, wrt=("start", "rate"))

    plain(start, rate, 2), checkpointed(start, rate, 2)  # the first calls generate the code
    (d_start, d_rate), plain_time = timed(plain, start, rate, steps)
    (d_start_ckpt, d_rate_ckpt), checkpointed_time = timed(checkpointed, start, rate, steps)
    times = plain_time, checkpointed_time
    identical = np.array_equal(d_start, d_start_ckpt) and d_rate == d_rate_ckpt
    print(f"{steps} steps of a ring of {len(start)} cells; mean density {simulate(start, rate, steps):.6f}")
    print(f"d mean / d rate = {d_rate:.6f} (plain), {d_rate_ckpt:.6f} (checkpointed)")

    memory = peak_megabytes(plain, start, rate, steps), peak_megabytes(checkpointed, start, rate, steps)
    print(f"{'':>12} {'plain':>10} {'checkpointed':>13} {'ratio':>7}")
    print(f"{'peak memory':>12} {memory[0]:>7.2f} MB {memory[1]:>10.2f} MB {memory[1] / memory[0]:>7.3f}")
    print(f"{'time':>12} {times[0]:>8.2f} s {times[1]:>11.2f} s {times[1] / times[0]:>7.2f}")
    print(f"memory ratio (checkpointed / plain): {memory[1] / memory[0]:.3f}")
    print(f"gradients identical: {identical}")


if __name__ == "__main__":
    main()
