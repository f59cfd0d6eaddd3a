"""Differential fuzzing: random programs (programs.py), each checked several ways.

1. the gradient by x, y, v and m against central finite differences (points
   near a kink, where differences at two step sizes disagree, are skipped);
2. forward mode against reverse mode: jvp(f, t) == <t, grad f>, and, with the
   ``second_order`` feature, for one program in five the second derivative
   (forward over reverse) against differences of the gradient (programs with
   subscript writes from features other than ``core`` only with
   ``second_order_writes``);
3. the value returned with the gradient against the plain function;
4. the arguments, unchanged after every call;
5. ``vjp_twice``: ``fv`` (the same body returning an array) through
   ``s2s_ad.vjp``; its pullback called twice with one random cotangent gives
   the same adjoints both times, matching differences of <cotangent, fv>, and
   leaves the primal output unchanged;
6. ``float32``: v and m passed as float32 too; the gradient against the
   float64 differences within float32's precision, and forward against reverse;
7. ``jax``, when JAX is installed: the program run by jax.numpy (``math``
   functions and ``float`` mapped onto it, list indices ``v[[0, 0]]`` onto
   arrays) and ``jax.grad`` compared, for programs without subscript writes
   only (JAX arrays have no in-place writes);
8. ``autograd``, when installed: the same for programs that also call no
   ``math`` function and no ``float`` (autograd's boxes do not go through them).

A ``TransformError`` fails the program unless the program holds a construct
docs/supported-python.md documents as refused (marked ``# refusal-ok`` by the generator), the
error names that marked line, and its message is one of the documented ones.

CI runs 300 programs; ``pytest tests/fuzz --soak`` runs 20,000
(``S2S_FUZZ_EXAMPLES=N`` for another count, ``S2S_FUZZ_FEATURES`` to choose the
generator's features: see programs.py).  Every failure found becomes a named
test in tests/fuzz/test_regressions.py once fixed.
"""
from __future__ import annotations

import re
import sys
import tempfile
import types
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, assume, given, note, settings
from hypothesis import strategies as st


import s2s_ad
from conftest import module_from_source, optional_import
from programs import FEATURES, Program, enabled_features, write_program

pytestmark = pytest.mark.slow  # random-program fuzzer: CI runs it (pytest -m "slow or not slow")

_FOLDER = Path(tempfile.mkdtemp(prefix="s2s_ad_fuzz_"))
_FLOATS = (0, 1, 2, 3)  # x, y, v, m: the arguments differentiated
# The refusals docs/supported-python.md documents for the constructs the generator marks (# refusal-ok)
_DOCUMENTED_REFUSALS = (r"may be a view of", r"is not an array this function created",
                        r"NumPy would change that array too", r"may be a view of .*write into that array by index",
                        r"shares memory with an array the function made where no name of its own holds it now")


def arguments(seed: int) -> list:
    """x, y, v, m and n from a seed: continuous values, so no exact zeros and no ties (hypothesis's
    favourite numbers sit on kinks, where no derivative exists to compare)."""
    rng = np.random.default_rng(seed)
    x, y, *rest = rng.uniform(0.05, 1.0, size=11) * rng.choice([-1.0, 1.0], size=11)
    return [float(x), float(y), np.array(rest[:3]), np.array(rest[3:]).reshape(2, 3), 3]


def load(source: str) -> Any:
    """Import a generated program from a real file (s2s_ad reads source with inspect)."""
    return module_from_source(_FOLDER, "fuzz_", source)


def differences(f, args: list, eps: float) -> list:
    """Central differences of scalar f by each float argument (x, y, v, m), shaped like it."""
    result = []
    for i in _FLOATS:
        x = np.asarray(args[i], dtype=float)
        d = np.zeros(x.shape)
        for index in np.ndindex(x.shape):
            step = np.zeros(x.shape)
            step[index] = eps
            plus, minus = list(args), list(args)
            plus[i], minus[i] = (x + step, x - step) if x.ndim else (float(x + eps), float(x - eps))
            d[index] = (float(f(*plus)) - float(f(*minus))) / (2 * eps)
        result.append(d if x.ndim else float(d))
    return result


def smooth_differences(f, args: list, value: float) -> list:
    """Finite differences, or ``assume(False)`` where two step sizes disagree (a kink nearby), or
    where rounding in a large ``value`` (good to about 1e-15 of its size, divided by the step)
    would reach a tenth of the tolerance the gradient is checked to."""
    fine, coarse = differences(f, args, 1e-6), differences(f, args, 1e-4)
    rounding = 1e-15 * abs(value) / 1e-6
    for a, b in zip(fine, coarse):
        assume(np.allclose(a, b, rtol=1e-3, atol=1e-5))
        assume(np.all(rounding < 0.1 * (1e-6 + 1e-4 * np.abs(a))))
    return fine


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


# -- refusals ---------------------------------------------------------------------------------------


def gradient_or_documented_refusal(program: Program, f, args: list) -> Any:
    """``value_and_grad`` of f; None where it refuses a construct the generator marked as documented
    as refused (the error must name that marked line); any other refusal fails the program."""
    try:
        return s2s_ad.value_and_grad(f, wrt=_FLOATS)(*args)
    except s2s_ad.TransformError as error:
        if not program.refusal_ok or error.line is None:
            raise
        named = Path(error.filename or "").name == Path(f.__code__.co_filename).name
        marked = named and "# refusal-ok" in program.source.splitlines()[error.line - 1]
        if not (marked and any(re.search(p, str(error)) for p in _DOCUMENTED_REFUSALS)):
            raise
        note(f"refused, as documented: {error}")
        return None


# -- peers ------------------------------------------------------------------------------------------


def writes_into_subscripts(source: str) -> bool:
    return re.search(r"\]\s*(=|\+=|-=|\*=)[^=]", source) is not None


def jax_gradient(program: Program, args: list):
    """jax.grad of the program run by jax.numpy, if JAX is installed and the program has no subscript
    writes (else None).  ``math.*`` and ``float`` map onto jax.numpy, ``checkpointed`` onto its range."""
    if program.writes or program.refusal_ok or writes_into_subscripts(program.source):
        return None
    jax, jnp = optional_import("jax"), optional_import("jax.numpy")  # (S2S_AD_REQUIRE_EXTRAS: never None)
    if jax is None or jnp is None:
        return None
    jax.config.update("jax_enable_x64", True)
    shim_math = types.SimpleNamespace(sin=jnp.sin, cos=jnp.cos, tanh=jnp.tanh, exp=jnp.exp, sqrt=jnp.sqrt,
                                      atan=jnp.arctan, hypot=jnp.hypot, log1p=jnp.log1p)
    shim_s2s = types.SimpleNamespace(checkpointed=lambda iterable, **_: iterable)
    body = program.source.replace("import math\n", "").replace("import numpy as np\n", "").replace(
        "import s2s_ad\n", "")
    body = re.sub(r"\[\[([\d, ]+)\]\]", r"[np.array([\1])]", body)  # JAX takes no list as an index: v[[0, 0]]
    namespace: dict = {"np": jnp, "math": shim_math, "s2s_ad": shim_s2s, "float": lambda z: z}
    exec(compile(body, "<jax>", "exec"), namespace)
    jax_args = [a if isinstance(a, float) else jnp.asarray(a) for a in args[:4]] + [args[4]]
    return [np.asarray(g) for g in jax.grad(namespace["f"], _FLOATS)(*jax_args)]


def autograd_gradient(program: Program, args: list):
    """autograd's gradient of the same program, if autograd is installed and the program is one it
    can run: no subscript writes, no ``math`` calls, no ``float`` (else None)."""
    source = program.source
    if program.writes or program.refusal_ok or writes_into_subscripts(source) or "math." in source \
            or "float(" in source or ".copy()" in source:
        return None
    try:
        import autograd
    except ImportError:
        return None
    namespace: dict = {}
    exec(compile(source.replace("import numpy as np", "import autograd.numpy as np"), "<autograd>", "exec"),
         namespace)
    return autograd.grad(namespace["f"], _FLOATS)(*args)


# -- the checks -------------------------------------------------------------------------------------


def check_gradient(got, want, rtol: float, atol: float, label: str) -> None:
    for name, ours, theirs in zip("xyvm", got, want):
        assert np.shape(ours) == np.shape(theirs), f"{label} d/d{name}: shape {np.shape(ours)}"
        np.testing.assert_allclose(ours, theirs, rtol=rtol, atol=atol, err_msg=f"{label} d/d{name}")


def check_forward_against_reverse(f, args: list, got, rtol: float, atol: float, label: str) -> None:
    rng = np.random.default_rng(7)
    tangents = [0.3, -0.7, rng.standard_normal(3).astype(args[2].dtype),
                rng.standard_normal((2, 3)).astype(args[3].dtype), None]
    directional = sum(float(np.sum(np.asarray(g, dtype=float) * np.asarray(t, dtype=float)))
                      for g, t in zip(got, tangents))
    scale = sum(float(np.sum(np.abs(np.asarray(g, dtype=float) * t))) for g, t in zip(got, tangents[:4]))
    _, jvp_tangent = s2s_ad.jvp(f, tuple(args), tuple(tangents))
    assert abs(float(jvp_tangent) - directional) <= atol + rtol * scale, \
        f"{label}: jvp {float(jvp_tangent)!r} against <grad, t> {directional!r}"


def check_vjp_twice(fv, args: list) -> None:
    """fv's pullback twice: the same adjoints, matching differences, and the primal output unchanged."""
    plain = fv(*args)
    out, pull = s2s_ad.vjp(fv, *args)
    np.testing.assert_allclose(out, plain, rtol=1e-12, atol=1e-12, err_msg="vjp value")
    kept = np.copy(out)
    cotangent = np.random.default_rng(3).standard_normal(np.shape(out))
    first = pull(cotangent)
    second = pull(cotangent)
    np.testing.assert_array_equal(out, kept, err_msg="the primal output changed after two pullbacks")
    for a, b, name in zip(first, second, "xyvm"):
        np.testing.assert_array_equal(a, b, err_msg=f"the second pullback differs, d/d{name}")
    want = smooth_differences(lambda *a: float(np.sum(fv(*a) * cotangent)), args, float(np.sum(plain * cotangent)))
    check_gradient(first[:4], want, 1e-4, 1e-6, "vjp")


def check_float32(program: Program, f, args: list, want: list) -> None:
    """v and m as float32: the gradient against float64 differences, within float32's precision."""
    args32 = [args[0], args[1], args[2].astype(np.float32), args[3].astype(np.float32), args[4]]
    plain = f(*args32)
    assume(np.isfinite(plain))
    result = gradient_or_documented_refusal(program, f, args32)
    if result is None:
        return
    value, got = result
    np.testing.assert_allclose(value, plain, rtol=1e-5, atol=1e-5, err_msg="float32 value")
    for i, g in zip((2, 3), got[2:]):
        assert np.asarray(g).dtype.kind == "f", f"float32: the gradient by {'vm'[i - 2]} is {np.asarray(g).dtype}"
    size = max(float(np.max(np.abs(w))) for w in want)
    check_gradient(got, want, 2e-3, 2e-3 * (1.0 + size), "float32")
    check_forward_against_reverse(f, args32, got, 1e-3, 1e-4 * (1.0 + size), "float32 jvp vs grad")


def check_program(program: Program, args: list, features: frozenset[str], second_order: bool = False) -> None:
    module = load(program.source)
    f, fv = module.f, module.fv
    value = f(*args)
    assume(np.isfinite(value) and abs(value) < 1e6)
    want = smooth_differences(f, args, value)
    originals = [np.copy(a) for a in args]

    result = gradient_or_documented_refusal(program, f, args)
    if result is None:
        return
    got_value, got = result
    np.testing.assert_allclose(got_value, value, rtol=1e-12, atol=1e-12, err_msg="value")
    check_gradient(got, want, 1e-4, 1e-6, "grad")
    check_forward_against_reverse(f, args, got, 1e-7, 1e-9, "jvp vs grad")
    for before, after in zip(originals, args):
        np.testing.assert_array_equal(before, after, err_msg="an argument was changed")

    if second_order and "second_order" in features and (
            not program.feature_writes or "second_order_writes" in features):  # forward over reverse, against differences of the gradient
        first = s2s_ad.grad(f)
        want_second = smooth_second(first, args)
        np.testing.assert_allclose(s2s_ad.grad(first)(*args), want_second, rtol=1e-4, atol=1e-6, err_msg="d2/dx2")
    if "vjp_twice" in features:
        check_vjp_twice(fv, args)
    if "float32" in features:
        check_float32(program, f, args, want)
    for peer, name, enabled in ((jax_gradient, "jax", "jax" in features),
                                (autograd_gradient, "autograd", "autograd" in features)):
        theirs = peer(program, args) if enabled else None
        if theirs is not None:
            check_gradient(got, theirs, 1e-8, 1e-10, name)
    for before, after in zip(originals, args):
        np.testing.assert_array_equal(before, after, err_msg="an argument was changed")


def test_random_programs(fuzz_examples):
    features = enabled_features()
    checked = []

    @settings(max_examples=fuzz_examples, deadline=None, derandomize=fuzz_examples <= 1000,
              suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much, HealthCheck.data_too_large])
    @given(st.data(), st.integers(0, 2 ** 32 - 1))
    def run(data, seed):
        program = write_program(data.draw, features)
        args = arguments(seed)
        note(program.source)
        note(f"arguments: {args}")
        check_program(program, args, features, second_order=seed % 5 == 0)
        checked.append(program.source)

    run()
    print(f"\nfuzz: {len(checked)} programs checked ({len(set(checked))} distinct), features "
          f"{', '.join(sorted(features))}; no mismatch")


def test_feature_switches(monkeypatch):
    monkeypatch.setenv("S2S_FUZZ_FEATURES", "core,masks")
    assert enabled_features() == {"core", "masks"}
    monkeypatch.setenv("S2S_FUZZ_FEATURES", "all,-views")
    assert "views" not in enabled_features() and "float32" in enabled_features()
    monkeypatch.setenv("S2S_FUZZ_FEATURES", "-views")
    assert "views" not in enabled_features() and "core" in enabled_features()
    monkeypatch.setenv("S2S_FUZZ_FEATURES", "+concat,-float32")
    assert "concat" in enabled_features() and "float32" not in enabled_features() and "core" in enabled_features()
    monkeypatch.setenv("S2S_FUZZ_FEATURES", "")
    assert enabled_features() == {name for name, on in FEATURES.items() if on}
    monkeypatch.setenv("S2S_FUZZ_FEATURES", "all,-nonsense")
    with pytest.raises(ValueError, match="unknown feature 'nonsense'"):
        enabled_features()
