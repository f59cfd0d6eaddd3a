"""Array creation: functions whose result is a new array the function owns.

Arrays made by these may be written into (``out[i] = v``); the zero-valued
constructors carry no derivative.
"""
import numpy as np

from s2s_ad.rules import adjoint, fresh_arrays, nondifferentiable, tangent
from s2s_ad.runtime import astype, cast_derivative

nondifferentiable(np.zeros, np.ones, np.empty, np.full, np.zeros_like, np.ones_like, np.empty_like,
                  np.arange, np.linspace, np.eye, np.identity)
nondifferentiable(np.shape, np.ndim, np.size, attributes={"shape": np.shape, "ndim": np.ndim, "size": np.size})
fresh_arrays(np.zeros, np.ones, np.empty, np.full, np.zeros_like, np.ones_like, np.empty_like, np.full_like,
             np.arange, np.linspace, np.eye, np.identity, np.copy, np.array, astype, cast_derivative)


@adjoint(np.copy, linear=True, method="copy", examples=({"a": (3,)}, {"a": (2, 3)}))
def copy(out, a, d_out):
    d_a = d_out


@adjoint(np.array, linear=True, examples=({"object": (3,)},))
def array(out, object, dtype=None, *, d_out):
    d_object = d_out


@adjoint(np.full_like, examples=({"a": np.zeros(3), "fill_value": ()},))
def full_like(out, a, fill_value, *, d_out):
    d_fill_value = np.sum(d_out)


@tangent(np.full_like)
def full_like(out, a, fill_value, *, t_fill_value):
    t_out = np.zeros(np.shape(out)) + t_fill_value


@tangent(np.copy)
def copy(out, a, t_a):
    t_out = np.copy(t_a)  # a new array, like the copy: writes into it must not reach t_a


@adjoint(astype, method="astype", examples=({"a": (3,), "dtype": float}, {"a": (2, 3), "dtype": np.float64},
                                            {"a": (3,), "dtype": int}))
def astype_rule(out, a, dtype, d_out):
    d_a = cast_derivative(d_out, dtype)


@tangent(astype)
def astype_rule(out, a, dtype, t_a):
    t_out = cast_derivative(t_a, dtype)


@adjoint(cast_derivative, linear=True, examples=({"d": (3,), "dtype": float}, {"d": (3,), "dtype": bool}))
def cast_derivative_rule(out, d, dtype, d_out):
    d_d = cast_derivative(d_out, dtype)
