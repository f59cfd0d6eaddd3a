"""The Numba target's compiled versions of ``templates/numpy_statistics.py``'s helpers of np.cov's and
np.corrcoef's adjoints (Numba compiles the two functions themselves): ``cov_data``, ``cov_divisor``,
``cov_matrix_adjoint``, ``cov_data_adjoint`` and ``correlation_adjoint``.

Input: float64 vectors and matrices (``y`` an array or None), ``rowvar`` and ``bias`` truth values,
``ddof`` an int or None, ``which`` a literal 0 or 1.  Output: the helpers' numbers and shapes, written with
the same NumPy operations (matrix products by Numba's BLAS: the same sums to the rounding of the BLAS each
links); a matrix read as columns (``rowvar=False``) is copied into rows rather than viewed.  Other types
run as Python.

Each version must do what the Python helper does for the types it accepts
(tests/targets/test_numba_statistics.py compares the two); Numba is imported by no module here when loaded
(``numba.rules``).
"""
from __future__ import annotations

from typing import Any

import numpy as np

from ....rules import compiled
from .argument_types import is_int, is_none, is_truth
from .template_modules import template

statistics = template("numpy_statistics")


def _floats(types: Any, value: Any) -> bool:
    return isinstance(value, types.Array) and value.dtype == types.float64 and value.ndim in (1, 2)


def _kernels() -> Any:
    """``rows(v, rowvar)`` and ``centred(data)`` (compiled, built once): NumPy's reading of one
    argument of np.cov as rows of variables, a new C-ordered matrix; each row less its mean."""
    from numba.extending import register_jitable

    @register_jitable
    def rows(v, rowvar):
        matrix = np.atleast_2d(v)
        if not rowvar and matrix.shape[0] != 1:
            return np.ascontiguousarray(matrix.T)
        return np.ascontiguousarray(matrix)

    @register_jitable
    def centred(data):
        return data - np.mean(data, axis=1, keepdims=True)
    return rows, centred


@compiled(statistics.cov_data)
def _cov_data(types):
    """cov_data: ``m``'s rows (its columns where not ``rowvar``), then ``y``'s."""
    rows, _ = _kernels()

    def typing(m, y, rowvar):
        if not _floats(types, m) or not is_truth(types, rowvar):
            return None
        if is_none(types, y):
            return lambda m, y, rowvar: rows(m, rowvar)
        if not _floats(types, y):
            return None
        return lambda m, y, rowvar: np.concatenate((rows(m, rowvar), rows(y, rowvar)), axis=0)
    return typing


@compiled(statistics.cov_divisor)
def _cov_divisor(types):
    """cov_divisor: the number of observations less ``ddof`` (None: 0 with ``bias``, else 1)."""
    def typing(data, bias, ddof):
        if not isinstance(data, types.Array) or data.ndim != 2 or not is_truth(types, bias):
            return None
        if is_none(types, ddof):
            return lambda data, bias, ddof: data.shape[1] - (0 if bias else 1)
        if is_int(types, ddof):
            return lambda data, bias, ddof: data.shape[1] - ddof
        return None
    return typing


@compiled(statistics.cov_matrix_adjoint)
def _cov_matrix_adjoint(types):
    """cov_matrix_adjoint: (G + G^T) Xc / divisor, G the adjoint reshaped to a square."""
    _, centred = _kernels()

    def typing(grad, data, divisor):
        if not isinstance(data, types.Array) or data.ndim != 2 or data.dtype != types.float64 or \
                not isinstance(grad, (types.Array, types.Float)) or not isinstance(divisor, (types.Integer, types.Float)):
            return None

        def adjoint(grad, data, divisor):
            count = data.shape[0]
            square = np.ascontiguousarray(np.asarray(grad, dtype=np.float64)).reshape((count, count))
            return np.ascontiguousarray(square + square.T) @ centred(data) / divisor
        return adjoint
    return typing


@compiled(statistics.cov_data_adjoint)
def _cov_data_adjoint(types):
    """cov_data_adjoint: the rows of m (``which`` 0) or of y (1) back into that argument's shape."""
    rows, _ = _kernels()

    def typing(grad, m, y, rowvar, which):
        first = isinstance(which, types.IntegerLiteral) and which.literal_value == 0
        second = isinstance(which, types.IntegerLiteral) and which.literal_value == 1
        if not (isinstance(grad, types.Array) and grad.ndim == 2 and _floats(types, m) and is_truth(types, rowvar)) or \
                not (first and (is_none(types, y) or _floats(types, y)) or second and _floats(types, y)):
            return None

        def back(grad, m, y, rowvar, which):
            count = rows(m, rowvar).shape[0]
            part = grad[:count] if first else grad[count:]
            v = m if first else y
            if not rowvar and np.atleast_2d(v).shape[0] != 1:
                part = part.T
            return np.ascontiguousarray(part).reshape(v.shape)
        return back
    return typing


@compiled(statistics.correlation_adjoint)
def _correlation_adjoint(types):
    """correlation_adjoint: the adjoint of the covariance in R = C / (s s^T), the helper's steps."""
    _, centred = _kernels()

    def typing(grad, data):
        if not isinstance(data, types.Array) or data.ndim != 2 or data.dtype != types.float64 or \
                not isinstance(grad, (types.Array, types.Float)):
            return None

        def adjoint(grad, data):
            count = data.shape[0]
            rows = centred(data)
            half = rows @ np.ascontiguousarray(rows.T)
            covariance = (half + half.T) / 2.0
            spread = np.sqrt(np.diag(covariance))
            scale = np.outer(spread, spread)
            square = np.ascontiguousarray(np.asarray(grad, dtype=np.float64)).reshape((count, count))
            ratio = covariance / scale
            moved_spread = -(np.sum(square * ratio, axis=1) + np.sum(square * ratio, axis=0)) / spread
            return square / scale + np.diag(moved_spread / (2.0 * spread))
        return adjoint
    return typing
