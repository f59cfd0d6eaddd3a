"""Which everyday rules run as Python under ``backend="numba"`` (issue 36): a small function per rule,
differentiated with ``backend="numba"``, and whether its first call gives a ``CompileFallbackWarning``
(and what it says), beside the Python backend's gradient (the same numbers and dtype).

``python -m benchmarks.numba_fallbacks`` prints one line per case; ``CASES`` is read by
tests/targets/test_numba_rule_coverage.py, which asserts that every case compiles.
"""
from __future__ import annotations

import math
import os
import warnings
from typing import Any, Callable

import numpy as np

XP = np.array([0.0, 1.0, 2.0, 3.0])


def cumsum_flat(x):
    return np.sum(np.cumsum(x) ** 2)


def cumsum_axis(x):
    return np.sum(np.cumsum(x, axis=1) ** 2)


def cumsum_axis0(x):
    return np.sum(np.cumsum(x, axis=0) ** 3)


def sort_vector(x):
    return np.sum(np.sort(x) * np.arange(x.shape[0]))


def sort_rows(x):
    return np.sum(np.sort(x, axis=1) * np.arange(x.shape[1]) ** 2)


def einsum_product(x):
    return np.sum(np.einsum("ij,jk->ik", x, x))


def einsum_contractions(x):
    return np.einsum("ij,ij", x, np.sin(x)) + np.sum(np.einsum("ij,j,ik->k", x, x[0], x) ** 2)


def einsum_diagonal_and_spread(x):
    return np.sum(np.einsum("ii->", x * x) * x) + np.sum(np.einsum("ij->j", x) ** 2 * np.einsum("i,j->ij", x[0], x[1, :1]))


def diag_of_matrix(x):
    return np.sum(np.diag(x) ** 2 * np.arange(3.0)) + np.sum(np.diag(x, 1) ** 3)


def diag_of_vector(v):
    return np.sum(np.diag(v) @ np.diag(v * v, -1)[1:, :3]) + np.sum(np.sin(np.diag(v, 2)))


def prod_flat_and_rows(x):
    return np.prod(x) + np.sum(np.prod(x, axis=1) ** 2) + np.sum(np.prod(x, axis=0))


def cumprod_flat_and_axes(x):
    return np.sum(np.cumprod(x) ** 2) + np.sum(np.cumprod(x, axis=1) * x) + np.sum(np.cumprod(x, axis=0) ** 3)


def diff_once_and_twice(x):
    return np.sum(np.diff(x) ** 2) + np.sum(np.diff(x * x, 2) ** 3)


def ediff1d_joined(x):
    return np.sum(np.ediff1d(x, to_end=x[0] * 2.0, to_begin=np.array([1.0, -1.0])) ** 2)


def nanprod_and_nancumprod(x):
    data = np.where(np.arange(x.size).reshape(x.shape) == 5, np.nan, 0.0) + x
    return np.nanprod(data) + np.sum(np.nancumprod(data) ** 2)  # (Numba's np.nancumprod takes no axis)


def _with_a_zero(shape):
    x = np.linspace(0.3, 1.4, int(np.prod(shape))).reshape(shape)
    x.flat[x.size // 2] = 0.0  # (the helpers multiply, never divide: a zero is fine)
    return x


def solve_vector(x):
    a = np.eye(3) * 4.0 + x
    return np.sum(np.linalg.solve(a, np.ones(3)) ** 2)


def solve_matrix(x):
    a = np.eye(3) * 4.0 + x
    return np.sum(np.linalg.solve(a, x) ** 2)


def interp_points(x):
    return np.sum(np.interp(x, XP, XP ** 2))


def interp_values(fp):
    return np.sum(np.interp(np.array([-0.5, 0.5, 1.5, 2.5, 3.5]), XP, fp) ** 2)


def pad_reflect(x):
    return np.sum(np.pad(x, 2, mode="reflect") ** 2 * np.arange(x.shape[0] + 4))


def pad_reflect_wide(x):
    return np.sum(np.pad(x, (5, 1), mode="reflect") ** 3)


def pad_symmetric_matrix(x):
    return np.sum(np.pad(x, ((1, 2), (2, 1)), mode="symmetric") ** 2)


def trace_square(x):
    return np.trace(x @ x)


def trace_offset(x):
    return np.trace(x * x, 1)


def dot_integer_matrix(x):
    return np.sum(np.dot(np.arange(9).reshape(3, 3), x) ** 2)


def dot_integer_vector(x):
    return np.dot(np.arange(3), x) ** 2


def linspace_between(x):
    return np.sum(np.linspace(x[0], x[1], 5) ** 2) + np.sum(np.sin(np.linspace(x[0], x[2], 4, endpoint=False)))


def convolve_and_correlate(x):
    kernel = np.array([0.5, -1.0, 2.0])
    return np.sum(np.convolve(x, kernel) ** 2) + np.sum(np.convolve(x, kernel[:2], "same") ** 3) \
        + np.sum(np.correlate(x, kernel, "valid") ** 2) + np.sum(np.correlate(kernel, x, "same") ** 2)


def polyval_coefficients(c):
    return np.sum(np.polyval(c, XP) ** 2) + np.polyval(c, 0.7) ** 3


def polyval_points(x):
    return np.sum(np.polyval(np.array([0.5, -1.0, 2.0, 0.25]), x) ** 2)


def cross_rows(x):
    return np.sum(np.cross(x, x[0]) ** 2 * XP[1:]) + np.sum(np.cross(x[1], x[2] * x[3]) ** 3)


def median_and_quantiles(x):
    return np.median(x) ** 2 + np.quantile(x * x, 0.3) + np.percentile(np.sin(x), 75.0) ** 3


def meshgrid_surface(x):
    across, down = np.meshgrid(x, x[:3] * 2.0)
    deep, wide = np.meshgrid(x[:2], x[1:], indexing="ij")
    return np.sum(np.sin(across) * down ** 2) + np.sum(deep * wide ** 2)


def weighted_average(x):
    return np.average(x * x, weights=np.arange(1.0, x.size + 1.0)) ** 2 + np.average(np.sin(x), weights=x * x)


def kron_products(x):
    return np.sum(np.kron(x, x[:2] * 3.0) ** 2) + np.sum(np.kron(np.outer(x, x[1:]), np.eye(2)) ** 2)


def exp_below_the_maximum(x):
    m = np.outer(x, x[::-1])
    return np.sum(np.exp(m - np.max(m))) + np.mean(m, keepdims=True)[0, 0]


def contractions(x):
    m = np.outer(x, x[::-1]) + 0.5
    cube = np.reshape(np.outer(m, x), (4, 4, 4))
    inner = np.sum(np.inner(m, x) ** 2) + np.inner(x, x) + np.sum(np.inner(cube, m) ** 2)
    dotted = np.sum(np.tanh(np.tensordot(m, m, axes=1))) + np.sum(np.tensordot(cube, m) ** 2)
    return inner + dotted + np.sum(np.tensordot(cube, m, axes=([2, 0], [0, 1])) ** 2) + np.sum(np.tensordot(x, m, 0))


def covariances(x):
    return np.sum(np.cov(x) ** 2) + np.sum(np.corrcoef(x[0], x[1] * x[2]) ** 3) \
        + np.sum(np.cov(x, rowvar=False, ddof=0) * np.arange(16.0).reshape(4, 4))


def gradients(x):
    return np.sum(np.gradient(x) ** 2) + np.sum(np.gradient(np.sin(x), 0.5, edge_order=2) ** 3)


def gamma_family(x):
    total = 0.0
    for i in range(x.shape[0]):
        total = total + math.lgamma(x[i]) * math.gamma(x[i] * 0.5 + 1.0)
    return total


def spreads(x):
    return (np.sum(np.var(x, axis=0)) + np.sum(np.std(x, axis=1, ddof=1) ** 2)
            + np.var(x, keepdims=True)[0, 0] * 0.5 + np.std(x, ddof=1) + np.sum(np.var(x, axis=-1, keepdims=True)))


def float32_product(x):
    return np.sum(x * x * 2.0)


def float32_loop(x):
    total = np.float32(0.0)
    for i in range(x.shape[0]):
        total = total + x[i] * x[i]
    return total


def concatenate_list(x):
    joined = np.concatenate([x, np.sin(x[1:])])
    return np.sum(joined ** 2)


def concatenate_with_numbers(x):
    joined = np.concatenate([[x[0] * x[1]], x, (2.0, x[2])])   # (numbers in lists beside an array)
    return np.sum(joined ** 2)


def argsort_rows(x):
    m = np.outer(x, x[::-1])
    return np.sum(np.take_along_axis(m, np.argsort(m, axis=1)[:, :2], axis=1) ** 2)


def stack_rows(x):
    M = np.stack([x, x ** 2], axis=1)
    return np.sum(M[:, 0] * M[:, 1])


def hstack_and_vstack(x):
    side = np.hstack((x[1:], x[:1] * 3.0))
    rows = np.vstack((x, side))
    return np.sum(rows[1] * rows[0] ** 2)


def tile_and_repeat(x):
    T = np.tile(x, (2, 1))
    R = np.repeat(np.outer(x, x), 2, axis=1)
    return np.sum(T[1] * T[0] ** 2) + np.sum(np.sin(R))


def take_rows(x):
    M = np.outer(x, x)
    return np.sum(np.take(M, np.array([0, 2, 2]), axis=0) ** 2) + np.take(x, 1) * np.sum(np.take(x, np.array([0, 0])))


def trapezoids(x):
    y = np.sin(x) * x
    return np.trapezoid(y, dx=0.1) + np.trapezoid(y ** 2, np.cumsum(x * x + 0.5)) + \
        np.sum(np.trapezoid(np.outer(x, x), axis=0))


def take_along_rows(x):
    grid = np.outer(x, x[::-1])
    picks = np.take_along_axis(grid, np.array([[0, 4], [2, 2], [1, -1], [3, 0], [4, 4]]), axis=1)
    firsts = np.take_along_axis(grid, np.array([[1, 0, 2, 1, 3]]), axis=0)  # (one row of indices: broadcast)
    ranked = np.take_along_axis(x, np.argsort(x), axis=0)
    return np.sum(picks ** 2) + np.sum(firsts * ranked) + np.sum(np.take_along_axis(x, np.array([2, 0, 2]), axis=None) ** 3)


def append_flat_and_rows(x):
    joined = np.append(x, x[:2] * 3.0)
    rows = np.append(np.outer(x, x), np.outer(x[:2], x) * 2.0, axis=0)
    return np.sum(joined ** 2) + np.sum(np.sin(rows))


def fft_shifts(x):
    grid = np.outer(x, x + 1.0)
    return np.sum(np.fft.fftshift(x) * np.arange(x.shape[0])) + \
        np.sum(np.fft.ifftshift(grid, axes=1) * np.arange(grid.size).reshape(grid.shape)) + \
        np.sum(np.fft.fftshift(grid, axes=(0, 1)) ** 2)


def math_remainders(x):
    total = 0.0
    for i in range(x.shape[0]):
        total += math.fmod(x[i] * 7.0, 1.3) ** 2 + math.remainder(x[i] * 5.0, 0.9) * x[i]
    return total


def sorted_items(x):
    ranked = sorted(x)
    downward = sorted(x, reverse=True)
    return ranked[-1] * 2.0 + ranked[0] * ranked[1] + downward[0] * downward[-1]


# (name, the function, its argument, whether it is expected to compile)
CASES: list[tuple[str, Callable, Callable[[], Any], bool]] = [
    ("np.cumsum (flat): cumsum_grad", cumsum_flat, lambda: np.linspace(0.1, 1.0, 5), True),
    ("np.cumsum(axis=1): cumsum_grad", cumsum_axis, lambda: np.linspace(0.1, 1.0, 6).reshape(2, 3), True),
    ("np.cumsum(axis=0): cumsum_grad", cumsum_axis0, lambda: np.linspace(0.1, 1.0, 6).reshape(3, 2), True),
    ("np.sort: sort_grad", sort_vector, lambda: np.array([0.3, -1.0, 2.0, 0.7, 0.35]), True),
    ("sorted (an array's items, reverse=True too): sorted_adjoint", sorted_items,
     lambda: np.array([0.3, -1.0, 2.0, 0.7, 0.35]), True),
    ("np.sort(axis=1): sort_grad", sort_rows, lambda: np.array([[0.3, -1.0, 2.0], [0.7, 0.1, -0.4]]), True),
    ("np.einsum: einsum_grad", einsum_product, lambda: np.linspace(0.1, 1.0, 9).reshape(3, 3), True),
    ("np.einsum (contractions): einsum_grad", einsum_contractions, lambda: np.linspace(0.1, 1.0, 9).reshape(3, 3),
     True),
    ("np.einsum (diagonal, spread): einsum_grad", einsum_diagonal_and_spread,
     lambda: np.linspace(0.1, 1.0, 9).reshape(3, 3), True),
    ("np.diag (of a matrix): diag_grad", diag_of_matrix, lambda: np.linspace(0.1, 1.0, 12).reshape(3, 4), True),
    ("np.diag (of a vector): diag_grad", diag_of_vector, lambda: np.linspace(0.1, 1.0, 3), True),
    ("np.prod (flat, axis=0, axis=1): prod_others", prod_flat_and_rows, lambda: _with_a_zero((3, 4)), True),
    ("np.cumprod (flat, axis=0, axis=1): cumprod_grad", cumprod_flat_and_axes, lambda: _with_a_zero((3, 4)), True),
    ("np.diff (n=1, n=2): diff_piece", diff_once_and_twice, lambda: np.array([0.3, -1.0, 2.0, 0.7, 0.35, 1.1]), True),
    ("np.ediff1d (joined values): diff_grad", ediff1d_joined, lambda: np.array([0.3, -1.0, 2.0, 0.7, 0.35]), True),
    ("np.nanprod, np.nancumprod: _filled_ones", nanprod_and_nancumprod, lambda: _with_a_zero((3, 4)), True),
    ("np.linalg.solve (vector): solve_columns", solve_vector, lambda: np.linspace(0.1, 1.0, 9).reshape(3, 3), True),
    ("np.linalg.solve (matrix): solve_columns", solve_matrix, lambda: np.linspace(0.1, 1.0, 9).reshape(3, 3), True),
    ("np.interp (x): interp_segments", interp_points, lambda: np.array([-0.5, 0.5, 1.2, 2.7, 3.5]), True),
    ("np.interp (fp): interp_segments", interp_values, lambda: np.array([0.0, 1.0, 4.0, 9.0]), True),
    ("np.pad(mode='reflect'): pad_grad", pad_reflect, lambda: np.linspace(0.1, 1.0, 5), True),
    ("np.pad(mode='reflect', wide): pad_grad", pad_reflect_wide, lambda: np.linspace(0.1, 1.0, 3), True),
    ("np.pad(mode='symmetric', 2-d): pad_grad", pad_symmetric_matrix,
     lambda: np.linspace(0.1, 1.0, 6).reshape(2, 3), True),
    ("np.trace: trace_grad", trace_square, lambda: np.linspace(0.1, 1.0, 9).reshape(3, 3), True),
    ("np.trace(offset=1): trace_grad", trace_offset, lambda: np.linspace(0.1, 1.0, 12).reshape(3, 4), True),
    ("np.dot(int matrix, x): dot_grad_b", dot_integer_matrix, lambda: np.linspace(0.1, 1.0, 6).reshape(3, 2), True),
    ("np.dot(int vector, x): dot_grad_b", dot_integer_vector, lambda: np.linspace(0.1, 1.0, 3), True),
    ("np.concatenate (a list): concatenate_grad", concatenate_list, lambda: np.linspace(0.1, 1.0, 5), True),
    ("np.concatenate (numbers in lists beside arrays)", concatenate_with_numbers, lambda: np.linspace(0.1, 1.0, 5),
     True),
    ("np.argsort(axis=1), default kind", argsort_rows, lambda: np.array([0.3, -1.0, 2.0, 0.7]), True),
    ("np.stack (a list, axis=1): stack_grad", stack_rows, lambda: np.linspace(0.1, 1.0, 5), True),
    ("np.hstack, np.vstack: joined_grad", hstack_and_vstack, lambda: np.linspace(0.1, 1.0, 5), True),
    ("np.tile, np.repeat(axis=1): tile_grad, repeat_grad", tile_and_repeat, lambda: np.linspace(0.1, 1.0, 4), True),
    ("np.take (axis=0, flat): take_grad", take_rows, lambda: np.linspace(0.1, 1.0, 4), True),
    ("np.trapezoid (dx, x, axis=0): pair_means, trapezoid_widths", trapezoids, lambda: np.linspace(0.1, 1.0, 4),
     True),
    ("np.take_along_axis (axis=1, None): take_along_axis_grad", take_along_rows,
     lambda: np.array([0.3, -1.0, 2.0, 0.7, 0.35]), True),
    ("np.append (flat, axis=0): append_grad", append_flat_and_rows, lambda: np.linspace(0.1, 1.0, 4), True),
    ("np.fft.fftshift, ifftshift", fft_shifts, lambda: np.linspace(0.1, 1.0, 5), True),
    ("math.fmod, math.remainder", math_remainders, lambda: np.array([0.31, 0.77, 1.23, 2.2]), True),
    ("np.linspace (endpoint=True, False): linspace_weights", linspace_between, lambda: np.array([0.3, 1.7, -0.4]),
     True),
    ("np.convolve, np.correlate (full, same, valid): as_full", convolve_and_correlate,
     lambda: np.linspace(0.1, 1.0, 5), True),
    ("np.polyval (coefficients): polynomial_powers", polyval_coefficients, lambda: np.array([0.3, -1.0, 2.0]), True),
    ("np.polyval (points): polynomial_derivative", polyval_points, lambda: np.linspace(-1.0, 1.0, 5), True),
    ("np.cross (rows, 3-vectors): cross_grad", cross_rows, lambda: np.linspace(0.1, 1.0, 12).reshape(4, 3), True),
    ("np.median, np.quantile, np.percentile (whole array): quantile_scatter", median_and_quantiles,
     lambda: np.array([[0.3, -1.0, 2.0], [0.7, 0.35, -0.2]]), True),
    ("np.meshgrid (xy, ij): meshgrid_others", meshgrid_surface, lambda: np.array([0.3, -1.0, 2.0, 0.7]), True),
    ("np.average (weights): average_weights", weighted_average, lambda: np.array([0.3, -1.0, 2.0, 0.7]), True),
    ("np.kron: kron_blocks, kron_spread, kron_axes", kron_products, lambda: np.array([0.3, -1.0, 2.0]), True),
    ("np.max, np.mean of a matrix (its ties counted by np.sum of a mask, keepdims)", exp_below_the_maximum,
     lambda: np.array([0.3, -1.0, 2.0, 0.7]), True),
    ("np.inner, np.tensordot (axes 0, 1, 2, pairs): tensordot_adjoint_plan", contractions,
     lambda: np.array([0.3, -1.0, 2.0, 0.7]), True),
    ("np.cov, np.corrcoef: cov_data, cov_matrix_adjoint, correlation_adjoint", covariances,
     lambda: np.array([[0.3, -1.0, 2.0, 0.7], [0.35, 1.1, -0.4, 0.9], [1.5, 0.2, -0.8, 0.6]]), True),
    ("np.gradient (a vector, edge_order 1 and 2): gradient_grad", gradients,
     lambda: np.array([0.3, -1.0, 2.0, 0.7, 0.35]), True),
    ("math.lgamma, math.gamma: digamma", gamma_family, lambda: np.array([0.3, 1.7, 2.5, 4.1]), True),
    ("np.var, np.std (axis, ddof, keepdims)", spreads,
     lambda: np.array([[0.3, -1.0, 2.0, 0.7], [0.35, 1.1, -0.4, 0.9], [1.5, 0.2, -0.8, 0.6]]), True),
    ("float32 arguments (array): computed in float64, cast back", float32_product,
     lambda: np.linspace(0.1, 1.0, 5).astype(np.float32), True),
    ("float32 arguments (loop): computed in float64, cast back", float32_loop,
     lambda: np.linspace(0.1, 1.0, 5).astype(np.float32), True),
    ("np.longdouble arguments", float32_product, lambda: np.linspace(0.1, 1.0, 5).astype(np.longdouble), False),
]


def measure(case: tuple) -> tuple[str, str, bool]:
    """(compiled or FALLBACK, the warning's file:line and words, whether the numbers and dtype are the
    Python backend's) for one case."""
    import s2s_ad
    from s2s_ad import CompileFallbackWarning
    _, fn, make, _ = case
    x = make()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        compiled = s2s_ad.grad(fn, backend="numba")(x)
    python = s2s_ad.grad(fn, backend="python")(x)
    same = np.asarray(compiled).dtype == np.asarray(python).dtype and \
        np.allclose(compiled, python, rtol=1e-5 if np.asarray(python).dtype == np.float32 else 1e-12)
    fallbacks = [w for w in caught if issubclass(w.category, CompileFallbackWarning)]
    said = "; ".join(f"{os.path.basename(w.filename)}:{w.lineno}: {w.message}" for w in fallbacks)
    return ("FALLBACK" if fallbacks else "compiled"), said, bool(same)


def main() -> None:
    for case in CASES:
        status, said, same = measure(case)
        print(f"{case[0]:44s} {status:9s} same numbers and dtype as backend='python': {same}")
        if said:
            print(f"    {said[:400]}")


if __name__ == "__main__":
    main()
