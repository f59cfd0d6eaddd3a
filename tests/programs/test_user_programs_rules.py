"""Programs written the way scientists write them, using the rules of issue #14 (np.linalg, einsum,
tensordot, kron, cross, sorting and quantiles, take/take_along_axis, the split family, diff,
gradient, shape functions, elementwise extras, math in scalar loops, scipy.special) mixed with loops,
element writes, helpers, dicts, float32, keepdims and negative axes.

Each program is checked by ``grad`` against central differences, ``value_and_grad``'s value, ``jvp``
against reverse mode, ``vjp`` with its pullback called twice, and against JAX: the same code object
run with ``np``, ``math`` and ``special`` bound to JAX's (``jax_twin``), for programs without element
writes; ``hessian`` against JAX's where it is cheap and defined."""
import math
import types
import inspect
import warnings

import numpy as np
import pytest

import s2s_ad
from conftest import numeric_grad, optional_import

# SciPy is an optional extra: its programs are skipped where it is not installed (S2S_AD_REQUIRE_EXTRAS: required)
special = optional_import("scipy.special")

RNG = np.random.default_rng(2026)


def _spd(n, seed):
    r = np.random.default_rng(seed).normal(size=(n, n))
    return r @ r.T + n * np.eye(n)


# -- np.linalg ----------------------------------------------------------------------------------


def gaussian_process_nll(log_ell, x, y):
    """Negative log marginal likelihood of a GP with an RBF kernel (Cholesky, solve, log det)."""
    ell = np.exp(log_ell)
    sq = (x[:, None] - x[None, :]) ** 2
    k = np.exp(-0.5 * sq / ell ** 2) + 0.1 * np.eye(len(x))
    chol = np.linalg.cholesky(k)
    alpha = np.linalg.solve(chol.T, np.linalg.solve(chol, y))
    return 0.5 * y @ alpha + np.sum(np.log(np.diag(chol))) + 0.5 * len(x) * np.log(2 * np.pi)


def ridge_with_inverse(w, xs, ys):
    """Ridge regression's closed form via inv, its fitted residual."""
    a = xs.T @ xs + np.diag(w ** 2 + 0.5)
    beta = np.linalg.inv(a) @ (xs.T @ ys)
    r = ys - xs @ beta
    return r @ r + 0.1 * np.linalg.det(a) ** 0.25


def batched_logdet(a):
    """A 3-D stack of SPD matrices: slogdet batched, and det batched, summed."""
    m = a @ np.swapaxes(a, -1, -2) + 2.0 * np.eye(a.shape[-1])
    sign, logdet = np.linalg.slogdet(m)
    return np.sum(sign * logdet) + np.sum(np.log(np.linalg.det(m))) * 0.5


def batched_solve(a, b):
    """Solve a batch of systems with several right-hand sides, then a vector one per matrix."""
    m = a + 4.0 * np.eye(3)
    x = np.linalg.solve(m, b)
    total = 0.0
    for i in range(m.shape[0]):
        xi = np.linalg.solve(m[i], b[i, :, 0])
        total = total + np.sum(xi ** 2)
    return np.sum(x ** 2) + total


def spectral_energy(h):
    """Eigen-decomposition of a symmetrised matrix: smallest eigenvalue and a projection."""
    s = 0.5 * (h + h.T)
    w, v = np.linalg.eigh(s)
    ground = v[:, 0]
    return w[0] + np.sum(w ** 2) * 0.1 + np.sum(ground ** 2 * np.arange(1, len(w) + 1)) \
        + np.sum(np.linalg.eigvalsh(s + s @ s))


def batched_eigvalsh(stack):
    """eigvalsh on a 3-D stack, with a softplus of the top eigenvalue."""
    sym = stack + np.swapaxes(stack, -1, -2)
    w = np.linalg.eigvalsh(sym)
    return np.sum(np.log1p(np.exp(w[..., -1]))) + np.sum(w[:, 0] * w[:, 1])


def low_rank_fit(a):
    """The SVD, reduced: keep two singular triples and measure the reconstruction."""
    u, s, vt = np.linalg.svd(a, full_matrices=False)
    approx = (u[:, :2] * s[:2]) @ vt[:2, :]
    return np.sum((a - approx) ** 2) + s[0] * 0.3 + np.sum(np.abs(u[0, :]) * s)


def batched_svd_values(a):
    """Singular values of a 3-D batch, via compute_uv's default (u, s, vt)."""
    u, s, vt = np.linalg.svd(a, full_matrices=False)
    return np.sum(s ** 2 * np.array([1.0, 0.5])) + np.sum(u[..., 0, :] * vt[..., :, 0])


def orthonormal_projection(a, y):
    """QR of a tall matrix: projection of y onto a's column space."""
    q, r = np.linalg.qr(a)
    proj = q @ (q.T @ y)
    return np.sum((y - proj) ** 2) + np.sum(np.log(np.abs(np.diag(r))))


def pinv_regression(a, b):
    """Minimum-norm solution via pinv, then its size."""
    x = np.linalg.pinv(a) @ b
    return np.sum(x ** 2) + np.sum((a @ x - b) ** 2)


def lstsq_fit(a, b):
    """np.linalg.lstsq with a tall full-rank a, the coefficients and residual used."""
    coef, res, rank, sv = np.linalg.lstsq(a, b, rcond=None)
    return np.sum(coef ** 3) + res[0] + sv[-1]


def markov_chain(t):
    """A transition matrix to a power; matrix_power and multi_dot."""
    p = np.exp(t)
    p = p / np.sum(p, axis=1, keepdims=True)
    p8 = np.linalg.matrix_power(p, 8)
    start = np.array([1.0, 0.0, 0.0])
    chain = np.linalg.multi_dot([start, p, p8, p])
    return chain @ np.array([0.0, 1.0, 2.0]) + np.trace(np.linalg.matrix_power(p, 0)) + np.sum(p8 ** 2)


def norm_zoo(m):
    """np.linalg.norm with every ord, axis and keepdims, on a 2-D matrix."""
    total = np.linalg.norm(m) + np.linalg.norm(m, "fro") + np.linalg.norm(m, 1) + np.linalg.norm(m, -1)
    total = total + np.linalg.norm(m, np.inf) + np.linalg.norm(m, -np.inf)
    total = total + np.linalg.norm(m, 2) - np.linalg.norm(m, -2) + np.linalg.norm(m, "nuc")
    rows = np.linalg.norm(m, axis=1, keepdims=True)
    total = total + np.sum(m / rows)
    total = total + np.sum(np.linalg.norm(m, ord=3, axis=0)) + np.sum(np.linalg.norm(m, ord=1, axis=-1))
    total = total + np.sum(np.linalg.norm(m, ord=np.inf, axis=0)) + np.sum(np.linalg.norm(m, ord=-np.inf, axis=1))
    total = total + np.sum(np.linalg.norm(m, ord=0.5, axis=1))
    return total


def batched_norms(t):
    """Matrix norms of a 3-D stack along (1, 2) and (-1, -3), keepdims broadcast back."""
    fro = np.linalg.norm(t, axis=(1, 2), keepdims=True)
    normalised = t / fro
    return np.sum(normalised ** 3) + np.sum(np.linalg.norm(t, ord=1, axis=(-1, -2))) \
        + np.sum(np.linalg.norm(t, ord=2, axis=(1, 2))) + np.sum(np.linalg.norm(t, "nuc", axis=(-1, -3))) \
        + np.sum(np.linalg.norm(t, ord=np.inf, axis=(2, 1), keepdims=True) * t)


def vector_norms_loop(x):
    """Vector p-norms in a loop over p, as a float32 user might not; plus the 0-'norm' (constant)."""
    total = 0.0
    for p in [1, 2, 3, np.inf, -np.inf, 4.5]:
        total = total + np.linalg.norm(x, p) ** 2
    return total + np.linalg.norm(x, 0)


# -- einsum, tensordot, kron, cross ---------------------------------------------------------------


def bilinear_attention(q, k, w):
    """einsum with '...', repeated indices (traces) and outer products."""
    scores = np.einsum("...d,de,...e->...", q, w, k)
    tr = np.einsum("ii", w)
    diag_sq = np.einsum("ii->i", w) ** 2
    outer = np.einsum("i,j->ij", q[0], k[1])
    batch = np.einsum("bij,bjk->bik", np.stack([w, w.T]), np.stack([w, w]))
    return np.sum(np.tanh(scores)) + tr + np.sum(diag_sq) + np.sum(outer * w) + np.einsum("bii->", batch)


def tensor_contractions(a, b):
    """tensordot with an int and with pairs of axes (negative too)."""
    c1 = np.tensordot(a, b, axes=2)
    c2 = np.tensordot(a, b, axes=([-1, 1], [1, 0]))
    c3 = np.tensordot(a, a, axes=([-1], [-1]))
    c4 = np.tensordot(a[0], b[0, 0], axes=0)
    return np.sum(c1 ** 2) + np.sum(np.sin(c2)) + np.trace(c3, axis1=0, axis2=2).sum() + np.sum(c4)


def kron_covariance(a, b):
    """A Kronecker-structured covariance's quadratic form and log-determinant."""
    k = np.kron(a @ a.T + np.eye(2), b @ b.T + np.eye(3))
    v = np.arange(6.0) / 6.0
    sign, ld = np.linalg.slogdet(k)
    return v @ np.linalg.solve(k, v) + ld + np.sum(np.kron(a[0], b[:, 1]))


def torque_and_area(r, f, p):
    """cross of 3-vectors (rows), of 2-vectors (a number each), and along axis 0."""
    torque = np.cross(r, f)
    area = np.cross(p[:, :2], p[::-1, :2])
    along = np.cross(r.T, f.T, axis=0)
    return np.sum(torque ** 2) + np.sum(area) + np.sum(along * torque.T)


def angular_momentum_loop(positions, velocities):
    """cross in a loop over particles, accumulated with +=."""
    total = np.zeros(3)
    for i in range(positions.shape[0]):
        total += np.cross(positions[i], velocities[i]) * (i + 1)
    return np.dot(total, total)


# -- sorting, quantiles, take ---------------------------------------------------------------------


def trimmed_statistics(x):
    """Sort, partition, median and quantiles with axes and methods."""
    s = np.sort(x, axis=-1)
    trimmed = s[:, 1:-1].mean(axis=1)
    part = np.partition(x, 2, axis=1)[:, 2]
    med = np.median(x, axis=0)
    q = np.quantile(x, [0.25, 0.75], axis=1)
    qn = np.quantile(x, 0.3, axis=-1, method="nearest")
    pc = np.percentile(x, 90.0, axis=0, keepdims=True)
    return np.sum(trimmed ** 2) + np.sum(part) + np.sum(med * med) + np.sum(q[1] - q[0]) + np.sum(qn) \
        + np.sum(pc * x)


def sorted_by_key(values, keys):
    """Order rows by a key with argsort, gather with take and take_along_axis."""
    order = np.argsort(keys)
    ranked = np.take(values, order, axis=0)
    weights = np.linspace(1.0, 0.0, len(keys))
    inner = np.argsort(values, axis=1)
    smallest = np.take_along_axis(values, inner[:, :2], axis=1)
    return np.sum(weights[:, None] * ranked ** 2) + np.sum(np.exp(smallest)) + np.sum(np.take(values, [0, 0, 3]))


def median_of_means(x):
    """Median of block means: array_split's pieces in a comprehension."""
    blocks = np.array_split(x, 3)
    means = np.array([np.mean(b ** 2) for b in blocks])
    return np.median(means) + np.percentile(x, 40.0, method="lower") + np.quantile(x, 0.5, method="higher")


# -- split family, diff, gradient, shapes -------------------------------------------------------------


def piecewise_smoothness(u):
    """split into equal pieces and loop over them; diff with n and axis; gradient with spacing."""
    total = 0.0
    for piece in np.split(u, 3, axis=1):
        total = total + np.sum(np.diff(piece, n=2, axis=0) ** 2)
    left, right = np.hsplit(u, [2])
    total = total + np.sum(left * np.sum(right))
    gy = np.gradient(u, 0.1, axis=0)  # np.gradient(u, 0.1, 0.2), one spacing per axis, is refused
    gx = np.gradient(u, 0.2, axis=1)
    return total + np.sum(gx ** 2 + gy ** 2) + np.sum(np.diff(u, axis=-1) ** 3)


def irregular_grid_derivative(f, x):
    """np.gradient with coordinates, and diff-based trapezoid."""
    df = np.gradient(f, x)
    area = np.sum(0.5 * (f[1:] + f[:-1]) * np.diff(x))
    return np.sum(df ** 2) + area


def image_ops(img):
    """tile, repeat, flip, rot90, tril/triu/diag/diagonal with offsets, moveaxis/swapaxes."""
    up = np.repeat(np.repeat(img, 2, axis=0), 2, axis=1)
    tiled = np.tile(img, (2, 1))
    mirrored = np.flip(img, axis=-1) + np.rot90(img, 2) + np.rot90(img, k=-1).T
    band = np.triu(img, 1) - np.tril(img, -1)
    d = np.diag(img, 1) @ np.diagonal(img, offset=-1)
    stack = np.stack([img, img ** 2, img ** 3])
    moved = np.moveaxis(stack, 0, -1)
    swapped = np.swapaxes(stack, 0, 2)
    return np.sum(up[::3] ** 2) + np.sum(tiled[1:4] * 0.5) + np.sum(mirrored * img) + np.sum(band ** 2) + d \
        + np.sum(moved[..., 1] * swapped[:, :, 2].T) + np.sum(np.diag(np.diag(img)) ** 2)


def channel_shuffle(x):
    """moveaxis with lists, negative axes, and reshapes, as a vision model does."""
    y = np.moveaxis(x, [0, 1], [-1, -2])
    y = np.swapaxes(y, -1, 0)
    z = y.reshape(y.shape[0], -1)
    return np.sum(np.tanh(z) * np.arange(z.size).reshape(z.shape) / z.size)


# -- elementwise extras --------------------------------------------------------------------------


def log_mixture(x, logits):
    """A two-component mixture in log space with logaddexp; hypot, sinc, remainder."""
    lp1 = -0.5 * (x - 1.0) ** 2 + logits[0]
    lp2 = -0.5 * (x + 1.0) ** 2 + logits[1]
    ll = np.logaddexp(lp1, lp2) - np.logaddexp(logits[0], logits[1])
    r = np.hypot(x, 2.0 * x + 0.3)
    phase = np.remainder(3.0 * x + 10.0, 2.0 * np.pi)
    return np.sum(ll) + np.sum(r) + np.sum(np.sinc(x) ** 2) + np.sum(np.sin(phase))


def clean_and_clip(x, y):
    """nan_to_num on a value that may overflow, fmax/fmin against another array."""
    ratio = np.nan_to_num(np.log(np.abs(x)) * y, nan=0.0, posinf=10.0)
    upper = np.fmax(x, y)
    lower = np.fmin(x, 0.5 * y)
    return np.sum(ratio ** 2) + np.sum(upper * lower) + np.sum(np.logaddexp(x, 0.0))


def fmax_ties(x, y):
    """fmax/fmin where the two arguments are equal (the documented even split)."""
    return np.sum(np.fmax(x, y) ** 2) + np.sum(3.0 * np.fmin(x, y))


# -- math in scalar loops ------------------------------------------------------------------------


def poisson_log_likelihood(rate, counts):
    """math.lgamma and math.log in a scalar loop over counts."""
    ll = 0.0
    for k in counts:
        ll += k * math.log(rate) - rate - math.lgamma(k + 1.0)
    return ll + math.lgamma(rate + 1.5)


def polar_path(x, y):
    """math.atan2, math.hypot and math.erf in a loop that walks a path."""
    total = 0.0
    for i in range(4):
        angle = math.atan2(y + 0.1 * i, x - 0.2 * i)
        radius = math.hypot(x, y + i)
        total += math.erf(angle * 0.5) * radius + math.erfc(0.1 * radius)
    return total


def gamma_prior(params):
    """A dict of parameters, lgamma and gamma of entries."""
    a = params["shape"]
    b = params["rate"]
    return math.lgamma(a) - a * math.log(b) + math.gamma(b) + params["loc"] ** 2


# -- scipy.special -------------------------------------------------------------------------------


def classifier_loss(w, x, labels):
    """softmax cross entropy via log_softmax and logsumexp with axis; expit/logit."""
    logits = x @ w
    logp = special.log_softmax(logits, axis=1)
    probs = special.softmax(logits, axis=-1)
    nll = -np.mean(np.take_along_axis(logp, labels[:, None], axis=1))
    lse = special.logsumexp(logits, axis=1)
    gate = special.expit(logits[:, 0])
    return nll + 0.01 * np.sum(lse) + np.sum(probs ** 2) + np.sum(special.logit(0.1 + 0.8 * gate))


def weighted_logsumexp(a, w):
    """logsumexp with b (positive weights), keepdims, and a negative axis."""
    lse = special.logsumexp(a, axis=-1, b=w, keepdims=True)
    centred = a - lse
    return np.sum(np.exp(centred) * w) + special.logsumexp(a, b=w) + np.sum(special.logsumexp(a, axis=0))


def entropy_terms(p):
    """xlogy at 0 (an exact zero in p), xlog1py, and entropy of a softmax."""
    q = np.where(p > 0.3, p, 0.0)
    return np.sum(special.xlogy(q, q + 0.5)) + np.sum(special.xlog1py(p, p)) \
        + np.sum(special.xlogy(p, np.array([1.0, 2.0, 3.0, 4.0])))


def gammaln_counts(alpha, counts):
    """Dirichlet-multinomial log likelihood: gammaln and digamma."""
    a0 = np.sum(alpha)
    return special.gammaln(a0) - special.gammaln(a0 + np.sum(counts)) \
        + np.sum(special.gammaln(alpha + counts) - special.gammaln(alpha)) + np.sum(special.digamma(alpha))


# -- mixtures with loops, writes, helpers ---------------------------------------------------------


def _row_whiten(m):
    """A helper: centre each row and scale by its norm (keepdims)."""
    c = m - np.mean(m, axis=-1, keepdims=True)
    return c / np.linalg.norm(c, axis=-1, keepdims=True)


def whitened_gram(x):
    """A helper returning a normalised matrix, its Gram, eigh and a trace."""
    z = _row_whiten(x)
    g = z @ z.T + np.eye(z.shape[0])
    return np.sum(np.linalg.eigvalsh(g) ** 2) + np.trace(np.linalg.inv(g))


def covariance_into_array(x):
    """Fill a covariance matrix element by element, then invert and take log det."""
    n = x.shape[1]
    cov = np.zeros((n, n))
    for i in range(n):
        for j in range(n):
            cov[i, j] = np.mean((x[:, i] - np.mean(x[:, i])) * (x[:, j] - np.mean(x[:, j])))
    cov += 0.5 * np.eye(n)
    sign, ld = np.linalg.slogdet(cov)
    return ld + np.sum(np.linalg.inv(cov) ** 2)


def row_sorted_writes(x):
    """Write sorted rows into an array made by the function, then take medians."""
    out = np.zeros_like(x)
    for i in range(x.shape[0]):
        out[i] = np.sort(x[i] * (i + 1.0))
    out[:, 0] = out[:, 0] * 2.0
    return np.sum(np.median(out, axis=1) ** 2) + np.sum(np.diff(out, axis=0))


def rotation_sequence(angles):
    """Build rotation matrices in a loop with element writes; matrix products; det."""
    r = np.eye(3)
    for a in angles:
        m = np.eye(3)
        m[0, 0] = np.cos(a)
        m[0, 1] = -np.sin(a)
        m[1, 0] = np.sin(a)
        m[1, 1] = np.cos(a)
        r = r @ m
        r = np.rot90(r, 1, axes=(0, 1)).T
    return np.sum(r * np.arange(9.0).reshape(3, 3)) + np.linalg.det(r + np.eye(3))


def config_driven(x, cfg):
    """Parameters in a dict: a quantile level, an axis, a norm order."""
    q = np.quantile(x, cfg["level"], axis=cfg["axis"])
    n = np.linalg.norm(x, ord=cfg["ord"], axis=cfg["axis"], keepdims=True)
    return np.sum(q ** 2) + np.sum(x / n)


def float32_pipeline(x):
    """float32 input through einsum, sort, logaddexp and cumsum."""
    s = np.sort(x, axis=0)
    c = np.einsum("ij,kj->ik", s, x)
    return np.sum(np.logaddexp(c, 0.5 * c)) + np.sum(np.cumsum(x, axis=-1) ** 2)


def keepdims_standardise(x):
    """keepdims reductions broadcast back: std, max, percentile, norm."""
    z = (x - np.mean(x, axis=0, keepdims=True)) / np.std(x, axis=0, keepdims=True)
    m = np.max(z, axis=-1, keepdims=True)
    p = np.percentile(x, 50.0, axis=-2, keepdims=True)
    return np.sum(np.exp(z - m)) + np.sum(p * z)


def split_accumulate(x):
    """Pieces of np.split added up in a loop with +=, and array_split used by constant indices."""
    acc = np.zeros(2)
    for k, piece in enumerate(np.split(x, 4)):
        acc += piece * (k + 1)
    parts = np.array_split(x, 3)
    return np.sum(acc ** 2) + np.sum(parts[0]) * np.sum(parts[2] ** 2) - np.prod(parts[1])


def vsplit_dsplit(x):
    """vsplit and dsplit on a 3-D array, unpacked."""
    top, bottom = np.vsplit(x, 2)
    a, b = np.dsplit(x, [1])
    return np.sum(top * bottom) + np.sum(np.sin(a) * np.sum(b, axis=-1, keepdims=True))


def local_minimum_search(x):
    """A data-dependent while loop walking a sorted copy; partition with a negative kth."""
    s = np.sort(x)
    i = 0
    total = 0.0
    while i < len(s) - 1 and s[i] < 0.5:
        total = total + s[i + 1] - s[i] * 0.5
        i += 1
    return total + np.partition(x, -2)[-2]


def cross_product_chain(u, v):
    """cross of a vector with itself crossed (triple products) in a helper."""
    w = np.cross(u, v)
    return _triple(w, u, v) + np.linalg.norm(np.cross(w, u), 2)


def _triple(a, b, c):
    return np.dot(a, np.cross(b, c))


def inv_in_loop(m):
    """Newton-Schulz like iteration compared with inv; matrix_power with a loop variable."""
    total = 0.0
    a = m + 3.0 * np.eye(m.shape[0])
    for k in range(3):
        total = total + np.sum(np.linalg.matrix_power(a, k) * 0.01)
    x = np.eye(a.shape[0]) / np.linalg.norm(a, 1) / np.linalg.norm(a, np.inf)
    for _ in range(3):
        x = x @ (2.0 * np.eye(a.shape[0]) - a @ x)
    return total + np.sum((x - np.linalg.inv(a)) ** 2) + np.sum(x)


def diff_prepend_and_gradient_edges(x):
    """diff of order 3, gradient with edge_order 2 and axis=-1 on a 2-D array."""
    d3 = np.diff(x, 3)
    g = np.gradient(x, 0.5, axis=-1, edge_order=2)
    return np.sum(d3 ** 2) + np.sum(g * x)


def sinc_interpolate(samples, t):
    """Whittaker-Shannon interpolation with sinc, both in the samples and the time."""
    n = np.arange(len(samples))
    return np.sum(samples[None, :] * np.sinc(t[:, None] - n[None, :]) ** 1)


def hypot_rows(x):
    """np.hypot reduced over a loop, with a python float."""
    r = x[0]
    for row in x[1:]:
        r = np.hypot(r, row)
    return np.sum(r) + np.hypot(1.5, np.sum(x))


def winner_take_most(x):
    """Array methods users call: argmax, argmin, argsort, round, any (they were refused as methods)."""
    best = x.argmax(axis=1)
    worst = x.argmin()
    order = x[0].argsort()
    picked = np.take_along_axis(x, best[:, None], axis=1)
    scale = 1.0 + x.round(1).any()
    return np.sum(picked ** 2) * scale + x.ravel()[worst] + np.sum(x[0][order] * np.arange(x.shape[1]))


# -- the harness ---------------------------------------------------------------------------------

A33 = RNG.normal(size=(3, 3))
B3 = RNG.normal(size=(2, 3, 3))
X5 = np.array([0.3, -1.2, 0.8, 1.9, -0.4])
M34 = np.array([[0.7, -1.3, 0.2, 2.1], [-0.5, 0.9, 1.6, -0.8], [1.4, 0.1, -2.3, 0.6]])
LABELS = np.array([0, 2, 1, 1, 0])

# name -> (args, options): "twin" False where JAX cannot run the same code (element writes, data-
# dependent Python control flow); "hessian" False where it is expensive or undefined
CASES = {
    "gaussian_process_nll": ((0.2, np.array([0.0, 0.4, 1.1, 1.7, 2.6]), np.array([0.5, -0.2, 0.9, 0.3, -0.6])), {}),
    "ridge_with_inverse": ((np.array([0.5, -1.1, 0.8]), RNG.normal(size=(6, 3)), RNG.normal(size=6)), {}),
    "batched_logdet": ((RNG.normal(size=(2, 3, 3)),), {}),
    "batched_solve": ((RNG.normal(size=(2, 3, 3)), RNG.normal(size=(2, 3, 2))), {"hessian": True}),
    "spectral_energy": ((np.array([[2.0, 0.3, -0.4], [0.1, -1.0, 0.6], [0.5, 0.2, 0.7]]),), {"hessian": True}),
    "batched_eigvalsh": ((np.array([[[1.0, 0.2, 0.7], [0.1, 2.0, 0.1], [0.4, 0.3, 3.5]],
                                    [[0.5, -0.4, 0.2], [-0.1, -1.0, 0.3], [0.6, 0.3, 2.5]]]),), {}),
    "low_rank_fit": ((M34.T.copy(),), {"hessian": True}),
    "batched_svd_values": ((RNG.normal(size=(2, 3, 2)),), {}),
    "orthonormal_projection": ((RNG.normal(size=(5, 3)), RNG.normal(size=5)), {}),
    "pinv_regression": ((RNG.normal(size=(2, 4)), RNG.normal(size=2)), {}),
    "lstsq_fit": ((RNG.normal(size=(5, 2)), RNG.normal(size=5)), {}),
    "markov_chain": ((RNG.normal(size=(3, 3)),), {"hessian": True}),
    "norm_zoo": ((M34,), {}),
    "batched_norms": ((RNG.normal(size=(2, 3, 4)),), {}),
    "vector_norms_loop": ((X5,), {}),
    "bilinear_attention": ((RNG.normal(size=(2, 3)), RNG.normal(size=(2, 3)), RNG.normal(size=(3, 3))), {"hessian": True}),
    "tensor_contractions": ((RNG.normal(size=(2, 3, 4)), RNG.normal(size=(3, 4, 2))), {}),
    "kron_covariance": ((RNG.normal(size=(2, 2)), RNG.normal(size=(3, 3))), {"hessian": True}),
    "torque_and_area": ((RNG.normal(size=(4, 3)), RNG.normal(size=(4, 3)), RNG.normal(size=(4, 3))), {"hessian": True}),
    "angular_momentum_loop": ((RNG.normal(size=(3, 3)), RNG.normal(size=(3, 3))), {"twin": False}),
    "trimmed_statistics": ((RNG.normal(size=(4, 5)),), {"hessian": True}),
    "sorted_by_key": ((RNG.normal(size=(4, 3)), np.array([0.3, -1.0, 2.0, 0.1])), {}),
    "median_of_means": ((np.array([0.3, -1.2, 0.8, 1.9, -0.4, 0.65, 1.1, -2.3, 0.45]),), {}),
    "piecewise_smoothness": ((RNG.normal(size=(4, 6)),), {}),
    "irregular_grid_derivative": ((np.array([0.3, 0.9, 0.2, -0.5, 1.1]), np.array([0.0, 0.3, 0.5, 1.2, 1.6])),
                                  {"wrt": (0,), "twin": False}),
    "image_ops": ((RNG.normal(size=(3, 3)),), {}),
    "channel_shuffle": ((RNG.normal(size=(2, 3, 4)),), {}),
    "log_mixture": ((X5, np.array([0.2, -0.7])), {"hessian": True}),
    "clean_and_clip": ((np.array([0.5, -2.0, 1.5, 0.25]), np.array([1.3, -1.0, 0.7, 2.0])), {}),
    "fmax_ties": ((np.array([0.5, -2.0, 1.5]), np.array([0.5, -1.0, 1.5])), {"twin": False}),
    "poisson_log_likelihood": ((2.5, [0.0, 3.0, 1.0, 4.0]), {"twin": False}),
    "polar_path": ((1.3, 0.4), {}),
    "gamma_prior": (({"shape": 2.5, "rate": 1.7, "loc": 0.3},), {"twin": False}),
    "classifier_loss": ((RNG.normal(size=(3, 3)), RNG.normal(size=(5, 3)), LABELS), {"hessian": True}),
    "weighted_logsumexp": ((RNG.normal(size=(3, 4)), np.abs(RNG.normal(size=(3, 4))) + 0.1), {"hessian": True}),
    "entropy_terms": ((np.array([0.1, 0.5, 0.2, 0.9]),), {}),
    "gammaln_counts": ((np.array([0.7, 1.5, 2.2]), np.array([3.0, 0.0, 5.0])), {}),
    "whitened_gram": ((RNG.normal(size=(3, 4)),), {}),
    "covariance_into_array": ((RNG.normal(size=(6, 3)),), {"twin": False}),
    "row_sorted_writes": ((RNG.normal(size=(3, 4)),), {"twin": False}),
    "rotation_sequence": ((np.array([0.3, -0.8, 1.2]),), {"twin": False}),
    "config_driven": ((RNG.normal(size=(3, 4)), {"level": 0.3, "axis": -1, "ord": 3}), {}),
    "float32_pipeline": ((RNG.normal(size=(3, 4)).astype(np.float32),), {"float32": True}),
    "keepdims_standardise": ((RNG.normal(size=(4, 5)),), {}),
    "split_accumulate": ((np.array([0.3, -1.2, 0.8, 1.9, -0.4, 0.65, 1.1, -2.3]),), {"twin": False}),
    "vsplit_dsplit": ((RNG.normal(size=(4, 2, 3)),), {}),
    "local_minimum_search": ((np.array([0.9, -0.3, 0.2, 1.4, 0.05, 0.7]),), {"twin": False}),
    "cross_product_chain": ((np.array([0.3, -1.2, 0.8]), np.array([1.1, 0.4, -0.6])), {"hessian": True}),
    "inv_in_loop": ((RNG.normal(size=(3, 3)) * 0.3,), {}),
    "diff_prepend_and_gradient_edges": ((RNG.normal(size=(2, 6)),), {"twin": False}),
    "sinc_interpolate": ((np.array([0.3, -1.2, 0.8, 1.9]), np.array([0.35, 1.6, 2.2])), {}),
    "hypot_rows": ((RNG.normal(size=(3, 4)),), {}),
    "winner_take_most": ((RNG.normal(size=(3, 4)),), {}),
}


def _float_positions(args):
    return tuple(i for i, a in enumerate(args)
                 if isinstance(a, float) or (isinstance(a, np.ndarray) and a.dtype.kind == "f")
                 or (isinstance(a, dict) and all(isinstance(v, float) for v in a.values())))


def _dict_fd(f, args, i, eps=1e-6):
    """Central differences by each item of a dict argument."""
    out = {}
    for key, value in args[i].items():
        plus, minus = dict(args[i]), dict(args[i])
        plus[key], minus[key] = value + eps, value - eps
        hi = list(args); hi[i] = plus
        lo = list(args); lo[i] = minus
        out[key] = (f(*hi) - f(*lo)) / (2 * eps)
    return out


def _jax():
    jax = pytest.importorskip("jax")
    jax.config.update("jax_enable_x64", True)
    return jax


def jax_twin(f):
    """``f``'s own code run with np, math and special bound to JAX's (its helpers too)."""
    jax = _jax()
    import jax.numpy as jnp
    import jax.scipy.special as jss

    shim_math = types.SimpleNamespace(
        log=jnp.log, lgamma=jss.gammaln, gamma=lambda v: jnp.exp(jss.gammaln(v)), erf=jss.erf,
        erfc=jss.erfc, atan2=jnp.arctan2, hypot=jnp.hypot, pi=math.pi, exp=jnp.exp, sqrt=jnp.sqrt)
    shim_special = types.SimpleNamespace(**{n: getattr(jss, n) for n in dir(jss) if not n.startswith("_")})
    shim_special.softmax = jax.nn.softmax
    shim_special.log_softmax = jax.nn.log_softmax
    shim_np = types.SimpleNamespace(**{n: getattr(jnp, n) for n in dir(jnp) if not n.startswith("_")})
    for listed in ("take", "quantile", "percentile", "repeat"):  # JAX takes arrays where NumPy takes lists too
        shim_np.__dict__[listed] = (lambda fn: lambda a, b, *rest, **kw: fn(
            a, jnp.asarray(b) if isinstance(b, list) else b, *rest, **kw))(
            getattr(jnp, listed))
    names = dict(f.__globals__)
    names.update(np=shim_np, math=shim_math, special=shim_special)
    for name, value in list(names.items()):
        if isinstance(value, types.FunctionType) and value.__module__ == f.__module__ and name.startswith("_"):
            names[name] = types.FunctionType(value.__code__, names, name)
    return types.FunctionType(f.__code__, names, f.__name__)


def _check_jvp(f, args, positions, grads, rtol):
    """<grad, t> against jvp along a random direction t of the float arguments."""
    rng = np.random.default_rng(5)
    tangents = [None] * len(args)
    for i in positions:
        tangents[i] = rng.normal(size=np.shape(args[i])).astype(np.asarray(args[i]).dtype) \
            if isinstance(args[i], np.ndarray) else float(rng.normal())
    want = sum(float(np.sum(np.asarray(g, dtype=float) * tangents[i])) for i, g in zip(positions, grads))
    value, got = s2s_ad.jvp(f, tuple(args), tuple(tangents))
    np.testing.assert_allclose(got, want, rtol=rtol, atol=rtol * 1e-2)
    np.testing.assert_allclose(value, f(*args), rtol=1e-6)


# NumPy 2.5 removed np.cross of 2-vectors (deprecated since 2.0): the programs that take it run only before
_NO_2D_CROSS = np.lib.NumpyVersion(np.__version__) >= "2.5.0"
_TWO_VECTOR_CROSS = {"angular_momentum_loop", "cross_product_chain", "torque_and_area"}


@pytest.mark.parametrize("name", [pytest.param(n, marks=pytest.mark.skipif(
    _NO_2D_CROSS and n in _TWO_VECTOR_CROSS, reason="NumPy 2.5 removed np.cross of 2-vectors, which this program takes"))
    for n in sorted(CASES)])
def test_user_program(name):
    f = globals()[name]
    if special is None and "special." in inspect.getsource(f):
        pytest.skip("SciPy is not installed")
    args, options = CASES[name]
    positions = options.get("wrt", _float_positions(args))
    low = options.get("float32", False)
    rtol, atol = (2e-2, 2e-2) if low else (1e-5, 1e-6)
    grads = s2s_ad.grad(f, wrt=positions)(*args)
    value, grads2 = s2s_ad.value_and_grad(f, wrt=positions)(*args)
    np.testing.assert_allclose(value, f(*args), rtol=1e-12)
    wide = [a.astype(np.float64) if isinstance(a, np.ndarray) and a.dtype == np.float32 else a for a in args]
    for i, g, g2 in zip(positions, grads, grads2):
        if isinstance(args[i], dict):
            want = _dict_fd(f, args, i)
            for key in want:
                np.testing.assert_allclose(g[key], want[key], rtol=rtol, atol=atol, err_msg=f"{name} {key}")
            continue
        want = numeric_grad(f, wide, i)
        assert np.shape(g) == np.shape(args[i])
        if low:
            assert g.dtype == np.float32, (name, g.dtype)
        np.testing.assert_allclose(g, want, rtol=rtol, atol=atol, err_msg=f"{name} d/darg{i}")
        np.testing.assert_array_equal(g, g2)
    if not any(isinstance(a, dict) for a in args):
        _check_jvp(f, args, positions, grads, 1e-3 if low else 1e-7)
    out, pull = s2s_ad.vjp(f, *args) if "wrt" not in options else (None, None)
    first = pull(1.0) if pull else None
    second = pull(1.0) if pull else None
    for i in positions:
        if isinstance(args[i], dict) or pull is None:
            continue
        np.testing.assert_allclose(first[i], grads[positions.index(i)], rtol=1e-10, atol=1e-12)
        np.testing.assert_array_equal(first[i], second[i])
    if options.get("twin", True) and not low:
        _check_against_jax(f, args, positions, grads, options.get("hessian", False))


def _check_against_jax(f, args, positions, grads, hessian):
    """The gradient (and the Hessian by the first argument) against JAX's of the same code, compiled
    once (JAX's op-by-op dispatch compiles every primitive: ten times slower here)."""
    jax = _jax()
    twin = jax_twin(f)

    def by_differentiated(*moving):
        full = list(args)
        for i, value in zip(positions, moving):
            full[i] = value
        return twin(*full)

    moving = [args[i] for i in positions]
    jaxed = jax.jit(jax.grad(by_differentiated, argnums=tuple(range(len(positions)))))(*moving)
    for i, g, j in zip(positions, grads, jaxed):
        np.testing.assert_allclose(g, np.asarray(j), rtol=1e-8, atol=1e-10, err_msg=f"{f.__name__} vs JAX d/darg{i}")
    if hessian:
        h = s2s_ad.hessian(f, wrt=positions[0])(*args)
        hj = np.asarray(jax.jit(jax.hessian(by_differentiated))(*moving))
        np.testing.assert_allclose(np.reshape(h, hj.shape), hj, rtol=1e-7, atol=1e-8,
                                   err_msg=f"{f.__name__} hessian vs JAX")


# -- regressions: a derivative a rule does not give is refused, never dropped -------------------------


def slope_energy(u, h):
    """The grid spacing as a parameter being fitted: np.gradient's rule has no derivative in it."""
    return np.sum(np.gradient(u, h) ** 2)


def padded_with_fill(x, fill):
    """A border value that is a parameter: np.pad's rule has no derivative in constant_values."""
    return np.sum(np.pad(x, 1, constant_values=fill) ** 2)


def clipped_log(x, floor):
    """nan_to_num's replacement for -inf, a parameter."""
    return np.sum(np.nan_to_num(np.log(x), neginf=floor) ** 2)


def reduce_along(x, axis):
    """An integer argument used as an axis: it has no derivative to lose."""
    return np.sum(np.sum(x ** 2, axis=axis) ** 2) + np.sum(np.quantile(x, 0.3, axis=axis))


@pytest.mark.parametrize("f, args, wrt, words", [
    (slope_energy, (np.array([0.3, 0.9, 0.2, -0.5]), 0.4), 1, "spacing"),
    (irregular_grid_derivative, CASES["irregular_grid_derivative"][0], 1, "spacing"),
    (padded_with_fill, (np.array([0.3, 0.9, 0.2]), 0.7), 1, "constant_values"),
    (clipped_log, (np.array([0.5, 0.3, 2.0]), -3.0), 1, "neginf"),
])
def test_an_input_a_rule_has_no_derivative_in_is_refused(f, args, wrt, words):
    """Before the fix each of these returned 0 for the parameter (the rule has no d_<input>)."""
    line = f.__code__.co_firstlineno + 2
    with pytest.raises(s2s_ad.TransformError, match=rf"{f.__code__.co_filename}:{line}.*{words}.*stop_gradient"):
        s2s_ad.grad(f, wrt=wrt)(*args)
    tangents = tuple(np.ones_like(a) if i == wrt else None for i, a in enumerate(args))
    with pytest.raises(s2s_ad.TransformError, match=words):
        s2s_ad.jvp(f, args, tangents)
    with pytest.raises(s2s_ad.TransformError, match=words):
        s2s_ad.vjp(f, *args)[1](1.0)
    # by the other argument only, the same function is differentiated as before
    other = 1 - wrt
    np.testing.assert_allclose(s2s_ad.grad(f, wrt=other)(*args), numeric_grad(f, args, other), rtol=1e-6, atol=1e-8)


def test_an_integer_argument_in_the_differentiated_set_still_works():
    """vjp differentiates every argument, and a dict of settings may hold an axis: integers pass."""
    x = RNG.normal(size=(3, 4))
    out, pull = s2s_ad.vjp(reduce_along, x, -1)
    d_x, d_axis = pull(1.0)
    np.testing.assert_allclose(d_x, numeric_grad(reduce_along, (x, -1), 0), rtol=1e-6, atol=1e-8)
    assert d_axis == 0
    cfg = {"level": 0.3, "axis": -1, "ord": 3}
    d_x, d_cfg = s2s_ad.grad(config_driven, wrt=(0, 1))(x, cfg)
    np.testing.assert_allclose(d_x, numeric_grad(config_driven, (x, cfg), 0), rtol=1e-6, atol=1e-8)
    want = (config_driven(x, dict(cfg, level=0.3 + 1e-6)) - config_driven(x, dict(cfg, level=0.3 - 1e-6))) / 2e-6
    np.testing.assert_allclose(d_cfg["level"], want, rtol=1e-6)
    value, tangent = s2s_ad.jvp(reduce_along, (x, 1), (np.ones_like(x), None))
    np.testing.assert_allclose(tangent, np.sum(numeric_grad(reduce_along, (x, 1), 0)), rtol=1e-6)


# -- regressions: np.cross of 2-vectors, quantile methods, lstsq with one tangent ---------------------


def planar_areas(p, q):
    """Signed areas of 2-D triangles (2-vector cross: one number each), and a 2-vector by a 3-vector."""
    return np.sum(np.cross(p, q) ** 2) + np.sum(np.sin(np.cross(p[0], q[1]))) \
        + np.sum(np.cross(p, np.array([0.3, -0.2, 1.0])) ** 2)


def columns_cross(a, b):
    """Vectors stored in columns: axisa/axisb/axisc, a 3-vector with 2-vectors, and axis=."""
    return np.sum(np.cross(a, b, axisa=0, axisb=0, axisc=0) ** 3) + np.sum(np.cross(a[:2], b[:2], axis=0) ** 2)


def robust_levels(x, q):
    """Quantiles by method, with q a parameter too (the linear method moves with q)."""
    return np.sum(np.quantile(x, q, method="lower") ** 2) + np.sum(np.quantile(x, q, axis=1, method="higher")) \
        + np.sum(np.quantile(x, q) ** 2) + np.sum(np.percentile(x, 100.0 * q, axis=0, method="nearest")) \
        + np.sum(np.quantile(x, q, axis=-1, method="midpoint") ** 3) + np.median(x)


@pytest.mark.skipif(_NO_2D_CROSS, reason="NumPy 2.5 removed np.cross of 2-vectors")
def test_cross_of_two_vectors_matches_differences_and_jax():
    """np.cross of 2-vectors gave NumPy's shape error from the adjoint (NumPy refused its shapes)."""
    p, q = RNG.normal(size=(4, 2)), RNG.normal(size=(4, 2))
    a, b = RNG.normal(size=(3, 5)), RNG.normal(size=(3, 5))
    for f, args in ((planar_areas, (p, q)), (columns_cross, (a, b))):
        got = s2s_ad.grad(f, wrt=(0, 1))(*args)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DeprecationWarning)  # NumPy 2 deprecates 2-vectors
            for i in (0, 1):
                np.testing.assert_allclose(got[i], numeric_grad(f, args, i), rtol=1e-6, atol=1e-8)
        _check_against_jax(f, args, (0, 1), got, hessian=True)
        _check_jvp(f, args, (0, 1), got, 1e-9)


def test_quantile_methods_match_differences_and_jax():
    """method= was refused (the rule did not take it); lower/higher/nearest/midpoint are selections."""
    x = RNG.normal(size=(4, 7))
    q = np.array([0.15, 0.55, 0.8])
    got = s2s_ad.grad(robust_levels, wrt=(0, 1))(x, q)
    for i in (0, 1):
        np.testing.assert_allclose(got[i], numeric_grad(robust_levels, (x, q), i), rtol=1e-6, atol=1e-8)
    _check_against_jax(robust_levels, (x, q), (0, 1), got, hessian=False)
    jax = _jax()
    twin = jax_twin(robust_levels)
    want = jax.jit(jax.hessian(lambda level: twin(x, level)))(q)
    np.testing.assert_allclose(s2s_ad.hessian(robust_levels, wrt=1)(x, q), np.asarray(want), rtol=1e-8, atol=1e-10)
    _check_jvp(robust_levels, (x, q), (0, 1), got, 1e-9)


def unknown_method(x):
    return np.quantile(x, 0.3, method="hazen")


def test_a_quantile_method_without_a_rule_raises():
    with pytest.raises(ValueError, match="hazen"):
        s2s_ad.grad(unknown_method)(np.array([0.3, 0.1, 0.9]))


def test_lstsq_forward_mode_with_one_argument_moving():
    """lstsq's tangent rule used t_a and t_b as arrays: a missing one (a plain 0) failed to reshape."""
    a, b = RNG.normal(size=(5, 2)), RNG.normal(size=5)
    grads = s2s_ad.grad(lstsq_fit, wrt=(0, 1))(a, b)
    ta = RNG.normal(size=a.shape)
    _, along_a = s2s_ad.jvp(lstsq_fit, (a, b), (ta, None))
    np.testing.assert_allclose(along_a, np.sum(grads[0] * ta), rtol=1e-9)
    _, along_b = s2s_ad.jvp(lstsq_fit, (a, b), (None, np.ones(5)))
    np.testing.assert_allclose(along_b, np.sum(grads[1]), rtol=1e-9)


def ragged_means(x):
    blocks = np.array_split(x, 3)
    return np.median(np.array([np.mean(b ** 2) for b in blocks]))


def test_ragged_pieces_in_a_comprehension_have_their_own_adjoints():
    """Pieces of different lengths read by a loop: each piece's adjoint is its own (docs/rules.md)."""
    x = np.arange(8.0)
    np.testing.assert_allclose(s2s_ad.grad(ragged_means)(x), numeric_grad(ragged_means, (x,), 0), rtol=1e-6, atol=1e-8)


# -- regressions: np.diag of a matrix and einsum of one operand are views --------------------------


def diagonal_then_update(x):
    """np.diag(m) of a matrix is a view of m: NumPy shows the later write through it."""
    m = np.outer(x, x)
    d = np.diag(m)
    m[0, 0] = x[1] ** 3
    return np.sum(d * x)


def einsum_diagonal_then_update(x):
    """einsum of one operand ("ii->i", "ij->ji") returns a view of it."""
    m = np.outer(x, x)
    d = np.einsum("ii->i", m)
    m[0, 0] = x[1] ** 3
    return np.sum(d * x)


def diagonal_copied_then_update(x):
    """What to write instead: copy the view where it is taken."""
    m = np.outer(x, x)
    d = np.diag(m).copy()
    e = np.einsum("ii->i", m).copy()
    m[0, 0] = x[1] ** 3
    return np.sum(d * x) + np.sum(e ** 2) + np.sum(m)


@pytest.mark.parametrize("f", [diagonal_then_update, einsum_diagonal_then_update])
def test_a_view_made_by_diag_or_einsum_read_after_a_write_shows_the_write(f):
    """Both returned a wrong gradient (the value before the write) before diag and einsum were
    declared may_view; then they were refused; now the view is read by its positions in m (issue 31)."""
    x = np.array([0.3, -1.2, 0.8])
    value, gradient = s2s_ad.value_and_grad(f)(x)
    assert value == pytest.approx(f(x.copy()), rel=1e-12)
    np.testing.assert_allclose(gradient, numeric_grad(f, (x,), 0), rtol=1e-6, atol=1e-8)


def test_copied_views_are_differentiated():
    x = np.array([0.3, -1.2, 0.8])
    np.testing.assert_allclose(s2s_ad.grad(diagonal_copied_then_update)(x),
                               numeric_grad(diagonal_copied_then_update, (x,), 0), rtol=1e-7, atol=1e-9)


# -- regressions: take_along_axis with broadcast indices, percentile of a list of levels ---------------


def nearest_neighbour_pick(x):
    """Indices of one row used for every row (NumPy broadcasts them), and one column for all."""
    idx = np.array([[0, 2, 2]])
    picked = np.take_along_axis(x, idx, axis=1)
    firsts = np.take_along_axis(x[:, :1], np.array([[0, 0, 0]]), axis=1)
    return np.sum(picked ** 2) + np.sum(firsts ** 3) + np.sum(np.take_along_axis(x[:1], np.array([[0], [0]]), axis=0))


def percentile_bands(x):
    """Levels given as a list, as most users write them."""
    return np.sum(np.percentile(x, [10.0, 50.0, 90.0], axis=0) ** 2) + np.sum(np.percentile(x, [25, 75]))


def test_take_along_axis_with_broadcast_indices():
    """The adjoint scattered over the indices' shape: NumPy's broadcasting failed it."""
    x = RNG.normal(size=(3, 4))
    got = s2s_ad.grad(nearest_neighbour_pick)(x)
    np.testing.assert_allclose(got, numeric_grad(nearest_neighbour_pick, (x,), 0), rtol=1e-7, atol=1e-9)
    _check_against_jax(nearest_neighbour_pick, (x,), (0,), (got,), hessian=True)
    _check_jvp(nearest_neighbour_pick, (x,), (0,), (got,), 1e-9)


def test_percentile_of_a_list_of_levels():
    """q / 100.0 on a list raised TypeError in the adjoint."""
    x = RNG.normal(size=(5, 3))
    got = s2s_ad.grad(percentile_bands)(x)
    np.testing.assert_allclose(got, numeric_grad(percentile_bands, (x,), 0), rtol=1e-7, atol=1e-9)
    _check_against_jax(percentile_bands, (x,), (0,), (got,), hessian=False)
    _check_jvp(percentile_bands, (x,), (0,), (got,), 1e-9)


# -- regressions: np.full and np.arange in their float arguments --------------------------------------


def bias_grid(b, x):
    """A bias broadcast by np.full (before: declared a constant, so d/db was 0)."""
    field = np.full((3, 4), b) + np.full_like(x, np.array([0.5, b, 2.0 * b, 1.0]))
    return np.sum(np.tanh(field * x))


def time_grid(t0, dt):
    """Sample times from np.arange with float start and step (before: 0 for both)."""
    t = np.arange(t0, t0 + 2.05, dt)
    return np.sum(np.sin(t) ** 2) + np.sum(np.arange(3.0 * t0))


def test_full_and_arange_carry_their_fill_start_and_step():
    x = RNG.normal(size=(3, 4))
    got = s2s_ad.grad(bias_grid, wrt=(0, 1))(0.3, x)
    for i in (0, 1):
        np.testing.assert_allclose(got[i], numeric_grad(bias_grid, (0.3, x), i), rtol=1e-7, atol=1e-9)
    _check_against_jax(bias_grid, (0.3, x), (0, 1), got, hessian=True)
    _check_jvp(bias_grid, (0.3, x), (0, 1), got, 1e-9)
    got = s2s_ad.grad(time_grid, wrt=(0, 1))(0.2, 0.3)  # 7 samples, away from a change of length
    for i in (0, 1):
        np.testing.assert_allclose(got[i], numeric_grad(time_grid, (0.2, 0.3), i), rtol=1e-7, atol=1e-9)
    _check_jvp(time_grid, (0.2, 0.3), (0, 1), got, 1e-9)
    h = s2s_ad.hessian(time_grid, wrt=1)(0.2, 0.3)
    g = s2s_ad.grad(time_grid, wrt=1)
    np.testing.assert_allclose(h, (g(0.2, 0.3 + 1e-5) - g(0.2, 0.3 - 1e-5)) / 2e-5, rtol=1e-6)


def product_then_update(x, w):
    """einsum of two operands makes a new array: reading it after a write into m is fine."""
    m = np.outer(x, x)
    c = np.einsum("ij,jk->ik", m, w)
    m[0, 0] = x[1] ** 3
    return np.sum(c ** 2) + np.sum(m)


def test_einsum_of_two_operands_is_a_new_array():
    x, w = np.array([0.3, -1.2, 0.8]), RNG.normal(size=(3, 3))
    got = s2s_ad.grad(product_then_update, wrt=(0, 1))(x, w)
    for i in (0, 1):
        np.testing.assert_allclose(got[i], numeric_grad(product_then_update, (x, w), i), rtol=1e-7, atol=1e-9)


# -- np.diff with prepend and append ------------------------------------------------------------


def increments_from_rest(x, x0):
    """Increments with the starting point prepended (a number) and the last value appended."""
    steps = np.diff(x, prepend=x0)
    rows = np.diff(np.outer(x, x), n=2, axis=0, prepend=np.zeros((1, x.size)), append=x[None, :])
    return np.sum(steps ** 2) + np.sum(rows ** 2) + np.sum(np.diff(x, append=2.0 * x0) * x)


def test_diff_with_prepend_and_append():
    """prepend= and append= were refused (the rule did not take them)."""
    x = np.array([0.3, -1.2, 0.8, 1.5])
    got = s2s_ad.grad(increments_from_rest, wrt=(0, 1))(x, 0.4)
    for i in (0, 1):
        np.testing.assert_allclose(got[i], numeric_grad(increments_from_rest, (x, 0.4), i), rtol=1e-7, atol=1e-9)
    _check_against_jax(increments_from_rest, (x, 0.4), (0, 1), got, hessian=True)
    _check_jvp(increments_from_rest, (x, 0.4), (0, 1), got, 1e-9)
    out, pull = s2s_ad.vjp(increments_from_rest, x, 0.4)
    first, second = pull(1.0), pull(1.0)
    np.testing.assert_allclose(first[0], got[0], rtol=1e-12)
    np.testing.assert_array_equal(first[1], second[1])


def test_a_missing_tangent_in_a_pair_of_adjoints_adds_nothing():
    """pair_sum (the adjoints of a product that may repeat a list) indexed a plain 0 where forward
    mode had no tangent (found by moving one input of each rule at a time)."""
    from s2s_ad.rules import registry as rules
    pair_sum = rules.helpers()["pair_sum"]  # templates/operators.py
    pair = (np.array([1.0, 2.0]), np.array([3.0]))
    assert pair_sum(pair, 0.0) is pair
    assert pair_sum(0.0, pair) is pair


# -- the refusal through helpers: only where the caller's argument varies ---------------------------


def _slope_of(u, dx):
    return np.gradient(u, dx)


def _smoothness(u, dx, axis):
    return np.sum(_slope_of(u, dx * 2.0) ** 2) + np.sum(np.sum(u, axis=axis))


def smoothness_by_step(u, dx):
    """A spacing handed down through two helpers."""
    return _smoothness(u, dx, 0) + np.sum(_slope_of(u, 0.5))


def test_a_lost_derivative_in_a_helper_is_refused_only_where_the_argument_varies():
    """A helper is differentiated by all its parameters: refusing there refused np.gradient(u, dx)
    with a constant dx; its callers check instead."""
    u = np.array([0.3, 0.9, 0.2, -0.5])
    got = s2s_ad.grad(smoothness_by_step)(u, 0.4)  # by u: dx is a constant here
    np.testing.assert_allclose(got, numeric_grad(smoothness_by_step, (u, 0.4), 0), rtol=1e-7, atol=1e-9)
    h = s2s_ad.hessian(smoothness_by_step)(u, 0.4)
    g = s2s_ad.grad(smoothness_by_step)
    np.testing.assert_allclose(h @ np.ones(4), (g(u + 1e-5, 0.4) - g(u - 1e-5, 0.4)) / 2e-5, rtol=1e-6, atol=1e-8)
    line = _slope_of.__code__.co_firstlineno + 1
    with pytest.raises(s2s_ad.TransformError, match=rf":{line}.*spacing"):
        s2s_ad.grad(smoothness_by_step, wrt=1)(u, 0.4)
    with pytest.raises(s2s_ad.TransformError, match=rf":{line}.*spacing"):
        s2s_ad.jvp(smoothness_by_step, (u, 0.4), (None, 1.0))
