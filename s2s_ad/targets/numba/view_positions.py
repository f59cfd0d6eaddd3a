"""Compiled versions of the runtime's view retaking (``core.runtime.view_positions`` and its kin).

Input: Numba's types of the arguments of ``view_positions``, ``retaken_view``, ``positions_grad``
and ``stale_grad``, as generated code calls them where a view is read after a write into its array
and no chain of steps takes it again (``lowering.lower_views.ViewRetaking.by_positions``).  Output:
implementations for ``numba.extending.overload`` that compute what the Python versions compute:
positions found from the arrays' addresses, -1 for one number.  An array that is no view of the
array raises (the call then runs again as Python, whose ``view_positions`` refuses it naming the
user's line); a container is not typed here (the overload declines: the code runs as Python).
As in ``numba.runtime``, the typing functions and their implementations are not annotated (an
implementation must have its typing function's signature; pyproject.toml's mypy overrides).
"""
from __future__ import annotations

from typing import Any, Callable

import numpy as np

from ...core import runtime


def _is_number(t: Any, types: Any) -> bool:
    return isinstance(t, (types.Float, types.Integer, types.Boolean))


def register(overload: Callable, types: Any) -> None:
    """Register the four implementations with Numba (``overload``: numba's, with the runtime's options)."""

    def view_positions(view, base, name, filename, line):
        if _is_number(view, types):  # one number read from the array: a copy, never a view
            return lambda view, base, name, filename, line: np.full((), -1, np.intp)
        if not (isinstance(view, types.Array) and isinstance(base, types.Array)):
            return None
        if view.dtype != base.dtype:
            return None  # (no view of base: Python's version refuses it, naming the line)

        def positions(view, base, name, filename, line):
            out = np.zeros(view.shape, np.intp)
            if view.size == 0:
                return out
            found = np.empty(base.size, np.int64)
            k = 0
            for index in np.ndindex(base.shape):
                address = base.ctypes.data
                for axis in range(base.ndim):
                    address += index[axis] * base.strides[axis]
                found[k] = address
                k += 1
            order = np.argsort(found, kind="mergesort")
            ordered = found[order]
            flat = out.reshape(-1)
            k = 0
            for index in np.ndindex(view.shape):
                address = view.ctypes.data
                for axis in range(view.ndim):
                    address += index[axis] * view.strides[axis]
                at = np.searchsorted(ordered, address)
                if at >= ordered.size or ordered[at] != address:  # (run again as Python, which names the line)
                    raise ValueError("a value read after its array was written is not a view of it here")
                flat[k] = order[at]
                k += 1
            return out
        return positions

    def retaken_view(base, stale, positions):
        if _is_number(stale, types):
            return lambda base, stale, positions: stale
        if not (isinstance(stale, types.Array) and isinstance(base, types.Array)):
            return None

        def taken(base, stale, positions):
            if positions.size == 0 or positions.reshape(-1)[0] < 0:
                return stale.copy()  # (empty: one type for both paths, an array of the view's shape)
            return np.take(base, positions)
        return taken

    def positions_grad(grad, positions, base):
        if not (isinstance(base, types.Array) and (isinstance(grad, types.Array) or _is_number(grad, types))):
            return None

        def scattered(grad, positions, base):
            out = np.zeros(base.shape)
            if positions.size == 0 or positions.reshape(-1)[0] < 0:
                return out
            flat, where, values = out.reshape(-1), positions.reshape(-1), np.asarray(grad).reshape(-1)
            for k in range(where.size):
                flat[where[k]] += values[k]
            return out
        return scattered

    def stale_grad(grad, positions):
        if _is_number(grad, types):
            return lambda grad, positions: grad if positions.size == 0 or positions.reshape(-1)[0] < 0 else 0.0
        if not isinstance(grad, types.Array):
            return None

        def kept(grad, positions):
            if positions.size == 0 or positions.reshape(-1)[0] < 0:
                return grad.copy()
            return np.zeros(grad.shape)
        return kept

    overload(runtime.view_positions)(view_positions)
    overload(runtime.retaken_view)(retaken_view)
    overload(runtime.positions_grad)(positions_grad)
    overload(runtime.stale_grad)(stale_grad)
