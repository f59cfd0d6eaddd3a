"""The few helpers generated code may call.

Generated code calls a helper only where the shape of a value is not known
when the code is generated; where it is known, the generator writes the
plain NumPy expression instead.  Every helper here is small, has no state,
and is itself differentiable by the templates (so generated code can be
transformed again for higher derivatives).
"""
from __future__ import annotations

import math
from typing import Any, Optional

import random

import numpy as np


def checkpointed(steps: Any, every: Optional[int] = None) -> Any:
    """Mark a loop for checkpointing: ``for t in s2s_ad.checkpointed(range(n)):``.

    Run as plain Python it is ``steps`` itself.  Reverse mode then keeps the
    loop's state once every ``every`` iterations (about sqrt(n) by default)
    instead of every iteration, and runs each segment again when its reverse
    needs it: memory about 2 sqrt(n) records instead of n, one more forward
    pass of the loop, the same gradient.
    """
    return steps


def checkpoint_stride(n: int, every: Optional[int] = None) -> int:
    """Iterations per checkpointed segment: ``every``, or the ceiling of sqrt(n)."""
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
    return np.zeros(np.shape(value), dtype=dtype)


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
    return np.array(np.broadcast_to(grad, np.shape(like)), dtype=np.result_type(grad, 1.0))


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


def random_states() -> tuple:
    """The global random states (``np.random.*``, Python's ``random.*``): a checkpointed loop
    keeps them per segment, so a segment run again draws what it drew the first time."""
    return np.random.get_state(), random.getstate()


def set_random_states(states: tuple) -> None:
    """Put back what ``random_states`` returned."""
    np.random.set_state(states[0])
    random.setstate(states[1])


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
    return np.array(np.broadcast_to(grad, shape), dtype=np.result_type(grad, 1.0))


def expand_reduced(x: Any, axis: Any = None, keepdims: bool = False) -> Any:
    """The result of a reduction, with its reduced axes back as length 1 (a view, not a copy):
    it broadcasts against the reduction's input."""
    if axis is None or keepdims:
        return x
    return np.expand_dims(x, axis)


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


def inverse_axes(axes: Any) -> Any:
    """The permutation that undoes ``np.transpose(x, axes)`` (``None`` undoes itself)."""
    return None if axes is None else tuple(np.argsort(axes))


def concatenate_grad(grad: Any, arrays: Any, axis: int = 0) -> list:
    """Split the adjoint of ``np.concatenate(arrays, axis)`` back into one piece per array."""
    if axis is None:
        sizes = [np.size(a) for a in arrays]
        return [np.reshape(p, np.shape(a)) for p, a in zip(np.split(grad, np.cumsum(sizes)[:-1]), arrays)]
    sizes = [np.shape(a)[axis] for a in arrays]
    return np.split(grad, np.cumsum(sizes)[:-1], axis=axis)


def stack_grad(grad: Any, arrays: Any, axis: int = 0) -> list:
    """One slice of the adjoint of ``np.stack(arrays, axis)`` per array."""
    return list(np.moveaxis(grad, axis, 0))


def pad_grad(grad: Any, array: Any, pad_width: Any, mode: str = "constant") -> np.ndarray:
    """The adjoint of ``np.pad(array, pad_width, mode)`` for modes "constant" and "edge".

    Constant padding drops the border; edge padding also adds each border's
    adjoint onto the edge it copied.  Axes are handled in NumPy's order, each
    on the part the previous ones kept, so a corner's adjoint reaches the
    corner element it was copied from.
    """
    if mode not in ("constant", "edge"):
        raise ValueError(f"np.pad mode {mode!r} has no derivative rule (constant and edge do)")
    shape = np.shape(array)
    result = np.array(grad, dtype=np.result_type(grad, 1.0))  # a copy: the edges are added into it
    for axis, (before, after) in enumerate(_pad_widths(pad_width, len(shape))):
        n = shape[axis]
        lead = (slice(None),) * axis  # index tuples, not np.moveaxis: this runs on every call
        if mode == "edge" and n > 0:
            _fold_border(result, lead, before, 0, before)
            _fold_border(result, lead, before + n - 1, before + n, after)
        result = result[lead + (slice(before, before + n),)]
    return np.ascontiguousarray(result)


def _pad_widths(pad_width: Any, ndim: int) -> list:
    """``np.pad``'s ``pad_width`` as one ``[before, after]`` pair of ints per axis."""
    if isinstance(pad_width, int):
        return [[pad_width, pad_width]] * ndim
    return np.broadcast_to(np.asarray(pad_width, dtype=int), (ndim, 2)).tolist()


def _fold_border(result: np.ndarray, lead: tuple, edge: int, start: int, width: int) -> None:
    """Add the adjoint of the ``width`` border copies from ``start`` (along the axis after
    ``lead``) onto the ``edge`` element they copied."""
    if width == 1:
        result[lead + (edge,)] += result[lead + (start,)]
    elif width > 1:
        result[lead + (edge,)] += np.sum(result[lead + (slice(start, start + width),)], axis=len(lead))


def getitem_grad(grad: Any, a: Any, index: Any) -> np.ndarray:
    """The adjoint of ``a[index]``: ``grad`` scattered into zeros shaped like ``a``.

    Repeated integer-array indices add up (``np.add.at``).
    """
    result = np.zeros(np.shape(a), dtype=np.result_type(grad, 1.0))
    parts = index if isinstance(index, tuple) else (index,)
    if any(isinstance(p, (list, np.ndarray)) for p in parts):
        np.add.at(result, index, grad)
    else:
        result[index] = grad
    return result


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
    a = np.asarray(a, dtype=np.result_type(a, 1.0))
    flat, back = _along_last(a, axis)
    ones = np.ones(flat.shape[:-1] + (1,))
    before = np.cumprod(np.concatenate([ones, flat[..., :-1]], axis=-1), axis=-1)
    after = np.cumprod(np.concatenate([ones, flat[..., :0:-1]], axis=-1), axis=-1)[..., ::-1]
    return back(before * after)


def prod_others_jvp(a: Any, t: Any, axis: Any = None) -> np.ndarray:
    """The tangent of ``prod_others(a, axis)`` along ``t``: sum over j != i of t_j times the
    product of the elements other than i and j."""
    a = np.asarray(a, dtype=np.result_type(a, t, 1.0))
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
