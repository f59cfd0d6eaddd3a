"""backend="numba": the compiled rules that copy elements (np.tile, np.repeat along an axis, and the
adjoints ``tile_grad``, ``repeat_grad``, ``take_grad``; np.ndim), in
``targets/numba/rules/numpy_copies.py``.

Oracles: NumPy and the Python helpers, called on the same arrays (the compiled versions must give
their numbers and shapes, and raise where NumPy raises); gradients of functions using them, compiled
(asserted: no fallback to Python), compared with central differences.
"""
from __future__ import annotations


import numpy as np
import pytest

from conftest import check_compiled_gradient, compiled_by_numba, module_from_source, optional_import

numba = optional_import("numba")
pytestmark = pytest.mark.skipif(numba is None, reason="numba is not installed (pip install 's2s_ad[numba]')")

RNG = np.random.default_rng(11)


def _compiled(source):
    """``f`` of ``source`` compiled by Numba, reading NumPy and the template's helpers."""
    return compiled_by_numba(source, {"np": np, "shape": _helpers()})


def _helpers():
    from s2s_ad.targets.numba.rules.numpy_copies import shape
    return shape


TILES = [((3,), "2"), ((3,), "(2, 1)"), ((2, 3), "(2, 1, 2)"), ((2, 3), "3"), ((2, 1, 2), "(1, 3)"), ((4,), "0")]


@pytest.mark.parametrize("a_shape, reps", TILES)
def test_tile_and_its_adjoint_are_numpys_and_the_helpers(a_shape, reps):
    a = RNG.normal(size=a_shape)
    counts = eval(reps)
    np.testing.assert_array_equal(_compiled(f"def f(a):\n    return np.tile(a, {reps})\n")(a), np.tile(a, counts))
    grad = RNG.normal(size=np.tile(a, counts).shape)
    got = _compiled(f"def f(grad, a):\n    return shape.tile_grad(grad, a, {reps})\n")(grad, a)
    want = _helpers().tile_grad(grad, a, counts)
    assert got.shape == want.shape
    np.testing.assert_allclose(got, want, rtol=1e-14, atol=1e-14)


REPEATS = [((3,), "2", "None"), ((2, 3), "np.array([1, 0, 2])", "1"), ((2, 3), "2", "0"), ((2, 3), "3", "-1"),
           ((2, 2, 3), "np.array([2, 1])", "-2"), ((2, 3), "np.array([0, 1, 2, 1, 0, 3])", "None")]


@pytest.mark.parametrize("a_shape, repeats, axis", REPEATS)
def test_repeat_and_its_adjoint_are_numpys_and_the_helpers(a_shape, repeats, axis):
    a = RNG.normal(size=a_shape)
    counts, along = eval(repeats), eval(axis)
    np.testing.assert_array_equal(_compiled(f"def f(a):\n    return np.repeat(a, {repeats}, {axis})\n")(a),
                                  np.repeat(a, counts, along))
    grad = RNG.normal(size=np.repeat(a, counts, along).shape)
    got = _compiled(f"def f(grad, a):\n    return shape.repeat_grad(grad, a, {repeats}, {axis})\n")(grad, a)
    want = _helpers().repeat_grad(grad, a, counts, along)
    assert got.shape == want.shape
    np.testing.assert_allclose(got, want, rtol=1e-14, atol=1e-14)


def test_repeat_raises_where_numpy_raises():
    with pytest.raises(ValueError):
        _compiled("def f(a):\n    return np.repeat(a, np.array([1, 2]), 1)\n")(np.ones((2, 3)))  # 2 counts, 3 columns
    with pytest.raises(ValueError):
        _compiled("def f(a):\n    return np.repeat(a, -1, 0)\n")(np.ones((2, 3)))


TAKES = [((5,), "np.array([0, 3, 3, -1])", "None"), ((3, 4), "np.array([[1, 1], [0, 2]])", "1"),
         ((2, 3), "4", "None"), ((2, 3, 2), "np.array([2, 0, 2])", "-2"), ((3, 4), "np.array([-3, 2])", "0")]


@pytest.mark.parametrize("a_shape, indices, axis", TAKES)
def test_take_grad_adds_repeated_indices_as_the_helper(a_shape, indices, axis):
    a = RNG.normal(size=a_shape)
    where, along = eval(indices), eval(axis)
    grad = RNG.normal(size=np.shape(np.take(a, where, along)))
    got = _compiled(f"def f(grad, a):\n    return shape.take_grad(grad, a, {indices}, {axis})\n")(
        np.asarray(grad, dtype=float), a)
    want = _helpers().take_grad(grad, a, where, along)
    assert got.shape == want.shape
    np.testing.assert_allclose(got, want, rtol=1e-14, atol=1e-14)


def test_ndim_of_arrays_and_numbers():
    f = _compiled("def f(a, b, c):\n    return np.ndim(a), np.ndim(b), np.ndim(c)\n")
    assert f(np.ones((2, 3)), 1.5, np.ones(4)) == (2, 0, 1)


PROGRAMS = '''
import numpy as np

def tiled_and_repeated(x):
    T = np.tile(x[:2], (2, 3))
    R = np.repeat(np.outer(x[:2], x[2:]), np.array([1, 3]), axis=0)
    return np.sum(T * np.arange(12.0).reshape(2, 6)) + np.sum(np.sin(R))

def taken_in_a_loop(x):
    total = 0.0
    M = np.outer(x, x)
    for k in range(3):
        rows = np.take(M, np.array([k, k + 1, k]), axis=0)
        total = total + np.sum(rows[:, 1] ** 2) + np.take(x, k) * np.sum(np.take(x, np.array([0, 3, 3])))
    return total

def columns_of_a_split(x):
    M = np.outer(x, x[::-1])
    left, right = np.hsplit(M, 2)
    return np.sum(left * right) + np.sum(np.repeat(x, 2) * np.arange(8.0))
'''


@pytest.mark.parametrize("name", ["tiled_and_repeated", "taken_in_a_loop", "columns_of_a_split"])
def test_gradients_of_copies_compile_and_agree_with_differences(name, tmp_path_factory):
    fn = getattr(module_from_source(tmp_path_factory.mktemp("copies"), "copies_", PROGRAMS), name)
    check_compiled_gradient(fn, np.array([0.7, -1.1, 0.4, 1.3]))
