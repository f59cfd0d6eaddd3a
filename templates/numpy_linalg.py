"""Rules for linear algebra: matmul and ``@``, dot, outer, transpose and ``.T``, trace, tensordot,
inner, kron, cross, and ``np.linalg``'s inv, solve, det, cholesky and norm (batched over leading
axes where NumPy batches)."""
import ast
import operator

import numpy as np

from s2s_ad.kinds import matmul_dims, transposed_dims
from s2s_ad.rules import adjoint, declare, fresh_arrays, fresh_values, nondifferentiable, spell_module, tangent
from s2s_ad.runtime import (cross_grad, dot_grad_a, dot_grad_b, einsum_grad, inner_axes, inverse_axes,
                            kron_axes, kron_blocks, kron_spread, matmul_grad_a, matmul_grad_b,
                            matrix_power_grad, matrix_power_jvp, multi_dot_grad, multi_dot_jvp, norm_matrices,
                            norm_max_weights, norm_order, norm_singular_weights, norm_unmoved, norm_weight,
                            qr_checked, solve_columns, svd_checked, tensordot_adjoint_plan, trace_grad,
                            unbroadcast)
from .numpy_reductions import expand_reduced

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


@adjoint(np.outer, bilinear=True, examples=({"a": (3,), "b": (4,)}, {"a": (2, 2), "b": (3,)}), factors=(0, 1))
def outer(out, a, b, d_out):
    d_a = np.reshape(np.dot(d_out, np.ravel(b)), np.shape(a))
    d_b = np.reshape(np.dot(np.ravel(a), d_out), np.shape(b))


@adjoint(np.transpose, linear=True, method="transpose", pack_method_args=True, attribute="T",
         examples=({"a": (3, 4)}, {"a": (2, 3, 4), "axes": (1, 2, 0)}, {"a": (5,)}), view=True,
         result_dims=transposed_dims)
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


@adjoint(np.linalg.det, examples=_SQUARE)
def det(out, a, d_out):
    d_a = np.expand_dims(d_out * out, (-2, -1)) * np.swapaxes(np.linalg.inv(a), -1, -2)


@tangent(np.linalg.det)
def det(out, a, t_a):
    t_out = out * np.sum(np.swapaxes(np.linalg.inv(a), -1, -2) * t_a, axis=(-2, -1))


_SPD = np.array([[2.0, 0.3, 0.1], [0.3, 1.5, -0.2], [0.1, -0.2, 1.2]])


@adjoint(np.linalg.cholesky, examples=({"a": _SPD}, {"a": np.stack([_SPD, _SPD.T @ _SPD])}))
def cholesky(out, a, d_out):
    # NumPy reads only the lower triangle of a, so the adjoint is the lower triangle's: an element
    # below the diagonal stands for itself and its mirror image (Murray 2016, then folded)
    lower_t = np.swapaxes(out, -1, -2)
    middle = np.matmul(lower_t, d_out)
    middle = np.tril(middle) - 0.5 * middle * np.eye(np.shape(a)[-1])
    left = np.linalg.solve(lower_t, middle)
    both = np.swapaxes(np.linalg.solve(lower_t, np.swapaxes(left, -1, -2)), -1, -2)
    both = both + np.swapaxes(both, -1, -2)
    d_a = np.tril(both) - 0.5 * both * np.eye(np.shape(a)[-1])


@tangent(np.linalg.cholesky)
def cholesky(out, a, t_a):
    seen = np.tril(t_a) + np.swapaxes(np.tril(t_a, -1), -1, -2)  # the symmetric matrix NumPy reads
    inner = np.linalg.solve(out, np.swapaxes(np.linalg.solve(out, seen), -1, -2))  # L^-1 seen L^-T
    t_out = np.matmul(out, np.tril(inner) - 0.5 * inner * np.eye(np.shape(a)[-1]))


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
    # out is (sign, log|det|); the sign is piecewise constant: only log|det| carries the derivative
    d_a = np.expand_dims(d_out[1], (-2, -1)) * np.swapaxes(np.linalg.inv(a), -1, -2)


@tangent(np.linalg.slogdet)
def slogdet(out, a, t_a):
    t_out = (np.zeros(np.shape(out[0])), np.sum(np.swapaxes(np.linalg.inv(a), -1, -2) * t_a, axis=(-2, -1)))


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


@adjoint(np.linalg.svd, items=_svd_items, examples=_SVD_POINTS + tuple(dict(e, compute_uv=False) for e in _SVD_POINTS)
         + ({"a": _SVD_POINTS[2]["a"], "full_matrices": True, "compute_uv": False},), returns_sequence=True)
def svd(out, a, full_matrices=True, compute_uv=True, hermitian=False, *, d_out):
    # Townsend (2016), with F[i, j] = 1 / (s[j]**2 - s[i]**2) (distinct singular values, none 0):
    # u (F * (u^T du - du^T u) S + diag(ds) + S F * (v^T dv - dv^T v)) v^T + the parts outside u's and v's span
    factors = svd_factors(out, a, full_matrices, compute_uv)
    seeds = svd_seeds(d_out, factors, compute_uv)
    d_a = (np.matmul(factors[0] * np.expand_dims(seeds[1], -2), factors[2])
           + svd_vectors_adjoint(factors, seeds, compute_uv))


@tangent(np.linalg.svd)
def svd(out, a, full_matrices=True, compute_uv=True, hermitian=False, *, t_a):
    t_out = svd_tangent(svd_factors(out, a, full_matrices, compute_uv), t_a, compute_uv)


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


@adjoint(np.linalg.pinv, zero_derivative=("rcond", "rtol"), examples=({"a": (3, 3)}, {"a": (4, 2)}, {"a": (2, 4)}, {"a": (2, 3, 2)}))
def pinv(out, a, rcond=None, hermitian=False, *, rtol=None, d_out):
    # Golub and Pereyra, where the rank does not change: with X = pinv(a) and G = d_out,
    # -X^T G X^T + (I - a X) G^T X X^T + X^T X G^T (I - X a)
    x_t = np.swapaxes(out, -1, -2)
    g_t = np.swapaxes(d_out, -1, -2)
    rows = np.eye(np.shape(a)[-2]) - np.matmul(a, out)
    cols = np.eye(np.shape(a)[-1]) - np.matmul(out, a)
    d_a = (-np.matmul(x_t, np.matmul(d_out, x_t)) + np.matmul(rows, np.matmul(g_t, np.matmul(out, x_t)))
           + np.matmul(np.matmul(x_t, out), np.matmul(g_t, cols)))


@tangent(np.linalg.pinv)
def pinv(out, a, rcond=None, hermitian=False, *, rtol=None, t_a):
    t_a_t = np.swapaxes(t_a, -1, -2)
    x_t = np.swapaxes(out, -1, -2)
    rows = np.eye(np.shape(a)[-2]) - np.matmul(a, out)
    cols = np.eye(np.shape(a)[-1]) - np.matmul(out, a)
    t_out = (-np.matmul(out, np.matmul(t_a, out)) + np.matmul(np.matmul(out, x_t), np.matmul(t_a_t, rows))
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
