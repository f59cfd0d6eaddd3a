"""gast expressions → IR expression trees, every name resolved.

Input: a gast expression and a way to look names up (the local variables in
scope, then the globals, closure cells and builtins of the function).
Output: an IR tree (``ir.Call`` of the callable itself, recognised by
identity; ``ir.Const`` for numbers and arrays) or, for constructs that need
statements, a pending node that ``lower.py`` expands: ``Choice`` (a
conditional expression, ``and``/``or``) and ``Inline`` (a call of a nested
function); a container with a static structure is a ``Record``.  Calls are checked here: a function with no rule and no readable
source is refused with a hint.

``lower.py`` flattens these trees for user code; ``template_ir`` uses them,
unflattened, for the bodies of rule templates.
"""
from __future__ import annotations

import ast
import dataclasses
import functools
import inspect
import operator
import os
import sysconfig
import textwrap
import types
from dataclasses import dataclass
from typing import Any, Callable, Optional

import gast
import numpy as np

from . import ir, rules, runtime
from .draws import DRAW_METHODS, unseeded
from .errors import TransformError
from .parse import ABSENT, Resolver, parse_function, readable_source, transparent

BINARY_OPERATORS = {
    gast.Add: operator.add, gast.Sub: operator.sub, gast.Mult: operator.mul,
    gast.Div: operator.truediv, gast.FloorDiv: operator.floordiv, gast.Mod: operator.mod,
    gast.Pow: operator.pow, gast.MatMult: operator.matmul,
    # Bitwise operators combine masks (``(x > 0) & (x < 1)``, ``~mask``): no derivative, but they run.
    gast.BitAnd: operator.and_, gast.BitOr: operator.or_, gast.BitXor: operator.xor,
}
UNARY_OPERATORS = {gast.USub: operator.neg, gast.UAdd: operator.pos, gast.Not: operator.not_,
                   gast.Invert: operator.invert}
COMPARISONS = {
    gast.Lt: operator.lt, gast.LtE: operator.le, gast.Gt: operator.gt, gast.GtE: operator.ge,
    gast.Eq: operator.eq, gast.NotEq: operator.ne, gast.Is: operator.is_, gast.IsNot: operator.is_not,
}
# Words for naming intermediate values after the operation that made them.
_CONSTANT_TYPES = (int, float, complex, bool, str, type(None), np.generic)
# Types that are values in everyday code: dtype=float, .astype(np.float32).
_TYPE_VALUES = (int, float, complex, bool)


def _is_plain_constant(value: Any) -> bool:
    if isinstance(value, tuple):
        return all(_is_plain_constant(v) for v in value)
    if isinstance(value, type):
        return value in _TYPE_VALUES or issubclass(value, np.generic)
    return isinstance(value, _CONSTANT_TYPES) or value is Ellipsis or isinstance(value, np.dtype)


@dataclass(frozen=True)
class Nested:
    """A function defined in the body: calls to it are inlined (see ``Lowering.inline``).

    ``closed``: a module-level function inlined because it was passed a function; it sees its own
    names and the module's, not the caller's."""

    node: Any
    closed: bool = False
    scope: Optional[tuple] = None  # passed as an argument: the names it reads, as where it was passed


@dataclass(frozen=True, eq=False)
class Known:
    """A function passed by name as an argument (``apply(np.sin, x)``): inside the inlined callee,
    calls of the parameter call it."""

    value: Any


@dataclass(frozen=True)
class Dispatch:
    """A name bound to different nested functions on different paths (a def redefined in a
    branch or a loop): ``var`` holds, at run time, the tag of the one bound on the path taken
    (``Lowering.defs`` maps tags to functions).  ``missing`` says why a call cannot be made,
    if some path binds no function to the name ("" if every path binds one)."""

    var: ir.Var
    tags: frozenset
    missing: str


@dataclass(frozen=True)
class Inline:
    """A call of a nested function (or of the one a ``Dispatch`` picks), before flattening."""

    function: Any  # Nested or Dispatch
    args: tuple


@dataclass(eq=False)
class Once:
    """A value read by more than one operation, before flattening: flattened the first time, then
    its atom is reused (the middle operand of ``a < b < c`` is evaluated once, as in Python)."""

    value: Any
    atom: Any = None


@dataclass(frozen=True, eq=False)
class Record:
    """A container with a static structure while lowering: a dict with constant keys, a list or
    tuple of known length, a namedtuple, dataclass or object (see ``containers.py``).  ``items``
    holds one IR value (or nested ``Record``) per key; reads with a constant key, attribute reads
    and ``.items()`` resolve here, so no container reaches the generated code."""

    kind: str  # as containers.Tree.kind
    cls: type
    keys: tuple
    items: tuple

    @property
    def fields(self) -> bool:
        return self.kind in ("namedtuple", "dataclass", "object", "registered")

    @property
    def sequence(self) -> bool:
        return self.kind in ("list", "tuple", "namedtuple")

    def get(self, key: Any) -> Any:
        """The item at ``key`` (a negative position counts from the end of a sequence); KeyError if none."""
        if self.kind in ("list", "tuple", "namedtuple") and isinstance(key, int) and not isinstance(key, bool):
            return self.items[key]  # IndexError is a LookupError too
        for k, item in zip(self.keys, self.items):
            if type(k) is type(key) and k == key:
                return item
        raise KeyError(key)

    def replaced(self, key: Any, item: Any) -> "Record":
        """A copy with ``key`` set (added to a dict if new)."""
        keys, items = list(self.keys), list(self.items)
        for i, k in enumerate(keys):
            if type(k) is type(key) and k == key:
                items[i] = item
                return Record(self.kind, self.cls, self.keys, tuple(items))
        return Record(self.kind, self.cls, self.keys + (key,), self.items + (item,))


_DICT_METHODS = ("items", "keys", "values", "get")
# Methods of a constant string computed while lowering (pure, and their results are constants too).
_STRING_METHODS = frozenset({"lower", "upper", "casefold", "strip", "lstrip", "rstrip", "split", "rsplit",
                             "startswith", "endswith", "replace", "removeprefix", "removesuffix"})


@dataclass(frozen=True)
class Choice:
    """``then if test else orelse`` before flattening; ``None`` means "the test's value"
    (``a and b`` is ``Choice(a, b, None)``, ``a or b`` is ``Choice(a, None, b)``)."""

    test: Any
    then: Any
    orelse: Any


class ExpressionConverter:
    """Turns gast expressions into IR trees, resolving every name it meets.

    ``local`` maps a name to the IR value it currently holds, or ``None`` if
    the name is not local; ``error`` builds a located ``TransformError``.
    """

    def __init__(self, local: Callable[[str], Optional[ir.Expr]], resolver: Resolver,
                 error: Callable[[str, str, Any], TransformError], check_calls: bool = True) -> None:
        """``check_calls`` is False for rule templates, which may call anything (runtime helpers)."""
        self.check_calls = check_calls
        self.local = local
        self.resolver = resolver
        self.error = error

    def convert(self, node: Any) -> ir.Expr:
        method = getattr(self, "_" + type(node).__name__, None)
        if method is None:
            raise self.error(f"the expression {type(node).__name__}", "rewrite it with simpler expressions", node)
        return method(node)

    def _Constant(self, node: gast.Constant) -> ir.Expr:
        return ir.Const(node.value)

    def _Name(self, node: gast.Name) -> ir.Expr:
        value = self.local(node.id)
        if isinstance(value, (Nested, Known)):
            raise self.error(f"the function {node.id!r} used as a value", "call it, or pass it straight to a "
                             "function of yours as an argument", node)
        if value is not None:
            return value
        return self._global_value(node.id, self._lookup(node), node)

    def _lookup(self, node: gast.Name) -> Any:
        found, value = self.resolver.lookup(node.id)
        if not found:
            raise self.error(f"the name {node.id!r}", "it is not defined where the function is", node)
        return value

    def _global_value(self, name: str, value: Any, node: Any) -> ir.Expr:
        if _is_plain_constant(value):
            return ir.Const(value)
        if isinstance(value, np.ndarray):
            return ir.Const(value)
        raise self.error(f"the value of {name!r} ({type(value).__name__})",
                         "only numbers and arrays can be used as values; functions must be called", node)

    def _UnaryOp(self, node: gast.UnaryOp) -> ir.Expr:
        operand = self.convert(node.operand)
        fn = UNARY_OPERATORS.get(type(node.op))
        if fn is None:
            raise self.error(f"the operator {type(node.op).__name__}", "use arithmetic", node)
        if fn is operator.neg and isinstance(operand, ir.Const) and isinstance(operand.value, (int, float)):
            return ir.Const(-operand.value)
        if fn is operator.not_ and isinstance(operand, ir.Const) and isinstance(operand.value, (bool, str, type(None))):
            return ir.Const(not operand.value)  # structure (not returned, after a branch a constant chose)
        return ir.Call(fn, (operand,))

    def _BinOp(self, node: gast.BinOp) -> ir.Expr:
        fn = BINARY_OPERATORS.get(type(node.op))
        if fn is None:
            raise self.error(f"the operator {type(node.op).__name__}", "use np.left_shift/np.right_shift", node)
        return ir.Call(fn, (self.convert(node.left), self.convert(node.right)))

    def _Compare(self, node: gast.Compare) -> Any:
        """``a < b <= c`` is ``a < b and b <= c`` with ``b`` evaluated once, ``c`` only if ``a < b``."""
        if len(node.ops) == 1:
            known = self._static_membership(node.ops[0], node.left, node.comparators[0])
            if known is not None:
                return known
        operands = [self.convert(node.left)] + [self.convert(c) for c in node.comparators]
        if len(operands) == 2:
            return self._comparison(node.ops[0], operands[0], operands[1])
        shared = [operands[0]] + [v if ir.is_atom(v) else Once(v) for v in operands[1:-1]] + [operands[-1]]
        links = [self._comparison(op, a, b) for op, a, b in zip(node.ops, shared, shared[1:])]
        result = links[-1]
        for link in reversed(links[:-1]):
            result = self._make_choice(link, result, None, node)
        return result

    def _comparison(self, op_node: Any, left: Any, right: Any) -> ir.Expr:
        op = type(op_node)
        if op in (gast.In, gast.NotIn) and isinstance(right, Record) and right.kind == "dict" \
                and isinstance(left, ir.Const):
            inside = any(type(k) is type(left.value) and k == left.value for k in right.keys)
            return ir.Const(inside if op is gast.In else not inside)
        if isinstance(left, ir.Const) and isinstance(right, ir.Const) and all(
                isinstance(v, (str, type(None), bool)) for v in (left.value, right.value)):
            # structure, not data (config.activation == "tanh", cfg.extra is None): known while lowering
            if op in COMPARISONS:
                return ir.Const(bool(COMPARISONS[op](left.value, right.value)))
            if isinstance(left.value, str) and isinstance(right.value, str):
                return ir.Const((left.value in right.value) == (op is gast.In))
        if op in (gast.In, gast.NotIn) and isinstance(left, ir.Const) and isinstance(left.value, (str, type(None))):
            items = right.items if isinstance(right, ir.Display) else \
                tuple(map(ir.Const, right.value)) if isinstance(right, ir.Const) and type(right.value) is tuple else None
            if items is not None and all(isinstance(i, ir.Const) and isinstance(i.value, (str, type(None)))
                                         for i in items):  # kind in ("l1", "huber"): structure too
                return ir.Const(any(i.value == left.value for i in items) == (op is gast.In))
        if op is gast.In:
            return ir.Call(operator.contains, (right, left))
        if op is gast.NotIn:
            return ir.Call(operator.not_, (ir.Call(operator.contains, (right, left)),))
        return ir.Call(COMPARISONS[op], (left, right))

    def _Tuple(self, node: gast.Tuple) -> ir.Expr:
        return ir.Display("tuple", tuple(self.convert(e) for e in node.elts))

    def _List(self, node: gast.List) -> ir.Expr:
        return ir.Display("list", tuple(self.convert(e) for e in node.elts))

    def _Slice(self, node: gast.Slice) -> ir.Expr:
        parts = (node.lower, node.upper, node.step)
        return ir.Slice(*(None if p is None else self.convert(p) for p in parts))

    def _Subscript(self, node: gast.Subscript) -> ir.Expr:
        joined = self._index_call(node)
        if joined is not None:
            return joined
        found, item = self._static_item(node)
        if found:  # COEF[1], CONFIG["scale"]: a module-level list or dict of numbers, read now
            return self._global_value(f"{_spelled(node.value)}[...]", item, node)
        value, index = self.convert(node.value), self.convert(node.slice)
        if isinstance(value, Record):
            return self._record_item(value, index, node)
        return ir.Call(operator.getitem, (value, index))

    def _index_call(self, node: gast.Subscript) -> Optional[ir.Expr]:
        """``np.r_[a, b]``, ``np.c_[a, b]``: an object indexed to build an array, declared
        ``index_call=`` in templates/, is a call of the function declared on the list of the items;
        None for other subscripts."""
        if not isinstance(node.value, (gast.Attribute, gast.Name)):
            return None
        found, obj = self._static(node.value)
        helper = rules.fact(obj, "index_call") if found else None
        if helper is None:
            return None
        parts = node.slice.elts if isinstance(node.slice, gast.Tuple) else [node.slice]
        items = tuple(self.convert(p) for p in parts)
        if any(isinstance(i, ir.Slice) or (isinstance(i, ir.Const) and isinstance(i.value, str)) for i in items):
            spelled = ast.unparse(gast.gast_to_ast(node.value))
            raise self.error(f"{spelled}[...] with a slice or a directive string", "the items may be numbers and "
                             "arrays; write a range as np.arange(start, stop) or np.linspace(...), and join along "
                             "another axis with np.concatenate(..., axis=...)", node)
        return ir.Call(helper, (ir.Display("list", items),))

    def _Dict(self, node: gast.Dict) -> Record:
        record = Record("dict", dict, (), ())
        for key, value in zip(node.keys, node.values):
            if key is None:  # {**params, "w": w}
                unpacked = self.convert(value)
                if not (isinstance(unpacked, Record) and unpacked.kind == "dict"):
                    raise self.error("**unpacking of something other than a dict", "write the items out", node)
                for k, item in zip(unpacked.keys, unpacked.items):
                    record = record.replaced(k, item)
                continue
            converted = self.convert(key)
            if not (isinstance(converted, ir.Const) and _hashable(converted.value)):
                raise self.error("a dict with a key computed at run time", "dict keys must be constants "
                                 "(strings or numbers), so that the dict's structure is known", key)
            record = record.replaced(converted.value, self.convert(value))
        return record

    def _record_item(self, record: Record, index: Any, node: Any) -> Any:
        """``record[index]``: resolved now for a constant index; a sequence of plain values may also be
        indexed at run time."""
        if isinstance(index, ir.Const) and _hashable(index.value):
            try:
                return record.get(index.value)
            except LookupError:
                raise self.error(f"the item [{index.value!r}]", f"the {record.cls.__name__} has no such item "
                                 f"(its keys are {', '.join(map(repr, record.keys))})", node) from None
        if record.sequence and isinstance(index, ir.Slice) and all(
                p is None or isinstance(p, ir.Const) for p in (index.lower, index.upper, index.step)):
            part = slice(*(None if p is None else p.value for p in (index.lower, index.upper, index.step)))
            items = record.items[part]
            return Record("tuple" if record.kind == "namedtuple" else record.kind,
                          tuple if record.kind == "namedtuple" else record.cls, tuple(range(len(items))), items)
        if record.sequence and not any(isinstance(i, Record) for i in record.items):
            return ir.Call(operator.getitem, (ir.Display("tuple" if record.kind != "list" else "list",
                                                         record.items), index))
        if record.kind == "dict":
            raise self.error("a dict read with a key computed at run time", "the keys must be constants "
                             "(d['w']) so that the dict's structure is known; loop over d.items() instead", node)
        raise self.error(f"an index computed at run time into a {record.cls.__name__}", "its items are "
                         "containers, so the index must be a constant; loop over it (for item in ...) instead", node)

    def _IfExp(self, node: gast.IfExp) -> Any:
        return self._make_choice(self.convert(node.test), self.convert(node.body), self.convert(node.orelse), node)

    def _BoolOp(self, node: gast.BoolOp) -> Any:
        values = [self.convert(v) for v in node.values]
        result = values[-1]
        for value in reversed(values[:-1]):
            if isinstance(node.op, gast.And):
                result = self._make_choice(value, result, None, node)
            else:
                result = self._make_choice(value, None, result, node)
        return result

    def _make_choice(self, test: Any, then: Any, orelse: Any, node: Any) -> Any:
        if not self.check_calls:  # a rule template: straight-line expressions only
            raise self.error("a conditional expression in a rule", "write the rule with np.where", node)
        return Choice(test, then, orelse)

    def static(self, node: Any) -> tuple[bool, Any]:
        return self._static(node)

    def _static(self, node: Any) -> tuple[bool, Any]:
        """Resolve ``np.linalg.norm``-style chains of modules and classes."""
        if isinstance(node, gast.Name):
            if self.local(node.id) is not None:
                return False, None
            return True, self._lookup(node)
        if isinstance(node, gast.Attribute):
            found, base = self._static(node.value)
            if found and getattr(base, "generated_parts", None) and node.attr in base.generated_parts:
                return True, getattr(base, node.attr)  # d_helper.forward in code we generated
            if found and isinstance(base, (types.ModuleType, type)):
                if not hasattr(base, node.attr):
                    raise self.error(f"{getattr(base, '__name__', base)}.{node.attr}", "no such attribute", node)
                value = getattr(base, node.attr)
                self.resolver.snapshot.record_attribute(base, node.attr, value)  # config.K = 5.0 later
                return True, value
        return False, None

    def _static_callee(self, node: Any) -> tuple[bool, Any]:
        """``_static``, a function held in a module-level dict under a constant key (``LOSSES["l2"](r)``,
        or ``LOSSES[kind](r)`` with ``kind`` a string argument the code is specialised on), and
        ``getattr(np, name)`` of a module or class by a constant name; the snapshot records the item
        or attribute, so rebinding it regenerates the code."""
        if isinstance(node, gast.Call):
            return self._static_getattr(node)
        key = self._constant_key(node.slice) if isinstance(node, gast.Subscript) else ABSENT
        if key is ABSENT:
            return self._static(node)
        found, table = self._static(node.value)
        if not (found and type(table) is dict):
            return False, None
        if key not in table:
            raise self.error(f"the item [{key!r}] of a module-level dict", "it has no such key (its keys are "
                             f"{', '.join(map(repr, table))})", node)
        if not callable(table[key]):
            return False, None
        self.resolver.snapshot.record_global(table, key, table[key])
        return True, table[key]

    def _unpartial(self, partial: functools.partial, args: list, kwargs: tuple, node: Any) -> tuple[Any, list, tuple]:
        """A call of ``functools.partial(fn, *fixed, **named)`` as the call of ``fn`` it makes: the
        fixed arguments (numbers, strings, arrays: constants) first, the named ones unless given."""
        fixed = list(partial.args) + list(partial.keywords.values())
        if not all(_is_plain_constant(v) or isinstance(v, np.ndarray) for v in fixed):
            raise self.error(f"the call of a functools.partial of {describe_callable(partial.func)}",
                             "only numbers, strings and arrays can be fixed by a partial that is called here; "
                             "pass the others as arguments", node)
        given = {name for name, _ in kwargs}
        named = tuple((name, ir.Const(value)) for name, value in partial.keywords.items() if name not in given)
        return partial.func, [ir.Const(v) for v in partial.args] + list(args), named + tuple(kwargs)

    def _static_item(self, node: gast.Subscript) -> tuple[bool, Any]:
        """``TABLE[key]`` for a module-level dict, list or tuple (or an item of one) and a constant
        key: the item, recorded in the snapshot so that changing it makes the code again."""
        key = self._constant_key(node.slice)
        if key is ABSENT:
            return False, None
        found, table = self._static_item(node.value) if isinstance(node.value, gast.Subscript) else \
            self._static(node.value)
        if not (found and type(table) in (dict, list, tuple)):
            return False, None
        try:
            item = table[key]
        except (KeyError, IndexError, TypeError):
            raise self.error(f"the item [{key!r}] of the module-level {type(table).__name__} "
                             f"{_spelled(node.value)}", "it has no such item", node) from None
        self.resolver.snapshot.record_item(table, key, item)
        return True, item

    def _static_membership(self, op: Any, left: Any, right: Any) -> Optional[ir.Const]:
        """``kind in ACTS`` (``not in``) with ``ACTS`` a module-level dict, list or tuple and ``kind`` a
        constant (a string argument the code is specialised on): known now, and recorded."""
        if not isinstance(op, (gast.In, gast.NotIn)):
            return None
        if not (isinstance(left, (gast.Name, gast.Constant)) and isinstance(right, (gast.Name, gast.Attribute))):
            return None  # (the left side is converted here: only where converting it again is harmless)
        found, table = self._static(right)
        if not (found and type(table) in (dict, list, tuple)):
            return None
        key = self.convert(left)
        if not (isinstance(key, ir.Const) and _hashable(key.value)):
            return None
        if isinstance(table, dict):
            self.resolver.snapshot.record_item(table, key.value, table.get(key.value, ABSENT))
        else:
            for index, item in enumerate(table):
                self.resolver.snapshot.record_item(table, index, item)
        return ir.Const((key.value in table) == isinstance(op, gast.In))

    def _constant_key(self, node: Any) -> Any:
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
        return ABSENT

    def _static_getattr(self, node: gast.Call) -> tuple[bool, Any]:
        """``getattr(np, name)`` called: the module's (or class's) attribute by a constant name."""
        found, fn = self._static(node.func)
        if not (found and fn is getattr and len(node.args) == 2 and not node.keywords):
            return False, None
        found, base = self._static(node.args[0])
        name = self._constant_key(node.args[1])
        if not (found and isinstance(base, (types.ModuleType, type)) and isinstance(name, str)):
            raise self.error("getattr of something other than a module or class by a constant name",
                             "call the function by name, or getattr(np, name) with name a string argument", node)
        if not hasattr(base, name):
            raise self.error(f"getattr({getattr(base, '__name__', base)}, {name!r})", "no such attribute", node)
        value = getattr(base, name)
        self.resolver.snapshot.record_attribute(base, name, value)
        return True, value

    def _Attribute(self, node: gast.Attribute) -> ir.Expr:
        found, value = self._static(node)
        if found:
            return self._global_value(node.attr, value, node)
        base = self.convert(node.value)
        if isinstance(base, Record):
            if base.fields and node.attr in base.keys:
                return base.get(node.attr)
            raise self.error(f"the attribute .{node.attr} of a {base.cls.__name__}", "it is not one of its "
                             f"data fields ({', '.join(map(str, base.keys)) or 'none'})", node)
        fn = rules.attribute_function(node.attr)
        if fn is None and isinstance(base, ir.Const) and not _is_plain_constant(base.value) \
                and not isinstance(base.value, np.ndarray):
            raise self.error(f"the attribute .{node.attr} of a {type(base.value).__name__} object", "s2s_ad reads "
                             "the attributes of self and of dataclasses, namedtuples and registered types "
                             "(s2s_ad.containers.register), not of other objects they hold; make it a dataclass, "
                             "or pass what you need as arguments", node)
        if fn is None:
            raise self.error(f"the attribute .{node.attr}", "only array attributes with a rule (.T, .shape, "
                             ".ndim, .size) can be read", node)
        return ir.Call(fn, (base,))

    def _Call(self, node: gast.Call) -> ir.Expr:
        args = [self._argument(a) for a in node.args]
        kwargs = tuple((k.arg, self._argument(k.value)) for k in node.keywords)
        if any(k.arg is None for k in node.keywords):
            raise self.error("**kwargs in a call", "pass keyword arguments one by one", node)
        callee = self.local(node.func.id) if isinstance(node.func, gast.Name) else None
        if isinstance(callee, (Nested, Dispatch)):
            if kwargs:
                raise self.error(f"keyword arguments to the nested function {node.func.id!r}", "pass them by "
                                 "position", node)
            return Inline(callee, tuple(args))
        if isinstance(callee, Record):
            return self._record_method(callee, "__call__", args, kwargs, node)  # self(x)
        if isinstance(callee, (Known, ir.Const)) and callable(callee.value):  # a function (or type) passed in
            found, fn = True, callee.value
        else:
            found, fn = self._static_callee(node.func)
        while found and isinstance(fn, functools.partial):  # SCALE3 = functools.partial(scaled, c=3.0)
            fn, args, kwargs = self._unpartial(fn, args, kwargs, node)
        values = args + [v for _, v in kwargs]
        if any(isinstance(a, (Nested, Known)) for a in values) or (found and is_user_function(fn) and any(
                isinstance(a, ir.Const) and isinstance(a.value, type) for a in values)):  # apply(float, x)
            return self._passes_functions(fn if found else None, args, kwargs, node)
        if not found and isinstance(node.func, gast.Attribute) and rules.method_function(node.func.attr) is None:
            fn = self.resolve(node.func)  # a method of a module-level object: settings.factor(2)
            found = callable(fn)
        if not found:
            owner = self.convert(node.func.value) if isinstance(node.func, gast.Attribute) else None
            if isinstance(owner, Record):
                return self._record_method(owner, node.func.attr, args, kwargs, node)
            if isinstance(owner, ir.Const) and type(owner.value) is str and node.func.attr in _STRING_METHODS \
                    and not kwargs and all(isinstance(a, ir.Const) for a in args):
                # a string argument the code is specialised on: kind.lower(), ops.split(",")
                try:
                    return ir.Const(getattr(owner.value, node.func.attr)(*(a.value for a in args)))
                except (TypeError, ValueError) as exc:
                    raise self.error(f"the call of str.{node.func.attr}", str(exc), node) from None
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
            self._check_callee(fn, node, tuple(args), kwargs)
            if is_user_function(fn):
                return ir.Call(fn, self._bind_user_call(fn, args, kwargs, node))
        return ir.Call(fn, tuple(args), kwargs)

    def effect(self, node: gast.Call) -> ir.Call:
        """A call made for its effect (``print(...)``, ``logging.info(...)``, ``warnings.warn(...)``):
        it runs where the primal computation runs and carries no derivative.  Any other call
        made for its effect is refused: it may change what the function computes."""
        fn = self.resolve(node.func)
        if not _reports(fn):
            name = (f"{node.func.id}()" if isinstance(node.func, gast.Name) else
                    f".{node.func.attr}()" if isinstance(node.func, gast.Attribute) else "a function")
            raise self.error(f"the call of {name} made for its effect", "a differentiated function must be pure: "
                             "only print, assert, logging and warnings.warn may run for their effect; assign "
                             "the result of other calls to a name", node)
        if any(k.arg is None for k in node.keywords) or any(isinstance(a, gast.Starred) for a in node.args):
            raise self.error("*args or **kwargs in a call", "pass the arguments one by one", node)
        args = tuple(self.convert(a) for a in node.args[fn is runtime.raise_exception:])
        if fn is runtime.raise_exception:  # generated code differentiated again: the class raised, by name
            args = (ir.Const(self.resolve(node.args[0])),) + args
        return ir.Call(fn, args, tuple((k.arg, self.convert(k.value)) for k in node.keywords))

    def _JoinedStr(self, node: gast.JoinedStr) -> ir.Expr:
        """An f-string (parse.py lets through only those printed, logged or asserted with)."""
        layout, values = [], []
        for part in node.values:
            if isinstance(part, gast.Constant):
                layout.append(part.value)
                continue
            spec = part.format_spec
            if spec is not None and not all(isinstance(v, gast.Constant) for v in spec.values):
                raise self.error("an f-string with a computed format", "write the format out", part)
            text = "".join(v.value for v in spec.values) if spec is not None else ""
            layout.append((part.conversion, text))
            values.append(self.convert(part.value))
        return ir.Call(runtime.formatted, (ir.Const(tuple(layout)),) + tuple(values))

    def resolve(self, node: Any) -> Any:
        """What a name or a chain of attributes of a global means (``LOG.info``), else None."""
        if isinstance(node, gast.Name):
            found, value = (False, None) if self.local(node.id) is not None else self.resolver.lookup(node.id)
            return value if found else None
        if isinstance(node, gast.Attribute):
            base = self.resolve(node.value)
            return getattr(base, node.attr, None) if base is not None else None
        return None

    def _argument(self, node: Any) -> Any:
        """An argument of a call: its IR value, or the function it names (``np.sin``, ``helper``, a
        nested def or lambda) as a ``Known`` or ``Nested`` for ``_passes_functions``."""
        if isinstance(node, gast.Name) and isinstance(self.local(node.id), (Nested, Known)):
            return self.local(node.id)
        if isinstance(node, (gast.Name, gast.Attribute, gast.Subscript)):  # ... or ACTS[kind]
            found, value = self._static_callee(node) if isinstance(node, gast.Subscript) else self._static(node)
            if found and callable(value) and not isinstance(value, type) and not hasattr(value, "function_for"):
                return Known(value)
        return self.convert(node)

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

    def _record_method(self, record: Record, name: str, args: list, kwargs: tuple, node: Any) -> Any:
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
        method = self._class_attribute(record.cls, name) if record.fields else None
        if isinstance(method, staticmethod):
            return self._call_value(method.__func__, args, kwargs, node)
        if inspect.isfunction(method):  # self.method(x): the class's function, with self
            return self._call_value(method, [record] + args, kwargs, node)
        raise self.error(f"the method .{name}() of a {record.cls.__name__}", "a dict supports d[k], d.get, "
                         ".items(), .keys(), .values() and .copy(); a dataclass, namedtuple or object its fields "
                         "and the methods defined in its class", node)

    def _class_attribute(self, cls: type, name: str) -> Any:
        """``cls.name`` as Python finds it (through the bases), recorded in the snapshot: the code is
        generated again if the method is redefined or overridden later."""
        for klass in cls.__mro__:
            scope = vars(klass)
            self.resolver.snapshot.record_global(scope, name, scope.get(name, ABSENT))
            if name in scope:
                return scope[name]
        return None

    def _call_value(self, fn: Any, args: list, kwargs: tuple, node: Any) -> Any:
        """A call of a known function (a method, a function an object holds) with converted arguments."""
        if self.check_calls:
            self._check_callee(fn, node, tuple(args), kwargs)
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
            return ir.Const(len(record.keys))
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
        elif dataclasses.is_dataclass(fn):
            fields = tuple(f.name for f in dataclasses.fields(fn))
            if not all(f.init for f in dataclasses.fields(fn)) or hasattr(fn, "__post_init__"):
                raise self.error(f"making a {fn.__name__}", "a dataclass with __post_init__ or init=False fields "
                                 "runs code s2s_ad does not read; make it outside the function", node)
            kind = "dataclass"
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
                                      Inline, Record)):
                if not _is_plain_constant(value):
                    raise self.error(f"the default value of {name!r} in {describe_callable(fn)}",
                                     "only numbers, strings, None and tuples of them can be defaults", node)
                value = ir.Const(value)
            values.append(value)
        return tuple(values)

    def _method(self, node: gast.Call, args: list) -> tuple[Any, list]:
        func = node.func
        if not isinstance(func, gast.Attribute):
            raise self.error(f"a call of {type(func).__name__}", "call functions by name (or as an item of a "
                             "module-level dict with a constant key: LOSSES[\"l2\"](r))", node)
        entry = rules.method_function(func.attr)
        if entry is None and func.attr in DRAW_METHODS:  # rng.normal(size=3): replayed in every pass (draws.py)
            return runtime.draw, [self.convert(func.value), ir.Const(func.attr)] + args
        if entry is None:
            raise self.error(f"the method .{func.attr}()", "only array methods with a rule can be called "
                             "(sum, mean, reshape, ...); call the NumPy function instead", node)
        fn, pack = entry
        if pack and len(args) > 1:
            args = [ir.Display("tuple", tuple(args))]
        return fn, [self.convert(func.value)] + args

    def _check_callee(self, fn: Any, node: Any, args: tuple, kwargs: tuple) -> None:
        name = describe_callable(fn)
        if _hashable(fn):
            self.resolver.snapshot.record_rules(fn)  # a rule registered later must be picked up
        seed_keyword = rules.fact(fn, "seeded_by")
        seeds = list(args[:1]) + [v for k, v in kwargs if k == seed_keyword]
        if unseeded(seed_keyword, len(args), tuple(k for k, _ in kwargs),
                    any(isinstance(v, ir.Const) and v.value is None for v in seeds)):
            raise self.error(f"{name}() without a seed", "a generator made from fresh entropy draws other "
                             "numbers in each pass of a derivative (the self-check, hessian, jacobian), which "
                             "nothing can replay; give it a seed, or make it outside the function and pass it "
                             "in as an argument (its draws are replayed)", node)
        refusal = rules.fact(fn, "refused")  # declared in templates/ (print, eval), with what to do instead
        if refusal:
            raise self.error(f"the call of {name}", refusal, node)
        rule = rules.adjoint_rule(fn) or rules.tangent_rule(fn)
        if rule is not None:
            try:
                rules.bind_arguments(rule, args, kwargs)
            except rules.ArgumentMismatch as exc:
                raise self.error(f"the call of {name}", f"it passes {exc}", node) from None
            refusal = rules.argument_refusal(fn, tuple(_constant_or_not(a) for a in args),
                                             tuple((k, _constant_or_not(v)) for k, v in kwargs))
            if refusal:
                raise self.error(f"the call of {name}", refusal, node)
            return
        if rules.is_nondifferentiable(fn):
            return
        if hasattr(fn, "function_for"):  # an s2s_ad gradient, called inside a differentiated function
            raise self.error(f"the call of the gradient {fn!r}", "differentiating a gradient in reverse mode would "
                             "be reverse over reverse, which s2s_ad does not do; take higher derivatives with "
                             "grad(grad(f)), s2s_ad.hessian or s2s_ad.jvp of the gradient", node)
        if isinstance(fn, type) and isinstance(getattr(fn, "__init__", None), types.FunctionType) \
                and not rules.is_known(fn) and not _builtin_type(fn):  # a class of Python code
            raise self.error(f"making a {fn.__name__} object", "only dicts, lists, tuples, namedtuples and "
                             "dataclasses (whose fields are known) can be made in a differentiated function "
                             f"({fn.__name__} is a class, and objects are not differentiated); make the object "
                             "outside it and pass it in (its methods and attributes can be used)", node)
        # A function with no rule and no source is refused only if an argument depends on the inputs
        # (analysis.check_constant_calls): otherwise it is a constant and simply runs.


def _constant_or_not(expr: Any) -> Any:
    """The value of a constant argument (a number, a string, a function named in the call), else
    ``rules.NOT_CONSTANT``."""
    return expr.value if isinstance(expr, ir.Const) else rules.NOT_CONSTANT


def _spelled(node: Any) -> str:
    """A name, attribute chain or subscript as written (for messages)."""
    return gast.unparse(node).strip()


def _builtin_type(cls: type) -> bool:
    """Python's and NumPy's own types (``np.float32(2.0)``, ``complex(1, 2)``): a call of one that does
    not depend on the inputs is a constant and simply runs, as any function's does."""
    return cls.__module__ == "builtins" or issubclass(cls, np.generic)


def _reports(fn: Any) -> bool:
    """Whether ``fn`` only reports (prints, logs, warns): what may be called for its effect.  Declared
    ``reports=True`` in templates/ (``print``, ``logging.info``), or a method whose class, or a class
    it derives from, declares its method of that name so (``LOG.info`` for a ``logging.Logger``)."""
    if rules.fact(fn, "reports"):
        return True
    owner, name = getattr(fn, "__self__", None), getattr(fn, "__name__", None)
    if owner is None or isinstance(owner, types.ModuleType) or not isinstance(name, str):
        return False
    return any(rules.fact(vars(cls).get(name), "reports") for cls in type(owner).__mro__)


def _hashable(value: Any) -> bool:
    try:
        hash(value)
    except TypeError:
        return False
    return True


def is_user_function(fn: Any) -> bool:
    """A plain Python function with no rule: transformed and called through its own adjoint."""
    return isinstance(fn, types.FunctionType) and not rules.is_known(fn)


def missing_rule(fn: Any) -> Optional[str]:
    """Why a call of ``fn`` whose arguments depend on the inputs cannot be differentiated: it has
    no rule and no source to transform.  None if it can be."""
    if rules.is_known(fn) or not callable(fn) or hasattr(fn, "function_for"):
        return None
    name = describe_callable(fn)
    owner = getattr(fn, "__self__", None)
    if isinstance(getattr(fn, "__func__", None), types.FunctionType) and not isinstance(owner, types.ModuleType):
        return (f"it is a method of a {type(owner).__name__} object, and methods are not differentiated; "
                f"write the computation as a def that takes the object's numbers as arguments")
    if isinstance(fn, type) and not issubclass(fn, np.generic) and fn.__module__ != "builtins":
        return (f"{name} is a class, and objects are not differentiated; pass their numbers to the function "
                f"as arguments")
    if is_user_function(fn):
        if not readable_source(fn):
            return f"its source cannot be read and it has no derivative rule; add one with @s2s_ad.adjoint({name})"
        return _library_source_refused(fn, name)
    return f"it has no derivative rule; add one with @s2s_ad.adjoint({name}) (see docs/rules.md, 'Adding a rule')"


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


def _library_source_refused(fn: types.FunctionType, name: str) -> Optional[str]:
    """Why a library's function (SciPy's, the standard library's: installed, not the user's) with no
    rule cannot be transformed from its source, if its source is outside the subset; None if it is
    in it.  The refusal then names the user's call and the missing rule, not a line of the library."""
    if not library_code(fn):
        return None
    try:
        parse_function(fn)
    except TransformError as exc:
        where = f"{os.path.basename(exc.filename or '?')}:{exc.line}"
        return (f"it has no derivative rule, and its source cannot be differentiated ({exc.construct} at "
                f"{where}); add a rule with @s2s_ad.adjoint({name}) (see docs/rules.md, 'Adding a rule')")
    return None


def library_code(fn: Any) -> bool:
    """Whether ``fn`` was defined in an installed package or Python's standard library."""
    filename = getattr(getattr(fn, "__code__", None), "co_filename", "")
    return bool(filename) and os.path.abspath(filename).startswith(_LIBRARY_FOLDERS)


_LIBRARY_FOLDERS = tuple(sorted({os.path.join(os.path.abspath(path), "") for key in ("stdlib", "platstdlib",
                                                                                     "purelib", "platlib")
                                 if (path := sysconfig.get_paths().get(key))}))


def describe_callable(fn: Any) -> str:
    """``np.sin``, ``math.sin``, ``mymodule.helper``: how a user would spell ``fn``."""
    name = getattr(fn, "__qualname__", None) or getattr(fn, "__name__", None) or repr(fn)
    module = getattr(fn, "__module__", None) or ("numpy" if isinstance(fn, np.ufunc) else "")
    module = {"numpy": "np", "builtins": "", "_operator": "operator"}.get(module, module)
    return f"{module}.{name}" if module else name


_TEMPLATE_IR: dict[int, tuple[rules.Rule, tuple]] = {}


def _template_ir(rule: rules.Rule) -> tuple[tuple[str, ir.Expr], ...]:
    params = set(rule.inputs) | {rule.result} | set(rule.seeds)
    local: set[str] = set()

    def lookup(name: str) -> Optional[ir.Expr]:
        return ir.Var(name) if name in params or name in local else None

    def error(construct: str, hint: str, node: Any) -> TransformError:
        return TransformError(construct, hint, filename=rule.filename, line=getattr(node, "lineno", 0) + rule.line - 2)

    converter = ExpressionConverter(lookup, Resolver(rule.namespace, {}), error, check_calls=False)
    statements = []
    for stmt in rule.body:
        if not (isinstance(stmt, gast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], gast.Name)):
            raise error("a statement in a rule", "a rule body holds only assignments name = expression", stmt)
        statements.append((stmt.targets[0].id, converter.convert(stmt.value)))
        local.add(stmt.targets[0].id)
    return tuple(statements)


def template_ir(rule: rules.Rule) -> tuple[tuple[str, ir.Expr], ...]:
    """The rule's body as ``(name, IR tree)`` pairs, names as in the template."""
    cached = _TEMPLATE_IR.get(id(rule))
    if cached is None or cached[0] is not rule:
        cached = _TEMPLATE_IR[id(rule)] = (rule, _template_ir(rule))
    return cached[1]


def instantiate(tree: ir.Expr, mapping: dict[str, ir.Expr]) -> ir.Expr:
    """A template's expression with its names replaced by the call's, and the helpers it calls
    folded where their declared ``folds`` says so for the constants they get."""
    return fold_declared(ir.substitute(tree, mapping))


def fold_declared(expr: ir.Expr) -> ir.Expr:
    """``expr`` with every call of a helper declared ``folds=`` (templates/) replaced by the
    simpler expression its fold chooses for the call's constant arguments:
    ``expand_reduced(m, 1, True)`` is ``m``, ``broadcast_reduced(g, a, None, False)`` is
    ``np.full(np.shape(a), g)``.  Calls whose deciding arguments are not constants stay."""
    return ir.transform(expr, _fold_call)


def _fold_call(expr: ir.Expr) -> Optional[ir.Expr]:
    if not isinstance(expr, ir.Call):
        return None
    choose = rules.fact(expr.fn, "folds")
    if choose is None:
        return None
    try:
        bound = inspect.signature(expr.fn).bind(*expr.args, **dict(expr.kwargs))
    except TypeError:
        return None  # (the call itself would raise: let it, at run time)
    bound.apply_defaults()
    arguments = {name: value if isinstance(value, (ir.Var, ir.Const, ir.Call, ir.Slice, ir.Display)) else ir.Const(value)
                 for name, value in bound.arguments.items()}
    constants = {}
    for name in inspect.signature(choose).parameters:
        value = arguments.get(name)
        if not isinstance(value, ir.Const):
            return None
        constants[name] = value.value
    template = choose(**constants)
    if template is None:
        return None
    params, body = _fold_template(template)
    return ir.substitute(body, {name: arguments[name] for name in params})


_FOLD_TEMPLATES: dict[Any, tuple[tuple[str, ...], ir.Expr]] = {}


def _fold_template(template: Callable) -> tuple[tuple[str, ...], ir.Expr]:
    """A fold's template (a function whose body is ``return <expression>`` of its parameters) as
    its parameters' names and the expression's IR, read once."""
    cached = _FOLD_TEMPLATES.get(template)
    if cached is not None:
        return cached
    lines, first_line = inspect.getsourcelines(template)
    filename = inspect.getsourcefile(template) or "<template>"
    node = gast.parse(textwrap.dedent("".join(lines))).body[0]
    params = tuple(arg.id for arg in node.args.args)
    returned = node.body[-1]

    def error(construct: str, hint: str, where: Any) -> TransformError:
        return TransformError(construct, hint, filename=filename, line=getattr(where, "lineno", 1) + first_line - 1)

    if len(node.body) != 1 or not isinstance(returned, gast.Return) or returned.value is None:
        raise error("the body of a fold", "a fold's template is one line: return <expression>", returned)
    converter = ExpressionConverter(lambda name: ir.Var(name) if name in params else None,
                                    Resolver(template.__globals__, {}), error, check_calls=False)
    cached = _FOLD_TEMPLATES[template] = (params, converter.convert(returned.value))
    return cached
