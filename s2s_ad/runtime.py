"""The few helpers generated code may call.

Generated code calls a helper only where the shape of a value is not known
when the code is generated; where it is known, the generator writes the
plain NumPy expression instead.  Every helper here is small, has no state,
and is itself differentiable by the templates (so generated code can be
transformed again for higher derivatives).
"""
from __future__ import annotations

import math
import numbers
from typing import Any, Optional

import random

import numpy as np

from .draws import is_generator
from .errors import TransformError


def checkpointed(steps: Any, every: Optional[int] = None, snapshots: Optional[int] = None) -> Any:
    """Mark a loop for checkpointing: ``for t in s2s_ad.checkpointed(range(n)):``.

    Run as plain Python it is ``steps`` itself.  Reverse mode then keeps the
    loop's state once every ``every`` iterations (about sqrt(n) by default)
    instead of every iteration, and runs each segment again when its reverse
    needs it: memory about 2 sqrt(n) records instead of n, one more forward
    pass of the loop, the same gradient.  ``snapshots=c`` keeps at most ``c``
    states: segments of ceil(n / c) iterations (equal segments, not yet the
    binomial schedule of Revolve, which would run fewer iterations again).
    """
    return steps


class Snapshots(int):
    """``checkpointed(steps, snapshots=c)``'s ``c`` in generated code: a number of snapshots, where a
    plain int is ``every`` (iterations per segment)."""


def snapshots(count: int) -> Snapshots:
    """``count`` marked as a number of snapshots for ``checkpoint_stride``."""
    if int(count) < 1:
        raise ValueError(f"checkpointed(..., snapshots={count}): at least one snapshot is needed")
    return Snapshots(int(count))


def checkpoint_stride(n: int, every: Optional[int] = None) -> int:
    """Iterations per checkpointed segment: ``every``; for ``snapshots(c)``, ceil(n / c), so at most
    ``c`` states are kept; else the ceiling of sqrt(n)."""
    if isinstance(every, Snapshots):
        return max(1, -(-n // every))
    if every is not None:
        if int(every) < 1:
            raise ValueError(f"checkpointed(..., every={every}): a segment needs at least one iteration")
        return int(every)
    return math.isqrt(n - 1) + 1 if n > 0 else 1


def stop_gradient(x: Any) -> Any:
    """``x`` itself; differentiation treats it as a constant (``s2s_ad.stop_gradient``)."""
    return x


def unbroadcast(grad: Any, like: Any) -> Any:
    """``grad`` brought to the shape of ``like``: summed over the axes NumPy broadcast.

    ``grad`` is the adjoint of a result that ``like`` took part in.  Where
    ``grad`` is the smaller one in some axis (a scalar seed flowing into an
    array), it is spread over that axis first.  A Python number ``like`` gets
    a NumPy scalar.
    """
    # the common cases first, without np.shape: this runs for many statements of generated code
    if type(grad) is np.ndarray and type(like) is np.ndarray and grad.shape == like.shape:
        return grad
    if type(grad) is float and type(like) is float:
        return grad
    return unbroadcast_to(grad, np.shape(like))


def unbroadcast_to(grad: Any, shape: tuple) -> Any:
    """``unbroadcast`` given the shape alone (what loops record when the value is not needed)."""
    grad_shape = grad.shape if type(grad) is np.ndarray else np.shape(grad)
    if grad_shape == shape:
        return grad
    if not shape:
        return np.sum(grad)
    full = np.broadcast_shapes(grad_shape, shape)
    if full != grad_shape:
        grad = np.broadcast_to(grad, full)
        if full == shape:
            return grad.copy()  # writable, like every other adjoint
    extra = len(full) - len(shape)
    axes = tuple(range(extra)) + tuple(extra + i for i, n in enumerate(shape) if n == 1 and full[extra + i] != 1)
    return np.sum(grad, axis=axes).reshape(shape)


def zeros_like(value: Any) -> Any:
    """The zero gradient of ``value``: ``0.0`` for a number, else an array of zeros."""
    if isinstance(value, (int, float)):
        return 0.0
    dtype = np.result_type(value, 1.0) if isinstance(value, (np.ndarray, np.generic)) else float
    return np.zeros(_adjoint_shape(value), dtype=dtype)


def _adjoint_shape(value: Any) -> tuple:
    """The shape of ``value``'s adjoint, an array; a list of arrays of different shapes (the pieces of
    np.array_split) has none, and is refused with what to write instead."""
    # (asked outright: NumPy 2 raises on such a list, NumPy 1 makes an array of objects of it)
    if isinstance(value, (list, tuple)) and len({np.shape(item) for item in value}) > 1:
        raise ValueError("s2s_ad has no adjoint for a list of arrays of different shapes read by a variable "
                         "index, a loop or a slice; unpack it (a, b, c = np.array_split(x, 3)) or read it "
                         "by constant indices (parts[0])")
    return np.shape(value)


def zero_tangent(value: Any) -> Any:
    """The zero tangent of ``value`` in forward mode, shaped like it: 0.0 for a number, zeros for
    an array, ``None`` for ``None``, a tuple of zeros for a tuple (the tape included: its chain is
    walked without recursion, however long)."""
    if not isinstance(value, tuple):
        return None if value is None else zeros_like(value)
    chain = []
    while isinstance(value, tuple) and value:
        chain.append(value[:-1])
        value = value[-1]
    tail = () if isinstance(value, tuple) else zero_tangent(value)
    for items in reversed(chain):
        tail = tuple(zero_tangent(item) for item in items) + (tail,)
    return tail


def writable_copy(grad: Any, like: Any) -> np.ndarray:
    """A fresh float array of ``like``'s shape holding ``grad``, for in-place updates."""
    copy = np.empty(np.shape(like), dtype=np.result_type(grad, 1.0))
    copy[...] = grad  # filled in place, as in broadcast_reduced
    return copy


def _fancy_stores_copy_overlap() -> bool:
    """Whether this NumPy copies the right side of an integer-array store that overlaps the array
    (``b[[3, 2, 1, 0]] = b`` reverses ``b`` from NumPy 2.0 on; before, it wrote element by element)."""
    b = np.arange(4.0)
    b[[3, 2, 1, 0]] = b
    return bool(b[0] == 3.0)


FANCY_STORES_COPY_OVERLAP = _fancy_stores_copy_overlap()


def held_apart(value: Any) -> Any:
    """``value`` with each array in it copied (a tuple or list of numbers and arrays, nested, or one
    array): what a result handed to the caller holds, kept apart from arrays the reverse sweep puts
    back afterwards."""
    if isinstance(value, np.ndarray):
        return value.copy()
    if type(value) in (tuple, list):
        return type(value)(held_apart(item) for item in value)
    return value


def stored_part(grad: np.ndarray, index: Any, value: Any) -> Any:
    """The adjoint of ``value`` in ``array[index] = value`` (``grad`` is the adjoint of ``array``).

    ``grad[index]``, copied (the caller zeroes ``grad[index]`` next) and
    reduced to ``value``'s shape.  Where an integer-array index names an
    element twice, NumPy keeps one of the writes; replaying the store with
    positions finds which, and only that position takes the adjoint.
    """
    part = np.array(grad[index], dtype=np.result_type(grad, 1.0))
    positions = np.arange(part.size).reshape(part.shape)
    kept = np.full(np.shape(grad), -1, dtype=np.intp)
    kept[index] = positions
    return unbroadcast(np.where(kept[index] == positions, part, 0.0), value)


def check_number_update(value: Any, name: str, shared: str, filename: str, line: int) -> None:
    """Before ``name op= v`` runs as a new binding (Python's meaning for a number): refuse an object
    that ``op=`` would change in place (an array, 0-d included, or a list) while ``shared`` (another
    name, the argument) sees it."""
    if not isinstance(value, (numbers.Number, np.generic, tuple, str)):
        raise TransformError(f"the in-place update of {name}", f"{name} is {shared}, and it holds an array here: "
                             f"NumPy would change that array too; write {name} = {name} + ... (a new array), or "
                             f"copy it first", filename=filename, line=line)


def check_no_derivative(value: Any, function: str, name: str, filename: str, line: int) -> None:
    """Before a call whose rule gives no derivative in its input ``name``, where the argument depends
    on what is differentiated: an integer (an axis, a count) has none to lose; a float would lose its
    derivative silently, so it is refused."""
    try:
        held = np.asarray(value)
    except (ValueError, TypeError):  # a ragged list: not a number NumPy would read as one
        return
    inexact = held.size > 0 and held.dtype.kind in "fc"  # an empty shape () reads as an empty float array
    if inexact:
        raise TransformError(f"the call of {function}", f"its argument {name} depends on the differentiated "
                             f"inputs, but its rule gives no derivative in {name}; pass a value that does not "
                             f"depend on them (wrap it in s2s_ad.stop_gradient(...) if a zero derivative is "
                             f"meant), or add a rule (see README, 'Adding a rule')", filename=filename, line=line)


def derivative_lost_by(value: Any, function: str, name: str, filename: str, line: int) -> None:
    """A mark in a gradient's plain function (``pipeline.build_gradient_only``) for a parameter the
    gradient is not taken by whose float would reach a rule input without a derivative (``function``'s
    ``name``, at ``filename:line``).  It does nothing when it runs; forward mode over the gradient by
    that parameter turns it into ``check_no_derivative`` (``analysis.guard_lost_derivatives``)."""


def check_view_update(array: Any, parts: int, name: str, hint: str, filename: str, line: int) -> None:
    """Before ``name op= v`` with ``name = array[i]`` runs as a write into ``array`` (NumPy's meaning
    where ``array[i]`` is a view): refuse where ``array`` has no more dimensions than the index has
    parts, so that ``array[i]`` is one number (a copy, which ``op=`` would only rebind)."""
    if np.ndim(array) <= parts:
        raise TransformError(f"the in-place update of {name}", hint, filename=filename, line=line)


def random_states() -> tuple:
    """The global random states (``np.random.*``, Python's ``random.*``): a checkpointed loop
    keeps them per segment, so a segment run again draws what it drew the first time."""
    return np.random.get_state(), random.getstate()


def set_random_states(states: tuple) -> None:
    """Put back what ``random_states`` returned."""
    np.random.set_state(states[0])
    random.setstate(states[1])


def draw(generator: Any, method: str, *args: Any, **kwargs: Any) -> Any:
    """``generator.<method>(*args, **kwargs)``: a draw from a generator object the code reads as a value
    (an argument, one it made, ``rng.normal(size=3)``).  ``api`` replays its state in every pass of a
    derivative taken in several (``draws.Draws``); anything but a generator is refused here."""
    if not is_generator(generator):
        raise TypeError(f"{type(generator).__name__}.{method}() was called as a random draw, but only the "
                        "methods of np.random.Generator, np.random.RandomState and random.Random objects, "
                        "and the array methods with a rule, can be called in a differentiated function")
    return getattr(generator, method)(*args, **kwargs)


def formatted(layout: tuple, *values: Any) -> str:
    """An f-string: ``layout`` holds its text and, for each value, (conversion, format spec)."""
    out, next_value = [], iter(values)
    for part in layout:
        if isinstance(part, str):
            out.append(part)
            continue
        conversion, spec = part
        value = next(next_value)
        value = {115: str, 114: repr, 97: ascii}.get(conversion, lambda v: v)(value)
        out.append(format(value, spec))
    return "".join(out)


def check_assertion(test: Any, message: Any = None) -> None:
    """``assert test, message`` in generated code (the message is computed before the test)."""
    if not test:
        raise AssertionError(message) if message is not None else AssertionError


def raise_exception(kind: type, *args: Any, **kwargs: Any) -> None:
    """``raise kind(*args, **kwargs)`` in generated code: the user's exception, raised in the forward
    sweep where the primal function would raise it (so no derivative is ever computed past it)."""
    raise kind(*args, **kwargs)


def added_at(a: Any, index: Any, value: Any) -> np.ndarray:
    """A copy of ``a`` after ``np.add.at(a, index, value)``: what the adjoint's in-place
    accumulation means when forward mode differentiates generated code (second derivatives)."""
    out = np.array(a, dtype=np.result_type(a, value, 1.0))
    np.add.at(out, index, value)
    return out


def astype(a: Any, dtype: Any) -> np.ndarray:
    """``a.astype(dtype)``: a new array (what the method means in differentiated code)."""
    return np.asarray(a).astype(dtype)


def cast_derivative(d: Any, dtype: Any) -> Any:
    """A derivative carried through a cast to ``dtype``: itself (in floats) for a cast to a
    floating type; zeros for a cast to integers or booleans, which carries no derivative."""
    if np.issubdtype(np.dtype(dtype), np.inexact):
        return np.array(d, dtype=np.result_type(d, 1.0))
    return np.zeros(np.shape(d))


def list_append(items: list, item: Any) -> list:
    """A new list: ``items`` then ``item``.  What ``items.append(item)`` means in differentiated code.

    ``items`` may also be an array of rows (a zero tangent or adjoint of a
    list): it is read row by row, never added to.
    """
    return [*items, item]


def gradient_grad(grad: Any, f: Any, spacing: Any = 1.0, axis: Any = None, edge_order: int = 1) -> np.ndarray:
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
        along = np.gradient(np.eye(size), spacing, axis=0, edge_order=edge_order)  # d_i = sum_j D_ij f_j
        moved = np.tensordot(along.T, np.moveaxis(np.asarray(part), ax, 0), axes=1)
        result = result + np.moveaxis(moved, 0, ax)
    return result


def linspace_weights(num: int, endpoint: bool = True, ndim: int = 0) -> np.ndarray:
    """How much of ``stop`` each point of ``np.linspace(start, stop, num, endpoint)`` holds
    (``1 -`` that of ``start``), shaped to broadcast against ``ndim``-dimensional endpoints."""
    return np.reshape(np.linspace(0.0, 1.0, num, endpoint=endpoint), (-1,) + (1,) * ndim)


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
        if before or after:
            matrix = _pad_axis_map(shape[axis], before, after, mode, stats[axis], reflect_type)
            result = _apply_along(matrix.T, result, axis)
    return np.ascontiguousarray(result)


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


def getitem_grad(grad: Any, a: Any, index: Any) -> np.ndarray:
    """The adjoint of ``a[index]``: ``grad`` scattered into zeros shaped like ``a``.

    Where an integer index (an array, a list, a tuple inside the index) may
    name an element twice, each reading adds its part (``np.add.at``); a basic
    index (numbers, slices, ``None``, ``...``) or a boolean mask never repeats,
    and is written directly.
    """
    shape = _adjoint_shape(a)
    if isinstance(grad, (list, tuple)):  # the items of a list of equal arrays (np.split's pieces sliced)
        grad = np.asarray(grad)
    result = np.zeros(shape, dtype=np.result_type(grad, 1.0))
    if _never_repeats(index):
        result[index] = grad
    else:
        np.add.at(result, index, grad)
    return result


def _never_repeats(index: Any) -> bool:
    """True if ``a[index]`` names each element of ``a`` at most once (NumPy's basic indexing, or masks)."""
    parts = index if isinstance(index, tuple) else (index,)
    for part in parts:
        if isinstance(part, (bool, np.bool_)) or part is None or part is Ellipsis:
            continue
        if isinstance(part, (int, np.integer, slice)):
            continue
        if isinstance(part, np.ndarray) and (part.dtype == np.bool_ or part.ndim == 0):
            continue
        return False
    return True


# -- adjoints of shape functions (each linear in ``grad``) -------------------------------------


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


# -- special functions (for the math module's gamma family) ------------------------------------


def digamma(x: float) -> float:
    """The digamma function psi = d lgamma / dx, for a number (the derivative of ``math.lgamma``).

    Shifted up by the recurrence psi(x) = psi(x + 1) - 1/x until x >= 10, then the asymptotic
    series (error below 1e-14); reflected for negative x.
    """
    x = float(x)
    if x <= 0.0 and x == math.floor(x):
        return math.nan  # a pole
    if x < 0.0:
        return digamma(1.0 - x) - math.pi / math.tan(math.pi * x)
    shift = 0.0
    while x < 10.0:
        shift -= 1.0 / x
        x += 1.0
    inv = 1.0 / (x * x)
    series = inv * (1.0 / 12 - inv * (1.0 / 120 - inv * (1.0 / 252 - inv * (1.0 / 240 - inv * (1.0 / 132)))))
    return shift + math.log(x) - 0.5 / x - series


def trigamma(x: float) -> float:
    """psi'(x), the derivative of ``digamma`` (recurrence, asymptotic series, reflection)."""
    x = float(x)
    if x <= 0.0 and x == math.floor(x):
        return math.inf
    if x < 0.0:
        return -trigamma(1.0 - x) + (math.pi / math.sin(math.pi * x)) ** 2
    shift = 0.0
    while x < 10.0:
        shift += 1.0 / (x * x)
        x += 1.0
    inv = 1.0 / (x * x)
    series = (1.0 / x) * (1.0 + 1.0 / (2 * x) + inv * (1.0 / 6 - inv * (1.0 / 30 - inv * (1.0 / 42 - inv / 30))))
    return shift + series


def if_inexact(grad: Any, like: Any) -> Any:
    """``grad`` where ``like`` holds floats (or complex numbers), zeros where it holds integers or
    booleans: a value stored into such an array, or converted to one, is truncated, and so has no
    derivative (``b = np.arange(4); b[1] = 3 * x``, ``np.array(x, dtype="int32")``)."""
    if np.issubdtype(np.asarray(like).dtype, np.inexact):
        return grad
    return zeros_like(grad)


def item(a: Any) -> Any:
    """``a.item()``: the one number of a one-element array (or a NumPy number) as a Python number."""
    return a.item() if hasattr(a, "item") else a


def dtype_of(a: Any) -> np.dtype:
    """``a.dtype``: what an array (or a number, as NumPy would hold it) is made of."""
    return a.dtype if hasattr(a, "dtype") else np.asarray(a).dtype
