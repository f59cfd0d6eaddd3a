"""Functions for test_aliasing_and_ownership.py (issue 18, part 1: one home for aliasing).

Each takes one float array ``v`` of length 4 and returns a number (``*_aux`` ones a pair).  They are
written as a user would: time-stepping loops writing into preallocated buffers, swaps, boundary
conditions, views read after writes, helpers returning views or new arrays, has_aux with buffers.
"""
import numpy as np


# -- the examples -------------------------------------------------------------------------

def tangent_shared_with_a_later_write(v):
    b = v.copy()
    t = b[1:3] - 1.0
    b[1:3] = t * t
    return np.sum(b * b)


def time_step_reads_a_shifted_copy(v):
    state = v.copy()
    for _ in range(3):
        shifted = state - 1.0
        state[0] = state[0] * shifted[1] + 0.5 * shifted[2] ** 2
        state[3] = shifted[0] * shifted[3]
    return np.sum(state * state)


def halves_bound_by_a_tuple_assignment(v):
    b = v.copy()
    b[:2], b[2:] = b[2:], b[:2]  # NumPy: [v2, v3, v2, v3], not a swap
    return np.sum(b * np.arange(4.0))


def columns_bound_by_a_tuple_assignment(v):
    B = np.zeros((2, 2))
    B[0] = v[:2]
    B[1] = v[2:] * v[2:]
    B[:, 0], B[:, 1] = B[:, 1], B[:, 0]
    return np.sum(B * np.arange(4.0).reshape(2, 2))


def stored_into_itself_whole(v):
    b = v * 1.0
    b[:] = b
    return np.sum(b * np.arange(4.0))


def stored_into_itself_ellipsis(v):
    b = v * 1.0
    b[...] = b
    return np.sum(b * np.arange(4.0))


def stored_into_itself_reversed(v):
    b = v * 1.0
    b[::-1] = b
    return np.sum(b * np.arange(4.0))


def stored_into_itself_by_integer_array(v):
    b = v * 1.0
    b[[3, 2, 1, 0]] = b
    return np.sum(b * np.arange(4.0))


def stored_into_itself_columns_reversed(v):
    B = np.zeros((2, 2))
    B[0] = v[:2]
    B[1] = v[2:] ** 2
    B[:, ::-1] = B
    return np.sum(B * np.arange(4.0).reshape(2, 2))


def predictions_buffer_aux(v):
    preds = np.zeros(3)
    state = v[0]
    for t in range(3):
        state = state * v[1] + v[2]
        preds[t] = state
    loss = np.sum(preds * preds)
    return loss, preds


def squeezed_buffer(v):
    b = np.zeros(1)
    b[0] = np.sum(v * v)
    return np.squeeze(b)


def heat_equation_boundary_condition(v):
    u = v * 1.0
    for _ in range(4):
        u = u + 0.1 * (np.roll(u, 1) - 2 * u + np.roll(u, -1))
        u[0] = 0.0
    return np.sum(u * u)


def product_of_two_variables_written(v):
    x = v + 1.0
    b = v * x
    b[0] = b[1] * 3.0
    return np.sum(b * b)


def reduction_along_an_axis_written(v):
    b = np.sum(np.outer(v, v), axis=0)
    b[0] = 1.0
    return np.sum(b * b)


def sorted_copy_written(v):
    b = np.sort(v)
    b[0] = 0.0
    return np.sum(b * b)


def solution_written(v):
    A = np.eye(4) * 2.0 + 0.1
    b = np.linalg.solve(A, v)
    b[0] = b[1] * b[2]
    return np.sum(b * b)


def differences_written(v):
    b = np.diff(v)
    b[0] = 0.0
    return np.sum(b * b)


def rolled_written(v):
    b = np.roll(v, 1)
    b[0] = 0.0
    return np.sum(b * b * v)


def tiled_written(v):
    b = np.tile(v, 2)
    b[0] = 0.0
    return np.sum(b * b)


def _scaled(v):
    return v * 2.0


def helper_result_written(v):
    b = _scaled(v)
    b[0] = 0.0
    return np.sum(b * b)


def element_carried_through_a_loop(v):
    b = v * 1.0
    s = b[1]
    for _ in range(3):
        b[0] = b[0] + s
        s = s * b[2]
    return np.sum(b) + s


def integer_array_index_read_after_a_write(v):
    b = v * 1.0
    c = b[[0, 2]]
    b[0] = 5.0
    return np.sum(c * c) + np.sum(b * v)


# -- written the way a user would -----------------------------------------------------------------

def trajectory_into_preallocated_buffer(v):
    steps = np.zeros((3, 4))
    x = v.copy()
    for t in range(3):
        x = x - 0.1 * np.sin(x)
        steps[t] = x
    return np.sum(steps * steps)


def swap_two_elements_with_a_temporary(v):
    b = v * 1.0
    tmp = b[0] * 1.0
    b[0] = b[3]
    b[3] = tmp
    return np.sum(b * np.arange(1.0, 5.0))


def dirichlet_boundaries_both_ends(v):
    u = v ** 2
    for _ in range(3):
        lap = np.roll(u, 1) - 2 * u + np.roll(u, -1)
        u = u + 0.2 * lap
        u[0] = v[0]
        u[-1] = 0.0
    return np.sum(u * u)


def slice_view_read_after_write(v):
    b = v * 1.0
    head = b[:2]
    b[0] = 3.0 * v[3]
    return np.sum(head * head) + np.sum(b)


def _first_half(a):
    return a[:2]


def helper_returning_a_view_then_write(v):
    b = v ** 2
    b[3] = np.sum(_first_half(b))
    return np.sum(b * v)


def running_maximum_buffer(v):
    best = np.zeros(4)
    best[0] = v[0]
    for i in range(1, 4):
        best[i] = np.maximum(best[i - 1], v[i]) * 1.0
    return np.sum(best * v)


def in_place_accumulate_rows(v):
    acc = np.zeros(4)
    for k in range(3):
        acc += v * (k + 1.0)
        acc[k] = acc[k] * v[k]
    return np.sum(acc * acc)


def mask_copy_scaled(v):
    b = v * 1.0
    big = b[v > 0.0]
    b[2] = 0.0
    return np.sum(big * big) + np.sum(b * b)


def cumulative_in_place(v):
    b = v * 1.0
    for i in range(1, 4):
        b[i] = b[i] + b[i - 1]
    return np.sum(b * b)


def loss_and_residual_aux(v):
    r = np.zeros(4)
    r[:] = v * v - 1.0
    r[0] = r[0] * 2.0
    return np.sum(r * r), r


def shift_left_in_place(v):
    b = v * 1.0
    b[:-1] = b[1:]
    return np.sum(b * np.arange(1.0, 5.0))


def reversed_view_then_write(v):
    b = v * 1.0
    r = b[::-1]
    b[0] = 2.0
    return np.sum(r * np.arange(4.0)) + np.sum(b)


def caller_of_tangent_shared(v):
    return 2.0 * tangent_shared_with_a_later_write(v * 1.0)


def caller_of_tuple_halves(v):
    return 2.0 * halves_bound_by_a_tuple_assignment(v * 1.0)


def caller_of_self_store(v):
    return 2.0 * stored_into_itself_reversed(v * 1.0) + stored_into_itself_by_integer_array(v)


def caller_of_heat_equation(v):
    return 2.0 * heat_equation_boundary_condition(v * 1.0)


def caller_of_predictions(v):
    loss, preds = predictions_buffer_aux(v * 1.0)
    return loss + np.sum(preds)


def caller_of_squeezed(v):
    return 2.0 * squeezed_buffer(v)


def caller_of_element_and_copies(v):
    return element_carried_through_a_loop(v) + integer_array_index_read_after_a_write(v) + sorted_copy_written(v)


def boundary_written_before_the_update(v):
    u = v * 1.0
    for _ in range(3):
        u[0] = u[1] * 0.5  # into the loop-carried array: the first iteration's and every later one's
        u = u * u + 0.1 * np.roll(u, 1)
    return np.sum(u)


def buffer_made_on_either_branch(v):
    if v[0] > 0.0:
        b = v * 2.0
    else:
        b = np.sin(v)
    b[0] = 1.0
    return np.sum(b * b)


def tangent_shared_with_a_later_write_of_one_number(x):
    b = np.array([0.3, x, 0.7, 1.1])
    t = b[1:3] - 1.0
    b[1:3] = t * t
    return np.sum(b * b)


def element_and_a_new_read_of_it_in_one_statement(v):
    out = v * 1.0
    total = 0.0
    for i in range(3):
        e = out[i]
        out[i] = e * v[i]
        total = total + e * out[i]  # e: the old value (a copy); out[i]: the new one
    return total
