"""The memory model for lists: which appends and item writes of generated code may change their list in place.

Lowering writes ``items.append(x)`` as a new list, ``items_2 = list_append(items_1, x)`` (and
``items[i] = x`` as ``items_2 = list_with(items_1, i, x)``, which this module treats alike): in a
function that is transformed again (forward mode over a gradient) every value stays what it was
when it was bound.  Code that runs pays for that with a copy of the whole list per append
(quadratic in its length: 30,000 appends took a second), and Numba cannot type an empty list handed
to a function.  An append may grow the list it is given in place when nobody can see the
difference: no name that may hold the list before the append is read after it, but the name the
append binds.

Input: a generated ``ir.Function`` (not SSA: a loop's carried list is bound again by its merge copy).
Output: ``appends_in_place(fn)``, the identities (``sid``) of the ``list_append`` assignments that
may grow their list in place; every other one must stay a copy.

What makes an append's list one the answer covers (its *family*, the names that may hold the same
list object): names bound only to a list display (``[]``, ``[a, b]``), to another family name, or to
a ``list_append`` of one; never a parameter (the caller's list), never anything else.  Each family
name may be read only where no other object comes to hold the list: as the list an append grows,
copied to a family name, handed to a call whose result holds no list it is given (declared
``holds_no_list`` in templates: ``len``, ``sum``, an item read; a new object, ``aliasing.new_object``:
``np.array(items)``; an operand ``aliasing.passed_on`` leaves out, such as one read for its shape), or
returned.  A family read anywhere else (pushed to the tape, put in a tuple, iterated, handed to a
user's function or a view-making call) is left as it is.  Then an append grows its list in place
when, of its family, only the name it binds is live after it: the list as it was before the append
can no longer be read, so growing it changes no value the function reads (``live_after``, a
backward liveness over the blocks, loops to a fixed point).
"""
from __future__ import annotations

import operator
from typing import Iterable, Optional

from ..core import ir, runtime
from ..rules import registry as rules
from .aliasing import may_view, new_object, passed_on


def appends_in_place(fn: ir.Function) -> frozenset[int]:
    """The ``sid`` of each ``target = list_append(items, item)`` of ``fn`` that may become
    ``items.append(item)`` (see the module docstring)."""
    families = _families(fn)
    if not families:
        return frozenset()
    names = set().union(*families)
    family_of = {name: family for family in families for name in family}
    after = live_after(fn.body, names, {s.sid for s in ir.walk(fn.body) if _appended(s) is not None})
    grown = set()
    for stmt in ir.walk(fn.body):
        appended = _appended(stmt)
        if appended is None or not isinstance(stmt, ir.Assign) or appended not in family_of:
            continue
        if after.get(stmt.sid, set()) & family_of[appended] <= {stmt.target}:
            grown.add(stmt.sid)
    return frozenset(grown)


def _grown_in_place(stmt: ir.Stmt) -> Optional[str]:
    """The name of the list an ``items.append(item)`` statement grows, else None."""
    if (isinstance(stmt, ir.Effect) and isinstance(stmt.value, ir.Call) and stmt.value.fn is list.append
            and isinstance(stmt.value.args[0], ir.Var)):
        return stmt.value.args[0].name
    return None


def _appended(stmt: ir.Stmt) -> Optional[str]:
    """The name of the list a ``target = list_append(name, item)`` grows or a ``target = list_with(name,
    index, item)`` writes an item into, else None."""
    if (isinstance(stmt, ir.Assign) and isinstance(stmt.value, ir.Call) and not stmt.value.kwargs
            and (stmt.value.fn is runtime.list_append and len(stmt.value.args) == 2
                 or stmt.value.fn is runtime.list_with and len(stmt.value.args) == 3)
            and isinstance(stmt.value.args[0], ir.Var)):
        return stmt.value.args[0].name
    return None


def _sources(stmt: ir.Stmt) -> Optional[tuple[str, ...]]:
    """The names whose list a binding of a family name takes on (none for a list display), or None
    where the binding is of no family form."""
    if not isinstance(stmt, ir.Assign):
        return None
    value = stmt.value
    if isinstance(value, ir.Display) and value.kind == "list":
        return ()
    if isinstance(value, ir.Call) and value.fn is operator.mul and len(value.args) == 2 and any(
            isinstance(a, ir.Display) and a.kind == "list" for a in value.args):
        return ()  # [0.0] * n: a new list (of an array n, a new array, which the same steps change alike)
    if isinstance(value, ir.Var):
        return (value.name,)
    appended = _appended(stmt)
    return None if appended is None else (appended,)


def made_lists(fn: ir.Function) -> frozenset[str]:
    """The names of ``fn`` that hold a list ``fn`` makes, whatever path ran: each bound only to a list
    display, a ``list_append`` of such a name or a copy of one (never a parameter).  (Their adjoints are
    lists too, one piece per item, which ``+`` would join: ``ad.adjoints`` adds them item by item.)"""
    return frozenset(_made_lists(fn, _bindings(fn)))


def _bindings(fn: ir.Function) -> dict[str, list[ir.Stmt]]:
    bindings: dict[str, list[ir.Stmt]] = {}
    for stmt in ir.walk(fn.body):
        for target in ir.targets_of(stmt):
            bindings.setdefault(target, []).append(stmt)
    return bindings


def _made_lists(fn: ir.Function, bindings: dict[str, list[ir.Stmt]]) -> set[str]:
    candidates = {name for name, stmts in bindings.items()
                  if name not in fn.params and all(_sources(s) is not None for s in stmts)}
    changed = True
    while changed:  # a name taking on a non-candidate's value is none either
        changed = False
        for name in list(candidates):
            if any(source not in candidates for s in bindings[name] for source in _sources(s) or ()):
                candidates.discard(name)
                changed = True
    return candidates


def _families(fn: ir.Function) -> list[frozenset[str]]:
    """The families of ``fn`` (names holding lists made here, joined where one may hold another's list)
    whose every read is one that lets no other object hold the list."""
    bindings = _bindings(fn)
    candidates = _made_lists(fn, bindings)
    if not candidates:
        return []
    joined = _Joined(candidates)
    for name in candidates:
        for stmt in bindings[name]:
            for source in _sources(stmt) or ():
                joined.join(name, source)
    spoilt = {joined.find(name) for name in _read_elsewhere(fn.body, candidates)}
    families: dict[str, set[str]] = {}
    for name in candidates:
        root = joined.find(name)
        if root not in spoilt:
            families.setdefault(root, set()).add(name)
    grows = {name for s in ir.walk(fn.body) for name in (_grown_in_place(s),) if name is not None}
    return [frozenset(f) for f in families.values()
            if f & grows or any(_appended(s) is not None for n in f for s in bindings[n])]


class _Joined:
    """Union-find over names."""

    def __init__(self, names: Iterable[str]) -> None:
        self.parent = {n: n for n in names}

    def find(self, name: str) -> str:
        while self.parent[name] != name:
            self.parent[name] = self.parent[self.parent[name]]
            name = self.parent[name]
        return name

    def join(self, a: str, b: str) -> None:
        self.parent[self.find(a)] = self.find(b)


def _read_elsewhere(body: list[ir.Stmt], candidates: set[str]) -> set[str]:
    """The candidates read somewhere another object may come to hold their list."""
    spoilt: set[str] = set()
    for stmt in ir.walk(body):
        if isinstance(stmt, ir.Assign) and stmt.target in candidates:
            if isinstance(stmt.value, ir.Var):
                continue  # a copy to a family name
            appended = _appended(stmt)
            if appended is not None:
                for read in stmt.value.args[1:]:  # type: ignore[union-attr]
                    _bare_reads(read, candidates, spoilt)  # (the item appended or written, and its index)
                continue
        if isinstance(stmt, ir.Return):
            _returned_reads(stmt.value, candidates, spoilt)
            continue
        if _grown_in_place(stmt) is not None:
            _bare_reads(stmt.value.args[1], candidates, spoilt)  # type: ignore[union-attr]
            continue
        if isinstance(stmt, ir.Store) and stmt.array in candidates:
            spoilt.add(stmt.array)
        for expr in ir.exprs_of(stmt):
            _bare_reads(expr, candidates, spoilt)
    return spoilt


def _returned_reads(expr: ir.Expr, candidates: set[str], spoilt: set[str]) -> None:
    """A returned value may be a family name, or a display of them: the list as it is when the
    function ends, which no later statement grows."""
    if isinstance(expr, ir.Var):
        return
    if isinstance(expr, ir.Display):
        for item in expr.items:
            _returned_reads(item, candidates, spoilt)
        return
    _bare_reads(expr, candidates, spoilt)


def _bare_reads(expr: ir.Expr, candidates: set[str], spoilt: set[str]) -> None:
    """Add to ``spoilt`` each candidate ``expr`` reads where another object may come to hold its list:
    anywhere but as an operand of a call whose result holds no list it is given (a new object, a
    number, an item, an adjoint read off the list's shape)."""
    if isinstance(expr, ir.Var):
        if expr.name in candidates:
            spoilt.add(expr.name)
        return
    if isinstance(expr, ir.Call):
        held = _held_by_result(expr)
        for arg in ir.children(expr):
            if not isinstance(arg, ir.Var) or any(arg is h for h in held):
                _bare_reads(arg, candidates, spoilt)
        return
    for child in ir.children(expr):
        _bare_reads(child, candidates, spoilt)


def _held_by_result(call: ir.Call) -> tuple[ir.Expr, ...]:
    """The operands of ``call`` its result may hold (``aliasing.passed_on``): every one for a list grown
    (``list_append``), a user's function or a part of one; none for a call making a new object."""
    if call.fn is runtime.list_append or call.fn is runtime.list_with:
        return tuple(ir.children(call))
    if rules.fact(call.fn, "holds_no_list"):
        return ()
    if not may_view(call.fn, call) and new_object(call, lambda helper: True):
        return ()
    return passed_on(call) if may_view(call.fn, call) else tuple(ir.children(call))


def one_list_at_a_time(fn: ir.Function) -> list[frozenset[str]]:
    """The families of ``fn``, every append of which grows its list in place already, whose names can
    be one name: each binding is a copy of a family name or a new list, and where a new list is made
    no other name of the family is live (so no two lists of the family are ever needed at once)."""
    found = []
    for family in _families(fn):
        bindings = [s for s in ir.walk(fn.body) if isinstance(s, ir.Assign) and s.target in family]
        if any(_appended(s) is not None for s in bindings):
            continue
        made = [s for s in bindings if isinstance(s.value, ir.Display)]
        after = live_after(fn.body, set(family), {s.sid for s in made})
        if all(after.get(s.sid, set()) <= {s.target} for s in made):
            found.append(family)
    return found


def live_after(body: list[ir.Stmt], names: set[str], watched: set[int]) -> dict[int, set[str]]:
    """For each statement of ``body`` whose ``sid`` is in ``watched``, which of ``names`` are live right
    after it (read later on some path before being bound again); loops to a fixed point."""
    found: dict[int, set[str]] = {}
    _live_block(body, set(), names, watched, found)
    return found


def _reads(stmt: ir.Stmt, names: set[str]) -> set[str]:
    return {n for e in ir.exprs_of(stmt) for n in ir.names_read(e) if n in names}


def _live_block(body: list[ir.Stmt], live: set[str], names: set[str], watched: set[int],
                found: dict[int, set[str]]) -> set[str]:
    """What is live before ``body`` given ``live`` after it, recording the watched statements' live-after
    sets in ``found`` (the last pass over a loop body, at its fixed point, writes last)."""
    live = set(live)
    for stmt in reversed(body):
        if stmt.sid in watched:
            found[stmt.sid] = set(live)
        if isinstance(stmt, ir.If):
            live = (_live_block(stmt.body, live, names, watched, found)
                    | _live_block(stmt.orelse, live, names, watched, found) | _reads(stmt, names))
        elif isinstance(stmt, ir.For):
            end = set(live)
            while True:
                start = _live_block(stmt.body, end, names, watched, found) - {stmt.index}
                if start <= end:
                    break
                end |= start
            live = live | start | _reads(stmt, names)
        elif isinstance(stmt, ir.While):
            end = set(live)
            while True:
                before_body = _live_block(stmt.body, end, names, watched, found)
                start = _live_block(stmt.test_block, before_body | live | _reads(stmt, names), names, watched,
                                    found)
                if start <= end:
                    break
                end |= start
            live = start
        else:
            live = (live - set(ir.targets_of(stmt))) | _reads(stmt, names)
    return live
