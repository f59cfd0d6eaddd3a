"""Functions whose derivatives the tests of ``test_every_derivative_visible.py`` show, step into and explore."""
import numpy as np


def bump(u, k):
    v = np.sin(u) * k
    return v * v


def looped(x, y=2.0):
    s = 0.0
    for i in range(3):
        s = s + bump(x, y) * x
    return s / y


def stepped_bump(u, k):
    """``bump``, squared by a loop: a helper with a loop stays a call (its own adjoint and tape), where
    ``bump``, a short one, is lowered in place."""
    v = np.sin(u) * k
    squared = 1.0
    for _ in range(2):
        squared = squared * v
    return squared


def looped_call(x, y=2.0):
    """``looped`` through ``stepped_bump``: the same numbers, the helper called through its adjoint."""
    s = 0.0
    for i in range(3):
        s = s + stepped_bump(x, y) * x
    return s / y


def shaped(x, w):
    z = np.tanh(w * x)
    return np.sum(z * z)


def failing(x):
    a = np.ones(3) * x
    b = np.ones(4)
    return np.sum(a * b)
