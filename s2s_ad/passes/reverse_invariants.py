"""A loop's arithmetic that no trip changes runs once, before the loop: a reverse loop's recomputed
values (``hoist_reverse_invariants``), and a forward loop's own (``hoist_forward_invariants``).

Input: a generated adjoint-form ``ir.Function`` (optimized), and ``is_number``, whether a name the
primal's facts know is proven a number.
Output: the same function where, at the top level of the body of a top-level ``for t in
reversed(steps)``, a statement

    ratio = -9.81 / length

whose value is arithmetic (operations declared ``arithmetic`` in templates/: ``+ - * /``, powers,
negation, ``abs``...) on constants and on names proven numbers
that nothing in the loop binds, and whose target the loop binds there alone, reads nowhere before it
in a trip and nothing after the loop names, runs once before the loop, under ``if steps:`` (joined
to the test ``carry_elements`` wrote there, if any).

Why: the reverse sweep recomputes a cheap value of the forward loop in each trip rather than record
it (``recording._cheap``); where the value is the same in every trip (``-GRAVITY / length`` in a
pendulum's step), that is one division and one global read per trip the hand-written adjoint does
not make.

Why it is the same: the names it reads are bound before the loop and not again in it, so a trip
would compute what the statement before the loop computed; the target is the loop's own local,
read only after its assignment in a trip and not after the loop.  Why the guard: the division may
raise (``length`` zero); the loop runs a trip exactly when ``steps``, a range
(``dead_element_stores.counts_down_from_nonnegative``), is not empty, and then the forward loop
computed the same quotient of the same numbers before, so the moved statement raises only where the
forward sweep had already raised.

The forward loop (a top-level ``for t in steps`` of the adjoint form, ``steps`` a range): the same
statements move, under the same guard, for the same reason (the pendulum's forward loop divides by
``length`` each trip where the hand-written one divides once).  Lowering's ``hoist_invariants`` moves
only what cannot raise, as it writes no guard; here the guard makes a division safe to move: it runs
where the loop's first trip would have run it.  After the loop the target holds what the last trip
gave it (the same value), and nothing where the loop made no trip, as before.
"""
from __future__ import annotations

import dataclasses
from typing import Callable

from ..core import ir
from ..rules import registry as rules
from .dead_element_stores import counts_down_from_nonnegative, counts_up, named


def hoist_reverse_invariants(fn: ir.Function, is_number: Callable[[str], bool]) -> ir.Function:
    """``fn`` with its top-level reverse loops' trip-invariant arithmetic moved before them (see the
    module docstring); ``fn`` itself where there is none."""
    return _hoisted(fn, is_number, reverse=True)


def hoist_forward_invariants(fn: ir.Function, is_number: Callable[[str], bool]) -> ir.Function:
    """``fn`` with its top-level forward loops' trip-invariant arithmetic moved before them, under the
    loop's test (see the module docstring); ``fn`` itself where there is none."""
    return _hoisted(fn, is_number, reverse=False)


def _hoisted(fn: ir.Function, is_number: Callable[[str], bool], reverse: bool) -> ir.Function:
    body: list[ir.Stmt] = []
    changed = False
    for position, stmt in enumerate(fn.body):
        walked = isinstance(stmt, ir.For) and (
            counts_down_from_nonnegative(fn, stmt) if reverse else counts_up(fn, stmt))
        if not walked:
            body.append(stmt)
            continue
        assert isinstance(stmt, ir.For)
        # (after a forward loop its target holds the value moved, as after the last trip: what the
        # code after it does with the name is its own; a reverse loop's local is its alone)
        after = fn.body[position + 1:] if reverse else []
        changed_in_loop = changed_in(stmt)
        moved = [s for s in stmt.body if _invariant(s, stmt, changed_in_loop, after, is_number)]
        if not moved:
            body.append(stmt)
            continue
        changed = True
        kept = [s for s in stmt.body if all(s is not m for m in moved)]
        guard = body[-1] if body else None
        if isinstance(guard, ir.If) and _tests(guard, stmt.iterable) and not guard.orelse:
            body[-1] = dataclasses.replace(guard, body=list(guard.body) + moved)
        else:
            body.append(ir.If(stmt.iterable, moved, [], moved[0].line))
        body.append(dataclasses.replace(stmt, body=kept))
    return dataclasses.replace(fn, body=body) if changed else fn


def _tests(guard: ir.If, iterable: ir.Expr) -> bool:
    return isinstance(guard.test, ir.Var) and isinstance(iterable, ir.Var) and guard.test.name == iterable.name


def changed_in(loop: ir.For) -> set[str]:
    """The names ``loop`` binds, stores into or releases in any trip."""
    changed = {loop.index} | ir.assigned_names(loop.body)
    changed |= {s.array for s in ir.walk(loop.body) if isinstance(s, ir.Store)}
    changed |= {n for s in ir.walk(loop.body) if isinstance(s, ir.Release) for n in s.names}
    return changed


def _invariant(stmt: ir.Stmt, loop: ir.For, changed_in_loop: set[str], after: list[ir.Stmt],
               is_number: Callable[[str], bool]) -> bool:
    """Whether ``stmt``, at the top level of ``loop``'s body (whose trips change ``changed_in_loop``),
    may run once before the loop."""
    if not (isinstance(stmt, ir.Assign) and arithmetic_on_numbers(stmt.value, is_number)):
        return False
    if any(name in changed_in_loop for name in ir.names_read(stmt.value)):
        return False
    target = stmt.target
    if sum(target in ir.targets_of(s) for s in ir.walk(loop.body)) != 1:
        return False
    at = next(i for i, s in enumerate(loop.body) if s is stmt)
    if any(named(s, target) for s in loop.body[:at]) or any(named(s, target) for s in after):
        return False
    return not any(isinstance(s, ir.Release) and target in s.names for s in ir.walk(after))


def arithmetic_on_numbers(expr: ir.Expr, is_number: Callable[[str], bool]) -> bool:
    if isinstance(expr, ir.Const):
        return isinstance(expr.value, (int, float)) and not isinstance(expr.value, bool)
    if isinstance(expr, ir.Var):
        return is_number(expr.name)
    return isinstance(expr, ir.Call) and not expr.kwargs and _arithmetic(expr.fn) \
        and all(arithmetic_on_numbers(a, is_number) for a in expr.args)


def _arithmetic(fn: object) -> bool:
    try:
        return bool(rules.fact(fn, "arithmetic"))
    except TypeError:  # (an unhashable callable)
        return False
