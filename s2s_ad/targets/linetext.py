"""The text of a short generated line, written directly (part of stage 6, emit).

``emit.py`` prints generated code through ``ast`` nodes and astor.  For a big
function, building those nodes and running astor's visitor for every
statement was most of the time spent printing.  Yet most generated lines are
short, made of names, numbers, operators and calls, and for those the text
astor prints is easy to state: its precedence table decides the parentheses
and nothing else varies.  ``LineText`` writes that text itself.

It gives up (returns None) on anything else: strings and complex numbers
(astor's quoting and formatting), and any line longer than astor's 79
columns, which astor would wrap.  ``emit.py`` then prints the line through
astor as before, so the output is the same character for character
(tests/targets/test_linetext.py compares the two on random expressions).

Objects generated code reads as globals are bound in the namespace in the
order ``emit._Builder`` binds them (arguments before the function called),
so the names chosen do not depend on which way a line was printed.

Which functions are written with an operator (``a + b``, ``-a``, ``b in a``,
``a[b]``) is no table of this module: each template declares its
operation's ``syntax`` (``rules.FACTS``), and ``Operators`` collects them.
"""
from __future__ import annotations

import ast
import math
import types
from dataclasses import dataclass
from typing import Any, Callable, Optional

import numpy as np
from astor.op_util import Precedence, get_op_precedence, get_op_symbol

from ..core import ir
from ..rules import registry as rules

_WIDTH = 79  # astor wraps a longer line (astor.source_repr.split_lines)
_HIGHEST = Precedence.highest  # what astor assumes where a parent does not say (a subscripted value, a callee)
_COMMA = Precedence.Comma
_CONSTANT = Precedence.Constant
_NEGATIVE = get_op_precedence(ast.USub())  # of a negative number, written -2.5


class _GiveUp(Exception):
    """Something astor prints in a way this module does not reproduce."""


@dataclass(frozen=True)
class Operators:
    """The functions generated code writes with a Python operator, from their ``syntax`` facts.

    ``binary`` (``a + b``), ``unary`` (``-a``), ``compare`` (``a < b``) and
    ``membership`` (``b in a``, for ``contains(a, b)``: Python's operands come
    the other way round) map each function to its ``ast`` operator class;
    ``subscript`` holds the functions written ``a[b]``.
    """

    binary: dict[Any, type]
    unary: dict[Any, type]
    compare: dict[Any, type]
    membership: dict[Any, type]
    subscript: frozenset


_declared: tuple[int, Optional[Operators]] = (-1, None)


def declared_operators() -> Operators:
    """The ``Operators`` templates declare, collected again only after a rule is registered: emit
    asks once per function it prints, and looks each call up in these dicts."""
    global _declared
    rules.load_templates()
    generation, operators = _declared
    if operators is None or generation != rules.generation():
        generation = rules.generation()
        forms: dict[str, dict[Any, type]] = {"binary": {}, "unary": {}, "compare": {}, "membership": {}}
        subscript = set()
        for fn in rules.declared("syntax"):
            op = rules.fact(fn, "syntax")
            if op is ast.Subscript:
                subscript.add(fn)
            elif op in (ast.In, ast.NotIn):
                forms["membership"][fn] = op
            else:
                form = ("binary" if issubclass(op, ast.operator) else "unary" if issubclass(op, ast.unaryop)
                        else "compare" if issubclass(op, ast.cmpop) else None)
                if form is None:
                    raise TypeError(f"the syntax of {fn!r} is {op!r}, not an ast operator class or ast.Subscript")
                forms[form][fn] = op
        operators = Operators(subscript=frozenset(subscript), **forms)
        _declared = (generation, operators)
    return operators


def _operators(table: dict[Any, type], form: str) -> dict[Any, tuple[str, int]]:
    """Symbol (as ``form`` spaces it) and astor precedence of each operator, by the function it calls."""
    return {fn: (get_op_symbol(op(), form), get_op_precedence(op())) for fn, op in table.items()}


class LineText:
    """Writes statements and expressions as astor would print them, or says it cannot (None).

    ``operators`` says which functions are written with an operator (emit's
    ``declared_operators()``); ``reference`` is ``Namespace.reference`` as text
    (how code names a callable), ``bind`` is ``Namespace.bind``.
    """

    def __init__(self, operators: Operators, reference: Callable[[Any], str],
                 bind: Callable[[Any, str], str]) -> None:
        self.binary = _operators(operators.binary, " %s ")
        self.powers = frozenset(fn for fn, op in operators.binary.items() if op is ast.Pow)
        self.augmented = _operators(operators.binary, " %s= ")
        self.unary = _operators(operators.unary, "%s")
        self.compare = _operators(operators.compare, " %s ")
        self.membership = _operators(operators.membership, " %s ")
        self.subscript = operators.subscript
        self.reference = reference
        self.bind = bind

    # -- entry points ----------------------------------------------------------

    def statement(self, stmt: ir.Stmt) -> Optional[str]:
        """The line of a statement without a nested block, or None."""
        try:
            return self._short(self._statement(stmt))
        except _GiveUp:
            return None

    def expression(self, e: ir.Expr) -> Optional[str]:
        """An expression printed on its own (an ``if`` test, a loop's range), or None."""
        try:
            return self._short(self.expr(e, Precedence.Expr))
        except _GiveUp:
            return None

    @staticmethod
    def _short(text: str) -> str:
        if len(text) > _WIDTH:
            raise _GiveUp
        return text

    def _statement(self, stmt: ir.Stmt) -> str:
        if isinstance(stmt, ir.Return):
            return "return " + self.expr(stmt.value, Precedence.Return)
        if isinstance(stmt, ir.Effect):
            return self.expr(stmt.value, Precedence.Expr)
        if isinstance(stmt, ir.Store):
            place = f"{stmt.array}[{self.index(stmt.index, Precedence.Subscript)}]"
            if stmt.op is None:
                return f"{place} = {self.expr(stmt.value, Precedence.Assign)}"
            return place + self.augmented[stmt.op][0] + self.expr(stmt.value, Precedence.AugAssign)
        if isinstance(stmt, ir.Unpack):
            return f"{self._tuple(list(stmt.targets), Precedence.Assign)} = {self.expr(stmt.value, Precedence.Assign)}"
        if isinstance(stmt, ir.Assign) and not (isinstance(stmt.value, ir.Display) and stmt.value.kind == "tuple"):
            return f"{stmt.target} = {self.expr(stmt.value, Precedence.Assign)}"
        raise _GiveUp  # a tuple on the right: emit keeps its parentheses (_Builder.tuple_text)

    # -- expressions: ``parent`` is the precedence astor's parent node sets ----

    def expr(self, e: ir.Expr, parent: int) -> str:
        if isinstance(e, ir.Var):
            return e.name
        if isinstance(e, ir.Const):
            return self.const(e.value, parent)
        if isinstance(e, ir.Display):
            items = [self.expr(i, _COMMA) for i in e.items]
            return self._tuple(items, parent) if e.kind == "tuple" else f"[{', '.join(items)}]"
        if isinstance(e, ir.Slice):  # outside a subscript, a slice is a slice() call
            parts = ["None" if p is None else self.expr(p, _COMMA) for p in (e.lower, e.upper, e.step)]
            return f"slice({', '.join(parts)})"
        if isinstance(e, ir.Zero):
            raise AssertionError("a symbolic zero reached emit: the generators write each as its kind's zero")
        return self.call(e, parent)

    @staticmethod
    def _tuple(items: list[str], parent: int) -> str:
        text = ", ".join(items) + ("," if len(items) == 1 else "")
        return text if items and Precedence.Tuple >= parent else f"({text})"

    @staticmethod
    def _wrap(text: str, own: int, parent: int) -> str:
        """Parentheses where astor puts them: the node binds less tightly than its parent asks."""
        return text if own >= parent else f"({text})"

    def index(self, e: ir.Expr, parent: int) -> str:
        """An index in a subscript, where ``a:b`` syntax is allowed."""
        if isinstance(e, ir.Slice):
            lower, upper, step = (None if p is None else self.expr(p, Precedence.Slice)
                                  for p in (e.lower, e.upper, e.step))
            return (lower or "") + ":" + (upper or "") + ("" if step is None else ":" + step)
        if isinstance(e, ir.Display) and e.kind == "tuple":
            return self._tuple([self.index(i, _COMMA) for i in e.items], parent)
        return self.expr(e, parent)

    def const(self, value: Any, parent: int) -> str:
        if isinstance(value, np.generic):
            value = value.item()
        if isinstance(value, float) and not math.isfinite(value):
            text = "math.nan" if math.isnan(value) else "math.inf"
            return self._negative(text, parent) if value < 0 else text
        if isinstance(value, tuple):
            return self._tuple([self.const(v, _COMMA) for v in value], parent)
        if isinstance(value, (int, float)) and not isinstance(value, bool) and math.copysign(1, value) < 0:
            return self._negative(self.const(-value, get_op_precedence(ast.USub())), parent)
        if isinstance(value, (int, float)):  # bool too, as astor treats it
            return self._wrap(repr(value), _CONSTANT, parent)
        if isinstance(value, (complex, str)):
            raise _GiveUp
        if isinstance(value, (bytes, type(None))):
            return repr(value)
        if value is Ellipsis:  # g[...] = v: the user's spelling
            return "..."
        return self.bind(value, constant_hint(value))

    def _negative(self, operand: str, parent: int) -> str:
        return self._wrap("-" + operand, _NEGATIVE, parent)

    def call(self, e: ir.Call, parent: int) -> str:
        fn = e.fn
        if fn in self.binary and len(e.args) == 2 and not e.kwargs:
            symbol, own = self.binary[fn]
            power = fn in self.powers
            left = self.expr(e.args[0], Precedence.Pow + 1 if power else own)
            right = self.expr(e.args[1], Precedence.PowRHS if power else own + 1)
            return self._wrap(left + symbol + right, own, parent)
        if fn in self.unary and len(e.args) == 1:
            symbol, own = self.unary[fn]
            operand = self.expr(e.args[0], own)
            return self._wrap(symbol + (" " if symbol.isalpha() else "") + operand, own, parent)
        if fn in self.compare and len(e.args) == 2:
            symbol, own = self.compare[fn]
            left, right = (self.expr(a, own + 1) for a in e.args)
            return self._wrap(left + symbol + right, own, parent)
        if fn in self.membership and len(e.args) == 2:  # contains(a, b) is b in a
            symbol, own = self.membership[fn]
            container, item = (self.expr(a, own + 1) for a in e.args)  # in this order: the order of binding
            return self._wrap(item + symbol + container, own, parent)
        if fn in self.subscript and len(e.args) == 2:
            return f"{self.expr(e.args[0], _HIGHEST)}[{self.index(e.args[1], Precedence.Subscript)}]"
        return self._general_call(e)

    def _general_call(self, e: ir.Call) -> str:
        e = ir.Call(e.fn, *ir.spelled_arguments(e))
        fn, args = e.fn, e.args
        method = isinstance(fn, types.MethodDescriptorType) and len(args) > 0  # list.append(tape, x): tape.append(x)
        passed = len(args) - method + len(e.kwargs)  # the arguments in the parentheses
        every = Precedence.Comma if passed > 1 else Precedence.call_one_arg
        texts = [self.expr(a, _HIGHEST if method and k == 0 else every) for k, a in enumerate(args)]
        texts += [f"{k}={self.expr(v, _COMMA)}" for k, v in e.kwargs]
        if isinstance(fn, ir.Part):  # d_helper.forward(...)
            callee = f"{self.bind(fn.owner, fn.owner.name)}.{fn.name}"
        elif method:
            callee, texts = f"{texts[0]}.{fn.__name__}", texts[1:]
        else:
            callee = self.reference(fn)
        return f"{callee}({', '.join(texts)})"


def constant_hint(value: Any) -> str:
    """The name generated code gives a constant it holds in its namespace: an exception class raised
    keeps its own name (``raise_exception(ValueError, kind)``), a module-level array the user's name
    for it (``SCALE``: ``ir.name_constant``)."""
    if isinstance(value, type) and issubclass(value, BaseException):
        return value.__name__
    if isinstance(value, types.FunctionType) and value.__name__.isidentifier():  # odeint(decay, ...): its own name
        return value.__name__
    return ir.constant_name(value) or ("array" if isinstance(value, np.ndarray) else "constant")
