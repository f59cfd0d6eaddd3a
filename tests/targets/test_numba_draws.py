"""Under ``backend="numba"``, draws from an ``np.random.Generator`` passed in compile, and give NumPy's
numbers (issue 36): the oracle is NumPy's own generator from the same seed, and, for derivatives,
the Python backend and central differences.  Draws Numba cannot reproduce run as Python, saying so."""
import functools
import inspect
import warnings

import numpy as np
import pytest

import s2s_ad
from s2s_ad.core import runtime
from s2s_ad.core.errors import CompileFallbackWarning
from s2s_ad.passes.draw_arguments import parameters

numba = pytest.importorskip("numba")

from s2s_ad.targets.numba import draws as numba_draws  # noqa: E402
from s2s_ad.targets.numba import runtime as numba_runtime  # noqa: E402

# Each method of numba.draws.REPRODUCED, with its parameters in each regime where NumPy's algorithm
# takes another branch (gamma's shape below and above 1, poisson's mean below and above 10, ...).
REGIMES = {
    "random": [(50,), ((3, 4),)], "standard_normal": [(50,)], "standard_exponential": [(50,)],
    "standard_cauchy": [(50,)], "normal": [(1.0, 2.0, 50), (0.0, 1.0, (5, 4))], "uniform": [(-1.0, 3.0, 50)],
    "integers": [(0, 10, 50), (-5, 1000000, 50), (0, 2 ** 40, 50), (3, 4, 50)], "lognormal": [(0.0, 1.0, 50)],
    "laplace": [(0.0, 1.0, 50)], "logistic": [(0.0, 1.0, 50)], "exponential": [(2.0, 50)],
    "rayleigh": [(1.0, 50)], "poisson": [(0.0, 50), (3.0, 50), (30.0, 50), (1000.0, 50)],
    "geometric": [(0.3, 50), (1.0, 50), (0.001, 50)], "chisquare": [(3.0, 50), (0.5, 50)],
    "standard_t": [(3.0, 50), (0.5, 50)], "standard_gamma": [(0.5, 50), (1.0, 50), (3.0, 50)],
    "pareto": [(2.0, 50)], "power": [(2.0, 50)], "logseries": [(0.5, 50), (0.99, 50)], "zipf": [(2.0, 50), (1.1, 50)],
    "gamma": [(0.3, 1.5, 50), (1.0, 1.0, 50), (5.0, 2.0, 50)], "beta": [(0.5, 0.5, 50), (2.0, 3.0, 50), (0.9, 5.0, 50)],
    "binomial": [(10, 0.3, 50), (1000, 0.4, 50), (1000, 0.9, 50), (5, 0.0, 50)],
    "negative_binomial": [(3, 0.4, 50), (0.5, 0.9, 50)], "f": [(3.0, 4.0, 50)],
    "noncentral_chisquare": [(3.0, 1.0, 50), (0.5, 0.0, 50), (0.5, 2.0, 50)],
    "triangular": [(0.0, 0.5, 1.0, 50), (0.0, 0.0, 1.0, 50)], "noncentral_f": [(3.0, 4.0, 1.0, 50)],
}
CALLS = [(method, args) for method, regimes in REGIMES.items() for args in regimes]


@functools.lru_cache(maxsize=None)
def _drawing_all():
    """A compiled function making every draw of CALLS in turn from one generator (one compile)."""
    numba_runtime.register()
    calls = [f"draw(g, {m!r}, {', '.join(map(repr, args))})" for m, args in CALLS]
    namespace = {"draw": runtime.draw}
    exec("def all_draws(g):\n    return (" + ",\n            ".join(calls) + ")\n", namespace)
    return numba.njit(namespace["all_draws"])


def test_every_reproduced_method_is_listed_with_its_regimes():
    assert set(REGIMES) == set(numba_draws.REPRODUCED)
    for method, arity in numba_draws.REPRODUCED.items():
        assert len(parameters(method)) >= arity + 1, method  # (its parameters, then size)
        assert [name for name, _ in parameters(method)][arity] == "size", method


@pytest.mark.parametrize("seed", [0, 7, 2024])
def test_compiled_draws_are_numpys_bit_for_bit_and_advance_the_callers_generator(seed):
    compiled = _drawing_all()
    drawn = compiled(np.random.default_rng(seed))
    numpys = np.random.default_rng(seed)
    for (method, args), value in zip(CALLS, drawn):
        expected = getattr(numpys, method)(*args)
        assert np.array_equal(np.asarray(value), np.asarray(expected)), (method, args)
    after, expected_after = np.random.default_rng(seed), np.random.default_rng(seed)
    compiled(after)
    for method, args in CALLS:
        getattr(expected_after, method)(*args)
    assert after.random() == expected_after.random()  # the caller's generator advanced as NumPy's


def noisy_loss(x, rng):
    noise = rng.normal(size=x.shape[0])
    weights = rng.uniform(0.5, 1.5, size=x.shape[0])
    total = 0.0
    for i in range(x.shape[0]):
        total = total + weights[i] * (x[i] + 0.1 * noise[i]) ** 2
    return total


def dropout_energy(x, rng):
    keep = rng.random(x.shape[0]) < 0.7
    scale = rng.standard_normal()
    e = 0.0
    for i in range(x.shape[0]):
        if keep[i]:
            e = e + np.sin(x[i]) * scale
    return e + rng.gamma(2.0, scale=1.5) * x[0]


def _central(f, x, seed, h=1e-6):
    out = np.zeros_like(x)
    for i in range(x.size):
        e = np.zeros_like(x)
        e[i] = h
        out[i] = (f(x + e, np.random.default_rng(seed)) - f(x - e, np.random.default_rng(seed))) / (2 * h)
    return out


@pytest.mark.parametrize("f", [noisy_loss, dropout_energy])
def test_a_gradient_drawing_from_a_generator_argument_compiles_and_agrees(f):
    x = np.linspace(-0.8, 1.1, 6)
    with warnings.catch_warnings():
        warnings.simplefilter("error", CompileFallbackWarning)  # compiled, not run as Python
        df = s2s_ad.value_and_grad(f, backend="numba")
        rng = np.random.default_rng(3)
        value, gradient = df(x, rng)
    args = df._bind((x, rng), {})
    entry = df._typed_entry(args, df._types_of(args))[0][0]
    assert entry.state["run"] is entry.compiled  # not fallen back
    python_rng = np.random.default_rng(3)
    python_value, python_gradient = s2s_ad.value_and_grad(f)(x, python_rng)
    assert value == pytest.approx(f(x, np.random.default_rng(3)), rel=1e-14)
    assert value == pytest.approx(python_value, rel=1e-14)
    np.testing.assert_allclose(gradient, python_gradient, rtol=1e-13)
    np.testing.assert_allclose(gradient, _central(f, x, 3), rtol=1e-6, atol=1e-8)
    assert rng.random() == python_rng.random()  # the caller's generator left as one run of f leaves it


def test_draws_numba_cannot_reproduce_run_as_python_saying_so():
    def weibull_weighted(x, rng):
        w = rng.weibull(2.0, size=x.shape[0])  # Numba's differ from NumPy's in the last bit
        s = 0.0
        for i in range(x.shape[0]):
            s = s + w[i] * x[i] * x[i]
        return s
    x = np.array([0.3, -1.2, 2.0])
    with pytest.warns(CompileFallbackWarning, match="draw"):
        compiled_gradient = s2s_ad.grad(weibull_weighted, backend="numba")(x, np.random.default_rng(1))
    w = np.random.default_rng(1).weibull(2.0, size=3)
    np.testing.assert_array_equal(compiled_gradient, 2 * w * x)


def test_a_legacy_random_state_runs_as_python_with_its_own_numbers():
    x = np.array([0.5, 1.5, -0.25])
    with pytest.warns(CompileFallbackWarning):
        gradient = s2s_ad.grad(noisy_loss, backend="numba")(x, np.random.RandomState(4))
    np.testing.assert_allclose(gradient, s2s_ad.grad(noisy_loss)(x, np.random.RandomState(4)), rtol=1e-14)


def test_keywords_become_positions_only_where_generator_and_random_state_agree():
    from s2s_ad.core import ir
    from s2s_ad.passes.draw_arguments import by_position
    size = ir.Var("n")
    call = ir.Call(runtime.draw, (ir.Var("rng"), ir.Const("normal")), (("size", size),))
    made = by_position(call)
    assert made.fn is runtime.draw and not made.kwargs
    assert [getattr(a, "value", getattr(a, "name", None)) for a in made.args] == ["rng", "normal", 0.0, 1.0, "n"]
    # keywords the leading parameters do not name, or dtype=, stay keywords
    assert by_position(ir.Call(runtime.draw, (ir.Var("rng"), ir.Const("random")), (("dtype", ir.Var("t")),))) is None
    assert by_position(ir.Call(runtime.draw, (ir.Var("rng"), ir.Const("uniform")), (("a", ir.Const(0.0)),))) is None
    # a required parameter left out: left as it was (Python raises as it would)
    assert by_position(ir.Call(runtime.draw, (ir.Var("rng"), ir.Const("gamma")), (("size", size),))) is None
    for method in numba_draws.REPRODUCED:
        legacy = getattr(np.random.RandomState, method, None)
        if legacy is None:
            continue
        names = [name for name, _ in parameters(method)]
        assert list(inspect.signature(legacy).parameters)[1:len(names) + 1] == names, method
