"""Rules for Python's own containers: lists and tuples, and the builtins ``sum`` and ``sorted``.

The adjoint of a list or tuple is held as an array with one row per item
(items must be numbers or arrays of one shape; NumPy raises otherwise).
The builtin ``sum`` adds its items with broadcasting (``sum([v, 0.5])``), so
its adjoint gives each item the result's adjoint reduced to that item's shape.  ``sorted`` of
numbers puts them in order (stably, as Python does): each sorted position's adjoint goes back to the
item it came from (the order ``np.argsort`` gives, stable too).
"""
import builtins

import numpy as np

from s2s_ad.rules import adjoint, tangent
from s2s_ad.core.runtime import adjoints_added, list_append, list_with, list_without, unbroadcast, unbroadcast_to


@adjoint(list_append, linear=True, examples=({"items": [(), ()], "item": ()}, {"items": [(3,), (3,)], "item": (3,)}),
         may_view=True, returns_sequence=True)
def list_append_rule(out, items, item, d_out):  # not named list_append: that would hide the helper
    d_items = d_out[:-1]
    d_item = d_out[-1]


@adjoint(list_with, linear=True, zero_derivative=("index",), may_view=True, returns_sequence=True,
         examples=({"items": [(), (), ()], "index": 1, "item": ()}, {"items": [(3,), (3,)], "index": -2, "item": (3,)}))
def list_with_rule(out, items, index, item, d_out):  # items[index] = item: the item written over gets nothing
    d_items = list_without(d_out, index)
    d_item = d_out[index]


@adjoint(list_without, linear=True, zero_derivative=("index",), returns_sequence=True,
         examples=({"grad": [(), (), ()], "index": 1}, {"grad": (2, 3), "index": -1}))
def list_without_rule(out, grad, index, d_out):  # a piece made zero: its own adjoint (forward over reverse)
    d_grad = list_without(d_out, index)


@adjoint(adjoints_added, linear=True, returns_sequence=True,
         examples=({"current": [(3,), (3,)], "contribution": [(3,), (3,)]}, {"current": (2, 3), "contribution": (2, 3)}))
def adjoints_added_rule(out, current, contribution, d_out):  # (a list's two adjoints added: forward over reverse)
    d_current = d_out
    d_contribution = d_out


def sum_items_adjoint(grad, iterable):
    """The adjoint of each item of ``sum(iterable)``: ``grad`` summed over the axes the item was
    broadcast along (a number beside arrays, a row beside a matrix).  Items of one shape (an array's
    rows, a list built by appends) get one array with a row per item, as a list's adjoint is held;
    items of different shapes (``[v, 0.5]``, a display) a tuple, one adjoint per item."""
    if isinstance(iterable, np.ndarray):
        rows = np.broadcast_shapes(np.shape(grad), iterable.shape[1:])
        return np.broadcast_to(unbroadcast_to(grad, rows), (len(iterable),) + rows)
    shapes = {np.shape(item) for item in iterable}
    if len(shapes) == 1:
        (shape,) = shapes
        return np.broadcast_to(unbroadcast_to(grad, shape), (len(iterable),) + shape)
    return tuple(unbroadcast(grad, item) for item in iterable)


@adjoint(builtins.sum, linear=True, examples=({"iterable": [(), (), ()]}, {"iterable": [(2,), (2,)]},
                                              {"iterable": [(3,), ()]}, {"iterable": [(2, 3), (3,)]},
                                              {"iterable": (3,)}, {"iterable": (3, 2)}))
def sum(out, iterable, start=0, *, d_out):
    d_iterable = sum_items_adjoint(d_out, iterable)
    d_start = unbroadcast(d_out, start)


@tangent(sum_items_adjoint, may_view=True, returns_sequence=True, shape_only=1, examples=({"grad": (3,), "iterable": [np.zeros(3), 0.5]},
                                      {"grad": (3,), "iterable": np.zeros((4, 3))}))
def sum_items_adjoint_rule(out, grad, iterable, *, t_grad):  # linear in the adjoint it spreads
    t_out = sum_items_adjoint(t_grad, iterable)


@adjoint(builtins.list, linear=True, examples=({"iterable": [(), (), ()]}, {"iterable": [(2,), (2,)]}, {"iterable": (4,)},
                                                {"iterable": (3, 2)}), returns_sequence=True, may_view=True)
def list(out, iterable, d_out):  # list(items) of a list made at run time (a display's is its items): the same items
    d_iterable = np.asarray(d_out)  # (a list's adjoint is an array, one row per item; an array's too)


@tangent(builtins.list)
def list(out, iterable, t_iterable):
    t_out = t_iterable


def sorted_order(iterable, reverse=False):
    """Where each item of ``sorted(iterable, reverse=reverse)`` (numbers) came from: a stable sort, as
    Python's; reversed, the items compare the other way round (ties keep their order, as in Python)."""
    values = np.asarray(iterable)
    return np.argsort(-values if reverse else values, kind="stable")


def sorted_adjoint(grad, iterable, reverse=False):
    """The adjoint of ``sorted(iterable)``: each sorted position's adjoint goes back where it came from."""
    d_items = np.zeros(np.shape(grad))
    d_items[sorted_order(iterable, reverse)] = grad
    return d_items


@adjoint(builtins.sorted, examples=({"iterable": [(), (), ()]}, {"iterable": (4,)}), returns_sequence=True,
         zero_derivative=("reverse",))
def sorted(out, iterable, *, key=None, reverse=False, d_out):
    d_iterable = sorted_adjoint(d_out, iterable, reverse)


@tangent(builtins.sorted)
def sorted(out, iterable, *, key=None, reverse=False, t_iterable):
    t_out = np.asarray(t_iterable)[sorted_order(iterable, reverse)]
