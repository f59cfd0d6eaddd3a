"""Issue 33, round 7: objects of the user's classes combined by operators whose methods take another
object of the class, sorted by a key reading a field, iterated, listed and unpacked through the
class's __iter__ (a generator too).  Each function takes one vector; tests/programs/test_objects_round7.py
differentiates them.  A line marked ``# REFUSED`` is where the refusal of the function above it points."""
from __future__ import annotations

import operator
from collections import namedtuple
from dataclasses import dataclass

import numpy as np


class Vec:
    def __init__(self, v):
        self.v = v

    def __mul__(self, other):
        return Vec(self.v * other.v)

    def __add__(self, other):
        if isinstance(other, Vec):
            return Vec(self.v + other.v)
        return Vec(self.v + other)

    __radd__ = __add__

    def __sub__(self, other):
        if not isinstance(other, Vec):
            return Vec(self.v - other)
        return Vec(self.v - other.v)

    def __rsub__(self, other):
        return Vec(other - self.v)

    def __matmul__(self, other):
        return self.v @ other.v

    def norm2(self):
        return np.sum(self.v * self.v)


class Mat:
    def __init__(self, m):
        self.m = m

    def __matmul__(self, other):
        if isinstance(other, Mat):
            return Mat(self.m @ other.m)
        return Vec(self.m @ other.v)


class Scaled(Vec):
    """A subclass defining the reflected method: Python calls it first when it is the right operand."""

    def __rmul__(self, other):
        return Scaled(2.0 * self.v * other.v)


def vec_times_vec(x):
    return np.sum((Vec(x) * Vec(x + 1.0)).v)


def vec_add_decided_by_isinstance(x):
    a, b = Vec(x), Vec(np.sin(x))
    c = a + b + 1.5  # Vec + Vec, then Vec + a number: isinstance decided while transforming
    d = 2.0 + c - a  # number + Vec: __radd__, then Vec - Vec
    e = 1.0 - (d - 0.5)  # Vec - number, number - Vec: __rsub__
    return e.norm2() + c @ d


def matrix_times_vectors(x):
    m = Mat(np.outer(x, np.cos(x)) + np.eye(3))
    mm = m @ m  # Mat @ Mat
    y = mm @ Vec(x)  # Mat @ Vec: a Vec
    return y @ Vec(np.exp(0.3 * x))


def products_in_a_loop(x):
    vs = [Vec(x), Vec(x * 2.0), Vec(x + 1.0)]
    acc = vs[0]
    for v in vs[1:]:
        acc = acc * v - 0.1
    return acc.norm2()


def subclass_on_the_right(x):
    return np.sum((Vec(x) * Scaled(np.sin(x))).v) + np.sum((Scaled(x) * Vec(x)).v)


@dataclass
class Interval:
    lo: np.ndarray
    hi: np.ndarray

    def __add__(self, other):
        return Interval(self.lo + other.lo, self.hi + other.hi)

    def __mul__(self, other):
        return Interval(self.lo * other.lo, self.hi * other.hi)

    def width(self):
        return np.sum(self.hi - self.lo)


def dataclass_operators(x):
    a = Interval(x, x * x + 2.0)
    b = Interval(np.sin(x), np.cos(x) + 3.0)
    return (a * b + a).width()


class Acc:
    def __init__(self, v):
        self.v = v

    def __add__(self, other):
        return Acc(self.v + 2.0 * other.v)  # not commutative: the order of the additions matters

    def __radd__(self, other):
        return Acc(self.v + other)


def sum_of_objects(x):
    s = sum([Acc(x), Acc(np.sin(x)), Acc(x * x)])  # 0 + a: a.__radd__(0), then __add__
    t = sum((Acc(x), Acc(np.cos(x))), Acc(x * 3.0))
    return np.sum(s.v * t.v)


class Weighted:
    def __init__(self, w, v):
        self.w = w
        self.v = v


BY_WEIGHT = operator.attrgetter("w")
Item = namedtuple("Item", "w v")


def sorted_by_a_field(x):
    objs = [Weighted(3.0, x), Weighted(1.0, x * 2.0), Weighted(2.0, np.cos(x))]
    s = sorted(objs, key=lambda o: o.w)
    r = sorted(objs, key=BY_WEIGHT, reverse=True)
    return np.sum(s[0].v * 1.0 + s[1].v * 2.0 + s[2].v * 3.0) + np.sum(r[0].v * np.sin(r[2].v))


def sorted_namedtuples(x):
    items = [Item(3.0, x), Item(1.0, x * 2.0), Item(2.0, np.cos(x))]
    s = sorted(items, key=lambda o: -o.w)
    t = sorted(items)  # as tuples: by w first
    return np.sum(s[0].v * 1.0 + s[1].v * 2.0) + np.sum(t[0][1] * t[2].v)


class Pair:
    def __init__(self, a, b):
        self.a = a
        self.b = b

    def __iter__(self):
        return iter((self.a, self.b))


class Generated:
    def __init__(self, a, b):
        self.a = a
        self.b = b

    def __iter__(self):
        yield self.a
        yield self.b


class Stack:
    def __init__(self, layers, bias):
        self.layers = layers
        self.bias = bias

    def __iter__(self):
        """The layers, then the bias and twice the bias."""
        for layer in self.layers:
            yield layer
        yield from (self.bias, 2.0 * self.bias)


def unpacked_objects(x):
    a, b = Pair(x, x * 2.0)
    c, d = Generated(np.sin(x), a + b)
    return np.sum(a * b) + np.sum(c * d)


def listed_and_iterated(x):
    st = Stack([x, np.sin(x)], x * x)
    total = 0.0
    for part in st:
        total = total + np.sum(part)
    first, second, third, fourth = st
    parts = list(Generated(x, np.exp(0.2 * x)))
    return total + np.sum(first * fourth) + len(list(st)) * np.sum(third) + np.sum(parts[0] * parts[1] * second)


class Team:
    def __init__(self, members):
        self.members = members

    def __iter__(self):
        yield from self.members


def sorted_members_of_an_iterable_object(x):
    team = Team([Weighted(2.0, x), Weighted(-1.0, np.tanh(x)), Weighted(5.0, x * x)])
    ranked = sorted(team, key=lambda m: m.w)
    best, middle, last = ranked
    return np.sum(best.v * last.v) + np.sum(middle.v)


class Layer:
    def __init__(self, w, b=0.0):
        self.w = w
        self.b = b

    def __call__(self, x):
        return np.tanh(self.w * x + self.b)


LAYERS = [Layer(0.5), Layer(2.0, -0.3)]
NAMED = {"first": Layer(1.2), "last": Layer(0.8, 0.1)}
ONE = Layer(1.5)


def module_level_callable_objects(x):
    h = x
    for layer in LAYERS:  # a module-level list of objects of your class, each called: its __call__
        h = layer(h)
    return np.sum(h) + np.sum(ONE(x)) + np.sum(LAYERS[1](x) * NAMED["last"](h)) + np.sum(NAMED["first"](x))


# -- refused ------------------------------------------------------------------------------------


def sorted_by_a_field_computed_at_run_time(x):
    objs = [Weighted(x[0], x), Weighted(1.0, x * 2.0)]
    s = sorted(objs, key=lambda o: o.w)  # REFUSED
    return np.sum(s[0].v)


def sorted_objects_themselves(x):
    objs = [Weighted(3.0, x), Weighted(1.0, x * 2.0)]
    s = sorted(objs)  # REFUSED
    return np.sum(s[0].v)


class WithArea(Weighted):
    @property
    def area(self):
        return self.w * self.w


def sorted_by_a_property(x):
    objs = [WithArea(3.0, x), WithArea(1.0, x * 2.0)]
    s = sorted(objs, key=lambda o: o.area)  # REFUSED
    return np.sum(s[0].v)


class Conditional:
    def __init__(self, a, b):
        self.a = a
        self.b = b

    def __iter__(self):
        yield self.a
        if self.b is not None:  # REFUSED
            yield self.b


def generator_with_an_if(x):
    a, b = Conditional(x, x)
    return np.sum(a * b)


class OverArray:
    def __init__(self, v):
        self.v = v

    def __iter__(self):
        for t in self.v:  # REFUSED
            yield t


def generator_over_an_array_unpacked(x):
    a, b, c = OverArray(x)
    return a * b * c


class NoReflected:
    def __init__(self, v):
        self.v = v

    def __add__(self, other):
        return NoReflected(self.v + other.v)


def sum_without_radd(x):
    s = sum([NoReflected(x), NoReflected(x * 2.0)])  # REFUSED
    return np.sum(s.v)


def unpacking_too_many(x):
    a, b, c = Pair(x, x)  # REFUSED
    return np.sum(a * b * c)


class NotCallable:
    def __init__(self):
        self.w = 2.0


NOT_CALLABLE = NotCallable()


def calling_an_object_without_call(x):
    return np.sum(NOT_CALLABLE(x))  # REFUSED
