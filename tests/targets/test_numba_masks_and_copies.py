"""backend="numba": the adjoints of writes and reads through a boolean mask and of writes at integer
positions (``runtime.stored_part``, ``runtime.getitem_grad``), and np.array of an array, compiled
(``targets/numba/runtime.py``, ``targets/numba/rules/numpy_creation.py``).

Oracle: the Python helpers and NumPy on the same arrays: the same shapes, dtypes and numbers, bit for bit
(the helpers only copy, pick and add zeros).  The gradients of functions using them, compiled, against the
Python backend and central differences are benchmarks/numba_fallbacks.py's ``masked_and_positioned``,
run by tests/targets/test_numba_rule_coverage.py.
"""
from __future__ import annotations

import warnings

import numpy as np
import pytest

import s2s_ad
from conftest import compiled_by_numba, numeric_grad, optional_import
from s2s_ad.core import runtime

numba = optional_import("numba")
pytestmark = pytest.mark.skipif(numba is None, reason="numba is not installed (pip install 's2s_ad[numba]')")

RNG = np.random.default_rng(37)
GRAD = RNG.normal(size=(3, 4))
MASK = GRAD > 0.2


def _compiled(helper):
    return compiled_by_numba(f"def f(x, index, y):\n    return runtime.{helper}(x, index, y)\n", {"runtime": runtime})


def _same(got, want):
    assert np.shape(got) == np.shape(want) and np.asarray(got).dtype == np.asarray(want).dtype
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("grad, index, value", [
    (GRAD, MASK, np.ones(MASK.sum())), (GRAD, MASK, 1.5), (GRAD[1], MASK[1], np.ones(MASK[1].sum())),
    (np.asfortranarray(GRAD), MASK, np.ones(MASK.sum())), (GRAD, np.zeros_like(MASK), 0.0),
    (GRAD, np.array([2, 0, 2, -1]), np.ones((4, 4))), (GRAD, np.array([1, 1]), np.ones(4)),
    (GRAD[:, 0], np.array([0, 2, 0, -3]), 2.0), (GRAD[:, 1], np.array([2, 1]), np.ones(2))])
def test_stored_part_through_masks_and_positions_compiled_is_the_helper(grad, index, value):
    _same(_compiled("stored_part")(grad, index, value), runtime.stored_part(grad, index, value))


@pytest.mark.parametrize("grad, a, index", [
    (np.arange(MASK.sum(), dtype=float), GRAD, MASK), (2.5, GRAD, MASK), (np.arange(MASK[0].sum(), dtype=float), GRAD[0], MASK[0]),
    (np.arange(MASK.sum(), dtype=float), np.asfortranarray(GRAD), MASK), (np.zeros(0), GRAD, np.zeros_like(MASK))])
def test_getitem_grad_through_a_mask_compiled_is_the_helper(grad, a, index):
    _same(_compiled("getitem_grad")(grad, a, index), runtime.getitem_grad(grad, a, index))


def test_a_mask_of_another_shape_or_a_position_out_of_range_raises_as_numpy_does():
    with pytest.raises(IndexError):
        _compiled("stored_part")(GRAD, MASK[:2], 1.0)
    with pytest.raises(IndexError):
        _compiled("getitem_grad")(np.ones(2), GRAD, MASK[:2])
    with pytest.raises(IndexError):
        _compiled("stored_part")(GRAD, np.array([3]), np.ones(4))
    with pytest.raises(IndexError):
        runtime.stored_part(GRAD, np.array([3]), np.ones(4))


@pytest.mark.parametrize("a", [GRAD, GRAD.T, GRAD[:, ::2], np.arange(4), MASK, np.array(2.5)])
def test_array_of_an_array_compiled_is_a_copy_as_numpys(a):
    copied = compiled_by_numba("def f(a):\n    return np.array(a)\n", {"np": np})(a)
    _same(copied, np.array(a))
    assert not np.shares_memory(copied, a)


def masked_and_positioned(x):
    b = np.array(x)  # (a copy, written below)
    b[x > 0.5] = x[x > 0.5] ** 2
    y = np.sin(x)
    y[y < 0.0] = 0.1 * y[y < 0.0]
    c = np.zeros(6)
    c[np.array([0, 2, 2, -1])] = x * 3.0  # (position 2 twice: NumPy keeps the last write)
    return np.sum(b * x) + np.sum(y ** 2) + np.sum(c * c[::-1])


@pytest.mark.parametrize("x", [np.array([0.3, -1.0, 2.0, 0.7]), np.array([0.9, 4.0, -0.2, -3.0])])
def test_a_gradient_through_masks_positions_and_a_copy_compiles_with_pythons_numbers(x):
    with warnings.catch_warnings():
        warnings.simplefilter("error", s2s_ad.CompileFallbackWarning)
        got = s2s_ad.grad(masked_and_positioned, backend="numba")(x)
    np.testing.assert_allclose(got, s2s_ad.grad(masked_and_positioned)(x), rtol=1e-13, atol=1e-15)
    np.testing.assert_allclose(got, numeric_grad(masked_and_positioned, (x,), 0), rtol=1e-6, atol=1e-8)
