"""Calls with float16, float32 or complex64 data under ``backend="numba"``: run compiled in float64
(complex128), the results given the types NumPy's own run gives them.

Input: a call's arguments, at least one of them an array or NumPy number of a narrow dtype
(``NARROW``), the compiled call ``checked`` (``target._compiled``) and the generated function
``function`` it compiles.  Output: the call's results, with the types, dtypes and structure the
Python backend's results have for arguments of these types, and the numbers the compiled code
computes from the arguments widened.

Why not compile the float32 code as it stands: Numba computes a float32 array times a Python float
in float64 (NumPy 2 in float32), so the compiled code's values change dtype where NumPy's do not: a
loop-carried array that starts as float32 and becomes float64 cannot be typed (the compile fails),
and where it compiles the results' dtypes differ from NumPy's.  Widening every narrow argument
(``widened``) gives the code the float64 specialization it has anyway, so whatever compiles for
float64 compiles here, with no second compile; the results are then cast to NumPy's types.

Which types: the first call with a new key (each argument's type and dtype, a tuple's or list's
members' too) runs ``function`` as Python on the arguments as given and returns its results (NumPy's
own numbers); their structure (``_Shape``: an array's dtype, a NumPy number's type, a tuple's, list's
or dict's members) is kept for the key, and every later call's compiled results are cast to it.  (So
the first call and the later ones agree to float32's rounding, not bit for bit; running both at the
first call would draw twice from a generator passed in.)  A later call whose results do not fit it
(a list of another length holding different types, a dict of other keys) returns the Python run's
results instead (or, where a random generator is passed in, which would draw twice, the compiled
results as computed).  A result of another kind (the tape a ``vjp``'s forward part hands
its backward part: a record stack in Python, a float64 array compiled) is passed on as computed.
Arguments of ``np.longdouble`` keep the code on Python (Numba has none, and float64 would lose its
digits): said once (``CompileFallbackWarning``).

The numbers: computed in float64 from the exact float32 values, then rounded once, they are usually
closer to the exact result than NumPy's float32 run, which rounds at every operation; the two differ
by float32's rounding (tests/targets/test_numba_narrow.py checks both against the float64
gradient).
"""
from __future__ import annotations

import threading
from typing import Any, Callable, Optional

import numpy as np

# Narrow dtypes' characters: widened to float64 (float16, float32) or complex128 (complex64)
NARROW = frozenset("efF")
# np.longdouble and np.clongdouble: run as Python (Numba has neither; widening would round them)
UNCOMPILED = frozenset("gG")
_WIDER = {"e": np.dtype(np.float64), "f": np.dtype(np.float64), "F": np.dtype(np.complex128)}


def widened(value: Any) -> Any:
    """``value`` with each narrow array or NumPy number in it (also in a tuple or list) in its wide dtype."""
    dtype = getattr(value, "dtype", None)
    if dtype is not None and dtype.char in NARROW:
        wide = _WIDER[dtype.char]
        return value.astype(wide) if isinstance(value, np.ndarray) else wide.type(value)
    if type(value) is tuple:
        return tuple(widened(item) for item in value)
    if type(value) is list:
        return [widened(item) for item in value]
    return value


# What a result's types are: ("array", dtype), ("number", a NumPy scalar type), ("python", a Python
# number's type or None's), ("tuple" or "list", the members' shapes), ("dict", keys -> shapes), or
# ("kept", its type): an object of another kind (a tape's record stack, which the compiled code hands
# over as a float64 array), passed on as the compiled code gives it
_Shape = tuple


class _Unfit(Exception):
    """A result whose structure is not the one kept for its key."""


def shape_of(result: Any) -> _Shape:
    """``result``'s types (``_Shape``)."""
    if type(result) is np.ndarray:
        return ("array", result.dtype)
    if isinstance(result, np.generic):
        return ("number", type(result))
    if result is None or type(result) in (bool, int, float, complex):
        return ("python", type(result))
    if type(result) in (tuple, list):
        return (type(result).__name__, tuple(shape_of(item) for item in result))
    if type(result) is dict:
        return ("dict", {key: shape_of(item) for key, item in result.items()})
    return ("kept", type(result))


def cast(result: Any, shape: _Shape) -> Any:
    """``result`` (the compiled code's, from widened arguments) with the types ``shape`` names."""
    kind, what = shape
    if kind == "kept":
        return result
    if kind in ("array", "number", "python"):
        if what is type(None):
            if result is not None:
                raise _Unfit
            return None
        if isinstance(result, (tuple, list, dict)) or result is None:
            raise _Unfit
        data = np.asarray(result)
        target = what if kind == "array" else np.dtype(what)
        # float64 to float32, never a float to an int or a complex to a float: those would be other numbers
        if not np.can_cast(data.dtype, target, "same_kind") or (kind != "array" and data.ndim != 0):
            raise _Unfit
        if kind == "array":
            return data.astype(what, copy=False)
        return what(result)
    if kind == "dict":
        if type(result) is not dict or result.keys() != what.keys():
            raise _Unfit
        return {key: cast(item, what[key]) for key, item in result.items()}
    if type(result).__name__ != kind:
        raise _Unfit
    if len(result) == len(what):
        members = [cast(item, member) for item, member in zip(result, what)]
    elif what and all(member == what[0] for member in what):  # one type throughout: any length
        members = [cast(item, what[0]) for item in result]
    else:
        raise _Unfit
    return tuple(members) if kind == "tuple" else members


_UNSEEN = ("unseen",)
_GENERATORS = (np.random.Generator, np.random.RandomState)


def _key(values: Any) -> tuple:
    """Each value's type and dtype, a tuple's or list's members' too (what decides the results' types)."""
    return tuple((value.__class__, _key(value)) if type(value) in (tuple, list) else
                 (value.__class__, getattr(value, "dtype", None)) for value in values)


class NarrowCalls:
    """The calls of one compiled function with narrow arguments (see the module's docstring)."""

    def __init__(self, function: Callable, checked: Callable, say: Callable[[str], None]) -> None:
        self.function = function  # the generated code, run as Python
        self.checked = checked  # the compiled call, for wide arguments
        self.say = say  # says (once) why calls of a key run as Python
        self.shapes: dict[tuple, Optional[_Shape]] = {}
        self.lock = threading.Lock()

    def __call__(self, args: tuple) -> Any:
        key = _key(args)
        shape = self.shapes.get(key, _UNSEEN)
        if shape is _UNSEEN:
            return self._first(key, args)
        if shape is None:
            return self.function(*args)
        result = self.checked(*[widened(arg) for arg in args])
        try:
            return cast(result, shape)
        except _Unfit:  # results of another structure this time: NumPy's own run gives their types
            if any(isinstance(arg, _GENERATORS) for arg in args):
                return result  # (running again would draw again: the compiled results, as computed)
            return self.function(*args)

    def _first(self, key: tuple, args: tuple) -> Any:
        """A key's first call: it runs as Python, whose results give their types (and are returned: the
        code runs once per call, so a generator passed in draws once)."""
        expected = self.function(*args)
        uncompiled = next((arg for arg in args if getattr(arg, "dtype", None) is not None
                           and arg.dtype.char in UNCOMPILED), None)
        with self.lock:
            self.shapes[key] = None if uncompiled is not None else shape_of(expected)
        if uncompiled is not None:
            self.say(f"arguments of dtype {uncompiled.dtype} (Numba has no long double, and float64 would "
                     "round it)")
        return expected
