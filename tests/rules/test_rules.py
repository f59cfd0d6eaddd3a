"""Every registered adjoint rule, checked against central finite differences.

The test walks the rule registry: a new template is tested with no new test
code.  Elementwise rules get synthesised calls (numbers, vectors, and
broadcasting pairs where the function takes arrays); every other rule must
declare ``examples`` (see ``s2s_ad.rules.registry.Rule``).  Each call is wrapped in a
probe function written to a real file (so its source can be read), reduced
to a scalar with fixed random weights, and differentiated both by the code
specialised for the arguments and by the generic code.
"""
from __future__ import annotations

import importlib.util
import itertools
import operator
import sys
import types
from typing import Any

import astor
import gast
import numpy as np
import pytest

from conftest import numeric_grad
import s2s_ad
from s2s_ad import grad
from s2s_ad.core import ir
from s2s_ad.rules import registry as rules
from s2s_ad.targets.emit import Namespace, _Builder
from s2s_ad.driver.pipeline import build_reverse
from s2s_ad.rules.rule_facts import examples_of

_probe_counter = itertools.count()


def _builtin(rule: rules.Rule) -> bool:
    """A rule of s2s_ad's own templates (users' rules are theirs to check, with check_grad)."""
    return rule.namespace.get("__name__", "").startswith("s2s_ad.templates")


def _cases() -> list:
    cases = []
    for rule in filter(_builtin, rules.all_adjoint_rules()):
        examples = examples_of(rule, rule.examples)  # (an elementwise rule without examples: synthesised calls)
        label = f"{getattr(rule.fn, '__module__', '') or ''}.{rule.name}".lstrip(".")
        if not examples:
            cases.append(pytest.param(rule, None, id=f"{label}-no-examples"))
        for i, example in enumerate(examples):
            cases.append(pytest.param(rule, example, id=f"{label}-{i}"))
    return cases


def _as_ir(value: Any) -> ir.Expr:
    if isinstance(value, slice):
        return ir.Slice(*(None if p is None else ir.Const(p) for p in (value.start, value.stop, value.step)))
    if isinstance(value, tuple):
        return ir.Display("tuple", tuple(_as_ir(v) for v in value))
    if isinstance(value, list):
        return ir.Display("list", tuple(_as_ir(v) for v in value))
    return ir.Const(value)


def _is_shape(value: Any) -> bool:
    return isinstance(value, tuple) and all(isinstance(n, int) for n in value)


def _sample(shape: tuple, rng: np.random.Generator, domain: tuple) -> Any:
    low, high = domain
    if shape == ():
        return float(rng.uniform(low, high))
    return rng.uniform(low, high, size=shape)


class Probe:
    """A file-backed function ``probe(p0, p1, ...)`` = weighted sum of one call of the rule's function."""

    def __init__(self, rule: rules.Rule, example: dict, tmp_path: Any) -> None:
        rng = np.random.default_rng(0)
        self.params: list[str] = []
        self.args: list[Any] = []
        differentiable = set(rule.differentiable_inputs())
        bound: dict[str, ir.Expr] = {}
        for name, value in example.items():
            if name in differentiable and isinstance(value, list) and all(_is_shape(v) for v in value):
                items = []
                for shape in value:
                    items.append(ir.Var(self._param(_sample(shape, rng, rule.domain))))
                bound[name] = ir.Display("list", tuple(items))
            elif name in differentiable and _is_shape(value):
                bound[name] = ir.Var(self._param(_sample(value, rng, rule.domain)))
            elif name in differentiable and isinstance(value, np.ndarray) and value.dtype.kind == "f":
                bound[name] = ir.Var(self._param(value.copy()))  # a point given (a matrix that must be SPD)
            else:
                bound[name] = _as_ir(value)
        positional, keywords = [], []
        for name in rule.inputs:
            if name not in bound:
                continue
            if len(positional) == rule.inputs.index(name) and name in rule.inputs[:rule.positional]:
                positional.append(bound[name])
            else:
                keywords.append((name, bound[name]))
        call = ir.Call(rule.fn, tuple(positional), tuple(keywords))
        namespace = Namespace(avoid=set(self.params))
        call_source = astor.to_source(gast.gast_to_ast(gast.Expr(value=_Builder(namespace).expr(call)))).strip()
        self.module = self._write(call_source, namespace, tmp_path)
        result = self.module.call(*self.args)
        if isinstance(result, (tuple, list)):  # (w, v) of eigh, the pieces of np.split: each item weighted
            self.module = self._write(call_source, namespace, tmp_path, items=len(result))
            for i, item in enumerate(result):
                setattr(self.module, f"WEIGHTS{i}", rng.uniform(0.5, 1.5, size=np.shape(item)))
            self.probe = self.module.probe_items
        else:
            self.module.WEIGHTS = rng.uniform(0.5, 1.5, size=np.shape(result)) if np.ndim(result) else 1.25
            # A scalar result needs no reduction (and so no np.sum rule).
            self.probe = self.module.probe_array if np.ndim(result) else self.module.probe_scalar
        self.call_source = call_source

    def _param(self, value: Any) -> str:
        name = f"p{len(self.params)}"
        self.params.append(name)
        self.args.append(value)
        return name

    def _write(self, call_source: str, namespace: Namespace, tmp_path: Any, items: int = 0) -> types.ModuleType:
        params = ", ".join(self.params)
        weighted = " + ".join(f"np.sum(result[{i}] * WEIGHTS{i})" for i in range(items)) or "0.0"
        text = (
            "import math\nimport numpy as np\n\n\n"
            f"def call({params}):\n    return {call_source}\n\n\n"
            f"def probe_scalar({params}):\n    return {call_source} * WEIGHTS\n\n\n"
            f"def probe_array({params}):\n    return np.sum({call_source} * WEIGHTS)\n\n\n"
            f"def probe_items({params}):\n    result = {call_source}\n    return {weighted}\n"
        )
        name = f"_rule_probe_{next(_probe_counter)}"
        path = tmp_path / f"{name}.py"
        path.write_text(text)
        spec = importlib.util.spec_from_file_location(name, path)
        module = importlib.util.module_from_spec(spec)
        module.__dict__.update(namespace.globals)
        sys.modules[name] = module
        spec.loader.exec_module(module)
        module.__dict__.update({k: v for k, v in namespace.globals.items() if k not in ("np", "math")})
        return module


@pytest.mark.parametrize("rule, example", _cases())
def test_rule_matches_finite_differences(rule: rules.Rule, example: dict, tmp_path: Any) -> None:
    if example is None:
        pytest.fail(f"the rule {rule.name!r} ({rule.filename}:{rule.line}) is not elementwise and declares "
                    f"no examples, so nothing checks it")
    probe = Probe(rule, example, tmp_path)
    wrt = tuple(range(len(probe.params)))
    expected = [numeric_grad(probe.probe, probe.args, i) for i in wrt]
    specialised = grad(probe.probe, wrt=wrt)(*probe.args)
    generic = build_reverse(probe.probe, tuple(probe.params), (None,) * len(probe.params)).function(*probe.args)[1]
    generic = generic if isinstance(generic, tuple) else (generic,)
    for i, (want, got, got_generic) in enumerate(zip(expected, specialised, generic)):
        where = f"{probe.call_source}, d/d{probe.params[i]}"
        assert np.shape(got) == np.shape(probe.args[i]), where
        assert np.shape(got_generic) == np.shape(probe.args[i]), where
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6, err_msg=where)
        np.testing.assert_allclose(got_generic, want, rtol=1e-5, atol=1e-6, err_msg=where + " (generic code)")
    # Forward mode: the rule's tangent (declared, or derived from the adjoint) along a random direction.
    rng = np.random.default_rng(1)
    tangents = tuple(rng.normal(size=np.shape(a)) if np.ndim(a) else float(rng.normal()) for a in probe.args)
    _, directional = s2s_ad.jvp(probe.probe, tuple(probe.args), tangents)
    want = sum(float(np.sum(e * t)) for e, t in zip(expected, tangents))
    np.testing.assert_allclose(directional, want, rtol=1e-5, atol=1e-6, err_msg=f"{probe.call_source} (forward mode)")


def test_registry_has_the_operators() -> None:
    for fn in (operator.add, operator.sub, operator.mul, operator.truediv, operator.pow, operator.neg):
        assert rules.adjoint_rule(fn) is not None, fn


def _tangent_only_cases() -> list:
    cases = []
    for rule in filter(_builtin, rules.tangent_only_rules()):
        label = f"{getattr(rule.fn, '__module__', '') or ''}.{rule.name}".lstrip(".")
        if not rule.examples:
            cases.append(pytest.param(rule, None, id=f"{label}-no-examples"))
        for i, example in enumerate(rule.examples):
            cases.append(pytest.param(rule, example, id=f"{label}-{i}"))
    return cases


@pytest.mark.parametrize("rule, example", _tangent_only_cases())
def test_tangent_only_rule_matches_finite_differences(rule: rules.Rule, example: dict, tmp_path: Any) -> None:
    if example is None:
        pytest.fail(f"the tangent rule {rule.name!r} ({rule.filename}:{rule.line}) declares no examples")
    probe = Probe(rule, example, tmp_path)
    rng = np.random.default_rng(2)
    tangents = tuple(rng.normal(size=np.shape(a)) if np.ndim(a) else float(rng.normal()) for a in probe.args)
    _, directional = s2s_ad.jvp(probe.probe, tuple(probe.args), tangents)
    want = sum(float(np.sum(numeric_grad(probe.probe, probe.args, i) * t)) for i, t in enumerate(tangents))
    np.testing.assert_allclose(directional, want, rtol=1e-5, atol=1e-6, err_msg=probe.call_source)
    with pytest.raises(s2s_ad.TransformError, match="tangent rule only"):
        grad(probe.probe)(*probe.args)
