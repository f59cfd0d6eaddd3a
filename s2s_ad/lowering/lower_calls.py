"""Calls of the user's functions while lowering (stage 2, lower): inlining.

Input: an ``Inline`` node of the converter (a call of a nested def or lambda,
of a def chosen on the path taken, or of the user's function given a
container) with its arguments.  Output: the callee's body lowered in place
into the current block (its statements through the driver,
``Lowerer.statement``) and the value of its result, with Python's scoping:
its parameters and the names it assigns are its own (a new ``Scope``,
replaced as one object and restored after the body); other names are read
from the enclosing function as they are at the call, or, for a function
defined elsewhere, from its own module.  A name that may hold several defs
(``lower_joins``) becomes an ``if`` on its tag, one branch per def, all
assigning one merged result.  Recursion is refused.
"""
from __future__ import annotations

import copy
import dataclasses
import operator
from collections import Counter
from typing import Any, Optional

import gast

from ..core import ir
from .desugar import desugar
from .expressions import Bound, Choice, Dispatch, Inline, Known, Nested, Once, Record
from .lower_containers import ContainerLowering
from .lower_joins import JoinLowering
from .lower_scan import names_read, stored_names
from .lower_ssa import SSABuilder
from .lower_state import LoweringState, Part, Scope
from ..frontend.parse import ParsedFunction
from ..frontend.shared_updates import body_with_stores, places_in


class CallLowering(Part):
    """Inlines the user's functions at their calls."""

    def __init__(self, state: LoweringState, ssa: SSABuilder, containers: ContainerLowering,
                 joins: JoinLowering) -> None:
        super().__init__(state)
        self.ssa = ssa
        self.containers = containers
        self.joins = joins
        # nested functions being inlined, by name, and functions defined elsewhere, by identity (an
        # overriding method calling the one it overrides, super().forward(x), has its name): to refuse recursion
        self.inlining: set[Any] = set()

    def inline(self, call: Inline, callee: Optional[ParsedFunction] = None) -> ir.Expr:
        """Lower a nested function's body in place of its call, with Python's scoping:
        its parameters and the names it assigns are its own; other names are read
        from the enclosing function as they are at the call.  For ``callee``, a function
        defined elsewhere (a method, a helper given a container), only its parameters are
        local, and other names are read from its own module."""
        if isinstance(call.function, Dispatch):
            return self.dispatch(call.function, call.args)
        callee = callee or call.function.callee
        node = call.function.node
        key = node.name if callee is None else callee.fn
        if key in self.inlining:
            if callee is not None:
                raise self.state.parsed.error(f"the recursive call of {node.name!r} with a container argument",
                                              "a function given a container is lowered in place; pass the arrays "
                                              "as separate arguments to recurse", node)
            raise self.state.parsed.error(f"the recursive nested function {node.name!r}",
                                          "define it at module level to recurse", node)
        # (a function defined elsewhere is called with every parameter bound by position, its keyword-only
        # ones after the others, defaults filled in: the converter binds them by its signature)
        params = [a.id for a in node.args.args + (node.args.kwonlyargs if callee is not None else [])]
        defaults = node.args.defaults if callee is None else []
        given = self._placed(call, params, len(params) - len(defaults))
        args = [self.passed(a) if isinstance(a, (Nested, Known, Bound)) else self.containers.settle(a)
                for a in given]
        args += self.defaults_of(call.function, params[len(args):], defaults[len(defaults) - len(params) + len(args):])
        body = copy.deepcopy(node.body)
        function = gast.FunctionDef(name=node.name, args=node.args, body=body, decorator_list=[], returns=None,
                                    type_comment=None)
        # an update of an argument shared with the caller, as the kinds proved (pipeline.lowered): a store
        site = self.state.site + ((self.state.parsed.filename, self.state.line, self.state.inlined_here),)
        self.state.inlined_here += 1
        function = body_with_stores(function, places_in(self.state.stores, (callee or self.state.parsed).filename,
                                                        site))
        own = stored_names(function) | set(params)
        desugar(function, own | set(self.scope.reads) | self.state.names.taken)
        if getattr(function, "exit_result", None):
            self.state.exit_results.add(function.exit_result)
        if callee is not None:
            inner_env = {}
        else:
            scope = dict(call.function.scope) if call.function.scope is not None else {} if call.function.closed \
                else self.scope.env
            inner_env = {k: v for k, v in scope.items() if k not in own}
        inner_env.update(zip(params, args))
        for param, arg in zip(params, args):
            if isinstance(arg, Record):  # the caller's container: writing into it would change the caller's
                self.containers.shared_records.setdefault(param, set()).add(f"an argument of {node.name}")
        self.state.computed.clear()  # the nested function's statements may write into arrays
        # its names, errors and snapshot are the callee's own while it is lowered
        outer = self.state.enter(Scope(callee or self.state.parsed, inner_env, Counter(names_read(function)),
                                       raised=self.scope.raised))  # a raise in it ends its body only
        self.inlining.add(key)
        line = self.state.line  # the caller's, for what its statement computes after the call
        around, counted = self.state.site, self.state.inlined_here
        self.state.site, self.state.inlined_here = site, 0
        try:
            for stmt in function.body[:-1]:
                self.state.line = stmt.lineno
                self.state.host.statement(stmt)
                if self.scope.raised:  # it always raises here: its result is never used (nor lowered)
                    break
            returned = function.body[-1]  # (after desugar.py the body ends with its return)
            # the return's statements, and its refusals, name its own line (of the callee's file, for a
            # ``callee`` defined elsewhere, as its other statements do)
            self.state.line = getattr(returned, "lineno", None) or self.state.line
            made = self.scope.env.get(returned.value.id) if isinstance(returned.value, gast.Name) else None
            if isinstance(made, Dispatch):
                raise self.state.parsed.error(f"the function {node.name!r} returns", "it returns a function on "
                                              "some paths only, or different functions on different paths; "
                                              "return one function on every path and choose inside it", returned)
            if self.scope.raised:
                result = ir.Const(0.0)
            elif isinstance(made, (Nested, Known, Bound)):  # a closure: the names it reads kept as they are now
                result = self.passed(made)
            else:
                converted = self.state.converter.convert(returned.value)
                if isinstance(converted, Bound):  # return functools.partial(scale, c=c)
                    result = self.passed(Bound(converted.function, tuple(map(self.computed_now, converted.args)),
                                               tuple((k, self.computed_now(v)) for k, v in converted.kwargs)))
                else:
                    result = self.containers.settle(converted)
        finally:
            self.state.line = line
            self.state.site, self.state.inlined_here = around, counted
            self.inlining.discard(key)
            self.state.leave(outer)
            if callee is not None:
                self.state.parsed.resolver.snapshot.include(callee.resolver.snapshot)
            self.state.computed.clear()
        return result

    def dispatch(self, dispatch: Dispatch, call_args: tuple) -> ir.Expr:
        """Call the def a name holds on the path taken: an if on its tag per def it may hold,
        each branch inlining that def, all assigning one merged result."""
        tags = sorted(dispatch.tags)
        name = self.joins.defs[tags[0]].node.name
        if dispatch.missing:
            raise self.state.refusal(f"the call of the nested function {name!r}", dispatch.missing)
        args = tuple(self.ssa.flatten(a) for a in call_args)
        if len(tags) == 1:
            return self.inline(Inline(self.joins.defs[tags[0]], args))
        merged = self.state.names.fresh(f"{name}_result")

        def branch(k: int) -> list[ir.Stmt]:
            """The block choosing among ``tags[k:]`` (the last needs no test)."""
            if k == len(tags) - 1:
                return self.only(tags[k], args, merged)
            with self.state.new_block() as block:
                test = self.ssa.flatten(ir.Call(operator.eq, (dispatch.var, ir.Const(tags[k]))))
                block.append(ir.If(test, self.only(tags[k], args, merged), branch(k + 1), self.state.line))
            return block

        self.state.block.extend(branch(0))
        return ir.Var(merged)

    def only(self, tag: int, args: tuple, merged: str) -> list[ir.Stmt]:
        """A block inlining the def ``tag`` and assigning its result to ``merged``."""
        with self.state.new_block() as block:
            value = self.inline(Inline(self.joins.defs[tag], args))
            if isinstance(value, ir.Display):
                value = self.ssa.materialise(value, "items")
            block.append(ir.Assign(merged, value, self.state.line, merge=True))
        return block

    def _placed(self, call: Inline, params: list, required: int) -> list:
        """The arguments of ``call`` by position, its keyword arguments put in their parameters' places,
        up to the last one given; a parameter skipped on the way gets its default (an ``Inline``)."""
        node = call.function.node
        by_name = dict(call.kwargs)
        for name in by_name:
            if name not in params:
                raise self.state.parsed.error(f"the call of {node.name!r}", f"it has no parameter {name!r}", node)
            if params.index(name) < len(call.args):
                raise self.state.parsed.error(f"the call of {node.name!r}", f"{name!r} is given twice", node)
        last = max([params.index(name) + 1 for name in by_name], default=len(call.args))
        placed = list(call.args)
        for position in range(len(call.args), last):
            name = params[position]
            if name in by_name:
                placed.append(by_name[name])
            elif position >= required:  # a default, made as the ones after the last argument are
                default = node.args.defaults[position - required]
                placed += self.defaults_of(call.function, [name], [default])
            else:
                raise self.state.parsed.error(f"the call of {node.name!r}", f"{name!r} is not given", node)
        if not required <= len(placed) <= len(params):
            raise self.state.parsed.error(f"the call of {node.name!r}", f"it takes {len(params)} arguments", node)
        return placed

    def defaults_of(self, function: Nested, params: list, defaults: list) -> list:
        """The values of the defaults for ``params``: a constant, or the name sugar.py bound a lambda's
        default to where the lambda was made (read in the scope the function was made or passed in)."""
        scope = dict(function.scope) if function.scope is not None else self.scope.env
        made = dict(function.defaults or ())
        values = []
        for param, default in zip(params, defaults):
            if isinstance(default, gast.Constant):
                values.append(ir.Const(default.value))
            elif isinstance(default, gast.Name) and default.id in made:
                values.append(made[default.id])
            elif isinstance(default, gast.Name) and default.id in scope:
                values.append(scope[default.id])
            else:
                raise self.state.parsed.error(f"the default value of {param!r} in {function.node.name!r}",
                                              "it was computed on another path (a lambda made in a branch): pass "
                                              "the argument, or make the lambda once, before the branch", default)
        return values

    def passed(self, function: Any) -> Any:
        """A function passed as an argument: a nested def or lambda keeps the names where it is
        passed (the callee cannot rebind them), not those of the callee it is called in."""
        if isinstance(function, Nested) and not function.closed and function.scope is None:
            return dataclasses.replace(function, scope=tuple(self.scope.env.items()))
        if isinstance(function, Bound):
            return Bound(self.passed(function.function), function.args, function.kwargs)
        return function

    def made_function(self, call: Inline) -> Any:
        """``act = make_act(0.1)``: the factory lowered in place (its arguments computed first), giving
        the function it returns with the names it reads as they were when it returned."""
        args = tuple(self.computed_now(a) for a in call.args)
        made = self.inline(Inline(call.function, args))
        if not isinstance(made, (Nested, Known, Bound)):
            raise self.state.refusal(f"the result of {call.function.node.name!r}", "it returns a function on "
                                     "some paths only; return a function on every path")
        return made

    def computed_now(self, value: Any) -> Any:
        """An argument held for a later call (of a closure, a partial) as an atom computed now, so that
        a write into an array between makes no difference, as in Python."""
        return self.ssa.flatten(value) if isinstance(value, (ir.Call, Choice, Once)) else value
