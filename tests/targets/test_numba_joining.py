"""backend="numba": the compiled adjoints of joining arrays (``concatenate_grad``, ``stack_grad``,
``joined_grad``) and np.concatenate / np.stack of a list, in ``targets/numba/rules/numpy_joining.py``.

Oracles: the Python helpers and NumPy itself, called on the same arrays (each compiled version must
give their numbers, its pieces of the same shapes); and gradients of functions that join arrays,
compiled (asserted: no fallback to Python) and compared with central differences.
"""
from __future__ import annotations


import numpy as np
import pytest

from conftest import check_compiled_gradient, compiled_by_numba, module_from_source, optional_import

numba = optional_import("numba")
pytestmark = pytest.mark.skipif(numba is None, reason="numba is not installed (pip install 's2s_ad[numba]')")


def _compiled_call(helper, grad, arrays, *rest):
    """``helper(grad, arrays, *rest)`` called from a function Numba compiles (the registry's versions
    registered), the list or tuple ``arrays`` built inside it, as generated code builds it (a list of
    arrays of different layouts is one of layout "A" there) and ``rest`` written as constants, as there."""
    from s2s_ad.targets.numba import runtime
    runtime.register()
    items = ", ".join(f"a{i}" for i in range(len(arrays)))
    built = f"[{items}]" if isinstance(arrays, list) else f"({items},)"
    namespace = {"helper": helper}
    constants = "".join(f", {value!r}" for value in rest)
    exec(f"def call(grad, {items}):\n    return helper(grad, {built}{constants})\n", namespace)
    return numba.njit(namespace["call"])(grad, *arrays)


def _shape_helpers():
    from s2s_ad.targets.numba.rules.numpy_joining import shape
    return shape


RNG = np.random.default_rng(7)
V3, W3, M23, N43 = RNG.normal(size=3), RNG.normal(size=5), RNG.normal(size=(2, 3)), RNG.normal(size=(4, 3))
CUBE = RNG.normal(size=(2, 3, 2))

CONCATENATIONS = [
    ([V3, W3], 0), ((V3, W3[1:]), 0), ((V3, W3[::2]), -1), ([M23, N43], 0), ((M23, N43[:, ::-1].T.T), 0),
    ([M23, M23.T.copy().T], 1), ([CUBE, CUBE[:, :1]], 1), ([CUBE, CUBE], -1), ([M23, N43], None),
    ((V3[::-1], W3), None),
]


@pytest.mark.parametrize("arrays, axis", CONCATENATIONS)
def test_concatenate_grad_cuts_the_adjoint_as_the_python_helper(arrays, axis):
    grad = RNG.normal(size=np.concatenate(arrays, axis=axis).shape)
    helper = _shape_helpers().concatenate_grad
    want = helper(grad, arrays, axis)
    got = _compiled_call(helper, grad, arrays, axis)
    assert len(got) == len(want)
    for g, w in zip(got, want):
        assert g.shape == w.shape
        np.testing.assert_array_equal(g, w)


STACKS = [([V3, V3 * 2], 0), ((V3, V3[::-1]), 1), ((V3, V3), -1), ([M23, M23], 0), ((M23, M23[:, ::-1]), 2),
          ([M23, M23, M23], 1)]


@pytest.mark.parametrize("arrays, axis", STACKS)
def test_stack_grad_takes_one_position_of_the_new_axis_per_array(arrays, axis):
    grad = RNG.normal(size=np.stack(arrays, axis=axis).shape)
    helper = _shape_helpers().stack_grad
    want, got = helper(grad, arrays, axis), _compiled_call(helper, grad, arrays, axis)
    for g, w in zip(got, want):
        assert g.shape == w.shape
        np.testing.assert_array_equal(g, w)


ZERO_D = np.array(2.0)
JOINED = [("hstack", (V3, W3)), ("hstack", (M23, M23[:, :2])), ("hstack", (CUBE, CUBE[:, :1])),
          ("hstack", (ZERO_D, np.array(6.0))), ("vstack", (V3, V3)), ("vstack", (M23, N43[::-1])),
          ("vstack", (CUBE, CUBE)), ("dstack", (V3, V3)), ("dstack", (M23, M23.T.T)),
          ("dstack", (CUBE, CUBE[:, :, :1])), ("column_stack", (V3, V3[::-1])), ("column_stack", (M23.T, N43[:3]))]


@pytest.mark.parametrize("how, arrays", JOINED, ids=lambda v: v if isinstance(v, str) else "x".join(str(a.shape) for a in v))
def test_joined_grad_cuts_along_the_axis_numpy_joined_on(how, arrays):
    joined = getattr(np, how)(arrays)
    grad = RNG.normal(size=joined.shape)
    helper = _shape_helpers().joined_grad
    want = helper(grad, arrays, how)
    got = _compiled_call(helper, grad, arrays, how)
    for g, w in zip(got, want):
        assert g.shape == np.shape(w)
        np.testing.assert_array_equal(g, w)


@pytest.mark.parametrize("axis", [0, 1, -1, -2])
def test_concatenate_and_stack_of_a_list_are_numpys(axis):
    arrays = [M23, 2.0 * M23, M23[:, ::-1].copy()]  # (one layout: a list Numba unboxes)
    concatenate = numba.njit(lambda a, k: np.concatenate(a, k))
    stack = numba.njit(lambda a, k: np.stack(a, k))
    from s2s_ad.targets.numba import runtime
    runtime.register()
    np.testing.assert_array_equal(concatenate(arrays, axis), np.concatenate(arrays, axis))
    np.testing.assert_array_equal(stack(arrays, axis), np.stack(arrays, axis))
    with pytest.raises(ValueError):
        concatenate([M23, N43], 1)  # (NumPy raises too: 2 and 4 rows)
    np.testing.assert_array_equal(numba.njit(lambda a: np.concatenate(a))([V3, W3]), np.concatenate([V3, W3]))
    flattened = numba.njit(lambda a: np.concatenate(a, axis=None))
    np.testing.assert_array_equal(flattened([M23, N43]), np.concatenate([M23, N43], axis=None))


@pytest.mark.parametrize("join", [np.column_stack, np.dstack, np.hstack, np.vstack])
def test_joins_of_a_list_by_rank_are_numpys(join):
    """np.column_stack and np.dstack of a list (forward mode writes them so) and np.hstack, np.vstack:
    NumPy's shapes and elements for vectors, matrices and arrays of three axes."""
    from s2s_ad.targets.numba import runtime
    runtime.register()
    joined = numba.njit(lambda a, b: join([a, b, a]))
    for a in (V3, M23, RNG.normal(size=(2, 3, 4))):
        got, want = joined(a, 2.0 * a), join([a, 2.0 * a, a])
        assert got.shape == want.shape
        np.testing.assert_array_equal(got, want)


def columns_and_depths(x):
    m = np.column_stack([x, x * 2.0])
    return np.sum(m ** 3) + np.sum(np.dstack([x, x * x]) ** 2)


def test_forward_mode_through_column_stack_of_a_list_compiles():
    """jvp and a Hessian (forward over reverse) write np.column_stack of a list of tangents: it ran as
    Python.  Against the Python backend."""
    import warnings
    import s2s_ad
    x = np.array([0.3, -1.2, 0.8, 1.1])
    with warnings.catch_warnings():
        warnings.simplefilter("error", s2s_ad.CompileFallbackWarning)
        value, tangent = s2s_ad.jvp(columns_and_depths, (x,), (x[::-1].copy(),), backend="numba")
        hessian = s2s_ad.hessian(columns_and_depths, backend="numba")(x)
    want_value, want_tangent = s2s_ad.jvp(columns_and_depths, (x,), (x[::-1].copy(),))
    np.testing.assert_allclose([value, tangent], [want_value, want_tangent], rtol=1e-13)
    h, d = 1e-6, x[::-1]
    differences = (columns_and_depths(x + h * d) - columns_and_depths(x - h * d)) / (2 * h)
    np.testing.assert_allclose(tangent, differences, rtol=1e-7)
    np.testing.assert_allclose(hessian, s2s_ad.hessian(columns_and_depths)(x), rtol=1e-13, atol=1e-13)


def test_a_display_mixing_numbers_and_arrays_joins_as_numpy():
    """A list of numbers beside arrays is a vector to NumPy: joined (and cut back) as NumPy does, ints
    among floats promoted as NumPy promotes them."""
    from s2s_ad.targets.numba import runtime
    runtime.register()
    concatenate = numba.njit(lambda t, a: np.concatenate([[t, 2.0 * t], a, (t, 1.0)]))
    np.testing.assert_array_equal(concatenate(0.5, V3), np.concatenate([[0.5, 1.0], V3, (0.5, 1.0)]))
    whole = numba.njit(lambda k, a: np.concatenate([[k], a], axis=None))
    assert whole(3, np.arange(2)).dtype == np.concatenate([[3], np.arange(2)]).dtype
    np.testing.assert_array_equal(whole(3, V3), np.concatenate([[3], V3]))
    rows = numba.njit(lambda t, a: np.vstack([[t, t, t], a]))
    np.testing.assert_array_equal(rows(0.5, V3), np.vstack([[0.5, 0.5, 0.5], V3]))
    with pytest.raises(ValueError):
        rows(0.5, W3)  # (NumPy raises too: rows of 3 and 5)
    shape = _shape_helpers()
    cut = numba.njit(lambda g, t, a: shape.concatenate_grad(g, [[t], a], 0))
    grad = np.arange(4.0)
    pieces = cut(grad, 0.5, V3)
    expected = shape.concatenate_grad(grad, [[0.5], V3], 0)
    assert len(pieces) == 2
    for got, want in zip(pieces, expected):
        np.testing.assert_array_equal(got, want)


PROGRAMS = '''
import numpy as np

def joined_in_a_loop(x):
    state = x * 1.0
    for k in range(3):
        doubled = np.concatenate([state, np.sin(state)])
        state = doubled[:4] * doubled[4:] + 0.1 * state
    return np.sum(state ** 2)

def rows_stacked_and_cut(x):
    M = np.stack([x, x ** 2, np.cos(x)], axis=1)
    top = np.vstack((M[0], M[1] * x[0]))
    side = np.hstack((x[1:], x[:1] * 3.0))
    cols = np.column_stack((x, side))
    return np.sum(M * M) + np.sum(top[1]) + np.sum(cols[:, 1] * x)

def a_number_prepended(x):
    total = 0.0
    for k in range(x.shape[0]):
        total = total + x[k] ** 2
    joined = np.concatenate([[total], x * 2.0])   # (a list of a number beside an array)
    return np.sum(joined ** 2)

def numbers_around_a_vector(x):
    row = np.hstack([[x[0] * 3.0, 1.0], x, (x[3], 2.0)])
    table = np.vstack([(x[1], 1.0, 2.0, x[2]), x])
    flat = np.concatenate(((x[1], x[0]), x * x), axis=None)
    return np.sum(row ** 3) + np.sum(table[0] * table[1]) + np.sum(np.sin(flat))

def flattened_pieces(x):
    A = np.outer(x[:2], x[2:])
    joined = np.concatenate([A, x[1:3].reshape(1, 2)], axis=None)  # (a list: Numba's own takes no axis=None)
    return np.sum(np.tanh(joined) * np.arange(6.0))
'''


@pytest.mark.parametrize("name", ["joined_in_a_loop", "rows_stacked_and_cut", "flattened_pieces",
                                  "a_number_prepended", "numbers_around_a_vector"])
def test_gradients_of_joins_compile_and_agree_with_differences(name, tmp_path_factory):
    fn = getattr(module_from_source(tmp_path_factory.mktemp("joins"), "joins_", PROGRAMS), name)
    check_compiled_gradient(fn, np.array([0.7, -1.1, 0.4, 1.3]))
