"""A target's pass: the keyword arguments of a generator's draws passed by position.

Input: a function of any form (adjoint, split parts, tangent) whose draws from a generator object
are calls of ``runtime.draw(generator, "method", *args, **kwargs)`` (``lowering.calls``: what
``rng.normal(size=n)`` becomes).  Output: the same function, where each such call whose keywords
all name distribution parameters or ``size`` of ``np.random.Generator``'s method passes them by
position instead, the parameters it leaves out filled with the method's defaults
(``draw(rng, "normal", 0.0, 1.0, n)``).  Every other call is left as it was.

Why: Numba compiles no call with keywords of a function it is given an implementation of
(``numba.extending.overload``), and the Numba target compiles draws from a ``Generator``
argument (``targets/numba/draws.py``).  The same call means the same draw in Python, for a
``Generator`` and for a ``RandomState`` alike: the parameters rewritten (those before ``dtype``,
``out``, ``method`` or ``endpoint``) come in the same order in both classes' methods, which
``tests/passes/test_draw_arguments.py`` checks against NumPy's signatures.
"""
from __future__ import annotations

import dataclasses
import inspect
from functools import lru_cache
from typing import Any, Optional

import numpy as np

from ..core import ir, runtime

# Parameters after which a method's signature differs between Generator and RandomState (or that
# change the kind of a draw, not its numbers): a call naming one is left with its keywords.
_NOT_BY_POSITION = frozenset({"dtype", "out", "method", "endpoint"})


@lru_cache(maxsize=None)
def parameters(method: str) -> Optional[tuple[tuple[str, Any], ...]]:
    """The leading parameters of ``np.random.Generator.<method>`` (name, default or ``inspect``'s
    ``empty``) up to the first that is not passed by position here; None where the method has no
    signature Python can read."""
    found = getattr(np.random.Generator, method, None)
    try:
        signature = inspect.signature(found)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return None
    leading: list[tuple[str, Any]] = []
    for name, parameter in list(signature.parameters.items())[1:]:  # (after self)
        if name in _NOT_BY_POSITION or parameter.kind is not inspect.Parameter.POSITIONAL_OR_KEYWORD:
            break
        leading.append((name, parameter.default))
    return tuple(leading)


def by_position(call: ir.Call) -> Optional[ir.Call]:
    """``call`` (a ``runtime.draw``) with its keywords passed by position, or None where it has none
    or one of them cannot be (a keyword the method's leading parameters do not name, a required
    parameter left out)."""
    if call.fn is not runtime.draw or not call.kwargs or len(call.args) < 2 or \
            not isinstance(call.args[1], ir.Const) or not isinstance(call.args[1].value, str):
        return None
    leading = parameters(call.args[1].value)
    if leading is None:
        return None
    given = call.args[2:]
    keywords = dict(call.kwargs)
    names = [name for name, _ in leading]
    if len(given) > len(names) or any(k not in names[len(given):] for k in keywords):
        return None
    last = max(names.index(k) for k in keywords)
    filled = list(given)
    for name, default in leading[len(given):last + 1]:
        if name in keywords:
            filled.append(keywords[name])
        elif default is inspect.Parameter.empty:
            return None
        else:
            filled.append(ir.Const(default))
    return ir.Call(call.fn, call.args[:2] + tuple(filled))


def draws_by_position(fn: ir.Function) -> ir.Function:
    """``fn`` with the keywords of its draws passed by position (the module docstring).  Only the
    statements making such a draw are rebuilt, each once, whatever the places it holds (a checkpointed
    loop's body runs again in the reverse sweep: the same statement in two places keeps one identity);
    a function without one is returned as it is."""
    replaced: dict[int, ir.Stmt] = {}
    for stmt in ir.walk(fn.body):
        if stmt.sid not in replaced and isinstance(stmt, _REBUILT) and \
                any(by_position(call) is not None for expr in ir.exprs_of(stmt) for call in ir.calls_in(expr)):
            replaced[stmt.sid] = _with_draws_by_position(stmt)
    return dataclasses.replace(fn, body=ir.replace_statements(fn.body, replaced)) if replaced else fn


# the statements whose expressions a draw can be in (lowering binds a call's result before an ``if`` or a loop
# reads it: their tests and iterables are names)
_REBUILT = (ir.Assign, ir.Unpack, ir.Effect, ir.Return, ir.Store, ir.Push)


def _with_draws_by_position(stmt: ir.Stmt) -> ir.Stmt:
    def visit(expr: ir.Expr) -> Optional[ir.Expr]:
        return by_position(expr) if isinstance(expr, ir.Call) else None
    return ir.transformed([stmt], visit)[0]
