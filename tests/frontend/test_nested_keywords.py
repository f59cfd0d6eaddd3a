"""Issue 33 (the newcomer's list): a nested def or lambda called with keyword arguments, and a
functools.partial fixing them, differentiated in every mode against central differences and on the
Numba backend; a call Python itself would refuse (no such parameter, one given twice, one missing)
is a TransformError at the user's line, as Python's TypeError would be."""
from __future__ import annotations

import numpy as np
import pytest

import nested_keyword_functions as nk
import s2s_ad
from conftest import assert_every_mode, assert_numba_gives_the_same_numbers

X = np.array([0.6, -1.1, 0.9])

CASES = [nk.partial_fixing_a_keyword, nk.partial_fixing_a_later_keyword, nk.partial_keyword_overridden_at_the_call,
         nk.keyword_of_an_array_computed_before, nk.lambda_called_by_keyword, nk.keyword_given_in_a_loop]


@pytest.mark.parametrize("f", CASES, ids=lambda f: f.__name__)
def test_keywords_of_a_nested_function_in_every_mode(f):
    assert_every_mode(f, X.copy())


@pytest.mark.parametrize("f", CASES, ids=lambda f: f.__name__)
def test_keywords_of_a_nested_function_on_numba(f):
    assert_numba_gives_the_same_numbers(f, X.copy())


@pytest.mark.parametrize("f, words", [
    (nk.unknown_keyword, "it has no parameter 'factor'"),
    (nk.keyword_given_twice, "'scale' is given twice"),
    (nk.required_parameter_skipped, "'w' is not given"),
], ids=lambda v: getattr(v, "__name__", ""))
def test_a_call_python_would_refuse_is_refused_at_its_line(f, words):
    with pytest.raises(TypeError):  # (Python's own error for the same call)
        f(X.copy())
    with pytest.raises(s2s_ad.TransformError, match=words) as caught:
        s2s_ad.grad(f)(X.copy())
    assert "nested_keyword_functions.py" in str(caught.value)
