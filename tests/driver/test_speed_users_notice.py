"""Issue 22, "speed users notice": a forward-mode jacobian's cached calls reuse the code (counted by
builds, not timed), the global random states are still replayed where a pass may draw, and the
checkpointing example's helper keeps its shape facts through np.roll."""
from __future__ import annotations

import numpy as np
import pytest

import s2s_ad
from s2s_ad.driver import pipeline
from s2s_ad.core.kinds import NUMBER, Array
import speed_functions as sf

X = np.array([0.1, 0.2, 0.3])


@pytest.fixture
def builds(monkeypatch):
    """How many times a function is parsed or lowered from now on."""
    count = {"parsed": 0, "lowered": 0}
    parse, lower = pipeline.parse_function, pipeline.lower

    def counting_parse(*args, **kwargs):
        count["parsed"] += 1
        return parse(*args, **kwargs)

    def counting_lower(*args, **kwargs):
        count["lowered"] += 1
        return lower(*args, **kwargs)

    monkeypatch.setattr(pipeline, "parse_function", counting_parse)
    monkeypatch.setattr(pipeline, "lower", counting_lower)
    return count


def test_forward_mode_jacobian_parses_and_lowers_the_function_once(builds):
    jacobian = s2s_ad.jacobian(sf.small)
    first = jacobian(X)
    assert builds["parsed"] > 0
    made = dict(builds)
    for _ in range(20):
        np.testing.assert_array_equal(jacobian(X), first)
    assert builds == made, "cached calls of a forward-mode jacobian parsed or lowered the function again"
    want = np.diag(np.cos(X) * X[0])
    want[:, 0] += np.sin(X)
    np.testing.assert_allclose(first, want, rtol=1e-12)


@pytest.mark.parametrize("fn", [sf.noisy, pytest.param(sf.noisy_through_scipy, marks=pytest.mark.skipif(
    sf.scipy is None, reason="SciPy is not installed"))])
def test_a_forward_mode_jacobian_still_replays_the_draws_in_every_pass(fn):
    np.random.seed(7)
    got = s2s_ad.jacobian(fn)(X)
    np.random.seed(7)
    noise = np.random.normal(size=3)
    np.testing.assert_array_equal(got, np.diag(noise))


def test_the_checkpointing_examples_step_keeps_its_shape_through_np_roll():
    """The helper's adjoint is specialised for the array it gets: no unbroadcast where shapes are equal."""
    assert pipeline.result_kind(sf.step, (Array(1, ("a",)), NUMBER)) == Array(1, ("a",))
    assert pipeline.result_kind(lambda_free_roll, (Array(2, ("a", "b")),)) == Array(2, ("a", "b"))


def lambda_free_roll(a):
    return np.roll(a, (1, 2), axis=(0, 1))
