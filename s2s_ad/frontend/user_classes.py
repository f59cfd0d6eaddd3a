"""Objects of the user's own classes made inside a differentiated function, read as records.

Input: a class of Python code (``Model``, ``Vector``) and its ``__init__``.
Output: ``record_layout``: the attributes an object of it holds, each as the
``__init__`` parameter (or constant) it is assigned from, so that the call
``Model(w)`` can be lowered as a record of its attributes, as a dataclass is;
or the reason why what the object holds cannot be known while lowering (a
``property``, ``__slots__``, ``__getattr__``, a base class, an ``__init__``
that computes, branches or calls).  The reason is a sentence for a located
``TransformError``; this module raises nothing itself.

``operator_methods`` names the methods an operator dispatches to (``a + b``
is ``a.__add__(b)``, else ``b.__radd__(a)``).
"""
from __future__ import annotations

import ast
import inspect
import operator
import textwrap
import types
from dataclasses import dataclass
from typing import Any, Optional, Union

from ..rules import registry as rules

# Attributes that change how an object's attributes are found or set: what it holds is not its __dict__.
_HOOKS = ("__getattr__", "__getattribute__", "__setattr__", "__delattr__", "__slots__", "__new__",
          "__init_subclass__", "__set_name__", "__post_init__")


def operator_methods(fn: Any) -> Optional[tuple[str, str]]:
    """The methods an arithmetic operator calls (``operator.add``: ``__add__``, then ``__radd__``;
    ``operator.neg``: ``__neg__`` and no other), from the syntax its template declares; None for
    other functions (a comparison, an index, ``not``)."""
    syntax = rules.fact(fn, "syntax")
    if not (isinstance(syntax, type) and issubclass(syntax, (ast.operator, ast.unaryop))) or syntax is ast.Not \
            or getattr(operator, getattr(fn, "__name__", ""), None) is not fn:
        return None
    name = str(getattr(fn, "__name__", "")).rstrip("_")  # operator.and_ is __and__
    return f"__{name}__", ("" if issubclass(syntax, ast.unaryop) else f"__r{name}__")


@dataclass(frozen=True)
class Parameter:
    """An attribute assigned from the ``__init__`` parameter ``name``."""
    name: str


@dataclass(frozen=True)
class Layout:
    """What an object of a class holds: ``(attribute, source)`` in assignment order; a source is a
    ``Parameter`` or a constant (a number, string, None)."""
    attributes: tuple[tuple[str, Union[Parameter, Any]], ...]


def is_plain_class(cls: Any) -> bool:
    """A class of Python code (its ``__init__`` written in Python), not NumPy's or Python's own."""
    return isinstance(cls, type) and isinstance(cls.__dict__.get("__init__"), types.FunctionType) \
        and cls.__module__ != "builtins"


def record_layout(cls: type) -> Union[Layout, str]:
    """The layout of an object of ``cls`` made by calling it, or why it cannot be known."""
    if type(cls) is not type:
        return f"{cls.__name__} has the metaclass {type(cls).__name__}, which may change how it is made"
    if cls.__bases__ != (object,):
        return f"{cls.__name__} derives from {', '.join(b.__name__ for b in cls.__bases__)}"
    for name, value in vars(cls).items():
        if name in _HOOKS:
            return f"{cls.__name__} defines {name}, which changes what its objects hold"
        if name in ("__dict__", "__weakref__"):  # (every class's own: the object's attributes)
            continue
        if isinstance(value, (property, classmethod)) or (hasattr(value, "__set__") and not callable(value)):
            return f"{cls.__name__}.{name} is a {type(value).__name__}, read by running code"
    init = vars(cls)["__init__"]
    try:
        tree = ast.parse(textwrap.dedent(inspect.getsource(init)))
    except (OSError, TypeError, SyntaxError):
        return f"the source of {cls.__name__}.__init__ cannot be read"
    definition = tree.body[0]
    if not isinstance(definition, ast.FunctionDef) or definition.decorator_list:
        return f"{cls.__name__}.__init__ is decorated"
    return _layout(cls.__name__, definition, init.__code__.co_firstlineno - 1)


def _layout(name: str, init: ast.FunctionDef, offset: int) -> Union[Layout, str]:
    """The layout an ``__init__`` (parsed alone: ``offset`` lines into its file) assigns."""
    params = init.args
    if params.vararg or params.kwarg or params.posonlyargs or not params.args:
        return f"{name}.__init__ takes *args or **kwargs"
    this, names = params.args[0].arg, {a.arg for a in params.args[1:] + params.kwonlyargs}
    body = init.body[1:] if init.body and _docstring(init.body[0]) else init.body
    attributes: dict[str, Union[Parameter, Any]] = {}
    for statement in body:
        if isinstance(statement, ast.Pass):
            continue
        source = _assigned(statement, this, names)
        if source is None:
            return (f"{name}.__init__ does more than assign its arguments to attributes "
                    f"(line {statement.lineno + offset}: {ast.unparse(statement)!r}); only "
                    f"'self.a = a' statements can be read")
        attribute, value = source
        if attribute in attributes:
            return f"{name}.__init__ assigns self.{attribute} twice"
        attributes[attribute] = value
    return Layout(tuple(attributes.items()))


def _docstring(statement: ast.stmt) -> bool:
    return isinstance(statement, ast.Expr) and isinstance(statement.value, ast.Constant) \
        and isinstance(statement.value.value, str)


def _assigned(statement: ast.stmt, this: str, names: set[str]) -> Optional[tuple[str, Any]]:
    """``self.a = a`` (or ``self.a = 2.0``): the attribute and its source; None for anything else."""
    targets: list[ast.expr]
    if isinstance(statement, ast.AnnAssign) and statement.value is not None:
        targets, value = [statement.target], statement.value
    elif isinstance(statement, ast.Assign):
        targets, value = statement.targets, statement.value
    else:
        return None
    if len(targets) != 1 or not isinstance(targets[0], ast.Attribute):
        return None
    target = targets[0]
    if not (isinstance(target.value, ast.Name) and target.value.id == this):
        return None
    if isinstance(value, ast.Name) and value.id in names:
        return target.attr, Parameter(value.id)
    if isinstance(value, ast.Constant) and isinstance(value.value, (int, float, str, bool, type(None))):
        return target.attr, value.value
    return None


# How Python reads an object as a container: the methods it looks for (in its class, through the
# bases), and the TypeError it raises where the class defines none of them.
_PROTOCOLS = {
    "iteration": (("__iter__", "__getitem__"), "'{name}' object is not iterable"),
    "len()": (("__len__",), "object of type '{name}' has no len()"),
    "an index": (("__getitem__", "__class_getitem__"), "'{name}' object is not subscriptable"),
}


def read_as_container(kind: str, cls: type, protocol: str, class_attribute: Any) -> Optional[tuple[str, str]]:
    """Why an object of the user's class (a record of ``kind`` "object", "dataclass" or "registered")
    cannot be read by ``protocol`` ("iteration", "len()", "an index") as s2s_ad reads a dict, as
    ``(construct, reason)`` for a located ``TransformError``; None for the other kinds (a dict, list,
    tuple, namedtuple: read as Python reads them).  Where the class defines the method Python calls,
    s2s_ad does not call it (its attributes are not its items); where it defines none, Python raises
    TypeError, and so does the refusal say.  ``class_attribute(cls, name)`` finds a name as Python
    does (recorded in the snapshot: a method added later makes the code again)."""
    if kind not in ("object", "dataclass", "registered"):
        return None
    methods, message = _PROTOCOLS[protocol]
    name = cls.__name__
    defined = [m for m in methods if class_attribute(cls, m) is not None]
    if defined:
        return (f"{protocol} of an object of the class {name}",
                f"{name} defines {defined[0]}, which s2s_ad does not call (it reads an object by its attributes "
                f"alone); loop over its attributes (for item in (obj.a, obj.b)) or call a method of {name} "
                "that returns them as a tuple")
    looked_for = f"no {methods[0]}" if protocol != "iteration" else f"neither {methods[0]} nor {methods[1]}"
    return (f"{protocol} of an object of the class {name}",
            f"Python raises TypeError: {message.format(name=name)} ({name} defines {looked_for})")
