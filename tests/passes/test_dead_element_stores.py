"""A reverse loop's stores of zero into adjoint elements nothing reads again are left out
(s2s_ad/passes/dead_element_stores.py).

Each function is a loop whose adjoint zeroes elements: some where no later read can see the zero
(the store goes), some where one can (an element overwritten and read again by an earlier step, a
read counting from the end, a loop running backwards, the adjoint read after the loop, a nested
loop).  Every gradient is checked against central differences on both backends; the code is read
for which stores went.
"""
import numpy as np
import pytest

import s2s_ad
from conftest import numeric_grad, optional_import

BACKENDS = ["python", pytest.param("numba", marks=pytest.mark.skipif(
    optional_import("numba") is None, reason="numba is not installed (pip install 's2s_ad[numba]')"))]


def one_step_back(x):
    """The time-stepping loop: each step reads step t and writes step t + 1."""
    y = np.zeros(x.shape[0] + 1)
    for t in range(x.shape[0]):
        y[t + 1] = y[t] * 0.5 + x[t]
    return np.sum(y ** 2)


def two_steps_back(x):
    y = np.zeros(x.shape[0] + 2)
    for t in range(x.shape[0]):
        y[t + 2] = y[t] * 0.3 + y[t + 1] * 0.2 + x[t]
    return np.sum(y ** 2)


def from_two_by_twos(x):
    y = np.zeros(x.shape[0] + 2)
    for t in range(2, x.shape[0] - 1, 2):
        y[t + 2] = y[t] * 0.7 + x[t] * x[t - 2] + x[t + 1]
    return np.sum(np.sin(y))


def written_twice(x):
    """The first store's zero is dead (only d_y[t] is read after it); the second's is not: the
    adjoint of ``np.sin(y[t + 1])`` adds into that very element after it."""
    y = np.zeros(x.shape[0] + 1)
    for t in range(x.shape[0]):
        y[t + 1] = y[t] + x[t]
        y[t + 1] = np.sin(y[t + 1]) * 0.5 + y[t] * 0.1
    return np.sum(y ** 2)


def read_again_next_step(x):
    """Step t reads y[t + 1] as step t - 1 left it, then overwrites it: the zero of d_y[t + 1] is
    read (the adjoint of that first read adds into it, and step t - 1's reads it); the zero of
    d_y[t + 2] is not."""
    y = np.zeros(x.shape[0] + 2)
    for t in range(x.shape[0]):
        y[t + 1] = np.cos(y[t + 1]) + x[t]
        y[t + 2] = y[t + 1] * 0.5
    return np.sum(y ** 2)


def overwritten_then_read_ahead(x):
    """Step t overwrites y[t] and step t - 1 (run after it, backwards) reads it: the zero is read."""
    y = x.copy()
    for t in range(y.shape[0] - 1):
        y[t] = y[t] * 2.0 + y[t + 1]
    return np.sum(y ** 2)


def read_from_the_end(x):
    """At t = 0, y[t - 1] is y[-1], the last element, which step n - 1 overwrote: its zero is read."""
    y = x.copy()
    for t in range(y.shape[0]):
        y[t] = y[t - 1] * 0.5 + y[t]
    return np.sum(y ** 2)


def counting_down(x):
    """A loop over a range with a negative step: its adjoint runs upwards."""
    y = np.zeros(x.shape[0] + 1)
    for t in range(x.shape[0] - 1, -1, -1):
        y[t] = y[t + 1] * 0.8 + x[t]
    return np.sum(y ** 2)


def read_after_the_loop(x, y0):
    """The gradient by ``y0`` reads d_y[0] after the loop: every element stays as the loop leaves it
    (and the store of zero into d_y[0] after that read, outside the loop, stays too)."""
    y = np.zeros(x.shape[0] + 1)
    y[0] = y0
    for t in range(x.shape[0]):
        y[t + 1] = y[t] * 0.5 + x[t]
    return np.sum(y * y)


def in_a_nested_loop(x):
    y = np.zeros((3, x.shape[0] + 1))
    for k in range(3):
        for t in range(x.shape[0]):
            y[k, t + 1] = y[k, t] * 0.5 + x[t] * k
    return np.sum(y ** 2)


# (function, the zero stores the Python code keeps)
CASES = [(one_step_back, 0), (two_steps_back, 0), (from_two_by_twos, 0), (written_twice, 1), (read_again_next_step, 1),
         (overwritten_then_read_ahead, 1), (read_from_the_end, 1), (counting_down, 1),
         (read_after_the_loop, 2), (in_a_nested_loop, 1)]


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("function, kept", CASES, ids=[c[0].__name__ for c in CASES])
def test_gradients_match_differences_with_the_dead_stores_left_out(function, kept, backend):
    x = np.random.default_rng(3).normal(size=9)
    args = (x, 0.7) if function is read_after_the_loop else (x,)
    wrt = (0, 1) if function is read_after_the_loop else (0,)
    df = s2s_ad.grad(function, wrt=wrt, backend=backend)
    got = df(*args)
    for i, gradient in zip(wrt, got):
        np.testing.assert_allclose(gradient, numeric_grad(function, args, i), rtol=1e-5, atol=1e-7)
    if backend == "python":
        source = df.source_for(*args)
        assert source.count("] = 0.0") == kept, source


def test_the_dead_store_goes_from_the_loop_only():
    """White-box, on the IR: the pass leaves the function alone where no store is dead, and takes
    out of the reverse loop exactly the zero store of ``d_y[t + 1]``."""
    from s2s_ad.core import ir
    from s2s_ad.passes.dead_element_stores import drop_dead_element_stores
    store = ir.Store("d_y", ir.Call(np.add, (ir.Var("t"), ir.Const(1))), ir.Const(0.0))
    read = ir.Assign("d_v", ir.Call(__import__("operator").getitem, (ir.Var("d_y"), ir.Var("t"))))
    loop = ir.For("t", ir.Var("steps"), [read, store], reverse=True)
    body = [ir.Assign("steps", ir.Call(range, (ir.Var("n"),))),
            ir.Assign("d_y", ir.Call(np.zeros, (ir.Var("n"),))), loop, ir.Return(ir.Var("d_v"))]
    fn = ir.Function("d_f", ("n",), body)
    dropped = drop_dead_element_stores(fn, set())
    assert [type(s) for s in dropped.body[2].body] == [ir.Assign]
    # a read of d_y[t + 2] in the loop could see the zero written one step later: kept
    later = ir.Assign("d_w", ir.Call(__import__("operator").getitem,
                                     (ir.Var("d_y"), ir.Call(np.add, (ir.Var("t"), ir.Const(2))))))
    fn = ir.Function("d_f", ("n",), body[:2] + [ir.For("t", ir.Var("steps"), [later, read, store], reverse=True)]
                     + body[3:])
    assert drop_dead_element_stores(fn, set()) is fn
