"""Objects of the user's own classes made inside a differentiated function, read as records.

Input: a class of Python code (``Model``, ``Vector``) and its ``__init__``
(its own, or its bases' found through its MRO; none: ``object``'s).
Output: ``record_layout``: the attributes an object of it holds, each as the
``__init__`` parameter (or constant) it is assigned from, those the
``__init__`` each ``super().__init__(...)`` reaches assigns included, so that
the call ``Model(w)`` can be lowered as a record of its attributes, as a
dataclass is; or the reason why what the object holds cannot be known while
lowering (a property with a setter, ``__slots__``, ``__getattr__`` in it or a base, a
metaclass, a base not of Python code, an ``__init__`` that computes, branches
or calls anything but ``super().__init__`` with its arguments).  The reason is
a sentence for a located ``TransformError``; this module raises nothing itself.

``operator_methods`` names the methods an operator dispatches to (``a + b``
is ``a.__add__(b)``, else ``b.__radd__(a)``).
"""
from __future__ import annotations

import ast
import dataclasses
import inspect
import operator
import sys
import textwrap
import types
from dataclasses import dataclass
from typing import Any, Callable, Optional, Union, cast

import gast
from ..core.containers import _HEAP_TYPE, read_only_property, unreadable_class
from ..rules import registry as rules

# Finds the __init__ Python runs for a class after a class of its MRO (None: the first), as
# (defining class, function): StaticNames.next_attribute, which records it in the snapshot.
NextInit = Callable[[type, Optional[type]], tuple[type, Any]]


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
class Computed:
    """An ``__init__`` that computes what it assigns (``self.n = len(w)``, ``self.scale = 2.0 * s``,
    branches, loops, locals): lowered as the function ``node``, its parameters but ``self``, each
    ``self.a`` a local of its own (``self_a``), returning them all as a tuple in the order of
    ``attributes`` (their first assignments)."""
    node: Any  # a gast.FunctionDef
    attributes: tuple[str, ...]
    parsed: Any = None  # the ParsedFunction of the __init__, once its tree is rewritten and checked


@dataclass(frozen=True)
class Layout:
    """What an object of a class holds: ``(attribute, source)`` in assignment order; a source is a
    ``Parameter`` or a constant (a number, string, None)."""
    attributes: tuple[tuple[str, Union[Parameter, Any]], ...]


def is_plain_class(cls: Any) -> bool:
    """A class of Python code (a class statement's, not NumPy's or Python's own) whose objects are
    made by an ``__init__`` of Python code found through its bases, or by ``object``'s own (a class
    with no ``__init__``: an object with no attributes).  A class with a metaclass counts only with
    an ``__init__`` of its own (so that making one is refused, naming the metaclass)."""
    if not isinstance(cls, type) or cls.__module__ == "builtins" or not cls.__flags__ & _HEAP_TYPE:
        return False
    if type(cls) is not type:
        return isinstance(cls.__dict__.get("__init__"), types.FunctionType)
    init = next((vars(k)["__init__"] for k in cls.__mro__ if "__init__" in vars(k)), None)
    return isinstance(init, types.FunctionType) or (init is object.__init__ and all(
        k.__flags__ & _HEAP_TYPE for k in cls.__mro__[:-1]))


def made_by_dataclass(cls: type) -> bool:
    """Objects of ``cls`` (a dataclass or a class deriving from one) are made by the ``__init__`` that
    ``@dataclass`` wrote, which assigns its fields from the parameters of their names: not by an
    ``__init__`` of the user's in a class deriving from a dataclass (read as a plain class's)."""
    owner = next(k for k in cls.__mro__ if "__init__" in vars(k))
    params = vars(owner).get("__dataclass_params__")
    return params is not None and bool(params.init) and _written_by_dataclass(vars(owner)["__init__"])


def _written_by_dataclass(init: Any) -> bool:
    """An ``__init__`` ``@dataclass`` wrote (CPython makes it in ``__create_fn__``, from no file), not
    one the user wrote in the decorated class, which ``@dataclass`` keeps."""
    code = getattr(init, "__code__", None)
    if code is None:
        return False
    if getattr(code, "co_qualname", "").startswith("__create_fn__"):
        return True
    try:
        inspect.getsource(init)
    except (OSError, TypeError):
        return True
    return False


def computed_layout(cls: type, node: Any) -> Union[Computed, str]:
    """The ``__init__`` Python runs for ``cls`` (its def parsed: the gast ``node``, rewritten in place) as
    a ``Computed`` function, or why it cannot be read so: it calls ``super().__init__`` (read only as
    the plain form), or uses ``self`` otherwise than reading and assigning its attributes (a method
    call, ``self`` passed on)."""
    name = cls.__name__
    params = node.args
    if params.vararg or params.kwarg or params.kwonlyargs or getattr(params, "posonlyargs", None) \
            or not params.args or node.decorator_list:
        return f"{name}.__init__ takes *args, **kwargs or keyword-only parameters"
    this = params.args[0].id
    for statement in gast.walk(node):
        if isinstance(statement, gast.Return) and statement is not node:
            return f"{name}.__init__ returns early (line {getattr(statement, 'lineno', '?')})"
        if isinstance(statement, gast.Call) and isinstance(statement.func, gast.Attribute) \
                and isinstance(statement.func.value, gast.Call) and isinstance(statement.func.value.func, gast.Name) \
                and statement.func.value.func.id == "super":
            return (f"{name}.__init__ computes what it assigns and calls super().__init__ (line "
                    f"{getattr(statement, 'lineno', '?')}), which s2s_ad reads only where each __init__ just assigns "
                    "its arguments; compute in one __init__ (without super().__init__), or in a method")
    taken = {n.id for n in gast.walk(node) if isinstance(n, gast.Name)}
    prefix = this + "_"
    while any(t.startswith(prefix) and t != this for t in taken):
        prefix += "_"
    attributes: list[str] = [n.attr for n in gast.walk(node) if isinstance(n, gast.Attribute) and isinstance(
        n.ctx, gast.Store) and isinstance(n.value, gast.Name) and n.value.id == this]
    attributes = list(dict.fromkeys(attributes))  # (in the order of their first assignments)
    _staticmethods_by_class(cls, node, this, attributes, taken)
    for read in gast.walk(node):
        if isinstance(read, gast.Attribute) and isinstance(read.value, gast.Name) and read.value.id == this \
                and read.attr not in attributes:
            return (f"{name}.__init__ reads self.{read.attr} (line {getattr(read, 'lineno', '?')}), which it does not "
                    f"assign (a method or an attribute of the class, which s2s_ad does not follow while an "
                    f"__init__ runs); compute it in __init__ itself or pass it in")
    rewritten = node
    for parent in gast.walk(rewritten):
        for field_name, value in gast.iter_fields(parent):
            items = value if isinstance(value, list) else [value]
            for position, child in enumerate(items):
                if isinstance(child, gast.Attribute) and isinstance(child.value, gast.Name) and child.value.id == this:
                    local = gast.Name(id=prefix + child.attr, ctx=child.ctx, annotation=None, type_comment=None)
                    gast.copy_location(local, child)
                    if isinstance(value, list):
                        value[position] = local
                    else:
                        setattr(parent, field_name, local)
    for leftover in gast.walk(rewritten):
        if isinstance(leftover, gast.Name) and leftover.id == this and leftover is not params.args[0]:
            return (f"{name}.__init__ uses {this} otherwise than reading and assigning its attributes (line "
                    f"{getattr(leftover, 'lineno', '?')}: a method called on it, or {this} passed on)")
        if isinstance(leftover, (gast.Global, gast.Nonlocal)):
            return f"{name}.__init__ declares global or nonlocal names"
    if any(read_only_property(vars(klass).get(a)) for a in attributes for klass in cls.__mro__):
        return f"{name}.__init__ assigns a property with no setter (Python raises AttributeError)"
    rewritten.args.args = rewritten.args.args[1:]  # (the defaults are the last parameters': self has none)
    returned = gast.Return(value=gast.Tuple(elts=[gast.Name(id=prefix + a, ctx=gast.Load(), annotation=None,
                                                            type_comment=None) for a in attributes],
                                            ctx=gast.Load()))
    gast.copy_location(returned, rewritten.body[-1])
    rewritten.body = [*rewritten.body, returned]
    rewritten.name = f"{name}_init"
    return Computed(rewritten, tuple(attributes))


def _staticmethods_by_class(cls: type, node: Any, this: str, attributes: list, taken: set) -> None:
    """``self.centre(v)`` in ``node`` (an ``__init__``), ``centre`` a staticmethod of ``cls`` (or a base)
    that ``__init__`` does not assign: read as ``Normaliser.centre(v)``, what Python calls, where the
    class is the module-level name it is known by and ``__init__`` does not shadow that name."""
    module = sys.modules.get(cls.__module__)
    if getattr(module, cls.__qualname__, None) is not cls or cls.__qualname__ in taken:
        return
    for parent in gast.walk(node):
        for field_name, value in gast.iter_fields(parent):
            items = value if isinstance(value, list) else [value]
            for position, child in enumerate(items):
                if not (isinstance(child, gast.Attribute) and isinstance(child.value, gast.Name)
                        and child.value.id == this and isinstance(child.ctx, gast.Load)
                        and child.attr not in attributes
                        and isinstance(inspect.getattr_static(cls, child.attr, None), staticmethod)):
                    continue
                owner = gast.copy_location(gast.Name(id=cls.__qualname__, ctx=gast.Load(), annotation=None,
                                                     type_comment=None), child.value)
                read = gast.copy_location(gast.Attribute(value=owner, attr=child.attr, ctx=gast.Load()), child)
                if isinstance(value, list):
                    value[position] = read
                else:
                    setattr(parent, field_name, read)


def record_layout(cls: type, next_init: NextInit) -> Union[Layout, str]:
    """The layout of an object of ``cls`` made by calling it, or why it cannot be known: the
    attributes its ``__init__`` assigns, with those of the ``__init__`` each ``super().__init__(...)``
    reaches through ``cls.__mro__`` (the union, in assignment order).  ``next_init(cls, after)``
    finds the ``__init__`` Python runs after the class ``after`` (None: the first) as
    ``(defining class, function)``, recorded in the snapshot."""
    refused = unreadable_class(cls)
    if refused is not None:
        return refused
    layout = _chain_layout(cls, None, next_init)
    if isinstance(layout, Layout):
        return _assigns_a_property(cls, layout) or layout
    return layout


def _assigns_a_property(cls: type, layout: Layout) -> Optional[str]:
    """Why ``cls``'s ``__init__`` cannot run as written: it assigns an attribute its class (or a base)
    defines as a property without a setter, where Python raises AttributeError."""
    for name, _ in layout.attributes:
        if any(read_only_property(vars(klass).get(name)) for klass in cls.__mro__):
            return f"{cls.__name__}.__init__ assigns self.{name}, a property with no setter (Python raises AttributeError)"
    return None


def _chain_layout(cls: type, after: Optional[type], next_init: NextInit) -> Union[Layout, str]:
    """The layout the ``__init__`` run after ``after`` in ``cls.__mro__`` assigns (with the bases'
    it calls through ``super().__init__``); ``object.__init__`` assigns none."""
    owner, init = next_init(cls, after)
    if init is object.__init__:
        return Layout(())
    if not isinstance(init, types.FunctionType):
        return f"{owner.__name__}.__init__ is not a function of Python code"
    if made_by_dataclass(owner):  # super().__init__(a, b) of a dataclass: its fields, from its parameters
        fields = dataclasses.fields(owner)
        if not all(f.init for f in fields):
            return f"{owner.__name__} has init=False fields, which its __init__ sets by running code"
        return Layout(tuple((f.name, Parameter(f.name)) for f in fields))
    try:
        tree = ast.parse(textwrap.dedent(inspect.getsource(init)))
    except (OSError, TypeError, SyntaxError):
        return f"the source of {owner.__name__}.__init__ cannot be read"
    definition = tree.body[0]
    if not isinstance(definition, ast.FunctionDef) or definition.decorator_list:
        return f"{owner.__name__}.__init__ is decorated"
    offset = init.__code__.co_firstlineno - 1
    return _layout(owner.__name__, definition, offset, lambda call: _super_layout(cls, owner, call, next_init))


def _super_layout(cls: type, owner: type, call: ast.Call, next_init: NextInit) -> Union[Layout, str]:
    """What ``super().__init__(...)`` in ``owner.__init__`` assigns, each attribute's source given as
    the caller's: the next ``__init__``'s parameters bound to the call's arguments (the caller's
    parameters or constants) and its defaults."""
    base_owner, base_init = next_init(cls, owner)
    if base_init is object.__init__:  # (object.__init__ takes no arguments: Python raises TypeError)
        return Layout(()) if not call.args and not call.keywords else \
            f"super().__init__ in {owner.__name__}.__init__ is object.__init__, which takes no arguments"
    base = _chain_layout(cls, owner, next_init)
    if isinstance(base, str):
        return str(base)  # (a base's __init__ that computes is read through super() in the plain form only)
    try:
        signature = inspect.signature(base_init)
        bound = signature.bind(None, *[_source(a) for a in call.args],
                               **{k.arg: _source(k.value) for k in call.keywords if k.arg is not None})
    except TypeError as exc:
        return f"super().__init__ in {owner.__name__}.__init__ does not fit {base_owner.__name__}.__init__ ({exc})"
    bound.apply_defaults()
    return Layout(tuple((attribute, bound.arguments[source.name] if isinstance(source, Parameter) else source)
                        for attribute, source in base.attributes))


def _source(node: ast.expr) -> Any:
    """An argument of ``super().__init__(...)`` as an attribute source (checked by ``_super_call``)."""
    return Parameter(node.id) if isinstance(node, ast.Name) else cast(ast.Constant, node).value


def _layout(name: str, init: ast.FunctionDef, offset: int,
            inherited: Callable[[ast.Call], Union[Layout, str]]) -> Union[Layout, str]:
    """The layout an ``__init__`` (parsed alone: ``offset`` lines into its file) assigns;
    ``inherited`` gives the layout of a ``super().__init__(...)`` call in it."""
    params = init.args
    if params.vararg or params.kwarg or params.posonlyargs or not params.args:
        return f"{name}.__init__ takes *args or **kwargs"
    this, names = params.args[0].arg, {a.arg for a in params.args[1:] + params.kwonlyargs}
    body = init.body[1:] if init.body and _docstring(init.body[0]) else init.body
    attributes: dict[str, Union[Parameter, Any]] = {}
    own: set[str] = set()  # (an attribute a base's __init__ assigned may be set again: the later value)
    for statement in body:
        if isinstance(statement, ast.Pass):
            continue
        call = _super_call(statement, names)
        if call is not None:
            base = inherited(call)
            if isinstance(base, str):
                return base
            attributes.update(base.attributes)
            continue
        source = _assigned(statement, this, names)
        if source is None:
            reason = (f"{name}.__init__ does more than assign its arguments to attributes "
                      f"(line {statement.lineno + offset}: {ast.unparse(statement)!r}); only "
                      f"'self.a = a' statements (and super().__init__(a, ...)) can be read")
            calls_super = any(_super_call(s, names) is not None for s in body)
            return reason if calls_super else ComputesAttributes(reason)
        attribute, value = source
        if attribute in own:
            return f"{name}.__init__ assigns self.{attribute} twice"
        own.add(attribute)
        attributes[attribute] = value
    return Layout(tuple(attributes.items()))


class ComputesAttributes(str):
    """Why an ``__init__`` is not read as the plain form: it computes what it assigns, with no
    ``super().__init__`` call; ``computed_layout`` may read it as a function instead."""


def _super_call(statement: ast.stmt, names: set[str]) -> Optional[ast.Call]:
    """``super().__init__(a, 2.0, k=b)`` as a statement, its arguments the ``__init__``'s parameters
    or constants: the call; None for anything else."""
    if not (isinstance(statement, ast.Expr) and isinstance(statement.value, ast.Call)):
        return None
    call = statement.value
    func = call.func
    if not (isinstance(func, ast.Attribute) and func.attr == "__init__" and isinstance(func.value, ast.Call)
            and isinstance(func.value.func, ast.Name) and func.value.func.id == "super" and not func.value.args
            and not func.value.keywords):
        return None
    values = list(call.args) + [k.value for k in call.keywords]
    if any(k.arg is None for k in call.keywords) or not all(
            (isinstance(v, ast.Name) and v.id in names) or (isinstance(v, ast.Constant) and isinstance(
                v.value, (int, float, str, bool, type(None)))) for v in values):
        return None
    return call


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
