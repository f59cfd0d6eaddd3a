"""Issue 33: the class idioms people write, read as Python runs them: a property (its getter called
on the object), ``__call__``, a classmethod (an alternative constructor, called on the class, on an
object, or through ``cls`` in another), a staticmethod through ``cls``, and a function a call returns
called where it is returned (``make_act(0.1)(x)``).  What stays refused says ``# REFUSED``."""
from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np


class Layer:
    def __init__(self, w, b):
        self.w = w
        self.b = b

    @property
    def scale(self):
        return 2.0 * self.w

    @property
    def shifted(self):
        return self.scale + self.b  # a property reading another

    def __call__(self, v):
        return np.tanh(self.scale * v + self.b)

    @classmethod
    def from_vector(cls, v):
        return cls(v[0], v[1])

    @classmethod
    def doubled(cls, v):
        return cls.from_vector(2.0 * v)  # a classmethod calling another through cls

    @staticmethod
    def squared(v):
        return v * v

    @classmethod
    def squared_sum(cls, v):
        return np.sum(cls.squared(v))  # a staticmethod through cls

    def energy(self, v):
        return np.sum(self(v) ** 2) + self.shifted  # a method calling the object itself


class Scaled(Layer):
    @property
    def scale(self):
        return 3.0 * self.w  # overridden: found by the class's MRO, from the base's methods too


@dataclass
class Interval:
    lo: float
    hi: float

    @property
    def width(self):
        return self.hi - self.lo


class Point(NamedTuple):
    x: float
    y: float

    @property
    def norm2(self):
        return self.x ** 2 + self.y ** 2


class WithSetter:
    def __init__(self, a):
        self._a = a

    @property
    def a(self):
        return self._a

    @a.setter
    def a(self, value):
        self._a = value


class AssignsItsProperty:
    def __init__(self, a):
        self.doubled = a

    @property
    def doubled(self):
        return 2.0


def make_act(slope):
    def act(v):
        return np.where(v > 0, v, slope * v)
    return act


def scaled(v, c=1.0):
    return c * v


def property_of_an_object(x):
    return np.sum(Layer(x[0], x[1]).scale * x)


def property_reading_a_property(x):
    return Layer(x[0], x[1]).shifted * np.sum(x)


def object_called(x):
    layer = Layer(x[0], 0.5)
    return np.sum(layer(x))


def method_calling_the_object(x):
    return Layer(x[1], x[2]).energy(x)


def overridden_property_read_by_a_base_method(x):
    return Scaled(x[0], x[2]).energy(x)


def classmethod_on_the_class(x):
    layer = Layer.from_vector(x)
    return np.sum(layer(x))


def classmethod_through_cls(x):
    return np.sum(Layer.doubled(x)(x))


def classmethod_of_a_subclass(x):
    layer = Scaled.from_vector(x)  # cls is Scaled: its scale
    return np.sum(layer(x))


def classmethod_on_an_object(x):
    made = Layer(1.0, 0.0).from_vector(x[::-1])
    return made.scale * np.sum(x)


def staticmethod_through_cls(x):
    return Layer.squared_sum(x) + Layer.squared(x[0])


def property_of_a_dataclass(x):
    return Interval(x[0], x[1] * x[2]).width ** 2


def property_of_a_namedtuple(x):
    return np.sqrt(Point(x[0], x[1]).norm2) * x[2]


def closure_called_where_it_is_made(x):
    return np.sum(make_act(0.1)(x))


def partial_called_where_it_is_made(x):
    return np.sum(functools.partial(scaled, c=3.0)(x) ** 2)


def closure_made_in_a_loop(x):
    total = 0.0
    for k in range(3):
        total = total + np.sum(make_act(0.1 * k)(x - k))
    return total


def property_with_a_setter(x):
    return np.sum(WithSetter(x).a)  # REFUSED


def init_assigning_its_property(x):
    return np.sum(AssignsItsProperty(x).doubled * x)  # REFUSED


class Pair:
    """Operators that ask isinstance(other, Pair): a number or an array is never a Pair, known while
    transforming (it was refused: the class read as a value)."""

    def __init__(self, v):
        self.v = v

    def __add__(self, other):
        if isinstance(other, Pair):
            return Pair(self.v + other.v)
        return Pair(self.v + other)

    __radd__ = __add__

    def __mul__(self, other):
        if isinstance(other, (Pair, Layer)):
            return Pair(self.v * other.v)
        return Pair(self.v * other)

    def __rmul__(self, other):
        return self * other


def operators_asking_isinstance(x):
    p = Pair(x) * 2.0 + 1.5
    q = 0.5 * Pair(np.sin(x)) + x
    return np.sum((p * q + p).v ** 2)


def classmethod_result_read_directly(x):
    """What a classmethod gives back read where it is made: an attribute, a property, a method, the
    object called (each was refused: 'only array attributes with a rule', 'only array methods')."""
    return (Layer.from_vector(x).w * Scaled.doubled(x).b + Layer.doubled(x).shifted
            + Scaled.from_vector(x).energy(x) + np.sum(Layer.from_vector(x)(x)))
