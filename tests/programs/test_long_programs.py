"""Issue 22, long programs: "a chain of 80 helpers each calling the next, and an if/elif chain of
160 branches, raise RecursionError (Python runs both fine)".  Both, and deeper ones (300 helpers,
500 elifs), in grad, value_and_grad, vjp, jvp and hessian, against JAX (the same program with
jax.numpy) and central differences."""
from __future__ import annotations

import sys

import numpy as np
import pytest

import s2s_ad
from conftest import module_from_source, numeric_grad

jax = pytest.importorskip("jax")
jax.config.update("jax_enable_x64", True)


def helper_chain_source(n: int, numpy: str = "numpy") -> str:
    """``f(x) = sum(h0(x) ** 2)`` where each helper calls the next: a chain ``n`` helpers deep."""
    lines = [f"import {numpy} as np", ""]
    for i in range(n - 1):
        lines += [f"def h{i}(x):", f"    return h{i + 1}(x) * 0.99 + 0.01 * np.sin(x)", ""]
    lines += [f"def h{n - 1}(x):", "    return np.tanh(x)", "", "def f(x):", "    return np.sum(h0(x) ** 2)", ""]
    return "\n".join(lines)


def elif_chain_source(n: int, numpy: str = "numpy", otherwise: bool = True) -> str:
    """``f(x, k)``: an if/elif chain of ``n`` tests on ``k``, each branch its own arithmetic on ``x``."""
    lines = [f"import {numpy} as np", "", "def f(x, k):", "    y = x"]
    for i in range(n):
        lines += [f"    {'if' if i == 0 else 'elif'} k == {i}:", f"        y = x * {i + 1}.0 + np.sin(x * {i % 7})"]
    if otherwise:
        lines += ["    else:", "        y = x * x"]
    lines += ["    return np.sum(y ** 2)", ""]
    return "\n".join(lines)


def programs(tmp_path, source_of, n: int, **options):
    """The program with NumPy (for s2s_ad) and with jax.numpy (the oracle)."""
    mine = module_from_source(tmp_path, "long_", source_of(n, **options))
    oracle = module_from_source(tmp_path, "long_jax_", source_of(n, "jax.numpy", **options))
    return mine.f, oracle.f


X = np.array([0.3, -0.7, 1.1])
V = np.array([0.5, 1.0, -2.0])


def assert_every_mode_agrees(f, f_jax, args: tuple, hessian: bool = True) -> None:
    """grad, value_and_grad, vjp, jvp (and hessian) of ``f`` at ``args`` against JAX and differences."""
    want = np.asarray(jax.grad(f_jax)(*args))
    np.testing.assert_allclose(s2s_ad.grad(f)(*args), want, rtol=1e-10)
    np.testing.assert_allclose(numeric_grad(f, args, 0), want, rtol=1e-5, atol=1e-7)
    value, gradient = s2s_ad.value_and_grad(f)(*args)
    np.testing.assert_allclose(value, f(*args), rtol=1e-12)
    np.testing.assert_allclose(gradient, want, rtol=1e-10)
    out, pullback = s2s_ad.vjp(f, *args)
    np.testing.assert_allclose(pullback(2.0)[0], 2.0 * want, rtol=1e-10)
    _, tangent = s2s_ad.jvp(f, args, (V,) + (None,) * (len(args) - 1))
    np.testing.assert_allclose(tangent, want @ V, rtol=1e-10)
    if hessian:
        np.testing.assert_allclose(s2s_ad.hessian(f)(*args), np.asarray(jax.hessian(f_jax)(*args)), rtol=1e-9,
                                   atol=1e-12)


def test_a_chain_of_80_helpers_each_calling_the_next_is_differentiated_in_every_mode(tmp_path):
    f, f_jax = programs(tmp_path, helper_chain_source, 80)
    assert_every_mode_agrees(f, f_jax, (X,))


def test_a_chain_of_300_helpers_is_differentiated_in_every_mode_without_raising_the_recursion_limit(tmp_path):
    f, f_jax = programs(tmp_path, helper_chain_source, 300)
    limit = sys.getrecursionlimit()
    assert_every_mode_agrees(f, f_jax, (X,))
    assert sys.getrecursionlimit() == limit


@pytest.mark.parametrize("k", [0, 1, 77, 158, 159, 160, 400])
def test_an_if_elif_chain_of_160_branches_takes_the_branch_python_takes(tmp_path, k):
    f, f_jax = programs(tmp_path, elif_chain_source, 160)
    assert_every_mode_agrees(f, f_jax, (X, k), hessian=k in (0, 158, 160))


@pytest.mark.parametrize("k", [0, 250, 499, 500])
def test_an_if_elif_chain_of_500_branches_is_differentiated(tmp_path, k):
    f, f_jax = programs(tmp_path, elif_chain_source, 500)
    assert_every_mode_agrees(f, f_jax, (X, k), hessian=False)  # hessian: the chain of 160


@pytest.mark.parametrize("k", [3, 39, 40, 41])
def test_a_long_chain_without_else_runs_no_branch_when_no_test_is_true(tmp_path, k):
    f, f_jax = programs(tmp_path, elif_chain_source, 40, otherwise=False)
    assert_every_mode_agrees(f, f_jax, (X, k), hessian=False)


def test_a_long_chain_tests_each_condition_only_while_the_ones_before_it_are_false(tmp_path):
    """A later test may only be valid once the earlier ones failed: ``x[i]`` with ``i >= 3`` would raise."""
    lines = ["import numpy as np", "", "def f(x, i):", "    y = x[0]", "    if i >= 3:", "        y = x[0] * 2.0"]
    for j in range(1, 30):
        lines += [f"    elif x[i] > {j - 15}.0 / 10.0:", f"        y = x[{j % 3}] * {j + 1}.0"]
    lines += ["    return y * y", ""]
    f = module_from_source(tmp_path, "long_guard_", "\n".join(lines)).f
    for i in (0, 1, 2, 5):
        np.testing.assert_allclose(s2s_ad.grad(f)(X, i), numeric_grad(f, (X, i), 0), rtol=1e-6)


def test_the_generated_code_of_a_long_chain_names_the_users_lines(tmp_path):
    f, _ = programs(tmp_path, elif_chain_source, 40)
    text = s2s_ad.grad(f).source_for(X, 17)
    branch_line = 5 + 2 * 17 + 1  # "y = x * 18.0 ..." in the file
    assert f"# line {branch_line}" in text
    assert max(len(line) - len(line.lstrip()) for line in text.splitlines()) < 4 * 16
