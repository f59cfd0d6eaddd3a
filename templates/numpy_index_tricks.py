"""Rules for NumPy's index tricks ``np.r_`` and ``np.c_`` of numbers and arrays.

``np.r_[a, b]`` is not a call but an object indexed; the transformer reads it as a call of the
function declared ``index_call=`` for the object, on the list of the items: ``rows_joined([a, b])``
(each item at least 1-d, joined along the first axis), ``columns_joined([a, b])`` (numbers and 1-d
arrays as columns, joined along the last axis).  Slices and directive strings (``np.r_[0:3]``,
``np.r_['0,2', a]``) are refused where the code is transformed.
"""
import numpy as np

from s2s_ad.rules import adjoint, declare


def _as_column(item):
    """An item of np.c_: a number as a 1 x 1 matrix, a 1-d array as a column, others as they are."""
    item = np.asarray(item)
    return np.reshape(item, (-1, 1)) if item.ndim < 2 else item


def rows_joined(items):
    """``np.r_[items...]`` of numbers and arrays: each at least 1-d, joined along the first axis."""
    return np.concatenate([np.atleast_1d(item) for item in items], axis=0)


def columns_joined(items):
    """``np.c_[items...]`` of numbers and arrays: numbers and 1-d arrays as columns, joined along the last axis."""
    return np.concatenate([_as_column(item) for item in items], axis=-1)


def index_joined(items, columns):
    """``columns_joined(items)`` where ``columns``, else ``rows_joined(items)``."""
    return columns_joined(items) if columns else rows_joined(items)


def index_joined_grad(grad, items, columns):
    """The adjoint of each item of ``index_joined(items, columns)``: its piece of ``grad``, in its shape."""
    pieces = [_as_column(item) if columns else np.atleast_1d(item) for item in items]
    axis = -1 if columns else 0
    bounds = np.cumsum([np.shape(piece)[axis] for piece in pieces])[:-1]
    parts = [np.reshape(part, np.shape(item)) for part, item in zip(np.split(np.asarray(grad), bounds, axis=axis), items)]
    return np.reshape(np.stack(parts), np.shape(items)) if isinstance(items, np.ndarray) else parts  # an array's rows


_ITEMS = ({"items": [(3,), (2,)]}, {"items": [(), (3,), ()]}, {"items": [(2, 3), (1, 3)]}, {"items": (3, 2)})
_COLUMNS = ({"items": [(3,), (3,)]}, {"items": [(2, 3), (2,)]}, {"items": [(), ()]}, {"items": (2, 3)})


@adjoint(rows_joined, linear=True, examples=_ITEMS)
def rows_joined_rule(out, items, d_out):
    d_items = index_joined_grad(d_out, items, False)


@adjoint(columns_joined, linear=True, examples=_COLUMNS)
def columns_joined_rule(out, items, d_out):
    d_items = index_joined_grad(d_out, items, True)


@adjoint(index_joined, linear=True, examples=tuple(dict(e, columns=False) for e in _ITEMS)
         + tuple(dict(e, columns=True) for e in _COLUMNS))
def index_joined_rule(out, items, columns, d_out):
    d_items = index_joined_grad(d_out, items, columns)


@adjoint(index_joined_grad, linear=True, shape_only=1, may_view=True, returns_sequence=True, examples=(  # pieces of grad
    {"grad": (4,), "items": [np.zeros(2), np.zeros(2)], "columns": False},
    {"grad": (3, 2), "items": [np.zeros(3), np.zeros(3)], "columns": True}))
def index_joined_grad_rule(out, grad, items, columns, d_out):
    d_grad = index_joined(d_out, columns)


declare(np.r_, index_call=rows_joined)
declare(np.c_, index_call=columns_joined)
