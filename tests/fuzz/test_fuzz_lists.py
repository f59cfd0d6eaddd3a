"""Differential fuzzing of lists that grow while other names hold them (issue 31, the memory model for
lists): ``list_programs.py`` writes programs that grow lists by ``append`` and ``+= [...]`` and let
other names, tuples, dicts and lists hold them.  Each is checked on both backends:

1. value_and_grad's value equal to Python's own run of the function (where every holder sees the list
   grow), to rounding;
2. the gradient against central finite differences (conftest's ``numeric_grad``);
3. jvp along a random direction against <direction, gradient>.

A refusal (a TransformError naming the file and line) is allowed and counted: it is not a wrong number;
any other exception fails.  CI runs 60 programs; ``S2S_FUZZ_LISTS=N`` for another count,
``S2S_FUZZ_LISTS_START`` for the first seed.
"""
from __future__ import annotations

import os
import tempfile
import warnings
from pathlib import Path

import numpy as np
import pytest

import s2s_ad
from conftest import module_from_source, numeric_grad, optional_import
from list_programs import make_program

pytestmark = pytest.mark.slow  # random-program fuzzer: CI runs it (pytest -m "slow or not slow")

_FOLDER = Path(tempfile.mkdtemp(prefix="s2s_ad_fuzz_lists_"))
_COUNT = int(os.environ.get("S2S_FUZZ_LISTS", "60"))
_START = int(os.environ.get("S2S_FUZZ_LISTS_START", "0"))
numba = optional_import("numba")
BACKENDS = ["python", pytest.param("numba", marks=pytest.mark.skipif(
    numba is None, reason="numba is not installed (pip install 's2s_ad[numba]')"))]


def check_program(seed: int, backend: str = "python", folder: Path = _FOLDER) -> str:
    """Check program ``seed``: ``"ok"`` or ``"refused"``; raises on a wrong number."""
    source = make_program(seed)
    f = module_from_source(folder, "lists_", source).f
    rng = np.random.default_rng(seed)
    x = rng.uniform(0.3, 1.2, 6)
    want = f(x.copy())
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", s2s_ad.CompileFallbackWarning)
        try:
            value, gradient = s2s_ad.value_and_grad(f, backend=backend)(x.copy())
        except s2s_ad.TransformError as refusal:
            assert ".py:" in str(refusal), source
            return "refused"
        direction = rng.normal(size=6)
        _, along = s2s_ad.jvp(f, (x.copy(),), (direction,), backend=backend)
    np.testing.assert_allclose(value, want, rtol=1e-12, atol=1e-12, err_msg=source)
    np.testing.assert_allclose(gradient, numeric_grad(f, (x.copy(),), 0), rtol=1e-5, atol=1e-6, err_msg=source)
    assert along == pytest.approx(float(np.dot(direction, gradient)), rel=1e-8, abs=1e-10), source
    return "ok"


@pytest.mark.parametrize("backend", BACKENDS)
def test_lists_grown_while_others_hold_them(backend):
    count = _COUNT if backend == "python" else max(_COUNT // 4, 1)  # (each compiles: seconds a program)
    outcomes = [check_program(seed, backend) for seed in range(_START, _START + count)]
    # most programs must be differentiated, not refused: else the model is not what is tested (seeds 0 to
    # 999: see docs/reliability.md)
    assert outcomes.count("ok") >= 0.4 * len(outcomes), outcomes
