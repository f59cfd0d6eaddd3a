"""The vocabulary the parts of expression conversion share.

Input: none (definitions only).  Output, for ``expressions.py``, its parts
(``static_names.py``: names resolved while lowering; ``calls.py``: calls) and
``lower.py``:

* the pending nodes a conversion may return before ``lower.py`` flattens them
  (``Nested``, ``Known``, ``Dispatch``, ``Inline``, ``Once``, ``Choice``), and
  ``Record``, a container whose structure is static while lowering;
* which Python values the IR holds as constants (``is_plain_constant``,
  ``hashable``);
* ``Converter``, what a part of the converter uses of the converter it serves:
  the names in scope, the resolver and the error builder of the function being
  lowered (``lower.py`` swaps the last two while it inlines a callee: a part
  reads them through ``ConverterPart`` at every use, never keeps them), and
  ``convert`` itself.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Optional, Protocol, Union

import gast
from ..core import ir, language
from ..core.errors import TransformError
from .parse import Resolver

# Values the IR holds as constants (numbers, strings, None, NumPy scalars).
_CONSTANT_TYPES = (int, float, complex, bool, str, type(None))
# Types that are values in everyday code: dtype=float, .astype(np.float32).
_TYPE_VALUES = (int, float, complex, bool)


def is_plain_constant(value: Any) -> bool:
    if language.is_complex_value(value):
        return False  # (the rules are written for real values: see ``arguments``)
    if isinstance(value, tuple):
        return all(is_plain_constant(v) for v in value)
    if isinstance(value, type):
        return value in _TYPE_VALUES or language.is_library_scalar_type(value)
    return (isinstance(value, _CONSTANT_TYPES) or language.is_library_scalar(value) or value is Ellipsis
            or language.is_dtype(value))


def hashable(value: Any) -> bool:
    try:
        hash(value)
    except TypeError:
        return False
    return True


def spelled(node: Any) -> str:
    """A name, attribute chain or subscript as written (for messages)."""
    return gast.unparse(node).strip()


@dataclass(frozen=True)
class Nested:
    """A function defined in the body: calls to it are inlined (see ``Lowering.inline``).

    ``closed``: a module-level function inlined because it was passed a function; it sees its own
    names and the module's, not the caller's."""

    node: Any
    closed: bool = False
    scope: Optional[tuple] = None  # passed as an argument: the names it reads, as where it was passed
    # a function of another def's source (an __init__ read as a function: user_classes.computed_layout),
    # lowered as that def's own: its names read from its module, its lines of its file
    callee: Any = None
    # put in a list (fs.append(lambda v, k=k: ...)): the names its defaults read, as where it was put there
    defaults: Optional[tuple] = None


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
    kwargs: tuple = ()  # (name, value) pairs: the keyword arguments of a nested def's call, placed when inlined
    # a call of the user's function that returns a function it makes (a closure, a lambda): lowered
    # where it is bound to a name, the name then holding that function (``Lowering.bind``)
    factory: bool = False


@dataclass(frozen=True, eq=False)
class Bound:
    """``functools.partial(fn, *args, **kwargs)`` made in the body: ``function`` (a ``Known`` or
    ``Nested``) with those arguments (atoms, computed where the partial was made) fixed; a call of it
    is the call of ``function`` with them first (the keywords the call gives win)."""

    function: Any
    args: tuple
    kwargs: tuple


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


@dataclass(frozen=True)
class MethodCall:
    """``Model(w).scaled(2.0).loss(x)``: the method ``name`` of what a call gives back (a method or
    operator of the user's class given an object), as the function of an ``ir.Call`` whose first
    argument is that call (``called`` False: the attribute read, ``Model(w).scaled(2.0).w``).  Which
    class's method runs is known only once that call is lowered in place and gives back an object
    (``SSABuilder.method_call``); nothing calls this function itself."""
    name: str
    called: bool = True

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        raise TypeError(f"the pending method .{self.name}() is lowered in place, never called")


@dataclass(frozen=True)
class Choice:
    """``then if test else orelse`` before flattening; ``None`` means "the test's value"
    (``a and b`` is ``Choice(a, b, None)``, ``a or b`` is ``Choice(a, None, b)``)."""

    test: Any
    then: Any
    orelse: Any


ErrorBuilder = Callable[[str, str, Any], TransformError]
# What a conversion may give besides IR: a pending node lower.py expands, or a container.
Pending = Union[Record, Choice, Inline, Once, Nested, Known, Bound]


class Converter(Protocol):
    """What the parts of an ``ExpressionConverter`` use of it."""

    check_calls: bool  # False for rule templates, which may call anything (runtime helpers)
    local: Callable[[str], Any]  # a name -> the value it holds in scope (IR or pending), None if not local
    resolver: Resolver
    error: ErrorBuilder

    def convert(self, node: Any) -> ir.Expr: ...

    def refuse_opaque(self, value: Any, what: str, node: Any) -> None: ...


class ConverterPart:
    """A part of an ``ExpressionConverter``: reads the converter's current scope through ``host``."""

    def __init__(self, host: Converter) -> None:
        self.host = host

    @property
    def check_calls(self) -> bool:
        return self.host.check_calls

    @property
    def resolver(self) -> Resolver:
        return self.host.resolver

    def local(self, name: str) -> Any:
        return self.host.local(name)

    def error(self, construct: str, hint: str, node: Any) -> TransformError:
        return self.host.error(construct, hint, node)

    def convert(self, node: Any) -> ir.Expr:
        return self.host.convert(node)
