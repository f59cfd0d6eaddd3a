"""A number's tangent for one direction: the body of vector mode's loop over the directions.

Input: the value of an assignment to a number's tangent (``statements.py`` holds each in a buffer of
``p`` numbers) and the function's ``Facts``.  Output: ``scalar_form`` gives the value for the one
direction ``d``, each number's tangent read as ``t[d]``, an element of a tangent array as ``t[d, i]``,
primal calls in it computed once before the loop (``hoist`` binds each); or None where the value holds
anything else (an array's tangent, a call with no elementwise form), and the statement is then written
for all directions at once (``expressions.py``).  Only operations that act on each direction alone:
sums, differences, signs, products and quotients by primal numbers, ``if_inexact``, ``add_tangent`` of
numbers.
"""
from __future__ import annotations

import operator
from typing import Callable, Optional

from ...core import ir, runtime
from .facts import PRODUCTS, QUOTIENTS, SIGNS, SUMS, Facts, NotVector, helper, reads


class OneDirection:
    """``scalar_form`` of the values of one function (see the module docstring)."""

    def __init__(self, facts: Facts) -> None:
        self.facts = facts

    def scalar_form(self, e: ir.Expr, d: ir.Var, hoist: Callable[[ir.Expr], ir.Var]) -> Optional[ir.Expr]:
        """``e``, a number's tangent, for the one direction ``d``: each number's tangent read as ``t[d]``
        (``numbers``: its buffer), an element of a tangent array as ``t[d, i]``; a primal call computed
        once before the loop over the directions (``hoist`` binds it); None where ``e`` holds anything
        else (an array's tangent, a call with no elementwise form)."""
        facts = self.facts
        if isinstance(e, ir.Const):
            return e if facts.rank_of(e) == 0 else None
        if isinstance(e, ir.Var):
            if facts.rank_of_name(e.name) != 0:
                return None
            return ir.Call(operator.getitem, (e, d)) if e.name in facts.tangents else e
        if not isinstance(e, ir.Call) or e.kwargs:
            return None
        if not (reads(e) & facts.tangents):
            return hoist(e) if facts.rank_of(e) == 0 else None
        if e.fn is operator.getitem and len(e.args) == 2 and isinstance(e.args[0], ir.Var):
            try:
                items, picked = facts.key_parts(e.args[1], facts.rank_of_name(e.args[0].name))
            except NotVector:
                return None
            if picked != facts.rank_of_name(e.args[0].name) or reads(e.args[1]) & facts.tangents \
                    or not all(isinstance(i, (ir.Var, ir.Const)) for i in items):
                return None
            return ir.Call(operator.getitem, (e.args[0], ir.Display("tuple", (d,) + items)))
        if e.fn in SUMS or e.fn in SIGNS or e.fn in PRODUCTS or e.fn in QUOTIENTS:
            moved = [bool(reads(a) & facts.tangents) for a in e.args]
            if (e.fn in PRODUCTS and sum(moved) != 1) or (e.fn in QUOTIENTS and moved != [True, False]):
                return None
            fn = e.fn
        elif e.fn is runtime.if_inexact and len(e.args) == 2:
            return self._scalar_call(e.fn, (e.args[0],), (e.args[1],), d, hoist)
        elif e.fn is helper("add_tangent") and len(e.args) == 4 and all(facts.rank_of(a) == 0 for a in e.args[2:]):
            return self._scalar_call(operator.add, e.args[:2], (), d, hoist)
        else:
            return None
        return self._scalar_call(fn, e.args, (), d, hoist)

    def _scalar_call(self, fn: object, args: tuple[ir.Expr, ...], primal: tuple[ir.Expr, ...], d: ir.Var,
                     hoist: Callable[[ir.Expr], ir.Var]) -> Optional[ir.Expr]:
        forms = [self.scalar_form(a, d, hoist) for a in args]
        if any(f is None for f in forms):
            return None
        return ir.Call(fn, tuple(f for f in forms if f is not None) + tuple(self.primal(p) for p in primal))

    def primal(self, e: ir.Expr) -> ir.Expr:
        if reads(e) & self.facts.tangents:
            raise NotVector("a primal argument reads a tangent")
        return e
