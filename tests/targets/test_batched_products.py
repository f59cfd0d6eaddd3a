"""Vector mode through products linear in one operand (issue 34): ``np.einsum``, ``np.outer``,
``np.inner``, ``np.vdot``, ``np.kron``, ``np.tensordot``, ``@`` of stacks and ``np.dot`` beyond matrices take a
tangent of ``p`` directions in any one operand in one sweep; so do ``np.linalg.solve``'s right-hand side,
``np.cumprod`` and reductions with ``where=`` or ``initial=``.  Oracles: the same tangent code one direction at a time, central differences
of the function, and JAX's ``jacfwd`` where JAX is installed."""
import numpy as np
import pytest

import s2s_ad
from s2s_ad.api import batched as batched_module
from s2s_ad.api.gradient import _tangent_function
from s2s_ad.targets.batched.rules import Batched, NotBatched


def contractions(x):
    A = x[:6].reshape(2, 3)
    v = x[6:9]
    return np.einsum("ij,j->i", A, v) + np.einsum("aB,B", A, v) * np.einsum("ii->", A[:, :2])


def ellipsis_products(x):
    A = x[:8].reshape(2, 2, 2)
    B = np.cos(x[:8]).reshape(2, 2, 2)
    return np.ravel(np.einsum("...ij,...jk->...ik", A, B)) + np.einsum("i...,i->...", A, x[8:10]).ravel().sum()


def outer_and_inner(x):
    a, b = x[:3], np.sin(x[3:7])
    M = np.outer(a, b)
    return np.concatenate([np.ravel(M), np.inner(M, np.exp(b)), [np.vdot(a, a * 2.0)]])


def kron_and_tensordot(x):
    a = x[:2]
    B = x[2:6].reshape(2, 2)
    K = np.kron(a, B)  # ranks 1 and 2: a lifted to (1, 2) first
    T = np.tensordot(x[:8].reshape(2, 2, 2), B, axes=([1, 2], [0, 1]))
    return np.concatenate([np.ravel(K), T, np.tensordot(B, x[6:8], axes=1)])


FUNCTIONS = [contractions, ellipsis_products, outer_and_inner, kron_and_tensordot]
X = np.linspace(-0.9, 1.3, 10)


def _central_jacobian(f, x, h=1e-6):
    columns = []
    for i in range(x.size):
        e = np.zeros_like(x)
        e[i] = h
        columns.append((f(x + e) - f(x - e)) / (2 * h))
    return np.stack(columns, axis=-1)


@pytest.mark.parametrize("f", FUNCTIONS, ids=lambda f: f.__name__)
def test_one_batched_sweep_equals_one_direction_at_a_time(f):
    directions = np.random.default_rng(5).normal(size=(4, X.size))
    code = _tangent_function(f, ("x",), (X,))
    swept = batched_module.batched_sweep(code, (X,), (directions,), 4)
    assert swept is not None  # one sweep took every direction (None: one sweep per direction)
    for d in range(4):
        np.testing.assert_allclose(swept[1][d], code(X, directions[d])[1], rtol=1e-12, atol=1e-13)
        np.testing.assert_allclose(swept[1][d], s2s_ad.jvp(f, (X,), (directions[d],))[1], rtol=1e-12, atol=1e-13)


@pytest.mark.parametrize("f", FUNCTIONS, ids=lambda f: f.__name__)
def test_the_jacobian_agrees_with_central_differences(f):
    np.testing.assert_allclose(s2s_ad.jacobian(f)(X), _central_jacobian(f, X), rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("f", FUNCTIONS, ids=lambda f: f.__name__)
def test_the_jacobian_agrees_with_jax(f):
    jax = pytest.importorskip("jax")
    jax.config.update("jax_enable_x64", True)
    import jax.numpy as jnp
    source = {contractions: lambda x: jnp.einsum("ij,j->i", x[:6].reshape(2, 3), x[6:9])
              + jnp.einsum("aB,B", x[:6].reshape(2, 3), x[6:9]) * jnp.einsum("ii->", x[:6].reshape(2, 3)[:, :2]),
              ellipsis_products: lambda x: jnp.ravel(jnp.einsum("...ij,...jk->...ik", x[:8].reshape(2, 2, 2),
                                                                  jnp.cos(x[:8]).reshape(2, 2, 2)))
              + jnp.einsum("i...,i->...", x[:8].reshape(2, 2, 2), x[8:10]).ravel().sum(),
              outer_and_inner: lambda x: jnp.concatenate([
                  jnp.ravel(jnp.outer(x[:3], jnp.sin(x[3:7]))),
                  jnp.inner(jnp.outer(x[:3], jnp.sin(x[3:7])), jnp.exp(jnp.sin(x[3:7]))),
                  jnp.array([jnp.vdot(x[:3], x[:3] * 2.0)])]),
              kron_and_tensordot: lambda x: jnp.concatenate([
                  jnp.ravel(jnp.kron(x[:2], x[2:6].reshape(2, 2))),
                  jnp.tensordot(x[:8].reshape(2, 2, 2), x[2:6].reshape(2, 2), axes=([1, 2], [0, 1])),
                  jnp.tensordot(x[2:6].reshape(2, 2), x[6:8], axes=1)])}[f]
    np.testing.assert_allclose(f(X), np.asarray(source(jnp.asarray(X))), rtol=1e-13)
    np.testing.assert_allclose(s2s_ad.jacobian(f)(X), np.asarray(jax.jacfwd(source)(jnp.asarray(X))),
                               rtol=1e-12, atol=1e-13)


def test_a_product_of_two_tangents_is_refused_not_guessed():
    t = Batched(np.ones((3, 2)))
    for product in (np.outer, np.inner, np.kron, np.tensordot):
        with pytest.raises(NotBatched):
            product(t, t)
    with pytest.raises(NotBatched):
        np.einsum("i,i", t, t)


def stacked_products(x):
    A = x[:12].reshape(2, 2, 3)  # a stack of two 2x3 matrices
    B = np.sin(x[:6]).reshape(3, 2)
    v = x[3:6]
    return np.concatenate([np.ravel(A @ B), np.ravel(v @ A.reshape(2, 3, 2)), np.ravel(B.T @ A.transpose(0, 2, 1))])


@pytest.mark.parametrize("shapes", [((3,), (4, 3, 2)), ((4, 2, 3), (3,)), ((5, 1, 2, 3), (4, 3, 2)), ((2, 3), (1, 4, 3, 2))],
                         ids=str)
def test_matmul_of_stacks_takes_the_directions_of_either_operand(shapes):
    rng = np.random.default_rng(9)
    a, b = rng.normal(size=shapes[0]), rng.normal(size=shapes[1])
    ta, tb = rng.normal(size=(3,) + shapes[0]), rng.normal(size=(3,) + shapes[1])
    np.testing.assert_allclose((Batched(ta) @ b).data, np.stack([t @ b for t in ta]), rtol=1e-13)
    np.testing.assert_allclose((a @ Batched(tb)).data, np.stack([a @ t for t in tb]), rtol=1e-13)


def test_a_jacobian_through_stacked_matmuls_is_one_sweep_and_right():
    x = np.linspace(-1.0, 1.2, 12)
    code = _tangent_function(stacked_products, ("x",), (x,))
    directions = np.eye(12)
    swept = batched_module.batched_sweep(code, (x,), (directions,), 12)
    assert swept is not None
    np.testing.assert_allclose(swept[1].T, _central_jacobian(stacked_products, x), rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(s2s_ad.jacobian(stacked_products)(x), _central_jacobian(stacked_products, x),
                               rtol=1e-6, atol=1e-8)


MASK = np.array([[True, False, True], [False, True, True]])


def solves_and_reductions(x):
    A = np.array([[3.0, 1.0, 0.5], [0.2, 4.0, 1.0], [0.3, 0.1, 2.5]]) + np.diag(x[:3])
    M = x[3:9].reshape(2, 3)
    y = np.linalg.solve(A, x[:3] ** 2)  # a vector right-hand side
    Y = np.linalg.solve(A, M.T)  # columns
    return np.concatenate([y, np.ravel(Y), np.cumprod(M, axis=1).ravel(), np.cumprod(x[:4]),
                           [np.sum(M, where=MASK), np.mean(M ** 2, where=MASK), np.prod(M, where=MASK),
                            np.sum(x[:3], initial=x[9])],
                           np.sum(M, axis=0, where=MASK), np.dot(x[:8].reshape(2, 2, 2), x[8:10]).ravel(),
                           np.dot(M, x[:6].reshape(3, 2)).ravel(), np.dot(x[:8].reshape(2, 2, 2), M[:, :2]).ravel()])


@pytest.mark.parametrize("f", [solves_and_reductions], ids=lambda f: f.__name__)
def test_solves_cumulative_products_and_masked_reductions_sweep_batched_and_agree(f):
    x = np.linspace(0.3, 1.4, 10)
    code = _tangent_function(f, ("x",), (x,))
    swept = batched_module.batched_sweep(code, (x,), (np.eye(10),), 10)
    assert swept is not None  # one sweep
    expected = _central_jacobian(f, x)
    np.testing.assert_allclose(swept[1].T, expected, rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(s2s_ad.jacobian(f)(x), expected, rtol=1e-6, atol=1e-8)


def test_a_batched_pullback_through_solves_and_masked_reductions_is_one_sweep():
    def f(x):  # (np.dot beyond matrices pulls back one direction at a time: dot_grad_a has no batched form)
        A = np.array([[3.0, 1.0, 0.5], [0.2, 4.0, 1.0], [0.3, 0.1, 2.5]]) + np.diag(x[:3])
        M = x[3:9].reshape(2, 3)
        return np.concatenate([np.linalg.solve(A, x[:3] ** 2), np.ravel(np.linalg.solve(A, M.T)),
                               np.cumprod(M, axis=1).ravel(), np.cumprod(x[:4]),
                               [np.sum(M, where=MASK), np.mean(M ** 2, where=MASK), np.prod(M, where=MASK),
                                np.sum(x[:3], initial=x[9])], np.sum(M, axis=0, where=MASK)])
    x = np.linspace(0.3, 1.4, 10)
    expected = _central_jacobian(f, x)
    pullback = s2s_ad.vjp(f, x)[1]
    cotangents = np.random.default_rng(2).normal(size=(3, expected.shape[0]))
    np.testing.assert_allclose(pullback(cotangents, batched=True)[0], cotangents @ expected, rtol=1e-6, atol=1e-8)
    assert pullback._batches  # one reverse sweep took the three directions
