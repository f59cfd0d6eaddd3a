"""A checkpointed loop with ``snapshots=c``: reversed on the binomial schedule (Revolve).

The schedule itself is computed at run time from the trip count
(``core/revolve.py``, through ``runtime.revolve*``); the code generated here
walks it.  The forward sweep::

    schedule = revolve(len(steps), c, line)
    for segment in revolve_forward(schedule, *state):
        tape.append(state)                         # a snapshot
        for t in steps[segment]: <body, unrecorded>
    for t in steps[revolve_last(schedule)]: <body, recorded>

and the reverse sweep, one step at a time from the last::

    schedule = revolve_reverse(len(steps), c, line)
    for turn in reversed(range(len(steps))):
        if turn < last:                            # (the last step was recorded forward)
            state = tape.pop()                     # the newest snapshot
            for segment in revolve_turn(schedule, turn, *state):
                tape.append(state)
                for t in steps[segment]: <body, unrecorded>
            for t in steps[turn:turn + 1]: <body, recorded>
        for t in reversed(steps[turn:turn + 1]): <body, reversed>

Each step is recorded once and reversed at once; the segments are what the
schedule runs again, with the snapshots it keeps on the tape (at most ``c``).
"""
from __future__ import annotations

import operator
from typing import Optional, Protocol

from ..core import ir, runtime
from .adjoints import Adjoints


class Recorder(Protocol):
    """What this module reads of ``recording.Recorder`` (which calls it)."""

    adjoints: Adjoints
    recording: bool
    checkpoints: dict[int, str]
    counted_trips: dict[int, str]

    def forward_block(self, body: list[ir.Stmt]) -> list[ir.Stmt]: ...

    def forward_body(self, body: list[ir.Stmt]) -> list[ir.Stmt]: ...

    def loop_state(self, stmt: ir.For) -> tuple[str, ...]: ...

    def written_before(self, stmt: ir.For) -> tuple[str, ...]: ...

    def snapshot_values(self, stmt: ir.For) -> tuple[ir.Expr, ...]: ...

    def snapshot_slot(self, stmt: ir.For) -> tuple[tuple[str, ...], list[ir.Stmt], list[ir.Stmt], list[ir.Stmt]]: ...


def applies(recorder: Recorder, stmt: ir.For) -> bool:
    """Whether ``stmt`` is ``checkpointed(steps, snapshots=c)``: its checkpoint is ``snapshots(c)``."""
    mark = stmt.checkpoint
    if isinstance(mark, ir.Const):
        return isinstance(mark.value, runtime.Snapshots)
    if isinstance(mark, ir.Var):
        definition = recorder.adjoints.definitions.get(mark.name)
        return definition is not None and isinstance(definition.value, ir.Call) \
            and definition.value.fn is runtime.snapshots
    return False


def _count(stmt: ir.For) -> ir.Expr:
    return ir.Call(len, (stmt.iterable,))


def _schedule(stmt: ir.For, make: object, counted: Optional[str] = None) -> ir.Expr:
    """``make(len(steps), c, line)``; ``counted``: the name of the trips a checkpointed while loop's
    first pass counted (``online.py``), for its stats."""
    assert stmt.checkpoint is not None
    extra: tuple[ir.Expr, ...] = (ir.Var(counted),) if counted else ()
    return ir.Call(make, (_count(stmt), stmt.checkpoint, ir.Const(stmt.line)) + extra)


def _steps(stmt: ir.For, part: ir.Expr) -> ir.Expr:
    return ir.Call(operator.getitem, (stmt.iterable, part))


def _advance(recorder: Recorder, stmt: ir.For, segment: str) -> list[ir.Stmt]:
    """Keep a snapshot, then run the segment's steps unrecorded."""
    recording, recorder.recording = recorder.recording, False
    inner = recorder.forward_block(stmt.body)
    recorder.recording = recording
    kept = recorder.snapshot_values(stmt)
    snapshot: list[ir.Stmt] = [ir.Push(recorder.checkpoints[stmt.sid], kept, stmt.line)] if kept else []
    return snapshot + [ir.For(stmt.index, _steps(stmt, ir.Var(segment)), inner, stmt.line)]


def forward(recorder: Recorder, stmt: ir.For) -> list[ir.Stmt]:
    """The first pass: advance to the last step keeping the schedule's snapshots, record the last step."""
    schedule, segment = recorder.adjoints.fresh("schedule"), recorder.adjoints.fresh("segment")
    state = tuple(ir.Var(n) for n in recorder.loop_state(stmt) + recorder.written_before(stmt))
    segments = ir.Call(runtime.revolve_forward, (ir.Var(schedule),) + state)
    last = _steps(stmt, ir.Call(runtime.revolve_last, (ir.Var(schedule),)))
    return [ir.Assign(schedule, _schedule(stmt, runtime.revolve, recorder.counted_trips.get(stmt.sid)), stmt.line),
            ir.Comment("checkpointed (binomial schedule): advance to the last step, keeping snapshots"),
            ir.For(segment, segments, _advance(recorder, stmt, segment), stmt.line),
            ir.Comment("and record the last step"),
            ir.For(stmt.index, last, recorder.forward_body(stmt.body), stmt.line)]


def reverse(recorder: Recorder, stmt: ir.For, reversed_body: list[ir.Stmt]) -> None:
    """Step by step from the last: restore the newest snapshot, advance as the schedule says, record
    the step and reverse it."""
    fresh, emit = recorder.adjoints.fresh, recorder.adjoints.emit
    schedule, last, turn, segment = fresh("schedule"), fresh("last"), fresh("turn"), fresh("segment")
    state, setup, replay, teardown = recorder.snapshot_slot(stmt)
    one = _steps(stmt, ir.Slice(ir.Var(turn), ir.Call(operator.add, (ir.Var(turn), ir.Const(1))), None))
    restored = tuple(ir.Var(n) for n in recorder.loop_state(stmt) + recorder.written_before(stmt))
    segments = ir.Call(runtime.revolve_turn, (ir.Var(schedule), ir.Var(turn)) + restored)
    again = ([ir.Pop(recorder.checkpoints[stmt.sid], state, stmt.line)] if state else []) + replay + [
        ir.Comment("restore the newest snapshot, advance as the schedule says, record this step"),
        ir.For(segment, segments, _advance(recorder, stmt, segment), stmt.line),
        ir.For(stmt.index, one, recorder.forward_body(stmt.body), stmt.line)]
    body: list[ir.Stmt] = [ir.If(ir.Call(operator.lt, (ir.Var(turn), ir.Var(last))), again, [], stmt.line),
                           ir.Comment("and reverse it"),
                           ir.For(stmt.index, one, reversed_body, stmt.line, reverse=True)]
    for assignment in setup + [ir.Assign(schedule, _schedule(stmt, runtime.revolve_reverse), stmt.line),
                               ir.Assign(last, ir.Call(operator.sub, (_count(stmt), ir.Const(1))), stmt.line)]:
        emit(assignment)
    emit(ir.For(turn, ir.Call(range, (_count(stmt),)), body, stmt.line, reverse=True))
    for stmt_after in teardown:
        emit(stmt_after)
