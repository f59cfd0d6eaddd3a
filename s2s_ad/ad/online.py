"""A loop marked ``while checkpointed(test, snapshots=c):``: its trips counted, then the binomial schedule.

Input: the ``ir.While`` (``checkpoint`` set to ``snapshots(c)``: lowering checked that its body
has no early exit, no write in place, no effect, and reads nothing its test computed).  Its trip
count is not known when it starts, so the forward sweep runs it once unrecorded to count them,
puts the state back as it was, and then walks the binomial schedule over that many steps as a
``for`` loop marked ``checkpointed(range(trips), snapshots=c)`` would (``binomial.py``, whose
reverse sweep is this loop's too)::

    start_x = x                                  # the state before the loop
    trips = 0
    while test: <body, unrecorded>; trips += 1   # the first pass: the count
    x = start_x
    <binomial forward over range(trips)>

The steps run again without the test (the count says how many).  Advances: the count's ``n``
plus Revolve's ``t(n, c)``, so at most twice the offline minimum (``t(n, c) >= n``); at most
``c`` snapshots, plus the starting state held while counting.  The gradient is the recorded
loop's, bit for bit.
"""
from __future__ import annotations

import operator
from typing import Protocol

from ..core import ir, language, runtime
from .adjoints import Adjoints


class Recorder(Protocol):
    """What this module reads of ``recording.Recorder`` (which calls it)."""

    adjoints: Adjoints
    recording: bool
    online: dict[int, tuple[ir.For, str]]
    counted_trips: dict[int, str]

    def forward_block(self, body: list[ir.Stmt]) -> list[ir.Stmt]: ...

    def forward_checkpointed(self, stmt: ir.For) -> list[ir.Stmt]: ...

    def loop_state(self, stmt: ir.For) -> tuple[str, ...]: ...

    def written_before(self, stmt: ir.For) -> tuple[str, ...]: ...

    def draws(self, stmt: ir.For) -> bool: ...


def as_for(recorder: Recorder, stmt: ir.While) -> ir.For:
    """The loop as the ``for`` over its counted trips that the binomial schedule walks (made once)."""
    if stmt.sid not in recorder.online:
        counter = recorder.adjoints.fresh("trips")
        loop = ir.For(recorder.adjoints.fresh("step"), ir.Call(range, (ir.Var(counter),)), stmt.body, stmt.line,
                      checkpoint=stmt.checkpoint)
        recorder.online[stmt.sid] = (loop, counter)
        recorder.counted_trips[loop.sid] = counter
    return recorder.online[stmt.sid][0]


def forward(recorder: Recorder, stmt: ir.While) -> list[ir.Stmt]:
    """Count the trips unrecorded, put the state back, then the binomial schedule's forward sweep."""
    loop, counter = recorder.online[stmt.sid]
    fresh, line = recorder.adjoints.fresh, stmt.line
    state = recorder.loop_state(loop)
    kept = {name: fresh(f"start_{name}") for name in state}
    before: list[ir.Stmt] = [ir.Assign(keep, ir.Var(name), line) for name, keep in kept.items()]
    after: list[ir.Stmt] = [ir.Assign(name, ir.Var(keep), line) for name, keep in kept.items()]
    for array in recorder.written_before(loop):  # written in place while counting: copied, put back in place
        keep = fresh(f"start_{array}")
        before.append(ir.Assign(keep, ir.Call(language.copy, (ir.Var(array),)), line))
        after.append(ir.Store(array, ir.Const(Ellipsis), ir.Var(keep), line))
    if recorder.draws(loop):  # the count's draws are drawn again by the schedule: the states put back
        states = fresh("states_before")
        before.append(ir.Assign(states, ir.Call(runtime.random_states, ()), line))
        after.append(ir.Effect(ir.Call(runtime.set_random_states, (ir.Var(states),)), line))
    recording, recorder.recording = recorder.recording, False
    test_block, inner = recorder.forward_block(stmt.test_block), recorder.forward_block(stmt.body)
    recorder.recording = recording
    inner.append(ir.Assign(counter, ir.Call(operator.add, (ir.Var(counter), ir.Const(1))), line))
    counted: list[ir.Stmt] = [ir.Comment("checkpointed while loop: count its trips, unrecorded"),
                              ir.Assign(counter, ir.Const(0), line), ir.While(test_block, stmt.test, inner, line)]
    return before + counted + after + recorder.forward_checkpointed(loop)
