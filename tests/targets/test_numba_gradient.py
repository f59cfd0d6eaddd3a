"""backend="numba": np.gradient of a vector at a uniform spacing and its adjoint's ``gradient_grad``
compiled (``targets/numba/rules/numpy_shape.py``).

Oracle: NumPy's np.gradient (bit for bit) and the Python helper (to the rounding of the matrix product),
over lengths at and above each edge order's least, int and float spacings; too short a vector raises
ValueError as NumPy does.  The gradient of a function using them, compiled, against the Python backend
and central differences is a benchmarks/numba_fallbacks.py case, run by
tests/targets/test_numba_rule_coverage.py.
"""
from __future__ import annotations

import itertools

import numpy as np
import pytest

from conftest import compiled_by_numba, optional_import

numba = optional_import("numba")
pytestmark = pytest.mark.skipif(numba is None, reason="numba is not installed (pip install 's2s_ad[numba]')")

RNG = np.random.default_rng(37)


@pytest.mark.parametrize("edge_order", [1, 2])
def test_gradient_of_a_vector_and_its_adjoint_compiled_are_numpys_and_the_helpers(edge_order):
    from s2s_ad.targets.numba.rules.numpy_shape import shape
    differences = compiled_by_numba(f"def f(x, dx):\n    return np.gradient(x, dx, edge_order={edge_order})\n",
                                    {"np": np})
    unit = compiled_by_numba(f"def f(x):\n    return np.gradient(x, edge_order={edge_order})\n", {"np": np})
    adjoint = compiled_by_numba(f"def f(grad, x, dx):\n    return shape.gradient_grad(grad, x, dx, None, {edge_order})\n",
                                {"shape": shape})
    for n, dx in itertools.product(range(edge_order + 1, 9), (1.0, 0.25, 3, -0.7)):
        x, grad = RNG.normal(size=n), RNG.normal(size=n)
        np.testing.assert_array_equal(differences(x, dx), np.gradient(x, dx, edge_order=edge_order))
        np.testing.assert_allclose(adjoint(grad, x, dx), shape.gradient_grad(grad, x, dx, None, edge_order),
                                   rtol=1e-13, atol=1e-14)
    x = RNG.normal(size=5)
    np.testing.assert_array_equal(unit(x), np.gradient(x, edge_order=edge_order))
    with pytest.raises(ValueError):
        np.gradient(np.ones(edge_order), edge_order=edge_order)
    with pytest.raises(ValueError):
        unit(np.ones(edge_order))
