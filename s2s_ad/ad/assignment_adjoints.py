"""Adjoints of assignments: each primal ``name = value`` spliced into the reverse sweep.

Input: the SSA function being reversed, its ``Analysis``, the ``wrt``
parameters, the reverse sweep's ledger (``adjoints.Adjoints``), recorder and
store part, and, for calls of the user's own functions, the builder of their
split adjoints (``callee``).  Output, appended to the ledger's statements: for
an assignment whose target has an adjoint, the adjoints of its operands, made
from the template of the callee's rule with the call's operands and the
target's adjoint substituted (``propagate``), from the callee's backward part
(a user function: ``propagate_call``, which also notes the call for the
forward sweep), split or added up for a sequence operation, gathered item by
item into a tuple's adjoint (``item_adjoint``), or passed on through a merge
copy (``reverse_merge``).  The target's adjoint is consumed.  A call with a
tangent rule only is refused (``TransformError``) before anything runs.
"""
from __future__ import annotations

import operator
from collections import Counter
from typing import Any, Callable, Iterable, Optional

from ..core import ir
from ..rules import registry as rules
from ..rules.rule import bind_arguments, is_default
from .adjoints import Adjoints, zero_of
from ..analysis.activity import differentiable_operands
from ..analysis.facts import Analysis
from ..analysis.lost_derivatives import lost_derivative_check
from ..core.errors import TransformError
from ..lowering.expressions import describe_callable, instantiate, is_user_function, template_ir, template_operands
from ..core.kinds import Sequence as SequenceKind
from .recording import Recorder
from .store_adjoints import StoreAdjoints

# Builds (or finds) the split adjoint of a user function for argument kinds;
# the result has ``forward`` and ``backward`` once compiled.
CalleeBuilder = Callable[[Any, tuple], Any]


class AssignmentAdjoints:
    """The reverse of assignments: rule templates, calls of user functions, sequences, tuple items, merges."""

    def __init__(self, fn: ir.Function, adjoints: Adjoints, recorder: Recorder, stores: StoreAdjoints,
                 facts: Analysis, callee: Optional[CalleeBuilder], split: bool, slices_in_place: bool = True) -> None:
        self.fn = fn
        self.adjoints = adjoints
        self.recorder = recorder
        self.stores = stores
        self.facts = facts
        self.callee = callee
        self.split = split  # a callee's adjoint (its callers check what it passes on)
        self.tuples = self._tuples_read_by_item(fn.body, fn.params)
        self.sliced = self._arrays_sliced_often(fn.body) if slices_in_place else set()
        self.slots: dict[str, list] = {}  # tuple name -> the adjoint of each item so far (None: none yet)

    def _arrays_sliced_often(self, body: list[ir.Stmt]) -> set[int]:
        """The reads ``part = a[index]`` at the function's top level of an array read so at least
        twice there, each index basic (numbers and slices: no position twice): their adjoints are
        added into one array of ``a``'s own in place (``d_a[index] += d_part``, ``scatter``), where
        each would otherwise make an array of zeros shaped like ``a`` and add it up.  (Top level only:
        all of them are reversed in one block, before ``a``'s definition passes ``d_a`` on.)"""
        reads: dict[str, list[int]] = {}
        for stmt in body:
            call = stmt.value if isinstance(stmt, ir.Assign) else None
            if isinstance(call, ir.Call) and call.fn is operator.getitem and isinstance(call.args[0], ir.Var) \
                    and call.args[0].name not in self.tuples and (self.facts.rank_of(call.args[0]) or 0) >= 1 \
                    and self.stores.basic_index(call.args[1]):
                reads.setdefault(call.args[0].name, []).append(stmt.sid)
        return {read for ids in reads.values() if len(ids) >= 2 for read in ids}

    def propagate(self, stmt: ir.Assign) -> None:
        """Splice in the adjoint template of one primal statement."""
        if isinstance(stmt.value, ir.Display):  # t = (a, b): each item takes its row of d_t
            self.adjoints.distribute(self.adjoints.adjoint.pop(stmt.target), stmt.value, stmt, elementwise=False)
            return
        if isinstance(stmt.value, ir.Var):  # a copy (lower.py's parallel merges make them): passes through
            self.adjoints.distribute(self.adjoints.adjoint.pop(stmt.target), stmt.value, stmt, elementwise=False)
            return
        call = stmt.value
        if not isinstance(call, ir.Call):  # a constant: no operand, no derivative
            return
        needed = {name: operand for name, operand in differentiable_operands(stmt)
                  if set(ir.names_read(operand)) & self.facts.active}
        if not needed:
            return
        rule = rules.adjoint_rule(call.fn)
        if rule is None and is_user_function(call.fn):
            self.propagate_call(stmt, call, needed)
            return
        if rule is None:
            name = describe_callable(call.fn)
            raise TransformError(f"the call of {name} in reverse mode", f"it has a tangent rule only: use "
                                 f"s2s_ad.jvp, or add a reverse rule with @s2s_ad.adjoint({name})",
                                 filename=self.fn.filename, line=stmt.line)
        if call.fn is operator.getitem and isinstance(call.args[0], ir.Var) \
                and (call.args[0].name in self.adjoints.owned or stmt.sid in self.sliced):
            self.stores.scatter(call.args[0].name, call.args[1], self.adjoints.adjoint.pop(stmt.target))
            return
        if call.fn is operator.getitem and isinstance(call.args[0], ir.Var) and call.args[0].name in self.tuples \
                and isinstance(call.args[1], ir.Const):  # (a tuple read item by item: always a constant index)
            self.item_adjoint(call.args[0].name, call.args[1].value, stmt.target)
            return
        if self.facts.sequence_operation(call):
            self.sequence_adjoint(stmt, call)
            return
        bound = bind_arguments(rule, call.args, call.kwargs)
        rule = rules.for_ranks(rule, lambda name: None if is_default(bound[name]) else
                               self.facts.rank_of(bound[name]))  # a variant for known ranks (d_out @ b.T)
        mapping = template_operands(rule, bound, is_default)
        mapping[rule.result] = ir.Var(stmt.target)
        mapping[rule.seeds[0]] = self.adjoints.adjoint[stmt.target]
        for name, tree in template_ir(rule):
            value = instantiate(tree, mapping)
            if name.startswith("d_") and name[2:] in rule.inputs:
                if name[2:] in needed:
                    self.adjoints.distribute(value, needed[name[2:]], stmt, rule.elementwise)
                continue
            temp = self.adjoints.fresh(f"{name}_{stmt.target}")
            self.adjoints.assign(temp, value)
            mapping[name] = ir.Var(temp)
        del self.adjoints.adjoint[stmt.target]  # complete and consumed

    def sequence_adjoint(self, stmt: ir.Assign, call: ir.Call) -> None:
        """``c = a + b`` or ``c = a * n`` (``call``) where tuples or lists may be concatenated or repeated:
        the adjoint splits or adds copies up, not the arithmetic rule (``add_adjoint`` in
        templates/operators.py decides which at run time where the kinds could not)."""
        helper = rules.fact(call.fn, "sequence_helpers")[0]  # declared with joins_sequences in templates/
        whole = self.adjoints.fresh(f"parts_{stmt.target}")
        self.adjoints.assign(whole, ir.Call(helper, (self.adjoints.adjoint.pop(stmt.target),) + call.args))
        for i, operand in enumerate(call.args):
            if set(ir.names_read(operand)) & self.facts.active:
                self.adjoints.distribute(ir.Call(operator.getitem, (ir.Var(whole), ir.Const(i))), operand, stmt,
                                         elementwise=False)

    def propagate_call(self, stmt: ir.Assign, call: ir.Call, needed: dict[str, ir.Expr]) -> None:
        """``y = helper(a, b)`` (``call``): the callee's backward part gives the adjoints of all its arguments."""
        if self.callee is None:
            raise TypeError(f"{self.fn.name}: reversing the call of {describe_callable(call.fn)} needs the "
                            f"builder of its split adjoint (callee=)")
        kinds = tuple(map(self.facts.kind_of, call.args))
        owner = self.callee(call.fn, kinds)
        self.recorder.calls[stmt.sid] = owner
        if not self.split:  # a helper's own callers check what it passes on (lost_derivative_parameters)
            for i, site in sorted(getattr(owner, "lost", {}).items()):
                if str(i) in needed and i < len(call.args):
                    self.adjoints.emit(lost_derivative_check(call.args[i], site, self.adjoints.line))
        parts = []
        for i, arg in enumerate(call.args):
            base = f"d_{arg.name}_part" if isinstance(arg, ir.Var) and str(i) in needed else "unused"
            parts.append(self.adjoints.fresh(base))
        backward = ir.Call(ir.Part(owner, "backward"),
                           (self.adjoints.adjoint[stmt.target], ir.Var(self.recorder.tape)))
        self.adjoints.emit(ir.Unpack(tuple(parts) + (self.recorder.tape,), backward, self.adjoints.line))
        for i, arg in enumerate(call.args):
            if str(i) in needed:
                self.adjoints.distribute(ir.Var(parts[i]), arg, stmt, elementwise=False)
        del self.adjoints.adjoint[stmt.target]

    def reverse_merge(self, stmt: ir.Assign) -> None:
        """``m = v`` joins control flow: ``d_v`` receives ``d_m``, which is then used up."""
        if stmt.target not in self.adjoints.adjoint:
            return
        if isinstance(stmt.value, ir.Var) and stmt.value.name in self.facts.active:
            source = stmt.value.name
            current = self.adjoints.adjoint.get(source)
            incoming = self.adjoints.adjoint[stmt.target]
            target = self.adjoints.adjoint_name(source)
            if current is None:
                self.adjoints.assign(target, incoming)
            else:
                self.adjoints.assign(target, ir.Call(operator.add, (current, incoming)))
            self.adjoints.adjoint[source] = ir.Var(target)
        elif isinstance(stmt.value, ir.Display):  # s = (x, y) on one path: each item takes its part
            self.adjoints.distribute(self.adjoints.adjoint[stmt.target], stmt.value, stmt, elementwise=False)
        del self.adjoints.adjoint[stmt.target]

    def _tuples_read_by_item(self, body: list[ir.Stmt], params: Iterable[str] = ()) -> set[str]:
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
        self.adjoints.canonical(item)
        contribution = self.adjoints.adjoint.pop(item)
        kind = self.facts.fact(ir.Var(name))
        assert isinstance(kind, SequenceKind)  # (tuples read item by item are those whose items are known)
        kinds = kind.items
        slots = self.slots.setdefault(name, [None] * len(kinds))  # None: no contribution yet
        slots[index] = contribution if slots[index] is None else ir.Call(operator.add, (slots[index], contribution))
        self.adjoints.adjoint[name] = ir.Display("tuple", tuple(
            part if part is not None else zero_of(kind, ir.Call(operator.getitem, (ir.Var(name), ir.Const(i))))
            for i, (part, kind) in enumerate(zip(slots, kinds))))
