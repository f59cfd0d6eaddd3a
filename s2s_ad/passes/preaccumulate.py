"""An adjoint carried through a reverse loop, multiplied once per trip by its local derivative.

Input: an optimized adjoint ``ir.Function`` (``optimize.py``).  Output: the
same function where, in a reverse loop whose body is straight-line code, an
adjoint ``d_s`` that the trip passes on to the next one and that is, at the
end of the trip, ``d_s`` (as it came in) times a coefficient built from
values that do not depend on any adjoint, is computed as exactly that:

    d_prod = d_s * diff               d_prod = d_s * diff
    d_diff = d_s * prod               d_r = d_r + d_prod * s
    d_s = -d_diff              ->     d_s = d_s * (diff * r - prod)
    d_r = d_r + d_prod * s
    d_s = d_s + d_prod * r

Why: the trips of a reverse loop run one after another through ``d_s``, so
the time per trip is the latency of the operations from one trip's ``d_s``
to the next's.  Written as the reverse walk makes it (each path of the chain
rule on its own line, multiplied by the incoming adjoint as it goes), that
is a multiplication, a negation, another multiplication and an addition;
preaccumulated, one multiplication, the coefficient being computed off the
chain.  Compiled (``backend="numba"``), the gradient of a scalar recurrence
then runs at the speed of the hand-written one (a compiler may not
reassociate floating point to find it).  The numbers differ from the
unfactored ones by rounding only (the same products, summed before the
multiplication by ``d_s`` rather than after), and are those of every target:
the rewrite is on the IR.

What is rewritten: only what is provably linear in ``d_s``: products by,
quotients by, sums and differences of values that depend on no adjoint, and
of names assigned once in the trip before they are read (or not at all), so
the coefficient means at the end of the trip what each path meant where it
was taken; a coefficient of at most ``_LARGEST`` operations (a larger one
would duplicate work).  Anything else in the trip (a store, a branch, an
inner loop, a call) leaves the loop as it was.
"""
from __future__ import annotations

import dataclasses
import operator
from typing import Optional

from ..core import ir, language
from ..rules import registry as rules
from .optimize import remove_dead

_LARGEST = 12  # operations in a coefficient
_LINEAR_STATEMENTS = (ir.Assign, ir.Unpack, ir.Pop, ir.Comment)
Form = dict[str, ir.Expr]  # an adjoint as a sum of incoming adjoints times coefficients


def preaccumulated(fn: ir.Function) -> ir.Function:
    """``fn`` with each reverse loop's carried adjoints preaccumulated where they can be."""
    changed = [False]
    body = _in_block(fn.body, changed, _Everywhere(fn.body, fn.params))
    if not changed[0]:
        return fn
    return dataclasses.replace(fn, body=remove_dead(body))


def _in_block(body: list[ir.Stmt], changed: list[bool], everywhere: "_Everywhere") -> list[ir.Stmt]:
    out: list[ir.Stmt] = []
    for stmt in body:
        if isinstance(stmt, ir.For) and stmt.reverse and stmt.exit is None:
            rewritten = _trip(stmt.body, everywhere)
            if rewritten is not None:
                changed[0] = True
                stmt = dataclasses.replace(stmt, body=rewritten)
            else:
                stmt = dataclasses.replace(stmt, body=_in_block(stmt.body, changed, everywhere))
        elif isinstance(stmt, (ir.If, ir.For, ir.While)):
            stmt = ir.with_blocks(stmt, lambda block: _in_block(block, changed, everywhere))
        out.append(stmt)
    return out


def _trip(body: list[ir.Stmt], everywhere: "_Everywhere") -> Optional[list[ir.Stmt]]:
    """The body of a reverse loop with its carried adjoints preaccumulated, or None."""
    if not all(isinstance(s, _LINEAR_STATEMENTS) and not getattr(s, "merge", False) for s in body):
        return None
    if not all(_pure(s.value) for s in body if isinstance(s, (ir.Assign, ir.Unpack))):
        return None  # (a call that may write into an array the coefficient reads at the trip's end)
    walk = _Walk(body, everywhere)
    rewritten = body
    for name, coefficient in walk.preaccumulable().items():
        rewritten = _rewritten(rewritten, name, coefficient)
    return rewritten if rewritten is not body else None


def _pure(expr: ir.Expr) -> bool:
    """``expr`` changes nothing: names, constants, displays, and calls of functions declared pure
    (``foldable`` in templates/: the operators, ``math``'s) or of ufuncs, with no keywords."""
    if isinstance(expr, (ir.Var, ir.Const)):
        return True
    if isinstance(expr, ir.Display):
        return all(_pure(e) for e in expr.items)
    if isinstance(expr, ir.Call):
        try:
            declared = bool(rules.fact(expr.fn, "foldable")) or language.is_ufunc(expr.fn)
        except TypeError:  # an unhashable callable
            return False
        return declared and not expr.kwargs and all(_pure(a) for a in expr.args)
    return False


class _Walk:
    """The linear forms of a straight-line trip: for each name that depends on an adjoint carried in,
    a sum of those adjoints (as they came in) times coefficients, where it is linear in them."""

    def __init__(self, body: list[ir.Stmt], everywhere: "_Everywhere") -> None:
        self.body = body
        self.everywhere = everywhere
        self.assigned: dict[str, list[int]] = {}
        for i, stmt in enumerate(body):
            for name in set(ir.targets_of(stmt)):  # (a pop may bind one name twice: one value, recorded twice)
                self.assigned.setdefault(name, []).append(i)
        self.carried = [n for n in _read_before_assigned(body) if n in self.assigned]
        self.forms: dict[str, Optional[Form]] = {n: {n: ir.Const(1)} for n in self.carried}
        self.at = 0
        for self.at, stmt in enumerate(body):
            for name in ir.targets_of(stmt):
                self._bind(name, stmt)

    def _bind(self, name: str, stmt: ir.Stmt) -> None:
        if isinstance(stmt, ir.Assign):
            form = self._form(stmt.value)
        elif isinstance(stmt, ir.Unpack) and any(n in self.forms for n in ir.names_read(stmt.value)):
            form = None  # a part of something an adjoint went into
        else:
            form = ("primal", None)  # popped off the tape, or unpacked from what no adjoint went into
        if form is None:
            self.forms[name] = None
        elif form[0] == "linear" and isinstance(form[1], dict):
            self.forms[name] = form[1]
        else:
            self.forms.pop(name, None)  # depends on no adjoint

    def preaccumulable(self) -> dict[str, ir.Expr]:
        """Each carried adjoint whose value at the end of the trip is itself times a coefficient,
        not already computed so (one statement, one operation), with that coefficient."""
        found: dict[str, ir.Expr] = {}
        for name in self.carried:
            form = self.forms.get(name)
            if form is not None and set(form) == {name} and not self._already_one_step(name) \
                    and _size(form[name]) <= _LARGEST:
                found[name] = form[name]  # (not simplified: 1.0 * k would lose the 1.0 that keeps it a float)
        return found

    def _already_one_step(self, name: str) -> bool:
        """``name`` is bound once in the trip, to itself negated, or times or over one value."""
        if len(self.assigned[name]) != 1:
            return False
        stmt = self.body[self.assigned[name][0]]
        value = stmt.value if isinstance(stmt, ir.Assign) else None
        if not isinstance(value, ir.Call) or not (value.fn is operator.neg or _scaling(value.fn)):
            return isinstance(value, ir.Var)
        own = ir.Var(name)
        others = [a for a in value.args if a != own]
        return len(others) < len(value.args) and all(not (set(ir.names_read(a)) & set(self.forms)) for a in others)

    def _form(self, expr: ir.Expr) -> Optional[tuple[str, object]]:
        """("primal", expr) for a value depending on no adjoint that the trip's end may read again,
        ("linear", form) for an adjoint, None for anything else."""
        if isinstance(expr, ir.Const):
            return ("primal", expr) if type(expr.value) in (int, float) else None
        if isinstance(expr, ir.Var):
            if expr.name in self.forms:
                form = self.forms[expr.name]
                return ("linear", form) if form is not None else None
            positions = self.assigned.get(expr.name, [])
            stable = not positions or (len(positions) == 1 and positions[0] < self.at)
            return ("primal", expr) if stable else None
        if not isinstance(expr, ir.Call) or expr.kwargs:
            return None
        parts = [self._form(a) for a in expr.args]
        if any(p is None for p in parts):
            return None
        kinds = [p[0] for p in parts if p is not None]
        values = [p[1] for p in parts if p is not None]
        if not (_scaling(expr.fn) or _sum(expr.fn) or expr.fn is operator.neg):
            return None
        if all(k == "primal" for k in kinds):
            return ("primal", expr)
        return self._combined(expr.fn, kinds, values)

    def _combined(self, fn: object, kinds: list[str], values: list) -> Optional[tuple[str, object]]:
        """The linear form of ``fn`` applied to parts of which at least one is linear."""
        if fn is operator.neg:
            return ("linear", {k: _call(operator.neg, c) for k, c in values[0].items()})
        if fn is operator.mul and "primal" in kinds:
            form, factor = (values[0], values[1]) if kinds[0] == "linear" else (values[1], values[0])
            return ("linear", {k: _times(self._inexact_first(c, factor), factor) for k, c in form.items()})
        if fn is operator.truediv and kinds == ["linear", "primal"]:
            return ("linear", {k: _call(operator.truediv, c, values[1]) for k, c in values[0].items()})
        if _sum(fn) and kinds == ["linear", "linear"]:
            left, right = values
            total = dict(left)
            for k, c in right.items():
                if k in total:
                    total[k] = _call(fn, self._inexact_first(total[k], c), c)
                else:
                    total[k] = c if rules.fact(fn, "sum") == "+" else _call(operator.neg, c)
            return ("linear", total)
        return None

    def _inexact_first(self, coefficient: ir.Expr, other: ir.Expr) -> ir.Expr:
        """``coefficient``, or ``1.0 * coefficient`` where it and ``other``, which it is about to be
        multiplied by or added to, may both be integers: the unfactored code multiplied each by an
        adjoint (a float) first, and an integer product or sum must not overflow where it did not."""
        if _unit(coefficient) or _negated_unit(coefficient) or self._inexact(coefficient) or self._inexact(other):
            return coefficient
        return _call(operator.mul, ir.Const(1.0), coefficient)

    def _inexact(self, expr: ir.Expr) -> bool:
        """``expr`` is a float (or complex) number or array, never an integer one."""
        if isinstance(expr, ir.Const):
            return type(expr.value) is float
        if isinstance(expr, ir.Var):
            positions = self.assigned.get(expr.name, [])
            stmt = self.body[positions[0]] if len(positions) == 1 else None
            if isinstance(stmt, ir.Assign):
                return self._inexact(stmt.value)
            return (stmt is None or isinstance(stmt, ir.Pop)) and self.everywhere.inexact(expr.name)
        if not isinstance(expr, ir.Call):
            return False
        if expr.fn is operator.truediv:
            return True
        return (_sum(expr.fn) or expr.fn is operator.mul or expr.fn is operator.neg) \
            and any(self._inexact(a) for a in expr.args)


def _scaling(fn: object) -> bool:
    """``fn`` is a product or a quotient of two numbers or arrays, element by element."""
    return fn is operator.mul or fn is operator.truediv


def _sum(fn: object) -> bool:
    """``fn`` is ``+`` or ``-`` (declared ``sum=`` in templates/: operator.add, np.add...), element by
    element."""
    return rules.fact(fn, "sum") in ("+", "-")


class _Everywhere:
    """Which names of the whole function only ever hold floats (or complex numbers), never
    integers: each of their assignments is a float constant, a true division, or a sum, difference
    or product with one such operand (a popped name: what its slot's pushes recorded; a parameter
    or an unpacked name: anything)."""

    def __init__(self, body: list[ir.Stmt], params: list[str]) -> None:
        self.values: dict[str, list[Optional[ir.Expr]]] = {p: [None] for p in params}
        pushes = [s for s in ir.walk(body) if isinstance(s, ir.Push)]
        for stmt in ir.walk(body):
            if isinstance(stmt, ir.Pop):
                for i, name in enumerate(stmt.targets):
                    self.values.setdefault(name, []).extend(p.values[i] for p in pushes if p.slot == stmt.slot)
            else:
                for name in ir.targets_of(stmt):
                    self.values.setdefault(name, []).append(stmt.value if isinstance(stmt, ir.Assign) else None)
        self.known: dict[str, bool] = {}

    def inexact(self, name: str) -> bool:
        if name not in self.known:
            self.known[name] = True  # (a cycle of assignments keeps what its other sources give it)
            values = self.values.get(name, [None])  # (a parameter: not assigned here)
            self.known[name] = all(v is not None and self._expr(v) for v in values)
        return self.known[name]

    def _expr(self, expr: ir.Expr) -> bool:
        if isinstance(expr, ir.Const):
            return type(expr.value) is float
        if isinstance(expr, ir.Var):
            return self.inexact(expr.name)
        if not isinstance(expr, ir.Call) or expr.kwargs:
            return False
        if expr.fn is operator.truediv:
            return True
        return (_sum(expr.fn) or expr.fn is operator.mul or expr.fn is operator.neg) \
            and any(self._expr(a) for a in expr.args)


def _call(fn: object, *args: ir.Expr) -> ir.Expr:
    first = args[0]
    if rules.fact(fn, "sum") == "+" and isinstance(first, ir.Call) and first.fn is operator.neg:
        return ir.Call(operator.sub, (args[1], first.args[0]))  # -a + b is b - a, to the bit
    return ir.Call(fn, tuple(args))


def _unit(expr: ir.Expr) -> bool:
    """``expr`` is the coefficient an adjoint starts with: 1."""
    return isinstance(expr, ir.Const) and type(expr.value) is int and expr.value == 1


def _negated_unit(expr: ir.Expr) -> bool:
    return isinstance(expr, ir.Call) and expr.fn is operator.neg and _unit(expr.args[0])


def _times(coefficient: ir.Expr, factor: ir.Expr) -> ir.Expr:
    if _unit(coefficient):
        return factor
    if _negated_unit(coefficient):
        return _call(operator.neg, factor)
    return _call(operator.mul, coefficient, factor)


def _size(expr: ir.Expr) -> int:
    if isinstance(expr, ir.Call):
        return 1 + sum(_size(a) for a in expr.args)
    return 0


def _read_before_assigned(body: list[ir.Stmt]) -> list[str]:
    """The names a straight-line ``body`` reads before assigning them, in the order first read."""
    assigned: set[str] = set()
    found: list[str] = []
    for stmt in body:
        for expr in ir.exprs_of(stmt):
            for name in ir.names_read(expr):
                if name not in assigned and name not in found:
                    found.append(name)
        assigned.update(ir.targets_of(stmt))
    return found


def _rewritten(body: list[ir.Stmt], name: str, coefficient: ir.Expr) -> list[ir.Stmt]:
    """``body`` whose last assignment of ``name`` is ``name = name * coefficient`` (``name`` as it
    came in): the assignments before it bind names of their own, read until the next one."""
    last = max(i for i, s in enumerate(body) if name in ir.targets_of(s))
    taken = ir.NameSet({t for s in body for t in ir.targets_of(s)} | set(_read_before_assigned(body)))
    current = name
    out: list[ir.Stmt] = []
    for i, stmt in enumerate(body):
        if i == last:
            out.append(ir.Assign(name, _call(operator.mul, ir.Var(name), coefficient), getattr(stmt, "line", None)))
            continue
        if i < last and current != name:
            stmt = _reading(stmt, {name: ir.Var(current)})
        if i < last and isinstance(stmt, ir.Assign) and stmt.target == name:
            current = ir.fresh_name(f"{name}_part", taken)
            stmt = ir.Assign(current, stmt.value, stmt.line)
        out.append(stmt)
    return out


def _reading(stmt: ir.Stmt, mapping: dict[str, ir.Expr]) -> ir.Stmt:
    if isinstance(stmt, (ir.Assign, ir.Unpack)):
        return dataclasses.replace(stmt, value=ir.substitute(stmt.value, mapping))
    return stmt
