"""Vector forward mode on the Python backend: a Jacobian's chunks, a Hessian's, a batched ``jvp`` and a sparse
Jacobian's colours run the tangent code's vector version (``s2s_ad/ad/vector``, every tangent with the
directions on a leading axis, run as NumPy), where it has one; the tangent code with its tangents wrapped
(``api/batched.py``) where it has none.

Oracles: one pass per element (``chunk=1``: the one-direction code), central differences, and the
one-direction ``jvp`` per direction.  Each test says which sweep ran, so a form that silently stops being
chosen fails here.  Helpers are not inlined on this backend: the vector code calls the helper's own vector
version (``t_helper.vector``), and a helper that hands back its argument must not join two tangents.
"""
from __future__ import annotations

import numpy as np
import pytest

import s2s_ad
from conftest import optional_import, programs_from_source
from s2s_ad.api import forward_mode, matrices, sparse
from s2s_ad.targets.target import NUMPY

PROGRAMS = programs_from_source("python_vector_program_", """
    import numpy as np

    def dense_map(x, w):
        return np.tanh(w @ x) + x ** 2 * np.sum(np.sin(x))

    def energy(x, w):
        return np.sum(np.tanh(w @ x) ** 2) + np.sum(x ** 4) * np.mean(x)

    def same(value):
        # (a loop: too long to lower in place, so a helper of its own, called from the vector code)
        for _ in range(2):
            pass
        return value

    def layer(x, w):
        h = w @ x
        for _ in range(2):
            pass
        return np.tanh(h)

    def number_through_a_helper(x, w):
        # a number's tangent handed back by a helper (the helper's own vector code), the number then changed
        # while the helper's result is still to be read
        s = np.sum(x * x)
        u = 0.0
        for i in range(3):
            u = same(s)
            s = s * x[i] + 1.0
        return u * layer(x, w) + s

    def array_through_a_helper(x, w):
        # the helper hands back its argument: a write through the result is a write into the argument
        y = x * 2.0
        z = same(y)
        z[0] = z[0] * x[1]
        return y + np.sum(z) * (w @ x)

    def joined_and_rolled(x):
        a = np.stack([x, x ** 2], axis=-1)
        b = np.expand_dims(np.sin(x), 0) * 2.0
        c = np.concatenate((np.roll(a, 2, axis=0).ravel(), b[0], np.roll(x, -1, 0)), axis=0)
        return np.stack((c, c * 3.0), axis=1)

    def brusselator(y):
        n = 3
        u = y[:n * n].reshape(n, n)
        v = y[n * n:].reshape(n, n)
        lap_u = np.roll(u, 1, axis=0) + np.roll(u, -1, axis=0) + np.roll(u, 1, axis=1) + np.roll(u, -1, axis=1) - 4.0 * u
        lap_v = np.roll(v, 1, axis=0) + np.roll(v, -1, axis=0) + np.roll(v, 1, axis=1) + np.roll(v, -1, axis=1) - 4.0 * v
        du = 1.0 + u * u * v - 4.4 * u + 10.0 * lap_u
        dv = 3.4 * u - u * u * v + 10.0 * lap_v
        return np.concatenate([du.ravel(), dv.ravel()])

    def tridiagonal(u):
        r = 2.0 * u + u ** 3
        r[1:] -= u[:-1]
        r[:-1] -= u[1:]
        return r
""")

SCIPY_SPARSE = optional_import("scipy.sparse")  # (a sparse Jacobian's result; SciPy is an extra)
RNG = np.random.default_rng(20261205)
N = 9
X, W = RNG.normal(size=N), RNG.normal(size=(N, N)) / 3


def _sweeps(monkeypatch) -> list[str]:
    """Which sweep took each chunk: "vector" (the vector code) or "wrapped" (tangents wrapped at run time)."""
    ran: list[str] = []
    vector, wrapped = type(NUMPY).vector_sweep, matrices.batched_sweep

    def vector_spy(*args):
        result = vector(*args)
        if result is not None:
            ran.append("vector")
        return result

    def wrapped_spy(*args):
        ran.append("wrapped")
        return wrapped(*args)
    monkeypatch.setattr(type(NUMPY), "vector_sweep", vector_spy)
    for module in (matrices, forward_mode, sparse):
        monkeypatch.setattr(module, "batched_sweep", wrapped_spy)
    return ran


def _differences(f, args, wrt, step=1e-6):
    x = args[wrt]
    columns = []
    for i in range(x.size):
        e = np.zeros(x.size)
        e[i] = step
        plus = args[:wrt] + ((x + e.reshape(x.shape)),) + args[wrt + 1:]
        minus = args[:wrt] + ((x - e.reshape(x.shape)),) + args[wrt + 1:]
        columns.append((np.asarray(f(*plus)) - np.asarray(f(*minus))) / (2 * step))
    return np.stack(columns, axis=-1)


@pytest.mark.parametrize("name", ["dense_map", "number_through_a_helper", "array_through_a_helper"])
def test_a_jacobian_runs_the_vector_code_and_equals_one_pass_per_element(name, monkeypatch):
    f = getattr(PROGRAMS, name)
    ran = _sweeps(monkeypatch)
    J = s2s_ad.jacobian(f, chunk=4)(X, W)
    assert ran == ["vector", "vector"]  # chunks of 4, 4 and 1: the last, of one direction, the one-direction code
    monkeypatch.undo()
    np.testing.assert_allclose(J, s2s_ad.jacobian(f, chunk=1)(X, W), rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(J, _differences(f, (X, W), 0), rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("name, size", [("joined_and_rolled", 7), ("brusselator", 18)])
def test_joins_rolls_and_new_axes_run_the_vector_code(name, size, monkeypatch):
    """``np.concatenate``/``np.stack`` of tangents, ``np.roll`` and ``np.expand_dims`` along a constant axis:
    the same of each direction's, along the axis after the directions'."""
    f = getattr(PROGRAMS, name)
    x = RNG.uniform(size=size)
    ran = _sweeps(monkeypatch)
    J = s2s_ad.jacobian(f)(x)
    assert ran == ["vector"]
    monkeypatch.undo()
    np.testing.assert_allclose(J, s2s_ad.jacobian(f, chunk=1)(x), rtol=1e-13, atol=1e-13)
    np.testing.assert_allclose(J, _differences(f, (x,), 0), rtol=1e-6, atol=1e-6)


def test_a_hessian_calls_the_gradients_vector_code_and_equals_one_pass_per_element(monkeypatch):
    """Forward over the gradient: the gradient's code is a helper here, its vector version called."""
    ran = _sweeps(monkeypatch)
    H = s2s_ad.hessian(PROGRAMS.energy)(X, W)
    assert ran == ["vector"]
    monkeypatch.undo()
    np.testing.assert_allclose(H, s2s_ad.hessian(PROGRAMS.energy, chunk=1)(X, W), rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(H, _differences(s2s_ad.grad(PROGRAMS.energy), (X, W), 0), rtol=1e-6, atol=1e-6)
    text = s2s_ad.hessian(PROGRAMS.energy).source_for(X, W)
    assert "t_d_energy.vector(x, w, 1.0, t_x)" in text
    assert "def jvp_d_energy_directions(" in text and "def jvp_gradient_energy_directions(" in text


def test_a_batched_jvp_runs_the_vector_code_and_leaves_its_arguments(monkeypatch):
    ran = _sweeps(monkeypatch)
    tangents = RNG.normal(size=(5, N))
    x, w = X.copy(), W.copy()
    value, swept = s2s_ad.jvp(PROGRAMS.array_through_a_helper, (x, w), (tangents, None), batched=True)
    assert ran == ["vector"]
    assert np.array_equal(x, X) and np.array_equal(w, W)
    np.testing.assert_allclose(value, PROGRAMS.array_through_a_helper(X.copy(), W), rtol=1e-14)
    for d in range(5):
        one = s2s_ad.jvp(PROGRAMS.array_through_a_helper, (x, w), (tangents[d], None))[1]
        np.testing.assert_allclose(swept[d], one, rtol=1e-12, atol=1e-12)


def test_float32_tangents_keep_the_wrapped_sweep_and_their_dtype(monkeypatch):
    """The vector code takes float64 seeds only (its zeros are float64): other tangents go the wrapped way."""
    ran = _sweeps(monkeypatch)
    tangents = RNG.normal(size=(3, N)).astype(np.float32)
    _, swept = s2s_ad.jvp(PROGRAMS.dense_map, (X, W), (tangents, None), batched=True)
    assert ran == ["wrapped"]
    monkeypatch.undo()
    for d in range(3):
        one = s2s_ad.jvp(PROGRAMS.dense_map, (X, W), (tangents[d], None))[1]
        assert swept[d].dtype == one.dtype
        np.testing.assert_allclose(swept[d], one, rtol=1e-6)


@pytest.mark.skipif(SCIPY_SPARSE is None, reason="scipy is not installed (pip install scipy): sparse Jacobians need it")
def test_a_sparse_jacobians_colours_are_one_vector_run(monkeypatch):
    ran = _sweeps(monkeypatch)
    u = RNG.normal(size=40)
    J = s2s_ad.jacobian(PROGRAMS.tridiagonal, sparse=True)(u)
    assert ran == ["vector"]
    monkeypatch.undo()
    np.testing.assert_allclose(J.toarray(), s2s_ad.jacobian(PROGRAMS.tridiagonal, chunk=1)(u), rtol=1e-13, atol=0)
