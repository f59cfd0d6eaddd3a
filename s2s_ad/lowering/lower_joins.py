"""Joins while lowering (stage 2, lower): the merge variables (phis) where control flow meets.

Input: the user's names bound before an ``if`` or loop and what each path
binds to them (their scope's ``env`` before and after each branch or loop
body), with the facts of the other parts.  Output: for each user name whose
value matters after the join (bound before it, or read after it), a fresh
merge variable, and at the end of each path a parallel assignment of the
path's value to it (``ir.Assign(merge=True)``); a value that reads another
merge variable is bound to a name of its own first, so every copy sees the
values from before any of them.  A container joins item by item (a template
of merge variables, ``lower_containers``); a def joins as its tag (an
integer), and a call of the name then dispatches on it (``lower_calls``); a
view carried through a loop, and whether an array is one the function owns,
are kept across the join (``lower_writes``).
"""
from __future__ import annotations

from collections import Counter
from typing import Any, Iterator, Optional

import gast

from ..core import ir, language
from ..core.identity import IdentityMap, IdentitySet
from .expressions import Bound, Dispatch, Known, Nested, Record
from .function_values import Functions
from .lower_containers import ContainerLowering
from .lower_scan import binders, only_updated_in_place, reads_among, stored_among, updated_in_place
from .lower_state import LoweringState, Part
from .lower_writes import WriteLowering
from ..core.nodes import all_nodes


def held_before(values: list, before: Optional[dict]) -> Optional[ir.Var]:
    """The array every path binds a name to (``values``, one per path), where some name held it before
    the branch (``before``'s env): the name needs no merge variable after the join."""
    first = values[0]
    if before is None or not isinstance(first, ir.Var) or any(x != first for x in values):
        return None
    return first if any(isinstance(x, ir.Var) and x == first for x in before.values()) else None


class JoinLowering(Part):
    """Merge variables at the joins of ifs and loops, and the defs a name may hold there."""

    def __init__(self, state: LoweringState, containers: ContainerLowering, writes: WriteLowering) -> None:
        super().__init__(state)
        self.containers = containers
        self.writes = writes
        # A name bound to different defs on different paths is an SSA value like any other: the tag of
        # the def, merged at joins, and a call dispatches on it (see ``lower_calls``).
        self.defs: dict[int, Nested] = {}  # tag -> def
        self.def_tags: IdentityMap[Any, int] = IdentityMap()  # def node -> tag
        self.function_vars: dict[str, tuple[frozenset, str]] = {}  # merge variable -> (tags, Dispatch.missing)
        self.returned_in: IdentityMap[Any, list[str]] = IdentityMap()  # loop -> the exit results it carries from its body's end

    def joined(self, node: Any) -> list[str]:
        """User names assigned inside ``node`` whose value matters outside it: bound before it,
        or read outside it.  (One walk of ``node``, whatever the number of names.)  A read in a def or
        lambda made inside and read outside counts as a read outside: Python reads the name when the
        function is called, which may be after the join (``g = lambda v: v * k`` in a loop, called after it)."""
        nodes = all_nodes(node)
        inside = Counter(reads_among(nodes))
        escaping = [d for d in nodes if isinstance(d, gast.FunctionDef) and self.scope.reads[d.name] > inside[d.name]]
        if escaping:
            in_defs = IdentitySet(n for d in escaping for n in all_nodes(d))
            inside = Counter(reads_among([n for n in nodes if n not in in_defs]))
        env = self.scope.env
        stored = stored_among(nodes) | {n.value.id for n in nodes if isinstance(n, gast.Subscript) and isinstance(
            n.ctx, gast.Store) and isinstance(n.value, gast.Name) and isinstance(env.get(n.value.id), Record)}
        return sorted(v for v in stored if v in env or self.scope.reads[v] > inside[v])

    def targets(self, joined: list[str], branches: list[dict], loop: bool, before: Optional[dict] = None
                ) -> dict[str, Any]:
        """Merge targets: a fresh name per joined user name; for a container, a template of merge variables.
        None for a name every branch binds to the same value bound before them (``before``'s)."""
        targets: dict[str, Any] = {}
        for v in joined:
            values = [b.get(v) for b in branches]
            if any(isinstance(x, (Known, Bound, Functions)) for x in values):
                if all(x == values[0] for x in values):
                    continue  # the same function on every path
                what = "a list of functions" if any(isinstance(x, Functions) for x in values) else "a function"
                raise self.state.refusal(f"{v}, {what} chosen on some paths", "the code is made before it runs, "
                                         "so each call must know its function: call it in the branch that chooses it, "
                                         "or call each one and choose between the results")
            if any(isinstance(x, Record) for x in values):
                if not loop and all(x is values[0] for x in values):
                    continue  # unchanged on both paths
                targets[v] = self.containers.template(values, loop, v)
            elif not loop and held_before(values, before) is not None:
                continue  # the same array on every path (b += v into an array the function made, on one)
            else:
                targets[v] = self.state.names.fresh(v)
        return targets

    def merge_into(self, block: list[ir.Stmt], env: dict, targets: dict[str, str], line: Optional[int]) -> None:
        """Append the merge copies ``merged = value`` for ``targets``, as one parallel assignment.

        At the end of a loop body a value may read another merge variable
        (``a, b = b * 2, a``; a display ``(s, tape)``): every copy must see the
        values from before any of them.  So displays of variables, and values
        that read another target, are bound to a name of their own first.
        """
        pairs: list[tuple[str, str, Any]] = []
        for user_name, merged in targets.items():
            if user_name not in env and isinstance(merged, str) and user_name not in self.state.exit_results:
                self.state.maybe_unbound[merged] = user_name  # (unbound on this path: None, checked where read)
            value = env.get(user_name, ir.Const(None))
            if isinstance(merged, Record):
                pairs += [(user_name, m, v) for m, v in self.containers.record_pairs(merged, value, user_name)]
            elif isinstance(value, Record):
                raise self.state.refusal(f"{user_name}, a {value.cls.__name__} on some paths only", "a name that holds "
                                         "a container after an if or loop must hold one of the same structure before "
                                         "it and on every path")
            else:
                pairs.append((user_name, merged, value))
        merged_names = {m for _, m, _ in pairs}
        holding: dict[str, list[str]] = {}  # value name -> the user names that hold it (one walk of env)
        for k, v in env.items():
            for held in _held_names(v):  # (itself, or an item of a dict, list, tuple or object it is)
                holding.setdefault(held, []).append(k)
        copies = []
        for user_name, merged, value in pairs:
            if isinstance(value, Nested):
                value = ir.Const(self.tag(value))
            elif isinstance(value, Dispatch):
                value = value.var
            if isinstance(value, ir.Var):  # an array another name holds, joined into this one
                holders = sorted(k for k in holding.get(value.name, ()) if k != user_name)
                if holders or value.name in self.writes.views.merged_from:
                    self.writes.views.merged_from[merged] = holders[0] if holders else self.writes.views.merged_from[value.name]
            reads_targets = {n for n in ir.names_read(value) if n in merged_names and n != merged}
            if (isinstance(value, ir.Display) and any(True for _ in ir.names_read(value))) or reads_targets:
                name = self.state.names.fresh("items" if isinstance(value, ir.Display) else f"{user_name}_next")
                block.append(ir.Assign(name, value, line))
                self.writes.views.bound(name, value)
                value = ir.Var(name)
            copies.append((merged, value))
            if isinstance(value, ir.Var) and value.name != merged:
                self.writes.views.join(merged, value.name)
            self.writes.views.joined(merged, value)
            others = [k for k in holding.get(value.name, ()) if k != user_name] if isinstance(value, ir.Var) else []
            self.writes.join_ownership(merged, value, others, user_name)
            if (isinstance(value, ir.Var) and value.name in self.writes.views.element_index
                    and value.name in self.writes.views.view_values and merged not in self.writes.views.element_index):
                # s = b[1] carried through a loop: one number (checked by the kinds) or a view of b
                self.writes.views.element_index[merged] = self.writes.views.element_index[value.name]
                self.writes.views.view_values[merged] = self.writes.views.view_values[value.name]
                self.writes.views.joined_elements.add(merged)
        for merged, value in copies:
            if not (isinstance(value, ir.Var) and value.name == merged):
                block.append(ir.Assign(merged, value, line, merge=True))

    def tag(self, function: Nested) -> int:
        """The number that stands for the def ``function`` in a merged function binding."""
        tag = self.def_tags.get(function.node)
        if tag is None:
            tag = self.def_tags[function.node] = len(self.defs)
            self.defs[tag] = function
        return tag

    def merged(self, name: str) -> Any:
        """What a merge variable holds for the user: a value, or the choice of a def."""
        if name in self.function_vars:
            tags, missing = self.function_vars[name]
            return Dispatch(ir.Var(name), tags, missing)
        return ir.Var(name)

    def join_functions(self, user_name: str, merged: str, values: list, node: Any) -> None:
        """Record that ``merged`` holds the tag of a def, if one of the joined ``values`` is a
        def (None: the name is unbound on that path).  A path where it is unbound or a value
        makes a later call refused (Python would raise there), not the join."""
        if not any(isinstance(v, (Nested, Dispatch)) for v in values):
            return
        tags, missing = set(), ""
        for value in values:
            if isinstance(value, Nested):
                tags.add(self.tag(value))
            elif isinstance(value, Dispatch):
                tags |= value.tags
                missing = missing or value.missing
            elif value is None:
                missing = missing or (f"{user_name} is defined on some paths only (in one branch of an if, or in "
                                      f"a loop that may not run), and Python would raise where it is not; define "
                                      f"{user_name} on every path before the call")
            else:
                missing = missing or (f"{user_name} is a nested function on some paths and a value on others (line "
                                      f"{node.lineno}); give the function and the value different names")
        self.function_vars[merged] = (frozenset(tags), missing)

    def joined_value(self, merged: Any) -> Any:
        """What a user name holds after a join: a container's template, a value, or the choice of a def."""
        return merged if isinstance(merged, Record) else self.merged(merged)

    def join_branches(self, stmt: gast.If, joined: list[str], before: dict, paths: list[tuple[list[ir.Stmt], dict]],
                      raised: tuple = (False, False)) -> dict[str, Any]:
        """Join the paths of ``stmt`` (each its lowered block and the env at its end, from the env
        ``before`` it): the merge copies of the ``joined`` names appended to each block; returns the
        env after the if.  ``raised``: whether each path always raises; such a path never reaches the
        join, so a name it leaves unbound takes the other path's structure there (``if bad: raise ...``
        then ``return loss, {"h": h}`` on both arms of a later if), its data items None."""
        envs = [{**before, **after} for _, after in paths]
        if raised[0] != raised[1]:
            going, stopped = (envs[1], envs[0]) if raised[0] else (envs[0], envs[1])
            for v in joined:
                if isinstance(going.get(v), Record) and not isinstance(stopped.get(v), Record):
                    going[v] = _displays_as_records(going[v])
                    stopped[v] = _never_read(going[v])
        for v in joined:  # a return on one path only (in a loop): the result is unbound on the other, never read
            shown = next((env[v] for env in envs if isinstance(env.get(v), Record)), None)
            if shown is not None and v in self.state.exit_results and v not in before:
                for env in envs:
                    if isinstance(env.get(v), Record):
                        env[v] = _displays_as_records(env[v])
                for env in envs:
                    env.setdefault(v, _never_read(_displays_as_records(shown)))
        targets = self.targets(joined, envs, loop=False, before=before)
        for v, m in targets.items():
            if not isinstance(m, Record):
                self.join_functions(v, m, [env.get(v) for env in envs], stmt)
        for (block, _), env in zip(paths, envs):
            self.merge_into(block, env, targets, stmt.lineno)
        # a name every path binds to the same value bound before the if (an array updated in place on one
        # path) needs no merge variable (targets): it holds that value after the if
        same = {v: held for v in joined if v not in targets
                and (held := held_before([env.get(v) for env in envs], before)) is not None}
        return {**before, **same, **{v: self.joined_value(m) for v, m in targets.items()}}

    def after_loop(self, before: dict, targets: dict[str, Any], ran: Optional[dict] = None) -> dict[str, Any]:
        """The env after a loop entered with the env ``before``: each carried name holds its merge variable.
        ``ran``: the env at the end of the body, where the loop surely runs once (``for k in range(3)``):
        a def the body binds on every path is then bound after the loop, though the name was unbound
        before it (a call after the loop runs the last iteration's def, as Python's late binding does)."""
        for v, m in targets.items():
            if ran is None or m not in self.function_vars:
                continue
            last = ran.get(v)
            if isinstance(last, (Nested, Dispatch)):
                tags, _ = self.function_vars[m]
                self.function_vars[m] = (tags, last.missing if isinstance(last, Dispatch) else "")
        return {**before, **{v: self.joined_value(m) for v, m in targets.items()}}

    def carry(self, node: Any) -> dict[str, str]:
        """Give each loop-carried user name its merge variable, initialised before the loop.  The result of a
        return inside the loop (``desugar.py``'s), unbound before it, gets its merge variables at the end
        of the body instead (``carry_returned``): only then is its structure known (a pair, a dict)."""
        joined = self.joined(node)
        nodes = all_nodes(node)
        # An array the function made, only updated in place in the loop (b += x), is one array through
        # every iteration: it stays its own name, as b[...] = b + x leaves it, so a view of it taken before
        # the loop is taken again where it is read (lower_views), which a merge variable would hide.
        joined = [v for v in joined if not (self.owned_array(v) and only_updated_in_place(v, nodes))]
        read = set(reads_among(nodes))
        self.returned_in[node] = [v for v in joined if v in self.state.exit_results and v not in self.scope.env
                                      and v not in read]
        joined = [v for v in joined if v not in self.returned_in[node]]
        targets = self.targets(joined, [self.scope.env], loop=True)
        body_defs, body_assigned = binders(node.body)
        for v, m in targets.items():
            if isinstance(m, Record):
                continue
            defs, assigned = body_defs.get(v, []), v in body_assigned
            if defs or isinstance(self.scope.env.get(v), (Nested, Dispatch)):
                # what the body may bind, known before it is lowered: a call early in the body may run
                # a def from late in the previous iteration
                inside = [Nested(d) for d in defs] + ([ir.Const(None)] if assigned else [])
                self.join_functions(v, m, [self.scope.env.get(v)] + inside, node)
        self.merge_into(self.state.block, self.scope.env, targets, node.lineno)
        updated = updated_in_place(node.body)
        view_index = self.writes.views.view_index
        for v, m in targets.items():  # a view carried through the loop (block *= x in its body)
            start = self.scope.env.get(v)
            if v in updated and isinstance(m, str) and isinstance(start, ir.Var) and start.name in view_index:
                view_index[m] = view_index[start.name]  # checked at the end of the body
                self.writes.views.carried_views.add(m)
        self.scope.env.update({v: self.joined_value(m) for v, m in targets.items()})
        return targets

    def owned_array(self, name: str) -> bool:
        """Whether the user's ``name`` holds an array the function made (and surely no number), which
        ``name op= v`` writes in place (``UpdateLowering.augmented``)."""
        value = self.scope.env.get(name)
        return isinstance(value, ir.Var) and value.name in self.state.buffers \
            and value.name not in self.state.maybe_numbers

    def carry_returned(self, node: Any, targets: dict[str, Any], env: dict) -> None:
        """The merge variables of the results the loop ``node`` returns from its body (``carry``), from what
        they are at the body's end (``env``), added to ``targets``; each is initialised before the loop (in
        the current block, which the loop follows) to None, read only after a return has set it."""
        for v in self.returned_in.pop(node, []):
            value = env.get(v)
            if isinstance(value, Record):
                template = self.containers.template([value], True, v)
                pairs = self.containers.record_pairs(template, _never_read(value), v)
            else:
                template = self.state.names.fresh(v)
                pairs = [(template, ir.Const(None))]
            for merged, start in pairs:
                self.state.block.append(ir.Assign(merged, start, node.lineno, merge=True))
            targets[v] = template

    def check_carried_views(self, targets: dict[str, Any]) -> None:
        """A loop-carried name taken to be a view (``carry``) must be that view again at the end of
        the body (the same array by the same index), or the body read it as something it may not be."""
        for v, m in targets.items():
            if m not in self.writes.views.carried_views:
                continue
            value = self.scope.env.get(v)
            found = self.writes.views.view_index.get(value.name) if isinstance(value, ir.Var) else None
            base, index, _ = self.writes.views.view_index[m]
            if value != ir.Var(m) and (found is None or found[0] != base or found[1] is not index):
                raise self.state.refusal(f"{v}, a view of {base} carried through a loop", f"{v} is a view of "
                                         f"{base} before the loop and something else after an iteration; take the view "
                                         f"in the loop body, or use another name")


def _displays_as_records(record: Record) -> Record:
    """``record`` with each tuple or list display it holds (``{"pair": (loss, W)}``) as a record of its
    items, so that a join makes a merge variable per item and the structure stays known."""
    items = tuple(_displays_as_records(item) if isinstance(item, Record) else _displays_as_records(
        Record(item.kind, tuple if item.kind == "tuple" else list, tuple(range(len(item.items))), item.items))
        if isinstance(item, ir.Display) else item for item in record.items)
    return Record(record.kind, record.cls, record.keys, items)


def _never_read(record: Record) -> Record:
    """A container of ``record``'s structure on a path that raises before the join: its numbers and arrays
    None (never read), its structure (strings, functions, nested containers) the same."""
    items = tuple(_never_read(item) if isinstance(item, Record) else item if isinstance(item, ir.Const) and not (
        item.value is None or isinstance(item.value, (int, float)) or language.is_array_value(item.value))
        else ir.Const(None) for item in record.items)
    return Record(record.kind, record.cls, record.keys, items)


def _held_names(value: Any) -> Iterator[str]:
    """The SSA names of the arrays (or numbers) ``value`` is or holds: itself, a display's items, a
    record's items, theirs in turn (an array a dict holds is seen through the dict: a write into it is
    one into the dict's item)."""
    if isinstance(value, ir.Var):
        yield value.name
    elif isinstance(value, (Record, ir.Display)):
        for item in value.items:
            yield from _held_names(item)
