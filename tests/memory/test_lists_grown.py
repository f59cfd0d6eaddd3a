"""Lists grown by ``append`` and ``+=`` (the memory model for lists: ``memory/lists.py``,
``frontend/list_sharing.py``, ``passes/appends.py``).

Oracles: the function's own value, central differences for the gradient, jvp and Hessian, on both
backends.  A list another holder sees grow is refused, naming the line where it was taken.
"""
from __future__ import annotations

import inspect
import warnings

import numpy as np
import pytest

import s2s_ad
from s2s_ad import TransformError
from conftest import check_compiled_gradient, numeric_grad, optional_import, second_differences

import list_growth_functions as lg

numba = optional_import("numba")
X = np.array([0.3, 0.7, 1.1, 0.2, 0.9])
DIRECTION = np.array([0.5, -0.3, 0.2, 0.8, -0.1])
BACKENDS = ["python", pytest.param("numba", marks=pytest.mark.skipif(
    numba is None, reason="numba is not installed (pip install 's2s_ad[numba]')"))]


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("f", lg.GROWN, ids=lambda f: f.__name__)
def test_grown_lists_differentiate_as_python_runs_them(f, backend):
    want = numeric_grad(f, (X.copy(),), 0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", s2s_ad.CompileFallbackWarning)
        value, gradient = s2s_ad.value_and_grad(f, backend=backend)(X.copy())
        _, tangent = s2s_ad.jvp(f, (X.copy(),), (DIRECTION,), backend=backend)
    np.testing.assert_allclose(value, f(X.copy()), rtol=1e-12)
    np.testing.assert_allclose(gradient, want, rtol=1e-6, atol=1e-7)
    np.testing.assert_allclose(tangent, want @ DIRECTION, rtol=1e-6, atol=1e-7)


@pytest.mark.parametrize("f", lg.GROWN, ids=lambda f: f.__name__)
def test_pullback_and_hessian_of_grown_lists(f):
    want = numeric_grad(f, (X.copy(),), 0)
    _, pullback = s2s_ad.vjp(f, X.copy())
    np.testing.assert_allclose(pullback(1.0)[0], want, rtol=1e-6, atol=1e-7)
    np.testing.assert_allclose(s2s_ad.hessian(f)(X.copy()), second_differences(f, X.copy()), rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("f, where, taken", lg.HELD, ids=[f.__name__ for f, _, _ in lg.HELD])
def test_a_list_another_holder_sees_grow_is_refused_at_that_line(f, where, taken):
    lines, first = inspect.getsourcelines(where)
    line = first + next(i for i, text in enumerate(lines) if taken in text)
    with pytest.raises(TransformError) as refused:
        s2s_ad.grad(f)(X.copy())
    assert f"list_growth_functions.py:{line}:" in str(refused.value)
    assert "list" in str(refused.value)


def test_the_generated_code_grows_the_list_in_place():
    # a new list per append is a copy per append: quadratic in the list's length
    for source in (s2s_ad.grad(lg.squares_in_a_loop).source_for(X), s2s_ad.source(lg.squares_in_a_loop, mode="forward")):
        assert "out_1.append(power)" in source
        assert "list_append" not in source


@pytest.mark.skipif(numba is None, reason="numba is not installed (pip install 's2s_ad[numba]')")
@pytest.mark.parametrize("f", [lg.squares_in_a_loop, lg.appended_in_branches, lg.a_new_list_per_outer_trip,
                               lg.grown_in_a_while_loop, lg.summed_by_sum, lg.recurrence_reading_the_last_item],
                         ids=lambda f: f.__name__)
def test_numba_compiles_lists_built_by_append(f):
    check_compiled_gradient(f, X.copy())
