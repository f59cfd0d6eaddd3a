"""Views the reverse sweep reads as they were when bound, kept under names of their own (issue 31).

Input: the SSA body being reversed, the names the reverse sweep reads that may share memory a later
store writes (``ReverseSweep._snapshots``: a view ``b_part = b[t:t + 3]`` of an array written after
it), and the forward sweep and reverse sweep as first generated, which read those names.  Output:
the copies' names (``twins``), their bindings beside the primal ones (``after``), and both sweeps
and the recording plan reading the copies (``read_copies``, ``plan_reading_copies``).

The reverse sweep needs what such a name held when it was bound: that is what every primal read of
it saw (a read after a write into its array is of a view taken again, lowering's ``ViewRetaking``),
and NumPy's later values are not.  The primal code keeps NumPy's value, the view itself (a view taken
again by its element positions, ``runtime.view_positions``, needs it to be one), and the forward
sweep binds a copy beside it, ``b_part_kept = np.copy(b_part)``.  The reverse sweep, and what the
forward sweep records for it (pushes, the split form's cut, the value kept apart), read the copy; the
primal statements of the forward sweep (``mark``) read the view.  A merge copy of such a view (a
value a loop carries, or an ``if`` joins) gets its copy's merge beside it, from the source's copy
where it has one, else from the source itself (what the name held, as the reverse reads it).

Where the reverse sweep runs primal statements again (a checkpointed loop's segments, a fixed-point
loop's body, generated before the copies are named), or a merge would carry a copy into a name
written through, nothing is kept apart: ``choose`` hands back every name to be copied in place, as
the forward sweep did before (the primal code then holds the copy).
"""
from __future__ import annotations

import dataclasses
from typing import Callable, Optional

from ..core import ir, language
from .plan import PlanDraft, RecordedValue


class KeptViews:
    """The copies of views the reverse sweep reads, kept beside the primal names."""

    def __init__(self) -> None:
        self.twins: dict[str, str] = {}  # a view's SSA name -> the name of its copy
        self.primal: set[int] = set()  # identities (sid) of the forward sweep's statements that run the primal code

    def choose(self, body: list[ir.Stmt], snapshots: set[str], fresh: Callable[[str], str]) -> set[str]:
        """Name the copies of ``snapshots``; returns the names to be copied in place instead."""
        self.twins = {}
        statements = list(ir.walk(body))
        if any(isinstance(s, ir.For) and s.checkpoint is not None
               or isinstance(s, ir.While) and (s.checkpoint is not None or s.fixed_point) for s in statements):
            return set(snapshots)  # (the reverse sweep holds primal code again, made before this)
        stored = {s.array for s in statements if isinstance(s, ir.Store)}
        twins = {s.target: fresh(f"{s.target}_kept") for s in statements if isinstance(s, ir.Assign)
                 and not s.merge and s.target in snapshots and s.target not in stored}
        merges = [s for s in statements if isinstance(s, ir.Assign) and s.merge and isinstance(s.value, ir.Var)]
        grown = True
        while grown:
            grown = False
            for merge in merges:
                assert isinstance(merge.value, ir.Var)
                if merge.value.name in twins and merge.target not in twins:
                    if merge.target in stored:
                        return set(snapshots)
                    twins[merge.target] = fresh(f"{merge.target}_kept")
                    grown = True
        self.twins = twins
        return set(snapshots) - set(twins)

    def after(self, stmt: ir.Stmt) -> list[ir.Stmt]:
        """The binding of the copy beside the primal ``stmt`` (none where it binds no kept view)."""
        if not isinstance(stmt, ir.Assign) or stmt.target not in self.twins:
            return []
        twin = self.twins[stmt.target]
        if stmt.merge:  # a merge copy beside the merge (a closing merge: pushes go before both)
            assert isinstance(stmt.value, ir.Var)
            source = stmt.value.name
            return [ir.Assign(twin, ir.Var(self.twins.get(source, source)), stmt.line, merge=True)]
        return [ir.Assign(twin, ir.Call(language.copy, (ir.Var(stmt.target),)), stmt.line)]

    def mark(self, block: list[ir.Stmt]) -> None:
        """The statements of a forward block that run the primal code (and bind the copies): their
        reads stay NumPy's values.  (Pushes are the recording's, added to the block later.)"""
        self.primal.update(s.sid for s in block if not isinstance(s, ir.Push))

    def _renamed(self, expr: ir.Expr) -> ir.Expr:
        twins = self.twins
        return ir.transform(expr, lambda e: ir.Var(twins[e.name]) if isinstance(e, ir.Var) and e.name in twins
                            else None)

    def _maybe(self, expr: Optional[ir.Expr]) -> Optional[ir.Expr]:
        return None if expr is None else self._renamed(expr)

    def read_copies(self, block: list[ir.Stmt]) -> list[ir.Stmt]:
        """``block`` with every statement but the primal ones reading (and popping into) the copies."""
        out: list[ir.Stmt] = []
        for stmt in block:
            if stmt.sid not in self.primal:
                stmt = self._reading_copies(stmt)
            out.append(ir.with_blocks(stmt, self.read_copies))
        return out

    def _reading_copies(self, stmt: ir.Stmt) -> ir.Stmt:
        rename = self._renamed
        if isinstance(stmt, (ir.Assign, ir.Unpack, ir.Effect, ir.Return)):
            return dataclasses.replace(stmt, value=rename(stmt.value))
        if isinstance(stmt, ir.Store):
            return dataclasses.replace(stmt, index=rename(stmt.index), value=rename(stmt.value))
        if isinstance(stmt, ir.Push):
            return dataclasses.replace(stmt, values=tuple(rename(v) for v in stmt.values))
        if isinstance(stmt, ir.Pop):
            return dataclasses.replace(stmt, targets=tuple(self.twins.get(t, t) for t in stmt.targets))
        if isinstance(stmt, ir.If):
            return dataclasses.replace(stmt, test=rename(stmt.test))
        if isinstance(stmt, ir.For):
            return dataclasses.replace(stmt, iterable=rename(stmt.iterable), exit=self._maybe(stmt.exit))
        if isinstance(stmt, ir.While):
            return dataclasses.replace(stmt, test=rename(stmt.test), exit=self._maybe(stmt.exit))
        return stmt

    def plan_reading_copies(self, draft: PlanDraft) -> None:
        """The slots declared so far, recording and restoring the copies."""
        draft.slots = [dataclasses.replace(slot, values=tuple(
            RecordedValue(self._renamed(v.value), self.twins.get(v.target, v.target), v.kind) for v in slot.values))
            for slot in draft.slots]
