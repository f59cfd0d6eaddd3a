"""The code that runs lets go of array temporaries after their last read (``s2s_ad/passes/release.py``).

Each name of generated code holds its array until the function returns unless it is released:
with several large arrays alive at once the allocator gives memory back to the system and takes
it again at every call, a page fault per 4 KiB.  These tests check where the ``del`` goes, that
the gradients stay right, and that code read back by a higher derivative has none.
"""
import inspect
import re
import resource

import numpy as np

import s2s_ad
from s2s_ad.driver.pipeline import build_reverse
from s2s_ad.targets.target import SOURCE
from s2s_ad.core.kinds import Array, NUMBER
from conftest import assert_gradient_matches, assert_hessian_matches_gradient_differences
import release_functions as rf

RNG = np.random.default_rng(11)


def _statements(text: str) -> list[str]:
    return [line.split("#")[0].strip() for line in text.splitlines() if line.strip()]


def test_forward_temporaries_are_released_after_their_last_read():
    w1, w2, x = RNG.normal(size=(4, 5)), RNG.normal(size=(5, 2)), RNG.normal(size=(3, 4))
    text = s2s_ad.source(rf.two_layers, wrt=(0, 1), args=(w1, w2, x))
    lines = _statements(text)
    assert "del x_at_w1" in lines, text
    # released right after the statement that reads it last, and never a value the return reads
    release = lines.index("del x_at_w1")
    assert "x_at_w1" in lines[release - 1] and not any("x_at_w1" in line for line in lines[release + 1:])
    assert not any(line.startswith("del") and "d_w1" in line.split()[1:] for line in lines)
    assert_gradient_matches(rf.two_layers, (w1, w2, x), wrt=(0, 1))


def test_numbers_are_not_released():
    text = s2s_ad.source(rf.read_again_in_a_loop, args=(RNG.normal(size=3), 4))
    assert "del total" not in text and "del i" not in text


def test_a_value_read_in_a_later_loop_is_released_after_the_loop():
    x = RNG.normal(size=3)
    text = s2s_ad.source(rf.read_again_in_a_loop, args=(x, 4))
    lines = _statements(text)
    releases = [i for i, line in enumerate(lines) if line.startswith("del") and "scaled" in line.split()[1:]]
    last_read = max(i for i, line in enumerate(lines) if re.search(r"\bscaled\b", line) and not line.startswith("del"))
    assert releases and all(i > last_read for i in releases), text
    assert_gradient_matches(rf.read_again_in_a_loop, (x, 4))


def test_a_helpers_parts_release_too_and_the_gradient_stays_right():
    x = RNG.normal(size=6)
    assert_gradient_matches(rf.through_a_helper, (x,))
    out, pull = s2s_ad.vjp(rf.through_a_helper, x)
    first, second = pull(1.0)[0], pull(1.0)[0]
    np.testing.assert_allclose(first, s2s_ad.grad(rf.through_a_helper)(x), rtol=1e-12)
    np.testing.assert_allclose(second, first, rtol=0, atol=0)


def test_code_read_back_by_a_higher_derivative_has_no_release():
    w1 = RNG.normal(size=(2, 2))
    kinds = (Array(2), Array(2), Array(2))
    params = tuple(inspect.signature(rf.two_layers).parameters)[:1]
    read_back = build_reverse(rf.two_layers, params, kinds, target=SOURCE).source
    assert "del " not in read_back and "del " in build_reverse(rf.two_layers, params, kinds).source
    assert_hessian_matches_gradient_differences(rf.two_layers, (w1, RNG.normal(size=(2, 2)), RNG.normal(size=(3, 2))))


def test_the_allocator_keeps_its_memory_between_calls():
    # Arrays of 256 KiB and more are mapped afresh by the allocator when many are alive at once:
    # released early, the gradient of two layers takes no page fault once warm.
    w1, w2, x = RNG.normal(size=(64, 128)), RNG.normal(size=(128, 10)), RNG.normal(size=(256, 64))
    gradient = s2s_ad.grad(rf.two_layers, wrt=(0, 1))
    for _ in range(3):
        gradient(w1, w2, x)
    before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
    for _ in range(20):
        gradient(w1, w2, x)
    faults = (resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before) / 20
    assert faults < 20, faults
