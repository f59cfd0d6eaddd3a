"""A reverse loop's sum of products by a factor no trip changes: the products summed first, then
multiplied once, after the loop (``sum_before_factors``).

Input: a generated adjoint-form ``ir.Function`` (optimized; after ``hoist_reverse_invariants``), and
``is_number``, whether a name the primal's facts know is proven a number.
Output: the same function where, at the top level of the body of a top-level ``for t in
reversed(steps)``, a statement adding into an adjoint only it names in the loop,

    d_length = d_length + -d_ratio * ratio / length

whose added term is one value that changes in the loop (``d_ratio``) negated, multiplied or divided by
arithmetic on numbers that no trip changes (``ratio``, ``length``), adds that value alone,

    d_ratio_summed = d_ratio_summed + d_ratio       (d_ratio_summed = 0.0 before the loop)

and after the loop, under ``if steps:``, the sum is multiplied once:
``d_length = d_length + -d_ratio_summed * ratio / length``.

Why: the reverse sweep of a time-stepping loop whose step reads a parameter through a value computed
before the loop (the pendulum's ``-9.81 / length``) adds the parameter's adjoint each trip, a
negation, a product and a quotient the trip need not make: the chain rule's factor is the same in
every trip.  What it changes: the sum of the products becomes the product of the sum, equal but for
rounding (as ``preaccumulate``'s factoring, and a hand-written adjoint's choice either way).  Why the
guard: the factor's names may be bound only where the loop runs (``hoist_reverse_invariants`` binds
them under ``if steps:``); where it runs no trip the sum is zero and the adjoint stays as it was.
"""
from __future__ import annotations

import dataclasses
import operator
from typing import Callable, Optional

from ..core import ir
from ..rules import registry as rules
from .dead_element_stores import counts_down_from_nonnegative, named
from .reverse_invariants import arithmetic_on_numbers, changed_in

# A term linear in one varying value: that value, and how the term is made again of another
Linear = tuple[ir.Expr, Callable[[ir.Expr], ir.Expr]]


def sum_before_factors(fn: ir.Function, is_number: Callable[[str], bool]) -> ir.Function:
    """``fn`` with its top-level reverse loops' sums of products by trip-invariant factors summed
    first and multiplied once after the loop (see the module docstring); ``fn`` itself where none."""
    taken = {t for stmt in ir.walk(fn.body) for t in ir.targets_of(stmt)} | set(fn.params)
    body: list[ir.Stmt] = []
    changed = False
    for stmt in fn.body:
        if not (isinstance(stmt, ir.For) and counts_down_from_nonnegative(fn, stmt)):
            body.append(stmt)
            continue
        before, loop, after = _factored(stmt, is_number, taken)
        changed = changed or loop is not stmt
        body.extend(before + [loop] + after)
    return dataclasses.replace(fn, body=body) if changed else fn


def _factored(loop: ir.For, is_number: Callable[[str], bool], taken: set[str]
              ) -> tuple[list[ir.Stmt], ir.For, list[ir.Stmt]]:
    """The statements to put before ``loop``, the loop, and those to put after it."""
    varying = changed_in(loop)

    def invariant(expr: ir.Expr) -> bool:
        return arithmetic_on_numbers(expr, is_number) and not any(n in varying for n in ir.names_read(expr))

    before: list[ir.Stmt] = []
    after: list[ir.Stmt] = []
    body = list(loop.body)
    for position, stmt in enumerate(loop.body):
        found = _sum_of_products(stmt, body, invariant)
        if found is None:
            continue
        target, (value, remade) = found
        summed = ir.fresh_name(f"{value.name}_summed" if isinstance(value, ir.Var) else "summed", taken)
        before.append(ir.Assign(summed, ir.Const(0.0), stmt.line))
        body[position] = ir.Assign(summed, ir.Call(operator.add, (ir.Var(summed), value)), stmt.line)
        after.append(ir.Assign(target, ir.Call(operator.add, (ir.Var(target), remade(ir.Var(summed)))), stmt.line))
    if not after:
        return [], loop, []
    return before, dataclasses.replace(loop, body=body), [ir.If(loop.iterable, after, [], after[0].line)]


def _sum_of_products(stmt: ir.Stmt, body: list[ir.Stmt], invariant: Callable[[ir.Expr], bool]
                     ) -> Optional[tuple[str, Linear]]:
    """``(a, (v, remade))`` for ``stmt`` ``a = a + term`` (or ``term + a``), ``a`` named by no other
    statement of ``body``, ``term`` linear in one varying value ``v`` with at least one factor."""
    if not (isinstance(stmt, ir.Assign) and isinstance(stmt.value, ir.Call) and stmt.value.fn is operator.add
            and len(stmt.value.args) == 2 and not stmt.value.kwargs):
        return None
    target = stmt.target
    left, right = stmt.value.args
    term = right if left == ir.Var(target) else left if right == ir.Var(target) else None
    if term is None or target in ir.names_read(term):
        return None
    if any(named(other, target) for other in body if other is not stmt):
        return None
    linear = _linear(term, invariant)
    if linear is None or linear[0] is term:  # (no factor: nothing to save)
        return None
    return target, linear


def _linear(term: ir.Expr, invariant: Callable[[ir.Expr], bool]) -> Optional[Linear]:
    """The one varying value ``term`` is negated, multiplied or divided by invariant factors of, and how
    ``term`` is made of another value in its place; None where ``term`` varies in no value or otherwise."""
    if invariant(term):
        return None
    if not isinstance(term, ir.Call) or term.kwargs:
        return term, lambda value: value
    args = term.args
    linear_in = rules.fact(term.fn, "linear_in", ()) if rules.fact(term.fn, "arithmetic") else ()
    # (linear in the one argument that varies, every other invariant: a quotient varies in its numerator)
    varying = [k for k, arg in enumerate(args) if not invariant(arg)]
    if len(varying) == 1 and varying[0] in linear_in:
        inner = _linear(args[varying[0]], invariant)
        return None if inner is None else (inner[0], _remade_with(term, varying[0], inner[1]))
    return term, lambda value: value


def _remade_with(term: ir.Call, position: int, remade: Callable[[ir.Expr], ir.Expr]) -> Callable[[ir.Expr], ir.Expr]:
    def made(value: ir.Expr) -> ir.Expr:
        args = list(term.args)
        args[position] = remade(value)
        return dataclasses.replace(term, args=tuple(args))
    return made
