"""Stage 4 (reverse mode): SSA function → adjoint function, in IR.

Input: an SSA ``ir.Function``, the SSA names of the ``wrt`` parameters, and
the ``Analysis`` of the function.  Output: an ``ir.Function`` in adjoint
form taking the primal parameters and the seed ``d_<result>``, whose body is
the forward sweep (the primal statements, plus what loops must record)
followed by the reverse sweep, and which returns ``(result, gradient)``: one
adjoint, or a tuple of them in ``wrt`` order.

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
"""
from __future__ import annotations

import operator
from collections import Counter
from typing import Any, Callable, Optional

import numpy as np

from . import ir, rules, runtime
from .analysis import SCALAR, Analysis, differentiable_operands, lost_derivative_check
from .errors import TransformError
from .expressions import describe_callable, instantiate, is_user_function, template_ir
from .kinds import Array, Kind, Number, derivative_kind
from .optimize import remove_dead
from .aliasing import Sharing, values_read
from .recording import Recording
from .plan import CUT, PlanDraft, TapeViolation
from .tape import REVERSE_SWEEP, definitely_bound, read_before_bound

# Builds (or finds) the split adjoint of a user function for argument kinds;
# the result has ``forward`` and ``backward`` once compiled.
CalleeBuilder = Callable[[Any, tuple], Any]


class ReverseSweep(Recording):
    def __init__(self, fn: ir.Function, wrt: list[str], facts: Analysis,
                 callee: Optional[CalleeBuilder] = None, split: bool = False,
                 unrestored: frozenset = frozenset(), sharing: Optional[Sharing] = None) -> None:
        self.fn = fn
        self.callee = callee
        self.unrestored = unrestored  # id(Store) whose overwritten slice nothing reads again
        self.restores: dict[int, ir.Store] = {}  # id(primal Store) -> the store that puts the slice back
        self.split = split  # a callee's adjoint: the tape is a parameter, and returned
        self.calls: dict[int, Any] = {}  # id(primal call statement) -> the callee's split adjoint
        self.wrt = wrt
        self.facts = facts
        self.adjoint: dict[str, ir.Expr] = {}
        self.out: list[ir.Stmt] = []
        self.taken = ir.NameSet(ir.assigned_names(fn.body) | set(fn.params))
        self.names: dict[str, str] = {}
        self.line: Optional[int] = None
        self.pinned: set[str] = set(wrt)  # adjoints that must live in their own name
        self.local: set[str] = set()  # names bound in the block being reversed
        self.loops: list[ir.Stmt] = []  # the loops being reversed, innermost last
        self.pushes: dict[int, list[str]] = {}  # id(forward block) -> names recorded at its end
        self.trips: dict[int, str] = {}  # id(loop) -> name of its trip counter
        self.definitions = {s.target: s for s in ir.walk(fn.body) if isinstance(s, ir.Assign) and not s.merge}
        self.tape = "tape"
        # Adjoints updated in place (d_a[i] = ...): always held in an array the sweep owns.
        self.owned: set[str] = set()
        stores = [s for s in ir.walk(fn.body) if isinstance(s, ir.Store)]
        self.written = {s.array for s in stores}
        # which names may share memory with a written array (the forward sweep copies those the reverse reads)
        self.sharing = sharing or Sharing(fn, only_if_written=True)
        self.snapshots: set[str] = set()  # views the forward sweep copies where it binds them
        # A written array whose contents other statements read gets its overwritten slices back.
        self.restored_arrays = self.written & self._read_elsewhere(fn.body) if stores else set()
        self.store_pushes: dict[int, str] = {}  # id(Store) whose old slice the forward sweep records -> slot
        self.checkpoints: dict[int, str] = {}  # id(checkpointed loop) -> the slot of its segment snapshots
        self.draft = PlanDraft(self.tape)
        # False while generating the first pass of a checkpointed loop, which records nothing.
        self.recording = True
        self.tuples = self._tuples_read_by_item(fn.body, fn.params)
        self.slots: dict[str, list] = {}  # tuple name -> the adjoint of each item so far (None: none yet)

    @staticmethod
    def _read_elsewhere(body: list[ir.Stmt]) -> set[str]:
        """The names statements other than stores read."""
        return {n for s in ir.walk(body) if not isinstance(s, ir.Store)
                for e in ir.exprs_of(s) for n in ir.names_read(e)}

    # -- names and emission ------------------------------------------------

    def fresh(self, base: str) -> str:
        return ir.fresh_name(base, self.taken)

    def adjoint_name(self, name: str) -> str:
        """``d_<name>``, unless the user's code already uses that name."""
        if name not in self.names:
            self.names[name] = self.fresh("d_" + name)
        return self.names[name]

    def emit(self, stmt: ir.Stmt) -> None:
        self.out.append(stmt)

    def assign(self, target: str, value: ir.Expr) -> None:
        self.emit(ir.Assign(target, value, self.line))

    def zero(self, name: str) -> ir.Expr:
        return zero_of(self.facts.fact(ir.Var(name)), ir.Var(name))

    # -- the sweep ---------------------------------------------------------

    def run(self) -> ir.Function:
        result = self.fn.body[-1].value
        seed = self.adjoint_name(result.name if isinstance(result, ir.Var) else "out")
        if isinstance(result, ir.Var) and result.name in self.facts.active:
            self.adjoint[result.name] = ir.Var(seed)
            self.pinned.add(result.name)  # the seed's name is fixed: never alias it
        self.tape = self.draft.tape = self.fresh("tape")
        sweep = self.reverse_block(self.fn.body[:-1])
        self.snapshots = self._snapshots(sweep)
        self.line = None
        self.out = sweep
        restored = {n for s in ir.walk(sweep) if isinstance(s, (ir.Assign, ir.Unpack, ir.Pop))
                    for n in ir.targets_of(s)}
        put_back = frozenset(s.array for s in self.restores.values())
        self.kept: list[ir.Stmt] = []  # what the forward part hands out (split), bound apart at its end
        self.kept_first: list[ir.Stmt] = []  # the same, bound first in the reverse sweep (one piece)
        if isinstance(result, ir.Var) and (result.name in restored and not self.split
                                           or self.sharing.handed_out_needs_copy(result.name, put_back)):
            result = self._kept_apart(result, put_back)
        aux = self.fn.aux
        if aux is not None:  # has_aux: returned beside the value, kept apart from restored loop values
            kept_aux = []
            for item in aux.items:
                if isinstance(item, ir.Var) and (item.name in restored
                                                 or self.sharing.handed_out_needs_copy(item.name, put_back)):
                    item = self._kept_apart(item, put_back)
                kept_aux.append(item)
            result = ir.Display("tuple", (result, ir.Display("tuple", tuple(kept_aux))))
        gradients = tuple(self.final_adjoint(p) for p in self.wrt)
        # (split: always one item per parameter, tape.split_parts reads them so; one parameter's
        # adjoint may itself be a tuple, a helper given (W, b))
        gradient = gradients[0] if len(gradients) == 1 and not self.split else ir.Display("tuple", gradients)
        forward = self.forward_block(self.fn.body[:-1]) + self.kept
        finish = ir.Return(ir.Display("tuple", (result, gradient)))
        if self.split:
            self.cut(forward, finish, seed)
        sweep = [ir.Comment(REVERSE_SWEEP)] + self.out
        body = forward + sweep + [finish]
        params = self.fn.params + [seed] + ([self.tape] if self.split else [])
        return ir.Function("d_" + self.fn.name, params, body, self.fn.filename, self.fn.firstline,
                           self.fn.docstring, dict(self.fn.constants), plan=self.draft.done())

    def cut(self, forward: list[ir.Stmt], finish: ir.Return, seed: str) -> None:
        """The ``cut`` slot of the split form: the forward sweep's values that the reverse sweep reads
        before binding them go over to the backward part, pushed at the end of the forward sweep and
        popped at the start of the reverse sweep.  Every one is bound on every path of the forward
        sweep: a value bound on some paths only (in a branch, in a loop's body) is read back by the
        branch or trip that binds it, through a slot of its own (``restore``)."""
        read = read_before_bound(self.out + [ir.Return(finish.value.items[1])]) - {seed, self.tape}
        bound = definitely_bound(forward) | set(self.fn.params)
        missing = read & (ir.assigned_names(forward) - bound)
        if missing:
            raise TapeViolation(f"{self.fn.name}: the reverse sweep reads {sorted(missing)}, which the forward "
                                f"sweep binds on some paths only and no slot records")
        crossing = tuple(sorted(read & bound))
        if crossing:
            values = tuple(ir.Var(n) for n in crossing)
            forward.append(ir.Push(CUT, values))
            self.out.insert(0, ir.Pop(CUT, crossing))
            kinds = tuple(self.recorded_kind(v) for v in values)
            self.draft.declare("the cut: what the backward part reads of the forward part", values, crossing,
                               kinds, (), None, name=CUT)

    def _kept_apart(self, value: ir.Var, put_back: frozenset[str]) -> ir.Var:
        """``value`` as the forward sweep hands it out, kept apart from what the reverse sweep changes:
        loop values it restores under their own names (a new binding), and arrays whose overwritten
        slices it puts back in place (a copy, taken before the reverse sweep)."""
        kept = self.fresh(f"{value.name}_final")
        copied = self.sharing.handed_out_needs_copy(value.name, put_back)
        copy = np.copy if isinstance(self.facts.fact(value), (Array, Number)) else runtime.held_apart
        binding = ir.Assign(kept, ir.Call(copy, (value,)) if copied else value, None)
        if self.split:  # the forward part hands it out: bound at its end
            self.kept.append(binding)
        else:  # the first statement after the forward sweep
            self.out.insert(len(self.kept_first), binding)
            self.kept_first.append(binding)
        return ir.Var(kept)

    def _snapshots(self, sweep: list[ir.Stmt]) -> set[str]:
        """Names the reverse sweep reads that may share memory a later store writes (a view of an
        array written after it was taken): the forward sweep keeps a copy of what they held."""
        if not self.sharing.stale:
            return set()
        reads = {n for s in ir.walk(sweep) for e in ir.exprs_of(s) for n in values_read(e)}
        return {n for n in reads if self.sharing.copy_needed_for_record(n) and self.facts.shape.get(n) != SCALAR}

    def final_adjoint(self, param: str) -> ir.Expr:
        if param in self.adjoint:
            return self.adjoint[param]
        self.assign(self.adjoint_name(param), self.zero(param))
        return ir.Var(self.adjoint_name(param))

    def reverse_block(self, body: list[ir.Stmt]) -> list[ir.Stmt]:
        outer_out, outer_local = self.out, self.local
        self.out, self.local = [], {t for s in body for t in ir.targets_of(s)}
        self.local |= {s.target for s in body if isinstance(s, ir.Assign) and not s.merge}
        for stmt in reversed(body):
            self.line = stmt.line
            if isinstance(stmt, ir.Assign) and stmt.merge:
                self.reverse_merge(stmt)
            elif isinstance(stmt, ir.Assign):
                if stmt.target in self.facts.active and stmt.target in self.adjoint:
                    self.propagate(stmt)
            elif isinstance(stmt, ir.Store):
                self.reverse_store(stmt)
            elif isinstance(stmt, ir.If):
                self.reverse_if(stmt)
            elif isinstance(stmt, (ir.For, ir.While)):
                self.reverse_loop(stmt)
        reversed_body, self.out, self.local = self.out, outer_out, outer_local
        return reversed_body

    # -- one statement -----------------------------------------------------

    def propagate(self, stmt: ir.Assign) -> None:
        """Splice in the adjoint template of one primal statement."""
        if isinstance(stmt.value, ir.Display):  # t = (a, b): each item takes its row of d_t
            self.distribute(self.adjoint.pop(stmt.target), stmt.value, stmt, elementwise=False)
            return
        if isinstance(stmt.value, ir.Var):  # a copy (lower.py's parallel merges make them): passes through
            self.distribute(self.adjoint.pop(stmt.target), stmt.value, stmt, elementwise=False)
            return
        call = stmt.value
        needed = {name: operand for name, operand in differentiable_operands(stmt)
                  if set(ir.names_read(operand)) & self.facts.active}
        if not needed:
            return
        rule = rules.adjoint_rule(call.fn)
        if rule is None and is_user_function(call.fn):
            self.propagate_call(stmt, needed)
            return
        if rule is None:
            name = describe_callable(call.fn)
            raise TransformError(f"the call of {name} in reverse mode", f"it has a tangent rule only: use "
                                 f"s2s_ad.jvp, or add a reverse rule with @s2s_ad.adjoint({name})",
                                 filename=self.fn.filename, line=stmt.line)
        if call.fn is operator.getitem and isinstance(call.args[0], ir.Var) and call.args[0].name in self.owned:
            self.scatter(call.args[0].name, call.args[1], self.adjoint.pop(stmt.target))
            return
        if call.fn is operator.getitem and isinstance(call.args[0], ir.Var) and call.args[0].name in self.tuples:
            self.item_adjoint(call.args[0].name, call.args[1].value, stmt.target)
            return
        if self.facts.sequence_operation(call):
            self.sequence_adjoint(stmt)
            return
        bound = rules.bind_arguments(rule, call.args, call.kwargs)
        rule = rules.for_ranks(rule, lambda name: None if rules.is_default(bound[name]) else
                               self.facts.rank_of(bound[name]))  # a variant for known ranks (d_out @ b.T)
        mapping: dict[str, ir.Expr] = {
            name: ir.Const(value.value) if rules.is_default(value) else value for name, value in bound.items()
        }
        mapping[rule.result] = ir.Var(stmt.target)
        mapping[rule.seeds[0]] = self.adjoint[stmt.target]
        for name, tree in template_ir(rule):
            value = instantiate(tree, mapping)
            if name.startswith("d_") and name[2:] in rule.inputs:
                if name[2:] in needed:
                    self.distribute(value, needed[name[2:]], stmt, rule.elementwise)
                continue
            temp = self.fresh(f"{name}_{stmt.target}")
            self.assign(temp, value)
            mapping[name] = ir.Var(temp)
        del self.adjoint[stmt.target]  # complete and consumed

    def sequence_adjoint(self, stmt: ir.Assign) -> None:
        """``c = a + b`` or ``c = a * n`` where tuples or lists may be concatenated or repeated: the
        adjoint splits or adds copies up, not the arithmetic rule (``runtime.add_adjoint`` decides
        which at run time where the kinds could not)."""
        call = stmt.value
        helper = rules.fact(call.fn, "sequence_helpers")[0]  # declared with joins_sequences in templates/
        whole = self.fresh(f"parts_{stmt.target}")
        self.assign(whole, ir.Call(helper, (self.adjoint.pop(stmt.target),) + call.args))
        for i, operand in enumerate(call.args):
            if set(ir.names_read(operand)) & self.facts.active:
                self.distribute(ir.Call(operator.getitem, (ir.Var(whole), ir.Const(i))), operand, stmt,
                                elementwise=False)

    # -- tuples read item by item --------------------------------------------

    def _tuples_read_by_item(self, body: list[ir.Stmt], params: tuple = ()) -> set[str]:
        """Tuples (of known items) read only as ``t[k]`` in the block that makes them (for a parameter,
        the function's body: a helper given ``(W, b)``): their adjoint is a tuple of the items'
        adjoints, built in place, never an array of rows."""
        found: set[str] = set()
        if not self.facts.items:  # no tuple whose items are known
            return found
        blocks = [body] + [b for s in ir.walk(body) for b in ir.blocks(s)]
        for block in blocks:
            made = {s.target for s in block if isinstance(s, ir.Assign) and s.target in self.facts.items}
            if block is body:
                made |= {p for p in params if p in self.facts.items}
            reads = Counter(s.value.args[0].name for s in block if isinstance(s, ir.Assign)
                            and isinstance(s.value, ir.Call) and s.value.fn is operator.getitem
                            and isinstance(s.value.args[0], ir.Var) and isinstance(s.value.args[1], ir.Const)
                            and isinstance(s.value.args[1].value, int))
            found |= {name for name in made if reads[name] == self.facts.uses[name]}
        return found

    def item_adjoint(self, name: str, index: int, item: str) -> None:
        """``item = t[index]``: ``d_item`` joins item ``index`` of the tuple ``d_t``."""
        # held in d_item's own name: an alias could change before the tuple is used
        self.canonical(item)
        contribution = self.adjoint.pop(item)
        kinds = self.facts.fact(ir.Var(name)).items
        slots = self.slots.setdefault(name, [None] * len(kinds))  # None: no contribution yet
        slots[index] = contribution if slots[index] is None else ir.Call(operator.add, (slots[index], contribution))
        self.adjoint[name] = ir.Display("tuple", tuple(
            part if part is not None else zero_of(kind, ir.Call(operator.getitem, (ir.Var(name), ir.Const(i))))
            for i, (part, kind) in enumerate(zip(slots, kinds))))

    # -- arrays updated in place --------------------------------------------

    def _element_index(self, index: ir.Expr) -> bool:
        """True if ``index`` picks single elements or basic slices (no repeats).

        Only a tuple display is a tuple of per-axis indices: a list display
        (``b[[1, 1]]``) is one integer-array index, and may repeat positions.
        """
        parts = ir.index_parts(index)
        for part in parts:
            if isinstance(part, ir.Slice):
                if not all(p is None or self.facts.shape_of(p) == SCALAR for p in (part.lower, part.upper, part.step)):
                    return False
            elif isinstance(part, ir.Const):
                if not (part.value is None or part.value is Ellipsis or isinstance(part.value, int)):
                    return False
            elif self.facts.shape_of(part) != SCALAR:
                return False
        return True

    def _single_element(self, array: str, index: ir.Expr) -> bool:
        """True if ``array[index]`` is provably one number: one integer per dimension of a known rank."""
        parts = ir.index_parts(index)
        return (self.facts.ndim.get(array) == len(parts)
                and all(not isinstance(p, (ir.Slice, ir.Display)) and self.facts.shape_of(p) == SCALAR
                        and not getattr(self.facts.fact(p), "truth", False)  # a[flag] adds an axis
                        and not (isinstance(p, ir.Const) and (p.value is None or p.value is Ellipsis))
                        for p in parts))

    def scatter(self, array: str, index: ir.Expr, contribution: ir.Expr) -> None:
        """``d_array[index] += contribution``: in place where the index cannot repeat a position.

        An integer-array index may read an element twice, and each reading adds
        its part: ``getitem_grad`` scatters with ``np.add.at``, as a call whose
        result is added (generated code stays pure, so higher orders can
        differentiate it again).
        """
        self.own(array)
        target = self.adjoint_name(array)
        if self._element_index(index):
            self.emit(ir.Store(target, index, contribution, self.line, op=operator.add))
        else:
            self.accumulate(array, ir.Call(runtime.getitem_grad, (contribution, ir.Var(array), index)))

    def own(self, name: str) -> None:
        """Hold the adjoint of ``name`` in an array of its own, ready for in-place updates."""
        target = self.adjoint_name(name)
        current = self.adjoint.get(name)
        if current is None:
            self.assign(target, ir.Call(runtime.zeros_like, (ir.Var(name),)))
        elif not (isinstance(current, ir.Var) and current.name == target and name in self.owned):
            self.assign(target, ir.Call(runtime.writable_copy, (current, ir.Var(name))))
        self.adjoint[name] = ir.Var(target)
        self.owned.add(name)

    def reverse_store(self, stmt: ir.Store) -> None:
        """``a[i] = v``: ``v`` takes the adjoint of the slice it wrote, which then becomes zero."""
        array, index, value = stmt.array, stmt.index, stmt.value
        if array in self.adjoint and array in self.facts.active:
            self.own(array)
            target = ir.Var(self.adjoint_name(array))
            if isinstance(value, ir.Var) and value.name in self.facts.active:
                part = ir.Call(operator.getitem, (target, index))
                if not self._single_element(array, index):
                    if self._element_index(index):  # a row or a slice is a view: copy it before it is zeroed
                        part = ir.Call(np.copy, (part,))
                        if self.facts.part_class(array, index) != self.facts.shape.get(value.name):
                            part = ir.Call(runtime.unbroadcast, (part, value))  # the value may have been broadcast
                    else:  # an integer array may name an element twice: only the write NumPy kept counts
                        self._check_overlapping_fancy_store(stmt)
                        part = ir.Call(runtime.stored_part, (target, index, value))
                if array not in self.facts.inexact:  # into integers, NumPy truncates: no derivative
                    part = ir.Call(runtime.if_inexact, (part, ir.Var(array)))
                if self.sharing.adjoint_shared_with_store(value.name, array):
                    # ``b[::-1] = b``: the value's adjoint is the array's, which the store zeroes next:
                    # take the part first, zero the slice, then add the part
                    taken = self.fresh(f"d_{value.name}_part")
                    self.assign(taken, part)
                    self.emit(ir.Store(target.name, index, ir.Const(0.0), self.line))
                    self.accumulate(value.name, ir.Var(taken))
                else:
                    self.accumulate(value.name, part)
                    self.emit(ir.Store(target.name, index, ir.Const(0.0), self.line))
            else:
                self.emit(ir.Store(target.name, index, ir.Const(0.0), self.line))
        if array in self.restored_arrays and id(stmt) not in self.unrestored:
            old = self.fresh(f"old_{array}")
            self.store_pushes[id(stmt)] = self.declare(f"the store at line {stmt.line}: the part of {array} it "
                                                       f"overwrites", (self.overwritten(stmt),), (old,), stmt.line)
            self.emit(ir.Pop(self.store_pushes[id(stmt)], (old,), self.line))
            self.restores[id(stmt)] = ir.Store(array, index, ir.Var(old), self.line)
            self.emit(self.restores[id(stmt)])

    def _check_overlapping_fancy_store(self, stmt: ir.Store) -> None:
        """Refuse ``b[[3, 2, 1, 0]] = b`` (a value that may share memory with the array an integer-array
        index writes) where this NumPy does not copy such a right side first (before 2.0 it writes the
        elements one by one, each read after the writes before it): the adjoint assumes the copy."""
        if runtime.FANCY_STORES_COPY_OVERLAP or not isinstance(stmt.value, ir.Var):
            return
        if stmt.value.name == stmt.array or self.sharing.shares(stmt.value.name, stmt.array):
            raise TransformError(f"the store into {stmt.array} by an integer array of a value that may share its "
                                 f"memory", "this NumPy (before 2.0) writes such a store element by element, "
                                 "reading values it has already overwritten; copy the value first "
                                 f"({stmt.array}[index] = value.copy())", filename=self.fn.filename, line=stmt.line)

    def propagate_call(self, stmt: ir.Assign, needed: dict[str, ir.Expr]) -> None:
        """``y = helper(a, b)``: the callee's backward part gives the adjoints of all its arguments."""
        call = stmt.value
        kinds = tuple(map(self.facts.kind_of, call.args))
        owner = self.callee(call.fn, kinds)
        self.calls[id(stmt)] = owner
        if not self.split:  # a helper's own callers check what it passes on (lost_derivative_parameters)
            for i, site in sorted(getattr(owner, "lost", {}).items()):
                if str(i) in needed and i < len(call.args):
                    self.emit(lost_derivative_check(call.args[i], site, self.line))
        parts = []
        for i, arg in enumerate(call.args):
            base = f"d_{arg.name}_part" if isinstance(arg, ir.Var) and str(i) in needed else "unused"
            parts.append(self.fresh(base))
        backward = ir.Call(ir.Part(owner, "backward"), (self.adjoint[stmt.target], ir.Var(self.tape)))
        self.emit(ir.Unpack(tuple(parts) + (self.tape,), backward, self.line))
        for i, arg in enumerate(call.args):
            if str(i) in needed:
                self.distribute(ir.Var(parts[i]), arg, stmt, elementwise=False)
        del self.adjoint[stmt.target]

    def distribute(self, contribution: ir.Expr, operand: ir.Expr, stmt: ir.Assign, elementwise: bool) -> None:
        if isinstance(operand, ir.Var):
            if operand.name in self.facts.active:
                if elementwise:
                    contribution = self.reduce(contribution, operand, stmt.target)
                self.accumulate(operand.name, contribution)
            return
        if isinstance(operand, ir.Display):
            if not (isinstance(contribution, ir.Display) and len(contribution.items) == len(operand.items)):
                whole = self.fresh(f"parts_{stmt.target}")
                self.assign(whole, contribution)
                contribution = ir.Display("tuple", tuple(
                    ir.Call(operator.getitem, (ir.Var(whole), ir.Const(i))) for i in range(len(operand.items))))
            for item, part in zip(operand.items, contribution.items):
                self.distribute(part, item, stmt, elementwise)

    def reduce(self, contribution: ir.Expr, operand: ir.Var, result: str) -> ir.Expr:
        """Undo broadcasting, where it can have happened."""
        mine = self.facts.shape.get(operand.name)
        theirs = self.facts.shape.get(result)
        if mine == theirs:
            return contribution
        if mine == SCALAR:
            return ir.Call(np.sum, (contribution,))
        known = _broadcast_sum(contribution, mine, theirs)
        return known if known is not None else ir.Call(runtime.unbroadcast, (contribution, operand))

    def accumulate(self, name: str, contribution: ir.Expr) -> None:
        current = self.adjoint.get(name)
        target = self.adjoint_name(name)
        if name in self.owned and current is not None:  # a sum is a new array: still ours
            self.assign(target, ir.Call(operator.add, (current, contribution)))
            return
        if current is None:
            if isinstance(contribution, ir.Var) and self._may_alias(name):
                self.adjoint[name] = contribution  # passes straight through
                return
            self.assign(target, contribution)
        else:
            self.assign(target, ir.Call(operator.add, (current, contribution)))
        self.adjoint[name] = ir.Var(target)

    def _may_alias(self, name: str) -> bool:
        """An alias is safe only for a value bound once, in this very block."""
        return name not in self.pinned and name in self.local and name in self.definitions

    def canonical(self, name: str) -> None:
        """Make sure the adjoint of ``name`` lives in its own name (``d_name``)."""
        target = self.adjoint_name(name)
        current = self.adjoint.get(name)
        if current is None:
            self.assign(target, self.zero(name))
        elif not (isinstance(current, ir.Var) and current.name == target):
            self.assign(target, current)
        self.adjoint[name] = ir.Var(target)

    def reverse_merge(self, stmt: ir.Assign) -> None:
        """``m = v`` joins control flow: ``d_v`` receives ``d_m``, which is then used up."""
        if stmt.target not in self.adjoint:
            return
        if isinstance(stmt.value, ir.Var) and stmt.value.name in self.facts.active:
            source = stmt.value.name
            current = self.adjoint.get(source)
            incoming = self.adjoint[stmt.target]
            target = self.adjoint_name(source)
            if current is None:
                self.assign(target, incoming)
            else:
                self.assign(target, ir.Call(operator.add, (current, incoming)))
            self.adjoint[source] = ir.Var(target)
        elif isinstance(stmt.value, ir.Display):  # s = (x, y) on one path: each item takes its part
            self.distribute(self.adjoint[stmt.target], stmt.value, stmt, elementwise=False)
        del self.adjoint[stmt.target]

    # -- control flow ------------------------------------------------------

    def reverse_if(self, stmt: ir.If) -> None:
        merged = {s.target for s in stmt.body + stmt.orelse if isinstance(s, ir.Assign) and s.merge}
        before = dict(self.adjoint)
        body = self.reverse_block(stmt.body)
        after_body, self.adjoint = self.adjoint, dict(before)
        orelse = self.reverse_block(stmt.orelse)
        after_else = self.adjoint
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
            target = ir.Var(self.adjoint_name(name))
            for block, value in ((body, in_body), (orelse, in_else)):
                if value is None:
                    block.append(ir.Assign(target.name, self.zero(name), stmt.line))
                elif value != target:
                    block.append(ir.Assign(target.name, value, stmt.line))
            joined[name] = target
        self.adjoint = joined
        self.line = stmt.line
        if self.loops or self.split:  # each branch restores what its own reverse reads
            body = self.restore(stmt.body, body, f"the branch at line {stmt.line}, when its test holds") + body
            orelse = self.restore(stmt.orelse, orelse, f"the branch at line {stmt.line}, when its test "
                                  f"fails") + orelse
        if body or orelse:
            self.emit(ir.If(stmt.test, body, orelse, stmt.line))

    def reverse_loop(self, stmt: ir.Stmt) -> None:
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
        accumulators |= (stored - assigned) & self.facts.active & set(self.adjoint)
        for name in sorted(accumulators):
            if name in in_place:
                self.own(name)
            else:
                self.canonical(name)
        outer_pinned, self.pinned = self.pinned, self.pinned | accumulators
        self.loops.append(stmt)
        reversed_body = self.reverse_block(body)
        for name in sorted(carried):  # the next (earlier) iteration needs d_name again
            self.out, saved = reversed_body, self.out
            self.canonical(name)
            self.out = saved
        prologue = self.restore(body, reversed_body, f"each trip of the loop at line {stmt.line}")
        self.loops.pop()
        self.pinned = outer_pinned
        for name in list(self.adjoint):
            if name in assigned and name not in carried:
                del self.adjoint[name]
        self.line = stmt.line
        if isinstance(stmt, ir.For) and stmt.checkpoint is not None:
            self.reverse_checkpointed(stmt, prologue + reversed_body)
            return
        index, steps, backwards = self.reverse_steps(stmt)
        self.emit(ir.For(index, steps, prologue + reversed_body, stmt.line, reverse=backwards))

    def reverse_steps(self, stmt: ir.Stmt) -> tuple[str, ir.Expr, bool]:
        """The index name, range and direction of the reversed loop."""
        needs_count = isinstance(stmt, ir.While) or stmt.exit is not None
        if needs_count:
            counter = self.fresh("trips")
            self.trips[id(stmt)] = counter
        if isinstance(stmt, ir.While):
            return self.fresh("step"), ir.Call(range, (ir.Var(counter),)), False
        steps = stmt.iterable
        if needs_count:
            steps = ir.Call(operator.getitem, (steps, ir.Slice(None, ir.Var(counter), None)))
        return stmt.index, steps, True


def zero_of(kind: Kind, value: ir.Expr) -> ir.Expr:
    """The adjoint of ``value`` (of kind ``kind``) where nothing contributed, written at once (the
    reverse sweep holds no symbolic zero: an adjoint nothing reaches is never built): ``0.0`` only
    where the adjoint's kind (``kinds.derivative_kind``) is a proven number, else zeros shaped like
    the value at run time (a wrong guess would change the result's shape)."""
    if isinstance(derivative_kind(kind), Number):
        return ir.Const(0.0)
    return ir.Call(runtime.zeros_like, (value,))


def reverse(fn: ir.Function, wrt: list[str], facts: Analysis, callee: Optional[CalleeBuilder] = None,
            split: bool = False) -> ir.Function:
    """Build the adjoint of ``fn`` (see the module docstring).

    ``callee`` builds the adjoints of the user's functions that ``fn`` calls.
    With ``split``, the adjoint takes the tape as its last parameter (for
    ``pipeline.split_adjoint``, which cuts it into forward and backward parts).
    """
    sweep = ReverseSweep(fn, wrt, facts, callee, split)
    adjoint = sweep.run()
    # A slice put back that nothing reads afterwards needs no recording: generate once more without it.
    if not sweep.restores:
        return adjoint
    kept = {id(s) for s in ir.walk(remove_dead(adjoint.body))}
    unread = frozenset(store for store, restore in sweep.restores.items() if id(restore) not in kept)
    if unread:
        adjoint = ReverseSweep(fn, wrt, facts, callee, split, unrestored=unread, sharing=sweep.sharing).run()
    return adjoint


def _broadcast_sum(contribution: ir.Expr, mine: Any, theirs: Any) -> Optional[ir.Expr]:
    """``np.sum`` of ``contribution`` over the axes broadcasting added, where both shape classes
    are dims (``analysis._dims_class``: every axis's length known); None otherwise.

    The result's extra leading axes are summed away; an axis where the operand has length 1 and
    the result a symbol is summed keeping the axis.
    """
    if not (isinstance(mine, tuple) and isinstance(theirs, tuple)):
        return None
    mine, theirs = mine[1:], theirs[1:]
    extra = len(theirs) - len(mine)
    if extra < 0 or any(m != 1 and m != t for m, t in zip(mine, theirs[extra:])):
        return None  # (not a broadcast NumPy would have done: leave it to the run time)
    kept = tuple(i for i, (m, t) in enumerate(zip(mine, theirs[extra:])) if m == 1 and t != 1)
    if (extra or kept) and isinstance(contribution, ir.Call) and contribution.fn is operator.neg:
        summed = _broadcast_sum(contribution.args[0], ("dims",) + mine, ("dims",) + theirs)
        return ir.Call(operator.neg, (summed,))  # negate the small sum, not the large array
    if extra:
        contribution = ir.Call(np.sum, (contribution,), (("axis", _axes(tuple(range(extra)))),))
    if kept:
        contribution = ir.Call(np.sum, (contribution,), (("axis", _axes(kept)), ("keepdims", ir.Const(True))))
    return contribution


def _axes(axes: tuple) -> ir.Expr:
    return ir.Const(axes[0]) if len(axes) == 1 else ir.Display("tuple", tuple(ir.Const(a) for a in axes))
