"""Functions written the way a user would, each with a JAX twin (imported only where JAX is installed):
heat equations with boundary conditions, a pendulum into preallocated buffers, NumPy's own order of
stores in a tuple assignment, buffers written after views of them were taken, arrays arithmetic or a
helper made then written, invariant expressions tested then used, a recursive helper that copies and
updates an array, solve and matrix_power results written, fancy and mask copies written."""
import numpy as np
import jax
import jax.numpy as jnp
jax.config.update("jax_enable_x64", True)

def lap(u):
    out = np.zeros_like(u)
    out[1:-1] = u[2:] - 2.0 * u[1:-1] + u[:-2]
    return out

def heat_bc(u0, k):                          # 1
    u = u0.copy()
    dt = 0.1
    for _ in range(5):
        u = u + dt * k * lap(u)
        u[0] = 0.0
        u[-1] = 0.0
    return np.sum(u ** 2)

def heat_bc_j(u0, k):
    u = u0
    for _ in range(5):
        l = jnp.zeros_like(u).at[1:-1].set(u[2:] - 2.0 * u[1:-1] + u[:-2])
        u = u + 0.1 * k * l
        u = u.at[0].set(0.0).at[-1].set(0.0)
    return jnp.sum(u ** 2)

def pendulum(theta0, damping):               # 2 (has_aux twin below)
    n = 30
    theta = np.zeros(n)
    omega = np.zeros(n)
    theta[0] = theta0
    dt = 0.05
    for t in range(n - 1):
        omega[t + 1] = omega[t] - dt * (np.sin(theta[t]) + damping * omega[t])
        theta[t + 1] = theta[t] + dt * omega[t + 1]
    return np.sum(theta ** 2) * dt

def pendulum_j(theta0, damping):
    n = 30
    theta = jnp.zeros(n).at[0].set(theta0)
    omega = jnp.zeros(n)
    for t in range(n - 1):
        omega = omega.at[t + 1].set(omega[t] - 0.05 * (jnp.sin(theta[t]) + damping * omega[t]))
        theta = theta.at[t + 1].set(theta[t] + 0.05 * omega[t + 1])
    return jnp.sum(theta ** 2) * 0.05

def half_swap(v):                            # 3: NumPy's own (non-)swap semantics
    b = v * 1.0
    b[:2], b[2:] = b[2:], b[:2]
    return np.sum(b * np.arange(4.0)) + np.sum(np.sin(b))

def half_swap_j(v):
    b = v * 1.0
    first = b[2:]
    b = b.at[:2].set(first)
    b = b.at[2:].set(b[:2])
    return jnp.sum(b * jnp.arange(4.0)) + jnp.sum(jnp.sin(b))

def shifted_state(v):                        # 4: forward mode over a buffer written later
    state = v.copy()
    for _ in range(3):
        shifted = state - 1.0
        state[0] = state[0] * shifted[1]
        state[1:3] = shifted[1:3] * shifted[0:2]
    return np.sum(state * state)

def shifted_state_j(v):
    state = v
    for _ in range(3):
        shifted = state - 1.0
        state = state.at[0].set(state[0] * shifted[1])
        state = state.at[1:3].set(shifted[1:3] * shifted[0:2])
    return jnp.sum(state * state)

def normalised_weights(v, x):                # 5: array made by * then written
    b = v * x
    b[0] = b[0] ** 2
    s = np.sort(b)
    s[-1] = 0.5 * s[-1]
    return np.sum(s * np.tanh(b))

def normalised_weights_j(v, x):
    b = v * x
    b = b.at[0].set(b[0] ** 2)
    s = jnp.sort(b)
    s = s.at[-1].set(0.5 * s[-1])
    return jnp.sum(s * jnp.tanh(b))

def tiled(v):
    return np.tile(v, 2)

def built_by_helper(v):                      # 6: a helper's new array written; element carried
    c = tiled(v)
    c[0] = 1.0
    s = c[1]
    for i in range(3):
        c[i + 2] = c[i + 2] * s
        s = s + c[i]
    return np.sum(c ** 2) + s

def built_by_helper_j(v):
    c = jnp.tile(v, 2)
    c = c.at[0].set(1.0)
    s = c[1]
    for i in range(3):
        c = c.at[i + 2].set(c[i + 2] * s)
        s = s + c[i]
    return jnp.sum(c ** 2) + s

def decay(y, k):                             # 7: invariant expressions, asserts, tests
    dt = 0.1
    assert k * dt < 1.0
    v = y * 1.0
    for _ in range(4):
        if k * k > 0.01:
            v = v - k * dt * v
        v = v + np.sin(k * k) * dt
    return np.sum(v * v)

def decay_j(y, k):
    v = y * 1.0
    for _ in range(4):
        v = jnp.where(k * k > 0.01, v - k * 0.1 * v, v)
        v = v + jnp.sin(k * k) * 0.1
    return jnp.sum(v * v)

def smooth(b, k):
    if k == 0:
        return b * 1.0
    c = b.copy()
    c[1:-1] = 0.5 * c[1:-1] + 0.25 * (b[2:] + b[:-2])
    return smooth(c, k - 1)

def recursive_smooth(v):                     # 8: recursion with a base case, copy and update
    return np.sum(smooth(v * v, 3) ** 2)

def recursive_smooth_j(v):
    b = v * v
    for _ in range(3):
        b = b.at[1:-1].set(0.5 * b[1:-1] + 0.25 * (b[2:] + b[:-2]))
    return jnp.sum(b ** 2)

def solve_then_write(A, r):                  # 9: solve/matrix_power results written
    x = np.linalg.solve(A, r)
    x[0] = x[0] * 2.0
    P = np.linalg.matrix_power(A, 1)
    y = P @ x
    A2 = A * 1.0
    A2[0, 0] = 3.0
    return np.sum(y ** 2) + np.sum(A2 @ x)

def solve_then_write_j(A, r):
    x = jnp.linalg.solve(A, r)
    x = x.at[0].set(x[0] * 2.0)
    y = A @ x
    A2 = (A * 1.0).at[0, 0].set(3.0)
    return jnp.sum(y ** 2) + jnp.sum(A2 @ x)

def masked_gain(v, g):                       # 10: mask/fancy copies then written; self-store
    c = v[v > 0.0]
    c *= g
    d = v[[3, 1, 2]]
    d[0] = d[0] + g
    b = v * 1.0
    b[::-1] = b
    return np.sum(c ** 2) + np.sum(d * b[:3])

def masked_gain_j(v, g):
    c = v[v > 0.0] * g
    d = v[jnp.array([3, 1, 2])]
    d = d.at[0].set(d[0] + g)
    b = v[::-1]
    return jnp.sum(c ** 2) + jnp.sum(d * b[:3])

CASES = [
    (heat_bc, heat_bc_j, (np.array([0.1, 0.5, 0.9, 0.4, 0.2]), 0.7)),
    (pendulum, pendulum_j, (0.8, 0.3)),
    (half_swap, half_swap_j, (np.array([0.3, -0.5, 0.7, 1.1]),)),
    (shifted_state, shifted_state_j, (np.array([0.3, -0.5, 0.7, 1.1]),)),
    (normalised_weights, normalised_weights_j, (np.array([0.3, -0.5, 0.7, 1.1]), 0.8)),
    (decay, decay_j, (np.array([0.3, -0.5]), 0.6)),
    (recursive_smooth, recursive_smooth_j, (np.array([0.3, -0.5, 0.7, 1.1, 0.2]),)),
    (solve_then_write, solve_then_write_j, (np.array([[2.0, 0.3, 0.1], [0.2, 1.5, 0.4], [0.1, 0.2, 1.8]]), np.array([0.5, -0.2, 0.9]))),
    (masked_gain, masked_gain_j, (np.array([0.3, -0.5, 0.7, 1.1]), 0.8)),
]
