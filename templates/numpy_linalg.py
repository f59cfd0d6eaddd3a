# mypy: disable-error-code="no-redef"
# (a function's adjoint and tangent rules are both named after it: the second redefines the name)
"""Rules for linear algebra: matmul and ``@``, dot, outer, transpose and ``.T``, trace, tensordot,
inner, kron, cross, and ``np.linalg``'s inv, solve, det, cholesky and norm (batched over leading
axes where NumPy batches).

The helpers their adjoints call where a shape is known only at run time (``matmul_grad_a``,
``solve_columns``, ``einsum_grad``, ``multi_dot_grad``...) are defined here first, and their own
rules are at the end."""
from __future__ import annotations

import ast
import operator
from typing import Any

import numpy as np

from s2s_ad.core.kinds import matmul_dims, transposed_dims
from s2s_ad.rules import (adjoint, batched, data_axis, declare, fresh_arrays, fresh_values, nondifferentiable,
                          spell_module, tangent)
from s2s_ad.core.runtime import unbroadcast, unbroadcast_to
from .numpy_reductions import as_floats, expand_reduced
from .numpy_shape import as_given, diagonal_grad, diagonal_grad_batched


# -- helpers: what the code these rules generate calls where a shape is known only at run time
# (their own rules are at the end: generated code differentiated again calls them too) -------------

def _promoted(a: np.ndarray, b: np.ndarray, g: np.ndarray) -> tuple:
    """Matrix forms of matmul's operands and adjoint, with 1-D operands promoted as NumPy does."""
    a2 = a[np.newaxis, :] if a.ndim == 1 else a
    b2 = b[:, np.newaxis] if b.ndim == 1 else b
    g2 = np.asarray(g)
    if a.ndim == 1:
        g2 = np.expand_dims(g2, -2)
    if b.ndim == 1:
        g2 = np.expand_dims(g2, -1)
    return a2, b2, g2


def matmul_grad_a(grad: Any, a: Any, b: Any) -> Any:
    """The adjoint of ``a`` in ``a @ b`` (any dimensions, 1-D promoted as NumPy does)."""
    a, b = np.asarray(a), np.asarray(b)
    if a.ndim == 0 or b.ndim == 0:  # np.dot of a scalar is a product
        return unbroadcast(grad * b, a)
    if a.ndim == 1 and b.ndim == 1:  # an inner product
        return grad * b
    a2, b2, g2 = _promoted(a, b, grad)
    result = g2 @ np.swapaxes(b2, -1, -2)
    if a.ndim == 1:
        result = result[..., 0, :]
    return unbroadcast(result, a)


def matmul_grad_b(grad: Any, a: Any, b: Any) -> Any:
    """The adjoint of ``b`` in ``a @ b``."""
    a, b = np.asarray(a), np.asarray(b)
    if a.ndim == 0 or b.ndim == 0:
        return unbroadcast(grad * a, b)
    if a.ndim == 1 and b.ndim == 1:
        return grad * a
    a2, b2, g2 = _promoted(a, b, grad)
    result = np.swapaxes(a2, -1, -2) @ g2
    if b.ndim == 1:
        result = result[..., 0]
    return unbroadcast(result, b)


def _dot_is_matmul(a: np.ndarray, b: np.ndarray) -> bool:
    """True where ``np.dot(a, b)`` is ``a @ b`` (or a product): unless ``a`` is N-D and ``b`` 3-D or more."""
    return a.ndim < 2 or b.ndim < 3


def dot_grad_a(grad: Any, a: Any, b: Any) -> Any:
    """The adjoint of ``a`` in ``np.dot(a, b)``.

    For N-D operands ``np.dot`` sums over the last axis of ``a`` and the
    second-to-last of ``b``, and keeps every other axis of both (no
    broadcasting of leading axes, unlike matmul).
    """
    a, b = np.asarray(a), np.asarray(b)
    if _dot_is_matmul(a, b):
        return matmul_grad_a(grad, a, b)
    kept_b = list(range(b.ndim - 2)) + [b.ndim - 1]  # b's axes in the result, in order
    return np.tensordot(grad, b, axes=(list(range(a.ndim - 1, np.ndim(grad))), kept_b))


def dot_grad_b(grad: Any, a: Any, b: Any) -> Any:
    """The adjoint of ``b`` in ``np.dot(a, b)`` (see ``dot_grad_a``)."""
    a, b = np.asarray(a), np.asarray(b)
    if _dot_is_matmul(a, b):
        return matmul_grad_b(grad, a, b)
    lead = list(range(a.ndim - 1))
    return np.moveaxis(np.tensordot(a, grad, axes=(lead, lead)), 0, -2)


def inverse_axes(axes: Any) -> Any:
    """The permutation that undoes ``np.transpose(x, axes)`` (``None`` undoes itself)."""
    return None if axes is None else tuple(np.argsort(axes))


# NumPy 2 reads ``b`` in ``np.linalg.solve(a, b)`` as vectors only when it is 1-D; NumPy 1 whenever it
# has one dimension fewer than ``a`` (a stack of vectors).
_SOLVE_VECTORS_ONLY_1D = np.lib.NumpyVersion(np.__version__) >= "2.0.0"


def solve_columns(x: Any, a: Any, b: Any) -> Any:
    """``x`` as a stack of columns, as ``np.linalg.solve(a, b)`` reads ``b`` in the NumPy installed: a
    vector ``b`` gets a trailing axis of length 1.  (A missing tangent, the number 0, stays a number.)"""
    vectors = np.ndim(b) == 1 if _SOLVE_VECTORS_ONLY_1D else np.ndim(b) == np.ndim(a) - 1
    if vectors and np.ndim(x) >= 1:
        return np.expand_dims(x, -1)
    return x


def _matrix_norm(ndim: int, axis: Any) -> bool:
    return (axis is None and ndim == 2) or (isinstance(axis, tuple) and len(axis) == 2)


def norm_order(ord: Any, ndim: int, axis: Any) -> float:
    """The ``p`` of the p-norm ``np.linalg.norm(x, ord, axis)`` computes, whose derivative is
    ``sign(x) |x|**(p-1) / norm**(p-1)``; 0 for the norms made of a max or a min (see
    ``norm_max_weights``), of singular values (see ``norm_spectral_weights``) and for the count
    ``ord=0``.  Any other order raises: no rule, rather than a wrong number."""
    if ord is None or ord == "fro":
        return 2.0
    if _matrix_norm(ndim, axis):
        if _spectral(ord, ndim, axis) or ord in (1, -1, np.inf, -np.inf):
            return 0.0
    elif isinstance(ord, (int, float, np.integer, np.floating)):
        return 0.0 if ord == 0 or np.isinf(ord) else float(ord)
    raise ValueError(f"np.linalg.norm with ord={ord!r} has no derivative rule in s2s_ad; use ord=None, 'fro', "
                     f"1, -1, 2, -2, 'nuc', inf or -inf (matrices) or a number (vectors)")


def norm_max_weights(x: Any, ord: Any, axis: Any, keepdims: bool) -> Any:
    """d norm / d x for the norms made of a max or a min (vector ord inf and -inf; matrix ord 1, -1,
    inf, -inf: the largest or smallest absolute column or row sum): ``sign(x)`` where the extreme is
    reached, ties sharing evenly (as ``np.max``'s rule); the number 0 for every other norm.
    Piecewise constant in ``x``."""
    x = as_floats(x)
    matrix = _matrix_norm(x.ndim, axis)
    if not matrix and ord == 0:
        return np.zeros(x.shape)  # a count of the nonzero elements: constant
    if ord is None or ord == "fro" or (matrix and ord not in (1, -1, np.inf, -np.inf)) or \
            (not matrix and not (isinstance(ord, (int, float, np.number)) and np.isinf(ord))):
        return 0.0
    magnitude = np.abs(x)
    pick = np.max if ord > 0 else np.min
    if matrix:
        rows, cols = (0, 1) if axis is None else tuple(a % x.ndim for a in axis)
        summed_over = rows if abs(ord) == 1 else cols  # ord 1: column sums; inf: row sums
        sums = np.sum(magnitude, axis=summed_over, keepdims=True)
        other = cols if summed_over == rows else rows
        extreme = sums == pick(sums, axis=other, keepdims=True)
        return np.sign(x) * extreme / np.sum(extreme, axis=other, keepdims=True)
    reduce_axis = None if axis is None else axis
    extreme = magnitude == pick(magnitude, axis=reduce_axis, keepdims=True)
    return np.sign(x) * extreme / np.sum(extreme, axis=reduce_axis, keepdims=True)


def _spectral(ord: Any, ndim: int, axis: Any) -> bool:
    """True for the matrix norms made of singular values: ord 2 (the largest), -2 (the smallest),
    'nuc' (their sum)."""
    if not _matrix_norm(ndim, axis):
        return False
    return ord == "nuc" if isinstance(ord, str) else ord is not None and ord in (2, -2)


def _matrix_axes(ndim: int, axis: Any) -> tuple:
    return (0, 1) if axis is None else tuple(a % ndim for a in axis)


def norm_matrices(x: Any, ord: Any, axis: Any, fill: float) -> np.ndarray:
    """The matrices whose singular values make ``np.linalg.norm(x, ord, axis)`` (ord 2, -2, 'nuc'),
    moved to the last two axes; for any other norm, a 1 by 1 placeholder holding ``fill`` (1 for the
    matrix whose SVD is taken, so it is well defined; 0 for a tangent or an adjoint)."""
    if not _spectral(ord, np.ndim(x), axis):
        return np.full((1, 1), fill)
    return np.moveaxis(x, _matrix_axes(np.ndim(x), axis), (-2, -1))


def norm_unmoved(w: Any, x: Any, ord: Any, axis: Any) -> Any:
    """``norm_matrices``'s transpose: matrices ``w`` moved back to ``x``'s layout; zeros shaped like
    ``x`` for the norms not made of singular values."""
    if not _spectral(ord, np.ndim(x), axis):
        return np.zeros(np.shape(x))
    return np.moveaxis(w, (-2, -1), _matrix_axes(np.ndim(x), axis))


def norm_singular_weights(s: Any, ord: Any, ndim: int, axis: Any) -> np.ndarray:
    """d norm / d s for the norms of singular values: ones for 'nuc', one at the largest (ord 2) or the
    smallest (ord -2) singular value; zeros for every other norm.  Piecewise constant in ``s``."""
    s = np.asarray(s)
    if not _spectral(ord, ndim, axis):
        return np.zeros(s.shape)
    if isinstance(ord, str):
        return np.ones(s.shape)
    picked = np.argmax(s, axis=-1) if ord > 0 else np.argmin(s, axis=-1)
    return (np.arange(s.shape[-1]) == np.expand_dims(picked, -1)).astype(float)


def norm_weight(x: Any, p: float) -> Any:
    """``sign(x) |x|**(p - 1)``, the p-norm's derivative times ``norm**(p - 1)``; written
    ``x |x|**(p - 2)`` for p >= 2, whose own derivative is right at 0 too."""
    if p == 0.0:
        return 0.0  # a norm of maxima (norm_max_weights), or the count ord=0: no p-norm term
    x = as_floats(x)
    if p == 2.0:
        return x
    if p >= 2.0:
        return x * np.abs(x) ** (p - 2.0)
    return np.sign(x) * np.abs(x) ** (p - 1.0)


def norm_weight_jvp(x: Any, p: float, t: Any) -> Any:
    """The tangent of ``norm_weight(x, p)`` along ``t`` (the number 0 where that is the number 0)."""
    if p == 0.0:
        return 0.0
    return norm_weight_slope(x, p) * t


def norm_weight_slope(x: Any, p: float) -> Any:
    """The derivative of ``norm_weight(x, p)`` in ``x``: ``(p - 1) |x|**(p - 2)`` (1 for p = 2,
    0 for p = 1, infinite at 0 for 1 < p < 2)."""
    if p == 0.0:
        return 0.0
    x = as_floats(x)
    if p == 2.0:
        return np.ones_like(x)
    if p == 1.0:
        return np.zeros_like(x)
    with np.errstate(divide="ignore"):
        return (p - 1.0) * np.abs(x) ** (p - 2.0)


def inner_axes(a: Any, b: Any) -> Any:
    """``np.inner(a, b)`` as ``np.tensordot``'s ``axes``: the last axes, or 0 (a product) for a number."""
    if np.ndim(a) == 0 or np.ndim(b) == 0:
        return 0
    return (np.ndim(a) - 1, np.ndim(b) - 1)


def tensordot_axes(a: Any, b: Any, axes: Any) -> tuple[list, list]:
    """``np.tensordot``'s ``axes`` argument as two lists of non-negative axes of ``a`` and ``b``."""
    na, nb = np.ndim(a), np.ndim(b)
    if isinstance(axes, (int, np.integer)):
        return list(range(na - axes, na)), list(range(axes))
    first, second = axes
    first = [first] if isinstance(first, (int, np.integer)) else list(first)
    second = [second] if isinstance(second, (int, np.integer)) else list(second)
    return [int(x) % na for x in first], [int(x) % nb for x in second]


def tensordot_adjoint_plan(a: Any, b: Any, axes: Any, which: int) -> tuple:
    """How the adjoint of operand ``which`` of ``np.tensordot(a, b, axes)`` is one more tensordot:
    the ``axes`` to contract the result's adjoint with the other operand, and the permutation
    that puts the product's axes in the operand's order."""
    ca, cb = tensordot_axes(a, b, axes)
    free_a = [i for i in range(np.ndim(a)) if i not in ca]
    free_b = [i for i in range(np.ndim(b)) if i not in cb]
    if which == 0:  # tensordot(grad, b): free_a, then the partners of b's contracted axes in b's order
        contract = (list(range(len(free_a), len(free_a) + len(free_b))), free_b)
        return contract, tuple(np.argsort(free_a + [ca[cb.index(j)] for j in sorted(cb)]).tolist())
    contract = (free_a, list(range(len(free_a))))  # tensordot(a, grad): the partners of a's, then free_b
    return contract, tuple(np.argsort([cb[ca.index(i)] for i in sorted(ca)] + free_b).tolist())


def trace_grad(grad: Any, a: Any, offset: int = 0, axis1: int = 0, axis2: int = 1) -> np.ndarray:
    """The adjoint of ``np.trace(a, offset, axis1, axis2)``: ``grad`` on every element of that diagonal."""
    length = np.diagonal(np.zeros(np.shape(a), dtype=bool), offset, axis1, axis2).shape[-1]
    grad = np.asarray(grad)
    return diagonal_grad(np.broadcast_to(grad[..., np.newaxis], grad.shape + (length,)), a, offset, axis1, axis2)


def kron_blocks(grad: Any, a: Any, b: Any) -> np.ndarray:
    """The adjoint of ``np.kron(a, b)`` with its axes split as (a0, b0, a1, b1, ...)."""
    nd = max(np.ndim(a), np.ndim(b))
    sa = (1,) * (nd - np.ndim(a)) + np.shape(a)
    sb = (1,) * (nd - np.ndim(b)) + np.shape(b)
    return np.reshape(grad, [n for pair in zip(sa, sb) for n in pair])


def kron_spread(x: Any, other: Any, which: int) -> np.ndarray:
    """``x`` (operand ``which`` of kron) shaped to broadcast against ``kron_blocks``: length-1 axes
    interleaved where the other operand's axes are."""
    nd = max(np.ndim(x), np.ndim(other))
    sx = (1,) * (nd - np.ndim(x)) + np.shape(x)
    ones = (1,) * nd
    pairs = zip(sx, ones) if which == 0 else zip(ones, sx)
    return np.reshape(x, [n for pair in pairs for n in pair])


def cross_grad(grad: Any, other: Any, like: Any, axis_other: int, axis_like: int, axisc: int,
               axis: Any, sign: float) -> Any:
    """The adjoint of one operand of ``np.cross`` (shaped like ``like``) from the other one:
    ``sign * cross(other, grad)`` over 3-vectors, a 2-vector standing for (x, y, 0) and the number
    that two 2-vectors give for the z component of their 3-vector product.  Linear in ``grad`` and
    in ``other``; ``like`` is read for its shape."""
    if axis is not None:
        axis_other = axis_like = axisc = axis
    shape = np.shape(like)
    if np.ndim(other) == 0 or (np.ndim(grad) == 0 and not (np.shape(other)[axis_other] == 2 == shape[axis_like])):
        return np.zeros(shape)  # a missing tangent (a plain 0)
    other = np.moveaxis(np.asarray(other, dtype=float), axis_other, -1)
    moved = np.moveaxis(np.zeros(shape), axis_like, -1).shape
    if other.shape[-1] == 2 and moved[-1] == 2:  # two 2-vectors: grad is the z component's adjoint
        grad3 = np.zeros(np.shape(grad) + (3,))
        grad3[..., 2] = grad
    else:
        grad3 = np.moveaxis(np.asarray(grad, dtype=float), axisc, -1)
    other3 = np.concatenate([other, np.zeros(other.shape[:-1] + (3 - other.shape[-1],))], axis=-1)
    full = sign * np.cross(other3, grad3)[..., :moved[-1]]
    return np.moveaxis(unbroadcast_to(full, moved), -1, axis_like)


def kron_axes(a: Any, b: Any, which: int) -> tuple:
    """The axes of ``kron_blocks`` that belong to the operand other than ``which`` (summed out)."""
    nd = max(np.ndim(a), np.ndim(b))
    return tuple(range(1 if which == 0 else 0, 2 * nd, 2))


def _einsum_terms(subscripts: str, operands: list) -> tuple[list, str, dict]:
    """``subscripts`` with every ``...`` spelled out in letters of its own (right-aligned, as NumPy
    broadcasts them), the implicit output made explicit, and the size of every letter (broadcast)."""
    subscripts = subscripts.replace(" ", "")
    inputs, _, output = subscripts.partition("->")
    terms = inputs.split(",")
    if len(terms) != len(operands):
        raise ValueError(f"einsum {subscripts!r} names {len(terms)} operands, but {len(operands)} are given")
    spare = [c for c in "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ" if c not in subscripts]
    widths = [np.ndim(op) - (len(t) - 3) if "..." in t else 0 for t, op in zip(terms, operands)]
    ellipsis = "".join(spare[:max(widths, default=0)])
    terms = [t.replace("...", ellipsis[len(ellipsis) - w:] if w else "") for t, w in zip(terms, widths)]
    if "->" not in subscripts:
        letters = "".join(terms)
        output = ellipsis + "".join(sorted(c for c in set(letters) if letters.count(c) == 1 and c not in ellipsis))
    else:
        output = output.replace("...", ellipsis)
    sizes: dict = {}
    for term, op in zip(terms, operands):
        for letter, n in zip(term, np.shape(op)):
            # NumPy's broadcasting: a length 1 gives way to any other, a length 0 included
            sizes[letter] = n if sizes.get(letter, 1) == 1 else sizes[letter]
    return terms, output, sizes


def einsum_grad(grad: Any, subscripts: str, which: int, like: Any, *slots: Any) -> np.ndarray:
    """The adjoint of operand ``which`` (shaped like ``like``) of ``np.einsum(subscripts, *slots)``.

    One more einsum of the result's adjoint with the other operands; labels summed within the
    operand alone are spread back, repeated labels (a diagonal, ``"ii->"``) written onto the
    diagonal of zeros, and broadcast ``...`` axes summed.  Slot ``which`` is not read (only
    ``like``), and slots past the operands ``subscripts`` names are ignored.  Another operand
    given as the number 0 (a missing tangent) makes the adjoint zero.
    """
    shape = np.shape(like)
    if any(i != which and isinstance(op, (int, float)) and op == 0 for i, op in enumerate(slots)):
        return np.zeros(shape)  # (a slot past the operands holds 0 only as a missing tangent)
    count = subscripts.count(",") + 1
    operands = [like if i == which else slots[i] for i in range(count)]
    terms, output, sizes = _einsum_terms(subscripts, operands)
    mine = terms[which]
    unique = "".join(dict.fromkeys(mine))
    others = [(t, np.broadcast_to(op, [sizes[c] for c in t])) for i, (t, op) in enumerate(zip(terms, operands))
              if i != which]
    reached = set(output).union(*[set(t) for t, _ in others])
    kept = "".join(c for c in unique if c in reached)
    full_grad = np.broadcast_to(grad, [sizes[c] for c in output])
    core = np.einsum(",".join([output] + [t for t, _ in others]) + "->" + kept, full_grad, *[op for _, op in others])
    for position, letter in enumerate(unique):  # labels summed within this operand alone: spread back
        if letter not in reached:
            core = np.expand_dims(core, position)
    core = np.broadcast_to(core, [sizes[c] for c in unique])
    if len(unique) == len(mine):
        result = np.einsum(unique + "->" + mine, core)
    else:  # a repeated label: onto the diagonal of zeros (einsum's diagonal view is writable)
        result = np.zeros([sizes[c] for c in mine], dtype=np.result_type(core, 1.0))
        np.einsum(mine + "->" + unique, result)[...] = core
    return unbroadcast_to(np.array(result, dtype=np.result_type(result, 1.0)), shape)


def _powers(m: np.ndarray, n: int) -> list:
    """``[I, m, m @ m, ..., m**n]`` (matrix powers, batched over leading axes)."""
    out = [np.broadcast_to(np.eye(m.shape[-1]), m.shape)]
    for _ in range(n):
        out.append(np.matmul(out[-1], m))
    return out


def _check_power(n: Any) -> int:
    if int(n) != n or n < 0:
        raise ValueError(f"np.linalg.matrix_power(a, {n}) has a derivative rule for n >= 0 only; for a negative "
                         f"power write np.linalg.matrix_power(np.linalg.inv(a), {-n})")
    return int(n)


def matrix_power_grad(grad: Any, a: Any, n: int) -> np.ndarray:
    """The adjoint of ``np.linalg.matrix_power(a, n)`` (n >= 0): the sum over k of
    (a^T)^k grad (a^T)^(n-1-k)."""
    n = _check_power(n)
    at = np.swapaxes(np.asarray(a, dtype=float), -1, -2)
    grad = np.broadcast_to(np.asarray(grad, dtype=float), at.shape)
    powers = _powers(at, max(n - 1, 0))
    total = np.zeros(at.shape)
    for k in range(n):
        total = total + np.matmul(powers[k], np.matmul(grad, powers[n - 1 - k]))
    return total


def matrix_power_jvp(a: Any, t: Any, n: int) -> np.ndarray:
    """The tangent of ``np.linalg.matrix_power(a, n)`` along ``t``: the sum over k of a^k t a^(n-1-k)."""
    n = _check_power(n)
    a = np.asarray(a, dtype=float)
    if isinstance(t, (int, float)) and t == 0:
        return np.zeros(a.shape)
    powers = _powers(a, max(n - 1, 0))
    total = np.zeros(np.broadcast_shapes(a.shape, np.shape(t)))
    for k in range(n):
        total = total + np.matmul(powers[k], np.matmul(t, powers[n - 1 - k]))
    return total


def matrix_power_grad_jvp(grad: Any, a: Any, t: Any, n: int) -> np.ndarray:
    """The tangent of ``matrix_power_grad(grad, a, n)`` as ``a`` moves along ``t``."""
    n = _check_power(n)
    at = np.swapaxes(np.asarray(a, dtype=float), -1, -2)
    if isinstance(t, (int, float)) and t == 0:
        return np.zeros(at.shape)
    tt = np.swapaxes(np.asarray(t, dtype=float), -1, -2)
    grad = np.broadcast_to(np.asarray(grad, dtype=float), at.shape)
    powers = _powers(at, max(n - 1, 0))
    moved = [np.zeros(at.shape)] + [matrix_power_jvp(at, tt, k) for k in range(1, n)]
    total = np.zeros(at.shape)
    for k in range(n):
        total = total + np.matmul(moved[k], np.matmul(grad, powers[n - 1 - k])) \
            + np.matmul(powers[k], np.matmul(grad, moved[n - 1 - k]))
    return total


def svd_checked(u: Any, a: Any, full_matrices: bool = True, compute_uv: bool = True) -> Any:
    """``u`` itself, once ``np.linalg.svd(a, full_matrices, compute_uv)`` is known to have a derivative:
    a full ``u`` or ``vh`` of a matrix that is not square raises (its extra columns are any basis),
    and so does ``compute_uv=False`` (write ``np.linalg.svd(a, full_matrices=False)[1]``)."""
    if not compute_uv:
        raise ValueError("np.linalg.svd(..., compute_uv=False) has no derivative rule in s2s_ad; write "
                         "np.linalg.svd(a, full_matrices=False)[1] for the singular values")
    m, n = np.shape(a)[-2:]
    if full_matrices and m != n:
        raise ValueError("np.linalg.svd of a matrix that is not square has a derivative only with "
                         "full_matrices=False (the extra columns of a full u or vh are any basis)")
    return u


def qr_checked(q: Any, a: Any, mode: str = "reduced") -> Any:
    """``q`` itself, once ``np.linalg.qr(a, mode)`` is known to have a derivative rule: the reduced
    factors of a matrix with at least as many rows as columns (complete ones of a square matrix are
    the same); other calls raise."""
    m, n = np.shape(a)[-2:]
    if mode not in ("reduced", "complete") or m < n or (mode == "complete" and m != n):
        raise ValueError(f"np.linalg.qr(a, mode={mode!r}) of a {m} x {n} matrix has no derivative rule in s2s_ad: "
                         f"the rule covers mode='reduced' with at least as many rows as columns")
    return q


def _chain(matrices: list, size: int) -> np.ndarray:
    """The product of ``matrices`` (the identity of ``size`` when there are none)."""
    result = np.eye(size)
    for m in matrices:
        result = result @ m
    return result


def _multi_dot_terms(arrays: list) -> list:
    """``np.linalg.multi_dot``'s operands as matrices: a 1-D first one a row, a 1-D last one a column."""
    mats = [np.asarray(a, dtype=float) for a in arrays]
    if mats[0].ndim == 1:
        mats[0] = mats[0][np.newaxis, :]
    if mats[-1].ndim == 1:
        mats[-1] = mats[-1][:, np.newaxis]
    return mats


def _multi_dot_adjoints(grad: Any, mats: list, like: list) -> list:
    """P_i^T grad S_i^T for each operand (P_i, S_i the products before and after it), shaped like it."""
    g = np.reshape(np.asarray(grad, dtype=float), (mats[0].shape[0], mats[-1].shape[1]))
    out = []
    for i, m in enumerate(mats):
        before = _chain(mats[:i], mats[0].shape[0])
        after = _chain(mats[i + 1:], m.shape[1])
        out.append(np.reshape(before.T @ g @ after.T, np.shape(like[i])))
    return out


def multi_dot_grad(grad: Any, arrays: Any) -> Any:
    """The adjoints of the operands of ``np.linalg.multi_dot(arrays)``, one per operand (one array
    where ``arrays`` is one)."""
    return as_given(_multi_dot_adjoints(grad, _multi_dot_terms(arrays), list(arrays)), arrays, grad)


def _is_missing(t: Any) -> bool:
    return isinstance(t, (int, float)) and t == 0


def multi_dot_jvp(arrays: Any, tangents: Any) -> Any:
    """The tangent of ``np.linalg.multi_dot(arrays)``: each operand's tangent in its place, summed."""
    arrays = list(arrays)
    total = 0.0
    for i, t in enumerate(tangents):
        if not _is_missing(t):
            total = total + np.linalg.multi_dot(arrays[:i] + [t] + arrays[i + 1:])
    if _is_missing(total):
        return np.zeros(np.shape(np.linalg.multi_dot(arrays)))
    return total


def multi_dot_grad_jvp(grad: Any, t_grad: Any, arrays: Any, tangents: Any) -> list:
    """The tangent of ``multi_dot_grad(grad, arrays)`` as ``grad`` moves along ``t_grad`` and the
    operands along ``tangents`` (one list: lists do not add elementwise; one array where ``arrays`` is one)."""
    given, arrays = arrays, list(arrays)
    total = [np.zeros(np.shape(a)) for a in arrays]
    if not _is_missing(t_grad):
        total = multi_dot_grad(t_grad, arrays)
    for j, t in enumerate(tangents if not _is_missing(tangents) else ()):
        if _is_missing(t):
            continue
        moved = _multi_dot_adjoints(grad, _multi_dot_terms(arrays[:j] + [t] + arrays[j + 1:]), arrays)
        for i in range(len(arrays)):
            if i != j:  # operand i's own adjoint does not read operand i
                total[i] = total[i] + moved[i]
    return as_given(total, given, grad)


# -- the determinant's derivative, everywhere: singular matrices included --------------------------
# d det(a) = <cof(a), da>, with cof(a) = adj(a)^T the matrix of cofactors: det(a) a^-T where a is
# invertible, but a polynomial in a's elements, defined (and smooth) everywhere.  Computed from the SVD
# a = u diag(s) v^T, where cof(a) = det(u) det(v) u diag(c) v^T with c[i] the product of the s[k] for
# k != i: no division, so a singular matrix (one s[k] = 0: cof(a) of rank 1; two or more: cof(a) = 0)
# gives the exact cofactors, where det(a) inv(a)^T raises or divides 0 by 0.

def _products_but(s: np.ndarray) -> np.ndarray:
    """``p[..., i, j]``, the product of the ``s[..., k]`` for k other than i and j (for i = j, other
    than i): each row of ``s`` with its own element set to 1, times the products before and after each
    element (O(n^2), no division, so exact where some ``s`` are 0)."""
    n = s.shape[-1]
    rows = np.where(np.eye(n, dtype=bool), 1.0, np.expand_dims(s, -2))  # row i: s with s[i] = 1
    ones = np.ones(rows.shape[:-1] + (1,))
    before = np.concatenate([ones, np.cumprod(rows[..., :-1], axis=-1)], axis=-1)
    after = np.concatenate([np.flip(np.cumprod(np.flip(rows[..., 1:], -1), axis=-1), -1), ones], axis=-1)
    return before * after


def _orientation(u: np.ndarray, vh: np.ndarray) -> np.ndarray:
    """det(u) det(vh) (each +1 or -1) for the SVD's factors, shaped to scale a stack of matrices."""
    return np.expand_dims(np.linalg.det(u) * np.linalg.det(vh), (-2, -1))


def det_cofactors(a: Any) -> np.ndarray:
    """The derivative of ``np.linalg.det(a)``: the matrix of cofactors, ``adj(a)^T`` (batched over
    leading axes), exact at singular matrices too (see above)."""
    a = np.asarray(a, dtype=float)
    if a.shape[-1] == 0:
        return np.zeros(a.shape)
    u, s, vh = np.linalg.svd(a)
    products = np.diagonal(_products_but(s), 0, -2, -1)
    return _orientation(u, vh) * np.matmul(u * np.expand_dims(products, -2), vh)


def det_cofactors_jvp(a: Any, t: Any) -> np.ndarray:
    """The tangent of ``det_cofactors(a)`` along ``t``: the determinant's second derivative, exact at
    singular matrices too.  In the SVD's frame, with m = u^T t v, the tangent of the cofactors of
    diag(s) is k[i, i] = sum over j != i of p[i, j] m[j, j] and k[i, j] = -p[i, j] m[j, i] (p from
    ``_products_but``); the result is det(u) det(v) u k v^T."""
    a = np.asarray(a, dtype=float)
    if _is_missing(t) or a.shape[-1] == 0:
        return np.zeros(a.shape)
    u, s, vh = np.linalg.svd(a)
    n = a.shape[-1]
    eye = np.eye(n)
    moved = np.matmul(np.swapaxes(u, -1, -2), np.matmul(t, np.swapaxes(vh, -1, -2)))
    products = _products_but(s) * (1.0 - eye)  # p[i, j] for i != j
    diagonal = np.matmul(products, np.expand_dims(np.diagonal(moved, 0, -2, -1), -1))[..., 0]
    k = np.expand_dims(diagonal, -1) * eye - products * np.swapaxes(moved, -1, -2)
    return _orientation(u, vh) * np.matmul(u, np.matmul(k, vh))


def inverse_transposed(a: Any) -> np.ndarray:
    """``inv(a)^T``, the derivative of log|det(a)| (``np.linalg.slogdet``): from the SVD, so that a
    singular matrix, where log|det| is -inf, gives inf or nan (as 1/0 and 0/0) rather than raising."""
    a = np.asarray(a, dtype=float)
    u, s, vh = np.linalg.svd(a)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.matmul(u / np.expand_dims(s, -2), vh)


def zero_safe_product(scale: Any, x: Any) -> Any:
    """``scale * x``, with 0 times inf or nan taken as 0: a zero seed (the adjoint of log|det| where only
    slogdet's sign is used) contributes nothing, even at a singular matrix where ``x`` is not finite."""
    with np.errstate(invalid="ignore"):
        product = scale * x
    if np.all(np.isfinite(product)):
        return product
    return np.where(np.asarray(scale) == 0, 0.0, product)


nondifferentiable(norm_order, norm_max_weights, norm_singular_weights, tensordot_adjoint_plan, kron_axes, inner_axes)
spell_module("np.linalg", np.linalg)  # generated code writes np.linalg.solve

def _matmul_rank(x1: int, x2: int) -> "int | None":
    """The rank of ``x1 @ x2`` where both are at least matrices (the larger, batched); else not declared."""
    return max(x1, x2) if min(x1, x2) >= 2 else None


def _one_operand(count: int) -> bool:
    """np.einsum of one operand may return a view of it ("ii->i", "ij->ji"); of several, a new array."""
    return count <= 2


_PRODUCTS = (
    {"x1": (3, 4), "x2": (4, 2)}, {"x1": (3, 4), "x2": (4,)}, {"x1": (4,), "x2": (4, 2)},
    {"x1": (4,), "x2": (4,)}, {"x1": (2, 3, 4), "x2": (4, 5)},
)


@adjoint(np.matmul, bilinear=True, examples=_PRODUCTS, factors=(0, 1), result_rank=_matmul_rank,
         result_dims=matmul_dims)
def matmul(out, x1, x2, d_out):
    d_x1 = matmul_grad_a(d_out, x1, x2)
    d_x2 = matmul_grad_b(d_out, x1, x2)


@adjoint(np.matmul, ranks={"x1": 2, "x2": 2}, examples=({"x1": (3, 4), "x2": (4, 2)}, {"x1": (1, 3), "x2": (3, 1)}))
def matmul_matrices(out, x1, x2, d_out):
    d_x1 = d_out @ x2.T  # two matrices: no helper needs to look at the ranks
    d_x2 = x1.T @ d_out


@adjoint(operator.matmul, bilinear=True, examples=tuple({"a": e["x1"], "b": e["x2"]} for e in _PRODUCTS),
         factors=(0, 1), reusable=True, words=("at", "matprod"), result_rank=_matmul_rank, result_dims=matmul_dims,
         syntax=ast.MatMult)
def matmul_operator(out, a, b, d_out):
    d_a = matmul_grad_a(d_out, a, b)
    d_b = matmul_grad_b(d_out, a, b)


@adjoint(operator.matmul, ranks={"a": 2, "b": 2}, examples=({"a": (3, 4), "b": (4, 2)}, {"a": (1, 3), "b": (3, 1)}))
def matmul_operator_matrices(out, a, b, d_out):
    d_a = d_out @ b.T
    d_b = a.T @ d_out


@adjoint(np.dot, bilinear=True, method="dot", examples=tuple({"a": e["x1"], "b": e["x2"]} for e in _PRODUCTS)
         + ({"a": (), "b": (3,)}, {"a": (2, 3), "b": (4, 3, 2)}, {"a": (2, 2, 3), "b": (4, 3, 2)},
            {"a": (3,), "b": (2, 3, 4)}, {"a": (2, 3, 4), "b": (4,)}), factors=(0, 1))
def dot(out, a, b, d_out):
    d_a = dot_grad_a(d_out, a, b)  # N-D np.dot is not matmul: it keeps the leading axes of both
    d_b = dot_grad_b(d_out, a, b)


def outer_rank(a: Any, b: Any) -> int:
    """np.outer's result is a matrix whatever its arguments' ranks (it flattens them)."""
    return 2


@adjoint(np.outer, bilinear=True, examples=({"a": (3,), "b": (4,)}, {"a": (2, 2), "b": (3,)}), factors=(0, 1),
         result_rank=outer_rank)
def outer(out, a, b, d_out):
    d_a = np.reshape(np.dot(d_out, np.ravel(b)), np.shape(a))
    d_b = np.reshape(np.dot(np.ravel(a), d_out), np.shape(b))


@adjoint(np.transpose, linear=True, method="transpose", pack_method_args=True, attribute="T",
         examples=({"a": (3, 4)}, {"a": (2, 3, 4), "axes": (1, 2, 0)}, {"a": (5,)}), view=True,
         result_dims=transposed_dims, retake="always", write_back="transpose")
def transpose(out, a, axes=None, *, d_out):
    d_a = np.transpose(d_out, inverse_axes(axes))


@adjoint(np.trace, linear=True, method="trace", examples=(
    {"a": (3, 3)}, {"a": (3, 4), "offset": 1}, {"a": (2, 3, 4), "offset": -1, "axis1": 1, "axis2": 2},
    {"a": (3, 2, 3), "axis1": 2, "axis2": 0}))
def trace(out, a, offset=0, axis1=0, axis2=1, *, d_out):
    d_a = trace_grad(d_out, a, offset, axis1, axis2)


@adjoint(np.tensordot, bilinear=True, examples=(
    {"a": (3, 4), "b": (4, 2), "axes": 1}, {"a": (2, 3, 4), "b": (3, 4, 5)}, {"a": (2, 3, 4), "b": (4, 2, 3),
                                                                          "axes": ([1, 0], [2, 1])},
    {"a": (3,), "b": (2,), "axes": 0}))
def tensordot(out, a, b, axes=2, *, d_out):
    plan_a = tensordot_adjoint_plan(a, b, axes, 0)
    plan_b = tensordot_adjoint_plan(a, b, axes, 1)
    d_a = np.transpose(np.tensordot(d_out, b, plan_a[0]), plan_a[1])
    d_b = np.transpose(np.tensordot(a, d_out, plan_b[0]), plan_b[1])


@adjoint(np.inner, bilinear=True, examples=({"a": (3,), "b": (3,)}, {"a": (2, 3), "b": (4, 3)}, {"a": (), "b": (3,)},
                                           {"a": (2, 2, 3), "b": (3,)}))
def inner(out, a, b, d_out):
    # np.inner is tensordot over the last axes (a product where one is a number)
    plan_a = tensordot_adjoint_plan(a, b, inner_axes(a, b), 0)
    plan_b = tensordot_adjoint_plan(a, b, inner_axes(a, b), 1)
    d_a = np.transpose(np.tensordot(d_out, b, plan_a[0]), plan_a[1])
    d_b = np.transpose(np.tensordot(a, d_out, plan_b[0]), plan_b[1])


@adjoint(np.kron, bilinear=True, examples=({"a": (2, 3), "b": (3, 2)}, {"a": (3,), "b": (2,)}, {"a": (2,), "b": (2, 3)}))
def kron(out, a, b, d_out):
    blocks = kron_blocks(d_out, a, b)
    d_a = np.reshape(np.sum(blocks * kron_spread(b, a, 1), axis=kron_axes(a, b, 0)), np.shape(a))
    d_b = np.reshape(np.sum(blocks * kron_spread(a, b, 0), axis=kron_axes(a, b, 1)), np.shape(b))


# np.cross of 2-vectors (as (x, y, 0)) was deprecated in NumPy 2.0 and is refused from 2.5 on
_CROSS_OF_2_VECTORS = ({"a": (2,), "b": (2,)}, {"a": (4, 2), "b": (2,)}, {"a": (2,), "b": (3,)},
                       {"a": (3, 4), "b": (2, 4), "axisa": 0, "axisb": 0, "axisc": 0}) \
    if np.lib.NumpyVersion(np.__version__) < "2.5.0" else ()


@adjoint(np.cross, bilinear=True, examples=({"a": (3,), "b": (3,)}, {"a": (4, 3), "b": (3,)}) + _CROSS_OF_2_VECTORS + (
                                           {"a": (3, 2), "b": (3, 2), "axis": 0},
                                           {"a": (3, 2), "b": (2, 3), "axisa": 0, "axisc": 0}))
def cross(out, a, b, axisa=-1, axisb=-1, axisc=-1, axis=None, *, d_out):
    # d_a = b x d_out and d_b = d_out x a, with 2-vectors as (x, y, 0) (two give the z component)
    d_a = cross_grad(d_out, b, a, axisb, axisa, axisc, axis, 1.0)
    d_b = cross_grad(d_out, a, b, axisa, axisb, axisc, axis, -1.0)


# -- np.linalg ----------------------------------------------------------------------------------

_NUMPY_2 = np.lib.NumpyVersion(np.__version__) >= "2.0.0"  # how solve reads a vector b
_SQUARE = ({"a": (3, 3)}, {"a": (2, 3, 3)})


@adjoint(np.linalg.inv, examples=_SQUARE)
def inv(out, a, d_out):
    d_a = -np.matmul(np.swapaxes(out, -1, -2), np.matmul(d_out, np.swapaxes(out, -1, -2)))


@tangent(np.linalg.inv)
def inv(out, a, t_a):
    t_out = -np.matmul(out, np.matmul(t_a, out))


@adjoint(np.linalg.solve, examples=({"a": (3, 3), "b": (3,)}, {"a": (3, 3), "b": (3, 2)},
                                    {"a": (2, 3, 3), "b": (3,) if _NUMPY_2 else (2, 3)},
                                    {"a": (2, 3, 3), "b": (2, 3, 2)}, {"a": (3, 3), "b": (2, 3, 1)}))
def solve(out, a, b, d_out):
    columns = solve_columns(out, a, b)  # a vector b is one column
    adjoint_columns = np.linalg.solve(np.swapaxes(a, -1, -2), solve_columns(d_out, a, b))
    d_a = unbroadcast(-np.matmul(adjoint_columns, np.swapaxes(columns, -1, -2)), a)
    d_b = unbroadcast(np.reshape(adjoint_columns, np.shape(out)), b)


@tangent(np.linalg.solve)
def solve(out, a, b, t_a, t_b):
    t_out = np.reshape(np.linalg.solve(a, solve_columns(t_b, a, b) - np.matmul(t_a, solve_columns(out, a, b))), np.shape(out))


# Singular points: of rank 2 (one zero singular value: the cofactors are of rank 1), of rank 1 (the
# cofactors are 0, the second derivative is not), and 0 (both are 0); a batch mixing them
_SINGULAR = (np.array([[50.0, -30.0, 45.0], [-30.0, 90.0, -81.0], [45.0, -81.0, 81.0]]) / 50.0,
             np.array([[36.0, -42.0, 18.0], [-42.0, 49.0, -21.0], [18.0, -21.0, 9.0]]) / 40.0)
_SINGULAR_POINTS = tuple({"a": m} for m in _SINGULAR) + (
    {"a": np.zeros((2, 2))}, {"a": np.stack([_SINGULAR[0], np.eye(3) + 0.1, _SINGULAR[1]])}, {"a": (1, 1)})


@adjoint(np.linalg.det, examples=_SQUARE + _SINGULAR_POINTS)
def det(out, a, d_out):
    # the cofactors, not det(a) inv(a)^T: defined at singular matrices too (det_cofactors)
    d_a = np.expand_dims(d_out, (-2, -1)) * det_cofactors(a)


@tangent(np.linalg.det)
def det(out, a, t_a):
    t_out = np.sum(det_cofactors(a) * t_a, axis=(-2, -1))


_SPD = np.array([[2.0, 0.3, 0.1], [0.3, 1.5, -0.2], [0.1, -0.2, 1.2]])


# NumPy 2's upper=True reads a's upper triangle and returns the upper factor: the lower rule, transposed
_CHOLESKY_UPPER = np.lib.NumpyVersion(np.__version__) >= "2.0.0"
_SPD_UNDER_NOISE = np.tril(_SPD) + np.triu(np.array([[0.0, 9.0, -4.0], [0.0, 0.0, 7.0], [0.0, 0.0, 0.0]]))
_CHOLESKY_POINTS = ({"a": _SPD}, {"a": np.stack([_SPD, _SPD.T @ _SPD])}, {"a": _SPD_UNDER_NOISE}) + (
    ({"a": _SPD_UNDER_NOISE.T, "upper": True}, {"a": np.stack([_SPD, _SPD.T @ _SPD]), "upper": True})
    if _CHOLESKY_UPPER else ())


def cholesky_triangle(upper):
    """The triangle ``np.linalg.cholesky(a, upper=upper)`` reads ("U" or "L", as eigh's ``UPLO``)."""
    return "U" if upper else "L"


nondifferentiable(cholesky_triangle)


def transposed_if(x, flag):
    """``x`` with its last two axes swapped where ``flag`` is true (a missing tangent, the number 0, as it is)."""
    if not flag or np.ndim(x) < 2:
        return x
    return np.swapaxes(x, -1, -2)


@adjoint(np.linalg.cholesky, examples=_CHOLESKY_POINTS)
def cholesky(out, a, *, upper=False, d_out):
    # NumPy reads only one triangle of a (the lower; the upper with upper=True), so the adjoint is that
    # triangle's: an element off the diagonal stands for itself and its mirror image (Murray 2016, then
    # folded).  The upper factor is the lower one of the same symmetric matrix, transposed.
    lower = transposed_if(out, upper)
    lower_t = np.swapaxes(lower, -1, -2)
    middle = np.matmul(lower_t, transposed_if(d_out, upper))
    middle = np.tril(middle) - 0.5 * middle * np.eye(np.shape(a)[-1])
    left = np.linalg.solve(lower_t, middle)
    both = np.swapaxes(np.linalg.solve(lower_t, np.swapaxes(left, -1, -2)), -1, -2)
    d_a = symmetric_adjoint(both + np.swapaxes(both, -1, -2), cholesky_triangle(upper))


@tangent(np.linalg.cholesky)
def cholesky(out, a, *, upper=False, t_a):
    lower = transposed_if(out, upper)
    seen = symmetric_seen(t_a, cholesky_triangle(upper))  # the symmetric matrix NumPy reads
    inner = np.linalg.solve(lower, np.swapaxes(np.linalg.solve(lower, seen), -1, -2))  # L^-1 seen L^-T
    t_out = transposed_if(np.matmul(lower, np.tril(inner) - 0.5 * inner * np.eye(np.shape(a)[-1])), upper)


def _spectral_weights(x, ord, axis):
    """d norm / d x for the matrix norms of singular values (ord 2, -2, 'nuc'): u diag(w) v^T, with w
    the weight of each singular value in the norm (distinct singular values); zeros for the others.
    Written with np.linalg.svd so that its own derivative (second order) is the SVD's."""
    factors = np.linalg.svd(norm_matrices(x, ord, axis, 1.0), full_matrices=False)
    picked = norm_singular_weights(factors[1], ord, np.ndim(x), axis)
    return norm_unmoved(np.matmul(factors[0] * np.expand_dims(picked, -2), factors[2]), x, ord, axis)


# norm_matrices and norm_unmoved are linear and each other's transpose (x is read for its shape).
@adjoint(norm_matrices, view=True, examples=({"x": (3, 4), "ord": 2, "axis": None, "fill": 1.0},
                                  {"x": (2, 3, 4), "ord": "nuc", "axis": (2, 0), "fill": 1.0},
                                  {"x": (4,), "ord": 2, "axis": None, "fill": 1.0}))
def norm_matrices_rule(out, x, ord, axis, fill, d_out):
    d_x = norm_unmoved(d_out, x, ord, axis)


@tangent(norm_matrices)
def norm_matrices_tangent(out, x, ord, axis, fill, t_x):
    t_out = norm_matrices(t_x, ord, axis, 0.0)


@adjoint(norm_unmoved, linear=True, shape_only=1, view=True, examples=(
    {"w": (3, 4), "x": np.zeros((3, 4)), "ord": -2, "axis": None},
    {"w": (3, 4, 2), "x": np.zeros((2, 3, 4)), "ord": "nuc", "axis": (1, 2)},
    {"w": (1, 1), "x": np.zeros((3, 4)), "ord": 1, "axis": None}))
def norm_unmoved_rule(out, w, x, ord, axis, d_out):
    d_w = norm_matrices(d_out, ord, axis, 0.0)


@adjoint(np.linalg.norm, domain=(-0.8, 0.8), examples=(
    {"x": (4,)}, {"x": (3, 4)}, {"x": (3, 4), "axis": 1}, {"x": (3, 4), "ord": 1, "axis": 0},
    {"x": (2, 3, 4), "axis": (0, 2), "keepdims": True}, {"x": (5,), "ord": 3}, {"x": (3, 3), "ord": "fro"},
    {"x": (4,), "ord": 1.5, "keepdims": True}, {"x": (4,), "ord": np.inf}, {"x": (3, 4), "ord": -np.inf, "axis": 1},
    {"x": (3, 4), "ord": 1}, {"x": (3, 4), "ord": -1}, {"x": (2, 3, 4), "ord": np.inf, "axis": (2, 0)},
    {"x": (3, 4), "ord": -np.inf, "keepdims": True}, {"x": (4,), "ord": 0}, {"x": (4,), "ord": -2},
    {"x": (3, 4), "ord": 2}, {"x": (4, 3), "ord": -2}, {"x": (3, 3), "ord": "nuc"},
    {"x": (2, 3, 4), "ord": "nuc", "axis": (-1, 0)}, {"x": (3, 2, 4), "ord": 2, "axis": (0, 2), "keepdims": True},
    {"x": (2, 4, 3), "ord": -2, "axis": (-2, -1)}))
def norm(out, x, ord=None, axis=None, keepdims=False, *, d_out):
    # the p-norms: d |x|_p = sign(x) |x|**(p - 1) / |x|_p**(p - 1) (0 where the norm is 0); the norms
    # of a max or a min: sign(x) where the extreme is reached; the norms of singular values: u v^T
    # for each (norm_order gives the last two p = 0)
    p = norm_order(ord, np.ndim(x), axis)
    d_x = (expand_reduced(d_out * (out + (out == 0)) ** (1.0 - p), axis, keepdims) * norm_weight(x, p)
           + expand_reduced(d_out, axis, keepdims) * (norm_max_weights(x, ord, axis, keepdims)
                                                      + _spectral_weights(x, ord, axis)))


@tangent(np.linalg.norm)
def norm(out, x, ord=None, axis=None, keepdims=False, *, t_x):
    p = norm_order(ord, np.ndim(x), axis)
    t_out = (np.sum(norm_weight(x, p) * t_x, axis=axis, keepdims=keepdims) * (out + (out == 0)) ** (1.0 - p)
             + np.sum((norm_max_weights(x, ord, axis, keepdims) + _spectral_weights(x, ord, axis)) * t_x,
                      axis=axis, keepdims=keepdims))


@adjoint(np.linalg.slogdet, items=2, examples=_SQUARE, returns_sequence=True)
def slogdet(out, a, d_out):
    # out is (sign, log|det|); the sign is piecewise constant: only log|det| carries the derivative,
    # inv(a)^T (infinite where a is singular and log|det| is -inf: see inverse_transposed)
    d_a = zero_safe_product(np.expand_dims(d_out[1], (-2, -1)), inverse_transposed(a))


@tangent(np.linalg.slogdet)
def slogdet(out, a, t_a):
    t_out = (np.zeros(np.shape(out[0])), np.sum(inverse_transposed(a) * t_a, axis=(-2, -1)))


# Points where LAPACK's choice of each eigenvector's sign does not flip within finite differences' step
_SYMMETRIC = ({"a": np.array([[3.0, 0.5, 0.2], [0.5, 1.0, 0.4], [0.2, 0.4, -1.0]])},
              {"a": np.stack([np.array([[1.0, 0.2, 0.7], [0.2, 2.0, 0.1], [0.7, 0.1, 3.5]]),
                              np.array([[0.5, -0.4, 0.2], [-0.4, -1.0, 0.3], [0.2, 0.3, 2.5]])])})


def symmetric_seen(t, UPLO):
    """The symmetric matrix ``np.linalg.eigh(t, UPLO)`` reads: its lower ("L") or upper ("U") triangle."""
    if UPLO == "U":
        return np.triu(t) + np.swapaxes(np.triu(t, 1), -1, -2)
    return np.tril(t) + np.swapaxes(np.tril(t, -1), -1, -2)


def symmetric_adjoint(both, UPLO):
    """The adjoint of the triangle ``UPLO`` that eigh reads, given that of the symmetric matrix (``both``,
    itself symmetric): each off-diagonal element counts for two."""
    eye = np.eye(np.shape(both)[-1])
    if UPLO == "U":
        return np.triu(both) - 0.5 * both * eye
    return np.tril(both) - 0.5 * both * eye


def hermitian_seen(t, hermitian):
    """The matrix ``np.linalg.pinv`` and ``np.linalg.svd`` read with ``hermitian=True`` (through eigh: the
    lower triangle, mirrored); ``t`` itself otherwise, and a missing tangent (the number 0) as it is."""
    if not hermitian or np.ndim(t) < 2:
        return t
    return symmetric_seen(t, "L")


def hermitian_adjoint(g, hermitian):
    """The adjoint of ``hermitian_seen``: with ``hermitian=True``, that of the lower triangle read, given
    ``g`` that of the matrix seen (each element off the diagonal counts for itself and its mirror image)."""
    if not hermitian or np.ndim(g) < 2:
        return g
    return symmetric_adjoint(g + np.swapaxes(g, -1, -2), "L")


_SYMMETRIC_BOTH = _SYMMETRIC + tuple(dict(e, UPLO="U") for e in _SYMMETRIC) + ({"a": _SYMMETRIC[0]["a"], "UPLO": "L"},)


@adjoint(np.linalg.eigh, items=2, examples=_SYMMETRIC_BOTH, returns_sequence=True)
def eigh(out, a, UPLO="L", *, d_out):
    # out is (w, v); with gaps F[i, j] = 1 / (w[j] - w[i]) (distinct eigenvalues), the symmetric
    # adjoint is v (diag(d_w) + F * (v^T d_v)) v^T, folded onto the triangle NumPy reads
    values = out[0]
    vectors = out[1]
    eye = np.eye(np.shape(a)[-1])
    gaps = np.expand_dims(values, -2) - np.expand_dims(values, -1)
    inverse_gaps = 1.0 / (gaps + eye) - eye
    vectors_t = np.swapaxes(vectors, -1, -2)
    middle = np.expand_dims(d_out[0], -1) * eye + inverse_gaps * np.matmul(vectors_t, d_out[1])
    both = np.matmul(vectors, np.matmul(middle, vectors_t))
    d_a = symmetric_adjoint(both + np.swapaxes(both, -1, -2), UPLO)


@tangent(np.linalg.eigh)
def eigh(out, a, UPLO="L", *, t_a):
    values = out[0]
    vectors = out[1]
    eye = np.eye(np.shape(a)[-1])
    gaps = np.expand_dims(values, -2) - np.expand_dims(values, -1)
    moved = np.matmul(np.swapaxes(vectors, -1, -2), np.matmul(symmetric_seen(t_a, UPLO), vectors))
    t_out = (np.diagonal(moved, 0, -2, -1), np.matmul(vectors, (1.0 / (gaps + eye) - eye) * moved))


@adjoint(np.linalg.eigvalsh, examples=_SYMMETRIC_BOTH)
def eigvalsh(out, a, UPLO="L", *, d_out):
    vectors = np.linalg.eigh(a, UPLO)[1]
    both = np.matmul(vectors * np.expand_dims(d_out, -2), np.swapaxes(vectors, -1, -2))
    d_a = symmetric_adjoint(both + np.swapaxes(both, -1, -2), UPLO)


@tangent(np.linalg.eigvalsh)
def eigvalsh(out, a, UPLO="L", *, t_a):
    vectors = np.linalg.eigh(a, UPLO)[1]
    t_out = np.sum(vectors * np.matmul(symmetric_seen(t_a, UPLO), vectors), axis=-2)


_LETTERS = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"


def einsum_subscripts(*args):
    """np.einsum's sublist form, ``(a, [0, 1], b, [1], [0])``, spelled as its subscripts form,
    ``("ab,b->a", a, b)``; None where the call is in that form already, or its sublists are not
    constants (the rule then refuses it)."""
    if not args or isinstance(args[0], str):
        return None
    pairs = len(args) // 2
    sublists = list(args[1:2 * pairs:2])
    output = [args[-1]] if len(args) % 2 else []
    if not all(isinstance(s, (list, tuple)) and all(k is Ellipsis or isinstance(k, int) and 0 <= k < len(_LETTERS)
                                                        for k in s) for s in sublists + output):
        return None
    terms = ["".join("..." if k is Ellipsis else _LETTERS[k] for k in s) for s in sublists + output]
    spec = ",".join(terms[:pairs]) + ("->" + terms[pairs] if output else "")
    return [spec, *args[0:2 * pairs:2]]


declare(np.einsum, respelled=einsum_subscripts)


@adjoint(np.einsum, bilinear=True, examples=(
    {"subscripts": "ij,jk->ik", "op0": (2, 3), "op1": (3, 4)}, {"subscripts": "ii->", "op0": (3, 3)},
    {"subscripts": "ij->i", "op0": (2, 3)}, {"subscripts": "i,i", "op0": (3,), "op1": (3,)},
    {"subscripts": "...ij,...jk->...ik", "op0": (2, 3, 4), "op1": (4, 2)},
    {"subscripts": "ij,jk,k->i", "op0": (2, 3), "op1": (3, 2), "op2": (2,)}, {"subscripts": "iji->j", "op0": (2, 3, 2)},
    {"subscripts": "i,j,k,ij", "op0": (2,), "op1": (3,), "op2": (2,), "op3": (2, 3)},
    {"subscripts": "i...,i->...", "op0": (3, 1, 2), "op1": (3,)}, {"subscripts": "ij,j", "op0": (1, 3), "op1": (3,)},
    {"subscripts": "i,j->ij", "op0": (3,), "op1": (2,)}), may_view=_one_operand)
def einsum(out, subscripts, op0, op1=None, op2=None, op3=None, *, optimize=False, d_out):
    # multilinear: the adjoint of each operand is one more einsum (up to four operands)
    d_op0 = einsum_grad(d_out, subscripts, 0, op0, op0, op1, op2, op3)
    d_op1 = einsum_grad(d_out, subscripts, 1, op1, op0, op1, op2, op3)
    d_op2 = einsum_grad(d_out, subscripts, 2, op2, op0, op1, op2, op3)
    d_op3 = einsum_grad(d_out, subscripts, 3, op3, op0, op1, op2, op3)


# matrix_power(a, 1) is a itself (NumPy returns its argument): a later write into a shows through it
@adjoint(np.linalg.matrix_power, view=True, examples=({"a": (3, 3), "n": 3}, {"a": (2, 3, 3), "n": 2}, {"a": (2, 2), "n": 0},
                                           {"a": (2, 2), "n": 1}))
def matrix_power(out, a, n, d_out):  # n >= 0 (a negative n raises: write matrix_power(inv(a), -n))
    d_a = matrix_power_grad(d_out, a, n)


@tangent(np.linalg.matrix_power)
def matrix_power(out, a, n, t_a):
    t_out = matrix_power_jvp(a, t_a, n)


_SVD_POINTS = (
    {"a": np.array([[0.25, 0.79, 0.55], [-0.55, -0.4, 0.75], [-0.99, 0.64, 0.59]])},
    {"a": np.array([[-0.06, -0.39, -0.44], [-0.49, -0.11, 0.01], [0.11, 0.99, 0.59], [0.24, 0.98, -0.57]]),
     "full_matrices": False},
    {"a": np.array([[-0.68, 0.23, -0.91, -0.93], [0.03, -0.07, 0.83, 0.26]]), "full_matrices": False},
    {"a": np.array([[[0.03, -0.01], [-0.5, -0.98], [-0.62, 0.38]], [[-0.6, -0.26], [-0.99, 0.66], [-0.69, -0.46]]]),
     "full_matrices": False},
)


def _svd_items(compute_uv=True):
    """np.linalg.svd returns (u, s, vh), or (0: not a tuple) s alone where compute_uv is False."""
    return 3 if compute_uv else 0


def svd_factors(out, a, full_matrices, compute_uv):
    """(u, s, vh) of ``np.linalg.svd(a, full_matrices, compute_uv)``'s result ``out``: the reduced
    factors computed again where it holds the singular values alone."""
    if compute_uv:
        return svd_checked(out[0], a, full_matrices, compute_uv), out[1], out[2]
    return np.linalg.svd(a, full_matrices=False)


def svd_seeds(d_out, factors, compute_uv):
    """The adjoints of (u, s, vh): zeros for the factors not returned."""
    if compute_uv:
        return d_out
    return np.zeros(np.shape(factors[0])), d_out, np.zeros(np.shape(factors[2]))


def svd_vectors_adjoint(factors, seeds, compute_uv):
    """The part of svd's adjoint that comes through u and vh (none where only s is returned: its
    gaps between singular values, infinite where two are equal, are then not needed)."""
    if not compute_uv:
        return 0.0
    u = factors[0]
    s = factors[1]
    v = np.swapaxes(factors[2], -1, -2)
    adjoint_v = np.swapaxes(seeds[2], -1, -2)
    eye = np.eye(np.shape(s)[-1])
    squares = s * s
    gaps = 1.0 / (np.expand_dims(squares, -2) - np.expand_dims(squares, -1) + eye) - eye
    u_t = np.swapaxes(u, -1, -2)
    v_t = np.swapaxes(v, -1, -2)
    left = np.matmul(u_t, seeds[0])
    right = np.matmul(v_t, adjoint_v)
    core = (gaps * (left - np.swapaxes(left, -1, -2)) * np.expand_dims(s, -2)
            + np.expand_dims(s, -1) * (gaps * (right - np.swapaxes(right, -1, -2))))
    outside_u = seeds[0] / np.expand_dims(s, -2) - np.matmul(u, np.matmul(u_t, seeds[0] / np.expand_dims(s, -2)))
    outside_v = adjoint_v / np.expand_dims(s, -2) - np.matmul(v, np.matmul(v_t, adjoint_v / np.expand_dims(s, -2)))
    return (np.matmul(u, np.matmul(core, v_t)) + np.matmul(outside_u, v_t)
            + np.matmul(u, np.swapaxes(outside_v, -1, -2)))


_SYMMETRIC_UNDER_NOISE = np.tril(_SYMMETRIC[0]["a"]) + np.triu(np.array([[0.0, 5.0, -2.0], [0.0, 0.0, 3.0], [0.0, 0.0, 0.0]]))


@adjoint(np.linalg.svd, items=_svd_items, examples=_SVD_POINTS + tuple(dict(e, compute_uv=False) for e in _SVD_POINTS)
         + ({"a": _SVD_POINTS[2]["a"], "full_matrices": True, "compute_uv": False},
            {"a": _SYMMETRIC_UNDER_NOISE, "hermitian": True},
            {"a": _SYMMETRIC_UNDER_NOISE, "hermitian": True, "compute_uv": False}), returns_sequence=True)
def svd(out, a, full_matrices=True, compute_uv=True, hermitian=False, *, d_out):
    # Townsend (2016), with F[i, j] = 1 / (s[j]**2 - s[i]**2) (distinct singular values, none 0):
    # u (F * (u^T du - du^T u) S + diag(ds) + S F * (v^T dv - dv^T v)) v^T + the parts outside u's and v's span
    # (with hermitian=True, that of the matrix NumPy reads, folded back onto its lower triangle)
    factors = svd_factors(out, hermitian_seen(a, hermitian), full_matrices, compute_uv)
    seeds = svd_seeds(d_out, factors, compute_uv)
    d_a = hermitian_adjoint(np.matmul(factors[0] * np.expand_dims(seeds[1], -2), factors[2])
                            + svd_vectors_adjoint(factors, seeds, compute_uv), hermitian)


@tangent(np.linalg.svd)
def svd(out, a, full_matrices=True, compute_uv=True, hermitian=False, *, t_a):
    t_out = svd_tangent(svd_factors(out, hermitian_seen(a, hermitian), full_matrices, compute_uv),
                        hermitian_seen(t_a, hermitian), compute_uv)


def svd_tangent(factors, t_a, compute_uv):
    """The tangent of svd's result as a moves along t_a: that of (u, s, vh), or of s alone."""
    u = factors[0]
    s = factors[1]
    v = np.swapaxes(factors[2], -1, -2)
    moved = np.matmul(np.swapaxes(u, -1, -2), np.matmul(t_a, v))
    if not compute_uv:
        return np.diagonal(moved, 0, -2, -1)
    eye = np.eye(np.shape(s)[-1])
    squares = s * s
    gaps = 1.0 / (np.expand_dims(squares, -2) - np.expand_dims(squares, -1) + eye) - eye
    moved_t = np.swapaxes(moved, -1, -2)
    t_u = (np.matmul(u, gaps * (moved * np.expand_dims(s, -2) + np.expand_dims(s, -1) * moved_t))
           + (np.matmul(t_a, v) - np.matmul(u, moved)) / np.expand_dims(s, -2))
    t_v = (np.matmul(v, gaps * (np.expand_dims(s, -1) * moved + moved_t * np.expand_dims(s, -2)))
           + (np.matmul(np.swapaxes(t_a, -1, -2), u) - np.matmul(v, moved_t)) / np.expand_dims(s, -2))
    return t_u, np.diagonal(moved, 0, -2, -1), np.swapaxes(t_v, -1, -2)


_QR_POINTS = ({"a": (3, 3)}, {"a": (4, 3)}, {"a": (2, 4, 2)})


@adjoint(np.linalg.qr, items=2, examples=_QR_POINTS, returns_sequence=True)
def qr(out, a, mode="reduced", *, d_out):
    # Walter and Lehmann; as JAX: with M = R dR^T - dQ^T Q, d_a = (dQ + Q copyltu(M)) R^-T
    q = qr_checked(out[0], a, mode)
    r = out[1]
    middle = np.matmul(r, np.swapaxes(d_out[1], -1, -2)) - np.matmul(np.swapaxes(d_out[0], -1, -2), q)
    middle = np.tril(middle) + np.swapaxes(np.tril(middle, -1), -1, -2)
    d_a = np.swapaxes(np.linalg.solve(r, np.swapaxes(d_out[0] + np.matmul(q, middle), -1, -2)), -1, -2)


@tangent(np.linalg.qr)
def qr(out, a, mode="reduced", *, t_a):
    q = qr_checked(out[0], a, mode)
    r = out[1]
    moved = np.swapaxes(np.linalg.solve(np.swapaxes(r, -1, -2), np.swapaxes(t_a, -1, -2)), -1, -2)  # t_a R^-1
    rotated = np.matmul(np.swapaxes(q, -1, -2), moved)
    skew = np.tril(rotated, -1) - np.swapaxes(np.tril(rotated, -1), -1, -2)
    t_out = (np.matmul(q, skew - rotated) + moved, np.matmul(rotated - skew, r))


@adjoint(np.linalg.multi_dot, examples=({"arrays": [(2, 3), (3, 4), (4, 2)]}, {"arrays": [(3,), (3, 2), (2, 4), (4,)]},
                                        {"arrays": [(2, 3), (3,)]}, {"arrays": (3, 2, 2)}))
def multi_dot(out, arrays, *, d_out):
    d_arrays = multi_dot_grad(d_out, arrays)


@tangent(np.linalg.multi_dot)
def multi_dot(out, arrays, *, t_arrays):
    t_out = multi_dot_jvp(arrays, t_arrays)


_PINV_POINTS = ({"a": (3, 3)}, {"a": (4, 2)}, {"a": (2, 4)}, {"a": (2, 3, 2)},
                {"a": _SPD_UNDER_NOISE, "hermitian": True}, {"a": _SYMMETRIC[1]["a"], "hermitian": True})


@adjoint(np.linalg.pinv, zero_derivative=("rcond", "rtol"), examples=_PINV_POINTS)
def pinv(out, a, rcond=None, hermitian=False, *, rtol=None, d_out):
    # Golub and Pereyra, where the rank does not change: with X = pinv(a) and G = d_out,
    # -X^T G X^T + (I - a X) G^T X X^T + X^T X G^T (I - X a); with hermitian=True, of the matrix NumPy
    # reads (the lower triangle, mirrored), folded back onto that triangle
    seen = hermitian_seen(a, hermitian)
    x_t = np.swapaxes(out, -1, -2)
    g_t = np.swapaxes(d_out, -1, -2)
    rows = np.eye(np.shape(a)[-2]) - np.matmul(seen, out)
    cols = np.eye(np.shape(a)[-1]) - np.matmul(out, seen)
    d_a = hermitian_adjoint(-np.matmul(x_t, np.matmul(d_out, x_t)) + np.matmul(rows, np.matmul(g_t, np.matmul(out, x_t)))
                            + np.matmul(np.matmul(x_t, out), np.matmul(g_t, cols)), hermitian)


@tangent(np.linalg.pinv)
def pinv(out, a, rcond=None, hermitian=False, *, rtol=None, t_a):
    seen = hermitian_seen(a, hermitian)
    moved = hermitian_seen(t_a, hermitian)
    t_a_t = np.swapaxes(moved, -1, -2)
    x_t = np.swapaxes(out, -1, -2)
    rows = np.eye(np.shape(a)[-2]) - np.matmul(seen, out)
    cols = np.eye(np.shape(a)[-1]) - np.matmul(out, seen)
    t_out = (-np.matmul(out, np.matmul(moved, out)) + np.matmul(np.matmul(out, x_t), np.matmul(t_a_t, rows))
             + np.matmul(cols, np.matmul(t_a_t, np.matmul(x_t, out))))


# np.linalg.lstsq(a, b) for a of full rank: (x, residuals, rank, s), x = pinv(a) b.  Tall a: x minimises
# |b - a x|, residuals = |b - a x|**2 per column (empty for square or wide a); wide a: the least-norm
# solution.  b a vector or a matrix of columns; worked with as columns.
_LSTSQ = ({"a": (5, 3), "b": (5,)}, {"a": (4, 2), "b": (4, 3)}, {"a": (3, 3), "b": (3, 2)},
          {"a": (2, 4), "b": (2,)}, {"a": (2, 3), "b": (2, 2), "rcond": None})


@adjoint(np.linalg.lstsq, items=4, examples=_LSTSQ, returns_sequence=True, zero_derivative=("rcond",))
def lstsq(out, a, b, rcond=None, *, d_out):
    # x = a+ b: dx = -a+ da x + a+ a+^T da^T r + (I - a+ a) da^T a+^T x + a+ db, with r = b - a x (the
    # residuals); the residuals' derivative is the envelope's (a^T r = 0): 2 r (db - da x)^T; the
    # singular values': u diag(ds) v^T
    rows = np.shape(a)[0]
    cols = np.shape(a)[1]
    solution = np.reshape(out[0], (cols, -1))
    wanted = np.reshape(d_out[0], (cols, -1))
    left = np.reshape(b, (rows, -1)) - np.matmul(a, solution)
    inverse = np.linalg.pinv(a)
    pulled = np.matmul(np.transpose(inverse), wanted)
    spread = np.reshape(np.concatenate([d_out[1], np.zeros(np.shape(solution)[1] - np.size(d_out[1]))]), (1, -1))
    weighted = 2.0 * spread * left
    factors = np.linalg.svd(a, full_matrices=False)
    d_a = (np.matmul(left, np.transpose(np.matmul(inverse, pulled)))
           + np.matmul(np.matmul(np.transpose(inverse), solution),
                       np.transpose(wanted - np.matmul(inverse, np.matmul(a, wanted))))
           - np.matmul(pulled + weighted, np.transpose(solution))
           + np.matmul(factors[0] * np.expand_dims(d_out[3], -2), factors[2]))
    d_b = np.reshape(pulled + weighted, np.shape(b))


@tangent(np.linalg.lstsq)
def lstsq_tangent(out, a, b, rcond=None, *, t_a, t_b):
    rows = np.shape(a)[0]
    cols = np.shape(a)[1]
    solution = np.reshape(out[0], (cols, -1))
    left = np.reshape(b, (rows, -1)) - np.matmul(a, solution)
    inverse = np.linalg.pinv(a)
    moving_a = np.broadcast_to(t_a, np.shape(a))  # a missing tangent is a plain 0
    t_a_t = np.transpose(moving_a)
    moved = np.reshape(np.broadcast_to(t_b, np.shape(b)), (rows, -1)) - np.matmul(moving_a, solution)
    t_x = (np.matmul(inverse, moved) + np.matmul(inverse, np.matmul(np.transpose(inverse), np.matmul(t_a_t, left)))
           + np.matmul(np.eye(cols) - np.matmul(inverse, a), np.matmul(t_a_t, np.matmul(np.transpose(inverse), solution))))
    factors = np.linalg.svd(a, full_matrices=False)
    t_s = np.diagonal(np.matmul(np.transpose(factors[0]), np.matmul(moving_a, np.transpose(factors[2]))))
    t_out = (np.reshape(t_x, np.shape(out[0])), (2.0 * np.sum(left * moved, axis=0))[:np.size(out[1])],
             np.zeros(np.shape(out[2])), t_s)


fresh_arrays(np.outer)  # products are computed into new arrays (or numbers: 1-d by 1-d)
fresh_values(np.matmul, operator.matmul, np.dot)


# Facts about operations with no rule here (see s2s_ad.rules.FACTS).
declare(np.linalg.eig, returns_sequence=True)


# -- the rules of the helpers above (generated code differentiated again calls them) ------------
@tangent(cross_grad, examples=(
    {"grad": (3,), "other": (3,), "like": np.zeros(3), "axis_other": -1, "axis_like": -1, "axisc": -1, "axis": None,
     "sign": 1.0},
    {"grad": (), "other": (2,), "like": np.zeros(2), "axis_other": -1, "axis_like": -1, "axisc": -1, "axis": None,
     "sign": -1.0},
    {"grad": (3, 2), "other": (2, 2), "like": np.zeros((3, 2)), "axis_other": 0, "axis_like": 0, "axisc": 0,
     "axis": None, "sign": 1.0}))
def cross_grad_rule(out, grad, other, like, axis_other, axis_like, axisc, axis, sign, *, t_grad, t_other):
    t_out = (cross_grad(t_grad, other, like, axis_other, axis_like, axisc, axis, sign)
             + cross_grad(grad, t_other, like, axis_other, axis_like, axisc, axis, sign))


@tangent(matmul_grad_a, examples=({"grad": (2, 4), "a": np.zeros((2, 3)), "b": (3, 4)},
                                  {"grad": (4,), "a": np.zeros(3), "b": (3, 4)}))
def matmul_grad_a_rule(out, grad, a, b, t_grad, t_b):
    t_out = matmul_grad_a(t_grad, a, b) + matmul_grad_a(grad, a, t_b)


@tangent(matmul_grad_b, examples=({"grad": (2, 4), "a": (2, 3), "b": np.zeros((3, 4))},
                                  {"grad": (2,), "a": (2, 3), "b": np.zeros(3)}))
def matmul_grad_b_rule(out, grad, a, b, t_grad, t_a):
    t_out = matmul_grad_b(t_grad, a, b) + matmul_grad_b(grad, t_a, b)


@tangent(dot_grad_a, examples=({"grad": (2, 4), "a": np.zeros((2, 3)), "b": (3, 4)},
                               {"grad": (2, 5, 2), "a": np.zeros((2, 3)), "b": (5, 3, 2)}))
def dot_grad_a_rule(out, grad, a, b, t_grad, t_b):
    t_out = dot_grad_a(t_grad, a, b) + dot_grad_a(grad, a, t_b)


@tangent(dot_grad_b, examples=({"grad": (2, 4), "a": (2, 3), "b": np.zeros((3, 4))},
                               {"grad": (2, 5, 2), "a": (2, 3), "b": np.zeros((5, 3, 2))}))
def dot_grad_b_rule(out, grad, a, b, t_grad, t_a):
    t_out = dot_grad_b(t_grad, a, b) + dot_grad_b(grad, t_a, b)


@tangent(norm_weight, examples=({"x": (4,), "p": 2.0}, {"x": (4,), "p": 3.0}, {"x": (4,), "p": 1.5}, {"x": (3,), "p": 1.0}))
def norm_weight_rule(out, x, p, t_x):
    t_out = norm_weight_jvp(x, p, t_x)


@adjoint(solve_columns, linear=True, examples=({"x": (3,), "a": np.zeros((3, 3)), "b": np.zeros(3)},
                                              {"x": (2, 3), "a": np.zeros((2, 2)), "b": np.zeros((3, 2))}))
def solve_columns_rule(out, x, a, b, d_out):
    d_x = np.reshape(d_out, np.shape(x))


@tangent(trace_grad, examples=({"grad": (), "a": np.zeros((3, 3))}, {"grad": (2,), "a": np.zeros((2, 3, 4)),
                                                                     "axis1": 1, "axis2": 2}))
def trace_grad_rule(out, grad, a, offset=0, axis1=0, axis2=1, *, t_grad):
    t_out = trace_grad(t_grad, a, offset, axis1, axis2)


@adjoint(kron_blocks, linear=True, examples=({"grad": (6,), "a": np.zeros(2), "b": np.zeros(3)},))
def kron_blocks_rule(out, grad, a, b, d_out):
    d_grad = np.reshape(d_out, np.shape(grad))


@adjoint(kron_spread, linear=True, examples=({"x": (2,), "other": np.zeros(3), "which": 0},
                                             {"x": (2, 2), "other": np.zeros(3), "which": 1}))
def kron_spread_rule(out, x, other, which, d_out):
    d_x = np.reshape(d_out, np.shape(x))


@tangent(einsum_grad, examples=(
    {"grad": (2, 4), "subscripts": "ij,jk->ik", "which": 0, "like": np.zeros((2, 3)), "op0": None, "op1": (3, 4)},
    {"grad": (), "subscripts": "i,ij,j", "which": 1, "like": np.zeros((2, 3)), "op0": (2,), "op1": None,
     "op2": (3,)}))
def einsum_grad_rule(out, grad, subscripts, which, like, op0, op1=None, op2=None, op3=None, *,
                     t_grad, t_op0, t_op1, t_op2, t_op3):
    # linear in grad and in each operand but the one whose adjoint it is (slot ``which``, not read)
    t_out = (einsum_grad(t_grad, subscripts, which, like, op0, op1, op2, op3)
             + einsum_grad(grad, subscripts, which, like, t_op0, op1, op2, op3) * (which != 0)
             + einsum_grad(grad, subscripts, which, like, op0, t_op1, op2, op3) * (which != 1)
             + einsum_grad(grad, subscripts, which, like, op0, op1, t_op2, op3) * (which != 2)
             + einsum_grad(grad, subscripts, which, like, op0, op1, op2, t_op3) * (which != 3))


@tangent(det_cofactors, examples=({"a": (3, 3)}, {"a": (2, 3, 3)}) + _SINGULAR_POINTS)
def det_cofactors_rule(out, a, t_a):
    t_out = det_cofactors_jvp(a, t_a)


# A third derivative of det would differentiate det_cofactors_jvp through the SVD's rule, which divides by
# singular values and their gaps: at a (numerically) singular matrix rounding then gives a finite wrong
# number.  Refused where it would be transformed, rather than risk it.
declare(det_cofactors_jvp, refused="s2s_ad differentiates np.linalg.det to second order only (its third derivative "
        "through the SVD is wrong near singular matrices); for higher orders write the determinant out (a 2 x 2 or "
        "3 x 3 one as products of elements), or use np.linalg.slogdet where the matrix is regular")


@tangent(zero_safe_product, examples=({"scale": (2, 1, 1), "x": (2, 3, 3)}, {"scale": (), "x": (3,)}))
def zero_safe_product_rule(out, scale, x, t_scale, t_x):
    t_out = zero_safe_product(t_scale, x) + zero_safe_product(scale, t_x)  # bilinear, with 0 * inf = 0


@tangent(inverse_transposed, examples=_SQUARE)
def inverse_transposed_rule(out, a, t_a):
    t_out = -np.matmul(out, np.matmul(np.swapaxes(t_a, -1, -2), out))  # the tangent of inv(a), transposed


@tangent(matrix_power_grad, examples=({"grad": (3, 3), "a": (3, 3), "n": 3},))
def matrix_power_grad_rule(out, grad, a, n, t_grad, t_a):
    t_out = matrix_power_grad(t_grad, a, n) + matrix_power_grad_jvp(grad, a, t_a, n)


@adjoint(svd_checked, linear=True, examples=({"u": (3, 3), "a": np.zeros((3, 3))},
                                             {"u": (4, 3), "a": np.zeros((4, 3)), "full_matrices": False}))
def svd_checked_rule(out, u, a, full_matrices=True, compute_uv=True, *, d_out):
    d_u = d_out


@adjoint(qr_checked, linear=True, examples=({"q": (3, 3), "a": np.zeros((3, 3))}, {"q": (4, 3), "a": np.zeros((4, 3))}))
def qr_checked_rule(out, q, a, mode="reduced", *, d_out):
    d_q = d_out


@tangent(multi_dot_grad, examples=({"grad": (2, 2), "arrays": [(2, 2), (2, 2)]},
                                   {"grad": (2, 2), "arrays": [(2, 2), (2, 2), (2, 2)]}))
def multi_dot_grad_rule(out, grad, arrays, t_grad, t_arrays):
    t_out = multi_dot_grad_jvp(grad, t_grad, arrays, t_arrays)  # a list: one call, not a sum of lists


declare(matmul_grad_b, dot_grad_b, factors=(0, 1))


declare(matmul_grad_a, dot_grad_a, factors=(0, 2))

nondifferentiable(inverse_axes)
# Inputs the helpers read for their shape, their length or their sorting order only: a varied
# argument there carries no derivative (any other input without one is refused where it varies).
# What they hand back (view, may_view, returns_sequence) is checked against NumPy
# (tests/rules/test_rule_facts_against_numpy.py): generated code that writes into it copies first.
declare(svd_checked, qr_checked, matmul_grad_a, dot_grad_a, trace_grad, zero_derivative=("a",))
declare(matmul_grad_b, dot_grad_b, zero_derivative=("b",))
declare(solve_columns, kron_blocks, zero_derivative=("a", "b"))
declare(kron_spread, zero_derivative=("other",))
declare(einsum_grad, cross_grad, zero_derivative=("like",))
declare(solve_columns, kron_blocks, kron_spread, svd_checked, qr_checked, norm_weight, view=True)  # their first argument
declare(multi_dot_grad, returns_sequence=True)


# -- batched forms (vector mode, docs/api.md): each takes its directions on a leading axis --------

@batched(np.trace, directions=("a",))
def trace_batched(a, offset=0, axis1=0, axis2=1, dtype=None, out=None):
    if out is not None:
        raise TypeError("np.trace with out= has no batched form")
    return np.trace(a, offset, data_axis(axis1, a.ndim - 1), data_axis(axis2, a.ndim - 1), dtype=dtype)


@batched(trace_grad, directions=("grad",))
def trace_grad_batched(grad, a, offset=0, axis1=0, axis2=1):
    length = np.diagonal(np.zeros(np.shape(a), dtype=bool), offset, axis1, axis2).shape[-1]
    return diagonal_grad_batched(np.broadcast_to(grad[..., np.newaxis], grad.shape + (length,)), a, offset, axis1, axis2)


@batched(solve_columns, directions=("x",))
def solve_columns_batched(x, a, b):
    vectors = np.ndim(b) == 1 if _SOLVE_VECTORS_ONLY_1D else np.ndim(b) == np.ndim(a) - 1
    return np.expand_dims(x, -1) if vectors and np.ndim(x) >= 2 else x
