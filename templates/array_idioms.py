# mypy: disable-error-code="no-redef"
# (a function's adjoint and tangent rules are both named after it: the second redefines the name)
"""Rules for everyday array idioms written as methods and attributes: ``x.item()`` (the one number
of a one-element array) and ``x.dtype`` (what it is made of, which carries no derivative)."""
from __future__ import annotations

from typing import Any

import numpy as np

from s2s_ad.rules import adjoint, nondifferentiable, tangent
from s2s_ad.core.runtime import item, unbroadcast


def dtype_of(a: Any) -> np.dtype:
    """``a.dtype``: what an array (or a number, as NumPy would hold it) is made of."""
    return a.dtype if hasattr(a, "dtype") else np.asarray(a).dtype


nondifferentiable(dtype_of, attributes={"dtype": dtype_of})


@adjoint(item, linear=True, method="item", examples=({"a": (1,)}, {"a": (1, 1)}, {"a": ()}))
def item_rule(out, a, *, d_out):
    d_a = unbroadcast(d_out, a)  # spread over the one element, in a's shape


@tangent(item)
def item_rule(out, a, *, t_a):
    t_out = item(t_a)
