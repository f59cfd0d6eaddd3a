"""A reverse loop's sum of products by a factor no trip changes is summed first and multiplied once
(s2s_ad/passes/invariant_factors.py).

Time-stepping loops whose step reads a parameter through a value computed before the loop (what the
pass is for), checked against central differences for loops of several trips, one and none, and
against the code without the pass (equal but for rounding); the code is read for where the product
is made.  White-box cases on the IR for what must stay: an adjoint another statement of the trip
reads, a factor the loop changes, a term with no factor.
"""
import dataclasses
import operator
import types

import numpy as np
import pytest

import s2s_ad
from conftest import numeric_grad
from s2s_ad.core import ir
from s2s_ad.passes.invariant_factors import sum_before_factors


def swing(length, damping, x):
    n = x.shape[0]
    theta = np.zeros(n + 1)
    omega = np.zeros(n + 1)
    theta[0] = 1.0
    for t in range(n):
        theta[t + 1] = theta[t] + 0.01 * omega[t]
        omega[t + 1] = omega[t] + 0.01 * (-9.81 / length * np.sin(theta[t]) - damping * omega[t]) + x[t]
    return np.sum(theta ** 2)


def scaled_growth(rate, scale, x):
    n = x.shape[0]
    y = np.ones(n + 1)
    for t in range(n):
        y[t + 1] = y[t] + (rate / scale) * np.tanh(y[t]) * 0.1 + x[t]
    return np.sum(y ** 2)


def _args(function, n):
    x = np.random.default_rng(n + 3).normal(size=n) * 0.2
    return (1.3, 0.4, x) if function is swing else (0.7, 1.9, x)


def _reverse_loop(source):
    return source[source.index("    for t in reversed(steps):"):]


@pytest.mark.parametrize("n", [12, 1, 0])
@pytest.mark.parametrize("function", [swing, scaled_growth])
def test_gradients_match_differences(function, n):
    args = _args(function, n)
    df = s2s_ad.grad(function, wrt=(0, 1, 2))
    for i, gradient in enumerate(df(*args)):
        np.testing.assert_allclose(gradient, numeric_grad(function, args, i), rtol=1e-5, atol=1e-7)


def test_the_parameters_adjoint_is_multiplied_once_after_the_loop():
    source = s2s_ad.source(swing, wrt=(0, 1), args=_args(swing, 12))
    loop = _reverse_loop(source)
    inside, after = loop.split("\n    del ")[0], loop[loop.index("\n    if steps:"):]
    assert "/ length" not in inside and "d_ratio_summed = d_ratio_summed + d_ratio" in inside, source
    assert "d_length = d_length + -d_ratio_summed * ratio / length" in after, source


def test_equal_but_for_rounding_to_the_code_without_the_pass(monkeypatch):
    args = _args(swing, 40)
    got = s2s_ad.grad(swing, wrt=(0, 1))(*args)
    from s2s_ad.driver import pass_manager as passes
    monkeypatch.setitem(passes.PASSES, "sum_before_factors",
                        dataclasses.replace(passes.PASSES["sum_before_factors"], run=lambda fn, context: fn))
    copy = types.FunctionType(swing.__code__, swing.__globals__, swing.__name__)
    plain = s2s_ad.grad(copy, wrt=(0, 1))
    assert "/ length" in _reverse_loop(plain.source_for(*args))
    np.testing.assert_allclose(got, plain(*args), rtol=1e-12)


def _loop(body, after=()):
    head = [ir.Assign("steps", ir.Call(range, (ir.Var("n"),))), ir.Assign("d_a", ir.Const(0.0))]
    loop = ir.For("t", ir.Var("steps"), body, reverse=True)
    return ir.Function("d_f", ["n", "a", "b"], head + [loop] + list(after) + [ir.Return(ir.Var("d_a"))])


def _added(term):
    return ir.Assign("d_a", ir.Call(operator.add, (ir.Var("d_a"), term)))


def test_what_is_summed_and_what_stays():
    numbers = {"a", "b"}.__contains__
    varying = ir.Assign("v", ir.Call(operator.mul, (ir.Var("t"), ir.Const(2.0))))
    term = ir.Call(operator.truediv, (ir.Call(operator.mul, (ir.Call(operator.neg, (ir.Var("v"),)), ir.Var("a"))),
                                      ir.Var("b")))
    made = sum_before_factors(_loop([varying, _added(term)]), numbers)
    start, loop, guard = made.body[2], made.body[3], made.body[4]
    assert start.target == "v_summed" and ir.is_const(start.value, 0.0)
    assert loop.body[1] == ir.Assign("v_summed", ir.Call(operator.add, (ir.Var("v_summed"), ir.Var("v"))))
    assert isinstance(guard, ir.If) and guard.test == ir.Var("steps")
    assert ir.names_read(guard.body[0].value) and "v_summed" in set(ir.names_read(guard.body[0].value))
    # the adjoint read by another statement of the trip
    fn = _loop([varying, _added(term), ir.Assign("w", ir.Var("d_a"))])
    assert sum_before_factors(fn, numbers) is fn
    # a factor the loop changes
    fn = _loop([varying, ir.Assign("b", ir.Var("v")), _added(term)])
    assert sum_before_factors(fn, numbers) is fn
    # a factor not proven a number
    fn = _loop([varying, _added(term)])
    assert sum_before_factors(fn, {"a"}.__contains__) is fn
    # a term with no factor
    fn = _loop([varying, _added(ir.Var("v"))])
    assert sum_before_factors(fn, numbers) is fn
    # a divisor that varies (the quotient is not linear in it)
    fn = _loop([varying, _added(ir.Call(operator.truediv, (ir.Var("a"), ir.Var("v"))))])
    assert sum_before_factors(fn, numbers) is fn
