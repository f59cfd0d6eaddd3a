"""Compiled writes of a slice: the Numba target's ``runtime.write_into`` and ``runtime.add_into``.

Input: calls ``write_into(array, index, value)`` and ``add_into(array, index, value)`` in generated
code (the pass ``slice_writes_by_call``, which the Numba target names).  Output, once ``register``
ran: their Numba implementations, each the store ``array[index] = value`` (``+=``) with NumPy's
numbers: where ``array`` is an array of floats, ``index`` basic (slices, integers, ``None``) and
``value`` an array of real numbers of no more axes than the view, the view is written by loops
from ``value`` broadcast to its shape, through a copy where the two share memory (NumPy reads the
whole value before it writes); any other call is Numba's own store.

Why: Numba's own store of an array into a slice compiles a call that formats both shapes into the
message of a mismatch's ``ValueError``, seconds of compiling for a message (``passes/slice_writes``).
Here a mismatch raises ``np.broadcast_to``'s ``ValueError``; the compiled code that raises runs again
as Python, which raises NumPy's.
"""
from __future__ import annotations

from typing import Any, Callable, Optional

import numpy as np

from ...core import runtime

# (the loops index within the view's shape: no bounds checks)
_OPTIONS: Any = dict(error_model="python", boundscheck=False)


def register(types: Any) -> None:
    """Declare the two implementations to Numba (``runtime._register`` calls it once)."""
    from numba.extending import overload, register_jitable

    unaliased = register_jitable(_unaliased(register_jitable(_extent)))

    def typed(adding: bool) -> Callable:
        def implementation(array, index, value):  # (no annotations: Numba compares them with its own)
            view_rank = _view_rank(types, array, index)
            if view_rank is None or not isinstance(value, types.Array) or value.ndim > view_rank or \
                    not isinstance(value.dtype, (types.Float, types.Integer)):
                return _numbas_own(adding)
            return _by_loops(view_rank, adding, unaliased)
        return implementation

    overload(runtime.write_into, jit_options=_OPTIONS)(typed(adding=False))
    overload(runtime.add_into, jit_options=_OPTIONS)(typed(adding=True))


def _view_rank(types: Any, array: Any, index: Any) -> Optional[int]:
    """The rank of ``array[index]`` where it is a view of an array of floats that a basic index with a
    slice picks, else None."""
    if not isinstance(array, types.Array) or not isinstance(array.dtype, types.Float) or not array.mutable:
        return None
    parts = tuple(index) if isinstance(index, types.BaseTuple) else (index,)
    if not any(isinstance(p, types.SliceType) for p in parts) or \
            not all(isinstance(p, (types.SliceType, types.Integer, types.NoneType)) for p in parts):
        return None
    picked = sum(isinstance(p, types.Integer) for p in parts)
    added = sum(isinstance(p, types.NoneType) for p in parts)
    return array.ndim - picked + added if len(parts) - added <= array.ndim else None


def _numbas_own(adding: bool) -> Callable:
    if adding:
        def added(array, index, value):
            array[index] += value
        return added

    def written(array, index, value):
        array[index] = value
    return written


def _by_loops(rank: int, adding: bool, unaliased: Callable) -> Callable:
    """The write of ``value`` into the view ``array[index]`` of ``rank`` axes, element by element."""
    if rank == 1:
        if adding:
            def added_1(array, index, value):
                view = array[index]
                source = unaliased(view, value)
                for i in range(view.shape[0]):
                    view[i] += source[i]
            return added_1

        def written_1(array, index, value):
            view = array[index]
            source = unaliased(view, value)
            for i in range(view.shape[0]):
                view[i] = source[i]
        return written_1
    if rank == 2:
        if adding:
            def added_2(array, index, value):
                view = array[index]
                source = unaliased(view, value)
                for i in range(view.shape[0]):
                    for j in range(view.shape[1]):
                        view[i, j] += source[i, j]
            return added_2

        def written_2(array, index, value):
            view = array[index]
            source = unaliased(view, value)
            for i in range(view.shape[0]):
                for j in range(view.shape[1]):
                    view[i, j] = source[i, j]
        return written_2
    if adding:
        def added_n(array, index, value):
            view = array[index]
            source = unaliased(view, value)
            for at in np.ndindex(view.shape):
                view[at] += source[at]
        return added_n

    def written_n(array, index, value):
        view = array[index]
        source = unaliased(view, value)
        for at in np.ndindex(view.shape):
            view[at] = source[at]
    return written_n


def _unaliased(extent: Callable) -> Callable:
    def unaliased(view, value):
        """``value`` broadcast to ``view``'s shape, copied first where its memory meets the view's."""
        low, high = extent(view)
        value_low, value_high = extent(value)
        if value_low < high and low < value_high:
            return np.broadcast_to(value.copy(), view.shape)
        return np.broadcast_to(value, view.shape)
    return unaliased


def _extent(a):
    """The first byte of ``a``'s elements and the byte after its last (0, 0 where it has none)."""
    low = np.int64(a.ctypes.data)
    high = low
    for k in range(a.ndim):
        if a.shape[k] == 0:
            return np.int64(0), np.int64(0)
        reach = (a.shape[k] - 1) * a.strides[k]
        if reach > 0:
            high += reach
        else:
            low += reach
    return low, high + a.itemsize
