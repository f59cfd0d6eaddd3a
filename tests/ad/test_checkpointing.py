"""Checkpointed loops: the same gradient as storing every iteration, in a fraction of the memory."""
import tracemalloc

import numpy as np
import pytest

import s2s_ad
from conftest import assert_gradient_matches, numeric_grad
import checkpoint_functions as cf

RNG = np.random.default_rng(3)


@pytest.mark.parametrize("n", [0, 1, 2, 5, 16, 17, 40])
@pytest.mark.parametrize("every", [None, 1, 3, 100])
def test_gradients_equal_store_all_exactly(n, every):
    ours = s2s_ad.grad(cf.logistic, wrt=(0, 1))(3.1, 0.2, n, every)
    stored = s2s_ad.grad(cf.logistic_plain, wrt=(0, 1))(3.1, 0.2, n, every)
    assert ours == stored  # the same arithmetic in the same order: equal, not close


@pytest.mark.parametrize("f, plain, args", [
    (cf.mixed_body, cf.mixed_body_plain, (RNG.uniform(0.2, 0.8, size=4), 0.7, 11)),  # branches, helpers, loops
    (cf.inside_a_plain_loop, cf.inside_a_plain_loop_plain, (0.4, 3, 4)),         # segments differ per pass
])
def test_loops_with_branches_helpers_and_nesting(f, plain, args):
    ours = s2s_ad.grad(f, wrt=(0, 1) if np.ndim(args[0]) else 0)(*args)
    stored = s2s_ad.grad(plain, wrt=(0, 1) if np.ndim(args[0]) else 0)(*args)
    np.testing.assert_array_equal(np.hstack(ours) if isinstance(ours, tuple) else ours,
                                  np.hstack(stored) if isinstance(stored, tuple) else stored)
    assert_gradient_matches(f, args, 0)


def _peak(gradient, *args):
    gradient(*args)  # transform first: only the call itself is measured
    tracemalloc.start()
    try:
        gradient(*args)
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


@pytest.mark.slow
def test_a_10000_step_loop_needs_a_fraction_of_the_memory():
    u0, k, n = np.linspace(0.1, 0.9, 100), 0.3, 10_000
    checkpointed = s2s_ad.grad(cf.long_simulation, wrt=(0, 1))
    stored = s2s_ad.grad(cf.long_simulation_plain, wrt=(0, 1))
    ratio = _peak(checkpointed, u0, k, n) / _peak(stored, u0, k, n)
    assert ratio < 0.1, f"checkpointed peak memory is {ratio:.3f} of store-all"
    ours, theirs = checkpointed(u0, k, n), stored(u0, k, n)
    np.testing.assert_array_equal(ours[0], theirs[0])
    assert ours[1] == theirs[1]


def test_forward_mode_and_second_order_through_a_checkpointed_loop():
    args = (3.1, 0.2, 10, 3)
    assert s2s_ad.jvp(cf.logistic, args, (1.0, 0.0, None, None))[1] == pytest.approx(
        s2s_ad.grad(cf.logistic)(*args))
    first = s2s_ad.grad(cf.logistic)
    assert s2s_ad.grad(first)(*args) == pytest.approx(numeric_grad(first, args, 0, eps=1e-5), rel=1e-6)


def test_the_generated_code_keeps_snapshots_and_replays_segments():
    text = s2s_ad.source(cf.logistic, wrt=(0, 1), args=(3.1, 0.2, 10, 3))  # (left out, every is None, and the code specialised on it as a call's is)
    forward, sweep = text.split("# reverse sweep")
    assert "checkpoint_stride(len(steps), every)" in forward and "tape.append(s)" in forward
    assert "for start in reversed(starts):" in sweep and "run the segment again, recording" in sweep


def early_exit(x, n):
    s = x
    for i in s2s_ad.checkpointed(range(n)):
        if s > 10.0:
            break
        s = s * 1.5
    return s


def writes_an_array(x, n):
    out = np.zeros(n)
    for i in s2s_ad.checkpointed(range(n)):
        out[i] = x * i
    return np.sum(out)


def test_a_loop_writing_into_an_array_is_followed():
    """(Refused before issue 35's writes; tests/ad/test_checkpointed_writes.py tests them in full.)"""
    assert s2s_ad.grad(writes_an_array)(0.5, 4) == 6.0


def marker_outside_a_loop(x, n):
    steps = s2s_ad.checkpointed(range(n))
    return x * len(steps)


@pytest.mark.parametrize("f, words", [
    (early_exit, "a checkpointed loop that can stop early"),
    (marker_outside_a_loop, r"checkpointed\(...\) marks a loop"),
])
def test_what_checkpointing_cannot_do_is_refused(f, words):
    with pytest.raises(s2s_ad.TransformError, match=words):
        s2s_ad.grad(f)(0.5, 4)
