"""Where each adjoint of the reverse sweep lives, and how contributions to it are added.

Input: the SSA function being reversed, its ``wrt`` parameters and its
``Analysis``.  ``Adjoints`` is the ledger the parts of the reverse sweep
(``reverse.py``, ``assignment_adjoints.py``, ``store_adjoints.py``,
``recording.py``) share: the adjoint expression held for each active name so
far, the statements of the block being reversed (``out``) and the fresh names
taken.  Output: statements appended to ``out``, and the invariants the seeds
describe (000): the first contribution to an adjoint is an assignment and
later ones add; a contribution that is a bare adjoint passes straight through
(no statement) only for a value bound once, in the block being reversed, and
not pinned to its own name; zero only where no contribution may happen
(``zero_of``: ``0.0`` for a proven number, else zeros shaped like the value at
run time); an adjoint updated in place is held in an array the sweep owns; a
broadcast contribution is reduced to its operand's shape only where the shape
classes differ.
"""
from __future__ import annotations

import operator
from typing import Any, Optional

from ..core import ir, language, runtime
from ..analysis.facts import Analysis
from ..analysis.inference import SCALAR
from ..core.kinds import Array, Kind, Number, derivative_kind
from ..frontend.callables import is_user_function
from ..memory.lists import made_lists
from ..rules import registry as rules


class Adjoints:
    """The adjoints of one reverse sweep, the names they live in, and the statements it emits."""

    def __init__(self, fn: ir.Function, wrt: list[str], facts: Analysis) -> None:
        self.facts = facts
        self.adjoint: dict[str, ir.Expr] = {}
        self.out: list[ir.Stmt] = []
        self.taken = ir.NameSet(ir.assigned_names(fn.body) | set(fn.params))
        self.names: dict[str, str] = {}
        self.line: Optional[int] = None
        self.pinned: set[str] = set(wrt)  # adjoints that must live in their own name
        self.local: set[str] = set()  # names bound in the block being reversed
        self.definitions = {s.target: s for s in ir.walk(fn.body) if isinstance(s, ir.Assign) and not s.merge}
        # Adjoints updated in place (d_a[i] = ...): always held in an array the sweep owns.
        self.owned: set[str] = set()
        self.lists = _sequences(fn, facts.kinds)  # names that may hold a list or tuple (adjoints: sequences too)

    # -- names and emission ------------------------------------------------

    def fresh(self, base: str) -> str:
        return ir.fresh_name(base, self.taken)

    def adjoint_name(self, name: str) -> str:
        """``d_<name>``, unless the user's code already uses that name."""
        if name not in self.names:
            self.names[name] = self.fresh("d_" + name)
        return self.names[name]

    def emit(self, stmt: ir.Stmt) -> None:
        self.out.append(stmt)

    def assign(self, target: str, value: ir.Expr) -> None:
        self.emit(ir.Assign(target, value, self.line))

    def zero(self, name: str) -> ir.Expr:
        return zero_of(self.facts.fact(ir.Var(name)), ir.Var(name))

    def final_adjoint(self, param: str) -> ir.Expr:
        if param in self.adjoint:
            return self.adjoint[param]
        self.assign(self.adjoint_name(param), self.zero(param))
        return ir.Var(self.adjoint_name(param))

    # -- contributions -----------------------------------------------------

    def distribute(self, contribution: ir.Expr, operand: ir.Expr, stmt: ir.Assign, elementwise: bool) -> None:
        """Hand ``contribution`` (from the adjoint of ``stmt``'s target) to ``operand``: a name adds it to its
        adjoint (reduced where an elementwise operation may have broadcast the operand), a display hands
        each of its items its part."""
        if isinstance(operand, ir.Var):
            if operand.name in self.facts.active:
                if elementwise:
                    contribution = self.reduce(contribution, operand, stmt.target)
                self.accumulate(operand.name, contribution)
            return
        if isinstance(operand, ir.Display):
            if not (isinstance(contribution, ir.Display) and len(contribution.items) == len(operand.items)):
                if elementwise:  # NumPy made an array of the display, which the operation may have broadcast
                    contribution = ir.Call(runtime.unbroadcast, (contribution, operand))
                whole = self.fresh(f"parts_{stmt.target}")
                self.assign(whole, contribution)
                contribution = ir.Display("tuple", tuple(
                    ir.Call(operator.getitem, (ir.Var(whole), ir.Const(i))) for i in range(len(operand.items))))
            for item, part in zip(operand.items, contribution.items):
                self.distribute(part, item, stmt, elementwise)

    def reduce(self, contribution: ir.Expr, operand: ir.Var, result: str) -> ir.Expr:
        """Undo broadcasting, where it can have happened."""
        mine = self.facts.shape.get(operand.name)
        theirs = self.facts.shape.get(result)
        if mine == theirs:
            return contribution
        if mine == SCALAR:
            return ir.Call(language.sum, (contribution,))
        known = _broadcast_sum(contribution, mine, theirs)
        return known if known is not None else ir.Call(runtime.unbroadcast, (contribution, operand))

    def accumulate(self, name: str, contribution: ir.Expr) -> None:
        """Add ``contribution`` to the adjoint of ``name``: the first is assigned (or passes straight
        through, where an alias is safe), later ones add."""
        current = self.adjoint.get(name)
        target = self.adjoint_name(name)
        # (a list's adjoints are lists, one piece per item, which + would join: added item by item)
        add = runtime.adjoints_added if name in self.lists else operator.add
        if name in self.owned and current is not None:  # a sum is a new array: still ours
            self.assign(target, ir.Call(add, (current, contribution)))
            return
        if current is None:
            if isinstance(contribution, ir.Var) and self._may_alias(name):
                self.adjoint[name] = contribution  # passes straight through
                return
            self.assign(target, contribution)
        else:
            self.assign(target, ir.Call(add, (current, contribution)))
        self.adjoint[name] = ir.Var(target)

    def _may_alias(self, name: str) -> bool:
        """An alias is safe only for a value bound once, in this very block."""
        return name not in self.pinned and name in self.local and name in self.definitions

    def canonical(self, name: str) -> None:
        """Make sure the adjoint of ``name`` lives in its own name (``d_name``)."""
        target = self.adjoint_name(name)
        current = self.adjoint.get(name)
        if current is None:
            self.assign(target, self.zero(name))
        elif not (isinstance(current, ir.Var) and current.name == target):
            self.assign(target, current)
        self.adjoint[name] = ir.Var(target)

    def own(self, name: str) -> None:
        """Hold the adjoint of ``name`` in an array of its own, ready for in-place updates."""
        target = self.adjoint_name(name)
        current = self.adjoint.get(name)
        if current is None:
            self.assign(target, ir.Call(runtime.zeros_like, (ir.Var(name),)))
        elif not (isinstance(current, ir.Var) and current.name == target and name in self.owned):
            self.assign(target, ir.Call(runtime.writable_copy, (current, ir.Var(name))))
        self.adjoint[name] = ir.Var(target)
        self.owned.add(name)


def _sequences(fn: ir.Function, kinds: dict[str, Kind]) -> frozenset[str]:
    """The names of ``fn`` that may hold a list or tuple whose adjoint is one too (a piece per item, which
    ``+`` would join): a list the function makes (``memory.lists.made_lists``), the result of a call
    declared ``returns_sequence`` (np.split, np.linalg.eigh) or of a user's function not proven a number
    or an array (a helper that builds and returns a list), and a copy of any of them."""
    found = set(made_lists(fn))
    copies = []
    for stmt in ir.walk(fn.body):
        if isinstance(stmt, ir.Assign) and isinstance(stmt.value, ir.Call) and (
                rules.fact(stmt.value.fn, "returns_sequence") or (
                    is_user_function(stmt.value.fn) and not isinstance(kinds.get(stmt.target), (Array, Number)))):
            found.add(stmt.target)
        elif isinstance(stmt, ir.Assign) and isinstance(stmt.value, ir.Var):
            copies.append((stmt.target, stmt.value.name))
    grown = True
    while grown:
        grown = False
        for target, source in copies:
            if source in found and target not in found:
                found.add(target)
                grown = True
    return frozenset(found)


def zero_of(kind: Kind, value: ir.Expr) -> ir.Expr:
    """The adjoint of ``value`` (of kind ``kind``) where nothing contributed, written at once (the
    reverse sweep holds no symbolic zero: an adjoint nothing reaches is never built): ``0.0`` only
    where the adjoint's kind (``kinds.derivative_kind``) is a proven number, else zeros shaped like
    the value at run time (a wrong guess would change the result's shape)."""
    if isinstance(derivative_kind(kind), Number):
        return ir.Const(0.0)
    return ir.Call(runtime.zeros_like, (value,))


def _broadcast_sum(contribution: ir.Expr, mine: Any, theirs: Any) -> Optional[ir.Expr]:
    """``np.sum`` of ``contribution`` over the axes broadcasting added, where both shape classes
    are dims (``inference._dims_class``: every axis's length known); None otherwise.

    The result's extra leading axes are summed away; an axis where the operand has length 1 and
    the result a symbol is summed keeping the axis.
    """
    if not (isinstance(mine, tuple) and isinstance(theirs, tuple)):
        return None
    mine, theirs = mine[1:], theirs[1:]
    extra = len(theirs) - len(mine)
    if extra < 0 or any(m != 1 and m != t for m, t in zip(mine, theirs[extra:])):
        return None  # (not a broadcast NumPy would have done: leave it to the run time)
    kept = tuple(i for i, (m, t) in enumerate(zip(mine, theirs[extra:])) if m == 1 and t != 1)
    if (extra or kept) and isinstance(contribution, ir.Call) and contribution.fn is operator.neg:
        summed = _broadcast_sum(contribution.args[0], ("dims",) + mine, ("dims",) + theirs)
        if summed is not None:  # (always: the same shape classes pass the same checks)
            return ir.Call(operator.neg, (summed,))  # negate the small sum, not the large array
    if extra:
        contribution = ir.Call(language.sum, (contribution,), (("axis", _axes(tuple(range(extra)))),))
    if kept:
        contribution = ir.Call(language.sum, (contribution,), (("axis", _axes(kept)), ("keepdims", ir.Const(True))))
    return contribution


def _axes(axes: tuple) -> ir.Expr:
    return ir.Const(axes[0]) if len(axes) == 1 else ir.Display("tuple", tuple(ir.Const(a) for a in axes))
