"""Views of an array read after a write into it, and writes through a view (stage 2, lower).

A part of ``lower_writes.WriteLowering``.  NumPy shows a write into an array through every view of
it; SSA form has no such sharing.  Input: a view's SSA name read after its array was written, or a
store ``v[index] = value`` into a view ``v`` of an array the function made, with the facts of
the memory model (``memory.views.Views``).  Output, emitted into ``LoweringState.block``: the view taken again
from the array as it is now (a slice: ``view_now``; by the chain of calls that took it:
``retake_chain``; chosen again by the test that chose it: ``chosen_again``), a deferred check that
it is one number (``ir.ElementRead``) or a view (``runtime.check_view_kept``), or a located
refusal; a store through a view as a store into a copy of each level written back down to the
array itself (``store_through_view``).
"""
from __future__ import annotations

import dataclasses
import operator
from typing import Any, Optional

import gast
from ..core import ir, language, runtime
from ..core.identity import Identity
from ..rules import registry as rules
from ..memory.aliasing import Chosen
from ..memory.views import Views
from .lower_ssa import SSABuilder
from .lower_state import LoweringState, Part
from .naming import describe


def _item(value: Any, index: int, made: dict[str, Any]) -> Any:
    """Item ``index`` of a display, or of a name bound to one (None where it is neither)."""
    if isinstance(value, ir.Var) and isinstance(made.get(value.name), ir.Display):
        value = made[value.name]
    if isinstance(value, ir.Display) and -len(value.items) <= index < len(value.items):
        return value.items[index]
    return None


def defer_write_into_copy(state: LoweringState, env: dict, copy: str, view: str) -> None:
    """A write through ``view``, part of the buffer ``copy`` made by ``x.copy()`` of a value lowering cannot
    tell an array from a list: lowered as an array's (a write into the copy alone), and refused by the
    pipeline unless the kinds prove ``x`` an array (a list's copy holds the list's own arrays)."""
    shown = next((k for k, v in env.items() if v == ir.Var(copy)), copy)
    state.writes_into_copies.append((state.maybe_list_copies[copy], state.refusal(
        f"the write through {view}, part of {shown}", f"{shown} is a copy made by .copy() of a value that may be a "
        "list, and a list's copy holds the list's own arrays: the write would change them for both names, "
        f"which s2s_ad does not follow; write {view} = {view} * 1.0 first (an array of its own), or build "
        "the arrays afresh")))


def _writes_back(call: ir.Call) -> bool:
    """A view step a write goes back through: an index (a store there), or a rule declaring how
    (``write_back``: a reshape of the whole, or a transpose without axes)."""
    if call.fn is operator.getitem:
        return True
    how = rules.fact(call.fn, "write_back")
    return how == "reshape" or (how == "transpose" and len(call.args) == 1 and not call.kwargs)


def _split_call(call: ir.Call) -> bool:
    """``np.split(b, 2)`` and its family: a list of pieces, each ``b`` indexed where
    ``runtime.split_piece`` says (declared ``write_back="pieces"``)."""
    try:
        return rules.fact(call.fn, "write_back") == "pieces"
    except TypeError:  # an unhashable callable
        return False


def _piece_of(step: ir.Call) -> Optional[int]:
    """``k`` of ``pieces[k]``, a constant item of a split's list; None for any other step."""
    if step.fn is operator.getitem and isinstance(step.args[1], ir.Const) and isinstance(step.args[1].value, int):
        return step.args[1].value
    return None


def _write_steps(steps: list[tuple[str, ir.Call, str]]) -> Optional[list[tuple[ir.Call, str, Optional[int]]]]:
    """The steps of a view a write goes back through, each ``(call, kind, piece)``: a split and the
    constant item taken of it become one step, piece ``k`` of that call (an index into the array); None
    where a step is not one to write back through."""
    merged: list[tuple[ir.Call, str, Optional[int]]] = []
    position = 0
    while position < len(steps):
        _, call, kind = steps[position]
        piece = _piece_of(steps[position + 1][1]) if position + 1 < len(steps) and _split_call(call) else None
        if piece is not None:
            merged.append((call, kind, piece))
            position += 2
        elif _writes_back(call):
            merged.append((call, kind, None))
            position += 1
        else:
            return None
    return merged


class ViewRetaking(Part):
    """Views read after a write into their array, taken again (or checked, or refused); writes through them."""

    def __init__(self, state: LoweringState, ssa: SSABuilder, views: Views) -> None:
        super().__init__(state)
        self.ssa = ssa
        self.views = views

    def current(self, value: ir.Var) -> ir.Expr:
        """``value`` read now, wherever it is read from (a user's name, an item of a tuple, a dict, a
        record): a view of an array written since it was bound is taken again, or refused."""
        if self.state.generated:
            return value
        if self.views.outdated(value.name) is None:
            self.refuse_written_alias(value, value.name)
            return value
        return self.view_now(value, value.name, user=False)  # (which refuses a written alias itself)

    def refuse_written_alias(self, value: ir.Var, name: str) -> None:
        """A deferred refusal (``refused_reads``) of reading ``value``, a merge variable one of whose
        paths' arrays was written since the paths joined: NumPy's value shows the write on that path only."""
        written = self.views.aliases_written.get(value.name)
        if written is None or (value.name in self.views.root and any(
                root == written for root, _ in self.views.views_of(value.name))):
            return  # (a view of that array on some path: taken again by its steps or positions, or refused)
        array = next((k for k, v in self.scope.env.items() if v == ir.Var(written)), "the array it is on some paths")
        self.state.refused_reads.append(self.state.refusal(f"reading {name} after {array} was written", (
            f"{name} is that array on some paths into a branch or loop and another array on others, and the "
            f"array was written since (through a view, by index or in place), so what {name} shows depends on "
            f"the path; write into the array before the branch or loop, or copy it where the paths join "
            f"({name} = {name}.copy())")))

    def view_now(self, value: ir.Var, name: str, user: bool = True) -> ir.Expr:
        """``value``, read now under the name ``name``: where it may view an array written since it was
        bound, what NumPy's view shows now (taken again), a deferred check that it is one number (a
        copy), or a refusal.  ``user``: ``name`` is the user's local (retaken under it)."""
        if not self.state.generated:
            self.refuse_written_alias(value, name)
        through = self.views.written_through_merge(value.name)
        if through is not None:
            # (refused once the lowering is final: an update lowered as a name's new binding here may
            # become a store when the kinds are known, and the name then no merge variable)
            written = next((k for k, v in self.scope.env.items() if v == ir.Var(through[0])), "the array it views")
            self.state.refused_reads.append(self.state.refusal(f"reading {name} after {written} was written", (
                f"{name} may be a view of an array written in place under a name (or an item) that a loop or "
                f"branch binds to other arrays too, so NumPy's view shows the write on some paths or iterations "
                f"only; copy it where you take it (.copy()), or keep the array in a name of its own that is only "
                f"updated in place (b += v)")))
            return value
        array = self.views.outdated(value.name)
        if array is not None and self.views.retakes(value.name, array):
            # a slice of an array this function made (row = m[1:3, :]) shows the array as it is
            # now, as NumPy's view would: take it again here, under the same user's name
            base, index, _ = self.views.view_index[value.name]
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
            parts = self.views.element_index.get(value.name)
            if parts is None or self.views.view_values.get(value.name, (None,))[0] != array:
                steps = self.views.chain(value.name, array) if not self.views.others.get(value.name) else None
                if steps is not None:
                    return self.retake_chain(name, array, steps, user)
                chosen = self.chosen_again(value.name, name, user)
                if chosen is not None:
                    return chosen
                positioned = self.by_positions(value, name, array, user)
                if positioned is not None:
                    return positioned
                raise self.state.refusal(f"reading {name} after {array} was written", hint)
            if value.name in self.views.joined_elements and array in self.state.buffers:
                # v = M[1] on one path of an if, M[1] * 1.0 on the other: chosen again by its test, each
                # path's value read as it is now (a row taken again, or one number the kinds choose);
                # v = M[t] carried out of a loop: by its elements' positions (-1: one number, kept)
                again = self.chosen_again(value.name, name, user) or self.by_positions(value, name, array, user)
                if again is not None:
                    return again
            if value.name in self.views.joined_elements or array not in self.state.buffers:
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

    def retake_chain(self, name: str, array: str, steps: list[tuple[str, ir.Call, str]], user: bool) -> ir.Expr:
        """The view ``name`` taken again from ``array`` as it is now, by the calls that took it
        (``Views.chain``); a step that is a view only sometimes (``np.reshape`` of an array that is not
        contiguous, ``B[0]`` of a vector) is checked where the code runs to give a view, taken again
        (a write changes no array's layout: the step made again is a view exactly where it was one),
        else NumPy's copy keeps the old values, and the read is refused there.  Refused here where a
        step reads a name of a block that has ended (an index computed in a branch)."""
        for made, call, kind in steps:
            if not self.views.visible(ir.Call(call.fn, tuple(call.args[1:]), call.kwargs), self.state.open_blocks):
                positioned = self.by_positions(ir.Var(steps[-1][0]), name, array, user)
                if positioned is not None:
                    return positioned
                raise self.state.refusal(f"reading {name} after {array} was written", f"{name} was taken "
                                         f"from {array} with values of a branch or loop that has ended, where it "
                                         "cannot be taken again; copy it where you take it (.copy())")
        current: ir.Expr = ir.Var(array)
        for index, (made, call, kind) in enumerate(steps):
            last = user and index == len(steps) - 1
            key = (made, self.views.writes[array], Identity(self.state.block))  # (a retake in a branch is its own)
            if key in self.views.retaken and not last:  # r0, r1 = M after a write into b: M is taken again once
                current = self.views.retaken[key]
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
            self.views.retaken[key] = current
        return current

    def by_positions(self, value: ir.Var, name: str, array: str, user: bool) -> Optional[ir.Expr]:
        """``value``, which may view ``array`` (an array the function made, and nothing else), read after
        a write into ``array`` where no chain of steps takes it again (taken in an iteration that has
        ended, by a recursive helper, joined over a loop): where the code runs, the positions of its
        elements in ``array`` (``runtime.view_positions``: -1 for one number, which the write did not
        reach; an array that is no view of ``array`` there is refused, since generated code may hold a
        copy where NumPy's value is a view), then the view as it is now, as a function of ``array``
        (``runtime.retaken_view``: generated code writes into ``array`` in place).  None where ``value``
        may be a value already taken again so (a copy: ``Views.positioned``), an early return's result,
        or a view of another array."""
        if array not in self.state.buffers or value.name in self.views.positioned or \
                value.name in self.state.exit_results or \
                any(root != array for root, _ in self.views.views_of(value.name)):
            return None
        # (emitted as they are: flattening would read value again, as a view of an array written since)
        positions = self.state.names.fresh("positions")
        found = ir.Call(runtime.view_positions, (value, ir.Var(array), ir.Const(name),
                                                 ir.Const(self.scope.parsed.filename), ir.Const(self.state.line)))
        self.state.block.append(ir.Assign(positions, found, self.state.line))
        self.state.host.made(positions, found)
        again = ir.Call(runtime.retaken_view, (ir.Var(array), value, ir.Var(positions)))
        taken = self.state.names.claim(name) if user else self.state.names.fresh(name)
        self.state.block.append(ir.Assign(taken, again, self.state.line))
        self.state.host.made(taken, again)
        if user:
            self.scope.env[name] = ir.Var(taken)
        return ir.Var(taken)

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
                reads = len(self.state.element_reads)
                now = self.current(item)
                if isinstance(kept, ir.Var):  # (an item a[i] of its path: one number there is the value chosen,
                    # bound where both paths meet, the item's own name being of its path only)
                    self.state.element_reads[reads:] = [
                        dataclasses.replace(r, kept=kept.name) if r.kept == item.name else r
                        for r in self.state.element_reads[reads:]]
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
            view, base, ir.Const(name), ir.Const(self.scope.parsed.filename), ir.Const(self.state.line))),
            self.state.line))

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
        chain = self.views.chain(view.name, root)
        steps = _write_steps(chain) if chain is not None else None
        if steps is None or not all(self.views.visible(ir.Call(call.fn, tuple(call.args[1:]), call.kwargs), self.state.open_blocks)
                                    for call, _, _ in steps):
            return False
        if root in self.state.maybe_list_copies:
            defer_write_into_copy(self.state, self.scope.env, root, target.value.id)
        index = self.ssa.flatten(self.state.converter.convert(target.slice))
        value = self.ssa.flatten(value)
        if isinstance(value, ir.Display):  # b[[1, 2]] = [x, y]: a store writes one value
            value = self.ssa.materialise(value, "items")
        levels: list[ir.Expr] = [ir.Var(root)]
        taken: list[ir.Call] = []  # how each level was taken from the one before, as it is now
        for call, kind, piece in steps:
            step = self.piece_step(levels[-1], call, piece) if piece is not None else \
                ir.Call(call.fn, (levels[-1],) + tuple(call.args[1:]), call.kwargs)
            taken.append(step)
            levels.append(self.ssa.flatten(step))
            if kind == "contiguous":  # (a reshape that copied would not write through)
                self.check_view(levels[-1], levels[-2], target.value.id)
        changed = self.owned_copy(levels[-1])
        self.state.block.append(ir.Store(changed.name, index, value, self.state.line))
        for depth in range(len(steps), 0, -1):
            call = taken[depth - 1]
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

    def piece_step(self, level: ir.Expr, split: ir.Call, piece: int) -> ir.Call:
        """Piece ``piece`` of ``split`` (``np.split(b, 2)``) taken from ``level`` as an index into it
        (``runtime.split_piece``), the index computed from shapes and counts alone."""
        keywords = dict(split.kwargs)
        sections = split.args[1] if len(split.args) > 1 else keywords.get("indices_or_sections", ir.Const(None))
        axis = split.args[2] if len(split.args) > 2 else keywords.get("axis", ir.Const(0))
        shape = self.ssa.flatten(ir.Call(language.shape, (level,)))
        where = self.ssa.flatten(ir.Call(runtime.split_piece, (shape, ir.Const(split.fn.__name__), sections, axis,
                                                               ir.Const(piece))), self.state.names.fresh("piece"))
        return ir.Call(operator.getitem, (level, where))

    def owned_copy(self, value: ir.Expr) -> ir.Var:
        """A copy of ``value`` the function owns and writes into (a level of a view written through)."""
        copied = self.ssa.flatten(ir.Call(language.copy, (value,)))
        assert isinstance(copied, ir.Var)
        self.state.buffers.add(copied.name)
        self.state.maybe_numbers.discard(copied.name)
        return copied
