"""Everyday Python that s2s_ad differentiates: functions under test for tests/test_everyday.py.

Each function takes an array ``x`` of 3 floats (unless its name says otherwise)
and returns a number."""
import logging
import math
import warnings

import numpy as np

import s2s_ad

LOG = logging.getLogger(__name__)


# --- returns from inside if/else -------------------------------------------

def returns_in_both_branches(x):
    if x[0] > 0:
        return np.sum(x * x)
    else:
        return np.sum(np.sin(x))


def returns_in_elif_chain(x):
    s = np.sum(x)
    if s > 10.0:
        return s * s
    elif s > 0.0:
        return np.sum(x ** 3)
    else:
        return -s


def early_return_then_more(x):
    if x[0] < -5.0:
        return 0.0
    y = np.exp(x)
    if np.sum(y) > 1000.0:
        return np.sum(y)
    return np.sum(y * x)


def nested_returns(x):
    if x[0] > 0:
        if x[1] > 0:
            return x[0] * x[1]
        return x[0] + x[2]
    else:
        if x[2] > 0:
            return x[2] ** 2
        else:
            return x[1] * 3.0


# --- chained comparisons ----------------------------------------------------

def chained_in_if(x):
    total = 0.0
    for i in range(3):
        if -1.0 < x[i] <= 1.0:
            total = total + x[i] ** 2
        else:
            total = total + 2.0 * x[i]
    return total


def chained_in_conditional_expression(x):
    a = x[0]
    return a * a if 0.0 <= a < 10.0 else a


def chained_index_guard(x):
    n = 3
    total = 0.0
    for j in range(5):
        i = j - 1
        if 0 <= i < n:
            total = total + x[i] * x[i]
    return total


def chained_three_links(x):
    if x[0] < x[1] < x[2] < 100.0:
        return x[0] * x[1] * x[2]
    return np.sum(x)


# --- print / assert / logging / warnings / annotations ----------------------

def with_print(x):
    y = np.sin(x)
    print("y is", y)
    return np.sum(y * x)


def with_assert(x):
    assert x.shape == (3,), "wants 3 numbers"
    y = x * x
    assert np.all(y >= 0.0)
    return np.sum(y)


def with_logging(x):
    logging.debug("starting with %s", x)
    y = np.exp(x)
    LOG.info("y = %s", y)
    return np.sum(y)


def with_warning(x):
    s = np.sum(x * x)
    if s > 1e6:
        warnings.warn("large input")
    return s


def annotated(x):
    scale: float = 2.0
    y: np.ndarray = x * scale
    total: float
    total = np.sum(y * y)
    return total


# --- constant calls -----------------------------------------------------------

def with_random_noise(x):
    noise = np.random.normal(size=3)
    return np.sum(x * x * noise)


def poisson_log_likelihood(x):
    total = 0.0
    for k in range(3):
        total = total + k * np.log(x[k] * x[k] + 1.0) - x[k] - math.lgamma(k + 1)
    return total


class Settings:
    """A plain data object."""

    def __init__(self, scale):
        self.scale = scale

    def factor(self, n):
        return self.scale * n


SETTINGS = Settings(1.5)


def with_data_method(x):
    f = SETTINGS.factor(2)
    return np.sum(x * f) + np.sum(x * x)


def _opaque(n):
    return n * 2


OPAQUE = np.frompyfunc(_opaque, 1, 1)


def with_opaque_constant(x):
    c = float(OPAQUE(3))
    return np.sum(c * x * x)


# --- writes into arrays the function created ------------------------------

def write_into_exp(x):
    y = np.exp(x)
    y[0] = x[1] * x[2]
    return np.sum(y * y)


def write_into_scaled_copy(x):
    y = x * 1.0
    y[1] = np.sin(y[1])
    return np.sum(y * x)


def write_into_concatenate(x):
    y = np.concatenate([x, x * 2.0])
    y[0] = y[5] ** 2
    return np.sum(y * y)


def write_into_copy(x):
    y = x.copy()
    y[2] = y[0] * y[1]
    return np.sum(y ** 2)


def first_of_1d_is_a_number(x):
    out = np.zeros(3)
    for i in range(3):
        out[i] = x[i] ** 2
    first = out[0]
    out[0] = 5.0
    return first * np.sum(out)


# --- iterators, dtypes, Ellipsis -------------------------------------------

def enumerate_zip(x):
    w = np.array([1.0, 2.0, 3.0])
    total = 0.0
    for i, (a, b) in enumerate(zip(x, w)):
        total = total + i * a * b + a * a
    return total


def dtype_float(x):
    out = np.zeros(3, dtype=float)
    for i in range(3):
        out[i] = x[i] * x[i]
    return np.sum(out.astype(float) * x)


def dtype_float64(x):
    out = np.zeros(3, dtype=np.float64)
    out[1] = x[0] * x[2]
    return np.sum(out + x)


def ellipsis_index(x):
    m = np.outer(x, x)
    return np.sum(m[..., 0] * x)


# --- in-place updates at second order ---------------------------------------

def augmented_array(x):
    b = np.zeros(3)
    b += x * x
    b *= x
    return np.sum(b)


def masked_in_place(x):
    b = np.ones(3)
    mask = x > 0
    b[mask] *= x[mask]
    b += x ** 2
    return np.sum(b * b)


# --- lambdas and functions passed as arguments -------------------------------

def local_lambda(x):
    sq = lambda t: t * t
    return np.sum(sq(x) + sq(np.sin(x)))


def lambda_with_closure(x):
    a = x[0]
    scaled = lambda t: a * t
    return np.sum(scaled(x) * x)


def _apply(fn, v):
    a = 3.0  # the caller's a is not this one
    return fn(v) * a


def _twice(fn, v):
    return fn(fn(v))


def _compose(f, g, v):
    return _apply(f, g(v))


def _helper(v):
    return v * np.cos(v)


def passes_numpy_function(x):
    return np.sum(_apply(np.sin, x))


def passes_helper(x):
    return np.sum(_apply(_helper, x))


def passes_lambda(x):
    return np.sum(_apply(lambda t: t ** 3, x))


RNG = np.random.default_rng(0)


def noise_from_a_generator(x):
    total = 0.0
    for i in range(3):
        eps = RNG.normal()
        total = total + x[i] * x[i] * eps
    return total


def noise_in_a_loop(x):
    total = 0.0
    for i in range(3):
        eps = np.random.normal()
        total = total + np.sin(x[i]) * eps + x[i] * eps * eps
    return total


def lambda_reads_caller_local(x):
    a = x[0]
    scaled = lambda t: a * t
    return np.sum(_apply(scaled, x))


def passes_through_two_helpers(x):
    return np.sum(_compose(np.tanh, lambda t: t * t, x))


def twice_builtin(x):
    return np.sum(_twice(np.sin, x)) + _twice(abs, x[0])


def nested_def_passed(x):
    def f(t):
        return t ** 2 + x[1]
    return np.sum(_twice(f, x))


def passes_math_and_a_type(x):
    return _apply(math.exp, x[0]) + _apply(float, x[1])


def constant_array_then_store(x):
    y = np.exp(np.arange(3.0))
    y[0] = x[0] * x[1]
    return np.sum(y * x)


def list_of_zeros_written(x):
    ys = [0.0] * 3
    for i in range(3):
        ys[i] = x[i] * x[i]
    return ys[0] + ys[1] * ys[2]


def zip_range(x):
    total = 0.0
    for i, a in zip(range(3), x):
        total = total + i * a * a
    return total


def enumerate_reversed(x):
    total = 0.0
    for i, a in enumerate(reversed(x)):
        total = total * a + i
    return total


def zip_in_zip(x):
    w = x * 2.0
    total = 0.0
    for a, (b, c) in zip(x, zip(w, x[::-1])):
        total = total + a * b * c
    return total


def cast_to_int_carries_nothing(x):
    return np.sum(x.astype(int) * x) + np.sum((x * 10.0).astype(np.float32).astype(float))


def float32_buffer(x):
    out = np.zeros(3, dtype=np.float32)
    out[0] = x[0]
    return np.sum(out.astype(float) * x)


def product_written(x):
    m = np.outer(x, x)
    m[0, 0] = np.sin(x[0])
    d = np.dot(x, x)
    d += 1.0
    return np.sum(m) * d


def annotated_in_loop(x):
    total: float = 0.0
    for i in range(3):
        term: float = x[i] * (i + 1.0)
        total += term
    return total


def chained_middle_is_random(x):
    """The middle operand is evaluated once; the last only if the first link holds."""
    if -1.0 < np.random.uniform() < x[0] + 2.0:
        return x[0] * x[1]
    return x[2]


def chained_short_circuit(x):
    if x[0] > 5.0 > np.random.uniform():
        return x[0]
    return x[1] * x[2]


def noise_in_a_checkpointed_loop(x):
    s = x
    for t in s2s_ad.checkpointed(range(6), every=2):
        s = np.sin(s) * np.random.normal()
    return s


def _noisy_square(v):
    return v * v * np.random.normal()


def helper_draws_in_a_checkpointed_loop(x):
    s = x
    for t in s2s_ad.checkpointed(range(4), every=2):
        s = np.cos(s) + _noisy_square(s) * 0.1
    return s


def with_fstring_print(x):
    y = np.sin(x)
    print(f"sum {np.sum(y):.3f}, first {x[0]!r}")
    assert np.all(np.abs(y) <= 1.0), f"out of range: {y}"
    return np.sum(y * y)


def index_updates_in_a_loop(x):
    b = np.zeros(3)
    for i in range(3):
        b[i] += x[i] * x[(i + 1) % 3]
        b[i] *= x[i]
    b -= x ** 3
    return np.sum(b * b)


def repeated_fancy_index_update(x):
    b = np.zeros(3)
    idx = np.array([0, 0, 2])
    b[idx] += x * x
    return np.sum(b * x)


def _draws_from_the_generator(v):
    return v * RNG.normal()


def generator_draws_in_a_checkpointed_loop(x):
    s = x
    for t in s2s_ad.checkpointed(range(4), every=2):
        s = np.sin(s) + _draws_from_the_generator(s)
    return s


def _vector_noise(x):
    return x * RNG.normal(size=3)


def vector_of_generator_noise(x):
    return _vector_noise(x) * x


def element_read_and_written_in_a_loop(x):
    out = x * 1.0
    total = 0.0
    for i in range(3):
        v = out[i]
        out[i] = v * x[i]
        total = total + v * out[i]
    return total


def _newton_sqrt(a):
    x = a
    while True:
        nx = 0.5 * (x + a / x)
        if abs(nx - x) < 1e-12:
            return nx
        x = nx


def ends_in_while_true(x):
    return _newton_sqrt(x[0] * x[0] + 1.0) * x[1] + x[2]


def ellipsis_store_and_read(x):
    out = np.zeros((3, 2))
    out[..., 0] = x
    out[..., 1] = x * x
    return np.sum(out[..., 1] * out[:, 0])


def alias_of_fresh(x):
    y = np.exp(x)
    z = y
    y[0] = x[1] * 5.0
    return np.sum(z * x)


def self_reads(x):
    y = np.sin(x)
    y[0] = y[1] * y[2]
    y[1] = y[0] + x[0]
    return np.sum(y * y)


def masked_on_self(x):
    y = np.where(x > 0, x, 0.0)
    y[y < 0.4] = 0.5 * x[y < 0.4]
    return np.sum(y ** 2)


def neg_pos_pow(x):
    a = -x
    a[0] = x[1] ** 2
    b = x ** 1
    b[1] = a[0] * x[2]
    c = +x
    c[2] = b[1]
    return np.sum(a * b * c) + np.sum(x)


def zero_plus(x):
    y = 0.0 + x
    y[0] = y[1] * y[2]
    y += x
    y *= 2.0
    return np.sum(y * x)


def lambda_in_loop(x):
    total = 0.0
    for i in range(3):
        f = lambda t: t * x[i]
        total = total + f(x[(i + 1) % 3])
    return total


def late_binding(x):
    a = x[0]
    f = lambda t: a * t
    a = x[1]
    return f(x[2]) + a


def chained_value(x):
    inside = 0.0 < x[0] < 1.0
    return x[1] * inside + x[2] * (x[1] > x[2] > -1.0)


def _apply2(fn, u, v):
    return fn(u) + fn(v) * u


def lambda_two_uses(x):
    k = x[2]
    return _apply2(lambda t: np.sin(t) * k, x[0], x[1])
