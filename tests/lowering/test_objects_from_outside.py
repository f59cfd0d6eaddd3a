"""Issue 33, objects not made inside the differentiated function, and objects read as containers by
their classes' ``__len__``, ``__iter__`` and ``__getitem__``: each against central differences in every
mode (grad, value_and_grad, vjp, jvp, the Hessian against differences of the gradient) and against the
Numba backend; the gradient by an object passed in is an object of its class holding the derivatives;
a module-level object's attributes are read as they are at the call (rebound or changed in place, the
next gradient follows); what cannot be followed is a TransformError at the user's line naming the class."""
from __future__ import annotations

import pathlib
import warnings

import numpy as np
import pytest

import outside_object_functions as oo
import s2s_ad
from conftest import assert_every_mode, assert_gradient_matches, assert_numba_gives_the_same_numbers

X = np.array([0.6, -1.1, 0.9])

CASES = [
    oo.module_level_calc,
    oo.module_level_arrays,
    oo.module_level_subclass,
    oo.bag_iterated,
    oo.items_by_index,
    oo.items_iterated_and_listed,
    oo.dataclass_iterated,
]


@pytest.mark.parametrize("f", CASES, ids=lambda f: f.__name__)
def test_every_mode_agrees_with_differences(f):
    assert_every_mode(f, X.copy())


@pytest.mark.parametrize("f", CASES, ids=lambda f: f.__name__)
def test_numba_gives_the_same_numbers(f):
    assert_numba_gives_the_same_numbers(f, X.copy())


def _passed(f, obj):
    return lambda x: f(x, obj)


@pytest.mark.parametrize("f, make", [
    (oo.calc_passed_in, lambda: oo.Calc(1.5)),
    (oo.calc_passed_in, lambda: oo.Calc(np.array([0.5, 2.0, -1.0]))),
    (oo.layer_passed_in, lambda: oo.Shifted(np.array([0.4, 0.9, -0.3]), 0.1, "tanh", [0.5, 1.5])),
    (oo.items_of_a_passed_object, lambda: oo.Items([np.array([1.0, 2.0, 3.0]), np.array([-0.5, 0.5, 0.25])])),
], ids=["number", "array", "subclass", "iterated"])
def test_an_object_passed_in_by_x_in_every_mode(f, make):
    obj = make()
    assert_every_mode(_passed(f, obj), X.copy())
    assert_gradient_matches(f, (X.copy(), obj), wrt=0)
    pytest.importorskip("numba")  # (the comparison of the two backends; CI's Numba job has it)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        numba = s2s_ad.grad(f, wrt=(0, 1), backend="numba")(X.copy(), obj)
    python = s2s_ad.grad(f, wrt=(0, 1))(X.copy(), obj)
    np.testing.assert_allclose(numba[0], python[0], rtol=1e-12)
    for key, value in vars(python[1]).items():
        if not isinstance(value, str):
            np.testing.assert_allclose(getattr(numba[1], key), value, rtol=1e-12)


def _difference(f, x, obj, name, h=1e-6, index=None):
    """The central difference of f(x, obj) by obj's attribute ``name`` (its item ``index``)."""
    def at(step):
        held = getattr(obj, name)
        moved = np.array(held, dtype=float) if index is not None else held + step
        if index is not None:
            moved[index] += step
            moved = list(moved) if isinstance(held, list) else moved
        setattr(obj, name, moved)
        try:
            return f(x, obj)
        finally:
            setattr(obj, name, held)
    return (at(h) - at(-h)) / (2 * h)


def test_the_gradient_by_an_object_is_an_object_of_its_class():
    calc = oo.Calc(1.5)
    d_x, d_calc = s2s_ad.grad(oo.calc_passed_in, wrt=(0, 1))(X.copy(), calc)
    assert type(d_calc) is oo.Calc
    np.testing.assert_allclose(d_x, 4.0 * 1.5 * X, rtol=1e-12)
    assert float(d_calc.k) == pytest.approx(_difference(oo.calc_passed_in, X, calc, "k"), rel=1e-7)
    value, d_only = s2s_ad.value_and_grad(oo.calc_passed_in, wrt=1)(X.copy(), calc)
    assert value == pytest.approx(oo.calc_passed_in(X, calc), rel=1e-12) and float(d_only.k) == float(d_calc.k)
    # jvp along a tangent object of the same class
    _, along = s2s_ad.jvp(oo.calc_passed_in, (X.copy(), calc), (np.zeros(3), oo.Calc(1.0)))
    assert along == pytest.approx(float(d_calc.k), rel=1e-12)


def test_the_gradient_by_an_object_holding_arrays_a_string_and_a_list():
    layer = oo.Shifted(np.array([0.4, 0.9, -0.3]), 0.1, "tanh", [0.5, 1.5])
    d_layer = s2s_ad.grad(oo.layer_passed_in, wrt=1)(X.copy(), layer)
    assert type(d_layer) is oo.Shifted and d_layer.name == "tanh"  # (structure, kept: as a dataclass's)
    numeric_w = [_difference(oo.layer_passed_in, X, layer, "w", index=i) for i in range(3)]
    np.testing.assert_allclose(d_layer.w, numeric_w, rtol=1e-6)
    assert float(d_layer.b) == pytest.approx(_difference(oo.layer_passed_in, X, layer, "b"), rel=1e-6)
    np.testing.assert_allclose(d_layer.taps, [_difference(oo.layer_passed_in, X, layer, "taps", index=i)
                                              for i in range(2)], rtol=1e-6)


def test_the_class_is_part_of_the_kind():
    gradient = s2s_ad.grad(oo.layer_passed_in)
    sine = oo.Shifted(np.ones(3), 0.1, "sin", [0.5, 1.5])
    tanh = oo.Shifted(np.ones(3), 0.1, "tanh", [0.5, 1.5])
    np.testing.assert_allclose(gradient(X, sine), s2s_ad.grad(_passed(oo.layer_passed_in, sine))(X), rtol=1e-12)
    np.testing.assert_allclose(gradient(X, tanh), s2s_ad.grad(_passed(oo.layer_passed_in, tanh))(X), rtol=1e-12)

    class Doubled(oo.Shifted):  # another class: other code, its own forward
        def forward(self, x):
            return 2.0 * oo.Shifted.forward(self, x)

    doubled = Doubled(np.ones(3), 0.1, "sin", [0.5, 1.5])
    np.testing.assert_allclose(gradient(X, doubled), 4.0 * gradient(X, sine), rtol=1e-12)
    assert "layer Shifted(w: 1-d array, b: number, name: 'sin'" in gradient.source_for(X, sine)


@pytest.mark.parametrize("backend", ["python", "numba"])
def test_a_module_level_object_rebound_or_changed_in_place_is_read_at_the_next_call(backend):
    if backend == "numba":
        pytest.importorskip("numba")
    gradient = s2s_ad.grad(oo.module_level_calc, backend=backend)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        arrays_gradient = s2s_ad.grad(oo.module_level_arrays, backend=backend)
    saved_k, saved_w, saved_offset = oo.CALC.k, oo.SETTINGS.w.copy(), oo.SETTINGS.offset
    try:
        np.testing.assert_allclose(gradient(X), 4.0 * 1.5 * X, rtol=1e-12)
        oo.CALC.k = 2.5  # an attribute rebound between two calls
        np.testing.assert_allclose(gradient(X), 4.0 * 2.5 * X, rtol=1e-12)
        oo.CALC.extra = 1.0  # an attribute added: the code is made again, the numbers the same
        np.testing.assert_allclose(gradient(X), 4.0 * 2.5 * X, rtol=1e-12)
        for step in ("in place", "rebound", "offset"):
            if step == "in place":
                oo.SETTINGS.w[1] = 3.0
            elif step == "rebound":
                oo.SETTINGS.w = np.array([1.0, 0.2, -0.7])
            else:
                oo.SETTINGS.offset = -0.5
            want = assert_gradient_matches(oo.module_level_arrays, (X.copy(),))
            np.testing.assert_allclose(arrays_gradient(X), want, rtol=1e-12)
    finally:
        oo.CALC.k = saved_k
        oo.__dict__["CALC"].__dict__.pop("extra", None)
        oo.SETTINGS.w, oo.SETTINGS.offset = saved_w, saved_offset


SOURCE = pathlib.Path(oo.__file__).read_text().splitlines()


@pytest.mark.parametrize("f, args, words", [
    (oo.generator_iter, (), "Generated.__iter__, a generator called by iteration: s2s_ad follows a generator __iter__ whose body "
                             "is yield, yield from, and for loops"),
    (oo.len_of_two_statements, (), "Counted.__len__, called by len(): s2s_ad follows such a method where its "
                                   "body is one return statement"),
    (oo.iterated_by_getitem_alone, (), "iteration of an object of the class OnlyGetitem: OnlyGetitem defines "
                                       "__getitem__"),
    (oo.slotted_passed_in, (oo.Slotted(2.0),), "the method .scaled() of slotted, an object of the class Slotted "
                                               "passed as an argument: Slotted defines __slots__"),
    (oo.setter_passed_in, (oo.WithSetter(2.0),), "the attribute .k of obj, an object of the class WithSetter passed "
                                                 "as an argument: WithSetter.k is a property with a setter"),
    (oo.module_level_slotted, (), "the module-level Slotted object SLOTTED: Slotted defines __slots__"),
], ids=lambda v: getattr(v, "__name__", None) or "")
def test_what_cannot_be_followed_is_refused_at_the_users_line(f, args, words):
    with pytest.raises(s2s_ad.TransformError, match=words.replace("(", r"\(").replace(")", r"\)")) as caught:
        s2s_ad.grad(f)(X.copy(), *args)
    assert caught.value.filename == oo.__file__
    assert "# REFUSED" in SOURCE[caught.value.line - 1], (caught.value.line, SOURCE[caught.value.line - 1])


def test_objects_that_cannot_be_read_are_still_passed_through_unread():
    # (as before issue 33: an object nobody reads is an unknown value)
    assert s2s_ad.grad(lambda x, s: np.sum(x * x))(X, oo.Slotted(2.0)) == pytest.approx(2 * X)
