"""The whole pipeline, one stage after another.

parse → lower (SSA) → analyse → reverse or forward → optimize → emit → compile.
Input: a Python function, the parameters to differentiate, what is known
of each argument's kind, and the ``Target`` to generate code for (the NumPy
one by default; part of every cache key: a helper's generated callee is
built for the target of the code calling it).  Output: a ``Built`` record with the generated
source and, for the last stage, the compiled adjoint (reverse mode) or
tangent function (forward mode).  Derivatives of derivatives, each level a plain
function the next level differentiates, are built on these by higher_order.py.
"""
from __future__ import annotations

import random
import sys
import threading
import weakref
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, Callable, Iterator, Optional

from ..core import containers, ir, language, runtime
from ..rules import registry as rules
from ..analysis.activity import private_draw
from ..analysis.facts import Analysis, analyse
from ..analysis.inference import SCALAR
from ..analysis.lost_derivatives import lost_derivative_parameters
from .blame import blamed
from .collector import collector_paused
from .complex_values import _refuse_complex_constants
from ..core.draws import is_draw
from .cache import SplitAdjoint, TangentCallee, TransformCache, compile_emitted, compile_module, origin_of
from ..core.errors import TransformError, cell_label
from ..core.identity import Identity
from ..targets.emit import Emitted, emit, emit_module
from ..lowering.expressions import is_user_function
from ..analysis.factdump import report
from ..ad.forward import forward
from ..core.kinds import NUMBER, UNKNOWN, Array, Constant, Kind, Number, Opaque, argument_text, callee_kind
from ..core.kinds import Sequence as SequenceKind
from ..lowering.lower import lower
from ..core.nesting import bounded
from .pass_manager import (ADJOINT, FORWARD, PARTS, SSA, TANGENT, PassContext, SSAContext, after_split, before_split,
    pass_names, run_pipeline, run_ssa_pipeline, switched_on_by_environment)
from ..frontend.parse import ParsedFunction, parse_function, transparent
from ..frontend.snapshot import Snapshot
from ..ad.reverse import reverse
from ..ad.vector import vector_tangents
from ..passes.slice_writes import writes_as_stores
from ..frontend.shared_updates import Store, places_in, updates_as_stores
from ..ad.tape import split_parts
from ..targets.target import NUMPY, Target

# the stages source(stage=) shows: the SSA form, the facts, the adjoint or tangent as generated (its
# checks run), the optimized code, or the code after any pass of the declared pipelines (passes.py)
STAGES = ("ssa", "facts", "adjoint", "optimized") + SSA + tuple(dict.fromkeys(pass_names("reverse") +
                                                                             pass_names("forward")))
# Per parameter a kinds.Kind (UNKNOWN where nothing is known); for a container argument, its
# containers.Tree with the kind of each leaf in the leaf's place (arguments.kinds_of).
Kinds = tuple[Any, ...]


@dataclass
class Built:
    source: str
    function: Optional[Callable]
    snapshot: Optional[Snapshot] = None  # what the free names meant (see snapshot.Snapshot)
    result_tree: Any = None  # a container result's structure (the code returns its leaves as a tuple)
    aux_tree: Any = None  # has_aux: the auxiliary result's structure (the code returns its leaves)


def _snapshot(parsed: ParsedFunction, emitted: Emitted) -> Snapshot:
    """The names ``parsed`` read, and those of every helper the generated code calls.

    The code calls a helper through its generated callee (``d_helper.forward``,
    ``t_helper.jvp``), which the code's globals hold: no need to search the code.
    """
    snapshot = Snapshot()
    snapshot.include(parsed.resolver.snapshot)
    for value in emitted.namespace.globals.values():
        if isinstance(value, (SplitAdjoint, TangentCallee)):
            snapshot.include(value.snapshot)
    return snapshot


def _shown(parsed: ParsedFunction, origin: str) -> str:
    """Where a header says the code came from: ``origin`` (``file.py:3``), or a Jupyter cell's label
    (``Cell In[3], line 2``: a kernel compiles a cell under a temporary file name nobody knows)."""
    label = cell_label(parsed.filename)
    return origin if label is None else f"{label}, line {parsed.line}"


def _describe_kind(kind: Any) -> str:
    if isinstance(kind, containers.Tree):
        return containers.describe(containers.relabel(kind, iter(map(_describe_kind, containers.labels(kind)))))
    return argument_text(kind)


def _kind_note(params: list[str], kinds: Kinds) -> str:
    if all(k == UNKNOWN for k in kinds):
        return "Argument kinds unknown: broadcasting is undone at run time where shapes may differ."
    described = ", ".join(f"{p} {_describe_kind(k)}" for p, k in zip(params, kinds))
    lengths = any(isinstance(k, Array) and k.dims is not None for k in kinds)
    return f"Specialised for: {described}." + (
        "\n# (Axes named alike have equal lengths, whatever they are.)" if lengths else "")


def lowered(fn: Callable, kinds: Optional[Kinds] = None, has_aux: bool = False, inline_helpers: bool = False,
            inline_small_helpers: bool = False, inline_view_helpers: bool = False) -> tuple[ParsedFunction, ir.Function]:
    """Stages 1 and 2: parse, lower to SSA (container arguments, as ``kinds`` describes them, become
    one parameter per leaf), and check the SSA invariants.  ``inline_helpers``, ``inline_small_helpers``:
    see ``lower.lower``."""
    parsed = parse_function(fn)
    structures: dict[str, Any] = {p: k for p, k in zip(parsed.params, kinds or ()) if isinstance(k, containers.Tree)}
    for p, k in zip(parsed.params, kinds or ()):
        if isinstance(k, Constant):  # a string argument: the code is specialised on its value
            structures[p] = containers.Static(k.value)
        if isinstance(k, Opaque):  # an object whose attributes cannot be read: a read of one says why
            structures[p] = k
    try:
        ssa = lower(parsed, structures, has_aux, inline_helpers, inline_small_helpers, inline_view_helpers)
        stores: frozenset[Store] = frozenset()
        found = _updates_of_shared_arrays(ssa, kinds)
        original = parsed
        while found - stores:  # b += v where b is an array d["a"] also holds: as NumPy, a write into that array
            # (each found may show the next: b += v; b *= w, whose first update, once a store, leaves
            # b the array d["a"] holds for the second too; one in a helper lowered in place is rewritten
            # where the helper's body is lowered: ``stores`` names each by its file and the calls inlined
            # around it, so that a helper inlined at two calls is rewritten at the one the kinds proved)
            stores |= found
            parsed = updates_as_stores(original, places_in(stores, original.filename))
            ssa = lower(parsed, structures, has_aux, inline_helpers, inline_small_helpers, inline_view_helpers,
                        stores)
            found = _updates_of_shared_arrays(ssa, kinds)
        if ssa.refused_reads:
            raise ssa.refused_reads[0]
        _refuse_writes_into_copies_of_lists(ssa, kinds)
    except TransformError as refusal:
        raise blamed(parsed, refusal) from None
    ir.check_ssa(ssa)
    _refuse_complex_constants(parsed, ssa)
    return parsed, ssa


def _updates_of_shared_arrays(ssa: ir.Function, kinds: Optional[Kinds]) -> frozenset[Store]:
    """Where (line, column) ``name op= value`` updates an array the function made that another name
    also holds (a container, a view, a loop's earlier value), as the argument kinds prove: lowered as
    the store ``name[...] = name op value``, NumPy's meaning (lowering took it for a number's new
    binding, as it cannot tell before the kinds)."""
    candidates = [u for u in ssa.in_place if u.owned and u.base is None]
    if kinds is None or not candidates:
        return frozenset()
    try:
        facts = analyse(ssa, [], dict(zip(ssa.params, leaf_kinds(kinds))), result_kind)
    except TransformError:
        return frozenset()  # (the function's own analysis refuses it again, naming why)
    return frozenset((u.filename, u.line, u.column, u.site) for u in candidates
                     if (facts.rank_of(ir.Var(u.value)) or 0) > 0 and not isinstance(facts.fact(ir.Var(u.value)), SequenceKind)
                     and u.line is not None and u.column is not None and u.filename is not None)


def _refuse_writes_into_copies_of_lists(ssa: ir.Function, kinds: Optional[Kinds]) -> None:
    """Raise the refusal of a write through an item of ``x.copy()`` (``ir.Function.writes_into_copies``)
    unless the argument kinds prove ``x`` an array or a number, whose copy is new memory throughout: a
    list's copy holds the list's own arrays, so the write would change them under both names."""
    if not ssa.writes_into_copies:
        return
    if kinds is None:
        raise ssa.writes_into_copies[0][1]
    try:
        facts = analyse(ssa, [], dict(zip(ssa.params, leaf_kinds(kinds))), result_kind)
    except TransformError:
        return  # (the function's own analysis refuses it again, naming why)
    for argument, refusal in ssa.writes_into_copies:
        if not isinstance(facts.fact(argument), (Array, Number)):
            raise refusal


def leaf_kinds(kinds: Kinds) -> tuple:
    """The kind of each parameter of the lowered function: a container's leaves in its place."""
    return tuple(k for kind in kinds for k in (containers.labels(kind) if isinstance(kind, containers.Tree)
                                               else (kind,)))


def ssa_params_of(parsed: ParsedFunction, ssa: ir.Function, name: str) -> list[str]:
    """The lowered function's parameters holding the user's parameter ``name``."""
    if name in ssa.groups:
        return ssa.groups[name]
    position = parsed.params.index(name)
    before = sum(len(ssa.groups.get(p, (p,))) for p in parsed.params[:position])
    return [ssa.params[before]]


# fn -> {(code, kinds): (kind, snapshot)}, weakly keyed on fn (see cache.TransformCache).
_RESULT_KINDS: "weakref.WeakKeyDictionary[Callable, dict]" = weakref.WeakKeyDictionary()


def result_kind(fn: Callable, kinds: Kinds) -> Kind:
    """What ``fn`` returns for arguments of these kinds, as a callee's result is told
    (``kinds.callee_kind``, with dims: the lengths the caller's dims name); UNKNOWN where not
    known.  Lowers and analyses ``fn`` (cached, and checked against its snapshot, so a redefined
    helper is analysed again); a function asked about while it is being analysed (recursion) is
    unknown."""
    key = (fn.__code__, kinds)
    known = _RESULT_KINDS.get(fn)
    if known is None:
        known = _RESULT_KINDS[fn] = {}
    cached = known.get(key)
    if cached is not None and (cached[1] is None or cached[1].valid()):
        return cached[0]
    known[key] = (UNKNOWN, None)
    try:  # a helper's helpers are analysed nested in its analysis: no deeper than the stack allows
        return bounded(("result kind", fn, key), lambda: _analysed_result_kind(fn, kinds, known, key),
                       lambda: result_kind(fn, kinds))
    except BaseException:
        if known.get(key) == (UNKNOWN, None) and not isinstance(sys.exc_info()[1], TransformError):
            del known[key]  # given up to be made again on a shorter stack (nesting.py), or failed
        raise


def _analysed_result_kind(fn: Callable, kinds: Kinds, known: dict, key: tuple) -> Kind:
    """``result_kind``'s work: lower and analyse ``fn``, and remember the kind of its result in ``known``."""
    try:
        parsed, ssa = lowered(fn, kinds)
    except TransformError:  # refused: the caller's own transformation reports it where it matters
        return UNKNOWN
    facts = analyse(ssa, [], dict(zip(ssa.params, kinds)), result_kind)
    final = ssa.body[-1]
    assert isinstance(final, ir.Return), "a lowered function ends with its return"
    returned = final.value
    kind = callee_kind(facts.fact(returned), dims=True)  # with the lengths the caller's dims name
    if kind == UNKNOWN and facts.shape_of(returned) == SCALAR:
        kind = NUMBER
    known[key] = (kind, parsed.resolver.snapshot)
    return kind


def _draws_privately(ssa: ir.Function, seen: set, snapshot: Optional[Snapshot] = None) -> Optional[str]:
    """The first draw from a generator object (``rng.normal()``) ``ssa`` makes, itself or through
    the functions it calls, named as the user would; None if it makes none.  The helpers are read
    one after another, not nested (a chain of helpers may be long); what their free names meant
    goes into ``snapshot``."""
    pending = [ssa]
    while pending:
        for stmt in ir.walk(pending.pop(0).body):
            for expr in ir.exprs_of(stmt):
                for call in _calls_in(expr):
                    if call.fn is runtime.draw:
                        return f".{call.args[1].value}()"  # rng.normal(): a generator the code reads as a value
                    if private_draw(call.fn):
                        return f"{call.fn.__self__.__class__.__name__}.{call.fn.__name__}"
                    if is_user_function(call.fn) and call.fn not in seen:
                        seen.add(call.fn)
                        try:
                            parsed, inner = lowered(call.fn)
                        except TransformError:
                            continue
                        if snapshot is not None:
                            snapshot.include(parsed.resolver.snapshot)
                        pending.append(inner)
    return None


@dataclass
class _DrawFound:
    """What ``private_draw_in`` found for a function, whether it may draw from a global generator
    (``may_draw_globally``), and what the names it read meant then."""
    found: Optional[str]
    snapshot: Optional[Snapshot]
    may_draw: bool = True


_DRAWS = TransformCache()


def private_draw_in(fn: Callable) -> Optional[str]:
    """The first draw from a generator object ``fn`` makes, itself or through its helpers (see
    ``_draws_privately``); None if it makes none or cannot be read.  Cached, until a name it read
    means something else (a forward-mode Jacobian asks on every call)."""
    return _DRAWS.get(fn, ("draws", getattr(fn, "__code__", None)), lambda: _find_private_draw(fn)).found


def may_draw_globally(fn: Callable) -> bool:
    """False only where ``fn`` and every helper it calls call nothing but functions with a rule (or
    declared constant) outside ``np.random`` and ``random``: then a pass of its code leaves the
    global random states as they were, and a derivative taken in several passes need not put them
    back before each (``api._Draws``).  True where unsure: a function without a rule may draw."""
    return _DRAWS.get(fn, ("draws", getattr(fn, "__code__", None)), lambda: _find_private_draw(fn)).may_draw


def _find_private_draw(fn: Callable) -> _DrawFound:
    try:
        parsed, ssa = lowered(fn)
    except TransformError:
        return _DrawFound(None, None)
    snapshot = Snapshot()
    snapshot.include(parsed.resolver.snapshot)
    seen = {fn}
    found = _draws_privately(ssa, seen, snapshot)
    return _DrawFound(found, snapshot, found is not None or _any_may_draw(ssa, seen - {fn}))


def _any_may_draw(ssa: ir.Function, helpers: set) -> bool:
    """Whether ``ssa``, or one of the user functions ``helpers`` it calls (all of them, directly or
    not), calls a function that may draw from a global generator (``_may_draw``)."""
    bodies = [ssa]
    for helper in helpers:
        try:
            bodies.append(lowered(helper)[1])
        except TransformError:
            return True
    return any(_may_draw(call.fn) for body in bodies for stmt in ir.walk(body.body)
               for expr in ir.exprs_of(stmt) for call in _calls_in(expr))


def _may_draw(fn: Any) -> bool:
    """Whether a call of ``fn`` (not a user function: those are read) may draw from a global generator."""
    if is_user_function(fn):
        return False  # read on its own (_draws_privately collects it)
    if fn is runtime.draw or is_draw(fn):  # rng.normal() of a generator the code reads as a value
        return True
    owner = getattr(fn, "__self__", None)
    if language.is_generator_object(owner) or isinstance(owner, random.Random):
        return True
    module = getattr(fn, "__module__", None) or ""
    if module.startswith(language.DRAWING_MODULES) or not rules.is_known(fn):
        return True
    return False


def _calls_in(expr: ir.Expr) -> list:
    calls, stack = [], [expr]
    while stack:
        e = stack.pop()
        if isinstance(e, ir.Call):
            calls.append(e)
        stack.extend(ir.children(e))
    return calls


def _check_checkpointed_draws(ssa: ir.Function) -> None:
    """Refuse a checkpointed loop that draws from a generator object, itself or in a function it
    calls: the reverse sweep runs its segments again, which replays the global random states
    (``runtime.random_states``) but would draw new numbers from the object."""
    for stmt in ir.walk(ssa.body):
        if isinstance(stmt, (ir.For, ir.While)) and stmt.checkpoint is not None:
            found = _draws_privately(ir.Function(ssa.name, [], stmt.body), set())
            if found:
                raise TransformError(f"a draw from a generator object ({found}) in a checkpointed loop",
                                     "a segment run again would draw other numbers; draw with np.random.* "
                                     "(replayed), or draw before the loop and pass the draws in",
                                     filename=ssa.filename, line=stmt.line)
        if isinstance(stmt, ir.While) and stmt.fixed_point:
            body = ir.Function(ssa.name, [], stmt.body)
            seen: set = set()
            if _draws_privately(body, seen) is not None or _any_may_draw(body, seen):
                raise TransformError("a random draw (or a call that may draw) in a fixed_point loop",
                                     "the adjoint runs the body again from the converged state, which would "
                                     "draw other numbers; draw before the loop and pass the draws in, or drop "
                                     "fixed_point", filename=ssa.filename, line=stmt.line)


def _analysed(ssa: ir.Function, wrt: list[str], kinds: Kinds, guarded: bool = True, until: Optional[str] = None
              ) -> tuple[ir.Function, Analysis]:
    """Stage 3 for a function to differentiate: its facts, then the SSA passes that check the function
    against them and rewrite it (``passes.SSA``, in their declared order; up to ``until`` where
    given); with ``guarded`` (the differentiated function itself, not a helper whose callers check:
    ``propagate_call``), a check goes before each call whose rule would lose a derivative."""
    kinds_by_param = dict(zip(ssa.params, kinds))
    derive = lambda fn: analyse(fn, wrt, kinds_by_param, result_kind)
    return run_ssa_pipeline(ssa, SSAContext(kinds_by_param, derive, _check_checkpointed_draws), guarded, until)


def _ssa_source(parsed: ParsedFunction, ssa: ir.Function) -> Built:
    origin = origin_of(parsed.filename, parsed.line)
    return Built(emit(ssa, [f"SSA form of {parsed.name}, from {origin}"]).source, None)


def _lowered_for(target: Target, fn: Callable, kinds: Kinds, has_aux: bool) -> tuple[ParsedFunction, ir.Function]:
    """``lowered``, with the user's helpers lowered in place where ``target`` asks for it, else the short
    ones (``lower_ssa.small_helper``); where a helper cannot be (a call that leaves arguments to their
    defaults, a helper that writes into one), its call stays a call, as for any target."""
    try:
        if target.capabilities.inlines_helpers:
            return lowered(fn, kinds, has_aux, inline_helpers=True)
        return lowered(fn, kinds, has_aux, inline_small_helpers=True)
    except TransformError:
        pass  # the plain lowering refuses it again, or keeps the call
    return lowered(fn, kinds, has_aux)


def _build(fn: Callable, wrt: tuple[str, ...], kinds: Kinds, stage: str, compile_it: bool, mode: str,
           has_aux: bool = False, target: Target = NUMPY, with_value: bool = True) -> Built:
    """Parse, lower, analyse, generate (reverse or forward), optimize, emit and compile."""
    with collector_paused():
        return _build_paused(fn, wrt, kinds, stage, compile_it, mode, has_aux, target, with_value)


def _build_paused(fn: Callable, wrt: tuple[str, ...], kinds: Kinds, stage: str, compile_it: bool, mode: str,
                  has_aux: bool, target: Target, with_value: bool) -> Built:
    """``_build``'s work, done while the cycle collector is paused."""
    parsed, ssa = _lowered_for(target, fn, kinds, has_aux)
    if stage == "ssa":
        return _ssa_source(parsed, ssa)
    ssa_wrt = [p for w in wrt for p in ssa_params_of(parsed, ssa, w)]
    if stage in SSA:  # the SSA form after that pass
        return _ssa_source(parsed, _analysed(ssa, ssa_wrt, leaf_kinds(kinds), until=stage)[0])
    ssa, facts = _analysed(ssa, ssa_wrt, leaf_kinds(kinds))
    if mode == "reverse":
        generated = reverse(ssa, ssa_wrt, facts, callee=_split_callees(target),
                            slices_in_place=target.capabilities.slices_in_place, with_value=with_value)
    else:
        generated = forward(ssa, ssa_wrt, facts, callee=_tangent_callees(target))
    if stage == "facts":
        origin = origin_of(parsed.filename, parsed.line)
        text = emit(ssa, [f"Facts about {parsed.name} ({origin}), {mode} mode", _kind_note(parsed.params, kinds)])
        return Built(report(text.source, ssa, facts, ssa_wrt, generated if mode == "reverse" else None), None)
    generated = _passed(generated, mode, stage, PassContext(ssa.body, facts, target))
    origin = origin_of(parsed.filename, parsed.line)
    name, by = parsed.name, ", ".join(wrt)
    if mode == "reverse":
        what, defaults = f"gradient with respect to {by}", {generated.params[-1]: "1.0"}
        docstring = _reverse_docstring(name, by, with_value, has_aux)
    else:
        what, defaults = f"forward mode, tangents of {by}", None
        docstring = f"Return ({name}(...), its directional derivative along the tangents of ({by}))."
    header = [f"Generated by s2s_ad from {name} ({_shown(parsed, origin)}): {what}.", _kind_note(parsed.params, kinds)]
    emitted = emit(generated, header, defaults=defaults, docstring=docstring, target=target,
                   kinds=_called_with(ssa.params, kinds, generated.params[-1] if mode == "reverse" else None))
    function = compile_emitted(emitted, origin) if compile_it else None
    if function is not None and mode == "forward" and target.capabilities.vector_tangents:
        _with_vector_tangents(function, generated, ssa, ssa_wrt, kinds, header, target, origin)
    return Built(emitted.source, function, _snapshot(parsed, emitted), ssa.result_tree, ssa.aux_tree)


def _with_vector_tangents(function: Callable, tangent: ir.Function, ssa: ir.Function, ssa_wrt: list[str],
                          kinds: Kinds, header: list[str], target: Target, origin: str) -> None:
    """Give ``function`` (the tangent code just compiled) its vector version as ``function.vector``
    (``ad/vector``; ``None`` and why where it has none), for the target's ``directions``."""
    called = _called_with(ssa.params, kinds, None)
    tangent_params = tangent.params[len(ssa.params):]
    called.update({t: called[p] for t, p in zip(tangent_params, ssa_wrt) if p in called})
    try:
        vector, why, result_rank = vector_tangents(writes_as_stores(tangent), tangent_params, called,
                                                   target.capabilities.loops_over_directions)
    except Exception as error:  # (a fault of vector mode's: the one-direction code stands; checking, it is raised)
        if switched_on_by_environment():
            raise
        vector, why, result_rank = None, f"vector mode failed on it ({type(error).__name__}: {error})", None
    if vector is None:
        setattr(function, "vector", None)
        setattr(function, "not_vector", why)
        return
    emitted = emit(vector, header[:1] + ["Vector mode: every tangent carries the directions on a leading axis."],
                   docstring="Return (value, the tangents along each direction of the tangents' leading axis).",
                   target=target)
    compiled = compile_emitted(emitted, origin)
    setattr(compiled, "result_rank", result_rank)  # (what a caller's vector code knows its result by)
    setattr(compiled, "pushes_directions", True)  # (reach.py: its helpers' vector versions are what it runs)
    setattr(function, "vector", compiled)
    setattr(function, "not_vector", "")


def _passed(generated: ir.Function, mode: str, stage: str, context: PassContext) -> ir.Function:
    """The generated function after ``mode``'s declared pipeline (passes.py): all of it for the
    stage "optimized", its checks alone for "adjoint", up to and including the pass ``stage`` names."""
    names = pass_names(mode)
    until = stage if stage in names else None
    if stage not in ("adjoint", "optimized") and until is None:
        raise ValueError(f"stage {stage!r} is no pass of {mode} mode's pipeline ({', '.join(names)})")
    return run_pipeline(generated, names, context, ADJOINT if mode == "reverse" else TANGENT,
                        optimizing=stage != "adjoint", until=until)


def _reverse_docstring(name: str, by: str, with_value: bool, has_aux: bool) -> str:
    """The docstring of the generated adjoint: what it returns."""
    gradient = f"d {name} / d ({by})"
    if with_value:
        return f"Return ({name}(...), {gradient})." if not has_aux else \
            f"Return (({name}(...), its aux as leaves), {gradient})."
    return f"Return {gradient}." if not has_aux else f"Return (the aux of {name}(...) as leaves, {gradient})."


def _called_with(params: list[str], kinds: Kinds, seed: Optional[str]) -> dict[str, Kind]:
    """The kinds every call of the generated code passes: each parameter's (a container's leaves
    one by one), and a number for the reverse code's seed, which the API always leaves at its
    default, 1.0 (``Target.finish`` may rely on them: the code is cached per kinds)."""
    called = dict(zip(params, leaf_kinds(kinds)))
    if seed is not None and seed not in called:
        called[seed] = NUMBER
    return called


def build_reverse(fn: Callable, wrt: tuple[str, ...], kinds: Kinds, stage: str = "optimized",
                  compile_it: bool = True, has_aux: bool = False, target: Target = NUMPY,
                  with_value: bool = True) -> Built:
    """Run the reverse-mode pipeline up to ``stage`` ("ssa", "adjoint" or "optimized").  The code returns
    ``(value, gradient)``; with ``has_aux`` (``fn`` returns ``(value, aux)``), ``((value, aux leaves),
    gradient)``.  Without ``with_value`` (``grad``: the caller wants no value) it returns the gradient
    alone, or ``(aux leaves, gradient)``, and what only the value needed is not computed."""
    return _build(fn, wrt, kinds, stage, compile_it, "reverse", has_aux, target, with_value)


_SPLITS = TransformCache()


def build_split(fn: Callable, kinds: Kinds, target: Target = NUMPY, api: bool = False) -> SplitAdjoint:
    """The split adjoint of a user function called from generated code (cached), for ``target``; with
    ``api``, of the function ``vjp`` differentiates, its parts run by the API alone, which ``target``
    may emit apart with a tape of its own (``Target.handed_split``: Numba compiles both parts).

    A function being built is returned unfinished to calls made while
    building it: that is recursion, and its parts are filled in before any
    generated code runs.
    """
    fn = transparent(fn)

    def fill(split: SplitAdjoint) -> None:
        with _lost_positions_settled():
            fill_parts(split)

    def fill_parts(split: SplitAdjoint) -> None:
        parsed, ssa = _lowered_to_split(fn, kinds, target if api else NUMPY)
        split.result_tree = ssa.result_tree
        ssa, facts = _analysed(ssa, ssa.params, leaf_kinds(kinds), guarded=False)
        adjoint = reverse(ssa, ssa.params, facts, callee=_split_callees(target), split=True,
                          slices_in_place=target.capabilities.slices_in_place)
        lost_in_callee = lambda fn, kinds: _lost_in_callee(fn, kinds, target)
        _note_lost_positions(split, lambda: lost_derivative_parameters(ssa, facts.kind_of, lost_in_callee))
        context = PassContext(ssa.body, facts, target)
        adjoint = run_pipeline(adjoint, before_split("reverse"), context, ADJOINT)
        forward, backward = (run_pipeline(part, after_split("reverse"), context, PARTS)
                             for part in split_parts(adjoint, parsed.name))
        origin = origin_of(parsed.filename, parsed.line)
        header = f"Generated by s2s_ad from {parsed.name} ({_shown(parsed, origin)})"
        handed = target.handed_split(forward, backward) if api else None
        if handed is None:
            emitted = emit_module([(forward, None, None), (backward, None, None)],
                                  [f"{header}: forward and backward parts."], target)
            namespace = compile_module(emitted, origin)
            split.forward, split.backward = namespace[forward.name], namespace[backward.name]
            split.source, split.snapshot = emitted.source, _snapshot(parsed, emitted)
            split.restores = _restores(forward, backward, emitted.namespace.globals.values())
            return
        parts = [emit_module([(part, None, None)], [f"{header}: {which}."], target)
                 for part, which in zip(handed, ("the forward part, handing its tape to the backward part",
                                                 "the backward part, taking the tape the forward part hands it"))]
        split.forward, split.backward = (compile_emitted(part, origin) for part in parts)
        split.source = "\n".join(part.source for part in parts)
        split.snapshot = _snapshot(parsed, parts[0])
        split.restores = _restores(forward, backward, [v for p in parts for v in p.namespace.globals.values()])
        split.handed = True

    return _build_once(_SPLITS, fn, (fn.__code__, kinds, api), lambda: SplitAdjoint(fn), fill, target)


def _lowered_to_split(fn: Callable, kinds: Kinds, target: Target) -> tuple[ParsedFunction, ir.Function]:
    """``lowered`` for a split adjoint: helpers handing back views of an array written later lowered in
    place (as in ``_lowered_for``), and every helper where ``target`` asks for it; where that is refused,
    the plain lowering."""
    try:
        return lowered(fn, kinds, inline_view_helpers=True, inline_helpers=target.capabilities.inlines_helpers)
    except TransformError:
        pass
    if target.capabilities.inlines_helpers:
        try:
            return lowered(fn, kinds, inline_view_helpers=True)
        except TransformError:
            pass
    return lowered(fn, kinds)


# The splits this thread is filling (how deep), and how each one's lost positions are found: in a
# recursion a split's positions read those of one not yet filled, so they are found again, all of
# them, until none changes, once the outermost split is filled (_lost_positions_settled).
_LOST = threading.local()


@contextmanager
def _lost_positions_settled() -> Iterator[None]:
    """Around filling a split: when the outermost one is filled, and a split's lost positions read
    those of a split not yet filled (recursion, direct or mutual), find them all again until they
    settle.  ``rec(a, c, b, n - 1)`` passing its ``b`` where ``c`` is lost loses ``b`` too."""
    depth = getattr(_LOST, "depth", 0)
    if depth == 0:
        _LOST.found, _LOST.recursive = [], False
    _LOST.depth = depth + 1
    try:
        yield
    finally:  # settled even where the outermost one failed: the helpers it built are cached
        _LOST.depth = depth
        if depth == 0:
            found, recursive, _LOST.found = _LOST.found, _LOST.recursive, []
            changed = recursive
            while changed:  # each pass only adds positions (and earlier sites): it ends
                changed = False
                for split, find in found:
                    lost = find()
                    changed = changed or lost != split.lost
                    split.lost = lost


def _note_lost_positions(split: SplitAdjoint, find: Callable[[], dict]) -> None:
    """Set ``split.lost`` (``lost_derivatives.lost_derivative_parameters``) and keep how, for the settling."""
    split.lost = find()
    _LOST.found.append((split, find))


def _lost_in_callee(fn: Callable, kinds: Kinds, target: Target) -> dict:
    """The lost positions of the split adjoint of a helper; one still being filled (recursion) has
    them only once settled (``_lost_positions_settled``)."""
    callee = _split_callee(fn, kinds, target)
    if callee.forward is None:
        _LOST.recursive = True
    return getattr(callee, "lost", {})


def check_lost_arguments(split: SplitAdjoint, args: tuple) -> None:
    """Where every argument of a split adjoint is differentiated (``vjp``), a float argument that a
    rule inside would lose the derivative of is refused (``lost_derivatives.lost_derivative_parameters``)."""
    for index, (function, name, filename, line) in getattr(split, "lost", {}).items():
        if index < len(args):
            runtime.check_no_derivative(args[index], function, name, filename, line)


def _restores(forward: ir.Function, backward: ir.Function, callees: Any) -> bool:
    """True if ``backward`` writes into an array the forward part made (it puts an overwritten slice
    back), or calls a helper's backward part that does: running it changes what the tape holds."""
    primal = ir.assigned_names(forward.body) | set(forward.params)
    if any(isinstance(s, ir.Store) and s.array in primal for s in ir.walk(backward.body)):
        return True
    return any(isinstance(c, SplitAdjoint) and c.restores for c in callees)


def _no_container_result(fn: Callable, made: Any) -> Any:
    """``made``, the generated callee of the user's ``fn``, unless ``fn`` returns a container: generated
    code calling it would see a tuple of leaves where the user's code reads a dict or fields."""
    if getattr(made, "result_tree", None) is not None:
        parsed = parse_function(fn)
        raise TransformError(f"the call of {fn.__qualname__}, which returns a "
                             f"{made.result_tree.cls.__name__}", "a helper returning a container is lowered in "
                             "place only when it takes a container argument; return a tuple, or pass the "
                             "container it builds on", filename=parsed.filename, line=parsed.line)
    return made


def _split_callee(fn: Callable, kinds: Kinds, target: Target) -> SplitAdjoint:
    """``build_split`` for a call in generated code."""
    return _no_container_result(fn, build_split(fn, kinds, target))


def _split_callees(target: Target) -> Callable[[Callable, Kinds], SplitAdjoint]:
    """What the reverse generator calls for the split adjoint of a helper: built for ``target``."""
    return lambda fn, kinds: _split_callee(fn, kinds, target)


def _tangent_callee(fn: Callable, kinds: Kinds, carries: tuple[bool, ...], target: Target) -> TangentCallee:
    """``build_tangent_callee`` for a call in generated code."""
    return _no_container_result(fn, build_tangent_callee(fn, kinds, carries, target))


def _tangent_callees(target: Target) -> Callable[[Callable, Kinds, tuple[bool, ...]], TangentCallee]:
    """What the forward generator calls for the tangent function of a helper: built for ``target``."""
    return lambda fn, kinds, carries: _tangent_callee(fn, kinds, carries, target)


# What this thread is building now, by (cache, function, key): recursion gets the unfinished object.
# Per thread: another thread asking for the same key waits for the finished one (TransformCache.get).
_BUILDING = threading.local()


def _build_once(cache: TransformCache, fn: Callable, key: tuple, empty: Callable, fill: Callable,
                target: Target) -> Any:
    """The generated callee of ``fn`` for ``key``, made once (``empty()``, then ``fill``) and cached.

    While it is being filled, calls made by the code being generated (in
    this thread) get the unfinished object: that is recursion, and it is
    complete before any generated code runs.  Other threads wait for it.
    """
    building = getattr(_BUILDING, "entries", None)
    if building is None:
        building = _BUILDING.entries = {}
    mark = (Identity(cache), Identity(fn), key, target)
    if mark in building:
        return building[mark]

    def build() -> Any:
        made = building[mark] = empty()
        try:
            with collector_paused():
                fill(made)
            return made
        finally:
            del building[mark]

    # A helper's helpers are built nested in its build: no deeper than the stack allows (nesting.py).
    return cache.get(fn, key, lambda: bounded(mark, build, lambda: _build_once(cache, fn, key, empty, fill, target)),
                     target)


def build_forward(fn: Callable, wrt: tuple[str, ...], kinds: Kinds, stage: str = "optimized",
                  compile_it: bool = True, target: Target = NUMPY) -> Built:
    """Run the forward-mode pipeline up to ``stage``.

    The result is ``jvp_<name>(params..., t_<p> for p in wrt)`` returning
    ``(result, tangent of the result)``.
    """
    return _build(fn, wrt, kinds, stage, compile_it, "forward", target=target)


_TANGENT_CALLEES = TransformCache()


def build_tangent_callee(fn: Callable, kinds: Kinds, carries: tuple[bool, ...], target: Target = NUMPY
                         ) -> TangentCallee:
    """The tangent function of a user function called from forward-mode code (cached).

    ``carries`` says which arguments come with a tangent.  As in
    ``build_split``, a function being built is handed out unfinished to the
    calls made while building it (recursion).
    """
    fn = transparent(fn)

    def fill(callee: TangentCallee) -> None:
        parsed, ssa = lowered(fn, kinds)
        wrt = [p for p, carried in zip(ssa.params, carries) if carried]
        ssa, facts = _analysed(ssa, wrt, kinds)
        callee.result_tree = ssa.result_tree
        tangent = run_pipeline(forward(ssa, wrt, facts, callee=_tangent_callees(target)), FORWARD,
                               PassContext(ssa.body, facts, target), TANGENT)
        origin = origin_of(parsed.filename, parsed.line)
        emitted = emit(tangent, [f"Generated by s2s_ad from {parsed.name} ({_shown(parsed, origin)}): forward mode."],
                       target=target)
        callee.jvp = compile_emitted(emitted, origin)
        callee.primal_count = len(ssa.params)
        if target.capabilities.vector_tangents:
            header = [f"Generated by s2s_ad from {parsed.name} ({_shown(parsed, origin)}): forward mode."]
            _with_vector_tangents(callee.jvp, tangent, ssa, wrt, kinds, header, target, origin)
        callee.source = emitted.source
        callee.snapshot = _snapshot(parsed, emitted)

    return _build_once(_TANGENT_CALLEES, fn, (fn.__code__, kinds, carries), lambda: TangentCallee(fn), fill,
                       target)
