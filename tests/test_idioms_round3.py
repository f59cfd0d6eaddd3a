"""Issue 33: everyday idioms that were refused, each in every mode (grad, value_and_grad, vjp, jvp,
hessian against central differences) and on Numba (which may run them as Python, saying so); what
stays refused is refused before anything runs, naming the line."""
import inspect
import random

import numpy as np
import pytest

import s2s_ad
import idiom_round3_functions as fx
from conftest import assert_every_mode, assert_numba_gives_the_same_numbers

X = np.array([0.5, -1.2, 2.0])

SUPPORTED = [fx.sorted_items_by_key, fx.sorted_items_by_length_reversed, fx.sorted_items_by_a_module_function,
             fx.sorted_dict_and_items, fx.sorted_dict_values, fx.seeded_noise, fx.seeded_twice_and_python_random,
             fx.formatted_messages, fx.formatted_unused, fx.inspected_and_converted, fx.sum_of_sorted_generator,
             fx.sorted_list_reversed, fx.sorted_array, fx.element_updated, fx.element_updated_then_vector_written,
             fx.row_updated_writes_the_matrix, fx.items_of_a_vector_updated_in_place, fx.rows_updated_in_a_loop,
             fx.lambdas_in_a_list]


@pytest.mark.parametrize("f", SUPPORTED, ids=lambda f: f.__name__)
def test_every_mode_against_central_differences(f):
    assert_every_mode(f, X)


@pytest.mark.parametrize("f", SUPPORTED, ids=lambda f: f.__name__)
def test_numba_gives_the_same_numbers(f):
    assert_numba_gives_the_same_numbers(f, X)


def test_the_order_is_pythons():
    # (a b c): 2 x1, x0, x2 weighted 1, 2, 3; by length reversed (ccc bb a): x2^2, 2 x0^2, 3 (2 x1)^2
    np.testing.assert_allclose(s2s_ad.grad(fx.sorted_items_by_key)(X), [2.0, 2.0, 3.0])
    np.testing.assert_allclose(s2s_ad.grad(fx.sorted_items_by_length_reversed)(X), [4 * X[0], 24 * X[1], 2 * X[2]])
    np.testing.assert_allclose(s2s_ad.grad(fx.sorted_dict_values)(X), [0.0, 6.0, 1.0])


def test_seeded_draws_are_numpys_own_and_the_state_is_left_as_one_call_leaves_it():
    np.random.seed(0)
    noise = np.random.normal(size=3)
    np.testing.assert_allclose(s2s_ad.grad(fx.seeded_noise)(X), 2 * (X + noise))
    value, _ = s2s_ad.value_and_grad(fx.seeded_twice_and_python_random)(X)
    after = (np.random.normal(), random.random())
    assert value == fx.seeded_twice_and_python_random(X)
    assert after == (np.random.normal(), random.random())


def test_formatted_strings_are_pythons(capsys):
    s2s_ad.grad(fx.formatted_messages)(X)
    printed = capsys.readouterr().out.splitlines()  # (S2S_AD_CHECK=1 runs the function again: printed again)
    assert printed and set(printed) == {"0.500000 -1.200 2.00"}
    assert "percent_formatted('%.6f'" in s2s_ad.source(fx.formatted_messages)


def test_the_element_update_leaves_the_vector_and_the_row_update_writes_the_matrix():
    np.testing.assert_allclose(s2s_ad.grad(fx.element_updated)(X), [6.0 + 8 * X[0], 8 * X[1], 8 * X[2]])
    np.testing.assert_allclose(s2s_ad.grad(fx.items_of_a_vector_updated_in_place)(X), 2 * X)
    source = s2s_ad.source(fx.element_updated)  # kinds unknown: NumPy's rule decides where it runs
    assert "is_row_of_m" in source


def test_generated_code_reads_cleanly_for_a_sorted_dict():
    source = s2s_ad.source(fx.sorted_items_by_key)
    assert "sorted(" not in source  # the order was decided while transforming


@pytest.mark.parametrize("f, words", [
    (fx.sorted_by_a_traced_key, "whose order depends on values computed at run time"),
    (fx.sorted_numbers_by_a_key, "sorted\\(\\) with a key function of values computed at run time"),
    (fx.print_in_a_generator, "print runs in a differentiated function only as a statement of its own"),
], ids=lambda v: getattr(v, "__name__", "words"))
def test_what_stays_refused_is_refused_at_its_line(f, words):
    line = next(i for i, text in enumerate(inspect.getsource(fx).splitlines(), 1)
                if "REFUSED" in text and i > fx.__dict__[f.__name__].__code__.co_firstlineno)
    with pytest.raises(s2s_ad.TransformError, match=rf"idiom_round3_functions.py:{line}\b.*{words}"):
        s2s_ad.grad(f)(X)
