"""The Numba target's compiled versions of ``templates/numpy_shape.py``'s functions and helpers: np.pad
and ``pad_grad`` (the modes "constant" and "edge"), np.roll without an axis, np.flip and np.rot90 with
axes (Numba's own take none), np.diagonal of a matrix and ``diagonal_grad``.

Each version must do what the Python function does for the types it accepts
(tests/targets/test_numba_backend.py compares the two); Numba is imported by no module here when loaded
(``numba.rules``).
"""
from __future__ import annotations

import functools
from typing import Any

import numpy as np

from ....rules import compiled
from ..kernels import summed_line
from .template_modules import template

shape = template("numpy_shape")


# -- np.pad and pad_grad: the modes "constant" (zeros) and "edge" ---------------------------------

def _static_mode(types: Any, mode: Any) -> Any:
    """A mode known when compiling ("constant" where not given); None where known only at run time."""
    if isinstance(mode, str):  # (the typing function's own default: not given)
        return mode
    if isinstance(mode, types.StringLiteral):
        return mode.literal_value
    if isinstance(mode, types.Omitted) and isinstance(mode.value, str):
        return mode.value
    return None


def _is_none(types: Any, value: Any) -> bool:
    return value is None or isinstance(value, types.NoneType) or \
        (isinstance(value, types.Omitted) and value.value is None)


def _pad_width_compiles(types: Any, pad_width: Any) -> bool:
    """An int, (n,), (before, after), or one such tuple per axis: the forms ``np.asarray`` reads compiled."""
    if isinstance(pad_width, types.Integer):
        return True
    if isinstance(pad_width, types.UniTuple) and isinstance(pad_width.dtype, types.Integer):
        return len(pad_width) in (1, 2)
    return isinstance(pad_width, types.UniTuple) and isinstance(pad_width.dtype, types.UniTuple) and \
        isinstance(pad_width.dtype.dtype, types.Integer) and len(pad_width.dtype) in (1, 2)


@functools.cache
def _pad_helpers() -> Any:
    """``widths``: a compiled function (Numba imported), built once, shared by np.pad's and pad_grad's versions."""
    from numba.extending import register_jitable

    @register_jitable
    def widths(pad_width, ndim):
        """``pad_width`` as an (ndim, 2) array of (before, after), broadcast as np.pad does."""
        rows = np.atleast_2d(np.asarray(pad_width))  # (an int: 1 x 1; (before, after): 1 x 2)
        if rows.shape[0] != 1 and rows.shape[0] != ndim:
            raise ValueError("pad_width does not broadcast to (ndim, 2)")
        out = np.empty((ndim, 2), np.intp)
        for axis in range(ndim):
            row = rows[0 if rows.shape[0] == 1 else axis]
            out[axis, 0] = row[0]
            out[axis, 1] = row[row.shape[0] - 1]
            if out[axis, 0] < 0 or out[axis, 1] < 0:
                raise ValueError("index can't contain negative values")
        return out

    return widths


@compiled(np.pad)
def _pad(types):
    """np.pad(array, pad_width, "constant" | "edge") of a float or integer array (Numba has no np.pad):
    the same elements copied, zeros in "constant"'s border."""
    from numba.cpython.unsafe import tuple as unsafe_tuple
    tuple_setitem: Any = unsafe_tuple.tuple_setitem  # (an intrinsic: its typing is Numba's, not mypy's)
    widths = _pad_helpers()

    def typing(array, pad_width, mode="constant"):
        kind = _static_mode(types, mode)
        if not isinstance(array, types.Array) or array.ndim == 0 or kind not in ("constant", "edge") or \
                not isinstance(array.dtype, (types.Float, types.Integer)) or not _pad_width_compiles(types, pad_width):
            return None
        edge = kind == "edge"
        ndim = array.ndim

        def padded(array, pad_width, mode="constant"):
            sides = widths(pad_width, ndim)
            shape = array.shape
            for axis in range(ndim):
                shape = tuple_setitem(shape, axis, array.shape[axis] + sides[axis, 0] + sides[axis, 1])
                if edge and array.shape[axis] == 0 and sides[axis, 0] + sides[axis, 1] > 0:
                    raise ValueError("can't extend empty axis using modes other than 'constant' or 'empty'")
            out = np.zeros(shape, array.dtype)
            for index in np.ndindex(shape):
                source = index
                inside = True
                for axis in range(ndim):
                    at = index[axis] - sides[axis, 0]
                    if at < 0 or at >= array.shape[axis]:
                        inside = False
                        at = 0 if at < 0 else array.shape[axis] - 1
                    source = tuple_setitem(source, axis, at)
                if inside or edge:
                    out[index] = array[source]
            return out
        return padded
    return typing


@compiled(shape.pad_grad)
def _pad_grad(types):
    """pad_grad for "constant" and "edge": each axis undone in reverse, a border's sum (np.sum's order: a
    C-contiguous copy summed along the axis) added to the element it copies, as the template's
    ``_sliced_pad_grad``."""
    widths = _pad_helpers()
    summed = summed_line()

    def typing(grad, array, pad_width, mode="constant", stat_length=None, reflect_type="even"):
        kind = _static_mode(types, mode)
        if not isinstance(array, types.Array) or not isinstance(grad, types.Array) or grad.dtype != types.float64 \
                or grad.ndim != array.ndim or array.ndim == 0 or kind not in ("constant", "edge") \
                or not _pad_width_compiles(types, pad_width) or not _is_none(types, stat_length):
            return None
        edge = kind == "edge"
        ndim = array.ndim

        def undone(grad, array, pad_width, mode="constant", stat_length=None, reflect_type="even"):
            sides = widths(pad_width, ndim)
            for axis in range(ndim):
                if grad.shape[axis] != array.shape[axis] + sides[axis, 0] + sides[axis, 1]:
                    raise ValueError("pad_grad: the adjoint's shape is not the padded shape")
            if array.size == 0:
                for axis in range(ndim):
                    if edge and array.shape[axis] == 0 and sides[axis, 0] + sides[axis, 1] > 0:
                        raise ValueError("an empty axis padded by its edges")  # (as Python: np.pad refuses it)
                return np.zeros(array.shape)
            result = np.ascontiguousarray(grad).reshape(-1)
            dims = np.array(grad.shape)
            for axis in range(ndim - 1, -1, -1):  # (flat loops: slices and broadcasting compile slowly)
                before, after, n = sides[axis, 0], sides[axis, 1], array.shape[axis]
                if before == 0 and after == 0:
                    continue
                outer = 1
                for j in range(axis):
                    outer *= dims[j]
                inner = 1
                for j in range(axis + 1, ndim):
                    inner *= dims[j]
                full = dims[axis]
                middle = np.empty(outer * n * inner)
                for p in range(outer):
                    for i in range(n):
                        source = (p * full + before + i) * inner
                        target = (p * n + i) * inner
                        for k in range(inner):
                            middle[target + k] = result[source + k]
                    if edge:
                        for k in range(inner):
                            if before:
                                middle[p * n * inner + k] += summed(result, p * full * inner + k, before, inner)
                            if after:
                                middle[(p * n + n - 1) * inner + k] += \
                                    summed(result, (p * full + before + n) * inner + k, after, inner)
                result = middle
                dims[axis] = n
            return result.reshape(array.shape)
        return undone
    return typing


# -- np.roll, np.flip, np.rot90: the axes Numba's own do not take -------------------------------

@compiled(np.roll)
def _roll(types):
    """np.roll(a, shift, None) (backend="numba": Numba's own takes no axis): its roll of the flattened array."""
    def typing(a, shift, axis=None):
        if isinstance(a, types.Array) and isinstance(shift, types.Integer) and _is_none(types, axis):
            def rolled(a, shift, axis=None):
                flat = np.ascontiguousarray(a).reshape(-1)  # (in NumPy's order: C's)
                n = flat.size
                out = np.empty_like(flat)
                if n:
                    k = shift % n
                    out[k:] = flat[:n - k]
                    out[:k] = flat[n - k:]
                return out.reshape(a.shape)
            return rolled
        return None
    return typing


def _is_int(types: Any, value: Any) -> bool:
    """An int argument: given (``types.Integer``, literal or not), or left at an int default (Numba hands
    the typing function the default itself, or ``types.Omitted`` of it)."""
    return type(value) is int or isinstance(value, types.Integer) or \
        (isinstance(value, types.Omitted) and type(value.value) is int)


@compiled(np.flip)
def _flip(types):
    """np.flip(m, None) and np.flip(m, axis) for an int axis (backend="numba": Numba's own takes no axis):
    a view, as NumPy's, with that axis (every axis for None) reversed.  (np.flip(m), no axis given, is
    left to Numba's own.)"""
    def typing(m, axis=None):
        if not isinstance(m, types.Array) or m.ndim == 0 or axis is None or isinstance(axis, types.Omitted):
            return None  # (no axis given: Numba's own)
        if isinstance(axis, types.NoneType):
            return lambda m, axis=None: np.flip(m)  # (Numba's: every axis reversed)
        if not isinstance(axis, types.Integer):
            return None
        ndim = m.ndim

        def flipped(m, axis=None):
            if axis < -ndim or axis >= ndim:
                raise ValueError("axis is out of bounds for array")  # (NumPy's AxisError, raised again as Python)
            return np.swapaxes(np.swapaxes(m, 0, axis)[::-1], 0, axis)
        return flipped
    return typing


@compiled(np.rot90)
def _rot90(types):
    """np.rot90(m, k, axes) for a tuple of two int axes (backend="numba": Numba's own takes no axes): the
    views NumPy's returns, a flip and a swap of the two axes (for k % 4 of 1 and 3) or two flips (2)."""
    def typing(m, k=1, axes=(0, 1)):
        if not isinstance(m, types.Array) or m.ndim < 2 or not _is_int(types, k) or isinstance(axes, types.Omitted) \
                or not isinstance(axes, types.BaseTuple) or len(axes) != 2 \
                or not all(isinstance(t, types.Integer) for t in axes):
            return None
        ndim = m.ndim

        def rotated(m, k=1, axes=(0, 1)):
            first, second = axes[0], axes[1]
            if first == second or abs(first - second) == ndim:
                raise ValueError("Axes must be different.")
            if first >= ndim or first < -ndim or second >= ndim or second < -ndim:
                raise ValueError("Axes are out of range.")
            turns = k % 4
            if turns == 0:
                return m[:]
            if turns == 2:
                return np.flip(np.flip(m, first), second)
            if turns == 1:
                return np.swapaxes(np.flip(m, second), first, second)
            return np.flip(np.swapaxes(m, first, second), second)
        return rotated
    return typing


# -- np.diagonal and diagonal_grad: matrices ----------------------------------------------------

def _diagonal_compiles(types: Any, a: Any, offset: Any, axis1: Any, axis2: Any) -> bool:
    """np.diagonal's arguments that its compiled versions take: a matrix, int offset and axes."""
    return isinstance(a, types.Array) and a.ndim == 2 and all(_is_int(types, v) for v in (offset, axis1, axis2))


@functools.cache
def _diagonal_helpers() -> Any:
    """``corner``: a compiled function (Numba imported), built once, shared by np.diagonal's and
    diagonal_grad's versions."""
    from numba.extending import register_jitable

    @register_jitable
    def corner(shape, offset, axis1, axis2):
        """Where the diagonal of a matrix of ``shape`` starts (row, column), its length, and whether
        it runs down the matrix's transpose (axis1 1, axis2 0), as np.diagonal reads its arguments."""
        if axis1 < -2 or axis1 >= 2 or axis2 < -2 or axis2 >= 2:
            raise ValueError("axis is out of bounds for array")  # (NumPy's AxisError, raised again as Python)
        transposed = axis1 % 2 == 1
        if axis1 % 2 == axis2 % 2:
            raise ValueError("axis1 and axis2 cannot be the same")
        rows, columns = (shape[1], shape[0]) if transposed else (shape[0], shape[1])
        row, column = max(-offset, 0), max(offset, 0)
        length = max(min(rows - row, columns - column), 0)
        return row, column, length, transposed

    return corner


@compiled(np.diagonal)
def _diagonal(types):
    """np.diagonal(a, offset, axis1, axis2) of a matrix (Numba has none): its elements in a new array, where
    NumPy's is a read-only view.  The same numbers wherever s2s_ad reads it: generated code never writes
    through a diagonal (NumPy refuses it) and takes it again after a write into its base (the rule's
    retake="always"), so no later write is missed; other ranks are not compiled."""
    corner = _diagonal_helpers()

    def typing(a, offset=0, axis1=0, axis2=1):
        if not _diagonal_compiles(types, a, offset, axis1, axis2):
            return None

        def diagonal(a, offset=0, axis1=0, axis2=1):
            row, column, length, transposed = corner(a.shape, offset, axis1, axis2)
            out = np.empty(length, a.dtype)
            for i in range(length):
                out[i] = a[column + i, row + i] if transposed else a[row + i, column + i]
            return out
        return diagonal
    return typing


@compiled(shape.diagonal_grad)
def _diagonal_grad(types):
    """diagonal_grad of a float64 vector onto a matrix: zeros, ``grad`` written on the diagonal as
    ``diagonal_grad`` writes it (its first len(grad) elements; an index past the matrix raises IndexError)."""
    corner = _diagonal_helpers()

    def typing(grad, a, offset=0, axis1=0, axis2=1):
        if not isinstance(grad, types.Array) or grad.ndim != 1 or grad.dtype != types.float64 \
                or not _diagonal_compiles(types, a, offset, axis1, axis2):
            return None

        def spread(grad, a, offset=0, axis1=0, axis2=1):
            row, column, _, transposed = corner(a.shape, offset, axis1, axis2)
            result = np.zeros(a.shape)
            for i in range(grad.shape[0]):
                if transposed:
                    result[column + i, row + i] = grad[i]
                else:
                    result[row + i, column + i] = grad[i]
            return result
        return spread
    return typing
