"""``x.copy()`` as NumPy's ``np.copy(x)`` where the kinds prove ``x`` an array or a number (stage 3,
a pass after the analysis: ``(fn, facts) -> (fn, facts)``).

Input: an SSA function whose lowering read the method call ``x.copy()`` of a value it could not
tell an array from a list (a name a helper or a loop bound) as ``copy_method(x)``, Python's own
call (a list's copy is a list, an array's an array: the analysis gives the result its argument's
kind, ``kind_of_argument``); and the function's facts.  Output: the function with each such call
whose argument the facts prove an array or a number spelled ``np.copy(x)``, the same value and the
same facts, which every target compiles; the others stay Python's call.

(Lowering reads the copy of a list it can see, a display or a container, as that list itself.)
"""
from __future__ import annotations

import dataclasses

from ..core import ir, language
from ..core.kinds import Array, Number
from ..rules import registry as rules
from ..analysis.facts import Analysis


def copies_of_arrays_by_numpy(fn: ir.Function, facts: Analysis) -> tuple[ir.Function, Analysis]:
    """``fn`` with ``copy_method(x)`` spelled ``np.copy(x)`` where ``x`` is proven an array or a number."""
    respelled: dict[int, ir.Stmt] = {}
    for stmt in ir.walk(fn.body):
        if isinstance(stmt, ir.Assign) and isinstance(stmt.value, ir.Call) and _copies_an_array(stmt.value, facts):
            respelled[stmt.sid] = dataclasses.replace(stmt, value=ir.Call(language.copy, stmt.value.args))
    if not respelled:
        return fn, facts
    return dataclasses.replace(fn, body=ir.replace_statements(fn.body, respelled)), facts


def _copies_an_array(value: ir.Call, facts: Analysis) -> bool:
    return bool(rules.fact(value.fn, "kind_of_argument")) and len(value.args) == 1 and not value.kwargs \
        and isinstance(facts.fact(value.args[0]), (Array, Number))
