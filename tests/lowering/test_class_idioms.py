"""Issue 33, objects as people write them (the idioms): properties, ``__call__``, classmethods and
staticmethods through ``cls``, and a function a call returns called where it is returned.  Each
against central differences in every mode (grad, value_and_grad, vjp, jvp, the Hessian against
differences of the gradient) and against the Numba backend; what Python itself would not run, or
s2s_ad cannot read, is a TransformError at the user's line."""
from __future__ import annotations

import pathlib

import numpy as np
import pytest

import class_idiom_functions as ci
import everyday_container_class_functions as cc
import s2s_ad
from conftest import assert_every_mode, assert_numba_gives_the_same_numbers

X = np.array([0.6, -1.1, 0.9])

CASES = [
    ci.property_of_an_object,
    ci.property_reading_a_property,
    ci.object_called,
    ci.method_calling_the_object,
    ci.overridden_property_read_by_a_base_method,
    ci.classmethod_on_the_class,
    ci.classmethod_through_cls,
    ci.classmethod_of_a_subclass,
    ci.classmethod_on_an_object,
    ci.staticmethod_through_cls,
    ci.property_of_a_dataclass,
    ci.property_of_a_namedtuple,
    ci.closure_called_where_it_is_made,
    ci.partial_called_where_it_is_made,
    ci.closure_made_in_a_loop,
    cc.object_with_a_property,
    ci.operators_asking_isinstance,
    ci.classmethod_result_read_directly,
]


@pytest.mark.parametrize("f", CASES, ids=lambda f: f.__name__)
def test_every_mode_agrees_with_differences(f):
    assert_every_mode(f, X.copy())


@pytest.mark.parametrize("f", CASES, ids=lambda f: f.__name__)
def test_numba_gives_the_same_numbers(f):
    assert_numba_gives_the_same_numbers(f, X.copy())


def test_the_subclass_property_is_the_one_python_reads():
    # Scaled.scale is 3 w, Layer's 2 w: the gradient by w tells which one ran
    grad = s2s_ad.grad(ci.classmethod_of_a_subclass)(X.copy())
    assert ci.classmethod_of_a_subclass(X) == pytest.approx(np.sum(np.tanh(3.0 * X[0] * X + X[1])))
    again = s2s_ad.grad(ci.classmethod_on_the_class)(X.copy())
    assert not np.allclose(grad, again)


def test_a_factory_called_where_it_returns_is_inlined_like_a_named_one():
    text = s2s_ad.source(ci.closure_called_where_it_is_made)
    assert "make_act" not in text.split("def d_")[1] and "np.where(gt_x, x, prod)" in text


SOURCE = pathlib.Path(ci.__file__).read_text().splitlines()


@pytest.mark.parametrize("f, words", [
    (ci.property_with_a_setter, "WithSetter.a is a property with a setter or deleter"),
    (ci.init_assigning_its_property, r"AssignsItsProperty.__init__ assigns self.doubled, a property with no "
                                     r"setter \(Python raises AttributeError\)"),
], ids=lambda v: getattr(v, "__name__", None) or "")
def test_what_python_would_not_run_or_s2s_ad_cannot_read_is_refused(f, words):
    with pytest.raises(s2s_ad.TransformError, match=words) as caught:
        s2s_ad.grad(f)(X.copy())
    assert "# REFUSED" in SOURCE[caught.value.line - 1], (caught.value.line, SOURCE[caught.value.line - 1])


def test_python_itself_cannot_make_an_object_assigning_its_read_only_property():
    with pytest.raises(AttributeError):
        ci.init_assigning_its_property(X.copy())
