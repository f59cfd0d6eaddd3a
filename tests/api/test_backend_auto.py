"""``backend="auto"`` (issue #36): Numba's backend for loops over elements, the Python backend for
whole-array code, chosen by the code's shape and said (``backend_chosen``, ``source_for``'s first line).

Oracles: central differences and the Python backend's numbers (the choice may change the speed,
never a number); the benchmarks' eight workloads, whose faster backend is measured in
docs/performance.md, for what the choice should be.  The choices of Numba need Numba
(``importorskip`` inside those tests); without it, "auto" is the Python backend, said so.
"""
from __future__ import annotations

import importlib.util
import pickle
import sys
import warnings
from pathlib import Path

import numpy as np
import pytest

import s2s_ad
from conftest import numeric_grad

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))  # the repository's top: benchmarks/ (not installed with the package)

from benchmarks.cases import CASES  # noqa: E402

COMPILED = ("poly_loop", "building", "deblur", "rk4", "pendulum")  # loops over numbers, elements or slices
WHOLE_ARRAY = ("rational", "mlp", "logsumexp_ce")  # straight-line code


def _case(name):
    return next(case for case in CASES if case.name == name)


@pytest.fixture(autouse=True)
def _own_cache_directory(tmp_path_factory, monkeypatch):
    monkeypatch.setenv("S2S_AD_CACHE_DIR", str(tmp_path_factory.getbasetemp() / "s2s_ad_cache"))


def _against_python_and_differences(case, backend="auto"):
    args = case.make_args(True)
    wrt = case.argnums
    df = s2s_ad.grad(case.function, wrt=wrt, backend=backend)
    by_python = s2s_ad.grad(case.function, wrt=wrt)(*args)
    with warnings.catch_warnings():
        warnings.simplefilter("error", s2s_ad.CompileFallbackWarning)
        first = df(*args)  # (where Numba was chosen: run as Python while Numba compiles in a thread)
        assert df.wait_compiled(timeout=600)
        compiled = df(*args)  # (then the compiled code)
    for chosen in (first, compiled):
        for i, got, expected in zip(wrt, chosen, by_python):
            np.testing.assert_allclose(got, expected, rtol=1e-11, atol=1e-13)
            np.testing.assert_allclose(got, numeric_grad(case.function, args, i), rtol=2e-5, atol=1e-7)
    return df


@pytest.mark.parametrize("name", COMPILED)
def test_loops_choose_numba_with_the_python_backends_numbers(name):
    pytest.importorskip("numba")
    df = _against_python_and_differences(_case(name))
    assert df.backend_chosen.backend == "numba" and df.backend_chosen.asked == "auto"
    assert "loop at line" in df.backend_chosen.reason and "workloads.py" in df.backend_chosen.reason
    assert df._target.backend == "numba"


@pytest.mark.parametrize("name", WHOLE_ARRAY)
def test_whole_array_code_chooses_python(name):
    df = _against_python_and_differences(_case(name))
    assert df.backend_chosen.backend == "python" and df._target.backend == "python"
    if importlib.util.find_spec("numba") is not None:
        assert df.backend_chosen.reason.startswith("no loop: ")


def test_the_reasons_name_the_loop_and_what_it_does():
    pytest.importorskip("numba")
    chosen = {case.name: s2s_ad.grad(case.function, backend="auto").backend_chosen for case in CASES}
    assert "(temp[t + 1])" in chosen["building"].reason and "for t in range(n)" in chosen["building"].reason
    assert "works on numbers" in chosen["poly_loop"].reason  # (s = r * s * (1 - s) + ...: no element)
    assert "works on numbers" in chosen["rk4"].reason  # (the helper it calls is followed: numbers only)
    assert "whole-array operations (padded[i:i + h, j:j + w])" in chosen["deblur"].reason  # (blur3x3's loop)
    assert str(chosen["mlp"]).startswith("backend='auto' chose 'python': no loop")


def test_source_for_says_what_auto_chose_and_a_named_backend_says_nothing(tmp_path):
    case = _case("mlp")
    args = case.make_args(True)
    shown = s2s_ad.grad(case.function, backend="auto").source_for(*args)
    assert shown.startswith("# backend='auto' chose 'python': ")
    plain = s2s_ad.grad(case.function).source_for(*args)
    assert shown.split("\n", 1)[1] == plain  # (the same code below it)
    assert s2s_ad.grad(case.function).backend_chosen.asked == "python"
    why = "no loop" if importlib.util.find_spec("numba") else "Numba is not installed"  # (CI's first job)
    assert s2s_ad.source(case.function, backend="auto").startswith(f"# backend='auto' chose 'python': {why}")
    page = s2s_ad.grad(case.function, backend="auto").html_for(*args)  # (the derivative explorer)
    assert "<h1>∂/∂w1 mlp · backend=&#x27;auto&#x27; chose &#x27;python&#x27;</h1>" in page
    assert not s2s_ad.source(case.function).startswith("# backend=")


def test_the_command_line_shows_the_code_auto_chose(capsys):
    pytest.importorskip("numba")
    from s2s_ad.api.cli import main
    assert main([f"{ROOT / 'benchmarks' / 'workloads.py'}:pendulum", "--backend", "auto"]) in (0, None)
    shown = capsys.readouterr().out
    assert shown.startswith("# backend='auto' chose 'numba': the loop at line 273 of workloads.py")
    assert "tape_" in shown and "def d_pendulum(" in shown


def test_without_numba_auto_is_the_python_backend_and_says_so(monkeypatch):
    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *rest: None if name == "numba" else real(name, *rest))
    case = _case("building")
    df = _against_python_and_differences(case)
    assert df.backend_chosen.backend == "python" and "Numba is not installed" in df.backend_chosen.reason
    with pytest.raises(ImportError, match="needs Numba"):
        s2s_ad.grad(case.function, backend="numba")


def test_jvp_jacobian_and_hessian_take_auto_with_the_same_numbers():
    pytest.importorskip("numba")
    case = _case("pendulum")
    args = case.make_args(True)
    tangents = (1.0, 0.5, np.zeros_like(args[2]))
    auto = s2s_ad.jvp(case.function, args, tangents, backend="auto")
    python = s2s_ad.jvp(case.function, args, tangents)
    assert auto[0] == pytest.approx(python[0], rel=1e-13) and auto[1] == pytest.approx(python[1], rel=1e-11)
    eps = 1e-6
    moved = [(a + eps * t, a - eps * t) for a, t in zip(args[:2], tangents[:2])]
    difference = (case.function(moved[0][0], moved[1][0], args[2]) -
                  case.function(moved[0][1], moved[1][1], args[2])) / (2 * eps)
    assert auto[1] == pytest.approx(difference, rel=1e-5)
    jacobian = s2s_ad.jacobian(case.function, wrt=(0, 1), backend="auto")
    assert jacobian.backend_chosen.backend == "numba"
    np.testing.assert_allclose(jacobian(*args), s2s_ad.jacobian(case.function, wrt=(0, 1))(*args), rtol=1e-11)
    hessian = s2s_ad.hessian(case.function, wrt=(0, 1), backend="auto")
    assert hessian.backend_chosen.backend == "python" and "Hessian" in hessian.backend_chosen.reason
    with warnings.catch_warnings():
        warnings.simplefilter("error", s2s_ad.CompileFallbackWarning)
        np.testing.assert_allclose(np.asarray(hessian(*args), dtype=float),
                                   np.asarray(s2s_ad.hessian(case.function, wrt=(0, 1))(*args), dtype=float),
                                   rtol=1e-12)


def test_a_loop_of_whole_array_steps_and_a_helper_with_an_element_loop_compile(tmp_path):
    pytest.importorskip("numba")
    from conftest import module_from_source
    module = module_from_source(tmp_path, "auto_shapes_", """
import numpy as np

def rnn(w, x, steps=5):
    for _ in range(steps):
        x = np.tanh(w @ x)
    return np.sum(x)

def smooth(y):
    out = np.zeros_like(y)
    for i in range(1, y.shape[0]):
        out[i] = 0.5 * (y[i] + y[i - 1])
    return out

def loss(y):
    return np.sum(smooth(y) ** 2)
""")
    rnn = s2s_ad.grad(module.rnn, backend="auto")
    assert rnn.backend_chosen.backend == "numba" and "whole-array operations (w @ x)" in rnn.backend_chosen.reason
    w, x = np.eye(3) * 0.5 + 0.1, np.array([0.2, -0.4, 0.9])
    loss = s2s_ad.grad(module.loss, backend="auto")
    assert loss.backend_chosen.backend == "numba" and "out[i]" in loss.backend_chosen.reason
    y = np.array([0.3, 1.0, -2.0, 0.5])
    for compiled in (False, True):  # while Numba compiles (the code run as Python), then compiled
        if compiled:
            assert rnn.wait_compiled(timeout=600) and loss.wait_compiled(timeout=600)
        with warnings.catch_warnings():
            warnings.simplefilter("error", s2s_ad.CompileFallbackWarning)
            np.testing.assert_allclose(rnn(w, x), numeric_grad(module.rnn, (w, x), 0), rtol=1e-6, atol=1e-9)
            np.testing.assert_allclose(rnn(w, x), s2s_ad.grad(module.rnn)(w, x), rtol=1e-13)
            np.testing.assert_allclose(loss(y), numeric_grad(module.loss, (y,), 0), rtol=1e-6, atol=1e-9)
            np.testing.assert_allclose(loss(y), s2s_ad.grad(module.loss)(y), rtol=1e-13)


def test_auto_is_kept_through_pickling_and_grad_of_grad_looks_at_the_users_function():
    case = _case("poly_loop")
    df = s2s_ad.grad(case.function, backend="auto")
    assert pickle.loads(pickle.dumps(df)).backend_chosen == df.backend_chosen
    assert s2s_ad.grad(s2s_ad.grad(case.function), backend="auto").backend_chosen.reason == df.backend_chosen.reason


def test_an_unknown_backend_names_auto_among_the_choices():
    with pytest.raises(ValueError, match="'python', 'numba', 'auto'"):
        s2s_ad.grad(_case("mlp").function, backend="fast")


def test_a_loop_calling_a_helper_and_a_recursive_helper_are_read_once_each(tmp_path):
    pytest.importorskip("numba")
    from conftest import module_from_source
    module = module_from_source(tmp_path, "auto_helpers_", """
def step(s, r):
    return r * s * (1.0 - s)

def iterate(r, n=50):
    s = 0.5
    for _ in range(n):
        s = step(s, r)
    return s

def power(x, k):
    return 1.0 if k == 0 else x * power(x, k - 1)

def straight(x):
    return power(x, 3) + step(x, 2.0)
""")
    looped = s2s_ad.grad(module.iterate, backend="auto")
    assert looped.backend_chosen.backend == "numba" and "works on numbers" in looped.backend_chosen.reason
    assert looped(3.2) == pytest.approx(numeric_grad(module.iterate, (3.2,), 0), rel=1e-5)
    assert looped(3.2) == pytest.approx(s2s_ad.grad(module.iterate)(3.2), rel=1e-12)
    straight = s2s_ad.grad(module.straight, backend="auto")  # (power calls itself: read once, no loop)
    assert straight.backend_chosen.backend == "python"
    assert straight(0.7) == pytest.approx(3 * 0.7 ** 2 + 2.0 * (1.0 - 2 * 0.7), rel=1e-12)
