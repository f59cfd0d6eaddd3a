"""Rules for the ``math`` module (numbers only, so every rule is elementwise).

They mirror the NumPy rules on purpose: written with ``math`` functions, the
generated code for scalar functions stays on fast Python floats instead of
NumPy scalars (``math.cos`` on a float costs a fraction of ``np.cos``).
"""
import math
import types

import numpy as np

from s2s_ad.rules import adjoint, declare, nondifferentiable, spell_module


# -- helpers: the gamma family's derivatives, for a number -------------------------------------------

def digamma(x: float) -> float:
    """The digamma function psi = d lgamma / dx, for a number (the derivative of ``math.lgamma``).

    Shifted up by the recurrence psi(x) = psi(x + 1) - 1/x until x >= 10, then the asymptotic
    series (error below 1e-14); reflected for negative x.
    """
    x = float(x)
    if x <= 0.0 and (math.isinf(x) or x == math.floor(x)):
        return math.nan  # a pole (-inf too: math.floor of it would raise)
    if x < 0.0:
        return digamma(1.0 - x) - math.pi / math.tan(math.pi * x)
    shift = 0.0
    while x < 10.0:
        shift -= 1.0 / x
        x += 1.0
    inv = 1.0 / (x * x)
    series = inv * (1.0 / 12 - inv * (1.0 / 120 - inv * (1.0 / 252 - inv * (1.0 / 240 - inv * (1.0 / 132)))))
    return shift + math.log(x) - 0.5 / x - series


def trigamma(x: float) -> float:
    """psi'(x), the derivative of ``digamma`` (recurrence, asymptotic series, reflection)."""
    x = float(x)
    if x <= 0.0 and (math.isinf(x) or x == math.floor(x)):
        return math.inf
    if x < 0.0:
        reflection = math.pi / math.sin(math.pi * x)
        return -trigamma(1.0 - x) + reflection * reflection  # (a product: the compiled version's square too)
    shift = 0.0
    while x < 10.0:
        shift += 1.0 / (x * x)
        x += 1.0
    inv = 1.0 / (x * x)
    series = (1.0 / x) * (1.0 + 1.0 / (2 * x) + inv * (1.0 / 6 - inv * (1.0 / 30 - inv * (1.0 / 42 - inv / 30))))
    return shift + series

spell_module("math", math)  # generated code writes math.cos
nondifferentiable(math.floor, math.ceil, math.trunc, math.isnan, math.isinf, math.isfinite, math.factorial)
# Pure functions of numbers: computed once where generated code calls them on constants (math.log(math.e)).
declare(*[f for f in vars(math).values() if isinstance(f, types.BuiltinFunctionType)], foldable=True)


@adjoint(math.sin, elementwise=True)
def sin(out, x, d_out):
    d_x = d_out * math.cos(x)


@adjoint(math.cos, elementwise=True)
def cos(out, x, d_out):
    d_x = -d_out * math.sin(x)


@adjoint(math.tan, elementwise=True)
def tan(out, x, d_out):
    d_x = d_out * (1.0 + out * out)


@adjoint(math.exp, elementwise=True)
def exp(out, x, d_out):
    d_x = d_out * out


@adjoint(math.log, elementwise=True, examples=({"x": ()}, {"x": (), "base": ()}))
def log(out, x, base=math.e, *, d_out):
    d_x = d_out / (x * math.log(base))
    d_base = -d_out * out / (base * math.log(base))


@adjoint(math.log10, elementwise=True)
def log10(out, x, d_out):
    d_x = d_out / (x * math.log(10.0))


@adjoint(math.log2, elementwise=True)
def log2(out, x, d_out):
    d_x = d_out / (x * math.log(2.0))


@adjoint(math.log1p, elementwise=True)
def log1p(out, x, d_out):
    d_x = d_out / (1.0 + x)


@adjoint(math.expm1, elementwise=True)
def expm1(out, x, d_out):
    d_x = d_out * (out + 1.0)


@adjoint(math.sqrt, elementwise=True)
def sqrt(out, x, d_out):
    d_x = d_out * 0.5 / out


@adjoint(math.tanh, elementwise=True)
def tanh(out, x, d_out):
    d_x = d_out * (1.0 - out * out)


@adjoint(math.sinh, elementwise=True)
def sinh(out, x, d_out):
    d_x = d_out * math.cosh(x)


@adjoint(math.cosh, elementwise=True)
def cosh(out, x, d_out):
    d_x = d_out * math.sinh(x)


@adjoint(math.asin, elementwise=True)
def asin(out, x, d_out):
    d_x = d_out / math.sqrt(1.0 - x * x)


@adjoint(math.acos, elementwise=True)
def acos(out, x, d_out):
    d_x = -d_out / math.sqrt(1.0 - x * x)


@adjoint(math.atan, elementwise=True)
def atan(out, x, d_out):
    d_x = d_out / (1.0 + x * x)


@adjoint(math.atan2, elementwise=True)
def atan2(out, y, x, d_out):
    d_y = d_out * x / (x * x + y * y)
    d_x = -d_out * y / (x * x + y * y)


@adjoint(math.hypot, elementwise=True)
def hypot(out, x, y, d_out):
    d_x = d_out * x / out
    d_y = d_out * y / out


@adjoint(math.pow, elementwise=True)
def pow(out, x, y, d_out):
    d_x = d_out * y * math.pow(x, y - 1.0 + (y == 0))  # as operator.pow: 0 where y is 0
    d_y = d_out * out * math.log(x + (x == 0))


@adjoint(math.fabs, elementwise=True, domain=(-0.8, 0.8))
def fabs(out, x, d_out):
    d_x = d_out * (1.0 - 2.0 * (x < 0))  # +1 at the kink x = 0, as JAX


@adjoint(math.asinh, elementwise=True, domain=(-2.0, 2.0))
def asinh(out, x, d_out):
    d_x = d_out / math.sqrt(x * x + 1.0)


@adjoint(math.acosh, elementwise=True, domain=(1.2, 3.0))
def acosh(out, x, d_out):
    d_x = d_out / math.sqrt(x * x - 1.0)


@adjoint(math.atanh, elementwise=True, domain=(-0.8, 0.8))
def atanh(out, x, d_out):
    d_x = d_out / (1.0 - x * x)


@adjoint(math.degrees, elementwise=True)
def degrees(out, x, d_out):
    d_x = d_out * (180.0 / math.pi)


@adjoint(math.radians, elementwise=True)
def radians(out, x, d_out):
    d_x = d_out * (math.pi / 180.0)


if hasattr(math, "cbrt"):  # math.cbrt and math.exp2 exist from Python 3.11: a rule where they do
    @adjoint(math.cbrt, elementwise=True)
    def cbrt(out, x, d_out):
        d_x = d_out / (3.0 * out * out)

    @adjoint(math.exp2, elementwise=True)
    def exp2(out, x, d_out):
        d_x = d_out * out * math.log(2.0)


@adjoint(math.fmod, elementwise=True, domain=(0.3, 2.5))
def fmod(out, x, y, d_out):  # x - trunc(x / y) * y
    d_x = d_out
    d_y = -d_out * math.trunc(x / y)


@adjoint(math.remainder, elementwise=True, domain=(0.3, 2.5))
def remainder(out, x, y, d_out):  # x - n * y, n the integer nearest x / y
    d_x = d_out
    d_y = -d_out * round(x / y)


@adjoint(math.erf, elementwise=True, domain=(-1.5, 1.5))
def erf(out, x, d_out):
    d_x = d_out * (2.0 / math.sqrt(math.pi)) * math.exp(-x * x)


@adjoint(math.erfc, elementwise=True, domain=(-1.5, 1.5))
def erfc(out, x, d_out):
    d_x = -d_out * (2.0 / math.sqrt(math.pi)) * math.exp(-x * x)


@adjoint(math.lgamma, elementwise=True, domain=(0.3, 4.0))
def lgamma(out, x, d_out):
    d_x = d_out * digamma(x)


@adjoint(math.gamma, elementwise=True, domain=(0.3, 4.0))
def gamma(out, x, d_out):
    d_x = d_out * out * digamma(x)


@adjoint(digamma, elementwise=True, domain=(0.3, 4.0))
def digamma_rule(out, x, d_out):
    d_x = d_out * trigamma(x)  # trigamma has no rule: a third derivative of lgamma is refused


# What each of these gives is a Python float, whatever numbers it is given (ints too): the compiled
# tape keeps such values in float64 arrays (targets/numba/tape.py).  Checked on the examples (rule_facts).
declare(*[f for f in (math.sin, math.cos, math.tan, math.exp, math.log, math.log10, math.log2, math.log1p,
                      math.expm1, math.sqrt, math.tanh, math.sinh, math.cosh, math.asin, math.acos, math.atan,
                      math.atan2, math.hypot, math.pow, math.fabs, math.asinh, math.acosh, math.atanh,
                      math.degrees, math.radians, math.fmod, math.remainder, math.erf, math.erfc, math.lgamma,
                      math.gamma, getattr(math, "cbrt", None), getattr(math, "exp2", None)) if f is not None],
        returns_float=True)
