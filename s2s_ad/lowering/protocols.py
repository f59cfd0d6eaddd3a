"""``len(obj)``, ``for item in obj``, ``obj[k]`` of an object of the user's class that defines
``__len__``, ``__iter__``, ``__getitem__``: the method followed while lowering.

A part of ``calls.CallConverter`` (``conversion.ConverterPart``).  Input: a
``Record`` of kind "object" (made in the body, passed in, or a module-level
object) and the protocol Python reads it by.  Output: what Python's call of the
class's method gives, read while lowering: ``len`` a constant (a loop over
``range(len(obj))`` needs one), iteration the items ``__iter__`` walks (a record
of known length: ``return iter([self.a, self.b])``, ``return iter(self.items)``),
an index the value ``__getitem__`` returns (``return self.items[i]``,
``return self.a if i == 0 else self.b``).  A method is followed where its body is
one ``return`` statement (after a docstring), read with ``self`` bound to the
record and its parameters to the arguments; an ``__iter__`` may also be a
generator of ``yield``, ``yield from`` and ``for`` loops over containers of
known length (its items read in order: ``_yielded``).  Anything else is a
located ``TransformError`` naming the class and the method's line.  Where the class defines no such method, ``user_classes.read_as_container``
says what Python does (TypeError, or a method s2s_ad does not follow).
"""
from __future__ import annotations

import inspect
import operator
from typing import Any, Optional

import gast
import numpy as np

from ..core import ir
from ..rules import registry as rules
from ..frontend.conversion import Choice, ConverterPart, Record
from ..frontend.parse import parse_function, parse_rewritten
from ..frontend.user_classes import read_as_container

_FOLDED = {gast.Lt: operator.lt, gast.LtE: operator.le, gast.Gt: operator.gt, gast.GtE: operator.ge,
           gast.Eq: operator.eq, gast.NotEq: operator.ne}


class ContainerProtocols(ConverterPart):
    """Follows ``__len__``, ``__iter__`` and ``__getitem__`` of objects of the user's classes."""

    def __init__(self, host: Any, statics: Any) -> None:
        super().__init__(host)
        self.statics = statics

    def refuse(self, record: Record, protocol: str, node: Any) -> None:
        """Refuse reading ``record`` by ``protocol`` where Python would raise TypeError, or call a
        method this part does not follow (``user_classes.read_as_container``)."""
        refused = read_as_container(record.kind, record.cls, protocol, self.statics.class_attribute)
        if refused is not None:
            raise self.error(refused[0], refused[1], node)

    def _method(self, record: Record, name: str) -> Any:
        """The function ``name`` of the record's class where it is an object of the user's class that
        defines it as a function of Python code; None otherwise."""
        if record.kind not in ("object", "dataclass"):
            return None
        method = self.statics.class_attribute(record.cls, name)
        return method if inspect.isfunction(method) else None

    def length(self, record: Record, node: Any) -> Optional[ir.Const]:
        """``len(obj)``: the constant ``__len__`` returns; None where the class defines no ``__len__``
        as a function (then refused or read as a container's, by ``refuse``)."""
        method = self._method(record, "__len__")
        if method is None:
            return None
        value = self._follow(record, method, [], node)
        if isinstance(value, ir.Call) and value.fn is len and len(value.args) == 1 \
                and isinstance(value.args[0], ir.Display):
            value = ir.Const(len(value.args[0].items))
        if _array_length(value):
            return value  # len(self.coefficients) of an array: its length where it runs, as Python's
        if not (isinstance(value, ir.Const) and type(value.value) is int and value.value >= 0):
            raise self.error(f"len() of an object of the class {record.cls.__name__}", f"{record.cls.__name__}."
                             "__len__ gives a value not known while transforming; s2s_ad needs lengths as "
                             "constants (return a number, or len() of a list, tuple or dict the object holds)",
                             node)
        return value

    def iterated(self, record: Record, node: Any) -> Record:
        """What ``for item in obj`` walks: the items ``__iter__`` returns an iterator over, as a record
        of known length; ``record`` itself where it is not an object of the user's class (a list, a
        dict: read as Python reads them); refused where the class defines no ``__iter__``."""
        walked = self.walked(record, node)
        if not isinstance(walked, Record):
            raise self.error(f"iteration of an object of the class {record.cls.__name__} here",
                             f"{record.cls.__name__}.__iter__ returns an iterator over an array, whose items a "
                             "for loop walks but sorted(), list(), tuple() and unpacking need known while "
                             "transforming; loop over it with for, or return iter() of a list or tuple display "
                             "(iter([self.a, self.b]))", node)
        return walked

    def walked(self, record: Record, node: Any) -> Any:
        """``iterated``, or the array (an expression of the lowered IR) ``__iter__`` returns ``iter()`` of
        (``return iter(self.coefficients)``): a ``for`` loop walks it at run time, as Python walks it."""
        method = self._method(record, "__iter__")
        if method is None:
            self.refuse(record, "iteration", node)
            return record
        walked = self._follow(record, method, [], node, iterator=True)
        if isinstance(walked, ir.Display):
            walked = Record(walked.kind, list if walked.kind == "list" else tuple, tuple(range(len(walked.items))),
                            walked.items)
        if isinstance(walked, Record) and walked.kind == "object":
            return self.walked(walked, node)  # iter(self.inner): another object of yours
        if isinstance(walked, (ir.Var, ir.Call)) or (isinstance(walked, ir.Const) and isinstance(walked.value, np.ndarray)):
            return walked  # an array (its kind checked where the loop reads it)
        if not isinstance(walked, Record) or walked.kind not in ("list", "tuple", "namedtuple", "dict"):
            raise self.error(f"iteration of an object of the class {record.cls.__name__}",
                             f"{record.cls.__name__}.__iter__ returns an iterator over a value whose items are not "
                             "known while transforming; return iter() of an array, of a list or tuple display "
                             "(iter([self.a, self.b])) or of a list or tuple the object holds", node)
        if walked.kind == "dict":  # iter(self.table): its keys
            return Record("tuple", tuple, tuple(range(len(walked.keys))), tuple(ir.Const(k) for k in walked.keys))
        return walked

    def item(self, record: Record, index: Any, node: Any) -> Optional[Any]:
        """``obj[index]``: what ``__getitem__`` returns; None where the class defines no ``__getitem__``
        as a function (then refused or read as a container's, by ``refuse``)."""
        method = self._method(record, "__getitem__")
        if method is None:
            return None
        return self._follow(record, method, [index], node)

    def _follow(self, record: Record, method: Any, args: list, node: Any, iterator: bool = False) -> Any:
        """The value ``method`` returns, called on ``record`` with ``args``, read while lowering: its body
        one ``return`` statement.  ``iterator``: it returns ``iter(...)`` of a container, given back."""
        owner = f"{record.cls.__name__}.{method.__name__}"
        generator = bool(method.__code__.co_flags & inspect.CO_GENERATOR)
        if method.__code__.co_flags & inspect.CO_ASYNC_GENERATOR or (generator and not iterator):
            raise self.error(f"{owner}, a generator", "s2s_ad follows a generator only as __iter__; return "
                             "iter() of a list or tuple display (iter([self.a, self.b])) or of a list the "
                             "object holds (iter(self.items))", node)
        yields: dict[int, str] = {}
        parsed = parse_rewritten(method, lambda d: _unyielded(d, yields)) if generator else parse_function(method)
        if self.resolver.record:
            self.resolver.snapshot.record_code(method)  # (redefined later: the code is old)
            self.resolver.snapshot.include(parsed.resolver.snapshot)
        definition = parsed.node
        body = list(definition.body)
        if body and isinstance(body[0], gast.Expr) and isinstance(body[0].value, gast.Constant) \
                and isinstance(body[0].value.value, str):
            body = body[1:]
        positional = definition.args.args
        if generator:
            return self._yielded(record, owner, parsed, body, yields)
        if len(body) != 1 or not isinstance(body[0], gast.Return) or body[0].value is None:
            raise parsed.error(f"{owner}, called by {_protocol(method.__name__)}", "s2s_ad follows such a method "
                               "where its body is one return statement; write it so, or call a method of "
                               f"{record.cls.__name__} that returns what you need", body[0] if body else None)
        if definition.args.vararg or definition.args.kwonlyargs or len(positional) != 1 + len(args):
            raise parsed.error(f"{owner}", f"it must take self and {len(args)} argument(s) by position, as "
                               "Python calls it", definition)
        names = {p.id: value for p, value in zip(positional, [record, *args])}
        make: Any = type(self.host)  # (an ExpressionConverter, with these names in scope)
        converter = make(lambda name: names.get(name), parsed.resolver, parsed.error)
        returned = body[0].value
        if iterator:
            if not (isinstance(returned, gast.Call) and isinstance(returned.func, gast.Name) and returned.func.id == "iter"
                    and returned.func.id not in names and len(returned.args) == 1 and not returned.keywords
                    and parsed.resolver.lookup("iter") == (True, iter)):
                raise parsed.error(f"{owner}", "s2s_ad follows an __iter__ that returns iter() of a list or tuple "
                                   "display (iter([self.a, self.b])) or of a list or tuple the object holds "
                                   "(iter(self.items))", returned)
            returned = returned.args[0]
        return _folded(converter, returned)

    def _yielded(self, record: Record, owner: str, parsed: Any, body: list, yields: dict[int, str]) -> ir.Display:
        """What an ``__iter__`` written as a generator yields, in order, read while lowering: its body
        ``yield`` and ``yield from`` statements, and ``for`` loops over containers of known length whose
        bodies are such statements (``for layer in self.layers: yield layer``); a bare ``return`` ends it.
        ``yields``: the statements that were ``yield`` ("yield") or ``yield from`` ("from"), by ``id``."""
        positional = parsed.node.args.args
        if parsed.node.args.vararg or parsed.node.args.kwonlyargs or len(positional) != 1:
            raise parsed.error(owner, "it must take self alone, as Python calls it", parsed.node)
        names: dict[str, Any] = {positional[0].id: record}
        make: Any = type(self.host)
        converter = make(lambda name: names.get(name), parsed.resolver, parsed.error)
        items: list = []

        def walk(statements: list) -> bool:  # (False: a return ended it)
            for stmt in statements:
                if yields.get(id(stmt)) == "yield":
                    items.append(converter.convert(stmt.value))
                elif yields.get(id(stmt)) == "from":
                    items.extend(self._known_items(converter.convert(stmt.value), owner, parsed, stmt))
                elif isinstance(stmt, gast.For) and isinstance(stmt.target, gast.Name) and not stmt.orelse:
                    for item in self._known_items(converter.convert(stmt.iter), owner, parsed, stmt):
                        names[stmt.target.id] = item
                        if not walk(stmt.body):
                            return False
                elif isinstance(stmt, gast.Return) and (stmt.value is None or isinstance(stmt.value, gast.Constant)
                                                        and stmt.value.value is None):
                    return False
                else:
                    raise parsed.error(f"{owner}, a generator called by iteration", "s2s_ad follows a generator "
                                       "__iter__ whose body is yield, yield from, and for loops over a list or "
                                       "tuple of known length of such statements (for a in self.items: yield a); "
                                       "or return iter([self.a, self.b])", stmt)
            return True

        walk(body)
        return ir.Display("tuple", tuple(items))

    def _known_items(self, value: Any, owner: str, parsed: Any, stmt: Any) -> tuple:
        """The items of a container of known length a generator walks (``yield from self.items``)."""
        if isinstance(value, ir.Display):
            return value.items
        if isinstance(value, Record) and value.kind == "object":
            value = self.iterated(value, stmt)
        if isinstance(value, Record) and value.sequence:
            return value.items
        if isinstance(value, Record) and value.kind == "dict":
            return tuple(ir.Const(k) for k in value.keys)
        raise parsed.error(f"{owner}, a generator called by iteration", "its loop or yield from walks a value "
                           "whose items are not known while transforming (an array, say); yield from a list or "
                           "tuple the object holds (for a in self.items: yield a), or return iter(self.v) of "
                           "an array, which a for loop walks", stmt)


def _unyielded(definition: gast.FunctionDef, yields: dict[int, str]) -> None:
    """A generator's ``yield v`` and ``yield from v`` statements made assignments of ``v`` (so that the
    subset check reads the body), each noted in ``yields`` by its ``id``; a ``yield`` elsewhere stays
    (and is refused by the check); a final ``return None`` added, as the check asks."""
    for node in list(gast.walk(definition)):
        for field in ("body", "orelse"):
            statements = getattr(node, field, None)
            if not isinstance(statements, list):
                continue
            for i, stmt in enumerate(statements):
                value = stmt.value if isinstance(stmt, gast.Expr) else None
                if isinstance(value, (gast.Yield, gast.YieldFrom)) and value.value is not None:
                    target = gast.Name(id="_yielded", ctx=gast.Store(), annotation=None, type_comment=None)
                    statements[i] = gast.copy_location(gast.Assign(targets=[target], value=value.value,
                                                                   type_comment=None), stmt)
                    yields[id(statements[i])] = "yield" if isinstance(value, gast.Yield) else "from"
    end = gast.Return(value=gast.Constant(value=None, kind=None))
    definition.body.append(gast.copy_location(end, definition.body[-1]))


def _array_length(value: Any) -> bool:
    """Whether ``value`` is a length computed where it runs: ``len()`` of an array, or a sum or product
    of such lengths and non-negative integer constants (never negative, as ``len`` requires)."""
    if isinstance(value, ir.Const):
        return type(value.value) is int and value.value >= 0
    if not isinstance(value, ir.Call) or isinstance(value, Record):
        return False
    if value.fn is len and len(value.args) == 1:
        return isinstance(value.args[0], (ir.Var, ir.Call)) and not isinstance(value.args[0], Record)
    # (a sum, or a product: the rules' facts; both keep non-negative integers non-negative)
    closed = rules.fact(value.fn, "sum") == "+" or rules.fact(value.fn, "factors") == (0, 1)
    return closed and len(value.args) == 2 and all(
        _array_length(a) for a in value.args) and not all(isinstance(a, ir.Const) for a in value.args)


def _folded(converter: Any, node: Any) -> Any:
    """``node`` converted, a conditional expression whose test compares constants (``i == 0`` with
    ``i`` a constant index) decided now."""
    if isinstance(node, gast.IfExp):
        test = _folded(converter, node.test)
        if isinstance(test, ir.Const):
            return _folded(converter, node.body if test.value else node.orelse)
        return Choice(test, _folded(converter, node.body), _folded(converter, node.orelse))
    if isinstance(node, gast.Compare) and len(node.ops) == 1 and type(node.ops[0]) in _FOLDED:
        left, right = converter.convert(node.left), converter.convert(node.comparators[0])
        if isinstance(left, ir.Const) and isinstance(right, ir.Const) and all(
                type(v) in (int, str, bool, type(None)) for v in (left.value, right.value)):
            return ir.Const(bool(_FOLDED[type(node.ops[0])](left.value, right.value)))
    return converter.convert(node)


def _protocol(name: str) -> str:
    return {"__len__": "len()", "__iter__": "iteration", "__getitem__": "an index"}.get(name, name)
