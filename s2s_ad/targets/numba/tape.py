"""The Numba target's tape: each slot of the recording plan as a typed stack local to the function.

Input: an adjoint ``ir.Function`` whose forward sweep holds ``ir.Push`` and
whose reverse sweep holds ``ir.Pop`` statements made from its
``RecordingPlan`` (``plan.py``), paired as ``tape.check_tape`` checks.
Output: the same function with every push and pop written as code Numba
compiles in nopython mode, each slot in one of two forms:

* **A preallocated array** where the slot's size is known on entry to the
  loop that records it and its values are provably float64: the slot is
  pushed only in one loop over a ``range`` at the top of the function (at
  most ``k`` pushes per trip, under branches but in no inner loop), so
  ``float_stack(k * len(steps))`` (``float_stack((k * len(steps), m))`` for
  a record of ``m`` values; compiled, ``np.empty``) made just before that
  loop holds every record.  A push is ``tape_s[top_s] = v; top_s = top_s + 1``,
  a pop ``top_s = top_s - 1; v = tape_s[top_s]``: no allocation in the loop
  and nothing Numba must box.
* **A list** otherwise (``tape_s.append(v)`` ... ``v = tape_s.pop()``): Numba
  types it from the values pushed and grows it by doubling, which is what a
  slot whose size is not known on entry (a ``while`` loop, an inner loop, a
  replayed checkpoint segment) or whose values are not provably float64 (an
  integer, a flag, an array, a parameter that may be an ``int``) needs.

"Provably float64" (``_FloatProof``) is a fact about the code as Numba types
it, never a guess.  A value the analysis knows is a number (its kind in the
plan) is a float64 if it is a float constant, an arithmetic operation with
one operand a float64 (``arithmetic=True`` in templates/), a NumPy ufunc of
one argument whose result is always inexact, an element of an array made
here as floats (``makes_floats=`` in templates/: ``np.zeros(n)``) or by such a
ufunc (``np.exp(z)``), or an element of an array the gradient is taken by, or a
name one of whose assignments is one of
these (Numba gives a name one type, the join of its assignments': an ``int``
joined with a float64 is a float64, as the list form stored it too; a cycle
of assignments proves nothing by itself).  A value whose kind is not known
(the part of an array a store overwrites) is a float64 only if it is an
element of such an array of one dimension, read at an int.  Where the fact
still leaves room (a complex number: the analysis's numbers include them),
Numba refuses to store the value in a float64 array when it types the code,
and the function falls back to Python (``numba.target``): slower, never
another number (as Python, ``float_stack`` is an array of objects, which
gives back each value as it was pushed).

A function that hands its tape to another (a split adjoint's part, a
helper's call kept as a call) is written with the NumPy target's nested
tuples: it runs as Python.
"""
from __future__ import annotations

import dataclasses
import operator
from typing import Any, Optional

import numpy as np

from ...core import ir, language
from ...core.runtime import float_stack
from ...rules import registry as rules
from ...core.kinds import Number
from ..target import TapeForm, TupleTape, popped_from, pushed_onto


class SlotTape(TapeForm):
    """One typed stack per slot of the recording plan (see the module docstring)."""

    _threaded = TupleTape()

    def spell(self, fn: ir.Function) -> ir.Function:
        if fn.plan is None:
            return fn
        if _threads_its_tape(fn):
            return self._threaded.spell(fn)
        pushes = [s for s in ir.walk(fn.body) if isinstance(s, ir.Push)]
        if not pushes:
            return fn
        return self._spelled(fn, pushes, array_slots(fn, pushes))

    def _spelled(self, fn: ir.Function, pushes: list[ir.Push], arrays: dict[str, tuple[ir.For, int]]
                 ) -> ir.Function:
        """``fn`` with the slots ``arrays`` preallocated arrays (each with the loop that records it and
        its pushes per trip), the other slots lists."""
        assert fn.plan is not None
        taken = ir.NameSet(set(fn.params) | ir.assigned_names(fn.body))
        stacks = {slot.name: ir.fresh_name(f"tape_{identifier(slot.name)}", taken) for slot in fn.plan.slots}
        tops = {name: ir.fresh_name(f"top_{identifier(name)}", taken) for name in arrays}
        replaced: dict[int, Any] = {}
        for stmt in ir.walk(fn.body):
            if isinstance(stmt, ir.Push):
                replaced[stmt.sid] = array_push(stacks[stmt.slot], tops[stmt.slot], stmt) \
                    if stmt.slot in arrays else pushed_onto(stacks[stmt.slot], stmt)
            elif isinstance(stmt, ir.Pop):
                replaced[stmt.sid] = array_pop(stacks[stmt.slot], tops[stmt.slot], stmt) \
                    if stmt.slot in arrays else popped_from(stacks[stmt.slot], stmt)
        pushed = {p.slot for p in pushes}
        lists: list[ir.Stmt] = [ir.Assign(stacks[s.name], ir.Display("list", ()), s.line)
                                for s in fn.plan.slots if s.name in pushed and s.name not in arrays]
        made: dict[int, list[ir.Stmt]] = {}  # the arrays, made just before the loop that records them
        for slot, (loop, per_trip) in arrays.items():
            width = len(fn.plan.slot(slot).values)
            made.setdefault(loop.sid, []).extend(allocation(stacks[slot], tops[slot], loop, per_trip, width))
        body = [new for stmt in fn.body for new in made.get(stmt.sid, []) + [stmt]]
        return dataclasses.replace(fn, body=lists + ir.replace_statements(body, replaced))

    def empty(self) -> Any:
        return None  # (the tape handed to a split adjoint's forward part: the nested tuples')


class ReadBackSlotTape(SlotTape):
    """The tape of a gradient that forward mode reads back to compile it with Numba (a Hessian under
    ``backend="numba"``: forward mode over the gradient's code): every slot a preallocated array, or,
    where one slot cannot be (a ``while`` loop, an inner loop, a value not provably float64, a tape
    handed to a helper's part), the nested tuples of the code read back (``TupleTape``), as for the
    Python backend (Numba cannot type them: that code runs as Python, saying so in a warning).

    Why not lists for the others: forward mode reads the records back as the transformer reads any
    code, and an array written element by element is code it differentiates (the tangent records
    in a tangent array of the same shape), where ``stack.pop()`` is not."""

    def spell(self, fn: ir.Function) -> ir.Function:
        if fn.plan is None:
            return fn
        pushes = [s for s in ir.walk(fn.body) if isinstance(s, ir.Push)]
        if not pushes or _threads_its_tape(fn):
            return self._threaded.spell(fn)
        arrays = array_slots(fn, pushes)
        if set(arrays) != {p.slot for p in pushes}:
            return self._threaded.spell(fn)
        return self._spelled(fn, pushes, arrays)


def _threads_its_tape(fn: ir.Function) -> bool:
    """Whether ``fn`` hands its tape to another or takes it (a split adjoint's part, a helper's call kept
    as a call): then it is written as the nested tuples, threaded through those calls."""
    assert fn.plan is not None
    tape = fn.plan.tape
    return tape in fn.params or any(tape in ir.targets_of(s) and not isinstance(s, (ir.Push, ir.Pop))
                                    for s in ir.walk(fn.body))


def array_slots(fn: ir.Function, pushes: list[ir.Push]) -> dict[str, tuple[ir.For, int]]:
    """The slots of ``fn``'s plan that can be preallocated arrays of float64 (see the module docstring),
    each with the loop that records it and the most pushes one trip makes."""
    assert fn.plan is not None
    floats = _FloatProof(fn)
    kinds = {slot.name: [v.kind for v in slot.values] for slot in fn.plan.slots}
    return {slot: loop for slot, loop in _preallocatable(fn.body).items()
            if all(floats.proves(v, k) for p in pushes if p.slot == slot for v, k in zip(p.values, kinds[slot]))}


def identifier(text: str) -> str:
    return "".join(c if c.isalnum() else "_" for c in text).strip("_") or "slot"


# -- where a slot's size is known on entry ---------------------------------------------------------

def _preallocatable(body: list[ir.Stmt]) -> dict[str, tuple[ir.For, int]]:
    """The slots pushed only inside one loop over a ``range`` at the top of ``body`` (through
    branches, in no inner loop), each with that loop and the most pushes one trip makes."""
    ranges = range_names(body)
    found: dict[str, tuple[ir.For, int]] = {}
    elsewhere: set[str] = set()
    for stmt in body:
        if isinstance(stmt, ir.For) and not stmt.reverse and stmt.checkpoint is None \
                and isinstance(stmt.iterable, ir.Var) and stmt.iterable.name in ranges:
            counts, nested = _pushes_per_trip(stmt.body)
            elsewhere |= nested
            for slot, count in counts.items():
                if slot in found:
                    elsewhere.add(slot)
                found[slot] = (stmt, count)
        else:
            elsewhere |= {s.slot for s in ir.walk([stmt]) if isinstance(s, ir.Push)}
    return {slot: entry for slot, entry in found.items() if slot not in elsewhere}


def range_names(body: list[ir.Stmt]) -> set[str]:
    """The names bound once in the function, to ``range(...)``."""
    bound: dict[str, int] = {}
    ranges: set[str] = set()
    for stmt in ir.walk(body):
        for name in ir.targets_of(stmt):
            bound[name] = bound.get(name, 0) + 1
        if isinstance(stmt, ir.Assign) and isinstance(stmt.value, ir.Call) and stmt.value.fn is range:
            ranges.add(stmt.target)
    return {name for name in ranges if bound[name] == 1}


def _pushes_per_trip(block: list[ir.Stmt]) -> tuple[dict[str, int], set[str]]:
    """The most pushes of each slot one pass through ``block`` makes (a branch: the larger side),
    and the slots pushed in an inner loop (whose count is not known on entry)."""
    counts: dict[str, int] = {}
    nested: set[str] = set()
    for stmt in block:
        if isinstance(stmt, ir.Push):
            counts[stmt.slot] = counts.get(stmt.slot, 0) + 1
        elif isinstance(stmt, ir.If):
            (yes, in_yes), (no, in_no) = _pushes_per_trip(stmt.body), _pushes_per_trip(stmt.orelse)
            nested |= in_yes | in_no
            for slot in dict.fromkeys([*yes, *no]):  # (in their order: a set of strings has none from one run to the next)
                counts[slot] = counts.get(slot, 0) + max(yes.get(slot, 0), no.get(slot, 0))
        else:
            nested |= {s.slot for s in ir.walk([stmt]) if isinstance(s, ir.Push)}
    return counts, nested


# -- the statements ------------------------------------------------------------------------------

def allocation(stack: str, top: str, loop: ir.For, per_trip: int, width: int) -> list[ir.Stmt]:
    """``tape_s = float_stack(len(steps))`` (times the pushes per trip; ``(..., width)`` for a record of
    several values) and ``top_s = 0``."""
    size: ir.Expr = ir.Call(len, (loop.iterable,))
    if per_trip > 1:
        size = ir.Call(operator.mul, (ir.Const(per_trip), size))
    shape = size if width == 1 else ir.Display("tuple", (size, ir.Const(width)))
    return [ir.Assign(stack, ir.Call(float_stack, (shape,)), loop.line), ir.Assign(top, ir.Const(0), loop.line)]


def _at(top: str, column: int, width: int) -> ir.Expr:
    return ir.Var(top) if width == 1 else ir.Display("tuple", (ir.Var(top), ir.Const(column)))


def array_push(stack: str, top: str, push: ir.Push) -> list[ir.Stmt]:
    width = len(push.values)
    stores: list[ir.Stmt] = [ir.Store(stack, _at(top, i, width), v, push.line) for i, v in enumerate(push.values)]
    return stores + [ir.Assign(top, ir.Call(operator.add, (ir.Var(top), ir.Const(1))), push.line)]


def array_pop(stack: str, top: str, pop: ir.Pop) -> list[ir.Stmt]:
    width = len(pop.targets)
    reads: list[ir.Stmt] = [ir.Assign(t, ir.Call(operator.getitem, (ir.Var(stack), _at(top, i, width))), pop.line)
                            for i, t in enumerate(pop.targets)]
    return [ir.Assign(top, ir.Call(operator.sub, (ir.Var(top), ir.Const(1))), pop.line)] + reads


# -- which values are float64 ------------------------------------------------------------------------

def _float_if_one_is(fn: Any) -> bool:
    """``fn`` gives a float64 (or a complex, or an array) when one operand is a float64: the
    arithmetic declared in templates/ (``arithmetic=True``), but ``int``."""
    return bool(rules.fact(fn, "arithmetic")) and fn is not int


def _int_if_all_are(fn: Any) -> bool:
    """``fn`` gives an int when its operands are ints: declared arithmetic, but true division, powers
    (a negative exponent gives a float) and ``float``."""
    return bool(rules.fact(fn, "arithmetic")) and fn is not operator.truediv and fn is not operator.pow \
        and fn is not float


def _inexact_ufunc(fn: Any) -> bool:
    """A NumPy ufunc of one argument none of whose loops gives an integer or a truth value
    (``np.sin`` of an int is a float64; ``np.abs`` of an int is an int; the object loop is a
    Python object's own method, which Numba does not compile)."""
    return language.is_ufunc(fn) and getattr(fn, "nin", 0) == 1 \
        and all(t.split("->")[-1] in "efdgFDGO" for t in getattr(fn, "types", ["?->?"]))


def _float_array_maker(call: ir.Call) -> bool:
    """``call`` makes a new float64 array (``np.zeros(n)``: declared ``makes_floats=`` in templates/)."""
    return not call.kwargs and len(call.args) == rules.fact(call.fn, "makes_floats", -1)


# calls making an array of their argument's dtype and shape: a float64 array of a float64 array
_SAME_DTYPE = frozenset({np.zeros_like, np.ones_like, np.empty_like, np.copy})


class _FloatProof:
    """Which recorded values Numba types as float64, or as what it refuses to store in a float64
    array (see the module docstring)."""

    def __init__(self, fn: ir.Function) -> None:
        self._values: dict[str, list[Optional[ir.Expr]]] = {}
        self._indices: set[str] = set()  # loop indices: ints (a loop runs over a range)
        pushes = [s for s in ir.walk(fn.body) if isinstance(s, ir.Push)]
        for stmt in ir.walk(fn.body):
            if isinstance(stmt, ir.Pop):  # a popped name takes what any push of its slot recorded there
                for i, name in enumerate(stmt.targets):
                    self._values.setdefault(name, []).extend(p.values[i] for p in pushes if p.slot == stmt.slot)
            elif isinstance(stmt, ir.For):
                self._indices.add(stmt.index)
            else:
                for name in ir.targets_of(stmt):  # an unpacked name: not proven
                    self._values.setdefault(name, []).append(stmt.value if isinstance(stmt, ir.Assign) else None)
        for name in fn.params:  # a parameter may be anything
            self._values.setdefault(name, []).append(None)
        # but an array the gradient is taken by holds floats: float64 where Numba runs the code (the API
        # refuses an integer or boolean array, and the target runs other float dtypes as Python)
        self._float_parameters = fn.differentiated
        self._number_parameters = fn.numbers  # (an int, or a float np.zeros refuses where Numba runs it)
        self._proven: dict[tuple[str, str], bool] = {}
        self._vectors = fn.vectors  # (those of them with one axis)
        self._looked_at: set[str] = set()  # the arrays ``_float_array`` is proving now

    def proves(self, expr: ir.Expr, kind: Any) -> bool:
        """``expr``, recorded with the analysis's ``kind`` for it (None: unknown), is a float64.

        Where the analysis knows the value is a number, it is a float64 if it is the result of
        float64 arithmetic (the join of a name's assignments: one float64 among numbers makes it a
        float64); where it does not, only an element of a float64 vector read at an int is."""
        if isinstance(kind, Number) and not kind.truth:
            return self._is("float", expr)
        read = _element(expr)
        return read is not None and self._float_array(read[0], rank=1) and self._is("int", read[1])

    def _is(self, what: str, expr: Optional[ir.Expr]) -> bool:
        if isinstance(expr, ir.Const):
            return type(expr.value) in ((float, np.float64) if what == "float" else (int,))
        if isinstance(expr, ir.Var):
            return self._name(what, expr.name)
        if not isinstance(expr, ir.Call) or expr.kwargs:
            return False
        if what == "int":
            return (_int_if_all_are(expr.fn) and all(self._is("int", a) for a in expr.args)) or expr.fn is len \
                or self._length(expr)
        if rules.fact(expr.fn, "returns_float"):  # (math.sin: a float whatever it is given)
            return True
        if _float_if_one_is(expr.fn):
            return any(self._is("float", a) for a in expr.args)
        if _inexact_ufunc(expr.fn):
            return len(expr.args) == 1
        read = _element(expr)
        return read is not None and self._float_array(read[0], rank=None)

    def _name(self, what: str, name: str) -> bool:
        if what == "int" and name in self._indices:
            return True
        key = (what, name)
        if key not in self._proven:
            self._proven[key] = False  # (a cycle of assignments proves nothing by itself)
            values = self._values.get(name, [None])
            proven = any if what == "float" else all  # the join: one float64 makes a float64; an int needs all
            self._proven[key] = proven(self._is(what, v) for v in values)
        return self._proven[key]

    def _float_array(self, name: str, rank: Optional[int]) -> bool:
        """``name`` is only ever a float64 array made here (of one dimension, where ``rank`` is 1), or is
        an array the gradient is taken by, or the result of a NumPy ufunc of one argument whose loops all
        give inexact numbers (``np.exp(z)``: float64 where Numba runs the code, or a complex, which Numba
        refuses to store in a float64 array) (their rank unknown here: where ``rank`` is None)."""
        if name in self._float_parameters and (rank is None or rank == 1 and name in self._vectors):
            return True
        if name in self._looked_at:  # (a cycle of assignments proves nothing by itself)
            return False
        self._looked_at.add(name)
        try:
            values = self._values.get(name, [None])
            return all(isinstance(v, ir.Call) and (
                (_float_array_maker(v) and (rank is None or (len(v.args) == 1 and self._length_or_refused(v.args[0]))))
                or (rank is None and _inexact_ufunc(v.fn) and len(v.args) == 1 and not v.kwargs)
                or (v.fn in _SAME_DTYPE and len(v.args) == 1 and not v.kwargs and isinstance(v.args[0], ir.Var)
                    and self._float_array(v.args[0].name, rank))) for v in values)
        finally:
            self._looked_at.discard(name)

    def _length_or_refused(self, shape: ir.Expr) -> bool:
        """``np.zeros(shape)`` makes a vector, or refuses ``shape``: an int, or an int plus, minus or
        times a number (a float is refused; so is an array, by Numba)."""
        if self._is("int", shape):
            return True
        if isinstance(shape, ir.Var) and shape.name in self._number_parameters:
            return True  # (a parameter every call passes a number for: an int, or a float Numba refuses)
        if isinstance(shape, ir.Var):
            values = self._values.get(shape.name, [None])
            return all(v is not None and not isinstance(v, ir.Var) and self._length_or_refused(v) for v in values)
        return isinstance(shape, ir.Call) and _int_if_all_are(shape.fn) and len(shape.args) == 2 \
            and not shape.kwargs and any(self._is("int", a) for a in shape.args)

    def _length(self, expr: ir.Call) -> bool:
        """``expr`` is ``shape[k]`` of a name only ever bound to ``np.shape(...)``: an int."""
        read = _element(expr)
        if read is None or not (isinstance(read[1], ir.Const) and type(read[1].value) is int):
            return False
        values = self._values.get(read[0], [None])
        return all(isinstance(v, ir.Call) and v.fn is np.shape for v in values)


def _element(expr: Optional[ir.Expr]) -> Optional[tuple[str, ir.Expr]]:
    """The array and index of ``a[i]``, if that is what ``expr`` is."""
    if isinstance(expr, ir.Call) and expr.fn is operator.getitem and isinstance(expr.args[0], ir.Var):
        return expr.args[0].name, expr.args[1]
    return None


# -- why the stacks' indexes are in range -------------------------------------------------------------

def proven_stacks(fn: ir.Function) -> frozenset[str]:
    """The preallocated stacks of ``fn`` (as ``SlotTape.spell`` wrote them) whose every index is in
    range by their construction, as this checks it on the code itself (the Numba target then
    compiles them without bounds checks, ``index_ranges``):

    * ``tape_s = float_stack(len(steps))`` (or ``((len(steps), w))``) and ``top_s = 0`` at the top
      of the function, ``steps`` bound once, to a range; ``tape_s`` bound nowhere else, ``top_s``
      only by ``top_s = top_s + 1`` and ``top_s = top_s - 1``;
    * every increment in one loop over ``steps`` at the top of the function (run once: at most
      ``len(steps)`` trips), at most one per trip (the larger side of a branch), none in an inner
      loop; every decrement likewise in one loop over ``steps`` or a slice of it;
    * ``tape_s`` read and written only as ``tape_s[top_s]`` (``tape_s[top_s, j]``, ``0 <= j < w``): a
      write followed in its block by the increment, with only such writes between; a read preceded
      in its block by the decrement, with only such reads between.

    Then ``top_s`` is the increments made so far less the decrements, each at most ``len(steps)``:
    a write, before its trip's increment, is at ``top_s <= len(steps) - 1``, a read, after a
    decrement, at ``top_s >= -len(steps)`` (a negative index counts from the end): in range either
    way.  (A stack of more pushes per trip, ``k * len(steps)``, is not proven: the product may wrap.)"""
    assigned: dict[str, int] = {}
    for stmt in ir.walk(fn.body):
        for name in ir.targets_of(stmt):
            assigned[name] = assigned.get(name, 0) + 1
    ranges = range_names(fn.body)
    proven: set[str] = set()
    for position, stmt in enumerate(fn.body[:-1]):
        made, top = _stack_made(stmt), _counter_start(fn.body[position + 1])
        if made is None or top is None:
            continue
        stack, steps, width = made
        if steps in ranges and assigned.get(stack) == 1 \
                and _counted(fn.body, position, _Stack(stack, top, steps, width)):
            proven.add(stack)
    return frozenset(proven)


def _counter_start(stmt: ir.Stmt) -> Optional[str]:
    """``top`` for ``top = 0``."""
    if isinstance(stmt, ir.Assign) and isinstance(stmt.value, ir.Const) and type(stmt.value.value) is int \
            and stmt.value.value == 0:
        return stmt.target
    return None


@dataclasses.dataclass(frozen=True)
class _Stack:
    name: str
    top: str
    steps: str
    width: int


def _stack_made(stmt: ir.Stmt) -> Optional[tuple[str, str, int]]:
    """``(stack, steps, width)`` for ``stack = float_stack(len(steps))`` (``((len(steps), width))``)."""
    if not (isinstance(stmt, ir.Assign) and isinstance(stmt.value, ir.Call) and stmt.value.fn is float_stack
            and len(stmt.value.args) == 1 and not stmt.value.kwargs):
        return None
    shape, width = stmt.value.args[0], 1
    if isinstance(shape, ir.Display) and shape.kind == "tuple" and len(shape.items) == 2:
        columns = shape.items[1]
        if not (isinstance(columns, ir.Const) and type(columns.value) is int and columns.value >= 1):
            return None
        shape, width = shape.items[0], columns.value
    if isinstance(shape, ir.Call) and shape.fn is len and len(shape.args) == 1 and isinstance(shape.args[0], ir.Var):
        return stmt.target, shape.args[0].name, width
    return None


def _counted(body: list[ir.Stmt], position: int, stack: _Stack) -> bool:
    """Whether the statements of ``body`` after the stack's two (at ``position``) change its counter and
    touch it only as ``proven_stacks`` says (before them, not at all)."""
    pushing = popping = 0
    for index, stmt in enumerate(body):
        if index in (position, position + 1) or not _touches(stmt, stack):
            continue
        if index < position or not isinstance(stmt, ir.For) or stmt.checkpoint is not None:
            return False
        over_steps = isinstance(stmt.iterable, ir.Var) and stmt.iterable.name == stack.steps
        sliced = isinstance(stmt.iterable, ir.Call) and stmt.iterable.fn is operator.getitem \
            and stmt.iterable.args[0] == ir.Var(stack.steps) and isinstance(stmt.iterable.args[1], ir.Slice)
        counts = _per_trip(stmt.body, stack)
        if counts is None or counts[0] > 1 or counts[1] > 1 or (counts[0] and counts[1]):
            return False
        if counts[0] and over_steps and not stmt.reverse:
            pushing += 1
        elif counts[1] and (over_steps or sliced):
            popping += 1
        elif counts != (0, 0) or _touches_stack(stmt, stack):
            return False
    return pushing <= 1 and popping <= 1


def _per_trip(block: list[ir.Stmt], stack: _Stack) -> Optional[tuple[int, int]]:
    """The most increments and decrements of the counter one pass through ``block`` makes, where the
    block touches the stack only as ``proven_stacks`` says; None where it does otherwise."""
    up = down = 0
    after: Optional[str] = None  # "write": writes since the last statement; "read": a decrement and reads
    for stmt in block:
        step = _counter_step(stmt, stack.top)
        if isinstance(stmt, ir.If):
            if after == "write" or any(stack.name in ir.names_read(e) for e in ir.exprs_of(stmt)):
                return None
            yes, no = _per_trip(stmt.body, stack), _per_trip(stmt.orelse, stack)
            if yes is None or no is None:
                return None
            up, down, after = up + max(yes[0], no[0]), down + max(yes[1], no[1]), None
        elif ir.blocks(stmt):  # an inner loop: counts not known
            if _touches(stmt, stack):
                return None
            if after == "write":
                return None
            after = None
        elif step == 1:
            up, after = up + 1, None
        elif step == -1:
            down, after = down + 1, "read"
        elif isinstance(stmt, ir.Store) and stmt.array == stack.name and _at_top(stmt.index, stack) \
                and stack.name not in ir.names_read(stmt.value):
            after = "write"
        elif after == "read" and _popped(stmt, stack):
            pass
        elif after == "write" or _touches(stmt, stack):
            return None
        else:
            after = None
    return None if after == "write" else (up, down)


def _popped(stmt: ir.Stmt, stack: _Stack) -> bool:
    """``v = tape_s[top_s]`` (``tape_s[top_s, j]``)."""
    if not (isinstance(stmt, ir.Assign) and isinstance(stmt.value, ir.Call) and stmt.value.fn is operator.getitem):
        return False
    args = stmt.value.args
    return len(args) == 2 and args[0] == ir.Var(stack.name) and _at_top(args[1], stack) \
        and stmt.target not in (stack.name, stack.top)


def _counter_step(stmt: ir.Stmt, top: str) -> int:
    """1 for ``top = top + 1``, -1 for ``top = top - 1``, else 0."""
    if not (isinstance(stmt, ir.Assign) and stmt.target == top and isinstance(stmt.value, ir.Call)):
        return 0
    call, summed = stmt.value, rules.fact(stmt.value.fn, "sum")  # ("+": operator.add, "-": operator.sub)
    if summed in ("+", "-") and len(call.args) == 2 and call.args[0] == ir.Var(top) and not call.kwargs \
            and isinstance(call.args[1], ir.Const) and type(call.args[1].value) is int and call.args[1].value == 1:
        return 1 if summed == "+" else -1
    return 0


def _at_top(index: ir.Expr, stack: _Stack) -> bool:
    """``top`` (a stack of one value per record), or ``(top, j)`` with ``0 <= j < width``."""
    if stack.width == 1:
        return index == ir.Var(stack.top)
    return isinstance(index, ir.Display) and index.kind == "tuple" and len(index.items) == 2 \
        and index.items[0] == ir.Var(stack.top) and isinstance(index.items[1], ir.Const) \
        and type(index.items[1].value) is int and 0 <= index.items[1].value < stack.width


def _touches(stmt: ir.Stmt, stack: _Stack) -> bool:
    """Whether ``stmt`` (nested statements included) binds the counter or the stack, or reads the stack."""
    return any(stack.top in ir.targets_of(s) or stack.name in ir.targets_of(s) for s in ir.walk([stmt])) \
        or _touches_stack(stmt, stack)


def _touches_stack(stmt: ir.Stmt, stack: _Stack) -> bool:
    return any(stack.name in ir.names_read(e) or (isinstance(s, ir.Store) and s.array == stack.name)
               for s in ir.walk([stmt]) for e in ir.exprs_of(s))
