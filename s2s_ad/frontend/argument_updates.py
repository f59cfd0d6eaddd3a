"""Which parameters a user's function may update in place (a syntactic fact about its source).

Input: a user's function's def, as parsed (``parse.source_tree``).  Output: ``updated_in``: for
each parameter the body updates in place before it rebinds it (``v *= c``, ``v[i] = x``,
``v[i] += x``, ``v.append(x)``, ``np.exp(v, out=v)``), its position, name and the line and column of the first such update.
Nested functions and lambdas are their own scopes and are not looked into.  (``parse.updated_parameters``
asks it of a function.)

Why: NumPy changes the caller's array when a helper updates its argument in place.  A helper lowered
in place of its call (``lower_calls.inline``) shows the update to the caller's names; a call kept as
a call runs the helper as Python where its result carries no derivative, so the caller would never
see the update in its derivative.  The lowering lowers such helpers in place, and guards a call it
keeps (``lower_ssa.SSABuilder.guard_updated_arguments``): an array passed there is refused, a number
(whose ``+=`` only rebinds) passes.
"""
from __future__ import annotations

from typing import Any, NamedTuple

import gast


# methods of a list, a dict or an array that change it in place
_CHANGING_METHODS = frozenset({"append", "extend", "insert", "pop", "remove", "clear", "sort", "reverse", "update",
                               "setdefault", "popitem", "fill", "resize", "put", "itemset", "partition"})


class ParameterUpdate(NamedTuple):
    position: int
    name: str
    line: int
    column: int
    filename: str = ""  # the helper's file, where ``parse.updated_parameters`` read it


def updated_in(node: Any) -> tuple[ParameterUpdate, ...]:
    """The parameters the def ``node`` updates in place before rebinding them (see the module docstring)."""
    params = [a.id for a in node.args.args]
    rebound: set[str] = set()
    found: dict[str, ParameterUpdate] = {}
    for stmt, top in _statements(node.body, True):
        for name, at in _updates(stmt):
            if name in params and name not in rebound and name not in found:
                found[name] = ParameterUpdate(params.index(name), name, at.lineno, at.col_offset + 1)
        if top:  # (a name rebound in a branch or loop may still be the argument after it)
            rebound |= _rebinds(stmt)
    return tuple(sorted(found.values()))


def _statements(body: list, top: bool) -> list:
    """The statements of ``body`` in source order, each with whether it is a statement of the function's
    own body (``top``), nested blocks' too (not nested functions' or classes')."""
    out = []
    for stmt in body:
        out.append((stmt, top))
        if isinstance(stmt, (gast.FunctionDef, gast.AsyncFunctionDef, gast.ClassDef)):
            continue
        for block in ("body", "orelse", "finalbody"):
            out += _statements(getattr(stmt, block, None) or [], False)
        for handler in getattr(stmt, "handlers", None) or []:
            out += _statements(handler.body, False)
    return out


def _updates(stmt: Any) -> list[tuple[str, Any]]:
    """The names ``stmt`` updates in place: ``v op= x``, a store into ``v[...]`` or ``v[...] op= x``, a
    method that changes a list or an array (``v.append(x)``, ``v.sort()``), a call writing into ``v``
    (or a part of it) by ``out=`` (``np.exp(v, out=v)``)."""
    outs = _written_by_out(stmt)
    if outs:
        return outs
    if isinstance(stmt, gast.Expr) and isinstance(stmt.value, gast.Call) \
            and isinstance(stmt.value.func, gast.Attribute) and stmt.value.func.attr in _CHANGING_METHODS \
            and isinstance(stmt.value.func.value, gast.Name):
        return [(stmt.value.func.value.id, stmt)]
    if isinstance(stmt, gast.AugAssign):
        targets = [stmt.target]
    elif isinstance(stmt, (gast.Assign, gast.AnnAssign)):
        targets = stmt.targets if isinstance(stmt, gast.Assign) else [stmt.target]
        targets = [t for t in targets if isinstance(t, gast.Subscript)]
    else:
        return []
    names = []
    for target in targets:
        inner = target
        while isinstance(inner, gast.Subscript):
            inner = inner.value
        if isinstance(inner, gast.Name):
            names.append((inner.id, stmt))
    return names


def _written_by_out(stmt: Any) -> list[tuple[str, Any]]:
    """The names a simple statement's calls write into by ``out=`` (``np.multiply(a, b, out=v[1:])``)."""
    if not isinstance(stmt, (gast.Expr, gast.Assign, gast.AugAssign, gast.AnnAssign, gast.Return)):
        return []
    names = []
    calls = [node for node in gast.walk(stmt) if isinstance(node, gast.Call)]
    for keyword in (keyword for call in calls for keyword in call.keywords if keyword.arg == "out"):
        inner = keyword.value
        while isinstance(inner, gast.Subscript):
            inner = inner.value
        if isinstance(inner, gast.Name):
            names.append((inner.id, stmt))
    return names


def _rebinds(stmt: Any) -> set[str]:
    """The names ``stmt`` binds anew (``v = ...``, a loop's target): later updates are of another object."""
    targets: list = []
    if isinstance(stmt, gast.Assign):
        targets = stmt.targets
    elif isinstance(stmt, gast.AnnAssign):
        targets = [stmt.target]
    elif isinstance(stmt, gast.For):
        targets = [stmt.target]
    names = set()
    for target in targets:
        for node in gast.walk(target):
            if isinstance(node, gast.Name) and isinstance(node.ctx, gast.Store):
                names.add(node.id)
    return names
