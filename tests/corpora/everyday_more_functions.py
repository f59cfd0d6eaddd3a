"""Everyday code for tests/programs/test_argument_types_fstrings_raises.py (issue #13): written as users write it.

Types kept (float32, 0-d arrays), f-strings in print/logging, if/elif chains that end in a raise,
a raise chosen by a string argument, checkpointed(..., snapshots=c).
"""
import logging

import numpy as np

import s2s_ad

LOG = logging.getLogger("everyday_more")


def energy(x):
    return np.sum(np.sin(x) * x ** 2) + 0.5 * np.sum(x) ** 2


def two_arguments(w, b):
    return np.sum(np.tanh(w * b) * w)


def vector_field(x):
    return np.sin(x) * x[0] + np.cos(x[::-1])


def logged_loss(w, X, y):
    r = X @ w - y
    loss = np.mean(r ** 2)
    print(f"loss {loss:.3f}")
    print(f"w = {w!r}, first {w[0]:+.2e}")
    LOG.info(f"loss {loss:.4f} at |w| = {np.linalg.norm(w):.3f}")
    logging.debug(f"residual {r}")
    return loss


def activation(x, kind):
    if kind == "relu":
        return np.sum(np.maximum(x, 0.0) ** 2)
    elif kind == "tanh":
        return np.sum(np.tanh(x) * x)
    elif kind == "softplus":
        return np.sum(np.log1p(np.exp(x)))
    else:
        raise ValueError(f"unknown activation {kind!r}")


def act(x, kind):
    if kind == "relu":
        return np.maximum(x, 0.0)
    elif kind == "sin":
        return np.sin(x)
    raise ValueError(kind)


def network(w, x, kind):
    h = act(w * x, kind)
    return np.sum(h * h)


def guarded(x):
    if np.any(~np.isfinite(x)):
        raise FloatingPointError("x is not finite")
    if x.shape[0] < 2:
        raise ValueError
    return np.sum(np.exp(-x ** 2) * x[0])


def raises_in_loop(x, n):
    total = 0.0
    for i in range(n):
        if i >= x.shape[0]:
            raise IndexError(f"step {i} past the end")
        total = total + np.cos(x[i]) * x[i]
    return total


def simulate(v):
    s = v.copy()
    for t in s2s_ad.checkpointed(range(12), snapshots=4):
        s = s + 0.1 * np.sin(s[::-1]) * (t + 1)
    return np.sum(s ** 2)


def simulate_snapshots_argument(v, c):
    s = v * 1.0
    for t in s2s_ad.checkpointed(range(7), snapshots=c):
        s = np.tanh(s * 1.3) + 0.1 * t
    return np.sum(s * v)


def simulate_plain(v, n):
    s = v * 1.0
    for t in range(n):
        s = np.tanh(s * 1.3) + 0.1 * t
    return np.sum(s * v)


# --- lambdas with defaults, called in place; functions in a module-level dict ---------------------

SCALE = 2.0


def squared_error(r):
    return np.sum(r ** 2)


LOSSES = {
    "l2": squared_error,
    "huber": lambda r: np.sum(np.where(np.abs(r) < 1.0, 0.5 * r ** 2, np.abs(r) - 0.5)),
}


def lambda_with_a_module_default(x):
    f = lambda z, c=SCALE: z * c  # noqa: E731
    return np.sum(np.sin(f(x)))


def lambda_default_taken_when_made(x):
    c = x[0]
    f = lambda z, c=c: z * c  # noqa: E731
    c = 10.0
    return np.sum(f(x)) + c


def lambda_defaults_overridden(x):
    f = lambda z, c=SCALE, d=0.5: z * c + d  # noqa: E731
    return np.sum(f(x) * f(x, 3.0) + f(x, 1.0, x[1]))


def lambda_defaults_in_a_loop(x):
    total = 0.0
    for i in range(3):
        g = lambda z, k=x[i] * 2.0: np.cos(z * k)  # noqa: E731
        total = total + g(x[0])
    return total


def apply(fn, v):
    return fn(v)


def lambda_with_default_passed(x):
    s = x[1] * 3.0
    return np.sum(apply(lambda t, a=s: t * a, x))


def lambda_called_in_place(v):
    return (lambda u: u ** 2)(v[0]) + np.sum((lambda a, b=1.5: a * b)(v))


def nested_def_with_constant_defaults(x):
    def power(z, p=2):
        return z ** p
    return np.sum(power(x)) + np.sum(power(x, 3))


def loss_from_a_table(w, X, y):
    r = X @ w - y
    return LOSSES["l2"](r) + 0.1 * LOSSES["huber"](w)


def checkpointed_with_a_guard(x):
    for t in s2s_ad.checkpointed(range(6), snapshots=2):
        if np.any(np.abs(x) > 1e6):
            raise FloatingPointError(f"diverged at step {t}")
        x = np.sin(x) * 1.2
    return np.sum(x)


def lambda_default_then_name_rebound_in_a_loop(x):
    total = 0.0
    c = x[1]
    f = lambda z, k=c: z * k  # noqa: E731
    for i in range(3):
        total = total + np.sum(f(x))
        c = x[i] * 3.0
    return total


def lambda_redefined_with_another_default(x):
    f = lambda z, k=x[0]: z * k  # noqa: E731
    a = np.sum(f(x))
    f = lambda z, k=x[2]: z + k  # noqa: E731
    return a + np.sum(f(x))
