"""Rules for NumPy's elementwise functions (ufuncs and ``np.where``/``np.clip``).

``np.add``, ``np.subtract``, ``np.multiply``, ``np.divide``, ``np.power`` and
``np.negative`` share the operators' rules (templates/operators.py).

Each contribution has the result's shape; the generator reduces it to the
input's shape where broadcasting may have happened.
"""
import numpy as np

from s2s_ad.core.number_functions import cos_of_number, sin_of_number
from s2s_ad.rules import adjoint, declare, method_alias, nondifferentiable, spell_module, tangent

spell_module("np", np)  # generated code writes np.sin (numpy_linalg.py adds np.linalg)

nondifferentiable(np.sign, np.floor, np.ceil, np.round, np.around, np.rint, np.trunc, np.fix, np.isnan, np.isinf,
                  np.signbit, np.heaviside, np.greater_equal, np.less_equal, np.not_equal, np.logical_xor,
                  np.isfinite, np.greater, np.less, np.equal, np.logical_and, np.logical_or, np.logical_not,
                  elementwise=True)
nondifferentiable(np.argmax, np.argmin, np.argsort, np.all, np.any, np.count_nonzero)
# Truth values: as an index a True adds an axis where a number would pick an element.
declare(np.isnan, np.isinf, np.isfinite, np.signbit, np.greater_equal, np.less_equal, np.not_equal, np.greater,
        np.less, np.equal, np.logical_and, np.logical_or, np.logical_not, np.logical_xor, np.all, np.any,
        compares=True)
for _name, _fn in (("argmax", np.argmax), ("argmin", np.argmin), ("argsort", np.argsort), ("all", np.all),
                  ("any", np.any), ("round", np.round)):
    method_alias(_name, _fn)  # x.argmax(axis=0) is np.argmax(x, axis=0)


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


# exp(x + c) is exp(x) e**c and log(x e**c) is log(x) + c: a softmax's shift cancels (shift_invariance.py)
declare(np.exp, shift="exp")
declare(np.log, shift="log")


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


# On one Python float or NumPy float64, math's functions give NumPy's numbers at a quarter of the cost
# (the Python target's reverse loops: s2s_ad/passes/number_math.py)
declare(np.sin, on_a_number=sin_of_number)
declare(np.cos, on_a_number=cos_of_number)


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


@adjoint(np.where, elementwise=True, zero_derivative=("condition",), examples=(
    {"condition": np.array([True, False, True]), "x": (3,), "y": (3,)},
    {"condition": np.array([[True], [False]]), "x": (2, 3), "y": ()},
), returns_sequence=True)
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


@adjoint(np.fabs, elementwise=True, domain=(-0.8, 0.8))
def fabs(out, x, d_out):
    d_x = d_out * (1.0 - 2.0 * (x < 0))  # +1 at the kink x = 0, as np.abs


@adjoint(np.positive, elementwise=True)
def positive(out, x, d_out):
    d_x = d_out


@adjoint(np.cbrt, elementwise=True)
def cbrt(out, x, d_out):
    d_x = d_out / (3.0 * out * out)


@adjoint(np.exp2, elementwise=True)
def exp2(out, x, d_out):
    d_x = d_out * out * np.log(2.0)


@adjoint(np.logaddexp, elementwise=True, domain=(-2.0, 2.0))
def logaddexp(out, x1, x2, d_out):
    d_x1 = d_out * np.exp(x1 - out)  # exp(x1) / (exp(x1) + exp(x2)), without overflow
    d_x2 = d_out * np.exp(x2 - out)


@adjoint(np.logaddexp2, elementwise=True, domain=(-2.0, 2.0))
def logaddexp2(out, x1, x2, d_out):
    d_x1 = d_out * np.exp2(x1 - out)
    d_x2 = d_out * np.exp2(x2 - out)


@adjoint(np.hypot, elementwise=True, domain=(-0.8, 0.8))
def hypot(out, x1, x2, d_out):
    length = out + (out == 0)  # 0 at the origin, as np.linalg.norm
    d_x1 = d_out * x1 / length
    d_x2 = d_out * x2 / length


@adjoint(np.arcsinh, elementwise=True, domain=(-2.0, 2.0))
def arcsinh(out, x, d_out):
    d_x = d_out / np.sqrt(x * x + 1.0)


@adjoint(np.arccosh, elementwise=True, domain=(1.2, 3.0))
def arccosh(out, x, d_out):
    d_x = d_out / np.sqrt(x * x - 1.0)


@adjoint(np.arctanh, elementwise=True, domain=(-0.8, 0.8))
def arctanh(out, x, d_out):
    d_x = d_out / (1.0 - x * x)


@adjoint(np.deg2rad, elementwise=True)
def deg2rad(out, x, d_out):
    d_x = d_out * (np.pi / 180.0)


@adjoint(np.radians, elementwise=True)
def radians(out, x, d_out):
    d_x = d_out * (np.pi / 180.0)


@adjoint(np.rad2deg, elementwise=True)
def rad2deg(out, x, d_out):
    d_x = d_out * (180.0 / np.pi)


@adjoint(np.degrees, elementwise=True)
def degrees(out, x, d_out):
    d_x = d_out * (180.0 / np.pi)


@adjoint(np.fmax, elementwise=True)
def fmax(out, x1, x2, d_out):
    # as np.maximum, except that a nan loses: the other input is the result
    first = (x1 > x2) + 0.5 * (x1 == x2) + np.isnan(x2) * (x1 == x1)
    d_x1 = d_out * first
    d_x2 = d_out * (1.0 - first)


@adjoint(np.fmin, elementwise=True)
def fmin(out, x1, x2, d_out):
    first = (x1 < x2) + 0.5 * (x1 == x2) + np.isnan(x2) * (x1 == x1)
    d_x1 = d_out * first
    d_x2 = d_out * (1.0 - first)


@adjoint(np.remainder, elementwise=True, domain=(0.3, 2.5))
def remainder(out, x1, x2, d_out):  # also np.mod: x1 - floor(x1 / x2) * x2
    d_x1 = d_out
    d_x2 = -d_out * np.floor(x1 / x2)


@adjoint(np.fmod, elementwise=True, domain=(0.3, 2.5))
def fmod(out, x1, x2, d_out):  # x1 - trunc(x1 / x2) * x2
    d_x1 = d_out
    d_x2 = -d_out * np.trunc(x1 / x2)


@adjoint(np.sinc, elementwise=True, domain=(-0.9, 0.9))
def sinc(out, x, d_out):
    # (cos(pi x) - sinc(x)) / x; at 0 the series -pi**2 x / 3, which also has sinc's second derivative there
    d_x = d_out * np.where(x == 0, (-np.pi * np.pi / 3.0) * x, (np.cos(np.pi * x) - out) / (x + (x == 0)))


@adjoint(np.nan_to_num, elementwise=True)
def nan_to_num(out, x, copy=True, nan=0.0, posinf=None, neginf=None, *, d_out):
    d_x = d_out * np.isfinite(x)  # a replaced value is a constant


@adjoint(np.float_power, elementwise=True)
def float_power(out, x1, x2, d_out):
    d_x1 = d_out * x2 * np.float_power(x1, x2 - 1 + (x2 == 0))  # as operator.pow
    d_x2 = d_out * out * np.log(x1 + (x1 == 0))


# x1 * 2**x2 with x2 integers (NumPy refuses floats there): linear in x1, exactly (a change of the exponent)
@adjoint(np.ldexp, elementwise=True, zero_derivative=("x2",), domain=(-2.0, 2.0), examples=(
    {"x1": (4,), "x2": np.array([0, 3, -2, 1])}, {"x1": (), "x2": 5}, {"x1": (2, 3), "x2": np.array([-1, 0, 2])},
    {"x1": (3,), "x2": -3}))
def ldexp(out, x1, x2, d_out):
    d_x1 = np.ldexp(d_out, x2)


# x = mantissa * 2**exponent, the mantissa in [0.5, 1) (0 at 0): the exponent is an integer, piecewise
# constant, without a derivative; the mantissa is x * 2**-exponent, of slope 2**-exponent (1 at 0, as x
# itself there), which jumps where |x| crosses a power of 2
_FREXP_POINTS = ({"x": np.array([3.0, -5.5, 0.3, 12.5])}, {"x": np.array([[0.7, -0.05], [100.0, -0.6]])},
                 {"x": np.array(1.7)}, {"x": np.array([-0.3, 0.6])})


@adjoint(np.frexp, items=2, returns_sequence=True, examples=_FREXP_POINTS)
def frexp(out, x, d_out):
    d_x = np.ldexp(d_out[0], -out[1])


@tangent(np.frexp)
def frexp_tangent(out, x, t_x):
    t_out = (np.ldexp(t_x, -out[1]), np.zeros(np.shape(out[1])))


@adjoint(np.copysign, elementwise=True, zero_derivative=("x2",), domain=(-0.8, 0.8), examples=(
    {"x1": (4,), "x2": np.array([1.0, -2.0, 0.5, -0.25])}, {"x1": (), "x2": -1.0}, {"x1": (2, 3), "x2": np.array([-1.0, 2.0, 3.0])},
    {"x1": (3,), "x2": 0.5}))
def copysign(out, x1, x2, d_out):
    # |x1| with x2's sign (its sign bit: -0.0 is negative, tests/rules/test_rules_everyday_numpy.py); +1 at the
    # kink x1 = 0, as np.abs
    d_x1 = d_out * (1.0 - 2.0 * (x1 < 0)) * (1.0 - 2.0 * np.signbit(x2))
