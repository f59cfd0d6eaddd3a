"""The engine holds no per-operation table (issue 14): every fact about an operation is declared
with its template, and a new operation declared in a new template file works with no engine change.

``tests/corpora/outside_templates/blend_rules.py`` declares the rules and facts (elementwise, cheap,
words) of ``smooth_max``, an operation whose source s2s_ad cannot read.  Dropped into the
templates package it is picked up by the loader itself (in a fresh process, so this one's
registry stays as the other tests expect); loaded with ``rules.load_template_module`` its
gradients, tangents and second derivatives match finite differences (and JAX, where installed).

The last tests read the engine's modules and fail on a module-level dict, set or sequence literal
that holds NumPy's, ``math``'s, ``operator``'s or the runtime's functions, or a membership test
against such a literal (``fn in (max, min)``): a table that belongs in templates/; and on a public
function of ``s2s_ad/core/runtime.py`` that the engine never uses: a helper of one operation, which
belongs beside its rule in templates/ (issue 19).
"""
from __future__ import annotations

import ast
import glob
import importlib
import json
import operator
import os
import subprocess
import sys
import textwrap
import types

import numpy as np
import pytest

import s2s_ad
from conftest import assert_gradient_matches, numeric_grad
from s2s_ad.rules import registry as rules

HERE = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "corpora")  # the shared corpora
OUTSIDE = os.path.join(HERE, "outside_templates")
ROOT = os.path.dirname(os.path.dirname(HERE))
ENGINE = os.path.join(ROOT, "s2s_ad")
sys.path.insert(0, OUTSIDE)

import blend_ops  # noqa: E402  (tests/corpora/outside_templates)
import engine_table_functions as et  # noqa: E402


def _smooth_max(a, b):
    return np.logaddexp(a, b)


# The same functions with smooth_max written out: what finite differences and JAX see.
def _soft_peak(x, y):
    return _smooth_max(x * y, x - 2.0 * y) ** 2


def _soft_relu_loss(w, x):
    hidden = _smooth_max(x @ w, 0.0)
    return np.sum(hidden * hidden) / len(hidden)


def _running_soft_max(x, n):
    best = x
    for i in range(n):
        best = _smooth_max(best, x * np.cos(i + 1.0))
    return best * x


W = np.array([[0.3, -0.8], [1.1, 0.2], [-0.4, 0.9]])
X = np.array([[0.5, -1.0, 0.25], [1.5, 0.3, -0.7], [-0.2, 0.8, 1.1], [0.0, -0.6, 0.4]])


@pytest.fixture(scope="module")
def blend_rules():
    """The outside template file, loaded once for this process (as a library would load it)."""
    return rules.load_template_module(os.path.join(OUTSIDE, "blend_rules.py"))


# -- a new file under templates/ ---------------------------------------------------------------


_IN_A_FRESH_PROCESS = """
import json, shutil, sys
sys.path[:0] = [{outside!r}, {here!r}]
shutil.copy({rules_file!r}, {folder!r} + "/blend.py")
import s2s_ad
from s2s_ad.rules import registry as rules
package = rules._templates_package()
package.__path__.append({folder!r})  # the templates package now has one more file: blend.py
import blend_ops, engine_table_functions as et
rule = rules.adjoint_rule(blend_ops.smooth_max)
second = s2s_ad.grad(s2s_ad.grad(et.soft_peak, wrt=0), wrt=0)(0.3, -0.7)
print(json.dumps({{
    "module": rule.namespace["__name__"],
    "cheap": rules.fact(blend_ops.smooth_max, "cheap"),
    "grad": [float(g) for g in s2s_ad.grad(et.soft_peak, wrt=(0, 1))(0.3, -0.7)],
    "jvp": float(s2s_ad.jvp(et.soft_peak, (0.3, -0.7), (1.0, 0.0))[1]),
    "second": float(second),
}}))
"""


def test_a_new_file_under_templates_is_picked_up_with_no_engine_change(tmp_path) -> None:
    """A fresh process whose templates package holds one more file, blend.py: ``load_templates``
    imports it with the others, and the operation it declares differentiates to first and second
    order, in reverse and forward mode, matching finite differences."""
    script = _IN_A_FRESH_PROCESS.format(outside=OUTSIDE, here=HERE, folder=str(tmp_path),
                                        rules_file=os.path.join(OUTSIDE, "blend_rules.py"))
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=300,
                          cwd=ROOT)
    assert done.returncode == 0, done.stderr
    got = json.loads(done.stdout.strip().splitlines()[-1])
    assert got["module"] == "s2s_ad.templates.blend" and got["cheap"] is True
    args = (0.3, -0.7)
    want = [numeric_grad(_soft_peak, args, i) for i in range(2)]
    np.testing.assert_allclose(got["grad"], want, rtol=1e-6)
    np.testing.assert_allclose(got["jvp"], want[0], rtol=1e-6)
    h = 1e-4
    dx = lambda x: numeric_grad(_soft_peak, (x, -0.7), 0, eps=1e-7)  # noqa: E731
    np.testing.assert_allclose(got["second"], (dx(0.3 + h) - dx(0.3 - h)) / (2 * h), rtol=1e-4)


# -- the same file loaded from outside the package ----------------------------------------------


def test_the_new_operation_is_refused_before_its_rules_are_loaded() -> None:
    if rules.adjoint_rule(blend_ops.smooth_max) is not None:
        pytest.skip("the blend rules are already loaded in this process")
    with pytest.raises(s2s_ad.TransformError, match="no derivative rule"):
        s2s_ad.grad(et.soft_peak)(0.3, -0.7)


def test_its_facts_are_the_template_s(blend_rules) -> None:
    smooth_max = blend_ops.smooth_max
    assert rules.adjoint_rule(smooth_max).namespace is vars(blend_rules)
    assert rules.is_elementwise(smooth_max)
    assert rules.fact(smooth_max, "cheap") is True
    assert rules.fact(smooth_max, "words") == ("smax", "blend")
    # a generated name reads as the template says (its operands are not the user's names: the noun)
    assert "blend = smooth_max(" in s2s_ad.source(et.soft_peak, stage="ssa")


@pytest.mark.parametrize("args", [(0.3, -0.7), (-1.2, 0.4), (2.0, 1.5)])
def test_gradient_and_tangent_of_the_new_operation_match_finite_differences(blend_rules, args) -> None:
    assert_gradient_matches(et.soft_peak, args, wrt=(0, 1))  # also checks jvp against the gradient
    want = [numeric_grad(_soft_peak, args, i) for i in range(2)]
    for i, direction in enumerate([(1.0, 0.0), (0.0, 1.0)]):
        value, tangent = s2s_ad.jvp(et.soft_peak, args, direction)
        np.testing.assert_allclose(value, _soft_peak(*args), rtol=1e-12)
        np.testing.assert_allclose(tangent, want[i], rtol=1e-6)


def test_the_new_operation_broadcast_against_a_number(blend_rules) -> None:
    """elementwise=True: the adjoint for the 0.0 operand is reduced to its shape, w's is W's."""
    assert_gradient_matches(et.soft_relu_loss, (W, X), wrt=(0, 1))
    np.testing.assert_allclose(s2s_ad.grad(et.soft_relu_loss)(W, X), numeric_grad(_soft_relu_loss, (W, X), 0),
                               rtol=1e-6, atol=1e-9)


@pytest.mark.parametrize("n", [0, 1, 4])
def test_the_new_operation_in_a_loop(blend_rules, n) -> None:
    """cheap=True on numbers: recomputed in the reverse sweep where it is not recorded."""
    got = s2s_ad.grad(et.running_soft_max)(0.7, n)
    np.testing.assert_allclose(got, numeric_grad(_running_soft_max, (0.7, n), 0), rtol=1e-6)


def test_second_order_of_the_new_operation(blend_rules) -> None:
    """grad of grad runs forward mode over the generated adjoint: the tangent rule of the template
    and the adjoint rule's own body are both used; the Hessian matches finite differences of the
    gradient."""
    args = (0.3, -0.7)
    first = s2s_ad.grad(et.soft_peak, wrt=(0, 1))
    hessian = s2s_ad.hessian(et.soft_peak, wrt=(0, 1))(*args)
    h = 1e-5
    for j in range(2):
        up, down = list(args), list(args)
        up[j] += h
        down[j] -= h
        column = (np.array(first(*up)) - np.array(first(*down))) / (2 * h)
        np.testing.assert_allclose([hessian[i][j] for i in range(2)], column, rtol=1e-5, atol=1e-8)
    second = s2s_ad.grad(s2s_ad.grad(et.running_soft_max))(0.7, 3)
    d = s2s_ad.grad(et.running_soft_max)
    np.testing.assert_allclose(second, (d(0.7 + h, 3) - d(0.7 - h, 3)) / (2 * h), rtol=1e-5)


@pytest.mark.slow
def test_the_new_operation_agrees_with_jax(blend_rules) -> None:
    jax = pytest.importorskip("jax")
    jax.config.update("jax_enable_x64", True)
    jnp = jax.numpy

    def peak(x, y):
        return jnp.logaddexp(x * y, x - 2.0 * y) ** 2

    def loss(w, x):
        hidden = jnp.logaddexp(x @ w, 0.0)
        return jnp.sum(hidden * hidden) / hidden.shape[0]

    np.testing.assert_allclose(s2s_ad.grad(et.soft_peak, wrt=(0, 1))(0.3, -0.7),
                               jax.grad(peak, argnums=(0, 1))(0.3, -0.7), rtol=1e-10)
    np.testing.assert_allclose(s2s_ad.hessian(et.soft_peak, wrt=(0, 1))(0.3, -0.7),
                               jax.hessian(peak, argnums=(0, 1))(0.3, -0.7), rtol=1e-9)
    for ours, theirs in zip(s2s_ad.grad(et.soft_relu_loss, wrt=(0, 1))(W, X),
                            jax.grad(loss, argnums=(0, 1))(W, X)):
        np.testing.assert_allclose(ours, theirs, rtol=1e-10, atol=1e-12)


# -- no per-operation table in the engine ------------------------------------------------------


def _operation(obj: object) -> bool:
    """A function (or module) an operation table would be keyed on: not a type, not the engine's own
    code (s2s_ad's helpers, the runtime's and the template modules', are operations of generated code,
    and count)."""
    if obj is None or isinstance(obj, type) or getattr(obj, "__module__", None) == "typing":
        return False  # (typing.Any is a callable object, not a class, before Python 3.11)
    if isinstance(obj, types.ModuleType):
        return True
    module = getattr(obj, "__module__", None) or ""
    helper = module == "s2s_ad.core.runtime" or module.startswith("s2s_ad.templates.")
    return callable(obj) and not (module.startswith("s2s_ad.") and not helper)


def _resolved(node: ast.expr, namespace: dict) -> object:
    """What a name or dotted name means in the module's namespace (None if it is neither)."""
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name):
        return None
    value = namespace.get(node.id, getattr(__import__("builtins"), node.id, None))
    for part in reversed(parts):
        value = getattr(value, part, None)
    return value


def _keys(node: ast.AST) -> list:
    if isinstance(node, ast.Dict):
        return [k for k in node.keys if k is not None]
    if isinstance(node, (ast.Set, ast.Tuple, ast.List)):
        return list(node.elts)
    return []


def per_operation_tables(source: str, namespace: dict) -> list[str]:
    """``line: name`` for each function keying a module-level dict, or held in a module-level set,
    frozenset, tuple or list, and for each one a membership test (``fn in (max, min)``) or a loop
    (``any(fn is f for f in (print, warnings.warn))``) lists."""
    tree = ast.parse(source)
    found = []
    literals = [(stmt.lineno, node) for stmt in tree.body if isinstance(stmt, (ast.Assign, ast.AnnAssign))
                and stmt.value is not None for node in ast.walk(stmt.value)]
    literals += [(node.lineno, c) for node in ast.walk(tree) if isinstance(node, ast.Compare)
                 and any(isinstance(op, (ast.In, ast.NotIn)) for op in node.ops) for c in node.comparators]
    literals += [(node.iter.lineno, node.iter) for node in ast.walk(tree)  # any(fn is f for f in (print, ...))
                 if isinstance(node, (ast.comprehension, ast.For))]
    for line, node in literals:
        for key in _keys(node):
            if isinstance(key, (ast.Name, ast.Attribute)) and _operation(_resolved(key, namespace)):
                found.append(f"{line}: {ast.unparse(key)}")
    return found


def _engine_modules() -> list[str]:
    """Every module of the engine's packages (``core.ir``), but the rule registry, which holds the rules."""
    paths = sorted(glob.glob(os.path.join(ENGINE, "*", "*.py")))
    names = [os.path.relpath(p, ENGINE)[:-3].replace(os.sep, ".") for p in paths]
    names = [n[:-len(".__init__")] if n.endswith(".__init__") else n for n in names]
    found = [n for n in names if n not in ("rules.registry", "__main__") and not n.startswith("templates")]
    assert len(found) > 80, found  # (the engine's modules were found: the check below ran on them)
    return found


@pytest.mark.parametrize("name", _engine_modules())
def test_the_engine_holds_no_per_operation_table(name) -> None:
    """A fact about an operation is declared with its template (rules.FACTS), never listed here."""
    module = importlib.import_module(f"s2s_ad.{name}")
    with open(module.__file__, encoding="utf-8") as f:
        found = per_operation_tables(f.read(), vars(module))
    assert not found, (f"s2s_ad/{name.replace('.', '/')}.py lists operations ({', '.join(found)}): declare the fact in "
                       f"templates/ (rules.FACTS) and read it with rules.fact")


@pytest.mark.parametrize("source", [
    "_BINARY = {operator.add: ast.Add, operator.sub: ast.Sub}",
    "_ARITHMETIC: frozenset = frozenset({operator.add, operator.mul})",
    "_FOLDABLE = (math, np)",
    "_REDUCTIONS = [np.sum, np.mean]",
    "_HELPERS = {runtime.unbroadcast}",
    "def f(fn):\n    return fn in (max, min)",
    "def f(fn):\n    return fn not in {np.sin: 1}",
    "def f(fn):\n    return any(fn is f for f in (print, np.sin))",
])
def test_the_check_finds_a_table(source) -> None:
    """The check above can fail: each of these is a per-operation table."""
    from s2s_ad.core import runtime
    namespace = {"operator": operator, "np": np, "math": __import__("math"), "ast": ast, "runtime": runtime}
    assert per_operation_tables(textwrap.dedent(source), namespace)


@pytest.mark.parametrize("source", [
    "_CONSTANT_TYPES = (int, float, np.generic)",  # types, not operations
    "_NAMES = {'add': 1}",
    "def f(node):\n    return type(node) in (ast.Add, ast.Sub)",  # syntax
])
def test_the_check_lets_other_tables_be(source) -> None:
    namespace = {"np": np, "ast": ast}
    assert per_operation_tables(source, namespace) == []


def test_operators_are_written_as_their_templates_declare() -> None:
    """The facts emit and the optimizer read are those of templates/operators.py."""
    assert rules.fact(operator.add, "syntax") is ast.Add and rules.fact(operator.neg, "syntax") is ast.USub
    assert rules.fact(operator.contains, "syntax") is ast.In and rules.fact(operator.getitem, "syntax") is ast.Subscript
    assert rules.fact(operator.mul, "identity") == (1, (0, 1)) and rules.fact(operator.add, "opposite") is operator.sub
    assert rules.fact(np.add, "syntax") is None  # np.add(a, b) stays a call
    assert [prefix for prefix, *_ in rules.module_spellings()][:3] == ["np", "np.linalg", "math"]


def test_a_function_that_joins_sequences_declares_how_they_are_differentiated() -> None:
    """joins_sequences without sequence_helpers would leave reverse and forward mode without the
    helpers that split a joined list's adjoint: refused where it is declared."""
    def joins(a, b):
        return a + b

    with pytest.raises(TypeError, match="sequence_helpers"):
        rules.declare(joins, joins_sequences=True)
    assert rules.fact(joins, "joins_sequences") is None  # nothing was declared
    assert rules.fact(operator.add, "sequence_helpers")[0].__name__ == "add_adjoint"


# -- the runtime holds only what the engine writes ---------------------------------------------


def _runtime_names_engine_uses(engine_sources: list[str]) -> set[str]:
    """The names the engine's modules take from the runtime: ``runtime.<name>``, ``from .runtime import``."""
    used = set()
    for source in engine_sources:
        for node in ast.walk(ast.parse(source)):
            if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "runtime":
                used.add(node.attr)
            elif isinstance(node, ast.ImportFrom) and (node.module or "").rpartition(".")[2] == "runtime":
                used.update(alias.name for alias in node.names)
    return used


def template_only_helpers(runtime_source: str, engine_sources: list[str]) -> list[str]:
    """The public names ``runtime_source`` defines that the engine uses neither itself nor through
    a helper of the runtime it uses (names read in docstrings and comments do not count)."""
    definitions: dict[str, ast.stmt] = {}
    for stmt in ast.parse(runtime_source).body:
        if isinstance(stmt, (ast.FunctionDef, ast.ClassDef)):
            definitions[stmt.name] = stmt
        elif isinstance(stmt, (ast.Assign, ast.AnnAssign)):
            for target in stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]:
                if isinstance(target, ast.Name):
                    definitions[target.id] = stmt
    reached, stack = set(), [n for n in _runtime_names_engine_uses(engine_sources) if n in definitions]
    while stack:
        name = stack.pop()
        if name not in reached:
            reached.add(name)
            stack += [n.id for n in ast.walk(definitions[name]) if isinstance(n, ast.Name) and n.id in definitions]
    return sorted(n for n in definitions if not n.startswith("_") and n not in reached)


def _engine_sources() -> list[str]:
    # every module of the engine's packages, sub-packages' too (targets/array_api/runtime.py), but the runtime itself
    paths = [p for p in sorted(glob.glob(os.path.join(ENGINE, "*", "**", "*.py"), recursive=True))
             if p != os.path.join(ENGINE, "core", "runtime.py")]
    sources = []
    for path in paths:
        with open(path, encoding="utf-8") as f:
            sources.append(f.read())
    return sources


def test_the_runtime_holds_only_what_the_engine_writes() -> None:
    """Adding an operation touches templates/ only: a helper that only rules call is defined beside
    them (templates/numpy_linalg.py's matmul_grad_a), not in s2s_ad/core/runtime.py."""
    with open(os.path.join(ENGINE, "core", "runtime.py"), encoding="utf-8") as f:
        stray = template_only_helpers(f.read(), _engine_sources())
    assert not stray, (f"s2s_ad/core/runtime.py defines {', '.join(stray)}, which the engine never uses: move each "
                       f"beside the rules that call it, in templates/")


def test_the_runtime_check_finds_a_helper_only_rules_call() -> None:
    """The check above can fail: a helper the engine names only in a docstring is the rules' own, one it
    reaches through a helper it writes is its own."""
    runtime = textwrap.dedent("""
        def unbroadcast(grad, like):
            return _summed(grad, like)
        def _summed(grad, like):
            return shape_of(like)
        def shape_of(x):
            return x.shape
        def cumsum_grad(grad, a):
            return grad
        LIMIT = 3
    """)
    engine = ['"""Calls runtime.cumsum_grad where the rule says so."""\n'
              'from . import runtime\nCALL = runtime.unbroadcast\nfrom .runtime import LIMIT\n']
    assert template_only_helpers(runtime, engine) == ["cumsum_grad"]
