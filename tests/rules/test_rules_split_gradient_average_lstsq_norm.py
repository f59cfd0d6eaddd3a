"""Rules added for issue 14 (the split family, np.gradient, np.average, np.linalg.lstsq, and
np.linalg.norm of singular values), in functions written as a user would, against JAX to second
order and finite differences."""
import numpy as np
import pytest

import s2s_ad
from conftest import assert_gradient_matches, numeric_grad


def halves_interaction(x):
    top, bottom = np.split(x, 2, axis=-2)
    left, right = np.hsplit(x, [1])
    pieces = np.array_split(x, 3, axis=1)  # 5 columns: pieces of 2, 2 and 1
    return np.sum(top * bottom) + np.sum(np.tanh(left) * right[:, :1]) + np.sum(pieces[2] ** 3) - np.sum(pieces[0])


def image_smoothness(u):
    dy, dx = np.gradient(u, 0.5)
    along = np.gradient(u, axis=-1)
    return np.sum(dx ** 2 + dy ** 2) + np.sum(np.sin(along))


def curvature_energy(u, coords):
    slope = np.gradient(u, coords, axis=0, edge_order=2)  # JAX has no edge_order 2: finite differences
    return np.sum(slope ** 2 * u)


def weighted_scores(x, w):
    return np.sum(np.average(x ** 2, axis=1, weights=w) ** 2) + np.average(np.cos(x), weights=np.abs(x) + 1.0)


def regression_loss(a, b):
    coef, residuals, rank, sv = np.linalg.lstsq(a, b, rcond=None)
    return np.sum(coef ** 2) + 0.5 * np.sum(residuals) + np.sum(sv ** 3)


def spectral_penalty(w):
    return np.linalg.norm(w, 2) ** 2 + np.linalg.norm(w, "nuc") - np.linalg.norm(w, -2) \
        + np.sum(np.linalg.norm(np.stack([w, 2.0 * w]), "nuc", axis=(1, 2)))


def _jax():
    jax = pytest.importorskip("jax")
    jax.config.update("jax_enable_x64", True)
    return jax, jax.numpy


def _jax_versions(jnp):
    def halves(x):
        top, bottom = jnp.split(x, 2, axis=-2)
        left, right = jnp.hsplit(x, [1])
        pieces = jnp.array_split(x, 3, axis=1)
        return jnp.sum(top * bottom) + jnp.sum(jnp.tanh(left) * right[:, :1]) + jnp.sum(pieces[2] ** 3) \
            - jnp.sum(pieces[0])

    def smoothness(u):
        dy, dx = jnp.gradient(u, 0.5)
        along = jnp.gradient(u, axis=-1)  # JAX has edge_order 1 only: edge_order=2 is checked below
        return jnp.sum(dx ** 2 + dy ** 2) + jnp.sum(jnp.sin(along))

    def regression(a, b):
        coef, residuals, rank, sv = jnp.linalg.lstsq(a, b, rcond=None)
        return jnp.sum(coef ** 2) + 0.5 * jnp.sum(residuals) + jnp.sum(sv ** 3)

    def spectral(w):
        return jnp.linalg.norm(w, 2) ** 2 + jnp.linalg.norm(w, "nuc") - jnp.linalg.norm(w, -2) \
            + jnp.sum(jnp.linalg.norm(jnp.stack([w, 2.0 * w]), "nuc", axis=(1, 2)))

    return halves, smoothness, regression, spectral


@pytest.mark.slow
def test_split_gradient_lstsq_and_norm_match_jax_to_second_order():
    jax, jnp = _jax()
    halves, smoothness, regression, spectral = _jax_versions(jnp)
    rng = np.random.default_rng(14)
    for f, jf, arg in ((halves_interaction, halves, rng.normal(size=(4, 5))),
                       (image_smoothness, smoothness, rng.normal(size=(4, 5))),
                       (spectral_penalty, spectral, rng.normal(size=(4, 3)))):
        np.testing.assert_allclose(s2s_ad.grad(f)(arg), jax.grad(jf)(arg), rtol=1e-9, atol=1e-11)
        np.testing.assert_allclose(s2s_ad.hessian(f)(arg), jax.hessian(jf)(arg), rtol=1e-7, atol=1e-9)
    a = rng.normal(size=(6, 3))
    b = rng.normal(size=(6, 2))
    got = s2s_ad.grad(regression_loss, wrt=(0, 1))(a, b)
    want = jax.grad(regression, argnums=(0, 1))(a, b)
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, rtol=1e-9, atol=1e-11)
    got = s2s_ad.hessian(regression_loss, wrt=(0, 1))(a, b)
    want = jax.hessian(regression, argnums=(0, 1))(a, b)
    for i in (0, 1):
        for j in (0, 1):
            np.testing.assert_allclose(got[i][j], want[i][j], rtol=1e-7, atol=1e-9)


def test_average_matches_jax_and_weights_get_their_gradient():
    jax, jnp = _jax()
    rng = np.random.default_rng(15)
    x = rng.normal(size=(3, 4))
    w = rng.uniform(0.5, 1.5, size=4)

    def scores(x, w):
        return jnp.sum(jnp.average(x ** 2, axis=1, weights=w) ** 2) + jnp.average(jnp.cos(x), weights=jnp.abs(x) + 1.0)

    got = s2s_ad.grad(weighted_scores, wrt=(0, 1))(x, w)
    want = jax.grad(scores, argnums=(0, 1))(x, w)
    for g, v in zip(got, want):
        np.testing.assert_allclose(g, v, rtol=1e-9, atol=1e-11)
    np.testing.assert_allclose(s2s_ad.hessian(weighted_scores, wrt=1)(x, w), jax.hessian(scores, argnums=1)(x, w),
                               rtol=1e-7, atol=1e-9)


def test_edge_order_two_and_coordinates_against_finite_differences():
    rng = np.random.default_rng(16)
    u = rng.normal(size=(6, 3))
    coords = np.array([0.0, 0.4, 0.7, 1.3, 1.5, 2.2])
    # by u only: the coordinates have no derivative rule, and a jvp moving them is refused
    np.testing.assert_allclose(s2s_ad.grad(curvature_energy)(u, coords), numeric_grad(curvature_energy, (u, coords), 0),
                               rtol=1e-6, atol=1e-8)
    with pytest.raises(s2s_ad.TransformError, match="spacing"):
        s2s_ad.jvp(curvature_energy, (u, coords), (np.ones_like(u), np.ones_like(coords)))
    h = s2s_ad.hessian(curvature_energy)(u, coords)
    direction = rng.normal(size=u.shape)
    eps = 1e-5
    g = s2s_ad.grad(curvature_energy)
    want = (g(u + eps * direction, coords) - g(u - eps * direction, coords)) / (2 * eps)
    np.testing.assert_allclose(np.tensordot(h, direction, axes=2), want, rtol=1e-6, atol=1e-8)


def ragged_pieces_in_a_loop(x, k):
    total = 0.0
    for piece in np.array_split(x, k):
        total = total + np.sum(piece ** 2)
    return total


def test_pieces_of_unknown_count_are_never_a_wrong_number():
    x = np.arange(1.0, 7.0)
    np.testing.assert_allclose(s2s_ad.grad(ragged_pieces_in_a_loop)(x, 3), 2 * x)  # equal pieces
    # ragged pieces read in a loop: each piece's adjoint is its own (an array of objects), not stacked
    for k in (4, 5):
        np.testing.assert_allclose(s2s_ad.grad(ragged_pieces_in_a_loop)(x, k), 2 * x, rtol=1e-12)


def reversed_halves(x, y):
    a, b = np.split(x, 2)
    pieces = np.split(x, 2)[::-1] + [y]  # a slice of the pieces, then joined with another list
    return np.sum(np.concatenate(pieces) * np.arange(7.0)) + np.sum(a * b) + np.sum(np.vstack(np.dsplit(
        np.reshape(x, (1, 2, 3)), [1])[1]) ** 2)


def test_pieces_sliced_and_joined_match_finite_differences():
    rng = np.random.default_rng(17)
    assert_gradient_matches(reversed_halves, (rng.normal(size=6), np.array([0.5])), wrt=(0, 1))
