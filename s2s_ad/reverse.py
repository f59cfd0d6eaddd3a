"""Stage 4 (reverse mode): SSA function → adjoint function, in IR.

Input: an SSA ``ir.Function``, the SSA names of the ``wrt`` parameters, and
the ``Analysis`` of the function.  Output: an ``ir.Function`` in adjoint
form taking the primal parameters and the seed ``d_<result>``, whose body is
the forward sweep (the primal statements, unchanged) followed by the reverse
sweep, and which returns ``(result, gradient)`` where the gradient is one
adjoint or a tuple of them, in ``wrt`` order.

The reverse sweep walks the statements backwards and splices in each rule's
template.  Adjoints accumulate as the seeds describe (000): the first
contribution is an assignment, later ones add; a contribution that is a bare
adjoint passes straight through (no statement); zero only where no
contribution happened.  Broadcast contributions are reduced to their
input's shape only where the shape classes differ.
"""
from __future__ import annotations

import operator
from typing import Optional

import numpy as np

from . import ir, rules, runtime
from .analysis import SCALAR, Analysis, differentiable_operands
from .lower import template_ir


class ReverseSweep:
    def __init__(self, fn: ir.Function, wrt: list[str], facts: Analysis) -> None:
        self.fn = fn
        self.wrt = wrt
        self.facts = facts
        self.adjoint: dict[str, ir.Expr] = {}
        self.body: list[ir.Stmt] = []
        self.taken = {s.target for s in fn.body if isinstance(s, ir.Assign)} | set(fn.params)
        self.names: dict[str, str] = {}
        self.line: Optional[int] = None

    def adjoint_name(self, name: str) -> str:
        """``d_<name>``, unless the user's code already uses that name."""
        if name not in self.names:
            self.names[name] = self.fresh("d_" + name)
        return self.names[name]

    def fresh(self, base: str) -> str:
        name, n = base, 0
        while name in self.taken:
            n += 1
            name = f"{base}_{n}"
        self.taken.add(name)
        return name

    def emit(self, target: str, value: ir.Expr) -> None:
        self.body.append(ir.Assign(target, value, self.line))

    def run(self) -> ir.Function:
        result = self.fn.body[-1].value
        seed = self.adjoint_name(result.name if isinstance(result, ir.Var) else "out")
        if isinstance(result, ir.Var) and result.name in self.facts.active:
            self.adjoint[result.name] = ir.Var(seed)
        for stmt in reversed(self.fn.body[:-1]):
            if stmt.target in self.facts.active and stmt.target in self.adjoint:
                self.line = stmt.line
                self.propagate(stmt)
        self.line = None
        gradients = tuple(self.final_adjoint(p) for p in self.wrt)
        gradient = gradients[0] if len(gradients) == 1 else ir.Display("tuple", gradients)
        forward = [s for s in self.fn.body[:-1]]
        body = forward + self.body + [ir.Return(ir.Display("tuple", (result, gradient)))]
        return ir.Function("d_" + self.fn.name, self.fn.params + [seed], body, self.fn.filename,
                           self.fn.firstline, self.fn.docstring, dict(self.fn.constants))

    def propagate(self, stmt: ir.Assign) -> None:
        """Splice in the adjoint template of one primal statement."""
        call = stmt.value
        rule = rules.adjoint_rule(call.fn)
        needed = {name: operand for name, operand in differentiable_operands(stmt)
                  if set(ir.names_read(operand)) & self.facts.active}
        if not needed:
            return
        bound = rules.bind_arguments(rule, call.args, call.kwargs)
        mapping: dict[str, ir.Expr] = {
            name: ir.Const(value.value) if rules.is_default(value) else value for name, value in bound.items()
        }
        mapping[rule.result] = ir.Var(stmt.target)
        mapping[rule.seeds[0]] = self.adjoint[stmt.target]
        for name, tree in template_ir(rule):
            value = ir.substitute(tree, mapping)
            if name.startswith("d_") and name[2:] in rule.inputs:
                if name[2:] in needed:
                    self.distribute(value, needed[name[2:]], stmt, rule.elementwise)
                continue
            temp = self.fresh(f"{name}_{stmt.target}")
            self.emit(temp, value)
            mapping[name] = ir.Var(temp)

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
                self.emit(whole, contribution)
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
        return ir.Call(runtime.unbroadcast, (contribution, operand))

    def accumulate(self, name: str, contribution: ir.Expr) -> None:
        current = self.adjoint.get(name)
        target = self.adjoint_name(name)
        if current is None:
            if isinstance(contribution, ir.Var) and name not in self.wrt:
                self.adjoint[name] = contribution  # passes straight through
                return
            self.emit(target, contribution)
        else:
            self.emit(target, ir.Call(operator.add, (current, contribution)))
        self.adjoint[name] = ir.Var(target)

    def final_adjoint(self, param: str) -> ir.Expr:
        if param in self.adjoint:
            return self.adjoint[param]
        zero = ir.Const(0.0) if self.facts.shape.get(param) == SCALAR else ir.Call(runtime.zeros_like, (ir.Var(param),))
        self.emit(self.adjoint_name(param), zero)
        return ir.Var(self.adjoint_name(param))


def reverse(fn: ir.Function, wrt: list[str], facts: Analysis) -> ir.Function:
    """Build the adjoint of ``fn`` (see the module docstring)."""
    return ReverseSweep(fn, wrt, facts).run()
