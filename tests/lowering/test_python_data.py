"""Lists, tuples, local array writes and nested functions against finite differences."""
import numpy as np
import pytest

import s2s_ad
from conftest import assert_gradient_matches, numeric_grad
import data_functions as df

RNG = np.random.default_rng(11)


@pytest.mark.parametrize("n", [2, 5])
def test_list_built_with_append_then_summed_and_indexed(n):
    assert_gradient_matches(df.build_list, (1.5, n))


def test_tuple_returned_from_a_helper():
    assert_gradient_matches(df.unpack_helper, (1.5, 0.7), (0, 1))


def test_local_tuple_packing_and_unpacking():
    assert_gradient_matches(df.local_tuple, (1.5, 0.7), (0, 1))


@pytest.mark.parametrize("n", [0, 1, 6])
def test_list_comprehension_with_condition(n):
    assert_gradient_matches(df.comprehension, (1.3, n))


def test_nested_comprehensions():
    assert_gradient_matches(df.nested_comprehension, (0.7,))


def test_list_of_values_to_array():
    assert_gradient_matches(df.list_to_array, (0.4, -1.1), (0, 1))


@pytest.mark.parametrize("fn", [df.stencil, df.overwrite_read_later, df.copy_then_write],
                         ids=lambda f: f.__name__)
def test_writes_into_arrays_the_function_created(fn):
    x = RNG.normal(size=6)[:4] if fn is df.overwrite_read_later else RNG.normal(size=6)
    before = x.copy()
    assert_gradient_matches(fn, (x,))
    np.testing.assert_array_equal(x, before)  # the argument is never changed


def test_augmented_writes_with_repeated_positions():
    assert_gradient_matches(df.accumulate_in_place, (RNG.normal(size=7), 0.8), (0, 1))


def test_row_writes():
    assert_gradient_matches(df.row_writes, (RNG.normal(size=4),))


def test_overwritten_slices_go_on_the_tape():
    # buf is a vector and i an integer: what the store overwrites is one number, recorded as it is
    text = s2s_ad.source(df.overwrite_read_later, args=(np.ones(4),))
    forward, sweep = text.split("# reverse sweep")
    assert "tape.append(buf[i])" in forward and "np.copy" not in forward
    assert "old_buf = tape.pop()" in sweep and "buf[i] = old_buf" in sweep
    assert_gradient_matches(df.overwrite_read_later, (np.linspace(0.2, 0.8, 4),), (0,))


def test_an_overwritten_row_is_copied_onto_the_tape():
    # m[i] of a matrix is a row, a view the store changes: it is recorded as a copy
    text = s2s_ad.source(df.overwrite_rows_read_later, args=(np.ones(3),))
    assert "tape.append(np.copy(m[i]))" in text.split("# reverse sweep")[0]
    assert_gradient_matches(df.overwrite_rows_read_later, (np.linspace(0.2, 0.8, 3),), (0,))


@pytest.mark.parametrize("x, y", [(0.4, 0.7), (0.1, 0.2)])
def test_nested_function_inlined_with_its_scope(x, y):
    assert_gradient_matches(df.with_nested, (x, y), (0, 1))


def test_writing_into_an_argument_is_refused():
    with pytest.raises(s2s_ad.TransformError, match=r"data_functions.py:\d+:\d+: .*x\[\.\.\.\].*x = x.copy\(\)"):
        s2s_ad.grad(df.writes_argument)(np.ones(3))


@pytest.mark.parametrize("f, x", [
    (df.rows_of_a_local_matrix, np.array([0.3, -0.2])),
    (df.rows_added_in_a_loop, np.array([0.3, -0.2])),
    (df.repeated_index_added, 0.7),
    (df.repeated_index_assigned, 0.7),
    (df.alias_sees_an_in_place_update, 0.7),
    (df.view_taken_after_the_write, 0.7),
])
def test_writes_of_rows_and_repeated_indices(f, x):
    assert_gradient_matches(f, (x,))


def test_an_array_written_in_a_loop_gets_its_adjoint_copied_once():
    text = s2s_ad.source(df.row_writes, args=(np.ones(4),))
    loop = text.split("# reverse sweep")[1].split("for ")[1]
    assert "writable_copy" not in loop and "zeros_like" not in loop


@pytest.mark.parametrize("x, y, z", [(0.5, 0.2, 0.9), (0.1, 0.7, 0.3)])
def test_max_and_min_of_a_list_or_of_three_values(x, y, z):
    assert_gradient_matches(df.extremes, (x, y, z), (0, 1, 2))


def test_in_place_updates_that_are_fine():
    assert_gradient_matches(df.in_place_updates_that_are_fine, (0.7, -0.3), (0, 1))
    assert s2s_ad.value_and_grad(df.in_place_updates_that_are_fine)(0.7, -0.3)[0] == pytest.approx(
        df.in_place_updates_that_are_fine(0.7, -0.3))


def test_derivatives_at_zero_are_numbers_not_nan():
    # regressions: np.prod divided by the input; x ** y took log(0) and 0 ** -1
    x = np.array([0.0, 2.0, 3.0, 0.5])
    np.testing.assert_allclose(s2s_ad.grad(df.product_with_a_zero)(x), numeric_grad(df.product_with_a_zero, (x,), 0),
                               atol=1e-6)
    assert s2s_ad.grad(df.powers_at_zero, wrt=(0, 1))(0.0, 2.0) == (0.0, 0.0)
    assert s2s_ad.jvp(df.product_with_a_zero, (x,), (np.ones(4),))[1] == pytest.approx(
        float(numeric_grad(df.product_with_a_zero, (x,), 0).sum()))


def test_reversed_inside_enumerate_and_zip():
    assert_gradient_matches(df.enumerate_reversed_and_cumsum, (np.array([0.3, -0.5, 0.8]),))


def test_an_integer_tangent_is_a_direction_like_any_other():
    _, integer = s2s_ad.jvp(df.copy_then_write, (np.array([1.0, 2.0, 3.0]),), (np.array([1, 1, 1]),))
    _, floating = s2s_ad.jvp(df.copy_then_write, (np.array([1.0, 2.0, 3.0]),), (np.ones(3),))
    assert integer == floating
