"""Functions whose gradients hold array temporaries (tests/test_release.py)."""
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
