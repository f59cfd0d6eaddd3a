"""Functions written the way users write them, whose broadcasting the shape-pattern facts decide
(test_fuzz_shapes.py calls each at several shape sets: lengths of 1, coinciding lengths, batches)."""
import numpy as np


def layer_norm(x, gain, bias):
    mean = x.mean(axis=-1, keepdims=True)
    var = ((x - mean) ** 2).mean(axis=-1, keepdims=True)
    return np.sum(np.tanh(gain * (x - mean) / np.sqrt(var + 1e-5) + bias))


def attention(q, k, v):
    scores = q @ np.swapaxes(k, -1, -2) / np.sqrt(q.shape[-1])
    scores = scores - scores.max(axis=-1, keepdims=True)
    weights = np.exp(scores)
    weights = weights / weights.sum(axis=-1, keepdims=True)
    return np.sum((weights @ v) ** 2)


def mlp(x, w1, b1, w2):
    h = np.tanh(x @ w1 + b1)
    out = h @ w2
    return np.mean(out ** 2)


def pairwise_rbf(x, y, scale):
    diff = x[:, None, :] - y[None, :, :]
    sq = np.sum(diff ** 2, axis=-1)
    return np.sum(np.exp(-sq / (2.0 * scale ** 2)))


def covariance_trace(x):
    n = x.shape[0]
    centred = x - x.mean(axis=0)
    cov = centred.T @ centred / n
    return np.trace(cov @ cov)


def rnn(xs, w, u):
    h = 0.0
    for t in range(len(xs)):
        h = np.tanh(xs[t] @ w + h * u)
    return np.sum(h ** 2)


def features(x, coef):
    n = len(x)
    phi = np.zeros((n, 3))
    for i in range(n):
        phi[i, 0] = 1.0
        phi[i, 1] = x[i]
        phi[i, 2] = x[i] ** 2
    return np.sum((phi @ coef) ** 2)


def weighted_mean(x, w):
    m = np.sum(w[:, None] * x, axis=0) / np.sum(w)
    return np.sum(m ** 2) + np.sum(np.std(x, axis=0))


USER_CASES = (
    (layer_norm, [(4, 3), (3,), (3,)]), (layer_norm, [(2, 4, 3), (1, 1, 3), (3,)]), (layer_norm, [(3, 3), (3,), (3, 1)]),
    (attention, [(4, 3), (5, 3), (5, 2)]), (attention, [(2, 4, 3), (2, 5, 3), (1, 5, 2)]),
    (attention, [(3, 3), (3, 3), (3, 3)]), (attention, [(1, 3), (1, 3), (1, 1)]),
    (mlp, [(5, 3), (3, 4), (4,), (4, 2)]), (mlp, [(3, 3), (3, 3), (1, 3), (3,)]), (mlp, [(3,), (3, 2), (2,), (2, 1)]),
    (pairwise_rbf, [(3, 2), (4, 2), ()]), (pairwise_rbf, [(2, 2), (2, 2), (1,)]), (pairwise_rbf, [(1, 3), (3, 1), ()]),
    (covariance_trace, [(5, 3)]), (covariance_trace, [(3, 3)]), (covariance_trace, [(1, 2)]),
    (rnn, [(4, 3), (3, 3), (3,)]), (rnn, [(2, 3), (3, 2), ()]), (rnn, [(3, 1), (1, 1), (1,)]),
    (features, [(4,), (3,)]), (features, [(3,), (3, 2)]),
    (weighted_mean, [(4, 3), (4,)]), (weighted_mean, [(3, 3), (3,)]), (weighted_mean, [(2, 1), (2,)]),
)
