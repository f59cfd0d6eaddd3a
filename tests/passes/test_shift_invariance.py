"""A value the result does not depend on carries no derivative (s2s_ad/passes/shift_invariance.py).

The softmax and log-sum-exp people write subtract a maximum (or a mean) that cancels: the
gradient leaves out that value's adjoint.  Each function here is checked against central
differences, forward mode and, where installed, JAX; the generated code is read for whether the
maximum's adjoint (its ties) is there; and the functions where the value does not cancel (a shift
that reaches a square, a sum along another axis, the maximum returned beside) must keep it and
still give the right numbers.
"""
import numpy as np
import pytest

import s2s_ad
from s2s_ad.driver import pipeline
from s2s_ad.core.kinds import Array
from conftest import assert_gradient_matches, assert_hessian_matches_gradient_differences, optional_import


def logsumexp_ce(logits, onehot):
    shifted = logits - np.max(logits, axis=1, keepdims=True)
    log_norm = np.log(np.sum(np.exp(shifted), axis=1, keepdims=True))
    return -np.sum(onehot * (shifted - log_norm)) / logits.shape[0]


def softmax_methods(x, y):
    z = x - x.max(axis=-1, keepdims=True)
    e = np.exp(z)
    p = e / e.sum(axis=-1, keepdims=True)
    return -np.sum(y * np.log(p))


def vector_softmax(x, w):
    e = np.exp(x - np.max(x))
    p = e / np.sum(e)
    return np.dot(p, w)


def logsumexp(x):
    m = np.max(x)
    return m + np.log(np.sum(np.exp(x - m)))


def column_softmax(x, w):
    e = np.exp(x - np.max(x, axis=0))  # one maximum per column, broadcast along the rows
    p = e / np.sum(e, axis=0, keepdims=True)
    return np.sum(p * w)


def centred_softmax(x, w):
    e = np.exp(x - np.mean(x, axis=1, keepdims=True))
    return np.sum(w * (e / np.sum(e, axis=1, keepdims=True)))


def two_softmaxes(x, w):
    e = np.exp(x - np.max(x, axis=1, keepdims=True))
    p = e / np.sum(e, axis=1, keepdims=True)
    s = p * w
    f = np.exp(s - np.max(s, axis=1, keepdims=True))
    q = f / np.sum(f, axis=1, keepdims=True)
    return np.sum(q * q)


def centred_squares(x):  # (x - max)**2 does depend on the maximum
    z = x - np.max(x, axis=1, keepdims=True)
    return np.sum(z ** 2)


def other_axis(x, w):  # the row maximum cancels only in sums along the rows
    e = np.exp(x - np.max(x, axis=1, keepdims=True))
    p = e / np.sum(e, axis=0, keepdims=True)
    return np.sum(p * w)


def shift_kept(x):  # the maximum itself reaches the result
    m = np.max(x, axis=1, keepdims=True)
    e = np.exp(x - m)
    return np.sum(np.log(np.sum(e, axis=1, keepdims=True))) + 2.0 * np.sum(m)


def unscaled_sum(x):  # a scaled value added to one that is not
    e = np.exp(x - np.max(x))
    return np.sum(np.log(e + 1.0))


def in_a_loop(x, n):
    m = np.max(x, axis=1, keepdims=True)
    total = 0.0
    for i in range(n):
        total = total + np.sum(np.exp(x - m * i))
    return total


def _args(seed, shape=(4, 5)):
    rng = np.random.default_rng(seed)
    x = rng.normal(0.0, 2.0, shape)
    return x, rng.normal(size=shape)


CUT = [
    (logsumexp_ce, lambda: (_args(1)[0], np.eye(5)[[0, 3, 1, 4]])),
    (softmax_methods, lambda: (_args(2)[0], np.eye(5)[[2, 2, 0, 1]])),
    (vector_softmax, lambda: _args(3, (6,))),
    (logsumexp, lambda: (_args(4, (7,))[0],)),
    (column_softmax, lambda: _args(5)),
    (centred_softmax, lambda: _args(6)),
    (two_softmaxes, lambda: _args(7)),
]
KEPT = [
    (centred_squares, lambda: (_args(8)[0],)),
    (other_axis, lambda: _args(9)),
    (shift_kept, lambda: (_args(10)[0],)),
    (unscaled_sum, lambda: (_args(11, (5,))[0],)),
    (in_a_loop, lambda: (_args(12)[0], 3)),
]


def _maximum_adjoint_in(f, args):
    """Whether the generated gradient differentiates the subtracted maximum (its ties) or mean (the
    adjoint of ``mean_x``)."""
    source = s2s_ad.grad(f).source_for(*args)
    return "ties_" in source or "d_mean_x =" in source


@pytest.mark.parametrize("f, make", CUT + KEPT, ids=lambda v: getattr(v, "__name__", ""))
def test_gradient_matches_differences_and_forward_mode(f, make):
    assert_gradient_matches(f, make())


@pytest.mark.parametrize("f, make", CUT, ids=lambda v: getattr(v, "__name__", ""))
def test_the_cancelling_value_carries_no_derivative(f, make):
    assert not _maximum_adjoint_in(f, make())


@pytest.mark.parametrize("f, make", KEPT, ids=lambda v: getattr(v, "__name__", ""))
def test_a_value_that_does_not_cancel_keeps_its_derivative(f, make):
    assert _maximum_adjoint_in(f, make())


@pytest.mark.parametrize("f, make", CUT, ids=lambda v: getattr(v, "__name__", ""))
def test_against_jax(f, make):
    jax = optional_import("jax")
    if jax is None:
        pytest.skip("JAX is not installed (CI's extras job installs it and requires it)")
    jax.config.update("jax_enable_x64", True)
    import jax.numpy as jnp
    args = make()
    jax_f = _with_numpy(f, jnp)
    want = jax.grad(jax_f)(*[jnp.asarray(a) if isinstance(a, np.ndarray) else a for a in args])
    np.testing.assert_allclose(s2s_ad.grad(f)(*args), np.asarray(want), rtol=1e-10, atol=1e-12)


def _with_numpy(f, module):
    """``f`` with its global ``np`` replaced by ``module`` (jax.numpy)."""
    import types
    return types.FunctionType(f.__code__, {**f.__globals__, "np": module}, f.__name__)


def test_second_derivatives():
    x = _args(13, (5,))[0]
    assert_hessian_matches_gradient_differences(logsumexp, (x,))
    probabilities = np.exp(x - np.max(x)) / np.sum(np.exp(x - np.max(x)))
    np.testing.assert_allclose(s2s_ad.hessian(logsumexp)(x), np.diag(probabilities) - np.outer(probabilities,
                               probabilities), rtol=1e-10, atol=1e-12)


def test_float32_and_ties():
    x = np.array([[1.0, 3.0, 3.0, 0.5], [2.0, 2.0, 2.0, 2.0]], dtype=np.float32)
    w = np.arange(8.0, dtype=np.float32).reshape(2, 4)
    g = s2s_ad.grad(centred_softmax)(x, w)
    assert g.dtype == np.float32
    np.testing.assert_allclose(g, s2s_ad.grad(centred_softmax)(x.astype(float), w.astype(float)), rtol=1e-5, atol=1e-6)
    tied = x.astype(float)  # ties at the maximum: the gradient is the softmax's, with no share to split
    np.testing.assert_allclose(s2s_ad.grad(logsumexp_ce)(tied, np.eye(4)[[1, 0]]),
                               _softmax_rows(tied) / 2 - np.eye(4)[[1, 0]] / 2, rtol=1e-12)


def _softmax_rows(x):
    e = np.exp(x - x.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


def test_value_and_grad_vjp_and_compiled_path_agree():
    x, onehot = _args(14)[0], np.eye(5)[[1, 1, 4, 0]]
    want = _softmax_rows(x) / 4 - onehot / 4
    value, gradient = s2s_ad.value_and_grad(logsumexp_ce)(x, onehot)
    assert value == pytest.approx(logsumexp_ce(x, onehot), rel=1e-14)
    np.testing.assert_allclose(gradient, want, rtol=1e-12)
    _, pullback = s2s_ad.vjp(logsumexp_ce, x, onehot)
    np.testing.assert_allclose(pullback(1.0)[0], want, rtol=1e-12)
    if optional_import("numba") is not None:
        np.testing.assert_allclose(s2s_ad.grad(logsumexp_ce, backend="numba")(x, onehot), want, rtol=1e-12)


def test_the_analysis_marks_the_maximum():
    kinds = (Array(2), Array(2))
    _, ssa = pipeline.lowered(logsumexp_ce, kinds)
    made, facts = pipeline._analysed(ssa, ["logits"], kinds)
    (maximum,) = made.derivative_free  # (max_logits; amax_logits with NumPy 1, whose np.max is np.amax)
    assert maximum.endswith("max_logits") and maximum not in facts.active and "shifted" in facts.active


def max_then_new_axis(x, w):
    e = np.exp(x - x.max(axis=1)[:, None])
    return np.sum(w * e / e.sum(axis=1)[:, None])


def mixture(means, x):
    d = -0.5 * (x[:, None] - means[None, :]) ** 2
    m = np.max(d, axis=1, keepdims=True)
    return -np.sum(m[:, 0] + np.log(np.mean(np.exp(d - m), axis=1)))


def picked_where_it_varies(x, w):  # m[0] and m[1] are two rows' maxima: two shifts that do not cancel
    m = np.max(x, axis=1, keepdims=True)
    log_norm = np.log(np.sum(np.exp(x - m[1]), axis=1, keepdims=True))
    return np.sum(w * (x - m[0] - log_norm))


@pytest.mark.parametrize("f, make, cut", [
    (max_then_new_axis, lambda: _args(15), True),
    (mixture, lambda: (np.array([-1.0, 0.2, 1.5]), np.linspace(-2.0, 2.0, 7)), True),
    (picked_where_it_varies, lambda: _args(16), False)], ids=lambda v: getattr(v, "__name__", ""))
def test_indexing_a_moving_value(f, make, cut):
    args = make()
    assert_gradient_matches(f, args)
    assert _maximum_adjoint_in(f, args) is not cut
