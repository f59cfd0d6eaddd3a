"""Issue 33, objects as people write them (the class part): a class without __init__, derived
classes (super().__init__, an empty subclass, overridden and inherited methods, super().method,
two levels deep, a mixin), a method of an object a method gave back, methods calling methods on
self, and operators with a plain number on either side.  Lines marked # REFUSED are where the
refusal must point."""
from __future__ import annotations

import dataclasses

import numpy as np


class SimpleCalculator:
    """No __init__: an object with no attributes, its methods and class constants read."""
    OFFSET = 0.5

    def square(self, x):
        return x * x + self.OFFSET


class Base:
    def __init__(self, w):
        self.w = w

    def forward(self, x):
        return np.tanh(self.w * x)

    def loss(self, x):
        return np.sum(self.forward(x) ** 2)


class Scaled(Base):
    def __init__(self, w, s=2.0):
        super().__init__(w)
        self.s = s

    def forward(self, x):
        return self.s * super().forward(x)


class Shifted(Scaled):
    """Two levels deep: super() reaches Scaled's __init__ and forward, which reach Base's."""

    def __init__(self, w, s, b):
        super().__init__(w, s=s)
        self.b = b

    def forward(self, x):
        return super().forward(x) + self.b


class Empty(Base):
    pass


class ExplicitSuper(Base):
    def forward(self, x):
        return super(ExplicitSuper, self).forward(x) * 3.0


class Rescaled(Base):
    """Sets an attribute its base's __init__ set: the later value, as Python."""

    def __init__(self, w):
        super().__init__(w)
        self.w = 2.0


class Offset:
    """A mixin: methods only."""

    def shift(self, z):
        return z + self.b


class Affine(Offset, Base):
    def __init__(self, w, b):
        super().__init__(w)  # (Offset defines no __init__: Base's runs)
        self.b = b

    def forward(self, x):
        return self.shift(super().forward(x))


class Model:
    def __init__(self, w):
        self.w = w

    def scaled(self, k):
        return Model(self.w * k)

    def predict(self, x):
        return self.w * x

    def loss(self, x):
        return np.sum(self.predict(x) ** 2)


class Vec:
    def __init__(self, v):
        self.v = v

    def __add__(self, k):
        return Vec(self.v + k)

    def __radd__(self, k):
        return Vec(k + self.v)

    def __sub__(self, other):
        return Vec(self.v - other.v)

    def __mul__(self, k):
        return Vec(self.v * k)

    def __rmul__(self, k):
        return Vec(k * self.v)

    def __truediv__(self, k):
        return Vec(self.v / k)

    def __neg__(self):
        return Vec(-self.v)

    def norm2(self):
        return np.sum(self.v ** 2)


def method_of_a_class_without_init(x):
    return np.sum(SimpleCalculator().square(x))


def derived_with_super_init(x):
    return Scaled(0.5, 3.0).loss(x)


def empty_derived_class(x):
    return Empty(0.3).loss(x)


def two_levels_deep(x):
    return Shifted(0.7, 1.5, 0.2).loss(x)


def super_with_arguments(x):
    return ExplicitSuper(x[0]).loss(x)


def attribute_set_again_in_the_derived_init(x):
    return Rescaled(x[1]).loss(x)


def mixin_and_base(x):
    return Affine(0.4, x[2]).loss(x)


def method_of_an_object_a_method_gave(x):
    return Model(x[0]).scaled(2.0).loss(x)


def chain_of_methods_giving_objects(x):
    return Model(x[0]).scaled(2.0).scaled(0.25).loss(x) + Model(x[1]).scaled(3.0).w


def object_a_method_gave_bound_to_a_name(x):
    m = Model(x[0]).scaled(2.0)
    return m.loss(x) + m.w


def operators_with_a_number_on_either_side(x):
    return (Vec(x) * 2.0).norm2() + (3.0 * Vec(x)).norm2() + (1.5 + Vec(x)).norm2()


def negation_and_division(x):
    return (-(Vec(x) / 4.0)).norm2() + (-Vec(x)).norm2()


def operators_on_what_operators_gave(x):
    return ((2.0 * Vec(x) + 1.0) - Vec(x) / 2.0).norm2()



class LoudVec(Vec):
    """Its __radd__ runs before Vec's __add__ in Vec(a) + LoudVec(b), as Python calls it."""

    def __radd__(self, other):
        return Vec(other.v + 10.0 * self.v)


class Defaulted:
    def __init__(self, w, k=2.0):
        self.w = w
        self.k = k

    def loss(self, x):
        return np.sum(self.k * self.w * x)


def reflected_operator_of_a_subclass_first(x):
    return (Vec(x) + LoudVec(x * x)).norm2()


def default_of_init(x):
    return Defaulted(x).loss(x)


@dataclasses.dataclass
class Pair:
    a: float
    b: float


class Swapped(Pair):
    """Its own __init__ (not the one @dataclass wrote): read as a plain class's."""

    def __init__(self, b, a):
        self.a = b
        self.b = a

    def total(self):
        return self.a * 2.0 + self.b


class PairChild(Pair):
    def __init__(self, b, a):
        super().__init__(b, a)  # the dataclass's __init__: its fields from its parameters

    def total(self):
        return self.a * 2.0 + self.b


def own_init_in_a_class_deriving_from_a_dataclass(x):
    return np.sum(Swapped(x, 3.0).total())


def super_init_of_a_dataclass(x):
    return np.sum(PairChild(x, 3.0).total())


class Left(Base):
    def __init__(self, w):
        super().__init__(w)
        self.b = 1.0

    def forward(self, x):
        return super().forward(x) + self.b


class Right(Base):
    def __init__(self, w):
        super().__init__(w)
        self.c = 2.0

    def forward(self, x):
        return super().forward(x) * self.c


class Diamond(Left, Right):
    """Diamond's MRO: Left, Right, Base; each super() goes on along it, as in Python."""

    def __init__(self, w):
        super().__init__(w)


class Grows:
    def __init__(self, w):
        self.w = w

    def doubled(self):
        return type(self)(self.w * 2.0)

    def tripled(self):
        return self.__class__(self.w * 3.0)

    def loss(self, x):
        return np.sum((self.w * x) ** 2)


class GrowsOtherwise(Grows):
    def loss(self, x):
        return np.sum(np.sin(self.w * x))


def diamond(x):
    return Diamond(x[0]).loss(x)


def own_class_of_self(x):
    return GrowsOtherwise(x[1]).doubled().tripled().loss(x)


class Parts:
    def __init__(self, w):
        self.w = w

    def named(self):
        return {"a": self.w, "b": 2.0 * self.w}

    def pair(self):
        return self.w, np.sin(self.w)


def items_of_what_methods_gave(x):
    return np.sum(Parts(x).named()["b"] * x) + np.sum(Parts(x).pair()[1]) + np.sum(Parts(x).named().get("a") ** 2)

# Refused


class Meta(type):
    pass


class WithMeta(metaclass=Meta):
    def __init__(self, w):
        self.w = w


class Dynamic:
    def __getattr__(self, name):
        return 1.0


class DynamicChild(Dynamic):
    def __init__(self, w):
        self.w = w


class ComputesInSuper(Base):
    def __init__(self, w):
        super().__init__(w * 2.0)


class FromDict(dict):
    def __init__(self, w):
        super().__init__()
        self.w = w


class NoSuchBaseMethod(Base):
    def forward(self, x):
        return super().backward(x)  # REFUSED


def class_with_a_metaclass(x):
    return np.sum(WithMeta(x).w)  # REFUSED


def base_with_getattr(x):
    return np.sum(DynamicChild(x).w)  # REFUSED


def super_init_given_a_computation(x):
    return ComputesInSuper(x).loss(x)  # REFUSED


def derived_from_a_builtin(x):
    return np.sum(FromDict(x).w)  # REFUSED


def super_method_no_base_defines(x):
    return NoSuchBaseMethod(0.5).loss(x)


@dataclasses.dataclass
class OwnInit:
    x: float

    def __init__(self, y):  # (kept by @dataclass: the fields are not its parameters)
        self.x = 2.0 * y


def dataclass_with_an_init_of_its_own(x):
    return np.sum(OwnInit(x).x)


def object_of_another_class_on_one_path(x):
    m = Base(x[0])
    if x[1] > 0:
        m = Scaled(x[2])  # REFUSED
    return m.loss(x)


def array_method_of_what_a_method_gave(x):
    return Model(x[0]).predict(x).argsort_twice()  # REFUSED
