"""Issue 33, round 7 (tests/corpora/object_round7_functions.py): two objects of the user's class
combined by an operator whose method takes another object of the class (isinstance inside deciding),
a dataclass's operators, sum() of objects, sorted() of objects by a field, and objects unpacked,
listed and iterated through their class's __iter__ (a generator of yields, yield from and loops over
known containers too).  Each in every mode on the Python backend against central differences (grad,
jvp, value_and_grad, vjp, the Hessian against differences of the gradient and of the function), on
the Numba backend grad, jvp and the Hessian against differences of the function itself; what stays
refused is a TransformError at the line the refusal names, before anything runs."""
from __future__ import annotations

import pathlib

import numpy as np
import pytest

import object_round7_functions as orf
import s2s_ad
from conftest import assert_every_mode, numeric_grad, second_differences, assert_numba_agrees_with_differences

X = np.array([0.6, -1.1, 0.9])

CASES = [
    orf.vec_times_vec,
    orf.vec_add_decided_by_isinstance,
    orf.matrix_times_vectors,
    orf.products_in_a_loop,
    orf.subclass_on_the_right,
    orf.dataclass_operators,
    orf.sum_of_objects,
    orf.sorted_by_a_field,
    orf.sorted_namedtuples,
    orf.unpacked_objects,
    orf.listed_and_iterated,
    orf.sorted_members_of_an_iterable_object,
    orf.module_level_callable_objects,
]


@pytest.mark.parametrize("f", CASES, ids=lambda f: f.__name__)
def test_every_mode_agrees_with_differences(f):
    assert_every_mode(f, X.copy())
    np.testing.assert_allclose(s2s_ad.hessian(f)(X.copy()), second_differences(f, X.copy()), rtol=1e-4,
                               atol=1e-5)


@pytest.mark.parametrize("f", CASES, ids=lambda f: f.__name__)
def test_numba_backend_grad_jvp_and_hessian_agree_with_differences(f):
    assert_numba_agrees_with_differences(f, X.copy())


def test_operators_follow_the_methods_python_calls():
    # Vec(x) * Vec(x + 1): d/dx sum(x * (x + 1)) = 2x + 1; Scaled on the right: its __rmul__ (2 v w)
    np.testing.assert_allclose(s2s_ad.grad(orf.vec_times_vec)(X.copy()), 2 * X + 1, rtol=1e-12)
    s = np.sin(X)
    want = 2 * (s + X * np.cos(X)) + 2 * X  # sum(2 x sin x) + sum(x * x)
    np.testing.assert_allclose(s2s_ad.grad(orf.subclass_on_the_right)(X.copy()), want, rtol=1e-12)
    # sum([a, b, c]) is ((0 + a) + b) + c: __radd__ then the non-commutative __add__
    value = s2s_ad.value_and_grad(orf.sum_of_objects)(X.copy())[0]
    assert value == pytest.approx(orf.sum_of_objects(X.copy()), rel=1e-14)


def test_a_module_level_object_changed_makes_the_code_again():
    gradient = s2s_ad.grad(orf.module_level_callable_objects)
    before = gradient(X.copy())
    saved = orf.LAYERS[0].w
    try:
        orf.LAYERS[0].w = -0.7  # read as it is now: the next call transforms again
        np.testing.assert_allclose(gradient(X.copy()), numeric_grad(orf.module_level_callable_objects, (X.copy(),), 0),
                                   rtol=1e-6, atol=1e-7)
        assert not np.allclose(gradient(X.copy()), before)
    finally:
        orf.LAYERS[0].w = saved


def test_sorted_objects_are_in_pythons_order():
    for f in (orf.sorted_by_a_field, orf.sorted_namedtuples, orf.sorted_members_of_an_iterable_object):
        value, _ = s2s_ad.value_and_grad(f)(X.copy())
        assert value == pytest.approx(f(X.copy()), rel=1e-14), f.__name__
    # sorted by w = 3, 1, 2: s = [2x, cos x, x]; reversed r = [x, cos x, 2x]
    xs = X
    want = 2.0 + 2 * -np.sin(xs) + 3.0 + np.sin(2 * xs) + xs * 2 * np.cos(2 * xs)
    np.testing.assert_allclose(s2s_ad.grad(orf.sorted_by_a_field)(X.copy()), want, rtol=1e-12)


SOURCE = pathlib.Path(orf.__file__).read_text().splitlines()


@pytest.mark.parametrize("f, words", [
    (orf.sorted_by_a_field_computed_at_run_time, "sorted() of a list whose order depends on values computed at "
                                                 "run time"),
    (orf.sorted_objects_themselves, "the order would compare or compute with Weighted objects themselves, which "
                                    "runs their class's code; sort by a field (key=lambda o: o.w)"),
    (orf.sorted_by_a_property, "the key function reads .area of a WithArea, which is not one of its data fields "
                               "(w, v)"),
    (orf.generator_with_an_if, "Conditional.__iter__, a generator called by iteration: s2s_ad follows a generator "
                               "__iter__ whose body is yield, yield from, and for loops"),
    (orf.generator_over_an_array_unpacked, "OverArray.__iter__, a generator called by iteration: its loop or "
                                           "yield from walks a value whose items are not known while transforming"),
    (orf.sum_without_radd, "sum() of NoReflected objects: sum starts at 0, and 0 + a NoReflected needs "
                           "NoReflected.__radd__"),
    (orf.unpacking_too_many, "an unpacking of a container: 2 items of a Pair (its __iter__'s) into 3 names"),
    (orf.calling_an_object_without_call, "a call of a NotCallable object: NotCallable defines no __call__"),
], ids=lambda v: getattr(v, "__name__", None) or "")
def test_what_cannot_be_followed_is_refused_at_the_line_before_running(f, words):
    with pytest.raises(s2s_ad.TransformError) as caught:
        s2s_ad.grad(f)(X.copy())
    assert words in str(caught.value), str(caught.value)
    assert caught.value.filename == orf.__file__
    assert "# REFUSED" in SOURCE[caught.value.line - 1], (caught.value.line, SOURCE[caught.value.line - 1])
