"""Rules and facts live in template modules, and a module outside s2s_ad is honoured
like s2s_ad/templates with no change to the engine (issue 14).

``tests/corpora/outside_templates/signal_rules.py`` declares rules (and facts: ``view``,
``cheap``) for two operations whose source s2s_ad cannot read; before it is
loaded a function calling them is refused, after ``load_template_module`` its
gradients match finite differences and the view is treated as a view.
"""
from __future__ import annotations

import os
import pkgutil
import sys

import numpy as np
import pytest

import s2s_ad
from conftest import assert_gradient_matches, numeric_grad
from s2s_ad.rules import registry as rules

HERE = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "corpora")  # the shared corpora
ROOT = os.path.dirname(os.path.dirname(HERE))
OUTSIDE = os.path.join(HERE, "outside_templates")
sys.path.insert(0, OUTSIDE)

import signal_ops  # noqa: E402  (tests/corpora/outside_templates)
import template_module_functions as tm  # noqa: E402


@pytest.fixture(scope="module")
def signal_rules():
    """Load the outside template module once (the registry keeps it for the process, as a library would)."""
    return rules.load_template_module(os.path.join(OUTSIDE, "signal_rules.py"))


def test_every_module_under_templates_is_loaded() -> None:
    """A new file under templates/ is picked up by the loader itself: it imports every module it finds."""
    rules.load_templates()
    rules.load_deferred()
    package = sys.modules["s2s_ad.templates"]
    found = {info.name for info in pkgutil.iter_modules(package.__path__)}
    assert found and all(f"s2s_ad.templates.{name}" in sys.modules for name in found)
    builtin = [rule.namespace.get("__name__", "") for rule in rules.all_adjoint_rules()]
    with_rules = {name.rpartition(".")[2] for name in builtin if name.startswith("s2s_ad.templates.")}
    # SciPy's rules register only once the user imports the module they are for (rules.when_imported)
    deferred = {"scipy_special": "scipy.special", "scipy_signal": "scipy.signal", "scipy_stats": "scipy.stats",
                "scipy_linalg": "scipy.linalg", "scipy_integrate": "scipy.integrate"}
    assert with_rules == found - {name for name, module in deferred.items() if module not in sys.modules}


def test_calls_are_refused_before_the_rules_are_loaded() -> None:
    if rules.adjoint_rule(signal_ops.softplus) is not None:
        pytest.skip("the outside rules are already loaded in this process")
    with pytest.raises(s2s_ad.TransformError, match="no derivative rule"):
        s2s_ad.grad(tm.smooth_energy)(np.array([0.1, 0.5]))


def test_loaded_rules_and_facts_are_in_the_registry(signal_rules) -> None:
    assert rules.adjoint_rule(signal_ops.softplus).namespace is vars(signal_rules)
    assert rules.tangent_rule(signal_ops.softplus) is not None
    assert rules.is_elementwise(signal_ops.softplus)
    assert rules.fact(signal_ops.softplus, "cheap") is True
    assert rules.fact(signal_ops.reversed_rows, "view") is True
    assert rules.fact(signal_ops.softplus, "view") is None
    assert rules.load_template_module(os.path.join(OUTSIDE, "signal_rules.py")) is signal_rules  # once


@pytest.mark.parametrize("x", [np.array([0.1, -0.5, 1.2]), np.array([[0.3, -1.0], [0.2, 0.7]]), 0.4])
def test_gradient_of_an_outside_rule_matches_finite_differences(signal_rules, x) -> None:
    assert_gradient_matches(tm.smooth_energy, (x,))
    want = numeric_grad(tm.smooth_energy, (x,), 0)
    _, directional = s2s_ad.jvp(tm.smooth_energy, (x,), (np.ones_like(x),))
    np.testing.assert_allclose(directional, np.sum(want), rtol=1e-6)


def test_an_outside_rule_in_a_loop_and_to_second_order(signal_rules) -> None:
    assert_gradient_matches(tm.smooth_steps, (0.3, 4))
    second = s2s_ad.grad(s2s_ad.grad(tm.smooth_steps))(0.3, 4)
    h = 1e-4
    first = s2s_ad.grad(tm.smooth_steps)
    np.testing.assert_allclose(second, (first(0.3 + h, 4) - first(0.3 - h, 4)) / (2 * h), rtol=1e-6)


def test_a_declared_view_is_a_view(signal_rules) -> None:
    """reversed_rows is declared view=True: its gradient is right, and read after a write into its
    array it shows the write, as NumPy's view does (read by its positions in the array, issue 31)."""
    assert_gradient_matches(tm.reversed_weights, (np.array([0.1, 0.5, 2.0]),))
    assert_gradient_matches(tm.write_then_read_view, (0.7,))


def test_outside_rules_pass_the_registry_check(signal_rules, tmp_path) -> None:
    """The check every built-in rule gets (test_rules.py) applies to the outside rules unchanged."""
    import test_rules
    outside = [r for r in rules.all_adjoint_rules() if r.namespace is vars(signal_rules)]
    assert {r.name for r in outside} == {"softplus_rule", "reversed_rows_rule"}
    for rule in outside:
        for example in rule.examples:
            test_rules.test_rule_matches_finite_differences(rule, example, tmp_path)


def test_the_docs_list_the_rules_of_the_registry() -> None:
    """The rule table of docs/rules.md is what ``python -m s2s_ad.api.rule_table --markdown`` prints (a
    fresh process: only the built-in templates), and it covers at least 200 functions."""
    pytest.importorskip("scipy.special")  # the docs' table is made where SciPy is installed
    import subprocess

    printed = subprocess.run([sys.executable, "-m", "s2s_ad.api.rule_table", "--markdown"], capture_output=True,
                             text=True, check=True, cwd=ROOT).stdout
    with open(os.path.join(ROOT, "docs", "rules.md"), encoding="utf-8") as f:
        page = f.read()
    shown = page.split("<!-- rule table: begin -->\n")[1].split("<!-- rule table: end -->")[0]
    assert shown == printed, "docs/rules.md's rule table is out of date: python -m s2s_ad.api.rule_table --markdown"
    assert int(printed.split()[0]) >= 200
    assert "`np.linalg.solve`" in printed and "`np.sign`‡" in printed and "`scipy.special.logsumexp`" in printed


def test_the_rule_table_names_functions_as_users_write_them() -> None:
    from s2s_ad.api.rule_table import rule_table

    table = rule_table()
    assert "`operator.add`" in table and "`math.lgamma`" in table and "`np.einsum`" in table
    assert "unbroadcast" not in table  # s2s_ad's own helpers are not listed


def test_a_rank_variant_replaces_the_helpers_where_ranks_are_known() -> None:
    """np.matmul declares a variant for two matrices (d_out @ b.T) and the rank of its result:
    specialised for matrices the code calls no matmul helper, and every variant agrees with the
    general rule and with finite differences."""
    rng = np.random.default_rng(4)
    w1, w2, x = rng.normal(size=(3, 4)), rng.normal(size=(4, 2)), rng.normal(size=(5, 3))
    source = s2s_ad.source(tm.two_layers, wrt=(0, 1), args=(w1, w2, x))
    assert "matmul_grad" not in source and "np.transpose(w2)" in source
    assert_gradient_matches(tm.two_layers, (w1, w2, x), wrt=(0, 1))
    assert "matmul_grad_a" in s2s_ad.source(tm.two_layers, wrt=(0, 1))  # ranks unknown: the general rule
    for shapes in (((2, 3), (3, 4), (4, 2)), ((2, 2, 3), (3, 4), (4,)), ((2, 3, 4), (4, 4), (2, 4, 3))):
        args = tuple(rng.normal(size=s) for s in shapes)
        assert_gradient_matches(tm.product_of_products, args, wrt=(0, 1, 2))


def test_a_variant_follows_its_general_rule(tmp_path) -> None:
    path = tmp_path / "lonely_variant.py"
    path.write_text("from s2s_ad.rules.registry import adjoint\n\n\ndef ruleless(x):\n    return x\n\n\n"
                    "@adjoint(ruleless, ranks={'x': 2})\n"
                    "def ruleless_matrix(out, x, d_out):\n    d_x = d_out\n")
    with pytest.raises(s2s_ad.TransformError, match="follows the general rule"):
        rules.load_template_module(str(path))
