"""A NumPy ufunc writing its result into an array that exists (``np.exp(g, out=g)``, ``out=y[1:]``).

NumPy writes the result into ``out``'s memory: every name that sees that array (a view of it, the
array a view of which is ``out``, a list holding it, the caller's array a helper was given) sees the
write.  s2s_ad reads the statement as the store ``out[...] = np.f(...)`` (``sugar.py``), so the memory
model decides it as any store; NumPy's own refusals stay (a float result into an integer array,
``out=`` not an array), and so does ours (an argument written into).  Each function is checked in
every mode against central differences and on the Numba backend, without a fallback.
"""
from __future__ import annotations

import warnings

import numpy as np
import pytest

import s2s_ad
from conftest import assert_every_mode, assert_gradient_matches, optional_import

numba = optional_import("numba")
X = np.array([0.3, -0.7, 1.1, 0.4, 0.9])


def exp_in_place(x):
    g = x * 0.5
    np.exp(g, out=g)
    np.multiply(g, x, out=g)
    return np.sum(g ** 2)


def into_a_slice(x):
    y = np.zeros(6)
    np.sin(x, out=y[1:])
    return np.sum(y * np.arange(6.0)) + y[0]


def through_a_view_seen_by_its_base(x):
    y = x * 1.0
    tail = y[1:]
    np.add(tail, x[:-1], out=tail)
    return np.sum(y ** 2)


def view_taken_before_the_write(x):
    y = x * 2.0
    head = y[:3]
    np.tanh(y, out=y)
    return np.sum(head * x[:3])


def in_a_loop(x):
    acc = np.ones(5)
    for i in range(3):
        np.multiply(acc, x, out=acc)
        np.add(acc, 0.1 * i, out=acc)
    return np.sum(acc)


def in_a_checkpointed_loop(x):
    y = x * 1.0
    for _ in s2s_ad.checkpointed(range(6)):  # (its checks run again with each segment: they only raise)
        np.tanh(y, out=y)
        np.multiply(y, x, out=y)
    return np.sum(y)


def held_by_a_list(x):
    y = x * 1.0
    parts = [y, x]
    np.square(y, out=y)
    return np.sum(parts[0] * parts[1])


def _normalised_in_place(v):
    np.divide(v, np.sum(v * v), out=v)


def helper_writes_the_callers_array(x):
    b = x ** 2 + 1.0
    _normalised_in_place(b)
    return np.sum(b * x)


FUNCTIONS = [exp_in_place, into_a_slice, through_a_view_seen_by_its_base, view_taken_before_the_write, in_a_loop,
             in_a_checkpointed_loop, held_by_a_list, helper_writes_the_callers_array]


@pytest.mark.parametrize("f", FUNCTIONS, ids=lambda f: f.__name__)
def test_a_ufunc_writing_into_out_in_every_mode(f):
    assert_every_mode(f, X.copy())


@pytest.mark.skipif(numba is None, reason="numba is not installed (pip install 's2s_ad[numba]')")
@pytest.mark.parametrize("f", FUNCTIONS, ids=lambda f: f.__name__)
def test_a_ufunc_writing_into_out_compiles(f):
    want = assert_gradient_matches(f, (X.copy(),))
    with warnings.catch_warnings():
        warnings.simplefilter("error", s2s_ad.CompileFallbackWarning)
        got = s2s_ad.grad(f, backend="numba")(X.copy())
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-15)


def into_an_integer_array(x):
    counts = np.zeros(5, dtype=np.int64)
    np.multiply(x, 2.0, out=counts)
    return np.sum(counts * x)


def into_a_number(x):
    total = 0.0
    np.exp(x[0], out=total)
    return total


@pytest.mark.parametrize("backend", ["python", pytest.param("numba", marks=pytest.mark.skipif(
    numba is None, reason="numba is not installed (pip install 's2s_ad[numba]')"))])
@pytest.mark.parametrize("f, words", [
    (into_an_integer_array, "cannot cast the result from float64 to int64 with casting rule 'same_kind'"),
])
def test_numpys_refusals_of_out_are_raised_where_the_call_runs(f, words, backend):
    with pytest.raises(TypeError):
        f(X.copy())  # (NumPy's own: the check is that ours raises where NumPy's does)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", s2s_ad.CompileFallbackWarning)
        with pytest.raises(TypeError, match=words):
            s2s_ad.grad(f, backend=backend)(X.copy())


def into_the_argument(x):
    np.exp(x, out=x)
    return np.sum(x)


def out_of_a_function_that_is_no_ufunc(x):
    total = np.zeros(())
    np.sum(x, out=total)
    return float(total)


@pytest.mark.parametrize("f, words", [
    (into_the_argument, "x is not an array this function created"),
    (into_a_number, "total is float, not an array, and NumPy raises TypeError here"),
    (out_of_a_function_that_is_no_ufunc, "out= .* is supported for NumPy's ufuncs of one result"),
])
def test_what_cannot_be_written_is_refused_at_its_line(f, words):
    with pytest.raises(s2s_ad.TransformError, match=words) as refused:
        s2s_ad.grad(f)(X.copy())
    line = f.__code__.co_firstlineno + (1 if f is into_the_argument else 2)
    assert f"test_ufunc_out.py:{line}" in str(refused.value)
