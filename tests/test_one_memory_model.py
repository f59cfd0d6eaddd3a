"""Issue 31, "one memory model": a write through any name is seen through every view of the array.

Each function in ``memory_model_functions.py`` takes a view (a slice, a row, a column, ``.T``, a
reshape, a split) and carries it in a tuple, a dict, a namedtuple, a dataclass, an object, a helper's
or a lambda's result or a conditional expression, writes into the array through another name, and
reads the view afterwards; or writes through the view itself.  Oracles: NumPy's own execution of the
function for the value, central differences for the gradient (and, through them, forward mode, the
pullback, the Hessian), on both backends.  What the model cannot follow is refused, naming the line.
"""
from __future__ import annotations

import numpy as np
import pytest

import s2s_ad
from s2s_ad import TransformError
from conftest import numeric_grad, optional_import

import memory_model_functions as mf

numba = optional_import("numba")
X = np.array([0.7, -1.3, 0.4, 2.1])
DIRECTION = np.array([0.3, -0.2, 0.5, 0.1])
BACKENDS = ["python", pytest.param("numba", marks=pytest.mark.skipif(
    numba is None, reason="numba is not installed (pip install 's2s_ad[numba]')"))]


def _gradient_differences(f, x, h=1e-5):
    """Central differences of s2s_ad's gradient: the Hessian's oracle."""
    grad = s2s_ad.grad(f)
    columns = []
    for i in range(x.size):
        step = np.zeros_like(x)
        step[i] = h
        columns.append((grad(x + step) - grad(x - step)) / (2 * h))
    return np.array(columns)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("f", mf.FUNCTIONS, ids=lambda f: f.__name__)
def test_value_and_gradient_see_the_write_as_numpy_does(f, backend):
    want = numeric_grad(f, (X.copy(),), 0)
    value, got = s2s_ad.value_and_grad(f, backend=backend)(X.copy())
    np.testing.assert_allclose(value, f(X.copy()), rtol=1e-12)
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("f", mf.FUNCTIONS, ids=lambda f: f.__name__)
def test_forward_mode_pullback_and_hessian_agree(f):
    want = numeric_grad(f, (X.copy(),), 0)
    value, tangent = s2s_ad.jvp(f, (X.copy(),), (DIRECTION,))
    np.testing.assert_allclose(value, f(X.copy()), rtol=1e-12)
    np.testing.assert_allclose(tangent, want @ DIRECTION, rtol=1e-5, atol=1e-6)
    out, pullback = s2s_ad.vjp(f, X.copy())
    np.testing.assert_allclose(pullback(1.0)[0], want, rtol=1e-5, atol=1e-6)
    hessian = s2s_ad.hessian(f)(X.copy())
    np.testing.assert_allclose(hessian, _gradient_differences(f, X.copy()), rtol=1e-4, atol=1e-5)


def test_the_arguments_are_left_as_they_were():
    for f in mf.FUNCTIONS:
        x = X.copy()
        s2s_ad.grad(f)(x)
        np.testing.assert_array_equal(x, X, err_msg=f.__name__)


def test_a_view_read_again_is_taken_again_in_the_generated_code():
    source = s2s_ad.source(mf.tuple_bound_then_unpacked, stage="ssa")
    assert "b[:2]" in source.split("b[0] = ")[1]  # lo read after the write is b[:2] taken again


def test_a_reshape_that_numpy_copied_is_refused_where_the_code_runs():
    # b is Fortran-ordered (x * 1.0 keeps x's order), so b.reshape(4) is a copy holding the old values
    x = np.asfortranarray(np.arange(4.0).reshape(2, 2) + 0.5)
    with pytest.raises(TransformError, match="copy"):
        s2s_ad.grad(mf.reshape_of_fortran_array)(x)
    c = np.ascontiguousarray(x)
    np.testing.assert_allclose(s2s_ad.grad(mf.reshape_of_fortran_array)(c),
                               numeric_grad(mf.reshape_of_fortran_array, (c,), 0), rtol=1e-6, atol=1e-8)


def test_an_update_of_an_argument_another_name_holds_is_still_refused_naming_the_line():
    with pytest.raises(TransformError) as raised:
        s2s_ad.grad(mf.update_of_argument_held_by_dict)(X.copy())
    assert "memory_model_functions.py" in str(raised.value) and "in-place update" in str(raised.value)
