"""Lists grown by ``append`` and ``+=``, as users write them (issue 31's memory model for lists).

``GROWN``: lists no other name holds while they grow; s2s_ad differentiates them (the generated code
grows each list in place where the memory model for lists proves that no one sees the difference).
``HELD``: a list that another name, a container or the caller holds while it grows; Python's other
holder sees it grow, s2s_ad's lists are values, so each is refused before anything runs (before the
refusal, each gave a wrong number, silently).
"""
import numpy as np

import s2s_ad


def squares_in_a_loop(x):
    out = []
    for i in range(len(x)):
        out.append(x[i] ** 2)
    return np.sum(np.array(out) * x)


def length_read_each_trip(x):
    a = []
    s = 0.0
    for i in range(len(x)):
        n = len(a)
        a.append(x[i] * (n + 1.0))
        s = s + np.sum(np.array(a)) * x[i]
    return s


def two_lists_side_by_side(x):
    a = []
    b = []
    for i in range(len(x)):
        a.append(x[i] ** 2)
        b.append(np.sin(x[i]))
    return np.sum(np.array(a) * np.array(b))


def appended_in_branches(x):
    a = []
    for i in range(len(x)):
        if x[i] > 0.5:
            a.append(x[i] ** 2)
        else:
            a.append(np.cos(x[i]))
    return np.sum(np.array(a) ** 2)


def rows_stacked(x):
    rows = []
    for i in range(3):
        rows.append(x * (i + 1.0))
    return np.sum(np.stack(rows) ** 2)


def recurrence_reading_the_last_item(x):
    a = [x[0]]
    for i in range(1, len(x)):
        a.append(a[i - 1] * x[i] + 1.0)
    return a[-1]


def grown_in_a_while_loop(x):
    a = []
    i = 0
    while i < len(x):
        a.append(np.exp(x[i]))
        i += 1
    return np.sum(np.array(a))


def grown_by_plus_equals(x):
    a = [x[0]]
    for i in range(1, len(x)):
        a += [x[i] * a[-1]]
    return np.sum(np.array(a))


def a_copy_grown_apart(x):
    a = [x[0]]
    b = list(a)
    b.append(x[1])
    a.append(x[2] * 5)
    return np.sum(np.array(a)) + 2 * np.sum(np.array(b))


def a_new_list_per_outer_trip(x):
    total = 0.0
    for j in range(3):
        a = []
        for i in range(len(x)):
            a.append(x[i] * (j + 1))
        total = total + np.sum(np.array(a) ** 2)
    return total


def named_again_once_complete(x):
    a = []
    for i in range(len(x)):
        a.append(x[i] ** 2)
    b = a
    return np.sum(np.array(b)) * np.sum(np.array(a))


def _with_item(items, v):
    return items + [v]


def built_by_a_helper_returning_a_new_list(x):
    a = []
    for i in range(len(x)):
        a = _with_item(a, x[i] ** 2)
    return np.sum(np.array(a))


def plus_equals_after_an_append_loop(x):
    # (lowering took a += [...] for a write into the array np.sin made, which the list holds: a crash)
    a = [x[0]]
    for i in range(4):
        a.append(np.sin(x[0]))
    for i in range(2):
        a += [np.sin(x[2])]
    return sum(a)


def array_updated_after_a_lambda(x):
    # (not a list: the lambda called where it is made became a def before this statement, and the check that
    # tells a list's += from an array's missed b's first binding, so b += ... lost the view v's update)
    b = np.sin(x)
    v = (lambda t: t[:2])(b)
    b += x * 2.0
    return np.sum(v) * x[0] + np.sum(b * b)


def summed_by_sum(x):
    out = []
    for i in range(len(x)):
        out.append(x[i] ** 2 * 0.5 + x[0] * x[i])
    return sum(out)


def beside_a_checkpointed_loop(x):
    # (the reverse sweep runs the checkpointed loop's statements again, the very statements of the forward
    # sweep; the pass growing the list rebuilt each place apart, two statements with one identity: a crash)
    out = []
    for i in range(len(x)):
        out.append(x[i] ** 2)
    s = sum(out)
    for i in s2s_ad.checkpointed(range(len(x))):
        if s > 0.0:
            s = s * 0.7 + x[i]
        else:
            s = s * 0.9 - 0.1 * x[i]
    return s + np.sum(np.array(out) * x)


def grown_in_a_checkpointed_loop(x):
    out = []
    s = 0.5
    for i in s2s_ad.checkpointed(range(len(x)), every=2):
        s = s * 0.8 + np.sin(x[i] * s)
        out.append(s * x[i])
    return np.sum(np.array(out) * x) + s


def joined_twice(x):
    # two whole-list adjoints (np.stack's and np.concatenate's, each a list of pieces) added item by item:
    # + of the two lists joined them, and the reverse loop read the second's pieces only (a wrong number)
    rows = []
    for i in range(3):
        rows.append(np.sin(x * (i + 1.0)))
    return np.sum(np.stack(rows) ** 2) + np.sum(np.concatenate(rows) * x[0]) + np.sum(np.vstack(rows)[1])


def walked_then_stacked(x):
    # the list walked (its adjoint updated item by item) and stacked (its adjoint a list of pieces)
    rows = []
    for i in range(3):
        rows.append(x * (i + 1.0))
    total = 0.0
    for row in rows:
        total = total + np.sum(row ** 2)
    return total + np.sum(np.tanh(np.stack(rows)))


def joined_and_indexed(x):
    rows = []
    for i in range(2):
        rows.append(np.cos(x[1:] * (i + 0.5)))
    return np.sum(np.hstack(rows) ** 2) + np.sum(rows[1] * x[:-1]) + np.sum(np.stack(rows, axis=1))


def split_then_joined_twice(x):
    # np.split's list (declared returns_sequence) with two whole-list adjoints: added item by item too
    parts = np.split(x[:4], 2)
    return np.sum(np.stack(parts) ** 2) + np.sum(np.concatenate(parts) * x[0])


def _rows_of(x):
    rows = []
    for i in range(3):  # (a loop: under the Python backend the helper stays a call)
        rows.append(x * (i + 1.0))
    return rows


def a_helpers_list_joined_twice(x):
    # the list a user's helper returns, its kind unknown: its two adjoints added item by item too
    rows = _rows_of(x)
    return np.sum(np.stack(rows) ** 2) + np.sum(np.concatenate(rows) * x[0])


GROWN = [a_helpers_list_joined_twice, split_then_joined_twice, joined_twice, walked_then_stacked, joined_and_indexed, beside_a_checkpointed_loop, grown_in_a_checkpointed_loop, array_updated_after_a_lambda, plus_equals_after_an_append_loop, summed_by_sum, squares_in_a_loop, length_read_each_trip, two_lists_side_by_side, appended_in_branches, rows_stacked,
         recurrence_reading_the_last_item, grown_in_a_while_loop, grown_by_plus_equals, a_copy_grown_apart,
         a_new_list_per_outer_trip, named_again_once_complete, built_by_a_helper_returning_a_new_list]


def another_name_then_growth(x):
    a = []
    a.append(x[0])
    b = a
    a.append(x[1] * 2)
    return np.sum(np.array(b) * x[:len(b)])


def a_tuple_holds_it(x):
    a = []
    a.append(x[0])
    t = (a, x[1])
    a.append(x[2])
    return np.sum(np.array(t[0])) * t[1]


def another_name_read_in_the_loop(x):
    a = []
    b = a
    s = 0.0
    for i in range(len(x)):
        a.append(x[i])
        s = s + np.sum(np.array(b)) * x[i]
    return s


def a_dict_holds_it(x):
    a = []
    d = {"k": a}
    a.append(x[0] * 3)
    return np.sum(np.array(d["k"])) + x[1]


def plus_equals_with_another_name(x):
    a = [x[0]]
    b = a
    a += [x[1]]
    return np.sum(np.array(b))


def an_outer_list_holds_it(x):
    inner = [x[0]]
    outer = [inner]
    inner.append(x[1] * 3)
    return np.sum(np.array(outer[0]))


def _appended_to(items, v):
    items.append(v)
    return items


def a_helper_grows_the_callers_list(x):
    a = [x[0]]
    c = _appended_to(a, x[1] * 2)
    return np.sum(np.array(a)) * 10 + np.sum(np.array(c))


def one_list_under_two_names(x):
    a = b = []
    a.append(x[0] * 2)
    return sum(b) + x[1]


# (function, the function and the text of the line refused: where the other holder takes the list, or where
# a helper grows the list it was given)
HELD = [(f, f, text) for f, text in [
    (another_name_then_growth, "b = a"), (a_tuple_holds_it, "t = (a, x[1])"), (another_name_read_in_the_loop, "b = a"),
    (a_dict_holds_it, 'd = {"k": a}'), (plus_equals_with_another_name, "b = a"),
    (an_outer_list_holds_it, "outer = [inner]"), (one_list_under_two_names, "a = b = []")]] + [(a_helper_grows_the_callers_list, _appended_to, "items.append(v)")]
