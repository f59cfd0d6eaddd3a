"""Issue 35, checkpointed loops that write into arrays (a trajectory into a preallocated array,
element writes on the state): each snapshot holds a copy of the arrays made before the loop that the
body writes into, a restore copies them back in place, the advances write again and the written
array's adjoint is carried through the reverse sweeps.  The gradient equals the unmarked loop's bit
for bit, on the binomial schedule, the square-root segments and the online (while) form; the advances
stay Revolve's ``t(n, c)``; forward mode and second order go through it."""
import warnings

import numpy as np
import pytest

import s2s_ad
import checkpoint_write_functions as W
from conftest import numeric_grad
from s2s_ad.core import revolve

U0 = np.array([0.3, 0.5, 0.7])
TANGENT = np.array([1.0, 0.3, -0.2])
NAMES = ["trajectory", "ring", "accumulate", "sqrt_segments", "online_trajectory", "online_ring", "through_a_view",
         "scalar_cell"]
# (scalar_cell, a 0-d array, is left out of the Numba comparison: its tape of 0-d records does not compile.
# Its unmarked loop's compiled gradient, once all zeros, is tested in tests/targets/test_numba_zero_d_arrays.py)
COMPILED = NAMES[:-1]


def _pair(name):
    return getattr(W, name), getattr(W, name + "_plain")


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("n", [0, 1, 2, 3, 5, 9])
@pytest.mark.parametrize("c", [1, 2, 3, 7])
def test_gradient_equals_the_recorded_loops_exactly(name, n, c):
    f, plain = _pair(name)
    ours = s2s_ad.grad(f, wrt=(0, 1))(U0, 0.5, n, c)
    stored = s2s_ad.grad(plain, wrt=(0, 1))(U0, 0.5, n, c)
    # The same arithmetic in the same order, but that one loop's reverse sweep may take math.cos where the other
    # takes np.cos (passes/number_math.py): on NumPy 1.x, whose sin and cos are its own, they differ by an ulp.
    ulps = 0 if np.lib.NumpyVersion(np.__version__) >= "2.0.0" else 4
    np.testing.assert_array_max_ulp(ours[0], stored[0], maxulp=ulps)
    np.testing.assert_array_max_ulp(np.float64(ours[1]), np.float64(stored[1]), maxulp=ulps)


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("n, c", [(1, 2), (6, 2), (7, 3)])
def test_gradient_agrees_with_central_differences(name, n, c):
    f, _ = _pair(name)
    du, dk = s2s_ad.grad(f, wrt=(0, 1))(U0, 0.5, n, c)
    np.testing.assert_allclose(du, numeric_grad(f, (U0, 0.5, n, c), 0), rtol=1e-6, atol=1e-8)
    assert dk == pytest.approx(numeric_grad(f, (U0, 0.5, n, c), 1), rel=1e-6, abs=1e-8)


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("n, c", [(0, 2), (1, 1), (5, 2), (8, 3)])
def test_forward_mode_and_second_order(name, n, c):
    f, plain = _pair(name)
    args = (U0, 0.5, n, c)
    tangent = s2s_ad.jvp(f, args, (TANGENT, 0.7, None, None))[1]
    assert tangent == s2s_ad.jvp(plain, args, (TANGENT, 0.7, None, None))[1]
    eps = 1e-6
    central = (f(U0 + eps * TANGENT, 0.5 + 0.7 * eps, n, c) - f(U0 - eps * TANGENT, 0.5 - 0.7 * eps, n, c)) / (2 * eps)
    assert tangent == pytest.approx(central, rel=1e-6, abs=1e-8)
    hess = s2s_ad.hessian(f, wrt=0)(*args)
    g = s2s_ad.grad(f, wrt=0)
    numeric = np.array([numeric_grad(lambda u, *rest: g(u, *rest)[i], args, 0, eps=1e-5) for i in range(3)])
    np.testing.assert_allclose(hess, numeric, rtol=1e-5, atol=1e-7)
    # forward over the checkpointed reverse sweep (the snapshots' copies and restores differentiated)
    np.testing.assert_allclose(s2s_ad.jvp(g, args, (TANGENT, 0.0, None, None))[1], hess @ TANGENT,
                               rtol=1e-12, atol=1e-13)


@pytest.mark.parametrize("n", [2, 10, 57])
@pytest.mark.parametrize("c", [1, 3, 6])
def test_the_advances_stay_revolves_and_the_snapshots_hold_the_written_array(n, c):
    df = s2s_ad.grad(W.trajectory, wrt=(0, 1))
    df(U0, 0.5, n, c)
    (entry,) = df.stats()
    assert entry["advances"] == revolve.advances(n, c)
    assert entry["taped"] == n and entry["peak_snapshots"] <= c
    # each snapshot: the state u (3 floats) and a copy of the trajectory out (n x 3 floats)
    assert entry["peak_bytes"] == entry["peak_snapshots"] * 8 * (3 + 3 * n)


def test_the_generated_code_copies_the_array_and_puts_it_back_in_place():
    text = s2s_ad.source(W.trajectory, wrt=(0, 1), args=(U0, 0.5, 5, 2))
    forward, sweep = text.split("# reverse sweep")
    assert "tape.append((u, np.copy(out)))" in forward
    assert "out[...] = kept_out" in sweep  # (a 0-d array too)


def test_a_write_into_what_a_carried_name_held_before_the_loop_is_refused_at_its_line():
    with pytest.raises(s2s_ad.TransformError, match="a checkpointed loop that writes in place into the array u "
                       "held before it, and binds u again") as caught:
        s2s_ad.grad(W.writes_what_it_binds_again)(U0, 0.5, 3, 2)
    assert "checkpoint_write_functions.py:" in str(caught.value) and "u = u.copy() first" in str(caught.value)


def test_run_as_python_the_marked_loops_are_the_plain_ones():
    for name in NAMES:
        f, plain = _pair(name)
        assert f(U0, 0.5, 7, 2) == plain(U0, 0.5, 7, 2)


@pytest.mark.parametrize("name", COMPILED)
def test_numba_compiles_them_with_pythons_numbers_and_counts(name):
    """The schedule compiles (targets/numba/revolve.py), the snapshots' copies and restores too: no
    CompileFallbackWarning, Python's gradient to 1e-12 and the same stats."""
    pytest.importorskip("numba")
    f, _ = _pair(name)
    compiled, python = s2s_ad.grad(f, wrt=(0, 1), backend="numba"), s2s_ad.grad(f, wrt=(0, 1))
    for n, c in [(0, 2), (1, 1), (2, 3), (9, 2), (30, 3)]:
        with warnings.catch_warnings():
            warnings.simplefilter("error", s2s_ad.CompileFallbackWarning)  # (a fallback says so: none here)
            ours = compiled(U0, 0.5, n, c)
        theirs = python(U0, 0.5, n, c)
        np.testing.assert_allclose(ours[0], theirs[0], rtol=1e-12, atol=1e-12)
        assert ours[1] == pytest.approx(theirs[1], rel=1e-12, abs=1e-12)
        assert compiled.stats() == python.stats()
