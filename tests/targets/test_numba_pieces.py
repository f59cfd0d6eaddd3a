"""backend="numba": the compiled versions of ``take_along_axis_grad``, ``append_grad``, np.fft.fftshift and
ifftshift and np.asanyarray (``targets/numba/rules/numpy_pieces.py``).

Oracles: NumPy and the Python helpers, called on the same arrays (the compiled versions must give their
numbers and shapes, and raise where they raise); the gradients of functions using them, compiled,
against the Python backend and central differences (benchmarks/numba_fallbacks.py's cases, run by
tests/targets/test_numba_rule_coverage.py).
"""
from __future__ import annotations

import numpy as np
import pytest

from conftest import compiled_by_numba, optional_import

numba = optional_import("numba")
pytestmark = pytest.mark.skipif(numba is None, reason="numba is not installed (pip install 's2s_ad[numba]')")

RNG = np.random.default_rng(5)


def _helpers():
    from s2s_ad.targets.numba.rules.numpy_pieces import shape
    return shape


def _compiled(source):
    return compiled_by_numba(source, {"np": np, "shape": _helpers()})


ALONG = [((3, 4), [[0, 3], [2, 2], [1, -1]], 1), ((3, 4), [[1, 0, 2, 2]], 0), ((1, 4), [[0, 3], [2, 2], [1, -4]], 1),
         ((2, 3, 4), np.zeros((2, 1, 4), int), 1), ((2, 3, 4), [[[3, 0]], [[1, 1]]], -1), ((5,), [4, 4, 0, -2], 0)]


@pytest.mark.parametrize("arr_shape, indices, axis", ALONG)
def test_take_along_axis_grad_compiled_is_the_helpers(arr_shape, indices, axis):
    arr = RNG.normal(size=arr_shape)
    indices = np.asarray(indices, dtype=np.int64)
    taken = np.take_along_axis(arr, indices, axis)
    grad = RNG.normal(size=taken.shape)
    got = _compiled("def f(grad, arr, indices, axis):\n    return shape.take_along_axis_grad(grad, arr, indices, axis)\n")(
        grad, arr, indices, axis)
    want = _helpers().take_along_axis_grad(grad, arr, indices, axis)
    assert got.shape == want.shape
    np.testing.assert_allclose(got, want, rtol=1e-15, atol=1e-15)


def test_take_along_axis_grad_flat_and_out_of_range_raise_as_numpy():
    arr = RNG.normal(size=(2, 3))
    indices = np.array([5, 0, -6, 5])
    grad = RNG.normal(size=4)
    f = _compiled("def f(grad, arr, indices):\n    return shape.take_along_axis_grad(grad, arr, indices, None)\n")
    np.testing.assert_allclose(f(grad, arr, indices), _helpers().take_along_axis_grad(grad, arr, indices, None),
                               rtol=1e-15)
    with pytest.raises(IndexError):
        _helpers().take_along_axis_grad(grad, arr, np.array([6, 0, 0, 0]), None)
    with pytest.raises(IndexError):
        f(grad, arr, np.array([6, 0, 0, 0]))
    g = _compiled("def f(grad, arr, indices):\n    return shape.take_along_axis_grad(grad, arr, indices, 1)\n")
    with pytest.raises(IndexError):
        g(np.ones((2, 1)), arr, np.array([[3], [0]]))


APPENDS = [((3,), (2,), None), ((2, 3), (4,), None), ((2, 3), (1, 3), 0), ((2, 3), (2, 2), -1), ((2, 1, 3), (2, 2, 3), 1)]


@pytest.mark.parametrize("arr_shape, values_shape, axis", APPENDS)
def test_append_grad_compiled_is_the_helpers_for_each_part(arr_shape, values_shape, axis):
    arr, values = RNG.normal(size=arr_shape), RNG.normal(size=values_shape)
    grad = RNG.normal(size=np.append(arr, values, axis).shape)
    for which in (0, 1):
        got = _compiled(f"def f(grad, arr, values, axis):\n    return shape.append_grad(grad, arr, values, axis, {which})\n")(
            grad, arr, values, axis)
        want = _helpers().append_grad(grad, arr, values, axis, which)
        assert got.shape == want.shape
        np.testing.assert_array_equal(got, want)


SHIFTS = [((5,), None), ((4,), None), ((3, 4), None), ((3, 4), 1), ((3, 4), -2), ((2, 3, 5), (0, 2)), ((2, 3, 5), (1, 1)),
          ((2, 3, 5), (-1, 0, 1))]


@pytest.mark.parametrize("x_shape, axes", SHIFTS)
def test_fft_shifts_compiled_are_numpys(x_shape, axes):
    x = RNG.normal(size=x_shape)
    for name in ("fftshift", "ifftshift"):
        got = _compiled(f"def f(x, axes):\n    return np.fft.{name}(x, axes)\n")(x, axes)
        np.testing.assert_array_equal(got, getattr(np.fft, name)(x, axes))
    ints = np.arange(np.prod(x_shape)).reshape(x_shape)
    np.testing.assert_array_equal(_compiled("def f(x):\n    return np.fft.fftshift(x)\n")(ints), np.fft.fftshift(ints))


def test_asanyarray_compiled_is_the_array_itself_or_a_0d_array():
    x = RNG.normal(size=3)
    f = _compiled("def f(x):\n    return np.asanyarray(x)\n")
    assert f(x) is not None and np.shares_memory(f(x), x)
    np.testing.assert_array_equal(f(2.5), np.asanyarray(2.5))
