"""The Python target's adjoint products by ``np.sin`` or ``np.cos`` of a number
(``passes/number_math.py``, ``core/number_functions.py``).

The functions are checked against NumPy's own on numbers of every kind (their values, types and
warnings); the pass by reading the code it leaves and by gradients against central differences, a
closed form and the Numba backend (which takes no such pass), on loops over numbers, over arrays (left
alone), with float32 data and at an infinity.
"""
import warnings

import numpy as np
import pytest

import s2s_ad
from s2s_ad.core import number_functions as nf
from conftest import numeric_grad, optional_import

PAIRS = [(nf.sin_of_number, np.sin), (nf.cos_of_number, np.cos)]


@pytest.mark.parametrize("mine, numpys", PAIRS, ids=lambda f: getattr(f, "__name__", ""))
def test_each_gives_numpys_number(mine, numpys):
    rng = np.random.default_rng(3)
    for x in list(rng.normal(size=200) * 4.0) + [0.0, -0.0, 1e-300, 700.0, -700.0, np.nan]:
        for value in (float(x), np.float64(x)):
            got, want = mine(value), numpys(value)
            assert type(got) in (float, np.float64)
            if not np.isnan(want):  # (NumPy 1.22-1.26 on AVX-512 use vector code of their own: 3 ulps seen)
                assert abs(got - want) <= 4 * np.spacing(max(abs(want), 1e-3)), (value, got, want)
            else:
                assert np.isnan(got)
    for value in (np.float32(0.25), np.complex128(0.5 + 0.25j), np.array([0.5, -2.0]), np.array(0.75)):
        got, want = mine(value), numpys(value)
        assert type(got) is type(want)
        assert np.asarray(got).dtype == np.asarray(want).dtype
        np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("mine, numpys, x", [(nf.sin_of_number, np.sin, np.inf), (nf.cos_of_number, np.cos, -np.inf)])
def test_at_an_infinity_numpys_nan_and_warning(mine, numpys, x):
    with pytest.warns(RuntimeWarning):
        want = numpys(np.float64(x))
    with pytest.warns(RuntimeWarning):
        got = mine(x)
    assert np.isnan(got) and np.isnan(want)


def swing(length, damping, steps=200, dt=0.01):
    theta = np.zeros(steps + 1)
    omega = np.zeros(steps + 1)
    theta[0] = 1.0
    for t in range(steps):
        theta[t + 1] = theta[t] + dt * omega[t]
        omega[t + 1] = omega[t] - dt * (9.81 / length * np.sin(theta[t]) + damping * omega[t])
    return np.sum(theta ** 2)


def waves(x, y):
    total = 0.0
    for i in range(x.shape[0]):
        total = total + np.cos(x[i] * y) - np.sin(x[i]) * np.cos(y)
    return total


def of_arrays(x):
    total = 0.0
    for i in range(3):
        total = total + np.sum(np.sin(x * (i + 1.0)))
    return total


def test_the_reverse_loop_uses_the_number_functions_and_the_gradient_is_right():
    g = s2s_ad.grad(swing, wrt=("length", "damping"))
    source = g.source_for(1.2, 0.3)
    assert "cos_of_number(" in source
    assert source.count("np.sin(") == 1  # the forward sweep keeps the user's np.sin
    got = g(1.2, 0.3)
    for k in range(2):
        np.testing.assert_allclose(got[k], numeric_grad(swing, [1.2, 0.3], k), rtol=1e-6)
    assert all(type(d) in (float, np.float64) for d in got)


def test_every_function_of_the_pass_against_differences_and_numba():
    x, y = np.array([0.3, -0.7, 1.1, 0.05]), 0.8
    g = s2s_ad.grad(waves, wrt=("x", "y"))
    source = g.source_for(x, y)
    for name in ("cos_of_number(x_part, d_sin)", "sin_of_number(prod, d_total)", "sin_of_number(y, d_cos_y, d_y)"):
        assert name in source, name
    dx, dy = g(x, y)
    np.testing.assert_allclose(dx, numeric_grad(waves, [x, y], 0), rtol=1e-7)
    np.testing.assert_allclose(dy, numeric_grad(waves, [x, y], 1), rtol=1e-7)
    closed = -y * np.sin(x * y) - np.cos(x) * np.cos(y)
    np.testing.assert_allclose(dx, closed, rtol=1e-13)
    if optional_import("numba") is not None:
        with warnings.catch_warnings():
            warnings.simplefilter("error", s2s_ad.CompileFallbackWarning)
            compiled = s2s_ad.grad(waves, wrt=("x", "y"), backend="numba")
            cdx, cdy = compiled(x, y)
        np.testing.assert_allclose(cdx, dx, rtol=1e-13)
        np.testing.assert_allclose(cdy, dy, rtol=1e-13)


def test_arrays_keep_numpys_function():
    x = np.array([0.2, 0.4, -1.0])
    g = s2s_ad.grad(of_arrays)
    assert "_of_number(" not in g.source_for(x)
    np.testing.assert_allclose(g(x), sum((i + 1.0) * np.cos(x * (i + 1.0)) for i in range(3)), rtol=1e-13)


def test_float32_data_keeps_its_dtype():
    x = np.array([0.3, -0.7, 1.1], dtype=np.float32)
    dx, dy = s2s_ad.grad(waves, wrt=("x", "y"))(x, np.float32(0.8))
    assert dx.dtype == np.float32 and isinstance(dy, np.float32)
    closed = -0.8 * np.sin(x.astype(float) * 0.8) - np.cos(x.astype(float)) * np.cos(0.8)
    np.testing.assert_allclose(dx, closed, rtol=1e-5)


def test_an_infinite_angle_gives_nan_not_an_error():
    def f(x):
        total = 0.0
        for i in range(x.shape[0]):
            total = total + np.sin(x[i])
        return total
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        d = s2s_ad.grad(f)(np.array([0.5, np.inf]))
    assert abs(d[0] - np.cos(0.5)) <= 4 * np.spacing(np.cos(0.5)) and np.isnan(d[1])


def test_the_hessian_over_such_a_loop():
    h = s2s_ad.hessian(waves, wrt="y")(np.array([0.3, -0.7]), 0.8)
    step = 1e-4
    d = s2s_ad.grad(waves, wrt="y")
    numeric = (d(np.array([0.3, -0.7]), 0.8 + step) - d(np.array([0.3, -0.7]), 0.8 - step)) / (2 * step)
    np.testing.assert_allclose(h, numeric, rtol=1e-6)


def test_outside_loops_numpys_function_stays():
    def once(x, y):
        return np.sin(x) * y + np.cos(y)
    g = s2s_ad.grad(once, wrt=("x", "y"))
    assert "_of_number(" not in g.source_for(0.4, 1.3)
    dx, dy = g(0.4, 1.3)
    assert dx == pytest.approx(np.cos(0.4) * 1.3, rel=1e-15) and dy == pytest.approx(np.sin(0.4) - np.sin(1.3), rel=1e-15)


def sum_of_scaled_waves(x, s):
    acc = 0.0
    for t in range(1, 20):
        acc = acc + np.sin(x * t) * s + np.cos(x) * s
    return acc


@pytest.mark.parametrize("s", [np.float32(0.7), np.float16(0.7)])
def test_a_narrower_adjoint_keeps_numpys_function_and_float64_precision(s):
    """A Python float is weakly typed (NEP 50): math.cos's float times a float32 adjoint would be a
    float32 where NumPy's float64 made a float64 (a relative error of 5e-7).  The closed form, in float64
    from the same narrow factor."""
    x = 1.3
    g = s2s_ad.grad(sum_of_scaled_waves, wrt="x")
    assert "cos_of_number(x_times_t, d_sin)" in g.source_for(x, s)
    got = g(x, s)
    factor = float(s)
    want = sum(factor * t * np.cos(x * t) - factor * np.sin(x) for t in range(1, 20))
    assert type(got) in (float, np.float64)
    assert got == pytest.approx(want, rel=1e-13)
