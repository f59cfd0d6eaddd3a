"""Stage 3: facts about an SSA function that the generators need.

Input: an ``ir.Function`` in SSA form, the parameters to differentiate, and
what is known of each parameter's kind (a ``kinds.Kind``: a number, an
array, a tuple, or unknown).  Output: an ``Analysis`` with

* ``active``: the values that depend on a ``wrt`` parameter *and* reach the
  result; only these get adjoint code;
* ``shape``: a shape class per value.  ``SCALAR`` means a number; two values
  with the same integer class provably have the same shape.  The reverse
  generator reduces a broadcast contribution only where classes differ.
* ``uses``: how many times each value is read;
* ``varied``: the values that depend on a ``wrt`` parameter (forward mode
  follows these);
* ``ndim``: the rank of the arrays whose rank is known (parameters of
  known rank, arrays made by ``np.zeros(n)``, ``np.zeros((n, m))``,
  ``np.zeros_like(a)``, ``np.copy(a)``, and elements read from them);
* ``kinds``: what is known of each value, a ``kinds.Kind`` (``ndim`` and
  ``items``, the item kinds of tuples, are read off it for the generators);
* ``inexact``: arrays provably of floats, whose stores keep derivatives.


Shape classes and kinds are a fixed point over loops and branches (``infer``,
inference.py): a merge (a value assigned on several paths) has what holds on
every path, passes repeat until nothing changes, and should they not settle,
every merge is taken as unknown.  A fact is only ever what holds on every run:
where nothing can be proven the generators do what is right at run time
(``unbroadcast``, ``zeros_like``, ``if_inexact``, ``add_adjoint``).  Activity
is activity.py's; this module puts the facts together (``analyse``) and keeps
them true through the passes that rewrite the function after the analysis.
The checks those passes make are checks.py's and lost_derivatives.py's.
"""
from __future__ import annotations

import dataclasses
from collections import Counter
from dataclasses import dataclass, field
from typing import Any, Iterable, Optional

from ..core import ir, language
from ..core.kinds import TRUTH, NUMBER, UNKNOWN, Array, Kind, Sequence, callee_kind, constant_kind, dims_of
from .activity import _flow_table, activity, varied_names
from .inference import (SCALAR, ResultKind, ShapeClass, _constant_kind, _dims_class, _float_arrays,
    _ranks_and_items, _sliced_dims, infer, may_be_sequence_operation)

# (the tests read SCALAR, UNKNOWN and infer from here, beside Analysis and analyse)
__all__ = ["SCALAR", "UNKNOWN", "Analysis", "analyse", "infer"]


@dataclass
class Analysis:
    active: set[str]
    shape: dict[str, ShapeClass]
    uses: Counter = field(default_factory=Counter)
    varied: set[str] = field(default_factory=set)
    ndim: dict[str, int] = field(default_factory=dict)
    items: dict[str, tuple] = field(default_factory=dict)  # tuples: the kind of each item
    kinds: dict[str, Kind] = field(default_factory=dict)  # what is known of each value (kinds.py)
    inexact: set[str] = field(default_factory=set)  # arrays provably of floats: stores keep derivatives

    def kind_of(self, expr: ir.Expr) -> Kind:
        """What a callee is told of an argument (``kinds.callee_kind``): a number or truth value, an
        array's rank where it is known, a tuple of those, a string or None as a ``kinds.Constant`` (the
        callee is specialised on its value), else unknown."""
        constant = constant_kind(expr.value) if isinstance(expr, ir.Const) else None
        if constant is not None:
            return constant
        if isinstance(expr, ir.Display) and expr.kind == "tuple":  # (x, 2.0): a tuple of these kinds
            return callee_kind(self.fact(expr))
        rank = self.rank_of(expr)
        if rank == 0:
            return TRUTH if self.fact(expr) == TRUTH else NUMBER
        return Array(rank) if rank is not None else UNKNOWN

    def fact(self, expr: ir.Expr) -> Kind:
        """What is known of an operand (a ``kinds.Kind``)."""
        if isinstance(expr, ir.Var):
            return self.kinds.get(expr.name, UNKNOWN)
        if isinstance(expr, ir.Const):
            return _constant_kind(expr.value)
        if isinstance(expr, ir.Display):
            return Sequence(tuple(map(self.fact, expr.items)), expr.kind)
        return UNKNOWN

    def sequence_operation(self, call: ir.Call) -> bool:
        """True if ``call`` may concatenate or repeat tuples or lists (see ``may_be_sequence_operation``)."""
        return may_be_sequence_operation(call.fn, [self.fact(a) for a in call.args], call.args)

    def rank_of(self, expr: ir.Expr) -> Optional[int]:
        if isinstance(expr, ir.Var):
            return 0 if self.shape.get(expr.name) == SCALAR else self.ndim.get(expr.name)
        return 0 if self.shape_of(expr) == SCALAR else None

    def part_class(self, array: str, index: ir.Expr) -> Optional[ShapeClass]:
        """The shape class of ``array[index]`` where the index is of slices, numbers and new axes
        and every length it keeps is known (the class of dims, ``_dims_class``), else None."""
        dims = _sliced_dims(dims_of(self.kinds.get(array, UNKNOWN)), index,
                            lambda e: None if self.fact(e) == TRUTH else self.shape_of(e))
        if dims == ():
            return SCALAR
        return _dims_class(Array(len(dims), dims)) if dims is not None else None

    def shape_of(self, expr: ir.Expr) -> Optional[ShapeClass]:
        if isinstance(expr, ir.Var):
            return self.shape.get(expr.name)
        if isinstance(expr, ir.Const) and (isinstance(expr.value, (int, float)) or language.is_library_scalar(expr.value)):
            return SCALAR
        return None

    # -- the facts kept true through the passes that rewrite the function after the analysis --------
    # (pipeline._analysed; ``S2S_AD_CHECK_FACTS=1`` derives them again after each pass and compares)

    def with_checks_changed(self, dropped: Iterable[ir.Stmt] = (), added: Iterable[ir.Stmt] = ()) -> "Analysis":
        """The facts once the statements ``dropped`` are taken out of the function and ``added`` put in,
        all of them run-time checks, which bind no name and carry no derivative: only the counts of
        reads change."""
        dropped, added = list(dropped), list(added)
        if any(ir.targets_of(s) or ir.blocks(s) for s in dropped + added):
            raise ValueError("with_checks_changed: only statements that bind no name (run-time checks)")
        uses = Counter(self.uses)
        uses.subtract(_names_read_by(dropped))
        uses.update(_names_read_by(added))
        return dataclasses.replace(self, uses=+uses)

    def with_merged(self, same: dict[str, str], dropped: Iterable[ir.Stmt]) -> "Analysis":
        """The facts once each name ``m`` of ``same``, which holds the same value as ``same[m]`` (an
        operation computed twice, computed once by hoisting), is read as ``same[m]`` and its assignment
        (among ``dropped``) is gone.  The survivor is read where either was, so it is varied where
        either was and active (reaches the result) where either was: its own facts alone would leave
        it inactive when only the dropped one reached the result (``a = y * y`` unused, then
        ``np.sin(y * y)``), and the derivative through it would be lost.  Its kind and shape are
        the merged name's (the same operation on the same operands)."""
        dropped = list(dropped)
        uses = Counter(self.uses)
        uses.subtract(_names_read_by(dropped))
        active, varied = set(self.active), set(self.varied)
        for gone, survivor in same.items():
            uses[survivor] += uses.pop(gone, 0)
            if gone in active:
                active.add(survivor)
            if gone in varied:
                varied.add(survivor)
        gone_names = set(same)
        without = lambda facts: {k: v for k, v in facts.items() if k not in gone_names}
        return Analysis(active - gone_names, without(self.shape), +uses, varied - gone_names, without(self.ndim),
                        without(self.items), without(self.kinds), self.inexact - gone_names)


def _names_read_by(stmts: Iterable[ir.Stmt]) -> Counter:
    """How many times the statements read each name, their nested blocks included (as ``Analysis.uses``)."""
    return Counter(name for stmt in ir.walk(list(stmts)) for expr in ir.exprs_of(stmt)
                   for name in ir.names_read(expr))


def analyse(fn: ir.Function, wrt: Iterable[str], kinds: dict[str, Any],
            result_kind: Optional[ResultKind] = None) -> Analysis:
    uses = _names_read_by(fn.body)
    wrt = list(wrt)
    shape, kind = infer(fn, kinds, result_kind)
    ndim, items = _ranks_and_items(kind)
    table = _flow_table(fn)  # computed once: both fixed points walk it several times
    varied = varied_names(fn, wrt, table)
    return Analysis(activity(fn, wrt, table, varied), shape, uses, varied, ndim, items, kind, _float_arrays(fn))
