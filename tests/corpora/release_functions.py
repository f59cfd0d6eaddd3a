"""Functions whose gradients hold array temporaries (tests/passes/test_release.py)."""
import numpy as np


def two_layers(w1, w2, x):
    hidden = np.tanh(x @ w1 + 0.5)
    return np.mean((hidden @ w2 - 1.0) ** 2)


def read_again_in_a_loop(x, n):
    scaled = np.sin(x) * 2.0
    total = 0.0
    for i in range(n):
        total = total + np.sum(scaled * x) * i
    return total + np.sum(scaled)


def through_a_helper(x):
    return np.sum(helper(x * 3.0) ** 2)


def helper(y):
    shifted = y - np.mean(y)
    return np.cos(shifted) * y


def shifted_sum(img):
    p = np.pad(img, 1, mode="edge")
    s = p[:-2, 1:-1] + p[2:, 1:-1] + p[1:-1, :-2] + p[1:-1, 2:]
    return np.sum(s ** 2)


def sliced_and_used_whole(x):
    y = np.sin(x)
    left, right = y[:-1], y[1:]
    return np.sum(left * right) + np.sum(y ** 3) + left[0]


def sliced_part_passed_on(x):
    y = x * 2.0
    head = y[:2]
    tail = y[1:]
    both = head + tail[:2]
    return np.sum(both * y[:2]) + np.sum(tail)
