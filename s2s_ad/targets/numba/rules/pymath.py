"""The Numba target's compiled versions of the ``math`` functions of ``templates/pymath.py`` that Numba
lacks: ``math.fmod``, ``math.remainder`` and (Python 3.11 on) ``math.cbrt``; and of its helpers
``digamma`` and ``trigamma`` (the derivatives of ``math.lgamma`` and ``math.gamma``, and theirs).

Input: Python floats or ints (Numba's ``Float`` and ``Integer`` types, bools excluded).  Output:
Python's float, computed as CPython computes it, and ``ValueError("math domain error")`` where Python
raises it (a zero divisor, an infinite dividend); compiled code that raises runs again as Python, so
the user meets Python's own error.  Anything else (arrays, complex numbers) runs as Python.

Each version must do what the Python function does for the types it accepts
(tests/targets/test_numba_math_rules.py compares the two); Numba is imported by no module here when loaded
(``numba.rules``).
"""
from __future__ import annotations

import math
from typing import Any

import numpy as np

from ....rules import compiled
from .template_modules import template

gamma_family = template("pymath")


def _numbers(types: Any, *values: Any) -> bool:
    """Every value a float or an int (not a bool: Python takes it, but no gradient passes through it)."""
    return all(isinstance(v, (types.Float, types.Integer)) and not isinstance(v, types.Boolean) for v in values)


@compiled(math.fmod)
def _fmod(types):
    """math.fmod(x, y): the remainder of x / y with x's sign, exact (LLVM's frem is C's fmod)."""
    def typing(x, y):
        if not _numbers(types, x, y):
            return None

        def fmod(x, y):
            a, b = float(x), float(y)
            if b == 0.0 and not np.isnan(a) or np.isinf(a) and not np.isnan(b):
                raise ValueError("math domain error")
            return np.fmod(a, b)
        return fmod
    return typing


@compiled(math.remainder)
def _remainder(types):
    """math.remainder(x, y): x - n y, n the integer nearest x / y (ties to even), exact: from the
    remainder of |x| by |y| (exact), the nearer of it and its complement to |y|, a tie settled by the
    parity of the quotient, and x's sign."""
    def typing(x, y):
        if not _numbers(types, x, y):
            return None

        def remainder(x, y):
            a, b = float(x), float(y)
            if np.isnan(a) or np.isnan(b):
                return a + b  # (NaN)
            if np.isinf(a) or b == 0.0:
                raise ValueError("math domain error")
            if np.isinf(b):
                return a
            size, by = abs(a), abs(b)
            left = np.fmod(size, by)
            complement = by - left
            if left < complement:
                nearest = left
            elif left > complement:
                nearest = -complement
            else:  # a tie: the quotient rounds to even (left - 2 * fmod((size - left) / 2, by) is 0 or -left)
                nearest = left - 2.0 * np.fmod(0.5 * (size - left), by)
            return math.copysign(1.0, a) * nearest
        return remainder
    return typing


if hasattr(math, "cbrt"):
    @compiled(math.cbrt)
    def _cbrt(types):
        """math.cbrt(x): the real cube root (NumPy's np.cbrt, which Numba compiles as C's cbrt, as CPython
        computes it)."""
        def typing(x):
            if not _numbers(types, x):
                return None
            return lambda x: np.cbrt(float(x))
        return typing


# -- the gamma family's derivatives ------------------------------------------------------------------
# The helpers' steps in their order (a reflection for a negative x, then the recurrence up to 10 and the
# asymptotic series), with the same libm functions CPython's math calls: the same numbers bit for bit.

@compiled(gamma_family.digamma)
def _digamma(types):
    """digamma(x) of a number: NaN at a pole (0 and the negative integers), else as the helper."""
    def typing(x):
        if not _numbers(types, x):
            return None

        def digamma(x):
            value = float(x)
            if value <= 0.0 and value == np.floor(value):
                return math.nan  # a pole
            reflection = 0.0
            if value < 0.0:
                reflection = math.pi / math.tan(math.pi * value)
                value = 1.0 - value
            shift = 0.0
            while value < 10.0:
                shift -= 1.0 / value
                value += 1.0
            inv = 1.0 / (value * value)
            series = inv * (1.0 / 12 - inv * (1.0 / 120 - inv * (1.0 / 252 - inv * (1.0 / 240 - inv * (1.0 / 132)))))
            psi = shift + math.log(value) - 0.5 / value - series
            return psi - reflection if float(x) < 0.0 else psi
        return digamma
    return typing


@compiled(gamma_family.trigamma)
def _trigamma(types):
    """trigamma(x) of a number: inf at a pole, else as the helper."""
    def typing(x):
        if not _numbers(types, x):
            return None

        def trigamma(x):
            value = float(x)
            if value <= 0.0 and value == np.floor(value):
                return math.inf
            reflection = 0.0
            if value < 0.0:
                root = math.pi / math.sin(math.pi * value)
                reflection = root * root
                value = 1.0 - value
            shift = 0.0
            while value < 10.0:
                shift += 1.0 / (value * value)
                value += 1.0
            inv = 1.0 / (value * value)
            series = (1.0 / value) * (1.0 + 1.0 / (2.0 * value)
                                      + inv * (1.0 / 6 - inv * (1.0 / 30 - inv * (1.0 / 42 - inv / 30))))
            psi1 = shift + series
            return -psi1 + reflection if float(x) < 0.0 else psi1
        return trigamma
    return typing
