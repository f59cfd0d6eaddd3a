"""Functions for tests/lowering/test_short_helpers_in_place.py: short helpers of the user's (lowered in place
into their caller's code) and helpers just past what the policy lowers in place (which stay calls)."""
import numpy as np

from short_helper_elsewhere import OFFSET as OTHER_OFFSET, shifted, total_of  # helpers of another file

OFFSET = 10.0  # shifted's module defines OFFSET too, differently


def rates(u, a, b):
    grow = a * u
    return grow - b * u * u


def rk4(u, a, b, h, n):
    for _ in range(n):
        k1 = rates(u, a, b)
        k2 = rates(u + 0.5 * h * k1, a, b)
        k3 = rates(u + 0.5 * h * k2, a, b)
        k4 = rates(u + h * k3, a, b)
        u = u + h / 6.0 * (k1 + 2.0 * k2 + 2.0 * k3 + k4)
    return np.sum(u ** 2)


def scaled(x, scale=2.0, power=None):
    return scale * x if power is None else scale * x ** power


def defaults_and_keywords(x):
    return np.sum(scaled(x) + scaled(power=3.0, x=np.sin(x)) + scaled(x, 0.5, 2.0))


def plus_offset(x):
    return x + OFFSET


def global_of_this_file(x):
    return np.sum(plus_offset(x) ** 2)


def global_of_another_file(x):
    return np.sum(shifted(x) ** 2)


def with_aux(x):
    v = rates(x, 1.5, 0.5)
    return np.sum(v ** 2), v


class Spring:
    def __init__(self, k):
        self.k = k

    def energy(self, x):
        return 0.5 * self.k * x * x

    def total(self, x):
        return np.sum(self.energy(x))


def halving(x, n):
    return x if n == 0 else x + halving(0.5 * x, n - 1)


def recursive(x):
    return np.sum(halving(x, 3) ** 2)


# -- just past the policy: each stays a call -------------------------------------------------------

def with_subscript(x):
    return x[0] * x


def with_augmented(x):
    y = x * 1.0
    y += 1.0
    return y * x


def with_loop(x):
    y = x
    for _ in range(2):
        y = y * x
    return y


def with_seven_assignments(x):
    a = x + 1.0
    b = a * x
    c = b - x
    d = c * 0.5
    e = d + a
    f = e * b
    g = f - c
    return g


def with_keyword_only(x, *, k=2.0):
    return k * x * x


def calls_each(x):
    return np.sum(with_subscript(x) + with_augmented(x) + with_loop(x) + with_seven_assignments(x)
                  + with_keyword_only(x, k=3.0))


def container_helper_of_another_file(w, scale):
    return total_of({"w": w, "scale": scale})
