"""Functions, written as a user would, that once crashed inside generated code (issue #12).

Each one's derivatives are checked in tests/programs/test_constructs_that_once_crashed.py against central
finite differences.
"""
import numpy as np


# -- a loop inside a branch that skips the first iteration --------------------------------------


def loop_in_branch_after_first(x, n=4):
    s = 0.0
    for i in range(n):
        if i > 0:
            for j in range(3):
                s = s + np.sin(x * j) * s + x
        s = s * 1.1
    return s


def loop_after_continue(x):
    s = x
    for i in range(4):
        if i == 0:
            continue
        for j in range(2):
            s = s * np.cos(s) + x
    return s


def loops_three_deep_in_branch(x):
    s = x
    for i in range(2):
        for j in range(2):
            for k in range(2):
                if k > 0:
                    for m in range(2):
                        s = s * np.cos(s) + x
    return s


def while_loops_after_continue(x):
    s = x
    i = 0
    while i < 5:
        i = i + 1
        if i % 2 == 0:
            continue
        j = 0
        while j < 2:
            s = s * np.cos(s) + x
            j = j + 1
    return s * 0.5


def break_and_continue_around_loops(x):
    s = x
    for i in range(4):
        if i % 2 == 0:
            continue
        for j in range(3):
            if j == 1:
                continue
            for k in range(2):
                if k == 1 and s > 1.0:
                    break
                s = s * np.cos(x) + s * 0.1
    return s


def while_in_branch_of_for(x):
    s = x
    for i in range(3):
        j = 0
        while j < i:
            if j > 0:
                for m in range(2):
                    s = s * np.cos(s) + x
            j = j + 1
    return s


# -- early returns around loops -----------------------------------------------------------------


def returns_between_loops(x):
    if x > 10.0:
        return x
    for i in range(2):
        x = x * 1.3
    if x > 5.0:
        return x * x
    for j in range(2):
        x = np.sin(x) + x
    return x


def returns_in_loop_in_branch(x):
    s = x
    for i in range(3):
        if i > 0:
            s = s * x
            if s > 3.0:
                return s
            for j in range(2):
                s = s + np.sin(s)
    return s


def returns_from_nested_loops(x):
    s = x
    for i in range(3):
        for j in range(3):
            if s > 4.0:
                return s * x
            s = s + np.sin(s) * x
    return s


def returns_from_nested_whiles(x):
    s = x
    i = 0
    while i < 4:
        i = i + 1
        if i == 2:
            continue
        if s > 5.0:
            break
        j = 0
        while j < 3:
            if s > 3.0:
                return s + 1.0
            s = s * 1.2 + x
            j = j + 1
    return s * s


def returns_reading_an_array(x):
    a = np.array([x, 2 * x, x * x])
    s = 0.0
    for i in range(3):
        if i == 0:
            continue
        for j in range(i):
            s = s + a[j] * a[i]
            if s > 10.0:
                return s
    return s


def _returns_early(x):
    if x > 2.0:
        for i in range(2):
            x = x * 0.5
        return x
    s = x
    for i in range(3):
        if s > 1.5:
            return s * s
        s = s + np.sin(s)
    return s


def helper_returning_early_in_loop(x):
    t = 0.0
    for i in range(4):
        t = t + _returns_early(x * (i + 1) * 0.5)
        if t > 6.0:
            return t
    return t


def helper_returning_early_in_branch(x):
    t = x
    for i in range(3):
        if i > 0:
            t = _returns_early(t) + x
    return t


def helpers_returning_between_loops(x):
    return returns_between_loops(x) * _returns_early(x + 0.5)


# -- keyword-only parameters --------------------------------------------------------------------


def _scaled(x, *, scale, shift=0.0):
    return x * scale + shift


def keyword_only_helper(x):
    return _scaled(x, scale=3.0) + _scaled(2.0, scale=4.0) * x + _scaled(x * x, shift=1.0, scale=x)


def keyword_only_helper_in_loop(x):
    s = 0.0
    for i in range(3):
        s = s + _scaled(np.sin(x), scale=i + 1.0) + _scaled(1.5, scale=2.0, shift=i)
    return s


# -- a tuple of arrays of different shapes from a helper ----------------------------------------


def _parts(x):
    return x[:2] * 2.0, np.outer(x, x), np.sum(x)


def tuple_items_in_branch(x):
    t = _parts(x)
    if np.sum(x) > 0.0:
        s = np.sum(t[0]) + np.sum(t[1])
    else:
        s = np.sum(t[1] ** 2)
    return s


def tuple_items_in_loop(x):
    t = _parts(x)
    s = 0.0
    for i in range(3):
        s = s + np.sum(t[1][i]) * t[2] + t[0][0]
    return s


def tuple_items_in_branch_in_loop(x):
    t = _parts(x)
    s = 0.0
    for i in range(3):
        if i > 0:
            s = s + np.sum(t[1][i] * t[0][1])
        else:
            s = s + t[2]
    return s


# -- a copy of an array that is not differentiated, written into --------------------------------


def copy_written(x, v):
    b = v.copy()
    b[0] = x[0] * 2.0
    return np.sum(b * x * x)


def copy_updated_in_loop(x, v):
    b = v.copy()
    for i in range(len(x)):
        b[i] = b[i] + x[i] ** 2
    return np.sum(b * np.sin(x))


def copy_written_in_branch(x, v):
    b = np.copy(v)
    if x[0] > 0:
        b[1] = np.sin(x[1])
    return np.sum(b ** 2 * x)
