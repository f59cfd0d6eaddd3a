"""A derivative a rule leaves out must never come back as a silent zero.

A rule input without ``d_<input>`` (``np.pad``'s ``constant_values``, ``np.var``'s ``ddof``) is refused
at run time where a float reaching it depends on what is differentiated
(``analysis.guard_lost_derivatives``; a helper's callers check it: ``lost_derivative_parameters``).
These are the paths that used to return a zero: ``vjp`` of a function taking containers, a helper
reached through recursion (direct or mutual) that swaps its arguments, and ``grad`` by a string
argument.  Beside them, what must keep working: a constant beside the differentiated inputs, and the
derivatives that are zero because the function is piecewise constant (docs/conventions.md).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pytest

import s2s_ad
from conftest import numeric_grad

A = np.array([[1.0, 2.0, 4.0], [3.0, 5.0, 9.0]])


def _padded(a, c):
    return np.pad(a, 1, constant_values=c)


def _line_of(fn, offset: int = 1) -> int:
    return fn.__code__.co_firstlineno + offset


# -- containers: every transform checks the leaves it differentiates --------------------------------


def padded_total(params):
    """The pad value is a leaf of a dict."""
    return np.sum(np.pad(params["w"], 1, constant_values=params["fill"]) ** 2)


@dataclass
class Layer:
    w: np.ndarray
    fill: float


def layer_total(layer):
    return np.sum(_padded(layer.w, layer.fill) ** 2)


def nested_total(tree):
    return np.sum(_padded(tree["x"][0], tree["x"][1]["fill"]))


def unpacked_total(pair):
    w, fill = pair
    return np.sum(_padded(w, fill) * w[0])


def padded_vector(params):
    return _padded(params["w"], params["fill"]) ** 2


def test_vjp_of_a_function_taking_a_dict_refuses_a_lost_leaf():
    """vjp differentiates every leaf: the float ``fill`` reaching constant_values was a silent 0.0."""
    params = {"w": np.array([1.0, 2.0]), "fill": 0.5}
    line = _line_of(padded_total, 2)
    with pytest.raises(s2s_ad.TransformError, match=rf"test_lost_derivatives.py:{line}:.*constant_values"):
        s2s_ad.vjp(padded_total, params)


@pytest.mark.parametrize("fn, arg", [
    (layer_total, Layer(np.array([1.0, 2.0]), 0.5)),
    (nested_total, {"x": (np.array([1.0, 2.0]), {"fill": 0.5})}),
    (unpacked_total, (np.array([1.0, 2.0]), 0.5)),
    (padded_vector, {"w": np.array([1.0, 2.0]), "fill": 0.5}),
])
def test_every_transform_of_a_container_refuses_a_lost_leaf(fn, arg):
    line = _line_of(_padded)
    where = rf"test_lost_derivatives.py:{line}:.*constant_values"
    leaves = {"w": np.ones(2), "fill": 1.0}
    with pytest.raises(s2s_ad.TransformError, match=where):
        s2s_ad.vjp(fn, arg)
    with pytest.raises(s2s_ad.TransformError, match=where):
        s2s_ad.jacobian(fn)(arg)
    if fn is padded_vector:
        return
    with pytest.raises(s2s_ad.TransformError, match=where):
        s2s_ad.grad(fn)(arg)
    with pytest.raises(s2s_ad.TransformError, match=where):
        s2s_ad.hessian(fn)(arg)
    if fn is layer_total:
        with pytest.raises(s2s_ad.TransformError, match=where):
            s2s_ad.jvp(fn, (arg,), (Layer(leaves["w"], leaves["fill"]),))


def test_an_integer_leaf_at_a_rule_input_without_a_derivative_is_fine():
    """An int fill has no derivative to lose: vjp gives the derivative by the array leaf."""
    w = np.array([1.0, -2.0, 0.5])
    params = {"w": w, "fill": 2}
    value, pull = s2s_ad.vjp(padded_total, params)
    assert value == pytest.approx(padded_total(params))
    (got,) = pull(1.0)
    np.testing.assert_allclose(got["w"], numeric_grad(lambda v: padded_total({"w": v, "fill": 2}), (w,), 0),
                               rtol=1e-7, atol=1e-9)


def padded_by_array(a, c):
    return np.sum(np.pad(a, 1, constant_values=c) ** 2)


def padded_with_default(a, c=0.5):
    return np.sum(np.pad(a, 1, constant_values=c) * a[0])


def test_a_constant_beside_the_differentiated_inputs_is_not_refused():
    """jacobian in reverse mode (more inputs than outputs) and vjp check only what they return
    derivatives of: a float constant or a default reaching constant_values is fine."""
    a = np.array([1.0, 2.0, 3.0, -1.0])
    jac = s2s_ad.jacobian(padded_by_array, wrt=0)(a, 0.5)
    np.testing.assert_allclose(jac, numeric_grad(padded_by_array, (a, 0.5), 0), rtol=1e-7, atol=1e-9)
    with pytest.raises(s2s_ad.TransformError, match="constant_values"):
        s2s_ad.jacobian(padded_by_array, wrt=(0, 1))(a, 0.5)
    value, pull = s2s_ad.vjp(padded_with_default, a)
    (got,) = pull(1.0)
    np.testing.assert_allclose(got, numeric_grad(padded_with_default, (a,), 0), rtol=1e-7, atol=1e-9)
    with pytest.raises(s2s_ad.TransformError, match="constant_values"):
        s2s_ad.vjp(padded_with_default, a, 0.5)


# -- recursion: a helper's lost positions read those of helpers not yet built ------------------------


def _rotate(a, b, c, n):
    if n == 0:
        return np.sum(np.pad(a, 1, constant_values=c))
    return _rotate(a, c, b, n - 1)  # b reaches the pad one level down


def rotated(a, x):
    return _rotate(a, x, 0.0, 1)


def _ping(a, b, c, n):
    if n == 0:
        return np.sum(np.pad(a, 1, constant_values=c)) + np.sum(a * b)
    return _pong(a, b, c, n - 1)


def _pong(a, b, c, n):
    return _ping(a, c, b, n)  # swaps b and c: through _ping, b is lost too


def ping_ponged(a, x):
    return _ping(a, x, 0.0, 1)


def ping_ponged_array(a, x):
    return _ping(a * x, 1.0, 0.0, 1)


@pytest.mark.parametrize("fn, line", [(rotated, _line_of(_rotate, 2)), (ping_ponged, _line_of(_ping, 2))])
def test_a_derivative_lost_inside_a_recursion_is_refused(fn, line):
    """The positions were found once, with the recursive callee's still empty: grad and vjp gave 0."""
    a = np.array([1.0, 2.0])
    where = rf"test_lost_derivatives.py:{line}:.*constant_values"
    with pytest.raises(s2s_ad.TransformError, match=where):
        s2s_ad.grad(fn, wrt=1)(a, 0.5)
    with pytest.raises(s2s_ad.TransformError, match=where):
        s2s_ad.vjp(fn, a, 0.5)
    with pytest.raises(s2s_ad.TransformError, match=where):
        s2s_ad.jvp(fn, (a, 0.5), (None, 1.0))


def test_a_recursion_whose_lost_input_stays_constant_is_differentiated():
    """By ``a`` the pad value is a constant: the derivative matches finite differences."""
    a = np.array([1.0, 2.0, -0.5])
    for fn in (rotated, ping_ponged):
        got = s2s_ad.grad(fn)(a, 0.5)
        np.testing.assert_allclose(got, numeric_grad(fn, (a, 0.5), 0), rtol=1e-7, atol=1e-9)
    got = s2s_ad.grad(ping_ponged_array, wrt=(0, 1))(a, 0.5)
    for i in (0, 1):
        np.testing.assert_allclose(got[i], numeric_grad(ping_ponged_array, (a, 0.5), i), rtol=1e-7, atol=1e-9)


# -- string and None arguments: no derivative to take -----------------------------------------------


def scaled_loss(x, kind="l2", reg=None):
    if kind == "l2":
        loss = x * x
    else:
        loss = np.abs(x)
    if reg is None:
        return loss
    return loss + reg * x


def test_differentiating_by_a_string_or_none_argument_is_refused():
    """The code is specialised on the string's value: grad by it returned 0.0."""
    with pytest.raises(TypeError, match="kind = 'l2' is a string"):
        s2s_ad.grad(scaled_loss, wrt="kind")(3.0, "l2")
    with pytest.raises(TypeError, match="kind = 'l2' is a string"):
        s2s_ad.grad(scaled_loss, wrt=("x", "kind"))(3.0, "l2")
    with pytest.raises(TypeError, match="reg = None is None"):
        s2s_ad.value_and_grad(scaled_loss, wrt=2)(3.0, "l1", None)
    with pytest.raises(TypeError, match="kind = 'l2' is a string"):
        s2s_ad.hessian(scaled_loss, wrt=1)(3.0, "l2")
    with pytest.raises(TypeError, match="kind"):
        s2s_ad.jacobian(scaled_loss, wrt=1)(3.0, "l2")
    # by x the string is fine, and vjp gives None for it (as jvp takes None for its tangent)
    assert s2s_ad.grad(scaled_loss)(3.0, "l2") == pytest.approx(numeric_grad(scaled_loss, (3.0, "l2"), 0))
    value, pull = s2s_ad.vjp(scaled_loss, 3.0, "l1", 2.0)
    d_x, d_kind, d_reg = pull(1.0)
    assert (d_x, d_kind, d_reg) == (pytest.approx(3.0), None, pytest.approx(3.0))


# -- piecewise constant: zero is the derivative (docs/conventions.md) ------------------------------


def truncated(x):
    return int(x * 3) * x + round(x * 3) * x


def rounded(x):
    return np.round(x * 3.14159, decimals=int(x * 3)) + np.floor(x * 3) + x


def indexed_by_a_float(x):
    i = np.floor(x * 2).astype(int)
    return A[0, i] * x + A[int(x), 1]


def stored_into_integers(x):
    counts = np.zeros(3, dtype=int)
    counts[0] = x * 10
    return counts[0] * x + np.sum((A * x).astype(int))


def counted_from_a_float(x):
    return np.sum(np.sum(A * x, axis=int(x))) + np.sum(np.diff(A * x, n=int(x + 1))) + np.var(A * x, ddof=int(x + 1))


def masked_by_a_float(x):
    return np.sum(np.where(A > x * 3, A * x, 0.0))


@pytest.mark.parametrize("fn", [truncated, rounded, indexed_by_a_float, stored_into_integers,
                                counted_from_a_float, masked_by_a_float])
@pytest.mark.parametrize("x", [0.73, 1.21])
def test_piecewise_constant_parts_have_a_zero_derivative(fn, x):
    """Away from the jumps the finite differences are the truth, and forward mode agrees."""
    got = s2s_ad.grad(fn)(x)
    assert got == pytest.approx(numeric_grad(fn, (x,), 0), rel=1e-6, abs=1e-8)
    assert s2s_ad.jvp(fn, (x,), (1.0,))[1] == pytest.approx(got, rel=1e-12)


def test_piecewise_constant_zero_matches_jax():
    jax = pytest.importorskip("jax")
    jax.config.update("jax_enable_x64", True)
    jnp = jax.numpy

    def rounded_jax(x):
        return jnp.round(x * 3.14159) + jnp.floor(x * 3) + x + (A * x).astype(int).sum() * x

    def rounded_np(x):
        return np.round(x * 3.14159) + np.floor(x * 3) + x + np.sum((A * x).astype(int)) * x

    for x in (0.73, 1.21):
        assert s2s_ad.grad(rounded_np)(x) == pytest.approx(float(jax.grad(rounded_jax)(x)), rel=1e-12)


# -- forward mode over a gradient, by a parameter the gradient was not taken by ----------------------


def padded_energy(a, c):
    return np.sum(np.pad(a, 1, constant_values=c) ** 2) ** 2


def spaced_energy(u, dx):
    return np.sum(np.gradient(u, dx) ** 2)


@pytest.mark.parametrize("fn, line", [(padded_energy, _line_of(padded_energy)),
                                      (spaced_energy, _line_of(spaced_energy))])
def test_forward_mode_over_a_gradient_by_another_parameter_refuses_a_lost_derivative(fn, line):
    """The gradient by ``a`` was checked for ``a`` only: jvp of it along ``c``, its jacobian by ``c``
    and the mixed hessian gave zeros (the generated gradient code was not checked again)."""
    a = np.array([1.0, 2.0, 4.0])
    g = s2s_ad.grad(fn)
    where = rf"test_lost_derivatives.py:{line}:.*(constant_values|spacing)"
    with pytest.raises(s2s_ad.TransformError, match=where):
        s2s_ad.jvp(g, (a, 0.5), (np.zeros(3), 1.0))
    with pytest.raises(s2s_ad.TransformError, match=where):
        s2s_ad.jacobian(g, wrt=1)(a, 0.5)
    with pytest.raises(s2s_ad.TransformError, match=where):
        s2s_ad.hessian(fn, wrt=(0, 1))(a, 0.5)


def padded_scalar(x, c):
    return np.sum(np.pad(np.array([x, 2.0 * x]), 1, constant_values=c) ** 2) * x


def test_second_derivatives_by_the_differentiated_inputs_still_work():
    """By ``a`` alone the pad value is a constant: hessian, jvp of the gradient along ``a`` and
    grad of grad agree with differences of the gradient; by ``c`` grad of grad is refused."""
    a = np.array([1.0, 2.0, 4.0])
    g = s2s_ad.grad(padded_energy)
    eps, direction = 1e-6, np.array([0.3, -1.0, 0.5])
    expected = (g(a + eps * direction, 0.5) - g(a - eps * direction, 0.5)) / (2 * eps)
    np.testing.assert_allclose(s2s_ad.jvp(g, (a, 0.5), (direction, None))[1], expected, rtol=1e-6)
    np.testing.assert_allclose(s2s_ad.hessian(padded_energy)(a, 0.5) @ direction, expected, rtol=1e-6)
    second = s2s_ad.grad(s2s_ad.grad(padded_scalar))
    first = s2s_ad.grad(padded_scalar)
    assert second(0.3, 0.5) == pytest.approx((first(0.3 + eps, 0.5) - first(0.3 - eps, 0.5)) / (2 * eps), rel=1e-6)
    with pytest.raises(s2s_ad.TransformError, match="constant_values"):
        s2s_ad.grad(s2s_ad.grad(padded_scalar), wrt=1)(0.3, 0.5)


# -- user programs around these paths, against JAX -----------------------------------------------------


def _smooth(u, levels, kind):
    """A recursive smoother: each level pads with the edge value and averages neighbours."""
    if levels == 0:
        return u
    padded = np.pad(u, 1, mode="edge")
    if kind == "mean":
        inner = (padded[:-2] + padded[1:-1] + padded[2:]) / 3.0
    else:
        inner = np.maximum(np.maximum(padded[:-2], padded[1:-1]), padded[2:])
    return _smooth(inner, levels - 1, kind)


def smoothed_fit(params, target, kind="mean"):
    signal = np.tanh(params["w"] * target + params["b"])
    return np.sum((_smooth(signal, 2, kind) - target) ** 2) + 0.1 * np.sum(np.pad(params["w"], 1) ** 2)


def _smooth_jax(jnp, u, levels, kind):
    for _ in range(levels):
        padded = jnp.pad(u, 1, mode="edge")
        if kind == "mean":
            u = (padded[:-2] + padded[1:-1] + padded[2:]) / 3.0
        else:
            u = jnp.maximum(jnp.maximum(padded[:-2], padded[1:-1]), padded[2:])
    return u


@pytest.mark.parametrize("kind", ["mean", "max"])
def test_a_recursive_helper_with_a_dict_and_a_string_matches_jax(kind):
    jax = pytest.importorskip("jax")
    jax.config.update("jax_enable_x64", True)
    jnp = jax.numpy
    rng = np.random.default_rng(3)
    target = rng.normal(size=5)
    params = {"w": rng.normal(size=5), "b": 0.3}

    def reference(p):
        signal = jnp.tanh(p["w"] * target + p["b"])
        return jnp.sum((_smooth_jax(jnp, signal, 2, kind) - target) ** 2) + 0.1 * jnp.sum(jnp.pad(p["w"], 1) ** 2)

    expected = jax.grad(reference)(params)
    got = s2s_ad.grad(smoothed_fit)(params, target, kind)
    np.testing.assert_allclose(got["w"], expected["w"], rtol=1e-9, atol=1e-12)
    assert got["b"] == pytest.approx(float(expected["b"]), rel=1e-9)
    _, pull = s2s_ad.vjp(smoothed_fit, params, target, kind)
    d_params, d_target, d_kind = pull(1.0)
    np.testing.assert_allclose(d_params["w"], expected["w"], rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(d_target, jax.grad(lambda t: jnp.sum(
        (_smooth_jax(jnp, jnp.tanh(params["w"] * t + params["b"]), 2, kind) - t) ** 2))(target), rtol=1e-9, atol=1e-12)
    assert d_kind is None
    with pytest.raises(TypeError, match="kind = .* is a string"):
        s2s_ad.grad(smoothed_fit, wrt="kind")(params, target, kind)


# -- a user's file that declares a rule is checked as any other ---------------------------------------


def scaled_cube_root(x, y):
    return float(np.cbrt(x) * y)


@s2s_ad.adjoint(scaled_cube_root)
def _(out, x, y, d_out):  # no d_y: the rule gives no derivative in y
    d_x = d_out * y / (3.0 * np.cbrt(x) ** 2)


@s2s_ad.tangent(scaled_cube_root)
def _(out, x, y, t_x):
    t_out = t_x * y / (3.0 * np.cbrt(x) ** 2)


def uses_cube_root(x, y):
    return scaled_cube_root(x, y) * x


def pads_next_to_a_rule(a, c):
    return np.sum(np.pad(a, 1, constant_values=c) ** 2)


def test_a_file_declaring_a_rule_is_still_checked():
    """A file holding rules was taken for a template module and never checked: grad by ``np.pad``'s
    fill was 0.0.  The user's own rule keeps docs/api.md's promise: an input it gives no ``d_`` gets no
    gradient (zero), in both modes."""
    assert s2s_ad.grad(uses_cube_root, wrt=1)(2.0, 0.7) == 0.0
    assert s2s_ad.jvp(uses_cube_root, (2.0, 0.7), (0.0, 1.0))[1] == 0.0
    got = s2s_ad.grad(uses_cube_root)(2.0, 0.7)  # by x the rule's d_x is used
    assert got == pytest.approx(numeric_grad(uses_cube_root, (2.0, 0.7), 0), rel=1e-7)
    a = np.array([1.0, 2.0])
    with pytest.raises(s2s_ad.TransformError, match=rf":{_line_of(pads_next_to_a_rule)}:.*constant_values"):
        s2s_ad.grad(pads_next_to_a_rule, wrt=1)(a, 0.5)
    np.testing.assert_allclose(s2s_ad.grad(pads_next_to_a_rule)(a, 0.5), 2 * a)
