"""Correctness: hand-written and s2s_ad gradients against central finite differences.

``python -m benchmarks --check`` runs every workload at its small size and
compares, component by component, both gradients with
``(f(x + h e_i) - f(x - h e_i)) / 2h``.  A gradient passes when its worst
component is within ``TOLERANCE`` of the difference quotient, relative to
the size of the gradient (at least 1).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Sequence

import numpy as np

import s2s_ad
from benchmarks.cases import Case

TOLERANCE = 1e-6
STEP = 1e-6


def max_abs_difference(first: Sequence[Any], second: Sequence[Any]) -> float:
    """The largest absolute difference between two tuples of gradients (same shapes required)."""
    if len(first) != len(second):
        raise ValueError(f"{len(first)} gradients against {len(second)}")
    worst = 0.0
    for a, b in zip(first, second):
        a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
        if a.shape != b.shape:
            raise ValueError(f"gradient shapes differ: {a.shape} against {b.shape}")
        worst = max(worst, float(np.max(np.abs(a - b))) if a.size else 0.0)
    return worst


def _with_value(args: tuple, position: int, value: Any) -> tuple:
    return args[:position] + (value,) + args[position + 1:]


def _partials(function: Callable[..., float], args: tuple, position: int) -> Any:
    """Central differences of ``function`` by every component of argument ``position``."""
    base = args[position]
    if np.ndim(base) == 0:
        step = STEP * max(1.0, abs(base))
        up = function(*_with_value(args, position, base + step))
        down = function(*_with_value(args, position, base - step))
        return (up - down) / (2.0 * step)
    result = np.zeros(np.shape(base))
    for index in np.ndindex(*np.shape(base)):
        step = STEP * max(1.0, abs(base[index]))
        moved = np.array(base, dtype=float)
        moved[index] = base[index] + step
        up = function(*_with_value(args, position, moved))
        moved[index] = base[index] - step
        down = function(*_with_value(args, position, moved))
        result[index] = (up - down) / (2.0 * step)
    return result


def finite_differences(case: Case, args: tuple) -> tuple:
    """The gradient of ``case.function`` by each ``wrt`` argument, by central differences."""
    return tuple(_partials(case.function, args, position) for position in case.argnums)


def relative_error(gradient: Sequence[Any], reference: Sequence[Any]) -> float:
    """Worst absolute difference, relative to the largest reference component (at least 1)."""
    scale = max([1.0] + [float(np.max(np.abs(r))) for r in reference if np.size(r)])
    return max_abs_difference(gradient, reference) / scale


@dataclass(frozen=True)
class CheckResult:
    """How far each gradient of one workload is from finite differences (relative error)."""

    name: str
    hand_error: float
    ours_error: float
    ours_vs_hand: float

    @property
    def ok(self) -> bool:
        return self.hand_error <= TOLERANCE and self.ours_error <= TOLERANCE


def _as_tuple(gradient: Any) -> tuple:
    return tuple(gradient) if isinstance(gradient, tuple) else (gradient,)


def check_case(case: Case) -> CheckResult:
    """Compare the hand-written gradient and s2s_ad's with finite differences, at the small size."""
    args = case.make_args(True)
    reference = finite_differences(case, args)
    hand = _as_tuple(case.hand_gradient(*args))
    ours = _as_tuple(s2s_ad.grad(case.function, wrt=case.wrt)(*args))
    return CheckResult(case.name, relative_error(hand, reference), relative_error(ours, reference),
                       max_abs_difference(ours, hand))


def run_checks(cases: Sequence[Case]) -> bool:
    """Check every case, print one line each, and return whether all passed."""
    print(f"finite-difference check (central, step {STEP:g} relative; pass if relative error <= {TOLERANCE:g})")
    print(f"{'workload':<14} {'hand vs FD':>11} {'s2s_ad vs FD':>13} {'s2s_ad vs hand':>15}  result")
    passed = True
    for case in cases:
        try:
            result = check_case(case)
        except Exception as exc:  # a crash is a failed check, reported with its cause
            print(f"{case.name:<14} {'':>11} {'':>13} {'':>15}  CRASH {type(exc).__name__}: {exc}")
            passed = False
            continue
        verdict = "ok" if result.ok else "FAIL"
        passed = passed and result.ok
        print(f"{case.name:<14} {result.hand_error:>11.1e} {result.ours_error:>13.1e} "
              f"{result.ours_vs_hand:>15.1e}  {verdict}")
    return passed
