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


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("f", [mf.recursive_helper_updates_its_argument, mf.helper_updates_the_argument_it_is_passed,
                               mf.argument_normalised], ids=lambda f: f.__name__)
def test_a_helper_updating_an_array_it_cannot_show_the_caller_is_refused_at_its_line(f, backend):
    """A helper that updates its argument in place, called where it stays a call (a recursive one), or
    given the function's own argument: refused naming the helper's line, never a derivative that
    misses the write."""
    with pytest.raises(TransformError) as raised:
        s2s_ad.grad(f, backend=backend)(X.copy())
    helper = {mf.helper_updates_the_argument_it_is_passed: mf.scaled_in_place,
              mf.argument_normalised: mf.normalise}.get(f, mf.added_recursively)
    line = helper.__code__.co_firstlineno + 1
    assert f"memory_model_functions.py:{line}" in str(raised.value)
    assert "in-place update of v" in str(raised.value)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("f, helper", [(mf.helper_stores_into_a_list_it_is_given, mf.first_item_scaled),
                                       (mf.helper_grows_a_list_it_is_given, mf.grown)], ids=["store", "append"])
def test_a_helper_changing_a_list_it_is_given_is_refused_at_its_line(f, helper, backend):
    """Python changes the caller's list; the helper's result unused, the call would run as Python and its
    change stay unseen by the derivative: refused at the helper's line whether or not its result is read."""
    with pytest.raises(TransformError) as raised:
        s2s_ad.grad(f, backend=backend)(X.copy())
    assert f"memory_model_functions.py:{helper.__code__.co_firstlineno + 1}" in str(raised.value)


@pytest.mark.parametrize("f, words, line", [
    (mf.array_a_list_holds_on_some_paths_updated, "b is the same object as holder on some paths",
     "b *= x  # the array holder holds where x[0] >= 0, a new one else"),
    (mf.array_written_through_a_view_after_a_branch_that_may_replace_it, "b is that array on some paths",
     "return np.sum(b * b)  # b is the array v views on one path only"),
], ids=lambda v: getattr(v, "__name__", "_"))
def test_an_array_that_is_another_names_on_some_paths_only_is_refused_where_written_or_read(f, words, line):
    with pytest.raises(TransformError, match=words) as raised:
        s2s_ad.grad(f)(X.copy())
    assert open(mf.__file__).read().splitlines()[raised.value.line - 1].strip() == line


def test_an_update_through_an_item_the_dict_holds_twice_is_refused_naming_the_item():
    # d["u"] and d["w"] are one array: NumPy's += changes it for both, which a new item would not
    with pytest.raises(TransformError) as raised:
        s2s_ad.grad(mf.item_held_twice_by_a_dict_updated)(X.copy())
    message = str(raised.value)
    assert "memory_model_functions.py" in message and "in-place update of d['u']" in message


@pytest.mark.parametrize("f, line", [
    (mf.view_of_an_array_updated_then_replaced_in_a_loop, "return np.sum(head) + np.sum(b)"),
    (mf.view_of_a_dict_item_updated_in_a_loop, "return np.sum(tail)"),
    (mf.attribute_seen_by_a_view_updated_in_a_loop, "return np.sum(tail) + np.sum(box.v)"),
    (mf.views_of_arrays_made_in_either_branch_then_updated, "return np.sum(v ** 2)"),
], ids=lambda v: getattr(v, "__name__", "line"))
def test_a_view_of_an_array_a_loop_writes_on_some_iterations_only_is_refused_where_read(f, line):
    with pytest.raises(TransformError, match="written in place under a name") as raised:
        s2s_ad.grad(f)(X.copy())
    source = open(mf.__file__).read().splitlines()
    assert source[raised.value.line - 1].strip() == line


def test_an_attribute_update_of_an_object_the_function_is_given_is_refused():
    box = mf.Box(X.copy())

    def shifted(x, box):
        box.v += x
        return np.sum(box.v * x)

    with pytest.raises(TransformError, match="box is a parameter"):
        s2s_ad.grad(shifted)(X.copy(), box)
    np.testing.assert_array_equal(box.v, X)


jax = optional_import("jax")


def _jax_twins():
    """Each function written for JAX, which has no views: the copy-semantics rewrite, where every read
    of a view after the write reads the array as it is then (the issue's oracle for JAX)."""
    jnp = jax.numpy

    def tuple_bound_then_unpacked(x):
        b = x.at[0].set(3.0 * x[3])
        return jnp.sum(b[:2] * b[:2]) + jnp.sum(b[2:] * x[:2])

    def dict_holds_view(x):
        b = x.at[0].set(x[2] ** 2)
        return jnp.sum(b[:2] * x[:2]) + jnp.sum(b[2:])

    def split_then_write(x):
        b = x.at[0].set(x[1] * x[2])
        return jnp.sum(b[:2] * b[2:])

    def reshape_rows_then_write(x):
        m = x.at[3].set(x[0] * 7.0).reshape(2, 2)
        return jnp.sum(m[0] * m[1])

    def column_view_written(x):
        b = jnp.outer(x[:2], x[:2]).at[1:, 0].set(x[3] * 3.0)
        return jnp.sum(b * b)

    def transpose_written(x):
        b = jnp.outer(x[:2], x[2:]).at[1, 0].set(x[0] * 2.0)
        return jnp.sum(b * x[0])

    def reshape_written(x):
        b = x.at[3].set(x[0] ** 3)
        return jnp.sum(b * b)

    def update_held_by_dict(x):
        return jnp.sum((x + x ** 2) * x)

    def update_seen_by_view_in_loop(x):
        b = x
        for _ in range(3):
            b = b + x * 0.1
        return jnp.sum(b[1:] * b[1:])

    def views_chosen_in_a_branch_then_write(x):
        b = x.at[0].set(x[3] * 2.0)
        lo, hi = (b[:2], b[2:]) if x[0] > 0 else (b[2:], b[:2])
        return jnp.sum(lo * hi)

    def state_written_in_a_loop(x):
        state = x
        for _ in range(3):
            state = state.at[:2].set(state[:2] * 0.5 + state[2:])
        return jnp.sum(state[:2] * state[2:])

    def flip_read_after_write(x):
        b = x.at[0].set(x[1] * 4.0)
        return jnp.sum(jnp.flip(b) * jnp.arange(4.0))

    def rot90_read_after_write(x):
        m = jnp.outer(x[:2], x[2:]).at[0, 1].set(x[0] * 9.0)
        return jnp.sum(jnp.rot90(m) * jnp.array([[1.0, 2.0], [3.0, 4.0]]))

    def diagonal_read_after_write(x):
        m = jnp.outer(x[:2], x[2:]).at[1, 1].set(x[0] ** 2)
        d = jnp.diagonal(m)
        return jnp.sum(d * d)

    def swapped_and_moved_read_after_write_in_a_loop(x):
        m = jnp.outer(x[:2], x[2:]).reshape(1, 2, 2)
        for i in range(2):
            m = m.at[0, i, 0].set(m[0, i, 1] * x[i])
        return jnp.sum(jnp.swapaxes(m, 1, 2)[0, 0] * x[:2]) + jnp.sum(jnp.moveaxis(m, 0, -1)[:, :, 0] ** 2)

    def flipped_pieces_in_a_tuple_then_write(x):
        b = x.at[1].set(x[3] * x[2])
        return jnp.sum(jnp.flipud(b[:2]) * x[2:]) + jnp.sum(jnp.fliplr(jnp.outer(x[2:], x[2:])))

    return [tuple_bound_then_unpacked, dict_holds_view, split_then_write, reshape_rows_then_write, column_view_written,
            transpose_written, reshape_written, update_held_by_dict, update_seen_by_view_in_loop,
            views_chosen_in_a_branch_then_write, state_written_in_a_loop, flip_read_after_write,
            rot90_read_after_write, diagonal_read_after_write, swapped_and_moved_read_after_write_in_a_loop,
            flipped_pieces_in_a_tuple_then_write]


@pytest.mark.skipif(jax is None, reason="jax is not installed (pip install jax)")
@pytest.mark.parametrize("backend", BACKENDS)
def test_gradients_agree_with_jax_of_the_copy_semantics_rewrite(backend):
    jax.config.update("jax_enable_x64", True)
    for twin in _jax_twins():
        f = getattr(mf, twin.__name__)
        for x in (X, -X[::-1]):
            want = np.asarray(jax.grad(twin)(jax.numpy.asarray(x)))
            np.testing.assert_allclose(s2s_ad.grad(f, backend=backend)(x.copy()), want, rtol=1e-10, atol=1e-12,
                                       err_msg=twin.__name__)


@pytest.mark.parametrize("f", mf.FUNCTIONS + [mf.copy_joined_then_written], ids=lambda f: f.__name__)
def test_jvp_leaves_the_tangent_it_was_given_as_it_was(f):
    direction = DIRECTION.copy()
    _, along = s2s_ad.jvp(f, (X.copy(),), (direction,))
    np.testing.assert_array_equal(direction, DIRECTION)
    np.testing.assert_allclose(along, numeric_grad(f, (X.copy(),), 0) @ DIRECTION, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("f", mf.LOOP_INDEX_VIEWS, ids=lambda f: f.__name__)
def test_a_view_by_a_loop_index_is_written_through_and_read_as_numpy_shows(f, backend):
    test_value_and_gradient_see_the_write_as_numpy_does(f, backend)


@pytest.mark.parametrize("f", mf.LOOP_INDEX_VIEWS, ids=lambda f: f.__name__)
def test_a_view_by_a_loop_index_in_forward_mode_and_the_hessian(f):
    test_forward_mode_pullback_and_hessian_agree(f)


def test_a_number_taken_by_a_loop_index_is_not_written_through():
    with pytest.raises(TypeError):
        mf.element_of_a_vector_by_loop_index_written(X.copy())
    with pytest.raises((TypeError, TransformError)):
        s2s_ad.grad(mf.element_of_a_vector_by_loop_index_written)(X.copy())


def test_a_store_into_an_element_of_a_list_of_numbers_names_what_the_user_wrote():
    """``g[1][0] = v`` where ``g[1]`` is a list: refused at the line, naming ``g[1][0]`` (not the name the
    front end binds the outer element to) and saying what to write instead."""
    source = ("import numpy as np\n\ndef f(x):\n    g = [[x[0], x[1]], [x[2], x[3]]]\n"
              "    g[1][0] = g[0][1] * 2.0\n    return g[1][0] * x[2]\n")
    namespace: dict = {}
    exec(compile(source, "<nested list store>", "exec"), namespace)
    import linecache
    linecache.cache["<nested list store>"] = (len(source), None, source.splitlines(True), "<nested list store>")
    with pytest.raises(TransformError) as caught:
        s2s_ad.grad(namespace["f"])(X.copy())
    message = str(caught.value)
    assert ":5" in message and "g[1][0]" in message and "np.array" in message and "g_item" not in message
