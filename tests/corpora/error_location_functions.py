"""Functions for test_error_locations.py (issue 22, "errors that point at the right place").
Tests name lines by the comment at their end, so edits above do not break them."""
import numpy as np
try:
    import scipy.linalg
except ImportError:  # tests/api/test_error_locations.py skips what needs it, saying so
    scipy = None


def shape_mismatch(x, W):
    a = np.sin(x)
    b = W @ a  # the shape mismatch
    c = b * 2.0
    return np.sum(c)


def uses_expm(A):
    B = A * 2.0
    E = scipy.linalg.expm(B)  # expm without a rule
    return np.sum(E)


def uses_eig(A):
    w, v = np.linalg.eig(A)  # eig without a rule
    return np.sum(w.real)


def expm_of_a_constant(x):
    E = scipy.linalg.expm(np.eye(2))  # runs: nothing here depends on x
    return np.sum(E) * x


def returns_a_string(x):
    return "hello"


def float32_inside(x):
    y = x.astype(np.float32)
    return np.sum(np.sin(y) ** 2)


def loss_of_dict(p, x):
    h = np.tanh(p["W"] @ x + p["b"])
    return np.sum(h ** 2)


def loss_of_tuple(p, x):
    W, b = p
    h = np.tanh(W @ x + b)
    return np.sum(h ** 2) + np.sum(x * b)
