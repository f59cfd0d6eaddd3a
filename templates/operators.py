"""Rules for Python's arithmetic operators (``+ - * / ** // %``, unary ``-``),
which also serve NumPy's ufuncs of the same meaning (``np.add``...).

Comparisons and ``//`` are piecewise constant: declared non-differentiable.
Each operator's ``syntax`` fact is the ``ast`` class Python writes it with:
generated code writes a call of ``operator.add`` as ``a + b`` because of it.
``identity``, ``negating``, ``opposite`` and ``involution`` are what the
optimizer may simplify (``x * 1`` is ``x``, ``a + -b`` is ``a - b``).
"""
import ast
import operator

import numpy as np

from s2s_ad.rules import adjoint, declare, nondifferentiable, tangent
from s2s_ad.runtime import add_adjoint, add_tangent, mul_adjoint, mul_tangent

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

