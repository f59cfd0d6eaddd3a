"""Issue 18, part 1: one home for aliasing ("may these two names share memory").

Every function in ``aliasing_ownership_functions.py`` gives the right value and derivative in
``grad``, ``value_and_grad``, ``vjp``, ``jvp``, ``hessian`` (forward over reverse) and forward-mode
``jacobian``, ``has_aux`` where it returns a pair, and in ``grad`` of a caller.  Oracles: the function
itself run by NumPy (values), central differences at two step sizes (first and second derivatives),
the issue's closed forms, and JAX for the tuple-assignment example.
"""
from __future__ import annotations

import numpy as np
import pytest

import s2s_ad
import aliasing_ownership_functions as fns
from s2s_ad.core import runtime

V = np.array([0.3, -0.5, 0.7, 1.1])
DIRECTION = np.array([0.4, -1.0, 0.25, 2.0])

ISSUE_EXAMPLES = [
    fns.tangent_shared_with_a_later_write, fns.time_step_reads_a_shifted_copy,
    fns.halves_bound_by_a_tuple_assignment, fns.columns_bound_by_a_tuple_assignment,
    fns.stored_into_itself_whole, fns.stored_into_itself_ellipsis, fns.stored_into_itself_reversed,
    fns.stored_into_itself_by_integer_array, fns.stored_into_itself_columns_reversed, fns.squeezed_buffer,
    fns.heat_equation_boundary_condition, fns.product_of_two_variables_written,
    fns.reduction_along_an_axis_written, fns.sorted_copy_written, fns.solution_written, fns.differences_written,
    fns.rolled_written, fns.tiled_written, fns.helper_result_written, fns.element_carried_through_a_loop,
    fns.integer_array_index_read_after_a_write,
]
USER_FUNCTIONS = [
    fns.trajectory_into_preallocated_buffer, fns.swap_two_elements_with_a_temporary,
    fns.dirichlet_boundaries_both_ends, fns.slice_view_read_after_write, fns.helper_returning_a_view_then_write,
    fns.running_maximum_buffer, fns.in_place_accumulate_rows, fns.mask_copy_scaled, fns.cumulative_in_place,
    fns.shift_left_in_place, fns.reversed_view_then_write, fns.boundary_written_before_the_update,
    fns.buffer_made_on_either_branch, fns.element_and_a_new_read_of_it_in_one_statement,
]
CALLERS = [
    fns.caller_of_tangent_shared, fns.caller_of_tuple_halves, fns.caller_of_self_store,
    fns.caller_of_heat_equation, fns.caller_of_predictions, fns.caller_of_squeezed,
    fns.caller_of_element_and_copies,
]
# b[[3, 2, 1, 0]] = b: NumPy copies the overlapping right side from 2.0 on; before, it writes element by
# element, and the store is refused (tested below) rather than differentiated as a copy
OVERLAPPING_FANCY_STORES = [fns.stored_into_itself_by_integer_array, fns.caller_of_self_store]
if not runtime.FANCY_STORES_COPY_OVERLAP:
    ISSUE_EXAMPLES = [f for f in ISSUE_EXAMPLES if f not in OVERLAPPING_FANCY_STORES]
    CALLERS = [f for f in CALLERS if f not in OVERLAPPING_FANCY_STORES]
SCALAR_FUNCTIONS = ISSUE_EXAMPLES + USER_FUNCTIONS + CALLERS


@pytest.mark.skipif(runtime.FANCY_STORES_COPY_OVERLAP, reason="this NumPy copies an overlapping right side")
@pytest.mark.parametrize("f", OVERLAPPING_FANCY_STORES, ids=lambda f: f.__name__)
def test_an_overlapping_integer_array_store_is_refused_where_numpy_does_not_copy(f):
    with pytest.raises(s2s_ad.TransformError, match="copy the value first"):
        s2s_ad.grad(f)(np.array([0.3, -0.5, 0.7, 1.1]))


def central_gradient(f, v, h):
    return np.array([(f(v + e) - f(v - e)) / (2 * h) for e in np.eye(len(v)) * h])


def checked_gradient(f, v=V):
    """Central differences at two step sizes, which must agree with each other (a smooth point)."""
    coarse, fine = central_gradient(f, v, 1e-4), central_gradient(f, v, 1e-6)
    np.testing.assert_allclose(coarse, fine, rtol=1e-5, atol=1e-6)
    return fine


def checked_hessian(f, v=V):
    rows = [central_gradient(lambda w, i=i: central_gradient(f, w, 1e-4)[i], v, 1e-4) for i in range(len(v))]
    return np.array(rows)


@pytest.mark.parametrize("f", SCALAR_FUNCTIONS, ids=lambda f: f.__name__)
def test_grad_and_value_and_grad_match_differences(f):
    expected = checked_gradient(f)
    np.testing.assert_allclose(s2s_ad.grad(f)(V.copy()), expected, rtol=1e-6, atol=1e-7)
    value, gradient = s2s_ad.value_and_grad(f)(V.copy())
    np.testing.assert_allclose(value, f(V.copy()), rtol=1e-12)
    np.testing.assert_allclose(gradient, expected, rtol=1e-6, atol=1e-7)


@pytest.mark.parametrize("f", SCALAR_FUNCTIONS, ids=lambda f: f.__name__)
def test_vjp_and_jvp_match_differences(f):
    expected = checked_gradient(f)
    out, pullback = s2s_ad.vjp(f, V.copy())
    np.testing.assert_allclose(out, f(V.copy()), rtol=1e-12)
    (cotangent,) = np.atleast_1d(pullback(1.0)) if not isinstance(pullback(1.0), tuple) else pullback(1.0)
    np.testing.assert_allclose(cotangent, expected, rtol=1e-6, atol=1e-7)
    value, tangent = s2s_ad.jvp(f, (V.copy(),), (DIRECTION,))
    np.testing.assert_allclose(value, f(V.copy()), rtol=1e-12)
    np.testing.assert_allclose(tangent, expected @ DIRECTION, rtol=1e-6, atol=1e-7)


@pytest.mark.parametrize("f", SCALAR_FUNCTIONS, ids=lambda f: f.__name__)
def test_hessian_matches_second_differences_and_is_symmetric(f):
    hessian = s2s_ad.hessian(f)(V.copy())
    np.testing.assert_allclose(hessian, hessian.T, atol=1e-9)
    np.testing.assert_allclose(hessian, checked_hessian(f), rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("f", ISSUE_EXAMPLES + USER_FUNCTIONS, ids=lambda f: f.__name__)
def test_forward_mode_jacobian_of_the_gradient_is_the_hessian(f):
    forward = s2s_ad.jacobian(s2s_ad.grad(f))(V.copy())
    np.testing.assert_allclose(forward, checked_hessian(f), rtol=1e-4, atol=1e-5)


def test_hessian_of_the_tangent_shared_with_a_later_write_is_the_closed_form():
    # b = [v0, (v1-1)^2, (v2-1)^2, v3]: d2/dv1^2 of (v1-1)^4 is 12 (v1-1)^2
    expected = np.diag([2.0, 12 * (V[1] - 1) ** 2, 12 * (V[2] - 1) ** 2, 2.0])
    np.testing.assert_allclose(s2s_ad.hessian(fns.tangent_shared_with_a_later_write)(V), expected)
    np.testing.assert_allclose(expected, np.diag([2, 27, 1.08, 2]))
    # forward mode over the gradient (what grad(grad(f)) runs for one component), and jvp of the gradient
    gradient = s2s_ad.grad(fns.tangent_shared_with_a_later_write)
    np.testing.assert_allclose(s2s_ad.jacobian(gradient)(V), expected)
    _, column = s2s_ad.jvp(gradient, (V,), (np.eye(4)[1],))
    np.testing.assert_allclose(column, expected[1])


def test_grad_of_grad_of_the_tangent_shared_with_a_later_write_is_the_closed_form():
    f = fns.tangent_shared_with_a_later_write_of_one_number
    assert s2s_ad.grad(s2s_ad.grad(f))(-0.5) == pytest.approx(12 * (-0.5 - 1) ** 2)  # 27
    assert s2s_ad.hessian(f)(-0.5) == pytest.approx(27.0)


def test_views_bound_by_a_tuple_assignment_are_not_a_swap():
    # NumPy: b becomes [v2, v3, v2, v3]; d sum(b * [0, 1, 2, 3]) = [0, 0, 0 + 2, 1 + 3]
    b = V.copy()
    b[:2], b[2:] = b[2:], b[:2]
    np.testing.assert_allclose(b, [V[2], V[3], V[2], V[3]])
    np.testing.assert_allclose(s2s_ad.grad(fns.halves_bound_by_a_tuple_assignment)(V), [0.0, 0.0, 2.0, 4.0])


def test_views_bound_by_a_tuple_assignment_match_jax():
    jax = pytest.importorskip("jax")
    jnp = jax.numpy
    jax.config.update("jax_enable_x64", True)

    def jax_halves(v):  # what NumPy does: the first store, then the second store sees it
        b = v.at[:2].set(v[2:])
        b = b.at[2:].set(b[:2])
        return jnp.sum(b * jnp.arange(4.0))
    np.testing.assert_allclose(s2s_ad.grad(fns.halves_bound_by_a_tuple_assignment)(V), jax.grad(jax_halves)(V))
    np.testing.assert_allclose(s2s_ad.hessian(fns.halves_bound_by_a_tuple_assignment)(V), jax.hessian(jax_halves)(V),
                               atol=1e-12)


@pytest.mark.parametrize("f", [fns.stored_into_itself_whole, fns.stored_into_itself_ellipsis,
                               fns.stored_into_itself_reversed] + [fns.stored_into_itself_by_integer_array] * (
                                   runtime.FANCY_STORES_COPY_OVERLAP), ids=lambda f: f.__name__)
def test_an_array_stored_into_itself_has_the_closed_form_gradient(f):
    b = V.copy()
    permuted = np.arange(4.0)
    # b[:] = b keeps b; b[::-1] = b and b[[3, 2, 1, 0]] = b reverse it (NumPy copies the overlapping right side)
    if f in (fns.stored_into_itself_reversed, fns.stored_into_itself_by_integer_array):
        permuted = permuted[::-1]
    np.testing.assert_allclose(f(b), np.sum(V * permuted))
    np.testing.assert_allclose(s2s_ad.grad(f)(V), permuted)


@pytest.mark.parametrize("f", [fns.predictions_buffer_aux, fns.loss_and_residual_aux], ids=lambda f: f.__name__)
def test_has_aux_hands_out_the_buffer_as_the_function_left_it(f):
    (loss, aux), gradient = s2s_ad.value_and_grad(f, has_aux=True)(V.copy())
    expected_loss, expected_aux = f(V.copy())
    np.testing.assert_allclose(loss, expected_loss, rtol=1e-12)
    np.testing.assert_allclose(aux, expected_aux, rtol=1e-12)
    np.testing.assert_allclose(gradient, checked_gradient(lambda w: f(w)[0]), rtol=1e-6, atol=1e-7)
    gradient_only, aux_again = s2s_ad.grad(f, has_aux=True)(V.copy())
    np.testing.assert_allclose(aux_again, expected_aux, rtol=1e-12)
    np.testing.assert_allclose(gradient_only, gradient)


def test_a_zero_d_view_of_a_written_local_is_returned_with_its_value():
    value, gradient = s2s_ad.value_and_grad(fns.squeezed_buffer)(V)
    np.testing.assert_allclose(value, np.sum(V * V))
    np.testing.assert_allclose(gradient, 2 * V)


@pytest.mark.parametrize("f", [fns.heat_equation_boundary_condition, fns.product_of_two_variables_written,
                               fns.reduction_along_an_axis_written, fns.sorted_copy_written, fns.solution_written,
                               fns.differences_written, fns.rolled_written, fns.tiled_written,
                               fns.helper_result_written, fns.element_carried_through_a_loop,
                               fns.integer_array_index_read_after_a_write, fns.mask_copy_scaled,
                               fns.boundary_written_before_the_update, fns.buffer_made_on_either_branch],
                         ids=lambda f: f.__name__)
def test_writes_into_arrays_the_function_made_are_not_refused(f):
    # each was refused as "not an array this function created" or "may be a view"
    s2s_ad.source(f, args=(V,))
    np.testing.assert_allclose(s2s_ad.grad(f)(V), checked_gradient(f), rtol=1e-6, atol=1e-7)


def test_writing_into_an_argument_is_still_refused():
    def writes_argument(v):
        v[0] = 0.0
        return np.sum(v)
    with pytest.raises(s2s_ad.TransformError, match="not an array this function created"):
        s2s_ad.grad(writes_argument)(V.copy())


def test_writing_into_a_view_of_an_argument_is_still_refused():
    def writes_view(v):
        w = v[1:]
        w[0] = 0.0
        return np.sum(v)
    with pytest.raises(s2s_ad.TransformError):
        s2s_ad.grad(writes_view)(V.copy())


def test_a_loop_carried_array_that_becomes_an_argument_is_still_refused():
    def becomes_the_argument(v):
        u = v * 1.0
        for _ in range(3):
            u[0] = 0.0
            u = v  # the next iteration would write into the caller's array
        return np.sum(u)
    with pytest.raises(s2s_ad.TransformError, match="copy it first"):
        s2s_ad.grad(becomes_the_argument)(V.copy())
