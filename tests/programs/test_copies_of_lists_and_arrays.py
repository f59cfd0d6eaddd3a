"""``x.copy()`` of a list and of an array, and ``+=`` of a list into an array.

A list's ``copy()`` is a list; NumPy's ``np.copy``, which the method used to mean whatever ``x`` was,
makes an array of it, and ``items.copy() + [v]`` then added ``v`` to each item instead of
appending it: a wrong number with no warning (``np.sum(np.array(items.copy() + [3 * x]))`` by ``x``
gave 9 where it is 6).  Now a list the lowering sees is copied as itself, and a value it cannot
tell from a list (a helper's result, a list grown in a loop) is copied by its own method, spelled
``np.copy`` where the analysis proves an array (``passes/method_copies.py``).  And ``b = a.copy()``
or ``b = np.zeros(2)`` followed by ``b += [x, y]`` is an array's in-place sum, no longer refused as
growing a list.  Each function is checked against central differences on both backends and in
forward mode.
"""
from __future__ import annotations

import warnings

import numpy as np
import pytest

import s2s_ad
from conftest import numeric_grad, optional_import

numba = optional_import("numba")
BACKENDS = ["python", pytest.param("numba", marks=pytest.mark.skipif(
    numba is None, reason="numba is not installed (pip install 's2s_ad[numba]')"))]


def grown(x, n):
    out = []
    for i in range(n):
        out.append(x * (i + 1))
    return out


def a_displayed_lists_copy(x, a):
    items = [x]
    more = items.copy()
    return np.sum(np.array(more + [2.0 * x]) * a[:, :1])


def a_parameters_copy(x, items, a):
    more = items.copy()
    return np.sum(np.array(more + [2.0 * x]) * a[:, :1])


def a_comprehensions_copy(x, a):
    items = [x * i for i in range(1, 3)]
    more = items.copy()
    return np.sum(np.array(more + [2.0 * x]) * a[:, :1])


def a_helpers_list_copied(x, a):
    items = grown(x, 2)
    more = items.copy()
    return np.sum(np.array(more + [3.0 * x]))


def a_list_grown_in_a_loop_copied_and_grown(x, n):
    items = []
    for i in range(n):
        items.append(x * (i + 1))
    more = items.copy()
    more += [3.0 * x]
    more.append(x * x)
    return np.sum(np.array(more)) + len(items)


def a_copy_appended_to(x, a):
    items = [x, 2.0]
    more = items.copy()
    more.append(3.0 * x)
    more += [x]
    return np.sum(np.array(more) ** 2) + len(items)


def an_arrays_copy_plus_a_list(x, a):
    b = a[0].copy()
    b += [x, x * x]
    return np.sum(b ** 2)


def zeros_plus_a_list(x, a):
    b = np.zeros(2)
    b += [x, x * x]
    return np.sum((b * a) ** 2)


def copies_of_copies(x, a):
    b = a.copy()
    b[0, 0] = x
    c = b.copy()
    c *= 2.0
    return np.sum(c * b)


A = np.arange(6.0).reshape(3, 2) + 1.0
CASES = [(a_displayed_lists_copy, (1.7, A)), (a_parameters_copy, (1.7, [1.0, 2.0], A)),
         (a_comprehensions_copy, (1.7, A)), (a_helpers_list_copied, (1.7, A)),
         (a_list_grown_in_a_loop_copied_and_grown, (1.7, 3)), (a_copy_appended_to, (1.7, A)),
         (an_arrays_copy_plus_a_list, (1.7, A)), (zeros_plus_a_list, (1.7, A)), (copies_of_copies, (1.7, A))]
IDS = [case[0].__name__ for case in CASES]


@pytest.fixture(autouse=True)
def _quiet_fallbacks():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", s2s_ad.CompileFallbackWarning)
        yield


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_gradients_against_differences(case, backend):
    fn, args = case
    got = s2s_ad.grad(fn, backend=backend)(*args)
    assert got == pytest.approx(numeric_grad(fn, args, 0), rel=1e-6)


FLOATS_ONLY = [case for case in CASES if not any(isinstance(a, int) for a in case[1])]  # (jvp: float arguments)


@pytest.mark.parametrize("case", FLOATS_ONLY, ids=[case[0].__name__ for case in FLOATS_ONLY])
def test_forward_mode_against_differences(case):
    fn, args = case
    tangents = (1.0,) + tuple(np.zeros_like(a) if isinstance(a, np.ndarray) else [0.0] * len(a) for a in args[1:])
    _, tangent = s2s_ad.jvp(fn, args, tangents)
    assert tangent == pytest.approx(numeric_grad(fn, args, 0), rel=1e-6)


def test_an_arrays_copy_is_numpys_and_a_lists_its_own_method():
    """White-box: the generated code copies a proven array by ``np.copy`` and a value that may be a
    list by its own method."""
    arrays = s2s_ad.grad(copies_of_copies)
    arrays(1.7, A)
    assert "np.copy(a)" in arrays.source and "copy_method" not in arrays.source
    lists = s2s_ad.grad(a_list_grown_in_a_loop_copied_and_grown)
    lists(1.7, 3)
    assert "copy_method(" in lists.source


def a_grown_lists_list_grown(x, n):
    items = []
    for i in range(n):
        items.append(x * (i + 1.0))
    more = list(items)
    more.append(x * x)
    return sum(more) * more[1]


def a_grown_list_walked_by_its_list(x, n):
    items = []
    for i in range(n):
        items.append(x * (i + 1.0))
    for v in list(items):
        items.append(v * v)
    return sum(items)


def an_arrays_rows_listed(x, a):
    rows = list(a * x)
    rows.append(a[0] * 2.0)
    return np.sum(np.array(rows) ** 2) + len(rows)


LISTED = [(a_grown_lists_list_grown, (1.7, 3)), (a_grown_list_walked_by_its_list, (1.7, 3)),
          (an_arrays_rows_listed, (1.7, A))]


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("case", LISTED, ids=[case[0].__name__ for case in LISTED])
def test_list_of_a_list_made_at_run_time(case, backend):
    """``list(items)`` of a list grown in a loop, or of an array's rows: the rule of ``list`` (the same
    items; templates/python_data.py), against central differences, on both backends."""
    fn, args = case
    got = s2s_ad.grad(fn, backend=backend)(*args)
    assert got == pytest.approx(numeric_grad(fn, args, 0), rel=1e-6)


def updated_through_a_lists_item(x, n):
    items = []
    for i in range(n):
        items.append(x * (i + 1.0))
    other = list(items)
    t = other[1]
    t += x
    return np.sum(items[1] ** 2)


def test_an_update_through_an_item_of_a_lists_list_is_refused():
    """``list(items)`` holds the same arrays as ``items``: an update through one of them is seen
    through both names, which the derivative would not follow.  The rule of ``list`` declares that
    its result may hold its argument's arrays (``may_view``), so the memory model refuses the update,
    naming its line."""
    with pytest.raises(s2s_ad.TransformError, match="shares memory with an array") as caught:
        s2s_ad.grad(updated_through_a_lists_item)(np.array([1.0, 2.0, 3.0]), 2)
    assert caught.value.line is not None


def _arrays_grown(x, n):
    items = []
    for i in range(n):
        items.append(x * (i + 1.0))
    return items


def written_through_a_copys_item(x, n):
    items = _arrays_grown(x, n)
    other = items.copy()
    other[0][1] = 5.0
    return np.sum(items[0] ** 2) + np.sum(other[0])


def updated_through_a_copys_item(x, n):
    items = []
    for i in range(n):
        items.append(x * (i + 1.0))
    other = items.copy()
    t = other[1]
    t *= 3.0
    return np.sum(items[1] ** 2)


@pytest.mark.parametrize("fn", [written_through_a_copys_item, updated_through_a_copys_item])
def test_a_write_through_an_item_of_a_lists_copy_is_refused(fn):
    """``items.copy()`` of a list of arrays holds the list's own arrays: a write through one of the copy's
    is seen through both names.  It gave wrong numbers silently (the copy taken as new memory
    throughout: 4.0 off for the first, the update dropped for the second); now lowering defers such a
    write and the pipeline refuses it unless the argument kinds prove the copied value an array."""
    with pytest.raises(s2s_ad.TransformError, match="a list's copy holds the list's own arrays") as caught:
        s2s_ad.grad(fn)(np.array([1.0, 2.0, 3.0]), 2)
    assert caught.value.line is not None


def written_through_a_view_of_an_arrays_copy(x, a):
    b = a * x
    c = b.copy()
    row = c[1]
    row[0] = x * x
    col = c[:, 1]
    col *= x
    return np.sum(c ** 2) + np.sum(b)


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_write_through_a_view_of_an_arrays_copy_is_still_differentiated(backend):
    """The same writes through a view of a copy the kinds prove an array: new memory, written as NumPy
    writes it (against central differences)."""
    args = (1.7, A)
    got = s2s_ad.grad(written_through_a_view_of_an_arrays_copy, backend=backend)(*args)
    assert got == pytest.approx(numeric_grad(written_through_a_view_of_an_arrays_copy, args, 0), rel=1e-6)


def copies_of_each_item(x, n):
    items = _arrays_grown(x, n)
    other = [v.copy() for v in items]
    return np.sum(other[0] * x) + np.sum(other[-1] ** 2)


def copies_of_a_displays_items(x, n):
    items = [x * 1.0, x * 2.0]
    other = [v.copy() for v in items]
    return np.sum(other[0] * x) + np.sum(other[1] ** 2)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("fn", [copies_of_each_item, copies_of_a_displays_items])
def test_a_comprehension_of_copies_of_a_lists_items(fn, backend):
    """``[v.copy() for v in items]``: a method of the comprehension's own variable.  It was refused as
    an undefined name ('v_1', the lowering's name for ``v``) when lowering looked for a class of the
    user's being appended; against central differences."""
    x = np.array([1.0, -2.0, 0.5])
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # (no fallback to Python under Numba)
        got = s2s_ad.grad(fn, backend=backend)(x, 3)
    np.testing.assert_allclose(got, numeric_grad(fn, (x, 3), 0), rtol=1e-6, atol=1e-8)


def written_through_an_item_of_copies(x, n):
    items = _arrays_grown(x, n)
    other = [v.copy() for v in items]
    other[0][1] = 5.0
    return np.sum(other[0] * x)


def updated_through_an_item_of_products(x, n):
    items = _arrays_grown(x, n)
    other = [v * 1.0 for v in items]
    t = other[1]
    t *= 3.0
    return np.sum(other[1] * x)


@pytest.mark.parametrize("fn", [written_through_an_item_of_copies, updated_through_an_item_of_products])
def test_a_write_through_an_item_a_comprehension_made_names_no_internal_name(fn):
    """A write through an array a comprehension put into a list is refused (its memory is shared with
    the list's item); the refusal names the user's expression and says what to write, not the
    lowering's names for the comprehension's values ('copy_method_v_1', 'v_1_times_1'), which no
    user can write into."""
    with pytest.raises(s2s_ad.TransformError, match="no name of its own holds it now") as caught:
        s2s_ad.grad(fn)(np.array([1.0, 2.0, 3.0]), 2)
    assert "v_1" not in str(caught.value) and caught.value.line is not None


def a_split_pieces_copy_written_through_a_view(w, s):
    buf = (np.split(w.ravel(), 3)[2]).copy()
    head = buf[:2]
    head += s
    buf[np.array([1, 1])] += s
    return np.sum(buf ** 2) + np.sum(np.tanh(head) * s)


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_copy_of_a_split_piece_is_an_arrays_copy(backend):
    """``np.split(x, 3)[2].copy()``: a piece of np.split is an array (the analysis reads the family's
    declared ``write_back="pieces"``), so its copy is new memory and a write through a view of it is
    differentiated.  It was refused as a copy of a value that may be a list (found by the shared
    generator gen4, seed 99,940,193).  Against central differences."""
    w = np.arange(12.0).reshape(3, 4) * 0.1
    got = s2s_ad.grad(a_split_pieces_copy_written_through_a_view, wrt=(0, 1), backend=backend)(w, 0.7)
    for i, gradient in enumerate(got):
        want = numeric_grad(a_split_pieces_copy_written_through_a_view, (w, 0.7), i)
        np.testing.assert_allclose(gradient, want, rtol=1e-6, atol=1e-8)


def pieces_of_different_lengths_written_through(x):
    top, bottom = np.array_split(np.outer(x, x), [3], axis=0)
    bottom[0, :] *= x[0]
    parts = np.array_split(x * 2.0, 3)
    parts[1][0] = parts[0][0] * x[2]
    return np.sum(top) + np.sum(bottom ** 2) + np.sum(parts[1] ** 2) + np.sum(parts[2])


def equal_pieces_written_through(x):
    parts = np.array_split(np.outer(x, x), 2, axis=1)
    parts[1][0, :] = parts[0][1, :] * x[2]
    return np.sum(parts[1] ** 2) + np.sum(np.sin(parts[0]))


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_write_through_pieces_of_an_unnamed_array(backend):
    """np.array_split of an array no name holds, a piece then written through: the forward sweep keeps
    the list of pieces as it was for the reverse one, and kept it with np.copy, which stacks a list of
    equal arrays and raised ValueError on pieces of different lengths (now each piece is copied).
    Against central differences."""
    x = np.array([0.3, -1.2, 0.8, 1.1])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", s2s_ad.CompileFallbackWarning)  # (pieces of different lengths: Python)
        got = s2s_ad.grad(pieces_of_different_lengths_written_through, backend=backend)(x)
    np.testing.assert_allclose(got, numeric_grad(pieces_of_different_lengths_written_through, (x,), 0),
                               rtol=1e-7, atol=1e-9)
    if backend == "numba":  # (pieces of one shape compile: the adjoint a row per piece)
        with warnings.catch_warnings():
            warnings.simplefilter("error", s2s_ad.CompileFallbackWarning)
            got = s2s_ad.grad(equal_pieces_written_through, backend=backend)(x)
    else:
        got = s2s_ad.grad(equal_pieces_written_through, backend=backend)(x)
    np.testing.assert_allclose(got, numeric_grad(equal_pieces_written_through, (x,), 0), rtol=1e-7, atol=1e-9)
