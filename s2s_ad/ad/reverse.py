"""Stage 4 (reverse mode): SSA function → adjoint function, in IR.

Input: an SSA ``ir.Function``, the SSA names of the ``wrt`` parameters, and
the ``Analysis`` of the function.  Output: an ``ir.Function`` in adjoint
form taking the primal parameters and the seed ``d_<result>``, whose body is
the forward sweep (the primal statements, plus what loops must record)
followed by the reverse sweep, and which returns ``(result, gradient)``: one
adjoint, or a tuple of them in ``wrt`` order.  Without ``with_value`` (``grad``,
which hands out no value) it returns the gradient alone, so what only the value
needs is dead (``optimize`` drops it); where the facts do not prove the result a
number, a run-time check of it stays (``runtime.check_one_number``).

The reverse sweep walks the statements backwards and splices in each rule's
template.  Adjoints accumulate as the seeds describe (000): the first
contribution is an assignment, later ones add; a contribution that is a bare
adjoint passes straight through (no statement) where that is safe; zero only
where no contribution may happen.  Broadcast contributions are reduced to
their input's shape only where the shape classes differ.

Control flow.  An ``if`` is reversed into an ``if`` on the same test.  A
loop is reversed into a loop over the same range backwards (the forward
sweep counts the trips of loops that can stop early).  Inside a loop, a
value the reverse sweep reads but the next iteration overwrites is either
recomputed (cheap arithmetic on numbers, indexing) or recorded: the forward
sweep pushes it on the tape at the end of its block and the reverse sweep
pops it at the start of the mirrored block.  Outside loops nothing is
recorded: SSA values are never overwritten there (a split adjoint, below,
records per branch too).

Every record is declared in the adjoint's ``RecordingPlan`` (``plan.py``):
a slot per loop body, branch, overwritten slice and checkpoint segment, with
the kinds of its values and the trip counts around it.  The sweeps hold
``ir.Push``/``ir.Pop`` statements made from it; ``tape.TupleTape`` spells
them as a persistent stack of tuples threaded through the code (a callee's
parts take the tape and return it), so the generated code is pure Python:
it can itself be transformed again, which is how higher derivatives work.

With ``split``, the plan's ``cut`` slot hands the forward sweep's values
that the reverse sweep reads over to it (``tape.split_parts`` cuts there):
only values bound on every path; a value bound in a branch or a loop trip
comes back through that block's own slot.

Parts.  ``ReverseSweep`` orders the sweep (blocks, branches and loops
backwards) and assembles the adjoint function; the statements themselves are
its parts' job, all writing into one ledger, ``adjoints.Adjoints`` (where
each adjoint lives and how contributions add up):
``assignment_adjoints.AssignmentAdjoints`` (rule templates, calls of the
user's functions, sequences, tuples read item by item, merges),
``store_adjoints.StoreAdjoints`` (stores, and arrays whose adjoint is updated
in place) and ``recording.Recorder`` (what the forward sweep records, and the
forward sweep itself).
"""
from __future__ import annotations

import operator
from typing import Optional, Union

from ..core import ir, language, runtime
from . import fixed_point, online
from .adjoints import Adjoints
from ..memory.aliasing import values_read
from ..memory.sharing import Sharing
from ..analysis.facts import Analysis
from ..analysis.inference import SCALAR
from .assignment_adjoints import AssignmentAdjoints, CalleeBuilder
from ..core.kinds import Array, Number
from ..passes.optimize import remove_dead
from .plan import CUT, PlanDraft, TapeViolation
from .recording import Recorder
from .store_adjoints import StoreAdjoints
from .tape import REVERSE_SWEEP, definitely_bound, read_before_bound


class ReverseSweep:
    """Walks an SSA function backwards: the order of the sweep (blocks, branches, loops) and the
    adjoint function it assembles, the statements themselves left to its parts."""

    def __init__(self, fn: ir.Function, wrt: list[str], facts: Analysis,
                 callee: Optional[CalleeBuilder] = None, split: bool = False,
                 unrestored: frozenset = frozenset(), sharing: Optional[Sharing] = None,
                 slices_in_place: bool = True, with_value: bool = True) -> None:
        self.fn = fn
        self.with_value = with_value or split  # False: the adjoint returns no value (a split one always does)
        self.wrt = wrt
        self.facts = facts
        self.split = split  # a callee's adjoint: the tape is a parameter, and returned
        # which names may share memory with a written array (the forward sweep copies those the reverse reads)
        self.sharing = sharing or Sharing(fn, only_if_written=True)
        self.adjoints = Adjoints(fn, wrt, facts)
        self.recorder = Recorder(self.adjoints, facts, self.sharing, PlanDraft("tape"))
        self.recorder.filename = fn.filename
        self.stores = StoreAdjoints(fn, self.adjoints, self.recorder, facts, self.sharing, unrestored)
        self.assignments = AssignmentAdjoints(fn, self.adjoints, self.recorder, self.stores, facts, callee, split,
                                              slices_in_place)
        self.kept: list[ir.Stmt] = []  # what the forward part hands out (split), bound apart at its end
        self.kept_first: list[ir.Stmt] = []  # the same, bound first in the reverse sweep (one piece)

    # -- the sweep ---------------------------------------------------------

    def run(self) -> ir.Function:
        last = self.fn.body[-1]
        assert isinstance(last, ir.Return)  # (an SSA function ends with its return)
        result = last.value
        seed = self.adjoints.adjoint_name(result.name if isinstance(result, ir.Var) else "out")
        if isinstance(result, ir.Var) and result.name in self.facts.active:
            self.adjoints.adjoint[result.name] = ir.Var(seed)
            self.adjoints.pinned.add(result.name)  # the seed's name is fixed: never alias it
        self.recorder.tape = self.recorder.draft.tape = self.adjoints.fresh("tape")
        sweep = self.reverse_block(self.fn.body[:-1])
        # (views it reads that a later store writes: copied beside the primal ones, or in place)
        self.recorder.snapshots = self.recorder.kept.choose(self.fn.body, self._snapshots(sweep),
                                                            self.adjoints.fresh)
        self.adjoints.line = None
        self.adjoints.out = sweep
        restored = {n for s in ir.walk(sweep) if isinstance(s, (ir.Assign, ir.Unpack, ir.Pop))
                    for n in ir.targets_of(s)}
        put_back = frozenset(s.array for s in self.stores.restores.values())
        beside = self._returned_beside(result, restored, put_back)
        gradients = tuple(self.adjoints.final_adjoint(p) for p in self.wrt)
        # (split: always one item per parameter, tape.split_parts reads them so; one parameter's
        # adjoint may itself be a tuple, a helper given (W, b))
        gradient = gradients[0] if len(gradients) == 1 and not self.split else ir.Display("tuple", gradients)
        forward = self.recorder.forward_block(self.fn.body[:-1]) + self.kept
        if not self.with_value:
            forward += self._result_check(result, last.line)
        if self.recorder.kept.twins:  # the reverse sweep and its records read the views' copies
            forward = self.recorder.kept.read_copies(forward)
            self.adjoints.out = self.recorder.kept.read_copies(self.adjoints.out)
            self.recorder.kept.plan_reading_copies(self.recorder.draft)
        finish = ir.Return(gradient if beside is None else ir.Display("tuple", (beside, gradient)))
        if self.split:
            self.cut(forward, gradient, seed)
        sweep = [ir.Comment(REVERSE_SWEEP)] + self.adjoints.out
        body = forward + sweep + [finish]
        params = self.fn.params + [seed] + ([self.recorder.tape] if self.split else [])
        return ir.Function("d_" + self.fn.name, params, body, self.fn.filename, self.fn.firstline,
                           self.fn.docstring, dict(self.fn.constants), plan=self.recorder.draft.done(),
                           differentiated=self._differentiated_arrays(), vectors=self._differentiated_arrays(rank=1),
                           numbers=self._number_parameters())

    def _number_parameters(self) -> frozenset[str]:
        """The parameters every call passes a number for (an int or a float, not a truth value)."""
        kinds = {p: self.facts.fact(ir.Var(p)) for p in self.fn.params}
        return frozenset(p for p, kind in kinds.items() if isinstance(kind, Number) and not kind.truth)

    def _differentiated_arrays(self, rank: Optional[int] = None) -> frozenset[str]:
        """The parameters the gradient is taken by that are arrays (of ``rank`` axes, where it is given): where
        code runs, arrays of floats (the API refuses an integer or boolean array; Numba's target runs other
        dtypes than float64 as Python)."""
        arrays = {p: self.facts.fact(ir.Var(p)) for p in self.wrt}
        return frozenset(p for p, kind in arrays.items() if isinstance(kind, Array) and rank in (None, kind.rank))

    def _returned_beside(self, result: ir.Expr, restored: set[str], put_back: frozenset[str]) -> Optional[ir.Expr]:
        """What the adjoint returns beside the gradient: the value, or with ``has_aux`` the pair of
        the value and the aux's leaves; without the value (``with_value`` false), the aux's leaves
        alone, or nothing.  Each is kept apart from what the reverse sweep restores."""
        if self.with_value and isinstance(result, ir.Var) and (
                result.name in restored and not self.split or self.sharing.handed_out_needs_copy(result.name, put_back)):
            result = self._kept_apart(result, put_back)
        aux = self.fn.aux
        if aux is None:
            return result if self.with_value else None
        assert isinstance(aux, ir.Display)  # (lower.py makes it a display of atoms)
        kept_aux = []
        for item in aux.items:
            if isinstance(item, ir.Var) and (item.name in restored
                                             or self.sharing.handed_out_needs_copy(item.name, put_back)):
                item = self._kept_apart(item, put_back)
            kept_aux.append(item)
        leaves = ir.Display("tuple", tuple(kept_aux))
        return ir.Display("tuple", (result, leaves)) if self.with_value else leaves

    def _result_check(self, result: ir.Expr, line: Optional[int]) -> list[ir.Stmt]:
        """Where the adjoint returns no value: the check that the result is one number (what ``grad``
        differentiates: the seed is one number), unless the facts prove it.  The check reads the
        result, so then the statements making it stay."""
        if isinstance(self.facts.fact(result), Number):
            return []
        return [ir.Effect(ir.Call(runtime.check_one_number, (result, ir.Const(self.fn.name))), line)]

    def cut(self, forward: list[ir.Stmt], gradient: ir.Expr, seed: str) -> None:
        """The ``cut`` slot of the split form: the forward sweep's values that the reverse sweep reads
        before binding them go over to the backward part, pushed at the end of the forward sweep and
        popped at the start of the reverse sweep.  Every one is bound on every path of the forward
        sweep: a value bound on some paths only (in a branch, in a loop's body) is read back by the
        branch or trip that binds it, through a slot of its own (``restore``)."""
        read = read_before_bound(self.adjoints.out + [ir.Return(gradient)]) - {seed, self.recorder.tape}
        bound = definitely_bound(forward) | set(self.fn.params)
        missing = read & (ir.assigned_names(forward) - bound)
        if missing:
            raise TapeViolation(f"{self.fn.name}: the reverse sweep reads {sorted(missing)}, which the forward "
                                f"sweep binds on some paths only and no slot records")
        crossing = tuple(sorted(read & bound))
        if crossing:
            values = tuple(ir.Var(n) for n in crossing)
            forward.append(ir.Push(CUT, values))
            self.adjoints.out.insert(0, ir.Pop(CUT, crossing))
            kinds = tuple(self.recorder.recorded_kind(v) for v in values)
            self.recorder.draft.declare("the cut: what the backward part reads of the forward part", values, crossing,
                                        kinds, (), None, name=CUT)

    def _kept_apart(self, value: ir.Var, put_back: frozenset[str]) -> ir.Var:
        """``value`` as the forward sweep hands it out, kept apart from what the reverse sweep changes:
        loop values it restores under their own names (a new binding), and arrays whose overwritten
        slices it puts back in place (a copy, taken before the reverse sweep)."""
        kept = self.adjoints.fresh(f"{value.name}_final")
        copied = self.sharing.handed_out_needs_copy(value.name, put_back)
        copy = language.copy if isinstance(self.facts.fact(value), (Array, Number)) else runtime.held_apart
        binding = ir.Assign(kept, ir.Call(copy, (value,)) if copied else value, None)
        if self.split:  # the forward part hands it out: bound at its end
            self.kept.append(binding)
        else:  # the first statement after the forward sweep
            self.adjoints.out.insert(len(self.kept_first), binding)
            self.kept_first.append(binding)
        return ir.Var(kept)

    def _snapshots(self, sweep: list[ir.Stmt]) -> set[str]:
        """Names the reverse sweep reads that may share memory a later store writes (a view of an
        array written after it was taken): the forward sweep keeps a copy of what they held."""
        if not self.sharing.stale:
            return set()
        reads = {n for s in ir.walk(sweep) for e in ir.exprs_of(s) for n in values_read(e)}
        return {n for n in reads if self.sharing.copy_needed_for_record(n) and self.facts.shape.get(n) != SCALAR}

    def reverse_block(self, body: list[ir.Stmt]) -> list[ir.Stmt]:
        outer_out, outer_local = self.adjoints.out, self.adjoints.local
        self.adjoints.out, self.adjoints.local = [], {t for s in body for t in ir.targets_of(s)}
        self.adjoints.local |= {s.target for s in body if isinstance(s, ir.Assign) and not s.merge}
        for stmt in reversed(body):
            self.adjoints.line = stmt.line
            if isinstance(stmt, ir.Assign) and stmt.merge:
                self.assignments.reverse_merge(stmt)
            elif isinstance(stmt, ir.Assign):
                if stmt.target in self.facts.active and stmt.target in self.adjoints.adjoint:
                    self.assignments.propagate(stmt)
            elif isinstance(stmt, ir.Store):
                self.stores.reverse_store(stmt)
            elif isinstance(stmt, ir.If):
                self.reverse_if(stmt)
            elif isinstance(stmt, (ir.For, ir.While)):
                self.reverse_loop(stmt)
        reversed_body, self.adjoints.out, self.adjoints.local = self.adjoints.out, outer_out, outer_local
        return reversed_body

    # -- control flow ------------------------------------------------------

    def reverse_if(self, stmt: ir.If) -> None:
        """An ``if`` reversed into an ``if`` on the same test, the adjoints of both branches joined."""
        merged = {s.target for s in stmt.body + stmt.orelse if isinstance(s, ir.Assign) and s.merge}
        before = dict(self.adjoints.adjoint)
        body = self.reverse_block(stmt.body)
        after_body, self.adjoints.adjoint = self.adjoints.adjoint, dict(before)
        orelse = self.reverse_block(stmt.orelse)
        after_else = self.adjoints.adjoint
        joined: dict[str, ir.Expr] = {}
        # A value a branch binds does not exist before the if: what is left of its adjoint (an array
        # written by index, whose making no derivative flows through) ends with the branch; joining
        # it would read the value on the other path too, where it was never bound.
        inside = (ir.assigned_names(stmt.body) | ir.assigned_names(stmt.orelse)) - merged
        # in a fixed order (the first side's, then the other's): the code must not depend on hashing
        names = [n for n in dict.fromkeys(list(after_body) + list(after_else)) if n not in merged | inside]
        for name in names:
            in_body, in_else = after_body.get(name), after_else.get(name)
            if in_body is not None and in_body == in_else:
                joined[name] = in_body
                continue
            target = ir.Var(self.adjoints.adjoint_name(name))
            for block, value in ((body, in_body), (orelse, in_else)):
                if value is None:
                    block.append(ir.Assign(target.name, self.adjoints.zero(name), stmt.line))
                elif value != target:
                    block.append(ir.Assign(target.name, value, stmt.line))
            joined[name] = target
        self.adjoints.adjoint = joined
        self.adjoints.line = stmt.line
        if self.recorder.loops or self.split:  # each branch restores what its own reverse reads
            body = self.recorder.restore(stmt.body, body, f"the branch at line {stmt.line}, when its test "
                                         f"holds") + body
            orelse = self.recorder.restore(stmt.orelse, orelse, f"the branch at line {stmt.line}, when its test "
                                           f"fails") + orelse
        if body or orelse:
            self.adjoints.emit(ir.If(stmt.test, body, orelse, stmt.line))

    def reverse_loop(self, stmt: Union[ir.For, ir.While]) -> None:
        """A loop reversed into a loop over the same range backwards (or, checkpointed, segment by segment)."""
        body = stmt.body
        assigned = ir.assigned_names(body) | ({stmt.index} if isinstance(stmt, ir.For) else set())
        carried = set(ir.loop_carried(body)) & self.facts.active
        # (what a store writes is read too: out[j] = u takes u's adjoint every iteration)
        read = {n for s in ir.walk(body) if isinstance(s, (ir.Assign, ir.Store)) for e in ir.exprs_of(s)
                for n in ir.names_read(e)}
        accumulators = ((read - assigned) & self.facts.active) | carried
        # Every adjoint the loop adds to must exist, in its own name, before the loop;
        # arrays the loop indexes or writes get theirs updated in place.
        in_place = {s.value.args[0].name for s in ir.walk(body) if isinstance(s, ir.Assign)
                    and isinstance(s.value, ir.Call) and s.value.fn is operator.getitem
                    and isinstance(s.value.args[0], ir.Var) and self.facts.shape_of(s.value.args[0]) != SCALAR}
        stored = {s.array for s in ir.walk(body) if isinstance(s, ir.Store)}
        in_place |= stored
        # an array the loop writes into reads its adjoint there: own it once, before the loop
        accumulators |= (stored - assigned) & self.facts.active & set(self.adjoints.adjoint)
        for name in sorted(accumulators):
            if name in in_place:
                self.adjoints.own(name)
            else:
                self.adjoints.canonical(name)
        outer_pinned, self.adjoints.pinned = self.adjoints.pinned, self.adjoints.pinned | accumulators
        self.recorder.loops.append(stmt)
        reversed_body = self.reverse_block(body)
        for name in sorted(carried):  # the next (earlier) iteration needs d_name again
            self.adjoints.out, saved = reversed_body, self.adjoints.out
            self.adjoints.canonical(name)
            self.adjoints.out = saved
        # (a fixed-point loop's reverse runs its body again right before reversing it: nothing to record)
        prologue = [] if isinstance(stmt, ir.While) and stmt.fixed_point else \
            self.recorder.restore(body, reversed_body, f"each trip of the loop at line {stmt.line}")
        self.recorder.loops.pop()
        self.adjoints.pinned = outer_pinned
        for name in list(self.adjoints.adjoint):
            if name in assigned and name not in carried:
                del self.adjoints.adjoint[name]
        self.adjoints.line = stmt.line
        if isinstance(stmt, ir.For) and stmt.checkpoint is not None:
            self.recorder.reverse_checkpointed(stmt, prologue + reversed_body)
            return
        if isinstance(stmt, ir.While) and stmt.checkpoint is not None:
            self.recorder.reverse_checkpointed(online.as_for(self.recorder, stmt), prologue + reversed_body)
            return
        if isinstance(stmt, ir.While) and stmt.fixed_point:
            fixed_point.reverse(self.recorder, stmt, prologue + reversed_body, carried, accumulators)
            return
        index, steps, backwards = self.reverse_steps(stmt)
        self.adjoints.emit(ir.For(index, steps, prologue + reversed_body, stmt.line, reverse=backwards))

    def reverse_steps(self, stmt: Union[ir.For, ir.While]) -> tuple[str, ir.Expr, bool]:
        """The index name, range and direction of the reversed loop."""
        needs_count = isinstance(stmt, ir.While) or stmt.exit is not None
        if needs_count:
            counter = self.adjoints.fresh("trips")
            self.recorder.trips[stmt.sid] = counter
        if isinstance(stmt, ir.While):
            return self.adjoints.fresh("step"), ir.Call(range, (ir.Var(counter),)), False
        steps = stmt.iterable
        if needs_count:
            steps = ir.Call(operator.getitem, (steps, ir.Slice(None, ir.Var(counter), None)))
        return stmt.index, steps, True


def reverse(fn: ir.Function, wrt: list[str], facts: Analysis, callee: Optional[CalleeBuilder] = None,
            split: bool = False, slices_in_place: bool = True, with_value: bool = True) -> ir.Function:
    """Build the adjoint of ``fn`` (see the module docstring).

    ``callee`` builds the adjoints of the user's functions that ``fn`` calls.
    With ``split``, the adjoint takes the tape as its last parameter (for
    ``pipeline.split_adjoint``, which cuts it into forward and backward parts).  ``slices_in_place``:
    an array read by several slices gets their adjoints added into one array in place (the target
    writes in place: ``Capabilities.slices_in_place``).  Without ``with_value`` it returns the gradient alone
    (with ``has_aux``, the aux's leaves and the gradient): what only the value needs is then dead, and
    ``optimize.remove_dead`` drops it.
    """
    sweep = ReverseSweep(fn, wrt, facts, callee, split, slices_in_place=slices_in_place, with_value=with_value)
    adjoint = sweep.run()
    # A slice put back that nothing reads afterwards needs no recording: generate once more without it.
    if not sweep.stores.restores:
        return adjoint
    kept = {s.sid for s in ir.walk(remove_dead(adjoint.body))}
    unread = frozenset(store for store, restore in sweep.stores.restores.items() if restore.sid not in kept)
    if unread:
        adjoint = ReverseSweep(fn, wrt, facts, callee, split, unrestored=unread, sharing=sweep.sharing,
                               slices_in_place=slices_in_place, with_value=with_value).run()
    return adjoint
