"""Rules added for issue 14 (np.ptp, np.nansum, np.nanmean, np.fft.fftshift/ifftshift, scipy.special),
in functions written as a user would, against finite differences and JAX where it is installed."""
import numpy as np
import pytest

import s2s_ad
from conftest import assert_gradient_matches

special = pytest.importorskip("scipy.special")


def spread_penalty(x):
    return np.sum(np.ptp(x, axis=1) ** 2) + np.ptp(x)


def robust_mean_loss(x, scale):
    # x has missing values (NaN); a NaN passed through other arithmetic first would make its derivative
    # NaN too (0 * NaN), as in every AD system, so the NaN reductions see x itself
    return scale * np.nansum(x) + np.sum(np.nanmean(x, axis=0) ** 2)


def centred_spectrum_energy(x):
    shifted = np.fft.fftshift(x, axes=1)
    return np.sum(np.fft.ifftshift(shifted * np.arange(1.0, 5.0)) * x)


def softmax_cross_entropy(w, x, y):
    logits = x @ w
    return -np.sum(y * special.log_softmax(logits, axis=1)) + 0.1 * np.sum(special.logsumexp(logits, axis=0))


def test_nan_reductions_ignore_missing_values_to_second_order():
    rng = np.random.default_rng(7)
    x = rng.normal(size=(4, 3))
    x[1, 2] = x[3, 0] = np.nan
    assert_gradient_matches(robust_mean_loss, (x, 0.5), wrt=(0, 1))
    g = s2s_ad.grad(robust_mean_loss)(x, 0.5)
    assert g[1, 2] == 0.0 and g[3, 0] == 0.0  # a missing value carries no derivative
    direction = rng.normal(size=x.shape)
    _, along = s2s_ad.jvp(robust_mean_loss, (x, 0.5), (direction, 0.0))
    np.testing.assert_allclose(along, np.sum(np.where(np.isnan(x), 0.0, g) * direction), rtol=1e-10)
    h = s2s_ad.hessian(robust_mean_loss)(x, 0.5)  # d2/dx2 of sum(nanmean(x, 0)**2): 2 / n_j**2 within column j
    present = ~np.isnan(x)
    counts = present.sum(axis=0)
    want = np.einsum("ij,kl,jl->ijkl", present, present, np.diag(2.0 / counts ** 2))
    np.testing.assert_allclose(h, want, atol=1e-12)


def test_ptp_and_fft_shifts_against_jax():
    jax = pytest.importorskip("jax")
    jax.config.update("jax_enable_x64", True)
    jnp = jax.numpy
    rng = np.random.default_rng(8)
    x = rng.normal(size=(3, 4))
    for f, jf in ((spread_penalty, lambda x: jnp.sum(jnp.ptp(x, axis=1) ** 2) + jnp.ptp(x)),
                  (centred_spectrum_energy,
                   lambda x: jnp.sum(jnp.fft.ifftshift(jnp.fft.fftshift(x, axes=1) * jnp.arange(1.0, 5.0)) * x))):
        np.testing.assert_allclose(s2s_ad.grad(f)(x), jax.grad(jf)(x), rtol=1e-10, atol=1e-12)
        np.testing.assert_allclose(s2s_ad.hessian(f)(x), jax.hessian(jf)(x), rtol=1e-8, atol=1e-10)


@pytest.mark.slow
def test_scipy_special_in_a_classifier_against_jax():
    jax = pytest.importorskip("jax")
    jax.config.update("jax_enable_x64", True)
    jnp, jsp = jax.numpy, pytest.importorskip("jax.scipy.special")
    rng = np.random.default_rng(9)
    w, x = rng.normal(size=(3, 4)), rng.normal(size=(6, 3))
    y = np.eye(4)[[0, 1, 2, 3, 1, 0]]

    def reference(w):
        logits = x @ w
        return -jnp.sum(y * jax.nn.log_softmax(logits, axis=1)) + 0.1 * jnp.sum(jsp.logsumexp(logits, axis=0))
    np.testing.assert_allclose(s2s_ad.grad(softmax_cross_entropy)(w, x, y), jax.grad(reference)(w), rtol=1e-10)
    np.testing.assert_allclose(s2s_ad.hessian(softmax_cross_entropy)(w, x, y), jax.hessian(reference)(w),
                               rtol=1e-8, atol=1e-12)


def trimmed_top(x):
    # the two largest of each row, weighted: np.partition leaves their order unspecified, so sum them
    top = np.partition(x, -2, axis=1)[:, -2:]
    return np.sum(top ** 2) + np.sum(np.partition(x.ravel(), 3)[:3])  # and the three smallest of all


def test_partition_matches_finite_differences_and_jax():
    rng = np.random.default_rng(10)
    x = rng.permutation(12).reshape(3, 4) * 0.37 + rng.normal(scale=0.01, size=(3, 4))  # distinct values
    assert_gradient_matches(trimmed_top, (x,))
    jax = pytest.importorskip("jax")
    jax.config.update("jax_enable_x64", True)
    jnp = jax.numpy
    want = jax.grad(lambda x: jnp.sum(jnp.sort(x, axis=1)[:, -2:] ** 2) + jnp.sum(jnp.sort(x.ravel())[:3]))(x)
    np.testing.assert_allclose(s2s_ad.grad(trimmed_top)(x), want, rtol=1e-12)
