"""A number one block computes twice is computed once (s2s_ad/passes/repeated_values.py).

The first functions repeat ``t + 1``, an element read or a product on two lines, which the pass
merges: the code is read for one computation, the gradient checked against central differences on
both backends.  The rest write between two reads of an element in ways the pass must see (the same
element, one a negative index may reach, a view, another name for the array, an element of a
matrix): reading the first value again would give a wrong number, so each is checked against
differences and the value the function returns.
"""
import numpy as np
import pytest

import s2s_ad
from conftest import numeric_grad, optional_import

numba = optional_import("numba")
BACKENDS = ["python", pytest.param("numba", marks=pytest.mark.skipif(
    numba is None, reason="numba is not installed (pip install 's2s_ad[numba]')"))]


def two_states(k, x0):
    n = 30
    x = np.zeros(n + 1)
    v = np.zeros(n + 1)
    x[0] = x0
    for t in range(n):
        x[t + 1] = x[t] + 0.1 * v[t]
        v[t + 1] = v[t] - 0.1 * k * np.sin(x[t]) - 0.05 * v[t]
    return np.sum(x ** 2) + v[n]


def products_twice(a, b):
    first = a * b + 1.0
    second = np.sin(a * b)
    return first * second


def grid_sweep(k):
    m = np.ones((4, 5))
    for i in range(4):
        for j in range(4):
            m[i, j + 1] = m[i, j] * k + 0.5 * m[i, j]
    return np.sum(m ** 2)


def same_element_written(p):
    x = np.zeros(3)
    total = 0.0
    for t in range(3):
        first = x[t]
        x[t] = first + p * (t + 1)
        second = x[t]
        total = total + first * second + second ** 2
    return total


def negative_start(p):
    x = np.ones(1)
    total = 0.0
    for t in range(-1, 0):
        first = x[t]
        x[t + 1] = first * p + 2.0
        second = x[t]  # x[-1] and x[0] are one element of a vector of one
        total = total + second * p
    return total


def backward_offset(p):
    x = np.ones(1)
    total = 0.0
    for t in range(1):
        first = x[t]
        x[t - 1] = first * p + 2.0
        second = x[t]
        total = total + first + second * p
    return total


def through_a_view(p):
    x = np.ones(4)
    v = x[1:]
    first = x[1]
    v[0] = p * p
    second = x[1]
    return first + second * p


def another_name(p, flag):
    x = np.ones(3)
    y = x
    first = x[0]
    y[0] = p * 3.0 if flag else p
    second = x[0]
    return first * p + second * second


def matrix_element(p):
    m = np.ones((2, 2))
    first = m[0, 1]
    m[0, 1] = p * p + 1.0
    second = m[0, 1]
    other = m[1, 1]
    m[1, 0] = p
    again = m[1, 1]
    return first * second + other * again * p


MERGED = [(two_states, (0.8, 0.3)), (products_twice, (0.7, 1.3)), (grid_sweep, (0.9,))]
KEPT = [(same_element_written, (0.7,)), (negative_start, (0.6,)), (backward_offset, (0.6,)),
        (through_a_view, (0.9,)), (another_name, (0.8, True)), (another_name, (0.8, False)),
        (matrix_element, (1.1,))]


def _checked(fn, args, backend):
    differentiated = tuple(i for i, a in enumerate(args) if isinstance(a, float))
    df = s2s_ad.grad(fn, wrt=differentiated, backend=backend)
    got = df(*args)
    got = got if isinstance(got, tuple) else (got,)
    for position, value in zip(differentiated, got):
        np.testing.assert_allclose(value, numeric_grad(fn, args, position), rtol=1e-6, atol=1e-9)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("fn, args", MERGED + KEPT, ids=[f.__name__ + str(a[-1]) for f, a in MERGED + KEPT])
def test_the_gradient_agrees_with_differences(fn, args, backend):
    _checked(fn, args, backend)


def test_a_time_step_reads_each_element_once_and_adds_one_once():
    source = s2s_ad.source(two_states, wrt=(0,), args=(0.8, 0.3), stage="merge_repeated_values")
    loop = source[source.index("for t in"):]
    assert loop.count("x[t]") == 1 and loop.count("v[t]") == 1 and loop.count("t + 1") == 1, source


def test_a_product_written_twice_is_computed_once():
    source = s2s_ad.source(products_twice, args=(0.7, 1.3), stage="merge_repeated_values")
    assert source.count("a * b") == 1, source


def test_a_sweep_over_a_matrix_reads_its_element_once():
    source = s2s_ad.source(grid_sweep, args=(0.9,), stage="merge_repeated_values")
    assert source.count("m[i, j]") == 1, source


@pytest.mark.parametrize("fn, args", KEPT, ids=[f.__name__ + str(a[-1]) for f, a in KEPT])
def test_a_read_after_a_write_that_may_reach_it_is_kept(fn, args):
    source = s2s_ad.source(fn, wrt=(0,), args=args, stage="merge_repeated_values")
    assert "second = " in source or "again = " in source, source
