"""Readable, unique names for the values of the SSA form (part of stage 2, lower).

The user's own names are kept where they are free (``a``, then ``a_1`` for a
reassigned ``a``); a value the user did not name is named after the
operation that made it (``x_plus_1``, ``x_sq``, ``sin_x``).  Names generated
code reads as globals (``np``, builtins, the helpers of the runtime and of
the template modules) are never used for locals.
"""
from __future__ import annotations

import builtins
import keyword
import operator
from typing import Optional

from ..core import ir, runtime
from ..rules import registry as rules

_NAME_LIMIT = 16


class Names:
    """Hands out unique SSA names, keeping the user's names where it can."""

    # Names generated code reads as globals must never be shadowed by a local (with the helpers the
    # template modules define: rules.helper_names).
    RESERVED = ({"np", "math", "operator", "builtins"} | set(keyword.kwlist) | set(dir(builtins))
                | {n for n in dir(runtime) if not n.startswith("_")})

    def __init__(self, reserved: set[str]) -> None:
        self.taken = ir.NameSet(set(self.RESERVED) | rules.helper_names() | set(reserved))

    @staticmethod
    def _clean(base: str) -> str:
        if base.isascii() and base.isidentifier() and base[0] != "_" and base[-1] != "_":
            return base  # the usual case, unchanged by the rules below (and checked faster)
        base = "".join(c if c.isalnum() or c == "_" else "_" for c in base).strip("_") or "v"
        if base[0].isdigit():
            base = "v_" + base
        return base

    def fresh(self, base: str) -> str:
        base = self._clean(base)
        if base not in self.taken:
            self.taken.add(base)
            return base
        stem, _, suffix = base.rpartition("_")
        if stem and suffix.isdigit():
            base = stem
        return ir.fresh_name(base, self.taken)

    def claim(self, name: str) -> str:
        """Use the user's own name if free (the first binding of a local)."""
        clean = self._clean(name)
        if clean == name and name not in self.taken:
            self.taken.add(name)
            return name
        return self.fresh(name)


def _short(expr: ir.Expr, user_names: set[str]) -> Optional[str]:
    if isinstance(expr, ir.Var) and expr.name in user_names:
        return expr.name
    if isinstance(expr, ir.Const) and isinstance(expr.value, (int, float)) and not isinstance(expr.value, bool):
        value = expr.value
        if float(value).is_integer() and 0 <= value < 100:
            return str(int(value))
    return None


def describe(call: ir.Call, user_names: set[str]) -> str:
    """A readable name for the value ``call`` makes: x_plus_1, x_sq, sin_x (``user_names``: the
    SSA names that are the user's own, which may appear in it)."""
    fn, args = call.fn, call.args
    shorts = [_short(a, user_names) for a in args]
    squares = (fn is operator.pow and ir.is_const(args[1], 2)) or (fn is operator.mul and args[0] == args[1])
    if squares and shorts[0]:
        return f"{shorts[0]}_sq"
    words = rules.fact(fn, "words")  # declared in templates/: operator.add reads ("plus", "total")
    if words:
        word, noun = words
        if all(shorts) and len(args) == 2:
            name = f"{shorts[0]}_{word}_{shorts[1]}"
            if len(name) <= _NAME_LIMIT:
                return name
        return noun
    if fn is operator.neg:
        return f"neg_{shorts[0]}" if shorts[0] else "neg"
    if fn is operator.getitem:
        return f"{shorts[0]}_part" if shorts[0] else "part"
    base = getattr(fn, "__name__", "value").lstrip("_") or "value"
    if shorts and shorts[0] and len(base) + len(shorts[0]) < _NAME_LIMIT:
        return f"{base}_{shorts[0]}"
    return base
