"""Everyday idioms of issue 33 that were refused (test_idioms_round3.py): sorted of a dict's items by a
key known while transforming, np.random.seed in the function, strings formatted from traced numbers,
calls that only inspect or convert, sorted of numbers, an element of a vector updated with op=."""
import operator
import random

import numpy as np


def _by_name(kv):
    return kv[0]


# 1. sorted of a dict whose keys are known while transforming: the order is decided then
def sorted_items_by_key(x):
    d = {"b": x[0], "a": x[1] * 2.0, "c": x[2]}
    s = 0.0
    for i, (k, v) in enumerate(sorted(d.items(), key=lambda kv: kv[0])):
        s = s + (i + 1) * v
    return s


def sorted_items_by_length_reversed(x):
    d = {"bb": x[0], "a": x[1] * 2.0, "ccc": x[2]}
    s = 0.0
    for i, (k, v) in enumerate(sorted(d.items(), key=lambda kv: len(kv[0]), reverse=True)):
        s = s + (i + 1) * v * v
    return s


def sorted_items_by_a_module_function(x):
    d = {"b": x[0], "a": x[1] * 2.0, "c": x[2]}
    s = 0.0
    for i, (k, v) in enumerate(sorted(d.items(), key=_by_name)):
        s = s + (i + 1) * np.sin(v)
    return s


def sorted_dict_and_items(x):
    d = {"b": x[0], "a": x[1] * 2.0, "c": x[2]}
    ws = [v * (i + 1) for i, (k, v) in enumerate(sorted(d.items()))]
    return sum(ws) + sum(d[k] ** 2 for k in sorted(d, key=str.lower)) + d[sorted(d)[0]] * 5.0


def sorted_dict_values(x):
    d = {"b": x[0], "a": x[1] * 2.0, "c": x[2]}
    vs = sorted(d.values())
    return vs[0] * 3.0 + vs[2]


def sorted_by_a_traced_key(x):
    d = {"b": x[0], "a": x[1] * 2.0, "c": x[2]}
    s = 0.0
    for i, (k, v) in enumerate(sorted(d.items(), key=lambda kv: kv[1])):  # REFUSED: whose order depends
        s = s + (i + 1) * v
    return s


def sorted_numbers_by_a_key(x):
    return sum(sorted([v * 2.0 for v in x], key=lambda v: -v)[:2])  # REFUSED: with a key function


# 2. np.random.seed in the function: the draws after it are NumPy's own
def seeded_noise(x):
    np.random.seed(0)
    noise = np.random.normal(size=3)
    return np.sum((x + noise) ** 2)


def seeded_twice_and_python_random(x):
    np.random.seed(5)
    a = np.random.normal(size=3)
    np.random.seed(3)
    b = np.random.uniform(size=3)
    random.seed(1)
    c = random.random()
    return np.sum(x * a) + np.sum(x * x * b) * c


# 3. strings formatted from traced numbers: no derivative, computed as Python does
def formatted_messages(x):
    msg = "%.6f" % x[0]
    msg2 = f"{x[1]:.3f}"
    m3 = "{:.2f}".format(x[2])
    unused = "%d items, %s" % (3, "ok")
    print(msg, msg2, m3)
    return np.sum(x ** 2)


def formatted_unused(x):
    note = f"{np.sum(x):.3f} total"
    other = "mean %.2f, max %.2f" % (np.mean(x), np.max(x))
    return np.sum(np.sin(x))


# 4. calls that only inspect or convert
def inspected_and_converted(x):
    y = np.real(x) * np.real_if_close(x)
    ok = np.allclose(x, x)
    c = np.isclose(x, 0.5)
    z = np.iscomplex(x)
    n = np.int64(3)
    a = np.angle(x)
    s = np.sum(y) * n + np.sum(a * x)
    if ok and not np.any(z):
        s = s + np.sum(x[c])
    return s


# 5. sorted of numbers
def sum_of_sorted_generator(x):
    return sum(sorted(v * 2.0 for v in x))


def sorted_list_reversed(x):
    s = sorted([v * v for v in x], reverse=True)
    return s[0] * 3.0 + s[1] * s[2]


def sorted_array(x):
    s = sorted(x * x)
    return s[0] * 3.0 + s[1] * s[2] ** 2


def print_in_a_generator(x):
    return sum(v * v for v in x if print(v) is None)  # REFUSED: print runs


# 6. an element of a vector updated with op=: a number, rebound (the vector unchanged)
def element_updated(x):
    m = x * 2.0
    first = m[0]
    first *= 3.0
    return first + np.sum(m * m)


def element_updated_then_vector_written(x):
    m = x * 2.0
    first = m[0]
    first *= x[1]
    m[0] = 5.0
    return first * np.sum(m) + first


def row_updated_writes_the_matrix(x):
    M = np.outer(x, x)
    row = M[0]
    row *= 3.0
    return np.sum(M * M) + np.sum(row)


def items_of_a_vector_updated_in_place(x):
    B = x * 1.0
    for item in B:
        item *= 2  # one number of B (a copy): item rebound, B unchanged
    return np.sum(B ** 2)


def rows_updated_in_a_loop(x):
    B = np.outer(x, x)
    for row in B:
        row *= 2.0  # a row of B (a view): B written
    return np.sum(B ** 2)


# 7. lambdas made in a loop and kept in a list: still refused
def lambdas_in_a_list(x):
    fs = []
    for k in range(3):
        fs.append(lambda v: v * k)  # (each reads k when called: 2, Python's late binding)
    return np.sum(fs[0](x) + fs[1](x))


_ = operator  # (kept importable for key=operator.itemgetter(0) made outside)
