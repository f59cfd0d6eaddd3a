"""Rules for ``scipy.linalg``, registered once the user imports it: SciPy is an optional extra, and
where it is not used it is not imported either (as ``scipy_special.py``).

``lu(a)`` factors ``a = p @ l @ u`` (p a permutation, l unit lower triangular of m x k, u upper
triangular of k x n, k = min(m, n)), or returns ``(p @ l, u)`` with ``permute_l=True`` and the
permutation as row indices with ``p_indices=True`` (``a = l[p] @ u``).  The permutation is piecewise
constant (it changes only where a pivot ties): no derivative.  The factors' derivative is JAX's (De
Hoog, Anderssen and Lukas): with l and u completed to square invertible matrices (the identity in the
columns and rows added) and x = l^-1 p^T da u^-1, dl = l tril(x, -1) and du = triu(x) u, the first k
columns and rows.  Where a pivot is 0 (u singular) it is infinite or NaN, as 1/0.

``solve_sylvester(a, b, q)`` solves a x + x b = q.  Along changes of a, b and q, a dx + dx b = dq - da x
- x db: dx is another Sylvester solution.  Backwards, g solving a^T g + g b^T = dx (the transposed
equation, ``solve_sylvester(a^T, b^T, dx)``) gives dq = g, da = -g x^T and db = -x^T g.  Batched
over leading axes where SciPy batches it.

``solve_banded((l, u), ab, b)`` solves a x = b for the banded a that ``ab`` holds (``ab[u + i - j, j] =
a[i, j]``).  As ``np.linalg.solve``: g = a^-T dx (a^T is banded too, (u, l), its storage
``banded_transpose``), db = g, da = -g x^T, of which the entries in the band are ab's adjoint
(``banded_outer``; the corners of ``ab`` that hold no entry of a have none); forward, dx = a^-1 (db -
da x), da x a banded product (``banded_matmul``).  (l, u) are integers: no derivative.  A 1-D b is one
vector, else columns (with batches, as SciPy reads them).
"""
from typing import Any

import numpy as np

from s2s_ad.rules import adjoint, declare, nondifferentiable, tangent, when_imported
from s2s_ad.core.runtime import unbroadcast

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


# -- solve_banded ---------------------------------------------------------------------------------

def banded_refusal(overwrite_ab: Any = False, overwrite_b: Any = False) -> "str | None":
    """Why a call of ``scipy.linalg.solve_banded`` is not differentiated: ``overwrite_ab=True`` or
    ``overwrite_b=True`` lets SciPy write over an argument the derivative reads again."""
    if overwrite_ab is True or overwrite_b is True:
        return ("scipy.linalg.solve_banded(..., overwrite_ab=True or overwrite_b=True) may write over an argument "
                "its derivative reads; drop overwrite_ab and overwrite_b")
    return None


def banded_columns(x: Any, b: Any) -> Any:
    """``x`` (shaped like ``solve_banded``'s result) as columns: a 1-D ``b`` is one vector."""
    if np.ndim(b) == 1:
        return np.expand_dims(x, -1)
    return x


def banded_transpose(ab: Any, l_and_u: Any) -> Any:
    """The band storage of a^T, (u, l)-banded, given that of a, (l, u)-banded:
    ``at[r, j] = ab[l + u - r, j + r - l]`` where ``j + r - l`` is a column."""
    lower, upper = l_and_u
    n = np.shape(ab)[-1]
    rows, cols = np.indices((lower + upper + 1, n))
    source = cols + rows - lower
    inside = (source >= 0) & (source < n)
    return np.where(inside, ab[..., lower + upper - rows, np.clip(source, 0, n - 1)], 0.0)


def banded_outer(g: Any, x: Any, l_and_u: Any) -> Any:
    """The band of g x^T (columns of n rows), in ``ab``'s storage: ``[r, j] = sum_k g[j + r - u, k] x[j, k]``
    where ``j + r - u`` is a row; 0 in the corners."""
    lower, upper = l_and_u
    n = np.shape(x)[-2]
    rows, cols = np.indices((lower + upper + 1, n))
    source = cols + rows - upper
    inside = (source >= 0) & (source < n)
    return np.where(inside, np.sum(g[..., np.clip(source, 0, n - 1), :] * x[..., cols, :], axis=-1), 0.0)


def banded_matmul(ab: Any, x: Any, l_and_u: Any) -> Any:
    """a x for the (l, u)-banded a that ``ab`` holds and columns ``x``:
    ``[i, k] = sum_r ab[r, i + u - r] x[i + u - r, k]`` where ``i + u - r`` is a column."""
    lower, upper = l_and_u
    n = np.shape(ab)[-1]
    rows, cols = np.indices((lower + upper + 1, n))
    source = cols + upper - rows
    inside = (source >= 0) & (source < n)
    clipped = np.clip(source, 0, n - 1)
    terms = np.expand_dims(ab[..., rows, clipped], -1) * x[..., clipped, :]
    return np.sum(np.where(np.expand_dims(inside, -1), terms, 0.0), axis=-3)


nondifferentiable(lu_items, lu_refusal, banded_refusal)
declare(banded_columns, banded_transpose, banded_matmul, banded_outer, factors=(0,))

_POINTS = ({"a": (3, 3)}, {"a": (4, 3)}, {"a": (3, 5)}, {"a": (2, 3, 3)})
# (a and -b with eigenvalues well apart: the Sylvester equation well conditioned)
_SYL_A = np.array([[1.5, 0.3, -0.2], [0.1, 2.0, 0.4], [-0.3, 0.2, 1.2]])
_SYL_B = np.array([[0.7, -0.4], [0.5, 0.9]])
_SYLVESTER = ({"a": _SYL_A, "b": _SYL_B, "q": (3, 2)}, {"a": np.array([[2.5]]), "b": _SYL_A.T.copy(), "q": (1, 3)},
              {"a": -_SYL_A, "b": -_SYL_B.T, "q": np.array([[1.0, -0.5], [0.3, 0.2], [-0.7, 0.4]])})
_SYLVESTER_BATCHED = ({"a": np.stack([_SYL_A, 1.5 * _SYL_A.T]), "b": _SYL_B, "q": (2, 3, 2)},
                      {"a": _SYL_A, "b": np.stack([_SYL_B, _SYL_B.T]), "q": (3, 2)})
# a diagonally dominant band (the draws are in (0.2, 0.8): the diagonal row raised), corners included
_BAND_1_1 = np.array([[9.0, 0.3, -0.2, 0.5, 0.1], [2.1, 1.8, 2.5, 1.9, 2.2], [0.4, -0.3, 0.2, 0.6, 7.0]])
_BAND_2_1 = np.array([[5.0, 0.2, 0.4, -0.1], [2.4, 2.1, 1.7, 2.6], [0.3, 0.5, -0.2, 6.0], [0.1, -0.4, 8.0, 9.0]])
_BAND_0_2 = np.array([[7.0, 8.0, 0.3, 0.2], [6.0, 0.1, -0.5, 0.4], [1.9, 2.2, 2.4, 1.6]])
_BANDED = ({"l_and_u": (1, 1), "ab": _BAND_1_1, "b": (5,)}, {"l_and_u": (1, 1), "ab": _BAND_1_1, "b": (5, 2)},
           {"l_and_u": (2, 1), "ab": _BAND_2_1, "b": (4,)}, {"l_and_u": (2, 1), "ab": _BAND_2_1, "b": (4, 3)},
           {"l_and_u": (0, 2), "ab": _BAND_0_2, "b": (4,)},
           {"l_and_u": (0, 0), "ab": np.array([[1.7, 2.3, 1.1]]), "b": (3,)},
           {"l_and_u": (0, 0), "ab": np.array([[1.3]]), "b": (1,)})
_BANDED_BATCHED = ({"l_and_u": (1, 1), "ab": np.stack([_BAND_1_1, _BAND_1_1[::-1].copy()]), "b": (5,)},
                   {"l_and_u": (2, 1), "ab": _BAND_2_1, "b": (2, 4, 3)})


def _batches(linalg: Any) -> bool:
    """Whether this SciPy batches ``solve_sylvester`` and ``solve_banded`` over leading axes (recent
    versions do; older ones refuse a batch)."""
    try:
        linalg.solve_sylvester(np.ones((2, 1, 1)), np.ones((1, 1)), np.ones((1, 1)))
        linalg.solve_banded((0, 0), np.ones((2, 1, 1)), np.ones((1, 1)))
    except Exception:
        return False
    return True


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

    batched = _batches(sla)

    @adjoint(sla.solve_sylvester, examples=_SYLVESTER + (_SYLVESTER_BATCHED if batched else ()))
    def solve_sylvester(out, a, b, q, *, d_out):
        g = sla.solve_sylvester(np.swapaxes(a, -1, -2), np.swapaxes(b, -1, -2), d_out)  # a^T g + g b^T = d_out
        d_q = unbroadcast(g, q)
        d_a = unbroadcast(-np.matmul(g, np.swapaxes(out, -1, -2)), a)
        d_b = unbroadcast(-np.matmul(np.swapaxes(out, -1, -2), g), b)

    @tangent(sla.solve_sylvester)
    def solve_sylvester_tangent(out, a, b, q, *, t_a, t_b, t_q):
        t_out = sla.solve_sylvester(a, b, t_q - np.matmul(t_a, out) - np.matmul(out, t_b))

    @adjoint(sla.solve_banded, refused_arguments=banded_refusal,
             examples=_BANDED + (_BANDED_BATCHED if batched else ()))
    def solve_banded(out, l_and_u, ab, b, overwrite_ab=False, overwrite_b=False, check_finite=True, *, d_out):
        g = sla.solve_banded((l_and_u[1], l_and_u[0]), banded_transpose(ab, l_and_u), banded_columns(d_out, b))
        d_b = unbroadcast(np.reshape(g, np.shape(out)), b)
        d_ab = unbroadcast(-banded_outer(g, banded_columns(out, b), l_and_u), ab)

    @tangent(sla.solve_banded)
    def solve_banded_tangent(out, l_and_u, ab, b, overwrite_ab=False, overwrite_b=False, check_finite=True, *,
                             t_ab, t_b):
        moved = banded_columns(t_b, b) - banded_matmul(t_ab, banded_columns(out, b), l_and_u)
        t_out = np.reshape(sla.solve_banded(l_and_u, ab, moved), np.shape(out))


when_imported("scipy.linalg", _register)
