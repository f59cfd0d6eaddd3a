"""A list or tuple written in an array operation (``[x] * a``, ``a - [[x], [y]]``, ``np.multiply([x], a)``).

NumPy makes an array of the display, which the operation broadcasts like any other operand; its
items' adjoints are then the parts of the result's adjoint summed over the axes broadcasting added
(``Adjoints.distribute``), and a rule's template reads the display as that array
(``lowering.expressions.template_operands``).  Before, each item took its row of the unreduced
adjoint: ``[x] * a`` gave ``a[0]``'s part alone, a wrong number with no warning; and templates doing
arithmetic on the operand (``np.arctan2``, ``np.power``, forward mode's ``-t``) raised on a list.  Each function here is checked against central
differences by every argument, on both backends, and in forward mode, a Hessian and a vector-valued
pullback; against JAX where installed.
"""
from __future__ import annotations

import warnings

import numpy as np
import pytest

import s2s_ad
from conftest import numeric_grad, optional_import

numba = optional_import("numba")
jax = optional_import("jax")
BACKENDS = ["python", pytest.param("numba", marks=pytest.mark.skipif(
    numba is None, reason="numba is not installed (pip install 's2s_ad[numba]')"))]


def one_item_times_an_array(x, a):
    b = [x] * a
    return np.sum(b * b)


def an_array_times_two_items(x, a):
    b = a * [x, 2.0 * x]
    return np.sum(b ** 2)


def a_ufunc_of_a_list(x, a):
    return np.sum(np.multiply([x], a) ** 2)


def a_list_plus_an_array(x, a):
    return np.sum(([x] + a) ** 2)


def a_column_of_lists(x, a):
    return np.sum((a - [[x], [x * x]]) ** 2)


def a_tuple_times_an_array(x, a):
    y = a * (x,)
    return np.sum(y * y)


def a_list_of_arrays(x, a):
    return np.sum(np.sin([a, x * a]) * [[1.0], [2.0]] * x)


def a_power_of_a_list(x, a):  # (the rules' templates read the display as NumPy's array: x1 ** (x2 - 1))
    return np.sum(np.power([x, 2.0], a))


def arctan2_of_a_list(x, a):  # (x1 * x1 + x2 * x2 of a list raised)
    return np.sum(np.arctan2([x, 1.0], a))


def a_list_minus_an_array(x, a):
    return np.sum(([x, x] - a) ** 2) + np.mean(a / [x, 2.0])


def items_in_a_loop(x, a):
    total = 0.0
    for i in range(3):
        total = total + np.sum(([x, i * x] * a) ** 2)
    return total


THREE = np.array([1.0, 2.0, 3.0])
THREE_BY_TWO = np.arange(6.0).reshape(3, 2) + 1.0
TWO_BY_THREE = np.arange(6.0).reshape(2, 3) + 1.0
CASES = [(one_item_times_an_array, THREE), (an_array_times_two_items, THREE_BY_TWO), (a_ufunc_of_a_list, THREE),
         (a_list_plus_an_array, THREE), (a_column_of_lists, TWO_BY_THREE), (a_tuple_times_an_array, THREE),
         (a_list_of_arrays, THREE), (items_in_a_loop, THREE_BY_TWO), (a_power_of_a_list, THREE_BY_TWO),
         (arctan2_of_a_list, THREE_BY_TWO), (a_list_minus_an_array, THREE_BY_TWO)]
IDS = [case[0].__name__ for case in CASES]


@pytest.fixture(autouse=True)
def _quiet_fallbacks():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", s2s_ad.CompileFallbackWarning)
        yield


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_gradients_by_each_argument_against_differences(case, backend):
    fn, a = case
    got = s2s_ad.grad(fn, wrt=(0, 1), backend=backend)(1.5, a.copy())
    for i, want in enumerate(numeric_grad(fn, (1.5, a), i) for i in range(2)):
        np.testing.assert_allclose(got[i], want, rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_forward_mode_hessian_and_a_pullback_of_a_vector(case):
    fn, a = case
    _, tangent = s2s_ad.jvp(fn, (1.5, a), (1.0, np.zeros_like(a)))
    np.testing.assert_allclose(tangent, numeric_grad(fn, (1.5, a), 0), rtol=1e-6)
    second = s2s_ad.hessian(fn, wrt=0)(1.5, a)
    slope = s2s_ad.grad(fn)
    np.testing.assert_allclose(second, (slope(1.5 + 1e-5, a) - slope(1.5 - 1e-5, a)) / 2e-5, rtol=1e-5)

    def spread(x, a):  # (the display's broadcast in a function of a vector result)
        return [[x], [3.0 * x]] * np.reshape(a, (1, -1))
    value, pull = s2s_ad.vjp(spread, 1.5, a)
    weights = np.linspace(0.5, 2.0, value.size).reshape(value.shape)
    d_x, d_a = pull(weights)
    np.testing.assert_allclose(d_x, numeric_grad(lambda x, a: np.sum(weights * spread(x, a)), (1.5, a), 0),
                               rtol=1e-6)
    np.testing.assert_allclose(d_a, numeric_grad(lambda x, a: np.sum(weights * spread(x, a)), (1.5, a), 1),
                               rtol=1e-6, atol=1e-9)


@pytest.mark.skipif(jax is None, reason="JAX is not installed")
def test_against_jax():
    import jax.numpy as jnp
    jax.config.update("jax_enable_x64", True)
    twins = {one_item_times_an_array: lambda x, a: jnp.sum((jnp.array([x]) * a) ** 2),
             an_array_times_two_items: lambda x, a: jnp.sum((a * jnp.array([x, 2.0 * x])) ** 2),
             a_column_of_lists: lambda x, a: jnp.sum((a - jnp.array([[x], [x * x]])) ** 2)}
    for fn, twin in twins.items():
        a = dict(CASES)[fn]
        got = s2s_ad.grad(fn, wrt=(0, 1))(1.5, a)
        want = jax.grad(twin, argnums=(0, 1))(1.5, jnp.asarray(a))
        for g, w in zip(got, want):
            np.testing.assert_allclose(g, np.asarray(w), rtol=1e-12)
