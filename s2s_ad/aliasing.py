"""Which names may share memory with an array the function writes into.

Used by ``lower.py``: NumPy shows a later write through a view (a slice, a
row, ``.T``, a reshape, a list holding the array); SSA form does not.  So a
read of such a name after a write into its array is refused rather than
computed differently from the user's function.
"""
from __future__ import annotations

import operator
from collections import Counter
from typing import Any, Optional

import numpy as np

from . import ir, runtime

# Calls whose result may share memory with an argument (a view, or a list holding it).
VIEWING = {operator.getitem, np.reshape, np.transpose, np.ravel, np.squeeze, np.expand_dims, np.broadcast_to,
            runtime.list_append}


class Views:
    """Names that may share memory with an array the function writes into.

    NumPy shows a later write through a view (``v = out[0:2]``, ``out.T``, a
    row ``out[i]``, a list holding ``out``); SSA form treats ``v`` as the
    value it had.  Rather than compute something else than the user's
    function, a read of such a name after a write into its array is refused.
    """

    def __init__(self, buffers: set[str], enabled: bool = True) -> None:
        self.enabled = enabled
        self.buffers = buffers  # the arrays the function made (shared with Lowering)
        self.root: dict[str, str] = {}  # SSA name -> the array it may view
        self.seen: dict[str, int] = {}  # SSA name -> writes into its array when it was bound
        self.writes: Counter = Counter()
        self.stale: set[str] = set()  # views bound before a loop that writes into their array

    def root_of(self, expr: Any) -> Optional[str]:
        if isinstance(expr, ir.Var):
            return expr.name if expr.name in self.buffers else self.root.get(expr.name)
        if isinstance(expr, ir.Display) or (isinstance(expr, ir.Call) and expr.fn in VIEWING):
            roots = [self.root_of(e) for e in ir.children(expr)]
            return next((r for r in roots if r is not None), None)
        return None

    def bound(self, name: str, value: Any) -> None:
        root = self.root_of(value) if not isinstance(value, ir.Var) else None
        if root is not None:
            self.root[name], self.seen[name] = root, self.writes[root]

    def wrote(self, array: str) -> None:
        self.writes[array] += 1

    def outdated(self, name: str) -> Optional[str]:
        """The array ``name`` views, if it has been written since ``name`` was bound."""
        root = self.root.get(name)
        if self.enabled and root is not None and (name in self.stale or self.writes[root] > self.seen[name]):
            return root
        return None
