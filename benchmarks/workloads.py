"""Benchmark workloads: plain Python/NumPy functions, each with a hand-written gradient beside it.

Every primal ``f`` is written the way a person would write it, with no
knowledge of automatic differentiation.  ``f_grad`` takes the same arguments
and returns a tuple with one gradient per differentiated argument (those its
case in ``cases.py`` lists in ``wrt``), written by hand as a careful reverse
sweep.
``python -m benchmarks --check`` compares each of them, and s2s_ad's
gradient, with central finite differences.

s2s_ad reads these functions' source with ``inspect``: they must stay in a
``.py`` file, at module level.
"""
from __future__ import annotations

import numpy as np


# -- rational: (x + 1)(x - y) / (x + y + 1) on floats --------------------------

def rational(x: float, y: float) -> float:
    """(x + 1)(x - y) / (x + y + 1)."""
    return (x + 1.0) * (x - y) / (x + y + 1.0)


def rational_grad(x: float, y: float) -> tuple[float, float]:
    """Quotient rule: d/dx = ((x - y) + (x + 1)) / den - num / den**2, d/dy = -(x + 1) / den - num / den**2."""
    num = (x + 1.0) * (x - y)
    den = x + y + 1.0
    inv = 1.0 / den
    q = num * inv * inv                     # num / den**2
    d_x = ((x - y) + (x + 1.0)) * inv - q
    d_y = -(x + 1.0) * inv - q
    return d_x, d_y


# -- poly_loop: s <- r s (1 - s) + 0.001 x, n times ------------------------------

def poly_loop(r: float, x: float, n: int = 1000) -> float:
    """The logistic-map recurrence with a small drive, after n steps."""
    s = 0.5
    for i in range(n):
        s = r * s * (1.0 - s) + 0.001 * x
    return s


def poly_loop_grad(r: float, x: float, n: int = 1000) -> tuple[float, float]:
    """Forward pass keeping every s, then the reverse sweep: ds'/ds = r (1 - 2s), ds'/dr = s (1 - s)."""
    states = [0.5] * (n + 1)
    s = 0.5
    for i in range(n):
        s = r * s * (1.0 - s) + 0.001 * x
        states[i + 1] = s
    d_s, d_r, d_x = 1.0, 0.0, 0.0
    for i in range(n - 1, -1, -1):
        s = states[i]
        d_r += d_s * s * (1.0 - s)
        d_x += d_s * 0.001
        d_s = d_s * r * (1.0 - 2.0 * s)
    return d_r, d_x


# -- building: heating a building for n steps, cost of comfort and energy -------

def building(heat: np.ndarray, outside: np.ndarray, t0: float, a: float, b: float, target: float,
             c: float) -> float:
    """Temperature driven by the outside and the heating; cost of missing the target plus of energy."""
    n = heat.shape[0]
    temp = np.zeros(n + 1)
    temp[0] = t0
    for t in range(n):
        temp[t + 1] = temp[t] + a * (outside[t] - temp[t]) + b * heat[t]
    return np.sum((temp - target) ** 2) + c * np.sum(heat ** 2)


def building_grad(heat: np.ndarray, outside: np.ndarray, t0: float, a: float, b: float, target: float,
                  c: float) -> tuple[np.ndarray]:
    """The recurrence is linear: one backward pass carries d cost / d temp[t + 1] through (1 - a)."""
    n = heat.shape[0]
    temp = np.zeros(n + 1)
    temp[0] = t0
    for t in range(n):
        temp[t + 1] = temp[t] + a * (outside[t] - temp[t]) + b * heat[t]
    d_temp = 2.0 * (temp - target)          # adjoint of each temperature, from the cost alone
    d_heat = 2.0 * c * heat
    carried = 0.0                           # adjoint flowing back into temp[t + 1]
    for t in range(n - 1, -1, -1):
        carried += d_temp[t + 1]
        d_heat[t] += b * carried
        carried *= 1.0 - a
    return (d_heat,)


# -- mlp: two tanh/linear layers, mean squared error -----------------------------

def mlp(w1: np.ndarray, w2: np.ndarray, x: np.ndarray, y: np.ndarray) -> float:
    """Mean squared error of tanh(x @ w1) @ w2 against y."""
    hidden = np.tanh(x @ w1)
    pred = hidden @ w2
    return np.mean((pred - y) ** 2)


def mlp_grad(w1: np.ndarray, w2: np.ndarray, x: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Backpropagation through the two layers; tanh' = 1 - tanh**2."""
    hidden = np.tanh(x @ w1)
    pred = hidden @ w2
    d_pred = (2.0 / pred.size) * (pred - y)
    d_w2 = hidden.T @ d_pred
    d_pre = (d_pred @ w2.T) * (1.0 - hidden * hidden)
    d_w1 = x.T @ d_pre
    return d_w1, d_w2


# -- deblur: how far the blurred guess is from the observed image ----------------

def blur3x3(image: np.ndarray) -> np.ndarray:
    """The mean of each pixel's 3x3 neighbourhood, the border extended by its edge values."""
    h, w = image.shape
    padded = np.pad(image, 1, mode="edge")
    total = np.zeros((h, w))
    for i in range(3):
        for j in range(3):
            total = total + padded[i:i + h, j:j + w]
    return total / 9.0


def deblur(guess: np.ndarray, observed: np.ndarray) -> float:
    """How far the blurred guess is from the observed image."""
    return np.sum((blur3x3(guess) - observed) ** 2)


def deblur_grad(guess: np.ndarray, observed: np.ndarray) -> tuple[np.ndarray]:
    """Scatter the residual back over the 9 shifts, then fold the edge padding onto the border."""
    h, w = guess.shape
    d_blur = (2.0 / 9.0) * (blur3x3(guess) - observed)
    d_padded = np.zeros((h + 2, w + 2))
    for i in range(3):
        for j in range(3):
            d_padded[i:i + h, j:j + w] += d_blur
    d_padded[1, :] += d_padded[0, :]        # edge padding copied the first and last rows ...
    d_padded[h, :] += d_padded[h + 1, :]
    d_padded[1:h + 1, 1] += d_padded[1:h + 1, 0]      # ... and then the first and last columns
    d_padded[1:h + 1, w] += d_padded[1:h + 1, w + 1]
    return (d_padded[1:h + 1, 1:w + 1],)


# -- rk4: Lotka-Volterra integrated by classic Runge-Kutta -----------------------

def lotka_volterra(u: float, v: float, alpha: float, beta: float, gamma: float,
                   delta: float) -> tuple[float, float]:
    """Time derivatives of prey u and predators v."""
    return alpha * u - beta * u * v, delta * u * v - gamma * v


def rk4(alpha: float, beta: float, gamma: float, delta: float, u0: float = 1.0, v0: float = 0.5,
        steps: int = 500, dt: float = 0.01) -> float:
    """Integrate Lotka-Volterra by classic RK4; a smooth loss of the final state."""
    u, v = u0, v0
    for step in range(steps):
        k1u, k1v = lotka_volterra(u, v, alpha, beta, gamma, delta)
        k2u, k2v = lotka_volterra(u + 0.5 * dt * k1u, v + 0.5 * dt * k1v, alpha, beta, gamma, delta)
        k3u, k3v = lotka_volterra(u + 0.5 * dt * k2u, v + 0.5 * dt * k2v, alpha, beta, gamma, delta)
        k4u, k4v = lotka_volterra(u + dt * k3u, v + dt * k3v, alpha, beta, gamma, delta)
        u = u + dt / 6.0 * (k1u + 2.0 * k2u + 2.0 * k3u + k4u)
        v = v + dt / 6.0 * (k1v + 2.0 * k2v + 2.0 * k3v + k4v)
    return (u - 1.0) ** 2 + 0.5 * (v - 0.5) ** 2


def lotka_volterra_vjp(u: float, v: float, gu: float, gv: float, params: tuple, d_params: list) -> tuple:
    """Pull (gu, gv) back through ``lotka_volterra`` at (u, v): return the state's part and add
    the parameters' part into the list ``d_params``."""
    alpha, beta, gamma, delta = params
    d_params[0] += gu * u
    d_params[1] -= gu * u * v
    d_params[2] -= gv * v
    d_params[3] += gv * u * v
    return gu * (alpha - beta * v) + gv * delta * v, gv * (delta * u - gamma) - gu * beta * u


def rk4_grad(alpha: float, beta: float, gamma: float, delta: float, u0: float = 1.0, v0: float = 0.5,
             steps: int = 500, dt: float = 0.01) -> tuple[float, float, float, float]:
    """Keep each step's start state; reverse each step by recomputing its stages and pulling
    the adjoint back through k4, k3, k2, k1 in turn."""
    p = (alpha, beta, gamma, delta)
    states = [(u0, v0)]
    u, v = u0, v0
    for step in range(steps):
        k1u, k1v = lotka_volterra(u, v, *p)
        k2u, k2v = lotka_volterra(u + 0.5 * dt * k1u, v + 0.5 * dt * k1v, *p)
        k3u, k3v = lotka_volterra(u + 0.5 * dt * k2u, v + 0.5 * dt * k2v, *p)
        k4u, k4v = lotka_volterra(u + dt * k3u, v + dt * k3v, *p)
        u = u + dt / 6.0 * (k1u + 2.0 * k2u + 2.0 * k3u + k4u)
        v = v + dt / 6.0 * (k1v + 2.0 * k2v + 2.0 * k3v + k4v)
        states.append((u, v))
    d_params = [0.0, 0.0, 0.0, 0.0]
    bu, bv = 2.0 * (u - 1.0), v - 0.5
    for step in range(steps - 1, -1, -1):
        u, v = states[step]                 # recompute the stages of this step
        k1u, k1v = lotka_volterra(u, v, *p)
        u2, v2 = u + 0.5 * dt * k1u, v + 0.5 * dt * k1v
        k2u, k2v = lotka_volterra(u2, v2, *p)
        u3, v3 = u + 0.5 * dt * k2u, v + 0.5 * dt * k2v
        k3u, k3v = lotka_volterra(u3, v3, *p)
        u4, v4 = u + dt * k3u, v + dt * k3v
        g4u, g4v = lotka_volterra_vjp(u4, v4, dt / 6.0 * bu, dt / 6.0 * bv, p, d_params)
        g3u, g3v = lotka_volterra_vjp(u3, v3, dt / 3.0 * bu + dt * g4u, dt / 3.0 * bv + dt * g4v, p, d_params)
        g2u, g2v = lotka_volterra_vjp(u2, v2, dt / 3.0 * bu + 0.5 * dt * g3u, dt / 3.0 * bv + 0.5 * dt * g3v,
                                      p, d_params)
        g1u, g1v = lotka_volterra_vjp(u, v, dt / 6.0 * bu + 0.5 * dt * g2u, dt / 6.0 * bv + 0.5 * dt * g2v,
                                      p, d_params)
        bu, bv = bu + g4u + g3u + g2u + g1u, bv + g4v + g3v + g2v + g1v
    return tuple(d_params)


# -- logsumexp_ce: softmax cross-entropy, numerically stable ---------------------

def logsumexp_ce(logits: np.ndarray, onehot: np.ndarray) -> float:
    """Mean softmax cross-entropy, with the row maximum subtracted before exp."""
    shifted = logits - np.max(logits, axis=1, keepdims=True)
    log_norm = np.log(np.sum(np.exp(shifted), axis=1, keepdims=True))
    return -np.sum(onehot * (shifted - log_norm)) / logits.shape[0]


def logsumexp_ce_grad(logits: np.ndarray, onehot: np.ndarray) -> tuple[np.ndarray]:
    """(softmax - onehot) / rows; the maximum's contribution cancels exactly, so it is left out."""
    shifted = logits - np.max(logits, axis=1, keepdims=True)
    e = np.exp(shifted)
    softmax = e / np.sum(e, axis=1, keepdims=True)
    return ((softmax - onehot) / logits.shape[0],)
