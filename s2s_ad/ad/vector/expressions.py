"""Vector mode's expressions: a tangent statement's value with the directions on a leading axis.

Input: an expression of a tangent statement and the function's ``Facts``.  Output: ``Expressions.expr``
gives the expression whose value is, direction by direction on its leading axis, what the one-direction
code's value was (an ``ir.Expr``, its logical rank, and whether it carries the direction axis), or
raises ``NotVector`` (a number's tangent for one direction at a time is ``numbers.py``'s).  The rules,
each exact, every other form refused:

* a sum, difference or negation of tangents, and a product or quotient of one tangent by primal values
  (``operator`` and NumPy's ufuncs); ``np.where`` of a primal condition: elementwise, where NumPy aligns
  trailing axes, a tangent of lower rank than the result is first given axes after the direction axis
  (``t[:, None]``), so the direction axis never meets a primal axis;
* an index of integers, slices and ``None`` (``t[i, 1:]`` as ``t[:, i, 1:]``);
* ``np.sum`` and ``np.mean`` (of every axis, or of one constant axis), ``@`` and ``np.dot`` of a tangent and
  a primal vector or matrix, ``np.outer`` of vectors, ``np.trace`` of a matrix, ``np.cumsum`` of a vector,
  ``np.copy``; those that move data between axes (reshapes, transposes, rolls, joins): ``axes.py``;
* the runtime's and the templates' helpers forward mode writes: ``writable_copy``, ``if_inexact``,
  ``unbroadcast``, ``add_tangent`` of arrays or numbers, ``matmul_grad_a``/``matmul_grad_b`` of vectors and
  matrices (each direction's helper, spelled for all directions at once: ``core/directions.py``).
"""
from __future__ import annotations

import dataclasses
import operator
from typing import Callable, Optional

import numpy as np

from ...core import directions as per_direction, ir, runtime
from .axes import AxisForms
from .facts import (MATMULS, PRODUCTS, QUOTIENTS, SIGNS, SUMS, Facts, NotVector, helper, name_of,
                    product_adjoints, reads, shown)
from .values import ALL, Value

class Expressions(AxisForms):
    """The vector forms of a tangent function's expressions (see the module docstring).  ``copies``: a
    read that picks a number from an array a store may write into is copied (``np.copy(t[:, i])``): the
    one-direction code held a number, which a later write does not change, where the column is a view
    (not needed where every number's tangent is held in a buffer of its own, ``statements.py``)."""

    def __init__(self, facts: Facts, copies: bool) -> None:
        self.facts = facts
        self.copies = copies

    def expr(self, e: ir.Expr) -> Value:
        facts = self.facts
        if isinstance(e, ir.Var):
            return Value(e, facts.rank_of_name(e.name), e.name in facts.tangents)
        if isinstance(e, ir.Const):
            return Value(e, facts.rank_of(e), False)
        if not isinstance(e, ir.Call):
            raise NotVector(f"{shown(e)} in a tangent's value")
        if not (reads(e) & facts.tangents):
            return Value(e, facts.rank_of(e), False)
        form = self._form_of(e)
        if form is None:
            raise NotVector(f"{name_of(e.fn)} of a tangent")
        return form(e)

    def _form_of(self, e: ir.Call) -> Optional[Callable[[ir.Call], Value]]:
        """The rule for a call that reads a tangent, or None."""
        fn, arity, keywords = e.fn, len(e.args), bool(e.kwargs)
        if fn in SUMS or fn in SIGNS:
            return None if keywords else self.linear
        if fn in PRODUCTS or fn in QUOTIENTS:
            return None if keywords else self.scaled
        if fn is np.where and arity == 3 and not keywords:
            return self.choice
        if fn is operator.getitem and arity == 2:
            return self.index
        if fn is np.sum or fn is np.mean:
            return self.reduction
        if fn in MATMULS and arity == 2 and not keywords:
            return self.matmul
        if (fn is np.copy or fn is np.asarray) and arity == 1 and not keywords:  # (a new array, or itself, in both)
            return lambda e: self._same(e, self.expr(e.args[0]))
        if fn is np.reshape or fn is np.ravel:
            return self.reshape
        if fn is np.roll or fn is np.expand_dims:
            return self.along_axis
        if fn is np.concatenate or fn is np.stack:
            return self.joined
        if keywords:
            return None
        if fn is np.transpose and arity in (1, 2):
            return self.transpose
        if fn is np.outer and arity == 2:
            return self.outer
        if (fn is np.trace or fn is np.cumsum) and arity == 1:
            return self.per_direction
        if fn is runtime.writable_copy and arity == 2:
            return self.copy
        if fn is runtime.if_inexact and arity == 2:  # (the tangent, or its zeros: by the primal's dtype)
            return lambda e: self._same(e, self.expr(e.args[0]), self._primal(e.args[1]))
        if fn is runtime.unbroadcast and arity == 2:
            return self.unbroadcast
        if fn in product_adjoints() and arity == 3:
            return self.product_adjoint
        if fn is helper("add_tangent") and arity == 4 and None not in map(self.facts.rank_of, e.args[2:]):
            # (of two arrays or numbers, as the ranks of a and b prove: the tangents added; of sequences, joined)
            return lambda e: self.elementwise(operator.add, [self.expr(a) for a in e.args[:2]])
        return None

    def _same(self, e: ir.Call, first: Value, *rest: ir.Expr) -> Value:
        """``e`` with its first argument rewritten: a call that keeps its rank and direction axis."""
        return Value(ir.Call(e.fn, (first.expr,) + tuple(rest)), first.rank, first.directed)

    def _primal(self, e: ir.Expr) -> ir.Expr:
        if reads(e) & self.facts.tangents:
            raise NotVector(f"a primal argument reads a tangent ({shown(e)})")
        return e

    def linear(self, e: ir.Call) -> Value:
        return self.elementwise(e.fn, [self.expr(a) for a in e.args])

    def scaled(self, e: ir.Call) -> Value:
        operands = [self.expr(a) for a in e.args]
        if sum(o.directed for o in operands) != 1 or (e.fn in QUOTIENTS and not operands[0].directed):
            raise NotVector(f"{name_of(e.fn)} not linear in the tangents")
        return self.elementwise(e.fn, operands)

    def choice(self, e: ir.Call) -> Value:
        self._primal(e.args[0])
        return self.elementwise(e.fn, [self.expr(a) for a in e.args])

    def elementwise(self, fn: object, operands: list[Value]) -> Value:
        ranks = [o.rank for o in operands]
        if any(r is None for r in ranks):
            raise NotVector(f"{name_of(fn)} of operands of unknown rank")
        result = max(r for r in ranks if r is not None)
        args = tuple(self.lifted(o, result).expr if o.directed else o.expr for o in operands)
        return Value(ir.Call(fn, args), result, True)

    def lifted(self, value: Value, to: int) -> Value:
        """``value`` (directed) with axes of length one after the direction axis up to logical rank ``to``."""
        assert value.rank is not None
        if value.rank >= to:
            return value
        key = ir.Display("tuple", (ALL,) + (ir.Const(None),) * (to - value.rank))
        return Value(ir.Call(operator.getitem, (value.expr, key)), to, True)

    def index(self, e: ir.Call) -> Value:
        array = self.expr(e.args[0])
        self._primal(e.args[1])
        if not array.directed:
            raise NotVector("an index of a primal by a tangent")
        key, picked = self.key(e.args[1], array.rank)
        assert array.rank is not None
        result = array.rank - picked
        read: ir.Expr = ir.Call(operator.getitem, (array.expr, key))
        if result == 0 and self.copies and self.facts.may_change(e.args[0]):
            read = ir.Call(np.copy, (read,))  # (a number in the one-direction code: not a view of the column)
        return Value(read, result, True)

    def key(self, index: ir.Expr, array_rank: Optional[int]) -> tuple[ir.Expr, int]:
        """The key of the data (the direction axis first) and how many axes the logical key picks."""
        items, picked = self.facts.key_parts(index, array_rank)
        return ir.Display("tuple", (ALL,) + items), picked

    def reduction(self, e: ir.Call) -> Value:
        """``np.sum`` or ``np.mean`` of a tangent over every axis or one constant axis (``keepdims`` off)."""
        operand = self.expr(e.args[0])
        if not operand.directed or operand.rank is None:
            raise NotVector(f"{name_of(e.fn)} of a tangent of unknown rank")
        keywords = dict(e.kwargs)
        keep = keywords.pop("keepdims", ir.Const(False))
        axis = e.args[1] if len(e.args) == 2 else keywords.pop("axis", None) if len(e.args) == 1 else None
        if len(e.args) > 2 or keywords or not (isinstance(keep, ir.Const) and keep.value is False):
            raise NotVector(f"{name_of(e.fn)} with more than an axis")
        if operand.rank == 0:  # (of a number: the number)
            return operand
        if axis is None or isinstance(axis, ir.Const) and axis.value is None:
            whole = per_direction.direction_sum if e.fn is np.sum else per_direction.direction_mean
            return Value(ir.Call(whole, (operand.expr,)), 0, True)
        if not (isinstance(axis, ir.Const) and isinstance(axis.value, int) and not isinstance(axis.value, bool)
                and -operand.rank <= axis.value < operand.rank):
            raise NotVector(f"{name_of(e.fn)} over an axis that is not one constant")
        moved = axis.value % operand.rank + 1
        return Value(ir.Call(e.fn, (operand.expr,), (("axis", ir.Const(moved)),)), operand.rank - 1, True)

    def outer(self, e: ir.Call) -> Value:
        return self.outer_of(self.expr(e.args[0]), self.expr(e.args[1]))

    def outer_of(self, a: Value, b: Value) -> Value:
        """``np.outer`` of a tangent vector and a primal vector: a column times a row, per direction."""
        if a.directed == b.directed or a.rank != 1 or b.rank != 1:
            raise NotVector("np.outer of two tangents, or of what is not a vector")
        if a.directed:  # (each direction's column: a new axis after the vector's, not before as a lift's)
            column = ir.Call(operator.getitem, (a.expr, ir.Display("tuple", (ALL, ALL, ir.Const(None)))))
            return self.elementwise(operator.mul, [Value(column, 2, True), b])
        column = ir.Call(operator.getitem, (a.expr, ir.Display("tuple", (ALL, ir.Const(None)))))
        return self.elementwise(operator.mul, [Value(column, 2, False), self.lifted(b, 2)])

    def per_direction(self, e: ir.Call) -> Value:
        """``np.trace`` of a matrix's tangent, ``np.cumsum`` of a vector's: each direction's
        (``per_direction.direction_trace``, ``direction_cumsum``)."""
        operand = self.expr(e.args[0])
        want, helper_fn, rank = (2, per_direction.direction_trace, 0) if e.fn is np.trace else \
            (1, per_direction.direction_cumsum, 1)
        if not operand.directed or operand.rank != want:
            raise NotVector(f"{name_of(e.fn)} of a tangent of rank {operand.rank}")
        return Value(ir.Call(helper_fn, (operand.expr,)), rank, True)

    def _of_primal_rank(self, e: ir.Call, what: str) -> tuple[Value, int]:
        """A helper's tangent (its first argument) and the rank of its primal ``like`` (its second)."""
        tangent = self.expr(e.args[0])
        like = self.facts.rank_of(self._primal(e.args[1]))
        if not tangent.directed or like is None or tangent.rank is None or tangent.rank > like:
            raise NotVector(f"{what} of a tangent of unknown rank")
        return self.lifted(tangent, like), like

    def unbroadcast(self, e: ir.Call) -> Value:
        """``unbroadcast(t, like)``: each direction's tangent summed to ``like``'s shape."""
        tangent, like = self._of_primal_rank(e, "unbroadcast")
        return Value(ir.Call(per_direction.direction_unbroadcast, (tangent.expr, e.args[1])), like, True)

    def copy(self, e: ir.Call) -> Value:
        """``writable_copy(t, like)``: a fresh array per direction, shaped like the primal ``like``; where ``t``
        is arithmetic's result, a new array no name holds, itself when so shaped (``direction_kept``)."""
        tangent, like = self._of_primal_rank(e, "writable_copy")
        value = e.args[0]
        fresh = isinstance(value, ir.Call) and (value.fn in SUMS or value.fn in SIGNS or value.fn in PRODUCTS
                                                or value.fn in QUOTIENTS)
        copied = per_direction.direction_kept if fresh else per_direction.direction_copy
        return Value(ir.Call(copied, (tangent.expr, e.args[1])), like, True)

    def product_adjoint(self, e: ir.Call) -> Value:
        """``matmul_grad_a(g, a, b)`` (``dot_grad_a``), shaped as ``a``: ``outer(g, b)``, ``g * b`` or ``b @ g``;
        ``matmul_grad_b(g, a, b)``, shaped as ``b``: ``a.T @ g``, ``g * a`` or ``outer(a, g)``; of vectors and
        matrices (a stack refused).  Each is linear in ``g`` and in the operand it multiplies, either of
        which may be the tangent; the third operand gives only its shape."""
        for_a = e.fn in product_adjoints()[::2]
        g, a, b = (self.expr(x) for x in e.args)
        shaped_by = a if for_a else b  # (its value is not read: only its rank)
        if shaped_by.directed or g.directed == (b if for_a else a).directed or \
                (a.rank, b.rank) not in ((2, 1), (1, 1), (1, 2)):
            raise NotVector(f"{name_of(e.fn)} of ranks {a.rank} and {b.rank}, or by a tangent of its shape")
        if for_a:
            if (a.rank, b.rank) == (2, 1):
                return self.outer_of(g, b)
            return self.elementwise(operator.mul, [g, b]) if a.rank == 1 and b.rank == 1 else self.product_of(b, g)
        if (a.rank, b.rank) == (2, 1):
            return self.product_of(g, a)  # (a.T @ g: g @ a)
        return self.elementwise(operator.mul, [g, a]) if b.rank == 1 else self.outer_of(a, g)

    def matmul(self, e: ir.Call) -> Value:
        a, b = (self.expr(x) for x in e.args)
        if e.fn is np.dot and a.rank is not None and b.rank is not None and max(a.rank, b.rank) > 2:
            raise NotVector("np.dot of a stack of matrices")
        return self.product_of(a, b)

    def product_of(self, a: Value, b: Value) -> Value:
        """``a @ b`` (or ``np.dot``, the same below three axes), one of them a tangent: each direction's
        product.  A tangent vector times a matrix is one product of the directions' rows (``T @ M.T`` for
        ``M @ t``); a tangent of more axes runs a product per direction (``direction_matmul``)."""
        if a.directed == b.directed:
            raise NotVector("a product of two tangents, or of no tangent")
        if a.rank is None or b.rank is None or a.rank == 0 or b.rank == 0:
            raise NotVector("@ of a number, or of operands of unknown rank")
        result = max(a.rank, b.rank) if min(a.rank, b.rank) >= 2 else a.rank + b.rank - 2
        tangent, other = (a, b) if a.directed else (b, a)
        assert tangent.rank is not None and other.rank is not None
        if other.rank > 2:  # (its leading axes would meet the directions')
            raise NotVector("@ of a tangent and a stack of matrices")
        if tangent.rank == 1:
            if a.directed or other.rank == 1:  # t @ M, t @ v, v @ t: the rows of the data times the primal
                return Value(ir.Call(operator.matmul, (tangent.expr, other.expr)), result, True)
            transposed = ir.Call(np.transpose, (other.expr,))  # M @ t: (t @ M.T) per direction
            return Value(ir.Call(operator.matmul, (tangent.expr, transposed)), result, True)
        multiplied = per_direction.direction_matmul if a.directed else per_direction.matmul_direction
        return Value(ir.Call(multiplied, (a.expr, b.expr)), result, True)
