"""Programs written the way scientists and ML people write them (not the way unit tests do),
for tests/programs/test_user_programs.py: simulations with in-place updates, small nets with dict
parameters, np.linalg physics, statistics, ODE integrators, optimisation loops with early
exit, string-configured branches, views read around writes, lambdas, nested defs, methods.

Every function returns a number unless its docstring says otherwise."""
import math
from dataclasses import dataclass

import numpy as np

import s2s_ad


# --- simulations with loops and in-place updates ----------------------------

def heat_equation(u0, r=0.2, steps=4):
    """Explicit finite differences for u_t = u_xx with fixed ends."""
    u = u0.copy()
    for _ in range(steps):
        u[1:-1] = u[1:-1] + r * (u[2:] - 2.0 * u[1:-1] + u[:-2])
    return np.sum(u ** 2)


def leapfrog_oscillators(q0, k=1.3, dt=0.1, steps=5):
    """Velocity Verlet for uncoupled springs; energy-like output."""
    q = q0.copy()
    p = np.zeros_like(q0)
    force = lambda z: -k * z ** 3
    for _ in range(steps):
        p += 0.5 * dt * force(q)
        q += dt * p
        p += 0.5 * dt * force(q)
    return np.sum(q ** 2) + 0.5 * np.sum(p ** 2)


def leaky_integrator(v, n=3):
    acc = 0.0
    for i in range(n):
        acc = acc * 0.5 + v
    return np.sum(acc ** 2)


def rk4_decay(k, y0=1.0, dt=0.1, steps=5):
    """Classic RK4 for y' = -k*y + sin(t); k is a scalar rate."""
    def rhs(t, y):
        return -k * y + math.sin(t)

    y = y0
    t = 0.0
    for _ in range(steps):
        k1 = rhs(t, y)
        k2 = rhs(t + dt / 2, y + dt / 2 * k1)
        k3 = rhs(t + dt / 2, y + dt / 2 * k2)
        k4 = rhs(t + dt, y + dt * k3)
        y = y + dt / 6 * (k1 + 2 * k2 + 2 * k3 + k4)
        t += dt
    return y


def lotka_volterra_euler(theta, dt=0.05, steps=6):
    """Predator-prey with forward Euler; state held in one array updated by index."""
    a, b, c, d = theta[0], theta[1], theta[2], theta[3]
    state = np.array([1.0, 0.5])
    for _ in range(steps):
        x, y = state[0], state[1]
        dx = a * x - b * x * y
        dy = d * x * y - c * y
        state[0] = x + dt * dx
        state[1] = y + dt * dy
    return state[0] * state[1]


def normalise_rows_in_place(x):
    X = x.reshape(3, 2) * 1.0
    for i in range(X.shape[0]):
        X[i] = X[i] / np.linalg.norm(X[i])
    return np.sum(X[:, 0] * np.arange(1.0, 4.0))


def slice_read_then_written(x):
    y = x.copy()
    y[0:2] = y[0:2] ** 2
    y[1:] += np.sin(y[:-1])
    return np.sum(y * y)


def flipped_view_read_after_write(x):
    A = x.reshape(2, 3).copy()
    At = np.flip(A, 0)  # (a flip, like .T, is taken again after the write, as NumPy shows it)
    first = np.sum(At[0] * 2.0)
    A[0, :] = np.exp(A[0, :])
    second = np.sum(At ** 2)
    return first + second


def row_view_scaled_in_place(x):
    M = np.outer(x, x) + 0.0
    row = M[1]
    row *= 3.0
    return np.sum(M * M)


def fancy_index_with_repeats(x):
    idx = np.array([0, 2, 2, 1, 0, 0])
    picked = x[idx]
    b = np.zeros(4)
    np.add.at(b, [3, 1, 3], x[:3])
    return np.sum(picked ** 2) + np.sum(b * b)


def store_with_repeated_index(x):
    b = np.zeros(4)
    b[[3, 1, 3]] = x[:3] * 2.0
    return np.sum(b ** 3)


def gram_schmidt(x):
    """Orthonormalise the columns of a 3x2 matrix with column writes."""
    A = x.reshape(3, 2)
    Q = np.zeros((3, 2))
    for j in range(2):
        v = A[:, j].copy()
        for i in range(j):
            v = v - np.dot(Q[:, i], A[:, j]) * Q[:, i]
        Q[:, j] = v / np.linalg.norm(v)
    return np.sum(Q * np.array([[1.0, 2.0], [0.5, -1.0], [3.0, 0.2]]))


# --- small neural nets -------------------------------------------------------

def mlp_loss(params, X, y):
    """Two-layer MLP with a dict of parameters, mean squared error."""
    h = np.tanh(X @ params["W1"] + params["b1"])
    out = h @ params["W2"] + params["b2"]
    return np.mean((out - y) ** 2)


def mlp_loop_over_layers(params, X):
    """Layers as a list of (W, b) tuples walked in a loop with relu between."""
    h = X
    for i, (W, b) in enumerate(params):
        h = h @ W + b
        if i < len(params) - 1:
            h = np.maximum(h, 0.0)
    return np.sum(h ** 2)


def softmax_cross_entropy(logits, labels=(0, 2, 1)):
    z = logits.reshape(3, 3)
    z = z - np.max(z, axis=1, keepdims=True)
    logp = z - np.log(np.sum(np.exp(z), axis=1, keepdims=True))
    return -np.mean(logp[np.arange(3), np.array(labels)])


def attention(x):
    """Single-head self-attention on 3 tokens of width 2."""
    X = x.reshape(3, 2)
    Wq = np.array([[1.0, 0.5], [-0.3, 0.8]])
    Q = X @ Wq
    K = X @ Wq.T
    V = X
    scores = Q @ K.T / np.sqrt(2.0)
    scores = scores - scores.max(axis=-1, keepdims=True)
    w = np.exp(scores)
    w = w / w.sum(axis=-1, keepdims=True)
    return np.sum((w @ V) ** 2)


def layer_norm(x, eps=1e-5):
    X = x.reshape(2, 3)
    mu = X.mean(axis=-1, keepdims=True)
    var = ((X - mu) ** 2).mean(axis=-1, keepdims=True)
    Y = (X - mu) / np.sqrt(var + eps)
    return np.sum(Y * np.array([1.0, 2.0, 3.0]))


ACTIVATION = "gelu"  # a module-level option, as a config file sets it


def activation_by_name(x):
    if ACTIVATION == "relu":
        h = np.maximum(x, 0.0)
    elif ACTIVATION == "tanh":
        h = np.tanh(x)
    elif ACTIVATION == "gelu":
        h = 0.5 * x * (1.0 + np.tanh(np.sqrt(2.0 / np.pi) * (x + 0.044715 * x ** 3)))
    else:
        raise ValueError(f"unknown activation {ACTIVATION!r}")
    return np.sum(h * h)


def activation_by_argument(x, kind="tanh"):
    if kind == "relu":
        h = np.maximum(x, 0.0)
    elif kind == "tanh":
        h = np.tanh(x)
    else:
        h = x / (1.0 + np.abs(x))
    return np.sum(h * h)


LOSSES = {"mse": lambda r: np.mean(r ** 2), "logcosh": lambda r: np.mean(np.log(np.cosh(r)))}


def refused_loss_from_table(x):
    target = np.array([0.1, -0.2, 0.3])
    name = "mse" if x[0] > 0 else "logcosh"  # (a string argument would do: the code is specialised on it)
    return LOSSES[name](x - target)


class Linear:
    def __init__(self, W, b):
        self.W = W
        self.b = b

    def forward(self, x):
        return np.tanh(self.W @ x + self.b)

    def loss(self, x):
        out = self.forward(x)
        return np.sum(out ** 2) + 0.1 * np.sum(self.W ** 2)


MODEL = Linear(np.array([[0.5, -0.2, 0.1], [0.3, 0.8, -0.5]]), np.array([0.1, -0.1]))


@dataclass
class Gaussian:
    mu: np.ndarray
    log_sigma: float


def gaussian_nll(params, data):
    sigma = np.exp(params.log_sigma)
    r = (data - params.mu) / sigma
    return 0.5 * np.sum(r ** 2) + data.size * params.log_sigma + 0.5 * data.size * np.log(2 * np.pi)


def loss_with_aux(w, X, y):
    pred = X @ w
    mse = np.mean((pred - y) ** 2)
    reg = 0.01 * np.sum(w ** 2)
    return mse + reg, {"mse": mse, "reg": reg}


# --- statistics ---------------------------------------------------------------

def logsumexp_stable(x):
    m = np.max(x)
    return m + np.log(np.sum(np.exp(x - m)))


def logistic_nll(w, X, y):
    z = X @ w
    return np.sum(np.log1p(np.exp(-y * z)))


def stable_sigmoid_loss(x):
    s = np.where(x >= 0, 1.0 / (1.0 + np.exp(-np.abs(x))), np.exp(-np.abs(x)) / (1.0 + np.exp(-np.abs(x))))
    return np.sum(s * np.array([1.0, -2.0, 0.5]))


def huber(x, delta=0.5):
    r = np.abs(x)
    quad = 0.5 * x ** 2
    lin = delta * (r - 0.5 * delta)
    return np.sum(np.where(r <= delta, quad, lin))


def standardise_with_helper(x):
    def moments(v):
        return np.mean(v), np.var(v)
    m, var = moments(x)
    z = (x - m) / np.sqrt(var + 1e-8)
    return np.sum(z ** 3 * np.arange(1.0, x.size + 1))


def multivariate_normal_logpdf(x):
    mu = np.array([0.1, -0.3])
    L = x[:4].reshape(2, 2) + np.eye(2) * 2.0
    cov = L @ L.T
    diff = x[4:6] - mu
    sol = np.linalg.solve(cov, diff)
    sign, logdet = np.linalg.slogdet(cov)
    return -0.5 * (diff @ sol) - 0.5 * logdet - np.log(2 * np.pi)


# --- physics with np.linalg -----------------------------------------------------

def spring_chain_energy(x):
    pos = x.reshape(3, 2)
    rest = 1.0
    diffs = pos[1:] - pos[:-1]
    lengths = np.linalg.norm(diffs, axis=1)
    return 0.5 * np.sum((lengths - rest) ** 2)


def lennard_jones(x):
    pos = x.reshape(3, 2)
    energy = 0.0
    n = pos.shape[0]
    for i in range(n):
        for j in range(i + 1, n):
            r2 = np.sum((pos[i] - pos[j]) ** 2)
            inv6 = 1.0 / r2 ** 3
            energy += 4.0 * (inv6 ** 2 - inv6)
    return energy


def power_iteration(x, iters=8):
    A = x.reshape(2, 2)
    A = A @ A.T + np.eye(2)
    v = np.ones(2)
    for _ in range(iters):
        v = A @ v
        v = v / np.linalg.norm(v)
    return v @ A @ v


def bilinear_einsum(x):
    A = np.array([[2.0, 0.5, 0.0], [0.5, 1.0, 0.3], [0.0, 0.3, 3.0]])
    B = np.einsum("i,j->ij", x, x)
    return np.einsum("i,ij,j->", x, A, x) + np.einsum("ij,ij->", B, A)


def inverse_and_det(x):
    M = x.reshape(2, 2) + 3.0 * np.eye(2)
    return np.trace(np.linalg.inv(M)) + np.linalg.det(M)


def trapezoid_work(x, dx=0.25):
    f = x ** 2 * np.sin(x)
    return np.sum((f[1:] + f[:-1]) * dx / 2.0)


# --- optimisation loops -----------------------------------------------------------

def gd_with_early_exit(theta, lr=0.1, tol=1e-3):
    """Inner gradient descent on a quadratic whose minimum depends on theta (unrolled)."""
    x = np.zeros_like(theta)
    for step in range(30):
        g = 2.0 * (x - theta) + 0.1 * x ** 3
        x = x - lr * g
        if np.linalg.norm(g) < tol:
            break
    return np.sum(x ** 2)


def newton_sqrt(a):
    x = a
    it = 0
    while it < 20:
        x_new = 0.5 * (x + a / x)
        if abs(x_new - x) < 1e-12:
            x = x_new
            break
        x = x_new
        it += 1
    return x


def first_crossing(x):
    """Return from inside the loop at the first entry above a threshold."""
    total = 0.0
    for i in range(x.shape[0]):
        total += x[i] ** 2
        if 0.5 < total < 10.0:
            return total * x[i]
    return total


def momentum_updates(w0):
    w = w0.copy()
    v = np.zeros_like(w)
    target = np.array([1.0, -1.0, 0.5])
    for _ in range(5):
        g = w - target + 0.3 * np.sin(w)
        v = 0.9 * v + g
        w -= 0.1 * v
    return np.sum((w - target) ** 2)


def swap_recurrence(x, n=4):
    """Fibonacci-like recurrence with a tuple swap; a starts as a number."""
    a, b = 0.0, x
    for _ in range(n):
        a, b = b, a + 0.5 * b
    return np.sum(a * b)


# --- containers, kinds, dtypes -------------------------------------------------------

def sum_over_list_of_arrays(xs):
    total = 0.0
    for a in xs:
        total = total + np.sum(np.sin(a) ** 2)
    return total + np.sum(xs[0]) * np.sum(xs[-1])


def stack_and_concatenate(x):
    parts = [x[:2] * 2.0, np.sin(x[1:3]), np.array([1.0])]
    v = np.concatenate(parts)
    M = np.stack([x, x ** 2])
    return np.sum(v ** 2) + np.sum(M[1] * M[0])


def zero_d_array_input(x):
    """x is a 0-d array."""
    y = x * np.array([1.0, 2.0, 3.0])
    return np.sum(np.exp(y) * x)


def float32_model(w):
    X = np.array([[1.0, 2.0, 0.5], [0.3, -1.0, 2.0]], dtype=np.float32)
    return np.sum(np.tanh(X @ w) ** 2)


def horner(coeffs, x=0.7):
    acc = 0.0
    for c in coeffs[::-1]:
        acc = acc * x + c
    return acc * acc


def zip_weights_and_data(w):
    xs = [np.array([1.0, 2.0]), np.array([0.5, -0.5]), np.array([-1.0, 3.0])]
    total = 0.0
    for k, (wi, xi) in enumerate(zip(w, xs)):
        total += (k + 1) * wi * np.sum(xi ** 2) + wi ** 2
    return total


def ellipsis_and_newaxis(x):
    X = x.reshape(2, 3)
    col = X[..., 0]
    P = X[:, None, :] - X[None, :, :]
    return np.sum(col ** 2) + np.sum(P ** 2)


def clip_and_abs(x):
    return np.sum(np.clip(x, -0.5, 0.5) ** 2 + np.abs(x) * x)


def cumulative_and_diff(x):
    c = np.cumsum(x)
    d = np.diff(c ** 2)
    return np.sum(d * np.array([1.0, 0.5]))


def nested_def_closure(x):
    scale = np.sum(x)

    def poly(z):
        return scale * z ** 2 + np.sin(z)

    return np.sum(poly(x) * poly(x[::-1]))


def masked_update(x):
    y = x * 1.0
    mask = y > 0.0
    y[mask] *= 2.0
    y[~mask] = y[~mask] ** 2
    return np.sum(y ** 2 * np.array([1.0, 2.0, 3.0]))


def triu_pairs(x):
    pos = x.reshape(3, 2)
    i, j = np.triu_indices(3, k=1)
    d = pos[i] - pos[j]
    return np.sum(1.0 / (1.0 + np.sum(d ** 2, axis=1)))


def value_changes_kind(x):
    s = 0
    for i in range(3):
        if i == 0:
            s = x[0]
        else:
            s = s * x + s
    return np.sum(s)


# --- non-scalar outputs (for vjp and jvp) ---------------------------------------------

def simulate_trajectory(x):
    """Returns the whole trajectory of a damped map (an array of 4x3)."""
    traj = np.zeros((4, 3))
    state = x.copy()
    for t in range(4):
        state = 0.9 * state + 0.1 * np.sin(state[::-1])
        traj[t] = state
    return traj


def softmax_out(x):
    e = np.exp(x - np.max(x))
    return e / np.sum(e)


# --- found while writing these (issue #12/#13 follow-ups) -------------------------------------

def masks_combined(x):
    """~, & and | on boolean masks."""
    y = x * 1.0
    mask = y > 0.0
    y[mask] *= 2.0
    y[~mask] = y[~mask] ** 2
    band = (x > -0.5) & (x < 1.0) | (x > 5.0)
    return np.sum(y ** 2 * np.array([1.0, 2.0, 3.0])) + np.sum(np.where(band, x ** 3, 0.0))


def scatter_add_into_scaled_ones(x):
    """np.add.at into an array made by arithmetic on a fresh array, in a loop."""
    counts = np.ones(3) * x[0]
    for i in range(3):
        np.add.at(counts, [i, 0, i], x[i:i + 3] ** 2)
    counts[1] = counts[1] * x[1]
    return np.sum(counts ** 2)


def float32_constant_inside(x):
    y = np.tanh(x) * np.float32(2.0)
    return np.sum(y ** 2)


def tuple_rotated_in_a_loop(x):
    t = (x[0], x[1] * x[1])
    for i in range(3):
        t = (t[1] * 0.5, t[0] + x[2])
    return t[0] * 3.0 + t[1]


def tuple_rotated_no_trip(x, n=0):
    t = (x[0], x[1] * x[1])
    for i in range(n):
        t = (t[1] * 0.5, t[0] + x[2])
    return t[0] * 3.0 + t[1]


def exp_then_written(x):
    y = np.exp(x)
    y[0] = 0.5
    y /= y.sum()
    return np.sum(y ** 2 * np.arange(1.0, 4.0))


def recurrence_by_index(x):
    out = np.ones(3)
    for i in range(1, 3):
        out[i] = x[i] * out[i - 1] + x[i - 1]
    return np.sum(out ** 2)


def diagonal_fill_and_repeat_update(x):
    A = np.zeros((3, 3))
    A[np.arange(3), np.arange(3)] = x
    A[[0, 0], [1, 1]] += x[:2]  # repeated position: NumPy keeps the last write
    return np.sum(A @ A)


def overlapping_slice_updates(x):
    z = np.concatenate([x, x])
    z[2:4] += z[0:2]
    z[1:] += z[:-1]
    return np.sum(z ** 2)


def shifted_and_reversed_self_assignment(x):
    y = x.copy()
    y[1:] = y[:-1]
    y[::-1] = y * 1.0
    return np.sum(y * np.arange(1.0, 4.0))


def rows_swapped_by_fancy_index(x):
    M = x.reshape(3, 1) * np.array([[1.0, 2.0]])
    M[[0, 2]] = M[[2, 0]]
    return np.sum(M * np.arange(6.0).reshape(3, 2))


def _rotate(state, k):
    new = state.copy()
    new[0] = state[0] + k * state[1]
    new[1] = state[1] - k * state[0]
    return new


def helper_copies_and_writes(x):
    s = x * 1.0
    for _ in range(3):
        s = _rotate(s, 0.1)
    return np.sum(s ** 2) + s[0] * s[2]


def rank_one_downdates(x):
    P = np.eye(3)
    for i in range(2):
        k = P @ x
        P = P - np.outer(k, k) / (1.0 + x @ k)
    return np.trace(P)


def number_becomes_0d_array(x):
    acc = 0.0
    for i in range(3):
        acc = acc + np.sum(x[i:] ** 2)
        acc = acc * np.array(1.5)
    return acc


def carried_shape_grows(x):
    cur = x
    y = np.ones((2, 3))
    for k in range(2):
        cur = np.tanh(cur + y * k)
    return np.sum(cur)


def float_into_int_array(x):
    b = np.arange(4)
    b[1] = 3 * x[0]  # NumPy truncates: no derivative through b[1]
    return np.sum(b * x[1])


def nested_parameter_tree(params, X):
    """A dict holding a list of per-layer dicts, walked in a loop."""
    h = X
    for layer in params["layers"]:
        h = np.tanh(h @ layer["W"] + layer["b"])
    return np.sum(h ** 2) + params["scale"] * np.sum(params["layers"][0]["W"] ** 2)


def fixed_point_with_tolerance(v):
    y = v.copy()
    err = 1.0
    it = 0
    while err > 1e-10 and it < 60:
        y_new = np.cos(y) * 0.5 + v * 0.1
        err = np.max(np.abs(y_new - y))
        y = y_new
        it += 1
    return np.sum(y)


def comprehension_terms(v):
    terms = [np.sin(v[i]) * v[(i + 1) % 3] for i in range(3)]
    return sum(terms) + np.sum(np.array([t ** 2 for t in terms]))


def coefficients_from_dict(v):
    coeffs = {"a": 1.0, "b": -2.0, "c": 0.5}
    total = 0.0
    for i, (name, c) in enumerate(coeffs.items()):
        total += c * v[i] ** (i + 1)
    return total


def _apply_twice(fn, v):
    return fn(fn(v))


def lambda_to_helper(v):
    return np.sum(_apply_twice(lambda z: np.sin(z) * 1.5, v) ** 2)


def checkpointed_with_snapshots(v):
    """docs/api.md: for t in s2s_ad.checkpointed(range(n), snapshots=c)."""
    s = v.copy()
    for t in s2s_ad.checkpointed(range(10), snapshots=3):
        s = s + 0.1 * np.sin(s[::-1]) * (t + 1)
    return np.sum(s ** 2)


def scatter_after_a_view_was_read(v):
    b = np.zeros(3)
    view = b[:2]
    s = np.sum(view * v[:2])  # read before the scatter: the zeros
    np.add.at(b, [0, 0, 2], v[1:] ** 2)
    return s + np.sum(b * v[:3])


def scatter_seen_through_an_alias(v):
    b = np.exp(v)
    c = b
    np.add.at(b, [1, 1], v[:2])
    return np.sum(c ** 2)  # c is b: NumPy shows the update through it


def masks_in_a_where(v):
    m = (v > 0) & ~(v > 1.0)
    w = np.where(m | (v < -0.5), v ** 2, np.sin(v))
    return np.sum(w * v)


def masked_power_update(v):
    y = v * 1.0
    y[(y > 0) & (y < 1)] **= 2
    return np.sum(y * np.arange(4.0))


# --- everyday code still refused (each must name its line) -------------------------------------

def rebinding_argument_then_write(x):
    y = x
    y = y * 2  # a new array (a list repeated would be a new list too): written into, x is not
    y[0] = 1.0
    return np.sum(y ** 3)


def product_of_argument_views_written(x):
    v = x[:, None] * x[None, :]  # views of the argument multiplied: a new array
    v[np.triu_indices(3)] = 0.0
    return np.sum(np.sin(v))


def refused_write_through_transpose(x):
    M = np.zeros((2, 3))
    M.T[0] = x[:2]
    return np.sum(M ** 2)


DATA = [np.array([1.0, 2.0]), np.array([0.5, -0.5]), np.array([-1.0, 3.0])]


def refused_global_list_of_arrays(w):
    total = 0.0
    for wi, xi in zip(w, DATA):
        total += wi * np.sum(xi ** 2)
    return total

