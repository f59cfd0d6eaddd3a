"""Round 4's functions written the way a user would, each with a JAX twin (JAX is imported only
where it is installed): early returns from an if/elif chain and from guards, an RK4 integrator
calling a right-hand side helper, an MLP whose parameters are a dict walked by constant keys, a
stable log-sum-exp, attention with a row softmax, a Huber loss with np.where, a polynomial fit's
residual with np.polyval, a cumulative trapezoid written element by element, and a damped
spring chain whose gradient is taken through a helper returning a tuple."""
import numpy as np
import jax
import jax.numpy as jnp
jax.config.update("jax_enable_x64", True)


def piecewise_energy(x, t):                  # 1: if/elif chain of returns
    if t < 0.0:
        return np.sum(x ** 2)
    elif t < 1.0:
        return np.sum(np.sin(x)) * t
    return np.sum(x ** 3) * t


def piecewise_energy_j(x, t):
    return jnp.sum(jnp.sin(x)) * t           # the arguments below take the middle arm


def guarded_norm(x):                         # 2: guards that raise, then an early return
    if x.ndim != 1:
        raise ValueError("x must be a vector")
    total = np.sum(x * x)
    if total == 0.0:
        return 0.0
    return np.sqrt(total) + 0.1 * total


def guarded_norm_j(x):
    total = jnp.sum(x * x)
    return jnp.sqrt(total) + 0.1 * total


def rhs(y, k):
    return np.array([y[1], -k * y[0] - 0.1 * y[1]])


def rk4(y0, k):                              # 3: RK4 with a right-hand side helper
    y = y0.copy()
    h = 0.1
    for _ in range(8):
        k1 = rhs(y, k)
        k2 = rhs(y + 0.5 * h * k1, k)
        k3 = rhs(y + 0.5 * h * k2, k)
        k4 = rhs(y + h * k3, k)
        y = y + h / 6.0 * (k1 + 2 * k2 + 2 * k3 + k4)
    return y[0] ** 2 + y[1]


def rk4_j(y0, k):
    def f(y):
        return jnp.array([y[1], -k * y[0] - 0.1 * y[1]])
    y, h = y0, 0.1
    for _ in range(8):
        k1 = f(y)
        k2 = f(y + 0.5 * h * k1)
        k3 = f(y + 0.5 * h * k2)
        k4 = f(y + h * k3)
        y = y + h / 6.0 * (k1 + 2 * k2 + 2 * k3 + k4)
    return y[0] ** 2 + y[1]


W1 = np.array([[0.2, -0.4], [0.7, 0.1], [-0.3, 0.5]])
W2 = np.array([[0.6, -0.2, 0.3]])


def mlp_loss(x, scale):                      # 4: parameters in a dict read by constant keys
    params = {"W1": W1 * scale, "b1": np.zeros(3), "W2": W2, "b2": np.array([0.1])}
    h = np.tanh(params["W1"] @ x + params["b1"])
    out = params["W2"] @ h + params["b2"]
    return np.sum(out ** 2)


def mlp_loss_j(x, scale):
    h = jnp.tanh((jnp.asarray(W1) * scale) @ x)
    out = jnp.asarray(W2) @ h + 0.1
    return jnp.sum(out ** 2)


def logsumexp(z):                            # 5: the stable form, max subtracted
    m = np.max(z)
    return m + np.log(np.sum(np.exp(z - m)))


def logsumexp_j(z):
    m = jnp.max(z)
    return m + jnp.log(jnp.sum(jnp.exp(z - m)))


def attention(q, kv):                        # 6: row softmax of scores
    k = kv.reshape(3, 2)
    scores = np.outer(q, q[:2]) @ k.T
    scores = scores - np.max(scores, axis=1, keepdims=True)
    w = np.exp(scores)
    w = w / np.sum(w, axis=1, keepdims=True)
    return np.sum(w @ k)


def attention_j(q, kv):
    k = kv.reshape(3, 2)
    scores = jnp.outer(q, q[:2]) @ k.T
    scores = scores - jnp.max(scores, axis=1, keepdims=True)
    w = jnp.exp(scores)
    w = w / jnp.sum(w, axis=1, keepdims=True)
    return jnp.sum(w @ k)


def huber(r, delta):                         # 7: np.where on a threshold
    a = np.abs(r)
    return np.sum(np.where(a <= delta, 0.5 * r ** 2, delta * (a - 0.5 * delta)))


def huber_j(r, delta):
    a = jnp.abs(r)
    return jnp.sum(jnp.where(a <= delta, 0.5 * r ** 2, delta * (a - 0.5 * delta)))


TS = np.linspace(0.0, 1.0, 6)
YS = np.array([0.1, 0.3, 0.2, 0.6, 0.9, 1.2])


def poly_residual(coef):                     # 8: np.polyval against data
    return np.sum((np.polyval(coef, TS) - YS) ** 2)


def poly_residual_j(coef):
    return jnp.sum((jnp.polyval(coef, jnp.asarray(TS)) - YS) ** 2)


def cumulative_trapezoid(f, dx):             # 9: written element by element
    out = np.zeros(len(f))
    for i in range(1, len(f)):
        out[i] = out[i - 1] + 0.5 * dx * (f[i] + f[i - 1])
    return np.sum(out * out)


def cumulative_trapezoid_j(f, dx):
    steps = 0.5 * dx * (f[1:] + f[:-1])
    out = jnp.concatenate([jnp.zeros(1), jnp.cumsum(steps)])
    return jnp.sum(out * out)


def stretch_and_bend(x):
    d = np.diff(x)
    return d - 1.0, d[1:] - d[:-1]


def chain_energy(x, k):                      # 10: a helper returning a tuple, unpacked
    stretch, bend = stretch_and_bend(x)
    return 0.5 * k * np.sum(stretch ** 2) + 0.05 * np.sum(bend ** 2)


def chain_energy_j(x, k):
    d = jnp.diff(x)
    return 0.5 * k * jnp.sum((d - 1.0) ** 2) + 0.05 * jnp.sum((d[1:] - d[:-1]) ** 2)


CASES = [
    (piecewise_energy, piecewise_energy_j, (np.array([0.3, -0.5, 0.7]), 0.6)),
    (guarded_norm, guarded_norm_j, (np.array([0.3, -0.5, 0.7]),)),
    (rk4, rk4_j, (np.array([1.0, 0.2]), 1.5)),
    (mlp_loss, mlp_loss_j, (np.array([0.4, -0.9]), 1.2)),
    (logsumexp, logsumexp_j, (np.array([0.3, 2.5, -0.7, 1.1]),)),
    (attention, attention_j, (np.array([0.3, -0.5, 0.8]), np.array([0.1, 0.4, -0.3, 0.2, 0.6, -0.1]))),
    (huber, huber_j, (np.array([0.3, -2.5, 0.7, 1.6]), 1.0)),
    (poly_residual, poly_residual_j, (np.array([0.5, -0.3, 1.1]),)),
    (cumulative_trapezoid, cumulative_trapezoid_j, (np.array([0.3, 0.5, 0.4, 0.9, 1.3]), 0.25)),
    (chain_energy, chain_energy_j, (np.array([0.0, 1.2, 2.1, 3.4, 4.2]), 2.0)),
]
