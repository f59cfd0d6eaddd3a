"""Differential fuzzing of the code specialised on the pattern of the arguments' lengths.

Each program of shape_programs.py is differentiated by every argument with ONE
gradient function, called at 2-4 argument shape sets (the pattern it was
generated for, the same pattern with other lengths, other patterns); at every
set where the program runs:

1. the gradient against central finite differences (conftest's ``numeric_grad``;
   where differences at two step sizes disagree, a kink, the set is skipped),
   each gradient of its argument's shape (a float for a float);
2. jvp along a random direction against <direction, gradient> (dot-product test);
3. jax.grad (x64) of the program run by jax.numpy, where JAX is installed and can
   run it (no subscript writes, no branch on a traced value): one program in ten
   at its first set (``S2S_FUZZ_SHAPES_JAX_EVERY=1``: every program).

A set whose primal raises (the pattern does not fit the program) is skipped.
CI runs 200 programs; ``S2S_FUZZ_SHAPES_EXAMPLES=N`` for another count.  Every
mismatch found becomes a named regression test at the end of this file.
"""
from __future__ import annotations

import inspect
import os
import sys
import tempfile
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import s2s_ad
from conftest import assert_gradient_matches, function_from_file, module_from_source, numeric_grad, optional_import
from shape_programs import ShapeProgram, make_program, values_for
from shape_user_programs import USER_CASES, features, weighted_mean

pytestmark = pytest.mark.slow  # random-program fuzzer: CI runs it (pytest -m "slow or not slow")


_FOLDER = Path(tempfile.mkdtemp(prefix="s2s_ad_fuzz_shapes_"))
_EXAMPLES = int(os.environ.get("S2S_FUZZ_SHAPES_EXAMPLES", "200"))
_SEED_BASE = int(os.environ.get("S2S_FUZZ_SHAPES_SEED", "0"))
# JAX traces each program anew (about 0.4 s a call): by default one program in ten, at its first shape set
_JAX_EVERY = int(os.environ.get("S2S_FUZZ_SHAPES_JAX_EVERY", "10"))


def load(source: str) -> Any:
    """The module of a generated program, imported from a real file (s2s_ad reads source)."""
    return module_from_source(_FOLDER, "fuzz_shapes_", source)


def runs(f, args: list) -> bool:
    """True where the primal runs at these arguments and returns a finite number."""
    try:
        with np.errstate(all="raise"):
            value = f(*args)
        return bool(np.ndim(value) == 0 and np.isfinite(value))
    except Exception:
        return False


def differences(f, args: list) -> list | None:
    """Central differences by every argument, or None near a kink (two step sizes disagree)."""
    result = []
    for i in range(len(args)):
        try:
            fine, coarse = numeric_grad(f, args, i, 1e-6), numeric_grad(f, args, i, 1e-4)
        except ValueError:  # a step flips a branch whose sides have other shapes
            return None
        if not np.allclose(fine, coarse, rtol=1e-3, atol=1e-5):
            return None
        result.append(fine)
    return result


def smallest_spread(source: str, args: list) -> float:
    """The smallest value any ``np.std`` of the program takes at these arguments: std has no derivative
    at zero spread (a length-1 axis, a row of one broadcast number), where the rounding of the mean
    decides what reverse mode returns while differences see a flat zero."""
    seen = [np.inf]

    def recording_std(*a, **k):
        value = np.std(*a, **k)
        seen.append(float(np.min(value, initial=np.inf)))
        return value
    namespace: dict = {"__name__": "fuzz_shapes_spread", "recording_std": recording_std}
    exec(compile(source.replace("np.std(", "recording_std("), "<spread>", "exec"), namespace)
    namespace["f"](*args)
    return min(seen)


def jax_gradient(source: str, args: list) -> list | None:
    """jax.grad of the program run by jax.numpy (x64), or None where JAX is missing or cannot run it."""
    jax, jnp = optional_import("jax"), optional_import("jax.numpy")  # (S2S_AD_REQUIRE_EXTRAS: never None)
    if jax is None or jnp is None:
        return None
    jax.config.update("jax_enable_x64", True)
    namespace: dict = {"jnp": jnp, "__name__": "fuzz_shapes_jax"}
    exec(compile(source.replace("np.", "jnp.").replace("import numpy as jnp", ""), "<jax>", "exec"), namespace)
    jax_args = [a if isinstance(a, float) else jnp.asarray(a) for a in args]
    try:
        return [np.asarray(g) for g in jax.grad(namespace["f"], tuple(range(len(args))))(*jax_args)]
    except (jax.errors.ConcretizationTypeError, jax.errors.TracerBoolConversionError):
        return None


def check_at(program: ShapeProgram, f, gradient, shapes: list, with_jax: bool) -> str:
    """Check the gradient at one shape set: "ok", or why the set was skipped."""
    args = values_for(shapes, np.random.default_rng(program.seed * 31 + len(str(shapes))))
    if not runs(f, args):
        return "primal raises"
    where = f"seed {program.seed} at shapes {shapes}\n{program.source}"
    got = gradient(*args)
    want = differences(f, args)
    if want is None:
        return "kink"
    rounding = 1e-15 * abs(float(f(*args))) / 1e-6  # what the value's rounding does to a difference
    if any(np.any(rounding >= 0.1 * (1e-6 + 1e-5 * np.abs(d))) for d in want):
        return "value too large for differences"
    if program.uses_std and smallest_spread(program.source, args) < 1e-6:
        return "std at zero spread"  # (no derivative there: rounding decides what any AD returns)
    for i, (g, a, d) in enumerate(zip(got, args, want)):
        assert np.shape(g) == np.shape(a), f"gradient {i} of shape {np.shape(g)}: {where}"
        assert isinstance(g, float) == isinstance(a, float), f"gradient {i} is {type(g)}: {where}"
        np.testing.assert_allclose(g, d, rtol=1e-5, atol=1e-6, err_msg=f"gradient {i} vs differences: {where}")
    rng = np.random.default_rng(program.seed)
    tangents = tuple(rng.normal(size=np.shape(a)) if isinstance(a, np.ndarray) else float(rng.normal())
                     for a in args)
    value, tangent = s2s_ad.jvp(f, tuple(args), tangents)
    np.testing.assert_allclose(tangent, sum(float(np.sum(g * t)) for g, t in zip(got, tangents)),
                               rtol=1e-7, atol=1e-9, err_msg=f"jvp vs gradient: {where}")
    np.testing.assert_allclose(value, f(*args), rtol=1e-12, err_msg=f"jvp's value: {where}")
    if with_jax:
        peer = jax_gradient(program.source, args)
        if peer is not None:
            for i, (g, j) in enumerate(zip(got, peer)):
                if program.uses_std and not np.all(np.isfinite(j)):
                    continue  # JAX's std of a length-1 axis: 0/0 (the differences above said 0)
                np.testing.assert_allclose(g, j, rtol=1e-7, atol=1e-9, err_msg=f"gradient {i} vs JAX: {where}")
    return "ok"


@pytest.mark.parametrize("seed", range(_SEED_BASE, _SEED_BASE + _EXAMPLES))
def test_shape_patterns_fuzz(seed: int) -> None:
    program = make_program(seed)
    f = load(program.source).f
    gradient = s2s_ad.grad(f, wrt=tuple(range(len(program.arguments))))
    with_jax = not program.uses_writes and seed % _JAX_EVERY == 0
    outcomes = [check_at(program, f, gradient, shapes, with_jax=with_jax and i == 0)
                for i, shapes in enumerate(program.shape_sets)]
    if "ok" not in outcomes:
        pytest.skip(f"no shape set checked: {outcomes}")


@pytest.mark.parametrize("case", range(len(USER_CASES)))
def test_user_programs_at_shape_sets(case: int) -> None:
    """Programs written as users write them, each function's ONE gradient called at several shape sets
    in turn: against differences, and against JAX where installed."""
    f, shapes = USER_CASES[case]
    gradient = s2s_ad.grad(f, wrt=tuple(range(len(shapes))))
    for other, other_shapes in USER_CASES:  # the same function's other shape sets through the same gradient
        if other is not f:
            continue
        args = values_for(other_shapes, np.random.default_rng(case))
        args = [np.abs(a) + 0.5 if i == len(args) - 1 and f is weighted_mean else a for i, a in enumerate(args)]
        got = gradient(*args)
        for i, (g, a) in enumerate(zip(got, args)):
            assert np.shape(g) == np.shape(a), (f.__name__, other_shapes, i)
            np.testing.assert_allclose(g, numeric_grad(f, args, i), rtol=1e-5, atol=1e-6,
                                       err_msg=f"{f.__name__} d/d{i} at {other_shapes}")
    jax = pytest.importorskip("jax")
    import jax.numpy as jnp
    jax.config.update("jax_enable_x64", True)
    args = values_for(shapes, np.random.default_rng(case))
    args = [np.abs(a) + 0.5 if i == len(args) - 1 and f is weighted_mean else a for i, a in enumerate(args)]
    source = inspect.getsource(f).replace("np.", "jnp.")
    namespace: dict = {"jnp": jnp}
    if f is features:
        return  # (subscript writes: JAX arrays have none)
    exec(source, namespace)
    want = jax.grad(namespace[f.__name__], tuple(range(len(args))))(*[jnp.asarray(a) for a in args])
    for i, (g, j) in enumerate(zip(gradient(*args), want)):
        np.testing.assert_allclose(g, np.asarray(j), rtol=1e-7, atol=1e-9, err_msg=f"{f.__name__} d/d{i} vs JAX")


# -- regressions: each a program the fuzzer found, minimised --------------------------------


def test_gradient_by_a_float_summed_is_a_float(tmp_path) -> None:
    """seed 7: ``np.sum(x)`` of a Python float ``x`` left a 0-d array as x's gradient (docs/api.md: a float)."""
    f = function_from_file(tmp_path, "float_summed", "import numpy as np\n\n\ndef f(x, y):\n"
                           "    return np.sum(y * y) + np.sum(x) * 3.0\n")
    got = assert_gradient_matches(f, [0.4, np.array([0.5, -0.7])], wrt=(0, 1))
    assert type(got[0]) in (float, np.float64), type(got[0])
    assert isinstance(s2s_ad.grad(f)(0.4, np.ones(2)), float)


def test_mean_var_std_of_an_empty_slice(tmp_path) -> None:
    """seed 1942: ``x[1:]`` of x of shape (1, 2) is empty; the adjoints of mean/var/std divided by its
    size (ZeroDivisionError) where the primal ran."""
    f = function_from_file(tmp_path, "empty_mean", "import numpy as np\n\n\ndef f(x):\n"
                           "    rest = x[1:]\n"
                           "    centred = rest - np.mean(rest, axis=1, keepdims=True)\n"
                           "    return np.sum(centred) + np.sum(np.var(rest, axis=1)) + np.sum(np.std(rest, axis=1))"
                           " + np.sum(x ** 2)\n")
    for shape in ((1, 2), (1, 1), (3, 2)):
        x = np.random.default_rng(1).uniform(0.3, 0.9, shape)
        assert_gradient_matches(f, [x])


def test_prod_of_an_empty_slice(tmp_path) -> None:
    """seed 20470: ``np.prod(y[:-1])`` of y of length 1 (an empty product, 1.0): prod's adjoint reshaped
    one element into the empty operand's shape (ValueError) where the primal ran."""
    f = function_from_file(tmp_path, "empty_prod", "import numpy as np\n\n\ndef f(y, m):\n"
                           "    pairs = y[:-1] + y[1:]\n"
                           "    return np.prod(pairs, axis=None, keepdims=True)[0] + np.sum(np.prod(m[1:], axis=1))"
                           " + np.sum(np.prod(m[:, :0], axis=-1)) + np.sum(y ** 2)\n")
    for n in (1, 2, 4):
        rng = np.random.default_rng(n)
        assert_gradient_matches(f, [rng.uniform(0.3, 0.9, n), rng.uniform(0.3, 0.9, (n, 3))], wrt=(0, 1))


def test_slice_of_a_local_rebound_in_a_loop(tmp_path) -> None:
    """seed 43288: ``h = t2[1:]`` of a local array, then ``h = np.tanh(h)`` in a loop, was refused as
    "a view of t2 carried through a loop"; only a view written through in the loop (``h *= x``)
    needs carrying as that view."""
    f = function_from_file(tmp_path, "carried_slice", "import numpy as np\n\n\ndef f(w, m):\n"
                           "    t2 = w * 0.5\n"
                           "    h = t2[1:]\n"
                           "    for i in range(2):\n"
                           "        h = np.tanh(h.T) * t2[1:]\n"
                           "    return np.sum(h * m)\n")
    rng = np.random.default_rng(3)
    for shapes in (((4,), (3,)), ((3,), (2, 2)), ((2,), (1,))):
        assert_gradient_matches(f, [rng.uniform(0.3, 0.9, s) for s in shapes], wrt=(0, 1))
