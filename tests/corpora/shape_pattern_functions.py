"""Functions whose broadcasting the shape-pattern facts decide (tests/lowering/test_shape_patterns.py)."""
import numpy as np


def bias_layer(x, w, b):
    """x (batch, n) @ w (n, m) + b (m,): b's gradient sums over the batch."""
    return np.sum(np.tanh(x @ w + b) ** 2)


def column_and_row(col, row):
    """(n, 1) * (1, m): each gradient sums over the other's axis."""
    return np.sum(np.sin(col * row + col))


def centred(x):
    """x minus its column means (a (1, m) row broadcast down)."""
    mean = np.mean(x, axis=0, keepdims=True)
    return np.sum((x - mean) ** 3)


def softmax_rows(z, target):
    shifted = z - np.max(z, axis=-1, keepdims=True)
    p = np.exp(shifted) / np.sum(np.exp(shifted), axis=-1, keepdims=True)
    return -np.sum(target * np.log(p))


def norm_by_rows(x):
    """Row sums without keepdims, put back with [:, None]."""
    s = np.sum(x * x, axis=1)
    return np.sum(x / np.sqrt(s)[:, None])


def batched_products(a, b):
    """(k, n, m) @ (m, p): the batch axis broadcasts against a matrix."""
    return np.sum((a @ b) ** 2)


def vector_matrix(v, m, u):
    return v @ m @ u + np.sum(v * (m @ u))


def transposed_sum(x, y):
    """x.T (m, n) + y (m, n) where x is (n, m)."""
    return np.sum(np.cos(x.T + y))


def first_row_scaled(x, s):
    """x[0] (m,) times s (n, m): the row broadcast down."""
    return np.sum(x[0] * s) + np.sum(x[1] ** 2)


def grows_in_a_loop(x, v):
    """acc starts as a number and becomes an array of x's shape: its facts widen, not lie."""
    acc = 0.0
    for i in range(3):
        acc = acc + x * v[i]
    return np.sum(acc ** 2)


def branch_shapes(x, y, flag):
    """One branch keeps the shape, the other broadcasts to a larger one."""
    if flag > 0:
        z = x * 2.0
    else:
        z = x * y
    return np.sum(z ** 2)


def square_coincidence(a, b):
    """a (n, n) + b (n,): the lengths are equal, the broadcast still runs along rows."""
    return np.sum((a + b) ** 2 * a)


def mean_over_axes(x, w):
    """A mean over two axes, tuple and negative, kept and not."""
    m = np.mean(x, axis=(0, -1), keepdims=True)
    r = np.sum(x * w, axis=(0, 2))
    return np.sum((x - m) ** 2) + np.sum(r ** 2)


def filled_by_rows(x, w):
    """An array made from x's lengths (n, m = x.shape; np.zeros((n, m))), filled row by row."""
    n, m = x.shape
    out = np.zeros((n, m))
    for i in range(n):
        out[i] = np.tanh(x[i] * w)
    return np.sum((out - x) ** 2)


def column_from_len(x, y):
    """np.zeros((len(x), 1)) is a column: adding y (n, m) broadcasts it across."""
    col = np.zeros((len(x), 1))
    for i in range(len(x)):
        col[i, 0] = np.sum(x[i])
    return np.sum((col + y) ** 2)


def smoothed(image):
    """A helper returning an array of its argument's shape (its lengths found through the call)."""
    return np.sum((_blur_rows(image) - image) ** 2) + np.sum(_blur_rows(image.T) * image.T)


def _blur_rows(a):
    h, w = a.shape
    padded = np.pad(a, ((0, 0), (1, 1)), mode="edge")
    total = np.zeros((h, w))
    for j in range(3):
        total = total + padded[:, j:j + w]
    return total / 3.0


def zeros_like_shape(x, v):
    acc = np.zeros(x.shape)
    for k in range(3):
        acc = acc + x * v[k]
    return np.sum(acc * x[:, :1])


def flag_index(x, y):
    """x[flag] with flag a truth value: NumPy adds an axis (x[True] is x[None]), it picks no element."""
    flag = len(x) > 2
    return np.sum(np.sin(x[flag] * y))


def flag_argument(x, y, flag):
    return np.sum(np.sin(x[flag] * y))


def _pick(x, f):
    return x[f]


def flag_through_helper(x, y):
    return np.sum(np.sin(_pick(x, len(x) > 2) * y))


def steps_into_preallocated(x, y):
    """n = len(x) - 1, then arrays of n + 1 elements: x's length again (and y's, for arrays of one length)."""
    n = len(x) - 1
    path = np.zeros(n + 1)
    path[0] = x[0]
    for t in range(n):
        path[t + 1] = path[t] * 0.5 + x[t + 1]
    return np.sum((path - y) ** 2)


def one_longer(x):
    """np.zeros(n + 1) of n = len(x) is one longer than x: its slices meet x, not the whole of it."""
    n = len(x)
    z = np.zeros(n + 1)
    z[1:] = x
    m = 2 + n
    w = np.ones(m - 2) * 2.0   # x's length again, through 2 + n - 2
    return np.sum(z[:-1] * z[1:]) + np.sum(w * x)


def shorter_then_back(x, y):
    """n - 1 + 2 is not n: the array is one longer than y, which broadcasts only if y has one element."""
    n = x.shape[0] - 1
    k = n + 2
    z = np.ones(k) * np.sum(x)
    return np.sum(z * y)
