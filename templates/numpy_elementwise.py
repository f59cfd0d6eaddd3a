"""Rules for NumPy's elementwise functions (ufuncs and ``np.where``/``np.clip``).

``np.add``, ``np.subtract``, ``np.multiply``, ``np.divide``, ``np.power`` and
``np.negative`` share the operators' rules (templates/operators.py).

Each contribution has the result's shape; the generator reduces it to the
input's shape where broadcasting may have happened.
"""
import numpy as np

from s2s_ad.rules import adjoint, nondifferentiable

nondifferentiable(np.sign, np.floor, np.ceil, np.round, np.rint, np.trunc, np.isnan, np.isinf,
                  np.isfinite, np.greater, np.less, np.equal, np.logical_and, np.logical_or, np.logical_not,
                  elementwise=True)
nondifferentiable(np.argmax, np.argmin, np.argsort, np.all, np.any, np.count_nonzero)


@adjoint(np.reciprocal, elementwise=True)
def reciprocal(out, x, d_out):
    d_x = -d_out * out * out


@adjoint(np.square, elementwise=True)
def square(out, x, d_out):
    d_x = d_out * 2.0 * x


@adjoint(np.sqrt, elementwise=True)
def sqrt(out, x, d_out):
    d_x = d_out * 0.5 / out


@adjoint(np.exp, elementwise=True)
def exp(out, x, d_out):
    d_x = d_out * out


@adjoint(np.expm1, elementwise=True)
def expm1(out, x, d_out):
    d_x = d_out * (out + 1.0)


@adjoint(np.log, elementwise=True)
def log(out, x, d_out):
    d_x = d_out / x


@adjoint(np.log1p, elementwise=True)
def log1p(out, x, d_out):
    d_x = d_out / (1.0 + x)


@adjoint(np.log2, elementwise=True)
def log2(out, x, d_out):
    d_x = d_out / (x * np.log(2.0))


@adjoint(np.log10, elementwise=True)
def log10(out, x, d_out):
    d_x = d_out / (x * np.log(10.0))


@adjoint(np.sin, elementwise=True)
def sin(out, x, d_out):
    d_x = d_out * np.cos(x)


@adjoint(np.cos, elementwise=True)
def cos(out, x, d_out):
    d_x = -d_out * np.sin(x)


@adjoint(np.tan, elementwise=True)
def tan(out, x, d_out):
    d_x = d_out * (1.0 + out * out)


@adjoint(np.tanh, elementwise=True)
def tanh(out, x, d_out):
    d_x = d_out * (1.0 - out * out)


@adjoint(np.sinh, elementwise=True)
def sinh(out, x, d_out):
    d_x = d_out * np.cosh(x)


@adjoint(np.cosh, elementwise=True)
def cosh(out, x, d_out):
    d_x = d_out * np.sinh(x)


@adjoint(np.arcsin, elementwise=True)
def arcsin(out, x, d_out):
    d_x = d_out / np.sqrt(1.0 - x * x)


@adjoint(np.arccos, elementwise=True)
def arccos(out, x, d_out):
    d_x = -d_out / np.sqrt(1.0 - x * x)


@adjoint(np.arctan, elementwise=True)
def arctan(out, x, d_out):
    d_x = d_out / (1.0 + x * x)


@adjoint(np.arctan2, elementwise=True)
def arctan2(out, x1, x2, d_out):
    d_x1 = d_out * x2 / (x1 * x1 + x2 * x2)
    d_x2 = -d_out * x1 / (x1 * x1 + x2 * x2)


@adjoint(np.abs, elementwise=True, domain=(-0.8, 0.8))
def absolute(out, x, d_out):
    d_x = d_out * (1.0 - 2.0 * (x < 0))  # +1 at the kink x = 0, as JAX


@adjoint(np.maximum, elementwise=True)
def maximum(out, x1, x2, d_out):
    first = (x1 > x2) + 0.5 * (x1 == x2)  # a tie splits the adjoint evenly, as JAX does
    d_x1 = d_out * first
    d_x2 = d_out * (1.0 - first)


@adjoint(np.minimum, elementwise=True)
def minimum(out, x1, x2, d_out):
    first = (x1 < x2) + 0.5 * (x1 == x2)
    d_x1 = d_out * first
    d_x2 = d_out * (1.0 - first)


@adjoint(np.where, elementwise=True, examples=(
    {"condition": np.array([True, False, True]), "x": (3,), "y": (3,)},
    {"condition": np.array([[True], [False]]), "x": (2, 3), "y": ()},
))
def where(out, condition, x, y, d_out):
    d_x = np.where(condition, d_out, 0.0)
    d_y = np.where(condition, 0.0, d_out)


@adjoint(np.clip, elementwise=True, method="clip", domain=(-1.0, 1.0), examples=(
    {"a": (5,), "a_min": -0.5, "a_max": 0.5},
    {"a": (5,), "a_min": (), "a_max": 0.9},
    {"a": (2, 3), "a_min": None, "a_max": 0.2},
))
def clip(out, a, a_min=None, a_max=None, *, d_out):
    d_a = d_out * (out == a)  # passes where nothing was clipped
    d_a_min = d_out * (out != a) * (out == a_min)
    d_a_max = d_out * (out != a) * (out == a_max)
