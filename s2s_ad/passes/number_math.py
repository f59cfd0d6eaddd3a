"""The Python target's reverse loops: an adjoint times ``np.sin`` or ``np.cos`` of a number, written with
the function's ``on_a_number`` (``core.number_functions``: ``math``'s speed on floats).

Input: a generated adjoint-form or split-part ``ir.Function`` for the NumPy target, the identities of
the primal's statements and the names the primal's facts know, with the rank of each.
Output: the same function where a statement the generator wrote (not the user's) in a reverse loop
assigns

    d_x = d_out * np.cos(x)          (or -d_out * np.cos(x), np.cos(x) * d_out, d_x + d_out * np.cos(x))

with ``x`` a value of the primal proven a number (rank 0), ``d_out`` and ``d_x`` the generator's own
names (an adjoint) and ``np.cos`` a function declared ``on_a_number`` (templates/): ``d_x = d_out *
cos_of_number(x, d_out)`` (``d_x + d_out * cos_of_number(x, d_out, d_x)``): the adjoints beside it
decide at run time whether ``math``'s Python float may meet them (not a float32: NEP 50 would round the
product to float32 where NumPy's float64 made it float64).

Why only there: ``cos_of_number`` hands back a Python float where NumPy gave its float64, and the two
differ where Python raises: a Python float divided by zero raises ``ZeroDivisionError`` where NumPy
gives an infinity.  A product with an adjoint is an adjoint, and adjoints are never divided by (a
rule's adjoint is linear in ``d_out``), so the float only meets products and sums.  The user's own
statements, run again in the reverse sweep or not, keep NumPy's functions; so does a value the
generator recomputes (recomputed values are arithmetic and indexing only: ``recording._cheap``).  Only
in reverse loops, where an adjoint kept a Python float saves work each trip: elsewhere one call costs
too little to change the type the code gives (a gradient may then be a Python float where it was
NumPy's float64, to a few ulps).
"""
from __future__ import annotations

import dataclasses
import operator
from typing import Callable, Optional

from ..core import ir
from ..rules import registry as rules


def math_on_numbers(fn: ir.Function, primal: frozenset[int], known: set[str],
                    is_number: Callable[[str], bool]) -> ir.Function:
    """``fn`` with its reverse loops' adjoint products of the form above written with ``on_a_number``;
    ``primal`` holds the user's statements' identities, ``known`` the names the primal's facts know,
    ``is_number`` whether one of those is proven a number."""
    changed = False

    def in_loop(stmt: ir.Stmt) -> ir.Stmt:
        nonlocal changed
        if stmt.sid in primal or not isinstance(stmt, ir.Assign) or stmt.target in known:
            return stmt
        value = _by_number(stmt.value, known, is_number)
        if value is None:
            return stmt
        changed = True
        return dataclasses.replace(stmt, value=value)

    def outside(stmt: ir.Stmt) -> ir.Stmt:
        if isinstance(stmt, ir.For) and stmt.reverse:
            return dataclasses.replace(stmt, body=ir.statements_rebuilt(stmt.body, in_loop))
        return stmt

    body = ir.statements_rebuilt(list(fn.body), outside)
    return dataclasses.replace(fn, body=body) if changed else fn


def _by_number(value: ir.Expr, known: set[str], is_number: Callable[[str], bool],
               addend: Optional[ir.Expr] = None) -> Optional[ir.Call]:
    """``value``, a product of an adjoint and ``np.cos(x)`` of a number ``x`` (or an adjoint plus such a
    product), with the number's function, handed the adjoint it multiplies and the one the product is
    added to (their types decide: ``number_functions``); None where it is no such product."""
    if isinstance(value, ir.Call) and value.fn is operator.add and len(value.args) == 2 and not value.kwargs:
        for i in (0, 1):
            other = value.args[1 - i]
            product = _by_number(value.args[i], known, is_number, _unnegated(other)) \
                if _adjoint(other, known) else None
            if product is not None:
                return ir.Call(operator.add, (product, value.args[1]) if i == 0 else (value.args[0], product))
        return None
    if not (isinstance(value, ir.Call) and value.fn is operator.mul and len(value.args) == 2 and not value.kwargs):
        return None
    args = list(value.args)
    for i, (factor, other) in enumerate(((args[0], args[1]), (args[1], args[0]))):
        if not _adjoint(other, known):
            continue
        beside = (_unnegated(other),) + ((addend,) if addend is not None else ())
        replacement = _function_of_number(factor, known, is_number, beside)
        if replacement is not None:
            args[i] = replacement
            return ir.Call(operator.mul, tuple(args))
    return None


def _function_of_number(expr: ir.Expr, known: set[str], is_number: Callable[[str], bool],
                        beside: tuple[ir.Expr, ...]) -> Optional[ir.Call]:
    if not (isinstance(expr, ir.Call) and len(expr.args) == 1 and not expr.kwargs):
        return None
    on_a_number = rules.fact(expr.fn, "on_a_number")
    argument = expr.args[0]
    if on_a_number is None or not isinstance(argument, ir.Var) or argument.name not in known \
            or not is_number(argument.name):
        return None
    return ir.Call(on_a_number, (argument,) + beside)


def _unnegated(expr: ir.Expr) -> ir.Expr:
    """An adjoint without its negation (``-d_out``: ``d_out``, of the same type)."""
    if isinstance(expr, ir.Call) and expr.fn is operator.neg and len(expr.args) == 1:
        return expr.args[0]
    return expr


def _adjoint(expr: ir.Expr, known: set[str]) -> bool:
    """A name of the generator's (an adjoint: no fact of the primal's knows it), or its negation."""
    if isinstance(expr, ir.Call) and expr.fn is operator.neg and len(expr.args) == 1:
        expr = expr.args[0]
    return isinstance(expr, ir.Var) and expr.name not in known
