"""``np.pad`` in every mode NumPy has (issue 18 part 4, and the np.pad item of issue 22).

Issue 18: with ``mode="maximum"``, ``"minimum"`` or ``"median"`` "the tangent rule pads with the order
statistic of the tangent instead of the tangent at the primal's order statistic (jvp, forward-mode
jacobian and hessian are wrong)".  Issue 22: "every np.pad mode in reverse mode (today all but constant
and edge raise a ValueError at run time)"; a mode that cannot be supported (a padding function) is
refused.  Oracles: JAX (``jnp.pad`` has every mode but a function), central differences.
"""
from __future__ import annotations

import numpy as np
import pytest

import s2s_ad
from conftest import numeric_grad

jax = pytest.importorskip("jax")
jnp = jax.numpy
jax.config.update("jax_enable_x64", True)

# (mode, pad_width, keywords) on a 3 x 4 matrix: each mode, with its options.
PADS = [
    ("constant", ((1, 2), (0, 3)), {}),
    ("constant", 2, {"constant_values": 1.5}),
    ("edge", ((2, 1), (1, 2)), {}),
    ("reflect", ((2, 1), (3, 2)), {}),
    ("reflect", ((4, 5), (1, 0)), {"reflect_type": "odd"}),
    ("symmetric", ((1, 3), (2, 2)), {}),
    ("symmetric", 5, {"reflect_type": "odd"}),
    ("wrap", ((4, 2), (5, 1)), {}),
    ("mean", 2, {}),
    ("mean", ((1, 2), (2, 1)), {"stat_length": ((2, 3), (1, 2))}),
    ("linear_ramp", ((2, 1), (1, 2)), {}),
    ("linear_ramp", 3, {"end_values": ((0.5, -1.0), (2.0, 0.0))}),
    ("maximum", 2, {}),
    ("maximum", ((1, 0), (2, 1)), {"stat_length": 2}),
    ("minimum", ((2, 1), (0, 2)), {}),
    ("minimum", 1, {"stat_length": ((1, 3), (2, 2))}),
    ("median", ((2, 2), (1, 1)), {}),  # 3 rows: the middle one; 4 columns: the mean of the middle two
    ("median", 2, {"stat_length": ((2, 3), (3, 4))}),
]
IDS = [f"{mode}-{i}" for i, (mode, _, _) in enumerate(PADS)]
X = np.array([[0.3, -0.8, 0.5, 1.1], [0.9, 0.2, -0.4, 0.7], [-0.6, 1.3, 0.1, -0.2]])


# One function per keyword np.pad is given (s2s_ad takes keywords one by one, not **options).
def sines_plain(x, pad_width, mode):
    return np.sum(np.sin(np.pad(x * x, pad_width, mode)) * np.cos(x[0, 0]))


def sines_constant_values(x, pad_width, mode, value):
    return np.sum(np.sin(np.pad(x * x, pad_width, mode, constant_values=value)) * np.cos(x[0, 0]))


def sines_reflect_type(x, pad_width, mode, value):
    return np.sum(np.sin(np.pad(x * x, pad_width, mode, reflect_type=value)) * np.cos(x[0, 0]))


def sines_stat_length(x, pad_width, mode, value):
    return np.sum(np.sin(np.pad(x * x, pad_width, mode, stat_length=value)) * np.cos(x[0, 0]))


def sines_end_values(x, pad_width, mode, value):
    return np.sum(np.sin(np.pad(x * x, pad_width, mode, end_values=value)) * np.cos(x[0, 0]))


def values_plain(x, pad_width, mode):  # many outputs from 12 inputs: jacobian runs forward mode
    return np.ravel(np.pad(np.exp(x), pad_width, mode))


def values_with(x, pad_width, mode, stat_length):
    return np.ravel(np.pad(np.exp(x), pad_width, mode, stat_length=stat_length))


SINES = {None: sines_plain, "constant_values": sines_constant_values, "reflect_type": sines_reflect_type,
         "stat_length": sines_stat_length, "end_values": sines_end_values}


def _sines(pad_width, mode, options):
    """The s2s_ad function and its arguments after x, for these options."""
    (key, value), = options.items() if options else ((None, None),)
    return SINES[key], (pad_width, mode) + (() if key is None else (value,))


def _sines_jax(pad_width, mode, options):
    return lambda x: jnp.sum(jnp.sin(jnp.pad(x * x, pad_width, mode, **options)) * jnp.cos(x[0, 0]))


def _values(pad_width, mode, options):
    if "stat_length" in options:
        return values_with, (pad_width, mode, options["stat_length"])
    return values_plain, (pad_width, mode)


def _values_jax(pad_width, mode, options):
    stat = {"stat_length": options["stat_length"]} if "stat_length" in options else {}
    return lambda x: jnp.ravel(jnp.pad(jnp.exp(x), pad_width, mode, **stat))


@pytest.mark.parametrize("mode, pad_width, options", PADS, ids=IDS)
def test_every_pad_mode_works_in_reverse_mode(mode, pad_width, options):
    f, rest = _sines(pad_width, mode, options)
    f_jax = _sines_jax(pad_width, mode, options)
    want = np.asarray(jax.grad(f_jax)(X))
    np.testing.assert_allclose(f(X, *rest), f_jax(X), rtol=1e-12)
    np.testing.assert_allclose(want, numeric_grad(lambda x: f(x, *rest), (X,), 0), rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(s2s_ad.grad(f)(X, *rest), want, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("mode, pad_width, options", PADS, ids=IDS)
def test_pad_tangent_is_the_tangent_at_the_primals_order_statistic(mode, pad_width, options):
    """jvp, forward-mode jacobian and hessian, in every mode (maximum, minimum and median were wrong)."""
    direction = np.cos(np.arange(12.0)).reshape(3, 4)
    f, rest = _sines(pad_width, mode, options)
    f_jax = _sines_jax(pad_width, mode, options)
    _, directional = s2s_ad.jvp(f, (X,) + rest, (direction,) + (None,) * len(rest))
    np.testing.assert_allclose(directional, jax.jvp(f_jax, (X,), (direction,))[1], rtol=1e-10, atol=1e-12)
    if mode not in ("maximum", "minimum", "median", "mean", "linear_ramp"):
        return  # (the linear modes' tangent is np.pad of the tangent: jvp covers it; second order costs seconds)
    values, values_rest = _values(pad_width, mode, options)
    want = np.asarray(jax.jacfwd(_values_jax(pad_width, mode, options))(X))
    np.testing.assert_allclose(s2s_ad.jacobian(values)(X, *values_rest), want, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(s2s_ad.hessian(f)(X, *rest), np.asarray(jax.hessian(f_jax)(X)), rtol=1e-9,
                               atol=1e-10)


def maximum_padded_tangent(x):
    return np.pad(x, 1, mode="maximum")


def test_maximum_pad_tangent_copies_the_tangent_of_the_largest_element():
    x, t = np.array([0.1, 0.9, 0.4]), np.array([5.0, 1.0, -3.0])  # the largest tangent is not at the largest x
    _, tangent = s2s_ad.jvp(maximum_padded_tangent, (x,), (t,))
    np.testing.assert_allclose(tangent, [1.0, 5.0, 1.0, -3.0, 1.0])


def border_of_ones(vector, pad_width, iaxis, kwargs):
    vector[:pad_width[0]] = 1.0
    vector[len(vector) - pad_width[1]:] = 1.0


def padded_by_a_function(x):
    return np.sum(np.pad(x, 2, border_of_ones) ** 2)


def padded_by_an_unknown_mode(x):
    return np.sum(np.pad(x, 2, "circular") ** 2)


def padded_empty_border_cut_off(x):
    return np.sum(np.pad(x * x, 2, "empty")[2:-2] ** 2)


def test_pad_with_a_function_or_an_unknown_mode_is_refused_at_transform_time():
    with pytest.raises(s2s_ad.TransformError, match=r"test_pad_every_mode.py:\d+.*np.pad"):
        s2s_ad.grad(padded_by_a_function)(np.ones(3))
    with pytest.raises(s2s_ad.TransformError, match=r"test_pad_every_mode.py:\d+.*no mode 'circular'"):
        s2s_ad.grad(padded_by_an_unknown_mode)(np.ones(3))


def test_empty_pad_border_carries_no_derivative():
    x = np.array([0.3, -0.7, 1.2])
    np.testing.assert_allclose(s2s_ad.grad(padded_empty_border_cut_off)(x), 4.0 * x ** 3)
