"""A float64 vector as a list of Python floats, for the Python target's reverse loops (``passes/scalar_cells.py``).

Input: an array and the values the loop's Python floats may meet (the function's parameters).
Output: a list of the array's values, exactly (``tolist``), where the array is a one-dimensional float64
vector and nothing beside it is a float narrower than float64; the array itself otherwise, on which the
same loop code runs.  ``cells_array`` makes the float64 array of such a list again.

Why a list: in CPython an element read of a NumPy array makes a NumPy scalar, whose arithmetic costs
three times a Python float's.  Why the values beside it: a Python float is weakly typed (NEP 50), so its
product with NumPy's float32 is a float32 where NumPy's float64 made a float64.
"""
from __future__ import annotations

import types
from typing import Any

import numpy as np


def cells(array: Any, *around: Any) -> Any:
    """A one-dimensional float64 array's values as a list of Python floats, for a loop that reads
    and writes them one by one (``scalar_cells``: the Python target's reverse loops), where no value in
    ``around`` (the function's parameters and the free names it reads) is of a float type narrower
    than float64; anything else as it is (the loop's code runs on either).

    Why ``around``: a Python float is weakly typed (NEP 50), so a product of one with NumPy's float32
    is a float32 where the product of NumPy's float64 with it was a float64; a list's Python floats
    meeting a float32 would round the adjoints to float32."""
    if array.__class__ is np.ndarray and array.ndim == 1 and array.dtype == np.float64 and \
            all(_wide(value) for value in around):
        return array.tolist()
    return array


# The types whose values a Python float meets as NumPy's float64 would: their arithmetic with it is
# float64 or wider.
_WIDE_TYPES = frozenset({float, int, bool, complex, np.float64, np.complex128, np.int64, np.int32, np.int16,
                         np.int8, np.uint64, np.uint32, np.uint16, np.uint8, np.bool_, type(None), str})


def _wide(value: Any) -> bool:
    """Whether ``value`` meets a Python float as NumPy's float64 would (see ``cells``): a number or
    array of integers, truths, float64 or complex128; a function or module (never arithmetic).
    Anything else (float32, float16, a container, an object, another library's array) is not."""
    kind = value.__class__
    if kind in _WIDE_TYPES:
        return True
    if kind is np.ndarray:
        return value.dtype.kind in "iub" or value.dtype == np.float64 or value.dtype == np.complex128
    return isinstance(value, _NEVER_ARITHMETIC)


_NEVER_ARITHMETIC = (types.FunctionType, types.BuiltinFunctionType, types.MethodType, np.ufunc, type,
                     types.ModuleType)


def cells_array(values: Any) -> Any:
    """The float64 array of what ``cells`` made a list of (each value converted as a store into a
    float64 array converts it); anything else as it is."""
    if values.__class__ is list:
        return np.array(values, dtype=np.float64)
    return values


def float64_as_float(value: Any, cells_of: Any) -> Any:
    """``value`` as the Python float of the same number where it is NumPy's float64 and ``cells_of`` (the
    vector its loop reads) was made a list; anything else as it is (``passes/primal_cells.py``: a value a
    forward loop records for the reverse sweep, which then computes in Python floats)."""
    if value.__class__ is _FLOAT64 and cells_of.__class__ is list:
        return float(value)
    return value


_FLOAT64 = np.float64  # (one global read on each call, not two)
