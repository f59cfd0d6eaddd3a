"""What generated code for another library's arrays calls (``array_api.target``): ``xp`` and the engine ops.

Input: an array-API namespace ``xp`` (array-api-compat's for PyTorch, JAX, Dask; ``array_api_strict``).
Output: ``Completed(xp)``, the namespace generated code names ``xp``: the standard's functions of
the library (``RENAMED`` maps NumPy's names to the standard's; an elementwise function handed Python
numbers alone gets 0-d float64 arrays), and ``Own``'s versions of the NumPy functions the standard
lacks or names with other parameters (``np.shape``, ``np.copy``, ``np.dot``, ``np.std(ddof=)``),
arrays created float64 where NumPy creates them so (``np.zeros(3)``), whatever the library's default;
and ``Engine``, the engine ops (``runtime.unbroadcast``, ``getitem_grad``...) and the rules' helpers
this target has (``concatenate_grad``, ``matmul_grad_a``...), written with ``xp`` alone, each doing on
the library's arrays what the NumPy one does on NumPy's.  NumPy itself is used on shapes and
indices only (integers), never on the user's arrays.
"""
from __future__ import annotations

import importlib

import functools
import math
import operator
import numbers
import types
from typing import Any, Callable, Optional

import numpy as np

from ...rules import registry as rules
from ...core import runtime
from ...core.identity import IdentityMap

# -- spellings ----------------------------------------------------------------------------------

# NumPy's names of the standard's functions where they differ.
RENAMED = {
    "absolute": "abs", "arccos": "acos", "arccosh": "acosh", "arcsin": "asin", "arcsinh": "asinh",
    "arctan": "atan", "arctan2": "atan2", "arctanh": "atanh", "power": "pow", "concatenate": "concat",
    "true_divide": "divide", "mod": "remainder", "amax": "max", "amin": "min", "invert": "bitwise_invert",
    "left_shift": "bitwise_left_shift", "right_shift": "bitwise_right_shift",
}

# The standard's functions that mean, for the arguments NumPy code hands them, what NumPy's do.
ELEMENTWISE = frozenset("""
abs acos acosh add asin asinh atan atan2 atanh bitwise_and bitwise_invert bitwise_left_shift bitwise_or
bitwise_right_shift bitwise_xor ceil conj copysign cos cosh divide equal exp expm1 floor floor_divide greater
greater_equal hypot imag isfinite isinf isnan less less_equal log log1p log2 log10 logaddexp logical_and
logical_not logical_or logical_xor maximum minimum multiply negative not_equal positive pow real remainder
round sign signbit sin sinh sqrt square subtract tan tanh trunc
""".split())
OTHERS = frozenset("""
all any argmax argmin broadcast_arrays broadcast_to concat expand_dims flip matmul max mean min moveaxis
nonzero prod reshape roll squeeze stack sum tensordot tril triu where zeros_like ones_like full_like
empty_like
""".split())

# NumPy functions the standard lacks (or names with other parameters), written here with xp.
OWN = frozenset("""
shape size ndim copy ravel full zeros ones empty array asarray transpose dot outer var std cumsum arange
linspace eye clip
""".split())


class Completed(types.SimpleNamespace):
    """``xp`` in generated code: the library's namespace completed (see the module docstring)."""

    def __init__(self, xp: Any) -> None:
        super().__init__()
        self.__dict__["_xp"] = xp
        float64 = xp.float64
        for name in ELEMENTWISE | OTHERS:
            function = getattr(xp, name, None)
            if function is None:
                continue
            setattr(self, name, _taking_numbers(function, xp, float64) if name in ELEMENTWISE else function)
        own = Own(xp)
        for name in OWN:
            setattr(self, name, getattr(own, name))
        for name in REDUCTIONS:  # np.sum(a_list), np.sum(2.0): read as NumPy reads them
            if hasattr(self, name):
                setattr(self, name, _reading_arrays(getattr(self, name), own))

    def __repr__(self) -> str:
        return f"<{getattr(self._xp, '__name__', 'xp')}, completed by s2s_ad>"


def is_number(value: Any) -> bool:
    return value.__class__ in (float, int) or isinstance(value, numbers.Real) and not hasattr(value, "shape")


def _taking_numbers(function: Callable, xp: Any, float64: Any) -> Callable:
    """``function`` where Python numbers alone are handed to it: as 0-d float64 arrays (what NumPy's
    ``np.sin(0.5)`` computes in); with an array among the arguments, the library's own promotion."""
    @functools.wraps(function)
    def call(*args: Any) -> Any:
        if all(is_number(a) for a in args):
            args = tuple(xp.asarray(a, dtype=float64) for a in args)
        return function(*args)
    return call


REDUCTIONS = ("sum", "prod", "mean", "max", "min", "all", "any", "argmax", "argmin")


def _reading_arrays(function: Callable, own: "Own") -> Callable:
    """``function`` whose first argument, where it is no array (a number, a list), is read as NumPy
    reads it (``own.asarray``)."""
    @functools.wraps(function)
    def call(x: Any, *args: Any, **kwargs: Any) -> Any:
        x = x if hasattr(x, "shape") and not is_number(x) else own.asarray(x)
        if function.__name__ in ("sum", "prod") and x.dtype == own.xp.bool:  # NumPy counts: integers
            x = own.xp.astype(x, own.xp.int64)
        return function(x, *args, **kwargs)
    return call


class Own:
    """The NumPy functions the standard lacks, written with ``xp`` (NumPy's dtypes: float64 defaults)."""

    def __init__(self, xp: Any) -> None:
        self.xp = xp
        self.float64 = xp.float64

    def dtype(self, dtype: Any) -> Any:
        """A dtype as NumPy code names it (``np.float64``, ``float``, ``"float32"``) as ``xp``'s."""
        if dtype is None:
            return None
        if dtype is float:
            return self.float64
        if dtype is int or dtype is bool or isinstance(dtype, (str, np.dtype)) or \
                isinstance(dtype, type) and issubclass(dtype, np.generic):
            return getattr(self.xp, "bool" if np.dtype(dtype) == np.bool_ else np.dtype(dtype).name)
        return dtype  # the library's own

    def _float_dtype(self, value: Any, dtype: Any) -> Any:
        if dtype is not None:
            return self.dtype(dtype)
        found = getattr(value, "dtype", None)
        if found is not None and self.xp.isdtype(found, ("real floating", "complex floating")):
            return found
        return self.float64

    def shape(self, x: Any) -> tuple:
        return tuple(x.shape) if hasattr(x, "shape") else np.shape(x)  # (a number or a list: no array)

    def size(self, x: Any) -> int:
        return math.prod(self.shape(x))

    def ndim(self, x: Any) -> int:
        return len(self.shape(x))

    def copy(self, x: Any) -> Any:
        return self.xp.asarray(x, copy=True)

    def ravel(self, x: Any) -> Any:
        return self.xp.reshape(x, (-1,))

    def full(self, shape: Any, fill_value: Any, dtype: Any = None) -> Any:
        if hasattr(fill_value, "shape") and not is_number(fill_value):  # a 0-d array: broadcast, copied
            filled = self.xp.asarray(fill_value, dtype=self._float_dtype(fill_value, dtype))
            return self.xp.asarray(self.xp.broadcast_to(filled, tuple(shape) if isinstance(shape, (tuple, list))
                                                        else (shape,)), copy=True)
        return self.xp.full(shape, fill_value, dtype=self._float_dtype(fill_value, dtype)
                            if dtype is None and not isinstance(fill_value, (bool, int)) else dtype)

    def zeros(self, shape: Any, dtype: Any = None) -> Any:
        return self.xp.zeros(shape, dtype=self.float64 if dtype is None else self.dtype(dtype))

    def ones(self, shape: Any, dtype: Any = None) -> Any:
        return self.xp.ones(shape, dtype=self.float64 if dtype is None else self.dtype(dtype))

    def empty(self, shape: Any, dtype: Any = None) -> Any:
        return self.xp.empty(shape, dtype=self.float64 if dtype is None else self.dtype(dtype))

    def asarray(self, value: Any, dtype: Any = None) -> Any:
        dtype = self.dtype(dtype)
        if dtype is None and not hasattr(value, "dtype"):
            items = value if isinstance(value, (list, tuple)) else [value]
            if items and all(is_number(i) and not isinstance(i, (bool, int)) for i in items):
                dtype = self.float64  # Python floats: float64, as NumPy reads them
            elif items and all(hasattr(i, "shape") for i in items):
                return self.xp.stack(list(items)) if isinstance(value, (list, tuple)) else value
        return self.xp.asarray(value, dtype=dtype)

    def array(self, value: Any, dtype: Any = None) -> Any:
        return self.copy(self.asarray(value, dtype))

    def transpose(self, x: Any, axes: Any = None) -> Any:
        return self.xp.permute_dims(x, tuple(reversed(range(x.ndim))) if axes is None else tuple(axes))

    def dot(self, a: Any, b: Any) -> Any:
        if self.ndim(a) == 0 or self.ndim(b) == 0:
            return a * b
        if self.ndim(b) <= 2:
            return self.xp.matmul(a, b)
        return self.xp.tensordot(a, b, axes=([a.ndim - 1], [b.ndim - 2]))

    def outer(self, a: Any, b: Any) -> Any:
        return self.xp.reshape(a, (-1, 1)) * self.xp.reshape(b, (1, -1))

    def var(self, x: Any, axis: Any = None, ddof: int = 0, keepdims: bool = False) -> Any:
        return self.xp.var(x, axis=axis, correction=ddof, keepdims=keepdims)

    def std(self, x: Any, axis: Any = None, ddof: int = 0, keepdims: bool = False) -> Any:
        return self.xp.std(x, axis=axis, correction=ddof, keepdims=keepdims)

    def cumsum(self, x: Any, axis: Any = None) -> Any:
        if axis is None:
            x, axis = self.ravel(x), 0
        return self.xp.cumulative_sum(x, axis=axis)

    def astype(self, a: Any, dtype: Any) -> Any:
        return self.xp.astype(self.asarray(a), self.dtype(dtype), copy=True)

    def arange(self, *args: Any, dtype: Any = None) -> Any:
        dtype = self.dtype(dtype)
        if dtype is None and any(isinstance(a, float) for a in args):
            dtype = self.float64
        return self.xp.arange(*args, dtype=dtype)

    def linspace(self, start: Any, stop: Any, num: int = 50, endpoint: bool = True) -> Any:
        return self.xp.linspace(start, stop, num, endpoint=endpoint, dtype=self.float64)

    def eye(self, n: int, m: Optional[int] = None, k: int = 0, dtype: Any = None) -> Any:
        return self.xp.eye(n, m, k=k, dtype=self.float64 if dtype is None else self.dtype(dtype))

    def clip(self, x: Any, a_min: Any = None, a_max: Any = None) -> Any:
        if a_min is not None:
            x = self.xp.maximum(x, a_min)
        return self.xp.minimum(x, a_max) if a_max is not None else x


# -- the engine ops, written with xp ----------------------------------------------------------

class Engine:
    """The engine ops generated code binds (``runtime.*``), and the rules' helpers this target has,
    written with ``xp``: each does, on the library's arrays, what the NumPy one does on NumPy's."""

    def __init__(self, xp: Any, own: Own, mutable: bool) -> None:
        self.xp, self.own, self.mutable = xp, own, mutable

    def unbroadcast(self, grad: Any, like: Any) -> Any:
        if type(grad) is float and type(like) is float:
            return grad
        return self.unbroadcast_to(grad, self.own.shape(like))

    def unbroadcast_to(self, grad: Any, shape: tuple) -> Any:
        xp = self.xp
        grad_shape = self.own.shape(grad)
        shape = tuple(shape)
        if grad_shape == shape:
            return grad
        if not hasattr(grad, "shape"):
            grad = xp.asarray(grad, dtype=self.own.float64)
        if not shape:
            return xp.sum(grad)
        full = np.broadcast_shapes(grad_shape, shape)  # (shapes, tuples of ints: no array)
        if full != grad_shape:
            grad = xp.broadcast_to(grad, full)
            if full == shape:
                return xp.asarray(grad, copy=True)
        extra = len(full) - len(shape)
        axes = tuple(range(extra)) + tuple(extra + i for i, n in enumerate(shape) if n == 1 and full[extra + i] != 1)
        return xp.reshape(xp.sum(grad, axis=axes), shape)

    def zeros_like(self, value: Any) -> Any:
        if isinstance(value, (int, float)):
            return 0.0
        if isinstance(value, (list, tuple)):
            return self.xp.zeros(runtime._adjoint_shape([self.own.shape(v) for v in value])[:1]
                                 + (self.own.shape(value[0]) if value else ()), dtype=self.own.float64)
        return self.xp.zeros(self.own.shape(value), dtype=self.own._float_dtype(value, None))

    def list_without(self, grad: Any, index: Any) -> Any:
        """``runtime.list_without`` for this library: a list's adjoint with the piece at ``index`` zero (an
        array with a row per item is masked, as arrays that take no write by index are too)."""
        if isinstance(grad, (list, tuple)):
            kept = list(grad)
            kept[index] = self.zeros_like(kept[index])
            return kept
        xp = self.xp
        rows = self.own.shape(grad)[0]
        keep = xp.arange(rows) != (operator.index(index) % rows)
        return xp.where(xp.reshape(keep, (rows,) + (1,) * (len(self.own.shape(grad)) - 1)), grad,
                        xp.zeros_like(grad))

    def zero_tangent(self, value: Any) -> Any:
        if not isinstance(value, tuple):
            return None if value is None else self.zeros_like(value)
        return tuple(self.zero_tangent(item) for item in value)

    def writable_copy(self, grad: Any, like: Any) -> Any:
        xp = self.xp
        shape = self.own.shape(like)
        dtype = self.own._float_dtype(grad, None)
        if not hasattr(grad, "shape"):
            return xp.full(shape, grad, dtype=dtype)
        return xp.asarray(xp.broadcast_to(grad, shape), dtype=dtype, copy=True)

    def held_apart(self, value: Any) -> Any:
        if hasattr(value, "shape") and not is_number(value):
            return self.xp.asarray(value, copy=True)
        if type(value) in (tuple, list):
            return type(value)(self.held_apart(item) for item in value)
        return value

    def if_inexact(self, grad: Any, like: Any) -> Any:
        dtype = getattr(like, "dtype", None)
        if dtype is None:  # (a list or tuple holds what is stored into it as it is: nothing truncated)
            inexact = isinstance(like, (float, complex, list, tuple))
        else:
            inexact = self.xp.isdtype(dtype, ("real floating", "complex floating"))
        return grad if inexact else self.zeros_like(grad)

    def check_no_derivative(self, value: Any, function: str, name: str, filename: str, line: int) -> None:
        dtype = getattr(value, "dtype", None)
        inexact = isinstance(value, float) if dtype is None else \
            self.xp.isdtype(dtype, ("real floating", "complex floating")) and self.own.size(value) > 0
        if inexact:
            runtime.check_no_derivative(0.5, function, name, filename, line)  # (raises its refusal)

    def check_out_cast(self, value: Any, out: Any, function: str, filename: str, line: int) -> None:
        """``runtime.check_out_cast`` of this namespace's arrays: ``out`` one of them, and a real or
        complex result written into an integer or boolean ``out`` refused, as NumPy's ufunc refuses it."""
        xp = self.xp
        dtype = getattr(out, "dtype", None)
        if dtype is None or isinstance(out, (int, float, complex)):
            runtime.check_out_cast(value, out, function, filename, line)  # (raises NumPy's refusal)
            return
        kinds = ("real floating", "complex floating")
        value_dtype = getattr(value, "dtype", None)
        inexact = isinstance(value, (float, complex)) if value_dtype is None else xp.isdtype(value_dtype, kinds)
        if inexact and not xp.isdtype(dtype, kinds) or (
                value_dtype is not None and xp.isdtype(value_dtype, "complex floating")
                and not xp.isdtype(dtype, "complex floating")):
            raise TypeError(f"{function}(..., out=...) at line {line} of {filename}: cannot cast the result "
                            f"from {value_dtype or type(value).__name__} to {dtype} with casting rule "
                            "'same_kind', as NumPy's ufunc refuses")

    def getitem_grad(self, grad: Any, a: Any, index: Any) -> Any:
        xp = self.xp
        shape = self.own.shape(a)
        if isinstance(grad, (list, tuple)):
            grad = xp.stack(list(grad))
        dtype = self.own._float_dtype(grad, None)
        if not self.mutable:
            result = xp.zeros(shape, dtype=dtype)
            at = result.at[_jax_index(index)]
            return at.set(grad) if runtime._never_repeats(index) else at.add(grad)
        if runtime._never_repeats(index):
            result = xp.zeros(shape, dtype=dtype)
            index, grad = _without_new_axes(xp, index, grad)
            result[index] = grad
            return result
        # An integer index that may name an element twice: each reading adds its part.  The positions
        # read are found on the index alone (NumPy's integers, no array of the user's); the parts are
        # added by a 0/1 matrix, in xp.
        positions = np.arange(math.prod(shape)).reshape(shape)[_numpy_index(index)].reshape(-1)
        taken = xp.asarray((np.arange(math.prod(shape))[:, None] == positions[None, :]).astype(np.float64))
        grad = xp.reshape(xp.broadcast_to(xp.asarray(grad, dtype=dtype), positions.shape
                                          if not hasattr(grad, "shape") else
                                          self._read_shape(shape, index)), (-1,))
        return xp.reshape(xp.matmul(xp.astype(taken, dtype), grad), shape)

    def astype(self, a: Any, dtype: Any) -> Any:
        return self.own.astype(a, dtype)

    def _promoted(self, a: Any, b: Any, g: Any) -> tuple:
        """``templates/numpy_linalg._promoted``: matrix forms of matmul's operands and adjoint."""
        xp = self.xp
        a2 = a[None, :] if a.ndim == 1 else a
        b2 = b[:, None] if b.ndim == 1 else b
        g2 = g if hasattr(g, "shape") else xp.asarray(g, dtype=self.own.float64)
        if a.ndim == 1:
            g2 = xp.expand_dims(g2, axis=-2)
        if b.ndim == 1:
            g2 = xp.expand_dims(g2, axis=-1)
        return a2, b2, g2

    def matmul_grad_a(self, grad: Any, a: Any, b: Any) -> Any:
        if self.own.ndim(a) == 0 or self.own.ndim(b) == 0:
            return self.unbroadcast(grad * b, a)
        if a.ndim == 1 and b.ndim == 1:
            return grad * b
        a2, b2, g2 = self._promoted(a, b, grad)
        result = self.xp.matmul(g2, self.xp.matrix_transpose(b2))
        return self.unbroadcast(result[..., 0, :] if a.ndim == 1 else result, a)

    def matmul_grad_b(self, grad: Any, a: Any, b: Any) -> Any:
        if self.own.ndim(a) == 0 or self.own.ndim(b) == 0:
            return self.unbroadcast(grad * a, b)
        if a.ndim == 1 and b.ndim == 1:
            return grad * a
        a2, b2, g2 = self._promoted(a, b, grad)
        result = self.xp.matmul(self.xp.matrix_transpose(a2), g2)
        return self.unbroadcast(result[..., 0] if b.ndim == 1 else result, b)

    def dot_grad_a(self, grad: Any, a: Any, b: Any) -> Any:
        if self.own.ndim(a) < 2 or self.own.ndim(b) < 3:  # np.dot is a @ b (or a product)
            return self.matmul_grad_a(grad, a, b)
        kept_b = list(range(b.ndim - 2)) + [b.ndim - 1]
        return self.xp.tensordot(grad, b, axes=(list(range(a.ndim - 1, self.own.ndim(grad))), kept_b))

    def dot_grad_b(self, grad: Any, a: Any, b: Any) -> Any:
        if self.own.ndim(a) < 2 or self.own.ndim(b) < 3:
            return self.matmul_grad_b(grad, a, b)
        lead = list(range(a.ndim - 1))
        return self.xp.moveaxis(self.xp.tensordot(a, grad, axes=(lead, lead)), 0, -2)

    def cast_derivative(self, d: Any, dtype: Any) -> Any:
        if np.issubdtype(np.dtype(dtype), np.inexact):  # (dtype as the user's NumPy code names it)
            return self.xp.asarray(d, dtype=self.own._float_dtype(d, None), copy=True)
        return self.xp.zeros(self.own.shape(d), dtype=self.own.float64)

    def updated_at(self, array: Any, index: Any, value: Any, how: str) -> Any:
        """``array[index] = value`` (``how``: "set", or "add" for ``+=``) where no other name sees
        ``array``: JAX's functional ``array.at[index].<how>(value)``; elsewhere (Dask) in place, and
        ``array`` itself returned."""
        if not self.mutable:
            return getattr(array.at[_jax_index(index)], how)(value)
        array[index] = value if how == "set" else array[index] + value
        return array

    def element_read(self, array: Any, index: Any) -> Any:
        """``array[index]``, copied where it is one element (a 0-d view in PyTorch, a number in NumPy)."""
        part = array[index]
        return self.xp.asarray(part, copy=True) if index is Ellipsis or getattr(part, "ndim", None) == 0 else part

    def stored_part(self, grad: Any, index: Any, value: Any) -> Any:
        """The adjoint of ``value`` in ``array[index] = value`` (``runtime.stored_part``): ``grad[index]``,
        copied, where an integer index names a position twice only at the write NumPy keeps (found on
        the index alone, in NumPy's integers)."""
        xp = self.xp
        part = xp.asarray(grad[index], dtype=self.own._float_dtype(grad, None), copy=True)
        if not runtime._never_repeats(index):
            shape = self.own.shape(grad)
            positions = np.arange(math.prod(self.own.shape(part))).reshape(self.own.shape(part))
            kept = np.full(shape, -1, dtype=np.intp)
            kept[_numpy_index(index)] = positions
            part = xp.where(xp.asarray(kept[_numpy_index(index)] == positions), part, xp.zeros_like(part))
        return self.unbroadcast(part, value)

    def _read_shape(self, shape: tuple, index: Any) -> tuple:
        return np.empty(shape, dtype=np.bool_)[_numpy_index(index)].shape

    def concatenate_grad(self, grad: Any, arrays: Any, axis: Any = 0) -> Any:
        xp, own = self.xp, self.own
        if axis is None:
            grad = own.ravel(grad)
            sizes = [own.size(a) for a in arrays]
            starts = np.cumsum([0] + sizes)
            pieces = [xp.reshape(grad[int(s):int(s) + n], own.shape(a)) for s, n, a in zip(starts, sizes, arrays)]
        else:
            lengths = [own.shape(a)[axis] for a in arrays]
            starts = np.cumsum([0] + lengths)
            ndim = own.ndim(grad)
            pieces = []
            for s, n in zip(starts, lengths):
                index = [slice(None)] * ndim
                index[axis % ndim] = slice(int(s), int(s) + n)
                pieces.append(grad[tuple(index)])
        return tuple(pieces) if isinstance(arrays, tuple) else pieces if isinstance(arrays, list) else pieces[0]

    def mul_adjoint(self, grad: Any, a: Any, b: Any) -> tuple:
        operators = _template("operators")
        if operators._repeats(a, b) or operators._repeats(b, a):
            return operators.mul_adjoint(grad, a, b)  # (a Python list repeated: no array)
        return self.unbroadcast(grad * b, a), self.unbroadcast(grad * a, b)

    def mul_tangent(self, tangent_a: Any, tangent_b: Any, a: Any, b: Any) -> Any:
        operators = _template("operators")
        if operators._repeats(a, b) or operators._repeats(b, a):
            return operators.mul_tangent(tangent_a, tangent_b, a, b)
        return tangent_a * b + a * tangent_b


def _without_new_axes(xp: Any, index: Any, grad: Any) -> tuple:
    """``result[index] = grad`` written without ``None`` in the index (Dask's stores take none): the
    axes ``None`` made, of length 1, squeezed out of ``grad``."""
    if not isinstance(index, tuple) or not any(p is None for p in index) or any(p is Ellipsis for p in index) \
            or not hasattr(grad, "shape"):
        return index, grad
    made, axis = [], 0
    for part in index:
        if part is None:
            made.append(axis)
            axis += 1
        elif isinstance(part, slice):
            axis += 1
    if len(grad.shape) != axis:  # (a part of another kind: leave it to the library)
        return index, grad
    return tuple(p for p in index if p is not None), xp.reshape(grad, tuple(n for i, n in enumerate(grad.shape)
                                                                          if i not in made))


def _numpy_index(index: Any) -> Any:
    """An index (numbers, slices, lists of integers) as NumPy reads it: for positions alone."""
    if isinstance(index, list):
        return np.asarray(index)
    if isinstance(index, tuple):
        return tuple(np.asarray(i) if isinstance(i, list) else i for i in index)
    return index


def _jax_index(index: Any) -> Any:
    """JAX refuses a list as an index: the same integers as a tuple's array."""
    if isinstance(index, list):
        return np.asarray(index)
    if isinstance(index, tuple):
        return tuple(np.asarray(i) if isinstance(i, list) else i for i in index)
    return index


def _template(name: str) -> Any:
    """A module of ``s2s_ad.templates`` (the templates/ folder: installed, or in a source checkout
    loaded by ``rules``), imported by name."""
    rules.load_templates()
    return importlib.import_module(f"s2s_ad.templates.{name}")


def engine_names() -> IdentityMap[Any, str]:
    """The ops this target writes its own version of, by identity: the name of the ``Engine`` method."""
    rules.load_templates()  # (s2s_ad.templates: in a source checkout, ../templates)
    numpy_creation, numpy_linalg, numpy_shape, operators = map(_template, ("numpy_creation", "numpy_linalg",
                                                                          "numpy_shape", "operators"))
    ops = {runtime.unbroadcast: "unbroadcast", runtime.unbroadcast_to: "unbroadcast_to",
           runtime.zeros_like: "zeros_like", runtime.zero_tangent: "zero_tangent",
           runtime.list_without: "list_without",
           runtime.writable_copy: "writable_copy", runtime.held_apart: "held_apart",
           runtime.if_inexact: "if_inexact", runtime.check_no_derivative: "check_no_derivative",
           runtime.check_out_cast: "check_out_cast",
           runtime.getitem_grad: "getitem_grad", runtime.stored_part: "stored_part", numpy_shape.concatenate_grad: "concatenate_grad",
           operators.mul_adjoint: "mul_adjoint", operators.mul_tangent: "mul_tangent",
           numpy_creation.astype: "astype", numpy_creation.cast_derivative: "cast_derivative",
           numpy_linalg.matmul_grad_a: "matmul_grad_a", numpy_linalg.matmul_grad_b: "matmul_grad_b",
           numpy_linalg.dot_grad_a: "dot_grad_a", numpy_linalg.dot_grad_b: "dot_grad_b"}
    return IdentityMap(ops.items())


@functools.lru_cache(maxsize=None)
def as_they_are() -> tuple:
    """Engine ops and rules' helpers that are plain Python (no array of NumPy's made or read; NumPy on
    axes at most): bound as they are."""
    rules.load_templates()
    numpy_linalg = _template("numpy_linalg")
    return (runtime.checkpointed, runtime.snapshots, runtime.checkpoint_stride, runtime.revolve, runtime.revolve_forward,
            runtime.revolve_last, runtime.revolve_reverse, runtime.revolve_turn, runtime.stop_gradient,
            runtime.check_number_update, runtime.derivative_lost_by, runtime.check_view_update,
            runtime.formatted, runtime.percent_formatted, runtime.format_method, runtime.check_assertion,
            runtime.check_one_number, runtime.check_view_kept, runtime.check_bound, runtime.split_piece,
            runtime.raise_exception, runtime.list_append, runtime.list_with, runtime.list_set,
            runtime.item, numpy_linalg.inverse_axes)
