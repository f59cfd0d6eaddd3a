"""Vector mode's statements: a tangent function → the same function pushing ``p`` directions at once.

Input: a tangent function in IR (``ad/forward.py``'s, after the tangent pipeline), the names of its
tangent parameters, and the kinds every call passes (a tangent parameter has its primal's).  Output:
``vector_tangents`` returns an ``ir.Function`` of the same parameters and result whose tangents carry a
leading axis of directions, ``(p,) + shape``, so that one run computes the primal once and all ``p``
tangents together; or ``None`` and the reason, where a statement has no exact vector form here (the
caller then runs the one-direction code once per direction, or on the Python backend wraps its tangents
at run time, ``targets/batched``).

Why: a tangent function pushes one direction a run, and each run computes the primal again: a dense
Jacobian of ``tanh(W @ x)`` of 200 numbers recomputed ``W @ x`` 200 times.  Written in the code itself
(as Tapenade's vector tangent mode writes it), the leading axis compiles, and on the Python backend
costs no wrapper at run time (that Jacobian: 0.47 ms against 1.2 ms wrapped).

Two forms of a tangent, by its rank (``facts.py`` finds ranks and which names are tangents):

* an **array's** tangent is one array with the directions in front, each statement's value rewritten by
  ``expressions.py`` (``t_y = w @ t_x`` as ``t_y = t_x @ np.transpose(w)``); its views are views of the
  same rows of the same base, so the vector code shares memory where the one-direction code does;
* a **number's** tangent is a buffer of ``p`` numbers of its own, made once at the top, each assignment
  written into it (``t_s[:] = ...``), and for compiled code (``loops_over_directions``), where its value
  is a number's arithmetic, one direction at a time, ``for d in range(directions): t_s[d] = t_a[d] * c``:
  a loop over elements then allocates nothing, where an array a statement would cost more than the
  primal work it saves.  A number holds no view, and a buffer is only ever written whole or element by
  element, so no name shares it: a number's tangent a helper hands back is copied into its buffer.

A helper the code calls and does not inline (``y, t_y = t_helper.jvp(...)``, the Python backend's) is
called by its own vector version, ``t_helper.vector(...)``, made when the helper's tangent code is.

The first pass finds every tangent's rank (each number's tangent an array, its reads of an element
copied); the second writes the numbers' buffers.  For compiled code, where no tangent is computed on a
whole array (a loop over elements, numbers all through), there is no vector form: one pass per direction
keeps each number in a register, and measured here was about twice as fast as the buffers (a Jacobian of
a 200-element stencil loop: 0.65 ms against 1.25 ms), the primal work it repeats being as cheap as the
tangent's.  On the Python backend every statement costs the interpreter alike, and the vector form is
the faster (a 40-element heat-equation loop's Jacobian: 1.0 ms against 5.1 ms wrapped).
"""
from __future__ import annotations

import dataclasses
import operator
from typing import NamedTuple, Optional

import numpy as np

from ...core import ir
from ...core.kinds import Kind
from .expressions import Expressions
from .values import ALL
from .facts import ZEROS_LIKE, Facts, NotVector, helper_tangent_call, reads, shown
from .numbers import OneDirection


class Vectorized(NamedTuple):
    """What ``vector_tangents`` made of a tangent function."""

    function: Optional[ir.Function]  # None where it has no vector form
    why: str  # why not ("" where it has one)
    result_rank: Optional[int] = None  # the rank of the result's tangent, without the direction axis


def vector_tangents(fn: ir.Function, tangent_params: list[str], kinds: dict[str, Kind],
                    loops_over_directions: bool = True) -> Vectorized:
    """``fn`` pushing a leading axis of directions through its tangents (see the module docstring); or
    ``None`` and why not.  ``loops_over_directions``: a number's arithmetic written one
    direction at a time (compiled code keeps each in a register); else all directions at once (an
    interpreter pays for every trip of a loop, NumPy for every array)."""
    try:
        if not tangent_params:
            raise NotVector("no tangent parameter")
        facts = Facts(fn, tangent_params, kinds)
        first = _Vectorizer(fn, tangent_params, facts, numbers=frozenset())
        first.run()  # (every tangent's rank)
        if not first.array_work and loops_over_directions:
            raise NotVector("its tangents are numbers and elements of arrays, one at a time: one pass per "
                            "direction, each in registers, is faster than a vector of directions per number")
        numbers = frozenset(t for t, r in facts.tangent_ranks.items() if r == 0)
        second = _Vectorizer(fn, tangent_params, facts, numbers, loops_over_directions)
        return Vectorized(second.run(), "", second.result_rank)
    except NotVector as why:
        return Vectorized(None, str(why))


class _Vectorizer:
    def __init__(self, fn: ir.Function, tangent_params: list[str], facts: Facts, numbers: frozenset[str],
                 loops_over_directions: bool = True) -> None:
        self.fn = fn
        self.loops_over_directions = loops_over_directions
        self.params = tangent_params
        self.facts = facts
        self.numbers = numbers  # the numbers' tangents, each in a buffer of its own
        self.expressions = Expressions(facts, copies=not numbers)
        self.one_direction = OneDirection(facts)
        self.taken = ir.NameSet(ir.assigned_names(fn.body) | set(fn.params))
        self.count = ir.Var(ir.fresh_name("directions", self.taken))
        self.each = ir.Var(ir.fresh_name("each_direction", self.taken))  # the range the loops over directions run
        self.d = ir.Var(ir.fresh_name("d", self.taken))
        # tangent values computed on whole arrays (not an element read, a copy or the zeros a tangent starts
        # from): where there are none, vector mode saves too little to pay for itself (vector_tangents)
        self.array_work = 0
        self.result_rank: Optional[int] = None

    def run(self) -> ir.Function:
        body = self.block(self.fn.body)
        buffers: list[ir.Stmt] = []
        if self.numbers:
            if self.loops_over_directions:
                buffers.append(ir.Assign(self.each.name, ir.Call(range, (self.count,))))
            assigned = ir.assigned_names(self.fn.body)
            for name in sorted(self.numbers):  # (a parameter's, where the code assigns it: a copy of the seeds)
                made = ir.Call(np.copy, (ir.Var(name),)) if name in self.params else ir.Call(np.zeros, (self.count,))
                if name not in self.params or name in assigned:
                    buffers.append(ir.Assign(name, made))
        read = {n for stmt in ir.walk(buffers + body) for e in ir.exprs_of(stmt) for n in ir.names_read(e)}
        if self.count.name in read:  # (the number of directions, where a statement reads it)
            shape = ir.Call(np.shape, (ir.Var(self.params[0]),))
            buffers.insert(0, ir.Assign(self.count.name, ir.Call(operator.getitem, (shape, ir.Const(0)))))
        return dataclasses.replace(self.fn, name=self.fn.name + "_directions", body=buffers + body)

    def block(self, body: list[ir.Stmt]) -> list[ir.Stmt]:
        return [out for stmt in body for out in self.statement(stmt)]

    def statement(self, stmt: ir.Stmt) -> list[ir.Stmt]:
        if isinstance(stmt, ir.Assign):
            if stmt.target not in self.facts.tangents:
                return self.primal(stmt)
            if stmt.target in self.numbers:
                return self.into_buffer(stmt)
            return [dataclasses.replace(stmt, value=self.tangent_value(stmt.target, stmt.value))]
        if isinstance(stmt, ir.Store):
            return [self.store(stmt)] if stmt.array in self.facts.tangents else self.primal(stmt)
        if isinstance(stmt, ir.If):
            self.primal_expr(stmt.test)
            return [dataclasses.replace(stmt, body=self.block(stmt.body), orelse=self.block(stmt.orelse))]
        if isinstance(stmt, ir.For):
            self.primal_expr(stmt.iterable)
            if stmt.exit is not None:
                self.primal_expr(stmt.exit)
            return [dataclasses.replace(stmt, body=self.block(stmt.body))]
        if isinstance(stmt, ir.While):
            self.primal_expr(stmt.test)
            if stmt.exit is not None:
                self.primal_expr(stmt.exit)
            return [dataclasses.replace(stmt, test_block=self.block(stmt.test_block), body=self.block(stmt.body))]
        if isinstance(stmt, ir.Return):
            return [dataclasses.replace(stmt, value=self.result(stmt.value))]
        if isinstance(stmt, (ir.Comment, ir.Release)):
            return [stmt]
        if isinstance(stmt, ir.Unpack) and helper_tangent_call(stmt) is not None:
            return self.helper_call(stmt)
        return self.primal(stmt)  # (an Effect or Unpack of primal values)

    def helper_call(self, stmt: ir.Unpack) -> list[ir.Stmt]:
        """``y, t_y = t_helper.jvp(*values, *tangents)`` (a helper not inlined): the helper's own vector
        version called with the tangents' directions, where it has one.  A number's tangent comes back
        as an array the helper may share with an argument's (``return s``): copied into its buffer."""
        call, owner = stmt.value, helper_tangent_call(stmt)
        assert isinstance(call, ir.Call) and len(stmt.targets) == 2
        vector = getattr(owner, "vector", None)
        primals = getattr(owner, "primal_count", None)
        if vector is None or primals is None:
            why = getattr(getattr(owner, "jvp", None), "not_vector", "") or "not built yet (recursion)"
            raise NotVector(f"a call of {owner!r}, which has no vector version: {why}")
        for arg in call.args[:primals]:
            self.primal_expr(arg)
        tangents = []
        for arg in call.args[primals:]:
            rewritten = self.expressions.expr(arg)
            if not rewritten.directed or rewritten.rank is None:
                raise NotVector(f"a helper's tangent argument with no direction axis ({shown(arg)})")
            tangents.append(rewritten.expr)
        value, t_value = stmt.targets
        self.facts.has_rank(t_value, getattr(vector, "result_rank", None))  # (its value's: facts.helper_results)
        self.array_work += 1
        pushed = ir.Call(ir.Part(owner, "vector"), call.args[:primals] + tuple(tangents))
        if t_value not in self.numbers:
            return [dataclasses.replace(stmt, value=pushed)]
        fresh = ir.fresh_name("handed_back", self.taken)
        return [dataclasses.replace(stmt, targets=(value, fresh), value=pushed),
                ir.Store(t_value, ALL, ir.Var(fresh), stmt.line)]

    def primal(self, stmt: ir.Stmt) -> list[ir.Stmt]:
        """A statement of the primal, as it is; refused if it reads a tangent (nothing primal may)."""
        for e in ir.exprs_of(stmt):
            self.primal_expr(e)
        if isinstance(stmt, ir.Unpack) and set(stmt.targets) & self.facts.tangents:
            raise NotVector("tangents unpacked from a tuple")
        if isinstance(stmt, (ir.Push, ir.Pop)):
            raise NotVector("a tape in forward mode")
        return [stmt]

    def primal_expr(self, e: ir.Expr) -> None:
        if reads(e) & self.facts.tangents:
            raise NotVector(f"a primal statement reads a tangent ({shown(e)})")

    def result(self, value: ir.Expr) -> ir.Expr:
        """``return (primal, tangent)``: the tangent with its direction axis."""
        if not (isinstance(value, ir.Display) and len(value.items) == 2):
            raise NotVector("a result that is not (value, tangent)")
        primal, tangent = value.items
        self.primal_expr(primal)
        rewritten = self.expressions.expr(tangent)
        if not rewritten.directed:
            raise NotVector("a tangent result that carries no direction")
        self.result_rank = rewritten.rank
        return dataclasses.replace(value, items=(primal, rewritten.expr))

    def tangent_value(self, target: str, value: ir.Expr) -> ir.Expr:
        """The value of an assignment to the tangent ``target``: rewritten, or the zeros it starts from."""
        if not (reads(value) & self.facts.tangents):
            return self.start(target, value)
        rewritten = self.expressions.expr(value)
        if not rewritten.directed:
            raise NotVector(f"{target} is given a value with no direction axis")
        self.facts.has_rank(target, rewritten.rank)
        self.count_work(value, rewritten.rank)
        return rewritten.expr

    def count_work(self, value: ir.Expr, value_rank: Optional[int]) -> None:
        if value_rank and isinstance(value, ir.Call) and value.fn not in (operator.getitem, np.copy):
            self.array_work += 1

    def into_buffer(self, stmt: ir.Assign) -> list[ir.Stmt]:
        """A number's tangent written into its buffer: one direction at a time where its value is a
        number's arithmetic (primal calls in it computed once, before), else all directions at once."""
        if reads(stmt.value) & self.facts.tangents and self.loops_over_directions:
            hoisted: list[ir.Stmt] = []

            def hoist(e: ir.Expr) -> ir.Var:
                name = ir.fresh_name("factor", self.taken)
                hoisted.append(ir.Assign(name, e))
                return ir.Var(name)

            one = self.one_direction.scalar_form(stmt.value, self.d, hoist)
            if one is not None:
                # (no line of their own: the primal statement before them names the user's line)
                return hoisted + [ir.For(self.d.name, self.each, [ir.Store(stmt.target, self.d, one)])]
        return [ir.Store(stmt.target, ALL, self.tangent_value(stmt.target, stmt.value), stmt.line)]

    def start(self, target: str, value: ir.Expr) -> ir.Expr:
        """The zeros a tangent starts from, with the direction axis in front."""
        facts = self.facts
        if isinstance(value, ir.Const) and isinstance(value.value, (int, float)) and value.value == 0:
            facts.has_rank(target, 0)
            return ir.Const(0.0) if target in self.numbers else ir.Call(np.zeros, (self.count,))
        if isinstance(value, ir.Call) and value.fn in ZEROS_LIKE and len(value.args) == 1 and not value.kwargs:
            like = value.args[0]
            facts.has_rank(target, facts.rank_of(like))
            if facts.rank_of(like) == 0:
                return ir.Const(0.0) if target in self.numbers else ir.Call(np.zeros, (self.count,))
            rows = ir.Call(operator.add, (ir.Display("tuple", (self.count,)), ir.Call(np.shape, (like,))))
            return ir.Call(np.zeros, (rows,))
        if isinstance(value, ir.Call) and value.fn is np.zeros and len(value.args) == 1 and not value.kwargs:
            shape = value.args[0]
            if isinstance(shape, ir.Display) and shape.kind == "tuple":
                items = shape.items
            elif facts.rank_of(shape) == 0:
                items = (shape,)
            else:
                raise NotVector(f"np.zeros of a shape held in a tuple for {target}")
            facts.has_rank(target, len(items))
            return ir.Call(np.zeros, (ir.Display("tuple", (self.count,) + tuple(items)),))
        raise NotVector(f"{target} starts from {shown(value)}")

    def store(self, stmt: ir.Store) -> ir.Store:
        """``t[key] = v`` (or ``+=``, ``-=``) into a tangent array: the same rows of every direction."""
        self.primal_expr(stmt.index)
        if stmt.op is not None and stmt.op not in (operator.add, operator.sub):
            raise NotVector(f"a store {getattr(stmt.op, '__name__', stmt.op)}= into a tangent")
        array_rank = self.facts.rank_of_name(stmt.array)
        key, picked = self.expressions.key(stmt.index, array_rank)
        region = None if array_rank is None else array_rank - picked
        value = self.expressions.expr(stmt.value)
        if region is None or value.rank is None or value.rank > region:
            raise NotVector(f"a store into {stmt.array} of unknown or smaller rank")
        stored = self.expressions.lifted(value, region).expr if value.directed else value.expr
        self.count_work(stmt.value, value.rank)
        return dataclasses.replace(stmt, index=key, value=stored)
