"""Issue 33, functions as values (tests/corpora/function_value_functions.py): a closure, lambda or
functools.partial a helper makes, called by the caller (its captured values constants or computed
from the inputs, differentiated too); a function passed as an argument: a default of the
differentiated function, one its caller passes, one passed to a helper; functools.partial made in
the function.  Each against central differences in every mode (grad and jvp, value_and_grad, vjp,
the Hessian against differences of the gradient), the Numba backend's numbers against Python's.
A function passed to the differentiated function is static (as jax.jit's static_argnums): another
function, or a factory rebound, gets new code, never the old.  What stays unsupported is a
TransformError at the user's line."""
from __future__ import annotations

import functools
import pathlib
import warnings

import numpy as np
import pytest

import function_value_functions as fv
import s2s_ad
from conftest import assert_every_mode, assert_numba_gives_the_same_numbers, assert_hessian_matches_gradient_differences, numeric_grad

X = np.array([0.3, -1.2, 0.8])

CASES = [
    fv.closure_with_a_constant,
    fv.closure_over_a_value_of_the_inputs,
    fv.lambda_a_helper_returns,
    fv.closure_reading_names_its_factory_computed,
    fv.closure_over_a_function_passed_to_its_factory,
    fv.factory_calling_a_factory,
    fv.closure_passed_to_a_helper,
    fv.closure_called_in_a_loop,
    fv.two_closures_of_one_factory,
    fv.closure_after_a_write,
    fv.partial_a_helper_returns,
    fv.loss_with_a_default_activation,
    fv.numpy_function_passed_to_a_helper,
    fv.lambda_passed_to_a_helper,
    fv.def_passed_to_a_helper,
    fv.partial_with_a_constant,
    fv.partial_with_a_value_of_the_inputs,
    fv.partial_of_a_lambda,
    fv.partial_passed_to_a_helper,
    fv.partial_of_a_partial,
    fv.helper_with_a_function_default,
    fv.registry_indexed_by_an_attribute,
    fv.helper_with_a_lambda_default,
]


@pytest.mark.parametrize("f", CASES, ids=lambda f: f.__name__)
def test_differentiated_in_every_mode(f):
    assert_every_mode(f, X)


@pytest.mark.parametrize("f", CASES, ids=lambda f: f.__name__)
def test_the_numba_backend_gives_the_same_numbers(f):
    assert_numba_gives_the_same_numbers(f, X)


def _third(z):
    return z ** 3 - z


PASSED = [np.sin, np.tanh, _third, lambda z: z * np.exp(-z), functools.partial(fv.scale, c=2.0)]


@pytest.mark.parametrize("act", PASSED, ids=["sin", "tanh", "def", "lambda", "partial"])
@pytest.mark.parametrize("backend", ["python", "numba"])
def test_a_function_the_caller_passes(act, backend):
    if backend == "numba":
        pytest.importorskip("numba")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        value, gradient = s2s_ad.value_and_grad(fv.loss_of_a_function_passed, backend=backend)(X, act)
        overridden = s2s_ad.grad(fv.loss_with_a_default_activation, backend=backend)(X, act)
    assert value == pytest.approx(float(fv.loss_of_a_function_passed(X, act)), rel=1e-12)
    np.testing.assert_allclose(gradient, numeric_grad(fv.loss_of_a_function_passed, (X, act), 0), rtol=1e-5,
                               atol=1e-6)
    np.testing.assert_allclose(overridden, numeric_grad(fv.loss_with_a_default_activation, (X, act), 0),
                               rtol=1e-5, atol=1e-6)
    if backend == "python":
        assert_hessian_matches_gradient_differences(fv.loss_of_a_function_passed, (X, act))


def test_each_function_passed_gets_code_of_its_own():
    gradient = s2s_ad.grad(fv.loss_of_a_function_passed)
    for _ in range(2):  # (cached: each call finds the code for its function, never another's)
        for act in PASSED:
            np.testing.assert_allclose(gradient(X, act), numeric_grad(fv.loss_of_a_function_passed, (X, act), 0),
                                       rtol=1e-5, atol=1e-6)
    source = gradient.source_for(X, np.sin)
    assert "sin" in source and "tanh" not in source


def test_a_function_redefined_gets_new_code():
    gradient = s2s_ad.grad(fv.loss_of_a_function_passed)

    def act(z):
        return z ** 2
    np.testing.assert_allclose(gradient(X, act), 3 * X ** 2, rtol=1e-12)

    def act(z):  # noqa: F811 (another object, as a function edited and run again)
        return z ** 3
    np.testing.assert_allclose(gradient(X, act), 4 * X ** 3, rtol=1e-12)


def test_a_factory_rebound_makes_the_code_again(monkeypatch):
    gradient = s2s_ad.grad(fv.closure_with_a_constant)
    np.testing.assert_allclose(gradient(X), np.where(X > 0, 1.0, 0.1), rtol=1e-12)
    monkeypatch.setattr(fv, "make_act", fv.make_scaled)  # (act(x) is now 0.1 * x ** 2)
    np.testing.assert_allclose(gradient(X), 0.2 * X, rtol=1e-12)


def test_a_function_argument_has_no_derivative():
    with pytest.raises(TypeError, match="act = <ufunc 'sin'> is a function, which has no derivative"):
        s2s_ad.grad(fv.loss_of_a_function_passed, wrt="act")(X, np.sin)


SOURCE = pathlib.Path(fv.__file__).read_text().splitlines()


@pytest.mark.parametrize("f, words", [
    (fv.closure_called_in_a_while_test, "a function a call returns, bind to a name first: act = make_act(0.1)"),
    (fv.closure_used_as_a_value, "a function a call returns, used as a value: bind it to a name"),
    (fv.factory_of_another_module, "the function returned by function_value_elsewhere.make_elsewhere: only "
                                   "module-level functions of the differentiated function's module"),
    (fv.factory_returning_a_function_on_one_path, "it returns a function on some paths only"),
    (fv.function_argument_returned, "the function 'act' used as a value"),
], ids=lambda v: getattr(v, "__name__", None) or "")
def test_what_stays_unsupported_is_refused_at_the_users_line(f, words):
    args = (X, np.sin) if f is fv.function_argument_returned else (X,)
    with pytest.raises(s2s_ad.TransformError, match=words.replace("(", r"\(").replace(")", r"\)")) as caught:
        s2s_ad.grad(f)(*args)
    assert caught.value.filename == fv.__file__
    assert "# REFUSED" in SOURCE[caught.value.line - 1], (caught.value.line, SOURCE[caught.value.line - 1])


def test_a_function_whose_code_is_replaced_gets_new_code(monkeypatch):
    """The same function objects, their code replaced (as an editor reloading a cell might): the one
    passed, and a factory, are recorded with their code, so the code is made again."""
    gradient = s2s_ad.grad(fv.loss_of_a_function_passed)

    def act(z):
        return z ** 2

    def other(z):
        return z ** 3
    np.testing.assert_allclose(gradient(X, act), 3 * X ** 2, rtol=1e-12)
    act.__code__ = other.__code__
    np.testing.assert_allclose(gradient(X, act), 4 * X ** 3, rtol=1e-12)
    closure = s2s_ad.grad(fv.closure_with_a_constant)
    np.testing.assert_allclose(closure(X), np.where(X > 0, 1.0, 0.1), rtol=1e-12)
    monkeypatch.setattr(fv.make_act, "__code__", fv.make_scaled.__code__)
    np.testing.assert_allclose(closure(X), 0.2 * X, rtol=1e-12)
