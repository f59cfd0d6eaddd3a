"""Methods and operators of records and of objects of the user's classes, followed while lowering.

A part of ``calls.CallConverter`` (``conversion.ConverterPart``).  Input: a ``Record`` (a dict,
dataclass, namedtuple or object of the user's plain class, known while lowering), or a class of the
user's, with the method's name and the call's converted arguments.  Output: what the call gives:
a container's method read now (``d.items()``, ``d.get(k)``, ``p._replace(w=...)``), or the method's
function called with the object first, through ``helper_calls`` (``self.method(x)``, a
classmethod or staticmethod, ``super().method(x)`` by the object's MRO, ``a + b`` as
``a.__add__(b)`` or ``b.__radd__(a)``: ``operator_method``); an object made in the body as a record
of the attributes its ``__init__`` assigns (``made_object``).  What Python would decide otherwise
than the code written says is refused with a located ``TransformError``.
"""
from __future__ import annotations

import inspect
import operator
import types
from typing import Any, Callable, Optional, cast

import gast
from ..core import ir
from ..frontend.attribute_stores import CHANGED_BY, GIVING, SET_ATTRIBUTE
from ..frontend.callables import describe_callable
from ..frontend.conversion import Choice, Converter, ConverterPart, Inline, Nested, Once, Record, is_plain_constant
from ..frontend.parse import def_as_written, parse_function, parse_rewritten
from ..frontend.static_names import StaticNames
from ..frontend.user_classes import (ComputesAttributes, Computed, Parameter, computed_layout, operator_methods,
                                     record_layout)
from .helper_calls import HelperCalls
from .object_stores import ObjectStores
from ..core.identity import IdentitySet

_DICT_METHODS = ("items", "keys", "values", "get")


class _NotAFunction(Exception):
    """An ``__init__`` that cannot be read as a function returning what it assigns (the reason kept)."""


class ObjectCalls(ConverterPart):
    """Follows the methods and operators of records and of objects of the user's classes."""

    def __init__(self, host: Converter, statics: StaticNames, helpers: HelperCalls) -> None:
        super().__init__(host)
        self.statics = statics
        self.helpers = helpers  # (a method is a call of the class's function: bound or inlined there)
        self.stores = ObjectStores(host, statics, helpers)  # (obj.v = w, obj.step(dt): the object changed)

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
        if record.kind in ("dict", "list") and name == "copy" and not args and not kwargs:
            return Record(record.kind, record.cls, record.keys, record.items)  # (a value: lowering's containers)
        if record.kind == "namedtuple" and name == "_replace" and not args:
            return self.replaced(record, kwargs, node)
        if name == SET_ATTRIBUTE:  # state.v = w, state held by that name alone (frontend/attribute_stores.py)
            return self.stores.attribute_stored(record, args, node)
        if name in (CHANGED_BY, GIVING):  # state.step(dt) as a statement (y = state.step(dt)), state held so
            return self.called_on_its_own(record, args, kwargs, node, giving=name == GIVING)
        if record.fields and name in record.keys:
            held = record.get(name)
            if isinstance(held, ir.Const) and callable(held.value):
                return self.helpers.call_value(held.value, args, kwargs, node)
        method = self.statics.class_attribute(record.cls, name) if record.fields else None
        if isinstance(method, staticmethod):
            return self.helpers.call_value(method.__func__, args, kwargs, node)
        if isinstance(method, classmethod):  # self.make(w): the class's function, with the object's class
            return self.call_method_of(ir.Const(record.cls), method.__func__, args, kwargs, node)
        if inspect.isfunction(method):  # self.method(x): the class's function, with self
            return self.helpers.call_value(method, [record] + args, kwargs, node)
        if name == "__call__" and record.kind in ("object", "dataclass"):
            raise self.error(f"a call of a {record.cls.__name__} object", f"{record.cls.__name__} defines no "
                             "__call__ (Python raises TypeError: not callable); call one of its methods", node)
        raise self.error(f"the method .{name}() of a {record.cls.__name__}", "a dict supports d[k], d.get, "
                         ".items(), .keys(), .values() and .copy(); a dataclass, namedtuple or object its fields "
                         "and the methods defined in its class", node)

    def replaced(self, record: Record, kwargs: tuple, node: Any) -> Record:
        """``dataclasses.replace(p, w=...)``, ``p._replace(w=...)``: a new record with those fields."""
        for key, value in kwargs:
            if key not in record.keys:
                raise self.error(f"replacing the field {key!r} of a {record.cls.__name__}", "it has no such field "
                                 f"(its fields are {', '.join(map(str, record.keys))})", node)
            record = record.replaced(key, value)
        return record

    def called_on_its_own(self, record: Record, args: list, kwargs: tuple, node: Any, giving: bool) -> Any:
        """``obj.m(...)`` (``y = obj.m(...)``) in a statement of its own, ``obj`` held by that name alone
        (``attribute_stores``): a method that changes the object is lowered on it
        (``ObjectStores.changed_by``), its value checked not to hold the object; a value of one that does
        not is the method's as any call's, paired with the object as it is (checked so only where the
        function changes the object elsewhere, as a method's value always was)."""
        called = args[0].value
        if self.stores.changes_its_object(record, called):
            if giving:
                self.not_handed_on(record, node)
            return self.stores.changed_by(record, args, kwargs, node, giving)
        if not giving:
            return self.stores.changed_by(record, args, kwargs, node, giving, made_here=False)
        if self.stores.changed_somewhere(record, node):
            self.not_handed_on(record, node)
        value = self.record_method(record, called, list(args[1:]), kwargs, node)
        return Record("tuple", tuple, (0, 1), (record, value))

    def not_handed_on(self, record: Record, node: Any) -> None:
        """Refuse ``obj.method(...)`` of an object the function stores into unless the method, and every
        method it calls on ``self`` or through ``super()``, reads ``self`` only by its attributes
        (``self.w``, ``self.m(...)``, ``super().m(...)``): one that uses ``self`` otherwise (``return
        self``, ``type(self)(...)``) could give the object to another name, which a store read as a new
        binding of one name would not reach."""
        called = node.func.attr if node.func.attr != GIVING else node.args[0].value  # (y = obj.m(x): m)
        pending, seen = [self.statics.class_attribute(record.cls, called)], set()
        while pending:
            method = pending.pop()
            if not inspect.isfunction(method) or method in seen:
                continue  # (a staticmethod or classmethod is given no self; a field's function the call reads)
            seen.add(method)
            definition = def_as_written(method)
            this = definition.args.args[0].id if definition.args.args else None
            read = IdentitySet(n.value for n in gast.walk(definition) if isinstance(n, gast.Attribute))
            for n in gast.walk(definition):
                if not (isinstance(n, gast.Call) and isinstance(n.func, gast.Attribute)):
                    continue
                owner = n.func.value
                if isinstance(owner, gast.Name) and owner.id == this:  # self.m(...)
                    pending.append(self.statics.class_attribute(record.cls, n.func.attr))
                elif isinstance(owner, gast.Call) and isinstance(owner.func, gast.Name) and owner.func.id == "super" \
                        and not owner.args:  # super().m(...): any class's m along the object's MRO
                    read.add(owner.func)
                    pending.extend(vars(klass).get(n.func.attr) for klass in record.cls.__mro__)
            loose = next((n for n in gast.walk(definition) if isinstance(n, gast.Name) and n not in read
                          and n.id in (this, "super") and n is not definition.args.args[0]), None)
            if this is None or loose is not None:
                raise self.error(f"the call of .{called}() of a {record.cls.__name__} the function "
                                 "stores into", f"{method.__qualname__} uses its object otherwise than by its "
                                 "attributes (returns it or passes it on), so another name could hold the "
                                 "object and not see the store; store into a new object, or keep the value in "
                                 "a name of its own", node)

    def class_of(self, node: Any) -> Optional[type]:
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

    def is_super(self, node: Any) -> bool:
        """``super()`` (or ``super(Cls, self)``), Python's own ``super``."""
        return isinstance(node, gast.Call) and isinstance(node.func, gast.Name) and node.func.id == "super" \
            and self.local("super") is None and self.statics.resolve(node.func) is super

    def super_method(self, func: gast.Attribute, args: list, kwargs: tuple, node: Any) -> Any:
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
            return self.helpers.call_value(method.__func__, args, kwargs, node)
        if not inspect.isfunction(method):
            raise self.error(f"super().{func.attr}() in a method of {klass.__name__}", f"no class after "
                             f"{klass.__name__} in {this.cls.__name__}'s bases defines {func.attr} as a function of "
                             "Python code", node)
        return self.helpers.call_value(method, [this] + args, kwargs, node)

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
            if not (isinstance(owner, Record) and owner.kind in ("object", "dataclass") and name):
                continue
            method = self.statics.class_attribute(owner.cls, name)
            if method is None:
                continue
            if not inspect.isfunction(method) or "NotImplemented" in method.__code__.co_names:
                raise self.error(f"the operator {name} of a {owner.cls.__name__}", "it may give NotImplemented "
                                 "(or is not a plain function), so which method runs is not known while "
                                 "transforming; call the method by name", node)
            return self.helpers.call_value(method, [owner] + args, (), node)
        kinds = " and ".join(sorted({(o.cls.__name__ if isinstance(o, Record) else "a value")
                                     for o in (left, right) if o is not None}))
        raise self.error(f"the operator {fn.__name__} on {kinds}", "only objects of your own classes that "
                         "define its method (such as __add__, __mul__ or __radd__) can be operands; a dict, list, "
                         "tuple or dataclass has none", node)

    def _reflected_first(self, left: Any, right: Any, reflected: str) -> bool:
        """Python calls ``right.__radd__(left)`` before ``left.__add__(right)`` where the right operand's
        class derives from the left's and defines the reflected method otherwise than it does."""
        if not (isinstance(left, Record) and isinstance(right, Record) and left.kind in ("object", "dataclass")
                and right.kind in ("object", "dataclass")
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
            return self.helpers.passes_functions(fn, [owner, *args], kwargs, node)
        return self.helpers.call_value(fn, [owner, *args], kwargs, node)

    def class_method(self, cls: type, name: str, args: list, kwargs: tuple, node: Any) -> Optional[Any]:
        """``Model.make(w)`` or ``cls.make(w)`` (a classmethod), ``cls.square(v)`` (a staticmethod) of
        your own class; None for any other attribute."""
        method = self.statics.class_attribute(cls, name)
        if isinstance(method, classmethod) and inspect.isfunction(method.__func__):
            return self.call_method_of(ir.Const(cls), method.__func__, args, kwargs, node)
        if isinstance(method, staticmethod):
            return self.helpers.call_value(method.__func__, args, kwargs, node)
        return None

    def made_object(self, cls: type, args: list, kwargs: tuple, node: Any) -> Record:
        """``Model(w)``, of a plain class whose ``__init__`` assigns its arguments to attributes: a
        record of those attributes (``user_classes.record_layout``), its methods inlined on it."""
        layout: Any = record_layout(cls, self._next_init)
        if isinstance(layout, ComputesAttributes):
            layout = self._computed_layout(cls)
        if isinstance(layout, Computed):
            return self._computed_object(cls, layout, args, kwargs, node)
        if isinstance(layout, str):
            raise self.error(f"making a {cls.__name__} object", f"{layout}, so what the object holds is not "
                             "known while transforming; make it a dataclass, or make the object outside the "
                             "function and differentiate its method (s2s_ad.grad(obj.loss)), which reads "
                             "its attributes", node)
        bound = self._arguments(cls, args, kwargs, node)
        items = [self._as_value(cls, bound[source.name] if isinstance(source, Parameter) else source, node)
                 for _, source in layout.attributes]
        return Record("object", cls, tuple(a for a, _ in layout.attributes), tuple(items))

    def _arguments(self, cls: type, args: list, kwargs: tuple, node: Any) -> dict[str, Any]:
        """The arguments of ``cls(...)`` by its ``__init__``'s parameters, defaults filled in."""
        try:
            bound = inspect.signature(cls).bind(*args, **dict(kwargs))
        except TypeError as exc:
            raise self.error(f"making a {cls.__name__} object", str(exc), node) from None
        bound.apply_defaults()
        return dict(bound.arguments)

    def _as_value(self, cls: type, value: Any, node: Any) -> Any:
        """An argument (or a default, a plain constant) of ``cls(...)`` as a value lowering holds."""
        if isinstance(value, (Record, ir.Var, ir.Const, ir.Call, ir.Display, Choice, Inline, ir.Slice)):
            return value
        if not is_plain_constant(value):
            raise self.error(f"making a {cls.__name__} object", "only numbers, strings, None and tuples of them "
                             "can be defaults of its __init__", node)
        return ir.Const(value)

    def _computed_layout(self, cls: type) -> Any:
        """The ``__init__`` Python runs for ``cls``, which computes what it assigns, as a function
        (``user_classes.computed_layout``), or why not: one of another module reads that module's names,
        which an inlined body of this module cannot."""
        owner, init = self._next_init(cls, None)
        # (super() in a method gives it the cell __class__: not a closure of the user's)
        if set(init.__code__.co_freevars) - {"__class__"}:
            return (f"{owner.__name__}.__init__ computes what it assigns and reads names of the function that "
                    "defines the class; define the class at module level")
        layouts: list[Any] = []

        def rewrite(node: gast.FunctionDef) -> None:
            layouts.append(computed_layout(cls, node))
            if isinstance(layouts[0], str):
                raise _NotAFunction()

        try:
            parsed = parse_rewritten(init, rewrite)
        except _NotAFunction:
            return layouts[0]
        return Computed(parsed.node, layouts[0].attributes, parsed)

    def _computed_object(self, cls: type, layout: Computed, args: list, kwargs: tuple, node: Any) -> Record:
        """``Model(w, s)`` whose ``__init__`` computes: its body lowered in place once (where the object
        is first read), each attribute an item of what it returns."""
        given = [self._as_value(cls, v, node) for v in self._arguments(cls, args, kwargs, node).values()]
        made = Once(Inline(Nested(layout.node, closed=True, callee=layout.parsed), tuple(given)))
        pending = cast(ir.Expr, made)  # (a pending value in IR's place, flattened where an item is first read)
        items = tuple(ir.Call(operator.getitem, (pending, ir.Const(i))) for i in range(len(layout.attributes)))
        return Record("object", cls, layout.attributes, items)

    def _next_init(self, cls: type, after: Optional[type]) -> tuple[Any, Any]:
        """The ``__init__`` Python runs for ``cls`` after the class ``after`` of its MRO (None: the
        first), recorded in the snapshot with its code and defaults: the code holds the layout it
        assigns, so an ``__init__`` redefined, or its defaults changed, later makes the code old."""
        owner, init = self.statics.next_attribute(cls, after, "__init__")
        if self.resolver.record and isinstance(init, types.FunctionType):
            self.resolver.snapshot.record_code(init)
            self.resolver.snapshot.record_defaults(init)
        return owner, init
