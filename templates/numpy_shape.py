"""Rules for shape functions: reshape, ravel, expand_dims, squeeze, concatenate, stack,
broadcast_to, pad (constant and edge modes), roll."""
import numpy as np

from s2s_ad.rules import adjoint, fresh_arrays, method_alias, tangent
from s2s_ad.runtime import concatenate_grad, pad_grad, stack_grad, unbroadcast


@adjoint(np.reshape, linear=True, method="reshape", pack_method_args=True,
         examples=({"a": (2, 6), "shape": (3, 4)}, {"a": (2, 3), "shape": -1}))
def reshape(out, a, shape, *, d_out):
    d_a = np.reshape(d_out, np.shape(a))


@adjoint(np.ravel, linear=True, method="ravel", examples=({"a": (2, 3)},))
def ravel(out, a, d_out):
    d_a = np.reshape(d_out, np.shape(a))


method_alias("flatten", np.ravel)  # a copy where ravel may give a view: the same derivative


@adjoint(np.expand_dims, linear=True, examples=({"a": (3,), "axis": 0}, {"a": (2, 3), "axis": (0, 3)}))
def expand_dims(out, a, axis, d_out):
    d_a = np.reshape(d_out, np.shape(a))


@adjoint(np.squeeze, linear=True, method="squeeze", examples=({"a": (1, 3, 1)}, {"a": (1, 3, 1), "axis": 0}))
def squeeze(out, a, axis=None, *, d_out):
    d_a = np.reshape(d_out, np.shape(a))


@adjoint(np.concatenate, linear=True, examples=({"arrays": [(2, 3), (4, 3)]}, {"arrays": [(2, 3), (2, 1)], "axis": 1},
                                   {"arrays": [(3,), (2,)]}))
def concatenate(out, arrays, axis=0, *, d_out):
    d_arrays = concatenate_grad(d_out, arrays, axis)


@adjoint(np.stack, linear=True, examples=({"arrays": [(3,), (3,)]}, {"arrays": [(2, 3), (2, 3), (2, 3)], "axis": 2}))
def stack(out, arrays, axis=0, *, d_out):
    d_arrays = stack_grad(d_out, arrays, axis)


@adjoint(np.broadcast_to, linear=True, examples=({"array": (3,), "shape": (2, 3)}, {"array": (2, 1), "shape": (2, 4)}))
def broadcast_to(out, array, shape, *, d_out):
    d_array = unbroadcast(d_out, array)


@adjoint(np.pad, examples=({"array": (3, 4), "pad_width": 1}, {"array": (3, 4), "pad_width": 2, "mode": "edge"},
                           {"array": (4,), "pad_width": (1, 2), "mode": "edge"},
                           {"array": (2, 3), "pad_width": ((1, 0), (0, 2)), "constant_values": 1.5}))
def pad(out, array, pad_width, mode="constant", *, constant_values=0, d_out):
    d_array = pad_grad(d_out, array, pad_width, mode)


@tangent(np.pad)
def pad(out, array, pad_width, mode="constant", *, constant_values=0, t_array):
    t_out = np.pad(t_array, pad_width, mode)  # the border's constant has no tangent


@adjoint(np.roll, linear=True, examples=({"a": (5,), "shift": 2}, {"a": (3, 4), "shift": -1, "axis": 1},
                                         {"a": (3, 4), "shift": (1, 2), "axis": (0, 1)}))
def roll(out, a, shift, axis=None, *, d_out):
    d_a = np.roll(d_out, np.negative(shift), axis)

fresh_arrays(np.concatenate, np.stack, np.pad)  # new arrays, never views (unlike reshape, transpose)
