"""Rules for shape functions: reshape, ravel, expand_dims, squeeze, concatenate, stack,
broadcast_to, pad (every mode), roll, moveaxis, swapaxes, atleast_*d, hstack and
friends, repeat, tile, flips and rot90, diag, diagonal, tril/triu, append, diff, take,
take_along_axis, sort."""
import numpy as np

from s2s_ad.kinds import same_dims, same_rank_dims
from s2s_ad.rules import adjoint, declare, fresh_arrays, method_alias, tangent
from s2s_ad.runtime import (append_grad, concatenate_grad, diag_grad, diagonal_grad, diff_grad, joined_grad,
                            diff_piece, gradient_grad, pad_grad, pad_jvp, pad_refusal, repeat_grad, sort_grad,
                            stack_grad, take_along_axis_grad, take_grad, tile_grad, unbroadcast)


@adjoint(np.reshape, linear=True, method="reshape", pack_method_args=True,
         examples=({"a": (2, 6), "shape": (3, 4)}, {"a": (2, 3), "shape": -1}), view=True)
def reshape(out, a, shape, *, d_out):
    d_a = np.reshape(d_out, np.shape(a))


@adjoint(np.ravel, linear=True, method="ravel", examples=({"a": (2, 3)},), view=True)
def ravel(out, a, d_out):
    d_a = np.reshape(d_out, np.shape(a))


method_alias("flatten", np.ravel)  # a copy where ravel may give a view: the same derivative


@adjoint(np.expand_dims, linear=True, examples=({"a": (3,), "axis": 0}, {"a": (2, 3), "axis": (0, 3)}), view=True)
def expand_dims(out, a, axis, d_out):
    d_a = np.reshape(d_out, np.shape(a))


@adjoint(np.squeeze, linear=True, method="squeeze", examples=({"a": (1, 3, 1)}, {"a": (1, 3, 1), "axis": 0}),
         view=True)
def squeeze(out, a, axis=None, *, d_out):
    d_a = np.reshape(d_out, np.shape(a))


@adjoint(np.concatenate, linear=True, examples=({"arrays": [(2, 3), (4, 3)]}, {"arrays": [(2, 3), (2, 1)], "axis": 1},
                                   {"arrays": [(3,), (2,)]},
                                   {"arrays": (3, 2)}, {"arrays": (2, 3, 4), "axis": -1}, {"arrays": (2, 3), "axis": None}))
def concatenate(out, arrays, axis=0, *, d_out):
    d_arrays = concatenate_grad(d_out, arrays, axis)


@adjoint(np.stack, linear=True, examples=({"arrays": [(3,), (3,)]}, {"arrays": [(2, 3), (2, 3), (2, 3)], "axis": 2},
                                              {"arrays": (3, 2)}, {"arrays": (2, 3, 4), "axis": 1}))
def stack(out, arrays, axis=0, *, d_out):
    d_arrays = stack_grad(d_out, arrays, axis)


@adjoint(np.broadcast_to, linear=True, examples=({"array": (3,), "shape": (2, 3)}, {"array": (2, 1), "shape": (2, 4)}),
         view=True)
def broadcast_to(out, array, shape, *, d_out):
    d_array = unbroadcast(d_out, array)


# Every mode NumPy has (a padding function as the mode is refused when the call is transformed).
_PADS = ({"array": (3, 4), "pad_width": 1}, {"array": (2, 3), "pad_width": ((1, 0), (0, 2)), "constant_values": 1.5},
         {"array": (3, 4), "pad_width": 2, "mode": "edge"}, {"array": (4,), "pad_width": (1, 2), "mode": "edge"},
         {"array": (4, 3), "pad_width": ((2, 1), (1, 3)), "mode": "reflect"},
         {"array": (3,), "pad_width": (5, 4), "mode": "reflect", "reflect_type": "odd"},
         {"array": (3, 4), "pad_width": ((1, 2), (3, 0)), "mode": "symmetric"},
         {"array": (4,), "pad_width": 6, "mode": "symmetric", "reflect_type": "odd"},
         {"array": (2, 3), "pad_width": ((3, 1), (4, 5)), "mode": "wrap"},
         {"array": (3, 4), "pad_width": 2, "mode": "mean"},
         {"array": (5, 3), "pad_width": ((1, 2), (2, 1)), "mode": "mean", "stat_length": ((2, 3), (1, 2))},
         {"array": (3, 4), "pad_width": ((2, 1), (1, 2)), "mode": "linear_ramp"},
         {"array": (4,), "pad_width": 3, "mode": "linear_ramp", "end_values": (0.5, -1.0)},
         {"array": (3, 4), "pad_width": 2, "mode": "maximum"}, {"array": (5,), "pad_width": (2, 1), "mode": "minimum"},
         {"array": (4, 5), "pad_width": ((1, 2), (2, 1)), "mode": "minimum", "stat_length": 2},
         {"array": (4, 3), "pad_width": 2, "mode": "median"}, {"array": (5, 4), "pad_width": 1, "mode": "median",
                                                               "stat_length": ((3, 2), (4, 1))},
         {"array": (2, 3, 2), "pad_width": ((1, 0), (2, 1), (0, 1)), "mode": "maximum", "stat_length": 2})


@adjoint(np.pad, examples=_PADS, result_dims=same_rank_dims, refused_arguments=pad_refusal)
def pad(out, array, pad_width, mode="constant", *, stat_length=None, constant_values=0, end_values=0,
        reflect_type="even", d_out):
    d_array = pad_grad(d_out, array, pad_width, mode, stat_length, reflect_type)


@tangent(np.pad)
def pad(out, array, pad_width, mode="constant", *, stat_length=None, constant_values=0, end_values=0,
        reflect_type="even", t_array):
    # the border's constants (constant_values, end_values) have no tangent; maximum, minimum and median
    # copy the tangent at the primal's order statistic
    t_out = pad_jvp(t_array, array, pad_width, mode, stat_length, reflect_type)


@adjoint(np.roll, linear=True, examples=({"a": (5,), "shift": 2}, {"a": (3, 4), "shift": -1, "axis": 1},
                                         {"a": (3, 4), "shift": (1, 2), "axis": (0, 1)}), result_dims=same_dims)
def roll(out, a, shift, axis=None, *, d_out):
    d_a = np.roll(d_out, np.negative(shift), axis)


@adjoint(np.moveaxis, linear=True, examples=({"a": (2, 3, 4), "source": 0, "destination": -1},
                                             {"a": (2, 3, 4), "source": (0, 1), "destination": (2, 0)}), may_view=True)
def moveaxis(out, a, source, destination, *, d_out):
    d_a = np.moveaxis(d_out, destination, source)


@adjoint(np.swapaxes, linear=True, method="swapaxes", examples=({"a": (2, 3, 4), "axis1": 0, "axis2": 2},
                                                                {"a": (2, 3), "axis1": -1, "axis2": -2}), may_view=True)
def swapaxes(out, a, axis1, axis2, *, d_out):
    d_a = np.swapaxes(d_out, axis1, axis2)


@adjoint(np.atleast_1d, linear=True, examples=({"arys": ()}, {"arys": (3,)}), may_view=True, returns_sequence=True)
def atleast_1d(out, arys, *, d_out):  # one array: several give a tuple, which has no rule
    d_arys = np.reshape(d_out, np.shape(arys))


@adjoint(np.atleast_2d, linear=True, examples=({"arys": (3,)}, {"arys": (2, 3)}), may_view=True, returns_sequence=True)
def atleast_2d(out, arys, *, d_out):
    d_arys = np.reshape(d_out, np.shape(arys))


@adjoint(np.atleast_3d, linear=True, examples=({"arys": (3,)}, {"arys": (2, 3)}), may_view=True, returns_sequence=True)
def atleast_3d(out, arys, *, d_out):
    d_arys = np.reshape(d_out, np.shape(arys))


@adjoint(np.hstack, linear=True, examples=({"tup": [(2,), (3,)]}, {"tup": [(2, 1), (2, 3)]}, {"tup": (1,)}, {"tup": (3,)},
                                         {"tup": (3, 2)}, {"tup": (2, 3, 2)}))
def hstack(out, tup, *, d_out):
    d_tup = joined_grad(d_out, tup, "hstack")


@adjoint(np.vstack, linear=True, examples=({"tup": [(3,), (3,)]}, {"tup": [(2, 3), (3,)]}, {"tup": (1,)}, {"tup": (3,)},
                                         {"tup": (3, 2)}, {"tup": (2, 3, 2)}))
def vstack(out, tup, *, d_out):
    d_tup = joined_grad(d_out, tup, "vstack")


@adjoint(np.dstack, linear=True, examples=({"tup": [(3,), (3,)]}, {"tup": [(2, 3), (2, 3)]}, {"tup": (3,)},
                                         {"tup": (3, 2)}, {"tup": (2, 3, 2)}))
def dstack(out, tup, *, d_out):
    d_tup = joined_grad(d_out, tup, "dstack")


@adjoint(np.column_stack, linear=True, examples=({"tup": [(3,), (3, 2)]}, {"tup": (3,)}, {"tup": (3, 2)},
                                                {"tup": (2, 3, 2)}))
def column_stack(out, tup, *, d_out):
    d_tup = joined_grad(d_out, tup, "column_stack")


@adjoint(np.repeat, linear=True, method="repeat", examples=(
    {"a": (3,), "repeats": 2}, {"a": (2, 3), "repeats": np.array([1, 0, 2]), "axis": 1}, {"a": (2, 2), "repeats": 3}))
def repeat(out, a, repeats, axis=None, *, d_out):
    d_a = repeat_grad(d_out, a, repeats, axis)


@adjoint(np.tile, linear=True, examples=({"A": (3,), "reps": 2}, {"A": (2, 3), "reps": (2, 1, 2)}))
def tile(out, A, reps, *, d_out):
    d_A = tile_grad(d_out, A, reps)


@adjoint(np.flip, linear=True, examples=({"m": (4,)}, {"m": (2, 3), "axis": 1}, {"m": (2, 3)}), may_view=True)
def flip(out, m, axis=None, *, d_out):
    d_m = np.flip(d_out, axis)


@adjoint(np.fliplr, linear=True, examples=({"m": (2, 3)},), may_view=True)
def fliplr(out, m, *, d_out):
    d_m = np.fliplr(d_out)


@adjoint(np.flipud, linear=True, examples=({"m": (2, 3)},), may_view=True)
def flipud(out, m, *, d_out):
    d_m = np.flipud(d_out)


@adjoint(np.rot90, linear=True, examples=({"m": (2, 3)}, {"m": (2, 3, 4), "k": 3, "axes": (2, 0)}), may_view=True)
def rot90(out, m, k=1, axes=(0, 1), *, d_out):
    d_m = np.rot90(d_out, -k, axes)


@adjoint(np.diag, linear=True, examples=({"v": (3,)}, {"v": (3,), "k": -1}, {"v": (3, 4), "k": 1}, {"v": (3, 3)}),
         may_view=True)  # of a matrix: a (read-only) view of its diagonal, showing later writes
def diag(out, v, k=0, *, d_out):
    d_v = diag_grad(d_out, v, k)


@adjoint(np.diagonal, linear=True, method="diagonal", examples=(
    {"a": (3, 4)}, {"a": (3, 4), "offset": -1}, {"a": (2, 3, 3), "offset": 1, "axis1": 1, "axis2": 2}), may_view=True)
def diagonal(out, a, offset=0, axis1=0, axis2=1, *, d_out):
    d_a = diagonal_grad(d_out, a, offset, axis1, axis2)


@adjoint(np.tril, linear=True, examples=({"m": (3, 3)}, {"m": (2, 3, 4), "k": 1}))
def tril(out, m, k=0, *, d_out):
    d_m = np.tril(d_out, k)


@adjoint(np.triu, linear=True, examples=({"m": (3, 3)}, {"m": (2, 3, 4), "k": -1}))
def triu(out, m, k=0, *, d_out):
    d_m = np.triu(d_out, k)


@adjoint(np.append, linear=True, examples=({"arr": (3,), "values": (2,)}, {"arr": (2, 3), "values": (),},
                                           {"arr": (2, 3), "values": (1, 3), "axis": 0}))
def append(out, arr, values, axis=None, *, d_out):
    d_arr = append_grad(d_out, arr, values, axis, 0)
    d_values = append_grad(d_out, arr, values, axis, 1)


@adjoint(np.diff, linear=True, examples=({"a": (5,)}, {"a": (3, 4), "n": 2, "axis": 0}, {"a": (3, 4)},
                                         {"a": (5,), "prepend": (), "append": (2,)},
                                         {"a": (3, 4), "n": 2, "axis": 0, "prepend": (1, 4)},
                                         {"a": (3, 4), "append": ()}))
def diff(out, a, n=1, axis=-1, prepend=None, append=None, *, d_out):
    # linear in a and in what is joined before and after it
    d_a = diff_piece(d_out, a, n, axis, prepend, append, 1)
    d_prepend = diff_piece(d_out, a, n, axis, prepend, append, 0)
    d_append = diff_piece(d_out, a, n, axis, prepend, append, 2)


@adjoint(np.take, linear=True, method="take", examples=(
    {"a": (5,), "indices": np.array([0, 3, 3])}, {"a": (3, 4), "indices": np.array([[1, 1], [0, 2]]), "axis": 1},
    {"a": (2, 3), "indices": 4}))
def take(out, a, indices, axis=None, *, d_out):
    d_a = take_grad(d_out, a, indices, axis)


@adjoint(np.take_along_axis, linear=True, examples=(
    {"arr": (3, 4), "indices": np.array([[0, 0], [3, 1], [2, 2]]), "axis": 1},
    {"arr": (5,), "indices": np.array([4, 4, 0]), "axis": 0}, {"arr": (2, 3), "indices": np.array([5, 0]), "axis": None}))
def take_along_axis(out, arr, indices, axis, *, d_out):
    d_arr = take_along_axis_grad(d_out, arr, indices, axis)


@adjoint(np.sort, examples=({"a": (5,)}, {"a": (3, 4), "axis": 0}, {"a": (3, 4), "axis": None}))
def sort(out, a, axis=-1, *, d_out):
    d_a = sort_grad(d_out, a, axis)


@tangent(np.sort)
def sort(out, a, axis=-1, *, t_a):
    t_out = np.take_along_axis(t_a, np.argsort(a, axis=axis, kind="stable"), axis)


fresh_arrays(np.concatenate, np.stack, np.pad)  # new arrays, never views (unlike reshape, transpose)


# Facts about operations with no rule here (see s2s_ad.rules.FACTS).
declare(np.asarray, np.asanyarray, np.real, np.imag, np.ascontiguousarray, np.asfortranarray, may_view=True)
declare(np.unique, np.histogram, np.histogram2d, np.meshgrid, np.nonzero,
        np.broadcast_arrays, np.indices, np.unravel_index, returns_sequence=True)


@adjoint(np.partition, examples=({"a": (5,), "kth": 2}, {"a": (3, 4), "kth": 1, "axis": 0},
                                 {"a": (3, 4), "kth": (0, 2)}, {"a": (2, 3, 4), "kth": -1, "axis": 1}))
def partition(out, a, kth, axis=-1, *, d_out):
    # out is a permutation of a along axis: the k-th smallest of each goes to the k-th smallest of the
    # other (NumPy leaves the order within each side of kth unspecified, so it is read off out itself)
    d_a = sort_grad(np.take_along_axis(d_out, np.argsort(out, axis=axis, kind="stable"), axis), a, axis)


@tangent(np.partition)
def partition_tangent(out, a, kth, axis=-1, *, t_a):
    t_out = sort_grad(np.take_along_axis(t_a, np.argsort(a, axis=axis, kind="stable"), axis), out, axis)



def _pieces(indices_or_sections: "int | list[int]") -> int:
    """How many pieces ``np.split(ary, indices_or_sections)`` returns (its ``items``)."""
    if isinstance(indices_or_sections, (int, np.integer)):
        return int(indices_or_sections)
    return len(indices_or_sections) + 1


# The split family returns a list of pieces; its adjoint d_out holds the pieces' adjoints (zeros
# for a piece not used), and the pieces tile the input along the axis, so d_ary is them joined
# again.  Forward mode splits the tangent the same way (linear).
_SPLITS = ({"ary": (6,), "indices_or_sections": 3}, {"ary": (4, 3), "indices_or_sections": [1, 3]},
           {"ary": (2, 6, 3), "indices_or_sections": 2, "axis": -2},
           {"ary": (3, 4), "indices_or_sections": [3], "axis": -1})


@adjoint(np.split, linear=True, examples=_SPLITS, items=_pieces, returns_sequence=True, may_view=True)
def split(out, ary, indices_or_sections, axis=0, *, d_out):
    d_ary = np.concatenate(d_out, axis)


@adjoint(np.array_split, linear=True, items=_pieces, returns_sequence=True, may_view=True, examples=(
    {"ary": (7,), "indices_or_sections": 3}, {"ary": (2, 5, 3), "indices_or_sections": 2, "axis": -2},
    {"ary": (4, 3), "indices_or_sections": [1, 2]}))
def array_split(out, ary, indices_or_sections, axis=0, *, d_out):
    d_ary = np.concatenate(d_out, axis)


@adjoint(np.hsplit, linear=True, items=_pieces, returns_sequence=True, may_view=True, examples=(
    {"ary": (6,), "indices_or_sections": 2}, {"ary": (3, 4), "indices_or_sections": [1]},
    {"ary": (2, 4, 3), "indices_or_sections": 2}))
def hsplit(out, ary, indices_or_sections, *, d_out):
    d_ary = np.concatenate(d_out, min(np.ndim(ary), 2) - 1)  # columns, or a vector's items


@adjoint(np.vsplit, linear=True, items=_pieces, returns_sequence=True, may_view=True, examples=(
    {"ary": (4, 3), "indices_or_sections": 2}, {"ary": (5, 2, 3), "indices_or_sections": [2, 4]}))
def vsplit(out, ary, indices_or_sections, *, d_out):
    d_ary = np.concatenate(d_out, 0)


@adjoint(np.dsplit, linear=True, items=_pieces, returns_sequence=True, may_view=True, examples=(
    {"ary": (2, 3, 4), "indices_or_sections": 2}, {"ary": (2, 2, 5, 1), "indices_or_sections": [1, 3]}))
def dsplit(out, ary, indices_or_sections, *, d_out):
    d_ary = np.concatenate(d_out, 2)


def _axes_given(axis: "int | tuple | None") -> int:
    """How many arrays ``np.gradient(f, axis=axis)`` returns where ``axis`` says (several axes)."""
    return len(axis) if isinstance(axis, (tuple, list)) and len(axis) > 1 else 0


# np.gradient is linear in f for fixed spacing (one number, or the coordinates along the one axis);
# several spacings, one per axis, are not taken by this rule and so are refused.
@adjoint(np.gradient, linear=True, items=_axes_given, returns_sequence=True, examples=(
    {"f": (5,)}, {"f": (5,), "spacing": 0.5}, {"f": (3, 4)}, {"f": (3, 4), "axis": -1},
    {"f": (2, 3, 4), "axis": (0, -1)}, {"f": (6,), "spacing": np.array([0.0, 0.3, 0.7, 1.2, 1.4, 2.0])},
    {"f": (4, 5), "axis": 0, "edge_order": 2}, {"f": (2, 4, 3), "spacing": 0.25, "axis": -2}))
def gradient(out, f, spacing=1.0, *, axis=None, edge_order=1, d_out):
    d_f = gradient_grad(d_out, f, spacing, axis, edge_order)


@adjoint(gradient_grad, linear=True, examples=(
    {"grad": (5,), "f": np.zeros(5)}, {"grad": (2, 3, 4), "f": np.zeros((3, 4))},
    {"grad": (3, 4), "f": np.zeros((3, 4)), "spacing": 0.5, "axis": 1, "edge_order": 2}))
def gradient_grad_rule(out, grad, f, spacing=1.0, axis=None, edge_order=1, *, d_out):
    d_grad = np.asarray(np.gradient(d_out, spacing, axis=axis, edge_order=edge_order))  # D's transpose's adjoint: D


declare(gradient_grad, zero_derivative=("f",))  # f is read for its shape
