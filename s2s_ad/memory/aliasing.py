"""May-alias and ownership: the one place that decides which names may share memory.

NumPy's rules, as this module states them: basic indexing (integers that do
not name one element, slices, None, Ellipsis), ``.T``, ``reshape`` and every
call a rule declares ``view=True``/``may_view`` may give a view of its first
argument; an advanced index (a list, an integer or boolean array, a truth
value), one element, arithmetic, reductions and every other rule's result is
a new object (``new_object``, ``indexed_view``); a user's function may return
its argument unless its own analysis proves otherwise.  The right side of a
store is read before the store, and NumPy copies an overlapping right side.

Who asks what:

* ``lower.py`` (``Views``, ``new_object``, ``viewing_call``): which arrays the
  function owns and may write into, and which names may view an array written
  since they were bound (read again, chosen by the kinds, or refused).  Every
  value lowering makes is recorded as it was made (``Views.made``: a call of
  atoms, a tuple or list display, a conditional expression's ``Chosen``), so a
  view carried in a tuple, a dict, a record, an object or a helper's result is
  the same view wherever it is read; ``Views.chain`` is how it was taken from
  its array, step by step, where each step is a view whose geometry its
  arguments fix (``retake_kind``: a basic index, an item of a split, a rule
  declared ``retake=``); the same steps made again after a write show what
  NumPy's view shows, and their inverses (an index, or ``write_back=``: a
  reshape, a transpose) carry a write through the view back into the array.
* ``checks.check_element_reads`` (``indexed_view``): whether ``a[i]`` read
  after a write is a view or a copy, once the kinds are known.
* ``reverse.py``/``recording.py`` (``Sharing``): which recorded values need a
  copy (``copy_needed_for_record``), which adjoints a self-store shares
  (``adjoint_shared_with_store``), which handed-out values the reverse sweep
  would change (``handed_out_needs_copy``).
* ``forward.py`` (``Sharing.tangent_needs_copy``, ``result_needs_copy``): a
  tangent may share memory only where its primal does.
* ``optimize.py`` and ``emit.py`` (``Sharing.of_block``, ``fresh_returns``): the
  same analysis of generated code, where a name is bound again and the tape
  passes values on.

Input: IR (``ir.py``) and the rules' declared facts (``rules.py``); no
NumPy array type is named, so a later ``Target`` can reuse the API.  Where a
fact cannot be decided the answers err towards "may share" (a copy, or a
choice made where the code runs), never towards "does not".
"""
from __future__ import annotations

import operator
import types
from collections import Counter
from dataclasses import dataclass
from typing import Any, Callable, Optional, Sequence

import numpy as np

from ..core import ir, runtime
from ..core.identity import Identity
from ..rules import registry as rules


def viewing(fn: Any) -> bool:
    """A call whose result may be a view of its first argument (declared ``view=True`` in templates/)."""
    return bool(rules.fact(fn, "view"))


def viewing_call(call: ir.Call) -> bool:
    """``call`` may give a view of its first argument: ``viewing``, but for an index NumPy reads as
    advanced (``a[[0, 2]]``: a copy)."""
    return viewing(call.fn) and not _advanced_index(call)


class Views:
    """Names that may share memory with an array the function writes into.

    NumPy shows a later write through a view (``v = out[0:2]``, ``out.T``, a
    row ``out[i]``, a list holding ``out``); SSA form treats ``v`` as the
    value it had.  Rather than compute something else than the user's
    function, a read of such a name after a write into its array is refused.
    """

    def __init__(self, buffers: set[str], enabled: bool = True,
                 helper_shares: Callable[[Any], bool] = lambda fn: True, integers: Optional[set[str]] = None) -> None:
        self.enabled = enabled
        # names that hold an integer wherever they are read (a loop's index over a range): B[i] by one is a
        # row (or one number) whose geometry i fixes for as long as i is that index
        self.integers: set[str] = integers if integers is not None else set()
        self.helper_shares = helper_shares  # whether a user's function may return (a view of) an argument
        self.buffers = buffers  # the arrays the function made (shared with Lowering)
        self.root: dict[str, str] = {}  # SSA name -> the array it may view
        self.seen: dict[str, int] = {}  # SSA name -> writes into its array when it was bound
        self.writes: Counter = Counter()
        self.stale: set[str] = set()  # views bound before a loop that writes into their array
        self.others: dict[str, list[tuple[str, int]]] = {}  # a joined name's further arrays, as seen
        self.made: dict[str, Any] = {}  # SSA name -> the call (atoms for arguments) or display that made it
        self.made_in: dict[str, Optional[Identity]] = {}  # SSA name -> the nested block it was made in
        # names that may hold a view taken again by its positions (runtime.retaken_view: a copy with the
        # view's values), itself or through a container, a join or a call: no view where the code runs, so
        # never the value whose positions view_positions looks for (lower_views.ViewRetaking.by_positions)
        self.positioned: set[str] = set()

    def root_of(self, expr: Any) -> Optional[str]:
        if isinstance(expr, ir.Var):
            return expr.name if expr.name in self.buffers else self.root.get(expr.name)
        if isinstance(expr, ir.Display) or (isinstance(expr, ir.Call) and _may_view(expr.fn, expr) and (
                _listed(expr.fn, expr) or self.helper_shares(expr.fn))):
            # (a view's index or shape shares nothing: v[v > 0.0] may view v, never the mask)
            roots = [self.root_of(e) for e in (expr.items if isinstance(expr, ir.Display) else _passed_on(expr))]
            return next((r for r in roots if r is not None), None)
        return None

    def bound(self, name: str, value: Any) -> None:
        if self._holds_positioned(value):
            self.positioned.add(name)
        if isinstance(value, ir.Display):  # t = (b[:2], b[2:]): every item's array, each as its item saw it
            self.joined(name, value)
            return
        root = self.root_of(value) if not isinstance(value, ir.Var) else None
        if root is not None:
            self.root[name], self.seen[name] = root, self.writes[root]

    def joined(self, name: str, value: Any) -> None:
        """``name = value`` joins control flow (a branch's value, a loop's carried one): ``name`` may
        view whatever ``value`` views, as it was when ``value`` was bound (the earliest of the joins)."""
        if isinstance(value, ir.Display):  # (b[:2], b[2:]) on one path: each item's array, as it was seen
            for item in value.items:
                self.joined(name, item)
            return
        if self._holds_positioned(value):
            self.positioned.add(name)
        if not (isinstance(value, ir.Var) and value.name in self.root):
            return
        for root, seen in self.views_of(value.name):
            if name not in self.root:
                self.root[name], self.seen[name] = root, seen
            else:
                self.others.setdefault(name, []).append((root, seen))
        if value.name in self.stale:
            self.stale.add(name)

    def _holds_positioned(self, expr: Any) -> bool:
        """``expr`` may hold a value in ``positioned`` (followed as ``root_of`` follows views)."""
        if isinstance(expr, ir.Var):
            return expr.name in self.positioned
        if isinstance(expr, ir.Display):
            return any(self._holds_positioned(e) for e in expr.items)
        if isinstance(expr, ir.Call):
            return expr.fn is runtime.retaken_view or (_may_view(expr.fn, expr) and any(
                self._holds_positioned(e) for e in _passed_on(expr)))
        return False

    def views_of(self, name: str) -> list[tuple[str, int]]:
        """Each array ``name`` may view, with the number of writes into it when it was bound."""
        return [(self.root[name], self.seen[name])] + self.others.get(name, [])

    def wrote(self, array: str) -> None:
        self.writes[array] += 1

    def outdated(self, name: str) -> Optional[str]:
        """The array ``name`` views, if it has been written since ``name`` was bound."""
        if not self.enabled or name not in self.root:
            return None
        for root, seen in self.views_of(name):
            if name in self.stale or self.writes[root] > seen:
                return root
        return None

    def chain(self, name: str, root: str) -> Optional[list[tuple[str, ir.Call, str]]]:
        """How ``name`` was taken from ``root``: each step's name and call, first to last, where every step
        is a view whose geometry its arguments fix (``retake_kind``), so the same calls made again now
        show what NumPy's view shows after a write into ``root``.  An item of a tuple, list or split is
        followed to the item.  Each step comes with its ``retake_kind``.  None where a step is anything
        else (a helper's result, a join, np.flip)."""
        steps: list[tuple[str, ir.Call, str]] = []
        visited: set[str] = set()
        while name != root:
            made = self.made.get(name)
            if name in visited or not (isinstance(made, ir.Call) and made.args and isinstance(made.args[0], ir.Var)):
                return None
            visited.add(name)
            held = self.made.get(made.args[0].name)
            item = _item_of_display(made, held)
            if item is not None:  # (b[:2], b[2:])[0] is b[:2]
                name = item
                continue
            kind = retake_kind(made, held, self.integers)
            if kind is None:
                return None
            steps.append((name, made, kind))
            name = made.args[0].name
        return steps[::-1]


@dataclass(frozen=True)
class Chosen:
    """What a conditional expression's merge variable holds: ``values[0]`` where ``test`` is true, else
    ``values[1]`` (atoms or displays of atoms), so that a view in it can be chosen again after a write."""

    test: ir.Expr
    values: tuple


def _item_of_display(call: ir.Call, held: Any) -> Optional[str]:
    """The name of the item ``call`` reads from a tuple or list display ``held`` by a constant index."""
    if not (call.fn is operator.getitem and isinstance(held, ir.Display) and isinstance(call.args[1], ir.Const)):
        return None
    index, items = call.args[1].value, held.items
    if not (isinstance(index, int) and -len(items) <= index < len(items)):
        return None
    item = items[index]
    return item.name if isinstance(item, ir.Var) else None


def retake_kind(call: ir.Call, held: Any = None, integers: frozenset[str] | set[str] = frozenset()) -> Optional[str]:
    """``"always"`` where ``call`` is certainly a view of its first argument whose geometry the other
    arguments fix (a basic index with a slice, ``None`` or ``...``, and constants; an item of a split's
    list; a rule declared ``retake="always"``); ``"contiguous"`` where it may be one, which the code
    checks where it runs (``np.reshape``: a view of a C-contiguous array; ``B[0]``: a row of a matrix,
    one number of a vector); else None (not a view to take again).  ``integers``: names holding an
    integer (a range loop's index), basic parts too."""
    if call.fn is runtime.retaken_view:  # a view taken again by its positions: the same, by the same ones
        return "always"
    if call.fn is operator.getitem:
        parts = ir.index_parts(call.args[1])
        basic = all(_basic_part(p) or (isinstance(p, ir.Var) and p.name in integers) for p in parts)
        if basic and any(isinstance(p, ir.Slice) or (isinstance(p, ir.Const) and (p.value is None or p.value is Ellipsis))
                         for p in parts):
            return "always"
        split = isinstance(held, ir.Call) and rules.fact(held.fn, "retake") == "always" and \
            rules.fact(held.fn, "returns_sequence")
        if split and basic and len(parts) == 1:
            return "always"
        # B[0]: a row of a matrix (a view) or one number of a vector (a copy): checked where the code runs
        return "contiguous" if basic else None
    try:
        how = rules.fact(call.fn, "retake")
    except TypeError:  # an unhashable callable
        return None
    return how if how in ("always", "contiguous") else None


def _basic_part(part: Any) -> bool:
    """A constant integer, None, ``...`` or a slice of atoms: a part NumPy reads as basic indexing."""
    if isinstance(part, ir.Slice):
        return all(p is None or isinstance(p, (ir.Const, ir.Var)) for p in (part.lower, part.upper, part.step))
    return isinstance(part, ir.Const) and (part.value is None or part.value is Ellipsis or (
        isinstance(part.value, int) and not isinstance(part.value, bool)))

# The parts of an index as NumPy's view rule sees them (``index_part`` in analysis.py classifies them).
INTEGER, SLICE, NEW_AXIS, ADVANCED, UNKNOWN = "integer", "slice", "new axis", "advanced", "unknown"


def indexed_view(parts: Sequence[str], rank: Optional[int]) -> Optional[bool]:
    """NumPy's rule for ``a[index]``: a view where every part is basic (an integer, a slice, None or
    Ellipsis) and the integers do not name one element; a copy where a part is advanced (an integer
    or boolean array, a list, a truth value) or the integers name one element of an array of rank
    ``rank``.  None where the parts or the rank leave it open."""
    if ADVANCED in parts:
        return False
    if UNKNOWN in parts:
        return None
    if SLICE in parts or NEW_AXIS in parts:
        return True
    return None if rank is None else rank > len(parts)


def _advanced_index(call: Optional[ir.Call]) -> bool:
    """``a[[0, 2]]``, ``a[0, [1, 2]]``: an index holding a list display is advanced (a copy)."""
    if call is None or call.fn is not operator.getitem or len(call.args) != 2:
        return False
    return any(isinstance(p, ir.Display) and p.kind == "list" for p in ir.index_parts(call.args[1]))


def new_object(call: ir.Call, helper_shares: Callable[[Any], bool]) -> bool:
    """True if ``call`` returns an object of its own (a new array, or a number): NumPy computes the
    result of arithmetic, a reduction, a sort, a solve... into new memory; a rule declared ``view=True``
    or ``may_view`` (``x.T``, ``np.asarray``), ``returns_operand`` (``max``) or a user's function that may
    return its argument (``helper_shares``) may hand back memory the caller already holds."""
    fn = call.fn
    if isinstance(fn, ir.Part):
        return False
    try:
        hash(fn)
    except TypeError:  # an unhashable callable
        return False
    if rules.declared_fresh_value(fn):
        return True
    if isinstance(fn, types.FunctionType) and not rules.is_known(fn):
        return not helper_shares(fn)
    if rules.fact(fn, "joins_sequences") and any(isinstance(a, ir.Display) for a in call.args):
        return False  # [x[0]] + [x[1]]: a list joined from items, not an array it may write into
    return rules.is_known(fn) and not _may_view(fn, call) and not rules.fact(fn, "returns_operand")


def _listed(fn: Any, call: Optional[ir.Call] = None) -> bool:
    """``fn`` is declared to give back a view, its argument itself (np.asarray(a) is a) or a list
    holding it (``view=True`` or ``may_view=True`` in templates/; ``may_view`` a function of the
    number of positional arguments where only some calls do: np.einsum of one operand)."""
    if rules.fact(fn, "view"):
        return not _advanced_index(call)
    may = rules.fact(fn, "may_view")
    if callable(may):
        return call is None or bool(may(len(call.args)))
    return bool(may)


def _may_view(fn: Any, call: Optional[ir.Call] = None) -> bool:
    """A call whose result may share memory with its arguments: a view-making call, or a user's
    function (it may return its argument, or a view of it)."""
    try:
        hash(fn)
    except TypeError:  # an unhashable callable
        return True
    if _listed(fn, call):
        return True
    # a generated part of a helper's adjoint returns what the helper does, and its tape holds arguments
    return isinstance(fn, ir.Part) or (isinstance(fn, types.FunctionType) and not rules.is_known(fn))


def shared_operands(expr: Any) -> set[str]:
    """The variables whose memory the value of ``expr`` (an IR tree) may share: the variable itself,
    the items of a display, the operands of a view-making call or of a user's function."""
    if isinstance(expr, ir.Var):
        return {expr.name}
    if isinstance(expr, ir.Display):
        return {n for e in expr.items for n in shared_operands(e)}
    if isinstance(expr, ir.Call) and _may_view(expr.fn, expr):
        return {n for e in _passed_on(expr) for n in shared_operands(e)}
    return set()


def returns_shared(fn: ir.Function) -> bool:
    """True if the SSA function ``fn`` may return one of its arguments, a view of one, or a
    container holding one."""
    returned = [s.value for s in ir.walk(fn.body) if isinstance(s, ir.Return)]
    sharing = Sharing(fn)
    return any(sharing.operands(value) & set(fn.params) for value in returned)


def fresh_returns(fn: ir.Function) -> bool:
    """True if every array the generated function ``fn`` returns is surely a new object of its own:
    each name in its returned displays (``return out, (d_x, d_y)``) is bound, everywhere it is bound,
    to a constant, to a call making a new object (``new_object``, a user's function counted as
    sharing) or to another such name; and no two of them may share memory (``Sharing.of_block``).
    Then the caller need not compare the gradients with the arguments before handing them out.

    Anything else (a parameter, a value popped from the tape, an unpacked item, a loop index, an
    expression) makes the answer False: the caller compares at run time, as without this."""
    bindings: dict[str, list[ir.Stmt]] = {}
    for stmt in ir.walk(fn.body):
        for target in ir.targets_of(stmt):
            bindings.setdefault(target, []).append(stmt)
    returned = _returned_names(fn)
    if returned is None:
        return False
    proven: dict[str, bool] = {}

    def fresh(name: str) -> bool:
        if name not in proven:
            proven[name] = True  # assumed while its bindings are looked at: a cycle of copies adds nothing
            proven[name] = name not in fn.params and bool(bindings.get(name)) and all(
                _fresh_binding(stmt, fresh) for stmt in bindings[name])
        return proven[name]

    if not all(fresh(name) for name in returned):
        return False
    sharing = Sharing.of_block(fn.body)
    return not any(sharing.shares(a, b) for i, a in enumerate(returned) for b in returned[i + 1:])


def _returned_names(fn: ir.Function) -> Optional[list[str]]:
    """The names the function's returns hand out, inside (nested) tuple displays; None if one returns
    anything else (an expression, a list display)."""
    names: list[str] = []

    def leaves(expr: ir.Expr) -> bool:
        if isinstance(expr, ir.Var):
            names.append(expr.name)
            return True
        if isinstance(expr, ir.Const):
            return _immutable(expr.value)  # (a module-level array, folded in, is the module's own object)
        return isinstance(expr, ir.Display) and expr.kind == "tuple" and all(leaves(e) for e in expr.items)

    returns = [s for s in ir.walk(fn.body) if isinstance(s, ir.Return)]
    if not returns or not all(leaves(s.value) for s in returns):
        return None
    return names


def _fresh_binding(stmt: ir.Stmt, fresh: Callable[[str], bool]) -> bool:
    """``stmt`` binds its target to a constant, a new object or a name ``fresh`` proves new."""
    if not isinstance(stmt, ir.Assign):
        return False  # an unpacked item, a popped record, a loop index
    value = stmt.value
    if isinstance(value, ir.Const):
        return _immutable(value.value)
    if isinstance(value, ir.Var):
        return fresh(value.name)
    return isinstance(value, ir.Call) and new_object(value, lambda _: True)


def _immutable(value: Any) -> bool:
    """Whether a constant of generated code is a value no one can change or hold as shared memory (a
    number, string, None, or a tuple of them): unlike an array or list the user's module holds."""
    if isinstance(value, tuple):
        return all(_immutable(v) for v in value)
    return value is None or isinstance(value, (bool, int, float, complex, str, np.generic))


def _shape_only(fn: Any) -> tuple[int, ...]:
    """The positions of the arguments a generated call reads for their shape (and dtype) only, declared
    ``shape_only=`` in templates/ (runtime.unbroadcast): a write into such an array since changes neither."""
    like = rules.fact(fn, "shape_only")
    return () if like is None else (like,) if isinstance(like, int) else tuple(like)


def _without_shape_only(call: ir.Call, like: tuple[int, ...]) -> tuple[ir.Expr, ...]:
    """The arguments of ``call`` but those at the positions ``like`` (read for their shape only)."""
    return tuple(a for i, a in enumerate(call.args) if i not in like) + tuple(v for _, v in call.kwargs)


def values_read(expr: ir.Expr) -> set[str]:
    """The names whose contents (not only shape) ``expr`` reads."""
    if isinstance(expr, ir.Call):
        like = _shape_only(expr.fn)
        if like:
            return {n for e in _without_shape_only(expr, like) for n in values_read(e)}
    if isinstance(expr, ir.Var):
        return {expr.name}
    return {n for e in ir.children(expr) for n in values_read(e)}


def _passed_on(call: ir.Call) -> tuple[ir.Expr, ...]:
    """The operands of a call that may share memory with its result: the array a view is taken of
    (not the index or shape), every item of a list it grows, every argument of a user's function
    but one read for its shape only."""
    if viewing(call.fn) and call.args:
        return call.args[:1]
    like = _shape_only(call.fn)
    return _without_shape_only(call, like) if like else tuple(ir.children(call))


class Sharing:
    """A may-alias analysis of an SSA function: which arrays each name may share memory with.

    Every array the function holds is made somewhere: a parameter, or a
    statement whose value is a new array (arithmetic, ``np.zeros``, a copy).
    ``roots[name]`` is the set of those that ``name`` may be, or view, or
    hold (a list of arrays holds its items).  A view-making call, a user's
    function, a copy, a merge or a container shares its operands' roots;
    any other call makes a new root, its own name.  The analysis is
    flow-insensitive (a fixed point over all statements), hence sound for
    loops and branches.

    ``written`` is the roots some ``Store`` writes into; ``stale`` the names
    bound to memory of another root that a ``Store`` may write *after* the
    binding (later in program order, or anywhere in a loop around both):
    what such a name holds when it is read later need not be what it held
    when it was bound.
    """

    def __init__(self, fn: ir.Function, only_if_written: bool = False,
                 numbers: frozenset[str] = frozenset(), find_stale: bool = True) -> None:
        """With ``only_if_written``, a function that writes into no array is not analysed: nothing
        it binds can change, which is all ``written``, ``stale`` and ``may_change`` tell.
        ``numbers``: names known to hold a number wherever they are bound, which share memory with
        nothing (``a[i]`` of a vector is one: without them, it would share ``a``'s root)."""
        self.numbers = numbers
        self.roots: dict[str, frozenset[str]] = {p: frozenset((p,)) for p in fn.params}
        stores = [s for s in ir.walk(fn.body) if isinstance(s, ir.Store)]
        if stores or not only_if_written:
            self._solve(fn.params, fn.body)
        self.written: frozenset[str] = frozenset(r for s in stores for r in self.of(s.array))
        self.stale: set[str] = set()
        if stores and find_stale:
            self._find_stale(fn.body, frozenset())

    @classmethod
    def of_block(cls, body: list[ir.Stmt], numbers: frozenset[str] = frozenset()) -> "Sharing":
        """The same analysis of generated code, which is not SSA (a name bound again may be what any
        of its bindings made) and passes values through the tape (a pop may give back anything its
        slot's pushes recorded)."""
        return cls(ir.Function("<block>", [], body), numbers=numbers, find_stale=False)

    def of(self, name: str) -> frozenset[str]:
        """The roots ``name`` may share memory with (its own name when nothing is known)."""
        return self.roots.get(name, frozenset((name,)))

    def shares(self, a: str, b: str) -> bool:
        """True if ``a`` and ``b`` may share memory."""
        return bool(self.of(a) & self.of(b))

    may_share = shares

    def owns(self, name: str) -> bool:
        """True if ``name`` holds memory of its own: no parameter's and no other array's."""
        return self.of(name) <= {name}

    def copy_needed_for_record(self, name: str) -> bool:
        """True if ``name``, recorded for the reverse sweep, must be copied where it is bound: it may
        share memory that a store writes after the binding (a view of an array written later)."""
        return name in self.stale

    def may_change(self, name: str) -> bool:
        """True if some store may write into memory ``name`` shares."""
        return bool(self.of(name) & self.written)

    def handed_out_needs_copy(self, name: str, put_back: frozenset[str]) -> bool:
        """True if ``name``, handed to the caller (the result, an auxiliary result), may share memory
        with an array whose overwritten slices the reverse sweep puts back in place (``put_back``): the
        caller must get a copy taken before, or it would see the array's initial values."""
        return any(self.shares(name, array) for array in put_back)

    def tangent_needs_copy(self, target: str, shared: set[str]) -> bool:
        """True if the tangent of ``target``, which may share memory with the tangents of ``shared``
        (primal names), must be a copy: tangent statements mirror primal ones, so a tangent may share
        memory only where its primal does (``t = b[1:3]`` views ``b``, ``t = b[1:3] - 1.0`` does not), and
        sharing it elsewhere is wrong once a store writes into either (``b[1:3] = t * t``)."""
        return any(p != target and not self.shares(target, p) and (self.may_change(p) or self.may_change(target))
                   for p in shared)

    def result_needs_copy(self, target: str, shared: set[str]) -> bool:
        """True if the tangent (or value) of ``target``, the result of a user's function given
        ``shared``, must be copied: the helper may hand back its argument's tangent, and a store may
        write into either (this analysis takes a helper's result to share with its arguments, so the
        mirror rule of ``tangent_needs_copy`` cannot tell)."""
        return self.may_change(target) or any(self.may_change(p) for p in shared)

    @staticmethod
    def adjoint_shared_with_store(value: str, array: str) -> bool:
        """True if the adjoint of ``value``, stored into ``array`` (``b[::-1] = b``), is the adjoint the
        store zeroes: in SSA form only the array itself is (a view of it has an adjoint of its own)."""
        return value == array

    def operands(self, expr: ir.Expr) -> frozenset[str]:
        """The roots of the arrays ``expr`` passes on (a variable, the items of a display, or the
        arguments of a call that may share them)."""
        if isinstance(expr, ir.Var):
            return self.of(expr.name)
        if isinstance(expr, ir.Display):
            return frozenset(r for e in expr.items for r in self.operands(e))
        if isinstance(expr, ir.Call) and _may_view(expr.fn, expr):
            return frozenset(r for e in _passed_on(expr) for r in self.operands(e))
        return frozenset()

    def _value_roots(self, target: str, value: ir.Expr) -> frozenset[str]:
        if isinstance(value, (ir.Var, ir.Display)):
            return self.operands(value)
        if isinstance(value, ir.Call) and _may_view(value.fn, value):
            # a user's function may also return a new array: its own root too
            return self.operands(value) | {target}
        return frozenset((target,))

    def _solve(self, params: Sequence[str], body: list[ir.Stmt]) -> None:
        """The least solution of the constraints the statements state (``_constraints``): a name's
        roots are its own, if it makes memory, and those of every name its bindings pass on.  Solved
        once per strongly connected group of names (a loop's carried values form one), in the order
        the groups depend on each other: linear in the statements, whatever their order."""
        own, sources = _constraints(params, body, self.numbers)
        for group in _groups_in_dependency_order(sources):
            members = set(group)
            roots = set().union(*(own.get(n, ()) for n in group))
            for name in group:
                for source in sources.get(name, ()):
                    if source not in members:
                        roots |= self.of(source)
            if roots:
                solved = frozenset(roots)
                for name in group:
                    self.roots[name] = solved

    def _find_stale(self, body: list[ir.Stmt], around: frozenset[str]) -> None:
        """Mark names bound in ``body`` whose other roots a later store writes: later in ``body``,
        or among ``around`` (written after ``body``, or anywhere in a loop around it)."""
        written_in = [self._written_in(stmt) for stmt in body]
        later = around
        after: list[frozenset[str]] = []
        for roots in reversed(written_in):  # after[i]: the roots written after statement i
            after.append(later)
            later = later | roots
        after.reverse()
        for i, stmt in enumerate(body):
            for name in ir.targets_of(stmt):
                if (self.of(name) - {name}) & after[i]:
                    self.stale.add(name)
            inner_around = after[i] | (written_in[i] if isinstance(stmt, (ir.For, ir.While)) else frozenset())
            for inner in ir.blocks(stmt):
                self._find_stale(inner, inner_around)

    def _written_in(self, stmt: ir.Stmt) -> frozenset[str]:
        """The roots the stores in ``stmt`` (and the blocks it holds) write."""
        if isinstance(stmt, ir.Store):
            return self.of(stmt.array)
        return frozenset(r for s in ir.walk([stmt]) if isinstance(s, ir.Store) for r in self.of(s.array))


def _slot(slot: Any) -> str:
    """The name standing for a tape slot among ``Sharing``'s roots (no variable is spelled so)."""
    return f"<tape slot {slot}>"


def _constraints(params: Sequence[str], body: list[ir.Stmt], numbers: frozenset[str]
                 ) -> tuple[dict[str, set[str]], dict[str, set[str]]]:
    """What ``body``'s bindings say of the memory each name may share, as two maps: ``own[name]``,
    the roots it makes itself (a new array, a parameter, a loop index; a call that may view its
    operands may also return something new); ``sources[name]``, the names whose roots it may take
    on (the operands a view, a display, a copy or a user's function passes on, a tape slot's
    pushes).  A name bound again (generated code) takes on what every binding says.  ``numbers``
    share nothing and take on nothing: they are their own root."""
    own: dict[str, set[str]] = {p: {p} for p in params}
    sources: dict[str, set[str]] = {}

    def bind(name: str, passed_on: set[str], makes: set[str]) -> None:
        if name in numbers:
            return
        sources.setdefault(name, set()).update(passed_on)
        if makes:
            own.setdefault(name, set()).update(makes)

    for stmt in ir.walk(body):
        if isinstance(stmt, ir.Assign):
            value = stmt.value
            if isinstance(value, (ir.Var, ir.Display)):
                bind(stmt.target, shared_operands(value), set())
            elif isinstance(value, ir.Call) and _may_view(value.fn, value):
                # a view is its array's memory; a user's function or np.asarray may also make some
                bind(stmt.target, shared_operands(value), set() if viewing_call(value) else {stmt.target})
            else:
                bind(stmt.target, set(), {stmt.target})
        elif isinstance(stmt, ir.Unpack):  # every item may be any part of the value, or new
            for target in stmt.targets:
                bind(target, shared_operands(stmt.value), set(stmt.targets))
        elif isinstance(stmt, ir.For):
            bind(stmt.index, set(), {stmt.index})
        elif isinstance(stmt, ir.Push):  # the slot holds what its pushes recorded
            bind(_slot(stmt.slot), {n for v in stmt.values for n in shared_operands(v)}, set())
        elif isinstance(stmt, ir.Pop):
            for target in stmt.targets:
                bind(target, {_slot(stmt.slot)}, {target})
    return own, sources


def _groups_in_dependency_order(sources: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected groups of the graph ``name -> sources[name]``, each after every group
    it reaches (Tarjan's algorithm, with an explicit stack: a chain of thousands of values must not
    exhaust Python's recursion)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    on_stack: set[str] = set()
    stack: list[str] = []
    groups: list[list[str]] = []
    for start in sources:
        if start in index:
            continue
        work: list[tuple[str, Any]] = [(start, iter(sources.get(start, ())))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            name, successors = work[-1]
            for successor in successors:
                if successor not in index:
                    index[successor] = low[successor] = len(index)
                    stack.append(successor)
                    on_stack.add(successor)
                    work.append((successor, iter(sources.get(successor, ()))))
                    break
                if successor in on_stack:
                    low[name] = min(low[name], index[successor])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[name])
                if low[name] == index[name]:
                    group = []
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        group.append(member)
                        if member == name:
                            break
                    groups.append(group)
    return groups
