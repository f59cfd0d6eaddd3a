"""Argument kinds are typed objects from the argument to the generated header (``arguments.kinds_of``).

One test per shape of kind: a number, a truth value, arrays whose lengths repeat, a string or None
(a constant the code is specialised on), a container, an object read as ``self``.  Each kind is
hashable (it keys the caches), and the header of the generated code names it as before.
"""
from __future__ import annotations

import argparse
import collections
import os
import re

import numpy as np

import s2s_ad
from s2s_ad.core import arguments
from s2s_ad.core import containers
from s2s_ad.core.kinds import NUMBER, TRUTH, UNKNOWN, Array, Constant, Kind, Opaque, Unknown, argument_text

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def _two(x, y):
    return x * y


def test_numbers_are_number_kinds():
    kinds = arguments.kinds_of(_two, (1.5, np.float32(2.0)))
    assert kinds == (NUMBER, NUMBER) and all(type(k) is type(NUMBER) for k in kinds)
    assert arguments.kinds_of(_two, (3, 2.0)) == (NUMBER, NUMBER)  # an int is a number too
    assert hash(kinds) == hash((NUMBER, NUMBER))


def test_bools_are_truth_values():
    assert arguments.kinds_of(_two, (True, np.True_)) == (TRUTH, TRUTH)
    assert TRUTH != NUMBER and TRUTH.truth and not NUMBER.truth
    assert argument_text(TRUTH) == "truth value" and argument_text(NUMBER) == "number"


def test_arrays_name_their_lengths_equal_lengths_alike():
    x, w, b = np.ones((64, 20)), np.ones((20, 30)), np.ones((1, 30))
    kinds = arguments.kinds_of(lambda x, w, b: x, (x, w, b))
    assert kinds == (Array(2, ("a", "b")), Array(2, ("b", "c")), Array(2, (1, "c")))
    # the pattern, not the lengths: other lengths in the same pattern give equal kinds (one cache entry)
    again = arguments.kinds_of(lambda x, w, b: x, (np.ones((3, 5)), np.ones((5, 7)), np.ones((1, 7))))
    assert again == kinds and hash(again) == hash(kinds)
    assert arguments.kinds_of(_two, (np.float64(1.0), np.ones(()))) == (NUMBER, Array(0))
    assert str(kinds[0]) == "array of shape (a, b)" and argument_text(Array(1, ("a",))) == "array of shape (a,)"
    assert argument_text(Array(0)) == "0-d array"


def test_strings_and_none_are_constants_specialised_on_their_value():
    kinds = arguments.kinds_of(_two, ("l2", None))
    assert kinds == (Constant("l2"), Constant(None))
    assert kinds != arguments.kinds_of(_two, ("l1", None))  # the value is part of the kind
    assert str(Constant("l2")) == "'l2'" and argument_text(Constant(None)) == "None"


def test_a_container_is_its_tree_with_typed_leaves():
    params = {"w": np.ones((3, 4)), "b": np.ones(4), "scale": 2.0, "name": "l2"}
    (kind,) = arguments.kinds_of(lambda p: p, (params,))
    assert isinstance(kind, containers.Tree) and kind.kind == "dict"
    assert containers.labels(kind) == [Array(2), Array(1), NUMBER]  # (a leaf's lengths are not named)
    assert containers.Static("l2") in kind.children  # a string in a container is structure
    hash(kind)
    Pair = collections.namedtuple("Pair", "x y")
    (pair,) = arguments.kinds_of(lambda p: p, (Pair(1.0, True),))
    assert containers.labels(pair) == [NUMBER] and containers.Static(True) in pair.children


class _Model:
    def __init__(self) -> None:
        self.w = np.ones(3)
        self.bias = 0.5

    def loss(self, x):
        return np.sum(self.w * x) + self.bias


class _Slotted:
    __slots__ = ("w",)

    def __init__(self) -> None:
        self.w = np.ones(3)


def test_objects_of_your_classes_are_read_by_their_attributes_others_are_unknown():
    model = _Model()
    kinds = arguments.kinds_of(_Model.loss, (model, np.ones(3)))
    assert isinstance(kinds[0], containers.Tree) and kinds[0].kind == "object"
    assert containers.labels(kinds[0]) == [Array(1), NUMBER] and kinds[1] == Array(1, ("a",))
    # (issue 33) not fn's self, passed in: read by its attributes too, its class part of the kind
    (passed, number) = arguments.kinds_of(_two, (model, 1.0))
    assert passed == kinds[0] and passed.cls is _Model and number == NUMBER
    # what cannot be read so is unknown, as any other object, and says why where it is read
    (slotted, _) = arguments.kinds_of(_two, (_Slotted(), 1.0))
    assert isinstance(slotted, Opaque) and slotted.cls is _Slotted and "__slots__" in slotted.reason
    assert isinstance(slotted, Unknown) and argument_text(slotted) == "any"
    assert arguments.kinds_of(_two, (argparse.Namespace(w=1.0), 1.0))[0] == UNKNOWN  # (a library's class)
    assert argument_text(UNKNOWN) == "any"
    assert np.allclose(s2s_ad.grad(model.loss)(np.full(3, 2.0)), model.w)


def test_the_header_names_the_kinds_as_before():
    source = s2s_ad.grad(_two).source_for(np.ones((2, 3)), True)
    assert "# Specialised for: x array of shape (a, b), y truth value." in source
    assert "# (Axes named alike have equal lengths, whatever they are.)" in source
    assert "# Specialised for: x number, y 'l2'." in s2s_ad.source(lambda x, y: x * 2.0, args=(1.0, "l2"))


def test_every_kind_is_a_kind_object():
    for kind in (NUMBER, TRUTH, UNKNOWN, Array(2, ("a", 1)), Constant("l2")):
        assert isinstance(kind, Kind)
        hash(kind)


def test_no_string_encoding_of_kinds_is_left_in_the_package():
    # the encodings that were: "scalar", "bool", "array2", "array2:a,b", "const:'l2'" (words in messages are fine)
    pattern = re.compile(r'"array\d|"array<|startswith\("array|== "scalar"|== "bool"|from_string|to_string|"const:')
    found = []
    for folder, _, files in os.walk(os.path.join(ROOT, "s2s_ad")):
        for name in files:
            if name.endswith(".py"):
                path = os.path.join(folder, name)
                with open(path, encoding="utf-8") as f:
                    found += [f"{path}:{n}" for n, line in enumerate(f, 1) if pattern.search(line)]
    assert not found, found
