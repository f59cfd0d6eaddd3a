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

from conftest import check_compiled_gradient, compiled_by_numba, optional_import

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


SPLITS = [((7,), "split", "7", 0), ((7,), "array_split", "3", 0), ((4, 6), "split", "3", 1),
          ((4, 6), "array_split", "4", -1), ((4, 6), "split", "[1, 3]", 0), ((4, 6), "array_split", "(2, -1)", 1),
          ((4, 6), "split", "[5, 2, 9]", 1), ((4, 6), "hsplit", "2", 0), ((4, 6), "vsplit", "[3]", 0),
          ((2, 3, 4), "dsplit", "2", 0), ((6,), "hsplit", "3", 0), ((5,), "array_split", "np.array([1, 4])", 0)]


@pytest.mark.parametrize("shape, how, sections, axis", SPLITS)
def test_split_piece_compiled_is_the_helpers(shape, how, sections, axis):
    """Each piece's index, as the generated code writes the call (``how`` and ``axis`` constants),
    against the Python helper, and the piece it picks against NumPy's own piece."""
    from s2s_ad.core import runtime
    a = np.arange(float(np.prod(shape))).reshape(shape)
    pieces = getattr(np, how)(a, *((eval(sections),) if how.endswith(("hsplit", "vsplit", "dsplit"))
                                   else (eval(sections), axis)))
    source = (f"def f(a, k):\n    return a[split_piece(a.shape, {how!r}, {sections}, {axis}, k)].copy()\n")
    piece = compiled_by_numba(source, {"np": np, "split_piece": runtime.split_piece})
    for k in range(-len(pieces), len(pieces)):
        got = piece(a, k)
        np.testing.assert_array_equal(got, a[runtime.split_piece(a.shape, how, eval(sections), axis, k)])
        np.testing.assert_array_equal(got, pieces[k])
        assert got.shape == pieces[k].shape


def test_split_piece_of_no_piece_raises():
    from s2s_ad.core import runtime
    piece = compiled_by_numba("def f(a):\n    return a[split_piece(a.shape, 'split', 0, 0, 0)].copy()\n",
                              {"np": np, "split_piece": runtime.split_piece})
    with pytest.raises(ValueError):
        piece(np.zeros(4))
    with pytest.raises(ZeroDivisionError):  # (NumPy raises too, and so the Python run the call goes on to)
        np.split(np.zeros(4), 0)


def written_through_pieces(x):
    y = x * 1.0
    first, second = np.split(y, 2)
    first[0] = 3.0 * second[1]
    grid = np.outer(x, x)
    left, right = np.hsplit(grid, 2)
    right[1, :] = left[0, :] * x[0]
    return np.sum(y ** 2) + np.sum(grid ** 2)


def test_a_write_through_a_split_piece_compiles():
    """split_piece (where a piece lies, for the write's store) ran as Python."""
    check_compiled_gradient(written_through_pieces, np.array([0.3, -1.2, 0.8, 1.1]))
