"""Issue 22, builtins and small idioms: x.dtype, a = u[-1]; a += 2.0, x.item(), assert
np.allclose(...), a nested def inside a loop, a functools.partial held in a module global, lambdas
inside a loop or another lambda, a module-level lambda (or one from a module dict picked by a string
argument) called on constants (the generated code called it as lambda(X), a SyntaxError);
functions passed as arguments and called; module-level lists and dicts of numbers read with a
constant index or key, membership in a module dict and apply(ACTS[kind], z).  Each against central
differences (forward mode against reverse mode too), the Hessian against differences of the
gradient, and JAX where it applies."""
from __future__ import annotations

import numpy as np
import pytest

import s2s_ad
import everyday_idiom_functions as ef
from conftest import assert_gradient_matches, assert_hessian_matches_gradient_differences, numeric_grad

jax = pytest.importorskip("jax")
jax.config.update("jax_enable_x64", True)
jnp = jax.numpy

X = np.array([0.3, -1.2, 0.8])

CASES = [
    (ef.dtype_of_an_argument, (X,)),
    (ef.last_item_updated, (X,)),
    (ef.item_of_a_one_element_array, (np.array([0.7]),)),
    (ef.item_of_a_one_element_array, (np.array(0.7),)),
    (ef.asserts_allclose, (X,)),
    (ef.asserts_allclose_in_a_loop, (X,)),
    (ef.nested_def_inside_a_loop, (0.4,)),
    (ef.partial_held_in_a_module_global, (0.4,)),
    (ef.lambdas_defined_inside_a_loop, (0.4,)),
    (ef.lambda_inside_a_lambda, (0.4,)),
    (ef.module_lambda_called_on_a_constant, (0.4,)),
    (ef.module_dict_lambda_picked_by_a_string, (0.4, "square")),
    (ef.module_dict_lambda_picked_by_a_string, (0.4, "tanh")),
    (ef.passes_a_module_function, (0.4,)),
    (ef.passes_a_lambda, (0.4,)),
    (ef.module_list_read_by_constant_index, (0.4,)),
    (ef.module_dict_read_by_constant_key, (0.4,)),
    (ef.activation_checked_and_applied, (0.4, "tanh")),
    (ef.activation_checked_and_applied, (0.4, "sin")),
]


def scalar(f, args):
    """``f`` as a function of its first argument returning a float (for differences)."""
    return lambda x: float(np.sum(f(x, *args[1:])))


@pytest.mark.parametrize("f, args", CASES, ids=lambda v: getattr(v, "__name__", None) or repr(v)[:20])
def test_everyday_idiom_is_differentiated_in_every_mode(f, args):
    gradient = assert_gradient_matches(f, args)  # grad and jvp against differences
    value, again = s2s_ad.value_and_grad(f)(*args)
    assert value == pytest.approx(f(*args), rel=1e-12)
    np.testing.assert_allclose(again, gradient, rtol=1e-12)
    _, pullback = s2s_ad.vjp(f, *args)
    np.testing.assert_allclose(pullback(1.0)[0], gradient, rtol=1e-12)
    assert_hessian_matches_gradient_differences(f, args)


def test_functions_passed_as_arguments_agree_with_jax():
    def passes(x):
        return (lambda t: t * t)(x) + jnp.sin(x)

    assert s2s_ad.grad(ef.passes_a_module_function)(0.4) == pytest.approx(float(jax.grad(passes)(0.4)), rel=1e-12)
    assert s2s_ad.grad(ef.passes_a_lambda)(0.4) == pytest.approx(float(jax.grad(lambda t: t ** 3)(0.4)), rel=1e-12)


def test_a_module_level_lambda_on_constants_compiles_and_names_itself_readably():
    text = s2s_ad.grad(ef.module_lambda_called_on_a_constant).source_for(0.4)
    assert "lambda(" not in text
    compile(text, "generated", "exec")


def test_changing_a_module_list_or_dict_item_makes_the_code_again():
    gradient = s2s_ad.grad(ef.module_list_read_by_constant_index)
    assert gradient(0.5) == pytest.approx(2.0 + 3.0)
    ef.COEF[1] = 5.0
    try:
        assert gradient(0.5) == pytest.approx(5.0 + 3.0)
    finally:
        ef.COEF[1] = 2.0
    gradient = s2s_ad.grad(ef.module_dict_read_by_constant_key)
    ef.CONFIG["scale"] = -1.0
    try:
        assert gradient(0.0) == pytest.approx(-1.0 + 1.5)
    finally:
        ef.CONFIG["scale"] = 4.0
    assert gradient(0.0) == pytest.approx(4.0 + 1.5)


def test_membership_in_a_module_dict_follows_the_dict():
    gradient = s2s_ad.grad(ef.activation_checked_and_applied)
    with pytest.raises(ValueError, match="unknown activation relu"):
        gradient(0.4, "relu")
    ef.ACTIVATIONS["relu"] = ef.square
    try:
        assert gradient(0.4, "relu") == pytest.approx(numeric_grad(ef.activation_checked_and_applied, (0.4, "relu"), 0))
    finally:
        del ef.ACTIVATIONS["relu"]
    with pytest.raises(ValueError, match="unknown activation relu"):
        gradient(0.4, "relu")


def test_a_missing_key_of_a_module_dict_is_refused_at_the_users_line(tmp_path):
    from conftest import function_from_file

    f = function_from_file(tmp_path, "missing_key", "CONFIG = {'scale': 2.0}\n\ndef f(x):\n    return CONFIG['nope'] * x\n")
    with pytest.raises(s2s_ad.TransformError, match="no such item") as caught:
        s2s_ad.grad(f)(1.0)
    assert caught.value.line == 4
