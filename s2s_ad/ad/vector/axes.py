"""Vector mode's forms of operations that move a tangent's data between axes: ``np.reshape``/``np.ravel``,
``np.transpose``, ``np.roll``, ``np.expand_dims``, ``np.concatenate``/``np.stack``.

Input: a call of one of them on a tangent (its operands rewritten by ``Expressions.expr``, whose base this
is).  Output: the call for every direction at once, the direction axis kept first: an axis ``k`` the
one-direction code names becomes ``k + 1`` of the data (a negative one, counting from the end, stays);
or ``NotVector`` where the axis is not one constant, or the operation has options.
"""
from __future__ import annotations

from typing import Optional

import numpy as np

from ...core import directions as per_direction, ir
from .facts import Facts, NotVector, name_of
from .values import Value


class AxisForms:
    """The rules of this module, for ``Expressions`` (which gives ``expr``, ``_primal`` and ``facts``)."""

    facts: Facts

    def expr(self, e: ir.Expr) -> Value:
        raise NotImplementedError

    def _primal(self, e: ir.Expr) -> ir.Expr:
        raise NotImplementedError

    def reshape(self, e: ir.Call) -> Value:
        """``np.reshape(t, shape)`` or ``np.ravel(t)`` of a tangent no store writes into: each direction's
        rows reshaped (a copy where the directions' data is not contiguous, which only a write through
        the one-direction code's view could tell apart, and there is none)."""
        operand = self.expr(e.args[0])
        if e.kwargs or not isinstance(e.args[0], ir.Var) or self.facts.may_change(e.args[0]):
            raise NotVector(f"{name_of(e.fn)} of a tangent a store may write into")
        if e.fn is np.ravel and len(e.args) == 1:
            shape: ir.Expr = ir.Display("tuple", (ir.Const(-1),))
        elif e.fn is np.reshape and len(e.args) == 2:
            shape = self._primal(e.args[1])
            if isinstance(shape, ir.Const) and isinstance(shape.value, tuple):
                shape = ir.Display("tuple", tuple(ir.Const(v) for v in shape.value))
            elif not isinstance(shape, ir.Display) and self.facts.rank_of(shape) == 0:
                shape = ir.Display("tuple", (shape,))
        else:
            raise NotVector(f"{name_of(e.fn)} with options")
        length = self.facts.shape_length(shape)
        if length is None:
            raise NotVector(f"{name_of(e.fn)} to a shape of unknown length")
        return Value(ir.Call(per_direction.direction_reshape, (operand.expr, shape)), length, True)

    def along_axis(self, e: ir.Call) -> Value:
        """``np.roll(t, shift, axis=k)`` (by a number) and ``np.expand_dims(t, k)`` of a tangent: the same of each
        direction's, along axis ``k + 1`` of the data (a negative ``k`` counts from the end, as before)."""
        operand = self.expr(e.args[0])
        keywords = dict(e.kwargs)
        at = 2 if e.fn is np.roll else 1
        axis = e.args[at] if len(e.args) == at + 1 else keywords.pop("axis", None) if len(e.args) == at else None
        if keywords or len(e.args) not in (at, at + 1) or not operand.directed or operand.rank is None:
            raise NotVector(f"{name_of(e.fn)} with options, or of a tangent of unknown rank")
        result = operand.rank + (e.fn is np.expand_dims)
        if e.fn is np.roll and self.facts.rank_of(self._primal(e.args[1])) != 0:
            raise NotVector("np.roll by a shift that is not a number")
        moved = _moved_axis(axis, result, e.fn)
        return Value(ir.Call(e.fn, (operand.expr,) + e.args[1:at], (("axis", moved),)), result, True)

    def joined(self, e: ir.Call) -> Value:
        """``np.concatenate`` or ``np.stack`` of a list or tuple of tangents of one rank along one constant axis:
        each direction's joined, along axis ``k + 1`` of the data."""
        keywords = dict(e.kwargs)
        axis = e.args[1] if len(e.args) == 2 else keywords.pop("axis", ir.Const(0)) if len(e.args) == 1 else None
        pieces = e.args[0]
        if keywords or axis is None or not (isinstance(pieces, ir.Display) and pieces.kind in ("list", "tuple")
                                            and pieces.items):
            raise NotVector(f"{name_of(e.fn)} with options, or of what is not a list of arrays")
        items = [self.expr(item) for item in pieces.items]
        ranks = {item.rank for item in items}
        if not all(item.directed for item in items) or len(ranks) != 1:
            raise NotVector(f"{name_of(e.fn)} of tangents and values, or of tangents of several ranks")
        rank = ranks.pop()
        if rank is None or (e.fn is np.concatenate and rank == 0):
            raise NotVector(f"{name_of(e.fn)} of tangents of unknown rank, or of numbers")
        result = rank + (e.fn is np.stack)
        moved = _moved_axis(axis, result, e.fn)
        joined = ir.Display(pieces.kind, tuple(item.expr for item in items))
        return Value(ir.Call(e.fn, (joined,), (("axis", moved),)), result, True)

    def transpose(self, e: ir.Call) -> Value:
        """``np.transpose(t)`` or ``np.transpose(t, axes)``: the same axes moved, the directions first (a view,
        as the one-direction code's)."""
        operand = self.expr(e.args[0])
        if not operand.directed or operand.rank is None:
            raise NotVector("np.transpose of a tangent of unknown rank")
        if len(e.args) == 1 or isinstance(e.args[1], ir.Const) and e.args[1].value is None:
            axes = tuple(reversed(range(operand.rank)))
        elif isinstance(e.args[1], ir.Const) and isinstance(e.args[1].value, tuple) and \
                sorted(e.args[1].value) == list(range(operand.rank)):
            axes = e.args[1].value
        else:
            raise NotVector("np.transpose by axes that are not constant")
        moved = ir.Const((0,) + tuple(a + 1 for a in axes))
        return Value(ir.Call(np.transpose, (operand.expr, moved)), operand.rank, True)


def _moved_axis(axis: Optional[ir.Expr], rank: int, what: object) -> ir.Const:
    """An operation's constant axis of a result of ``rank`` axes, in the data with the directions in front:
    ``k + 1``, or a negative ``k`` as it is (it counts from the end); refused unless one constant in range."""
    if not (isinstance(axis, ir.Const) and isinstance(axis.value, int) and not isinstance(axis.value, bool)
            and -rank <= axis.value < rank):
        raise NotVector(f"{name_of(what)} of a tangent along an axis that is not one constant (none: flattened)")
    return ir.Const(axis.value + 1 if axis.value >= 0 else axis.value)
