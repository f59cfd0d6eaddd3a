"""Stage 3b: a number one block computes twice is computed once (``merge_repeated_values``).

Input: an SSA ``ir.Function`` and its facts (which values are numbers, which arrays and of what rank).
Output: the same function and its facts (``Analysis.with_merged``), where a statement ``b = e`` of a
block (the function's top level, a loop's body, a branch) is gone and ``b`` is read as ``a``, because an
earlier statement of the same block assigned ``a = e`` and nothing between may have changed the value
of ``e``.  ``e`` is one of:

* a pure operation (declared ``reusable`` in templates/: arithmetic, comparisons) of numbers, whose
  value is a number (``t + 1``, ``dt * omega_t``);
* an element of an array, ``x[i]`` or ``x[i, j]``, as many integer parts as ``x`` has axes (a number,
  never a view), where no statement between may write that element: a store into memory ``x`` may
  share (the memory model, ``memory.sharing``) at an index not proven to be another element, a call
  that is handed such memory, a call of the user's function, or a nested block doing any of these.

Lowering reuses a value within one statement already (``temp[t] + a * (outside[t] - temp[t])``); it
cannot across statements, since before the facts a repeated ``x[i]`` may be a view, whose contents a
store between changes.  Why: a time-stepping loop written a line per state reads ``theta[t]`` and
computes ``t + 1`` once per line; each repeat costs a subscript each trip of the forward sweep and a
sum of adjoints in the reverse sweep, and is not what a careful person writes.

Blocks do not share what they computed: a loop's body computes its values each trip, and a value
computed before a loop may be changed by the loop's later stores, or its operands bound again by it.
Two indexes are proven different elements only as ``k + c1`` and ``k + c2`` with ``c1 != c2`` and
both at least 0, ``k`` a loop index over a range starting at 0 or above: both non-negative, so neither
counts from the end (``x[-1]`` and ``x[0]`` are one element of a vector of one).
"""
from __future__ import annotations

import dataclasses
import functools
import operator
from collections import Counter
from typing import Optional

from ..analysis.facts import Analysis
from ..core import ir
from ..core.kinds import Array, Number
from ..frontend.callables import is_user_function
from ..memory.sharing import Sharing
from ..rules import registry as rules
from .scalar_cells import integer_names, sum_sign

# An offset index: the name it adds a constant to, and the constant
Offset = tuple[str, int]


def merge_repeated_values(fn: ir.Function, facts: Analysis) -> tuple[ir.Function, Analysis]:
    """``fn`` with each number a block computes again read from its first computation, and its facts."""
    numbers = frozenset(name for name, kind in facts.kinds.items() if isinstance(kind, Number))
    merging = _Merging(fn, facts, numbers)
    body = merging.block(fn.body)
    if not merging.same:
        return fn, facts
    return dataclasses.replace(fn, body=body), facts.with_merged(merging.same, merging.dropped)


class _Merging:
    """What the function tells once (bindings, integers, memory), and the merges made so far."""

    def __init__(self, fn: ir.Function, facts: Analysis, numbers: frozenset[str]) -> None:
        self.facts = facts
        self.numbers = numbers
        self.bound_once = {name for name, count in Counter(
            t for stmt in ir.walk(fn.body) for t in ir.targets_of(stmt)).items() if count == 1} - set(fn.params)
        self.fn = fn
        self.same: dict[str, str] = {}  # a dropped name -> the name read instead
        self.dropped: list[ir.Stmt] = []

    # What only element reads ask, found on first asking (most functions read no element twice)
    @functools.cached_property
    def integers(self) -> set[str]:
        return integer_names(self.fn)

    @functools.cached_property
    def offsets(self) -> dict[str, Offset]:
        return _offsets(self.fn, self.bound_once)

    @functools.cached_property
    def non_negative(self) -> set[str]:
        return _non_negative_loop_indexes(self.fn, self.bound_once)

    @functools.cached_property
    def sharing(self) -> Sharing:
        return Sharing(self.fn, numbers=self.numbers)

    def block(self, body: list[ir.Stmt]) -> list[ir.Stmt]:
        """``body`` with its repeated numbers read from their first computation (its nested blocks too,
        each on its own)."""
        computed: dict[tuple, str] = {}  # an operation's key -> the name holding its value
        out: list[ir.Stmt] = []
        for stmt in body:
            if self.same:
                stmt = ir.renamed([stmt], self.same)[0]
            key = self.key_of(stmt)
            if key is not None and key in computed:
                assert isinstance(stmt, ir.Assign)
                self.same[stmt.target] = computed[key]
                self.dropped.append(stmt)
                continue
            stmt = ir.with_blocks(stmt, self.block)
            self.forget_changed(stmt, computed)
            if key is not None:
                assert isinstance(stmt, ir.Assign)
                computed[key] = stmt.target
            out.append(stmt)
        return out

    def key_of(self, stmt: ir.Stmt) -> Optional[tuple]:
        """What identifies the number ``stmt`` assigns, where a later equal one may read it; else None."""
        if not (isinstance(stmt, ir.Assign) and not stmt.merge and stmt.target in self.bound_once
                and stmt.target in self.numbers and isinstance(stmt.value, ir.Call) and not stmt.value.kwargs):
            return None
        call = stmt.value
        if call.fn is operator.getitem:
            return self.element_key(call)
        if rules.fact(call.fn, "reusable") and all(self.is_number(a) for a in call.args):
            return ("value", call.fn, tuple(ir.value_key(a) for a in call.args))
        return None

    def element_key(self, call: ir.Call) -> Optional[tuple]:
        """``("element", x, parts)`` for ``x[parts]`` an element of the array ``x``, every part an integer."""
        base, index = call.args
        if not isinstance(base, ir.Var) or not isinstance(self.facts.fact(base), Array):
            return None
        parts = ir.index_parts(index)
        if self.facts.rank_of(base) != len(parts) or not all(map(self.is_integer, parts)):
            return None
        return ("element", base.name, tuple(ir.value_key(p) for p in parts))

    def is_number(self, atom: ir.Expr) -> bool:
        if isinstance(atom, ir.Const):
            return isinstance(atom.value, (int, float)) and not isinstance(atom.value, bool)
        return isinstance(atom, ir.Var) and atom.name in self.numbers

    def is_integer(self, atom: ir.Expr) -> bool:
        if isinstance(atom, ir.Const):
            return atom.value.__class__ is int
        return isinstance(atom, ir.Var) and atom.name in self.integers

    def forget_changed(self, stmt: ir.Stmt, computed: dict[tuple, str]) -> None:
        """Leave out of ``computed`` what ``stmt`` may change: values whose operands or holder it binds
        again, elements it may write."""
        bound = set(ir.targets_of(stmt)).union(*(ir.assigned_names(inner) for inner in ir.blocks(stmt)))
        for key, holder in list(computed.items()):
            if holder in bound or any(isinstance(p, ir.Var) and p.name in bound for p in _atoms_of(key)):
                del computed[key]
            elif key[0] == "element" and self.may_write(stmt, key):
                del computed[key]

    def may_write(self, stmt: ir.Stmt, key: tuple) -> bool:
        """Whether ``stmt`` (or a statement it holds) may write the element ``key`` names."""
        _, base, parts = key
        for inner in ir.walk([stmt]):
            if isinstance(inner, ir.Store):
                if self.sharing.shares(inner.array, base) and not (
                        inner is stmt and inner.array == base and self.other_element(inner.index, parts)):
                    return True
            for expr in ir.exprs_of(inner):
                if any(self.call_may_write(call, base) for call in ir.calls_in(expr)):
                    return True
        return False

    def call_may_write(self, call: ir.Call, base: str) -> bool:
        """Whether ``call`` may write into memory ``base`` shares: a user's function may write anything;
        another function only what it is handed, and a pure one nothing."""
        if is_user_function(call.fn):
            return True
        if rules.fact(call.fn, "reusable"):
            return False
        handed = list(call.args) + [value for _, value in call.kwargs]
        return any(self.sharing.operands(arg) & self.sharing.of(base) for arg in handed)

    def other_element(self, index: ir.Expr, parts: tuple) -> bool:
        """Whether the store's ``index`` is proven another element than ``parts`` (value keys) name."""
        stored = ir.index_parts(index)
        if len(stored) != len(parts):
            return False
        return any(self.different(ir.value_key(a), b) for a, b in zip(stored, parts))

    def different(self, a: object, b: object) -> bool:
        """Whether two index parts (value keys) are proven to differ, both counted from the start."""
        first, second = self.offset_of(a), self.offset_of(b)
        if first is None or second is None:
            return False
        (root_a, c_a), (root_b, c_b) = first, second
        return root_a == root_b and c_a != c_b and c_a >= 0 and c_b >= 0 and \
            (root_a == "" or root_a in self.non_negative)

    def offset_of(self, key: object) -> Optional[Offset]:
        """An index part as a non-negative root plus a constant: ("", c) for the constant c."""
        if isinstance(key, tuple) and len(key) == 3 and key[0] == "constant" and key[1] is int:
            return ("", key[2])
        if isinstance(key, ir.Var):
            return self.offsets.get(key.name, (key.name, 0))
        return None


def _atoms_of(key: tuple) -> list:
    """The operands a computed value's key names (its function's arguments, or an element's index)."""
    if key[0] == "element":
        return [ir.Var(key[1])] + list(key[2])
    return list(key[2])


def _offsets(fn: ir.Function, bound_once: set[str]) -> dict[str, Offset]:
    """Each name bound once to ``k + c``, ``c + k`` or ``k - c`` (``c`` an integer constant), as ``k``'s
    own root and the sum of the constants: ``t_plus_1`` -> ``("t", 1)``."""
    offsets: dict[str, Offset] = {}
    for stmt in ir.walk(fn.body):
        if not (isinstance(stmt, ir.Assign) and stmt.target in bound_once and isinstance(stmt.value, ir.Call)):
            continue
        found = _offset_call(stmt.value)
        if found is not None:
            root, constant = found
            inner_root, inner = offsets.get(root, (root, 0))
            offsets[stmt.target] = (inner_root, inner + constant)
    return offsets


def _offset_call(call: ir.Call) -> Optional[Offset]:
    sign = sum_sign(call.fn)
    if len(call.args) != 2 or call.kwargs or sign is None:
        return None
    left, right = call.args
    if isinstance(left, ir.Var) and isinstance(right, ir.Const) and right.value.__class__ is int:
        return (left.name, sign * right.value)
    if sign == 1 and isinstance(right, ir.Var) and isinstance(left, ir.Const) and left.value.__class__ is int:
        return (right.name, left.value)
    return None


def _non_negative_loop_indexes(fn: ir.Function, bound_once: set[str]) -> set[str]:
    """The indexes of loops over a name bound once to ``range(stop)`` or ``range(start, stop[, step])``
    with ``start`` an integer constant at least 0 and ``step``, if given, one above 0."""
    ranges = {}
    for stmt in ir.walk(fn.body):
        if isinstance(stmt, ir.Assign) and stmt.target in bound_once and isinstance(stmt.value, ir.Call) \
                and stmt.value.fn is range and not stmt.value.kwargs:
            ranges[stmt.target] = stmt.value.args
    indexes: Counter = Counter(stmt.index for stmt in ir.walk(fn.body) if isinstance(stmt, ir.For))
    found = set()
    for stmt in ir.walk(fn.body):
        if isinstance(stmt, ir.For) and indexes[stmt.index] == 1 and isinstance(stmt.iterable, ir.Var) \
                and stmt.iterable.name in ranges and _counts_up_from_zero_or_more(ranges[stmt.iterable.name]):
            found.add(stmt.index)
    return found


def _counts_up_from_zero_or_more(args: tuple) -> bool:
    if len(args) == 1:
        return True
    constant = lambda a, least: isinstance(a, ir.Const) and a.value.__class__ is int and a.value >= least
    return constant(args[0], 0) and (len(args) == 2 or constant(args[2], 1))
