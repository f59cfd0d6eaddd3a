"""The NumPy target's ownership check of the results handed to the user (``target.NumPyTarget``).

Input: what generated code returned (an array, or a tuple or list of them)
and the values the caller holds (the arguments, the primal output).
Output: the same values, each array writable and sharing memory with
nothing the caller holds nor with another result: copied only where that
cannot be shown.

Two checks: ``alone`` is the cheap one (an array that owns its memory and
that nothing but the caller's variable refers to shares memory with
nothing: read from ``ndarray.flags`` and CPython's reference counts,
calibrated at import); ``handed_out`` compares with every array held
(``np.may_share_memory``) and copies where it must.  Both know NumPy's
arrays only: another target brings its own.
"""
from __future__ import annotations

import sys
from typing import Any

import numpy as np


def handed_out(values: Any, held: tuple, copy_all: bool = False) -> Any:
    """``values`` (an array, or a tuple or list of them) as the user gets them: each array writable
    and sharing memory with nothing in ``held`` (the arguments, the primal output) nor with another
    of ``values``; copied only where it would (or, with ``copy_all``, always)."""
    if values.__class__ is np.ndarray and not copy_all:  # one array (a gradient): what _owned does, inlined
        if values.flags.writeable:
            for array in held:
                if array.__class__ is np.ndarray:
                    if _may_share_memory(values, array):
                        break
                elif isinstance(array, np.ndarray) and np.may_share_memory(values, array):
                    break
            else:
                return values
        return np.array(values, copy=True)
    return _owned(values, [h for h in held if isinstance(h, np.ndarray)], copy_all)


def _owned(value: Any, seen: list, copy_all: bool) -> Any:
    """``handed_out`` of one value, ``seen`` the arrays it must not share memory with (it grows).
    A plain function, not a closure calling itself: that would be a reference cycle holding every
    array until the garbage collector runs, and a large gradient's memory would not be reused."""
    if isinstance(value, np.ndarray):
        if copy_all or not value.flags.writeable or _shares_memory(value, seen):
            value = np.array(value, copy=True)
        seen.append(value)
        return value
    if type(value) in (tuple, list):
        return type(value)([_owned(v, seen, copy_all) for v in value])
    return value


def _shares_memory(value: np.ndarray, seen: list) -> bool:
    """Whether ``value`` may share memory with one of ``seen`` (a loop, not ``any`` of a generator:
    this runs for every pair of gradient and argument on every call)."""
    exact = value.__class__ is np.ndarray
    for held in seen:
        if (_may_share_memory if exact and held.__class__ is np.ndarray else np.may_share_memory)(value, held):
            return True
    return False


# ``np.may_share_memory`` without NumPy's ``__array_function__`` dispatch (half its time), for two
# arrays of exactly NumPy's type (which define no dispatch of their own); NumPy's function where
# that is not to be had.
_may_share_memory = getattr(np.may_share_memory, "_implementation", np.may_share_memory)


# ``alone``'s reference counts: (for an array named by one variable, for each array of a tuple so
# named); (-1, -1), which nothing passes, until calibrated (and where they cannot be found).
_COUNTS = (-1, -1)


def alone(gradient: Any) -> bool:
    """Whether ``gradient`` (an array, or a tuple of them) needs no copy, without comparing it
    with the arguments: each array owns its memory, is writable, and nothing refers to it but the
    caller's variable ``gradient`` or the tuple (the reference counts ``_calibrated`` found).

    Anything else using an array's memory (a view, a buffer, another array made on it) refers to
    the array that owns it: NumPy keeps the owner alive that way.  So an array that owns its
    memory and is referred to by nothing else shares memory with no argument and no other
    gradient: a fresh result, which generated code returns almost always.  Where this cannot be
    shown (a view, an argument returned, an array held elsewhere) ``handed_out`` compares.

    The caller must hold ``gradient`` in a plain local variable and pass it straight here, as
    ``_calibrated`` does: the counts are those of that way of calling."""
    single, each = _COUNTS
    if gradient.__class__ is tuple:
        for array in gradient:
            if array.__class__ is not np.ndarray or getrefcount(array) != each:
                return False
            flags = array.flags
            if not (flags.owndata and flags.writeable):
                return False
        return True
    if gradient.__class__ is not np.ndarray or getrefcount(gradient) != single:
        return False
    flags = gradient.flags
    return flags.owndata and flags.writeable


def _calibrated() -> tuple[int, int]:
    """``alone``'s reference counts for a gradient held as the calls hold it (a plain local variable
    naming the array or the tuple of them, passed straight to ``alone``: written the same way here,
    with no comprehension, whose variables would be cells), found on fresh arrays; and checked: one
    referred to once more, or a view, must not pass.  (-1, -1), which nothing passes, where they
    cannot be found."""
    global _COUNTS
    if getrefcount is _no_counts:
        return -1, -1
    singles, eaches = [], []
    for n in range(1, 10):
        _COUNTS = (n, -1)
        gradient: Any = np.empty(1)
        if alone(gradient):
            singles.append(n)
        _COUNTS = (-1, n)
        gradient = (np.empty(1), np.empty(1))
        if alone(gradient):
            eaches.append(n)
    if len(singles) != 1 or len(eaches) != 1:
        return -1, -1
    found = _COUNTS = (singles[0], eaches[0])
    gradient = np.empty(1)
    again = gradient
    if alone(gradient):
        return -1, -1
    gradient = (again, np.empty(1))
    if alone(gradient):
        return -1, -1
    gradient = np.empty(2)[1:]
    if alone(gradient):
        return -1, -1
    return found


def _no_counts(value: Any) -> int:
    """Where the interpreter has no reference counts (``_calibrated`` then finds none): never a count."""
    return -2


getrefcount = getattr(sys, "getrefcount", None) or _no_counts  # CPython's; elsewhere handed_out always compares
_COUNTS = _calibrated()
CALIBRATED = _COUNTS != (-1, -1)  # False: every result is compared (no reference counts to read)
