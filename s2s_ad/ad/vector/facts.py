"""What vector mode knows of a tangent function before rewriting it: which names are tangents, the rank
of each value, and which arrays a store may write into.

Input: a tangent function in IR (``ad/forward.py``'s, after the tangent pipeline), the names of its
tangent parameters and the kinds every call passes.  Output: a ``Facts`` answering ``rank_of`` (the rank
of a primal expression, where it is known), ``tangents`` (the parameters' tangents and every name
computed from one: forward mode's tangent code is linear in them, and the primal's never reads one),
``may_change`` (the memory model's answer, ``memory.sharing``).  Ranks come from inference
(``analysis.inference``, which reads three-address code: the primal's statements) and, where it leaves
one unknown, from the elementwise and shape rules here; a tangent's rank is the one its value gives it
(noted as the statements are rewritten, ``has_rank``).
"""
from __future__ import annotations

import operator
from collections import Counter
from typing import Any, Optional

import numpy as np

from ...analysis.inference import infer
from ...core import ir, runtime
from ...core.kinds import NUMBER, Array, Kind, rank
from ...memory.sharing import Sharing
from ...rules import registry as rules

# Operations linear in each operand, elementwise with NumPy's broadcasting
SUMS = frozenset({operator.add, operator.sub, np.add, np.subtract})
SIGNS = frozenset({operator.neg, operator.pos, np.negative, np.positive})
PRODUCTS = frozenset({operator.mul, np.multiply})
QUOTIENTS = frozenset({operator.truediv, np.true_divide, np.divide})
MATMULS = frozenset({operator.matmul, np.matmul, np.dot})
ZEROS_LIKE = frozenset({runtime.zero_tangent, runtime.zeros_like, np.zeros_like})
_SAME_RANK = ZEROS_LIKE | {np.copy, np.asarray, runtime.writable_copy}  # (the first argument's rank; like's)
_COMPARISONS = frozenset({operator.lt, operator.le, operator.gt, operator.ge, operator.eq, operator.ne})
# (of every axis, with no options: a number)
_REDUCTIONS = frozenset({np.sum, np.mean, np.max, np.min, np.prod, np.amax, np.amin, np.var, np.std, np.median,
                         np.average, np.ptp, np.linalg.norm})
_MADE_OF_SHAPE: frozenset[Any] = frozenset({np.zeros, np.ones, np.full, np.empty})  # (as many axes as its shape has items)


class NotVector(Exception):
    """A statement with no exact vector form here (the message says which and why)."""


class Facts:
    """The tangents, ranks and shared memory of one tangent function (see the module docstring)."""

    def __init__(self, fn: ir.Function, tangent_params: list[str], kinds: dict[str, Kind]) -> None:
        self.fn = fn
        self.tangents = tangent_names(fn, tangent_params)
        self.kinds = infer(fn, kinds, unpacked=helper_results(fn), ignored=frozenset(self.tangents))[1]
        self.kinds.update({name: kind for name, kind in kinds.items() if name not in self.kinds})
        self.tangent_ranks: dict[str, Optional[int]] = {t: rank(kinds[t]) if t in kinds else None
                                                         for t in tangent_params}
        self.shapes: dict[str, int] = {}  # names bound to np.shape(a): the shape's length
        self.known_ranks()
        self.sharing = Sharing(fn, only_if_written=True, find_stale=False)

    def may_change(self, array: ir.Expr) -> bool:
        """Whether a store may write into memory ``array`` shares (the memory model's answer, of the
        one-direction code: its tangent arrays share memory where the vector code's do)."""
        return not isinstance(array, ir.Var) or self.sharing.may_change(array.name)

    def has_rank(self, target: str, value_rank: Optional[int]) -> None:
        """Note the rank of the tangent ``target``: one for all its assignments, or refused (a merge of a
        number and an array, say, rather than reshaped by guess)."""
        if value_rank is None:
            raise NotVector(f"{target} of unknown rank")
        if self.tangent_ranks.setdefault(target, value_rank) != value_rank:
            raise NotVector(f"{target} of rank {self.tangent_ranks[target]} given a value of rank {value_rank}")

    def rank_of_name(self, name: str) -> Optional[int]:
        if name in self.tangents:
            return self.tangent_ranks.get(name)
        return rank(self.kinds[name]) if name in self.kinds else None

    def is_integer(self, name: str) -> bool:
        """Whether ``name`` is a number read as an index (an integer: Python's indexing refuses a float)."""
        return name in self.kinds and rank(self.kinds[name]) == 0 and name not in self.tangents

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
        """The ranks of primal values inference leaves unknown (``zeros_like(x)``, an element of it, ``np.var``)
        that ``rank_of`` finds, and the shapes' lengths of values assigned once; then ``merged_ranks``."""
        assigned = Counter(t for stmt in ir.walk(self.fn.body) for t in ir.targets_of(stmt))
        for stmt in ir.walk(self.fn.body):
            if not (isinstance(stmt, ir.Assign) and assigned[stmt.target] == 1 and stmt.target not in self.tangents):
                continue
            if isinstance(stmt.value, ir.Call) and stmt.value.fn is np.shape:
                length = self.shape_length(stmt.value)
                if length is not None:
                    self.shapes[stmt.target] = length
            elif self.rank_of_name(stmt.target) is None:
                found = self.rank_of(stmt.value)
                if found is not None:
                    self.kinds[stmt.target] = NUMBER if found == 0 else Array(found)
        self.merged_ranks()

    def merged_ranks(self) -> None:
        """The ranks of primal names assigned more than once (a loop's carried value, a branch's) that
        inference leaves unknown: each the rank every value it is given has.  Found optimistically (a
        name takes the rank its known values agree on, to a fixed point through the loops), then kept only
        if every value of every name so ranked has exactly that rank; else none is kept."""
        values: dict[str, list[ir.Expr]] = {}
        for stmt in ir.walk(self.fn.body):
            for target in ir.targets_of(stmt):
                if target not in self.tangents and self.rank_of_name(target) is None:
                    values.setdefault(target, []).append(stmt.value if isinstance(stmt, ir.Assign) else ir.Var(target))
        guessed: dict[str, int] = {}
        changed = True
        while changed:
            changed = False
            for target, given in values.items():
                if target in guessed:
                    continue
                known = {r for r in map(self.rank_of, given) if r is not None}
                if len(known) == 1:
                    guessed[target] = known.pop()
                    self.kinds[target] = NUMBER if guessed[target] == 0 else Array(guessed[target])
                    changed = True
        if any(self.rank_of(v) != guessed[t] for t in guessed for v in values[t]):
            for target in guessed:  # (not every value agrees: none is known)
                del self.kinds[target]

    def key_parts(self, index: ir.Expr, array_rank: Optional[int]) -> tuple[tuple[ir.Expr, ...], int]:
        """The items of an index of integers, slices and ``None``, and how many axes it picks net of the new
        axes it adds; refused for any other index, or more items than the array has axes."""
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
                raise NotVector(f"an index {shown(item)} of a tangent (not an integer, slice or None)")
        if array_rank is None or slots > array_rank:
            raise NotVector("an index of a tangent of unknown rank")
        return tuple(items), picked

    def rank_of(self, e: ir.Expr) -> Optional[int]:
        """The rank of a primal expression, where elementwise and shape rules give it."""
        if isinstance(e, ir.Var):
            return self.rank_of_name(e.name)
        if isinstance(e, ir.Const):
            return 0 if isinstance(e.value, (bool, int, float, np.number)) else None
        if not isinstance(e, ir.Call):
            return None
        fn, args = e.fn, e.args
        if fn in _SAME_RANK and args and not e.kwargs:
            return self.rank_of(args[-1] if fn is runtime.writable_copy else args[0])
        if fn in _MADE_OF_SHAPE and args:
            return self.shape_length(args[0])
        if fn is np.size and len(args) == 1:
            return 0
        if fn in (runtime.unbroadcast, runtime.if_inexact) and len(args) == 2:
            return self.rank_of(args[1] if fn is runtime.unbroadcast else args[0])
        if fn in _REDUCTIONS and len(args) == 1 and all(isinstance(v, ir.Const) and (v.value is None or v.value is False)
                                                          for _, v in e.kwargs):
            return 0  # (over every axis)
        if fn in _REDUCTIONS and len(args) == 1 and all(
                isinstance(v, ir.Const) and (v.value is True if k == "keepdims" else v.value is None)
                for k, v in e.kwargs) and "keepdims" in dict(e.kwargs):
            return self.rank_of(args[0])  # (over every axis, each kept)
        if fn in product_adjoints() and len(args) == 3:
            return self.rank_of(args[1] if fn in product_adjoints()[::2] else args[2])  # (shaped as a, as b)
        if fn is operator.getitem and len(args) == 2 and not (reads(e) & self.tangents):
            held = self.rank_of(args[0])
            try:
                picked = self.key_parts(args[1], held)[1]
            except NotVector:
                return None
            return None if held is None else held - picked
        if getattr(fn, "__module__", None) == "math" or fn is float:  # (a float, whatever it is given)
            return 0
        if fn is np.roll and args:
            return self.rank_of(args[0])
        if fn is np.expand_dims and len(args) + len(e.kwargs) == 2:  # (by one axis: a tuple's adds more)
            axis = dict(e.kwargs).get("axis", args[-1])
            held = self.rank_of(args[0])
            one = isinstance(axis, ir.Const) and isinstance(axis.value, int)
            return None if held is None or not one else held + 1
        if (fn is np.concatenate or fn is np.stack) and args and isinstance(args[0], ir.Display) and args[0].items:
            items = {self.rank_of(item) for item in args[0].items}
            held = items.pop() if len(items) == 1 else None
            return None if held is None else held + (fn is np.stack)
        if e.kwargs:
            return None
        if fn is np.outer or fn is np.cumsum and len(args) == 1:  # (of the flattened operands)
            return 2 if fn is np.outer else 1
        if fn is np.transpose and args:
            return self.rank_of(args[0])
        if fn is np.trace and len(args) == 1:
            held = self.rank_of(args[0])
            return None if held is None or held < 2 else held - 2
        if fn in MATMULS and len(args) == 2:
            a, b = (self.rank_of(x) for x in args)
            if a is None or b is None or a == 0 or b == 0 or (fn is np.dot and max(a, b) > 2):
                return None
            return max(a, b) if min(a, b) >= 2 else a + b - 2
        if (isinstance(fn, np.ufunc) or fn in SUMS | SIGNS | PRODUCTS | QUOTIENTS | _COMPARISONS
                or fn in (operator.pow, abs, operator.abs)) and not e.kwargs:
            ranks = [self.rank_of(a) for a in args]
            return None if any(r is None for r in ranks) else max(r for r in ranks if r is not None)
        return None


def tangent_names(fn: ir.Function, params: list[str]) -> set[str]:
    """The tangent parameters and every name computed from one, or stored a value computed from one."""
    tangents = set(params)
    made_from: dict[str, set[str]] = {}  # a name -> the names a statement reading it binds or stores into
    for stmt in ir.walk(fn.body):
        if isinstance(stmt, ir.Unpack) and helper_tangent_call(stmt) is not None:
            tangents.update(stmt.targets[1:])  # (``y, t_y = t_helper.jvp(...)``: the value is primal)
            continue
        if isinstance(stmt, ir.Assign):
            made, read = {stmt.target}, reads(stmt.value)
        elif isinstance(stmt, ir.Store):
            made, read = {stmt.array}, reads(stmt.value) | reads(stmt.index)
        elif isinstance(stmt, ir.Unpack):
            made, read = set(stmt.targets), reads(stmt.value)
        else:
            continue
        for name in read:
            made_from.setdefault(name, set()).update(made)
    unfollowed = list(tangents)  # (followed once each: a chain of carried values costs its length)
    while unfollowed:
        for name in made_from.get(unfollowed.pop(), ()):
            if name not in tangents:
                tangents.add(name)
                unfollowed.append(name)
    return tangents


def helper_tangent_call(stmt: ir.Unpack) -> Any:
    """The helper's tangent function (a ``TangentCallee``) that ``stmt`` calls, ``y, t_y =
    t_helper.jvp(...)`` (a helper not inlined), or None."""
    call = stmt.value
    if isinstance(call, ir.Call) and isinstance(call.fn, ir.Part) and call.fn.name == "jvp":
        return call.fn.owner
    return None


def helper_results(fn: ir.Function) -> dict[str, Kind]:
    """The kinds of the values helpers' tangent code hands back (``y`` of ``y, t_y = t_helper.jvp(...)``), by
    the rank of the tangent its vector version returns, where it has one."""
    found: dict[str, Kind] = {}
    for stmt in ir.walk(fn.body):
        if not isinstance(stmt, ir.Unpack):
            continue
        result_rank = getattr(getattr(helper_tangent_call(stmt), "vector", None), "result_rank", None)
        if result_rank is not None:
            found[stmt.targets[0]] = NUMBER if result_rank == 0 else Array(result_rank)
    return found


def product_adjoints() -> tuple[Any, Any, Any, Any]:
    """The templates' ``matmul_grad_a``, ``matmul_grad_b`` (the adjoints of ``a @ b``), ``dot_grad_a`` and
    ``dot_grad_b`` (of ``np.dot(a, b)``: the same where neither is a stack of matrices, the only ranks
    vector mode takes), the adjoints of ``a`` at even positions."""
    return helper("matmul_grad_a"), helper("matmul_grad_b"), helper("dot_grad_a"), helper("dot_grad_b")


def helper(name: str) -> Any:
    """The templates' helper ``name`` (the function object, recognised by identity), or None."""
    return rules.helpers().get(name)


def reads(e: Any) -> set[str]:
    return set(ir.names_read(e)) if e is not None else set()


def name_of(fn: Any) -> str:
    return getattr(fn, "__name__", repr(fn))


def shown(e: Any) -> str:
    return type(e).__name__ if not isinstance(e, ir.Call) else f"a call of {name_of(e.fn)}"
