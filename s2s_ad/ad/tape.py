"""The tape's statements: checked, tidied and cut into the split form.

Input: an adjoint ``ir.Function`` made by ``reverse.py``, whose forward sweep
holds ``ir.Push`` statements and whose reverse sweep holds ``ir.Pop``
statements, all made from the function's ``RecordingPlan`` (``plan.py``),
the two sweeps separated by the comment ``REVERSE_SWEEP``.

* ``check_tape`` verifies the pairing on the nodes: every push and pop names
  a slot of the plan with as many values as it holds, every slot is pushed
  and popped, and the reverse sweep pops in the mirror order of the pushes,
  loop by loop and branch by branch (so every pop has its push on every path).
* ``drop_unread_records`` takes out of a slot (its pushes, its pops, the plan)
  a value the reverse sweep never reads.
* ``split_parts`` cuts a split adjoint (``reverse(..., split=True)``) where the
  plan's ``cut`` slot hands the forward part's values over, and checks that
  the backward part reads nothing else of the forward part.

How the pushes and pops become code that runs is the target's (``target.py``:
``Target.tape``; the NumPy target's ``ListTape`` appends to one list, the
``TupleTape`` of code read back threads nested tuples).

Output of each: an ``ir.Function`` whose pushes and pops still pair up.
"""
from __future__ import annotations

import dataclasses
from typing import Optional

from ..core import ir, runtime
from ..core.kinds import Number
from ..passes.optimize import remove_dead
from .plan import CUT, RecordingPlan, Slot, TapeViolation

__all__ = ["REVERSE_SWEEP", "TapeViolation", "check_tape", "drop_unread_records", "split_parts"]

REVERSE_SWEEP = "reverse sweep"  # the comment that separates the sweeps (split_parts cuts there)


# -- the split form -------------------------------------------------------------------------------

def _sweeps(body: list[ir.Stmt]) -> Optional[int]:
    """The position of the comment between the sweeps, if there is one."""
    return next((i for i, s in enumerate(body) if isinstance(s, ir.Comment) and s.text == REVERSE_SWEEP), None)


def split_parts(adjoint: ir.Function, primal_name: str) -> tuple[ir.Function, ir.Function]:
    """Cut a split-mode adjoint into ``forward(params..., tape)`` returning
    ``(result, tape)`` and ``backward(d_out, tape)`` returning ``(*adjoints, tape)``.

    The forward sweep ends with the push of the plan's ``cut`` slot, the reverse
    sweep starts with its pop: that is all the backward part reads of the
    forward part (a value bound on some paths only comes back through the slot
    of the branch or loop trip that binds it).  A backward part that reads
    anything else is a bug: ``TapeViolation``.
    """
    body = adjoint.body
    cut = _sweeps(body)
    assert cut is not None, "a split adjoint has two sweeps"
    forward, backward, final = body[:cut], body[cut + 1:-1], body[-1]
    params, seed, tape = adjoint.params[:-2], adjoint.params[-2], adjoint.params[-1]
    assert isinstance(final, ir.Return) and isinstance(final.value, ir.Display), "a split adjoint returns a pair"
    result, gradient = final.value.items
    gradients = gradient.items if isinstance(gradient, ir.Display) else (gradient,)
    backward_body = list(backward) + [ir.Return(ir.Display("tuple", tuple(gradients) + (ir.Var(tape),)))]
    unknown = read_before_bound(backward_body) - {seed, tape}
    if unknown:
        raise TapeViolation(f"{adjoint.name}: the backward part reads {sorted(unknown)}, which the plan's "
                            f"'{CUT}' slot does not hand over from the forward part")
    forward_body = list(forward) + [ir.Return(ir.Display("tuple", (result, ir.Var(tape))))]
    make = lambda name, ps, b: dataclasses.replace(adjoint, name=name, params=ps, body=b, docstring=None,
                                                   constants=dict(adjoint.constants))
    return (make(f"forward_{primal_name}", params + [tape], forward_body),
            make(f"backward_{primal_name}", [seed, tape], backward_body))


def definitely_bound(body: list[ir.Stmt]) -> set[str]:
    """The names ``body`` binds on every path through it (a loop's body may run no trip)."""
    bound: set[str] = set()
    for stmt in body:
        if isinstance(stmt, ir.If):
            bound |= definitely_bound(stmt.body) & definitely_bound(stmt.orelse)
        elif isinstance(stmt, ir.While):
            bound |= definitely_bound(stmt.test_block)
        elif not isinstance(stmt, ir.For):
            bound.update(ir.targets_of(stmt))
    return bound


def read_before_bound(body: list[ir.Stmt]) -> set[str]:
    """The names ``body`` may read, on some path, before binding them: what must be handed to it."""
    found: set[str] = set()
    for stmt in reversed(body):
        if isinstance(stmt, ir.If):
            found = (read_before_bound(stmt.body) | (found - definitely_bound(stmt.body))
                     | read_before_bound(stmt.orelse) | (found - definitely_bound(stmt.orelse)))
        elif isinstance(stmt, ir.For):
            found |= read_before_bound(stmt.body) - {stmt.index}
        elif isinstance(stmt, ir.While):
            found = read_before_bound(stmt.test_block) | (found - definitely_bound(stmt.test_block)) \
                | read_before_bound(stmt.body)
        elif isinstance(stmt, ir.Store):  # it changes the array in place: what it was is read
            found.add(stmt.array)
        else:
            found -= set(ir.targets_of(stmt))
        found |= {n for e in ir.exprs_of(stmt) for n in ir.names_read(e)}
    return found


# -- pairing --------------------------------------------------------------------------------------

def check_tape(adjoint: ir.Function) -> None:
    """Check that the pushes and pops of an adjoint (before ``split_parts``) pair up.

    Each block of the forward sweep gives a list of events: a push into a
    slot, or a loop or branch holding pushes.  The reverse sweep must pop them
    in the mirrored order: the same slots, backwards, with each loop and
    branch mirrored.  (A checkpointed loop's reverse records a segment again
    and pops it at once: such a recording loop followed by its own mirror is
    balanced, and is left out.)  Calls of a helper's parts leave the tape as
    they found it.  A mismatch raises ``TapeViolation``.
    """
    nodes = [s for s in ir.walk(adjoint.body) if isinstance(s, (ir.Push, ir.Pop))]
    plan: Optional[RecordingPlan] = adjoint.plan
    if plan is None:
        if nodes:
            raise TapeViolation(f"{adjoint.name}: pushes and pops without a recording plan")
        return
    _check_slots(adjoint.name, plan, nodes)
    cut = _sweeps(adjoint.body)
    if cut is None:
        if nodes:
            raise TapeViolation(f"{adjoint.name}: pushes and pops without a reverse sweep")
        return
    pushed = _shape(_events(adjoint.body[:cut]))
    popped = _shape(_events(adjoint.body[cut + 1:]))
    if popped != _mirror(pushed):
        raise TapeViolation(f"{adjoint.name}: the reverse sweep pops {popped}, but the forward sweep pushed "
                            f"{pushed} (expected {_mirror(pushed)} in the reverse sweep)")


def _check_slots(name: str, plan: RecordingPlan, nodes: list) -> None:
    """Every node names a slot of the plan with as many values; every slot is pushed and popped."""
    slots = {s.name: s for s in plan.slots}
    for node in nodes:
        slot = slots.get(node.slot)
        count = len(node.values) if isinstance(node, ir.Push) else len(node.targets)
        what = "pushes" if isinstance(node, ir.Push) else "pops"
        if slot is None:
            raise TapeViolation(f"{name}: line {node.line} {what} slot {node.slot!r}, which the plan lacks")
        if count != len(slot.values):
            raise TapeViolation(f"{name}: line {node.line} {what} {count} values in slot {node.slot!r}, which "
                                f"holds {len(slot.values)}")
        if isinstance(node, ir.Pop) and node.targets != tuple(v.target for v in slot.values):
            raise TapeViolation(f"{name}: line {node.line} pops slot {node.slot!r} into {node.targets}, but the "
                                f"plan reads it back into {tuple(v.target for v in slot.values)}")
    for slot in plan.slots:
        pushes = any(isinstance(n, ir.Push) and n.slot == slot.name for n in nodes)
        pops = any(isinstance(n, ir.Pop) and n.slot == slot.name for n in nodes)
        if pushes != pops or not pushes:
            raise TapeViolation(f"{name}: slot {slot.name!r} ({slot.where}) is "
                                + ("pushed and never read back: nothing pops it" if pushes
                                   else "popped but never pushed" if pops else "never pushed nor popped"))


def _events(block: list[ir.Stmt]) -> list:
    """The tape events of ``block``: ``("push", slot, stmt)``, ``("pop", slot, stmt)``, or ``(kind,
    events of each block)`` for a loop or branch that pushes or pops."""
    out: list = []
    for stmt in block:
        if isinstance(stmt, ir.Push):
            out.append(("push", stmt.slot, stmt))
        elif isinstance(stmt, ir.Pop):
            out.append(("pop", stmt.slot, stmt))
        elif (turns := _binomial_turns(stmt)) is not None:
            out.extend(turns)
        elif isinstance(stmt, (ir.If, ir.For, ir.While)):
            blocks = [stmt.body, stmt.orelse] if isinstance(stmt, ir.If) else [stmt.body]
            inner = tuple(_events(b) for b in blocks)
            if any(inner):
                out.append(("if" if isinstance(stmt, ir.If) else "loop", inner))
    return _balanced(out)


def _binomial_turns(stmt: ir.Stmt) -> Optional[list]:
    """The events of a loop reversed on the binomial schedule (``binomial.py``), if ``stmt`` is one:
    what the forward sweep's two loops pushed, mirrored (the last step's records, then the snapshots).

    Each turn restores the newest snapshot, keeps snapshots again while it advances, records a step
    and reverses it; that the snapshots balance over the turns is the schedule's invariant
    (``core/revolve.py``), so what is checked here is the turn's shape: it pops the snapshot slot,
    pushes it in a loop, records a step in a loop, and its last loop pops that record."""
    if not (isinstance(stmt, ir.For) and stmt.reverse and len(stmt.body) >= 2 and isinstance(stmt.body[0], ir.If)
            and isinstance(stmt.body[-1], ir.For)):
        return None
    again = stmt.body[0].body
    if not any(isinstance(s, ir.For) and isinstance(s.iterable, ir.Call) and s.iterable.fn is runtime.revolve_turn
               for s in again):
        return None
    events = _events(again)
    snapshot = [e for e in events if e[0] == "pop"][:1]
    recorded = _events(stmt.body[-1].body)
    expected = ([("loop", (_mirror(_shape(snapshot)),))] if snapshot else []) \
        + ([("loop", (_mirror(_shape(recorded)),))] if recorded else [])
    if _shape(events) != _shape(snapshot) + expected:
        return None
    return ([("loop", (recorded,))] if recorded else []) + ([("loop", (snapshot,))] if snapshot else [])


def _shape(events: list) -> list:
    """``events`` without their statements: what must match."""
    return [(e[0], e[1]) if e[0] in ("push", "pop") else (e[0], tuple(_shape(list(b)) for b in e[1]))
            for e in events]


def _balanced(events: list) -> list:
    """``events`` without records followed at once by their mirror: a replayed segment (a recording
    loop, then its reverse), or a fixed-point loop's body recorded and reversed at once."""
    out: list = []
    for event in events:
        out.append(event)
        for size in range(1, len(out) // 2 + 1):
            recorded, reversed_ = out[-2 * size:-size], out[-size:]
            if all(_pushes_only(e) for e in recorded) and _shape(reversed_) == _mirror(_shape(recorded)):
                del out[-2 * size:]
                break
    return out


def _pushes_only(event: tuple) -> bool:
    kind, detail = event[0], event[1]
    if kind == "push":
        return True
    if kind == "pop":
        return False
    return all(_pushes_only(e) for block in detail for e in block)


def _mirror(events: list) -> list:
    """What the reverse of ``events`` (without statements) pops: the same slots, backwards, loops
    and branches mirrored."""
    return [_mirror_event(e) for e in reversed(events)]


def _mirror_event(event: tuple) -> tuple:
    kind, detail = event
    if kind in ("push", "pop"):
        return ("pop" if kind == "push" else "push", detail)
    return (kind, tuple(_mirror(list(block)) for block in detail))


# -- records nothing reads ------------------------------------------------------------------------

def drop_unread_records(adjoint: ir.Function) -> ir.Function:
    """``adjoint`` without the recorded values its reverse sweep never reads: each is taken out of
    its slot's pushes and pops and of the plan (a slot left empty goes), and what computed only
    those values goes too."""
    body, plan = adjoint.body, adjoint.plan
    cut = _sweeps(body)
    if plan is None or cut is None or not plan.slots:
        return adjoint
    try:
        check_tape(adjoint)
    except TapeViolation:
        return adjoint  # check_tape reports it
    # A value recorded as a number shares no memory: a store that puts back a part of an array only
    # such values were read from (``theta[t + 1] = old`` where the reverse sweep reads ``theta[t]``
    # only as the number it recorded) is dead, and so is the record of what it put back.
    numbers = frozenset(v.target for s in plan.slots for v in s.values if isinstance(v.kind, Number))
    body = remove_dead(body, numbers)
    cut = _sweeps(body)
    assert cut is not None
    reads = {n for s in ir.walk(body[cut + 1:]) for e in ir.exprs_of(s) for n in ir.names_read(e)}
    reads |= {n for e in ir.exprs_of(body[-1]) for n in ir.names_read(e)}
    slots: dict[str, Optional[Slot]] = {}
    kept_at: dict[str, list[int]] = {}  # the positions each changed slot keeps
    pushes = [s for s in ir.walk(body) if isinstance(s, ir.Push)]
    for slot in plan.slots:
        dropped = {i for i, value in enumerate(slot.values) if value.target not in reads}
        dropped |= _repeated(slot, [p for p in pushes if p.slot == slot.name])
        if dropped:
            slots[slot.name] = slot.without(dropped) if len(dropped) < len(slot.values) else None
            kept_at[slot.name] = [i for i in range(len(slot.values)) if i not in dropped]
    if not slots:
        return dataclasses.replace(adjoint, body=body)
    replaced: dict[int, Optional[ir.Stmt]] = {}
    for stmt in ir.walk(body):
        if isinstance(stmt, (ir.Push, ir.Pop)) and stmt.slot in slots:
            kept = slots[stmt.slot]
            if kept is None:
                replaced[stmt.sid] = None
                continue
            positions = kept_at[stmt.slot]
            if isinstance(stmt, ir.Push):
                replaced[stmt.sid] = dataclasses.replace(stmt, values=tuple(stmt.values[i] for i in positions))
            else:
                replaced[stmt.sid] = dataclasses.replace(stmt, targets=tuple(stmt.targets[i] for i in positions))
    tidied = remove_dead(ir.replace_statements(body, replaced), numbers)
    return dataclasses.replace(adjoint, body=tidied, plan=plan.replaced(slots))


def _repeated(slot: Slot, pushes: list[ir.Push]) -> set[int]:
    """The positions of ``slot`` that repeat an earlier one: the same value pushed by every push,
    popped into the same name (two names of one value that the merge copies made one)."""
    first: dict[tuple, int] = {}
    repeated: set[int] = set()
    for i, value in enumerate(slot.values):
        key = (value.target, tuple(repr(p.values[i]) for p in pushes))
        if key in first:
            repeated.add(i)
        else:
            first[key] = i
    return repeated
