"""backend="numba": a name a loop binds first (``None`` before the loop, Numba's Optional) compiles.

The generated code binds such a name to None before the loop and records its value before each trip
(the reverse sweep resets its adjoint to a zero of that value's shape).  Numba types the name as an
Optional; its np.shape refuses one and the reset of the value before the first trip met None: these
functions fell back to Python.  Oracles: central differences and the function's own value, compiled
(a fallback fails the test); and Python's error where the loop runs no trip (never a number).
"""
from __future__ import annotations

import warnings

import numpy as np
import pytest

import s2s_ad
from conftest import check_compiled_gradient, module_from_source, optional_import

numba = optional_import("numba")
pytestmark = pytest.mark.skipif(numba is None, reason="numba is not installed (pip install 's2s_ad[numba]')")

PROGRAMS = '''
import numpy as np

def last_number(x):
    for i in range(3):
        last = x[i] * 2.0
    return last * x[0]

def last_slice(x):
    for i in range(3):
        seg = x[i:i + 2] * x[0]
    return np.sum(seg)

def residual_of_the_last_step(x):
    y = x
    for i in range(4):
        y = np.sin(y)
        err = y - 1.0
    return np.sum(err ** 2)

def previous_element(x):
    prev = None
    loss = 0.0
    for i in range(4):
        if prev is not None:
            loss = loss + (x[i] - prev) ** 2
        prev = x[i]
    return loss + prev

def bound_on_some_trips(x):
    found = False
    for i in range(4):
        if x[i] > 0.3:
            val = x[i] * x[0]
            found = True
    if found:
        return val * 3.0
    return 0.0

def growing_prefix_in_a_while_loop(x):
    i = 0
    while i < 3:
        block = x[:i + 1] ** 2
        i += 1
    return np.sum(block) * x[1]

def inner_and_outer(x):
    for i in range(3):
        for j in range(2):
            inner = x[i] * x[j] + 1.0
        row = np.sin(x) * inner
    return np.sum(row * inner)

def unpacked_pair(x):
    for i in range(3):
        a, b = x[i], x[i + 1]
    return a * b

def taken_only_sometimes(x):
    if x[0] > 0:
        v = x[1:3]
    return np.sum(v)

def stepped(x, n):
    for i in range(n):
        last = np.cos(x[i:i + 2])
    return np.sum(last)
'''

NAMES = ["last_number", "last_slice", "residual_of_the_last_step", "previous_element", "bound_on_some_trips",
         "growing_prefix_in_a_while_loop", "inner_and_outer", "unpacked_pair"]


@pytest.fixture(scope="module")
def programs(tmp_path_factory):
    return module_from_source(tmp_path_factory.mktemp("first_bound"), "first_bound_", PROGRAMS)


@pytest.mark.parametrize("name", NAMES)
def test_a_name_a_loop_binds_first_compiles_and_agrees_with_differences(programs, name):
    check_compiled_gradient(getattr(programs, name), np.array([0.1, 0.35, 0.5, 0.7, 0.9]))


@pytest.mark.parametrize("backend", ["python", "numba"])
def test_a_loop_that_runs_no_trip_raises_as_python_does(programs, backend):
    """Python raises UnboundLocalError where the loop binding ``last`` runs no trip; so does the
    gradient (never a gradient of zeros), and the compiled code stays compiled for the next call."""
    x = np.array([0.1, 0.35, 0.5, 0.7])
    with pytest.raises(UnboundLocalError):
        programs.stepped(x, 0)
    with warnings.catch_warnings():
        warnings.simplefilter("error", s2s_ad.CompileFallbackWarning)
        gradient = s2s_ad.grad(programs.stepped, backend=backend)
        np.testing.assert_allclose(gradient(x, 2), [0.0, -np.sin(0.35), -np.sin(0.5), 0.0])  # (the last trip's)
        with pytest.raises(UnboundLocalError, match="last is read at line"):
            gradient(x, 0)
        np.testing.assert_allclose(gradient(x, 1), [-np.sin(0.1), -np.sin(0.35), 0.0, 0.0])


def test_a_branch_not_taken_leaves_the_name_unbound_as_in_python(programs):
    """``if c: v = ...`` then a read of v where c is false: UnboundLocalError, never a gradient."""
    x = np.array([-0.1, 0.35, 0.5, 0.7])
    with pytest.raises(UnboundLocalError):
        programs.taken_only_sometimes(x)
    for backend in ("python", "numba"):
        with pytest.raises(UnboundLocalError, match="v is read at line"):
            s2s_ad.grad(programs.taken_only_sometimes, backend=backend)(x)
    np.testing.assert_allclose(s2s_ad.grad(programs.taken_only_sometimes)(-x), [0.0, 1.0, 1.0, 0.0])


HELPER = '''
def last_of(v, n):
    for i in range(n):
        last = v[i] * 2.0
    return last * v[0]
'''


@pytest.mark.parametrize("backend", ["python", "numba"])
def test_the_check_in_a_helper_lowered_in_place_names_the_helpers_file(tmp_path_factory, backend):
    """The name unbound in a helper of another file, lowered in place of its call: the error names the
    helper's file and line, where the read is."""
    folder = tmp_path_factory.mktemp("first_bound_helper")
    helper = module_from_source(folder, "first_bound_helper_", HELPER)

    def caller(x, n):
        return helper.last_of(x * 1.0, n) + np.sum(x)

    x = np.array([1.0, 2.0, 3.0])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", s2s_ad.CompileFallbackWarning)
        gradient = s2s_ad.grad(caller, backend=backend)
        np.testing.assert_allclose(gradient(x, 2), [5.0, 3.0, 1.0])  # (2 x[1] x[0] + sum(x))
        with pytest.raises(UnboundLocalError, match=f"line 5 of {helper.__file__}"):
            gradient(x, 0)
