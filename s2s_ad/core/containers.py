"""Containers of numbers and arrays (JAX's pytrees): flatten at the API boundary, rebuild around results.

A container argument (dict, list, tuple, namedtuple, dataclass, nested) is
described by a ``Tree``: its type, its keys (dict keys, field names or
positions) and, per key, a sub-tree, ``LEAF`` (a number or array: one
argument of the generated code) or a ``Static`` (a string, ``None``, or an
object that is not data, such as a function: part of the structure, read as
a constant).  The transformer sees a dict with constant keys like a tuple
with named slots: each leaf is a parameter of its own, and ``params["w"]``
is resolved while lowering (see ``lower.py``), so no container exists in the
generated code.  ``unflatten`` rebuilds a gradient with the argument's own
type and keys.

Other types join with ``register(cls, children, rebuild)``.
"""
from __future__ import annotations

import dataclasses
import functools
import inspect
import numbers
import os
import sys
import sysconfig
import types
from dataclasses import dataclass
from typing import Any, Callable, Optional, Union

import numpy as np

from .identity import Identity


@dataclass(frozen=True)
class Static:
    """A value that is structure, not data: compared by value where hashable, else by identity."""

    value: Any

    def _key(self) -> Any:
        try:
            hash(self.value)
            return (type(self.value), self.value)
        except TypeError:
            return Identity(self.value)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Static) and (self.value is other.value or self._key() == other._key())

    def __hash__(self) -> int:
        return hash(self._key())


class _Leaf:
    """The marker for one number or array."""

    def __repr__(self) -> str:
        return "LEAF"

    def __reduce__(self) -> str:
        return "LEAF"


LEAF = _Leaf()


@dataclass(frozen=True)
class Tree:
    """The structure of a container: its type, keys, and one sub-structure per key.

    ``kind`` is "dict", "list", "tuple", "namedtuple", "dataclass", "object"
    (a plain instance, by its ``__dict__``) or "registered".
    """

    kind: str
    cls: type
    keys: tuple
    children: tuple  # Tree, LEAF or Static, one per key

    @property
    def fields(self) -> bool:
        """Whether items are read as attributes (``p.w``) rather than by index."""
        return self.kind in ("namedtuple", "dataclass", "object", "registered")


Structure = Union[Tree, _Leaf, Static]

# cls -> (children: obj -> (keys, values), rebuild: (keys, values) -> obj)
_REGISTRY: dict[type, tuple[Callable[[Any], tuple[tuple, tuple]], Callable[[tuple, tuple], Any]]] = {}


def register(cls: type, children: Callable[[Any], tuple[tuple, tuple]],
             rebuild: Callable[[tuple, tuple], Any]) -> None:
    """Make ``cls`` a container: ``children(obj)`` gives ``(keys, values)``, ``rebuild(keys, values)``
    makes an object of ``cls`` again.  Its items are read as attributes in differentiated code."""
    _REGISTRY[cls] = (children, rebuild)


_ARRAY_PROTOCOLS = ("__array_namespace__", "__array__", "__dlpack__", "__cuda_array_interface__")


def is_data(value: Any) -> bool:
    """Numbers and arrays (NumPy's, or another library's: PyTorch, JAX, CuPy, Dask): what a leaf holds."""
    return isinstance(value, (numbers.Number, np.generic, np.ndarray)) or any(
        hasattr(type(value), p) for p in _ARRAY_PROTOCOLS)


# Attributes that change how an object's attributes are found or set: what it holds is not its __dict__.
_HOOKS = ("__getattr__", "__getattribute__", "__setattr__", "__delattr__", "__slots__", "__new__",
          "__init_subclass__", "__set_name__", "__post_init__")
_HEAP_TYPE = 1 << 9  # Py_TPFLAGS_HEAPTYPE: a class a class statement made (not one of C code)


def read_only_property(value: Any) -> bool:
    """A ``property`` whose getter is a function of Python code and which has no setter or deleter: read
    as the call of its getter on the object (an assignment to it raises AttributeError in Python)."""
    return type(value) is property and inspect.isfunction(value.fget) and value.fset is None and value.fdel is None


def _hooked(klass: type) -> Optional[str]:
    """Why what an object of ``klass`` (or a class deriving from it) holds is not its ``__dict__``
    (a hook such as ``__getattr__``, a property); None if it is."""
    for name, value in vars(klass).items():
        if name in _HOOKS:
            return f"{klass.__name__} defines {name}, which changes what its objects hold"
        if name in ("__dict__", "__weakref__"):  # (every class's own: the object's attributes)
            continue
        if read_only_property(value) or (isinstance(value, classmethod) and inspect.isfunction(value.__func__)):
            continue  # a getter or a classmethod of Python code: called where it is read, like a method
        if isinstance(value, (property, classmethod)) or (hasattr(value, "__set__") and not callable(value)):
            kind = "property with a setter or deleter" if isinstance(value, property) else type(value).__name__
            return f"{klass.__name__}.{name} is a {kind}, run by code s2s_ad does not read"
    return None


def unreadable_class(cls: type) -> Optional[str]:
    """Why an object of ``cls`` (a class of Python code) cannot be read as the record of its attributes
    (``vars(obj)``), its methods inlined on it: a metaclass, a base of C code, a hook such as
    ``__getattr__`` or ``__slots__``, a property with a setter, in it or a base; None if it can."""
    if type(cls) is not type:
        return f"{cls.__name__} has the metaclass {type(cls).__name__}, which may change how it is made"
    for klass in cls.__mro__[:-1]:
        if not klass.__flags__ & _HEAP_TYPE:
            return f"{cls.__name__} derives from {klass.__name__}, which is not a class of Python code"
        refused = _hooked(klass)
        if refused is not None:
            return refused
    return None


def user_object(value: Any) -> bool:
    """An object of the user's own class (a class statement's, in a module that is not of an installed
    package or Python's standard library) that no other rule reads: not a container, number, array,
    function, class or module."""
    cls = type(value)
    return bool(cls.__flags__ & _HEAP_TYPE) and cls.__module__ != "builtins" and not isinstance(
        value, (type, types.ModuleType, types.FunctionType, types.MethodType, functools.partial)) \
        and not is_data(value) and not _items(value)[0] and cls not in _REGISTRY and not library_class(cls)


# Where installed packages and Python's standard library live: their code is not the user's.  Besides
# this interpreter's own folders, any folder named site-packages or dist-packages is one: packages
# another environment's site-packages lends through a .pth file, a system's dist-packages, the user's.
LIBRARY_FOLDERS = tuple(sorted({os.path.join(os.path.abspath(path), "") for key in ("stdlib", "platstdlib",
                                                                                    "purelib", "platlib")
                                if (path := sysconfig.get_paths().get(key))}))
_PACKAGE_FOLDERS = (f"{os.sep}site-packages{os.sep}", f"{os.sep}dist-packages{os.sep}")


def library_file(filename: str) -> bool:
    """Whether the file ``filename`` belongs to an installed package or Python's standard library."""
    path = os.path.abspath(filename)
    return path.startswith(LIBRARY_FOLDERS) or any(folder in path for folder in _PACKAGE_FOLDERS)


def library_class(cls: type) -> bool:
    """Whether ``cls`` is defined in a module of an installed package or of Python's standard library
    (``library_file``)."""
    module = sys.modules.get(cls.__module__)
    filename = getattr(module, "__file__", None)
    return isinstance(filename, str) and library_file(filename)


def _is_namedtuple(value: Any) -> bool:
    return isinstance(value, tuple) and hasattr(type(value), "_fields")


def _items(value: Any) -> tuple[str, tuple, tuple]:
    """``(kind, keys, values)`` of a container, or kind "" for anything else."""
    cls = type(value)
    if cls in _REGISTRY:
        keys, values = _REGISTRY[cls][0](value)
        return "registered", tuple(keys), tuple(values)
    if isinstance(value, dict):
        return "dict", tuple(value), tuple(value.values())
    if _is_namedtuple(value):
        return "namedtuple", tuple(cls._fields), tuple(value)
    if isinstance(value, (list, tuple)):
        return cls.__name__ if cls in (list, tuple) else "tuple", tuple(range(len(value))), tuple(value)
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        names = tuple(f.name for f in dataclasses.fields(value))
        return "dataclass", names, tuple(getattr(value, n) for n in names)
    return "", (), ()


def structure_of(value: Any, objects: bool = False, _seen: frozenset = frozenset()) -> Structure:
    """The structure of ``value``; ``objects``: a plain instance counts as a container of its
    ``__dict__`` (for ``self`` of a method; the objects it holds are not read into).  A container that
    holds itself is refused."""
    if isinstance(value, (bool, np.bool_)):
        return Static(value)  # a flag: structure (an if on it keeps one branch), not data
    if is_data(value):
        return LEAF
    kind, keys, values = _items(value)
    if not kind and objects and hasattr(value, "__dict__") and not isinstance(value, type):
        kind, keys, values = "object", tuple(vars(value)), tuple(vars(value).values())
    if not kind:
        return Static(value)
    # The containers on the path here, by their ids, not an IdentitySet (a call more, on every call with
    # a container argument): the frames of the path hold each of them meanwhile.
    key = id(value)
    if key in _seen:
        raise ValueError(f"a {type(value).__name__} that contains itself cannot be an argument")
    seen = _seen | {key}
    return Tree(kind, type(value), keys, tuple(structure_of(v, False, seen) for v in values))


def is_leaf(structure: Any) -> bool:
    """Whether a place in a structure holds a leaf (``LEAF``, or a label such as a kind put in its place)."""
    return not isinstance(structure, (Tree, Static))


def relabel(structure: Any, labels: Any) -> Any:
    """``structure`` with each leaf replaced by the next of ``labels`` (an iterator): a tree of kinds."""
    if isinstance(structure, Tree):
        return Tree(structure.kind, structure.cls, structure.keys, tuple(relabel(c, labels) for c in structure.children))
    return structure if isinstance(structure, Static) else next(labels)


def labels(structure: Any) -> list:
    """The leaves' labels of a relabelled structure, in order."""
    if isinstance(structure, Tree):
        return [label for c in structure.children for label in labels(c)]
    return [] if isinstance(structure, Static) else [structure]


def leaves(value: Any, structure: Structure) -> list:
    """The numbers and arrays of ``value``, in the order of ``structure``."""
    out: list = []
    _collect(value, structure, out)
    return out


def _collect(value: Any, structure: Structure, out: list) -> None:
    if is_leaf(structure):
        out.append(value)
    elif isinstance(structure, Tree):
        for child, item in zip(structure.children, _by_keys(value, structure)):
            _collect(item, child, out)


def _by_keys(value: Any, tree: Tree) -> tuple:
    """The items of ``value`` at ``tree``'s keys (a tangent or cotangent may list a dict's keys in
    another order); ValueError if ``value`` does not have that structure."""
    kind, keys, values = _items(value)
    if tree.kind == "object" and not kind and hasattr(value, "__dict__"):
        kind, keys, values = "object", tuple(vars(value)), tuple(vars(value).values())
    found = dict(zip(keys, values))
    if (kind != tree.kind and {kind, tree.kind} != {"object", "dataclass"}) or set(keys) != set(tree.keys) \
            or len(keys) != len(tree.keys):
        raise ValueError(f"expected a container like {describe(tree)}, got {type(value).__name__} with "
                         f"keys {list(keys)}")
    return tuple(found[k] for k in tree.keys)


def count(structure: Structure) -> int:
    """How many leaves ``structure`` has."""
    if is_leaf(structure):
        return 1
    if isinstance(structure, Tree):
        return sum(count(c) for c in structure.children)
    return 0


def unflatten(structure: Structure, values: Any, statics: bool = True) -> Any:
    """A container like the one ``structure`` describes, with ``values`` (an iterable) for its leaves;
    ``statics``: whether items that are not data keep their value (else ``None``, as in a gradient)."""
    return _build(structure, iter(values), statics)


def _build(structure: Structure, values: Any, statics: bool) -> Any:
    if isinstance(structure, Tree):
        items = tuple(_build(c, values, statics) for c in structure.children)
        return rebuild(structure, items)
    if isinstance(structure, Static):
        return structure.value if statics else None
    return next(values)  # a leaf


def rebuild(tree: Tree, items: tuple) -> Any:
    """An object of ``tree``'s type with these items."""
    kind, cls = tree.kind, tree.cls
    if kind == "dict":
        made = dict(zip(tree.keys, items))
        return made if cls is dict else cls(made)
    if kind == "list":
        return list(items)
    if kind == "tuple":
        return items if cls is tuple else cls(items)
    if kind == "namedtuple":
        return cls(*items)
    if kind == "dataclass":
        obj: Any = object.__new__(cls)  # no __init__ / __post_init__: a gradient is not validated like a value
        for name, item in zip(tree.keys, items):
            object.__setattr__(obj, name, item)
        return obj
    if kind == "object":
        obj = object.__new__(cls)
        obj.__dict__.update(zip(tree.keys, items))
        return obj
    return _REGISTRY[cls][1](tree.keys, items)


def describe(structure: Structure) -> str:
    """``dict(w, b)``-style words for a structure, for messages and generated headers."""
    if isinstance(structure, Tree):
        inner = ", ".join(f"{k}: {describe(c)}" for k, c in zip(structure.keys, structure.children))
        return f"{structure.cls.__name__}({inner})"
    if isinstance(structure, Static):
        return repr(structure.value)
    return "leaf" if structure is LEAF else str(structure)  # a leaf, or a label put in its place
