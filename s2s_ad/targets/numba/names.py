"""Local names that Numba's fused array expressions keep apart.

Input: a function of the Numba target's code (its tape spelled, ``Target.written``).  Output: the
same function where no name is another name followed by ``_<digits>`` (``d_y`` and ``d_y_1``): the
later of such a pair is renamed (``d_y1``), a parameter never (where the pair is two parameters,
both stay).

Why: Numba fuses a statement's whole-array arithmetic (``d_y + d_y_1 * 0.5``) into one kernel, whose
parameters it names after the variables it reads, each a version of its name (``d_y.1``) made new
again and its dots written as underscores: ``d_y``'s version ``d_y.1.1`` and ``d_y_1``'s
``d_y_1.1`` both become ``d_y_1_1``, and Numba stops with "'d_y_1_1' not unique" (an
AssertionError: the function ran as Python).  The adjoint of ``y = y * 0.5 + s * np.sin(y)`` in a
loop met it.  Two names collide so exactly when one is the other followed by ``_<digits>`` groups.
"""
from __future__ import annotations

import dataclasses
import re
from itertools import count
from typing import Iterator, Optional

from ...core import ir

_GROUPS = re.compile(r"(?:_\d+)+$")


def names_kept_apart(fn: ir.Function) -> ir.Function:
    """``fn`` with the names renamed that Numba's fused kernels could confuse (see the module docstring)."""
    params = set(fn.params)
    names = params | ir.assigned_names(fn.body)
    renamed = _victims(names, params)
    if not renamed:
        return fn
    read = {name for stmt in ir.walk(fn.body) for e in ir.exprs_of(stmt) for name in ir.names_read(e)}
    kept = (names | read) - renamed  # (a name read and never bound, a global's, is taken too)
    mapping: dict[str, str] = {}
    for name in sorted(renamed):
        mapping[name] = new = next(c for c in _candidates(name) if _apart(c, kept))
        kept.add(new)
    return dataclasses.replace(fn, body=_bindings_renamed(ir.renamed(fn.body, mapping), mapping))


def _stems(name: str) -> Iterator[str]:
    """``name`` without its last ``_<digits>`` group, without its last two ... (``a_1_2``: ``a_1``, ``a``)."""
    while _GROUPS.search(name):
        name = name[:name.rindex("_")]
        yield name


def _victims(names: set[str], params: set[str]) -> set[str]:
    """One name of each colliding pair: the longer, or the shorter where the longer is a parameter."""
    victims = set()
    for name in names:
        for stem in _stems(name):
            if stem in names:
                victim: Optional[str] = name if name not in params else stem if stem not in params else None
                if victim is not None:
                    victims.add(victim)
    return victims


def _candidates(name: str) -> Iterator[str]:
    """``d_y_1``: ``d_y1``, then ``d_y1a``, ``d_y1b`` ... (the digits kept, the underscores before them not)."""
    match = _GROUPS.search(name)
    joined = name[:match.start()] + match.group().replace("_", "") if match else name + "x"
    yield joined
    for n in count():
        yield joined + _letters(n)


def _letters(n: int) -> str:
    text = ""
    n += 1
    while n:
        n, left = divmod(n - 1, 26)
        text = chr(ord("a") + left) + text
    return text


def _apart(candidate: str, kept: set[str]) -> bool:
    """Whether ``candidate`` is free and neither it nor any name kept is the other with ``_<digits>``."""
    if candidate in kept or any(stem in kept for stem in _stems(candidate)):
        return False
    return not any(candidate in _stems(name) for name in kept if name.startswith(candidate + "_"))


def _bindings_renamed(body: list[ir.Stmt], mapping: dict[str, str]) -> list[ir.Stmt]:
    """``body`` with each name a statement binds (an assignment's, an unpacking's, a pop's, a loop's
    index) that ``mapping`` names bound as its replacement."""
    def renamed(stmt: ir.Stmt) -> ir.Stmt:
        if isinstance(stmt, ir.Assign) and stmt.target in mapping:
            return dataclasses.replace(stmt, target=mapping[stmt.target])
        if isinstance(stmt, (ir.Unpack, ir.Pop)) and any(t in mapping for t in stmt.targets):
            return dataclasses.replace(stmt, targets=tuple(mapping.get(t, t) for t in stmt.targets))
        if isinstance(stmt, ir.For) and stmt.index in mapping:
            return dataclasses.replace(stmt, index=mapping[stmt.index])
        return stmt
    return ir.statements_rebuilt(body, renamed)
