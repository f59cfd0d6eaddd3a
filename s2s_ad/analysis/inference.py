"""Shape classes and kinds: the fixed point over loops and branches (``infer``).

Input: an ``ir.Function`` in SSA form, what is known of each parameter's kind
(a ``kinds.Kind``), and optionally how to find a user function's result kind
(``ResultKind``: the pipeline lowers and analyses the callee).  Output: each
value's shape class (``SCALAR``, an integer shared by values provably of one
shape, or the dims of a shape every axis of which is known) and its ``Kind``;
``shape_classes`` hands on the ranks and the tuples' item kinds read off them.
A merge has what holds on every path, and should the passes not settle every
merge is taken as unknown: a fact here is only ever what holds on every run.
``facts.py`` puts these into an ``Analysis``, with the activity (activity.py).
"""
from __future__ import annotations

import itertools
import operator
from collections import Counter
from typing import Any, Callable, Optional, Union

from ..core import ir, language
from ..core.identity import Identity
from ..rules import registry as rules
from ..rules.rule import ArgumentMismatch, bind_arguments, is_default
from ..lowering.expressions import is_user_function
from ..core.kinds import (NUMBER, TRUTH, UNKNOWN, Array, Kind, Number, Sequence, Unknown, as_fact, broadcast_dims,
    callee_kind, constant_kind, dims_of, rank, reduced_dims)

SCALAR = "scalar"
ShapeClass = Union[str, int, tuple]  # SCALAR, a number per class, or the dims of a known shape (_dims_class)
_ClassOf = Callable[[ir.Expr], Optional[ShapeClass]]  # the shape class of an operand, None where unknown


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


def infer(fn: ir.Function, kinds: dict[str, Any], result_kind: Optional[ResultKind] = None,
          unpacked: Optional[dict[str, Kind]] = None, ignored: frozenset[str] = frozenset()
          ) -> tuple[dict[str, ShapeClass], dict[str, Kind]]:
    """Each value's shape class and ``Kind``, as a fixed point over loops and branches.

    A merge variable (a branch's result, a loop-carried value) gets the join
    of its sources' facts: one class only if every source has it, else a
    class of its own.  Loops are iterated, each pass in program order, the
    back edges' facts carried from the pass before, until a pass changes
    nothing.  Passes are bounded; should they not settle (they do: merges only
    ever widen), the facts are computed once more with every merge unknown,
    which holds whatever the loops do.  ``unpacked``: the kinds of names an
    ``Unpack`` binds, where the caller knows them (the value a helper's
    tangent code hands back, to vector mode); others an ``Unpack`` binds have none.  ``ignored``: names
    whose statements are not analysed and that get no facts (vector mode's tangents: what it asks of
    inference is the primal's ranks, which never read a tangent; a chain of carried tangents would
    otherwise take a pass per link to settle).
    """
    state = _Inference(fn, kinds, result_kind, unpacked or {}, ignored)
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

    def __init__(self, fn: ir.Function, kinds: dict[str, Any], result_kind: Optional[ResultKind],
                 unpacked: dict[str, Kind], ignored: frozenset[str] = frozenset()) -> None:
        self.fn = fn
        self.ignored = ignored  # (see ``infer``)
        self.params = {p: as_fact(kinds.get(p)) for p in fn.params}
        self.unpacked = unpacked  # the kinds of names an ``Unpack`` binds, where the caller knows them
        self.result_kind = result_kind
        self.counter = itertools.count()
        self.fresh_for: dict[object, int] = {}
        # merge target -> sid of a merge statement -> (class, kind) of its source when last seen
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
        # names bound once to a range (steps = range(n)): read at a number, an int (forward mode over a
        # gradient's code reads its loops over a range held in a name so: i = steps[k])
        self.ranges = frozenset(stmt.target for stmt in ir.walk(fn.body)
                                if isinstance(stmt, ir.Assign) and stmt.target in self.bound_once
                                and isinstance(stmt.value, ir.Call) and stmt.value.fn is range)
        # names bound once to the pieces of np.split and its family (declared write_back="pieces"): a list
        # of arrays of the split array's rank, so an item read by a number is such an array
        self.pieces = {stmt.target: stmt.value.args[0] for stmt in ir.walk(fn.body)
                       if isinstance(stmt, ir.Assign) and stmt.target in self.bound_once
                       and isinstance(stmt.value, ir.Call) and stmt.value.args and _splits(stmt.value.fn)}

    def fresh(self, key: object) -> int:
        """The class of its own that ``key`` (a statement, an expression, or a tuple naming one) gets, the
        same in every pass: a statement by its identity (``sid``), an expression by the object's (the
        occurrence: expressions compare by value; the key holds it, so its id is not another's meanwhile)."""
        if isinstance(key, ir.STATEMENTS):
            key = ("statement", key.sid)
        elif not isinstance(key, tuple):
            key = Identity(key)
        if key not in self.fresh_for:
            self.fresh_for[key] = next(self.counter)
        return self.fresh_for[key]

    def class_of(self, expr: ir.Expr, owner: ir.Stmt) -> ShapeClass:
        if isinstance(expr, ir.Var):  # (a name not set in the function: a class of its own per read)
            return self.shape[expr.name] if expr.name in self.shape else self.fresh((owner.sid, expr.name))
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

    def told(self, arg: ir.Expr, owner: ir.Stmt) -> Kind:
        """What a user function called here is told of the argument ``arg`` to find its result's kind:
        a string or None's value, a number or truth value, else ``kinds.callee_kind`` with the dims."""
        constant = constant_kind(arg.value) if isinstance(arg, ir.Const) else None
        if constant is not None:
            return constant
        if self.class_of(arg, owner) == SCALAR:
            return TRUTH if self.kind_of(arg) == TRUTH else NUMBER
        return callee_kind(self.kind_of(arg), dims=True)

    def set(self, target: str, kind: Kind, owner: Union[ir.Stmt, tuple]) -> None:
        self.kind[target] = kind
        self.shape[target] = SCALAR if isinstance(kind, Number) else _dims_class(kind) or self.fresh(owner)

    def index_class(self, expr: ir.Expr, owner: ir.Stmt) -> Optional[ShapeClass]:
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

    def dims(self, expr: ir.Expr, owner: ir.Stmt) -> Any:
        """``kinds.dims_of`` an operand: () for a number, None where unknown."""
        return () if self.class_of(expr, owner) == SCALAR else dims_of(self.kind_of(expr))

    def run_pass(self) -> tuple[dict[str, ShapeClass], dict[str, Kind]]:
        self.shape, self.kind, self.shapes, self.lengths, self.offsets = {}, {}, {}, {}, {}
        for p, kind in self.params.items():
            self.set(p, kind, ("parameter", p))
        for stmt in ir.walk(self.fn.body):
            if isinstance(stmt, ir.For):
                self.set(stmt.index, NUMBER, stmt)  # the index of a range
            elif isinstance(stmt, ir.Assign) and stmt.target in self.ignored:
                continue
            elif isinstance(stmt, ir.Assign) and stmt.merge:
                self.merge(stmt)
            elif isinstance(stmt, ir.Assign):
                self.assignment(stmt)
                self.shifted_length(stmt)
            elif isinstance(stmt, ir.Unpack):
                for target in stmt.targets:
                    if target in self.unpacked and target not in self.ignored:
                        self.set(target, self.unpacked[target], stmt)
        return dict(self.shape), dict(self.kind)

    def merge(self, stmt: ir.Assign) -> None:
        """``m = v`` on one path: ``m`` holds what holds on every path seen so far."""
        target = stmt.target
        seen = self.sources.setdefault(target, {})
        seen[stmt.sid] = (self.class_of(stmt.value, stmt), self.kind_of(stmt.value))
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
        if rules.fact(fn, "kind_of_argument") and len(args) == 1 and not value.kwargs:  # x.copy()
            if not isinstance(self.kind_of(args[0]), (Array, Number)):
                self.set(target, self.kind_of(args[0]), stmt)  # (a list's copy is a list: whatever x is)
                return
            value = ir.Call(language.copy, args)  # an array's: np.copy, as passes/method_copies.py spells it
            fn = value.fn
        if fn is operator.getitem and isinstance(args[0], ir.Var) and args[0].name in self.shapes \
                and isinstance(args[1], ir.Const):
            self.set(target, NUMBER, stmt)  # n = x.shape[0]
            self.record_length(target, self.shapes[args[0].name], args[1].value)
        elif fn is operator.getitem and isinstance(args[0], ir.Var) and args[0].name in self.ranges \
                and self.kind_of(args[1]) == NUMBER:
            self.set(target, NUMBER, stmt)  # steps[k], steps = range(n): an int
        elif fn is operator.getitem and isinstance(args[0], ir.Var) and args[0].name in self.pieces \
                and self.kind_of(args[1]) == NUMBER:
            split = self.kind_of(self.pieces[args[0].name])  # parts[k] of parts = np.split(x, ...)
            self.set(target, Array(split.rank if isinstance(split, Array) else None), stmt)
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
                bound = bind_arguments(rule, args, call.kwargs)
            except ArgumentMismatch:
                return None
            axis, keepdims = bound.get("axis"), bound.get("keepdims")
            if axis is None or keepdims is None or set(bound) - {rule.inputs[0], "axis", "keepdims", "dtype"} - {
                    name for name, v in bound.items() if is_default(v)}:
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


def _splits(fn: Any) -> bool:
    """np.split and its family (declared ``write_back="pieces"``): a list of pieces of the array."""
    try:
        return rules.fact(fn, "write_back") == "pieces"
    except TypeError:  # an unhashable callable
        return False


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
    if is_default(expr):
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
    return _rank_from_argument(call)


def _rank_from_argument(call: ir.Call) -> Optional[int]:
    """The rank of ``np.reshape(a, (2, 2))``: the number of lengths its declared ``rank_from`` argument
    gives, where that is a display or a constant (one integer: 1)."""
    name = rules.fact(call.fn, "rank_from")
    rule = rules.adjoint_rule(call.fn) if name else None
    if rule is None:
        return None
    try:
        shape = bind_arguments(rule, call.args, call.kwargs).get(name)
    except ArgumentMismatch:
        return None
    if isinstance(shape, ir.Display):
        return len(shape.items)
    if isinstance(shape, ir.Const) and isinstance(shape.value, (tuple, list)):
        return len(shape.value)
    if isinstance(shape, ir.Const) and isinstance(shape.value, int) and not isinstance(shape.value, bool):
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
