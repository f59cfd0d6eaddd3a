"""Helpers given a tuple display of arrays of different shapes (tests/lowering/test_tuple_arguments.py)."""
import numpy as np


def layer(params, x):
    W, b = params
    return np.tanh(x @ W + b)


def two_layers(W1, b1, W2, b2, x):
    hidden = layer((W1, b1), x)
    return np.sum(layer((W2, b2), hidden) ** 2)


def _scaled_sum(p):
    return np.sum(p[0]) * p[1]


def array_and_number(x, a):
    return _scaled_sum((a, x)) + _scaled_sum((a * x, 2.0))


def _unpacked_in_loop(params, xs):
    W, b = params
    total = 0.0
    for i in range(len(xs)):
        total = total + np.sum(np.sin(xs[i] @ W + b))
    return total


def loop_in_helper(W, b, xs):
    return _unpacked_in_loop((W, b), xs) ** 2
