"""Differential fuzzing of time-stepping loops, whose reverse loops keep adjoint vectors as lists.

Each program of recurrence_programs.py is differentiated by both arguments on the Python backend, where
its reverse loop reads and writes the state vectors' adjoints as lists of Python floats
(s2s_ad/passes/scalar_cells.py), and checked:

1. the gradient against central finite differences (conftest's ``numeric_grad``);
2. jvp along a random direction against <direction, gradient>: forward mode computes the same
   derivative with NumPy's scalars throughout, no lists;
3. value_and_grad's value equal to the function's own, exactly.

A program whose value is not finite at its arguments is skipped; the run must have used list adjoints in
most programs (else the pass is not what is tested).  CI runs 60 programs;
``S2S_FUZZ_RECURRENCES=N`` for another count.
"""
from __future__ import annotations

import os
import tempfile
import warnings
from pathlib import Path
from typing import Optional

import numpy as np
import pytest

import s2s_ad
from conftest import module_from_source, numeric_grad
from recurrence_programs import make_program

pytestmark = pytest.mark.slow  # random-program fuzzer: CI runs it (pytest -m "slow or not slow")

_FOLDER = Path(tempfile.mkdtemp(prefix="s2s_ad_fuzz_recurrences_"))
_COUNT = int(os.environ.get("S2S_FUZZ_RECURRENCES", "60"))


def _checked(seed: int) -> Optional[bool]:
    """Check program ``seed``; whether its gradient's code keeps list adjoints (None: its value is not
    finite at its arguments, so it is left out)."""
    f = module_from_source(_FOLDER, "recurrence_", make_program(seed)).f
    rng = np.random.default_rng(seed)
    x, c = rng.uniform(-0.8, 0.8, 7), float(rng.uniform(0.5, 1.5))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        value = f(x, c)
        if not np.isfinite(value):
            return None
        gradient = s2s_ad.grad(f, wrt=(0, 1))
        d_x, d_c = gradient(x, c)
        same_value, _ = s2s_ad.value_and_grad(f, wrt=(0, 1))(x, c)
        direction = rng.normal(size=7), float(rng.normal())
        _, along = s2s_ad.jvp(f, (x, c), direction)
    source = make_program(seed)
    np.testing.assert_allclose(d_x, numeric_grad(f, (x, c), 0), rtol=1e-5, atol=1e-7, err_msg=source)
    assert d_c == pytest.approx(numeric_grad(f, (x, c), 1), rel=1e-5, abs=1e-7), source
    assert along == pytest.approx(np.dot(direction[0], d_x) + direction[1] * d_c, rel=1e-9, abs=1e-12), source
    assert same_value == value, source
    return "cells(" in gradient.source_for(x, c)


def test_recurrences_against_differences_and_forward_mode():
    checked = [_checked(seed) for seed in range(_COUNT)]
    used = [u for u in checked if u is not None]
    assert len(used) >= 0.9 * len(checked), f"{len(checked) - len(used)} of {len(checked)} programs not finite"
    # (most programs' reverse loops keep lists: 151 of 200 in a run of this generator with other seeds)
    assert sum(used) >= len(used) // 2, f"list adjoints in {sum(used)} of {len(used)} programs"
