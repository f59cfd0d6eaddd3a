"""Issue 35, convergence loops: ``while s2s_ad.fixed_point(err > tol):`` reversed as a fixed-point
iteration of its own (Christianson's two-phase adjoint, ``ad/fixed_point.py``).  Checked against
central differences, the same loop fully recorded (unmarked), both backends, in grad, jvp,
Hessian and grad of grad; the tape holds two states whatever the number of iterations; what the
adjoint cannot follow is refused at its line."""
from __future__ import annotations

import warnings

import numpy as np
import pytest

import s2s_ad
import fixed_point_functions as F
from conftest import numeric_grad

B = np.array([0.1, 0.2, 0.3])
CASES = [
    (F.babylonian, F.babylonian_plain, (2.0,), 0),
    (F.equilibrium, F.equilibrium_plain, (0.7, B), (0, 1)),
    (F.with_helper_and_branch, None, (0.8, 0.3), (0, 1)),
    (F.in_a_loop, None, (0.2, 3), 0),
    (F.never_runs, None, (1.5,), 0),
    (F.two_states, None, (0.3,), 0),
    (F.jacobi_like, None, (0.7, np.array([0.2, 0.5, 0.9])), (0, 1)),  # a loop inside, two states
]
IDS = [case[0].__name__ for case in CASES]


def _flat(g):
    return np.hstack([np.ravel(v) for v in (g if isinstance(g, tuple) else (g,))])


def _differences(f, args, wrt):
    return np.hstack([np.ravel(numeric_grad(f, args, i)) for i in np.atleast_1d(wrt)])


@pytest.mark.parametrize("f, plain, args, wrt", CASES, ids=IDS)
def test_gradient_against_differences_and_the_recorded_loop(f, plain, args, wrt):
    ours = _flat(s2s_ad.grad(f, wrt=wrt)(*args))
    np.testing.assert_allclose(ours, _differences(f, args, wrt), rtol=1e-6, atol=1e-8)
    if plain is not None:  # the loop unmarked is recorded step by step: equal to the solver's tolerance
        np.testing.assert_allclose(ours, _flat(s2s_ad.grad(plain, wrt=wrt)(*args)), rtol=1e-10, atol=1e-12)
    value, _ = s2s_ad.value_and_grad(f, wrt=wrt)(*args)
    assert value == pytest.approx(f(*args), rel=1e-14)


@pytest.mark.parametrize("f, plain, args, wrt", CASES, ids=IDS)
def test_numba_equals_python(f, plain, args, wrt):
    pytest.importorskip("numba")
    with warnings.catch_warnings():
        warnings.simplefilter("error", s2s_ad.CompileFallbackWarning)  # (it compiles: no fallback)
        compiled = _flat(s2s_ad.grad(f, wrt=wrt, backend="numba")(*args))
    np.testing.assert_allclose(compiled, _flat(s2s_ad.grad(f, wrt=wrt)(*args)), rtol=1e-12, atol=1e-14)


@pytest.mark.parametrize("f, plain, args, wrt", [c for c in CASES if c[0] not in (F.equilibrium, F.jacobi_like)],
                         ids=[i for i in IDS if i not in ("equilibrium", "jacobi_like")])
def test_forward_mode_and_second_order(f, plain, args, wrt):
    tangents = (1.0,) + tuple(None if isinstance(a, int) else 0.0 for a in args[1:])
    _, tangent = s2s_ad.jvp(f, args, tangents)
    assert tangent == pytest.approx(numeric_grad(f, args, 0), rel=1e-6, abs=1e-8)
    first = s2s_ad.grad(f, wrt=0)
    second = numeric_grad(first, args, 0, eps=1e-5)
    assert s2s_ad.grad(first, wrt=0)(*args) == pytest.approx(second, rel=1e-5, abs=1e-7)
    assert s2s_ad.hessian(f, wrt=0)(*args) == pytest.approx(second, rel=1e-5, abs=1e-7)


def test_the_tape_holds_two_states_whatever_the_iterations():
    text = s2s_ad.source(F.equilibrium, wrt=(0, 1), args=(0.7, B))
    forward, backward = text.split("# reverse sweep")
    assert forward.count("tape.append(") == 2 and backward.count("tape.pop()") == 2
    assert "for step in range(trips)" in backward  # the adjoint iterated as often as the loop ran
    plain = s2s_ad.source(F.equilibrium_plain, wrt=(0, 1), args=(0.7, B)).split("# reverse sweep")[0]
    assert "tape.append(" in plain.split("while True")[1]  # (unmarked: recorded every iteration)


def stops_early(a):
    x = a
    err = 1.0
    while s2s_ad.fixed_point(err > 1e-12):
        x_new = 0.5 * (x + a / x)
        err = abs(x_new - x)
        x = x_new
        if x < 0.0:
            break
    return x


def writes_in_place(a):
    x = np.array([a, a])
    err = 1.0
    while s2s_ad.fixed_point(err > 1e-12):
        old = x[0]
        x[0] = 0.5 * (x[0] + a / x[0])
        err = abs(x[0] - old)
    return x[0]


def prints(a):
    x = a
    err = 1.0
    while s2s_ad.fixed_point(err > 1e-12):
        x_new = 0.5 * (x + a / x)
        err = abs(x_new - x)
        print(err)
        x = x_new
    return x


def two_arguments(a):
    x = a
    while s2s_ad.fixed_point(x > 1.0, 3):
        x = x * 0.5
    return x


@pytest.mark.parametrize("f, construct", [
    (stops_early, "a fixed_point loop that can stop early"),
    (writes_in_place, "a fixed_point loop that writes into an array"),
    (prints, "print, assert, logging or warnings in a fixed_point loop"),
    (two_arguments, "this use of fixed_point"),
])
def test_what_the_adjoint_cannot_follow_is_refused_at_its_line(f, construct):
    with pytest.raises(s2s_ad.TransformError, match=construct) as caught:
        s2s_ad.grad(f)(2.0)
    assert "test_fixed_point.py" in str(caught.value)


def test_run_as_python_it_is_the_test():
    assert F.babylonian(2.0) == F.babylonian_plain(2.0)
    assert s2s_ad.fixed_point(np.float64(2.0) > 1.0) is True


def draws(a):
    x = a
    err = 1.0
    while s2s_ad.fixed_point(err > 1e-12):
        x_new = 0.5 * (x + a / x) + 1e-3 * np.random.normal()
        err = abs(x_new - x)
        x = x_new
    return x


def test_a_draw_in_the_loop_is_refused():
    with pytest.raises(s2s_ad.TransformError, match="random draw .* in a fixed_point loop"):
        s2s_ad.grad(draws)(2.0)
