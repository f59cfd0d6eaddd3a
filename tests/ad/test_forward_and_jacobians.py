"""Forward mode (jvp), vjp and jacobian: the API of docs/api.md, against independent oracles."""
import math

import numpy as np
import pytest

import s2s_ad
from conftest import numeric_grad
import call_functions as calls
import control_flow_functions as cf

RNG = np.random.default_rng(11)


def rational(x, y):
    return (x + 1) * (x - y) / (x + y + 1)


def mixed(w, data, scale=2.0):
    h = np.tanh(data @ w) * scale
    return np.sum(h * h) + math.sin(scale)


def vector_out(x, a):
    return np.array([x[0] * x[1], np.sin(x[2]) * a, np.sum(x ** 2)])


def writes_locally(x):
    out = np.zeros(len(x))
    for i in range(len(x)):
        out[i] = x[i] * x[i - 1]
    return out


def test_jvp_seed_example():
    value, tangent = s2s_ad.jvp(rational, (3.0, 2.0), (1.0, 0.0))
    assert value == pytest.approx(2 / 3)
    assert tangent == pytest.approx(13 / 18)
    assert s2s_ad.jvp(rational, (3.0, 2.0), (0.0, 1.0))[1] == pytest.approx(-7 / 9)


def test_jvp_defaults_integers_and_arrays():
    w, data = RNG.normal(size=3), RNG.normal(size=(5, 3))
    t_w = RNG.normal(size=3)
    value, tangent = s2s_ad.jvp(mixed, (w, data), (t_w, np.zeros((5, 3))))
    assert value == pytest.approx(mixed(w, data))
    assert tangent == pytest.approx(float(numeric_grad(mixed, (w, data), 0) @ t_w), rel=1e-6)
    # an integer argument takes None (or zero) as its tangent
    value, tangent = s2s_ad.jvp(cf.logistic_loop, (3.1, 0.2, 6), (0.0, 1.0, None))
    assert tangent == pytest.approx(numeric_grad(cf.logistic_loop, (3.1, 0.2, 6), 1), rel=1e-6)


def test_jvp_through_helpers_and_recursion():
    assert s2s_ad.jvp(calls.power, (1.3, 5), (1.0, None))[1] == pytest.approx(5 * 1.3 ** 4)
    tangent = s2s_ad.jvp(calls.calls_inside_loop, (0.3, 4), (1.0, 0))[1]
    assert tangent == pytest.approx(numeric_grad(calls.calls_inside_loop, (0.3, 4), 0), rel=1e-6)


def test_jvp_of_a_vector_valued_function_and_local_writes():
    x = RNG.normal(size=4)
    t = RNG.normal(size=4)
    _, tangent = s2s_ad.jvp(writes_locally, (x,), (t,))
    eps = 1e-6
    want = (writes_locally(x + eps * t) - writes_locally(x - eps * t)) / (2 * eps)
    np.testing.assert_allclose(tangent, want, rtol=1e-6, atol=1e-9)


def test_jvp_never_mutates_primals_or_tangents():
    x = RNG.normal(size=4)
    t = RNG.normal(size=4)
    x0, t0 = x.copy(), t.copy()
    s2s_ad.jvp(writes_locally, (x,), (t,))
    s2s_ad.jvp(lambda_free_copy_write, (x,), (t,))
    np.testing.assert_array_equal(x, x0)
    np.testing.assert_array_equal(t, t0)


def lambda_free_copy_write(x):
    y = x.copy()
    y[0] = y[0] * 3.0
    return np.sum(y * x)


@pytest.mark.parametrize("tangents, message", [
    ((np.ones(3),), "shape \\(3,\\).*never broadcast"),
    ((1.0,), "shape \\(\\).*never broadcast"),
    ((np.ones(4), np.ones(4)), "one tangent per primal"),
])
def test_jvp_refuses_tangents_that_do_not_match(tangents, message):
    with pytest.raises(ValueError, match=message):
        s2s_ad.jvp(writes_locally, (np.ones(4),), tangents)


def test_jvp_refuses_a_tangent_on_an_integer():
    with pytest.raises(ValueError, match="n = 6 carries no derivative"):
        s2s_ad.jvp(cf.logistic_loop, (3.1, 0.2, 6), (0.0, 1.0, 1.0))


def test_vjp_pulls_back_many_cotangents_from_one_forward_sweep():
    x, a = RNG.normal(size=3), 0.7
    out, pull = s2s_ad.vjp(vector_out, x, a)
    np.testing.assert_allclose(out, vector_out(x, a))
    for k in range(3):
        unit = np.eye(3)[k]
        d_x, d_a = pull(unit)
        scalar = lambda x, a: float(vector_out(x, a)[k])
        np.testing.assert_allclose(d_x, numeric_grad(scalar, (x, a), 0), rtol=1e-6, atol=1e-9)
        assert d_a == pytest.approx(numeric_grad(scalar, (x, a), 1), rel=1e-6, abs=1e-9)
    with pytest.raises(ValueError, match="never broadcast"):
        pull(1.0)


def test_vjp_of_a_scalar_function_is_its_gradient():
    out, pull = s2s_ad.vjp(rational, 3.0, 2.0)
    assert out == pytest.approx(2 / 3)
    assert pull(1.0) == pytest.approx((13 / 18, -7 / 9))
    assert pull(2.0) == pytest.approx((26 / 18, -14 / 9))


def _numeric_jacobian(f, args, i):
    x = np.asarray(args[i], dtype=float)
    columns = []
    for index in np.ndindex(x.shape):
        plus, minus = list(args), list(args)
        step = np.zeros_like(x)
        step[index] = 1e-6
        plus[i], minus[i] = x + step, x - step
        columns.append((np.asarray(f(*plus)) - np.asarray(f(*minus))) / 2e-6)
    return np.stack(columns, axis=-1).reshape(np.shape(f(*args)) + x.shape)


@pytest.mark.parametrize("f, args", [
    (vector_out, (RNG.normal(size=3), 0.7)),          # 3 outputs, 3 inputs: forward
    (writes_locally, (RNG.normal(size=5),)),         # square, with local writes
    (lambda_free_copy_write, (RNG.normal(size=6),)),  # 1 output, 6 inputs: reverse
])
def test_jacobian_matches_finite_differences(f, args):
    got = s2s_ad.jacobian(f)(*args)
    np.testing.assert_allclose(got, _numeric_jacobian(f, args, 0), rtol=1e-6, atol=1e-8)


def test_jacobian_by_several_arguments_and_of_a_wide_function():
    x = RNG.normal(size=3)
    d_x, d_a = s2s_ad.jacobian(vector_out, wrt=(0, "a"))(x, 0.7)
    np.testing.assert_allclose(d_x, _numeric_jacobian(vector_out, (x, 0.7), 0), rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(d_a, [0.0, np.sin(x[2]), 0.0], atol=1e-12)
    w, data = RNG.normal(size=3), RNG.normal(size=(5, 3))  # scalar output, 3 inputs: reverse mode
    np.testing.assert_allclose(s2s_ad.jacobian(mixed)(w, data), numeric_grad(mixed, (w, data), 0), rtol=1e-6)


def test_jacobian_refuses_an_integer_argument():
    with pytest.raises(TypeError, match=r"^jacobian of 'logistic_loop' with respect to .*: .* = 6 is an integer \(int\)"):
        s2s_ad.jacobian(cf.logistic_loop, wrt=2)(3.1, 0.2, 6)


def test_forward_source_reads_like_tangent_code():
    text = s2s_ad.source(rational, wrt=("x", "y"), mode="forward", args=(3.0, 2.0))
    assert "def jvp_rational(x, y, t_x, t_y):" in text
    assert "t_out = (t_prod - out * t_x_plus_y) / total" in text
    assert "t_x_plus_1 = t_x" not in text  # a tangent that only passes through gets no copy
    assert "zeros_like" not in text and "tape" not in text
