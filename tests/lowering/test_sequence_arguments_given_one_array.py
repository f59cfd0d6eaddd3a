"""Issue 18: "np.vstack(u), np.hstack(u) and the other stack and concatenate functions given one array
(a sequence of its rows) instead of a list" gave a wrong gradient (``[1.649]`` instead of ``[3.297]``
at ``x = [0.5]``) or crashed with more rows.  NumPy iterates an array argument along its first axis;
the adjoint of such an argument must be one array, not a list of rows (a list added to the array's
other adjoints concatenated).  Oracles: the closed form, JAX, central differences.
"""
from __future__ import annotations

import builtins

import numpy as np
import pytest

import s2s_ad
from conftest import numeric_grad

jax = pytest.importorskip("jax")
jnp = jax.numpy
jax.config.update("jax_enable_x64", True)


def vstack_and_hstack_of_one_array(x):
    u = np.exp(x)
    return np.sum(np.vstack(u)) + np.sum(np.hstack(u))


def every_joining_function_of_a_matrix(x):
    U = np.outer(x, x)
    return (np.sum(np.vstack(U) * np.sin(U)) + np.sum(np.hstack(U) ** 3) + np.sum(np.concatenate(U) ** 2)
            + np.sum(np.concatenate(U, axis=None) * np.arange(9.0)) + np.sum(np.stack(U, axis=1) ** 2)
            + np.sum(np.dstack(U) ** 3) + np.sum(np.column_stack(U) * U) + np.sum(sum(U) ** 2)
            + np.sum(np.linalg.multi_dot(np.stack([U, U, U])) ** 2) + np.sum(np.hstack(x) ** 3))


def every_joining_function_of_a_matrix_jax(x):
    U = jnp.outer(x, x)
    return (jnp.sum(jnp.vstack(U) * jnp.sin(U)) + jnp.sum(jnp.hstack(U) ** 3) + jnp.sum(jnp.concatenate(U) ** 2)
            + jnp.sum(jnp.concatenate(U, axis=None) * jnp.arange(9.0)) + jnp.sum(jnp.stack(U, axis=1) ** 2)
            + jnp.sum(jnp.dstack(U) ** 3) + jnp.sum(jnp.column_stack(U) * U) + jnp.sum(builtins.sum(U) ** 2)
            + jnp.sum(jnp.linalg.multi_dot(jnp.stack([U, U, U])) ** 2) + jnp.sum(jnp.hstack(x) ** 3))


def joined_rows(x):  # a vector of 12 numbers from 3 inputs: jacobian runs forward mode
    U = np.outer(x, np.exp(x))
    return np.concatenate([np.ravel(np.vstack(U)) * 2.0, np.hstack(np.sin(x)), np.sum(np.stack(U, axis=1), axis=0)])


def joined_rows_jax(x):
    U = jnp.outer(x, jnp.exp(x))
    return jnp.concatenate([jnp.ravel(jnp.vstack(U)) * 2.0, jnp.hstack(jnp.sin(x)), jnp.sum(jnp.stack(U, axis=1), axis=0)])


@pytest.mark.parametrize("x", [np.array([0.5]), np.array([0.5, -0.2, 0.9])], ids=["one row", "three rows"])
def test_vstack_and_hstack_of_one_array_give_the_gradient_of_both(x):
    want = 2.0 * np.exp(x)  # each stack holds every exp(x_i) once
    np.testing.assert_allclose(s2s_ad.grad(vstack_and_hstack_of_one_array)(x), want, rtol=1e-12)
    _, directional = s2s_ad.jvp(vstack_and_hstack_of_one_array, (x,), (np.ones_like(x),))
    np.testing.assert_allclose(directional, np.sum(want), rtol=1e-12)
    np.testing.assert_allclose(s2s_ad.hessian(vstack_and_hstack_of_one_array)(x), np.diag(want), rtol=1e-12)


def test_stack_and_concatenate_functions_given_one_array_match_jax_in_every_mode():
    x = np.array([0.3, -0.5, 0.7])
    f, f_jax = every_joining_function_of_a_matrix, every_joining_function_of_a_matrix_jax
    np.testing.assert_allclose(f(x), f_jax(x), rtol=1e-12)
    want = np.asarray(jax.grad(f_jax)(x))
    np.testing.assert_allclose(s2s_ad.grad(f)(x), want, rtol=1e-10)
    np.testing.assert_allclose(want, numeric_grad(f, (x,), 0), rtol=1e-6)
    direction = np.array([0.2, 1.0, -0.4])
    _, directional = s2s_ad.jvp(f, (x,), (direction,))
    np.testing.assert_allclose(directional, want @ direction, rtol=1e-10)
    np.testing.assert_allclose(s2s_ad.jacobian(joined_rows)(x), np.asarray(jax.jacfwd(joined_rows_jax)(x)),
                               rtol=1e-12)
    np.testing.assert_allclose(s2s_ad.hessian(f)(x), np.asarray(jax.hessian(f_jax)(x)), rtol=1e-9, atol=1e-10)
