"""The Numba target's runtime: how compiled code runs the engine ops (imports numba).

Input: the engine ops generated code calls (``runtime.unbroadcast``,
``runtime.zeros_like`` ...), plain Python functions the NumPy target binds
as they are.  Output, once ``register()`` ran: Numba implementations of
the same functions (``numba.extending.overload``), chosen by the types
Numba infers, so the one module namespace serves compiled code and its
Python fallback, and a compiled call means what the Python call means.
An op with no implementation here is not compiled: Numba refuses it by
name, and the function falls back to Python (``numba.target``).  The
compiled versions of the templates' helpers and of NumPy functions
(``rules.compiled``, target "numba": np.pad, reductions with ``keepdims``,
helpers such as ``pad_grad``; s2s_ad's own in ``numba.rules``, users' in
their templates) are registered here too, and
every implementation is compiled with bounds checks (an index out of
range raises, as in Python, where Numba's default reads past the array),
whether or not the generated code calling it has them.

Every implementation does what the Python op does for the types it takes;
``tests/targets/test_numba_backend.py`` runs the corpus of test functions both ways.
(No annotations here: Numba requires an overload's typing function and its
implementation to have the same signature, annotations included.)
"""
from __future__ import annotations

import math
import operator
import threading
from typing import Any

import numpy as np

from ...rules import registry as rules
from ...core import directions as per_direction, number_functions, runtime
from . import draws, lists, slice_writes, view_positions

# Numba's, set by register() (this module is imported to spell code that no one compiles, too: the
# code s2s_ad.source(..., backend="numba") shows needs no Numba)
types: Any = None


def reversed_steps(steps):
    """``reversed(steps)``: a reverse loop's iterable (compiled: a ``range`` run backwards)."""
    return reversed(steps)


def matmul(a, b):
    """``np.matmul(a, b)`` (compiled: ``a @ b`` of float64 vectors and matrices; Numba has no np.matmul, and
    types NumPy 2's, a ufunc, as an elementwise one)."""
    return np.matmul(a, b)


# math's functions that raise where their result leaves the reals (ValueError: "math domain error")
# or overflows (OverflowError: "math range error"), where Numba's give nan or inf.  Each maps to
# whether an infinite result of a finite argument is an overflow (exp) or outside the domain (log(0)),
# as CPython's math module decides (its math_1's can_overflow).  math.log takes a base too, math.pow
# two numbers: their own implementations below.
_RAISING_MATH = {"sqrt": False, "acos": False, "asin": False, "acosh": False, "atanh": False, "log": False,
                 "log2": False, "log10": False, "log1p": False, "sin": False, "cos": False, "tan": False,
                 "exp": True, "expm1": True, "cosh": True, "sinh": True}


def _python_math(name):
    """A function calling ``math.<name>`` as Python does (the Python run of the code, and its
    signature), which the Numba implementation (``_checked_math``) replaces when compiled."""
    fn = getattr(math, name)

    def of_two(x, y):
        return fn(x, y)

    def with_base(x, base=None):
        return fn(x) if base is None else fn(x, base)

    def of_one(x):
        return fn(x)
    checked = with_base if name == "log" else of_two if name == "pow" else of_one
    checked.__name__ = checked.__qualname__ = name
    checked.__doc__ = f"math.{name}, raising as Python's does where compiled (numba.runtime._checked_math)."
    return checked


CHECKED_MATH = {getattr(math, name): _python_math(name) for name in (*_RAISING_MATH, "pow")}


def compile_errors():
    """What a dispatcher raises when Numba cannot compile the code (not an error the code raises)."""
    from numba.core import errors
    return (errors.NumbaError,)


_REGISTERED = False
_LOCK = threading.Lock()


def register():
    """Register the implementations (once per process)."""
    global _REGISTERED
    with _LOCK:
        if not _REGISTERED:
            _register()
            _REGISTERED = True


def _is_number(t):
    return isinstance(t, (types.Float, types.Integer, types.Boolean))


# The implementations' own options, whatever the generated code's (an overload is compiled as a function
# of its own, with these): an index out of range raises IndexError (Numba's default reads whatever memory
# is there), a division by zero ZeroDivisionError, as in Python.  Generated code whose every index is
# proven in range drops its own bounds checks (numba.target, index_ranges); these keep theirs: the indexes
# they take (getitem_grad's, stored_part's) are the user's.
_JIT_OPTIONS: Any = dict(error_model="python", boundscheck=True)  # (Any: numba 0.68 types it as a TypedDict)


def _register():
    global types
    from numba import types as numba_types
    from numba.extending import overload as numba_overload, register_jitable
    types = numba_types

    def overload(function):
        return numba_overload(function, jit_options=_JIT_OPTIONS)

    overload(reversed_steps)(_reversed_steps)
    register_jitable(**_JIT_OPTIONS)(_items_shape)
    overload(runtime.float_stack)(_float_stack)
    overload(matmul)(_matmul)
    overload(operator.getitem)(_range_slice)
    overload(runtime.zeros_like)(_zeros_like)
    overload(shape)(_shape)
    overload(runtime.zero_tangent)(_zeros_like)
    overload(per_direction.direction_sum)(_each_direction_reduced(np.sum, lambda rank: rank >= 2))
    overload(per_direction.direction_mean)(_each_direction_reduced(np.mean, lambda rank: rank >= 2))
    overload(per_direction.direction_copy)(_direction_copy)
    overload(per_direction.direction_kept)(_direction_copy)  # (always a copy: one type from both ways)
    overload(per_direction.direction_reshape)(_direction_reshape)
    overload(per_direction.direction_matmul)(_direction_matmul)
    overload(per_direction.direction_trace)(_each_direction_reduced(np.trace, lambda rank: rank == 3))
    overload(per_direction.direction_cumsum)(_direction_cumsum)
    overload(per_direction.matmul_direction)(_matmul_direction)
    overload(per_direction.direction_unbroadcast)(_direction_unbroadcast)
    overload(runtime.unbroadcast)(_unbroadcast)
    overload(runtime.unbroadcast_to)(_unbroadcast_to)
    overload(runtime.writable_copy)(_writable_copy)
    overload(runtime.held_apart)(_held_apart)
    overload(runtime.if_inexact)(_if_inexact)
    overload(runtime.getitem_grad)(_getitem_grad)
    overload(runtime.stored_part)(_stored_part)
    lists.register(overload)
    overload(runtime.checkpoint_stride)(_checkpoint_stride)
    for by_number, by_numpy in ((number_functions.sin_of_number, np.sin), (number_functions.cos_of_number, np.cos)):
        overload(by_number)(_numpys(by_numpy))  # (the Python target's: NumPy's own function compiles as fast)
    overload(runtime.check_number_update)(_check_number_update)
    overload(runtime.item)(_item)
    overload(runtime.check_index)(_check_index)
    overload(runtime.check_assertion)(_check_assertion)
    overload(runtime.check_one_number)(_check_one_number)
    overload(runtime.check_bound)(_check_bound)
    overload(runtime.check_out_cast)(_check_out_cast)
    overload(runtime.check_view_kept)(_check_view_kept)
    view_positions.register(overload, types)
    draws.register(overload, types)  # (a Generator argument's draws: NumPy's numbers)
    slice_writes.register(types)  # (write_into, add_into: their own options)
    overload(runtime.raise_exception)(_raise_exception)
    from . import revolve as compiled_revolve
    compiled_revolve.register(overload, types)  # (the binomial schedule of checkpointed(..., snapshots=c))
    from . import rules as numba_rules  # noqa: F401 (declares s2s_ad's compiled versions)
    for helper, factory in rules.compiled_versions("numba").items():  # (rules.compiled: numba.rules', users')
        overload(helper)(factory(types))
    overload(runtime.stop_gradient)(lambda x: lambda x: x)
    for name, overflows in _RAISING_MATH.items():
        if name != "log":
            overload(CHECKED_MATH[getattr(math, name)])(_checked_math(getattr(math, name), overflows))
    overload(CHECKED_MATH[math.log])(_checked_log)
    overload(CHECKED_MATH[math.pow])(_checked_pow)


def _checked_math(fn, overflows):
    """The implementation of ``math.<fn>`` that raises as CPython's does: ValueError where a number
    gives nan, or (``overflows`` False) an infinity; OverflowError where a finite number gives an
    infinity and ``overflows``.  (Numba's math functions give nan or inf instead.)"""
    def typed(x):
        if not _is_number(x):
            return None

        def raising(x):
            y = fn(x)
            if math.isnan(y) and not math.isnan(x):
                raise ValueError("math domain error")
            if math.isinf(y) and math.isfinite(x):
                if overflows:
                    raise OverflowError("math range error")
                raise ValueError("math domain error")
            return y
        return raising
    return typed


def _checked_log(x, base=None):
    """``math.log(x)`` and ``math.log(x, base)`` raising as CPython's: ValueError for a number not
    above zero (either of them), ZeroDivisionError for the base 1."""
    if not _is_number(x):
        return None
    if base is None or isinstance(base, (types.NoneType, types.Omitted)):
        def natural(x, base=None):
            if x <= 0.0:
                raise ValueError("math domain error")
            return math.log(x)
        return natural
    if not _is_number(base):
        return None

    def of_base(x, base=None):
        if x <= 0.0 or base <= 0.0:
            raise ValueError("math domain error")
        den = math.log(base)
        if den == 0.0:
            raise ZeroDivisionError("float division by zero")
        return math.log(x) / den
    return of_base


def _checked_pow(x, y):
    """``math.pow`` raising as CPython's: ValueError where numbers give nan or zero to a negative
    power gives an infinity, OverflowError where other finite numbers give one."""
    if not (_is_number(x) and _is_number(y)):
        return None

    def raising(x, y):
        r = math.pow(x, y)
        if math.isnan(r) and not (math.isnan(x) or math.isnan(y)):
            raise ValueError("math domain error")
        if math.isinf(r) and math.isfinite(x) and math.isfinite(y):
            if x == 0.0:
                raise ValueError("math domain error")
            raise OverflowError("math range error")
        return r
    return raising


def _reversed_steps(steps):
    if isinstance(steps, types.RangeType):
        def backwards(steps):
            n = len(steps)
            return range(steps.start + (n - 1) * steps.step, steps.start - steps.step, -steps.step)
        return backwards
    return None


def _range_slice(steps, index):
    """``steps[:trips]``, the trips a loop that stopped early made (its reverse runs over them); and
    ``steps[k]``, the trip ``k`` of a loop over a range held in a name (forward mode over a gradient's
    code reads its loops so), as Python's range gives it: negative ``k`` from the end, IndexError past it."""
    if isinstance(steps, types.RangeType) and isinstance(index, types.SliceType):
        def sliced(steps, index):
            start, stop, step = index.indices(len(steps))
            return range(steps.start + start * steps.step, steps.start + stop * steps.step, step * steps.step)
        return sliced
    if isinstance(steps, types.RangeType) and isinstance(index, types.Integer):
        def trip(steps, index):
            n = len(steps)
            k = index + n if index < 0 else index
            if k < 0 or k >= n:
                raise IndexError("range object index out of range")
            return steps.start + k * steps.step
        return trip
    return None


def _matmul(a, b):
    if all(isinstance(x, types.Array) and x.dtype == types.float64 and x.ndim in (1, 2) for x in (a, b)):
        return lambda a, b: np.ascontiguousarray(a) @ np.ascontiguousarray(b)
    return None


def _float_stack(shape):
    def made(shape):
        return np.empty(shape)
    return made


def _zeros_like(value):
    if isinstance(value, types.Optional):
        return _zeros_like_unbound(value.type)
    if _is_number(value):
        return lambda value: 0.0
    if isinstance(value, types.Array):
        if isinstance(value.dtype, types.Complex):
            return lambda value: np.zeros(value.shape, np.complex128)
        if value.dtype == types.float32:
            return lambda value: np.zeros(value.shape, np.float32)
        return lambda value: np.zeros(value.shape)  # (float64: integers' adjoints are floats)
    if isinstance(value, types.List) and _is_number(value.dtype):
        return lambda value: np.zeros(len(value))  # (a list of numbers' adjoint: an array of float64, as Python's)
    if isinstance(value, types.List) and isinstance(value.dtype, types.Array) and value.dtype.dtype == types.float64:
        def rows(value):  # (a list of equal arrays' adjoint: one array, an axis in front for the items)
            return np.zeros((len(value),) + _items_shape(value))
        return rows
    return None


def _items_shape(items):
    """The shape of each of ``items``, a non-empty list of arrays of one shape (compiled: ``register``).  An empty list, or arrays
    of different shapes (whose adjoint is an array of objects, or of rank 1 for no item: Python's
    ``runtime.zeros_like``) raise, and the call runs again as Python."""
    if len(items) == 0:
        raise ValueError("an empty list of arrays: its adjoint's shape is Python's to decide")
    shape = items[0].shape
    for item in items:
        if item.shape != shape:
            raise ValueError("the list's arrays differ in shape")
    return shape


def _zeros_like_unbound(inner):
    """``zeros_like`` of a name a loop binds first (``None`` before it: Numba's Optional of ``inner``): the
    zero of ``inner`` where it holds a value; where it holds None (the reverse sweep's reset of the value
    before the first trip, which no statement reads), a zero of the same type, as one type needs."""
    if _is_number(inner):
        return lambda value: 0.0
    if isinstance(inner, types.Array):
        dtype = np.complex128 if isinstance(inner.dtype, types.Complex) else (
            np.float32 if inner.dtype == types.float32 else np.float64)
        empty = (0,) * inner.ndim

        def zeros(value):
            if value is None:
                return np.zeros(empty, dtype)
            return np.zeros(value.shape, dtype)
        return zeros
    return None


def shape(a):
    """``np.shape(a)`` (compiled: also of a name a loop binds first, Numba's Optional, which Numba's
    np.shape refuses; None there raises TypeError, as Python's code fails on it)."""
    return np.shape(a)


def _shape(a):
    if isinstance(a, types.Optional):
        if _is_number(a.type):
            return lambda a: ()
        if isinstance(a.type, types.Array):
            return lambda a: a.shape  # (Numba checks the value is not None)
        return None
    return lambda a: np.shape(a)


def _each_direction_reduced(reduce, takes):
    """The overload of a per-direction reduction to a number (``direction_sum``: ``reduce`` np.sum) of
    tangents whose rank, with the direction axis, ``takes`` accepts: one reduction per direction."""
    def typed(tangents):
        if isinstance(tangents, types.Array) and takes(tangents.ndim):
            def reduced(tangents):
                out = np.empty(tangents.shape[0], tangents.dtype)
                for d in range(tangents.shape[0]):
                    out[d] = reduce(tangents[d])
                return out
            return reduced
        return None
    return typed


def _direction_copy(tangents, like):
    if isinstance(tangents, types.Array) and isinstance(tangents.dtype, types.Float) and (
            _is_number(like) and tangents.ndim == 1 or isinstance(like, types.Array) and tangents.ndim == like.ndim + 1):
        def copied(tangents, like):
            if tangents.shape[1:] != np.shape(like):  # (broadcast rows: not compiled, the caller's loop runs)
                raise ValueError("direction_copy: the tangents' rows are not shaped like the value")
            return tangents.copy()
        return copied
    return None


def _direction_reshape(tangents, shape):
    if isinstance(tangents, types.Array) and isinstance(shape, types.BaseTuple):
        # (a copy where the rows are not contiguous: ad/vector reshapes only what no store writes into)
        return lambda tangents, shape: np.ascontiguousarray(tangents).reshape((tangents.shape[0],) + shape)
    return None


def _direction_unbroadcast(tangents, like):
    if not isinstance(tangents, types.Array):
        return None
    if _is_number(like) and tangents.ndim == 1:
        return lambda tangents, like: tangents
    if _is_number(like):
        return lambda tangents, like: per_direction.direction_sum(tangents)
    if isinstance(like, types.Array) and tangents.ndim == like.ndim + 1:
        def unbroadcast(tangents, like):
            if tangents.shape[1:] == like.shape:
                return tangents
            out = np.empty((tangents.shape[0],) + like.shape)
            for d in range(tangents.shape[0]):
                out[d] = runtime.unbroadcast_to(tangents[d], like.shape)
            return out
        return unbroadcast
    return None


def _direction_cumsum(tangents):
    if isinstance(tangents, types.Array) and tangents.ndim == 2:
        def summed(tangents):
            out = np.empty(tangents.shape, tangents.dtype)
            for d in range(tangents.shape[0]):
                out[d] = np.cumsum(tangents[d])
            return out
        return summed
    return None


def _direction_matmul(tangents, b):
    if isinstance(tangents, types.Array) and tangents.ndim == 3 and isinstance(b, types.Array) and b.ndim in (1, 2):
        def multiplied(tangents, b):
            first = np.ascontiguousarray(tangents[0]) @ b
            out = np.empty((tangents.shape[0],) + first.shape)
            out[0] = first
            for d in range(1, tangents.shape[0]):
                out[d] = np.ascontiguousarray(tangents[d]) @ b
            return out
        return multiplied
    return None


def _matmul_direction(a, tangents):
    if isinstance(tangents, types.Array) and tangents.ndim == 3 and isinstance(a, types.Array) and a.ndim in (1, 2):
        def multiplied(a, tangents):
            first = a @ np.ascontiguousarray(tangents[0])
            out = np.empty((tangents.shape[0],) + first.shape)
            out[0] = first
            for d in range(1, tangents.shape[0]):
                out[d] = a @ np.ascontiguousarray(tangents[d])
            return out
        return multiplied
    return None


def _basic_index(index):
    """An index naming each element at most once: integers and slices (or a tuple of them)."""
    parts = index.types if isinstance(index, types.BaseTuple) else (index,)
    return all(isinstance(p, (types.Integer, types.SliceType)) for p in parts)


def _getitem_grad(grad, a, index):
    if _numbers(a) and isinstance(index, types.Integer) and isinstance(grad, (types.Float, types.Integer)) \
            and not isinstance(grad, types.Boolean):
        def picked(grad, a, index):  # a list or tuple of numbers: its adjoint is a vector
            out = np.zeros(len(a))
            out[index] = grad
            return out
        return picked
    if isinstance(a, types.List) and isinstance(a.dtype, types.Array) and a.dtype.dtype == types.float64 \
            and isinstance(index, types.Integer) and (isinstance(grad, types.Float) and grad == types.float64 or
                                                     isinstance(grad, types.Array) and grad.dtype == types.float64):
        return _picked_from_a_list_of_arrays
    if not isinstance(a, types.Array) or not (_is_number(grad) or isinstance(grad, types.Array)):
        return None
    if _basic_index(index):
        def scattered(grad, a, index):
            out = np.zeros(a.shape)
            out[index] = grad
            return out
        return scattered
    if isinstance(index, types.Array) and isinstance(index.dtype, types.Boolean) and index.ndim == a.ndim \
            and a.dtype == types.float64 and (isinstance(grad, types.Float) or isinstance(grad, types.Array)
                                              and grad.ndim == 1 and grad.dtype == types.float64):
        return _scattered_through_a_mask
    if isinstance(index, types.Array) and isinstance(index.dtype, types.Integer) and index.ndim == 1 \
            and a.ndim == 1 and isinstance(grad, types.Array) and grad.ndim == 1:
        def added(grad, a, index):  # np.add.at: a repeated position adds each part
            out = np.zeros(a.shape)
            n = a.shape[0]
            for k in range(index.shape[0]):
                position = index[k]
                out[position + n if position < 0 else position] += grad[k]
            return out
        return added
    return None


def _picked_from_a_list_of_arrays(grad, a, index):
    """getitem_grad of ``items[k]``, a list of float64 arrays: as NumPy's adjoint of such a list, one array
    with an axis in front for the items, ``grad`` in row ``k``.  Items of different shapes have an adjoint
    of objects (``runtime.getitem_grad``), which compiled code cannot make: it raises, and the call runs
    again as Python."""
    out = np.zeros((len(a),) + _items_shape(a))
    out[index] = grad
    return out


def _scattered_through_a_mask(grad, a, index):
    """getitem_grad of ``a[mask]``, a boolean mask of ``a``'s shape: ``grad`` (one number, or one per element
    selected, in C order: NumPy's) written where the mask is true, zeros elsewhere."""
    if a.shape != index.shape:
        raise IndexError("boolean index did not match indexed array")  # (run again as Python: NumPy's words)
    chosen = index.ravel()
    out = np.zeros(a.size)
    spread = np.broadcast_to(np.asarray(grad), (int(np.count_nonzero(chosen)),))  # (a number, or one per element)
    n = 0
    for k in range(chosen.size):
        if chosen[k]:
            out[k] = spread[n]
            n += 1
    return out.reshape(a.shape)


def _numbers(a):
    """A list or tuple of numbers (of one kind: a list's items are typed alike)."""
    if isinstance(a, types.List):
        return isinstance(a.dtype, (types.Float, types.Integer))
    return isinstance(a, types.BaseTuple) and len(a) > 0 and \
        all(isinstance(t, (types.Float, types.Integer)) for t in a.types)


def _stored_part(grad, index, value):
    if not isinstance(grad, types.Array) or grad.dtype != types.float64 or grad.ndim == 0 \
            or not (isinstance(value, types.Array) or _is_number(value)):
        return None
    if isinstance(index, types.Array) and index.ndim == grad.ndim and isinstance(index.dtype, types.Boolean):
        return _stored_through_a_mask
    if isinstance(index, types.Array) and index.ndim == 1 and isinstance(index.dtype, types.Integer) \
            and not isinstance(index.dtype, types.Boolean):
        return _stored_at_positions
    # a basic index naming an array part: no element twice, so grad[index] whole (copied) is the part
    # (an index naming one element is not compiled)
    if not _basic_index(index):
        return None
    parts = index.types if isinstance(index, types.BaseTuple) else (index,)
    if sum(isinstance(p, types.Integer) for p in parts) >= grad.ndim or len(parts) > grad.ndim:
        return None
    return lambda grad, index, value: runtime.unbroadcast(grad[index].copy(), value)


def _stored_through_a_mask(grad, index, value):
    """stored_part of ``array[mask] = value``, a boolean mask of the array's shape: the elements it selects,
    in C order (NumPy's), each once."""
    if grad.shape != index.shape:
        raise IndexError("boolean index did not match indexed array")  # (run again as Python: NumPy's words)
    elements, chosen = grad.ravel(), index.ravel()
    part = np.empty(np.count_nonzero(chosen))
    n = 0
    for k in range(chosen.size):
        if chosen[k]:
            part[n] = elements[k]
            n += 1
    return runtime.unbroadcast(part, value)


def _stored_at_positions(grad, index, value):
    """stored_part of ``array[positions] = value``, positions along the first axis: the rows named, where a
    position named twice takes the adjoint only at its last write (the one NumPy keeps)."""
    part = grad[index].copy()
    count = grad.shape[0]
    kept = np.full(count, -1)
    for p in range(index.size):
        position = index[p] + count if index[p] < 0 else index[p]
        kept[position] = p
    for p in range(index.size):
        if kept[index[p] + count if index[p] < 0 else index[p]] != p:
            part[p] = 0.0
    return runtime.unbroadcast(part, value)


def _numpys(function):
    """The compiled version of a helper that is NumPy's ``function`` of one argument, computed otherwise in Python."""
    def typed(x, factor=1.0, addend=0.0):
        return lambda x, factor=1.0, addend=0.0: function(x)
    return typed


def _unbroadcast(grad, like):
    if _is_number(like):
        if _is_number(grad):
            return lambda grad, like: grad
        if isinstance(grad, types.Array):
            return lambda grad, like: np.sum(grad)
        return None
    if isinstance(like, types.Array):
        return lambda grad, like: runtime.unbroadcast_to(grad, like.shape)
    return None


def _unbroadcast_to(grad, shape):
    if not isinstance(shape, (types.UniTuple, types.Tuple)):
        return None
    rank = len(shape)
    if rank == 0:
        if _is_number(grad):
            return lambda grad, shape: grad
        if isinstance(grad, types.Array):
            return lambda grad, shape: np.sum(grad)
        return None
    if _is_number(grad):  # a scalar seed spread over the shape
        return lambda grad, shape: np.full(shape, grad)
    if not isinstance(grad, types.Array) or grad.ndim < rank:
        return None  # (broadcasting a smaller array up: not compiled)
    extra = grad.ndim - rank

    def summed(grad, shape):
        same = True
        for j in range(rank):
            if grad.shape[extra + j] != shape[j]:
                same = False
        if extra == 0 and same:
            return np.ascontiguousarray(grad).reshape(shape)  # (the same values; a copy only if strided)
        for j in range(rank):
            if shape[j] != 1 and grad.shape[extra + j] != shape[j]:
                raise ValueError("unbroadcast: shapes do not broadcast")
        out = np.zeros(shape, grad.dtype)
        flat = out.reshape(-1)
        for index in np.ndindex(grad.shape):
            offset = 0
            for j in range(rank):
                n = shape[j]
                offset = offset * n + (index[extra + j] if n != 1 else 0)
            flat[offset] += grad[index]
        return out
    return summed


def _held_apart(value):
    """held_apart of an array (its copy), a number (itself) or a list of arrays (a new list of their copies)."""
    if isinstance(value, types.Array):
        return lambda value: value.copy()
    if _is_number(value):
        return lambda value: value
    if isinstance(value, types.List) and isinstance(value.dtype, types.Array):
        return lambda value: [item.copy() for item in value]
    return None


def _writable_copy(grad, like):
    if _is_number(like) and _is_number(grad):  # (a number's adjoint: nothing updates it in place; its value)
        return lambda grad, like: float(grad)
    if isinstance(like, types.Array):
        if isinstance(grad, types.Array) and isinstance(grad.dtype, types.Float) and grad.ndim == like.ndim:
            def copied(grad, like):
                if grad.shape != like.shape:
                    raise ValueError("writable_copy: the adjoint's shape is not the value's")
                return grad.copy()  # (C-contiguous, of grad's rank: Numba's ascontiguousarray makes a 0-d array 1-d)
            return copied
        if _is_number(grad):
            return lambda grad, like: np.full(like.shape, float(grad))
    if isinstance(like, types.List) and _is_number(like.dtype):  # a list of numbers: an array of its length
        if isinstance(grad, types.Array) and isinstance(grad.dtype, types.Float) and grad.ndim == 1:
            def copied_items(grad, like):
                if len(grad) != len(like):
                    raise ValueError("writable_copy: the adjoint's shape is not the value's")
                return grad.copy()
            return copied_items
        if _is_number(grad):
            return lambda grad, like: np.full(len(like), float(grad))
    if isinstance(like, types.List) and isinstance(like.dtype, types.Array) and isinstance(grad, types.Array) \
            and isinstance(grad.dtype, types.Float) and grad.ndim == like.dtype.ndim + 1:
        def copied_rows(grad, like):  # (a list of equal arrays' adjoint: a row per item; ragged ones raise)
            if grad.shape != (len(like),) + _items_shape(like):
                raise ValueError("writable_copy: the adjoint's shape is not the value's")
            return grad.copy()
        return copied_rows
    return None


def _if_inexact(grad, like):
    dtype = like.dtype if isinstance(like, types.Array) else like
    if isinstance(dtype, (types.Float, types.Complex, types.List, types.BaseTuple)):  # (a list holds items as given)
        return lambda grad, like: grad
    if isinstance(dtype, (types.Integer, types.Boolean)):
        return lambda grad, like: runtime.zeros_like(grad)
    return None


def _checkpoint_stride(n, every=None):
    if every is None or isinstance(every, types.NoneType) or isinstance(every, types.Omitted):
        def square_root_segments(n, every=None):
            if n <= 0:
                return 1
            root = int(np.sqrt(n - 1))
            while root * root > n - 1:  # the integer square root, exactly (math.isqrt's)
                root -= 1
            while (root + 1) * (root + 1) <= n - 1:
                root += 1
            return root + 1
        return square_root_segments
    if isinstance(every, types.Integer):  # checkpointed(..., every=k)
        def given(n, every=None):
            if every < 1:  # (the call then runs as Python, which raises naming the value)
                raise ValueError("checkpointed(..., every=k): a segment needs at least one iteration")
            return every
        return given
    return None


def _check_number_update(value, name, shared, filename, line):
    if _is_number(value):
        return lambda value, name, shared, filename, line: None  # a number: nothing to refuse
    return None  # (an array: Python's check raises, naming the line; not compiled)


def _item(a):
    # .item() gives a Python number: a float64 for any float (a float32 element is widened), an int
    dtype = a.dtype if isinstance(a, types.Array) else a
    convert: Any
    if isinstance(dtype, types.Float):
        convert = float
    elif isinstance(dtype, types.Integer) and not isinstance(dtype, types.Boolean):
        convert = int
    else:
        return None
    if isinstance(a, types.Array):
        def one(a):
            if a.size != 1:
                raise ValueError("can only convert an array of size 1 to a Python scalar")
            return convert(a.reshape(-1)[0])
        return one
    return lambda a: convert(a)


# An error the code raises: raised compiled without its words (Numba raises only constant messages);
# the call then runs again as Python (numba.target), which raises it as the user wrote it.

def _check_view_kept(view, base, name, filename, line):
    # Numba reshapes contiguous arrays only (a view; any other raises) and a basic index gives a view
    # where it gives an array: only one number read by index is a copy
    if isinstance(view, types.Array):
        return lambda view, base, name, filename, line: None

    def refuse(view, base, name, filename, line):
        raise TypeError("a value read after its array was written is a copy here, not a view")
    return refuse


def _check_bound(value, name, filename, line):
    # only a name Numba types as an Optional (None before a loop or on a branch) may be unbound
    if isinstance(value, (types.Optional, types.NoneType)):
        def check(value, name, filename, line):
            if value is None:
                raise UnboundLocalError("a name is read where no path bound it")
        return check
    return lambda value, name, filename, line: None


def _check_out_cast(value, out, function, filename, line):
    # decided from the types: where NumPy's ufunc would refuse out=, raise, and the call runs again as
    # Python (numba.target), whose check raises the message naming the function and the line
    from numba.np.numpy_support import as_dtype
    if isinstance(out, types.Array):
        try:
            result = as_dtype(value.dtype if isinstance(value, types.Array) else value)
            fits = bool(np.can_cast(result, as_dtype(out.dtype), casting="same_kind"))
        except NotImplementedError:  # (a type with no NumPy dtype: Python's check decides)
            fits = False
        if fits:
            return lambda value, out, function, filename, line: None

    def refuse(value, out, function, filename, line):
        raise TypeError("a ufunc's result does not cast into its out= array")
    return refuse


def _check_one_number(value, name):
    # decided from the type: a number (or a 0-d array) passes; anything else raises, and the call runs
    # again as Python (numba.target), whose check raises the message naming the function and the shape
    if _is_number(value) or isinstance(value, types.Complex) or (isinstance(value, types.Array) and value.ndim == 0):
        return lambda value, name: None

    def refuse(value, name):
        raise TypeError("grad needs the function to return one number")
    return refuse


def _check_index(index, array, axis):
    if isinstance(index, types.Integer) and isinstance(array, types.Array) and isinstance(axis, types.Integer):
        def check(index, array, axis):
            length = array.shape[axis]
            if index < -length or index >= length:
                raise IndexError("index is out of bounds")
        return check
    return None


def _check_assertion(test, message=None):
    def check(test, message=None):
        if not test:
            raise AssertionError("assertion failed")
    return check


def _raise_exception(kind, *args):
    def raised(kind, *args):
        raise RuntimeError("the user's exception")
    return raised
