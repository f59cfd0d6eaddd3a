"""The pass manager: the passes over the SSA form after its analysis, and every pass after reverse or
forward generation, by name, in declared pipelines.

The SSA passes (``SSA``: ``SSAPass``, each ``(function, facts) -> (function, facts)``, run by
``factcheck.run_passes``, which with ``S2S_AD_CHECK_FACTS=1`` derives the facts again after each
and compares) check the function against its facts and rewrite it; ``guard_lost_derivatives``
runs only for the function differentiated itself, not a helper whose callers check.

Input: the function a generator made (``reverse.reverse``: the adjoint form, both sweeps in one
function; ``forward.forward``: the tangent form), and a ``PassContext``: the primal's SSA body (its
statements are the primal ones), its facts and the ``Target``.  Output: the function after the
passes of one declared pipeline, in their declared order.

A pass is a ``Pass``: its name, the form it reads and returns, the passes that must run before it,
why it exists, and whether it optimises (``source(stage="adjoint")`` runs the pipeline without
those) or is one a target chooses (``Target.passes`` names the ones it takes: a target never
imports or hosts a pass).  ``REVERSE`` is the one reverse pipeline: the same list serves the
adjoint of the function differentiated and the split parts of a helper's (``SPLIT`` marks where a
helper's adjoint is cut into its forward and backward parts; the passes after it run on each
part).  ``FORWARD`` is forward mode's.

Any pass's output can be looked at: ``run_pipeline(..., until=NAME)`` stops after it, and
``s2s_ad.source(f, stage=NAME)`` prints it.  With ``S2S_AD_CHECK_PASSES=1`` the invariants of the
form a pass returns are checked after it, each violation naming the pass: in every form (the adjoint,
a split adjoint's parts, the tangent form) no two statements share an identity
(``ir.check_identities``, which raises ``ir.IdentityViolation``), every name is read where every path
has bound it and no primal statement is lost (``form_checks``, which raises ``FormViolation``); in
the adjoint form the pushes and pops of the tape pair up (``tape.check_tape``: ``tape.TapeViolation``).
"""
from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any, Callable, Optional, Sequence

from ..core import ir
from ..analysis.checks import check_constant_calls, check_element_reads, check_in_place
from ..analysis.facts import Analysis
from ..analysis.form_checks import check_bound_before_read, check_no_primal_lost
from ..analysis.inference import SCALAR
from ..analysis.lost_derivatives import guard_lost_derivatives_kept
from ..passes.carried_elements import carry_elements
from ..passes.dead_element_stores import drop_dead_element_stores
from ..passes.draw_arguments import draws_by_position
from ..analysis.factcheck import run_passes
from ..passes.fills import fold_fills
from ..passes.hoist import hoist_invariants, hoist_item_reads
from ..passes.repeated_values import merge_repeated_values
from ..passes.appends import grow_lists_in_place
from ..passes.number_math import math_on_numbers
from ..passes.reverse_invariants import hoist_forward_invariants, hoist_reverse_invariants
from ..passes.invariant_factors import sum_before_factors
from ..passes.optimize import optimize
from ..passes.preaccumulate import preaccumulated
from ..passes.release import release_dead_arrays
from ..passes.primal_cells import keep_primal_cells
from ..passes.scalar_cells import keep_cells
from ..passes.shift_invariance import cut_shift_invariant
from ..passes.slice_writes import writes_by_call
from ..ad.tape import TapeViolation, check_tape, drop_unread_records
from ..targets.array_api.rewrites import Rewriting, numpys_meaning_kept
from ..targets.target import Target
from ..passes.view_checks import drop_proven_view_checks
from ..passes.method_copies import copies_of_arrays_by_numpy

ENVIRONMENT_VARIABLE = "S2S_AD_CHECK_PASSES"
ADJOINT, PARTS, TANGENT = ir.ADJOINT, ir.PARTS, ir.TANGENT  # the forms (ir.py)
SPLIT = "split_parts"  # the step of REVERSE where a helper's adjoint is cut in two (not a pass)


@dataclass
class PassContext:
    """What every pass may read besides the function: nothing reaches a pass by another channel."""

    primal: list[ir.Stmt]  # the primal's SSA body: the statements of the generated code that are primal
    facts: Analysis  # the primal's facts
    target: Target

    def __post_init__(self) -> None:
        # The primal's statements by identity: generated code reuses them (the forward sweep runs them
        # as they are), and passes that simplify what was generated leave them as the user wrote them.
        self.primal_sids = frozenset(s.sid for s in ir.walk(self.primal))
        self.arrays = {name for name, rank in self.facts.ndim.items()
                       if rank >= 1 and self.facts.shape.get(name) != SCALAR}
        self.known = set(self.facts.shape) | set(self.facts.ndim) | set(self.facts.kinds)


@dataclass(frozen=True)
class Pass:
    name: str
    forms: tuple[str, ...]  # the forms it reads (and returns)
    why: str  # one line: what it is for
    run: Callable[[ir.Function, PassContext], ir.Function]
    after: tuple[str, ...] = ()  # passes that must run before it, where both are in a pipeline
    optimizes: bool = True  # False: a check, which source(stage="adjoint") runs too
    chosen_by_target: bool = False  # run only where Target.passes names it


def _checked(fn: ir.Function, context: PassContext) -> ir.Function:
    check_tape(fn)
    return fn


def _numpys_meaning_kept(fn: ir.Function, context: PassContext) -> ir.Function:
    if not isinstance(context.target, Rewriting):
        raise TypeError(f"{context.target!r} names the pass rewrite_for_array_api, which rewrites for an array "
                        "API namespace (array_api.rewrites.Rewriting), and is no such target")
    return numpys_meaning_kept(fn, context.target)


PASSES: dict[str, Pass] = {p.name: p for p in [
    Pass("optimize", (ADJOINT, TANGENT), "simplify generated arithmetic, forward copies, drop dead code",
         lambda fn, c: optimize(fn, c.primal)),
    Pass("preaccumulate", (ADJOINT,), "fold a loop's per-trip adjoint products into one accumulation",
         lambda fn, c: preaccumulated(fn), after=("optimize",)),
    Pass("drop_unread_records", (ADJOINT,), "leave out of the tape the values the reverse sweep no longer reads",
         lambda fn, c: drop_unread_records(fn), after=("preaccumulate",)),
    Pass("fold_fills", (ADJOINT,), "a reduction's spread adjoint as a 0-d factor (NumPy's promotion rules)",
         lambda fn, c: fold_fills(fn, c.primal_sids, c.facts.shape, c.facts.ndim),
         after=("drop_unread_records",), chosen_by_target=True),
    Pass("check_tape", (ADJOINT,), "the tape's pushes and pops pair up", _checked, optimizes=False),
    Pass("drop_dead_element_stores", (ADJOINT, PARTS), "a reverse loop's stores of zero no later read sees left out",
         lambda fn, c: drop_dead_element_stores(fn, c.known), chosen_by_target=True),
    Pass("keep_cells", (ADJOINT, PARTS), "a reverse loop's adjoint vector as a list of Python floats",
         lambda fn, c: keep_cells(fn, c.known), after=("drop_dead_element_stores",), chosen_by_target=True),
    Pass("keep_primal_cells", (ADJOINT, PARTS), "a forward loop's float64 vector it fills as a list of Python floats",
         lambda fn, c: keep_primal_cells(fn, c.primal_sids, c.facts.rank_of), after=("keep_cells",),
         chosen_by_target=True),
    Pass("carry_elements", (ADJOINT, PARTS), "the element one trip writes for the next kept in a local",
         lambda fn, c: carry_elements(fn), after=("keep_cells",), chosen_by_target=True),
    Pass("hoist_reverse_invariants", (ADJOINT, PARTS),
         "a reverse loop's recomputed arithmetic that no trip changes run once before it, under the loop's test",
         lambda fn, c: hoist_reverse_invariants(fn, lambda name: c.facts.rank_of(ir.Var(name)) == 0),
         after=("optimize", "carry_elements"), chosen_by_target=True),
    Pass("sum_before_factors", (ADJOINT, PARTS),
         "a reverse loop's sum of products by a factor no trip changes summed first, multiplied once after it",
         lambda fn, c: sum_before_factors(fn, lambda name: c.facts.rank_of(ir.Var(name)) == 0),
         after=("hoist_reverse_invariants",), chosen_by_target=True),
    Pass("hoist_forward_invariants", (ADJOINT, PARTS),
         "a forward loop's arithmetic that no trip changes run once before it, under the loop's test (a division too)",
         lambda fn, c: hoist_forward_invariants(fn, lambda name: c.facts.rank_of(ir.Var(name)) == 0),
         after=("optimize", "keep_primal_cells"), chosen_by_target=True),
    Pass("release_dead_arrays", (ADJOINT, PARTS), "del after an array temporary's last read: its memory reused",
         lambda fn, c: release_dead_arrays(fn, c.arrays, c.known),
         after=("carry_elements", "hoist_reverse_invariants", "sum_before_factors", "hoist_forward_invariants"),
         chosen_by_target=True),
    Pass("grow_lists_in_place", (ADJOINT, PARTS, TANGENT),
         "an append or item write no later read can tell from a new list changes its list (no copy per change)",
         lambda fn, c: grow_lists_in_place(fn), after=("optimize", "release_dead_arrays"), chosen_by_target=True),
    Pass("math_on_numbers", (ADJOINT, PARTS),
         "in a reverse loop, an adjoint times np.sin or np.cos of a number by math's (on_a_number): Python floats",
         lambda fn, c: math_on_numbers(fn, c.primal_sids, c.known, lambda name: c.facts.rank_of(ir.Var(name)) == 0),
         after=("optimize",), chosen_by_target=True),
    Pass("draws_by_position", (ADJOINT, PARTS, TANGENT),
         "a generator's draws without keywords, which a compiled call cannot pass (its defaults filled in)",
         lambda fn, c: draws_by_position(fn), optimizes=False, chosen_by_target=True),
    Pass("slice_writes_by_call", (ADJOINT, PARTS, TANGENT),
         "a write of a slice as write_into/add_into, which Numba compiles without formatting a shape error",
         lambda fn, c: writes_by_call(fn, c.facts.kinds), after=("optimize", "release_dead_arrays", "draws_by_position"),
         chosen_by_target=True),
    Pass("rewrite_for_array_api", (ADJOINT, PARTS, TANGENT),
         "NumPy's meaning kept where another library's differs (writes, keywords, element reads), the rest refused",
         _numpys_meaning_kept, after=("optimize", "release_dead_arrays"), optimizes=False, chosen_by_target=True),
]}

REVERSE: tuple[str, ...] = ("optimize", "preaccumulate", "drop_unread_records", "fold_fills", "check_tape", SPLIT,
                            "drop_dead_element_stores", "keep_cells", "keep_primal_cells", "carry_elements",
                            "hoist_reverse_invariants", "sum_before_factors", "hoist_forward_invariants", "release_dead_arrays",
                            "grow_lists_in_place",
                            "math_on_numbers", "draws_by_position",
                            "slice_writes_by_call", "rewrite_for_array_api")
FORWARD: tuple[str, ...] = ("optimize", "grow_lists_in_place", "draws_by_position", "slice_writes_by_call",
                            "rewrite_for_array_api")
PIPELINES = {"reverse": REVERSE, "forward": FORWARD}


def pass_names(mode: str) -> tuple[str, ...]:
    """The names of the passes of ``mode``'s pipeline ("reverse" or "forward"), in order."""
    return tuple(name for name in PIPELINES[mode] if name != SPLIT)


def switched_on_by_environment() -> bool:
    """True when ``S2S_AD_CHECK_PASSES`` is set to anything but "", "0", "false", "no" or "off"."""
    return os.environ.get(ENVIRONMENT_VARIABLE, "").strip().lower() not in ("", "0", "false", "no", "off")


def _taken(name: str, context: PassContext, optimizing: bool, form: str) -> bool:
    found = PASSES[name]
    return (optimizing or not found.optimizes) and (not found.chosen_by_target or name in context.target.passes(form))


def run_pipeline(fn: ir.Function, names: Sequence[str], context: PassContext, form: str,
                 optimizing: bool = True, until: Optional[str] = None) -> ir.Function:
    """Run the passes ``names`` (a stretch of a declared pipeline without ``SPLIT``) on ``fn``, of the
    form ``form``: those a target chooses only where it names them, the optimising ones only with
    ``optimizing``; stop after ``until`` where it is one of them.  In the checking mode, the
    adjoint form's invariants are checked after each pass."""
    checking = switched_on_by_environment()
    for name in names:
        if _taken(name, context, optimizing, form):
            made = PASSES[name].run(fn, context)
            if checking:
                _check_after(fn, made, name, form, context)
            fn = made
        if name == until:
            break
    return fn


def _check_after(before: ir.Function, fn: ir.Function, name: str, form: str, context: PassContext) -> None:
    """The invariants of ``form`` in ``fn``, what the pass ``name`` made of ``before``: no two statements
    share an identity, every name read where every path has bound it, no primal statement lost, and in
    the adjoint form (both sweeps in one function) the tape's pushes and pops paired."""
    ir.check_identities(fn.body, name)
    if form == ADJOINT:
        try:
            check_tape(fn)
        except TapeViolation as violation:
            raise TapeViolation(f"after the pass {name}: {violation}") from None
    check_bound_before_read(fn, name)
    check_no_primal_lost(before, fn, context.primal_sids, name)


def before_split(mode: str) -> tuple[str, ...]:
    """The passes of ``mode``'s pipeline that run on the whole adjoint (or tangent)."""
    names = PIPELINES[mode]
    return names[:names.index(SPLIT)] if SPLIT in names else names


def after_split(mode: str) -> tuple[str, ...]:
    """The passes of ``mode``'s pipeline that run on a split adjoint's parts (and, with no split, on
    the whole adjoint after those before it)."""
    names = PIPELINES[mode]
    return names[names.index(SPLIT) + 1:] if SPLIT in names else ()


# -- the SSA form, after its analysis ----------------------------------------------------------------


@dataclass
class SSAContext:
    """What the SSA passes read besides the function and its facts."""

    kinds: dict[str, Any]  # each parameter's kind
    derive: Callable[[ir.Function], Analysis]  # the facts of a function, derived from scratch
    check_draws: Callable[[ir.Function], None]  # refuse draws a checkpointed loop would not replay


@dataclass(frozen=True)
class SSAPass:
    name: str
    why: str
    run: Callable[[ir.Function, Analysis, SSAContext], tuple[ir.Function, Analysis]]
    guarded_only: bool = False  # run only for the function differentiated, not a helper


def _derived_where_needed(made: tuple[ir.Function, Optional[Analysis]], derive: Callable[[ir.Function], Analysis]
                          ) -> tuple[ir.Function, Analysis]:
    """A pass's function and facts, the facts derived again where the pass could not hand them on (a
    value taken again after a write was a copy: reads now name the value taken before, whose activity
    the first analysis did not see)."""
    fn, facts = made
    return fn, facts if facts is not None else derive(fn)


def _only_checks(check: Callable[[ir.Function, Analysis, SSAContext], None]
                 ) -> Callable[[ir.Function, Analysis, SSAContext], tuple[ir.Function, Analysis]]:
    """A check (it raises, or changes nothing) as a pass."""
    def run(fn: ir.Function, facts: Analysis, context: SSAContext) -> tuple[ir.Function, Analysis]:
        check(fn, facts, context)
        return fn, facts
    return run


SSA_PASSES: dict[str, SSAPass] = {p.name: p for p in [
    SSAPass("copies_of_arrays_by_numpy", "x.copy() as np.copy(x) where the kinds prove x an array (a list's copy "
            "is a list)", lambda fn, facts, c: copies_of_arrays_by_numpy(fn, facts)),
    SSAPass("check_in_place", "in-place updates the facts cannot prove right are refused or checked",
            lambda fn, facts, c: check_in_place(fn, facts, c.kinds)),
    SSAPass("drop_proven_view_checks", "run-time checks that a view stayed one, left out where the kinds prove it",
            lambda fn, facts, c: drop_proven_view_checks(fn, facts)),
    SSAPass("check_constant_calls", "calls whose result must be a constant are refused where it is not",
            _only_checks(lambda fn, facts, c: check_constant_calls(fn, facts))),
    SSAPass("check_element_reads", "an element read after a write is a view or a copy, as the kinds say",
            lambda fn, facts, c: _derived_where_needed(check_element_reads(fn, facts), c.derive)),
    SSAPass("check_checkpointed_draws", "a checkpointed loop drawing from a generator object, or a fixed_point loop drawing at all, is refused",
            _only_checks(lambda fn, facts, c: c.check_draws(fn))),
    SSAPass("hoist_item_reads", "a tuple's item reads moved to where the tuple is made",
            lambda fn, facts, c: hoist_item_reads(fn, facts)),
    SSAPass("hoist_invariants", "loop-invariant arithmetic on numbers moved out of its loop",
            lambda fn, facts, c: hoist_invariants(fn, facts)),
    SSAPass("merge_repeated_values", "a number one block computes twice (t + 1, theta[t] on two lines) computed once",
            lambda fn, facts, c: merge_repeated_values(fn, facts)),
    SSAPass("cut_shift_invariant", "values the result does not depend on (a softmax's maximum) carry no derivative",
            lambda fn, facts, c: cut_shift_invariant(fn, facts, c.derive)),
    SSAPass("guard_lost_derivatives", "a check before each call whose rule would lose a derivative",
            lambda fn, facts, c: guard_lost_derivatives_kept(fn, facts), guarded_only=True),
]}

SSA: tuple[str, ...] = tuple(SSA_PASSES)


def run_ssa_pipeline(fn: ir.Function, context: SSAContext, guarded: bool = True, until: Optional[str] = None
                     ) -> tuple[ir.Function, Analysis]:
    """The function and its facts after the SSA pipeline (those passes up to ``until``, where given)."""
    names = SSA[:SSA.index(until) + 1] if until in SSA else SSA
    chosen = [(name, _bound(SSA_PASSES[name], context)) for name in names
              if guarded or not SSA_PASSES[name].guarded_only]
    return run_passes(fn, context.derive(fn), chosen, context.derive)


def _bound(found: SSAPass, context: SSAContext) -> Callable[[ir.Function, Analysis], tuple[ir.Function, Analysis]]:
    return lambda fn, facts: found.run(fn, facts, context)


def table() -> str:
    """The declared pipelines as the Markdown table docs/design.md shows (a test compares them)."""
    rows = ["| pass | SSA | reverse | forward | taken where the target names it | what it is for |",
            "| --- | --- | --- | --- | --- | --- |"]
    for i, name in enumerate(SSA):
        only = " (the function differentiated)" if SSA_PASSES[name].guarded_only else ""
        rows.append(f"| `{name}` | {i + 1}{only} |  |  |  | {SSA_PASSES[name].why} |")
    for name in dict.fromkeys(pass_names("reverse") + pass_names("forward")):
        found = PASSES[name]
        where = lambda mode: str(pass_names(mode).index(name) + 1) if name in pass_names(mode) else ""
        split = " (on each split part)" if name in after_split("reverse") else ""
        rows.append(f"| `{name}` |  | {where('reverse')}{split} | {where('forward')} | "
                    f"{'yes' if found.chosen_by_target else ''} | {found.why} |")
    return "\n".join(rows)


def check_declared_order() -> None:
    """Every pass named in a pipeline exists, and each runs after the passes it needs there."""
    for mode, names in PIPELINES.items():
        for i, name in enumerate(names):
            if name == SPLIT:
                continue
            for needed in PASSES[name].after:
                if needed in names and names.index(needed) > i:
                    raise AssertionError(f"{mode} pipeline: {name} runs before {needed}, which it needs")


check_declared_order()
