"""Calls in user code (and in rule templates) → IR calls, or the pending forms that stand for them.

A part of ``expressions.ExpressionConverter`` (``conversion.ConverterPart``).
Input: a gast ``Call`` and the converter's scope.  Output: an ``ir.Call`` of the
callable itself (a function resolved while lowering, a method of an array as
its function, a builtin as its declared NumPy spelling), its arguments
converted and, for the user's own functions, bound in parameter order with
defaults filled in; or a constant (a string method of a specialised string, a
container's length); or a ``Record`` (a dict, dataclass or namedtuple made in
the body, a container's method such as ``.items()``, an object of the user's
plain class made in the body, read by ``user_classes``); or an ``Inline`` (a call
of a nested function, or of one passed functions as arguments, or of a factory: a
function of the user's that returns a closure, a lambda or a partial, which the name
it is bound to then holds); or a ``Bound`` (``functools.partial`` made in the body).  A call that
cannot be differentiated as written is refused here with a located
``TransformError`` (``callables.check_callee``).  ``isinstance`` of a
structure known while lowering is a constant; an operator with an object of
the user's class as an operand is a call of its method (``operator_method``);
``super().method(x)`` is the method the object's MRO finds after the class of
the method calling it; a method of what a call of the user's method gives back
waits for that call to be lowered in place (``MethodCall``, ``maybe_object``).
"""
from __future__ import annotations

import dataclasses
import functools
import inspect
import operator
import types
from dataclasses import dataclass
from typing import Any, Callable, Optional, Union, cast

import gast
from ..core import containers, ir, language, runtime
from ..core.errors import TransformError
from ..rules import registry as rules
from ..frontend.callables import (DISTRIBUTION_METHODS, check_callee, describe_callable, is_user_function,
                                  refuse_out, reports)
from ..frontend.conversion import (Bound, Choice, Converter, ConverterPart, Dispatch, Inline, Known, MethodCall, Nested,
    Once, Pending, Record, is_plain_constant)
from ..core.draws import DRAW_METHODS, seeds
from ..frontend.parse import parse_function, transparent
from ..frontend.static_names import StaticNames
from . import sorting
from .protocols import ContainerProtocols
from ..frontend.user_classes import Parameter, is_plain_class, made_by_dataclass, operator_methods, record_layout

_DICT_METHODS = ("items", "keys", "values", "get")
# Methods of a constant string computed while lowering (pure, and their results are constants too).
_STRING_METHODS = frozenset({"lower", "upper", "casefold", "strip", "lstrip", "rstrip", "split", "rsplit",
                             "startswith", "endswith", "replace", "removeprefix", "removesuffix"})


class CallConverter(ConverterPart):
    """Converts calls; names and attributes it resolves through ``statics``."""

    def __init__(self, host: Converter, statics: StaticNames) -> None:
        super().__init__(host)
        self.statics = statics
        self.protocols = ContainerProtocols(host, statics)

    def call(self, node: gast.Call) -> Union[ir.Expr, Pending]:
        """A call as written: of a nested function (inlined), a function passed in, a global or a
        module-level table's function, a method (of an array, a container, an object of the user's),
        a class making a container, a builtin declared variadic or respelled."""
        known = self._isinstance(node)
        if known is not None:
            return known
        args = [self._argument(a) for a in node.args]
        kwargs = tuple((k.arg, self._argument(k.value)) for k in node.keywords)
        if any(k.arg is None for k in node.keywords):
            raise self.error("**kwargs in a call", "pass keyword arguments one by one", node)
        callee = self.local(node.func.id) if isinstance(node.func, gast.Name) else None
        if isinstance(callee, Bound):  # g = functools.partial(scale, c=3.0); g(x): scale(x, c=3.0)
            given = {k for k, _ in kwargs}
            args = list(callee.args) + args
            kwargs = tuple((k, v) for k, v in callee.kwargs if k not in given) + kwargs
            callee = callee.function
        if isinstance(callee, (Nested, Dispatch)):
            if kwargs:
                raise self.error(f"keyword arguments to the nested function {node.func.id!r}", "pass them by "
                                 "position", node)
            return Inline(callee, tuple(args))
        if isinstance(callee, Record):
            return self.record_method(callee, "__call__", args, kwargs, node)  # self(x)
        if isinstance(node.func, gast.Attribute) and self._is_super(node.func.value):
            return self._super_method(node.func, args, kwargs, node)
        own_class = self._class_of(node.func)
        if own_class is not None:  # type(self)(w), self.__class__(w): the object's class, known now
            found, fn = True, own_class
        elif isinstance(callee, (Known, ir.Const)) and callable(callee.value):  # a function (or type) passed in
            found, fn = True, callee.value
        else:
            found, fn = self.statics.callee(node.func)
        if found and self.check_calls and inspect.ismethod(fn) and is_plain_class(fn.__self__) \
                and isinstance(node.func, gast.Attribute):  # Model.make(w): a classmethod of your class
            called = self._class_method(fn.__self__, node.func.attr, args, kwargs, node)
            if called is not None:
                return called
        while found and isinstance(fn, functools.partial):  # SCALE3 = functools.partial(scaled, c=3.0)
            fn, args, kwargs = self._unpartial(fn, args, kwargs, node)
        if found and fn is functools.partial and self.check_calls:  # made here: a function value (static)
            return self._partial(args, kwargs, node)
        if found and self.check_calls and returns_function(fn):  # act = make_act(0.1): a closure
            return self._factory(fn, args, kwargs, node)
        if found and fn is sorted and self.check_calls and len(args) == 1:
            sorted_now = self._sorted(args[0], kwargs, node)  # sorted(d.items(), key=lambda kv: kv[0])
            if sorted_now is not None:
                return sorted_now
        values = args + [v for _, v in kwargs]
        if any(isinstance(a, (Nested, Known, Bound)) for a in values) or (found and is_user_function(fn) and any(
                isinstance(a, ir.Const) and isinstance(a.value, type) for a in values)):  # apply(float, x)
            return self._passes_functions(fn if found else None, args, kwargs, node)
        if not found and isinstance(node.func, gast.Attribute) and rules.method_function(node.func.attr) is None \
                and not containers.user_object(self.statics.resolve(node.func.value)):
            fn = self.statics.resolve(node.func)  # a method of a module-level object: settings.factor(2)
            found = callable(fn)
        if not found:
            owner = self.convert(node.func.value) if isinstance(node.func, gast.Attribute) else None
            if isinstance(owner, Record):
                return self.record_method(owner, node.func.attr, args, kwargs, node)
            if isinstance(owner, ir.Const) and is_plain_class(owner.value) and self.check_calls:
                called = self._class_method(owner.value, node.func.attr, args, kwargs, node)  # cls.make(w)
                if called is not None:
                    return called
            if isinstance(owner, ir.Call) and maybe_object(owner) and rules.method_function(node.func.attr) is None:
                return ir.Call(MethodCall(node.func.attr), (owner, *args), kwargs)  # Model(w).scaled(2.0).loss(x)
            if isinstance(owner, ir.Const) and type(owner.value) is str and node.func.attr in _STRING_METHODS \
                    and not kwargs and all(isinstance(a, ir.Const) for a in args):
                # a string argument the code is specialised on: kind.lower(), ops.split(",")
                try:
                    return ir.Const(getattr(owner.value, node.func.attr)(*(a.value for a in args)))
                except (TypeError, ValueError) as exc:
                    raise self.error(f"the call of str.{node.func.attr}", str(exc), node) from None
            if isinstance(owner, ir.Var):
                self.host.refuse_opaque(owner, f"the method .{node.func.attr}()", node)
            if isinstance(owner, ir.Const) and type(owner.value) is str and node.func.attr == "format":
                # "{:.2f}".format(v): a string made as Python makes it, which carries no derivative
                return ir.Call(runtime.format_method, (owner, *args), kwargs)
            fn, args = self._method(node, args)
        fn = transparent(fn)  # functools.cache(f) calls f
        made = self._construct(fn, args, kwargs, node)
        if made is not None:
            return made
        if self.check_calls and not kwargs and len(args) != 2 and rules.fact(fn, "variadic") is not None:
            return self._variadic(fn, args, node)
        if rules.fact(fn, "respelled") is not None:
            args = self._respelled(rules.fact(fn, "respelled"), args)
        if fn is reversed and len(args) == 1 and not kwargs:  # enumerate(reversed(x)): x[::-1]
            return ir.Call(operator.getitem, (args[0], ir.Slice(None, None, ir.Const(-1))))
        if self.check_calls:
            check_callee(fn, node, tuple(args), kwargs, self.error, self.resolver.snapshot)
            if is_user_function(fn):
                return ir.Call(fn, self._bind_user_call(fn, args, kwargs, node))
        return ir.Call(fn, tuple(args), kwargs)

    def _isinstance(self, node: gast.Call) -> Optional[ir.Const]:
        """``isinstance(ys, list)`` of a container whose structure is known while lowering (a list,
        tuple, dict, record or object made in the body or passed in; a string or None): decided
        now.  None for other calls; an isinstance of an array or number runs as written."""
        if not (isinstance(node.func, gast.Name) and self.local(node.func.id) is None and len(node.args) == 2
                and not node.keywords and self.statics.resolve(node.func) is isinstance):
            return None
        found, classes = self.statics.static(node.args[1]) if isinstance(node.args[1], (gast.Name, gast.Attribute)) \
            else (False, None)
        if isinstance(node.args[1], gast.Tuple):
            parts = [self.statics.static(e) if isinstance(e, (gast.Name, gast.Attribute)) else (False, None)
                     for e in node.args[1].elts]
            found, classes = all(f for f, _ in parts), tuple(c for _, c in parts)
        if not found or not (isinstance(classes, type) or (isinstance(classes, tuple) and all(
                isinstance(c, type) for c in classes))):
            return None
        if isinstance(node.args[0], gast.Name) and isinstance(self.local(node.args[0].id), (Nested, Known, Dispatch)):
            return None
        value = self.convert(node.args[0])
        if isinstance(value, Record):
            cls = value.cls
        elif isinstance(value, ir.Display):
            cls = list if value.kind == "list" else tuple
        elif isinstance(value, ir.Const) and isinstance(value.value, (str, type(None), bool)):
            cls = type(value.value)
        else:
            return None
        return ir.Const(issubclass(cls, classes))

    def effect(self, node: gast.Call) -> ir.Call:
        """A call made for its effect (``print(...)``, ``logging.info(...)``, ``warnings.warn(...)``):
        it runs where the primal computation runs and carries no derivative.  Any other call
        made for its effect is refused: it may change what the function computes.  ``np.random.seed(0)``
        and ``random.seed(0)`` (of the global generators) run there too, in order with the draws: what
        draws after them sees the numbers NumPy's own run would (``draws.seeds``)."""
        fn = self.statics.resolve(node.func)
        refuse_out(fn, node, self.error)  # np.multiply(a, b, out=c): what to write instead
        if not reports(fn) and not seeds(fn):
            name = (f"{node.func.id}()" if isinstance(node.func, gast.Name) else
                    f".{node.func.attr}()" if isinstance(node.func, gast.Attribute) else "a function")
            raise self.error(f"the call of {name} made for its effect", "a differentiated function must be pure: "
                             "only print, assert, logging and warnings.warn may run for their effect; assign "
                             "the result of other calls to a name", node)
        if any(k.arg is None for k in node.keywords) or any(isinstance(a, gast.Starred) for a in node.args):
            raise self.error("*args or **kwargs in a call", "pass the arguments one by one", node)
        args = tuple(self.convert(a) for a in node.args[fn is runtime.raise_exception:])
        if fn is runtime.raise_exception:  # generated code differentiated again: the class raised, by name
            args = (ir.Const(self.statics.resolve(node.args[0])),) + args
        return ir.Call(fn, args, tuple((k.arg, self.convert(k.value)) for k in node.keywords))

    def _argument(self, node: Any) -> Any:
        """An argument of a call: its IR value, or the function it names (``np.sin``, ``helper``, a
        nested def or lambda) as a ``Known`` or ``Nested`` for ``_passes_functions``."""
        if isinstance(node, gast.Name) and isinstance(self.local(node.id), (Nested, Known, Bound)):
            return self.local(node.id)
        if isinstance(node, (gast.Name, gast.Attribute, gast.Subscript)):  # ... or ACTS[kind]
            found, value = self.statics.callee(node) if isinstance(node, gast.Subscript) else self.statics.static(node)
            if found and callable(value) and not isinstance(value, type) and not hasattr(value, "function_for"):
                return Known(value)
        return self.convert(node)

    def _unpartial(self, partial: functools.partial, args: list, kwargs: tuple, node: Any) -> tuple[Any, list, tuple]:
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

    def _partial(self, args: list, kwargs: tuple, node: Any) -> Bound:
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
        if isinstance(function, Nested) and named:
            raise self.error(f"keyword arguments fixed by a functools.partial of the nested function "
                             f"{function.node.name!r}", "fix them by position", node)
        return Bound(function, fixed, named)

    def _factory(self, fn: Any, args: list, kwargs: tuple, node: Any) -> Inline:
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
        bound = self._bind_user_call(fn, args, kwargs, node)
        return Inline(Nested(parsed.node, closed=True), bound, factory=True)

    def _passes_functions(self, fn: Any, args: list, kwargs: tuple, node: Any) -> Inline:
        """``apply(np.sin, x)``: a call of your own function that is passed functions is inlined,
        each function parameter then calling the function passed."""
        where = ("module-level functions of the differentiated function's module, and functions defined "
                 "in it, can take functions (or lambdas) as arguments")
        if not is_user_function(fn) or fn.__closure__ or fn.__globals__ is not self.resolver.globals:
            name = describe_callable(fn) if fn is not None else "this function"
            raise self.error(f"a function passed as an argument to {name}", f"only {where}; for others, call "
                             "the function yourself and pass its result", node)
        parsed = parse_function(fn)
        bound = self._bind_user_call(fn, args, kwargs, node)
        return Inline(Nested(parsed.node, closed=True), bound)

    def read_as_container(self, record: Record, protocol: str, node: Any) -> None:
        """Refuse, naming ``node``'s line, an object of the user's class read by ``protocol``
        ("iteration", "len()", "an index") where Python would call a method of its class s2s_ad does
        not follow, or raise TypeError for a class that defines none (``user_classes.read_as_container``):
        never its attributes read as items.  (``protocols`` follows the methods it can first.)"""
        self.protocols.refuse(record, protocol, node)

    def iterated(self, record: Record, node: Any) -> Record:
        """What iterating ``record`` walks: its own items, or those its class's ``__iter__`` returns an
        iterator over (``protocols.iterated``); refused where Python would not iterate it."""
        return self.protocols.iterated(record, node)

    def record_method(self, record: Record, name: str, args: list, kwargs: tuple, node: Any) -> Any:
        """``d.items()``, ``d.get(k)``, ``self.method(x)``, ``self.fn(x)`` (a function held by an object)."""
        if record.kind == "dict" and name in _DICT_METHODS and not kwargs:
            if name == "get" and len(args) in (1, 2):
                if not isinstance(args[0], ir.Const):
                    raise self.error("d.get with a key computed at run time", "dict keys must be constants", node)
                try:
                    return record.get(args[0].value)
                except LookupError:
                    return args[1] if len(args) == 2 else ir.Const(None)
            if name != "get" and not args:
                parts = {"keys": [ir.Const(k) for k in record.keys], "values": list(record.items),
                         "items": [ir.Display("tuple", (ir.Const(k), v)) for k, v in zip(record.keys, record.items)]}
                return Record("tuple", tuple, tuple(range(len(parts[name]))), tuple(parts[name]))
        if record.kind == "dict" and name == "copy" and not args and not kwargs:
            return Record(record.kind, record.cls, record.keys, record.items)
        if record.kind == "namedtuple" and name == "_replace" and not args:
            return self._replaced(record, kwargs, node)
        if record.fields and name in record.keys:
            held = record.get(name)
            if isinstance(held, ir.Const) and callable(held.value):
                return self._call_value(held.value, args, kwargs, node)
        method = self.statics.class_attribute(record.cls, name) if record.fields else None
        if isinstance(method, staticmethod):
            return self._call_value(method.__func__, args, kwargs, node)
        if isinstance(method, classmethod):  # self.make(w): the class's function, with the object's class
            return self.call_method_of(ir.Const(record.cls), method.__func__, args, kwargs, node)
        if inspect.isfunction(method):  # self.method(x): the class's function, with self
            return self._call_value(method, [record] + args, kwargs, node)
        raise self.error(f"the method .{name}() of a {record.cls.__name__}", "a dict supports d[k], d.get, "
                         ".items(), .keys(), .values() and .copy(); a dataclass, namedtuple or object its fields "
                         "and the methods defined in its class", node)

    def _class_of(self, node: Any) -> Optional[type]:
        """The class of an object of the user's class a local name holds, named as ``type(self)`` or
        ``self.__class__`` (a method making an object of its own class, a subclass's too); None for
        anything else."""
        if isinstance(node, gast.Attribute) and node.attr == "__class__":
            held = node.value
        elif isinstance(node, gast.Call) and isinstance(node.func, gast.Name) and node.func.id == "type" \
                and len(node.args) == 1 and not node.keywords and self.local("type") is None \
                and self.statics.resolve(node.func) is type:
            held = node.args[0]
        else:
            return None
        record = self.local(held.id) if isinstance(held, gast.Name) else None
        return record.cls if isinstance(record, Record) and record.kind == "object" else None

    def _is_super(self, node: Any) -> bool:
        """``super()`` (or ``super(Cls, self)``), Python's own ``super``."""
        return isinstance(node, gast.Call) and isinstance(node.func, gast.Name) and node.func.id == "super" \
            and self.local("super") is None and self.statics.resolve(node.func) is super

    def _super_method(self, func: gast.Attribute, args: list, kwargs: tuple, node: Any) -> Any:
        """``super().forward(x)`` in a method of the class ``C`` called on an object of the user's class
        ``T``: the method Python finds in the classes after ``C`` in ``T.__mro__`` (``C`` is the method's
        ``__class__`` cell, as Python's zero-argument ``super`` reads it), called on the same object."""
        made = cast(gast.Call, func.value)
        if made.args:
            found, klass = self.statics.static(made.args[0]) if len(made.args) == 2 else (False, None)
            this = self.convert(made.args[1]) if found else None
        else:
            found, klass = self.resolver.lookup("__class__")
            owner = self.resolver.owner
            code = getattr(owner, "__code__", None)
            this = self.local(code.co_varnames[0]) if found and code is not None and code.co_argcount else None
        if not (isinstance(klass, type) and isinstance(this, Record) and this.kind == "object"
                and klass in this.cls.__mro__):
            raise self.error(f"super().{func.attr}()", "super() is read in a method called on an object of your "
                             "own class made inside the differentiated function; elsewhere call the base class's "
                             "function by name with the object: Base.method(obj, x)", node)
        _, method = self.statics.next_attribute(this.cls, klass, func.attr)
        if isinstance(method, staticmethod):
            return self._call_value(method.__func__, args, kwargs, node)
        if not inspect.isfunction(method):
            raise self.error(f"super().{func.attr}() in a method of {klass.__name__}", f"no class after "
                             f"{klass.__name__} in {this.cls.__name__}'s bases defines {func.attr} as a function of "
                             "Python code", node)
        return self._call_value(method, [this] + args, kwargs, node)

    def operator_method(self, fn: Callable, left: Any, right: Any, node: Any) -> Any:
        """``a + b`` where an operand is an object of the user's class: ``a.__add__(b)``, else
        ``b.__radd__(a)`` (``right`` None: the unary ``-a`` is ``a.__neg__()``).  The method must be
        defined in the class, and must not give NotImplemented (Python would then try another)."""
        direct, reflected = operator_methods(fn) or ("", "")
        choices = [(left, direct, [] if right is None else [right])]
        if right is not None:
            choices.append((right, reflected, [left]))
        if right is not None and self._reflected_first(left, right, reflected):
            choices.reverse()
        for owner, name, args in choices:
            if not (isinstance(owner, Record) and owner.kind == "object" and name):
                continue
            method = self.statics.class_attribute(owner.cls, name)
            if method is None:
                continue
            if not inspect.isfunction(method) or "NotImplemented" in method.__code__.co_names:
                raise self.error(f"the operator {name} of a {owner.cls.__name__}", "it may give NotImplemented "
                                 "(or is not a plain function), so which method runs is not known while "
                                 "transforming; call the method by name", node)
            return self._call_value(method, [owner] + args, (), node)
        kinds = " and ".join(sorted({(o.cls.__name__ if isinstance(o, Record) else "a value")
                                     for o in (left, right) if o is not None}))
        raise self.error(f"the operator {fn.__name__} on {kinds}", "only objects of your own classes that "
                         "define its method (such as __add__, __mul__ or __radd__) can be operands; a dict, list, "
                         "tuple or dataclass has none", node)

    def _reflected_first(self, left: Any, right: Any, reflected: str) -> bool:
        """Python calls ``right.__radd__(left)`` before ``left.__add__(right)`` where the right operand's
        class derives from the left's and defines the reflected method otherwise than it does."""
        if not (isinstance(left, Record) and isinstance(right, Record) and left.kind == right.kind == "object"
                and reflected and right.cls is not left.cls and issubclass(right.cls, left.cls)):
            return False
        method = self.statics.class_attribute(right.cls, reflected)
        return method is not None and method is not self.statics.class_attribute(left.cls, reflected)

    def call_method_of(self, owner: Any, fn: Any, args: list, kwargs: tuple, node: Any) -> Any:
        """``fn`` (the function of a method, of a property's getter or of a classmethod) called with
        ``owner`` first: the object, or the class of a classmethod (a constant the call is specialised on,
        so the function is inlined: ``cls(w)`` in it makes an object of that class)."""
        if isinstance(owner, ir.Const) and isinstance(owner.value, type) and self.check_calls:
            if fn.__closure__ or fn.__globals__ is not self.resolver.globals:
                raise self.error(f"the classmethod {describe_callable(fn)}", "only the classmethods of classes "
                                 "defined in the differentiated function's module are followed; call the class "
                                 "itself (Model(w)), or a function of this module", node)
            return self._passes_functions(fn, [owner, *args], kwargs, node)
        return self._call_value(fn, [owner, *args], kwargs, node)

    def _class_method(self, cls: type, name: str, args: list, kwargs: tuple, node: Any) -> Optional[Any]:
        """``Model.make(w)`` or ``cls.make(w)`` (a classmethod), ``cls.square(v)`` (a staticmethod) of
        your own class; None for any other attribute."""
        method = self.statics.class_attribute(cls, name)
        if isinstance(method, classmethod) and inspect.isfunction(method.__func__):
            return self.call_method_of(ir.Const(cls), method.__func__, args, kwargs, node)
        if isinstance(method, staticmethod):
            return self._call_value(method.__func__, args, kwargs, node)
        return None

    def _call_value(self, fn: Any, args: list, kwargs: tuple, node: Any) -> Any:
        """A call of a known function (a method, a function an object holds) with converted arguments."""
        if self.check_calls:
            check_callee(fn, node, tuple(args), kwargs, self.error, self.resolver.snapshot)
            if is_user_function(fn):
                return ir.Call(fn, self._bind_user_call(fn, args, kwargs, node))
        return ir.Call(fn, tuple(args), kwargs)

    def _construct(self, fn: Any, args: list, kwargs: tuple, node: Any) -> Optional[Any]:
        """Containers made in the body: ``dict(a=..)``, ``Params(w=.., b=..)`` (a dataclass or
        namedtuple), ``len`` and ``list``/``tuple`` of a container; None for other calls."""
        record = args[0] if len(args) == 1 and isinstance(args[0], Record) else None
        if fn is dataclasses.replace and record is not None and record.kind == "dataclass":
            return self._replaced(record, kwargs, node)
        if fn is len and record is not None and not kwargs:
            length = self.protocols.length(record, node)  # len(obj): its class's __len__, followed
            if length is not None:
                return length
            self.read_as_container(record, "len()", node)
            return ir.Const(len(record.keys))
        if (fn is sorted or fn in (list, tuple)) and record is not None and not kwargs:
            record = self.iterated(record, node)  # (an object's attributes are not its items: its __iter__'s)
        if fn is sorted and record is not None and not kwargs:  # (rule templates: sorted(D) of a module's dict)
            return self._sorted(record, kwargs, node)
        if fn in (list, tuple) and len(args) == 1 and isinstance(args[0], ir.Display) and not kwargs:
            shown = args[0].items  # tuple([x, 2 * x]): a container of known length
            return Record(fn.__name__, fn, tuple(range(len(shown))), shown)
        if fn in (list, tuple) and record is not None and not kwargs:
            items = record.items if record.sequence else tuple(ir.Const(k) for k in record.keys)
            return Record(fn.__name__, fn, tuple(range(len(items))), items)
        if fn is dict and (record is not None or not args):
            made = Record("dict", dict, record.keys, record.items) if record is not None else Record("dict", dict, (), ())
            for key, value in kwargs:
                made = made.replaced(key, value)
            return made
        if not isinstance(fn, type):
            return None
        if issubclass(fn, tuple) and hasattr(fn, "_fields"):
            fields = tuple(fn._fields)
            kind = "namedtuple"
        elif dataclasses.is_dataclass(fn) and made_by_dataclass(fn):
            fields = tuple(f.name for f in dataclasses.fields(fn))
            if not all(f.init for f in dataclasses.fields(fn)) or hasattr(fn, "__post_init__"):
                raise self.error(f"making a {fn.__name__}", "a dataclass with __post_init__ or init=False fields "
                                 "runs code s2s_ad does not read; make it outside the function", node)
            kind = "dataclass"
        elif self.check_calls and is_plain_class(fn) and not rules.is_known(fn):
            return self._made_object(fn, args, kwargs, node)
        else:
            return None
        try:
            bound = inspect.signature(fn).bind(*args, **dict(kwargs))
        except TypeError as exc:
            raise self.error(f"making a {fn.__name__}", str(exc), node) from None
        bound.apply_defaults()
        items = tuple(v if isinstance(v, (Record, ir.Var, ir.Const, ir.Call, ir.Display, Choice, Inline, ir.Slice))
                      else ir.Const(v) for v in (bound.arguments[f] for f in fields))
        return Record(kind, fn, fields, items)

    def _sorted(self, iterable: Any, kwargs: tuple, node: Any) -> Optional[Record]:
        """``sorted(d)``, ``sorted(d.items(), key=lambda kv: kv[0])`` of a container whose structure is
        known now: its items in the order Python's sorted gives, decided while lowering (``sorting.py``),
        a list of known length; None for another iterable (an array, a list computed in a loop: the rule
        of ``sorted`` of numbers), where a key function is refused."""
        options = dict(kwargs)
        key = options.pop("key", None)
        reverse = sorting.reverse_flag(options.pop("reverse", None))
        if isinstance(key, ir.Const) and key.value is None:
            key = None
        if not isinstance(iterable, Record):
            if key is not None:
                raise self.error("sorted() with a key function of values computed at run time", "the order would "
                                 "be decided at run time, and only numbers (or a container whose items are known "
                                 "while transforming) can be sorted; sort an array of keys with np.argsort "
                                 "and index by the order it gives (v[np.argsort(keys)])", node)
            return None
        iterable = self.iterated(iterable, node)  # (an object's attributes are not its items: its __iter__'s)
        if options or reverse is None:
            raise self.error("sorted() with these arguments", "give key= (a function) and reverse= (True or "
                             "False written out) only", node)
        items = iterable.items if iterable.sequence else tuple(ir.Const(k) for k in iterable.keys)

        def read_name(name: str) -> Any:
            local = self.local(name)
            if local is None:
                found, value = self.statics.static(gast.Name(name, gast.Load(), None, None))
                if found and (is_plain_constant(value) or sorting.runs_while_transforming(value)):
                    return value
                raise sorting.Unreadable(f"the key function reads {name}, which is not read while transforming")
            value = sorting.known_value(local)
            return value

        def parse(fn: Any) -> Any:
            if not (is_user_function(fn) and not fn.__closure__):
                return None
            return parse_function(fn).node

        try:
            ordered = sorting.ordered(items, key, reverse, read_name, parse)
        except sorting.DependsOnRunTime:
            if key is None and iterable.sequence and not any(isinstance(i, (Record, ir.Display)) for i in items):
                return None  # sorted(d.values()): numbers sorted at run time (the rule of sorted)
            raise self.error(f"sorted() of a {iterable.cls.__name__} whose order depends on values computed "
                             "at run time", "its items (or the key function's results) must be known while "
                             "transforming: the order is decided then (sort by the keys, kv[0]); sort numbers "
                             "as a list or array of their own (sorted(d.values()), np.sort)", node) from None
        except sorting.Unreadable as exc:
            raise self.error(f"the key of sorted() of a {iterable.cls.__name__}", f"{exc}; the order of items "
                             "known while transforming is decided then, by a key function such as "
                             "lambda kv: kv[0]", node) from None
        except (TypeError, ValueError, LookupError, ArithmeticError) as exc:
            raise self.error("sorted()", str(exc), node) from None
        return Record("list", list, tuple(range(len(ordered))), ordered)

    def _made_object(self, cls: type, args: list, kwargs: tuple, node: Any) -> Record:
        """``Model(w)``, of a plain class whose ``__init__`` assigns its arguments to attributes: a
        record of those attributes (``user_classes.record_layout``), its methods inlined on it."""
        layout = record_layout(cls, self._next_init)
        if isinstance(layout, str):
            raise self.error(f"making a {cls.__name__} object", f"{layout}, so what the object holds is not "
                             "known while transforming; make it a dataclass, or make the object outside the "
                             "function and differentiate its method (s2s_ad.grad(obj.loss)), which reads "
                             "its attributes", node)
        try:
            bound = inspect.signature(cls).bind(*args, **dict(kwargs))
        except TypeError as exc:
            raise self.error(f"making a {cls.__name__} object", str(exc), node) from None
        bound.apply_defaults()
        items = []
        for _, source in layout.attributes:
            value = bound.arguments[source.name] if isinstance(source, Parameter) else source
            if not isinstance(value, (Record, ir.Var, ir.Const, ir.Call, ir.Display, Choice, Inline, ir.Slice)):
                if not is_plain_constant(value):
                    raise self.error(f"making a {cls.__name__} object", "only numbers, strings, None and "
                                     "tuples of them can be defaults of its __init__", node)
                value = ir.Const(value)
            items.append(value)
        return Record("object", cls, tuple(a for a, _ in layout.attributes), tuple(items))

    def _next_init(self, cls: type, after: Optional[type]) -> tuple[Any, Any]:
        """The ``__init__`` Python runs for ``cls`` after the class ``after`` of its MRO (None: the
        first), recorded in the snapshot with its code and defaults: the code holds the layout it
        assigns, so an ``__init__`` redefined, or its defaults changed, later makes the code old."""
        owner, init = self.statics.next_attribute(cls, after, "__init__")
        if self.resolver.record and isinstance(init, types.FunctionType):
            self.resolver.snapshot.record_code(init)
            self.resolver.snapshot.record_defaults(init)
        return owner, init

    def _replaced(self, record: Record, kwargs: tuple, node: Any) -> Record:
        """``dataclasses.replace(p, w=...)``, ``p._replace(w=...)``: a new record with those fields."""
        for key, value in kwargs:
            if key not in record.keys:
                raise self.error(f"replacing the field {key!r} of a {record.cls.__name__}", "it has no such field "
                                 f"(its fields are {', '.join(map(str, record.keys))})", node)
            record = record.replaced(key, value)
        return record

    def _respelled(self, respell: Callable, args: list) -> list:
        """The positional arguments of a call as the function's declared ``respelled`` spells them
        (np.einsum's sublist form as subscripts): it is given the constants' values and a marker for
        each other argument, and gives back values and markers, or None to keep the call as written."""
        markers = [_Marker(i) for i in range(len(args))]
        given = [_constant_value(a, m) for a, m in zip(args, markers)]
        spelled = respell(*given)
        if spelled is None:
            return args
        return [args[v.position] if isinstance(v, _Marker) else ir.Const(v) for v in spelled]

    def _variadic(self, fn: Any, args: list, node: Any) -> ir.Expr:
        """``max(values)`` is ``np.max(values)``, ``max(a, b, c)`` is ``max(max(a, b), c)``: a function
        declared ``variadic`` in templates/, called with other than two arguments."""
        if len(args) == 1:
            return ir.Call(rules.fact(fn, "variadic"), (args[0],))
        if not args:
            raise self.error(f"{fn.__name__}() of nothing", "give it values", node)
        result = args[0]
        for arg in args[1:]:
            result = ir.Call(fn, (result, arg))
        return result

    def _bind_user_call(self, fn: Any, args: list, kwargs: tuple, node: Any) -> tuple:
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
                if not is_plain_constant(value):
                    raise self.error(f"the default value of {name!r} in {describe_callable(fn)}",
                                     "only numbers, strings, None and tuples of them can be defaults", node)
                value = ir.Const(value)
            values.append(value)
        return tuple(values)

    def _method(self, node: gast.Call, args: list) -> tuple[Any, list]:
        func = node.func
        if not isinstance(func, gast.Attribute):
            raise self.error(f"a call of {type(func).__name__}", "call functions by name (or as an item of a "
                             "module-level dict with a constant key: LOSSES[\"l2\"](r)); a function a call "
                             "returns, bind to a name first: act = make_act(0.1); act(x)", node)
        entry = rules.method_function(func.attr)
        if entry is None and func.attr in DRAW_METHODS:  # rng.normal(size=3): replayed in every pass (draws.py)
            return runtime.draw, [self.convert(func.value), ir.Const(func.attr)] + args
        if entry is None and func.attr in DISTRIBUTION_METHODS:  # d.logpdf(x) of a frozen distribution d
            raise self.error(f"the method .{func.attr}()", "only array methods with a rule can be called "
                             "(sum, mean, reshape, ...); if this is a frozen scipy.stats distribution, call the "
                             "distribution's own method with its parameters: scipy.stats.norm.logpdf(x, loc, scale), "
                             "not scipy.stats.norm(loc, scale).logpdf(x)", node)
        if entry is None:
            raise self.error(f"the method .{func.attr}()", "only array methods with a rule can be called "
                             "(sum, mean, reshape, ...); call the NumPy function instead", node)
        fn, pack = entry
        if pack and len(args) > 1:
            args = [ir.Display("tuple", tuple(args))]
        return fn, [self.convert(func.value)] + args


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


@dataclass(frozen=True)
class _Marker:
    """An argument that is not a constant, as ``_respelled`` shows it to a declared ``respelled``."""
    position: int


def _constant_value(arg: Any, marker: _Marker) -> Any:
    """The value of a constant argument (a list or tuple display of constants too), else ``marker``."""
    if isinstance(arg, ir.Const):
        return arg.value
    if isinstance(arg, ir.Display) and arg.kind in ("list", "tuple"):
        items = [_constant_value(i, marker) for i in arg.items]
        if not any(isinstance(i, _Marker) for i in items):
            return items if arg.kind == "list" else tuple(items)
    return marker


def maybe_object(value: Any) -> bool:
    """A call that may give back an object of the user's class, known only once it is lowered in place:
    of the user's function (or method) given a container, a pending method of such a call
    (``MethodCall``), or an operator with such an operand (``Vec(x) * 2.0 + w``)."""
    if not isinstance(value, ir.Call):
        return False
    if isinstance(value.fn, MethodCall) or (is_user_function(value.fn) and any(isinstance(a, Record)
                                                                              for a in value.args)):
        return True
    return operator_methods(value.fn) is not None and any(maybe_object(a) for a in value.args)
