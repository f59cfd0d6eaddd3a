"""checkpointed(steps, snapshots=c): the binomial schedule (Revolve), its cost against Griewank and
Walther's formula, and gradients identical to the fully recorded loop's, on both backends."""
import functools
import math
import warnings

import numpy as np
import pytest

import s2s_ad
from s2s_ad.core import revolve, runtime
from conftest import numeric_grad


# -- the schedule ---------------------------------------------------------------------------------

def t_formula(n, c):
    """t(n, c) = r n - beta(c + 1, r - 1), beta(c, r) = C(c + r, c), beta(c, r - 1) < n <= beta(c, r)
    (written out here, apart from core/revolve.py's)."""
    if n <= 1:
        return 0
    r = 1
    while math.comb(c + r, c) < n:
        r += 1
    return r * n - (math.comb(c + r, c + 1) if r >= 1 else 0)


@functools.lru_cache(maxsize=None)
def t_search(n, c):
    """The fewest advances by exhaustive search over every first split (the recursion Revolve solves)."""
    if n <= 1:
        return 0
    if c == 1:
        return n * (n - 1) // 2
    return min(m + t_search(n - m, c - 1) + t_search(m, c) for m in range(1, n))


def walk(n, c):
    """Run the schedule as the generated code does on a state that is its position: each segment must
    start where the state is, each restore give back the position kept, each step be recorded once,
    last to first.  Returns the schedule (its counts)."""
    schedule = revolve.Schedule(n, c)
    tape, position, held_at_most = [], 0, 0
    for segment in schedule.forward():
        assert segment.start == position
        tape.append(position)
        position = segment.stop
        held_at_most = max(held_at_most, len(tape))
    recorded = [position] if n else []
    for step in range(n - 2, -1, -1):
        position = tape.pop()
        for segment in schedule.turn(step):
            assert segment.start == position
            tape.append(position)
            position = segment.stop
            held_at_most = max(held_at_most, len(tape))
        assert position == step
        recorded.append(step)
    assert recorded == list(range(n - 1, -1, -1)) and tape == [] and schedule.held == []
    assert held_at_most <= c and schedule.peak == held_at_most
    return schedule


def test_the_formula_is_the_exhaustive_minimum():
    for c in range(1, 7):
        for n in range(0, 60):
            assert revolve.advances(n, c) == t_formula(n, c) == t_search(n, c), (n, c)


@pytest.mark.parametrize("c", [1, 2, 3, 5, 10, 20, 38, 50])
def test_the_schedule_advances_exactly_t_n_c_with_at_most_c_snapshots(c):
    sizes = list(range(0, 120)) + [c, c + 1, c + 2, 500, 1000] + ([10_000] if c > 1 else [])
    for n in sizes:
        schedule = walk(n, c)
        assert schedule.advances == t_formula(n, c), (n, c)
        assert schedule.taped == n


def test_known_values():
    assert t_formula(10_000, 38) == revolve.advances(10_000, 38) == 29_180  # r = 3: each step at most 3 times
    assert revolve.repetitions(10_000, 38) == 3
    assert [revolve.advances(n, 1) for n in range(6)] == [0, 0, 1, 3, 6, 10]  # one snapshot: n (n - 1) / 2
    assert [revolve.advances(n, 5) for n in range(1, 8)] == [0, 1, 2, 3, 4, 5, 7]  # n <= c + 1: n - 1


def test_no_snapshots_is_refused():
    with pytest.raises(ValueError, match="snapshots=0"):
        revolve.Schedule(5, 0)


# -- gradients ------------------------------------------------------------------------------------

def helper(v, k):
    return v + k * (v * v - v) * 0.01


def logistic(r, x, n, c):
    s = 0.5
    for i in s2s_ad.checkpointed(range(n), snapshots=c):
        s = r * s * (1 - s) + 0.001 * x * i  # reads the index
    return s


def logistic_plain(r, x, n, c):
    s = 0.5
    for i in range(n):
        s = r * s * (1 - s) + 0.001 * x * i
    return s


def arrays(u0, k, n, c):
    u = u0
    total = 0.0
    for t in s2s_ad.checkpointed(range(n), snapshots=c):
        if t % 3 == 0:
            u = u + k * (u * u - u) * 0.01
        else:
            u = helper(u, 1.0 + 0.1 * k)  # a helper's body
        total = total + np.sum(np.sin(u)) * k * 0.001
    return np.sum(u * u) + total


def arrays_plain(u0, k, n, c):
    u = u0
    total = 0.0
    for t in range(n):
        if t % 3 == 0:
            u = u + k * (u * u - u) * 0.01
        else:
            u = helper(u, 1.0 + 0.1 * k)
        total = total + np.sum(np.sin(u)) * k * 0.001
    return np.sum(u * u) + total


def inside_a_plain_loop(x, m, n, c):
    total = 0.0
    for j in range(m):
        s = x * (j + 1)
        for i in s2s_ad.checkpointed(range(n + j), snapshots=c):
            s = np.sin(s) * 0.9 + x
        total = total + s
    return total


def inside_a_plain_loop_plain(x, m, n, c):
    total = 0.0
    for j in range(m):
        s = x * (j + 1)
        for i in range(n + j):
            s = np.sin(s) * 0.9 + x
        total = total + s
    return total


def draws(x, n, c):
    s = x
    for i in s2s_ad.checkpointed(range(n), snapshots=c):
        s = np.sin(s) + 0.01 * np.random.normal()
    return s


def draws_plain(x, n, c):
    s = x
    for i in range(n):
        s = np.sin(s) + 0.01 * np.random.normal()
    return s


SIZES = [(0, 3), (1, 3), (2, 5), (5, 5), (6, 5), (7, 1), (30, 2), (100, 5), (1000, 10)]


def _grad(f, args, wrt, backend):
    if backend == "numba":
        pytest.importorskip("numba")
    with warnings.catch_warnings():
        warnings.simplefilter("error", s2s_ad.CompileFallbackWarning)  # (the schedule compiles: no fallback)
        return s2s_ad.grad(f, wrt=wrt, backend=backend)(*args)


def numba_compiles_it(x, n):
    s = x
    for i in s2s_ad.checkpointed(range(n), snapshots=2):
        s = np.sin(s) * 0.9 + x
    return s


def test_numba_compiles_the_schedule():
    """The schedule's calls have compiled versions (targets/numba/revolve.py): the code runs compiled,
    without a CompileFallbackWarning, with Python's numbers and counts."""
    pytest.importorskip("numba")
    df = s2s_ad.grad(numba_compiles_it, backend="numba")
    with warnings.catch_warnings():
        warnings.simplefilter("error", s2s_ad.CompileFallbackWarning)
        ours = df(0.4, 9)
    entry = df._by_types[df._types_of((0.4, 9))][0][0]
    assert entry.state["run"] is entry.compiled  # not fallen back
    python = s2s_ad.grad(numba_compiles_it)
    assert ours == pytest.approx(python(0.4, 9), rel=1e-12, abs=1e-12)
    assert df.stats() == python.stats() and df.stats()[0]["advances"] == t_formula(9, 2)
    assert ours == pytest.approx(numeric_grad(numba_compiles_it, (0.4, 9), 0), rel=1e-6)


def test_numba_still_runs_a_schedule_that_draws_as_python_saying_why():
    pytest.importorskip("numba")
    with pytest.warns(s2s_ad.CompileFallbackWarning, match="draws random numbers"):
        np.random.seed(2)
        ours = s2s_ad.grad(draws, backend="numba")(0.3, 20, 3)
    np.random.seed(2)
    assert ours == s2s_ad.grad(draws)(0.3, 20, 3)


# (the self-check compares forward with reverse mode: over 1,000 steps of the logistic map, a chaotic one,
# the two round apart by 1e-4 of a gradient of 1e10; this test compares with the recorded loop, bit for bit)
@pytest.mark.self_check_off
@pytest.mark.parametrize("backend", ["python", "numba"])
@pytest.mark.parametrize("n, c", SIZES)
def test_scalar_state_equals_the_recorded_loop_bit_for_bit(n, c, backend):
    runtime.clear_checkpoint_stats()
    ours = _grad(logistic, (3.1, 0.2, n, c), (0, 1), backend)
    stats = dict(runtime.checkpoint_stats)
    stored = s2s_ad.grad(logistic_plain, wrt=(0, 1))(3.1, 0.2, n, c)
    assert ours == stored  # the same arithmetic in the same order: equal, not close
    (entry,) = stats.values()
    assert entry["advances"] == t_formula(n, c) and entry["taped"] == n and entry["steps"] == n
    assert entry["peak_snapshots"] <= c


@pytest.mark.parametrize("backend", ["python", "numba"])
@pytest.mark.parametrize("n, c", [(1, 4), (3, 4), (4, 4), (5, 4), (40, 3), (100, 5)])
def test_array_state_branches_and_a_helper_equal_the_recorded_loop(n, c, backend):
    u0 = np.linspace(0.2, 0.8, 4)
    runtime.clear_checkpoint_stats()
    ours = _grad(arrays, (u0, 0.7, n, c), (0, 1), backend)
    (entry,) = runtime.checkpoint_stats.values()
    stored = s2s_ad.grad(arrays_plain, wrt=(0, 1))(u0, 0.7, n, c)
    assert np.array_equal(ours[0], stored[0]) and ours[1] == stored[1]
    assert entry["advances"] == t_formula(n, c) and entry["taped"] == n
    assert entry["peak_bytes"] == entry["peak_snapshots"] * (u0.nbytes + 8)  # u and total


@pytest.mark.parametrize("n, c", [(1, 2), (6, 5), (25, 3)])
def test_against_central_differences(n, c):
    u0 = np.linspace(0.2, 0.8, 4)
    args = (u0, 0.7, n, c)
    du, dk = s2s_ad.grad(arrays, wrt=(0, 1))(*args)
    np.testing.assert_allclose(du, numeric_grad(arrays, args, 0), rtol=1e-6, atol=1e-8)
    assert dk == pytest.approx(numeric_grad(arrays, args, 1), rel=1e-6, abs=1e-8)
    dr = s2s_ad.grad(logistic)(2.9, 0.2, n, c)
    assert dr == pytest.approx(numeric_grad(logistic, (2.9, 0.2, n, c), 0), rel=1e-6, abs=1e-8)


@pytest.mark.parametrize("backend", ["python", "numba"])
def test_inside_a_plain_loop_each_run_has_its_schedule(backend):
    runtime.clear_checkpoint_stats()
    ours = _grad(inside_a_plain_loop, (0.4, 3, 6, 2), 0, backend)
    (entry,) = runtime.checkpoint_stats.values()
    assert ours == s2s_ad.grad(inside_a_plain_loop_plain)(0.4, 3, 6, 2)
    assert entry["runs"] == 3 and entry["steps"] == 6 + 7 + 8
    assert entry["advances"] == sum(t_formula(n, 2) for n in (6, 7, 8))


def test_random_draws_are_replayed():
    np.random.seed(5)
    ours = s2s_ad.value_and_grad(draws)(0.3, 20, 3)
    after = np.random.random()
    np.random.seed(5)
    stored = s2s_ad.value_and_grad(draws_plain)(0.3, 20, 3)
    assert ours == stored and after == np.random.random()  # and the states as the loop left them


def test_forward_mode_and_second_order():
    args = (3.1, 0.2, 12, 3)
    tangent = s2s_ad.jvp(logistic, args, (1.0, 0.0, None, None))[1]
    assert tangent == pytest.approx(s2s_ad.grad(logistic)(*args), rel=1e-12)
    assert tangent == pytest.approx(numeric_grad(logistic, args, 0), rel=1e-6)
    first = s2s_ad.grad(logistic)
    second = s2s_ad.grad(first)(*args)
    assert second == pytest.approx(numeric_grad(first, args, 0, eps=1e-5), rel=1e-6)
    assert s2s_ad.hessian(logistic)(*args) == pytest.approx(second, rel=1e-12)
    u0 = np.linspace(0.2, 0.8, 3)
    h = s2s_ad.hessian(arrays)(u0, 0.7, 9, 2)
    g = s2s_ad.grad(arrays)
    columns = [numeric_grad(lambda v: g(v, 0.7, 9, 2)[i], (u0,), 0, eps=1e-5) for i in range(3)]
    np.testing.assert_allclose(h, np.array(columns), rtol=1e-5, atol=1e-7)
    assert np.array_equal(h, s2s_ad.hessian(arrays_plain)(u0, 0.7, 9, 2))


def test_numba_hessian_equals_pythons():
    pytest.importorskip("numba")
    u0 = np.linspace(0.2, 0.8, 3)
    h = s2s_ad.hessian(arrays)(u0, 0.7, 9, 2)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", s2s_ad.CompileFallbackWarning)
        np.testing.assert_allclose(s2s_ad.hessian(arrays, backend="numba")(u0, 0.7, 9, 2), h, rtol=1e-12, atol=1e-12)
    # (the tangent code of the gradient falls back for another reason: a rule's helper, mul_tangent, has
    # no compiled version; not for the schedule)
    assert not [w for w in caught if "schedule" in str(w.message) or "revolve" in str(w.message)]


def test_the_generated_code_walks_the_schedule():
    text = s2s_ad.source(logistic, wrt=(0, 1), args=(3.1, 0.2, 10, 3))
    forward, sweep = text.split("# reverse sweep")
    assert "revolve(len(steps), snapshots_c, 99)" in forward and "revolve_forward(" in forward
    assert "revolve_last(" in forward and "checkpoint_stride" not in text
    assert "revolve_reverse(len(steps), snapshots_c, 99)" in sweep and "revolve_turn(" in sweep


def test_stats_tell_what_the_last_call_did():
    u0 = np.linspace(0.1, 0.9, 100)
    df = s2s_ad.grad(arrays, wrt=(0, 1))
    assert df.stats() == []  # no call yet
    df(u0, 0.3, 10_000, 38)
    (entry,) = df.stats()
    assert entry == dict(line=arrays.__code__.co_firstlineno + 3, steps=10_000, snapshots=38, advances=29_180,
                         taped=10_000, peak_snapshots=38, peak_bytes=38 * (u0.nbytes + 8), runs=1)
    other = s2s_ad.grad(logistic)
    other(3.1, 0.2, 5, 2)
    assert other.stats()[0]["advances"] == t_formula(5, 2) == 6
    assert df.stats()[0]["advances"] == 29_180  # still its own last call's
    df(u0, 0.3, 50, 4)
    assert df.stats()[0]["steps"] == 50 and df.stats()[0]["advances"] == t_formula(50, 4)
    assert s2s_ad.grad(logistic_plain)(3.1, 0.2, 5, 2) and s2s_ad.grad(logistic_plain).stats() == []


def test_cached_calls_tell_their_own_stats_between_others_calls():
    """A cached call skips clearing the stats only while they are as its own last call left them: the
    same call three times counts once each time; a function without checkpoints called between two
    calls of one with them has no stats of its own and leaves the other's alone."""
    plain, counted = s2s_ad.grad(logistic_plain), s2s_ad.grad(logistic)
    for _ in range(3):  # (the second and third calls are cached ones)
        counted(3.1, 0.2, 5, 2)
        assert counted.stats()[0]["steps"] == 5 and counted.stats()[0]["runs"] == 1
        plain(3.1, 0.2, 5, 2)
        plain(3.1, 0.2, 5, 2)
        assert plain.stats() == [] and counted.stats()[0]["runs"] == 1
    runtime.clear_checkpoint_stats()  # (anyone's: the next cached call of each clears for itself)
    counted(3.1, 0.2, 7, 2)
    assert counted.stats()[0]["steps"] == 7 and counted.stats()[0]["runs"] == 1 and plain.stats() == []


def stepped(u, k, n):
    for t in s2s_ad.checkpointed(range(n), snapshots=3):
        u = np.sin(u) * k + 0.1
    return u


def stepped_plain(u, k, n):
    for t in range(n):
        u = np.sin(u) * k + 0.1
    return u


def through_a_helper(u0, k, n):
    u = stepped(u0, k, n)
    u = stepped(u * 0.5, k, n + 1)
    return np.sum(u * u)


def through_a_helper_plain(u0, k, n):
    u = stepped_plain(u0, k, n)
    u = stepped_plain(u * 0.5, k, n + 1)
    return np.sum(u * u)


def nested(x, n):
    s = x
    for i in s2s_ad.checkpointed(range(n), snapshots=2):
        for j in s2s_ad.checkpointed(range(3), snapshots=2):
            s = np.sin(s) * 0.9 + x
    return s


def nested_plain(x, n):
    s = x
    for i in range(n):
        for j in range(3):
            s = np.sin(s) * 0.9 + x
    return s


def last_value_only(x, n):
    y = 0.0
    for t in s2s_ad.checkpointed(range(n), snapshots=2):
        y = x * t * t
    return y


def last_value_only_plain(x, n):
    y = 0.0
    for t in range(n):
        y = x * t * t
    return y


HELPERS_NESTING = [
    (through_a_helper, through_a_helper_plain, (np.linspace(0.1, 0.9, 4), 0.7, 6), (0, 1)),  # the loop in a helper
    (nested, nested_plain, (0.3, 7), 0),  # a binomial loop in a binomial loop
    (last_value_only, last_value_only_plain, (0.3, 5), 0),
]


def _flat(g):
    return np.hstack(g if isinstance(g, tuple) else (g,))


@pytest.mark.parametrize("f, plain, args, wrt", HELPERS_NESTING)
def test_helpers_nesting_on_numba_equal_the_plain_loop(f, plain, args, wrt):
    # equal to the plain loop's numbers on numba (Python's where either runs as Python)
    np.testing.assert_array_equal(_flat(_grad(f, args, wrt, "numba")), _flat(_grad(plain, args, wrt, "numba")))


@pytest.mark.parametrize("f, plain, args, wrt", HELPERS_NESTING)
def test_helpers_nesting_and_a_loop_without_state(f, plain, args, wrt):
    flat = _flat
    ours, stored = s2s_ad.grad(f, wrt=wrt)(*args), s2s_ad.grad(plain, wrt=wrt)(*args)
    np.testing.assert_array_equal(flat(ours), flat(stored))
    np.testing.assert_allclose(flat(ours), np.hstack([numeric_grad(f, args, i) for i in np.atleast_1d(wrt)]),
                               rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(np.ravel(s2s_ad.hessian(f)(*args)), np.ravel(s2s_ad.hessian(plain)(*args)),
                               rtol=1e-12, atol=1e-14)
