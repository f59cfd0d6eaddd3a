"""Passes after the analysis keep the facts true, and a checking mode proves it (issue #18, part 3).

Loop-invariant hoisting kept one copy of a repeated number expression and made the loop read the
first, which the analysis had classed as inactive: ``a = y * y`` unused, then ``np.sin(y * y)``, gave a
zero gradient.  Every pass between the analysis and the generators now hands on the facts of what it
made (``factcheck.run_passes``), and with ``S2S_AD_CHECK_FACTS=1`` (on in this suite: conftest.py) the
facts are derived again after each pass and compared.  Also here: a helper's changed defaults make
the cached gradient of its caller old.

Oracles: closed forms, central differences (conftest) and JAX (float64) where installed.
"""
from __future__ import annotations

import dataclasses
import importlib.util
import inspect
import math
import random
import sys
from collections import Counter
from pathlib import Path

import numpy as np
import pytest

import facts_functions as ff
import s2s_ad
from conftest import corpus_functions, module_from_source, numeric_grad
from s2s_ad.analysis import facts as analysis
from s2s_ad.analysis import factcheck
from s2s_ad.core import ir
from s2s_ad.rules import registry as rules
from s2s_ad.core.errors import TransformError
from s2s_ad.analysis.factcheck import FactViolation
from s2s_ad.core.kinds import NUMBER, UNKNOWN, Array
from s2s_ad.driver.pipeline import build_forward, build_reverse


def _jax():
    jax = pytest.importorskip("jax")
    jax.config.update("jax_enable_x64", True)
    return jax


# -- the issue's example: y * y twice in a loop, the first unused -----------------------------------

Y, N = 0.7, 3


def _d_unused_square(y: float, n: int) -> float:
    """d/dy of n sin(y^2)."""
    return 2.0 * n * y * math.cos(y * y)


def _d2_unused_square(y: float, n: int) -> float:
    return n * (2.0 * math.cos(y * y) - 4.0 * y * y * math.sin(y * y))


def test_grad_of_a_loop_computing_y_squared_twice_the_first_unused_is_not_zero():
    got = s2s_ad.grad(ff.unused_square)(Y, N)
    assert got == pytest.approx(3.70579800616, rel=1e-10)
    assert got == pytest.approx(_d_unused_square(Y, N), rel=1e-12)


def test_value_and_grad_of_the_issue_example():
    value, gradient = s2s_ad.value_and_grad(ff.unused_square)(Y, N)
    assert value == pytest.approx(N * math.sin(Y * Y), rel=1e-12)
    assert gradient == pytest.approx(_d_unused_square(Y, N), rel=1e-12)


def test_vjp_of_the_issue_example():
    value, pull = s2s_ad.vjp(ff.unused_square, Y, N)
    assert value == pytest.approx(N * math.sin(Y * Y), rel=1e-12)
    assert pull(2.0)[0] == pytest.approx(2.0 * _d_unused_square(Y, N), rel=1e-12)


def test_jvp_of_the_issue_example():
    value, tangent = s2s_ad.jvp(ff.unused_square, (Y, N), (0.5, None))
    assert value == pytest.approx(N * math.sin(Y * Y), rel=1e-12)
    assert tangent == pytest.approx(0.5 * _d_unused_square(Y, N), rel=1e-12)


def test_hessian_of_the_issue_example():
    assert float(np.squeeze(s2s_ad.hessian(ff.unused_square)(Y, N))) == pytest.approx(
        _d2_unused_square(Y, N), rel=1e-10)


def test_grad_of_grad_of_the_issue_example():
    assert s2s_ad.grad(s2s_ad.grad(ff.unused_square))(Y, N) == pytest.approx(_d2_unused_square(Y, N), rel=1e-10)


def test_if_y_squared_tested_then_used_in_the_loop():
    """``if y * y > 0.01:`` then ``np.sin(y * y)``: the tested copy is the one kept."""
    assert s2s_ad.grad(ff.tested_square)(Y, N) == pytest.approx(_d_unused_square(Y, N), rel=1e-12)
    assert float(np.squeeze(s2s_ad.hessian(ff.tested_square)(Y, N))) == pytest.approx(
        _d2_unused_square(Y, N), rel=1e-10)


def calls_unused_square(y):
    """A caller: the helper runs through its split adjoint (forward and backward parts)."""
    return 2.0 * ff.unused_square(y, N) + ff.asserted_decay(y, K, DT, STEPS)


def test_grad_of_a_caller_of_the_issue_example_and_the_asserted_step():
    want = 2.0 * _d_unused_square(Y, N) + _decay_gradient(Y, K, DT, STEPS)[0]
    assert s2s_ad.grad(calls_unused_square)(Y) == pytest.approx(want, rel=1e-12)
    assert s2s_ad.jvp(calls_unused_square, (Y,), (1.0,))[1] == pytest.approx(want, rel=1e-12)
    assert float(np.squeeze(s2s_ad.hessian(calls_unused_square)(Y))) == pytest.approx(
        2.0 * _d2_unused_square(Y, N), rel=1e-10)


# -- ``assert k * dt < 1.0`` then ``v = v - k * dt * v`` in a loop -------------------------------------

V, K, DT, STEPS = 1.3, 0.8, 0.1, 4


def _decay_gradient(v: float, k: float, dt: float, n: int) -> tuple[float, float, float]:
    """d/d(v, k, dt) of v (1 - k dt)^n."""
    factor = 1.0 - k * dt
    inner = v * n * factor ** (n - 1)
    return factor ** n, -dt * inner, -k * inner


def test_grad_of_an_asserted_step_in_a_loop():
    got = s2s_ad.grad(ff.asserted_decay, wrt=(0, 1, 2))(V, K, DT, STEPS)
    np.testing.assert_allclose(got, _decay_gradient(V, K, DT, STEPS), rtol=1e-12)


def test_value_and_grad_vjp_and_jvp_of_an_asserted_step():
    want_value = V * (1.0 - K * DT) ** STEPS
    want = np.array(_decay_gradient(V, K, DT, STEPS))
    value, gradient = s2s_ad.value_and_grad(ff.asserted_decay, wrt=(0, 1, 2))(V, K, DT, STEPS)
    assert value == pytest.approx(want_value, rel=1e-12)
    np.testing.assert_allclose(gradient, want, rtol=1e-12)
    value, pull = s2s_ad.vjp(ff.asserted_decay, V, K, DT, STEPS)
    np.testing.assert_allclose(pull(1.0)[:3], want, rtol=1e-12)
    direction = np.array([0.3, -1.1, 0.7])
    value, tangent = s2s_ad.jvp(ff.asserted_decay, (V, K, DT, STEPS), (*direction, None))
    assert value == pytest.approx(want_value, rel=1e-12)
    assert tangent == pytest.approx(float(direction @ want), rel=1e-12)


def test_hessian_of_an_asserted_step_by_the_rate():
    """d2/dk2 of v (1 - k dt)^n is v n (n - 1) dt^2 (1 - k dt)^(n - 2)."""
    want = V * STEPS * (STEPS - 1) * DT ** 2 * (1.0 - K * DT) ** (STEPS - 2)
    got = s2s_ad.hessian(ff.asserted_decay, wrt=1)(V, K, DT, STEPS)
    assert float(np.squeeze(got)) == pytest.approx(want, rel=1e-10)


def test_the_assert_still_stops_an_unstable_step():
    with pytest.raises(AssertionError, match="unstable step"):
        s2s_ad.grad(ff.asserted_decay)(V, 20.0, DT, STEPS)


# -- more loops with repeated invariant subexpressions, against central differences and JAX ----------

CASES = {
    "unused_square": (0.7, 3),
    "tested_square": (0.7, 3),
    "tested_square_inside": (0.7, 3),
    "asserted_decay": (1.3, 0.8, 0.1, 4),
    "asserted_decay_array": (np.array([0.5, -1.0, 2.0]), 0.8, 0.1, 4),
    "logged_half_step": (0.4, -0.3, 0.1, 5),
    "three_copies": (0.7, 3),
    "nested_loops_square": (0.6, 1.2, 2, 3),
    "negated_rate": (1.5, 0.7, 4),
    "damped_spring": (1.0, 0.2, 2.0, 0.5, 0.1, 5),
    "reused_sum": (0.4, 0.9, 3),
}


def _float_positions(args: tuple) -> tuple[int, ...]:
    return tuple(i for i, a in enumerate(args) if not isinstance(a, int))


def _jax_twin(name: str):
    """The same function in JAX (Python loops over a known count)."""
    jax = _jax()
    jnp = jax.numpy

    def unused_square(y, n):
        return sum(jnp.sin(y * y) for _ in range(n))

    def tested_square(y, n):
        return sum(1.0 + jnp.sin(y * y) for _ in range(n))  # y * y > 0.01 at the points used

    def asserted_decay(v, k, dt, n):
        for _ in range(n):
            v = v - k * dt * v
        return v

    def asserted_decay_array(u, k, dt, n):
        return jnp.sum(asserted_decay(u, k, dt, n) ** 2)

    def logged_half_step(x, v, dt, n):
        for _ in range(n):
            v = v - 0.5 * dt * x
            x = x + dt * v
            v = v - 0.5 * dt * x
        return x * x + v * v

    def three_copies(y, n):
        return sum(jnp.cos(y * y) for _ in range(n))

    def nested_loops_square(h, x, n, m):
        return sum(jnp.cos(h * h) * x for _ in range(n * m))

    def negated_rate(y, k, n):
        for _ in range(n):
            y = y + 0.1 * (-k) * y
        return y

    def damped_spring(x, v, k, c, dt, n):
        for _ in range(n):
            v = v + (-(k * dt) * x - (c * dt) * v)
            x = x + dt * v
        return x

    def reused_sum(a, b, n):
        return sum((a + b) * (a + b) for _ in range(n))

    twins = dict(unused_square=unused_square, tested_square=tested_square,
                 tested_square_inside=unused_square, asserted_decay=asserted_decay,
                 asserted_decay_array=asserted_decay_array, logged_half_step=logged_half_step,
                 three_copies=three_copies, nested_loops_square=nested_loops_square, negated_rate=negated_rate,
                 damped_spring=damped_spring, reused_sum=reused_sum)
    return jax, twins[name]


def test_every_case_has_a_jax_twin():
    assert set(CASES) == {name for name, f in inspect.getmembers(ff, inspect.isfunction)
                          if f.__module__ == ff.__name__}


@pytest.mark.parametrize("name", sorted(CASES))
def test_repeated_invariant_expression_grad_against_central_differences(name):
    f, args = getattr(ff, name), CASES[name]
    positions = _float_positions(args)
    got = s2s_ad.grad(f, wrt=positions)(*args)
    for position, value in zip(positions, got):
        np.testing.assert_allclose(value, numeric_grad(f, args, position), rtol=1e-6, atol=1e-8,
                                   err_msg=f"{name} d/d{position}")


@pytest.mark.parametrize("name", sorted(CASES))
def test_repeated_invariant_expression_grad_and_vjp_against_jax(name):
    f, args = getattr(ff, name), CASES[name]
    jax, twin = _jax_twin(name)
    positions = _float_positions(args)
    want = jax.grad(twin, argnums=positions)(*args)
    got = s2s_ad.grad(f, wrt=positions)(*args)
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, np.asarray(w), rtol=1e-11, atol=1e-13, err_msg=name)
    value, pull = s2s_ad.vjp(f, *args)
    assert value == pytest.approx(float(twin(*args)), rel=1e-12)
    pulled = pull(1.0)
    for position, w in zip(positions, want):
        np.testing.assert_allclose(pulled[position], np.asarray(w), rtol=1e-11, atol=1e-13, err_msg=name)


@pytest.mark.parametrize("name", sorted(CASES))
def test_repeated_invariant_expression_jvp_against_jax(name):
    f, args = getattr(ff, name), CASES[name]
    jax, twin = _jax_twin(name)
    positions = _float_positions(args)
    rng = np.random.default_rng(18)
    tangents = tuple(rng.normal(size=np.shape(a)) if i in positions else None for i, a in enumerate(args))
    value, got = s2s_ad.jvp(f, args, tangents)
    floats = [args[i] for i in positions]
    fixed = lambda *xs: twin(*[xs[positions.index(i)] if i in positions else a for i, a in enumerate(args)])
    want_value, want = jax.jvp(fixed, tuple(floats), tuple(tangents[i] for i in positions))
    assert value == pytest.approx(float(want_value), rel=1e-12)
    assert got == pytest.approx(float(want), rel=1e-11, abs=1e-13)


@pytest.mark.parametrize("name", sorted(n for n, a in CASES.items() if np.ndim(a[0]) == 0))
def test_repeated_invariant_expression_hessian_against_jax(name):
    f, args = getattr(ff, name), CASES[name]
    jax, twin = _jax_twin(name)
    got = float(np.squeeze(s2s_ad.hessian(f)(*args)))
    assert got == pytest.approx(float(jax.hessian(twin)(*args)), rel=1e-9, abs=1e-12)


# -- random loops with repeated invariant expressions (unused, tested, asserted, used) -----------------

_INVARIANTS = ("y * y", "k * y", "k * dt", "-k", "y + k", "0.5 * dt", "dt * y", "y - k", "k * k", "y * 2.0")


def _random_loop(rng: random.Random) -> str:
    """``f(y, k, dt, n)``: a loop whose body computes a few invariant expressions several times each,
    in statements a user writes: unused, in a test, in an assert, in a nested loop, in the result."""
    chosen = rng.sample(_INVARIANTS, 4)
    body = []
    for j in range(rng.randint(2, 7)):
        e, other = rng.choice(chosen), rng.choice(chosen)
        body.append(rng.choice([
            f"u{j} = {e}",
            f"if {e} > -5.0:\n    s = s + np.sin({other})",
            f"assert {e} < 100.0",
            f"s = s + np.cos({e}) * v",
            f"v = v - 0.1 * ({e}) * v",
            f"for j in range(2):\n    w{j} = {e}\n    s = s + 0.1 * ({other}) * v",
            f"if i > 0:\n    s = s + ({e}) * 0.3",
        ]))
    lines = "\n".join("        " + line for stmt in body for line in stmt.split("\n"))
    return ("import numpy as np\n\n\ndef f(y, k, dt, n):\n    s = 0.0\n    v = y\n    for i in range(n):\n"
            f"{lines}\n    return s + v * v\n")


@pytest.mark.parametrize("seed", range(4))
def test_random_loops_with_repeated_invariant_expressions(seed, tmp_path):
    """Eight programs per seed: grad against central differences and jvp against grad (before the fix,
    about a third of them had a wrong derivative)."""
    rng = random.Random(1800 + seed)
    args = (0.7, 0.4, 0.1, 3)
    for _ in range(8):
        source = _random_loop(rng)
        f = module_from_source(tmp_path, "facts_random_", source).f
        got = s2s_ad.grad(f, wrt=(0, 1, 2))(*args)
        want = [numeric_grad(f, args, i) for i in range(3)]
        np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-8, err_msg=source)
        direction = (1.0, -0.5, 0.3)
        _, tangent = s2s_ad.jvp(f, args, (*direction, None))
        assert tangent == pytest.approx(float(np.dot(direction, got)), rel=1e-9, abs=1e-12), source


# -- the checking mode ------------------------------------------------------------------------------


def test_the_checking_mode_is_on_in_the_test_suite():
    assert factcheck.switched_on_by_environment()


@pytest.mark.parametrize("value, on", [("1", True), ("yes", True), ("0", False), ("off", False), ("", False),
                                       (" False ", False), ("no", False)])
def test_the_checking_mode_reads_the_environment_as_the_self_check_does(monkeypatch, value, on):
    monkeypatch.setenv(factcheck.ENVIRONMENT_VARIABLE, value)
    assert factcheck.switched_on_by_environment() is on


def _reloaded(name: str, tmp_path: Path, source: str):
    """A module of its own for each test (a cached gradient of another test's function is not reused)."""
    path = tmp_path / f"{name}.py"
    path.write_text(source)
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


_UNUSED_SQUARE = inspect.getsource(ff.unused_square)
_ROW_UPDATE = '''
import numpy as np


def f(a, i):
    b = a * 1.0
    row = b[0]
    row *= 3.0
    return np.sum(b * b)
'''


_PADDED = '''
import numpy as np


def f(x, c):
    return np.sum(np.pad(x, 1, constant_values=c) ** 2)
'''


def test_a_hoisting_merge_that_forgets_the_join_is_caught(monkeypatch, tmp_path):
    """Break the fact on purpose (the survivor keeps its own facts, as before the fix): caught."""
    module = _reloaded("facts_broken_merge", tmp_path, "import numpy as np\n\n\n" + _UNUSED_SQUARE)
    monkeypatch.setattr(analysis.Analysis, "with_merged", lambda facts, same, dropped: facts)
    with pytest.raises(FactViolation, match="hoist_invariants.*'active'") as caught:
        s2s_ad.grad(module.unused_square)(Y, N)
    assert caught.value.pass_name == "hoist_invariants" and caught.value.fact == "active"


@pytest.mark.self_check_off  # the self-check would catch the wrong zero this test makes on purpose
def test_without_the_checking_mode_the_broken_merge_gives_the_old_wrong_zero(monkeypatch, tmp_path):
    """The same break, unchecked, is the issue's silent wrong number: what the check is there for."""
    module = _reloaded("facts_broken_merge_unchecked", tmp_path, "import numpy as np\n\n\n" + _UNUSED_SQUARE)
    monkeypatch.setattr(analysis.Analysis, "with_merged", lambda facts, same, dropped: facts)
    monkeypatch.setenv(factcheck.ENVIRONMENT_VARIABLE, "0")
    assert s2s_ad.grad(module.unused_square)(Y, N) == 0.0


def test_a_dropped_check_whose_reads_are_still_counted_is_caught(monkeypatch, tmp_path):
    """``row *= 3.0`` through ``row = b[0]``: the kinds prove a view, and the run-time check goes."""
    module = _reloaded("facts_broken_drop", tmp_path, _ROW_UPDATE)
    monkeypatch.setattr(analysis.Analysis, "with_checks_changed", lambda facts, dropped=(), added=(): facts)
    with pytest.raises(FactViolation, match="check_element_reads.*'uses'"):
        s2s_ad.grad(module.f)(np.ones((2, 3)), 0)


def test_the_row_update_is_right_with_the_checks_kept_true(tmp_path):
    module = _reloaded("facts_row_update", tmp_path, _ROW_UPDATE)
    a = np.array([[1.0, 2.0, -1.0], [0.5, 3.0, 2.0]])
    want = 2.0 * a * np.array([[9.0], [1.0]])  # d/da of sum(b * b), b = a with row 0 times 3
    np.testing.assert_allclose(s2s_ad.grad(module.f)(a, 0), want, rtol=1e-12)


def test_a_guard_added_without_its_reads_is_caught(monkeypatch, tmp_path):
    """``np.pad(x, 1, constant_values=c)`` by ``c``: the lost-derivative check goes before the call."""
    module = _reloaded("facts_broken_guard", tmp_path, _PADDED)
    monkeypatch.setattr(analysis.Analysis, "with_checks_changed", lambda facts, dropped=(), added=(): facts)
    with pytest.raises(FactViolation, match="guard_lost_derivatives.*'uses'"):
        s2s_ad.grad(module.f, wrt=(0, 1))(np.ones(3), 0.5)


def _facts_of(fn) -> tuple[ir.Function, analysis.Analysis]:
    from s2s_ad.driver.pipeline import lowered
    _, ssa = lowered(fn, (Array(1), NUMBER, NUMBER, UNKNOWN))
    return ssa, analysis.analyse(ssa, ssa.params[:3], dict(zip(ssa.params, (Array(1), NUMBER, NUMBER, UNKNOWN))))


@pytest.mark.parametrize("fact", ["active", "varied", "uses", "kinds", "ndim", "inexact", "shape"])
def test_each_fact_changed_by_hand_is_caught(fact):
    ssa, facts = _facts_of(ff.asserted_decay_array)
    name = next(n for n in sorted(facts.active) if facts.ndim.get(n) == 1)
    changed = {
        "active": lambda: dataclasses.replace(facts, active=facts.active - {name}),
        "varied": lambda: dataclasses.replace(facts, varied=facts.varied | {"n"}),
        "uses": lambda: dataclasses.replace(facts, uses=facts.uses + Counter({name: 1})),
        "kinds": lambda: dataclasses.replace(facts, kinds={**facts.kinds, name: analysis.UNKNOWN}),
        "ndim": lambda: dataclasses.replace(facts, ndim={**facts.ndim, name: 2}),
        "inexact": lambda: dataclasses.replace(facts, inexact=facts.inexact | {name}),
        "shape": lambda: dataclasses.replace(facts, shape={**facts.shape, name: analysis.SCALAR}),
    }[fact]()
    with pytest.raises(FactViolation) as caught:
        factcheck.check_facts(ssa, changed, facts, "a pass")
    assert caught.value.fact == fact and caught.value.pass_name == "a pass"


def test_shape_classes_are_compared_as_the_partition_they_make():
    """A class is a number of no meaning of its own: renumbered alike, the facts are the same."""
    ssa, facts = _facts_of(ff.asserted_decay_array)
    numbers = sorted({c for c in facts.shape.values() if isinstance(c, int)})
    assert numbers, "the example has shape classes that are numbers"
    renumbered = {c: 1000 + i for i, c in enumerate(reversed(numbers))}
    shape = {n: renumbered.get(c, c) if isinstance(c, int) else c for n, c in facts.shape.items()}
    factcheck.check_facts(ssa, dataclasses.replace(facts, shape=shape), facts, "renumbering")
    merged = {n: 1000 if isinstance(c, int) else c for n, c in facts.shape.items()}
    if len(numbers) > 1:
        with pytest.raises(FactViolation, match="'shape'"):
            factcheck.check_facts(ssa, dataclasses.replace(facts, shape=merged), facts, "merging classes")


# -- the corpus: every function of the test modules, through every pass, with the facts re-derived -----

CORPORA = Path(__file__).resolve().parents[1] / "corpora"  # the modules of functions the tests share
OUTSIDE = CORPORA / "outside_templates"  # what two of the modules import, and their rules
sys.path.insert(0, str(OUTSIDE))
OUTSIDE_RULES = {"engine_table_functions": "blend_rules.py", "template_module_functions": "signal_rules.py"}
CORPUS = ["aliasing_functions", "cache_functions", "call_functions", "checkpoint_functions",
          "container_functions", "control_flow_functions", "crash_functions", "data_functions",
          "engine_table_functions", "everyday_functions", "everyday_more_functions", "everyday_refusal_functions", "front_functions",
          "hygiene_functions", "kinds_functions", "refused_functions", "seed_functions",
          "shape_pattern_functions", "template_module_functions", "tuple_argument_functions",
          "user_programs", "facts_functions", "error_location_functions", "everyday_idiom_functions",
          "everyday_numpy_functions", "recording_plan_functions", "speed_functions",
          "aliasing_ownership_functions", "visible_functions", "everyday_container_class_functions",
          "export_functions", "array_library_functions", "release_functions", "short_helper_functions",
          "memory_model_functions", "list_growth_functions", "held_memory_functions", "class_hierarchy_functions",
          "function_value_functions", "class_idiom_functions", "idiom_round3_functions",
          "outside_object_functions", "nested_keyword_functions",
          "function_list_functions", "computing_init_functions", "fixed_point_functions",
          "online_checkpoint_functions", "object_round6_functions",
          "checkpoint_write_functions", "object_round7_functions", "object_round8_functions", "views_by_positions_functions",
          "kept_views_functions", "changing_method_functions"]


def test_the_corpus_lists_every_function_module_of_the_tests():
    modules = {p.stem for p in CORPORA.glob("*_functions.py")} | {"user_programs"}
    assert len(modules) > 30 and modules <= set(CORPUS)


@pytest.mark.parametrize("module_name", CORPUS)
def test_facts_derived_again_after_every_pass_over_the_corpus_find_nothing(module_name, monkeypatch):
    """Each function, differentiated by every parameter in both modes, with the parameters' kinds
    unknown, all numbers, then all vectors: the facts derived again after each pass are the ones carried (a
    refusal is no finding: the function may need arrays; what the passes hand on is what is checked)."""
    monkeypatch.setenv(factcheck.ENVIRONMENT_VARIABLE, "1")
    if module_name in OUTSIDE_RULES:  # loaded once for the process, as their own tests load them
        rules.load_template_module(str(OUTSIDE / OUTSIDE_RULES[module_name]))
    checked = 0
    for f in corpus_functions(module_name):
        params = tuple(inspect.signature(f).parameters)
        for kinds in ((UNKNOWN,) * len(params), (NUMBER,) * len(params), (Array(1),) * len(params)):
            for build in (build_reverse, build_forward):
                try:
                    build(f, params, kinds, compile_it=False)
                except FactViolation:
                    raise
                except (TransformError, RecursionError):
                    continue
                checked += 1
    assert checked > 0, f"{module_name}: no function of it went through the passes"


def test_the_corpus_exercises_the_passes_that_change_facts(monkeypatch, tmp_path):
    """Not vacuous: the passes do merge operations, drop checks and add them on these functions."""
    monkeypatch.setenv(factcheck.ENVIRONMENT_VARIABLE, "1")
    seen: Counter = Counter()
    merged, changed = analysis.Analysis.with_merged, analysis.Analysis.with_checks_changed

    def spy_merged(facts, same, dropped):
        seen["merged"] += len(same)
        return merged(facts, same, dropped)

    def spy_changed(facts, dropped=(), added=()):
        dropped, added = list(dropped), list(added)
        seen["dropped"] += len(dropped)
        seen["added"] += len(added)
        return changed(facts, dropped, added)

    monkeypatch.setattr(analysis.Analysis, "with_merged", spy_merged)
    monkeypatch.setattr(analysis.Analysis, "with_checks_changed", spy_changed)
    for f in corpus_functions("facts_functions"):
        params = tuple(inspect.signature(f).parameters)
        build_reverse(f, params, (NUMBER,) * len(params), compile_it=False)
    row_update = _reloaded("facts_spy_row_update", tmp_path, _ROW_UPDATE)  # a view's check dropped
    build_reverse(row_update.f, ("a",), (Array(2), NUMBER), compile_it=False)
    padded = _reloaded("facts_spy_pad", tmp_path, _PADDED)  # a lost-derivative check added
    build_reverse(padded.f, ("x", "c"), (Array(1), NUMBER), compile_it=False)
    assert seen["merged"] >= 8 and seen["dropped"] >= 1 and seen["added"] >= 1, seen
