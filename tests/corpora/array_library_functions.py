"""Functions under test for tests/targets/test_array_libraries.py: NumPy code that stays inside the array API
standard (what s2s_ad can run through another library's namespace), and a few that step outside it."""
import numpy as np


def _scaled_sine(a, w):
    return np.sin(a) * w


def numbers_and_an_array(x, w):
    """A number and an array: broadcasting, a reduction."""
    return np.sum((x * w - 1.0) ** 2) / x.shape[0]


def loop_over_elements(x, w):
    """A loop reading elements, a running number."""
    total = 0.0
    for i in range(x.shape[0]):
        total = total + w * x[i] * x[i] - x[i]
    return total


def calls_a_helper(x, w):
    """A helper of the user's (its own split adjoint), then elementwise functions."""
    y = _scaled_sine(x, w) + np.exp(-x)
    return np.sum(np.tanh(y) + np.log1p(x * x))


def branches_on_a_value(x, w):
    """A branch taken on the data, a maximum, an absolute value."""
    if np.sum(x) > 0:
        return np.sum(np.maximum(x, 0.0) * w)
    return np.sum(np.abs(x)) * w


def matrix_and_vector(a, b):
    """A matrix product, a transpose, a mean over an axis with broadcasting back."""
    m = a @ b.T
    centred = m - np.mean(m, axis=0, keepdims=True)
    return np.sum(centred ** 2) + np.sum(np.sqrt(a * a + 1.0))


def concatenated_and_powered(x, w):
    """np.concatenate and np.power (xp.concat and xp.pow), a slice."""
    z = np.concatenate([x, x[1:] * w])
    return np.sum(np.power(z, 2)) + x[0] * x[1]


def outer_broadcast(x, w):
    """An outer product by broadcasting (x[:, None] * x[None, :]) and a mean."""
    return np.mean(x[:, None] * x[None, :] * w) + np.max(x)


def accumulates_in_a_copy(x, w):
    """The user writes into an array of their own (in place: refused for immutable JAX arrays)."""
    y = np.copy(x)
    y[0] = w * x[1]
    y[1:] += x[:-1]
    return np.sum(y * y)


def uses_linalg(x, w):
    """np.linalg.norm: not in the array API namespaces s2s_ad uses (refused, naming this line)."""
    return np.linalg.norm(x) * w


def reversed_by_a_step(x, w):
    """A negative step: PyTorch has none (refused for its tensors, naming this line)."""
    return np.sum(x[::-1] * x) * w


def flipped_and_rolled_by_position(x, w):
    """np.flip(x, 0) and np.roll(x, 1, 0): the axis by position, which the standard takes by keyword."""
    return np.sum(np.flip(x, 0) * x) * w + np.sum(np.roll(x, 1, 0) * np.flip(x) * np.roll(x, -1))


def reduced_along_an_axis_by_position(x, w):
    """np.sum(m, 0), np.mean(m, 1) and np.concatenate([a, b], 0): axes by position."""
    m = x[:, None] * x[None, :] * w
    parts = np.concatenate([np.sum(m, 0), np.mean(m, 1) * w], 0)
    return np.sum(parts ** 2)


def triangles_by_position(x, w):
    """np.triu(m) and np.triu(m, 1), np.tril(m, -1): the diagonal's offset by position."""
    m = x[:, None] * x[None, :]
    return np.sum(np.triu(m) ** 2) * w + np.sum(np.triu(m, 1) * w) + np.sum(np.tril(m, -1) ** 2)


def loop_down_a_range(x, w):
    """for t in reversed(range(n)): a range run backwards (no array is sliced: fine for PyTorch)."""
    s = 0.0
    for t in reversed(range(x.shape[0])):
        s = s * w + x[t] * x[t]
    return s
