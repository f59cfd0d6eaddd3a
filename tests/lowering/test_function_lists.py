"""Issue 33 (functions as values, the refusals users met most): a name bound to a function of a
module (``act = np.tanh``, ``act = relu``), a list or tuple of functions (NumPy's, yours, lambdas)
walked by a loop (unrolled: each item is another function), zipped or enumerated, called by a
constant index.  Each in every mode against central differences, and on the Numba backend; what
s2s_ad cannot make code for (a function chosen where the code runs, a list of functions used as a
value) is a TransformError at the user's line."""
from __future__ import annotations

import numpy as np
import pytest

import function_list_functions as fl
import s2s_ad
from conftest import assert_every_mode, assert_gradient_matches, assert_numba_gives_the_same_numbers

X = np.array([0.6, -1.1, 0.9])

CASES = [fl.name_bound_to_functions, fl.layers_of_functions, fl.lambdas_in_a_list, fl.functions_zipped_with_weights,
         fl.functions_zipped_with_an_array, fl.functions_enumerated, fl.functions_called_by_index,
         fl.functions_in_a_loop_in_a_loop, fl.lambda_reads_a_name_when_called, fl.dict_of_functions_by_key,
         fl.loop_over_the_keys_of_a_dict_of_functions, fl.functions_enumerated_and_zipped,
         fl.module_level_list_of_functions, fl.module_level_dict_of_functions_looped,
         fl.module_level_dict_item_bound_to_a_name,
         fl.lambda_made_in_a_loop_called_after_it, fl.def_made_in_a_loop_called_after_it,
         fl.lambdas_appended_with_their_defaults, fl.lambdas_appended_read_names_when_called,
         fl.lambdas_appended_called_by_index, fl.functions_paired_with_numbers,
         fl.functions_paired_with_weights_appended, fl.lambda_reading_a_dict_made_in_a_loop_run_as_a_loop]


@pytest.mark.parametrize("f", CASES, ids=lambda f: f.__name__)
def test_functions_as_values_in_every_mode(f):
    assert_every_mode(f, X.copy())


@pytest.mark.parametrize("f", CASES, ids=lambda f: f.__name__)
def test_functions_as_values_on_numba(f):
    assert_numba_gives_the_same_numbers(f, X.copy())


def test_the_lambda_reads_the_name_where_it_is_called_as_python_does():
    x = X.copy()
    want = 3.0 + np.cos(x)  # k is 3.0 when the lambda runs
    np.testing.assert_allclose(s2s_ad.grad(fl.lambda_reads_a_name_when_called)(x), want, rtol=1e-12)


@pytest.mark.parametrize("f, want", [
    # late binding: k is 2 when g is called, after the loop: d/dx sum((2 sin x + x)^2)
    (fl.lambda_made_in_a_loop_called_after_it, lambda x: 2 * (2 * np.sin(x) + x) * (2 * np.cos(x) + 1)),
    # the defaults are read where each lambda is made: (1 + 2 + 3) sin x
    (fl.lambdas_appended_with_their_defaults, lambda x: 2 * (6 * np.sin(x)) * 6 * np.cos(x)),
    # the free names are read where each lambda is called: k == 2 for all three
    (fl.lambdas_appended_read_names_when_called, lambda x: 3 * 1.5 / np.cosh(1.5 * x + 2) ** 2),
], ids=lambda v: getattr(v, "__name__", ""))
def test_names_are_read_when_called_and_defaults_when_made_as_python_does(f, want):
    x = X.copy()
    np.testing.assert_allclose(s2s_ad.grad(f)(x), want(x), rtol=1e-10)


def test_a_module_level_list_of_functions_changed_makes_the_code_again():
    gradient = s2s_ad.grad(fl.module_level_list_of_functions)
    saved = list(fl.ACTIVATIONS)
    try:
        for change in ("item", "added", "removed"):
            if change == "item":
                fl.ACTIVATIONS[1] = np.cos
            elif change == "added":
                fl.ACTIVATIONS.append(np.tanh)
            else:
                del fl.ACTIVATIONS[0]
            want = assert_gradient_matches(fl.module_level_list_of_functions, (X.copy(),))
            np.testing.assert_allclose(gradient(X.copy()), want, rtol=1e-12)
    finally:
        fl.ACTIVATIONS[:] = saved


def test_a_module_level_dicts_item_bound_to_a_name_follows_the_key_and_the_dict():
    gradient = s2s_ad.grad(fl.module_level_dict_item_bound_to_a_name)
    x = X.copy()
    for loss in ("l2", "l1_smooth", "l2"):
        want = assert_gradient_matches(fl.module_level_dict_item_bound_to_a_name, (x, loss))
        np.testing.assert_allclose(gradient(x, loss), want, rtol=1e-12)
    saved = fl.LOSSES["l2"]
    try:
        fl.LOSSES["l2"] = lambda r: np.sum(np.sin(r))  # the item replaced: the code is made again
        np.testing.assert_allclose(gradient(x, "l2"), np.cos(x - 0.3) + np.cos(x * x) * 2.0 * x, rtol=1e-12)
    finally:
        fl.LOSSES["l2"] = saved


@pytest.mark.parametrize("f, words", [
    (fl.function_chosen_in_a_branch, "act, a function chosen on some paths: the code is made before it runs"),
    (fl.list_of_functions_returned, "the list of functions 'fs' used as a value: loop over it"),
    (fl.item_out_of_range, "index it by a constant from 0 to 0"),
    (fl.key_not_in_the_dict, "read it by one of its keys, a constant \\('tanh'\\)"),
    (fl.lambda_made_in_a_loop_that_may_not_run, "g is defined on some paths only \\(in one branch of an if, or "
                                                "in a loop that may not run\\)"),
    (fl.lambda_made_in_an_empty_loop, "g is defined on some paths only"),
    (fl.lambda_appended_in_a_loop_run_as_a_loop, "the append of a function to 'fs': a list of functions is made "
                                                 "while transforming"),
], ids=lambda v: getattr(v, "__name__", ""))
def test_what_cannot_be_made_before_it_runs_is_refused_at_its_line(f, words):
    with pytest.raises(s2s_ad.TransformError, match=words) as caught:
        s2s_ad.grad(f)(X.copy())
    assert "function_list_functions.py" in str(caught.value)
