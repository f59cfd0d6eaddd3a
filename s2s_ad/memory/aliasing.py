"""NumPy's rules of memory, stated once: which calls give views, how a view is taken again and
written back, and which values are new objects.

Basic indexing (integers that do not name one element, slices, None, Ellipsis), ``.T``,
``reshape`` and every call a rule declares ``view=True``/``may_view`` may give a view of its first
argument; an advanced index (a list, an integer or boolean array, a truth value), one element,
arithmetic, reductions and every other rule's result is a new object (``new_object``,
``indexed_view``); a user's function may return its argument unless its own analysis proves
otherwise.  The right side of a store is read before the store, and NumPy copies an overlapping
right side.  A view whose geometry its arguments fix (``retake_kind``: a basic index, an item of a
split, a rule declared ``retake=``) can be taken again from its base after a write, and its
inverse (an index, or ``write_back=``: a reshape, a transpose) carries a write through it back.

The memory model applies these rules in two places, and nowhere else: ``memory.views`` to the
names of a function being lowered (every view and its base, the writes into each base), and
``memory.sharing`` to IR (which names the generators, passes and targets must treat as one object).
``analysis.checks`` asks ``indexed_view`` whether ``a[i]`` read after a write is a view or a copy
once the kinds are known.

Input: IR (``ir.py``) and the rules' declared facts (``rules.registry``); no NumPy array type is
named, so another target's library follows the same rules.  Where a fact cannot be decided the
answers err towards "may share" (a copy, or a choice made where the code runs), never towards "does
not".
"""
from __future__ import annotations

import operator
import types
from dataclasses import dataclass
from typing import Any, Callable, Optional, Sequence

import numpy as np

from ..core import ir, language, runtime
from ..rules import registry as rules


def viewing(fn: Any) -> bool:
    """A call whose result may be a view of its first argument (declared ``view=True`` in templates/)."""
    return bool(rules.fact(fn, "view"))


def viewing_call(call: ir.Call) -> bool:
    """``call`` may give a view of its first argument: ``viewing``, but for an index NumPy reads as
    advanced (``a[[0, 2]]``: a copy)."""
    return viewing(call.fn) and not _advanced_index(call)


@dataclass(frozen=True)
class Chosen:
    """What a conditional expression's merge variable holds: ``values[0]`` where ``test`` is true, else
    ``values[1]`` (atoms or displays of atoms), so that a view in it can be chosen again after a write."""

    test: ir.Expr
    values: tuple


def item_of_display(call: ir.Call, held: Any) -> Optional[str]:
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
        basic = all(basic_part(p) or (isinstance(p, ir.Var) and p.name in integers) for p in parts)
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


def basic_part(part: Any) -> bool:
    """A constant integer, None, ``...`` or a slice of atoms: a part NumPy reads as basic indexing."""
    if isinstance(part, ir.Slice):
        return all(p is None or isinstance(p, (ir.Const, ir.Var)) for p in (part.lower, part.upper, part.step))
    return isinstance(part, ir.Const) and (part.value is None or part.value is Ellipsis or (
        language.is_integer_value(part.value) and not isinstance(part.value, bool)))

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
    return rules.is_known(fn) and not may_view(fn, call) and not rules.fact(fn, "returns_operand")


def listed_view(fn: Any, call: Optional[ir.Call] = None) -> bool:
    """``fn`` is declared to give back a view, its argument itself (np.asarray(a) is a) or a list
    holding it (``view=True`` or ``may_view=True`` in templates/; ``may_view`` a function of the
    number of positional arguments where only some calls do: np.einsum of one operand)."""
    if rules.fact(fn, "view"):
        return not _advanced_index(call)
    may = rules.fact(fn, "may_view")
    if callable(may):
        return call is None or bool(may(len(call.args)))
    return bool(may)


def may_view(fn: Any, call: Optional[ir.Call] = None) -> bool:
    """A call whose result may share memory with its arguments: a view-making call, or a user's
    function (it may return its argument, or a view of it)."""
    try:
        hash(fn)
    except TypeError:  # an unhashable callable
        return True
    if listed_view(fn, call):
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
    if isinstance(expr, ir.Call) and may_view(expr.fn, expr):
        return {n for e in passed_on(expr) for n in shared_operands(e)}
    return set()


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


def passed_on(call: ir.Call) -> tuple[ir.Expr, ...]:
    """The operands of a call that may share memory with its result: the array a view is taken of
    (not the index or shape), every item of a list it grows, every argument of a user's function
    but one read for its shape only."""
    if viewing(call.fn) and call.args:
        return call.args[:1]
    like = _shape_only(call.fn)
    return _without_shape_only(call, like) if like else tuple(ir.children(call))
