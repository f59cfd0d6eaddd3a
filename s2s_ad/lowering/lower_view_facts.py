"""What lowering knows of the views of the arrays a function writes into (stage 2, lower).

A part of ``lower_writes.WriteLowering``, which is these facts with the writes made on them; its
other parts (``lower_views``, ``lower_updates``) and ``lower_joins`` read and add to them.  Input:
each value bound while lowering (what it was computed from) and the facts of ``aliasing.Views``.
Output: the facts kept per SSA name: which array a value may view, by which index (a basic index of
an array the function made: ``view_index``; numbers or names only, maybe one element:
``element_index``), which names may hold or view an array (``holders``), which merge variables may
be another name's array or own theirs, and the views already taken again after a write
(``retaken``); whether a view read after a write can be taken again (``retakes``) from names still
in scope (``visible``).
"""
from __future__ import annotations

import operator
from typing import Any

import gast
from ..core import ir, language
from ..core.identity import Identity
from ..memory.aliasing import Views, shared_operands, viewing_call
from .lower_scan import updated_in_place
from .lower_state import LoweringState, Part
from ..core.nodes import all_nodes


def _basic(part: Any) -> bool:
    """An index part that NumPy reads as basic indexing (a view): a constant integer, None, ``...``
    or a slice (its bounds atoms)."""
    if isinstance(part, ir.Slice):
        return all(p is None or isinstance(p, (ir.Const, ir.Var)) for p in (part.lower, part.upper, part.step))
    return isinstance(part, ir.Const) and (part.value is None or part.value is Ellipsis or (
        language.is_integer_value(part.value) and not isinstance(part.value, bool)))


def _writes_arrays(node: Any) -> bool:
    """Whether the function ``node`` writes into an array anywhere: a store (``v[i] = y``), an update
    (``v += y``, which may be an array's) or a scatter (``np.add.at``)."""
    return bool(updated_in_place([node])) or any(
        isinstance(n, gast.Call) and isinstance(n.func, gast.Attribute) and n.func.attr == "at" for n in all_nodes(node))


class ViewFacts(Part):
    """The views, holders and owners of the arrays a function writes into, by SSA name."""

    def __init__(self, state: LoweringState) -> None:
        super().__init__(state)
        self.range_indices: set[str] = set()  # the indices of loops over range: integers, never arrays
        self.views = Views(state.buffers, enabled=not state.generated, helper_shares=state.helper_shares,
                           integers=self.range_indices)
        # values that may be views of another array (x[1:], x.T): the array, integer index parts, a slice or not
        self.view_values: dict[str, tuple[str, int, bool]] = {}
        # views by a basic index (numbers, slices) of an array the function made: the array and the
        # index, so that ``row *= 3`` can be written into the array (see ``UpdateLowering.update_through_view``)
        self.view_index: dict[str, tuple[str, ir.Expr, bool]] = {}
        self.carried_views: set[str] = set()  # loop merge variables taken to be a view of view_index's
        self.merged_from: dict[str, str] = {}  # merge variables that may be an array another name holds
        self.holders: dict[str, str] = {}  # SSA name -> a user's name that may view or hold its array
        self.element_index: dict[str, tuple] = {}  # a[i, j] by atoms only: the index's parts
        self.joined_elements: set[str] = set()  # merge variables that may be such an a[i, j] (never retaken)
        # items of a value unpacked by position (u, w = pair(x)): a tuple's items, or an array's rows
        self.unpacked_items: set[str] = set()
        self.joins_owned: dict[str, bool] = {}  # merge variable -> every value joined so far is owned
        self.merge_sources: dict[str, set[str]] = {}  # merge variable -> the SSA names joined into it
        # (a view's name, the writes into its array then, the block) -> the view taken again after them there
        self.retaken: dict[tuple[str, int, Identity], ir.Expr] = {}
        # the function writes into an array somewhere (a store, an update, np.add.at): views matter
        self.writes_arrays = _writes_arrays(state.parsed.node)

    def bound_item(self, name: str, value: Any) -> None:
        """Remember the array ``name`` may view, where ``value`` (what it was computed from) views one."""
        self.views.bound(name, value)
        self.note_view(name, value)

    def unpacked(self, name: str) -> None:
        """``name`` is an item of a value unpacked by position (``u, w = pair(x)``): an item of a tuple,
        or a row of an array, never an index's view (its facts are forgotten)."""
        for facts in (self.view_values, self.view_index, self.element_index):
            facts.pop(name, None)
        self.unpacked_items.add(name)

    def passes_written(self, call: ir.Call) -> bool:
        """Whether ``call`` is given an array this function writes into somewhere, or a view of one."""
        return self.writes_arrays and any(
            isinstance(a, ir.Var) and (a.name in self.state.buffers or a.name in self.views.root) for a in call.args)

    def visible(self, expr: Any) -> bool:
        """Every name ``expr`` reads was made in a block enclosing the one being lowered (or at the top):
        a name made inside a branch or loop body that has ended is that block's alone."""
        open_blocks = set(self.state.open_blocks)
        return all(self.views.made_in.get(n) in open_blocks or self.views.made_in.get(n) is None
                   for n in ir.names_read(expr))

    def retakes(self, view: str, array: str) -> bool:
        """Whether ``view``, read after ``array`` was written, can be taken again: it is ``array`` by
        a basic index with a slice (certainly a view: ``array[index]`` now is what it shows), not by
        numbers only (one number of a 1-d array is a copy, which keeps the old value)."""
        found = self.view_index.get(view)
        return found is not None and found[0] == array and found[2]

    def note_view(self, name: str, value: Any) -> None:
        """Remember that ``name`` may view another array (for ``shared``)."""
        if not (isinstance(value, ir.Call) and viewing_call(value)
                and value.args and isinstance(value.args[0], ir.Var)):
            return
        base = value.args[0].name
        if value.fn is not operator.getitem:
            self.view_values[name] = (base, 0, True)
            return
        parts = value.args[1].items if isinstance(value.args[1], ir.Display) else (value.args[1],)
        keeps = any(isinstance(p, ir.Slice) or (isinstance(p, ir.Const) and (p.value is None or p.value is Ellipsis))
                    for p in parts)
        self.view_values[name] = (base, len(parts), keeps)
        if base in self.state.buffers and base not in self.views.root and all(
                _basic(p) or (isinstance(p, ir.Var) and p.name in self.range_indices) for p in parts):
            self.view_index[name] = (base, value.args[1], keeps)
        self.note_element(name, value)

    def note_element(self, name: str, value: Any) -> None:
        """Remember ``name = a[i, j]`` by numbers or names only (no slice): maybe one element (a copy),
        maybe a row (a view), maybe an integer-array or mask index (a copy); see ``view_now``."""
        if not (isinstance(value, ir.Call) and value.fn is operator.getitem and name in self.view_values):
            return
        parts = ir.index_parts(value.args[1])
        keeps = any(isinstance(p, ir.Slice) or (isinstance(p, ir.Const) and (p.value is None or p.value is Ellipsis))
                    for p in parts)
        if not keeps and all(isinstance(p, (ir.Var, ir.Const)) for p in parts):
            self.element_index[name] = tuple(parts)  # maybe one element: see read

    def note_holders(self, name: str, value: Any) -> None:
        """Remember the arrays ``name`` may view or hold (a slice, a reshape, a list of them, what a
        helper returns): an in-place update of one of them changes what ``name`` shows."""
        for operand in shared_operands(value):
            self.holders.setdefault(operand, name)
