"""Issue 18 part 4: "Declared facts are never checked against NumPy".

Every rule of the registry (reverse, variants for known ranks, tangent; the built-in templates, the
scipy.special rules, and users' rules that give examples) runs its examples through NumPy itself:
``s2s_ad.rules.rule_facts`` checks sharing (``np.shares_memory``: a rule that may return a view of an input
must say so, one declared to make new arrays never shares), result shapes and types against the
shape and kind facts, and linearity where declared.  Here, besides: every rule must declare examples,
and the adjoint must agree with the tangent by the dot-product test on random inputs.  A rule whose
facts NumPy contradicts does not load in the debug mode (``S2S_AD_CHECK_RULES=1``, which this suite
turns on in conftest.py).
"""
from __future__ import annotations

import inspect
import math
import os
import textwrap
from typing import Any

import numpy as np
import pytest

import s2s_ad
from s2s_ad.core.number_functions import cos_of_number, sin_of_number
from s2s_ad.rules import rule_facts
from s2s_ad.rules import registry as rules
from s2s_ad.rules.rule_facts import examples_of
from test_rules import Probe

jax = pytest.importorskip("jax")
jnp = jax.numpy
jax.config.update("jax_enable_x64", True)


def _label(rule: rules.Rule) -> str:
    module = getattr(rule.fn, "__module__", "") or ""
    return f"{rule.kind}-{module}.{rule.name}".replace("..", ".")


def _has_examples(rule: rules.Rule) -> bool:
    return bool(rules.declared_examples(rule)) or rule.elementwise


RULES = rules.all_rules()


def test_the_suite_runs_in_the_debug_mode_and_no_built_in_rule_was_refused():
    assert rules.checking_rules(), "conftest.py turns S2S_AD_CHECK_RULES on for the whole suite"
    assert rules.contradicted_rules() == {}


def _built_in(rule: rules.Rule) -> bool:
    return rule.namespace.get("__name__", "").startswith("s2s_ad.templates")


def test_every_rule_declares_examples():
    """Of s2s_ad's own templates (scipy.special's included); a user's rule may leave them out."""
    missing = [f"{_label(r)} ({os.path.basename(r.filename)}:{r.line})" for r in RULES
               if _built_in(r) and not _has_examples(r)]
    assert not missing, ("these rules declare no examples (see EXAMPLES_FORM.md), so NumPy checks none of "
                         "their facts: " + ", ".join(missing))


@pytest.mark.parametrize("rule", [r for r in RULES if _has_examples(r)], ids=_label)
def test_declared_facts_hold_in_numpy(rule):
    found = rules.fact_contradictions(rule)
    assert not found, f"{rule.filename}:{rule.line}: " + "\n".join(found)


# -- the adjoint against the tangent: <u, J t> == <J^T u, t> ------------------------------------

def _dot_cases() -> list:
    cases = []
    for rule in RULES:
        if rule.kind != "adjoint" or not _built_in(rule):
            continue  # (users' rules from other test files are theirs to check)
        for i, example in enumerate(examples_of(rule, rules.declared_examples(rule))):
            cases.append(pytest.param(rule, example, id=f"{_label(rule)}-{i}"))
    return cases


def _random_like(value: Any, rng: np.random.Generator) -> Any:
    if isinstance(value, (tuple, list)):  # (eigh's and svd's results are named tuples: _make keeps the type)
        items = [_random_like(v, rng) for v in value]
        return value._make(items) if hasattr(value, "_make") else type(value)(items)
    return rng.normal(size=np.shape(value)) if np.ndim(value) else float(rng.normal())


def _inner(a: Any, b: Any) -> float:
    if isinstance(a, (tuple, list)):
        return sum(_inner(x, y) for x, y in zip(a, b))
    return float(np.sum(np.asarray(a) * np.asarray(b)))


@pytest.mark.parametrize("rule, example", _dot_cases())
def test_adjoint_agrees_with_tangent_by_the_dot_product_test(rule, example, tmp_path):
    probe = Probe(rule, example, tmp_path)
    if not probe.args:
        pytest.fail(f"{probe.call_source}: the example differentiates no input")
    rng = np.random.default_rng(7)
    value, pullback = s2s_ad.vjp(probe.module.call, *probe.args)
    cotangent = _random_like(value, rng)
    adjoints = pullback(cotangent)
    tangents = tuple(_random_like(a, rng) for a in probe.args)
    _, directional = s2s_ad.jvp(probe.module.call, tuple(probe.args), tangents)
    forward, reverse = _inner(cotangent, directional), _inner(adjoints, tangents)
    np.testing.assert_allclose(forward, reverse, rtol=1e-9, atol=1e-10,
                               err_msg=f"{probe.call_source}: <u, J t> (tangent) != <J^T u, t> (adjoint)")


# -- the debug mode refuses what NumPy contradicts ---------------------------------------------

def first_row(a):
    return a[0]


def first_row_doubled(a):
    return first_row(a) * 2.0


def test_a_user_rule_whose_facts_numpy_contradicts_does_not_load():
    """``first_row`` returns a view of its argument; a rule that does not say so is refused."""
    with pytest.raises(s2s_ad.TransformError, match=r"test_rule_facts_against_numpy.py:\d+.*view"):
        @s2s_ad.adjoint(first_row, examples=({"a": (3, 2)},))
        def first_row_rule(out, a, d_out):
            d_a = np.zeros_like(a)
    assert rules.adjoint_rule(first_row) is None
    assert rules.fact(first_row, "view") is None


def last_column(a):
    return a[:, -1]


def last_column_summed(a):
    return np.sum(last_column(a) ** 2)


def test_a_user_rule_whose_facts_hold_loads_in_the_debug_mode():
    @s2s_ad.adjoint(last_column, examples=({"a": (3, 2)},), view=True, linear=True)
    def last_column_rule(out, a, d_out):
        d_a = np.concatenate([np.zeros((np.shape(a)[0], np.shape(a)[1] - 1)), d_out[:, None]], axis=1)

    a = np.array([[0.3, 0.5], [0.7, -0.2], [1.1, 0.4]])
    np.testing.assert_allclose(s2s_ad.grad(last_column_summed)(a), [[0.0, 1.0], [0.0, -0.4], [0.0, 0.8]])


MODULE = '''
import numpy as np
from s2s_ad.rules.registry import adjoint

from {module} import {name}


@adjoint({name}, examples=({{"a": (3,)}},), linear=True)
def {name}_rule(out, a, d_out):
    d_a = d_out
'''


def squared_halves(a):  # not linear: the template module below says it is
    return a * a / 2.0


def squared_halves_summed(a):
    return np.sum(squared_halves(a))


def test_a_template_module_whose_rule_numpy_contradicts_does_not_load(tmp_path):
    path = tmp_path / "wrong_rules.py"
    path.write_text(textwrap.dedent(MODULE.format(module=__name__, name="squared_halves")))
    with pytest.raises(s2s_ad.TransformError, match=r"wrong_rules.py:\d+.*linear=True"):
        rules.load_template_module(str(path))
    assert rules.adjoint_rule(squared_halves) is None
    with pytest.raises(s2s_ad.TransformError, match="declares facts NumPy contradicts"):
        s2s_ad.grad(squared_halves_summed)(np.array([0.5, 1.5]))


def cube_of(a):
    return a ** 3


def cube_summed(a):
    return np.sum(cube_of(a))


def test_a_registered_rule_the_check_marks_is_refused_where_it_is_called(monkeypatch):
    """What the debug mode does with a built-in template NumPy contradicts: the rule is taken out and
    a call of its function is a TransformError naming the call and the rule."""
    monkeypatch.setenv(rules.CHECK_RULES_VARIABLE, "0")  # registered unchecked, as a template module's rule is

    @s2s_ad.adjoint(cube_of, examples=({"a": (3,)},), elementwise=True, linear=True)
    def cube_rule(out, a, d_out):
        d_a = 3.0 * d_out * a * a

    rule = rules.adjoint_rule(cube_of)
    refused = rules.refuse_contradicted_rules([rule])
    assert "linear=True" in refused[cube_of]
    with pytest.raises(s2s_ad.TransformError, match=r"test_rule_facts_against_numpy.py:\d+.*cube_of.*contradicts"):
        s2s_ad.grad(cube_summed)(np.array([0.5, 1.5]))


# -- the check itself finds each kind of wrong fact ---------------------------------------------

def transposed_copy(a):
    return np.array(a.T)


def sums_rows(a):
    return np.sum(a, axis=1)


def scaled_by(a, scale):
    return a * scale


def halves(a):
    return np.split(a, 2)


def same_shape_zeros(a, like):
    return np.zeros_like(like) + a


def the_argument(a):
    return a


def cut_unevenly(a, indices_or_sections):
    return [a[:1], a[1:]]  # not where np.split(ary, 2) cuts


def cut_in_halves(a, indices_or_sections):
    return [a[:2], a[2:]]  # where np.split(ary, 2) cuts a (4,) array


def flat_anyway(a, shape):
    return np.ravel(a)  # one dimension, whatever shape says


def shaped_as_told(a, shape):
    return np.reshape(a, shape)


def numpy_sine(a):
    return np.sin(a)  # a np.float64 on a float, not a Python float


def python_sine(a):
    return math.sin(a)


WRONG_FACTS = [
    (numpy_sine, {"examples": ({"a": (5,)},), "elementwise": True, "on_a_number": cos_of_number}, "on_a_number"),
    (numpy_sine, {"examples": ({"a": (5,)},), "elementwise": True, "on_a_number": sin_of_number}, None),
    (transposed_copy, {"examples": ({"a": (2, 3)},), "elementwise": True}, "broadcast shape"),
    (sums_rows, {"examples": ({"a": (2, 3)},), "result_dims": lambda a: a}, "result_dims"),
    (sums_rows, {"examples": ({"a": (2, 3)},), "result_rank": lambda a: a}, "result_rank"),
    (sums_rows, {"examples": ({"a": (2, 3)},), "reduction": True}, "reduction"),
    (scaled_by, {"examples": ({"a": (3,), "scale": 2.0},), "zero_derivative": ("scale",)}, "zero_derivative"),
    (same_shape_zeros, {"examples": ({"a": (3,), "like": np.ones(3)},), "shape_only": 0}, "shape_only"),
    (scaled_by, {"examples": ({"a": (3,), "scale": 2.0},), "bilinear": True}, None),  # a * scale is bilinear
    (halves, {"examples": ({"a": (4,)},)}, "returns_sequence"),
    (halves, {"examples": ({"a": (4,)},), "items": 3, "returns_sequence": True}, "items=3"),
    (the_argument, {"examples": ({"a": (3,)},), "elementwise": True}, "make a new array"),
    (the_argument, {"examples": ({"a": (3,)},), "may_view": True}, None),
    (the_argument, {"examples": ({"a": (3,)}, {"a": (3,), "b": 1})}, "not an input"),
    (cut_unevenly, {"examples": ({"a": (4,), "indices_or_sections": 2},), "items": 2, "returns_sequence": True,
                    "may_view": True, "retake": "always", "write_back": "pieces"}, "piece 0"),
    (flat_anyway, {"examples": ({"a": (2, 3), "shape": (3, 2)},), "rank_from": "shape"}, "rank_from"),
    (shaped_as_told, {"examples": ({"a": (2, 3), "shape": (3, 2)}, {"a": (6,), "shape": 6}), "rank_from": "shape",
                      "view": True},
     None),
    (cut_in_halves, {"examples": ({"a": (4,), "indices_or_sections": 2},), "items": 2, "returns_sequence": True,
                     "may_view": True, "retake": "always", "write_back": "pieces"}, None),
    (numpy_sine, {"examples": ({"a": ()},), "returns_float": True}, "returns_float"),
    (scaled_by, {"examples": ({"a": (3,), "scale": 2.0},), "linear_in": (0, 1)}, None),  # a product: in each
    (numpy_sine, {"examples": ({"a": (5,)},), "linear_in": (0,)}, "linear_in"),
    (python_sine, {"examples": ({"a": ()},), "returns_float": True}, None),
]


def _wrong_fact_id(case: tuple) -> str:
    fn, declared, phrase = case
    return f"{fn.__name__}-{'-'.join(k for k in declared if k != 'examples')}-{'holds' if phrase is None else 'wrong'}"


@pytest.mark.parametrize("fn, declared, phrase", WRONG_FACTS, ids=[_wrong_fact_id(c) for c in WRONG_FACTS])
def test_the_check_finds_each_kind_of_wrong_fact(fn, declared, phrase):
    """Each fact, declared wrongly of a small function, is reported (and one declared rightly is not)."""
    parameters = tuple(inspect.signature(fn).parameters)
    rule = rules.Rule(fn=fn, kind="adjoint", name=fn.__name__ + "_rule", result="out", inputs=parameters,
                      positional=len(parameters), defaults={}, seeds=("d_out",), body=[], namespace={},
                      filename=__file__, line=1, elementwise=declared.get("elementwise", False),
                      assigned=frozenset({"d_a"}), examples=declared["examples"],
                      form="bilinear" if declared.get("bilinear") else "")
    facts = {k: v for k, v in declared.items() if k not in ("examples", "elementwise", "bilinear", "items")}
    found = rule_facts.contradictions(rule, rule.examples, facts, rule.elementwise, declared.get("items", 0))
    if phrase is None:
        assert found == []
    else:
        assert found and any(phrase in f for f in found), found


def test_the_debug_mode_is_off_by_default(monkeypatch):
    monkeypatch.delenv(rules.CHECK_RULES_VARIABLE, raising=False)
    assert not rules.checking_rules()


# -- issue 18: "np.linalg.matrix_power(a, 1) returns a itself, but the rule does not declare that it
# may be a view; a later write into a gives a wrong gradient" -----------------------------------

def matrix_power_one_then_write(x):
    a = x * 1.0
    b = np.linalg.matrix_power(a, 1)  # NumPy: b is a
    a[0, 0] = 5.0
    return np.sum(b * x)


def test_matrix_power_of_one_is_declared_to_return_its_argument():
    a = np.ones((2, 2))
    assert np.shares_memory(np.linalg.matrix_power(a, 1), a)
    assert rules.fact(np.linalg.matrix_power, "view")


def test_matrix_power_of_one_then_a_write_gives_no_wrong_gradient():
    """b is a, so b[0, 0] is 5.0: f = 5 x00 + x01^2 + x10^2 + x11^2.  The gradient is that, or the read
    of b after the write into a is refused, naming the line (never the old [[5.3, ...]])."""
    x = np.array([[0.3, 0.4], [0.5, 0.6]])
    want = np.array([[5.0, 0.8], [1.0, 1.2]])
    for derivative in (lambda: s2s_ad.grad(matrix_power_one_then_write)(x),
                       lambda: s2s_ad.jvp(matrix_power_one_then_write, (x,), (np.ones((2, 2)),))[1],
                       lambda: s2s_ad.hessian(matrix_power_one_then_write)(x)):
        try:
            got = derivative()
        except s2s_ad.TransformError as exc:
            assert "may be a view of a" in str(exc) and "test_rule_facts_against_numpy.py" in str(exc)
            continue
        if np.ndim(got) == 0:  # jvp along ones
            np.testing.assert_allclose(got, np.sum(want))
        elif np.shape(got) == (2, 2):
            np.testing.assert_allclose(got, want)
        else:  # the hessian: 2 on the diagonal but at x00, which enters linearly
            np.testing.assert_allclose(np.reshape(got, (4, 4)), np.diag([0.0, 2.0, 2.0, 2.0]), atol=1e-12)


def matrix_powers(x):
    a = np.outer(x, np.sin(x))
    return np.linalg.matrix_power(a, 1) + np.linalg.matrix_power(a, 3)


def matrix_powers_jax(x):
    a = jnp.outer(x, jnp.sin(x))
    return jnp.linalg.matrix_power(a, 1) + jnp.linalg.matrix_power(a, 3)


def test_matrix_power_of_one_matches_jax_in_every_mode():
    x = np.array([0.3, -0.7, 0.5])
    scalar = lambda x: np.sum(matrix_powers(x) ** 2)  # noqa: E731
    want = np.asarray(jax.grad(lambda x: jnp.sum(matrix_powers_jax(x) ** 2))(x))
    np.testing.assert_allclose(s2s_ad.grad(matrix_power_summed)(x), want, rtol=1e-10)
    np.testing.assert_allclose(s2s_ad.jacobian(matrix_powers)(x), np.asarray(jax.jacfwd(matrix_powers_jax)(x)),
                               rtol=1e-10, atol=1e-12)
    direction = np.array([1.0, 0.5, -2.0])
    np.testing.assert_allclose(s2s_ad.jvp(matrix_power_summed, (x,), (direction,))[1], want @ direction, rtol=1e-10)
    np.testing.assert_allclose(s2s_ad.hessian(matrix_power_summed)(x),
                               np.asarray(jax.hessian(lambda x: jnp.sum(matrix_powers_jax(x) ** 2))(x)), rtol=1e-9)
    assert np.allclose(scalar(x), float(jnp.sum(matrix_powers_jax(x) ** 2)))


def matrix_power_summed(x):
    return np.sum(matrix_powers(x) ** 2)
