"""linetext.py writes short lines itself; they must be exactly what astor prints.

Random IR expressions and statements are printed both ways, each with a
namespace of its own: the text must match, and so must the globals bound
(the same objects under the same names, in the same order).
"""
import pytest
import ast
import math
import operator
from types import SimpleNamespace

import numpy as np
from hypothesis import example, given, settings
from hypothesis import strategies as st

from s2s_ad.core import ir
from s2s_ad.core import runtime
from s2s_ad.targets.emit import Namespace, _Builder

_NAMES = st.sampled_from(["x", "y", "d_x", "t_out", "tape"])
_ARRAYS = (np.arange(3.0), np.ones(2))  # two, to see which one binds first as "array"
_OWNER = SimpleNamespace(name="d_helper")
_CONSTANTS = st.one_of(
    st.integers(-3, 3), st.sampled_from([0.5, -0.5, -0.0, 1e-300, 2.5e20, math.inf, -math.inf, math.nan, True,
                                         None, Ellipsis, b"b", (1, -2), (), np.float64(-1.5), *_ARRAYS, 10 ** 80,
                                         "s", 1j]),  # (these two given up on: astor's quoting and formatting)
)
_BINARY = st.sampled_from([operator.add, operator.sub, operator.mul, operator.truediv, operator.floordiv,
                           operator.mod, operator.pow, operator.matmul, operator.lt, operator.eq, operator.is_not,
                           operator.contains, operator.getitem])
_UNARY = st.sampled_from([operator.neg, operator.pos, operator.not_])
_CALLED = st.sampled_from([np.sin, np.sum, abs, max, list.append, runtime.unbroadcast, ir.Part(_OWNER, "forward"),
                           operator.add, operator.neg])  # the last two with other arities: printed as calls


def _atoms() -> st.SearchStrategy:
    return st.one_of(_NAMES.map(ir.Var), _CONSTANTS.map(ir.Const))


def _compound(children: st.SearchStrategy) -> st.SearchStrategy:
    optional = st.one_of(st.none(), children)
    return st.one_of(
        st.builds(lambda fn, a, b: ir.Call(fn, (a, b)), _BINARY, children, children),
        st.builds(lambda fn, a: ir.Call(fn, (a,)), _UNARY, children),
        st.builds(lambda fn, args, kwargs: ir.Call(fn, tuple(args), tuple(kwargs)), _CALLED,
                  st.lists(children, min_size=0, max_size=3),
                  st.lists(st.tuples(st.sampled_from(["axis", "keepdims"]), children), max_size=1)),
        st.builds(lambda kind, items: ir.Display(kind, tuple(items)), st.sampled_from(["tuple", "list"]),
                  st.lists(children, max_size=3)),
        st.builds(ir.Slice, optional, optional, optional),
    )


_EXPRESSIONS = st.recursive(_atoms(), _compound, max_leaves=8)
_STATEMENTS = st.one_of(
    st.builds(ir.Assign, _NAMES, _EXPRESSIONS),
    st.builds(ir.Return, _EXPRESSIONS),
    st.builds(ir.Effect, _EXPRESSIONS),
    st.builds(lambda a, i, v, op: ir.Store(a, i, v, op=op), _NAMES, _EXPRESSIONS, _EXPRESSIONS,
              st.sampled_from([None, operator.add, operator.mul])),
    st.builds(lambda names, v: ir.Unpack(tuple(names), v), st.lists(_NAMES, min_size=1, max_size=3), _EXPRESSIONS),
)


def _by_astor(builder: _Builder) -> _Builder:
    builder.lines = SimpleNamespace(statement=lambda stmt: None, expression=lambda e: None)
    return builder


def _bound(builder: _Builder) -> list:
    return [(name, id(value)) for name, value in builder.ns.globals.items()]


@pytest.mark.slow
@settings(max_examples=600, deadline=None)
@given(_EXPRESSIONS)
@example(ir.Call(operator.contains, tuple(map(ir.Const, _ARRAYS))))  # printed b in a, bound a first
def test_expressions_print_as_astor_prints_them(expr):
    written, printed = _Builder(Namespace()), _by_astor(_Builder(Namespace()))
    text = written.lines.expression(expr)
    if text is not None:
        assert text == printed.source(ast.Expr(value=printed.expr(expr))).strip()
        assert _bound(written) == _bound(printed)


@pytest.mark.slow
@settings(max_examples=600, deadline=None)
@given(_STATEMENTS)
def test_statements_print_as_astor_prints_them(stmt):
    written, printed = _Builder(Namespace()), _by_astor(_Builder(Namespace()))
    text = written.lines.statement(stmt)
    if text is not None:
        assert text == printed.simple(stmt)
        assert _bound(written) == _bound(printed)


def test_most_lines_are_written_directly():
    builder = _Builder(Namespace())
    line = ir.Assign("a1", ir.Call(operator.add, (ir.Call(operator.mul, (ir.Call(math.sin, (ir.Var("a0"),)),
                                                                        ir.Const(0.5))), ir.Const(-0.25))))
    assert builder.lines.statement(line) == "a1 = math.sin(a0) * 0.5 + -0.25"
    assert builder.lines.statement(ir.Assign("s", ir.Const("text"))) is None  # astor quotes strings
    long = ir.Call(np.sum, tuple(ir.Var(f"value_{k}") for k in range(10)))
    assert builder.lines.expression(long) is None  # astor wraps lines over 79 columns
