"""The SSA checks that refuse, or keep to run time, what the facts cannot prove right.

Input: an ``ir.Function`` in SSA form with its ``Analysis`` (facts.py), the
in-place updates and element reads lowering recorded on it (``fn.in_place``,
``fn.element_reads``) and the run-time checks it put before them.  Output:
``TransformError`` where the kinds prove a program NumPy would run otherwise
than its lowering (``a += b`` of a shared array, a view read after a write into
its base, a call with no rule whose arguments vary); otherwise the function
without the run-time checks the kinds prove unneeded, and its facts (None
where ``check_element_reads`` took values again: those are derived again).
These are passes of ``pass_manager.SSA``; factcheck.py, not this module,
derives facts again to compare them.
"""
from __future__ import annotations

import dataclasses
import operator
from typing import Any, Optional

from ..memory import aliasing
from ..core import ir, language, runtime
from ..rules import registry as rules
from ..core.draws import is_draw
from ..core.errors import TransformError
from ..lowering.expressions import describe_callable, missing_rule
from ..core.kinds import NUMBER, Sequence
from .activity import _checked_only_calls, _reads
from .facts import Analysis
from .inference import SCALAR


def check_in_place(fn: ir.Function, facts: Analysis, kinds: dict[str, Any]
                   ) -> tuple[ir.Function, Analysis]:
    """Refuse ``name op= value`` where ``name`` provably holds an array (or a list) another name shares.

    Lowering made such updates new bindings, which is what Python does for
    numbers; for a shared array NumPy would change it for every name that
    sees it (and an argument's array is the caller's).  Where the kinds
    prove an array, the update is refused here; where they prove a number
    (not a 0-d array), the run-time check lowering put before it goes;
    otherwise that check decides when the function runs.  Returns ``fn``
    without the checks that are not needed (``fn`` itself is not changed), and its facts.
    """
    dropped: list[ir.Stmt] = []
    definitions = {s.target: s.value for s in ir.walk(fn.body) if isinstance(s, ir.Assign) and not s.merge}
    for update in fn.in_place:
        if update.base is None:
            array = (facts.rank_of(ir.Var(update.value)) or 0) > 0
        else:  # a view: an array if its base is one and the index keeps a dimension
            base = facts.rank_of(ir.Var(update.base))
            array = base is not None and base > 0 and (update.keeps_dimension or base > update.integers)
        kind = facts.fact(ir.Var(update.value))
        if update.base is None and isinstance(kind, Sequence) and kind.display == "list":
            raise TransformError(
                f"the in-place update of {update.name}", f"{update.name} is {update.shared}, and Python would "
                f"change that list too (+= extends a list in place); write {update.name} = {update.name} + ... "
                f"(a new list)", filename=update.filename or fn.filename, line=update.line, column=update.column)
        if array:
            raise TransformError(
                f"the in-place update of {update.name}", f"{update.name} is {update.shared}, and NumPy would "
                f"change that array too; write {update.name} = {update.name} + ... (a new array), or copy it "
                f"first", filename=update.filename or fn.filename, line=update.line, column=update.column)
        if update.guard is not None and _proven_number(update, facts, kinds, definitions):
            dropped.append(update.guard)
    return _without_checks(fn, facts, dropped)


def _without_checks(fn: ir.Function, facts: Analysis, dropped: list[ir.Stmt]) -> tuple[ir.Function, Analysis]:
    """``fn`` without the run-time checks ``dropped`` (found unneeded), and its facts then (a check
    lowering left out, on a path it dropped, changes nothing)."""
    present = {s.sid for s in ir.walk(fn.body)}
    dropped = list({s.sid: s for s in dropped if s.sid in present}.values())
    if not dropped:
        return fn, facts
    body = ir.replace_statements(fn.body, dict.fromkeys(s.sid for s in dropped))
    return dataclasses.replace(fn, body=body), facts.with_checks_changed(dropped=dropped)


def _proven_number(update: ir.InPlace, facts: Analysis, kinds: dict[str, Any],
                   definitions: dict[str, ir.Expr]) -> bool:
    """True if the value ``update`` changes is certainly an immutable number (never a 0-d array)."""
    if update.base is not None:  # one element of an array (a NumPy scalar), by integers for every axis
        base = facts.rank_of(ir.Var(update.base))
        return base is not None and not update.keeps_dimension and base == update.integers
    if update.value in kinds:
        return kinds[update.value] == NUMBER
    value = definitions.get(update.value)
    # arithmetic and ufuncs give numbers, not 0-d arrays, for operands of rank 0
    return (isinstance(value, ir.Call) and facts.rank_of(ir.Var(update.value)) == 0
            and (language.is_ufunc(value.fn) or rules.fact(value.fn, "arithmetic", False)))


def check_constant_calls(fn: ir.Function, facts: Analysis) -> None:
    """Refuse a call of a function with no rule and no source whose arguments depend on the inputs.

    One whose arguments do not (``np.random.normal(size=3)``, ``math.lgamma(k + 1)``) is a
    constant: it runs once where the primal computation runs, and nothing differentiates it.
    A random draw is one such call; ``api`` replays the generators' states in every pass of a
    derivative taken in several (``draws.Draws``), a derivative of a derivative's included.
    """
    checked_only = _checked_only_calls(fn)
    for stmt in ir.walk(fn.body):
        if not (isinstance(stmt, ir.Assign) and isinstance(stmt.value, ir.Call)):
            continue
        call = stmt.value
        if stmt.target in checked_only:
            continue  # assert np.allclose(y, 2 * x): a constant, as the flow table says (_flow_table)
        # (a generator carries no derivative: rng in draw(rng, "normal") is a parameter of the draw only
        # where a vjp differentiates by every argument, and runtime.draw refuses anything but a generator)
        read = call.args[2:] if call.fn is runtime.draw else call.args
        if not _reads(list(read) + [v for _, v in call.kwargs]) & facts.varied:
            continue
        if call.fn is runtime.draw or is_draw(call.fn):
            method = call.args[1] if call.fn is runtime.draw and len(call.args) > 1 else None  # "normal"
            what = f".{method.value}()" if isinstance(method, ir.Const) else describe_callable(call.fn)
            raise TransformError(f"the random draw {what} with an argument that depends on the inputs",
                                 "a draw has no derivative by its parameters here; draw standard values and "
                                 "transform them (loc + scale * rng.standard_normal(size)), or stop the "
                                 "derivative with s2s_ad.stop_gradient", filename=fn.filename, line=stmt.line)
        why = missing_rule(call.fn)
        if why is not None:
            raise TransformError(f"the call of {describe_callable(call.fn)}", why, filename=fn.filename,
                                 line=stmt.line)


def check_element_reads(fn: ir.Function, facts: Analysis) -> tuple[ir.Function, Optional[Analysis]]:
    """Refuse a read of ``a[i]`` after ``a`` was written unless ``a[i]`` is one number (``a`` has as
    many dimensions as the index has parts, each a number): otherwise it may be a view, which NumPy
    would show the write through.  What the kinds do not prove is refused.

    An update through ``row = a[1]`` (``row *= 3``, lowered as a write into ``a``) is right only
    where ``a[1]`` is a view: refused where the kinds prove it one number; where they prove a view,
    the run-time check lowering put before it goes; otherwise that check decides.  Returns ``fn``
    without the checks that are not needed, and its facts: the facts handed on where it only dropped
    checks; None where it took values again (a read of a copy renamed to the value taken before, a
    view or a copy chosen where it runs), whose facts are derived again."""
    dropped: list[ir.Stmt] = []
    replaced: dict[int, Any] = {}  # sid of a statement -> None (dropped), or what takes its place
    kept: dict[str, str] = {}  # a retaken value that is a copy -> the value taken before
    taken = ir.NameSet(ir.assigned_names(fn.body) | set(fn.params))
    for read in fn.element_reads:
        if read.view:
            rank = facts.rank_of(ir.Var(read.array))
            rebound = read.retake is not None and read.store is not None
            if rank is not None and rank <= len(read.index) and not rebound:
                raise TransformError(f"the in-place update of {read.name}", read.hint,
                                     filename=fn.filename, line=read.line)
            if rank is not None and rank <= len(read.index):  # one number: op= rebinds it, the array unchanged
                assert read.retake is not None and read.store is not None
                replaced[read.store.sid] = None
                replaced[read.retake.sid] = ir.Assign(read.retake.target, read.number, read.line)
            elif rank is None and rebound:  # a row (a view: written through) or one number, as NumPy decides
                assert read.retake is not None and read.store is not None
                replaced[read.store.sid] = None
                replaced[read.retake.sid] = _updated_by_rank(read, taken)
            if read.guard is not None and (rank is not None or rebound):
                dropped.append(read.guard)
            continue
        parts = [index_part(p, facts) for p in read.index]
        view = aliasing.indexed_view(parts, facts.rank_of(ir.Var(read.array)))
        if view is None and read.retake is not None and set(parts) == {aliasing.INTEGER}:
            # B[0] of a B whose rank the kinds do not know: a row (a view) or one number (a copy),
            # chosen where it runs by NumPy's own rule
            replaced[read.retake.sid] = _chosen_by_rank(read, taken)
            continue
        if view is None or (view and read.retake is None):
            raise TransformError(f"reading {read.name} after {read.array} was written", read.hint,
                                 filename=fn.filename, line=read.line)
        if read.retake is not None and read.kept is not None and not view:  # a copy: the value taken before
            replaced[read.retake.sid] = None
            kept[read.retake.target] = read.kept
    if not replaced:
        return _without_checks(fn, facts, dropped)
    replaced.update(dict.fromkeys(s.sid for s in dropped))
    body = ir.replace_statements(fn.body, replaced)
    aux = fn.aux
    if kept:
        body = ir.renamed(body, kept)
        aux = None if aux is None else ir.substitute(aux, {k: ir.Var(v) for k, v in kept.items()})
    return dataclasses.replace(fn, body=body, aux=aux, element_reads=[]), None


def _updated_by_rank(read: ir.ElementRead, taken: set[str]) -> list[ir.Stmt]:
    """``name op= v`` with ``name = array[i]``, where only the rank of ``array`` tells a view (a row:
    written through, NumPy's meaning) from one number (a copy: ``op=`` rebinds the name alone)::

        ndim_array = np.ndim(array)
        is_row = ndim_array > len(index)
        if is_row:
            array[i] = updated
            name_now = array[i]
            name = name_now
        else:
            name = updated
    """
    retake, store, line = read.retake, read.store, read.line
    assert retake is not None and store is not None
    ndim = ir.fresh_name(f"ndim_{read.array}", taken)
    is_row = ir.fresh_name(f"is_row_of_{read.array}", taken)
    now = ir.fresh_name(f"{retake.target}_now", taken)
    return [ir.Assign(ndim, ir.Call(language.ndim, (ir.Var(read.array),)), line),
            ir.Assign(is_row, ir.Call(operator.gt, (ir.Var(ndim), ir.Const(len(read.index)))), line),
            ir.If(ir.Var(is_row), [store, ir.Assign(now, retake.value, line),
                                   ir.Assign(retake.target, ir.Var(now), line, merge=True)],
                  [ir.Assign(retake.target, read.number, line, merge=True)], line)]


def _chosen_by_rank(read: ir.ElementRead, taken: set[str]) -> list[ir.Stmt]:
    """``name = array[i]`` taken again after a write, where only the rank of ``array`` tells a view (a
    row: what the array holds now) from a copy (one number: the value taken before)::

        ndim_array = np.ndim(array)
        is_row = ndim_array > len(index)
        if is_row:
            row_now = array[i]
            name = row_now
        else:
            name = kept
    """
    retake, line, kept = read.retake, read.line, read.kept
    assert retake is not None and kept is not None  # (only reads taken again come here)
    ndim = ir.fresh_name(f"ndim_{read.array}", taken)
    is_row = ir.fresh_name(f"is_row_of_{read.array}", taken)
    now = ir.fresh_name(f"{retake.target}_now", taken)
    return [ir.Assign(ndim, ir.Call(language.ndim, (ir.Var(read.array),)), line),
            ir.Assign(is_row, ir.Call(operator.gt, (ir.Var(ndim), ir.Const(len(read.index)))), line),
            ir.If(ir.Var(is_row), [ir.Assign(now, retake.value, line), ir.Assign(retake.target, ir.Var(now), line, merge=True)],
                  [ir.Assign(retake.target, ir.Var(kept), line, merge=True)], line)]


def index_part(part: ir.Expr, facts: Analysis) -> str:
    """What one part of an index is for NumPy's view rule (``aliasing.indexed_view``)."""
    if isinstance(part, ir.Slice):
        return aliasing.SLICE
    if isinstance(part, ir.Const):
        value = part.value
        if value is None or value is Ellipsis:
            return aliasing.NEW_AXIS
        if language.is_truth_value(value):
            return aliasing.ADVANCED
        return aliasing.INTEGER if language.is_integer_value(value) else aliasing.ADVANCED
    if isinstance(part, ir.Display):
        return aliasing.ADVANCED if part.kind == "list" else aliasing.UNKNOWN
    if facts.shape_of(part) == SCALAR:
        return aliasing.ADVANCED if getattr(facts.fact(part), "truth", False) else aliasing.INTEGER
    rank = facts.rank_of(part)
    return aliasing.ADVANCED if rank is not None and rank > 0 else aliasing.UNKNOWN
