"""Vector forward mode in typed code: a tangent function → the same function pushing ``p`` directions.

Input: a tangent function in IR (``forward.py``'s, after the tangent pipeline), the names of its tangent
parameters, and the kinds every call passes (one per parameter; a tangent parameter has its primal's).
Output: ``vector_tangents`` returns an ``ir.Function`` of the same parameters and result whose every
tangent carries a leading axis of directions, ``(p,) + shape`` (a number's tangent a vector of ``p``), so
that one run of it computes the primal once and all ``p`` tangents together; or ``None``, with the
reason, where the function holds a statement this module has no exact vector form for (the caller then
runs the one-direction code once per direction, as before).

Why: a compiled tangent function pushes one direction a run, and each run computes the primal again: a
dense Jacobian of ``tanh(W @ x)`` of 200 numbers recomputed ``W @ x`` 200 times.  The Python backend's
vector mode wraps each tangent at run time (``targets/batched``); a compiler needs the leading axis in
the code itself (as Tapenade's vector tangent mode writes it).

Which values are tangents is found from the code alone: the tangent parameters, and every value
computed from a tangent (forward mode's tangent code is linear in the tangents, and the primal's never
reads one), to a fixed point over loops; with them, arrays a tangent is stored into and the zeros that
start a tangent.  Each tangent statement is rewritten only by the rules below, every other form refusing:

* a sum, difference or negation of tangents, and a product or quotient of one tangent by primal values
  (``operator`` and NumPy's ufuncs); ``np.where`` of a primal condition: elementwise, where NumPy aligns
  trailing axes, a tangent of lower rank than the result is first given axes after the direction axis
  (``t[:, None]``), so the direction axis never meets a primal axis;
* an index of integers, slices and ``None`` (``t[i, 1:]`` as ``t[:, i, 1:]``), read or written; a read
  that picks a number from an array a store may write into (``memory.sharing``) is copied
  (``np.copy(t[:, i])``): the one-direction code held a number, which a later write into ``t`` does not
  change, where the column would be a view;
* ``np.sum`` and ``np.mean`` (of all axes, or of one constant axis), ``@`` and ``np.dot`` of a tangent
  vector and a primal matrix or vector;
* the zeros a tangent starts from (``zero_tangent(x)``, ``np.zeros(shape)``, ``np.zeros_like(x)``, the
  number ``0.0``), with the direction axis in front.

The aliasing of the result is that of the one-direction code: a tangent array's views are views of the
same rows of the same base; only values that were numbers become arrays, and those are never written
in place (a store writes into arrays only), and the reads that make them are copies.
"""
from __future__ import annotations

import dataclasses
import operator
from collections import Counter
from typing import Any, Optional

import numpy as np

from ..analysis.inference import infer
from ..core import ir, runtime
from ..rules import registry as rules
from ..memory.sharing import Sharing
from ..core.kinds import NUMBER, Array, Kind, rank

# Operations linear in each operand, elementwise with NumPy's broadcasting
_SUMS = frozenset({operator.add, operator.sub, np.add, np.subtract})
_SIGNS = frozenset({operator.neg, operator.pos, np.negative, np.positive})
_PRODUCTS = frozenset({operator.mul, np.multiply})
_QUOTIENTS = frozenset({operator.truediv, np.true_divide, np.divide})
_MATMULS = frozenset({operator.matmul, np.matmul, np.dot})
_ZEROS_LIKE = frozenset({runtime.zero_tangent, runtime.zeros_like, np.zeros_like})
_SAME_RANK = _ZEROS_LIKE | {np.copy, np.asarray, runtime.writable_copy}  # (the first argument's rank; like's)
_COMPARISONS = frozenset({operator.lt, operator.le, operator.gt, operator.ge, operator.eq, operator.ne})
_REDUCTIONS = frozenset({np.sum, np.mean, np.max, np.min, np.prod, np.amax, np.amin})
_MADE_OF_SHAPE = frozenset({np.zeros, np.ones, np.full, np.empty})  # (as many axes as the shape has items)

_ALL = ir.Slice(None, None, None)


class NotVector(Exception):
    """A statement with no exact vector form here (the message says which and why)."""


@dataclasses.dataclass(frozen=True)
class _Value:
    """A rewritten expression: its logical rank (the one-direction code's), and whether it carries the
    direction axis in front."""

    expr: ir.Expr
    rank: Optional[int]
    directed: bool


def vector_tangents(fn: ir.Function, tangent_params: list[str], kinds: dict[str, Kind]
                    ) -> tuple[Optional[ir.Function], str]:
    """``fn`` pushing a leading axis of directions through its tangents (see the module docstring), and
    ``""``; or ``None`` and why not."""
    try:
        return _Vectorizer(fn, tangent_params, kinds).run(), ""
    except NotVector as why:
        return None, str(why)


class _Vectorizer:
    def __init__(self, fn: ir.Function, tangent_params: list[str], kinds: dict[str, Kind]) -> None:
        if not tangent_params:
            raise NotVector("no tangent parameter")
        self.fn = fn
        self.kinds = infer(fn, kinds)[1]
        self.kinds.update({name: kind for name, kind in kinds.items() if name not in self.kinds})
        self.tangents = _tangent_names(fn, tangent_params)
        self.known_ranks()
        self.sharing = Sharing(fn, only_if_written=True, find_stale=False)
        # (the tangents' ranks as their values give them, in program order: inference reads three-address
        # code, and a tangent statement is one nested expression)
        self.tangent_ranks: dict[str, Optional[int]] = {t: rank(kinds[t]) if t in kinds else None
                                                         for t in tangent_params}
        self.count = ir.Var(ir.fresh_name("directions", ir.NameSet(ir.assigned_names(fn.body) | set(fn.params))))
        self.first = tangent_params[0]

    def run(self) -> ir.Function:
        count = ir.Assign(self.count.name, ir.Call(operator.getitem, (ir.Call(np.shape, (ir.Var(self.first),)),
                                                                      ir.Const(0))))
        body = [count] + self.block(self.fn.body)
        return dataclasses.replace(self.fn, name=self.fn.name + "_directions", body=body)

    # -- statements -------------------------------------------------------------------------------

    def block(self, body: list[ir.Stmt]) -> list[ir.Stmt]:
        return [self.statement(stmt) for stmt in body]

    def statement(self, stmt: ir.Stmt) -> ir.Stmt:
        if isinstance(stmt, ir.Assign):
            if stmt.target not in self.tangents:
                self.primal_only(stmt)
                return stmt
            return dataclasses.replace(stmt, value=self.tangent_value(stmt.target, stmt.value))
        if isinstance(stmt, ir.Store):
            if stmt.array not in self.tangents:
                self.primal_only(stmt)
                return stmt
            return self.store(stmt)
        if isinstance(stmt, ir.If):
            self.primal_expr(stmt.test)
            return dataclasses.replace(stmt, body=self.block(stmt.body), orelse=self.block(stmt.orelse))
        if isinstance(stmt, ir.For):
            self.primal_expr(stmt.iterable)
            if stmt.exit is not None:
                self.primal_expr(stmt.exit)
            return dataclasses.replace(stmt, body=self.block(stmt.body))
        if isinstance(stmt, ir.While):
            self.primal_expr(stmt.test)
            if stmt.exit is not None:
                self.primal_expr(stmt.exit)
            return dataclasses.replace(stmt, test_block=self.block(stmt.test_block), body=self.block(stmt.body))
        if isinstance(stmt, ir.Return):
            return dataclasses.replace(stmt, value=self.result(stmt.value))
        if isinstance(stmt, (ir.Comment, ir.Release)):
            return stmt
        self.primal_only(stmt)  # (an Effect or Unpack of primal values; a tape's statements)
        return stmt

    def primal_only(self, stmt: ir.Stmt) -> None:
        """Refuse a statement that is not a tangent's but reads one (nothing primal may)."""
        for e in ir.exprs_of(stmt):
            self.primal_expr(e)
        if isinstance(stmt, ir.Unpack) and set(stmt.targets) & self.tangents:
            raise NotVector("tangents unpacked from a tuple")

    def primal_expr(self, e: ir.Expr) -> None:
        if _reads(e) & self.tangents:
            raise NotVector(f"a primal statement reads a tangent ({_shown(e)})")

    def result(self, value: ir.Expr) -> ir.Expr:
        """``return (primal, tangent)``: the tangent with its direction axis (a zero result's made so)."""
        if not (isinstance(value, ir.Display) and len(value.items) == 2):
            raise NotVector("a result that is not (value, tangent)")
        primal, tangent = value.items
        self.primal_expr(primal)
        rewritten = self.expr(tangent)
        if not rewritten.directed:
            raise NotVector("a tangent result that carries no direction")
        return dataclasses.replace(value, items=(primal, rewritten.expr))

    def tangent_value(self, target: str, value: ir.Expr) -> ir.Expr:
        """The value of an assignment to the tangent ``target``: rewritten, or the zeros it starts from."""
        if not (_reads(value) & self.tangents):
            return self.start(target, value)
        rewritten = self.expr(value)
        if not rewritten.directed:
            raise NotVector(f"{target} is given a value with no direction axis")
        self.has_rank(target, rewritten.rank)
        return rewritten.expr

    def has_rank(self, target: str, value_rank: Optional[int]) -> None:
        """Note the rank of the tangent ``target``: one for all its assignments, or refused (a merge of a
        number and an array, say, rather than reshaped by guess)."""
        if value_rank is None:
            raise NotVector(f"{target} of unknown rank")
        if self.tangent_ranks.setdefault(target, value_rank) != value_rank:
            raise NotVector(f"{target} of rank {self.tangent_ranks[target]} given a value of rank {value_rank}")

    def start(self, target: str, value: ir.Expr) -> ir.Expr:
        """The zeros a tangent starts from, with the direction axis in front."""
        if isinstance(value, ir.Const) and isinstance(value.value, (int, float)) and value.value == 0:
            self.has_rank(target, 0)
            return ir.Call(np.zeros, (self.count,))
        if isinstance(value, ir.Call) and value.fn in _ZEROS_LIKE and len(value.args) == 1 and not value.kwargs:
            like = value.args[0]
            self.has_rank(target, self.rank_of(like))
            if self.rank_of(like) == 0:
                return ir.Call(np.zeros, (self.count,))
            shape = ir.Call(operator.add, (ir.Display("tuple", (self.count,)), ir.Call(np.shape, (like,))))
            return ir.Call(np.zeros, (shape,))
        if isinstance(value, ir.Call) and value.fn is np.zeros and len(value.args) == 1 and not value.kwargs:
            shape = value.args[0]
            if isinstance(shape, ir.Display) and shape.kind == "tuple":
                items = shape.items
            elif self.rank_of(shape) == 0:
                items = (shape,)
            else:
                raise NotVector(f"np.zeros of a shape held in a tuple for {target}")
            self.has_rank(target, len(items))
            return ir.Call(np.zeros, (ir.Display("tuple", (self.count,) + tuple(items)),))
        raise NotVector(f"{target} starts from {_shown(value)}")

    def store(self, stmt: ir.Store) -> ir.Store:
        if _reads(stmt.index) & self.tangents:
            raise NotVector("an index that is a tangent")
        if stmt.op is not None and stmt.op not in (operator.add, operator.sub):
            raise NotVector(f"a store {stmt.op.__name__}= into a tangent")
        array_rank = self.rank_of_name(stmt.array)
        key, picked = self.key(stmt.index, array_rank)
        region = None if array_rank is None else array_rank - picked
        value = self.expr(stmt.value)
        if region is None or value.rank is None or value.rank > region:
            raise NotVector(f"a store into {stmt.array} of unknown or smaller rank")
        stored = self.lifted(value, region).expr if value.directed else value.expr
        return dataclasses.replace(stmt, index=key, value=stored)

    # -- expressions ------------------------------------------------------------------------------

    def expr(self, e: ir.Expr) -> _Value:
        if isinstance(e, ir.Var):
            return _Value(e, self.rank_of_name(e.name), e.name in self.tangents)
        if isinstance(e, ir.Const):
            return _Value(e, _constant_rank(e.value), False)
        if not isinstance(e, ir.Call):
            raise NotVector(f"{_shown(e)} in a tangent's value")
        if not (_reads(e) & self.tangents):
            return _Value(e, self.rank_of(e), False)
        if e.kwargs and e.fn is not np.sum and e.fn is not np.mean and e.fn is not np.reshape:
            raise NotVector(f"{_name(e.fn)} with keywords on a tangent")
        fn = e.fn
        if fn in _SUMS or fn in _SIGNS:
            return self.elementwise(e, [self.expr(a) for a in e.args])
        if fn in _PRODUCTS or fn in _QUOTIENTS:
            operands = [self.expr(a) for a in e.args]
            if sum(o.directed for o in operands) != 1 or (fn in _QUOTIENTS and not operands[0].directed):
                raise NotVector(f"{_name(fn)} not linear in the tangents")
            return self.elementwise(e, operands)
        if fn is np.where and len(e.args) == 3:
            self.primal_expr(e.args[0])
            operands = [self.expr(a) for a in e.args]
            return self.elementwise(e, operands)
        if fn is operator.getitem and len(e.args) == 2:
            return self.index(e)
        if fn is np.sum or fn is np.mean:
            return self.reduction(e)
        if fn in _MATMULS and len(e.args) == 2:
            return self.matmul(e)
        if fn is runtime.writable_copy and len(e.args) == 2:
            return self.copy(e)
        if fn is np.copy and len(e.args) == 1 and not e.kwargs:  # (a new array in both codes)
            operand = self.expr(e.args[0])
            return _Value(ir.Call(np.copy, (operand.expr,)), operand.rank, operand.directed)
        if fn is np.reshape or fn is np.ravel:
            return self.reshape(e)
        if fn is runtime.unbroadcast and len(e.args) == 2 and not e.kwargs:
            return self.unbroadcast(e)
        if fn in _product_adjoints() and len(e.args) == 3:
            return self.product_adjoint(e)
        if fn is _helper("add_tangent") and len(e.args) == 4 and None not in map(self.rank_of, e.args[2:]):
            # (of two arrays or numbers, as the ranks of a and b prove: the tangents added; of sequences, joined)
            return self.elementwise(ir.Call(operator.add, ()), [self.expr(a) for a in e.args[:2]])
        if fn is runtime.if_inexact and len(e.args) == 2:  # (the tangent, or its zeros: by the primal's dtype)
            tangent = self.expr(e.args[0])
            self.primal_expr(e.args[1])
            return _Value(ir.Call(fn, (tangent.expr, e.args[1])), tangent.rank, tangent.directed)
        raise NotVector(f"{_name(fn)} of a tangent")

    def elementwise(self, e: ir.Call, operands: list[_Value]) -> _Value:
        ranks = [o.rank for o in operands]
        if any(r is None for r in ranks):
            raise NotVector(f"{_name(e.fn)} of operands of unknown rank")
        result = max(r for r in ranks if r is not None)
        args = tuple(self.lifted(o, result).expr if o.directed else o.expr for o in operands)
        return _Value(ir.Call(e.fn, args), result, True)

    def lifted(self, value: _Value, to: int) -> _Value:
        """``value`` (directed) with axes of length one after the direction axis up to logical rank ``to``."""
        assert value.rank is not None
        if value.rank >= to:
            return value
        key = ir.Display("tuple", (_ALL,) + (ir.Const(None),) * (to - value.rank))
        return _Value(ir.Call(operator.getitem, (value.expr, key)), to, True)

    def index(self, e: ir.Call) -> _Value:
        array = self.expr(e.args[0])
        if _reads(e.args[1]) & self.tangents:
            raise NotVector("an index that is a tangent")
        if not array.directed:
            raise NotVector("an index of a primal by a tangent")
        key, picked = self.key(e.args[1], array.rank)
        assert array.rank is not None
        result = array.rank - picked
        read = ir.Call(operator.getitem, (array.expr, key))
        if result == 0 and self.may_change(e.args[0]):
            read = ir.Call(np.copy, (read,))  # (a number in the one-direction code: a copy, not a view of the column)
        return _Value(read, result, True)

    def key(self, index: ir.Expr, array_rank: Optional[int]) -> tuple[ir.Expr, int]:
        """The key of the data (the direction axis first) and how many axes the logical key picks,
        net of the new axes it adds."""
        items = index.items if isinstance(index, ir.Display) and index.kind == "tuple" else (index,)
        picked, slots = 0, 0
        for item in items:
            if isinstance(item, ir.Slice):
                for part in (item.lower, item.upper, item.step):
                    if part is not None and self.rank_of(part) != 0:
                        raise NotVector("a slice bound that is not a number")
                slots += 1
            elif isinstance(item, ir.Const) and item.value is None:
                picked -= 1
            elif isinstance(item, ir.Const) and isinstance(item.value, (int, np.integer)) \
                    and not isinstance(item.value, bool):
                picked, slots = picked + 1, slots + 1
            elif isinstance(item, ir.Var) and self.is_integer(item.name):
                picked, slots = picked + 1, slots + 1
            else:
                raise NotVector(f"an index {_shown(item)} of a tangent (not an integer, slice or None)")
        if array_rank is None or slots > array_rank:
            raise NotVector("an index of a tangent of unknown rank")
        return ir.Display("tuple", (_ALL,) + tuple(items)), picked

    def reduction(self, e: ir.Call) -> _Value:
        """``np.sum`` or ``np.mean`` of a tangent over every axis or one constant axis (``keepdims`` off)."""
        operand = self.expr(e.args[0])
        if not operand.directed or operand.rank is None:
            raise NotVector(f"{_name(e.fn)} of a tangent of unknown rank")
        keywords = dict(e.kwargs)
        keep = keywords.pop("keepdims", ir.Const(False))
        axis = e.args[1] if len(e.args) == 2 else keywords.pop("axis", None) if len(e.args) == 1 else None
        if len(e.args) > 2 or keywords or not (isinstance(keep, ir.Const) and keep.value is False):
            raise NotVector(f"{_name(e.fn)} with more than an axis")
        if operand.rank == 0:  # (of a number: the number)
            return operand
        if axis is None or isinstance(axis, ir.Const) and axis.value is None:
            helper = runtime.direction_sum if e.fn is np.sum else runtime.direction_mean
            return _Value(ir.Call(helper, (operand.expr,)), 0, True)
        if not (isinstance(axis, ir.Const) and isinstance(axis.value, int) and not isinstance(axis.value, bool)
                and -operand.rank <= axis.value < operand.rank):
            raise NotVector(f"{_name(e.fn)} over an axis that is not one constant")
        moved = axis.value % operand.rank + 1
        return _Value(ir.Call(e.fn, (operand.expr,), (("axis", ir.Const(moved)),)), operand.rank - 1, True)

    def reshape(self, e: ir.Call) -> _Value:
        """``np.reshape(t, shape)`` or ``np.ravel(t)`` of a tangent no store writes into: each direction's
        rows reshaped (a copy where the directions' data is not contiguous, which only a write through
        the one-direction code's view could tell apart, and there is none)."""
        operand = self.expr(e.args[0])
        if e.kwargs or not isinstance(e.args[0], ir.Var) or self.may_change(e.args[0]):
            raise NotVector(f"{_name(e.fn)} of a tangent a store may write into")
        if e.fn is np.ravel and len(e.args) == 1:
            shape: ir.Expr = ir.Display("tuple", (ir.Const(-1),))
        elif e.fn is np.reshape and len(e.args) == 2:
            shape = e.args[1]
            if isinstance(shape, ir.Const) and isinstance(shape.value, tuple):
                shape = ir.Display("tuple", tuple(ir.Const(v) for v in shape.value))
            elif not isinstance(shape, ir.Display) and self.rank_of(shape) == 0:
                shape = ir.Display("tuple", (shape,))
        else:
            raise NotVector(f"{_name(e.fn)} with options")
        length = self.shape_length(shape)
        self.primal_expr(shape)
        if length is None:
            raise NotVector(f"{_name(e.fn)} to a shape of unknown length")
        return _Value(ir.Call(runtime.direction_reshape, (operand.expr, shape)), length, True)

    def unbroadcast(self, e: ir.Call) -> _Value:
        """``unbroadcast(t, like)``: each direction's tangent summed to ``like``'s shape."""
        tangent = self.expr(e.args[0])
        self.primal_expr(e.args[1])
        like = self.rank_of(e.args[1])
        if not tangent.directed or like is None or tangent.rank is None:
            raise NotVector("unbroadcast of a tangent of unknown rank")
        lifted = self.lifted(tangent, like)
        return _Value(ir.Call(runtime.direction_unbroadcast, (lifted.expr, e.args[1])), like, True)

    def copy(self, e: ir.Call) -> _Value:
        """``writable_copy(t, like)``: a fresh array per direction, shaped like the primal ``like``."""
        tangent = self.expr(e.args[0])
        self.primal_expr(e.args[1])
        like = self.rank_of(e.args[1])
        if not tangent.directed or like is None or tangent.rank is None or tangent.rank > like:
            raise NotVector("writable_copy of a tangent of unknown rank")
        return _Value(ir.Call(runtime.direction_copy, (self.lifted(tangent, like).expr, e.args[1])), like, True)

    def product_adjoint(self, e: ir.Call) -> _Value:
        """``matmul_grad_a(g, a, b)`` or ``matmul_grad_b(g, a, b)`` (the adjoints of ``a @ b``), linear in the
        tangent ``g``, of vectors and matrices (a stack of matrices refused)."""
        g = self.expr(e.args[0])
        for primal in e.args[1:]:
            self.primal_expr(primal)
        a, b = (self.rank_of(x) for x in e.args[1:])
        if not g.directed or (a, b) not in ((2, 1), (1, 1), (1, 2)):
            raise NotVector(f"{_name(e.fn)} of ranks {a} and {b}")
        if e.fn is _product_adjoints()[1]:  # a.T @ g, g * a, outer(a, g): per direction
            if a == 2:
                return _Value(ir.Call(operator.matmul, (g.expr, e.args[1])), 1, True)
            shown_a = e.args[1] if b == 1 else ir.Call(operator.getitem, (e.args[1], ir.Display("tuple", (_ALL, ir.Const(None)))))
            return self.elementwise(ir.Call(operator.mul, ()), [g, _Value(shown_a, b, False)])
        if b == 2:  # b @ g per direction: g @ b.T
            return _Value(ir.Call(operator.matmul, (g.expr, ir.Call(np.transpose, (e.args[2],)))), 1, True)
        return self.elementwise(ir.Call(operator.mul, ()), [self.lifted(g, a), _Value(e.args[2], 1, False)])

    def matmul(self, e: ir.Call) -> _Value:
        """``@`` (or ``np.dot``, the same below three axes) of a tangent and a primal: each direction's
        product.  A tangent vector times a matrix is one product of the directions' rows (``T @ M.T`` for
        ``M @ t``); a tangent of more axes runs a product per direction (``direction_matmul``)."""
        a, b = (self.expr(x) for x in e.args)
        if a.directed == b.directed:
            raise NotVector("a product of two tangents")
        if a.rank is None or b.rank is None or a.rank == 0 or b.rank == 0 or (e.fn is np.dot and max(a.rank, b.rank) > 2):
            raise NotVector("@ of a number, or of operands of unknown rank")
        result = max(a.rank, b.rank) if min(a.rank, b.rank) >= 2 else a.rank + b.rank - 2
        tangent, other = (a, b) if a.directed else (b, a)
        if other.rank > 2:  # (its leading axes would meet the directions')
            raise NotVector("@ of a tangent and a stack of matrices")
        if tangent.rank == 1:
            if a.directed or other.rank == 1:  # t @ M, t @ v, v @ t: the rows of the data times the primal
                return _Value(ir.Call(operator.matmul, (tangent.expr, other.expr)), result, True)
            transposed = ir.Call(np.transpose, (other.expr,))  # M @ t: (t @ M.T) per direction
            return _Value(ir.Call(operator.matmul, (tangent.expr, transposed)), result, True)
        helper = runtime.direction_matmul if a.directed else runtime.matmul_direction
        return _Value(ir.Call(helper, (a.expr, b.expr)), result, True)

    def may_change(self, array: ir.Expr) -> bool:
        """Whether a store may write into memory ``array`` shares (the memory model's answer, of the
        one-direction code: its tangent arrays share memory where the vector code's do)."""
        return not isinstance(array, ir.Var) or self.sharing.may_change(array.name)

    # -- facts ------------------------------------------------------------------------------------

    def rank_of_name(self, name: str) -> Optional[int]:
        if name in self.tangents:
            return self.tangent_ranks.get(name)
        return rank(self.kinds[name]) if name in self.kinds else None

    def is_integer(self, name: str) -> bool:
        """Whether ``name`` is a number read as an index (an integer: Python's indexing refuses a float)."""
        return rank(self.kinds.get(name, ir.Var)) == 0 and name not in self.tangents

    def shape_length(self, e: ir.Expr) -> Optional[int]:
        """The length of a shape: a tuple display, ``np.shape(a)`` of ``a`` of known rank, a name bound
        to one, or a number (one axis)."""
        if isinstance(e, ir.Display):
            return len(e.items)
        if isinstance(e, ir.Call) and e.fn is np.shape and len(e.args) == 1:
            return self.rank_of(e.args[0])
        if isinstance(e, ir.Var) and e.name in self.shapes:
            return self.shapes[e.name]
        return 1 if self.rank_of(e) == 0 else None

    def known_ranks(self) -> None:
        """The ranks of primal values inference leaves unknown (``zeros_like(x)``, an element of it) that
        ``rank_of`` finds, for values assigned once."""
        assigned = Counter(t for stmt in ir.walk(self.fn.body) for t in ir.targets_of(stmt))
        self.shapes: dict[str, int] = {}
        for stmt in ir.walk(self.fn.body):
            if isinstance(stmt, ir.Assign) and assigned[stmt.target] == 1 and isinstance(stmt.value, ir.Call) \
                    and stmt.value.fn is np.shape:
                length = self.shape_length(stmt.value)
                if length is not None:
                    self.shapes[stmt.target] = length
            elif isinstance(stmt, ir.Assign) and stmt.target not in self.tangents and assigned[stmt.target] == 1 \
                    and self.rank_of_name(stmt.target) is None:
                found = self.rank_of(stmt.value)
                if found is not None:
                    self.kinds[stmt.target] = NUMBER if found == 0 else Array(found)

    def rank_of(self, e: ir.Expr) -> Optional[int]:
        """The rank of a primal expression, where elementwise rules give it."""
        if isinstance(e, ir.Var):
            return self.rank_of_name(e.name)
        if isinstance(e, ir.Const):
            return _constant_rank(e.value)
        if isinstance(e, ir.Call) and e.fn in _SAME_RANK and e.args and not e.kwargs:
            return self.rank_of(e.args[-1] if e.fn is runtime.writable_copy else e.args[0])
        if isinstance(e, ir.Call) and e.fn in _MADE_OF_SHAPE and e.args:
            return self.shape_length(e.args[0])
        if isinstance(e, ir.Call) and e.fn is np.size and len(e.args) == 1:
            return 0
        if isinstance(e, ir.Call) and e.fn in (runtime.unbroadcast, runtime.if_inexact) and len(e.args) == 2:
            return self.rank_of(e.args[1] if e.fn is runtime.unbroadcast else e.args[0])
        if isinstance(e, ir.Call) and e.fn in _REDUCTIONS and len(e.args) == 1 and all(
                isinstance(v, ir.Const) and v.value in (None, False) for _, v in e.kwargs):
            return 0  # (over every axis)
        if isinstance(e, ir.Call) and e.fn in _product_adjoints() and len(e.args) == 3:
            return self.rank_of(e.args[1] if e.fn is _product_adjoints()[0] else e.args[2])  # (shaped as a, as b)
        if isinstance(e, ir.Call) and e.fn is operator.getitem and len(e.args) == 2 and not (_reads(e) & self.tangents):
            try:
                key, picked = self.key(e.args[1], self.rank_of(e.args[0]))
            except NotVector:
                return None
            held = self.rank_of(e.args[0])
            return None if held is None else held - picked
        if isinstance(e, ir.Call) and (isinstance(e.fn, np.ufunc) or e.fn in _SUMS | _SIGNS | _PRODUCTS | _QUOTIENTS
                                       or e.fn in _COMPARISONS or e.fn is operator.pow) and not e.kwargs:
            ranks = [self.rank_of(a) for a in e.args]
            return None if any(r is None for r in ranks) else max(r for r in ranks if r is not None)
        return None


def _product_adjoints() -> tuple[Any, Any]:
    """The templates' ``matmul_grad_a`` and ``matmul_grad_b`` (the adjoints of ``a @ b``)."""
    return _helper("matmul_grad_a"), _helper("matmul_grad_b")


def _helper(name: str) -> Any:
    """The templates' helper ``name`` (the function object, recognised by identity), or None."""
    return rules.helpers().get(name)


def _tangent_names(fn: ir.Function, params: list[str]) -> set[str]:
    """The tangent parameters and every name computed from one, or stored a value computed from one."""
    tangents = set(params)
    while True:
        before = len(tangents)
        for stmt in ir.walk(fn.body):
            if isinstance(stmt, ir.Assign) and _reads(stmt.value) & tangents:
                tangents.add(stmt.target)
            elif isinstance(stmt, ir.Store) and (_reads(stmt.value) | _reads(stmt.index)) & tangents:
                tangents.add(stmt.array)
            elif isinstance(stmt, ir.Unpack) and _reads(stmt.value) & tangents:
                tangents.update(stmt.targets)
        if len(tangents) == before:
            return tangents


def _reads(e: Any) -> set[str]:
    return set(ir.names_read(e)) if e is not None else set()


def _constant_rank(value: Any) -> Optional[int]:
    if isinstance(value, (bool, int, float, np.number)):
        return 0
    return None


def _name(fn: Any) -> str:
    return getattr(fn, "__name__", repr(fn))


def _shown(e: Any) -> str:
    return type(e).__name__ if not isinstance(e, ir.Call) else f"a call of {_name(e.fn)}"
