"""A reverse loop keeps the adjoint element one trip writes for the next in a local
(s2s_ad/passes/carried_elements.py).

The functions are time-stepping loops of the kind the pass is for (each step reads step t and
writes step t + 1 or t + 2, over ranges stepping by one or two) and loops it must leave alone (a
read counting from the end, a loop counting down, the adjoint read after the loop, a nested loop).
Every gradient is checked against central differences, also for loops that do not run or run
once; the code is read for whether the element was carried; and float32 and matrix adjoints, which
stay arrays, give what the code without the pass gives, to rounding.
"""
import numpy as np
import pytest

import s2s_ad
from s2s_ad.core import ir
from s2s_ad.passes.carried_elements import carry_elements
from conftest import numeric_grad
# the loops of the dead-store tests: the same shapes of time-stepping loop, and those left alone
from test_dead_element_stores import (counting_down, in_a_nested_loop, one_step_back, read_after_the_loop,
                                      read_from_the_end, two_steps_back)




def heating(heat, outside, a, b):
    n = heat.shape[0]
    temp = np.zeros(n + 1)
    temp[0] = 18.0
    for t in range(n):
        temp[t + 1] = temp[t] + a * (outside[t] - temp[t]) + b * heat[t]
    return np.sum((temp - 20.0) ** 2) + 0.1 * np.sum(heat ** 2)




def by_twos(x):
    y = np.zeros(x.shape[0] + 2)
    for t in range(0, x.shape[0], 2):
        y[t + 2] = np.sin(y[t]) * 0.7 + x[t]
    return np.sum(y ** 2)


def two_states(x):
    u = np.zeros(x.shape[0] + 1)
    v = np.zeros(x.shape[0] + 1)
    u[0] = 1.0
    for t in range(x.shape[0]):
        u[t + 1] = u[t] + 0.1 * v[t]
        v[t + 1] = v[t] - 0.1 * np.sin(u[t]) + x[t]
    return np.sum(u ** 2) + np.sum(v)










def rows(x):
    y = np.zeros((x.shape[0] + 1, 2))
    for t in range(x.shape[0]):
        y[t + 1] = y[t] * 0.5 + x[t]
    return np.sum(y ** 2)


def _args(function, n):
    rng = np.random.default_rng(n)
    x = rng.normal(size=n)
    if function is heating:
        return (x, rng.normal(size=n), 0.2, 0.7), (0, 2, 3)
    if function is read_after_the_loop:
        return (x, 0.7), (0, 1)
    return (x,), (0,)


# (function, how many loops carry an element in the Python code)
CASES = [(one_step_back, 1), (heating, 1), (two_steps_back, 1), (by_twos, 1), (two_states, 1),
         (read_from_the_end, 0), (counting_down, 0), (read_after_the_loop, 0), (in_a_nested_loop, 0), (rows, 0)]


@pytest.mark.parametrize("n", [9, 1, 0])
@pytest.mark.parametrize("function, carried", CASES, ids=[c[0].__name__ for c in CASES])
def test_gradients_match_differences(function, carried, n):
    args, wrt = _args(function, n)
    df = s2s_ad.grad(function, wrt=wrt)
    for i, gradient in zip(wrt, df(*args)):
        np.testing.assert_allclose(gradient, numeric_grad(function, args, i), rtol=1e-5, atol=1e-7)
    assert df.source_for(*args).count("    if steps:") == carried, df.source_for(*args)


def _without_the_pass(monkeypatch):
    import dataclasses
    from s2s_ad.driver import pass_manager as passes
    unchanged = dataclasses.replace(passes.PASSES["carry_elements"], run=lambda fn, context: fn)
    monkeypatch.setitem(passes.PASSES, "carry_elements", unchanged)


@pytest.mark.parametrize("function", [one_step_back, two_states, two_steps_back])
def test_float32_adjoints_stay_arrays_and_agree_to_rounding(function, monkeypatch):
    x = np.random.default_rng(5).normal(size=12).astype(np.float32)
    got = s2s_ad.grad(function)(x)
    assert got.dtype == np.float32
    assert "    if steps:" in s2s_ad.grad(function).source_for(x)
    _without_the_pass(monkeypatch)
    copy = _copy(function)
    assert "    if steps:" not in s2s_ad.grad(copy).source_for(x)
    want = s2s_ad.grad(copy)(x)
    np.testing.assert_allclose(got, want, rtol=2e-6, atol=1e-6)


def _copy(function):
    """A copy of ``function``: a new function object, with a cache entry of its own."""
    import types
    return types.FunctionType(function.__code__, function.__globals__, function.__name__)



def test_the_carried_read_moves_before_the_loop():
    """White-box, on the IR: the read of d_y[t + 1] and the update of d_y[t] become one local; a
    rebinding of what the update reads after it, a plain store, or a read of d_y[t + 2] keeps the
    loop as it was."""
    import operator
    getitem = operator.getitem
    plus_one = ir.Call(operator.add, (ir.Var("t"), ir.Const(1)))
    read = ir.Assign("d_v", ir.Call(getitem, (ir.Var("d_y"), plus_one)))
    write = ir.Store("d_y", ir.Var("t"), ir.Call(operator.mul, (ir.Var("d_v"), ir.Const(0.5))), op=operator.add)
    body = [ir.Assign("steps", ir.Call(range, (ir.Var("n"),))),
            ir.Assign("d_y", ir.Call(np.zeros, (ir.Var("n"),))),
            ir.Assign("d_y", ir.Call(s2s_ad.core.float_lists.cells, (ir.Var("d_y"),)))]
    ret = [ir.Return(ir.Const(0.0))]
    fn = ir.Function("d_f", ["n"], body + [ir.For("t", ir.Var("steps"), [read, write], reverse=True)] + ret)
    made = carry_elements(fn)
    assert isinstance(made.body[3], ir.If) and [type(s) for s in made.body[4].body] == [ir.Assign]
    # the local read after the write: the carried value is computed at the end of the trip
    after = ir.Assign("d_w", ir.Call(operator.neg, (ir.Var("d_v"),)))
    fn = ir.Function("d_f", ["n"], body + [ir.For("t", ir.Var("steps"), [read, write, after], reverse=True)] + ret)
    assert [getattr(s, "target", None) for s in carry_elements(fn).body[4].body] == ["d_w", "d_v"]
    # ... unless a name the write reads changes after it
    write_s = ir.Store("d_y", ir.Var("t"), ir.Var("d_s"), op=operator.add)
    rebind = ir.Assign("d_s", ir.Const(2.0))
    twice = ir.Assign("d_s", ir.Call(operator.mul, (ir.Var("d_v"), ir.Const(2.0))))
    loop = ir.For("t", ir.Var("steps"), [read, twice, write_s, after, rebind], reverse=True)
    fn = ir.Function("d_f", ["n"], body + [loop] + ret)
    assert carry_elements(fn) is fn
    loop = ir.For("t", ir.Var("steps"), [read, twice, write_s, after], reverse=True)  # (no rebinding: carried)
    fn = ir.Function("d_f", ["n"], body + [loop] + ret)
    assert carry_elements(fn) is not fn
    # a plain store (into a matrix it would fill a row with one number, which a local would not be)
    plain = ir.Store("d_y", ir.Var("t"), ir.Call(operator.mul, (ir.Var("d_v"), ir.Const(0.5))))
    fn = ir.Function("d_f", ["n"], body + [ir.For("t", ir.Var("steps"), [read, plain], reverse=True)] + ret)
    assert carry_elements(fn) is fn
    ahead = ir.Assign("d_w", ir.Call(getitem, (ir.Var("d_y"), ir.Call(operator.add, (ir.Var("t"), ir.Const(2))))))
    fn = ir.Function("d_f", ["n"], body + [ir.For("t", ir.Var("steps"), [ahead, read, write], reverse=True)] + ret)
    assert carry_elements(fn) is fn


def test_an_earlier_update_of_the_carried_element_joins_the_carried_sum():
    """White-box: ``d_y[t] += d_a`` before the carried update of ``d_y[t]`` goes, its addend joining
    the carried sum in the order the two stores added (``(d_y[t] + d_a) + w``); a rebinding of
    ``d_a`` between the two, or a read of ``d_y`` between them, keeps the store."""
    import operator
    getitem = operator.getitem
    plus_one = ir.Call(operator.add, (ir.Var("t"), ir.Const(1)))
    read = ir.Assign("d_v", ir.Call(getitem, (ir.Var("d_y"), plus_one)))
    first = ir.Store("d_y", ir.Var("t"), ir.Var("d_a"), op=operator.add)
    addend = ir.Assign("d_a", ir.Call(operator.mul, (ir.Var("d_v"), ir.Const(3.0))))
    write = ir.Store("d_y", ir.Var("t"), ir.Call(operator.mul, (ir.Var("d_v"), ir.Const(0.5))), op=operator.add)
    body = [ir.Assign("steps", ir.Call(range, (ir.Var("n"),))),
            ir.Assign("d_y", ir.Call(np.zeros, (ir.Var("n"),))),
            ir.Assign("d_y", ir.Call(s2s_ad.core.float_lists.cells, (ir.Var("d_y"),)))]
    ret = [ir.Return(ir.Const(0.0))]
    fn = ir.Function("d_f", ["n"], body + [ir.For("t", ir.Var("steps"), [read, addend, first, write], reverse=True)] + ret)
    loop = carry_elements(fn).body[4]
    assert [type(s) for s in loop.body] == [ir.Assign, ir.Assign]
    carried = loop.body[1].value
    assert carried.fn is operator.add and carried.args[0].fn is operator.add
    assert carried.args[0].args[1] == ir.Var("d_a") and carried.args[0].args[0].fn is getitem
    # d_a bound again between the update and the carried one: the update stays
    again = ir.Assign("d_a", ir.Const(2.0))
    fn = ir.Function("d_f", ["n"], body + [ir.For("t", ir.Var("steps"), [read, addend, first, again, write],
                                                  reverse=True)] + ret)
    assert sum(isinstance(s, ir.Store) for s in carry_elements(fn).body[4].body) == 1
    # d_y read between them: the update stays
    peek = ir.Assign("d_p", ir.Call(getitem, (ir.Var("d_y"), ir.Var("t"))))
    fn = ir.Function("d_f", ["n"], body + [ir.For("t", ir.Var("steps"), [read, addend, first, peek, write],
                                                  reverse=True)] + ret)
    made = carry_elements(fn)
    assert made is fn or sum(isinstance(s, ir.Store) for s in made.body[-2].body) >= 1
