# mypy: disable-error-code="no-redef"
# (a function's adjoint and tangent rules are both named after it: the second redefines the name)
"""Rules for Python's arithmetic operators (``+ - * / ** // %``, unary ``-``),
which also serve NumPy's ufuncs of the same meaning (``np.add``...).

Comparisons and ``//`` are piecewise constant: declared non-differentiable.
Each operator's ``syntax`` fact is the ``ast`` class Python writes it with:
generated code writes a call of ``operator.add`` as ``a + b`` because of it.
``identity``, ``negating``, ``opposite`` and ``involution`` are what the
optimizer may simplify (``x * 1`` is ``x``, ``a + -b`` is ``a - b``).

The helpers of ``a + b`` and ``a * n`` where tuples or lists may be
concatenated or repeated (``add_adjoint``...) are defined here, with their
own rules at the end (generated code differentiated again calls them too).
"""
from __future__ import annotations

import ast
import operator
from typing import Any

import numpy as np

from s2s_ad.rules import adjoint, declare, nondifferentiable, tangent
from s2s_ad.core.runtime import unbroadcast, zeros_like


# -- helpers: ``a + b`` and ``a * n`` where the operands may be tuples or lists --------------------
# Concatenation and repetition, not arithmetic: the adjoint of a concatenation splits, that of a
# repetition adds the copies up.  Adjoints and tangents of sequences may be sequences or arrays of
# rows; both are read row by row.  Which case holds is decided here, at run time, where the
# transformer could not prove it (sequence_helpers, below).

def _is_sequence(value: Any) -> bool:
    return isinstance(value, (list, tuple))


def _concatenates(a: Any, b: Any) -> bool:
    return (isinstance(a, list) and isinstance(b, list)) or (isinstance(a, tuple) and isinstance(b, tuple))


def _repeats(sequence: Any, count: Any) -> bool:
    return _is_sequence(sequence) and isinstance(count, (int, np.integer))


def _broadcast_number(value: Any) -> bool:
    """A number standing for a whole sequence's adjoint or tangent (a missing one: zero)."""
    return not _is_sequence(value) and np.ndim(value) == 0


def _rows(grad: Any, start: int, stop: int) -> Any:
    """``grad[start:stop]``, a copy where ``grad`` is an array."""
    if _broadcast_number(grad):  # one number for every row (a missing tangent: zeros)
        return np.full(stop - start, grad, dtype=np.result_type(grad, 1.0))
    part = grad[start:stop]
    return np.array(part) if isinstance(part, np.ndarray) else part


def _repeated_sum(grad: Any, like: Any, count: int) -> Any:
    """The adjoint of ``like * count``: the ``count`` copies' parts of ``grad`` added up."""
    n = len(like)
    if count <= 0 or n == 0:
        return zeros_like(like)
    if _broadcast_number(grad):
        return np.full(n, grad * count, dtype=np.result_type(grad, 1.0))
    if isinstance(grad, np.ndarray):
        return np.sum(np.reshape(grad, (count, n) + grad.shape[1:]), axis=0)
    return tuple(sum((grad[k * n + i] for k in range(1, count)), grad[i]) for i in range(n))


def add_adjoint(grad: Any, a: Any, b: Any) -> tuple:
    """The adjoints of ``a`` and ``b`` in ``a + b``: concatenation splits ``grad``, arithmetic unbroadcasts."""
    if _concatenates(a, b):
        return _rows(grad, 0, len(a)), _rows(grad, len(a), len(a) + len(b))
    return unbroadcast(grad, a), unbroadcast(grad, b)


def mul_adjoint(grad: Any, a: Any, b: Any) -> tuple:
    """The adjoints of ``a`` and ``b`` in ``a * b``: a repetition adds the copies up (an integer
    count has no derivative); arithmetic is the product rule, unbroadcast."""
    if _repeats(a, b):
        return _repeated_sum(grad, a, int(b)), 0.0
    if _repeats(b, a):
        return 0.0, _repeated_sum(grad, b, int(a))
    return unbroadcast(grad * b, a), unbroadcast(grad * a, b)


def mul_adjoint_cross(grad: Any, a: Any, b: Any, tangent_a: Any, tangent_b: Any) -> tuple:
    """``mul_adjoint``'s change as ``a`` and ``b`` move along their tangents (zero for a repetition).

    With ``pair_sum`` this closes the rules under differentiation: every
    order of derivative of ``a * b`` is made of these helpers again."""
    if _repeats(a, b) or _repeats(b, a):
        return 0.0, 0.0
    return unbroadcast(grad * tangent_b, a), unbroadcast(grad * tangent_a, b)


def pair_sum(p: tuple, q: tuple) -> tuple:
    """Two pairs of adjoints added item by item (sequences' adjoints row by row); a missing tangent
    (a plain 0 where a pair would be) adds nothing."""
    if not isinstance(q, (tuple, list)):
        return p
    if not isinstance(p, (tuple, list)):
        return q
    return tangent_sum(p[0], q[0]), tangent_sum(p[1], q[1])


def _as_sequence(tangent: Any, like: Any) -> Any:
    """A tangent read as a sequence of the primal's type (tuple or list)."""
    return type(like)(_item(tangent, i) for i in range(len(like)))


def _item(value: Any, i: int) -> Any:
    return value[i] if _is_sequence(value) or np.ndim(value) > 0 else value


def tangent_sum(x: Any, y: Any) -> Any:
    """``x + y`` for tangents or adjoints, which add item by item where they are sequences."""
    if _is_sequence(x) or _is_sequence(y):
        like = x if _is_sequence(x) else y
        return type(like)(_item(x, i) + _item(y, i) for i in range(len(like)))
    return x + y


def add_tangent(tangent_a: Any, tangent_b: Any, a: Any, b: Any) -> Any:
    """The tangent of ``a + b``: the tangents concatenated, or added."""
    if _concatenates(a, b):
        return _as_sequence(tangent_a, a) + _as_sequence(tangent_b, b)
    return tangent_a + tangent_b


def mul_tangent(tangent_a: Any, tangent_b: Any, a: Any, b: Any) -> Any:
    """The tangent of ``a * b``: the tangent repeated, or the product rule."""
    if _repeats(a, b):
        return _as_sequence(tangent_a, a) * int(b)
    if _repeats(b, a):
        return int(a) * _as_sequence(tangent_b, b)
    return tangent_a * b + a * tangent_b


def mul_tangent_cross(tangent_a: Any, tangent_b: Any, second_a: Any, second_b: Any, a: Any, b: Any) -> Any:
    """``mul_tangent``'s change as ``a`` and ``b`` move along ``second_a`` and ``second_b`` (zero for
    a repetition, whose tangent does not depend on the sequence's contents)."""
    if _repeats(a, b) or _repeats(b, a):
        return 0.0
    return tangent_a * second_b + second_a * tangent_b


nondifferentiable(
    operator.lt, operator.le, operator.gt, operator.ge, operator.eq, operator.ne, operator.floordiv,
    operator.and_, operator.or_, operator.xor, operator.invert,  # masks: (x > 0) & ~(x > 2)
    elementwise=True, cheap=True, foldable=True, reusable=True,
)
declare(operator.floordiv, arithmetic=True, words=("div", "quot"))
declare(operator.lt, operator.le, operator.gt, operator.ge, operator.eq, operator.ne, compares=True)
nondifferentiable(operator.not_, operator.is_, operator.is_not, operator.contains)
declare(operator.not_, cheap=True)
declare(operator.not_, operator.is_, operator.is_not, operator.contains, compares=True)  # truth values
# How Python writes them (the differentiable operators say so with their rules below).
declare(operator.floordiv, syntax=ast.FloorDiv)
declare(operator.and_, syntax=ast.BitAnd)
declare(operator.or_, syntax=ast.BitOr)
declare(operator.xor, syntax=ast.BitXor)
declare(operator.invert, syntax=ast.Invert)
declare(operator.not_, syntax=ast.Not)
declare(operator.lt, syntax=ast.Lt)
declare(operator.le, syntax=ast.LtE)
declare(operator.gt, syntax=ast.Gt)
declare(operator.ge, syntax=ast.GtE)
declare(operator.eq, syntax=ast.Eq)
declare(operator.ne, syntax=ast.NotEq)
declare(operator.is_, syntax=ast.Is)
declare(operator.is_not, syntax=ast.IsNot)
declare(operator.contains, syntax=ast.In)  # contains(a, b) is b in a
# Iteration: what loops are lowered to (lower.py turns every for loop into one over a range).
nondifferentiable(range, len)


@adjoint(np.add, elementwise=True, sum="+")
@adjoint(operator.add, elementwise=True,
         joins_sequences=True, arithmetic=True, cheap=True, foldable=True, total_on_numbers=True, reusable=True,
         sum="+", words=("plus", "total"), syntax=ast.Add, identity=(0, (0, 1)), opposite=operator.sub,
         sequence_helpers=(add_adjoint, add_tangent))
def add(out, x, y, d_out):
    d_x = d_out
    d_y = d_out


@adjoint(np.subtract, elementwise=True, sum="-")
@adjoint(operator.sub, elementwise=True,
         arithmetic=True, cheap=True, foldable=True, total_on_numbers=True, reusable=True, sum="-",
         words=("minus", "diff"), syntax=ast.Sub, identity=(0, (1,)), opposite=operator.add)
def sub(out, x, y, d_out):
    d_x = d_out
    d_y = -d_out


@adjoint(np.multiply, elementwise=True, factors=(0, 1))
@adjoint(operator.mul, elementwise=True,
         joins_sequences=True, arithmetic=True, cheap=True, factors=(0, 1), foldable=True, total_on_numbers=True,
         reusable=True, words=("times", "prod"), syntax=ast.Mult, identity=(1, (0, 1)), negating=(-1, (0,)),
         sequence_helpers=(mul_adjoint, mul_tangent))
def mul(out, x, y, d_out):
    d_x = d_out * y
    d_y = d_out * x


@adjoint(np.divide, elementwise=True, factors=(0,))
@adjoint(operator.truediv, elementwise=True,
         arithmetic=True, cheap=True, factors=(0,), foldable=True, reusable=True, words=("over", "ratio"),
         syntax=ast.Div, identity=(1, (1,)), total_if_nonzero=(1,))
def truediv(out, x, y, d_out):
    d_x = d_out / y
    d_y = -d_out * out / y


@adjoint(np.power, elementwise=True)
@adjoint(operator.pow, elementwise=True,
         arithmetic=True, cheap=True, foldable=True, reusable=True, words=("pow", "power"), syntax=ast.Pow,
         identity=(1, (1,)))
def pow(out, x, y, d_out):
    d_x = d_out * y * x ** (y - 1 + (y == 0))  # x ** 0 is constant: derivative 0, also at x = 0
    d_y = d_out * out * np.log(x + (x == 0))  # 0 ** y has derivative 0 in y: out is 0 there (as JAX)


@adjoint(operator.mod, elementwise=True,
         arithmetic=True, cheap=True, foldable=True, reusable=True, words=("mod", "rem"), syntax=ast.Mod)
def mod(out, x, y, d_out):
    d_x = d_out
    d_y = -d_out * np.floor(x / y)


@adjoint(np.negative, elementwise=True, factors=(0,))
@adjoint(operator.neg, elementwise=True,
         arithmetic=True, cheap=True, factors=(0,), foldable=True, total_on_numbers=True, reusable=True,
         syntax=ast.USub, involution=True)
def neg(out, x, d_out):
    d_x = -d_out


@adjoint(operator.pos, elementwise=True,
         arithmetic=True, cheap=True, foldable=True, total_on_numbers=True, reusable=True, syntax=ast.UAdd)
def pos(out, x, d_out):
    d_x = d_out


# Their results on arrays are computed element by element: an operand spread over the result's shape
# (np.full) may enter as the 0-d array of its value (fills.py folds a reduction's spread adjoint so).
declare(operator.add, operator.sub, operator.mul, operator.truediv, operator.neg, fill_operand=True)
# (x s)(y t) is xy st, (x s)/(y t) is x/y s/t, -(x + c) is -x - c: how scales and shifts pass through
# them (shift_invariance.py; + and - say it with sum=)
declare(operator.mul, np.multiply, shift="product")
declare(operator.mul, np.multiply, linear_in=(0, 1))
declare(operator.truediv, np.divide, operator.neg, np.negative, linear_in=(0,))
declare(operator.truediv, np.divide, shift="quotient")
declare(operator.neg, np.negative, shift="negation")
# On Python floats these may raise or give a complex number where NumPy's float64 gives inf or NaN, other
# than by dividing by zero: (-8.0) ** (1 / 3) is complex, 10.0 ** 400 raises OverflowError.
declare(operator.pow, operator.floordiv, operator.mod, pow, divmod, python_floats_differ=True)
# ... and by dividing by zero: 1.0 / 0.0 raises ZeroDivisionError where NumPy's float64 gives inf
declare(operator.truediv, zero_divisor_raises=True)


@tangent(operator.add, elementwise=True)
def add(out, x, y, t_x, t_y):
    t_out = t_x + t_y


@tangent(operator.sub, elementwise=True)
def sub(out, x, y, t_x, t_y):
    t_out = t_x - t_y


@tangent(operator.mul, elementwise=True)
def mul(out, x, y, t_x, t_y):
    t_out = t_x * y + x * t_y


@tangent(operator.truediv, elementwise=True)
def truediv(out, x, y, t_x, t_y):
    t_out = (t_x - out * t_y) / y


@tangent(operator.pow, elementwise=True)
def pow(out, x, y, t_x, t_y):
    t_out = t_x * y * x ** (y - 1 + (y == 0)) + t_y * out * np.log(x + (x == 0))


@tangent(operator.neg, elementwise=True)
def neg(out, x, t_x):
    t_out = -t_x


@tangent(operator.pos, elementwise=True)
def pos(out, x, t_x):
    t_out = t_x


# -- the rules of the helpers above ---------------------------------------------------------------
# ``a + b`` and ``a * b`` that may concatenate or repeat tuples and lists (decided at run time).  The
# operands enter add_adjoint and add_tangent only by their lengths and shapes; products are bilinear, and
# their tangents are made of the same helpers again (so every order of derivative has its rules).
_PAIR = {"grad": (3,), "a": (3,), "b": (3,)}


@tangent(add_adjoint, examples=({"grad": (3,), "a": np.zeros(3), "b": np.zeros(3)},
                               {"grad": (2, 3), "a": np.zeros((2, 3)), "b": np.zeros((2, 3))}))
def add_adjoint_rule(out, grad, a, b, t_grad):
    t_out = add_adjoint(t_grad, a, b)


declare(add_adjoint, shape_only=(1, 2))  # the operands tell concatenation from arithmetic by their lengths and shapes


@tangent(mul_adjoint, examples=(_PAIR, {"grad": (2, 3), "a": (2, 3), "b": (2, 3)}))
def mul_adjoint_rule(out, grad, a, b, t_grad, t_a, t_b):
    t_out = pair_sum(mul_adjoint(t_grad, a, b), mul_adjoint_cross(grad, a, b, t_a, t_b))


@tangent(mul_adjoint_cross, examples=(dict(_PAIR, tangent_a=(3,), tangent_b=(3,)),))
def mul_adjoint_cross_rule(out, grad, a, b, tangent_a, tangent_b, t_grad, t_tangent_a, t_tangent_b):
    t_out = pair_sum(mul_adjoint_cross(t_grad, a, b, tangent_a, tangent_b),
                     mul_adjoint_cross(grad, a, b, t_tangent_a, t_tangent_b))


@tangent(pair_sum, examples=({"p": [(3,), (3,)], "q": [(3,), (3,)]},))
def pair_sum_rule(out, p, q, t_p, t_q):
    t_out = pair_sum(t_p, t_q)


@tangent(tangent_sum, examples=({"x": (3,), "y": (3,)},))
def tangent_sum_rule(out, x, y, t_x, t_y):
    t_out = tangent_sum(t_x, t_y)


@tangent(add_tangent, examples=({"tangent_a": (3,), "tangent_b": (3,), "a": np.zeros(3), "b": np.zeros(3)},))
def add_tangent_rule(out, tangent_a, tangent_b, a, b, t_tangent_a, t_tangent_b):
    t_out = add_tangent(t_tangent_a, t_tangent_b, a, b)


@tangent(mul_tangent, examples=({"tangent_a": (3,), "tangent_b": (3,), "a": (3,), "b": (3,)},))
def mul_tangent_rule(out, tangent_a, tangent_b, a, b, t_tangent_a, t_tangent_b, t_a, t_b):
    t_out = tangent_sum(mul_tangent(t_tangent_a, t_tangent_b, a, b), mul_tangent_cross(tangent_a, tangent_b, t_a, t_b, a, b))


@tangent(mul_tangent_cross, examples=({"tangent_a": (3,), "tangent_b": (3,), "second_a": (3,), "second_b": (3,),
                                       "a": np.zeros(3), "b": np.zeros(3)},))
def mul_tangent_cross_rule(out, tangent_a, tangent_b, second_a, second_b, a, b, t_tangent_a, t_tangent_b,
                           t_second_a, t_second_b):
    t_out = tangent_sum(mul_tangent_cross(t_tangent_a, t_tangent_b, second_a, second_b, a, b),
                        mul_tangent_cross(tangent_a, tangent_b, t_second_a, t_second_b, a, b))
# Inputs the helpers read for their shape, their length or their sorting order only: a varied
# argument there carries no derivative (any other input without one is refused where it varies).
# What they hand back (view, may_view, returns_sequence) is checked against NumPy
# (tests/rules/test_rule_facts_against_numpy.py): generated code that writes into it copies first.
declare(mul_adjoint_cross, add_tangent, mul_tangent_cross, zero_derivative=("a", "b"))
declare(add_adjoint, may_view=True)  # pieces of its first argument
declare(add_adjoint, mul_adjoint, mul_adjoint_cross, pair_sum, returns_sequence=True)
