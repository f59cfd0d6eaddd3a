"""A printable account of what the analysis concluded: ``s2s_ad.source(f, stage="facts")``.

The SSA form, then one line per value: its kind (``kinds.Kind``), its shape
class (values sharing a class provably have the same shape; ``number`` is
the class of numbers), whether it varies with the parameters differentiated
by and whether it is active (varies *and* reaches the result: only those
get adjoint code), whether it is a merge (its facts are the join of every
path's), and, for reverse mode, the recording plan (``plan.RecordingPlan``):
what the forward sweep records on the tape for the reverse sweep, slot by
slot, with what records it, the kinds of the values and how many records the
loops around it make at most.  It is meant for reading when a derivative surprises
you: a wrong fact here is where a wrong derivative would come from.
"""
from __future__ import annotations

from typing import Optional

from ..core import ir
from .facts import Analysis
from .inference import SCALAR
from ..core.kinds import UNKNOWN, Sequence


def _class_names(facts: Analysis, order: list[str]) -> dict[object, str]:
    """Short, stable names for shape classes: ``S1``, ``S2``, ... in order of first appearance."""
    names: dict[object, str] = {SCALAR: "number"}
    for name in order:
        shape = facts.shape.get(name)
        if shape is not None and shape not in names:
            names[shape] = f"S{len(names)}"
    return names


def _text(expr: ir.Expr) -> str:
    """Short source-like text for what loops record (names, their shapes, slices of arrays)."""
    if isinstance(expr, ir.Var):
        return expr.name
    if isinstance(expr, ir.Const):
        return repr(expr.value)
    if isinstance(expr, ir.Call):
        fn = getattr(expr.fn, "__name__", type(expr.fn).__name__)
        return f"{fn}({', '.join(map(_text, expr.args))})"
    if isinstance(expr, ir.Display):
        return f"({', '.join(map(_text, expr.items))})"
    return "..."


def recorded(adjoint: ir.Function) -> list[str]:
    """The recording plan of ``adjoint``: one line per slot, what records it and what it holds."""
    plan = adjoint.plan
    return plan.describe(_text) if plan is not None else []


def _sequence_note(call: ir.Call, facts: Analysis) -> str:
    """How ``a + b`` or ``a * n`` that may concatenate or repeat tuples or lists is differentiated."""
    what = "concatenation" if call.fn.__name__ == "add" else "repetition"
    proven = all(isinstance(facts.fact(a), Sequence) for a in call.args) if what == "concatenation" \
        else any(isinstance(facts.fact(a), Sequence) for a in call.args)
    return what if proven else f"{what} or arithmetic: decided at run time"


def report(ssa_source: str, fn: ir.Function, facts: Analysis, wrt: list[str],
           adjoint: Optional[ir.Function] = None) -> str:
    """The SSA source followed by the facts of every value (see the module docstring)."""
    order = list(fn.params)
    for stmt in ir.walk(fn.body):
        for target in ([stmt.index] if isinstance(stmt, ir.For) else ir.targets_of(stmt)):
            if target not in order:
                order.append(target)
    merges = {s.target for s in ir.walk(fn.body) if isinstance(s, ir.Assign) and s.merge}
    sequences = {s.target: _sequence_note(s.value, facts) for s in ir.walk(fn.body) if isinstance(s, ir.Assign)
                 and isinstance(s.value, ir.Call) and facts.sequence_operation(s.value)}
    written = {s.array for s in ir.walk(fn.body) if isinstance(s, ir.Store)}
    classes = _class_names(facts, order)
    width = max((len(n) for n in order), default=4) + 2
    kind_width = max((len(str(facts.kinds.get(n, UNKNOWN))) for n in order), default=8) + 2
    lines = [ssa_source.rstrip("\n"), "",
             f"# facts, with respect to {', '.join(wrt) or 'nothing'}"
             " (varied: depends on them; active: varied and reaches the result)"]
    for name in order:
        kind = facts.kinds.get(name, UNKNOWN)
        shape = classes.get(facts.shape.get(name), "?")
        notes = ["active" if name in facts.active else "varied" if name in facts.varied else "constant"]
        if name in merges:
            notes.append("merge: the join of every path")
        if name in sequences:
            notes.append(sequences[name])
        if name in written:
            notes.append("written into: floats, stores keep derivatives" if name in facts.inexact
                         else "written into: stores keep derivatives only if its dtype is inexact (run time)")
        lines.append(f"#   {name:<{width}}{str(kind):<{kind_width}}shape {shape:<8}{', '.join(notes)}")
    if adjoint is not None:
        slots = recorded(adjoint)
        values = [_text(v.value) for slot in adjoint.plan.slots for v in slot.values] if slots else []
        lines.append("# recorded on the tape: " + (", ".join(values) if values else "nothing"))
        lines += slots
    return "\n".join(lines) + "\n"
