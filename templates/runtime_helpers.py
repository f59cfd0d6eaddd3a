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

from s2s_ad.rules import adjoint, declare, fresh_arrays, nondifferentiable, tangent
from s2s_ad.runtime import (added_at, append_grad, check_assertion, check_no_derivative, check_number_update,
                            check_view_update, checkpoint_stride, checkpointed, concatenate_grad,
                            derivative_lost_by, diag_grad, diagonal_grad, diff_grad, diff_piece, draw,
                            formatted, getitem_grad, held_apart, if_inexact, joined_grad, linspace_weights,
                            pad_grad, pad_jvp, raise_exception, random_states, repeat_grad, set_random_states,
                            sort_grad, stack_grad, stop_gradient, stored_part, take_along_axis_grad,
                            take_grad, tile_grad, unbroadcast, unbroadcast_to, writable_copy, zero_tangent,
                            zeros_like)

nondifferentiable(zeros_like, zero_tangent, linspace_weights)
declare(checkpointed, refused="checkpointed(...) marks a loop: write it as the loop's iterable, "
                              "for t in s2s_ad.checkpointed(range(n)):")
nondifferentiable(stop_gradient, elementwise=True)
nondifferentiable(checkpoint_stride, np.broadcast_shapes)
nondifferentiable(formatted, check_assertion, random_states, set_random_states)  # strings, checks, states
# a draw from a generator object (rng.normal()): a constant of each call, replayed in every pass (draws.py);
# one whose arguments depend on the inputs is refused (analysis.check_constant_calls)
nondifferentiable(draw)
fresh_arrays(zeros_like, zero_tangent, writable_copy, getitem_grad, added_at)


@adjoint(unbroadcast, linear=True, examples=({"grad": (2, 3), "like": np.zeros(3)}, {"grad": (3,), "like": 0.5},
                                             {"grad": (3, 1), "like": np.zeros((3, 4))}), shape_only=1)
def unbroadcast_rule(out, grad, like, d_out):
    d_grad = unbroadcast(np.broadcast_to(d_out, np.broadcast_shapes(np.shape(grad), np.shape(like))), grad)


@adjoint(unbroadcast_to, linear=True, examples=({"grad": (2, 3), "shape": (3,)}, {"grad": (3,), "shape": ()},
                                                {"grad": (3, 1), "shape": (3, 4)}))
def unbroadcast_to_rule(out, grad, shape, d_out):
    d_grad = unbroadcast(np.broadcast_to(d_out, np.broadcast_shapes(np.shape(grad), shape)), grad)


@adjoint(held_apart, linear=True, examples=({"value": (3,)}, {"value": [(2,), (2,)]}), returns_sequence=True)
def held_apart_rule(out, value, d_out):  # a copy: the adjoint passes through
    d_value = d_out


@adjoint(writable_copy, linear=True, examples=({"grad": (3,), "like": np.zeros(3)}, {"grad": (), "like": np.zeros(4)}),
         shape_only=1)
def writable_copy_rule(out, grad, like, d_out):
    d_grad = unbroadcast(d_out, grad)


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


# pad_grad and pad_jvp are linear in what they move and each other's transpose; the primal array is
# read for its shape (and, for maximum, minimum and median, the order of its elements).
@adjoint(pad_grad, linear=True, examples=(
    {"grad": (5, 6), "array": np.zeros((3, 4)), "pad_width": 1},
    {"grad": (7,), "array": np.zeros(4), "pad_width": (1, 2), "mode": "edge"},
    {"grad": (6, 7), "array": np.zeros((3, 4)), "pad_width": ((1, 2), (3, 0)), "mode": "symmetric", "reflect_type": "odd"},
    {"grad": (8,), "array": np.zeros(5), "pad_width": (2, 1), "mode": "mean", "stat_length": 2},
    {"grad": (8,), "array": np.array([0.3, 0.9, 0.1, 0.5, 0.7]), "pad_width": (2, 1), "mode": "median"}))
def pad_grad_rule(out, grad, array, pad_width, mode="constant", stat_length=None, reflect_type="even", *, d_out):
    d_grad = pad_jvp(d_out, array, pad_width, mode, stat_length, reflect_type)


@adjoint(pad_jvp, linear=True, examples=(
    {"t_array": (3, 4), "array": np.zeros((3, 4)), "pad_width": 1},
    {"t_array": (4,), "array": np.zeros(4), "pad_width": (3, 2), "mode": "wrap"},
    {"t_array": (3, 4), "array": np.zeros((3, 4)), "pad_width": 2, "mode": "linear_ramp"},
    {"t_array": (5,), "array": np.array([0.3, 0.9, 0.1, 0.5, 0.7]), "pad_width": (2, 1), "mode": "maximum",
     "stat_length": 3}))
def pad_jvp_rule(out, t_array, array, pad_width, mode="constant", stat_length=None, reflect_type="even", *, d_out):
    d_t_array = pad_grad(d_out, array, pad_width, mode, stat_length, reflect_type)


# The adjoints of shape functions are linear in the adjoint they move: the tangent is the same call.

@tangent(joined_grad, examples=({"grad": (4,), "arrays": [np.zeros(2), np.zeros(2)], "how": "hstack"},
                                {"grad": (2, 3), "arrays": [np.zeros(3), np.zeros(3)], "how": "vstack"}))
def joined_grad_rule(out, grad, arrays, how, t_grad):
    t_out = joined_grad(t_grad, arrays, how)


@tangent(repeat_grad, examples=({"grad": (6,), "a": np.zeros(3), "repeats": 2},))
def repeat_grad_rule(out, grad, a, repeats, axis=None, *, t_grad):
    t_out = repeat_grad(t_grad, a, repeats, axis)


@tangent(tile_grad, examples=({"grad": (6,), "a": np.zeros(3), "reps": 2},))
def tile_grad_rule(out, grad, a, reps, t_grad):
    t_out = tile_grad(t_grad, a, reps)


@tangent(diag_grad, examples=({"grad": (3, 3), "v": np.zeros(3)}, {"grad": (3,), "v": np.zeros((3, 4)), "k": 1}))
def diag_grad_rule(out, grad, v, k=0, *, t_grad):
    t_out = diag_grad(t_grad, v, k)


@tangent(diagonal_grad, examples=({"grad": (3,), "a": np.zeros((3, 4))},))
def diagonal_grad_rule(out, grad, a, offset=0, axis1=0, axis2=1, *, t_grad):
    t_out = diagonal_grad(t_grad, a, offset, axis1, axis2)


@tangent(append_grad, examples=({"grad": (5,), "arr": np.zeros(3), "values": np.zeros(2), "axis": None, "which": 1},))
def append_grad_rule(out, grad, arr, values, axis, which, t_grad):
    t_out = append_grad(t_grad, arr, values, axis, which)


@tangent(diff_piece, examples=({"grad": (5,), "a": np.zeros(3), "prepend": 0.0, "append": np.zeros(2), "which": 0},
                              {"grad": (2, 2), "a": np.zeros((2, 3)), "n": 2, "axis": 1, "append": np.zeros((2, 1))}))
def diff_piece_rule(out, grad, a, n=1, axis=-1, prepend=None, append=None, which=1, *, t_grad):
    t_out = diff_piece(t_grad, a, n, axis, prepend, append, which)


@tangent(diff_grad, examples=({"grad": (4,), "a": np.zeros(5)},))
def diff_grad_rule(out, grad, a, n=1, axis=-1, *, t_grad):
    t_out = diff_grad(t_grad, a, n, axis)


@tangent(take_grad, examples=({"grad": (3,), "a": np.zeros(4), "indices": np.array([0, 0, 2])},))
def take_grad_rule(out, grad, a, indices, axis=None, *, t_grad):
    t_out = take_grad(t_grad, a, indices, axis)


@tangent(take_along_axis_grad, examples=({"grad": (3,), "arr": np.zeros(4), "indices": np.array([0, 0, 2]),
                                          "axis": 0},))
def take_along_axis_grad_rule(out, grad, arr, indices, axis, t_grad):
    t_out = take_along_axis_grad(t_grad, arr, indices, axis)


@tangent(sort_grad, examples=({"grad": (4,), "a": np.array([0.3, 0.1, 0.9, 0.5])},))
def sort_grad_rule(out, grad, a, axis=-1, *, t_grad):
    t_out = sort_grad(t_grad, a, axis)  # the order is piecewise constant in a


@tangent(if_inexact, examples=({"grad": (3,), "like": np.zeros(3)}, {"grad": (3,), "like": np.arange(3)}))
def if_inexact_rule(out, grad, like, t_grad):
    t_out = if_inexact(t_grad, like)  # linear in grad; the dtype of like decides


@adjoint(added_at, linear=True, examples=({"a": (4,), "index": np.array([0, 2, 0]), "value": (3,)},
                                          {"a": (3, 2), "index": np.array([True, False, True]), "value": (2, 2)}))
def added_at_rule(out, a, index, value, d_out):
    d_a = d_out
    d_value = unbroadcast(d_out[index], value)


# Facts about operations with no rule here (see s2s_ad.rules.FACTS).
declare(zeros_like, shape_only=0)
declare(unbroadcast, unbroadcast_to, odd=True)  # linear in the adjoint they reduce
# Generated code's own checks and reports, which run where the primal computation runs.
declare(check_assertion, set_random_states, check_number_update, raise_exception, check_no_derivative,
        check_view_update, derivative_lost_by, reports=True)


# Inputs the helpers read for their shape, their length or their sorting order only: a varied
# argument there carries no derivative (any other input without one is refused where it varies).
for _helper, _inputs in ((getitem_grad, ("a",)), (pad_grad, ("array",)), (pad_jvp, ("array",)),
                         (stored_part, ("value",)), (concatenate_grad, ("arrays",)), (stack_grad, ("arrays",)),
                         (joined_grad, ("arrays",)), (repeat_grad, ("a",)),
                         (tile_grad, ("a",)), (diag_grad, ("v",)), (diagonal_grad, ("a",)),
                         (append_grad, ("arr", "values")), (diff_grad, ("a",)), (take_grad, ("a",)),
                         (take_along_axis_grad, ("arr",)), (sort_grad, ("a",)), (if_inexact, ("like",)), (diff_piece, ("a", "prepend", "append"))):
    declare(_helper, zero_derivative=_inputs)


# Checked against NumPy (tests/test_rule_facts_against_numpy.py): these helpers hand back their
# first argument itself or a view of it (a reshape, the adjoint passed through), and those below return
# lists or tuples of pieces, so generated code that writes into what they return copies first.
declare(append_grad, if_inexact, view=True)  # their first argument (not the others: like, a, b)
declare(concatenate_grad, stack_grad, joined_grad, may_view=True)  # pieces of their first argument
declare(concatenate_grad, stack_grad, joined_grad, returns_sequence=True)
