"""What the cheap per-call path of a gradient still guarantees.

A cached gradient call with arrays is found by the arguments' types and the
arrays' ranks, its snapshot (what the code's free names meant) checked by
identity first, and its gradients handed out without comparing them with the
arguments where each owns its memory and nothing else refers to it.  These
tests hold that path to what the slow one did: an edited global, module or
class attribute, closure cell or rule is still seen after the fast path was
taken; a gradient that is an argument, a view of one, or another gradient is
still copied; every gradient is writable; kinds that differ only in rank or in
NumPy type still get code of their own.  Every value is checked against
finite differences or a closed form.
"""
from __future__ import annotations

import sys
import types

import numpy as np
import pytest

import s2s_ad
from s2s_ad.targets import ownership
from s2s_ad.targets.target import NUMPY
from conftest import numeric_grad

SCALE = 3.0
WEIGHTS = np.array([1.0, 2.0, 3.0])


class Config:
    """Class attributes a loss reads (a snapshot records ``Config.GAIN``)."""

    GAIN = 2.0


# A module whose attribute comes from its __getattr__ (PEP 562), not its __dict__.
LAZY = types.ModuleType("lazy_constants")
_LAZY_VALUES = {"K": 2.0}


def _lazy_getattr(name):
    try:
        return _LAZY_VALUES[name]
    except KeyError:
        raise AttributeError(name) from None


LAZY.__getattr__ = _lazy_getattr


def scaled_square(x):
    return SCALE * np.sum(x * x)


def weighted_square(x):
    return np.sum(WEIGHTS * x * x)


def gained(x):
    return Config.GAIN * np.sum(x * x)


def lazy_scaled(x):
    return LAZY.K * np.sum(x * x)


def squashed(x):
    return np.sum(np.tanh(x))


def make_scaled_closure():
    k = 2.0

    def scaled_by_k(x):
        return k * np.sum(x * x)

    def set_k(value):
        nonlocal k
        k = value

    return scaled_by_k, set_k


def soft(x):
    return np.log1p(np.exp(x))


def uses_soft(x):
    return np.sum(soft(x))


def bilinear(x, w):
    return np.sum(x * w)


@s2s_ad.adjoint(bilinear)
def _(out, x, w, d_out):
    d_x = w  # exact where d_out is 1 (a gradient's seed): the gradient *is* the argument w
    d_w = x


def uses_bilinear(x, w):
    return bilinear(x, w)


def summed(x):
    return np.sum(x)


def mlp(w1, w2, x, y):
    hidden = np.tanh(x @ w1)
    return np.mean((hidden @ w2 - y) ** 2)


def stepped(a, b, steps=3, dt=0.5):
    u = a
    for _ in range(steps):
        u = u + dt * a * b * u
    return u * u


def rank_polymorphic(x):
    return np.sum(x * x * x)


def _fd(f, args, i):
    return np.asarray(numeric_grad(f, args, i))


# -- a stale snapshot is still detected after the fast path was taken --------------------------


def test_a_rebound_global_is_seen_on_the_array_path(monkeypatch):
    x = np.array([1.0, -2.0, 0.5])
    df = s2s_ad.grad(scaled_square)
    for _ in range(3):  # the later calls take the cached path
        np.testing.assert_allclose(df(x), 6.0 * x)
    monkeypatch.setattr(sys.modules[__name__], "SCALE", 5.0)
    np.testing.assert_allclose(df(x), 10.0 * x)
    monkeypatch.setattr(sys.modules[__name__], "SCALE", float("5.0"))  # equal, another object
    np.testing.assert_allclose(df(x), 10.0 * x)


def test_a_global_array_rebound_or_changed_in_place_is_seen(monkeypatch):
    x = np.array([1.0, 2.0, 3.0])
    df = s2s_ad.grad(weighted_square)
    df(x)
    np.testing.assert_allclose(df(x), 2.0 * WEIGHTS * x)
    monkeypatch.setattr(sys.modules[__name__], "WEIGHTS", np.array([0.5, 0.0, -1.0]))
    np.testing.assert_allclose(df(x), 2.0 * np.array([0.5, 0.0, -1.0]) * x)
    WEIGHTS[1] = 4.0  # the code reads the array itself: nothing to rebuild
    np.testing.assert_allclose(df(x), 2.0 * np.array([0.5, 4.0, -1.0]) * x)


def test_a_class_attribute_edited_after_the_fast_path_is_seen(monkeypatch):
    x = np.array([[1.0, 2.0], [3.0, -1.0]])
    df = s2s_ad.grad(gained)
    df(x)
    np.testing.assert_allclose(df(x), 4.0 * x)
    monkeypatch.setattr(Config, "GAIN", 3.0)
    np.testing.assert_allclose(df(x), 6.0 * x)
    np.testing.assert_allclose(df(x), _fd(gained, (x,), 0), rtol=1e-6)


def test_a_module_attribute_edited_after_the_fast_path_is_seen(monkeypatch):
    x = np.array([0.3, -0.7, 1.2])
    df = s2s_ad.grad(squashed)
    df(x)
    np.testing.assert_allclose(df(x), 1.0 / np.cosh(x) ** 2)
    monkeypatch.setattr(np, "tanh", np.sin)  # the code was made with tanh's rule
    np.testing.assert_allclose(df(x), np.cos(x), rtol=1e-12)


def test_an_attribute_a_modules_getattr_supplies_is_read_again(monkeypatch):
    x = np.array([1.0, 2.0])
    df = s2s_ad.grad(lazy_scaled)
    df(x)
    np.testing.assert_allclose(df(x), 4.0 * x)
    monkeypatch.setitem(_LAZY_VALUES, "K", 7.0)
    np.testing.assert_allclose(df(x), 14.0 * x)


def test_a_changed_closure_cell_is_seen_on_the_array_path():
    scaled_by_k, set_k = make_scaled_closure()
    x = np.array([1.0, -3.0])
    df = s2s_ad.grad(scaled_by_k)
    df(x)
    np.testing.assert_allclose(df(x), 4.0 * x)
    set_k(0.5)
    np.testing.assert_allclose(df(x), 1.0 * x)


def test_a_rule_registered_after_the_fast_path_is_used():
    x = np.array([0.2, -1.0, 2.5])
    df = s2s_ad.grad(uses_soft)
    df(x)
    np.testing.assert_allclose(df(x), _fd(uses_soft, (x,), 0), rtol=1e-6)
    # a deliberately different rule: the cached code must not keep the helper's own derivative
    s2s_ad.adjoint(soft)(_twice_rule)
    np.testing.assert_allclose(df(x), 2.0 * np.ones(3))


def _twice_rule(out, x, d_out):
    d_x = 2.0 * d_out


# -- gradients handed out: writable, never an argument's memory nor each other's ------------


def test_a_gradient_that_is_an_argument_is_handed_out_as_a_copy():
    x, w = np.array([1.0, 2.0, 3.0]), np.array([-1.0, 0.5, 4.0])
    df = s2s_ad.grad(uses_bilinear, wrt=(0, 1))
    for _ in range(3):
        d_x, d_w = df(x, w)
        np.testing.assert_allclose(d_x, _fd(uses_bilinear, (x, w), 0), rtol=1e-6)
        np.testing.assert_allclose(d_w, _fd(uses_bilinear, (x, w), 1), rtol=1e-6)
        assert not np.shares_memory(d_x, w) and not np.shares_memory(d_w, x)
        assert d_x.flags.writeable and d_w.flags.writeable
    d_x[:] = 0.0
    d_w[:] = 0.0
    np.testing.assert_allclose(w, [-1.0, 0.5, 4.0])
    np.testing.assert_allclose(x, [1.0, 2.0, 3.0])


def test_a_gradient_that_is_a_view_of_an_argument_is_handed_out_as_a_copy():
    memory = np.arange(8.0)
    x, w = memory[:4], memory[4:]  # views: neither owns its memory
    df = s2s_ad.grad(uses_bilinear, wrt=(0, 1))
    for _ in range(2):
        d_x, d_w = df(x, w)
        assert not np.shares_memory(d_x, memory) and not np.shares_memory(d_w, memory)
    d_x += 100.0
    np.testing.assert_allclose(memory, np.arange(8.0))


def test_one_array_passed_twice_gives_two_gradients_of_their_own():
    a = np.array([2.0, -1.0])
    d_x, d_w = s2s_ad.grad(uses_bilinear, wrt=(0, 1))(a, a)
    np.testing.assert_allclose(d_x, a)
    np.testing.assert_allclose(d_w, a)
    assert not np.shares_memory(d_x, d_w)
    assert not np.shares_memory(d_x, a) and not np.shares_memory(d_w, a)
    d_x[0] = 9.0
    assert d_w[0] == 2.0 and a[0] == 2.0


def test_a_gradient_spread_from_a_sum_is_writable_and_the_callers_own():
    x = np.array([[1.0, 2.0], [3.0, 4.0]])
    df = s2s_ad.grad(summed)
    for _ in range(2):
        gradient = df(x)
        np.testing.assert_allclose(gradient, np.ones((2, 2)))
        assert gradient.flags.writeable
        assert not np.shares_memory(gradient, x)
    gradient[0, 0] = 5.0
    np.testing.assert_allclose(df(x), np.ones((2, 2)))


def test_fresh_gradients_are_distinct_writable_and_right_call_after_call():
    rng = np.random.default_rng(3)
    args = (rng.normal(size=(4, 5)), rng.normal(size=(5, 2)), rng.normal(size=(6, 4)), rng.normal(size=(6, 2)))
    df = s2s_ad.grad(mlp, wrt=(0, 1))
    previous = None
    for _ in range(3):
        d_w1, d_w2 = df(*args)
        for i, gradient in ((0, d_w1), (1, d_w2)):
            np.testing.assert_allclose(gradient, _fd(mlp, args, i), rtol=1e-5, atol=1e-8)
            assert gradient.flags.writeable
            assert not any(np.shares_memory(gradient, a) for a in args)
        assert not np.shares_memory(d_w1, d_w2)
        if previous is not None:  # the last call's gradients are the caller's: never reused
            assert not np.shares_memory(d_w1, previous[0]) and not np.shares_memory(d_w2, previous[1])
            kept = previous[0].copy()
            previous[0][...] = -1.0
            np.testing.assert_allclose(d_w1, _fd(mlp, args, 0), rtol=1e-5, atol=1e-8)
            previous[0][...] = kept
        previous = (d_w1, d_w2)


def test_value_and_grad_hands_out_arrays_of_their_own():
    x, w = np.array([1.0, 2.0]), np.array([3.0, -4.0])
    vg = s2s_ad.value_and_grad(uses_bilinear, wrt=(0, 1))
    for _ in range(2):
        value, (d_x, d_w) = vg(x, w)
        assert value == pytest.approx(-5.0)
        assert not np.shares_memory(d_x, w) and not np.shares_memory(d_w, x)
        np.testing.assert_allclose(d_x, w)
        np.testing.assert_allclose(d_w, x)


def test_the_ownership_check_vouches_only_for_an_array_nothing_else_holds():
    """What the cheap path relies on: the NumPy target's ``alone`` passes a fresh array named by one
    variable (or a tuple of fresh arrays), and refuses one referred to once more, a view, or a
    read-only array."""
    if not ownership.CALIBRATED:
        pytest.skip("this interpreter has no reference counts to read: every gradient is compared")
    gradient = np.ones(3)
    assert NUMPY.alone(gradient)
    also = gradient
    assert not NUMPY.alone(gradient)
    del also
    gradient = (np.ones(2), np.zeros(3))
    assert NUMPY.alone(gradient)
    shared = np.ones(2)
    gradient = (shared, np.zeros(3))
    assert not NUMPY.alone(gradient)
    gradient = (np.ones(2), np.ones(4)[1:])  # a view
    assert not NUMPY.alone(gradient)
    gradient = np.ones(3)
    gradient.flags.writeable = False
    assert not NUMPY.alone(gradient)


# -- the key: types and ranks; defaults filled in without binding -----------------------------


def test_arrays_of_other_ranks_and_numbers_get_code_of_their_own():
    df = s2s_ad.grad(rank_polymorphic)
    calls = [np.array([1.0, -2.0]), np.array([[1.0, 2.0], [0.5, -1.0]]), 1.5, np.float32(2.0),
             np.array(3.0), np.array([1.0, -2.0]), np.array([[[0.5]]])]
    for x in calls * 2:
        gradient = df(x)
        np.testing.assert_allclose(gradient, 3.0 * np.asarray(x, dtype=float) ** 2, rtol=1e-6)
        assert np.shape(gradient) == np.shape(x)
        assert type(gradient) is type(x) or (isinstance(x, float) and isinstance(gradient, float))
    assert df(np.float32(2.0)).dtype == np.float32
    assert df(np.array([1.0, 2.0], dtype=np.float32)).dtype == np.float32


def test_positional_calls_that_leave_defaults_bind_as_python_would():
    dfs = s2s_ad.grad(stepped, wrt=(0, 1))
    for args in [(0.3, 0.2), (0.3, 0.2, 5), (0.3, 0.2, 5, 0.1)]:
        for _ in range(2):
            got = dfs(*args)
            for i in (0, 1):
                assert got[i] == pytest.approx(numeric_grad(stepped, args, i), rel=1e-6)
    assert dfs(0.3, 0.2) == pytest.approx(dfs(0.3, 0.2, 3, 0.5))
    assert dfs(0.3, 0.2, dt=0.1) == pytest.approx(dfs(0.3, 0.2, 3, 0.1))
    with pytest.raises(TypeError):
        dfs(0.3)
    with pytest.raises(TypeError):
        dfs(0.3, 0.2, 3, 0.5, 1.0)


def test_jvp_hands_out_a_tangent_of_its_own():
    x, w = np.array([1.0, 2.0, 3.0]), np.array([0.5, -1.0, 2.0])
    t_x, t_w = np.array([1.0, 0.0, -1.0]), np.zeros(3)
    for _ in range(2):
        value, tangent = s2s_ad.jvp(product, (x, w), (t_x, t_w))
        np.testing.assert_allclose(value, x * w)
        np.testing.assert_allclose(tangent, t_x * w)
        assert tangent.flags.writeable
        assert not any(np.shares_memory(tangent, a) for a in (x, w, t_x, t_w, value))
    value, tangent = s2s_ad.jvp(first_of, (x, w), (t_x, t_w))  # the tangent is t_x itself
    np.testing.assert_allclose(tangent, t_x)
    assert not np.shares_memory(tangent, t_x) and tangent.flags.writeable


def product(x, w):
    return x * w


def first_of(x, w):
    return x


def test_an_empty_wrt_is_refused_when_the_gradient_is_made():
    with pytest.raises(ValueError, match=r"wrt=\(\) names no parameter"):
        s2s_ad.grad(summed, wrt=())
    with pytest.raises(ValueError, match=r"wrt=\[\] names no parameter"):
        s2s_ad.value_and_grad(summed, wrt=[])


@pytest.mark.parametrize("grad, shape, axis, keepdims", [
    (0.5, (3, 4), None, False), (np.float32(2.0), (2, 3), None, False), (np.array(1.5), (5,), None, False),
    (np.array([1.0, 2.0, 3.0]), (2, 3), 0, False), (np.array([1.0, 2.0]), (2, 3), 1, False),
    (np.array([[1.0], [2.0]]), (2, 3), 1, True), (np.array([1.0 + 2.0j, 3.0]), (2, 2), 0, False),
    (np.arange(4.0).reshape(2, 2), (2, 3, 2), 1, False), (3, (2, 2), None, False), (0.25, (), None, False),
])
def test_a_reductions_adjoint_is_spread_into_a_new_writable_array(grad, shape, axis, keepdims):
    from s2s_ad.rules import registry as rules
    like = np.zeros(shape)
    spread = rules.helpers()["broadcast_reduced"](grad, like, axis, keepdims)  # templates/numpy_reductions.py
    expanded = np.expand_dims(grad, axis) if axis is not None and not keepdims else grad
    want = np.broadcast_to(expanded, shape)
    assert spread.shape == shape and spread.dtype == np.result_type(grad, 1.0)
    np.testing.assert_array_equal(spread, want)
    assert spread.flags.writeable and spread.flags.owndata
    if isinstance(grad, np.ndarray):
        assert not np.shares_memory(spread, grad)


def bilinear_of_dict(p):
    return uses_bilinear(p["x"], p["w"])


def bilinear_with_aux(x, w):
    return uses_bilinear(x, w), w


def test_gradients_of_container_arguments_never_share_an_arguments_memory():
    p = {"x": np.array([1.0, 2.0]), "w": np.array([3.0, -4.0])}
    for _ in range(2):
        gradient = s2s_ad.grad(bilinear_of_dict)(p)
        np.testing.assert_allclose(gradient["x"], p["w"])
        np.testing.assert_allclose(gradient["w"], p["x"])
        for leaf in gradient.values():
            assert leaf.flags.writeable
            assert not any(np.shares_memory(leaf, a) for a in p.values())
    gradient["x"][0] = 100.0
    assert p["w"][0] == 3.0


def test_gradients_with_aux_share_memory_with_no_argument_and_not_with_the_aux():
    x, w = np.array([1.0, 2.0]), np.array([3.0, -4.0])
    (d_x, d_w), aux = s2s_ad.grad(bilinear_with_aux, wrt=(0, 1), has_aux=True)(x, w)
    np.testing.assert_allclose(d_x, w)
    np.testing.assert_allclose(d_w, x)
    for gradient in (d_x, d_w):
        assert not np.shares_memory(gradient, x) and not np.shares_memory(gradient, w)
        assert not np.shares_memory(gradient, aux)
    (value, aux), (d_x, d_w) = s2s_ad.value_and_grad(bilinear_with_aux, wrt=(0, 1), has_aux=True)(x, w)
    assert value == pytest.approx(-5.0)
    assert not np.shares_memory(d_x, w) and not np.shares_memory(d_x, aux)


@pytest.mark.parametrize("grad, shape", [
    (0.5, (3, 4)), (np.float32(2.0), (2,)), (np.array([1.0, 2.0, 3.0]), (2, 3)), (np.arange(3), (3,)),
    (np.array([1.0 + 1.0j, 2.0]), (2,)), (2, ()), (np.ones((2, 1)), (2, 3)),
])
def test_a_writable_copy_is_a_new_float_array_of_the_shape_asked(grad, shape):
    from s2s_ad.core import runtime
    copy = runtime.writable_copy(grad, np.zeros(shape))
    assert copy.shape == shape and copy.dtype == np.result_type(grad, 1.0)
    np.testing.assert_array_equal(copy, np.broadcast_to(grad, shape))
    assert copy.flags.writeable and copy.flags.owndata
    if isinstance(grad, np.ndarray):
        assert not np.shares_memory(copy, grad)


def broadcast_product(x, y):
    return np.sum(x * y * y)


def test_arrays_of_one_rank_but_other_shapes_get_gradients_of_their_own_shapes():
    """Calls alternating between broadcasting patterns of the same ranks: whatever the code is
    specialised on, each call's gradients are right and shaped like its arguments."""
    rng = np.random.default_rng(5)
    shapes = [((3, 1), (1, 4)), ((3, 4), (3, 4)), ((1, 4), (3, 4)), ((3, 4), (1, 1)), ((1, 1), (3, 4)),
              ((3, 1), (1, 4))]
    df = s2s_ad.grad(broadcast_product, wrt=(0, 1))
    for _ in range(2):
        for sx, sy in shapes:
            x, y = rng.normal(size=sx), rng.normal(size=sy)
            d_x, d_y = df(x, y)
            assert d_x.shape == sx and d_y.shape == sy
            np.testing.assert_allclose(d_x, _fd(broadcast_product, (x, y), 0), rtol=1e-6, atol=1e-8)
            np.testing.assert_allclose(d_y, _fd(broadcast_product, (x, y), 1), rtol=1e-6, atol=1e-8)
