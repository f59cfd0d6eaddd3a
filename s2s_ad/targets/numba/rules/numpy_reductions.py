"""The Numba target's compiled versions of ``templates/numpy_reductions.py``'s functions where Numba has
none: np.sum, np.mean, np.prod, np.max, np.min (and np.amax, np.amin) with ``axis=`` and ``keepdims=`` (of every
axis with ``keepdims=``: integers in any order, floats of a C-contiguous array as one line, NumPy's order);
np.cumsum and np.cumprod along an axis, and the helpers ``cumsum_grad``, ``prod_others``, ``cumprod_grad``;
the helpers of the adjoints of np.median, np.quantile and np.percentile over a whole array at one
quantile, by the linear method (``quantile_scatter``, ``quantile_slope``, ``trailing_axes``); and np.average's
``average_weights`` without an axis (Numba's np.average takes none).

Numba's own np.sum/np.max ... take no keepdims (and np.max, np.min, np.mean, np.prod no axis); these
are tried only where its own refuse the call.  The numbers are NumPy's, in NumPy's order: a sum over
the innermost axis of a C-contiguous array is pairwise (numpy's pairwise_sum, from 0.0), over any
other axis sequential; a product is sequential; max and min propagate NaN and read in any order.
Other layouts (a transposed array: NumPy's order follows memory) and other dtypes are not compiled.

Each version must do what the NumPy function does for the types it accepts
(tests/targets/test_numba_backend.py compares the two); Numba is imported by no module here when loaded
(``numba.rules``).
"""
from __future__ import annotations

import functools
from types import SimpleNamespace
from typing import Any, Callable

import numpy as np

from ....rules import compiled
from ..kernels import lengths_around, summed_line, tuple_setitem as shared_tuple_setitem
from .argument_types import known, rank_of
from .template_modules import template


def _static_bool(types: Any, value: Any) -> Any:
    """A literal or omitted bool argument's value; None where it is known only at run time."""
    if isinstance(value, bool):  # (the typing function's own default: the argument was not given)
        return value
    if isinstance(value, types.Omitted):
        return value.value if isinstance(value.value, bool) else None
    if isinstance(value, types.BooleanLiteral):
        return value.literal_value
    return None


def _is_none(types: Any, value: Any) -> bool:
    return value is None or isinstance(value, types.NoneType) or \
        (isinstance(value, types.Omitted) and value.value is None)


def _reduced_count(types: Any, ndim: int, axis: Any, tuples: bool) -> Any:
    """How many axes ``axis`` removes (None: all of them); None where it is not a form compiled."""
    if _is_none(types, axis):
        return ndim
    if isinstance(axis, types.Integer) and not isinstance(axis, types.Boolean):
        return 1 if ndim >= 1 else None
    if tuples and isinstance(axis, types.UniTuple) and isinstance(axis.dtype, types.Integer) \
            and not isinstance(axis.dtype, types.Boolean) and 1 <= len(axis) <= ndim:
        return len(axis)
    return None


@functools.cache
def _reduction_kernels() -> Any:
    """The compiled pieces of every reduction's compiled version, built once per process (Numba imported):
    each typing specialisation calls these rather than compiling its own copies, and is given only the
    path its argument types take (one axis, or several; a sum of floats, or a product, or integers)."""
    around = lengths_around()
    from numba.extending import register_jitable
    summed = summed_line()

    @register_jitable
    def reduced_mask(ndim, axis):
        """Which axes an int or a tuple of ints names (None: all of them)."""
        mask = np.zeros(ndim, np.bool_)
        if axis is None:
            mask[:] = True
            return mask
        for given in np.asarray(axis).reshape(-1):  # (an int, or a tuple of ints)
            if given < -ndim or given >= ndim:
                raise ValueError("axis out of bounds")  # (run again as Python: NumPy's AxisError)
            position = given + ndim if given < 0 else given
            if mask[position]:
                raise ValueError("repeated axis")
            mask[position] = True
        return mask

    @register_jitable
    def one_axis(ndim, axis):
        """The one axis an int names (an array of rank 1: axis None names its only axis)."""
        if axis is None:
            return 0
        if axis < -ndim or axis >= ndim:
            raise ValueError("axis out of bounds")  # (run again as Python: NumPy's AxisError)
        return axis + ndim if axis < 0 else axis


    @register_jitable
    def summed_floats(a, position):
        """np.sum of floats over one axis of a C-contiguous array, as a flat array, in NumPy's order."""
        outer, count, inner = around(a.shape, position)
        flat = a.reshape(-1)
        out = np.empty(outer * inner)
        for p in range(outer):
            for k in range(inner):
                out[p * inner + k] = summed(flat, p * count * inner + k, count, inner)
        return out

    @register_jitable
    def folded(a, position, product, zero):
        """np.prod (product) or np.sum of integers over one axis, in order, as a flat array."""
        outer, count, inner = around(a.shape, position)
        flat = a.reshape(-1)
        out = np.full(outer * inner, zero)
        for p in range(outer):
            for k in range(inner):
                base = p * count * inner + k
                total = zero
                for i in range(count):
                    if product:
                        total *= flat[base + i * inner]
                    else:
                        total += flat[base + i * inner]
                out[p * inner + k] = total
        return out

    @register_jitable
    def extreme_of_run(flat, base, count, larger):
        """np.max (larger) or np.min of ``flat[base:base + count]`` (``count`` > 0; ``base`` >= 0, which the
        caller's max tells LLVM: no negative-index test in the loop).  The loop keeps the best by a
        select and whether a NaN was seen, with no branch (a branch on each element cost twice the
        time); where a NaN was seen, it is the line's first NaN, as the general loop finds."""
        best = flat[base]
        nan = best != best
        for i in range(1, count):
            value = flat[base + i]
            nan |= value != value
            best = value if (value > best if larger else value < best) else best
        if nan:
            for i in range(count):
                if flat[base + i] != flat[base + i]:
                    return flat[base + i]
        return best

    @register_jitable
    def extreme_line(a, position, larger):
        """np.max (larger) or np.min over one axis, as a flat array (NaN wins, as in NumPy; any order)."""
        outer, count, inner = around(a.shape, position)
        if count == 0:
            raise ValueError("zero-size array to reduction operation which has no identity")
        flat = np.ascontiguousarray(a).reshape(-1)
        lines = np.empty(outer * inner, a.dtype)
        if inner == 1:  # (along the last axis: contiguous lines)
            for p in range(outer):
                lines[p] = extreme_of_run(flat, max(p * count, 0), count, larger)
            return lines
        for p in range(outer):
            for k in range(inner):
                base = p * count * inner + k
                best = flat[base]
                for i in range(1, count):
                    value = flat[base + i * inner]
                    if best != best:
                        break
                    if value != value or (value > best if larger else value < best):
                        best = value
                lines[p * inner + k] = best
        return lines

    @register_jitable
    def extreme_axes(a, mask, larger):
        """np.max (larger) or np.min over the axes ``mask`` names, as a flat array (NaN wins)."""
        count = 1
        for j in range(a.ndim):
            count *= a.shape[j] if mask[j] else 1
        if count == 0:
            raise ValueError("zero-size array to reduction operation which has no identity")
        out = np.empty(a.size // count, a.dtype)
        seen = np.zeros(out.size, np.bool_)
        for index in np.ndindex(a.shape):
            offset = 0
            for j in range(a.ndim):
                offset = offset * (1 if mask[j] else a.shape[j]) + (0 if mask[j] else index[j])
            value = a[index]
            if not seen[offset]:
                out[offset] = value
                seen[offset] = True
            elif out[offset] == out[offset]:  # (not NaN yet)
                if value != value or (value > out[offset] if larger else value < out[offset]):
                    out[offset] = value
        return out

    return SimpleNamespace(reduced_mask=reduced_mask, one_axis=one_axis, summed_floats=summed_floats, folded=folded,
                           extreme_line=extreme_line, extreme_axes=extreme_axes)


def _reduction_compiler(types: Any, name: str) -> Callable[..., Any]:
    """The typing function (``rules.compiled``) of np.<name>(a, axis=, keepdims=) for the calls Numba lacks."""
    from numba.extending import register_jitable
    from numba.np.unsafe.ndarray import to_fixed_tuple
    kernels = _reduction_kernels()

    def typing(a, axis=None, out=None, keepdims=False):
        if not isinstance(a, types.Array) or not _is_none(types, out) or a.ndim == 0:
            return None
        keep = _static_bool(types, keepdims)
        ordered = name in ("sum", "mean", "prod")
        removed = _reduced_count(types, a.ndim, axis, tuples=not ordered)
        # (of every axis, no keepdims given: Numba's own; keepdims=False given, as np.max's tangent writes
        # it, Numba's own takes no such argument: this one)
        if keep is None or removed is None or (_is_none(types, axis) and not keep
                                               and not isinstance(keepdims, types.BooleanLiteral)):
            return None  # (Numba's own, or not compiled)
        floats = a.dtype == types.float64
        integers = isinstance(a.dtype, (types.Integer, types.Boolean))
        product = name == "prod"
        zero: Any = (1.0 if product else 0.0) if floats else \
            (np.uint64 if isinstance(a.dtype, types.Integer) and not a.dtype.signed else np.int64)(product)
        if ordered and _is_none(types, axis) and a.ndim > 1 and (integers or floats and a.layout == "C") \
                and not (name == "mean" and not floats):
            # (every axis of an array of integers, in any order: the same sum; of a C-contiguous one of floats,
            # its elements in memory order, which NumPy reduces as one line)
            return _fold_whole(kernels, floats and not product, product, zero, name == "mean", keep, a.ndim)
        if ordered and (a.layout != "C" or not (isinstance(axis, types.Integer) or a.ndim == 1)):
            return None  # (NumPy's order is compiled for one axis of a C-contiguous array)
        if not (floats or integers) or name == "mean" and not floats:
            return None
        rank = a.ndim if keep else a.ndim - removed
        if name in ("max", "min"):
            return _extreme_over_axes(kernels, register_jitable, to_fixed_tuple, name == "max", keep, rank,
                                      one=removed == 1, given=isinstance(axis, types.Integer) or _is_none(types, axis))
        return _fold_over_axis(kernels, register_jitable, floats and not product, product, zero,
                               name == "mean", keep, rank)
    return typing


def _shaper(register_jitable: Any, to_fixed_tuple: Any, keep: bool, rank: int) -> Any:
    """A compiled function giving a reduction's flat values the result's shape (a number for rank 0):
    ``shaped(values, a, mask)``, the axes ``mask`` names removed (kept as 1 with ``keep``)."""
    if rank == 0:
        return register_jitable(lambda values, a, mask: values[0])

    def shaped(values, a, mask):
        dims = np.empty(rank, np.intp)
        j = 0
        for i in range(a.ndim):
            if not mask[i]:
                dims[j] = a.shape[i]
                j += 1
            elif keep:
                dims[j] = 1
                j += 1
        return values.reshape(to_fixed_tuple(dims, rank))
    return register_jitable(shaped)


def _line_shaper(register_jitable: Any, keep: bool, rank: int) -> Any:
    """``shaped(values, a, position)``: a reduction over the one axis ``position`` given the result's shape
    (a number for rank 0): ``a``'s shape, that axis removed (kept as 1 with ``keep``)."""
    tuple_setitem = shared_tuple_setitem()
    if rank == 0:
        return register_jitable(lambda values, a, position: values[0])
    if keep:
        return register_jitable(lambda values, a, position: values.reshape(tuple_setitem(a.shape, position, 1)))

    def shaped(values, a, position):
        dims = a.shape[1:]  # (a tuple of the result's rank, its entries filled in below)
        for i in range(position + 1, a.ndim):
            dims = tuple_setitem(dims, i - 1, a.shape[i])
        for i in range(position):
            dims = tuple_setitem(dims, i, a.shape[i])
        return values.reshape(dims)
    return register_jitable(shaped)


def _extreme_over_axes(kernels: Any, register_jitable: Any, to_fixed_tuple: Any, larger: bool, keep: bool,
                       rank: int, one: bool, given: bool) -> Any:
    """The compiled np.max (larger) or np.min: along lines where one axis is reduced (``given``: named by
    an int, or None of a rank-1 array; else by a 1-tuple), else over a mask."""
    shaped = _shaper(register_jitable, to_fixed_tuple, keep, rank)
    shaped_line = _line_shaper(register_jitable, keep, rank)
    reduced_mask, one_axis, line, axes = kernels.reduced_mask, kernels.one_axis, kernels.extreme_line, \
        kernels.extreme_axes

    def along(a, axis=None, out=None, keepdims=False):
        position = one_axis(a.ndim, axis)
        return shaped_line(line(a, position, larger), a, position)

    def along_named(a, axis=None, out=None, keepdims=False):
        mask = reduced_mask(a.ndim, axis)
        position = 0
        for j in range(a.ndim):
            if mask[j]:
                position = j
        return shaped(line(a, position, larger), a, mask)

    def over(a, axis=None, out=None, keepdims=False):
        mask = reduced_mask(a.ndim, axis)
        return shaped(axes(a, mask, larger), a, mask)
    return (along if given else along_named) if one else over


def _fold_over_axis(kernels: Any, register_jitable: Any, pairwise: bool, product: bool,
                    zero: Any, average: bool, keep: bool, rank: int) -> Any:
    """The compiled np.sum, np.mean or np.prod over one axis of a C-contiguous array, in NumPy's order."""
    shaped = _line_shaper(register_jitable, keep, rank)
    one_axis, floats, folded = kernels.one_axis, kernels.summed_floats, kernels.folded

    def folds(a, axis=None, out=None, keepdims=False):
        position = one_axis(a.ndim, axis)
        values = floats(a, position) if pairwise else folded(a, position, product, zero)
        if average:
            if a.shape[position] == 0:
                raise ZeroDivisionError("mean of an empty slice")  # (run again as Python: NaN, warned)
            values = values / a.shape[position]
        return shaped(values, a, position)
    return folds


def _fold_whole(kernels: Any, pairwise: bool, product: bool, zero: Any, average: bool, keep: bool, ndim: int) -> Any:
    """The compiled np.sum, np.mean or np.prod of every element (``axis=None``) with ``keepdims`` given: the
    elements as one line (``_reduction_compiler`` says when that is NumPy's order), then the shape of ones
    (``keep``) or a number."""
    floats, folded = kernels.summed_floats, kernels.folded
    ones = (1,) * ndim

    def whole(a, axis=None, out=None, keepdims=False):
        line = np.ascontiguousarray(a).reshape(-1)
        values = floats(line, 0) if pairwise else folded(line, 0, product, zero)
        if average:
            if line.size == 0:
                raise ZeroDivisionError("mean of an empty array")  # (run again as Python: NaN, warned)
            values = values / line.size
        return values.reshape(ones) if keep else values[0]
    return whole


def _compiled_reduction(name: str) -> Callable[[Any], Callable[..., Any]]:
    """The ``rules.compiled`` factory of np.<name>'s reductions over axes."""
    def factory(types: Any) -> Callable[..., Any]:
        return _reduction_compiler(types, name)
    return factory


for _name, _reduction in (("sum", np.sum), ("mean", np.mean), ("prod", np.prod), ("max", np.max), ("min", np.min),
                          ("max", np.amax), ("min", np.amin)):
    compiled(_reduction)(_compiled_reduction(_name))


# -- np.var and np.std with axis=, ddof= or keepdims=: NumPy's own steps, each a compiled version above ----

def _spread(types: Any, root: bool) -> Callable[..., Any]:
    """The typing function of np.var (np.std: ``root``) of a C-contiguous float64 array over one axis or
    all of them, with ``ddof`` and ``keepdims``: NumPy's ``_var``, step by step (the sum of the axis kept,
    divided by the count; the array less it, squared; its sum over the axis, divided by the count less
    ddof), each step the same compiled reduction, so the same numbers in the same order.  Of a whole
    array with no option given: Numba's own."""
    kernels = _reduction_kernels()
    one_axis = kernels.one_axis

    def typing(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False):
        if not (isinstance(a, types.Array) and a.dtype == types.float64 and a.layout == "C" and a.ndim >= 1):
            return None
        if not (_is_none(types, dtype) and _is_none(types, out)) or _static_bool(types, keepdims) is None:
            return None
        whole = _is_none(types, axis)
        if not whole and not (isinstance(axis, types.Integer) and not isinstance(axis, types.Boolean)):
            return None
        if not isinstance(ddof, (int, types.Integer, types.Omitted)) or isinstance(ddof, types.Boolean):
            return None
        if whole and isinstance(ddof, (int, types.Omitted)) and isinstance(keepdims, (bool, types.Omitted)):
            return None  # (np.var(a): Numba's own)

        def spread(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False):
            count = a.size if axis is None else a.shape[one_axis(a.ndim, axis)]
            if count - ddof <= 0:
                raise ZeroDivisionError("degrees of freedom <= 0")  # (run again as Python: NumPy's NaN, warned)
            centred = a - np.sum(a, axis=axis, keepdims=True) / count
            squares = centred * centred
            variance = np.sum(squares, axis=axis, keepdims=keepdims) / (count - ddof)
            return np.sqrt(variance) if root else variance
        return spread
    return typing


compiled(np.var)(lambda types: _spread(types, root=False))
compiled(np.std)(lambda types: _spread(types, root=True))


# -- np.cumsum and np.cumprod along an axis, and cumsum_grad: sequential, as NumPy's accumulate -------

def _float_array(types: Any, value: Any) -> bool:
    return isinstance(value, types.Array) and value.dtype in (types.float64, types.float32)


@functools.cache
def _accumulation() -> Any:
    """``accumulated(a, position, backwards, product)``: the running sums (products where ``product``) of
    a float array along the axis ``position`` (from its end where ``backwards``), each line added
    (multiplied) in order, as np.cumsum (np.cumprod) does."""
    around = lengths_around()
    from numba.extending import register_jitable

    @register_jitable
    def accumulated(a, position, backwards, product):
        flat = np.ascontiguousarray(a).reshape(-1)
        outer, count, inner = around(a.shape, position)
        out = np.empty(flat.size, a.dtype)
        for p in range(outer):
            for k in range(inner):
                base = p * count * inner + k
                if count == 0:
                    continue
                first = base + (count - 1) * inner if backwards else base
                total = flat[first]  # (the first sum is the element itself, -0.0 kept)
                out[first] = total
                for step in range(1, count):
                    i = count - 1 - step if backwards else step
                    if product:
                        total *= flat[base + i * inner]
                    else:
                        total += flat[base + i * inner]
                    out[base + i * inner] = total
        return out.reshape(a.shape)

    return accumulated


def _axis_position(ndim: int) -> Any:
    from numba.extending import register_jitable

    @register_jitable
    def position(axis):
        if axis < -ndim or axis >= ndim:
            raise ValueError("axis out of bounds")  # (run again as Python: NumPy's AxisError)
        return axis + ndim if axis < 0 else axis
    return position


def _accumulated_along_an_axis(types, product):
    """The typing of np.cumsum (``product`` False) or np.cumprod (True) of a float array along an int axis
    (Numba's own take no axis)."""
    accumulated = _accumulation()

    def typing(a, axis=None, dtype=None, out=None):
        if not _float_array(types, a) or a.ndim == 0 or not isinstance(axis, types.Integer) \
                or isinstance(axis, types.Boolean) or not _is_none(types, dtype) or not _is_none(types, out):
            return None
        position = _axis_position(a.ndim)
        return lambda a, axis=None, dtype=None, out=None: accumulated(a, position(axis), False, product)
    return typing


@compiled(np.cumsum)
def _cumsum(types):
    """np.cumsum(a, axis) of a float array along an int axis."""
    return _accumulated_along_an_axis(types, False)


@compiled(np.cumprod)
def _cumprod(types):
    """np.cumprod(a, axis) of a float array along an int axis."""
    return _accumulated_along_an_axis(types, True)


@compiled(template("numpy_reductions").cumsum_grad)
def _cumsum_grad(types):
    """cumsum_grad: the running sums of ``grad`` from the end (flat, shaped like ``a``, for axis None)."""
    accumulated = _accumulation()

    def typing(grad, a, axis=None):
        if not _float_array(types, grad) or grad.ndim == 0:
            return None
        if _is_none(types, axis):
            if grad.ndim != 1 or not isinstance(a, types.Array):
                return None
            return lambda grad, a, axis=None: accumulated(grad, 0, True, False).reshape(a.shape)
        if not isinstance(axis, types.Integer) or isinstance(axis, types.Boolean):
            return None
        position = _axis_position(grad.ndim)
        return lambda grad, a, axis=None: accumulated(grad, position(axis), True, False)
    return typing


# -- np.prod's prod_others and np.cumprod's cumprod_grad: products along each line, without dividing ----

@functools.cache
def _products() -> Any:
    """``others(a, g, position, cumulative)``: along each line of the float64 array ``a`` on the axis
    ``position``, the product of the elements before each times (``cumulative`` False) the product of
    those after it, as prod_others; or (True) times r_i = g_i + a_{i+1} r_{i+1} (``g`` shaped as ``a``),
    as cumprod_grad: the same multiplications in the same order as the helpers' cumulative products."""
    around = lengths_around()
    from numba.extending import register_jitable

    @register_jitable
    def others(a, g, position, cumulative):
        flat = np.ascontiguousarray(a).reshape(-1)
        given = np.ascontiguousarray(g).reshape(-1)
        if cumulative and given.size != flat.size:
            raise ValueError("cumprod_grad: the adjoint's shape is not the array's")
        outer, count, inner = around(a.shape, position)
        out = np.empty(flat.size)
        for p in range(outer):
            for k in range(inner):
                base = p * count * inner + k
                before = 1.0
                for i in range(count):
                    out[base + i * inner] = before
                    before = before * flat[base + i * inner]
                after = 1.0
                for step in range(count):
                    i = count - 1 - step
                    if cumulative:
                        after = given[base + i * inner] + (flat[base + (i + 1) * inner] * after if step else 0.0)
                    out[base + i * inner] = out[base + i * inner] * after
                    if not cumulative:
                        after = after * flat[base + i * inner]
        return out.reshape(a.shape)

    return others


def _float64_array(types: Any, value: Any) -> bool:
    return isinstance(value, types.Array) and value.dtype == types.float64 and value.ndim >= 1


def _int_axis(types: Any, axis: Any) -> bool:
    return isinstance(axis, types.Integer) and not isinstance(axis, types.Boolean)


@compiled(template("numpy_reductions").prod_others)
def _prod_others(types):
    """prod_others of a float64 array, flat (axis None) or along an int axis."""
    others = _products()

    def typing(a, axis=None):
        if not _float64_array(types, a):
            return None
        if _is_none(types, axis):
            return lambda a, axis=None: others(a.reshape(-1), a.reshape(-1), 0, False).reshape(a.shape)
        if not _int_axis(types, axis):
            return None
        position = _axis_position(a.ndim)
        return lambda a, axis=None: others(a, a, position(axis), False)
    return typing


@compiled(template("numpy_reductions").cumprod_grad)
def _cumprod_grad(types):
    """cumprod_grad of a float64 array ``a`` and a float64 ``grad`` of its cumulative product's shape,
    flat (axis None: ``grad`` a vector) or along an int axis."""
    others = _products()

    def typing(grad, a, axis=None):
        if not _float64_array(types, a) or not _float64_array(types, grad):
            return None
        if _is_none(types, axis):
            if grad.ndim != 1:
                return None
            return lambda grad, a, axis=None: others(np.ascontiguousarray(a).reshape(-1), grad, 0, True).reshape(a.shape)
        if not _int_axis(types, axis) or grad.ndim != a.ndim:
            return None
        position = _axis_position(a.ndim)
        return lambda grad, a, axis=None: others(a, grad, position(axis), True)
    return typing


@compiled(template("numpy_reductions")._filled_ones)
def _filled_ones(types):
    """_filled_ones (np.nanprod's and np.nancumprod's reading of ``a``) of a float64 array: NaN as 1."""
    def typing(a):
        if not _float64_array(types, a):
            return None
        return lambda a: np.where(np.isnan(a), 1.0, a)
    return typing


# -- np.median's, np.quantile's and np.percentile's adjoints: a whole array, one quantile --------------
# As the helpers plan it (``_quantile_plan``): the array flattened in C's order, sorted stably (NumPy's
# and Numba's mergesort order ties and NaN alike), the quantile at ``q * (n - 1)`` between the neighbours
# ``low`` (its floor, clipped) and ``high`` (the next, clipped), ``fraction`` the part past ``low``.

def _whole_linear_quantile(types: Any, a: Any, q: Any, axis: Any, keepdims: Any, method: Any) -> bool:
    """The case compiled: a float64 array, a number q, no axis, no keepdims, the linear method."""
    return isinstance(a, types.Array) and a.dtype == types.float64 and a.ndim >= 1 \
        and isinstance(q, (types.Float, types.Integer)) and not isinstance(q, types.Boolean) \
        and _is_none(types, axis) and _static_bool(types, keepdims) is False and known(types, method, str) == "linear"


def _neighbours() -> Any:
    """``neighbours(n, q)`` (compiled, built once): ``low``, ``high`` and ``fraction`` of the helpers' plan."""
    from numba.extending import register_jitable

    @register_jitable
    def neighbours(n, q):
        position = float(q) * (n - 1)
        low = min(max(int(np.floor(position)), 0), n - 1)
        return low, min(max(low + 1, 0), n - 1), position - low
    return neighbours


@compiled(template("numpy_reductions").quantile_scatter)
def _quantile_scatter(types):
    """quantile_scatter of a whole float64 array at one quantile (linear method): the adjoint shared by
    the two neighbours, ``1 - fraction`` and ``fraction`` of it (with ``slope``, ``-(n - 1)`` and ``n - 1``),
    put back where the stable sort took them from; shaped like ``a``."""
    neighbours = _neighbours()

    def typing(grad, a, q, axis=None, keepdims=False, slope=False, method="linear"):
        if not _whole_linear_quantile(types, a, q, axis, keepdims, method) or \
                not isinstance(grad, (types.Float, types.Integer)) or isinstance(grad, types.Boolean) or \
                not (_static_bool(types, slope) is not None or isinstance(slope, types.Boolean)):
            return None

        def scattered(grad, a, q, axis=None, keepdims=False, slope=False, method="linear"):
            flat = np.ascontiguousarray(a).reshape(-1)
            n = flat.size
            order = np.argsort(flat, kind="mergesort")
            low, high, fraction = neighbours(n, q)
            part = float(grad)
            below, above = (-(n - 1.0), n - 1.0) if slope else (1.0 - fraction, fraction)
            ordered = np.zeros(n)
            ordered[low] += part * below
            ordered[high] += part * above
            result = np.zeros(n)
            for k in range(n):
                result[order[k]] = ordered[k]
            return result.reshape(a.shape)
        return scattered
    return typing


@compiled(template("numpy_reductions").quantile_slope)
def _quantile_slope(types):
    """quantile_slope of a whole float64 array at one quantile (linear method): ``n - 1`` times the gap of
    ``values`` (a float64 array shaped like ``a``) between the two neighbours."""
    neighbours = _neighbours()

    def typing(values, a, q, axis=None, keepdims=False, method="linear"):
        if not _whole_linear_quantile(types, a, q, axis, keepdims, method) or \
                not (isinstance(values, types.Array) and values.dtype == types.float64 and values.ndim == a.ndim):
            return None

        def slope(values, a, q, axis=None, keepdims=False, method="linear"):
            if values.shape != a.shape:
                raise ValueError("quantile_slope: values not shaped like the array")
            flat = np.ascontiguousarray(a).reshape(-1)
            taken = np.ascontiguousarray(values).reshape(-1)
            n = flat.size
            order = np.argsort(flat, kind="mergesort")
            low, high, _ = neighbours(n, q)
            return (taken[order[high]] - taken[order[low]]) * (n - 1)
        return slope
    return typing


@compiled(template("numpy_reductions").trailing_axes)
def _trailing_axes(types):
    """trailing_axes: the axes of the quantiles after q's own (known from the ranks when compiling)."""
    def typing(q, out):
        ranks = [rank_of(types, x) for x in (q, out)]
        if ranks[0] < 0 or ranks[1] < 0:
            return None
        axes = tuple(range(ranks[0], ranks[1]))
        return lambda q, out: axes
    return typing


@compiled(template("numpy_reductions").average_weights)
def _average_weights(types):
    """average_weights with no axis: a 0-d array of 1.0 where there are no weights, else the weights
    themselves (as np.asarray hands an array back; its rule declares it may be a view)."""
    def typing(a, weights, axis=None):
        if not isinstance(a, types.Array) or not _is_none(types, axis):
            return None
        if _is_none(types, weights):
            return lambda a, weights, axis=None: np.ones(())
        if isinstance(weights, types.Array) and isinstance(weights.dtype, (types.Float, types.Integer)):
            return lambda a, weights, axis=None: weights
        return None
    return typing
