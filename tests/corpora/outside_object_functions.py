"""Issue 33, objects as people write them where they are not made inside the differentiated function:
an object of your class passed as an argument (its methods calling each other), a module-level object
(its attributes constants, read as they are at the call), and objects whose class defines ``__len__``,
``__iter__`` or ``__getitem__`` (followed where each is one return statement).  What stays refused says
``# REFUSED``."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np


class Calc:
    def __init__(self, k):
        self.k = k

    def square(self, x):
        return x * x

    def square_then_double(self, x):
        return 2.0 * self.square(x) * self.k


def calc_passed_in(x, calc):
    return np.sum(calc.square_then_double(x))


class Layer:
    """Arrays, a number, a string and a list among its attributes; a base's method and a property."""

    def __init__(self, w, b, name, taps):
        self.w = w
        self.b = b
        self.name = name
        self.taps = taps

    @property
    def scale(self):
        return 2.0 * self.b

    def act(self, z):
        return np.tanh(z) if self.name == "tanh" else np.sin(z)


class Shifted(Layer):
    def forward(self, x):
        return self.act(self.w * x + self.scale) + self.taps[0] * x + self.taps[1]


def layer_passed_in(x, layer):
    return np.sum(layer.forward(x) ** 2)


CALC = Calc(1.5)


def module_level_calc(x):
    return np.sum(CALC.square_then_double(x))


class Settings:
    def __init__(self, w, offset):
        self.w = w
        self.offset = offset

    def apply(self, x):
        return np.sin(self.w * x) + self.offset


SETTINGS = Settings(np.array([0.5, -1.0, 2.0]), 0.25)
NESTED = Shifted(np.array([0.4, 0.9, -0.3]), 0.1, "sin", [0.5, 1.5])


def module_level_arrays(x):
    return np.sum(SETTINGS.apply(x) ** 2) + SETTINGS.offset * x[0]


def module_level_subclass(x):
    return np.sum(NESTED.forward(x) * x)


class Bag:
    def __init__(self, a, b):
        self.a = a
        self.b = b

    def __iter__(self):
        return iter([self.a, self.b])

    def __len__(self):
        return 2

    def __getitem__(self, i):
        return self.a if i == 0 else self.b


def bag_iterated(x):
    bag = Bag(x, np.sin(x))
    total = 0.0
    for item in bag:
        total = total + np.sum(item * item)
    return total * len(bag) + np.sum(bag[0] * bag[1])


class Items:
    def __init__(self, items):
        self.items = items

    def __iter__(self):
        """Its items."""
        return iter(self.items)

    def __len__(self):
        return len(self.items)

    def __getitem__(self, i):
        return self.items[i]


def items_by_index(x):
    items = Items([x, np.cos(x), x[0] * x])
    total = 0.0
    for i in range(len(items)):
        total = total + np.sum(items[i] * items[len(items) - 1 - i])
    return total


def items_iterated_and_listed(x):
    items = Items((x, 2.0 * x))
    total = 0.0
    for k, item in enumerate(items):
        total = total + (k + 1.0) * np.sum(np.tanh(item))
    return total + np.sum(list(items)[1]) * len(items)


@dataclass
class Pair:
    first: np.ndarray
    second: np.ndarray

    def __iter__(self):
        return iter((self.first, self.second))


def dataclass_iterated(x):
    total = 0.0
    for part in Pair(x, x * x):
        total = total + np.sum(np.exp(0.3 * part))
    return total


def items_of_a_passed_object(x, items):
    total = 0.0
    for item in items:
        total = total + np.sum(item * x)
    return total + np.sum(items[0]) * len(items)


class Generated:
    def __init__(self, a, b):
        self.a = a
        self.b = b

    def __iter__(self):  # (a generator of yields and for loops over known containers is followed)
        yield self.a
        if self.b is not None:  # REFUSED (an if: not followed)
            yield self.b


def generator_iter(x):
    total = 0.0
    for item in Generated(x, x):
        total = total + np.sum(item)
    return total


class Counted:
    def __init__(self, items):
        self.items = items

    def __len__(self):
        n = len(self.items)  # REFUSED
        return n


def len_of_two_statements(x):
    return np.sum(x) * len(Counted([x, x]))


class OnlyGetitem:
    def __init__(self, a):
        self.a = a

    def __getitem__(self, i):
        return self.a


def iterated_by_getitem_alone(x):
    total = 0.0
    for item in OnlyGetitem(x):  # REFUSED
        total = total + np.sum(item)
    return total


class Slotted:
    __slots__ = ("k",)

    def __init__(self, k):
        self.k = k

    def scaled(self, x):
        return self.k * x


def slotted_passed_in(x, slotted):
    return np.sum(slotted.scaled(x))  # REFUSED


class WithSetter:
    def __init__(self, k):
        self._k = k

    @property
    def k(self):
        return self._k

    @k.setter
    def k(self, value):
        self._k = value


def setter_passed_in(x, obj):
    return np.sum(obj.k * x)  # REFUSED


SLOTTED = Slotted(2.0)


def module_level_slotted(x):
    return np.sum(SLOTTED.scaled(x))  # REFUSED
