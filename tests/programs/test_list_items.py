"""Items of lists written by index (``out[i] = v``, ``acc[0] += v``, ``vals[0], vals[1] = ...``).

A list the function makes (a display, a comprehension, ``[0.0] * n``, appends) and no other name
holds is a value: ``out[i] = v`` binds ``out`` to a new list with that item replaced
(``runtime.list_with``), so loops carry it and the reverse sweep gives the item's adjoint to ``v``
and none to the item written over.  ``out[i] op= v`` is Python's read, update and store back: an
array item is changed in place, seen through every name that holds it.  Checked against central
differences, forward mode against reverse (``assert_gradient_matches``), Hessians against differences
of the gradient, and both backends against each other; and the refusals where Python's list is
shared: another holder, a loop that walks the list while it is written, an array the list holds
written after it was put there."""
import numpy as np
import pytest

import s2s_ad
from conftest import assert_gradient_matches, numeric_grad

X = np.array([0.3, -1.2, 0.8])


def zeros_written_in_a_loop(x):
    out = [0.0] * 3
    for i in range(3):
        out[i] = x[i] ** 2 * np.sin(x[i])
    return sum(out) + out[0] * out[2]


def display_written_once(x):
    out = [0.0, 0.0, 0.0]
    out[1] = x[0] * x[2]
    return out[1] + out[0] + x[1]


def appended_then_written(x):
    out = []
    for i in range(3):
        out.append(x[i] ** 2)
    out[0] = out[0] * 3.0
    return sum(out) * x[1]


def accumulated_in_an_item(x):
    acc = [0.0]
    for i in range(3):
        acc[0] += x[i] ** 2 * acc[0] + x[i]
    return acc[0]


def numbers_updated_by_index(x):
    vals = [1.0, 2.0]
    vals[0] += x[0]
    vals[1] *= x[1] * vals[0]
    vals[-1] -= x[2]
    return vals[0] * vals[1]


def written_in_branches(x):
    out = [1.0, 2.0, 3.0]
    if x[0] > 0:
        out[1] = x[1] * x[2]
    else:
        out[-1] = x[0]
    return out[0] * out[1] + out[2]


def written_in_a_while_loop(x):
    out = [0.0] * 3
    i = 0
    while i < 3:
        out[i] = np.sin(x[i]) * (out[i - 1] + 1.0)
        i += 1
    return sum(out)


def made_an_array_after(x):
    out = [0.0] * 3
    for i in range(3):
        out[i] = x[i] ** 2
    return np.array(out) @ x


def swapped(x):
    vals = [x[0], x[1]]
    vals[0], vals[1] = vals[1], vals[0]
    return vals[0] * 2.0 + vals[1] * x[2]


def state_stepped(x):
    state = [x[0], x[1]]
    for _ in range(5):
        state[0], state[1] = state[1], state[0] * 0.5 + np.sin(state[1])
    return state[0] + state[1] * x[2]


def several_updates(x):
    out = [0.0] * 3
    for i in range(3):
        out[i] = x[i]
    out[1] *= out[2]
    out[0] -= 1.0
    return np.prod(out) + max(out)


def walked_by_index(x):
    out = [x[0], x[1], x[2]]
    for i in range(len(out)):
        out[i] = out[i] * out[i - 1]
    return out[2] + out[0]


def walks_a_copy(x):
    out = [x[0], x[1], x[2]]
    for v in list(out):
        out[2] = v * out[2]
    return out[2]


def arrays_updated_in_place(x):
    bufs = [np.zeros(3), np.ones(3)]
    first = bufs[1]
    bufs[1] += x * x
    bufs[0] = bufs[1] * x
    return np.sum(first * x) + np.sum(bufs[0])


def array_item_replaced(x):
    bufs = [np.zeros(3), np.ones(3)]
    bufs[1] = bufs[1] + x
    return np.sum(bufs[1] * x)


FUNCTIONS = [zeros_written_in_a_loop, display_written_once, appended_then_written, accumulated_in_an_item,
             numbers_updated_by_index, written_in_branches, written_in_a_while_loop, made_an_array_after, swapped,
             state_stepped, several_updates, walked_by_index, walks_a_copy, arrays_updated_in_place,
             array_item_replaced]
POINTS = [X, np.array([-0.6, 0.2, 0.9])]


@pytest.mark.parametrize("fn", FUNCTIONS, ids=lambda f: f.__name__)
@pytest.mark.parametrize("point", range(len(POINTS)))
def test_gradient_and_forward_mode(fn, point):
    x = POINTS[point]
    assert_gradient_matches(fn, (x.copy(),))
    assert np.array_equal(x, POINTS[point])  # (the argument is the caller's: never written)


@pytest.mark.parametrize("fn", FUNCTIONS, ids=lambda f: f.__name__)
def test_hessian(fn):
    g = s2s_ad.grad(fn)
    eps = 1e-5
    by_differences = np.array([(g(X + eps * e) - g(X - eps * e)) / (2 * eps) for e in np.eye(X.size)])
    np.testing.assert_allclose(s2s_ad.hessian(fn)(X), by_differences, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("fn", FUNCTIONS, ids=lambda f: f.__name__)
def test_compiled_backend_agrees(fn):
    pytest.importorskip("numba")
    want = numeric_grad(fn, (X,), 0)
    got = s2s_ad.grad(fn, backend="numba")(X)  # (a list of arrays, np.max of a list: run as Python, warned)
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)


def test_an_index_out_of_range_raises_as_python_does():
    def writes_past_the_end(x):
        out = [0.0, 0.0]
        out[2] = x[0]
        return out[0]
    with pytest.raises(IndexError, match="list assignment index out of range"):
        _ = writes_past_the_end([1.0])  # (Python's own message, which the gradient gives too)
    with pytest.raises(IndexError, match="list assignment index out of range"):
        s2s_ad.grad(writes_past_the_end)(X)


# -- refused: where Python's list is shared, the change would be seen elsewhere --------------------

def _another_name_holds_it(x):
    a = [0.0] * 3
    b = a
    a[0] = x[0]
    return b[0] * x[1]


def _a_tuple_holds_it(x):
    out = [0.0, 1.0]
    t = (out, 1)
    out[0] = x[0]
    return t[0][0] * x[1]


def _written_while_walked(x):
    out = [x[0], x[1], x[2]]
    for v in out:
        out[2] = v * out[2]
    return out[2]


def _written_while_enumerated(x):
    out = [x[0], x[1], x[2]]
    for i, v in enumerate(out):
        if i < 2:
            out[i + 1] = v * 2.0
    return out[2]


def _array_written_after_it_was_put_in(x):
    a = np.zeros(3)
    lst = [np.ones(3), np.ones(3)]
    lst[1] = a
    a[1] = x[0] * x[2]
    return np.sum(lst[1] * x)


def _array_written_after_it_was_appended(x):
    a = np.zeros(3)
    lst = [np.ones(3)]
    lst.append(a)
    a[1] = x[0] * x[2]
    return np.sum(lst[1] * x)


def _arrays_of_a_comprehension_updated(x):
    out = [np.zeros(3) for _ in range(2)]
    for i in range(2):
        out[i] += x[i:i + 3]
    return sum(np.sum(v * x[:3]) for v in out)


def _slice_assigned(x):
    out = [0.0, 0.0, 0.0]
    out[0:2] = [x[0], x[1]]
    return sum(out)


@pytest.mark.parametrize("fn, words", [
    (_another_name_holds_it, "a list that another name or object takes here"),
    (_a_tuple_holds_it, "a list that another name or object takes here"),
    (_written_while_walked, "writing an item into the list 'out' in a loop that walks it"),
    (_written_while_enumerated, "writing an item into the list 'out' in a loop that walks it"),
    (_array_written_after_it_was_put_in, "reading lst after a was written"),
    (_array_written_after_it_was_appended, "reading lst after a was written"),
    (_slice_assigned, "an assignment into a slice of the list out"),
    (_arrays_of_a_comprehension_updated, "out holds arrays made in a loop or comprehension"),
])
def test_refused_naming_the_line(fn, words):
    with pytest.raises(s2s_ad.TransformError, match=words) as caught:
        s2s_ad.grad(fn)(X)
    assert caught.value.line is not None and caught.value.hint


def test_an_array_the_list_holds_from_its_display_is_taken_again():
    def held_from_the_display(x):
        a = np.zeros(3)
        lst = [np.ones(3), a]
        a[1] = x[0] * x[2]
        return np.sum(lst[1] * x)
    assert_gradient_matches(held_from_the_display, (X.copy(),))


def _grown_under_another_name(x):
    items = [x[0], 2.0 * x[1]]
    other = items
    other.append(x[2] * x[0])
    return sum(items) * sum(other)


def _grown_under_another_name_as_suggested(x):
    items = [x[0], 2.0 * x[1]]
    other = items.copy()
    other.append(x[2] * x[0])
    return sum(items) * sum(other)


def _grown_while_walked(x):
    items = [x[0]]
    for v in items:
        if len(items) < 3:
            items.append(v * x[1])
    return sum(items)


def _grown_while_walked_as_suggested(x):
    items = [x[0]]
    for i in range(2):
        items.append(x[i + 1] * x[0])
    for v in items.copy():
        items.append(v * x[1])
    return sum(items)


@pytest.mark.parametrize("refused, rewritten, suggestion", [
    (_grown_under_another_name, _grown_under_another_name_as_suggested, "other = items.copy()"),
    (_grown_while_walked, _grown_while_walked_as_suggested, "for v in items.copy()"),
])
def test_a_refusal_of_a_shared_list_suggests_a_copy_that_is_differentiated(refused, rewritten, suggestion):
    """The refusals of a list grown under two names, or while a loop walks it, suggest a copy
    (``x.copy()``: a list made at run time as well as a display); the function written so is
    differentiated right, against central differences and forward mode."""
    with pytest.raises(s2s_ad.TransformError) as caught:
        s2s_ad.grad(refused)(X)
    assert suggestion in caught.value.hint
    assert_gradient_matches(rewritten, (X.copy(),))


@pytest.mark.parametrize("rewritten", [_grown_under_another_name_as_suggested, _grown_while_walked_as_suggested])
def test_a_list_copied_as_suggested_compiles_under_numba(rewritten):
    """The rewrites above under ``backend="numba"``: compiled with no fallback to Python (the adjoint
    of a list of numbers made at run time, an array of zeros, is compiled: ``numba/runtime.py``'s
    ``zeros_like``), the same numbers as the Python backend."""
    pytest.importorskip("numba", reason="numba is not installed (pip install 's2s_ad[numba]')")
    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter("error", s2s_ad.CompileFallbackWarning)
        compiled = s2s_ad.grad(rewritten, backend="numba")(X.copy())
    np.testing.assert_allclose(compiled, s2s_ad.grad(rewritten)(X.copy()), rtol=1e-13)
