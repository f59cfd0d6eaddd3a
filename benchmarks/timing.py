"""Wall-clock measurement: the minimum over repeats of the time per call.

Each repeat runs the call enough times to last at least ``min_seconds``
(calibrated once), so short calls are not dominated by the timer; the
minimum over repeats is the figure least disturbed by other processes.
The garbage collector stays on: the tapes that generated code builds are
part of its real cost.
"""
from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any, Callable

_MAX_CALLS_PER_REPEAT = 1_000_000


@dataclass(frozen=True)
class Budget:
    """How long one measurement runs: ``repeats`` repeats of at least ``min_seconds`` each."""

    min_seconds: float
    repeats: int


FULL = Budget(min_seconds=0.05, repeats=7)
QUICK = Budget(min_seconds=0.005, repeats=3)


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


def best_seconds(function: Callable[..., Any], args: tuple, budget: Budget) -> float:
    """Seconds per call of ``function(*args)``: the minimum over ``budget.repeats`` repeats."""
    number, elapsed = _calibrate(function, args, budget.min_seconds)
    best = elapsed / number
    for _ in range(budget.repeats - 1):
        best = min(best, _run(function, args, number) / number)
    return best


def first_call_seconds(function: Callable[..., Any], args: tuple) -> tuple[float, Any]:
    """The duration of one call, and its result (for a first call, which builds code)."""
    start = time.perf_counter()
    result = function(*args)
    return time.perf_counter() - start, result
