"""``v op= w`` where ``v`` views or is unpacked from another array.

NumPy's in-place operator changes the memory ``v`` shares: ``t = m.T; t *= 2`` changes ``m``;
``a, b = np.split(y, [2]); a *= 3`` changes ``y``; ``r0, r1 = m; r0 *= 2`` changes ``m``.  Through a
view of an array the function made, the update is the store ``v[...] = v op w`` into that array, as
any store through the view (``lower_views.store_through_view``); an item unpacked from an argument
(a row of it, a piece of its ``np.split``) is refused, as an update of any view of an argument is:
NumPy would change the caller's array.  (Found 2026-12-05: the unpacked items of an argument were
updated as new arrays, a wrong gradient.)  Each differentiated function is checked against central
differences on both backends.
"""
from __future__ import annotations

import warnings

import numpy as np
import pytest

import s2s_ad
from conftest import assert_gradient_matches, optional_import

numba = optional_import("numba")
X = np.array([0.3, -0.7, 1.1, 0.4])


def transpose_updated(x):
    m = np.outer(x, x)
    t = m.T
    t *= 2.0
    t += np.eye(4)
    return np.sum(m * np.arange(16.0).reshape(4, 4))


def reshape_updated(x):
    y = x * 1.0
    r = y.reshape(2, 2)
    r *= np.array([[1.0], [3.0]])
    return np.sum(y ** 2) + np.sum(r)


def ravel_updated(x):
    m = np.outer(x, x[:2])
    flat = m.ravel()
    flat *= np.arange(8.0)
    return np.sum(m ** 2)


def split_piece_updated(x):
    y = x * 1.0
    a, b = np.split(y, [2])
    a *= 3.0
    b += a[0]
    return np.sum(y ** 2)


@pytest.mark.parametrize("f", [transpose_updated, reshape_updated, ravel_updated, split_piece_updated],
                         ids=lambda f: f.__name__)
@pytest.mark.parametrize("backend", ["python", pytest.param("numba", marks=pytest.mark.skipif(
    numba is None, reason="numba is not installed (pip install 's2s_ad[numba]')"))])
def test_an_update_through_a_view_changes_the_array_it_views(f, backend):
    want = assert_gradient_matches(f, (X.copy(),))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", s2s_ad.CompileFallbackWarning)  # (np.split's pieces run as Python there)
        got = s2s_ad.grad(f, backend=backend)(X.copy())
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-14)


def split_piece_of_the_argument_updated(x):
    a, b = np.split(x, 2)
    a *= 2.0
    return np.sum(a) + np.sum(x)


def row_of_the_argument_updated(m):
    r0, r1 = m
    r0 *= 2.0
    return np.sum(r0 * r1) + np.sum(m)


@pytest.mark.parametrize("f, arg, name", [
    (split_piece_of_the_argument_updated, X, "a"),
    (row_of_the_argument_updated, X.reshape(2, 2), "r0"),
])
def test_an_update_of_an_item_unpacked_from_an_argument_is_refused_at_its_line(f, arg, name):
    with pytest.raises(s2s_ad.TransformError, match=f"the in-place update of {name}: {name} is an item unpacked "
                       "from .* shares its memory.*NumPy would change that array too") as refused:
        s2s_ad.grad(f)(arg.copy())
    assert f"test_updates_through_views.py:{f.__code__.co_firstlineno + 2}" in str(refused.value)


def _halves(x):
    n = x.shape[0] // 2
    return x[:n], x[n:]


def helpers_piece_of_the_argument_updated(x):
    lo, hi = _halves(x)
    lo *= 3.0
    return np.sum(lo * hi)


@pytest.mark.parametrize("backend", ["python", pytest.param("numba", marks=pytest.mark.skipif(
    numba is None, reason="numba is not installed (pip install 's2s_ad[numba]')"))])
def test_an_update_of_a_piece_a_helper_returned_is_refused_naming_no_name_as_shared_with_itself(backend):
    """The helper is inlined under backend="numba", where the refusal once read "lo is shared with lo"."""
    with pytest.raises(s2s_ad.TransformError, match="the in-place update of lo: lo is an item unpacked from .*NumPy "
                       "would change that array too") as refused:
        s2s_ad.grad(helpers_piece_of_the_argument_updated, backend=backend)(X.copy())
    assert "shared with lo" not in str(refused.value)
    line = helpers_piece_of_the_argument_updated.__code__.co_firstlineno + 2
    assert f"test_updates_through_views.py:{line}" in str(refused.value)
