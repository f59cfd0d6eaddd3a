"""An adjoint carried through a reverse loop, multiplied once per trip by its local derivative
(``s2s_ad/passes/preaccumulate.py``).

Oracles: central differences, closed forms, and the pass left out (the same gradient to rounding);
each test also says whether the loop was rewritten, so a rewrite that silently stops (or starts
where it must not) fails here.
"""
from __future__ import annotations

import textwrap

import numpy as np
import pytest

import s2s_ad
from conftest import module_from_source, numeric_grad


@pytest.fixture(scope="module")
def programs(tmp_path_factory):
    return module_from_source(tmp_path_factory.mktemp("preaccumulate"), "preaccumulate_program_", textwrap.dedent("""
        import numpy as np

        def logistic(r, x, n):
            s = 0.5
            for i in range(n):
                s = r * s * (1.0 - s) + 0.001 * x
            return s

        def linear(a, x, n):
            s = 0.0
            for i in range(n):
                s = a * s + x
            return s

        def reads_a_partial_adjoint(a, x, n):
            s = x
            for i in range(n):
                t = s * s
                s = a * t + 0.5 * s
            return s

        def quotient(a, x, n):
            s = x
            for i in range(n):
                s = s / (1.0 + a * i) - 0.1 * s * s
            return s

        def two_coupled(a, b, n):
            u, v = 1.0, 0.5
            for i in range(n):
                u, v = u + 0.01 * (a * u - u * v), v + 0.01 * (u * v - b * v)
            return u * u + v

        def branch_in_the_trip(a, x, n):
            s = x
            for i in range(n):
                if i % 2 == 0:
                    s = a * s * (1.0 - s)
                else:
                    s = s + 0.05 * np.sin(s)
            return s

        def integer_factors(x, k, n):
            s = x
            for i in range(n):
                s = s * k * k + s
            return s

        def elementwise(a, x, n):
            s = x * 0.5
            for i in range(n):
                s = a * s * (1.0 - s)
            return np.sum(s)
    """))


def _source(fn, wrt, args):
    return s2s_ad.grad(fn, wrt=wrt).source_for(*args)


def _check_differences(fn, args, wrt, got, rtol=1e-6):
    for value, i in zip(got if isinstance(got, tuple) else (got,), wrt if isinstance(wrt, tuple) else (wrt,)):
        np.testing.assert_allclose(value, numeric_grad(fn, args, i), rtol=rtol, atol=1e-9)


@pytest.mark.parametrize("name, args, carried", [
    ("logistic", (3.1, 0.2, 60), "d_s = d_s * ("),
    ("reads_a_partial_adjoint", (0.7, 0.3, 30), "d_s = d_s * ("),
    ("quotient", (0.3, 0.4, 25), "d_s = d_s * ("),
])
def test_a_scalar_recurrence_is_multiplied_once_per_trip(programs, name, args, carried):
    fn = getattr(programs, name)
    source = _source(fn, (0, 1), args)
    assert carried in source, source
    _check_differences(fn, args, (0, 1), s2s_ad.grad(fn, wrt=(0, 1))(*args))


def test_the_closed_form_of_a_linear_recurrence(programs):
    a, x, n = 0.9, 2.0, 40   # s_n = x (1 + a + ... + a^(n-1)); d/dx = (1 - a^n) / (1 - a)
    d_a, d_x = s2s_ad.grad(programs.linear, wrt=(0, 1))(a, x, n)
    assert d_x == pytest.approx((1 - a ** n) / (1 - a), rel=1e-13)
    d_s_by_a = x * sum(k * a ** (k - 1) for k in range(1, n))
    assert d_a == pytest.approx(d_s_by_a, rel=1e-12)


@pytest.mark.parametrize("name, args, wrt", [
    ("two_coupled", (1.1, 0.4, 50), (0, 1)),        # each adjoint depends on two: left as written
    ("branch_in_the_trip", (2.9, 0.2, 40), (0, 1)),  # a branch in the trip: left as written
])
def test_what_is_not_one_adjoint_times_a_coefficient_is_left_as_written(programs, name, args, wrt):
    fn = getattr(programs, name)
    source = _source(fn, wrt, args)
    reverse = source.split("# reverse sweep")[1]
    assert not any(line.strip().startswith("d_") and " * (" in line and line.split("=")[0].strip() in
                   line.split("=")[1].split("*")[0] for line in reverse.splitlines()), source
    _check_differences(fn, args, wrt, s2s_ad.grad(fn, wrt=wrt)(*args))


def test_arrays_keep_their_shapes(programs):
    x = np.linspace(0.1, 0.9, 5)
    got = s2s_ad.grad(programs.elementwise, wrt=(0, 1))(2.5, x, 20)
    assert np.shape(got[1]) == x.shape
    _check_differences(programs.elementwise, (2.5, x, 20), (0, 1), got)


def test_the_split_form_and_the_hessian_agree_with_the_gradient(programs):
    fn, args = programs.logistic, (3.1, 0.2, 40)
    gradient = s2s_ad.grad(fn, wrt=(0, 1))(*args)
    value, pullback = s2s_ad.vjp(fn, *args)
    np.testing.assert_allclose(pullback(1.0)[:2], gradient, rtol=1e-13)
    hessian = np.array(s2s_ad.hessian(fn, wrt=(0, 1))(*args), dtype=float)
    step = 1e-5
    for i in range(2):
        up, down = list(args), list(args)
        up[i] += step
        down[i] -= step
        row = (np.array(s2s_ad.grad(fn, wrt=(0, 1))(*up)) - np.array(s2s_ad.grad(fn, wrt=(0, 1))(*down))) / (2 * step)
        np.testing.assert_allclose(hessian[i], row, rtol=1e-5, atol=1e-8)


def test_one_value_is_recorded_once(programs):
    # s is read by the trip's reverse twice, under two names the merge copies made one: one record
    source = _source(programs.reads_a_partial_adjoint, (0, 1), (0.7, 0.3, 30))
    assert "tape.append(s)" in source and "s = tape.pop()" in source, source


def test_a_coefficient_of_integers_is_computed_in_floats(programs):
    # the unfactored code multiplied the adjoint by k, then by k again: floats; k * k in int64 overflows
    k = np.int64(2 ** 40)
    source = _source(programs.integer_factors, 0, (1.0, k, 3))
    assert "d_s = d_s * (1 + 1.0 * k * k)" in source, source
    got = s2s_ad.grad(programs.integer_factors, wrt=0)(1.0, k, 3)
    assert got == pytest.approx((2.0 ** 80 + 1) ** 3, rel=1e-12)
