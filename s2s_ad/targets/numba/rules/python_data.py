"""The Numba target's compiled versions of ``templates/python_data.py``'s helpers: ``sum_items_adjoint``
(the adjoint of each item of ``sum(items)``) for a list of numbers, what a loop of appends makes
(``losses.append(v)`` ... ``sum(losses)``), and ``sorted_adjoint`` (the adjoint of ``sorted(items)``) for a list or
vector of numbers.  Other iterables (arrays' rows, items of different
shapes, which the Python helper answers with a tuple) run as Python.

Each version must do what the Python helper does for the types it accepts (tests/targets/test_numba_backend.py
compares the two); Numba is imported by no module here when loaded (``numba.rules``).
"""
from __future__ import annotations

import numpy as np

from ....rules import compiled
from .template_modules import template

data = template("python_data")


@compiled(data.sum_items_adjoint)
def _sum_items_adjoint(types):
    def typing(grad, iterable):
        numbers = (types.Float, types.Integer)
        if isinstance(iterable, types.List) and isinstance(iterable.dtype, numbers) \
                and isinstance(grad, numbers) and not isinstance(grad, types.Boolean):
            return lambda grad, iterable: np.full(len(iterable), float(grad))
        return None
    return typing


@compiled(data.sorted_adjoint)
def _sorted_adjoint(types):
    """sorted_adjoint of ``sorted(items)`` for a list (or vector) of numbers: each sorted position's adjoint
    sent back where Python's stable sort took it from (``reverse``: the order of the negated values,
    stably, as the helper's ``sorted_order``)."""
    def typing(grad, iterable, reverse=False):
        numbers = (types.Float, types.Integer)
        items = isinstance(iterable, types.List) and isinstance(iterable.dtype, numbers) and \
            not isinstance(iterable.dtype, types.Boolean) or \
            isinstance(iterable, types.Array) and iterable.ndim == 1 and isinstance(iterable.dtype, numbers)
        adjoints = (isinstance(grad, types.List) and isinstance(grad.dtype, types.Float)) or \
            (isinstance(grad, types.Array) and grad.ndim == 1 and isinstance(grad.dtype, types.Float))
        if not (items and adjoints and isinstance(reverse, (types.Boolean, types.Omitted)) or
                items and adjoints and isinstance(reverse, types.BooleanLiteral)):
            return None

        def sorted_adjoint(grad, iterable, reverse=False):
            n = len(iterable)
            if len(grad) != n:
                raise ValueError("sorted_adjoint: the adjoint's length is not the items'")
            values = np.empty(n)
            for i in range(n):
                values[i] = -iterable[i] if reverse else iterable[i]
            order = np.argsort(values, kind="mergesort")  # (stable, as Python's sort)
            out = np.zeros(n)
            for i in range(n):
                out[order[i]] = grad[i]
            return out
        return sorted_adjoint
    return typing
