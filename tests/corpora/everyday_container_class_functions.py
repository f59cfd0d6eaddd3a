"""Issue 22, refused or crashing before: objects of the user's own classes made inside the
function (methods inlined, operators dispatched to the class's dunder methods), tuple()/list() of
a container of known length, sorted() over a module dict, isinstance decided from the known
structure, in-place updates of the rows of a matrix in a for loop, loops over a list of arrays of
different shapes, and a tuple auxiliary value joined at an if."""
from __future__ import annotations

import numpy as np


class Model:
    """A plain class: __init__ assigns its arguments."""

    def __init__(self, w, scale=2.0):
        self.w = w
        self.scale = scale

    def predict(self, x):
        return np.tanh(self.w * x) * self.scale

    def loss(self, x):
        return np.sum(self.predict(x) ** 2)


class Vector:
    SHRINK = 0.5  # a constant of the class, read through self

    def __init__(self, a):
        self.a = a

    def shrunk(self):
        return Vector(self.a * self.SHRINK)

    def __add__(self, other):
        return Vector(self.a + other.a)

    def __mul__(self, s):
        return Vector(self.a * s)

    def __rmul__(self, s):
        return Vector(s * self.a)

    def __neg__(self):
        return Vector(-self.a)

    def norm2(self):
        return np.sum(self.a ** 2)


class Computed:
    def __init__(self, a):
        self.a = np.sin(a)


class WithProperty:
    def __init__(self, a):
        self.a = a

    @property
    def double(self):
        return self.a * 2


class Slotted:
    __slots__ = ("a",)

    def __init__(self, a):
        self.a = a


class Lookup:
    def __init__(self, a):
        self.a = a

    def __getattr__(self, name):
        return self.a


class MaybeAdds:
    def __init__(self, a):
        self.a = a

    def __add__(self, other):
        if not isinstance(other, MaybeAdds):
            return NotImplemented
        return MaybeAdds(self.a + other.a)


def model_made_inside(w, x):
    m = Model(w)
    return m.loss(x)


def model_made_inside_with_keywords(w, x):
    m = Model(scale=0.5, w=np.cos(w))
    return m.loss(x) + m.scale * np.sum(m.w)


def vector_arithmetic(x):
    v = Vector(x) + 2.0 * Vector(np.sin(x)) * 3.0 + (-Vector(x * x))
    return v.norm2()


def object_through_a_loop_and_an_if(x, flag):
    v = Vector(x)
    for i in range(3):
        v = v * 2.0 + Vector(np.sin(x)).shrunk()
    if flag > 0:
        v = -v
    return v.norm2()


def object_returned(x):
    return Vector(x * 2).shrunk()


def object_sets_an_attribute_later(x):
    m = Model(x)
    m.w = x * 3  # (m made here, held by m alone: m bound to the object with w replaced)
    return m.loss(x)


def object_computed_in_init(x):
    return np.sum(Computed(x).a)  # (its __init__ computes: read as a function)


def object_with_a_property(x):
    return np.sum(WithProperty(x).double)


def object_with_slots(x):
    return np.sum(Slotted(x).a)  # REFUSED: __slots__


def object_with_getattr(x):
    return np.sum(Lookup(x).a)  # REFUSED: __getattr__


def operator_that_may_not_apply(x):
    return np.sum((MaybeAdds(x) + MaybeAdds(x)).a)  # REFUSED: NotImplemented


def tuple_and_list_of_known_length(x):
    t = tuple([x, 2 * x])
    l = list((x, np.sin(x)))
    return np.sum(t[1] * l[1]) + np.sum(l[0])


WEIGHTS = {"b": 2.0, "a": 1.0}


def sorted_over_a_module_dict(x):
    s = 0.0
    for k in sorted(WEIGHTS):
        s = s + WEIGHTS[k] * np.sum(x ** len(k + k))
    return s


def iterates_a_module_dict(x):
    s = 0.0
    for k in WEIGHTS:
        s = s * 0.5 + WEIGHTS[k] * np.sum(np.sin(x))
    return s


def isinstance_of_a_known_structure(x):
    ys = [x, x * 2]
    if isinstance(ys, list) and not isinstance(ys, (dict, tuple)) and isinstance(Vector(x), Vector):
        return np.sum(ys[1] ** 2)
    return np.sum(x)


W1 = np.linspace(-1.0, 1.0, 9).reshape(3, 3)
B1 = np.array([0.1, -0.2, 0.3])
W2 = np.array([[0.5, -0.4, 0.3]])
B2 = np.array([0.05])


def layers_of_different_shapes(x):
    layers = [(W1 * x[0], B1), (W2, B2 * x[1])]
    h = x
    for W, b in layers:
        h = np.tanh(W @ h + b)
    return np.sum(h)


def sum_over_a_generator_of_different_shapes(x):
    A = np.outer(x, x)
    B = x * 3
    return sum(np.sum(w ** 2) for w in [A, B])


def loop_over_a_display_that_stops_early(x):
    s = 0.0
    for w in [x, 2 * x, 3 * x]:
        s = s + np.sum(w ** 2)
        if s > 10.0:
            break
    return s


def aux_tuple_from_both_arms(x, flag):
    h = np.sin(x)
    if flag > 0:
        return np.sum(h ** 2), (h, 1.0)
    return np.sum(h * 2), (h[:2], 2.0)


def aux_of_another_structure_on_one_arm(x, flag):
    h = np.sin(x)
    if flag > 0:
        return np.sum(h ** 2), (h, 1.0)
    return np.sum(h * 2), (h, (h, 2.0))  # REFUSED: a container of another structure


def rows_updated_in_place(B):
    B = B.copy()
    for row in B:
        row *= 2
    return np.sum(B ** 2)


def rows_updated_with_enumerate(B):
    B = B * 1.0
    for i, row in enumerate(B):
        row += i * B[0]
        row *= np.sin(row)
    return np.sum(B ** 2) + np.sum(row)


def _layers_of(x):
    layers = [(x, x * 2), (x * 3, np.sin(x))]
    return layers


def calls_a_helper_returning_a_list_of_tuples(x):
    ls = _layers_of(x)
    return np.sum(ls[0][1] * ls[1][1]) + np.sum(ls[1][0])
