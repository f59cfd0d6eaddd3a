"""backend="numba": ``math.fmod``, ``math.remainder`` and ``math.cbrt`` compiled
(``targets/numba/rules/pymath.py``): CPython's numbers, bit for bit, and its ValueError where it raises.

Oracle: the ``math`` module itself, over ordinary values, ties, signs, zeros, infinities, NaN and
numbers far apart in size.
"""
from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

from conftest import compiled_by_numba, optional_import

numba = optional_import("numba")
pytestmark = pytest.mark.skipif(numba is None, reason="numba is not installed (pip install 's2s_ad[numba]')")

VALUES = [0.0, -0.0, 1.0, -1.0, 2.5, -2.5, 0.75, 3.0, 7.0, -7.5, 1e-300, 5e-324, 1e300, -1e300, 0.1, 0.3,
          math.pi, math.inf, -math.inf, math.nan, 4.5, 1.5, -4.5]


def _same(got, want):
    return (math.isnan(got) and math.isnan(want)) or (got == want and math.copysign(1, got) == math.copysign(1, want))


@pytest.mark.parametrize("name", ["fmod", "remainder"])
def test_fmod_and_remainder_are_cpythons_bit_for_bit(name):
    f = compiled_by_numba(f"def f(x, y):\n    return math.{name}(x, y)\n", {"math": math})
    python = getattr(math, name)
    for x, y in itertools.product(VALUES, VALUES):
        try:
            want = python(x, y)
        except ValueError:
            with pytest.raises(ValueError):
                f(x, y)
            continue
        got = f(x, y)
        assert _same(got, want), (name, x, y, got, want)
    assert f(7, 2) == python(7, 2)  # (ints, as Python takes them)


@pytest.mark.skipif(not hasattr(math, "cbrt"), reason="math.cbrt is Python 3.11's")
def test_cbrt_is_cpythons():
    f = compiled_by_numba("def f(x):\n    return math.cbrt(x)\n", {"math": math})
    for x in VALUES + list(np.random.default_rng(1).normal(size=200) * 1e3):
        want = math.cbrt(x)
        got = f(x)
        assert _same(got, want) or abs(got - want) <= 1e-15 * abs(want), (x, got, want)


def _wrapped_phases(x):
    total = 0.0
    for i in range(x.shape[0]):
        total += math.sin(math.fmod(x[i] * 3.0, 2.0 * math.pi)) * x[i] + math.remainder(x[i] * 4.0, 1.0) ** 2
    return total


def test_a_loop_of_math_calls_compiles_its_gradient_pullback_and_hessian():
    # math's functions are declared to give Python floats (returns_float), so the values a loop records
    # are proven float64 and the split form's tape and the Hessian's compile (no fallback)
    import warnings
    import s2s_ad
    from conftest import numeric_grad
    x = np.array([0.31, 0.77, 1.23, 2.2, 0.45])
    with warnings.catch_warnings():
        warnings.simplefilter("error", s2s_ad.CompileFallbackWarning)
        gradient = s2s_ad.grad(_wrapped_phases, backend="numba")(x)
        value, pull = s2s_ad.vjp(_wrapped_phases, x, backend="numba")
        pulled = pull(1.0)[0]
        hessian = s2s_ad.hessian(_wrapped_phases, backend="numba")(x)
    assert pull._split.handed
    np.testing.assert_allclose(gradient, numeric_grad(_wrapped_phases, (x,), 0), rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(pulled, gradient, rtol=1e-14, atol=1e-15)
    eps = 1e-6
    columns = [(s2s_ad.grad(_wrapped_phases)(x + eps * e) - s2s_ad.grad(_wrapped_phases)(x - eps * e)) / (2 * eps)
               for e in np.eye(x.size)]
    np.testing.assert_allclose(hessian, np.array(columns).T, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("name", ["digamma", "trigamma"])
def test_digamma_and_trigamma_compiled_are_the_helpers_bit_for_bit(name):
    from s2s_ad.targets.numba.rules.pymath import gamma_family
    helper = getattr(gamma_family, name)
    f = compiled_by_numba(f"def f(x):\n    return family.{name}(x)\n", {"family": gamma_family})
    rng = np.random.default_rng(3)
    points = VALUES + [-3.0, -0.5, -2.25, 9.999, 10.0, 12.5, 1e-8, -1e-8, 250.0, -250.5]
    points += list(rng.uniform(-20.0, 30.0, 200)) + [int(v) for v in (1, 2, 7, 40)]
    for x in points:
        try:
            want = helper(x)
        except ZeroDivisionError:  # (trigamma of 1e-300: 1 / x**2, x**2 gone to 0; run again as Python)
            with pytest.raises(ZeroDivisionError):
                f(x)
            continue
        got = f(x)
        assert _same(got, want), (name, x, got, want)
