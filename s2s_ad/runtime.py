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


def as_floats(a: Any, *others: Any) -> np.ndarray:
    """``a`` as an array of at least floating point, of the type it makes with ``others``: a list of
    numbers too (``np.result_type`` reads a list as a description of fields, ``norm([x, y])``)."""
    a = np.asarray(a)
    return np.asarray(a, dtype=np.result_type(a, *(np.asarray(o) for o in others), 1.0))


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
                             f"meant), or add a rule (see docs/rules.md, 'Adding a rule')", filename=filename, line=line)


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


def broadcast_reduced(grad: Any, like: Any, axis: Any = None, keepdims: bool = False) -> np.ndarray:
    """Spread the adjoint of a reduction over ``like``'s shape (a new, writable array).

    ``grad`` has the reduced shape (``axis`` removed unless ``keepdims``).
    """
    shape = np.shape(like)
    if axis is not None and not keepdims:
        grad = np.expand_dims(grad, axis)
    # filled in place: a third of the time of np.array(np.broadcast_to(grad, shape)), which gradients
    # of every sum and mean pay on each call
    spread = np.empty(shape, dtype=np.result_type(grad, 1.0))
    spread[...] = grad
    return spread


def expand_reduced(x: Any, axis: Any = None, keepdims: bool = False) -> Any:
    """The result of a reduction, with its reduced axes back as length 1 (a view, not a copy):
    it broadcasts against the reduction's input."""
    if axis is None or keepdims:
        return x
    return np.expand_dims(x, axis)


def average_weights(a: Any, weights: Any, axis: Any = None) -> np.ndarray:
    """The weights of ``np.average(a, axis, weights)`` shaped to broadcast against ``a``: ones
    where there are none, a 1-d array along ``axis`` given its length there."""
    if weights is None:
        return np.ones(())
    weights = np.asarray(weights)
    if np.ndim(weights) == np.ndim(a) or np.ndim(weights) != 1 or not isinstance(axis, (int, np.integer)):
        return weights  # NumPy refuses the other shapes when the average is computed
    shape = [1] * np.ndim(a)
    shape[axis] = -1
    return np.reshape(weights, shape)


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


def _promoted(a: np.ndarray, b: np.ndarray, g: np.ndarray) -> tuple:
    """Matrix forms of matmul's operands and adjoint, with 1-D operands promoted as NumPy does."""
    a2 = a[np.newaxis, :] if a.ndim == 1 else a
    b2 = b[:, np.newaxis] if b.ndim == 1 else b
    g2 = np.asarray(g)
    if a.ndim == 1:
        g2 = np.expand_dims(g2, -2)
    if b.ndim == 1:
        g2 = np.expand_dims(g2, -1)
    return a2, b2, g2


def matmul_grad_a(grad: Any, a: Any, b: Any) -> Any:
    """The adjoint of ``a`` in ``a @ b`` (any dimensions, 1-D promoted as NumPy does)."""
    a, b = np.asarray(a), np.asarray(b)
    if a.ndim == 0 or b.ndim == 0:  # np.dot of a scalar is a product
        return unbroadcast(grad * b, a)
    if a.ndim == 1 and b.ndim == 1:  # an inner product
        return grad * b
    a2, b2, g2 = _promoted(a, b, grad)
    result = g2 @ np.swapaxes(b2, -1, -2)
    if a.ndim == 1:
        result = result[..., 0, :]
    return unbroadcast(result, a)


def matmul_grad_b(grad: Any, a: Any, b: Any) -> Any:
    """The adjoint of ``b`` in ``a @ b``."""
    a, b = np.asarray(a), np.asarray(b)
    if a.ndim == 0 or b.ndim == 0:
        return unbroadcast(grad * a, b)
    if a.ndim == 1 and b.ndim == 1:
        return grad * a
    a2, b2, g2 = _promoted(a, b, grad)
    result = np.swapaxes(a2, -1, -2) @ g2
    if b.ndim == 1:
        result = result[..., 0]
    return unbroadcast(result, b)


def _dot_is_matmul(a: np.ndarray, b: np.ndarray) -> bool:
    """True where ``np.dot(a, b)`` is ``a @ b`` (or a product): unless ``a`` is N-D and ``b`` 3-D or more."""
    return a.ndim < 2 or b.ndim < 3


def dot_grad_a(grad: Any, a: Any, b: Any) -> Any:
    """The adjoint of ``a`` in ``np.dot(a, b)``.

    For N-D operands ``np.dot`` sums over the last axis of ``a`` and the
    second-to-last of ``b``, and keeps every other axis of both (no
    broadcasting of leading axes, unlike matmul).
    """
    a, b = np.asarray(a), np.asarray(b)
    if _dot_is_matmul(a, b):
        return matmul_grad_a(grad, a, b)
    kept_b = list(range(b.ndim - 2)) + [b.ndim - 1]  # b's axes in the result, in order
    return np.tensordot(grad, b, axes=(list(range(a.ndim - 1, np.ndim(grad))), kept_b))


def dot_grad_b(grad: Any, a: Any, b: Any) -> Any:
    """The adjoint of ``b`` in ``np.dot(a, b)`` (see ``dot_grad_a``)."""
    a, b = np.asarray(a), np.asarray(b)
    if _dot_is_matmul(a, b):
        return matmul_grad_b(grad, a, b)
    lead = list(range(a.ndim - 1))
    return np.moveaxis(np.tensordot(a, grad, axes=(lead, lead)), 0, -2)


def linspace_weights(num: int, endpoint: bool = True, ndim: int = 0) -> np.ndarray:
    """How much of ``stop`` each point of ``np.linspace(start, stop, num, endpoint)`` holds
    (``1 -`` that of ``start``), shaped to broadcast against ``ndim``-dimensional endpoints."""
    return np.reshape(np.linspace(0.0, 1.0, num, endpoint=endpoint), (-1,) + (1,) * ndim)


def inverse_axes(axes: Any) -> Any:
    """The permutation that undoes ``np.transpose(x, axes)`` (``None`` undoes itself)."""
    return None if axes is None else tuple(np.argsort(axes))


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


def _along_last(a: np.ndarray, axis: Any) -> tuple[np.ndarray, Any]:
    """``a`` with the ``axis`` dimensions moved last and merged into one, and how to undo it."""
    if axis is None:
        return a.reshape(1, -1), lambda r: r.reshape(a.shape)
    axes = tuple(int(x) % a.ndim for x in np.atleast_1d(axis))
    last = tuple(range(a.ndim - len(axes), a.ndim))
    moved = np.moveaxis(a, axes, last)
    return moved.reshape(moved.shape[:a.ndim - len(axes)] + (-1,)), \
        lambda r: np.moveaxis(r.reshape(moved.shape), last, axes)


def prod_others(a: Any, axis: Any = None) -> np.ndarray:
    """For each element of ``a``, the product of the others it is multiplied with in
    ``np.prod(a, axis)``: the derivative of ``np.prod``, without dividing (a zero in ``a`` is fine)."""
    a = as_floats(a)
    if a.size == 0:  # (the cumulative products below would leave one element where there is none)
        return np.zeros_like(a)
    flat, back = _along_last(a, axis)
    ones = np.ones(flat.shape[:-1] + (1,))
    before = np.cumprod(np.concatenate([ones, flat[..., :-1]], axis=-1), axis=-1)
    after = np.cumprod(np.concatenate([ones, flat[..., :0:-1]], axis=-1), axis=-1)[..., ::-1]
    return back(before * after)


def prod_others_jvp(a: Any, t: Any, axis: Any = None) -> np.ndarray:
    """The tangent of ``prod_others(a, axis)`` along ``t``: sum over j != i of t_j times the
    product of the elements other than i and j."""
    a = as_floats(a, t)
    flat, back = _along_last(a, axis)
    flat_t, _ = _along_last(np.broadcast_to(np.asarray(t, dtype=a.dtype), a.shape), axis)
    result = np.zeros_like(flat)
    for j in range(flat.shape[-1]):
        replaced = flat.copy()
        replaced[..., j] = flat_t[..., j]
        term = prod_others(replaced, -1)
        term[..., j] = 0.0
        result += term
    return back(result)


def cumsum_grad(grad: Any, a: Any, axis: Any = None) -> np.ndarray:
    """The adjoint of ``np.cumsum(a, axis)``: sums from the end (a flat ``grad`` when ``axis`` is None)."""
    grad = np.asarray(grad)
    if axis is None:
        return np.reshape(np.cumsum(grad[::-1])[::-1], np.shape(a))
    return np.flip(np.cumsum(np.flip(grad, axis), axis), axis)


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



# -- linear algebra -----------------------------------------------------------------------------


# NumPy 2 reads ``b`` in ``np.linalg.solve(a, b)`` as vectors only when it is 1-D; NumPy 1 whenever it
# has one dimension fewer than ``a`` (a stack of vectors).
_SOLVE_VECTORS_ONLY_1D = np.lib.NumpyVersion(np.__version__) >= "2.0.0"


def solve_columns(x: Any, a: Any, b: Any) -> Any:
    """``x`` as a stack of columns, as ``np.linalg.solve(a, b)`` reads ``b`` in the NumPy installed: a
    vector ``b`` gets a trailing axis of length 1.  (A missing tangent, the number 0, stays a number.)"""
    vectors = np.ndim(b) == 1 if _SOLVE_VECTORS_ONLY_1D else np.ndim(b) == np.ndim(a) - 1
    if vectors and np.ndim(x) >= 1:
        return np.expand_dims(x, -1)
    return x


def _matrix_norm(ndim: int, axis: Any) -> bool:
    return (axis is None and ndim == 2) or (isinstance(axis, tuple) and len(axis) == 2)


def norm_order(ord: Any, ndim: int, axis: Any) -> float:
    """The ``p`` of the p-norm ``np.linalg.norm(x, ord, axis)`` computes, whose derivative is
    ``sign(x) |x|**(p-1) / norm**(p-1)``; 0 for the norms made of a max or a min (see
    ``norm_max_weights``), of singular values (see ``norm_spectral_weights``) and for the count
    ``ord=0``.  Any other order raises: no rule, rather than a wrong number."""
    if ord is None or ord == "fro":
        return 2.0
    if _matrix_norm(ndim, axis):
        if _spectral(ord, ndim, axis) or ord in (1, -1, np.inf, -np.inf):
            return 0.0
    elif isinstance(ord, (int, float, np.integer, np.floating)):
        return 0.0 if ord == 0 or np.isinf(ord) else float(ord)
    raise ValueError(f"np.linalg.norm with ord={ord!r} has no derivative rule in s2s_ad; use ord=None, 'fro', "
                     f"1, -1, 2, -2, 'nuc', inf or -inf (matrices) or a number (vectors)")


def norm_max_weights(x: Any, ord: Any, axis: Any, keepdims: bool) -> Any:
    """d norm / d x for the norms made of a max or a min (vector ord inf and -inf; matrix ord 1, -1,
    inf, -inf: the largest or smallest absolute column or row sum): ``sign(x)`` where the extreme is
    reached, ties sharing evenly (as ``np.max``'s rule); the number 0 for every other norm.
    Piecewise constant in ``x``."""
    x = as_floats(x)
    matrix = _matrix_norm(x.ndim, axis)
    if not matrix and ord == 0:
        return np.zeros(x.shape)  # a count of the nonzero elements: constant
    if ord is None or ord == "fro" or (matrix and ord not in (1, -1, np.inf, -np.inf)) or \
            (not matrix and not (isinstance(ord, (int, float, np.number)) and np.isinf(ord))):
        return 0.0
    magnitude = np.abs(x)
    pick = np.max if ord > 0 else np.min
    if matrix:
        rows, cols = (0, 1) if axis is None else tuple(a % x.ndim for a in axis)
        summed_over = rows if abs(ord) == 1 else cols  # ord 1: column sums; inf: row sums
        sums = np.sum(magnitude, axis=summed_over, keepdims=True)
        other = cols if summed_over == rows else rows
        extreme = sums == pick(sums, axis=other, keepdims=True)
        return np.sign(x) * extreme / np.sum(extreme, axis=other, keepdims=True)
    reduce_axis = None if axis is None else axis
    extreme = magnitude == pick(magnitude, axis=reduce_axis, keepdims=True)
    return np.sign(x) * extreme / np.sum(extreme, axis=reduce_axis, keepdims=True)


def _spectral(ord: Any, ndim: int, axis: Any) -> bool:
    """True for the matrix norms made of singular values: ord 2 (the largest), -2 (the smallest),
    'nuc' (their sum)."""
    if not _matrix_norm(ndim, axis):
        return False
    return ord == "nuc" if isinstance(ord, str) else ord is not None and ord in (2, -2)


def _matrix_axes(ndim: int, axis: Any) -> tuple:
    return (0, 1) if axis is None else tuple(a % ndim for a in axis)


def norm_matrices(x: Any, ord: Any, axis: Any, fill: float) -> np.ndarray:
    """The matrices whose singular values make ``np.linalg.norm(x, ord, axis)`` (ord 2, -2, 'nuc'),
    moved to the last two axes; for any other norm, a 1 by 1 placeholder holding ``fill`` (1 for the
    matrix whose SVD is taken, so it is well defined; 0 for a tangent or an adjoint)."""
    if not _spectral(ord, np.ndim(x), axis):
        return np.full((1, 1), fill)
    return np.moveaxis(x, _matrix_axes(np.ndim(x), axis), (-2, -1))


def norm_unmoved(w: Any, x: Any, ord: Any, axis: Any) -> Any:
    """``norm_matrices``'s transpose: matrices ``w`` moved back to ``x``'s layout; zeros shaped like
    ``x`` for the norms not made of singular values."""
    if not _spectral(ord, np.ndim(x), axis):
        return np.zeros(np.shape(x))
    return np.moveaxis(w, (-2, -1), _matrix_axes(np.ndim(x), axis))


def norm_singular_weights(s: Any, ord: Any, ndim: int, axis: Any) -> np.ndarray:
    """d norm / d s for the norms of singular values: ones for 'nuc', one at the largest (ord 2) or the
    smallest (ord -2) singular value; zeros for every other norm.  Piecewise constant in ``s``."""
    s = np.asarray(s)
    if not _spectral(ord, ndim, axis):
        return np.zeros(s.shape)
    if isinstance(ord, str):
        return np.ones(s.shape)
    picked = np.argmax(s, axis=-1) if ord > 0 else np.argmin(s, axis=-1)
    return (np.arange(s.shape[-1]) == np.expand_dims(picked, -1)).astype(float)


def norm_weight(x: Any, p: float) -> Any:
    """``sign(x) |x|**(p - 1)``, the p-norm's derivative times ``norm**(p - 1)``; written
    ``x |x|**(p - 2)`` for p >= 2, whose own derivative is right at 0 too."""
    if p == 0.0:
        return 0.0  # a norm of maxima (norm_max_weights), or the count ord=0: no p-norm term
    x = as_floats(x)
    if p == 2.0:
        return x
    if p >= 2.0:
        return x * np.abs(x) ** (p - 2.0)
    return np.sign(x) * np.abs(x) ** (p - 1.0)


def norm_weight_jvp(x: Any, p: float, t: Any) -> Any:
    """The tangent of ``norm_weight(x, p)`` along ``t`` (the number 0 where that is the number 0)."""
    if p == 0.0:
        return 0.0
    return norm_weight_slope(x, p) * t


def norm_weight_slope(x: Any, p: float) -> Any:
    """The derivative of ``norm_weight(x, p)`` in ``x``: ``(p - 1) |x|**(p - 2)`` (1 for p = 2,
    0 for p = 1, infinite at 0 for 1 < p < 2)."""
    if p == 0.0:
        return 0.0
    x = as_floats(x)
    if p == 2.0:
        return np.ones_like(x)
    if p == 1.0:
        return np.zeros_like(x)
    with np.errstate(divide="ignore"):
        return (p - 1.0) * np.abs(x) ** (p - 2.0)


def inner_axes(a: Any, b: Any) -> Any:
    """``np.inner(a, b)`` as ``np.tensordot``'s ``axes``: the last axes, or 0 (a product) for a number."""
    if np.ndim(a) == 0 or np.ndim(b) == 0:
        return 0
    return (np.ndim(a) - 1, np.ndim(b) - 1)


def tensordot_axes(a: Any, b: Any, axes: Any) -> tuple[list, list]:
    """``np.tensordot``'s ``axes`` argument as two lists of non-negative axes of ``a`` and ``b``."""
    na, nb = np.ndim(a), np.ndim(b)
    if isinstance(axes, (int, np.integer)):
        return list(range(na - axes, na)), list(range(axes))
    first, second = axes
    first = [first] if isinstance(first, (int, np.integer)) else list(first)
    second = [second] if isinstance(second, (int, np.integer)) else list(second)
    return [int(x) % na for x in first], [int(x) % nb for x in second]


def tensordot_adjoint_plan(a: Any, b: Any, axes: Any, which: int) -> tuple:
    """How the adjoint of operand ``which`` of ``np.tensordot(a, b, axes)`` is one more tensordot:
    the ``axes`` to contract the result's adjoint with the other operand, and the permutation
    that puts the product's axes in the operand's order."""
    ca, cb = tensordot_axes(a, b, axes)
    free_a = [i for i in range(np.ndim(a)) if i not in ca]
    free_b = [i for i in range(np.ndim(b)) if i not in cb]
    if which == 0:  # tensordot(grad, b): free_a, then the partners of b's contracted axes in b's order
        contract = (list(range(len(free_a), len(free_a) + len(free_b))), free_b)
        return contract, tuple(np.argsort(free_a + [ca[cb.index(j)] for j in sorted(cb)]).tolist())
    contract = (free_a, list(range(len(free_a))))  # tensordot(a, grad): the partners of a's, then free_b
    return contract, tuple(np.argsort([cb[ca.index(i)] for i in sorted(ca)] + free_b).tolist())


def trace_grad(grad: Any, a: Any, offset: int = 0, axis1: int = 0, axis2: int = 1) -> np.ndarray:
    """The adjoint of ``np.trace(a, offset, axis1, axis2)``: ``grad`` on every element of that diagonal."""
    length = np.diagonal(np.zeros(np.shape(a), dtype=bool), offset, axis1, axis2).shape[-1]
    grad = np.asarray(grad)
    return diagonal_grad(np.broadcast_to(grad[..., np.newaxis], grad.shape + (length,)), a, offset, axis1, axis2)


def kron_blocks(grad: Any, a: Any, b: Any) -> np.ndarray:
    """The adjoint of ``np.kron(a, b)`` with its axes split as (a0, b0, a1, b1, ...)."""
    nd = max(np.ndim(a), np.ndim(b))
    sa = (1,) * (nd - np.ndim(a)) + np.shape(a)
    sb = (1,) * (nd - np.ndim(b)) + np.shape(b)
    return np.reshape(grad, [n for pair in zip(sa, sb) for n in pair])


def kron_spread(x: Any, other: Any, which: int) -> np.ndarray:
    """``x`` (operand ``which`` of kron) shaped to broadcast against ``kron_blocks``: length-1 axes
    interleaved where the other operand's axes are."""
    nd = max(np.ndim(x), np.ndim(other))
    sx = (1,) * (nd - np.ndim(x)) + np.shape(x)
    ones = (1,) * nd
    pairs = zip(sx, ones) if which == 0 else zip(ones, sx)
    return np.reshape(x, [n for pair in pairs for n in pair])


def cross_grad(grad: Any, other: Any, like: Any, axis_other: int, axis_like: int, axisc: int,
               axis: Any, sign: float) -> Any:
    """The adjoint of one operand of ``np.cross`` (shaped like ``like``) from the other one:
    ``sign * cross(other, grad)`` over 3-vectors, a 2-vector standing for (x, y, 0) and the number
    that two 2-vectors give for the z component of their 3-vector product.  Linear in ``grad`` and
    in ``other``; ``like`` is read for its shape."""
    if axis is not None:
        axis_other = axis_like = axisc = axis
    shape = np.shape(like)
    if np.ndim(other) == 0 or (np.ndim(grad) == 0 and not (np.shape(other)[axis_other] == 2 == shape[axis_like])):
        return np.zeros(shape)  # a missing tangent (a plain 0)
    other = np.moveaxis(np.asarray(other, dtype=float), axis_other, -1)
    moved = np.moveaxis(np.zeros(shape), axis_like, -1).shape
    if other.shape[-1] == 2 and moved[-1] == 2:  # two 2-vectors: grad is the z component's adjoint
        grad3 = np.zeros(np.shape(grad) + (3,))
        grad3[..., 2] = grad
    else:
        grad3 = np.moveaxis(np.asarray(grad, dtype=float), axisc, -1)
    other3 = np.concatenate([other, np.zeros(other.shape[:-1] + (3 - other.shape[-1],))], axis=-1)
    full = sign * np.cross(other3, grad3)[..., :moved[-1]]
    return np.moveaxis(unbroadcast_to(full, moved), -1, axis_like)


def kron_axes(a: Any, b: Any, which: int) -> tuple:
    """The axes of ``kron_blocks`` that belong to the operand other than ``which`` (summed out)."""
    nd = max(np.ndim(a), np.ndim(b))
    return tuple(range(1 if which == 0 else 0, 2 * nd, 2))


# -- einsum ---------------------------------------------------------------------------------------


def _einsum_terms(subscripts: str, operands: list) -> tuple[list, str, dict]:
    """``subscripts`` with every ``...`` spelled out in letters of its own (right-aligned, as NumPy
    broadcasts them), the implicit output made explicit, and the size of every letter (broadcast)."""
    subscripts = subscripts.replace(" ", "")
    inputs, _, output = subscripts.partition("->")
    terms = inputs.split(",")
    if len(terms) != len(operands):
        raise ValueError(f"einsum {subscripts!r} names {len(terms)} operands, but {len(operands)} are given")
    spare = [c for c in "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ" if c not in subscripts]
    widths = [np.ndim(op) - (len(t) - 3) if "..." in t else 0 for t, op in zip(terms, operands)]
    ellipsis = "".join(spare[:max(widths, default=0)])
    terms = [t.replace("...", ellipsis[len(ellipsis) - w:] if w else "") for t, w in zip(terms, widths)]
    if "->" not in subscripts:
        letters = "".join(terms)
        output = ellipsis + "".join(sorted(c for c in set(letters) if letters.count(c) == 1 and c not in ellipsis))
    else:
        output = output.replace("...", ellipsis)
    sizes: dict = {}
    for term, op in zip(terms, operands):
        for letter, n in zip(term, np.shape(op)):
            # NumPy's broadcasting: a length 1 gives way to any other, a length 0 included
            sizes[letter] = n if sizes.get(letter, 1) == 1 else sizes[letter]
    return terms, output, sizes


def einsum_grad(grad: Any, subscripts: str, which: int, like: Any, *slots: Any) -> np.ndarray:
    """The adjoint of operand ``which`` (shaped like ``like``) of ``np.einsum(subscripts, *slots)``.

    One more einsum of the result's adjoint with the other operands; labels summed within the
    operand alone are spread back, repeated labels (a diagonal, ``"ii->"``) written onto the
    diagonal of zeros, and broadcast ``...`` axes summed.  Slot ``which`` is not read (only
    ``like``), and slots past the operands ``subscripts`` names are ignored.  Another operand
    given as the number 0 (a missing tangent) makes the adjoint zero.
    """
    shape = np.shape(like)
    if any(i != which and isinstance(op, (int, float)) and op == 0 for i, op in enumerate(slots)):
        return np.zeros(shape)  # (a slot past the operands holds 0 only as a missing tangent)
    count = subscripts.count(",") + 1
    operands = [like if i == which else slots[i] for i in range(count)]
    terms, output, sizes = _einsum_terms(subscripts, operands)
    mine = terms[which]
    unique = "".join(dict.fromkeys(mine))
    others = [(t, np.broadcast_to(op, [sizes[c] for c in t])) for i, (t, op) in enumerate(zip(terms, operands))
              if i != which]
    reached = set(output).union(*[set(t) for t, _ in others])
    kept = "".join(c for c in unique if c in reached)
    full_grad = np.broadcast_to(grad, [sizes[c] for c in output])
    core = np.einsum(",".join([output] + [t for t, _ in others]) + "->" + kept, full_grad, *[op for _, op in others])
    for position, letter in enumerate(unique):  # labels summed within this operand alone: spread back
        if letter not in reached:
            core = np.expand_dims(core, position)
    core = np.broadcast_to(core, [sizes[c] for c in unique])
    if len(unique) == len(mine):
        result = np.einsum(unique + "->" + mine, core)
    else:  # a repeated label: onto the diagonal of zeros (einsum's diagonal view is writable)
        result = np.zeros([sizes[c] for c in mine], dtype=np.result_type(core, 1.0))
        np.einsum(mine + "->" + unique, result)[...] = core
    return unbroadcast_to(np.array(result, dtype=np.result_type(result, 1.0)), shape)


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


# -- quantiles (NumPy's default, linear method): piecewise linear in the data and in q ------------


_QUANTILE_METHODS = ("linear", "lower", "higher", "nearest", "midpoint")


def _quantile_plan(a: Any, q: Any, axis: Any, keepdims: bool, method: str = "linear") -> tuple:
    """Where each quantile lies in ``a`` sorted along ``axis``: the sorting order (flattened to the
    last axis), the neighbours below and above, the fraction between them, and the shapes.  The
    methods other than "linear" pick one neighbour (or the midpoint of two): their fractions do not
    move with q."""
    if method not in _QUANTILE_METHODS:
        raise ValueError(f"the quantile method {method!r} has no derivative rule; the methods with one are "
                         f"{', '.join(_QUANTILE_METHODS)}")
    a = np.asarray(a)
    flat, back = _along_last(a, axis)
    n = flat.shape[-1]
    order = np.argsort(flat, axis=-1, kind="stable")
    position = np.asarray(q, dtype=float) * (n - 1)
    if method in ("linear", "midpoint"):
        low = np.clip(np.floor(position).astype(np.intp), 0, n - 1)
        fraction = position - low if method == "linear" else np.where(position % 1 == 0, 0.0, 0.5)
    else:
        picked = {"lower": np.floor, "higher": np.ceil, "nearest": np.around}[method](position)
        low = np.clip(picked.astype(np.intp), 0, n - 1)
        fraction = np.zeros(np.shape(position))
    high = np.clip(low + 1, 0, n - 1)
    reduced = np.sum(np.zeros(a.shape), axis=axis, keepdims=keepdims).shape
    return flat, back, order, low, high, fraction, reduced


def _quantile_layout(rows: np.ndarray, q: Any, reduced: tuple) -> np.ndarray:
    """(lead..., q...) rows as NumPy lays out quantiles: q's axes first, then the reduced shape."""
    qdims = np.ndim(q)
    moved = np.moveaxis(rows, tuple(range(rows.ndim - qdims, rows.ndim)), tuple(range(qdims))) if qdims else rows
    return np.reshape(moved, np.shape(q) + reduced)


def quantile_linear(values: Any, a: Any, q: Any, axis: Any = None, keepdims: bool = False,
                    method: str = "linear") -> np.ndarray:
    """``np.quantile(a, q, axis, keepdims=keepdims)``, interpolating ``values`` (shaped like ``a``) at
    the positions where ``a``'s quantiles lie: linear in ``values`` (``values`` is ``a`` itself for the
    quantile)."""
    flat, _, order, low, high, fraction, reduced = _quantile_plan(a, q, axis, keepdims, method)
    if np.ndim(values) == 0 and np.ndim(a) > 0:  # a missing tangent (a plain 0): every quantile is 0
        return np.zeros(np.shape(q) + reduced) + values
    ordered = np.take_along_axis(_along_last(np.asarray(values, dtype=float), axis)[0], order, axis=-1)
    rows = (1.0 - fraction) * ordered[..., low] + fraction * ordered[..., high]
    return _quantile_layout(rows, q, reduced)


def quantile_slope(values: Any, a: Any, q: Any, axis: Any = None, keepdims: bool = False,
                   method: str = "linear") -> np.ndarray:
    """d quantile_linear / d q: (n - 1) times the gap of ``values`` between the two neighbours (the
    linear method; the others are piecewise constant in q)."""
    flat, _, order, low, high, _, reduced = _quantile_plan(a, q, axis, keepdims, method)
    if (isinstance(values, (int, float)) and values == 0) or method != "linear":
        return np.zeros(np.shape(q) + reduced)  # a missing tangent
    ordered = np.take_along_axis(_along_last(np.asarray(values, dtype=float), axis)[0], order, axis=-1)
    rows = (ordered[..., high] - ordered[..., low]) * (flat.shape[-1] - 1)
    return _quantile_layout(rows, q, reduced)


def quantile_scatter(grad: Any, a: Any, q: Any, axis: Any = None, keepdims: bool = False,
                     slope: bool = False, method: str = "linear") -> np.ndarray:
    """The adjoint of ``values`` in ``quantile_linear`` (or, with ``slope``, in ``quantile_slope``):
    each quantile's adjoint shared by its two neighbours in ``a``."""
    flat, back, order, low, high, fraction, reduced = _quantile_plan(a, q, axis, keepdims, method)
    n = flat.shape[-1]
    if slope and method != "linear":  # the other methods' weights do not move with q
        return back(np.zeros(flat.shape))
    grad = np.broadcast_to(np.asarray(grad, dtype=float), np.shape(q) + reduced)
    qdims = np.ndim(q)
    rows = np.reshape(np.moveaxis(grad, tuple(range(qdims)), tuple(range(-qdims, 0))) if qdims else grad,
                      flat.shape[:-1] + np.shape(q))
    below, above = ((-(n - 1.0), n - 1.0) if slope else (1.0 - fraction, fraction))
    ordered = np.zeros(flat.shape)
    for index in np.ndindex(*np.shape(q)):
        part = rows[(Ellipsis,) + index]
        ordered[..., low[index]] += part * (below if slope else below[index])
        ordered[..., high[index]] += part * (above if slope else above[index])
    result = np.zeros(flat.shape)
    np.put_along_axis(result, order, ordered, axis=-1)
    return back(result)


def expand_quantiles(t: Any, like: Any) -> Any:
    """``t`` (shaped like q) with length-1 axes appended to broadcast against quantiles ``like``."""
    return np.reshape(t, np.shape(t) + (1,) * (np.ndim(like) - np.ndim(t)))


def trailing_axes(q: Any, out: Any) -> tuple:
    """The axes of quantiles ``out`` after q's own: the reduced shape's."""
    return tuple(range(np.ndim(q), np.ndim(out)))


def cumprod_grad(grad: Any, a: Any, axis: Any = None) -> np.ndarray:
    """The adjoint of ``np.cumprod(a, axis)``, without dividing (zeros in ``a`` are fine):
    d a_i = (a_0 ... a_{i-1}) * r_i with r_i = g_i + a_{i+1} r_{i+1}, along the axis."""
    a = as_floats(a)
    shape = a.shape
    if axis is None:
        a, axis = np.ravel(a), 0
    a = np.moveaxis(a, axis, 0)
    g = np.moveaxis(np.broadcast_to(np.asarray(grad, dtype=a.dtype), np.shape(np.moveaxis(a, 0, axis))), axis, 0)
    n = a.shape[0]
    before = np.concatenate([np.ones((1,) + a.shape[1:]), np.cumprod(a[:-1], axis=0)], axis=0)
    rest = np.zeros_like(a)
    carry = np.zeros(a.shape[1:])
    for i in range(n - 1, -1, -1):
        carry = g[i] + (a[i + 1] * carry if i + 1 < n else 0.0)
        rest[i] = carry
    return np.reshape(np.moveaxis(before * rest, 0, axis), shape)


def cumprod_jvp(a: Any, t: Any, axis: Any = None) -> np.ndarray:
    """The tangent of ``np.cumprod(a, axis)`` along ``t``: c_j = c_{j-1} a_j + p_{j-1} t_j (p the
    running product), without dividing."""
    a = as_floats(a, t)
    t = np.broadcast_to(np.asarray(t, dtype=a.dtype), a.shape)
    if axis is None:
        a, t, axis = np.ravel(a), np.ravel(t), 0
    a, t = np.moveaxis(a, axis, 0), np.moveaxis(t, axis, 0)
    result = np.zeros_like(a)
    product = np.ones(a.shape[1:])
    carry = np.zeros(a.shape[1:])
    for i in range(a.shape[0]):
        carry = carry * a[i] + product * t[i]
        product = product * a[i]
        result[i] = carry
    return np.moveaxis(result, 0, axis)


def cumprod_grad_jvp(grad: Any, a: Any, t: Any, axis: Any = None) -> np.ndarray:
    """The tangent of ``cumprod_grad(grad, a, axis)`` as ``a`` moves along ``t`` (``grad`` fixed):
    the recursion of ``cumprod_grad`` differentiated term by term."""
    a = as_floats(a, t)
    shape = a.shape
    if isinstance(t, (int, float)) and t == 0:
        return np.zeros(shape)  # a missing tangent
    t = np.broadcast_to(np.asarray(t, dtype=a.dtype), shape)
    if axis is None:
        a, t, axis = np.ravel(a), np.ravel(t), 0
    a, t = np.moveaxis(a, axis, 0), np.moveaxis(t, axis, 0)
    g = np.moveaxis(np.broadcast_to(np.asarray(grad, dtype=a.dtype), np.shape(np.moveaxis(a, 0, axis))), axis, 0)
    n = a.shape[0]
    ones = np.ones((1,) + a.shape[1:])
    before = np.concatenate([ones, np.cumprod(a[:-1], axis=0)], axis=0)
    before_t = np.concatenate([0.0 * ones, cumprod_jvp(a[:-1], t[:-1], 0)], axis=0)
    rest, rest_t = np.zeros_like(a), np.zeros_like(a)
    carry, carry_t = np.zeros(a.shape[1:]), np.zeros(a.shape[1:])
    for i in range(n - 1, -1, -1):
        if i + 1 < n:
            carry, carry_t = g[i] + a[i + 1] * carry, t[i + 1] * carry + a[i + 1] * carry_t
        else:
            carry, carry_t = g[i] + 0.0 * carry, carry_t
        rest[i], rest_t[i] = carry, carry_t
    return np.reshape(np.moveaxis(before_t * rest + before * rest_t, 0, axis), shape)


def _powers(m: np.ndarray, n: int) -> list:
    """``[I, m, m @ m, ..., m**n]`` (matrix powers, batched over leading axes)."""
    out = [np.broadcast_to(np.eye(m.shape[-1]), m.shape)]
    for _ in range(n):
        out.append(np.matmul(out[-1], m))
    return out


def _check_power(n: Any) -> int:
    if int(n) != n or n < 0:
        raise ValueError(f"np.linalg.matrix_power(a, {n}) has a derivative rule for n >= 0 only; for a negative "
                         f"power write np.linalg.matrix_power(np.linalg.inv(a), {-n})")
    return int(n)


def matrix_power_grad(grad: Any, a: Any, n: int) -> np.ndarray:
    """The adjoint of ``np.linalg.matrix_power(a, n)`` (n >= 0): the sum over k of
    (a^T)^k grad (a^T)^(n-1-k)."""
    n = _check_power(n)
    at = np.swapaxes(np.asarray(a, dtype=float), -1, -2)
    grad = np.broadcast_to(np.asarray(grad, dtype=float), at.shape)
    powers = _powers(at, max(n - 1, 0))
    total = np.zeros(at.shape)
    for k in range(n):
        total = total + np.matmul(powers[k], np.matmul(grad, powers[n - 1 - k]))
    return total


def matrix_power_jvp(a: Any, t: Any, n: int) -> np.ndarray:
    """The tangent of ``np.linalg.matrix_power(a, n)`` along ``t``: the sum over k of a^k t a^(n-1-k)."""
    n = _check_power(n)
    a = np.asarray(a, dtype=float)
    if isinstance(t, (int, float)) and t == 0:
        return np.zeros(a.shape)
    powers = _powers(a, max(n - 1, 0))
    total = np.zeros(np.broadcast_shapes(a.shape, np.shape(t)))
    for k in range(n):
        total = total + np.matmul(powers[k], np.matmul(t, powers[n - 1 - k]))
    return total


def matrix_power_grad_jvp(grad: Any, a: Any, t: Any, n: int) -> np.ndarray:
    """The tangent of ``matrix_power_grad(grad, a, n)`` as ``a`` moves along ``t``."""
    n = _check_power(n)
    at = np.swapaxes(np.asarray(a, dtype=float), -1, -2)
    if isinstance(t, (int, float)) and t == 0:
        return np.zeros(at.shape)
    tt = np.swapaxes(np.asarray(t, dtype=float), -1, -2)
    grad = np.broadcast_to(np.asarray(grad, dtype=float), at.shape)
    powers = _powers(at, max(n - 1, 0))
    moved = [np.zeros(at.shape)] + [matrix_power_jvp(at, tt, k) for k in range(1, n)]
    total = np.zeros(at.shape)
    for k in range(n):
        total = total + np.matmul(moved[k], np.matmul(grad, powers[n - 1 - k])) \
            + np.matmul(powers[k], np.matmul(grad, moved[n - 1 - k]))
    return total


def svd_checked(u: Any, a: Any, full_matrices: bool = True, compute_uv: bool = True) -> Any:
    """``u`` itself, once ``np.linalg.svd(a, full_matrices, compute_uv)`` is known to have a derivative:
    a full ``u`` or ``vh`` of a matrix that is not square raises (its extra columns are any basis),
    and so does ``compute_uv=False`` (write ``np.linalg.svd(a, full_matrices=False)[1]``)."""
    if not compute_uv:
        raise ValueError("np.linalg.svd(..., compute_uv=False) has no derivative rule in s2s_ad; write "
                         "np.linalg.svd(a, full_matrices=False)[1] for the singular values")
    m, n = np.shape(a)[-2:]
    if full_matrices and m != n:
        raise ValueError("np.linalg.svd of a matrix that is not square has a derivative only with "
                         "full_matrices=False (the extra columns of a full u or vh are any basis)")
    return u


def qr_checked(q: Any, a: Any, mode: str = "reduced") -> Any:
    """``q`` itself, once ``np.linalg.qr(a, mode)`` is known to have a derivative rule: the reduced
    factors of a matrix with at least as many rows as columns (complete ones of a square matrix are
    the same); other calls raise."""
    m, n = np.shape(a)[-2:]
    if mode not in ("reduced", "complete") or m < n or (mode == "complete" and m != n):
        raise ValueError(f"np.linalg.qr(a, mode={mode!r}) of a {m} x {n} matrix has no derivative rule in s2s_ad: "
                         f"the rule covers mode='reduced' with at least as many rows as columns")
    return q


def _chain(matrices: list, size: int) -> np.ndarray:
    """The product of ``matrices`` (the identity of ``size`` when there are none)."""
    result = np.eye(size)
    for m in matrices:
        result = result @ m
    return result


def _multi_dot_terms(arrays: list) -> list:
    """``np.linalg.multi_dot``'s operands as matrices: a 1-D first one a row, a 1-D last one a column."""
    mats = [np.asarray(a, dtype=float) for a in arrays]
    if mats[0].ndim == 1:
        mats[0] = mats[0][np.newaxis, :]
    if mats[-1].ndim == 1:
        mats[-1] = mats[-1][:, np.newaxis]
    return mats


def _multi_dot_adjoints(grad: Any, mats: list, like: list) -> list:
    """P_i^T grad S_i^T for each operand (P_i, S_i the products before and after it), shaped like it."""
    g = np.reshape(np.asarray(grad, dtype=float), (mats[0].shape[0], mats[-1].shape[1]))
    out = []
    for i, m in enumerate(mats):
        before = _chain(mats[:i], mats[0].shape[0])
        after = _chain(mats[i + 1:], m.shape[1])
        out.append(np.reshape(before.T @ g @ after.T, np.shape(like[i])))
    return out


def multi_dot_grad(grad: Any, arrays: Any) -> Any:
    """The adjoints of the operands of ``np.linalg.multi_dot(arrays)``, one per operand (one array
    where ``arrays`` is one)."""
    return as_given(_multi_dot_adjoints(grad, _multi_dot_terms(arrays), list(arrays)), arrays, grad)


def _is_missing(t: Any) -> bool:
    return isinstance(t, (int, float)) and t == 0


def multi_dot_jvp(arrays: Any, tangents: Any) -> Any:
    """The tangent of ``np.linalg.multi_dot(arrays)``: each operand's tangent in its place, summed."""
    arrays = list(arrays)
    total = 0.0
    for i, t in enumerate(tangents):
        if not _is_missing(t):
            total = total + np.linalg.multi_dot(arrays[:i] + [t] + arrays[i + 1:])
    if _is_missing(total):
        return np.zeros(np.shape(np.linalg.multi_dot(arrays)))
    return total


def multi_dot_grad_jvp(grad: Any, t_grad: Any, arrays: Any, tangents: Any) -> list:
    """The tangent of ``multi_dot_grad(grad, arrays)`` as ``grad`` moves along ``t_grad`` and the
    operands along ``tangents`` (one list: lists do not add elementwise; one array where ``arrays`` is one)."""
    given, arrays = arrays, list(arrays)
    total = [np.zeros(np.shape(a)) for a in arrays]
    if not _is_missing(t_grad):
        total = multi_dot_grad(t_grad, arrays)
    for j, t in enumerate(tangents if not _is_missing(tangents) else ()):
        if _is_missing(t):
            continue
        moved = _multi_dot_adjoints(grad, _multi_dot_terms(arrays[:j] + [t] + arrays[j + 1:]), arrays)
        for i in range(len(arrays)):
            if i != j:  # operand i's own adjoint does not read operand i
                total[i] = total[i] + moved[i]
    return as_given(total, given, grad)

# -- ``a + b`` and ``a * n`` where the operands may be tuples or lists -------------------------------
# Concatenation and repetition, not arithmetic: the adjoint of a concatenation splits, that of a
# repetition adds the copies up.  Adjoints and tangents of sequences may be sequences or arrays of
# rows; both are read row by row.  Which case holds is decided here, at run time, where the
# transformer could not prove it.

def _is_sequence(value: Any) -> bool:
    return isinstance(value, (list, tuple))


def _concatenates(a: Any, b: Any) -> bool:
    return (isinstance(a, list) and isinstance(b, list)) or (isinstance(a, tuple) and isinstance(b, tuple))


def _repeats(sequence: Any, count: Any) -> bool:
    return _is_sequence(sequence) and isinstance(count, (int, np.integer))


def _broadcast_number(value: Any) -> bool:
    """A number standing for a whole sequence's adjoint or tangent (a missing one: zero)."""
    return not _is_sequence(value) and np.ndim(value) == 0


def _rows(grad: Any, start: int, stop: int) -> Any:
    """``grad[start:stop]``, a copy where ``grad`` is an array."""
    if _broadcast_number(grad):  # one number for every row (a missing tangent: zeros)
        return np.full(stop - start, grad, dtype=np.result_type(grad, 1.0))
    part = grad[start:stop]
    return np.array(part) if isinstance(part, np.ndarray) else part


def _repeated_sum(grad: Any, like: Any, count: int) -> Any:
    """The adjoint of ``like * count``: the ``count`` copies' parts of ``grad`` added up."""
    n = len(like)
    if count <= 0 or n == 0:
        return zeros_like(like)
    if _broadcast_number(grad):
        return np.full(n, grad * count, dtype=np.result_type(grad, 1.0))
    if isinstance(grad, np.ndarray):
        return np.sum(np.reshape(grad, (count, n) + grad.shape[1:]), axis=0)
    return tuple(sum((grad[k * n + i] for k in range(1, count)), grad[i]) for i in range(n))


def add_adjoint(grad: Any, a: Any, b: Any) -> tuple:
    """The adjoints of ``a`` and ``b`` in ``a + b``: concatenation splits ``grad``, arithmetic unbroadcasts."""
    if _concatenates(a, b):
        return _rows(grad, 0, len(a)), _rows(grad, len(a), len(a) + len(b))
    return unbroadcast(grad, a), unbroadcast(grad, b)


def mul_adjoint(grad: Any, a: Any, b: Any) -> tuple:
    """The adjoints of ``a`` and ``b`` in ``a * b``: a repetition adds the copies up (an integer
    count has no derivative); arithmetic is the product rule, unbroadcast."""
    if _repeats(a, b):
        return _repeated_sum(grad, a, int(b)), 0.0
    if _repeats(b, a):
        return 0.0, _repeated_sum(grad, b, int(a))
    return unbroadcast(grad * b, a), unbroadcast(grad * a, b)


def mul_adjoint_cross(grad: Any, a: Any, b: Any, tangent_a: Any, tangent_b: Any) -> tuple:
    """``mul_adjoint``'s change as ``a`` and ``b`` move along their tangents (zero for a repetition).

    With ``pair_sum`` this closes the rules under differentiation: every
    order of derivative of ``a * b`` is made of these helpers again."""
    if _repeats(a, b) or _repeats(b, a):
        return 0.0, 0.0
    return unbroadcast(grad * tangent_b, a), unbroadcast(grad * tangent_a, b)


def pair_sum(p: tuple, q: tuple) -> tuple:
    """Two pairs of adjoints added item by item (sequences' adjoints row by row); a missing tangent
    (a plain 0 where a pair would be) adds nothing."""
    if not isinstance(q, (tuple, list)):
        return p
    if not isinstance(p, (tuple, list)):
        return q
    return tangent_sum(p[0], q[0]), tangent_sum(p[1], q[1])


def _as_sequence(tangent: Any, like: Any) -> Any:
    """A tangent read as a sequence of the primal's type (tuple or list)."""
    return type(like)(_item(tangent, i) for i in range(len(like)))


def _item(value: Any, i: int) -> Any:
    return value[i] if _is_sequence(value) or np.ndim(value) > 0 else value


def tangent_sum(x: Any, y: Any) -> Any:
    """``x + y`` for tangents or adjoints, which add item by item where they are sequences."""
    if _is_sequence(x) or _is_sequence(y):
        like = x if _is_sequence(x) else y
        return type(like)(_item(x, i) + _item(y, i) for i in range(len(like)))
    return x + y


def add_tangent(tangent_a: Any, tangent_b: Any, a: Any, b: Any) -> Any:
    """The tangent of ``a + b``: the tangents concatenated, or added."""
    if _concatenates(a, b):
        return _as_sequence(tangent_a, a) + _as_sequence(tangent_b, b)
    return tangent_a + tangent_b


def mul_tangent(tangent_a: Any, tangent_b: Any, a: Any, b: Any) -> Any:
    """The tangent of ``a * b``: the tangent repeated, or the product rule."""
    if _repeats(a, b):
        return _as_sequence(tangent_a, a) * int(b)
    if _repeats(b, a):
        return int(a) * _as_sequence(tangent_b, b)
    return tangent_a * b + a * tangent_b


def mul_tangent_cross(tangent_a: Any, tangent_b: Any, second_a: Any, second_b: Any, a: Any, b: Any) -> Any:
    """``mul_tangent``'s change as ``a`` and ``b`` move along ``second_a`` and ``second_b`` (zero for
    a repetition, whose tangent does not depend on the sequence's contents)."""
    if _repeats(a, b) or _repeats(b, a):
        return 0.0
    return tangent_a * second_b + second_a * tangent_b


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
