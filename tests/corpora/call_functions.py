"""User functions that call other user functions, for tests/test_calls.py."""
import numpy as np

import s2s_ad


OFFSET = 0.25


def square_plus(a, b=1.0):
    return a * a + b


def uses_helper_twice(x, y):
    return square_plus(x, b=y) * square_plus(y)


def square_plus_by_steps(a, b=1.0):
    """``square_plus`` with its square taken by a loop: a helper with a loop stays a call."""
    sq = 0.0
    for _ in range(2):
        sq = sq + 0.5 * a * a
    return sq + b


def uses_stepped_helper_twice(x, y):
    return square_plus_by_steps(x, b=y) * square_plus_by_steps(y)


def helper_with_loop(x, n):
    s = x
    for i in range(n):
        s = s * 0.9 + x * s
    return s


def calls_inside_loop(x, n):
    total = 0.0
    for i in range(n):
        total = total + helper_with_loop(x * i, 3) * square_plus(total * 0.1)
    return total


def power(x, n):
    if n <= 1:
        return x
    return x * power(x, n - 1)


def make_scaler(k):
    def scale(v):
        return v * k + OFFSET
    return scale


triple = make_scaler(3.0)


def uses_closure(x):
    return triple(x) * x


def helper_with_branch(x):
    if x > 0:
        return x * x
    return -x


def branchy_caller(x, y):
    return helper_with_branch(x - y) + helper_with_branch(y) * x


def int_argument_helper(x, k):
    return x ** k


def passes_an_integer(x):
    return int_argument_helper(x, 3) + int_argument_helper(x * 2.0, 2)


# Regressions: each once crashed in the split form helpers and vjp use.
def cube_by_loop(a, c):
    q = a
    for k in range(2):
        q = q * a
    return q * c  # the loop's final q, read by the backward part before the loop is reversed


def calls_cube_by_loop(x):
    return cube_by_loop(x, 0.3) + x


def early_array_return(x):
    s = x
    for i in range(3):
        s = s * 0.9
        if np.sum(s) > 3.0:
            return s * 2.0
    return s


def checkpointed_helper(x, n):
    s = x
    for t in s2s_ad.checkpointed(range(n)):
        s = s * s * 0.3 + 0.5
    return s


def calls_checkpointed_helper(x):
    return checkpointed_helper(x, 4) * x


def linear_checkpointed(x, n):
    s = 0.0
    for t in s2s_ad.checkpointed(range(n)):
        s = s * 0.5 + x  # nothing to record: only the snapshots use the tape
    return s
