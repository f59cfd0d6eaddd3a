"""The Numba target's compiled versions of ``templates/numpy_shape.py``'s adjoints of joining arrays:
``concatenate_grad`` (np.concatenate), ``stack_grad`` (np.stack) and ``joined_grad`` (np.hstack,
np.vstack, np.dstack, np.column_stack); and np.concatenate and np.stack of a list of arrays (Numba's
own join tuples only, and a list is what users write: ``np.concatenate([a, b])``).

Input: the adjoint of the joined array, the arrays joined (a list or tuple of float or integer arrays
of one rank: NumPy joins no other under these rules' compiled form) and how they were joined.  Output:
a list of one piece per array, of that array's shape, cut from the adjoint along the axis they were
joined on: each piece a new array (the Python helpers hand out views of the adjoint; no generated code
writes into either).  A display mixing arrays with lists or tuples of numbers (``np.concatenate([[t],
x])``, prepending a number) is joined as the tuple of their ``np.asarray``: a list of numbers is a
vector to NumPy, and its piece of the adjoint a vector too.  Arrays of different ranks, bare numbers
among them, or a joining not known when compiling run as Python.  np.concatenate of one array given for
the sequence joins its rows, as NumPy iterates it (the adjoint of a list of equal arrays is such an
array).

Each version must do what the Python function does for the types it accepts
(tests/targets/test_numba_joining.py compares the two); Numba is imported by no module here when loaded
(``numba.rules``).
"""
from __future__ import annotations

import functools
from typing import Any, Callable, Optional

import numpy as np

from ....rules import compiled
from ..kernels import axis_position, lengths_around, tuple_setitem as shared_tuple_setitem, written_out
from .argument_types import axis_form, is_none
from .template_modules import template

shape = template("numpy_shape")


def _rank_of_items(types: Any, arrays: Any) -> Optional[int]:
    """The rank every item of ``arrays`` has (a list or tuple of arrays of one rank), else None."""
    if isinstance(arrays, (types.List, types.UniTuple)):
        items = [arrays.dtype]
    elif isinstance(arrays, types.BaseTuple) and len(arrays) > 0:
        items = list(arrays.types)
    else:
        return None
    if not all(isinstance(item, types.Array) for item in items):
        return None
    ranks = {item.ndim for item in items}
    return ranks.pop() if len(ranks) == 1 else None


def _mixed_items(types: Any, arrays: Any) -> Optional[int]:
    """The count of items of ``arrays``, a list display or tuple mixing arrays with lists or tuples of
    numbers (each such item a vector to NumPy), all of one rank once so read; else None (arrays of one
    type alone take the paths above)."""
    if not isinstance(arrays, (types.LiteralList, types.BaseTuple)) or isinstance(arrays, types.UniTuple) \
            or len(arrays.types) == 0:
        return None
    ranks = set()
    for item in arrays.types:
        if isinstance(item, types.Array) and item.ndim >= 1:
            ranks.add(item.ndim)
        elif _numbers_sequence(types, item):
            ranks.add(1)
        else:
            return None
    if len(ranks) != 1 or all(isinstance(item, types.Array) for item in arrays.types):
        return None
    return len(arrays.types)


def _mixed_rank(types: Any, arrays: Any) -> int:
    """The rank of the items of a mixed display (``_mixed_items``): a list of numbers among them, 1."""
    return 1 if _numbers_sequence(types, arrays.types[0]) else arrays.types[0].ndim


def _numbers_sequence(types: Any, item: Any) -> bool:
    """A list or tuple of numbers of one kind (booleans aside: NumPy joins them as booleans)."""
    if isinstance(item, (types.List, types.UniTuple)):
        return isinstance(item.dtype, (types.Float, types.Integer)) and not isinstance(item.dtype, types.Boolean)
    return False


@functools.cache
def _as_arrays(count: int) -> Any:
    """``as_arrays(items)``: the tuple of ``np.asarray`` of each of ``count`` items (compiled; Numba reads
    a mixed display's items by constant index only, so written out for the count)."""
    from numba.extending import register_jitable
    items = ", ".join(f"np.asarray(items[{k}])" for k in range(count))
    source = f"def as_arrays(items):\n    return ({items},)\n"
    return register_jitable(written_out(source, "as_arrays", f"as_arrays {count}"))


def _float_adjoint(types: Any, grad: Any) -> bool:
    return isinstance(grad, types.Array) and grad.dtype in (types.float64, types.float32)


@functools.cache
def _cutting() -> Any:
    """``shapes_of_tuple(arrays)`` and ``shapes_of_items(arrays)`` (each item's shape, in a list: of a tuple
    of arrays of different layouts, of a list or a tuple of one type) and
    ``cut(grad, axis, sizes, shapes)``: ``grad`` cut along ``axis`` into pieces of ``sizes`` positions,
    each reshaped to its entry of ``shapes`` (compiled functions, Numba imported, built once)."""
    from numba import literal_unroll
    from numba.extending import register_jitable
    around = lengths_around()

    @register_jitable
    def shapes_of_tuple(arrays):  # (items of different types: a loop unrolled)
        shapes = []
        for item in literal_unroll(arrays):
            shapes.append(item.shape)
        return shapes

    @register_jitable
    def shapes_of_items(arrays):  # (a list or a tuple of one type: indexed at run time)
        shapes = []
        for item in arrays:
            shapes.append(item.shape)
        return shapes

    @register_jitable
    def cut(grad, axis, sizes, shapes):
        whole = np.ascontiguousarray(grad)
        outer, _, inner = around(whole.shape, axis)
        total = 0
        for size in sizes:
            total += size
        if total != whole.shape[axis]:
            raise ValueError("the adjoint's length along the joined axis is not the arrays' together")
        lined = whole.reshape((outer, whole.shape[axis], inner))
        pieces = []
        start = 0
        for i in range(len(sizes)):
            stop = start + sizes[i]
            pieces.append(np.ascontiguousarray(lined[:, start:stop, :]).reshape(shapes[i]))
            start = stop
        return pieces

    @register_jitable
    def element_counts(shapes):  # (each shape's count of elements: an array's size)
        counts = []
        for s in shapes:
            n = 1
            for length in s:
                n *= length
            counts.append(n)
        return counts

    return shapes_of_tuple, shapes_of_items, cut, element_counts


def _shapes_and_cut(types: Any, arrays: Any) -> tuple[Any, Any]:
    """``shapes_of(arrays)`` for the type of ``arrays``, and ``cut`` (``_cutting``)."""
    shapes_of_tuple, shapes_of_items, cut, _ = _cutting()
    return (shapes_of_items if isinstance(arrays, (types.List, types.UniTuple)) else shapes_of_tuple), cut


@compiled(shape.concatenate_grad)
def _concatenate_grad(types):
    """concatenate_grad: the adjoint cut along the axis by the arrays' lengths there (axis None: the
    flattened adjoint cut by their sizes, each piece given its array's shape)."""
    axis_in = axis_position()

    def typing(grad, arrays, axis=0):
        rank, given, mixed = _rank_of_items(types, arrays), axis_form(types, axis), _mixed_items(types, arrays)
        if mixed is not None and _float_adjoint(types, grad) and given:
            as_arrays = _as_arrays(mixed)
            return lambda grad, arrays, axis=0: shape.concatenate_grad(grad, as_arrays(arrays), axis)
        if not _float_adjoint(types, grad) or rank is None or rank == 0 or not given:
            return None
        shapes_of, cut = _shapes_and_cut(types, arrays)
        element_counts = _cutting()[3]
        if given == "none":
            def flattened(grad, arrays, axis=0):
                shapes = shapes_of(arrays)
                return cut(grad.ravel(), 0, element_counts(shapes), shapes)
            return flattened

        def along(grad, arrays, axis=0):
            at = axis_in(axis, rank)
            shapes = shapes_of(arrays)
            return cut(grad, at, [s[at] for s in shapes], shapes)
        return along
    return typing


@compiled(shape.stack_grad)
def _stack_grad(types):
    """stack_grad: one position of the new axis per array, each piece of the array's shape."""
    axis_in = axis_position()

    def typing(grad, arrays, axis=0):
        rank = _rank_of_items(types, arrays)
        if not _float_adjoint(types, grad) or rank is None or axis_form(types, axis) != "int" or \
                grad.ndim != rank + 1:
            return None
        shapes_of, cut = _shapes_and_cut(types, arrays)

        def pieces(grad, arrays, axis=0):
            shapes = shapes_of(arrays)
            return cut(grad, axis_in(axis, rank + 1), [1 for _ in shapes], shapes)
        return pieces
    return typing


def _joining(types: Any, how: Any) -> Optional[str]:
    name = how.literal_value if isinstance(how, types.StringLiteral) else how if isinstance(how, str) else None
    return name if name in ("hstack", "vstack", "dstack", "column_stack") else None


def _joined_axis(how: str, rank: int) -> tuple[int, Optional[int]]:
    """The axis ``np.<how>`` joins arrays of ``rank`` on, after it raised them to its rank (atleast_1d,
    atleast_2d, atleast_3d, a column), and the axis of the array itself that gives each one's length
    there (None: one position each; -1: the array's size, a vector or a number made a vector)."""
    if how == "hstack":
        return (0, -1) if rank <= 1 else (1, 1)
    if how == "vstack":
        return (0, None) if rank <= 1 else (0, 0)
    if how == "dstack":
        return (2, None) if rank <= 2 else (2, 2)
    return (1, None) if rank <= 1 else (1, 1)  # column_stack


@compiled(shape.joined_grad)
def _joined_grad(types):
    """joined_grad: the adjoint cut along the axis np.hstack/vstack/dstack/column_stack joined on, each
    piece of its array's shape."""
    def typing(grad, arrays, how):
        rank, joining, mixed = _rank_of_items(types, arrays), _joining(types, how), _mixed_items(types, arrays)
        if mixed is not None and _float_adjoint(types, grad) and joining is not None:
            as_arrays = _as_arrays(mixed)
            return lambda grad, arrays, how: shape.joined_grad(grad, as_arrays(arrays), how)
        if not _float_adjoint(types, grad) or rank is None or joining is None:
            return None
        shapes_of, cut = _shapes_and_cut(types, arrays)
        axis, own = _joined_axis(joining, rank)
        element_counts = _cutting()[3]
        if own is None:
            return lambda grad, arrays, how: cut(grad, axis, [1 for _ in shapes_of(arrays)], shapes_of(arrays))
        if own == -1:
            def sized(grad, arrays, how):
                shapes = shapes_of(arrays)
                return cut(grad, axis, element_counts(shapes), shapes)
            return sized
        return lambda grad, arrays, how: cut(grad, axis, [s[own] for s in shapes_of(arrays)], shapes_of(arrays))
    return typing


@functools.cache
def _joining_lists() -> Any:
    """``concatenated(arrays, at)`` and ``stacked(arrays, at)``: the arrays of a list (one dtype, one rank,
    as Numba types a list) put one after another along the axis ``at`` (stacked: along a new axis
    there), NumPy's result; shapes that do not fit raise ValueError (compiled, Numba imported, built
    once)."""
    tuple_setitem = shared_tuple_setitem()
    from numba.extending import register_jitable
    around = lengths_around()

    @register_jitable
    def checked(arrays, at, new):
        """The arrays' length together along ``at`` (stacked: their count); shapes that differ elsewhere raise."""
        if len(arrays) == 0:
            raise ValueError("need at least one array to concatenate")
        first = arrays[0]
        total = 0
        for a in arrays:
            for d in range(first.ndim):
                if (new or d != at) and a.shape[d] != first.shape[d]:
                    raise ValueError("all the input array dimensions except for the concatenation axis must match")
            total += 1 if new else a.shape[at]
        return total

    @register_jitable
    def put(arrays, at, new, shape):
        """A new array of ``shape`` holding the arrays one after another along ``at``."""
        outer, length, inner = around(shape, at)
        out = np.empty((outer, length, inner), arrays[0].dtype)
        start = 0
        for a in arrays:
            length = 1 if new else a.shape[at]
            out[:, start:start + length, :] = np.ascontiguousarray(a).reshape((outer, length, inner))
            start += length
        return out.reshape(shape)

    @register_jitable
    def concatenated(arrays, at):
        total = checked(arrays, at, False)
        shape: tuple = tuple_setitem(arrays[0].shape, at, total)
        return put(arrays, at, False, shape)

    @register_jitable
    def stacked(arrays, at):
        total = checked(arrays, at, True)
        shape: tuple = tuple_setitem(np.expand_dims(arrays[0], at).shape, at, total)
        return put(arrays, at, True, shape)

    return concatenated, stacked


def _list_of_arrays(types: Any, arrays: Any) -> bool:
    return isinstance(arrays, types.List) and isinstance(arrays.dtype, types.Array) and arrays.dtype.ndim >= 1


@compiled(np.concatenate)
def _concatenate(types):
    """np.concatenate(a list of arrays, an int axis or None) (Numba's own joins tuples only, and of them
    none with axis=None)."""
    concatenated, axis_in = _joining_lists()[0], axis_position()

    def typing(arrays, axis=0, out=None, dtype=None, casting="same_kind"):
        given, mixed = axis_form(types, axis), _mixed_items(types, arrays)
        if not is_none(types, out) or not is_none(types, dtype) or not isinstance(casting, (str, types.Omitted)):
            return None
        if mixed is not None and given == "int":  # (Numba's own joins the tuple)
            as_arrays = _as_arrays(mixed)
            return lambda arrays, axis=0, out=None, dtype=None, casting="same_kind": \
                np.concatenate(as_arrays(arrays), axis)
        if mixed is not None and given == "none" and _mixed_rank(types, arrays) == 1:  # (vectors: axis 0)
            as_arrays = _as_arrays(mixed)
            return lambda arrays, axis=0, out=None, dtype=None, casting="same_kind": \
                np.concatenate(as_arrays(arrays), 0)
        if isinstance(arrays, types.Array) and arrays.ndim >= 2 and given:  # (NumPy iterates its first axis)
            if given == "none":
                return lambda arrays, axis=0, out=None, dtype=None, casting="same_kind": np.ravel(arrays).copy()
            return lambda arrays, axis=0, out=None, dtype=None, casting="same_kind": \
                concatenated([arrays[i] for i in range(arrays.shape[0])], axis_in(axis, arrays.ndim - 1))
        if not _list_of_arrays(types, arrays) or not given:
            return None
        if given == "none":  # (each array flattened, in C order, as NumPy's)
            return lambda arrays, axis=0, out=None, dtype=None, casting="same_kind": \
                concatenated([np.ascontiguousarray(a).reshape(-1) for a in arrays], 0)
        rank = arrays.dtype.ndim
        return lambda arrays, axis=0, out=None, dtype=None, casting="same_kind": \
            concatenated(arrays, axis_in(axis, rank))
    return typing


@compiled(np.stack)
def _stack(types):
    """np.stack(a list of arrays, an int axis) (Numba's own stacks tuples only)."""
    stacked, axis_in = _joining_lists()[1], axis_position()

    def typing(arrays, axis=0, out=None, dtype=None, casting="same_kind"):
        if not _list_of_arrays(types, arrays) or axis_form(types, axis) != "int" or not is_none(types, out) \
                or not is_none(types, dtype) or not isinstance(casting, (str, types.Omitted)):
            return None
        rank = arrays.dtype.ndim
        return lambda arrays, axis=0, out=None, dtype=None, casting="same_kind": \
            stacked(arrays, axis_in(axis, rank + 1))
    return typing


def _stacked_by_rank(types: Any, how: str) -> Callable[..., Any]:
    """np.vstack, np.hstack, np.column_stack or np.dstack (``how``) of a list of arrays of one rank: NumPy's
    own definitions, each array made at least 2-d (vstack), 1-d (hstack), a column (column_stack: a
    vector) or 3-d (dstack), then joined along the first axis, the second or the third; Numba's own take
    tuples only.  A display mixing arrays with lists or tuples of numbers: Numba's own of the tuple of
    their ``np.asarray``."""
    concatenated, stacked = _joining_lists()
    joins: dict[str, Callable[..., Any]] = {"vstack": np.vstack, "hstack": np.hstack,
                                             "column_stack": np.column_stack, "dstack": np.dstack}
    own = joins[how]

    def typing(tup, dtype=None, casting="same_kind"):
        if not is_none(types, dtype) or not isinstance(casting, (str, types.Omitted)):
            return None
        mixed = _mixed_items(types, tup)
        if mixed is not None:
            as_arrays = _as_arrays(mixed)
            return lambda tup, dtype=None, casting="same_kind": own(as_arrays(tup))
        if not _list_of_arrays(types, tup):
            return None
        return _joined_list(how, tup.dtype.ndim, concatenated, stacked)
    return typing


def _joined_list(how: str, rank: int, concatenated: Any, stacked: Any) -> Callable[..., Any]:
    """The compiled join ``how`` of a list of arrays of ``rank`` (``_stacked_by_rank``)."""
    if how == "vstack":
        if rank == 1:  # (vectors: the rows of a matrix)
            return lambda tup, dtype=None, casting="same_kind": stacked(tup, 0)
        return lambda tup, dtype=None, casting="same_kind": concatenated(tup, 0)
    if how == "hstack":
        at = 0 if rank == 1 else 1  # (vectors: one long vector)
        return lambda tup, dtype=None, casting="same_kind": concatenated(tup, at)
    if how == "column_stack":
        if rank == 1:  # (vectors: the columns of a matrix)
            return lambda tup, dtype=None, casting="same_kind": stacked(tup, 1)
        return lambda tup, dtype=None, casting="same_kind": concatenated(tup, 1)
    if rank == 1:  # dstack of vectors of length n: (1, n, k)
        def deep(tup, dtype=None, casting="same_kind"):
            columns = stacked(tup, 1)
            return columns.reshape((1,) + columns.shape)
        return deep
    if rank == 2:
        return lambda tup, dtype=None, casting="same_kind": stacked(tup, 2)
    return lambda tup, dtype=None, casting="same_kind": concatenated(tup, 2)


def _stack_factory(how: str) -> Callable[[Any], Callable[..., Any]]:
    """The registry's factory for ``np.<how>`` (a function of its own: the compiled-code fingerprint reads
    each factory's ``__code__``)."""
    def factory(types: Any) -> Callable[..., Any]:
        return _stacked_by_rank(types, how)
    return factory


_JOINS: list[tuple[str, Callable[..., Any]]] = [("vstack", np.vstack), ("hstack", np.hstack),
                                              ("column_stack", np.column_stack), ("dstack", np.dstack)]
for _how, _join in _JOINS:
    compiled(_join)(_stack_factory(_how))
del _how, _join
