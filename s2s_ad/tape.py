"""The tape, and the split form of an adjoint.

The tape is a persistent stack made of tuples: ``tape = (a, b, tape)``
pushes, ``a, b, tape = tape`` pops, ``None`` is the empty tape.  It is
threaded through generated code (a callee's parts take the tape and return
it), so that code stays pure Python and can be transformed again.

The split form cuts an adjoint in two for a function that generated code
calls: ``forward_<f>(params..., tape)`` returns ``(result, tape)`` and
``backward_<f>(d_out, tape)`` returns ``(*adjoints, tape)``.
"""
from __future__ import annotations

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
