"""The programs behind tests/fuzz/test_regressions.py, reduced by hand from what the fuzzer printed."""
import math

import numpy as np


def pair(p):
    return p * 0.5 + 1.0, math.sin(p) * p


def stored_in_a_loop(x, v):
    u2, u3 = pair(x)
    out7 = np.zeros(3)
    for j in range(3):
        out7[j] = u2
    return np.sum(out7) + np.sum(v) * u3


def tuple_item_updated(x, y):
    u4, u5 = pair(x)
    u4 += x
    return u4 * y + u5


def updated_after_a_branch(x, y):
    if x > y:
        b2 = x
    else:
        b2 = x + x
    b2 += x  # the update reads b2: the branches' values must be joined
    return b2 * y


def negative_base(x, y):
    out = np.zeros(3)
    for j in range(3):
        out[j] = (-0.5) ** 2  # was printed as -0.5 ** 2, which Python reads as -(0.5 ** 2)
    return np.sum(out) * x + (-2.0) ** 3 * y


def passes_through(p, q, v):
    return p


def second_order_through_a_helper(x, y, v):
    # forward over reverse: the helper's forward part takes the tape, whose zero tangent is a tuple
    c = passes_through(y, x, v)
    return x * x * c + np.sum(v) * x


def second_order_through_a_stored_adjoint(x, v):
    # forward over reverse: the adjoint of out is written in place (d_out[j] = ...) by generated code
    out = np.zeros(3)
    for j in range(3):
        out[j] = x * x * v[j]
    return np.sum(out) * x


def sum_of_array_plus_number(b, v):
    return np.sum(v + b)  # with only b moving, the tangent of v + b has v's shape, not b's


def indexes_an_array_made_from_a_number(x, v):
    w = v + x * x
    return w[0] * x + np.mean(w)


def updated_from_its_own_array(x, y, v):
    if x + np.sum(v) > x + x:
        b1 = x + x + y
    else:
        b1 = math.exp(math.tanh(np.dot(v, v) ** 2))
    w2 = v + b1
    b1 -= x - w2[0]  # second order writes into the adjoint of w2: its tangent must be writable
    return np.mean(w2) + b1 * y + x * y


def large_gradient_small_curvature(x, y, v):
    items = []
    for i in range(3):
        items.append(math.exp(math.tanh(np.sum(v))) * (i + 1.0))
    total = sum(items) + items[0]
    a3 = math.hypot(x, 0.5 + math.hypot(y, 0.5 + total * total) * math.hypot(y, 0.5 + total * total))
    total *= x * a3
    return x + x + total + np.sum(v) + x * y


def large_value_small_slope(x, y, v):
    items = []
    for i in range(3):
        items.append(math.exp(math.tanh(np.sum(v))) * (i + 1.0))
    total = sum(items) + items[0]
    a3 = max(x, math.hypot(y, 0.5 + total * total))
    total *= math.hypot(x, 0.5 + a3 * a3)
    return y + y + total + np.sum(v) + x * y



def _copy_then_shift(a, s):
    b = a.copy()
    b[0] = b[0] * s
    b[1:] = b[1:] + np.sin(a[:-1])
    return b


def _copy_then_smooth(a, s):
    b = a.copy()
    b[0] = b[0] * s
    b[1:] = b[1:] + np.sin(b[:-1])
    return b


def restored_array_nothing_reads_later(x, y, v, m):
    if float(np.mean(np.tanh(m))) > np.mean(v):
        acc1 = x
    else:
        acc1 = v
    a2 = np.sum(acc1 * v)
    w4 = _copy_then_shift(np.sqrt(1.0 + np.max(m, axis=0) * np.max(m, axis=0)), y + a2)
    w5 = w4.copy()
    w5[-1] = math.tanh(w5[-1] + (np.sum(w4[1:] * w4[:-1]) + x))
    w6 = np.sin(w4).copy()
    w8 = _copy_then_smooth(w5, x)
    w9 = np.array(np.roll(w5, 1))
    return w6 * y + x * y
