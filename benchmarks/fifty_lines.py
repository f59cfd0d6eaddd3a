"""A 50-line function, for the first-call (transform) cost the benchmark reports.

Written as a person would write a small model: a discounted cash-flow
valuation with a loop, branches, ``math`` and NumPy calls, a helper, and a
local array filled element by element.  ``python -m benchmarks`` times
its first gradient call (parse, lower, analyse, generate, optimize, emit,
compile) against a cached one.
"""
from __future__ import annotations

import math

import numpy as np


def growth_factor(rate: float, years: float) -> float:
    """Continuous compounding over ``years``."""
    return math.exp(rate * years)


def valuation(rate: float, growth: float, margin: float, revenue: np.ndarray, years: int = 12) -> float:
    """Discounted value of a business whose revenue grows, with a fading margin and a terminal value."""
    n = revenue.shape[0]
    base = np.mean(revenue)
    spread = np.std(revenue) / base
    cash = np.zeros(years)
    level = base
    fade = 1.0
    for year in range(years):
        level = level * (1.0 + growth)
        if year >= n:
            fade = fade * 0.95
        else:
            level = 0.5 * level + 0.5 * revenue[year]
        profit = level * margin * fade
        tax = 0.25 * profit if profit > 0.0 else 0.0
        cash[year] = profit - tax
    discount = np.exp(-rate * np.arange(1, years + 1))
    present = np.sum(cash * discount)
    terminal_growth = min(growth, 0.02)
    last = cash[years - 1]
    terminal = last * (1.0 + terminal_growth) / (rate - terminal_growth)
    terminal_present = terminal / growth_factor(rate, years)
    risk = 1.0 + 0.5 * spread ** 2
    value = (present + terminal_present) / risk
    penalty = 0.0
    if value < 0.0:
        penalty = -value * 10.0
    smooth = math.log1p(math.exp(-abs(value) / 100.0))
    volatility = math.sqrt(spread ** 2 + 1e-12)
    score = value - penalty + smooth
    score = score * (1.0 - 0.1 * math.tanh(volatility))
    weights = revenue / np.sum(revenue)
    concentration = np.sum(weights ** 2)
    score = score / (1.0 + concentration)
    bonus = 0.0
    for k in range(n):
        if revenue[k] > base:
            bonus = bonus + 0.001 * (revenue[k] - base)
        else:
            bonus = bonus - 0.0005 * (base - revenue[k])
    score = score + bonus
    margin_check = max(margin, 0.05)
    score = score * margin_check / margin
    hedge = math.atan(rate * 10.0) / math.pi
    score = score * (1.0 - 0.05 * hedge)
    return score


def valuation_args() -> tuple:
    return 0.08, 0.03, 0.2, np.array([100.0, 110.0, 125.0, 118.0, 140.0, 150.0])
