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
    """A list or tuple of functions known while lowering (``Known``, ``Nested`` or ``Bound`` items)."""

    items: tuple
    shown: str  # "list", "tuple" or "dict": how the user wrote it
    keys: tuple = ()  # a dict's keys (constants), in order

    def item(self, key: Any) -> Optional[Any]:
        """The function at ``key`` (an index of a list or tuple, negative too; a key of a dict), else None."""
        if self.shown == "dict":
            return self.items[self.keys.index(key)] if key in self.keys else None
        if type(key) is int and -len(self.items) <= key < len(self.items):
            return self.items[key]
        return None


def is_function_object(value: Any) -> bool:
    """A function a name may hold while lowering: a def or lambda of a module, a NumPy ufunc or
    function, a builtin function (``abs``, ``math.exp``); classes and other callables are not."""
    if isinstance(value, type):
        return False
    return isinstance(value, (types.FunctionType, types.BuiltinFunctionType, np.ufunc)) \
        or type(value).__name__ == "_ArrayFunctionDispatcher"  # (np.sum since NumPy 1.25)


def function_named(converter: Any, node: Any) -> Optional[Any]:
    """The function ``node`` names (a local name holding one, a global, ``np.tanh``), else None."""
    if isinstance(node, gast.Name):
        held = converter.local(node.id)
        if isinstance(held, (Nested, Known, Bound)):
            return held
        if held is not None:
            return None
    if not isinstance(node, (gast.Name, gast.Attribute)):
        return None
    found, value = converter.statics.static(node)
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
    items = [function_named(converter, item) for item in node.elts]
    if any(item is None for item in items):
        return None
    return Functions(tuple(items), "list" if isinstance(node, gast.List) else "tuple")


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
