"""Higher derivatives: each order is forward mode over the code the order below generated.

Oracles: closed forms, and central differences of the order below (which is
itself checked against finite differences elsewhere).
"""
import math

import numpy as np
import pytest

import s2s_ad
from conftest import numeric_grad
import call_functions as calls
import control_flow_functions as cf

RNG = np.random.default_rng(5)


def sin_cubed(x):
    return math.sin(x) * x ** 3


def derivatives_of_sin_cubed(x):
    s, c = math.sin(x), math.cos(x)
    return (c * x ** 3 + 3 * x ** 2 * s,
            -s * x ** 3 + 6 * x ** 2 * c + 6 * x * s,
            -c * x ** 3 - 9 * x ** 2 * s + 18 * x * c + 6 * s,
            s * x ** 3 - 12 * x ** 2 * c - 36 * x * s + 24 * c)


def rosenbrock(v):
    return np.sum(100.0 * (v[1:] - v[:-1] ** 2) ** 2 + (1.0 - v[:-1]) ** 2)


def rosenbrock_hessian(v):
    n = len(v)
    h = np.zeros((n, n))
    for i in range(n - 1):
        h[i, i] += 1200.0 * v[i] ** 2 - 400.0 * v[i + 1] + 2.0
        h[i + 1, i + 1] += 200.0
        h[i, i + 1] += -400.0 * v[i]
        h[i + 1, i] += -400.0 * v[i]
    return h


def tanh_layer_loss(w, x):
    return np.sum(np.tanh(x @ w) ** 2)


def stencil_energy(u):
    out = np.zeros(len(u))
    for i in range(1, len(u) - 1):
        out[i] = u[i - 1] - 2.0 * u[i] + u[i + 1]
    return np.sum(out * out * u)


def mixed(x, w):
    return x ** 2 * np.sum(w ** 3)


@pytest.mark.parametrize("x", [0.7, -1.3])
def test_fourth_order_matches_the_closed_form(x):
    d = s2s_ad.grad(sin_cubed)
    got = []
    for _ in range(4):
        got.append(d(x))
        d = s2s_ad.grad(d)
    assert got == pytest.approx(derivatives_of_sin_cubed(x), rel=1e-12)


@pytest.mark.parametrize("n", [1, 2, 5])
def test_recursion_to_third_order(n):
    d3 = s2s_ad.grad(s2s_ad.grad(s2s_ad.grad(calls.power)))
    assert d3(1.3, n + 2) == pytest.approx((n + 2) * (n + 1) * n * 1.3 ** (n - 1))


@pytest.mark.parametrize("f, args", [
    (cf.logistic_loop, (3.1, 0.2, 6)),           # a loop with a tape
    (calls.calls_inside_loop, (0.3, 4)),         # helpers with loops, called in a loop
    (cf.with_continue_and_break, (0.7, 10)),     # early exits
    (cf.while_halving, (5.0,)),                  # a while loop
    (cf.swap_in_a_loop, (0.5, 4)),
])
def test_second_and_third_order_through_control_flow(f, args):
    d1 = s2s_ad.grad(f)
    d2 = s2s_ad.grad(d1)
    d3 = s2s_ad.grad(d2)
    assert d2(*args) == pytest.approx(numeric_grad(d1, args, 0, eps=1e-5), rel=1e-5, abs=1e-7)
    assert d3(*args) == pytest.approx(numeric_grad(d2, args, 0, eps=1e-4), rel=1e-4, abs=1e-6)


def test_hessian_of_rosenbrock():
    v = np.array([1.2, 0.8, 1.1, -0.4])
    np.testing.assert_allclose(s2s_ad.hessian(rosenbrock)(v), rosenbrock_hessian(v), rtol=1e-12)


@pytest.mark.parametrize("f, args", [
    (tanh_layer_loss, (RNG.normal(size=(3, 2)), RNG.normal(size=(4, 3)))),  # matmul adjoints, differentiated
    (stencil_energy, (RNG.normal(size=5),)),                                # writes into a local array
])
def test_hessian_matches_differences_of_the_gradient(f, args):
    h = s2s_ad.hessian(f)(*args)
    x = args[0]
    assert h.shape == x.shape + x.shape
    g = s2s_ad.grad(f)
    for index in np.ndindex(x.shape):
        step = np.zeros_like(x)
        step[index] = 1e-6
        column = (g(x + step, *args[1:]) - g(x - step, *args[1:])) / 2e-6
        np.testing.assert_allclose(h[(...,) + index], column, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(h, np.swapaxes(h.reshape(x.size, x.size), 0, 1).reshape(h.shape), rtol=1e-9)


def test_hessian_blocks_by_several_arguments():
    x, w = 0.8, RNG.normal(size=3)
    (h_xx, h_xw), (h_wx, h_ww) = s2s_ad.hessian(mixed, wrt=(0, 1))(x, w)
    assert h_xx == pytest.approx(2 * np.sum(w ** 3))
    np.testing.assert_allclose(h_xw, 6 * x * w ** 2)
    np.testing.assert_allclose(h_wx, 6 * x * w ** 2)
    np.testing.assert_allclose(h_ww, np.diag(6 * x ** 2 * w))


def test_mixed_partial_by_an_array_and_jvp_of_a_gradient():
    x, w = 0.8, RNG.normal(size=3)
    np.testing.assert_allclose(s2s_ad.grad(s2s_ad.grad(mixed, wrt=0), wrt=1)(x, w), 6 * x * w ** 2)
    v = RNG.normal(size=4)
    u = np.array([1.2, 0.8, 1.1, -0.4])
    _, hv = s2s_ad.jvp(s2s_ad.grad(rosenbrock), (u,), (v,))
    np.testing.assert_allclose(hv, rosenbrock_hessian(u) @ v, rtol=1e-12)
    value, second = s2s_ad.value_and_grad(s2s_ad.grad(sin_cubed))(0.7)
    assert (value, second) == pytest.approx(derivatives_of_sin_cubed(0.7)[:2])


def test_what_cannot_be_differentiated_again_is_refused():
    with pytest.raises(TypeError, match="not a number.*hessian"):
        s2s_ad.grad(s2s_ad.grad(rosenbrock))(np.ones(3))
    with pytest.raises(TypeError, match="returns a pair"):
        s2s_ad.grad(s2s_ad.value_and_grad(sin_cubed))
    with pytest.raises(TypeError, match="reverse over reverse"):
        s2s_ad.vjp(s2s_ad.grad(sin_cubed), 0.7)


def test_each_order_is_readable_generated_code():
    text = s2s_ad.grad(s2s_ad.grad(sin_cubed)).source_for(0.7)
    assert "def jvp_gradient_sin_cubed(x, t_x):" in text
    assert "def derivative_gradient_sin_cubed(x):" in text


def multi_dot_read_in_a_loop(x):
    W = np.outer(x, x) + 1.0
    M = np.eye(3) * 3.0
    for i in range(3):
        M[i, i] += 0.2 * (np.linalg.multi_dot([np.outer(x, x[:2]), W[:2], W]))[i, 0] ** 2
    return np.sum(M ** 2)


def test_the_tangent_of_a_rule_giving_one_array_per_operand_is_copied_item_by_item():
    # Found by the shared generator gen4 (seed 8000389): the adjoint of multi_dot gives a list of
    # arrays of different shapes, whose tangent needed memory of its own in forward-over-reverse;
    # np.copy stacked it and raised "inhomogeneous shape"
    x = np.array([0.3, -0.5, 0.8])
    gradient = s2s_ad.grad(multi_dot_read_in_a_loop)
    want = np.array([(gradient(x + 1e-5 * e) - gradient(x - 1e-5 * e)) / 2e-5 for e in np.eye(3)])
    np.testing.assert_allclose(s2s_ad.hessian(multi_dot_read_in_a_loop)(x), want, rtol=1e-5, atol=1e-6)
    assert "held_apart(" in s2s_ad.source(gradient, mode="forward")


def _ragged_layers_summed(p):
    layers = []
    for i in range(2):
        layers.append(p[[0, 6][i]:[6, 9][i]])  # two arrays of different shapes, appended in a loop
    total = 0.0
    for W in layers:
        total = total + np.sum(W ** 3)
    return total


def _network_of_ragged_layers(p):
    sizes = [2, 3, 1]
    layers = []
    start = 0
    for i in range(len(sizes) - 1):
        n_in, n_out = sizes[i], sizes[i + 1]
        layers.append(p[start:start + n_in * n_out].reshape(n_in, n_out))
        start = start + n_in * n_out
    h = np.array([[0.5, -1.0], [1.5, 0.3], [-0.7, 0.9]])
    for W in layers:
        h = np.tanh(h @ W)
    return np.sum((h[:, 0] - np.array([0.1, -0.2, 0.3])) ** 2)


@pytest.mark.parametrize("f", [_ragged_layers_summed, _network_of_ragged_layers], ids=lambda f: f.__name__)
def test_hessian_through_a_list_of_arrays_of_different_shapes(f):
    # the adjoint of such a list is an array of objects, one adjoint each; forward mode over the reverse
    # sweep must carry the tangent of a store into it (runtime.if_inexact gave zeros there: a zero Hessian)
    p = np.linspace(-0.8, 0.9, 9)
    gradient = s2s_ad.grad(f)
    step = 1e-5
    want = np.array([(gradient(p + e) - gradient(p - e)) / (2 * step) for e in np.eye(p.size) * step])
    np.testing.assert_allclose(s2s_ad.hessian(f)(p), want, rtol=1e-5, atol=1e-7)
    assert np.abs(want).max() > 0.5


def _chained_rosenbrock(x):
    s = 0.0
    for i in range(x.shape[0] - 1):
        s = s + (1.0 - x[i]) ** 2 + 10.0 * (x[i + 1] - x[i] ** 2) ** 2
    return s


def test_hessian_runs_on_the_backend_it_is_given():
    """``hessian(f, backend="numba")`` builds its gradient and the forward mode over it for Numba (it
    once ran the Python backend whatever it was given); the numbers are those of differences of the
    gradient and of the Python backend."""
    pytest.importorskip("numba")
    import warnings
    x = np.linspace(-0.5, 0.7, 5)
    gradient = s2s_ad.grad(_chained_rosenbrock)
    step = 1e-6
    by_differences = np.array([(gradient(x + step * e) - gradient(x - step * e)) / (2 * step) for e in np.eye(5)])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # (what does not compile runs as Python, saying so)
        compiled = s2s_ad.hessian(_chained_rosenbrock, backend="numba")(x)
    assert s2s_ad.hessian(_chained_rosenbrock, backend="numba")._backend == "numba"
    np.testing.assert_allclose(compiled, s2s_ad.hessian(_chained_rosenbrock)(x), rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(compiled, by_differences, rtol=1e-6, atol=1e-6)
