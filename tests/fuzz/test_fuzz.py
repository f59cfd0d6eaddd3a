"""Differential fuzzing: random programs, each checked four ways.

1. the gradient against central finite differences (points near a kink,
   where differences at two step sizes disagree, are skipped, not counted);
2. forward mode against reverse mode: jvp(f, t) == <t, grad f>, and for one
   program in five the second derivative (forward over reverse) against
   differences of the gradient;
3. the value returned with the gradient against the plain function;
4. the arguments, unchanged after every call.

When autograd is installed, its gradient is compared too.  CI runs a few
hundred programs; ``pytest tests/fuzz --soak`` runs 20,000.  Every failure
found becomes a named test in tests/fuzz/test_regressions.py.
"""
from __future__ import annotations

import hashlib
import importlib.util
import sys
import tempfile
from pathlib import Path
from typing import Any

import numpy as np
from hypothesis import HealthCheck, assume, given, note, settings
from hypothesis import strategies as st

import s2s_ad
from programs import write_program

_FOLDER = Path(tempfile.mkdtemp(prefix="s2s_ad_fuzz_"))


def arguments(seed: int) -> list:
    """x, y, v and n from a seed: continuous values, so no exact zeros and no ties (hypothesis's
    favourite numbers sit on kinks, where no derivative exists to compare)."""
    rng = np.random.default_rng(seed)
    x, y, *v = rng.uniform(0.05, 1.0, size=5) * rng.choice([-1.0, 1.0], size=5)
    return [float(x), float(y), np.array(v), 3]


def load(source: str) -> Any:
    """Import a generated program from a real file (s2s_ad reads source with inspect)."""
    name = "fuzz_" + hashlib.sha1(source.encode()).hexdigest()[:12]
    path = _FOLDER / f"{name}.py"
    path.write_text(source)
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def differences(f, args: list, eps: float) -> tuple:
    """Central differences of f by x, y and each element of v."""
    def at(i, value):
        moved = list(args)
        moved[i] = value
        return f(*moved)

    d_x = (at(0, args[0] + eps) - at(0, args[0] - eps)) / (2 * eps)
    d_y = (at(1, args[1] + eps) - at(1, args[1] - eps)) / (2 * eps)
    d_v = np.array([(at(2, args[2] + eps * e) - at(2, args[2] - eps * e)) / (2 * eps) for e in np.eye(3)])
    return d_x, d_y, d_v


def smooth_differences(f, args: list, value: float) -> tuple:
    """Finite differences, or ``assume(False)`` where two step sizes disagree (a kink nearby), or
    where rounding in a large ``value`` (good to about 1e-15 of its size, divided by the step)
    would reach a tenth of the tolerance the gradient is checked to."""
    fine, coarse = differences(f, args, 1e-6), differences(f, args, 1e-4)
    rounding = 1e-15 * abs(value) / 1e-6
    for a, b in zip(fine, coarse):
        assume(np.allclose(a, b, rtol=1e-3, atol=1e-5))
        assume(np.all(rounding < 0.1 * (1e-6 + 1e-4 * np.abs(a))))
    return fine


def autograd_gradient(source: str, args: list):
    """autograd's gradient of the same program, if autograd is installed (else None)."""
    try:
        import autograd
    except ImportError:
        return None
    namespace: dict = {}
    exec(compile(source.replace("import numpy as np", "import autograd.numpy as np"), "<autograd>", "exec"),
         namespace)
    if "math." in source:  # math functions do not take autograd's boxes
        return None
    return autograd.grad(namespace["f"], (0, 1, 2))(*args)


def smooth_second(first, args: list) -> float:
    """Central differences of the gradient by x, or ``assume(False)`` near a kink, or where the
    gradient is so large against its change that rounding swamps the difference (each gradient is
    good to about 1e-13 of its size, and the difference divides that error by the step)."""
    def at(eps):
        plus, minus = first(args[0] + eps, *args[1:]), first(args[0] - eps, *args[1:])
        return (plus - minus) / (2 * eps), max(abs(plus), abs(minus))
    (fine, size), (coarse, _) = at(1e-5), at(1e-3)
    rounding = 1e-13 * size / 1e-5
    assume(np.isfinite(fine) and rounding < 1e-7 + 1e-5 * abs(fine))
    assume(np.allclose(fine, coarse, rtol=1e-3, atol=1e-5))
    return fine


def check_program(source: str, args: list, second_order: bool = False) -> None:
    module = load(source)
    f = module.f
    value = f(*args)
    assume(np.isfinite(value) and abs(value) < 1e6)
    want = smooth_differences(f, args, value)
    originals = [np.copy(a) for a in args]

    got_value, got = s2s_ad.value_and_grad(f, wrt=(0, 1, 2))(*args)
    np.testing.assert_allclose(got_value, value, rtol=1e-12, atol=1e-12, err_msg="value")
    for name, ours, theirs in zip("xyv", got, want):
        assert np.shape(ours) == np.shape(theirs), name
        np.testing.assert_allclose(ours, theirs, rtol=1e-4, atol=1e-6, err_msg=f"d/d{name}")

    tangents = [0.3, -0.7, np.array([0.5, -0.2, 0.9]), None]
    directional = float(got[0] * 0.3 - got[1] * 0.7 + np.dot(got[2], tangents[2]))
    jvp_value, jvp_tangent = s2s_ad.jvp(f, tuple(args), tuple(tangents))
    np.testing.assert_allclose(jvp_value, value, rtol=1e-12, atol=1e-12, err_msg="jvp value")
    np.testing.assert_allclose(jvp_tangent, directional, rtol=1e-7, atol=1e-9, err_msg="jvp vs grad")

    for before, after in zip(originals, args):
        np.testing.assert_array_equal(before, after, err_msg="an argument was changed")
    if second_order:  # forward over reverse, against differences of the gradient
        first = s2s_ad.grad(f)
        want = smooth_second(first, args)
        np.testing.assert_allclose(s2s_ad.grad(first)(*args), want, rtol=1e-4, atol=1e-6, err_msg="d2/dx2")
    peer = autograd_gradient(source, args)
    if peer is not None:
        for ours, theirs in zip(got, peer):
            np.testing.assert_allclose(ours, theirs, rtol=1e-8, atol=1e-10, err_msg="autograd")


def test_random_programs(fuzz_examples):
    checked = []

    @settings(max_examples=fuzz_examples, deadline=None, derandomize=fuzz_examples <= 1000,
              suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much, HealthCheck.data_too_large])
    @given(st.data(), st.integers(0, 2 ** 32 - 1))
    def run(data, seed):
        source = write_program(data.draw)
        args = arguments(seed)
        note(source)
        note(f"arguments: {args}")
        check_program(source, args, second_order=seed % 5 == 0)
        checked.append(source)

    run()
    print(f"\nfuzz: {len(checked)} programs checked ({len(set(checked))} distinct), no mismatch")
