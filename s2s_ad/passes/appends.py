"""Lists changed in place: ``items.append(item)``, ``list_set(items, index, item)`` where no one can see
the list as it was.

Input: a generated ``ir.Function`` whose appends are ``new = list_append(items, item)`` and whose item
writes ``new = list_with(items, index, item)`` (lowering's form: a new list per change), after the
passes before it.  Output: the same function where the memory model for lists
(``memory.lists.appends_in_place``) proves that no name read later can hold the list as it was, the
change written in place, ``items.append(item)`` or ``list_set(items, index, item)``; then
``new = items``, or, where the next statement is the loop's merge ``items = new`` and nothing else
reads ``new``, neither.

Why: a new list per append copies the whole list each time, quadratic in its length (a loop of
30,000 appends took a second in its gradient, and its tangent code as long), and Numba cannot type
an empty list handed to a function (``list_append([], x)``), so such a loop fell back to Python
under ``backend="numba"``; Numba types ``items = []`` by the appends made to it.  Only for code
that runs: code read back by the transformer (``target.SOURCE``) keeps lowering's form.
"""
from __future__ import annotations

import dataclasses
from typing import Optional

from ..core import ir, runtime
from ..memory.lists import appends_in_place, one_list_at_a_time


def grow_lists_in_place(fn: ir.Function) -> ir.Function:
    """``fn`` with the appends the memory model allows written in place (see the module docstring)."""
    grown = appends_in_place(fn)
    if not grown:
        return fn
    reads = _read_counts(fn.body)
    fn = dataclasses.replace(fn, body=_rewritten(fn.body, grown, reads, {}))
    for family in one_list_at_a_time(fn):
        fn = dataclasses.replace(fn, body=_one_name(fn.body, family))
    return fn


def _one_name(body: list[ir.Stmt], family: frozenset[str]) -> list[ir.Stmt]:
    """``body`` with the names of ``family`` (one list at a time) one name, the first bound, and the
    copies between them left out: Numba types a list by the appends made to its one name."""
    first = next(t for s in ir.walk(body) for t in ir.targets_of(s) if t in family)
    mapping = {name: first for name in family if name != first}
    return _without_self_copies(ir.renamed(_targets_renamed(body, mapping), mapping))


def _targets_renamed(body: list[ir.Stmt], mapping: dict[str, str]) -> list[ir.Stmt]:
    """``body`` with the assignments to a name of ``mapping`` assigning its replacement."""
    def renamed(stmt: ir.Stmt) -> ir.Stmt:
        if isinstance(stmt, ir.Assign) and stmt.target in mapping:
            return dataclasses.replace(stmt, target=mapping[stmt.target])
        return stmt
    return ir.statements_rebuilt(body, renamed)


def _without_self_copies(body: list[ir.Stmt]) -> list[ir.Stmt]:
    return [ir.with_blocks(s, _without_self_copies) for s in body
            if not (isinstance(s, ir.Assign) and s.value == ir.Var(s.target))]


def _read_counts(body: list[ir.Stmt]) -> dict[str, int]:
    counts: dict[str, int] = {}
    for stmt in ir.walk(body):
        for expr in ir.exprs_of(stmt):
            for name in ir.names_read(expr):
                counts[name] = counts.get(name, 0) + 1
    return counts


def _rewritten(body: list[ir.Stmt], grown: frozenset[int], reads: dict[str, int],
               done: dict[int, ir.Stmt]) -> list[ir.Stmt]:
    """``body`` with the appends ``grown`` written in place; ``done``: the statements rebuilt so far, by
    identity (a statement found in two places, a checkpointed loop's run again, is rebuilt once)."""
    out: list[ir.Stmt] = []
    dropped: set[int] = set()  # merges ``items = new`` left out: ``items`` is the grown list already
    for i, stmt in enumerate(body):
        if i in dropped:
            continue
        if stmt.sid not in grown:
            if stmt.sid not in done:
                done[stmt.sid] = ir.with_blocks(stmt, lambda block: _rewritten(block, grown, reads, done))
            out.append(done[stmt.sid])
            continue
        assert isinstance(stmt, ir.Assign) and isinstance(stmt.value, ir.Call)
        items = stmt.value.args[0]
        assert isinstance(items, ir.Var)
        if stmt.value.fn is runtime.list_with:  # items[index] = item
            out.append(ir.Effect(ir.Call(runtime.list_set, stmt.value.args), stmt.line))
        else:
            out.append(ir.Effect(ir.Call(list.append, stmt.value.args), stmt.line))
        merge = _merge_back(body, i, items.name, stmt.target) if reads.get(stmt.target, 0) == 1 else None
        if merge is None:
            out.append(done.setdefault(stmt.sid, dataclasses.replace(stmt, value=items)))
        else:
            dropped.add(merge)
    return out


def _merge_back(body: list[ir.Stmt], at: int, items: str, new: str) -> Optional[int]:
    """The position of ``items = new`` after ``body[at]`` in ``body``, where no statement between binds
    either name (so both still hold the one list grown): the copy and the merge say nothing then."""
    for j in range(at + 1, len(body)):
        stmt = body[j]
        if isinstance(stmt, ir.Assign) and stmt.target == items and stmt.value == ir.Var(new):
            return j
        if {items, new} & {t for s in ir.walk([stmt]) for t in ir.targets_of(s)}:
            return None
    return None
