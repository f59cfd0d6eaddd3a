"""Functions that share memory between names and write through one of them (issue 31, "one memory
model"): each reads, after the write, a view it took before it, carried in a tuple, a dict, a record,
an object, a helper's result or a split; or writes through a view (a column, ``.T``, a reshape).
NumPy shows the write through every name; so must the derivative.  ``x`` has four elements."""
from __future__ import annotations

from collections import namedtuple
from dataclasses import dataclass

import numpy as np

Pair = namedtuple("Pair", "a b")


@dataclass
class Halves:
    lo: np.ndarray
    hi: np.ndarray


class Box:
    def __init__(self, v):
        self.v = v


def split_in_two(v):
    return v[:2], v[2:]


def split_as_list(v):
    return [v[:2], v[2:]]


def helper_views_then_write(x):
    b = x * 1.0
    lo, hi = split_in_two(b)
    b[0] = 5.0 * x[1]
    return np.sum(lo * lo) + np.sum(hi * x[:2])


def helper_list_of_views_then_write(x):
    b = np.sin(x)
    lo, hi = split_as_list(b)
    b[3] = x[0] * x[2]
    return np.sum(lo * hi)


def lambda_views_then_write(x):
    ends = lambda v: (v[:1], v[-1:])
    b = x * 2.0
    first, last = ends(b)
    b[-1] = np.cos(x[1])
    return float(first[0] * last[0])


def nested_def_views_then_write(x):
    def middle(v):
        return v[1:3]
    b = x ** 2
    m = middle(b)
    b[1:3] = m * x[:2]
    return np.sum(m * b[:2])


def tuple_bound_then_unpacked(x):
    b = x * 1.0
    parts = (b[:2], b[2:])
    lo, hi = parts
    b[0] = 3.0 * x[3]
    return np.sum(lo * lo) + np.sum(hi * x[:2])


def rows_tuple_then_row_written(x):
    B = np.outer(x[:2], x[2:]) * 1.0
    rows = (B[0], B[1])
    B[0] = rows[1] * 2.0
    return np.sum(B * B) + np.sum(rows[0] * x[:2])


def dict_holds_view(x):
    b = x * 1.0
    d = {"lo": b[:2], "hi": b[2:]}
    b[0] = x[2] ** 2
    return np.sum(d["lo"] * x[:2]) + np.sum(d["hi"])


def namedtuple_holds_views(x):
    b = x * 1.0
    p = Pair(b[:2], b[2:])
    b[1] = np.sin(x[0])
    return np.sum(p.a * p.b)


def dataclass_holds_views(x):
    b = np.exp(x)
    h = Halves(b[:2], b[2:])
    b[2] = x[1] * x[3]
    return np.sum(h.lo * h.hi)


def object_holds_view(x):
    b = x * 3.0
    box = Box(b[1:])
    b[1] = x[0] * x[0]
    return np.sum(box.v * box.v)


def split_then_write(x):
    b = x * 1.0
    lo, hi = np.split(b, 2)
    b[0] = x[1] * x[2]
    return np.sum(lo * hi)


def array_split_then_write(x):
    b = x + 0.5
    head, tail = np.array_split(b, [1])
    b[2] = x[0] * 4.0
    return np.sum(head) * np.sum(tail ** 2)


def reshape_rows_then_write(x):
    b = x * 1.0
    M = b.reshape(2, 2)
    r0, r1 = M
    b[3] = x[0] * 7.0
    return np.sum(r0 * r1)


def slice_of_slice_then_write(x):
    b = x * 1.0
    tail = b[1:]
    end = tail[1:]
    b[3] = x[0] * x[1]
    return np.sum(end * end)


def state_written_in_a_loop(x):
    state = x * 1.0
    lo = state[:2]
    for _ in range(3):
        state[:2] = state[:2] * 0.5 + state[2:]
    return np.sum(lo * state[2:])


def column_view_written(x):
    B = np.outer(x[:2], x[:2]) * 1.0
    col = B[:, 0]
    col[1:] = x[3] * 3.0
    return np.sum(B * B)


def transpose_written(x):
    B = np.outer(x[:2], x[2:]) * 1.0
    T = B.T
    T[0, 1] = x[0] * 2.0
    return np.sum(B * x[0])


def reshape_written(x):
    b = x * 1.0
    R = b.reshape(2, 2)
    R[1, 1] = x[0] ** 3
    return np.sum(b * b)


def reshape_of_new_array_written(x):
    B = np.zeros(4).reshape(2, 2)
    B[0, 1] = x[0] * x[1]
    B[1, 0] = x[2]
    return np.sum(B * B) + B[0, 1]


def transpose_of_new_array_written(x):
    M = np.outer(x, x).T
    M[0, 1] = x[2] ** 2
    return np.sum(M * M)


def row_view_updated_in_a_loop(x):
    B = np.outer(x[:2], x[2:]) * 1.0
    row = B[1]
    for k in range(2):
        row[k:] = row[k:] * x[k]
    return np.sum(B ** 2)


def tuple_assignment_of_copies(x):
    b = x * 1.0
    b[:2], b[2:] = b[2:] * 1.0, b[:2] * 1.0
    return np.sum(b * np.arange(4.0))


def written_through_view_read_through_tuple(x):
    b = x * 1.0
    pair = (b[:2], b[2:])
    view = b[1:3]
    view[0] = x[3] * x[3]
    return np.sum(pair[0] * pair[1])


FUNCTIONS = [
    helper_views_then_write, helper_list_of_views_then_write, lambda_views_then_write, nested_def_views_then_write,
    tuple_bound_then_unpacked, rows_tuple_then_row_written, dict_holds_view, namedtuple_holds_views,
    dataclass_holds_views, object_holds_view, split_then_write, array_split_then_write, reshape_rows_then_write,
    slice_of_slice_then_write, state_written_in_a_loop, column_view_written, transpose_written, reshape_written,
    reshape_of_new_array_written, transpose_of_new_array_written, row_view_updated_in_a_loop,
    tuple_assignment_of_copies, written_through_view_read_through_tuple,
]


def first_and_rest(v):
    return [v[:1], v[1:]]


def ragged_pieces_from_a_helper(x):
    head, rest = first_and_rest(x * 2.0)
    return np.sum(head) * np.sum(rest ** 2)


def ragged_pieces_chosen_in_a_branch(x):
    b = x * 1.0
    lo, hi = (b[:1], b[1:]) if x[0] > 0 else (b[1:], b[:1])
    return np.sum(lo) * np.sum(hi ** 2)


def views_chosen_in_a_branch_then_write(x):
    b = x * 1.0
    lo, hi = (b[:2], b[2:]) if x[0] > 0 else (b[2:], b[:2])
    b[0] = x[3] * 2.0
    return np.sum(lo * hi)


FUNCTIONS += [ragged_pieces_from_a_helper, ragged_pieces_chosen_in_a_branch, views_chosen_in_a_branch_then_write]


def reshape_of_fortran_array(x):
    b = x * 1.0
    flat = b.reshape(4)
    b[0, 0] = x[1, 1] ** 2
    return np.sum(flat * flat)


# In-place updates of an array another name holds: NumPy changes the one array every name sees


def identity_helper(v):
    return v




def update_held_by_dict(x):
    b = x * 1.0
    d = {"a": b}
    b += x ** 2
    return np.sum(d["a"] * x)


def update_held_by_namedtuple(x):
    b = x * 1.0
    p = Pair(b, x)
    b *= x
    return np.sum(p.a)


def update_seen_by_view_in_loop(x):
    b = x * 1.0
    c = b[1:]
    for _ in range(3):
        b += x * 0.1
    return np.sum(c * c)


def update_held_by_list_in_loop(x):
    b = x * 1.0
    held = [b]
    for _ in range(2):
        b -= x * x
    return np.sum(held[0] * x)


def update_held_by_dataclass(x):
    b = x * 2.0
    h = Halves(b, x)
    b /= 1.0 + x * x
    return np.sum(h.lo * b)


def update_held_by_object(x):
    b = np.sin(x)
    box = Box(b)
    b -= x[0] * x
    return np.sum(box.v ** 2)


def update_of_same_array_under_two_names(x):
    b = x * 1.0
    a = b
    b *= x
    return np.sum(a * x)


def update_seen_through_helper_result(x):
    b = x * 1.0
    r = identity_helper(b)
    b += np.cos(x)
    return np.sum(r * r)


def update_in_while_loop_seen_by_view(x):
    b = x * 1.0
    tail = b[2:]
    k = 0
    while k < 3:
        b *= 0.9 + 0.1 * x
        k += 1
    return np.sum(tail * x[:2])


def update_of_number_keeps_the_container(x):
    s = x[0] * 1.0
    d = {"s": s}
    s += x[1] ** 2
    return d["s"] * s


def update_of_argument_held_by_dict(x):
    d = {"a": x}
    x += 1.0
    return np.sum(d["a"])


def update_in_while_loop_seen_by_reshape(x):
    b = x * 1.0
    v = b.reshape(2, 2)  # its rank is the shape's length: b is an array, so b -= ... writes into it
    k = 0
    while k < 3:
        b -= 0.1 * np.cos(v[0, 1] * x)
        k += 1
    return np.sum(v ** 2)


def update_in_loop_seen_by_transposed_reshape(x):
    b = x * 1.0
    v = b.reshape(2, 2).T
    for _ in range(2):
        b *= 1.1 + 0.1 * np.sin(v[1, 0])
    return np.sum(v ** 2) + np.sum(b * x)


def two_updates_of_an_array_two_containers_hold(x):
    b = x * 2.0
    d = {"a": b}
    p = Pair(b, x)
    b += x ** 2  # once a write into the array d and p hold, b is still that array for the next update
    b *= 1.5
    return np.sum(d["a"] * p.a) + np.sum(p.b)


def two_updates_in_a_loop_seen_by_a_view(x):
    b = x * 1.0
    c = b[1:]
    for _ in range(3):
        b *= 0.9
        b += 0.1 * x
    return np.sum(c ** 2)


# Updates through the container's own item or attribute (d["k"] += v, obj.v += v): Python calls the
# item's __iadd__, so NumPy changes the array every other name sees, then stores it back.
def item_of_dict_viewing_an_array_updated(x):
    b = x * 1.5
    d = {"v": b[::2]}
    d["v"] *= x[::2]
    return np.sum(b * x)


def item_of_dict_held_by_a_name_updated(x):
    a = np.zeros(2)
    d = {"v": a}
    d["v"] += x[:2]
    return np.sum(a * x[2:])


def row_held_by_dict_updated(x):
    m = np.outer(x[:2], x[1:])
    d = {"row": m[1]}
    d["row"] -= x[:3]
    return np.sum(m ** 2)


def numbers_and_array_of_a_dict_updated_in_a_loop(x):
    d = {"s": 0.0, "acc": np.zeros(2)}
    for i in range(2):
        d["s"] += x[i] ** 2
        d["acc"] += x[2 * i:2 * i + 2] * (i + 1.0)
    return d["s"] + np.sum(d["acc"] ** 2)


def attribute_viewing_an_array_updated(x):
    b = x * 2.0
    box = Box(b[1:3])
    box.v += x[:2]
    return np.sum(b ** 2)


def attribute_held_by_a_name_updated(x):
    a = np.sin(x)
    box = Box(a)
    box.v *= 2.0
    return np.sum(a * x)


def attribute_seen_by_a_view_updated_in_a_loop(x):
    box = Box(np.ones(4))
    tail = box.v[1:]
    for _ in range(2):
        box.v += x
        box.v *= x
    return np.sum(tail) + np.sum(box.v)


UPDATES_THROUGH_HOLDERS = [item_of_dict_viewing_an_array_updated, item_of_dict_held_by_a_name_updated,
                           row_held_by_dict_updated, numbers_and_array_of_a_dict_updated_in_a_loop,
                           attribute_viewing_an_array_updated, attribute_held_by_a_name_updated]


# An array the function made (np.ones: it starts out constant), viewed before a loop that only updates it
# in place: every iteration writes the one array, and the view shows each write.
def made_array_viewed_then_updated_in_a_loop(x):
    b = np.ones(4)
    tail = b[1:]
    for _ in range(2):
        b += x
        b *= x
    return np.sum(tail) + np.sum(b)


def view_read_in_a_loop_before_each_update(x):
    b = np.ones(4)
    head = b[:2]
    s = 0.0
    for i in range(3):
        s = s + np.sum(head ** 2)
        b += x
    return s


def row_of_a_made_matrix_updated_in_nested_loops(x):
    m = np.ones((2, 4))
    row = m[1]
    for i in range(2):
        for j in range(2):
            m += np.outer(x[:2], x) * (i + j + 1.0)
    return np.sum(row ** 2)


def made_array_viewed_then_updated_in_a_while_loop(x):
    b = np.ones(4)
    head = b[:3]
    k = 0
    while k < 3:
        b *= x
        k += 1
    return np.sum(head)


def made_array_held_by_a_dict_updated_in_a_branch_and_after_it(x):
    b = np.full(4, 0.5)
    held = {"k": b}
    if x[0] > 0:
        b += x[2] * x
    b *= x
    return np.sum(held["k"] ** 2)


def same_array_bound_on_both_paths_then_updated(x):
    b = np.ones(4)
    v = b[1:]
    if x[0] > 0:
        c = b
    else:
        c = b
    c += x
    return np.sum(v ** 2)


UPDATES_IN_LOOPS = [made_array_viewed_then_updated_in_a_loop, view_read_in_a_loop_before_each_update,
                    row_of_a_made_matrix_updated_in_nested_loops, made_array_viewed_then_updated_in_a_while_loop,
                    made_array_held_by_a_dict_updated_in_a_branch_and_after_it,
                    same_array_bound_on_both_paths_then_updated]


def view_of_an_array_updated_then_replaced_in_a_loop(x):
    b = np.ones(4)
    head = b[:2]
    for _ in range(2):
        b += x  # the first iteration writes the array head views, the second a new one
        b = b * 2.0
    return np.sum(head) + np.sum(b)


def view_of_a_dict_item_updated_in_a_loop(x):
    d = {"v": np.ones(4)}
    tail = d["v"][1:]
    for _ in range(2):
        d["v"] += x
    return np.sum(tail)


def views_of_arrays_made_in_either_branch_then_updated(x):
    if x[0] > 0:
        b = np.zeros(4)
        v = b[1:]
    else:
        b = np.ones(4)
        v = b[1:]
    b += x  # b is one of two arrays, v a view of one of them: refused where v is read
    return np.sum(v ** 2)


def array_a_list_holds_on_some_paths_updated(x):
    b = np.full(4, 0.5)
    holder = [b]
    if x[0] < 0:
        b = b * 2.0
    b *= x  # the array holder holds where x[0] >= 0, a new one else
    return np.sum(holder[0] ** 2)


def array_written_through_a_view_after_a_branch_that_may_replace_it(x):
    b = np.ones(4)
    v = b.reshape(2, 2)
    if x[0] > 0:
        b = b * 2.0
    v[0] = np.exp(0.3 * x[:2])
    return np.sum(b * b)  # b is the array v views on one path only


def item_held_twice_by_a_dict_updated(x):
    a = np.ones(4) * x[0]
    d = {"u": a, "w": a}
    d["u"] += x
    return np.sum(d["w"] * x)


UPDATES = [two_updates_of_an_array_two_containers_hold, two_updates_in_a_loop_seen_by_a_view,
           update_in_while_loop_seen_by_reshape, update_in_loop_seen_by_transposed_reshape, update_held_by_dict, update_held_by_namedtuple, update_seen_by_view_in_loop, update_held_by_list_in_loop,
           update_held_by_dataclass, update_held_by_object, update_of_same_array_under_two_names,
           update_seen_through_helper_result, update_in_while_loop_seen_by_view, update_of_number_keeps_the_container]
FUNCTIONS += UPDATES + UPDATES_THROUGH_HOLDERS + UPDATES_IN_LOOPS


def view_chosen_by_an_if_statement_then_write(x):
    b = x * 1.0
    if x[0] > 0:
        v = b[:2]
    else:
        v = b[2:]
    b[0] = x[3] * 5.0
    return np.sum(v * v)


def view_or_other_array_chosen_then_write(x):
    b = x * 1.0
    other = x[1:3] * 2.0
    v = b[1:3] if x[0] > 0 else other
    b[1] = x[2] * x[3]
    return np.sum(v * x[:2])


def view_or_other_array_chosen_by_an_if_statement(x):
    b = np.cos(x)
    if x[1] > 0:
        v = b[:3]
    else:
        v = x[1:] ** 2
    b[2] = x[0] * 4.0
    return np.sum(v * v)


FUNCTIONS += [view_chosen_by_an_if_statement_then_write, view_or_other_array_chosen_then_write,
              view_or_other_array_chosen_by_an_if_statement]


# Views whose geometry the call's arguments fix (np.flip, np.rot90, np.diagonal, np.swapaxes,
# np.moveaxis) are taken again after a write into their base, as NumPy shows it through them.
def flip_read_after_write(x):
    b = x * 1.0
    f = np.flip(b)
    b[0] = x[1] * 4.0
    return np.sum(f * np.arange(4.0))


def rot90_read_after_write(x):
    m = np.outer(x[:2], x[2:])
    r = np.rot90(m)
    m[0, 1] = x[0] * 9.0
    return np.sum(r * np.array([[1.0, 2.0], [3.0, 4.0]]))


def diagonal_read_after_write(x):
    m = np.outer(x[:2], x[2:])
    d = np.diagonal(m)
    m[1, 1] = x[0] ** 2
    return np.sum(d * d)


def swapped_and_moved_read_after_write_in_a_loop(x):
    m = np.outer(x[:2], x[2:]).reshape(1, 2, 2) * 1.0
    s = np.swapaxes(m, 1, 2)
    t = np.moveaxis(m, 0, -1)
    for i in range(2):
        m[0, i, 0] = m[0, i, 1] * x[i]
    return np.sum(s[0, 0] * x[:2]) + np.sum(t[:, :, 0] ** 2)


def flipped_pieces_in_a_tuple_then_write(x):
    b = x * 1.0
    pair = (np.flipud(b[:2]), np.fliplr(np.outer(b[2:], b[2:])))
    b[1] = x[3] * x[2]
    return np.sum(pair[0] * x[2:]) + np.sum(pair[1])


GEOMETRY_VIEWS = [flip_read_after_write, rot90_read_after_write, diagonal_read_after_write,
                  swapped_and_moved_read_after_write_in_a_loop, flipped_pieces_in_a_tuple_then_write]
FUNCTIONS += GEOMETRY_VIEWS


# Writes through a piece of a split: each piece is its array indexed where the split cut it, so a
# store into a piece is a store into the array (NumPy's pieces are views).
def write_through_a_split_piece(x):
    b = x * 1.0
    lo, hi = np.split(b, 2)
    lo[0] = 5.0 * x[1]
    hi[1:] = lo[1:] * x[3]
    return np.sum(b * x) + np.sum(hi ** 2)


def write_through_array_split_pieces_in_a_loop(x):
    M = np.outer(x, x[:3]) * 1.0
    parts = np.array_split(M, [1, 3], axis=0)
    top, middle, bottom = parts
    for j in range(3):
        middle[:, j] = middle[:, j] * x[j] + top[0, j]
    bottom[0] = np.sin(middle[1])
    return np.sum(M * M)


def write_through_column_pieces(x):
    M = np.outer(x[:2], x) * 1.0
    left, right = np.hsplit(M, 2)
    right[1, 0] = left[0, 1] * x[2]
    up, down = np.vsplit(M, 2)
    down[0, 3] = np.cos(up[0, 0])
    return np.sum(M ** 2) + np.sum(left * right)


def write_through_a_piece_read_after(x):
    b = x * 1.0
    pieces = np.split(b, [1, 3])
    first = pieces[0]
    rest = pieces[2]
    rest[0] = first[0] * x[2]
    return np.sum(b ** 3) + np.sum(pieces[1] * b[1:3])


SPLIT_WRITES = [write_through_a_split_piece, write_through_array_split_pieces_in_a_loop, write_through_column_pieces,
                write_through_a_piece_read_after]
FUNCTIONS += SPLIT_WRITES


def write_through_a_flip(x):
    b = x * 1.0
    f = np.flip(b)
    f[0] = x[1] * 2.0  # writes b[3]: a write through a reversed view, refused
    return np.sum(b * b)


def copy_joined_then_written(x):
    # b = x * 1.0 is a new array; joined over the if and written after it: its tangent must not be
    # the caller's tangent of x (a soak of the view fuzzer found jvp writing into it, seed 2,007,965)
    b = x * 1.0
    if x[0] > 0:
        c = x[1] * 2.0
    else:
        b *= np.sin(x[2]) * x
        c = 1.0
    for t in range(2):
        b[2:4] = b[2:4] * np.sin(x[1])
    return np.sum(b * b) + c


# Views taken in a loop by the loop's index (row = B[i]) and written through, or read after a write into
# their array in the same iteration: B[i] by the index of a range is taken again as NumPy shows it.
def row_by_loop_index_written(x):
    B = np.outer(x, x[:2]) * 1.0
    for i in range(3):
        row = B[i]
        row[0] = row[1] * x[i + 1]
    return np.sum(B * B)


def row_by_loop_index_read_after_a_write(x):
    B = np.outer(x[:3], x) * 1.0
    total = 0.0
    for i in range(3):
        row = B[i]
        B[i, 1:3] = np.sin(row[:2]) * x[3]
        total = total + np.sum(row * x)
    return total


def slab_of_a_cube_by_loop_index_written(x):
    C = np.outer(x, x).reshape(2, 2, 4) * 1.0
    for k in range(2):
        slab = C[k]
        slab[1, :] = slab[0, :] * x[k]
        slab[0, 1:] = x[2] ** 2
    return np.sum(C * C) + np.sum(C[1])


def row_by_loop_index_updated_then_read(x):
    B = np.outer(x[:2], x) * 1.0
    out = 0.0
    for i in range(2):
        row = B[i]
        row *= x[i]
        row[1] = np.cos(row[0])
        out = out + np.sum(row) * np.sum(B[i])
    return out


def rows_of_a_loop_over_the_array_written(x):
    out = np.outer(x[:2], x) * 1.0
    for row in out:  # row is out[k], k walking range(len(out))
        row[0] = row[1] * x[0]
    return np.sum(out * out)


LOOP_INDEX_VIEWS = [rows_of_a_loop_over_the_array_written, row_by_loop_index_written, row_by_loop_index_read_after_a_write,
                    slab_of_a_cube_by_loop_index_written, row_by_loop_index_updated_then_read]


def element_of_a_vector_by_loop_index_written(x):
    b = x * 1.0
    for i in range(2):
        e = b[i]
        e[...] = 3.0  # NumPy: a number (a copy) has no items to write: TypeError
    return np.sum(b)


# Stores into an element of an element (a[i][j] = v): the outer element is the object Python's own
# evaluation of the target takes (a view, a row, an array a dict holds, or a copy whose write is lost).
def store_through_a_list_of_views(x):
    b = x * 1.0
    parts = [b[:2], b[2:]]
    parts[1][0] = 5.0 * b[0]
    return np.sum(b ** 2) + parts[0][1] * parts[1][0]


def update_through_rows_in_loops(x):
    A = np.outer(x[:3], x[1:])
    for i in range(3):
        for j in range(3):
            A[i][j] += np.sin(x[(i + j) % 4]) * A[j][i]
    return np.sum(A * A)


def store_into_a_copy_is_lost(x):
    A = np.outer(x[:3], x[:3])
    A[[0, 2]][0] = 100.0 * x[1]
    return np.sum(A ** 2)


def store_into_an_array_a_dict_holds(x):
    d = {"w": x * 2.0, "c": x[0]}
    d["w"][1] = 3.0 * x[0] * d["c"]
    return np.sum(d["w"] ** 3)


def store_three_deep(x):
    T = np.zeros((2, 2, 2))
    T[1][0][1] = x[0] * x[1]
    T[0][1][0] = np.cos(x[2])
    T[1][0][1] *= x[3]
    return np.sum(np.tanh(T) * x[3])


def store_through_a_row_in_a_branch(x):
    M = np.stack([x, x ** 2])
    if x[0] > 0:
        M[1][2] = M[0][3] * 4.0
    else:
        M[0][1] = -M[1][1]
    return np.sum(M * M)


def row_bound_then_stored_through_the_matrix(x):
    M = np.stack([x, 2.0 * x])
    r = M[1]
    M[1][2] = x[0] ** 3
    return np.sum(r * r) + M[1, 2]


NESTED_STORES = [store_through_a_list_of_views, update_through_rows_in_loops, store_into_a_copy_is_lost,
                 store_into_an_array_a_dict_holds, store_three_deep, store_through_a_row_in_a_branch,
                 row_bound_then_stored_through_the_matrix]
FUNCTIONS += NESTED_STORES


# A helper that updates its argument in place (v *= c; v[0] = c) and returns it: NumPy changes the
# caller's array, which every name holding it sees; the result is that same array.
def scaled_in_place(v, c):
    v *= c
    return v


def first_set(v, c):
    v[0] = c
    return v


def scaled_twice_in_a_loop(v, c):
    for _ in range(2):
        v *= c
    return v


def copied_then_scaled(v, c):
    v = v.copy()
    v *= c
    return v


def helper_updates_the_array_its_result_is(x):
    b = x * 1.0
    out = scaled_in_place(b, x[1])
    return np.sum(b * x) + np.sum(out)


def helper_result_updated_again(x):
    b = x * 1.0
    out = scaled_in_place(b, x[1])
    out += 1.0
    return np.sum(b * x)


def helper_result_rebinds_the_name(x):
    b = x * 1.0
    b = scaled_in_place(b, x[0])
    b = scaled_twice_in_a_loop(b, x[1])
    return np.sum(b * x)


def helper_stores_into_its_argument(x):
    b = x * 1.0
    first_set(b, x[2])
    out = first_set(b, x[3] * x[0])
    return np.sum(b * x) + np.sum(out)


def helper_updates_a_view_it_is_given(x):
    b = x * 1.0
    r = scaled_in_place(b[1:3], x[0])
    return np.sum(b * x) + np.sum(r)


def helper_copies_first(x):
    b = x * 1.0
    out = copied_then_scaled(b, x[1])
    return np.sum(b * x) + np.sum(out * out)


def helper_given_a_number(x):
    s = x[0] * 1.0
    out = scaled_in_place(s, x[1])
    out += 1.0
    return s * out


HELPERS_UPDATING_ARGUMENTS = [helper_updates_the_array_its_result_is, helper_result_updated_again,
                              helper_result_rebinds_the_name, helper_stores_into_its_argument,
                              helper_updates_a_view_it_is_given, helper_copies_first, helper_given_a_number]
FUNCTIONS += HELPERS_UPDATING_ARGUMENTS


def added_recursively(v, k):
    v += 1.0
    if k > 0:
        return added_recursively(v, k - 1)
    return v


def recursive_helper_updates_its_argument(x):
    b = x * 1.0
    out = added_recursively(b, 2)
    return np.sum(b * x) + np.sum(out)


def helper_updates_the_argument_it_is_passed(x):
    return np.sum(scaled_in_place(x, 2.0))


def first_item_scaled(items, c):
    items[0] = items[0] * c
    return items


def grown(items, v):
    items.append(v)
    return 0.0


def helper_stores_into_a_list_it_is_given(x):
    items = [x * 1.0, x[1]]
    first_item_scaled(items, x[3])  # (its result dropped: the list changed in place is what matters)
    return np.sum(items[0] * x)


def helper_grows_a_list_it_is_given(x):
    items = [x[0]]
    z = grown(items, x[1] * 2.0)
    return sum(items) * x[2]


# Helpers that only change what they are given (no return: Python's None), called as statements.
def normalise(v):
    v /= np.sum(v)


def clip_first(v, c):
    if v[0] > c:
        v[0] = c


def scale_rows(M, s):
    for i in range(M.shape[0]):
        M[i] *= s[i]


def normalised_in_place(x):
    b = np.exp(x)
    normalise(b)
    return np.sum(b * np.arange(4.0))


def clipped_in_place(x):
    b = x * 2.0
    clip_first(b, 0.4)
    return np.sum(b ** 2)


def rows_scaled_in_place(x):
    M = np.outer(x, x[:2]).T * 1.0
    scale_rows(M, x[2:])
    return np.sum(M ** 2)


def view_normalised_in_place(x):
    b = np.exp(x)
    normalise(b[1:3])
    return np.sum(b * x)


def number_given_to_normalise(x):
    s = x[0] * 1.0
    normalise(s)  # (a number: /= rebinds the helper's own name, s is unchanged)
    return s * x[1]


HELPERS_CHANGING_ONLY = [normalised_in_place, clipped_in_place, rows_scaled_in_place, view_normalised_in_place,
                         number_given_to_normalise]
FUNCTIONS += HELPERS_CHANGING_ONLY


def argument_normalised(x):
    normalise(x)
    return np.sum(x)
