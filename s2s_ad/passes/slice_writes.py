"""A target's pass: writes of a slice spelled as calls of the runtime's ``write_into`` and ``add_into``.

Input: a function of any form (adjoint, split parts, tangent).  Output: the same function, where each
``array[index] = value`` and ``array[index] += value`` whose index is basic and takes a slice (slices,
integers the primal's facts know as numbers, ``None``) is ``write_into(array, index, value)`` or
``add_into(array, index, value)``, the index's slices as ``slice(...)`` calls; each keeps the store's
identity and line.  Every other statement is left as it was.  Both helpers are the store itself in
Python (``core/runtime.py``): the code means what it meant, whatever runs it.  ``writes_as_stores``
turns the calls back into the stores they were (vector mode builds its code from the tangent code's
stores).

Why: Numba compiles every write of an array into a slice with a call that formats the shapes into its
error message, and compiling that formatting (its string joins and conversions) took about 5 of the 8
seconds of a first compiled call of the deblur workload's gradient.  The Numba target's versions of the
two helpers (``targets/numba/slice_writes.py``) copy with loops and raise a plain ``ValueError``.
"""
from __future__ import annotations

import dataclasses
import operator
from typing import Any, Optional

import numpy as np

from ..core import ir, runtime
from ..core.kinds import rank


def writes_by_call(fn: ir.Function, kinds: dict[str, Any]) -> ir.Function:
    """``fn`` with its writes of a slice as calls (the module docstring); ``kinds``: the primal's facts,
    which say which names in an index are numbers."""
    replaced: dict[int, ir.Stmt] = {}
    for stmt in ir.walk(fn.body):
        if isinstance(stmt, ir.Store) and stmt.sid not in replaced:
            call = _write_call(stmt, kinds)
            if call is not None:
                replaced[stmt.sid] = ir.Effect(call, stmt.line, sid=stmt.sid)
    return dataclasses.replace(fn, body=ir.replace_statements(fn.body, replaced)) if replaced else fn


def _write_call(store: ir.Store, kinds: dict[str, Any]) -> Optional[ir.Call]:
    if store.op is None:
        helper = runtime.write_into
    elif store.op is operator.add:
        helper = runtime.add_into
    else:
        return None
    parts = ir.index_parts(store.index)
    if not any(isinstance(part, ir.Slice) for part in parts) or \
            not all(_basic(part, kinds) for part in parts):
        return None
    index = tuple(_as_value(part) for part in parts)
    spelled = index[0] if len(index) == 1 else ir.Display("tuple", index)
    return ir.Call(helper, (ir.Var(store.array), spelled, store.value))


def _basic(part: ir.Expr, kinds: dict[str, Any]) -> bool:
    """Whether ``part`` of an index picks a view: a slice of numbers, an integer, ``None`` (an array of
    integers or booleans would pick a copy, which a write through the helper's view would miss)."""
    if isinstance(part, ir.Slice):
        return all(bound is None or _number(bound, kinds) for bound in (part.lower, part.upper, part.step))
    return (isinstance(part, ir.Const) and part.value is None) or _number(part, kinds)


def _number(expr: ir.Expr, kinds: dict[str, Any]) -> bool:
    if isinstance(expr, ir.Const):
        return isinstance(expr.value, (int, np.integer)) and not isinstance(expr.value, bool)
    return isinstance(expr, ir.Var) and expr.name in kinds and rank(kinds[expr.name]) == 0


def _as_value(part: ir.Expr) -> ir.Expr:
    """An index's part as a value outside a subscript: a slice as ``slice(lower, upper, step)``."""
    if not isinstance(part, ir.Slice):
        return part
    bounds = [part.lower, part.upper] + ([part.step] if part.step is not None else [])
    return ir.Call(slice, tuple(ir.Const(None) if b is None else b for b in bounds))


def writes_as_stores(fn: ir.Function) -> ir.Function:
    """``fn`` with each ``write_into``/``add_into`` call back as the store it was, identity and line kept:
    the form a reader of stores takes (vector mode builds its code from the tangent code's stores)."""
    replaced: dict[int, ir.Stmt] = {}
    for stmt in ir.walk(fn.body):
        written = _written(stmt)
        if written is not None and stmt.sid not in replaced:
            array, index, value = written[0].args
            assert isinstance(array, ir.Var)
            parts = tuple(_as_part(part) for part in ir.index_parts(index))
            replaced[stmt.sid] = ir.Store(array.name, parts[0] if len(parts) == 1 else ir.Display("tuple", parts),
                                          value, stmt.line, op=written[1], sid=stmt.sid)
    return dataclasses.replace(fn, body=ir.replace_statements(fn.body, replaced)) if replaced else fn


def _written(stmt: ir.Stmt) -> Optional[tuple[ir.Call, Any]]:
    """The call of ``stmt``, a ``write_into`` or ``add_into``, and the update it makes (None: a plain
    write); None where ``stmt`` is neither."""
    call = stmt.value if isinstance(stmt, ir.Effect) else None
    if isinstance(call, ir.Call) and call.fn is runtime.write_into:
        return call, None
    if isinstance(call, ir.Call) and call.fn is runtime.add_into:
        return call, operator.add
    return None


def _as_part(value: ir.Expr) -> ir.Expr:
    """``_as_value`` undone: ``slice(lower, upper, step)`` as an index's slice."""
    if not (isinstance(value, ir.Call) and value.fn is slice):
        return value
    bounds = [None if isinstance(b, ir.Const) and b.value is None else b for b in value.args] + [None] * (3 - len(value.args))
    return ir.Slice(bounds[0], bounds[1], bounds[2])
