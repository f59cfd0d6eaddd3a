"""backend="numba": the helpers of np.cov's and np.corrcoef's adjoints compiled
(``targets/numba/rules/numpy_statistics.py``).

Oracle: the Python helpers on the same arrays (rows and columns of variables, with and without ``y``,
``bias`` and ``ddof``): the same shapes, and numbers to the rounding of the matrix products.  The
gradients of functions using them, compiled, against the Python backend and central differences are a
benchmarks/numba_fallbacks.py case, run by tests/targets/test_numba_rule_coverage.py.
"""
from __future__ import annotations

import itertools

import numpy as np
import pytest

from conftest import compiled_by_numba, optional_import

numba = optional_import("numba")
pytestmark = pytest.mark.skipif(numba is None, reason="numba is not installed (pip install 's2s_ad[numba]')")

RNG = np.random.default_rng(31)
PAIRS = [((3, 5), None, True), ((5,), None, True), ((5, 3), None, False), ((2, 6), (6,), True),
         ((4,), (4,), True), ((5, 2), (5, 1), False), ((6, 1), (6,), False)]


def _compiled(source):
    from s2s_ad.targets.numba.rules.numpy_statistics import statistics
    return compiled_by_numba(source, {"statistics": statistics}), statistics


@pytest.mark.parametrize("m_shape, y_shape, rowvar", PAIRS)
def test_cov_helpers_compiled_are_the_helpers(m_shape, y_shape, rowvar):
    data_of, helpers = _compiled("def f(m, y, rowvar):\n    return statistics.cov_data(m, y, rowvar)\n")
    m = RNG.normal(size=m_shape)
    y = None if y_shape is None else RNG.normal(size=y_shape)
    data = data_of(m, y, rowvar)
    np.testing.assert_array_equal(data, helpers.cov_data(m, y, rowvar))
    divisor_of = _compiled("def f(data, bias, ddof):\n    return statistics.cov_divisor(data, bias, ddof)\n")[0]
    for bias, ddof in itertools.product((False, True), (None, 0, 2)):
        assert divisor_of(data, bias, ddof) == helpers.cov_divisor(data, bias, ddof)
    grad = RNG.normal(size=(data.shape[0],) * 2)
    matrix = _compiled("def f(grad, data, divisor):\n    return statistics.cov_matrix_adjoint(grad, data, divisor)\n")[0]
    np.testing.assert_allclose(matrix(grad, data, 3), helpers.cov_matrix_adjoint(grad, data, 3), rtol=1e-13, atol=1e-15)
    correlation = _compiled("def f(grad, data):\n    return statistics.correlation_adjoint(grad, data)\n")[0]
    if data.shape[1] > 1:
        np.testing.assert_allclose(correlation(grad, data), helpers.correlation_adjoint(grad, data), rtol=1e-12,
                                   atol=1e-14)
    moved = RNG.normal(size=data.shape)
    for which in ((0,) if y is None else (0, 1)):
        back = _compiled(f"def f(grad, m, y, rowvar):\n    return statistics.cov_data_adjoint(grad, m, y, rowvar, "
                         f"{which})\n")[0]
        got, want = back(moved, m, y, rowvar), helpers.cov_data_adjoint(moved, m, y, rowvar, which)
        assert got.shape == want.shape
        np.testing.assert_array_equal(got, want)
