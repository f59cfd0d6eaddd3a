"""Vector mode's versions of NumPy's operations: a ``Batched`` tangent and what each supported
operation does to it, keyed by the operation (as the Numba target's compiled rules are keyed by
function beside that target).

Input: tangents of ``p`` directions, data shaped ``(p,) + shape`` (a leading direction axis).
Output: each supported operation's result as the one-direction tangent would be, direction by
direction; every other operation raises (``NotBatched``, a ``TypeError`` from NumPy for a function
with no entry, an ``AttributeError``), never a wrong number.  Operands of lower rank are lifted
(``_lifted``) so that NumPy's trailing alignment never pairs the direction axis with a primal axis.
Used by ``api/batched.py``, which runs the sweeps.
"""
from __future__ import annotations

import numbers
from typing import Any, Callable

import numpy as np

from ...rules.batched_forms import BatchedForm, form_of


class NotBatched(TypeError):
    """An operation the batched tangent has no exact form for: run one sweep per direction."""


def _ndim(x: Any) -> int:
    return x.ndim if isinstance(x, Batched) else np.ndim(x)


def _lifted(x: Any, ndim: int) -> Any:
    """``x`` ready to broadcast, NumPy's way, against data of logical rank ``ndim`` (plus the direction axis)."""
    if isinstance(x, Batched):
        return x.data.reshape((x.data.shape[0],) + (1,) * (ndim - x.ndim) + x.data.shape[1:])
    if isinstance(x, (np.ndarray, np.generic, numbers.Number)):
        return x
    raise NotBatched(f"a batched tangent meets a {type(x).__name__}")


def _axes(axis: Any, ndim: int) -> Any:
    """Logical axes → axes of the data (after the direction axis)."""
    if axis is None:
        return tuple(range(1, ndim + 1))
    if isinstance(axis, tuple):
        return tuple(_axes(a, ndim) for a in axis)
    axis = int(axis)
    if not -ndim <= axis < ndim:
        raise NotBatched(f"axis {axis} out of range")
    return axis % ndim + 1


def _key(key: Any) -> tuple:
    """``key`` of a logical index as the key of the data: a leading ``:`` for the directions.  Refused where
    advanced indices are apart (NumPy would move their axes in front of the direction axis)."""
    key = key if isinstance(key, tuple) else (key,)
    advanced = [i for i, k in enumerate(key) if not isinstance(k, (slice, type(None), type(Ellipsis)))]
    arrays = any(not isinstance(key[i], numbers.Integral) for i in advanced)
    if any(isinstance(k, Batched) for k in key):
        raise NotBatched("an index that is a tangent")
    if arrays and advanced and advanced[-1] - advanced[0] + 1 != len(advanced):
        raise NotBatched("advanced indices apart from each other")
    return (slice(None),) + key


def _views(key: Any) -> bool:
    """An index whose result NumPy gives as a view even where it has no axes (``...`` or ``None`` in it)."""
    return any(k is Ellipsis or k is None for k in (key if isinstance(key, tuple) else (key,)))


class Batched:
    """``p`` tangents of one value: ``data`` shaped ``(p,) + shape``, every operation taken direction by direction."""

    __slots__ = ("data",)
    __array_priority__ = 1000.0

    def __init__(self, data: np.ndarray) -> None:
        self.data = data

    @property
    def shape(self) -> tuple:
        return self.data.shape[1:]

    @property
    def ndim(self) -> int:
        return self.data.ndim - 1

    @property
    def size(self) -> int:
        return int(np.prod(self.shape))

    @property
    def dtype(self) -> Any:
        return self.data.dtype

    @property
    def T(self) -> "Batched":
        return Batched(self.data.transpose((0,) + tuple(range(self.ndim, 0, -1))))

    def _refused(self, *_: Any, **__: Any) -> Any:
        raise NotBatched("a batched tangent read as one value (bool, float, len, iter, array)")

    __bool__ = __float__ = __int__ = __len__ = __iter__ = __array__ = __index__ = _refused

    def copy(self) -> "Batched":
        return Batched(self.data.copy())

    def reshape(self, *shape: Any, order: str = "C") -> "Batched":
        shape = shape[0] if len(shape) == 1 else shape
        return _reshape(self, shape, order)

    def ravel(self, order: str = "C") -> "Batched":
        return _ravel(self, order)

    def transpose(self, *axes: Any) -> "Batched":
        return _transpose(self, axes[0] if len(axes) == 1 else (axes or None))

    def sum(self, axis: Any = None, keepdims: bool = False) -> "Batched":
        return _reduce(np.sum, self, axis, keepdims)

    def __getitem__(self, key: Any) -> "Batched":
        part = self.data[_key(key)]
        # an element read is a copy in NumPy (a scalar): a later write into the array leaves it as it was
        return Batched(part.copy() if part.ndim == 1 and not _views(key) else part)

    def __setitem__(self, key: Any, value: Any) -> None:
        key = _key(key)  # (written by the key itself: an advanced index reads a copy)
        self.data[key] = _lifted(value, self.data[key].ndim - 1) if isinstance(value, Batched) else value

    # elementwise: the operators go through the ufuncs
    def __array_ufunc__(self, ufunc: np.ufunc, method: str, *inputs: Any, **kwargs: Any) -> Any:
        out = kwargs.pop("out", None)
        if method != "__call__" or kwargs or ufunc.nout != 1:
            return NotImplemented
        if ufunc is np.matmul:
            return _matmul(*inputs) if out is None else NotImplemented
        ndim, count = 0, -1  # (one loop: this runs for every elementwise operation of the sweep)
        for x in inputs:
            if type(x) is Batched:
                rank = x.data.ndim - 1
                if count != x.data.shape[0] and count != -1:
                    raise NotBatched("tangents with different numbers of directions")
                count = x.data.shape[0]
            else:
                rank = x.ndim if type(x) is np.ndarray else 0 if type(x) is float else _ndim(x)
            ndim = rank if rank > ndim else ndim
        if count == -1:
            raise NotBatched("a batched output of plain operands")
        if out is not None:
            (target,) = out
            if not isinstance(target, Batched) or target.ndim < ndim or target.data.shape[0] != count:
                return NotImplemented
            ndim = target.ndim
        data = ufunc(*(_lifted(x, ndim) for x in inputs))
        if out is None:
            return Batched(data)
        target.data[...] = data
        return target

    def __array_function__(self, func: Callable, types: Any, args: tuple, kwargs: dict) -> Any:
        handler = _FUNCTIONS.get(func)
        if handler is not None:
            return handler(*args, **kwargs)
        declared = form_of(func)
        return NotImplemented if declared is None else run_declared(declared, args, kwargs)

    # comparisons elementwise, as NumPy's (an ``if`` on one then refuses: ``__bool__``)
    def __eq__(self, other: Any) -> Any: return np.equal(self, other)
    def __ne__(self, other: Any) -> Any: return np.not_equal(self, other)
    def __lt__(self, other: Any) -> Any: return np.less(self, other)
    def __le__(self, other: Any) -> Any: return np.less_equal(self, other)
    def __gt__(self, other: Any) -> Any: return np.greater(self, other)
    def __ge__(self, other: Any) -> Any: return np.greater_equal(self, other)
    __hash__ = None  # type: ignore[assignment]

    def __add__(self, other: Any) -> Any: return np.add(self, other)
    def __radd__(self, other: Any) -> Any: return np.add(other, self)
    def __sub__(self, other: Any) -> Any: return np.subtract(self, other)
    def __rsub__(self, other: Any) -> Any: return np.subtract(other, self)
    def __mul__(self, other: Any) -> Any: return np.multiply(self, other)
    def __rmul__(self, other: Any) -> Any: return np.multiply(other, self)
    def __truediv__(self, other: Any) -> Any: return np.true_divide(self, other)
    def __rtruediv__(self, other: Any) -> Any: return np.true_divide(other, self)
    def __pow__(self, other: Any) -> Any: return np.power(self, other)
    def __rpow__(self, other: Any) -> Any: return np.power(other, self)
    def __neg__(self) -> Any: return np.negative(self)
    def __pos__(self) -> Any: return self.copy()
    def __matmul__(self, other: Any) -> Any: return _matmul(self, other)
    def __rmatmul__(self, other: Any) -> Any: return _matmul(other, self)
    # in place, as NumPy (the aliases of the array see the change)
    def __iadd__(self, other: Any) -> Any: return _in_place(np.add, self, other)
    def __isub__(self, other: Any) -> Any: return _in_place(np.subtract, self, other)
    def __imul__(self, other: Any) -> Any: return _in_place(np.multiply, self, other)
    def __itruediv__(self, other: Any) -> Any: return _in_place(np.true_divide, self, other)


def _holds_batched(value: Any) -> bool:
    return isinstance(value, Batched) or isinstance(value, (list, tuple)) and any(map(_holds_batched, value))


def run_declared(declared: BatchedForm, args: tuple, kwargs: dict) -> Any:
    """``declared.fn(*args, **kwargs)`` with some arguments ``Batched``, by the form the templates declare
    (``rules.batched``): each argument it names as directions given as its data, the result wrapped again.
    A ``Batched`` anywhere else, or directions of different counts, refuse (``NotBatched``); with no
    ``Batched`` at all, the operation itself runs."""
    try:
        bound = declared.signature.bind(*args, **kwargs)
    except TypeError as error:
        raise NotBatched(f"{declared.form.__name__}: {error}") from None
    counts, given = set(), []
    for name, value in bound.arguments.items():
        if type(value) is Batched and name in declared.directions:
            counts.add(value.data.shape[0])
            bound.arguments[name] = value.data
            given.append(name)
        elif name in declared.directions and isinstance(value, (list, tuple)) and _holds_batched(value) and \
                not any(isinstance(v, (list, tuple)) and _holds_batched(v) for v in value):
            counts.update(v.data.shape[0] for v in value if type(v) is Batched)
            given.append(name)  # (a sequence of them, np.hstack's: filled in below, once the count is known)
        elif _holds_batched(value) or (name in declared.directions and isinstance(value, dict)):
            raise NotBatched(f"{declared.form.__name__} takes no directions in {name!r}")
    if not counts:
        return declared.fn(*args, **kwargs)
    if len(counts) != 1:
        raise NotBatched("tangents with different numbers of directions")
    count = counts.pop()
    for name in given:  # a plain array among tangents is the same in every direction
        value = bound.arguments[name]
        if isinstance(value, (list, tuple)):
            bound.arguments[name] = [v.data if type(v) is Batched else np.broadcast_to(v, (count,) + np.shape(v))
                                     for v in value]
    if len(given) != sum(name in bound.arguments for name in declared.directions):
        raise NotBatched(f"{declared.form.__name__}: an argument of directions given as one value")
    return _wrapped(declared.form(*bound.args, **bound.kwargs), count)


def _wrapped(result: Any, count: int) -> Any:
    if isinstance(result, (list, tuple)):
        return type(result)(_wrapped(r, count) for r in result)
    result = np.asarray(result)
    if result.ndim == 0 or result.shape[0] != count:
        raise NotBatched("a batched form gave no leading axis of directions")
    return Batched(result)


def _in_place(ufunc: Any, target: Batched, other: Any) -> Batched:
    """``target op= other``: written into ``target``'s data, so that its aliases see it, as NumPy's; for a
    scalar's tangent (a number, immutable, in one direction's sweep) a new one."""
    return ufunc(target, other, out=(target,)) if target.ndim else ufunc(target, other)


def _matmul(a: Any, b: Any) -> Batched:
    """``a @ b`` with one of them a tangent (a product of two tangents is refused: it is not linear), of
    vectors, matrices and stacks of them: the tangent's data lifted to the rank of the other operand first,
    so that NumPy's broadcasting of the stacks never pairs the direction axis with an axis of the other."""
    if isinstance(a, Batched) == isinstance(b, Batched):
        raise NotBatched("a product of two tangents")
    if _ndim(a) == 0 or _ndim(b) == 0:
        raise NotBatched("matmul of a scalar")
    ndim = max(_ndim(a), _ndim(b))
    if isinstance(a, Batched):
        if a.ndim == 1 and np.ndim(b) > 2:  # (k,) @ a stack: each direction a row (1, k), the row axis dropped
            rows = a.data.reshape((a.data.shape[0],) + (1,) * (np.ndim(b) - 1) + a.shape)
            return Batched(np.matmul(rows, b)[..., 0, :])
        return Batched(np.matmul(_lifted(a, ndim) if a.ndim > 1 else a.data, b))
    if b.ndim == 1:  # A @ t, t a vector per direction: the directions as columns, moved to the front
        return Batched(b.data @ a if np.ndim(a) == 1 else np.moveaxis(np.matmul(a, b.data.T), -1, 0))
    return Batched(np.matmul(a, _lifted(b, ndim)))


def _dot(a: Any, b: Any, out: Any = None) -> Any:
    """``np.dot``: of vectors and matrices, ``@``; beyond them, the sum over ``a``'s last axis and ``b``'s
    second to last (its only one for a vector), as ``np.tensordot`` orders the result."""
    if out is not None:
        raise NotBatched("np.dot with out=")
    if _ndim(a) == 0 or _ndim(b) == 0:
        return np.multiply(a, b)
    if _ndim(a) <= 2 and _ndim(b) <= 2:
        return _matmul(a, b)
    return _tensordot(a, b, axes=([_ndim(a) - 1], [_ndim(b) - 2 if _ndim(b) >= 2 else 0]))


def _reduce(reduction: Callable, a: Batched, axis: Any = None, keepdims: bool = False, where: Any = True,
            **kwargs: Any) -> Batched:
    """``np.sum``/``np.mean`` of a tangent, over the logical axes; ``where=`` a mask of at most the tangent's
    rank (NumPy aligns it with the trailing axes, after the direction axis); ``dtype=``, ``out=`` refused."""
    if any(v is not None for v in kwargs.values()):
        raise NotBatched(f"{reduction.__name__} with {sorted(kwargs)}")
    if isinstance(where, Batched) or np.ndim(where) > _ndim(a):
        raise NotBatched(f"{reduction.__name__} with where= of a tangent or of a higher rank")
    if not isinstance(a, Batched):
        raise NotBatched(f"{reduction.__name__} of a plain array")
    return Batched(np.asarray(reduction(a.data, axis=_axes(axis, a.ndim), keepdims=keepdims, where=where)))


def _sum(a: Any, axis: Any = None, dtype: Any = None, out: Any = None, keepdims: bool = False,
         initial: Any = None, where: Any = True) -> Batched:
    """``np.sum`` of a tangent; ``initial=`` a number (the same in every direction) or a tangent (added)."""
    total = _reduce(np.sum, a, axis, keepdims, where, dtype=dtype, out=out)
    if initial is None:
        return total
    if isinstance(initial, Batched):
        if initial.ndim:
            raise NotBatched("np.sum with an initial= that is not one number")
        return total + initial
    return Batched(total.data + initial)


def _reshape(a: Batched, shape: Any, order: str = "C", **kwargs: Any) -> Batched:
    if order != "C" or kwargs:
        raise NotBatched("reshape other than in C order")
    shape = (shape,) if isinstance(shape, numbers.Integral) else tuple(shape)
    return Batched(a.data.reshape((a.data.shape[0],) + shape))


def _transpose(a: Batched, axes: Any = None) -> Batched:
    order = range(a.ndim - 1, -1, -1) if axes is None else [int(x) % a.ndim for x in axes]
    return Batched(a.data.transpose((0,) + tuple(x + 1 for x in order)))


def _where(condition: Any, x: Any, y: Any) -> Batched:
    if isinstance(condition, Batched):
        raise NotBatched("a tangent as a condition")
    ndim = max(_ndim(condition), _ndim(x), _ndim(y))
    return Batched(np.where(condition, _lifted(x, ndim), _lifted(y, ndim)))


def _like(a: Any, dtype: Any = None, **kwargs: Any) -> Batched:
    if kwargs or not isinstance(a, Batched):
        raise NotBatched("zeros_like with options")
    return Batched(np.zeros_like(a.data, dtype=dtype))


def _broadcast_to(a: Batched, shape: Any, **kwargs: Any) -> Batched:
    shape = (shape,) if isinstance(shape, numbers.Integral) else tuple(shape)
    if kwargs or not isinstance(a, Batched):
        raise NotBatched("broadcast_to with options")
    return Batched(np.broadcast_to(_lifted(a, len(shape)), (a.data.shape[0],) + shape))


def _roll(a: Batched, shift: Any, axis: Any = None) -> Batched:
    if not isinstance(a, Batched) or isinstance(shift, Batched):
        raise NotBatched("np.roll by a tangent")
    if axis is None:  # the flattened array rolled, shaped back
        flat = a.data.reshape(a.data.shape[0], -1)
        return Batched(np.roll(flat, shift, axis=1).reshape(a.data.shape))
    return Batched(np.roll(a.data, shift, axis=_axes(axis, a.ndim)))


def _expand_dims(a: Batched, axis: Any) -> Batched:
    """New axes at the logical positions ``axis`` (counted in the result, as NumPy's), after the directions."""
    axes = axis if isinstance(axis, tuple) else (axis,)
    ndim = a.ndim + len(axes)
    if not all(isinstance(x, numbers.Integral) and -ndim <= int(x) < ndim for x in axes):
        raise NotBatched("np.expand_dims with an axis out of range")
    return Batched(np.expand_dims(a.data, tuple(int(x) % ndim + 1 for x in axes)))


def _ravel(a: Batched, order: str = "C") -> Batched:
    if order != "C" or not isinstance(a, Batched):
        raise NotBatched("ravel other than in C order")
    return Batched(a.data.reshape(a.data.shape[0], -1))


def _concatenate(arrays: Any, axis: Any = 0, out: Any = None, **kwargs: Any) -> Batched:
    """Tangents joined (a plain array among them: the same in every direction; a list holding tangents, as
    NumPy reads it, their stack)."""
    arrays = [_stack(a) if isinstance(a, (list, tuple)) and _holds_batched(a) else a for a in arrays]
    tangents = [a for a in arrays if isinstance(a, Batched)]
    counts = {t.data.shape[0] for t in tangents}
    if out is not None or kwargs or len(counts) != 1:
        raise NotBatched("np.concatenate with options or of tangents of different numbers of directions")
    count = counts.pop()
    if axis is None:
        parts = [a.data.reshape(count, -1) if isinstance(a, Batched) else np.broadcast_to(np.ravel(a), (count, np.size(a)))
                 for a in arrays]
        return Batched(np.concatenate(parts, axis=1))
    ndim = _ndim(arrays[0])
    if ndim == 0 or any(_ndim(a) != ndim for a in arrays):
        raise NotBatched("np.concatenate of arrays of different ranks")
    parts = [a.data if isinstance(a, Batched) else np.broadcast_to(a, (count,) + np.shape(a)) for a in arrays]
    return Batched(np.concatenate(parts, axis=_axes(axis, ndim)))


def _stack(arrays: Any, axis: Any = 0, out: Any = None, **kwargs: Any) -> Batched:
    """Tangents stacked along a new logical axis (a plain array among them: the same in every direction)."""
    arrays = list(arrays)
    counts = {a.data.shape[0] for a in arrays if isinstance(a, Batched)}
    ndim = _ndim(arrays[0]) if arrays else -1
    if out is not None or kwargs or len(counts) != 1 or any(_ndim(a) != ndim for a in arrays):
        raise NotBatched("np.stack with options, of arrays of different ranks or numbers of directions")
    count = counts.pop()
    parts = [a.data if isinstance(a, Batched) else np.broadcast_to(a, (count,) + np.shape(a)) for a in arrays]
    return Batched(np.stack(parts, axis=_axes(axis, ndim + 1)))


# -- products linear in one operand: a tangent times a plain array (of two tangents: refused, not linear) --


def _one_tangent(name: str, a: Any, b: Any) -> None:
    if isinstance(a, Batched) == isinstance(b, Batched):
        raise NotBatched(f"np.{name} of two tangents" if isinstance(a, Batched) else f"np.{name} of no tangent")
    if not all(isinstance(x, (Batched, np.ndarray, np.generic, numbers.Number)) for x in (a, b)):
        raise NotBatched(f"np.{name} of a {type(a if not isinstance(a, Batched) else b).__name__}")


def _outer(a: Any, b: Any, out: Any = None) -> Batched:
    """``np.outer``: both operands flattened, every product of an element of one and of the other."""
    _one_tangent("outer", a, b)
    if out is not None:
        raise NotBatched("np.outer with out=")
    if isinstance(a, Batched):
        return Batched(a.data.reshape(a.data.shape[0], -1, 1) * np.ravel(b)[None, None, :])
    return Batched(np.ravel(a)[None, :, None] * b.data.reshape(b.data.shape[0], 1, -1))


def _inner(a: Any, b: Any) -> Batched:
    """``np.inner``: the sum over the last axes of both (a number times an array where one has none)."""
    _one_tangent("inner", a, b)
    if _ndim(a) == 0 or _ndim(b) == 0:
        return np.multiply(a, b)
    if isinstance(a, Batched):  # (p,) + a's axes but the last, then b's
        return Batched(np.tensordot(a.data, b, axes=([-1], [-1])))
    result = np.tensordot(a, b.data, axes=([-1], [-1]))  # a's axes but the last, (p,), b's but the last
    return Batched(np.moveaxis(result, _ndim(a) - 1, 0))


def _vdot(a: Any, b: Any) -> Batched:
    """``np.vdot``: the flattened operands' dot product, the first conjugated."""
    _one_tangent("vdot", a, b)
    if _ndim(a) == 0 or _ndim(b) == 0:
        raise NotBatched("np.vdot of a number")  # (NumPy's own: sizes must match)
    if isinstance(a, Batched):
        return Batched(np.conjugate(a.data.reshape(a.data.shape[0], -1)) @ np.ravel(b))
    return Batched(b.data.reshape(b.data.shape[0], -1) @ np.conjugate(np.ravel(a)))


def _kron(a: Any, b: Any) -> Batched:
    """``np.kron``: the operand of lower rank given leading axes of one first, as NumPy does, so that the
    direction axis meets an axis of length one (its blocks stay each direction's)."""
    _one_tangent("kron", a, b)
    ndim = max(_ndim(a), _ndim(b))

    def lifted(x: Any) -> Any:
        if isinstance(x, Batched):
            return _lifted(x, ndim)
        return np.reshape(x, (1,) * (ndim + 1 - np.ndim(x)) + np.shape(x))
    return Batched(np.kron(lifted(a), lifted(b)))


def _tensordot(a: Any, b: Any, axes: Any = 2) -> Batched:
    """``np.tensordot``: the tangent's axes counted after its direction axis, which leads the result."""
    _one_tangent("tensordot", a, b)
    na, nb = _ndim(a), _ndim(b)
    if isinstance(axes, numbers.Integral):
        if not 0 <= int(axes) <= min(na, nb):
            raise NotBatched("np.tensordot summing more axes than an operand has")
        summed_a, summed_b = list(range(na - int(axes), na)), list(range(int(axes)))
    else:
        try:
            first, second = axes
        except (TypeError, ValueError):
            raise NotBatched("np.tensordot with axes NumPy reads otherwise") from None
        first = [first] if isinstance(first, numbers.Integral) else list(first)
        second = [second] if isinstance(second, numbers.Integral) else list(second)
        if len(first) != len(second) or not all(-n <= int(x) < n for xs, n in ((first, na), (second, nb)) for x in xs):
            raise NotBatched("np.tensordot with axes out of range")
        summed_a, summed_b = [int(x) % na for x in first], [int(x) % nb for x in second]
    if isinstance(a, Batched):
        return Batched(np.tensordot(a.data, b, axes=([x + 1 for x in summed_a], summed_b)))
    result = np.tensordot(a, b.data, axes=(summed_a, [x + 1 for x in summed_b]))  # a's kept axes, (p,), b's kept
    return Batched(np.moveaxis(result, na - len(summed_a), 0))


def _einsum(subscripts: Any, *operands: Any, out: Any = None, **kwargs: Any) -> Batched:
    """``np.einsum`` in its subscripts form with one tangent among the operands: a label of its own for the
    direction axis, on that operand and first in the output.  Implicit output (no ``->``) is NumPy's: the
    broadcast axes of ``...`` first, then the labels used once, in the order of their characters."""
    tangents = [i for i, op in enumerate(operands) if isinstance(op, Batched)]
    if not isinstance(subscripts, str) or out is not None or len(tangents) != 1 or \
            any(isinstance(op, (list, tuple)) for op in operands):
        raise NotBatched("np.einsum other than of subscripts, with one tangent among its operands")
    inputs, arrow, output = subscripts.replace(" ", "").partition("->")
    terms = inputs.split(",")
    letters = [c for term in terms for c in term.replace("...", "")]
    if len(terms) != len(operands) or not all(c.isalpha() for c in letters + list(output.replace("...", ""))) \
            or any(term.count(".") not in (0, 3) for term in terms + [output]):
        raise NotBatched("np.einsum subscripts NumPy would refuse")
    if not arrow:
        once = sorted(c for c in set(letters) if letters.count(c) == 1)
        output = ("..." if any("..." in term for term in terms) else "") + "".join(once)
    free = next(c for c in "ZYXWVUTSRQPONMLKJIHGFEDCBAzyxwvutsrqponmlkjihgfedcba" if c not in letters)
    which = tangents[0]
    terms[which] = free + terms[which]
    data = [op.data if isinstance(op, Batched) else op for op in operands]
    return Batched(np.einsum(",".join(terms) + "->" + free + output, *data, **kwargs))


def _solve(a: Any, b: Any) -> Batched:
    """``np.linalg.solve(a, b)`` with ``b`` a tangent (linear in it; a tangent ``a`` is refused): every
    direction's right-hand sides solved with the one matrix, as columns of one system where ``b`` is a
    vector, else as a stack lifted to ``a``'s rank."""
    if not isinstance(b, Batched) or isinstance(a, Batched) or np.ndim(a) < 2:
        raise NotBatched("np.linalg.solve other than of a tangent right-hand side")
    if b.ndim == 1:
        if np.ndim(a) != 2:
            raise NotBatched("np.linalg.solve of a stack of matrices and a vector")
        return Batched(np.linalg.solve(a, b.data.T).T)
    if b.ndim < 2 or (b.ndim == np.ndim(a) - 1 and not _SOLVE_VECTORS_ONLY_1D):
        raise NotBatched("np.linalg.solve of a stack of vectors (NumPy 1's reading)")
    return Batched(np.linalg.solve(a, _lifted(b, max(np.ndim(a), b.ndim))))


# NumPy 2 reads a right-hand side of one axis alone as a vector (NumPy 1: one axis fewer than the matrices)
_SOLVE_VECTORS_ONLY_1D = np.lib.NumpyVersion(np.__version__) >= "2.0.0"


_FUNCTIONS: dict[Callable, Callable] = {
    np.roll: _roll,
    np.ravel: _ravel,
    np.expand_dims: _expand_dims,
    np.concatenate: _concatenate,
    np.stack: _stack,
    np.sum: _sum,
    np.mean: lambda a, axis=None, dtype=None, out=None, keepdims=False, *, where=True:
        _reduce(np.mean, a, axis, keepdims, where, dtype=dtype, out=out),
    np.dot: _dot,
    np.outer: _outer,
    np.inner: _inner,
    np.vdot: _vdot,
    np.kron: _kron,
    np.tensordot: _tensordot,
    np.einsum: _einsum,
    np.linalg.solve: _solve,
    np.matmul: lambda a, b: _matmul(a, b),
    np.reshape: _reshape,
    np.transpose: _transpose,
    np.where: _where,
    np.zeros_like: _like,
    np.broadcast_to: _broadcast_to,
    np.copy: lambda a, order="K", subok=False: a.copy(),
    np.shape: lambda a: a.shape,
    np.ndim: lambda a: a.ndim,
    np.size: lambda a, axis=None: a.size if axis is None else a.shape[axis],
}
