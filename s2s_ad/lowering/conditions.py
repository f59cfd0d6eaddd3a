"""Tests in user code (comparisons, ``and``/``or``, conditional expressions) → IR, or the
``Choice`` that stands for them.

A part of ``expressions.ExpressionConverter`` (``conversion.ConverterPart``).  Input: a gast
``Compare``, ``BoolOp`` or ``IfExp`` and the converter's scope.  Output: a constant where the test
is known while lowering (strings, None, booleans: ``config.kind == "tanh"``, ``scale is None``, a
key in a dict record, a name in a tuple of strings, membership in a module-level table); an
``ir.Call`` of the comparison's operator (``in`` as ``operator.contains``); a ``Choice`` for
``and``, ``or``, a conditional expression and a chained comparison (``a < b <= c`` is ``a < b and
b <= c``, ``b`` evaluated once: ``Once``), which ``lower.py`` flattens into branches.  In a rule
template, which is straight-line code, a ``Choice`` is refused.
"""
from __future__ import annotations

import operator
from typing import Any

import gast
from ..core import ir
from ..frontend.conversion import Choice, Converter, ConverterPart, Once, Record
from ..frontend.static_names import StaticNames

COMPARISONS = {
    gast.Lt: operator.lt, gast.LtE: operator.le, gast.Gt: operator.gt, gast.GtE: operator.ge,
    gast.Eq: operator.eq, gast.NotEq: operator.ne, gast.Is: operator.is_, gast.IsNot: operator.is_not,
}


class ConditionConverter(ConverterPart):
    """Converts comparisons, ``and``/``or`` and conditional expressions."""

    def __init__(self, host: Converter, statics: StaticNames) -> None:
        super().__init__(host)
        self.statics = statics

    def compare(self, node: gast.Compare) -> Any:
        """``a < b <= c`` is ``a < b and b <= c`` with ``b`` evaluated once, ``c`` only if ``a < b``."""
        if len(node.ops) == 1:
            known = self.statics.membership(node.ops[0], node.left, node.comparators[0])
            if known is not None:
                return known
        operands = [self.convert(node.left)] + [self.convert(c) for c in node.comparators]
        if len(operands) == 2:
            return self._comparison(node.ops[0], operands[0], operands[1])
        shared = [operands[0]] + [v if ir.is_atom(v) else Once(v) for v in operands[1:-1]] + [operands[-1]]
        links = [self._comparison(op, a, b) for op, a, b in zip(node.ops, shared, shared[1:])]
        result = links[-1]
        for link in reversed(links[:-1]):
            result = self._make_choice(link, result, None, node)
        return result

    def _comparison(self, op_node: Any, left: Any, right: Any) -> ir.Expr:
        op = type(op_node)
        if op in (gast.In, gast.NotIn) and isinstance(right, Record) and right.kind == "dict" \
                and isinstance(left, ir.Const):
            inside = any(type(k) is type(left.value) and k == left.value for k in right.keys)
            return ir.Const(inside if op is gast.In else not inside)
        if op in (gast.Is, gast.IsNot) and isinstance(left, ir.Const) and isinstance(right, ir.Const) \
                and (left.value is None or right.value is None):
            # scale is None where a helper was passed a number (3.0): known while lowering, so the code
            # never holds ``3.0 is None`` (a SyntaxWarning where it is compiled) and keeps one branch
            return ir.Const((left.value is right.value) == (op is gast.Is))
        if isinstance(left, ir.Const) and isinstance(right, ir.Const) and all(
                isinstance(v, (str, type(None), bool)) for v in (left.value, right.value)):
            # structure, not data (config.activation == "tanh", cfg.extra is None): known while lowering
            if op in COMPARISONS:
                return ir.Const(bool(COMPARISONS[op](left.value, right.value)))
            if isinstance(left.value, str) and isinstance(right.value, str):
                return ir.Const((left.value in right.value) == (op is gast.In))
        if op in (gast.In, gast.NotIn) and isinstance(left, ir.Const) and isinstance(left.value, (str, type(None))):
            items = right.items if isinstance(right, ir.Display) else \
                tuple(map(ir.Const, right.value)) if isinstance(right, ir.Const) and type(right.value) is tuple else None
            if items is not None and all(isinstance(i, ir.Const) and isinstance(i.value, (str, type(None)))
                                         for i in items):  # kind in ("l1", "huber"): structure too
                return ir.Const(any(isinstance(i, ir.Const) and i.value == left.value for i in items) == (op is gast.In))
        if op is gast.In:
            return ir.Call(operator.contains, (right, left))
        if op is gast.NotIn:
            return ir.Call(operator.not_, (ir.Call(operator.contains, (right, left)),))
        return ir.Call(COMPARISONS[op], (left, right))

    def if_exp(self, node: gast.IfExp) -> Any:
        test = self.convert(node.test)
        if isinstance(test, ir.Const) and _decided(test.value):  # (other.v if isinstance(other, Vec) else other)
            return self.convert(node.body if test.value else node.orelse)  # only the branch Python runs
        return self._make_choice(test, self.convert(node.body), self.convert(node.orelse), node)

    def bool_op(self, node: gast.BoolOp) -> Any:
        values = []
        for v in node.values:  # a value known while transforming ends the chain where Python's ends
            values.append(self.convert(v))
            last = values[-1]
            if isinstance(last, ir.Const) and _decided(last.value) and bool(last.value) != isinstance(node.op, gast.And):
                break
        result = values[-1]
        for value in reversed(values[:-1]):
            if isinstance(node.op, gast.And):
                result = self._make_choice(value, result, None, node)
            else:
                result = self._make_choice(value, None, result, node)
        return result

    def _make_choice(self, test: Any, then: Any, orelse: Any, node: Any) -> Any:
        if not self.check_calls:  # a rule template: straight-line expressions only
            raise self.error("a conditional expression in a rule", "write the rule with np.where", node)
        return Choice(test, then, orelse)


def _decided(value: Any) -> bool:
    """Whether a test's constant ``value`` decides a branch while transforming (a bool, None, a number,
    a string: never an array, whose truth Python asks of its items)."""
    return type(value) in (bool, int, float, str, type(None))
