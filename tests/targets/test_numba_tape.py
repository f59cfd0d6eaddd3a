"""The Numba target's tape (``s2s_ad/targets/numba/tape.py``): each slot a preallocated float64 array where
its size is known on entry to the loop that records it and its values are float64, else a list.

Oracles: central differences and the Python backend's gradient (itself checked against differences
and JAX across the suite); each test also says which form the slot took, so a form that silently
stops being chosen fails here.
"""
from __future__ import annotations

import warnings

import numpy as np
import pytest

import s2s_ad
from conftest import numeric_grad, optional_import, programs_from_source, second_differences

numba = optional_import("numba")
pytestmark = [pytest.mark.skipif(numba is None, reason="numba is not installed (pip install 's2s_ad[numba]')"),
              pytest.mark.usefixtures("own_numba_cache")]

from s2s_ad import CompileFallbackWarning  # noqa: E402
from s2s_ad.core.runtime import float_stack  # noqa: E402


def program(source):
    return programs_from_source("numba_tape_program_", source)


PROGRAMS = program("""
    import math
    import numpy as np

    def logistic(r, x, n):
        s = 0.5
        for i in range(n):
            s = r * s * (1.0 - s) + 0.001 * x
        return s

    def branches(a, x, n):
        s = 0.3 + 0.0 * x
        for i in range(n):
            if s > 0.5:
                s = a * s * (1.0 - s)
            else:
                s = s + a * 0.1 * s * s + 0.01 * x
        return s

    def breaks_and_continues(a, x, n):
        s = 0.2 + x
        for i in range(n):
            if i % 3 == 0:
                continue
            s = 0.9 * s + a * np.sin(s)
            if s > 3.0:
                break
        return s

    def until_large(a, x):
        s = 0.1 + x
        k = 0
        while s < 5.0 and k < 200:
            s = s * a + 0.1 * s * s
            k += 1
        return s

    def nested(a, x, n, m):
        s = x
        for i in range(n):
            for j in range(m):
                s = 0.9 * s + a * math.cos(s + j)
        return s

    def range_changed_inside(a, x, n):
        s = 0.5 * x
        for i in range(n):
            n = n - 1
            s = s * a + 0.01 * s * s
        return s + 0.001 * n

    def records_an_int(a, x, n):
        s = 0.5 * x
        for i in range(n):
            n = n - 1
            s = s * a + 0.01 * n * s
        return s

    def starts_at_an_argument(a, u0, n):
        u = u0
        for i in range(n):
            u = u + 0.1 * (a * u - u * u)
        return u

    def pendulum(length, damping, n):
        theta = np.zeros(n + 1)
        omega = np.zeros(n + 1)
        theta[0] = 1.0
        for t in range(n):
            theta[t + 1] = theta[t] + 0.01 * omega[t]
            omega[t + 1] = omega[t] + 0.01 * (-9.81 / length * np.sin(theta[t]) - damping * omega[t])
        return np.sum(theta ** 2)

    def array_state(a, start, n):
        s = start * 0.5
        for i in range(n):
            s = s * a + 0.1 * np.sin(s)
        return np.sum(s)

    def power(a, x, n):
        if n == 0:
            return x
        return a * power(a, x, n - 1) + 0.1 * x * x
""")


def _compiled(fn, wrt, args):
    """The numba backend's gradient (asserting it ran compiled), the Python backend's, and its source."""
    df = s2s_ad.grad(fn, wrt=wrt, backend="numba")
    with warnings.catch_warnings():
        warnings.simplefilter("error", CompileFallbackWarning)
        compiled = df(*args)
    return compiled, s2s_ad.grad(fn, wrt=wrt)(*args), df.source_for(*args)


def _agree(compiled, python, fn, args, wrt, rtol=1e-6):
    np.testing.assert_allclose(np.array(compiled, dtype=float), np.array(python, dtype=float), rtol=1e-12, atol=1e-13)
    wrt = wrt if isinstance(wrt, tuple) else (wrt,)
    for got, i in zip(compiled if isinstance(compiled, tuple) else (compiled,), wrt):
        np.testing.assert_allclose(got, numeric_grad(fn, args, i), rtol=rtol, atol=1e-8)


ARRAY_FORM = "float_stack(len(steps))"


@pytest.mark.parametrize("name, args, form", [
    ("logistic", (3.1, 0.2, 60), ARRAY_FORM),           # trip count known on entry: preallocated
    ("logistic", (3.1, 0.2, 0), ARRAY_FORM),            # ... and zero trips: an empty array, no pop
    ("branches", (2.9, 0.1, 80), ARRAY_FORM),           # a push under a branch: at most one per trip
    ("breaks_and_continues", (0.7, 0.1, 90), ARRAY_FORM),  # fewer trips than the range: room to spare
    ("range_changed_inside", (1.01, 0.4, 40), ARRAY_FORM),  # the range was made on entry: its length holds
    ("starts_at_an_argument", (1.5, 0.3, 50), ARRAY_FORM),  # u0 may be an int: u joins it with a float64
    ("records_an_int", (1.01, 0.4, 40), ".append("),    # an int recorded: a float64 array would not keep it
    ("until_large", (1.3, 0.2), ".append("),           # a while loop: its count is not known on entry
    ("nested", (0.3, 0.2, 6, 5), ".append("),           # an inner loop: its pushes are not counted on entry
])
def test_each_form_gives_the_python_backends_gradient(name, args, form):
    fn = getattr(PROGRAMS, name)
    compiled, python, source = _compiled(fn, (0, 1), args)
    assert form in source, source
    _agree(compiled, python, fn, args, (0, 1))


def test_an_int_where_a_float_was_recorded_is_stored_as_the_float_numba_makes_it():
    fn = PROGRAMS.starts_at_an_argument
    compiled, python, _ = _compiled(fn, 0, (1.5, 1, 50))  # u0 = 1: u is 1, then floats
    _agree(compiled, python, fn, (1.5, 1, 50), 0)


def test_records_of_several_values_and_restores_of_elements_take_arrays():
    fn = PROGRAMS.pendulum
    compiled, python, source = _compiled(fn, (0, 1), (1.2, 0.3, 300))
    assert "float_stack((len(steps), 3))" in source and ".append(" not in source, source
    _agree(compiled, python, fn, (1.2, 0.3, 300), (0, 1))


def test_array_values_keep_a_list_and_compile():
    fn = PROGRAMS.array_state
    args = (0.8, np.linspace(0.1, 0.9, 7), 30)
    compiled, python, source = _compiled(fn, 0, args)
    assert ".append(" in source and "float_stack" not in source, source
    np.testing.assert_allclose(compiled, python, rtol=1e-12)
    np.testing.assert_allclose(compiled, numeric_grad(fn, args, 0), rtol=1e-6)


def test_recursion_falls_back_with_the_same_numbers():
    fn = PROGRAMS.power
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        compiled = s2s_ad.grad(fn, wrt=(0, 1), backend="numba")(0.7, 0.3, 6)
    assert any(issubclass(w.category, CompileFallbackWarning) for w in caught)
    assert compiled == s2s_ad.grad(fn, wrt=(0, 1))(0.7, 0.3, 6)
    _agree(compiled, compiled, fn, (0.7, 0.3, 6), (0, 1))


def test_the_hessian_of_a_loop_with_backend_numba():
    fn = PROGRAMS.logistic
    args = (3.1, 0.2, 40)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", s2s_ad.CompileFallbackWarning)
        hessian = s2s_ad.hessian(fn, wrt=(0, 1), backend="numba")
        compiled = hessian(*args)
    # forward mode reads the gradient's tape of the loop as preallocated arrays (ReadBackSlotTape), which
    # Numba types: compiled, no fallback (the nested tuples the Python backend reads back it cannot type)
    assert not caught, [str(w.message) for w in caught]
    assert "float_stack" in hessian.source_for(*args)
    python = s2s_ad.hessian(fn, wrt=(0, 1))(*args)
    np.testing.assert_allclose(np.array(compiled, dtype=float), np.array(python, dtype=float), rtol=1e-10)
    step = 1e-5
    for i in range(2):  # each row: central differences of the gradient
        up, down = list(args), list(args)
        up[i] += step
        down[i] -= step
        row = (np.array(s2s_ad.grad(fn, wrt=(0, 1))(*up)) - np.array(s2s_ad.grad(fn, wrt=(0, 1))(*down))) / (2 * step)
        np.testing.assert_allclose(np.array(compiled, dtype=float)[i], row, rtol=1e-5, atol=1e-8)


HEAT = program("""
import numpy as np

def heat(u):
    out = np.zeros_like(u)
    for i in range(1, u.shape[0] - 1):
        out[i] = u[i - 1] - 2.0 * u[i] + u[i + 1] + u[i] ** 2
    return np.sum(out ** 2)
""")


def test_the_hessian_of_a_loop_writing_elements_of_an_array_like_its_argument_compiles():
    """The elements a loop overwrites in ``np.zeros_like(u)`` are float64 where ``u`` is a vector of the
    gradient: recorded in a preallocated array, so the Hessian's forward mode compiles (it ran as
    Python, saying so)."""
    x = np.linspace(0.1, 1.0, 9)
    with warnings.catch_warnings():
        warnings.simplefilter("error", s2s_ad.CompileFallbackWarning)
        hessian = s2s_ad.hessian(HEAT.heat, backend="numba")
        compiled = hessian(x)
    assert "float_stack" in hessian.source_for(x)
    np.testing.assert_allclose(compiled, s2s_ad.hessian(HEAT.heat)(x), rtol=1e-12)
    np.testing.assert_allclose(compiled, second_differences(HEAT.heat, x), rtol=1e-4, atol=1e-5)


def test_the_hessian_of_a_while_loop_reads_a_tape_of_tuples_back_and_runs_as_python_saying_so():
    def fn(r, x):
        s, i = 0.5, 0
        while i < 30:
            s = r * s * (1 - s) + 0.001 * x
            i = i + 1
        return s

    args = (3.1, 0.2)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", s2s_ad.CompileFallbackWarning)
        compiled = s2s_ad.hessian(fn, wrt=(0, 1), backend="numba")(*args)
    # a while loop's record count is not known on entry: the tape read back is the nested tuples, a type
    # nested one level deeper at every trip, said and run as Python before Numba spends minutes on it
    assert any("value of the trip before" in str(w.message) for w in caught), [str(w.message) for w in caught]
    # and the Python backend's code runs (its passes made it for Python), not the Numba target's run as Python
    assert any("the Python backend's code runs instead" in str(w.message) and w.filename == __file__
               for w in caught), [(str(w.message), w.filename) for w in caught]
    python = s2s_ad.hessian(fn, wrt=(0, 1))(*args)
    np.testing.assert_allclose(np.array(compiled, dtype=float), np.array(python, dtype=float), rtol=1e-12)
    gradient = s2s_ad.grad(fn, wrt=(0, 1))
    column = (np.array(gradient(args[0], args[1] + 1e-5)) - np.array(gradient(args[0], args[1] - 1e-5))) / 2e-5
    np.testing.assert_allclose(np.array(compiled, dtype=float)[:, 1], column, rtol=1e-5, atol=1e-8)


def test_a_complex_value_where_a_float_was_proven_is_refused_before_anything_runs():
    """(It ran as Python once, with its imaginary part; complex values are refused now on every
    backend: tests/lowering/test_complex_refused.py says why.)"""
    fn = PROGRAMS.logistic
    df = s2s_ad.grad(fn, wrt=0, backend="numba")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with pytest.raises(s2s_ad.TransformError, match="complex number"):
            df(3.1 + 0.1j, 0.2, 20)
    assert not any(issubclass(w.category, CompileFallbackWarning) for w in caught)
    assert df(3.1, 0.2, 20) == pytest.approx(s2s_ad.grad(fn, wrt=0)(3.1, 0.2, 20), rel=1e-12)


def test_as_python_the_preallocated_stack_gives_back_what_was_pushed():
    stack = float_stack((3, 2))
    stack[0, 0], stack[0, 1], stack[1, 0] = 1 + 2j, np.arange(3.0), 7
    assert stack[0, 0] == 1 + 2j and type(stack[1, 0]) is int
    np.testing.assert_array_equal(stack[0, 1], np.arange(3.0))


def test_the_code_is_the_same_text_in_every_process():
    """The slots' arrays are made in one order whatever the hash seed of the process (the text is part
    of the disk cache's key: a process whose code read otherwise compiled anew).  Found comparing the
    generated code of the corpus before and after a refactoring: a branch's slots were once counted
    through a set of their names."""
    import os
    import subprocess
    import sys
    script = ("import checkpoint_functions as c\n"
              "from s2s_ad.core.kinds import NUMBER\n"
              "from s2s_ad.driver.pipeline import build_reverse\n"
              "from s2s_ad.targets.numba.target import NUMBA\n"
              "print(build_reverse(c.mixed_body_plain, ('u0', 'k', 'n'), (NUMBER,) * 3, compile_it=False,"
              " target=NUMBA).source)\n")
    tests = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "corpora")
    path = os.pathsep.join([tests] + [p for p in sys.path if p])
    texts = {subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True,
                            env={**os.environ, "PYTHONPATH": path, "PYTHONHASHSEED": str(seed)}).stdout
             for seed in (1, 2, 3, 4)}
    assert len(texts) == 1 and "float_stack(" in texts.pop()


def test_the_hessian_benchmark_runs_compiled_and_agrees_with_the_python_backend():
    """``python -m benchmarks.hessians``: three Hessians of 20-parameter loops under backend="numba",
    each compiled (no fallback) and equal to the Python backend's (to rounding)."""
    import re
    import subprocess
    import sys
    from pathlib import Path
    done = subprocess.run([sys.executable, "-m", "benchmarks.hessians", "--quick"], cwd=Path(__file__).resolve().parents[2],
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-2000:]
    rows = re.findall(r"^\| ([a-z ]+) \| [\d.]+ ms \| [\d.]+ ms \| [\d.]+ \| [^|]+ \| (\S+) \| (yes|no) \|$",
                      done.stdout, re.MULTILINE)
    assert len(rows) == 3, done.stdout
    assert all(float(difference) <= 1e-12 and fell == "no" for _, difference, fell in rows), rows


def test_every_direction_in_one_compiled_call_gives_the_calls_one_by_ones_numbers():
    """A forward-mode Jacobian and Hessians under backend="numba" run their directions in one compiled
    loop (targets/numba/directions.py); where the passes draw random numbers, one call per direction."""
    def spread(x):
        out = np.zeros(2 * x.shape[0])
        for i in range(x.shape[0]):
            out[2 * i] = np.sin(x[i]) * x[0]
            out[2 * i + 1] = x[i] ** 2 * x[-1]
        return out

    def noisy(x, w, rng):
        s = 0.0
        for i in range(x.shape[0]):
            s = s + np.sin(x[i] * s * w + rng.normal()) * x[i]
        return s

    x = np.linspace(0.1, 1.0, 7)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", CompileFallbackWarning)
        jacobian = s2s_ad.jacobian(spread, backend="numba")(x)
    assert not caught, [str(w.message) for w in caught]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", CompileFallbackWarning)  # (a draw's records: the tape of tuples)
        hessian = s2s_ad.hessian(noisy, wrt=(0, 1), backend="numba")(x, 0.7, np.random.default_rng(5))
    np.testing.assert_array_equal(jacobian, s2s_ad.jacobian(spread)(x))
    np.testing.assert_allclose(jacobian[:, 0], (spread(x + 1e-6 * np.eye(7)[0]) - spread(x - 1e-6 * np.eye(7)[0])) / 2e-6,
                               rtol=1e-6, atol=1e-9)
    python = s2s_ad.hessian(noisy, wrt=(0, 1))(x, 0.7, np.random.default_rng(5))
    for mine, theirs in zip(np.array(hessian, dtype=object).ravel(), np.array(python, dtype=object).ravel()):
        np.testing.assert_allclose(mine, theirs, rtol=1e-12, atol=1e-15)


def test_a_helpers_loop_left_by_a_return_reverses_over_its_trips_under_numba():
    # the helper's backward part (its split parts kept: a helper of keyword-only parameters is called too)
    # loops over ``reversed(steps[:trips])``: the range must be printed there (a reverse loop over the
    # range's name alone counts down without it; this one reads it).  Before: NameError: steps.
    module = program("""
        import math
        import numpy as np

        def scaled(p, q=0.5, *, r=2.0):
            return p * q + r * np.sin(p)

        def settle(p, q):
            if p > 0.8:
                return p * np.sum(q)
            s = p
            for k in range(3):
                s = s * 0.9 + q[k] * 0.3
                if s > 1.2:
                    return s * p
            return s + p * 0.5

        def f(x, v, n):
            e = 0.0
            for i in range(n):
                e = e * 0.5 + settle(math.atan(np.mean(v)) * x, v[::-1])
            return e + scaled(x, r=1.5)
    """)
    for x, v in ((0.7, np.array([0.3, 2.5, 0.9, 4.0])), (0.2, np.array([0.1, 0.2, 0.3, 0.4])),
                 (0.5, np.array([0.9, 1.0, 2.0, 3.0]))):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", CompileFallbackWarning)  # (whether the helper's parts compile: not asked)
            got = s2s_ad.grad(module.f, wrt=(0, 1), backend="numba")(x, v, 3)
        expected = s2s_ad.grad(module.f, wrt=(0, 1))(x, v, 3)
        for mine, theirs, i in zip(got, expected, (0, 1)):
            np.testing.assert_allclose(mine, theirs, rtol=1e-13)
            np.testing.assert_allclose(mine, numeric_grad(module.f, (x, v, 3), i), rtol=1e-6, atol=1e-9)
