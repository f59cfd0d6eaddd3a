"""The Numba target's compiled np.pad and ``pad_grad`` (``templates/numpy_shape.py``), in the modes
"constant", "edge", "reflect" and "symmetric".

Input: calls of np.pad (Numba has none) and of the template's ``pad_grad`` in compiled code.  Output:
the same elements as NumPy's np.pad, and ``pad_grad``'s numbers bit for bit (its border sums added
in the template's order), for float and integer arrays.

Arrays of one or two axes (sequences, images: what users pad) are copied by loops over the padded
shape that read each axis's source positions from a small table built once per call
(``_axis_sources``): a few nanoseconds an element.  More axes go through ``np.ndindex``, which
rebuilds an index tuple for every element (several times slower; the same numbers).
"""
from __future__ import annotations

import functools
from typing import Any

import numpy as np

from ....rules import compiled
from ..kernels import lengths_around, summed_line, tuple_setitem as shared_tuple_setitem
from .argument_types import is_none, known
from .template_modules import template

shape = template("numpy_shape")

_PAD_MODES = ("constant", "edge", "reflect", "symmetric")


def _pad_width_compiles(types: Any, pad_width: Any) -> bool:
    """An int, (n,), (before, after), or one such tuple per axis: the forms ``np.asarray`` reads compiled."""
    if isinstance(pad_width, types.Integer):
        return True
    if isinstance(pad_width, types.BaseTuple) and all(isinstance(t, types.Integer) for t in pad_width.types):
        return len(pad_width) in (1, 2)  # ((5, 1): a tuple of two int literals, of two types)
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


@functools.cache
def _mirrored() -> Any:
    """``mirrored(at, n, symmetric)``: the element of an axis of length ``n`` that np.pad's "reflect"
    (``symmetric`` False: the edge not repeated) or "symmetric" mode copies to the position ``at``
    (``at`` counted from the first element; negative in the border before).  NumPy pads a border
    wider than the axis by reflecting again and again: a period of 2 (n - 1), or 2 n."""
    from numba.extending import register_jitable

    @register_jitable
    def mirrored(at, n, symmetric):
        if symmetric:
            period = 2 * n
            j = at % period
            return period - 1 - j if j >= n else j
        if n == 1:
            return 0
        period = 2 * (n - 1)
        j = at % period
        return period - j if j >= n else j

    return mirrored


@functools.cache
def _axis_sources(kind: str) -> Any:
    """``sources(before, n, after)``: for each position of an axis of length ``n`` padded by
    ``before`` and ``after`` in the mode ``kind``, the position of the element np.pad copies there,
    -1 in "constant"'s border (a zero).  One per mode, its mode a constant: Numba compiles the one
    branch the mode takes.  An axis of length 0 padded in another mode is refused by the caller."""
    from numba.extending import register_jitable
    mirrored = _mirrored()
    edge, mirror, symmetric = kind == "edge", kind in ("reflect", "symmetric"), kind == "symmetric"

    @register_jitable
    def sources(before, n, after):
        out = np.empty(before + n + after, np.intp)
        for i in range(out.size):
            at = i - before
            if at < 0 or at >= n:
                if mirror:
                    at = mirrored(at, n, symmetric)
                elif edge:
                    at = 0 if at < 0 else n - 1
                else:
                    at = -1
            out[i] = at
        return out

    return sources


@functools.cache
def _checked_sides(widths: Any, edge: bool, mirror: bool) -> Any:
    """``sides(array, pad_width)``: the (ndim, 2) widths, after NumPy's refusal of an empty axis padded
    in a mode that copies elements."""
    from numba.extending import register_jitable

    @register_jitable
    def sides_of(array, pad_width):
        sides = widths(pad_width, array.ndim)
        for axis in range(array.ndim):
            if (edge or mirror) and array.shape[axis] == 0 and sides[axis, 0] + sides[axis, 1] > 0:
                raise ValueError("can't extend empty axis using modes other than 'constant' or 'empty'")
        return sides

    return sides_of


@compiled(np.pad)
def _pad(types):
    """np.pad(array, pad_width, "constant" | "edge" | "reflect" | "symmetric") of a float or integer array
    (Numba has no np.pad): the same elements copied, zeros in "constant"'s border."""
    tuple_setitem = shared_tuple_setitem()
    widths = _pad_helpers()
    mirrored = _mirrored()

    def typing(array, pad_width, mode="constant"):
        kind = known(types, mode, str)
        if not isinstance(array, types.Array) or array.ndim == 0 or kind not in _PAD_MODES or \
                not isinstance(array.dtype, (types.Float, types.Integer)) or not _pad_width_compiles(types, pad_width):
            return None
        edge = kind == "edge"
        mirror = kind in ("reflect", "symmetric")
        symmetric = kind == "symmetric"
        sides_of = _checked_sides(widths, edge, mirror)
        sources = _axis_sources(kind)
        copies = edge or mirror  # (every position has an element to copy: no zeros to write first)
        if array.ndim == 1:
            def padded_1(array, pad_width, mode="constant"):
                sides = sides_of(array, pad_width)
                at = sources(sides[0, 0], array.shape[0], sides[0, 1])
                out = np.empty(at.size, array.dtype) if copies else np.zeros(at.size, array.dtype)
                for i in range(at.size):
                    if at[i] >= 0:
                        out[i] = array[at[i]]
                return out
            return padded_1
        if array.ndim == 2:
            def padded_2(array, pad_width, mode="constant"):
                sides = sides_of(array, pad_width)
                rows = sources(sides[0, 0], array.shape[0], sides[0, 1])
                columns = sources(sides[1, 0], array.shape[1], sides[1, 1])
                size = (rows.size, columns.size)
                out = np.empty(size, array.dtype) if copies else np.zeros(size, array.dtype)
                left, w = max(sides[1, 0], 0), array.shape[1]  # (max: no negative-index test in the copies)
                for i in range(rows.size):
                    row = rows[i]
                    if row < 0:
                        continue
                    for j in range(w):  # (the row's middle: a plain copy)
                        out[i, left + j] = array[row, j]
                    for j in range(left):
                        if columns[j] >= 0:
                            out[i, j] = array[row, columns[j]]
                    for j in range(left + w, columns.size):
                        if columns[j] >= 0:
                            out[i, j] = array[row, columns[j]]
                return out
            return padded_2
        ndim = array.ndim

        def padded(array, pad_width, mode="constant"):
            sides = sides_of(array, pad_width)
            shape = array.shape
            for axis in range(ndim):
                shape = tuple_setitem(shape, axis, array.shape[axis] + sides[axis, 0] + sides[axis, 1])
            out = np.zeros(shape, array.dtype)
            for index in np.ndindex(shape):
                source = index
                inside = True
                for axis in range(ndim):
                    at = index[axis] - sides[axis, 0]
                    if at < 0 or at >= array.shape[axis]:
                        inside = False
                        if mirror:
                            at = mirrored(at, array.shape[axis], symmetric)
                        else:
                            at = 0 if at < 0 else array.shape[axis] - 1
                    source = tuple_setitem(source, axis, at)
                if inside or edge or mirror:
                    out[index] = array[source]
            return out
        return padded
    return typing
@compiled(shape.pad_grad)
def _pad_grad(types):
    """pad_grad for "constant" and "edge": each axis undone in reverse, a border's sum (np.sum's order: a
    C-contiguous copy summed along the axis) added to the element it copies, as the template's
    ``_sliced_pad_grad``; for "reflect" and "symmetric" (reflect_type "even"), each element of
    ``grad`` added to the element it copies (``mirrored``), in C order (the template's matrix products
    add the same terms: equal to rounding)."""
    widths = _pad_helpers()

    def typing(grad, array, pad_width, mode="constant", stat_length=None, reflect_type="even"):
        kind = known(types, mode, str)
        if not isinstance(array, types.Array) or not isinstance(grad, types.Array) or grad.dtype != types.float64 \
                or grad.ndim != array.ndim or array.ndim == 0 or kind not in _PAD_MODES \
                or not _pad_width_compiles(types, pad_width) or not is_none(types, stat_length):
            return None
        if kind in ("reflect", "symmetric"):
            if known(types, reflect_type, str) != "even":
                return None
            return _mirrored_pad_grad(widths, array.ndim, kind == "symmetric")
        edge = kind == "edge"
        if array.ndim == 1:
            return _sliced_pad_grad_1(widths, edge)
        if array.ndim == 2:
            return _sliced_pad_grad_2(widths, edge)
        return _sliced_pad_grad(widths, array.ndim, edge)
    return typing


@functools.cache
def _grad_sides(widths: Any, ndim: int, refusal: str) -> Any:
    """``sides_of(grad, array, pad_width)``: the (ndim, 2) widths, once ``grad`` is checked to have the
    padded shape and no empty axis is padded (``refusal``: np.pad refuses it in that mode)."""
    from numba.extending import register_jitable

    @register_jitable
    def sides_of(grad, array, pad_width):
        sides = widths(pad_width, ndim)
        for axis in range(ndim):
            if grad.shape[axis] != array.shape[axis] + sides[axis, 0] + sides[axis, 1]:
                raise ValueError("pad_grad: the adjoint's shape is not the padded shape")
            if refusal and array.shape[axis] == 0 and sides[axis, 0] + sides[axis, 1] > 0:
                raise ValueError(refusal)
        return sides

    return sides_of


_EDGE_REFUSAL = "an empty axis padded by its edges"  # (as Python: np.pad refuses it)


@functools.cache
def _border_sum() -> Any:
    """``border_sum(flat, base, count, inner)``: ``summed_line``'s sum, inlined where it is a short loop
    (a border narrower than 8 elements, or strided: np.sum adds those in order from 0.0), the pairwise
    kernel called otherwise; a call per border element cost more than the copying around it."""
    from numba.extending import register_jitable
    summed = summed_line()

    @register_jitable
    def border_sum(flat, base, count, inner):
        if count >= 8 and inner == 1:
            return summed(flat, base, count, inner)
        total = 0.0
        for i in range(count):
            total += flat[base + i * inner]
        return total

    return border_sum


def _sliced_pad_grad_1(widths: Any, edge: bool) -> Any:
    """pad_grad of a vector ("constant", "edge"): the middle of ``grad``, each border's pairwise sum
    added to the element it copies."""
    summed = _border_sum()
    sides_of = _grad_sides(widths, 1, _EDGE_REFUSAL if edge else "")

    def undone_1(grad, array, pad_width, mode="constant", stat_length=None, reflect_type="even"):
        sides = sides_of(grad, array, pad_width)
        before, after, n = max(sides[0, 0], 0), max(sides[0, 1], 0), array.shape[0]  # (max: as undone_2's)
        flat = np.ascontiguousarray(grad)
        out = np.empty(n)
        for i in range(n):
            out[i] = flat[before + i]
        if edge and n:
            if before:
                out[0] += summed(flat, 0, before, 1)
            if after:
                out[n - 1] += summed(flat, before + n, after, 1)
        return out
    return undone_1


def _sliced_pad_grad_2(widths: Any, edge: bool) -> Any:
    """pad_grad of a matrix ("constant", "edge"): the columns undone, then the rows, as the general
    version does (the same sums in the same order) with two-axis loops."""
    summed = _border_sum()
    sides_of = _grad_sides(widths, 2, _EDGE_REFUSAL if edge else "")

    def undone_2(grad, array, pad_width, mode="constant", stat_length=None, reflect_type="even"):
        sides = sides_of(grad, array, pad_width)
        h, w = array.shape
        if h == 0 or w == 0:
            return np.zeros(array.shape)
        # (``widths`` refused negative widths; the max tells LLVM so, which drops the negative-index
        # test from every read below: the copies run twice as fast)
        left, right, top, bottom = max(sides[1, 0], 0), max(sides[1, 1], 0), max(sides[0, 0], 0), max(sides[0, 1], 0)
        padded = np.ascontiguousarray(grad)
        flat, rows, width = padded.reshape(-1), grad.shape[0], grad.shape[1]
        middle = np.empty((rows, w))  # (the columns undone: each row's borders summed pairwise, as np.sum)
        for r in range(rows):
            for j in range(w):
                middle[r, j] = padded[r, left + j]
            if edge:
                if left:
                    middle[r, 0] += summed(flat, r * width, left, 1)
                if right:
                    middle[r, w - 1] += summed(flat, r * width + left + w, right, 1)
        out = np.empty((h, w))  # (then the rows: each column's borders summed in order)
        for i in range(h):
            for j in range(w):
                out[i, j] = middle[top + i, j]
        if edge:
            lines = middle.reshape(-1)
            for j in range(w):
                if top:
                    out[0, j] += summed(lines, j, top, w)
                if bottom:
                    out[h - 1, j] += summed(lines, (top + h) * w + j, bottom, w)
        return out
    return undone_2


def _sliced_pad_grad(widths: Any, ndim: int, edge: bool) -> Any:
    """pad_grad of an array of any rank ("constant", "edge"): each axis undone in turn, the last first,
    on flat copies."""
    around = lengths_around()
    summed = summed_line()
    sides_of = _grad_sides(widths, ndim, "")

    def undone(grad, array, pad_width, mode="constant", stat_length=None, reflect_type="even"):
        sides = sides_of(grad, array, pad_width)
        if array.size == 0:
            for axis in range(ndim):
                if edge and array.shape[axis] == 0 and sides[axis, 0] + sides[axis, 1] > 0:
                    raise ValueError(_EDGE_REFUSAL)
            return np.zeros(array.shape)
        result = np.ascontiguousarray(grad).reshape(-1)
        dims = np.array(grad.shape)
        for axis in range(ndim - 1, -1, -1):  # (flat loops: slices and broadcasting compile slowly)
            before, after, n = sides[axis, 0], sides[axis, 1], array.shape[axis]
            if before == 0 and after == 0:
                continue
            outer, full, inner = around(dims, axis)
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


def _mirrored_pad_grad(widths: Any, ndim: int, symmetric: bool) -> Any:
    """pad_grad of "reflect" or "symmetric" (reflect_type "even"): each element of ``grad`` added to the
    element of ``array`` it is a copy of, in C order."""
    sources = _axis_sources("symmetric" if symmetric else "reflect")
    mirrored = _mirrored()
    tuple_setitem = shared_tuple_setitem()
    sides_of = _grad_sides(widths, ndim, "an empty axis padded by reflection")

    if ndim == 2:
        def undone_2(grad, array, pad_width, mode="constant", stat_length=None, reflect_type="even"):
            sides = sides_of(grad, array, pad_width)
            rows = sources(sides[0, 0], array.shape[0], sides[0, 1])
            columns = sources(sides[1, 0], array.shape[1], sides[1, 1])
            result = np.zeros(array.shape)
            for i in range(rows.size):
                for j in range(columns.size):
                    result[rows[i], columns[j]] += grad[i, j]
            return result
        return undone_2

    def undone(grad, array, pad_width, mode="constant", stat_length=None, reflect_type="even"):
        sides = sides_of(grad, array, pad_width)
        result = np.zeros(array.shape)
        for index in np.ndindex(grad.shape):
            source = array.shape
            for axis in range(ndim):
                source = tuple_setitem(source, axis, mirrored(index[axis] - sides[axis, 0], array.shape[axis],
                                                              symmetric))
            result[source] += grad[index]
        return result
    return undone
