"""backend="numba": np.tensordot and np.inner (Numba has neither), and their adjoints' ``inner_axes`` and
``tensordot_adjoint_plan`` (``targets/numba/rules/numpy_linalg.py``), compiled where the count of contracted
axes is known when compiling.

Oracles: NumPy's np.tensordot and np.inner, and the Python helpers, on the same arrays: the same shapes
and numbers (the matrix products are BLAS's on both sides: equal to the rounding of the BLAS each links).
The gradients of functions using them, compiled, against the Python backend and central differences are
benchmarks/numba_fallbacks.py's ``contractions``, run by tests/targets/test_numba_rule_coverage.py.
"""
from __future__ import annotations

import numpy as np
import pytest

from conftest import compiled_by_numba, optional_import

numba = optional_import("numba")
pytestmark = pytest.mark.skipif(numba is None, reason="numba is not installed (pip install 's2s_ad[numba]')")

RNG = np.random.default_rng(31)

# (shape of a, shape of b, axes as written in the code)
CONTRACTIONS = [
    ((3, 4), (4, 2), "1"), ((2, 3, 4), (3, 4, 5), "2"), ((3, 4), (2, 5), "0"), ((4,), (4,), "1"),
    ((3, 2, 5), (2, 4, 3), "((1, 0), (0, 2))"), ((3, 2, 5), (2, 4, 3), "([1, 0], [0, 2])"), ((3, 4), (4, 2), "(-1, 0)"),
    ((2, 3), (3, 2), "(1, 0)"), ((2, 3, 4), (4, 3), "((2, 1), (0, 1))"), ((3, 0), (0, 2), "1"), ((3,), (2, 2), "((), ())"),
]


def _linalg():
    from s2s_ad.targets.numba.rules.numpy_linalg import linalg
    return linalg


@pytest.mark.parametrize("a_shape, b_shape, axes", CONTRACTIONS)
def test_tensordot_compiled_is_numpys(a_shape, b_shape, axes):
    a, b = RNG.normal(size=a_shape), RNG.normal(size=b_shape)
    contract = compiled_by_numba(f"def f(a, b):\n    return np.tensordot(a, b, {axes})\n", {"np": np})
    want = np.tensordot(a, b, eval(axes))
    for x, y in ((a, b), (np.asfortranarray(a), b), (a, np.asfortranarray(b))):  # (any memory order)
        got = contract(x, y)
        assert isinstance(got, np.ndarray) and got.shape == want.shape
        np.testing.assert_allclose(got, want, rtol=1e-13, atol=1e-15)


def test_tensordot_left_out_axes_slices_and_a_number():
    a, b = RNG.normal(size=(2, 3, 4)), RNG.normal(size=(3, 4, 5))
    default = compiled_by_numba("def f(a, b):\n    return np.tensordot(a, b)\n", {"np": np})
    np.testing.assert_allclose(default(a, b), np.tensordot(a, b), rtol=1e-13)
    np.testing.assert_allclose(default(a[:, ::-1], b[::-1]), np.tensordot(a[:, ::-1], b[::-1]), rtol=1e-13)
    full = compiled_by_numba("def f(a, b):\n    return np.tensordot(a, b, 3)\n", {"np": np})
    got = full(a, a)  # everything contracted: a 0-d array, as NumPy's
    assert isinstance(got, np.ndarray) and got.shape == () and got == pytest.approx(np.tensordot(a, a, 3), rel=1e-13)
    scaled = compiled_by_numba("def f(s, b):\n    return np.tensordot(s, b, 0)\n", {"np": np})
    np.testing.assert_array_equal(scaled(1.5, b), np.tensordot(1.5, b, 0))


def test_tensordot_of_mismatched_lengths_raises_as_numpy_does():
    contract = compiled_by_numba("def f(a, b):\n    return np.tensordot(a, b, 1)\n", {"np": np})
    with pytest.raises(ValueError, match="shape-mismatch for sum"):
        contract(np.ones((3, 4)), np.ones((3, 2)))
    with pytest.raises(ValueError):
        np.tensordot(np.ones((3, 4)), np.ones((3, 2)), 1)


@pytest.mark.parametrize("a_shape, b_shape", [((4,), (4,)), ((3, 4), (5, 4)), ((2, 3, 4), (4,)), ((4,), (3, 4)),
                                              ((2, 2, 3), (4, 3))])
def test_inner_compiled_is_numpys(a_shape, b_shape):
    a, b = RNG.normal(size=a_shape), RNG.normal(size=b_shape)
    inner = compiled_by_numba("def f(a, b):\n    return np.inner(a, b)\n", {"np": np})
    got, want = inner(a, b), np.inner(a, b)
    assert np.shape(got) == np.shape(want)
    if np.ndim(want) == 0:  # (two vectors: a number, as NumPy's)
        assert isinstance(got, float)
    np.testing.assert_allclose(got, want, rtol=1e-13, atol=1e-15)


@pytest.mark.parametrize("a_shape, b_shape, axes", [c for c in CONTRACTIONS if c[0] != (3,) and c[0] != (3, 0)])
def test_tensordot_adjoint_plan_compiled_is_the_helper(a_shape, b_shape, axes):
    linalg = _linalg()
    a, b = RNG.normal(size=a_shape), RNG.normal(size=b_shape)
    for which in (0, 1):
        plan = compiled_by_numba(f"def f(a, b):\n    return linalg.tensordot_adjoint_plan(a, b, {axes}, {which})\n",
                                 {"linalg": linalg})
        (first, second), order = plan(a, b)
        (want_first, want_second), want_order = linalg.tensordot_adjoint_plan(a, b, eval(axes), which)
        assert (list(first), list(second), tuple(order)) == (list(want_first), list(want_second), tuple(want_order))


@pytest.mark.parametrize("a_shape, b_shape", [((4,), (4,)), ((3, 4), (5, 4)), ((2, 3, 4), (4,))])
def test_inner_axes_and_the_adjoints_plan_compiled_are_the_helpers(a_shape, b_shape):
    linalg = _linalg()
    a, b = RNG.normal(size=a_shape), RNG.normal(size=b_shape)
    axes = compiled_by_numba("def f(a, b):\n    return linalg.inner_axes(a, b)\n", {"linalg": linalg})
    assert axes(a, b) == linalg.inner_axes(a, b)
    for which in (0, 1):
        plan = compiled_by_numba(
            f"def f(a, b):\n    return linalg.tensordot_adjoint_plan(a, b, linalg.inner_axes(a, b), {which})\n",
            {"linalg": linalg})
        (first, second), order = plan(a, b)
        (want_first, want_second), want_order = linalg.tensordot_adjoint_plan(a, b, linalg.inner_axes(a, b), which)
        assert (list(first), list(second), tuple(order)) == (list(want_first), list(want_second), tuple(want_order))
