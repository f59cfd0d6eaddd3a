"""Stage 3b: move loop-invariant arithmetic on numbers out of ``for`` loops, and the reads of a
tuple's items to where the tuple is made (``hoist_item_reads``).

Input: an SSA ``ir.Function`` and its analysis (which values are numbers).
Output: the same function, and its facts, where a statement at the top level
of a ``for`` body that adds, subtracts, multiplies or negates numbers the
loop does not change (``half_dt = 0.5 * dt``) runs once, just before the
loop.  SSA names each value once, so moving its one assignment keeps every
fact about it, and the reverse sweep then adds that value's adjoint up across
the iterations and pulls it back once, after the loop.

Only operations that cannot raise on numbers are moved (no division but by
a nonzero constant, no power, no function call), because a moved statement
also runs when the loop runs no iteration.  The same operation moved twice
(``0.5 * dt`` on two lines) is computed once: the loop reads the first.
That merge changes facts: the first name is now read where the second was,
so it takes the join of both (``Analysis.with_merged``: active where either
was), and the second is gone.  Statements inside branches, and ``while``
loops, stay.
"""
from __future__ import annotations

import dataclasses
import operator
from collections import Counter
from typing import Callable, Optional

from ..core import ir
from ..rules import registry as rules
from ..analysis.facts import Analysis
from ..analysis.inference import SCALAR


def hoist_invariants(fn: ir.Function, facts: Analysis) -> tuple[ir.Function, Analysis]:
    """``fn`` with its loops' invariant arithmetic on numbers moved before them, and its facts."""
    merged = _Merged()
    body = _hoisted(fn.body, lambda expr: facts.shape_of(expr) == SCALAR, merged)
    if not merged.same:
        return dataclasses.replace(fn, body=body), facts
    return dataclasses.replace(fn, body=body), facts.with_merged(merged.same, merged.dropped)


class _Merged:
    """The repeated operations computed once: each dropped name -> the name the loop reads instead."""

    def __init__(self) -> None:
        self.same: dict[str, str] = {}
        self.dropped: list[ir.Stmt] = []


def _hoisted(body: list[ir.Stmt], is_number: Callable[[ir.Expr], bool], merged: _Merged) -> list[ir.Stmt]:
    out: list[ir.Stmt] = []
    for stmt in body:
        if isinstance(stmt, ir.For):
            inner = _hoisted(stmt.body, is_number, merged)  # innermost first: what it moves out may move further
            moved, kept = _split_invariant(stmt, inner, is_number, merged)
            out.extend(moved)
            out.append(dataclasses.replace(stmt, body=kept))
        elif isinstance(stmt, ir.If):
            out.append(dataclasses.replace(stmt, body=_hoisted(stmt.body, is_number, merged),
                                           orelse=_hoisted(stmt.orelse, is_number, merged)))
        elif isinstance(stmt, ir.While):
            out.append(dataclasses.replace(stmt, test_block=_hoisted(stmt.test_block, is_number, merged),
                                           body=_hoisted(stmt.body, is_number, merged)))
        else:
            out.append(stmt)
    return out


def _split_invariant(loop: ir.For, body: list[ir.Stmt], is_number: Callable[[ir.Expr], bool],
                     merged: _Merged) -> tuple[list[ir.Stmt], list[ir.Stmt]]:
    """The statements of ``body`` that may run once before ``loop``, and the rest; a repeated operation
    is noted in ``merged`` and dropped."""
    varying = ir.assigned_names(body) | {loop.index}
    moved: list[ir.Stmt] = []
    kept: list[ir.Stmt] = []
    first: dict[tuple, str] = {}  # each moved operation -> the name that holds it
    same: dict[str, str] = {}  # a repeated operation's name -> the first one's
    for stmt in body:
        if same:
            stmt = ir.renamed([stmt], same)[0]  # reading the first name of each repeated operation
        if (isinstance(stmt, ir.Assign) and isinstance(stmt.value, ir.Call)
                and _invariant(stmt, stmt.value, varying, is_number)):
            varying.discard(stmt.target)  # assigned only here (SSA): now fixed before the loop
            key = (stmt.value.fn, tuple(ir.value_key(a) for a in stmt.value.args))
            if key in first:
                same[stmt.target] = first[key]
                merged.same[stmt.target] = first[key]
                merged.dropped.append(stmt)
                continue
            first[key] = stmt.target
            moved.append(stmt)
        else:
            kept.append(stmt)
    return moved, kept


def _nonzero_constant(expr: ir.Expr) -> bool:
    return (isinstance(expr, ir.Const) and isinstance(expr.value, (int, float)) and not isinstance(expr.value, bool)
            and expr.value != 0)


def _invariant(stmt: ir.Assign, call: ir.Call, varying: set[str], is_number: Callable[[ir.Expr], bool]) -> bool:
    """Whether ``stmt``, assigning ``call``, may run once before the loop (see the module's docstring)."""
    if stmt.merge:
        return False
    facts = rules.facts_of(call.fn)
    divisors = facts.get("total_if_nonzero", ())  # declared in templates/: x / 2.0 cannot raise
    safe = facts.get("total_on_numbers", False) or (
        bool(divisors) and all(i < len(call.args) and _nonzero_constant(call.args[i]) for i in divisors))
    if not safe or call.kwargs or not is_number(ir.Var(stmt.target)):
        return False
    return all(ir.is_atom(arg) and is_number(arg) and not (isinstance(arg, ir.Var) and arg.name in varying)
               for arg in call.args)


def hoist_item_reads(fn: ir.Function, facts: Analysis) -> tuple[ir.Function, Analysis]:
    """``fn`` with each read ``p = t[k]`` of a tuple of known items moved to just after ``t`` is made,
    for the tuples read only that way.

    The reverse sweep gives such a tuple a tuple of adjoints, one per item, built
    where the tuple is made from its items' adjoints; it can do that only when the
    reads are in that block (an item read in an ``if`` or a loop would otherwise take
    the adjoint of a whole array, which a tuple of arrays of different shapes is not).
    A tuple is never changed, and SSA names each item once, so the moved read holds
    the same value and keeps every fact; the index is one the tuple has (the
    analysis knows the item), so the moved read cannot raise.  The facts are unchanged.
    """
    return _with_item_reads_moved(fn, facts.items, facts.uses), facts


def _with_item_reads_moved(fn: ir.Function, items: dict[str, tuple], uses: dict[str, int]) -> ir.Function:
    reads: dict[str, list[ir.Assign]] = {}
    for stmt in ir.walk(fn.body):
        if isinstance(stmt, ir.Assign):
            tuple_read = _item_read(stmt, items)
            if tuple_read is not None:
                reads.setdefault(tuple_read, []).append(stmt)
    # A tuple carried by a loop (``t = (x, y)`` before it, ``t = (t[1], t[0])`` in it) is one name with
    # two assignments, not one value: a read after the loop sees the last trip's tuple, or the first
    # one's when the loop runs no trip, so it cannot move to either assignment.
    assigned = Counter(t for stmt in ir.walk(fn.body) for t in ir.targets_of(stmt))
    movable = {t: found for t, found in reads.items()
               if len(found) == uses.get(t, 0) and assigned[t] == (0 if t in fn.params else 1)}
    if not movable:
        return fn
    moved = {s.sid for found in movable.values() for s in found}
    body = _with_item_reads(fn.body, movable, moved)
    at_entry: list[ir.Stmt] = []
    for read in (s for p in fn.params if p in movable for s in movable[p]):
        _append_with_reads(read, at_entry, movable)
    return dataclasses.replace(fn, body=at_entry + body)


def _item_read(stmt: ir.Assign, items: dict[str, tuple]) -> Optional[str]:
    """The tuple ``t`` if ``stmt`` is ``p = t[k]``: an item of a tuple whose items are known, at a constant
    index it has; else None."""
    value = stmt.value
    if not (isinstance(value, ir.Call) and value.fn is operator.getitem and not value.kwargs):
        return None
    base, index = value.args
    if (isinstance(base, ir.Var) and base.name in items and isinstance(index, ir.Const)
            and type(index.value) is int and -len(items[base.name]) <= index.value < len(items[base.name])):
        return base.name
    return None


def _with_item_reads(body: list[ir.Stmt], movable: dict[str, list[ir.Assign]], moved: set[int]) -> list[ir.Stmt]:
    out: list[ir.Stmt] = []
    for stmt in body:
        if stmt.sid in moved:
            continue
        if isinstance(stmt, ir.If):
            stmt = dataclasses.replace(stmt, body=_with_item_reads(stmt.body, movable, moved),
                                       orelse=_with_item_reads(stmt.orelse, movable, moved))
        elif isinstance(stmt, ir.For):
            stmt = dataclasses.replace(stmt, body=_with_item_reads(stmt.body, movable, moved))
        elif isinstance(stmt, ir.While):
            stmt = dataclasses.replace(stmt, test_block=_with_item_reads(stmt.test_block, movable, moved),
                                       body=_with_item_reads(stmt.body, movable, moved))
        _append_with_reads(stmt, out, movable)
    return out


def _append_with_reads(stmt: ir.Stmt, out: list[ir.Stmt], movable: dict[str, list[ir.Assign]]) -> None:
    """``stmt``, then the item reads of what it makes, then theirs (an item may be a tuple read by item)."""
    out.append(stmt)
    for target in ir.targets_of(stmt):
        if target in movable and not isinstance(stmt, ir.For):
            for read in movable[target]:
                _append_with_reads(read, out, movable)
