"""A factory in a module of its own (tests/corpora/function_value_functions.py: a closure made in another module is refused)."""
import numpy as np


def make_elsewhere(c):
    def f(z):
        return c * np.sin(z)
    return f
