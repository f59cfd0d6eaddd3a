"""A loop's arithmetic that no trip changes runs once, before the loop: a reverse loop's recomputed
values and a forward loop's own (s2s_ad/passes/reverse_invariants.py).

The functions are time-stepping loops whose step divides by a parameter (what the pass is for) and
loops it must leave alone (the quotient's operand changes in the loop; a value recomputed from an
array element).  Every gradient is checked against central differences and against the Numba-free
code without the pass, also for loops that run once or not at all; the code is read for where the
quotient is computed; and a zero divisor under a loop that runs no trip raises nothing, as the
user's function raises nothing.
"""
import dataclasses
import operator
import types

import numpy as np
import pytest

import s2s_ad
from s2s_ad.core import ir
from s2s_ad.passes.reverse_invariants import hoist_forward_invariants, hoist_reverse_invariants
from conftest import numeric_grad


def swing(length, damping, x):
    n = x.shape[0]
    theta = np.zeros(n + 1)
    omega = np.zeros(n + 1)
    theta[0] = 1.0
    for t in range(n):
        theta[t + 1] = theta[t] + 0.01 * omega[t]
        omega[t + 1] = omega[t] + 0.01 * (-9.81 / length * np.sin(theta[t]) - damping * omega[t]) + x[t]
    return np.sum(theta ** 2)


def decaying(rate, x):
    """The divisor changes in the loop: the quotient stays in it."""
    n = x.shape[0]
    y = np.zeros(n + 1)
    scale = 1.0
    for t in range(n):
        scale = scale * 0.9
        y[t + 1] = y[t] * (rate / scale) + x[t]
    return np.sum(y ** 2)


def by_element(rate, x):
    """A quotient of an element the loop reads: it changes each trip."""
    n = x.shape[0]
    y = np.zeros(n + 1)
    for t in range(n):
        y[t + 1] = y[t] * 0.5 + x[t] / rate * np.sin(y[t])
    return np.sum(y ** 2)


def _args(function, n):
    rng = np.random.default_rng(n + 11)
    x = rng.normal(size=n) * 0.3
    if function is swing:
        return (1.3, 0.4, x), (0, 1, 2)
    return (1.7, x), (0, 1)


def _copy(function):
    return types.FunctionType(function.__code__, function.__globals__, function.__name__)


def _reverse_loop(source):
    return source[source.index("    for t in reversed(steps):"):]


def _forward_loop(source):
    return source[source.index("    for t in steps:"):source.index("# reverse sweep")]


# (function, a statement the reverse loop must not hold, or must hold (False))
CASES = [(swing, "ratio = -9.81 / length", True), (decaying, "ratio = rate / scale", False),
         (by_element, "/ rate", False)]


@pytest.mark.parametrize("n", [9, 1, 0])
@pytest.mark.parametrize("function, statement, hoisted", CASES, ids=[c[0].__name__ for c in CASES])
def test_gradients_match_differences(function, statement, hoisted, n):
    args, wrt = _args(function, n)
    df = s2s_ad.grad(function, wrt=wrt)
    for i, gradient in zip(wrt, df(*args)):
        np.testing.assert_allclose(gradient, numeric_grad(function, args, i), rtol=1e-5, atol=1e-7)
    loop = _reverse_loop(df.source_for(*args))
    if n:
        assert (statement not in loop) if hoisted else (statement in loop), loop
        assert (statement in df.source_for(*args)) or not hoisted
        forward = _forward_loop(df.source_for(*args))
        assert (statement not in forward) if hoisted else (statement in forward), forward


@pytest.mark.parametrize("function", [swing, decaying])
def test_the_same_numbers_as_without_the_pass(function, monkeypatch):
    args, wrt = _args(function, 14)
    got = s2s_ad.grad(function, wrt=wrt)(*args)
    from s2s_ad.driver import pass_manager as passes
    for name in ("hoist_reverse_invariants", "hoist_forward_invariants"):
        unchanged = dataclasses.replace(passes.PASSES[name], run=lambda fn, context: fn)
        monkeypatch.setitem(passes.PASSES, name, unchanged)
    copy = _copy(function)
    source = s2s_ad.grad(copy, wrt=wrt).source_for(*args)
    assert "ratio = " in _reverse_loop(source) and "ratio = " in _forward_loop(source)
    want = s2s_ad.grad(copy, wrt=wrt)(*args)
    for a, b in zip(got, want):
        np.testing.assert_array_equal(a, b)


def test_a_zero_divisor_under_a_loop_that_runs_no_trip_raises_nothing():
    """The user's function divides by length inside the loop only: with no trip it never divides."""
    x = np.zeros(0)
    assert swing(0.0, 0.4, x) == 1.0
    assert s2s_ad.grad(swing, wrt=(0, 1))(0.0, 0.4, x) == (0.0, 0.0)
    with pytest.raises(ZeroDivisionError):  # ... and with trips, the forward sweep divides, as the user's does
        s2s_ad.grad(swing, wrt=(0, 1))(0.0, 0.4, np.ones(3))


def _loop_function(loop_body, after=()):
    head = [ir.Assign("steps", ir.Call(range, (ir.Var("n"),)))]
    loop = ir.For("t", ir.Var("steps"), loop_body, reverse=True)
    return ir.Function("d_f", ["n", "a", "b"], head + [loop] + list(after) + [ir.Return(ir.Var("d_a"))])


def test_what_moves_and_what_stays():
    """White-box, on the IR: a quotient of numbers the loop does not bind moves under ``if steps:``;
    one whose operand the loop binds, one the loop reads before binding, one named after the loop,
    and one of a name not proven a number stay."""
    numbers = {"a", "b"}.__contains__
    quotient = ir.Assign("q", ir.Call(operator.truediv, (ir.Call(operator.neg, (ir.Var("a"),)), ir.Var("b"))))
    use = ir.Assign("d_a", ir.Call(operator.mul, (ir.Var("q"), ir.Var("t"))))
    pop = ir.Assign("d_z", ir.Call(operator.mul, (ir.Var("t"), ir.Const(2))))
    made = hoist_reverse_invariants(_loop_function([pop, quotient, use]), numbers)
    guard, loop = made.body[1], made.body[2]
    assert isinstance(guard, ir.If) and guard.test == ir.Var("steps") and guard.body == [quotient]
    assert quotient not in loop.body and use in loop.body
    # an operand the loop binds
    rebinds = ir.Assign("b", ir.Call(operator.mul, (ir.Var("b"), ir.Const(0.5))))
    fn = _loop_function([rebinds, quotient, use])
    assert hoist_reverse_invariants(fn, numbers) is fn
    # the target read before its assignment in a trip (the previous trip's value)
    fn = _loop_function([use, quotient])
    assert hoist_reverse_invariants(fn, numbers) is fn
    # the target named after the loop
    fn = _loop_function([quotient, use], after=[ir.Assign("d_b", ir.Var("q"))])
    assert hoist_reverse_invariants(fn, numbers) is fn
    # an operand not proven a number (an array the quotient would broadcast: still pure, but not ours to prove)
    fn = _loop_function([quotient, use])
    assert hoist_reverse_invariants(fn, {"a"}.__contains__) is fn
    # a loop that is not a reversed range stays as it is
    forward = ir.Function("d_f", ["n", "a", "b"], [ir.Assign("steps", ir.Call(range, (ir.Var("n"),))),
                                                   ir.For("t", ir.Var("steps"), [quotient, use]),
                                                   ir.Return(ir.Var("d_a"))])
    assert hoist_reverse_invariants(forward, numbers) is forward


def test_a_forward_loop_divides_once_before_it_under_its_test():
    """White-box: the forward loop's quotient moves under ``if steps:``, also where a later statement
    names its target (it holds the value moved, as after the last trip); a reverse loop's stays for
    the reverse pass."""
    numbers = {"a", "b"}.__contains__
    quotient = ir.Assign("q", ir.Call(operator.truediv, (ir.Var("a"), ir.Var("b"))))
    use = ir.Assign("d_a", ir.Call(operator.mul, (ir.Var("q"), ir.Var("t"))))
    head = [ir.Assign("steps", ir.Call(range, (ir.Var("n"),)))]
    fn = ir.Function("d_f", ["n", "a", "b"], head + [ir.For("t", ir.Var("steps"), [quotient, use]),
                                                     ir.Assign("d_b", ir.Var("q")), ir.Return(ir.Var("d_a"))])
    made = hoist_forward_invariants(fn, numbers)
    guard, loop = made.body[1], made.body[2]
    assert isinstance(guard, ir.If) and guard.test == ir.Var("steps") and guard.body == [quotient]
    assert loop.body == [use]
    assert hoist_forward_invariants(_loop_function([quotient, use]), numbers).body[1].reverse  # (unchanged)
    assert hoist_reverse_invariants(fn, numbers) is fn
