"""Functions whose gradients tests/targets/test_export.py exports and runs without s2s_ad."""
import math

import numpy as np

WEIGHTS = np.array([1.0, 2.0, 3.0])  # a global array the code reads: written into the module as a literal
RNG = np.random.default_rng(0)  # a generator object: has no literal form, cannot be exported


def numbers(x, y):
    return x * y + np.sin(x) / y + math.exp(-x * x)


def arrays(x, w):
    return np.sum(np.tanh(x @ w) ** 2)


def loop_writes(x):
    out = np.zeros(len(x))
    for i in range(1, len(x)):
        out[i] = out[i - 1] * 0.5 + x[i] ** 2
    return np.sum(out * out)


def helper(a, b):
    return a * np.exp(b)


def calls_helper(x, y):
    return np.sum(helper(x, y) + helper(y, x) ** 2)


def stepped_helper(a, b):
    """``helper`` with its exponential's square root taken by a loop: a helper with a loop stays a call
    (its adjoint is written into the module), where ``helper``, a short one, is lowered in place."""
    e = np.exp(b)
    for _ in range(2):
        e = np.sqrt(e)
    return a * e


def calls_stepped_helper(x, y):
    return np.sum(stepped_helper(x, y) + stepped_helper(y, x) ** 2)


def padded(x):
    return np.sum(np.pad(x, 2, mode="reflect") ** 2 * np.arange(x.size + 4)) + np.linalg.norm(x)


def solved(A, b):
    return np.sum(np.linalg.solve(A, b) ** 2)


def weighted(x, scale=2.0, *, power=2):
    return scale * np.sum(WEIGHTS * x ** power)


def noisy(x):
    return np.sum(x * RNG.normal(size=3))


def by_mode(x, mode="l2"):
    if mode == "l2":
        return np.sum(x ** 2)
    return np.sum(np.abs(x))
