"""Checking a gradient against central finite differences: ``check_grad``.

Input: a function, a call's arguments and optionally the parameters to check
(every float argument by default) and the step and tolerances.  Output: a
``GradCheck`` naming the component furthest from the difference quotient.
The step and tolerances follow the precision the function computes in, and
every evaluation replays the random draws the gradient saw.
"""
from __future__ import annotations

import inspect
import math
from dataclasses import dataclass
from typing import Any, Callable, Optional

import numpy as np

from ..core import arguments
from .calling import Wrt, _resolve_wrt, _user_facing, numpy_arrays_only, refuse_what_is_not_a_def
from .gradient import GradientFunction
from ..core.draws import Draws


@dataclass
class GradCheck:
    """How far ``grad(fn)`` is from central finite differences (``check_grad``)."""

    ok: bool
    worst: str  # the component furthest off, e.g. "d/dx[2]"
    ours: float
    numeric: float
    error: float  # |ours - numeric| there, over atol + rtol * |numeric| (ok means <= 1)

    def __str__(self) -> str:
        verdict = "ok" if self.ok else "MISMATCH"
        return (f"{verdict}: worst component {self.worst}: ours {self.ours:.10g}, finite differences "
                f"{self.numeric:.10g} ({self.error:.3g} of the tolerance)")


@_user_facing
def check_grad(fn: Callable, *args: Any, wrt: Optional[Wrt] = None, eps: Optional[float] = None,
               rtol: Optional[float] = None, atol: Optional[float] = None) -> GradCheck:
    """Compare ``grad(fn, wrt)(*args)`` with central differences; report the worst component.

    Use it to check a rule you wrote with ``@s2s_ad.adjoint``:
    ``assert s2s_ad.check_grad(f, x).ok`` (docs/api.md).

    The step and the tolerances follow the precision ``fn`` computes in (the
    least precise float among its arguments and its result: a ``float32``
    cast inside makes a ``float32`` result).  A difference within the rounding
    error of the difference quotient itself (a few epsilons of ``fn``'s values,
    over the step) is noise, not a mismatch, and is allowed on top of
    ``atol + rtol * |numeric|``.

    Parameters
    ----------
    fn : callable
        A scalar function whose source can be read.
    *args
        The point to check at.
    wrt : int, str or tuple of them, optional
        The arguments to check; by default every float or float-array argument.
    eps : float, optional
        The step: by default 1e-6 in double precision, and the cube root of the
        machine epsilon (times the component's size) in a lower one.
    rtol, atol : float, optional
        The tolerances, by default following the precision.

    Returns
    -------
    GradCheck
        ``ok`` (every component within tolerance), ``worst`` (such as ``"d/dx[2]"``),
        ``ours``, ``numeric`` and ``error`` (the difference over the tolerance there);
        ``str()`` says all of it.

    Raises
    ------
    TypeError
        No argument is a float or a float array.
    TransformError
        ``fn`` cannot be differentiated.
    """
    refuse_what_is_not_a_def("check_grad", fn)
    numpy_arrays_only(f"check_grad of {getattr(fn, '__qualname__', fn)}", args)
    params = list(inspect.signature(fn).parameters)
    positions = [i for i, a in enumerate(args) if arguments.differentiable(a)] if wrt is None else [
        params.index(w) for w in _resolve_wrt(fn, wrt)[0]]
    if not positions:
        raise TypeError(f"check_grad of {fn.__name__}: no argument is a float or float array")
    draws = Draws(fn, args)  # every difference is taken with the draws the gradient saw
    try:
        gradients = GradientFunction(fn, tuple(positions), with_value=False)(*args)
        draws.replay()
        precision = _precision(fn(*args), [args[i] for i in positions])
        return _worst_component(fn, args, params, positions, gradients, draws, eps, rtol, atol, precision)
    finally:
        draws.finish()


def _worst_component(fn: Callable, args: tuple, params: list[str], positions: list[int], gradients: tuple,
                     draws: Draws, eps: Optional[float], rtol: Optional[float], atol: Optional[float],
                     precision: float) -> GradCheck:
    """``check_grad``'s comparison, component by component, each difference replaying ``draws``."""
    double = precision <= np.finfo(np.float64).eps
    rtol = rtol if rtol is not None else (1e-5 if double else max(1e-5, float(np.sqrt(precision))))
    atol = atol if atol is not None else (1e-6 if double else max(1e-6, float(np.sqrt(precision))))
    worst = GradCheck(True, "", 0.0, 0.0, -1.0)
    for i, ours in zip(positions, gradients):
        x = np.asarray(args[i], dtype=float)
        for index in np.ndindex(x.shape):
            h = eps if eps is not None else (1e-6 if double else float(np.cbrt(precision)) * max(1.0, abs(float(x[index]))))
            step = np.zeros_like(x)
            step[index] = h
            moved = [list(args), list(args)]
            for sign, values in zip((1, -1), moved):
                values[i] = x + sign * step if isinstance(args[i], np.ndarray) else float(x + sign * step)
            draws.replay()
            above = float(fn(*moved[0]))
            draws.replay()
            below = float(fn(*moved[1]))
            numeric = (above - below) / (2 * h)
            noise = 4 * precision * (abs(above) + abs(below)) / (2 * h)  # rounding in the quotient
            value = float(np.asarray(ours)[index])
            error = abs(value - numeric) / (atol + rtol * abs(numeric) + noise)
            if np.isnan(error):  # a nan on one side only is a mismatch, never a pass
                error = 0.0 if np.isnan(value) and np.isnan(numeric) else math.inf
            if error > worst.error:
                label = f"d/d{params[i]}" + (f"[{', '.join(map(str, index))}]" if index else "")
                worst = GradCheck(error <= 1.0, label, value, numeric, error)
    return worst


def _precision(result: Any, arguments: list) -> float:
    """The machine epsilon of the least precise float among ``result`` and ``arguments``."""
    found = [float(np.finfo(np.float64).eps)]
    for value in [result, *arguments]:
        dtype = getattr(value, "dtype", None)
        if dtype is not None and np.issubdtype(dtype, np.inexact):
            found.append(float(np.finfo(dtype).eps))
    return max(found)
