"""Generated names never collide with the user's, and odd callables work or fail clearly."""
import numpy as np
import pytest

import s2s_ad
from conftest import assert_gradient_matches, numeric_grad
import hygiene_functions as hf


@pytest.mark.parametrize("f, args", [
    (hf.names_like_ours, (0.3, 0.7, -0.4, 1.1)),
    (hf.local_named_np, (0.6,)),
    (hf.shadows_builtins, (0.6, 1.5, -0.5, 2.0)),
    (hf.uses_underscore_names, (0.6, 1.5, -0.5)),
])
def test_names_like_generated_ones(f, args):
    positions = tuple(range(len(args)))
    assert_gradient_matches(f, args, positions)  # reverse, and forward against reverse
    first = s2s_ad.grad(f)
    assert s2s_ad.grad(first)(*args) == pytest.approx(numeric_grad(first, args, 0, eps=1e-5), rel=1e-5, abs=1e-8)


def test_a_bound_method_reads_its_attributes():  # d/dx 2 x^2 = 4 x (more in test_containers.py)
    assert s2s_ad.grad(hf.Model(2.0).loss)(1.5) == pytest.approx(6.0)


def test_a_partial_fixes_its_arguments():  # d/dx 0.5 x^2 = x
    assert s2s_ad.grad(hf.half_scaled)(1.5) == pytest.approx(1.5)


def test_a_builtin_is_refused_clearly():
    with pytest.raises(s2s_ad.TransformError, match=r"wrap it in one, def f\(x\): return np.sin\(x\), and differentiate f"):
        s2s_ad.grad(np.sin)(1.0)


def test_a_lambda_is_differentiated():
    square = lambda x: x * x  # noqa: E731
    assert s2s_ad.grad(square)(1.5) == 3.0


@pytest.mark.slow
def test_a_long_function_and_a_long_loop(tmp_path, monkeypatch):
    # scale: long straight-line code, and a million iterations on the tape, meet no recursion limit
    lines = ["import math", "", "", "def long_chain(x, y):", "    a0 = x"]
    lines += [f"    a{i} = math.sin(a{i - 1}) * 0.5 + y * {0.001 * (i % 7)}" for i in range(1, 2000)]
    lines.append("    return a1999")
    (tmp_path / "long_chain.py").write_text("\n".join(lines) + "\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    from long_chain import long_chain
    got = s2s_ad.grad(long_chain, wrt=(0, 1))(0.3, 0.2)
    want = (numeric_grad(long_chain, (0.3, 0.2), 0), numeric_grad(long_chain, (0.3, 0.2), 1))
    assert got == pytest.approx(want, rel=1e-6, abs=1e-9)
    got = s2s_ad.grad(hf.long_loop)(0.5, 1_000_000)
    assert got == pytest.approx(numeric_grad(hf.long_loop, (0.5, 1_000_000), 0), rel=1e-6)
