"""Regressions for issue #12 (wrong numbers from index lists with repeats and from some rules)
and for the rules issue #14 added.  Oracles: central finite differences, closed forms, JAX."""
from __future__ import annotations

import math

import numpy as np
import pytest

import s2s_ad
from conftest import assert_gradient_matches, numeric_grad

RNG = np.random.default_rng(12)


def _hessian_by_differences(f, x, eps=1e-5):
    """Central differences of s2s_ad's own gradient (checked against differences separately)."""
    g = s2s_ad.grad(f)
    h = np.zeros((x.size, x.size))
    for i in range(x.size):
        e = np.zeros_like(x)
        e.flat[i] = eps
        h[:, i] = (np.ravel(g(x + e)) - np.ravel(g(x - e))) / (2 * eps)
    return h


def _check_all_orders(f, x):
    """grad and jvp against differences, hessian against differences of the gradient."""
    assert_gradient_matches(f, (x,))
    direction = RNG.normal(size=x.shape)
    _, got = s2s_ad.jvp(f, (x,), (direction,))
    np.testing.assert_allclose(got, np.sum(numeric_grad(f, (x,), 0) * direction), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(np.reshape(s2s_ad.hessian(f)(x), (x.size, x.size)), _hessian_by_differences(f, x),
                               rtol=1e-4, atol=1e-5)


# -- issue #12: index lists with repeats -------------------------------------------------------

def add_into_repeated_positions(v):
    b = np.zeros(5)
    b[[3, 1, 3]] += v[:3] ** 2  # NumPy: b[idx] = b[idx] + v; position 3 keeps the last write
    return np.sum(b * np.arange(1.0, 6.0))


def read_repeated_in_loop(v):
    s = 0.0
    for i in range(2):
        s = s + np.sum(v[[0, 0]] * v[1])  # v[0] read twice per step: both count
    return s


def store_list_last_write_wins(v):
    b = np.zeros(3)
    b[[1, 1]] = [v[0], v[1]]  # b[1] is v[1]: v[0] gets no gradient
    return np.sum(b * b)


def read_tuple_display_index(v):
    return np.sum(v[(0, 0, 2),] ** 2)


def read_boolean_mask(v):
    return np.sum(v[v > 0.5] ** 2)


def store_integer_array_repeats(v):
    idx = np.array([2, 2, 0])
    b = np.zeros(4)
    b[idx] = v[:3] ** 2
    return np.sum(b * b)


def add_scalar_into_repeats(v):
    b = np.zeros(5)
    b[[1, 1]] += v[0]
    return np.sum(b ** 3)


def store_scaled_into_repeats(v):
    b = np.zeros(3)
    b[[0, 0]] = v[:2] * 2
    return np.sum(b ** 2)


def matrix_rows_by_list(m):
    rows = m[[0, 2, 0]]  # a list of row numbers on a matrix: rows, not one element
    return np.sum(rows ** 2) + np.sum(rows[1] * m[1])


def repeated_read_accumulated_in_loop(v):
    b = np.zeros(3)
    for i in range(3):
        b[[i, 0]] += v[[1, 1]] * v[i]
    return np.sum(b ** 2)


def scatter_then_gather(v):
    idx = [2, 0, 2]
    b = np.zeros(4)
    b[idx] = v[:3]
    return np.sum(b[idx] ** 2) + np.sum(b[[True, False, True, True]] * v[1:])


@pytest.mark.parametrize("f", [
    add_into_repeated_positions, read_repeated_in_loop, store_list_last_write_wins, read_tuple_display_index,
    read_boolean_mask, store_integer_array_repeats, add_scalar_into_repeats, store_scaled_into_repeats,
    repeated_read_accumulated_in_loop, scatter_then_gather,
])
def test_index_repeats_follow_numpy(f):
    _check_all_orders(f, np.array([0.3, 0.7, 0.9, 0.2]))


def test_list_index_on_matrix_picks_rows():
    _check_all_orders(matrix_rows_by_list, RNG.uniform(0.2, 0.8, size=(3, 2)))


def test_store_list_last_write_wins_closed_form():
    v = np.array([0.3, 0.7, 0.9, 0.2])
    np.testing.assert_allclose(s2s_ad.grad(store_list_last_write_wins)(v), [0.0, 1.4, 0.0, 0.0])
    np.testing.assert_allclose(s2s_ad.grad(read_repeated_in_loop)(v), [4 * v[1], 4 * v[0], 0.0, 0.0])


# -- issue #12: rules ----------------------------------------------------------------------

def dot_three_dimensional(a, b):
    return np.sum(np.dot(a, b) ** 2)


def test_dot_of_n_d_operands_sums_last_axis_of_a_with_second_to_last_of_b():
    jax = pytest.importorskip("jax")
    jax.config.update("jax_enable_x64", True)
    jnp = jax.numpy
    a, b = RNG.normal(size=(2, 3)), RNG.normal(size=(4, 3, 5))
    got = s2s_ad.grad(dot_three_dimensional, wrt=(0, 1))(a, b)
    want = jax.grad(lambda a, b: jnp.sum(jnp.dot(a, b) ** 2), argnums=(0, 1))(a, b)
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, np.asarray(w), rtol=1e-10)
    a3 = RNG.normal(size=(2, 2, 3))
    assert_gradient_matches(dot_three_dimensional, (a3, b), wrt=(0, 1))
    h = s2s_ad.hessian(dot_three_dimensional)(a3, b)
    want_h = jax.hessian(lambda a: jnp.sum(jnp.dot(a, b) ** 2))(a3)
    np.testing.assert_allclose(h, np.asarray(want_h), rtol=1e-9, atol=1e-12)


def linspace_path(start, stop):
    points = np.linspace(start, stop, 5)
    return np.sum(np.sin(points) * np.arange(5.0))


def linspace_open_interval(start, stop):
    return np.sum(np.linspace(start, stop, 4, endpoint=False) ** 2)


@pytest.mark.parametrize("f", [linspace_path, linspace_open_interval])
def test_linspace_endpoints_are_differentiable(f):
    args = (0.3, 1.7)
    got = assert_gradient_matches(f, args, wrt=(0, 1))
    assert got[0] != 0.0 and got[1] != 0.0
    _, t = s2s_ad.jvp(f, args, (1.0, -0.5))
    np.testing.assert_allclose(t, numeric_grad(f, args, 0) - 0.5 * numeric_grad(f, args, 1), rtol=1e-6)
    np.testing.assert_allclose(s2s_ad.grad(s2s_ad.grad(f))(*args),
                               numeric_grad(s2s_ad.grad(f), args, 0), rtol=1e-5, atol=1e-7)


def spread(x):
    return np.std(x)


def spread_of_rows(m):
    return np.sum(np.std(m, axis=1, ddof=1))


def test_std_at_zero_spread_is_zero_not_nan():
    x = np.full(3, 0.75)  # (exactly representable: a rounded mean would leave a spread of 1e-17)
    np.testing.assert_array_equal(s2s_ad.grad(spread)(x), np.zeros(3))
    np.testing.assert_array_equal(s2s_ad.jvp(spread, (x,), (np.arange(3.0),))[1], 0.0)
    m = np.array([[1.0, 1.0, 1.0], [0.2, 0.5, 0.9]])
    got = s2s_ad.grad(spread_of_rows)(m)
    np.testing.assert_array_equal(got[0], np.zeros(3))
    np.testing.assert_allclose(got[1], numeric_grad(lambda r: np.std(r, ddof=1), (m[1],), 0), rtol=1e-6)
    assert np.all(np.isfinite(s2s_ad.hessian(spread)(x)))


# -- every rule to second order ---------------------------------------------------------------

def _second_order_cases() -> list:
    from test_rules import _cases
    return [c for c in _cases() if c.values[1] is not None]


@pytest.mark.parametrize("rule, example", _second_order_cases())
def test_rule_second_order_matches_differences_of_its_gradient(rule, example, tmp_path):
    """grad(grad(...)) runs forward mode over the generated adjoint: every function a rule's body
    calls needs a rule of its own.  Checked as the directional derivative of the gradient."""
    from test_rules import Probe
    probe = Probe(rule, example, tmp_path)
    wrt = tuple(range(len(probe.params)))
    gradient = s2s_ad.grad(probe.probe, wrt=wrt)
    rng = np.random.default_rng(3)
    directions = tuple(rng.normal(size=np.shape(a)) if np.ndim(a) else float(rng.normal()) for a in probe.args)

    def along(t: float) -> tuple:
        moved = [a + t * d for a, d in zip(probe.args, directions)]
        return gradient(*moved)

    eps = 1e-5
    want = [(p - m) / (2 * eps) for p, m in zip(along(eps), along(-eps))]
    blocks = s2s_ad.hessian(probe.probe, wrt=wrt)(*probe.args)
    for i in wrt:
        got = sum(np.tensordot(blocks[i][j], directions[j], axes=np.ndim(directions[j])) for j in wrt)
        np.testing.assert_allclose(got, want[i], rtol=1e-4, atol=1e-5,
                                   err_msg=f"{probe.call_source}, second order in p{i}")


# -- issue #14: the new rules in functions written as a user would, against JAX ------------------

def gaussian_log_likelihood(mean, chol_params, data):
    lower = np.tril(chol_params) + np.diag(np.exp(np.diagonal(chol_params)))
    cov = lower @ lower.T
    centred = data - mean
    solved = np.linalg.solve(cov, centred.T)
    sign, logdet = np.linalg.slogdet(cov)
    return -0.5 * np.sum(centred.T * solved) - 0.5 * len(data) * logdet


def attention(q, k, v):
    scores = np.einsum("id,jd->ij", q, k) / np.sqrt(q.shape[-1])
    weights = np.exp(scores)
    weights = weights / np.sum(weights, axis=1, keepdims=True)
    return np.sum(np.einsum("ij,jd->id", weights, v) ** 2)


def spectral_and_robust(m):
    sym = m + m.T
    w, vecs = np.linalg.eigh(sym)
    spread = np.quantile(np.ravel(m), 0.75) - np.median(np.ravel(m))
    return np.sum(w ** 3) + np.sum((vecs ** 2) * np.arange(3.0)) + spread + np.linalg.norm(m, axis=0).sum()


def shapes_pipeline(x):
    stacked = np.vstack([x, np.flip(x), np.roll(x, 1)])
    tiled = np.tile(stacked[:, :2], (1, 2))
    moved = np.moveaxis(np.atleast_3d(tiled), 2, 0)
    return np.sum(np.cumprod(np.diff(np.sort(x)) + 1.0)) + np.sum(moved * np.kron(np.array([[0.5, 2.0]]), tiled[:1, :2])) \
        + np.sum(np.triu(np.outer(x, x), 1)) + np.trace(np.tensordot(stacked, stacked, axes=([0], [0])))


def elementwise_mix(x):
    return np.sum(np.hypot(x, 1.0 - x) + np.logaddexp(x, -x) + np.arcsinh(x) + np.sinc(x) + np.exp2(x)
                  + np.arctanh(x / 2.0) + np.fmax(x, 0.5) + np.deg2rad(x) + np.cbrt(x + 1.0))


def _jax():
    jax = pytest.importorskip("jax")
    jax.config.update("jax_enable_x64", True)
    return jax, jax.numpy


@pytest.mark.slow
def test_user_functions_match_jax_to_second_order():
    jax, jnp = _jax()
    rng = np.random.default_rng(14)

    def j_gaussian(mean, chol_params, data):
        lower = jnp.tril(chol_params) + jnp.diag(jnp.exp(jnp.diagonal(chol_params)))
        cov = lower @ lower.T
        centred = data - mean
        solved = jnp.linalg.solve(cov, centred.T)
        return -0.5 * jnp.sum(centred.T * solved) - 0.5 * len(data) * jnp.linalg.slogdet(cov)[1]

    mean, params, data = rng.normal(size=3), 0.3 * rng.normal(size=(3, 3)), rng.normal(size=(5, 3))
    got = s2s_ad.grad(gaussian_log_likelihood, wrt=(0, 1))(mean, params, data)
    want = jax.grad(j_gaussian, argnums=(0, 1))(mean, params, data)
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, np.asarray(w), rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(s2s_ad.hessian(gaussian_log_likelihood, wrt=1)(mean, params, data),
                               np.asarray(jax.hessian(j_gaussian, argnums=1)(mean, params, data)), rtol=1e-8, atol=1e-10)

    def j_attention(q, k, v):
        scores = jnp.einsum("id,jd->ij", q, k) / jnp.sqrt(q.shape[-1])
        weights = jnp.exp(scores)
        weights = weights / jnp.sum(weights, axis=1, keepdims=True)
        return jnp.sum(jnp.einsum("ij,jd->id", weights, v) ** 2)

    q, k, v = (rng.normal(size=(3, 2)) for _ in range(3))
    got = s2s_ad.grad(attention, wrt=(0, 1, 2))(q, k, v)
    want = jax.grad(j_attention, argnums=(0, 1, 2))(q, k, v)
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, np.asarray(w), rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(s2s_ad.hessian(attention)(q, k, v), np.asarray(jax.hessian(j_attention)(q, k, v)),
                               rtol=1e-8, atol=1e-10)

    def j_elementwise(x):
        return jnp.sum(jnp.hypot(x, 1.0 - x) + jnp.logaddexp(x, -x) + jnp.arcsinh(x) + jnp.sinc(x) + jnp.exp2(x)
                       + jnp.arctanh(x / 2.0) + jnp.fmax(x, 0.5) + jnp.deg2rad(x) + jnp.cbrt(x + 1.0))

    x = rng.uniform(-0.9, 0.9, size=5)
    np.testing.assert_allclose(s2s_ad.grad(elementwise_mix)(x), np.asarray(jax.grad(j_elementwise)(x)), rtol=1e-10)
    np.testing.assert_allclose(s2s_ad.hessian(elementwise_mix)(x), np.asarray(jax.hessian(j_elementwise)(x)),
                               rtol=1e-8, atol=1e-10)


def test_eigenvalues_quantiles_and_shapes_match_differences():
    rng = np.random.default_rng(15)
    _check_all_orders(spectral_and_robust, rng.uniform(0.2, 0.8, size=(3, 3)))
    _check_all_orders(shapes_pipeline, rng.uniform(0.2, 0.8, size=4))


def test_sinc_second_derivative_at_zero():
    def f(x):
        return np.sum(np.sinc(x))
    np.testing.assert_allclose(s2s_ad.hessian(f)(np.zeros(2)), -np.pi ** 2 / 3 * np.eye(2), rtol=1e-12)


def norm_of(x):
    return np.linalg.norm(x)


def hypot_of(x):
    return np.sum(np.hypot(x, x))


def test_norm_and_hypot_at_zero_are_zero():
    np.testing.assert_array_equal(s2s_ad.grad(norm_of)(np.zeros(3)), np.zeros(3))
    np.testing.assert_array_equal(s2s_ad.grad(hypot_of)(np.zeros(3)), np.zeros(3))
    # and the Hessian of the norm where a component is 0 (not at 0) is right
    x = np.array([0.0, 0.6, 0.8])
    want = (np.eye(3) - np.outer(x, x)) / 1.0
    np.testing.assert_allclose(s2s_ad.hessian(norm_of)(x), want, atol=1e-12)


def nuclear_norm(x):
    return np.linalg.norm(x, ord="nuc")


def test_nuclear_norm_gradient_is_u_v_transposed():
    x = np.array([[0.3, -0.7], [0.1, 0.2]])
    u, _, vh = np.linalg.svd(x)
    np.testing.assert_allclose(s2s_ad.grad(nuclear_norm)(x), u @ vh, rtol=1e-12)


def vector_norm_of_a_string_order(x):
    return np.linalg.norm(x, ord="nuc", axis=0)


def test_unsupported_norm_is_refused_not_wrong():
    with pytest.raises(ValueError, match="ord"):
        s2s_ad.grad(vector_norm_of_a_string_order)(np.array([[0.3, -0.7], [0.1, 0.2]]))


def negative_matrix_power(a):
    return np.sum(np.linalg.matrix_power(a, -2))


def test_negative_matrix_power_is_refused_not_wrong():
    with pytest.raises(ValueError, match="inv"):
        s2s_ad.grad(negative_matrix_power)(np.eye(2) * 2.0)


def _solve_square_stack(a, b):
    return np.sum(np.linalg.solve(a, b) ** 2)


def test_solve_reads_b_as_the_installed_numpy_does():
    # a stack of 3 matrices and b of shape (3, 3): NumPy 1 reads b as 3 vectors, NumPy 2 as one matrix
    # for every matrix of the stack; the adjoint must read it the same way as the primal did
    rng = np.random.default_rng(4)
    a = rng.normal(size=(3, 3, 3)) + 3.0 * np.eye(3)
    b = rng.normal(size=(3, 3))
    assert_gradient_matches(_solve_square_stack, (a, b), wrt=(0, 1))
