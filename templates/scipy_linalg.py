"""Rules for ``scipy.linalg``, registered once the user imports it: SciPy is an optional extra, and
where it is not used it is not imported either (as ``scipy_special.py``).

``lu(a)`` factors ``a = p @ l @ u`` (p a permutation, l unit lower triangular of m x k, u upper
triangular of k x n, k = min(m, n)), or returns ``(p @ l, u)`` with ``permute_l=True`` and the
permutation as row indices with ``p_indices=True`` (``a = l[p] @ u``).  The permutation is piecewise
constant (it changes only where a pivot ties): no derivative.  The factors' derivative is JAX's (De
Hoog, Anderssen and Lukas): with l and u completed to square invertible matrices (the identity in the
columns and rows added) and x = l^-1 p^T da u^-1, dl = l tril(x, -1) and du = triu(x) u, the first k
columns and rows.  Where a pivot is 0 (u singular) it is infinite or NaN, as 1/0.
"""
from typing import Any

import numpy as np

from s2s_ad.rules import adjoint, nondifferentiable, tangent, when_imported

sla: Any = None  # scipy.linalg, once imported (see _register)


def lu_items(permute_l: Any = False) -> int:
    """``scipy.linalg.lu`` returns (p, l, u), or (p l, u) with ``permute_l=True``."""
    return 2 if permute_l else 3


def lu_refusal(overwrite_a: Any = False) -> "str | None":
    """Why a call of ``scipy.linalg.lu`` is not differentiated: ``overwrite_a=True`` lets SciPy write
    over the argument, which the derivative reads again."""
    if overwrite_a is True:
        return ("scipy.linalg.lu(a, overwrite_a=True) may write over a, which its derivative reads; "
                "drop overwrite_a")
    return None


def lu_parts(out: Any, a: Any, permute_l: bool, p_indices: bool, overwrite_a: bool) -> tuple:
    """``(p, l, u)`` of ``scipy.linalg.lu(a, ...)``'s result ``out``, p as a matrix: the factors computed
    again where ``permute_l`` returned p l alone."""
    if overwrite_a:
        raise ValueError(lu_refusal(True))
    if permute_l:
        return sla.lu(a)
    if p_indices:
        size = np.shape(out[1])[-2]
        return np.eye(size)[out[0]], out[1], out[2]
    return out[0], out[1], out[2]


def lu_seeds(d_out: Any, p: Any, permute_l: bool) -> tuple:
    """The adjoints of l and u, given those of ``lu``'s items (with ``permute_l``, of p l and u)."""
    if permute_l:
        return np.matmul(np.swapaxes(p, -1, -2), d_out[0]), d_out[1]
    return d_out[1], d_out[2]


def lu_squares(l: Any, u: Any) -> tuple:
    """l (m x k) and u (k x n) completed to m x m and n x n, the identity in the columns and rows added
    (JAX's completion): both invertible where the pivots are not 0."""
    m, k = np.shape(l)[-2:]
    n = np.shape(u)[-1]
    lead = np.shape(l)[:-2]
    l_full = np.concatenate([l, np.broadcast_to(np.eye(m)[:, k:], lead + (m, m - k))], axis=-1)
    u_full = np.concatenate([u, np.broadcast_to(np.eye(n)[k:, :], lead + (n - k, n))], axis=-2)
    return l_full, u_full


def _right_solve(x: Any, u: Any) -> Any:
    """x u^-1."""
    return np.swapaxes(np.linalg.solve(np.swapaxes(u, -1, -2), np.swapaxes(x, -1, -2)), -1, -2)


def lu_jvp(p: Any, l: Any, u: Any, t: Any) -> tuple:
    """The tangents of l and u as a moves along t."""
    l_full, u_full = lu_squares(l, u)
    k = np.shape(l)[-1]
    moved = _right_solve(np.linalg.solve(l_full, np.matmul(np.swapaxes(p, -1, -2), t)), u_full)
    return np.matmul(l_full, np.tril(moved, -1))[..., :, :k], np.matmul(np.triu(moved), u_full)[..., :k, :]


def lu_grad(p: Any, l: Any, u: Any, d_l: Any, d_u: Any) -> Any:
    """The adjoint of a, given those of l and u: ``lu_jvp`` transposed."""
    l_full, u_full = lu_squares(l, u)
    m, k = np.shape(l)[-2:]
    n = np.shape(u)[-1]
    lead = np.shape(l)[:-2]
    d_l = np.concatenate([np.broadcast_to(d_l, lead + (m, k)), np.zeros(lead + (m, n - k))], axis=-1)
    d_u = np.concatenate([np.broadcast_to(d_u, lead + (k, n)), np.zeros(lead + (m - k, n))], axis=-2)
    moved = (np.tril(np.matmul(np.swapaxes(l_full, -1, -2), d_l), -1)
             + np.triu(np.matmul(d_u, np.swapaxes(u_full, -1, -2))))
    pulled = np.linalg.solve(np.swapaxes(l_full, -1, -2), _right_solve(moved, np.swapaxes(u_full, -1, -2)))
    return np.matmul(p, pulled)


def lu_tangents(p: Any, t_l: Any, t_u: Any, permute_l: bool, p_indices: bool, like: Any) -> tuple:
    """The tangent of ``lu``'s result: zeros for the permutation (shaped like ``like``, the result's
    first item), p t_l for p l with ``permute_l``."""
    if permute_l:
        return np.matmul(p, t_l), t_u
    return np.zeros(np.shape(like)), t_l, t_u


nondifferentiable(lu_items, lu_refusal)

_POINTS = ({"a": (3, 3)}, {"a": (4, 3)}, {"a": (3, 5)}, {"a": (2, 3, 3)})
_LU = _POINTS + tuple(dict(e, permute_l=True) for e in _POINTS) + ({"a": (4, 4), "p_indices": True},
                                                                     {"a": (2, 4, 3), "p_indices": True})


def _register(linalg: Any) -> None:
    """Declare the rules below, given ``scipy.linalg``."""
    global sla
    sla = linalg  # the name the helpers use

    @adjoint(sla.lu, items=lu_items, returns_sequence=True, refused_arguments=lu_refusal, examples=_LU)
    def lu(out, a, permute_l=False, overwrite_a=False, check_finite=True, p_indices=False, *, d_out):
        parts = lu_parts(out, a, permute_l, p_indices, overwrite_a)
        seeds = lu_seeds(d_out, parts[0], permute_l)
        d_a = lu_grad(parts[0], parts[1], parts[2], seeds[0], seeds[1])

    @tangent(sla.lu)
    def lu_tangent(out, a, permute_l=False, overwrite_a=False, check_finite=True, p_indices=False, *, t_a):
        parts = lu_parts(out, a, permute_l, p_indices, overwrite_a)
        moved = lu_jvp(parts[0], parts[1], parts[2], t_a)
        t_out = lu_tangents(parts[0], moved[0], moved[1], permute_l, p_indices, out[0])


when_imported("scipy.linalg", _register)
