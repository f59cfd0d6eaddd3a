"""The memory model's record of a function's views while lowering (stage 2): every view knows its base.

One ``Views`` per function lowered, filled as lowering binds each SSA name and consulted by it before
every read and write (``lowering/lower_writes``, ``lower_views``, ``lower_updates``, ``lower_joins``).
NumPy's rules for which calls give views are ``aliasing``'s (``viewing_call``, ``retake_kind``,
``new_object``); this module applies them to the names of one function:

* ``root``/``others``: the arrays (storages) each name may view, and ``seen``/``writes``: how many
  writes each storage had when the view was bound and since, so a read of a view after a write
  (``outdated``) is taken again from the storage's current version or refused;
* ``made``/``chain``: how each view was taken from its base, step by step (a slice, an item of a
  split, a reshape, an item of a tuple, dict, record or helper's result carrying it), so the same
  steps made again show what NumPy's view shows, and their inverses carry a write through the view
  back into its base;
* the facts the writes need: the index of a view of an array the function owns (``view_index``,
  ``element_index``), the names that hold an array (``holders``, ``merged_from``), joins that own
  theirs (``joins_owned``), views already taken again (``retaken``).

Input: the IR each name was bound to (``ir.py``), the set of arrays the function made (shared with
lowering) and which helpers may return their arguments.  Output: answers only; it makes no
statement.  Where a fact cannot be decided the answers say "may view" (taken again where the code
runs, or refused), never "does not".
"""
from __future__ import annotations

import operator
from collections import Counter
from typing import Any, Callable, Optional, Sequence

from ..core import ir, runtime
from ..core.identity import Identity
from .aliasing import (basic_part, item_of_display, listed_view, may_view, passed_on, retake_kind,
                       shared_operands, viewing_call)


class Views:
    """Names that may share memory with an array the function writes into.

    NumPy shows a later write through a view (``v = out[0:2]``, ``out.T``, a
    row ``out[i]``, a list holding ``out``); SSA form treats ``v`` as the
    value it had.  Rather than compute something else than the user's
    function, a read of such a name after a write into its array is refused.
    """

    def __init__(self, buffers: set[str], enabled: bool = True,
                 helper_shares: Callable[[Any], bool] = lambda fn: True, integers: Optional[set[str]] = None) -> None:
        self.enabled = enabled
        # names that hold an integer wherever they are read (a loop's index over a range): B[i] by one is a
        # row (or one number) whose geometry i fixes for as long as i is that index
        self.integers: set[str] = integers if integers is not None else set()
        self.helper_shares = helper_shares  # whether a user's function may return (a view of) an argument
        self.buffers = buffers  # the arrays the function made (shared with Lowering)
        self.root: dict[str, str] = {}  # SSA name -> the array it may view
        self.seen: dict[str, int] = {}  # SSA name -> writes into its array when it was bound
        self.writes: Counter = Counter()
        self.stale: set[str] = set()  # views bound before a loop that writes into their array
        self.others: dict[str, list[tuple[str, int]]] = {}  # a joined name's further arrays, as seen
        self.made: dict[str, Any] = {}  # SSA name -> the call (atoms for arguments) or display that made it
        self.made_in: dict[str, Optional[Identity]] = {}  # SSA name -> the nested block it was made in
        # names that may hold a view taken again by its positions (runtime.retaken_view: a copy with the
        # view's values), itself or through a container, a join or a call: no view where the code runs, so
        # never the value whose positions view_positions looks for (lower_views.ViewRetaking.by_positions)
        self.positioned: set[str] = set()
        # What is known of each SSA name's views, for the writes lowering makes through them
        # (lower_writes, lower_views, lower_updates, lower_joins read and add to these):
        # values that may be views of another array (x[1:], x.T): the array, integer index parts, a slice or not
        self.view_values: dict[str, tuple[str, int, bool]] = {}
        # views by a basic index (numbers, slices) of an array the function made: the array and the
        # index, so that ``row *= 3`` can be written into the array (``UpdateLowering.update_through_view``)
        self.view_index: dict[str, tuple[str, ir.Expr, bool]] = {}
        self.carried_views: set[str] = set()  # loop merge variables taken to be a view of view_index's
        self.merged_from: dict[str, str] = {}  # merge variables that may be an array another name holds
        self.holders: dict[str, str] = {}  # SSA name -> a user's name that may view or hold its array
        self.element_index: dict[str, tuple] = {}  # a[i, j] by atoms only: the index's parts
        self.joined_elements: set[str] = set()  # merge variables that may be such an a[i, j] (never retaken)
        # items of a value unpacked by position (u, w = pair(x)): a tuple's items, or an array's rows;
        # each with the name of the value unpacked, which it may share memory with
        self.unpacked_items: dict[str, str] = {}
        self.joins_owned: dict[str, bool] = {}  # merge variable -> every value joined so far is owned
        # merge variable -> every value joined so far is an array the function made (a view of none), held
        # by other names or not: an update of it is NumPy's store once the kinds prove an array (InPlace.owned)
        self.joins_made: dict[str, bool] = {}
        self.merge_sources: dict[str, set[str]] = {}  # merge variable -> the SSA names joined into it
        # array -> a merge variable that may be it (and other arrays on other paths), written into in place:
        # a view of the array then shows the write on some paths only (a branch or loop that also binds the
        # name to another array), which no view taken again from the array follows (lower_views refuses it)
        self.written_through: dict[str, str] = {}
        # the reverse: merge variable -> an array joined into it and written since the join (through a view,
        # by index or by an update): a read of the merge variable shows the write on the paths where it is
        # that array only, which SSA's copy does not follow (lower_views refuses the read)
        self.aliases_written: dict[str, str] = {}
        self.joined_to: dict[str, set[str]] = {}  # an SSA name -> the merge variables it was joined into
        # (a view's name, the writes into its array then, the block) -> the view taken again after them there
        self.retaken: dict[tuple[str, int, Identity], ir.Expr] = {}

    def root_of(self, expr: Any) -> Optional[str]:
        """The first of ``roots_of(expr)``, or None."""
        return next(iter(self.roots_of(expr)), None)

    def roots_of(self, expr: Any) -> list[str]:
        """Every array the value of ``expr`` may view or hold, in the order of its operands: a list grown
        or written into (``list_append``, ``list_with``) or a helper's result may hold several."""
        if isinstance(expr, ir.Var):
            if expr.name in self.buffers:
                return [expr.name]
            return [root for root, _ in self.views_of(expr.name)] if expr.name in self.root else []
        if isinstance(expr, ir.Display) or (isinstance(expr, ir.Call) and may_view(expr.fn, expr) and (
                listed_view(expr.fn, expr) or self.helper_shares(expr.fn))):
            # (a view's index or shape shares nothing: v[v > 0.0] may view v, never the mask)
            roots: list[str] = []
            for e in (expr.items if isinstance(expr, ir.Display) else passed_on(expr)):
                roots.extend(r for r in self.roots_of(e) if r not in roots)
            return roots
        return []

    def bound(self, name: str, value: Any) -> None:
        """``name = value`` (a call of atoms, a display): the arrays ``name`` may view, as they are now (every
        one: a write into any of them is seen through ``name``)."""
        if self._holds_positioned(value):
            self.positioned.add(name)
        if isinstance(value, ir.Display):  # t = (b[:2], b[2:]): every item's array, each as its item saw it
            self.joined(name, value)
            return
        roots = self.roots_of(value) if not isinstance(value, ir.Var) else []
        if roots:
            self.root[name], self.seen[name] = roots[0], self.writes[roots[0]]
            if len(roots) > 1:  # (a binding made again, as a loop's body is lowered again, replaces them)
                self.others[name] = [(root, self.writes[root]) for root in roots[1:]]

    def joined(self, name: str, value: Any) -> None:
        """``name = value`` joins control flow (a branch's value, a loop's carried one): ``name`` may
        view whatever ``value`` views, as it was when ``value`` was bound (the earliest of the joins)."""
        if isinstance(value, ir.Display):  # (b[:2], b[2:]) on one path: each item's array, as it was seen
            for item in value.items:
                self.joined(name, item)
            return
        if self._holds_positioned(value):
            self.positioned.add(name)
        if not (isinstance(value, ir.Var) and value.name in self.root):
            return
        for root, seen in self.views_of(value.name):
            if name not in self.root:
                self.root[name], self.seen[name] = root, seen
            elif (root, seen) not in self.others.get(name, ()):  # (joined again, a loop lowered again: once)
                self.others.setdefault(name, []).append((root, seen))
        if value.name in self.stale:
            self.stale.add(name)

    def _holds_positioned(self, expr: Any) -> bool:
        """``expr`` may hold a value in ``positioned`` (followed as ``root_of`` follows views)."""
        if isinstance(expr, ir.Var):
            return expr.name in self.positioned
        if isinstance(expr, ir.Display):
            return any(self._holds_positioned(e) for e in expr.items)
        if isinstance(expr, ir.Call):
            return expr.fn is runtime.retaken_view or (may_view(expr.fn, expr) and any(
                self._holds_positioned(e) for e in passed_on(expr)))
        return False

    def views_of(self, name: str) -> list[tuple[str, int]]:
        """Each array ``name`` may view, with the number of writes into it when it was bound."""
        return [(self.root[name], self.seen[name])] + self.others.get(name, [])

    def wrote(self, array: str) -> None:
        self.writes[array] += 1
        self.writing_through(array)
        todo, seen = [array], {array}
        while todo:  # every merge variable (of a merge variable...) this array was joined into, since the join
            for merged in self.joined_to.get(todo.pop(), ()):
                if merged not in seen:
                    seen.add(merged)
                    self.aliases_written.setdefault(merged, array)
                    todo.append(merged)

    def join(self, merged: str, source: str) -> None:
        """``source`` joined into the merge variable ``merged`` (one path's value)."""
        self.merge_sources.setdefault(merged, set()).add(source)
        self.joined_to.setdefault(source, set()).add(merged)
        if source in self.aliases_written:  # (a value already shown stale, joined on: stale in its turn)
            self.aliases_written.setdefault(merged, self.aliases_written[source])

    def writing_through(self, merged: str) -> None:
        """A write into ``merged`` (about to happen, or made) is one into each array joined into it, on
        some paths: remembered in ``written_through``."""
        for source in self.joined_into(merged):
            self.written_through.setdefault(source, merged)

    def joined_into(self, merged: str) -> set[str]:
        """The names joined into the merge variable ``merged``, and those joined into them, but itself."""
        found: set[str] = set()
        todo = [merged]
        while todo:
            for source in self.merge_sources.get(todo.pop(), ()):
                if source not in found and source != merged:
                    found.add(source)
                    todo.append(source)
        return found

    def written_through_merge(self, name: str) -> Optional[tuple[str, str]]:
        """``(array, merged)`` where ``name`` may view ``array``, which was written into as the merge
        variable ``merged`` (``written_through``); else None."""
        if not self.enabled or name not in self.root:
            return None
        for root, _ in self.views_of(name):
            if root in self.written_through:
                return root, self.written_through[root]
        return None

    def outdated(self, name: str) -> Optional[str]:
        """The array ``name`` views, if it has been written since ``name`` was bound."""
        if not self.enabled or name not in self.root:
            return None
        for root, seen in self.views_of(name):
            if name in self.stale or self.writes[root] > seen or root in self.written_through:
                return root
        return None

    def chain(self, name: str, root: str) -> Optional[list[tuple[str, ir.Call, str]]]:
        """How ``name`` was taken from ``root``: each step's name and call, first to last, where every step
        is a view whose geometry its arguments fix (``retake_kind``), so the same calls made again now
        show what NumPy's view shows after a write into ``root``.  An item of a tuple, list or split is
        followed to the item.  Each step comes with its ``retake_kind``.  None where a step is anything
        else (a helper's result, a join, np.flip)."""
        steps: list[tuple[str, ir.Call, str]] = []
        visited: set[str] = set()
        while name != root:
            made = self.made.get(name)
            if name in visited or not (isinstance(made, ir.Call) and made.args and isinstance(made.args[0], ir.Var)):
                return None
            visited.add(name)
            held = self.made.get(made.args[0].name)
            item = item_of_display(made, held)
            if item is not None:  # (b[:2], b[2:])[0] is b[:2]
                name = item
                continue
            kind = retake_kind(made, held, self.integers)
            if kind is None:
                return None
            steps.append((name, made, kind))
            name = made.args[0].name
        return steps[::-1]

    def bound_item(self, name: str, value: Any) -> None:
        """``name = value`` where ``value`` is what it was computed from: the array it may view, and how."""
        self.bound(name, value)
        self.note_view(name, value)

    def unpacked(self, name: str, whole: str) -> None:
        """``name`` is an item of ``whole``, a value unpacked by position (``u, w = pair(x)``): an item of a
        tuple, or a row of an array, never an index's view (its facts are forgotten); it may share memory
        with what ``whole`` holds or views (a row of an argument, a piece of ``np.split``'s)."""
        for facts in (self.view_values, self.view_index, self.element_index):
            facts.pop(name, None)
        self.unpacked_items[name] = whole

    def visible(self, expr: Any, open_blocks: Sequence[Identity]) -> bool:
        """Every name ``expr`` reads was made in one of ``open_blocks`` (those enclosing the statement
        being lowered) or at the top: a name made inside a branch or loop body that has ended is that
        block's alone."""
        return all(self.made_in.get(n) in open_blocks or self.made_in.get(n) is None for n in ir.names_read(expr))

    def retakes(self, view: str, array: str) -> bool:
        """Whether ``view``, read after ``array`` was written, can be taken again: it is ``array`` by
        a basic index with a slice (certainly a view: ``array[index]`` now is what it shows), not by
        numbers only (one number of a 1-d array is a copy, which keeps the old value)."""
        found = self.view_index.get(view)
        return found is not None and found[0] == array and found[2]

    def note_view(self, name: str, value: Any) -> None:
        """Remember that ``name`` may view another array, and by which index."""
        if not (isinstance(value, ir.Call) and viewing_call(value)
                and value.args and isinstance(value.args[0], ir.Var)):
            return
        base = value.args[0].name
        if value.fn is not operator.getitem:
            self.view_values[name] = (base, 0, True)
            return
        parts = ir.index_parts(value.args[1])
        self.view_values[name] = (base, len(parts), _keeps_axis(parts))
        if base in self.buffers and base not in self.root and all(
                basic_part(p) or (isinstance(p, ir.Var) and p.name in self.integers) for p in parts):
            self.view_index[name] = (base, value.args[1], _keeps_axis(parts))
        self.note_element(name, value)

    def note_element(self, name: str, value: Any) -> None:
        """Remember ``name = a[i, j]`` by numbers or names only (no slice): maybe one element (a copy),
        maybe a row (a view), maybe an integer-array or mask index (a copy); lower_views decides."""
        if not (isinstance(value, ir.Call) and value.fn is operator.getitem and name in self.view_values):
            return
        parts = ir.index_parts(value.args[1])
        if not _keeps_axis(parts) and all(isinstance(p, (ir.Var, ir.Const)) for p in parts):
            self.element_index[name] = tuple(parts)

    def note_holders(self, name: str, value: Any) -> None:
        """Remember the arrays ``name`` may view or hold (a slice, a reshape, a list of them, what a
        helper returns): an in-place update of one of them changes what ``name`` shows."""
        for operand in shared_operands(value):
            self.holders.setdefault(operand, name)


def _keeps_axis(parts: Sequence[Any]) -> bool:
    """An index with a slice, ``None`` or ``...``: its result keeps (or adds) an axis, a view for certain."""
    return any(isinstance(p, ir.Slice) or (isinstance(p, ir.Const) and (p.value is None or p.value is Ellipsis))
               for p in parts)
