"""An object of the user's class is never read as the dict of its attributes (issue 31, family 6):
iterated (``for item in obj``, ``list(obj)``, ``sorted(obj)``), measured (``len(obj)``) or indexed
(``obj["a"]``), it is read through the method Python would call where its class defines it
(``__iter__``, ``__len__``, ``__getitem__``: lowering/protocols.py), and refused before anything runs,
naming the line, where it defines none, with the TypeError Python raises.  The oracle: Python running the same
function.  Dicts, tuples and namedtuples are still read as Python reads them."""
import collections
import dataclasses
import inspect

import numpy as np
import pytest

import s2s_ad
from s2s_ad import TransformError


class Plain:
    def __init__(self, a, b):
        self.a = a
        self.b = b


class Sequence3:
    def __init__(self, a, b):
        self.a = a
        self.b = b

    def __iter__(self):
        return iter((self.b, self.a, self.b))

    def __len__(self):
        return 3

    def __getitem__(self, i):
        return (self.b, self.a, self.b)[i]


@dataclasses.dataclass
class Fields:
    a: float
    b: float


Named = collections.namedtuple("Named", "a b")


def iterated(cls):
    def f(x):
        o = cls(x, 2.0 * x)
        s = 0.0
        for item in o:
            s = s + item * item
        return s
    return f


def measured(cls):
    def f(x):
        o = cls(x, 2.0 * x)
        return len(o) * x
    return f


def listed(cls):
    def f(x):
        o = cls(x, 2.0 * x)
        return len(list(o)) * x
    return f


def indexed(cls):
    def f(x):
        o = cls(x, 2.0 * x)
        return o["a"] * x
    return f


def indexed_by_position(cls):
    def f(x):
        o = cls(x, 2.0 * x)
        return o[1] * x
    return f


READS = [iterated, measured, listed, indexed, indexed_by_position]


def python_outcome(f, x):
    """What Python does: the value, or the TypeError it raises."""
    try:
        return f(x)
    except TypeError as exc:
        return exc


@pytest.mark.parametrize("read", READS, ids=lambda r: r.__name__)
@pytest.mark.parametrize("cls", [Plain, Fields], ids=lambda c: c.__name__)
def test_an_object_read_as_a_container_is_refused_never_its_attributes(read, cls):
    f = read(cls)
    expected = python_outcome(f, 1.5)
    with pytest.raises(TransformError) as refused:
        s2s_ad.value_and_grad(f)(1.5)
    message = str(refused.value)
    line = inspect.getsourcelines(f)[1]
    assert f":{line + 1}" in message or f":{line + 2}" in message or f":{line + 3}" in message
    assert cls.__name__ in message
    # Python raises, finding no method: the refusal says so, in Python's words
    assert isinstance(expected, TypeError)
    assert f"Python raises TypeError: {expected}" in message


@pytest.mark.parametrize("read", READS, ids=lambda r: r.__name__)
def test_an_object_whose_class_defines_the_method_is_read_through_it(read):
    # Sequence3's __iter__, __len__ and __getitem__ are followed (lowering/protocols.py): never its
    # attributes; where Python raises (o["a"] indexes a tuple by a string), so does the code
    f = read(Sequence3)
    expected = python_outcome(f, 1.5)
    if isinstance(expected, TypeError):
        with pytest.raises((TypeError, TransformError)):
            s2s_ad.value_and_grad(f)(1.5)
        return
    value, gradient = s2s_ad.value_and_grad(f)(1.5)
    assert value == pytest.approx(expected, rel=1e-12)
    assert gradient == pytest.approx((f(1.5 + 1e-6) - f(1.5 - 1e-6)) / 2e-6, rel=1e-6)


def test_a_namedtuple_a_tuple_and_a_dict_are_still_read_as_python_reads_them():
    def f(x):
        n = Named(x, 2.0 * x)
        d = {"a": x, "b": 3.0 * x}
        s = 0.0
        for item in n:
            s = s + item * item
        for key in d:
            s = s + d[key]
        return s * len(n) + len(d) * n[1] + len(list(d)) * x

    value, gradient = s2s_ad.value_and_grad(f)(1.5)
    assert value == pytest.approx(f(1.5))
    assert gradient == pytest.approx((f(1.5 + 1e-6) - f(1.5 - 1e-6)) / 2e-6, rel=1e-6)
