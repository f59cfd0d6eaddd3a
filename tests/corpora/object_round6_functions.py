"""Issue 33, objects as a user writes them (round 6): ``len()`` and iteration of an object whose
``__init__`` computes the array its ``__len__`` and ``__iter__`` read, a lambda as a default, a
message joined from a generator inside the function, and ten small object-oriented functions
(inheritance two levels deep with ``super()``, a property used in a method, a staticmethod helper,
``__call__`` objects in a list, a dataclass holding arrays updated in a loop, methods calling
methods, a class with no ``__init__``, operators with numbers on both sides).  Each takes one
vector and returns a number."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np


# --- what was refused ----------------------------------------------------------------------------

class Polynomial:
    """Coefficients computed in __init__ (highest power first); len() and iteration follow them."""

    def __init__(self, coefficients, scale):
        self.coefficients = coefficients * scale

    def __len__(self):
        return len(self.coefficients)

    def __iter__(self):
        return iter(self.coefficients)

    def __call__(self, t):
        total = 0.0
        for c in self:
            total = total * t + c
        return total


def polynomial_len_and_call(x):
    poly = Polynomial(x, 2.0)
    return poly(1.5) * len(poly)


def polynomial_iterated(x):
    poly = Polynomial(np.sin(x), 0.5)
    s = 0.0
    for c in poly:
        s = s + c * c
    return s / len(poly)


def polynomial_enumerated(x):
    poly = Polynomial(x, 1.0)
    s = 0.0
    for k, c in enumerate(poly):
        s = s + (k + 1.0) * c ** 3
    return s


def lambda_default(x, act=lambda z: z * z):
    return np.sum(act(x) + x)


def _with_a_lambda_default(v, act=lambda z: np.sin(z) * z):
    return np.sum(act(v))


def helper_lambda_default(x):
    return _with_a_lambda_default(x) + _with_a_lambda_default(2.0 * x, act=np.tanh)


def printing_a_joined_generator(x):
    y = np.exp(0.5 * x)
    print(", ".join(f"{v:.3f}" for v in y))
    print("; ".join(str(v) for v in x), len(x))
    return np.sum(y * x)


# --- ten small object-oriented functions ---------------------------------------------------------

class Shape:
    def __init__(self, size):
        self.size = size

    def area(self):
        return self.size * self.size


class Rectangle(Shape):
    def __init__(self, size, ratio):
        super().__init__(size)
        self.ratio = ratio

    def area(self):
        return super().area() * self.ratio


class Box(Rectangle):
    def __init__(self, size, ratio, depth):
        super().__init__(size, ratio)
        self.depth = depth

    def volume(self):
        return self.area() * self.depth


def inheritance_two_levels(x):
    box = Box(x[0], x[1], x[2])
    return box.volume() + Rectangle(x[1], 2.0).area() + Shape(x[2]).area()


class Spring:
    def __init__(self, k, rest):
        self.k = k
        self.rest = rest

    @property
    def stiffness(self):
        return self.k * self.k + 0.5

    def energy(self, length):
        return 0.5 * self.stiffness * (length - self.rest) ** 2


def property_used_in_a_method(x):
    spring = Spring(x[0], x[1])
    return spring.energy(x[2]) + spring.stiffness


class Normaliser:
    @staticmethod
    def centre(v):
        return v - np.mean(v)

    def __init__(self, v):
        self.v = self.centre(v)

    def spread(self):
        return np.sum(Normaliser.centre(self.v) ** 2)


def staticmethod_helper(x):
    return Normaliser(x * x).spread()


class Affine:
    def __init__(self, a, b):
        self.a = a
        self.b = b

    def __call__(self, v):
        return self.a * v + self.b


def callables_in_a_list(x):
    maps = [Affine(x[0], 1.0), Affine(2.0, x[1]), Affine(x[2], x[0])]
    v = x
    for m in maps:
        v = np.tanh(m(v))
    return np.sum(v)


@dataclass
class State:
    position: np.ndarray
    velocity: np.ndarray


def dataclass_updated_in_a_loop(x):
    state = State(x.copy(), np.zeros_like(x))
    for _ in range(4):
        force = -np.sin(state.position)
        state.velocity = state.velocity + 0.1 * force
        state.position = state.position + 0.1 * state.velocity
    return np.sum(state.position ** 2) + np.sum(state.velocity)


class Model:
    def __init__(self, w):
        self.w = w

    def predict(self, v):
        return np.tanh(self.w * v)

    def residual(self, v, target):
        return self.predict(v) - target

    def loss(self, v, target):
        r = self.residual(v, target)
        return np.sum(r * r) + self.penalty()

    def penalty(self):
        return 0.01 * np.sum(self.w ** 2)


def methods_calling_methods(x):
    model = Model(x)
    return model.loss(np.array([0.5, -1.0, 2.0]), 0.25)


class Calculator:
    def square(self, v):
        return v * v

    def square_then_double(self, v):
        return 2.0 * self.square(v)


def class_without_init(x):
    calc = Calculator()
    return np.sum(calc.square_then_double(x)) + Calculator().square(x[0])


class Vec:
    def __init__(self, v):
        self.v = v

    def __add__(self, other):
        return Vec(self.v + (other.v if isinstance(other, Vec) else other))

    def __radd__(self, other):
        return Vec(other + self.v)

    def __mul__(self, other):
        return Vec(self.v * other)

    def __rmul__(self, other):
        return Vec(other * self.v)

    def __sub__(self, other):
        return Vec(self.v - other)

    def __rsub__(self, other):
        return Vec(other - self.v)

    def __truediv__(self, other):
        return Vec(self.v / other)

    def __neg__(self):
        return Vec(-self.v)

    def total(self):
        return np.sum(self.v)


def operators_with_numbers_on_both_sides(x):
    a = Vec(x)
    b = 2.0 * a + 1.0
    c = (3.0 - b) * 0.5 + a / 4.0
    d = -(1.0 + c) - 2.0
    return (d * 2.0 + b).total() + (0.5 * (a + d) * d.v[0]).total()


class Base:
    def __init__(self, w):
        self.w = w

    def forward(self, v):
        return self.w * v

    def __call__(self, v):
        return self.forward(v)


class Shifted(Base):
    def __init__(self, w, b):
        super().__init__(w)
        self.b = b

    def forward(self, v):
        return super().forward(v) + self.b


class Squashed(Shifted):
    def forward(self, v):
        return np.tanh(super().forward(v))


def overridden_forward_through_call(x):
    layers = [Base(x[0]), Shifted(x[1], 0.5), Squashed(x[2], x[0])]
    v = x
    for layer in layers:
        v = layer(v)
    return np.sum(v ** 2)


class Counter:
    """A method that changes its object (self.total = ...), called for its effect on an object the
    function made and holds by one name alone: followed (its ``return self`` dropped by the caller)."""

    def __init__(self, scale):
        self.scale = scale
        self.total = 0.0

    def add(self, value):
        self.total = self.total + self.scale * value
        return self

    def mean(self, n):
        return self.total / n


def method_changing_its_object(x):
    counter = Counter(x[0])
    for k in range(3):
        counter.add(x[k] ** 2)
    return counter.mean(3.0)


def attribute_store_then_method(x):
    """Stores into an object made here, then its method reads them: the object with the attribute replaced."""
    model = Model(x)
    model.w = model.w * 2.0 + 1.0
    shape = Rectangle(x[0], x[1])
    if x[2] > 0.0:
        shape.ratio = shape.ratio * x[2]
    return model.penalty() * 100.0 + model.loss(x, 0.5) + shape.area()


def _make_shape(size):
    return Shape(size)


SHARED = Shape(2.0)


def attribute_store_through_another_name(x):
    shape = Shape(x[0])
    other = shape
    shape.size = 3.0 * shape.size  # REFUSED
    return other.area()


def attribute_store_augmented(x):
    shape = Shape(x[0])
    shape.size += 1.0  # the attribute read, updated (a number: a new one) and stored back
    return shape.area()


def attribute_store_into_what_a_function_made(x):
    shape = _make_shape(x[0])
    shape.size = shape.size * 2.0  # REFUSED
    return shape.size * shape.size


def attribute_store_into_a_module_object(x):
    SHARED.size = x[0]  # REFUSED
    return x[0] * 2.0


class Handle:
    def __init__(self, w):
        self.w = w

    def itself(self):
        return self


def attribute_store_after_a_method_handing_the_object_on(x):
    handle = Handle(x[0])
    other = handle.itself()  # REFUSED
    handle.w = 2.0 * handle.w
    return other.w


class Bag:
    """No __init__: every attribute is added by a store, as Python adds it to the object's __dict__."""


class WithDefault:
    scale = 2.0

    def energy(self, v):
        return self.scale * np.sum(v ** 2)


def attributes_added_to_an_object_without_init(x):
    y = x + 1.0
    bag = Bag()
    bag.part = y[1:]
    bag.part *= bag.part  # a view of y: y changes too
    bag.total = 0.0
    for i in range(x.shape[0]):
        bag.total = bag.total + y[i] * x[i]
    return bag.total


def class_attribute_shadowed_by_a_store(x):
    d = WithDefault()
    before = d.energy(x)  # the class's scale
    d.scale = x[0]
    return before + d.energy(x)
