"""backend="numba": np.kron's adjoint's ``kron_blocks``, ``kron_spread`` and ``kron_axes``
(``targets/numba/rules/numpy_linalg.py``) and np.average's ``average_weights`` without an axis
(``numpy_reductions.py``), compiled.

Oracle: the Python helpers on the same arrays: the same shapes and numbers (reshapes: bit for bit).  The
gradients of functions using them, compiled, against the Python backend and central differences are
benchmarks/numba_fallbacks.py's cases, run by tests/targets/test_numba_rule_coverage.py.
"""
from __future__ import annotations

import itertools

import numpy as np
import pytest

from conftest import compiled_by_numba, optional_import

numba = optional_import("numba")
pytestmark = pytest.mark.skipif(numba is None, reason="numba is not installed (pip install 's2s_ad[numba]')")

RNG = np.random.default_rng(29)
SHAPES = [(), (3,), (2, 3), (2, 1, 2)]


def _linalg():
    from s2s_ad.targets.numba.rules.numpy_linalg import linalg
    return linalg


def _operand(shape):
    return 1.5 if shape == () else RNG.normal(size=shape)


@pytest.mark.parametrize("a_shape, b_shape", list(itertools.product(SHAPES, SHAPES))[1:])  # (two numbers: Python)
def test_kron_helpers_compiled_are_the_helpers(a_shape, b_shape):
    linalg = _linalg()
    a, b = _operand(a_shape), _operand(b_shape)
    grad = RNG.normal(size=np.shape(np.kron(a, b)))
    names = {"linalg": linalg}
    blocks = compiled_by_numba("def f(grad, a, b):\n    return linalg.kron_blocks(grad, a, b)\n", names)
    got, want = blocks(grad, a, b), linalg.kron_blocks(grad, a, b)
    assert got.shape == want.shape
    np.testing.assert_array_equal(got, want)
    np.testing.assert_array_equal(blocks(grad.T, a, b), linalg.kron_blocks(grad.T, a, b))  # (not contiguous)
    for which in (0, 1):
        spread = compiled_by_numba(f"def f(x, other):\n    return linalg.kron_spread(x, other, {which})\n", names)
        axes = compiled_by_numba(f"def f(a, b):\n    return linalg.kron_axes(a, b, {which})\n", names)
        x, other = (a, b) if which == 0 else (b, a)
        got, want = spread(x, other), linalg.kron_spread(x, other, which)
        assert np.shape(got) == np.shape(want)
        np.testing.assert_array_equal(got, want)
        assert axes(a, b) == linalg.kron_axes(a, b, which)


def test_average_weights_without_an_axis_compiled_are_the_helpers():
    from s2s_ad.targets.numba.rules.template_modules import template
    helpers = template("numpy_reductions")
    weights = compiled_by_numba("def f(a, w):\n    return helpers.average_weights(a, w)\n", {"helpers": helpers})
    none = compiled_by_numba("def f(a):\n    return helpers.average_weights(a, None)\n", {"helpers": helpers})
    for shape in ((4,), (2, 3)):
        a, w = RNG.normal(size=shape), RNG.uniform(0.5, 2.0, size=shape)
        np.testing.assert_array_equal(weights(a, w), helpers.average_weights(a, w))
        got, want = none(a), helpers.average_weights(a, None)
        assert got.shape == want.shape == () and got == want
    a, w = np.ones(3), np.arange(3)
    np.testing.assert_array_equal(weights(a, w), helpers.average_weights(a, w))
