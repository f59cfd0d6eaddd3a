"""backend="numba": np.trapezoid's adjoint compiled (``pair_means``, ``pair_means_transpose``,
``trapezoid_widths``, ``trapezoid_width_adjoint`` in ``targets/numba/rules/numpy_signal.py``, and
np.expand_dims of a number in ``numpy_shape.py``).

Oracles: the Python helpers and NumPy on the same arrays; gradients of functions integrating with
np.trapezoid, compiled (asserted: no fallback), against central differences.
"""
from __future__ import annotations


import numpy as np
import pytest

from conftest import check_compiled_gradient, compiled_by_numba, module_from_source, optional_import

numba = optional_import("numba")
pytestmark = pytest.mark.skipif(numba is None, reason="numba is not installed (pip install 's2s_ad[numba]')")

RNG = np.random.default_rng(5)


def _compiled(source):
    """``f`` of ``source`` compiled by Numba, reading NumPy and the template's helpers."""
    return compiled_by_numba(source, {"np": np, "signal": _signal()})


def _signal():
    from s2s_ad.targets.numba.rules.numpy_signal import signal
    return signal


@pytest.mark.parametrize("shape, axis", [((5,), -1), ((5,), 0), ((3, 4), 0), ((3, 4), -1), ((2, 3, 4), 1)])
def test_pair_means_and_their_transpose_are_the_helpers(shape, axis):
    y = RNG.normal(size=shape)
    got = _compiled(f"def f(y):\n    return signal.pair_means(y, {axis})\n")(y)
    np.testing.assert_allclose(got, _signal().pair_means(y, axis), rtol=1e-15)
    grad = RNG.normal(size=got.shape)
    back = _compiled(f"def f(g):\n    return signal.pair_means_transpose(g, {axis})\n")(grad)
    want = _signal().pair_means_transpose(grad, axis)
    assert back.shape == want.shape
    np.testing.assert_allclose(back, want, rtol=1e-15)


def test_widths_and_their_adjoint_are_the_helpers():
    y, x, grad = RNG.normal(size=6), np.cumsum(RNG.uniform(0.1, 1.0, size=6)), RNG.normal(size=5)
    widths = _compiled("def f(y, x):\n    return signal.trapezoid_widths(y, x, 1.0, -1)\n")(y, x)
    np.testing.assert_array_equal(widths, _signal().trapezoid_widths(y, x, 1.0, -1))
    assert _compiled("def f(y):\n    return signal.trapezoid_widths(y, None, 0.25, 0)\n")(y) == 0.25
    back = _compiled("def f(g, y, x):\n    return signal.trapezoid_width_adjoint(g, y, x, -1)\n")(grad, y, x)
    np.testing.assert_allclose(back, _signal().trapezoid_width_adjoint(grad, y, x, -1), rtol=1e-15)
    assert _compiled("def f(g, y):\n    return signal.trapezoid_width_adjoint(g, y, None, -1)\n")(grad, y) == 0.0


@pytest.mark.parametrize("shape, axis, dx", [((5,), 0, 0.5), ((3, 4), 0, 1.0), ((3, 4), -1, 0.25), ((2, 3, 4), 1, 2.0)])
def test_trapezoid_along_an_axis_is_numpys(shape, axis, dx):
    y = RNG.normal(size=shape)
    got = _compiled(f"def f(y):\n    return np.trapezoid(y, dx={dx}, axis={axis})\n")(y)
    np.testing.assert_allclose(got, np.trapezoid(y, dx=dx, axis=axis), rtol=1e-14)
    x = np.cumsum(RNG.uniform(0.1, 1.0, size=5))
    sampled = _compiled("def f(y, x):\n    return np.trapezoid(y, x, axis=0)\n")(y.ravel()[:5], x)
    np.testing.assert_allclose(sampled, np.trapezoid(y.ravel()[:5], x, axis=0), rtol=1e-14)


def test_expand_dims_of_a_number_is_numpys():
    f = _compiled("def f(a):\n    return np.expand_dims(a, -1), np.expand_dims(a, 0)\n")
    for got in f(2.5):
        np.testing.assert_array_equal(got, np.expand_dims(2.5, -1))
    with pytest.raises(ValueError):
        _compiled("def f(a):\n    return np.expand_dims(a, 1)\n")(2.5)


PROGRAMS = '''
import numpy as np

def energy(x):
    y = np.sin(x) * x
    return np.trapezoid(y, dx=0.1) + np.trapezoid(y ** 2, np.cumsum(x * x + 0.5))

def integrated_rows(x):
    M = np.outer(x, np.cos(x))
    return np.sum(np.trapezoid(M, axis=0) ** 2) + np.sum(np.trapezoid(M * M, dx=0.5, axis=1))

def running_integral(x):
    total = 0.0
    for k in range(2, 5):
        total = total + np.trapezoid(np.exp(-x[:k] ** 2), x[:k] * 2.0 + np.arange(k))
    return total
'''


@pytest.mark.parametrize("name", ["energy", "integrated_rows", "running_integral"])
def test_gradients_of_trapezoids_compile_and_agree_with_differences(name, tmp_path_factory):
    fn = getattr(module_from_source(tmp_path_factory.mktemp("trapezoid"), "trapezoid_", PROGRAMS), name)
    check_compiled_gradient(fn, np.array([0.7, -1.1, 0.4, 1.3]))
