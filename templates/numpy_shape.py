# mypy: disable-error-code="no-redef"
# (a function's adjoint and tangent rules are both named after it: the second redefines the name)
"""Rules for shape functions: reshape, ravel, expand_dims, squeeze, concatenate, stack,
broadcast_to, pad (every mode), roll, moveaxis, swapaxes, atleast_*d, hstack and
friends, repeat, tile, flips and rot90, diag, diagonal, tril/triu, append, diff, take,
take_along_axis, sort.

The helpers their adjoints call where a shape is known only at run time (``concatenate_grad``,
``pad_grad``, ``take_grad``...) are defined here first, and their own rules are at the end."""
from __future__ import annotations

from typing import Any, Literal

import numpy as np

from s2s_ad.core.kinds import same_dims, same_rank_dims
from s2s_ad.rules import adjoint, batched, data_axis, declare, fresh_arrays, method_alias, tangent
from s2s_ad.core.runtime import unbroadcast


# -- helpers: the adjoints of shape functions where a shape is known only at run time, each linear in
# ``grad`` (their own rules are at the end: generated code differentiated again calls them too) -----

def gradient_grad(grad: Any, f: Any, spacing: Any = 1.0, axis: Any = None,
                  edge_order: Literal[1, 2] = 1) -> np.ndarray:
    """The adjoint of ``np.gradient(f, spacing, axis=axis, edge_order=edge_order)``.

    Along each axis the gradient is a matrix D (``np.gradient`` of the identity, so every spacing
    and edge order is exactly NumPy's); the adjoint sums D^T applied to each axis's part of
    ``grad`` (one array for one axis, else one item per axis).
    """
    f = np.asarray(f)
    axes = tuple(range(f.ndim)) if axis is None else tuple(np.atleast_1d(axis))
    parts = [grad] if len(axes) == 1 else [grad[k] for k in range(len(axes))]
    result = np.zeros(f.shape, dtype=np.result_type(f, 1.0))
    for ax, part in zip(axes, parts):
        size = f.shape[ax]
        along = np.asarray(np.gradient(np.eye(size), spacing, axis=0, edge_order=edge_order))  # d_i = sum_j D_ij f_j
        moved = np.tensordot(along.T, np.moveaxis(np.asarray(part), ax, 0), axes=1)
        result = result + np.moveaxis(moved, 0, ax)
    return result


def as_given(pieces: list, arrays: Any, grad: Any) -> Any:
    """The adjoint of a sequence argument, one piece per item, in the form the argument had: a list
    for a list or tuple, one array for an array (NumPy's joining functions iterate an array along
    its first axis; a list added to that array's other adjoints would concatenate instead)."""
    if not isinstance(arrays, np.ndarray):
        return pieces
    whole = np.zeros(np.shape(arrays), dtype=np.result_type(grad, 1.0))
    for i, piece in enumerate(pieces):
        whole[i] = piece
    return whole


def concatenate_grad(grad: Any, arrays: Any, axis: int = 0) -> Any:
    """Split the adjoint of ``np.concatenate(arrays, axis)`` back into one piece per array (one
    array where ``arrays`` is one)."""
    if axis is None:
        sizes = [np.size(a) for a in arrays]
        pieces = [np.reshape(p, np.shape(a)) for p, a in zip(np.split(grad, np.cumsum(sizes)[:-1]), arrays)]
    else:
        pieces = np.split(grad, np.cumsum([np.shape(a)[axis] for a in arrays])[:-1], axis=axis)
    return as_given(pieces, arrays, grad)


def stack_grad(grad: Any, arrays: Any, axis: int = 0) -> Any:
    """One slice of the adjoint of ``np.stack(arrays, axis)`` per array (one array where ``arrays`` is one)."""
    return as_given(list(np.moveaxis(grad, axis, 0)), arrays, grad)


# np.pad's modes.  The linear ones pad every line along an axis by the same linear map of the
# line (plus a constant: constant_values, end_values), axis after axis, each on what the previous axes
# padded: the derivative is those maps (and their transposes, in the reverse order of the axes).
# The order-statistic modes copy, per line, the element at the order statistic of the primal (the
# mean of two for the median of an even count): the derivative copies the tangent found there.
PAD_LINEAR_MODES = ("constant", "edge", "reflect", "symmetric", "wrap", "mean", "linear_ramp", "empty")


PAD_ORDER_MODES = ("maximum", "minimum", "median")


def pad_refusal(mode: Any) -> "str | None":
    """Why a call of ``np.pad`` with this ``mode`` cannot be differentiated (None where it can)."""
    if isinstance(mode, str) and mode in PAD_LINEAR_MODES + PAD_ORDER_MODES:
        return None
    if callable(mode):
        return ("np.pad with a padding function as its mode is not differentiated (s2s_ad cannot see what the "
                "function does to each line); pad with one of NumPy's modes, or write the border with "
                "np.concatenate of slices of the array")
    return f"np.pad has no mode {mode!r}; NumPy's modes are {', '.join(PAD_LINEAR_MODES + PAD_ORDER_MODES)}"


def _checked_pad_mode(mode: Any) -> Any:
    reason = pad_refusal(mode)
    if reason is not None:
        raise ValueError(reason)
    return mode


def _stat_lengths(stat_length: Any, shape: tuple) -> list:
    """``stat_length`` as one ``[before, after]`` pair per axis, each clipped to the axis's length
    (None: the whole axis), as NumPy reads it."""
    if stat_length is None:
        return [[n, n] for n in shape]
    pairs = np.broadcast_to(np.asarray(stat_length, dtype=int), (len(shape), 2)).tolist()
    return [[min(before, n), min(after, n)] for (before, after), n in zip(pairs, shape)]


def _pad_axis_map(n: int, before: int, after: int, mode: Any, stat: Any, reflect_type: Any) -> np.ndarray:
    """The ``(before + n + after, n)`` matrix of a linear mode along one axis of length ``n``: column
    ``j`` is the unit vector ``e_j`` padded (the constant part, constant_values or end_values, left out)."""
    eye = np.eye(n)
    widths = ((before, after), (0, 0))
    if mode in ("constant", "empty"):
        return np.pad(eye, widths, "constant")  # (empty: its border holds no value of the array)
    if mode == "linear_ramp":
        return np.pad(eye, widths, "linear_ramp", end_values=0.0)
    if mode == "mean":
        return np.pad(eye, widths, "mean", stat_length=(tuple(stat), (1, 1)))
    if mode in ("reflect", "symmetric"):
        return np.pad(eye, widths, mode, reflect_type=reflect_type)
    return np.pad(eye, widths, mode)


def _apply_along(matrix: np.ndarray, x: np.ndarray, axis: int) -> np.ndarray:
    return np.moveaxis(np.tensordot(matrix, x, axes=(1, axis)), 0, axis)


def _order_picks(primal: np.ndarray, axis: int, window: slice, mode: str) -> list:
    """Where, along ``axis`` of ``primal``, the order statistic of each line's ``window`` lies: one index
    array (length 1 along ``axis``, counted from the window's start) per element averaged."""
    chunk = primal[(slice(None),) * axis + (window,)]
    order = np.argsort(chunk, axis=axis, kind="stable")
    count = chunk.shape[axis]
    positions = {"maximum": [count - 1], "minimum": [0], "median": sorted({(count - 1) // 2, count // 2})}[mode]
    return [np.take(order, [p], axis=axis) for p in positions]


def _order_plan(array: Any, pad_width: Any, mode: str, stat_length: Any) -> list:
    """For each axis in NumPy's order: ``(axis, before, after, n, left window, its picks, right window,
    its picks)``, read off the primal padded along the axes before it."""
    primal = np.asarray(array)
    plan = []
    for axis, (before, after) in enumerate(_pad_widths(pad_width, primal.ndim)):
        n = primal.shape[axis]
        if not (before or after):
            continue
        stat_before, stat_after = _stat_lengths(stat_length, primal.shape)[axis]
        left, right = slice(0, stat_before), slice(n - stat_after, n)
        left_picks, right_picks = _order_picks(primal, axis, left, mode), _order_picks(primal, axis, right, mode)
        plan.append((axis, before, after, n, left, left_picks, right, right_picks))
        primal = np.concatenate([np.repeat(_picked(primal, axis, left, left_picks), before, axis), primal,
                                 np.repeat(_picked(primal, axis, right, right_picks), after, axis)], axis=axis)
    return plan


def _picked(values: np.ndarray, axis: int, window: slice, picks: list) -> Any:
    """The mean of ``values`` at the picked indices of each line's window (length 1 along ``axis``)."""
    chunk = values[(slice(None),) * axis + (window,)]
    return sum(np.take_along_axis(chunk, p, axis=axis) for p in picks) / len(picks)


def pad_jvp(t_array: Any, array: Any, pad_width: Any, mode: Any = "constant", stat_length: Any = None,
            reflect_type: Any = "even") -> Any:
    """The tangent of ``np.pad(array, pad_width, mode, ...)`` along ``t_array``: linear modes pad the
    tangent by the same linear map (without the constant part); maximum, minimum and median copy the
    tangent at the primal's order statistic of each line, not the order statistic of the tangent."""
    mode = _checked_pad_mode(mode)
    t_array = np.asarray(t_array, dtype=np.result_type(t_array, 1.0))
    if mode in ("constant", "empty"):
        return np.pad(t_array, pad_width, "constant")
    if mode == "linear_ramp":
        return np.pad(t_array, pad_width, "linear_ramp", end_values=0.0)
    if mode == "mean":
        return np.pad(t_array, pad_width, "mean", stat_length=stat_length)
    if mode in ("reflect", "symmetric"):
        return np.pad(t_array, pad_width, mode, reflect_type=reflect_type)
    if mode in PAD_LINEAR_MODES:
        return np.pad(t_array, pad_width, mode)
    result = t_array
    for axis, before, after, n, left, left_picks, right, right_picks in _order_plan(array, pad_width, mode,
                                                                                     stat_length):
        result = np.concatenate([np.repeat(_picked(result, axis, left, left_picks), before, axis), result,
                                 np.repeat(_picked(result, axis, right, right_picks), after, axis)], axis=axis)
    return result


def pad_grad(grad: Any, array: Any, pad_width: Any, mode: Any = "constant", stat_length: Any = None,
             reflect_type: Any = "even") -> np.ndarray:
    """The adjoint of ``np.pad(array, pad_width, mode, ...)`` (every mode NumPy has but a function):
    the transpose of ``pad_jvp``.  Axes are undone in the reverse of NumPy's order, each border's
    adjoint going back to the elements it was made from (a corner's, through the edge it was copied
    from, to the element that edge was copied from)."""
    mode = _checked_pad_mode(mode)
    shape = np.shape(array)
    result = np.asarray(grad, dtype=np.result_type(grad, 1.0))
    widths = _pad_widths(pad_width, len(shape))
    if mode in PAD_ORDER_MODES:
        return _order_pad_grad(result, _order_plan(array, pad_width, mode, stat_length))
    stats = _stat_lengths(stat_length, shape) if mode == "mean" else [None] * len(shape)
    for axis in reversed(range(len(shape))):
        before, after = widths[axis]
        if (before or after) and mode in ("constant", "edge") and shape[axis]:
            result = _sliced_pad_grad(result, axis, before, after, shape[axis], mode == "edge")
        elif before or after:
            matrix = _pad_axis_map(shape[axis], before, after, mode, stats[axis], reflect_type)
            result = _apply_along(matrix.T, result, axis)
    return np.ascontiguousarray(result)


def _sliced_pad_grad(grad: np.ndarray, axis: int, before: int, after: int, n: int, edge: bool) -> np.ndarray:
    """The adjoint of padding one axis of length ``n`` by constants or (``edge``) copies of its end
    elements, by slices: the middle of ``grad`` (a copy), each border's sum added to the element it
    copies.  What ``_pad_axis_map``'s matrix does for these modes, in time linear in ``grad``'s size
    (the matrix product is quadratic in the axis's length: a 64x64 image's edge pad took 90 us)."""
    lead = (slice(None),) * axis
    middle = np.array(grad[lead + (slice(before, before + n),)])  # a copy: the borders are added into it
    if edge and before:
        middle[lead + (slice(0, 1),)] += _border_sum(grad[lead + (slice(0, before),)], axis)
    if edge and after:
        middle[lead + (slice(n - 1, n),)] += _border_sum(grad[lead + (slice(before + n, before + n + after),)], axis)
    return middle


def _border_sum(border: np.ndarray, axis: int) -> np.ndarray:
    """``np.sum(border, axis=axis, keepdims=True)``: the border itself where it is one element wide (the
    sum of one element is that element), else ``np.add.reduce``, np.sum's own reduction without its
    wrapper (which costs more than the sum of a 64-element border)."""
    return border if border.shape[axis] == 1 else np.add.reduce(border, axis=axis, keepdims=True)


def _order_pad_grad(grad: np.ndarray, plan: list) -> np.ndarray:
    for axis, before, after, n, left, left_picks, right, right_picks in reversed(plan):
        lead = (slice(None),) * axis
        middle = np.array(grad[lead + (slice(before, before + n),)])  # a copy: the borders are added into it
        for window, picks, border in ((left, left_picks, slice(0, before)),
                                      (right, right_picks, slice(before + n, before + n + after))):
            total = np.sum(grad[lead + (border,)], axis=axis, keepdims=True) / len(picks)
            for p in picks:
                spread = np.zeros(middle[lead + (window,)].shape, dtype=middle.dtype)
                np.put_along_axis(spread, p, total, axis=axis)
                middle[lead + (window,)] += spread
        grad = middle
    return np.ascontiguousarray(grad)


def _pad_widths(pad_width: Any, ndim: int) -> list:
    """``np.pad``'s ``pad_width`` as one ``[before, after]`` pair of ints per axis (a dict gives
    some axes theirs, by axis, negative ones counted from the end; the others get none)."""
    if isinstance(pad_width, int):
        return [[pad_width, pad_width]] * ndim
    if isinstance(pad_width, dict):
        widths = [[0, 0] for _ in range(ndim)]
        for axis, width in pad_width.items():
            widths[axis] = list(np.broadcast_to(np.asarray(width, dtype=int), (2,)).tolist())
        return widths
    return np.broadcast_to(np.asarray(pad_width, dtype=int), (ndim, 2)).tolist()


def _joined_parts(arrays: Any, how: str) -> tuple[list, int]:
    """The arrays ``np.hstack``/``vstack``/``dstack``/``column_stack`` join, as they join them, and the axis."""
    if how == "vstack":
        return [np.atleast_2d(a) for a in arrays], 0
    if how == "dstack":
        return [np.atleast_3d(a) for a in arrays], 2
    if how == "column_stack":
        return [np.asarray(a).reshape(-1, 1) if np.ndim(a) < 2 else np.asarray(a) for a in arrays], 1
    parts = [np.atleast_1d(a) for a in arrays]
    return parts, 0 if parts and parts[0].ndim == 1 else 1


def joined_grad(grad: Any, arrays: Any, how: str) -> Any:
    """The adjoint of ``np.<how>(arrays)`` (how: hstack, vstack, dstack, column_stack): one piece per
    array (one array where ``arrays`` is one)."""
    parts, axis = _joined_parts(arrays, how)
    pieces = np.split(np.asarray(grad), np.cumsum([p.shape[axis] for p in parts])[:-1], axis=axis)
    return as_given([np.reshape(piece, np.shape(a)) for piece, a in zip(pieces, arrays)], arrays, grad)


def repeat_grad(grad: Any, a: Any, repeats: Any, axis: Any = None) -> np.ndarray:
    """The adjoint of ``np.repeat(a, repeats, axis)``: each element gathers the adjoints of its copies."""
    grad = np.asarray(grad)
    shape = np.shape(a)
    n = int(np.prod(shape)) if axis is None else shape[axis]
    if axis is None:
        axis = 0
    counts = np.broadcast_to(np.asarray(repeats, dtype=np.intp), (n,))
    owner = np.repeat(np.arange(n), counts)  # which element each copy came from
    moved = np.moveaxis(grad, axis, 0)
    result = np.zeros((n,) + moved.shape[1:], dtype=np.result_type(grad, 1.0))
    np.add.at(result, owner, moved)
    return np.reshape(np.moveaxis(result, 0, axis), shape)


def tile_grad(grad: Any, a: Any, reps: Any) -> np.ndarray:
    """The adjoint of ``np.tile(a, reps)``: the adjoints of the copies, summed."""
    shape = np.shape(a)
    reps = tuple(np.atleast_1d(reps).tolist())
    ndim = max(len(shape), len(reps))
    shape_full = (1,) * (ndim - len(shape)) + tuple(shape)
    reps_full = (1,) * (ndim - len(reps)) + reps
    split = [n for pair in zip(reps_full, shape_full) for n in pair]  # (r0, n0, r1, n1, ...)
    summed = np.sum(np.reshape(grad, split), axis=tuple(range(0, 2 * ndim, 2)))
    return np.reshape(summed, shape)


def diag_grad(grad: Any, v: Any, k: int = 0) -> np.ndarray:
    """The adjoint of ``np.diag(v, k)``: the diagonal of ``grad`` for a vector ``v``; for a matrix
    ``v``, zeros holding ``grad`` on the ``k``-th diagonal."""
    if np.ndim(v) == 1:
        return np.array(np.diagonal(grad, k))
    return diagonal_grad(grad, v, k)


def diagonal_grad(grad: Any, a: Any, offset: int = 0, axis1: int = 0, axis2: int = 1) -> np.ndarray:
    """The adjoint of ``np.diagonal(a, offset, axis1, axis2)``: ``grad`` written onto that diagonal of zeros."""
    grad = np.asarray(grad)
    result = np.zeros(np.shape(a), dtype=np.result_type(grad, 1.0))
    view = np.moveaxis(result, (axis1, axis2), (-2, -1))  # a view: writes reach result
    i = np.arange(grad.shape[-1]) if grad.ndim else np.arange(0)
    view[..., i + max(-offset, 0), i + max(offset, 0)] = grad
    return result


def append_grad(grad: Any, arr: Any, values: Any, axis: Any, which: int) -> np.ndarray:
    """The adjoint of ``arr`` (``which`` 0) or ``values`` (1) in ``np.append(arr, values, axis)``."""
    grad = np.asarray(grad)
    if axis is None:
        n = np.size(arr)
        piece = grad[:n] if which == 0 else grad[n:]
    else:
        n = np.shape(arr)[axis]
        index = (slice(None),) * (axis % grad.ndim)
        piece = grad[index + (slice(None, n),)] if which == 0 else grad[index + (slice(n, None),)]
    return np.reshape(piece, np.shape(arr if which == 0 else values))


def diff_grad(grad: Any, a: Any, n: int = 1, axis: int = -1) -> np.ndarray:
    """The adjoint of ``np.diff(a, n, axis)``: the transpose of differencing, ``n`` times."""
    grad = np.asarray(grad)
    widths = [(0, 0)] * grad.ndim
    widths[axis % grad.ndim] = (1, 1)
    for _ in range(n):
        grad = -np.diff(np.pad(grad, widths), axis=axis)
    return np.reshape(grad, np.shape(a))


def _diff_width(value: Any, axis: int) -> int:
    """How many entries ``np.diff``'s ``prepend`` or ``append`` adds along ``axis`` (a number: one)."""
    if value is None:
        return 0
    return 1 if np.ndim(value) == 0 else np.shape(value)[axis]


def diff_piece(grad: Any, a: Any, n: int = 1, axis: int = -1, prepend: Any = None, append: Any = None,
               which: int = 1) -> Any:
    """The adjoint of one input of ``np.diff(a, n, axis, prepend=..., append=...)``: the differences
    of ``a`` joined with what is prepended and appended, the adjoint of that whole cut back into the
    three (``which``: 0 the prepended values, 1 ``a``, 2 the appended ones; a number gets the sum of
    its row)."""
    a = np.asarray(a)
    axis = axis % max(a.ndim, 1)
    before, after = _diff_width(prepend, axis), _diff_width(append, axis)
    whole = list(np.shape(a))
    whole[axis] += before + after
    grad = diff_grad(grad, np.empty(whole, dtype=np.result_type(a, 1.0)), n, axis)
    start, stop = ((0, before), (before, before + a.shape[axis]), (before + a.shape[axis], whole[axis]))[which]
    piece = np.take(grad, np.arange(start, stop), axis=axis)
    like = (prepend, a, append)[which]
    if like is None:
        return 0.0
    return np.sum(piece) if np.ndim(like) == 0 else np.reshape(piece, np.shape(like))


def _flat_scatter(grad: np.ndarray, like: Any, indices: Any) -> np.ndarray:
    """``grad`` added into zeros shaped like ``like`` at the flat positions ``indices`` (repeats add up)."""
    result = np.zeros(np.size(like), dtype=np.result_type(grad, 1.0))
    np.add.at(result, np.ravel(indices), np.ravel(grad))
    return np.reshape(result, np.shape(like))


def take_grad(grad: Any, a: Any, indices: Any, axis: Any = None) -> np.ndarray:
    """The adjoint of ``np.take(a, indices, axis)``: repeated indices add up."""
    grad = np.asarray(grad)
    if axis is None:
        return _flat_scatter(grad, a, indices)
    result = np.zeros(np.shape(a), dtype=np.result_type(grad, 1.0))
    index = (slice(None),) * (axis % result.ndim) + (indices,)
    np.add.at(result, index, grad)
    return result


def take_along_axis_grad(grad: Any, arr: Any, indices: Any, axis: Any) -> np.ndarray:
    """The adjoint of ``np.take_along_axis(arr, indices, axis)``: repeated indices add up."""
    grad = np.asarray(grad)
    if axis is None:
        return _flat_scatter(grad, arr, indices)
    result = np.zeros(np.shape(arr), dtype=np.result_type(grad, 1.0))
    axis = axis % result.ndim
    # the fancy index NumPy reads with: arr's own positions on the other axes, broadcast against
    # indices (either may have length 1 there)
    index = tuple(np.asarray(indices) if d == axis else
                  np.reshape(np.arange(result.shape[d]), [-1 if k == d else 1 for k in range(result.ndim)])
                  for d in range(result.ndim))
    np.add.at(result, index, grad)
    return result


def sort_grad(grad: Any, a: Any, axis: Any = -1) -> np.ndarray:
    """The adjoint of ``np.sort(a, axis)``: each sorted position's adjoint goes back where it came from."""
    order = np.argsort(a, axis=axis, kind="stable")
    return take_along_axis_grad(grad, a, order, axis)


@adjoint(np.reshape, linear=True, method="reshape", pack_method_args=True,
         examples=({"a": (2, 6), "shape": (3, 4)}, {"a": (2, 3), "shape": -1}), view=True, retake="contiguous",
         write_back="reshape", rank_from="shape")
def reshape(out, a, shape, *, d_out):
    d_a = np.reshape(d_out, np.shape(a))


@adjoint(np.ravel, linear=True, method="ravel", examples=({"a": (2, 3)},), view=True, retake="contiguous",
         write_back="reshape")
def ravel(out, a, d_out):
    d_a = np.reshape(d_out, np.shape(a))


method_alias("flatten", np.ravel)  # a copy where ravel may give a view: the same derivative


@adjoint(np.expand_dims, linear=True, examples=({"a": (3,), "axis": 0}, {"a": (2, 3), "axis": (0, 3)}), view=True,
         retake="always", write_back="reshape")
def expand_dims(out, a, axis, d_out):
    d_a = np.reshape(d_out, np.shape(a))


@adjoint(np.squeeze, linear=True, method="squeeze", examples=({"a": (1, 3, 1)}, {"a": (1, 3, 1), "axis": 0}),
         view=True, retake="always", write_back="reshape")
def squeeze(out, a, axis=None, *, d_out):
    d_a = np.reshape(d_out, np.shape(a))


@adjoint(np.concatenate, linear=True, examples=({"arrays": [(2, 3), (4, 3)]}, {"arrays": [(2, 3), (2, 1)], "axis": 1},
                                   {"arrays": [(3,), (2,)]},
                                   {"arrays": (3, 2)}, {"arrays": (2, 3, 4), "axis": -1}, {"arrays": (2, 3), "axis": None}))
def concatenate(out, arrays, axis=0, *, d_out):
    d_arrays = concatenate_grad(d_out, arrays, axis)


@adjoint(np.stack, linear=True, examples=({"arrays": [(3,), (3,)]}, {"arrays": [(2, 3), (2, 3), (2, 3)], "axis": 2},
                                              {"arrays": (3, 2)}, {"arrays": (2, 3, 4), "axis": 1}))
def stack(out, arrays, axis=0, *, d_out):
    d_arrays = stack_grad(d_out, arrays, axis)


@adjoint(np.broadcast_to, linear=True, examples=({"array": (3,), "shape": (2, 3)}, {"array": (2, 1), "shape": (2, 4)}),
         view=True)
def broadcast_to(out, array, shape, *, d_out):
    d_array = unbroadcast(d_out, array)


# Every mode NumPy has (a padding function as the mode is refused when the call is transformed).
_PADS = ({"array": (3, 4), "pad_width": 1}, {"array": (2, 3), "pad_width": ((1, 0), (0, 2)), "constant_values": 1.5},
         {"array": (3, 4), "pad_width": 2, "mode": "edge"}, {"array": (4,), "pad_width": (1, 2), "mode": "edge"},
         {"array": (4, 3), "pad_width": ((2, 1), (1, 3)), "mode": "reflect"},
         {"array": (3,), "pad_width": (5, 4), "mode": "reflect", "reflect_type": "odd"},
         {"array": (3, 4), "pad_width": ((1, 2), (3, 0)), "mode": "symmetric"},
         {"array": (4,), "pad_width": 6, "mode": "symmetric", "reflect_type": "odd"},
         {"array": (2, 3), "pad_width": ((3, 1), (4, 5)), "mode": "wrap"},
         {"array": (3, 4), "pad_width": 2, "mode": "mean"},
         {"array": (5, 3), "pad_width": ((1, 2), (2, 1)), "mode": "mean", "stat_length": ((2, 3), (1, 2))},
         {"array": (3, 4), "pad_width": ((2, 1), (1, 2)), "mode": "linear_ramp"},
         {"array": (4,), "pad_width": 3, "mode": "linear_ramp", "end_values": (0.5, -1.0)},
         {"array": (3, 4), "pad_width": 2, "mode": "maximum"}, {"array": (5,), "pad_width": (2, 1), "mode": "minimum"},
         {"array": (4, 5), "pad_width": ((1, 2), (2, 1)), "mode": "minimum", "stat_length": 2},
         {"array": (4, 3), "pad_width": 2, "mode": "median"}, {"array": (5, 4), "pad_width": 1, "mode": "median",
                                                               "stat_length": ((3, 2), (4, 1))},
         {"array": (2, 3, 2), "pad_width": ((1, 0), (2, 1), (0, 1)), "mode": "maximum", "stat_length": 2})


@adjoint(np.pad, examples=_PADS, result_dims=same_rank_dims, refused_arguments=pad_refusal)
def pad(out, array, pad_width, mode="constant", *, stat_length=None, constant_values=0, end_values=0,
        reflect_type="even", d_out):
    d_array = pad_grad(d_out, array, pad_width, mode, stat_length, reflect_type)


@tangent(np.pad)
def pad(out, array, pad_width, mode="constant", *, stat_length=None, constant_values=0, end_values=0,
        reflect_type="even", t_array):
    # the border's constants (constant_values, end_values) have no tangent; maximum, minimum and median
    # copy the tangent at the primal's order statistic
    t_out = pad_jvp(t_array, array, pad_width, mode, stat_length, reflect_type)


@adjoint(np.roll, linear=True, examples=({"a": (5,), "shift": 2}, {"a": (3, 4), "shift": -1, "axis": 1},
                                         {"a": (3, 4), "shift": (1, 2), "axis": (0, 1)}), result_dims=same_dims)
def roll(out, a, shift, axis=None, *, d_out):
    d_a = np.roll(d_out, np.negative(shift), axis)


@adjoint(np.moveaxis, linear=True, examples=({"a": (2, 3, 4), "source": 0, "destination": -1},
                                             {"a": (2, 3, 4), "source": (0, 1), "destination": (2, 0)}), view=True, retake="always")
def moveaxis(out, a, source, destination, *, d_out):
    d_a = np.moveaxis(d_out, destination, source)


@adjoint(np.swapaxes, linear=True, method="swapaxes", examples=({"a": (2, 3, 4), "axis1": 0, "axis2": 2},
                                                                {"a": (2, 3), "axis1": -1, "axis2": -2}), view=True, retake="always")
def swapaxes(out, a, axis1, axis2, *, d_out):
    d_a = np.swapaxes(d_out, axis1, axis2)


@adjoint(np.atleast_1d, linear=True, examples=({"arys": ()}, {"arys": (3,)}), may_view=True, returns_sequence=True)
def atleast_1d(out, arys, *, d_out):  # one array: several give a tuple, which has no rule
    d_arys = np.reshape(d_out, np.shape(arys))


@adjoint(np.atleast_2d, linear=True, examples=({"arys": (3,)}, {"arys": (2, 3)}), may_view=True, returns_sequence=True)
def atleast_2d(out, arys, *, d_out):
    d_arys = np.reshape(d_out, np.shape(arys))


@adjoint(np.atleast_3d, linear=True, examples=({"arys": (3,)}, {"arys": (2, 3)}), may_view=True, returns_sequence=True)
def atleast_3d(out, arys, *, d_out):
    d_arys = np.reshape(d_out, np.shape(arys))


@adjoint(np.hstack, linear=True, examples=({"tup": [(2,), (3,)]}, {"tup": [(2, 1), (2, 3)]}, {"tup": (1,)}, {"tup": (3,)},
                                         {"tup": (3, 2)}, {"tup": (2, 3, 2)}))
def hstack(out, tup, *, d_out):
    d_tup = joined_grad(d_out, tup, "hstack")


@adjoint(np.vstack, linear=True, examples=({"tup": [(3,), (3,)]}, {"tup": [(2, 3), (3,)]}, {"tup": (1,)}, {"tup": (3,)},
                                         {"tup": (3, 2)}, {"tup": (2, 3, 2)}))
def vstack(out, tup, *, d_out):
    d_tup = joined_grad(d_out, tup, "vstack")


@adjoint(np.dstack, linear=True, examples=({"tup": [(3,), (3,)]}, {"tup": [(2, 3), (2, 3)]}, {"tup": (3,)},
                                         {"tup": (3, 2)}, {"tup": (2, 3, 2)}))
def dstack(out, tup, *, d_out):
    d_tup = joined_grad(d_out, tup, "dstack")


@adjoint(np.column_stack, linear=True, examples=({"tup": [(3,), (3, 2)]}, {"tup": (3,)}, {"tup": (3, 2)},
                                                {"tup": (2, 3, 2)}))
def column_stack(out, tup, *, d_out):
    d_tup = joined_grad(d_out, tup, "column_stack")


@adjoint(np.repeat, linear=True, method="repeat", examples=(
    {"a": (3,), "repeats": 2}, {"a": (2, 3), "repeats": np.array([1, 0, 2]), "axis": 1}, {"a": (2, 2), "repeats": 3}))
def repeat(out, a, repeats, axis=None, *, d_out):
    d_a = repeat_grad(d_out, a, repeats, axis)


@adjoint(np.tile, linear=True, examples=({"A": (3,), "reps": 2}, {"A": (2, 3), "reps": (2, 1, 2)}))
def tile(out, A, reps, *, d_out):
    d_A = tile_grad(d_out, A, reps)


@adjoint(np.flip, linear=True, examples=({"m": (4,)}, {"m": (2, 3), "axis": 1}, {"m": (2, 3)}), view=True, retake="always")
def flip(out, m, axis=None, *, d_out):
    d_m = np.flip(d_out, axis)


@adjoint(np.fliplr, linear=True, examples=({"m": (2, 3)},), view=True, retake="always")
def fliplr(out, m, *, d_out):
    d_m = np.fliplr(d_out)


@adjoint(np.flipud, linear=True, examples=({"m": (2, 3)},), view=True, retake="always")
def flipud(out, m, *, d_out):
    d_m = np.flipud(d_out)


@adjoint(np.rot90, linear=True, examples=({"m": (2, 3)}, {"m": (2, 3, 4), "k": 3, "axes": (2, 0)}), view=True, retake="always")
def rot90(out, m, k=1, axes=(0, 1), *, d_out):
    d_m = np.rot90(d_out, -k, axes)


@adjoint(np.diag, linear=True, examples=({"v": (3,)}, {"v": (3,), "k": -1}, {"v": (3, 4), "k": 1}, {"v": (3, 3)}),
         may_view=True)  # of a matrix: a (read-only) view of its diagonal, showing later writes
def diag(out, v, k=0, *, d_out):
    d_v = diag_grad(d_out, v, k)


@adjoint(np.diagonal, linear=True, method="diagonal", examples=(
    {"a": (3, 4)}, {"a": (3, 4), "offset": -1}, {"a": (2, 3, 3), "offset": 1, "axis1": 1, "axis2": 2}), view=True, retake="always")
def diagonal(out, a, offset=0, axis1=0, axis2=1, *, d_out):
    d_a = diagonal_grad(d_out, a, offset, axis1, axis2)


@adjoint(np.tril, linear=True, examples=({"m": (3, 3)}, {"m": (2, 3, 4), "k": 1}))
def tril(out, m, k=0, *, d_out):
    d_m = np.tril(d_out, k)


@adjoint(np.triu, linear=True, examples=({"m": (3, 3)}, {"m": (2, 3, 4), "k": -1}))
def triu(out, m, k=0, *, d_out):
    d_m = np.triu(d_out, k)


@adjoint(np.append, linear=True, examples=({"arr": (3,), "values": (2,)}, {"arr": (2, 3), "values": (),},
                                           {"arr": (2, 3), "values": (1, 3), "axis": 0}))
def append(out, arr, values, axis=None, *, d_out):
    d_arr = append_grad(d_out, arr, values, axis, 0)
    d_values = append_grad(d_out, arr, values, axis, 1)


@adjoint(np.diff, linear=True, examples=({"a": (5,)}, {"a": (3, 4), "n": 2, "axis": 0}, {"a": (3, 4)},
                                         {"a": (5,), "prepend": (), "append": (2,)},
                                         {"a": (3, 4), "n": 2, "axis": 0, "prepend": (1, 4)},
                                         {"a": (3, 4), "append": ()}))
def diff(out, a, n=1, axis=-1, prepend=None, append=None, *, d_out):
    # linear in a and in what is joined before and after it
    d_a = diff_piece(d_out, a, n, axis, prepend, append, 1)
    d_prepend = diff_piece(d_out, a, n, axis, prepend, append, 0)
    d_append = diff_piece(d_out, a, n, axis, prepend, append, 2)


@adjoint(np.take, linear=True, method="take", examples=(
    {"a": (5,), "indices": np.array([0, 3, 3])}, {"a": (3, 4), "indices": np.array([[1, 1], [0, 2]]), "axis": 1},
    {"a": (2, 3), "indices": 4}))
def take(out, a, indices, axis=None, *, d_out):
    d_a = take_grad(d_out, a, indices, axis)


@adjoint(np.take_along_axis, linear=True, examples=(
    {"arr": (3, 4), "indices": np.array([[0, 0], [3, 1], [2, 2]]), "axis": 1},
    {"arr": (5,), "indices": np.array([4, 4, 0]), "axis": 0}, {"arr": (2, 3), "indices": np.array([5, 0]), "axis": None}))
def take_along_axis(out, arr, indices, axis, *, d_out):
    d_arr = take_along_axis_grad(d_out, arr, indices, axis)


@adjoint(np.sort, examples=({"a": (5,)}, {"a": (3, 4), "axis": 0}, {"a": (3, 4), "axis": None}))
def sort(out, a, axis=-1, *, d_out):
    d_a = sort_grad(d_out, a, axis)


@tangent(np.sort)
def sort(out, a, axis=-1, *, t_a):
    t_out = np.take_along_axis(t_a, np.argsort(a, axis=axis, kind="stable"), axis)


fresh_arrays(np.concatenate, np.stack, np.pad)  # new arrays, never views (unlike reshape, transpose)


# Facts about operations with no rule here (see s2s_ad.rules.FACTS).
declare(np.asarray, np.asanyarray, np.real, np.imag, np.ascontiguousarray, np.asfortranarray, may_view=True)
declare(np.unique, np.histogram, np.histogram2d, np.meshgrid, np.nonzero,
        np.broadcast_arrays, np.indices, np.unravel_index, returns_sequence=True)


@adjoint(np.partition, examples=({"a": (5,), "kth": 2}, {"a": (3, 4), "kth": 1, "axis": 0},
                                 {"a": (3, 4), "kth": (0, 2)}, {"a": (2, 3, 4), "kth": -1, "axis": 1}))
def partition(out, a, kth, axis=-1, *, d_out):
    # out is a permutation of a along axis: the k-th smallest of each goes to the k-th smallest of the
    # other (NumPy leaves the order within each side of kth unspecified, so it is read off out itself)
    d_a = sort_grad(np.take_along_axis(d_out, np.argsort(out, axis=axis, kind="stable"), axis), a, axis)


@tangent(np.partition)
def partition_tangent(out, a, kth, axis=-1, *, t_a):
    t_out = sort_grad(np.take_along_axis(t_a, np.argsort(a, axis=axis, kind="stable"), axis), out, axis)


def _pieces(indices_or_sections: "int | list[int]") -> int:
    """How many pieces ``np.split(ary, indices_or_sections)`` returns (its ``items``)."""
    if isinstance(indices_or_sections, (int, np.integer)):
        return int(indices_or_sections)
    return len(indices_or_sections) + 1


# The split family returns a list of pieces; its adjoint d_out holds the pieces' adjoints (zeros
# for a piece not used), and the pieces tile the input along the axis, so d_ary is them joined
# again.  Forward mode splits the tangent the same way (linear).
_SPLITS = ({"ary": (6,), "indices_or_sections": 3}, {"ary": (4, 3), "indices_or_sections": [1, 3]},
           {"ary": (2, 6, 3), "indices_or_sections": 2, "axis": -2},
           {"ary": (3, 4), "indices_or_sections": [3], "axis": -1})


@adjoint(np.split, retake="always", write_back="pieces", linear=True, examples=_SPLITS, items=_pieces, returns_sequence=True, may_view=True)
def split(out, ary, indices_or_sections, axis=0, *, d_out):
    d_ary = np.concatenate(d_out, axis)


@adjoint(np.array_split, retake="always", write_back="pieces", linear=True, items=_pieces, returns_sequence=True, may_view=True, examples=(
    {"ary": (7,), "indices_or_sections": 3}, {"ary": (2, 5, 3), "indices_or_sections": 2, "axis": -2},
    {"ary": (4, 3), "indices_or_sections": [1, 2]}))
def array_split(out, ary, indices_or_sections, axis=0, *, d_out):
    d_ary = np.concatenate(d_out, axis)


@adjoint(np.hsplit, retake="always", write_back="pieces", linear=True, items=_pieces, returns_sequence=True, may_view=True, examples=(
    {"ary": (6,), "indices_or_sections": 2}, {"ary": (3, 4), "indices_or_sections": [1]},
    {"ary": (2, 4, 3), "indices_or_sections": 2}))
def hsplit(out, ary, indices_or_sections, *, d_out):
    d_ary = np.concatenate(d_out, min(np.ndim(ary), 2) - 1)  # columns, or a vector's items


@adjoint(np.vsplit, retake="always", write_back="pieces", linear=True, items=_pieces, returns_sequence=True, may_view=True, examples=(
    {"ary": (4, 3), "indices_or_sections": 2}, {"ary": (5, 2, 3), "indices_or_sections": [2, 4]}))
def vsplit(out, ary, indices_or_sections, *, d_out):
    d_ary = np.concatenate(d_out, 0)


@adjoint(np.dsplit, retake="always", write_back="pieces", linear=True, items=_pieces, returns_sequence=True, may_view=True, examples=(
    {"ary": (2, 3, 4), "indices_or_sections": 2}, {"ary": (2, 2, 5, 1), "indices_or_sections": [1, 3]}))
def dsplit(out, ary, indices_or_sections, *, d_out):
    d_ary = np.concatenate(d_out, 2)


def _axes_given(axis: "int | tuple | None") -> int:
    """How many arrays ``np.gradient(f, axis=axis)`` returns where ``axis`` says (several axes)."""
    return len(axis) if isinstance(axis, (tuple, list)) and len(axis) > 1 else 0


# np.gradient is linear in f for fixed spacing (one number, or the coordinates along the one axis);
# several spacings, one per axis, are not taken by this rule and so are refused.
@adjoint(np.gradient, linear=True, items=_axes_given, returns_sequence=True, examples=(
    {"f": (5,)}, {"f": (5,), "spacing": 0.5}, {"f": (3, 4)}, {"f": (3, 4), "axis": -1},
    {"f": (2, 3, 4), "axis": (0, -1)}, {"f": (6,), "spacing": np.array([0.0, 0.3, 0.7, 1.2, 1.4, 2.0])},
    {"f": (4, 5), "axis": 0, "edge_order": 2}, {"f": (2, 4, 3), "spacing": 0.25, "axis": -2}))
def gradient(out, f, spacing=1.0, *, axis=None, edge_order=1, d_out):
    d_f = gradient_grad(d_out, f, spacing, axis, edge_order)


@adjoint(gradient_grad, linear=True, examples=(
    {"grad": (5,), "f": np.zeros(5)}, {"grad": (2, 3, 4), "f": np.zeros((3, 4))},
    {"grad": (3, 4), "f": np.zeros((3, 4)), "spacing": 0.5, "axis": 1, "edge_order": 2}))
def gradient_grad_rule(out, grad, f, spacing=1.0, axis=None, edge_order=1, *, d_out):
    d_grad = np.asarray(np.gradient(d_out, spacing, axis=axis, edge_order=edge_order))  # D's transpose's adjoint: D


declare(gradient_grad, zero_derivative=("f",))  # f is read for its shape


# -- the rules of the helpers above (generated code differentiated again calls them) ------------
# The adjoints of shape functions are linear in the adjoint they move: the tangent is the same call.

@tangent(concatenate_grad, examples=({"grad": (4,), "arrays": [np.zeros(2), np.zeros(2)]},))
def concatenate_grad_rule(out, grad, arrays, axis=0, *, t_grad):
    t_out = concatenate_grad(t_grad, arrays, axis)


@tangent(stack_grad, examples=({"grad": (2, 3), "arrays": [np.zeros(3), np.zeros(3)]},))
def stack_grad_rule(out, grad, arrays, axis=0, *, t_grad):
    t_out = stack_grad(t_grad, arrays, axis)


# pad_grad and pad_jvp are linear in what they move and each other's transpose; the primal array is
# read for its shape (and, for maximum, minimum and median, the order of its elements).
@adjoint(pad_grad, linear=True, examples=(
    {"grad": (5, 6), "array": np.zeros((3, 4)), "pad_width": 1},
    {"grad": (7,), "array": np.zeros(4), "pad_width": (1, 2), "mode": "edge"},
    {"grad": (6, 7), "array": np.zeros((3, 4)), "pad_width": ((1, 2), (3, 0)), "mode": "symmetric", "reflect_type": "odd"},
    {"grad": (8,), "array": np.zeros(5), "pad_width": (2, 1), "mode": "mean", "stat_length": 2},
    {"grad": (8,), "array": np.array([0.3, 0.9, 0.1, 0.5, 0.7]), "pad_width": (2, 1), "mode": "median"}))
def pad_grad_rule(out, grad, array, pad_width, mode="constant", stat_length=None, reflect_type="even", *, d_out):
    d_grad = pad_jvp(d_out, array, pad_width, mode, stat_length, reflect_type)


@adjoint(pad_jvp, linear=True, examples=(
    {"t_array": (3, 4), "array": np.zeros((3, 4)), "pad_width": 1},
    {"t_array": (4,), "array": np.zeros(4), "pad_width": (3, 2), "mode": "wrap"},
    {"t_array": (3, 4), "array": np.zeros((3, 4)), "pad_width": 2, "mode": "linear_ramp"},
    {"t_array": (5,), "array": np.array([0.3, 0.9, 0.1, 0.5, 0.7]), "pad_width": (2, 1), "mode": "maximum",
     "stat_length": 3}))
def pad_jvp_rule(out, t_array, array, pad_width, mode="constant", stat_length=None, reflect_type="even", *, d_out):
    d_t_array = pad_grad(d_out, array, pad_width, mode, stat_length, reflect_type)


@tangent(joined_grad, examples=({"grad": (4,), "arrays": [np.zeros(2), np.zeros(2)], "how": "hstack"},
                                {"grad": (2, 3), "arrays": [np.zeros(3), np.zeros(3)], "how": "vstack"}))
def joined_grad_rule(out, grad, arrays, how, t_grad):
    t_out = joined_grad(t_grad, arrays, how)


@tangent(repeat_grad, examples=({"grad": (6,), "a": np.zeros(3), "repeats": 2},))
def repeat_grad_rule(out, grad, a, repeats, axis=None, *, t_grad):
    t_out = repeat_grad(t_grad, a, repeats, axis)


@tangent(tile_grad, examples=({"grad": (6,), "a": np.zeros(3), "reps": 2},))
def tile_grad_rule(out, grad, a, reps, t_grad):
    t_out = tile_grad(t_grad, a, reps)


@tangent(diag_grad, examples=({"grad": (3, 3), "v": np.zeros(3)}, {"grad": (3,), "v": np.zeros((3, 4)), "k": 1}))
def diag_grad_rule(out, grad, v, k=0, *, t_grad):
    t_out = diag_grad(t_grad, v, k)


@tangent(diagonal_grad, examples=({"grad": (3,), "a": np.zeros((3, 4))},))
def diagonal_grad_rule(out, grad, a, offset=0, axis1=0, axis2=1, *, t_grad):
    t_out = diagonal_grad(t_grad, a, offset, axis1, axis2)


@tangent(append_grad, examples=({"grad": (5,), "arr": np.zeros(3), "values": np.zeros(2), "axis": None, "which": 1},))
def append_grad_rule(out, grad, arr, values, axis, which, t_grad):
    t_out = append_grad(t_grad, arr, values, axis, which)


@tangent(diff_piece, examples=({"grad": (5,), "a": np.zeros(3), "prepend": 0.0, "append": np.zeros(2), "which": 0},
                              {"grad": (2, 2), "a": np.zeros((2, 3)), "n": 2, "axis": 1, "append": np.zeros((2, 1))}))
def diff_piece_rule(out, grad, a, n=1, axis=-1, prepend=None, append=None, which=1, *, t_grad):
    t_out = diff_piece(t_grad, a, n, axis, prepend, append, which)


@tangent(diff_grad, examples=({"grad": (4,), "a": np.zeros(5)},))
def diff_grad_rule(out, grad, a, n=1, axis=-1, *, t_grad):
    t_out = diff_grad(t_grad, a, n, axis)


@tangent(take_grad, examples=({"grad": (3,), "a": np.zeros(4), "indices": np.array([0, 0, 2])},))
def take_grad_rule(out, grad, a, indices, axis=None, *, t_grad):
    t_out = take_grad(t_grad, a, indices, axis)


@tangent(take_along_axis_grad, examples=({"grad": (3,), "arr": np.zeros(4), "indices": np.array([0, 0, 2]),
                                          "axis": 0},))
def take_along_axis_grad_rule(out, grad, arr, indices, axis, t_grad):
    t_out = take_along_axis_grad(t_grad, arr, indices, axis)


@tangent(sort_grad, examples=({"grad": (4,), "a": np.array([0.3, 0.1, 0.9, 0.5])},))
def sort_grad_rule(out, grad, a, axis=-1, *, t_grad):
    t_out = sort_grad(t_grad, a, axis)  # the order is piecewise constant in a


# Inputs the helpers read for their shape, their length or their sorting order only: a varied
# argument there carries no derivative (any other input without one is refused where it varies).
# What they hand back (view, may_view, returns_sequence) is checked against NumPy
# (tests/rules/test_rule_facts_against_numpy.py): generated code that writes into it copies first.
declare(pad_grad, pad_jvp, zero_derivative=("array",))
declare(concatenate_grad, stack_grad, joined_grad, zero_derivative=("arrays",))
# (their pieces are the adjoint's, in a new list: the list of arrays joined is read for its shapes only,
# so a list built by appends is grown in place, memory/lists.py)
declare(concatenate_grad, stack_grad, joined_grad, holds_no_list=True)
declare(repeat_grad, tile_grad, diagonal_grad, diff_grad, take_grad, sort_grad, zero_derivative=("a",))
declare(diag_grad, zero_derivative=("v",))
declare(append_grad, zero_derivative=("arr", "values"))
declare(take_along_axis_grad, zero_derivative=("arr",))
declare(diff_piece, zero_derivative=("a", "prepend", "append"))
declare(append_grad, view=True)  # its first argument
declare(concatenate_grad, stack_grad, joined_grad, may_view=True)  # pieces of their first argument
declare(concatenate_grad, stack_grad, joined_grad, returns_sequence=True)


# -- batched forms (vector mode, docs/api.md): each takes its directions on a leading axis, and gives,
# direction by direction, what the operation gives; an option without one raises TypeError ----------

def _data_axes(axis: Any, ndim: int) -> Any:
    """Axes of a value of rank ``ndim`` (None: all) as axes of its directions' data."""
    if axis is None:
        return tuple(range(1, ndim + 1))
    if isinstance(axis, (tuple, list)):
        return tuple(data_axis(x, ndim) for x in axis)
    return data_axis(axis, ndim)


def _rank(data: np.ndarray) -> int:
    return data.ndim - 1


@batched(np.take_along_axis, directions=("arr",))
def take_along_axis_batched(arr, indices, axis):
    if axis is None:
        return np.take_along_axis(np.reshape(arr, (arr.shape[0], -1)), np.ravel(indices)[None], axis=1)
    return np.take_along_axis(arr, np.asarray(indices)[None], axis=data_axis(axis, _rank(arr)))


@batched(take_along_axis_grad, directions=("grad",))
def take_along_axis_grad_batched(grad, arr, indices, axis):
    count = grad.shape[0]
    if axis is None:
        result = np.zeros((count, np.size(arr)), dtype=np.result_type(grad, 1.0))
        np.add.at(result, (slice(None), np.ravel(indices)), np.reshape(grad, (count, -1)))
        return np.reshape(result, (count,) + np.shape(arr))
    result = np.zeros((count,) + np.shape(arr), dtype=np.result_type(grad, 1.0))
    ndim = np.ndim(arr)
    axis = axis % ndim
    index = tuple(np.asarray(indices) if d == axis else
                  np.reshape(np.arange(result.shape[d + 1]), [-1 if k == d else 1 for k in range(ndim)])
                  for d in range(ndim))
    np.add.at(result, (slice(None),) + index, grad)
    return result


@batched(sort_grad, directions=("grad",))
def sort_grad_batched(grad, a, axis=-1):
    return take_along_axis_grad_batched(grad, a, np.argsort(a, axis=axis, kind="stable"), axis)


@batched(np.tile, directions=("A",))
def tile_batched(A, reps):
    reps = tuple(np.atleast_1d(reps).tolist())
    shape = A.shape[1:]
    ndim = max(len(shape), len(reps))
    full = np.reshape(A, (A.shape[0],) + (1,) * (ndim - len(shape)) + shape)
    return np.tile(full, (1,) + (1,) * (ndim - len(reps)) + reps)


@batched(tile_grad, directions=("grad",))
def tile_grad_batched(grad, a, reps):
    shape = np.shape(a)
    reps = tuple(np.atleast_1d(reps).tolist())
    ndim = max(len(shape), len(reps))
    shape_full = (1,) * (ndim - len(shape)) + tuple(shape)
    reps_full = (1,) * (ndim - len(reps)) + reps
    split = [n for pair in zip(reps_full, shape_full) for n in pair]
    summed = np.sum(np.reshape(grad, [grad.shape[0]] + split), axis=tuple(range(1, 2 * ndim + 1, 2)))
    return np.reshape(summed, (grad.shape[0],) + tuple(shape))


@batched(np.flip, directions=("m",))
def flip_batched(m, axis=None):
    return np.flip(m, _data_axes(axis, _rank(m)))


@batched(np.fliplr, directions=("m",))
def fliplr_batched(m):
    if _rank(m) < 2:
        raise TypeError("np.fliplr of fewer than two axes")
    return np.flip(m, 2)


@batched(np.flipud, directions=("m",))
def flipud_batched(m):
    if _rank(m) < 1:
        raise TypeError("np.flipud of a number")
    return np.flip(m, 1)


@batched(np.diff, directions=("a",))
def diff_batched(a, n=1, axis=-1, **options):
    if options or _rank(a) == 0:
        raise TypeError("np.diff with prepend= or append=, or of a number, has no batched form")
    return np.diff(a, n, axis=data_axis(axis, _rank(a)))


@batched(diff_grad, directions=("grad",))
def diff_grad_batched(grad, a, n=1, axis=-1):
    widths = [(0, 0)] * grad.ndim
    axis = data_axis(axis, _rank(grad))
    widths[axis] = (1, 1)
    for _ in range(n):
        grad = -np.diff(np.pad(grad, widths), axis=axis)
    return np.reshape(grad, (grad.shape[0],) + np.shape(a))


@batched(np.repeat, directions=("a",))
def repeat_batched(a, repeats, axis=None):
    if axis is None:
        return np.repeat(np.reshape(a, (a.shape[0], -1)), repeats, axis=1)
    return np.repeat(a, repeats, axis=data_axis(axis, _rank(a)))


@batched(repeat_grad, directions=("grad",))
def repeat_grad_batched(grad, a, repeats, axis=None):
    shape = np.shape(a)
    n = int(np.prod(shape)) if axis is None else shape[axis]
    moved = np.moveaxis(grad, 1 if axis is None else data_axis(axis, len(shape)), 1)
    owner = np.repeat(np.arange(n), np.broadcast_to(np.asarray(repeats, dtype=np.intp), (n,)))
    result = np.zeros((grad.shape[0], n) + moved.shape[2:], dtype=np.result_type(grad, 1.0))
    np.add.at(result, (slice(None), owner), moved)
    if axis is None:
        return np.reshape(result, (grad.shape[0],) + shape)
    return np.moveaxis(result, 1, data_axis(axis, len(shape)))


@batched(np.squeeze, directions=("a",))
def squeeze_batched(a, axis=None):
    if axis is None:
        return np.reshape(a, (a.shape[0],) + tuple(n for n in a.shape[1:] if n != 1))
    return np.squeeze(a, _data_axes(axis, _rank(a)))


@batched(np.swapaxes, directions=("a",))
def swapaxes_batched(a, axis1, axis2):
    return np.swapaxes(a, data_axis(axis1, _rank(a)), data_axis(axis2, _rank(a)))


@batched(np.moveaxis, directions=("a",))
def moveaxis_batched(a, source, destination):
    return np.moveaxis(a, _data_axes(source, _rank(a)), _data_axes(destination, _rank(a)))


@batched(np.diagonal, directions=("a",))
def diagonal_batched(a, offset=0, axis1=0, axis2=1):
    return np.diagonal(a, offset, data_axis(axis1, _rank(a)), data_axis(axis2, _rank(a)))


@batched(diagonal_grad, directions=("grad",))
def diagonal_grad_batched(grad, a, offset=0, axis1=0, axis2=1):
    result = np.zeros((grad.shape[0],) + np.shape(a), dtype=np.result_type(grad, 1.0))
    ndim = np.ndim(a)
    view = np.moveaxis(result, (data_axis(axis1, ndim), data_axis(axis2, ndim)), (-2, -1))
    i = np.arange(grad.shape[-1]) if grad.ndim > 1 else np.arange(0)
    view[..., i + max(-offset, 0), i + max(offset, 0)] = grad
    return result


@batched(np.diag, directions=("v",))
def diag_batched(v, k=0):
    if _rank(v) == 2:
        return np.diagonal(v, k, 1, 2)
    if _rank(v) != 1:
        raise TypeError("np.diag of other than a vector or a matrix")
    size = v.shape[1] + abs(k)
    result = np.zeros((v.shape[0], size, size), dtype=v.dtype)
    i = np.arange(v.shape[1])
    result[:, i + max(-k, 0), i + max(k, 0)] = v
    return result


@batched(diag_grad, directions=("grad",))
def diag_grad_batched(grad, v, k=0):
    if np.ndim(v) == 1:
        return np.array(np.diagonal(grad, k, 1, 2))
    return diagonal_grad_batched(grad, v, k)


def _triangle(m: np.ndarray, k: int, lower: bool) -> np.ndarray:
    if _rank(m) < 2:
        raise TypeError("np.tril or np.triu of fewer than two axes")
    rows, columns = m.shape[-2:]
    kept = np.tri(rows, columns, k, dtype=bool) if lower else ~np.tri(rows, columns, k - 1, dtype=bool)
    return np.where(kept, m, np.zeros(1, dtype=m.dtype))


@batched(np.tril, directions=("m",))
def tril_batched(m, k=0):
    return _triangle(m, k, True)


@batched(np.triu, directions=("m",))
def triu_batched(m, k=0):
    return _triangle(m, k, False)


@batched(np.take, directions=("a",))
def take_batched(a, indices, axis=None, out=None, mode="raise"):
    if out is not None:
        raise TypeError("np.take with out= has no batched form")
    if axis is None:
        return np.take(np.reshape(a, (a.shape[0], -1)), indices, axis=1, mode=mode)
    return np.take(a, indices, axis=data_axis(axis, _rank(a)), mode=mode)


@batched(take_grad, directions=("grad",))
def take_grad_batched(grad, a, indices, axis=None):
    count = grad.shape[0]
    if axis is None:
        result = np.zeros((count, np.size(a)), dtype=np.result_type(grad, 1.0))
        np.add.at(result, (slice(None), np.ravel(indices)), np.reshape(grad, (count, -1)))
        return np.reshape(result, (count,) + np.shape(a))
    result = np.zeros((count,) + np.shape(a), dtype=np.result_type(grad, 1.0))
    np.add.at(result, (slice(None),) * data_axis(axis, np.ndim(a)) + (indices,), grad)
    return result


@batched(diff_piece, directions=("grad",))
def diff_piece_batched(grad, a, n=1, axis=-1, prepend=None, append=None, which=1):
    count = grad.shape[0]
    a = np.asarray(a)
    axis = axis % max(a.ndim, 1)
    before, after = _diff_width(prepend, axis), _diff_width(append, axis)
    whole = list(np.shape(a))
    whole[axis] += before + after
    grad = diff_grad_batched(grad, np.empty(whole, dtype=np.result_type(a, 1.0)), n, axis)
    start, stop = ((0, before), (before, before + a.shape[axis]), (before + a.shape[axis], whole[axis]))[which]
    piece = np.take(grad, np.arange(start, stop), axis=axis + 1)
    like = (prepend, a, append)[which]
    if like is None:
        return np.zeros(count)
    if np.ndim(like) == 0:
        return np.sum(np.reshape(piece, (count, -1)), axis=1)
    return np.reshape(piece, (count,) + np.shape(like))


def _joined_batched(tup: list, how: str) -> np.ndarray:
    """``np.<how>(tup)`` of directions' data (how: hstack, vstack, dstack, column_stack): each item shaped as
    NumPy shapes it before joining (a reshape adding length-1 axes), joined along the same axis.  (An array
    given as ``tup``, which NumPy iterates along its first axis, arrives as one array: refused.)"""
    if not isinstance(tup, list):
        raise TypeError("a join of an array's rows has no batched form")
    parts, axis = _joined_parts([np.empty(t.shape[1:]) for t in tup], how)
    return np.concatenate([np.reshape(t, t.shape[:1] + p.shape) for t, p in zip(tup, parts)], axis=axis + 1)


@batched(np.hstack, directions=("tup",))
def hstack_batched(tup, *, dtype=None, casting="same_kind"):
    if dtype is not None:
        raise TypeError("np.hstack with dtype= has no batched form")
    return _joined_batched(tup, "hstack")


@batched(np.vstack, directions=("tup",))
def vstack_batched(tup, *, dtype=None, casting="same_kind"):
    if dtype is not None:
        raise TypeError("np.vstack with dtype= has no batched form")
    return _joined_batched(tup, "vstack")


@batched(np.dstack, directions=("tup",))
def dstack_batched(tup):
    return _joined_batched(tup, "dstack")


@batched(np.column_stack, directions=("tup",))
def column_stack_batched(tup):
    return _joined_batched(tup, "column_stack")


@batched(joined_grad, directions=("grad",))
def joined_grad_batched(grad, arrays, how):
    count = grad.shape[0]
    parts, axis = _joined_parts(arrays, how)
    pieces = np.split(grad, np.cumsum([p.shape[axis] for p in parts])[:-1], axis=axis + 1)
    pieces = [np.reshape(piece, (count,) + np.shape(a)) for piece, a in zip(pieces, arrays)]
    if not isinstance(arrays, np.ndarray):
        return pieces
    whole = np.zeros((count,) + np.shape(arrays), dtype=np.result_type(grad, 1.0))
    for i, piece in enumerate(pieces):
        whole[:, i] = piece
    return whole
