"""The Numba target's compiled versions of ``templates/numpy_signal.py``'s helpers of np.interp's
adjoint: ``interp_segments`` (the segment each point is read on), ``gather`` (``np.take`` of a 1-d
array) and ``scatter`` (its transpose: ``np.add.at`` into zeros).

Each version must do what the Python helper does for the types it accepts
(tests/targets/test_numba_rule_coverage.py compares the two); Numba is imported by no module here when loaded
(``numba.rules``).
"""
from __future__ import annotations

from typing import Any

import numpy as np

from ....rules import compiled
from .template_modules import template

signal = template("numpy_signal")


def _real(types: Any, value: Any) -> bool:
    return isinstance(value, (types.Float, types.Integer)) and not isinstance(value, types.Boolean)


def _vector(types: Any, value: Any) -> bool:
    return isinstance(value, types.Array) and value.ndim == 1 and _real(types, value.dtype)


def _indexes(types: Any, index: Any) -> bool:
    return isinstance(index, types.Integer) and not isinstance(index, types.Boolean) or \
        isinstance(index, types.Array) and isinstance(index.dtype, types.Integer) and \
        not isinstance(index.dtype, types.Boolean)


@compiled(signal.interp_segments)
def _interp_segments(types):
    """interp_segments: np.searchsorted(xp, x, side="right") clipped to [1, max(len(xp) - 1, 1)], minus
    one; an int for a number ``x``, an array of intp shaped like ``x`` for an array."""
    def typing(x, xp):
        if not _vector(types, xp):
            return None
        if _real(types, x):
            def one(x, xp):
                last = max(xp.shape[0] - 1, 1)
                return min(max(np.searchsorted(xp, x, side="right"), 1), last) - 1
            return one
        if not (isinstance(x, types.Array) and _real(types, x.dtype)):
            return None

        def each(x, xp):
            last = max(xp.shape[0] - 1, 1)
            found = np.searchsorted(xp, np.ascontiguousarray(x).reshape(-1), side="right")
            out = np.empty(found.size, np.intp)
            for i in range(found.size):
                out[i] = min(max(found[i], 1), last) - 1
            return out.reshape(x.shape)
        return each
    return typing


@compiled(signal.gather)
def _gather(types):
    """gather: ``np.take(values, index)`` of a 1-d array (Numba's np.take: an element, or an array
    shaped like ``index``)."""
    def typing(values, index):
        if _vector(types, values) and _indexes(types, index):
            return lambda values, index: np.take(values, index)
        return None
    return typing


@compiled(signal.scatter)
def _scatter(types):
    """scatter: ``grad`` (broadcast to ``index``'s shape) added into zeros shaped like the 1-d ``like``
    at the positions ``index``, in order (repeats add up; a negative index counts from the end)."""
    def typing(grad, index, like):
        if not _vector(types, like) or not _indexes(types, index):
            return None
        number = _real(types, grad)
        if not number and not (isinstance(grad, types.Array) and grad.dtype == types.float64):
            return None
        if isinstance(index, types.Integer):
            if number:
                def at_one(grad, index, like):
                    total = np.zeros(like.shape[0])
                    total[index] += grad
                    return total
                return at_one
            if grad.ndim != 0:
                return None  # (an array broadcast to one position: not compiled)

            def at_one_of_array(grad, index, like):
                total = np.zeros(like.shape[0])
                total[index] += grad[()]
                return total
            return at_one_of_array

        def added(grad, index, like):
            total = np.zeros(like.shape[0])
            spread = np.broadcast_to(np.asarray(grad, dtype=np.float64), index.shape)
            positions = np.ascontiguousarray(index).reshape(-1)
            values = np.ascontiguousarray(spread).reshape(-1)
            for i in range(positions.size):
                total[positions[i]] += values[i]
            return total
        return added
    return typing
