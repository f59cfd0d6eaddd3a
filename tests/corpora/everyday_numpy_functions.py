"""User code that calls the NumPy functions of issue 22 ("missing NumPy rules that everyday code
calls"), one realistic function each.  Every function is written with ``np`` only, so that the tests
run the same code object with ``np`` bound to ``jax.numpy`` as their oracle.

Scalar losses (``LOSSES``) go through grad, value_and_grad, vjp, jvp and hessian; array-valued
functions (``MAPS``) through jacobian, vjp and jvp.
"""
import numpy as np

KNOTS_X = np.array([0.0, 0.5, 1.25, 2.0, 3.0])
QUERY = np.array([-0.3, 0.2, 0.7, 1.3, 1.9, 2.6, 3.4])  # outside the knots on both sides, never on one
TIMES = np.linspace(0.0, 1.0, 6)
MISSING = np.array([[0.3, np.nan, 0.7, 0.1], [np.nan, 0.5, 0.2, 0.6], [0.4, 0.25, np.nan, 0.9]])
ROWS_READ = np.array([[True, False, True, True], [True, True, False, True], [False, True, True, True]])


# -- conversions ---------------------------------------------------------------------------------

def normalised_energy(x):
    """np.asarray and its kin on an argument that is already an array, np.float64 of an item."""
    y = np.asarray(x) * 2.0
    z = np.ascontiguousarray(y.T) + np.asanyarray(x.T)
    return np.sum(z ** 2) / np.float64(1.0 + x[0, 0] ** 2)


def real_part_loss(x):
    """np.real, np.imag and np.conj of real values (code written for complex data)."""
    return np.sum(np.real(x) ** 2 + np.imag(x) * x + np.conj(x) * np.sin(x))


def list_converted(x):
    """np.asarray of a list of numbers made in the function."""
    return np.sum(np.asarray([x[0] * x[1], x[1] + 1.0, np.sin(x[2])]) ** 2)


def norm_of_list(x):
    """np.linalg.norm of a list of numbers."""
    return np.linalg.norm([x[0], x[1] + 2.0]) + np.linalg.norm([x[0] * x[1], 1.0, x[1]], 1)


# -- signals and series ------------------------------------------------------------------------------

def interpolation_loss(values, shift):
    """Fit of a piecewise-linear curve read at shifted points, outside the knots too."""
    curve = np.interp(QUERY + shift, KNOTS_X, values)
    return np.sum((curve - np.cos(QUERY)) ** 2)


def interpolation_with_ends(values, low):
    """np.interp with left= and right= values that are parameters."""
    return np.sum(np.interp(QUERY, KNOTS_X, values, left=low, right=2.0 * low) ** 2)


def polynomial_fit_loss(coefficients, x):
    """np.polyval of fitted coefficients at data points that move."""
    return np.sum((np.polyval(coefficients, x) - np.sin(x)) ** 2)


def smoothed_roughness(signal, kernel):
    """A np.convolve smoother (mode same) and its roughness, with a learned kernel."""
    smooth = np.convolve(signal, kernel / np.sum(kernel), mode="same")
    return np.sum(np.diff(smooth) ** 2) + 0.1 * np.sum(np.convolve(signal, kernel) ** 2)


def matched_filter(signal, template):
    """np.correlate of a signal with a template (valid and full)."""
    score = np.correlate(signal, template)
    return np.max(score) + 0.5 * np.sum(np.correlate(signal, template, mode="full") ** 2)


def vdot_energy(a, b):
    """np.vdot of a matrix with another (flattened)."""
    return np.vdot(a, b) ** 2 + np.vdot(a, a)


def area_under_curve(y, t):
    """np.trapezoid of samples at sample points that are parameters, and at a constant spacing."""
    return np.trapezoid(y ** 2, t) + np.trapezoid(np.exp(y), dx=0.1)


def increments_loss(x):
    """np.ediff1d with values joined before and after."""
    return np.sum(np.ediff1d(x, to_end=x[0] * 2.0, to_begin=np.array([1.0, -1.0])) ** 2)


# -- statistics --------------------------------------------------------------------------------------

def covariance_penalty(w):
    """np.cov of data that depends on the parameters, and its trace (variables in rows)."""
    data = np.stack([w * TIMES, np.sin(w * TIMES), TIMES ** 2 * w])
    return np.sum(np.cov(data) ** 2) + np.trace(np.cov(data, bias=True))


def column_covariance(x, y):
    """np.cov with rowvar=False and a second variable, ddof given."""
    return np.sum(np.cov(x, y, rowvar=False, ddof=0) ** 2)


def correlation_loss(x):
    """np.corrcoef of features, as a decorrelation penalty."""
    features = np.stack([x, x ** 2, np.cos(x)])
    return np.sum(np.triu(np.corrcoef(features), 1) ** 2)


def nan_statistics(w):
    """The nan* reductions of data with missing values (the mean of what is present...).  (An elementwise
    operation on a NaN before the reduction, data ** 2, would make its derivative NaN: 0 * NaN.)"""
    data = MISSING + w  # a NaN stays NaN
    return (np.nanmean(data) + np.sum(np.nanmax(data, axis=1)) - np.sum(np.nanmin(data, axis=0))
            + np.nanprod(data) + np.nanvar(data, axis=1, ddof=1)[0] + np.nanstd(data)
            + np.sum(np.nanmedian(data, axis=0)) + np.nansum(data) ** 2 + np.sum(np.nancumsum(data, axis=1))
            + np.sum(np.nancumprod(data)))


def masked_reductions(x):
    """where= and initial= on reductions, and the ufunc methods."""
    return (np.sum(x ** 2, where=ROWS_READ) + np.mean(x, axis=1, where=ROWS_READ)[0]
            + np.max(x, initial=0.35, where=ROWS_READ) + np.sum(np.min(x, axis=0, initial=0.5))
            + np.prod(x, axis=1, where=ROWS_READ, initial=2.0)[1] + np.add.reduce(x ** 3, axis=1)[2]
            + np.sum(np.multiply.accumulate(x, axis=1)) + np.maximum.reduce(x, axis=None)
            + np.sum(np.minimum.reduce(x)) + np.sum(np.add.accumulate(x)))


# -- grids and shapes -------------------------------------------------------------------------------

def logspace_weights(ends):
    """np.logspace between two parameters."""
    return np.sum(np.logspace(ends[0], ends[1], 5) * np.arange(5.0)) + np.sum(np.logspace(ends[0], 1.0, 3, base=2.0))


def grid_potential(x, y):
    """np.meshgrid of two coordinate vectors, in both indexings and sparse."""
    gx, gy = np.meshgrid(x, y)
    ix, iy = np.meshgrid(x, y, indexing="ij")
    sx, sy = np.meshgrid(x, y, sparse=True)
    return np.sum(gx * gy ** 2) + np.sum(np.sin(ix) * iy) + np.sum((sx + sy) ** 2)


def signed_magnitudes(x):
    """np.copysign of parameters with signs from data (-0.0 included)."""
    return np.sum(np.copysign(x, np.array([1.0, -2.0, -0.0, 0.0])) * np.array([1.0, 2.0, 3.0, 4.0]))


def rolled_batches(x):
    """np.rollaxis of a batch of matrices."""
    moved = np.rollaxis(x, 2)
    return np.sum(moved[0] ** 2) + np.sum(np.rollaxis(x, 0, 3) * np.arange(3.0))


def joined_features(x, s):
    """np.r_ and np.c_ of arrays and numbers."""
    row = np.r_[x, s, 2.0 * x]
    columns = np.c_[x, x ** 2, np.ones(3)]
    return np.sum(row ** 2) + np.sum(columns @ np.array([1.0, -1.0, 0.5])) * s


# -- linear algebra ---------------------------------------------------------------------------------

def spectrum_from_upper(a):
    """np.linalg.eigh reading the upper triangle, and eigvalsh too."""
    w, v = np.linalg.eigh(a, "U")
    return np.sum(w ** 2) + np.sum(v[:, 0] ** 2 * w[0]) + np.sum(np.linalg.eigvalsh(a, UPLO="U") ** 3)


def singular_value_penalty(a):
    """The singular values alone: np.linalg.svd(compute_uv=False)."""
    s = np.linalg.svd(a, compute_uv=False)
    return np.sum(s) + s[0] ** 2


def sublist_contraction(a, b):
    """einsum's sublist form, with an output sublist and an ellipsis."""
    return np.sum(np.einsum(a, [0, 1], b, [1, 2], [0, 2]) ** 2) + np.einsum(a, [0, 0]) + np.sum(
        np.einsum(a, [Ellipsis, 1], b[:, 0], [1], [Ellipsis]))


def empty_batch_contraction(batch, w):
    """einsum over a batch that may be empty."""
    return np.sum(np.einsum("bi,i->b", batch, w)) + np.sum(w ** 2)


# -- array-valued functions (jacobian) ----------------------------------------------------------------

def interpolated_curve(values):
    return np.interp(QUERY, KNOTS_X, values) * 2.0


def smoothed(signal):
    return np.convolve(signal, np.array([0.25, 0.5, 0.25]), mode="same")


def polynomial_curve(coefficients):
    return np.polyval(coefficients, np.array([0.5, 1.5, -1.0]))


def covariance_matrix(x):
    return np.cov(np.stack([x, x ** 2])).ravel()


def column_means(x):
    return np.nanmean(MISSING + x, axis=0)


def stacked_rows(x):
    return np.r_[x, np.sum(x)]
