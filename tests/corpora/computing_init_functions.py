"""Objects of classes whose ``__init__`` computes what it assigns (issue 33, objects as people write
them): arithmetic of the arguments, ``len``, locals, a loop, a branch, an attribute read after it is
assigned, an in-place update of an attribute, a view of an argument kept as an attribute, a default
argument, a derived class that inherits such an ``__init__``, a dataclass with an ``__init__`` of its
own.  Each ``f(x)`` takes a vector of four numbers."""
from __future__ import annotations

import dataclasses

import numpy as np


def _squared_norm(v):
    return np.sum(v * v)


class Model:
    def __init__(self, w, scale=1.5):
        self.w = w
        self.scale = 2.0 * scale
        self.n = len(w)

    def predict(self, x):
        return np.tanh(self.w * x) * self.scale / self.n


class Polynomial:
    def __init__(self, coeffs):
        """Coefficients, highest first; normalised, with the sign of the norm's excess."""
        self.coeffs = coeffs
        total = 0.0
        for c in coeffs:
            total = total + c * c
        self.norm = np.sqrt(total)
        if self.norm > 1.0:
            self.sign = 1.0
        else:
            self.sign = -1.0

    def __call__(self, t):
        out = 0.0
        for c in self.coeffs:
            out = out * t + c
        return out / self.norm * self.sign


class Halves:
    def __init__(self, a):
        self.a = a
        self.first = a[:2]  # a view of the array passed in

    def top(self):
        return self.first


class Layer:
    def __init__(self, w):
        self.w = w * 2.0
        self.bias = _squared_norm(w)

    def forward(self, x):
        return self.activation(np.dot(self.w, x)) + self.bias

    def activation(self, z):
        return z


class SquaredLayer(Layer):  # inherits the __init__ that computes
    def activation(self, z):
        return z ** 2


class Accumulator:
    def __init__(self, x):
        self.v = x * 1.0
        self.v += 1.0
        self.v[0] = self.v[1] * 3.0


@dataclasses.dataclass
class Scaled:
    x: float

    def __init__(self, y):  # kept by @dataclass: the field is computed from another parameter
        self.x = 2.0 * y


class Normalised:
    def __init__(self, w):
        self.w = w / np.linalg.norm(w)


def model_with_a_default_and_len(x):
    m = Model(x[:2] * 1.0, x[3])
    return np.sum(m.predict(x[2:])) + np.sum(Model(x[2:]).predict(x[:2]))


def polynomial_with_a_loop_and_a_branch(x):
    p = Polynomial(x[:3])
    return p(x[3]) + p(0.5)


def view_kept_then_its_array_written(x):
    b = x * 1.0
    h = Halves(b)
    b[0] = np.sin(x[1])
    return np.sum(h.top() * h.a[2:])


def inherited_computing_init(x):
    return SquaredLayer(x[:2]).forward(x[2:]) + Layer(x[2:]).forward(x[:2])


def attribute_updated_in_init(x):
    a = Accumulator(x)
    return np.sum(a.v ** 2)


def dataclass_with_an_init_of_its_own_computing(x):
    return np.sum(Scaled(x).x * x)


def normalised_in_a_loop(x):
    total = 0.0
    for k in range(3):
        total = total + np.sum(Normalised(x * (k + 1.0)).w * x)
    return total


class ComputesWithSuper(Layer):
    def __init__(self, w):
        super().__init__(w)
        self.extra = self.bias * 2.0


class CallsAMethod:
    def __init__(self, w):
        self.w = w
        self.total = self.summed()

    def summed(self):
        return np.sum(self.w)


class ReturnsEarly:
    def __init__(self, w):
        self.w = w
        if w[0] > 0:
            return
        self.w = -w


def computing_init_calling_super(x):
    return ComputesWithSuper(x[:2]).extra  # REFUSED


def init_calling_a_method(x):
    return CallsAMethod(x).total  # REFUSED


def init_returning_early(x):
    return np.sum(ReturnsEarly(x).w)  # REFUSED


SUPPORTED = [model_with_a_default_and_len, polynomial_with_a_loop_and_a_branch, view_kept_then_its_array_written,
             inherited_computing_init, attribute_updated_in_init, dataclass_with_an_init_of_its_own_computing,
             normalised_in_a_loop]
