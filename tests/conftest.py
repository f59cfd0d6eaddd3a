"""Shared test oracles: central finite differences, and forward mode against reverse mode."""
from __future__ import annotations

import hashlib
import importlib.util
import inspect
import os
import sys
from pathlib import Path
from typing import Any, Callable, Sequence

import numpy as np
import pytest

# Where things are: tests/ holds one folder per stage of the engine (frontend, lowering, memory, ...,
# api; programs: whole programs in every mode; project: the repository's own rules) and the corpora
# the tests share (tests/corpora: modules of functions, imported by name from anywhere in the suite).
TESTS = Path(__file__).resolve().parent
ROOT = TESTS.parent
CORPORA = TESTS / "corpora"
if str(CORPORA) not in sys.path:
    sys.path.insert(0, str(CORPORA))

# The whole suite runs with the facts checked after every pass that rewrites a function after its
# analysis (s2s_ad/analysis/factcheck.py): a pass that leaves a fact false fails the test that reaches it.
os.environ.setdefault("S2S_AD_CHECK_FACTS", "1")
os.environ.setdefault("S2S_AD_CHECK_PASSES", "1")  # the tape checked after every pass (passes.py)
# The whole suite runs with the rules checked against NumPy as they load (a rule whose declared facts
# NumPy contradicts on its examples is refused: see s2s_ad.rules.rule_facts).  Set before s2s_ad loads any.
os.environ.setdefault("S2S_AD_CHECK_RULES", "1")

try:  # SciPy's rules register once it is imported: import it so the registry walks check them
    import scipy.linalg  # noqa: F401
    import scipy.special  # noqa: F401
    import scipy.signal  # noqa: F401
    import scipy.stats  # noqa: F401
    import scipy.integrate  # noqa: F401
except ImportError:
    pass


def numeric_grad(f: Callable, args: Sequence[Any], i: int, eps: float = 1e-6) -> Any:
    """Central finite difference of scalar ``f(*args)`` by argument ``i``.

    Returns a float for a number argument, an array of the argument's shape
    for an array argument.
    """
    args = list(args)
    x = args[i]
    if np.ndim(x) == 0 and not isinstance(x, np.ndarray):
        def at(value: float) -> float:
            args[i] = value
            return float(f(*args))
        return (at(x + eps) - at(x - eps)) / (2 * eps)
    x = np.array(x, dtype=float)
    grad = np.zeros_like(x)
    for index in np.ndindex(x.shape):
        plus, minus = x.copy(), x.copy()
        plus[index] += eps
        minus[index] -= eps
        args[i] = plus
        f_plus = float(f(*args))
        args[i] = minus
        grad[index] = (f_plus - float(f(*args))) / (2 * eps)
    return grad


def _is_float_argument(value: Any) -> bool:
    if isinstance(value, (bool, int, np.integer)) or value is None:
        return False
    return isinstance(value, (float, np.floating)) or (
        isinstance(value, np.ndarray) and np.issubdtype(value.dtype, np.floating))


def assert_forward_matches_reverse(f: Callable, args: Sequence[Any], rtol: float = 1e-7,
                                   atol: float = 1e-9) -> None:
    """Check <v, grad f> == jvp(f, v) for a random direction v over every float argument."""
    import s2s_ad

    positions = tuple(i for i, a in enumerate(args) if _is_float_argument(a))
    if not positions:
        return
    rng = np.random.default_rng(len(positions))
    tangents = [(rng.normal(size=np.shape(a)) if isinstance(a, np.ndarray) else float(rng.normal()))
                if i in positions else None for i, a in enumerate(args)]
    gradients = s2s_ad.grad(f, wrt=positions)(*args)
    want = sum(float(np.sum(np.asarray(g) * tangents[i])) for i, g in zip(positions, gradients))
    value, got = s2s_ad.jvp(f, tuple(args), tuple(tangents))
    assert np.ndim(got) == 0, f"{f.__name__}: the tangent of a scalar result is a scalar"
    np.testing.assert_allclose(got, want, rtol=rtol, atol=atol,
                               err_msg=f"{f.__name__}: forward mode disagrees with reverse mode at {args}")
    np.testing.assert_allclose(value, f(*args), rtol=1e-12, err_msg=f"{f.__name__}: jvp's primal value")


def assert_hessian_matches_gradient_differences(f: Callable, args: Sequence[Any]) -> None:
    """Check ``s2s_ad.hessian(f)(*args)`` by the first argument against central differences of
    ``s2s_ad.grad(f)``, one column per element of that argument (a number stays a float)."""
    import s2s_ad

    def gradient_at(x: Any) -> np.ndarray:
        x = x if isinstance(args[0], np.ndarray) else float(x)
        return np.asarray(s2s_ad.grad(f)(x, *args[1:]), dtype=float)

    hessian = np.asarray(s2s_ad.hessian(f)(*args))
    x = np.asarray(args[0], dtype=float)
    for index in np.ndindex(x.shape):
        step = np.zeros_like(x)
        step[index] = 1e-5
        column = (gradient_at(x + step) - gradient_at(x - step)) / 2e-5
        np.testing.assert_allclose(hessian.reshape(x.shape + x.shape)[(Ellipsis,) + index], column,
                                   rtol=1e-5, atol=1e-6)


def assert_numba_gives_the_same_numbers(f: Callable, x: Any) -> None:
    """``f``'s value and gradient at ``x`` with backend="numba" equal the Python backend's (the
    compiled code may fall back to Python, saying so: the numbers must be the same either way)."""
    import warnings
    import s2s_ad
    pytest.importorskip("numba")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        value, gradient = s2s_ad.value_and_grad(f, backend="numba")(x)
    want_value, want_gradient = s2s_ad.value_and_grad(f)(x)
    assert value == pytest.approx(want_value, rel=1e-12)
    np.testing.assert_allclose(gradient, want_gradient, rtol=1e-12)

def assert_every_mode(f: Callable, x: np.ndarray) -> None:
    """``f`` of one vector ``x`` differentiated in every mode: grad and jvp against central
    differences, value_and_grad, the pullback and a jvp along a direction against that gradient,
    the Hessian against differences of the gradient."""
    import s2s_ad
    gradient = assert_gradient_matches(f, (x,))
    value, again = s2s_ad.value_and_grad(f)(x)
    assert value == pytest.approx(float(f(x)), rel=1e-12)
    np.testing.assert_allclose(again, gradient, rtol=1e-12)
    _, pullback = s2s_ad.vjp(f, x)
    np.testing.assert_allclose(pullback(1.0)[0], gradient, rtol=1e-12)
    tangent = np.linspace(0.5, 0.5 * x.size, x.size)
    _, derivative = s2s_ad.jvp(f, (x,), (tangent,))
    assert float(derivative) == pytest.approx(float(np.sum(gradient * tangent)), rel=1e-10, abs=1e-12)
    assert_hessian_matches_gradient_differences(f, (x,))


def assert_gradient_matches(f: Callable, args: Sequence[Any], wrt: Any = 0, rtol: float = 1e-5,
                            atol: float = 1e-6) -> Any:
    """Check ``s2s_ad.grad(f, wrt)(*args)`` against central finite differences; return it.

    Every such check also cross-checks forward mode against reverse mode
    (``assert_forward_matches_reverse``).
    """
    import s2s_ad

    got = s2s_ad.grad(f, wrt=wrt)(*args)
    positions = wrt if isinstance(wrt, tuple) else (wrt,)
    got_all = got if isinstance(wrt, tuple) else (got,)
    for position, value in zip(positions, got_all):
        index = position if isinstance(position, int) else list(__import__("inspect").signature(f).parameters).index(position)
        want = numeric_grad(f, args, index)
        assert np.shape(value) == np.shape(args[index]), (f.__name__, position)
        np.testing.assert_allclose(value, want, rtol=rtol, atol=atol, err_msg=f"{f.__name__} d/d{position} at {args}")
    assert_forward_matches_reverse(f, args)
    return got


def corpus_functions(module_name: str) -> list:
    """The public functions of a test-function module taking positional parameters only (a corpus
    the facts' checks and the Numba backend's comparison walk)."""
    module = importlib.import_module(module_name)
    return [f for _, f in inspect.getmembers(module, inspect.isfunction)
            if f.__module__ == module.__name__ and not f.__name__.startswith("_")
            and inspect.signature(f).parameters
            and all(p.kind is p.POSITIONAL_OR_KEYWORD for p in inspect.signature(f).parameters.values())]


def module_from_source(folder: Any, prefix: str, source: str) -> Any:
    """A generated program imported from a real file in ``folder`` (s2s_ad reads source with inspect),
    named by a hash of its text: the same text is imported once."""
    name = prefix + hashlib.sha1(source.encode()).hexdigest()[:12]
    if name in sys.modules:
        return sys.modules[name]
    path = Path(folder) / f"{name}.py"
    path.write_text(source)
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def programs_from_source(prefix: str, source: str) -> Any:
    """``module_from_source`` of dedented ``source`` in a temporary folder of its own (a test module's
    programs, written where s2s_ad can read their source)."""
    import tempfile
    import textwrap
    return module_from_source(tempfile.mkdtemp(prefix=prefix), prefix, textwrap.dedent(source))


@pytest.fixture
def own_numba_cache(tmp_path_factory: Any, monkeypatch: Any) -> None:
    """The Numba target's disk cache in the session's temporary folder (the compiled-path tests use it:
    ``pytest.mark.usefixtures("own_numba_cache")``), not the user's."""
    monkeypatch.setenv("S2S_AD_CACHE_DIR", str(tmp_path_factory.getbasetemp() / "s2s_ad_cache"))


def function_from_file(tmp_path: Any, name: str, source: str) -> Callable:
    """``f`` of a module written to ``tmp_path`` from ``source`` and imported (s2s_ad reads source with inspect)."""
    path = tmp_path / f"{name}.py"
    path.write_text(source)
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.f


# -- the fuzzer's size: ``pytest tests/fuzz --soak`` or S2S_FUZZ_EXAMPLES=N ----------------


def pytest_addoption(parser) -> None:
    parser.addoption("--soak", action="store_true", help="run 20,000 random programs in tests/fuzz "
                     "(the slow tests included)")


def pytest_configure(config) -> None:
    # pyproject.toml's addopts deselect the slow tests ("-m 'not slow'"); a soak, or a fuzz run of a
    # chosen size (S2S_FUZZ_EXAMPLES=N), asks for the fuzzers, which are slow
    soak = config.getoption("--soak") or os.environ.get("S2S_FUZZ_EXAMPLES")
    if soak and config.option.markexpr == "not slow":
        config.option.markexpr = ""
    if _extras_required():
        _import_the_extras()


# -- the self-check (S2S_AD_CHECK=1), which CI turns on for the whole suite ----------------------------

@pytest.fixture(autouse=True)
def _self_check_off_where_marked(request, monkeypatch) -> None:
    """A test marked ``self_check_off`` runs without the self-check whatever S2S_AD_CHECK says: it
    counts what the function does (prints, log records), which the check's forward pass does again."""
    if request.node.get_closest_marker("self_check_off") is not None:
        monkeypatch.setenv("S2S_AD_CHECK", "0")


# -- optional dependencies: skipped where missing, a failure where CI says they are installed ----------

# Set to 1 in an environment with every optional extra installed (CI's job 4): a test skipped because
# one of them cannot be imported is then a failure, so that the comparisons with JAX never silently
# stop running.  Set to module names instead (S2S_AD_REQUIRE_EXTRAS=dask.distributed, comma-separated),
# in an environment made for one extra (CI's job for it): those must be there, the others may be missing.
REQUIRE_EXTRAS = "S2S_AD_REQUIRE_EXTRAS"
# What "1" requires: every extra some test imports.
_EVERY_EXTRA = ("jax", "jax.numpy", "jax.scipy.special", "scipy", "scipy.special", "dask.distributed", "dask.array",
                "numba", "torch", "array_api_strict", "array_api_compat", "nbclient", "ipykernel")
# What pytest.importorskip and the tests' own skips say when an optional package is missing.
_MISSING_PACKAGE = ("could not import", "is not installed")


def _required_setting() -> str:
    return os.environ.get(REQUIRE_EXTRAS, "").strip()


def _extras_required() -> bool:
    return _required_setting().lower() not in ("", "0", "false", "no", "off")


def _all_extras_required() -> bool:
    return _required_setting().lower() in ("1", "true", "yes", "on", "all")


def _required_extras() -> tuple[str, ...]:
    """The modules that must import: every extra's for "1", those named otherwise, none when unset."""
    if not _extras_required():
        return ()
    if _all_extras_required():
        return _EVERY_EXTRA
    return tuple(name for name in _required_setting().replace(",", " ").split())


def _is_required(name: str) -> bool:
    """Whether module ``name`` must import: it, or a package above it, is required (a named extra's
    submodules are part of it)."""
    required = _required_extras()
    return _all_extras_required() or any(name == r or name.startswith(r + ".") for r in required)


def optional_import(name: str) -> Any:
    """The module ``name`` of an optional extra (JAX, SciPy, Dask), or None where it is not installed;
    with ``S2S_AD_REQUIRE_EXTRAS`` requiring it, its absence raises, so a comparison is never
    silently left out."""
    try:
        return importlib.import_module(name)
    except ImportError:
        if _is_required(name):
            raise
        return None


def _import_the_extras() -> None:
    """Fail the run at once, naming what is missing, where the extras must be there and are not."""
    for name in _required_extras():
        try:
            importlib.import_module(name)
        except ImportError as exc:
            pytest.exit(f"{REQUIRE_EXTRAS}={_required_setting()}, but {name} cannot be imported: {exc}",
                        returncode=4)


def _failed_if_a_package_is_missing(report: Any) -> None:
    """With ``S2S_AD_REQUIRE_EXTRAS=1``, a skip for a missing package becomes a failure."""
    if report.skipped and _extras_required() and isinstance(report.longrepr, tuple):
        reason = str(report.longrepr[2])
        named = _all_extras_required() or any(name in reason for name in _required_extras())
        if named and any(words in reason for words in _MISSING_PACKAGE):
            report.outcome = "failed"
            report.longrepr = f"skipped for a missing package although {REQUIRE_EXTRAS}=1: {reason}"


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    """A test skipped for a missing package, where the extras are required, fails instead."""
    outcome = yield
    _failed_if_a_package_is_missing(outcome.get_result())


@pytest.hookimpl(hookwrapper=True)
def pytest_make_collect_report(collector):
    """The same for a test module skipped as a whole (a module-level importorskip)."""
    outcome = yield
    _failed_if_a_package_is_missing(outcome.get_result())


# The one command that installs every optional extra the suite's skipped tests need (CI's job 4, .ci/run,
# with PyTorch unpinned): README.md says so too.
EXTRAS_COMMAND = 'pip install ".[test,notebook,distributed,numba,arrays]" jax scipy "torch==2.13.0" "dask[array]" array-api-strict'


def skipped_for_missing_extras(reports: Sequence[Any]) -> int:
    """How many of the skips ``reports`` holds (tests, or modules skipped as a whole) were for a missing
    optional package: their reason says so (``_MISSING_PACKAGE``)."""
    return sum(1 for report in reports if isinstance(getattr(report, "longrepr", None), tuple)
               and any(words in str(report.longrepr[2]) for words in _MISSING_PACKAGE))


def pytest_terminal_summary(terminalreporter, exitstatus, config) -> None:
    """Once, at the end of the run: how many skips were for missing optional extras, and the command
    that installs them (each skip keeps its own reason, which ``-rs`` lists)."""
    count = skipped_for_missing_extras(terminalreporter.stats.get("skipped", []))
    if count:
        terminalreporter.write_line(
            f"{count} test{'s' if count != 1 else ''} (or modules of tests) skipped for optional extras that are "
            f"not installed (Numba, JAX, SciPy, Dask, PyTorch, array libraries, notebooks); to run them too: "
            f"{EXTRAS_COMMAND}")


@pytest.fixture(scope="session")
def fuzz_examples(request) -> int:
    if request.config.getoption("--soak"):
        return 20_000
    return int(os.environ.get("S2S_FUZZ_EXAMPLES", "300"))


def second_differences(f: Callable, x: Any, h: float = 1e-4) -> Any:
    """The Hessian of ``f`` at ``x`` by central differences of ``f`` itself (independent of s2s_ad)."""
    n = x.size
    eye = np.eye(n) * h
    hessian = np.empty((n, n))
    for i in range(n):
        for j in range(n):
            hessian[i, j] = (f(x + eye[i] + eye[j]) - f(x + eye[i] - eye[j]) - f(x - eye[i] + eye[j])
                             + f(x - eye[i] - eye[j])) / (4 * h * h)
    return hessian


def assert_numba_agrees_with_differences(f: Callable, x: Any) -> None:
    """grad, jvp and the Hessian of ``f`` (one vector of three numbers) under backend="numba" against
    central differences; a fallback to Python says so, and the numbers must be right either way."""
    import warnings

    import pytest
    import s2s_ad
    pytest.importorskip("numba")
    want = numeric_grad(f, (x.copy(),), 0)
    tangent = np.array([0.3, -0.7, 1.1])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        gradient = s2s_ad.grad(f, backend="numba")(x.copy())
        value, derivative = s2s_ad.jvp(f, (x.copy(),), (tangent,), backend="numba")
        hessian = s2s_ad.hessian(f, backend="numba")(x.copy())
    np.testing.assert_allclose(gradient, want, rtol=1e-6, atol=1e-7)
    assert value == pytest.approx(f(x.copy()), rel=1e-12)
    assert float(derivative) == pytest.approx(float(want @ tangent), rel=1e-6, abs=1e-7)
    np.testing.assert_allclose(hessian, second_differences(f, x.copy()), rtol=1e-4, atol=1e-5)


def compiled_by_numba(source: str, names: dict) -> Callable:
    """The function ``f`` that ``source`` defines (``names`` its globals), compiled by Numba with
    s2s_ad's compiled versions registered: how a test calls a compiled rule as generated code does."""
    import numba
    from s2s_ad.targets.numba import runtime
    runtime.register()
    namespace = dict(names)
    exec(source, namespace)
    return numba.njit(namespace["f"])


def check_compiled_gradient(fn: Callable, x: np.ndarray) -> None:
    """``value_and_grad(fn, backend="numba")`` at ``x`` compiles (a ``CompileFallbackWarning`` fails the
    test), its value is ``fn``'s and its gradient central differences'."""
    import warnings
    import s2s_ad
    with warnings.catch_warnings():
        warnings.simplefilter("error", s2s_ad.CompileFallbackWarning)
        value, gradient = s2s_ad.value_and_grad(fn, backend="numba")(x)
    np.testing.assert_allclose(value, fn(x), rtol=1e-12)
    np.testing.assert_allclose(gradient, numeric_grad(fn, (x,), 0), rtol=1e-6, atol=1e-8)
