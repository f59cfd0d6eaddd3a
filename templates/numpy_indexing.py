"""Rules for reading by index: ``x[0]``, ``x[1:-1]``, ``x[:, 2]``, integer-array indexing.

``syntax=ast.Subscript``: generated code writes ``getitem(a, b)`` as ``a[b]``."""
import ast
import operator

import numpy as np

from s2s_ad.rules import adjoint, declare
from s2s_ad.core.runtime import getitem_grad


@adjoint(operator.getitem, linear=True, examples=(
    {"a": (5,), "b": 0}, {"a": (5,), "b": slice(1, -1)}, {"a": (4, 3), "b": (slice(None), 2)},
    {"a": (4, 3), "b": (1, slice(0, 2))}, {"a": (5,), "b": np.array([0, 2, 2, 4])},
    {"a": (4, 3), "b": (np.array([0, 3, 0]), slice(None))}, {"a": (5,), "b": slice(None, None, -2)},
), view=True, reusable=True, syntax=ast.Subscript)
def getitem(out, a, b, d_out):
    d_a = getitem_grad(d_out, a, b)


# An element read moves with its array: (x + c)[i] is x[i] + c (shift_invariance.py)
declare(operator.getitem, shift="index")
declare(operator.getitem, holds_no_list=True)  # of a list: an item, or a new list (a slice copies)
