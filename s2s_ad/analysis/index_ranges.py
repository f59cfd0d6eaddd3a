"""Which element accesses of generated code are proven in range (what lets a compiler drop its bounds checks).

Input: ``fn``, an ``ir.Function`` as a target prints it (adjoint or tangent form: a name may be
assigned in several places, values may be nested expressions), ``kinds``, what is known of its
parameters (``kinds.Kind``: an array's ``dims`` name its axes' lengths, axes named alike being equal
on every call the code serves; a parameter not named is unknown), and ``proven``, arrays whose
accesses another part has proven (the Numba target's tape stacks, ``numba.tape.proven_stacks``).
Output: ``unproven_accesses(fn, kinds, proven)``: the element reads and writes (``a[i]``,
``a[i, j] = v``) of which it could not be shown that, on every run, each integer index part lies in
``-len <= i < len`` of the axis it indexes (Numba, as Python, counts a negative index from the end).
An empty list: no access of ``fn`` can read or write outside its array.  What cannot be proven is
reported, never guessed.  Slices never count (they are clipped), nor indexes into a tuple or a list
(Numba checks those itself).

How (one analysis, flow-insensitive: a name's fact holds wherever it is read):

* **Values** (``_Values``): each name gets the join of what each of its assignments may give, as a
  least fixed point (loops widen an integer bound that keeps moving to unknown).  A value is an
  integer within ``[lo, hi]`` (``_Int``), a range whose elements lie within such bounds (``_Steps``:
  ``range(lo, hi[, k])``, a slice of one, reversed), an array of known rank with the axes' lengths
  where known (``_Array``; a number is one of rank 0), an array's shape tuple (``_Dims``), a tuple or
  list (``_SEQUENCE``), or unknown (``_TOP``).  Bounds and lengths are affine expressions
  (``_Affine``) of *symbols*: the arguments' axis lengths (the kinds' dims, at least 0) and the values
  of number parameters.  Lengths come from the kinds, from ``np.zeros``/``np.empty``/``np.ones``/
  ``np.full`` of such expressions, arrays made like another (``zeros_like``, ``np.copy``, the engine's
  ``unbroadcast``/``writable_copy``), elementwise arithmetic, ``np.asarray``; ``len`` and
  ``np.shape(x)[k]`` read them back.  A name that may be read before any assignment (after a loop that
  made no trip) may also hold Numba's default, 0.
* **Comparisons**: ``i < len`` is proven where ``len - i`` is at least 1 for every value of the
  symbols (lengths at least 0, parameters any int64): so only where the parameters' symbols cancel
  and what remains is a combination of lengths with positive coefficients plus a constant
  (``a + 1`` against ``a``).
* **Machine integers**: Numba's integers wrap at 2**64.  Arithmetic keeps each value congruent to
  the exact one, so an index proven within ``[-len, len)`` of a real length is exact; what needs
  more is said where it is used: a range's bounds must fit in int64 for its elements to be bounded,
  and an array's length is known only where its exact value cannot reach 2**64 (an allocation whose
  length wrapped to a negative one fails; one that wrapped past 2**64 would not).
"""
from __future__ import annotations

import dataclasses
import operator
from dataclasses import dataclass
from typing import Any, Callable, Iterator, Optional, Union

import numpy as np

from ..core import ir, language, runtime
from ..rules import registry as rules
from ..core.kinds import Array, Kind, Number

_LOW, _HIGH = -2 ** 63, 2 ** 63 - 1  # int64
_WRAP = 2 ** 64


# -- affine expressions of symbols -------------------------------------------------------------------

@dataclass(frozen=True)
class _Affine:
    """``sum(coefficient * symbol) + constant``; a symbol ``"len a"`` is an axis length (0 to 2**63 - 1),
    any other (``"value n"``) a parameter's int64 value."""

    terms: tuple[tuple[str, int], ...] = ()  # sorted by symbol, no zero coefficient
    constant: int = 0

    @staticmethod
    def symbol(name: str) -> "_Affine":
        return _Affine(((name, 1),))

    def plus(self, other: "_Affine", sign: int = 1) -> "_Affine":
        merged = dict(self.terms)
        for name, coefficient in other.terms:
            merged[name] = merged.get(name, 0) + sign * coefficient
        return _Affine(tuple(sorted((n, c) for n, c in merged.items() if c)), self.constant + sign * other.constant)

    def times(self, factor: int) -> "_Affine":
        return _Affine(tuple((n, c * factor) for n, c in self.terms if c * factor), self.constant * factor)

    def span(self) -> tuple[int, int]:
        """The least and the greatest value over every value of the symbols."""
        low = high = self.constant
        for name, coefficient in self.terms:
            least, most = (0, _HIGH) if name.startswith("len ") else (_LOW, _HIGH)
            low += coefficient * (least if coefficient > 0 else most)
            high += coefficient * (most if coefficient > 0 else least)
        return low, high

    def at_least(self, bound: int) -> bool:
        return self.span()[0] >= bound


def _fits(bound: Optional[_Affine]) -> Optional[_Affine]:
    """``bound`` where its exact value is always an int64 (what the machine computes), else None."""
    if bound is None:
        return None
    low, high = bound.span()
    return bound if low >= _LOW and high <= _HIGH else None


def _least(a: Optional[_Affine], b: Optional[_Affine], sign: int = 1) -> Optional[_Affine]:
    """The smaller of two bounds (with ``sign`` -1: the greater) where their order is proven, else None."""
    if a is None or b is None:
        return None
    low, high = a.plus(b, -1).times(sign).span()
    return b if low >= 0 else a if high <= 0 else None


# -- abstract values ---------------------------------------------------------------------------------

@dataclass(frozen=True)
class _Int:
    """An integer (congruent, as the machine computes it, to) a value within ``[lo, hi]`` (None: unbounded)."""

    lo: Optional[_Affine]
    hi: Optional[_Affine]


@dataclass(frozen=True)
class _Steps:
    """A range (or a slice of one, reversed or not) whose elements lie within ``[lo, hi]``."""

    lo: Optional[_Affine]
    hi: Optional[_Affine]


@dataclass(frozen=True)
class _Array:
    """An array of rank ``len(axes)``, each axis's length where known; a number has no axes."""

    axes: tuple[Optional[_Affine], ...]


@dataclass(frozen=True)
class _Dims:
    """An array's shape tuple (``np.shape(x)``): each axis's length where known; None: rank unknown."""

    axes: Optional[tuple[Optional[_Affine], ...]]


@dataclass(frozen=True)
class _Mark:
    name: str


_TOP, _BOTTOM, _SEQUENCE = _Mark("unknown"), _Mark("nothing yet"), _Mark("a tuple or list")
_Value = Union[_Int, _Steps, _Array, _Dims, _Mark]
_NUMBER = _Array(())
_UNBOUNDED = _Int(None, None)


def _exact(value: _Value) -> Optional[_Affine]:
    """The value of an integer known exactly (both bounds the same expression)."""
    return value.lo if isinstance(value, _Int) and value.lo is not None and value.lo == value.hi else None


def _join(a: _Value, b: _Value) -> _Value:
    """What holds of a value that is ``a`` or ``b``."""
    if a is _BOTTOM or a == b:
        return b
    if b is _BOTTOM:
        return a
    if isinstance(a, _Int) and isinstance(b, _Int):
        return _Int(_least(a.lo, b.lo), _least(a.hi, b.hi, -1))
    if isinstance(a, _Steps) and isinstance(b, _Steps):
        return _Steps(_least(a.lo, b.lo), _least(a.hi, b.hi, -1))
    if isinstance(a, (_Int, _Array)) and isinstance(b, (_Int, _Array)):
        axes_a, axes_b = _axes(a), _axes(b)
        if axes_a is None or axes_b is None or len(axes_a) != len(axes_b):
            return _TOP
        return _Array(tuple(x if x == y else None for x, y in zip(axes_a, axes_b)))
    if isinstance(a, _Dims) and isinstance(b, _Dims):
        if a.axes is None or b.axes is None or len(a.axes) != len(b.axes):
            return _Dims(None)
        return _Dims(tuple(x if x == y else None for x, y in zip(a.axes, b.axes)))
    return _TOP


def _widened(value: _Value) -> _Value:
    """``value`` with the bounds a loop may keep moving dropped (what a name still changing gets)."""
    if isinstance(value, _Int):
        return _UNBOUNDED
    if isinstance(value, _Steps):
        return _Steps(None, None)
    if isinstance(value, _Array):
        return _Array((None,) * len(value.axes))
    return _Dims(None) if isinstance(value, _Dims) else _TOP


def _axes(value: _Value) -> Optional[tuple[Optional[_Affine], ...]]:
    """The axes of a number or an array (an integer is a number), else None."""
    if isinstance(value, _Int):
        return ()
    return value.axes if isinstance(value, _Array) else None


def _length(bound: _Value) -> Optional[_Affine]:
    """The length an allocation given ``bound`` makes, where it is known: the exact value of an integer
    that cannot reach 2**64 (a wrapped negative length fails to allocate; see the module docstring)."""
    exact = _exact(bound)
    if exact is None:
        return None
    low, high = exact.span()
    return exact if low >= _LOW and high < _WRAP else None


def _parameter_value(name: str, kind: Optional[Kind]) -> _Value:
    """What a parameter of this kind holds on entry."""
    if isinstance(kind, Number):
        return _NUMBER if kind.truth else _Int(_Affine.symbol(f"value {name}"), _Affine.symbol(f"value {name}"))
    if isinstance(kind, Array) and kind.rank is not None:
        dims = kind.dims if kind.dims is not None else (None,) * kind.rank
        return _Array(tuple(_Affine.symbol(f"len {d}") if isinstance(d, str) else
                            _Affine((), 1) if d == 1 else None for d in dims))
    return _TOP


# -- the values of names -----------------------------------------------------------------------------

_WIDEN_AFTER = 2  # rounds before a value still changing is widened (loops: bounds that keep moving)
_ROUNDS = 40  # more than enough to settle once widened; should it not, nothing is proven
_SHAPE_KEEPING = frozenset({"dtype", "order"})  # keywords that leave an allocation's or a copy's shape
_Producer = Union[ir.Expr, ir.For, _Int, _Steps, _Array, _Dims, _Mark]  # what an assignment gives a name


class _Values:
    """Each name's value: the join over its assignments, a fixed point (see the module docstring)."""

    def __init__(self, fn: ir.Function, kinds: dict[str, Any]) -> None:
        self.producers: dict[str, list[_Producer]] = {}
        for name in fn.params:
            self._add(name, _parameter_value(name, kinds.get(name)))
        for stmt in ir.walk(fn.body):
            if isinstance(stmt, ir.Assign):
                self._add(stmt.target, stmt.value)
            elif isinstance(stmt, ir.For):
                self._add(stmt.index, stmt)
            else:
                for name in ir.targets_of(stmt):  # unpacked: not followed
                    self._add(name, _TOP)
        for name in _maybe_unbound(fn):  # read where Numba may still hold its default for it
            self._add(name, _Int(_Affine(), _Affine()))
        self.env: dict[str, _Value] = {}
        self.settled = self._settle()

    def _add(self, name: str, producer: _Producer) -> None:
        self.producers.setdefault(name, []).append(producer)

    def _settle(self) -> bool:
        """Compute the fixed point; False where it did not settle (then nothing is proven)."""
        for round_ in range(_ROUNDS):
            changed = False
            for name, producers in self.producers.items():
                value: _Value = _BOTTOM
                for producer in producers:
                    value = _join(value, self._produced(producer))
                old = self.env.get(name, _BOTTOM)
                if value != old and round_ >= _WIDEN_AFTER:
                    value = _widened(_join(old, value))
                if value != old:
                    self.env[name] = value
                    changed = True
            if not changed:
                return True
        return False

    def _produced(self, producer: _Producer) -> _Value:
        if isinstance(producer, (_Int, _Steps, _Array, _Dims, _Mark)):
            return producer
        if isinstance(producer, ir.For):  # the index of a loop over a range: one of its elements
            steps = self.value(producer.iterable)
            return _Int(steps.lo, steps.hi) if isinstance(steps, _Steps) else steps if steps is _BOTTOM else _TOP
        return self.value(producer)

    def value(self, expr: Any) -> _Value:
        if isinstance(expr, ir.Var):
            return self.env.get(expr.name, _BOTTOM) if expr.name in self.producers else _TOP
        if isinstance(expr, ir.Const):
            return _constant(expr.value)
        if isinstance(expr, ir.Display):
            return _SEQUENCE
        if isinstance(expr, ir.Call):
            return self._call(expr)
        return _TOP

    def _call(self, call: ir.Call) -> _Value:
        fn = call.fn
        args = [self.value(a) for a in call.args]
        if _BOTTOM in args:
            return _BOTTOM  # (not known yet: a later round knows)
        if call.kwargs and fn is not np.asarray and not rules.fact(fn, "shape_from"):
            return _TOP
        integer = _integer_arithmetic(fn, args)
        if integer is not None:
            return integer
        if fn is len and len(args) == 1:
            axes = _axes(args[0])
            first = axes[0] if axes else None
            return _Int(first, first) if first is not None else _Int(_Affine(), None)
        if fn is language.shape and len(args) == 1:
            return _Dims(_axes(args[0]))
        if fn is operator.getitem and len(args) == 2:
            return self._part(args[0], call.args[1])
        if fn is range:
            return _range(args)
        if fn is reversed and len(args) == 1 and isinstance(args[0], _Steps):
            return args[0]
        return self._made(call, args)

    def _made(self, call: ir.Call, args: list[_Value]) -> _Value:
        """The value of an array-making or elementwise call (unknown where it is none of those)."""
        fn, keywords = call.fn, {name for name, _ in call.kwargs}
        shape_from = rules.fact(fn, "shape_from")
        if shape_from == "argument" and args and keywords <= _SHAPE_KEEPING | {"fill_value"}:
            return self._allocated(call.args[0])
        like_arity = 2 if fn is np.full_like else 1
        if shape_from == "like" and len(args) == like_arity and keywords <= _SHAPE_KEEPING:
            return _like(args[0])
        if fn is np.asarray and len(args) == 1 and keywords <= {"dtype"}:
            return _like(args[0])
        like = rules.fact(fn, "shaped_like")  # (the engine's ops: runtime.writable_copy's second argument)
        if isinstance(like, int) and not call.kwargs and like < len(args):
            return _like(args[like])
        if fn is runtime.unbroadcast_to and len(args) == 2 and isinstance(args[1], _Dims) and args[1].axes is not None:
            return _Array(args[1].axes)
        if call.kwargs:
            return _TOP
        if rules.fact(fn, "reduction") and len(args) == 1 and _axes(args[0]) is not None:
            return _NUMBER  # over every axis
        return _elementwise(fn, args)

    def _allocated(self, shape: ir.Expr) -> _Value:
        """``np.zeros(shape)``'s value: the lengths its shape argument gives, where known."""
        if isinstance(shape, ir.Display):
            items = [self.value(item) for item in shape.items]
            if not all(isinstance(item, _Int) for item in items):
                return _TOP
            return _Array(tuple(_length(item) for item in items))
        given = self.value(shape)
        if isinstance(given, _Int):
            return _Array((_length(given),))
        if isinstance(given, _Dims) and given.axes is not None:
            return _Array(given.axes)
        if isinstance(shape, ir.Const) and isinstance(shape.value, tuple) and \
                all(type(n) is int for n in shape.value):
            return _Array(tuple(_Affine((), n) for n in shape.value))
        return _TOP

    def _part(self, whole: _Value, index: ir.Expr) -> _Value:
        """``whole[index]``'s value."""
        if isinstance(whole, _Dims):  # an axis's length
            if isinstance(index, ir.Slice):
                return _SEQUENCE
            axis = index.value if isinstance(index, ir.Const) and type(index.value) is int else None
            known = whole.axes[axis] if whole.axes is not None and axis is not None \
                and -len(whole.axes) <= axis < len(whole.axes) else None
            return _Int(known, known) if known is not None else _Int(_Affine(), None)
        if isinstance(whole, _Steps):  # a slice of a range holds some of its elements
            return whole if isinstance(index, ir.Slice) else _TOP
        if not isinstance(whole, _Array):
            return _TOP
        kept: list[Optional[_Affine]] = []
        axis = 0
        for part in ir.index_parts(index):
            if isinstance(part, ir.Const) and part.value is None:
                kept.append(_Affine((), 1))
                continue
            if axis >= len(whole.axes):
                return _TOP
            if isinstance(part, ir.Slice):
                whole_axis = part.lower is None and part.upper is None and part.step is None
                kept.append(whole.axes[axis] if whole_axis else None)
            elif not isinstance(self.value(part), _Int):
                return _TOP  # an array of indices, a mask, an ellipsis: not followed
            axis += 1
        return _Array(tuple(kept) + whole.axes[axis:])


def _constant(value: Any) -> _Value:
    if isinstance(value, (bool, np.bool_)):
        return _NUMBER
    if isinstance(value, (int, np.integer)):
        return _Int(_Affine((), int(value)), _Affine((), int(value)))
    if isinstance(value, (float, complex, np.number)):
        return _NUMBER
    if isinstance(value, np.ndarray):  # a global array: Numba freezes it, shape and all
        return _Array(tuple(_Affine((), int(n)) for n in value.shape))
    return _SEQUENCE if isinstance(value, tuple) else _TOP


def _like(value: _Value) -> _Value:
    axes = _axes(value)
    return _Array(axes) if axes is not None else _TOP


def _integer_arithmetic(fn: Any, args: list[_Value]) -> Optional[_Value]:
    """``a + b``, ``a - b``, ``k * a``, ``-a`` of integers, with their bounds (``a * b``: unbounded); None
    where it is none of those (``a // b``: a number, whose bounds are not followed)."""
    if not args or not all(isinstance(a, _Int) for a in args):
        return None
    ints = [a for a in args if isinstance(a, _Int)]

    def both(x: Optional[_Affine], y: Optional[_Affine], sign: int) -> Optional[_Affine]:
        return None if x is None or y is None else x.plus(y, sign)

    if len(ints) == 2 and fn is operator.add:
        return _Int(both(ints[0].lo, ints[1].lo, 1), both(ints[0].hi, ints[1].hi, 1))
    if len(ints) == 2 and fn is operator.sub:
        return _Int(both(ints[0].lo, ints[1].hi, -1), both(ints[0].hi, ints[1].lo, -1))
    if len(ints) == 1 and fn is operator.neg:
        value = ints[0]
        return _Int(value.hi.times(-1) if value.hi else None, value.lo.times(-1) if value.lo else None)
    if len(ints) == 1 and fn is operator.pos:
        return ints[0]
    if len(ints) == 2 and fn is operator.mul:
        for factor, other in ((ints[0], ints[1]), (ints[1], ints[0])):
            exact = _exact(factor)
            if exact is not None and not exact.terms:
                k = exact.constant
                low, high = (other.lo, other.hi) if k >= 0 else (other.hi, other.lo)
                return _Int(low.times(k) if low else None, high.times(k) if high else None)
        return _UNBOUNDED
    return None


def _range(args: list[_Value]) -> _Value:
    """``range(...)``'s value: its elements' bounds, from bounds that are exact as the machine computes them."""
    if not 1 <= len(args) <= 3 or not all(isinstance(a, _Int) for a in args):
        return _TOP
    ints = [a for a in args if isinstance(a, _Int)]
    start, stop = (_Int(_Affine(), _Affine()), ints[0]) if len(ints) == 1 else (ints[0], ints[1])
    step = _exact(ints[2]) if len(ints) == 3 else _Affine((), 1)
    if step is None or step.terms or step.constant == 0:
        return _Steps(None, None)

    def machine(value: _Int) -> Optional[_Int]:  # both bounds int64: the machine's value is the exact one
        return value if _fits(value.lo) is not None and _fits(value.hi) is not None else None

    first, end = machine(start), machine(stop)
    if step.constant > 0:
        return _Steps(first.lo if first else None, end.hi.plus(_Affine((), 1), -1) if end and end.hi else None)
    return _Steps(end.lo.plus(_Affine((), 1)) if end and end.lo else None, first.hi if first else None)


def _elementwise(fn: Any, args: list[_Value]) -> _Value:
    """A broadcast result's value: a number of numbers; of arrays, the axes they agree on (1 gives way)."""
    if not args or not rules.is_elementwise(fn):
        return _TOP
    if (fn is np.where and len(args) != 3) or (language.is_ufunc(fn) and (len(args) != fn.nin or fn.nout != 1)):
        return _TOP  # (np.where(c) gives a tuple of index arrays; a ufunc's extra argument is its out=)
    shapes = [_axes(a) for a in args]
    if any(s is None for s in shapes):
        return _TOP
    known = [s for s in shapes if s is not None]
    if all(not s for s in known):
        return _NUMBER
    broadcasts = (language.is_ufunc(fn) and fn.nout == 1 and len(args) == fn.nin) \
        or getattr(fn, "__module__", None) in ("_operator", "operator") or (fn is np.where and len(args) == 3)
    if not broadcasts:
        return _TOP  # (float(x), math.sin(x) of an array: not a broadcast)
    rank = max(len(s) for s in known)
    axes: list[Optional[_Affine]] = []
    one = _Affine((), 1)
    for position in range(rank):
        lengths = [s[len(s) - rank + position] for s in known if len(s) - rank + position >= 0]
        if any(n is None for n in lengths):
            axes.append(None)
            continue
        others = {n for n in lengths if n is not None and n != one}
        axes.append(others.pop() if len(others) == 1 else one if not others else None)
    return _Array(tuple(axes))


def _maybe_unbound(fn: ir.Function) -> set[str]:
    """The names read somewhere they may not be assigned yet (Numba then reads its default for them)."""
    found: set[str] = set()

    def read(expr: Optional[ir.Expr], bound: set[str]) -> None:
        if expr is not None:
            found.update(name for name in ir.names_read(expr) if name not in bound)

    def block(body: list[ir.Stmt], bound: set[str]) -> set[str]:
        bound = set(bound)
        for stmt in body:
            if isinstance(stmt, ir.If):
                read(stmt.test, bound)
                bound = block(stmt.body, bound) & block(stmt.orelse, bound)
            elif isinstance(stmt, ir.For):
                read(stmt.iterable, bound)
                read(stmt.checkpoint, bound)
                read(stmt.exit, block(stmt.body, bound | {stmt.index}))
            elif isinstance(stmt, ir.While):
                bound = block(stmt.test_block, bound)
                read(stmt.test, bound)
                read(stmt.exit, block(stmt.body, bound))
            else:
                for expr in ir.exprs_of(stmt):
                    read(expr, bound)
                bound.update(ir.targets_of(stmt))
        return bound

    block(fn.body, set(fn.params))
    return found


# -- the accesses ------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Access:
    """An element access not proven in range: how it reads (``x[t_plus_1]``) and the user's line."""

    text: str
    line: Optional[int]


def unproven_accesses(fn: ir.Function, kinds: dict[str, Any], proven: frozenset[str] = frozenset()) -> list[Access]:
    """The element reads and writes of ``fn`` not proven in range (see the module docstring).  An
    index part checked just before its statement (``runtime.check_index``, see ``with_checks``)
    counts as proven."""
    return [access for _, access, _ in _unproven(fn, _Values(fn, kinds), proven, _checked_before(fn))]


# Explicit checks written into code that otherwise runs unchecked: at most this many (beyond, the code
# keeps the compiler's checks, and stays as readable as it was).
_MOST_CHECKS = 4


def with_checks(fn: ir.Function, kinds: dict[str, Any], proven: frozenset[str] = frozenset()) -> ir.Function:
    """``fn`` with ``check_index(i, a, axis)`` (``runtime.check_index``: NumPy's IndexError) just before
    each statement that indexes ``a`` at ``i`` not proven in range, where every such access can be
    checked so (its index part a name or a number, its array's rank known, in a statement that runs
    once each time it is reached) and they are few (``_MOST_CHECKS``): then ``unproven_accesses`` of
    the result is empty.  Otherwise ``fn`` itself."""
    values = _Values(fn, kinds)
    checks: dict[int, list[ir.Stmt]] = {}
    statements: dict[int, ir.Stmt] = {}
    for stmt, access, parts in _unproven(fn, values, proven, {}):
        if parts is None or isinstance(stmt, ir.While) or (isinstance(stmt, ir.For) and stmt.exit is not None):
            return fn
        statements[stmt.sid] = stmt
        for array, axis, at in parts:
            call = ir.Call(runtime.check_index, (at, ir.Var(array), ir.Const(axis)))
            check = ir.Effect(call, getattr(stmt, "line", None))
            listed = checks.setdefault(stmt.sid, [])
            if all(ir.exprs_of(c) != ir.exprs_of(check) for c in listed):
                listed.append(check)
    if not checks or sum(map(len, checks.values())) > _MOST_CHECKS:
        return fn
    body = ir.replace_statements(fn.body, {key: checks[key] + [statements[key]] for key in checks})
    return dataclasses.replace(fn, body=body)


_Part = tuple[str, int, ir.Expr]  # (array, axis, index part): an access's part to check


def _unproven(fn: ir.Function, values: _Values, proven: frozenset[str], checked: dict[int, set]
              ) -> Iterator[tuple[ir.Stmt, Access, Optional[list[_Part]]]]:
    """Each access not proven in range, with its statement and the parts ``with_checks`` would check
    (None: it cannot check them)."""
    for stmt in ir.walk(fn.body):
        for array, index in _accesses(stmt):
            if not values.settled:
                yield stmt, Access(_text(array, index), getattr(stmt, "line", None)), None
                continue
            unchecked = _unchecked_parts(values, array, index, proven, checked.get(stmt.sid, set()))
            if unchecked is None or unchecked:
                yield stmt, Access(_text(array, index), getattr(stmt, "line", None)), unchecked or None


def _checked_before(fn: ir.Function) -> dict[int, set]:
    """Per statement (by its ``sid``), the ``(array, axis, index part)`` checked by the ``check_index`` calls
    just before it in its block (nothing between them can change what they checked)."""
    found: dict[int, set] = {}

    def scan(body: list[ir.Stmt]) -> None:
        run: set = set()
        for stmt in body:
            call = stmt.value if isinstance(stmt, ir.Effect) else None
            if isinstance(call, ir.Call) and call.fn is runtime.check_index and len(call.args) == 3 \
                    and isinstance(call.args[1], ir.Var) and isinstance(call.args[2], ir.Const):
                run.add((call.args[1].name, call.args[2].value, ir.value_key(call.args[0])))
                continue
            found[stmt.sid] = run
            run = set()
            for block in ir.blocks(stmt):
                scan(block)

    scan(fn.body)
    return found


def _accesses(stmt: ir.Stmt) -> Iterator[tuple[ir.Expr, ir.Expr]]:
    """Each ``(array, index)`` a statement reads or writes an element of (``operator.setitem`` calls
    as one whose index is unknown)."""
    if isinstance(stmt, ir.Store):
        yield ir.Var(stmt.array), stmt.index
    for expr in ir.exprs_of(stmt):
        for call in ir.calls_in(expr):
            if call.fn is operator.getitem and len(call.args) == 2:
                yield call.args[0], call.args[1]
            elif (call.fn is operator.setitem or call.fn is operator.delitem) and call.args:
                yield call.args[0], ir.Const(NotImplemented)


def _unchecked_parts(values: _Values, array: ir.Expr, index: ir.Expr, proven: frozenset[str], checked: set
                     ) -> Optional[list[_Part]]:
    """The parts of the access ``array[index]`` neither proven in range nor checked just before (in
    ``checked``): [] where none is; None where the access cannot be checked part by part (its array's
    rank unknown, a part neither a name nor a number)."""
    parts = ir.index_parts(index)
    if all(isinstance(p, ir.Slice) or (isinstance(p, ir.Const) and p.value is None) for p in parts):
        return []  # slices are clipped
    if isinstance(array, ir.Var) and array.name in proven:
        return []
    whole = values.value(array)
    if whole is _SEQUENCE or isinstance(whole, _Dims):
        return []  # a tuple's or a list's index: Numba checks it itself
    if not isinstance(whole, _Array):
        return None
    unchecked: list[_Part] = []
    axis = 0
    for part in parts:
        if isinstance(part, ir.Const) and part.value is None:
            continue
        if axis >= len(whole.axes):
            return None
        length = whole.axes[axis]
        axis += 1
        if isinstance(part, ir.Slice) or \
                (isinstance(array, ir.Var) and (array.name, axis - 1, ir.value_key(part)) in checked):
            continue
        at = values.value(part)
        if not isinstance(at, _Int):
            return None
        if length is None or at.lo is None or at.hi is None or not (
                length.plus(at.hi, -1).at_least(1) and (at.lo.at_least(0) or at.lo.plus(length).at_least(0))):
            if not (isinstance(part, (ir.Var, ir.Const)) and isinstance(array, ir.Var)):
                return None  # (a check names the array and the part: both must read the same again)
            unchecked.append((array.name, axis - 1, part))
    return unchecked


def _text(array: ir.Expr, index: ir.Expr) -> str:
    def part(expr: ir.Expr) -> str:
        if isinstance(expr, ir.Var):
            return expr.name
        if isinstance(expr, ir.Const):
            return repr(expr.value)
        return ":" if isinstance(expr, ir.Slice) else "..."
    return f"{part(array)}[{', '.join(part(p) for p in ir.index_parts(index))}]"
