"""The Numba target's compiled versions of ``templates/numpy_linalg.py``'s helpers: matmul's and dot's
adjoints (``matmul_grad_a``, ``matmul_grad_b``, ``dot_grad_a``, ``dot_grad_b``) for float vectors and
matrices, and ``inverse_axes`` (which the adjoint of ``.T`` and ``np.transpose`` calls).

Each version must do what the Python helper does for the types it accepts (tests/targets/test_numba_backend.py
compares the two); Numba is imported by no module here when loaded (``numba.rules``).
"""
from __future__ import annotations

from typing import Any

import numpy as np

from ....rules import compiled
from .template_modules import template

linalg = template("numpy_linalg")


# -- matmul's and dot's adjoints: float vectors and matrices ------------------------------------------
# The same products of the same shapes as the helpers (a vector promoted to a row or column), by
# Numba's matrix product (BLAS, as NumPy's: the same sums, to the rounding of the BLAS each links).

def _vectors_or_matrices(types: Any, *operands: Any) -> bool:
    return all(isinstance(x, types.Array) and x.dtype == types.float64 and x.ndim in (1, 2) for x in operands)


def _product_adjoint(types: Any, which: int) -> Any:
    """The typing function of matmul_grad_a (``which`` 0) or matmul_grad_b (1) for these operands."""
    def typing(grad, a, b):
        if not _vectors_or_matrices(types, a, b):
            return None
        if a.ndim == 1 and b.ndim == 1:  # an inner product: grad is a number
            if not isinstance(grad, types.Float):
                return None
            return (lambda grad, a, b: grad * b) if which == 0 else (lambda grad, a, b: grad * a)
        if not _vectors_or_matrices(types, grad) or grad.ndim != a.ndim + b.ndim - 2:
            return None
        if a.ndim == 2 and b.ndim == 2:
            if which == 0:
                return lambda grad, a, b: np.ascontiguousarray(grad) @ np.ascontiguousarray(b).T
            return lambda grad, a, b: np.ascontiguousarray(a).T @ np.ascontiguousarray(grad)
        if a.ndim == 1:  # a row (1, k) times b (k, n): grad is a row (1, n)
            if which == 0:
                return lambda grad, a, b: (np.ascontiguousarray(grad).reshape((1, -1)) @ np.ascontiguousarray(b).T)[0]
            return lambda grad, a, b: np.ascontiguousarray(a).reshape((1, -1)).T @ np.ascontiguousarray(grad).reshape((1, -1))
        if which == 0:  # a (m, k) times b, a column (k, 1): grad is a column (m, 1)
            return lambda grad, a, b: np.ascontiguousarray(grad).reshape((-1, 1)) @ np.ascontiguousarray(b).reshape((-1, 1)).T
        return lambda grad, a, b: (np.ascontiguousarray(a).T @ np.ascontiguousarray(grad).reshape((-1, 1)))[:, 0].copy()
    return typing


# (np.dot of vectors and matrices is their matmul: dot_grad_a and dot_grad_b call matmul's adjoints there)
compiled(linalg.matmul_grad_a)(lambda types: _product_adjoint(types, 0))
compiled(linalg.matmul_grad_b)(lambda types: _product_adjoint(types, 1))
compiled(linalg.dot_grad_a)(lambda types: _product_adjoint(types, 0))
compiled(linalg.dot_grad_b)(lambda types: _product_adjoint(types, 1))


@compiled(linalg.inverse_axes)
def _inverse_axes(types):
    """inverse_axes compiled (the adjoint of ``.T`` and ``np.transpose(a, axes)`` calls it): None for None,
    and for a tuple of ints its argsort as a tuple of as many ints."""
    from numba.np.unsafe import ndarray as unsafe_ndarray
    to_fixed_tuple: Any = unsafe_ndarray.to_fixed_tuple  # (an intrinsic: its typing is Numba's, not mypy's)

    def typing(axes):
        if isinstance(axes, types.NoneType):
            return lambda axes: None
        if not isinstance(axes, types.BaseTuple) or not all(isinstance(t, types.Integer) for t in axes):
            return None
        count = len(axes)
        if count == 0:
            return lambda axes: ()

        def inverse(axes):
            return to_fixed_tuple(np.argsort(np.array(axes)), count)
        return inverse
    return typing
