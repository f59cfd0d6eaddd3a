"""What the forward sweep records, and how the reverse sweep gets it back.

Input: the SSA function being reversed, its ``Analysis`` and may-alias facts
(``sharing.Sharing``), and the reverse sweep's ledger (``adjoints.Adjoints``:
fresh names, the statements being emitted, the definitions of SSA names).
``Recorder`` is the recording part of ``reverse.ReverseSweep``: inside loops,
the values the reverse sweep reads but the next iteration overwrites are
recomputed when cheap, else pushed on the tape at the end of their block and
popped at the start of the mirrored block; checkpointed loops keep a snapshot
per segment and replay segments; and the forward sweep itself is the primal
code with those pushes, trip counters, and calls through helpers' forward
parts.  Output: the forward sweep (``forward_block``), the prologues of
reversed blocks (``restore``), and every slot declared in the plan draft:
each push and pop is made from a slot of it, so they pair up.
"""
from __future__ import annotations

import operator
import re
from collections import Counter
from typing import Any, Callable, Optional, Union

from ..core import ir, language, runtime
from ..core.errors import TransformError
from ..rules import registry as rules
from . import binomial, fixed_point, online
from .adjoints import Adjoints
from .kept_views import KeptViews
from ..memory.sharing import Sharing
from ..analysis.facts import Analysis
from ..analysis.inference import SCALAR
from ..core.kinds import UNKNOWN, Array, Number
from .plan import PlanDraft


class Recorder:
    """What the forward sweep records for the reverse sweep, and where it reads it back."""

    def __init__(self, adjoints: Adjoints, facts: Analysis, sharing: Sharing, draft: PlanDraft) -> None:
        self.adjoints = adjoints
        self.facts = facts
        self.sharing = sharing  # which names may share memory a store writes
        self.draft = draft  # the recording plan's slots so far: every push and pop is made from one of them
        self.tape = draft.tape
        self.loops: list[Union[ir.For, ir.While]] = []  # the loops being reversed, innermost last
        self.pushes: dict[tuple[int, ...], tuple[str, tuple[ir.Expr, ...]]] = {}  # a block (ir.block_key) -> slot, values
        self.trips: dict[int, str] = {}  # sid of a loop -> name of its trip counter
        self.calls: dict[int, Any] = {}  # sid of a primal call statement -> the callee's split adjoint
        self.store_pushes: dict[int, str] = {}  # sid of a Store whose old slice the forward sweep records -> slot
        self.fixed_points: dict[int, tuple[str, str]] = {}  # sid of a fixed-point loop -> its two states' slots
        self.online: dict[int, tuple[ir.For, str]] = {}  # sid of a checkpointed while -> its for loop, trips
        self.counted_trips: dict[int, str] = {}  # sid of that for loop -> its trips (for the stats)
        self.checkpoints: dict[int, str] = {}  # sid of a checkpointed loop -> the slot of its segment snapshots
        # False while generating the first pass of a checkpointed loop, which records nothing.
        self.recording = True
        self.snapshots: set[str] = set()  # views the forward sweep copies in place where it binds them
        self.kept = KeptViews()  # views the reverse sweep reads as they were, copied beside the primal ones
        self.filename: Optional[str] = None  # the function's file, for the refusals made here

    # -- slots of the plan -------------------------------------------------

    def declare(self, where: str, values: tuple[ir.Expr, ...], targets: tuple[str, ...],
                line: Optional[int]) -> str:
        """A new slot of the recording plan, recorded inside the loops being reversed."""
        kinds = tuple(self.recorded_kind(v) for v in values)
        return self.draft.declare(where, values, targets, kinds, self.trip_bounds(), line)

    def recorded_kind(self, value: ir.Expr) -> Any:
        """The kind of a recorded value where the analysis knows it (a name's), else None."""
        if isinstance(value, ir.Var):
            kind = self.facts.kinds.get(value.name)
            return None if kind is None or kind == UNKNOWN else kind
        return None

    def trip_bounds(self) -> tuple[Optional[ir.Expr], ...]:
        """How many trips each loop around the current statement makes at most, outermost first:
        ``len(range)`` of a ``for`` loop (known when it starts), None for a ``while`` loop."""
        return tuple(ir.Call(len, (loop.iterable,)) if isinstance(loop, ir.For) else None for loop in self.loops)

    # -- checkpointed loops ------------------------------------------------

    def segments(self, stmt: ir.For) -> tuple[list[ir.Stmt], str, str]:
        """``stride = checkpoint_stride(len(steps), every)`` and ``starts = range(0, len(steps), stride)``."""
        stride, starts = self.adjoints.fresh("stride"), self.adjoints.fresh("starts")
        length = ir.Call(len, (stmt.iterable,))
        assert stmt.checkpoint is not None  # (only checkpointed loops have segments)
        return [ir.Assign(stride, ir.Call(runtime.checkpoint_stride, (length, stmt.checkpoint)), stmt.line),
                ir.Assign(starts, ir.Call(range, (ir.Const(0), length, ir.Var(stride))), stmt.line)], stride, starts

    @staticmethod
    def segment(stmt: ir.For, start: str, stride: str) -> ir.Expr:
        """``steps[start:start + stride]``: the iterations of one segment."""
        end = ir.Call(operator.add, (ir.Var(start), ir.Var(stride)))
        return ir.Call(operator.getitem, (stmt.iterable, ir.Slice(ir.Var(start), end, None)))

    @staticmethod
    def loop_state(stmt: ir.For) -> tuple[str, ...]:
        """The values one iteration hands the next (with ``written_before``, all a segment needs to
        run again)."""
        return tuple(sorted(ir.loop_carried(stmt.body)))

    @staticmethod
    def draws(stmt: ir.For) -> bool:
        """Whether the loop calls something with no rule (a random draw, a helper that may draw):
        then each segment's snapshot holds the random states too, so running it again draws the same."""
        return any(isinstance(e, ir.Call) and not rules.is_known(e.fn) and not isinstance(e.fn, ir.Part)
                   for s in ir.walk(stmt.body) for e in ir.exprs_of(s))

    def written_before(self, stmt: ir.For) -> tuple[str, ...]:
        """The arrays made before the loop that its body writes into (``written_before``)."""
        return written_before(stmt, self.sharing, self.loop_state(stmt), self.filename)

    def snapshot_slot(self, stmt: ir.For) -> tuple[tuple[str, ...], list[ir.Stmt], list[ir.Stmt], list[ir.Stmt]]:
        """Declare the slot of the loop's snapshots: the names a restore binds, the statements before
        the loop's reverse, after each restore (random states put back, arrays the loop writes copied
        back in place) and after the reverse."""
        state = self.loop_state(stmt)
        setup: list[ir.Stmt] = []
        replay: list[ir.Stmt] = []
        teardown: list[ir.Stmt] = []
        for array in self.written_before(stmt):
            kept = self.adjoints.fresh(f"kept_{array}")
            state = state + (kept,)
            replay.append(ir.Store(array, ir.Const(Ellipsis), ir.Var(kept), stmt.line))
        if self.draws(stmt):  # the states as the first pass left them come back after the last segment
            after, rng = self.adjoints.fresh("states_after"), self.adjoints.fresh("segment_states")
            setup = [ir.Assign(after, ir.Call(runtime.random_states, ()), stmt.line)]
            state = state + (rng,)
            replay.append(ir.Effect(ir.Call(runtime.set_random_states, (ir.Var(rng),)), stmt.line))
            teardown = [ir.Effect(ir.Call(runtime.set_random_states, (ir.Var(after),)), stmt.line)]
        if state:
            self.loops.append(stmt)  # one record per segment: no more than the loop's trips
            self.checkpoints[stmt.sid] = self.declare(f"the start of each segment of the checkpointed loop at "
                                                      f"line {stmt.line}", self.snapshot_values(stmt), state,
                                                      stmt.line)
            self.loops.pop()
        return state, setup, replay, teardown

    def snapshot_values(self, stmt: ir.For) -> tuple[ir.Expr, ...]:
        """What a snapshot keeps: the loop's state (a copy of what the body may write into), copies of
        the arrays made before the loop that it writes into, and the random states where it draws."""
        kept: tuple[ir.Expr, ...] = tuple(
            ir.Call(language.copy, (ir.Var(n),)) if self.sharing.may_change(n) else ir.Var(n)
            for n in self.loop_state(stmt))
        kept += tuple(ir.Call(language.copy, (ir.Var(n),)) for n in self.written_before(stmt))
        return kept + ((ir.Call(runtime.random_states, ()),) if self.draws(stmt) else ())

    def reverse_checkpointed(self, stmt: ir.For, reversed_body: list[ir.Stmt]) -> None:
        """Segments backwards: restore the segment's starting state from its snapshot, run the
        segment again recording as an ordinary loop does, then reverse its iterations (with
        ``snapshots=c``, step by step on the binomial schedule: ``binomial.py``)."""
        if binomial.applies(self, stmt):
            binomial.reverse(self, stmt, reversed_body)
            return
        setup, stride, starts = self.segments(stmt)
        start, segment = self.adjoints.fresh("start"), self.adjoints.fresh("segment")
        state, first, replay, teardown = self.snapshot_slot(stmt)
        recompute = self.forward_body(stmt.body)
        body = ([ir.Pop(self.checkpoints[stmt.sid], state, stmt.line)] if state else []) + replay + [
            ir.Assign(segment, self.segment(stmt, start, stride), stmt.line),
            ir.Comment("run the segment again, recording"),
            ir.For(stmt.index, ir.Var(segment), recompute, stmt.line),
            ir.Comment("and reverse it"),
            ir.For(stmt.index, ir.Var(segment), reversed_body, stmt.line, reverse=True),
        ]
        for assignment in setup + first:
            self.adjoints.emit(assignment)
        self.adjoints.emit(ir.For(start, ir.Var(starts), body, stmt.line, reverse=True))
        for after in teardown:
            self.adjoints.emit(after)

    def forward_checkpointed(self, stmt: ir.For) -> list[ir.Stmt]:
        """The first pass of a checkpointed loop: a snapshot of the state before each segment."""
        if binomial.applies(self, stmt):
            return binomial.forward(self, stmt)
        setup, stride, starts = self.segments(stmt)
        start = self.adjoints.fresh("start")
        recording, self.recording = self.recording, False
        inner = self.forward_block(stmt.body)
        self.recording = recording
        kept = self.snapshot_values(stmt)
        snapshot: list[ir.Stmt] = [ir.Push(self.checkpoints[stmt.sid], kept, stmt.line)] if kept else []
        segment = ir.For(stmt.index, self.segment(stmt, start, stride), inner, stmt.line)
        return setup + [ir.Comment("checkpointed: keep the state at the start of each segment"),
                        ir.For(start, ir.Var(starts), snapshot + [segment], stmt.line)]

    # -- what loops record -------------------------------------------------

    def restore(self, body: list[ir.Stmt], reversed_body: list[ir.Stmt], where: str) -> list[ir.Stmt]:
        """Statements that bring back, at the start of a reversed block, what it reads.

        ``body`` is a forward block inside a loop (the loop's body, or a branch
        in it) and ``reversed_body`` its reverse.  Values the block binds are
        recomputed when cheap, else recorded by the forward sweep (see the
        module docstring); values bound outside the block are there already,
        restored by the enclosing block or never overwritten.  ``where`` says
        in words what runs ``body`` (how the plan describes the slot).
        """
        reads = {n for s in ir.walk(reversed_body) for e in ir.exprs_of(s) for n in ir.names_read(e)}
        # (a nested loop's index is not among them: the reversed loop binds it again)
        bound = [t for s in body if not isinstance(s, ir.For) for t in ir.targets_of(s)]
        bound += sorted(_if_merges(body)) + [self.trips[s.sid] for s in body if s.sid in self.trips]
        bound_set = set(bound)
        recompute: list[ir.Assign] = []
        record: list[str] = []
        recorded: set[str] = set()  # record's names: "in" a list made this quadratic in the block's size
        restored: set[str] = set()
        for name in dict.fromkeys(n for n in bound if n in reads):
            definition = self.adjoints.definitions.get(name)
            if definition is not None and self._cheap(definition):
                missing = [n for n in ir.names_read(definition.value) if n in bound_set and n not in restored]
                added = [n for n in missing if n not in recorded]
                record += added
                recorded.update(added)
                restored.update(missing)
                recompute.append(definition)
            elif name not in recorded:
                record.append(name)
                recorded.add(name)
            restored.add(name)
        # Values recorded only to recompute something must come back before it.
        shapes = self._only_shapes_read(record, reversed_body, recompute)
        prologue: list[ir.Stmt] = []
        if record:
            values = tuple(ir.Call(language.shape, (ir.Var(n),)) if n in shapes else ir.Var(n) for n in record)
            targets = tuple(shapes.get(n, n) for n in record)
            slot = self.declare(where, values, targets, self.adjoints.line)
            self.pushes[ir.block_key(body)] = (slot, values)
            prologue.append(ir.Pop(slot, targets))
        prologue += [ir.Assign(d.target, d.value, d.line) for d in recompute]
        return prologue

    def _only_shapes_read(self, record: list[str], reversed_body: list[ir.Stmt],
                          recompute: list[ir.Assign]) -> dict[str, str]:
        """Recorded values the reverse block reads only for their shape (``unbroadcast(d, x)``):
        the tape keeps ``np.shape(x)`` instead, and those reads become ``unbroadcast_to(d, shape_x)``.
        Returns name -> the name of its shape."""
        exprs = [e for s in ir.walk(reversed_body) for e in ir.exprs_of(s)] + [d.value for d in recompute]
        reads = Counter(n for e in exprs for n in ir.names_read(e))
        as_shape = Counter(c.args[1].name for e in exprs for c in ir.calls_in(e)
                           if c.fn is runtime.unbroadcast and isinstance(c.args[1], ir.Var))
        recomputed = {n for d in recompute for n in ir.names_read(d.value)}
        shapes = {n: self.adjoints.fresh(f"shape_{n}") for n in record
                  if reads[n] and as_shape[n] == reads[n] and n not in recomputed}
        if shapes:
            def visit(e: ir.Expr) -> Optional[ir.Expr]:
                if isinstance(e, ir.Call) and e.fn is runtime.unbroadcast and isinstance(e.args[1], ir.Var) \
                        and e.args[1].name in shapes:
                    return ir.Call(runtime.unbroadcast_to, (e.args[0], ir.Var(shapes[e.args[1].name])))
                return None
            _rewrite(reversed_body, visit)
        return shapes

    def _cheap(self, stmt: ir.Assign) -> bool:
        """Worth recomputing rather than recording (and safe to: see below)."""
        value = stmt.value
        if not isinstance(value, ir.Call):
            return False
        if any(self.sharing.may_change(n) for n in ir.names_read(value)):
            return False  # an array written in place (or a view of it) may hold other contents by then

        if value.fn is operator.getitem:
            return True
        # operations cheap enough to redo in the reverse sweep rather than record: declared cheap=True
        return bool(rules.fact(value.fn, "cheap")) and all(self.facts.shape_of(a) == SCALAR for a in value.args)

    # -- the forward sweep -------------------------------------------------

    def forward_block(self, body: list[ir.Stmt]) -> list[ir.Stmt]:
        """The primal statements, with trip counters and the recording loops need."""
        out: list[ir.Stmt] = []
        for stmt in body:
            if isinstance(stmt, ir.If):
                out.append(ir.If(stmt.test, self.forward_body(stmt.body), self.forward_body(stmt.orelse), stmt.line))
            elif isinstance(stmt, ir.For) and stmt.checkpoint is not None and self.recording:
                out.extend(self.forward_checkpointed(stmt))
            elif isinstance(stmt, ir.While) and stmt.fixed_point and self.recording:
                out.extend(fixed_point.forward(self, stmt))
            elif isinstance(stmt, ir.While) and stmt.sid in self.online and self.recording:
                out.extend(online.forward(self, stmt))
            elif isinstance(stmt, (ir.For, ir.While)):
                counter = self.trips.get(stmt.sid)
                inner = self.forward_body(stmt.body)
                if counter:
                    out.append(ir.Assign(counter, ir.Const(0), stmt.line))
                    inner.append(ir.Assign(counter, ir.Call(operator.add, (ir.Var(counter), ir.Const(1))), stmt.line))
                if isinstance(stmt, ir.For):
                    out.append(ir.For(stmt.index, stmt.iterable, inner, stmt.line, stmt.exit))
                else:
                    out.append(ir.While(self.forward_block(stmt.test_block), stmt.test, inner, stmt.line, stmt.exit,
                                          stmt.fixed_point, stmt.checkpoint))
            elif isinstance(stmt, ir.Store) and stmt.sid in self.store_pushes and self.recording:
                # record the slice it overwrites (an advance of a checkpointed loop records nothing)
                out.append(ir.Push(self.store_pushes[stmt.sid], (self.overwritten(stmt),), stmt.line))
                out.append(stmt)
            elif isinstance(stmt, ir.Assign) and isinstance(stmt.value, ir.Call) and stmt.sid in self.calls \
                    and self.recording:  # record for the callee's backward part
                call = stmt.value
                forward = ir.Call(ir.Part(self.calls[stmt.sid], "forward"), call.args + (ir.Var(self.tape),))
                out.append(ir.Unpack((stmt.target, self.tape), forward, stmt.line))
                if stmt.target in self.snapshots:
                    copied = ir.Call(_snapshot_copy(self.facts, stmt.target), (ir.Var(stmt.target),))
                    out.append(ir.Assign(stmt.target, copied, stmt.line))
                out += self.kept.after(stmt)
            elif isinstance(stmt, ir.Assign) and stmt.target in self.snapshots and not stmt.merge:
                # a view of an array written later, not kept apart: the reverse sweep must read what it holds now
                copied = ir.Call(_snapshot_copy(self.facts, stmt.target), (stmt.value,))
                out.append(ir.Assign(stmt.target, copied, stmt.line))
            else:
                out.append(stmt)
                out += self.kept.after(stmt)  # (a view the reverse sweep reads: its copy, kept_views.py)
        self.kept.mark(out)
        return out

    def forward_body(self, body: list[ir.Stmt]) -> list[ir.Stmt]:
        """A nested block: record what its reverse needs before its closing merge copies."""
        out = self.forward_block(body)
        record = self.pushes.get(ir.block_key(body)) if self.recording else None
        if record:
            at = len(out)
            while at > 0 and _is_merge(out[at - 1]):
                at -= 1
            slot, values = record
            out.insert(at, ir.Push(slot, values))
        return out

    def overwritten(self, stmt: ir.Store) -> ir.Expr:
        """``np.copy(a[i])``: what the store ``a[i] = v`` overwrites, recorded before it runs; ``a[i]``
        itself where the facts show it is one element (a number, which the store cannot change)."""
        old = ir.Call(operator.getitem, (ir.Var(stmt.array), stmt.index))
        if self.facts.part_class(stmt.array, stmt.index) == SCALAR:
            return old
        return ir.Call(language.copy, (old,))


def _snapshot_copy(facts: Analysis, name: str) -> Callable[..., Any]:
    """How a snapshot of ``name`` gets memory of its own: np.copy where the facts know an array or a number;
    else ``runtime.held_apart``, which copies a list's or tuple's arrays item by item (a list of
    np.array_split's pieces of different lengths, which np.copy would stack, or fail to)."""
    return language.copy if isinstance(facts.fact(ir.Var(name)), (Array, Number)) else runtime.held_apart


def written_before(stmt: ir.For, sharing: Sharing, state: tuple[str, ...], filename: Optional[str]) -> tuple[str, ...]:
    """The arrays made before the loop that its body writes into (``out[i] = u``, ``x[j] = ...``):
    names the body reads without binding them, sharing memory a store of the body writes.  A
    snapshot holds a copy of each, and a restore copies it back in place (other names may view
    them).  Refuses a write into what a carried name (of ``state``) held before the loop
    (``u[j] = ...`` where ``u`` is bound again in the body): a restore binds a carried name, and
    could not put the array from before the loop back."""
    stores = [s for s in ir.walk(stmt.body) if isinstance(s, ir.Store)]
    if not stores:
        return ()
    written = frozenset(r for s in stores for r in sharing.of(s.array))
    bound = ir.assigned_names(stmt.body) | {stmt.index}
    free = {n for s in ir.walk(stmt.body) for e in ir.exprs_of(s) for n in ir.names_read(e)} - bound
    made = frozenset(r for n in bound for r in sharing.of(n) if r in bound)
    for name in state:
        if (sharing.of(name) & written) - made:
            shown = re.sub(r"_[0-9]+$", "", name)  # (the SSA version's suffix off: the name as written)
            raise TransformError(
                f"a checkpointed loop that writes in place into the array {shown} held before it, and binds "
                f"{shown} again", f"a restore binds {shown} to its snapshot and cannot put that array back; "
                f"write into a copy made in the loop ({shown} = {shown}.copy() first), or into an array the "
                f"loop does not bind again",
                filename=filename, line=stmt.line)
    return tuple(sorted(n for n in free if sharing.of(n) & written))


def _if_merges(body: list[ir.Stmt]) -> set[str]:
    """The values the ``if`` statements of ``body`` bind on both paths: the merge copies closing
    each branch.  (A merge copy earlier in a branch starts a loop there: it is bound on that
    path only, and the branch's own block records it.)"""
    return {name for s in body if isinstance(s, ir.If)
            for branch in (s.body, s.orelse) for name in ir.loop_carried(branch)}


def _is_merge(stmt: ir.Stmt) -> bool:
    """A merge copy: what closes a branch or a loop's body (``lower.py``'s parallel merges)."""
    return isinstance(stmt, ir.Assign) and stmt.merge


def _rewrite(block: list[ir.Stmt], visit: Callable[[ir.Expr], Optional[ir.Expr]]) -> None:
    """Transform every expression of ``block`` in place with ``ir.transform(expr, visit)``."""
    for stmt in block:
        if isinstance(stmt, (ir.Assign, ir.Unpack, ir.Effect, ir.Return)):
            stmt.value = ir.transform(stmt.value, visit)
        elif isinstance(stmt, ir.Store):
            stmt.index, stmt.value = ir.transform(stmt.index, visit), ir.transform(stmt.value, visit)
        elif isinstance(stmt, ir.If):
            stmt.test = ir.transform(stmt.test, visit)
        for inner in ir.blocks(stmt):
            _rewrite(inner, visit)
