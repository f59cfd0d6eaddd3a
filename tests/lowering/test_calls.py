"""Calls to the user's own functions: each is transformed and called through its own adjoint, but for
a short one, lowered in place (``lower_ssa.small_helper``)."""
import re

import numpy as np
import pytest

import s2s_ad
from conftest import assert_gradient_matches, numeric_grad
import call_functions as cf


def test_helper_called_twice_with_keyword_and_default():
    assert_gradient_matches(cf.uses_helper_twice, (1.5, 0.7), (0, 1))


@pytest.mark.parametrize("n", [0, 1, 5])
def test_helpers_with_loops_called_in_a_loop(n):
    assert_gradient_matches(cf.calls_inside_loop, (0.3, n))


@pytest.mark.parametrize("n", [1, 2, 6])
def test_recursion(n):
    got = assert_gradient_matches(cf.power, (1.3, n))
    assert got == pytest.approx(n * 1.3 ** (n - 1))


def test_closure():
    assert s2s_ad.grad(cf.uses_closure)(2.0) == pytest.approx(2 * 3.0 * 2.0 + cf.OFFSET)


@pytest.mark.parametrize("x, y", [(2.0, 1.0), (0.5, 1.0), (-1.0, -2.0)])
def test_helper_with_branches_and_early_return(x, y):
    assert_gradient_matches(cf.branchy_caller, (x, y), (0, 1))


def test_integer_arguments_are_never_differentiated():
    assert s2s_ad.grad(cf.passes_an_integer)(1.5) == pytest.approx(3 * 1.5 ** 2 + 8 * 1.5)


def test_helper_is_called_through_its_adjoint_not_inlined():
    text = s2s_ad.source(cf.uses_stepped_helper_twice, wrt=(0, 1), args=(1.5, 0.7))
    assert re.search(r"d_square_plus_by_steps\w*\.forward\(", text)
    assert re.search(r"d_square_plus_by_steps\w*\.backward\(", text)
    assert_gradient_matches(cf.uses_stepped_helper_twice, (1.5, 0.7), (0, 1))


def test_a_short_helper_is_lowered_in_place_with_its_keyword_and_default():
    """``square_plus`` (one return) is lowered in place at both calls, ``b`` given by keyword and left
    to its default: no call, no adjoint of its own, the same numbers."""
    text = s2s_ad.source(cf.uses_helper_twice, wrt=(0, 1), args=(1.5, 0.7))
    assert "d_square_plus" not in text and "y_sq + 1.0" in text
    got = assert_gradient_matches(cf.uses_helper_twice, (1.5, 0.7), (0, 1))
    assert got == pytest.approx((2 * 1.5 * (0.7 ** 2 + 1.0), (1.5 ** 2 + 0.7) * 2 * 0.7 + (0.7 ** 2 + 1.0)))


def test_a_helper_whose_loop_result_is_used_after_the_loop():
    assert_gradient_matches(cf.calls_cube_by_loop, (0.7,))
    assert s2s_ad.vjp(cf.cube_by_loop, 0.7, 0.4)[1](1.0) == pytest.approx((3 * 0.49 * 0.4, 0.343))
    assert s2s_ad.grad(s2s_ad.grad(cf.calls_cube_by_loop))(0.7) == pytest.approx(6 * 0.7 * 0.3)


def test_vjp_of_an_array_returned_from_inside_a_loop():
    x = np.array([0.5, 0.1])
    out, pull = s2s_ad.vjp(cf.early_array_return, x)
    np.testing.assert_allclose(out, x * 0.729)
    np.testing.assert_allclose(pull(np.ones(2))[0], [0.729, 0.729])


@pytest.mark.parametrize("n", [0, 1, 4])
def test_checkpointed_loops_in_helpers_and_under_vjp(n):
    out, pull = s2s_ad.vjp(cf.checkpointed_helper, 0.6, n)
    assert out == pytest.approx(cf.checkpointed_helper(0.6, n))
    assert pull(1.0)[0] == pytest.approx(numeric_grad(cf.checkpointed_helper, (0.6, n), 0), rel=1e-6)
    assert_gradient_matches(cf.calls_checkpointed_helper, (0.6,))
    assert_gradient_matches(cf.linear_checkpointed, (0.6, n))


def scaled_by_default(v, scale=None):
    if scale is None:
        scale = 1.0
    return v * scale


def scaled_by_choice(v, scale=None):
    scale = 1.0 if scale is None else scale
    return v * scale


def scaled_unless_none(v, scale=None):
    return v if scale is None else v * scale


def scaled_if_given(v, scale=None):
    if scale is not None:
        v = v * scale
    return v


def passes_numbers_for_none_defaults(x):
    return np.sum(scaled_by_default(x, 3.0) + scaled_by_choice(x, 3.0) + scaled_unless_none(x, scale=3.0)
                  + scaled_if_given(x, 3.0) + scaled_by_choice(x))


@pytest.mark.parametrize("x", [0.7, np.array([0.7, -1.2])], ids=["number", "array"])
def test_a_none_default_given_a_number_compiles_without_warnings(x):
    """``scale is None`` where the caller passed 3.0 is known while lowering: the generated code holds no
    ``3.0 is None`` (Python's SyntaxWarning "is" with a literal, an error here), and the gradient is
    3 + 3 + 3 + 3 + 1 for each element."""
    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        gradient = s2s_ad.grad(passes_numbers_for_none_defaults)(x)
        _, tangent = s2s_ad.jvp(passes_numbers_for_none_defaults, (x,), (np.ones_like(x),))
        texts = [s2s_ad.source(passes_numbers_for_none_defaults, mode=mode, stage=stage, args=(x,))
                 for mode in ("reverse", "forward") for stage in ("ssa", "adjoint", "optimized")]
    np.testing.assert_allclose(gradient, np.full(np.shape(x), 13.0))
    np.testing.assert_allclose(tangent, np.sum(np.full(np.shape(x), 13.0)))
    for text in texts:
        assert not re.search(r"\bis (not )?None\b", text), text


def test_the_optimizer_folds_an_identity_test_with_none_between_constants():
    import operator
    from s2s_ad.core import ir
    from s2s_ad.passes.optimize import simplify_expr
    assert simplify_expr(ir.Call(operator.is_, (ir.Const(3.0), ir.Const(None)))).value is False
    assert simplify_expr(ir.Call(operator.is_not, (ir.Const(3.0), ir.Const(None)))).value is True
    assert simplify_expr(ir.Call(operator.is_, (ir.Const(None), ir.Const(None)))).value is True
