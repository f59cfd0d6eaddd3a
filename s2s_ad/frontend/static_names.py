"""Names and attributes that mean the same thing at every call, resolved while lowering.

A part of ``expressions.ExpressionConverter`` (``conversion.ConverterPart``).
Input: a gast name, attribute chain, subscript or ``getattr`` call of user
code, and the converter's scope.  Output: ``(True, value)`` for what it names
where that is fixed while lowering (``np.linalg.norm``, a module-level dict's
item under a constant key, ``getattr(np, name)`` by a constant name, a class's
method), ``(False, None)`` where it depends on run-time values (a local name);
a located ``TransformError`` for a chain that names nothing.  Every global,
item and attribute read is recorded in the resolver's snapshot, so that
rebinding it later makes the code again.
"""
from __future__ import annotations

import types
from typing import Any, Optional, cast

import gast

from ..core import containers, ir, language
from ..core.identity import IdentitySet
from .conversion import ConverterPart, Record, hashable, is_plain_constant, spelled
from .snapshot import ABSENT

_NONE_SEEN = IdentitySet()  # (global_object's default: never changed, ``plus`` makes a new set)


class StaticNames(ConverterPart):
    """Resolves what names, attribute chains and constant-keyed items of globals mean."""

    def lookup(self, node: gast.Name) -> Any:
        """The value of a free name (a global, a closure cell, a builtin); refused if it has none."""
        found, value = self.resolver.lookup(node.id)
        if not found:
            raise self.error(f"the name {node.id!r}", "it is not defined where the function is", node)
        return value

    def static(self, node: Any) -> tuple[bool, Any]:
        """Resolve ``np.linalg.norm``-style chains of modules and classes."""
        if isinstance(node, gast.Name):
            if self.local(node.id) is not None:
                return False, None
            return True, self.lookup(node)
        if isinstance(node, gast.Attribute):
            found, base = self.static(node.value)
            if found and getattr(base, "generated_parts", None) and node.attr in base.generated_parts:
                return True, getattr(base, node.attr)  # d_helper.forward in code we generated
            if found and isinstance(base, (types.ModuleType, type)):
                if not hasattr(base, node.attr):
                    raise self.error(f"{getattr(base, '__name__', base)}.{node.attr}", "no such attribute", node)
                value = getattr(base, node.attr)
                self.resolver.snapshot.record_attribute(base, node.attr, value)  # config.K = 5.0 later
                return True, value
        return False, None

    def callee(self, node: Any) -> tuple[bool, Any]:
        """``static``, a function held in a module-level dict under a constant key (``LOSSES["l2"](r)``,
        or ``LOSSES[kind](r)`` with ``kind`` a string argument the code is specialised on), and
        ``getattr(np, name)`` of a module or class by a constant name; the snapshot records the item
        or attribute, so rebinding it regenerates the code."""
        if isinstance(node, gast.Call):
            return self.getattr_call(node)
        key: Any = self.constant_key(node.slice) if isinstance(node, gast.Subscript) else ABSENT
        if key is ABSENT:
            return self.static(node)
        found, table = self.static(node.value)
        if not (found and type(table) is dict):
            return False, None
        if key not in table:
            raise self.error(f"the item [{key!r}] of a module-level dict", "it has no such key (its keys are "
                             f"{', '.join(map(repr, table))})", node)
        if not callable(table[key]):
            return False, None
        self.resolver.snapshot.record_global(table, key, table[key])
        return True, table[key]

    def item(self, node: gast.Subscript) -> tuple[bool, Any]:
        """``TABLE[key]`` for a module-level dict, list or tuple (or an item of one) and a constant
        key: the item, recorded in the snapshot so that changing it makes the code again."""
        key = self.constant_key(node.slice)
        if key is ABSENT:
            return False, None
        found, table = self.item(node.value) if isinstance(node.value, gast.Subscript) else \
            self.static(node.value)
        if not (found and type(table) in (dict, list, tuple)):
            return False, None
        try:
            item = table[key]
        except (KeyError, IndexError, TypeError):
            raise self.error(f"the item [{key!r}] of the module-level {type(table).__name__} "
                             f"{spelled(node.value)}", "it has no such item", node) from None
        self.resolver.snapshot.record_item(table, key, item)
        return True, item

    def membership(self, op: Any, left: Any, right: Any) -> Optional[ir.Const]:
        """``kind in ACTS`` (``not in``) with ``ACTS`` a module-level dict, list or tuple and ``kind`` a
        constant (a string argument the code is specialised on): known now, and recorded."""
        if not isinstance(op, (gast.In, gast.NotIn)):
            return None
        if not (isinstance(left, (gast.Name, gast.Constant)) and isinstance(right, (gast.Name, gast.Attribute))):
            return None  # (the left side is converted here: only where converting it again is harmless)
        found, table = self.static(right)
        if not (found and type(table) in (dict, list, tuple)):
            return None
        key = self.convert(left)
        if not (isinstance(key, ir.Const) and hashable(key.value)):
            return None
        if isinstance(table, dict):
            self.resolver.snapshot.record_item(table, key.value, table.get(key.value, ABSENT))
        else:
            for index, item in enumerate(table):
                self.resolver.snapshot.record_item(table, index, item)
        return ir.Const((key.value in table) == isinstance(op, gast.In))

    def constant_table(self, value: Any) -> Optional[Record]:
        """A module-level dict, list or tuple of numbers and strings, used whole (``sorted(D)``, ``for
        k in D``): a record of its items as constants, every item and its keys recorded, so that
        changing or adding one makes the code again; None for other values."""
        if type(value) not in (dict, list, tuple):
            return None
        keys = tuple(value) if isinstance(value, dict) else tuple(range(len(value)))
        items = tuple(value.values()) if isinstance(value, dict) else tuple(value)
        if not all(isinstance(v, (int, float, str)) for v in keys + items):
            return None
        self.resolver.snapshot.record_keys(value)
        for key, item in zip(keys, items):
            self.resolver.snapshot.record_item(value, key, item)
        return Record(type(value).__name__, type(value), keys, tuple(ir.Const(v) for v in items))

    def objects_table(self, value: Any) -> Optional[Record]:
        """A module-level list, tuple or dict holding objects of the user's classes (``LAYERS =
        [Layer(0.5), Layer(2.0)]``): a record of its items as ``global_object`` reads them, every item
        recorded; None for other values (or where an item is of no kind s2s_ad reads)."""
        if type(value) not in (dict, list, tuple):
            return None
        held = self._held(value, _NONE_SEEN)
        if not (isinstance(held, Record) and any(isinstance(i, Record) and i.kind == "object" for i in held.items)):
            return None
        return held

    def global_object(self, value: Any, _seen: IdentitySet = _NONE_SEEN) -> Optional[Record]:
        """A module-level object of a class of Python code whose attributes can be read
        (``containers.unreadable_class``): a record of its attributes as constants (numbers, strings,
        arrays, functions; lists, tuples, dicts and such objects it holds, as records of theirs), read
        as they are now.  Each attribute, and the set of them, is recorded in the snapshot: rebinding
        one (``CALC.k = 2.0``) makes the code again, and an array it holds is the object's own, so a
        change made in place is read by the next call, as a module-level array's.  An attribute of
        another kind is left out (reading it is refused).  None for other values."""
        if not containers.user_object(value) or containers.unreadable_class(type(value)) is not None \
                or not isinstance(getattr(value, "__dict__", None), dict) or value in _seen:
            return None
        attributes = vars(value)
        self.resolver.snapshot.record_keys(attributes)
        keys, items = [], []
        for key, item in attributes.items():
            self.resolver.snapshot.record_item(attributes, key, item)
            held = self._held(item, _seen.plus(value))
            if held is not None:
                keys.append(key)
                items.append(held)
        return Record("object", type(value), tuple(keys), tuple(items))

    def _held(self, value: Any, seen: IdentitySet) -> Any:
        """What a module-level object's attribute is while lowering: a constant, a record, or None
        (a value of no kind s2s_ad reads)."""
        if is_plain_constant(value) or language.is_array_value(value) or (
                callable(value) and not isinstance(value, type) and not containers.user_object(value)):
            return ir.Const(value)
        if isinstance(value, type):
            return ir.Const(value)
        if type(value) in (list, tuple, dict) and value not in seen:
            keys = tuple(value) if isinstance(value, dict) else tuple(range(len(value)))
            values = tuple(value.values()) if isinstance(value, dict) else tuple(value)
            self.resolver.snapshot.record_keys(value)
            held = []
            for key, item in zip(keys, values):
                self.resolver.snapshot.record_item(value, key, item)
                converted = self._held(item, seen.plus(value))
                if converted is None:
                    return None
                held.append(converted)
            return Record(type(value).__name__, type(value), keys, tuple(held))
        return self.global_object(value, seen)

    def constant_key(self, node: Any) -> Any:
        """The value of a constant key (``"l2"``, ``1``, ``-1``, or a local name holding a string: an
        argument the code is specialised on), else ABSENT."""
        if isinstance(node, gast.UnaryOp) and isinstance(node.op, gast.USub) and isinstance(node.operand, gast.Constant) \
                and type(node.operand.value) is int:
            return -node.operand.value
        if isinstance(node, gast.Constant):
            return node.value
        if isinstance(node, gast.Name):
            value = self.local(node.id)
            if isinstance(value, ir.Const) and isinstance(value.value, str):
                return value.value
        if isinstance(node, gast.Attribute) and isinstance(node.value, gast.Name):  # ACTS[self.activation]
            owner = self.local(node.value.id)
            keys, items = getattr(owner, "keys", None), getattr(owner, "items", None)
            if isinstance(keys, tuple) and isinstance(items, tuple) and node.attr in keys:
                value = items[keys.index(node.attr)]
                if isinstance(value, ir.Const) and isinstance(value.value, str):
                    return value.value
        return ABSENT

    def getattr_call(self, node: gast.Call) -> tuple[bool, Any]:
        """``getattr(np, name)`` called: the module's (or class's) attribute by a constant name."""
        found, fn = self.static(node.func)
        if not (found and fn is getattr and len(node.args) == 2 and not node.keywords):
            return False, None
        found, base = self.static(node.args[0])
        name = self.constant_key(node.args[1])
        if not (found and isinstance(base, (types.ModuleType, type)) and isinstance(name, str)):
            raise self.error("getattr of something other than a module or class by a constant name",
                             "call the function by name, or getattr(np, name) with name a string argument", node)
        if not hasattr(base, name):
            raise self.error(f"getattr({getattr(base, '__name__', base)}, {name!r})", "no such attribute", node)
        value = getattr(base, name)
        self.resolver.snapshot.record_attribute(base, name, value)
        return True, value

    def resolve(self, node: Any) -> Any:
        """What a name or a chain of attributes of a global means (``LOG.info``), else None."""
        if isinstance(node, gast.Name):
            found, value = (False, None) if self.local(node.id) is not None else self.resolver.lookup(node.id)
            return value if found else None
        if isinstance(node, gast.Attribute):
            base = self.resolve(node.value)
            return getattr(base, node.attr, None) if base is not None else None
        return None

    def class_attribute(self, cls: type, name: str) -> Any:
        """``cls.name`` as Python finds it (through the bases), recorded in the snapshot: the code is
        generated again if the method is redefined or overridden later."""
        return self.next_attribute(cls, None, name)[1]

    def next_attribute(self, cls: type, after: Optional[type], name: str) -> tuple[Any, Any]:
        """``name`` as Python finds it for an object of ``cls`` in the classes of ``cls.__mro__`` after
        ``after`` (None: from ``cls`` itself), as ``super()`` in a method of ``after`` does, as
        ``(defining class, value)``, ``(None, None)`` if none defines it; recorded in the snapshot."""
        mro = cls.__mro__
        for klass in mro[mro.index(after) + 1:] if after is not None else mro:
            scope = cast(dict, vars(klass))  # (a mappingproxy: read only, as the snapshot reads it)
            self.resolver.snapshot.record_global(scope, name, scope.get(name, ABSENT))
            if name in scope:
                return klass, scope[name]
        return None, None
