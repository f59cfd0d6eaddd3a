"""backend="numba": the helpers of the adjoints of np.median, np.quantile and np.percentile over a whole
array at one quantile, compiled (``quantile_scatter``, ``quantile_slope``, ``trailing_axes`` in
``targets/numba/rules/numpy_reductions.py``).

Oracle: the Python helpers, called on the same arrays (ties, NaN, the extreme quantiles, more than one
axis): the same numbers bit for bit.  The gradients of functions using them, compiled, against the
Python backend and central differences are benchmarks/numba_fallbacks.py's cases, run by
tests/targets/test_numba_rule_coverage.py.
"""
from __future__ import annotations

import itertools

import numpy as np
import pytest

from conftest import compiled_by_numba, optional_import

numba = optional_import("numba")
pytestmark = pytest.mark.skipif(numba is None, reason="numba is not installed (pip install 's2s_ad[numba]')")

RNG = np.random.default_rng(17)
ARRAYS = [np.array([0.3, -1.0, 2.0, 0.7, 0.35]), np.array([1.0, 2.0, 2.0, 3.0, 1.0, 2.0]), np.array([4.0]),
          np.array([1.0, np.nan, 0.5, 3.0]), RNG.normal(size=(3, 4)), RNG.normal(size=(2, 3, 2)).transpose(1, 0, 2)]


def _reductions():
    from s2s_ad.targets.numba.rules import numpy_reductions
    from s2s_ad.targets.numba.rules.template_modules import template
    assert numpy_reductions  # (its compiled versions declared)
    return template("numpy_reductions")


@pytest.mark.parametrize("slope", [False, True])
def test_quantile_scatter_of_a_whole_array_compiled_is_the_helpers(slope):
    helpers = _reductions()
    scatter = compiled_by_numba("def f(grad, a, q, slope):\n    return helpers.quantile_scatter(grad, a, q, None, False, "
                                "slope)\n", {"helpers": helpers})
    for a, q in itertools.product(ARRAYS, [0.0, 0.3, 0.5, 0.75, 1.0]):
        got, want = scatter(1.7, a, q, slope), helpers.quantile_scatter(1.7, a, q, None, False, slope)
        assert got.shape == want.shape
        np.testing.assert_array_equal(got, want)


def test_quantile_slope_and_trailing_axes_compiled_are_the_helpers():
    helpers = _reductions()
    slope = compiled_by_numba("def f(values, a, q):\n    return helpers.quantile_slope(values, a, q)\n",
                              {"helpers": helpers})
    axes = compiled_by_numba("def f(q, out):\n    return helpers.trailing_axes(q, out)\n", {"helpers": helpers})
    for a, q in itertools.product(ARRAYS, [0.0, 0.3, 0.5, 1.0]):
        values = RNG.normal(size=a.shape)
        got, want = slope(values, a, q), helpers.quantile_slope(values, a, q)
        assert got == want or np.isnan(got) and np.isnan(want)
    for q, out in [(0.3, 1.0), (0.3, np.zeros(3)), (np.zeros(2), np.zeros((2, 3, 4)))]:
        assert axes(q, out) == helpers.trailing_axes(q, out)
    with pytest.raises(ValueError):
        slope(np.zeros(3), np.zeros(4), 0.5)
