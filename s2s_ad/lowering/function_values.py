"""Functions held as values while lowering (stage 2, lower): a name bound to a function known while
transforming (``act = np.tanh``, ``act = relu``), and a list or tuple of such functions
(``layers = [relu, np.tanh, lambda v: v ** 2]``) walked by a ``for`` loop or called by a constant
index.

Input: a gast expression of the body being lowered and the converter that resolves its names.
Output: the function it names (a ``Known`` for a function of a module, NumPy's or yours; the
``Nested``, ``Known`` or ``Bound`` a local name already holds), or a ``Functions`` for a display of
them (or for a dict display of them by constant keys: ``acts = {"tanh": np.tanh, "sq": lambda v: v * v}``),
or None where the expression is no function.  Neither is ever a run-time value: a call of one
is inlined or called as if the function were written there, and a loop over a ``Functions`` is
unrolled (each item may be another function), so the generated code holds no function objects.
"""
from __future__ import annotations

import ast
import dataclasses
import itertools
import linecache
import types
from dataclasses import dataclass
from typing import Any, Optional

import gast
import numpy as np

from ..core import ir
from ..frontend.conversion import Bound, Known, Nested


@dataclass(frozen=True)
class Functions:
    """A list or tuple of functions known while lowering (``Known``, ``Nested`` or ``Bound`` items, or
    tuple displays of them and numbers: ``[(np.tanh, 1.5), (np.sin, 0.5)]``)."""

    items: tuple
    shown: str  # "list", "tuple" or "dict": how the user wrote it
    keys: tuple = ()  # a dict's keys (constants), in order

    def item(self, key: Any) -> Optional[Any]:
        """The function at ``key`` (an index of a list or tuple, negative too; a key of a dict), else None."""
        if self.shown == "dict":
            return self.items[self.keys.index(key)] if key in self.keys else None
        if type(key) is int and -len(self.items) <= key < len(self.items):
            return self.items[key] if not isinstance(self.items[key], ir.Display) else None
        return None


def is_function_object(value: Any) -> bool:
    """A function a name may hold while lowering: a def or lambda of a module, a NumPy ufunc or
    function, a builtin function (``abs``, ``math.exp``); classes and other callables are not."""
    if isinstance(value, type):
        return False
    return isinstance(value, (types.FunctionType, types.BuiltinFunctionType, np.ufunc)) \
        or type(value).__name__ == "_ArrayFunctionDispatcher"  # (np.sum since NumPy 1.25)


def function_named(converter: Any, node: Any) -> Optional[Any]:
    """The function ``node`` names (a local name holding one, a global, ``np.tanh``, an item of a
    module-level dict by a constant key: ``ACTS[kind]``), else None."""
    if isinstance(node, gast.Name):
        held = converter.local(node.id)
        if isinstance(held, (Nested, Known, Bound)):
            return held
        if held is not None:
            return None
    if isinstance(node, gast.Subscript):  # (what a call of it would call: StaticNames.callee)
        found, value = converter.statics.callee(node)
    elif isinstance(node, (gast.Name, gast.Attribute)):
        found, value = converter.statics.static(node)
    else:
        return None
    return Known(value) if found and is_function_object(value) else None


def functions_shown(converter: Any, node: Any) -> Optional[Functions]:
    """The ``Functions`` of a list or tuple display every item of which names a function, or that a
    local name holds (``for f in fs``); None for anything else."""
    if isinstance(node, gast.Name) and converter.local(node.id) is not None:
        held = converter.local(node.id)
        return held if isinstance(held, Functions) else None
    if isinstance(node, (gast.Name, gast.Attribute)):
        found, value = converter.statics.static(node)
        return _module_level(converter, value) if found else None
    if isinstance(node, gast.Dict) and node.keys and all(
            isinstance(k, gast.Constant) and isinstance(k.value, (str, int)) for k in node.keys):
        items = [function_named(converter, value) for value in node.values]
        keys = tuple(k.value for k in node.keys)
        if any(item is None for item in items) or len(set(keys)) != len(keys):
            return None
        return Functions(tuple(items), "dict", keys)
    if not isinstance(node, (gast.List, gast.Tuple)) or not node.elts:
        return None
    items = [function_named(converter, item) or _paired(converter, item) for item in node.elts]
    if any(item is None for item in items):
        return None
    return Functions(tuple(items), "list" if isinstance(node, gast.List) else "tuple")


def _paired(converter: Any, node: Any) -> Optional[ir.Display]:
    """``(np.tanh, 1.5)`` in ``layers = [(np.tanh, 1.5), (np.sin, 0.5 * s)]``: a tuple display of functions
    and numbers or arrays, at least one a function, as an ``ir.Display`` of them (``computed_now`` computes
    the others where the list is made); a loop over the list unpacks each (``for act, s in layers``).
    None for anything else (nothing converted then)."""
    if not isinstance(node, gast.Tuple) or not node.elts:
        return None
    functions = [function_named(converter, part) for part in node.elts]
    if not any(functions):
        return None
    parts = []
    for part, function in zip(node.elts, functions):
        if function is None:
            function = converter.convert(part)  # (a number or an array: computed where the list is made)
            if not isinstance(function, (ir.Const, ir.Var, ir.Call)) or isinstance(function, ir.Const) and \
                    isinstance(function.value, (list, tuple, dict)):
                raise converter.error("a container beside a function in a tuple", "a tuple of a list of functions "
                                      "holds functions, numbers and arrays: (np.tanh, 1.5), (act, W)", part)
        parts.append(function)
    return ir.Display("tuple", tuple(parts))


def _module_level(converter: Any, value: Any) -> Optional[Functions]:
    """A module-level list, tuple or dict of functions (``ACTIVATIONS = [np.tanh, relu]``) as ``Functions``,
    its keys and every item recorded in the snapshot: changing, adding or removing one makes the code
    again; None for any other value."""
    if type(value) not in (list, tuple, dict) or not value:
        return None
    keys = tuple(value) if type(value) is dict else ()
    items = tuple(value.values()) if type(value) is dict else tuple(value)
    if not all(is_function_object(item) for item in items) or not all(isinstance(k, (str, int)) for k in keys):
        return None
    snapshot = converter.statics.resolver.snapshot
    snapshot.record_keys(value)
    for key, item in zip(keys or range(len(items)), items):
        snapshot.record_item(value, key, item)
    return Functions(tuple(Known(item) for item in items), type(value).__name__, keys)


def function_value(converter: Any, node: Any) -> Optional[Any]:
    """What an assignment of ``node`` binds when it is a function or a display of functions."""
    return function_named(converter, node) or functions_shown(converter, node)


_made_count = itertools.count()


def function_constant(converter: Any, value: Any, callee: str, node: Any) -> Any:
    """A function passed to ``callee``, a function declared ``takes_functions`` (scipy.integrate.odeint),
    as the constant the generated code passes it: a function of a module as it is; a nested def or
    lambda made a function of its own (its source a linecache pseudo-file, its globals the module's),
    refused where it reads a name of the function it is defined in (a value that may be differentiated,
    which the callee would not see move) or is a partial."""
    if isinstance(value, Known):
        return ir.Const(value.value)
    if isinstance(value, Bound) or not isinstance(value, Nested) or not isinstance(value.node, gast.FunctionDef):
        raise converter.error(f"the function passed to {callee}", "pass a function by its name (one of the module's, "
                              "or a nested def or lambda that reads only its parameters); pass fixed values in "
                              "args=(...)", node)
    fdef = value.node
    params = {a.id for a in fdef.args.args + fdef.args.kwonlyargs if isinstance(a, gast.Name)}
    if fdef.args.defaults or any(d is not None for d in fdef.args.kw_defaults):
        raise converter.error(f"the defaults of {fdef.name!r}, passed to {callee}", "a function passed to it is "
                              "called by it, and its derivative must see every value it reads move: pass the values "
                              "in args=(...) and take them as parameters", node)
    scope = dict(value.scope) if value.scope is not None else {}
    for inner in gast.walk(fdef):
        if isinstance(inner, gast.Name) and isinstance(inner.ctx, gast.Load) and inner.id not in params \
                and (inner.id in scope or converter.local(inner.id) is not None):
            raise converter.error(f"{inner.id!r}, read by {fdef.name!r} from the function it is defined in",
                                  f"a function passed to {callee} is called by it, and s2s_ad does not follow "
                                  f"values it reads through its closure; pass {inner.id} in args=(...) and take it "
                                  f"as a parameter (or define the function at module level)", node)
    return ir.Const(_made(fdef, converter.resolver.globals))


def _made(fdef: Any, module_globals: dict) -> Any:
    """``fdef`` (a gast def reading only its parameters and the module's names) as a function of that module."""
    tree = ast.fix_missing_locations(ast.Module(body=[gast.gast_to_ast(fdef)], type_ignores=[]))
    text = ast.unparse(tree) + "\n"
    filename = f"<s2s_ad function passed as a value {next(_made_count)}: {fdef.name}>"
    linecache.cache[filename] = (len(text), None, text.splitlines(True), filename)
    made: dict[str, Any] = {}
    exec(compile(text, filename, "exec"), module_globals, made)
    return made[fdef.name]


def function_appended(converter: Any, call: gast.Call) -> Optional[Functions]:
    """``fs.append(f)`` where ``f`` is a function (or a tuple holding one): ``fs`` (an empty list, or a
    list of functions) with ``f`` after its items, else None where ``f`` is no function.  A lambda's
    defaults are read now, as Python computes them where the lambda is made (``lambda v, k=k: v * k``
    in a loop keeps each step's ``k``); the names it reads are read where it is called, as Python does."""
    item = function_named(converter, call.args[0]) or _paired(converter, call.args[0])
    if item is None:
        return None
    name = call.func.value.id
    held = converter.local(name)
    if isinstance(held, Functions) and held.shown == "list":
        items = held.items
    elif isinstance(held, ir.Display) and held.kind == "list" and not held.items:
        items = ()
    else:
        raise converter.error(f"the append of a function to {name!r}", "a list of functions is made while "
                              "transforming: append functions to a list made empty ([]) before, in straight-line "
                              "code or in a loop over a range of constants (unrolled, at most "
                              "64 steps, with no break, continue or return)", call)
    return Functions(items + (_made_now(converter, item),), "list")


def _made_now(converter: Any, item: Any) -> Any:
    """``item`` with the values its defaults read now (a tuple display's functions each)."""
    if isinstance(item, ir.Display):
        return ir.Display(item.kind, tuple(_made_now(converter, part) for part in item.items))
    if not isinstance(item, Nested) or item.defaults is not None:
        return item
    names = [d.id for d in item.node.args.defaults if isinstance(d, gast.Name)]
    return dataclasses.replace(item, defaults=tuple((n, converter.local(n)) for n in names
                                                    if converter.local(n) is not None))


def computed_now(functions: Functions, flatten: Any) -> Functions:
    """``functions`` with each number or array its tuples hold computed now (``flatten``: an expression to
    the atom that holds it), as Python computes a display's items where it is made."""
    def now(item: Any) -> Any:
        if isinstance(item, ir.Display):
            return ir.Display(item.kind, tuple(now(part) for part in item.items))
        return item if isinstance(item, (Nested, Known, Bound)) or ir.is_atom(item) else flatten(item)
    return dataclasses.replace(functions, items=tuple(now(item) for item in functions.items))
