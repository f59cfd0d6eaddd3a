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

import math

import numpy as np


# -- rational: (x + 1)(x - y) / (x + y + 1) on floats --------------------------

def rational(x: float, y: float) -> float:
    """(x + 1)(x - y) / (x + y + 1)."""
    return (x + 1.0) * (x - y) / (x + y + 1.0)


def rational_grad(x: float, y: float) -> tuple[float, float]:
    """Quotient rule with the value reused: d/dx = ((x - y) + (x + 1) - f) / den,
    d/dy = (-(x + 1) - f) / den, where f = (x + 1)(x - y) / den."""
    plus_one, minus_y = x + 1.0, x - y
    inv = 1.0 / (x + y + 1.0)
    value = plus_one * minus_y * inv
    return (minus_y + plus_one - value) * inv, -(plus_one + value) * inv


# -- poly_loop: s <- r s (1 - s) + 0.001 x, n times ------------------------------

def poly_loop(r: float, x: float, n: int = 1000) -> float:
    """The logistic-map recurrence with a small drive, after n steps."""
    s = 0.5
    for i in range(n):
        s = r * s * (1.0 - s) + 0.001 * x
    return s


def poly_loop_grad(r: float, x: float, n: int = 1000) -> tuple[float, float]:
    """Forward pass keeping each step's input s, then the reverse sweep over them, last first:
    ds'/ds = r (1 - 2s), ds'/dr = s (1 - s); x enters every step with weight 0.001, so its
    gradient is 0.001 times the sum of the adjoints of s."""
    inputs = []
    s = 0.5
    for i in range(n):
        inputs.append(s)
        s = r * s * (1.0 - s) + 0.001 * x
    d_s, d_r, sum_d_s = 1.0, 0.0, 0.0
    for s in reversed(inputs):
        d_r += d_s * s * (1.0 - s)
        sum_d_s += d_s
        d_s *= r * (1.0 - 2.0 * s)
    return d_r, 0.001 * sum_d_s


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
    """The recurrence is linear: one backward pass over Python floats carries d cost / d temp[t + 1]
    through (1 - a); d heat[t] is b times that, plus the energy term's 2 c heat[t]."""
    n = heat.shape[0]
    temp = np.zeros(n + 1)
    temp[0] = current = t0
    for t in range(n):                          # the primal's loop, the temperature kept in a local
        current = current + a * (outside[t] - current) + b * heat[t]
        temp[t + 1] = current
    d_temp = (2.0 * (temp - target)).tolist()   # adjoint of each temperature, from the cost alone
    keep = 1.0 - a
    carried = 0.0                               # adjoint flowing back into temp[t + 1]
    carried_at = [0.0] * n
    for t in range(n - 1, -1, -1):
        carried = carried * keep + d_temp[t + 1]
        carried_at[t] = carried
    d_heat = b * np.array(carried_at)
    d_heat += (2.0 * c) * heat
    return (d_heat,)


# -- mlp: two tanh/linear layers, mean squared error -----------------------------

def mlp(w1: np.ndarray, w2: np.ndarray, x: np.ndarray, y: np.ndarray) -> float:
    """Mean squared error of tanh(x @ w1) @ w2 against y."""
    hidden = np.tanh(x @ w1)
    pred = hidden @ w2
    return np.mean((pred - y) ** 2)


def mlp_grad(w1: np.ndarray, w2: np.ndarray, x: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Backpropagation through the two layers, updating the intermediates in place; tanh' = 1 - tanh**2."""
    hidden = np.tanh(x @ w1)
    d_pred = hidden @ w2                    # the prediction, turned into its adjoint in place
    d_pred -= y
    d_pred *= 2.0 / d_pred.size
    d_w2 = hidden.T @ d_pred
    d_pre = d_pred @ w2.T
    hidden *= hidden                        # hidden becomes tanh' = 1 - hidden**2 in place
    np.subtract(1.0, hidden, out=hidden)
    d_pre *= hidden
    return x.T @ d_pre, d_w2


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


def rk4_grad(alpha: float, beta: float, gamma: float, delta: float, u0: float = 1.0, v0: float = 0.5,
             steps: int = 500, dt: float = 0.01) -> tuple[float, float, float, float]:
    """The forward pass keeps the four points each step evaluates ``lotka_volterra`` at; the reverse
    pass pulls the adjoint of the state back through stages 4, 3, 2, 1 in turn, inline.

    Stage k at (p, q) gives (alpha p - beta p q, delta p q - gamma q): pulling (cu, cv) back
    through it adds (cu p, -cu p q, -cv q, cv p q) to the parameters' gradient and gives
    (cu (alpha - beta q) + cv delta q, cv (delta p - gamma) - cu beta p) to the point."""
    h2, h6 = 0.5 * dt, dt / 6.0
    points = []
    u, v = u0, v0
    for step in range(steps):
        k1u, k1v = alpha * u - beta * u * v, delta * u * v - gamma * v
        u2, v2 = u + h2 * k1u, v + h2 * k1v
        k2u, k2v = alpha * u2 - beta * u2 * v2, delta * u2 * v2 - gamma * v2
        u3, v3 = u + h2 * k2u, v + h2 * k2v
        k3u, k3v = alpha * u3 - beta * u3 * v3, delta * u3 * v3 - gamma * v3
        u4, v4 = u + dt * k3u, v + dt * k3v
        k4u, k4v = alpha * u4 - beta * u4 * v4, delta * u4 * v4 - gamma * v4
        points.append((u, v, u2, v2, u3, v3, u4, v4))
        u = u + h6 * (k1u + 2.0 * k2u + 2.0 * k3u + k4u)
        v = v + h6 * (k1v + 2.0 * k2v + 2.0 * k3v + k4v)
    bu, bv = 2.0 * (u - 1.0), v - 0.5       # adjoint of the state after the step being reversed
    d_alpha = d_beta = d_gamma = d_delta = 0.0
    for u, v, u2, v2, u3, v3, u4, v4 in reversed(points):
        cu, cv = h6 * bu, h6 * bv           # stage 4: weight dt/6 in the update
        uv = u4 * v4
        d_alpha += cu * u4
        d_beta -= cu * uv
        d_gamma -= cv * v4
        d_delta += cv * uv
        gu = cu * (alpha - beta * v4) + cv * delta * v4
        gv = cv * (delta * u4 - gamma) - cu * beta * u4
        new_bu, new_bv = bu + gu, bv + gv
        cu, cv = 2.0 * h6 * bu + dt * gu, 2.0 * h6 * bv + dt * gv   # stage 3: weight dt/3, and feeds point 4
        uv = u3 * v3
        d_alpha += cu * u3
        d_beta -= cu * uv
        d_gamma -= cv * v3
        d_delta += cv * uv
        gu = cu * (alpha - beta * v3) + cv * delta * v3
        gv = cv * (delta * u3 - gamma) - cu * beta * u3
        new_bu, new_bv = new_bu + gu, new_bv + gv
        cu, cv = 2.0 * h6 * bu + h2 * gu, 2.0 * h6 * bv + h2 * gv   # stage 2: weight dt/3, feeds point 3
        uv = u2 * v2
        d_alpha += cu * u2
        d_beta -= cu * uv
        d_gamma -= cv * v2
        d_delta += cv * uv
        gu = cu * (alpha - beta * v2) + cv * delta * v2
        gv = cv * (delta * u2 - gamma) - cu * beta * u2
        new_bu, new_bv = new_bu + gu, new_bv + gv
        cu, cv = h6 * bu + h2 * gu, h6 * bv + h2 * gv                 # stage 1: weight dt/6, feeds point 2
        uv = u * v
        d_alpha += cu * u
        d_beta -= cu * uv
        d_gamma -= cv * v
        d_delta += cv * uv
        bu = new_bu + cu * (alpha - beta * v) + cv * delta * v
        bv = new_bv + cv * (delta * u - gamma) - cu * beta * u
    return d_alpha, d_beta, d_gamma, d_delta


# -- logsumexp_ce: softmax cross-entropy, numerically stable ---------------------

def logsumexp_ce(logits: np.ndarray, onehot: np.ndarray) -> float:
    """Mean softmax cross-entropy, with the row maximum subtracted before exp."""
    shifted = logits - np.max(logits, axis=1, keepdims=True)
    log_norm = np.log(np.sum(np.exp(shifted), axis=1, keepdims=True))
    return -np.sum(onehot * (shifted - log_norm)) / logits.shape[0]


def logsumexp_ce_grad(logits: np.ndarray, onehot: np.ndarray) -> tuple[np.ndarray]:
    """(softmax - onehot) / rows, built in place in one array; the maximum's contribution cancels
    exactly, so it is left out."""
    gradient = logits - np.max(logits, axis=1, keepdims=True)
    np.exp(gradient, out=gradient)
    gradient /= np.sum(gradient, axis=1, keepdims=True)
    gradient -= onehot
    gradient *= 1.0 / logits.shape[0]
    return (gradient,)


# -- pendulum: a damped pendulum, explicit Euler steps into preallocated arrays --

GRAVITY = 9.81


def pendulum(length: float, damping: float, observed: np.ndarray, theta0: float = 1.0,
             dt: float = 0.01) -> float:
    """Integrate theta'' = -g / length sin(theta) - damping theta' by explicit Euler, one step per
    observation after the first; the squared distance of the angles from the observed ones."""
    n = observed.shape[0] - 1
    theta = np.zeros(n + 1)
    omega = np.zeros(n + 1)
    theta[0] = theta0
    for t in range(n):
        theta[t + 1] = theta[t] + dt * omega[t]
        omega[t + 1] = omega[t] + dt * (-GRAVITY / length * np.sin(theta[t]) - damping * omega[t])
    return np.sum((theta - observed) ** 2)


def pendulum_grad(length: float, damping: float, observed: np.ndarray, theta0: float = 1.0,
                  dt: float = 0.01) -> tuple[float, float]:
    """The primal's forward pass (its arrays, its np.sin), the angle and speed of the step kept in
    locals; then one backward pass over Python floats carrying the adjoints of theta[t + 1] and
    omega[t + 1] back through step t."""
    n = observed.shape[0] - 1
    theta = np.zeros(n + 1)
    omega = np.zeros(n + 1)
    theta[0] = angle = theta0
    speed = 0.0
    for t in range(n):
        angle, speed = angle + dt * speed, speed + dt * (-GRAVITY / length * np.sin(angle) - damping * speed)
        theta[t + 1] = angle
        omega[t + 1] = speed
    d_loss = (2.0 * (theta - observed)).tolist()    # the loss's own adjoint of each angle
    angles, speeds = theta.tolist(), omega.tolist()
    pull = GRAVITY / length
    keep = 1.0 - dt * damping
    d_theta, d_omega = d_loss[n], 0.0               # adjoints of theta[t + 1], omega[t + 1]
    d_length = d_damping = 0.0
    for t in range(n - 1, -1, -1):
        step_omega = dt * d_omega
        d_length += step_omega * pull / length * math.sin(angles[t])
        d_damping -= step_omega * speeds[t]
        d_theta, d_omega = (d_theta - step_omega * pull * math.cos(angles[t]) + d_loss[t],
                            dt * d_theta + keep * d_omega)
    return d_length, d_damping
