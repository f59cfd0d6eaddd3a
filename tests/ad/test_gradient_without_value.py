"""``grad`` runs code that returns the gradient alone, without what only the value needs.

``value_and_grad`` (and the self-check) run the adjoint that returns the value too; ``grad``, Jacobians,
Hessians and ``check_grad`` run one that returns no value, so the statements only the value read are
dead and go (``reverse.ReverseSweep``, ``optimize.remove_dead``).  Oracles: closed forms and central
differences (``numeric_grad``); the value against the function itself.
"""
from __future__ import annotations

import math

import numpy as np
import pytest

import s2s_ad
from conftest import numeric_grad


def cross_entropy(logits, onehot):
    """Like benchmarks' logsumexp_ce: the gradient needs the softmax, not its logarithm."""
    shifted = logits - np.max(logits, axis=1, keepdims=True)
    log_norm = np.log(np.sum(np.exp(shifted), axis=1, keepdims=True))
    return -np.sum(onehot * (shifted - log_norm)) / logits.shape[0]


def cross_entropy_gradient(logits, onehot):
    """The closed form: (softmax(logits) * row sums of onehot - onehot) / rows."""
    e = np.exp(logits - np.max(logits, axis=1, keepdims=True))
    softmax = e / np.sum(e, axis=1, keepdims=True)
    return (softmax * np.sum(onehot, axis=1, keepdims=True) - onehot) / logits.shape[0]


def energy_and_penalty(x, c):
    """The penalty ``c * log(c)`` is a constant: only the value needs it."""
    return np.sum(x ** 2) + c * math.log(c)


def numbers_only(x, y):
    """On numbers: the products are needed, the sum only by the value."""
    a = x * y
    b = np.sin(x)
    return a + b


def noise(n):
    return np.random.normal(size=n)


def noisy(x):
    """The helper's draws feed the value alone, but the draw after it depends on them."""
    offset = noise(3)
    scale = np.random.normal()
    return x * scale + np.sum(offset)


def with_aux(x):
    loss = np.sum(x ** 2)
    return loss, {"half": loss / 2.0, "largest": np.max(x)}


def not_a_number(x):
    return x * 2.0


def _data(rows=4, columns=5, seed=0):
    rng = np.random.default_rng(seed)
    logits = rng.normal(size=(rows, columns))
    onehot = np.eye(columns)[rng.integers(0, columns, size=rows)]
    return logits, onehot


def test_grad_and_value_and_grad_give_the_closed_form_gradient_and_the_value():
    logits, onehot = _data()
    want = cross_entropy_gradient(logits, onehot)
    alone = s2s_ad.grad(cross_entropy)(logits, onehot)
    value, paired = s2s_ad.value_and_grad(cross_entropy)(logits, onehot)
    np.testing.assert_allclose(alone, want, rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(paired, want, rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(alone, numeric_grad(cross_entropy, (logits, onehot), 0), rtol=1e-6, atol=1e-9)
    assert value == pytest.approx(cross_entropy(logits, onehot), rel=1e-14)


def test_grads_code_leaves_out_the_logarithm_only_the_value_needs():
    logits, onehot = _data()
    alone = s2s_ad.grad(cross_entropy).source_for(logits, onehot)
    paired = s2s_ad.value_and_grad(cross_entropy).source_for(logits, onehot)
    assert "np.log(" in paired
    # On NumPy 2 the loss's spread adjoint is folded (fills.py), and nothing reads the value's parts.
    # NumPy 1 keeps np.full(np.shape(prod), ...), whose shape read keeps prod, and the log, computed.
    from s2s_ad.passes.fills import ZERO_D_TYPED
    assert ("np.log(" not in alone) == ZERO_D_TYPED
    assert '"""Return d cross_entropy / d (logits)."""' in alone
    assert '"""Return (cross_entropy(...), d cross_entropy / d (logits))."""' in paired
    assert alone.rstrip().splitlines()[-1].strip() == "return d_logits"
    # what the gradient reads stays: the softmax's parts (NumPy 1 names np.max np.amax)
    assert "np.exp(" in alone and ("np.max(" in alone or "np.amax(" in alone)


def test_a_constant_term_of_the_value_is_not_computed_and_the_gradient_is_right():
    x = np.array([0.5, -1.0, 2.0])
    source = s2s_ad.grad(energy_and_penalty).source_for(x, 3.0)
    assert "log(" not in source
    np.testing.assert_allclose(s2s_ad.grad(energy_and_penalty)(x, 3.0), 2 * x, rtol=1e-15)
    value, gradient = s2s_ad.value_and_grad(energy_and_penalty)(x, 3.0)
    assert value == pytest.approx(np.sum(x ** 2) + 3.0 * math.log(3.0), rel=1e-15)
    np.testing.assert_allclose(gradient, 2 * x, rtol=1e-15)


def test_on_numbers_the_hot_path_returns_the_gradient_alone():
    df, vdf = s2s_ad.grad(numbers_only, wrt=(0, 1)), s2s_ad.value_and_grad(numbers_only, wrt=(0, 1))
    for _ in range(3):  # the first call builds, later ones take the cached path
        d_x, d_y = df(0.7, -1.3)
        value, (v_x, v_y) = vdf(0.7, -1.3)
        assert (d_x, d_y) == (v_x, v_y)
        assert d_x == pytest.approx(-1.3 + math.cos(0.7), rel=1e-15) and d_y == pytest.approx(0.7, rel=1e-15)
        assert value == pytest.approx(0.7 * -1.3 + math.sin(0.7), rel=1e-15)
    single = s2s_ad.grad(numbers_only, wrt=(0,))
    assert single(0.7, -1.3) == (pytest.approx(-1.3 + math.cos(0.7), rel=1e-15),)
    assert "\n    out = " not in s2s_ad.grad(numbers_only).source_for(0.7, -1.3)
    assert "\n    out = " in s2s_ad.value_and_grad(numbers_only).source_for(0.7, -1.3)


@pytest.mark.parametrize("first", ["grad", "value_and_grad"])
def test_grad_and_value_and_grad_of_one_function_never_share_code(first):
    logits, onehot = _data(seed=1)
    makers = {"grad": s2s_ad.grad, "value_and_grad": s2s_ad.value_and_grad}
    order = [first, "value_and_grad" if first == "grad" else "grad"]
    for _ in range(2):  # each built once, then cached: both orders, both paths
        for name in order:
            result = makers[name](cross_entropy)(logits, onehot)
            if name == "grad":
                assert isinstance(result, np.ndarray) and result.shape == logits.shape
            else:
                value, gradient = result
                assert np.ndim(value) == 0 and gradient.shape == logits.shape
    assert s2s_ad.grad(cross_entropy).source_for(logits, onehot) != \
        s2s_ad.value_and_grad(cross_entropy).source_for(logits, onehot)


def test_a_helper_whose_result_only_the_value_reads_still_draws():
    np.random.seed(3)
    gradient = s2s_ad.grad(noisy)(1.5)
    after_grad = np.random.random()
    np.random.seed(3)
    noise(3)
    want = np.random.normal()  # the scale the function draws after the helper's three
    after_function = np.random.random()
    assert gradient == want and after_grad == after_function
    np.random.seed(3)
    value, paired = s2s_ad.value_and_grad(noisy)(1.5)
    assert paired == gradient


def test_has_aux_without_the_value_returns_the_gradient_and_the_aux():
    x = np.array([1.0, -2.0, 0.5])
    gradient, aux = s2s_ad.grad(with_aux, has_aux=True)(x)
    np.testing.assert_allclose(gradient, 2 * x, rtol=1e-15)
    assert aux == {"half": pytest.approx(np.sum(x ** 2) / 2.0), "largest": 1.0}
    (value, aux_too), paired = s2s_ad.value_and_grad(with_aux, has_aux=True)(x)
    assert value == pytest.approx(np.sum(x ** 2)) and aux_too == aux
    np.testing.assert_allclose(paired, gradient, rtol=0)
    assert "Return (the aux of with_aux(...) as leaves, d with_aux / d (x))." in \
        s2s_ad.grad(with_aux, has_aux=True).source_for(x)


@pytest.mark.parametrize("how", ["grad", "value_and_grad"])
def test_a_result_that_is_not_a_number_is_refused_with_or_without_the_value(how):
    with pytest.raises(TypeError, match=r"grad needs not_a_number to return a scalar.*shape \(3,\)"):
        getattr(s2s_ad, how)(not_a_number)(np.ones(3))


def not_a_number_with_aux(x):
    return x * 2.0, np.sum(x)


def not_a_number_of_a_dict(p):
    return p["w"] * 2.0


@pytest.mark.parametrize("how", ["grad", "value_and_grad"])
def test_with_aux_or_containers_a_result_that_is_not_a_number_is_refused_too(how):
    with pytest.raises(TypeError, match=r"not_a_number_with_aux to return a scalar.*shape \(3,\)"):
        getattr(s2s_ad, how)(not_a_number_with_aux, has_aux=True)(np.ones(3))
    with pytest.raises(TypeError, match=r"not_a_number_of_a_dict to return a scalar.*shape \(2,\)"):
        getattr(s2s_ad, how)(not_a_number_of_a_dict)({"w": np.ones(2)})


def test_grads_code_checks_a_result_the_facts_do_not_prove_a_number():
    # an array's double: the facts prove an array, not a number, so grad's code checks what it returns
    source = s2s_ad.grad(not_a_number).source_for(np.ones(3))
    assert "check_one_number(out, 'not_a_number')" in source
    # a proven number needs no check
    assert "check_one_number" not in s2s_ad.grad(cross_entropy).source_for(*_data())


def test_the_self_check_and_hessians_and_check_grad_run_on_the_code_without_the_value():
    logits, onehot = _data(rows=2, columns=3, seed=2)
    with_check = s2s_ad.grad(cross_entropy, check=True)(logits, onehot)  # the self-check compares values too
    np.testing.assert_allclose(with_check, cross_entropy_gradient(logits, onehot), rtol=1e-12, atol=1e-15)
    hessian = s2s_ad.hessian(cross_entropy)(logits, onehot)
    columns = []
    for index in np.ndindex(logits.shape):
        step = np.zeros_like(logits)
        step[index] = 1e-6
        columns.append(((cross_entropy_gradient(logits + step, onehot)
                         - cross_entropy_gradient(logits - step, onehot)) / 2e-6).ravel())
    np.testing.assert_allclose(np.reshape(hessian, (logits.size, logits.size)), np.array(columns).T,
                               rtol=1e-6, atol=1e-8)
    assert s2s_ad.check_grad(cross_entropy, logits, onehot).ok
    d2 = s2s_ad.grad(s2s_ad.grad(lambda x: x ** 3 + math.log(x)))
    assert d2(2.0) == pytest.approx(6 * 2.0 - 1 / 4.0, rel=1e-14)
