"""Stage 3: facts about an SSA function that the generators need.

Input: an ``ir.Function`` in SSA form, the parameters to differentiate, and
what is known of each parameter's kind (``"scalar"``, ``"array"`` or
unknown).  Output: an ``Analysis`` with

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
  ``np.zeros_like(a)``, ``np.copy(a)``, and elements read from them).
"""
from __future__ import annotations

import itertools
import random
import operator
from collections import Counter
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable, Optional, Union

import numpy as np

from . import ir, rules
from .errors import TransformError
from .parse import is_generated
from .expressions import describe_callable, is_user_function, missing_rule

SCALAR = "scalar"
ShapeClass = Union[str, int]


@dataclass
class Analysis:
    active: set[str]
    shape: dict[str, ShapeClass]
    uses: Counter = field(default_factory=Counter)
    varied: set[str] = field(default_factory=set)
    ndim: dict[str, int] = field(default_factory=dict)
    items: dict[str, tuple] = field(default_factory=dict)  # tuples: the kind of each item

    def kind_of(self, expr: ir.Expr) -> Optional[str]:
        """What a callee is told of an argument: "scalar", "array<N>" when the rank is known, else None."""
        rank = self.rank_of(expr)
        if rank == 0:
            return "scalar"
        return f"array{rank}" if rank is not None else None

    def rank_of(self, expr: ir.Expr) -> Optional[int]:
        if isinstance(expr, ir.Var):
            return 0 if self.shape.get(expr.name) == SCALAR else self.ndim.get(expr.name)
        return 0 if self.shape_of(expr) == SCALAR else None

    def shape_of(self, expr: ir.Expr) -> Optional[ShapeClass]:
        if isinstance(expr, ir.Var):
            return self.shape.get(expr.name)
        if isinstance(expr, ir.Const) and isinstance(expr.value, (int, float, np.generic)):
            return SCALAR
        return None


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


def _reads(exprs: Iterable[ir.Expr]) -> set[str]:
    return {name for e in exprs for name in ir.names_read(e)}


def _assignments(fn: ir.Function) -> list:
    """Statements that give a name a value: assignments, and stores (which change an array)."""
    return [s for s in ir.walk(fn.body) if isinstance(s, (ir.Assign, ir.Store))]


def _flows(stmt: ir.Stmt) -> set[str]:
    """Names whose derivative flows into the value the statement sets."""
    if isinstance(stmt, ir.Store):
        return _reads([stmt.value])
    if isinstance(stmt.value, ir.Call):
        return _reads(e for _, e in differentiable_operands(stmt))
    return _reads([stmt.value])


def _target(stmt: ir.Stmt) -> str:
    return stmt.array if isinstance(stmt, ir.Store) else stmt.target


def _flow_table(fn: ir.Function) -> list[tuple[str, set[str]]]:
    """(the name a statement sets, the names whose derivative flows into it), per statement, in order."""
    return [(_target(s), _flows(s)) for s in _assignments(fn)]


def varied_names(fn: ir.Function, wrt: Iterable[str], table: Optional[list] = None) -> set[str]:
    """Values that depend on ``wrt`` (a fixed point over loops)."""
    table = _flow_table(fn) if table is None else table
    varied = set(wrt)
    changed = True
    while changed:
        changed = False
        for target, flows in table:
            if target not in varied and flows & varied:
                varied.add(target)
                changed = True
    return varied


def activity(fn: ir.Function, wrt: Iterable[str], table: Optional[list] = None,
             varied: Optional[set[str]] = None) -> set[str]:
    """Values that depend on ``wrt`` and reach the returned value (fixed points over loops)."""
    table = _flow_table(fn) if table is None else table
    varied = varied_names(fn, wrt, table) if varied is None else varied
    useful = set(ir.names_read(fn.body[-1].value))
    changed = True
    while changed:
        changed = False
        for target, flows in reversed(table):
            if target in useful:
                new = flows - useful
                if new:
                    useful |= new
                    changed = True
    return varied & useful


# Functions that return one number whatever their argument.
_COUNTS = {len, int, round, bool, np.size, np.ndim}
# Array constructors whose first argument is a shape, and those shaped like their first argument.
_SHAPED_BY_ARGUMENT = {np.zeros, np.ones, np.empty, np.full}
_SHAPED_LIKE_ARGUMENT = {np.zeros_like, np.ones_like, np.empty_like, np.full_like, np.copy}


# What a user function returns for arguments of given kinds: "scalar", "array<N>", a tuple of
# those, or None (unknown).  The pipeline provides it (it lowers and analyses the callee).
ResultKind = Callable[[Any, tuple], Any]


def shape_classes(fn: ir.Function, kinds: dict[str, Optional[str]], result_kind: Optional[ResultKind] = None
                  ) -> tuple[dict[str, ShapeClass], dict[str, int], dict[str, tuple]]:
    """Assign each value a shape class (see the module docstring), the ranks known, and the
    kinds of the items of tuples.

    Merge variables get their sources' class when all sources agree; loops
    are iterated until the classes settle.  A call of the user's own function
    takes the kind ``result_kind`` reports for it.
    """
    counter = itertools.count()
    fresh_for: dict[int, int] = {}

    def fresh(key: object) -> int:
        if id(key) not in fresh_for:
            fresh_for[id(key)] = next(counter)
        return fresh_for[id(key)]

    shape: dict[str, ShapeClass] = {}
    ndim: dict[str, int] = {}  # known ranks of arrays, so that reading one element gives a number
    for p in fn.params:
        kind = kinds.get(p) or ""
        shape[p] = SCALAR if kind == "scalar" else fresh(p)
        if kind[5:].isdigit():
            ndim[p] = int(kind[5:])

    def class_of(expr: ir.Expr, owner: object) -> ShapeClass:
        if isinstance(expr, ir.Var):
            return shape[expr.name] if expr.name in shape else fresh(owner)
        if isinstance(expr, ir.Const) and not isinstance(expr.value, np.ndarray):
            return SCALAR  # numbers; None and strings do not take part in broadcasting
        return fresh(expr)

    items: dict[str, tuple] = {}
    shapes: set[str] = set()  # results of np.shape: tuples of numbers

    def kind_of(expr: ir.Expr, owner: object) -> Any:
        if class_of(expr, owner) == SCALAR:
            return "scalar"
        if isinstance(expr, ir.Var) and expr.name in items:
            return items[expr.name]
        if isinstance(expr, ir.Var) and expr.name in ndim:
            return f"array{ndim[expr.name]}"
        return None

    def set_kind(target: str, kind: Any, owner: object) -> None:
        shape[target] = SCALAR if kind == "scalar" else fresh(owner)
        if isinstance(kind, tuple):
            items[target] = kind
        elif isinstance(kind, str) and kind[5:].isdigit():
            ndim[target] = int(kind[5:])

    # Without loops every value is read after it is set: one pass in program order settles all classes.
    loops = any(isinstance(s, (ir.For, ir.While)) for s in ir.walk(fn.body))
    for _ in range(4 if loops else 1):
        before = dict(shape)
        sources: dict[str, set] = {}
        ranks: dict[str, set] = {}
        for stmt in ir.walk(fn.body):
            if isinstance(stmt, ir.For):
                shape[stmt.index] = SCALAR
            if not isinstance(stmt, ir.Assign):
                continue
            value = stmt.value
            if stmt.merge:
                sources.setdefault(stmt.target, set()).add(class_of(value, stmt))
                found = sources[stmt.target]
                shape[stmt.target] = next(iter(found)) if len(found) == 1 else fresh(stmt.target)
                rank = ndim.get(value.name) if isinstance(value, ir.Var) else None
                ranks.setdefault(stmt.target, set()).add(rank)
                if len(ranks[stmt.target]) == 1 and rank is not None:  # every source agrees so far
                    ndim[stmt.target] = rank
                else:
                    ndim.pop(stmt.target, None)
            elif isinstance(value, ir.Call) and value.fn is operator.getitem and isinstance(value.args[0], ir.Var) \
                    and value.args[0].name in shapes and isinstance(value.args[1], ir.Const):
                shape[stmt.target] = SCALAR  # n = x.shape[0]
            elif isinstance(value, ir.Call) and value.fn is operator.getitem and _item_of(value, items) is not None:
                set_kind(stmt.target, _item_of(value, items), stmt)  # t[0] of a tuple whose items are known
            elif isinstance(value, ir.Call) and result_kind is not None and is_user_function(value.fn):
                arguments = tuple(kind_of(a, stmt) for a in value.args)
                set_kind(stmt.target, result_kind(value.fn, arguments), stmt)
            elif isinstance(value, ir.Call) and value.fn is operator.getitem:
                rank = _indexed_rank(value, ndim, lambda e: class_of(e, stmt))
                shape[stmt.target] = SCALAR if rank == 0 else fresh(stmt)
                if rank:
                    ndim[stmt.target] = rank
            elif isinstance(value, ir.Call) and (value.fn in _COUNTS or _whole_reduction(value)):
                shape[stmt.target] = SCALAR
            elif isinstance(value, ir.Call) and value.fn is np.shape:
                shape[stmt.target] = fresh(stmt)
                shapes.add(stmt.target)
            elif isinstance(value, ir.Call) and rules.is_elementwise(value.fn):
                operands = list(value.args) + [v for _, v in value.kwargs]
                classes = {class_of(a, stmt) for a in operands} - {SCALAR}
                shape[stmt.target] = SCALAR if not classes else classes.pop() if len(classes) == 1 else fresh(stmt)
                ranks_in = [0 if class_of(a, stmt) == SCALAR else ndim.get(getattr(a, "name", None)) for a in operands]
                if None not in ranks_in:  # broadcasting: the largest rank
                    ndim[stmt.target] = max(ranks_in, default=0)
            elif isinstance(value, ir.Call):
                shape[stmt.target] = fresh(stmt)
                rank = _made_rank(value, ndim, lambda e: class_of(e, stmt))
                if rank is not None:
                    ndim[stmt.target] = rank
            else:
                shape[stmt.target] = class_of(value, stmt)
                if isinstance(value, ir.Display) and value.kind == "tuple":
                    items[stmt.target] = tuple(kind_of(i, stmt) for i in value.items)
        if shape == before:
            break
    return shape, ndim, items


def _item_of(call: ir.Call, items: dict[str, tuple]) -> Any:
    """The kind of ``t[k]`` for a tuple ``t`` whose item kinds are known (else None)."""
    base, index = call.args
    if isinstance(base, ir.Var) and base.name in items and isinstance(index, ir.Const) \
            and isinstance(index.value, int) and -len(items[base.name]) <= index.value < len(items[base.name]):
        return items[base.name][index.value]
    return None


_REDUCTIONS = {np.sum, np.mean, np.prod, np.max, np.min}


def _whole_reduction(call: ir.Call) -> bool:
    """``np.sum(x)`` and its siblings with no axis and no keepdims: one number."""
    return call.fn in _REDUCTIONS and len(call.args) == 1 and not call.kwargs


def _made_rank(call: ir.Call, ndim: dict[str, int], class_of) -> Optional[int]:
    """The rank of an array made by ``np.zeros(shape)`` or ``np.zeros_like(a)``, if known."""
    if not call.args:
        return None
    first = call.args[0]
    if call.fn in _SHAPED_BY_ARGUMENT:
        if isinstance(first, ir.Display):
            return len(first.items)
        return 1 if class_of(first) == SCALAR else None
    if call.fn in _SHAPED_LIKE_ARGUMENT and isinstance(first, ir.Var):
        return 0 if class_of(first) == SCALAR else ndim.get(first.name)
    return None


def _indexed_rank(call: ir.Call, ndim: dict[str, int], class_of) -> Optional[int]:
    """The rank of ``a[index]`` when ``a``'s rank is known and the index is numbers only."""
    array, index = call.args
    if not isinstance(array, ir.Var) or array.name not in ndim:
        return None
    parts = index.items if isinstance(index, ir.Display) else (index,)
    if not all(not isinstance(p, (ir.Slice, ir.Display)) and class_of(p) == SCALAR
               and not (isinstance(p, ir.Const) and (p.value is None or p.value is Ellipsis)) for p in parts):
        return None
    if isinstance(index, ir.Const) and isinstance(index.value, np.ndarray):
        return None
    rank = ndim[array.name] - len(parts)
    return rank if rank >= 0 else None


def analyse(fn: ir.Function, wrt: Iterable[str], kinds: dict[str, Optional[str]],
            result_kind: Optional[ResultKind] = None) -> Analysis:
    uses = Counter(name for stmt in ir.walk(fn.body) for expr in ir.exprs_of(stmt) for name in ir.names_read(expr))
    wrt = list(wrt)
    shape, ndim, items = shape_classes(fn, kinds, result_kind)
    table = _flow_table(fn)  # computed once: both fixed points walk it several times
    varied = varied_names(fn, wrt, table)
    return Analysis(activity(fn, wrt, table, varied), shape, uses, varied, ndim, items)


def check_in_place(fn: ir.Function, facts: Analysis, kinds: dict[str, Optional[str]]) -> None:
    """Refuse ``name op= value`` where ``name`` provably holds an array another name shares.

    Lowering made such updates new bindings, which is what Python does for
    numbers; for a shared array NumPy would change it for every name that
    sees it (and an argument's array is the caller's).  Only what the kinds
    prove decides: a value of unknown rank is not refused.
    """
    for update in fn.in_place:
        if update.base is None:
            array = (facts.rank_of(ir.Var(update.value)) or 0) > 0
        else:  # a view: an array if its base is one and the index keeps a dimension
            base = facts.rank_of(ir.Var(update.base))
            array = base is not None and base > 0 and (update.keeps_dimension or base > update.integers)
        if array:
            raise TransformError(
                f"the in-place update of {update.name}", f"{update.name} is {update.shared}, and NumPy would "
                f"change that array too; write {update.name} = {update.name} + ... (a new array), or copy it "
                f"first", filename=fn.filename, line=update.line, column=update.column)


def check_constant_calls(fn: ir.Function, facts: Analysis) -> None:
    """Refuse a call of a function with no rule and no source whose arguments depend on the inputs.

    One whose arguments do not (``np.random.normal(size=3)``, ``math.lgamma(k + 1)``) is a
    constant: it runs once where the primal computation runs, and nothing differentiates it.
    """
    generated = is_generated(fn.filename)
    for stmt in ir.walk(fn.body):
        if not (isinstance(stmt, ir.Assign) and isinstance(stmt.value, ir.Call)):
            continue
        call = stmt.value
        if generated and private_draw(call.fn):
            raise TransformError(f"the random draw {describe_callable(call.fn)} in a derivative of a derivative",
                                 "it is taken in several passes, and each would draw again from this generator; "
                                 "draw with np.random.* (replayed in each pass) or pass the draws in as an argument",
                                 filename=fn.filename, line=stmt.line)
        if not _reads(list(call.args) + [v for _, v in call.kwargs]) & facts.varied:
            continue
        why = missing_rule(call.fn)
        if why is not None:
            raise TransformError(f"the call of {describe_callable(call.fn)}", why, filename=fn.filename,
                                 line=stmt.line)


def private_draw(fn: Any) -> bool:
    """A draw from a generator other than the global ones ``api._Draws`` replays."""
    owner = getattr(fn, "__self__", None)
    if isinstance(owner, random.Random):
        return owner is not random._inst
    if isinstance(owner, (np.random.RandomState, np.random.Generator)):
        return owner is not np.random.mtrand._rand
    return False


def check_element_reads(fn: ir.Function, facts: Analysis) -> None:
    """Refuse a read of ``a[i]`` after ``a`` was written unless ``a[i]`` is one number (``a`` has as
    many dimensions as the index has parts, each a number): otherwise it may be a view, which NumPy
    would show the write through.  What the kinds do not prove is refused."""
    for read in fn.element_reads:
        numbers = all(isinstance(p.value, (int, np.integer)) if isinstance(p, ir.Const) else
                      facts.shape_of(p) == SCALAR for p in read.index)
        if not numbers or facts.rank_of(ir.Var(read.array)) != len(read.index):
            raise TransformError(f"reading {read.name} after {read.array} was written", read.hint,
                                 filename=fn.filename, line=read.line)
