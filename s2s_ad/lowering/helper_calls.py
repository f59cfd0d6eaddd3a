"""Calls of the user's own functions, bound or inlined: the calls that follow a function of the user's.

A part of ``calls.CallConverter`` (``conversion.ConverterPart``).  Input: the function called, as
resolved while lowering, and the call's converted arguments.  Output: an ``ir.Call`` of the user's
function with its arguments bound in parameter order and defaults filled in (``bind_user_call``,
``call_value``, which checks the callee first); an ``Inline`` where the call is lowered in place: a
function passed functions as arguments (``passes_functions``), a factory returning a closure, a
lambda or a partial (``factory``, which ``returns_function`` recognises from its source); the call
of a ``functools.partial`` as the call it makes (``unpartial``); a ``Bound`` for a partial made in
the body (``partial``).  What cannot be followed is refused with a located ``TransformError``.
"""
from __future__ import annotations

import functools
import inspect
import types
from typing import Any

import gast
import numpy as np
from ..core import ir, language
from ..core.errors import TransformError
from ..frontend.callables import check_callee, describe_callable, is_user_function
from ..frontend.conversion import (Bound, Choice, ConverterPart, Dispatch, Inline, Known, Nested, Once, Record,
                                   is_plain_constant)
from ..frontend.parse import parse_function


class HelperCalls(ConverterPart):
    """Binds and inlines calls of the user's functions."""

    def unpartial(self, partial: functools.partial, args: list, kwargs: tuple, node: Any) -> tuple[Any, list, tuple]:
        """A call of ``functools.partial(fn, *fixed, **named)`` as the call of ``fn`` it makes: the
        fixed arguments (numbers, strings, arrays: constants) first, the named ones unless given."""
        fixed = list(partial.args) + list(partial.keywords.values())
        if not all(is_plain_constant(v) or language.is_array_value(v) for v in fixed):
            raise self.error(f"the call of a functools.partial of {describe_callable(partial.func)}",
                             "only numbers, strings and arrays can be fixed by a partial that is called here; "
                             "pass the others as arguments", node)
        given = {name for name, _ in kwargs}
        named = tuple((name, ir.Const(value)) for name, value in partial.keywords.items() if name not in given)
        return partial.func, [ir.Const(v) for v in partial.args] + list(args), named + tuple(kwargs)

    def partial(self, args: list, kwargs: tuple, node: Any) -> Bound:
        """``functools.partial(fn, *fixed, **named)`` made in the body: a ``Bound`` of the function (one of
        yours, a NumPy function, a nested def or lambda, another partial) and the arguments it fixes."""
        function = args[0] if args else None
        if not isinstance(function, (Known, Nested, Bound)):
            raise self.error("this functools.partial", "its first argument must be a function named here "
                             "(np.sin, a function of yours, a nested def or lambda, another partial)", node)
        fixed, named = tuple(args[1:]), tuple(kwargs)
        if isinstance(function, Bound):  # partial(partial(f, a), b)
            given = {k for k, _ in named}
            fixed = function.args + fixed
            named = tuple((k, v) for k, v in function.kwargs if k not in given) + named
            function = function.function
        return Bound(function, fixed, named)

    def factory(self, fn: Any, args: list, kwargs: tuple, node: Any) -> Inline:
        """``act = make_act(0.1)``: a call of your function that returns a function it defines (a closure
        over its parameters and names), lowered in place where it is bound to a name; the name then holds
        that function, with the names it reads as they were when the factory returned."""
        if fn.__closure__ or fn.__globals__ is not self.resolver.globals:
            raise self.error(f"the function returned by {describe_callable(fn)}", "only module-level functions of "
                             "the differentiated function's module (or functions defined in it) can return "
                             "functions that are then called; define the factory there, or write the function it "
                             "returns as a def of that module and pass its parameters", node)
        parsed = parse_function(fn)
        if self.resolver.record:
            self.resolver.snapshot.record_code(fn)  # (its code makes the closure: changed later, the code is old)
            self.resolver.snapshot.include(parsed.resolver.snapshot)
        bound = self.bind_user_call(fn, args, kwargs, node)
        return Inline(Nested(parsed.node, closed=True), bound, factory=True)

    def passes_functions(self, fn: Any, args: list, kwargs: tuple, node: Any) -> Inline:
        """``apply(np.sin, x)``: a call of your own function that is passed functions is inlined,
        each function parameter then calling the function passed."""
        where = ("module-level functions of the differentiated function's module, and functions defined "
                 "in it, can take functions (or lambdas) as arguments")
        if not is_user_function(fn) or fn.__closure__ or fn.__globals__ is not self.resolver.globals:
            name = describe_callable(fn) if fn is not None else "this function"
            raise self.error(f"a function passed as an argument to {name}", f"only {where}; for others, call "
                             "the function yourself and pass its result", node)
        parsed = parse_function(fn)
        bound = self.bind_user_call(fn, args, kwargs, node)
        return Inline(Nested(parsed.node, closed=True), bound)

    def call_value(self, fn: Any, args: list, kwargs: tuple, node: Any) -> Any:
        """A call of a known function (a method, a function an object holds) with converted arguments."""
        if self.check_calls:
            check_callee(fn, node, tuple(args), kwargs, self.error, self.resolver.snapshot)
            if is_user_function(fn):
                return ir.Call(fn, self.bind_user_call(fn, args, kwargs, node))
        return ir.Call(fn, tuple(args), kwargs)

    def bind_user_call(self, fn: Any, args: list, kwargs: tuple, node: Any) -> tuple:
        """Arguments of a call to the user's own function, in parameter order, defaults filled in."""
        try:
            bound = inspect.signature(fn).bind(*args, **dict(kwargs))
        except TypeError as exc:
            raise self.error(f"the call of {describe_callable(fn)}", str(exc), node) from None
        if self.resolver.record and (getattr(fn, "__defaults__", None) or getattr(fn, "__kwdefaults__", None)):
            self.resolver.snapshot.record_defaults(fn)  # the code holds them: changed later, it is old
        bound.apply_defaults()
        values = []
        for name, value in bound.arguments.items():
            if isinstance(value, Dispatch):
                raise self.error(f"passing a nested function as {name!r} to {describe_callable(fn)}",
                                 "it is defined differently on different paths; pass a function defined once, or "
                                 "call it here and pass its result", node)
            if not isinstance(value, (ir.Var, ir.Const, ir.Call, ir.Slice, ir.Display, Choice, Once, Nested, Known,
                                      Bound, Inline, Record)):
                if is_function_default(value):  # def loss(w, x, act=np.tanh): the function, static
                    values.append(Known(value))
                    continue
                if not is_plain_constant(value):
                    raise self.error(f"the default value of {name!r} in {describe_callable(fn)}",
                                     "only numbers, strings, None and tuples of them can be defaults", node)
                value = ir.Const(value)
            values.append(value)
        return tuple(values)


def is_function_default(value: Any) -> bool:
    """A default that is a function (``act=np.tanh``, ``act=relu``): called where the parameter is, as a
    function passed (a class, a method or a callable object is not)."""
    return callable(value) and not isinstance(value, type) and (
        isinstance(value, (types.FunctionType, types.BuiltinFunctionType, np.ufunc)) or is_user_function(value))


def leaves_a_function_default(fn: Any, args: list, kwargs: tuple) -> bool:
    """Whether calling the user's ``fn`` with ``args`` and ``kwargs`` leaves out a parameter whose
    default is a function (``loss(w, x)`` of ``def loss(w, x, act=np.tanh)``)."""
    if not getattr(fn, "__defaults__", None) and not getattr(fn, "__kwdefaults__", None):
        return False
    try:
        bound = inspect.signature(fn).bind(*args, **dict(kwargs))
    except (TypeError, ValueError):
        return False  # (the call's own binding says why)
    return any(p.name not in bound.arguments and p.default is not inspect.Parameter.empty
               and is_function_default(p.default) for p in inspect.signature(fn).parameters.values())


def returns_function(fn: Any) -> bool:
    """Whether ``fn``, the user's function, returns a function it defines (``def act(z): ...; return act``,
    ``return lambda z: ...``, ``return functools.partial(...)``): read off its source, never run."""
    code = getattr(fn, "__code__", None)
    if not is_user_function(fn) or code is None or not any(isinstance(c, types.CodeType) for c in code.co_consts) \
            and "partial" not in code.co_names:
        return False
    try:
        node = parse_function(fn).node
    except TransformError:
        return False
    made: set[str] = set()
    returned: list[Any] = []

    def walk(statements: list) -> None:
        for stmt in statements:
            if isinstance(stmt, gast.FunctionDef):
                made.add(stmt.name)
                continue
            if isinstance(stmt, gast.Assign) and isinstance(stmt.value, (gast.Lambda, gast.Call)) and (
                    isinstance(stmt.value, gast.Lambda) or _names_partial(stmt.value.func)):
                made.update(t.id for t in stmt.targets if isinstance(t, gast.Name))
            if isinstance(stmt, gast.Return) and stmt.value is not None:
                returned.append(stmt.value)
            for field in ("body", "orelse"):
                inner = getattr(stmt, field, None)
                if isinstance(inner, list):
                    walk(inner)
    walk(node.body)
    return any(isinstance(v, gast.Lambda) or (isinstance(v, gast.Name) and v.id in made)
               or (isinstance(v, gast.Call) and _names_partial(v.func)) for v in returned)


def _names_partial(func: Any) -> bool:
    return (isinstance(func, gast.Name) and func.id == "partial") or (
        isinstance(func, gast.Attribute) and func.attr == "partial")
