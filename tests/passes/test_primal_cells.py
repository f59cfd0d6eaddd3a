"""The Python target's forward loops fill float64 vectors as lists of Python floats (s2s_ad/passes/primal_cells.py).

Each function is a time-stepping loop written into preallocated arrays, or one the pass must leave
alone.  Gradients are checked against central differences and against forward mode over the same
function (which computes with NumPy's scalars throughout), values against the function itself, bit
for bit; the code is read for the conversion.
"""
import numpy as np
import pytest

import s2s_ad
from conftest import numeric_grad


def pendulum(length, damping, observed, dt=0.01):
    n = observed.shape[0] - 1
    theta = np.zeros(n + 1)
    omega = np.zeros(n + 1)
    theta[0] = 1.0
    for t in range(n):
        theta[t + 1] = theta[t] + dt * omega[t]
        omega[t + 1] = omega[t] + dt * (-9.81 / length * np.sin(theta[t]) - damping * omega[t])
    return np.sum((theta - observed) ** 2)


def divided(length, observed):
    n = observed.shape[0] - 1
    x = np.ones(n + 1)
    for t in range(n):
        x[t + 1] = length / x[t] + 0.1
    return np.sum((x - observed) ** 2)


def summed_inside(length, observed):
    n = observed.shape[0] - 1
    x = np.zeros(n + 1)
    for t in range(n):
        x[t + 1] = x[t] * 0.9 + length + np.sum(x) * 0.01
    return np.sum((x - observed) ** 2)


def float32_made(length, observed):
    n = observed.shape[0] - 1
    x = np.zeros(n + 1, dtype=np.float32)
    for t in range(n):
        x[t + 1] = x[t] * 0.9 + length
    return np.sum((x - observed) ** 2)


OBSERVED = np.cos(np.linspace(0.0, 3.0, 60))


def _forward_mode_gradient(fn, args, k):
    tangents = tuple(1.0 if i == k else (np.zeros_like(a) if isinstance(a, np.ndarray) else 0.0)
                     for i, a in enumerate(args))
    return s2s_ad.jvp(fn, args, tangents)[1]


def test_a_pendulum_keeps_its_state_in_lists_and_its_gradient_is_forward_modes():
    df = s2s_ad.grad(pendulum, wrt=("length", "damping"))
    args = (1.2, 0.4, OBSERVED)
    source = df.source_for(*args)
    assert "theta = cells(theta, length, damping, observed, dt, d_out)" in source
    assert "omega[t_plus_1] = float(total_1)" in source
    assert "float64_as_float(sin, theta)" in source
    assert "theta = cells_array(theta)" in source
    got = df(*args)
    for k in range(2):
        assert got[k] == pytest.approx(_forward_mode_gradient(pendulum, args, k), rel=1e-12)
        np.testing.assert_allclose(got[k], numeric_grad(pendulum, list(args), k), rtol=1e-6)


def test_the_value_is_the_functions_bit_for_bit():
    value, _ = s2s_ad.value_and_grad(pendulum, wrt=("length", "damping"))(1.2, 0.4, OBSERVED)
    assert value == pendulum(1.2, 0.4, OBSERVED)


def test_a_float32_parameter_keeps_the_arrays_and_float64_precision():
    """A Python float times a float32 is a float32 (NEP 50): beside a float32 parameter the vectors stay
    arrays, and the gradient by the float64 parameter keeps float64's precision."""
    args = (np.float32(1.2), 0.4, OBSERVED)
    df = s2s_ad.grad(pendulum, wrt=("length", "damping"))
    got = df(*args)
    assert type(got[1]) in (float, np.float64)
    assert got[1] == pytest.approx(_forward_mode_gradient(pendulum, args, 1), rel=1e-12)
    assert got[0] == pytest.approx(_forward_mode_gradient(pendulum, args, 0), rel=1e-6)


@pytest.mark.parametrize("fn", [divided, summed_inside, float32_made])
def test_a_division_of_an_element_a_whole_array_read_or_another_dtype_leaves_the_array(fn):
    # (float32 arithmetic: the sweeps round apart, and the observations are float32 too, so that the
    # self-check, S2S_AD_CHECK=1, which reads the arguments' precision, allows float32's rounding)
    observed, rounding = (OBSERVED.astype(np.float32), 1e-5) if fn is float32_made else (OBSERVED, 1e-12)
    df = s2s_ad.grad(fn, wrt="length")
    assert "x = cells(x" not in df.source_for(0.7, observed)
    assert df(0.7, observed) == pytest.approx(_forward_mode_gradient(fn, (0.7, observed), 0), rel=rounding)
