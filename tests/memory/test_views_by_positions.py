"""Issue 31: a view read after a write into its array where no chain of steps can take it again (taken
in an iteration that has ended, chosen in a loop, a recursive helper's result) is read as NumPy shows
it: where the code runs, the positions of its elements in the array (``runtime.view_positions``), the
view as a function of the array now (``runtime.retaken_view``).  Oracles: NumPy's own run of the
function for the value, central differences for the gradient, forward mode and the Hessian; the
Numba backend against the Python one.  What cannot be followed is refused, naming the line."""
from __future__ import annotations

import warnings

import numpy as np
import pytest

import s2s_ad
from s2s_ad import TransformError
from conftest import numeric_grad

import views_by_positions_functions as vf

X = np.array([0.7, 1.3, 0.4, 0.9])
DIRECTION = np.array([0.3, -0.2, 0.5, 0.1])


def _gradient_differences(f, x, h=1e-5):
    grad = s2s_ad.grad(f)
    return np.array([(grad(x + h * e) - grad(x - h * e)) / (2 * h) for e in np.eye(x.size)])


@pytest.mark.parametrize("f", vf.FUNCTIONS, ids=lambda f: f.__name__)
def test_value_gradient_tangent_and_hessian_see_the_write_as_numpy_does(f):
    want = numeric_grad(f, (X.copy(),), 0)
    value, gradient = s2s_ad.value_and_grad(f)(X.copy())
    np.testing.assert_allclose(value, f(X.copy()), rtol=1e-12)
    np.testing.assert_allclose(gradient, want, rtol=1e-5, atol=1e-6)
    _, tangent = s2s_ad.jvp(f, (X.copy(),), (DIRECTION,))
    np.testing.assert_allclose(tangent, want @ DIRECTION, rtol=1e-5, atol=1e-6)
    _, pullback = s2s_ad.vjp(f, X.copy())
    np.testing.assert_allclose(pullback(1.0)[0], want, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(s2s_ad.hessian(f)(X.copy()), _gradient_differences(f, X.copy()), rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("f", vf.FUNCTIONS, ids=lambda f: f.__name__)
def test_numba_agrees_with_python(f):
    pytest.importorskip("numba")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # (a loop-carried name first bound in the loop runs as Python)
        got = s2s_ad.grad(f, backend="numba")(X.copy())
    np.testing.assert_allclose(got, s2s_ad.grad(f)(X.copy()), rtol=1e-12, atol=1e-14)


def test_a_view_rebound_in_its_loop_compiles_under_numba():
    pytest.importorskip("numba")
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no fallback: view_positions and retaken_view have compiled versions
        got = s2s_ad.grad(vf.slice_rebound_after_each_write, backend="numba")(X.copy())
    np.testing.assert_allclose(got, numeric_grad(vf.slice_rebound_after_each_write, (X.copy(),), 0), rtol=1e-5)


def test_the_generated_code_finds_the_positions_where_the_view_is_read():
    source = s2s_ad.grad(vf.slice_of_the_last_iteration).source_for(X.copy())
    assert "positions = view_positions(v, b, 'v'" in source
    assert "retaken_view(b, v, positions)" in source


def test_a_list_of_views_taken_in_a_loop_is_refused_where_the_code_runs():
    with pytest.raises(TransformError, match=r"views_by_positions_functions.py:\d+: .*vs is a list that may hold views"):
        s2s_ad.grad(vf.list_of_views_from_a_loop)(X.copy())


def test_a_view_the_recording_holds_as_a_copy_is_refused_not_read_as_it_was():
    # M.T[k:] is recorded for the reverse sweep as a copy (M is written later) taking the view's place
    # where a checkpointed loop's segments run again (elsewhere a copy beside it: test_kept_views.py):
    # no view of M where the code runs, though NumPy's T is one; refused rather than read with the old values
    with pytest.raises(TransformError, match="T may be a view of that array.*copy it where you take it"):
        s2s_ad.grad(vf.transpose_sliced_beside_a_checkpointed_loop)(X.copy())


def test_a_write_through_such_a_view_is_refused_before_anything_runs():
    with pytest.raises(TransformError, match=r"assignment into v\[\.\.\.\]: v may be a view of b"):
        s2s_ad.grad(vf.write_through_the_view)(X.copy())


def test_arrays_of_another_library_are_refused_naming_the_line():
    torch = pytest.importorskip("torch")
    x = torch.tensor(X, dtype=torch.float64)
    with pytest.raises(TransformError, match=r"views_by_positions_functions.py:\d+: .*view_positions .* no version "
                                             r"for arrays of torch"):
        s2s_ad.grad(vf.slice_of_the_last_iteration)(x)
