"""Rules for NumPy reductions: sum, mean, var, std, prod, max, min (with ``axis`` and ``keepdims``), cumsum."""
import numpy as np

from s2s_ad.rules import adjoint, fresh_arrays, tangent
from s2s_ad.runtime import broadcast_reduced, cumsum_grad, expand_reduced, prod_others

_AXES = (
    {"a": (3, 4)}, {"a": (3, 4), "axis": 0}, {"a": (3, 4), "axis": -1, "keepdims": True},
    {"a": (2, 3, 4), "axis": (0, 2)}, {"a": (5,)}, {"a": (2, 3), "keepdims": True},
)


@adjoint(np.sum, method="sum", linear=True, examples=_AXES)
def sum(out, a, axis=None, dtype=None, *, keepdims=False, d_out):
    d_a = broadcast_reduced(d_out, a, axis, keepdims)


@adjoint(np.mean, method="mean", linear=True, examples=_AXES)
def mean(out, a, axis=None, dtype=None, *, keepdims=False, d_out):
    d_a = broadcast_reduced(d_out * (np.size(out) / np.size(a)), a, axis, keepdims)  # scale the small one


@adjoint(np.var, method="var", examples=_AXES)
def var(out, a, axis=None, dtype=None, *, ddof=0, keepdims=False, d_out):
    # out = sum((a - mean)**2) / (n - ddof); the mean's own adjoint term sums to zero
    centred = a - np.mean(a, axis=axis, keepdims=True)
    d_a = expand_reduced(d_out * (2.0 / (np.size(a) / np.size(out) - ddof)), axis, keepdims) * centred


@adjoint(np.std, method="std", examples=_AXES)
def std(out, a, axis=None, dtype=None, *, ddof=0, keepdims=False, d_out):
    centred = a - np.mean(a, axis=axis, keepdims=True)  # d std = d var / (2 std)
    d_a = expand_reduced(d_out / (out * (np.size(a) / np.size(out) - ddof)), axis, keepdims) * centred


@adjoint(np.prod, method="prod", examples=_AXES)
def prod(out, a, axis=None, dtype=None, *, keepdims=False, d_out):
    d_a = expand_reduced(d_out, axis, keepdims) * prod_others(a, axis)  # zeros in a are fine


@adjoint(np.max, method="max", examples=_AXES)
def max(out, a, axis=None, *, keepdims=False, d_out):
    at_max = a == expand_reduced(out, axis, keepdims)
    ties = np.sum(at_max, axis=axis, keepdims=True)
    # ties share evenly; dividing the small reduced array first keeps the full-size work to one product
    d_a = at_max * (expand_reduced(d_out, axis, keepdims) / ties)


@adjoint(np.min, method="min", examples=_AXES)
def min(out, a, axis=None, *, keepdims=False, d_out):
    at_min = a == expand_reduced(out, axis, keepdims)
    ties = np.sum(at_min, axis=axis, keepdims=True)
    d_a = at_min * (expand_reduced(d_out, axis, keepdims) / ties)


@tangent(np.prod)
def prod(out, a, axis=None, dtype=None, *, keepdims=False, t_a):
    t_out = np.sum(t_a * prod_others(a, axis), axis=axis, keepdims=keepdims)


@adjoint(np.cumsum, linear=True, method="cumsum", examples=({"a": (5,)}, {"a": (3, 4), "axis": 1},
                                                              {"a": (2, 3)}))
def cumsum(out, a, axis=None, *, d_out):
    d_a = cumsum_grad(d_out, a, axis)


@tangent(np.var)
def var(out, a, axis=None, dtype=None, *, ddof=0, keepdims=False, t_a):
    centred = a - np.mean(a, axis=axis, keepdims=True)
    t_out = np.sum(centred * t_a, axis=axis, keepdims=keepdims) * (2.0 / (np.size(a) / np.size(out) - ddof))


@tangent(np.std)
def std(out, a, axis=None, dtype=None, *, ddof=0, keepdims=False, t_a):
    centred = a - np.mean(a, axis=axis, keepdims=True)
    t_out = np.sum(centred * t_a, axis=axis, keepdims=keepdims) / (out * (np.size(a) / np.size(out) - ddof))


@tangent(np.max)
def max(out, a, axis=None, *, keepdims=False, t_a):
    at_max = a == expand_reduced(out, axis, keepdims)
    t_out = np.sum(t_a * at_max, axis=axis, keepdims=keepdims) / np.sum(at_max, axis=axis, keepdims=keepdims)


@tangent(np.min)
def min(out, a, axis=None, *, keepdims=False, t_a):
    at_min = a == expand_reduced(out, axis, keepdims)
    t_out = np.sum(t_a * at_min, axis=axis, keepdims=keepdims) / np.sum(at_min, axis=axis, keepdims=keepdims)

fresh_arrays(np.cumsum)  # a new array, never a view
