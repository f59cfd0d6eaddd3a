"""Rules for the helpers generated code calls (``s2s_ad.runtime``).

They make generated code itself differentiable: ``grad(grad(f))`` runs
forward mode over the code ``grad(f)`` generated, helpers included.  Every
helper is linear in the adjoint it reshapes, so its tangent is the same call
on tangents (``matmul_grad_a``/``matmul_grad_b`` are bilinear).  Helpers
that only reverse-over-reverse would need an adjoint of have a tangent rule
alone.  (Templates are named ``*_rule``: a template named like its helper
would hide the helper its own body calls.)
"""
import numpy as np

from s2s_ad.rules import adjoint, fresh_arrays, nondifferentiable, tangent
from s2s_ad.runtime import (added_at, broadcast_reduced, check_assertion, formatted, random_states, set_random_states, checkpoint_stride, concatenate_grad, cumsum_grad,
                            expand_reduced, getitem_grad, inverse_axes, matmul_grad_a, matmul_grad_b,
                            pad_grad, prod_others, prod_others_jvp, stack_grad, stop_gradient, stored_part,
                            unbroadcast, unbroadcast_to, writable_copy, zero_tangent,
                            zeros_like)

nondifferentiable(zeros_like, zero_tangent, inverse_axes)
nondifferentiable(stop_gradient, elementwise=True)
nondifferentiable(checkpoint_stride)
nondifferentiable(formatted, check_assertion, random_states, set_random_states)  # strings, checks, states
fresh_arrays(zeros_like, zero_tangent, writable_copy, broadcast_reduced, getitem_grad, added_at)


@adjoint(unbroadcast, linear=True, examples=({"grad": (2, 3), "like": np.zeros(3)}, {"grad": (3,), "like": 0.5},
                                             {"grad": (3, 1), "like": np.zeros((3, 4))}))
def unbroadcast_rule(out, grad, like, d_out):
    d_grad = unbroadcast(np.broadcast_to(d_out, np.broadcast_shapes(np.shape(grad), np.shape(like))), grad)


@adjoint(unbroadcast_to, linear=True, examples=({"grad": (2, 3), "shape": (3,)}, {"grad": (3,), "shape": ()},
                                                {"grad": (3, 1), "shape": (3, 4)}))
def unbroadcast_to_rule(out, grad, shape, d_out):
    d_grad = unbroadcast(np.broadcast_to(d_out, np.broadcast_shapes(np.shape(grad), shape)), grad)


@adjoint(writable_copy, linear=True, examples=({"grad": (3,), "like": np.zeros(3)}, {"grad": (), "like": np.zeros(4)}))
def writable_copy_rule(out, grad, like, d_out):
    d_grad = unbroadcast(d_out, grad)


@adjoint(broadcast_reduced, linear=True, examples=(
    {"grad": (), "like": np.zeros((2, 3))}, {"grad": (3,), "like": np.zeros((2, 3)), "axis": 0},
    {"grad": (2, 1), "like": np.zeros((2, 3)), "axis": 1, "keepdims": True}))
def broadcast_reduced_rule(out, grad, like, axis=None, keepdims=False, *, d_out):
    d_grad = np.sum(d_out, axis=axis, keepdims=keepdims)


@adjoint(getitem_grad, linear=True, examples=(
    {"grad": (), "a": np.zeros(4), "index": 1}, {"grad": (2,), "a": np.zeros(4), "index": slice(1, 3)},
    {"grad": (3,), "a": np.zeros(4), "index": np.array([0, 2, 0])}))
def getitem_grad_rule(out, grad, a, index, d_out):
    d_grad = d_out[index]  # scattering adds repeated indices up; gathering reads each again


@tangent(stored_part, examples=(
    {"grad": (4,), "index": slice(0, 2), "value": np.zeros(2)},
    {"grad": (3,), "index": np.array([0, 0, 1]), "value": np.zeros(3)}))
def stored_part_rule(out, grad, index, value, t_grad):
    t_out = stored_part(t_grad, index, value)


@tangent(concatenate_grad, examples=({"grad": (4,), "arrays": [np.zeros(2), np.zeros(2)]},))
def concatenate_grad_rule(out, grad, arrays, axis=0, *, t_grad):
    t_out = concatenate_grad(t_grad, arrays, axis)


@tangent(stack_grad, examples=({"grad": (2, 3), "arrays": [np.zeros(3), np.zeros(3)]},))
def stack_grad_rule(out, grad, arrays, axis=0, *, t_grad):
    t_out = stack_grad(t_grad, arrays, axis)


@adjoint(pad_grad, linear=True, examples=({"grad": (5, 6), "array": np.zeros((3, 4)), "pad_width": 1},
                                          {"grad": (7,), "array": np.zeros(4), "pad_width": (1, 2), "mode": "edge"}))
def pad_grad_rule(out, grad, array, pad_width, mode="constant", *, d_out):
    d_grad = np.pad(d_out, pad_width, mode)  # cropping (and folding borders onto edges) undone


@tangent(matmul_grad_a, examples=({"grad": (2, 4), "a": np.zeros((2, 3)), "b": (3, 4)},
                                  {"grad": (4,), "a": np.zeros(3), "b": (3, 4)}))
def matmul_grad_a_rule(out, grad, a, b, t_grad, t_b):
    t_out = matmul_grad_a(t_grad, a, b) + matmul_grad_a(grad, a, t_b)


@tangent(matmul_grad_b, examples=({"grad": (2, 4), "a": (2, 3), "b": np.zeros((3, 4))},
                                  {"grad": (2,), "a": (2, 3), "b": np.zeros(3)}))
def matmul_grad_b_rule(out, grad, a, b, t_grad, t_a):
    t_out = matmul_grad_b(t_grad, a, b) + matmul_grad_b(grad, t_a, b)


@tangent(prod_others, examples=({"a": (4,)}, {"a": (2, 3), "axis": 1}, {"a": (2, 3, 2), "axis": (0, 2)}))
def prod_others_rule(out, a, axis=None, *, t_a):
    t_out = prod_others_jvp(a, t_a, axis)


@tangent(cumsum_grad, examples=({"grad": (5,), "a": np.zeros(5)}, {"grad": (3, 4), "a": np.zeros((3, 4)), "axis": 0}))
def cumsum_grad_rule(out, grad, a, axis=None, *, t_grad):
    t_out = cumsum_grad(t_grad, a, axis)


@adjoint(expand_reduced, linear=True, examples=({"x": (3,), "axis": 1}, {"x": (2, 3)}, {"x": (4,), "axis": 0}))
def expand_reduced_rule(out, x, axis=None, keepdims=False, *, d_out):
    d_x = np.reshape(d_out, np.shape(x))


@adjoint(added_at, linear=True, examples=({"a": (4,), "index": np.array([0, 2, 0]), "value": (3,)},
                                          {"a": (3, 2), "index": np.array([True, False, True]), "value": (2, 2)}))
def added_at_rule(out, a, index, value, d_out):
    d_a = d_out
    d_value = unbroadcast(d_out[index], value)
