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

This module makes the stores, ``np.add.at`` and the ownership of merge variables; what is known of
each name's views is the memory model's (``memory.views.Views``, which every part consults); its
parts are modules of their own: ``lower_views`` (views read after a write, taken again, and stores
through a view) and ``lower_updates`` (``x op= v``).
"""
from __future__ import annotations

import ast
import operator
from typing import Any, Optional

import gast
import numpy as np
from ..core import ir, language, runtime
from ..frontend.list_sharing import extends_a_list, stores_into_a_list
from ..frontend.shared_updates import UPDATED_IN_PLACE
from ..memory.aliasing import Chosen, retake_kind, shared_operands
from ..memory.views import Views
from .lower_scan import updated_in_place
from .lower_ssa import SSABuilder
from .lower_state import LoweringState, Part
from .lower_updates import UpdateLowering
from .lower_views import ViewRetaking
from ..core.identity import Identity
from ..core.nodes import all_nodes


def _is_add_at(fn: Any) -> bool:
    """``fn`` is ``np.add.at`` (a bound method: a new object at each attribute read)."""
    return language.is_scatter_add(fn)


def _writes_arrays(node: Any) -> bool:
    """Whether the function ``node`` writes into an array anywhere: a store (``v[i] = y``), an update
    (``v += y``, which may be an array's) or a scatter (``np.add.at``)."""
    return bool(updated_in_place([node])) or any(
        isinstance(n, gast.Call) and isinstance(n.func, gast.Attribute) and n.func.attr == "at" for n in all_nodes(node))


class WriteLowering(Part):
    """Stores, in-place updates, and the views of the arrays they change: the memory model's record of
    the function's views (``views``) and the writes made on them, with its parts for views read and
    written through (``lower_views``) and in-place updates (``lower_updates``)."""

    def __init__(self, state: LoweringState, ssa: SSABuilder) -> None:
        super().__init__(state)
        self.ssa = ssa
        self.views = Views(state.buffers, enabled=not state.generated, helper_shares=state.helper_shares)
        # the function writes into an array somewhere (a store, an update, np.add.at): views matter
        self.writes_arrays = _writes_arrays(state.parsed.node)
        self.retaking = ViewRetaking(state, ssa, self.views)
        self.updates = UpdateLowering(state, ssa, self.views)

    def bound_item(self, name: str, value: Any) -> None:
        """``name = value``: what ``name`` may view (``Views.bound_item``)."""
        self.views.bound_item(name, value)

    def unpacked(self, name: str, whole: str) -> None:
        """``name`` is an item of ``whole``, a value unpacked by position (``Views.unpacked``)."""
        self.views.unpacked(name, whole)

    def passes_written(self, call: ir.Call) -> bool:
        """Whether ``call`` is given an array this function writes into somewhere, or a view of one."""
        return self.writes_arrays and any(
            isinstance(a, ir.Var) and (a.name in self.state.buffers or a.name in self.views.root) for a in call.args)

    def bound(self, user_name: str, name: str, value: Any) -> None:
        """Remember what the SSA name ``name``, just bound to the user's ``user_name`` from ``value``,
        may view or hold (``value`` as the converter made it; the statement just emitted, if it
        assigned ``name``, as it became)."""
        self.bound_item(name, value)
        emitted = self.state.block[-1] if self.state.block else None
        if name not in self.views.element_index and isinstance(emitted, ir.Assign) and emitted.target == name:
            self.views.note_element(name, emitted.value)  # b[v > 0.0]: the kinds decide on the name it became
        self.views.note_holders(user_name, value)

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
        """``value`` read now, wherever it is read from (``lower_views``)."""
        return self.retaking.current(value)

    def read(self, name: str) -> Optional[ir.Expr]:
        """What the user's local ``name`` holds now (``None`` if it is not a local)."""
        value = self.scope.env.get(name)
        if isinstance(value, ir.Var):
            if value.name in self.state.maybe_unbound and not self.state.generated:
                self.check_bound(value, name)
            return self.view_now(value, name)
        return value

    def check_bound(self, value: ir.Var, name: str) -> None:
        """Before a read of ``name``, whose merge variable ``value`` is None on a path that left it unbound:
        raise UnboundLocalError there, as Python does (once per statement and block: ``m * m`` checks once)."""
        key = (Identity(self.state.block), runtime.check_bound, value.name)
        if key not in self.state.computed:
            self.state.block.append(ir.Effect(ir.Call(runtime.check_bound, (
                value, ir.Const(name), ir.Const(self.scope.parsed.filename), ir.Const(self.state.line))),
                self.state.line))
            self.state.computed[key] = value

    def view_now(self, value: ir.Var, name: str, user: bool = True) -> ir.Expr:
        """``value``, read now under the name ``name`` (``lower_views``)."""
        return self.retaking.view_now(value, name, user)

    def augmented(self, stmt: gast.AugAssign) -> None:
        """``target op= value`` (``lower_updates``)."""
        self.updates.augmented(stmt)

    def store(self, target: gast.Subscript, value: ir.Expr) -> None:
        """``a[index] = value`` into an array: allowed into arrays the function made itself and not views."""
        array = self.scope.env.get(target.value.id)
        name = target.value.id
        if self.state.generated and isinstance(array, ir.Var):
            self.state.buffers.add(array.name)  # generated code writes only into adjoints it owns (reverse.py)
        elif isinstance(array, ir.Var) and array.name in self.views.root \
                and self.retaking.store_through_view(array, target, value):
            return
        shown = getattr(target, "holder_written_as", name)  # parts["head"] where sugar.py named it parts_item
        array = self.check_writable(shown, array, f"an assignment into {getattr(target, 'written_as', name + '[...]')}",
                                    "write into that array by index", "writing", target)
        index = self.ssa.flatten(self.state.converter.convert(target.slice))
        value = self.ssa.flatten(value)
        if isinstance(value, ir.Display):  # b[[1, 2]] = [x, y]: a store writes one value
            value = self.ssa.materialise(value, "items")
        self.state.block.append(ir.Store(array.name, index, value, self.state.line))
        self.state.computed.clear()
        self.views.wrote(array.name)

    def check_writable(self, name: str, array: Any, what: str, instead: str, verb: str, node: Any) -> ir.Var:
        """``array``, the value of ``name``, where it is an array this function made and not a view of one;
        a write into anything else is refused: NumPy would change the caller's data, or show the write
        through the view."""
        # (code s2s_ad generated writes only into adjoints it owns: reverse.py decided that)
        if isinstance(array, ir.Var) and array.name in self.views.root and not self.state.generated:
            raise self.state.parsed.error(what, self.view_refusal_hint(name, self.views.root[array.name], instead), node)
        if isinstance(array, ir.Var) and array.name in self.views.merged_from and not self.state.generated:
            holder = self.views.merged_from[array.name]
            if getattr(node, UPDATED_IN_PLACE, False):  # the user's b += v, lowered again as this store
                raise self.state.parsed.error(
                    f"the in-place update of {name}", f"{name} is the same object as {holder} on some paths, and "
                    f"NumPy would change that array too; write {name} = {name} + ... (a new array), or copy it first",
                    node)
            raise self.state.parsed.error(what, f"{name} is the same object as {holder} on some paths into this "
                                          f"loop or branch only, and writing into it would change that array on "
                                          f"those paths; copy it first: {name} = {name}.copy()", node)
        if not (isinstance(array, ir.Var) and array.name in self.state.buffers):
            if isinstance(array, ir.Var) and not self.from_an_argument(array.name):
                raise self.state.parsed.error(what, f"{name} is not an array this function created, as far as "
                                              f"s2s_ad can tell (a list or tuple taken from a container or a call, an "
                                              f"item of one, or another object), and other names may hold it too; "
                                              f"{verb} into an array the function owns instead: {name} = "
                                              f"np.array({name}), or {name} = {name}.copy()", node)
            raise self.state.parsed.error(
                what, f"{name} is not an array this function created (an argument, or a view of one), and {verb} "
                f"into it would change the caller's data; copy it first: {name} = {name}.copy()", node)
        return array

    def from_an_argument(self, name: str) -> bool:
        """Whether the SSA name ``name`` may be an argument or hold or view one: followed through what made
        each name (a view, an item of a container, a helper's result) to the function's parameters."""
        seen, todo = {name}, [name]
        while todo:
            current = todo.pop()
            if current in self.state.params:
                return True
            made = self.views.made.get(current)
            for operand in (shared_operands(made) if made is not None else ()):
                if operand not in seen:
                    seen.add(operand)
                    todo.append(operand)
        return False

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

    def result_into_out(self, call: gast.Call, target: gast.Subscript) -> ir.Expr:
        """The value stored by ``c[...] = np.f(a)``, which sugar.py made of the user's ``np.f(a, out=c)``:
        the call's result, where ``np.f`` is a ufunc of one result, after NumPy's checks of ``out``
        (an array, into whose dtype the result casts under the ufunc's ``same_kind`` rule:
        ``runtime.check_out_cast``); the store itself is any ``c[...] = v``'s (into an array this
        function made, through a view, refused into an argument).  Any other function is refused."""
        fn = self.state.converter.resolve(call.func)
        if not (isinstance(fn, np.ufunc) and fn.nout == 1):
            spelled = ast.unparse(gast.gast_to_ast(call.func))
            raise self.state.refusal(f"{spelled}(..., out={call.writes_out})", "out= (writing the result into an "
                                     "array that exists) is supported for NumPy's ufuncs of one result "
                                     f"(np.exp, np.multiply, ...); write {call.writes_out}[...] = {spelled}(...) to "
                                     f"write into {call.writes_out}")
        value = self.ssa.flatten(self.state.converter.convert(call))
        out = self.state.converter.convert(target.value)
        if isinstance(out, ir.Const) and not language.is_array_value(out.value):
            raise self.state.refusal(f"np.{fn.__name__}(..., out={call.writes_out})", f"{call.writes_out} is "
                                     f"{type(out.value).__name__}, not an array, and NumPy raises TypeError here; "
                                     f"write {call.writes_out} = np.{fn.__name__}(...)")
        out = self.ssa.flatten(out)
        self.state.block.append(ir.Effect(ir.Call(runtime.check_out_cast, (
            value, out, ir.Const(f"np.{fn.__name__}"), ir.Const(self.scope.parsed.filename),
            ir.Const(self.state.line))), self.state.line))
        return value

    def views_written_in(self, loop: Any) -> set[str]:
        """Mark views bound before ``loop`` of arrays it writes into: a second iteration would read them
        after a write.  Returns the names marked (the caller unmarks them after the loop)."""
        written, stored, items_updated = set(), set(), set()
        for node in all_nodes(loop):
            if isinstance(node, gast.AugAssign) and stores_into_a_list(node.target):
                items_updated.add(node.target.value.id)  # out[i] += v: an array item changes in place
            elif isinstance(node, gast.Subscript) and stores_into_a_list(node):
                continue  # out[i] = v into a list: a new list, no array written into
            elif (isinstance(node, gast.Subscript) and isinstance(node.ctx, gast.Store)
                    and isinstance(node.value, gast.Name)):
                written.add(node.value.id)
                stored.add(node.value.id)
            elif isinstance(node, gast.AugAssign) and isinstance(node.target, gast.Name) \
                    and not extends_a_list(node):  # (a longer list writes into no array)
                written.add(node.target.id)
        roots = {self.views.root_of(self.scope.env.get(name)) for name in written} - {None}
        for name in items_updated:  # the arrays the list holds (a number item is rebound, written into by none)
            roots |= {root for root in self.views.roots_of(self.scope.env.get(name))
                      if root in self.state.buffers and root not in self.state.maybe_numbers}
        for name in written:  # a merge variable the loop surely writes into may be the arrays joined into it
            value = self.scope.env.get(name)
            if isinstance(value, ir.Var) and value.name in self.state.buffers and (
                    name in stored or value.name not in self.state.maybe_numbers):
                self.views.writing_through(value.name)
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
        made = (isinstance(value, ir.Var) and (value.name in self.state.buffers or self.views.joins_made.get(value.name, False))
                and value.name not in self.views.root)
        self.views.joins_made[merged] = self.views.joins_made.get(merged, True) and made
        owned = (isinstance(value, ir.Var) and value.name in self.state.buffers and not others
                 and value.name not in self.views.root)
        if merged not in self.views.joins_owned:
            self.views.joins_owned[merged] = owned
            if owned:
                self.state.buffers.add(merged)
        elif self.views.joins_owned[merged] and not owned:
            self.views.joins_owned[merged] = False
            self.state.buffers.discard(merged)
            if self.views.writes[merged]:
                why = (f"the same object as {others[0]}" if others else
                       "not an array this function created (an argument, or a view of one)")
                raise self.state.refusal(f"an assignment into {user_name}[...]", f"{user_name} is {why} on some "
                                         f"paths into this loop or branch, and writing into it would change that "
                                         f"array too; copy it first: {user_name} = {user_name}.copy()")
        if owned and value.name in self.state.maybe_numbers:
            self.state.maybe_numbers.add(merged)
