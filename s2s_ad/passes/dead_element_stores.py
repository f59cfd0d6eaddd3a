"""A reverse loop's stores into an adjoint element that nothing reads again are left out.

Input: a generated adjoint-form ``ir.Function`` ready for the NumPy target
(optimized; its tape still pushes and pops, written when printed), and ``known``, the names the primal facts
know (every other name is the generator's: an adjoint, a tape record).
Output: the same function without the stores of a constant ``d_x[t + k] = 0.0``
in a top-level reverse loop that no later read can see.

Why: the adjoint of ``x[t + 1] = v`` reads ``d_x[t + 1]`` and then zeroes it,
since the element's earlier value gets no share of what came after the store.
In a time-stepping loop whose iterations, run backwards, touch only
``d_x[t]`` and ``d_x[t + 1]``, the zeroed element is never read again: the
store costs a tenth of the loop's time and changes nothing.

When a store ``d_x[t + k] = c`` (``c`` a constant) at the top level of the body
of ``for t in reversed(steps)`` is left out:

- the loop: a top-level reverse loop, neither checkpointed nor stopping early,
  over a name every binding of which is ``range(n)``, ``range(a, n)`` or
  ``range(a, n, s)`` with ``a`` a non-negative and ``s`` a positive integer
  constant: ``t`` is never negative, and each iteration's ``t`` is smaller than
  the one before;
- the array: ``d_x`` is one the loop reads and writes element by element only,
  by integer indexes, bound fresh before the loop (no other name shares its
  memory: ``scalar_cells.element_vectors``), and nothing after the loop names
  it but a ``del``;
- the indexes: ``k`` and the offset ``c`` of every read of ``d_x`` in the loop
  (``d_x[t + c]`` or an ``op=`` store into it), are integer constants, the index
  written ``t``, ``t + c``, ``t - c`` or a name the body binds once, before its
  reads, to one of those; each ``c`` is non-negative (no index counts from the
  end), at most ``k`` (a later iteration's ``t + c`` is below ``t + k``) and,
  for a read after the store in the same iteration, below ``k``.
"""
from __future__ import annotations

import dataclasses
from typing import Optional

from ..core import ir
from .scalar_cells import element_read, element_vectors, integer_names, sum_sign


def drop_dead_element_stores(fn: ir.Function, known: set[str]) -> ir.Function:
    """``fn`` without the element stores of its top-level reverse loops that nothing reads again
    (see the module docstring); ``fn`` itself where there are none."""
    integers = integer_names(fn)
    body = list(fn.body)
    changed = False
    for position, loop in enumerate(body):
        if not isinstance(loop, ir.For) or not counts_down_from_nonnegative(fn, loop):
            continue
        after = body[position + 1:]
        vectors = {name for name in element_vectors(body, position, known, integers)
                   if not any(named(stmt, name) for stmt in after)}
        dead = _dead_stores(loop, vectors)
        if dead:
            body[position] = dataclasses.replace(loop, body=[s for s in loop.body if s.sid not in dead])
            changed = True
    return dataclasses.replace(fn, body=body) if changed else fn


def counts_down_from_nonnegative(fn: ir.Function, loop: ir.For) -> bool:
    """Whether ``loop`` runs backwards over a range whose values are non-negative and that steps
    by a positive constant, and runs every trip (no checkpoints, no early exit)."""
    return loop.reverse and _every_trip_of_a_range(fn, loop)


def counts_up(fn: ir.Function, loop: ir.For) -> bool:
    """Whether ``loop`` runs forwards over such a range, every trip."""
    return not loop.reverse and _every_trip_of_a_range(fn, loop)


def _every_trip_of_a_range(fn: ir.Function, loop: ir.For) -> bool:
    if loop.checkpoint is not None or loop.exit is not None:
        return False
    if not isinstance(loop.iterable, ir.Var) or loop.iterable.name in fn.params:
        return False
    bindings = [stmt for stmt in ir.walk(fn.body) if loop.iterable.name in ir.targets_of(stmt)]
    return bool(bindings) and all(_plain_range(stmt) for stmt in bindings)


def range_step(fn: ir.Function, loop: ir.For) -> Optional[int]:
    """The step of the range ``loop`` walks (by ``counts_down_from_nonnegative``'s bindings), where
    every binding gives the same constant one; None else."""
    assert isinstance(loop.iterable, ir.Var)
    steps = {_step(stmt) for stmt in ir.walk(fn.body) if loop.iterable.name in ir.targets_of(stmt)}
    return steps.pop() if len(steps) == 1 and None not in steps else None


def _step(stmt: ir.Stmt) -> Optional[int]:
    if not (isinstance(stmt, ir.Assign) and isinstance(stmt.value, ir.Call) and stmt.value.fn is range):
        return None
    return _int_const(stmt.value.args[2]) if len(stmt.value.args) == 3 else 1


def _plain_range(stmt: ir.Stmt) -> bool:
    if not (isinstance(stmt, ir.Assign) and isinstance(stmt.value, ir.Call) and stmt.value.fn is range
            and not stmt.value.kwargs):
        return False
    args = stmt.value.args
    if len(args) == 1:
        return True
    start_ok = _int_const(args[0]) is not None and _int_const(args[0]) >= 0  # type: ignore[operator]
    step = _int_const(args[2]) if len(args) == 3 else 1
    return start_ok and step is not None and step > 0


def _int_const(expr: ir.Expr) -> Optional[int]:
    return expr.value if isinstance(expr, ir.Const) and expr.value.__class__ is int else None


def named(stmt: ir.Stmt, name: str) -> bool:
    """Whether ``stmt`` (its nested blocks included) names ``name`` other than in a ``del``."""
    for inner in ir.walk([stmt]):
        if isinstance(inner, ir.Store) and inner.array == name:
            return True
        if name in ir.targets_of(inner) or any(name in ir.names_read(e) for e in ir.exprs_of(inner)):
            return True
    return False


# -- the stores nothing reads again --------------------------------------------------------------

def _dead_stores(loop: ir.For, vectors: set[str]) -> set[int]:
    """The ids of the top-level stores of ``loop``'s body into ``vectors`` that no later read sees."""
    offsets = offset_names(loop)
    reads = _reads(loop, vectors, offsets)
    dead = set()
    for position, stmt in enumerate(loop.body):
        if not (isinstance(stmt, ir.Store) and stmt.array in vectors and stmt.op is None
                and isinstance(stmt.value, ir.Const)):
            continue
        k = offset(stmt.index, loop.index, offsets, position)
        if k is None or k < 0:
            continue
        if all(c is not None and 0 <= c <= k and (at <= position or c < k) for at, c in reads.get(stmt.array, [])):
            dead.add(stmt.sid)
    return dead


def _reads(loop: ir.For, vectors: set[str], offsets: dict[str, tuple[int, int]]
           ) -> dict[str, list[tuple[int, Optional[int]]]]:
    """For each of ``vectors``, its reads in the loop's body: the top-level position of the
    statement reading it and the offset of the index read (None where not proven)."""
    found: dict[str, list[tuple[int, Optional[int]]]] = {}
    for position, top in enumerate(loop.body):
        for stmt in ir.walk([top]):
            if isinstance(stmt, ir.Store) and stmt.array in vectors and stmt.op is not None:
                found.setdefault(stmt.array, []).append(
                    (position, offset(stmt.index, loop.index, offsets, position)))
            for expr in ir.exprs_of(stmt):
                for read in _element_reads(expr, vectors):
                    assert isinstance(read, ir.Call) and isinstance(read.args[0], ir.Var)
                    found.setdefault(read.args[0].name, []).append(
                        (position, offset(read.args[1], loop.index, offsets, position)))
    return found


def _element_reads(expr: ir.Expr, vectors: set[str]) -> list[ir.Expr]:
    out: list[ir.Expr] = [expr] if any(element_read(expr, name) for name in vectors) else []
    for child in ir.children(expr):
        out += _element_reads(child, vectors)
    return out


def offset_names(loop: ir.For) -> dict[str, tuple[int, int]]:
    """The names the loop's body binds once, at its top level, to ``t``, ``t + c`` or ``t - c``
    (``t`` its index): each with the position binding it and ``c``."""
    counts: dict[str, int] = {}
    for stmt in ir.walk(loop.body):
        for target in ir.targets_of(stmt):
            counts[target] = counts.get(target, 0) + 1
        if isinstance(stmt, ir.For):
            counts[stmt.index] = counts.get(stmt.index, 0) + 2
    out = {}
    for position, stmt in enumerate(loop.body):
        if isinstance(stmt, ir.Assign) and counts.get(stmt.target) == 1 and stmt.target != loop.index:
            c = offset(stmt.value, loop.index, {}, position)
            if c is not None:
                out[stmt.target] = (position, c)
    return out


def offset(index: ir.Expr, t: str, offsets: dict[str, tuple[int, int]], position: int) -> Optional[int]:
    """``c`` where ``index``, read at top-level ``position`` of the loop's body, is ``t + c``."""
    if isinstance(index, ir.Var):
        if index.name == t:
            return 0
        bound = offsets.get(index.name)
        return bound[1] if bound is not None and bound[0] < position else None
    if isinstance(index, ir.Call) and len(index.args) == 2 and not index.kwargs:
        sign = sum_sign(index.fn)
        left, right = index.args
        if sign is None:
            return None
        if isinstance(left, ir.Var) and left.name == t and _int_const(right) is not None:
            return sign * _int_const(right)  # type: ignore[operator]
        if sign == 1 and isinstance(right, ir.Var) and right.name == t and _int_const(left) is not None:
            return _int_const(left)
    return None

