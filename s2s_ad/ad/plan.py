"""The recording plan of an adjoint: what the forward sweep records, in which slot, read back where.

Input: the reverse walk (``reverse.py``, ``recording.py``) declares each slot
as it decides to record something.  Output: an immutable ``RecordingPlan``
that the adjoint ``ir.Function`` carries (``Function.plan``), from which its
``ir.Push`` and ``ir.Pop`` statements were made.

Invariants, checked by ``tape.check_tape``: every ``Push``/``Pop`` names a
slot of the plan and carries as many values as the slot holds; every slot is
pushed and popped; the reverse sweep pops in the mirror order of the forward
sweep's pushes, on every path.

A slot carries what a typed stack needs besides the values themselves: the
kind of each value where the analysis knows it (``None``: not known until run
time), and the trip counts of the loops around the push, outermost first,
where they are known when the loop starts (``None`` for a ``while`` loop):
their product bounds how many records the slot holds.  The ``cut`` slot is
the one the split form hands over from the forward part to the backward part.
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any, Optional

from ..core import ir

class TapeViolation(AssertionError):
    """Generated code whose pushes and pops do not pair up (a bug in s2s_ad, never the user's)."""


CUT = "cut"  # the slot that carries the values live across the cut of the split form


@dataclass(frozen=True)
class RecordedValue:
    """One value of a slot: what is pushed, the name it is popped into, and its kind if known."""

    value: ir.Expr
    target: str
    kind: Any = None  # a kinds.Kind, or None where only the run time knows


@dataclass(frozen=True)
class Slot:
    """A place on the tape: ``where`` says in words what records it (a loop trip, a branch, a store)."""

    name: str
    where: str
    values: tuple[RecordedValue, ...]
    trips: tuple[Optional[ir.Expr], ...] = ()  # trip counts of the loops around the push, outermost first
    line: Optional[int] = None

    def without(self, dropped: set[int]) -> "Slot":
        """The slot without the values at the positions ``dropped``."""
        kept = tuple(v for i, v in enumerate(self.values) if i not in dropped)
        return dataclasses.replace(self, values=kept)


@dataclass(frozen=True)
class RecordingPlan:
    """Every slot of one adjoint, in the order the reverse walk declared them; ``tape`` is the name
    a target's spelling keeps the records in (``target.ListTape``, ``target.TupleTape``)."""

    tape: str
    slots: tuple[Slot, ...] = ()

    def slot(self, name: str) -> Slot:
        return next(s for s in self.slots if s.name == name)

    def names(self) -> set[str]:
        return {s.name for s in self.slots}

    def replaced(self, slots: dict[str, Optional[Slot]]) -> "RecordingPlan":
        """The plan with slots swapped by name (``None``: dropped)."""
        kept = tuple(slots.get(s.name, s) for s in self.slots)
        return dataclasses.replace(self, slots=tuple(s for s in kept if s is not None))

    def describe(self, text: Any) -> list[str]:
        """One line per slot for the facts dump; ``text`` renders an expression as source."""
        lines = []
        for slot in self.slots:
            values = ", ".join(f"{text(v.value)}" + (f" ({v.kind})" if v.kind is not None else "")
                               for v in slot.values)
            trips = [text(t) if t is not None else "unknown" for t in slot.trips]
            bound = f"; {' x '.join(trips)} records at most" if trips else ""
            lines.append(f"#   {slot.name}: {slot.where}{bound}: {values}")
        return lines


class PlanDraft:
    """The slots declared so far by one reverse walk (mutable until ``done``)."""

    def __init__(self, tape: str) -> None:
        self.tape = tape
        self.slots: list[Slot] = []

    def declare(self, where: str, values: tuple[ir.Expr, ...], targets: tuple[str, ...],
                kinds: tuple[Any, ...], trips: tuple[Optional[ir.Expr], ...], line: Optional[int],
                name: Optional[str] = None) -> str:
        """A new slot holding ``values`` popped into ``targets``; returns its name."""
        name = name or f"s{len(self.slots) + 1}"
        recorded = tuple(RecordedValue(v, t, k) for v, t, k in zip(values, targets, kinds))
        self.slots.append(Slot(name, where, recorded, trips, line))
        return name

    def done(self) -> RecordingPlan:
        return RecordingPlan(self.tape, tuple(self.slots))
