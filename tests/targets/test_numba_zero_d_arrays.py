"""0-d arrays under backend="numba": Numba's np.ascontiguousarray makes a 0-d array 1-d, and an adjoint
copied so (writable_copy) then read by ``d_a[()]`` was the whole array, a view, zeroed by the next store:
an all-zero gradient with no warning (found by the checkpointing work of issue 35).  Oracles: central
differences and the Python backend."""
from __future__ import annotations

import numpy as np
import pytest

import s2s_ad
from conftest import numeric_grad


def cell_written_in_a_loop(u0, k, n):
    a = np.zeros(())
    a[...] = np.sum(u0 * u0)
    for i in range(n):
        a[()] = a[()] * 0.5 + np.sin(a[()]) * k
    return a[()] * 2.0


def cell_of_a_number(x, k):
    a = np.array(x * 1.0)
    for i in range(3):
        a[()] = a[()] * 0.5 + np.sin(a[()]) * k
    return a[()] * 1.0


U0 = np.array([0.3, 0.5])


@pytest.mark.parametrize("backend", ["python", "numba"])
def test_a_zero_d_array_written_in_a_loop(backend):
    if backend == "numba":
        pytest.importorskip("numba")
    d_u0, d_k = s2s_ad.grad(cell_written_in_a_loop, wrt=(0, 1), backend=backend)(U0, 0.7, 3)
    np.testing.assert_allclose(d_u0, numeric_grad(cell_written_in_a_loop, (U0, 0.7, 3), 0), rtol=1e-6)
    np.testing.assert_allclose(d_k, numeric_grad(cell_written_in_a_loop, (U0, 0.7, 3), 1), rtol=1e-6)


@pytest.mark.parametrize("backend", ["python", "numba"])
def test_the_gradient_by_a_number_is_a_number(backend):
    if backend == "numba":
        pytest.importorskip("numba")
    got = s2s_ad.grad(cell_of_a_number, backend=backend)(0.7, 1.3)
    assert np.ndim(got) == 0  # (it was an array of shape (1,) under numba)
    assert got == pytest.approx(numeric_grad(cell_of_a_number, (0.7, 1.3), 0), rel=1e-6)
