"""Issue 31: views the reverse sweep reads (recorded in a loop, carried out of it, handed to a helper, read
across the cut of vjp's split adjoint) while a later store writes their array.  The primal code keeps
NumPy's view (so a view taken again by its element positions finds it), and the reverse sweep reads a
copy bound beside it (ad/kept_views.py).  And views joined over an if with a copy on the other path
(``v = M[1]`` or ``M[1] * 1.0``), or a row by the loop index carried out of the loop, read after a
write: chosen again by the test, or found by their elements' positions.  Used by
tests/memory/test_kept_views.py."""
import numpy as np


def transpose_sliced_in_a_loop(x):
    M = np.outer(x[:2], x[2:4]) + 0.5
    for k in range(2):
        T = M.T[k:]
    M[0, 1] = x[0] * 3.0
    return np.sum(T * T)


def column_of_a_reshape_in_a_loop(x):
    b = np.sin(x)
    for t in range(2):
        c = b.reshape(2, 2)[:, t]
    b[1] = x[2] ** 2
    return np.sum(c * c) + np.sum(b * b)


def reshape_of_a_slice_in_a_loop(x):
    b = x ** 2
    for t in range(2):
        r = b[t:t + 3].reshape(3, 1)
    b -= x[2] ** 2 * x
    return np.sum(r * r) + np.sum(b) * x[0]


def view_recorded_each_trip(x):
    b = x * 1.0
    total = 0.0
    for t in range(3):
        v = b[t:t + 2]
        total = total + np.sum(v * v)
        b[t + 1] = b[t] * x[t]
    return total + np.sum(b * b)


def helpers_view_read_after_a_write(x):
    b = x + 0.5
    for t in range(2):
        m = middle(b[t:])
    b[2] = np.exp(x[1])
    return np.sum(m * m) * x[3]


def middle(v):
    return v[1:3]


def row_or_its_copy_by_an_if(x):
    M = np.outer(x[:2], x[1:4]) * 1.0
    if x[1] > 0:
        v = M[1]
    else:
        v = M[1] * 2.0
    M[1, 1] = x[1] ** 2
    return np.sum(v * v) + np.sum(M) * x[0]


def number_or_its_copy_by_an_if(x):
    b = x * 1.0
    if x[1] > 0:
        v = b[1]
    else:
        v = b[1] * 2.0
    b[1] = x[2] ** 2
    return v * np.sum(b)


def row_by_the_loop_index_carried_out(x):
    M = np.outer(x[:2], x[1:4]) * 1.0
    for t in range(2):
        v = M[t]
    M[1, 1] = x[1] ** 2
    M[0, 2] = x[3] ** 2
    return np.sum(v * v) + np.sum(M) * x[0]


def row_of_zeros_carried_out_of_a_loop(x):
    # (was in refused_functions.py: the row a loop's last trip took, read after a write, found by positions)
    out = np.zeros((2, 2))
    for i in range(2):
        row = out[i]
    out[1, 0] = 2.0 * x[0]
    return np.sum(row) * x[1]


def slice_reshaped_in_a_loop(b, x):
    c = b * 1.0
    for t in range(2):
        r = c[t:t + 3].reshape(3, 1)
    c[0] = x[1] ** 2
    return np.sum(r * r) + np.sum(c) * x[2]


def calls_a_helper_whose_view_is_recorded(x):
    total = 0.0
    for k in range(2):
        total = total + slice_reshaped_in_a_loop(x * (k + 1.0), x)
    return total


FUNCTIONS = [transpose_sliced_in_a_loop, column_of_a_reshape_in_a_loop, reshape_of_a_slice_in_a_loop,
             view_recorded_each_trip, helpers_view_read_after_a_write, row_or_its_copy_by_an_if,
             number_or_its_copy_by_an_if, row_by_the_loop_index_carried_out,
             row_of_zeros_carried_out_of_a_loop, calls_a_helper_whose_view_is_recorded]


# Refused where the code runs, naming the line: a row carried out of a loop that is a copy on the last
# trip (NumPy's value keeps the old numbers, but the generated code cannot tell such a copy from a view
# it would have had to follow).

def row_or_its_copy_carried_out_of_a_loop(x):
    M = np.outer(x[:2], x[1:4]) * 1.0
    for t in range(2):
        if x[t] > 0:
            v = M[t]
        else:
            v = M[t] * 2.0
    M[1, 1] = x[1] ** 2
    return np.sum(v * v)

