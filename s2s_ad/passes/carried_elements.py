"""A reverse loop hands the adjoint element it writes to the next trip in a local.

Input: a generated adjoint-form ``ir.Function`` for the Python target, after
``scalar_cells.keep_cells`` (its reverse loops' adjoint vectors turned into
lists of Python floats where they are float64 vectors).  Output: the same
function where, in such a loop, a trip's last write of ``d_x[t + k]`` is kept
in the local the next trip read it into, instead of going through the list:

    for t in reversed(steps):                 if steps:
        t_plus_1 = t + 1                          d_total = d_temp[steps[-1] + 1]
        d_total = d_temp[t_plus_1]            for t in reversed(steps):
        ...                           →           ...
        d_temp[t] += d_part                       d_total = d_temp[t] + d_part

Why: in a time-stepping loop each reverse trip reads the element the trip
before it wrote; the hand-written adjoint keeps that value in a local.  The
store and the read cost a fifth of the building workload's reverse loop.

When a read ``name = d_x[t + c]`` and an update ``d_x[t + k] += v``, both at the
top level of the body of ``for t in reversed(steps)``, the read first, become
one carried local (an update, not a plain store: ``d_x[t] = v`` into a matrix
would fill a row with a number, which a local would not):

- the loop: as for ``dead_element_stores``: a top-level reverse loop, neither
  checkpointed nor stopping early, over a range of non-negative values stepping by a
  positive constant ``s``, so that the next trip's ``t`` is ``t - s``; and ``c`` is
  ``k + s``: the next trip reads what this one wrote;
- the vector: one ``keep_cells`` made a list before the loop (where it stays an
  array, ``cells`` having left a float32 vector or a matrix alone, the same
  code runs and the carried value is the sum before the store rounds it to
  the array's type: the same to rounding), named after the loop by a ``del`` only;
- every other read or write of ``d_x`` in the loop has a constant offset between
  0 and ``k``, and none at ``k`` after the write: nothing else writes or reads
  the element between the write and the next trip's read, and no later trip
  reads it (so the write itself can go);
- ``name`` is bound by that read only, and read only after it, in the loop.

The first trip's read moves before the loop, guarded by ``if steps:`` so that a
loop that does not run reads nothing.
"""
from __future__ import annotations

import dataclasses
import operator
from dataclasses import dataclass
from typing import Optional

from ..core import float_lists, ir
from .dead_element_stores import counts_down_from_nonnegative, named, offset, offset_names, range_step
from .scalar_cells import element_read, sum_sign


def carry_elements(fn: ir.Function) -> ir.Function:
    """``fn`` with the element each of its top-level reverse loops writes for the next trip kept in
    a local (see the module docstring); ``fn`` itself where there is none."""
    body: list[ir.Stmt] = []
    changed = False
    for position, stmt in enumerate(fn.body):
        step = range_step(fn, stmt) if isinstance(stmt, ir.For) and counts_down_from_nonnegative(fn, stmt) else None
        if step is None:
            body.append(stmt)
            continue
        assert isinstance(stmt, ir.For)
        loop, before = stmt, []
        outside = _Outside(fn.body[:position], fn.body[position + 1:])
        for name in sorted(_lists_before(fn.body, position)):
            if any(named(later, name) for later in outside.after):
                continue
            carried = _carried(outside, loop, name, step)
            if carried is not None:
                loop, first_read = carried
                before.append(first_read)
        if before:  # the first trip's reads, under one test
            body.append(ir.If(loop.iterable, [s for read in before for s in read.body], [], before[0].line))
        body.append(loop)
        changed = changed or bool(before)
    return dataclasses.replace(fn, body=body) if changed else fn


@dataclass
class _Outside:
    """The function's top-level statements before the loop and after it."""

    before: list[ir.Stmt]
    after: list[ir.Stmt]


def _lists_before(body: list[ir.Stmt], position: int) -> set[str]:
    """The names ``keep_cells`` converts just before ``body[position]`` (``d_x = cells(d_x)``)."""
    found = set()
    for stmt in reversed(body[:position]):
        if isinstance(stmt, ir.Comment):
            continue
        if not (isinstance(stmt, ir.Assign) and isinstance(stmt.value, ir.Call) and stmt.value.fn is float_lists.cells):
            break
        found.add(stmt.target)
    return found


def _carried(outside: _Outside, loop: ir.For, name: str, step: int) -> Optional[tuple[ir.For, ir.If]]:
    """``loop`` with its last write of ``name[t + k]`` carried to the next trip's read, and the first
    trip's read before the loop; None where the conditions of the module docstring do not hold."""
    offsets = offset_names(loop)
    accesses = _accesses(loop, name, offsets)
    if any(c is None or c < 0 for _, c, _, _ in accesses):
        return None
    for write_at, write in enumerate(loop.body):
        if not (isinstance(write, ir.Store) and write.array == name and _adds(write)):
            continue
        k = offset(write.index, loop.index, offsets, write_at)
        read_at = _read_of(loop, name, offsets, k + step if k is not None else None, write_at)
        if k is None or read_at is None:
            continue
        read = loop.body[read_at]
        others = [(at, c) for at, c, kind, stmt in accesses
                  if not (kind == "write" and stmt is write) and not (kind == "read" and stmt is read)]
        if all(c is not None and c <= k and not (c == k and at > write_at) for at, c in others) \
                and _carried_name_free(outside, loop, read_at, write_at):
            return _rewritten(outside, loop, name, read_at, write_at, k + step)
    return None


def _adds(write: ir.Store) -> bool:
    """Whether the store is ``d_x[i] += v``."""
    return write.op is not None and sum_sign(write.op) == 1


def _accesses(loop: ir.For, name: str, offsets: dict[str, tuple[int, int]]
              ) -> list[tuple[int, Optional[int], str, ir.Stmt]]:
    """Every read and write of ``name``'s elements in the loop: the top-level position of the
    statement, the offset of its index (None where not proven), "read" or "write", and the statement
    itself (the top-level one, for a read)."""
    found: list[tuple[int, Optional[int], str, ir.Stmt]] = []
    for position, top in enumerate(loop.body):
        for stmt in ir.walk([top]):
            if isinstance(stmt, ir.Store) and stmt.array == name:
                found.append((position, offset(stmt.index, loop.index, offsets, position), "write", stmt))
            for expr in ([stmt.index, stmt.value] if isinstance(stmt, ir.Store) else ir.exprs_of(stmt)):
                for index in _indexes_read(expr, name):
                    found.append((position, offset(index, loop.index, offsets, position), "read", top))
    return found


def _indexes_read(expr: ir.Expr, name: str) -> list[ir.Expr]:
    """The indexes of the reads ``name[i]`` in ``expr``."""
    own = [expr.args[1]] if element_read(expr, name) and isinstance(expr, ir.Call) else []
    return own + [i for child in ir.children(expr) for i in _indexes_read(child, name)]


def _read_of(loop: ir.For, name: str, offsets: dict[str, tuple[int, int]], c: Optional[int],
             before: int) -> Optional[int]:
    """The position of the top-level ``local = name[t + c]`` before ``before``, if there is one."""
    for position, stmt in enumerate(loop.body[:before]):
        if isinstance(stmt, ir.Assign) and element_read(stmt.value, name) and isinstance(stmt.value, ir.Call) \
                and offset(stmt.value.args[1], loop.index, offsets, position) == c:
            return position
    return None


def _carried_name_free(outside: _Outside, loop: ir.For, read_at: int, write_at: int) -> bool:
    """Whether the read's local is bound by it alone and read only after it, in the loop; and, where
    it is read after the write too, nothing after the write binds a name the write reads (the
    write's value is then computed at the end of the trip, after the local's last read)."""
    read = loop.body[read_at]
    assert isinstance(read, ir.Assign)
    local = read.target
    if sum(local in ir.targets_of(s) for s in ir.walk(loop.body)) != 1:
        return False
    if any(named(s, local) for s in outside.before + outside.after):
        return False
    if any(named(s, local) for s in loop.body[:read_at]):
        return False
    if not any(named(s, local) for s in loop.body[write_at + 1:]):
        return True
    write = loop.body[write_at]
    assert isinstance(write, ir.Store)
    read_by_write = {n for e in (write.index, write.value) for n in ir.names_read(e)}
    return not any(set(ir.targets_of(s)) & read_by_write for s in ir.walk(loop.body[write_at + 1:]))


def _rewritten(outside: _Outside, loop: ir.For, name: str, read_at: int, write_at: int, c: int
               ) -> tuple[ir.For, ir.If]:
    read, write = loop.body[read_at], loop.body[write_at]
    assert isinstance(read, ir.Assign) and isinstance(write, ir.Store)
    value = ir.Call(write.op, (ir.Call(operator.getitem, (ir.Var(name), write.index)), write.value))
    body = [s for s in loop.body if s is not read and s is not write]
    read_later = any(named(s, read.target) for s in loop.body[write_at + 1:])
    carried = ir.Assign(read.target, value, write.line)
    if read_later:  # after the local's last read in this trip (_carried_name_free)
        body.append(carried)
    else:
        body.insert(write_at - 1, carried)  # (the read, before it, is gone)
    body = _earlier_update_folded(body, next(i for i, s in enumerate(body) if s is carried), name, write.index)
    body = _unused_offsets_dropped(outside, loop, body)
    last = ir.Call(operator.getitem, (loop.iterable, ir.Const(-1)))
    first = last if c == 0 else ir.Call(operator.add, (last, ir.Const(c)))
    first_read = ir.If(loop.iterable, [ir.Assign(read.target, ir.Call(operator.getitem, (ir.Var(name), first)),
                                                 read.line)], [], read.line)
    return dataclasses.replace(loop, body=body), first_read


def _earlier_update_folded(body: list[ir.Stmt], carried_at: int, name: str, index: ir.Expr) -> list[ir.Stmt]:
    """``body`` where the carried ``local = name[i] + w`` at ``carried_at`` also adds the ``v`` of an
    earlier ``name[i] += v`` of the trip, which then goes: nothing between the two names ``name`` or
    binds ``i`` or a name ``v`` reads, and the carried element is read by no later trip and by nothing
    after it in this one (``_carried``), so the store was seen by the carried read alone.  The sums
    are the same, in the same order: ``(name[i] + v) + w``."""
    carried = body[carried_at]
    assert isinstance(carried, ir.Assign) and isinstance(carried.value, ir.Call)
    if not isinstance(index, ir.Var):
        return body
    for at in range(carried_at - 1, -1, -1):
        stmt = body[at]
        if not named(stmt, name):
            continue
        if not (isinstance(stmt, ir.Store) and _adds(stmt) and isinstance(stmt.index, ir.Var)
                and stmt.index.name == index.name):
            return body
        read = {index.name} | set(ir.names_read(stmt.value))
        if any(set(ir.targets_of(s)) & read for s in ir.walk(body[at + 1:carried_at])):
            return body
        element, addend = carried.value.args
        value = ir.Call(carried.value.fn, (ir.Call(stmt.op, (element, stmt.value)), addend))
        folded = dataclasses.replace(carried, value=value)
        return body[:at] + body[at + 1:carried_at] + [folded] + body[carried_at + 1:]
    return body


def _unused_offsets_dropped(outside: _Outside, loop: ir.For, body: list[ir.Stmt]) -> list[ir.Stmt]:
    """``body`` without the ``t_plus_1 = t + 1`` the moved read alone used."""
    offsets = offset_names(loop)
    unused = {n for n in offsets if not any(named(s, n) for s in body if n not in ir.targets_of(s))
              and not any(named(s, n) for s in outside.after)}
    return [s for s in body if not (isinstance(s, ir.Assign) and s.target in unused)]
