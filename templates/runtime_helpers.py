"""Rules for the helpers the engine writes into generated code (``s2s_ad.core.runtime``).

They make generated code itself differentiable: ``grad(grad(f))`` runs
forward mode over the code ``grad(f)`` generated, helpers included.  Every
helper is linear in the adjoint it reshapes, so its tangent is the same call
on tangents.  Helpers that only reverse-over-reverse would need an adjoint
of have a tangent rule alone.  The helpers of one operation
(``cumsum_grad``, ``matmul_grad_a``: bilinear) are defined in that
operation's module, and their rules at its end.  (Templates are named
``*_rule``: a template named like its helper would hide the helper its own
body calls.)
"""
import numpy as np

from s2s_ad.rules import adjoint, declare, fresh_arrays, nondifferentiable, tangent
from s2s_ad.core.number_functions import cos_of_number, sin_of_number
from s2s_ad.core.float_lists import cells, cells_array, float64_as_float
from s2s_ad.core.runtime import (added_at, check_assertion, check_bound, check_index, check_out_cast, check_no_derivative,
                            check_number_update, check_view_kept,
                            check_one_number, check_view_update, checkpoint_stride, checkpointed, derivative_lost_by, draw, float_stack,
                            format_method, formatted, getitem_grad, joined, held_apart, if_inexact, raise_exception, random_states,
                            percent_formatted, positions_grad, retaken_view, revolve, revolve_forward, revolve_last, revolve_reverse, revolve_turn,
                            set_random_states, snapshots, split_piece, stale_grad, stop_gradient, stored_part, unbroadcast, unbroadcast_to,
                            view_positions, writable_copy, zero_tangent, zeros_like)

nondifferentiable(zeros_like, zero_tangent)
declare(checkpointed, refused="checkpointed(...) marks a loop: write it as the loop's iterable, "
                              "for t in s2s_ad.checkpointed(range(n)):")
nondifferentiable(stop_gradient, elementwise=True)
nondifferentiable(checkpoint_stride, np.broadcast_shapes)
# the binomial schedule of checkpointed(steps, snapshots=c): positions and counts (the state is read for its size)
nondifferentiable(snapshots, revolve, revolve_forward, revolve_last, revolve_reverse, revolve_turn)
nondifferentiable(formatted, percent_formatted, format_method, joined, check_assertion, check_bound, check_out_cast, check_index,
                  check_one_number, random_states, set_random_states)  # strings, checks, states
nondifferentiable(split_piece)  # where a piece of a split lies in its array: shapes and counts alone
# a draw from a generator object (rng.normal()): a constant of each call, replayed in every pass (draws.py);
# one whose arguments depend on the inputs is refused (analysis.check_constant_calls)
nondifferentiable(draw)
fresh_arrays(zeros_like, zero_tangent, writable_copy, getitem_grad, added_at)
# The Python target's reverse loops (s2s_ad/passes/scalar_cells.py): an adjoint vector as a list and back; each
# may hand back its argument (another dtype or rank stays as it is).  Generated code's own, never read back.
nondifferentiable(cells, cells_array, float64_as_float)
declare(cells, cells_array, float64_as_float, may_view=True)
# The Numba target's preallocated tape slot, read back by forward mode over a gradient compiled by Numba
# (a Hessian): made empty, its records stored into it (their tangents into a tangent stack of its shape)
nondifferentiable(float_stack)
fresh_arrays(float_stack)
declare(float_stack, shape_from="argument")


@adjoint(unbroadcast, linear=True, examples=({"grad": (2, 3), "like": np.zeros(3)}, {"grad": (3,), "like": 0.5},
                                             {"grad": (3, 1), "like": np.zeros((3, 4))},
                                             {"grad": (3,), "like": np.zeros(3)}), shape_only=1)
def unbroadcast_rule(out, grad, like, d_out):
    d_grad = unbroadcast(np.broadcast_to(d_out, np.broadcast_shapes(np.shape(grad), np.shape(like))), grad)


@adjoint(unbroadcast_to, linear=True, examples=({"grad": (2, 3), "shape": (3,)}, {"grad": (3,), "shape": ()},
                                                {"grad": (3, 1), "shape": (3, 4)}, {"grad": (2, 3), "shape": (2, 3)}))
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
# The shape of the result (index_ranges: the lengths of arrays compiled code indexes)
declare(zeros_like, zero_tangent, if_inexact, shaped_like=0)  # (a number: zeros_like gives 0.0)
declare(writable_copy, unbroadcast, shaped_like=1)  # like their second argument, or they raise
# Generated code's own checks and reports, which run where the primal computation runs.
declare(check_assertion, check_bound, check_out_cast, check_index, check_one_number, set_random_states, check_number_update,
        raise_exception, check_no_derivative, check_view_update, check_view_kept, derivative_lost_by, reports=True)
declare(raise_exception, check_out_cast, check_bound, check_index, check_view_update, check_number_update,
        only_raises=True)  # (run again with a segment of a checkpointed loop, they raise where they raised)


# Inputs the helpers read for their shape, their length or their sorting order only: a varied
# argument there carries no derivative (any other input without one is refused where it varies).
declare(getitem_grad, zero_derivative=("a",))
declare(stored_part, zero_derivative=("value",))
declare(if_inexact, zero_derivative=("like",))


# Checked against NumPy (tests/rules/test_rule_facts_against_numpy.py): if_inexact hands back its first
# argument itself, so generated code that writes into what it returns copies first.
declare(if_inexact, view=True)  # its first argument (not like)
# unbroadcast and unbroadcast_to hand back the adjoint itself where it has the shape already (the
# examples of equal shapes show it): two adjoints made from one are then one object.
declare(unbroadcast, unbroadcast_to, view=True)


# A view read after a write into its array, where no chain of steps takes it again
# (lower_views.ViewRetaking.by_positions): its elements are the array's at positions that view_positions
# finds where the code runs (or, no view of the array there, the value itself).
nondifferentiable(view_positions)
fresh_arrays(view_positions, positions_grad)
declare(retaken_view, may_view=True)  # the value itself where it is no view of the array
declare(retaken_view, zero_derivative=("positions",))
declare(positions_grad, zero_derivative=("positions", "base"))
declare(stale_grad, zero_derivative=("positions",))
declare(stale_grad, view=True)  # the adjoint itself where the value was no view of the array
_TAKEN = np.array([[1, 3], [5, 7]])  # a view b[:, 1::2] of a 2x4 b: its positions
_KEPT = np.full((2, 2), -1)


@adjoint(retaken_view, linear=True, examples=({"base": (2, 4), "stale": (2, 2), "positions": _TAKEN},
                                              {"base": (2, 4), "stale": (2, 2), "positions": _KEPT}))
def retaken_view_rule(out, base, stale, positions, d_out):
    d_base = positions_grad(d_out, positions, base)
    d_stale = stale_grad(d_out, positions)


@adjoint(positions_grad, linear=True, examples=({"grad": (2, 2), "positions": _TAKEN, "base": np.zeros((2, 4))},
                                                {"grad": (2, 2), "positions": _KEPT, "base": np.zeros((2, 4))}))
def positions_grad_rule(out, grad, positions, base, d_out):
    d_grad = retaken_view(d_out, zeros_like(grad), positions)


@adjoint(stale_grad, linear=True, examples=({"grad": (2, 2), "positions": _TAKEN}, {"grad": (2, 2), "positions": _KEPT}))
def stale_grad_rule(out, grad, positions, d_out):
    d_grad = stale_grad(d_out, positions)


# The Python target's adjoint products (s2s_ad/passes/number_math.py): NumPy's sin and cos of
# one number, by math's (within a few ulps of NumPy's).  Never in code read back (the source target takes no
# such pass); their rules are NumPy's functions' all the same, so that code which holds them differentiates.
@adjoint(sin_of_number, elementwise=True)
def sin_of_number_rule(out, x, d_out):
    d_x = d_out * np.cos(x)


@adjoint(cos_of_number, elementwise=True)
def cos_of_number_rule(out, x, d_out):
    d_x = -d_out * np.sin(x)
