"""What the free names of generated code meant when it was generated, and whether they still do.

Input: the records the frontend and lowering make while they read a function
(``Snapshot.record_global``, ``record_cell``, ``record_attribute``,
``record_rules``, ``record_code``...: each name, cell, attribute, rule, default
and code object read, with the object it held).  Output: a ``Snapshot`` whose
``valid()`` says whether every one still holds the same object (or an
identical constant), and whose ``quick()`` is the same test in one generated
expression of identity tests, which a cached call asks first
(``quick_function``, ``quick_tests``; calling.py folds those into its own).
``ABSENT`` stands for a name or attribute that was missing.
"""
from __future__ import annotations

import struct
import types
import weakref
from typing import Any, Callable, Optional, Union

from ..core.identity import Identity, WeakIdentity
from ..rules import registry as rules


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
                generation: Optional[list], namespace: dict[str, Any], held: Any = None) -> list[str]:
    """``Snapshot.quick``'s tests, as expressions of names put in ``namespace``: ``_identity_check``'s,
    and those of ``cells`` (each closure cell still holding the very object recorded, a weakly held
    one still alive), of ``defaults`` (each helper's ``__defaults__`` the very tuple recorded, with no
    keyword-only defaults) and, where ``generation`` (a one-item list) is given, the rules'
    generation the one the rules were last found current at: all true only where ``Snapshot.valid``
    is.  The names start with ``q``.  ``held``: a function the caller of the tests holds anyway, whose
    code is tested without following the weak reference to it."""
    namespace.update({"qABSENT": _ABSENT, "qrules": rules, "qgeneration": generation})
    tests = []
    for i, (function, code) in enumerate(codes):  # (a function gone is None: an AttributeError)
        held_here = held is not None and function() is held
        namespace.update({f"qf{i}": held if held_here else function, f"qc{i}": code})
        tests.append(f"qf{i}.__code__ is qc{i}" if held_here else f"qf{i}().__code__ is qc{i}")
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
        # Each table is keyed by the identity of the object read (``Identity``, or ``WeakIdentity`` where
        # its entry holds the object weakly: a key must not keep alive what the entry does not; once it
        # is gone the snapshot is invalid for good, and an object given its id since is another key).
        # (scope, name) -> (scope, name, value): a module's globals and a name, or a module-level dict or
        # list (seen through ``_Items``) and a key
        self.names: dict[tuple[Identity, Any], tuple[Union[dict, _Items, _Keys], Any, Any]] = {}
        # (function, free name) -> (the function, weakly; its cell's index; the value, weakly if it can be).
        # Not the cell: a recursive closure's cell holds the function, which a cache keyed weakly on it
        # must not hold.
        self.cells: dict[tuple[WeakIdentity, str], tuple[Any, int, Any]] = {}
        self.attributes: dict[tuple[Identity, str], tuple[Any, str, Any]] = {}
        # fn -> (fn, weakly where it can be: a recursive function's own snapshot names it;
        # its adjoint rule, tangent rule, non-differentiable)
        self.rules: dict[Union[Identity, WeakIdentity], tuple] = {}
        self._rules_checked = -1  # rules.generation() when self.rules were last found current
        self._checks: Optional[tuple] = None  # names.values() as a tuple: valid() runs on every call
        # names and attributes compared by identity in one generated expression (see _identical)
        self._identical: Optional[Callable[[], bool]] = None
        self._quick: Optional[Callable[[], bool]] = None  # (see quick); None: to be made again
        self._generation = [-1]  # _rules_checked, where the function quick made reads it
        # fn -> (fn, weakly; its __defaults__; its __kwdefaults__ as sorted items): a helper whose call
        # left parameters to their defaults, which the generated code holds as constants
        self.defaults: dict[WeakIdentity, tuple[Any, Any, Any]] = {}
        # fn -> (fn, weakly; fn.__code__): each function whose source the code was generated from.
        # A function's code can be replaced in place (IPython's %autoreload does so when the file of its
        # module is edited): the same object, other code.
        self.codes: dict[WeakIdentity, tuple[Any, types.CodeType]] = {}

    def record_global(self, scope: dict, name: str, value: Any) -> None:
        self.names.setdefault((Identity(scope), name), (scope, name, value))
        self._checks = self._identical = self._quick = None

    def record_item(self, container: Any, key: Any, value: Any) -> None:
        """``container[key]`` (a module-level dict, list or tuple) was read as ``value`` (``ABSENT``:
        a key not in a dict).  A list's item is checked through a view with ``get``, as a dict's."""
        if isinstance(container, tuple):
            return  # cannot change: the name it is bound to is recorded
        scope = container if isinstance(container, dict) else _Items(container)
        self.names.setdefault((Identity(container), key), (scope, key, value))
        self._checks = self._identical = self._quick = None

    def record_keys(self, container: Any) -> None:
        """The keys of ``container`` (a module-level dict; a list's length) were read, iterating it."""
        if isinstance(container, tuple):
            return  # cannot change: the name it is bound to is recorded
        scope = _Keys(container)
        self.names.setdefault((Identity(container), _KEYS), (scope, _KEYS, scope.get(_KEYS, None)))
        self._checks = self._identical = self._quick = None

    def record_cell(self, function: types.FunctionType, name: str, value: Any) -> None:
        """The closure cell of ``function`` for the free name ``name`` held ``value``."""
        key = (WeakIdentity(function), name)
        if key not in self.cells:
            self.cells[key] = (key[0].ref, function.__code__.co_freevars.index(name), _weakly(value))
            self._quick = None

    def record_attribute(self, owner: Any, name: str, value: Any) -> None:
        """``owner.name`` (a module or class attribute) was read as ``value``."""
        self.attributes.setdefault((Identity(owner), name), (owner, name, value))
        self._identical = self._quick = None

    def record_defaults(self, fn: types.FunctionType) -> None:
        """A call of ``fn`` was bound with its defaults as they are now (``helper.__defaults__ = (5.0,)``
        later makes the code old)."""
        key = WeakIdentity(fn)
        if key not in self.defaults:
            self.defaults[key] = (key.ref, fn.__defaults__, _keyword_defaults(fn))
            self._quick = None

    def record_code(self, fn: types.FunctionType) -> None:
        """The code was generated from ``fn`` as its ``__code__`` is now."""
        key = WeakIdentity(fn)
        if key not in self.codes:
            self.codes[key] = (key.ref, fn.__code__)
            self._identical = self._quick = None

    def record_rules(self, fn: Any) -> None:
        """The generated code calls ``fn`` with the rules it has now (or as a helper, if none)."""
        key: Union[Identity, WeakIdentity]
        held: Callable[[], Any]
        try:
            key = WeakIdentity(fn)
            held = key.ref
        except TypeError:  # a builtin or ufunc: lives forever anyway
            key, held = Identity(fn), _Strong(fn)
        if key not in self.rules:
            self.rules[key] = (held,) + _rules_of(fn)
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

    def quick_tests(self, namespace: dict[str, Any], held: Any = None) -> Optional[list[str]]:
        """``quick``'s tests, as expressions of names (starting with ``q``) put in ``namespace``, for
        a caller to fold into an expression of its own; None where there are none to make (keyword-only
        defaults recorded: a dict changed in place, which ``valid()`` compares by its items).  ``held``:
        a function the caller holds (the module function's ``held``)."""
        defaults = tuple(self.defaults.values())
        if any(keyword_defaults is not None for _, _, keyword_defaults in defaults):
            return None
        return quick_tests(tuple(self.names.values()), tuple(self.attributes.values()), tuple(self.codes.values()),
                           tuple(self.cells.values()), defaults, self._generation if self.rules else None, namespace,
                           held)

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
