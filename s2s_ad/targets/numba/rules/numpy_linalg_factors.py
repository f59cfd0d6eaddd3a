"""The Numba target's compiled versions of ``templates/numpy_linalg.py``'s helpers of the factorizations
and determinants, for a float64 matrix (two dimensions; a stack of them runs as Python): np.linalg.cholesky
with ``upper=`` and np.linalg.eigh with ``UPLO="L"`` (Numba's own take neither), cholesky's
``transposed_if`` and ``cholesky_triangle``, np.linalg.eigh's and eigvalsh's ``symmetric_adjoint``, the
``hermitian_seen`` and ``hermitian_adjoint`` of np.linalg.pinv and np.linalg.svd, np.linalg.det's
``det_cofactors``, np.linalg.slogdet's ``inverse_transposed`` and ``zero_safe_product``, np.linalg.qr's
``qr_checked`` and np.linalg.matrix_power's ``matrix_power_grad``.

Each version must do what the Python helper does for the types it accepts (tests/targets/test_numba_linalg.py
compares the two, and both with differences); Numba is imported by no module here when loaded (``numba.rules``).
"""
from __future__ import annotations

import functools
from typing import Any

import numpy as np

from ....rules import compiled
from .argument_types import is_none, known
from .template_modules import template

linalg = template("numpy_linalg")


def _matrix(types: Any, x: Any) -> bool:
    """A float64 matrix (two dimensions)."""
    return isinstance(x, types.Array) and x.ndim == 2 and x.dtype == types.float64


# -- cholesky: which triangle, the factor as the lower one ---------------------------------------------

@compiled(linalg.cholesky_triangle)
def _cholesky_triangle(types):
    """cholesky_triangle(upper): "U" or "L", as Python's (a string Numba holds as a literal where ``upper`` is one)."""
    def typing(upper):
        if not isinstance(upper, types.Boolean):
            return None
        return lambda upper: "U" if upper else "L"
    return typing


@compiled(linalg.transposed_if)
def _transposed_if(types):
    """transposed_if(x, flag) for a matrix and a flag known when compiling (a literal): its transpose (a
    view, as np.swapaxes's) or itself; a missing tangent (a number) as it is."""
    def typing(x, flag):
        flagged = known(types, flag, bool)
        if isinstance(x, (types.Float, types.Integer)):
            return lambda x, flag: x
        if flagged is None or not (isinstance(x, types.Array) and x.ndim == 2):
            return None
        return (lambda x, flag: x.T) if flagged else (lambda x, flag: x)
    return typing


# -- eigh, eigvalsh, pinv and svd of a symmetric matrix: the triangle read ------------------------------

@compiled(linalg.symmetric_adjoint)
def _symmetric_adjoint(types):
    """symmetric_adjoint(both, UPLO) of a matrix: the triangle ``UPLO`` ("U" or "L", a literal or a string
    known at run time, as ``cholesky_triangle`` gives it) of ``both``, its diagonal halved."""
    def typing(both, UPLO):
        if not _matrix(types, both) or not isinstance(UPLO, (types.UnicodeType, types.StringLiteral)):
            return None

        def adjoint(both, UPLO):
            n = both.shape[1]
            out = np.triu(both) if UPLO == "U" else np.tril(both)
            for i in range(min(both.shape[0], n)):
                out[i, i] = out[i, i] - 0.5 * both[i, i]
            return out
        return adjoint
    return typing


@compiled(np.linalg.cholesky)
def _cholesky(types):
    """np.linalg.cholesky(a, upper=...) of a float64 matrix (Numba's own takes no ``upper``): the lower
    factor, or its transpose as a C-ordered array of its own (NumPy's upper factor, the same numbers)."""
    def typing(a, upper=False):
        flagged = known(types, upper, bool)
        if not _matrix(types, a) or flagged is None or isinstance(upper, (bool, types.Omitted)):
            return None  # (no upper given: Numba's own)
        if flagged:
            return lambda a, upper=False: np.ascontiguousarray(np.linalg.cholesky(a).T)
        return lambda a, upper=False: np.linalg.cholesky(a)
    return typing


@compiled(np.linalg.eigh)
def _eigh(types):
    """np.linalg.eigh(a, "L") of a float64 matrix (Numba's own takes no ``UPLO``, and reads the lower
    triangle, as NumPy's "L": the same LAPACK routine; "U" runs as Python)."""
    def typing(a, UPLO="L"):
        if not _matrix(types, a) or isinstance(UPLO, (str, types.Omitted)) or known(types, UPLO, str) != "L":
            return None  # (no UPLO given: Numba's own)
        return lambda a, UPLO="L": np.linalg.eigh(a)
    return typing


def _mirrored_lower(t: Any) -> Any:
    """symmetric_seen(t, "L") of a matrix: its lower triangle, mirrored."""
    return np.tril(t) + np.tril(t, -1).T


@compiled(linalg.hermitian_seen)
def _hermitian_seen(types):
    """hermitian_seen(t, hermitian) of a matrix, ``hermitian`` known when compiling: the lower triangle
    mirrored, or ``t`` itself; a missing tangent (a number) as it is."""
    def typing(t, hermitian):
        flagged = known(types, hermitian, bool)
        if isinstance(t, (types.Float, types.Integer)):
            return lambda t, hermitian: t
        if flagged is None or not _matrix(types, t):
            return None
        if not flagged:
            return lambda t, hermitian: t
        mirrored = _jitted(_mirrored_lower)
        return lambda t, hermitian: mirrored(t)
    return typing


@compiled(linalg.hermitian_adjoint)
def _hermitian_adjoint(types):
    """hermitian_adjoint(g, hermitian) of a matrix, ``hermitian`` known when compiling."""
    def typing(g, hermitian):
        flagged = known(types, hermitian, bool)
        if isinstance(g, (types.Float, types.Integer)):
            return lambda g, hermitian: g
        if flagged is None or not _matrix(types, g):
            return None
        if not flagged:
            return lambda g, hermitian: g

        def adjoint(g, hermitian):
            both = g + g.T
            out = np.tril(both)
            for i in range(min(both.shape[0], both.shape[1])):
                out[i, i] = out[i, i] - 0.5 * both[i, i]
            return out
        return adjoint
    return typing


# -- det and slogdet ---------------------------------------------------------------------------------

def _cofactors(a: Any) -> Any:
    """det_cofactors of a float64 matrix: the SVD's u, times for each i the product of the singular values
    but the i-th (no division: exact where some are 0), times vh, signed by det(u) det(vh)."""
    n = a.shape[1]
    if n == 0:
        return np.zeros(a.shape)
    u, s, vh = np.linalg.svd(a)
    products = np.ones(n)
    for i in range(n):
        for k in range(n):
            if k != i:
                products[i] = products[i] * s[k]
    orientation = np.linalg.det(u) * np.linalg.det(vh)
    return orientation * ((u * products.reshape((1, n))) @ vh)


@compiled(linalg.det_cofactors)
def _det_cofactors(types):
    def typing(a):
        if not _matrix(types, a):
            return None
        cofactors = _jitted(_cofactors)
        return lambda a: cofactors(a)
    return typing


def _inverse_transposed_matrix(a: Any) -> Any:
    """inverse_transposed of a float64 matrix: u / s @ vh from the SVD (a zero singular value: inf or nan,
    as NumPy's division gives without raising)."""
    u, s, vh = np.linalg.svd(a)
    return (u / s.reshape((1, s.shape[0]))) @ vh


@compiled(linalg.inverse_transposed)
def _inverse_transposed(types):
    def typing(a):
        if not _matrix(types, a):
            return None
        inverse = _jitted(_inverse_transposed_matrix)
        return lambda a: inverse(a)
    return typing


@compiled(linalg.zero_safe_product)
def _zero_safe_product(types):
    """zero_safe_product(scale, x) for a float64 number or array ``scale`` and a float64 array ``x``: the
    product, with 0 where ``scale`` is 0 once any element of the product is not finite."""
    def typing(scale, x):
        if not (isinstance(x, types.Array) and x.dtype == types.float64):
            return None
        if isinstance(scale, types.Float):
            def scaled(scale, x):
                product = scale * x
                if scale == 0.0 and not np.all(np.isfinite(product)):
                    return np.zeros(product.shape)
                return product
            return scaled
        if isinstance(scale, types.Array) and scale.dtype == types.float64:
            def scaled_by_array(scale, x):
                product = scale * x
                if np.all(np.isfinite(product)):
                    return product
                return np.where(scale == 0.0, 0.0, product)
            return scaled_by_array
        return None
    return typing


# -- qr and matrix_power -----------------------------------------------------------------------------

@compiled(linalg.qr_checked)
def _qr_checked(types):
    """qr_checked(q, a, mode) of a matrix with mode known when compiling: ``q``, or the Python helper's
    ValueError where the rule does not cover the call."""
    def typing(q, a, mode="reduced"):
        text = known(types, mode, str)
        if text not in ("reduced", "complete") or not _matrix(types, a):
            return None
        complete = text == "complete"

        def checked(q, a, mode="reduced"):
            m, n = a.shape
            if m < n or (complete and m != n):
                raise ValueError("np.linalg.qr of this matrix and mode has no derivative rule in s2s_ad: the rule "
                                 "covers mode='reduced' with at least as many rows as columns")
            return q
        return checked
    return typing


def _power_adjoint(grad: Any, a: Any, n: int) -> Any:
    """matrix_power_grad of float64 matrices: the sum over k of (a^T)^k grad (a^T)^(n-1-k)."""
    if n < 0:
        raise ValueError("np.linalg.matrix_power(a, n) has a derivative rule for n >= 0 only; for a negative "
                         "power write np.linalg.matrix_power(np.linalg.inv(a), -n)")
    at = np.ascontiguousarray(a.T)
    size = a.shape[0]
    powers = np.empty((max(n, 1), size, size))
    powers[0] = np.eye(size)
    for k in range(1, n):
        powers[k] = powers[k - 1] @ at
    total = np.zeros(a.shape)
    g = np.ascontiguousarray(grad)
    for k in range(n):
        total = total + powers[k] @ (g @ powers[n - 1 - k])
    return total


@compiled(linalg.matrix_power_grad)
def _matrix_power_grad(types):
    def typing(grad, a, n):
        if not (_matrix(types, a) and _matrix(types, grad) and isinstance(n, types.Integer)):
            return None
        adjoint = _jitted(_power_adjoint)
        return lambda grad, a, n: adjoint(grad, a, n)
    return typing


@functools.cache
def _jitted(function: Any) -> Any:
    """``function`` compiled where called from compiled code (Numba imported here, at the first use)."""
    from numba.extending import register_jitable
    return register_jitable(function)


# -- np.linalg.norm: the p-norms' helpers (ord a number, None or "fro") ---------------------------------

def _no_order(types: Any, ord: Any) -> bool:
    """``ord`` is None or "fro" (the 2-norm of the elements), as the compiled code sees it."""
    return is_none(types, ord) or known(types, ord, str) == "fro"


@compiled(linalg.norm_order)
def _norm_order(types):
    """norm_order(ord, ndim, axis) for ord None, "fro" or a number, axis None or an int: the p the Python
    helper gives, or its ValueError where no rule covers the norm."""
    def typing(ord, ndim, axis):
        if _no_order(types, ord):
            return lambda ord, ndim, axis: 2.0
        if not isinstance(ord, (types.Integer, types.Float)) or isinstance(ord, types.Boolean):
            return None
        if isinstance(axis, (types.NoneType, types.Omitted)) or axis is None:
            by_axis = False
        elif isinstance(axis, types.Integer):
            by_axis = True
        else:
            return None

        def order(ord, ndim, axis):
            if not by_axis and ndim == 2:  # a matrix norm: of maxima (1, inf) or singular values (2)
                if ord == 1 or ord == -1 or ord == 2 or ord == -2 or np.isinf(ord):
                    return 0.0
                raise ValueError("np.linalg.norm of a matrix with this ord has no derivative rule in s2s_ad")
            return 0.0 if ord == 0 or np.isinf(ord) else float(ord)
        return order
    return typing


@compiled(linalg.norm_weight)
def _norm_weight(types):
    """norm_weight(x, p) of a float64 array (zeros where p is 0, where the helper gives the number 0: the
    same sums) or a float64 number."""
    def typing(x, p):
        if not isinstance(p, types.Float):
            return None
        if isinstance(x, types.Float):
            def of_number(x, p):
                if p == 0.0:
                    return 0.0
                if p == 2.0:
                    return x
                if p >= 2.0:
                    return x * abs(x) ** (p - 2.0)
                return np.sign(x) * abs(x) ** (p - 1.0)
            return of_number
        if not (isinstance(x, types.Array) and x.dtype == types.float64):
            return None

        def of_array(x, p):
            if p == 0.0:
                return np.zeros(x.shape)
            if p == 2.0:
                return x * 1.0
            if p >= 2.0:
                return x * np.abs(x) ** (p - 2.0)
            return np.sign(x) * np.abs(x) ** (p - 1.0)
        return of_array
    return typing


def _vector_norm(types: Any, x: Any, ord: Any, axis: Any) -> bool:
    """``np.linalg.norm(x, ord, axis)`` is the p-norm (or max, min, count) of a float64 vector, ord a number."""
    return isinstance(x, types.Array) and x.ndim == 1 and x.dtype == types.float64 and \
        isinstance(ord, (types.Integer, types.Float)) and not isinstance(ord, types.Boolean) and \
        (axis is None or isinstance(axis, (types.NoneType, types.Omitted)))


@compiled(linalg.norm_max_weights)
def _norm_max_weights(types):
    """norm_max_weights(x, ord, axis, keepdims) for ord None or "fro" (the number 0: no norm of maxima), and
    of a vector for ord a number: sign(x) where the largest (ord inf) or smallest (-inf) magnitude is
    reached, ties sharing evenly; zeros for the count ord=0 and for the p-norms (where the helper gives the
    number 0: the same sums)."""
    def typing(x, ord, axis, keepdims):
        if _no_order(types, ord) and isinstance(x, (types.Array, types.Float)):
            return lambda x, ord, axis, keepdims: 0.0
        if not _vector_norm(types, x, ord, axis):
            return None

        def weights(x, ord, axis, keepdims):
            if not np.isinf(ord):
                return np.zeros(x.shape)
            magnitude = np.abs(x)
            extreme = magnitude == (np.max(magnitude) if ord > 0 else np.min(magnitude))
            return np.sign(x) * extreme / np.sum(extreme)
        return weights
    return typing


@compiled(linalg._spectral_weights)
def _spectral_weights(types):
    """_spectral_weights(x, ord, axis) for ord None or "fro", and of a vector: zeros of ``x``'s shape (no
    singular value weighs in those norms)."""
    def typing(x, ord, axis):
        if not (isinstance(x, types.Array) and x.dtype == types.float64):
            return None
        if not (_no_order(types, ord) or _vector_norm(types, x, ord, axis)):
            return None
        return lambda x, ord, axis: np.zeros(x.shape)
    return typing
