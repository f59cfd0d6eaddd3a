"""The compiled path (issue #20): ``backend="numba"`` gives the Python backend's numbers, or falls back.

Oracles: the Python backend's gradient (itself checked against differences and JAX across the suite)
and central differences.  Every case either compiled and agrees to rounding, or warned
``CompileFallbackWarning`` naming what Numba refused and the user's line, and then agrees exactly (the
same Python code ran).  Numba is an optional extra: without it these tests skip, saying so, and fail
instead under ``S2S_AD_REQUIRE_EXTRAS=1`` (the CI job that installs ``s2s_ad[numba]``).
"""
from __future__ import annotations

import importlib
import inspect
import os
import pickle
import subprocess
import sys
import textwrap
import warnings
from pathlib import Path

import numpy as np
import pytest

import s2s_ad
from conftest import corpus_functions, module_from_source as _module_in, numeric_grad, optional_import

numba = optional_import("numba")
pytestmark = pytest.mark.skipif(numba is None, reason="numba is not installed (pip install 's2s_ad[numba]')")

from s2s_ad import CompileFallbackWarning  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))  # the repository's top: benchmarks/ and examples/ (not installed with the package)


_SOURCES = None  # (set by the fixture below: a folder of this session's for the test programs)


@pytest.fixture(autouse=True)
def _programs_folder(tmp_path_factory):
    global _SOURCES
    _SOURCES = tmp_path_factory.mktemp("numba_programs", numbered=False) if _SOURCES is None else _SOURCES


def module_from_source(source):
    """A program written as a user would, imported from a real file (s2s_ad reads source)."""
    return _module_in(_SOURCES, "numba_program_", textwrap.dedent(source))


@pytest.fixture(autouse=True)
def _own_cache_directory(tmp_path_factory, monkeypatch):
    """Compiled code cached on disk in a directory of this test session's, not the user's."""
    monkeypatch.setenv("S2S_AD_CACHE_DIR", str(tmp_path_factory.getbasetemp() / "s2s_ad_cache"))


def _both(fn, args, wrt, **options):
    """(the numba backend's result, the Python backend's, the fallback warnings raised)."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        compiled = s2s_ad.grad(fn, wrt=wrt, backend="numba", **options)(*args)
    python = s2s_ad.grad(fn, wrt=wrt, **options)(*args)
    fallbacks = [w for w in caught if issubclass(w.category, CompileFallbackWarning)]
    return compiled, python, fallbacks


def _assert_same(compiled, python, exact=False):
    compiled = compiled if isinstance(compiled, tuple) else (compiled,)
    python = python if isinstance(python, tuple) else (python,)
    assert len(compiled) == len(python)
    for a, b in zip(compiled, python):
        assert type(a) is type(b) or (np.ndim(a) == 0 and np.ndim(b) == 0)
        assert np.shape(a) == np.shape(b)
        if exact:
            np.testing.assert_array_equal(a, b)
        else:
            np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-13)


# -- the benchmark workloads and the examples that loop ----------------------------------------------

def _cases():
    from benchmarks.cases import CASES
    return CASES


COMPILED_WORKLOADS = {"rational", "poly_loop", "building", "mlp", "rk4", "deblur", "logsumexp_ce"}


@pytest.mark.parametrize("name", ["rational", "poly_loop", "building", "mlp", "deblur", "rk4", "logsumexp_ce"])
def test_each_benchmark_workload_compiles_or_names_why_and_agrees(name):
    case = next(c for c in _cases() if c.name == name)
    args = case.make_args(True)
    compiled, python, fallbacks = _both(case.function, args, case.wrt)
    if name in COMPILED_WORKLOADS:
        assert not fallbacks, [str(w.message) for w in fallbacks]
        _assert_same(compiled, python)
    else:
        assert len(fallbacks) == 1
        message = str(fallbacks[0].message)
        assert "workloads.py" in message and "at line" in message and "runs as Python" in message
        _assert_same(compiled, python, exact=True)
    hand = case.hand_gradient(*args)
    for a, b in zip(compiled, hand):
        np.testing.assert_allclose(a, b, rtol=1e-8, atol=1e-10)


@pytest.mark.parametrize("name", ["deblur", "logsumexp_ce"])
def test_deblur_and_logsumexp_ce_compile_without_falling_back(name):
    """np.pad and pad_grad (deblur), np.max/np.sum with axis= and keepdims= and np.full of an array
    (logsumexp_ce) have compiled versions: no fallback, and the Python backend's numbers."""
    case = next(c for c in _cases() if c.name == name)
    args = case.make_args(True)
    df = s2s_ad.grad(case.function, wrt=case.wrt, backend="numba")
    with warnings.catch_warnings():
        warnings.simplefilter("error", CompileFallbackWarning)
        compiled = df(*args)  # (a fallback would raise its warning here)
    _assert_same(compiled, s2s_ad.grad(case.function, wrt=case.wrt)(*args))


def test_the_compiled_code_is_numbas_and_runs_compiled():
    from benchmarks import workloads
    df = s2s_ad.grad(workloads.poly_loop, wrt=("r", "x"), backend="numba")
    df(3.1, 0.2, 50)
    entry = df._by_types[df._types_of((3.1, 0.2, 50))][0][0]  # (the entry's function)
    assert entry.state["run"] is entry.compiled  # not fallen back
    assert len(entry.compiled.signatures) == 1
    # the tape: a float64 array made before the loop (its trip count known on entry), indexed, not a list
    assert "tape_s1 = float_stack(len(steps))" in df.source and "tape_s1[top_s1] = s" in df.source
    assert ".append(" not in df.source and ".pop()" not in df.source
    assert "tape = (" not in df.source  # no nested-tuple tape in compiled code


def _example_cases():
    building = importlib.import_module("examples.building_heating")
    outside, occupied, price = building.week(120)
    logistic = importlib.import_module("examples.logistic")
    checkpointing = importlib.import_module("examples.checkpointing")
    start = np.linspace(0.1, 0.9, 16)
    return [("building_heating.cost", building.cost, (np.full(120, 1.5), outside, occupied, price), 0),
            ("logistic.logistic", logistic.logistic, (3.1, 0.2, 50), (0, 1)),
            ("checkpointing.simulate", checkpointing.simulate, (start, 0.3, 60), (0, 1)),
            ("checkpointing.simulate_checkpointed", checkpointing.simulate_checkpointed, (start, 0.3, 60), (0, 1))]


@pytest.mark.parametrize("index", range(4))
def test_examples_that_loop_compile_or_name_why_and_agree(index):
    name, fn, args, wrt = _example_cases()[index]
    compiled, python, fallbacks = _both(fn, args, wrt)
    _assert_same(compiled, python, exact=bool(fallbacks))
    for w in fallbacks:
        assert "runs as Python instead" in str(w.message) and "at line" in str(w.message)
    print(name, "fell back:" if fallbacks else "compiled", [str(w.message) for w in fallbacks])


def test_a_loop_checkpointed_every_k_trips_compiles_and_agrees():
    """``checkpointed(range(n), every=3)`` (the shared generators' programs ran it as Python: Numba had
    no ``checkpoint_stride`` of an int ``every``); ``every=0`` raises Python's ValueError."""
    module = module_from_source("""
        import numpy as np
        import s2s_ad

        def relax(x, n, every):
            s = 0.3
            w = x * 0.5
            for i in s2s_ad.checkpointed(range(n), every=every):
                if s > 0.5:
                    s = s * 0.7 + np.sum(w) * 0.1
                else:
                    s = s * 0.9 - 0.1 * i
                w = w * 0.8 + np.tanh(s * x) * 0.2
            return s + np.sum(w ** 2)
    """)
    x = np.linspace(0.1, 1.0, 4)
    df = s2s_ad.grad(module.relax, backend="numba")
    for n in (0, 1, 5, 10):
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            got = df(x, n, 3)
        _assert_same(got, s2s_ad.grad(module.relax)(x, n, 3))
        np.testing.assert_allclose(got, numeric_grad(lambda x: module.relax(x, n, 3), (x,), 0), rtol=1e-6, atol=1e-9)
    with pytest.raises(ValueError, match="every=0"):
        df(x, 5, 0)


def test_positions_written_as_a_list_literal_compile_repeats_and_masks_included():
    """``b[[3, 1, 3]]``, ``c[[0, 2]] = ...`` and ``b[[True, False, ...]]``: NumPy reads the list as an
    index array (a mask), which the Numba target writes as ``np.array([...])`` (Numba indexes by arrays
    only: these ran as Python)."""
    module = module_from_source("""
        import numpy as np

        def picked(b, x):
            part = b[[3, 1, 3]]
            c = b * 1.0
            c[[0, 2]] = x * part[:2]
            kept = b[[True, False, True, True, False]]
            return np.sum(part * c[:3] ** 2) + np.sum(np.sin(kept))
    """)
    b = np.linspace(0.1, 1.0, 5)
    df = s2s_ad.grad(module.picked, wrt=(0, 1), backend="numba")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        got = df(b, 0.7)
    assert "np.array([3, 1, 3])" in df.source
    _assert_same(got, s2s_ad.grad(module.picked, wrt=(0, 1))(b, 0.7))
    np.testing.assert_allclose(got[0], numeric_grad(module.picked, (b, 0.7), 0), rtol=1e-6, atol=1e-9)
    np.testing.assert_allclose(got[1], numeric_grad(module.picked, (b, 0.7), 1), rtol=1e-6, atol=1e-9)


def test_helpers_with_keyword_only_parameters_are_lowered_in_place_and_compile():
    """``def kh(p, q=0.5, *, r=2.0)`` called by position, by keyword and with its defaults, and a helper
    given a tuple with keyword-only options: lowered in place (the Numba target inlines helpers; they
    stayed calls, which Numba cannot compile, and the function ran as Python)."""
    module = module_from_source("""
        import numpy as np

        def kh(p, q=0.5, *, r=2.0):
            return p * q + r * np.sin(p)

        def energy(pair, *, scale=2.0, shift=0.1):
            a, b = pair
            return scale * np.sum(a * b) + shift * np.sum(a)

        def f(x, v):
            a = kh(np.mean(v), 0.5, r=3.0)
            b = kh(q=x, p=v[1])
            c = kh(v[2])
            return a * b + c + energy((x * v, v), shift=0.5) + energy((v, v), scale=x)
    """)
    v = np.linspace(0.1, 1.0, 4)
    df = s2s_ad.grad(module.f, wrt=(0, 1), backend="numba")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        got = df(0.3, v)
    assert "kh" not in df.source.split("reverse sweep")[0].replace("# ", "")  # (no call left)
    python = s2s_ad.grad(module.f, wrt=(0, 1))(0.3, v)
    _assert_same(got, python)
    np.testing.assert_allclose(got[0], numeric_grad(module.f, (0.3, v), 0), rtol=1e-7, atol=1e-9)
    np.testing.assert_allclose(got[1], numeric_grad(module.f, (0.3, v), 1), rtol=1e-7, atol=1e-9)


def test_a_list_of_arrays_built_by_appends_then_joined_compiles():
    """``rows.append(...)`` in a loop, then np.stack, np.concatenate and np.vstack of the list: the join's
    adjoint reads the list for its shapes only (``holds_no_list``), so the appends grow the list in place,
    which Numba types (a new list per append, from ``[]``, it cannot: the function ran as Python)."""
    module = module_from_source("""
        import numpy as np

        def joined(x, M):
            rows = []
            for i in range(3):
                rows.append(np.tanh(M[i, :]) * (i + x))
            pieces = []
            for i in range(2):
                pieces.append(M[i, 1:] * x)
            return np.sum(np.stack(rows) ** 2) + np.sum(np.concatenate(pieces) * 0.5) + np.sum(np.vstack(rows)[1])
    """)
    M = np.linspace(-1.0, 1.0, 12).reshape(3, 4)
    df = s2s_ad.grad(module.joined, wrt=(0, 1), backend="numba")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        got = df(0.3, M)
    assert "list_append" not in df.source
    _assert_same(got, s2s_ad.grad(module.joined, wrt=(0, 1))(0.3, M))
    np.testing.assert_allclose(got[0], numeric_grad(module.joined, (0.3, M), 0), rtol=1e-7, atol=1e-9)
    np.testing.assert_allclose(got[1], numeric_grad(module.joined, (0.3, M), 1), rtol=1e-7, atol=1e-9)


# -- what cannot compile falls back, saying what and where -----------------------------------------

def test_a_function_numba_cannot_compile_falls_back_once_naming_the_construct_and_line():
    module = module_from_source("""
        import numpy as np

        def padded_energy(x):
            y = np.einsum("...ij,jk->...ik", x, x)  # ("..." has no compiled version)
            return np.sum(y ** 3)
    """)
    x = np.linspace(0.1, 1.0, 6).reshape(2, 3) @ np.ones((3, 2))
    df = s2s_ad.grad(module.padded_energy, backend="numba")
    with pytest.warns(CompileFallbackWarning, match=r"at line \d+ of .*einsum.*runs as Python instead") as said:
        first = df(x)
    assert [w.filename for w in said if w.category is CompileFallbackWarning] == [__file__]  # the user's call
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # once: the second call says nothing
        second = df(x)
    expected = s2s_ad.grad(module.padded_energy)(x)
    np.testing.assert_array_equal(first, expected)
    np.testing.assert_array_equal(second, expected)
    np.testing.assert_allclose(first, numeric_grad(module.padded_energy, (x,), 0), rtol=1e-6)


def test_an_error_the_users_code_raises_is_raised_as_python_raises_it():
    module = module_from_source("""
        import numpy as np

        def pick(x, i):
            return x[i] * 2.0
    """)
    df = s2s_ad.grad(module.pick, backend="numba")
    with pytest.raises(IndexError):
        df(np.ones(3), 7)


def test_a_division_by_zero_means_what_it_means_in_python():
    module = module_from_source("""
        import numpy as np

        def ratio(x, y):
            return x / (y - y)

        def element_ratio(a, y):
            return a[0] * y / (a[1] - a[1])
    """)
    with pytest.raises(ZeroDivisionError):  # Python's floats: an error, compiled or not
        s2s_ad.grad(module.ratio, backend="numba")(1.0, 2.0)
    a = np.array([1.5, 2.0])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # (NumPy's divide-by-zero warning)
        with pytest.warns(CompileFallbackWarning):
            compiled = s2s_ad.grad(module.element_ratio, backend="numba")(a, 2.0)
        python = s2s_ad.grad(module.element_ratio)(a, 2.0)
    np.testing.assert_array_equal(compiled, python)  # NumPy's numbers: inf and nan, as Python's code gives
    assert not np.all(np.isfinite(python))


def test_in_place_updates_of_overlapping_slices_read_the_old_values():
    """Numba's ``a[1:] += a[:-1]`` reads what it has just written (NumPy buffers the overlap): the
    compiled code writes such updates as ``a[1:] = a[1:] + a[:-1]``."""
    module = module_from_source("""
        import numpy as np

        def smear(x):
            a = x * 1.0
            a[1:] += a[:-1]
            b = a[1:]
            b *= a[:-1]
            return np.sum(a * a)
    """)
    x = np.linspace(0.5, 1.5, 6)
    compiled, python, fallbacks = _both(module.smear, (x,), 0)
    assert not fallbacks, [str(w.message) for w in fallbacks]
    _assert_same(compiled, python)
    np.testing.assert_allclose(compiled, numeric_grad(module.smear, (x,), 0), rtol=1e-6)


def test_value_and_grad_and_has_aux():
    module = module_from_source("""
        import numpy as np

        def loss(w, x):
            total = 0.0
            for i in range(x.shape[0]):
                total = total + np.tanh(w * x[i]) ** 2
            return total, total / x.shape[0]
    """)
    x = np.linspace(-1.0, 1.0, 7)
    compiled = s2s_ad.value_and_grad(module.loss, has_aux=True, backend="numba")(0.7, x)
    python = s2s_ad.value_and_grad(module.loss, has_aux=True)(0.7, x)
    assert compiled[0][0] == pytest.approx(python[0][0], rel=1e-13)
    assert compiled[1] == pytest.approx(python[1], rel=1e-12)


def test_grad_compiles_the_code_without_the_value_and_value_and_grad_the_code_with_it():
    """grad's code leaves out what only the value needs (the logarithm of logsumexp_ce); both compile,
    and give the Python backend's gradient and value."""
    case = next(c for c in _cases() if c.name == "logsumexp_ce")
    args = case.make_args(True)
    df = s2s_ad.grad(case.function, wrt=case.wrt, backend="numba")
    vdf = s2s_ad.value_and_grad(case.function, wrt=case.wrt, backend="numba")
    with warnings.catch_warnings():
        warnings.simplefilter("error", CompileFallbackWarning)
        alone, (value, paired) = df(*args), vdf(*args)
    _assert_same(alone, paired)
    _assert_same(alone, s2s_ad.grad(case.function, wrt=case.wrt)(*args))
    assert value == pytest.approx(case.function(*args), rel=1e-13)
    assert "np.log(" not in df.source_for(*args) and "np.log(" in vdf.source_for(*args)
    for a, b in zip(alone, case.hand_gradient(*args)):
        np.testing.assert_allclose(a, b, rtol=1e-8, atol=1e-10)


def test_grad_and_value_and_grad_keep_files_of_their_own_in_the_disk_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("S2S_AD_CACHE_DIR", str(tmp_path))
    module = module_from_source("""
        import numpy as np

        def squares_and_log(x, c):
            return np.sum(x * x) + np.log(c)
    """)
    x = np.array([0.5, -1.0, 2.0])
    np.testing.assert_allclose(s2s_ad.grad(module.squares_and_log, backend="numba")(x, 3.0), 2 * x, rtol=1e-15)
    value, gradient = s2s_ad.value_and_grad(module.squares_and_log, backend="numba")(x, 3.0)
    assert value == pytest.approx(5.25 + np.log(3.0), rel=1e-14)
    np.testing.assert_allclose(gradient, 2 * x, rtol=1e-15)
    files = sorted(tmp_path.glob("numba/d_squares_and_log_*.py"))
    assert len(files) == 2
    assert sorted(("np.log(" in f.read_text()) for f in files) == [False, True]


def test_a_result_that_is_not_a_number_is_refused_by_compiled_code_too():
    module = module_from_source("""
        import numpy as np

        def doubled(x):
            return x * 2.0
    """)
    with warnings.catch_warnings():
        warnings.simplefilter("error", CompileFallbackWarning)  # the user's error, not Numba's refusal
        for how in (s2s_ad.grad, s2s_ad.value_and_grad):
            with pytest.raises(TypeError, match=r"grad needs doubled to return a scalar.*shape \(3,\)"):
                how(module.doubled, backend="numba")(np.ones(3))


def test_helpers_are_compiled_inlined_and_recursion_falls_back():
    module = module_from_source("""
        import numpy as np

        def step(u, k):
            return u + 0.1 * k * (u - u ** 3)

        def run(u, k, n):
            for t in range(n):
                u = step(u, k)
            return u * u

        def power(x, n):
            if n == 0:
                return 1.0
            return x * power(x, n - 1)

        def uses_power(x):
            return power(x, 3)
    """)
    compiled, python, fallbacks = _both(module.run, (0.3, 1.5, 40), (0, 1))
    assert not fallbacks
    _assert_same(compiled, python)
    compiled, python, fallbacks = _both(module.uses_power, (1.3,), 0)
    _assert_same(compiled, python)
    assert compiled == pytest.approx(3 * 1.3 ** 2, rel=1e-12)


def test_arrays_written_element_by_element_in_a_loop():
    module = module_from_source("""
        import numpy as np

        def pendulum(theta0, damping, n):
            theta = np.zeros(n + 1)
            omega = np.zeros(n + 1)
            theta[0] = theta0
            dt = 0.01
            for t in range(n):
                omega[t + 1] = omega[t] - dt * (np.sin(theta[t]) + damping * omega[t])
                theta[t + 1] = theta[t] + dt * omega[t + 1]
            return np.sum(theta ** 2) * dt
    """)
    compiled, python, fallbacks = _both(module.pendulum, (0.8, 0.3, 500), (0, 1))
    assert not fallbacks, [str(w.message) for w in fallbacks]
    _assert_same(compiled, python)
    np.testing.assert_allclose(compiled[0], numeric_grad(module.pendulum, (0.8, 0.3, 500), 0), rtol=1e-6)


def test_code_that_draws_random_numbers_runs_as_python_saying_so():
    module = module_from_source("""
        import numpy as np

        def noisy(x):
            return np.sum(x * np.random.normal(size=x.shape))
    """)
    x = np.linspace(0.0, 1.0, 4)
    np.random.seed(3)
    with pytest.warns(CompileFallbackWarning, match="random numbers"):
        compiled = s2s_ad.grad(module.noisy, backend="numba")(x)
    np.random.seed(3)
    np.testing.assert_array_equal(compiled, s2s_ad.grad(module.noisy)(x))


def test_float32_arguments_run_the_float64_code_compiled_and_get_float32_back():
    module = module_from_source("""
        import numpy as np

        def energy(x):
            total = 0.0
            for i in range(x.shape[0]):
                total = total + 0.1 * x[i] * x[i]
            return total
    """)
    df = s2s_ad.grad(module.energy, backend="numba")
    x32 = np.linspace(0.1, 1.0, 5, dtype=np.float32)
    x64 = x32.astype(np.float64)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        first = df(x32)  # (a new key's first call runs as Python: NumPy's types, kept for the later calls)
        got = df(x32)
        wide = df(x64)
    np.testing.assert_array_equal(first, s2s_ad.grad(module.energy)(x32))
    assert got.dtype == first.dtype == np.float32
    # the float64 code ran on the float32 values, its result rounded once (tests/targets/test_numba_narrow.py)
    np.testing.assert_array_equal(got, wide.astype(np.float32))
    np.testing.assert_allclose(got, s2s_ad.grad(module.energy)(x32), rtol=1e-6)
    _assert_same(wide, s2s_ad.grad(module.energy)(x64))


def test_unknown_backend_and_missing_numba_are_said_when_the_derivative_is_made(monkeypatch):
    with pytest.raises(ValueError, match="backend must be one of"):
        s2s_ad.grad(np.sin, backend="cuda")
    import importlib.util
    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "numba" else real(name, *a))
    with pytest.raises(ImportError, match=r"s2s_ad\[numba\]"):
        s2s_ad.grad(lambda x: x * x, backend="numba")


def test_a_compiled_gradient_pickles_with_its_backend():
    from benchmarks import workloads
    df = s2s_ad.grad(workloads.poly_loop, wrt=("r", "x"), backend="numba")
    again = pickle.loads(pickle.dumps(df))
    assert again._target is df._target
    _assert_same(again(3.1, 0.2, 30), df(3.1, 0.2, 30))


# -- bounds checks: dropped only where every index is proven in range ----------------------------------

def _entry(df, args):
    """The compiled function a call of ``df`` with ``args`` runs (its ``options`` and ``unproven``)."""
    args = df._bind(args, {})
    return df._typed_entry(args, df._types_of(args))[0][0]


@pytest.mark.parametrize("name", ["building", "pendulum", "poly_loop", "rk4"])
def test_the_loop_workloads_compile_without_bounds_checks_and_agree(name):
    """Every index of these gradients is proven in range (building's t and t + 1 into arrays of n + 1,
    the tape stacks by their construction); pendulum's one write ``theta[0]`` cannot be (an empty
    ``observed`` makes ``theta`` empty) and is checked explicitly, once, before the loop."""
    case = next(c for c in _cases() if c.name == name)
    args = case.make_args(True)
    compiled, python, fallbacks = _both(case.function, args, case.wrt)
    assert not fallbacks, [str(w.message) for w in fallbacks]
    _assert_same(compiled, python)
    df = s2s_ad.grad(case.function, wrt=case.wrt, backend="numba")
    df(*args)
    entry = _entry(df, args)
    assert entry.options["boundscheck"] is False and entry.unproven == []
    assert entry.state["run"] is entry.compiled
    checks = [line.strip() for line in df.source_for(*args).splitlines() if "check_index(" in line]
    assert [c.split("#")[0].strip() for c in checks] == (["check_index(0, theta, 0)"] if name == "pendulum" else [])


_OUT_OF_RANGE = """
    import numpy as np

    def one_past_the_end(x):
        n = x.shape[0]
        s = 0.0
        for t in range(n):
            s = s + x[t] * x[t + 1]
        return s

    def the_length(x):
        n = x.shape[0]
        return x[n] * 2.0

    def below_minus_the_length(x):
        n = x.shape[0]
        return x[-n - 1] * 2.0

    def into_a_shorter_array(x):
        n = x.shape[0]
        y = np.zeros(n - 1)
        for t in range(n):
            y[t] = x[t] * x[t]
        return np.sum(y)

    def many_unproven(x):
        n = x.shape[0]
        s = 0.0
        for t in range(n):
            s = s + x[t + 1] * x[t + 2] + x[t + 3] * x[t + 4] + x[t + 5]
        return s

    def wrapped_length(x):
        n = x.shape[0]
        y = np.ones(4 * n + 8)
        s = 0.0
        for t in range(n):
            s = s + y[4 * t + 7] * x[t]
        return s
"""


@pytest.mark.parametrize("name", ["one_past_the_end", "the_length", "below_minus_the_length",
                                  "into_a_shorter_array", "many_unproven"])
def test_an_index_out_of_range_raises_as_in_python_never_a_number(name):
    """The wrong-number guard: an index the user got wrong raises IndexError compiled as in Python,
    whether the code kept Numba's checks (too many unproven indexes) or checks the few unproven ones."""
    fn = getattr(module_from_source(_OUT_OF_RANGE), name)
    x = np.linspace(0.5, 1.5, 7)
    with pytest.raises(IndexError):
        s2s_ad.grad(fn)(x)
    df = s2s_ad.grad(fn, backend="numba")
    for _ in range(2):  # (compiled, then from the compiled cache: it raises again, never returns)
        with warnings.catch_warnings():
            warnings.simplefilter("error", CompileFallbackWarning)
            with pytest.raises(IndexError):
                df(x)
    entry = _entry(df, (x,))
    assert entry.state["run"] is entry.compiled  # (an error of the user's: the compiled code stays)
    with pytest.raises(IndexError):
        entry.compiled(x)  # the machine code itself raises
    assert entry.options["boundscheck"] is (name == "many_unproven")
    assert entry.unproven if name == "many_unproven" else not entry.unproven


def test_a_length_that_may_wrap_past_two_to_the_64_is_not_taken_for_proven():
    # 4 * n + 8 wraps for n near 2**62 (a broadcast view may be that long): y's length is not known,
    # so y[4 * t + 7] is checked, not assumed in range
    fn = module_from_source(_OUT_OF_RANGE).wrapped_length
    x = np.linspace(0.5, 1.5, 7)
    df = s2s_ad.grad(fn, backend="numba")
    _assert_same(df(x), s2s_ad.grad(fn)(x))
    entry = _entry(df, (x,))
    checked_y = [line for line in df.source_for(x).splitlines() if "check_index(" in line and ", y, " in line]
    assert checked_y or any(access.text.startswith("y[") for access in entry.unproven)
    from s2s_ad.analysis import index_ranges
    n = index_ranges._Affine.symbol("len a")
    twice = n.times(2)  # below 2**64: wrapped, it is negative, and the allocation fails
    assert index_ranges._length(index_ranges._Int(twice, twice)) == twice
    wrapping = n.times(4).plus(index_ranges._Affine((), 8))
    assert index_ranges._length(index_ranges._Int(wrapping, wrapping)) is None
    assert index_ranges._length(index_ranges._Int(n.plus(index_ranges._Affine((), 1)), n.plus(index_ranges._Affine((), 1))))


def test_the_engine_ops_keep_their_own_bounds_checks_in_code_compiled_without():
    from s2s_ad.targets.numba import runtime as numba_runtime
    from s2s_ad.core import runtime
    numba_runtime.register()

    @numba.njit(boundscheck=False)
    def scattered(grad, a, index):
        return runtime.getitem_grad(grad, a, index)

    np.testing.assert_array_equal(scattered(np.ones(2), np.zeros(3), np.array([0, 2])), [1.0, 0.0, 1.0])
    with pytest.raises(IndexError):
        scattered(np.ones(2), np.zeros(3), np.array([0, 7]))


def test_code_with_and_without_bounds_checks_is_cached_in_files_of_its_own(tmp_path, monkeypatch):
    from s2s_ad.targets.numba import target as numba_target
    monkeypatch.setenv("S2S_AD_CACHE_DIR", str(tmp_path))
    seen = []
    dispatcher = numba_target._dispatcher
    monkeypatch.setattr(numba_target, "_dispatcher",
                        lambda function, emitted, options: seen.append(emitted) or dispatcher(function, emitted, options))
    from benchmarks import workloads
    s2s_ad.grad(workloads.poly_loop, wrt=("r",), backend="numba")(3.1, 0.2, 20)
    checked = numba_target._cache_file(seen[0], {**numba_target._OPTIONS, "boundscheck": True})
    unchecked = numba_target._cache_file(seen[0], {**numba_target._OPTIONS, "boundscheck": False})
    assert checked and unchecked and checked != unchecked


# -- the disk cache --------------------------------------------------------------------------------

_CACHED_RUN = textwrap.dedent("""
    import sys, time, warnings
    sys.path.insert(0, {root!r})
    import s2s_ad
    warnings.simplefilter("error", s2s_ad.CompileFallbackWarning)  # (compiled, not fallen back)
    from benchmarks import workloads
    df = s2s_ad.grad(workloads.poly_loop, wrt=("r", "x"), backend="numba")
    print(df(3.1, 0.2, 100))
    entry = df._by_types[df._types_of((3.1, 0.2, 100))][0][0]  # (the entry's function)
    print("hits", sum(entry.compiled.stats.cache_hits.values()), "misses", sum(entry.compiled.stats.cache_misses.values()))
""")


def test_a_second_process_loads_the_compiled_code_from_the_disk_cache(tmp_path):
    environment = {**os.environ, "S2S_AD_CACHE_DIR": str(tmp_path)}
    script = _CACHED_RUN.format(root=str(ROOT))
    first = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=environment,
                           timeout=300)
    assert first.returncode == 0, first.stderr
    second = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=environment,
                            timeout=300)
    assert second.returncode == 0, second.stderr
    assert first.stdout.splitlines()[0] == second.stdout.splitlines()[0]
    assert "hits 0" in first.stdout and "hits 1" in second.stdout
    assert list(tmp_path.glob("numba/d_poly_loop_*.py"))


_CACHED_HESSIAN = textwrap.dedent("""
    import sys, warnings
    import numpy as np
    sys.path.insert(0, {root!r})
    sys.path.insert(0, {folder!r})
    import s2s_ad
    from s2s_ad.api.gradient import GradientFunction, _tangent_function
    from s2s_ad.targets.numba.target import NUMBA
    warnings.simplefilter("error", s2s_ad.CompileFallbackWarning)
    from chained import rosenbrock
    x = np.linspace(-1.0, 1.0, 5)
    print(s2s_ad.hessian(rosenbrock, backend="numba")(x).tolist())
    tangent = _tangent_function(GradientFunction(rosenbrock, "x", with_value=False), ("x",), (x,), NUMBA)
    print("hits", sum(tangent.compiled.stats.cache_hits.values()))
""")


def test_a_second_process_loads_a_hessians_compiled_code_from_the_disk_cache(tmp_path):
    """The cache file's name digests the functions the code calls (``zero_tangent``, whose generator
    expression's repr held its address, another in every process: the Hessian compiled again each time)."""
    folder = tmp_path / "programs"
    folder.mkdir()
    (folder / "chained.py").write_text("import numpy as np\n\n\ndef rosenbrock(x):\n"
                                       "    return np.sum(100.0 * (x[1:] - x[:-1] ** 2) ** 2 + (1.0 - x[:-1]) ** 2)\n")
    environment = {**os.environ, "S2S_AD_CACHE_DIR": str(tmp_path / "cache")}
    script = _CACHED_HESSIAN.format(root=str(ROOT), folder=str(folder))
    runs = [subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=environment,
                           timeout=300) for _ in range(2)]
    assert all(run.returncode == 0 for run in runs), [run.stderr for run in runs]
    assert runs[0].stdout.splitlines()[0] == runs[1].stdout.splitlines()[0]
    assert "hits 0" in runs[0].stdout and "hits 1" in runs[1].stdout
    written = [p.name for p in (tmp_path / "cache").glob("numba/jvp_gradient_rosenbrock_*.py")]
    assert len([name for name in written if "_directions_" not in name]) == 1, written  # (one for both processes)


def test_a_changed_function_or_global_gets_code_of_its_own(tmp_path, monkeypatch):
    monkeypatch.setenv("S2S_AD_CACHE_DIR", str(tmp_path))
    first = module_from_source("""
        SCALE = 2.0

        def f(x):
            return SCALE * x * x
    """)
    second = module_from_source("""
        SCALE = 3.0

        def f(x):
            return SCALE * x * x
    """)
    assert s2s_ad.grad(first.f, backend="numba")(1.5) == pytest.approx(6.0)
    assert s2s_ad.grad(second.f, backend="numba")(1.5) == pytest.approx(9.0)



def test_the_disk_cache_key_covers_the_templates_compiled_versions(tmp_path, monkeypatch):
    # A compiled version (a user's template's, targets/numba/rules') edited in a checkout must not find the old
    # machine code on disk.
    from s2s_ad.targets.numba import target as numba_target
    from s2s_ad.rules import registry as rules
    fingerprint = numba_target._compiler_fingerprint.__wrapped__
    before = fingerprint()
    declaring = tmp_path / "declares_a_compiled_version.py"
    declaring.write_text("def factory(types):\n    return None\n")
    namespace: dict = {}
    exec(compile(declaring.read_text(), str(declaring), "exec"), namespace)
    versions = {**rules.compiled_versions("numba"), object(): namespace["factory"]}
    monkeypatch.setattr(rules, "compiled_versions", lambda target: versions if target == "numba" else {})
    with_it = fingerprint()
    assert with_it != before
    declaring.write_text("def factory(types):\n    return None  # edited\n")
    assert fingerprint() != with_it


def test_the_disk_cache_key_covers_the_kernels_the_compiled_versions_share(tmp_path, monkeypatch):
    # The compiled versions call s2s_ad/targets/numba/kernels.py's functions: an edit there must miss the old machine code.
    from s2s_ad.targets.numba import kernels as numba_kernels
    from s2s_ad.targets.numba import target as numba_target
    fingerprint = numba_target._compiler_fingerprint.__wrapped__
    before = fingerprint()
    kernels = tmp_path / "kernels.py"
    kernels.write_text(open(numba_kernels.__file__).read() + "# edited\n")
    monkeypatch.setattr(numba_kernels, "__file__", str(kernels))
    assert fingerprint() != before


def test_the_compiled_versions_live_in_the_numba_targets_rules_and_the_cache_key_covers_them(tmp_path, monkeypatch):
    # s2s_ad's own compiled versions are declared beside the target (targets/numba/rules), none in the templates;
    # an edit to any of its modules must miss the old machine code.
    import os
    import shutil
    from s2s_ad.targets.numba import rules as numba_rules, target as numba_target
    from s2s_ad.rules import registry as rules
    folder = os.path.dirname(numba_rules.__file__)
    declaring = {factory.__code__.co_filename for factory in rules.compiled_versions("numba").values()}
    helpers = ("__init__.py", "template_modules.py", "argument_types.py")  # (declare none; the key still reads them)
    assert declaring == {os.path.join(folder, name) for name in os.listdir(folder)
                         if name.endswith(".py") and name not in helpers}
    assert rules.compiled_versions("another target") == {}
    fingerprint = numba_target._compiler_fingerprint.__wrapped__
    before = fingerprint()
    copy = tmp_path / "rules"
    shutil.copytree(folder, copy, ignore=shutil.ignore_patterns("__pycache__"))
    monkeypatch.setattr(numba_rules, "__file__", str(copy / "__init__.py"))
    unedited = fingerprint()
    (copy / "numpy_shape.py").write_text((copy / "numpy_shape.py").read_text() + "# edited\n")
    assert fingerprint() not in (before, unedited)

# -- the corpus of the suite's functions -----------------------------------------------------------

CORPUS = ["aliasing_functions", "call_functions", "control_flow_functions", "data_functions",
          "everyday_functions", "everyday_more_functions", "everyday_idiom_functions",
          "everyday_numpy_functions", "front_functions", "hygiene_functions", "kinds_functions", "seed_functions",
          "shape_pattern_functions", "recording_plan_functions", "speed_functions", "facts_functions",
          "aliasing_ownership_functions", "user_programs", "crash_functions", "container_functions",
          "everyday_container_class_functions"]  # (round3/round4_user_programs import JAX: not here)


def _tally(module_name, fn, messages):
    """One line per case, compiled or with its fallback messages, appended to the file named by
    S2S_AD_TEST_NUMBA_TALLY where set (to count the reasons: ``python tests/corpora/numba_tally.py FILE``)."""
    path = os.environ.get("S2S_AD_TEST_NUMBA_TALLY")
    if path:
        import json
        with open(path, "a", encoding="utf-8") as out:
            out.write(json.dumps({"case": f"{module_name}.{fn.__name__}", "fallbacks": messages}) + "\n")


def _repeatable(fn, wrt, args, first):
    """Whether the Python backend's gradient is the same at a second call (seeded as the first)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        _seed()
        again = s2s_ad.grad(fn, wrt=wrt)(*args)
    pairs = zip(again, first) if isinstance(first, tuple) else [(again, first)]
    return all(np.array_equal(a, b, equal_nan=True) for a, b in pairs)


def _seed():
    import random
    np.random.seed(7)
    random.seed(7)


def _argument_sets(fn):
    n = len(inspect.signature(fn).parameters)
    numbers = tuple(0.3 + 0.17 * i for i in range(n))
    vectors = tuple(np.linspace(0.2 + 0.1 * i, 0.9 + 0.1 * i, 4) for i in range(n))
    yield numbers
    yield vectors
    if n > 1:
        yield numbers[:-1] + (3,)
        yield vectors[:-1] + (3,)


@pytest.mark.slow
@pytest.mark.parametrize("module_name", CORPUS)
def test_the_corpus_with_backend_numba_agrees_with_python_or_falls_back(module_name):
    """Every function of the suite's corpus modules, with numbers, vectors, and a trailing count: where
    the Python backend gives a gradient, the numba backend gives the same (compiled), or warns that it
    falls back naming the line and gives exactly Python's."""
    compiled_count = fallen_back = 0
    for fn in corpus_functions(module_name):
        for args in _argument_sets(fn):
            wrt = tuple(i for i, a in enumerate(args) if not isinstance(a, int))
            try:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    _seed()  # (functions that draw: both calls draw the same numbers)
                    python = s2s_ad.grad(fn, wrt=wrt)(*args)
            except Exception:
                continue  # (the function needs other arguments)
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                try:
                    _seed()
                    compiled = s2s_ad.grad(fn, wrt=wrt, backend="numba")(*args)
                except Exception as exc:  # the Python backend gave a gradient: so must this one
                    raise AssertionError(f"{module_name}.{fn.__name__}{args}: {type(exc).__name__}: {exc}") from exc
            fallbacks = [w for w in caught if issubclass(w.category, CompileFallbackWarning)]
            if not _repeatable(fn, wrt, args, python):
                continue  # (it draws from a generator object: no two calls agree, compiled or not)
            try:
                _assert_same(compiled, python, exact=bool(fallbacks))
            except AssertionError as exc:
                raise AssertionError(f"{module_name}.{fn.__name__} with {args}: {exc}") from None
            for w in fallbacks:
                assert "runs as Python instead" in str(w.message)
                print("fell back:", str(w.message))
            fallen_back += bool(fallbacks)
            compiled_count += not fallbacks
            _tally(module_name, fn, [str(w.message) for w in fallbacks])
    print(f"{module_name}: {compiled_count} compiled, {fallen_back} fell back")
    assert compiled_count + fallen_back > 0


# -- the compiled versions of templates' functions and helpers, against NumPy and the Python helpers ---
# Each call is compiled by numba.njit after the runtime's registration (as generated code is); where a
# compiled version refuses the types (Numba's TypingError: the code would fall back) nothing is compared;
# where it runs, it gives NumPy's (or the Python helper's) numbers exactly, of the same dtype and shape,
# or raises where they raise.

def _njit(expression, **names):
    from s2s_ad.targets.numba import runtime as numba_runtime
    numba_runtime.register()
    return numba.njit(error_model="python", boundscheck=True)(eval(expression, {"np": np, **names}))  # (as generated code)


def _template_helper(module, name):
    s2s_ad.rules.registry.load_templates()
    return getattr(sys.modules[f"s2s_ad.templates.{module}"], name)


def _outcome(call, *args):
    """(the result, whether it raised, whether NumPy warned): warned results are compared where the
    compiled code gives one (it warns of nothing: inf - inf, an empty mean), and may raise instead."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error", RuntimeWarning)
            return call(*args), False, False
    except RuntimeWarning:
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", RuntimeWarning)
                return call(*args), False, True
        except Exception:
            return None, True, True
    except Exception:
        return None, True, False


def _compare(compiled, python, args, what, exact_zero_sign=True):
    """Run both; True where the compiled version ran (False: it refused the types)."""
    from numba.core.errors import TypingError
    want, python_raised, warned = _outcome(python, *args)
    try:
        got = compiled(*args)
    except TypingError:
        return False
    except Exception:
        assert python_raised or warned, f"{what}: compiled raised where Python gives {want!r}"
        return True
    assert not python_raised, f"{what}: compiled gave {got!r} where Python raises"
    assert np.shape(got) == np.shape(want), what
    if np.ndim(want):
        assert type(got) is type(want) and got.dtype == want.dtype, (what, got.dtype, want.dtype)
    np.testing.assert_array_equal(got, want, err_msg=what)
    if exact_zero_sign:
        np.testing.assert_array_equal(np.signbit(got), np.signbit(want), err_msg=what)
    return True


def _reduction_inputs():
    rng = np.random.default_rng(1)
    for shape in [(0,), (5,), (130,), (3, 0), (3, 4), (1, 200), (4, 1), (2, 3, 5), (4, 1, 130)]:
        yield rng.standard_normal(shape) * 10.0 ** rng.integers(-4, 4, shape)
    yield np.array([[np.nan, 1.0, 3.0], [-0.0, 0.0, 2.0]])
    yield np.array([[np.inf, -np.inf, 1.0], [-0.0, -0.0, 2.0]])
    yield rng.integers(-50, 50, (3, 4)).astype(np.int32)
    yield rng.integers(0, 9, (5,)).astype(np.uint8)
    yield rng.integers(0, 2, (3, 4)).astype(bool)
    yield rng.standard_normal((4, 3)).T  # (not C-contiguous: sum, mean and prod refuse it)
    yield rng.standard_normal(3) + 1j  # (complex: refused)


@pytest.mark.slow
@pytest.mark.parametrize("name", ["sum", "mean", "prod", "max", "min", "amax"])
def test_reductions_over_axes_compiled_give_numpys_numbers(name):
    """np.<name>(a, axis=..., keepdims=...) where Numba has none: odd shapes, negative axes, axis tuples,
    empty arrays, NaN and infinities, integers and booleans; sums in NumPy's (pairwise) order."""
    ran = 0
    for keepdims in (True, False):
        compiled = _njit(f"lambda a, axis: np.{name}(a, axis=axis, keepdims={keepdims})")
        python = getattr(np, name)
        for a in _reduction_inputs():
            for axis in (None, 0, 1, -1, -2, 2, (0, 1), (0, -1), (1, 1)):
                what = f"np.{name}({a.dtype} {a.shape}, axis={axis}, keepdims={keepdims})"
                ran += _compare(compiled, lambda a, axis: python(a, axis=axis, keepdims=keepdims), (a, axis), what,
                                exact_zero_sign=name in ("sum", "mean", "prod"))  # (NumPy's max of -0.0, 0.0: either)
    assert ran > 60


@pytest.mark.slow
@pytest.mark.parametrize("name", ["var", "std"])
def test_var_and_std_with_options_compiled_give_numpys_numbers(name):
    """np.var and np.std with axis=, ddof= or keepdims= (NumPy's steps, each a compiled reduction): bit for
    bit, NaN and infinities included; ddof past the count raises, and the call runs as Python (NumPy's NaN)."""
    ran = 0
    python = getattr(np, name)
    for options in ("axis=axis", "axis=axis, ddof=1", "axis=axis, keepdims=True", "axis=axis, ddof=2, keepdims=True"):
        compiled = _njit(f"lambda a, axis: np.{name}(a, {options})")
        for a in _reduction_inputs():
            for axis in (None, 0, 1, -1, 2):
                what = f"np.{name}({a.dtype} {a.shape}, {options}, axis={axis})"
                ran += _compare(compiled, lambda a, axis: eval(f"np.{name}(a, {options})"), (a, axis), what)
    assert ran > 60


def test_a_reduction_over_the_last_axis_is_summed_pairwise_as_numpy_does():
    x = np.random.default_rng(2).standard_normal((3, 1000)) * 10.0 ** (np.arange(1000) % 7)
    summed = _njit("lambda a: np.sum(a, axis=-1, keepdims=True)")(x)
    assert np.array_equal(summed, np.sum(x, axis=-1, keepdims=True))
    assert not np.array_equal(summed[:, 0], [sum(row) for row in x])  # (which a sequential sum would give)


def test_full_of_an_array_compiled_gives_numpys_array():
    compiled = _njit("lambda shape, value: np.full(shape, value)")
    rng = np.random.default_rng(0)
    for shape, value in [((3, 4), rng.standard_normal((3, 1))), ((3, 4), rng.standard_normal(4)),
                         ((2, 3, 4), rng.standard_normal((3, 4))), ((3, 4), np.arange(4)), ((3, 4), np.array(True)),
                         ((3, 4), rng.standard_normal((4, 3)).T), (5, np.array([1.5])), ((0, 3), np.ones(3)),
                         ((), np.array(2.0)), ((2,), np.ones(3))]:
        assert _compare(compiled, np.full, (shape, value), f"np.full({shape}, {value.dtype} {value.shape})")


@pytest.mark.slow
@pytest.mark.parametrize("mode", ["edge", "constant"])
def test_pad_and_pad_grad_compiled_give_numpys_and_the_helpers_numbers(mode):
    pad_grad = _template_helper("numpy_shape", "pad_grad")
    pad = _njit(f"lambda a, w: np.pad(a, w, mode={mode!r})")
    grad = _njit(f"lambda g, a, w: pad_grad(g, a, w, {mode!r}, None, 'even')", pad_grad=pad_grad)
    rng = np.random.default_rng(3)
    ran = 0
    for shape in [(5,), (3, 4), (2, 3, 4), (1, 1), (0,), (3, 0), (4, 1, 2)]:
        widths = [0, 1, 9, (2,), (1, 2), (0, 11), ((1, 2),), tuple((i,) for i in range(len(shape))),
                  tuple((i % 3, (i + 1) % 4 + 7 * (i == 0)) for i in range(len(shape)))]
        for a in (rng.standard_normal(shape) * 10, rng.integers(-9, 9, shape).astype(np.int32)):
            for w in widths:
                what = f"np.pad({a.dtype} {shape}, {w}, {mode!r})"
                ran += _compare(pad, lambda a, w: np.pad(a, w, mode=mode), (a, w), what)
                if a.dtype != np.float64 or np.pad(a, w, mode="constant").size == 0 and mode == "edge":
                    continue
                g = rng.standard_normal(np.pad(a, w).shape) * 10.0 ** rng.integers(-3, 3, np.pad(a, w).shape)
                ran += _compare(grad, lambda g, a, w: pad_grad(g, a, w, mode, None, "even"), (g, a, w), "pad_grad " + what)
    assert ran > 150


@pytest.mark.slow
@pytest.mark.parametrize("mode", ["reflect", "symmetric"])
def test_pad_by_reflection_compiled_gives_numpys_elements_and_the_helpers_adjoint(mode):
    """The compiled np.pad's mirrored modes (one and two axes by their own loops, more by the general
    one) copy NumPy's elements, borders wider than the axis included; pad_grad adds each element of
    the adjoint into the one it copies (in another order than the template's products: to rounding)."""
    pad_grad = _template_helper("numpy_shape", "pad_grad")
    pad = _njit(f"lambda a, w: np.pad(a, w, mode={mode!r})")
    grad = _njit(f"lambda g, a, w: pad_grad(g, a, w, {mode!r}, None, 'even')", pad_grad=pad_grad)
    rng = np.random.default_rng(4)
    ran = 0
    for shape in [(1,), (5,), (3, 4), (1, 6), (2, 3, 4)]:
        widths = [0, 1, 7, (2, 9), tuple((i + 1, 2 * i) for i in range(len(shape)))]
        for a in (rng.standard_normal(shape), rng.integers(-9, 9, shape)):
            for w in widths:
                what = f"np.pad({a.dtype} {shape}, {w}, {mode!r})"
                ran += _compare(pad, lambda a, w: np.pad(a, w, mode=mode), (a, w), what)
                if a.dtype != np.float64:
                    continue
                g = rng.standard_normal(np.pad(a, w).shape)
                for seed in (g, np.asfortranarray(g)):
                    np.testing.assert_allclose(grad(seed, a, w), pad_grad(seed, a, w, mode, None, "even"),
                                               rtol=1e-13, atol=1e-13, err_msg="pad_grad " + what)
                    ran += 1
    assert ran > 70


@pytest.mark.slow
def test_roll_of_the_flattened_array_compiled_gives_numpys_array():
    compiled = _njit("lambda a, shift: np.roll(a, shift, None)")
    rng = np.random.default_rng(0)
    for shape in [(5,), (3, 4), (0,), (2, 0), (2, 3, 2)]:
        for a in (rng.standard_normal(shape), rng.integers(0, 9, shape), rng.standard_normal(shape[::-1]).T):
            for shift in (0, 1, -1, 7, -13):
                assert _compare(compiled, lambda a, shift: np.roll(a, shift, None), (a, shift), f"roll {shape} {shift}")


@pytest.mark.slow
def test_roll_along_an_axis_compiled_gives_numpys_array():
    """Numba's own np.roll takes no axis: the compiled version rolls each line along it (a negative axis
    counted from the end, a shift larger than the axis or negative taken modulo its length)."""
    by_position = _njit("lambda a, shift, axis: np.roll(a, shift, axis)")
    by_keyword = _njit("lambda a, shift: np.roll(a, shift, axis=-1)")
    rng = np.random.default_rng(1)
    ran, shapes = 0, [(5,), (3, 4), (2, 0), (0, 3), (2, 3, 4)]
    for shape in shapes:
        for a in (rng.standard_normal(shape), rng.integers(0, 9, shape), rng.standard_normal(shape[::-1]).T):
            for shift in (0, 1, -1, 7, -13):
                for axis in range(-len(shape), len(shape)):
                    ran += _compare(by_position, lambda a, shift, axis: np.roll(a, shift, axis), (a, shift, axis),
                                    f"roll {shape} {shift} along {axis}")
                ran += _compare(by_keyword, lambda a, shift: np.roll(a, shift, axis=-1), (a, shift), f"roll {shape}")
    assert ran == sum(3 * 5 * (2 * len(shape) + 1) for shape in shapes)  # (every one compiled)


@pytest.mark.slow
@pytest.mark.parametrize("name", ["matmul_grad_a", "matmul_grad_b", "dot_grad_a", "dot_grad_b"])
def test_matrix_product_adjoints_compiled_agree_with_the_helpers(name):
    """Vectors and matrices: the same products of the same shapes (to the rounding of the BLAS Numba
    links, which may not be NumPy's)."""
    helper = _template_helper("numpy_linalg", name)
    compiled = _njit("lambda g, a, b: helper(g, a, b)", helper=helper)
    rng = np.random.default_rng(0)
    for sa, sb in [((3,), (3,)), ((2, 3), (3, 4)), ((3,), (3, 4)), ((2, 3), (3,)), ((0, 3), (3, 2)), ((2, 0), (0, 3)),
                   ((5, 7), (7, 6))]:
        a, b = rng.standard_normal(sa), rng.standard_normal(sb)
        g = rng.standard_normal(np.shape(a @ b)) if np.ndim(a @ b) else float(rng.standard_normal())
        for a_, b_ in ((a, b), (np.asfortranarray(a), b.T.copy().T)):
            got, want = compiled(g, a_, b_), helper(g, a_, b_)
            assert got.shape == want.shape and got.dtype == want.dtype, (name, sa, sb)
            np.testing.assert_allclose(got, want, rtol=1e-13, atol=1e-14)


@pytest.mark.slow
def test_engine_ops_compiled_for_sequences_ranges_and_stores():
    """getitem_grad of a list or tuple of numbers, stored_part of a basic index, list_append, and a
    range sliced (a loop's first trips), against the Python ops; an index out of range raises."""
    from s2s_ad.core import runtime
    picked = _njit("lambda g, a, i: runtime.getitem_grad(g, a, i)", runtime=runtime)
    for a in ([0.5, 1.5, 2.5], (0.5, 1.5), (1, 2.0, 3)):
        for i in (0, 1, -1, -3, 5):
            assert _compare(picked, runtime.getitem_grad, (2.5, a, i), f"getitem_grad {a}[{i}]")
    stored = _njit("lambda g, i, v: runtime.stored_part(g, i, v)", runtime=runtime)
    grad = np.random.default_rng(0).standard_normal((4, 5))
    for index, value in [(slice(1, 3), np.zeros((2, 5))), (slice(1, 3), np.zeros(5)), (1, np.zeros(5)), (7, np.zeros(5)),
                         ((slice(None), 2), np.zeros(4)), ((1, slice(0, 4)), 0.0), ((slice(1, 3), slice(2, 5)), np.zeros((1, 3)))]:
        assert _compare(stored, runtime.stored_part, (grad, index, value), f"stored_part {index}")
    appended = _njit("lambda items, item: runtime.list_append(items, item)", runtime=runtime)
    items = [1.0, 2.0]
    assert appended(items, 3.0) == [1.0, 2.0, 3.0] and items == [1.0, 2.0]
    sliced = _njit("lambda start, stop, step, i, j, k: [n for n in range(start, stop, step)[i:j:k]]")
    for start, stop, step in [(0, 10, 1), (3, 20, 4), (10, -5, -3), (0, 0, 1)]:
        for i, j, k in [(0, 3, 1), (0, -2, 1), (2, 40, 2), (-30, 30, -1), (30, -40, -3), (-1, 0, -1)]:
            assert list(sliced(start, stop, step, i, j, k) or []) == list(range(start, stop, step)[i:j:k])


# -- views whose gradients compile: flips, rot90, diagonal, transposes, writes through reshape/ravel ---
# Each compiles with no fallback (the warning is an error here) and gives the Python backend's value and
# gradient, and central differences' gradient.

_VIEW_PROGRAMS = {
    "flip": """
        def f(x):
            w = np.arange(12.0).reshape(3, 4)
            return (np.sum(np.flip(x, None) * w) + np.sum(np.flip(x, 0) * w) ** 2 + np.sum(np.flip(x, 1) ** 3)
                    + np.sum(np.flip(x, -1) * w))
        """,
    "fliplr_flipud": """
        def f(x):
            return np.sum(np.fliplr(x) * np.arange(12.0).reshape(3, 4)) + np.sum(np.flipud(x) ** 2)
        """,
    "rot90": """
        def f(x):
            w = np.arange(12.0).reshape(4, 3)
            return (np.sum(np.rot90(x, 1, (0, 1)) * w) + np.sum(np.rot90(x, 2, (0, 1)) * w.T) ** 2
                    + np.sum(np.rot90(x, 3, (1, 0)) * w) + np.sum(np.rot90(x, -1, (0, 1)) ** 3)
                    + np.sum(np.rot90(x, 1, (1, 0)) * w) + np.sum(np.rot90(x, -1, (1, 0)) * w))
        """,
    "rot90_3d": """
        def f(x):
            y = x * np.arange(24.0).reshape(2, 3, 4)
            return np.sum(np.rot90(y, 3, (2, 0)) ** 2) + np.sum(np.rot90(y, 1, (0, 1))[0] * 2.0)
        """,
    "diagonal": """
        def f(x):
            return (np.sum(np.diagonal(x, -1) ** 2) + np.sum(np.diagonal(x) * 3.0) + np.sum(np.diagonal(x, 1) ** 3)
                    + np.sum(np.diagonal(x, 1, 1, 0) ** 2) + np.sum(np.diagonal(x, -1, 1, 0) * 2.0))
        """,
    "diagonal_after_a_write": """
        def f(x):
            a = x * 1.0
            d = np.diagonal(a, 1)
            a[0, 1] = x[2, 3] ** 2
            return np.sum(d * d * np.arange(1.0, 4.0))
        """,
    "transpose": """
        def f(x):
            v = x[0]
            m = np.outer(v, v).T
            m[0, 1] = v[3] ** 2
            return np.sum(m * m) + np.sum(np.transpose(x) ** 3) + np.sum(x.T * np.arange(12.0).reshape(4, 3))
        """,
    "reshape_write": """
        def f(x):
            b = x * 2.0
            r = b.reshape(6, 2)
            r[1, 1] = x[0, 0] ** 2
            return np.sum(b * b)
        """,
    "ravel_write": """
        def f(x):
            b = x * 2.0
            r = b.ravel()
            r[5] = x[1, 2] ** 3
            return np.sum(b * b * b)
        """,
}


@pytest.mark.parametrize("name", sorted(_VIEW_PROGRAMS))
def test_view_functions_gradients_compile_without_falling_back_and_agree(name):
    f = module_from_source("import numpy as np\n" + textwrap.dedent(_VIEW_PROGRAMS[name])).f
    shape = (2, 3, 4) if name == "rot90_3d" else (3, 4)
    x = np.random.default_rng(7).standard_normal(shape)
    with warnings.catch_warnings():
        warnings.simplefilter("error", CompileFallbackWarning)
        value, grad = s2s_ad.value_and_grad(f, backend="numba")(x)
    python_value, python_grad = s2s_ad.value_and_grad(f)(x)
    np.testing.assert_allclose(value, python_value, rtol=1e-12)
    np.testing.assert_allclose(value, f(x.copy()), rtol=1e-12)  # (the diagonal read after the write shows it)
    np.testing.assert_allclose(grad, python_grad, rtol=1e-12, atol=1e-13)
    np.testing.assert_allclose(grad, numeric_grad(f, [x], 0), rtol=1e-6, atol=1e-6)


def test_a_write_through_a_reshape_reads_the_whole_array_by_a_tuple_index_compiled_only():
    """The whole array, read (``b[...]``: Numba cannot lower it), is spelled ``b[(...,)]`` by the Numba
    target alone; the NumPy target's code is as it was."""
    f = module_from_source("import numpy as np\n" + textwrap.dedent(_VIEW_PROGRAMS["reshape_write"])).f
    compiled_source, python_source = s2s_ad.source(f, backend="numba"), s2s_ad.source(f)
    assert "np.copy(b[...,])" in compiled_source and "np.copy(b[...])" not in compiled_source
    assert "np.copy(b[...])" in python_source and "[...,]" not in python_source


def test_flip_rot90_diagonal_and_their_helpers_compiled_give_numpys_numbers():
    """The compiled versions against NumPy and the Python helpers: each axis and offset, a strided
    input, integers, and the arguments NumPy refuses (raised compiled too)."""
    diagonal_grad = _template_helper("numpy_shape", "diagonal_grad")
    inverse_axes = _template_helper("numpy_linalg", "inverse_axes")
    flip = _njit("lambda a, axis: np.flip(a, axis)")
    rot90 = _njit("lambda a, k, axes: np.rot90(a, k, axes)")
    diagonal = _njit("lambda a, offset, axis1, axis2: np.diagonal(a, offset, axis1, axis2)")
    spread = _njit("lambda g, a, offset, axis1, axis2: diagonal_grad(g, a, offset, axis1, axis2)",
                   diagonal_grad=diagonal_grad)
    inverse = _njit("lambda axes: inverse_axes(axes)", inverse_axes=inverse_axes)
    rng = np.random.default_rng(4)
    matrices = [rng.standard_normal((3, 4)), rng.standard_normal((5, 3)).T, rng.integers(-9, 9, (4, 2)), np.ones((0, 3))]
    for a in matrices + [rng.standard_normal(5), rng.standard_normal((2, 3, 4))]:
        for axis in (None, 0, 1, -1, 3):
            assert _compare(flip, np.flip, (a, axis), f"flip {a.shape} {axis}")
        for k in (0, 1, 2, 3, -1, 6):
            for axes in ((0, 1), (1, 0), (-1, 0), (0, 2), (1, 1)):
                _compare(rot90, np.rot90, (a, k, axes), f"rot90 {a.shape} {k} {axes}")  # (1-D: refused)
    ran = 0
    for a in matrices:
        for offset in (-2, -1, 0, 1, 3, 7):
            for axis1, axis2 in ((0, 1), (1, 0), (-2, -1), (-1, 0), (0, 0), (0, 2)):
                args = (a, offset, axis1, axis2)
                ran += _compare(diagonal, np.diagonal, args, f"diagonal {a.shape} {args[1:]}")
                if a.dtype == np.float64 and axis1 % 2 != axis2 % 2 and axis2 < 2:
                    g = rng.standard_normal(np.diagonal(a, offset, axis1, axis2).shape)
                    for grad in (g, g[:-1], np.append(g, 1.0)):  # (shorter: its first elements; longer: IndexError)
                        ran += _compare(spread, diagonal_grad, (grad, *args), f"diagonal_grad {grad.shape} {args[1:]}")
    assert ran > 100
    assert inverse(None) is None and inverse((1, 2, 0)) == inverse_axes((1, 2, 0)) and inverse((0,)) == (0,)
