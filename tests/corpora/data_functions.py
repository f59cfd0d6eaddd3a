"""User functions with lists, tuples, local array writes and nested functions."""
import numpy as np


def build_list(x, n):
    values = []
    for i in range(n):
        values.append(x * i)
    return sum(values) + values[1] * x


def tuple_helper(a, b):
    return a * b, a + b


def unpack_helper(x, y):
    p, q = tuple_helper(x, y)
    return p * q


def local_tuple(x, y):
    t = (x, y * 2.0)
    a, b = t
    return a * b + t[0]


def comprehension(x, n):
    squares = [x * i for i in range(n) if i % 2 == 0]
    return sum(squares) * x


def nested_comprehension(x):
    grid = [[x * i * j for j in range(3)] for i in range(2)]
    return sum([sum(row) for row in grid])


def list_to_array(x, y):
    v = np.array([x, y, x * y])
    return np.sum(v ** 2)


def stencil(x):
    n = x.shape[0]
    out = np.zeros(n)
    for i in range(1, n - 1):
        out[i] = x[i - 1] - 2.0 * x[i] + x[i + 1]
    return np.sum(out * out)


def accumulate_in_place(x, w):
    acc = np.zeros(3)
    for i in range(len(x)):
        acc[i % 3] += x[i] * w
    return np.sum(acc * acc)


def overwrite_read_later(x):
    buf = np.ones(4)
    total = 0.0
    for i in range(4):
        buf[i] = buf[i] * x[i] + 1.0
        total = total + np.sum(buf) * x[i]
    return total


def overwrite_rows_read_later(x):
    m = np.ones((3, 3))
    total = 0.0
    for i in range(3):
        m[i] = m[i] * x[i] + 1.0
        total = total + np.sum(m) * x[i]
    return total


def row_writes(a):
    out = np.zeros((3, 2))
    for i in range(3):
        out[i, :] = a[i] * a[i + 1]
    return np.sum(np.sin(out))


def copy_then_write(x):
    y = x.copy()
    y[0] = y[0] * 3.0
    return np.sum(y * x)


def with_nested(x, y):
    scale = y * 2.0

    def g(v):
        w = v * scale
        if w > 1.0:
            return w * w
        return w

    total = 0.0
    for i in range(3):
        total = total + g(x * i)
    return total + g(y)


def writes_argument(x):
    x[0] = 1.0
    return np.sum(x)


# Regressions: each once gave a silent wrong gradient.
def rows_of_a_local_matrix(x):
    out = np.zeros((3, 2))
    for i in range(3):
        out[i] = x * i  # a row: its adjoint is a view, copied before it is zeroed
    return np.sum(out ** 2)


def rows_added_in_a_loop(x):
    out = np.zeros((3, 2))
    for i in range(3):
        out[i] += x * (i + 1.0)
    return np.sum(out ** 2)


def repeated_index_added(x):
    out = np.zeros(3)
    out[np.array([0, 0, 1])] += x  # NumPy adds x once to out[0], not twice
    return np.sum(out * out)


def repeated_index_assigned(x):
    out = np.zeros(3)
    out[np.array([0, 0, 1])] = x * np.array([1.0, 2.0, 3.0])  # one write to out[0] survives
    return np.sum(out * out)


def alias_sees_an_in_place_update(x):
    out = np.zeros(3)
    same = out
    out += x  # changes the array itself: `same` sees it, as in NumPy
    return np.sum(same * same) + out[0]


def view_taken_after_the_write(x):
    out = np.zeros(3)
    out[0] = x
    first_two = out[0:2]
    return np.sum(first_two) * x


def extremes(x, y, z):
    values = [x * 2.0, y, z * z]
    return max(values) + min(x, y, z) * 3.0 + max(np.array([x, y]))


def in_place_updates_that_are_fine(x, y):
    total = x  # a number: += makes a new one, as in Python
    total += y * 2.0
    first, second = (x * 0.5, y)
    first += second  # an item of a tuple, not a view
    copied = np.array([x, y]).copy()
    alias = copied
    alias += 1.0  # an array the function made: updated in place, and `copied` sees it
    return total * first + np.sum(copied * copied)


def product_with_a_zero(x):
    return np.prod(x) + np.sum(np.prod(np.reshape(x, (2, 2)), axis=0))


def powers_at_zero(x, y):
    return x ** 0 + x ** y + 0.0 ** y


def enumerate_reversed_and_cumsum(x):
    total = 0.0
    for i, a in enumerate(reversed(x)):
        total = total + a * (i + 1.0)
    for a, b in zip(x, reversed(x)):
        total = total + a * b
    return total + np.sum(np.cumsum(x) ** 2)
