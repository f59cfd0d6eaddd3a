"""The hand-written gradients of ``workloads.py`` in the subset of Python and NumPy that
``numba.njit`` compiles in nopython mode: the compiled reference, the limit for a compiled path.

Each ``f_grad`` here takes the same arguments as ``workloads.f_grad`` and returns the same tuple,
by the same arithmetic (the same forward pass, the same reverse sweep), only with what Numba
lacks written out: Python lists become preallocated arrays, ``np.pad`` and the ``keepdims``
reductions become loops, and the tuple a helper returns is inlined.  They are plain functions:
this module never imports Numba (``compiled.py`` compiles them when Numba is installed), and
``tests/project/test_benchmarks.py`` checks each, run as plain Python, against the NumPy hand gradient
to rounding, so what Numba compiles is the arithmetic that the finite-difference check covers.
"""
from __future__ import annotations

import math
from typing import Callable

import numpy as np

GRAVITY = 9.81  # as workloads.GRAVITY (Numba freezes module constants when it compiles)


def rational_grad(x: float, y: float) -> tuple[float, float]:
    """As ``workloads.rational_grad``: scalar code, already in Numba's subset."""
    plus_one, minus_y = x + 1.0, x - y
    inv = 1.0 / (x + y + 1.0)
    value = plus_one * minus_y * inv
    return (minus_y + plus_one - value) * inv, -(plus_one + value) * inv


def poly_loop_grad(r: float, x: float, n: int = 1000) -> tuple[float, float]:
    """As ``workloads.poly_loop_grad``, each step's input kept in an array."""
    inputs = np.empty(n)
    s = 0.5
    for i in range(n):
        inputs[i] = s
        s = r * s * (1.0 - s) + 0.001 * x
    d_s, d_r, sum_d_s = 1.0, 0.0, 0.0
    for i in range(n - 1, -1, -1):
        s = inputs[i]
        d_r += d_s * s * (1.0 - s)
        sum_d_s += d_s
        d_s *= r * (1.0 - 2.0 * s)
    return d_r, 0.001 * sum_d_s


def building_grad(heat: np.ndarray, outside: np.ndarray, t0: float, a: float, b: float, target: float,
                  c: float) -> tuple[np.ndarray]:
    """As ``workloads.building_grad``, the backward pass writing d heat[t] as it goes."""
    n = heat.shape[0]
    temp = np.zeros(n + 1)
    temp[0] = t0
    for t in range(n):
        temp[t + 1] = temp[t] + a * (outside[t] - temp[t]) + b * heat[t]
    keep = 1.0 - a
    carried = 0.0
    d_heat = np.empty(n)
    for t in range(n - 1, -1, -1):
        carried = carried * keep + 2.0 * (temp[t + 1] - target)
        d_heat[t] = b * carried + (2.0 * c) * heat[t]
    return (d_heat,)


def mlp_grad(w1: np.ndarray, w2: np.ndarray, x: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """As ``workloads.mlp_grad`` (matrix products, elementwise updates written as array expressions)."""
    hidden = np.tanh(x @ w1)
    d_pred = (hidden @ w2 - y) * (2.0 / y.size)
    d_w2 = hidden.T @ d_pred
    d_pre = (d_pred @ w2.T) * (1.0 - hidden * hidden)
    return x.T @ d_pre, d_w2


def deblur_grad(guess: np.ndarray, observed: np.ndarray) -> tuple[np.ndarray]:
    """As ``workloads.deblur_grad``: blur with the edge padding read through clamped indices, the
    residual scattered back over the nine shifts, and the padding's copies folded onto the border."""
    h, w = guess.shape
    padded = np.empty((h + 2, w + 2))
    for i in range(h + 2):
        for j in range(w + 2):
            padded[i, j] = guess[min(max(i - 1, 0), h - 1), min(max(j - 1, 0), w - 1)]
    d_padded = np.zeros((h + 2, w + 2))
    for i in range(h):
        for j in range(w):
            total = 0.0
            for di in range(3):
                for dj in range(3):
                    total += padded[i + di, j + dj]
            d_blur = (2.0 / 9.0) * (total / 9.0 - observed[i, j])
            for di in range(3):
                for dj in range(3):
                    d_padded[i + di, j + dj] += d_blur
    for j in range(w + 2):
        d_padded[1, j] += d_padded[0, j]
        d_padded[h, j] += d_padded[h + 1, j]
    for i in range(1, h + 1):
        d_padded[i, 1] += d_padded[i, 0]
        d_padded[i, w] += d_padded[i, w + 1]
    return (d_padded[1:h + 1, 1:w + 1].copy(),)


def rk4_grad(alpha: float, beta: float, gamma: float, delta: float, u0: float = 1.0, v0: float = 0.5,
             steps: int = 500, dt: float = 0.01) -> tuple[float, float, float, float]:
    """As ``workloads.rk4_grad``, the four points of each step kept in a steps x 8 array."""
    h2, h6 = 0.5 * dt, dt / 6.0
    points = np.empty((steps, 8))
    u, v = u0, v0
    for step in range(steps):
        k1u, k1v = alpha * u - beta * u * v, delta * u * v - gamma * v
        u2, v2 = u + h2 * k1u, v + h2 * k1v
        k2u, k2v = alpha * u2 - beta * u2 * v2, delta * u2 * v2 - gamma * v2
        u3, v3 = u + h2 * k2u, v + h2 * k2v
        k3u, k3v = alpha * u3 - beta * u3 * v3, delta * u3 * v3 - gamma * v3
        u4, v4 = u + dt * k3u, v + dt * k3v
        k4u, k4v = alpha * u4 - beta * u4 * v4, delta * u4 * v4 - gamma * v4
        points[step, 0], points[step, 1], points[step, 2], points[step, 3] = u, v, u2, v2
        points[step, 4], points[step, 5], points[step, 6], points[step, 7] = u3, v3, u4, v4
        u = u + h6 * (k1u + 2.0 * k2u + 2.0 * k3u + k4u)
        v = v + h6 * (k1v + 2.0 * k2v + 2.0 * k3v + k4v)
    bu, bv = 2.0 * (u - 1.0), v - 0.5
    d_alpha = d_beta = d_gamma = d_delta = 0.0
    for step in range(steps - 1, -1, -1):
        u, v, u2, v2 = points[step, 0], points[step, 1], points[step, 2], points[step, 3]
        u3, v3, u4, v4 = points[step, 4], points[step, 5], points[step, 6], points[step, 7]
        cu, cv = h6 * bu, h6 * bv
        uv = u4 * v4
        d_alpha += cu * u4
        d_beta -= cu * uv
        d_gamma -= cv * v4
        d_delta += cv * uv
        gu = cu * (alpha - beta * v4) + cv * delta * v4
        gv = cv * (delta * u4 - gamma) - cu * beta * u4
        new_bu, new_bv = bu + gu, bv + gv
        cu, cv = 2.0 * h6 * bu + dt * gu, 2.0 * h6 * bv + dt * gv
        uv = u3 * v3
        d_alpha += cu * u3
        d_beta -= cu * uv
        d_gamma -= cv * v3
        d_delta += cv * uv
        gu = cu * (alpha - beta * v3) + cv * delta * v3
        gv = cv * (delta * u3 - gamma) - cu * beta * u3
        new_bu, new_bv = new_bu + gu, new_bv + gv
        cu, cv = 2.0 * h6 * bu + h2 * gu, 2.0 * h6 * bv + h2 * gv
        uv = u2 * v2
        d_alpha += cu * u2
        d_beta -= cu * uv
        d_gamma -= cv * v2
        d_delta += cv * uv
        gu = cu * (alpha - beta * v2) + cv * delta * v2
        gv = cv * (delta * u2 - gamma) - cu * beta * u2
        new_bu, new_bv = new_bu + gu, new_bv + gv
        cu, cv = h6 * bu + h2 * gu, h6 * bv + h2 * gv
        uv = u * v
        d_alpha += cu * u
        d_beta -= cu * uv
        d_gamma -= cv * v
        d_delta += cv * uv
        bu = new_bu + cu * (alpha - beta * v) + cv * delta * v
        bv = new_bv + cv * (delta * u - gamma) - cu * beta * u
    return d_alpha, d_beta, d_gamma, d_delta


def logsumexp_ce_grad(logits: np.ndarray, onehot: np.ndarray) -> tuple[np.ndarray]:
    """As ``workloads.logsumexp_ce_grad``, row by row: (softmax - onehot) / rows.  (Numba's exp is
    the scalar one of the C library, where NumPy's is vectorised: on this workload the compiled
    reference is slower than the NumPy one.)"""
    rows, columns = logits.shape
    gradient = np.empty((rows, columns))
    scale = 1.0 / rows
    for i in range(rows):
        largest = logits[i, 0]
        for j in range(1, columns):
            largest = max(largest, logits[i, j])
        total = 0.0
        for j in range(columns):
            e = math.exp(logits[i, j] - largest)
            gradient[i, j] = e
            total += e
        for j in range(columns):
            gradient[i, j] = (gradient[i, j] / total - onehot[i, j]) * scale
    return (gradient,)


def pendulum_grad(length: float, damping: float, observed: np.ndarray, theta0: float = 1.0,
                  dt: float = 0.01) -> tuple[float, float]:
    """As ``workloads.pendulum_grad``, the backward pass reading the arrays directly."""
    n = observed.shape[0] - 1
    theta = np.zeros(n + 1)
    omega = np.zeros(n + 1)
    theta[0] = theta0
    for t in range(n):
        theta[t + 1] = theta[t] + dt * omega[t]
        omega[t + 1] = omega[t] + dt * (-GRAVITY / length * np.sin(theta[t]) - damping * omega[t])
    pull = GRAVITY / length
    keep = 1.0 - dt * damping
    d_theta, d_omega = 2.0 * (theta[n] - observed[n]), 0.0
    d_length = d_damping = 0.0
    for t in range(n - 1, -1, -1):
        step_omega = dt * d_omega
        d_length += step_omega * pull / length * math.sin(theta[t])
        d_damping -= step_omega * omega[t]
        d_theta, d_omega = (d_theta - step_omega * pull * math.cos(theta[t]) + 2.0 * (theta[t] - observed[t]),
                            dt * d_theta + keep * d_omega)
    return d_length, d_damping


TWINS: dict[str, Callable[..., tuple]] = {"rational": rational_grad, "poly_loop": poly_loop_grad, "building": building_grad, "mlp": mlp_grad,
         "deblur": deblur_grad, "rk4": rk4_grad, "logsumexp_ce": logsumexp_ce_grad, "pendulum": pendulum_grad}
