"""The Numba target's compiled versions of ``templates/numpy_signal.py``'s helpers of np.interp's
adjoint: ``interp_segments`` (the segment each point is read on), ``gather`` (``np.take`` of a 1-d
array) and ``scatter`` (its transpose: ``np.add.at`` into zeros); and of np.trapezoid's (Numba's
own computes the primal; np.trapezoid with ``axis=`` given is here): ``pair_means`` and
``pair_means_transpose`` along any axis, and ``trapezoid_widths`` and ``trapezoid_width_adjoint``
where the widths are ``dx`` or the differences of sample points of one axis along samples of one
axis (other shapes run as Python); ``as_full`` (the adjoints of np.convolve and np.correlate, whose
own calls Numba compiles); np.polyval (Numba has none) of a vector of coefficients, and its rules'
``polynomial_powers``, ``polynomial_derivative`` and ``coefficient_axes`` (a matrix of coefficients runs
as Python).

Each version must do what the Python helper does for the types it accepts
(tests/targets/test_numba_rule_coverage.py compares the two); Numba is imported by no module here when loaded
(``numba.rules``).
"""
from __future__ import annotations

import functools
from typing import Any

import numpy as np

from ....rules import compiled
from ..kernels import axis_position, lengths_around, tuple_setitem as shared_tuple_setitem
from .argument_types import is_int, is_none
from .template_modules import template

signal = template("numpy_signal")


def _real(types: Any, value: Any) -> bool:
    return isinstance(value, (types.Float, types.Integer)) and not isinstance(value, types.Boolean)


def _vector(types: Any, value: Any) -> bool:
    return isinstance(value, types.Array) and value.ndim == 1 and _real(types, value.dtype)


def _indexes(types: Any, index: Any) -> bool:
    return isinstance(index, types.Integer) and not isinstance(index, types.Boolean) or \
        isinstance(index, types.Array) and isinstance(index.dtype, types.Integer) and \
        not isinstance(index.dtype, types.Boolean)


@compiled(signal.interp_segments)
def _interp_segments(types):
    """interp_segments: np.searchsorted(xp, x, side="right") clipped to [1, max(len(xp) - 1, 1)], minus
    one; an int for a number ``x``, an array of intp shaped like ``x`` for an array."""
    def typing(x, xp):
        if not _vector(types, xp):
            return None
        if _real(types, x):
            def one(x, xp):
                last = max(xp.shape[0] - 1, 1)
                return min(max(np.searchsorted(xp, x, side="right"), 1), last) - 1
            return one
        if not (isinstance(x, types.Array) and _real(types, x.dtype)):
            return None

        def each(x, xp):
            last = max(xp.shape[0] - 1, 1)
            found = np.searchsorted(xp, np.ascontiguousarray(x).reshape(-1), side="right")
            out = np.empty(found.size, np.intp)
            for i in range(found.size):
                out[i] = min(max(found[i], 1), last) - 1
            return out.reshape(x.shape)
        return each
    return typing


@compiled(signal.gather)
def _gather(types):
    """gather: ``np.take(values, index)`` of a 1-d array (Numba's np.take: an element, or an array
    shaped like ``index``)."""
    def typing(values, index):
        if _vector(types, values) and _indexes(types, index):
            return lambda values, index: np.take(values, index)
        return None
    return typing


@compiled(signal.scatter)
def _scatter(types):
    """scatter: ``grad`` (broadcast to ``index``'s shape) added into zeros shaped like the 1-d ``like``
    at the positions ``index``, in order (repeats add up; a negative index counts from the end)."""
    def typing(grad, index, like):
        if not _vector(types, like) or not _indexes(types, index):
            return None
        number = _real(types, grad)
        if not number and not (isinstance(grad, types.Array) and grad.dtype == types.float64):
            return None
        if isinstance(index, types.Integer):
            if number:
                def at_one(grad, index, like):
                    total = np.zeros(like.shape[0])
                    total[index] += grad
                    return total
                return at_one
            if grad.ndim != 0:
                return None  # (an array broadcast to one position: not compiled)

            def at_one_of_array(grad, index, like):
                total = np.zeros(like.shape[0])
                total[index] += grad[()]
                return total
            return at_one_of_array

        def added(grad, index, like):
            total = np.zeros(like.shape[0])
            spread = np.broadcast_to(np.asarray(grad, dtype=np.float64), index.shape)
            positions = np.ascontiguousarray(index).reshape(-1)
            values = np.ascontiguousarray(spread).reshape(-1)
            for i in range(positions.size):
                total[positions[i]] += values[i]
            return total
        return added
    return typing


# -- np.trapezoid's helpers ------------------------------------------------------------------------

@functools.cache
def _pairs() -> Any:
    """``means(y, at)`` and ``spread(grad, at)`` (compiled, Numba imported, built once): the mean of each
    two neighbours along the axis ``at`` (one fewer there), and its transpose (one more there)."""
    tuple_setitem = shared_tuple_setitem()
    from numba.extending import register_jitable

    around = lengths_around()

    @register_jitable
    def means(y, at):
        outer, n, inner = around(y.shape, at)
        if n == 0:
            raise ValueError("pair means of an empty axis")
        lined = np.ascontiguousarray(y).reshape((outer, n, inner))
        out = 0.5 * (lined[:, 1:, :] + lined[:, :n - 1, :])
        lengths: tuple = tuple_setitem(y.shape, at, n - 1)
        return out.reshape(lengths)

    @register_jitable
    def spread(grad, at):
        outer, n, inner = around(grad.shape, at)
        lined = np.ascontiguousarray(grad).reshape((outer, n, inner))
        out = np.zeros((outer, n + 1, inner), lined.dtype)
        out[:, 1:, :] += 0.5 * lined
        out[:, :n, :] += 0.5 * lined
        lengths: tuple = tuple_setitem(grad.shape, at, n + 1)
        return out.reshape(lengths)

    return means, spread, axis_position()


def _float_array(types: Any, value: Any) -> bool:
    return isinstance(value, types.Array) and value.ndim >= 1 and value.dtype in (types.float64, types.float32)


@compiled(signal.pair_means)
def _pair_means(types):
    """pair_means: the mean of each two neighbours along an int axis, of a float array."""
    means, _, axis_in = _pairs()

    def typing(y, axis):
        if not _float_array(types, y) or not is_int(types, axis):
            return None
        return lambda y, axis: means(y, axis_in(axis, y.ndim))
    return typing


@compiled(signal.pair_means_transpose)
def _pair_means_transpose(types):
    """pair_means_transpose: each neighbour half of each mean it is in, along an int axis."""
    _, spread, axis_in = _pairs()

    def typing(grad, axis):
        if not _float_array(types, grad) or not is_int(types, axis):
            return None
        return lambda grad, axis: spread(grad, axis_in(axis, grad.ndim))
    return typing


@compiled(signal.trapezoid_widths)
def _trapezoid_widths(types):
    """trapezoid_widths: ``dx`` where no sample points are given; the differences of sample points of one
    axis along samples of one axis (where the samples have more axes, the widths' rank depends on the axis:
    that runs as Python)."""
    def typing(y, x, dx, axis):
        if not _float_array(types, y) or not is_int(types, axis):
            return None
        if is_none(types, x):
            return lambda y, x, dx, axis: dx
        if isinstance(x, types.Array) and x.ndim == 1 and y.ndim == 1 and _real(types, x.dtype):
            return lambda y, x, dx, axis: np.diff(x) * 1.0
        return None
    return typing


@compiled(signal.trapezoid_width_adjoint)
def _trapezoid_width_adjoint(types):
    """trapezoid_width_adjoint: 0.0 where no sample points were given; the differences' adjoint sent back
    to sample points of one axis from an adjoint of one axis."""
    def typing(grad, y, x, axis):
        if not is_int(types, axis):
            return None
        if is_none(types, x):
            return lambda grad, y, x, axis: 0.0
        if isinstance(x, types.Array) and x.ndim == 1 and _float_array(types, grad) and grad.ndim == 1 \
                and grad.dtype == types.float64:
            def sent_back(grad, y, x, axis):
                if grad.shape[0] + 1 != x.shape[0]:
                    raise ValueError("the adjoint is not one shorter than the sample points")
                out = np.zeros(x.shape[0])
                out[1:] += grad
                out[:-1] -= grad
                return out
            return sent_back
        return None
    return typing


_TRAPEZOID = np.trapezoid if hasattr(np, "trapezoid") else getattr(np, "trapz")  # (as the template names it)


@compiled(_TRAPEZOID)
def _trapezoid_along(types):
    """np.trapezoid(y, x=None, dx, axis) with ``axis`` given (Numba's own takes none): the sum of ``dx`` times
    each pair mean along the axis; with sample points of one axis, of samples of one axis."""
    means, _, axis_in = _pairs()

    def typing(y, x=None, dx=1.0, axis=-1):
        if not _float_array(types, y) or isinstance(axis, types.Omitted) or not is_int(types, axis) or \
                not (_real(types, dx) or isinstance(dx, (float, int)) or isinstance(dx, types.Omitted)):
            return None  # (no axis given: Numba's own)
        if is_none(types, x) and y.ndim == 1:
            return lambda y, x=None, dx=1.0, axis=-1: np.sum(means(y, axis_in(axis, 1)) * dx)
        if is_none(types, x):
            def along(y, x=None, dx=1.0, axis=-1):
                at = axis_in(axis, y.ndim)
                return np.sum(means(y, at) * dx, axis=at)
            return along
        if isinstance(x, types.Array) and x.ndim == 1 and y.ndim == 1 and _real(types, x.dtype):
            def sampled(y, x=None, dx=1.0, axis=-1):
                axis_in(axis, 1)
                if x.shape[0] != y.shape[0]:
                    raise ValueError("operands could not be broadcast together")
                return np.sum(np.diff(x) * means(y, 0))
            return sampled
        return None
    return typing


# -- np.convolve's and np.correlate's adjoints ---------------------------------------------------

@compiled(signal.as_full)
def _as_full(types):
    """as_full: the adjoint of ``mode``'s result of np.convolve(a, v) (np.correlate with ``correlating``)
    placed in zeros the length of the full result, from where ``convolution_start`` says that mode's
    result starts ("full": 0; "valid": the shorter length less one; any other mode, as there, "same":
    centred, rounded up where np.correlate reverses its arguments); widths np.pad refuses raise
    ValueError."""
    def typing(grad, a, v, mode, correlating):
        if not (_vector(types, grad) and grad.dtype == types.float64 and _vector(types, a) and _vector(types, v)
                and isinstance(mode, (types.UnicodeType, types.StringLiteral))
                and isinstance(correlating, types.Boolean)):
            return None

        def placed(grad, a, v, mode, correlating):
            n, m = a.shape[0], v.shape[0]
            if mode == "full":
                start = 0
            elif mode == "valid":
                start = min(n, m) - 1
            else:
                start = (n + m - 1 - max(n, m) + (1 if correlating and n < m else 0)) // 2
            count = grad.shape[0]
            if start < 0 or n + m - 1 - start - count < 0:
                raise ValueError("as_full: negative widths of padding")
            out = np.zeros(n + m - 1)
            out[start:start + count] = grad
            return out
        return placed
    return typing


# -- np.polyval and its rules' helpers --------------------------------------------------------------

def _float_vector(types: Any, value: Any) -> bool:
    return isinstance(value, types.Array) and value.ndim == 1 and value.dtype == types.float64


def _points(types: Any, x: Any) -> str:
    """"number" (an int or a float), "array" (of float64) or "" (anything else: run as Python)."""
    if _real(types, x):
        return "number"
    return "array" if isinstance(x, types.Array) and x.dtype == types.float64 else ""


@compiled(np.polyval)
def _polyval(types):
    """np.polyval(p, x) of a float64 vector of coefficients (highest power first) at a number or at each
    point of a float64 array (Numba has no np.polyval): NumPy's Horner steps ``y = y * x + p[k]`` from
    0.0, in its order (the same numbers bit for bit); a number for a number, an array shaped like ``x``."""
    def typing(p, x):
        points = _points(types, x)
        if not _float_vector(types, p) or not points:
            return None
        if points == "number":
            def at_number(p, x):
                y = 0.0
                point = float(x)
                for k in range(p.shape[0]):
                    y = y * point + p[k]
                return y
            return at_number

        def at_points(p, x):
            flat = np.ascontiguousarray(x).reshape(-1)
            out = np.zeros(flat.size)
            for i in range(flat.size):
                y = 0.0
                point = flat[i]
                for k in range(p.shape[0]):
                    y = y * point + p[k]
                out[i] = y
            return out.reshape(x.shape)
        return at_points
    return typing


@compiled(signal.polynomial_powers)
def _polynomial_powers(types):
    """polynomial_powers: ``x ** (n - 1 - k)`` for each of the n coefficients (NumPy's float power: to
    rounding), stacked along a new first axis, each shaped like ``out``, for a vector of coefficients."""
    def typing(p, x, out):
        points = _points(types, x)
        if not _float_vector(types, p) or not points:
            return None
        if points == "number" and _real(types, out):
            def of_number(p, x, out):
                count = p.shape[0]
                powers = np.empty(count)
                for k in range(count):
                    powers[k] = float(x) ** float(count - 1 - k)
                return powers
            return of_number
        if points != "array" or not isinstance(out, types.Array) or out.ndim != x.ndim:
            return None

        def of_points(p, x, out):
            if x.shape != out.shape:
                raise ValueError("polynomial_powers: points not shaped like the values")
            count = p.shape[0]
            flat = np.ascontiguousarray(x).reshape(-1)
            powers = np.empty((count, flat.size))
            for k in range(count):
                exponent = float(count - 1 - k)
                for i in range(flat.size):
                    powers[k, i] = flat[i] ** exponent
            return powers.reshape((count,) + x.shape)
        return of_points
    return typing


@compiled(signal.polynomial_derivative)
def _polynomial_derivative(types):
    """polynomial_derivative: ``p[k] * (n - 1 - k)`` for all but the last of the n coefficients of a
    float64 vector (np.polyder's coefficients, NumPy's products bit for bit)."""
    def typing(p):
        if not _float_vector(types, p):
            return None

        def derived(p):
            count = p.shape[0]
            out = np.empty(max(count - 1, 0))
            for k in range(count - 1):
                out[k] = p[k] * float(count - 1 - k)
            return out
        return derived
    return typing


@compiled(signal.coefficient_axes)
def _coefficient_axes(types):
    """coefficient_axes: ``p``'s first length, a 1 for each axis ``out`` has beyond ``p``'s others, then
    ``p``'s other lengths (the count of 1s is known from the ranks when compiling)."""
    def typing(p, out):
        if not isinstance(p, types.Array) or p.ndim < 1 or not (_real(types, out) or isinstance(out, types.Array)):
            return None
        ones = (1,) * max(0, (out.ndim if isinstance(out, types.Array) else 0) + 1 - p.ndim)
        return lambda p, out: p.shape[:1] + ones + p.shape[1:]
    return typing
