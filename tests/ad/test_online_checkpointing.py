"""Issue 35, while loops: ``while s2s_ad.checkpointed(test, snapshots=c):`` counts its trips in a
first unrecorded pass, then reverses them on the binomial schedule (``ad/online.py``).  The gradient
equals the recorded loop's bit for bit; the advances are the count's ``n`` plus Revolve's
``t(n, c)`` (so at most twice the offline minimum), at most ``c`` snapshots; forward mode and
second order go through it; what it cannot follow is refused at its line."""
from __future__ import annotations

import warnings

import numpy as np
import pytest

import s2s_ad
import online_checkpoint_functions as F
from conftest import numeric_grad
from s2s_ad.core import revolve, runtime

U0 = np.linspace(0.2, 0.6, 5)
CASES = [
    (F.orbit, F.orbit_plain, (0.7, 0.01), 0, 301),  # (dt moves the trip count: no difference quotient)
    (F.heat, F.heat_plain, (U0, 0.3), (0, 1), None),
    (F.never_runs, F.never_runs_plain, (1.5,), 0, 0),
]


def _flat(g):
    return np.hstack([np.ravel(v) for v in (g if isinstance(g, tuple) else (g,))])


@pytest.mark.parametrize("c", [1, 2, 3, 7])
@pytest.mark.parametrize("f, plain, args, wrt, trips", CASES, ids=[case[0].__name__ for case in CASES])
def test_equal_to_the_recorded_loop_with_the_advances_counted(f, plain, args, wrt, trips, c):
    df = s2s_ad.grad(f, wrt=wrt)
    ours = _flat(df(*args, c))
    np.testing.assert_array_equal(ours, _flat(s2s_ad.grad(plain, wrt=wrt)(*args, c)))  # the same arithmetic
    differences = np.hstack([np.ravel(numeric_grad(f, args + (c,), i)) for i in np.atleast_1d(wrt)])
    np.testing.assert_allclose(ours, differences, rtol=1e-6, atol=1e-8)
    (entry,) = df.stats()
    n = entry["steps"]
    assert trips is None or n == trips
    assert entry["advances"] == n + revolve.advances(n, c) <= 2 * max(revolve.advances(n, c), 1)
    assert entry["taped"] == n and entry["peak_snapshots"] <= c


@pytest.mark.parametrize("f, plain, args, wrt, trips", CASES, ids=[case[0].__name__ for case in CASES])
def test_numba_compiles_it_with_pythons_numbers_and_counts(f, plain, args, wrt, trips):
    pytest.importorskip("numba")
    df = s2s_ad.grad(f, wrt=wrt, backend="numba")
    with warnings.catch_warnings():
        warnings.simplefilter("error", s2s_ad.CompileFallbackWarning)  # (a fallback says so: none here)
        compiled = _flat(df(*args, 3))
    python = s2s_ad.grad(f, wrt=wrt)
    np.testing.assert_allclose(compiled, _flat(python(*args, 3)), rtol=1e-12, atol=1e-12)
    assert df.stats() == python.stats()


def test_forward_mode_and_second_order():
    args = (0.7, 0.01, 3)
    _, tangent = s2s_ad.jvp(F.orbit, args, (1.0, 0.0, None))
    assert tangent == pytest.approx(numeric_grad(F.orbit, args, 0), rel=1e-6)
    first = s2s_ad.grad(F.orbit)
    second = numeric_grad(first, args, 0, eps=1e-5)
    assert s2s_ad.grad(first)(*args) == pytest.approx(second, rel=1e-5)
    assert s2s_ad.hessian(F.orbit)(*args) == pytest.approx(second, rel=1e-5)
    assert s2s_ad.hessian(F.orbit)(*args) == s2s_ad.hessian(F.orbit_plain)(*args)


def test_random_draws_are_replayed():
    np.random.seed(3)
    ours = s2s_ad.value_and_grad(F.noisy)(0.4, 2)
    after = np.random.random()
    np.random.seed(3)
    stored = s2s_ad.value_and_grad(F.noisy_plain)(0.4, 2)
    assert ours == stored and after == np.random.random()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        np.random.seed(3)
        assert s2s_ad.grad(F.noisy)(0.4, 2) == pytest.approx(
            numeric_grad(lambda x: (np.random.seed(3), F.noisy(x, 2))[1], (0.4,), 0), rel=1e-6)


def test_the_generated_code_counts_then_follows_the_schedule():
    text = s2s_ad.source(F.orbit, wrt=0, args=(0.7, 0.01, 3))
    forward = text.split("# reverse sweep")[0]
    assert "count its trips, unrecorded" in forward and "revolve(len(range(trips))" in forward
    assert forward.index("while True") < forward.index("revolve_forward")


def every(x, n):
    y = x
    while s2s_ad.checkpointed(y < n, every=3):
        y = y * 1.5
    return y


def stops_early(x, c):
    y = x
    while s2s_ad.checkpointed(y < 10.0, snapshots=c):
        y = y * 1.5
        if y > 5.0:
            break
    return y


def writes(x, c):
    y = np.array([x, x])
    while s2s_ad.checkpointed(y[0] < 10.0, snapshots=c):
        y[1] = y[0] + 1.0
        y = y * 1.5
    return y[0] + y[1]


@pytest.mark.parametrize("f, construct", [
    (every, "this use of checkpointed in a while loop"),
    (stops_early, "a checkpointed loop that can stop early"),
    (writes, "a checkpointed loop that writes in place into the array y held before it"),
])
def test_what_it_cannot_follow_is_refused_at_its_line(f, construct):
    with pytest.raises(s2s_ad.TransformError, match=construct) as caught:
        s2s_ad.grad(f)(1.0, 3)
    assert "test_online_checkpointing.py" in str(caught.value)


def test_run_as_python_it_is_the_test():
    assert F.orbit(0.7, 0.01, 3) == F.orbit_plain(0.7, 0.01, 3)
    runtime.clear_checkpoint_stats()
