"""Shared test oracles: central finite differences."""
from __future__ import annotations

from typing import Any, Callable, Sequence

import numpy as np


def numeric_grad(f: Callable, args: Sequence[Any], i: int, eps: float = 1e-6) -> Any:
    """Central finite difference of scalar ``f(*args)`` by argument ``i``.

    Returns a float for a number argument, an array of the argument's shape
    for an array argument.
    """
    args = list(args)
    x = args[i]
    if np.ndim(x) == 0 and not isinstance(x, np.ndarray):
        def at(value: float) -> float:
            args[i] = value
            return float(f(*args))
        return (at(x + eps) - at(x - eps)) / (2 * eps)
    x = np.array(x, dtype=float)
    grad = np.zeros_like(x)
    for index in np.ndindex(x.shape):
        plus, minus = x.copy(), x.copy()
        plus[index] += eps
        minus[index] -= eps
        args[i] = plus
        f_plus = float(f(*args))
        args[i] = minus
        grad[index] = (f_plus - float(f(*args))) / (2 * eps)
    return grad
