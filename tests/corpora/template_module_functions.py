"""Functions that call operations whose rules live in a template module outside s2s_ad
(tests/corpora/outside_templates), for test_template_modules.py."""
import numpy as np
from signal_ops import reversed_rows, softplus


def smooth_energy(x):
    return np.sum(softplus(2.0 * x) * x)


def smooth_steps(x, n):
    total = 0.0
    for i in range(n):
        total = total + softplus(x * i - 1.0)
    return total


def reversed_weights(w):
    r = reversed_rows(w)
    return np.sum(r * np.arange(1.0, len(w) + 1.0) * w)


def write_then_read_view(x):
    out = np.zeros(3)
    r = reversed_rows(out)
    out[0] = x
    return np.sum(r * r) + x


def two_layers(w1, w2, x):
    hidden = np.tanh(x @ w1)
    return np.sum((hidden @ w2) ** 2)


def product_of_products(a, b, c):
    return np.sum(np.matmul(a @ b, c) * a[..., :1])
