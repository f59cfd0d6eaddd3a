"""Objects of the user's classes changed while lowering: an attribute stored (``state.v = w``) and a
method called for its effect (``state.step(dt)``), on an object the function made and holds by one name
alone (``frontend/attribute_stores.py`` rewrote both as new bindings of that name).

A part of ``calls.CallConverter`` (``conversion.ConverterPart``), which ``object_calls.ObjectCalls``
asks.  Input: the ``Record`` of the object, the call's converted arguments and its node.  Output: the
record with the attribute replaced (``attribute_stored``), or an ``Inline`` of the method's body on the
object, its ``self`` held as the caller's name is, which gives back the object as the body left it
(``changed_by``).  What Python would decide otherwise (a frozen dataclass, a property, an object
something else may hold) is refused with a located ``TransformError``.
"""
from __future__ import annotations

import inspect
from typing import Any, Optional

import gast
from ..frontend.attribute_stores import CHANGES_OF_NAME, GIVEN_BACK, MADE_BY, MADE_BY_CALLER, PRIVATE_SELF
from ..frontend.conversion import Converter, ConverterPart, Inline, Nested, Record
from ..frontend.parse import def_as_written, parse_rewritten
from ..frontend.static_names import StaticNames
from .helper_calls import HelperCalls


class ObjectStores(ConverterPart):
    """Stores into, and changing methods of, an object held by one name alone."""

    def __init__(self, host: Converter, statics: StaticNames, helpers: HelperCalls) -> None:
        super().__init__(host)
        self.statics = statics
        self.helpers = helpers

    def attribute_stored(self, record: Record, args: list, node: Any) -> Record:
        """``state.v = w``: the object with ``v`` replaced, where it is a new object of the user's class (or
        a dataclass) made here, whose attribute ``v`` its ``__init__`` assigns, and no property of its
        class could hand the object on; anything else is refused at the store's line."""
        key = args[0].value
        what = f"the assignment to {record.cls.__name__ if isinstance(record.cls, type) else 'an object'}.{key}"
        if record.kind not in ("object", "dataclass"):
            raise self.error(what, "only an object of your class or a dataclass made in the function is "
                             "changed by a store; make a new one (dataclasses.replace(obj, attr=v))", node)
        self._made_here(record, node, what)
        params = getattr(record.cls, "__dataclass_params__", None)
        if params is not None and params.frozen:
            raise self.error(what, f"{record.cls.__name__} is a frozen dataclass (Python raises "
                             "FrozenInstanceError); make a new one with dataclasses.replace", node)
        if key not in record.keys:  # a new attribute, in the object's __dict__ as Python adds it
            fixed = _attributes_fixed(record.cls)
            if fixed is not None:
                raise self.error(what, f"{record.cls.__name__} {fixed}, so Python may refuse or redirect a "
                                 f"new attribute {key}; assign it in __init__ first", node)
        if any(isinstance(v, property) for klass in record.cls.__mro__ for v in vars(klass).values()):
            raise self.error(what, f"{record.cls.__name__} defines a property, which could hand the object "
                             "on; make a new object instead (dataclasses.replace(obj, attr=v))", node)
        return record.replaced(key, args[1])

    def _made_here(self, record: Record, node: Any, what: str) -> None:
        """Refuse ``what`` unless each call that binds the object's name (``MADE_BY``) is its class: a
        new object, which nothing else holds (a method's ``self`` held so: its caller checked)."""
        for maker in getattr(node, MADE_BY, None) or [None]:
            if maker == MADE_BY_CALLER:
                continue
            made = self.statics.resolve(maker) if maker is not None else None
            if not (isinstance(made, type) and issubclass(made, record.cls) or made is record.cls):
                raise self.error(what, "the object was not made here by calling its class (Obj(...)), so "
                                 "something else may hold it and see the store; make it here, or make a new "
                                 "one (dataclasses.replace(obj, attr=v))", node)

    def changes_its_object(self, record: Record, name: str) -> bool:
        """Whether ``record``'s method ``name`` may change its object: it stores into an attribute of its
        ``self`` (or into an item of one), or calls on ``self`` (or through ``super()``, any class's along the
        object's MRO) a method that may;
        read off the defs as written.  (A staticmethod, a classmethod or a field's function is given no
        ``self``.)"""
        pending, seen = [self.statics.class_attribute(record.cls, name)], set()
        while pending:
            method = pending.pop()
            if not inspect.isfunction(method) or method in seen:
                continue
            seen.add(method)
            definition = def_as_written(method)
            this = definition.args.args[0].id if definition.args.args else None
            for n in gast.walk(definition):
                target = n
                while isinstance(target, (gast.Subscript, gast.Attribute)) and isinstance(target.ctx, gast.Store):
                    target = target.value  # self.v = w, self.v[i] = w, self.v.w = u: a change of self
                    if isinstance(target, gast.Name) and target.id == this:
                        return True
                if isinstance(n, gast.Call) and isinstance(n.func, gast.Attribute):
                    owner = n.func.value
                    if isinstance(owner, gast.Name) and owner.id == this:
                        pending.append(self.statics.class_attribute(record.cls, n.func.attr))
                    elif isinstance(owner, gast.Call) and isinstance(owner.func, gast.Name) and owner.func.id == "super":
                        pending.extend(vars(klass).get(n.func.attr) for klass in record.cls.__mro__)  # any along the MRO
        return False

    def changed_somewhere(self, record: Record, node: Any) -> bool:
        """Whether the function changes the object the call ``node`` (``attribute_stores.GIVING``) is made
        on elsewhere: a store into its attributes, or a method changing it called in a statement."""
        called, stored = getattr(node, CHANGES_OF_NAME, (frozenset(), True))
        return stored or any(self.changes_its_object(record, name) for name in called)

    def changed_by(self, record: Record, args: list, kwargs: tuple, node: Any, giving: bool = False,
                   made_here: bool = True) -> Inline:
        """``state.step(dt)`` as a statement, ``state`` an object the function made and holds by that name
        alone (``attribute_stores.CHANGED_BY``): the method's body lowered in place on the object, its
        ``self`` held as the caller's name is (its stores and changing calls read as new bindings of
        ``self``), each return giving back ``self``: the object as the method leaves it, which the caller's
        name is bound to.  Where the call's result is bound too (``giving``, ``y = state.step(dt)``:
        ``attribute_stores.GIVING``), each return gives back the pair of the object so and what the method
        returned (which ``ObjectCalls.not_handed_on`` has checked does not hold the object)."""
        name = args[0].value
        what = f"the call of {record.cls.__name__}.{name}()" + ("" if giving else " made for its effect")
        if record.kind not in ("object", "dataclass"):
            raise self.error(what, "only a method of an object of your class changes it here", node)
        method = self.statics.class_attribute(record.cls, name)
        if not inspect.isfunction(method):
            raise self.error(what, f"{record.cls.__name__}.{name} is not a plain method of the class (a "
                             "staticmethod, classmethod or other attribute), whose call for its effect computes "
                             "nothing s2s_ad can follow; assign its result", node)
        if made_here:  # (a method that changes nothing may be called on any object)
            self._made_here(record, node, what)
        if set(method.__code__.co_freevars) - {"__class__"}:
            raise self.error(what, f"{record.cls.__name__}.{name} reads names of the function that defines the "
                             "class; define the class at module level", node)
        parsed = parse_rewritten(method, _giving_back_its_object if giving else _as_changing_its_object)
        bound = self.helpers.bind_user_call(method, [record] + list(args[1:]), kwargs, node)
        return Inline(Nested(parsed.node, closed=True, callee=parsed), bound)


def _attributes_fixed(cls: type) -> Optional[str]:
    """Why an object of ``cls`` may not take a new attribute as a plain store into its ``__dict__``
    (``__slots__``, or a ``__setattr__`` of its own); None where it does."""
    for klass in cls.__mro__[:-1]:  # (object's own are Python's plain store)
        if "__slots__" in vars(klass):
            return f"declares __slots__ (in {klass.__name__})"
        if "__setattr__" in vars(klass):
            return f"defines __setattr__ (in {klass.__name__})"
    return None


def _giving_back_its_object(node: gast.FunctionDef) -> None:
    """``_as_changing_its_object`` for a call whose result is bound too: each return gives back the pair
    ``(self, value)`` (``None`` for a bare return and at the end of the body)."""
    _as_changing_its_object(node, giving=True)


def _as_changing_its_object(node: gast.FunctionDef, giving: bool = False) -> None:
    """A method's def (parsed, before the sugar) read as changing its object (``changed_by``): its
    ``self`` held by the caller's name alone (``PRIVATE_SELF``), so that the sugar reads stores into it
    and changing calls on it as new bindings of ``self`` where nothing else can see it; each return
    gives back ``self`` (a value it returned is the caller's to drop: the call is a statement), as does
    the end of the body."""
    if not node.args.args or node.args.vararg or node.args.kwarg:
        return  # (the binding of the call says why; *args is refused where the body is lowered)
    this = node.args.args[0].id
    setattr(node, PRIVATE_SELF, this)

    def given_back(at: Any, value: Any = None) -> gast.Return:
        read: Any = gast.copy_location(gast.Name(id=this, ctx=gast.Load(), annotation=None, type_comment=None), at)
        setattr(read, GIVEN_BACK, True)
        if giving:
            value = value if value is not None else gast.copy_location(gast.Constant(value=None, kind=None), at)
            read = gast.copy_location(gast.Tuple(elts=[read, value], ctx=gast.Load()), at)
        return gast.copy_location(gast.Return(value=read), at)

    def rewrite(block: list) -> None:
        for position, stmt in enumerate(block):
            if isinstance(stmt, gast.Return):
                block[position] = given_back(stmt, stmt.value)
            elif not isinstance(stmt, (gast.FunctionDef, gast.ClassDef)):
                for field in ("body", "orelse"):
                    inner = getattr(stmt, field, None)
                    if isinstance(inner, list):
                        rewrite(inner)
    rewrite(node.body)
    if not node.body or not isinstance(node.body[-1], gast.Return):
        node.body.append(given_back(node.body[-1] if node.body else node))
