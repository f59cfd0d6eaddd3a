"""Writes and views while lowering (stage 2, lower): stores, in-place updates, and the views
they show through.

NumPy changes an array in place (``a[i] = v``, ``a += v``, ``np.add.at``) and
shows the change through every view of it (``row = a[1]``, ``a.T``, a list
holding ``a``); SSA form has no such sharing.  Input: the user's writes and
reads of names, with the facts of ``aliasing.Views`` (which SSA names may view
which array, and how often it has been written since).  Output: statements
in ``LoweringState.block`` that compute what NumPy would:

* a write is an ``ir.Store`` into an array the function made
  (``LoweringState.buffers``) and not a view of one; anything else (an
  argument, a view) is refused, naming the copy that makes it allowed;
* ``row *= 3`` through a basic-index view of such an array is a store into
  the array and the view taken again; a read of a view after a write into its
  array takes it again (a slice), checks at run time that it is one number
  (``ir.ElementRead``), or is refused;
* ``x += v`` where ``x`` may be an object other names see is a new binding,
  recorded as an ``ir.InPlace`` with a run-time check that it is a number;
* the user's ``np.add.at(b, index, v)`` is ``b[...] = added_at(b, index, v)``.

It also keeps whether a merge variable is an array the function owns
(``join_ownership``, called by the joins).
"""
from __future__ import annotations

import ast
import dataclasses
import operator
from typing import Any, Optional

import gast
from ..core import ir, language, runtime
from ..rules import registry as rules
from ..memory.aliasing import Chosen, Views, retake_kind, shared_operands, viewing_call
from .expressions import BINARY_OPERATORS
from .lower_ssa import SSABuilder
from .lower_scan import updated_in_place
from .lower_state import LoweringState, Part
from .naming import describe
from ..core.nodes import all_nodes


def _operator_sign(fn: Any) -> str:
    """How Python writes the binary operator ``fn`` (its declared ``syntax``): ``"+"`` for ``operator.add``,
    and ``"+"`` for anything that declares none."""
    syntax = rules.fact(fn, "syntax")
    if not (isinstance(syntax, type) and issubclass(syntax, ast.operator)):
        return "+"
    return ast.unparse(ast.BinOp(ast.Name("a"), syntax(), ast.Name("b"))).split()[1]


def _basic(part: Any) -> bool:
    """An index part that NumPy reads as basic indexing (a view): a constant integer, None, ``...``
    or a slice (its bounds atoms)."""
    if isinstance(part, ir.Slice):
        return all(p is None or isinstance(p, (ir.Const, ir.Var)) for p in (part.lower, part.upper, part.step))
    return isinstance(part, ir.Const) and (part.value is None or part.value is Ellipsis or (
        language.is_integer_value(part.value) and not isinstance(part.value, bool)))


def _item(value: Any, index: int, made: dict[str, Any]) -> Any:
    """Item ``index`` of a display, or of a name bound to one (None where it is neither)."""
    if isinstance(value, ir.Var) and isinstance(made.get(value.name), ir.Display):
        value = made[value.name]
    if isinstance(value, ir.Display) and -len(value.items) <= index < len(value.items):
        return value.items[index]
    return None


def _writes_arrays(node: Any) -> bool:
    """Whether the function ``node`` writes into an array anywhere: a store (``v[i] = y``), an update
    (``v += y``, which may be an array's) or a scatter (``np.add.at``)."""
    return bool(updated_in_place([node])) or any(
        isinstance(n, gast.Call) and isinstance(n.func, gast.Attribute) and n.func.attr == "at" for n in all_nodes(node))


def _writes_back(call: ir.Call) -> bool:
    """A view step a write goes back through: an index (a store there), or a rule declaring how
    (``write_back``: a reshape of the whole, or a transpose without axes)."""
    if call.fn is operator.getitem:
        return True
    how = rules.fact(call.fn, "write_back")
    return how == "reshape" or (how == "transpose" and len(call.args) == 1 and not call.kwargs)


def _is_add_at(fn: Any) -> bool:
    """``fn`` is ``np.add.at`` (a bound method: a new object at each attribute read)."""
    return language.is_scatter_add(fn)


class WriteLowering(Part):
    """Stores, in-place updates, and the views of the arrays they change."""

    def __init__(self, state: LoweringState, ssa: SSABuilder) -> None:
        super().__init__(state)
        self.ssa = ssa
        self.range_indices: set[str] = set()  # the indices of loops over range: integers, never arrays
        self.views = Views(state.buffers, enabled=not state.generated, helper_shares=state.helper_shares,
                           integers=self.range_indices)
        # values that may be views of another array (x[1:], x.T): the array, integer index parts, a slice or not
        self.view_values: dict[str, tuple[str, int, bool]] = {}
        # views by a basic index (numbers, slices) of an array the function made: the array and the
        # index, so that ``row *= 3`` can be written into the array (see ``update_through_view``)
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
        self.retaken: dict[tuple[str, int, int], ir.Expr] = {}
        # the function writes into an array somewhere (a store, an update, np.add.at): views matter
        self.writes_arrays = _writes_arrays(state.parsed.node)

    def bound(self, user_name: str, name: str, value: Any) -> None:
        """Remember what the SSA name ``name``, just bound to the user's ``user_name`` from ``value``,
        may view or hold (``value`` as the converter made it; the statement just emitted, if it
        assigned ``name``, as it became)."""
        self.bound_item(name, value)
        emitted = self.state.block[-1] if self.state.block else None
        if name not in self.element_index and isinstance(emitted, ir.Assign) and emitted.target == name:
            self.note_element(name, emitted.value)  # b[v > 0.0]: the kinds decide on the name it became
        self.note_holders(user_name, value)

    def bound_item(self, name: str, value: Any) -> None:
        """Remember the array ``name`` may view, where ``value`` (what it was computed from) views one."""
        self.views.bound(name, value)
        self.note_view(name, value)

    def emitted(self, name: str, value: Any) -> None:
        """``name = value`` was just emitted (a call of atoms, a tuple or list display, the merge of a
        conditional expression, ``aliasing.Chosen``): whatever ``name`` may view (a slice of a view, an
        item of a helper's result or of a split) is known wherever the value goes next (a tuple, a dict,
        a record, an unpacking), not only where a user's name is bound to it."""
        if self.state.generated:
            return
        self.views.made[name] = value
        self.views.made_in[name] = self.state.open_blocks[-1] if self.state.open_blocks else None
        if isinstance(value, Chosen):
            for path in value.values:
                self.views.joined(name, path)
        elif isinstance(value, ir.Display):
            self.views.bound(name, value)
        elif not self.owns_view_of_temporary(name, value):
            self.bound_item(name, value)

    def passes_written(self, call: ir.Call) -> bool:
        """Whether ``call`` is given an array this function writes into somewhere, or a view of one."""
        return self.writes_arrays and any(
            isinstance(a, ir.Var) and (a.name in self.state.buffers or a.name in self.views.root) for a in call.args)

    def owns_view_of_temporary(self, name: str, call: ir.Call) -> bool:
        """``B = np.zeros(4).reshape(2, 2)``, ``M = np.outer(x, x).T``: a reshape or transpose of an array
        made in the same expression, which no other name can reach, is the function's own array (views
        or copies, the same to every reader): a buffer it may write into."""
        base = call.args[0] if call.args else None
        if not (call.fn is not operator.getitem and retake_kind(call) is not None and isinstance(base, ir.Var)
                and base.name in self.state.buffers and base.name not in self.state.user_names
                and base.name not in self.state.params and base.name not in self.views.root):
            return False
        for key in [k for k, v in self.state.computed.items() if v == base]:
            del self.state.computed[key]  # (no later read in this statement may reuse the array B views)
        self.state.buffers.add(name)
        if base.name in self.state.maybe_numbers:
            self.state.maybe_numbers.add(name)
        return True

    def current(self, value: ir.Var) -> ir.Expr:
        """``value`` read now, wherever it is read from (a user's name, an item of a tuple, a dict, a
        record): a view of an array written since it was bound is taken again, or refused."""
        if self.state.generated or self.views.outdated(value.name) is None:
            return value
        return self.view_now(value, value.name, user=False)

    def unpacked(self, name: str) -> None:
        """``name`` is an item of a value unpacked by position (``u, w = pair(x)``): an item of a tuple,
        or a row of an array, never an index's view (its facts are forgotten)."""
        for facts in (self.view_values, self.view_index, self.element_index):
            facts.pop(name, None)
        self.unpacked_items.add(name)

    def read(self, name: str) -> Optional[ir.Expr]:
        """What the user's local ``name`` holds now (``None`` if it is not a local)."""
        value = self.scope.env.get(name)
        if isinstance(value, ir.Var):
            return self.view_now(value, name)
        return value

    def view_now(self, value: ir.Var, name: str, user: bool = True) -> ir.Expr:
        """``value``, read now under the name ``name``: where it may view an array written since it was
        bound, what NumPy's view shows now (taken again), a deferred check that it is one number (a
        copy), or a refusal.  ``user``: ``name`` is the user's local (retaken under it)."""
        array = self.views.outdated(value.name)
        if array is not None and self.retakes(value.name, array):
            # a slice of an array this function made (row = m[1:3, :]) shows the array as it is
            # now, as NumPy's view would: take it again here, under the same user's name
            base, index, _ = self.view_index[value.name]
            view = ir.Call(operator.getitem, (ir.Var(base), index))
            if not user:
                return self.ssa.flatten(view)
            self.state.host.bind(gast.Name(id=name, ctx=gast.Store(), annotation=None, type_comment=None), view)
            return self.scope.env[name]
        if array is not None:
            hint = (f"{name} may be a view of {array} (a slice, a row, .T, a reshape, a list holding it, or "
                    f"what a function returned for it), "
                    f"and NumPy would show the new values through it; copy it where you take it (.copy()), "
                    f"or use float(...) for one number")
            parts = self.element_index.get(value.name)
            if parts is None or self.view_values.get(value.name, (None,))[0] != array:
                steps = self.views.chain(value.name, array) if not self.views.others.get(value.name) else None
                if steps is not None:
                    return self.retake_chain(name, array, steps, user)
                chosen = self.chosen_again(value.name, name, user)
                if chosen is not None:
                    return chosen
                raise self.state.refusal(f"reading {name} after {array} was written", hint)
            if value.name in self.joined_elements or array not in self.state.buffers:
                # first = out[0]: one number if out is 1-d and 0 a number, which only the kinds tell
                self.state.element_reads.append(ir.ElementRead(array, name, parts, self.state.line, hint))
                return value
            # top = B[0]: a row of a 2-d B (a view: NumPy shows the write) or one number of a 1-d B, or
            # B[idx], B[mask] (copies): taken again here, and the kinds choose which (check_element_reads)
            index = ir.Display("tuple", parts) if len(parts) > 1 else parts[0]
            call = ir.Call(operator.getitem, (ir.Var(array), index))
            # named, so that no other read of a[i] in this statement reuses it: the kinds may choose the
            # value taken before instead (a copy), which is not what a new read of a[i] gives
            retaken = self.ssa.flatten(call, self.state.names.fresh(describe(call, self.state.user_names)))
            retake = self.state.block[-1]
            assert isinstance(retake, ir.Assign)  # (the named call just emitted)
            self.state.element_reads.append(ir.ElementRead(array, name, parts, self.state.line, hint,
                                                           retake=retake, kept=value.name))
            if user:
                self.scope.env[name] = retaken
            return retaken
        return value

    def visible(self, expr: Any) -> bool:
        """Every name ``expr`` reads was made in a block enclosing the one being lowered (or at the top):
        a name made inside a branch or loop body that has ended is that block's alone."""
        open_blocks = set(self.state.open_blocks)
        return all(self.views.made_in.get(n) in open_blocks or self.views.made_in.get(n) is None
                   for n in ir.names_read(expr))

    def retake_chain(self, name: str, array: str, steps: list[tuple[str, ir.Call, str]], user: bool) -> ir.Expr:
        """The view ``name`` taken again from ``array`` as it is now, by the calls that took it
        (``Views.chain``); a step that is a view only sometimes (``np.reshape`` of an array that is not
        contiguous, ``B[0]`` of a vector) is checked where the code runs to give a view, taken again
        (a write changes no array's layout: the step made again is a view exactly where it was one),
        else NumPy's copy keeps the old values, and the read is refused there.  Refused here where a
        step reads a name of a block that has ended (an index computed in a branch)."""
        for made, call, kind in steps:
            if not self.visible(ir.Call(call.fn, tuple(call.args[1:]), call.kwargs)):
                raise self.state.refusal(f"reading {name} after {array} was written", f"{name} was taken "
                                         f"from {array} with values of a branch or loop that has ended, where it "
                                         "cannot be taken again; copy it where you take it (.copy())")
        current: ir.Expr = ir.Var(array)
        for index, (made, call, kind) in enumerate(steps):
            last = user and index == len(steps) - 1
            key = (made, self.views.writes[array], id(self.state.block))  # (a retake in a branch is its own)
            if key in self.retaken and not last:  # r0, r1 = M after a write into b: M is taken again once
                current = self.retaken[key]
                continue
            again = ir.Call(call.fn, (current,) + tuple(call.args[1:]), call.kwargs)
            taken_from = current
            if last:
                self.state.host.bind(gast.Name(id=name, ctx=gast.Store(), annotation=None, type_comment=None), again)
                current = self.scope.env[name]
            else:
                current = self.ssa.flatten(again)
            if kind == "contiguous":
                self.check_view(current, taken_from, name)
            self.retaken[key] = current
        return current

    def chosen_again(self, view: str, name: str, user: bool) -> Optional[ir.Var]:
        """``lo`` of ``lo, hi = (b[:2], b[2:]) if c else (b[2:], b[:2])``, read after a write into ``b``:
        chosen again by the same test, each path's item read as it is now (taken again where it is a
        view of an array written since).  None where ``view`` is not such an item."""
        made = self.views.made.get(view)
        kept: ir.Expr  # what the view is where its path's item was not written: the item read as it was
        if isinstance(made, ir.Call) and made.fn is operator.getitem and isinstance(made.args[0], ir.Var) \
                and isinstance(made.args[1], ir.Const) and isinstance(made.args[1].value, int):
            chosen, items, kept = self.views.made.get(made.args[0].name), [], made
            if isinstance(chosen, Chosen):
                items = [_item(v, made.args[1].value, self.views.made) for v in chosen.values]
        elif isinstance(made, Chosen):
            chosen, items, kept = made, list(made.values), ir.Var(view)
        else:
            return None
        if not isinstance(chosen, Chosen) or not items or not all(isinstance(i, ir.Var) for i in items):
            return None
        merged = self.state.names.claim(name) if user else self.state.names.fresh(name)
        branches, nows = [], []
        for item in items:
            with self.state.new_block() as block:
                now = self.current(item)
                # (an item not written since is read through the value chosen, bound where both paths meet:
                # the item itself is a name of its own path only)
                block.append(ir.Assign(merged, self.as_it_was(kept) if now == item else now, self.state.line,
                                       merge=True))
                nows.append(now)  # (what the path's value may view, as seen now)
            branches.append(block)
        self.state.block.append(ir.If(chosen.test, branches[0], branches[1], self.state.line))
        self.views.made[merged] = Chosen(chosen.test, tuple(nows))
        for now in nows:
            self.views.joined(merged, now)
        if user:
            self.scope.env[name] = ir.Var(merged)
        return ir.Var(merged)

    def as_it_was(self, value: ir.Expr) -> ir.Expr:
        """``value`` (an atom, or a call of atoms) read as it was bound, not as a view taken again: on a
        path whose item no write reached (``chosen_again``)."""
        if ir.is_atom(value):
            return value
        name = self.state.names.fresh("item")
        self.state.block.append(ir.Assign(name, value, self.state.line))
        return ir.Var(name)

    def check_view(self, view: ir.Expr, base: ir.Expr, name: str) -> None:
        """Where the code runs, refuse if ``view``, taken from ``base`` by a step that makes a view only
        sometimes, is a copy (``runtime.check_view_kept``)."""
        self.state.block.append(ir.Effect(ir.Call(runtime.check_view_kept, (
            view, base, ir.Const(name), ir.Const(self.state.parsed.filename), ir.Const(self.state.line))),
            self.state.line))

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

    def shared(self, name: str, value: str, stmt: Any) -> Optional[ir.InPlace]:
        """An ``InPlace`` record if ``value`` (what ``name`` holds) may be an object other names see."""
        at = dict(line=stmt.lineno, column=stmt.col_offset + 1)
        if value in self.state.params:
            return ir.InPlace(value, name, f"the argument {self.state.params[value]}", **at)
        others = sorted(k for k, v in self.scope.env.items() if k != name and v == ir.Var(value))
        if others:
            return ir.InPlace(value, name, f"the same object as {others[0]}",
                              owned=value in self.state.buffers and value not in self.views.root, **at)
        owned = value in self.state.buffers and value not in self.views.root
        if value in self.merged_from:
            return ir.InPlace(value, name, f"the same object as {self.merged_from[value]} on some paths", owned=owned,
                              **at)
        if value in self.holders:
            return ir.InPlace(value, name, f"shared with {self.holders[value]} (a view of it, a list holding it, or "
                              f"what a function returned for it)", owned=owned, **at)
        other = self.other_reference(name, value)
        if other is not None:
            owned = value in self.state.buffers and value not in self.views.root
            return ir.InPlace(value, name, other, owned=owned, **at)
        if value in self.view_values:
            base, integers, keeps = self.view_values[value]
            return ir.InPlace(value, name, f"a view of {base}", base=base, integers=integers, keeps_dimension=keeps,
                              **at)
        return None

    def storages(self, value: str) -> set[str]:
        """The SSA names whose object ``value`` may be: itself, and what was joined into it (a loop's
        or a branch's merge variable is the object it was given on some path)."""
        found, todo = {value}, [value]
        while todo:
            for source in self.merge_sources.get(todo.pop(), ()):
                if source not in found:
                    found.add(source)
                    todo.append(source)
        return found

    def other_reference(self, name: str, value: str) -> Optional[str]:
        """How another live name may see the object ``value`` that the user's ``name`` holds: a container,
        record or object holding it (``d = {"a": b}``), or a view of it (``c = b[1:]``), bound before a
        loop or branch joined it into ``value`` too.  ``None`` where no other name can."""
        objects = self.storages(value)

        def holds(held: Any) -> bool:
            if isinstance(held, ir.Var):
                return held.name in objects or any(root in objects for root, _ in (
                    self.views.views_of(held.name) if held.name in self.views.root else ()))
            items = getattr(held, "items", None)
            return isinstance(items, (tuple, list)) and any(holds(i) for i in items)
        for other, held in self.scope.env.items():
            if other != name and holds(held):
                return f"shared with {other} (the same object, a view of it, or a container holding it)"
        return None

    def guarded(self, update: ir.InPlace) -> ir.InPlace:
        """``update`` with a run-time check, emitted here, that the value updated is a number:
        NumPy changes an array (a 0-d one too) in place, and the other names sharing it would see that."""
        guard = ir.Effect(ir.Call(runtime.check_number_update, (
            ir.Var(update.value), ir.Const(update.name), ir.Const(update.shared), ir.Const(self.state.parsed.filename),
            ir.Const(update.line))), self.state.line)
        self.state.block.append(guard)
        return dataclasses.replace(update, guard=guard)

    def update_through_view(self, stmt: gast.AugAssign, current: ir.Var, value: ir.Call) -> bool:
        """``row *= 3`` where ``row = M[1]`` (a basic index of an array the function made): NumPy changes
        ``M``, so this is ``M[1] = row * 3``, and ``row`` is ``M[1]`` again, a view taken after the
        write: later reads of both see the change.  False where ``row`` is not such a view."""
        found = self.view_index.get(current.name)
        if found is None:
            return False
        base, index, keeps = found
        if not keeps:  # M[1] is a row only if M has more dimensions than the index has parts
            parts = index.items if isinstance(index, ir.Display) else (index,)
            array = next((k for k, v in self.scope.env.items() if v == ir.Var(base)), base)
            hint = (f"{stmt.target.id} is one number of {array} (a copy), not a part of it (a view); write into "
                    f"{array} by index ({array}[...] {_operator_sign(value.fn)}= ...), or "
                    f"{stmt.target.id} = {stmt.target.id} {_operator_sign(value.fn)} ... (a new number)")
            guard = ir.Effect(ir.Call(runtime.check_view_update, (
                ir.Var(base), ir.Const(len(parts)), ir.Const(stmt.target.id), ir.Const(hint),
                ir.Const(self.state.parsed.filename), ir.Const(self.state.line))), self.state.line)
            self.state.block.append(guard)
        updated = self.ssa.flatten(value)  # row * 3, row read as it is now (taken again if it was stale)
        store = ir.Store(base, index, updated, self.state.line)
        self.state.block.append(store)
        self.state.computed.clear()
        self.views.wrote(base)
        self.state.host.bind(stmt.target, ir.Call(operator.getitem, (ir.Var(base), index)))
        if not keeps:  # m[0] may be one number (a copy: op= rebinds it, m unchanged): the kinds decide
            rebound = self.state.block[-1]
            assert isinstance(rebound, ir.Assign) and self.scope.env.get(stmt.target.id) == ir.Var(rebound.target)
            self.state.element_reads.append(ir.ElementRead(base, stmt.target.id, tuple(parts), self.state.line, hint,
                                                           view=True, guard=guard, retake=rebound, store=store,
                                                           number=updated))
        return True

    def store(self, target: gast.Subscript, value: ir.Expr) -> None:
        """``a[index] = value`` into an array: allowed into arrays the function made itself and not views."""
        array = self.scope.env.get(target.value.id)
        name = target.value.id
        if self.state.generated and isinstance(array, ir.Var):
            self.state.buffers.add(array.name)  # generated code writes only into adjoints it owns (reverse.py)
        elif isinstance(array, ir.Var) and array.name in self.views.root and self.store_through_view(array, target, value):
            return
        array = self.check_writable(name, array, f"an assignment into {name}[...]",
                                    "write into that array by index", "writing", target)
        index = self.ssa.flatten(self.state.converter.convert(target.slice))
        value = self.ssa.flatten(value)
        if isinstance(value, ir.Display):  # b[[1, 2]] = [x, y]: a store writes one value
            value = self.ssa.materialise(value, "items")
        self.state.block.append(ir.Store(array.name, index, value, self.state.line))
        self.state.computed.clear()
        self.views.wrote(array.name)

    def store_through_view(self, view: ir.Var, target: gast.Subscript, value: ir.Expr) -> bool:
        """``col[1:] = v`` where ``col = B[:, 0]``, ``T = B.T``, ``R = b.reshape(2, 2)`` views an array the
        function made: as NumPy, a write into that array.  The view is taken again from the array as it
        is now (``Views.chain``), a copy of it written, and each level written back into the one it was
        taken from by the inverse of its step (an index: a store there; ``write_back``: a reshape or a
        transpose of the whole), down to the array itself, which alone changes in place.  False where
        the view is not one to write through this way (a helper's result, a join, np.flip: refused)."""
        roots = self.views.views_of(view.name)
        root = roots[0][0]
        if len(roots) != 1 or root not in self.state.buffers:
            return False
        steps = self.views.chain(view.name, root)
        if steps is None or not all(_writes_back(call) and self.visible(ir.Call(call.fn, tuple(call.args[1:]),
                                                                                   call.kwargs)) for _, call, _ in steps):
            return False
        index = self.ssa.flatten(self.state.converter.convert(target.slice))
        value = self.ssa.flatten(value)
        if isinstance(value, ir.Display):  # b[[1, 2]] = [x, y]: a store writes one value
            value = self.ssa.materialise(value, "items")
        levels: list[ir.Expr] = [ir.Var(root)]
        for _, call, kind in steps:  # each level as it is now
            levels.append(self.ssa.flatten(ir.Call(call.fn, (levels[-1],) + tuple(call.args[1:]), call.kwargs)))
            if kind == "contiguous":  # (a reshape that copied would not write through)
                self.check_view(levels[-1], levels[-2], target.value.id)
        changed = self.owned_copy(levels[-1])
        self.state.block.append(ir.Store(changed.name, index, value, self.state.line))
        for depth in range(len(steps), 0, -1):
            call = steps[depth - 1][1]
            parent = ir.Var(root) if depth == 1 else self.owned_copy(levels[depth - 1])
            if call.fn is operator.getitem:
                self.state.block.append(ir.Store(parent.name, call.args[1], changed, self.state.line))
            else:
                whole = ir.Call(language.reshape, (changed, ir.Call(language.shape, (levels[depth - 1],)))) \
                    if rules.fact(call.fn, "write_back") == "reshape" else ir.Call(call.fn, (changed,))
                self.state.block.append(ir.Store(parent.name, ir.Const(Ellipsis), self.ssa.flatten(whole),
                                                 self.state.line))
            changed = parent
        self.state.computed.clear()
        self.views.wrote(root)
        return True

    def owned_copy(self, value: ir.Expr) -> ir.Var:
        """A copy of ``value`` the function owns and writes into (a level of a view written through)."""
        copied = self.ssa.flatten(ir.Call(language.copy, (value,)))
        assert isinstance(copied, ir.Var)
        self.state.buffers.add(copied.name)
        self.state.maybe_numbers.discard(copied.name)
        return copied

    def augmented(self, stmt: gast.AugAssign) -> None:
        """``target op= value``: into an array the function made, a store of the whole array (as NumPy
        changes it); through a view of one, a store into that array (``update_through_view``); where the
        value may be shared, a new binding with a run-time check that it is a number (``ir.InPlace``)."""
        op = BINARY_OPERATORS[type(stmt.op)]
        current = self.state.converter.convert(stmt.target)
        value = ir.Call(op, (current, self.state.converter.convert(stmt.value)))
        if isinstance(stmt.target, gast.Name) and isinstance(current, ir.Var):
            if current.name in self.state.buffers and current.name not in self.state.maybe_numbers:
                # out += x changes the array itself, as NumPy does
                whole = ir.Store(current.name, ir.Const(Ellipsis), self.ssa.flatten(value), self.state.line)
                self.state.block.append(whole)
                self.state.computed.clear()
                self.views.wrote(current.name)
                return
            if self.update_through_view(stmt, current, value):
                return
            if current.name in self.views.root and current.name not in self.unpacked_items:
                raise self.state.parsed.error(f"an in-place update of {stmt.target.id}", f"{stmt.target.id} may be "
                                              f"a view of {self.views.root[current.name]}; write into that array by "
                                              "index instead", stmt)
            update = self.shared(stmt.target.id, current.name, stmt)
            if update is None and current.name in self.views.root:  # u, w = pair(x); u += x
                update = ir.InPlace(current.name, stmt.target.id, f"an item of {self.views.root[current.name]} "
                                    f"(a row, where that is an array)", stmt.lineno, stmt.col_offset + 1)
            if update is not None:
                self.state.in_place.append(self.guarded(update))
        self.state.host.bind(stmt.target, value)

    def check_writable(self, name: str, array: Any, what: str, instead: str, verb: str, node: Any) -> ir.Var:
        """``array``, the value of ``name``, where it is an array this function made and not a view of one;
        a write into anything else is refused: NumPy would change the caller's data, or show the write
        through the view."""
        # (code s2s_ad generated writes only into adjoints it owns: reverse.py decided that)
        if isinstance(array, ir.Var) and array.name in self.views.root and not self.state.generated:
            raise self.state.parsed.error(what, f"{name} may be a view of {self.views.root[array.name]}; "
                                          f"{instead} instead", node)
        if not (isinstance(array, ir.Var) and array.name in self.state.buffers):
            raise self.state.parsed.error(
                what, f"{name} is not an array this function created (an argument, or a view of one), and {verb} "
                f"into it would change the caller's data; copy it first: {name} = {name}.copy()", node)
        return array

    def adds_at(self, call: gast.Call) -> bool:
        """``np.add.at(name, index, value)``: in code s2s_ad generated, a new value of ``name``
        (``runtime.added_at``), so forward mode over it sees an ordinary assignment."""
        return (len(call.args) == 3 and not call.keywords and isinstance(call.args[0], gast.Name)
                and _is_add_at(self.state.converter.resolve(call.func)))

    def add_at(self, call: gast.Call, stmt: Any) -> None:
        """The user's ``np.add.at(b, index, value)`` (a scatter-add, repeated positions summed): a
        write of the whole array, ``b[...] = added_at(b, index, value)``, allowed where ``b[i] = ...``
        is (an array this function made, not a view), so views and aliases see it as NumPy shows it."""
        if self.state.generated:  # an adjoint's np.add.at(d_a, index, part): a new value of d_a
            update = ir.Call(runtime.added_at, tuple(self.state.converter.convert(a) for a in call.args))
            self.state.host.bind(gast.Name(id=call.args[0].id, ctx=gast.Store(), annotation=None,
                                           type_comment=None), update)
            return
        name = call.args[0].id
        array = self.scope.env.get(name)
        array = self.check_writable(name, array, f"np.add.at into {name}", "add into that array", "adding", stmt)
        index, value = (self.ssa.flatten(self.state.converter.convert(a)) for a in call.args[1:])
        added = self.ssa.flatten(ir.Call(runtime.added_at, (array, index, value)))
        self.state.block.append(ir.Store(array.name, ir.Const(Ellipsis), added, self.state.line))
        self.state.computed.clear()
        self.views.wrote(array.name)

    def views_written_in(self, loop: Any) -> set[str]:
        """Mark views bound before ``loop`` of arrays it writes into: a second iteration would read them
        after a write.  Returns the names marked (the caller unmarks them after the loop)."""
        written = set()
        for node in all_nodes(loop):
            if (isinstance(node, gast.Subscript) and isinstance(node.ctx, gast.Store)
                    and isinstance(node.value, gast.Name)):
                written.add(node.value.id)
            elif isinstance(node, gast.AugAssign) and isinstance(node.target, gast.Name):
                written.add(node.target.id)
        roots = {self.views.root_of(self.scope.env.get(name)) for name in written} - {None}
        marked = {name for name in self.views.root
                  if any(root in roots for root, _ in self.views.views_of(name))} - self.views.stale
        self.views.stale |= marked
        return marked

    def join_ownership(self, merged: str, value: Any, others: list[str], user_name: str) -> None:
        """``merged`` is an array this function owns (one it may write into) where every value joined
        into it is: an array it made that no other name holds.  A loop's first join is seen before its
        body is lowered: the body may write into ``merged`` on that promise, which the join at the end of
        the body keeps, or the write is refused there."""
        if value == ir.Var(merged):
            return
        owned = (isinstance(value, ir.Var) and value.name in self.state.buffers and not others
                 and value.name not in self.views.root)
        if merged not in self.joins_owned:
            self.joins_owned[merged] = owned
            if owned:
                self.state.buffers.add(merged)
        elif self.joins_owned[merged] and not owned:
            self.joins_owned[merged] = False
            self.state.buffers.discard(merged)
            if self.views.writes[merged]:
                why = (f"the same object as {others[0]}" if others else
                       "not an array this function created (an argument, or a view of one)")
                raise self.state.refusal(f"an assignment into {user_name}[...]", f"{user_name} is {why} on some "
                                         f"paths into this loop or branch, and writing into it would change that "
                                         f"array too; copy it first: {user_name} = {user_name}.copy()")
        if owned and value.name in self.state.maybe_numbers:
            self.state.maybe_numbers.add(merged)
