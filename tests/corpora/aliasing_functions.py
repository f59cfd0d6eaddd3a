"""Functions for tests/memory/test_shared_memory_read_then_written.py: arrays that share memory, read and then written (issue #12)."""
import numpy as np


def slice_squared(x):
    y = x.copy()
    y[0:2] = y[0:2] ** 2
    return np.sum(y)


def column_squared(X):
    Y = X.copy()
    Y[:, 1] = Y[:, 1] ** 2
    return np.sum(Y)


def tail_sine(x):
    y = x.copy()
    y[1:] = np.sin(y[1:])
    return np.sum(y * y)


def slice_times_shifted(x):
    y = x.copy()
    y[0:2] *= y[1:3]
    return np.sum(y)


def recurrence(x, u):
    v = x.copy()
    for k in range(3):
        v[1:3] = v[1:3] * u[k] + np.sin(v[0:2])
    return np.sum(v * v)


def normalise_rows(X):
    Y = X.copy()
    for i in range(Y.shape[0]):
        Y[i] = Y[i] / np.sqrt(np.sum(Y[i] ** 2))
    return np.sum(Y * np.arange(1.0, Y.shape[1] + 1))


def _scaled(a, s):
    return np.sum(a * s)


def helper_then_write(x):
    y = x.copy()
    r = _scaled(y, x[0])
    y[0] = 10.0
    return r + np.sum(y ** 2)


def _head(a):
    return a[0:2]


def helper_view_then_write(x):
    y = x.copy()
    h = _head(y)
    s = np.sum(h ** 2)
    y[0] = 3.0
    return s + np.sum(y * x)


def _same(a):
    return a


def helper_returns_argument(x):
    y = x.copy()
    z = _same(y)
    z[1] = 5.0
    return np.sum(y * x)


def helper_returns_view_write(x):
    y = x.copy()
    h = _head(y)
    h[0] = 7.0
    return np.sum(y * x)


def vjp_vector(x):
    y = x.copy()
    y[0] = y[0] ** 2
    return y


def builtin_sum(v):
    return sum(v)


def _square_sum(a):
    return np.sum(a ** 2)


def helper_reads_then_write(x):
    y = x.copy()
    r = _square_sum(y)
    y[1] = 0.0
    return r + np.sum(y * x)


def matmul_shared(x):
    a = np.zeros((2, 2)) + x[0]
    b = a @ np.eye(2)
    a += 1.0
    return np.sum(b * x[1])


def list_shared(x):
    a = np.zeros(2) + x[0]
    items = [a]
    a += 1.0
    return np.sum(items[0] * x[1])


def view_shared(x):
    a = np.zeros(3) + x[0]
    b = a[0:2]
    a += 1.0
    return np.sum(b * x[1])


def zero_d_shared(x):
    t = np.where(x[0] > 0, x[0], 0.0)
    a = t
    a -= 2.0
    return t * x[1]


def reshape_shared(x):
    a = np.zeros(4) + x[0]
    b = np.reshape(a, (2, 2))
    a += 1.0
    return np.sum(b * x[1])


def write_after_helper_returned_it(x):
    y = x.copy()
    z = _same(y)
    y[1] = 5.0
    return np.sum(z * x)


def _checked(a):
    """Its argument, once checked: a helper with a branch, which stays a call (``_same`` is short enough
    to be lowered in place, where what it returns is seen to be its argument)."""
    if np.any(np.isnan(a)):
        raise ValueError("a NaN in the input")
    return a


def write_after_checked_helper_returned_it(x):
    y = x.copy()
    z = _checked(y)
    y[1] = 5.0
    return np.sum(z * x)


def checked_helper_returns_argument(x):
    y = x.copy()
    z = _checked(y)
    z[1] = 5.0
    return np.sum(y * x)


def write_after_helper_returned_a_view(x):
    y = x.copy()
    h = _head(y)
    y[0] = 5.0
    return np.sum(h * x[0:2])


def shared_number_updated(x):
    s = np.sum(x)
    t = s
    t += 1.0  # s is a NumPy scalar: += makes a new one, s keeps its value
    return s * t


def shared_unknown_rank_updated(x, w):
    a = np.dot(x, w)
    b = a
    a += 1.0  # a is an array when w is a matrix: b would change too
    return np.sum(b * a)


def builtin_sum_scaled(v):
    return sum(v) * 2.0


def identity_sum(x, y):
    return np.sum(x * y)


def slice_sum_shifted(x):
    y = x.copy()
    y[0:2] = y[0:2] + y[1:3]
    return np.sum(y)


def list_view_unwritten(x):
    items = [x, x[0:2]]
    return np.sum(items[1])


def recurrence_of_one(x):
    return recurrence(x, np.array([0.3, 0.7, 1.1]))


def vjp_vector_sum(x):
    return np.sum(vjp_vector(x) * x)


def branch_view_read_before_write(x):
    y = x.copy()
    if x[0] > 0:
        v = y[0:2]
    else:
        v = y[1:3]
    s = np.sum(v ** 2)
    y[1] = np.cos(y[2])
    return s + np.sum(y * x)


def branch_view_read_after_write(x):
    y = x.copy()
    if x[0] > 0:
        v = y[0:2]
    else:
        v = y[1:3]
    y[1] = np.cos(y[2])
    return np.sum(v ** 2) + np.sum(y * x)


def filled(x):
    y = np.zeros(3)
    y[:] = x * 2.0
    return y


def filled_rows(x):
    y = np.zeros((2, 3))
    y[0] = x
    y[1] = x ** 2
    return y


def updated_copy(x):
    y = x.copy()
    y += 1.0
    y[1] = y[0] * y[2]
    return y

