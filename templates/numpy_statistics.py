"""Rules for NumPy's covariance and correlation matrices: ``np.cov`` and ``np.corrcoef`` (real values;
``np.cov``'s ``fweights`` and ``aweights`` are not differentiated: a call that passes them is refused).

Both read their variables as the rows of one matrix X (``cov_data``: m's rows, or its columns where
``rowvar=False``, then y's); with the centred rows Xc and N observations,
``cov = Xc Xc^T / (N - ddof)`` and ``corrcoef = cov / (s s^T)``, s the standard deviations.  The
helpers are written with NumPy functions that have rules, so the code the rules generate can be
differentiated again.
"""
import numpy as np

from s2s_ad.rules import adjoint, tangent


def cov_rows(v, rowvar):
    """One argument of ``np.cov`` as rows of variables (NumPy's reading of it)."""
    rows = np.atleast_2d(v)
    if not rowvar and np.shape(rows)[0] != 1:
        return np.transpose(rows)
    return rows


def cov_rows_adjoint(grad, v, rowvar):
    """The adjoint of ``cov_rows``: rows of variables back into ``v``'s shape."""
    if not rowvar and np.shape(np.atleast_2d(v))[0] != 1:
        return np.reshape(np.transpose(grad), np.shape(v))
    return np.reshape(grad, np.shape(v))


def cov_data(m, y, rowvar):
    """The matrix X whose rows are the variables of ``np.cov(m, y, rowvar)``."""
    if y is None:
        return cov_rows(m, rowvar)
    return np.concatenate((cov_rows(m, rowvar), cov_rows(y, rowvar)), axis=0)


def cov_data_adjoint(grad, m, y, rowvar, which):
    """The adjoint of m (``which`` 0) or y (1) in ``cov_data``, given that of X."""
    count = np.shape(cov_rows(m, rowvar))[0]
    if which == 0:
        return cov_rows_adjoint(grad[:count], m, rowvar)
    return cov_rows_adjoint(grad[count:], y, rowvar)


def cov_data_tangent(m, y, rowvar, t_m, t_y):
    """The tangent of ``cov_data``: a missing tangent (a plain 0.0) is zeros of its argument's shape."""
    if y is None:
        return cov_rows(t_m + np.zeros(np.shape(m)), rowvar)
    return np.concatenate((cov_rows(t_m + np.zeros(np.shape(m)), rowvar),
                           cov_rows(t_y + np.zeros(np.shape(y)), rowvar)), axis=0)


def cov_divisor(data, bias, ddof):
    """N - ddof, NumPy's divisor (ddof None: 0 where bias, else 1)."""
    if ddof is None:
        ddof = 0 if bias else 1
    return np.shape(data)[1] - ddof


def centred(data):
    """Each row less its mean."""
    return data - np.mean(data, axis=1, keepdims=True)


def cov_matrix_adjoint(grad, data, divisor):
    """The adjoint of X in Xc Xc^T / divisor, given that of the matrix (the centring drops out: the
    result's rows are combinations of centred rows)."""
    square = np.reshape(grad, (np.shape(data)[0],) * 2)
    return np.matmul(square + np.transpose(square), centred(data)) / divisor


def cov_matrix_tangent(data, t_data, divisor):
    """The tangent of Xc Xc^T / divisor as X moves along t_data."""
    half = np.matmul(centred(t_data), np.transpose(centred(data)))
    return (half + np.transpose(half)) / divisor


_PAIRS = ({"m": (3, 5)}, {"m": (5,)}, {"m": (5, 3), "rowvar": False}, {"m": (2, 6), "y": (6,)},
          {"m": (4,), "y": (4,), "bias": True}, {"m": (3, 5), "ddof": 2}, {"m": (5, 2), "y": (5, 1), "rowvar": False})


@adjoint(np.cov, examples=_PAIRS)
def cov(out, m, y=None, rowvar=True, bias=False, ddof=None, *, d_out):
    data = cov_data(m, y, rowvar)
    moved = cov_matrix_adjoint(d_out, data, cov_divisor(data, bias, ddof))
    d_m = cov_data_adjoint(moved, m, y, rowvar, 0)
    d_y = cov_data_adjoint(moved, m, y, rowvar, 1)


@tangent(np.cov)
def cov(out, m, y=None, rowvar=True, bias=False, ddof=None, *, t_m, t_y):
    data = cov_data(m, y, rowvar)
    t_out = np.reshape(cov_matrix_tangent(data, cov_data_tangent(m, y, rowvar, t_m, t_y),
                                          cov_divisor(data, bias, ddof)), np.shape(out))


def correlation_adjoint(grad, data):
    """The adjoint of the covariance matrix C in R = C / (s s^T), s = sqrt(diag(C)) (the divisor
    cancels: the covariance with any divisor gives the same R)."""
    count = np.shape(data)[0]
    covariance = cov_matrix_tangent(data, data, 2.0)  # Xc Xc^T
    spread = np.sqrt(np.diagonal(covariance))
    scale = np.outer(spread, spread)
    square = np.reshape(grad, (count, count))
    ratio = covariance / scale
    # R moves with each s_i through its row and its column; s_i with diag(C)_i as 1 / (2 s_i)
    moved_spread = -(np.sum(square * ratio, axis=1) + np.sum(square * ratio, axis=0)) / spread
    return square / scale + np.diag(moved_spread / (2.0 * spread))


@adjoint(np.corrcoef, examples=({"x": (3, 5)}, {"x": (5, 3), "rowvar": False}, {"x": (2, 6), "y": (6,)},
                                {"x": (4,), "y": (4,)}))
def corrcoef(out, x, y=None, rowvar=True, *, d_out):
    data = cov_data(x, y, rowvar)
    moved = cov_matrix_adjoint(correlation_adjoint(d_out, data), data, 1.0)
    d_x = cov_data_adjoint(moved, x, y, rowvar, 0)
    d_y = cov_data_adjoint(moved, x, y, rowvar, 1)


def correlation_tangent(data, t_data):
    """The tangent of R = C / (s s^T) as X moves along t_data."""
    covariance = cov_matrix_tangent(data, data, 2.0)
    t_covariance = cov_matrix_tangent(data, t_data, 1.0)
    spread = np.sqrt(np.diagonal(covariance))
    t_spread = np.diagonal(t_covariance) / (2.0 * spread)
    ratio = covariance / np.outer(spread, spread)
    return (t_covariance / np.outer(spread, spread)
            - ratio * (np.expand_dims(t_spread / spread, 1) + np.expand_dims(t_spread / spread, 0)))


@tangent(np.corrcoef)
def corrcoef(out, x, y=None, rowvar=True, *, t_x, t_y):
    t_out = np.reshape(correlation_tangent(cov_data(x, y, rowvar), cov_data_tangent(x, y, rowvar, t_x, t_y)),
                       np.shape(out))
