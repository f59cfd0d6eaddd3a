"""Activity: which values depend on what is differentiated, and which of those reach the result.

Input: an ``ir.Function`` in SSA form and the parameters to differentiate
(``wrt``).  Output: the names ``varied_names`` finds (depending on a ``wrt``
parameter: forward mode follows these) and those ``activity`` finds (varied
*and* reaching the returned value: only these get adjoint code), both read off
one flow table: per statement, the name it sets and the names whose derivative
flows into it (a rule's differentiable operands: ``differentiable_operands``).
A call with no rule that only an ``assert`` tests, and a value the result
provably does not depend on (``fn.derivative_free``), carry no derivative.
``underived_operands`` names the operands a rule gives no derivative for
(lost_derivatives.py checks them).
"""
from __future__ import annotations

import random
from typing import Iterable, Optional, Any, Union

from ..core import ir, language, runtime
from ..rules import registry as rules
from ..rules.rule import bind_arguments, is_default
from ..lowering.expressions import missing_rule


def differentiable_operands(stmt: ir.Assign) -> list[tuple[str, ir.Expr]]:
    """The (rule input, operand) pairs through which derivatives flow."""
    call = stmt.value
    if not isinstance(call, ir.Call) or rules.is_nondifferentiable(call.fn):
        return []
    rule = rules.adjoint_rule(call.fn) or rules.tangent_rule(call.fn)
    if rule is None:  # the user's own function: every argument may carry a derivative
        return [(str(i), arg) for i, arg in enumerate(call.args)]
    bound = bind_arguments(rule, call.args, call.kwargs)
    return [(name, bound[name]) for name in rule.differentiable_inputs() if not is_default(bound[name])]


def underived_operands(call: ir.Call) -> list[tuple[str, ir.Expr]]:
    """The (rule input, operand) pairs of ``call`` whose derivative its rule does not give and does not
    declare zero (``zero_derivative=``, or read for the shape only: ``shape_only=``): a varied operand
    there would lose its derivative without a word."""
    if rules.is_nondifferentiable(call.fn):
        return []
    rule = rules.adjoint_rule(call.fn) or rules.tangent_rule(call.fn)
    if rule is None or not rules.is_package_template_file(rule.filename):
        # A user's own rule says what it means: an input with no d_ assignment gets no gradient
        # (zero), as docs/api.md promises; only s2s_ad's built-in rules are held to giving every one.
        return []
    shape_only = rules.fact(call.fn, "shape_only")
    exempt = set(rules.fact(call.fn, "zero_derivative", ())) | {
        rule.inputs[i] for i in ((shape_only,) if isinstance(shape_only, int) else shape_only or ())}
    differentiable = set(rule.differentiable_inputs())
    bound = bind_arguments(rule, call.args, call.kwargs)
    return [(name, value) for name, value in bound.items()
            if name not in differentiable and name not in exempt and not is_default(value)]


def _reads(exprs: Iterable[ir.Expr]) -> set[str]:
    return {name for e in exprs for name in ir.names_read(e)}


def _assignments(fn: ir.Function) -> list[Union[ir.Assign, ir.Store]]:
    """Statements that give a name a value: assignments, and stores (which change an array)."""
    return [s for s in ir.walk(fn.body) if isinstance(s, (ir.Assign, ir.Store))]


def _flows(stmt: Union[ir.Assign, ir.Store]) -> set[str]:
    """Names whose derivative flows into the value the statement sets."""
    if isinstance(stmt, ir.Store):
        return _reads([stmt.value])
    if isinstance(stmt.value, ir.Call):
        return _reads(e for _, e in differentiable_operands(stmt))
    return _reads([stmt.value])


def _target(stmt: Union[ir.Assign, ir.Store]) -> str:
    return stmt.array if isinstance(stmt, ir.Store) else stmt.target


def _flow_table(fn: ir.Function) -> list[tuple[str, set[str]]]:
    """(the name a statement sets, the names whose derivative flows into it), per statement, in order.
    A call with no rule whose truth value only an assertion tests (``assert np.allclose(y, 2 * x)``)
    carries no derivative anywhere: nothing flows into it, and it runs as a constant; so does a value
    the result does not depend on (``fn.derivative_free``, shift_invariance.py)."""
    constant = _checked_only_calls(fn) | fn.derivative_free
    return [(_target(s), set() if _target(s) in constant else _flows(s)) for s in _assignments(fn)]


def _checked_only_calls(fn: ir.Function) -> set[str]:
    """The values of calls with no rule that only an ``assert`` reads, as its test."""
    checked = _read_only_by_assertions(fn)
    if not checked:
        return checked
    return {s.target for s in ir.walk(fn.body) if isinstance(s, ir.Assign) and s.target in checked
            and isinstance(s.value, ir.Call) and missing_rule(s.value.fn) is not None
            and not private_draw(s.value.fn)}


def varied_names(fn: ir.Function, wrt: Iterable[str], table: Optional[list] = None) -> set[str]:
    """Values that depend on ``wrt``: those reachable from it along the flow table's edges
    (one visit per statement, however long a chain of loop-carried copies is)."""
    table = _flow_table(fn) if table is None else table
    readers: dict[str, list[str]] = {}
    for target, flows in table:
        for name in flows:
            readers.setdefault(name, []).append(target)
    return _reachable(set(wrt), readers)


def activity(fn: ir.Function, wrt: Iterable[str], table: Optional[list] = None,
             varied: Optional[set[str]] = None) -> set[str]:
    """Values that depend on ``wrt`` and reach the returned value."""
    table = _flow_table(fn) if table is None else table
    varied = varied_names(fn, wrt, table) if varied is None else varied
    sources: dict[str, list[str]] = {}
    for target, flows in table:
        sources.setdefault(target, []).extend(flows)
    useful = _reachable(set(ir.names_read(ir.returned(fn))), sources)
    return varied & useful


def _reachable(start: set[str], edges: dict[str, list[str]]) -> set[str]:
    """``start`` and every name reachable from it along ``edges``."""
    seen, stack = set(start), list(start)
    while stack:
        for successor in edges.get(stack.pop(), ()):
            if successor not in seen:
                seen.add(successor)
                stack.append(successor)
    return seen


def _read_only_by_assertions(fn: ir.Function) -> set[str]:
    """The names whose every reader is an ``assert`` (``runtime.check_assertion``) as its test."""
    readers: dict[str, set[bool]] = {}
    for stmt in ir.walk(fn.body):
        call = stmt.value if isinstance(stmt, ir.Effect) else None
        checked = call.args[0].name if isinstance(call, ir.Call) and call.fn is runtime.check_assertion \
            and isinstance(call.args[0], ir.Var) else None
        for expr in ir.exprs_of(stmt):
            for name in ir.names_read(expr):
                readers.setdefault(name, set()).add(name == checked and expr is call)
    return {name for name, tests in readers.items() if tests == {True}}


def private_draw(fn: Any) -> bool:
    """A draw from a generator object other than the global ones (``np.random.*``, ``random.*``),
    held as a bound method (``RNG.normal``), or made through ``runtime.draw`` (``rng.normal()``)."""
    if fn is runtime.draw:
        return True
    owner = getattr(fn, "__self__", None)
    if isinstance(owner, random.Random):
        return owner is not random._inst
    if language.is_generator_object(owner):
        return not language.is_global_generator(owner)
    return False
