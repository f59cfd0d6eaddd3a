"""The run-time checks that a view taken again was a view, dropped where the kinds prove it
(stage 3, a pass after the analysis: ``(fn, facts) -> (fn, facts)``).

Input: an SSA function whose lowering took a view again after a write into its array
(``lower_writes.retake_chain``) by a step that makes a view only sometimes, and put
``runtime.check_view_kept(view, base, ...)`` before it; and the function's facts.  Output: the
function without the checks the facts make needless, and its facts (only counts of reads change):

* ``view = base[i, j]`` (numbers only) where ``base`` has more dimensions than the index has parts:
  a row, always a view;
* ``view = np.reshape(base, ...)`` or ``np.ravel(base)`` where ``base`` is a vector (or a number)
  that a call made afresh (arithmetic, ``np.zeros``...): contiguous, so its reshape is a view.

Every other check stays, and decides where the code runs.
"""
from __future__ import annotations

import dataclasses
import operator
from typing import Optional

from ..core import ir, runtime
from ..rules import registry as rules
from ..memory.aliasing import new_object
from ..analysis.facts import Analysis


def drop_proven_view_checks(fn: ir.Function, facts: Analysis) -> tuple[ir.Function, Analysis]:
    """``fn`` without the ``check_view_kept`` checks its facts prove pass, and its facts."""
    checks = [s for s in ir.walk(fn.body) if isinstance(s, ir.Effect) and isinstance(s.value, ir.Call)
              and s.value.fn is runtime.check_view_kept]
    if not checks:
        return fn, facts
    definitions = {s.target: s.value for s in ir.walk(fn.body) if isinstance(s, ir.Assign) and not s.merge}
    dropped = [s for s in checks if isinstance(s.value, ir.Call) and _proven_view(s.value, definitions, facts)]
    if not dropped:
        return fn, facts
    body = ir.replace_statements(fn.body, dict.fromkeys(s.sid for s in dropped))
    return dataclasses.replace(fn, body=body), facts.with_checks_changed(dropped=dropped)


def _proven_view(check: ir.Call, definitions: dict[str, ir.Expr], facts: Analysis) -> bool:
    view, base = check.args[0], check.args[1]
    if not (isinstance(view, ir.Var) and isinstance(base, ir.Var)):
        return False
    made = definitions.get(view.name)
    if not (isinstance(made, ir.Call) and made.args and made.args[0] == base):
        return False
    rank = facts.rank_of(base)
    if made.fn is operator.getitem:
        parts = ir.index_parts(made.args[1])
        return rank is not None and rank > len(parts)
    return rules.fact(made.fn, "retake") == "contiguous" and rank is not None and rank <= 1 \
        and _made_afresh(definitions.get(base.name))


def _made_afresh(value: Optional[ir.Expr]) -> bool:
    """``value`` is a call that makes a new array (a vector made so is contiguous)."""
    return isinstance(value, ir.Call) and (rules.makes_fresh_array(value.fn) or new_object(value, lambda fn: True))
