"""The invariants of generated code that every pass after generation keeps (``S2S_AD_CHECK_PASSES=1``).

Input: a generated function (the adjoint form, a split adjoint's part, or the tangent form) after a
pass, the function before it, and the identities (``sid``) of the primal's statements.  Output:
nothing, or a ``FormViolation`` naming the pass and what it broke:

* ``check_bound_before_read``: every name is read only where every path has bound it: a parameter,
  a global of the module (``fn.constants``), the tape (bound where the target writes it), or a name a statement before it bound on every path
  into it (after an ``if``, what both branches bound, and in a later ``if`` on the same name, not bound
  again since, what its side bound: the reverse sweep replays the forward sweep's branches, and in a
  loop over that name, what ``if name:`` bound; in a loop, what was bound before it or earlier in the
  trip; after a loop, what was bound before it), and not
  let go of since (``del``: ``ir.Release``).  A pass that moves a read above the statement binding it, drops that statement or
  releases a name something later reads breaks it;
* ``check_no_primal_lost``: a statement of the primal the pass took out of the function leaves nothing
  behind that needed it: no primal statement left reads a name it bound that no primal statement
  binds now (a primal statement rebuilt anew, not with ``dataclasses.replace``, silently stops being
  primal: passes that tell the primal's statements by their identity would then take it for
  generated code), no array it wrote into is read after, and no check it made (an ``ir.Effect``, an
  assertion) is gone.  What only the value needed may go (``grad`` computes no value).

The pass manager (``driver/pass_manager.py``) runs them, with the identities' and the tape's checks.
"""
from __future__ import annotations

from collections.abc import Collection

from ..core import ir
from ..memory.aliasing import viewing_call


class FormViolation(AssertionError):
    """A pass after generation broke an invariant of the form it returns (an internal error)."""


def check_bound_before_read(fn: ir.Function, after: str) -> None:
    """Raise ``FormViolation`` where ``fn`` reads a name some path into the read has not bound."""
    tape = {fn.plan.tape} if fn.plan is not None else set()  # (bound where the target writes the tape)
    _bound_through(fn.body, set(fn.params) | set(fn.constants) | tape, NOTHING_KNOWN, fn, after)


class Branches:
    """What an ``if`` on a name (not bound again since) bound on each side, and what was known there of
    the ``if``s inside it: a later ``if`` on that name (the reverse sweep's, replaying the forward
    sweep's branch) takes the same side.  It also holds every test name and every bound name found in
    it, inner ones included, so that a statement binding or releasing none of them (nearly every one)
    leaves it as it is: rebuilding it at each statement grew as the square of an elif chain's length
    (500 branches took minutes)."""

    __slots__ = ("sides", "tests", "_names")

    def __init__(self, sides: dict[tuple[str, bool], tuple[set[str], Branches]] | None = None,
                 tests: set[str] | None = None) -> None:
        """``tests``, where given, holds at least every test name of ``sides`` (more only costs a
        rebuild that changes nothing)."""
        self.sides = sides or {}
        if tests is None:
            tests = set()
            for (test, _), (_, inner) in self.sides.items():
                tests.add(test)
                tests |= inner.tests
        self.tests: set[str] = tests
        self._names: set[str] | None = None

    @property
    def names(self) -> set[str]:
        """Every name bound in these branches, inner ones included (found when a ``del`` first asks:
        the chains' joins would otherwise copy every branch's names at every ``if``)."""
        if self._names is None:
            self._names = set()
            for bound, inner in self.sides.values():
                self._names |= bound | inner.names
        return self._names

    def get(self, key: tuple[str, bool]) -> tuple[set[str], Branches]:
        return self.sides.get(key, (set(), NOTHING_KNOWN))

    def joined(self, other: Branches) -> Branches:
        if not other.sides:
            return self
        return Branches({**self.sides, **other.sides}, self.tests | other.tests)

    def less(self, other: Branches) -> Branches:
        """These branches but those ``other`` also holds."""
        return Branches({key: self.sides[key] for key in self.sides.keys() - other.sides.keys()}, self.tests)

    def with_if(self, test: str, yes: tuple[set[str], Branches], no: tuple[set[str], Branches]) -> Branches:
        """These branches and what an ``if test:`` bound on each side (and knew of the ``if``s inside)."""
        return Branches({**self.sides, (test, True): yes, (test, False): no},
                        self.tests | {test} | yes[1].tests | no[1].tests)

    def forget(self, rebound: Collection[str], released: Collection[str]) -> Branches:
        """These branches after the names ``rebound`` were bound again (an ``if`` on them tells nothing
        now) and ``released`` let go of (``del``)."""
        if self.tests.isdisjoint(rebound) and (not released or self.names.isdisjoint(released)):
            return self
        return Branches({key: (names - set(released), inner.forget(rebound, released))
                         for key, (names, inner) in self.sides.items() if key[0] not in rebound})


NOTHING_KNOWN = Branches()


def _bound_through(body: list[ir.Stmt], bound: set[str], branches: Branches, fn: ir.Function,
                   after: str) -> tuple[set[str], Branches]:
    """The names bound on every path through ``body`` entered with ``bound`` (and what is known of
    its branches after it), checking each read."""
    bound = set(bound)
    for stmt in body:
        for expr in ir.exprs_of(stmt):
            if isinstance(stmt, (ir.For, ir.While)) and (expr is stmt.exit or isinstance(stmt, ir.While)
                                                           and expr is stmt.test):
                continue  # read after the body (or the test block), checked there
            _reads_bound(expr, bound, stmt, fn, after)
        if isinstance(stmt, ir.Release):
            bound -= set(stmt.names)
            branches = branches.forget((), stmt.names)
        elif isinstance(stmt, ir.If):
            test = stmt.test.name if isinstance(stmt.test, ir.Var) else ""
            ends = []
            for side, block in ((True, stmt.body), (False, stmt.orelse)):
                known, inner = branches.get((test, side))
                ends.append(_bound_through(block, bound | known, branches.joined(inner), fn, after))
            (yes, in_yes), (no, in_no) = ends
            # an entry keeps only what its side added: the branches known before the if stay known after
            # it anyway, and copying them into every entry grew as the square of an elif chain's length
            if test:
                branches = branches.with_if(test, (yes - bound, in_yes.less(branches)),
                                            (no - bound, in_no.less(branches)))
            bound = yes & no
        elif isinstance(stmt, (ir.For, ir.While)):
            released = {n for s in ir.walk([stmt]) if isinstance(s, ir.Release) for n in s.names}
            branches = branches.forget(ir.assigned_names([stmt]), released)
            bound = _loop(stmt, bound, branches, fn, after)
        else:
            targets = ir.targets_of(stmt)
            bound.update(targets)
            branches = branches.forget(targets, ())
    return bound, branches


def _loop(stmt: ir.Stmt, bound: set[str], branches: Branches, fn: ir.Function, after: str) -> set[str]:
    """What is bound on every path after a ``for`` or ``while`` loop, its body checked: a trip starts
    with what the trip before left bound (a ``del`` in the body counts)."""
    if isinstance(stmt, ir.For):
        # a trip runs only where what it walks is not empty: ``if steps:`` before ``for t in
        # reversed(steps):`` (the reverse loop's carried elements) bound its side for every trip
        walked = stmt.iterable.args[0] if isinstance(stmt.iterable, ir.Call) and stmt.iterable.fn is reversed \
            and len(stmt.iterable.args) == 1 else stmt.iterable
        known, inner_branches = branches.get((walked.name, True)) if isinstance(walked, ir.Var) \
            else (set(), NOTHING_KNOWN)
        branches = branches.joined(inner_branches)
        entry = bound | known | {stmt.index}
        while True:
            inner = _bound_through(stmt.body, entry, branches, fn, after)[0]
            again = ((bound | known) & inner) | {stmt.index}
            if again == entry:
                break
            entry = again
        if stmt.exit is not None:
            _reads_bound(stmt.exit, inner, stmt, fn, after)
        return bound & inner
    assert isinstance(stmt, ir.While)
    entry = bound
    while True:
        tested = _bound_through(stmt.test_block, entry, branches, fn, after)[0]
        _reads_bound(stmt.test, tested, stmt, fn, after)
        inner = _bound_through(stmt.body, tested, branches, fn, after)[0]
        if stmt.exit is not None:
            _reads_bound(stmt.exit, inner, stmt, fn, after)
        again = bound & inner
        if again == entry:
            return tested
        entry = again


def _reads_bound(expr: ir.Expr, bound: set[str], stmt: ir.Stmt, fn: ir.Function, after: str) -> None:
    for name in ir.names_read(expr):
        if name not in bound:
            raise FormViolation(f"internal error in s2s_ad: after the pass {after}, {fn.name} reads {name!r} "
                                f"(line {stmt.line}: {type(stmt).__name__}) where a path into it has not bound it")


def _in_order(body: list[ir.Stmt], loops: tuple = ()) -> list[tuple[ir.Stmt, tuple]]:
    """The statements of ``body``, nested ones included, in the order they are written, each with the
    loops around it (outermost first)."""
    out: list[tuple[ir.Stmt, tuple]] = []
    for stmt in body:
        out.append((stmt, loops))
        inner = loops + (stmt.sid,) if isinstance(stmt, (ir.For, ir.While)) else loops
        for block in _blocks(stmt):
            out.extend(_in_order(block, inner))
    return out


def _blocks(stmt: ir.Stmt) -> list[list[ir.Stmt]]:
    if isinstance(stmt, ir.If):
        return [stmt.body, stmt.orelse]
    if isinstance(stmt, ir.While):
        return [stmt.test_block, stmt.body]
    if isinstance(stmt, ir.For):
        return [stmt.body]
    return []


def _names_or_views(value: ir.Expr, names: set[str]) -> bool:
    if isinstance(value, ir.Var):
        return value.name in names
    return isinstance(value, ir.Call) and bool(value.args) and isinstance(value.args[0], ir.Var) \
        and value.args[0].name in names and viewing_call(value)


def _read_after(before: ir.Function, store: ir.Store, kept: set[int]) -> bool:
    """Whether a statement still in the function that may run after ``store`` (written after it, or in a
    loop around it) reads its array, or a name bound from it (a view taken before the write sees it)."""
    order = _in_order(before.body)
    at = next(i for i, (s, _) in enumerate(order) if s.sid == store.sid)
    around = order[at][1]
    names = {store.array}
    grown = True
    while grown:  # the array's other names and views (aliasing.py's view calls), through one another too
        bound = {s.target for s, _ in order if isinstance(s, ir.Assign) and _names_or_views(s.value, names)}
        grown = not bound <= names
        names |= bound
    # a statement before the store in its loop runs at the next trip: it sees the write only through names
    # the trip has not bound anew, on every path, before reading them
    stale = _stale_readers(around[0], order, names) if len(around) == 1 else None
    for i, (s, loops) in enumerate(order):
        if s.sid not in kept or not (i > at or (around and around[0] in loops)):
            continue
        if i < at and stale is not None:
            if s.sid in stale:
                return True
        elif any(n in names for e in ir.exprs_of(s) for n in ir.names_read(e)):
            return True
    return False


def _stale_readers(loop: int, order: list[tuple[ir.Stmt, tuple]], names: set[str]) -> set[int]:
    """The statements of the loop ``loop`` (not nested in another; nested statements included) that read
    one of ``names`` where some path from the top of a trip reaches them without binding it anew: what
    they read may be the array a write of the trip before changed.  A name counts as bound anew after a
    statement binds it from nothing among the stale ``names`` (``B = np.zeros_like(M)``; ``c = b`` before
    ``b = ...`` holds the array of the trip before), after both branches of an ``if`` bind it anew, never
    by a loop nested in it (which may run no trip)."""
    loop_stmt = next(s for s, _ in order if s.sid == loop)
    assert isinstance(loop_stmt, (ir.For, ir.While))
    stale: set[int] = set()

    def through(block: list[ir.Stmt], fresh: frozenset[str]) -> frozenset[str]:
        for stmt in block:
            reads = {n for e in ir.exprs_of(stmt) for n in ir.names_read(e)}
            if reads & (names - fresh):
                stale.add(stmt.sid)
            if isinstance(stmt, ir.If):
                fresh = through(stmt.body, fresh) & through(stmt.orelse, fresh)
            elif isinstance(stmt, ir.For):
                through(stmt.body, fresh)
            elif isinstance(stmt, ir.While):
                through(stmt.body, through(stmt.test_block, fresh))
            elif isinstance(stmt, ir.Assign) and stmt.target in names and not reads & (names - fresh):
                fresh = fresh | {stmt.target}
        return fresh

    through((loop_stmt.test_block if isinstance(loop_stmt, ir.While) else []) + loop_stmt.body, frozenset())
    return stale


def check_no_primal_lost(before: ir.Function, fn: ir.Function, primal: Collection[int], after: str) -> None:
    """Raise ``FormViolation`` where a primal statement of ``before`` (its ``sid`` in ``primal``) is not in
    ``fn`` and something in ``fn`` still needed it (see the module docstring)."""
    kept = {s.sid for s in ir.walk(fn.body)}
    kept_primal = [s for s in ir.walk(fn.body) if s.sid in primal]
    bound_by_primal = {t for s in kept_primal for t in ir.targets_of(s)}
    read = {name for s in ir.walk(fn.body) for e in ir.exprs_of(s) for name in ir.names_read(e)}
    read_by_primal = {name for s in kept_primal for e in ir.exprs_of(s) for name in ir.names_read(e)}
    for stmt in ir.walk(before.body):
        if stmt.sid not in primal or stmt.sid in kept:
            continue
        needed = [t for t in ir.targets_of(stmt) if t in read_by_primal and t not in bound_by_primal]
        if needed:
            why = (f"the primal statements left read {needed[0]!r}, which no primal statement binds now (a "
                   "statement rebuilt anew, not with dataclasses.replace, is no longer the primal's)")
        elif isinstance(stmt, ir.Store) and stmt.array in read and _read_after(before, stmt, kept):
            why = f"a write into {stmt.array!r}, which is read after it, is gone"
        elif isinstance(stmt, ir.Effect):
            why = "a call made for its effect (a check) is gone"
        else:
            continue
        raise FormViolation(f"internal error in s2s_ad: after the pass {after}, the primal statement of line "
                            f"{stmt.line} ({type(stmt).__name__}) is lost from {fn.name}: {why}")
