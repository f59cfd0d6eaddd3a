"""Rules for NumPy's conversions: ``np.asarray``, ``np.asanyarray``, ``np.ascontiguousarray``,
``np.float64(x)``, and ``np.real``/``np.real_if_close``/``np.imag``/``np.conj`` of real values; the
calls that only inspect or convert, whose results carry no derivative: ``np.isclose``, ``np.allclose``,
``np.iscomplex``, ``np.isreal``, ``np.int64(x)`` (a conversion to integers truncates), ``np.angle`` of a
real value (0 or pi).

Each passes the values through (or, ``np.imag`` of a real value, makes zeros): the derivative is
the incoming one, zero where the result holds integers (a conversion to integers truncates).
``np.asarray`` and its kin may return the argument itself, so their results may alias it.
"""
import numpy as np

from s2s_ad.rules import adjoint, declare, nondifferentiable, tangent
from s2s_ad.core.runtime import if_inexact

_CONVERTED = ({"a": (3,)}, {"a": (2, 3)}, {"a": ()}, {"a": (3,), "dtype": "int32"})


@adjoint(np.asarray, examples=_CONVERTED, may_view=True)
def asarray(out, a, dtype=None, order=None, *, d_out):
    d_a = if_inexact(d_out, out)  # converted to integers: truncated, no derivative


@tangent(np.asarray)
def asarray(out, a, dtype=None, order=None, *, t_a):
    t_out = if_inexact(np.asarray(t_a), out)


@adjoint(np.asanyarray, examples=_CONVERTED, may_view=True)
def asanyarray(out, a, dtype=None, order=None, *, d_out):
    d_a = if_inexact(d_out, out)


@tangent(np.asanyarray)
def asanyarray(out, a, dtype=None, order=None, *, t_a):
    t_out = if_inexact(np.asanyarray(t_a), out)


@adjoint(np.ascontiguousarray, examples=_CONVERTED, may_view=True)
def ascontiguousarray(out, a, dtype=None, *, d_out):
    d_a = np.reshape(if_inexact(d_out, out), np.shape(a))  # a number comes back as an array of one


@tangent(np.ascontiguousarray)
def ascontiguousarray(out, a, dtype=None, *, t_a):
    t_out = if_inexact(np.reshape(t_a, np.shape(out)), out)


@adjoint(np.float64, examples=({"x": ()}, {"x": (3,)}), linear=True, may_view=True)
def float64(out, x, d_out):
    d_x = d_out  # a float64 of a float: the same value (of a float64 array: the array itself)


@adjoint(np.real, linear=True, examples=({"val": (3,)}, {"val": ()}, {"val": (2, 3)}), may_view=True)
def real(out, val, d_out):
    d_val = d_out  # of a real value, the value itself


@adjoint(np.conj, linear=True, examples=({"x": (3,)}, {"x": ()}), elementwise=True)
def conj(out, x, d_out):
    d_x = d_out  # of a real value, the value itself


# np.imag of a real value is zeros whatever the value: constant in it
nondifferentiable(np.imag)


@adjoint(np.real_if_close, linear=True, examples=({"a": (3,)}, {"a": (2, 3)}), may_view=True)
def real_if_close(out, a, tol=100, *, d_out):
    d_a = d_out  # of a real array, the array itself


# Inspections and conversions whose results are truth values or integers: constant almost everywhere.
# np.angle of a real value is 0 or pi (complex values are refused elsewhere).
nondifferentiable(np.isclose, np.iscomplex, np.isreal, np.angle, elementwise=True)
declare(np.isclose, np.iscomplex, np.isreal, compares=True)
nondifferentiable(np.allclose, np.array_equal, np.iscomplexobj, np.isrealobj, np.int64, np.int32, np.int16, np.int8)
