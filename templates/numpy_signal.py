# mypy: disable-error-code="no-redef"
# (a function's adjoint and tangent rules are both named after it: the second redefines the name)
"""Rules for NumPy's functions of sampled signals and series: ``np.interp``, ``np.polyval``,
``np.convolve``, ``np.correlate``, ``np.vdot``, ``np.trapezoid`` (and ``np.trapz`` where the installed
NumPy has it) and ``np.ediff1d`` (real values).

Helpers a rule needs are defined here, beside it: each is either piecewise constant (declared
``nondifferentiable``: the segment an ``np.interp`` point lies on) or has a rule of its own, so that
the code these rules generate can be differentiated again (``hessian``).  A tangent that is missing (an
input that does not vary) reaches a template as a plain ``0.0``; it appears only as a factor of a
product or as the first argument of a helper declared ``factors=(0,)``, where it folds away.
"""
import numpy as np

from s2s_ad.rules import adjoint, declare, nondifferentiable, tangent
from s2s_ad.core.runtime import unbroadcast, unbroadcast_to

from .numpy_shape import diff_grad


# -- gathering and scattering along a 1-d array (np.interp's knots) --------------------------------

def gather(values, index):
    """``values[index]`` of a 1-d ``values``: one element for each entry of the integer array ``index``."""
    return np.take(values, index)


def scatter(grad, index, like):
    """The transpose of ``gather``: ``grad`` (broadcast to ``index``'s shape) added up into zeros
    shaped like the 1-d ``like`` at the positions ``index`` (repeats add up)."""
    total = np.zeros(np.shape(like), dtype=np.result_type(grad, 1.0))
    np.add.at(total, index, np.broadcast_to(grad, np.shape(index)))
    return total


@adjoint(gather, linear=True, zero_derivative=("index",), examples=(
    {"values": (4,), "index": np.array([0, 2, 2, 3])}, {"values": (3,), "index": np.array([[1, 0], [2, 2]])},
    {"values": (3,), "index": np.array(1)}))
def gather_rule(out, values, index, d_out):
    d_values = scatter(d_out, index, values)


@adjoint(scatter, linear=True, zero_derivative=("index",), shape_only=2, examples=(
    {"grad": (4,), "index": np.array([0, 2, 2, 3]), "like": np.zeros(4)},
    {"grad": (), "index": np.array([[1, 0], [2, 2]]), "like": np.zeros(3)}))
def scatter_rule(out, grad, index, like, d_out):
    d_grad = unbroadcast(gather(d_out, index), grad)


declare(gather, scatter, factors=(0,))


def interp_segments(x, xp):
    """For each point of ``x``, the index j of the segment [xp[j], xp[j + 1]] ``np.interp`` reads it on,
    as ``jax.numpy.interp`` picks it: a knot starts the segment to its right, the last knot ends the
    last segment; points outside the knots get the first or last segment (their weight is zero)."""
    last = np.size(xp) - 1
    return np.clip(np.searchsorted(xp, x, side="right"), 1, np.maximum(last, 1)) - 1


nondifferentiable(interp_segments)


@adjoint(np.interp, examples=(
    {"x": np.array([0.3, 1.45, 2.2]), "xp": np.array([0.0, 1.0, 1.9, 3.0]), "fp": (4,)},
    {"x": np.array([[0.5, 2.5], [1.2, 0.1]]), "xp": np.array([0.0, 1.0, 3.0]), "fp": (3,)},
    {"x": np.array(1.7), "xp": np.array([0.2, 1.0, 2.5]), "fp": (3,)},
    {"x": np.array([-0.5, 0.4, 3.5]), "xp": np.array([0.0, 1.0, 2.0]), "fp": (3,)},
    {"x": np.array([-0.5, 0.4, 3.5]), "xp": np.array([0.0, 1.0, 2.0]), "fp": (3,), "left": (), "right": ()}))
def interp(out, x, xp, fp, left=None, right=None, *, d_out):
    # inside the knots out = fp[j] (1 - s) + fp[j + 1] s with s = (x - xp[j]) / (xp[j + 1] - xp[j]);
    # below them left (or fp[0]), above them right (or fp[-1]); period= is not differentiated
    start = interp_segments(x, xp)
    end = np.minimum(start + 1, np.size(xp) - 1)
    width = gather(xp, end) - gather(xp, start)
    width = width + (width == 0)  # a single knot: a constant, slope 0
    slope = (gather(fp, end) - gather(fp, start)) / width
    share = (x - gather(xp, start)) / width
    below = x < gather(xp, 0)
    above = x > gather(xp, np.size(xp) - 1)
    moving = d_out * np.logical_not(below) * np.logical_not(above)
    d_x = moving * slope
    d_fp = (scatter(moving * (1.0 - share), start, fp) + scatter(moving * share, end, fp)
            + scatter(np.sum(d_out * below) * (left is None), 0, fp)
            + scatter(np.sum(d_out * above) * (right is None), np.size(fp) - 1, fp))
    d_xp = -(scatter(moving * slope * (1.0 - share), start, xp) + scatter(moving * slope * share, end, xp))
    d_left = np.sum(d_out * below)
    d_right = np.sum(d_out * above)


@tangent(np.interp)
def interp(out, x, xp, fp, left=None, right=None, *, t_x, t_xp, t_fp, t_left, t_right):
    start = interp_segments(x, xp)
    end = np.minimum(start + 1, np.size(xp) - 1)
    width = gather(xp, end) - gather(xp, start)
    width = width + (width == 0)
    slope = (gather(fp, end) - gather(fp, start)) / width
    share = (x - gather(xp, start)) / width
    below = x < gather(xp, 0)
    above = x > gather(xp, np.size(xp) - 1)
    inside = np.logical_not(below) * np.logical_not(above)
    t_out = (inside * (t_x * slope + gather(t_fp, start) * (1.0 - share) + gather(t_fp, end) * share
                       - (gather(t_xp, start) * (1.0 - share) + gather(t_xp, end) * share) * slope)
             + below * (gather(t_fp, 0) * (left is None) + t_left * (left is not None))
             + above * (gather(t_fp, np.size(fp) - 1) * (right is None) + t_right * (right is not None)))


# -- polynomials -------------------------------------------------------------------------------------

def polynomial_powers(p, x, out):
    """x**(n-1), ..., x**1, x**0 stacked along a new first axis (n the number of coefficients), each
    shaped like ``out`` (x broadcast against the coefficients)."""
    count = np.shape(p)[0]
    exponents = np.reshape(np.arange(count - 1, -1, -1), (count,) + (1,) * np.ndim(out))
    return np.power(x, exponents) * np.ones(np.shape(out))


def polynomial_derivative(p):
    """The coefficients of the derivative of the polynomial ``p`` (highest power first): np.polyder."""
    count = np.shape(p)[0]
    return np.asarray(p)[:-1] * np.reshape(np.arange(count - 1, 0, -1), (count - 1,) + (1,) * (np.ndim(p) - 1))


def coefficient_axes(p, out):
    """The shape np.polyval's adjoint sums the products of each coefficient to: the coefficients' first
    axis, a 1 for each axis of ``out`` the points give it, then the coefficients' other axes."""
    return np.shape(p)[:1] + (1,) * (np.ndim(out) + 1 - np.ndim(p)) + np.shape(p)[1:]


nondifferentiable(coefficient_axes)


@adjoint(np.polyval, factors=(0,), examples=({"p": (3,), "x": (4,)}, {"p": (4,), "x": ()}, {"p": (1,), "x": (3,)},
                                             {"p": (3,), "x": (2, 3)}, {"p": (3, 2), "x": (2,)}, {"p": (3, 2), "x": ()}))
def polyval(out, p, x, d_out):
    # out = sum_k p[k] x**(n-1-k): each coefficient's adjoint summed over the points it is read at
    d_p = np.reshape(unbroadcast_to(d_out * polynomial_powers(p, x, out), coefficient_axes(p, out)), np.shape(p))
    d_x = unbroadcast(d_out * np.polyval(polynomial_derivative(p), x), x)


@tangent(np.polyval)
def polyval(out, p, x, t_p, t_x):
    t_out = np.polyval(t_p, x) + t_x * np.polyval(polynomial_derivative(p), x)  # linear in p


# -- convolution and correlation of 1-d signals ------------------------------------------------------

def convolution_start(a, v, mode, correlating):
    """Where ``mode``'s result of ``np.convolve(a, v)`` (or ``np.correlate``) starts in the full one."""
    n, m = np.size(a), np.size(v)
    if mode == "full":
        return 0
    if mode == "valid":
        return np.minimum(n, m) - 1
    # "same": centred; np.correlate, which reverses its arguments where v is the longer, rounds up
    return (n + m - 1 - np.maximum(n, m) + (correlating and n < m)) // 2


nondifferentiable(convolution_start)


def as_full(grad, a, v, mode, correlating):
    """The adjoint of ``mode``'s result placed in zeros the length of the full result."""
    start = convolution_start(a, v, mode, correlating)
    return np.pad(grad, (start, np.size(a) + np.size(v) - 1 - start - np.size(grad)))


_SIGNALS = ({"a": (5,), "v": (3,)}, {"a": (3,), "v": (5,)}, {"a": (4,), "v": (4,)}, {"a": (5,), "v": (2,), "mode": "same"},
            {"a": (2,), "v": (5,), "mode": "same"}, {"a": (4,), "v": (5,), "mode": "same"},
            {"a": (6,), "v": (3,), "mode": "valid"}, {"a": (3,), "v": (6,), "mode": "valid"},
            {"a": (1,), "v": (3,), "mode": "full"}, {"a": (5,), "v": (1,), "mode": "valid"})


@adjoint(np.convolve, bilinear=True, factors=(0, 1), examples=_SIGNALS)
def convolve(out, a, v, mode="full", *, d_out):
    # full[k] = sum_i a[i] v[k - i]: each input's adjoint correlates the full adjoint with the other
    full = as_full(d_out, a, v, mode, False)
    d_a = np.correlate(full, v, "valid")
    d_v = np.correlate(full, a, "valid")


@adjoint(np.correlate, bilinear=True, factors=(0, 1), examples=_SIGNALS)
def correlate(out, a, v, mode="valid", *, d_out):
    # the convolution of a with v reversed, windowed as np.correlate windows it
    full = as_full(d_out, a, v, mode, True)
    d_a = np.convolve(full, v, "valid")
    d_v = np.flip(np.correlate(full, a, "valid"))


@adjoint(np.vdot, bilinear=True, factors=(0, 1), examples=({"a": (3,), "b": (3,)}, {"a": (2, 3), "b": (6,)},
                                                            {"a": (2, 2), "b": (2, 2)}))
def vdot(out, a, b, d_out):
    # the dot product of the flattened arrays (real values: no conjugate)
    d_a = d_out * np.reshape(b, np.shape(a))
    d_b = d_out * np.reshape(a, np.shape(b))


# -- the trapezoidal rule ----------------------------------------------------------------------------

def pair_means(y, axis):
    """The mean of each two neighbours of ``y`` along ``axis`` (one fewer along it)."""
    count = np.shape(y)[axis]
    return 0.5 * (np.take(y, np.arange(1, count), axis=axis) + np.take(y, np.arange(0, count - 1), axis=axis))


def pair_means_transpose(grad, axis):
    """The adjoint of ``pair_means``: each neighbour gets half of each mean it is in."""
    before = [(0, 0)] * np.ndim(grad)
    after = [(0, 0)] * np.ndim(grad)
    before[axis] = (1, 0)
    after[axis] = (0, 1)
    return 0.5 * (np.pad(grad, before) + np.pad(grad, after))


@adjoint(pair_means, linear=True, examples=({"y": (4,), "axis": -1}, {"y": (3, 4), "axis": 0}))
def pair_means_rule(out, y, axis, d_out):
    d_y = pair_means_transpose(d_out, axis)


@adjoint(pair_means_transpose, linear=True, examples=({"grad": (3,), "axis": -1}, {"grad": (2, 4), "axis": 0}))
def pair_means_transpose_rule(out, grad, axis, d_out):
    d_grad = pair_means(d_out, axis)


declare(pair_means, pair_means_transpose, factors=(0,))


def trapezoid_widths(y, x, dx, axis):
    """The width of each interval of ``np.trapezoid(y, x, dx, axis)``, broadcasting against
    ``pair_means(y, axis)``: dx, or the differences of the sample points x (1-d: along axis)."""
    if x is None:
        return dx
    if np.ndim(x) == 1:  # along axis: followed by as many axes of length 1 as y has after it
        return np.reshape(np.diff(x), (-1,) + (1,) * (np.ndim(y) - 1 - axis % np.ndim(y)))
    return np.diff(x, axis=axis)


def trapezoid_width_tangent(y, x, t_x, t_dx, axis):
    """The tangent of ``trapezoid_widths``: t_dx, or the differences of t_x (a missing one, 0.0: zeros)."""
    if x is None:
        return t_dx
    return trapezoid_widths(y, t_x + np.zeros(np.shape(x)), t_dx, axis)


def trapezoid_width_adjoint(grad, y, x, axis):
    """The adjoint of the sample points x of ``trapezoid_widths`` (``grad`` shaped as their product
    with the pair means); none where there are none."""
    if x is None:
        return 0.0
    if np.ndim(x) == 1:
        others = tuple(i for i in range(np.ndim(grad)) if i != axis % np.ndim(grad))
        return diff_grad(np.sum(grad, axis=others), x)
    return diff_grad(unbroadcast(grad, np.diff(x, axis=axis)), x, 1, axis)


_TRAPEZOIDS = ({"y": (5,)}, {"y": (5,), "dx": ()}, {"y": (5,), "x": (5,)}, {"y": (3, 4), "x": (4,)},
               {"y": (3, 4), "axis": 0, "x": (3,)}, {"y": (3, 4), "x": (3, 4), "axis": 1}, {"y": (2, 3), "axis": 0, "dx": 0.5})


# np.trapezoid from NumPy 2.0 on; np.trapz, the same function, before it (NumPy 2.4 removed that name)
_TRAPEZOID = np.trapezoid if hasattr(np, "trapezoid") else getattr(np, "trapz")


@adjoint(_TRAPEZOID, examples=_TRAPEZOIDS)
def trapezoid(out, y, x=None, dx=1.0, axis=-1, *, d_out):
    # out = sum over intervals of width * (mean of its two ends), along axis
    widths = trapezoid_widths(y, x, dx, axis)
    spread = np.expand_dims(d_out, axis)
    d_y = pair_means_transpose(spread * widths * np.ones(np.shape(pair_means(y, axis))), axis)
    d_x = trapezoid_width_adjoint(spread * pair_means(y, axis), y, x, axis)
    d_dx = np.sum(unbroadcast(spread * pair_means(y, axis), dx)) * (x is None)


@tangent(_TRAPEZOID)
def trapezoid(out, y, x=None, dx=1.0, axis=-1, *, t_y, t_x, t_dx):
    t_out = np.sum(trapezoid_widths(y, x, dx, axis) * pair_means(t_y, axis)
                   + trapezoid_width_tangent(y, x, t_x, t_dx, axis) * pair_means(y, axis), axis=axis)


# -- differences of a flattened array ---------------------------------------------------------------

@adjoint(np.ediff1d, examples=({"ary": (5,)}, {"ary": (2, 3)}, {"ary": (4,), "to_begin": (2,)},
                               {"ary": (4,), "to_end": ()}, {"ary": (3,), "to_end": (2,), "to_begin": ()}))
def ediff1d(out, ary, to_end=None, to_begin=None, *, d_out):
    # out = to_begin, the differences of ary flattened, to_end
    begin = np.size(to_begin) * (to_begin is not None)
    middle = np.maximum(np.size(ary) - 1, 0)
    d_ary = np.reshape(diff_grad(d_out[begin:begin + middle], np.ravel(ary)), np.shape(ary))
    d_to_begin = np.reshape(d_out[:begin], np.shape(to_begin))
    d_to_end = np.reshape(d_out[begin + middle:], np.shape(to_end))


def ediff1d_tangent(ary, to_end, to_begin, t_ary, t_to_end, t_to_begin):
    """The tangent of ``np.ediff1d(ary, to_end, to_begin)``: a missing tangent (0.0) is zeros."""
    return np.ediff1d(t_ary + np.zeros(np.shape(ary)),
                      None if to_end is None else t_to_end + np.zeros(np.shape(to_end)),
                      None if to_begin is None else t_to_begin + np.zeros(np.shape(to_begin)))


@tangent(np.ediff1d)
def ediff1d(out, ary, to_end=None, to_begin=None, *, t_ary, t_to_end, t_to_begin):
    t_out = ediff1d_tangent(ary, to_end, to_begin, t_ary, t_to_end, t_to_begin)
