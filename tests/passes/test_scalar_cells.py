"""The Python target's reverse loops keep adjoint vectors as lists of Python floats (s2s_ad/passes/scalar_cells.py).

Each function here is a time-stepping loop of the kind the pass is for, or one it must leave alone;
every gradient is checked against central differences (and, where there is one, a closed form), the
code is read for the conversion, and the dtype, rank and ownership of what comes back are checked.
"""
import operator
import warnings

import numpy as np
import pytest

import s2s_ad
from s2s_ad.core import ir
from s2s_ad.core import float_lists, runtime
from s2s_ad.passes.scalar_cells import keep_cells
from conftest import numeric_grad


def heating(heat, outside, t0, a, b):
    n = heat.shape[0]
    temp = np.zeros(n + 1)
    temp[0] = t0
    for t in range(n):
        temp[t + 1] = temp[t] + a * (outside[t] - temp[t]) + b * heat[t]
    return np.sum((temp - 20.0) ** 2)


def decay(x, c):
    n = x.shape[0]
    s = np.zeros(n + 1)
    s[0] = 1.0
    for i in range(n):
        s[i + 1] = s[i] / c + x[i]
    return np.sum(s)


def rows(x):
    n = x.shape[0]
    s = np.zeros((n + 1, 2))
    for i in range(n):
        s[i + 1] = s[i] * 0.5 + x[i]
    return np.sum(s ** 2)


def _data(n=12, dtype=np.float64):
    rng = np.random.default_rng(5)
    return rng.uniform(0.0, 2.0, n).astype(dtype), rng.uniform(-1.0, 1.0, n).astype(dtype)


def test_a_time_stepping_loop_keeps_its_adjoints_in_lists_and_its_gradients_are_right():
    heat, outside = _data()
    df = s2s_ad.grad(heating, wrt=(0, 1, 2, 3, 4))
    source = df.source_for(heat, outside, 15.0, 0.1, 0.3)
    assert "d_temp = cells(d_temp, heat, outside, t0, a, b, d_out)" in source and "for t in reversed(" in source
    got = df(heat, outside, 15.0, 0.1, 0.3)
    args = (heat, outside, 15.0, 0.1, 0.3)
    for i, gradient in enumerate(got):
        np.testing.assert_allclose(gradient, numeric_grad(heating, args, i), rtol=1e-6, atol=1e-8)
    # t0's gradient reads d_temp[0] after the loop: the list went back to an array first
    assert "= cells_array(d_temp)" in source
    for gradient, argument in zip(got[:2], (heat, outside)):
        assert type(gradient) is np.ndarray and gradient.dtype == np.float64 and gradient.shape == argument.shape
        assert gradient.flags.writeable and not np.shares_memory(gradient, argument)


def test_the_same_gradient_as_without_lists_to_rounding():
    heat, outside = _data(200)
    python = s2s_ad.grad(heating, wrt=(0, 3))(heat, outside, 15.0, 0.1, 0.3)
    # forward mode over the same function computes the same numbers with NumPy's scalars throughout
    for i, e in enumerate(np.eye(200)[:5]):
        _, along = s2s_ad.jvp(heating, (heat, outside, 15.0, 0.1, 0.3), (e, np.zeros(200), 0.0, 0.0, 0.0))
        assert python[0][i] == pytest.approx(along, rel=1e-12)


def test_another_dtype_or_rank_stays_an_array_and_the_gradient_is_right():
    heat, outside = _data(dtype=np.float32)
    got = s2s_ad.grad(heating)(heat, outside, np.float32(15.0), np.float32(0.1), np.float32(0.3))
    assert got.dtype == np.float32
    want = s2s_ad.grad(heating)(heat.astype(np.float64), outside.astype(np.float64), 15.0, 0.1, 0.3)
    np.testing.assert_allclose(got, want, rtol=2e-3)
    x = np.linspace(-1.0, 1.0, 6)
    np.testing.assert_allclose(s2s_ad.grad(rows)(x), numeric_grad(rows, (x,), 0), rtol=1e-6, atol=1e-8)


def filter_backwards(x, a):
    """A filter run from the last element down: its indexes are built from the array's length."""
    n = x.shape[0]
    y = np.zeros(n + 1)
    for k in range(n):
        i = n - 1 - k
        y[i] = a * y[i + 1] + x[i]
    return np.sum(y ** 2) + y[0]


def filter_backwards_by_len(x, a):
    y = np.zeros(len(x) + 1)
    m = len(x) - 1
    for k in range(len(x)):
        y[m - k] = a * y[m - k + 1] + np.sin(x[m - k])
    return np.sum(y ** 2)


@pytest.mark.parametrize("function", [filter_backwards, filter_backwards_by_len])
def test_indexes_built_from_a_length_are_integers_too(function):
    """``n = x.shape[0]`` and ``len(x)`` are Python ints: indexes built from them (``n - 1 - k``)
    index lists as they index vectors (negative ones counting from the end alike), so the loop's
    adjoints become lists; the gradients match differences, in float64 and (as arrays) float32."""
    x = np.random.default_rng(4).normal(size=9)
    df = s2s_ad.grad(function, wrt=(0, 1))
    assert "d_y = cells(d_y, " in df.source_for(x, 0.6)
    got = df(x, 0.6)
    for i, gradient in enumerate(got):
        np.testing.assert_allclose(gradient, numeric_grad(function, (x, 0.6), i), rtol=1e-6, atol=1e-8)
    narrow = df(x.astype(np.float32), np.float32(0.6))
    assert narrow[0].dtype == np.float32
    np.testing.assert_allclose(narrow[0], got[0], rtol=2e-3, atol=1e-4)


def _reverse_loop(operation):
    """d = zeros_like(x); for i in reversed(steps): v = d[i + 1]; d[i] += operation(v, 2.0); return d"""
    steps, i, d = ir.Var("steps"), ir.Var("i"), ir.Var("d")
    body = [
        ir.Assign("steps", ir.Call(range, (ir.Const(4),))),
        ir.Assign("d", ir.Call(runtime.zeros_like, (ir.Var("x"),))),
        ir.For("i", steps, [
            ir.Assign("i_plus_1", ir.Call(operator.add, (i, ir.Const(1)))),
            ir.Assign("v", ir.Call(operator.getitem, (d, ir.Var("i_plus_1")))),
            ir.Store("d", i, ir.Call(operation, (ir.Var("v"), ir.Const(2.0))), op=operator.add)], reverse=True),
        ir.Return(d)]
    return ir.Function("f", ["x"], body)


@pytest.mark.parametrize("operation", [operator.pow, operator.floordiv, operator.mod])
def test_an_element_reaching_a_power_or_a_floor_division_leaves_the_array_alone(operation):
    """``**``, ``//`` and ``%`` on a Python float may raise or give a complex number where NumPy's
    float64 gives NaN: an adjoint whose elements reach one stays an array (no rule writes one on an
    adjoint today; the pass must not rely on that)."""
    fn = _reverse_loop(operation)
    assert keep_cells(fn, {"x"}) is fn
    converted = keep_cells(_reverse_loop(operator.mul), {"x"})
    assert [type(s).__name__ for s in converted.body] == ["Assign", "Assign", "Assign", "For", "Assign", "Return"]
    assert converted.body[2].value.fn is float_lists.cells and converted.body[4].value.fn is float_lists.cells_array


def test_an_index_not_proven_an_integer_leaves_the_array_alone():
    fn = _reverse_loop(operator.mul)
    loop = fn.body[2]
    loop.body[1] = ir.Assign("v", ir.Call(operator.getitem, (ir.Var("d"), ir.Var("x"))))  # d[x]: x unknown
    assert keep_cells(fn, {"x"}) is fn


def test_a_division_by_a_zero_python_number_raises_where_numpy_gives_inf():
    """What docs/supported-python.md says: the reverse loop divides an adjoint, now a Python float,
    by c; with c = 0.0 that raises, where the primal (NumPy's float64 over 0.0) gave inf."""
    x = np.linspace(0.1, 0.4, 5)
    np.testing.assert_allclose(s2s_ad.grad(decay)(x, 2.0), numeric_grad(decay, (x, 2.0), 0), rtol=1e-6)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        assert decay(x, 0.0) == np.inf
        with pytest.raises(ZeroDivisionError):
            s2s_ad.grad(decay)(x, 0.0)


def scaled_recurrence(x, s):
    n = x.shape[0]
    y = np.zeros(n)
    y[0] = x[0]
    for i in range(1, n):
        y[i] = y[i - 1] * s + x[i]
    return np.sum(y * y)


WEIGHTS32 = np.linspace(0.5, 1.0, 30).astype(np.float32)


def weighted_recurrence(x, s):
    n = x.shape[0]
    y = np.zeros(n)
    y[0] = x[0]
    for i in range(1, n):
        y[i] = y[i - 1] * WEIGHTS32[i] + x[i] * s
    return np.sum(y * y)


def recurrence_made_float32(x, s):
    n = x.shape[0]
    y = np.zeros(n)
    y[0] = x[0]
    for i in range(1, n):
        y[i] = y[i - 1] * np.float32(s) + x[i]
    return np.sum(y * y)


@pytest.mark.parametrize("function, s", [(scaled_recurrence, np.float32(0.97)), (weighted_recurrence, 0.9),
                                         (recurrence_made_float32, 0.97)])
def test_float32_values_meeting_the_adjoints_leave_them_float64(function, s):
    """A Python float times NumPy's float32 is a float32 (NEP 50): lists of Python floats meeting a float32
    parameter, global or value the code makes would round the float64 adjoints to float32 (a relative
    error of 2e-7 where the arrays' code is exact).  The closed form: y is linear in x, so the gradient is
    2 J^T J x with J the recurrence's matrix, computed here in float64 from the same float32 factors."""
    x = np.linspace(0.1, 1.3, 30)
    got = s2s_ad.grad(function, wrt="x")(x, s)
    n = x.shape[0]
    factors = [float(WEIGHTS32[i]) if function is weighted_recurrence else float(np.float32(s))
               for i in range(n)]
    inputs = [1.0] + [float(s) if function is weighted_recurrence else 1.0] * (n - 1)
    jac = np.zeros((n, n))
    for i in range(n):
        jac[i, i] = inputs[i]
        for j in range(i):
            jac[i, j] = jac[i - 1, j] * factors[i]
    want = 2.0 * jac.T @ (jac @ x)
    np.testing.assert_allclose(got, want, rtol=1e-13)
    assert got.dtype == np.float64


def test_float64_parameters_still_take_lists():
    x = np.linspace(0.1, 1.3, 30)
    df = s2s_ad.grad(scaled_recurrence, wrt="x")
    assert "d_y = cells(d_y, x, s, d_out)" in df.source_for(x, 0.97)
    assert float_lists.cells(np.zeros(3), x, 0.97, 1.0) == [0.0, 0.0, 0.0]
    assert float_lists.cells(np.zeros(3), x, np.float32(0.97), 1.0).__class__ is np.ndarray
    assert float_lists.cells(np.zeros(3), x.astype(np.float32), 0.97).__class__ is np.ndarray
