"""The Numba target's compiled versions of ``templates/numpy_grids.py``'s np.meshgrid (Numba has none) and
its adjoint's ``meshgrid_others``.

Input: np.meshgrid of one to three arrays of numbers, ``indexing`` "xy" or "ij" known when compiling (a
literal or left out), ``sparse`` and ``copy`` left out or given as literals False and True.  Output:
NumPy's grids: one new C-ordered array per input, each input flattened and repeated along the other
axes, of its dtype, as a tuple.  Other calls (``sparse=True``, four arrays, an indexing known only at run
time) run as Python.

Each version must do what the Python function does for the types it accepts
(tests/targets/test_numba_grids.py compares the two); Numba is imported by no module here when loaded
(``numba.rules``).
"""
from __future__ import annotations

from typing import Any, Optional

import numpy as np

from ....rules import compiled
from .argument_types import is_none, known
from .template_modules import template

grids = template("numpy_grids")


def _indexing(types: Any, indexing: Any) -> Optional[str]:
    """"xy" or "ij" where known when compiling, else None."""
    if isinstance(indexing, types.StringLiteral):
        indexing = indexing.literal_value
    found = known(types, indexing, str)
    return found if found in ("xy", "ij") else None


@compiled(np.meshgrid)
def _meshgrid(types):
    """np.meshgrid(x0, x1, x2) of one to three arrays: the grid of each, shaped (len(x1), len(x0), len(x2))
    with "xy" indexing (the first two axes swapped), (len(x0), len(x1), len(x2)) with "ij"."""
    def typing(x0, x1=None, x2=None, x3=None, copy=True, sparse=False, indexing="xy"):
        given = [x for x in (x0, x1, x2) if not is_none(types, x)]
        arrays = all(isinstance(x, types.Array) and isinstance(x.dtype, (types.Float, types.Integer)) for x in given)
        order = _indexing(types, indexing)
        plain = known(types, copy, bool) is True and known(types, sparse, bool) is False
        if not arrays or not is_none(types, x3) or order is None or not plain or \
                [is_none(types, x) for x in (x0, x1, x2)] not in ([False, True, True], [False, False, True],
                                                                  [False, False, False]):
            return None
        swapped = order == "xy"
        if len(given) == 1:
            return lambda x0, x1=None, x2=None, x3=None, copy=True, sparse=False, indexing="xy": \
                (np.ascontiguousarray(x0).reshape(-1).copy(),)
        if len(given) == 2:
            def two(x0, x1=None, x2=None, x3=None, copy=True, sparse=False, indexing="xy"):
                a, b = np.ascontiguousarray(x0).reshape(-1), np.ascontiguousarray(x1).reshape(-1)
                n, m = a.size, b.size
                shape = (m, n) if swapped else (n, m)
                first, second = np.empty(shape, a.dtype), np.empty(shape, b.dtype)
                for i in range(n):
                    for j in range(m):
                        at = (j, i) if swapped else (i, j)
                        first[at] = a[i]
                        second[at] = b[j]
                return first, second
            return two

        def three(x0, x1=None, x2=None, x3=None, copy=True, sparse=False, indexing="xy"):
            a, b = np.ascontiguousarray(x0).reshape(-1), np.ascontiguousarray(x1).reshape(-1)
            c = np.ascontiguousarray(x2).reshape(-1)
            n, m, p = a.size, b.size, c.size
            shape = (m, n, p) if swapped else (n, m, p)
            first, second, third = np.empty(shape, a.dtype), np.empty(shape, b.dtype), np.empty(shape, c.dtype)
            for i in range(n):
                for j in range(m):
                    for k in range(p):
                        at = (j, i, k) if swapped else (i, j, k)
                        first[at] = a[i]
                        second[at] = b[j]
                        third[at] = c[k]
            return first, second, third
        return three
    return typing


@compiled(grids.meshgrid_others)
def _meshgrid_others(types):
    """meshgrid_others: the axes a grid does not vary along, known when compiling from the position (a
    literal), which arrays are given (None or not) and the indexing."""
    def typing(position, arrays, indexing):
        at = position.literal_value if isinstance(position, types.IntegerLiteral) else None
        order = _indexing(types, indexing)
        if at is None or order is None or not isinstance(arrays, types.BaseTuple):
            return None
        others = grids.meshgrid_others(at, tuple(None if is_none(types, x) else 0 for x in arrays), order)
        return lambda position, arrays, indexing: others
    return typing
