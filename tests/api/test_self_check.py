"""The self-check: ``grad(f, check=True)`` and ``S2S_AD_CHECK=1`` (the dot-product test).

Each checked call also runs forward mode along a random direction and compares
it with the reverse-mode gradient; a deliberately wrong rule (reverse or
forward) must be caught with ``GradientCheckError``, correct functions must
pass, in float64 and float32.
"""
import math

import numpy as np
import pytest

import s2s_ad
from conftest import numeric_grad


@pytest.fixture(autouse=True)
def _unchecked_unless_asked(monkeypatch):
    """These tests call unchecked gradients too: S2S_AD_CHECK=1 in the environment would check them."""
    monkeypatch.delenv("S2S_AD_CHECK", raising=False)


# -- black boxes with rules, one of the two rules wrong --------------------------------------------


def squash(x):
    """A 'black box': its derivatives come from the rules below only."""
    return x / (1.0 + x * x)


@s2s_ad.adjoint(squash, elementwise=True)
def _(out, x, d_out):
    d_x = d_out * 2.0 * x  # wrong: the derivative is (1 - x**2) / (1 + x**2)**2


@s2s_ad.tangent(squash, elementwise=True)
def _(out, x, t_x):
    t_out = t_x * (1.0 - x * x) / ((1.0 + x * x) * (1.0 + x * x))


def stretch(x):
    return x * x * x


@s2s_ad.adjoint(stretch, elementwise=True)
def _(out, x, d_out):
    d_x = d_out * 3.0 * x * x


@s2s_ad.tangent(stretch, elementwise=True)
def _(out, x, t_x):
    t_out = t_x * 2.0 * x  # wrong: 3 x**2


def uses_squash(x, y):
    return np.sum(squash(x) * y)


def uses_stretch(x, y):
    return np.sum(np.sin(stretch(x))) * y


def scalar_squash(x):
    return squash(x) + math.cos(x)


# -- correct functions: the check passes and the gradient is the plain one -------------------------


def loop_and_branches(x, w, n):
    total = 0.0
    for i in range(n):
        if total > 0.3:
            total = total * 0.5 + np.sum(np.tanh(w * x))
        else:
            total = total + np.dot(w, w) * math.sin(x)
    return total


def helper(a, b):
    return a * np.exp(-b)


def through_helpers(w, b, unused=None):
    hidden = np.tanh(np.outer(w, w) @ w + b)
    return float(np.sum(helper(hidden, b) ** 2))


def test_the_check_passes_on_correct_functions_and_returns_the_plain_gradient():
    w = np.array([0.3, -0.7, 0.2])
    for checked in (s2s_ad.grad(loop_and_branches, wrt=(0, 1), check=True),
                    s2s_ad.grad(loop_and_branches, wrt=("w", "x"), check=True)):
        plain = s2s_ad.grad(loop_and_branches, wrt=checked.wrt)
        for _ in range(5):  # a fresh direction each call
            for got, want in zip(checked(0.4, w, 4), plain(0.4, w, 4)):
                np.testing.assert_array_equal(got, want)
    np.testing.assert_allclose(s2s_ad.grad(through_helpers, check=True)(w, 0.25),
                               numeric_grad(through_helpers, (w, 0.25), 0), rtol=1e-6)
    value, gradient = s2s_ad.value_and_grad(through_helpers, wrt=(0, 1), check=True)(w, 0.25)
    assert value == pytest.approx(through_helpers(w, 0.25))
    assert gradient[1] == pytest.approx(numeric_grad(through_helpers, (w, 0.25), 1), rel=1e-6)


def float32_throughout(v):
    return np.sum(np.sin(v)) ** 2


def test_the_check_passes_in_float32():
    w = np.array([0.3, -0.7, 0.2], dtype=np.float32)
    checked = s2s_ad.grad(through_helpers, wrt=(0, 1), check=True)
    for _ in range(20):
        gradient_w, gradient_b = checked(w, np.float32(0.25))
    assert gradient_w.dtype.kind == "f"
    long_sum = s2s_ad.grad(float32_throughout, check=True)
    v = np.linspace(-1.0, 1.0, 1000).astype(np.float32)
    for _ in range(20):
        gradient = long_sum(v)
    assert gradient.dtype == np.float32
    # (the sum of sin over a symmetric grid is about 0: float32 may round it to exactly 0)
    np.testing.assert_allclose(gradient, np.cos(v.astype(float)) * 2 * np.sum(np.sin(v.astype(float))), rtol=1e-3,
                               atol=1e-5)
    np.testing.assert_allclose(gradient_w, numeric_grad(through_helpers, (w.astype(float), 0.25), 0), rtol=1e-3)


def test_a_second_derivative_can_be_checked():
    def_check = s2s_ad.grad(s2s_ad.grad(scalar_cubic), check=True)
    assert def_check(0.7) == pytest.approx(6 * 0.7 + 2.0)


def scalar_cubic(x):
    return x ** 3 + x * x


# -- wrong rules are caught ------------------------------------------------------------------------


def test_a_wrong_adjoint_rule_is_caught():
    x, y = np.array([0.5, -1.2, 0.8]), np.array([1.0, 2.0, -0.5])
    wrong = s2s_ad.grad(uses_squash)(x, y)  # unchecked: the wrong rule's number, silently
    assert not np.allclose(wrong, numeric_grad(uses_squash, (x, y), 0), rtol=1e-3)
    with pytest.raises(s2s_ad.GradientCheckError, match=r"grad of uses_squash \(.*test_self_check.py:\d+\)") as caught:
        s2s_ad.grad(uses_squash, check=True)(x, y)
    error = caught.value
    assert error.difference == pytest.approx(abs(error.forward - error.reverse))
    assert error.difference > error.tolerance > 0
    assert "@s2s_ad.adjoint" in str(error) and "a difference of" in str(error)
    with pytest.raises(s2s_ad.GradientCheckError, match="scalar_squash"):
        s2s_ad.value_and_grad(scalar_squash, check=True)(0.6)
    # float32's looser tolerance still catches it
    with pytest.raises(s2s_ad.GradientCheckError):
        s2s_ad.grad(uses_squash, check=True)(x.astype(np.float32), y.astype(np.float32))


def test_a_wrong_tangent_rule_is_caught():
    x = np.array([0.5, -1.2, 0.8])
    with pytest.raises(s2s_ad.GradientCheckError, match="uses_stretch"):
        s2s_ad.grad(uses_stretch, wrt=(0, 1), check=True)(x, 0.3)
    # by y alone, the wrong tangent of stretch(x) takes no part: nothing to catch
    assert s2s_ad.grad(uses_stretch, wrt=1, check=True)(x, 0.3) == pytest.approx(np.sum(np.sin(x ** 3)))


def test_the_error_is_an_exception_exported_by_the_package():
    assert issubclass(s2s_ad.GradientCheckError, Exception)
    assert "GradientCheckError" in s2s_ad.__all__


# -- switching it on for a whole program ----------------------------------------------------------


def test_the_environment_variable_switches_it_on_when_grad_is_called(monkeypatch):
    x, y = np.array([0.5, -1.2, 0.8]), np.array([1.0, 2.0, -0.5])
    monkeypatch.delenv("S2S_AD_CHECK", raising=False)
    unchecked = s2s_ad.grad(uses_squash)
    monkeypatch.setenv("S2S_AD_CHECK", "1")
    checked = s2s_ad.grad(uses_squash)
    unchecked(x, y)  # read when grad() is called: this one was made before
    with pytest.raises(s2s_ad.GradientCheckError):
        checked(x, y)
    with pytest.raises(s2s_ad.GradientCheckError):
        s2s_ad.value_and_grad(uses_squash)(x, y)
    for off in ("0", "", "false", "off"):
        monkeypatch.setenv("S2S_AD_CHECK", off)
        s2s_ad.grad(uses_squash)(x, y)


# -- what takes no part -----------------------------------------------------------------------------


def scaled_by_count(x, n, scale=None):
    factor = 1.0 if scale is None else scale
    return float(np.sum(squash(x))) * n * factor


def test_integers_and_none_take_no_part(monkeypatch):
    x = np.array([0.5, -1.2])
    # n is an integer: differentiating by it is a TypeError (as in JAX), before any check runs
    with pytest.raises(TypeError, match="n = 3 is an integer"):
        s2s_ad.grad(scaled_by_count, wrt=1, check=True)(x, 3)
    with pytest.raises(s2s_ad.GradientCheckError):  # by x (n an integer beside it) the wrong adjoint of squash is caught
        s2s_ad.grad(scaled_by_count, wrt=0, check=True)(x, 3)
    with pytest.raises(TypeError, match="scale = None is None"):  # the code is specialised on None
        s2s_ad.grad(scaled_by_count, wrt=(0, 2), check=True)(x, 3)


def test_the_users_random_state_is_left_alone():
    w = np.array([0.3, -0.7, 0.2])
    checked = s2s_ad.grad(through_helpers, check=True)
    np.random.seed(1234)
    expected = np.random.random(3)
    np.random.seed(1234)
    checked(w, 0.25)
    np.testing.assert_array_equal(np.random.random(3), expected)


def masked_sqrt(x):
    return np.sum(np.where(x > 0, np.sqrt(x), 0.0))


def test_a_nan_or_inf_is_not_compared():
    assert s2s_ad.grad(scalar_cubic, check=True)(float("inf")) == float("inf")
    # reverse mode: nan (0 * nan from the masked branch, as JAX); forward mode: finite. Not a wrong number.
    with np.errstate(invalid="ignore"):
        gradient = s2s_ad.grad(masked_sqrt, check=True)(np.array([-1.0, 4.0]))
    assert np.isnan(gradient[0]) and gradient[1] == pytest.approx(0.25)


def knee(x):
    return x * x * 0.5


@s2s_ad.adjoint(knee)
def _(out, x, d_out):
    d_x = d_out * x


def uses_knee(x):
    return knee(x) + x


def test_a_call_with_no_tangent_rule_cannot_be_checked_and_says_so():
    assert s2s_ad.grad(uses_knee)(0.3) == pytest.approx(1.3)
    with pytest.raises(s2s_ad.TransformError, match=r"knee in forward mode.*@s2s_ad.tangent"):
        s2s_ad.grad(uses_knee, check=True)(0.3)


def test_the_environment_switch_skips_with_a_warning_what_it_cannot_check(monkeypatch):
    """S2S_AD_CHECK=1 over a whole program: a call forward mode cannot be built for (a rule with an
    adjoint alone) returns its gradient with a SelfCheckSkipped warning, never an error."""
    from s2s_ad.api.selfcheck import SelfCheckSkipped

    monkeypatch.setenv("S2S_AD_CHECK", "1")
    with pytest.warns(SelfCheckSkipped, match=r"not self-checked.*knee in forward mode"):
        assert s2s_ad.grad(uses_knee)(0.3) == pytest.approx(1.3)


# -- at a point where the derivative vanishes ---------------------------------------------------------


def least_squares(theta, data):
    """Sum of squares over many samples: at its minimum the gradient is a sum of large terms that cancel."""
    residual = data - theta[0] - theta[1] * np.arange(data.size) / data.size
    return np.sum(residual * residual)


def test_a_converged_minimum_passes_the_check_and_a_wrong_rule_there_still_fails():
    # The gradient at the least-squares solution is rounding noise of 2,000 terms of size ~1: both
    # modes return different noise, which the results' own size (~1e-12) cannot bound.
    rng = np.random.default_rng(4)
    data = 1.0 + 0.5 * np.arange(2000) / 2000 + rng.standard_normal(2000)
    design = np.stack([np.ones(2000), np.arange(2000) / 2000], axis=1)
    theta = np.linalg.lstsq(design, data, rcond=None)[0]
    checked = s2s_ad.grad(least_squares, check=True)
    gradient = checked(theta, data)
    assert np.max(np.abs(gradient)) < 1e-8  # (the point is a minimum: what is compared is noise)
    expected = -2.0 * design.T @ (data - design @ theta)
    np.testing.assert_allclose(gradient, expected, atol=1e-9)

    def wrong_near_the_minimum(theta, data):  # squash's adjoint above is wrong: off by ~1e-6 here
        return least_squares(theta, data) + 1e-6 * np.sum(squash(theta))

    with pytest.raises(s2s_ad.GradientCheckError):
        s2s_ad.grad(wrong_near_the_minimum, check=True)(theta, data)
