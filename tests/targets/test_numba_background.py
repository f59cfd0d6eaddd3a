"""``backend="auto"`` choosing Numba for ``grad``: Numba compiles in a thread while the calls run the same
code as Python (``targets/numba/background.py``), so that no call waits for a compile.

Oracles: the Python backend's gradient and central differences, for the calls made while the compile is
under way and for those after it.  Where a test needs the compile to be under way, it holds the
compile back until it lets it go (``_held``): nothing here depends on how fast the machine compiles.
"""
from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import threading
import warnings

import numpy as np
import pytest

import s2s_ad
from conftest import numeric_grad, optional_import, programs_from_source

numba = optional_import("numba")
pytestmark = [pytest.mark.skipif(numba is None, reason="numba is not installed (pip install 's2s_ad[numba]')"),
              pytest.mark.usefixtures("own_numba_cache")]

from s2s_ad import CompileFallbackWarning  # noqa: E402

PROGRAMS = programs_from_source("numba_background_program_", """
    import numpy as np

    def heating(heat, a, b):
        temp = np.zeros(heat.shape[0] + 1)
        for t in range(heat.shape[0]):
            temp[t + 1] = temp[t] + a * (1.5 - temp[t]) + b * heat[t]
        return np.sum((temp - 2.0) ** 2) + 0.1 * np.sum(heat ** 2)

    def heating_again(heat, a, b):  # (built code is shared by derivatives of one function: a test's own)
        temp = np.zeros(heat.shape[0] + 1)
        for t in range(heat.shape[0]):
            temp[t + 1] = temp[t] + a * (1.5 - temp[t]) + b * heat[t]
        return np.sum((temp - 2.0) ** 2) + 0.1 * np.sum(heat ** 2)

    def heating_forked(heat, a, b):
        temp = np.zeros(heat.shape[0] + 1)
        for t in range(heat.shape[0]):
            temp[t + 1] = temp[t] + a * (1.5 - temp[t]) + b * heat[t]
        return np.sum((temp - 2.0) ** 2) + 0.1 * np.sum(heat ** 2)

    def smoothed(y):
        out = np.zeros_like(y)
        for i in range(1, y.shape[0]):
            out[i] = 0.5 * (y[i] + np.sin(y[i - 1]))
        return np.sum(out ** 2)
""")

HEAT = np.array([0.3, -1.2, 0.8, 2.0, 0.1])


def _built(df):
    """The one compiled function a derivative's calls have built (the target's ``run`` wrapper)."""
    (built,) = df._by_kinds.values()
    return built.function


@pytest.fixture
def _held(monkeypatch):
    """Compiles started in the background wait for ``release.set()`` before they begin."""
    from s2s_ad.targets.numba import background
    release = threading.Event()
    compile_now = background.Background._compile

    def held_back(self, signature):
        release.wait(60)
        compile_now(self, signature)
    monkeypatch.setattr(background.Background, "_compile", held_back)
    yield release
    release.set()


def _expected(args):
    by_python = s2s_ad.grad(PROGRAMS.heating)(*args)
    np.testing.assert_allclose(by_python, numeric_grad(PROGRAMS.heating, args, 0), rtol=1e-6, atol=1e-9)
    return by_python


def test_calls_while_numba_compiles_run_as_python_and_later_ones_compiled(_held):
    args = (HEAT, 0.3, 0.7)
    expected = _expected(args)
    df = s2s_ad.grad(PROGRAMS.heating, backend="auto")
    assert df.backend_chosen.backend == "numba"
    with warnings.catch_warnings():
        warnings.simplefilter("error", CompileFallbackWarning)
        for _ in range(3):  # the compile is held back: a call that waited for it would never return
            np.testing.assert_allclose(df(*args), expected, rtol=1e-13)
        run = _built(df)
        assert run.compiled.signatures == [] and not run.background.ready
        assert not df.wait_compiled(timeout=0.05)
        _held.set()
        assert df.wait_compiled(timeout=120)
        np.testing.assert_allclose(df(*args), expected, rtol=1e-12)
    assert len(run.compiled.signatures) == 1 and run.state["run"] is run.compiled  # (ran compiled)
    other = (HEAT[::-1].copy(), 0.2, 1.1)  # the same types: the compiled code, no new compile
    np.testing.assert_allclose(df(*other), _expected(other), rtol=1e-12)
    assert len(run.compiled.signatures) == 1


def test_value_and_grad_also_compiles_in_the_background(_held):
    y = np.array([0.4, -1.0, 2.5, 0.3])
    df = s2s_ad.value_and_grad(PROGRAMS.smoothed, backend="auto")
    value, gradient = df(y)
    assert value == pytest.approx(PROGRAMS.smoothed(y), rel=1e-14)
    np.testing.assert_allclose(gradient, numeric_grad(PROGRAMS.smoothed, (y,), 0), rtol=1e-6, atol=1e-9)
    assert _built(df).compiled.signatures == []
    _held.set()
    assert df.wait_compiled(timeout=120)
    value_compiled, gradient_compiled = df(y)
    assert value_compiled == pytest.approx(value, rel=1e-14)
    np.testing.assert_allclose(gradient_compiled, gradient, rtol=1e-12)
    assert len(_built(df).compiled.signatures) == 1


def test_a_compile_that_fails_is_said_at_the_next_call_and_python_runs_from_then_on(_held, monkeypatch):
    args = (HEAT, 0.3, 0.7)
    expected = _expected(args)
    df = s2s_ad.grad(PROGRAMS.heating_again, backend="auto")
    df(*args)
    run = _built(df)

    def refuse(signature):
        raise numba.core.errors.TypingError("a construct this test pretends Numba cannot type")
    monkeypatch.setattr(run.compiled, "compile", refuse)
    _held.set()
    assert df.wait_compiled(timeout=120)
    with pytest.warns(CompileFallbackWarning, match="cannot compile|pretends Numba cannot type") as said:
        np.testing.assert_allclose(df(*args), expected, rtol=1e-13)
    assert said[0].filename == __file__  # (the user's line, as a first call's warning)
    with warnings.catch_warnings():
        warnings.simplefilter("error", CompileFallbackWarning)  # said once
        np.testing.assert_allclose(df(*args), expected, rtol=1e-13)
    assert run.state["run"] is not run.compiled


def test_backend_numba_compiles_before_its_first_call_returns():
    args = (HEAT, 0.3, 0.7)
    df = s2s_ad.grad(PROGRAMS.heating, backend="numba")
    np.testing.assert_allclose(df(*args), _expected(args), rtol=1e-12)
    run = _built(df)
    assert run.background is None and len(run.compiled.signatures) == 1
    assert df.wait_compiled(timeout=0)  # (nothing under way)


def test_a_process_that_ends_while_numba_compiles_ends_cleanly(tmp_path):
    """The interpreter waits for the compile at its exit: LLVM torn down under it could crash the process."""
    (tmp_path / "ends_early.py").write_text(textwrap.dedent("""
        import numpy as np
        import s2s_ad

        def smoothed(y):
            out = np.zeros_like(y)
            for i in range(1, y.shape[0]):
                out[i] = 0.5 * (y[i] + np.sin(y[i - 1]))
            return np.sum(out ** 2)

        df = s2s_ad.grad(smoothed, backend="auto")
        print(df(np.array([0.4, -1.0, 2.5, 0.3]))[1])
        run, = [built.function for built in df._by_kinds.values()]
        print(run.background is not None and not run.background.ready)
    """))
    done = subprocess.run([sys.executable, str(tmp_path / "ends_early.py")], capture_output=True, text=True,
                          timeout=300, env={**__import__("os").environ, "S2S_AD_CACHE_DIR": str(tmp_path / "cache")})
    assert done.returncode == 0, done.stderr
    first, under_way = done.stdout.split()
    expected = numeric_grad(PROGRAMS.smoothed, (np.array([0.4, -1.0, 2.5, 0.3]),), 0)[1]
    assert float(first) == pytest.approx(expected, rel=1e-6)
    assert under_way == "True"  # (the process ended while the compile was under way)


@pytest.mark.skipif(not hasattr(os, "fork"), reason="os.fork is POSIX's")
def test_a_fork_waits_for_a_compile_under_way_and_the_child_runs_the_compiled_code(_held):
    """A child forked in the middle of a compile would hold Numba's compiler lock with no thread to
    release it: the fork waits for the compile, and the child runs the machine code it left."""
    args = (HEAT, 0.3, 0.7)
    expected = _expected(args)
    df = s2s_ad.grad(PROGRAMS.heating_forked, backend="auto")
    np.testing.assert_allclose(df(*args), expected, rtol=1e-13)
    run = _built(df)
    assert not run.background.ready
    threading.Timer(0.5, _held.set).start()  # (lets the held compile go while the fork waits for it)
    read, write = os.pipe()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)  # (3.12+: forking a process that has threads)
        child = os.fork()
    if child == 0:  # pragma: no cover (the child's own report goes through the pipe)
        try:
            ok = run.background.ready and np.allclose(df(*args), expected, rtol=1e-12) \
                and len(run.compiled.signatures) == 1 and run.state["run"] is run.compiled
            os.write(write, b"ok" if ok else b"not compiled")
        finally:
            os._exit(0)
    os.close(write)
    said = os.read(read, 100)
    os.waitpid(child, 0)
    assert run.background.ready and said == b"ok"
