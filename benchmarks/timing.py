"""Wall-clock measurement: the minimum over repeats of the time per call.

Each repeat runs the call enough times to last at least ``min_seconds``
(calibrated once), so short calls are not dominated by the timer; the
minimum over repeats is the figure least disturbed by other processes.
Calls compared with each other take their repeats in turn (A B C A B C ...),
so that a slow spell of the machine (or of the memory allocator's state)
falls on all of them alike.  The garbage collector stays on: the tapes that
generated code builds are part of its real cost.
"""
from __future__ import annotations

import ctypes
import ctypes.util
import time
from dataclasses import dataclass
from typing import Any, Callable, Optional

_MAX_CALLS_PER_REPEAT = 1_000_000


@dataclass(frozen=True)
class Budget:
    """How long one measurement runs: ``repeats`` repeats of at least ``min_seconds`` each.
    ``slowest_call``: a peer whose first call takes longer is left out (None: none is)."""

    min_seconds: float
    repeats: int
    slowest_call: Optional[float] = None


FULL = Budget(min_seconds=0.05, repeats=7)
QUICK = Budget(min_seconds=0.005, repeats=3, slowest_call=3.0)  # plain JAX: 3 to 5 s a call on poly_loop, 20 s on rk4


def steady_allocator() -> bool:
    """Have glibc's malloc serve arrays up to 32 MiB from its heap and keep freed memory.

    By default glibc maps each large block (over 128 KiB at first) afresh and
    page-faults it in, and moves that threshold as blocks are freed: whether a
    512x100 array costs 50 us of page faults or nothing then depends on the
    process's history, which made ratios jump by 2 to 10 times between runs.
    Returns False where this is not glibc (nothing is changed there).
    """
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c"))
        m_trim_threshold, m_mmap_threshold = -1, -3  # from glibc's malloc.h
        return bool(libc.mallopt(m_mmap_threshold, 32 << 20)) and bool(libc.mallopt(m_trim_threshold, 1 << 30))
    except (OSError, AttributeError, TypeError):
        return False


def _run(function: Callable[..., Any], args: tuple, number: int) -> float:
    start = time.perf_counter()
    for _ in range(number):
        function(*args)
    return time.perf_counter() - start


def _calibrate(function: Callable[..., Any], args: tuple, min_seconds: float) -> tuple[int, float]:
    """The number of calls that lasts at least ``min_seconds``, and how long they took."""
    number = 1
    while True:
        elapsed = _run(function, args, number)
        if elapsed >= min_seconds or number >= _MAX_CALLS_PER_REPEAT:
            return number, elapsed
        guess = int(number * 1.2 * min_seconds / max(elapsed, 1e-9))
        number = min(max(2 * number, guess), _MAX_CALLS_PER_REPEAT)


def best_seconds_each(calls: dict[str, tuple[Callable[..., Any], tuple]], budget: Budget) -> dict[str, float]:
    """Seconds per call of each ``name: (function, args)``: the minimum over ``budget.repeats``
    repeats, the calls taking their repeats in turn."""
    numbers, best = {}, {}
    for name, (function, args) in calls.items():
        numbers[name], elapsed = _calibrate(function, args, budget.min_seconds)
        best[name] = elapsed / numbers[name]
    for _ in range(budget.repeats - 1):
        for name, (function, args) in calls.items():
            best[name] = min(best[name], _run(function, args, numbers[name]) / numbers[name])
    return best


def first_call_seconds(function: Callable[..., Any], args: tuple) -> tuple[float, Any]:
    """The duration of one call, and its result (for a first call, which builds code)."""
    start = time.perf_counter()
    result = function(*args)
    return time.perf_counter() - start, result
