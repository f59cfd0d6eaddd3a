"""The Numba target's compiled versions of ``templates/python_data.py``'s helpers: ``sum_items_adjoint``
(the adjoint of each item of ``sum(items)``) for a list of numbers, what a loop of appends makes
(``losses.append(v)`` ... ``sum(losses)``).  Other iterables (arrays' rows, items of different
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
