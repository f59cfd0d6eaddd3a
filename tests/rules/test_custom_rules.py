"""Users' own rules (@adjoint, @tangent), stop_gradient and check_grad."""
import importlib
import pathlib
import sys

import numpy as np
import pytest

import s2s_ad
from conftest import assert_gradient_matches, numeric_grad


def cube_root_times(x, y):
    return float(np.cbrt(x) * y)


def soft_step(x):
    return float(1.0 / (1.0 + np.exp(-4.0 * x)))


@s2s_ad.tangent(soft_step)
def _(out, x, t_x):
    t_out = t_x * 4.0 * out * (1.0 - out)


def uses_soft_step(x):
    return soft_step(x) * x


def test_a_tangent_only_rule_serves_forward_mode_and_is_refused_by_reverse():
    value, tangent = s2s_ad.jvp(uses_soft_step, (0.3,), (1.0,))
    assert value == pytest.approx(uses_soft_step(0.3))
    assert tangent == pytest.approx(numeric_grad(uses_soft_step, (0.3,), 0), rel=1e-6)
    with pytest.raises(s2s_ad.TransformError, match="soft_step in reverse mode.*@s2s_ad.adjoint"):
        s2s_ad.grad(uses_soft_step)(0.3)


def _declare(body):
    """Import a module declaring one rule (templates must live in a file to be read)."""
    path = pathlib.Path(__file__).with_name("_rule_under_test.py")
    path.write_text("import numpy as np\nimport s2s_ad\nfrom test_custom_rules import cube_root_times\n\n" + body)
    try:
        sys.modules.pop("_rule_under_test", None)
        importlib.import_module("_rule_under_test")
    finally:
        path.unlink()


@pytest.mark.parametrize("body, message", [
    ("@s2s_ad.adjoint(cube_root_times)\ndef _(out, x, y):\n    d_x = y\n",
     "last parameter is the incoming adjoint and must be named d_out, not 'y'"),
    ("@s2s_ad.adjoint(cube_root_times)\ndef _(out, a, b, d_out):\n    d_a = d_out\n",
     r"inputs must be named and ordered as the parameters of cube_root_times: \(x, y\), not \(a, b\)"),
    ("@s2s_ad.adjoint(cube_root_times)\ndef _(out, x, d_out):\n    d_x = d_out\n",
     r"\(x, y\), not \(x\)"),
    ("@s2s_ad.adjoint(cube_root_times)\ndef _(out, x, y, d_out):\n    if x > 0:\n        d_x = d_out\n",
     "only assignments name = expression"),
    ("@s2s_ad.adjoint(cube_root_times)\ndef _(out, x, y, d_out):\n    d_z = d_out\n",
     "assigns d_z but has no input named 'z'"),
    ("@s2s_ad.tangent(cube_root_times)\ndef _(out, x, y, t_x, t_y):\n    t_x2 = t_x\n",
     "must assign t_out"),
    ("@s2s_ad.tangent(cube_root_times)\ndef _(out, x, y, t_z):\n    t_out = t_z\n",
     "t_z is the tangent of no input"),
])
def test_a_rule_with_the_wrong_signature_is_refused_where_it_is_declared(body, message):
    with pytest.raises(s2s_ad.TransformError, match=message) as caught:
        _declare(body)
    assert "_rule_under_test.py:" in str(caught.value)


def stopped(x, y):
    return np.sum(x * s2s_ad.stop_gradient(x * y))


def test_stop_gradient_is_a_constant_in_both_modes():
    x, y = np.array([1.0, 2.0]), 3.0
    np.testing.assert_allclose(s2s_ad.grad(stopped)(x, y), x * y)
    assert s2s_ad.grad(stopped, wrt=1)(x, y) == pytest.approx(0.0)
    assert s2s_ad.jvp(stopped, (x, y), (np.ones(2), 1.0))[1] == pytest.approx(np.sum(x * y))
    assert stopped(x, y) == pytest.approx(15.0)


def sine_weighted(x, y):
    return np.sum(np.sin(x) * y)


def wrong_rule_box(x):
    return float(np.cbrt(x))


@s2s_ad.adjoint(wrong_rule_box)
def _(out, x, d_out):
    d_x = d_out / (2.0 * np.cbrt(x) ** 2)  # deliberately wrong: the derivative has 3, not 2


def uses_wrong_rule(x):
    return wrong_rule_box(x) * x


def test_check_grad_reports_the_worst_component():
    report = s2s_ad.check_grad(sine_weighted, np.array([0.1, 0.2]), 3.0)
    assert report.ok and report.error < 1.0
    bad = s2s_ad.check_grad(uses_wrong_rule, 2.0)
    assert not bad.ok and bad.worst == "d/dx"
    assert bad.numeric == pytest.approx(np.cbrt(2.0) + 2.0 / (3.0 * np.cbrt(2.0) ** 2), rel=1e-6)
    assert "MISMATCH" in str(bad) and "d/dx" in str(bad)
    assert s2s_ad.check_grad(sine_weighted, np.array([0.1, 0.2]), 3.0, wrt="y").worst == "d/dy"


def test_the_black_box_rule_of_the_readme_gradient_is_right():
    @s2s_ad.adjoint(cube_root_times)
    def _(out, x, y, d_out):
        d_x = d_out * y / (3.0 * np.cbrt(x) ** 2)
        d_y = d_out * np.cbrt(x)

    @s2s_ad.tangent(cube_root_times)
    def _(out, x, y, t_x, t_y):
        t_out = t_x * y / (3.0 * np.cbrt(x) ** 2) + t_y * np.cbrt(x)

    def uses(x, y):
        return cube_root_times(x, y) * x

    assert_gradient_matches(uses, (2.0, 0.7), (0, 1))
