"""A split adjoint's two parts for the Numba target, each compiled, the tape handed from one to the other.

Input: the forward and backward parts of a split adjoint the API runs (``vjp``: the forward sweep
when ``vjp`` is called, the reverse sweep at each ``vjp_fn`` call), as ``ad.tape.split_parts`` cuts
them: ``forward(params..., tape)`` returning ``(result, tape)``, ``backward(d_out, tape)`` returning
``(*adjoints, tape)``, their records ``ir.Push`` and ``ir.Pop`` statements of one recording plan.

Output, where every slot but the cut can be a preallocated float64 array (``numba.tape``: pushed in
one loop over a ``range``, values provably float64) and every value the cut hands over is a number,
an array or a ``range`` bound once: the two parts with those pushes and pops written as array
stores and reads (as a compiled gradient's), and the tape a flat tuple the forward part returns
and the backward part unpacks: each slot's array and counter, then the cut's values, a ``range`` as
the arguments of its ``range(...)`` call (Numba cannot hand a range back to Python: it gives
``NULL``).  The backward part returns ``None`` in the tape's place (nothing of it is consumed: the
arrays are only read, the counters are the part's own locals).  Both parts then compile in nopython
mode, as two functions of their own.

Elsewhere (a ``while`` loop's records, a record that is not provably float64, a list, an object the
cut hands over, a tape threaded through a helper's call): None, and the parts keep the target's
threaded tape, which runs as Python (the API says so in a warning).  Only the API's own split form
is handed so: a helper's parts called from generated code thread their caller's tape.
"""
from __future__ import annotations

import dataclasses
import operator
from typing import Any, Optional

from ...ad.plan import CUT
from ...core import ir, language
from ...core.kinds import Array, Number
from .tape import allocation, array_pop, array_push, array_slots, identifier, range_names


@dataclasses.dataclass(frozen=True)
class _Layout:
    """What the handed tuple holds, in order: each array slot's stack and counter, then each value of
    the cut (a range: the arguments of its call, ``arity`` of them)."""

    slots: tuple[str, ...]
    cut: tuple[tuple[ir.Expr, int], ...]  # (the value the forward part hands, its range's arity or 0)


def handed_parts(forward: ir.Function, backward: ir.Function) -> Optional[tuple[ir.Function, ir.Function]]:
    """The two parts with their tape handed as a flat tuple of typed values (module docstring), or None."""
    plan = forward.plan
    if plan is None or backward.plan is None or not (_hands_only(forward) and _hands_only(backward)):
        return None
    pushes = [s for s in ir.walk(forward.body) if isinstance(s, ir.Push)]
    cuts = [p for p in pushes if p.slot == CUT]
    pops = [s for s in backward.body if isinstance(s, ir.Pop) and s.slot == CUT]
    if len(cuts) != 1 or not any(s is cuts[0] for s in forward.body) or len(pops) != 1:
        return None
    looped = [p for p in pushes if p.slot != CUT]
    arrays = array_slots(forward, looped)
    if set(arrays) != {p.slot for p in looped}:
        return None
    cut = _handed_values(forward, cuts[0], [v.kind for v in plan.slot(CUT).values])
    if cut is None:
        return None
    layout = _Layout(tuple(s.name for s in plan.slots if s.name in arrays), cut)
    return _forward_handing(forward, cuts[0], looped, arrays, layout), _backward_taking(backward, pops[0], layout)


def _hands_only(part: ir.Function) -> bool:
    """Whether ``part`` reads or binds its tape only in its pushes, pops and final ``return``: no helper's
    part takes it."""
    tape = part.plan.tape
    last = part.body[-1] if part.body else None
    if not isinstance(last, ir.Return):
        return False
    for stmt in ir.walk(part.body):
        if isinstance(stmt, (ir.Push, ir.Pop)) or stmt is last:
            continue
        if tape in ir.targets_of(stmt) or any(tape in ir.names_read(e) for e in ir.exprs_of(stmt)):
            return False
    return True


def _handed_values(forward: ir.Function, cut: ir.Push, kinds: list) -> Optional[tuple[tuple[ir.Expr, int], ...]]:
    """Each value of the cut with its range's arity (0: not a range), where each can cross into Python
    and back (``_crosses``); else None."""
    ranges = {name: call for name, call in _range_calls(forward.body).items() if name in range_names(forward.body)}
    bindings: dict[str, list[Optional[ir.Expr]]] = {}
    for stmt in ir.walk(forward.body):
        for name in ir.targets_of(stmt):
            bindings.setdefault(name, []).append(stmt.value if isinstance(stmt, ir.Assign) else None)
    handed: list[tuple[ir.Expr, int]] = []
    for value, kind in zip(cut.values, kinds):
        if isinstance(value, ir.Var) and value.name in ranges:
            handed.append((value, len(ranges[value.name].args)))
        elif _crosses(value, kind, forward.params, bindings):
            handed.append((value, 0))
        else:
            return None
    return tuple(handed)


def _crosses(value: ir.Expr, kind: Any, params: list[str], bindings: dict[str, list[Optional[ir.Expr]]]) -> bool:
    """Whether Numba hands ``value`` back to Python as the object it is, or refuses it with an error (then
    the part runs as Python): a number or an array by the analysis, a parameter (it came from Python),
    a name bound only to what NumPy's functions or operators return.  Not a ``range`` or a ``slice``: Numba gives
    those back as ``NULL``, with no error at all where they sit in a tuple."""
    if isinstance(kind, (Number, Array)):
        return True
    if not isinstance(value, ir.Var):
        return isinstance(value, ir.Const) and isinstance(value.value, (int, float, bool, complex))
    if value.name in params:
        return True
    return all(_numpys_result(v, bindings) for v in bindings.get(value.name, [None]))


def _numpys_result(bound: Optional[ir.Expr], bindings: dict[str, list[Optional[ir.Expr]]]) -> bool:
    """A call of NumPy's own or an operator but indexing, or an item by a constant position of a name
    bound only to such calls (``across = grids[0]`` of ``grids = np.meshgrid(x, y)``)."""
    if isinstance(bound, ir.Call) and _numpys(bound.fn):
        return True
    if not (isinstance(bound, ir.Call) and bound.fn is operator.getitem and len(bound.args) == 2):
        return False
    whole, position = bound.args
    return isinstance(whole, ir.Var) and isinstance(position, ir.Const) and type(position.value) is int and \
        all(isinstance(v, ir.Call) and _numpys(v.fn) for v in bindings.get(whole.name, [None]))


def _numpys(fn: Any) -> bool:
    """A function of NumPy's own or an operator but indexing (their results, of the arrays and numbers
    compiled code holds, are arrays, numbers and tuples of them)."""
    module = (getattr(fn, "__module__", None) or "").split(".")[0]
    return language.is_ufunc(fn) or module == "numpy" or (module in ("operator", "_operator")
                                                           and fn is not operator.getitem)


def _range_calls(body: list[ir.Stmt]) -> dict[str, ir.Call]:
    return {s.target: s.value for s in ir.walk(body)
            if isinstance(s, ir.Assign) and isinstance(s.value, ir.Call) and s.value.fn is range and not s.value.kwargs}


def _forward_handing(forward: ir.Function, cut: ir.Push, looped: list[ir.Push],
                     arrays: dict[str, tuple[ir.For, int]], layout: _Layout) -> ir.Function:
    """The forward part: each array slot allocated before its loop, pushed by stores; the cut, a tuple
    ``handed`` of the stacks, counters and values, which the part returns for its tape."""
    assert forward.plan is not None
    taken = ir.NameSet(set(forward.params) | ir.assigned_names(forward.body))
    stacks = {slot: ir.fresh_name(f"tape_{identifier(slot)}", taken) for slot in layout.slots}
    tops = {slot: ir.fresh_name(f"top_{identifier(slot)}", taken) for slot in layout.slots}
    handed = ir.fresh_name("handed", taken)
    calls = _range_calls(forward.body)
    items: list[ir.Expr] = [ir.Var(n) for slot in layout.slots for n in (stacks[slot], tops[slot])]
    for value, arity in layout.cut:
        items += list(calls[value.name].args) if arity else [value]  # type: ignore[union-attr]
    replaced: dict[int, Any] = {p.sid: array_push(stacks[p.slot], tops[p.slot], p) for p in looped}
    replaced[cut.sid] = [ir.Assign(handed, ir.Display("tuple", tuple(items)), cut.line)]
    made: dict[int, list[ir.Stmt]] = {}
    for slot in layout.slots:
        loop, per_trip = arrays[slot]
        width = len(forward.plan.slot(slot).values)
        made.setdefault(loop.sid, []).extend(allocation(stacks[slot], tops[slot], loop, per_trip, width))
    body = [new for stmt in forward.body for new in made.get(stmt.sid, []) + [stmt]]
    body = ir.replace_statements(body, replaced)
    result = body[-1]
    assert isinstance(result, ir.Return) and isinstance(result.value, ir.Display)
    body[-1] = ir.Return(ir.Display("tuple", (result.value.items[0], ir.Var(handed))), result.line)
    return dataclasses.replace(forward, body=body, plan=None)


def _backward_taking(backward: ir.Function, cut: ir.Pop, layout: _Layout) -> ir.Function:
    """The backward part: the handed tuple unpacked where the cut was popped (a range made again from
    its arguments), the array slots popped by reads, ``None`` returned for the tape."""
    assert backward.plan is not None
    taken = ir.NameSet(set(backward.params) | ir.assigned_names(backward.body))
    stacks = {slot: ir.fresh_name(f"tape_{identifier(slot)}", taken) for slot in layout.slots}
    tops = {slot: ir.fresh_name(f"top_{identifier(slot)}", taken) for slot in layout.slots}
    names: list[str] = [n for slot in layout.slots for n in (stacks[slot], tops[slot])]
    remade: list[ir.Stmt] = []
    for target, (_, arity) in zip(cut.targets, layout.cut):
        if not arity:
            names.append(target)
            continue
        parts = [ir.fresh_name(f"{target}_{i}", taken) for i in range(arity)]
        names += parts
        remade.append(ir.Assign(target, ir.Call(range, tuple(ir.Var(p) for p in parts)), cut.line))
    replaced: dict[int, Any] = {cut.sid: [ir.Unpack(tuple(names), ir.Var(backward.plan.tape), cut.line)] + remade}
    for stmt in ir.walk(backward.body):
        if isinstance(stmt, ir.Pop) and stmt.slot != CUT:
            replaced[stmt.sid] = array_pop(stacks[stmt.slot], tops[stmt.slot], stmt)
    body = ir.replace_statements(backward.body, replaced)
    result = body[-1]
    assert isinstance(result, ir.Return) and isinstance(result.value, ir.Display)
    body[-1] = ir.Return(ir.Display("tuple", result.value.items[:-1] + (ir.Const(None),)), result.line)
    return dataclasses.replace(backward, body=body, plan=None)
