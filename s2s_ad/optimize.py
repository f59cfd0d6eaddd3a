"""Stage 5: tidy generated IR without changing what it computes.

Input: an ``ir.Function`` in adjoint (or tangent) form whose first
``primal_count`` statements are the user's primal statements.  Output: the
same function with

* algebraic simplification of generated expressions (``x * 1`` → ``x``,
  ``x ** 1`` → ``x``, ``a + -b`` → ``a - b``, ``--a`` → ``a``) and constant
  folding of pure calls on constants (``2 - 1`` → ``1``,
  ``math.log(math.e)`` → ``1.0``).  The user's own statements are left as
  written: a rewrite there could change a dtype.
* dead statements removed (values nothing reads).

Every rewrite keeps shapes: ``0 * x`` is *not* folded to ``0``.
"""
from __future__ import annotations

import math
import operator
import types
from typing import Any, Optional

import numpy as np

from . import ir

_FOLDABLE_MODULES = (math, np)
_FOLDABLE = {
    operator.add, operator.sub, operator.mul, operator.truediv, operator.pow, operator.neg,
    operator.pos, operator.floordiv, operator.mod,
}


def _foldable(fn: Any) -> bool:
    if fn in _FOLDABLE:
        return True
    module = getattr(fn, "__module__", None) or ""
    if isinstance(fn, (types.BuiltinFunctionType, np.ufunc)) and (module in ("math", "numpy") or isinstance(fn, np.ufunc)):
        return True
    return False


def _fold(call: ir.Call) -> Optional[ir.Expr]:
    values = [a.value for a in call.args if isinstance(a, ir.Const)]
    if call.kwargs or len(values) != len(call.args) or not _foldable(call.fn):
        return None
    if not all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in values):
        return None
    try:
        result = call.fn(*values)
    except (ArithmeticError, ValueError):
        return None
    if isinstance(result, np.generic):
        result = result.item()
    return ir.Const(result)


def simplify_expr(expr: ir.Expr) -> ir.Expr:
    return ir.transform(expr, _simplify_node)


def _simplify_node(expr: ir.Expr) -> Optional[ir.Expr]:
    if not isinstance(expr, ir.Call):
        return None
    folded = _fold(expr)
    if folded is not None:
        return folded
    fn, args = expr.fn, expr.args
    if fn is operator.mul:
        if ir.is_const(args[1], 1):
            return args[0]
        if ir.is_const(args[0], 1):
            return args[1]
        if ir.is_const(args[0], -1):
            return ir.Call(operator.neg, (args[1],))
    if fn in (operator.truediv, operator.pow) and ir.is_const(args[1], 1):
        return args[0]
    if fn is operator.add:
        if ir.is_const(args[1], 0):
            return args[0]
        if ir.is_const(args[0], 0):
            return args[1]
        if _is_neg(args[1]):
            return ir.Call(operator.sub, (args[0], args[1].args[0]))
    if fn is operator.sub:
        if ir.is_const(args[1], 0):
            return args[0]
        if _is_neg(args[1]):
            return ir.Call(operator.add, (args[0], args[1].args[0]))
    if fn is operator.neg and _is_neg(args[0]):
        return args[0].args[0]
    return None


def _is_neg(expr: ir.Expr) -> bool:
    return isinstance(expr, ir.Call) and expr.fn is operator.neg


def remove_dead(body: list[ir.Stmt]) -> list[ir.Stmt]:
    """Drop assignments whose value is never read (walking backwards)."""
    live: set[str] = set()
    kept: list[ir.Stmt] = []
    for stmt in reversed(body):
        if isinstance(stmt, ir.Assign) and stmt.target not in live:
            continue
        if isinstance(stmt, ir.Assign):
            live.discard(stmt.target)
        live.update(ir.names_read(stmt.value))
        kept.append(stmt)
    kept.reverse()
    return kept


def optimize(fn: ir.Function, primal_count: int) -> ir.Function:
    body = list(fn.body[:primal_count])
    for stmt in fn.body[primal_count:]:
        if isinstance(stmt, ir.Assign):
            body.append(ir.Assign(stmt.target, simplify_expr(stmt.value), stmt.line))
        else:
            body.append(ir.Return(simplify_expr(stmt.value), stmt.line))
    return ir.Function(fn.name, fn.params, remove_dead(body), fn.filename, fn.firstline, fn.docstring,
                       dict(fn.constants))
