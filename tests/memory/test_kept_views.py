"""Issue 31: a view the reverse sweep reads while a later store writes its array (recorded in a loop,
carried out of it, a helper's) stays NumPy's view in the primal code, so a view taken again by its
element positions finds it; the reverse sweep reads a copy bound beside it (``ad/kept_views.py``).
A row joined over an ``if`` with a copy (``v = M[1]`` or ``M[1] * 2.0``) is chosen again by the test,
and a row by the loop index carried out of the loop is found by its elements' positions.  Oracles:
NumPy's own run for the value, central differences for the gradient and (of the gradient) the
Hessian, <direction, gradient> for jvp, the gradient for vjp; the Numba backend on its own."""
from __future__ import annotations

import warnings

import numpy as np
import pytest

import s2s_ad
from s2s_ad import TransformError
from conftest import numeric_grad

import kept_views_functions as kv

POINTS = [np.array([0.7, 1.3, 0.4, 0.9]), np.array([0.7, -1.3, 0.4, 0.9])]  # (both paths of the ifs on x[1])
DIRECTION = np.array([0.3, -0.2, 0.5, 0.1])


def _gradient_differences(f, x, h=1e-5):
    grad = s2s_ad.grad(f)
    return np.array([(grad(x + h * e) - grad(x - h * e)) / (2 * h) for e in np.eye(x.size)])


@pytest.mark.parametrize("x", POINTS, ids=["test holds", "test fails"])
@pytest.mark.parametrize("f", kv.FUNCTIONS, ids=lambda f: f.__name__)
def test_value_gradient_tangent_pullback_and_hessian_match_numpy(f, x):
    want = numeric_grad(f, (x.copy(),), 0)
    value, gradient = s2s_ad.value_and_grad(f)(x.copy())
    np.testing.assert_allclose(value, f(x.copy()), rtol=1e-12)
    np.testing.assert_allclose(gradient, want, rtol=1e-5, atol=1e-6)
    _, tangent = s2s_ad.jvp(f, (x.copy(),), (DIRECTION,))
    np.testing.assert_allclose(tangent, want @ DIRECTION, rtol=1e-5, atol=1e-6)
    _, pullback = s2s_ad.vjp(f, x.copy())
    np.testing.assert_allclose(pullback(1.0)[0], want, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(s2s_ad.hessian(f)(x.copy()), _gradient_differences(f, x.copy()), rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("x", POINTS, ids=["test holds", "test fails"])
@pytest.mark.parametrize("f", kv.FUNCTIONS, ids=lambda f: f.__name__)
def test_numba_matches_numpy(f, x):
    pytest.importorskip("numba")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # (a loop-carried name first bound in the loop runs as Python)
        value, gradient = s2s_ad.value_and_grad(f, backend="numba")(x.copy())
    np.testing.assert_allclose(value, f(x.copy()), rtol=1e-12)
    np.testing.assert_allclose(gradient, numeric_grad(f, (x.copy(),), 0), rtol=1e-5, atol=1e-6)


def test_the_primal_keeps_the_view_and_the_reverse_sweep_its_copy():
    source = s2s_ad.grad(kv.transpose_sliced_in_a_loop).source_for(POINTS[0].copy())
    assert "transpose_M = np.transpose(M)" in source  # the view itself, no np.copy around it
    assert "transpose_M_kept = np.copy(transpose_M)" in source
    assert "tape.append((transpose_M_kept, T))" in source
    assert "positions = view_positions(T, M, 'T'" in source


def test_a_row_that_is_a_copy_on_the_last_trip_is_refused_where_the_code_runs():
    # v = M[t] or M[t] * 2.0 in a loop, read after M is written: where the last trip took the copy,
    # no view of M is there to follow, and the copy is not told apart from a view lost: refused
    f = kv.row_or_its_copy_carried_out_of_a_loop
    x = np.array([0.7, -1.3, 0.4, 0.9])
    with pytest.raises(TransformError, match=r"kept_views_functions.py:\d+: .*v may be a view of that array"):
        s2s_ad.grad(f)(x)
    np.testing.assert_allclose(s2s_ad.grad(f)(POINTS[0].copy()), numeric_grad(f, (POINTS[0].copy(),), 0),
                               rtol=1e-5, atol=1e-6)  # (a view on the last trip: followed)
