"""A loop marked ``while fixed_point(test):``, reversed as a fixed-point iteration of its own.

Input: the ``ir.While`` (``fixed_point`` set: lowering checked that its body
has no early exit, no write in place and no effect) and, for the reverse, its
body's reverse as ``reverse.reverse_loop`` built it (the adjoints of the
values it carries held in their own names at its end).  Output: the loop's
statements in each sweep.  The forward sweep records nothing while the loop
runs::

    <push the state the loop starts from>
    trips = 0
    while test: <body, unrecorded>; trips += 1
    <push the converged state>

and the reverse sweep is Christianson's two-phase adjoint (Optimization
Methods and Software 3, 1994): from the converged state ``x*`` of
``x = G(x, p)``, ``w = x_bar + (dG/dx)^T w`` iterated, then ``p_bar +=
(dG/dp)^T w``::

    <pop the converged state>
    seed_x = d_x                       # x_bar, for each value the loop carries
    kept_p = d_p                       # each other adjoint the body adds to
    for step in range(trips):
        d_p = kept_p                   # only the last pass's (dG/dp)^T w counts
        <body, but its closing copies> # from the converged state, which stays
        <body, reversed>               # d_x = (dG/dx)^T w, d_p += (dG/dp)^T w
        d_x = seed_x + d_x             # the next w
    if trips > 0: d_x = 0              # the fixed point does not depend on where it started
    <pop the state the loop started from>

The adjoint iteration contracts at the forward iteration's rate (the same
Jacobian, transposed), so as many passes as the forward loop ran bring it to
about the solver's tolerance.  Memory: two states, whatever the number of
iterations.  A loop that never ran hands its adjoint straight to its start.
"""
from __future__ import annotations

import operator
from typing import Optional, Protocol

from ..analysis.facts import Analysis
from ..analysis.inference import SCALAR
from ..core import ir, runtime
from .adjoints import Adjoints


class Recorder(Protocol):
    """What this module reads of ``recording.Recorder`` (which calls it)."""

    adjoints: Adjoints
    facts: Analysis
    recording: bool
    fixed_points: dict[int, tuple[str, str]]
    trips: dict[int, str]

    def declare(self, where: str, values: tuple[ir.Expr, ...], targets: tuple[str, ...],
                line: Optional[int]) -> str: ...

    def forward_block(self, body: list[ir.Stmt]) -> list[ir.Stmt]: ...

    def forward_body(self, body: list[ir.Stmt]) -> list[ir.Stmt]: ...


def _state(stmt: ir.While) -> tuple[str, ...]:
    """What one iteration hands the next: all the body needs to run again."""
    return tuple(sorted(ir.loop_carried(stmt.body)))


def _slots(recorder: Recorder, stmt: ir.While) -> tuple[str, str]:
    """The tape's slots of the two states: where the loop started, and where it converged."""
    state = _state(stmt)
    values = tuple(ir.Var(n) for n in state)
    start = recorder.declare(f"the state the fixed-point loop at line {stmt.line} starts from", values, state,
                             stmt.line)
    converged = recorder.declare(f"the converged state of the fixed-point loop at line {stmt.line}", values,
                                 state, stmt.line)
    return start, converged


def forward(recorder: Recorder, stmt: ir.While) -> list[ir.Stmt]:
    """The first pass: the loop as written, unrecorded, counting its trips; the states around it kept."""
    counter = recorder.trips[stmt.sid]
    recording, recorder.recording = recorder.recording, False
    test_block, inner = recorder.forward_block(stmt.test_block), recorder.forward_block(stmt.body)
    recorder.recording = recording
    inner.append(ir.Assign(counter, ir.Call(operator.add, (ir.Var(counter), ir.Const(1))), stmt.line))
    state = tuple(ir.Var(n) for n in _state(stmt))
    start, converged = recorder.fixed_points[stmt.sid]
    kept_before: list[ir.Stmt] = [ir.Push(start, state, stmt.line)] if state else []
    kept_after: list[ir.Stmt] = [ir.Push(converged, state, stmt.line)] if state else []
    loop: list[ir.Stmt] = [ir.Assign(counter, ir.Const(0), stmt.line),
                           ir.Comment("fixed point: iterate unrecorded, counting the iterations"),
                           ir.While(test_block, stmt.test, inner, stmt.line)]
    return kept_before + loop + kept_after


def _copied(recorder: Recorder, adjoint: str, name: str) -> ir.Expr:
    """A copy of the adjoint ``adjoint`` of ``name`` no later in-place update reaches (a number is one)."""
    if recorder.facts.shape_of(ir.Var(name)) == SCALAR:
        return ir.Var(adjoint)
    return ir.Call(runtime.writable_copy, (ir.Var(adjoint), ir.Var(name)))


def _without_closing_merges(body: list[ir.Stmt]) -> list[ir.Stmt]:
    """``body`` without the copies that close it (``x = x_new``): the next pass starts from the
    converged state again, and the reverse reads the state the body started from."""
    end = len(body)
    while end > 0:
        last = body[end - 1]
        if not (isinstance(last, ir.Assign) and last.merge):
            break
        end -= 1
    return body[:end]


def reverse(recorder: Recorder, stmt: ir.While, reversed_body: list[ir.Stmt], carried: set[str],
            accumulators: set[str]) -> None:
    """Iterate the adjoint from the converged state (see the module docstring)."""
    adjoints = recorder.adjoints
    fresh, emit, line = adjoints.fresh, adjoints.emit, stmt.line
    counter = fresh("trips")
    recorder.trips[stmt.sid] = counter
    start, converged = _slots(recorder, stmt)
    recorder.fixed_points[stmt.sid] = start, converged
    state = _state(stmt)
    if state:
        emit(ir.Pop(converged, state, line))
    seeds = {name: fresh(f"seed_{name}") for name in sorted(carried)}
    kept = {name: fresh(f"kept_{name}") for name in sorted(accumulators - carried)}
    for name, seed in seeds.items():
        emit(ir.Assign(seed, _copied(recorder, adjoints.adjoint_name(name), name), line))
    for name, keep in kept.items():
        emit(ir.Assign(keep, _copied(recorder, adjoints.adjoint_name(name), name), line))
    resets: list[ir.Stmt] = [ir.Assign(adjoints.adjoint_name(name), _copied(recorder, keep, name), line)
                             for name, keep in kept.items()]
    nexts: list[ir.Stmt] = [ir.Assign(adjoints.adjoint_name(name), ir.Call(operator.add, (
        ir.Var(seed), ir.Var(adjoints.adjoint_name(name)))), line) for name, seed in seeds.items()]
    body = resets + [ir.Comment("the body again from the converged state (which it leaves as it is), reversed")] + \
        _without_closing_merges(recorder.forward_body(stmt.body)) + reversed_body + nexts
    emit(ir.Comment("fixed point: iterate the adjoint as many times as the loop ran"))
    emit(ir.For(fresh("step"), ir.Call(range, (ir.Var(counter),)), body, line))
    if seeds:
        emit(ir.If(ir.Call(operator.gt, (ir.Var(counter), ir.Const(0))),
                   [ir.Assign(adjoints.adjoint_name(name), adjoints.zero(name), line) for name in seeds], [], line))
    if state:
        emit(ir.Pop(start, state, line))
