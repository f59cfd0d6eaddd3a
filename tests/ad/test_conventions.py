"""Derivatives at points where there is no derivative, or where a formula would divide by zero.

The choices follow JAX (checked against JAX 0.10.2) unless a comment says
why not; docs/conventions.md lists them.
"""
import math
import warnings

import numpy as np
import pytest

import s2s_ad


def absolute(x):
    return abs(x)


def numpy_absolute(x):
    return np.sum(np.abs(x))


def fabs(x):
    return math.fabs(x)


def builtin_max(x, y):
    return max(x, y)


def numpy_maximum(x, y):
    return np.sum(np.maximum(x, y))


def reduce_max(x):
    return np.max(x)


def numpy_sqrt(x):
    return np.sum(np.sqrt(x))


def math_sqrt(x):
    return math.sqrt(x)


def masked_sqrt(x):
    return np.sum(np.where(x > 0, np.sqrt(x), 0.0))


def constant_power(x):
    return x ** 0.0


def zero_base(y):
    return 0.0 ** y


def product(x):
    return np.prod(x)


def clipped(x):
    return np.sum(np.clip(x, 0.0, 1.0))


@pytest.mark.parametrize("f", [absolute, fabs])
def test_abs_at_zero_is_one(f):
    assert s2s_ad.grad(f)(0.0) == 1.0  # JAX: select(x >= 0, g, -g)
    assert s2s_ad.jvp(f, (0.0,), (1.0,))[1] == 1.0


def test_numpy_abs_at_zero_is_one():
    np.testing.assert_array_equal(s2s_ad.grad(numpy_absolute)(np.array([0.0, -2.0, 3.0])), [1.0, -1.0, 1.0])


def test_ties_split_evenly():
    assert s2s_ad.grad(builtin_max, wrt=(0, 1))(1.0, 1.0) == (0.5, 0.5)
    grads = s2s_ad.grad(numpy_maximum, wrt=(0, 1))(np.array([1.0, 2.0]), np.array([1.0, 0.0]))
    np.testing.assert_array_equal(grads[0], [0.5, 1.0])
    np.testing.assert_array_equal(grads[1], [0.5, 0.0])
    np.testing.assert_array_equal(s2s_ad.grad(reduce_max)(np.array([1.0, 1.0, 0.5])), [0.5, 0.5, 0.0])


def test_sqrt_at_zero_is_infinite_for_numpy_values():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        np.testing.assert_array_equal(s2s_ad.grad(numpy_sqrt)(np.array([0.0, 4.0])), [np.inf, 0.25])


def test_sqrt_at_zero_on_python_floats_raises():
    # Python float division raises where NumPy returns inf; JAX returns inf.  Documented.
    with pytest.raises(ZeroDivisionError):
        s2s_ad.grad(math_sqrt)(0.0)


def test_a_masked_nan_branch_gives_nan_as_in_jax():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        got = s2s_ad.grad(masked_sqrt)(np.array([-1.0, 4.0]))
    assert np.isnan(got[0]) and got[1] == 0.25  # use np.where on the input (sqrt(where(x > 0, x, 1))) to avoid it


def test_powers_and_products_at_zero():
    assert s2s_ad.grad(constant_power)(0.0) == 0.0  # x ** 0 is constant (JAX gives nan here)
    assert s2s_ad.grad(zero_base)(2.0) == 0.0  # as JAX
    np.testing.assert_array_equal(s2s_ad.grad(product)(np.array([0.0, 2.0, 3.0])), [6.0, 0.0, 0.0])  # as JAX


def test_clip_passes_the_derivative_at_its_bounds():
    # NumPy's clip keeps a value equal to a bound: the derivative passes (1).  JAX, which clips by
    # maximum then minimum, splits the tie and gives 0.5.
    np.testing.assert_array_equal(s2s_ad.grad(clipped)(np.array([0.0, 0.5, 1.0, 2.0])), [1.0, 1.0, 1.0, 0.0])
