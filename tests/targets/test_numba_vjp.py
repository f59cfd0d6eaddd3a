"""``vjp`` under ``backend="numba"``: the split form's two parts compiled apart, the tape handed from the
forward part to the backward part as a flat tuple of typed arrays and values (``targets/numba/handed.py``).

Oracles: the Python backend's ``vjp`` (itself checked against ``grad``, differences and JAX across the
suite) and central differences; each test also says whether the parts were handed (compiled) or fell
back, so a form that silently stops being chosen fails here.
"""
from __future__ import annotations

import pickle
import warnings

import numpy as np
import pytest

import s2s_ad
from conftest import numeric_grad, optional_import, programs_from_source

numba = optional_import("numba")
pytestmark = [pytest.mark.skipif(numba is None, reason="numba is not installed (pip install 's2s_ad[numba]')"),
              pytest.mark.usefixtures("own_numba_cache")]

from s2s_ad import CompileFallbackWarning  # noqa: E402


def program(source):
    return programs_from_source("numba_vjp_program_", source)


PROGRAMS = program("""
    import numpy as np

    def pendulum(length, damping, observed, dt=0.01):
        n = observed.shape[0] - 1
        theta = np.zeros(n + 1)
        omega = np.zeros(n + 1)
        theta[0] = 1.0
        for t in range(n):
            theta[t + 1] = theta[t] + dt * omega[t]
            omega[t + 1] = omega[t] + dt * (-9.81 / length * np.sin(theta[t]) - damping * omega[t])
        return np.sum((theta - observed) ** 2)

    def trajectory(x, w):
        # an array result, element writes, a branch in the loop
        out = np.zeros(x.shape[0])
        s = 0.0
        for i in range(x.shape[0]):
            if x[i] > 0:
                s = s * w + np.sin(x[i])
            else:
                s = s - w * x[i] ** 2
            out[i] = s * x[i]
        return out * w

    def step(s, w):
        return np.tanh(w * s) + 0.1 * s

    def with_helper(x, w):
        s = 0.0
        for i in range(x.shape[0]):
            s = step(s + x[i], w)
        return s * s

    def pair(x, a):
        # a tuple result
        total = 0.0
        for i in range(x.shape[0]):
            total = total + a * np.cos(x[i]) * total + x[i]
        return total, x * a

    def until_small(x, a):
        # a while loop: its records' number is not known on entry (the parts run as Python)
        s = x
        k = 0
        while s > 0.1 and k < 50:
            s = s * a
            k = k + 1
        return s
""")


def _python_and_numba(fn, *args):
    value, python_fn = s2s_ad.vjp(fn, *args)
    with warnings.catch_warnings():
        warnings.simplefilter("error", CompileFallbackWarning)
        compiled_value, numba_fn = s2s_ad.vjp(fn, *args, backend="numba")
    for mine, reference in zip(compiled_value if isinstance(value, tuple) else (compiled_value,),
                               value if isinstance(value, tuple) else (value,)):
        np.testing.assert_allclose(mine, reference, rtol=1e-13, atol=1e-14)
    return python_fn, numba_fn


def _compiled_parts(pullback):
    split = pullback._split
    assert split.handed
    for part in (split.forward, split.backward):
        assert part.state["run"] is not part.__wrapped__  # (the wrapper still runs Numba's code)
    return split


def test_the_pendulums_pullback_compiles_and_matches_python_and_differences():
    observed = np.sin(np.linspace(0.0, 3.0, 201))
    python_fn, numba_fn = _python_and_numba(PROGRAMS.pendulum, 1.3, 0.2, observed)
    for cotangent in (1.0, -2.5, 0.5):  # each call after the first runs the forward part again: it put slices back
        ours, theirs = numba_fn(cotangent), python_fn(cotangent)
        for mine, reference in zip(ours, theirs):
            np.testing.assert_allclose(mine, reference, rtol=1e-12, atol=1e-14)
    _compiled_parts(numba_fn)
    d_length, d_damping, d_observed = numba_fn(1.0)
    np.testing.assert_allclose(d_length, numeric_grad(PROGRAMS.pendulum, (1.3, 0.2, observed), 0), rtol=1e-6)
    np.testing.assert_allclose(d_damping, numeric_grad(PROGRAMS.pendulum, (1.3, 0.2, observed), 1), rtol=1e-6)
    np.testing.assert_allclose(d_observed, 2.0 * (observed - _angles(1.3, 0.2, observed)), rtol=1e-9, atol=1e-12)


def _angles(length, damping, observed, dt=0.01):
    theta, omega = [1.0], [0.0]
    for _ in range(observed.shape[0] - 1):
        theta, omega = theta + [theta[-1] + dt * omega[-1]], \
            omega + [omega[-1] + dt * (-9.81 / length * np.sin(theta[-1]) - damping * omega[-1])]
    return np.array(theta)


@pytest.mark.parametrize("name, args", [
    ("trajectory", (np.array([0.3, -0.7, 1.1, 0.2, -0.4]), 0.8)),
    ("with_helper", (np.array([0.3, -0.7, 1.1, 0.2]), 1.4)),
])
def test_array_results_and_helpers_pull_back_compiled(name, args):
    fn = getattr(PROGRAMS, name)
    python_fn, numba_fn = _python_and_numba(fn, *args)
    value = fn(*args)
    rng = np.random.default_rng(3)
    for _ in range(3):
        cotangent = rng.normal(size=np.shape(value)) if np.ndim(value) else float(rng.normal())
        for mine, reference in zip(numba_fn(cotangent), python_fn(cotangent)):
            np.testing.assert_allclose(mine, reference, rtol=1e-12, atol=1e-14)
        # against differences of <cotangent, f>
        scalar = lambda *a: float(np.sum(np.asarray(fn(*a)) * cotangent))
        for position in range(len(args)):
            np.testing.assert_allclose(numba_fn(cotangent)[position], numeric_grad(scalar, args, position),
                                       rtol=1e-6, atol=1e-8)
    _compiled_parts(numba_fn)
    batched = numba_fn(rng.normal(size=(3,) + np.shape(value)), batched=True)  # one compiled call per direction
    assert batched[0].shape == (3,) + np.shape(args[0])


def test_a_tuple_result_pulls_back_compiled():
    x = np.array([0.2, 0.5, -0.3])
    python_fn, numba_fn = _python_and_numba(PROGRAMS.pair, x, 0.7)
    cotangent = (1.5, np.array([0.1, -0.2, 0.3]))
    for mine, reference in zip(numba_fn(cotangent), python_fn(cotangent)):
        np.testing.assert_allclose(mine, reference, rtol=1e-12, atol=1e-14)
    _compiled_parts(numba_fn)


def test_a_while_loops_pullback_runs_as_python_saying_so_at_the_users_call():
    with pytest.warns(CompileFallbackWarning, match="split form") as said:
        value, numba_fn = s2s_ad.vjp(PROGRAMS.until_small, 0.9, 0.8, backend="numba")
    assert [w.filename for w in said if w.category is CompileFallbackWarning] == [__file__]
    assert not numba_fn._split.handed
    _, python_fn = s2s_ad.vjp(PROGRAMS.until_small, 0.9, 0.8)
    assert numba_fn(1.0) == pytest.approx(python_fn(1.0), rel=1e-14)
    assert numba_fn(1.0)[0] == pytest.approx(numeric_grad(PROGRAMS.until_small, (0.9, 0.8), 0), rel=1e-6)


def test_a_compiled_pullback_keeps_its_primals_and_pickles_with_its_backend():
    observed = np.sin(np.linspace(0.0, 1.0, 21))
    kept = observed.copy()
    _, numba_fn = s2s_ad.vjp(PROGRAMS.pendulum, 1.1, 0.3, observed, backend="numba")
    expected = s2s_ad.vjp(PROGRAMS.pendulum, 1.1, 0.3, kept)[1](1.0)
    observed *= 3.0  # the caller's array changed after vjp: the pullback does not see it (as JAX's)
    for mine, reference in zip(numba_fn(1.0), expected):
        np.testing.assert_allclose(mine, reference, rtol=1e-12)
    again = pickle.loads(pickle.dumps(numba_fn))
    assert again._split.handed
    for mine, reference in zip(again(1.0), expected):
        np.testing.assert_allclose(mine, reference, rtol=1e-12)


def test_auto_compiles_a_loops_pullback_and_runs_the_python_backends_parts_silently_where_it_cannot():
    observed = np.sin(np.linspace(0.0, 1.0, 31))
    with warnings.catch_warnings():
        warnings.simplefilter("error", CompileFallbackWarning)
        _, auto_fn = s2s_ad.vjp(PROGRAMS.pendulum, 1.1, 0.3, observed, backend="auto")
        _, while_fn = s2s_ad.vjp(PROGRAMS.until_small, 0.9, 0.8, backend="auto")
    _compiled_parts(auto_fn)
    assert not while_fn._split.handed
    expected = s2s_ad.vjp(PROGRAMS.pendulum, 1.1, 0.3, observed)[1](1.0)
    for mine, reference in zip(auto_fn(1.0), expected):
        np.testing.assert_allclose(mine, reference, rtol=1e-12)
    assert while_fn(1.0) == pytest.approx(s2s_ad.vjp(PROGRAMS.until_small, 0.9, 0.8)[1](1.0), rel=1e-14)


def test_the_pullback_benchmark_runs_compiled_and_agrees_with_the_python_backend():
    """``python -m benchmarks.pullbacks``: the pendulum's and RK4's ``vjp`` under backend="numba", both
    parts compiled (no fallback) and the adjoints equal to the Python backend's (to rounding)."""
    import re
    import subprocess
    import sys
    from pathlib import Path
    done = subprocess.run([sys.executable, "-m", "benchmarks.pullbacks", "--quick"],
                          cwd=Path(__file__).resolve().parents[2], capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-2000:]
    rows = re.findall(r"^\| (\w+) \| [^|]+ \| [\d.]+ ms \| [\d.]+ ms \| [\d.]+ \| (\S+) \| (yes|no) \|$",
                      done.stdout, re.MULTILINE)
    assert len(rows) == 4, done.stdout
    assert all(float(difference) <= 1e-12 and fell == "no" for _, difference, fell in rows), rows
