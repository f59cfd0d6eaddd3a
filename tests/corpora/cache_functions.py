"""Functions whose free names the tests in test_cache.py change between calls."""
import numpy as np

SCALE = 3.0
WEIGHTS = np.array([1.0, 2.0])


def scaled(x):
    return SCALE * x * x


def weighted(x):
    return np.sum(WEIGHTS * x * x)


def helper(x):
    return x * x


def calls_helper(x):
    return helper(x) * 3.0


def uses_abs(x):
    return abs(x) * x


def make_closure():
    k = 2.0

    def scaled_by_k(x):
        return k * x * x

    def set_k(value):
        nonlocal k
        k = value

    return scaled_by_k, set_k
