"""The Numba target's compiled versions of ``templates/numpy_creation.py``'s np.full for an array
``fill_value`` (Numba's own np.full takes a number only), np.array of an array (a copy: Numba's own takes
lists and tuples), np.linspace with ``endpoint=`` given (Numba's
own takes none), ``copy_method`` (``x.copy()`` of a list or an array), and ``linspace_weights`` (the adjoints and tangents of np.linspace and np.logspace).

Each version must do what the Python function does for the types it accepts
(tests/targets/test_numba_backend.py compares the two); Numba is imported by no module here when loaded
(``numba.rules``).
"""
from __future__ import annotations

from typing import Any

import numpy as np

from ....rules import compiled
from .argument_types import is_int, is_none, is_truth, known
from .template_modules import template

creation = template("numpy_creation")


@compiled(np.full)
def _full(types):
    """np.full(shape, an array) (backend="numba"; Numba's own takes a number only): the array spread
    over the shape, of its dtype, as NumPy's copyto does (shapes that do not broadcast raise)."""
    def typing(shape, fill_value, dtype=None):
        shaped = isinstance(shape, types.Integer) or \
            isinstance(shape, types.UniTuple) and isinstance(shape.dtype, types.Integer) or \
            isinstance(shape, types.Tuple) and len(shape) == 0
        if shaped and isinstance(fill_value, types.Array) and dtype is None:
            return lambda shape, fill_value, dtype=None: np.broadcast_to(fill_value, shape).copy()
        return None
    return typing


@compiled(np.array)
def _array(types):
    """np.array(an array) (backend="numba"; Numba's own takes lists and tuples): a copy, of its dtype and
    shape, as NumPy's (which keeps a Fortran-ordered array's order: the same numbers)."""
    def typing(object, dtype=None):
        if isinstance(object, types.Array) and is_none(types, dtype):
            return lambda object, dtype=None: object.copy()
        return None
    return typing


@compiled(creation.copy_method)
def _copy_method(types):
    """copy_method(a), ``a.copy()`` of a value the analysis could not prove an array (a list, or an array
    after all): the value's own copy, as Python's method makes it."""
    def typing(a):
        if isinstance(a, (types.Array, types.List)):
            return lambda a: a.copy()
        return None
    return typing


@compiled(creation.linspace_weights)
def _linspace_weights(types):
    """linspace_weights: ``i * (1 / div)`` at each ``i`` below ``num`` (``div`` is ``num - 1`` with the
    endpoint, else ``num``), the last 1.0 with the endpoint, as np.linspace(0.0, 1.0, num, endpoint)
    computes them (its ``arange * step``; where ``div`` is 0, the one point 0.0); a negative count
    raises ValueError, as NumPy does.  Shaped (num, 1, ...) with as many 1s as ``points`` has axes
    after its first."""
    def typing(num, endpoint=True, points=None):
        if not isinstance(num, types.Integer) or isinstance(num, types.Boolean) or not is_truth(types, endpoint):
            return None
        if is_none(types, points):
            trailing = 0
        elif isinstance(points, types.Array) and points.ndim >= 1:
            trailing = points.ndim - 1
        else:
            return None
        ones = (1,) * trailing

        def weights(num, endpoint=True, points=None):
            if num < 0:
                raise ValueError("linspace_weights: a negative number of samples")
            div = num - 1 if endpoint else num
            out = np.empty(num)
            step = 1.0 / div if div > 0 else 1.0  # (NumPy multiplies by the span, 1.0, where div is 0)
            for i in range(num):
                out[i] = float(i) * step
            if endpoint and num > 1:
                out[num - 1] = 1.0
            return out.reshape((num,) + ones)
        return weights
    return typing


@compiled(np.linspace)
def _linspace(types):
    """np.linspace(start, stop, num, endpoint) of two numbers with ``endpoint=`` given (Numba's own
    takes none): NumPy's points bit for bit, ``i * step + start`` with ``step = (stop - start) / div``
    (``div`` is ``num - 1`` with the endpoint, else ``num``), ``(i / div) * (stop - start) + start``
    where the step is 0, ``i * (stop - start) + start`` where ``div`` is 0, and ``stop`` last with
    the endpoint.  Other arguments (``retstep``, ``dtype``, ``axis``, arrays) run as Python."""
    def typing(start, stop, num=50, endpoint=True, retstep=False, dtype=None, axis=0):
        counted = is_int(types, num) or isinstance(num, types.Omitted) and type(num.value) is int
        plain = known(types, retstep, bool) is False and is_none(types, dtype) and known(types, axis, int) == 0
        if isinstance(endpoint, types.Omitted) or not (is_truth(types, endpoint) and counted and plain
                                                       and _number(types, start) and _number(types, stop)):
            return None  # (no endpoint given: Numba's own)

        def points(start, stop, num=50, endpoint=True, retstep=False, dtype=None, axis=0):
            if num < 0:
                raise ValueError("linspace: a negative number of samples")
            first, last = float(start), float(stop)
            div = num - 1 if endpoint else num
            delta = last - first
            out = np.empty(num)
            step = delta / div if div > 0 else 0.0
            for i in range(num):
                if div <= 0:
                    out[i] = float(i) * delta + first
                elif step == 0.0:
                    out[i] = float(i) / div * delta + first
                else:
                    out[i] = float(i) * step + first
            if endpoint and num > 1:
                out[num - 1] = last
            return out
        return points
    return typing


def _number(types: Any, value: Any) -> bool:
    """A real number (an int or a float, not a truth value)."""
    return isinstance(value, (types.Integer, types.Float)) and not isinstance(value, types.Boolean)
