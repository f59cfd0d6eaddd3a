"""A helper given a tuple display of arrays of different shapes, ``layer((W, b), x)``: the helper is
specialised for a tuple of those kinds and its adjoint is a tuple of the items' adjoints (it was a
run-time ValueError in the helper's backward part)."""
import numpy as np
import pytest

import s2s_ad
import tuple_argument_functions as ta
from conftest import numeric_grad

RNG = np.random.default_rng(3)


@pytest.mark.parametrize("f, args", [
    (ta.two_layers, (RNG.normal(size=(3, 4)), RNG.normal(size=4), RNG.normal(size=(4, 2)), RNG.normal(size=2),
                     RNG.normal(size=(5, 3)))),
    (ta.array_and_number, (0.7, np.array([1.0, 2.0, 0.5]))),
    (ta.loop_in_helper, (RNG.normal(size=(3, 2)), RNG.normal(size=2), RNG.normal(size=(4, 3)))),
])
def test_helper_given_a_tuple_of_different_shapes(f, args):
    wrt = tuple(i for i, a in enumerate(args) if i < len(args) - 1 or f is ta.array_and_number)
    got = s2s_ad.grad(f, wrt=wrt)(*args)
    for i, g in zip(wrt, got):
        np.testing.assert_allclose(g, numeric_grad(f, args, i), rtol=1e-6, atol=1e-8)
        assert np.shape(g) == np.shape(args[i])
    _, pullback = s2s_ad.vjp(f, *args)
    for _ in range(2):
        adjoints = pullback(1.0)
        for i, g in zip(wrt, got):
            np.testing.assert_allclose(adjoints[i], g, rtol=1e-10)


@pytest.mark.slow
def test_hessian_through_a_tuple_argument_against_jax():
    jax = pytest.importorskip("jax")
    jax.config.update("jax_enable_x64", True)
    jnp = jax.numpy

    def two_layers(W1, b1, W2, b2, x):
        hidden = jnp.tanh(x @ W1 + b1)
        return jnp.sum(jnp.tanh(hidden @ W2 + b2) ** 2)

    args = (RNG.normal(size=(3, 4)), RNG.normal(size=4), RNG.normal(size=(4, 2)), RNG.normal(size=2),
            RNG.normal(size=(5, 3)))
    np.testing.assert_allclose(s2s_ad.hessian(ta.two_layers, wrt=1)(*args),
                               jax.hessian(two_layers, argnums=1)(*args), rtol=1e-9, atol=1e-12)
