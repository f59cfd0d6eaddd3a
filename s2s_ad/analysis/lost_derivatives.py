"""Derivatives a rule would lose: the run-time checks that refuse a float where one would be lost.

Input: an ``ir.Function`` in SSA form and the names that vary with what is
differentiated (``Analysis.varied``), or, for a helper differentiated by all
its parameters, how to find what its own callees lose.  Output: the function
with a ``runtime.check_no_derivative`` before each call whose rule gives no
derivative in an input a varied value reaches (``guard_lost_derivatives``;
the facts change only in their counts of reads), the parameters of a helper
from which a float would reach such a call (``lost_derivative_parameters``),
and the check a caller puts before its call of that helper
(``lost_derivative_check``).  An integer argument (an axis, a count) passes
the check; only a derivative that would vanish without a word is refused.
"""
from __future__ import annotations

import dataclasses
from typing import Any, Callable, Optional

from ..core import ir, runtime
from ..rules import registry as rules
from ..core.errors import TransformError
from ..lowering.expressions import describe_callable, is_user_function
from ..frontend.parse import is_generated
from .activity import _flow_table, underived_operands, varied_names
from .facts import Analysis


def guard_lost_derivatives(fn: ir.Function, varied: set[str]) -> ir.Function:
    """``fn`` with a run-time check before each call whose rule gives no derivative in an input where
    the argument depends on what is differentiated (``np.gradient(f, h)`` by ``h``,
    ``np.pad(x, 1, constant_values=c)`` by ``c``): a float there raises ``TransformError`` naming the
    line, not a derivative silently lost; an integer (an axis, a count from an int argument) passes.
    ``fn`` itself where no call needs one (the common case), and for generated code differentiated
    again and the helpers of s2s_ad's template modules it calls: the user's statements were checked
    when it was generated, and what it pops from its tape (a loop's constant ``ord``) reads as varied
    there.  A user's file that declares rules is checked as any other (docs/rules.md puts rules next to
    the code that calls them: exempting such files lost every check in them); a gradient's marks for the parameters it was not taken by (``runtime.derivative_lost_by``)
    become the check there where forward mode over it moves them (``jvp`` of ``grad(f)`` by ``c``)."""
    users = not (is_generated(fn.filename) or rules.is_package_template_file(fn.filename))

    def guarded(body: list[ir.Stmt]) -> list[ir.Stmt]:
        """``body`` with its checks (``body`` itself where it needs none)."""
        out: list[ir.Stmt] = []
        changed = False
        for stmt in body:
            if (isinstance(stmt, ir.Effect) and isinstance(stmt.value, ir.Call)
                    and stmt.value.fn is runtime.derivative_lost_by
                    and set(ir.names_read(stmt.value.args[0])) & varied):
                out.append(ir.Effect(ir.Call(runtime.check_no_derivative, stmt.value.args), stmt.line))
                changed = True
                continue
            if users and isinstance(stmt, ir.Assign) and isinstance(stmt.value, ir.Call):
                for name, operand in underived_operands(stmt.value):
                    if set(ir.names_read(operand)) & varied:
                        out.append(ir.Effect(ir.Call(runtime.check_no_derivative, (
                            operand, ir.Const(describe_callable(stmt.value.fn)), ir.Const(name),
                            ir.Const(fn.filename), ir.Const(stmt.line))), stmt.line))
                        changed = True
            nested = ir.with_blocks(stmt, guarded)
            changed = changed or nested is not stmt
            out.append(nested)
        return out if changed else body

    body = guarded(fn.body)
    return fn if body is fn.body else dataclasses.replace(fn, body=body)


def guard_lost_derivatives_kept(fn: ir.Function, facts: Analysis) -> tuple[ir.Function, Analysis]:
    """``guard_lost_derivatives`` as a pass after the analysis: the guarded function, and its facts
    (the checks it adds and those it replaces change only the counts of reads)."""
    guarded = guard_lost_derivatives(fn, facts.varied)
    if guarded is fn:
        return fn, facts
    before = {s.sid: s for s in ir.walk(fn.body) if not ir.blocks(s)}
    after = {s.sid: s for s in ir.walk(guarded.body) if not ir.blocks(s)}
    return guarded, facts.with_checks_changed(dropped=[s for i, s in before.items() if i not in after],
                                              added=[s for i, s in after.items() if i not in before])


def lost_derivative_parameters(fn: ir.Function, kind_of: Callable[[ir.Expr], Any],
                               callee_lost: Callable[[Any, tuple], dict]) -> dict[int, tuple]:
    """For a helper differentiated by all its parameters (a split adjoint): the parameters (by
    position) from which a float would reach a call whose rule gives no derivative in that input,
    itself or in a helper it calls, with where: (function, input, file, line).  The caller checks
    its argument there where that argument depends on what it differentiates (``guard_call``);
    the helper cannot tell, and refusing every float would refuse ``np.gradient(u, dx)`` with a
    constant ``dx``.  A function taking containers (``vjp`` of it) has one parameter per leaf, in the
    order of the flat arguments its generated code takes, so the positions are those of the leaves."""
    table = _flow_table(fn)
    lost: dict[int, tuple] = {}
    for index, param in enumerate(fn.params):
        site = _first_lost_site(fn, varied_names(fn, [param], table), kind_of, callee_lost)
        if site is not None:
            lost[index] = site
    return lost


def _first_lost_site(fn: ir.Function, varied: set[str], kind_of: Callable[[ir.Expr], Any],
                     callee_lost: Callable[[Any, tuple], dict]) -> Optional[tuple]:
    for stmt in ir.walk(fn.body):
        if not (isinstance(stmt, ir.Assign) and isinstance(stmt.value, ir.Call)):
            continue
        call = stmt.value
        for name, operand in underived_operands(call):
            if set(ir.names_read(operand)) & varied:
                return describe_callable(call.fn), name, fn.filename, stmt.line
        moving = [i for i, arg in enumerate(call.args) if set(ir.names_read(arg)) & varied]
        if moving and is_user_function(call.fn) and rules.adjoint_rule(call.fn) is None:
            # a helper the reverse sweep built (a call of constants, np.triu_indices(3), is not one)
            try:
                inner = callee_lost(call.fn, tuple(map(kind_of, call.args)))
            except TransformError:  # not built by the reverse sweep (its value does not reach the result)
                continue
            for i in moving:
                if i in inner:
                    return inner[i]
    return None


def lost_derivative_check(arg: ir.Expr, site: tuple, line: Optional[int]) -> ir.Effect:
    """The run-time check, in the caller, of an argument a helper would lose the derivative of."""
    function, name, filename, at = site
    return ir.Effect(ir.Call(runtime.check_no_derivative, (
        arg, ir.Const(function), ir.Const(name), ir.Const(filename), ir.Const(at))), line)
