"""The tape, and the split form of an adjoint.

The tape is a persistent stack made of tuples: ``tape = (a, b, tape)``
pushes, ``a, b, tape = tape`` pops, ``None`` is the empty tape.  It is
threaded through generated code (a callee's parts take the tape and return
it), so that code stays pure Python and can be transformed again.

The split form cuts an adjoint in two for a function that generated code
calls: ``forward_<f>(params..., tape)`` returns ``(result, tape)`` and
``backward_<f>(d_out, tape)`` returns ``(*adjoints, tape)``.

Pushes and pops are plain statements of the adjoint IR, so they can be
checked: ``check_tape`` pairs every pop with its push (same count, mirrored
order) and ``drop_unread_records`` takes out of both a value the reverse
sweep never reads.
"""
from __future__ import annotations

import dataclasses
from typing import Optional

from . import ir
from .optimize import live_before


REVERSE_SWEEP = "reverse sweep"  # the comment that separates the sweeps (split_parts cuts there)


def push(tape: str, values: tuple[ir.Expr, ...], line: Optional[int] = None) -> ir.Assign:
    """``tape = (a, b, tape)``: record values on the tape."""
    return ir.Assign(tape, ir.Display("tuple", tuple(values) + (ir.Var(tape),)), line)


def pop(tape: str, targets: tuple[str, ...], line: Optional[int] = None) -> ir.Unpack:
    """``a, b, tape = tape``: take back what the matching ``push`` recorded."""
    return ir.Unpack(tuple(targets) + (tape,), ir.Var(tape), line)


def split_parts(adjoint: ir.Function, primal_name: str) -> tuple[ir.Function, ir.Function]:
    """Cut a split-mode adjoint into ``forward(params..., tape)`` returning
    ``(result, tape)`` and ``backward(d_out, tape)`` returning ``(*adjoints, tape)``.

    The forward part records on the tape what the backward part reads of the
    forward sweep's values (parameters included); the backward part pops it.
    """
    body = adjoint.body
    cut = next(i for i, s in enumerate(body) if isinstance(s, ir.Comment) and s.text == REVERSE_SWEEP)
    forward, backward, final = body[:cut], body[cut + 1:-1], body[-1]
    params, seed, tape = adjoint.params[:-2], adjoint.params[-2], adjoint.params[-1]
    result, gradient = final.value.items
    gradients = gradient.items if isinstance(gradient, ir.Display) else (gradient,)
    bound = set(params) | ir.assigned_names(forward)
    # What the backward part reads before it assigns it (a loop's final value, say) comes over on the tape.
    needed = live_before(backward, {n for g in gradients for n in ir.names_read(g)})
    # An array of the forward sweep the backward part writes into (putting an overwritten slice back)
    # must come over too, even where nothing reads it afterwards: the store runs all the same.
    needed |= {s.array for s in ir.walk(backward) if isinstance(s, ir.Store)}
    crossing = sorted((needed & bound) - {tape, seed})
    forward_body = list(forward)
    backward_body = list(backward)
    if crossing:
        forward_body.append(push(tape, tuple(ir.Var(n) for n in crossing)))
        backward_body.insert(0, pop(tape, tuple(crossing)))
    forward_body.append(ir.Return(ir.Display("tuple", (result, ir.Var(tape)))))
    backward_body.append(ir.Return(ir.Display("tuple", tuple(gradients) + (ir.Var(tape),))))
    make = lambda name, ps, b: ir.Function(name, ps, b, adjoint.filename, adjoint.firstline, None,
                                           dict(adjoint.constants))
    return (make(f"forward_{primal_name}", params + [tape], forward_body),
            make(f"backward_{primal_name}", [seed, tape], backward_body))


class TapeViolation(AssertionError):
    """Generated code whose tape pushes and pops do not pair up (a bug in s2s_ad, never the user's)."""


def check_tape(adjoint: ir.Function) -> None:
    """Check that every pop of an adjoint (before ``split_parts``) has its push.

    Each block of the forward sweep gives a list of events: a push of ``k``
    values, or a loop or branch holding pushes.  The reverse sweep must pop
    them in the mirrored order: the same counts, backwards, with each loop
    and branch mirrored.  (A checkpointed loop's reverse records a segment
    again and pops it at once: such a recording loop followed by its own
    mirror is balanced, and is left out.)  Calls of a helper's parts leave
    the tape as they found it.  A mismatch raises ``TapeViolation``.
    """
    body = adjoint.body
    tape = adjoint.params[-1] if adjoint.params and adjoint.params[-1].startswith("tape") else _tape_name(body)
    if tape is None:
        return
    cut = next((i for i, s in enumerate(body) if isinstance(s, ir.Comment) and s.text == REVERSE_SWEEP), None)
    if cut is None:
        return
    pushed = _shape(_events(body[:cut], tape))
    popped = _shape(_events(body[cut + 1:], tape))
    if popped != _mirror(pushed):
        raise TapeViolation(f"{adjoint.name}: the reverse sweep pops {popped}, but the forward sweep pushed "
                            f"{pushed} (expected {_mirror(pushed)} in the reverse sweep)")


def _tape_name(body: list[ir.Stmt]) -> Optional[str]:
    """The tape's name: what ``tape = None`` (the first statement that records) binds."""
    for stmt in body:
        if isinstance(stmt, ir.Assign) and isinstance(stmt.value, ir.Const) and stmt.value.value is None \
                and stmt.target.startswith("tape"):
            return stmt.target
    return None


def _events(block: list[ir.Stmt], tape: str) -> list:
    """The tape events of ``block``: ``("push", k, stmt)``, ``("pop", k, stmt)``, or ``(kind, events of
    each block)`` for a loop or branch that pushes or pops."""
    out: list = []
    for stmt in block:
        if isinstance(stmt, ir.Assign) and stmt.target == tape and isinstance(stmt.value, ir.Display) \
                and stmt.value.items and stmt.value.items[-1] == ir.Var(tape):
            out.append(("push", len(stmt.value.items) - 1, stmt))
        elif isinstance(stmt, ir.Unpack) and stmt.targets[-1] == tape and stmt.value == ir.Var(tape):
            out.append(("pop", len(stmt.targets) - 1, stmt))
        elif isinstance(stmt, (ir.If, ir.For, ir.While)):
            blocks = [stmt.body, stmt.orelse] if isinstance(stmt, ir.If) else [stmt.body]
            inner = tuple(_events(b, tape) for b in blocks)
            if any(inner):
                out.append(("if" if isinstance(stmt, ir.If) else "loop", inner))
    return _balanced(out)


def _shape(events: list) -> list:
    """``events`` without their statements: what must match."""
    return [(e[0], e[1]) if e[0] in ("push", "pop") else (e[0], tuple(_shape(list(b)) for b in e[1]))
            for e in events]


def _balanced(events: list) -> list:
    """``events`` without a recording loop followed at once by its mirror (a replayed segment)."""
    out: list = []
    for event in events:
        if out and out[-1][0] == "loop" and _shape([event]) == _mirror(_shape([out[-1]])) \
                and _pushes_only(out[-1]):
            out.pop()
        else:
            out.append(event)
    return out


def _pushes_only(event: tuple) -> bool:
    kind, detail = event[0], event[1]
    if kind == "push":
        return True
    if kind == "pop":
        return False
    return all(_pushes_only(e) for block in detail for e in block)


def _mirror(events: list) -> list:
    """What the reverse of ``events`` (without statements) pops: the same counts, backwards, loops
    and branches mirrored."""
    return [_mirror_event(e) for e in reversed(events)]


def _mirror_event(event: tuple) -> tuple:
    kind, detail = event
    if kind in ("push", "pop"):
        return ("pop" if kind == "push" else "push", detail)
    return (kind, tuple(_mirror(list(block)) for block in detail))


def _pairs(pushed: list, popped: list) -> list[tuple[ir.Assign, ir.Unpack]]:
    """Each push statement with the pop that takes it back (``popped`` mirrors ``pushed``)."""
    found: list[tuple[ir.Assign, ir.Unpack]] = []
    for push, pop in zip(pushed, reversed(popped)):
        if push[0] == "push":
            found.append((push[2], pop[2]))
        else:
            for inner_push, inner_pop in zip(push[1], pop[1]):
                found += _pairs(list(inner_push), list(inner_pop))
    return found


def drop_unread_records(adjoint: ir.Function) -> ir.Function:
    """``adjoint`` without the recorded values its reverse sweep never reads: each is taken out of
    its push and of the matching pop (both statements go when nothing is left)."""
    body = adjoint.body
    tape = adjoint.params[-1] if adjoint.params and adjoint.params[-1].startswith("tape") else _tape_name(body)
    cut = next((i for i, s in enumerate(body) if isinstance(s, ir.Comment) and s.text == REVERSE_SWEEP), None)
    if tape is None or cut is None:
        return adjoint
    pushed, popped = _events(body[:cut], tape), _events(body[cut + 1:], tape)
    if _shape(popped) != _mirror(_shape(pushed)):
        return adjoint  # check_tape reports it
    reads = {n for s in ir.walk(body[cut + 1:]) for e in ir.exprs_of(s) for n in ir.names_read(e)}
    replaced: dict[int, Optional[ir.Stmt]] = {}
    for push, pop in _pairs(pushed, popped):
        kept = [i for i, name in enumerate(pop.targets[:-1]) if name in reads]
        if len(kept) == len(pop.targets) - 1:
            continue
        if not kept:
            replaced[id(push)] = replaced[id(pop)] = None
            continue
        items = tuple(push.value.items[i] for i in kept) + (ir.Var(tape),)
        replaced[id(push)] = ir.Assign(push.target, ir.Display("tuple", items), push.line)
        replaced[id(pop)] = ir.Unpack(tuple(pop.targets[i] for i in kept) + (tape,), pop.value, pop.line)
    if not replaced:
        return adjoint
    return dataclasses.replace(adjoint, body=ir.replace_statements(body, replaced))
