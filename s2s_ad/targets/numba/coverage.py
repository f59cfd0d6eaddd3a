"""Which rules compile under ``backend="numba"``: for each rule of s2s_ad's templates, the calls it
makes (its function, in the forward sweep, and every function its adjoint's body calls) that Numba
has no implementation of (imports numba).

Input: the rule registry, and Numba's typing registry once ``numba.runtime.register()`` has added
s2s_ad's implementations (the engine ops, the compiled versions of ``numba.rules``).  Output:
``missing_calls()``, by rule, the names of those calls (none: every call has an implementation).
A call with an implementation compiles for the types it takes (float64 arrays and numbers, mostly:
each version says which); one without makes the function run as Python, said by a
``CompileFallbackWarning``.  A rule whose adjoint calls such a function on one branch only (a list
argument, say) compiles on the others: the listing is of what the rule may call.  A helper declared
with ``folds=`` (``where_kept``, ``expand_reduced``...) counts as compiled: the code is made with the
expression it folds to for the usual arguments (no ``where=``, no ``initial=``).
"""
from __future__ import annotations

import builtins
import types
from typing import Any, Optional

import gast

from ...rules import registry as rules
from ...rules.rule import Rule
from ...core.identity import IdentityMap


def _callee(node: Any, namespace: dict) -> Any:
    """The object a call's function expression names in the template's namespace (None: not a name)."""
    if isinstance(node, gast.Name):
        return namespace[node.id] if node.id in namespace else getattr(builtins, node.id, None)
    if isinstance(node, gast.Attribute):
        owner = _callee(node.value, namespace)
        return None if owner is None else getattr(owner, node.attr, None)
    return None


def _name(fn: Any) -> str:
    return getattr(fn, "__name__", None) or type(fn).__name__


def _builtin(rule: Rule) -> bool:
    return rule.namespace.get("__name__", "").startswith("s2s_ad.templates")


def missing_calls() -> dict[Any, tuple[str, ...]]:
    """For each adjoint rule of s2s_ad's templates (by its function), the sorted names of the calls it
    makes that Numba has no implementation of."""
    from numba.core.registry import cpu_target

    from . import runtime
    from .target import NUMBA
    runtime.register()
    cpu_target.target_context.refresh()  # (NumPy's implementations in Numba register as it loads them)
    typing = cpu_target.typing_context
    typing.refresh()
    known: IdentityMap[Any, bool] = IdentityMap()

    def implemented(fn: Any) -> bool:
        if fn not in known:
            if rules.fact(fn, "folds") is not None:  # (rewritten when the code is made, for the usual arguments)
                known[fn] = True
                return True
            try:
                typing.resolve_value_type(NUMBA.implementation(fn))
                known[fn] = True
            except Exception:  # (Numba's TypingError, or any refusal to type the object)
                known[fn] = False
        return known[fn]

    rules.load_templates()
    found: dict[Any, tuple[str, ...]] = {}
    for rule in rules.all_adjoint_rules():
        if not _builtin(rule) or rule.fn in found:
            continue
        missing = set() if implemented(rule.fn) else {_name(rule.fn)}
        for stmt in rule.body:
            for node in gast.walk(stmt):
                fn: Optional[Any] = _callee(node.func, rule.namespace) if isinstance(node, gast.Call) else None
                if fn is not None and not isinstance(fn, types.ModuleType) and not implemented(fn):
                    missing.add(_name(fn))
        found[rule.fn] = tuple(sorted(missing))
    return found
