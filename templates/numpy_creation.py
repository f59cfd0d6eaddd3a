# mypy: disable-error-code="no-redef"
# (a function's adjoint and tangent rules are both named after it: the second redefines the name)
"""Array creation: functions whose result is a new array the function owns.

Arrays made by these may be written into (``out[i] = v``); the zero-valued
constructors carry no derivative.  The end of the module declares what holds
of NumPy's functions as a family (what they return, which fold on constants).
"""
from __future__ import annotations

import types

import random
from typing import Any, Optional

import numpy as np

from s2s_ad.rules import adjoint, declare, fresh_arrays, nondifferentiable, tangent
from s2s_ad.core.runtime import if_inexact, unbroadcast


# -- helpers: what the code these rules generate calls ----------------------------------------------

def astype(a: Any, dtype: Any) -> np.ndarray:
    """``a.astype(dtype)``: a new array (what the method means in differentiated code)."""
    return np.asarray(a).astype(dtype)


def copy_method(a: Any) -> Any:
    """``a.copy()`` as Python calls it: an array's copy, or a list's new list.  Lowering's ``x.copy()``
    where the analysis cannot tell whether ``x`` is an array; where it can, the call is NumPy's
    ``np.copy`` (``passes/method_copies.py``), which would make an array of a list."""
    return a.copy()


def cast_derivative(d: Any, dtype: Any) -> Any:
    """A derivative carried through a cast to ``dtype``: itself (in floats) for a cast to a
    floating type; zeros for a cast to integers or booleans, which carries no derivative."""
    if np.issubdtype(np.dtype(dtype), np.inexact):
        return np.array(d, dtype=np.result_type(d, 1.0))
    return np.zeros(np.shape(d))


def linspace_weights(num: int, endpoint: bool = True, points: Any = None) -> np.ndarray:
    """How much of ``stop`` each point of ``np.linspace(start, stop, num, endpoint)`` holds
    (``1 -`` that of ``start``), shaped to broadcast against ``points``, the result of that call
    (the points along its first axis, the endpoints' axes after it); a vector where None."""
    trailing = 0 if points is None else np.ndim(points) - 1
    return np.reshape(np.linspace(0.0, 1.0, num, endpoint=endpoint), (-1,) + (1,) * trailing)

nondifferentiable(np.zeros, np.ones, np.empty, np.zeros_like, np.ones_like, np.empty_like, np.eye, np.identity)
nondifferentiable(np.shape, np.ndim, np.size, attributes={"shape": np.shape, "ndim": np.ndim, "size": np.size})
fresh_arrays(np.zeros, np.ones, np.empty, np.full, np.zeros_like, np.ones_like, np.empty_like, np.full_like,
             np.arange, np.linspace, np.eye, np.identity, np.copy, np.array, astype, cast_derivative, copy_method)


@adjoint(np.copy, linear=True, examples=({"a": (3,)}, {"a": (2, 3)}), shape_from="like")
def copy(out, a, d_out):
    d_a = d_out


@adjoint(copy_method, linear=True, method="copy", examples=({"a": (3,)}, {"a": (2, 3)}), kind_of_argument=True)
def copy_method_rule(out, a, d_out):
    d_a = d_out  # (a list's adjoint, its items' adjoints, passes through as an array's does)


@adjoint(np.array, examples=({"object": (3,)}, {"object": (3,), "dtype": "int32"}))
def array(out, object, dtype=None, *, d_out):
    d_object = if_inexact(d_out, out)  # converted to integers: truncated, no derivative


@tangent(np.array)
def array(out, object, dtype=None, *, t_object):
    t_out = if_inexact(np.array(t_object), out)


@adjoint(np.full_like, examples=({"a": np.zeros(3), "fill_value": ()}, {"a": np.zeros((2, 3)), "fill_value": (3,)},
                                  {"a": np.zeros(3, dtype=int), "fill_value": ()}), shape_from="like",
         zero_derivative=("a",))
def full_like(out, a, fill_value, dtype=None, *, d_out):
    d_fill_value = unbroadcast(if_inexact(d_out, out), fill_value)  # a row fills every row


@tangent(np.full_like)
def full_like(out, a, fill_value, dtype=None, *, t_fill_value):
    t_out = if_inexact(np.zeros(np.shape(out)) + t_fill_value, out)


@adjoint(np.full, examples=({"shape": 3, "fill_value": ()}, {"shape": (2, 3), "fill_value": (3,)},
                            {"shape": (2, 3), "fill_value": (2, 1)}, {"shape": (2,), "fill_value": (), "dtype": "int32"}))
def full(out, shape, fill_value, dtype=None, *, d_out):
    d_fill_value = unbroadcast(if_inexact(d_out, out), fill_value)  # dtype=int truncates: no derivative


@tangent(np.full)
def full(out, shape, fill_value, dtype=None, *, t_fill_value):
    t_out = if_inexact(np.zeros(np.shape(out)) + t_fill_value, out)


# out[i] = start + i * step; one argument alone is the stop (0, 1, 2, ...); the stop sets only the length
@adjoint(np.arange, examples=({"start": np.array(0.25), "stop": np.array(2.9), "step": np.array(0.5)},
                              {"start": np.array(0.3), "stop": np.array(2.1)}, {"start": np.array(3.3)}),
         zero_derivative=("stop",))
def arange(out, start, stop=None, step=None, *, dtype=None, d_out):
    moving = if_inexact(d_out, out)
    d_start = np.sum(moving) * (stop is not None)
    d_step = np.sum(moving * np.arange(np.size(out)))


@tangent(np.arange)
def arange(out, start, stop=None, step=None, *, dtype=None, t_start, t_step):
    t_out = if_inexact(np.zeros(np.shape(out)) + t_start * (stop is not None) + t_step * np.arange(np.size(out)), out)


@tangent(np.copy)
def copy(out, a, t_a):
    t_out = np.copy(t_a)  # a new array, like the copy: writes into it must not reach t_a


@tangent(copy_method)
def copy_method_rule(out, a, t_a):
    t_out = copy_method(t_a)  # a new array or list, like the copy


@adjoint(np.linspace, examples=({"start": (), "stop": (), "num": 5}, {"start": (), "stop": (), "num": 4, "endpoint": False},
                                {"start": (), "stop": (), "num": 1}, {"start": (3,), "stop": (), "num": 4},
                                {"start": (2, 3), "stop": (3,), "num": 3}), makes_floats=2)
def linspace(out, start, stop, num=50, endpoint=True, *, d_out):
    # out[k] = start + (stop - start) * w[k]: the endpoints are inputs, not constants
    weights = linspace_weights(num, endpoint, out)
    d_start = unbroadcast(np.sum(d_out * (1.0 - weights), axis=0), start)
    d_stop = unbroadcast(np.sum(d_out * weights, axis=0), stop)


@tangent(np.linspace)
def linspace(out, start, stop, num=50, endpoint=True, *, t_start, t_stop):
    weights = linspace_weights(num, endpoint, out)
    t_out = t_start * (1.0 - weights) + t_stop * weights + np.zeros(np.shape(out))


@adjoint(astype, method="astype", examples=({"a": (3,), "dtype": float}, {"a": (2, 3), "dtype": np.float64},
                                            {"a": (3,), "dtype": int}))
def astype_rule(out, a, dtype, d_out):
    d_a = cast_derivative(d_out, dtype)


@tangent(astype)
def astype_rule(out, a, dtype, t_a):
    t_out = cast_derivative(t_a, dtype)


@adjoint(cast_derivative, linear=True, examples=({"d": (3,), "dtype": float}, {"d": (3,), "dtype": bool}))
def cast_derivative_rule(out, d, dtype, d_out):
    d_d = cast_derivative(d_out, dtype)


# Facts about operations with no rule here (see s2s_ad.rules.FACTS).
declare(np.size, np.ndim, counts=True)
declare(np.zeros, np.ones, np.empty, np.full, shape_from="argument")
declare(np.zeros, np.ones, np.empty, np.eye, np.identity, np.random.rand, np.random.randn, np.random.random,
        makes_floats=1)
declare(np.zeros_like, np.ones_like, np.empty_like, shape_from="like")


def _matrix(*ranks: int) -> int:
    """np.eye(n, m, k) and np.identity(n): a matrix, whatever the arguments."""
    return 2


declare(np.eye, np.identity, result_rank=_matrix)


def _linspaced(*ranks: int) -> Optional[int]:
    """np.linspace(start, stop[, num, endpoint]): an axis of points before the endpoints' own axes; with
    ``retstep`` given (a fifth argument) a tuple, whose rank this does not tell."""
    return 1 + max(ranks[:2]) if 2 <= len(ranks) <= 4 else None


declare(np.linspace, result_rank=_linspaced)
# Makers of random generators, by the keyword of their seed: one made without a seed is refused (draws.py).
declare(np.random.default_rng, np.random.RandomState, np.random.PCG64, np.random.PCG64DXSM, np.random.MT19937,
        np.random.Philox, np.random.SFC64, seeded_by="seed")
declare(np.random.SeedSequence, seeded_by="entropy")
declare(random.Random, seeded_by="x")


# NumPy as a family (see s2s_ad.rules.FACTS).  Every callable NumPy's namespaces export whose own module
# is NumPy's returns a number or an array (those that return tuples say returns_sequence=True); its
# builtin (C) functions are computed once where called on constants.  Ufuncs need no declaration: the
# engine reads their outputs (nout) and purity off the ufunc itself.
_NUMERIC_MODULES = {"numpy", "numpy.linalg", "numpy.fft", "numpy.lib", "numpy._core.fromnumeric",
                    "numpy.core.fromnumeric", "numpy._core.numeric", "numpy.core.numeric"}


def _exported() -> list:
    """The hashable callables, other than ufuncs, of NumPy's main namespaces."""
    found = []
    for namespace in (np, np.linalg, np.fft, np.lib):
        for value in vars(namespace).values():
            if callable(value) and not isinstance(value, np.ufunc):
                try:
                    hash(value)
                except TypeError:
                    continue
                found.append(value)
    return found


declare(*[f for f in _exported() if getattr(f, "__module__", None) in _NUMERIC_MODULES], numeric=True)
declare(*[f for f in _exported() if isinstance(f, types.BuiltinFunctionType) and f.__module__ == "numpy"],
        foldable=True)


nondifferentiable(linspace_weights)  # the weights depend on the count only
