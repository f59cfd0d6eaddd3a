"""Vector mode through the everyday rules given batched forms (issue 34): np.cumsum, np.sort, np.tile,
flips, np.diff, np.repeat, squeeze/swapaxes/moveaxis, diag/diagonal/trace/tril/triu, np.take and
take_along_axis, reductions along axes, np.hstack/vstack/column_stack, in functions written as users write them.

Each function's Jacobian (forward sweeps in chunks) and its pullback of every row at once (a batched
reverse sweep) are asserted batched, not run one direction per pass, and compared with central
differences and with JAX (``jax.jacfwd`` of a twin written with ``jax.numpy``); a Hessian through each
(forward over reverse, batched) with ``jax.hessian``; and the Numba backend's Jacobian with Python's."""
from __future__ import annotations

import numpy as np
import pytest

import s2s_ad
from s2s_ad.api import matrices
from s2s_ad.api.batched import batched_sweep
from s2s_ad.api.gradient import GradientFunction, _tangent_function


def running(x):
    return np.cumsum(np.sin(x)) * x + np.cumsum(x.reshape(2, 3) ** 2, axis=0).ravel()


def sorted_values(x):
    return np.sort(x * x[::-1]) + np.sort(x.reshape(2, 3), axis=0).ravel() * x


def tiled(x):
    return np.tile(np.tanh(x[:3]), 2) * x + np.tile(x.reshape(2, 3), (1, 2))[:, 1:4].ravel()


def flipped_and_differenced(x):
    m = x.reshape(2, 3)
    return np.concatenate([np.flip(x) * x, np.diff(x ** 2), np.diff(m * m, axis=0).ravel(), np.fliplr(m)[0] * x[:3]])


def repeated(x):
    return np.repeat(x[:3] ** 2, 2) * x + np.repeat(x.reshape(2, 3), [2, 1], axis=0)[1:].ravel()


def axes_moved(x):
    m = np.exp(x).reshape(1, 2, 3)
    return np.squeeze(m, 0).ravel() * x + np.swapaxes(m, 1, 2).ravel() + np.moveaxis(m, 0, -1).ravel() ** 2


def diagonals(x):
    m = x.reshape(2, 3)
    s = m.T @ m  # (3, 3)
    return np.concatenate([np.diag(x[:3] ** 2).ravel(), np.diagonal(s) * x[3:], np.tril(s).ravel(), np.triu(s, 1)[0],
                           np.diag(s, 1), [np.trace(s)]])


def taken(x):
    m = x.reshape(2, 3)
    order = np.array([[1, 0, 2], [2, 2, 0]])
    return np.concatenate([np.take(x, np.array([0, 2, 2, 5])) ** 2, np.take_along_axis(m, order, axis=1).ravel() * x,
                           np.take(m * m, np.array([2, 0]), axis=1).ravel()])


def reduced_along_axes(x):
    m = np.sin(x).reshape(2, 3)
    return np.concatenate([np.sum(m * x.reshape(2, 3), axis=0), np.mean(m ** 2, axis=1), np.max(m, axis=1) * x[:2],
                           np.sum(m, axis=1, keepdims=True).ravel()])


def stacked_up(x):
    m = x.reshape(2, 3)
    return np.concatenate([np.hstack([x[:2] ** 2, np.ones(1), x[3:]]), np.vstack([m[0], np.sin(m[1])]).ravel(),
                           np.column_stack([x[:3], x[3:] * x[0]]).ravel()])


def _twins(jnp):
    """The functions above written with ``jax.numpy``."""
    def running(x):
        return jnp.cumsum(jnp.sin(x)) * x + jnp.cumsum(x.reshape(2, 3) ** 2, axis=0).ravel()

    def sorted_values(x):
        return jnp.sort(x * x[::-1]) + jnp.sort(x.reshape(2, 3), axis=0).ravel() * x

    def tiled(x):
        return jnp.tile(jnp.tanh(x[:3]), 2) * x + jnp.tile(x.reshape(2, 3), (1, 2))[:, 1:4].ravel()

    def flipped_and_differenced(x):
        m = x.reshape(2, 3)
        return jnp.concatenate([jnp.flip(x) * x, jnp.diff(x ** 2), jnp.diff(m * m, axis=0).ravel(),
                                jnp.fliplr(m)[0] * x[:3]])

    def repeated(x):
        return jnp.repeat(x[:3] ** 2, 2) * x + jnp.repeat(x.reshape(2, 3), jnp.array([2, 1]), axis=0,
                                                          total_repeat_length=3)[1:].ravel()

    def axes_moved(x):
        m = jnp.exp(x).reshape(1, 2, 3)
        return jnp.squeeze(m, 0).ravel() * x + jnp.swapaxes(m, 1, 2).ravel() + jnp.moveaxis(m, 0, -1).ravel() ** 2

    def diagonals(x):
        m = x.reshape(2, 3)
        s = m.T @ m
        return jnp.concatenate([jnp.diag(x[:3] ** 2).ravel(), jnp.diagonal(s) * x[3:], jnp.tril(s).ravel(),
                                jnp.triu(s, 1)[0], jnp.diag(s, 1), jnp.array([jnp.trace(s)])])

    def taken(x):
        m = x.reshape(2, 3)
        order = jnp.array([[1, 0, 2], [2, 2, 0]])
        return jnp.concatenate([jnp.take(x, jnp.array([0, 2, 2, 5])) ** 2,
                                jnp.take_along_axis(m, order, axis=1).ravel() * x,
                                jnp.take(m * m, jnp.array([2, 0]), axis=1).ravel()])

    def reduced_along_axes(x):
        m = jnp.sin(x).reshape(2, 3)
        return jnp.concatenate([jnp.sum(m * x.reshape(2, 3), axis=0), jnp.mean(m ** 2, axis=1),
                                jnp.max(m, axis=1) * x[:2], jnp.sum(m, axis=1, keepdims=True).ravel()])
    def stacked_up(x):
        m = x.reshape(2, 3)
        return jnp.concatenate([jnp.hstack([x[:2] ** 2, jnp.ones(1), x[3:]]), jnp.vstack([m[0], jnp.sin(m[1])]).ravel(),
                                jnp.column_stack([x[:3], x[3:] * x[0]]).ravel()])
    return {f.__name__: f for f in (stacked_up, running, sorted_values, tiled, flipped_and_differenced, repeated, axes_moved,
                                    diagonals, taken, reduced_along_axes)}


FUNCTIONS = [running, sorted_values, tiled, flipped_and_differenced, repeated, axes_moved, diagonals, taken,
             reduced_along_axes, stacked_up]
X = np.array([0.3, -1.2, 0.7, 1.9, -0.4, 1.1])  # (distinct values: sort and max have one derivative here)


def _central(fn, x, eps=1e-6):
    columns = []
    for i in range(x.size):
        step = np.zeros_like(x)
        step[i] = eps
        columns.append((np.asarray(fn(x + step)) - np.asarray(fn(x - step))) / (2 * eps))
    return np.stack(columns, axis=-1)


def _sum_of_squares(fn):
    def objective(x):
        return np.sum(fn(x) ** 2)
    objective.__name__ = f"{fn.__name__}_squared"
    return objective


@pytest.mark.parametrize("fn", FUNCTIONS, ids=lambda f: f.__name__)
def test_jacobians_are_batched_and_equal_differences(fn, monkeypatch):
    monkeypatch.setattr(matrices, "FEWEST", 2)
    code = _tangent_function(fn, ("x",), (X,))
    swept = batched_sweep(code, (X,), (np.eye(X.size),), X.size)
    assert swept is not None, "the forward sweep ran one direction per pass"
    J = s2s_ad.jacobian(fn, chunk=4)(X)
    np.testing.assert_allclose(swept[1].T, J, rtol=1e-13, atol=1e-13)
    np.testing.assert_allclose(J, _central(fn, X), rtol=1e-6, atol=1e-7)
    out, vjp_fn = s2s_ad.vjp(fn, X)
    rows = vjp_fn(np.eye(out.size), batched=True)[0]
    assert vjp_fn._batches, "the reverse sweep ran one direction per pass"
    np.testing.assert_allclose(rows, J, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("fn", FUNCTIONS, ids=lambda f: f.__name__)
def test_hessians_through_them_are_batched_and_equal_differences_of_the_gradient(fn, monkeypatch):
    monkeypatch.setattr(matrices, "FEWEST", 2)
    objective = _sum_of_squares(fn)
    code = _tangent_function(GradientFunction(objective, "x", with_value=False), ("x",), (X,))
    assert batched_sweep(code, (X,), (np.eye(X.size),), X.size) is not None, "the Hessian's sweep was not batched"
    H = s2s_ad.hessian(objective, chunk=4)(X)
    np.testing.assert_allclose(H, _central(s2s_ad.grad(objective), X), rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("fn", FUNCTIONS, ids=lambda f: f.__name__)
def test_they_equal_jax(fn, monkeypatch):
    jax = pytest.importorskip("jax")
    jax.config.update("jax_enable_x64", True)
    import jax.numpy as jnp
    monkeypatch.setattr(matrices, "FEWEST", 2)
    twin = _twins(jnp)[fn.__name__]
    np.testing.assert_allclose(np.asarray(twin(jnp.asarray(X))), fn(X), rtol=1e-14, atol=1e-14)
    J = s2s_ad.jacobian(fn, chunk=4)(X)
    np.testing.assert_allclose(J, np.asarray(jax.jacfwd(twin)(jnp.asarray(X))), rtol=1e-12, atol=1e-12)
    out, vjp_fn = s2s_ad.vjp(fn, X)
    np.testing.assert_allclose(vjp_fn(np.eye(out.size), batched=True)[0], np.asarray(jax.jacrev(twin)(jnp.asarray(X))),
                               rtol=1e-12, atol=1e-12)
    H = s2s_ad.hessian(_sum_of_squares(fn), chunk=4)(X)
    want = jax.hessian(lambda x: jnp.sum(twin(x) ** 2))(jnp.asarray(X))
    np.testing.assert_allclose(H, np.asarray(want), rtol=1e-10, atol=1e-10)


@pytest.mark.parametrize("fn", FUNCTIONS, ids=lambda f: f.__name__)
def test_numba_jacobians_equal_python(fn):
    pytest.importorskip("numba")
    J = s2s_ad.jacobian(fn, chunk=4, backend="numba")(X)
    np.testing.assert_allclose(J, s2s_ad.jacobian(fn, chunk=4)(X), rtol=1e-12, atol=1e-12)
