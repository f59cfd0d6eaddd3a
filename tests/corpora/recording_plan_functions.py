"""Functions whose split form (forward part / backward part) once failed where the one piece was right
(issue 18, part 2): written as a user would (tests/ad/test_recording_plan.py)."""
import numpy as np

import s2s_ad


# -- a local array written by index, bound on some paths only ---------------------------------------

def made_after_early_return(x, k):
    """The buffer is made after an early return: on the path that returns, it never exists."""
    if k == 0:
        return x * 2.0
    b = np.ones(3) * x
    for i in range(3):
        b[i] = b[i] * x
    return np.sum(b)


def made_in_loop_body(v, n):
    """The buffer is made in a loop body, which runs zero times when n == 0."""
    s = 0.0
    for i in range(n):
        b = v.copy()
        b[0] = b[0] * v[1]
        s = s + np.sum(b * b)
    return s


def made_after_continue(v, n):
    """The buffer is made in a loop body after a continue: on even trips it never exists."""
    s = 0.0
    for i in range(n):
        if i % 2 == 0:
            continue
        b = v.copy()
        b[0] = b[0] * v[1]
        s = s + np.sum(b * b)
    return s


def copies_and_updates(v, k):
    """A recursive helper with a base case that copies and updates an array."""
    if k == 0:
        return np.sum(v * v)
    w = v.copy()
    w[0] = w[0] * 2.0
    return copies_and_updates(w, k - 1)


def calls_the_recursive_helper(v):
    return copies_and_updates(v, 2) * 1.5


def calls_early_return(x):
    return made_after_early_return(x, 1) + made_after_early_return(x, 0) * x


def calls_continue(v):
    return made_after_continue(v, 3) + made_in_loop_body(v, 0)


# -- the backward part reads names the forward part must hand over ----------------------------------

def ones_then_updates(x):
    """b = np.ones(4); b[1] += b[0] * x; b[2] = x (the backward part read x without it)."""
    b = np.ones(4)
    b[1] += b[0] * x
    b[2] = x
    return np.sum(b * b)


def calls_ones_then_updates(x):
    return ones_then_updates(x * 1.5) * x


def buffer_in_tuple(x, v):
    """A slice update then a row write of a 2-D buffer returned in a tuple (the backward part read x)."""
    buf = np.ones((3, 3))
    buf[1:, :] *= x
    buf[2] = v * buf[0]
    return buf, x


def sine_of_local_array(x):
    """A sine of an element of a local array, added back into it, then another write."""
    b = np.ones(4)
    s = np.sin(b[0] * x)
    b[1] += s
    b[2] = x
    return np.sum(b * b)


def calls_buffer_in_tuple(x, v):
    buf, same = buffer_in_tuple(x, v)
    return np.sum(buf * buf) * same


def test_from_array_written_later(x, v):
    """A branch test (and a sine) computed from a local array written later."""
    b = v * 1.0
    up = b[0] > 0.0
    low = b[1] < 0.5
    s = np.sin(b[2])
    b[1] = x * 2.0
    if up:
        y = np.sum(b * b) * s
    elif low:
        y = np.sum(b) + s
    else:
        y = x
    return y * x


def calls_test_from_array_written_later(x, v):
    return test_from_array_written_later(x, v) + test_from_array_written_later(-x, -v)


def returns_from_loop_then_writes_buffer(x, v, n):
    """An early return from inside a loop; after it, a buffer written by a mask and by a row (found by
    a random program generator: the adjoint of the buffer was joined on the path that returned)."""
    s = 0.3
    for i in range(n):
        s = s * 1.3 + 0.2
        if s > 1.0:
            return s * x + np.sum(v)
    buf = np.full((3, 4), 0.1)
    buf[buf > 0.2] *= 0.5
    buf[2] = v * x
    return s + np.sum(buf * buf) * x


def replayed_segment_reads_a_parameter(x, n):
    """A checkpointed loop: the backward part runs each segment again, reading x (it was not handed over)."""
    s = 0.0
    for t in s2s_ad.checkpointed(range(n)):
        s = s * 0.5 + x
    return s
