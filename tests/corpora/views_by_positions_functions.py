"""Functions that read a view after a write into its array where no chain of steps can take it again:
taken in an iteration that has ended (the loop's index in its slice), chosen in a loop, joined with a
copy, read twice across two writes, returned by a recursive helper (issue 31).  NumPy shows the write
through the view; s2s_ad finds where the view's elements lie in the array where the code runs
(``runtime.view_positions``).  Used by tests/memory/test_views_by_positions.py."""
import numpy as np

import s2s_ad


def slice_of_the_last_iteration(x):
    b = x * 1.0
    for i in range(3):
        v = b[i:i + 2]
    b[3] = 5.0 * x[0]
    return np.sum(v * x[:2])


def slice_rebound_after_each_write(x):
    b = x * 1.0
    v = b[:2]
    for i in range(3):
        b[i + 1] = b[i] * x[i]
        v = b[i:i + 2]
    return np.sum(v * x[:2])


def column_of_the_last_iteration(x):
    M = np.outer(x[:3], x[1:4]) * 1.0
    for i in range(3):
        c = M[:, i]
    M[2, 2] = x[1] ** 2
    return np.sum(c ** 2)


def slice_chosen_in_a_loop(x):
    b = x * 2.0
    v = b[:2]
    for i in range(3):
        if x[i] > 0.5:
            v = b[i:i + 2]
    b[1] = x[3] * x[0]
    return np.sum(v * v)


def view_or_copy_by_iteration(x):
    b = x * 1.0
    for i in range(3):
        if i == 1:
            v = b[i:i + 2] * 1.0
        else:
            v = b[i:i + 2]
    b[2] = 7.0 * x[0]
    return np.sum(v * x[1:3])


def read_across_two_writes(x):
    b = x + 1.0
    for i in range(2):
        v = b[i:i + 3]
    b[2] = x[0] * x[1]
    s = np.sum(v ** 2)
    b[3] = np.exp(x[2])
    return s + np.sum(v * x[:3])


def whole_array_updated_after(x):
    b = x * 1.0
    for i in range(2):
        v = b[i:i + 2]
    b += x[3]
    return np.sum(v * v)


def one_number_of_the_last_iteration(x):
    b = x * 1.0
    for i in range(3):
        e = b[i]
    b[2] = 10.0 * x[0]
    return e * x[1]


def tail(v, k):
    if k == 0:
        return v
    return tail(v[1:], k - 1)


def recursive_helpers_view(x):
    b = x * 3.0
    t = tail(b, 1)
    b[2] = np.tanh(x[3])
    return np.sum(t * t)


FUNCTIONS = [slice_of_the_last_iteration, slice_rebound_after_each_write, column_of_the_last_iteration,
             slice_chosen_in_a_loop, view_or_copy_by_iteration, read_across_two_writes, whole_array_updated_after,
             one_number_of_the_last_iteration, recursive_helpers_view]


# Refused, naming the line: a list of views taken in a loop (where the code runs), a view the reverse
# sweep's recording holds as a copy (beside a checkpointed loop, whose segments run again; where the
# code runs), a write through such a view (when transformed).

def list_of_views_from_a_loop(x):
    b = x * 1.0
    vs = []
    for i in range(3):
        vs.append(b[i:i + 2])
    b[2] = 3.0 * x[0]
    return np.sum(vs[1] * vs[2])


def transpose_sliced_beside_a_checkpointed_loop(x):
    M = np.outer(x[:2], x[2:4]) + 0.5
    for k in range(2):
        T = M.T[k:]
    s = 0.0
    for i in s2s_ad.checkpointed(range(2)):
        s = s + x[i] * s
    M[0, 1] = x[0] * 3.0
    return np.sum(T * T) + s


def write_through_the_view(x):
    b = x * 1.0
    for i in range(2):
        v = b[i:i + 2]
    b[0] = x[1]
    v[0] = x[2]
    return np.sum(b * b)
