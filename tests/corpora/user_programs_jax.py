"""JAX twins of tests/corpora/user_programs.py (writes become .at[].set); imported only when jax is installed."""
import math

import jax
import jax.numpy as jnp

jax.config.update("jax_enable_x64", True)


def heat_equation(u0, r=0.2, steps=4):
    u = u0
    for _ in range(steps):
        u = u.at[1:-1].set(u[1:-1] + r * (u[2:] - 2.0 * u[1:-1] + u[:-2]))
    return jnp.sum(u ** 2)


def leapfrog_oscillators(q0, k=1.3, dt=0.1, steps=5):
    q = q0
    p = jnp.zeros_like(q0)
    force = lambda z: -k * z ** 3
    for _ in range(steps):
        p = p + 0.5 * dt * force(q)
        q = q + dt * p
        p = p + 0.5 * dt * force(q)
    return jnp.sum(q ** 2) + 0.5 * jnp.sum(p ** 2)


def leaky_integrator(v, n=3):
    acc = 0.0
    for i in range(n):
        acc = acc * 0.5 + v
    return jnp.sum(acc ** 2)


def rk4_decay(k, y0=1.0, dt=0.1, steps=5):
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
    a, b, c, d = theta[0], theta[1], theta[2], theta[3]
    state = jnp.array([1.0, 0.5])
    for _ in range(steps):
        x, y = state[0], state[1]
        dx = a * x - b * x * y
        dy = d * x * y - c * y
        state = state.at[0].set(x + dt * dx)
        state = state.at[1].set(y + dt * dy)
    return state[0] * state[1]


def normalise_rows_in_place(x):
    X = x.reshape(3, 2) * 1.0
    for i in range(X.shape[0]):
        X = X.at[i].set(X[i] / jnp.linalg.norm(X[i]))
    return jnp.sum(X[:, 0] * jnp.arange(1.0, 4.0))


def slice_read_then_written(x):
    y = x
    y = y.at[0:2].set(y[0:2] ** 2)
    y = y.at[1:].add(jnp.sin(y[:-1]))
    return jnp.sum(y * y)


def flipped_view_read_after_write(x):
    A = x.reshape(2, 3)
    first = jnp.sum(jnp.flip(A, 0)[0] * 2.0)
    A = A.at[0, :].set(jnp.exp(A[0, :]))
    second = jnp.sum(jnp.flip(A, 0) ** 2)  # the flip read after the write shows it
    return first + second


def view_read_before_and_after_write(x):
    A = x.reshape(2, 3)
    first = jnp.sum(A.T[0] * 2.0)
    A = A.at[0, :].set(jnp.exp(A[0, :]))
    second = jnp.sum(A.T ** 2)
    return first + second


def row_view_scaled_in_place(x):
    M = jnp.outer(x, x)
    M = M.at[1].multiply(3.0)
    return jnp.sum(M * M)


def fancy_index_with_repeats(x):
    idx = jnp.array([0, 2, 2, 1, 0, 0])
    picked = x[idx]
    b = jnp.zeros(4).at[jnp.array([3, 1, 3])].add(x[:3])
    return jnp.sum(picked ** 2) + jnp.sum(b * b)


def store_with_repeated_index(x):
    # NumPy keeps the last write: b[3] = 2*x[2], b[1] = 2*x[1]
    b = jnp.zeros(4).at[1].set(x[1] * 2.0).at[3].set(x[2] * 2.0)
    return jnp.sum(b ** 3)


def gram_schmidt(x):
    A = x.reshape(3, 2)
    Q = jnp.zeros((3, 2))
    for j in range(2):
        v = A[:, j]
        for i in range(j):
            v = v - jnp.dot(Q[:, i], A[:, j]) * Q[:, i]
        Q = Q.at[:, j].set(v / jnp.linalg.norm(v))
    return jnp.sum(Q * jnp.array([[1.0, 2.0], [0.5, -1.0], [3.0, 0.2]]))


def mlp_loss(params, X, y):
    h = jnp.tanh(X @ params["W1"] + params["b1"])
    out = h @ params["W2"] + params["b2"]
    return jnp.mean((out - y) ** 2)


def mlp_loop_over_layers(params, X):
    h = X
    for i, (W, b) in enumerate(params):
        h = h @ W + b
        if i < len(params) - 1:
            h = jnp.maximum(h, 0.0)
    return jnp.sum(h ** 2)


def softmax_cross_entropy(logits, labels=(0, 2, 1)):
    z = logits.reshape(3, 3)
    z = z - jnp.max(z, axis=1, keepdims=True)
    logp = z - jnp.log(jnp.sum(jnp.exp(z), axis=1, keepdims=True))
    return -jnp.mean(logp[jnp.arange(3), jnp.array(labels)])


def attention(x):
    X = x.reshape(3, 2)
    Wq = jnp.array([[1.0, 0.5], [-0.3, 0.8]])
    Q = X @ Wq
    K = X @ Wq.T
    scores = Q @ K.T / jnp.sqrt(2.0)
    scores = scores - scores.max(axis=-1, keepdims=True)
    w = jnp.exp(scores)
    w = w / w.sum(axis=-1, keepdims=True)
    return jnp.sum((w @ X) ** 2)


def layer_norm(x, eps=1e-5):
    X = x.reshape(2, 3)
    mu = X.mean(axis=-1, keepdims=True)
    var = ((X - mu) ** 2).mean(axis=-1, keepdims=True)
    return jnp.sum((X - mu) / jnp.sqrt(var + eps) * jnp.array([1.0, 2.0, 3.0]))


def activation_by_name(x):
    h = 0.5 * x * (1.0 + jnp.tanh(jnp.sqrt(2.0 / jnp.pi) * (x + 0.044715 * x ** 3)))
    return jnp.sum(h * h)


def activation_by_argument(x, kind="tanh"):
    h = jnp.maximum(x, 0.0) if kind == "relu" else jnp.tanh(x) if kind == "tanh" else x / (1.0 + jnp.abs(x))
    return jnp.sum(h * h)


def loss_from_table(x, name="logcosh"):
    r = x - jnp.array([0.1, -0.2, 0.3])
    return jnp.mean(r ** 2) if name == "mse" else jnp.mean(jnp.log(jnp.cosh(r)))


def model_loss(W, b, x):
    out = jnp.tanh(W @ x + b)
    return jnp.sum(out ** 2) + 0.1 * jnp.sum(W ** 2)


def gaussian_nll(mu, log_sigma, data):
    sigma = jnp.exp(log_sigma)
    r = (data - mu) / sigma
    return 0.5 * jnp.sum(r ** 2) + data.size * log_sigma + 0.5 * data.size * jnp.log(2 * jnp.pi)


def loss_with_aux(w, X, y):
    pred = X @ w
    mse = jnp.mean((pred - y) ** 2)
    reg = 0.01 * jnp.sum(w ** 2)
    return mse + reg, {"mse": mse, "reg": reg}


def logsumexp_stable(x):
    m = jnp.max(x)
    return m + jnp.log(jnp.sum(jnp.exp(x - m)))


def logistic_nll(w, X, y):
    return jnp.sum(jnp.log1p(jnp.exp(-y * (X @ w))))


def stable_sigmoid_loss(x):
    s = jnp.where(x >= 0, 1.0 / (1.0 + jnp.exp(-jnp.abs(x))), jnp.exp(-jnp.abs(x)) / (1.0 + jnp.exp(-jnp.abs(x))))
    return jnp.sum(s * jnp.array([1.0, -2.0, 0.5]))


def huber(x, delta=0.5):
    r = jnp.abs(x)
    return jnp.sum(jnp.where(r <= delta, 0.5 * x ** 2, delta * (r - 0.5 * delta)))


def standardise_with_helper(x):
    m, var = jnp.mean(x), jnp.var(x)
    z = (x - m) / jnp.sqrt(var + 1e-8)
    return jnp.sum(z ** 3 * jnp.arange(1.0, x.size + 1))


def multivariate_normal_logpdf(x):
    mu = jnp.array([0.1, -0.3])
    L = x[:4].reshape(2, 2) + jnp.eye(2) * 2.0
    cov = L @ L.T
    diff = x[4:6] - mu
    sol = jnp.linalg.solve(cov, diff)
    sign, logdet = jnp.linalg.slogdet(cov)
    return -0.5 * (diff @ sol) - 0.5 * logdet - jnp.log(2 * jnp.pi)


def spring_chain_energy(x):
    pos = x.reshape(3, 2)
    lengths = jnp.linalg.norm(pos[1:] - pos[:-1], axis=1)
    return 0.5 * jnp.sum((lengths - 1.0) ** 2)


def lennard_jones(x):
    pos = x.reshape(3, 2)
    energy = 0.0
    for i in range(3):
        for j in range(i + 1, 3):
            r2 = jnp.sum((pos[i] - pos[j]) ** 2)
            inv6 = 1.0 / r2 ** 3
            energy += 4.0 * (inv6 ** 2 - inv6)
    return energy


def power_iteration(x, iters=8):
    A = x.reshape(2, 2)
    A = A @ A.T + jnp.eye(2)
    v = jnp.ones(2)
    for _ in range(iters):
        v = A @ v
        v = v / jnp.linalg.norm(v)
    return v @ A @ v


def bilinear_einsum(x):
    A = jnp.array([[2.0, 0.5, 0.0], [0.5, 1.0, 0.3], [0.0, 0.3, 3.0]])
    B = jnp.einsum("i,j->ij", x, x)
    return jnp.einsum("i,ij,j->", x, A, x) + jnp.einsum("ij,ij->", B, A)


def inverse_and_det(x):
    M = x.reshape(2, 2) + 3.0 * jnp.eye(2)
    return jnp.trace(jnp.linalg.inv(M)) + jnp.linalg.det(M)


def trapezoid_work(x, dx=0.25):
    f = x ** 2 * jnp.sin(x)
    return jnp.sum((f[1:] + f[:-1]) * dx / 2.0)


def gd_with_early_exit(theta, lr=0.1, tol=1e-3, steps=None):
    """``steps``: the trip count the NumPy program took (JAX cannot branch on a traced value)."""
    x = jnp.zeros_like(theta)
    for step in range(steps):
        g = 2.0 * (x - theta) + 0.1 * x ** 3
        x = x - lr * g
    return jnp.sum(x ** 2)


def newton_sqrt(a, steps=None):
    x = a
    for _ in range(steps):
        x = 0.5 * (x + a / x)
    return x


def first_crossing(x, stop=None):
    total = 0.0
    for i in range(stop + 1):
        total += x[i] ** 2
    return total * x[stop] if stop < x.shape[0] else total


def momentum_updates(w0):
    w = w0
    v = jnp.zeros_like(w)
    target = jnp.array([1.0, -1.0, 0.5])
    for _ in range(5):
        g = w - target + 0.3 * jnp.sin(w)
        v = 0.9 * v + g
        w = w - 0.1 * v
    return jnp.sum((w - target) ** 2)


def swap_recurrence(x, n=4):
    a, b = 0.0, x
    for _ in range(n):
        a, b = b, a + 0.5 * b
    return jnp.sum(a * b)


def sum_over_list_of_arrays(xs):
    total = 0.0
    for a in xs:
        total = total + jnp.sum(jnp.sin(a) ** 2)
    return total + jnp.sum(xs[0]) * jnp.sum(xs[-1])


def stack_and_concatenate(x):
    v = jnp.concatenate([x[:2] * 2.0, jnp.sin(x[1:3]), jnp.array([1.0])])
    M = jnp.stack([x, x ** 2])
    return jnp.sum(v ** 2) + jnp.sum(M[1] * M[0])


def zero_d_array_input(x):
    y = x * jnp.array([1.0, 2.0, 3.0])
    return jnp.sum(jnp.exp(y) * x)


def float32_model(w):
    X = jnp.array([[1.0, 2.0, 0.5], [0.3, -1.0, 2.0]], dtype=jnp.float32)
    return jnp.sum(jnp.tanh(X @ w) ** 2)


def horner(coeffs, x=0.7):
    acc = 0.0
    for c in coeffs[::-1]:
        acc = acc * x + c
    return acc * acc


def zip_weights_and_data(w):
    xs = [jnp.array([1.0, 2.0]), jnp.array([0.5, -0.5]), jnp.array([-1.0, 3.0])]
    total = 0.0
    for k, (wi, xi) in enumerate(zip(w, xs)):
        total += (k + 1) * wi * jnp.sum(xi ** 2) + wi ** 2
    return total


def ellipsis_and_newaxis(x):
    X = x.reshape(2, 3)
    P = X[:, None, :] - X[None, :, :]
    return jnp.sum(X[..., 0] ** 2) + jnp.sum(P ** 2)


def clip_and_abs(x):
    return jnp.sum(jnp.clip(x, -0.5, 0.5) ** 2 + jnp.abs(x) * x)


def cumulative_and_diff(x):
    return jnp.sum(jnp.diff(jnp.cumsum(x) ** 2) * jnp.array([1.0, 0.5]))


def nested_def_closure(x):
    scale = jnp.sum(x)

    def poly(z):
        return scale * z ** 2 + jnp.sin(z)

    return jnp.sum(poly(x) * poly(x[::-1]))


def masked_update(x):
    mask = x > 0.0
    y = jnp.where(mask, x * 2.0, x ** 2)
    return jnp.sum(y ** 2 * jnp.array([1.0, 2.0, 3.0]))


def rebinding_argument_then_write(x):
    y = (x * 2).at[0].set(1.0)
    return jnp.sum(y ** 3)


def product_of_argument_views_written(x):
    v = (x[:, None] * x[None, :]).at[jnp.triu_indices(3)].set(0.0)
    return jnp.sum(jnp.sin(v))


def triu_pairs(x):
    pos = x.reshape(3, 2)
    i, j = jnp.triu_indices(3, k=1)
    d = pos[i] - pos[j]
    return jnp.sum(1.0 / (1.0 + jnp.sum(d ** 2, axis=1)))


def value_changes_kind(x):
    s = x[0]
    for i in range(1, 3):
        s = s * x + s
    return jnp.sum(s)


def simulate_trajectory(x):
    traj = jnp.zeros((4, 3))
    state = x
    for t in range(4):
        state = 0.9 * state + 0.1 * jnp.sin(state[::-1])
        traj = traj.at[t].set(state)
    return traj


def softmax_out(x):
    e = jnp.exp(x - jnp.max(x))
    return e / jnp.sum(e)


def masks_combined(x):
    mask = x > 0
    y = jnp.where(mask, 2 * x, x ** 2)
    band = (x > -0.5) & (x < 1.0) | (x > 5.0)
    return jnp.sum(y ** 2 * jnp.array([1.0, 2.0, 3.0])) + jnp.sum(jnp.where(band, x ** 3, 0.0))


def scatter_add_into_scaled_ones(x):
    counts = jnp.ones(3) * x[0]
    for i in range(3):
        counts = counts.at[jnp.array([i, 0, i])].add(x[i:i + 3] ** 2)
    counts = counts.at[1].set(counts[1] * x[1])
    return jnp.sum(counts ** 2)


def float32_constant_inside(x):
    return jnp.sum((jnp.tanh(x) * 2.0) ** 2)


def tuple_rotated_in_a_loop(x):
    t = (x[0], x[1] * x[1])
    for i in range(3):
        t = (t[1] * 0.5, t[0] + x[2])
    return t[0] * 3.0 + t[1]


def tuple_rotated_no_trip(x, n=0):
    return x[0] * 3.0 + x[1] * x[1]


def exp_then_written(x):
    y = jnp.exp(x).at[0].set(0.5)
    y = y / y.sum()
    return jnp.sum(y ** 2 * jnp.arange(1.0, 4.0))


def recurrence_by_index(x):
    out = jnp.ones(3)
    for i in range(1, 3):
        out = out.at[i].set(x[i] * out[i - 1] + x[i - 1])
    return jnp.sum(out ** 2)


def diagonal_fill_and_repeat_update(x):
    A = jnp.zeros((3, 3)).at[jnp.arange(3), jnp.arange(3)].set(x)
    A = A.at[0, 1].set(A[0, 1] + x[1])
    return jnp.sum(A @ A)


def overlapping_slice_updates(x):
    z = jnp.concatenate([x, x])
    z = z.at[2:4].add(z[0:2])
    z = z.at[1:].add(z[:-1])
    return jnp.sum(z ** 2)


def shifted_and_reversed_self_assignment(x):
    y = x.at[1:].set(x[:-1])
    y = y.at[::-1].set(y * 1.0)
    return jnp.sum(y * jnp.arange(1.0, 4.0))


def rows_swapped_by_fancy_index(x):
    M = x.reshape(3, 1) * jnp.array([[1.0, 2.0]])
    M = M.at[jnp.array([0, 2])].set(M[jnp.array([2, 0])])
    return jnp.sum(M * jnp.arange(6.0).reshape(3, 2))


def helper_copies_and_writes(x):
    s = x
    for _ in range(3):
        s = s.at[0].set(s[0] + 0.1 * s[1]).at[1].set(s[1] - 0.1 * s[0])
    return jnp.sum(s ** 2) + s[0] * s[2]


def rank_one_downdates(x):
    P = jnp.eye(3)
    for i in range(2):
        k = P @ x
        P = P - jnp.outer(k, k) / (1.0 + x @ k)
    return jnp.trace(P)


def number_becomes_0d_array(x):
    acc = 0.0
    for i in range(3):
        acc = (acc + jnp.sum(x[i:] ** 2)) * 1.5
    return acc


def carried_shape_grows(x):
    cur = x
    y = jnp.ones((2, 3))
    for k in range(2):
        cur = jnp.tanh(cur + y * k)
    return jnp.sum(cur)


def float_into_int_array(x):
    b1 = jnp.floor(jax.lax.stop_gradient(3 * x[0]))
    return (0.0 + b1 + 2.0 + 3.0) * x[1]


def nested_parameter_tree(params, X):
    h = X
    for layer in params["layers"]:
        h = jnp.tanh(h @ layer["W"] + layer["b"])
    return jnp.sum(h ** 2) + params["scale"] * jnp.sum(params["layers"][0]["W"] ** 2)


def fixed_point_with_tolerance(v, steps=None):
    y = v
    for _ in range(steps):
        y = jnp.cos(y) * 0.5 + v * 0.1
    return jnp.sum(y)


def comprehension_terms(v):
    terms = [jnp.sin(v[i]) * v[(i + 1) % 3] for i in range(3)]
    return sum(terms) + jnp.sum(jnp.array([t ** 2 for t in terms]))


def coefficients_from_dict(v):
    return 1.0 * v[0] - 2.0 * v[1] ** 2 + 0.5 * v[2] ** 3


def lambda_to_helper(v):
    f = lambda z: jnp.sin(z) * 1.5
    return jnp.sum(f(f(v)) ** 2)
