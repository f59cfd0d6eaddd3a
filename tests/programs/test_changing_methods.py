"""Methods called for their effect (``body.step(dt)``, ``opt.update(g)``, ``tally.add(v)`` as
statements, and ``h = layer.forward(x)``, a method changing its object and returning a value) on an object the function made by calling its class and holds by one name alone: the
method's body runs on the object and the name holds the object as the method left it, as in Python
(tests/corpora/changing_method_functions.py).  Each in every mode on the Python backend against
central differences, and grad, jvp and the Hessian on the Numba backend; where another part of the
program could see the change, or Python would raise, a TransformError at the user's line before
anything runs."""
from __future__ import annotations

import pathlib

import numpy as np
import pytest

import changing_method_functions as cmf
import s2s_ad
from conftest import assert_every_mode, assert_numba_agrees_with_differences

X = np.array([0.6, -1.1, 0.9])

CASES = [
    cmf.leapfrog,
    cmf.optimiser_with_an_early_return,
    cmf.dataclass_tally_in_branches,
    cmf.inherited_changing_methods,
    cmf.in_place_update_seen_through_another_name,
    cmf.fluent_method_called_for_its_effect,
    cmf.changed_in_a_while_loop,
    cmf.caching_forward_pass,
    cmf.forward_in_a_loop,
    cmf.values_popped,
    cmf.an_update_that_meets_a_number_then_an_array,
    cmf.values_of_methods_on_an_object_nothing_changes,
]


@pytest.mark.parametrize("f", CASES, ids=lambda f: f.__name__)
def test_every_mode_agrees_with_differences(f):
    assert_every_mode(f, X.copy())


@pytest.mark.parametrize("f", CASES, ids=lambda f: f.__name__)
def test_numba_backend_agrees_with_differences(f):
    assert_numba_agrees_with_differences(f, X.copy())


def test_leapfrog_against_the_steps_written_out():
    # the same four steps with the object's attributes as plain names: the closed form to compare with
    def written_out(x):
        pos, vel, t = x, np.zeros_like(x), 0.0
        for _ in range(4):
            vel = vel - 0.05 * np.sin(pos)
            pos = pos + 0.1 * vel
            vel = vel - 0.05 * np.sin(pos)
            t += 0.1
        return np.sum(pos ** 2) + t
    assert cmf.leapfrog(X) == pytest.approx(written_out(X), rel=1e-15)
    np.testing.assert_allclose(s2s_ad.grad(cmf.leapfrog)(X.copy()), s2s_ad.grad(written_out)(X.copy()),
                               rtol=1e-13)


def test_the_skipped_update_and_the_count_are_the_objects():
    value, gradient = s2s_ad.value_and_grad(cmf.optimiser_with_an_early_return)(X.copy())
    assert value == pytest.approx(cmf.optimiser_with_an_early_return(X.copy()), rel=1e-14)
    w = X * (1 - 0.05) * (1 - 0.1) * (1 - 0.15)  # three steps taken, the fourth skipped: steps == 3
    np.testing.assert_allclose(gradient, 3 * 3 * w ** 2 * (0.95 * 0.9 * 0.85), rtol=1e-12)


def test_arguments_are_left_as_they_were():
    x = X.copy()
    s2s_ad.grad(cmf.in_place_update_seen_through_another_name)(x)
    np.testing.assert_array_equal(x, X)


SOURCE = pathlib.Path(cmf.__file__).read_text().splitlines()


@pytest.mark.parametrize("f, words", [
    (cmf.method_changing_an_object_another_name_holds, "counter is not held so here"),
    (cmf.method_changing_what_a_function_made, "the call of .add() made for its effect"),
    (cmf.method_passing_its_object_on, "self is used otherwise than by its attributes"),
    (cmf.method_updating_an_argument_in_place, "self.a is the argument x"),
    (cmf.method_storing_into_a_frozen_dataclass, "Fixed is a frozen dataclass"),
    (cmf.method_returning_its_object, "Queue.itself uses its object otherwise than by its attributes"),
    (cmf.changing_calls_inside_an_expression, "called in a statement of its own"),
], ids=lambda v: getattr(v, "__name__", None) or "")
def test_what_cannot_be_followed_is_refused_at_the_users_line_before_running(f, words):
    with pytest.raises(s2s_ad.TransformError) as caught:
        s2s_ad.grad(f)(X.copy())
    assert words in str(caught.value), str(caught.value)
    assert caught.value.filename == cmf.__file__
    assert "# REFUSED" in SOURCE[caught.value.line - 1], (caught.value.line, SOURCE[caught.value.line - 1])


def test_a_forward_pass_that_keeps_its_input_against_the_closed_form():
    # h = tanh(x0 x), h2 = tanh(x h); the layer's cache is h and it counted 2 calls
    def written_out(x):
        h = np.tanh(x * x[0])
        h2 = np.tanh(x * h)
        return np.sum(h2) + np.sum(h ** 2) * 2
    assert cmf.caching_forward_pass(X) == pytest.approx(written_out(X), rel=1e-15)
    np.testing.assert_allclose(s2s_ad.grad(cmf.caching_forward_pass)(X.copy()), s2s_ad.grad(written_out)(X.copy()),
                               rtol=1e-13)


def test_values_of_methods_that_change_nothing_are_any_calls():
    # x * x + 2 x * x: 6 x
    np.testing.assert_allclose(s2s_ad.grad(cmf.values_of_methods_on_an_object_nothing_changes)(X.copy()), 6 * X,
                               rtol=1e-14)
