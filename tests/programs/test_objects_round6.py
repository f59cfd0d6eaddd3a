"""Issue 33, objects as a user writes them (tests/corpora/object_round6_functions.py): len() and
iteration of an object whose __init__ computes its array, a lambda as a default, a message joined
from a generator, attribute stores into an object the function made, and ten small object-oriented
functions.  Each in every mode on the Python backend against central differences (grad, jvp,
value_and_grad, vjp, the Hessian against differences of the gradient), and on the Numba backend
grad, jvp and the Hessian against differences of the function itself; what stays refused is a
TransformError at the user's line, before anything runs."""
from __future__ import annotations

import pathlib

import numpy as np
import pytest

import object_round6_functions as orf
import s2s_ad
from conftest import assert_every_mode, numeric_grad, second_differences, assert_numba_agrees_with_differences

X = np.array([0.6, -1.1, 0.9])

CASES = [
    orf.polynomial_len_and_call,
    orf.polynomial_iterated,
    orf.polynomial_enumerated,
    orf.lambda_default,
    orf.helper_lambda_default,
    orf.printing_a_joined_generator,
    orf.inheritance_two_levels,
    orf.property_used_in_a_method,
    orf.staticmethod_helper,
    orf.callables_in_a_list,
    orf.dataclass_updated_in_a_loop,
    orf.methods_calling_methods,
    orf.class_without_init,
    orf.operators_with_numbers_on_both_sides,
    orf.overridden_forward_through_call,
    orf.attribute_store_then_method,
    orf.attribute_store_augmented,
    orf.attributes_added_to_an_object_without_init,
    orf.class_attribute_shadowed_by_a_store,
    orf.method_changing_its_object,
]


@pytest.mark.parametrize("f", CASES, ids=lambda f: f.__name__)
def test_every_mode_agrees_with_differences(f):
    assert_every_mode(f, X.copy())


@pytest.mark.parametrize("f", CASES, ids=lambda f: f.__name__)
def test_numba_backend_grad_jvp_and_hessian_agree_with_differences(f):
    assert_numba_agrees_with_differences(f, X.copy())


def test_python_hessians_agree_with_second_differences_of_the_function():
    for f in CASES:
        hessian = s2s_ad.hessian(f)(X.copy())
        np.testing.assert_allclose(hessian, second_differences(f, X.copy()), rtol=1e-4, atol=1e-5,
                                   err_msg=f.__name__)


def test_len_and_iteration_follow_the_computed_array():
    # 2 w highest power first at t = 1.5, times len 3: d/dw = 3 * 2 * (2.25, 1.5, 1)
    np.testing.assert_allclose(s2s_ad.grad(orf.polynomial_len_and_call)(X.copy()), [13.5, 9.0, 6.0])
    assert orf.polynomial_len_and_call(X) == pytest.approx(3 * np.polyval(2.0 * X, 1.5))


def test_a_printed_message_is_printed_and_carries_no_derivative(capsys):
    gradient = s2s_ad.grad(orf.printing_a_joined_generator)(X.copy())
    printed = capsys.readouterr().out.splitlines()
    assert printed[0] == ", ".join(f"{v:.3f}" for v in np.exp(0.5 * X))
    assert printed[1] == "; ".join(str(v) for v in X) + " 3"
    y = np.exp(0.5 * X)
    np.testing.assert_allclose(gradient, y + 0.5 * y * X, rtol=1e-12)


def test_an_attribute_store_reads_the_new_value_in_a_loop():
    # the dataclass's two arrays carried through the loop: the same numbers as Python's own run
    value, _ = s2s_ad.value_and_grad(orf.dataclass_updated_in_a_loop)(X.copy())
    assert value == pytest.approx(orf.dataclass_updated_in_a_loop(X.copy()), rel=1e-14)
    negative = X.copy()
    negative[2] = -0.5  # the other branch of attribute_store_then_method: shape.ratio unchanged
    np.testing.assert_allclose(s2s_ad.grad(orf.attribute_store_then_method)(negative),
                               numeric_grad(orf.attribute_store_then_method, (negative,), 0), rtol=1e-6)


SOURCE = pathlib.Path(orf.__file__).read_text().splitlines()


@pytest.mark.parametrize("f, words", [
    (orf.attribute_store_through_another_name, "shape is used otherwise than by its attributes (line"),
    (orf.attribute_store_into_what_a_function_made, "the object was not made here by calling its class"),
    (orf.attribute_store_into_a_module_object, "the object was not made here by calling its class"),
    (orf.attribute_store_after_a_method_handing_the_object_on, "Handle.itself uses its object otherwise than by "
                                                               "its attributes"),
], ids=lambda v: getattr(v, "__name__", None) or "")
def test_what_cannot_be_followed_is_refused_at_the_users_line_before_running(f, words, capsys):
    with pytest.raises(s2s_ad.TransformError) as caught:
        s2s_ad.grad(f)(X.copy())
    assert words in str(caught.value), str(caught.value)
    assert caught.value.filename == orf.__file__
    assert "# REFUSED" in SOURCE[caught.value.line - 1], (caught.value.line, SOURCE[caught.value.line - 1])
    assert orf.SHARED.size == 2.0  # nothing ran: the module's object is as it was


def test_a_frozen_dataclass_or_a_class_with_a_property_is_not_changed_by_a_store(tmp_path, monkeypatch):
    script = tmp_path / "frozen_store.py"
    script.write_text(
        "from dataclasses import dataclass\n\n\n@dataclass(frozen=True)\nclass P:\n    w: float\n\n\n"
        "class Q:\n    def __init__(self, w):\n        self.w = w\n\n    @property\n    def me(self):\n"
        "        return self\n\n\ndef frozen(x):\n    p = P(x[0])\n    p.w = 2.0 * p.w\n    return p.w\n\n\n"
        "def with_property(x):\n    q = Q(x[0])\n    q.w = 2.0 * q.w\n    return q.w\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    import frozen_store
    with pytest.raises(s2s_ad.TransformError, match="frozen dataclass") as caught:
        s2s_ad.grad(frozen_store.frozen)(X.copy())
    assert caught.value.line == 20
    with pytest.raises(s2s_ad.TransformError, match="defines a property") as caught:
        s2s_ad.grad(frozen_store.with_property)(X.copy())
    assert caught.value.line == 26
