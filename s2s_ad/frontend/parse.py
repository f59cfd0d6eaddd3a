"""Stage 1: a Python function → its gast tree and what its free names mean.

Input: a plain Python function object.  Output: a ``ParsedFunction`` with
the ``gast.FunctionDef`` (decorators dropped, line numbers made absolute in
the user's file), a resolver for the free names (globals, closure cells,
builtins), and the parameters.  Before returning, everyday statements are
rewritten into the subset (``sugar.py``: annotated assignments, lambdas),
and the whole body is checked against the subset, so that refusals come
early with file, line and column.

What is parsed is what runs: a function a decorator wrapped is read as its
wrapper (or, for a pass-through wrapper or ``functools.cache``, as the
function it calls), and the text read from the file must compile to the
code Python runs (a file edited after import is refused).  ``Snapshot``
records what every free name, attribute and rule meant, and the code of each
function read, for the caches.
"""
from __future__ import annotations

import ast
import builtins
import functools
import inspect
import linecache
import struct
import sys
import textwrap
import threading
import types
import weakref
from dataclasses import dataclass, field
from typing import Any, Callable, Optional, Union, cast

import gast

from ..rules import registry as rules
from ..core.errors import TransformError
from . import sugar
from .chains import flatten_long_chains
from ..core.nodes import all_nodes

# Statements and expressions the lowering understands.  Anything else is
# refused here with a reason and a hint (see ``_REFUSALS``).
_STATEMENTS = (gast.Assign, gast.AugAssign, gast.Return, gast.Pass, gast.Expr, gast.If, gast.For, gast.While,
               gast.Break, gast.Continue, gast.FunctionDef, gast.Assert, gast.Raise)
_EXPRESSIONS = (
    gast.BinOp, gast.UnaryOp, gast.Compare, gast.Call, gast.Attribute, gast.Subscript,
    gast.Name, gast.Constant, gast.Tuple, gast.List, gast.Slice, gast.keyword, gast.IfExp, gast.BoolOp,
    gast.ListComp, gast.Dict, gast.DictComp, gast.JoinedStr, gast.FormattedValue,
)
_REFUSALS: dict[type, tuple[str, str]] = {
    gast.Try: ("a try statement", "exceptions cannot be differentiated; check inputs before calling the gradient"),
    gast.With: ("a with statement", "move the context manager outside the differentiated function"),
    gast.Global: ("a global statement", "pass the value as an argument and return the result instead"),
    gast.Nonlocal: ("a nonlocal statement", "pass the value as an argument and return the result instead"),
    gast.Delete: ("a del statement", "drop the del; names go out of scope at return"),
    gast.AsyncFunctionDef: ("an async function", "differentiate a plain def"),
    gast.Lambda: ("a lambda that is not bound to a name", "bind it to a name in a statement of its own "
                  "(sq = lambda t: t * t) and call it by that name, or define the function with def"),
    gast.SetComp: ("a set comprehension", "sets cannot be differentiated"),
    gast.GeneratorExp: ("a generator expression", "write a list comprehension instead (sum, min, max, any, all, "
                        "list, tuple and sorted may take one: sum(v * v for v in x))"),
    gast.Yield: ("yield", "generators cannot be differentiated; return a value"),
    gast.YieldFrom: ("yield from", "generators cannot be differentiated; return a value"),
    gast.Await: ("await", "differentiate a plain synchronous function"),
    gast.Import: ("an import inside the function", "import at module level"),
    gast.ImportFrom: ("an import inside the function", "import at module level"),
    gast.ClassDef: ("a class definition", "define classes at module level"),
    gast.Set: ("a set", "sets cannot be differentiated"),
    gast.NamedExpr: ("the walrus operator :=", "assign in a statement of its own"),
    gast.Starred: ("a starred expression", "pass the arguments one by one"),
}


# The node types the whole-tree check looks at (gast makes a tree of its own classes only).  _SUSPECT:
# expressions _check_statements refuses where a statement holds them (so do chained comparisons).
_SUSPECT = {kind for kind in vars(gast).values() if isinstance(kind, type) and issubclass(kind, gast.expr)
            and not issubclass(kind, _EXPRESSIONS)}
_WATCHED = _SUSPECT | set(_REFUSALS) | {gast.For, gast.While, gast.Return, gast.Compare}

_ABSENT = object()
ABSENT = _ABSENT  # the same marker, for scopes other modules record (a class's methods)
_PLAIN = (int, float, complex, bool, str, bytes, tuple, type(None))


def _same(current: Any, recorded: Any) -> bool:
    """The same object, or an identical plain constant (re-running ``SCALE = 3.0`` changes nothing).

    Identical, not equal: ``-0.0`` is not ``0.0`` (``1 / x`` differs) and a NaN is the same as
    itself; floats are compared bit for bit, tuples item by item.
    """
    if current is recorded:
        return True
    if type(current) is not type(recorded) or not isinstance(current, _PLAIN):
        return False
    if isinstance(current, float):
        return struct.pack("<d", current) == struct.pack("<d", recorded)
    if isinstance(current, complex):
        return _same(current.real, recorded.real) and _same(current.imag, recorded.imag)
    if isinstance(current, tuple):
        return len(current) == len(recorded) and all(map(_same, current, recorded))
    return current == recorded


def _keyword_defaults(fn: types.FunctionType) -> Optional[tuple]:
    """``fn.__kwdefaults__`` as sorted (name, value) pairs (a copy: the dict may be changed in place)."""
    return tuple(sorted(fn.__kwdefaults__.items())) if fn.__kwdefaults__ else None


def _rules_of(fn: Any) -> tuple:
    """What the registry says of ``fn``: its rules, and whether it is declared non-differentiable."""
    return rules.adjoint_rule(fn), rules.tangent_rule(fn), rules.is_nondifferentiable(fn)


def _weakly(value: Any) -> Any:
    """A weak reference to a function (it may be the one whose snapshot this is), else a strong one."""
    if isinstance(value, types.FunctionType):
        return weakref.ref(value)
    return _Strong(value)


class _Strong:
    """A strong reference with the interface of ``weakref.ref``."""

    __slots__ = ("value",)

    def __init__(self, value: Any) -> None:
        self.value = value

    def __call__(self) -> Any:
        return self.value


# What a quick check's expression may raise where an object is gone or changed: a "no".
QUICK_ERRORS = (KeyError, AttributeError, ValueError, TypeError, IndexError)


def quick_function(name: str, parameters: str, tests: list[str], namespace: dict[str, Any],
                   result: str = "True") -> Callable:
    """``def name(parameters)`` returning ``result`` where every one of ``tests`` (expressions of the
    names of ``namespace``) is true, else False (also where one raises ``QUICK_ERRORS``)."""
    body = " and ".join(tests) or "True"
    exec(f"def {name}({parameters}):\n    try:\n        if {body}:\n            return {result}\n"
         f"    except QUICK_ERRORS:\n        pass\n    return False\n",
         {**namespace, "QUICK_ERRORS": QUICK_ERRORS}, namespace)  # noqa: S102 (our own text)
    return namespace.pop(name)


def quick_tests(names: tuple, attributes: tuple, codes: tuple, cells: tuple, defaults: tuple,
                generation: Optional[list], namespace: dict[str, Any]) -> list[str]:
    """``Snapshot.quick``'s tests, as expressions of names put in ``namespace``: ``_identity_check``'s,
    and those of ``cells`` (each closure cell still holding the very object recorded, a weakly held
    one still alive), of ``defaults`` (each helper's ``__defaults__`` the very tuple recorded, with no
    keyword-only defaults) and, where ``generation`` (a one-item list) is given, the rules'
    generation the one the rules were last found current at: all true only where ``Snapshot.valid``
    is.  The names start with ``q``."""
    namespace.update({"qABSENT": _ABSENT, "qrules": rules, "qgeneration": generation})
    tests = []
    for i, (function, code) in enumerate(codes):  # (a function gone is None: an AttributeError)
        namespace.update({f"qf{i}": function, f"qc{i}": code})
        tests.append(f"qf{i}().__code__ is qc{i}")
    tests += _identity_tests(names, attributes, (), namespace, prefix="q", absent="qABSENT")
    for i, (function, index, held) in enumerate(cells):
        namespace[f"qcf{i}"] = function
        if isinstance(held, _Strong):
            namespace[f"qcv{i}"] = held.value
            tests.append(f"qcf{i}().__closure__[{index}].cell_contents is qcv{i}")
        else:
            namespace[f"qch{i}"] = held
            tests.append(f"qch{i}() is not None and qcf{i}().__closure__[{index}].cell_contents is qch{i}()")
    for i, (function, recorded, keyword_defaults) in enumerate(defaults):
        namespace.update({f"qdf{i}": function, f"qdd{i}": recorded})
        tests.append(f"qdf{i}().__defaults__ is qdd{i} and not qdf{i}().__kwdefaults__")
    if generation is not None:
        tests.append("qrules._generation == qgeneration[0]")
    return tests


def _never() -> bool:
    return False


def _identity_check(names: tuple, attributes: tuple, codes: tuple = ()) -> Callable[[], bool]:
    """A function telling whether each ``(scope, name, value)`` of ``names`` still has
    ``scope.get(name) is value`` and each ``(owner, name, value)`` of ``attributes``
    ``getattr(owner, name) is value`` (``ABSENT`` standing for a missing one), and each
    ``(function, weakly; code)`` of ``codes`` still runs that code: one expression
    of identity tests, as snapshots are checked on every call of cached code.  False says only
    "not the same object": an equal constant rebound is for ``Snapshot.valid`` to accept.
    A module's attribute is read from its ``__dict__`` (what ``getattr`` finds there first), a
    missing key being a "no" (a module's ``__getattr__`` may still supply it: ``valid`` asks)."""
    namespace: dict[str, Any] = {"ABSENT": _ABSENT}
    body = " and ".join(_identity_tests(names, attributes, codes, namespace)) or "True"
    exec(f"def identical():\n    try:\n        return {body}\n    except KeyError:\n        return False\n",
         namespace)  # noqa: S102 (our own text: names of the namespace only)
    return namespace["identical"]


def _identity_tests(names: tuple, attributes: tuple, codes: tuple, namespace: dict[str, Any],
                    prefix: str = "", absent: str = "ABSENT") -> list[str]:
    """The tests of ``_identity_check``, as expressions of names put in ``namespace`` (each starting
    with ``prefix``; ``absent`` the name of ``ABSENT`` there)."""
    tests = []
    p, absent_name = prefix, absent
    for i, (function, code) in enumerate(codes):  # (a function gone is None, whose __code__ is absent)
        namespace.update({f"{p}f{i}": function, f"{p}c{i}": code})
        tests.append(f"getattr({p}f{i}(), '__code__', {absent_name}) is {p}c{i}")
    for i, (scope, name, value) in enumerate(names):
        namespace.update({f"{p}s{i}": scope, f"{p}k{i}": name, f"{p}v{i}": value})
        if value is _ABSENT:
            tests.append(f"{p}k{i} not in {p}s{i}")
        else:  # a subscript only where it cannot run code (a dict subclass may have __missing__)
            tests.append(f"{p}s{i}[{p}k{i}] is {p}v{i}" if type(scope) in (dict, types.MappingProxyType)
                         else f"{p}s{i}.get({p}k{i}, {absent_name}) is {p}v{i}")
    for i, (owner, name, value) in enumerate(attributes):
        namespace.update({f"{p}n{i}": name, f"{p}w{i}": value})
        if type(owner) is types.ModuleType and value is not _ABSENT:
            namespace[f"{p}o{i}"] = vars(owner)
            tests.append(f"{p}o{i}[{p}n{i}] is {p}w{i}")
        else:
            namespace[f"{p}o{i}"] = owner
            tests.append(f"getattr({p}o{i}, {p}n{i}, {absent_name}) is {p}w{i}")
    return tests


class _Items:
    """A list seen as a scope of its items (``get(index, default)``), for ``Snapshot.record_item``."""

    def __init__(self, items: list) -> None:
        self.items = items

    def get(self, index: int, default: Any) -> Any:
        return self.items[index] if -len(self.items) <= index < len(self.items) else default


def _attribute(owner: Any, name: str) -> Any:
    """``owner.name`` now, or ``_ABSENT``."""
    try:
        return getattr(owner, name)
    except AttributeError:
        return _ABSENT


class _Keys:
    """A module-level dict or list seen as a scope of one entry: its keys in order (a list's length),
    for ``Snapshot.record_keys``: adding a key later changes what a loop over it does."""

    def __init__(self, container: Any) -> None:
        self.container = container

    def get(self, _name: Any, _default: Any) -> Any:
        return tuple(self.container) if isinstance(self.container, dict) else len(self.container)


_KEYS = object()  # the name a container's keys are recorded under (no dict key or list index is it)


class Snapshot:
    """What the free names of generated code meant when it was generated.

    Generated code inlines module constants (``K``, ``config.K``, ``Cfg.K``),
    calls the adjoints of the helpers as they were, and splices in the rules
    registered for the functions it calls.  ``valid()`` tells whether every
    one still means the same (a global, a closure cell, an attribute of a
    module or class, a builtin not shadowed since, the rules of each callee),
    so a cache never serves code built for an old value or an old rule.
    """

    def __init__(self) -> None:
        # (id(scope), name) -> (scope, name, value): a module's globals and a name, or a module-level dict or
        # list (seen through ``_Items``) and a key
        self.names: dict[tuple[int, Any], tuple[Union[dict, _Items, _Keys], Any, Any]] = {}
        # (id(function), free name) -> (the function, weakly; its cell's index; the value, weakly if it can be).
        # Not the cell: a recursive closure's cell holds the function, which a cache keyed weakly on it
        # must not hold.
        self.cells: dict[tuple[int, str], tuple[Any, int, Any]] = {}
        self.attributes: dict[tuple[int, str], tuple[Any, str, Any]] = {}
        # id(fn) -> (fn, weakly where it can be: a recursive function's own snapshot names it;
        # its adjoint rule, tangent rule, non-differentiable)
        self.rules: dict[int, tuple] = {}
        self._rules_checked = -1  # rules.generation() when self.rules were last found current
        self._checks: Optional[tuple] = None  # names.values() as a tuple: valid() runs on every call
        # names and attributes compared by identity in one generated expression (see _identical)
        self._identical: Optional[Callable[[], bool]] = None
        self._quick: Optional[Callable[[], bool]] = None  # (see quick); None: to be made again
        self._generation = [-1]  # _rules_checked, where the function quick made reads it
        # id(fn) -> (fn, weakly; its __defaults__; its __kwdefaults__ as sorted items): a helper whose call
        # left parameters to their defaults, which the generated code holds as constants
        self.defaults: dict[int, tuple[Any, Any, Any]] = {}
        # id(fn) -> (fn, weakly; fn.__code__): each function whose source the code was generated from.
        # A function's code can be replaced in place (IPython's %autoreload does so when the file of its
        # module is edited): the same object, other code.
        self.codes: dict[int, tuple[Any, types.CodeType]] = {}

    def record_global(self, scope: dict, name: str, value: Any) -> None:
        self.names.setdefault((id(scope), name), (scope, name, value))
        self._checks = self._identical = self._quick = None

    def record_item(self, container: Any, key: Any, value: Any) -> None:
        """``container[key]`` (a module-level dict, list or tuple) was read as ``value`` (``ABSENT``:
        a key not in a dict).  A list's item is checked through a view with ``get``, as a dict's."""
        if isinstance(container, tuple):
            return  # cannot change: the name it is bound to is recorded
        scope = container if isinstance(container, dict) else _Items(container)
        self.names.setdefault((id(container), key), (scope, key, value))
        self._checks = self._identical = self._quick = None

    def record_keys(self, container: Any) -> None:
        """The keys of ``container`` (a module-level dict; a list's length) were read, iterating it."""
        if isinstance(container, tuple):
            return  # cannot change: the name it is bound to is recorded
        scope = _Keys(container)
        self.names.setdefault((id(container), _KEYS), (scope, _KEYS, scope.get(_KEYS, None)))
        self._checks = self._identical = self._quick = None

    def record_cell(self, function: types.FunctionType, name: str, value: Any) -> None:
        """The closure cell of ``function`` for the free name ``name`` held ``value``."""
        key = (id(function), name)
        if key not in self.cells:
            self.cells[key] = (weakref.ref(function), function.__code__.co_freevars.index(name), _weakly(value))
            self._quick = None

    def record_attribute(self, owner: Any, name: str, value: Any) -> None:
        """``owner.name`` (a module or class attribute) was read as ``value``."""
        self.attributes.setdefault((id(owner), name), (owner, name, value))
        self._identical = self._quick = None

    def record_defaults(self, fn: types.FunctionType) -> None:
        """A call of ``fn`` was bound with its defaults as they are now (``helper.__defaults__ = (5.0,)``
        later makes the code old)."""
        if id(fn) not in self.defaults:
            self.defaults[id(fn)] = (weakref.ref(fn), fn.__defaults__, _keyword_defaults(fn))
            self._quick = None

    def record_code(self, fn: types.FunctionType) -> None:
        """The code was generated from ``fn`` as its ``__code__`` is now."""
        if id(fn) not in self.codes:
            self.codes[id(fn)] = (weakref.ref(fn), fn.__code__)
            self._identical = self._quick = None

    def record_rules(self, fn: Any) -> None:
        """The generated code calls ``fn`` with the rules it has now (or as a helper, if none)."""
        if id(fn) not in self.rules:
            held: Callable[[], Any]
            try:
                held = weakref.ref(fn)
            except TypeError:  # a builtin or ufunc: lives forever anyway
                held = _Strong(fn)
            self.rules[id(fn)] = (held,) + _rules_of(fn)
            self._rules_checked = self._generation[0] = -1
            self._quick = None

    @property
    def empty(self) -> bool:
        """True if nothing can make this snapshot invalid (the code reads nothing from outside)."""
        return not (self.names or self.cells or self.attributes or self.rules or self.defaults or self.codes)

    def include(self, other: Optional["Snapshot"]) -> None:
        """Also depend on what ``other`` depends on (a helper's names)."""
        if other is not None and other is not self:
            pairs: tuple[tuple[dict[Any, Any], dict[Any, Any]], ...] = (
                (self.names, other.names), (self.cells, other.cells), (self.attributes, other.attributes),
                (self.rules, other.rules), (self.defaults, other.defaults), (self.codes, other.codes))
            for mine, theirs in pairs:
                for key, entry in theirs.items():
                    mine.setdefault(key, entry)
            self._checks = self._identical = self._quick = None
            self._rules_checked = self._generation[0] = -1

    def quick(self) -> Callable[[], bool]:
        """A function of no arguments, true only where ``valid()`` is, in one generated expression of
        identity tests (``quick_tests``): what a cached call asks first.  False may still be valid
        (an equal constant rebound, a rule registered for another function, keyword-only defaults):
        ``valid()`` then decides.  The snapshot must be complete (the code built): a record made
        later makes another function, not this one."""
        quick = self._quick
        if quick is None:
            namespace: dict[str, Any] = {}
            tests = self.quick_tests(namespace)
            quick = self._quick = quick_function("quick", "", tests, namespace) if tests is not None else _never
        return quick

    def quick_tests(self, namespace: dict[str, Any]) -> Optional[list[str]]:
        """``quick``'s tests, as expressions of names (starting with ``q``) put in ``namespace``, for
        a caller to fold into an expression of its own; None where there are none to make (keyword-only
        defaults recorded: a dict changed in place, which ``valid()`` compares by its items)."""
        defaults = tuple(self.defaults.values())
        if any(keyword_defaults is not None for _, _, keyword_defaults in defaults):
            return None
        return quick_tests(tuple(self.names.values()), tuple(self.attributes.values()), tuple(self.codes.values()),
                           tuple(self.cells.values()), defaults, self._generation if self.rules else None, namespace)

    def valid(self) -> bool:
        identical = self._identical
        if identical is None:
            identical = self._identical = _identity_check(tuple(self.names.values()),
                                                          tuple(self.attributes.values()),
                                                          tuple(self.codes.values()))
        if identical():
            if not (self.cells or self.defaults or self.rules):
                return True  # (the common case of code reading only globals, on every call: no more calls)
        elif not (self._codes_same() and self._names_and_attributes_same()):
            return False
        for function, index, held in self.cells.values():
            function, value = function(), held()
            if function is None or (value is None and not isinstance(held, _Strong)):
                return False  # gone: this code cannot be asked for again
            try:
                current = function.__closure__[index].cell_contents
            except ValueError:
                return False
            if current is not value and not _same(current, value):
                return False
        return self._defaults_same() and self._rules_current()

    def _defaults_same(self) -> bool:
        """Each helper's defaults the ones its calls were bound with (the same object, or identical
        constants: a default may only be a number, a string, None or a tuple of them)."""
        for function, defaults, keyword_defaults in self.defaults.values():
            function = function()
            if function is None:
                return False  # gone: this code cannot be asked for again
            if function.__defaults__ is not defaults and not _same(function.__defaults__, defaults):
                return False
            if (keyword_defaults or function.__kwdefaults__) and not _same(_keyword_defaults(function),
                                                                           keyword_defaults):
                return False
        return True

    def _codes_same(self) -> bool:
        """Each function the code was generated from alive and running the code it ran then."""
        return all(getattr(function(), "__code__", _ABSENT) is code for function, code in self.codes.values())

    def _names_and_attributes_same(self) -> bool:
        """Each name and attribute the same object as recorded, or an identical constant (``_same``):
        what ``valid`` asks where ``_identical`` found an object that is not the one recorded."""
        checks = self._checks
        if checks is None:
            checks = self._checks = tuple(self.names.values())
        for scope, name, value in checks:
            current = scope.get(name, _ABSENT)
            if current is not value and not _same(current, value):
                return False
        for owner, name, value in self.attributes.values():
            current = _attribute(owner, name)
            if current is not value and not _same(current, value):
                return False
        return True

    def _rules_current(self) -> bool:
        """The rules of every callee are those the code was made with (checked again only after
        a registration, which ``rules.generation()`` counts)."""
        generation = rules.generation()
        if generation == self._rules_checked:
            return True
        for held, *recorded in self.rules.values():
            fn = held()
            if fn is not None and any(now is not then for now, then in zip(_rules_of(fn), recorded)):
                return False  # (a function that is gone can be given no rule)
        self._rules_checked = self._generation[0] = generation
        return True


@dataclass
class Resolver:
    """Finds what a free name of the user's function means, as CPython would,
    and records each answer in ``snapshot``."""

    globals: dict[str, Any]
    closure: dict[str, Any]  # name -> cell
    snapshot: Snapshot = field(default_factory=Snapshot)
    owner: Optional[types.FunctionType] = None  # the function whose closure ``closure`` is
    # False for code s2s_ad generated: its namespace is its own and never rebound, and holds the
    # function itself, which a snapshot in a cache keyed weakly on that function must not hold.
    record: bool = True

    def lookup(self, name: str) -> tuple[bool, Any]:
        cell = self.closure.get(name)
        if cell is not None:
            try:
                value = cell.cell_contents
            except ValueError:  # a cell not filled yet
                return False, None
            if self.record and self.owner is not None:
                # (mypy reads a FunctionType field with a default as a method bound to the instance; an
                # instance's field is the function itself)
                self.snapshot.record_cell(cast(types.FunctionType, self.owner), name, value)
            return True, value
        if name in self.globals:
            value = self.globals[name]
            if self.record:
                self.snapshot.record_global(self.globals, name, value)
            return True, value
        if name in vars(builtins):
            if self.record:
                self.snapshot.record_global(self.globals, name, _ABSENT)  # a later global would shadow it
            return True, vars(builtins)[name]
        return False, None


@dataclass
class ParsedFunction:
    fn: Callable
    node: gast.FunctionDef
    filename: str
    resolver: Resolver
    params: list[str]
    # Every node of ``node`` as parsed, in ``gast.walk`` order: the subset check walks the tree once,
    # and lowering reads the names and node kinds from this list instead of walking it again.
    nodes: list = field(default_factory=list, repr=False)

    @property
    def name(self) -> str:
        return self.node.name

    @property
    def line(self) -> int:
        return self.node.lineno

    def error(self, construct: str, hint: str, node: Any = None) -> TransformError:
        line = getattr(node, "lineno", None) if node is not None else self.line
        column = getattr(node, "col_offset", None) if node is not None else None
        return TransformError(construct, hint, filename=self.filename, line=line,
                              column=None if column is None else column + 1)


def _closure_cells(fn: types.FunctionType) -> dict[str, Any]:
    return dict(zip(fn.__code__.co_freevars, fn.__closure__ or ()))


def _plain_function(fn: Any) -> types.FunctionType:
    """``fn``, refused unless it is a plain Python function (one with source and ``__code__``)."""
    if not isinstance(fn, types.FunctionType):
        raise TransformError(
            f"{getattr(fn, '__qualname__', repr(fn))!r} ({type(fn).__name__})",
            "only plain Python functions defined with def can be transformed; "
            "for a builtin or C function, give it a rule with @s2s_ad.adjoint",
        )
    return fn


# Where a function whose source cannot be read may be defined instead (IPython runs a cell under a
# cell magic, %%time, through exec of text it keeps nowhere).
_WHERE_TO_DEFINE = ("define it in a .py file or a notebook cell of its own (not one run by a cell magic such as "
                    "%%time), or give it a rule with @s2s_ad.adjoint")


def _read_source(fn: types.FunctionType, exact: bool = False) -> tuple[str, str, int]:
    """``fn``'s source text (dedented), file name and first line.  Unless ``exact``, the end of the
    function may be found by indentation alone (see ``_source_lines``)."""
    name = fn.__qualname__
    filename = fn.__code__.co_filename
    try:
        # fn.__code__, not fn: inspect would follow __wrapped__ to the function a decorator wrapped,
        # and the code that runs is the wrapper's.
        lines, firstline = _exact_source_lines(fn) if exact else _source_lines(fn)
    except (OSError, TypeError) as exc:
        raise TransformError(
            f"{name!r}", f"its source code cannot be read (it was typed into a bare REPL or made by exec); "
            f"{_WHERE_TO_DEFINE}",
            filename=filename, line=fn.__code__.co_firstlineno,
        ) from exc
    return textwrap.dedent("".join(lines)), filename, firstline


def _source_lines(fn: types.FunctionType) -> tuple[list[str], int]:
    """``inspect.getsourcelines(fn)``, with the end of a plain def found by its indentation.

    inspect tokenizes the whole function to find where it ends: a quarter
    of the time spent parsing a big function.  Indentation is enough unless a
    string or brackets reach back to the def's column; the text found then
    ends inside them and does not parse, and ``parse_function`` reads the
    source again, with inspect.
    """
    lines, start = _find_source(fn)
    end = _end_of_def(lines, start)
    if end is None:
        return inspect.getblock(lines[start:]), start + 1
    return lines[start:end], start + 1


def _exact_source_lines(fn: types.FunctionType) -> tuple[list[str], int]:
    """``inspect.getsourcelines(fn.__code__)``: the def's lines, its end found by tokenizing."""
    lines, start = _find_source(fn)
    return inspect.getblock(lines[start:]), start + 1


def _find_source(fn: types.FunctionType) -> tuple[list[str], int]:
    """``inspect.findsource(fn.__code__)`` (the lines of ``fn``'s file and the index of its def), not
    following ``__wrapped__``.  Given the code alone, inspect finds the module (whose loader may
    supply the lines) by scanning the file of every module loaded, tens of milliseconds once Numba
    is in; given the function, by its ``__module__``: asked so where that module's globals are the
    function's own, the same module the scan would find."""
    module = sys.modules.get(getattr(fn, "__module__", None) or "")
    if module is not None and getattr(module, "__dict__", None) is fn.__globals__:
        return inspect.findsource(fn)  # (a function: inspect reads its __code__, as below, with this module)
    return inspect.findsource(fn.__code__)


def _end_of_def(lines: list[str], start: int) -> Optional[int]:
    """The index after the last line of the def at ``lines[start]``: before the first line after it
    indented no deeper than the def (blank lines and comments aside).  None (ask inspect) for a
    decorated def, or indentation with anything but spaces, where columns are not character counts."""
    first = lines[start]
    column = len(first) - len(first.lstrip(" "))
    if not first.startswith("def ", column):
        return None
    end = len(lines)
    for k in range(start + 1, len(lines)):
        text = lines[k].lstrip(" ")
        if text[:1] in ("\t", "\f"):
            return None
        if text.strip() and not text.startswith("#") and len(lines[k]) - len(text) <= column:
            end = k
            break
    while end > start + 1 and (not lines[end - 1].strip() or lines[end - 1].lstrip().startswith("#")):
        end -= 1  # comments after the body, as inspect leaves out those at the def's column
    return end


def is_generated(filename: str) -> bool:
    """True for code s2s_ad generated (compiled under ``<s2s_ad ...>``, see cache.py)."""
    return filename.startswith("<s2s_ad ")


def transparent(fn: Any) -> Any:
    """``fn`` without the wrappers that call it unchanged: ``functools.lru_cache`` and
    ``functools.cache``.  Such a wrapper returns what the function returns for the same
    arguments (a cache hit returns an earlier result of the same call), so for the pure
    functions s2s_ad differentiates it is the function itself."""
    while isinstance(fn, _LRU_CACHE_WRAPPER) and isinstance(getattr(fn, "__wrapped__", None), types.FunctionType):
        fn = fn.__wrapped__
    return fn


_LRU_CACHE_WRAPPER = type(functools.lru_cache(maxsize=None)(lambda: None))


def parse_function(fn: Callable) -> ParsedFunction:
    """Parse ``fn`` and check its body against the supported subset.

    What is parsed is what runs: for a function a decorator wrapped (with
    ``functools.wraps``), the wrapper, never the ``__wrapped__`` function;
    and the text read from the file must still compile to ``fn.__code__``.
    """
    # (checked before ``__wrapped__`` is followed: a cache around a ufunc has one, and no source)
    fn = _plain_function(transparent(fn))
    wrapped = getattr(fn, "__wrapped__", None)
    if wrapped is None or wrapped is fn:
        return _parse(fn)
    inner = _passed_through(fn)
    if inner is not None:  # the wrapper calls inner with what it is given, and returns what it returns
        parsed = parse_function(inner[1])
        parsed.resolver.snapshot.record_cell(fn, *inner)
        parsed.resolver.snapshot.record_code(fn)  # (the wrapper's code, replaced, may call something else)
        return parsed
    what = (f"{fn.__qualname__!r} as decorated (the call runs the decorator's wrapper "
            f"{getattr(fn.__code__, 'co_qualname', fn.__code__.co_name)}, not the function it wraps)")
    try:
        parsed = _parse(fn)
    except TransformError as exc:
        raise TransformError(what, f"the wrapper cannot be differentiated: {exc.construct}"
                             + (f" ({exc.hint})" if exc.hint else "") + f"; differentiate the undecorated "
                             f"function ({fn.__name__}.__wrapped__), or write the wrapper with plain named "
                             f"parameters", filename=exc.filename, line=exc.line, column=exc.column) from None
    signature = [p for p in inspect.signature(fn).parameters]  # what callers bind to: the wrapped one's
    if signature != parsed.params:
        raise TransformError(what, f"the wrapper's parameters ({', '.join(parsed.params)}) are not those of the "
                             f"function it wraps ({', '.join(signature)}); name them alike, or differentiate "
                             f"{fn.__name__}.__wrapped__", filename=parsed.filename, line=parsed.line)
    return parsed


def _passed_through(wrapper: types.FunctionType) -> Optional[tuple[str, types.FunctionType]]:
    """``(free name, function)`` if ``wrapper``'s body is only ``return function(*args, **kwargs)`` of its
    own ``*args`` and ``**kwargs`` (a docstring aside), ``function`` a plain function in its closure
    cell: a transparent decorator, whose call is the function's call.  Else None."""
    code = wrapper.__code__
    if not code.co_flags & inspect.CO_VARARGS or code.co_argcount or code.co_kwonlyargcount:
        return None
    try:
        source, filename, firstline = _read_source(wrapper, exact=True)
        node = _parse_at(source, firstline).body[0]
    except (TransformError, SyntaxError):
        return None
    body = node.body
    if body and isinstance(body[0], gast.Expr) and isinstance(body[0].value, gast.Constant):
        body = body[1:]  # the docstring
    args = node.args
    if len(body) != 1 or not isinstance(body[0], gast.Return) or not isinstance(body[0].value, gast.Call):
        return None
    call = body[0].value
    star = [a.value.id for a in call.args if isinstance(a, gast.Starred) and isinstance(a.value, gast.Name)]
    double = [k.value.id for k in call.keywords if k.arg is None and isinstance(k.value, gast.Name)]
    if (not isinstance(call.func, gast.Name) or star != [args.vararg.id] or len(call.args) != 1
            or double != ([args.kwarg.id] if args.kwarg else []) or len(call.keywords) != len(double)):
        return None
    cell = _closure_cells(wrapper).get(call.func.id)
    try:
        function = cell.cell_contents if cell is not None else None
    except ValueError:
        return None
    if not isinstance(function, types.FunctionType):
        return None
    _check_source_runs(wrapper, filename, firstline)
    return call.func.id, function


def _parse(fn: types.FunctionType) -> ParsedFunction:
    """``parse_function`` of ``fn`` itself."""
    source, filename, firstline = _read_source(fn)
    if fn.__name__ == "<lambda>":
        return _parse_lambda(fn)
    moved = None
    if not is_generated(filename) and not _compiles_to(fn.__code__, filename, fn.__globals__):
        moved = _def_compiled_alone(fn, filename)
        if moved is None:
            raise _source_changed(fn, filename, firstline)
        source, firstline = moved
    try:
        try:
            module = _parse_at(source, firstline)
        except SyntaxError:  # the end found by indentation may be inside a string or brackets: ask inspect
            if moved is not None:
                raise
            source, filename, firstline = _read_source(fn, exact=True)
            module = _parse_at(source, firstline)
    except SyntaxError as exc:
        raise TransformError(f"{fn.__qualname__!r}", f"its source does not parse on its own ({exc.msg})",
                             filename=filename, line=firstline) from exc
    node = module.body[0]
    if isinstance(node, gast.AsyncFunctionDef):
        raise TransformError("an async function", "differentiate a plain (synchronous) def",
                             filename=filename, line=firstline)
    if not isinstance(node, gast.FunctionDef):
        raise TransformError(f"{fn.__qualname__!r}", "its source is not a def statement",
                             filename=filename, line=firstline)
    node.decorator_list = []
    params = _check_params(node, filename)
    parsed = ParsedFunction(fn, node, filename, Resolver(fn.__globals__, _closure_cells(fn), owner=fn,
                                                                   record=not is_generated(filename)), params)
    if parsed.resolver.record:
        parsed.resolver.snapshot.record_code(fn)
    _check_subset(parsed)
    return parsed


def _parse_lambda(fn: types.FunctionType) -> ParsedFunction:
    """``grad(lambda w: loss(w, X))``: the one lambda on its line with ``fn``'s parameters, read as
    ``def lambda_(w): return loss(w, X)``; refused where the line holds several such lambdas."""
    source, filename, firstline = _read_source(fn, exact=True)
    code = fn.__code__
    try:
        module = _parse_at(textwrap.dedent(source), firstline)
    except SyntaxError:
        module = None
    params = list(code.co_varnames[:code.co_argcount + code.co_kwonlyargcount])
    found = _lambdas_at(module, code.co_firstlineno, params)
    if not found and linecache.getlines(filename):  # a line not a statement of its own: "l1": lambda r: ...,
        try:
            found = _lambdas_at(_parse_at("".join(linecache.getlines(filename)), 1), code.co_firstlineno, params)
        except SyntaxError:
            found = []
    if len(found) != 1:
        raise TransformError("a lambda", "the line holding it could not be read on its own, or holds several "
                             "lambdas with the same parameters; define the function with def",
                             filename=filename, line=code.co_firstlineno)
    lam = found[0]
    ret = gast.Return(value=lam.body)
    gast.copy_location(ret, lam.body)
    node = gast.FunctionDef(name="lambda_", args=lam.args, body=[ret], decorator_list=[], returns=None,
                            type_comment=None, **({"type_params": []} if "type_params" in gast.FunctionDef._fields
                                                  else {}))
    gast.copy_location(node, lam)
    _check_source_runs(fn, filename, code.co_firstlineno)
    parsed = ParsedFunction(fn, node, filename, Resolver(fn.__globals__, _closure_cells(fn), record=True),
                            _check_params(node, filename))
    parsed.resolver.snapshot.record_code(fn)
    _check_subset(parsed)
    return parsed


def readable_source(fn: types.FunctionType) -> bool:
    """Whether ``fn``'s source can be read as the code that runs: a file's text, or the text s2s_ad
    registered for generated code; not another program's text that ``linecache`` holds under the
    same pseudo-name (``<string>``: Python 3.13 keeps the ``python -c`` program there)."""
    try:
        inspect.getsource(fn)
    except (OSError, TypeError):
        return False
    filename = fn.__code__.co_filename
    if not (filename.startswith("<") and filename.endswith(">")):
        return True
    try:
        return _compiles_to(fn.__code__, filename, fn.__globals__)
    except SyntaxError:
        return False


def _check_source_runs(fn: types.FunctionType, filename: str, firstline: int) -> None:
    """Refuse if the text read for ``fn`` does not compile to the code that runs.

    The file may have been edited since its module was imported: Python
    runs the old code, inspect reads the new text.  The file's text, as
    inspect read it (``linecache``), is compiled whole, so that its imports,
    classes and closures shape the code as they did at import, and the
    code object of the def at ``fn``'s line is compared with ``fn.__code__``.
    """
    if not _compiles_to(fn.__code__, filename, fn.__globals__):
        raise _source_changed(fn, filename, firstline)


def _source_changed(fn: types.FunctionType, filename: str, firstline: int) -> TransformError:
    """The refusal of a function whose source, as read, does not compile to the code that runs."""
    if filename.startswith("<") and filename.endswith(">"):
        # no file: exec'd or typed-in code, whose pseudo-name (<string>, <stdin>) linecache may hold
        # other text for (Python 3.13 keeps the `python -c` program under <string>)
        return TransformError(
            f"{fn.__qualname__!r}", "its source code cannot be read (it was typed into a bare REPL or made "
            f"by exec); {_WHERE_TO_DEFINE}",
            filename=filename, line=firstline)
    return TransformError(
        f"{fn.__qualname__!r}", f"its source file changed after the function was defined: Python runs the "
        f"code it compiled then, and the text now at line {firstline} is different; reload the module "
        f"(importlib.reload) or restart Python, then take the gradient again", filename=filename, line=firstline)


def _def_compiled_alone(fn: types.FunctionType, filename: str) -> Optional[tuple[str, int]]:
    """The text (dedented) and first line of the one def in ``filename``'s current text whose code is
    ``fn``'s, line numbers aside, for code that names another line: IPython's %autoreload (its
    deduperreload, the default from IPython 9) compiles the text of an edited def alone, so its code
    says line 1 of the module's file.  None where no def, or more than one, matches."""
    code = fn.__code__
    found = {line for whole in (True, False)
             for (name, line), candidates in _file_codes(filename, fn.__globals__, whole).items()
             if name == code.co_name and any(_same_code(candidate, code) for candidate in candidates)}
    if len(found) != 1:
        return None
    start = found.pop() - 1
    lines = linecache.getlines(filename, fn.__globals__)
    try:
        block = inspect.getblock(lines[start:])
    except (IndexError, SyntaxError):  # (tokenize's errors on text that does not tokenize)
        return None
    return textwrap.dedent("".join(block)), start + 1


def _compiles_to(code: types.CodeType, filename: str, scope: dict) -> bool:
    """Whether the current text of ``filename`` compiles to ``code``: compiled whole, as a module is
    imported, or else each top-level statement alone, as IPython runs a notebook cell.  The two can
    differ: from Python 3.11 a method call on a name the same text imports (``import m`` then, in a
    def, ``m.f(x)``) compiles to other instructions when the import is in the same compilation."""
    key = (code.co_name, code.co_firstlineno)
    return any(_same_code(candidate, code) for whole in (True, False)
               for candidate in _file_codes(filename, scope, whole).get(key, ()))


# (file name, compiled whole) -> (its lines as compiled, its code objects)
_FILE_CODES: dict[tuple[str, bool], tuple[list, dict]] = {}
_FILE_CODES_LOCK = threading.Lock()


def _file_codes(filename: str, scope: dict, whole: bool = True) -> dict[tuple[str, int], list[types.CodeType]]:
    """Every code object compiled from ``filename``'s current text, by name and first line: the
    text compiled whole, or (``whole`` False) each of its top-level statements alone (cached for as
    long as linecache holds the same text)."""
    lines = linecache.getlines(filename, scope)
    with _FILE_CODES_LOCK:
        cached = _FILE_CODES.get((filename, whole))
        if cached is not None and cached[0] is lines:
            return cached[1]
    codes: dict[tuple[str, int], list[types.CodeType]] = {}
    try:
        # dont_inherit: as at import, the file's own __future__ statements alone set the flags
        text = "".join(lines)
        queue = [compile(text, filename, "exec", dont_inherit=True)] if whole else [
            compile(ast.Module(body=[statement], type_ignores=[]), filename, "exec", dont_inherit=True)
            for statement in ast.parse(text).body]
    except (SyntaxError, ValueError):
        queue = []
    while queue:
        current = queue.pop()
        codes.setdefault((current.co_name, current.co_firstlineno), []).append(current)
        queue.extend(c for c in current.co_consts if isinstance(c, types.CodeType))
    with _FILE_CODES_LOCK:
        _FILE_CODES[filename, whole] = (lines, codes)
    return codes


def _same_code(a: types.CodeType, b: types.CodeType) -> bool:
    """The same operations on the same names and constants (line numbers aside)."""
    fields = ("co_code", "co_names", "co_varnames", "co_freevars", "co_cellvars", "co_argcount",
              "co_posonlyargcount", "co_kwonlyargcount")
    if any(getattr(a, f) != getattr(b, f) for f in fields) or len(a.co_consts) != len(b.co_consts):
        return False
    return all(_same_constant(x, y) for x, y in zip(a.co_consts, b.co_consts))


def _same_constant(x: Any, y: Any) -> bool:
    if isinstance(x, types.CodeType) and isinstance(y, types.CodeType):
        return _same_code(x, y)
    if isinstance(x, (tuple, frozenset)) and type(x) is type(y):
        return len(x) == len(y) and all(map(_same_constant, sorted(x, key=repr) if isinstance(x, frozenset) else x,
                                            sorted(y, key=repr) if isinstance(y, frozenset) else y))
    return _same(x, y) or (type(x) is type(y) and x == y and not isinstance(x, (float, complex)))


def _lambdas_at(module: Optional[gast.Module], line: int, params: list[str]) -> list[gast.Lambda]:
    """The lambdas of ``module`` written on ``line`` with the parameters ``params``."""
    return [] if module is None else [
        n for n in gast.walk(module) if isinstance(n, gast.Lambda) and n.lineno == line
        and [a.id for a in n.args.posonlyargs + n.args.args + n.args.kwonlyargs] == params]


def _parse_at(source: str, firstline: int) -> gast.Module:
    """Parse with every node on its line in the user's file (blank lines first: cheaper than renumbering
    the tree).  A long if/elif chain is made shallow first (``chains.py``): gast's conversion, and
    every later walk of the tree, recurse as deep as the tree is."""
    module = ast.parse("\n" * (firstline - 1) + source)
    flatten_long_chains(module)
    return gast.ast_to_gast(module)


def _check_params(node: gast.FunctionDef, filename: str) -> list[str]:
    args = node.args
    for extra, what in ((args.vararg, "*args"), (args.kwarg, "**kwargs")):
        if extra is not None:
            raise TransformError(f"a function with {what}", "name each parameter",
                                 filename=filename, line=node.lineno)
    if args.kwonlyargs or getattr(args, "posonlyargs", None):
        pass  # bound by name through the signature; all are plain locals inside
    return [a.id for a in list(getattr(args, "posonlyargs", [])) + args.args + args.kwonlyargs]


def _check_subset(parsed: ParsedFunction) -> None:
    body = parsed.node.body
    if body and isinstance(body[0], gast.Expr) and isinstance(body[0].value, gast.Constant):
        body = body[1:]  # the docstring
    parsed.nodes = all_nodes(parsed.node)
    if any(sugar.rewritten(node) for node in parsed.nodes):
        sugar.rewrite(parsed.node)
        parsed.nodes = all_nodes(parsed.node)
        body = parsed.node.body[len(parsed.node.body) - len(body):]  # the docstring still left out
    suspects = False  # an expression the statement checks refuse (they look for it only if there is one)
    # What a raise holds (raise ValueError(f"unknown {kind}")) never runs in differentiated code: the
    # lowering drops the raise with its branch, or refuses the raise itself.
    raised = {id(n) for r in parsed.nodes if isinstance(r, gast.Raise) for n in all_nodes(r) if n is not r}
    for node in parsed.nodes:  # first: a refused construct says more than a missing return
        if raised and id(node) in raised:
            continue
        kind = type(node)
        if kind not in _WATCHED:
            continue
        suspects = suspects or kind in _SUSPECT
        if node is not parsed.node and kind in _REFUSALS:
            raise parsed.error(*_REFUSALS[kind], node)
        if kind in (gast.For, gast.While) and node.orelse:
            raise parsed.error(f"an else clause on a {'for' if kind is gast.For else 'while'} loop",
                               "set a flag before break and test it after the loop", node)
        if kind is gast.Return and node.value is None:
            raise parsed.error("a bare return", "return the value to differentiate", node)
    if not always_returns(body):
        raise parsed.error(f"{parsed.name!r} without a final return", "end the function with return <scalar> "
                           "(or an if/else whose every branch returns)", body[-1] if body else None)
    _check_statements(parsed, body, suspects)


def _check_statements(parsed: ParsedFunction, body: list, suspects: bool) -> None:
    """Check each statement in ``body``; ``suspects`` False says the tree holds no expression to refuse
    (so the statements' own nodes need not be walked to find one)."""
    for stmt in body:
        for block in (getattr(stmt, "body", None), getattr(stmt, "orelse", None)):
            if isinstance(stmt, (gast.If, gast.For, gast.While)) and block:
                _check_statements(parsed, block, suspects)
        if isinstance(stmt, gast.For):
            _check_target(parsed, stmt.target)
        if isinstance(stmt, gast.FunctionDef):
            _check_nested(parsed, stmt, suspects)
            continue
        if isinstance(stmt, gast.Expr) and not _is_list_append(stmt) and not isinstance(stmt.value, gast.Call):
            raise parsed.error("an expression statement", "a differentiated function computes values: assign "
                               "the expression to a name, or drop it", stmt)
        if isinstance(stmt, gast.While) and any(isinstance(n, (gast.ListComp, gast.DictComp))
                                                for n in gast.walk(stmt.test)):
            raise parsed.error("a list comprehension in a while condition", "compute it in the loop body", stmt)
        if isinstance(stmt, gast.Assign):
            for target in stmt.targets:
                _check_target(parsed, target)
        if isinstance(stmt, gast.AugAssign):
            _check_target(parsed, stmt.target, tuple_ok=False)
        if isinstance(stmt, gast.Assign) and len(stmt.targets) > 1 and any(
                isinstance(t, gast.Subscript) for t in stmt.targets):
            raise parsed.error("a chained assignment into an array", "assign one target at a time", stmt)
        if not isinstance(stmt, _STATEMENTS):
            raise parsed.error(f"the statement {type(stmt).__name__}", "rewrite it with assignments", stmt)
        for node in _own_nodes(stmt) if suspects else ():
            if isinstance(node, gast.expr) and not isinstance(node, _EXPRESSIONS):
                raise parsed.error(f"the expression {type(node).__name__}", "rewrite it with simpler expressions", node)


def _check_nested(parsed: ParsedFunction, node: gast.FunctionDef, suspects: bool) -> None:
    """A function defined inside the differentiated one: inlined where it is called."""
    if node.decorator_list:
        raise parsed.error(f"a decorated nested function {node.name!r}", "drop the decorator", node)
    args = node.args
    # defaults are read where the function is called: only constants, and a lambda's (sugar.py put its
    # others into names of their own where it is made), keep Python's meaning
    late = [d for d in args.defaults if not isinstance(d, gast.Constant)]
    if args.vararg or args.kwarg or args.kwonlyargs or (late and not getattr(node, "from_lambda", False)):
        what = "the lambda" if getattr(node, "from_lambda", False) else f"the nested function {node.name!r}"
        raise parsed.error(f"the parameters of {what}", "give it plain positional parameters, with defaults "
                           "only if they are constants (a value it needs can be read from the enclosing "
                           "function; a lambda's defaults may be any value)", node)
    body = node.body
    if body and isinstance(body[0], gast.Expr) and isinstance(body[0].value, gast.Constant):
        body = body[1:]
    if not always_returns(body):
        raise parsed.error(f"the nested function {node.name!r} without a final return", "end it with return", node)
    if any(isinstance(n, (gast.Global, gast.Nonlocal)) for n in gast.walk(node)):
        raise parsed.error(f"nonlocal or global in {node.name!r}", "return the new value instead", node)
    _check_statements(parsed, body, suspects)


def always_returns(body: list) -> bool:
    """Whether control cannot fall off the end of ``body``: it ends with a return or a raise, or with
    an if/else each of whose branches always does (desugar.py turns those returns into one)."""
    if not body:
        return False
    last = body[-1]
    if isinstance(last, gast.If):
        return always_returns(last.body) and always_returns(last.orelse)
    if isinstance(last, gast.While) and isinstance(last.test, gast.Constant) and last.test.value is True:
        return not _breaks(last.body)  # while True: left only by a return
    return isinstance(last, (gast.Return, gast.Raise))  # a raise leaves too: the caller gets the exception


def _breaks(body: list) -> bool:
    """Whether a ``break`` in ``body`` leaves the loop whose body it is (not an inner loop's)."""
    for stmt in body:
        if isinstance(stmt, gast.Break):
            return True
        if isinstance(stmt, gast.If) and (_breaks(stmt.body) or _breaks(stmt.orelse)):
            return True
    return False


def _is_list_append(stmt: Any) -> bool:
    call = stmt.value
    return (isinstance(call, gast.Call) and isinstance(call.func, gast.Attribute) and call.func.attr == "append"
            and isinstance(call.func.value, gast.Name) and len(call.args) == 1 and not call.keywords)


def _own_nodes(stmt: Any) -> list:
    """The nodes of a statement, without those of its nested statement lists."""
    if isinstance(stmt, (gast.If, gast.While)):
        return list(gast.walk(stmt.test))
    if isinstance(stmt, gast.For):
        return list(gast.walk(stmt.iter)) + list(gast.walk(stmt.target))
    return list(gast.walk(stmt))


def _check_target(parsed: ParsedFunction, target: Any, tuple_ok: bool = True) -> None:
    if isinstance(target, gast.Name):
        return
    if tuple_ok and isinstance(target, (gast.Tuple, gast.List)):
        for element in target.elts:
            _check_target(parsed, element, tuple_ok=True)
        return
    if isinstance(target, gast.Subscript):
        if not isinstance(target.value, gast.Name):
            raise parsed.error("an assignment into a nested element", "index the array by name: a[i, j] = v",
                               target)
        return
    if isinstance(target, gast.Attribute):
        raise parsed.error("an assignment to an attribute", "the function must not mutate objects; "
                           "return the new value instead", target)
    raise parsed.error(f"an assignment to {type(target).__name__}", "assign to plain names", target)
