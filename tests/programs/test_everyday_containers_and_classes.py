"""Issue 22, refused or crashing before: objects of the user's own classes made inside the
function, their methods called and their operators (__add__, __mul__, __rmul__, __neg__) used;
tuple()/list() of a container of known length; sorted() over a module dict of numbers and
isinstance decided from the known structure; for row in B: row *= 2; loops over a list of arrays
of different shapes; a tuple auxiliary value returned from both arms of an if.  Each against
central differences (forward mode against reverse mode too), the Hessian against differences of
the gradient, and JAX where it applies; what cannot be known is a TransformError naming the line,
the class and why."""
from __future__ import annotations

import pathlib

import numpy as np
import pytest

import container_functions as cf
import everyday_container_class_functions as cc
import s2s_ad
from conftest import assert_gradient_matches, assert_hessian_matches_gradient_differences, numeric_grad

jax = pytest.importorskip("jax")
jax.config.update("jax_enable_x64", True)
jnp = jax.numpy

X = np.array([0.3, -1.2, 0.8])
M = np.array([[0.3, -1.2, 0.8], [0.5, 0.1, -0.7]])

CASES = [
    (cc.model_made_inside, (X, X[::-1].copy())),
    (cc.model_made_inside_with_keywords, (X, X[::-1].copy())),
    (cc.vector_arithmetic, (X,)),
    (cf.makes_a_plain_object, (X,)),
    (cc.object_through_a_loop_and_an_if, (X, 1.0)),
    (cc.object_through_a_loop_and_an_if, (X, -1.0)),
    (cc.tuple_and_list_of_known_length, (X,)),
    (cc.sorted_over_a_module_dict, (X,)),
    (cc.iterates_a_module_dict, (X,)),
    (cc.isinstance_of_a_known_structure, (X,)),
    (cc.layers_of_different_shapes, (X,)),
    (cc.sum_over_a_generator_of_different_shapes, (X,)),
    (cc.loop_over_a_display_that_stops_early, (X,)),
    (cc.loop_over_a_display_that_stops_early, (X * 3,)),
    (cc.rows_updated_in_place, (M,)),
    (cc.rows_updated_with_enumerate, (M,)),
    (cc.calls_a_helper_returning_a_list_of_tuples, (X,)),
    (cc.object_computed_in_init, (X,)),
    (cc.object_sets_an_attribute_later, (X,)),
]


def _check_every_mode(f, args):
    gradient = assert_gradient_matches(f, args)  # grad and jvp against differences
    value, again = s2s_ad.value_and_grad(f)(*args)
    assert value == pytest.approx(float(f(*args)), rel=1e-12)
    np.testing.assert_allclose(again, gradient, rtol=1e-12)
    _, pullback = s2s_ad.vjp(f, *args)
    np.testing.assert_allclose(pullback(1.0)[0], gradient, rtol=1e-12)
    tangent = np.linspace(0.5, 1.5, np.size(args[0])).reshape(np.shape(args[0]))
    _, derivative = s2s_ad.jvp(f, tuple(args), (tangent,) + tuple(np.zeros_like(a) for a in args[1:]))
    assert float(derivative) == pytest.approx(float(np.sum(gradient * tangent)), rel=1e-10, abs=1e-12)
    assert_hessian_matches_gradient_differences(f, args)


@pytest.mark.parametrize("f, args", CASES, ids=lambda v: getattr(v, "__name__", None) or repr(v)[:20])
def test_refused_or_crashing_before_is_differentiated_in_every_mode(f, args):
    _check_every_mode(f, args)


def test_objects_made_inside_agree_with_jax():
    def model(w, x):
        return jnp.sum((jnp.tanh(w * x) * 2.0) ** 2)

    def vector(x):
        return jnp.sum((x + 6.0 * jnp.sin(x) - x * x) ** 2)

    w, x = X, X[::-1].copy()
    np.testing.assert_allclose(s2s_ad.grad(cc.model_made_inside)(w, x), jax.grad(model)(w, x), rtol=1e-12)
    np.testing.assert_allclose(s2s_ad.grad(cc.vector_arithmetic)(X), jax.grad(vector)(X), rtol=1e-12)
    np.testing.assert_allclose(s2s_ad.hessian(cc.vector_arithmetic)(X), jax.hessian(vector)(X), rtol=1e-10)


def test_lists_of_arrays_of_different_shapes_agree_with_jax():
    def layers(x):
        h = x
        for W, b in [(jnp.asarray(cc.W1) * x[0], cc.B1), (cc.W2, cc.B2 * x[1])]:
            h = jnp.tanh(W @ h + b)
        return jnp.sum(h)

    def squares(x):
        return jnp.sum(jnp.outer(x, x) ** 2) + jnp.sum((x * 3) ** 2)

    np.testing.assert_allclose(s2s_ad.grad(cc.layers_of_different_shapes)(X), jax.grad(layers)(X), rtol=1e-12)
    np.testing.assert_allclose(s2s_ad.hessian(cc.layers_of_different_shapes)(X), jax.hessian(layers)(X),
                               rtol=1e-10, atol=1e-14)
    np.testing.assert_allclose(s2s_ad.grad(cc.sum_over_a_generator_of_different_shapes)(X), jax.grad(squares)(X),
                               rtol=1e-12)


@pytest.mark.parametrize("flag", [1.0, -1.0])
def test_a_tuple_aux_returned_from_both_arms_of_an_if_joins_item_by_item(flag):
    f = cc.aux_tuple_from_both_arms
    (value, aux), gradient = s2s_ad.value_and_grad(f, has_aux=True)(X, flag)
    want_value, want_aux = f(X, flag)
    assert value == pytest.approx(want_value, rel=1e-12)
    assert type(aux) is tuple and len(aux) == 2 and aux[1] == want_aux[1]
    np.testing.assert_array_equal(aux[0], want_aux[0])
    np.testing.assert_allclose(gradient, numeric_grad(lambda x, flag: f(x, flag)[0], (X, flag), 0), rtol=1e-6)

    def jax_value(x):
        h = jnp.sin(x)
        return jnp.sum(h ** 2) if flag > 0 else jnp.sum(h * 2)

    np.testing.assert_allclose(gradient, jax.grad(jax_value)(X), rtol=1e-12)
    again, aux_again = s2s_ad.grad(f, has_aux=True)(X, flag)
    np.testing.assert_allclose(again, gradient, rtol=1e-12)
    np.testing.assert_array_equal(aux_again[0], want_aux[0])


def test_rows_updated_in_place_agree_with_jax_and_python():
    def doubled(B):
        return jnp.sum((2 * B) ** 2)

    np.testing.assert_allclose(s2s_ad.grad(cc.rows_updated_in_place)(M), jax.grad(doubled)(M), rtol=1e-12)
    value, _ = s2s_ad.value_and_grad(cc.rows_updated_with_enumerate)(M)
    assert value == pytest.approx(cc.rows_updated_with_enumerate(M), rel=1e-12)


def test_changing_or_adding_a_key_of_an_iterated_module_dict_makes_the_code_again():
    gradient = s2s_ad.grad(cc.sorted_over_a_module_dict)
    expected = lambda: sum(w * len(k + k) * X ** (len(k + k) - 1) for k, w in cc.WEIGHTS.items())
    np.testing.assert_allclose(gradient(X), expected(), rtol=1e-12)
    cc.WEIGHTS["ccc"] = 0.5
    try:
        np.testing.assert_allclose(gradient(X), expected(), rtol=1e-12)
        cc.WEIGHTS["a"] = -3.0
        np.testing.assert_allclose(gradient(X), expected(), rtol=1e-12)
    finally:
        del cc.WEIGHTS["ccc"]
        cc.WEIGHTS["a"] = 1.0
    np.testing.assert_allclose(gradient(X), expected(), rtol=1e-12)


def test_isinstance_of_a_known_structure_is_decided_while_transforming():
    text = s2s_ad.grad(cc.isinstance_of_a_known_structure).source_for(X)
    assert "isinstance(" not in text and "if " not in text


def test_an_object_returned_is_rebuilt_with_its_tangent():
    value, tangent = s2s_ad.jvp(cc.object_returned, (X,), (np.ones(3),))
    assert type(value) is cc.Vector and type(tangent) is cc.Vector
    np.testing.assert_allclose(value.a, X, rtol=1e-15)
    np.testing.assert_allclose(tangent.a, np.ones(3), rtol=1e-15)


SOURCE = pathlib.Path(cc.__file__).read_text().splitlines()


@pytest.mark.parametrize("f, words", [
    (cc.object_with_slots, "making a Slotted object: Slotted defines __slots__"),
    (cc.object_with_getattr, "making a Lookup object: Lookup defines __getattr__"),
    (cc.operator_that_may_not_apply, "the operator __add__ of a MaybeAdds: it may give NotImplemented"),
    (cc.aux_of_another_structure_on_one_arm, "a tuple whose item is a tuple on some paths only"),
], ids=lambda v: getattr(v, "__name__", None) or "")
def test_what_cannot_be_known_is_refused_at_the_users_line(f, words):
    aux = f is cc.aux_of_another_structure_on_one_arm
    with pytest.raises(s2s_ad.TransformError, match=words) as caught:
        s2s_ad.grad(f, has_aux=aux)(*((X, 1.0) if aux else (X,)))
    assert "# REFUSED" in SOURCE[caught.value.line - 1], (caught.value.line, SOURCE[caught.value.line - 1])
