"""Which rules compile under ``backend="numba"`` (issue 36): the everyday ones compile (no
``CompileFallbackWarning``, warnings as errors) and give the Python backend's numbers and dtypes and
central differences' numbers; the docs' "what compiles" table is the registry's
(``python -m s2s_ad.api.rule_table --numba``); what still falls back says so at the user's call.
"""
from __future__ import annotations

import math
import os
import subprocess
import sys
import warnings

import numpy as np
import pytest

import s2s_ad
from s2s_ad import CompileFallbackWarning
from conftest import numeric_grad

numba = pytest.importorskip("numba")

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, ROOT)  # the repository's top: benchmarks/ (not installed with the package)

from benchmarks.numba_fallbacks import CASES  # noqa: E402
COMPILED = [case for case in CASES if case[3]]
FALLING_BACK = [case for case in CASES if not case[3]]


@pytest.mark.parametrize("case", COMPILED, ids=[case[0] for case in COMPILED])
def test_everyday_rules_compile_and_agree_with_python_and_central_differences(case):
    name, fn, make, _ = case
    x = make()
    with warnings.catch_warnings():
        warnings.simplefilter("error", CompileFallbackWarning)  # a fallback fails the test
        df = s2s_ad.grad(fn, backend="numba")
        got = df(x)
        again = df(x * 1.25)
    python = s2s_ad.grad(fn, backend="python")
    expected = python(x)
    assert np.asarray(got).dtype == np.asarray(expected).dtype and np.shape(got) == np.shape(expected)
    # float32 data: computed in float64 and rounded once, where NumPy rounds at each operation
    rtol, atol = (1e-5, 1e-6) if np.asarray(x).dtype == np.float32 else (1e-12, 1e-14)
    np.testing.assert_allclose(got, expected, rtol=rtol, atol=atol)
    np.testing.assert_allclose(again, python(x * 1.25), rtol=rtol, atol=atol)
    np.testing.assert_allclose(got, numeric_grad(fn, (np.asarray(x, np.float64),), 0), rtol=max(rtol, 1e-6), atol=1e-8)


@pytest.mark.parametrize("case", FALLING_BACK, ids=[case[0] for case in FALLING_BACK])
def test_what_still_runs_as_python_says_so_at_the_users_call_with_pythons_numbers(case):
    name, fn, make, _ = case
    x = make()
    df = s2s_ad.grad(fn, backend="numba")
    with pytest.warns(CompileFallbackWarning) as said:
        got = df(x)
    fallbacks = [w for w in said if w.category is CompileFallbackWarning]
    assert [w.filename for w in fallbacks] == [__file__]  # this line's file, not s2s_ad/api/calling.py
    message = str(fallbacks[0].message)
    assert "long double" in message
    expected = s2s_ad.grad(fn, backend="python")(x)
    assert np.asarray(got).dtype == np.asarray(expected).dtype
    np.testing.assert_array_equal(got, expected)


def test_a_pad_reflect_and_a_sort_with_ties_and_nan_agree_with_numpy_compiled():
    """The compiled np.pad's reflect and symmetric and the compiled np.sort along an axis are NumPy's,
    element for element, widths wider than the axis included; sort_grad sends ties back stably."""
    from s2s_ad.targets.numba import runtime
    from s2s_ad.targets.numba.rules.numpy_shape import shape  # (the template module s2s_ad.templates.numpy_shape)
    runtime.register()

    @numba.njit
    def padded(a, before, after, symmetric):
        if symmetric:
            return np.pad(a, (before, after), mode="symmetric")
        return np.pad(a, (before, after), mode="reflect")

    for n in range(1, 5):
        a = np.arange(1.0, n + 1.0)
        for before in range(0, 9):
            for after in (0, 1, 7):
                for symmetric in (False, True):
                    mode = "symmetric" if symmetric else "reflect"
                    np.testing.assert_array_equal(padded(a, before, after, symmetric), np.pad(a, (before, after), mode=mode))

    @numba.njit
    def sorted_rows(a):
        return np.sort(a, axis=0)

    @numba.njit
    def sent_back(grad, a):
        return shape.sort_grad(grad, a, 0)

    a = np.array([[0.5, np.nan], [0.5, 1.0], [-1.0, 0.5], [0.5, -2.0]])
    np.testing.assert_array_equal(sorted_rows(a), np.sort(a, axis=0))
    grad = np.arange(8.0).reshape(4, 2)
    np.testing.assert_array_equal(sent_back(grad, a), shape.sort_grad(grad, a, 0))


EINSUMS = [("ij,jk->ik", [(2, 3), (3, 4)]), ("ij,jk", [(2, 3), (3, 4)]), ("ba", [(2, 3), (4, 5)][:1]),
           ("ii->", [(3, 3)]), ("ii->i", [(3, 3)]), ("ij->", [(2, 3)]), ("i,i->i", [(1,), (3,)]),
           ("iJ,Jk->ki", [(2, 1), (3, 4)]), ("ij,j,ik->k", [(2, 3), (3,), (2, 4)]), ("i,j->ij", [(3,), (2,)]),
           ("iij,j", [(2, 2, 3), (3,)]), ("i,i", [(0,), (0,)])]


@pytest.mark.parametrize("subscripts, shapes", EINSUMS, ids=[s for s, _ in EINSUMS])
def test_einsum_and_einsum_grad_compiled_give_numpys_and_the_helpers_numbers(subscripts, shapes):
    """The compiled np.einsum (a loop nest written for the subscripts) is np.einsum's result, a number
    where NumPy's is one, length 1 broadcast; einsum_grad's adjoint of each operand is the helper's.
    (Not compiled, so running as Python: "..." and a rearrangement of one operand, NumPy's view.)"""
    from s2s_ad.targets.numba import runtime
    from s2s_ad.targets.numba.rules.numpy_linalg import linalg  # (the template module s2s_ad.templates.numpy_linalg)
    runtime.register()
    rng = np.random.default_rng(3)
    operands = [rng.standard_normal(shape) for shape in shapes]
    count = len(operands)
    view = count == 1 and "->" in subscripts and len(set(subscripts.split("->")[1])) == len(set(subscripts[:-3]))
    if not view and subscripts != "ba":
        product = numba.njit(eval("lambda " + ", ".join(f"a{i}" for i in range(count)) +
                                  f": np.einsum({subscripts!r}, " + ", ".join(f"a{i}" for i in range(count)) + ")"))
        got, want = product(*operands), np.einsum(subscripts, *operands)
        assert np.shape(got) == np.shape(want)
        np.testing.assert_allclose(got, want, rtol=1e-13, atol=1e-14)
    want = np.einsum(subscripts, *operands)
    grad = rng.standard_normal(np.shape(want)) if np.ndim(want) else 1.7
    slots = operands + [None] * (4 - count)
    for which in range(count):
        adjoint = numba.njit(eval(f"lambda grad, a, b, c, d: einsum_grad(grad, {subscripts!r}, {which}, "
                                  f"{'abcd'[which]}, a, b, c, d)", {"einsum_grad": linalg.einsum_grad}))
        expected = linalg.einsum_grad(grad, subscripts, which, operands[which], *slots)
        got = adjoint(grad, *slots)
        assert got.shape == expected.shape and got.dtype == expected.dtype
        np.testing.assert_allclose(got, expected, rtol=1e-13, atol=1e-14)
        # a number for the result's adjoint (broadcast), and a 0 past the operands (a missing tangent: zeros)
        np.testing.assert_allclose(adjoint(0.5, *slots), linalg.einsum_grad(0.5, subscripts, which, operands[which],
                                                                            *slots), rtol=1e-13, atol=1e-14)
        if count < 4:
            missing = slots[:count] + [0.0] + slots[count + 1:]
            assert np.array_equal(adjoint(grad, *missing), np.zeros(np.shape(operands[which])))
            assert np.array_equal(linalg.einsum_grad(grad, subscripts, which, operands[which], *missing),
                                  np.zeros(np.shape(operands[which])))


def test_compiled_einsum_raises_where_numpy_raises_and_leaves_views_and_ellipses_to_python():
    from numba.core.errors import TypingError
    from s2s_ad.targets.numba import runtime
    runtime.register()
    product = numba.njit(lambda a, b: np.einsum("ij,jk->ik", a, b))
    with pytest.raises(ValueError):
        np.einsum("ij,jk->ik", np.ones((2, 3)), np.ones((2, 4)))
    with pytest.raises(ValueError):
        product(np.ones((2, 3)), np.ones((2, 4)))
    with pytest.raises(ValueError):
        numba.njit(lambda a: np.einsum("ii->", a))(np.ones((1, 3)))  # (NumPy: lengths 1 != 3)
    for subscripts in ("ji", "ij->ji", "ii->i", "...i->i"):
        with pytest.raises(TypingError):
            numba.njit(eval(f"lambda a: np.einsum({subscripts!r}, a)"))(np.ones((3, 3)))


def test_cumprod_prod_others_and_cumprod_grad_compiled_give_numpys_and_the_helpers_numbers():
    """Products in the helpers' order: the same numbers exactly, zeros, -0.0, inf and nan included."""
    from s2s_ad.targets.numba import runtime
    from s2s_ad.targets.numba.rules.numpy_reductions import template
    runtime.register()
    reductions = template("numpy_reductions")
    cumprod = numba.njit(lambda a, axis: np.cumprod(a, axis=axis))
    others = numba.njit(lambda a, axis: reductions.prod_others(a, axis))
    others_flat = numba.njit(lambda a: reductions.prod_others(a))
    sent_back = numba.njit(lambda grad, a, axis: reductions.cumprod_grad(grad, a, axis))
    sent_back_flat = numba.njit(lambda grad, a: reductions.cumprod_grad(grad, a))
    rng = np.random.default_rng(5)
    for shape in [(5,), (3, 4), (2, 3, 4), (0, 3), (3, 0)]:
        a = rng.standard_normal(shape)
        if a.size > 3:
            a.flat[1], a.flat[2] = 0.0, -0.0
        if a.size > 6:
            a.flat[5], a.flat[6] = np.inf, np.nan
        for axis in range(-a.ndim, a.ndim):
            for got, want in ((cumprod(a, axis), np.cumprod(a, axis=axis)),
                              (others(a, axis), reductions.prod_others(a, axis))):
                assert got.dtype == want.dtype and got.shape == want.shape
                np.testing.assert_array_equal(got, want)
                np.testing.assert_array_equal(np.signbit(got), np.signbit(want))
            grad = rng.standard_normal(a.shape)
            np.testing.assert_array_equal(sent_back(grad, a, axis), reductions.cumprod_grad(grad, a, axis))
        np.testing.assert_array_equal(others_flat(a), reductions.prod_others(a))
        grad = rng.standard_normal(a.size)
        np.testing.assert_array_equal(sent_back_flat(grad, a), reductions.cumprod_grad(grad, a))
    with pytest.raises(ValueError):
        cumprod(np.ones((2, 3)), 2)


def test_diff_piece_compiled_gives_the_helpers_numbers():
    """np.diff's adjoint, nothing prepended or appended: the helper's numbers exactly along any axis, n
    0 to 3; 0.0 for the missing prepended and appended values."""
    from s2s_ad.targets.numba import runtime
    from s2s_ad.targets.numba.rules.numpy_shape import shape
    runtime.register()
    sent_back = numba.njit(lambda grad, a, n, axis: (shape.diff_piece(grad, a, n, axis, None, None, 1),
                                                     shape.diff_piece(grad, a, n, axis, None, None, 0),
                                                     shape.diff_piece(grad, a, n, axis, None, None, 2)))
    diff_grad = numba.njit(lambda grad, a, n, axis: shape.diff_grad(grad, a, n, axis))
    rng = np.random.default_rng(7)
    for a_shape in [(6,), (5, 4), (3, 4, 5)]:
        a = rng.standard_normal(a_shape)
        for axis in range(-a.ndim, a.ndim):
            for n in range(4):
                grad = rng.standard_normal(np.diff(a, n, axis).shape)
                got = sent_back(grad, a, n, axis)
                want = shape.diff_piece(grad, a, n, axis, None, None, 1)
                assert got[0].dtype == want.dtype and got[0].shape == want.shape
                np.testing.assert_array_equal(got[0], want)
                np.testing.assert_array_equal(np.signbit(got[0]), np.signbit(want))
                assert got[1:] == (0.0, 0.0) == (shape.diff_piece(grad, a, n, axis, None, None, 0),
                                                 shape.diff_piece(grad, a, n, axis, None, None, 2))
                np.testing.assert_array_equal(diff_grad(grad, a, n, axis), shape.diff_grad(grad, a, n, axis))


def test_the_docs_table_of_what_compiles_is_the_registrys():
    pytest.importorskip("scipy.special")  # the docs' table is made where SciPy is installed
    printed = subprocess.run([sys.executable, "-m", "s2s_ad.api.rule_table", "--numba"], capture_output=True,
                             text=True, check=True, cwd=ROOT).stdout
    with open(os.path.join(ROOT, "docs", "rules.md"), encoding="utf-8") as f:
        page = f.read()
    shown = page.split("<!-- numba table: begin -->\n")[1].split("<!-- numba table: end -->")[0]
    assert shown == printed, "docs/rules.md's numba table is out of date: python -m s2s_ad.api.rule_table --numba"


def test_every_rule_is_listed_with_whether_it_compiles_and_the_everyday_ones_do():
    from s2s_ad.rules import registry
    from s2s_ad.targets.numba.coverage import missing_calls
    listed = missing_calls()
    builtin = {rule.fn for rule in registry.all_adjoint_rules()
               if rule.namespace.get("__name__", "").startswith("s2s_ad.templates")}
    assert set(listed) == builtin  # every rule of s2s_ad's templates, once
    for fn in (np.cumsum, np.sort, np.linalg.solve, np.interp, np.pad, np.trace, np.dot, np.matmul, np.sum,
               np.mean, np.sin, np.exp, np.where, np.einsum, np.diag, np.prod, np.cumprod,
               np.diff, np.ediff1d, np.nanprod, np.nancumprod):
        assert listed[fn] == (), (fn, listed[fn])
    for fn in (np.linspace, np.polyval, np.convolve, np.correlate, np.cross, np.median, np.quantile, np.percentile,
               np.meshgrid, np.kron, np.average, np.cov, np.corrcoef, np.gradient, math.gamma, math.lgamma,
               np.inner, np.tensordot):
        assert listed[fn] == (), (fn, listed[fn])
    assert "svd_factors" in listed[np.linalg.svd]  # (no compiled version: runs as Python, said)


@pytest.mark.parametrize("case", COMPILED, ids=[case[0] for case in COMPILED])
def test_the_same_rules_in_jvp_and_hessian_under_numba_agree_with_python_and_central_differences(case):
    # (jvp and hessian run as Python under backend="numba" today: issue 36's later part compiles them)
    name, fn, make, _ = case
    x = make()
    direction = np.linspace(-0.7, 0.9, x.size).reshape(x.shape)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", CompileFallbackWarning)
        tangent = s2s_ad.jvp(fn, (x,), (direction,), backend="numba")[1]
        hessian = s2s_ad.hessian(fn, backend="numba")(x)
    assert tangent == pytest.approx(s2s_ad.jvp(fn, (x,), (direction,))[1], rel=1e-12)
    np.testing.assert_allclose(tangent, numeric_grad(lambda t: fn(x + t * direction), (0.0,), 0), rtol=1e-6)
    np.testing.assert_allclose(hessian, s2s_ad.hessian(fn)(x), rtol=1e-12, atol=1e-14)
    gradient = s2s_ad.grad(fn)
    eps = 1e-6
    columns = [(gradient(x + eps * e.reshape(x.shape)) - gradient(x - eps * e.reshape(x.shape))) / (2 * eps)
               for e in np.eye(x.size)]
    np.testing.assert_allclose(np.reshape(hessian, (x.size, x.size)),
                               np.array([np.ravel(c) for c in columns]).T, rtol=1e-5, atol=1e-6)


# Rules whose result is a list, which the split form's tape would hand over: there the vjp runs as Python
# (handed.py hands numbers, arrays and ranges), said by a warning; grad compiles (the test above).
HANDS_A_LIST = {"sorted (an array's items, reverse=True too): sorted_adjoint"}


@pytest.mark.parametrize("label, fn, make, compiles", COMPILED, ids=[case[0] for case in COMPILED])
def test_vjp_of_each_compiled_rule_compiles_both_parts(label, fn, make, compiles):
    # the split form's parts compile apart, their tape handed between them (numba/handed.py), with no fallback
    x = make()
    if label in HANDS_A_LIST:
        with pytest.warns(CompileFallbackWarning, match="the split form"):
            value, pull = s2s_ad.vjp(fn, x, backend="numba")
    else:
        with warnings.catch_warnings():
            warnings.simplefilter("error", CompileFallbackWarning)
            value, pull = s2s_ad.vjp(fn, x, backend="numba")
    with warnings.catch_warnings():
        warnings.simplefilter("error", CompileFallbackWarning)
        adjoint = pull(1.0)[0]
        again = pull(2.0)[0]
    assert bool(pull._split.handed) == (label not in HANDS_A_LIST)
    np.testing.assert_allclose(value, fn(x), rtol=1e-13)
    np.testing.assert_allclose(adjoint, s2s_ad.grad(fn)(x), rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(again, 2.0 * adjoint, rtol=1e-12, atol=1e-14)


def _rosenbrock_vectorised(x):
    return np.sum(100.0 * (x[1:] - x[:-1] ** 2) ** 2 + (1.0 - x[:-1]) ** 2)


def test_a_hessian_of_products_and_sums_compiles_under_numba():
    # add_tangent, mul_tangent and the cross terms of a * b have compiled versions (operators.py beside
    # the target): the forward-over-reverse code of straight-line NumPy compiles, no fallback
    x = np.linspace(0.1, 0.9, 7)
    with warnings.catch_warnings():
        warnings.simplefilter("error", CompileFallbackWarning)
        hessian = s2s_ad.hessian(_rosenbrock_vectorised, backend="numba")(x)
    np.testing.assert_allclose(hessian, s2s_ad.hessian(_rosenbrock_vectorised)(x), rtol=1e-12, atol=1e-12)
    gradient = s2s_ad.grad(_rosenbrock_vectorised)
    columns = [(gradient(x + 1e-6 * e) - gradient(x - 1e-6 * e)) / 2e-6 for e in np.eye(x.size)]
    np.testing.assert_allclose(hessian, np.array(columns), rtol=1e-5, atol=1e-5)
