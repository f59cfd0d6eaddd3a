"""Functions whose values change kind or shape along the way (issue #12, items 1, 9 and 10).

Each was once differentiated silently wrong: the analysis believed a
loop-carried value kept the kind it started with, a float stored into an
integer array kept its derivative, and ``+``/``*`` of tuples and lists were
treated as arithmetic.
"""
import numpy as np


# -- 1. a loop-carried value that starts as a number and becomes an array -----------------------

def number_then_array(v, n):
    acc = 0.0
    for i in range(n):
        acc = acc * 0.5 + v
    return np.sum(acc)


def swap_number_for_array(v, n):
    a = 0.0
    b = 1.0
    for i in range(n):
        a, b = b, v
    return np.sum(a * b)


def shape_changes_on_first_trip(x, y, n):
    cur = x
    prev = x
    for i in range(n):
        prev = cur
        cur = np.tanh(cur + y)
    return np.sum(prev) + np.sum(cur * cur)


def previous_only(x, y, n):
    cur = x
    prev = x
    for i in range(n):
        prev = cur
        cur = np.tanh(cur + y)
    return np.sum(prev)


def previous_plus_start(x, y, n):
    cur = x
    prev = x
    for i in range(n):
        prev = cur
        cur = np.tanh(cur + y)
    d = prev + x
    return np.sum(d * d)


def broadcasts_differently_each_trip(x, col, row, n):
    z = x
    for i in range(n):
        if i % 2 == 0:
            z = z * col
        else:
            z = z + row
    return np.sum(z * z)


def while_number_to_array(v, limit):
    total = 0.0
    k = 0
    while k < limit:
        total = total * 0.9 + v * v
        k = k + 1
    return np.sum(total)


def branch_number_or_array(x, c):
    if c > 0:
        z = x * 2.0
    else:
        z = 3.0
    return np.sum(z * x)


def number_joins_array_in_loop_branch(x, n):
    s = 1.0
    for i in range(n):
        if i == 1:
            s = s * x
        else:
            s = s + 1.0
    return np.sum(s * s)


def pessimistic_probe(x, y, n):
    """Only for the test of the analysis' fallback (its generated code must not be cached before)."""
    acc = 0.0
    z = x
    for i in range(n):
        acc = acc * 0.5 + z
        z = z * y
    return np.sum(acc * acc)


def grows_rank(v, m, n):
    acc = v
    for i in range(n):
        acc = acc * m
    return np.sum(np.sin(acc))


# -- 9. a float written into an integer array ---------------------------------------------------

def store_into_arange(x):
    b = np.arange(4)
    b[1] = 3 * x
    return np.sum(b * x)


def store_into_int_zeros(x):
    b = np.zeros(3, dtype="int64")
    b[0] = x * x
    b[2] = x
    return np.sum(b) * x


def store_into_astype_int(x, a):
    b = np.array(a, dtype="int32")
    b[1] = x
    return np.sum(b * a) + x


def store_into_float_zeros(x):
    b = np.zeros(3)
    b[1] = 3 * x
    return np.sum(b * x)


def store_into_copy(x, a):
    b = np.copy(a)
    b[0] = x * x
    return np.sum(b * b)


# -- 10. tuple and list concatenation and repetition ---------------------------------------------

def concat_lists(x, y):
    items = [x] + [2 * y]
    return items[0] * items[1]


def concat_tuples(x, y):
    t = (x,) + (y,)
    return t[0] * t[1]


def repeat_list(x):
    items = [x] * 3
    return items[0] * items[1] * items[2]


def repeat_list_on_the_left(x, y):
    items = 2 * [x, y]
    return items[0] * items[3] + items[1]


def rotate_list(x, y, z):
    xs = [x, y, z]
    r = xs[1:] + xs[:1]
    return r[0] * 1.0 + r[1] * 2.0 + r[2] * 3.0


def concat_then_array(x, y):
    parts = [x * x, y] + [x * y]
    return np.sum(np.array(parts) * np.array([1.0, 2.0, 3.0]))


def concat_arrays_in_lists(a, b):
    rows = [a] + [b * 2.0]
    return np.sum(rows[0] * rows[1]) + np.sum(rows[1])


def concat_in_loop(x, n):
    items = [x]
    for i in range(n):
        items = items + [items[-1] * x]
    return items[-1] + items[0]


def helper_pair(x):
    return [x, x * x]


def concat_unknown_kinds(x, y):
    items = helper_pair(x) + helper_pair(y)
    return items[0] * items[1] + items[2] * items[3]


def repeat_unknown_kinds(x):
    items = helper_pair(x) * 2
    return items[0] * items[3] + items[1]


def arithmetic_still_arithmetic(x, y):
    a = x + y
    b = x * y
    return a * b + (x + 1.0) * 2.0


# -- a tuple made on one path of a branch or a loop (its merge is a display, not a name) ------------

def pair_product(t):
    return t[0] * t[1]


def tuple_chosen_by_a_branch(x, y, c):
    t = (x, y)
    s = t if c > 0 else (y, x * x)
    return pair_product(s) + s[0] * pair_product(t)


def tuple_rotated_in_a_loop(x, y, n):
    t = (x, y * y)
    for i in range(n):
        t = (t[1] * 0.5, t[0] + x)
    return t[0] * 3.0 + t[1]


# -- written as users write them (compared with JAX in the tests) ----------------------------------

def rnn_loss(W, U, xs, steps):
    h = 0.0  # the hidden state starts as a number
    for t in range(steps):
        h = np.tanh(W @ xs[t] + U * h)
    return np.sum(h ** 2)


def moving_average(prices, alpha):
    avg = 0
    for p in prices:
        avg = alpha * p + (1 - alpha) * avg
    return np.sum(avg)


def polynomial_features(x, y):
    basis = [1.0, x] + [x * x, x * y]
    basis = basis + [np.sin(y)] * 2
    w = np.array([0.5, -1.0, 2.0, 0.3, 1.5, -0.7])
    return np.dot(w, np.array(basis))


def shift_register(v, n):
    regs = [v * 0.0, v * 0.0, v]
    for i in range(n):
        regs = [regs[1] * 0.9 + v] + regs[2:] + regs[:1]
    return np.sum(regs[0] * regs[1] + regs[2])


def momentum(w, lr, steps):
    v = 0.0
    for s in range(steps):
        g = 2.0 * w + np.sin(w)
        v = 0.9 * v + g
        w = w - lr * v
    return np.sum(w * w)


def extend_shared_list(x, y):
    xs = [x] + [x * 2.0]
    ys = xs
    xs += [y * y]  # extends the list ys names too
    return sum(ys) * x
