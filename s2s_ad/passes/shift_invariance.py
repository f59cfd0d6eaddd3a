"""Values the result does not depend on: the maximum subtracted before ``exp`` in a softmax.

Input: an SSA ``ir.Function`` after its analysis, with its facts (``Analysis``: which values are
active, the ranks of arrays).  Output: the same statements, with ``derivative_free`` naming the
values ``m`` whose every change leaves the result unchanged, so that the analysis lets no
derivative flow into them; the facts derived again where any was found.

The case that matters is the numerically stable softmax or log-sum-exp, as people write it::

    shifted = x - np.max(x, axis=1, keepdims=True)
    log_norm = np.log(np.sum(np.exp(shifted), axis=1, keepdims=True))
    return -np.sum(onehot * (shifted - log_norm))

Adding any ``c`` of the maximum's shape (one number per row) to the maximum leaves the result as
it was: ``shifted`` moves by ``-c``, ``np.exp(shifted)`` and its row sums are scaled by ``e**-c``,
their log moves by ``-c`` again, and ``shifted - log_norm`` is back where it was.  So the result
does not depend on the maximum's value at all, and its derivative through the maximum is exactly
zero, to every order: the generated code leaves out the maximum's adjoint (two passes over the
array and a sum of a mask), as ``jax.nn.logsumexp`` does by hand with ``stop_gradient``.

How it is proven: for a candidate ``m`` (an active reduction's value bound at the top level, of
known rank: a maximum, minimum, mean or sum),
each value computed from it at the top level gets a state that says how it moves when ``c`` is added
to ``m``: ``Shift(k)``, moved by ``k * c``, or ``Scale(k)``, multiplied by ``e**(k * c)``; a value
not computed from ``m`` does not move.  The operations declare how they carry these (the fact
``shift`` in templates/, and ``sum`` for ``+`` and ``-``), and reductions keep a state only along
axes where ``c`` is constant.  So that the same ``c`` lines up in every value, each state carries the
pattern of axes along which ``c`` may vary (a keepdims reduction's reduced axes are constant), and
two moving operands must agree on it after broadcasting.  ``m`` is cut when no moving value reaches
the result, the auxiliary result, a store, a branch or a loop, or any operation whose movement is not
declared.  Already cut values count as not moving: each cut holds with the others fixed, and since
each result is independent of the cut value, the derivative is the same whichever is cut first.
Nothing about the primal changes: the values computed are the same, only the adjoint (or tangent)
code of the cut value is left out.
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Callable, Optional

from ..core import ir
from ..rules import registry as rules
from ..rules.rule import ArgumentMismatch, bind_arguments, is_default
from ..analysis.facts import Analysis


@dataclass(frozen=True)
class Moving:
    """How a value moves when ``c`` is added to the candidate: by ``k * c`` (``scaled`` False) or
    by the factor ``e ** (k * c)`` (``scaled`` True).  ``varies``: per axis of the value, whether
    ``c`` may vary along it (False: ``c`` is constant along that axis)."""

    scaled: bool
    k: int
    varies: tuple[bool, ...]


def cut_shift_invariant(fn: ir.Function, facts: Analysis, derive: Callable[[ir.Function], Analysis]
                        ) -> tuple[ir.Function, Analysis]:
    """``fn`` with the active values the result provably does not depend on marked
    ``derivative_free`` (see the module docstring), and its facts; ``fn`` and ``facts`` themselves
    where there are none."""
    cut = set(fn.derivative_free)
    for index, stmt in enumerate(fn.body):
        if (isinstance(stmt, ir.Assign) and stmt.target in facts.active and stmt.target not in cut
                and _reduced_here(stmt)):
            start = _start(stmt, facts)
            if start is not None and _result_unmoved(fn, index, start, facts, cut):
                cut.add(stmt.target)
    if cut == set(fn.derivative_free):
        return fn, facts
    made = dataclasses.replace(fn, derivative_free=frozenset(cut))
    return made, derive(made)


def _reduced_here(stmt: ir.Assign) -> bool:
    """Whether the value is a reduction's (a maximum, a mean, a sum: ``shift`` declared for one): the
    values subtracted to keep ``exp`` in range.  (A new value: no store into another array changes
    it.  Arithmetic results are not tried: every one would cost a walk over the rest of the function,
    and they do not cancel in the code people write.)"""
    return isinstance(stmt.value, ir.Call) and rules.fact(stmt.value.fn, "shift") in ("homogeneous", "equivariant")


def _start(stmt: ir.Assign, facts: Analysis) -> Optional[Moving]:
    """The candidate's own state: moved by ``c``, which may vary along every axis but those a
    keepdims reduction reduced; None where its rank is unknown."""
    rank = _rank(ir.Var(stmt.target), facts)
    if rank is None:
        return None
    varies = [True] * rank
    reduced = _reduction(stmt.value, facts) if isinstance(stmt.value, ir.Call) else None
    if reduced is not None and reduced[1]:  # keepdims: c is one number along each reduced axis
        for axis in reduced[0]:
            varies[axis] = False
    return Moving(False, 1, tuple(varies))


def _result_unmoved(fn: ir.Function, start: int, moving_start: Moving, facts: Analysis, cut: set[str]) -> bool:
    """Whether, with ``fn.body[start]``'s value moved, no moving value reaches anything but
    operations declared to carry the movement, and none reaches the result."""
    candidate = fn.body[start]
    assert isinstance(candidate, ir.Assign)
    moving: dict[str, Moving] = {candidate.target: moving_start}
    for stmt in fn.body[start + 1:]:
        read = {name for expr in _all_exprs(stmt) for name in ir.names_read(expr)}
        if not read & moving.keys():
            continue
        if not isinstance(stmt, ir.Assign):
            return False  # a store, a branch, a loop, the return: the movement escapes
        if stmt.target in cut:
            continue  # already cut: held fixed (see the module docstring)
        state = _carried(stmt.value, moving, facts)
        if state is None:
            return False
        if state.k != 0:
            moving[stmt.target] = state
    aux = [] if fn.aux is None else list(ir.names_read(fn.aux))
    return not any(name in moving for name in aux)


def _all_exprs(stmt: ir.Stmt) -> list[ir.Expr]:
    """Every expression ``stmt`` reads, those of its nested blocks included."""
    return [expr for inner in ir.walk([stmt]) for expr in ir.exprs_of(inner)]


def _carried(value: ir.Expr, moving: dict[str, Moving], facts: Analysis) -> Optional[Moving]:
    """The state of ``value`` (one that reads a moving name), or None where its movement is unknown.
    A state with ``k == 0`` does not move."""
    if isinstance(value, ir.Var):
        return moving[value.name]
    if not isinstance(value, ir.Call):
        return None
    sign, how = rules.fact(value.fn, "sum"), rules.fact(value.fn, "shift")
    if sign is not None and not value.kwargs and len(value.args) == 2:
        return _summed(value.args, 1 if sign == "+" else -1, moving, facts)
    if how in ("product", "quotient") and not value.kwargs and len(value.args) == 2:
        return _multiplied(value.args, 1 if how == "product" else -1, moving, facts)
    if how in ("exp", "log", "negation") and not value.kwargs and len(value.args) == 1:
        return _unary(how, moving.get(_name(value.args[0]) or ""))
    if how in ("homogeneous", "equivariant"):
        return _reduced(value, how, moving, facts)
    if how == "index" and not value.kwargs and len(value.args) == 2:
        return _indexed(value.args, moving)
    return None


def _name(expr: ir.Expr) -> Optional[str]:
    return expr.name if isinstance(expr, ir.Var) else None


def _operand(expr: ir.Expr, moving: dict[str, Moving], facts: Analysis) -> tuple[Optional[Moving], Optional[int]]:
    """(the operand's state, or None where it does not move; its rank, or None where unknown)."""
    state = moving.get(_name(expr) or "")
    return state, len(state.varies) if state is not None else _rank(expr, facts)


def _broadcast(a: tuple[Optional[Moving], Optional[int]], b: tuple[Optional[Moving], Optional[int]]
               ) -> Optional[tuple[bool, ...]]:
    """The pattern of the broadcast result of two operands, at least one moving, or None where the
    ranks are unknown or the two moving ones place ``c`` differently."""
    (state_a, rank_a), (state_b, rank_b) = a, b
    if rank_a is None or rank_b is None:
        return None
    rank = max(rank_a, rank_b)
    patterns = [(False,) * (rank - len(s.varies)) + s.varies for s in (state_a, state_b) if s is not None]
    if len(patterns) == 2 and patterns[0] != patterns[1]:
        return None
    return patterns[0]


def _summed(args: tuple[ir.Expr, ...], sign: int, moving: dict[str, Moving], facts: Analysis) -> Optional[Moving]:
    """``a + b`` (``sign`` 1) or ``a - b`` (-1): shifts add up; equal scales stay (``v e^kc + w e^kc``)."""
    a, b = _operand(args[0], moving, facts), _operand(args[1], moving, facts)
    varies = _broadcast(a, b)
    states = [s for s in (a[0], b[0]) if s is not None]
    if varies is None:
        return None
    if any(s.scaled for s in states):
        if len(states) == 2 and states[0] == dataclasses.replace(states[1], varies=states[0].varies):
            return Moving(True, states[0].k, varies)
        return None  # a scaled value plus one that does not scale with it
    k = (a[0].k if a[0] else 0) + sign * (b[0].k if b[0] else 0)
    return Moving(False, k, varies)


def _multiplied(args: tuple[ir.Expr, ...], sign: int, moving: dict[str, Moving], facts: Analysis
                ) -> Optional[Moving]:
    """``a * b`` (``sign`` 1) or ``a / b`` (-1): scales multiply; a shifted factor is unknown."""
    a, b = _operand(args[0], moving, facts), _operand(args[1], moving, facts)
    varies = _broadcast(a, b)
    states = [s for s in (a[0], b[0]) if s is not None]
    if varies is None or any(not s.scaled for s in states):
        return None
    k = (a[0].k if a[0] else 0) + sign * (b[0].k if b[0] else 0)
    return Moving(True, k, varies)


def _unary(how: str, state: Optional[Moving]) -> Optional[Moving]:
    """``np.exp`` turns a shift into a scale, ``np.log`` a scale into a shift; ``-v`` negates a shift
    and keeps a scale."""
    if state is None:
        return None
    if how == "exp":
        return Moving(True, state.k, state.varies) if not state.scaled else None
    if how == "log":
        return Moving(False, state.k, state.varies) if state.scaled else None
    return state if state.scaled else Moving(False, -state.k, state.varies)


def _reduced(call: ir.Call, how: str, moving: dict[str, Moving], facts: Analysis) -> Optional[Moving]:
    """A reduction of a moving value along axes where ``c`` is constant: a sum keeps a scale (``c``
    enters each term alike), a mean, maximum or minimum keeps a shift too."""
    reduced = _reduction(call, facts)
    state = moving.get(_name(call.args[0]) or "") if call.args else None
    if reduced is None or state is None or any(state.varies[axis] for axis in reduced[0]):
        return None
    if not state.scaled and how != "equivariant":
        return None
    axes, keepdims = reduced
    varies = tuple(v for axis, v in enumerate(state.varies) if keepdims or axis not in axes)
    return Moving(state.scaled, state.k, varies)


def _indexed(args: tuple[ir.Expr, ...], moving: dict[str, Moving]) -> Optional[Moving]:
    """``v[i]`` where the index takes whole axes (``:``), adds them (``None``), or picks along or
    slices axes where ``c`` is constant: each element keeps its movement (``m[:, None]``, ``m[:, 0]``
    of a keepdims maximum)."""
    state = moving.get(_name(args[0]) or "")
    index = args[1]
    if state is None or any(name in moving for name in ir.names_read(index)):
        return None
    items = index.items if isinstance(index, ir.Display) and index.kind == "tuple" else (index,)
    varies: list[bool] = []
    axis = 0
    for item in items:
        if isinstance(item, ir.Const) and item.value is None:
            varies.append(False)
            continue
        if axis >= len(state.varies):
            return None
        whole = isinstance(item, ir.Slice) and item.lower is None and item.upper is None and item.step is None
        picks = isinstance(item, ir.Const) and item.value.__class__ is int
        if not (whole or (not state.varies[axis] and (picks or isinstance(item, ir.Slice)))):
            return None  # an element, or some, along an axis where c varies: another c
        if not picks:
            varies.append(state.varies[axis])
        axis += 1
    return Moving(state.scaled, state.k, tuple(varies) + state.varies[axis:])


def _reduction(call: ir.Call, facts: Analysis) -> Optional[tuple[frozenset[int], bool]]:
    """(the axes reduced, keepdims) of a reduction declared ``shift`` given only its array, a
    constant axis and keepdims; None for anything else (``where=``, ``initial=``, ``dtype=``...)."""
    if rules.fact(call.fn, "shift") not in ("homogeneous", "equivariant"):
        return None
    rule = rules.adjoint_rule(call.fn)
    if rule is None or not call.args:
        return None
    try:
        bound = bind_arguments(rule, call.args, call.kwargs)
    except ArgumentMismatch:
        return None
    first, axis, keepdims = rule.inputs[0], bound.get("axis"), bound.get("keepdims")
    if any(not is_default(value) for name, value in bound.items() if name not in (first, "axis", "keepdims")):
        return None
    rank = _rank(bound[first], facts)
    kept = False if is_default(keepdims) else _constant(keepdims)
    axes = None if rank is None else _axes(axis, rank)
    if axes is None or not isinstance(kept, bool):
        return None
    return axes, kept


def _axes(axis: object, rank: int) -> Optional[frozenset[int]]:
    """The axes an ``axis=`` argument names, counted from 0; None where not constant or out of range."""
    value = None if is_default(axis) else _constant(axis)
    if value is None:
        return frozenset(range(rank))
    if value is _UNKNOWN:
        return None
    items = value if isinstance(value, tuple) else (value,)
    if not all(isinstance(i, int) and not isinstance(i, bool) and -rank <= i < rank for i in items):
        return None
    return frozenset(i % rank for i in items)


_UNKNOWN = object()


def _constant(expr: object) -> object:
    """The value of a constant operand (a tuple display of constants as a tuple); ``_UNKNOWN`` else."""
    if isinstance(expr, ir.Const):
        return expr.value
    if isinstance(expr, ir.Display) and expr.kind == "tuple" and all(isinstance(i, ir.Const) for i in expr.items):
        return tuple(i.value for i in expr.items if isinstance(i, ir.Const))
    return _UNKNOWN


def _rank(expr: ir.Expr, facts: Analysis) -> Optional[int]:
    """An operand's rank: 0 for a number constant (None for a truth value, a string, None); a name's
    from the facts (``Analysis.rank_of``)."""
    if isinstance(expr, ir.Const):
        return 0 if isinstance(expr.value, (int, float)) and not isinstance(expr.value, bool) else None
    return facts.rank_of(expr) if isinstance(expr, ir.Var) else None
