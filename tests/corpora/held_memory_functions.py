"""Functions of the tests of memory the caller keeps (``test_memory_the_caller_keeps.py``): a
pullback that must not see the caller's later changes, module-level arrays the compiled backend must
follow, aux and primal outputs that must be arrays of their own.  Importable by name, so that their
pullbacks pickle."""
import numpy as np

WEIGHTS = np.array([1.0, 2.0, 3.0])  # changed in place by the tests (and put back)
PAIR = (np.array([0.5, -1.0, 2.0]), 3.0)
TABLE = {"w": np.array([1.0, -2.0, 0.5])}


class Settings:
    """A class attribute holding an array."""
    scale = np.array([2.0, 1.0, 0.5])


def closure_over_array():
    """A function reading an array from a closure cell, and the array."""
    cell = np.array([1.0, 0.5, -1.0])

    def weighted(x):
        return np.sum(cell * np.sin(x))
    return weighted, cell


def through_a_view(x):
    """The result reads the argument through a view (the tape may hold the view)."""
    tail = x[1:]
    return np.sin(x) * np.sum(tail ** 2)


def writes_a_local_copy(x):
    """Writes into an array of its own: the reverse sweep puts back what it overwrote, so a second
    pullback runs the forward sweep again (from what the pullback kept)."""
    b = x * 1.0
    for i in range(1, len(b)):
        b[i] = b[i] * b[i - 1]
    return b


def of_a_dict(params):
    """A container argument."""
    return np.tanh(params["w"] * params["b"])


class Model:
    """A method's instance holds the array."""

    def __init__(self, w):
        self.w = w

    def predict(self, x):
        return np.sum(self.w * x ** 2) * x


def global_weighted(x):
    return np.sum(WEIGHTS * x ** 2)


def global_in_a_loop(x):
    s = 0.0
    for i in range(len(x)):
        s = s + WEIGHTS[i] * np.sin(x[i])
    return s


def item_of_a_global_tuple(x):
    return np.sum(PAIR[0] * x ** 2) * PAIR[1]


def item_of_a_global_dict(x):
    return np.sum(TABLE["w"] * np.cos(x))


def class_attribute(x):
    return np.sum(Settings.scale * x ** 3)


def with_default_after(x, k=2.0):
    return np.sum(WEIGHTS * x ** k)


weighted_by_cell, CELL = closure_over_array()


def loss_and_the_argument(x):
    return np.sum(x ** 2), x


def loss_and_a_view(x):
    return np.sum(x ** 2), x[1:]


def loss_and_reversed(x):
    return np.sum(x ** 2), x[::-1]


def loss_and_a_global(x):
    return np.sum(WEIGHTS * x ** 2), WEIGHTS


def the_argument(x):
    return x


def a_view(x):
    return x[1:]


def reversed_argument(x):
    return x[::-1]


def a_global(x):
    return WEIGHTS


# -- math's functions outside their domain or range (the Numba backend must raise as Python does) --

import math  # noqa: E402


def root_of(x):
    return math.sqrt(x - 2.0) * x


def arccos_of(x):
    return math.acos(x) + x


def exp_of(x):
    return math.exp(1000.0 * x)


def log_of(x):
    return math.log(x - 1.0)


def log_base_two_of(x):
    return math.log(x - 5.0, 2.0)


def power_of(x):
    return math.pow(x, 0.5)


def power_overflowing(x):
    return math.pow(x, 1000.0)


def atanh_of(x):
    return math.atanh(x)


def sine_of_an_infinity(x):
    return math.sin(x * 1e308 * 10.0)


def in_a_loop(x):
    total = 0.0
    for i in range(3):
        total = total + math.sqrt(x - i)
    return total
