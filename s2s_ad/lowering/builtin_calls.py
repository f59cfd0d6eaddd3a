"""Calls of builtins and of classes decided while lowering: ``isinstance``, containers made, ``sorted``.

A part of ``calls.CallConverter`` (``conversion.ConverterPart``).  Input: the callable (a builtin,
a class, a function with declared facts in templates/) and the call's converted arguments.  Output:
a constant where the answer is known now (``isinstance`` of a structure known while lowering, the
``len`` of a container); a ``Record`` for a container made in the body (``dict(a=...)``,
``Params(w=...)``, ``list``/``tuple`` of a container, ``sorted`` of one in the order Python's gives,
an object of the user's class, through ``object_calls``); or the call respelled as a template
declares it (``variadic``: ``max(a, b, c)``; ``respelled``: ``np.einsum``'s sublist form).
"""
from __future__ import annotations

import dataclasses
import inspect
from dataclasses import dataclass
from typing import Any, Callable, Optional

import gast
from ..core import ir
from ..rules import registry as rules
from ..frontend.callables import is_user_function
from ..frontend.conversion import (Choice, Converter, ConverterPart, Dispatch, Inline, Known, Nested, Record,
                                   is_plain_constant)
from ..frontend.parse import parse_function
from ..frontend.static_names import StaticNames
from ..core.containers import _HEAP_TYPE
from ..frontend.user_classes import is_plain_class, made_by_dataclass
from . import sorting
from .object_calls import ObjectCalls
from .protocols import ContainerProtocols


def _only_your_classes(cls: type) -> bool:
    """``cls`` and its bases are classes of Python code (``object`` aside): no number or array is one."""
    return is_plain_class(cls) and all(k is object or k.__flags__ & _HEAP_TYPE for k in cls.__mro__)

class BuiltinCalls(ConverterPart):
    """Decides calls of builtins and classes while lowering, where it can."""

    def __init__(self, host: Converter, statics: StaticNames, objects: ObjectCalls,
                 protocols: ContainerProtocols) -> None:
        super().__init__(host)
        self.statics = statics
        self.objects = objects  # (an object of the user's class made, a dataclass replaced)
        self.protocols = protocols  # (len, iteration of an object of the user's class: its methods)

    def isinstance_known(self, node: gast.Call) -> Optional[ir.Const]:
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
        elif isinstance(value, (ir.Var, ir.Const, ir.Call)) and all(
                _only_your_classes(c) for c in (classes if isinstance(classes, tuple) else (classes,))):
            return ir.Const(False)  # a number or an array, never an object of your class (isinstance(o, Vec))
        else:
            return None
        return ir.Const(issubclass(cls, classes))

    def construct(self, fn: Any, args: list, kwargs: tuple, node: Any) -> Optional[Any]:
        """Containers made in the body: ``dict(a=..)``, ``Params(w=.., b=..)`` (a dataclass or
        namedtuple), ``len`` and ``list``/``tuple`` of a container; None for other calls."""
        record = args[0] if len(args) == 1 and isinstance(args[0], Record) else None
        if fn is dataclasses.replace and record is not None and record.kind == "dataclass":
            return self.objects.replaced(record, kwargs, node)
        if fn is len and record is not None and not kwargs:
            length = self.protocols.length(record, node)  # len(obj): its class's __len__, followed
            if length is not None:
                return length
            self.protocols.refuse(record, "len()", node)
            return ir.Const(len(record.keys))
        if (fn is sorted or fn in (list, tuple)) and record is not None and not kwargs:
            record = self.protocols.iterated(record, node)  # (an object's attributes are not its items: its __iter__'s)
        if fn is sorted and record is not None and not kwargs:  # (rule templates: sorted(D) of a module's dict)
            return self.sorted_now(record, kwargs, node)
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
            return self.objects.made_object(fn, args, kwargs, node)
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

    def sorted_now(self, iterable: Any, kwargs: tuple, node: Any) -> Optional[Record]:
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
        iterable = self.protocols.iterated(iterable, node)  # (an object's attributes are not its items: its __iter__'s)
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

    def respelled(self, respell: Callable, args: list) -> list:
        """The positional arguments of a call as the function's declared ``respelled`` spells them
        (np.einsum's sublist form as subscripts): it is given the constants' values and a marker for
        each other argument, and gives back values and markers, or None to keep the call as written."""
        markers = [_Marker(i) for i in range(len(args))]
        given = [_constant_value(a, m) for a, m in zip(args, markers)]
        spelled = respell(*given)
        if spelled is None:
            return args
        return [args[v.position] if isinstance(v, _Marker) else ir.Const(v) for v in spelled]

    def variadic(self, fn: Any, args: list, node: Any) -> ir.Expr:
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
