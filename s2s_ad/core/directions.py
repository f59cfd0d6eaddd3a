"""The helpers vector forward mode's code calls (``ad/vector``): what a one-direction helper does, done for
each direction of a tangent whose leading axis holds the directions.

Input: ``tangents`` shaped ``(p,) + shape`` (a number's: ``(p,)``) and the primal values the one-direction
helper takes.  Output: what that helper gives for each direction, stacked on the leading axis.  These are
the Python versions (NumPy's own calls over the other axes); the Numba target compiles its own beside it
(``targets/numba/runtime.py``), registered on these very functions.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from .runtime import unbroadcast_to


def direction_sum(tangents: Any) -> Any:
    """The sum of each direction's tangent (vector forward mode: the directions on the leading axis,
    ``ad/vector``): ``np.sum`` over every other axis, a vector of one number per direction."""
    return np.sum(tangents, axis=tuple(range(1, np.ndim(tangents))))


def direction_mean(tangents: Any) -> Any:
    """The mean of each direction's tangent (``direction_sum``'s, divided by one direction's size)."""
    return np.mean(tangents, axis=tuple(range(1, np.ndim(tangents))))


def direction_copy(tangents: Any, like: Any) -> np.ndarray:
    """``writable_copy`` of each direction's tangent: a fresh float array shaped ``(directions,) +
    np.shape(like)`` holding ``tangents`` (their axes after the first aligned with ``like``'s)."""
    copy = np.empty((np.shape(tangents)[0],) + np.shape(like), dtype=np.result_type(tangents, 1.0))
    copy[...] = tangents
    return copy


def direction_kept(tangents: Any, like: Any) -> np.ndarray:
    """``direction_copy`` of tangents just computed by arithmetic (a new array no name holds): the array
    itself where it already has the copy's shape and a float dtype, as a copy would be (a compiler's
    version copies: its branches must give one type)."""
    if type(tangents) is np.ndarray and tangents.shape[1:] == np.shape(like) and tangents.dtype.kind == "f" \
            and tangents.dtype == np.result_type(tangents, 1.0):
        return tangents
    return direction_copy(tangents, like)


def direction_reshape(tangents: Any, shape: Any) -> np.ndarray:
    """``np.reshape`` of each direction's tangent (the directions on the leading axis) to ``shape``."""
    return np.reshape(tangents, (np.shape(tangents)[0],) + tuple(shape))


def direction_unbroadcast(tangents: Any, like: Any) -> Any:
    """``unbroadcast`` of each direction's tangent (of ``like``'s rank at least) to ``like``'s shape: itself
    where its rows are so shaped, else summed over the axes NumPy broadcast (spread first where smaller)."""
    shape = np.shape(like)
    if np.shape(tangents)[1:] == shape:
        return tangents
    return np.stack([unbroadcast_to(t, shape) for t in tangents]) if len(tangents) else \
        np.zeros((0,) + shape)


def direction_trace(tangents: Any) -> Any:
    """``np.trace`` of each direction's tangent, a matrix (the directions on the leading axis)."""
    return np.trace(tangents, axis1=1, axis2=2)


def direction_cumsum(tangents: Any) -> Any:
    """``np.cumsum`` of each direction's tangent, a vector."""
    return np.cumsum(tangents, axis=1)


def direction_matmul(tangents: Any, b: Any) -> Any:
    """``t @ b`` for each direction's tangent ``t`` (of two axes or more; ``b`` a vector or matrix)."""
    return np.matmul(tangents, b)


def matmul_direction(a: Any, tangents: Any) -> Any:
    """``a @ t`` for each direction's tangent ``t`` (of two axes or more; ``a`` a vector or matrix)."""
    return np.matmul(a, tangents)
