"""backend="numba": the compiled np.linspace with ``endpoint=``, ``linspace_weights``, np.polyval and its
rules' helpers, ``as_full`` (np.convolve's and np.correlate's adjoints) and ``cross_grad`` (np.cross's).

Oracles: NumPy and the Python helpers, called on the same values: np.linspace, np.polyval and the
helpers built of products give NumPy's numbers bit for bit, ``polynomial_powers`` (NumPy's float power)
to rounding; where the compiled version leaves a case to Python it raises, as it says.  The gradients of
functions using them, compiled, against the Python backend and central differences are
benchmarks/numba_fallbacks.py's cases, run by tests/targets/test_numba_rule_coverage.py.
"""
from __future__ import annotations

import itertools

import numpy as np
import pytest

from conftest import compiled_by_numba, optional_import

numba = optional_import("numba")
pytestmark = pytest.mark.skipif(numba is None, reason="numba is not installed (pip install 's2s_ad[numba]')")

RNG = np.random.default_rng(11)


def _templates():
    from s2s_ad.targets.numba.rules.numpy_creation import creation
    from s2s_ad.targets.numba.rules.numpy_linalg import linalg
    from s2s_ad.targets.numba.rules.numpy_signal import signal
    return creation, signal, linalg


def _compiled(source):
    creation, signal, linalg = _templates()
    return compiled_by_numba(source, {"np": np, "creation": creation, "signal": signal, "linalg": linalg})


def _same(got, want):
    assert np.shape(got) == np.shape(want)
    np.testing.assert_array_equal(np.asarray(got), np.asarray(want))


def test_linspace_with_an_endpoint_flag_gives_numpys_points_bit_for_bit():
    points = _compiled("def f(a, b, n, e):\n    return np.linspace(a, b, n, endpoint=e)\n")
    ends = [(0.0, 1.0), (1.0, 2.0), (-3.7, 11.3), (2.5, 2.5), (1e300, -1e300), (5e-324, 1e-323), (0.1, 0.7)]
    ends += [tuple(RNG.normal(size=2) * 10) for _ in range(20)]
    for (a, b), n, endpoint in itertools.product(ends, [0, 1, 2, 3, 7, 50], [True, False]):
        _same(points(a, b, n, endpoint), np.linspace(a, b, n, endpoint=endpoint))
    _same(points(2, 9, 6, False), np.linspace(2, 9, 6, endpoint=False))  # (ints: float points)
    for endpoint in (True, False):
        with pytest.raises(ValueError):
            np.linspace(0.0, 1.0, -1, endpoint=endpoint)
        with pytest.raises(ValueError):
            points(0.0, 1.0, -1, endpoint)


def test_linspace_weights_compiled_are_the_helpers_shaped_against_the_points():
    creation = _templates()[0]
    weights = _compiled("def f(n, e, points):\n    return creation.linspace_weights(n, e, points)\n")
    alone = _compiled("def f(n, e):\n    return creation.linspace_weights(n, e)\n")
    for n, endpoint, trailing in itertools.product([0, 1, 2, 5, 9], [True, False], [(), (3,), (2, 4)]):
        points = np.zeros((n,) + trailing)
        _same(weights(n, endpoint, points), creation.linspace_weights(n, endpoint, points))
        _same(alone(n, endpoint), creation.linspace_weights(n, endpoint))
    assert weights(4, True, np.zeros((4, 2, 3))).shape == (4, 1, 1)


def test_polyval_of_a_vector_of_coefficients_is_numpys_bit_for_bit():
    at_number = _compiled("def f(p, x):\n    return np.polyval(p, x)\n")
    for count in (0, 1, 2, 5, 9):
        p = RNG.normal(size=count)
        for x in (0.0, 0.7, -2.3, 1e200, np.inf, 3):
            with np.errstate(over="ignore", invalid="ignore"):  # (1e200 ** 2, inf - inf: as NumPy gives them)
                want = np.polyval(p, x)
            got = at_number(p, x)
            assert np.isnan(want) and np.isnan(got) or got == want, (count, x)
        for shape in ((4,), (2, 3), (2, 1, 3)):
            x = RNG.normal(size=shape)
            _same(at_number(p, x), np.polyval(p, x))
            _same(at_number(p, x.T), np.polyval(p, x.T))  # (not contiguous)


def test_polyvals_rule_helpers_compiled_are_the_helpers():
    signal = _templates()[1]
    powers = _compiled("def f(p, x, out):\n    return signal.polynomial_powers(p, x, out)\n")
    derivative = _compiled("def f(p):\n    return signal.polynomial_derivative(p)\n")
    axes = _compiled("def f(p, out):\n    return signal.coefficient_axes(p, out)\n")
    for count in (1, 2, 4, 7):
        p = RNG.normal(size=count)
        _same(derivative(p), signal.polynomial_derivative(p))
        for x in (0.7, -1.9, RNG.normal(size=3), RNG.normal(size=(2, 3)).T):
            out = np.polyval(p, x)
            got, want = powers(p, x, out), signal.polynomial_powers(p, x, out)
            assert np.shape(got) == np.shape(want)
            np.testing.assert_allclose(got, want, rtol=4e-16, atol=0)
            assert axes(p, out) == signal.coefficient_axes(p, out)
    assert axes(np.zeros((3, 2)), np.zeros(2)) == signal.coefficient_axes(np.zeros((3, 2)), np.zeros(2))
    with pytest.raises(ValueError):
        powers(np.ones(3), np.ones(3), np.ones(4))


def test_as_full_places_every_modes_adjoint_where_the_helper_does():
    signal = _templates()[1]
    placed = _compiled("def f(grad, a, v, mode, correlating):\n    return signal.as_full(grad, a, v, mode, correlating)\n")
    for n, m, mode, correlating in itertools.product(range(1, 6), range(1, 6), ["full", "same", "valid"],
                                                      [False, True]):
        a, v = RNG.normal(size=n), RNG.normal(size=m)
        out = (np.correlate if correlating else np.convolve)(a, v, mode)
        grad = RNG.normal(size=out.shape)
        _same(placed(grad, a, v, mode, correlating), signal.as_full(grad, a, v, mode, correlating))
    with pytest.raises(ValueError):  # (longer than the full result: np.pad refuses the widths)
        signal.as_full(np.ones(9), np.ones(3), np.ones(2), "full", False)
    with pytest.raises(ValueError):
        placed(np.ones(9), np.ones(3), np.ones(2), "full", False)


CROSSES = [((3,), (3,), (3,)), ((4, 3), (4, 3), (4, 3)), ((4, 3), (3,), (4, 3)), ((4, 3), (4, 3), (3,)),
           ((2, 4, 3), (3,), (2, 4, 3)), ((2, 4, 3), (2, 4, 3), (3,))]


@pytest.mark.parametrize("grad_shape, other_shape, like_shape", CROSSES)
@pytest.mark.parametrize("sign", [1.0, -1.0])
def test_cross_grad_of_3_vectors_compiled_is_the_helpers(grad_shape, other_shape, like_shape, sign):
    linalg = _templates()[2]
    crossed = _compiled("def f(grad, other, like, sign):\n    return linalg.cross_grad(grad, other, like, -1, -1, -1, "
                        "None, sign)\n")
    grad, other, like = RNG.normal(size=grad_shape), RNG.normal(size=other_shape), np.zeros(like_shape)
    got, want = crossed(grad, other, like, sign), linalg.cross_grad(grad, other, like, -1, -1, -1, None, sign)
    assert got.shape == want.shape
    np.testing.assert_allclose(got, want, rtol=1e-15, atol=1e-15)
    if like.ndim == grad.ndim:
        _same(got, want)  # (nothing summed: the same products and differences)


def test_cross_grad_leaves_2_vectors_and_broadcast_rows_to_python_by_raising():
    linalg = _templates()[2]
    crossed = _compiled("def f(grad, other, like):\n    return linalg.cross_grad(grad, other, like, -1, -1, -1, None, 1.0)\n")
    with pytest.raises(ValueError, match="leaves to Python"):
        crossed(np.ones((4, 2)), np.ones((4, 2)), np.ones((4, 2)))
    with pytest.raises(ValueError, match="leaves to Python"):
        crossed(np.ones((4, 3)), np.ones((4, 3)), np.ones((1, 3)))
