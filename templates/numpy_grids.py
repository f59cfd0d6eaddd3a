# mypy: disable-error-code="no-redef"
# (a function's adjoint and tangent rules are both named after it: the second redefines the name)
"""Rules for NumPy's grids and axis moves: ``np.logspace`` (in its endpoints and base, along axis 0),
``np.meshgrid`` (of up to four arrays) and ``np.rollaxis``.

Helpers the rules need are defined here, beside them: the axis bookkeeping is declared
``nondifferentiable`` (integers), the rest is written with NumPy functions that have rules.
"""
import numpy as np

from s2s_ad.rules import adjoint, nondifferentiable, tangent
from s2s_ad.core.runtime import unbroadcast

from .numpy_creation import linspace_weights


@adjoint(np.logspace, examples=({"start": (), "stop": (), "num": 5}, {"start": (), "stop": (), "num": 4, "endpoint": False},
                                {"start": (3,), "stop": (), "num": 3}, {"start": (), "stop": (), "num": 4, "base": ()},
                                {"start": (2,), "stop": (2,), "num": 3, "base": (2,)}), domain=(0.2, 0.8))
def logspace(out, start, stop, num=50, endpoint=True, base=10.0, *, d_out):
    # out = base ** y with y = linspace(start, stop): d y = d out * out * log(base)
    weights = linspace_weights(num, endpoint, out)
    moving = d_out * out * np.log(base)
    d_start = unbroadcast(np.sum(moving * (1.0 - weights), axis=0), start)
    d_stop = unbroadcast(np.sum(moving * weights, axis=0), stop)
    d_base = unbroadcast(np.sum(d_out * out * np.linspace(start, stop, num, endpoint) / base, axis=0), base)


@tangent(np.logspace)
def logspace(out, start, stop, num=50, endpoint=True, base=10.0, *, t_start, t_stop, t_base):
    weights = linspace_weights(num, endpoint, out)
    t_out = out * (np.log(base) * (t_start * (1.0 - weights) + t_stop * weights)
                   + t_base * np.linspace(start, stop, num, endpoint) / base)


def meshgrid_others(position, arrays, indexing):
    """The axes of ``np.meshgrid``'s results that the array at ``position`` does not vary along
    (``arrays`` the inputs, None for those not given; "xy" swaps the first two axes)."""
    count = sum(x is not None for x in arrays)
    axis = position
    if indexing == "xy" and count >= 2 and position < 2:
        axis = 1 - position
    return tuple(i for i in range(count) if i != axis)


nondifferentiable(meshgrid_others)


def meshgrid_tangent(arrays, tangents, sparse, indexing):
    """The tangents of ``np.meshgrid``'s results: the grid of the tangents (a missing one, 0.0, zeros)."""
    given = [t + np.zeros(np.shape(x)) for x, t in zip(arrays, tangents) if x is not None]
    return np.meshgrid(*given, sparse=sparse, indexing=indexing)


def _grids(x0, x1=None, x2=None, x3=None):
    """One result for each array given (np.meshgrid(x, y) is two grids, whatever x and y hold)."""
    return sum(x is not None for x in (x0, x1, x2, x3))


setattr(_grids, "counts_given", True)  # called with rules.NOT_CONSTANT for the arrays (see rules.adjoint's items)

_GRIDS = ({"x0": (3,), "x1": (2,)}, {"x0": (3,), "x1": (2,), "indexing": "ij"}, {"x0": (4,)},
          {"x0": (2,), "x1": (3,), "x2": (2,)}, {"x0": (2,), "x1": (3,), "x2": (2,), "indexing": "ij"},
          {"x0": (2, 2), "x1": (3,)})  # (sparse=True: tests/rules/test_rules_everyday_numpy.py)


@adjoint(np.meshgrid, items=_grids, examples=_GRIDS, returns_sequence=True)
def meshgrid(out, x0, x1=None, x2=None, x3=None, *, sparse=False, indexing="xy", d_out):
    # each result repeats one input along the other axes: its adjoint is summed over them
    d_x0 = np.reshape(np.sum(d_out[0], axis=meshgrid_others(0, (x0, x1, x2, x3), indexing)), np.shape(x0))
    d_x1 = np.reshape(np.sum(d_out[1], axis=meshgrid_others(1, (x0, x1, x2, x3), indexing)), np.shape(x1))
    d_x2 = np.reshape(np.sum(d_out[2], axis=meshgrid_others(2, (x0, x1, x2, x3), indexing)), np.shape(x2))
    d_x3 = np.reshape(np.sum(d_out[3], axis=meshgrid_others(3, (x0, x1, x2, x3), indexing)), np.shape(x3))


@tangent(np.meshgrid)
def meshgrid(out, x0, x1=None, x2=None, x3=None, *, sparse=False, indexing="xy", t_x0, t_x1, t_x2, t_x3):
    t_out = meshgrid_tangent((x0, x1, x2, x3), (t_x0, t_x1, t_x2, t_x3), sparse, indexing)


def rollaxis_order(a, axis, start):
    """The permutation of ``a``'s axes that ``np.rollaxis(a, axis, start)`` makes (NumPy's reading)."""
    count = np.ndim(a)
    axis = axis % count
    start = start + count if start < 0 else start
    order = [i for i in range(count) if i != axis]
    order.insert(start - 1 if axis < start else start, axis)
    return tuple(order)


nondifferentiable(rollaxis_order)


@adjoint(np.rollaxis, linear=True, may_view=True, examples=(
    {"a": (2, 3, 4), "axis": 2}, {"a": (2, 3, 4), "axis": 0, "start": 3}, {"a": (2, 3, 4), "axis": -1, "start": 1},
    {"a": (2, 3, 4), "axis": 1, "start": 1}, {"a": (2, 3), "axis": 1, "start": -1}))
def rollaxis(out, a, axis, start=0, *, d_out):
    d_a = np.transpose(d_out, np.argsort(rollaxis_order(a, axis, start)))
