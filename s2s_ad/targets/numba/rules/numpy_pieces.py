"""The Numba target's compiled versions of rules that move elements about, from ``templates/numpy_shape.py``,
``numpy_fft.py`` and ``numpy_conversion.py``: ``take_along_axis_grad`` (np.take_along_axis's adjoint, and so
np.sort's along an axis of None), ``append_grad`` (np.append's), np.fft.fftshift and ifftshift (Numba has
neither), np.asanyarray (an ndarray is its own), and ``split_piece`` (where a piece of np.split's family
lies in the array split: a write through the piece is a store there).

Input: float64 adjoints, arrays of any rank, integer index arrays, axes as ints (a tuple of ints for the
shifts) or None.  Output: the Python helper's numbers and shape: a new array, or for ``append_grad`` along no
axis, as the helper, a view of the adjoint (its rule declares it may be one: generated code copies it
before writing into it); for a number appended, or appended to, its adjoint as a number (the
helper's is a 0-d array holding it).  A shape the helper would broadcast (an adjoint of length 1
along an axis) raises ValueError here, and compiled code that raises runs again as Python; an index out
of range raises IndexError, as NumPy does.  Other types run as Python.

Each version must do what the Python function does for the types it accepts
(tests/targets/test_numba_pieces.py compares the two); Numba is imported by no module here when loaded
(``numba.rules``).
"""
from __future__ import annotations

import functools
from typing import Any

import numpy as np

from ....core import runtime as core_runtime
from ....rules import compiled
from ..kernels import axis_position, tuple_setitem as shared_tuple_setitem, written_out
from .argument_types import axis_form, is_int, is_none, known
from .template_modules import template

shape = template("numpy_shape")


def _floats(types: Any, value: Any) -> bool:
    return isinstance(value, types.Array) and value.dtype == types.float64


def _integers(types: Any, value: Any) -> bool:
    return isinstance(value, types.Array) and isinstance(value.dtype, types.Integer)


@compiled(shape.take_along_axis_grad)
def _take_along_axis_grad(types):
    """take_along_axis_grad: zeros of ``arr``'s shape, each adjoint added where its index took it from
    (repeats add up); along an axis, ``indices`` and ``arr`` broadcast against each other on the other
    axes (either may have length 1 there), as NumPy reads them."""
    axis_in = axis_position()
    tuple_setitem = shared_tuple_setitem()

    def typing(grad, arr, indices, axis):
        if not _floats(types, grad) or not isinstance(arr, types.Array) or arr.ndim == 0 \
                or not _integers(types, indices):
            return None
        kind = axis_form(types, axis)
        if kind == "none" and indices.ndim == 1 and grad.ndim == 1:
            return _flat_scatter
        if kind != "int" or not grad.ndim == arr.ndim == indices.ndim:
            return None
        ndim = arr.ndim

        def along(grad, arr, indices, axis):
            at = axis_in(axis, ndim)
            for k in range(ndim):
                a, i = arr.shape[k], indices.shape[k]
                spread = i if k == at or a == 1 else a
                if k != at and a != i and a != 1 and i != 1 or grad.shape[k] != spread:
                    raise ValueError("take_along_axis_grad: shapes the compiled version does not broadcast")
            n = arr.shape[at]
            out = np.zeros(arr.shape)
            for p in np.ndindex(grad.shape):
                q = p
                r = p
                for k in range(ndim):
                    if indices.shape[k] == 1:
                        q = tuple_setitem(q, k, 0)
                    if arr.shape[k] == 1:
                        r = tuple_setitem(r, k, 0)
                j = indices[q]
                if j < -n or j >= n:
                    raise IndexError("index out of bounds")
                out[tuple_setitem(r, at, j + n if j < 0 else j)] += grad[p]
            return out
        return along
    return typing


def _flat_scatter(grad, arr, indices, axis):
    """Along no axis: ``arr`` flattened, each adjoint added at its flat index."""
    n = arr.size
    if grad.size != indices.size:
        raise ValueError("take_along_axis_grad: the adjoint is not of the indices' shape")
    out = np.zeros(n)
    for k in range(indices.size):
        j = indices[k]
        if j < -n or j >= n:
            raise IndexError("index out of bounds")
        out[j + n if j < 0 else j] += grad[k]
    return out.reshape(arr.shape)


@compiled(shape.append_grad)
def _append_grad(types):
    """append_grad: the part of np.append's adjoint that is ``arr``'s (``which`` 0) or ``values``'s (1),
    shaped as that one; along no axis the flat adjoint's first ``arr.size`` elements and the rest, along
    an axis the first ``arr.shape[axis]`` positions there and the rest."""
    axis_in = axis_position()
    tuple_setitem = shared_tuple_setitem()

    def typing(grad, arr, values, axis, which):
        part = known(types, which, int)
        if part not in (0, 1) or not _floats(types, grad):
            return None
        target = arr if part == 0 else values
        kind = axis_form(types, axis)
        if isinstance(target, (types.Float, types.Integer)) and kind == "none" and grad.ndim == 1:
            return _flat_number_first if part == 0 else _flat_number_last  # (a 0-d array in Python: one number)
        if not isinstance(target, types.Array) or target.ndim == 0:
            return None
        if kind == "none" and grad.ndim == 1:
            return _flat_first if part == 0 else _flat_rest
        if kind != "int" or not isinstance(arr, types.Array) or not isinstance(values, types.Array) \
                or not grad.ndim == arr.ndim == values.ndim:
            return None
        ndim = grad.ndim

        def along(grad, arr, values, axis, which):
            at = axis_in(axis, ndim)
            if grad.shape[at] != arr.shape[at] + values.shape[at]:
                raise ValueError("append_grad: the adjoint is not of the appended shape")
            wanted = grad.shape
            wanted = tuple_setitem(wanted, at, arr.shape[at] if part == 0 else values.shape[at])
            offset = 0 if part == 0 else arr.shape[at]
            out = np.empty(wanted)
            for p in np.ndindex(wanted):
                out[p] = grad[tuple_setitem(p, at, p[at] + offset)]
            return out
        return along
    return typing


def _flat_first(grad, arr, values, axis, which):
    """Along no axis, ``arr``'s part: the first ``arr.size`` elements, in its shape."""
    if grad.size != arr.size + np.asarray(values).size:
        raise ValueError("append_grad: the adjoint is not of the appended shape")
    return np.ascontiguousarray(grad[:arr.size]).reshape(arr.shape)


def _flat_rest(grad, arr, values, axis, which):
    """Along no axis, ``values``'s part: the elements after ``arr``'s, in its shape."""
    n = np.asarray(arr).size
    if grad.size != n + values.size:
        raise ValueError("append_grad: the adjoint is not of the appended shape")
    return np.ascontiguousarray(grad[n:]).reshape(values.shape)


def _flat_number_first(grad, arr, values, axis, which):
    """Along no axis, the adjoint of a number appended to: the first element."""
    if grad.size != 1 + np.asarray(values).size:
        raise ValueError("append_grad: the adjoint is not of the appended shape")
    return grad[0]


def _flat_number_last(grad, arr, values, axis, which):
    """Along no axis, the adjoint of a number appended: the last element."""
    if grad.size != np.asarray(arr).size + 1:
        raise ValueError("append_grad: the adjoint is not of the appended shape")
    return grad[grad.size - 1]


def _shifts(types: Any, x: Any, axes: Any) -> bool:
    """np.fft's shifts compile for an array of rank 1 or more, ``axes`` None, an int or a tuple of ints."""
    return isinstance(x, types.Array) and x.ndim >= 1 and (
        is_none(types, axes) or is_int(types, axes)
        or isinstance(axes, types.UniTuple) and isinstance(axes.dtype, types.Integer))


def _shift_factory(inverse: bool) -> Any:
    """np.fft.fftshift (``inverse`` False: each axis rolled by half its length, rounded down) or ifftshift
    (back by as much): ``out[i] = x[(i - shift) % n]`` along each axis shifted, as np.roll."""
    def factory(types):
        axis_in = axis_position()
        tuple_setitem = shared_tuple_setitem()

        def typing(x, axes=None):
            if not _shifts(types, x, axes):
                return None
            ndim = x.ndim
            every = is_none(types, axes)
            one = is_int(types, axes)

            def shifted(x, axes=None):
                rolls = np.zeros(ndim, np.int64)
                if every:
                    for k in range(ndim):
                        rolls[k] = x.shape[k] // 2
                elif one:
                    k = axis_in(axes, ndim)
                    rolls[k] += x.shape[k] // 2
                else:
                    for axis in axes:
                        k = axis_in(axis, ndim)
                        rolls[k] += x.shape[k] // 2
                out = np.empty(x.shape, x.dtype)
                for p in np.ndindex(x.shape):
                    source = p
                    for k in range(ndim):
                        n = x.shape[k]
                        step = -rolls[k] if inverse else rolls[k]
                        source = tuple_setitem(source, k, (p[k] - step) % n)
                    out[p] = x[source]
                return out
            return shifted
        return typing
    return factory


compiled(np.fft.fftshift)(_shift_factory(inverse=False))
compiled(np.fft.ifftshift)(_shift_factory(inverse=True))


@compiled(np.asanyarray)
def _asanyarray(types):
    """np.asanyarray of an array (the array itself) or a number (a 0-d array), without ``dtype=``."""
    def typing(a, dtype=None, order=None):
        if not is_none(types, dtype) or not is_none(types, order):
            return None
        if isinstance(a, types.Array):
            return lambda a, dtype=None, order=None: a
        if isinstance(a, (types.Float, types.Integer)):
            return lambda a, dtype=None, order=None: np.asarray(a)
        return None
    return typing


# -- split_piece: where piece k of np.split's family lies in the array split ------------------------------

@compiled(core_runtime.split_piece)
def _split_piece(types):
    """split_piece(shape, how, sections, axis, k): the basic index of piece ``k`` of ``np.<how>(a, sections,
    axis)`` (a write through a piece is a store into ``a`` there), NumPy's bounds: a count gives the first
    ``n % count`` pieces one item more, indices cut where Python's slices would.  ``how`` and ``axis`` are
    the constants the generated code writes, so the index's count of slices is known when compiling; a
    count of no piece raises (the call runs again as Python, as NumPy's error)."""
    def typing(shape, how, sections, axis, k):
        if not isinstance(shape, types.UniTuple) or not isinstance(shape.dtype, types.Integer) \
                or not isinstance(how, types.StringLiteral) or not isinstance(k, types.Integer):
            return None
        at = _split_axis(types, how.literal_value, len(shape), axis)
        if at is None:
            return None
        if isinstance(sections, types.Integer) and not isinstance(sections, types.Boolean):
            return _piece_at(at, _pieces_helpers()[0])
        if isinstance(sections, (types.List, types.Array)) and getattr(sections, "ndim", 1) == 1 and \
                isinstance(sections.dtype, types.Integer) and not isinstance(sections.dtype, types.Boolean):
            return _piece_at(at, _pieces_helpers()[1])
        if isinstance(sections, types.BaseTuple) and len(sections) > 0 and all(
                isinstance(t, types.Integer) and not isinstance(t, types.Boolean) for t in sections.types):
            return _piece_at(at, _pieces_helpers()[1], len(sections))  # ((2, -1): ints of two literal types)
        return None
    return typing


def _split_axis(types: Any, how: str, ndim: int, axis: Any) -> Any:
    """The axis ``np.<how>`` splits an array of ``ndim`` axes along, as ``split_piece`` reads it; None where
    not known when compiling."""
    if ndim == 0:
        return None
    if how == "hsplit":
        return 1 if ndim > 1 else 0
    if how == "vsplit":
        return 0
    if how == "dsplit":
        return 2 if ndim > 2 else None
    if how not in ("split", "array_split") or not isinstance(axis, types.IntegerLiteral):
        return None
    return axis.literal_value % ndim


@functools.cache
def _pieces_helpers() -> Any:
    """``counted(length, count, k)`` and ``cut(length, cuts, k)``: the bounds of piece ``k`` of an axis of
    ``length`` split into ``count`` pieces, or cut at the indices ``cuts`` (compiled, built once)."""
    from numba.extending import register_jitable

    @register_jitable
    def counted(length, count, k):
        if count <= 0:
            raise ValueError("number sections must be larger than 0.")
        each, extra = length // count, length % count
        k = k % count
        start = k * each + min(k, extra)
        return start, start + each + (1 if k < extra else 0)

    @register_jitable
    def cut(length, cuts, k):
        n = len(cuts) + 1
        k = k % n
        start = 0 if k == 0 else cuts[k - 1]
        return start, length if k == n - 1 else cuts[k]

    return counted, cut


@functools.cache
def _piece_at(at: int, bounds: Any, items: int = 0) -> Any:
    """The compiled ``split_piece`` for an axis ``at``: ``at`` whole slices, then the piece's (written out
    for ``at``: the index's type is a tuple of that length); the cuts of a tuple of ``items`` ints read
    into an array first (its items may be of different literal types, which no loop indexes)."""
    from numba.extending import register_jitable
    whole = "slice(None), " * at
    cuts = f"np.array([{', '.join(f'sections[{i}]' for i in range(items))}], np.int64)" if items else "sections"
    source = ("def piece(shape, how, sections, axis, k):\n"
              f"    start, stop = bounds(shape[{at}], {cuts}, k)\n"
              f"    return ({whole}slice(start, stop),)\n")
    return register_jitable(written_out(source, "piece", f"split_piece {at}", bounds=bounds))
