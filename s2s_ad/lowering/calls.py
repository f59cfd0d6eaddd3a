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

This module reads a call and sends it on; its parts are modules of their own (each a
``ConverterPart``): ``helper_calls`` (calls of the user's functions, bound or inlined: factories,
partials, functions passed functions), ``object_calls`` (methods and operators of records and of
objects of the user's classes), ``builtin_calls`` (``isinstance``, containers made, ``sorted``,
builtins respelled), ``protocols`` (``len``, iteration and indexing followed through a class's methods).
"""
from __future__ import annotations

import functools
import inspect
import operator
from typing import Any, Optional, Union

import gast
from ..core import containers, ir, runtime
from ..rules import registry as rules
from ..frontend.callables import (DISTRIBUTION_METHODS, check_callee, describe_callable, is_user_function,
                                  made_by_s2s_ad, refuse_out, reports)
from ..frontend.conversion import (Bound, Converter, ConverterPart, Dispatch, Inline, Known, MethodCall, Nested,
                                   Pending, Record)
from ..core.draws import DRAW_METHODS, seeds
from ..frontend.parse import transparent
from .function_values import Functions, function_constant
from ..frontend.static_names import StaticNames
from .builtin_calls import BuiltinCalls
from ..frontend.attribute_stores import HANDS_ON, SET_ATTRIBUTE
from .helper_calls import HelperCalls, leaves_a_function_default, returns_function
from .object_calls import ObjectCalls
from .protocols import ContainerProtocols
from ..frontend.user_classes import is_plain_class, operator_methods

# Methods of a constant string computed while lowering (pure, and their results are constants too).
_STRING_METHODS = frozenset({"lower", "upper", "casefold", "strip", "lstrip", "rstrip", "split", "rsplit",
                             "startswith", "endswith", "replace", "removeprefix", "removesuffix"})


class CallConverter(ConverterPart):
    """Converts calls; names and attributes it resolves through ``statics``."""

    def __init__(self, host: Converter, statics: StaticNames) -> None:
        super().__init__(host)
        self.statics = statics
        self.protocols = ContainerProtocols(host, statics)
        self.helpers = HelperCalls(host)
        self.objects = ObjectCalls(host, statics, self.helpers)
        self.builtins = BuiltinCalls(host, statics, self.objects, self.protocols)

    def call(self, node: gast.Call) -> Union[ir.Expr, Pending]:
        """A call as written: of a nested function (inlined), a function passed in, a global or a
        module-level table's function, a method (of an array, a container, an object of the user's),
        a class making a container, a builtin declared variadic or respelled."""
        known = self.builtins.isinstance_known(node)
        if known is not None:
            return known
        args = [self._argument(a) for a in node.args]
        kwargs = tuple((k.arg, self._argument(k.value)) for k in node.keywords)
        if any(k.arg is None for k in node.keywords):
            raise self.error("**kwargs in a call", "pass keyword arguments one by one", node)
        callee = self.local(node.func.id) if isinstance(node.func, gast.Name) else self._item_called(node.func)
        if isinstance(callee, Bound):  # g = functools.partial(scale, c=3.0); g(x): scale(x, c=3.0)
            given = {k for k, _ in kwargs}
            args = list(callee.args) + args
            kwargs = tuple((k, v) for k, v in callee.kwargs if k not in given) + kwargs
            callee = callee.function
        if isinstance(callee, Dispatch) and kwargs:  # (which def it picks is known only where it runs)
            raise self.error(f"keyword arguments to the nested function {node.func.id!r}", "pass them by "
                             "position (it is defined on more than one path)", node)
        if isinstance(callee, (Nested, Dispatch)):
            return Inline(callee, tuple(args), kwargs)
        if isinstance(callee, Record):
            return self.objects.record_method(callee, "__call__", args, kwargs, node)  # self(x)
        if isinstance(node.func, gast.Attribute) and self.objects.is_super(node.func.value):
            return self.objects.super_method(node.func, args, kwargs, node)
        own_class = self.objects.class_of(node.func)
        if own_class is not None:  # type(self)(w), self.__class__(w): the object's class, known now
            found, fn = True, own_class
        elif isinstance(callee, (Known, ir.Const)) and callable(callee.value):  # a function (or type) passed in
            found, fn = True, callee.value
        else:
            found, fn = self.statics.callee(node.func)
        if found and self.check_calls and inspect.ismethod(fn) and is_plain_class(fn.__self__) \
                and isinstance(node.func, gast.Attribute):  # Model.make(w): a classmethod of your class
            called = self.objects.class_method(fn.__self__, node.func.attr, args, kwargs, node)
            if called is not None:
                return called
        while found and isinstance(fn, functools.partial):  # SCALE3 = functools.partial(scaled, c=3.0)
            fn, args, kwargs = self.helpers.unpartial(fn, args, kwargs, node)
        if found and fn is functools.partial and self.check_calls:  # made here: a function value (static)
            return self.helpers.partial(args, kwargs, node)
        if found and self.check_calls and returns_function(fn):  # act = make_act(0.1): a closure
            return self.helpers.factory(fn, args, kwargs, node)
        if found and fn is sorted and self.check_calls and len(args) == 1:
            sorted_now = self.builtins.sorted_now(args[0], kwargs, node)  # sorted(d.items(), key=lambda kv: kv[0])
            if sorted_now is not None:
                return sorted_now
        values = args + [v for _, v in kwargs]
        if found and rules.fact(fn, "takes_functions") and self.check_calls:  # odeint(decay, y0, t): decay a value
            args, kwargs = self._functions_as_values(fn, args, kwargs, node)
            values = args + [v for _, v in kwargs]
        if any(isinstance(a, (Nested, Known, Bound)) for a in values) or (found and is_user_function(fn) and (any(
                isinstance(a, ir.Const) and isinstance(a.value, type) for a in values)  # apply(float, x)
                or (self.check_calls and leaves_a_function_default(fn, args, kwargs)))):  # loss(w, x), act=np.tanh
            return self.helpers.passes_functions(fn if found else None, args, kwargs, node)
        if not found and isinstance(node.func, gast.Attribute) and rules.method_function(node.func.attr) is None \
                and not containers.user_object(self.statics.resolve(node.func.value)):
            fn = self.statics.resolve(node.func)  # a method of a module-level object: settings.factor(2)
            found = callable(fn)
        if not found:
            owner = self.convert(node.func.value) if isinstance(node.func, gast.Attribute) else None
            if isinstance(owner, Record):
                if getattr(node, HANDS_ON, None) is not None:  # a method of an object stored into (attribute_stores.py)
                    self.objects.not_handed_on(owner, node)
                return self.objects.record_method(owner, node.func.attr, args, kwargs, node)
            if isinstance(owner, ir.Const) and is_plain_class(owner.value) and self.check_calls:
                called = self.objects.class_method(owner.value, node.func.attr, args, kwargs, node)  # cls.make(w)
                if called is not None:
                    return called
            if (isinstance(owner, ir.Call) and maybe_object(owner) or isinstance(owner, Inline) and not owner.factory) \
                    and rules.method_function(node.func.attr) is None:  # Circle.from_area(a).doubled_area()
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
            if isinstance(owner, ir.Const) and type(owner.value) is str and node.func.attr == "join" \
                    and len(args) == 1 and not kwargs:  # ", ".join(f"{v:.3f}" for v in xs): a message
                return ir.Call(runtime.joined, (owner, *args))
            if isinstance(node.func, gast.Attribute) and node.func.attr == SET_ATTRIBUTE:  # (attribute_stores.py)
                raise self.error("the assignment to an attribute", "the object was not made here by calling "
                                 "its class (Obj(...)), so something else may hold it and see the store; make it "
                                 "here, or make a new one (dataclasses.replace(obj, attr=v))", node)
            if isinstance(node.func, gast.Attribute) and node.func.attr == "copy" and not args and not kwargs \
                    and isinstance(owner, ir.Display) and owner.kind == "list":
                return owner  # (a list's copy: lowering's lists are values; np.copy's would be an array)
            fn, args = self._method(node, args)
        fn = transparent(fn)  # functools.cache(f) calls f
        held = self.statics.global_object(fn) if found and self.check_calls \
            and not made_by_s2s_ad(fn) else None  # (a gradient called: refused below)
        if held is not None and not _has_rule(fn):  # LAYER(x): a module-level object of your class, its __call__
            return self.objects.record_method(held, "__call__", args, kwargs, node)
        if fn is sum and args and len(args) + len(kwargs) <= 2:
            summed = self._summed_objects(args, kwargs, node)
            if summed is not None:
                return summed
        made = self.builtins.construct(fn, args, kwargs, node)
        if made is not None:
            return made
        if self.check_calls and not kwargs and len(args) != 2 and rules.fact(fn, "variadic") is not None:
            return self.builtins.variadic(fn, args, node)
        if rules.fact(fn, "respelled") is not None:
            args = self.builtins.respelled(rules.fact(fn, "respelled"), args)
        if fn is reversed and len(args) == 1 and not kwargs:  # enumerate(reversed(x)): x[::-1]
            return ir.Call(operator.getitem, (args[0], ir.Slice(None, None, ir.Const(-1))))
        if self.check_calls:
            check_callee(fn, node, tuple(args), kwargs, self.error, self.resolver.snapshot)
            if is_user_function(fn):
                return ir.Call(fn, self.helpers.bind_user_call(fn, args, kwargs, node))
        return ir.Call(fn, tuple(args), kwargs)


    def _functions_as_values(self, fn: Any, args: list, kwargs: tuple, node: Any) -> tuple[list, tuple]:
        """The functions among a call's arguments as constants (``function_values.function_constant``)."""
        callee = describe_callable(fn)

        def value(a: Any) -> Any:
            is_function = isinstance(a, (Nested, Known, Bound))
            return function_constant(self.host, a, callee, node) if is_function else a
        return [value(a) for a in args], tuple((k, value(v)) for k, v in kwargs)

    def _item_called(self, func: Any) -> Any:
        """``fs[0](x)``, ``fs[-1](x)``: the function a list or tuple of functions holds at a constant index;
        ``layers[0]``: an object of your class a list, tuple or dict holds (called: its ``__call__``)."""
        if not (isinstance(func, gast.Subscript) and isinstance(func.value, gast.Name)):
            return None
        held = self.local(func.value.id)
        if isinstance(held, Record) or (held is None and self.statics.objects_table(
                self.statics.lookup(func.value)) is not None):  # layers[0](x): an object's __call__
            item = self.convert(func)
            return item if isinstance(item, Record) and item.kind in ("object", "dataclass") else None
        if not isinstance(held, Functions):
            return None
        key = self._constant_key(func.slice)
        found = None if key is None else held.item(key)
        if found is None:
            known = (f"index it by a constant from 0 to {len(held.items) - 1}" if held.shown != "dict" else
                     f"read it by one of its keys, a constant ({', '.join(map(repr, held.keys))})")
            raise self.error(f"the call of an item of the {held.shown} of functions {func.value.id!r}",
                             f"{known}, or loop over it", func)
        return found

    def _constant_key(self, node: Any) -> Any:
        """The index or key ``node`` is while lowering (``0``, ``-1``, ``"tanh"``, a loop's name unrolled
        over constants), else None."""
        if isinstance(node, gast.UnaryOp) and isinstance(node.op, gast.USub):
            inner = self._constant_key(node.operand)
            return -inner if type(inner) is int else None
        if isinstance(node, gast.Constant):
            return node.value
        held = self.local(node.id) if isinstance(node, gast.Name) else None
        return held.value if isinstance(held, ir.Const) else None
    def effect(self, node: gast.Call) -> ir.Call:
        """A call made for its effect (``print(...)``, ``logging.info(...)``, ``warnings.warn(...)``):
        it runs where the primal computation runs and carries no derivative.  Any other call
        made for its effect is refused: it may change what the function computes.  ``np.random.seed(0)``
        and ``random.seed(0)`` (of the global generators) run there too, in order with the draws: what
        draws after them sees the numbers NumPy's own run would (``draws.seeds``)."""
        fn = self.statics.resolve(node.func)
        refuse_out(fn, node, self.error)  # np.multiply(a, b, out=c): what to write instead
        held = self.local(node.func.value.id) if isinstance(node.func, gast.Attribute) \
            and isinstance(node.func.value, gast.Name) else None
        if isinstance(held, Record) and held.kind in ("object", "dataclass"):  # counter.add(v), its result dropped
            owner = node.func.value.id
            raise self.error(f"the call of {held.cls.__name__}.{node.func.attr}() made for its effect", "a method "
                             "called for its effect is followed on an object the function made by calling its "
                             "class and holds by one name alone (used only as name.attr and name.method(...): "
                             f"never passed on, put in a container, returned or given another name); {owner} is "
                             "not held so here (or its class was not called to make it), so the change could be "
                             f"seen elsewhere; make the object here and use it only so, or have the method return "
                             f"a new object and assign it ({owner} = {owner}.{node.func.attr}(...), the method "
                             f"returning {held.cls.__name__}(...))", node)
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

    def _summed_objects(self, args: list, kwargs: tuple, node: Any) -> Optional[Any]:
        """``sum(vectors)``, ``sum(vectors, Vec(zeros))`` of a list or tuple of known length holding
        objects of the user's classes (or dataclasses), or started by one: ``start + v0 + v1 ...`` as
        Python adds them, each ``+`` the class's ``__add__`` or ``__radd__`` (``0 + v0`` is
        ``v0.__radd__(0)``; a sum a method gives back is known once lowered, as in ``v * 2.0 + w``);
        None for a sum of numbers or arrays."""
        start = args[1] if len(args) == 2 else dict(kwargs).get("start", ir.Const(0))
        given = args[0]
        items = given.items if isinstance(given, ir.Display) or (isinstance(given, Record) and given.sequence) \
            else None
        if items is None or not any(isinstance(v, Record) and v.kind in ("object", "dataclass")
                                    for v in (start, *items)):
            return None
        first = items[0] if items else None
        if isinstance(start, ir.Const) and type(start.value) is int and start.value == 0 \
                and isinstance(first, Record) and first.kind in ("object", "dataclass") \
                and self.statics.class_attribute(first.cls, "__radd__") is None:
            raise self.error(f"sum() of {first.cls.__name__} objects", f"sum starts at 0, and 0 + a "
                             f"{first.cls.__name__} needs {first.cls.__name__}.__radd__ (Python raises TypeError); "
                             f"give the start: sum(items, {first.cls.__name__}(...))", node)
        total = start
        for item in items:
            if maybe_object(total) or maybe_object(item):
                total = ir.Call(operator.add, (total, item))  # (SSABuilder.object_operator: once lowered)
            else:
                total = self.objects.operator_method(operator.add, total, item, node)
        return total

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


def _has_rule(fn: Any) -> bool:
    """Whether the callable object ``fn`` has a rule of its own (an unhashable one has none)."""
    try:
        return rules.is_known(fn)
    except TypeError:
        return False


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
