"""The derivatives of a function passed as a value to a rule (``scipy.integrate.odeint``'s dynamics),
made by s2s_ad itself and handed to the rules layer (``rules.function_derivatives``), which may not
import the API: registered here on import (``s2s_ad/__init__.py`` imports this module).

Input: the user's function and the positions of the parameters to differentiate by.  Output: its
Jacobian (``api.jacobian``), and the derivative of the gradient of ``sum(w * func(...))`` along a
direction (``api.jvp`` over ``api.grad``: forward over reverse, one row of second derivatives per
weight ``w``), each made once per function and positions and then cached as s2s_ad caches every
derivative, by the kinds of the arguments.
"""
from __future__ import annotations

import functools
import itertools
import linecache
from typing import Any, Callable

import numpy as np

from ..rules import function_derivatives
from .forward_mode import jvp
from .matrices import jacobian
from .transforms import grad

_weighted_counter = itertools.count()


class _Provider:
    """``rules.function_derivatives.Provider``, by the API's own transforms."""

    @functools.lru_cache(maxsize=256)
    def jacobian(self, func: Callable, wrt: tuple[int, ...]) -> Callable[..., tuple]:
        blocks = jacobian(func, wrt=wrt)

        def call(*args: Any) -> tuple:
            found = blocks(*args)
            return found if len(wrt) > 1 else (found,)
        return call

    def hessian_vector(self, func: Callable, wrt: tuple[int, ...]) -> Callable[..., tuple]:
        def call(w: Any, args: tuple, directions: tuple) -> tuple:
            tangents: list[Any] = [np.zeros(np.shape(w))]
            given = dict(zip(wrt, directions))
            for i, value in enumerate(args):
                zero = np.zeros(np.shape(value)) if np.ndim(value) else 0.0
                tangents.append(given.get(i, zero))
            _, moved = jvp(self._gradient(func, wrt, len(args)), (w,) + tuple(args), tuple(tangents))
            return moved if len(wrt) > 1 else (moved,)
        return call

    @functools.lru_cache(maxsize=256)
    def _gradient(self, func: Callable, wrt: tuple[int, ...], arity: int) -> Callable:
        """The gradient of ``sum(w * func(p0, ..., p<arity - 1>))`` by the ``wrt`` arguments."""
        return grad(_weighted(func, arity), wrt=tuple(1 + i for i in wrt))


def _weighted(func: Callable, arity: int) -> Callable:
    """``weighted(w, p0, ..., pk) = np.sum(w * func(p0, ..., pk))``, written to a linecache pseudo-file
    (so that s2s_ad reads its source as it reads generated code's) with ``func`` among its globals."""
    params = ", ".join(f"p{i}" for i in range(arity))
    text = f"def weighted(w, {params}):\n    return np.sum(w * func({params}))\n"
    filename = f"<s2s_ad weighted dynamics {next(_weighted_counter)}>"
    linecache.cache[filename] = (len(text), None, text.splitlines(True), filename)
    names: dict[str, Any] = {"np": np, "func": func, "__name__": "s2s_ad.api.dynamics_weighted"}
    made: dict[str, Any] = {}
    exec(compile(text, filename, "exec"), names, made)
    return made["weighted"]


function_derivatives.provide(_Provider())
