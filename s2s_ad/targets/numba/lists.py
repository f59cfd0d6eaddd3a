"""The Numba target's compiled versions of the engine's list ops (imports numba when registered).

Input: the calls generated code makes of ``runtime.list_append``, ``list_with``, ``list_set``,
``list_without`` and ``adjoints_added`` (lowering's lists as values, the pass ``grow_lists_in_place``'s
changes in place, a list's adjoint).  Output, once ``register`` ran: Numba implementations of each for
Numba's lists whose items are of one type and for arrays with a row per item (a list's adjoint); any
other types have none, so Numba refuses the call by name and the function runs as Python, saying so.
(No annotations: Numba requires an overload's typing function and its implementation to have the same
signature, annotations included.)
"""
from __future__ import annotations

from typing import Any

import numpy as np

from ...core import runtime

types: Any = None


def register(overload: Any) -> None:
    """Declare the implementations (``overload``: Numba's, with the runtime's options)."""
    global types
    from numba import types as numba_types
    types = numba_types
    overload(runtime.list_append)(_list_append)
    overload(runtime.list_with)(_list_with)
    overload(runtime.list_set)(_list_set)
    overload(runtime.list_without)(_list_without)
    overload(runtime.adjoints_added)(_adjoints_added)


def _list_append(items, item):
    # a new list, items then item (the items of a list are of one type: item's must be it exactly)
    if isinstance(items, types.List) and items.dtype == item:
        def appended(items, item):
            out = items.copy()
            out.append(item)
            return out
        return appended
    return None


def _list_with(items, index, item):
    # a new list (or array of rows), the item at index replaced (the items of a list are of one type)
    if isinstance(index, types.Integer) and (isinstance(items, types.Array) or (
            isinstance(items, types.List) and items.dtype == item)):
        def replaced(items, index, item):
            out = items.copy()
            out[index] = item
            return out
        return replaced
    return None


def _list_set(items, index, item):
    # items[index] = item, in place (a list whose items are of one type)
    if isinstance(items, types.List) and items.dtype == item and isinstance(index, types.Integer):
        def set_item(items, index, item):
            items[index] = item
        return set_item
    return None


def _list_without(grad, index):
    # a list's adjoint with the piece at index zero: a row of an array, or a number or array of a list
    if isinstance(grad, types.Array) and isinstance(index, types.Integer):
        def row_zeroed(grad, index):
            out = grad.copy()
            out[index] = 0.0
            return out
        return row_zeroed
    if isinstance(grad, types.List) and isinstance(index, types.Integer) and isinstance(grad.dtype, types.Array):
        def array_zeroed(grad, index):
            out = grad.copy()
            out[index] = np.zeros_like(out[index])
            return out
        return array_zeroed
    if isinstance(grad, types.List) and isinstance(index, types.Integer) and isinstance(grad.dtype, types.Float):
        def number_zeroed(grad, index):
            out = grad.copy()
            out[index] = 0.0
            return out
        return number_zeroed
    return None


def _adjoints_added(current, contribution):
    # a list's two adjoints (lists of pieces of one type) added piece by piece; arrays and numbers with +
    if isinstance(current, types.List) and isinstance(contribution, types.List) and current.dtype == contribution.dtype:
        def by_piece(current, contribution):
            if len(current) != len(contribution):
                raise ValueError("two adjoints of one list with different numbers of items")
            return [current[i] + contribution[i] for i in range(len(current))]
        return by_piece
    if isinstance(current, (types.Array, types.Number)) and isinstance(contribution, (types.Array, types.Number)):
        return lambda current, contribution: current + contribution
    return None
