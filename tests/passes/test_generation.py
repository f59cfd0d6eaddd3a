"""Properties of the generated code: activity, identity of functions, no waste."""
import math
from math import sin

import numpy as np
import numpy as xp
import pytest
from numpy import tanh

import s2s_ad
from conftest import numeric_grad

SCALE = 3.0


def uses_y_only_as_constant(x, y):
    return x * y + y ** 3


def has_dead_code(x):
    unused = np.exp(x)
    return x * 2.0


def numpy_by_alias(x):
    return xp.sum(xp.tanh(x) * 2.0)


def numpy_imported_name(x):
    return np.sum(tanh(x) * 2.0)


def math_imported_name(x):
    return sin(x) * math.cos(x)


def math_by_module(x):
    return math.sin(x) * math.cos(x)


def uses_global_constant(x):
    return SCALE * x * x


def test_no_adjoint_code_for_inactive_values():
    text = s2s_ad.source(uses_y_only_as_constant, wrt="x", args=(1.0, 2.0))
    assert "d_y" not in text and "y_pow" not in text.split("# reverse sweep")[1]
    assert s2s_ad.grad(uses_y_only_as_constant)(1.5, 2.0) == pytest.approx(2.0)


def test_values_that_do_not_reach_the_result_are_dropped():
    text = s2s_ad.source(has_dead_code, args=(1.0,))
    assert "exp" not in text
    assert s2s_ad.grad(has_dead_code)(0.3) == pytest.approx(2.0)


@pytest.mark.parametrize("pair", [(numpy_by_alias, numpy_imported_name), (math_imported_name, math_by_module)],
                         ids=["numpy", "math"])
def test_functions_are_recognised_by_identity_not_spelling(pair):
    x = np.array([0.1, 0.7, -0.4]) if pair[0] is numpy_by_alias else 0.7
    first, second = (s2s_ad.grad(f)(x) for f in pair)
    np.testing.assert_allclose(first, second)
    np.testing.assert_allclose(first, numeric_grad(pair[0], [x], 0), rtol=1e-6)


def test_global_constants_are_read():
    assert s2s_ad.grad(uses_global_constant)(2.0) == pytest.approx(12.0)


def test_scalar_code_has_no_helper_calls():
    text = s2s_ad.source(math_by_module, args=(0.5,))
    body = text.split("# reverse sweep")[1]
    assert "unbroadcast" not in body and "np.sum" not in body


def test_generic_code_undoes_broadcasting_only_where_shapes_may_differ():
    def same_shapes(x):
        return np.sum(np.tanh(x) * 2.0 + x)

    text = s2s_ad.source(same_shapes)
    assert "unbroadcast" not in text  # tanh(x)*2 and x provably share x's shape


def with_methods(x, y):
    m = x.reshape(2, 3).T
    s = m.sum(axis=0) * x.mean() + x.max() + m.dot(y).prod()
    return s.sum() + x.clip(0.2, 0.8).sum() + x.ravel().min() + x.flatten().sum() + x.copy().squeeze().sum()


def test_array_methods_work_like_their_functions():
    x = np.array([0.15, 0.9, 0.4, 0.55, 0.3, 0.7])
    got = s2s_ad.grad(with_methods, wrt=(0, 1))(x, np.array([0.5, 1.5]))
    np.testing.assert_allclose(got[0], numeric_grad(with_methods, [x, np.array([0.5, 1.5])], 0), rtol=1e-6)
    np.testing.assert_allclose(got[1], numeric_grad(with_methods, [x, np.array([0.5, 1.5])], 1), rtol=1e-6)


def simulate(heat, a):
    temp = np.zeros(heat.shape[0] + 1)
    for t in range(heat.shape[0]):
        temp[t + 1] = temp[t] + a * (heat[t] - temp[t])
    return np.sum(temp ** 2)


def test_a_value_an_expression_repeats_is_computed_once():
    from conftest import assert_gradient_matches
    heat = np.array([1.0, 2.0, 0.5, 3.0])
    assert_gradient_matches(simulate, (heat, 0.3), wrt=(0, 1))
    text = s2s_ad.source(simulate, args=(heat, 0.3))
    forward, backward = text.split("# reverse sweep")
    assert forward.count("temp[t]") == 1          # one read, used twice
    # so one update of its adjoint (carried to the next trip in a local: carried_elements.py)
    assert backward.count("d_temp[t]") == 1 and "d_total_1 = d_temp[t] + d_temp_part" in backward


def reads_around_writes(x):
    a = x.copy()
    b = a[0] * 2.0 + (a[0] if x[1] > 0.0 else x[2]) + a[0] ** 2
    a[0] = b
    c = a[0] * a[0] + a[1]
    a[1] = a[0] * 3.0
    return c + a[1] * a[0]


def test_reused_reads_never_outlive_a_write_or_a_branch():
    from conftest import assert_gradient_matches
    for x in (np.array([0.5, 1.5, -0.7]), np.array([0.5, -1.5, -0.7])):
        assert_gradient_matches(reads_around_writes, (x,))


def invariant_arithmetic(x, dt, n):
    s = x
    for i in range(n):
        for j in range(2):
            s = s + 0.5 * dt * s - dt * i + (-x) * 0.01 * j
        s = s * (1.0 + dt)
    return s


def test_invariant_arithmetic_on_numbers_runs_once_before_the_loop():
    from conftest import assert_gradient_matches
    assert_gradient_matches(invariant_arithmetic, (0.7, 0.1, 4), wrt=(0, 1))
    assert s2s_ad.grad(invariant_arithmetic, wrt=(0, 1))(0.7, 0.1, 0) == (1.0, 0.0)
    text = s2s_ad.source(invariant_arithmetic, wrt=(0, 1), args=(0.7, 0.1, 4))
    forward = text.split("# reverse sweep")[0]
    before_loops = forward.split("for ")[0]
    assert "0.5 * dt" in before_loops and "1.0 + dt" in before_loops and "-x" in before_loops
    assert "dt * i" not in before_loops  # i changes


def divides_in_a_loop(x, n):
    s = 1.0
    for i in range(n):
        s = s + 1.0 / x + s * x
    return s


def test_what_may_raise_leaves_a_loop_only_under_its_test():
    assert s2s_ad.grad(divides_in_a_loop)(0.0, 0) == 0.0  # a loop that never runs divides by nothing
    with pytest.raises(ZeroDivisionError):  # one that runs divides, as the user's does
        s2s_ad.grad(divides_in_a_loop)(0.0, 3)
    ssa = s2s_ad.source(divides_in_a_loop, args=(2.0, 3), stage="hoist_invariants")
    assert ssa.index("1.0 / x") > ssa.index("for ")  # (lowering moves what cannot raise: it writes no test)
    forward = s2s_ad.source(divides_in_a_loop, args=(2.0, 3)).split("# reverse sweep")[0]
    assert "    if steps:" in forward and forward.index("if steps:") < forward.index("1.0 / x") < forward.index("for ")


def test_arrays_stay_in_the_loop():
    def scale(x, w, n):
        s = x
        for i in range(n):
            s = s * 0.5 + w * 2.0
        return np.sum(s)
    from conftest import assert_gradient_matches
    assert_gradient_matches(scale, (np.array([1.0, 2.0]), np.array([[0.5], [1.5]]), 3), wrt=(0, 1))
    forward = s2s_ad.source(scale, wrt=(0, 1), args=(np.ones(2), np.ones((2, 1)), 3)).split("# reverse sweep")[0]
    assert forward.index("w * 2.0") > forward.index("for ")  # only numbers move: arrays may fail to broadcast


def spread_statistics(x):
    return np.sum(np.std(x, axis=0, ddof=1)) + np.var(x) * 2.0 + np.std(x[0], keepdims=True)[0] + x.var(axis=1).sum()


def test_variance_and_standard_deviation_have_rules():
    from conftest import assert_gradient_matches
    x = np.random.default_rng(3).normal(size=(4, 3))
    assert_gradient_matches(spread_statistics, (x,))
    point = np.array([0.3, 1.2, -0.4])
    hessian = s2s_ad.hessian(std_times_energy)(point)
    gradient, h = s2s_ad.grad(std_times_energy), 1e-6
    by_differences = np.array([(gradient(point + h * e) - gradient(point - h * e)) / (2 * h) for e in np.eye(3)])
    assert np.allclose(hessian, by_differences, rtol=1e-5, atol=1e-6)


def std_times_energy(x):
    return np.std(x) * np.sum(x ** 2)
