"""The IR rewrites of ``array_api.target``: NumPy's meaning kept where another library's differs.

Input: a generated function's IR (adjoint or tangent) after the other passes, for an
``ArrayAPITarget``.  Output: the same function with (all of them: ``numpys_meaning_kept``, the pass
``rewrite_for_array_api`` of the declared pipelines, which the target names in ``passes``)

* ``functional_stores``: for an immutable library (JAX), each write ``a[i] op= v`` into an array the
  code just made and no other name may share (an adjoint's accumulator, ``writable_copy``/``zeros_like``;
  the memory model's ``sharing.Sharing`` decides)
  written as ``a = updated_at(a, i, v, "add")`` (``a.at[i].add(v)``); the writes left are refused;
* ``elements_copied``: for a library whose one-element read is a view (PyTorch, CuPy), each read
  ``a[i]`` of an array the function made as ``element_read(a, i)`` (a copy where it is one element,
  as NumPy's number is), and ``+a`` (``a`` itself in PyTorch) as a copy;
* ``keyword_arguments``: the arguments NumPy takes by position and the standard by keyword alone
  (``np.flip(x, 0)``, ``np.roll(x, 1, 0)``, ``np.sum(x, 0)``, ``np.concatenate([a, b], 0)``,
  ``np.triu(m, 1)``) passed by their names (``xp.flip(x, axis=0)``);
* ``negative_step``: the test for a slice PyTorch cannot take (``x[::-1]``), of an array (a
  ``range``'s, ``reversed(range(n))``, is Python's own and fine).
"""
from __future__ import annotations

import dataclasses
import operator
from typing import Any, Callable, Iterator, Optional, Protocol, runtime_checkable

from ...core import ir, runtime
from ...core.identity import IdentityMap
from ...memory.sharing import Sharing


def range_names(body: list[ir.Stmt]) -> set[str]:
    """The names ``body`` binds to a ``range`` (``range_n = range(n)``) or to a slice of one
    (``steps = range_n[::-1]``, how ``reversed(range(n))`` is lowered), everywhere they are bound."""
    bindings: dict[str, list[ir.Expr]] = {}
    for stmt in ir.walk(body):
        for target in ir.targets_of(stmt):
            bindings.setdefault(target, []).append(stmt.value if isinstance(stmt, ir.Assign) else ir.Const(None))
    found: set[str] = set()
    changed = True
    while changed:  # (a slice of a range's slice is a range too)
        changed = False
        for name, values in bindings.items():
            if name not in found and all(_a_range(v, found) for v in values):
                found.add(name)
                changed = True
    return found


def _a_range(expr: ir.Expr, ranges: set[str]) -> bool:
    """Whether ``expr`` is ``range(...)``, or a slice of a name in ``ranges``."""
    if isinstance(expr, ir.Call) and expr.fn is range:
        return True
    if not (isinstance(expr, ir.Call) and expr.fn is operator.getitem):
        return False
    base = expr.args[0]
    return (isinstance(base, ir.Var) and base.name in ranges) or (isinstance(base, ir.Call) and base.fn is range)


def has_negative_step(expr: ir.Expr, ranges: frozenset[str] = frozenset()) -> bool:
    """Whether ``expr`` holds a slice with a constant negative step (``x[::-1]``) of anything but a
    ``range`` (``range(n)[::-1]``, or a slice of a name in ``ranges``: ``range_names``)."""
    if _a_range(expr, set(ranges)) and isinstance(expr, ir.Call) and expr.fn is operator.getitem:
        return any(has_negative_step(e, ranges) for e in expr.args[2:])  # (the slice itself is the range's)
    return _negative_step(expr) or any(has_negative_step(e, ranges) for e in ir.children(expr))


def _negative_step(expr: ir.Expr) -> bool:
    if isinstance(expr, ir.Slice):
        step = expr.step
        return isinstance(step, ir.Const) and isinstance(step.value, (int, float)) and step.value < 0
    return isinstance(expr, ir.Const) and isinstance(expr.value, slice) and (expr.value.step or 0) < 0


def _placed(body: list[ir.Stmt], loops: tuple = ()) -> Iterator[tuple[ir.Stmt, tuple]]:
    """Every statement in program order, with the loops (their ``sid``) it is inside."""
    for stmt in body:
        yield stmt, loops
        inner = loops + (stmt.sid,) if isinstance(stmt, (ir.For, ir.While)) else loops
        for block in ir.blocks(stmt):
            yield from _placed(block, inner)


def functional_stores(fn: ir.Function, updated_at: Callable) -> list[ir.Stmt]:
    """For an immutable library: each write ``a[i] op= v`` into an array the code itself just made
    (``writable_copy``, ``zeros_like``: an adjoint's accumulator) that the memory model says no other
    name may share (``sharing.Sharing``: no view of it, no container or tape slot holding it, no name
    bound to it), written ``a = updated_at(a, i, v, "add")`` (JAX's ``a.at[i].add(v)``).  Functional
    and in-place writes then mean the same: only a name sharing the array's memory could show the
    difference.  The writes that are not so (an array of the user's, written) are left, and refused
    by ``check``."""
    body = fn.body
    placed = list(_placed(body))
    sharing: Optional[Sharing] = None
    replaced: dict[int, ir.Stmt] = {}
    for at, (stmt, _) in enumerate(placed):
        how = _update_of(stmt)
        if how is None or not isinstance(stmt, ir.Store):  # (_update_of: Store statements only)
            continue
        name = stmt.array
        made = _bound_by(placed, at, name)  # the statement that last bound the array before this write
        if made is None or not _makes_fresh(placed[made][0]):
            continue
        sharing = sharing or Sharing(fn)
        if _alone(sharing, name, fn.params):
            update = ir.Call(updated_at, (ir.Var(name), stmt.index, stmt.value, ir.Const(how)))
            replaced[stmt.sid] = ir.Assign(name, update, stmt.line)
    return ir.replace_statements(body, replaced) if replaced else body


def _alone(sharing: Sharing, name: str, params: list[str]) -> bool:
    """No name but ``name`` may share its memory (a parameter, a view, a container, a tape slot)."""
    mine = sharing.of(name)
    if mine & set(params):
        return False
    return not any(other != name and sharing.roots[other] & mine for other in sharing.roots)


def _update_of(stmt: ir.Stmt) -> Optional[str]:
    """What a write the engine makes does, as JAX's ``.at`` names it: "set" (``a[i] = v``) or "add"
    (``a[i] += v``, an adjoint's accumulation); None for any other statement."""
    if not isinstance(stmt, ir.Store):
        return None
    return "set" if stmt.op is None else "add" if stmt.op is operator.add else None


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


# The standard's functions that take by keyword alone what NumPy's take by position: how many
# arguments each takes by position, then the names of NumPy's next positional parameters (None for
# one the standard has no name for, ``out``: such a call is left as it is, and the library refuses it).
_KEYWORD_ONLY: dict[str, tuple[int, tuple[Optional[str], ...]]] = {
    "flip": (1, ("axis",)), "roll": (2, ("axis",)), "concat": (1, ("axis",)), "stack": (1, ("axis",)),
    "triu": (1, ("k",)), "tril": (1, ("k",)), "expand_dims": (1, ("axis",)), "tensordot": (2, ("axes",)),
    "sum": (1, ("axis", "dtype", None, "keepdims")), "prod": (1, ("axis", "dtype", None, "keepdims")),
    "mean": (1, ("axis", "dtype", None, "keepdims")), "max": (1, ("axis", None, "keepdims")),
    "min": (1, ("axis", None, "keepdims")), "all": (1, ("axis", None, "keepdims")),
    "any": (1, ("axis", None, "keepdims")), "argmax": (1, ("axis", None, "keepdims")),
    "argmin": (1, ("axis", None, "keepdims")), "zeros_like": (1, ("dtype",)), "ones_like": (1, ("dtype",)),
    "empty_like": (1, ("dtype",)), "full_like": (2, ("dtype",)),
}


def keyword_arguments(body: list[ir.Stmt], standard_name: Callable[[object], Optional[str]]) -> list[ir.Stmt]:
    """``body`` with each call of a NumPy function the target spells ``xp.<name>`` passing by name
    what NumPy takes by position and the standard by keyword alone (``np.sum(x, 0)`` as
    ``xp.sum(x, axis=0)``): PyTorch's and JAX's namespaces refuse such a positional argument
    (``TypeError`` from generated code).  ``standard_name`` is the target's (``concat`` for
    ``np.concatenate``; None for a function it does not spell so)."""
    def visit(e: ir.Expr) -> Optional[ir.Expr]:
        if not isinstance(e, ir.Call) or isinstance(e.fn, ir.Part):
            return None
        try:
            name = standard_name(e.fn)
        except TypeError:  # (an unhashable callee)
            return None
        if name not in _KEYWORD_ONLY:
            return None
        count, names = _KEYWORD_ONLY[name]
        moved = e.args[count:]
        if not moved or len(moved) > len(names) or any(names[i] is None for i in range(len(moved))):
            return None
        given = {k for k, _ in e.kwargs}
        named = tuple((str(names[i]), a) for i, a in enumerate(moved))
        if any(k in given for k, _ in named):
            return None  # (given twice: the library says so)
        return ir.Call(e.fn, e.args[:count], named + tuple(e.kwargs))
    return _rewritten(body, visit)


def _rewritten(body: list[ir.Stmt], visit: Callable[[ir.Expr], Optional[ir.Expr]],
               memo: Optional[IdentityMap[ir.Stmt, ir.Stmt]] = None) -> list[ir.Stmt]:
    """``body`` with every expression of every statement rebuilt by ``ir.transform`` with ``visit``; a
    statement the body holds in two places (a checkpointed loop's segment run again holds the forward
    sweep's) rebuilt once, so that its two places keep one statement, not two sharing an identity."""
    def expr(e: ir.Expr) -> ir.Expr:
        return ir.transform(e, visit)

    memo = IdentityMap() if memo is None else memo
    out: list[ir.Stmt] = []
    for stmt in body:
        done = memo.get(stmt)
        if done is not None:
            out.append(done)
            continue
        original = stmt
        if isinstance(stmt, (ir.Assign, ir.Unpack, ir.Effect, ir.Return)):
            stmt = dataclasses.replace(stmt, value=expr(stmt.value))
        elif isinstance(stmt, ir.Store):
            stmt = dataclasses.replace(stmt, index=expr(stmt.index), value=expr(stmt.value))
        elif isinstance(stmt, ir.Push):
            stmt = dataclasses.replace(stmt, values=tuple(expr(v) for v in stmt.values))
        elif isinstance(stmt, ir.If):
            stmt = dataclasses.replace(stmt, test=expr(stmt.test), body=_rewritten(stmt.body, visit, memo),
                                       orelse=_rewritten(stmt.orelse, visit, memo))
        elif isinstance(stmt, ir.For):
            stmt = dataclasses.replace(stmt, iterable=expr(stmt.iterable), body=_rewritten(stmt.body, visit, memo))
        elif isinstance(stmt, ir.While):
            stmt = dataclasses.replace(stmt, test_block=_rewritten(stmt.test_block, visit, memo),
                                       test=expr(stmt.test), body=_rewritten(stmt.body, visit, memo))
        memo[original] = stmt
        out.append(stmt)
    return out


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

    return _rewritten(body, visit)


@runtime_checkable
class Rewriting(Protocol):
    """What ``numpys_meaning_kept`` reads of its target (an ``ArrayAPITarget``)."""

    @property
    def writes_through_views(self) -> bool: ...  # NumPy's writes, seen through every view
    @property
    def element_views(self) -> bool: ...  # a one-element read is a 0-d view (PyTorch)
    @property
    def updated_at(self) -> Callable: ...
    @property
    def element_read(self) -> Callable: ...
    def standard_name(self, obj: Any) -> Optional[str]: ...
    def check(self, fn: ir.Function) -> None: ...


def numpys_meaning_kept(fn: ir.Function, target: Rewriting) -> ir.Function:
    """``fn`` as ``target``'s library runs it with NumPy's meaning: its writes functional where that
    library's are not seen through views (``functional_stores``), then refused where it holds what
    the target cannot run (``target.check``, naming the user's line), NumPy's positional arguments
    passed by keyword (``keyword_arguments``), and its element reads copied where the library's are
    views (``elements_copied``).  The pass ``rewrite_for_array_api`` (driver/pass_manager.py)."""
    if not target.writes_through_views:
        fn = dataclasses.replace(fn, body=functional_stores(fn, target.updated_at))
    target.check(fn)
    fn = dataclasses.replace(fn, body=keyword_arguments(fn.body, target.standard_name))
    if target.element_views:
        fn = dataclasses.replace(fn, body=elements_copied(fn.body, set(fn.params), target.element_read))
    return fn
