# mypy: disable-error-code="no-redef"
# (a function's adjoint and tangent rules are both named after it: the second redefines the name)
"""Rules for NumPy reductions: sum, mean, var, std, prod, max, min (with ``axis`` and ``keepdims``), cumsum,
median, quantile and percentile (the default, linear method).

The helpers their adjoints call (``broadcast_reduced``, ``expand_reduced``, ``cumsum_grad``,
``quantile_scatter``...) are defined here first, and their own rules are at the end."""
from __future__ import annotations

from typing import Any, Callable

import numpy as np

from s2s_ad.rules import adjoint, batched, data_axis, declare, fresh_arrays, nondifferentiable, tangent
from s2s_ad.core.runtime import unbroadcast


# -- helpers: what the code these rules generate calls where a shape or an axis is known only at run
# time (their own rules are at the end: generated code differentiated again calls them too) --------

def as_floats(a: Any, *others: Any) -> np.ndarray:
    """``a`` as an array of at least floating point, of the type it makes with ``others``: a list of
    numbers too (``np.result_type`` reads a list as a description of fields, ``norm([x, y])``)."""
    a = np.asarray(a)
    return np.asarray(a, dtype=np.result_type(a, *(np.asarray(o) for o in others), 1.0))


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


# Quantiles (NumPy's default, linear method): piecewise linear in the data and in q.
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
        rounding: dict[str, Callable[[Any], Any]] = {"lower": np.floor, "higher": np.ceil, "nearest": np.around}
        picked = rounding[method](position)
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


nondifferentiable(trailing_axes)

_AXES = (
    {"a": (3, 4)}, {"a": (3, 4), "axis": 0}, {"a": (3, 4), "axis": -1, "keepdims": True},
    {"a": (2, 3, 4), "axis": (0, 2)}, {"a": (5,)}, {"a": (2, 3), "keepdims": True},
)


# where= and initial= on reductions.  The helpers fold away where the call passes neither (declared
# folds=), so the code for a plain np.sum is what it was.
def where_kept(grad, where=True):
    """``grad`` where the reduction read the element (``where``), 0 elsewhere."""
    return np.where(where, grad, 0.0)


def where_filled(a, where=True, fill=0.0):
    """``a`` where the reduction reads it, ``fill`` (its identity, a constant) elsewhere."""
    return np.where(where, a, fill)


def where_share(out, a, axis=None, keepdims=False, where=True):
    """The weight of each element read in ``np.mean(a, axis, keepdims=keepdims, where=where)``: one over
    the count of elements read into its result (shaped like the result), 0 where there are none."""
    read = np.sum(np.broadcast_to(where, np.shape(a)), axis=axis, keepdims=keepdims)
    return 1.0 / np.maximum(read, 1)


def initial_ties(out, initial=None, axis=None, keepdims=False):
    """Where ``initial`` is the maximum (or minimum) ``out`` of np.max(..., initial=): 1, shaped as the
    reduction kept its axes; else 0."""
    return expand_reduced(out == initial, axis, keepdims) * 1.0


def _kept_grad(grad, where=True):
    return grad


def _kept_a(a, where=True, fill=0.0):
    return a


def _share_all(out, a, axis=None, keepdims=False, where=True):
    return np.size(out) / np.maximum(np.size(a), 1)  # scale the small one (an empty a: 0)


def _share_one(out, a, axis=None, keepdims=False, where=True):
    return 1.0 / np.maximum(np.size(a), 1)  # a whole-array mean: one result (out itself is not read)


def _share_chosen(where=True, axis=None, keepdims=False):
    """The fold of ``where_share``: without ``where=``, the mean of the whole array shares 1 / n (its
    result then need not be computed for its size: ``grad`` of ``np.mean(...)`` reads no value), else
    the result's size over the array's; an axis or keepdims not known when the code is made counts as
    given (``NOT_CONSTANT``, which is neither None nor false)."""
    if where is not True:
        return None
    return _share_one if axis is None and not keepdims else _share_all


setattr(_share_chosen, "takes_unknown", True)  # (called with rules.NOT_CONSTANT for what is not a constant)


def _no_initial(out, initial=None, axis=None, keepdims=False):
    return 0.0


declare(where_kept, folds=lambda where=True: _kept_grad if where is True else None)
declare(where_filled, folds=lambda where=True: _kept_a if where is True else None)
declare(where_share, folds=_share_chosen)
declare(initial_ties, folds=lambda initial=None: _no_initial if initial is None else None)
nondifferentiable(where_share, initial_ties)


@adjoint(where_kept, linear=True, zero_derivative=("where",), examples=(
    {"grad": (3,), "where": np.array([True, False, True])}, {"grad": (2, 3), "where": np.array([[True], [False]])}))
def where_kept_rule(out, grad, where=True, *, d_out):
    d_grad = unbroadcast(where_kept(d_out, where), grad)


@adjoint(where_filled, zero_derivative=("where",), examples=(
    {"a": (3,), "where": np.array([True, False, True]), "fill": 1.0},))
def where_filled_rule(out, a, where=True, fill=0.0, *, d_out):
    d_a = unbroadcast(where_kept(d_out, where), a)


@tangent(where_filled)
def where_filled_rule(out, a, where=True, fill=0.0, *, t_a):
    t_out = where_kept(t_a, where)


_MASKED = np.array([[True, False, True, True], [False, False, True, True], [True, True, True, False]])
_WHERE = ({"a": (3, 4), "where": _MASKED}, {"a": (3, 4), "axis": 1, "where": _MASKED},
          {"a": (3, 4), "axis": 0, "where": np.array([[True], [False], [True]]), "keepdims": True})
_INITIAL = ({"a": (3, 4), "initial": 0.5, "where": _MASKED}, {"a": (3, 4), "axis": 1, "initial": ()},
            {"a": (4,), "initial": 0.5})


@adjoint(np.sum, method="sum", linear=True, examples=_AXES + _WHERE + (
    {"a": (3, 4), "axis": 1, "initial": ()}, {"a": (3, 4), "initial": (), "where": _MASKED}), reduction=True)  # (linear in a and initial together)
def sum(out, a, axis=None, dtype=None, *, keepdims=False, initial=0.0, where=True, d_out):
    d_a = where_kept(broadcast_reduced(d_out, a, axis, keepdims), where)
    d_initial = np.sum(d_out)  # added into every result


@adjoint(np.mean, method="mean", linear=True, examples=_AXES + _WHERE, reduction=True)
def mean(out, a, axis=None, dtype=None, *, keepdims=False, where=True, d_out):
    d_a = where_kept(broadcast_reduced(d_out * where_share(out, a, axis, keepdims, where), a, axis, keepdims), where)


@adjoint(np.var, method="var", examples=_AXES)
def var(out, a, axis=None, dtype=None, *, ddof=0, keepdims=False, d_out):
    # out = sum((a - mean)**2) / (n - ddof); the mean's own adjoint term sums to zero
    centred = a - np.mean(a, axis=axis, keepdims=True)
    d_a = expand_reduced(d_out * (2.0 / (np.size(a) / np.maximum(np.size(out), 1) - ddof)), axis, keepdims) * centred


@adjoint(np.std, method="std", examples=_AXES + ({"a": (3, 4), "axis": 1, "ddof": 1},))
def std(out, a, axis=None, dtype=None, *, ddof=0, keepdims=False, d_out):
    centred = a - np.mean(a, axis=axis, keepdims=True)  # d std = d var / (2 std)
    # where the spread is zero, centred is zero too: 0, the smallest subgradient of this cone, not 0 / 0
    spread = out + (out == 0)
    d_a = expand_reduced(d_out / (spread * (np.size(a) / np.maximum(np.size(out), 1) - ddof)), axis, keepdims) * centred


@adjoint(np.prod, method="prod", examples=_AXES + _WHERE + _INITIAL, reduction=True)
def prod(out, a, axis=None, dtype=None, *, keepdims=False, initial=1.0, where=True, d_out):
    # out = initial * the product of the elements read (an element not read counts as 1)
    d_a = where_kept(expand_reduced(d_out * initial, axis, keepdims) * prod_others(where_filled(a, where, 1.0), axis), where)
    d_initial = np.sum(d_out * np.prod(where_filled(a, where, 1.0), axis=axis, keepdims=keepdims))


@adjoint(np.amax, examples=_AXES + _INITIAL)
@adjoint(np.max, method="max", examples=_AXES + _INITIAL, reduction=True)
def max(out, a, axis=None, *, keepdims=False, initial=None, where=True, d_out):
    at_max = where_kept(a == expand_reduced(out, axis, keepdims), where)
    ties = np.sum(at_max, axis=axis, keepdims=True) + initial_ties(out, initial, axis, keepdims)
    # ties share evenly (initial= counts as one more); dividing the small reduced array first keeps the
    # full-size work to one product
    d_a = at_max * (expand_reduced(d_out, axis, keepdims) / ties)
    d_initial = np.sum(expand_reduced(d_out, axis, keepdims) * initial_ties(out, initial, axis, keepdims) / ties)


@adjoint(np.amin, examples=_AXES + _INITIAL)
@adjoint(np.min, method="min", examples=_AXES + _INITIAL, reduction=True)
def min(out, a, axis=None, *, keepdims=False, initial=None, where=True, d_out):
    at_min = where_kept(a == expand_reduced(out, axis, keepdims), where)
    ties = np.sum(at_min, axis=axis, keepdims=True) + initial_ties(out, initial, axis, keepdims)
    d_a = at_min * (expand_reduced(d_out, axis, keepdims) / ties)
    d_initial = np.sum(expand_reduced(d_out, axis, keepdims) * initial_ties(out, initial, axis, keepdims) / ties)


# Along axes where c is one number: sum(x e**c) is sum(x) e**c; mean, max and min move with x + c too,
# and with x e**c (shift_invariance.py)
declare(np.sum, shift="homogeneous")
declare(np.mean, np.max, np.amax, np.min, np.amin, shift="equivariant")


@tangent(np.prod)
def prod(out, a, axis=None, dtype=None, *, keepdims=False, initial=1.0, where=True, t_a, t_initial):
    t_out = (np.sum(where_kept(t_a * prod_others(where_filled(a, where, 1.0), axis), where), axis=axis, keepdims=keepdims)
             * initial + t_initial * np.prod(where_filled(a, where, 1.0), axis=axis, keepdims=keepdims))


@adjoint(np.cumsum, linear=True, method="cumsum", examples=({"a": (5,)}, {"a": (3, 4), "axis": 1},
                                                              {"a": (2, 3)}))
def cumsum(out, a, axis=None, *, d_out):
    d_a = cumsum_grad(d_out, a, axis)


@tangent(np.var)
def var(out, a, axis=None, dtype=None, *, ddof=0, keepdims=False, t_a):
    centred = a - np.mean(a, axis=axis, keepdims=True)
    t_out = np.sum(centred * t_a, axis=axis, keepdims=keepdims) * (2.0 / (np.size(a) / np.maximum(np.size(out), 1) - ddof))


@tangent(np.std)
def std(out, a, axis=None, dtype=None, *, ddof=0, keepdims=False, t_a):
    centred = a - np.mean(a, axis=axis, keepdims=True)
    spread = out + (out == 0)  # 0 where the spread is zero, as the adjoint
    t_out = np.sum(centred * t_a, axis=axis, keepdims=keepdims) / (spread * (np.size(a) / np.maximum(np.size(out), 1) - ddof))


@tangent(np.amax)
@tangent(np.max)
def max(out, a, axis=None, *, keepdims=False, initial=None, where=True, t_a, t_initial):
    at_max = where_kept(a == expand_reduced(out, axis, keepdims), where)
    at_initial = initial_ties(out, initial, None, True)
    t_out = (np.sum(t_a * at_max, axis=axis, keepdims=keepdims) + t_initial * at_initial) / (
        np.sum(at_max, axis=axis, keepdims=keepdims) + at_initial)


@tangent(np.amin)
@tangent(np.min)
def min(out, a, axis=None, *, keepdims=False, initial=None, where=True, t_a, t_initial):
    at_min = where_kept(a == expand_reduced(out, axis, keepdims), where)
    at_initial = initial_ties(out, initial, None, True)
    t_out = (np.sum(t_a * at_min, axis=axis, keepdims=keepdims) + t_initial * at_initial) / (
        np.sum(at_min, axis=axis, keepdims=keepdims) + at_initial)


_QUANTILES = (
    {"a": (5,), "q": 0.3}, {"a": (3, 4), "q": (), "axis": 1}, {"a": (4, 3), "q": np.array([0.25, 0.9]), "axis": 0},
    {"a": (6,), "q": (2,)}, {"a": (2, 3, 4), "q": 0.5, "axis": (0, 2), "keepdims": True}, {"a": (4,), "q": 1.0},
)


@adjoint(np.quantile, examples=_QUANTILES + ({"a": (6,), "q": (2,), "method": "lower"},
                                             {"a": (3, 5), "q": 0.4, "axis": -1, "method": "nearest"},
                                             {"a": (5,), "q": np.array([0.3, 0.6]), "method": "higher"},
                                             {"a": (6,), "q": 0.3, "method": "midpoint"}))
def quantile(out, a, q, axis=None, *, method="linear", keepdims=False, d_out):
    # the linear method: each quantile lies between two neighbours in sorted order, q picks where;
    # lower, higher, nearest pick one neighbour, midpoint halves two (constant in q)
    d_a = quantile_scatter(d_out, a, q, axis, keepdims, False, method)
    d_q = np.sum(d_out * quantile_slope(a, a, q, axis, keepdims, method), axis=trailing_axes(q, out))


@tangent(np.quantile)
def quantile(out, a, q, axis=None, *, method="linear", keepdims=False, t_a, t_q):
    t_out = (quantile_linear(t_a, a, q, axis, keepdims, method)
             + expand_quantiles(t_q, out) * quantile_slope(a, a, q, axis, keepdims, method))


@adjoint(np.percentile, examples=tuple(dict(e, q=np.asarray(e["q"]) * 100.0 if not isinstance(e["q"], tuple) else e["q"])
                                       for e in _QUANTILES[:4]) + ({"a": (5,), "q": 30.0},
                                                                   {"a": (5,), "q": 30.0, "method": "lower"}),
         domain=(0.2, 0.8))
def percentile(out, a, q, axis=None, *, method="linear", keepdims=False, d_out):
    d_a = quantile_scatter(d_out, a, np.divide(q, 100.0), axis, keepdims, False, method)
    d_q = np.sum(d_out * quantile_slope(a, a, np.divide(q, 100.0), axis, keepdims, method), axis=trailing_axes(q, out)) / 100.0


@tangent(np.percentile)
def percentile(out, a, q, axis=None, *, method="linear", keepdims=False, t_a, t_q):
    t_out = (quantile_linear(t_a, a, np.divide(q, 100.0), axis, keepdims, method)
             + expand_quantiles(t_q, out) * quantile_slope(a, a, np.divide(q, 100.0), axis, keepdims, method) / 100.0)


@adjoint(np.median, examples=({"a": (5,)}, {"a": (4,)}, {"a": (3, 4), "axis": 1}, {"a": (2, 3, 4), "axis": (0, 2),
                                                                               "keepdims": True}))
def median(out, a, axis=None, *, keepdims=False, d_out):
    d_a = quantile_scatter(d_out, a, 0.5, axis, keepdims, False)  # the middle one, or the middle two halved


@tangent(np.median)
def median(out, a, axis=None, *, keepdims=False, t_a):
    t_out = quantile_linear(t_a, a, 0.5, axis, keepdims)


@adjoint(np.cumprod, method="cumprod", examples=({"a": (5,)}, {"a": (3, 4), "axis": 1}, {"a": (2, 3)},
                                                 {"a": np.array([0.5, 0.0, 2.0, 0.0, 1.5])}))
def cumprod(out, a, axis=None, *, d_out):
    d_a = cumprod_grad(d_out, a, axis)  # zeros in a are fine: no division


@tangent(np.cumprod)
def cumprod(out, a, axis=None, *, t_a):
    t_out = cumprod_jvp(a, t_a, axis)


fresh_arrays(np.cumsum)  # a new array, never a view


@adjoint(np.ptp, examples=_AXES)
def ptp(out, a, axis=None, *, keepdims=False, d_out):
    # max - min: ties share evenly, as in max's and min's rules
    at_max = a == np.max(a, axis=axis, keepdims=True)
    at_min = a == np.min(a, axis=axis, keepdims=True)
    d_a = expand_reduced(d_out, axis, keepdims) * (at_max / np.sum(at_max, axis=axis, keepdims=True)
                                                   - at_min / np.sum(at_min, axis=axis, keepdims=True))


@tangent(np.ptp)
def ptp_tangent(out, a, axis=None, *, keepdims=False, t_a):
    at_max = a == np.max(a, axis=axis, keepdims=True)
    at_min = a == np.min(a, axis=axis, keepdims=True)
    t_out = np.sum(t_a * (at_max / np.sum(at_max, axis=axis, keepdims=True)
                          - at_min / np.sum(at_min, axis=axis, keepdims=True)), axis=axis, keepdims=keepdims)


@adjoint(np.nansum, examples=_AXES)
def nansum(out, a, axis=None, dtype=None, *, keepdims=False, d_out):
    d_a = broadcast_reduced(d_out, a, axis, keepdims) * np.logical_not(np.isnan(a))  # a NaN counts as 0


@tangent(np.nansum)
def nansum_tangent(out, a, axis=None, dtype=None, *, keepdims=False, t_a):
    t_out = np.sum(t_a * np.logical_not(np.isnan(a)), axis=axis, keepdims=keepdims)


@adjoint(np.nanmean, examples=_AXES)
def nanmean(out, a, axis=None, dtype=None, *, keepdims=False, d_out):
    present = np.logical_not(np.isnan(a))
    # an all-NaN slice (NumPy: NaN) has no present element to share with: 0, not 0 / 0
    d_a = expand_reduced(d_out, axis, keepdims) * present / np.maximum(np.sum(present, axis=axis, keepdims=True), 1)


@tangent(np.nanmean)
def nanmean_tangent(out, a, axis=None, dtype=None, *, keepdims=False, t_a):
    present = np.logical_not(np.isnan(a))
    t_out = np.sum(t_a * present, axis=axis, keepdims=keepdims) / np.maximum(np.sum(present, axis=axis, keepdims=keepdims), 1)


@adjoint(average_weights, linear=True, zero_derivative=("a",), may_view=True, examples=({"a": np.zeros((3, 4)), "weights": (4,), "axis": -1},
                                                 {"a": np.zeros((3, 4)), "weights": (3, 4)}))
def average_weights_rule(out, a, weights, axis=None, *, d_out):
    d_weights = np.reshape(d_out, np.shape(weights))


@adjoint(np.average, examples=_AXES + (
    {"a": (3, 4), "axis": 1, "weights": (4,)}, {"a": (2, 3, 4), "axis": -2, "weights": (3,), "keepdims": True},
    {"a": (3, 4), "weights": (3, 4)}, {"a": (2, 3, 4), "axis": (0, 2), "weights": (2, 3, 4)}, {"a": (5,), "weights": (5,)}))
def average(out, a, axis=None, weights=None, *, keepdims=False, d_out):
    # out = sum(w a) / sum(w) along axis: d a = w / sum(w), d w = (a - out) / sum(w) (summed onto w's shape)
    w = average_weights(a, weights, axis)
    spread = w * np.ones(np.shape(a))  # the weight of each of a's items
    scaled = expand_reduced(d_out, axis, keepdims) / np.sum(spread, axis=axis, keepdims=True)
    d_a = scaled * spread
    d_weights = np.reshape(unbroadcast(scaled * (a - expand_reduced(out, axis, keepdims)), w), np.shape(weights))


@tangent(np.average)
def average_tangent(out, a, axis=None, weights=None, *, keepdims=False, t_a, t_weights):
    w = average_weights(a, weights, axis)
    moved = w * t_a + average_weights(a, t_weights, axis) * (a - expand_reduced(out, axis, keepdims))
    t_out = np.sum(moved, axis=axis, keepdims=keepdims) / np.sum(w * np.ones(np.shape(a)), axis=axis, keepdims=keepdims)


# The NaN-ignoring reductions: a NaN element is left out of the result, so its derivative is 0; an
# all-NaN slice (NumPy: NaN, or 0 for nanprod's empty product) gives its elements 0.
_WITH_NANS = np.array([[0.3, np.nan, 0.7, 0.1], [np.nan, 0.5, 0.2, 0.6], [0.4, 0.25, np.nan, 0.55]])
_NAN_AXES = _AXES + ({"a": _WITH_NANS}, {"a": _WITH_NANS, "axis": 1}, {"a": _WITH_NANS, "axis": 0, "keepdims": True})


def nan_median_weights(a, axis=None, keepdims=False):
    """The weight of each element of ``a`` in ``np.nanmedian(a, axis)``: 1 for the middle present
    element of its slice, 0.5 for each of the middle two, 0 for the others, NaNs and all-NaN slices.
    Piecewise constant in ``a`` (its derivative is 0)."""
    a = np.asarray(a, dtype=np.result_type(a, 1.0))
    axes = tuple(range(a.ndim)) if axis is None else tuple(int(i) % a.ndim for i in np.atleast_1d(axis))  # (this module rebinds max and sum)
    kept = tuple(i for i in range(a.ndim) if i not in axes)
    moved = np.transpose(a, kept + axes)
    rows = np.reshape(moved, moved.shape[:len(kept)] + (-1,))
    order = np.argsort(rows, axis=-1)  # NaNs sort last
    ranks = np.empty_like(order)
    np.put_along_axis(ranks, order, np.broadcast_to(np.arange(rows.shape[-1]), order.shape), axis=-1)
    count = np.sum(np.logical_not(np.isnan(rows)), axis=-1, keepdims=True)
    weights = (0.5 * (ranks == (count - 1) // 2) + 0.5 * (ranks == count // 2)) * (count > 0)
    return np.transpose(np.reshape(weights, moved.shape), np.argsort(kept + axes))


nondifferentiable(nan_median_weights, np.nanargmax, np.nanargmin)  # (the indices: integers)


def _filled_ones(a):
    """``a`` with each NaN replaced by 1 (nanprod's reading of it)."""
    return np.where(np.isnan(a), 1.0, a)


@adjoint(np.nanmin, examples=_NAN_AXES)
@adjoint(np.nanmax, examples=_NAN_AXES)
def nan_extreme(out, a, axis=None, *, keepdims=False, d_out):
    at_extreme = a == expand_reduced(out, axis, keepdims)  # a NaN equals nothing
    ties = np.sum(at_extreme, axis=axis, keepdims=True)
    d_a = at_extreme * (expand_reduced(d_out, axis, keepdims) / np.maximum(ties, 1))  # ties share evenly


@tangent(np.nanmin)
@tangent(np.nanmax)
def nan_extreme(out, a, axis=None, *, keepdims=False, t_a):
    at_extreme = a == expand_reduced(out, axis, keepdims)
    t_out = np.sum(np.where(at_extreme, t_a, 0.0), axis=axis, keepdims=keepdims) / np.maximum(
        np.sum(at_extreme, axis=axis, keepdims=keepdims), 1)


@adjoint(np.nanprod, examples=_NAN_AXES)
def nanprod(out, a, axis=None, dtype=None, *, keepdims=False, d_out):
    d_a = np.where(np.isnan(a), 0.0, expand_reduced(d_out, axis, keepdims) * prod_others(_filled_ones(a), axis))


@tangent(np.nanprod)
def nanprod(out, a, axis=None, dtype=None, *, keepdims=False, t_a):
    t_out = np.sum(np.where(np.isnan(a), 0.0, t_a * prod_others(_filled_ones(a), axis)), axis=axis, keepdims=keepdims)


@adjoint(np.nanvar, examples=_NAN_AXES + ({"a": _WITH_NANS, "axis": 1, "ddof": 1},))
def nanvar(out, a, axis=None, dtype=None, *, ddof=0, keepdims=False, d_out):
    # out = sum((a - mean)**2 over the present elements) / (count - ddof)
    present = np.logical_not(np.isnan(a))
    centred = np.where(present, a - np.nanmean(a, axis=axis, keepdims=True), 0.0)
    count = np.sum(present, axis=axis, keepdims=True)
    d_a = expand_reduced(d_out, axis, keepdims) * (2.0 / np.maximum(count - ddof, 1)) * centred


@tangent(np.nanvar)
def nanvar(out, a, axis=None, dtype=None, *, ddof=0, keepdims=False, t_a):
    present = np.logical_not(np.isnan(a))
    centred = np.where(present, a - np.nanmean(a, axis=axis, keepdims=True), 0.0)
    count = np.sum(present, axis=axis, keepdims=keepdims)
    t_out = np.sum(centred * np.where(present, t_a, 0.0), axis=axis, keepdims=keepdims) * (2.0 / np.maximum(count - ddof, 1))


@adjoint(np.nanstd, examples=_NAN_AXES + ({"a": _WITH_NANS, "axis": 1, "ddof": 1},))
def nanstd(out, a, axis=None, dtype=None, *, ddof=0, keepdims=False, d_out):
    present = np.logical_not(np.isnan(a))
    centred = np.where(present, a - np.nanmean(a, axis=axis, keepdims=True), 0.0)
    count = np.sum(present, axis=axis, keepdims=True)
    spread = expand_reduced(np.where(out > 0, out, 1.0), axis, keepdims)  # zero spread, or none (NaN): 0, as std's
    d_a = expand_reduced(d_out, axis, keepdims) / (spread * np.maximum(count - ddof, 1)) * centred


@tangent(np.nanstd)
def nanstd(out, a, axis=None, dtype=None, *, ddof=0, keepdims=False, t_a):
    present = np.logical_not(np.isnan(a))
    centred = np.where(present, a - np.nanmean(a, axis=axis, keepdims=True), 0.0)
    count = np.sum(present, axis=axis, keepdims=keepdims)
    t_out = np.sum(centred * np.where(present, t_a, 0.0), axis=axis, keepdims=keepdims) / (
        np.where(out > 0, out, 1.0) * np.maximum(count - ddof, 1))


@adjoint(np.nanmedian, examples=_NAN_AXES + ({"a": (4,)}, {"a": (2, 3, 4), "axis": (0, 2)}))
def nanmedian(out, a, axis=None, *, keepdims=False, d_out):
    d_a = expand_reduced(d_out, axis, keepdims) * nan_median_weights(a, axis, keepdims)


@tangent(np.nanmedian)
def nanmedian(out, a, axis=None, *, keepdims=False, t_a):
    t_out = np.sum(np.where(np.isnan(a), 0.0, t_a) * nan_median_weights(a, axis, keepdims), axis=axis, keepdims=keepdims)


@adjoint(np.nancumsum, examples=({"a": (5,)}, {"a": (3, 4), "axis": 1}, {"a": _WITH_NANS, "axis": 1}, {"a": _WITH_NANS}))
def nancumsum(out, a, axis=None, *, d_out):
    d_a = np.where(np.isnan(a), 0.0, cumsum_grad(d_out, a, axis))  # a NaN counts as 0


@tangent(np.nancumsum)
def nancumsum(out, a, axis=None, *, t_a):
    t_out = np.cumsum(np.where(np.isnan(a), 0.0, t_a), axis=axis)


@adjoint(np.nancumprod, examples=({"a": (5,)}, {"a": (3, 4), "axis": 1}, {"a": _WITH_NANS, "axis": 1}, {"a": _WITH_NANS}))
def nancumprod(out, a, axis=None, *, d_out):
    d_a = np.where(np.isnan(a), 0.0, cumprod_grad(d_out, _filled_ones(a), axis))  # a NaN counts as 1


@tangent(np.nancumprod)
def nancumprod(out, a, axis=None, *, t_a):
    t_out = cumprod_jvp(_filled_ones(a), np.where(np.isnan(a), 0.0, t_a), axis)


# The reductions as ufunc methods: np.add.reduce is np.sum, np.multiply.accumulate is np.cumprod...
# (along axis 0 unless told: the methods' default; a bound method is recognised by equality).
_METHOD_AXES = ({"array": (3, 4)}, {"array": (3, 4), "axis": 1}, {"array": (2, 3, 4), "axis": None},
                {"array": (5,)}, {"array": (3, 4), "axis": -1, "keepdims": True}, {"array": (2, 3, 4), "axis": (0, 2)})


@adjoint(np.add.reduce, linear=True, examples=_METHOD_AXES)
def add_reduce(out, array, axis=0, dtype=None, *, keepdims=False, d_out):
    d_array = broadcast_reduced(d_out, array, axis, keepdims)


@adjoint(np.multiply.reduce, examples=_METHOD_AXES)
def multiply_reduce(out, array, axis=0, dtype=None, *, keepdims=False, d_out):
    d_array = expand_reduced(d_out, axis, keepdims) * prod_others(array, axis)


@tangent(np.multiply.reduce)
def multiply_reduce(out, array, axis=0, dtype=None, *, keepdims=False, t_array):
    t_out = np.sum(t_array * prod_others(array, axis), axis=axis, keepdims=keepdims)


@adjoint(np.maximum.reduce, examples=_METHOD_AXES)
def maximum_reduce(out, array, axis=0, dtype=None, *, keepdims=False, d_out):
    at_max = array == expand_reduced(out, axis, keepdims)  # ties share evenly, as np.max
    d_array = at_max * (expand_reduced(d_out, axis, keepdims) / np.sum(at_max, axis=axis, keepdims=True))


@tangent(np.maximum.reduce)
def maximum_reduce(out, array, axis=0, dtype=None, *, keepdims=False, t_array):
    at_max = array == expand_reduced(out, axis, keepdims)
    t_out = np.sum(t_array * at_max, axis=axis, keepdims=keepdims) / np.sum(at_max, axis=axis, keepdims=keepdims)


@adjoint(np.minimum.reduce, examples=_METHOD_AXES)
def minimum_reduce(out, array, axis=0, dtype=None, *, keepdims=False, d_out):
    at_min = array == expand_reduced(out, axis, keepdims)
    d_array = at_min * (expand_reduced(d_out, axis, keepdims) / np.sum(at_min, axis=axis, keepdims=True))


@tangent(np.minimum.reduce)
def minimum_reduce(out, array, axis=0, dtype=None, *, keepdims=False, t_array):
    at_min = array == expand_reduced(out, axis, keepdims)
    t_out = np.sum(t_array * at_min, axis=axis, keepdims=keepdims) / np.sum(at_min, axis=axis, keepdims=keepdims)


_ACCUMULATED = ({"array": (5,)}, {"array": (3, 4)}, {"array": (3, 4), "axis": 1}, {"array": (2, 3, 4), "axis": -1})


@adjoint(np.add.accumulate, linear=True, examples=_ACCUMULATED)
def add_accumulate(out, array, axis=0, dtype=None, *, d_out):
    d_array = cumsum_grad(d_out, array, axis)


@adjoint(np.multiply.accumulate, examples=_ACCUMULATED + ({"array": np.array([0.5, 0.0, 2.0, 0.0, 1.5])},))
def multiply_accumulate(out, array, axis=0, dtype=None, *, d_out):
    d_array = cumprod_grad(d_out, array, axis)


@tangent(np.multiply.accumulate)
def multiply_accumulate(out, array, axis=0, dtype=None, *, t_array):
    t_out = cumprod_jvp(array, t_array, axis)


# -- the rules of the helpers above (generated code differentiated again calls them) ------------

# Where a reduction's axis and keepdims are constants (they usually are), the helpers that undo it
# are one NumPy call or none.  (The fills take the adjoint's dtype: adjoints are never integers.)
def _kept(x, axis=None, keepdims=False):
    return x


def _expanded(x, axis=None, keepdims=False):
    return np.expand_dims(x, axis)


def _filled(grad, like, axis=None, keepdims=False):
    return np.full(np.shape(like), grad)


def _filled_expanded(grad, like, axis=None, keepdims=False):
    return np.full(np.shape(like), np.expand_dims(grad, axis))


declare(expand_reduced, folds=lambda axis=None, keepdims=False: _kept if axis is None or keepdims else _expanded)


declare(broadcast_reduced,
        folds=lambda axis=None, keepdims=False: _filled if axis is None or keepdims else _filled_expanded)


@adjoint(broadcast_reduced, linear=True, examples=(
    {"grad": (), "like": np.zeros((2, 3))}, {"grad": (3,), "like": np.zeros((2, 3)), "axis": 0},
    {"grad": (2, 1), "like": np.zeros((2, 3)), "axis": 1, "keepdims": True}), shape_only=1)
def broadcast_reduced_rule(out, grad, like, axis=None, keepdims=False, *, d_out):
    d_grad = np.sum(d_out, axis=axis, keepdims=keepdims)


@tangent(prod_others, examples=({"a": (4,)}, {"a": (2, 3), "axis": 1}, {"a": (2, 3, 2), "axis": (0, 2)}))
def prod_others_rule(out, a, axis=None, *, t_a):
    t_out = prod_others_jvp(a, t_a, axis)


@tangent(cumsum_grad, examples=({"grad": (5,), "a": np.zeros(5)}, {"grad": (3, 4), "a": np.zeros((3, 4)), "axis": 0}))
def cumsum_grad_rule(out, grad, a, axis=None, *, t_grad):
    t_out = cumsum_grad(t_grad, a, axis)


@adjoint(expand_reduced, linear=True, examples=({"x": (3,), "axis": 1}, {"x": (2, 3)}, {"x": (4,), "axis": 0}))
def expand_reduced_rule(out, x, axis=None, keepdims=False, *, d_out):
    d_x = np.reshape(d_out, np.shape(x))


@tangent(quantile_linear, examples=({"values": (5,), "a": np.array([0.3, 0.1, 0.9, 0.5, 0.7]), "q": (2,)},))
def quantile_linear_rule(out, values, a, q, axis=None, keepdims=False, method="linear", *, t_values, t_q):
    # linear in values; the order of a is piecewise constant; q moves along the gap
    t_out = quantile_linear(t_values, a, q, axis, keepdims, method) + expand_quantiles(t_q, out) * quantile_slope(
        values, a, q, axis, keepdims, method)


@tangent(quantile_slope, examples=({"values": (5,), "a": np.array([0.3, 0.1, 0.9, 0.5, 0.7]), "q": np.array([0.3])},))
def quantile_slope_rule(out, values, a, q, axis=None, keepdims=False, method="linear", *, t_values):
    t_out = quantile_slope(t_values, a, q, axis, keepdims, method)  # piecewise constant in q


@tangent(quantile_scatter, examples=({"grad": (2,), "a": np.array([0.3, 0.1, 0.9, 0.5, 0.7]), "q": (2,)},))
def quantile_scatter_rule(out, grad, a, q, axis=None, keepdims=False, slope=False, method="linear", *,
                          t_grad, t_q):
    t_out = quantile_scatter(t_grad, a, q, axis, keepdims, slope, method) + quantile_scatter(
        grad * expand_quantiles(t_q, grad), a, q, axis, keepdims, True, method) * (1.0 - slope)


@adjoint(expand_quantiles, linear=True, examples=({"t": (2,), "like": np.zeros((2, 3))}, {"t": (), "like": np.zeros(3)}))
def expand_quantiles_rule(out, t, like, d_out):
    d_t = np.reshape(d_out, np.shape(t))


@tangent(cumprod_grad, examples=({"grad": (4,), "a": (4,)}, {"grad": (2, 3), "a": (2, 3), "axis": 1}))
def cumprod_grad_rule(out, grad, a, axis=None, *, t_grad, t_a):
    t_out = cumprod_grad(t_grad, a, axis) + cumprod_grad_jvp(grad, a, t_a, axis)


fresh_arrays(broadcast_reduced)
# Inputs the helpers read for their shape, their length or their sorting order only: a varied
# argument there carries no derivative (any other input without one is refused where it varies).
# What they hand back (view, may_view, returns_sequence) is checked against NumPy
# (tests/rules/test_rule_facts_against_numpy.py): generated code that writes into it copies first.
declare(cumsum_grad, quantile_linear, quantile_scatter, zero_derivative=("a",))
declare(quantile_slope, zero_derivative=("a", "q"))
declare(expand_quantiles, zero_derivative=("like",))
declare(expand_reduced, expand_quantiles, view=True)  # their first argument


# -- batched forms (vector mode, docs/api.md): each takes its directions on a leading axis --------

@batched(np.cumsum, directions=("a",))
def cumsum_batched(a, axis=None, dtype=None, out=None):
    if out is not None:
        raise TypeError("np.cumsum with out= has no batched form")
    if axis is None:  # the flattened array of each direction
        return np.cumsum(np.reshape(a, (a.shape[0], -1)), axis=1, dtype=dtype)
    return np.cumsum(a, axis=data_axis(axis, a.ndim - 1), dtype=dtype)


@batched(cumsum_grad, directions=("grad",))
def cumsum_grad_batched(grad, a, axis=None):
    if axis is None:
        flat = np.reshape(grad, (grad.shape[0], -1))
        return np.reshape(np.cumsum(flat[:, ::-1], axis=1)[:, ::-1], (grad.shape[0],) + np.shape(a))
    axis = data_axis(axis, grad.ndim - 1)
    return np.flip(np.cumsum(np.flip(grad, axis), axis), axis)


def _lifted_to(data: np.ndarray, ndim: int) -> np.ndarray:
    """Directions' data of rank below ``ndim`` (+1) with length-1 axes after the direction axis, as NumPy
    aligns a value of lower rank against one of rank ``ndim``."""
    return np.reshape(data, data.shape[:1] + (1,) * (ndim + 1 - data.ndim) + data.shape[1:])


def _new_axes(axis: Any, ndim: int) -> tuple:
    """The axes ``np.expand_dims(x, axis)`` adds to a result of rank ``ndim``, as axes of its directions' data."""
    return tuple(data_axis(x, ndim) for x in (axis if isinstance(axis, tuple) else (axis,)))


@batched(broadcast_reduced, directions=("grad",))
def broadcast_reduced_batched(grad, like, axis=None, keepdims=False):
    shape = np.shape(like)
    if axis is not None and not keepdims:
        grad = np.expand_dims(grad, _new_axes(axis, len(shape)))
    spread = np.empty(grad.shape[:1] + shape, dtype=np.result_type(grad, 1.0))
    spread[...] = _lifted_to(grad, len(shape))
    return spread


@batched(expand_reduced, directions=("x",))
def expand_reduced_batched(x, axis=None, keepdims=False):
    if axis is None or keepdims:
        return x
    added = axis if isinstance(axis, tuple) else (axis,)
    return np.expand_dims(x, _new_axes(axis, x.ndim - 1 + len(added)))


@batched(where_kept, directions=("grad",))
def where_kept_batched(grad, where=True):
    rank = np.ndim(where) if np.ndim(where) > grad.ndim - 1 else grad.ndim - 1  # (this module's max is a rule)
    return np.where(where, _lifted_to(grad, rank), 0.0)


@batched(cumprod_jvp, directions=("t",))
def cumprod_jvp_batched(a, t, axis=None):
    # cumprod_jvp's recursion with each direction's carry side by side: the same products, in the same order
    a = as_floats(a, t)
    t = np.broadcast_to(np.asarray(_lifted_to(t, a.ndim), dtype=a.dtype), t.shape[:1] + a.shape)
    if axis is None:
        a, t, axis = np.ravel(a), np.reshape(t, (t.shape[0], -1)), 0
    axis = data_axis(axis, a.ndim) - 1
    a, t = np.moveaxis(a, axis, 0), np.moveaxis(t, axis + 1, 1)
    result = np.zeros_like(t)
    product = np.ones(a.shape[1:])
    carry = np.zeros(t.shape[:1] + a.shape[1:])
    for i in range(a.shape[0]):
        carry = carry * a[i] + product * t[:, i]
        product = product * a[i]
        result[:, i] = carry
    return np.moveaxis(result, 1, axis + 1)


@batched(cumprod_grad, directions=("grad",))
def cumprod_grad_batched(grad, a, axis=None):
    # cumprod_grad's backward recursion with each direction's carry side by side
    a = as_floats(a)
    shape = a.shape
    if axis is None:
        a, axis = np.ravel(a), 0
    axis = data_axis(axis, a.ndim) - 1
    g = np.broadcast_to(np.asarray(_lifted_to(grad, a.ndim), dtype=a.dtype), grad.shape[:1] + a.shape)
    a, g = np.moveaxis(a, axis, 0), np.moveaxis(g, axis + 1, 1)
    n = a.shape[0]
    before = np.concatenate([np.ones((1,) + a.shape[1:]), np.cumprod(a[:-1], axis=0)], axis=0)
    rest = np.zeros(g.shape[:1] + a.shape, dtype=a.dtype)
    carry = np.zeros(g.shape[:1] + a.shape[1:])
    for i in range(n - 1, -1, -1):
        carry = g[:, i] + (a[i + 1] * carry if i + 1 < n else 0.0)
        rest[:, i] = carry
    return np.reshape(np.moveaxis(before * rest, 1, axis + 1), grad.shape[:1] + shape)
