"""Stage 4 (forward mode): SSA function → tangent function, in IR.

Input: an SSA ``ir.Function``, the SSA names of the parameters that carry
tangents, and the ``Analysis`` of the function.  Output: an ``ir.Function``
``jvp_<name>(params..., t_<p> for each such parameter)`` returning
``(result, t_result)``.  Each primal statement is followed by the statement
computing its tangent ``t_<name>``, in the same block: branches, loops and
stores keep their shape, so forward mode needs no tape.

Where a tangent comes from, in order:

1. an explicit ``@tangent`` rule (a template, as for adjoints);
2. ``linear=True`` on the adjoint rule: the same call on the tangents;
3. ``bilinear=True``: ``f(t_a, b) + f(a, t_b)``;
4. an elementwise adjoint rule, whose contribution ``d_x = d_out * g`` is
   linear in ``d_out``: substituting ``t_x`` for ``d_out`` gives the term
   ``t_x * g`` of the tangent, and the terms add up.

Inputs without a tangent contribute nothing: a template gets an
``ir.Zero`` of the tangent's kind (``kinds.derivative_kind``) for them, and
their terms are dropped, not multiplied by zero, so ``0 * inf`` never turns
into ``nan``; a zero that cannot be dropped is written as the zero of its
kind (``spelled``), a result that is all zero as zeros of the result's shape.
"""
from __future__ import annotations

import operator
from typing import Any, Callable, Optional

from ..core import ir, language, runtime
from ..rules import registry as rules
from ..rules.rule import Rule, bind_arguments, is_default
from ..memory.aliasing import shared_operands
from ..memory.sharing import Sharing
from ..analysis.activity import differentiable_operands
from ..analysis.facts import Analysis
from ..analysis.inference import SCALAR
from ..core.errors import TransformError
from ..lowering.expressions import (describe_callable, fold_declared, instantiate, is_user_function, template_ir,
                                    template_operands)
from ..core.kinds import UNKNOWN, Sequence, derivative_kind

# Builds (or finds) the tangent function of a user function for argument kinds
# and the positions that carry tangents; the result has ``jvp`` once compiled.
TangentBuilder = Callable[[Any, tuple, tuple], Any]

def _is_zero(expr: ir.Expr) -> bool:
    return isinstance(expr, ir.Zero)


def _without_zeros(e: ir.Expr) -> Optional[ir.Expr]:
    """``e`` with a missing tangent (an ``ir.Zero``) folded away (``0 * a``, ``a + 0``, ``-0``,
    ``0 / a``), or None if it has none among its arguments.  A call that is zero is the zero of the
    call's own kind where the zero it stems from knows no more (``0 * a`` is as large as ``a``)."""
    if not isinstance(e, ir.Call):
        return None
    args = e.args
    # calls that are zero where the argument at one of these positions is: declared factors=(0, 1)
    factors = rules.fact(e.fn, "factors", ()) if not isinstance(e.fn, ir.Part) else ()
    zero = next((args[i] for i in factors if i < len(args) and _is_zero(args[i])), None)
    if zero is not None:
        return ir.Zero(UNKNOWN) if len(args) > 1 else zero  # (the product's kind is the broadcast one)
    if _linear_of_zero(e):
        return ir.Zero(UNKNOWN)  # (a reduction or a reshape: another shape than its argument's)
    if len(args) != 2:
        return None
    sign = rules.fact(e.fn, "sum") if not isinstance(e.fn, ir.Part) else None  # declared sum="+" or sum="-"
    if sign == "+":
        if _is_zero(args[0]):
            return args[1]
        if _is_zero(args[1]):
            return args[0]
    if sign == "-":
        if _is_zero(args[1]):
            return args[0]
        if _is_zero(args[0]):
            return ir.Call(operator.neg, (args[1],))
    return None


def _linear_of_zero(e: ir.Call) -> bool:
    """A call of a linear rule (``np.sum(t, axis=1)``, ``np.reshape(t, shape)``) whose first argument is
    a missing tangent and whose others are constants: zero (and an axis would not fit a scalar zero)."""
    if isinstance(e.fn, ir.Part) or not e.args or not _is_zero(e.args[0]):
        return False
    rule = rules.adjoint_rule(e.fn)
    return (rule is not None and rule.form == "linear"
            and all(isinstance(a, ir.Const) for a in e.args[1:]) and all(isinstance(v, ir.Const) for _, v in e.kwargs))


def _substitute_dropping_zeros(tree: ir.Expr, mapping: dict[str, ir.Expr]) -> ir.Expr:
    """A template's expression with its names replaced, and the terms of missing tangents dropped.

    One pass, bottom-up: a name's replacement is not looked into, which is
    right because only a replacement itself (an ``ir.Zero``) is ever a missing
    tangent, never a part of one.
    """
    def visit(e: ir.Expr) -> Optional[ir.Expr]:
        return mapping.get(e.name) if isinstance(e, ir.Var) else _without_zeros(e)
    return ir.transform(tree, visit)


class TangentSweep:
    def __init__(self, fn: ir.Function, wrt: list[str], facts: Analysis,
                 callee: Optional[TangentBuilder] = None) -> None:
        self.fn = fn
        self.wrt = wrt
        self.facts = facts
        self.callee = callee
        self.varied = facts.varied
        self.taken = ir.NameSet(ir.assigned_names(fn.body) | set(fn.params))
        self.names: dict[str, str] = {}
        self.primal_of: dict[str, str] = {}  # tangent name -> its primal's name
        self.merged = {s.target for s in ir.walk(fn.body) if isinstance(s, ir.Assign) and s.merge}
        self.aliases: dict[str, ir.Var] = {}  # primal name -> the tangent it shares
        # which primal names may share memory, and which a store may write: a tangent mirrors its primal
        self.sharing = Sharing(fn, only_if_written=True)
        self.line: Optional[int] = None
        self.out: list[ir.Stmt] = []

    def tangent_name(self, name: str) -> str:
        if name not in self.names:
            self.names[name] = ir.fresh_name("t_" + name, self.taken)
            self.primal_of[self.names[name]] = name
        return self.names[name]

    def tangent_of(self, expr: ir.Expr) -> Optional[ir.Expr]:
        """The tangent of an operand, or None where it has none."""
        if isinstance(expr, ir.Var) and expr.name in self.aliases:
            return self.aliases[expr.name]
        if isinstance(expr, ir.Var) and expr.name in self.varied:
            return ir.Var(self.tangent_name(expr.name))
        if isinstance(expr, ir.Display) and any(self.tangent_of(i) is not None for i in expr.items):
            return ir.Display(expr.kind, tuple(self.tangent_or_zeros(i) for i in expr.items))
        return None

    def tangent_or_zeros(self, expr: ir.Expr) -> ir.Expr:
        tangent = self.tangent_of(expr)
        return tangent if tangent is not None else self.zeros(expr)

    def zeros(self, expr: ir.Expr) -> ir.Expr:
        if isinstance(expr, ir.Display):  # a list's tangent is a list: [] stays []
            return ir.Display(expr.kind, tuple(self.zeros(i) for i in expr.items))
        if isinstance(expr, ir.Const) and expr.value is None:  # the empty tape
            return expr
        if self.facts.shape_of(expr) == SCALAR:
            return ir.Const(0.0)
        return ir.Call(runtime.zero_tangent, (expr,))

    def zero_of(self, primal: ir.Expr) -> ir.Zero:
        """The tangent of ``primal``, which carries none: a zero of the kind of its derivative."""
        return ir.Zero(derivative_kind(self.facts.fact(primal)))

    @staticmethod
    def spelled(tangent: ir.Expr) -> ir.Expr:
        """``tangent`` with each ``ir.Zero`` left in it (one no rule of the expression could drop) written
        as code: ``0.0``, whatever the zero's kind.  Such a zero is an operand of an elementwise
        expression, whose other operands give it their shape (NumPy broadcasts a number), or the
        missing tangent a template's helper takes (``einsum_grad``, ``meshgrid_tangent``: each takes a
        number zero for a tangent it does not get); a tangent that is all zero never gets here
        (``zeros`` writes zeros of its value's shape)."""
        return ir.transform(tangent, lambda e: ir.Const(0.0) if isinstance(e, ir.Zero) else None)

    def emit(self, stmt: ir.Stmt) -> None:
        self.out.append(stmt)

    # -- the sweep ---------------------------------------------------------

    def run(self) -> ir.Function:
        body = self.block(self.fn.body[:-1])
        result = ir.returned(self.fn)
        t_result = self.tangent_of(result)
        if t_result is None:
            t_result = self.zeros(result)
        body.append(ir.Return(ir.Display("tuple", (result, t_result))))
        params = self.fn.params + [self.tangent_name(p) for p in self.wrt]
        return ir.Function("jvp_" + self.fn.name, params, body, self.fn.filename, self.fn.firstline,
                           self.fn.docstring, dict(self.fn.constants))

    def block(self, body: list[ir.Stmt]) -> list[ir.Stmt]:
        outer, self.out = self.out, []
        for stmt in body:
            self.line = stmt.line
            if isinstance(stmt, ir.Assign):
                self.assignment(stmt)
            elif isinstance(stmt, ir.Store):
                self.emit(stmt)
                if stmt.array in self.varied:
                    tangent = self.tangent_of(stmt.value)
                    if tangent is not None and stmt.array not in self.facts.inexact:  # integers truncate
                        tangent = ir.Call(runtime.if_inexact, (tangent, ir.Var(stmt.array)))
                    self.emit(ir.Store(self.tangent_name(stmt.array), stmt.index,
                                       tangent if tangent is not None else ir.Const(0.0), stmt.line))
            elif isinstance(stmt, ir.If):
                self.emit(ir.If(stmt.test, self.block(stmt.body), self.block(stmt.orelse), stmt.line))
            elif isinstance(stmt, ir.For):
                self.emit(ir.For(stmt.index, stmt.iterable, self.block(stmt.body), stmt.line, stmt.exit))
            elif isinstance(stmt, ir.While):
                self.emit(ir.While(self.block(stmt.test_block), stmt.test, self.block(stmt.body), stmt.line,
                                   stmt.exit))
            else:
                self.emit(stmt)
        inner, self.out = self.out, outer
        return inner

    def assignment(self, stmt: ir.Assign) -> None:
        target = stmt.target
        if target not in self.varied:
            self.emit(stmt)
            return
        t_target = self.tangent_name(target)
        value = stmt.value
        if stmt.merge or not isinstance(value, ir.Call):
            self.emit(stmt)
            tangent = self.tangent_of(value)
            if tangent is None:
                known = not stmt.merge or isinstance(value, ir.Display)
                tangent = self.zeros(value) if known else self.zeros(ir.Var(target))
            if stmt.merge:
                self.emit(ir.Assign(t_target, tangent, stmt.line, merge=True))
            else:
                self.bind(target, tangent)
            return
        if is_user_function(value.fn) and rules.adjoint_rule(value.fn) is None:
            self.user_call(stmt)
            return
        self.emit(stmt)
        if rules.is_nondifferentiable(value.fn) or not any(self.tangent_of(op) is not None
                                                           for _, op in differentiable_operands(stmt)):
            # an array made here (or from values that do not vary), varied later by stores into it:
            # zeros of its own shape, not a rule's template applied to a missing (scalar) tangent
            self.emit(ir.Assign(t_target, ir.Call(runtime.zero_tangent, (ir.Var(target),)), stmt.line))
            return
        self.bind(target, self.rule_tangent(stmt))

    def bind(self, target: str, tangent: ir.Expr) -> None:
        """``t_target = tangent``; a tangent that is another one's name passes through instead
        (no ``t_a = t_x`` copies), unless that name is a merge variable a loop may change later."""
        if self.sharing.tangent_needs_copy(target, self.primals_shared_by(tangent)) and self.copyable(target):
            # y = x + 0.0 then y[0] = ..., or t = b[1:3] - 1.0 then b[1:3] = ...: the tangent would share
            # memory that a store changes while its primal does not, so it is a copy
            tangent = ir.Call(self.copy_for(target), (tangent,))
        elif isinstance(tangent, ir.Var) and self.primal_of.get(tangent.name) not in self.merged:
            self.aliases[target] = tangent
            return
        self.emit(ir.Assign(self.tangent_name(target), tangent, self.line))

    def primals_shared_by(self, tangent: ir.Expr) -> set[str]:
        """The primal names whose tangents ``tangent`` (an expression of tangents) may share memory with."""
        return {self.primal_of[n] for n in shared_operands(tangent) if n in self.primal_of}

    def copy_for(self, target: str) -> Any:
        """How ``target``'s tangent gets memory of its own: np.copy where it may be an array; where its
        kind is not known it may be a list of arrays (the tangent of ``multi_dot_grad``, which returns
        one per operand), which ``held_apart`` copies item by item and np.copy would stack."""
        return runtime.held_apart if self.facts.fact(ir.Var(target)) is UNKNOWN else language.copy

    def copyable(self, target: str) -> bool:
        """Whether ``target``'s tangent may be an array (np.copy keeps it one): not a number, not a
        tuple or list (whose items the copy would stack)."""
        return self.facts.shape.get(target) != SCALAR and not isinstance(
            derivative_kind(self.facts.fact(ir.Var(target))), Sequence)

    def user_call(self, stmt: ir.Assign) -> None:
        """``y = helper(a, b)`` becomes ``y, t_y = t_helper.jvp(a, b, t_a, ...)``."""
        call = ir.call_of(stmt)
        kinds = tuple(map(self.facts.kind_of, call.args))
        if self.callee is None:
            raise TransformError(f"the call of {describe_callable(call.fn)} in forward mode",
                                 "helpers are differentiated only where the pipeline builds their tangent "
                                 "functions", filename=self.fn.filename, line=stmt.line)
        given = [self.tangent_of(a) for a in call.args]
        carries = tuple(t is not None for t in given)
        owner = self.callee(call.fn, kinds, carries)
        tangents = tuple(t for t in given if t is not None)
        jvp = ir.Call(ir.Part(owner, "jvp"), call.args + tangents)
        self.emit(ir.Unpack((stmt.target, self.tangent_name(stmt.target)), jvp, stmt.line))
        passed = {self.primal_of[t.name] for t in tangents if isinstance(t, ir.Var) and t.name in self.primal_of}
        if self.sharing.result_needs_copy(stmt.target, passed) and self.copyable(stmt.target):
            # the helper may hand back an argument's tangent (``return x + 0.0``): a store here would
            # change both, so the result's tangent gets memory of its own
            t_target = self.tangent_name(stmt.target)
            self.emit(ir.Assign(t_target, ir.Call(self.copy_for(stmt.target), (ir.Var(t_target),)), stmt.line))

    # -- tangents from rules -----------------------------------------------

    def rule_tangent(self, stmt: ir.Assign) -> ir.Expr:
        call = ir.call_of(stmt)
        if self.facts.sequence_operation(call):  # concatenation or repetition, decided at run time
            helper = rules.fact(call.fn, "sequence_helpers")[1]  # declared with joins_sequences in templates/
            return ir.Call(helper, tuple(map(self.tangent_or_zeros, call.args)) + call.args)
        explicit = rules.tangent_rule(call.fn)
        if explicit is not None:
            return self.result_shaped(self.from_template(explicit, stmt), stmt, explicit.elementwise)
        rule = rules.adjoint_rule(call.fn)
        if rule is None:
            raise TransformError(f"the call of {describe_callable(call.fn)} in forward mode",
                                 f"it has no tangent rule; add one with @s2s_ad.tangent({describe_callable(call.fn)})",
                                 filename=self.fn.filename, line=stmt.line)
        if rule.form == "linear":
            return self.same_call(call, rule)
        varied = [(name, op) for name, op in differentiable_operands(stmt) if self.tangent_of(op) is not None]
        if rule.form == "bilinear":
            terms = [self.same_call(call, rule, name) for name, _ in varied]
        elif rule.elementwise:
            terms = [self.elementwise_term(rule, stmt, name, op) for name, op in varied]
        else:
            raise TransformError(f"the call of {describe_callable(call.fn)} in forward mode",
                                 "its rule declares no tangent; add one with @s2s_ad.tangent",
                                 filename=self.fn.filename, line=stmt.line)
        total = terms[0]
        for term in terms[1:]:
            total = ir.Call(operator.add, (total, term))
        return self.result_shaped(total, stmt, rule.elementwise)

    def result_shaped(self, tangent: ir.Expr, stmt: ir.Assign, elementwise: bool) -> ir.Expr:
        """An elementwise tangent built only from inputs smaller than the result (``v + b``, only ``b``
        moving) is given the result's shape: ``np.sum`` of it must count every element."""
        varied = [op for _, op in differentiable_operands(stmt) if self.tangent_of(op) is not None]
        if elementwise and not any(self.facts.shape_of(op) == self.facts.shape.get(stmt.target) for op in varied):
            # a writable array of the result's shape: code transformed again may write into it
            return ir.Call(runtime.writable_copy, (tangent, ir.Var(stmt.target)))
        return tangent

    def same_call(self, call: ir.Call, rule: Rule, moving: Optional[str] = None) -> ir.Expr:
        """``call`` on tangents.  Linear (``moving`` None): every differentiable input
        becomes its tangent (zeros where it has none).  Bilinear: only ``moving`` does."""
        names = list(rule.inputs[:len(call.args)])
        differentiable = set(rule.differentiable_inputs())

        def replace(name: str, expr: ir.Expr) -> ir.Expr:
            if name in differentiable and (moving is None or name == moving):
                return self.tangent_or_zeros(expr)
            return expr

        args = tuple(replace(n, a) for n, a in zip(names, call.args))
        kwargs = tuple((k, replace(k, v)) for k, v in call.kwargs)
        return ir.Call(call.fn, args, kwargs)

    def elementwise_term(self, rule: Rule, stmt: ir.Assign, name: str, operand: ir.Expr) -> ir.Expr:
        """``d_<name>`` of an elementwise adjoint, with the operand's tangent as the seed."""
        call = ir.call_of(stmt)
        bound = bind_arguments(rule, call.args, call.kwargs)
        mapping = template_operands(rule, bound, is_default)
        mapping[rule.result] = ir.Var(stmt.target)
        seed = self.tangent_of(operand)
        if seed is None:  # (called only for the operands that have a tangent)
            raise AssertionError(f"line {stmt.line}: {name} of {describe_callable(call.fn)} has no tangent")
        mapping[rule.seeds[0]] = self.as_array(operand, seed)
        for local, tree in template_ir(rule):
            value = instantiate(tree, mapping)
            if local == "d_" + name:
                return value
            if not local.startswith("d_"):
                temp = ir.fresh_name(f"{local}_{stmt.target}", self.taken)
                self.emit(ir.Assign(temp, value, stmt.line))
                mapping[local] = ir.Var(temp)
        raise AssertionError(f"rule {rule.name} has no d_{name}")

    @staticmethod
    def as_array(operand: ir.Expr, tangent: ir.Expr) -> ir.Expr:
        """The tangent of an elementwise operation's operand as the array NumPy makes of the operand:
        a display's (``np.sin([a, x * a])``) is a display of its items' tangents, which a rule's
        arithmetic would take for a list (``-t_x`` of a list raises, ``2 * t_x`` repeats it)."""
        return ir.Call(language.asarray, (tangent,)) if isinstance(operand, ir.Display) else tangent

    def from_template(self, rule: Rule, stmt: ir.Assign) -> ir.Expr:
        call = ir.call_of(stmt)
        bound = bind_arguments(rule, call.args, call.kwargs)
        mapping = template_operands(rule, bound, is_default)
        mapping[rule.result] = ir.Var(stmt.target)
        for seed in rule.seeds:
            written = bound.get(seed[2:])  # (a display's tangent is its items': mapping holds its array)
            primal = written if isinstance(written, ir.Display) else mapping.get(seed[2:], ir.Const(None))
            tangent = self.tangent_of(primal)
            if tangent is not None and rule.elementwise:
                tangent = self.as_array(primal, tangent)
            mapping[seed] = tangent if tangent is not None else self.zero_of(primal)
        result = None
        for local, tree in template_ir(rule):
            value = fold_declared(_substitute_dropping_zeros(tree, mapping))
            if local == "t_" + rule.result:
                result = value
            elif _is_zero(value):
                mapping[local] = value  # a part that is zero: dropped from what uses it, never assigned
            else:
                temp = ir.fresh_name(f"{local}_{stmt.target}", self.taken)
                self.emit(ir.Assign(temp, self.spelled(value), stmt.line))
                mapping[local] = ir.Var(temp)
        if result is None or _is_zero(result):
            return self.zeros(ir.Var(stmt.target))
        return self.spelled(result)


def forward(fn: ir.Function, wrt: list[str], facts: Analysis, callee: Optional[TangentBuilder] = None) -> ir.Function:
    """Build the tangent function of ``fn`` (see the module docstring)."""
    return TangentSweep(fn, wrt, facts, callee).run()
