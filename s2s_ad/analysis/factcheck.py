"""The passes that rewrite a function after its analysis, and the mode that checks they keep its facts.

Input: an SSA ``ir.Function``, its ``analysis.Analysis``, and the passes to
run after the analysis (each ``(function, facts) -> (function, facts)``:
it returns the facts of the function it returns, kept true by construction).
Output: the function and the facts the generators read.

With ``S2S_AD_CHECK_FACTS=1`` in the environment (the test suite sets it),
the facts are derived again from scratch after each pass and compared with
the ones the pass handed on; a difference raises ``FactViolation`` naming
the pass, the fact and the names where they differ (and two statements that
share an identity, ``sid``, raise ``ir.IdentityViolation``).  A wrong fact is a
silent wrong derivative (an active value taken as a constant gives a zero
gradient), so a pass that forgets one must fail loudly in the tests.  The
check is a slow mode: it analyses the function once more per pass.

The facts compared are every field of ``Analysis``: activity, the values
that vary, how many times each value is read, the kinds, ranks and tuple
items, the arrays of floats, and the shape classes.  A shape class is a
number of no meaning of its own (two values with the same number have the
same shape), so the classes are compared as the partition they make.
"""
from __future__ import annotations

import os
from collections import Counter
from typing import Any, Callable, Iterable

from ..core import ir
from .facts import Analysis

ENVIRONMENT_VARIABLE = "S2S_AD_CHECK_FACTS"

# A pass after the analysis: (its name, the pass).  It returns the function it made and that function's facts.
Pass = tuple[str, Callable[[ir.Function, Analysis], tuple[ir.Function, Analysis]]]
# How the facts are derived from scratch (the analysis, with the parameters and kinds the first one had).
Derive = Callable[[ir.Function], Analysis]


class FactViolation(AssertionError):
    """A pass after the analysis handed on a fact the function it made does not have (a bug in
    s2s_ad, never the user's)."""

    def __init__(self, function: str, pass_name: str, fact: str, where: dict[str, tuple[Any, Any]]) -> None:
        self.function, self.pass_name, self.fact, self.where = function, pass_name, fact, where
        shown = "; ".join(f"{name}: carried {_shown(carried)}, derived {_shown(derived)}"
                          for name, (carried, derived) in sorted(where.items())[:6])
        more = f" (and {len(where) - 6} more)" if len(where) > 6 else ""
        super().__init__(f"internal error in s2s_ad: after the pass {pass_name} on {function}, the fact "
                         f"{fact!r} it carries differs from the one derived again: {shown}{more}")


def _shown(value: Any) -> str:
    return "nothing" if value is None else "yes" if value is True else repr(value)


def switched_on_by_environment() -> bool:
    """True when ``S2S_AD_CHECK_FACTS`` is set to anything but "", "0", "false", "no" or "off"."""
    return os.environ.get(ENVIRONMENT_VARIABLE, "").strip().lower() not in ("", "0", "false", "no", "off")


def run_passes(fn: ir.Function, facts: Analysis, passes: Iterable[Pass], derive: Derive
               ) -> tuple[ir.Function, Analysis]:
    """Run ``passes`` in turn, each on what the one before handed on; in the checking mode, compare
    the facts each hands on with those derived again from the function it made."""
    checking = switched_on_by_environment()
    for name, run in passes:
        fn, facts = run(fn, facts)
        if checking:
            ir.check_identities(fn.body, name)
            check_facts(fn, facts, derive(fn), name)
    return fn, facts


def check_facts(fn: ir.Function, carried: Analysis, derived: Analysis, pass_name: str) -> None:
    """Raise ``FactViolation`` at the first fact where ``carried`` and ``derived`` differ."""
    for fact, (mine, theirs) in _comparable(carried, derived).items():
        where = _differences(mine, theirs)
        if where:
            raise FactViolation(fn.name, pass_name, fact, where)


def _comparable(carried: Analysis, derived: Analysis) -> dict[str, tuple[dict, dict]]:
    """Each fact of both, as a dict by name of values that compare equal when the facts agree."""
    as_flags = lambda names: dict.fromkeys(names, True)
    return {
        "active": (as_flags(carried.active), as_flags(derived.active)),
        "varied": (as_flags(carried.varied), as_flags(derived.varied)),
        "uses": (dict(+Counter(carried.uses)), dict(+Counter(derived.uses))),
        "kinds": (carried.kinds, derived.kinds),
        "ndim": (carried.ndim, derived.ndim),
        "items": (carried.items, derived.items),
        "inexact": (as_flags(carried.inexact), as_flags(derived.inexact)),
        "shape": (_partition(carried.shape), _partition(derived.shape)),
    }


def _partition(shape: dict[str, Any]) -> dict[str, Any]:
    """Each name's shape class, with a class that is only a number replaced by the names sharing it."""
    members: dict[Any, list[str]] = {}
    for name, shape_class in shape.items():
        if isinstance(shape_class, int) and not isinstance(shape_class, bool):
            members.setdefault(shape_class, []).append(name)
    return {name: ("same shape as", tuple(sorted(members[c]))) if c in members else c for name, c in shape.items()}


def _differences(mine: dict, theirs: dict) -> dict[str, tuple[Any, Any]]:
    """The names where the two differ: (carried, derived), None where one lacks the name."""
    return {name: (mine.get(name), theirs.get(name)) for name in mine.keys() | theirs.keys()
            if mine.get(name) != theirs.get(name)}
