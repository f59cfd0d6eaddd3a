"""Issue 22, "every derivative visible": the code a higher derivative, a Hessian and forward mode over a
gradient run is shown whole (the helpers' adjoints and their tapes, not a wrapper calling ``.jvp``);
``source`` of any API object shows code or says what to pass; the command line shows the same.

Oracles: the values the shown code computes, against central differences of the order below and the
closed form of ``looped``'s second derivative (``d2``).  ``looped_call`` computes the same numbers through a helper
that stays a call (``stepped_bump``, with a loop: its adjoints and their tapes are shown); ``looped``'s helper,
``bump``, is short and lowered in place."""
from __future__ import annotations

import numpy as np
import pytest

import s2s_ad
from s2s_ad.api import cli
import visible_functions as vf
from conftest import numeric_grad


def d2(x, y=2.0):
    """d²/dx² of looped (and of looped_call), which is 3 y x sin² x."""
    s, c = np.sin(x), np.cos(x)
    return 3 * y * (4 * s * c + 2 * x * (c * c - s * s))


def test_second_order_source_is_the_code_it_runs_helpers_and_tapes_included():
    second = s2s_ad.grad(s2s_ad.grad(vf.looped_call))
    text = second.source_for(0.7)
    for shown in ("def derivative_gradient_looped_call(x, y):", "def jvp_gradient_looped_call(",
                  "def jvp_d_looped_call(", "def jvp_forward_stepped_bump(", "def jvp_backward_stepped_bump(", "t_tape"):
        assert shown in text, shown
    assert text.index("def derivative_gradient_looped_call") < text.index("def jvp_d_looped_call")  # the entry first
    assert second(0.7) == pytest.approx(d2(0.7), rel=1e-10)
    assert second(0.7) == pytest.approx(numeric_grad(s2s_ad.grad(vf.looped_call), (0.7,), 0), rel=1e-6)
    assert second.source == text  # the code the last call ran


def test_second_order_of_a_short_helper_lowered_in_place():
    """``bump`` is lowered in place at every order: no helper of its own, the same numbers."""
    second = s2s_ad.grad(s2s_ad.grad(vf.looped))
    text = second.source_for(0.7)
    assert "def derivative_gradient_looped(x, y):" in text and "def jvp_d_looped(" in text
    assert "def jvp_forward_bump(" not in text and "d_bump.forward(" not in s2s_ad.source(vf.looped, args=(0.7,))
    assert second(0.7) == pytest.approx(d2(0.7), rel=1e-10)
    assert second(0.7) == pytest.approx(numeric_grad(s2s_ad.grad(vf.looped), (0.7,), 0), rel=1e-6)


def test_source_of_a_gradient_in_forward_mode_is_the_hessian_vector_product():
    gradient = s2s_ad.grad(vf.looped_call)
    text = s2s_ad.source(gradient, mode="forward", args=(0.7,))
    assert "def jvp_gradient_looped_call(x, y, t_x):" in text and "def jvp_backward_stepped_bump(" in text
    _, tangent = s2s_ad.jvp(gradient, (0.7, 2.0), (1.0, 0.0))
    assert tangent == pytest.approx(d2(0.7), rel=1e-10)
    assert "def gradient_looped_call(x, y):" in s2s_ad.source(gradient, mode="forward", stage="ssa", args=(0.7,))


def test_hessian_shows_its_code():
    hessian = s2s_ad.hessian(vf.looped_call, wrt=("x", "y"))
    text = hessian.source_for(0.7, 2.0)
    assert text == s2s_ad.source(hessian, args=(0.7, 2.0))
    assert "def jvp_gradient_looped_call(x, y, t_x, t_y):" in text and "jvp_backward_stepped_bump" in text
    assert hessian(0.7, 2.0)[0][0] == pytest.approx(d2(0.7), rel=1e-10)


@pytest.mark.parametrize("given, says", [
    (lambda: s2s_ad.grad(vf.looped), "mode='forward'"),
    (lambda: s2s_ad.jacobian(vf.looped), "pass the function itself"),
    (lambda: s2s_ad.vjp(vf.looped, 0.7)[1], "pass the function you differentiate"),
    (lambda: s2s_ad.grad, "pass the function you differentiate"),
])
def test_source_of_an_api_object_says_what_to_pass(given, says):
    with pytest.raises(TypeError, match=says):
        s2s_ad.source(given())


def test_args_fill_in_defaults_as_a_call_does():
    text = s2s_ad.source(vf.looped, args=(0.7,))
    assert "# Specialised for: x number, y number." in text
    assert s2s_ad.source(vf.shaped, args=(np.ones(3), 2.0)).count("array of shape (a,)") == 1


def _cli(capsys, *argv, function="looped"):
    code = cli.main([f"{vf.__file__}:{function}", *argv])
    out, err = capsys.readouterr()
    return code, out, err


def test_cli_second_order_by_one_parameter_and_by_several(capsys):
    code, out, err = _cli(capsys, "--order", "2", "--wrt", "x", "--args", "0.7", function="looped_call")
    assert code == 0, err
    assert "def derivative_gradient_looped_call(x, y):" in out and "def jvp_backward_stepped_bump(" in out
    code, out, err = _cli(capsys, "--order", "2", "--wrt", "x,y", "--args", "0.7, 2.0", function="looped_call")
    assert code == 0, err
    assert "def jvp_gradient_looped_call(x, y, t_x, t_y):" in out
    code, out, err = _cli(capsys, "--order", "2", "--wrt", "x", "--args", "0.7")
    assert code == 0, err
    assert "def derivative_gradient_looped(x, y):" in out and "def jvp_backward_bump(" not in out
    code, out, err = _cli(capsys, "--order", "3", "--wrt", "x,y")
    assert code == 2 and "name one parameter" in err


def test_cli_args_keep_strings_and_take_defaults(capsys):
    assert cli._parse_args("1, [1, 2], 'l2', None, True, {'w': [3]}")[2:5] == ("l2", None, True)
    code, out, _ = _cli(capsys, "--args", "0.7")
    assert code == 0 and "x number, y number" in out
