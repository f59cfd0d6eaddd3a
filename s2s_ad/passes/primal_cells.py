"""The Python target's forward loops fill a float64 vector they make as a list of Python floats.

Input: a generated adjoint-form or split-part ``ir.Function`` ready for the NumPy target (after
``keep_cells``; its tape still pushes and pops), the identities of the primal's statements and the
rank the primal's facts give a value (0: a number).
Output: the same function where, for some vectors ``a`` the user made with ``np.zeros(n)``,
``np.ones(n)`` or ``np.empty(n)`` (declared ``makes_floats``: float64; one axis) and a top-level forward
loop reads and writes element by element only,

    a = cells(a, *parameters)      # before the loop: a list, where no parameter is a float32
    for t in steps:
        ... a[t] ...
        a[t + 1] = float(v)        # each store converts its number as a store into float64 does
        tape.append((..., float64_as_float(s, a)))
    a = cells_array(a)             # after it, where anything reads a later: the float64 array again

Why: a time-stepping loop written into preallocated arrays (``theta[t + 1] = theta[t] + dt *
omega[t]``) reads NumPy scalars, whose arithmetic costs three times a Python float's, and the
values it records for the reverse sweep make that sweep's adjoints NumPy scalars too.  A hand-written
gradient keeps such a loop's state in Python floats; on the benchmarks' pendulum the gradient then
takes 1.25 to 1.42 times the hand-written one's time (three runs, docs/performance.md), not 1.9.

The numbers stay NumPy's.  A store ``a[i] = v`` into a float64 vector keeps ``float(v)``, for ``v``
proven a number: the same double, so each read gives the value the array would hold, as a Python
float.  The user's functions keep NumPy's (``np.sin`` of a Python float is NumPy's float64); a value
the loop records that is NumPy's float64 is recorded as the Python float of the same value
(``float64_as_float``; anything else as it is).  What differs is where a Python float behaves
otherwise than NumPy's float64, and the pass leaves a vector alone where a value computed from its
elements may reach such an operation: ``**``, ``//``, ``%``, a function that is neither NumPy's,
``math``'s, a builtin nor s2s_ad's (``scalar_cells.taint_is_harmless``), and a division the user
wrote (declared ``zero_divisor_raises``: a Python float divided by zero raises where NumPy gives
``inf``); and where a float narrower than float64 may meet them (a Python float is weakly typed: ``cells`` asks of the parameters, and
``scalar_cells.mentions_narrow_floats`` of the code).

Which vectors: bound at the top level only, before the loop, the last time by ``np.zeros(n)``,
``np.ones(n)`` or ``np.empty(n)`` (one positional argument, no dtype: float64) with one axis by the
facts; between that binding and the loop named only by stores into its elements (which go to the
array); in the loop read only as ``a[i]`` and written only as ``a[i] = v``, ``i`` proven an integer
and ``v`` a number (``scalar_cells.element_vectors``' rules).  Nothing else can hold the vector: the
only names it has are its own.
"""
from __future__ import annotations

import dataclasses
from typing import Callable, Optional

from ..core import float_lists, ir
from ..rules import registry as rules
from .scalar_cells import element_read, integer_names, last_binding, mentions_narrow_floats, names_in, \
    only_elements, reads_tainted, taint_is_harmless, tainted_names


def keep_primal_cells(fn: ir.Function, primal: frozenset[int], rank_of: Callable[[ir.Expr], Optional[int]]
                      ) -> ir.Function:
    """``fn`` with the float64 vectors its top-level forward loops fill element by element kept as
    lists there (see the module docstring); ``fn`` itself where there are none."""
    if mentions_narrow_floats(fn):
        return fn
    integers = integer_names(fn)
    body = list(fn.body)
    around = tuple(ir.Var(param) for param in fn.params)
    for sid in [stmt.sid for stmt in body if isinstance(stmt, ir.For) and not stmt.reverse]:
        for name in sorted(_filled_vectors(body, _at_sid(body, sid), integers, rank_of)):
            position = _at_sid(body, sid)
            loop = body[position]
            assert isinstance(loop, ir.For)
            if taint_is_harmless(body, position, name) and not _divides(body, loop, name, primal):
                body = _converted(body, position, name, around, rank_of)
    return dataclasses.replace(fn, body=body) if len(body) != len(fn.body) else fn


def _at_sid(body: list[ir.Stmt], sid: int) -> int:
    """Where the statement of identity ``sid`` is (a loop this pass rewrote keeps its identity)."""
    return next(i for i, stmt in enumerate(body) if stmt.sid == sid)


def _filled_vectors(body: list[ir.Stmt], position: int, integers: set[str],
                    rank_of: Callable[[ir.Expr], Optional[int]]) -> set[str]:
    """The vectors the loop at ``body[position]`` fills by stores of numbers and reads element by
    element only, made as the module docstring says and named by nothing else before the loop."""
    loop = body[position]
    assert isinstance(loop, ir.For)
    stores = [s for s in ir.walk(loop.body) if isinstance(s, ir.Store)]
    found = set()
    for name in {s.array for s in stores}:
        mine = [s for s in stores if s.array == name]
        if any(s.op is not None or not _a_number(s.value, rank_of) for s in mine):
            continue
        binding = last_binding(body, name, position)
        if binding is None or not _made_float64_vector(body[binding], rank_of):
            continue
        if not all(_only_stored_into(stmt, name) for stmt in body[binding + 1:position]):
            continue
        if only_elements(loop.body, name, integers):
            found.add(name)
    return found


def _a_number(expr: ir.Expr, rank_of: Callable[[ir.Expr], Optional[int]]) -> bool:
    if isinstance(expr, ir.Const):
        return expr.value.__class__ in (float, int)
    return isinstance(expr, ir.Var) and rank_of(expr) == 0


def _made_float64_vector(stmt: ir.Stmt, rank_of: Callable[[ir.Expr], Optional[int]]) -> bool:
    """``a = np.zeros(n)`` (``np.ones``, ``np.empty``): one positional argument, no dtype, one axis."""
    assert isinstance(stmt, ir.Assign)
    value = stmt.value
    return isinstance(value, ir.Call) and not value.kwargs and \
        rules.fact(value.fn, "makes_floats", -1) == len(value.args) and rank_of(ir.Var(stmt.target)) == 1


def _only_stored_into(stmt: ir.Stmt, name: str) -> bool:
    """Whether ``stmt`` names ``name`` only as the array of a plain store into it (or not at all)."""
    for inner in ir.walk([stmt]):
        reads = [n for e in ir.exprs_of(inner) for n in ir.names_read(e)]
        if isinstance(inner, ir.Store):
            reads = [n for e in (inner.index, inner.value) for n in ir.names_read(e)]
            if inner.array == name and inner.op is not None:
                return False
        if name in reads or name in ir.targets_of(inner) or (isinstance(inner, ir.Release) and name in inner.names):
            return False
    return True


def _divides(body: list[ir.Stmt], loop: ir.For, name: str, primal: frozenset[int]) -> bool:
    """Whether a division the user wrote may divide a value computed from ``name``'s elements (or by
    one): a Python float divided by a zero Python number raises where NumPy's float64 gives ``inf``."""
    tainted = tainted_names(body, loop, name)
    in_loop = {s.sid for s in ir.walk(loop.body)}

    def divides(expr: ir.Expr, inside: bool) -> bool:
        if isinstance(expr, ir.Call) and rules.fact(expr.fn, "zero_divisor_raises", False) and \
                any(reads_tainted(arg, tainted, name if inside else None) for arg in expr.args):
            return True
        return any(divides(child, inside) for child in ir.children(expr))

    return any(divides(e, stmt.sid in in_loop) for stmt in ir.walk(body) if stmt.sid in primal
               for e in ir.exprs_of(stmt))


# -- the conversion ------------------------------------------------------------------------------

def _converted(body: list[ir.Stmt], position: int, name: str, around: tuple[ir.Var, ...],
               rank_of: Callable[[ir.Expr], Optional[int]]) -> list[ir.Stmt]:
    """``body`` with ``name = cells(name, *around)`` before its loop at ``position``, the loop's stores
    into it as ``float(v)`` and its records of NumPy's numbers made from its elements as Python floats,
    and, where anything after the loop reads it, ``name = cells_array(name)`` after the loop."""
    loop = body[position]
    assert isinstance(loop, ir.For)
    tainted = tainted_names(body, loop, name)
    made_in_loop = {t for s in ir.walk(loop.body) if isinstance(s, ir.Assign) for t in ir.targets_of(s)}

    def rewritten(stmt: ir.Stmt) -> ir.Stmt:
        if isinstance(stmt, ir.Store) and stmt.array == name and not _a_python_float(stmt.value):
            return dataclasses.replace(stmt, value=ir.Call(float, (stmt.value,)))
        if isinstance(stmt, ir.Push):
            return dataclasses.replace(stmt, values=tuple(
                ir.Call(float_lists.float64_as_float, (v, ir.Var(name)))
                if isinstance(v, ir.Var) and v.name in tainted and v.name in made_in_loop and rank_of(v) == 0
                and not _element_of(loop, v.name, name) else v
                for v in stmt.values))
        return stmt

    line = getattr(loop, "line", None)
    new_loop = dataclasses.replace(loop, body=ir.statements_rebuilt(list(loop.body), rewritten))
    before = ir.Assign(name, ir.Call(float_lists.cells, (ir.Var(name),) + around), line)
    after = ir.Assign(name, ir.Call(float_lists.cells_array, (ir.Var(name),)), line)
    rest = body[position + 1:]
    read_later = any(name in names_in(stmt) for stmt in rest)
    return body[:position] + [before, new_loop] + ([after] if read_later else []) + rest


def _a_python_float(expr: ir.Expr) -> bool:
    return isinstance(expr, ir.Const) and expr.value.__class__ is float


def _element_of(loop: ir.For, target: str, name: str) -> bool:
    """Whether ``target`` is bound in ``loop`` to an element read of ``name`` alone (already a Python float)."""
    return any(isinstance(s, ir.Assign) and s.target == target and element_read(s.value, name)
               for s in ir.walk(loop.body))
