"""backend="numba": np.meshgrid and its adjoint's ``meshgrid_others`` compiled
(``targets/numba/rules/numpy_grids.py``).

Oracle: NumPy's np.meshgrid and the Python helper, on the same arrays: the same grids (shapes, dtypes,
values) and axes.  The gradient of a function using them, compiled, against the Python backend and
central differences is a benchmarks/numba_fallbacks.py case, run by tests/targets/test_numba_rule_coverage.py.
"""
from __future__ import annotations

import itertools

import numpy as np
import pytest

from conftest import compiled_by_numba, optional_import

numba = optional_import("numba")
pytestmark = pytest.mark.skipif(numba is None, reason="numba is not installed (pip install 's2s_ad[numba]')")

RNG = np.random.default_rng(23)


@pytest.mark.parametrize("indexing", ["xy", "ij"])
def test_meshgrid_of_one_to_three_arrays_is_numpys(indexing):
    grids = {count: compiled_by_numba(f"def f({', '.join('xyz'[:count])}):\n    return np.meshgrid("
                                      f"{', '.join('xyz'[:count])}, indexing='{indexing}')\n", {"np": np})
             for count in (1, 2, 3)}
    inputs = [RNG.normal(size=4), np.arange(3), RNG.normal(size=(2, 3)), np.zeros(0), RNG.normal(size=1)]
    for count in (1, 2, 3):
        for arrays in itertools.product(inputs, repeat=count):
            got, want = grids[count](*arrays), np.meshgrid(*arrays, indexing=indexing)
            assert len(got) == len(want)
            for g, w in zip(got, want):
                assert g.shape == w.shape and g.dtype == w.dtype and g.flags.c_contiguous
                np.testing.assert_array_equal(g, w)


def test_meshgrid_others_compiled_are_the_helpers_axes():
    from s2s_ad.targets.numba.rules.numpy_grids import grids
    for count, indexing in itertools.product((1, 2, 3), ("xy", "ij")):
        arrays = "(x, " + ", ".join(["x" if k < count else "None" for k in range(1, 4)]) + ")"
        for position in range(count):
            others = compiled_by_numba(f"def f(x):\n    return grids.meshgrid_others({position}, {arrays}, "
                                       f"'{indexing}')\n", {"grids": grids})
            given = tuple(np.zeros(2) if k < count else None for k in range(4))
            assert others(np.zeros(2)) == grids.meshgrid_others(position, given, indexing)
