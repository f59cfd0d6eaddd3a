"""The Numba target's compiled versions of ``templates/numpy_shape.py``'s functions and helpers (np.pad and
``pad_grad``: numpy_padding): np.roll without an axis or along one, np.flip and np.rot90 with
axes (Numba's own take none), np.expand_dims of a tuple of axes, np.diagonal of a matrix and ``diagonal_grad``, np.diag's ``diag_grad``, np.sort
and ``sort_grad``, np.argsort along an axis (stably), np.squeeze of an axis, np.diff along an axis and its ``diff_piece`` (nothing prepended or appended) and ``diff_grad``; np.gradient of
a vector at a uniform spacing (Numba has none) and its adjoint's ``gradient_grad``.

Each version must do what the Python function does for the types it accepts
(tests/targets/test_numba_backend.py compares the two); Numba is imported by no module here when loaded
(``numba.rules``).
"""
from __future__ import annotations

import functools
from typing import Any

import numpy as np

from ....rules import compiled
from ..kernels import axis_position, lengths_around, tuple_setitem as shared_tuple_setitem
from .argument_types import is_none
from .template_modules import template

shape = template("numpy_shape")


# -- np.roll, np.flip, np.rot90: the axes Numba's own do not take -------------------------------

@compiled(np.roll)
def _roll(types):
    """np.roll(a, shift, None) and np.roll(a, shift, axis) by an int along an int axis (backend="numba":
    Numba's own takes no axis): the flattened array rolled, or each line along the axis."""
    around, axis_in = lengths_around(), axis_position()

    def typing(a, shift, axis=None):
        if isinstance(a, types.Array) and isinstance(shift, types.Integer) and isinstance(axis, types.Integer) \
                and not isinstance(axis, types.Boolean) and a.ndim >= 1:
            def rolled_along(a, shift, axis=None):
                flat = np.ascontiguousarray(a).reshape(-1)  # (C's order: lines ``inner`` apart)
                outer, count, inner = around(a.shape, axis_in(axis, a.ndim))
                out = np.empty_like(flat)
                if count:
                    k, line = shift % count, count * inner
                    for p in range(outer):  # (each line: its last k rows first, then the others)
                        base = p * line
                        out[base + k * inner:base + line] = flat[base:base + line - k * inner]
                        out[base:base + k * inner] = flat[base + line - k * inner:base + line]
                return out.reshape(a.shape)
            return rolled_along
        if isinstance(a, types.Array) and isinstance(shift, types.Integer) and is_none(types, axis):
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


@compiled(np.expand_dims)
def _expand_dims(types):
    """np.expand_dims of a number and one axis, 0 or -1 (Numba's own takes arrays): a vector of that one number
    (any other axis raises, as NumPy's AxisError); and of a tuple of axes (Numba's own takes one int): of a
    float64 number, a new array, of a C-ordered array, a view, as NumPy's (a reshape inserting the axes of
    length 1)."""
    tuple_setitem = shared_tuple_setitem()

    def typing(a, axis):
        if isinstance(a, (types.Float, types.Integer)) and not isinstance(a, types.Boolean) and _is_int(types, axis):
            def one(a, axis):
                if axis != 0 and axis != -1:
                    raise ValueError("axis is out of bounds for array")
                return np.full(1, a)
            return one
        if not (isinstance(axis, types.UniTuple) and isinstance(axis.dtype, types.Integer)):
            return None
        if isinstance(a, types.Float):
            ndim = 0
        elif isinstance(a, types.Array) and a.layout == "C":
            ndim = a.ndim
        else:
            return None
        out_ndim = ndim + len(axis)
        ones = (1,) * out_ndim  # (a constant of the compiled code: Numba multiplies no tuple)
        from numba.extending import register_jitable

        @register_jitable
        def inserted_axes(axis):
            inserted = np.zeros(out_ndim, dtype=np.bool_)
            for k in axis:
                position = k + out_ndim if k < 0 else k
                if position < 0 or position >= out_ndim or inserted[position]:
                    raise ValueError("np.expand_dims: an axis out of range, or repeated")
                inserted[position] = True
            return inserted

        if ndim == 0:
            def number_expanded(a, axis):
                inserted_axes(axis)
                return np.full(ones, a)
            return number_expanded

        def expanded(a, axis):
            array = np.asarray(a)
            inserted = inserted_axes(axis)
            shape = ones
            j = 0
            for i in range(out_ndim):
                if not inserted[i]:
                    shape = tuple_setitem(shape, i, array.shape[j])
                    j += 1
            return array.reshape(shape)
        return expanded
    return typing


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


@compiled(shape.diag_grad)
def _diag_grad(types):
    """diag_grad: for a vector ``v`` (np.diag built a matrix) the ``k``-th diagonal of the float64 matrix
    ``grad``, a new array; for a matrix ``v`` (np.diag read its diagonal) diagonal_grad's zeros with the
    float64 vector ``grad`` on that diagonal."""
    corner = _diagonal_helpers()

    def typing(grad, v, k=0):
        if not isinstance(v, types.Array) or v.ndim not in (1, 2) or not _is_int(types, k) \
                or not isinstance(grad, types.Array) or grad.dtype != types.float64 or grad.ndim != 3 - v.ndim:
            return None
        if v.ndim == 1:
            def diagonal(grad, v, k=0):
                row, column, length, _ = corner(grad.shape, k, 0, 1)
                out = np.empty(length)
                for i in range(length):
                    out[i] = grad[row + i, column + i]
                return out
            return diagonal

        def spread(grad, v, k=0):
            row, column, _, _ = corner(v.shape, k, 0, 1)
            result = np.zeros(v.shape)
            for i in range(grad.shape[0]):
                result[row + i, column + i] = grad[i]
            return result
        return spread
    return typing


@functools.cache
def _undifferenced() -> Any:
    """``undiff(grad, position, n, like)``: the transpose of differencing ``n`` times along the axis
    ``position`` applied to the float64 array ``grad`` (each round -np.diff of it padded with a zero at
    both ends, as diff_grad), shaped as ``like``."""
    around = lengths_around()
    from numba.extending import register_jitable

    @register_jitable
    def undiff(grad, position, n, like):
        current = np.ascontiguousarray(grad).reshape(-1)
        outer, count, inner = around(grad.shape, position)
        for _ in range(n):
            longer = np.empty(outer * (count + 1) * inner)
            for p in range(outer):
                for k in range(inner):
                    for j in range(count + 1):
                        left = current[(p * count + j - 1) * inner + k] if j > 0 else 0.0
                        right = current[(p * count + j) * inner + k] if j < count else 0.0
                        longer[(p * (count + 1) + j) * inner + k] = -(right - left)
            current = longer
            count += 1
        if current.size != like.size:
            raise ValueError("diff_piece: the adjoint's shape does not fit the array's")
        return current.reshape(like.shape)

    return undiff


@functools.cache
def _differencing() -> Any:
    """``differenced(a, n, axis)``: np.diff of ``a``, ``n`` (at least 1) times along ``axis`` (an int,
    negative from the end); an axis out of range raises, and the call runs again as Python (NumPy's
    AxisError).  An axis left shorter than ``n`` ends with no element, as NumPy's."""
    around, tuple_setitem = lengths_around(), shared_tuple_setitem()
    from numba.extending import register_jitable

    @register_jitable
    def differenced(a, n, axis):
        ndim = a.ndim
        if axis < -ndim or axis >= ndim:
            raise ValueError("axis out of bounds")
        position = axis + ndim if axis < 0 else axis
        outer, count, inner = around(a.shape, position)
        current = np.ascontiguousarray(a).reshape(-1)
        for _ in range(n):
            if count == 0:
                break
            shorter = np.empty(outer * (count - 1) * inner, a.dtype)
            for p in range(outer):
                for j in range(count - 1):
                    for k in range(inner):
                        shorter[(p * (count - 1) + j) * inner + k] = \
                            current[(p * count + j + 1) * inner + k] - current[(p * count + j) * inner + k]
            current = shorter
            count -= 1
        return current.reshape(tuple_setitem(a.shape, position, count))

    return differenced


@compiled(np.diff)
def _diff(types):
    """np.diff(a, n, axis) along an int axis given (Numba's own differences the last axis only) of an
    array of numbers, nothing prepended or appended.  ``n`` 0 hands back ``a`` itself in NumPy, and a
    negative one raises there: both run as Python (the call raises here, and runs again)."""
    differenced = _differencing()

    def typing(a, n=1, axis=-1, prepend=None, append=None):
        if not isinstance(a, types.Array) or a.ndim == 0 or not isinstance(a.dtype, (types.Float, types.Integer)) \
                or isinstance(a.dtype, types.Boolean) or not (is_none(types, prepend) and is_none(types, append)) \
                or isinstance(axis, types.Omitted) or not _is_int(types, n) or not _is_int(types, axis):
            return None  # (no axis: Numba's own)

        def along(a, n=1, axis=-1, prepend=None, append=None):
            if n < 1:
                raise ValueError("np.diff: n below 1 is NumPy's to answer")
            return differenced(a, n, axis)
        return along
    return typing


@compiled(shape.diff_piece)
def _diff_piece(types):
    """diff_piece of np.diff(a, n, axis) with nothing prepended or appended: for ``a`` (``which`` 1) the
    float64 ``grad`` sent back through ``n`` differences along ``axis``, shaped as ``a``; for the missing
    prepended and appended values (``which`` 0, 2) the number 0.0, as the helper returns."""
    undiff = _undifferenced()

    def typing(grad, a, n=1, axis=-1, prepend=None, append=None, which=1):
        if not (is_none(types, prepend) and is_none(types, append)) or not isinstance(which, types.IntegerLiteral):
            return None
        if which.literal_value in (0, 2):
            return lambda grad, a, n=1, axis=-1, prepend=None, append=None, which=1: 0.0
        if which.literal_value != 1 or not isinstance(a, types.Array) or a.ndim == 0 \
                or not isinstance(grad, types.Array) or grad.dtype != types.float64 or grad.ndim != a.ndim \
                or not _is_int(types, n) or not _is_int(types, axis):
            return None
        ndim = a.ndim
        return lambda grad, a, n=1, axis=-1, prepend=None, append=None, which=1: undiff(grad, axis % ndim, n, a)
    return typing


@compiled(shape.diff_grad)
def _diff_grad(types):
    """diff_grad (np.ediff1d's adjoint calls it) of a float64 ``grad`` with as many axes as ``a``."""
    undiff = _undifferenced()

    def typing(grad, a, n=1, axis=-1):
        if not isinstance(a, types.Array) or a.ndim == 0 or not isinstance(grad, types.Array) \
                or grad.dtype != types.float64 or grad.ndim != a.ndim or not _is_int(types, n) or not _is_int(types, axis):
            return None
        ndim = a.ndim
        return lambda grad, a, n=1, axis=-1: undiff(grad, axis % ndim, n, a)
    return typing


# -- np.sort along an axis, and sort_grad: each line sorted, stably for the adjoint -------------------

@functools.cache
def _line_reader() -> Any:
    """``read_line(flat, base, inner, line)``: fills ``line`` with the line of the flattened array
    ``flat`` that starts at ``base`` and steps by ``inner`` (the elements after the axis)."""
    from numba.extending import register_jitable

    @register_jitable
    def read_line(flat, base, inner, line):
        for i in range(line.size):
            line[i] = flat[base + i * inner]

    return read_line


@functools.cache
def _lines() -> Any:
    """``along(a, axis, undo)``: each line of the float array ``a`` along ``axis`` sorted (``undo``
    None) or, as sort_grad, ``undo``'s line sent back to where a stable sort of ``a``'s took it from."""
    around = lengths_around()
    read_line = _line_reader()
    from numba.extending import register_jitable

    @register_jitable
    def along(a, axis, undo, sorting):
        ndim = a.ndim
        if axis < -ndim or axis >= ndim:
            raise ValueError("axis out of bounds")  # (run again as Python: NumPy's AxisError)
        position = axis + ndim if axis < 0 else axis
        flat = np.ascontiguousarray(a).reshape(-1)
        given = np.ascontiguousarray(undo).reshape(-1)
        if not sorting and given.size != flat.size:
            raise ValueError("sort_grad: the adjoint's shape is not the array's")
        outer, count, inner = around(a.shape, position)
        out = np.zeros(flat.size, flat.dtype if sorting else given.dtype)
        line = np.empty(count, flat.dtype)
        for p in range(outer):
            for k in range(inner):
                base = p * count * inner + k
                read_line(flat, base, inner, line)
                if sorting:
                    ordered = np.sort(line)
                    for i in range(count):
                        out[base + i * inner] = ordered[i]
                else:
                    order = np.argsort(line, kind="mergesort")  # (stable, as the template's)
                    for i in range(count):
                        out[base + order[i] * inner] += given[base + i * inner]
        return out.reshape(a.shape)

    return along


def _sortable(types: Any, a: Any) -> bool:
    return isinstance(a, types.Array) and a.ndim >= 1 and a.dtype in (types.float64, types.float32)


@compiled(np.sort)
def _sort(types):
    """np.sort(a, axis) of a float array along an int axis (Numba's own takes no axis)."""
    along = _lines()

    def typing(a, axis=-1, kind=None, order=None):
        if not _sortable(types, a) or not _is_int(types, axis) or isinstance(axis, types.Boolean) or \
                not is_none(types, kind) or not is_none(types, order):
            return None
        return lambda a, axis=-1, kind=None, order=None: along(a, axis, a, True)
    return typing


@functools.cache
def _orders() -> Any:
    """``orders_along(a, axis)``: for each line of ``a`` along ``axis``, the positions a stable sort of
    the line takes its elements from (np.argsort(kind="stable")), as int64."""
    around = lengths_around()
    read_line = _line_reader()
    from numba.extending import register_jitable

    @register_jitable
    def orders_along(a, axis):
        ndim = a.ndim
        if axis < -ndim or axis >= ndim:
            raise ValueError("axis out of bounds")  # (run again as Python: NumPy's AxisError)
        position = axis + ndim if axis < 0 else axis
        flat = np.ascontiguousarray(a).reshape(-1)
        outer, count, inner = around(a.shape, position)
        out = np.empty(flat.size, np.int64)
        line = np.empty(count, flat.dtype)
        for p in range(outer):
            for k in range(inner):
                base = p * count * inner + k
                read_line(flat, base, inner, line)
                order = np.argsort(line, kind="mergesort")  # (Numba's merge sort: stable)
                for i in range(count):
                    out[base + i * inner] = order[i]
        return out.reshape(a.shape)

    return orders_along


@compiled(np.argsort)
def _argsort(types):
    """np.argsort(a, axis, kind) of a float array along an int axis given (Numba's own takes no axis, and
    no kind "stable"; the forward mode of np.sort writes it), by a stable sort of each line.  For the
    kinds "stable" and "mergesort" that is NumPy's order; for its default kind (or "quicksort") NumPy
    leaves the order of equal elements unspecified (it differs by machine: SIMD sorts), and the stable
    order is one it may give (on lines of 16 or fewer, the one it gives).  With no axis given, Numba's
    own argsort of a vector."""
    orders_along = _orders()

    def typing(a, axis=-1, kind=None, order=None):
        stable = isinstance(kind, types.StringLiteral) and kind.literal_value in ("stable", "mergesort")
        default = is_none(types, kind) or isinstance(kind, types.StringLiteral) and kind.literal_value == "quicksort"
        given = isinstance(axis, types.Integer) and not isinstance(axis, types.Boolean)
        if not _sortable(types, a) or not _is_int(types, axis) or isinstance(axis, types.Boolean) \
                or not (stable or default and given) or not is_none(types, order):
            return None
        return lambda a, axis=-1, kind=None, order=None: orders_along(a, axis)
    return typing


@compiled(np.squeeze)
def _squeeze(types):
    """np.squeeze(a, axis) of an int axis (Numba has no np.squeeze; with no axis the result's rank
    depends on the lengths, which a compiled type cannot): ``a`` without that axis, which must have
    length 1 (else it raises, and the call runs again as Python: NumPy's error)."""
    tuple_setitem = shared_tuple_setitem()

    def typing(a, axis=None):
        if not isinstance(a, types.Array) or a.ndim == 0 or not isinstance(axis, types.Integer) \
                or isinstance(axis, types.Boolean):
            return None
        ndim = a.ndim
        if ndim == 1:  # (one number left: a 0-d array)
            def only(a, axis=None):
                if axis < -1 or axis > 0 or a.shape[0] != 1:
                    raise ValueError("cannot select an axis to squeeze out which has size not equal to one")
                return np.ascontiguousarray(a).reshape(())
            return only

        def squeezed(a, axis=None):
            if axis < -ndim or axis >= ndim or a.shape[axis % ndim] != 1:
                raise ValueError("cannot select an axis to squeeze out which has size not equal to one")
            position = axis % ndim
            kept = a.shape[1:]
            for j in range(ndim - 1):  # (the lengths before the axis, then those after it)
                kept = tuple_setitem(kept, j, a.shape[j] if j < position else a.shape[j + 1])
            return np.ascontiguousarray(a).reshape(kept)
        return squeezed
    return typing


@compiled(shape.sort_grad)
def _sort_grad(types):
    """sort_grad: each sorted position's adjoint sent back where a stable sort took it from."""
    along = _lines()

    def typing(grad, a, axis=-1):
        if not _sortable(types, a) or not isinstance(grad, types.Array) or grad.ndim != a.ndim or \
                grad.dtype not in (types.float64, types.float32) or not _is_int(types, axis) or \
                isinstance(axis, types.Boolean):
            return None
        return lambda grad, a, axis=-1: along(a, axis, grad, False)
    return typing


# -- np.gradient of a vector, uniform spacing ---------------------------------------------------------
# NumPy's formulas for one axis and a number as the spacing: (f[i+1] - f[i-1]) / (2 dx) inside, one-sided
# differences at the ends (edge_order 1) or NumPy's three-point ones (edge_order 2).  The adjoint is
# ``gradient_grad``'s: D^T grad, D np.gradient of the identity, built entry by entry as NumPy computes
# each (an entry NumPy computes as 0 stays 0: the dense product, as the helper's, not a sparse one).

def _gradient_case(types: Any, f: Any, spacing: Any, axis: Any, edge_order: Any) -> int:
    """The edge order of a compiled call (1 or 2), else 0: a float64 vector, a number as the spacing,
    no axis (or 0 or -1 as a literal), the edge order a literal or left out."""
    if isinstance(spacing, types.Omitted):
        spacing = spacing.value
    number = isinstance(spacing, (int, float)) and not isinstance(spacing, bool) or \
        isinstance(spacing, (types.Float, types.Integer)) and not isinstance(spacing, types.Boolean)
    if isinstance(axis, types.Omitted):
        axis = axis.value
    if isinstance(axis, types.IntegerLiteral):
        axis = axis.literal_value
    along = axis is None or isinstance(axis, types.NoneType) or axis in (0, -1)
    order = edge_order.value if isinstance(edge_order, types.Omitted) else \
        edge_order.literal_value if isinstance(edge_order, types.IntegerLiteral) else edge_order
    vector = isinstance(f, types.Array) and f.ndim == 1 and f.dtype == types.float64
    return order if vector and number and along and order in (1, 2) else 0


def _gradient_kernel() -> Any:
    """``differences(f, dx, order)`` (compiled, built once): np.gradient of the vector ``f``."""
    from numba.extending import register_jitable

    @register_jitable
    def differences(f, dx, order):
        n = f.shape[0]
        if n < order + 1:
            raise ValueError("Shape of array too small to calculate a numerical gradient, "
                             "at least (edge_order + 1) elements are required.")
        out = np.empty(n)
        for i in range(1, n - 1):
            out[i] = (f[i + 1] - f[i - 1]) / (2.0 * dx)
        if order == 1:
            out[0] = (f[1] - f[0]) / dx
            out[n - 1] = (f[n - 1] - f[n - 2]) / dx
        else:
            out[0] = -1.5 / dx * f[0] + 2.0 / dx * f[1] + -0.5 / dx * f[2]
            out[n - 1] = 0.5 / dx * f[n - 3] + -2.0 / dx * f[n - 2] + 1.5 / dx * f[n - 1]
        return out
    return differences


@compiled(np.gradient)
def _gradient(types):
    """np.gradient(f, spacing) of a float64 vector at a uniform spacing (a number), edge order 1 or 2:
    NumPy's differences bit for bit."""
    differences = _gradient_kernel()

    def typing(f, spacing=1.0, axis=None, edge_order=1):
        order = _gradient_case(types, f, spacing, axis, edge_order)
        if not order:
            return None
        return lambda f, spacing=1.0, axis=None, edge_order=1: differences(f, float(spacing), order)
    return typing


@compiled(shape.gradient_grad)
def _gradient_grad(types):
    """gradient_grad of a float64 vector at a uniform spacing: D^T grad, D (np.gradient of the identity)
    built entry by entry as NumPy computes each, the product by Numba's BLAS (to rounding)."""
    differences = _gradient_kernel()

    def typing(grad, f, spacing=1.0, axis=None, edge_order=1):
        order = _gradient_case(types, f, spacing, axis, edge_order)
        if not order or not (isinstance(grad, types.Array) and grad.ndim == 1 and grad.dtype == types.float64):
            return None

        def adjoint(grad, f, spacing=1.0, axis=None, edge_order=1):
            n = f.shape[0]
            if grad.shape[0] != n:
                raise ValueError("gradient_grad: an adjoint not shaped like the vector")
            along = np.empty((n, n))
            unit = np.zeros(n)
            for j in range(n):  # (column j: np.gradient of the j-th unit vector)
                unit[j] = 1.0
                along[:, j] = differences(unit, float(spacing), order)
                unit[j] = 0.0
            return np.ascontiguousarray(along.T) @ np.ascontiguousarray(grad)
        return adjoint
    return typing
