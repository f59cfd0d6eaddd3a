"""``sorted`` of a container whose items are known while lowering: the order decided now.

A part of ``builtin_calls.BuiltinCalls``.  ``sorted(d)``, ``sorted(d.items())``, ``sorted(d.items(),
key=lambda kv: kv[0])``, ``sorted(names, key=len, reverse=True)``: the items of a dict with constant
keys (or of a list or tuple of known length) are put in order while lowering, so that the result is a
list of known length whose items are the container's own values (a derivative flows through each).
The order is what Python's own ``sorted`` gives (a stable sort, by the key, reversed if asked): Python
runs it here on the items' values where they are known (keys, strings, numbers written in the code),
each value computed at run time standing in as a ``_RunTime`` that refuses to be compared, converted
or computed with.  A key function is a lambda or ``def`` (of the function, or module-level) whose
body is one ``return`` of an expression read here (``kvs[0]``, ``len(name)``, ``-kv[1]`` of a
constant, ``name.lower()``); or a builtin such as ``len`` or ``str``, ``str.lower``, or an
``operator.itemgetter`` made outside the function.
An order that depends on a value computed at run time is refused before anything runs.

Input: the items (IR values), the key (a ``Nested``, a ``Known`` or None) and the ``reverse`` flag.
Output: the items in order, or the reason the order cannot be decided now.
"""
from __future__ import annotations

import ast
import builtins
import operator
import types
from typing import Any, Callable, Optional

import gast

from ..core import ir
from ..rules import registry as rules
from ..frontend.conversion import Known, Nested, Record, is_plain_constant


def runs_while_transforming(fn: Any) -> bool:
    """Whether a key function may call ``fn`` while the order is decided: a pure function of values
    known now (declared ``foldable`` with its template: ``len``, ``abs``, ``str``, ``round``...)."""
    try:
        return bool(rules.fact(fn, "foldable"))
    except TypeError:  # an unhashable value
        return False

_STRING_METHODS = frozenset({"lower", "upper", "casefold", "strip", "lstrip", "rstrip", "startswith", "endswith",
                             "replace", "split"})
_BINARY: dict[type, Callable[[Any, Any], Any]] = {gast.Add: operator.add, gast.Sub: operator.sub, gast.Mult: operator.mul, gast.Div: operator.truediv,
           gast.FloorDiv: operator.floordiv, gast.Mod: operator.mod, gast.Pow: operator.pow}
_UNARY: dict[type, Callable[[Any], Any]] = {gast.USub: operator.neg, gast.UAdd: operator.pos, gast.Not: operator.not_}
_COMPARE: dict[type, Callable[[Any, Any], Any]] = {gast.Eq: operator.eq, gast.NotEq: operator.ne, gast.Lt: operator.lt, gast.LtE: operator.le,
            gast.Gt: operator.gt, gast.GtE: operator.ge}


class DependsOnRunTime(Exception):
    """The order would depend on a value computed at run time."""


class Unreadable(Exception):
    """The key function holds what is not read while lowering."""


class _RunTime:
    """A value computed at run time, standing in while the order is decided: any use of it raises."""

    def _refuse(self, *args: Any, **kwargs: Any) -> Any:
        raise DependsOnRunTime()

    __lt__ = __le__ = __gt__ = __ge__ = __eq__ = __ne__ = _refuse
    __add__ = __radd__ = __sub__ = __rsub__ = __mul__ = __rmul__ = __truediv__ = __rtruediv__ = _refuse
    __floordiv__ = __rfloordiv__ = __mod__ = __rmod__ = __pow__ = __rpow__ = __neg__ = __pos__ = _refuse
    __abs__ = __bool__ = __float__ = __int__ = __index__ = __len__ = __hash__ = __round__ = _refuse
    __str__ = __repr__ = __format__ = __getitem__ = __iter__ = _refuse


class _Fields:
    """An object of the user's class or a dataclass (a record), standing in while the order is decided:
    its data fields read by name (``o.w``), each as ``known_value`` gives it; anything else (a property, a
    method, a comparison of objects, which would run the class's code) is not read."""

    def __init__(self, record: Record) -> None:
        self.cls = record.cls
        self.fields = dict(zip(record.keys, record.items))

    def __getattr__(self, name: str) -> Any:  # (operator.attrgetter("w") as a key)
        if name.startswith("__"):
            raise AttributeError(name)
        return self.field(name)

    def field(self, name: str) -> Any:
        if name not in self.fields:
            raise Unreadable(f"the key function reads .{name} of a {self.cls.__name__}, which is not one of its "
                             f"data fields ({', '.join(map(str, self.fields)) or 'none'})")
        return known_value(self.fields[name])

    def _refuse(self, *args: Any, **kwargs: Any) -> Any:
        raise Unreadable(f"the order would compare or compute with {self.cls.__name__} objects themselves, "
                         "which runs their class's code; sort by a field (key=lambda o: o.w)")

    __lt__ = __le__ = __gt__ = __ge__ = __eq__ = __ne__ = __hash__ = __bool__ = __len__ = __iter__ = _refuse
    __getitem__ = __add__ = __radd__ = __sub__ = __rsub__ = __mul__ = __rmul__ = __neg__ = _refuse


def known_value(item: Any) -> Any:
    """An item as Python sees it while lowering: a constant's value, a tuple or list of known length of
    such, an object's or dataclass's fields (``_Fields``), a ``_RunTime`` for anything computed at run
    time."""
    if isinstance(item, ir.Const):
        return item.value
    if isinstance(item, ir.Display):
        parts = [known_value(i) for i in item.items]
        return parts if item.kind == "list" else tuple(parts)
    if isinstance(item, Record) and item.kind in ("object", "dataclass"):
        return _Fields(item)
    if isinstance(item, Record) and item.kind == "namedtuple" and isinstance(item.cls, type) \
            and issubclass(item.cls, tuple):
        return item.cls(*(known_value(i) for i in item.items))  # (p.w and p[0], compared as a tuple)
    if isinstance(item, Record) and item.sequence:
        parts = [known_value(i) for i in item.items]
        return parts if item.kind == "list" else tuple(parts)
    return _RunTime()


def ordered(items: tuple, key: Any, reverse: bool, read_name: Callable[[str], Any],
            parse: Callable[[Any], Any]) -> tuple:
    """``items`` in the order ``sorted(items, key=key, reverse=reverse)`` gives.  ``read_name``: what a
    name the key reads (not a parameter) holds while lowering (a ``_RunTime`` if computed at run time);
    ``parse``: the parsed node of a function of the user's.  Raises ``DependsOnRunTime`` or
    ``Unreadable`` (with the reason), or what Python's sort raises (TypeError: not comparable)."""
    values = [known_value(i) for i in items]
    keys = [_key_function(key, read_name, parse)(v) for v in values] if key is not None else values
    order = builtins.sorted(range(len(items)), key=lambda i: keys[i], reverse=reverse)
    return tuple(items[i] for i in order)


def _key_function(key: Any, read_name: Callable[[str], Any], parse: Callable[[Any], Any]) -> Callable[[Any], Any]:
    if isinstance(key, Known):
        fn = key.value
        if runs_while_transforming(fn) or isinstance(fn, (operator.itemgetter, operator.attrgetter)) or (
                isinstance(fn, types.MethodDescriptorType) and fn.__objclass__ is str and fn.__name__ in _STRING_METHODS):
            return fn  # (str.lower)
        node = parse(fn)
        if node is None:
            raise Unreadable(f"the key function {getattr(fn, '__name__', fn)!r} is not one read while "
                             "transforming (len, str, abs, operator.itemgetter, or a lambda or def of yours "
                             "that returns an expression)")
        return _reader(node, lambda name: _global(fn, name))
    if isinstance(key, Nested):
        return _reader(key.node, read_name)
    raise Unreadable("the key is not a function named or written here")


def _global(fn: Any, name: str) -> Any:
    """What a name a module-level key function reads holds: a plain constant of its module, or a builtin
    it may call; anything else is not read."""
    scope = getattr(fn, "__globals__", {})
    if name in scope:
        value = scope[name]
        if is_plain_constant(value) or runs_while_transforming(value):
            return value
        raise Unreadable(f"the key function reads {name}, which is not a constant")
    value = getattr(builtins, name, None)
    if runs_while_transforming(value):
        return value
    raise Unreadable(f"the key function reads {name}, which is not read while transforming")


def _reader(node: Any, read_name: Callable[[str], Any]) -> Callable[[Any], Any]:
    body = [s for s in node.body if not (isinstance(s, gast.Expr) and isinstance(s.value, gast.Constant))]
    args = node.args
    if len(body) != 1 or not isinstance(body[0], gast.Return) or body[0].value is None or len(args.args) < 1 \
            or args.vararg or args.kwarg or args.kwonlyargs:
        raise Unreadable("the key function must take the item and return an expression (lambda kv: kv[0])")
    parameter = args.args[0].id
    # (defaults of further parameters: constants only, subset.py checks)
    defaults = {a.id: d.value for a, d in zip(args.args[len(args.args) - len(args.defaults):], args.defaults)
                if isinstance(d, gast.Constant)}
    expression = body[0].value

    def call(value: Any) -> Any:
        scope = {parameter: value, **defaults}
        return _evaluate(expression, lambda name: scope[name] if name in scope else read_name(name))
    return call


def _evaluate(node: Any, name: Callable[[str], Any]) -> Any:  # noqa: C901 (one case per kind of node)
    def ev(n: Any) -> Any:
        return _evaluate(n, name)
    if isinstance(node, gast.Constant):
        return node.value
    if isinstance(node, gast.Name):
        return name(node.id)
    if isinstance(node, (gast.Tuple, gast.List)):
        parts = [ev(e) for e in node.elts]
        return parts if isinstance(node, gast.List) else tuple(parts)
    if isinstance(node, gast.Subscript):
        if isinstance(node.slice, gast.Slice):
            s = node.slice
            return ev(node.value)[slice(*(ev(p) if p is not None else None for p in (s.lower, s.upper, s.step)))]
        return ev(node.value)[ev(node.slice)]
    if isinstance(node, gast.UnaryOp) and type(node.op) in _UNARY:
        return _UNARY[type(node.op)](ev(node.operand))
    if isinstance(node, gast.BinOp) and type(node.op) in _BINARY:
        return _BINARY[type(node.op)](ev(node.left), ev(node.right))
    if isinstance(node, gast.Compare) and len(node.ops) == 1 and type(node.ops[0]) in _COMPARE:
        return _COMPARE[type(node.ops[0])](ev(node.left), ev(node.comparators[0]))
    if isinstance(node, gast.IfExp):
        return ev(node.body) if ev(node.test) else ev(node.orelse)
    if isinstance(node, gast.Attribute) and isinstance(node.ctx, gast.Load):
        owner = ev(node.value)
        if isinstance(owner, _RunTime):
            raise DependsOnRunTime()
        if isinstance(owner, _Fields):
            return owner.field(node.attr)  # o.w: a field of an object of yours or of a dataclass
        if isinstance(owner, tuple) and node.attr in getattr(type(owner), "_fields", ()):
            return getattr(owner, node.attr)  # p.w of a namedtuple
    if isinstance(node, gast.Call) and not node.keywords:
        if isinstance(node.func, gast.Attribute):
            owner = ev(node.func.value)
            if isinstance(owner, _RunTime):
                raise DependsOnRunTime()
            if type(owner) is str and node.func.attr in _STRING_METHODS:
                return getattr(owner, node.func.attr)(*(ev(a) for a in node.args))
        else:
            fn = ev(node.func)
            if runs_while_transforming(fn):
                return fn(*(ev(a) for a in node.args))
    raise Unreadable(f"the key function holds {type(node).__name__.lower()} {_shown(node)}, which is not read "
                     "while transforming")


def _shown(node: Any) -> str:
    try:
        return repr(ast.unparse(gast.gast_to_ast(node)))
    except Exception:  # (only for a message)
        return ""


def runtime_name() -> Any:
    """What a name the key reads holds when it is computed at run time."""
    return _RunTime()


def reverse_flag(value: Optional[Any]) -> Optional[bool]:
    """``reverse=...`` as a constant truth value (None: computed at run time)."""
    if value is None:
        return False
    if isinstance(value, ir.Const) and isinstance(value.value, (bool, int)):
        return bool(value.value)
    return None
