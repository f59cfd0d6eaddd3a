"""The IR rewrites of ``array_api_target``: NumPy's meaning kept where another library's differs.

Input: a generated function's IR (adjoint or tangent), just before it is printed for an
``ArrayAPITarget``.  Output: the same function with

* ``functional_stores``: for an immutable library (JAX), each write ``a[i] op= v`` into an array the
  code just made and no other name can see (an adjoint's accumulator, ``writable_copy``/``zeros_like``)
  written as ``a = updated_at(a, i, v, "add")`` (``a.at[i].add(v)``); the writes left are refused;
* ``elements_copied``: for a library whose one-element read is a view (PyTorch, CuPy), each read
  ``a[i]`` of an array the function made as ``element_read(a, i)`` (a copy where it is one element,
  as NumPy's number is), and ``+a`` (``a`` itself in PyTorch) as a copy;
* ``negative_step``: the test for a slice PyTorch cannot take (``x[::-1]``).
"""
from __future__ import annotations

import dataclasses
import operator
from typing import Callable, Iterator, Optional

from . import ir, runtime


def _subexpressions(expr: ir.Expr) -> Iterator[ir.Expr]:
    yield expr
    for child in ir.children(expr):
        yield from _subexpressions(child)


def has_negative_step(expr: ir.Expr) -> bool:
    """Whether ``expr`` holds a slice with a constant negative step (``x[::-1]``)."""
    return any(_negative_step(e) for e in _subexpressions(expr))


def _negative_step(expr: ir.Expr) -> bool:
    if isinstance(expr, ir.Slice):
        step = expr.step
        return isinstance(step, ir.Const) and isinstance(step.value, (int, float)) and step.value < 0
    return isinstance(expr, ir.Const) and isinstance(expr.value, slice) and (expr.value.step or 0) < 0




def _placed(body: list[ir.Stmt], loops: tuple = ()) -> Iterator[tuple[ir.Stmt, tuple]]:
    """Every statement in program order, with the loops (their ids) it is inside."""
    for stmt in body:
        yield stmt, loops
        inner = loops + (id(stmt),) if isinstance(stmt, (ir.For, ir.While)) else loops
        for block in ir.blocks(stmt):
            yield from _placed(block, inner)


def functional_stores(body: list[ir.Stmt], updated_at: Callable) -> list[ir.Stmt]:
    """For an immutable library: each write ``a[i] op= v`` into an array the code itself just made
    with no other name for it (``writable_copy``, ``zeros_like``: an adjoint's accumulator), written
    ``a = updated_at(a, i, v, "add")`` (JAX's ``a.at[i].add(v)``).  Functional and in-place writes
    mean the same there: between the array's making and its last write no statement reads ``a`` (so
    no other name, no view, can see the writes), and none that does is in a loop with a write.  The
    writes that are not so (an array of the user's, written) are left, and refused by ``check``."""
    placed = list(_placed(body))
    replaced: dict[int, ir.Stmt] = {}
    for at, (stmt, loops) in enumerate(placed):
        how = _update_of(stmt)
        if how is None or not isinstance(stmt, ir.Store):  # (_update_of: Store statements only)
            continue
        name = stmt.array
        made = None  # the statement that last bound the array before this write
        for before in range(at - 1, -1, -1):
            if name in ir.targets_of(placed[before][0]):
                made = before
                break
        if made is None or not _makes_fresh(placed[made][0]):
            continue
        writes = [i for i in range(made + 1, len(placed)) if _writes_into(placed[i][0], name)
                  and _bound_by(placed, i, name) == made]
        write_loops = {loop for i in writes for loop in placed[i][1]} - set(placed[made][1])
        if _unread_between(placed, name, made, writes[-1], write_loops, writes):
            update = ir.Call(updated_at, (ir.Var(name), stmt.index, stmt.value, ir.Const(how)))
            replaced[id(stmt)] = ir.Assign(name, update, stmt.line)
    return ir.replace_statements(body, replaced) if replaced else body


def _update_of(stmt: ir.Stmt) -> Optional[str]:
    """What a write the engine makes does, as JAX's ``.at`` names it: "set" (``a[i] = v``) or "add"
    (``a[i] += v``, an adjoint's accumulation); None for any other statement."""
    if not isinstance(stmt, ir.Store):
        return None
    return "set" if stmt.op is None else "add" if stmt.op is operator.add else None


def _writes_into(stmt: ir.Stmt, name: str) -> bool:
    return isinstance(stmt, ir.Store) and stmt.array == name


def _makes_fresh(stmt: ir.Stmt) -> bool:
    """``a = writable_copy(...)`` or ``a = zeros_like(...)``: an array the engine made, of its own."""
    if not isinstance(stmt, ir.Assign) or not isinstance(stmt.value, ir.Call):
        return False
    return stmt.value.fn is runtime.writable_copy or stmt.value.fn is runtime.zeros_like


def _bound_by(placed: list, at: int, name: str) -> Optional[int]:
    for before in range(at - 1, -1, -1):
        if name in ir.targets_of(placed[before][0]):
            return before
    return None


def _unread_between(placed: list, name: str, made: int, last: int, write_loops: set, writes: list) -> bool:
    """No statement but the writes reads ``name`` after ``made`` up to ``last``, nor anywhere inside a
    loop holding a write (its next iteration writes after the read)."""
    for i, (stmt, loops) in enumerate(placed):
        if i <= made or i in writes or isinstance(stmt, (ir.If, ir.For, ir.While)) and not _reads_in_header(stmt, name):
            continue
        reads = any(name in ir.names_read(e) for e in ir.exprs_of(stmt))
        if reads and (i <= last or write_loops & set(loops)):
            return False
    return True


def _reads_in_header(stmt: ir.Stmt, name: str) -> bool:
    return any(name in ir.names_read(e) for e in ir.exprs_of(stmt))


def elements_copied(body: list[ir.Stmt], params: set[str], element_read: Callable) -> list[ir.Stmt]:
    """``body`` with each read ``a[i]`` of an array the function made (not a parameter: those are never
    written) as ``element_read(a, i)``: for a library whose one-element read is a view of the array
    (PyTorch), a copy, as NumPy's number is; a later write into ``a`` must not change it.  And ``+a``,
    which is ``a`` itself in PyTorch, a new array in NumPy, as ``element_read(a, ...)`` (a copy)."""
    def visit(e: ir.Expr) -> Optional[ir.Expr]:
        if isinstance(e, ir.Call) and e.fn is operator.getitem and len(e.args) == 2 \
                and isinstance(e.args[0], ir.Var) and e.args[0].name not in params:
            return ir.Call(element_read, e.args)
        if isinstance(e, ir.Call) and e.fn is operator.pos and len(e.args) == 1:  # PyTorch's +x is x itself
            return ir.Call(element_read, (e.args[0], ir.Const(Ellipsis)))
        return None

    def expr(e: ir.Expr) -> ir.Expr:
        return ir.transform(e, visit)

    out: list[ir.Stmt] = []
    for stmt in body:
        if isinstance(stmt, (ir.Assign, ir.Unpack, ir.Effect, ir.Return)):
            stmt = dataclasses.replace(stmt, value=expr(stmt.value))
        elif isinstance(stmt, ir.Store):
            stmt = dataclasses.replace(stmt, index=expr(stmt.index), value=expr(stmt.value))
        elif isinstance(stmt, ir.Push):
            stmt = dataclasses.replace(stmt, values=tuple(expr(v) for v in stmt.values))
        elif isinstance(stmt, ir.If):
            stmt = dataclasses.replace(stmt, test=expr(stmt.test), body=elements_copied(stmt.body, params, element_read),
                                       orelse=elements_copied(stmt.orelse, params, element_read))
        elif isinstance(stmt, ir.For):
            stmt = dataclasses.replace(stmt, iterable=expr(stmt.iterable),
                                       body=elements_copied(stmt.body, params, element_read))
        elif isinstance(stmt, ir.While):
            stmt = dataclasses.replace(stmt, test_block=elements_copied(stmt.test_block, params, element_read),
                                       test=expr(stmt.test), body=elements_copied(stmt.body, params, element_read))
        out.append(stmt)
    return out
