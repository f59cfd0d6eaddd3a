"""Short helpers of the user's are lowered in place into their caller's code (``lower_ssa.small_helper``):
no call, no split adjoint, and the same numbers, checked against central differences; helpers just past
the policy, or of another file, stay calls.  Also: the generated lines of an inlined helper name its own
lines, and what it reads is read where Python reads it (its own module's globals, its defaults)."""
from __future__ import annotations

import inspect

import numpy as np
import pytest

import s2s_ad
from s2s_ad.lowering.lower_ssa import small_helper
from conftest import assert_gradient_matches, numeric_grad
import short_helper_functions as sh

X = np.array([0.3, -0.5, 0.8])


def _called(fn, args) -> bool:
    """Whether ``fn``'s gradient calls a helper through its split adjoint."""
    return ".forward(" in s2s_ad.source(fn, args=args)


def _line_of(fn, code: str) -> int:
    lines, first = inspect.getsourcelines(fn)
    return next(n for n, text in enumerate(lines, first) if code in text)


def test_a_helper_called_four_times_a_step_is_lowered_in_place():
    args = (np.array([0.9, 0.4]), 1.1, 0.7, 0.05, 5)
    assert not _called(sh.rk4, args)
    for wrt in (0, 1, 2):
        assert_gradient_matches(sh.rk4, args, wrt)


def test_its_lines_name_the_helpers_own_lines():
    text = s2s_ad.source(sh.rk4, args=(np.array([0.9, 0.4]), 1.1, 0.7, 0.05, 5))
    assert f"# line {_line_of(sh.rates, 'grow = a * u')}" in text
    assert f"# line {_line_of(sh.rates, 'return grow - b * u * u')}" in text  # its return's line


def test_defaults_left_out_and_keywords_in_another_order():
    assert not _called(sh.defaults_and_keywords, (X,))
    assert_gradient_matches(sh.defaults_and_keywords, (X,))
    assert s2s_ad.hessian(sh.defaults_and_keywords)(X) == pytest.approx(
        np.stack([numeric_grad(lambda x: s2s_ad.grad(sh.defaults_and_keywords)(x)[i], (X,), 0) for i in range(3)]),
        rel=1e-5, abs=1e-6)


def test_a_helper_reads_the_globals_of_its_own_module():
    assert not _called(sh.global_of_this_file, (X,))
    np.testing.assert_allclose(s2s_ad.grad(sh.global_of_this_file)(X), 2 * (X + sh.OFFSET))
    assert _called(sh.global_of_another_file, (X,))  # another file: it stays a call
    np.testing.assert_allclose(s2s_ad.grad(sh.global_of_another_file)(X), 2 * (X + sh.OTHER_OFFSET))


def test_a_global_a_helper_reads_changed_between_cached_calls(monkeypatch):
    gradient = s2s_ad.grad(sh.global_of_this_file)
    for offset in (10.0, -1.0, 10.0):
        monkeypatch.setattr(sh, "OFFSET", offset)
        np.testing.assert_allclose(gradient(X), 2 * (X + offset))


def test_with_aux_a_method_and_recursion():
    value, g = s2s_ad.value_and_grad(sh.with_aux, has_aux=True)(X)
    np.testing.assert_allclose(g, numeric_grad(lambda x: sh.with_aux(x)[0], (X,), 0), rtol=1e-6)
    np.testing.assert_allclose(value[1], sh.rates(X, 1.5, 0.5))
    spring = sh.Spring(3.0)
    assert not _called(spring.total, (X,))
    np.testing.assert_allclose(s2s_ad.grad(spring.total)(X), 3.0 * X)
    assert _called(sh.recursive, (X,))  # the recursive call stays a call
    assert_gradient_matches(sh.recursive, (X,))


@pytest.mark.parametrize("helper", [sh.with_subscript, sh.with_augmented, sh.with_loop, sh.with_seven_assignments,
                                    sh.with_keyword_only], ids=lambda f: f.__name__)
def test_helpers_past_the_policy_stay_calls(helper):
    assert not small_helper(helper, sh.__file__)
    assert f"d_{helper.__name__}" in s2s_ad.source(sh.calls_each, args=(X,))


def test_helpers_past_the_policy_give_the_same_numbers():
    assert_gradient_matches(sh.calls_each, (X,))


def test_the_policy_on_the_short_ones():
    assert small_helper(sh.rates, sh.__file__) and small_helper(sh.scaled, sh.__file__)
    assert not small_helper(sh.rates, "elsewhere.py")  # called from another file
    assert not small_helper(sh.shifted, sh.__file__)  # defined in another file than its caller


def test_a_short_helper_of_another_file_stays_a_call_inside_a_helper_lowered_in_place():
    """``total_of`` (given a dict) is lowered in place; ``shifted``, which it calls, is of another file
    than the function differentiated: it stays a call, so every line of the generated code is one of
    ``container_helper_of_another_file``'s file or of the helper's own adjoint."""
    assert "d_shifted" in s2s_ad.source(sh.container_helper_of_another_file, args=(X, 1.5))
    assert_gradient_matches(sh.container_helper_of_another_file, (X, 1.5), (0, 1))
