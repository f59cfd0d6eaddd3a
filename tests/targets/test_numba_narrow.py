"""backend="numba" with float32 (float16, complex64) data: the float64 code runs compiled on the values
widened, its results cast to the types NumPy's own run gives (``targets/numba/narrow.py``).

Oracles: the same derivative of the same values in float64, rounded once (the compiled code is that
code: bit for bit), the Python backend's float32 run (its types exactly, its numbers to float32's
rounding) and central differences.  np.longdouble data runs as Python, said once.
"""
from __future__ import annotations

import warnings

import numpy as np
import pytest

import s2s_ad
from conftest import numeric_grad, optional_import, programs_from_source
from s2s_ad import CompileFallbackWarning

numba = optional_import("numba")
pytestmark = pytest.mark.skipif(numba is None, reason="numba is not installed (pip install 's2s_ad[numba]')")

PROGRAMS = programs_from_source("numba_narrow_", """
    import math
    import numpy as np

    def phases(x):
        total = 0.0
        for i in range(x.shape[0]):
            total += math.sin(x[i] * 3.0) * x[i] + (x[i] * 0.5) ** 2
        return total

    def decay(x, s):
        y = x
        for k in range(3):
            y = y * 0.5 + s * np.sin(y)
        return np.sum(y ** 2)

    def horner(c, t):
        total = 0.0
        for i in range(c.shape[0]):
            total = total * t + c[i]
        return total * total

    def mixed(x, w, s):
        out = 0.0
        for i in range(x.shape[0]):
            out = out + w[i] * np.tanh(s * x[i])
        return out

    def rows(m):
        total = 0.0
        for i in range(m.shape[0]):
            total = total + np.sum(np.exp(-m[i] * m[i]))
        return total
""")

X = np.linspace(0.1, 1.2, 6)


def _quietly(call, *args):
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a fallback (CompileFallbackWarning) fails the test
        return call(*args)


def _same_types(got, expected):
    got = got if isinstance(got, tuple) else (got,)
    expected = expected if isinstance(expected, tuple) else (expected,)
    assert len(got) == len(expected)
    for a, b in zip(got, expected):
        assert type(a) is type(b), (type(a), type(b))
        assert np.asarray(a).dtype == np.asarray(b).dtype and np.shape(a) == np.shape(b)


@pytest.mark.parametrize("dtype", [np.float32, np.float16])
def test_a_loop_carried_narrow_array_compiles_and_is_the_float64_code_rounded_once(dtype):
    """``y = y * 0.5 + s * np.sin(y)``: Numba computes a float32 array times a Python float in float64,
    so the float32 code itself would not type (``y`` changes dtype); the float64 code runs instead."""
    x = X.astype(dtype)
    df = s2s_ad.grad(PROGRAMS.decay, backend="numba")
    expected = s2s_ad.grad(PROGRAMS.decay)(x, 0.3)
    first = _quietly(df, x, 0.3)  # (a new key's first call runs as Python: NumPy's numbers and types)
    _same_types(first, expected)
    np.testing.assert_array_equal(first, expected)
    got = _quietly(df, x, 0.3)
    wide = _quietly(df, x.astype(np.float64), 0.3)
    _same_types(got, expected)
    np.testing.assert_array_equal(got, wide.astype(dtype))
    tolerance = 1e-5 if dtype == np.float32 else 4e-3
    np.testing.assert_allclose(got, expected, rtol=tolerance, atol=tolerance)
    np.testing.assert_allclose(got, numeric_grad(PROGRAMS.decay, (x.astype(np.float64), 0.3), 0),
                               rtol=tolerance, atol=tolerance)
    assert np.array_equal(_quietly(df, x, 0.3), got)  # every later call of the key: the same numbers
    (built,) = df._by_kinds.values()  # (one generated function: the narrow and the wide calls share it)
    assert [str(t) for t in built.function.compiled.signatures[0]][0].startswith("array(float64")
    assert len(built.function.compiled.signatures) == 1  # the float64 code, compiled once


def test_value_and_grad_gives_numpys_types_for_each_argument():
    """A float32 array, a float64 array and a NumPy float32 number: each result of the type and dtype
    the Python backend gives it."""
    x32, w64, s32 = X.astype(np.float32), np.cos(X), np.float32(0.7)
    df = s2s_ad.value_and_grad(PROGRAMS.mixed, wrt=(0, 1, 2), backend="numba")
    _quietly(df, x32, w64, s32)  # (the first call, as Python)
    got = _quietly(df, x32, w64, s32)
    expected = s2s_ad.value_and_grad(PROGRAMS.mixed, wrt=(0, 1, 2))(x32, w64, s32)
    _same_types(got[0], expected[0])
    _same_types(got[1], expected[1])
    wide = _quietly(df, x32.astype(np.float64), w64, np.float64(s32))
    for g, w, e in zip(got[1], wide[1], expected[1]):
        np.testing.assert_array_equal(g, np.asarray(w).astype(np.asarray(e).dtype))
        np.testing.assert_allclose(g, e, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(got[0], expected[0], rtol=1e-6)


def test_a_number_argument_of_float32_and_a_horner_loop():
    c = np.array([0.5, -1.25, 2.0, 0.75], dtype=np.float32)
    t = np.float32(0.9)
    df = s2s_ad.grad(PROGRAMS.horner, wrt=(0, 1), backend="numba")
    _quietly(df, c, t)  # (the first call, as Python)
    got = _quietly(df, c, t)
    expected = s2s_ad.grad(PROGRAMS.horner, wrt=(0, 1))(c, t)
    _same_types(got, expected)
    differences = [numeric_grad(PROGRAMS.horner, (c.astype(np.float64), float(t)), i) for i in (0, 1)]
    for g, e, d in zip(got, expected, differences):
        np.testing.assert_allclose(g, e, rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(g, d, rtol=1e-5, atol=1e-6)


def _leaves(value):
    if isinstance(value, (tuple, list)):
        return [leaf for item in value for leaf in _leaves(item)]
    return [value]


def _twice(make_and_call):
    """The second call's results (a new key's first call runs as Python; the second, compiled)."""
    make_and_call()
    return make_and_call()


@pytest.mark.parametrize("mode", ["jvp", "hessian", "vjp"])
def test_jvp_hessian_and_vjp_of_float32_data_compile_with_numpys_types(mode):
    m = X.astype(np.float32)
    wide = m.astype(np.float64)
    tangent = np.linspace(-1.0, 1.0, m.size).astype(np.float32)
    if mode == "jvp":
        made = s2s_ad.jvp  # (made at each call: the derivative is cached by function and kinds)
        got = _quietly(lambda: _twice(lambda: made(PROGRAMS.phases, (m,), (tangent,), backend="numba")))
        expected = made(PROGRAMS.phases, (m,), (tangent,))
        in_float64 = made(PROGRAMS.phases, (wide,), (tangent.astype(np.float64),))
    elif mode == "hessian":
        hessian = s2s_ad.hessian(PROGRAMS.phases, backend="numba")
        got = _quietly(lambda: _twice(lambda: hessian(m)))
        expected, in_float64 = s2s_ad.hessian(PROGRAMS.phases)(m), s2s_ad.hessian(PROGRAMS.phases)(wide)
    else:
        def pulled(x, d_out, backend):
            value, pullback = s2s_ad.vjp(PROGRAMS.phases, x, backend=backend)
            assert backend == "python" or pullback._split.handed  # both parts compiled, the tape handed over
            return value, pullback(d_out)
        got = _quietly(lambda: _twice(lambda: pulled(m, np.float32(1.0), "numba")))
        expected, in_float64 = pulled(m, np.float32(1.0), "python"), pulled(wide, 1.0, "python")
    got, expected, in_float64 = _leaves(got), _leaves(expected), _leaves(in_float64)
    assert len(got) == len(expected) == len(in_float64)
    for g, e, w in zip(got, expected, in_float64):
        assert type(g) is type(e) and np.asarray(g).dtype == np.asarray(e).dtype, (mode, type(g), type(e))
        assert np.shape(g) == np.shape(e), mode
        np.testing.assert_allclose(g, e, rtol=1e-5, atol=1e-5, err_msg=mode)
        np.testing.assert_allclose(g, w, rtol=1e-6, atol=1e-6, err_msg=mode)  # (the float64 code, rounded)


def test_long_double_data_runs_as_python_said_once_with_pythons_numbers():
    x = X.astype(np.longdouble)
    df = s2s_ad.grad(PROGRAMS.decay, backend="numba")
    with pytest.warns(CompileFallbackWarning, match="long double") as said:
        got = df(x, 0.3)
    assert [w.filename for w in said if w.category is CompileFallbackWarning] == [__file__]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        again = df(x, 0.3)
    expected = s2s_ad.grad(PROGRAMS.decay)(x, 0.3)
    assert got.dtype == again.dtype == expected.dtype == np.longdouble
    np.testing.assert_array_equal(got, expected)
    np.testing.assert_array_equal(again, expected)


def test_casting_keeps_numpys_types_and_refuses_what_would_change_a_number():
    from s2s_ad.targets.numba.narrow import _Unfit, cast, shape_of
    expected = (np.float32(1.5), [np.ones(2, np.float32), np.ones(3, np.float32)], {"a": 2.0, "n": 3}, None)
    shape = shape_of(expected)
    got = cast((1.25, [np.arange(4.0), np.arange(2.0), np.arange(1.0)], {"a": np.float64(0.5), "n": 7}, None), shape)
    assert type(got[0]) is np.float32 and got[0] == np.float32(1.25)
    assert [g.dtype for g in got[1]] == [np.float32] * 3 and [len(g) for g in got[1]] == [4, 2, 1]
    assert type(got[2]["a"]) is float and type(got[2]["n"]) is int and got[2]["n"] == 7
    for unfit in [(1.25, [], {"a": 0.5}, None),  # another dict's keys
                  (1.25, [], {"a": 0.5, "n": 7.5}, None),  # a float where NumPy gives an int
                  (1.25 + 1j, [], {"a": 0.5, "n": 7}, None),  # a complex where NumPy gives a real
                  (1.25, [], {"a": 0.5, "n": 7}, 0.0)]:  # a number where NumPy gives None
        with pytest.raises(_Unfit):
            cast(unfit, shape)
    mixed = shape_of([np.float32(1.0), 2.0])  # a list of two types: only its own length fits
    with pytest.raises(_Unfit):
        cast([1.0, 2.0, 3.0], mixed)
    stack = object()  # (a tape's record stack, in Python's run): passed on as the compiled code gives it
    assert cast([np.zeros(2)], shape_of([stack]))[0].dtype == np.float64
