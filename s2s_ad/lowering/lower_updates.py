"""In-place updates (``x op= v``) while lowering (stage 2, lower).

A part of ``lower_writes.WriteLowering``.  Input: an ``AugAssign`` of the user's, with the facts of
the memory model (``memory.views.Views``).  Output, emitted into ``LoweringState.block``: into an array the
function made, a store of the whole array (as NumPy changes it); through a basic-index view of one,
a store into that array and the view taken again after it (``update_through_view``, with a run-time
check where the view may be one number); where the value updated may be an object other names see
(an argument, a name bound to the same value, a view, a container holding it), a new binding
recorded as an ``ir.InPlace`` with a run-time check that it is a number (``shared``, ``guarded``);
a view updated in place where none of these holds is refused.
"""
from __future__ import annotations

import ast
import dataclasses
import operator
from typing import Any, Iterator, Optional

import gast
from ..core import ir, runtime
from ..frontend.conversion import Record
from ..frontend.list_sharing import extends_a_list, stores_into_a_list
from ..rules import registry as rules
from .expressions import BINARY_OPERATORS
from ..memory.views import Views
from .lower_ssa import SSABuilder
from .lower_state import LoweringState, Part
from .lower_views import defer_write_into_copy


def _operator_sign(fn: Any) -> str:
    """How Python writes the binary operator ``fn`` (its declared ``syntax``): ``"+"`` for ``operator.add``,
    and ``"+"`` for anything that declares none."""
    syntax = rules.fact(fn, "syntax")
    if not (isinstance(syntax, type) and issubclass(syntax, ast.operator)):
        return "+"
    return ast.unparse(ast.BinOp(ast.Name("a"), syntax(), ast.Name("b"))).split()[1]


def _leaves(record: Record) -> Iterator[Any]:
    """The values a record holds, those of the records it holds included."""
    for item in record.items:
        if isinstance(item, Record):
            yield from _leaves(item)
        else:
            yield item


def _whole_of(name: gast.Name) -> gast.Subscript:
    """``name[...]``, the store ``name op= v`` makes into the array ``name`` views."""
    whole = gast.Subscript(value=gast.Name(id=name.id, ctx=gast.Load(), annotation=None, type_comment=None),
                           slice=gast.Constant(value=Ellipsis, kind=None), ctx=gast.Store())
    return ast.copy_location(whole, name)


class UpdateLowering(Part):
    """``x op= v``: a store into the array updated, or a new binding checked to be a number."""

    def __init__(self, state: LoweringState, ssa: SSABuilder, views: Views) -> None:
        super().__init__(state)
        self.ssa = ssa
        self.views = views
        self.storing_back: Optional[str] = None  # the dict an item's update stores into (update_an_item)

    def augmented(self, stmt: gast.AugAssign) -> None:
        """``target op= value``: into an array the function made, a store of the whole array (as NumPy
        changes it); through a view of one, a store into that array (``update_through_view``); where the
        value may be shared, a new binding with a run-time check that it is a number (``ir.InPlace``)."""
        op = BINARY_OPERATORS[type(stmt.op)]
        if isinstance(stmt.target, gast.Subscript) and stores_into_a_list(stmt.target):
            self.update_a_list_item(stmt)
            return
        current = self.state.converter.convert(stmt.target)
        if isinstance(current, ir.Var) and self.dict_item(stmt.target) is not None:
            self.update_an_item(stmt, current)
            return
        value = ir.Call(op, (current, self.state.converter.convert(stmt.value)))
        if extends_a_list(stmt):  # items += [v]: a longer list (no other holder sees it: list_sharing)
            self.state.host.bind(stmt.target, value)
            return
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
            if current.name in self.views.root and self.state.host.store_through_view(
                    current, _whole_of(stmt.target), value):  # a, b = np.split(y, [2]); a *= 3: into y
                return
            shown = getattr(stmt.target, "written_as", stmt.target.id)  # state.v, for state_v (sugar.py)
            if current.name in self.views.root and current.name not in self.views.unpacked_items:
                raise self.state.parsed.error(f"an in-place update of {shown}", self.view_refusal_hint(
                    shown, self.views.root[current.name], "write into that array by index"), stmt)
            update = self.shared(stmt.target.id, current.name, stmt)
            if update is None and current.name in self.views.root:  # u, w = pair(x); u += x
                update = ir.InPlace(current.name, shown, f"an item of {self.user_name_of(self.views.root[current.name])} "
                                    f"(a row, where that is an array)", stmt.lineno, stmt.col_offset + 1,
                                    filename=self.scope.parsed.filename)
            elif update is None and current.name in self.views.unpacked_items:  # r0, r1 = m; a, b = np.split(x, 2)
                update = ir.InPlace(current.name, shown, f"an item unpacked from "
                                    f"{self.user_name_of(self.views.unpacked_items[current.name])} (a row of an array, "
                                    "a piece of np.split's or an array a list holds shares its memory)", stmt.lineno, stmt.col_offset + 1,
                                    filename=self.scope.parsed.filename)
            if update is not None:
                self.state.in_place.append(self.guarded(dataclasses.replace(update, name=shown)))
        self.state.host.bind(stmt.target, value)

    def dict_item(self, target: Any) -> Optional[Record]:
        """The dict record of ``d["k"]``, a constant key's item of a dict the function made; else None."""
        if not (isinstance(target, gast.Subscript) and isinstance(target.value, gast.Name)):
            return None
        record = self.scope.env.get(target.value.id)
        return record if isinstance(record, Record) and record.kind == "dict" else None

    def update_an_item(self, stmt: gast.AugAssign, current: ir.Var) -> None:
        """``d["k"] op= v`` where the item is a value that may be an array: Python calls the item's own
        ``__iadd__`` (NumPy changes that array, and every name that views or holds it sees the change),
        then stores what it returned as the item.  So the update is the one a name bound to the item
        makes (a store into an array the function made, one through a view of it, a checked new binding
        where others may see it, or a refusal), and its result is stored back as the item.  The dict is
        no other holder of the item where it holds it once: the store back gives it the new value."""
        assert isinstance(stmt.target, gast.Subscript) and isinstance(stmt.target.value, gast.Name)
        holder = stmt.target.value.id
        shown = ast.unparse(gast.gast_to_ast(stmt.target))  # d["k"]: what refusals and checks name
        item = gast.Name(id=shown, ctx=gast.Store(), annotation=None, type_comment=None)
        ast.copy_location(item, stmt.target)
        record = self.scope.env[holder]
        held_once = sum(1 for i in _leaves(record) if i == current) == 1
        self.scope.env[shown] = current
        self.storing_back = holder if held_once else None
        try:
            self.augmented(ast.copy_location(gast.AugAssign(target=item, op=stmt.op, value=stmt.value), stmt))
        finally:
            self.storing_back = None
        self.state.host.bind(stmt.target, self.scope.env.pop(shown))

    def update_a_list_item(self, stmt: gast.AugAssign) -> None:
        """``items[i] op= v`` into a list the function made: Python reads the item, updates it (an array in
        place, which every name, view or container holding it sees; a number, a new one) and stores what
        the update gave back as the item.  So it is lowered as those three steps, the item held meanwhile
        under the name ``items[i]`` (refusals and checks name it so): a read, ``x op= v`` of a name, and
        the store of ``runtime.list_with`` (the index, an expression of numbers, computed again there)."""
        target = stmt.target
        assert isinstance(target, gast.Subscript) and isinstance(target.value, gast.Name)
        shown = ast.unparse(gast.gast_to_ast(target))
        holder = self.scope.env.get(target.value.id)
        arrays = [root for root in self.views.roots_of(holder) if root in self.state.buffers
                  and root not in self.state.maybe_numbers] if isinstance(holder, ir.Var) else []
        if any(not self.views.visible(ir.Var(root), self.state.open_blocks) for root in arrays):
            # (one name in the generated code for the array each trip made: which item is which is not known)
            raise self.state.parsed.error(f"the in-place update of {shown}", f"{target.value.id} holds arrays made "
                                          "in a loop or comprehension, and the update would change one of them in "
                                          f"place; write {shown} = {shown} {_operator_sign(BINARY_OPERATORS[type(stmt.op)])} "
                                          "... (a new array)", stmt)

        def item(ctx: Any) -> gast.Name:
            return ast.copy_location(gast.Name(id=shown, ctx=ctx, annotation=None, type_comment=None), target)
        read = ast.copy_location(gast.Subscript(value=target.value, slice=target.slice, ctx=gast.Load()), target)
        self.state.host.bind(item(gast.Store()), self.state.converter.convert(read))
        held, holder = self.scope.env.get(shown), self.scope.env.get(target.value.id)
        if isinstance(held, ir.Var) and isinstance(holder, ir.Var):  # an item of the list, never an index's view
            self.views.unpacked(held.name, holder.name)
        self.augmented(ast.copy_location(gast.AugAssign(target=item(gast.Store()), op=stmt.op, value=stmt.value), stmt))
        self.state.host.bind(target, self.scope.env.pop(shown))

    def update_through_view(self, stmt: gast.AugAssign, current: ir.Var, value: ir.Call) -> bool:
        """``row *= 3`` where ``row = M[1]`` (a basic index of an array the function made): NumPy changes
        ``M``, so this is ``M[1] = row * 3``, and ``row`` is ``M[1]`` again, a view taken after the
        write: later reads of both see the change.  False where ``row`` is not such a view."""
        found = self.views.view_index.get(current.name)
        if found is None:
            return False
        base, index, keeps = found
        if base in self.state.maybe_list_copies:  # (a list's copy: row may be the list's own array)
            defer_write_into_copy(self.state, self.scope.env, base, stmt.target.id)
        if not keeps:  # M[1] is a row only if M has more dimensions than the index has parts
            parts = index.items if isinstance(index, ir.Display) else (index,)
            array = next((k for k, v in self.scope.env.items() if v == ir.Var(base)), base)
            hint = (f"{stmt.target.id} is one number of {array} (a copy), not a part of it (a view); write into "
                    f"{array} by index ({array}[...] {_operator_sign(value.fn)}= ...), or "
                    f"{stmt.target.id} = {stmt.target.id} {_operator_sign(value.fn)} ... (a new number)")
            guard = ir.Effect(ir.Call(runtime.check_view_update, (
                ir.Var(base), ir.Const(len(parts)), ir.Const(stmt.target.id), ir.Const(hint),
                ir.Const(self.scope.parsed.filename), ir.Const(self.state.line))), self.state.line)
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

    def guarded(self, update: ir.InPlace) -> ir.InPlace:
        """``update`` with a run-time check, emitted here, that the value updated is a number:
        NumPy changes an array (a 0-d one too) in place, and the other names sharing it would see that."""
        guard = ir.Effect(ir.Call(runtime.check_number_update, (
            ir.Var(update.value), ir.Const(update.name), ir.Const(update.shared), ir.Const(self.scope.parsed.filename),
            ir.Const(update.line))), self.state.line)
        self.state.block.append(guard)
        return dataclasses.replace(update, guard=guard)

    def shared(self, name: str, value: str, stmt: Any) -> Optional[ir.InPlace]:
        """An ``InPlace`` record if ``value`` (what ``name`` holds) may be an object other names see."""
        at = dict(line=stmt.lineno, column=stmt.col_offset + 1, filename=self.scope.parsed.filename,
                  site=self.state.site)
        if value in self.state.params:
            return ir.InPlace(value, name, f"the argument {self.state.params[value]}", **at)
        others = sorted({k for k, v in self.state.holders(name) if v == ir.Var(value)})
        if others:
            return ir.InPlace(value, name, f"the same object as {others[0]}",
                              owned=value in self.state.buffers and value not in self.views.root, **at)
        owned = value in self.state.buffers and value not in self.views.root
        if value in self.views.merged_from:  # (made by the function on every path: NumPy's store, once an array)
            made = owned or self.views.joins_made.get(value, False)
            return ir.InPlace(value, name, f"the same object as {self.views.merged_from[value]} on some paths",
                              owned=made, **at)
        if self.views.holders.get(value, name) != name:  # (a name holding its own value says nothing)
            return ir.InPlace(value, name, f"shared with {self.views.holders[value]} (a view of it, a list holding it, "
                              f"or what a function returned for it)", owned=owned, **at)
        other = self.other_reference(name, value)
        if other is not None:
            owned = value in self.state.buffers and value not in self.views.root
            return ir.InPlace(value, name, other, owned=owned, **at)
        if value in self.views.view_values:
            base, integers, keeps = self.views.view_values[value]
            return ir.InPlace(value, name, f"a view of {base}", base=base, integers=integers, keeps_dimension=keeps,
                              **at)
        return None

    def storages(self, value: str) -> set[str]:
        """The SSA names whose object ``value`` may be: itself, and what was joined into it (a loop's
        or a branch's merge variable is the object it was given on some path)."""
        found, todo = {value}, [value]
        while todo:
            for source in self.views.merge_sources.get(todo.pop(), ()):
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
        for other, held in self.state.holders(name):
            if other != self.storing_back and holds(held):
                return f"shared with {other} (the same object, a view of it, or a container holding it)"
        return None
