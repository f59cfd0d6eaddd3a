"""Stage 5: tidy generated IR without changing what it computes.

Input: an ``ir.Function`` in adjoint (or tangent) form whose first
``primal_count`` statements are the user's primal statements.  Output: the
same function with

* algebraic simplification of generated expressions (``x * 1`` → ``x``,
  ``x ** 1`` → ``x``, ``a + -b`` → ``a - b``, ``--a`` → ``a``,
  ``unbroadcast(-g, x)`` → ``-unbroadcast(g, x)``) and constant
  folding of pure calls on constants (``2 - 1`` → ``1``,
  ``math.log(math.e)`` → ``1.0``).  The user's own statements are left as
  written: a rewrite there could change a dtype.
* copies forwarded: after ``d_x = d_total``, a read of ``d_x`` reads
  ``d_total`` while neither is reassigned, so ``d_x = d_total`` followed by
  ``d_x = d_x + e`` becomes ``d_x = d_total + e`` once the copy is dead.
* dead statements removed: values nothing reads, the user's statements
  included (code that returns the gradient alone, ``grad``'s, computes no
  part of the value the gradient does not read).  Removing one never changes
  a number the code returns, since nothing returned reads it; what it may
  drop is an error: a dead statement that would raise (``math.log(0.0)``, a
  Python float divided by zero, shapes that do not broadcast) goes, and the
  derivative is returned where the function itself would have raised.  What
  stays although nothing reads it: a random draw, and a call of the user's
  own function (or of any Python function without a rule), which may draw
  (the draws after it depend on it, and each pass must draw what the
  function drew) or print; ``assert`` and ``raise`` (``Effect``
  statements), and the check that ``grad``'s result is a number.

Every rewrite keeps shapes: ``0 * x`` is *not* folded to ``0``.  Which
operations simplify, and how, is declared with each one's template
(``identity``, ``negating``, ``opposite``, ``involution``, ``odd``,
``foldable``: ``rules.FACTS``); this module knows only what the facts mean.
"""
from __future__ import annotations

import dataclasses
import math
import operator
from typing import Any, Callable, Optional, Union

from ..core import ir, language, runtime
from ..rules import registry as rules
from ..memory.aliasing import values_read
from ..memory.sharing import Sharing
from ..frontend.callables import is_user_function
from ..core.draws import is_draw


def _foldable(fn: Any) -> bool:
    """Whether a call of ``fn`` on constant numbers is computed when the code is generated: declared
    ``foldable=True`` in templates/ (the operators, ``math``'s and NumPy's builtin functions), or a
    ufunc (NumPy's, SciPy's: pure functions of their arguments, whatever their operation)."""
    return bool(rules.fact(fn, "foldable")) or language.is_ufunc(fn)


def _fold(call: ir.Call) -> Optional[ir.Expr]:
    values = [a.value for a in call.args if isinstance(a, ir.Const)]
    if (call.fn is operator.is_ or call.fn is operator.is_not) and len(values) == len(call.args) == 2 \
            and any(v is None for v in values):  # 3.0 is None, a constant come in by a pass: no literal `is`
        return ir.Const((values[0] is values[1]) == (call.fn is operator.is_))
    if call.kwargs or len(values) != len(call.args) or not _foldable(call.fn):
        return None
    if not all(isinstance(v, (int, float)) for v in values):  # booleans too: y - 1 + (y == 0)
        return None
    try:
        with language.errors_ignored():
            result = call.fn(*values)
    except (ArithmeticError, ValueError):
        return None
    if language.is_library_scalar(result):
        result = result.item()
    if isinstance(result, float) and not math.isfinite(result):
        return None  # keep the expression: np.log(-1.0) reads better than nan
    if isinstance(result, bool) and not rules.fact(call.fn, "compares"):
        result = int(result)
    return ir.Const(result)


def simplify_expr(expr: ir.Expr) -> ir.Expr:
    return ir.transform(expr, _simplify_node)


def _simplify_node(expr: ir.Expr) -> Optional[ir.Expr]:
    if not isinstance(expr, ir.Call):
        return None
    folded = _fold(expr)
    if folded is not None:
        return folded
    facts = rules.facts_of(expr.fn)
    if not facts:
        return None
    fn, args = expr.fn, expr.args
    if len(args) == 2 and not expr.kwargs:
        for fact, rewrite in _BY_CONSTANT:
            if fact in facts:
                value, positions = facts[fact]
                for position in positions:
                    if ir.is_const(args[position], value):  # x * 1 is x, -1 * x is -x
                        return rewrite(args[1 - position])
        negated = _negand(args[1]) if "opposite" in facts else None
        if negated is not None:  # a + -b is a - b
            return ir.Call(facts["opposite"], (args[0], negated))
    inner = args[0] if len(args) == 1 and not expr.kwargs else None
    if facts.get("involution") and isinstance(inner, ir.Call) and inner.fn is fn and len(inner.args) == 1 \
            and not inner.kwargs:
        return inner.args[0]  # --a is a
    negated = _negand(args[0]) if facts.get("odd") and args else None
    if negated is not None:
        # negate the result rather than the argument: unbroadcast(-g, x) is -unbroadcast(g, x), smaller
        return _negated(ir.Call(fn, (negated,) + args[1:], expr.kwargs))
    return None


# operator.neg is how the IR negates (lower.py writes -x so, forward.py builds tangents with it).
def _negated(expr: ir.Expr) -> ir.Call:
    return ir.Call(operator.neg, (expr,))


def _negand(expr: ir.Expr) -> Optional[ir.Expr]:
    """``x`` if ``expr`` is ``-x``, else None."""
    if isinstance(expr, ir.Call) and expr.fn is operator.neg and len(expr.args) == 1 and not expr.kwargs:
        return expr.args[0]
    return None


# What a call with a declared constant operand is (see rules.FACTS): the other operand, or it negated.
_BY_CONSTANT = (("identity", lambda other: other), ("negating", _negated))


def _reads(stmt: ir.Stmt) -> set[str]:
    return {n for e in ir.exprs_of(stmt) for n in ir.names_read(e)}


def _dead(body: list[ir.Stmt], live: set[str], sharing: Optional[_LazySharing] = None
          ) -> tuple[list[ir.Stmt], set[str]]:
    """Drop assignments nothing reads; return the kept block and what is live before it."""
    kept: list[ir.Stmt] = []
    live = set(live)
    for stmt in reversed(body):
        if sharing is not None and not isinstance(stmt, ir.Store):
            sharing.note(stmt)
        if isinstance(stmt, ir.Assign):
            if stmt.target not in live and not _may_draw(stmt.value):
                continue
            live.discard(stmt.target)
            live |= _reads(stmt)
            kept.append(stmt)
        elif isinstance(stmt, ir.Store):
            if stmt.array not in live and not (sharing is not None and sharing.read_through(stmt.array, live)):
                continue
            if sharing is not None:
                sharing.note(stmt)
            live |= _reads(stmt) | {stmt.array}
            kept.append(stmt)
        elif isinstance(stmt, ir.If):
            new_body, live_body = _dead(stmt.body, live, sharing)
            new_else, live_else = _dead(stmt.orelse, live, sharing)
            if not new_body and not new_else:
                continue
            live = live_body | live_else | _reads(stmt)
            kept.append(ir.If(stmt.test, new_body, new_else, stmt.line))
        elif isinstance(stmt, (ir.For, ir.While)):
            loop, live_in = _dead_loop(stmt, live, sharing)
            if isinstance(loop, ir.For) and not loop.body and loop.index not in live:
                continue  # nothing left to run: iterating a value changes nothing (a While's test may not end)
            kept.append(loop)
            live = live | live_in | _reads(stmt)  # the loop may run no iteration: what is live after stays
        else:  # Return, Effect, Unpack, Push and Pop (the tape must stay in step) and comments always stay
            if isinstance(stmt, (ir.Unpack, ir.Pop)):
                live -= set(stmt.targets)
            live |= _reads(stmt)
            kept.append(stmt)
    kept.reverse()
    return kept, live


def _may_draw(expr: ir.Expr) -> bool:
    """Whether ``expr`` may draw from a random generator: such a statement stays even where nothing
    reads its value, since the draws after it depend on it (each pass must draw what the function
    drew).  A call of the user's own function (or of any Python function without a rule) may draw
    inside: it stays too (whether it does is not read here)."""
    stack = [expr]
    while stack:
        e = stack.pop()
        if isinstance(e, ir.Call) and (e.fn is runtime.draw or is_draw(e.fn) or is_user_function(e.fn)):
            return True
        stack.extend(ir.children(e))
    return False


# Rounds of the fixed point below before it settles for an upper bound (see ``_dead_loop``).
_LOOP_ROUNDS = 3


def _dead_loop(stmt: Union[ir.For, ir.While], live_after: set[str], sharing: Optional[_LazySharing] = None
               ) -> tuple[ir.Stmt, set[str]]:
    """The loop without dead statements, and what it reads before assigning (its live-in)."""
    # What the next iteration reads is live at the end of this one: iterate to a fixed point.
    live_end = set(live_after) | _reads(stmt)
    for round_ in range(_LOOP_ROUNDS + 1):
        if round_ == _LOOP_ROUNDS:
            # Values handed along a chain (a0 = a1; a1 = a2; ...) turn live one link per round:
            # quadratic in the chain's length.  Take at once every name the loop may read before
            # assigning it, live or not: a superset of the fixed point, reached in one more round.
            live_end |= _exposed([stmt])
        if isinstance(stmt, ir.For):
            body, live_start = _dead(stmt.body, live_end, sharing)
            live_start.discard(stmt.index)
        else:  # the test block runs first, and the loop leaves after it: what is live after is live there
            body, live_body = _dead(stmt.body, live_end, sharing)
            test_block, live_start = _dead(stmt.test_block, live_body | live_end, sharing)
        grown = live_end | live_start
        if grown == live_end:
            break
        live_end = grown
    if isinstance(stmt, ir.For):
        return ir.For(stmt.index, stmt.iterable, body, stmt.line, stmt.exit, stmt.reverse, stmt.checkpoint), live_start
    return ir.While(test_block, stmt.test, body, stmt.line, stmt.exit, stmt.fixed_point,
                    stmt.checkpoint), live_start


def _exposed(body: list[ir.Stmt]) -> set[str]:
    """The names ``body`` may read before assigning them, whether or not what reads them is live."""
    exposed: set[str] = set()
    for stmt in reversed(body):
        if isinstance(stmt, ir.If):
            exposed |= _exposed(stmt.body) | _exposed(stmt.orelse)
        elif isinstance(stmt, ir.For):
            exposed |= _exposed(stmt.body) - {stmt.index}
        elif isinstance(stmt, ir.While):
            exposed |= _exposed(stmt.test_block) | _exposed(stmt.body)
        elif isinstance(stmt, ir.Store):  # it changes the array in place: what it was is read
            exposed.add(stmt.array)
        else:
            exposed -= set(ir.targets_of(stmt))
        exposed |= _reads(stmt)
    return exposed


def remove_dead(body: list[ir.Stmt], numbers: frozenset[str] = frozenset()) -> list[ir.Stmt]:
    """``body`` without the statements whose values nothing reads (a store into an array is read
    through every name that may share the array's memory: a view, a list, a helper's tape; not
    through ``numbers``, names the analysis knows hold numbers)."""
    has_stores = any(isinstance(s, ir.Store) for s in ir.walk(body))
    return _dead(body, set(), _LazySharing(body, numbers) if has_stores else None)[0]


class _LazySharing:
    """``sharing.Sharing.of_block`` of a block, computed the first time a store looks dead."""

    def __init__(self, body: list[ir.Stmt], numbers: frozenset[str] = frozenset()) -> None:
        self.body = body
        self.numbers = numbers
        self.sharing: Optional[Sharing] = None
        # Names whose contents (more than the shape) the statements after the current one read
        # (all of a loop's, from its end on): ``_dead`` notes each statement as it walks back.
        self.contents_read: set[str] = set()
        self.pending: list[ir.Stmt] = []  # noted, not yet read for contents_read (most never need to be)
        self.done: set[int] = set()  # sids of the statements in contents_read

    def note(self, stmt: ir.Stmt) -> None:
        """``stmt`` comes before the statements noted so far (a compound one: all it holds)."""
        self.pending.append(stmt)

    def read_through(self, array: str, live: set[str]) -> bool:
        """True if a live name whose contents a later statement reads may share memory with ``array``."""
        if self.sharing is None:
            self.sharing = Sharing.of_block(self.body, self.numbers)
        for stmt in self.pending:
            for inner in [stmt, *(s for block in ir.blocks(stmt) for s in ir.walk(block))]:
                if inner.sid not in self.done:
                    self.done.add(inner.sid)
                    self.contents_read.update(n for e in ir.exprs_of(inner) for n in values_read(e))
        self.pending.clear()
        roots = self.sharing.of(array)
        return any(roots & self.sharing.of(n) for n in live if n in self.contents_read)


def live_before(body: list[ir.Stmt], live_after: set[str]) -> set[str]:
    """The names ``body`` may read before assigning them (a superset where loops make it hard)."""
    return _dead(body, live_after)[1]


def _simplify_block(body: list[ir.Stmt], keep: set[int], written: frozenset = frozenset(),
                    changed: Optional[Callable[[str], bool]] = None) -> list[ir.Stmt]:
    """``body`` simplified; ``written`` are the arrays stores change in place, whose values must
    stay new arrays (never simplified into another name's array); ``changed(name)``: a store may
    write into memory ``name`` shares, so a new array made from it must stay one."""
    out: list[ir.Stmt] = []
    for stmt in body:
        if stmt.sid in keep:
            out.append(stmt)
        elif isinstance(stmt, ir.Assign):
            value = simplify_expr(stmt.value)
            if ir.is_atom(value) and not ir.is_atom(stmt.value) and (stmt.target in written or (
                    changed is not None and (changed(stmt.target) or (isinstance(value, ir.Var) and changed(value.name))))):
                # t_y = t_x * 1.0 makes a new array, which stores then change (through t_y, or a name it is
                # joined into: t_y_2 = t_y after an if); and t_p = t_b[2:] * 1.0 stays t_p, not the view
                # t_b[2:], where a store then writes into t_b: no copy shares the change
                value = stmt.value
            out.append(ir.Assign(stmt.target, value, stmt.line, stmt.merge))
        elif isinstance(stmt, ir.Return):
            out.append(ir.Return(simplify_expr(stmt.value), stmt.line))
        elif isinstance(stmt, ir.If):
            out.append(ir.If(stmt.test, _simplify_block(stmt.body, keep, written, changed),
                             _simplify_block(stmt.orelse, keep, written, changed), stmt.line))
        elif isinstance(stmt, ir.For):
            out.append(ir.For(stmt.index, stmt.iterable, _simplify_block(stmt.body, keep, written, changed), stmt.line, stmt.exit,
                              stmt.reverse, stmt.checkpoint))
        elif isinstance(stmt, ir.While):
            out.append(ir.While(_simplify_block(stmt.test_block, keep, written, changed), stmt.test,
                                _simplify_block(stmt.body, keep, written, changed),
                                stmt.line, stmt.exit, stmt.fixed_point, stmt.checkpoint))
        else:
            out.append(stmt)
    return out


def _forward_copies(body: list[ir.Stmt], keep: set[int], written: frozenset = frozenset()) -> list[ir.Stmt]:
    """Read the original instead of a copy of it (``a = b``), within one straight-line stretch.

    Only the copies' readers change, never which object a name holds: a copy
    is forgotten as soon as either name is bound again, and at the start of
    every nested block.  Merge copies (which run as one parallel assignment)
    are left alone.  The copies themselves go when ``remove_dead`` finds them unread.
    """
    copies: dict[str, ir.Var] = {}
    copied: dict[str, set[str]] = {}  # original -> its copies: forgetting them costs what is forgotten
    out: list[ir.Stmt] = []
    for stmt in body:
        if isinstance(stmt, (ir.If, ir.For, ir.While)):
            copies.clear()
            copied.clear()
            out.append(_forward_nested(stmt, keep, written))
            continue
        # (a return keeps its names: ``return out, (d_a, d_c)`` reads better than ``(d_a, d_out)``)
        if copies and stmt.sid not in keep and not getattr(stmt, "merge", False) and not isinstance(stmt, ir.Return):
            stmt = _read_originals(stmt, copies)
            if isinstance(stmt, ir.Assign) and stmt.value == ir.Var(stmt.target):
                continue  # d_u = d_u_1 became d_u = d_u: nothing changes
        for name in ir.targets_of(stmt):
            for copy in [name, *copied.pop(name, ())]:
                original = copies.pop(copy, None)
                if original is not None and original.name in copied:
                    copied[original.name].discard(copy)
        if (isinstance(stmt, ir.Assign) and isinstance(stmt.value, ir.Var) and not stmt.merge
                and stmt.sid not in keep and stmt.value.name != stmt.target
                and not {stmt.target, stmt.value.name} & written):  # stores would write through the copy
            copies[stmt.target] = stmt.value
            copied.setdefault(stmt.value.name, set()).add(stmt.target)
        out.append(stmt)
    return out


def _forward_nested(stmt: Union[ir.If, ir.For, ir.While], keep: set[int], written: frozenset) -> ir.Stmt:
    """A compound statement with copies forwarded in each of its blocks, each on its own."""
    if isinstance(stmt, ir.If):
        return dataclasses.replace(stmt, body=_forward_copies(stmt.body, keep, written),
                                   orelse=_forward_copies(stmt.orelse, keep, written))
    if isinstance(stmt, ir.For):
        return dataclasses.replace(stmt, body=_forward_copies(stmt.body, keep, written))
    return dataclasses.replace(stmt, test_block=_forward_copies(stmt.test_block, keep, written),
                               body=_forward_copies(stmt.body, keep, written))


def _read_originals(stmt: ir.Stmt, copies: dict[str, ir.Var]) -> ir.Stmt:
    """``stmt`` reading each copied name's original (a Store's own array stays as written)."""
    if isinstance(stmt, ir.Assign):
        return ir.Assign(stmt.target, ir.substitute(stmt.value, copies), stmt.line, stmt.merge)
    if isinstance(stmt, ir.Store):
        return ir.Store(stmt.array, ir.substitute(stmt.index, copies), ir.substitute(stmt.value, copies),
                        stmt.line, stmt.op)
    if isinstance(stmt, (ir.Unpack, ir.Effect)):
        return dataclasses.replace(stmt, value=ir.substitute(stmt.value, copies))
    if isinstance(stmt, ir.Push):
        return dataclasses.replace(stmt, values=tuple(ir.substitute(v, copies) for v in stmt.values))
    return stmt


def _changed_by_stores(body: list[ir.Stmt], written: frozenset) -> Callable[[str], bool]:
    """Whether a store may write into memory a name shares (``Sharing.of_block``, built on first use)."""
    found: dict[str, bool] = {}
    analysed: list[Sharing] = []

    def changed(name: str) -> bool:
        if name not in found:
            if not analysed:
                analysed.append(Sharing.of_block(body))
            sharing = analysed[0]
            found[name] = any(sharing.shares(name, w) for w in written)
        return found[name]
    return changed


def optimize(fn: ir.Function, primal: list[ir.Stmt]) -> ir.Function:
    """Simplify what was generated (statements not in ``primal``), forward copies, then drop dead code."""
    keep = {s.sid for s in ir.walk(primal)}
    written = frozenset(s.array for s in ir.walk(fn.body) if isinstance(s, ir.Store))
    changed = _changed_by_stores(fn.body, written) if written else None
    body = remove_dead(_forward_copies(_simplify_block(fn.body, keep, written, changed), keep, written))
    return dataclasses.replace(fn, body=body, constants=dict(fn.constants))
