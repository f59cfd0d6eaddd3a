"""np.diff along an axis and np.repeat with counts in a list or a tuple under ``backend="numba"``
(targets/numba/rules/numpy_shape.py, numpy_copies.py): Numba's own np.diff differences the last axis
only and its np.repeat takes no list of counts, so a gradient using them ran as Python, said by a
fallback warning.  The compiled versions are compared with NumPy's on shapes, axes, orders and dtypes
(errors included: the call runs again as Python and raises NumPy's error), and gradients through them
with the Python backend and central differences, with fallback warnings made errors.
"""
import warnings

import numpy as np
import pytest

import s2s_ad
from conftest import numeric_grad, optional_import

numba = optional_import("numba")
pytestmark = pytest.mark.skipif(numba is None, reason="numba is not installed (pip install 's2s_ad[numba]')")


@pytest.mark.parametrize("shape", [(5,), (3, 4), (2, 3, 4), (4, 1)])
@pytest.mark.parametrize("n", [1, 2, 3, 6])
@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.int64])
def test_diff_along_each_axis_is_numpys(shape, n, dtype):
    from s2s_ad.targets.numba import runtime
    runtime.register()
    a = (np.arange(np.prod(shape)).reshape(shape) ** 2 % 7).astype(dtype)
    along = numba.njit(lambda a, n, axis: np.diff(a, n, axis=axis))
    for axis in range(-len(shape), len(shape)):
        got, want = along(a, n, axis), np.diff(a, n, axis=axis)
        assert got.dtype == want.dtype and got.shape == want.shape, (axis, got.shape, want.shape)
        np.testing.assert_array_equal(got, want)


def test_diff_out_of_range_axis_raises_in_compiled_code():
    from s2s_ad.targets.numba import runtime
    runtime.register()
    along = numba.njit(lambda a, axis: np.diff(a, axis=axis))
    with pytest.raises(ValueError):
        along(np.ones((2, 3)), 2)


def differenced(x):
    m = x.reshape(2, 3)
    return np.sum(np.diff(m * m, axis=0) ** 2) + np.sum(np.diff(np.sin(m), 2, axis=-1) * 3.0) + np.sum(np.diff(x) ** 2)


def repeated(x):
    m = x.reshape(2, 3)
    return np.sum(np.repeat(m, [2, 1], axis=0) ** 2) + np.sum(np.repeat(x, (1, 2, 0, 1, 1, 3)) * np.arange(8.0))


@pytest.mark.parametrize("fn", [differenced, repeated])
def test_gradients_compile_and_match(fn):
    x = np.linspace(0.2, 1.4, 6) ** 1.5
    with warnings.catch_warnings():
        warnings.simplefilter("error", s2s_ad.CompileFallbackWarning)
        got = s2s_ad.grad(fn, backend="numba")(x)
    np.testing.assert_allclose(got, s2s_ad.grad(fn)(x), rtol=1e-13, atol=1e-13)
    np.testing.assert_allclose(got, numeric_grad(fn, (x,), 0), rtol=1e-6, atol=1e-8)


def test_repeat_counts_in_a_list_or_tuple_are_numpys():
    from s2s_ad.targets.numba import runtime
    runtime.register()
    m = np.arange(6.0).reshape(2, 3)
    by_list = numba.njit(lambda m: np.repeat(m, [2, 1], axis=0))
    flat = numba.njit(lambda m: np.repeat(m, (1, 0, 2, 1, 1, 3)))
    np.testing.assert_array_equal(by_list(m), np.repeat(m, [2, 1], axis=0))
    np.testing.assert_array_equal(flat(m), np.repeat(m, (1, 0, 2, 1, 1, 3)))
    with pytest.raises(ValueError):  # (counts of the wrong length: NumPy's ValueError too)
        numba.njit(lambda m: np.repeat(m, [2, 1, 1], axis=0))(m)


def test_argsort_along_an_axis_stably_and_squeeze_of_an_axis_are_numpys():
    from s2s_ad.targets.numba import runtime
    runtime.register()
    x = np.array([[3.0, 1.0, 1.0, 2.0], [0.5, 0.5, 0.1, 9.0], [2.0, 2.0, 2.0, 2.0]])
    orders = {"stable": numba.njit(lambda a, axis: np.argsort(a, axis=axis, kind="stable")),
              "mergesort": numba.njit(lambda a, axis: np.argsort(a, axis=axis, kind="mergesort")),
              "quicksort": numba.njit(lambda a, axis: np.argsort(a, axis=axis, kind="quicksort")),
              None: numba.njit(lambda a, axis: np.argsort(a, axis=axis))}
    for kind, order in orders.items():
        for axis in (-1, 0, 1):  # (lines of 16 or fewer: NumPy's default kind keeps ties in order too)
            np.testing.assert_array_equal(order(x, axis), np.argsort(x, axis=axis, kind=kind))
    ties = np.round(np.random.default_rng(3).normal(size=(3, 40)))  # (long lines: NumPy's order of ties is its own)
    for axis in (0, 1):
        got = orders[None](ties, axis)
        np.testing.assert_array_equal(got, np.argsort(ties, axis=axis, kind="stable"))
        np.testing.assert_array_equal(np.take_along_axis(ties, got, axis), np.sort(ties, axis=axis))
    for shape, axis in [((1, 2, 3), 0), ((2, 1, 3), 1), ((2, 3, 1), -1), ((1,), 0), ((1, 4), -2)]:
        a = np.arange(float(np.prod(shape))).reshape(shape)
        got = numba.njit(lambda a, axis: np.squeeze(a, axis))(a, axis)
        np.testing.assert_array_equal(got, np.squeeze(a, axis))
        assert got.shape == np.squeeze(a, axis).shape
    with pytest.raises(ValueError):  # (an axis longer than 1: NumPy's ValueError too)
        numba.njit(lambda a: np.squeeze(a, 0))(np.ones((2, 1)))


def sorted_and_squeezed(x):
    m = np.exp(x).reshape(1, 2, 3)
    return np.sum(np.squeeze(m, 0) ** 2) + np.sum(np.sort(x * x[::-1]) * x)


def smallest_two_of_each_row(x):
    m = x.reshape(2, 3)
    order = np.argsort(m, axis=1)
    return np.sum(np.take_along_axis(m, order[:, :2], axis=1) ** 2)


def test_a_gradient_through_argsort_along_an_axis_compiles():
    """np.argsort(m, axis=1) of NumPy's default kind ran as Python."""
    x = np.array([0.3, -1.2, 0.8, 1.0, 2.0, -0.5])
    with warnings.catch_warnings():
        warnings.simplefilter("error", s2s_ad.CompileFallbackWarning)
        got = s2s_ad.grad(smallest_two_of_each_row, backend="numba")(x)
    np.testing.assert_allclose(got, numeric_grad(smallest_two_of_each_row, (x,), 0), rtol=1e-7, atol=1e-9)


def test_a_jacobian_through_sort_and_squeeze_compiles():
    """np.sort's forward mode reads np.argsort(kind="stable") along an axis, and np.squeeze had no compiled
    version: a Hessian (forward over reverse) through them ran as Python.  Against the Python backend."""
    x = np.linspace(0.2, 1.4, 6) ** 1.5
    with warnings.catch_warnings():
        warnings.simplefilter("error", s2s_ad.CompileFallbackWarning)
        got = s2s_ad.grad(sorted_and_squeezed, backend="numba")(x)
        jac = s2s_ad.hessian(sorted_and_squeezed, backend="numba")(x)
    np.testing.assert_allclose(got, s2s_ad.grad(sorted_and_squeezed)(x), rtol=1e-13, atol=1e-13)
    np.testing.assert_allclose(jac, s2s_ad.hessian(sorted_and_squeezed)(x), rtol=1e-12, atol=1e-12)
