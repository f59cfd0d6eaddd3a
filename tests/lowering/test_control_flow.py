"""Loops and branches against finite differences, on inputs that take different paths."""
import sys

import numpy as np
import pytest

import s2s_ad
from conftest import assert_gradient_matches
import control_flow_functions as cf

RNG = np.random.default_rng(7)


@pytest.mark.parametrize("r, x, n", [(3.1, 0.2, 5), (2.5, -0.3, 40), (3.1, 0.2, 0)])
def test_loop_carried_recurrence(r, x, n):
    assert_gradient_matches(cf.logistic_loop, (r, x, n), (0, 1))


@pytest.mark.parametrize("x, y", [(2.0, 1.0), (0.5, 1.0), (0.1, 0.2), (3.0, -2.0)])
def test_if_else_and_conditional_expression(x, y):
    assert_gradient_matches(cf.two_branches, (x, y), (0, 1))


@pytest.mark.parametrize("x, y", [(1.5, 2.0), (1.5, -0.5), (1.5, -3.0), (-1.0, 2.0)])
def test_nested_if_elif_else(x, y):
    assert_gradient_matches(cf.nested_branches, (x, y), (0, 1))


@pytest.mark.parametrize("x", [0.5, 2.0])
def test_variable_assigned_in_one_branch_only(x):
    assert_gradient_matches(cf.branch_assigns_one_side, (x, 3.0), (0, 1))


@pytest.mark.parametrize("x, y", [(1.0, 2.0), (1.0, -2.0), (-1.0, 2.0), (6.0, -1.0)])
def test_and_or_not_in_conditions(x, y):
    assert_gradient_matches(cf.boolean_conditions, (x, y), (0, 1))


@pytest.mark.parametrize("x, n", [(0.7, 10), (3.0, 10), (0.5, 0), (0.5, 2)])
def test_break_and_continue(x, n):
    assert_gradient_matches(cf.with_continue_and_break, (x, n))


@pytest.mark.parametrize("x", [5.0, 0.3, 0.05])
def test_while_with_data_dependent_condition(x):
    assert_gradient_matches(cf.while_halving, (x,))


@pytest.mark.parametrize("x, n", [(1.0, 10), (1.0, 2), (0.2, 3), (5.0, 4)])
def test_return_inside_loop(x, n):
    assert_gradient_matches(cf.return_inside_loop, (x, n))


@pytest.mark.parametrize("x", [2.0, 0.5])
def test_return_from_branch(x):
    assert_gradient_matches(cf.return_from_branch, (x,))


@pytest.mark.parametrize("n, m", [(4, 5), (0, 3), (3, 0), (5, 2)])
def test_nested_loops_with_dependent_bounds(n, m):
    assert_gradient_matches(cf.nested_loops, (0.3, n, m))


@pytest.mark.parametrize("n", [7, 6, 0, -3])
def test_range_with_start_and_negative_step(n):
    assert_gradient_matches(cf.range_with_start_and_step, (1.3, n))


def test_loop_over_rows_of_an_array():
    w, data = RNG.normal(size=3), RNG.normal(size=(4, 3))
    assert_gradient_matches(cf.loop_over_array_rows, (w, data), (0, 1))


def test_enumerate_zip_and_reversed():
    x, y = RNG.normal(size=4), RNG.normal(size=3)
    assert_gradient_matches(cf.enumerate_zip_reversed, (x, y), (0, 1))


@pytest.mark.parametrize("n", [0, 1, 5])
def test_reversed_range(n):
    assert_gradient_matches(cf.reversed_range, (0.9, n))


def test_loop_over_a_tuple():
    assert_gradient_matches(cf.loop_over_tuple, (0.4, -1.2), (0, 1))


def test_zero_trip_while():
    assert_gradient_matches(cf.zero_trip_while, (3.0,))


def test_augmented_assignment():
    assert_gradient_matches(cf.augmented_assignment, (1.5, 0.7), (0, 1))


def test_ode_integrator_loop():
    assert_gradient_matches(cf.ode_euler, (0.8, 1.2, 200), (0, 1))


def test_building_heating_simulation():
    schedule, outside = RNG.uniform(0, 2, size=24), RNG.uniform(-5, 10, size=24)
    assert_gradient_matches(cf.building_heating, (schedule, outside, 20.0), (0, 1, 2), rtol=1e-4)


@pytest.mark.parametrize("n", [0, 1, 6])
def test_conditional_expression_in_loop(n):
    assert_gradient_matches(cf.conditional_expression_in_loop, (0.8, n))


def test_generated_loop_reads_like_a_reverse_loop():
    text = s2s_ad.source(cf.logistic_loop, wrt=(0, 1), args=(3.1, 0.2, 5))
    forward, sweep = text.split("# reverse sweep")
    assert "for i in steps:" in forward and "tape.append(s)" in forward
    assert "for i in reversed(steps):" in sweep and "s = tape.pop()" in sweep


@pytest.mark.parametrize("n", [0, 1, 2, 3, 6])
def test_loop_carried_values_are_updated_together(n):
    assert s2s_ad.value_and_grad(cf.swap_in_a_loop)(0.5, n)[0] == pytest.approx(cf.swap_in_a_loop(0.5, n))
    assert_gradient_matches(cf.swap_in_a_loop, (0.5, n))
    assert s2s_ad.value_and_grad(cf.pair_carried_through_a_loop)(0.7, n)[0] == pytest.approx(
        cf.pair_carried_through_a_loop(0.7, n))
    assert_gradient_matches(cf.pair_carried_through_a_loop, (0.7, n))


@pytest.mark.parametrize("n", [0, 1, 3])
def test_a_nested_loop_whose_outer_loop_may_not_run(n):
    # regression: the inner loop's starting copy was taken for an outer loop value (unbound when n = 0)
    assert_gradient_matches(cf.loop_in_a_loop_that_may_not_run, (0.5, n))


_AFTER_EARLY_EXITS = '''import numpy as np


def after_continue(x):
    s = 0.0
    for i in range(3):
        if i == 1:
            continue
        w = x * 1.0
        s = s + w[0]
        s = s + w[i + 5]  # out of range: after_continue
    return s


def after_break(x):
    s = 0.0
    for i in range(3):
        if s > 100.0:
            break
        s = s + x[0]
        s = s + x[i + 5]  # out of range: after_break
    return s


def after_a_return_in_a_loop(x):
    for i in range(3):
        if x[0] > 100.0:
            return x[0]
    t = x * 2.0
    return t[7]  # out of range: after_a_return_in_a_loop
'''


@pytest.mark.parametrize("name", ["after_continue", "after_break", "after_a_return_in_a_loop"])
def test_an_error_after_an_early_exit_names_its_own_line(tmp_path, name):
    """The statements after a ``continue``, ``break`` or ``return`` run under a guard the rewrite adds;
    each keeps its own line: an error's note and the generated code's ``# line`` comments name it,
    not the guard's first statement."""
    from conftest import module_from_source
    module = module_from_source(tmp_path, "early_exits_", _AFTER_EARLY_EXITS)
    function = getattr(module, name)
    marked = 1 + next(i for i, text in enumerate(_AFTER_EARLY_EXITS.splitlines())
                      if text.endswith(f"# out of range: {name}"))
    with pytest.raises(IndexError) as caught:
        s2s_ad.grad(function)(np.ones(3))
    if sys.version_info >= (3, 11):  # (exceptions carry notes from Python 3.11 on)
        note = "\n".join(getattr(caught.value, "__notes__", []))
        assert f"generated from line {marked} of " in note, note
    assert f"# line {marked}" in s2s_ad.grad(function).source_for(np.ones(3))
