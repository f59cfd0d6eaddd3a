"""Memory the caller keeps (issue 31, families 4 and 5, and the promise of arrays of their own).

* A pullback keeps copies of what it reads of the caller's objects: changing an argument in place
  after ``vjp`` returned (``x -= lr * g``, a buffer filled again, a view's base, a container's
  array, a method's instance) changes nothing a ``vjp_fn`` call, or a pickled one, returns (JAX's
  behaviour, docs/api.md).  The oracle: central differences at the point ``vjp`` was called at.
* The Numba backend follows module-level arrays changed in place after the first call (a global,
  a closure cell, a class attribute, an item of a global tuple or dict), as the Python backend does:
  both compared with central differences after the change.
* ``has_aux``'s aux and ``jvp``'s primal output share memory with nothing the caller holds, and two
  calls return two objects.
"""
import pickle
import warnings

import numpy as np
import pytest

import s2s_ad
from s2s_ad.core.errors import CompileFallbackWarning

from conftest import numeric_grad, optional_import
import held_memory_functions as hm

X = np.array([0.5, -1.0, 2.0])


def numeric_pullback(f, x, cotangent):
    """``cotangent`` pulled back through ``f`` at ``x`` by central differences (the oracle)."""
    return numeric_grad(lambda v: np.sum(np.asarray(f(v)) * cotangent), [x.copy()], 0)


def backends():
    """The backends a pullback runs under (numba's split form runs as Python, and says so)."""
    return ["python"] + (["numba"] if optional_import("numba") is not None else [])


def pullback_of(f, *primals, backend="python"):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", CompileFallbackWarning)
        return s2s_ad.vjp(f, *primals, backend=backend)


# -- family 4: the pullback reads what the caller changed later ------------------------------------

@pytest.mark.parametrize("backend", backends())
@pytest.mark.parametrize("f", [hm.through_a_view, hm.writes_a_local_copy], ids=lambda f: f.__name__)
def test_a_step_taken_after_vjp_changes_nothing_the_pullback_returns(f, backend):
    x = X.copy()
    cotangent = np.array([1.0, -0.5, 2.0])
    expected = numeric_pullback(f, X, cotangent)
    out, pullback = pullback_of(f, x, backend=backend)
    x -= 0.1 * np.ones(3)  # the step of an optimiser
    np.testing.assert_allclose(pullback(cotangent)[0], expected, rtol=1e-6, atol=1e-8)
    x[:] = [9.0, 8.0, 7.0]  # a buffer filled again
    np.testing.assert_allclose(pullback(cotangent)[0], expected, rtol=1e-6, atol=1e-8)  # (a second call)
    np.testing.assert_allclose(out, f(X))


def weighted_pair(x, y, k=2.0):
    """Two arrays and a default: the pullback's copies of the primals are made without deepcopy."""
    return np.sin(x) * y + k * x * x


@pytest.mark.parametrize("backend", backends())
def test_one_array_given_twice_then_changed_after_vjp(backend):
    x = X.copy()
    cotangent = np.array([1.0, -0.5, 2.0])
    diagonal = np.cos(X) * X + np.sin(X) + 4.0 * X  # d/dx of sin(x) * x + 2 x^2, elementwise
    _, pullback = pullback_of(weighted_pair, x, x, backend=backend)
    x[:] = 7.0
    dx, dy = pullback(cotangent)
    np.testing.assert_allclose(dx + dy, diagonal * cotangent, rtol=1e-12)
    np.testing.assert_allclose(dx, numeric_pullback(lambda v: weighted_pair(v, X), X, cotangent), rtol=1e-6)


@pytest.mark.parametrize("backend", backends())
def test_a_fortran_ordered_argument_changed_after_vjp(backend):
    a = np.asfortranarray(np.arange(6.0).reshape(2, 3) / 5.0)
    b = np.ones((2, 3))
    expected_a, expected_b = np.cos(a) * b + 4.0 * a, np.sin(a)
    _, pullback = pullback_of(weighted_pair, a, b, backend=backend)
    a[:] = -1.0
    b *= 3.0
    da, db = pullback(np.ones((2, 3)))
    np.testing.assert_allclose(da, expected_a, rtol=1e-12)
    np.testing.assert_allclose(db, expected_b, rtol=1e-12)


def test_a_pickled_pullback_pulls_back_at_the_point_vjp_was_called_at():
    x = X.copy()
    cotangent = np.array([1.0, -0.5, 2.0])
    _, pullback = s2s_ad.vjp(hm.through_a_view, x)
    x *= 3.0
    again = pickle.loads(pickle.dumps(pullback))
    x *= 5.0
    expected = numeric_pullback(hm.through_a_view, X, cotangent)
    np.testing.assert_allclose(again(cotangent)[0], expected, rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(pullback(cotangent)[0], expected, rtol=1e-6, atol=1e-8)


def test_a_view_argument_whose_base_is_changed_after_vjp():
    base = np.array([4.0, 0.5, -1.0, 2.0])
    _, pullback = s2s_ad.vjp(hm.through_a_view, base[1:])
    base[:] = 0.0
    cotangent = np.ones(3)
    np.testing.assert_allclose(pullback(cotangent)[0], numeric_pullback(hm.through_a_view, X, cotangent),
                               rtol=1e-6, atol=1e-8)


def test_a_container_arguments_array_changed_after_vjp():
    w, b = X.copy(), np.array([0.3, 0.2, -0.4])
    params = {"w": w, "b": b}
    _, pullback = s2s_ad.vjp(hm.of_a_dict, params)
    w += 1.0
    params["b"] = np.zeros(3)  # the dict itself changed too
    (adjoint,) = pullback(np.ones(3))
    expected = 1.0 - np.tanh(X * np.array([0.3, 0.2, -0.4])) ** 2
    np.testing.assert_allclose(adjoint["w"], expected * np.array([0.3, 0.2, -0.4]), rtol=1e-12)
    np.testing.assert_allclose(adjoint["b"], expected * X, rtol=1e-12)


def test_a_methods_instance_changed_after_vjp():
    model = hm.Model(np.array([1.0, 2.0, 0.5]))
    x = X.copy()
    _, pullback = s2s_ad.vjp(model.predict, x)
    model.w *= 4.0
    cotangent = np.array([1.0, 0.0, -1.0])
    expected = numeric_pullback(hm.Model(np.array([1.0, 2.0, 0.5])).predict, X, cotangent)
    np.testing.assert_allclose(pullback(cotangent)[0], expected, rtol=1e-6, atol=1e-8)
    again = pickle.loads(pickle.dumps(pullback))
    np.testing.assert_allclose(again(cotangent)[0], expected, rtol=1e-6, atol=1e-8)


# -- family 5: module-level arrays under the compiled backend --------------------------------------

MODULE_LEVEL = [
    (hm.global_weighted, lambda: hm.WEIGHTS),
    (hm.global_in_a_loop, lambda: hm.WEIGHTS),
    (hm.with_default_after, lambda: hm.WEIGHTS),
    (hm.item_of_a_global_tuple, lambda: hm.PAIR[0]),
    (hm.item_of_a_global_dict, lambda: hm.TABLE["w"]),
    (hm.class_attribute, lambda: hm.Settings.scale),
    (hm.weighted_by_cell, lambda: hm.CELL),
]


@pytest.mark.parametrize("f, array", MODULE_LEVEL, ids=[f.__name__ for f, _ in MODULE_LEVEL])
def test_the_compiled_gradient_follows_a_module_level_array_changed_in_place(f, array):
    pytest.importorskip("numba")
    held = array()
    kept = held.copy()
    compiled = s2s_ad.value_and_grad(f, backend="numba")
    python = s2s_ad.value_and_grad(f)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error", CompileFallbackWarning)  # compiled, not run as Python
            compiled(X)  # the first calls compile
            s2s_ad.jvp(f, (X,), (np.array([1.0, -1.0, 0.5]),), backend="numba")
            held *= 3.0
            held[0] = -2.0
            value, gradient = compiled(X)
            tangent_value, tangent = s2s_ad.jvp(f, (X,), (np.array([1.0, -1.0, 0.5]),), backend="numba")
        expected = numeric_grad(f, [X], 0)
        np.testing.assert_allclose(gradient, expected, rtol=1e-6, atol=1e-8)
        np.testing.assert_allclose(value, f(X), rtol=1e-12)
        np.testing.assert_allclose(python(X)[1], gradient, rtol=1e-12)
        np.testing.assert_allclose(tangent_value, f(X), rtol=1e-12)
        np.testing.assert_allclose(tangent, expected @ np.array([1.0, -1.0, 0.5]), rtol=1e-6)
    finally:
        held[:] = kept


# -- the promise: what a call returns is the caller's own ------------------------------------------

def all_backends():
    return ["python"] + ([pytest.param("numba")] if optional_import("numba") is not None else [])


def shares(value, held):
    return any(np.may_share_memory(value, h) for h in held)


@pytest.mark.parametrize("backend", all_backends())
@pytest.mark.parametrize("f", [hm.loss_and_the_argument, hm.loss_and_a_view, hm.loss_and_reversed,
                               hm.loss_and_a_global], ids=lambda f: f.__name__)
def test_an_aux_shares_memory_with_nothing_the_caller_holds(f, backend):
    x = X.copy()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", CompileFallbackWarning)
        gradient, aux = s2s_ad.grad(f, has_aux=True, backend=backend)(x)
        again = s2s_ad.grad(f, has_aux=True, backend=backend)(x)[1]
        (value, aux_with_value), _ = s2s_ad.value_and_grad(f, has_aux=True, backend=backend)(x)
    expected_value, expected_aux = f(X.copy())
    for got in (aux, again, aux_with_value):
        np.testing.assert_array_equal(got, expected_aux)  # the values NumPy's own run gives
        assert not shares(got, (x, hm.WEIGHTS, gradient))
    assert aux is not again and not np.may_share_memory(aux, again)
    np.testing.assert_allclose(gradient, numeric_grad(lambda v: f(v)[0], [X], 0), rtol=1e-6, atol=1e-8)
    assert value == pytest.approx(expected_value)


@pytest.mark.parametrize("backend", all_backends())
@pytest.mark.parametrize("f", [hm.the_argument, hm.a_view, hm.reversed_argument, hm.a_global],
                         ids=lambda f: f.__name__)
def test_the_primal_output_of_jvp_shares_memory_with_nothing_the_caller_holds(f, backend):
    x, tangent = X.copy(), np.array([1.0, 2.0, 3.0])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", CompileFallbackWarning)
        out, t_out = s2s_ad.jvp(f, (x,), (tangent,), backend=backend)
        again = s2s_ad.jvp(f, (x,), (tangent,), backend=backend)[0]
    np.testing.assert_array_equal(out, f(X.copy()))
    np.testing.assert_allclose(t_out, (np.asarray(f(X + 1e-6 * tangent)) - np.asarray(f(X - 1e-6 * tangent))) / 2e-6,
                               rtol=1e-6, atol=1e-8)
    for got in (out, again, t_out):
        assert not shares(got, (x, tangent, hm.WEIGHTS))
    assert not np.may_share_memory(out, again) and not np.may_share_memory(out, t_out)


def test_a_zero_dimensional_value_is_not_the_callers_array():
    x = np.array(2.0)
    value, gradient = s2s_ad.value_and_grad(hm.the_argument)(x)
    assert value == 2.0 and gradient == 1.0
    assert not np.may_share_memory(value, x)
