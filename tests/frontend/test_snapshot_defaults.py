"""A helper's defaults are part of what a cached gradient was made with (issue #18, smaller items).

A call ``helper(x)`` that leaves ``c`` to its default is generated with the default's value as a
constant; ``helper.__defaults__ = (5.0,)`` (or a changed ``__kwdefaults__``) later must build the
gradient again, as a rebound global does (``parse.Snapshot``), not keep the old default.

Oracle: the closed forms d/dx (c x^2) = 2 c x and d/dx (c sin x) = c cos x.
"""
from __future__ import annotations

import importlib.util
import math
import sys

import numpy as np
import pytest

import s2s_ad

SOURCE = '''
import numpy as np


def helper(x, c=2.0):
    return c * x * x


def keyword_helper(x, *, c=2.0):
    return c * np.sin(x)


def calls_helper(x):
    return helper(x) + 1.0


def calls_keyword_helper(x):
    return keyword_helper(x)


def calls_both(x):
    return helper(x) + keyword_helper(x)
'''


@pytest.fixture
def module(tmp_path, request):
    """A fresh module per test: changing its helpers' defaults touches no other test."""
    name = f"snapshot_defaults_{request.node.name.replace('[', '_').replace(']', '_')}"
    path = tmp_path / f"{name}.py"
    path.write_text(SOURCE)
    spec = importlib.util.spec_from_file_location(name, path)
    loaded = importlib.util.module_from_spec(spec)
    sys.modules[name] = loaded
    spec.loader.exec_module(loaded)
    yield loaded
    del sys.modules[name]


X = 1.5


def test_a_helpers_changed_default_argument_is_used_by_the_cached_gradient(module):
    gradient = s2s_ad.grad(module.calls_helper)
    assert gradient(X) == pytest.approx(2 * 2.0 * X)
    module.helper.__defaults__ = (5.0,)
    assert gradient(X) == pytest.approx(2 * 5.0 * X)
    assert s2s_ad.grad(module.calls_helper)(X) == pytest.approx(2 * 5.0 * X)
    module.helper.__defaults__ = (2.0,)  # an identical constant again: right, whether rebuilt or not
    assert gradient(X) == pytest.approx(2 * 2.0 * X)


def test_a_helpers_changed_keyword_only_default_is_used(module):
    gradient = s2s_ad.grad(module.calls_keyword_helper)
    assert gradient(X) == pytest.approx(2.0 * math.cos(X))
    module.keyword_helper.__kwdefaults__ = {"c": 5.0}
    assert gradient(X) == pytest.approx(5.0 * math.cos(X))
    module.keyword_helper.__kwdefaults__["c"] = 7.0  # changed in place, the same dict
    assert gradient(X) == pytest.approx(7.0 * math.cos(X))


def test_changed_defaults_reach_value_and_grad_vjp_jvp_and_hessian(module):
    value_and_grad = s2s_ad.value_and_grad(module.calls_both)
    hessian = s2s_ad.hessian(module.calls_both)
    value_and_grad(X), hessian(X), s2s_ad.vjp(module.calls_both, X), s2s_ad.jvp(module.calls_both, (X,), (1.0,))
    module.helper.__defaults__ = (5.0,)
    module.keyword_helper.__kwdefaults__ = {"c": 3.0}
    value, gradient = value_and_grad(X)
    assert value == pytest.approx(5.0 * X * X + 3.0 * math.sin(X))
    assert gradient == pytest.approx(10.0 * X + 3.0 * math.cos(X))
    assert s2s_ad.vjp(module.calls_both, X)[1](1.0)[0] == pytest.approx(10.0 * X + 3.0 * math.cos(X))
    assert s2s_ad.jvp(module.calls_both, (X,), (1.0,))[1] == pytest.approx(10.0 * X + 3.0 * math.cos(X))
    assert float(np.squeeze(hessian(X))) == pytest.approx(10.0 - 3.0 * math.sin(X))
