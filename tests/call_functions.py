"""User functions that call other user functions, for tests/test_calls.py."""


OFFSET = 0.25


def square_plus(a, b=1.0):
    return a * a + b


def uses_helper_twice(x, y):
    return square_plus(x, b=y) * square_plus(y)


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
