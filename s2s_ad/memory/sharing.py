"""The memory model over IR (stages 4-6: the generators, the passes and the targets): which names of a
function's IR may share memory, by NumPy's rules as ``aliasing`` states them.

Lowering leaves no write through a view in the IR (``views``/``lowering`` made each one a store into
its base and the view taken again), so what is left to ask of IR is which values may be the same
object: a view made by a call (``aliasing.may_view``), a name bound to another, a container or a
tape slot holding one.  ``Sharing`` solves that once per function or block (a fixed point over loops
and branches) and answers the generators' questions:

* ``reverse.py``/``recording.py``: which recorded values need a copy (``copy_needed_for_record``),
  which adjoints a self-store shares (``adjoint_shared_with_store``), which handed-out values the
  reverse sweep would change (``handed_out_needs_copy``);
* ``forward.py``: a tangent may share memory only where its primal does (``tangent_needs_copy``,
  ``result_needs_copy``);
* ``optimize.py``, ``emit.py`` and the targets (``Sharing.of_block``, ``fresh_returns``,
  ``returns_shared``): the same analysis of generated code, where a name is bound again and the
  tape passes values on, and whether a function's results are new objects no caller holds.

Input: ``ir.Function`` or a block of statements.  Output: answers only.  Where a fact cannot be
decided the answer is "may share" (a copy), never "does not".
"""
from __future__ import annotations

from typing import Any, Callable, Optional, Sequence

import numpy as np

from ..core import ir
from .aliasing import may_view, new_object, passed_on, shared_operands, values_read, viewing_call


def returns_shared(fn: ir.Function) -> bool:
    """True if the SSA function ``fn`` may return one of its arguments, a view of one, or a
    container holding one."""
    returned = [s.value for s in ir.walk(fn.body) if isinstance(s, ir.Return)]
    sharing = Sharing(fn)
    return any(sharing.operands(value) & set(fn.params) for value in returned)


def fresh_returns(fn: ir.Function) -> bool:
    """True if every array the generated function ``fn`` returns is surely a new object of its own:
    each name in its returned displays (``return out, (d_x, d_y)``) is bound, everywhere it is bound,
    to a constant, to a call making a new object (``new_object``, a user's function counted as
    sharing) or to another such name; and no two of them may share memory (``Sharing.of_block``).
    Then the caller need not compare the gradients with the arguments before handing them out.

    Anything else (a parameter, a value popped from the tape, an unpacked item, a loop index, an
    expression) makes the answer False: the caller compares at run time, as without this."""
    bindings: dict[str, list[ir.Stmt]] = {}
    for stmt in ir.walk(fn.body):
        for target in ir.targets_of(stmt):
            bindings.setdefault(target, []).append(stmt)
    returned = _returned_names(fn)
    if returned is None:
        return False
    proven: dict[str, bool] = {}

    def fresh(name: str) -> bool:
        if name not in proven:
            proven[name] = True  # assumed while its bindings are looked at: a cycle of copies adds nothing
            proven[name] = name not in fn.params and bool(bindings.get(name)) and all(
                _fresh_binding(stmt, fresh) for stmt in bindings[name])
        return proven[name]

    if not all(fresh(name) for name in returned):
        return False
    sharing = Sharing.of_block(fn.body)
    return not any(sharing.shares(a, b) for i, a in enumerate(returned) for b in returned[i + 1:])


def _returned_names(fn: ir.Function) -> Optional[list[str]]:
    """The names the function's returns hand out, inside (nested) tuple displays; None if one returns
    anything else (an expression, a list display)."""
    names: list[str] = []

    def leaves(expr: ir.Expr) -> bool:
        if isinstance(expr, ir.Var):
            names.append(expr.name)
            return True
        if isinstance(expr, ir.Const):
            return _immutable(expr.value)  # (a module-level array, folded in, is the module's own object)
        return isinstance(expr, ir.Display) and expr.kind == "tuple" and all(leaves(e) for e in expr.items)

    returns = [s for s in ir.walk(fn.body) if isinstance(s, ir.Return)]
    if not returns or not all(leaves(s.value) for s in returns):
        return None
    return names


def _fresh_binding(stmt: ir.Stmt, fresh: Callable[[str], bool]) -> bool:
    """``stmt`` binds its target to a constant, a new object or a name ``fresh`` proves new."""
    if not isinstance(stmt, ir.Assign):
        return False  # an unpacked item, a popped record, a loop index
    value = stmt.value
    if isinstance(value, ir.Const):
        return _immutable(value.value)
    if isinstance(value, ir.Var):
        return fresh(value.name)
    return isinstance(value, ir.Call) and new_object(value, lambda _: True)


def _immutable(value: Any) -> bool:
    """Whether a constant of generated code is a value no one can change or hold as shared memory (a
    number, string, None, or a tuple of them): unlike an array or list the user's module holds."""
    if isinstance(value, tuple):
        return all(_immutable(v) for v in value)
    return value is None or isinstance(value, (bool, int, float, complex, str, np.generic))


class Sharing:
    """A may-alias analysis of an SSA function: which arrays each name may share memory with.

    Every array the function holds is made somewhere: a parameter, or a
    statement whose value is a new array (arithmetic, ``np.zeros``, a copy).
    ``roots[name]`` is the set of those that ``name`` may be, or view, or
    hold (a list of arrays holds its items).  A view-making call, a user's
    function, a copy, a merge or a container shares its operands' roots;
    any other call makes a new root, its own name.  The analysis is
    flow-insensitive (a fixed point over all statements), hence sound for
    loops and branches.

    ``written`` is the roots some ``Store`` writes into; ``stale`` the names
    bound to memory of another root that a ``Store`` may write *after* the
    binding (later in program order, or anywhere in a loop around both):
    what such a name holds when it is read later need not be what it held
    when it was bound.
    """

    def __init__(self, fn: ir.Function, only_if_written: bool = False,
                 numbers: frozenset[str] = frozenset(), find_stale: bool = True) -> None:
        """With ``only_if_written``, a function that writes into no array is not analysed: nothing
        it binds can change, which is all ``written``, ``stale`` and ``may_change`` tell.
        ``numbers``: names known to hold a number wherever they are bound, which share memory with
        nothing (``a[i]`` of a vector is one: without them, it would share ``a``'s root)."""
        self.numbers = numbers
        self.roots: dict[str, frozenset[str]] = {p: frozenset((p,)) for p in fn.params}
        stores = [s for s in ir.walk(fn.body) if isinstance(s, ir.Store)]
        if stores or not only_if_written:
            self._solve(fn.params, fn.body)
        self.written: frozenset[str] = frozenset(r for s in stores for r in self.of(s.array))
        self.stale: set[str] = set()
        if stores and find_stale:
            self._find_stale(fn.body, frozenset())

    @classmethod
    def of_block(cls, body: list[ir.Stmt], numbers: frozenset[str] = frozenset()) -> "Sharing":
        """The same analysis of generated code, which is not SSA (a name bound again may be what any
        of its bindings made) and passes values through the tape (a pop may give back anything its
        slot's pushes recorded)."""
        return cls(ir.Function("<block>", [], body), numbers=numbers, find_stale=False)

    def of(self, name: str) -> frozenset[str]:
        """The roots ``name`` may share memory with (its own name when nothing is known)."""
        return self.roots.get(name, frozenset((name,)))

    def shares(self, a: str, b: str) -> bool:
        """True if ``a`` and ``b`` may share memory."""
        return bool(self.of(a) & self.of(b))

    may_share = shares

    def owns(self, name: str) -> bool:
        """True if ``name`` holds memory of its own: no parameter's and no other array's."""
        return self.of(name) <= {name}

    def copy_needed_for_record(self, name: str) -> bool:
        """True if ``name``, recorded for the reverse sweep, must be copied where it is bound: it may
        share memory that a store writes after the binding (a view of an array written later)."""
        return name in self.stale

    def may_change(self, name: str) -> bool:
        """True if some store may write into memory ``name`` shares."""
        return bool(self.of(name) & self.written)

    def handed_out_needs_copy(self, name: str, put_back: frozenset[str]) -> bool:
        """True if ``name``, handed to the caller (the result, an auxiliary result), may share memory
        with an array whose overwritten slices the reverse sweep puts back in place (``put_back``): the
        caller must get a copy taken before, or it would see the array's initial values."""
        return any(self.shares(name, array) for array in put_back)

    def tangent_needs_copy(self, target: str, shared: set[str]) -> bool:
        """True if the tangent of ``target``, which may share memory with the tangents of ``shared``
        (primal names), must be a copy: tangent statements mirror primal ones, so a tangent may share
        memory only where its primal does (``t = b[1:3]`` views ``b``, ``t = b[1:3] - 1.0`` does not), and
        sharing it elsewhere is wrong once a store writes into either (``b[1:3] = t * t``)."""
        return any(p != target and not self.shares(target, p) and (self.may_change(p) or self.may_change(target))
                   for p in shared)

    def result_needs_copy(self, target: str, shared: set[str]) -> bool:
        """True if the tangent (or value) of ``target``, the result of a user's function given
        ``shared``, must be copied: the helper may hand back its argument's tangent, and a store may
        write into either (this analysis takes a helper's result to share with its arguments, so the
        mirror rule of ``tangent_needs_copy`` cannot tell)."""
        return self.may_change(target) or any(self.may_change(p) for p in shared)

    @staticmethod
    def adjoint_shared_with_store(value: str, array: str) -> bool:
        """True if the adjoint of ``value``, stored into ``array`` (``b[::-1] = b``), is the adjoint the
        store zeroes: in SSA form only the array itself is (a view of it has an adjoint of its own)."""
        return value == array

    def operands(self, expr: ir.Expr) -> frozenset[str]:
        """The roots of the arrays ``expr`` passes on (a variable, the items of a display, or the
        arguments of a call that may share them)."""
        if isinstance(expr, ir.Var):
            return self.of(expr.name)
        if isinstance(expr, ir.Display):
            return frozenset(r for e in expr.items for r in self.operands(e))
        if isinstance(expr, ir.Call) and may_view(expr.fn, expr):
            return frozenset(r for e in passed_on(expr) for r in self.operands(e))
        return frozenset()

    def _value_roots(self, target: str, value: ir.Expr) -> frozenset[str]:
        if isinstance(value, (ir.Var, ir.Display)):
            return self.operands(value)
        if isinstance(value, ir.Call) and may_view(value.fn, value):
            # a user's function may also return a new array: its own root too
            return self.operands(value) | {target}
        return frozenset((target,))

    def _solve(self, params: Sequence[str], body: list[ir.Stmt]) -> None:
        """The least solution of the constraints the statements state (``_constraints``): a name's
        roots are its own, if it makes memory, and those of every name its bindings pass on.  Solved
        once per strongly connected group of names (a loop's carried values form one), in the order
        the groups depend on each other: linear in the statements, whatever their order."""
        own, sources = _constraints(params, body, self.numbers)
        for group in _groups_in_dependency_order(sources):
            members = set(group)
            roots = set().union(*(own.get(n, ()) for n in group))
            for name in group:
                for source in sources.get(name, ()):
                    if source not in members:
                        roots |= self.of(source)
            if roots:
                solved = frozenset(roots)
                for name in group:
                    self.roots[name] = solved

    def _find_stale(self, body: list[ir.Stmt], around: frozenset[str]) -> None:
        """Mark names bound in ``body`` whose other roots a later store writes: later in ``body``,
        or among ``around`` (written after ``body``, or anywhere in a loop around it)."""
        written_in = [self._written_in(stmt) for stmt in body]
        later = around
        after: list[frozenset[str]] = []
        for roots in reversed(written_in):  # after[i]: the roots written after statement i
            after.append(later)
            later = later | roots
        after.reverse()
        for i, stmt in enumerate(body):
            for name in ir.targets_of(stmt):
                if (self.of(name) - {name}) & after[i]:
                    self.stale.add(name)
            inner_around = after[i] | (written_in[i] if isinstance(stmt, (ir.For, ir.While)) else frozenset())
            for inner in ir.blocks(stmt):
                self._find_stale(inner, inner_around)

    def _written_in(self, stmt: ir.Stmt) -> frozenset[str]:
        """The roots the stores in ``stmt`` (and the blocks it holds) write."""
        if isinstance(stmt, ir.Store):
            return self.of(stmt.array)
        return frozenset(r for s in ir.walk([stmt]) if isinstance(s, ir.Store) for r in self.of(s.array))


def _slot(slot: Any) -> str:
    """The name standing for a tape slot among ``Sharing``'s roots (no variable is spelled so)."""
    return f"<tape slot {slot}>"


def _constraints(params: Sequence[str], body: list[ir.Stmt], numbers: frozenset[str]
                 ) -> tuple[dict[str, set[str]], dict[str, set[str]]]:
    """What ``body``'s bindings say of the memory each name may share, as two maps: ``own[name]``,
    the roots it makes itself (a new array, a parameter, a loop index; a call that may view its
    operands may also return something new); ``sources[name]``, the names whose roots it may take
    on (the operands a view, a display, a copy or a user's function passes on, a tape slot's
    pushes).  A name bound again (generated code) takes on what every binding says.  ``numbers``
    share nothing and take on nothing: they are their own root."""
    own: dict[str, set[str]] = {p: {p} for p in params}
    sources: dict[str, set[str]] = {}

    def bind(name: str, passed_on: set[str], makes: set[str]) -> None:
        if name in numbers:
            return
        sources.setdefault(name, set()).update(passed_on)
        if makes:
            own.setdefault(name, set()).update(makes)

    for stmt in ir.walk(body):
        if isinstance(stmt, ir.Assign):
            value = stmt.value
            if isinstance(value, (ir.Var, ir.Display)):
                bind(stmt.target, shared_operands(value), set())
            elif isinstance(value, ir.Call) and may_view(value.fn, value):
                # a view is its array's memory; a user's function or np.asarray may also make some
                bind(stmt.target, shared_operands(value), set() if viewing_call(value) else {stmt.target})
            else:
                bind(stmt.target, set(), {stmt.target})
        elif isinstance(stmt, ir.Unpack):  # every item may be any part of the value, or new
            for target in stmt.targets:
                bind(target, shared_operands(stmt.value), set(stmt.targets))
        elif isinstance(stmt, ir.For):
            bind(stmt.index, set(), {stmt.index})
        elif isinstance(stmt, ir.Push):  # the slot holds what its pushes recorded
            bind(_slot(stmt.slot), {n for v in stmt.values for n in shared_operands(v)}, set())
        elif isinstance(stmt, ir.Pop):
            for target in stmt.targets:
                bind(target, {_slot(stmt.slot)}, {target})
    return own, sources


def _groups_in_dependency_order(sources: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected groups of the graph ``name -> sources[name]``, each after every group
    it reaches (Tarjan's algorithm, with an explicit stack: a chain of thousands of values must not
    exhaust Python's recursion)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    on_stack: set[str] = set()
    stack: list[str] = []
    groups: list[list[str]] = []
    for start in sources:
        if start in index:
            continue
        work: list[tuple[str, Any]] = [(start, iter(sources.get(start, ())))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            name, successors = work[-1]
            for successor in successors:
                if successor not in index:
                    index[successor] = low[successor] = len(index)
                    stack.append(successor)
                    on_stack.add(successor)
                    work.append((successor, iter(sources.get(successor, ()))))
                    break
                if successor in on_stack:
                    low[name] = min(low[name], index[successor])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[name])
                if low[name] == index[name]:
                    group = []
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        group.append(member)
                        if member == name:
                            break
                    groups.append(group)
    return groups
