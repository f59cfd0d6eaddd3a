"""Stage 3: facts about an SSA function that the generators need.

Input: an ``ir.Function`` in SSA form, the parameters to differentiate, and
what is known of each parameter's kind (a ``kinds.Kind``: a number, an
array, a tuple, or unknown).  Output: an ``Analysis`` with

* ``active``: the values that depend on a ``wrt`` parameter *and* reach the
  result; only these get adjoint code;
* ``shape``: a shape class per value.  ``SCALAR`` means a number; two values
  with the same integer class provably have the same shape.  The reverse
  generator reduces a broadcast contribution only where classes differ.
* ``uses``: how many times each value is read;
* ``varied``: the values that depend on a ``wrt`` parameter (forward mode
  follows these);
* ``ndim``: the rank of the arrays whose rank is known (parameters of
  known rank, arrays made by ``np.zeros(n)``, ``np.zeros((n, m))``,
  ``np.zeros_like(a)``, ``np.copy(a)``, and elements read from them);
* ``kinds``: what is known of each value, a ``kinds.Kind`` (``ndim`` and
  ``items``, the item kinds of tuples, are read off it for the generators);
* ``inexact``: arrays provably of floats, whose stores keep derivatives.

Shape classes and kinds are a fixed point over loops and branches (``infer``):
a merge (a value assigned on several paths) has what holds on every path,
passes repeat until nothing changes, and should they not settle, every merge
is taken as unknown.  A fact is only ever what holds on every run: where
nothing can be proven the generators do what is right at run time
(``unbroadcast``, ``zeros_like``, ``if_inexact``, ``add_adjoint``).
"""
from __future__ import annotations

import dataclasses
import itertools
import random
import operator
from collections import Counter
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable, Optional, Union

from ..memory import aliasing
from ..core import ir, language, runtime
from ..rules import registry as rules
from ..core.draws import is_draw
from ..core.errors import TransformError
from ..lowering.expressions import describe_callable, is_user_function, missing_rule
from ..core.kinds import (NUMBER, TRUTH, UNKNOWN, Array, Kind, Number, Sequence, Unknown, as_fact, broadcast_dims,
    callee_kind, constant_kind, dims_of, rank, reduced_dims)
from ..frontend.parse import is_generated

SCALAR = "scalar"
ShapeClass = Union[str, int, tuple]  # SCALAR, a number per class, or the dims of a known shape (_dims_class)
_ClassOf = Callable[[ir.Expr], Optional[ShapeClass]]  # the shape class of an operand, None where unknown


@dataclass
class Analysis:
    active: set[str]
    shape: dict[str, ShapeClass]
    uses: Counter = field(default_factory=Counter)
    varied: set[str] = field(default_factory=set)
    ndim: dict[str, int] = field(default_factory=dict)
    items: dict[str, tuple] = field(default_factory=dict)  # tuples: the kind of each item
    kinds: dict[str, Kind] = field(default_factory=dict)  # what is known of each value (kinds.py)
    inexact: set[str] = field(default_factory=set)  # arrays provably of floats: stores keep derivatives

    def kind_of(self, expr: ir.Expr) -> Kind:
        """What a callee is told of an argument (``kinds.callee_kind``): a number or truth value, an
        array's rank where it is known, a tuple of those, a string or None as a ``kinds.Constant`` (the
        callee is specialised on its value), else unknown."""
        constant = constant_kind(expr.value) if isinstance(expr, ir.Const) else None
        if constant is not None:
            return constant
        if isinstance(expr, ir.Display) and expr.kind == "tuple":  # (x, 2.0): a tuple of these kinds
            return callee_kind(self.fact(expr))
        rank = self.rank_of(expr)
        if rank == 0:
            return TRUTH if self.fact(expr) == TRUTH else NUMBER
        return Array(rank) if rank is not None else UNKNOWN

    def fact(self, expr: ir.Expr) -> Kind:
        """What is known of an operand (a ``kinds.Kind``)."""
        if isinstance(expr, ir.Var):
            return self.kinds.get(expr.name, UNKNOWN)
        if isinstance(expr, ir.Const):
            return _constant_kind(expr.value)
        if isinstance(expr, ir.Display):
            return Sequence(tuple(map(self.fact, expr.items)), expr.kind)
        return UNKNOWN

    def sequence_operation(self, call: ir.Call) -> bool:
        """True if ``call`` may concatenate or repeat tuples or lists (see ``may_be_sequence_operation``)."""
        return may_be_sequence_operation(call.fn, [self.fact(a) for a in call.args], call.args)

    def rank_of(self, expr: ir.Expr) -> Optional[int]:
        if isinstance(expr, ir.Var):
            return 0 if self.shape.get(expr.name) == SCALAR else self.ndim.get(expr.name)
        return 0 if self.shape_of(expr) == SCALAR else None

    def part_class(self, array: str, index: ir.Expr) -> Optional[ShapeClass]:
        """The shape class of ``array[index]`` where the index is of slices, numbers and new axes
        and every length it keeps is known (the class of dims, ``_dims_class``), else None."""
        dims = _sliced_dims(dims_of(self.kinds.get(array, UNKNOWN)), index,
                            lambda e: None if self.fact(e) == TRUTH else self.shape_of(e))
        if dims == ():
            return SCALAR
        return _dims_class(Array(len(dims), dims)) if dims is not None else None

    def shape_of(self, expr: ir.Expr) -> Optional[ShapeClass]:
        if isinstance(expr, ir.Var):
            return self.shape.get(expr.name)
        if isinstance(expr, ir.Const) and (isinstance(expr.value, (int, float)) or language.is_library_scalar(expr.value)):
            return SCALAR
        return None

    # -- the facts kept true through the passes that rewrite the function after the analysis --------
    # (pipeline._analysed; ``S2S_AD_CHECK_FACTS=1`` derives them again after each pass and compares)

    def with_checks_changed(self, dropped: Iterable[ir.Stmt] = (), added: Iterable[ir.Stmt] = ()) -> "Analysis":
        """The facts once the statements ``dropped`` are taken out of the function and ``added`` put in,
        all of them run-time checks, which bind no name and carry no derivative: only the counts of
        reads change."""
        dropped, added = list(dropped), list(added)
        if any(ir.targets_of(s) or ir.blocks(s) for s in dropped + added):
            raise ValueError("with_checks_changed: only statements that bind no name (run-time checks)")
        uses = Counter(self.uses)
        uses.subtract(_names_read_by(dropped))
        uses.update(_names_read_by(added))
        return dataclasses.replace(self, uses=+uses)

    def with_merged(self, same: dict[str, str], dropped: Iterable[ir.Stmt]) -> "Analysis":
        """The facts once each name ``m`` of ``same``, which holds the same value as ``same[m]`` (an
        operation computed twice, computed once by hoisting), is read as ``same[m]`` and its assignment
        (among ``dropped``) is gone.  The survivor is read where either was, so it is varied where
        either was and active (reaches the result) where either was: its own facts alone would leave
        it inactive when only the dropped one reached the result (``a = y * y`` unused, then
        ``np.sin(y * y)``), and the derivative through it would be lost.  Its kind and shape are
        the merged name's (the same operation on the same operands)."""
        dropped = list(dropped)
        uses = Counter(self.uses)
        uses.subtract(_names_read_by(dropped))
        active, varied = set(self.active), set(self.varied)
        for gone, survivor in same.items():
            uses[survivor] += uses.pop(gone, 0)
            if gone in active:
                active.add(survivor)
            if gone in varied:
                varied.add(survivor)
        gone_names = set(same)
        without = lambda facts: {k: v for k, v in facts.items() if k not in gone_names}
        return Analysis(active - gone_names, without(self.shape), +uses, varied - gone_names, without(self.ndim),
                        without(self.items), without(self.kinds), self.inexact - gone_names)


def _names_read_by(stmts: Iterable[ir.Stmt]) -> Counter:
    """How many times the statements read each name, their nested blocks included (as ``Analysis.uses``)."""
    return Counter(name for stmt in ir.walk(list(stmts)) for expr in ir.exprs_of(stmt)
                   for name in ir.names_read(expr))


def differentiable_operands(stmt: ir.Assign) -> list[tuple[str, ir.Expr]]:
    """The (rule input, operand) pairs through which derivatives flow."""
    call = stmt.value
    if not isinstance(call, ir.Call) or rules.is_nondifferentiable(call.fn):
        return []
    rule = rules.adjoint_rule(call.fn) or rules.tangent_rule(call.fn)
    if rule is None:  # the user's own function: every argument may carry a derivative
        return [(str(i), arg) for i, arg in enumerate(call.args)]
    bound = rules.bind_arguments(rule, call.args, call.kwargs)
    return [(name, bound[name]) for name in rule.differentiable_inputs() if not rules.is_default(bound[name])]


def underived_operands(call: ir.Call) -> list[tuple[str, ir.Expr]]:
    """The (rule input, operand) pairs of ``call`` whose derivative its rule does not give and does not
    declare zero (``zero_derivative=``, or read for the shape only: ``shape_only=``): a varied operand
    there would lose its derivative without a word."""
    if rules.is_nondifferentiable(call.fn):
        return []
    rule = rules.adjoint_rule(call.fn) or rules.tangent_rule(call.fn)
    if rule is None or not rules.is_package_template_file(rule.filename):
        # A user's own rule says what it means: an input with no d_ assignment gets no gradient
        # (zero), as docs/api.md promises; only s2s_ad's built-in rules are held to giving every one.
        return []
    shape_only = rules.fact(call.fn, "shape_only")
    exempt = set(rules.fact(call.fn, "zero_derivative", ())) | {
        rule.inputs[i] for i in ((shape_only,) if isinstance(shape_only, int) else shape_only or ())}
    differentiable = set(rule.differentiable_inputs())
    bound = rules.bind_arguments(rule, call.args, call.kwargs)
    return [(name, value) for name, value in bound.items()
            if name not in differentiable and name not in exempt and not rules.is_default(value)]


def guard_lost_derivatives(fn: ir.Function, varied: set[str]) -> ir.Function:
    """``fn`` with a run-time check before each call whose rule gives no derivative in an input where
    the argument depends on what is differentiated (``np.gradient(f, h)`` by ``h``,
    ``np.pad(x, 1, constant_values=c)`` by ``c``): a float there raises ``TransformError`` naming the
    line, not a derivative silently lost; an integer (an axis, a count from an int argument) passes.
    ``fn`` itself where no call needs one (the common case), and for generated code differentiated
    again and the helpers of s2s_ad's template modules it calls: the user's statements were checked
    when it was generated, and what it pops from its tape (a loop's constant ``ord``) reads as varied
    there.  A user's file that declares rules is checked as any other (docs/rules.md puts rules next to
    the code that calls them: exempting such files lost every check in them); a gradient's marks for the parameters it was not taken by (``runtime.derivative_lost_by``)
    become the check there where forward mode over it moves them (``jvp`` of ``grad(f)`` by ``c``)."""
    users = not (is_generated(fn.filename) or rules.is_package_template_file(fn.filename))

    def guarded(body: list[ir.Stmt]) -> list[ir.Stmt]:
        """``body`` with its checks (``body`` itself where it needs none)."""
        out: list[ir.Stmt] = []
        changed = False
        for stmt in body:
            if (isinstance(stmt, ir.Effect) and isinstance(stmt.value, ir.Call)
                    and stmt.value.fn is runtime.derivative_lost_by
                    and set(ir.names_read(stmt.value.args[0])) & varied):
                out.append(ir.Effect(ir.Call(runtime.check_no_derivative, stmt.value.args), stmt.line))
                changed = True
                continue
            if users and isinstance(stmt, ir.Assign) and isinstance(stmt.value, ir.Call):
                for name, operand in underived_operands(stmt.value):
                    if set(ir.names_read(operand)) & varied:
                        out.append(ir.Effect(ir.Call(runtime.check_no_derivative, (
                            operand, ir.Const(describe_callable(stmt.value.fn)), ir.Const(name),
                            ir.Const(fn.filename), ir.Const(stmt.line))), stmt.line))
                        changed = True
            nested = ir.with_blocks(stmt, guarded)
            changed = changed or nested is not stmt
            out.append(nested)
        return out if changed else body

    body = guarded(fn.body)
    return fn if body is fn.body else dataclasses.replace(fn, body=body)


def guard_lost_derivatives_kept(fn: ir.Function, facts: Analysis) -> tuple[ir.Function, Analysis]:
    """``guard_lost_derivatives`` as a pass after the analysis: the guarded function, and its facts
    (the checks it adds and those it replaces change only the counts of reads)."""
    guarded = guard_lost_derivatives(fn, facts.varied)
    if guarded is fn:
        return fn, facts
    before = {id(s): s for s in ir.walk(fn.body) if not ir.blocks(s)}
    after = {id(s): s for s in ir.walk(guarded.body) if not ir.blocks(s)}
    return guarded, facts.with_checks_changed(dropped=[s for i, s in before.items() if i not in after],
                                              added=[s for i, s in after.items() if i not in before])


def lost_derivative_parameters(fn: ir.Function, kind_of: Callable[[ir.Expr], Any],
                               callee_lost: Callable[[Any, tuple], dict]) -> dict[int, tuple]:
    """For a helper differentiated by all its parameters (a split adjoint): the parameters (by
    position) from which a float would reach a call whose rule gives no derivative in that input,
    itself or in a helper it calls, with where: (function, input, file, line).  The caller checks
    its argument there where that argument depends on what it differentiates (``guard_call``);
    the helper cannot tell, and refusing every float would refuse ``np.gradient(u, dx)`` with a
    constant ``dx``.  A function taking containers (``vjp`` of it) has one parameter per leaf, in the
    order of the flat arguments its generated code takes, so the positions are those of the leaves."""
    table = _flow_table(fn)
    lost: dict[int, tuple] = {}
    for index, param in enumerate(fn.params):
        site = _first_lost_site(fn, varied_names(fn, [param], table), kind_of, callee_lost)
        if site is not None:
            lost[index] = site
    return lost


def _first_lost_site(fn: ir.Function, varied: set[str], kind_of: Callable[[ir.Expr], Any],
                     callee_lost: Callable[[Any, tuple], dict]) -> Optional[tuple]:
    for stmt in ir.walk(fn.body):
        if not (isinstance(stmt, ir.Assign) and isinstance(stmt.value, ir.Call)):
            continue
        call = stmt.value
        for name, operand in underived_operands(call):
            if set(ir.names_read(operand)) & varied:
                return describe_callable(call.fn), name, fn.filename, stmt.line
        moving = [i for i, arg in enumerate(call.args) if set(ir.names_read(arg)) & varied]
        if moving and is_user_function(call.fn) and rules.adjoint_rule(call.fn) is None:
            # a helper the reverse sweep built (a call of constants, np.triu_indices(3), is not one)
            try:
                inner = callee_lost(call.fn, tuple(map(kind_of, call.args)))
            except TransformError:  # not built by the reverse sweep (its value does not reach the result)
                continue
            for i in moving:
                if i in inner:
                    return inner[i]
    return None


def lost_derivative_check(arg: ir.Expr, site: tuple, line: Optional[int]) -> ir.Effect:
    """The run-time check, in the caller, of an argument a helper would lose the derivative of."""
    function, name, filename, at = site
    return ir.Effect(ir.Call(runtime.check_no_derivative, (
        arg, ir.Const(function), ir.Const(name), ir.Const(filename), ir.Const(at))), line)


def _reads(exprs: Iterable[ir.Expr]) -> set[str]:
    return {name for e in exprs for name in ir.names_read(e)}


def _assignments(fn: ir.Function) -> list[Union[ir.Assign, ir.Store]]:
    """Statements that give a name a value: assignments, and stores (which change an array)."""
    return [s for s in ir.walk(fn.body) if isinstance(s, (ir.Assign, ir.Store))]


def _flows(stmt: Union[ir.Assign, ir.Store]) -> set[str]:
    """Names whose derivative flows into the value the statement sets."""
    if isinstance(stmt, ir.Store):
        return _reads([stmt.value])
    if isinstance(stmt.value, ir.Call):
        return _reads(e for _, e in differentiable_operands(stmt))
    return _reads([stmt.value])


def _target(stmt: Union[ir.Assign, ir.Store]) -> str:
    return stmt.array if isinstance(stmt, ir.Store) else stmt.target


def _flow_table(fn: ir.Function) -> list[tuple[str, set[str]]]:
    """(the name a statement sets, the names whose derivative flows into it), per statement, in order.
    A call with no rule whose truth value only an assertion tests (``assert np.allclose(y, 2 * x)``)
    carries no derivative anywhere: nothing flows into it, and it runs as a constant; so does a value
    the result does not depend on (``fn.derivative_free``, shift_invariance.py)."""
    constant = _checked_only_calls(fn) | fn.derivative_free
    return [(_target(s), set() if _target(s) in constant else _flows(s)) for s in _assignments(fn)]


def _checked_only_calls(fn: ir.Function) -> set[str]:
    """The values of calls with no rule that only an ``assert`` reads, as its test."""
    checked = _read_only_by_assertions(fn)
    if not checked:
        return checked
    return {s.target for s in ir.walk(fn.body) if isinstance(s, ir.Assign) and s.target in checked
            and isinstance(s.value, ir.Call) and missing_rule(s.value.fn) is not None
            and not private_draw(s.value.fn)}


def varied_names(fn: ir.Function, wrt: Iterable[str], table: Optional[list] = None) -> set[str]:
    """Values that depend on ``wrt``: those reachable from it along the flow table's edges
    (one visit per statement, however long a chain of loop-carried copies is)."""
    table = _flow_table(fn) if table is None else table
    readers: dict[str, list[str]] = {}
    for target, flows in table:
        for name in flows:
            readers.setdefault(name, []).append(target)
    return _reachable(set(wrt), readers)


def activity(fn: ir.Function, wrt: Iterable[str], table: Optional[list] = None,
             varied: Optional[set[str]] = None) -> set[str]:
    """Values that depend on ``wrt`` and reach the returned value."""
    table = _flow_table(fn) if table is None else table
    varied = varied_names(fn, wrt, table) if varied is None else varied
    sources: dict[str, list[str]] = {}
    for target, flows in table:
        sources.setdefault(target, []).extend(flows)
    useful = _reachable(set(ir.names_read(ir.returned(fn))), sources)
    return varied & useful


def _reachable(start: set[str], edges: dict[str, list[str]]) -> set[str]:
    """``start`` and every name reachable from it along ``edges``."""
    seen, stack = set(start), list(start)
    while stack:
        for successor in edges.get(stack.pop(), ()):
            if successor not in seen:
                seen.add(successor)
                stack.append(successor)
    return seen




# What a user function returns for arguments of given kinds (``kinds.callee_kind`` of its result's,
# with dims).  The pipeline provides it (it lowers and analyses the callee).
ResultKind = Callable[[Any, tuple], Kind]


def shape_classes(fn: ir.Function, kinds: dict[str, Any], result_kind: Optional[ResultKind] = None
                  ) -> tuple[dict[str, ShapeClass], dict[str, int], dict[str, tuple]]:
    """Each value's shape class (see the module docstring), the ranks known, and the kinds of
    the items of tuples: ``infer``'s facts in the form the generators read."""
    shape, kind = infer(fn, kinds, result_kind)
    return (shape,) + _ranks_and_items(kind)


def _ranks_and_items(kind: dict[str, Kind]) -> tuple[dict[str, int], dict[str, tuple]]:
    """The ranks of arrays of known rank, and the item kinds of tuples (as a callee is told them)."""
    ndim = {name: k.rank for name, k in kind.items() if isinstance(k, Array) and k.rank is not None}
    items = {name: tuple(callee_kind(item) for item in k.items) for name, k in kind.items()
             if isinstance(k, Sequence) and k.display == "tuple"}
    return ndim, items


def infer(fn: ir.Function, kinds: dict[str, Any], result_kind: Optional[ResultKind] = None
          ) -> tuple[dict[str, ShapeClass], dict[str, Kind]]:
    """Each value's shape class and ``Kind``, as a fixed point over loops and branches.

    A merge variable (a branch's result, a loop-carried value) gets the join
    of its sources' facts: one class only if every source has it, else a
    class of its own.  Loops are iterated, each pass in program order, the
    back edges' facts carried from the pass before, until a pass changes
    nothing.  Passes are bounded; should they not settle (they do: merges only
    ever widen), the facts are computed once more with every merge unknown,
    which holds whatever the loops do.
    """
    state = _Inference(fn, kinds, result_kind)
    if not any(isinstance(s, (ir.For, ir.While)) for s in ir.walk(fn.body)):
        return state.run_pass()  # every value is read after it is set: one pass settles all
    merges = {s.target for s in ir.walk(fn.body) if isinstance(s, ir.Assign) and s.merge}
    previous = None
    for _ in range(_pass_limit(len(merges))):
        current = state.run_pass()
        if current == previous:
            return current
        previous = current
    state.pessimistic = True
    return state.run_pass()


def _pass_limit(merges: int) -> int:
    """Passes enough to settle: each pass that changes something widens a merge or follows one."""
    return 2 * merges + 3


class _Inference:
    """One function's facts, recomputed by ``run_pass`` until they settle (see ``infer``)."""

    def __init__(self, fn: ir.Function, kinds: dict[str, Any], result_kind: Optional[ResultKind]) -> None:
        self.fn = fn
        self.params = {p: as_fact(kinds.get(p)) for p in fn.params}
        self.result_kind = result_kind
        self.counter = itertools.count()
        self.fresh_for: dict[object, int] = {}
        # merge target -> id(merge statement) -> (class, kind) of its source when last seen
        self.sources: dict[str, dict[int, tuple[ShapeClass, Kind]]] = {}
        self.widened: set[str] = set()  # merges whose sources disagree on the class: they never agree again
        self.pessimistic = False
        self.shape: dict[str, ShapeClass] = {}
        self.kind: dict[str, Kind] = {}
        self.shapes: dict[str, Any] = {}  # results of np.shape (tuples of numbers): the dims of the array
        self.lengths: dict[str, Any] = {}  # numbers that are an axis's length: its dim (n = x.shape[0])
        # numbers that are an axis's length plus a constant: (its dim, the constant) (n = x.shape[0] - 1)
        self.offsets: dict[str, tuple[Any, int]] = {}
        bound = Counter(t for stmt in ir.walk(fn.body) for t in ir.targets_of(stmt))
        self.bound_once = frozenset(name for name, count in bound.items() if count == 1)

    def fresh(self, key: object) -> int:
        """The class of its own that ``key`` (an IR object, or a tuple naming one) gets, the same in every pass."""
        key = key if isinstance(key, tuple) else id(key)
        if key not in self.fresh_for:
            self.fresh_for[key] = next(self.counter)
        return self.fresh_for[key]

    def class_of(self, expr: ir.Expr, owner: object) -> ShapeClass:
        if isinstance(expr, ir.Var):  # (a name not set in the function: a class of its own per read)
            return self.shape[expr.name] if expr.name in self.shape else self.fresh((id(owner), expr.name))
        if isinstance(expr, ir.Const) and _is_number_or_inert(expr.value):
            return SCALAR  # numbers; None and strings do not take part in broadcasting
        return self.fresh(expr)

    def kind_of(self, expr: ir.Expr) -> Kind:
        if isinstance(expr, ir.Var):
            return self.kind.get(expr.name, UNKNOWN)
        if isinstance(expr, ir.Const):
            return _constant_kind(expr.value)
        if isinstance(expr, ir.Display):
            return Sequence(tuple(map(self.kind_of, expr.items)), expr.kind)
        return UNKNOWN

    def told(self, arg: ir.Expr, owner: object) -> Kind:
        """What a user function called here is told of the argument ``arg`` to find its result's kind:
        a string or None's value, a number or truth value, else ``kinds.callee_kind`` with the dims."""
        constant = constant_kind(arg.value) if isinstance(arg, ir.Const) else None
        if constant is not None:
            return constant
        if self.class_of(arg, owner) == SCALAR:
            return TRUTH if self.kind_of(arg) == TRUTH else NUMBER
        return callee_kind(self.kind_of(arg), dims=True)

    def set(self, target: str, kind: Kind, owner: object) -> None:
        self.kind[target] = kind
        self.shape[target] = SCALAR if isinstance(kind, Number) else _dims_class(kind) or self.fresh(owner)

    def index_class(self, expr: ir.Expr, owner: object) -> Optional[ShapeClass]:
        """``class_of`` an index part, where a truth value is no number: ``a[flag]`` adds an axis."""
        return None if self.kind_of(expr) == TRUTH else self.class_of(expr, owner)

    def record_length(self, target: str, dims: Any, axis: Any) -> None:
        """``target`` is the length of axis ``axis`` of an array of these dims."""
        if dims and isinstance(axis, int) and not isinstance(axis, bool) and -len(dims) <= axis < len(dims) \
                and dims[axis] is not None:
            self.lengths[target] = dims[axis]

    def shifted_length(self, stmt: ir.Assign) -> None:
        """``m = n + 1``, ``m = n - 1`` or ``m = 1 + n`` of a length ``n`` (or of a length plus a
        constant), bound once: ``m`` is that length plus the sum of the integer constants, and the
        length itself where they cancel.  So ``n = len(x) - 1`` then ``np.zeros(n + 1)`` has x's
        length, and no run-time ``unbroadcast`` is needed against x.  Only a sum of exactly zero
        gives a symbol back (a symbol's length is not 1, which ``a - 1 + 2`` need not keep)."""
        value = stmt.value
        if stmt.target not in self.bound_once or not isinstance(value, ir.Call) or value.kwargs \
                or len(value.args) != 2:
            return
        sign = {operator.add: 1, operator.sub: -1}.get(value.fn)
        if sign is None:
            return
        base, step = value.args
        if value.fn is operator.add and isinstance(base, ir.Const):
            base, step = step, base  # 1 + n
        if not (isinstance(base, ir.Var) and isinstance(step, ir.Const) and type(step.value) is int):
            return
        known = (self.lengths[base.name], 0) if base.name in self.lengths else self.offsets.get(base.name)
        if known is None or known[0] is None:
            return
        dim, offset = known[0], known[1] + sign * step.value
        if isinstance(dim, int):  # a length of 1 plus a constant: a length again only if 1
            if dim + offset == 1:
                self.lengths[stmt.target] = 1
        elif offset == 0:
            self.lengths[stmt.target] = dim
        else:
            self.offsets[stmt.target] = (dim, offset)

    def length_dims(self, shape: ir.Expr) -> Any:
        """The dims of an array made with this shape argument (``np.zeros((n, 1))``, ``np.zeros(x.shape)``):
        an axis is 1 for the constant 1, the length a number holds where it is one (``n = x.shape[0]``),
        else unknown."""
        def length(expr: ir.Expr) -> Any:
            if isinstance(expr, ir.Const):
                return 1 if expr.value == 1 and not isinstance(expr.value, bool) else None
            return self.lengths.get(expr.name) if isinstance(expr, ir.Var) else None
        if isinstance(shape, ir.Display):
            return tuple(map(length, shape.items))
        if isinstance(shape, ir.Var) and shape.name in self.shapes:
            return self.shapes[shape.name]
        if isinstance(shape, ir.Var) and shape.name in self.lengths or isinstance(shape, ir.Const):
            return (length(shape),)
        return None

    def dims(self, expr: ir.Expr, owner: object) -> Any:
        """``kinds.dims_of`` an operand: () for a number, None where unknown."""
        return () if self.class_of(expr, owner) == SCALAR else dims_of(self.kind_of(expr))

    def run_pass(self) -> tuple[dict[str, ShapeClass], dict[str, Kind]]:
        self.shape, self.kind, self.shapes, self.lengths, self.offsets = {}, {}, {}, {}, {}
        for p, kind in self.params.items():
            self.set(p, kind, ("parameter", p))
        for stmt in ir.walk(self.fn.body):
            if isinstance(stmt, ir.For):
                self.set(stmt.index, NUMBER, stmt)  # the index of a range
            elif isinstance(stmt, ir.Assign) and stmt.merge:
                self.merge(stmt)
            elif isinstance(stmt, ir.Assign):
                self.assignment(stmt)
                self.shifted_length(stmt)
        return dict(self.shape), dict(self.kind)

    def merge(self, stmt: ir.Assign) -> None:
        """``m = v`` on one path: ``m`` holds what holds on every path seen so far."""
        target = stmt.target
        seen = self.sources.setdefault(target, {})
        seen[id(stmt)] = (self.class_of(stmt.value, stmt), self.kind_of(stmt.value))
        if self.pessimistic:
            self.kind[target], self.shape[target] = UNKNOWN, self.fresh(("merge", target))
            return
        classes = {c for c, _ in seen.values()}
        if len(classes) > 1:
            self.widened.add(target)
        self.shape[target] = self.fresh(("merge", target)) if target in self.widened else classes.pop()
        kinds = [k for _, k in seen.values()]
        joined = kinds[0]
        for k in kinds[1:]:
            joined = joined.join(k)
        self.kind[target] = joined

    def assignment(self, stmt: ir.Assign) -> None:
        target, value = stmt.target, stmt.value
        if not isinstance(value, ir.Call):
            self.kind[target] = self.kind_of(value)
            self.shape[target] = self.class_of(value, stmt)
            return
        fn, args = value.fn, value.args
        if fn is operator.getitem and isinstance(args[0], ir.Var) and args[0].name in self.shapes \
                and isinstance(args[1], ir.Const):
            self.set(target, NUMBER, stmt)  # n = x.shape[0]
            self.record_length(target, self.shapes[args[0].name], args[1].value)
        elif fn is operator.getitem and isinstance(sequence := self.kind_of(args[0]), Sequence):
            self.set(target, _item_kind(sequence, args[1]), stmt)
        elif self.result_kind is not None and is_user_function(fn):
            result = self.result_kind(fn, tuple(self.told(a, stmt) for a in args))
            self.set(target, as_fact(result), stmt)
        elif fn is operator.getitem:
            rank = _indexed_rank(value, self.kind, lambda e: self.index_class(e, stmt))
            sliced = _sliced_dims(self.dims(args[0], stmt), args[1], lambda e: self.index_class(e, stmt))
            if rank is None and sliced is not None:  # a[:, None], a[1:, 0], a[..., k]
                self.set(target, NUMBER if sliced == () else Array(len(sliced), sliced), stmt)
            elif rank is None and isinstance(self.kind_of(args[0]), Array):
                self.set(target, Array(None), stmt)  # a part of an array: numbers, whatever its rank
            elif rank is not None and rank > 0:  # a[i], a[i, j]: the axes the numbers do not index
                whole = self.dims(args[0], stmt)
                self.set(target, Array(rank, whole[len(whole) - rank:] if whole else None), stmt)
            else:
                self.set(target, UNKNOWN if rank is None else NUMBER, stmt)
        elif rules.fact(fn, "counts") or _whole_reduction(value) or (fn is round and self.kind_of(args[0]) == NUMBER):
            self.set(target, TRUTH if rules.fact(fn, "compares") else NUMBER, stmt)  # bool(x)
            if rules.fact(fn, "axis_length") is not None and len(args) == 1:  # len(x)
                self.record_length(target, self.dims(args[0], stmt), rules.fact(fn, "axis_length"))
        elif fn is language.shape:
            self.set(target, UNKNOWN, stmt)
            self.shapes[target] = self.dims(args[0], stmt) if args else None
        elif count := rules.result_items(fn, *_constant_arguments(value)):  # a tuple a rule declares
            self.set(target, Sequence((UNKNOWN,) * count, "tuple"), stmt)  # (np.linalg.eigh): items of unknown kinds
        elif may_be_sequence_operation(fn, [self.kind_of(a) for a in args], args):
            # a tuple or list concatenated or repeated, or operands that may be ones
            self.set(target, _sequence_result(fn, [self.kind_of(a) for a in args], args), stmt)
        elif rules.is_elementwise(fn):
            self.elementwise(stmt, value)
        else:
            rank = _made_rank(value, self.kind, lambda e: self.class_of(e, stmt))
            if rank is None and rules.fact(fn, "result_rank") and not value.kwargs:  # declared (np.matmul)
                rank = _declared_rank(fn, [0 if self.class_of(a, stmt) == SCALAR else self.kind_of(a) for a in args])
            numeric = _returns_numeric(fn)
            dims = self.result_dims(value, stmt)
            if dims is not None:
                self.set(target, NUMBER if dims == () else Array(len(dims), dims), stmt)
            else:
                self.set(target, Array(rank) if rank is not None or numeric else UNKNOWN, stmt)

    def result_dims(self, call: ir.Call, stmt: ir.Assign) -> Any:
        """The dims of a call's result where the templates say how to tell (None otherwise):
        a reduction over constant axes (declared ``reduction=True``), an array made like its
        first argument (``shape_from="like"``), or the declared ``result_dims`` of the
        positional arguments' dims (``np.matmul``, ``np.transpose``)."""
        fn, args = call.fn, call.args
        if rules.fact(fn, "reduction") and args:
            rule = rules.adjoint_rule(fn)
            if rule is None:
                return None
            try:
                bound = rules.bind_arguments(rule, args, call.kwargs)
            except rules.ArgumentMismatch:
                return None
            axis, keepdims = bound.get("axis"), bound.get("keepdims")
            if axis is None or keepdims is None or set(bound) - {rule.inputs[0], "axis", "keepdims", "dtype"} - {
                    name for name, v in bound.items() if rules.is_default(v)}:
                return None  # (np.std's ddof, np.average's weights: the adjoint rule shapes those)
            constants = [_constant_value(v) for v in (axis, keepdims)]
            if rules.NOT_CONSTANT in constants:
                return None
            return reduced_dims(self.dims(args[0], stmt), *constants)
        if rules.fact(fn, "shape_from") == "like" and len(args) == 1 and not call.kwargs:
            dims = self.dims(args[0], stmt)
            return dims if dims else None
        if rules.fact(fn, "shape_from") == "argument" and args:
            dims = self.length_dims(args[0])
            return dims if dims and any(d is not None for d in dims) else None
        declared = rules.fact(fn, "result_dims")
        if declared is not None:
            try:
                return declared(*(self.dims(a, stmt) for a in args), **{k: self.dims(v, stmt) for k, v in call.kwargs})
            except TypeError:  # keywords it does not take: nothing known
                return None
        return None

    def elementwise(self, stmt: ir.Assign, value: ir.Call) -> None:
        """A broadcast result (``stmt`` assigns ``value``): the operands' class if they all share it
        (numbers aside)."""
        operands = list(value.args) + [v for _, v in value.kwargs]
        classes = {self.class_of(a, stmt) for a in operands} - {SCALAR}
        ranks = [0 if self.class_of(a, stmt) == SCALAR else rank(self.kind_of(a)) for a in operands]
        if not classes:  # numbers: a truth value where it compares or takes one in (flag & other, flag + 1)
            truth = rules.fact(value.fn, "compares") or any(self.kind_of(a) == TRUTH for a in operands)
            self.set(stmt.target, TRUTH if truth else NUMBER, stmt)
            return
        known = [r for r in ranks if r is not None]
        kind = Array(max(known) if len(known) == len(ranks) else None,
                     broadcast_dims(*(self.dims(a, stmt) for a in operands)))  # numeric in any case
        self.kind[stmt.target] = kind
        self.shape[stmt.target] = classes.pop() if len(classes) == 1 else _dims_class(kind) or self.fresh(stmt)


def _returns_numeric(fn: Any) -> bool:
    """True for functions that return a number or an array: a ufunc with one output, or declared
    ``numeric=True`` in templates/ (NumPy's) and not ``returns_sequence=True`` (np.linalg.eigh, np.split)."""
    if language.is_ufunc(fn):
        return fn.nout == 1
    facts = rules.facts_of(fn)
    return bool(facts.get("numeric")) and not facts.get("returns_sequence")


def may_be_sequence_operation(fn: Any, kinds: list[Kind], args: tuple) -> bool:
    """True unless ``fn(*args)`` is provably arithmetic: ``a + b`` concatenates when both are tuples
    or lists, ``a * n`` repeats when one is and the other an integer."""
    if not rules.fact(fn, "joins_sequences") or len(kinds) != 2:
        return False
    numeric = [isinstance(k, (Number, Array)) for k in kinds]
    if fn is operator.add:
        return not any(numeric)
    integral = [isinstance(k, (Number, Unknown)) and not (isinstance(a, ir.Const) and isinstance(a.value, float))
                for k, a in zip(kinds, args)]
    return (not numeric[0] and integral[1]) or (not numeric[1] and integral[0])


def _dims_class(kind: Kind) -> Optional[tuple]:
    """The shape class of an array whose every axis's length is known (``kinds.Array.dims``):
    the dims themselves, so that arrays of equal dims share a class."""
    dims = kind.dims if isinstance(kind, Array) and kind.shape_known else None
    return None if dims is None else ("dims",) + dims


def _constant_value(expr: Any) -> Any:
    """The value of a bound argument (a default, a constant or a tuple of constants), else
    ``rules.NOT_CONSTANT``."""
    if rules.is_default(expr):
        return expr.value
    if isinstance(expr, ir.Const):
        return expr.value
    items = _constant_items(expr) if isinstance(expr, ir.Display) and expr.kind == "tuple" else None
    return rules.NOT_CONSTANT if items is None else items


def _constant_items(display: ir.Display) -> Optional[tuple]:
    """The values of a display's items where every item is a constant, else None."""
    constants = [item for item in display.items if isinstance(item, ir.Const)]
    return tuple(c.value for c in constants) if len(constants) == len(display.items) else None


def _is_number_or_inert(value: Any) -> bool:
    return value is None or isinstance(value, (bool, int, float, complex, str)) or language.is_library_scalar(value)


def _constant_arguments(call: ir.Call) -> tuple[tuple, tuple]:
    """The arguments of ``call`` as values (``rules.NOT_CONSTANT`` for one that is not a constant,
    nor a display of constants: ``[1, 3]``), for ``rules.result_items``."""
    def value(expr: ir.Expr) -> Any:
        if isinstance(expr, ir.Const):
            return expr.value
        if isinstance(expr, ir.Display) and expr.kind in ("tuple", "list"):
            items = _constant_items(expr)
            if items is not None:
                return items if expr.kind == "tuple" else list(items)
        return rules.NOT_CONSTANT
    return tuple(value(a) for a in call.args), tuple((name, value(v)) for name, v in call.kwargs)


def _constant_kind(value: Any) -> Kind:
    if language.is_truth_value(value):
        return TRUTH
    if isinstance(value, (int, float, complex)) or language.is_library_scalar(value):
        return NUMBER
    if language.is_array_value(value):
        return Array(value.ndim)
    if isinstance(value, (tuple, list)):
        return Sequence(tuple(map(_constant_kind, value)), "tuple" if isinstance(value, tuple) else "list")
    return UNKNOWN


def _item_kind(sequence: Kind, index: ir.Expr) -> Kind:
    """The kind of ``s[k]`` (an item) or ``s[i:j]`` (a shorter sequence) for constant indices."""
    if not isinstance(sequence, Sequence):
        return UNKNOWN
    n = len(sequence.items)
    if isinstance(index, ir.Const) and isinstance(index.value, int) and not isinstance(index.value, bool):
        return sequence.items[index.value] if -n <= index.value < n else UNKNOWN
    bounds = _constant_slice(index)
    if bounds is not None:
        return Sequence(tuple(sequence.items[slice(*bounds)]), sequence.display)
    if not isinstance(index, (ir.Slice, ir.Display)) and sequence.items \
            and all(item == sequence.items[0] for item in sequence.items):
        return sequence.items[0]  # xs[i] of items all alike (an index out of range raises)
    return UNKNOWN


def _constant_slice(index: ir.Expr) -> Optional[tuple]:
    """``(start, stop, step)`` of a slice whose parts are all constants (or absent), else None."""
    if not isinstance(index, ir.Slice):
        return None
    parts: list[Optional[int]] = []
    for part in (index.lower, index.upper, index.step):
        if part is None or (isinstance(part, ir.Const) and part.value is None):
            parts.append(None)
        elif isinstance(part, ir.Const) and isinstance(part.value, int) and not isinstance(part.value, bool):
            parts.append(part.value)
        else:
            return None
    return tuple(parts)


def _sequence_result(fn: Any, kinds: list[Kind], args: tuple) -> Kind:
    """The kind of ``a + b`` or ``a * n`` where an operand is (or may be) a tuple or list."""
    first, second = kinds
    if (fn is operator.add and isinstance(first, Sequence) and isinstance(second, Sequence)
            and first.display == second.display):
        return Sequence(first.items + second.items, first.display)
    if fn is operator.mul:
        for seq, count in ((0, 1), (1, 0)):
            sequence, times = kinds[seq], args[count]
            if isinstance(sequence, Sequence) and isinstance(times, ir.Const) \
                    and isinstance(times.value, int) and not isinstance(times.value, bool):
                return Sequence(sequence.items * max(times.value, 0), sequence.display)
    return UNKNOWN


def _float_arrays(fn: ir.Function) -> set[str]:
    """Arrays provably of floats: made by ``np.zeros(shape)`` and the like, with no dtype.

    A store into any other array (``np.arange(4)``, ``np.zeros(n, dtype=int)``, ``x.astype(int)``,
    an argument, an array carried through a loop) keeps the derivative only if the array's dtype,
    checked at run time, is inexact: NumPy truncates a float stored into integers.  Which calls
    make floats, and with how many arguments, is declared ``makes_floats=`` in templates/.
    """
    return {s.target for s in ir.walk(fn.body) if isinstance(s, ir.Assign) and not s.merge
            and isinstance(s.value, ir.Call) and not s.value.kwargs
            and len(s.value.args) == rules.fact(s.value.fn, "makes_floats", -1)}


def _whole_reduction(call: ir.Call) -> bool:
    """``np.sum(x)`` and its siblings (declared ``reduction=True``) with no axis and no keepdims: one number."""
    return bool(rules.fact(call.fn, "reduction")) and len(call.args) == 1 and not call.kwargs


def _declared_rank(fn: Any, kinds: list) -> Optional[int]:
    """The result's rank by the ``result_rank`` fact of ``fn``, given its arguments' kinds (0 for a number)."""
    ranks = [k if k == 0 else rank(k) for k in kinds]
    return None if None in ranks else rules.fact(fn, "result_rank")(*ranks)


def _made_rank(call: ir.Call, kind: dict[str, Kind], class_of: _ClassOf) -> Optional[int]:
    """The rank of an array made by ``np.zeros(shape)`` or ``np.zeros_like(a)``, if known."""
    if not call.args:
        return None
    first = call.args[0]
    shaped = rules.fact(call.fn, "shape_from")  # declared in templates/: "argument" (np.zeros) or "like"
    if shaped == "argument":
        if isinstance(first, ir.Display):
            return len(first.items)
        return 1 if class_of(first) == SCALAR else None
    if shaped == "like" and isinstance(first, ir.Var):
        return 0 if class_of(first) == SCALAR else rank(kind.get(first.name, UNKNOWN))
    if call.fn is language.arange:
        return 1
    return None


def _indexed_rank(call: ir.Call, kind: dict[str, Kind], class_of: _ClassOf) -> Optional[int]:
    """The rank of ``a[index]`` when ``a``'s rank is known and the index is numbers only."""
    array, index = call.args
    known = rank(kind.get(array.name, UNKNOWN)) if isinstance(array, ir.Var) else None
    if not isinstance(array, ir.Var) or not isinstance(kind.get(array.name), Array) or not known:
        return None
    parts = ir.index_parts(index)
    if not all(not isinstance(p, (ir.Slice, ir.Display)) and class_of(p) == SCALAR
               and not (isinstance(p, ir.Const) and (p.value is None or p.value is Ellipsis)) for p in parts):
        return None
    if isinstance(index, ir.Const) and language.is_array_value(index.value):
        return None
    left = known - len(parts)
    return left if left >= 0 else None


def _sliced_dims(dims: Any, index: ir.Expr, class_of: _ClassOf) -> Any:
    """The dims of ``a[index]`` for an index of slices, ``None`` (a new axis of length 1),
    ``...`` and numbers: a whole slice keeps the axis's length, another slice makes it unknown, a
    number takes the axis away.  None for any other index (arrays, masks, booleans) or where the
    array's rank is unknown."""
    if dims is None or not dims:
        return None
    parts = ir.index_parts(index)
    if isinstance(index, ir.Const) and not (index.value is None or index.value is Ellipsis
                                            or (isinstance(index.value, int) and not isinstance(index.value, bool))):
        return None
    ellipses = [p for p in parts if isinstance(p, ir.Const) and p.value is Ellipsis]
    taking = [p for p in parts if not (isinstance(p, ir.Const) and (p.value is None or p.value is Ellipsis))]
    if len(ellipses) > 1 or len(taking) > len(dims):
        return None
    result, axis = [], 0
    for part in parts:
        if isinstance(part, ir.Const) and part.value is Ellipsis:
            skipped = len(dims) - len(taking)
            result.extend(dims[axis:axis + skipped])
            axis += skipped
        elif isinstance(part, ir.Const) and part.value is None:
            result.append(1)
        elif isinstance(part, ir.Slice):
            whole = all(p is None or (isinstance(p, ir.Const) and p.value is None)
                        for p in (part.lower, part.upper, part.step))
            result.append(dims[axis] if whole else None)
            axis += 1
        elif class_of(part) == SCALAR and not (isinstance(part, ir.Const) and not isinstance(part.value, int)) \
                and not (isinstance(part, ir.Const) and isinstance(part.value, bool)):
            axis += 1  # a number: the axis goes
        else:
            return None
    return tuple(result) + tuple(dims[axis:])


def analyse(fn: ir.Function, wrt: Iterable[str], kinds: dict[str, Any],
            result_kind: Optional[ResultKind] = None) -> Analysis:
    uses = _names_read_by(fn.body)
    wrt = list(wrt)
    shape, kind = infer(fn, kinds, result_kind)
    ndim, items = _ranks_and_items(kind)
    table = _flow_table(fn)  # computed once: both fixed points walk it several times
    varied = varied_names(fn, wrt, table)
    return Analysis(activity(fn, wrt, table, varied), shape, uses, varied, ndim, items, kind, _float_arrays(fn))


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
                f"(a new list)", filename=fn.filename, line=update.line, column=update.column)
        if array:
            raise TransformError(
                f"the in-place update of {update.name}", f"{update.name} is {update.shared}, and NumPy would "
                f"change that array too; write {update.name} = {update.name} + ... (a new array), or copy it "
                f"first", filename=fn.filename, line=update.line, column=update.column)
        if update.guard is not None and _proven_number(update, facts, kinds, definitions):
            dropped.append(update.guard)
    return _without_checks(fn, facts, dropped)


def _without_checks(fn: ir.Function, facts: Analysis, dropped: list[ir.Stmt]) -> tuple[ir.Function, Analysis]:
    """``fn`` without the run-time checks ``dropped`` (found unneeded), and its facts then (a check
    lowering left out, on a path it dropped, changes nothing)."""
    present = {id(s) for s in ir.walk(fn.body)}
    dropped = list({id(s): s for s in dropped if id(s) in present}.values())
    if not dropped:
        return fn, facts
    body = ir.replace_statements(fn.body, dict.fromkeys(map(id, dropped)))
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


def _read_only_by_assertions(fn: ir.Function) -> set[str]:
    """The names whose every reader is an ``assert`` (``runtime.check_assertion``) as its test."""
    readers: dict[str, set[bool]] = {}
    for stmt in ir.walk(fn.body):
        call = stmt.value if isinstance(stmt, ir.Effect) else None
        checked = call.args[0].name if isinstance(call, ir.Call) and call.fn is runtime.check_assertion \
            and isinstance(call.args[0], ir.Var) else None
        for expr in ir.exprs_of(stmt):
            for name in ir.names_read(expr):
                readers.setdefault(name, set()).add(name == checked and expr is call)
    return {name for name, tests in readers.items() if tests == {True}}


def private_draw(fn: Any) -> bool:
    """A draw from a generator object other than the global ones (``np.random.*``, ``random.*``),
    held as a bound method (``RNG.normal``), or made through ``runtime.draw`` (``rng.normal()``)."""
    if fn is runtime.draw:
        return True
    owner = getattr(fn, "__self__", None)
    if isinstance(owner, random.Random):
        return owner is not random._inst
    if language.is_generator_object(owner):
        return not language.is_global_generator(owner)
    return False


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
    replaced: dict[int, Any] = {}  # id(statement) -> None (dropped), or what takes its place
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
                replaced[id(read.store)] = None
                replaced[id(read.retake)] = ir.Assign(read.retake.target, read.number, read.line)
            elif rank is None and rebound:  # a row (a view: written through) or one number, as NumPy decides
                replaced[id(read.store)] = None
                replaced[id(read.retake)] = _updated_by_rank(read, taken)
            if read.guard is not None and (rank is not None or rebound):
                dropped.append(read.guard)
            continue
        parts = [index_part(p, facts) for p in read.index]
        view = aliasing.indexed_view(parts, facts.rank_of(ir.Var(read.array)))
        if view is None and read.retake is not None and set(parts) == {aliasing.INTEGER}:
            # B[0] of a B whose rank the kinds do not know: a row (a view) or one number (a copy),
            # chosen where it runs by NumPy's own rule
            replaced[id(read.retake)] = _chosen_by_rank(read, taken)
            continue
        if view is None or (view and read.retake is None):
            raise TransformError(f"reading {read.name} after {read.array} was written", read.hint,
                                 filename=fn.filename, line=read.line)
        if read.retake is not None and read.kept is not None and not view:  # a copy: the value taken before
            replaced[id(read.retake)] = None
            kept[read.retake.target] = read.kept
    if not replaced:
        return _without_checks(fn, facts, dropped)
    replaced.update(dict.fromkeys(map(id, dropped)))
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
