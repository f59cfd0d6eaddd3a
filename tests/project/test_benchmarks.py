"""The benchmark harness (``benchmarks/``): its references are right, and its machinery reports
what it measured or why it could not.

The hand-written gradients are the yardstick of every ratio the README shows, so each is
checked here against central finite differences (with s2s_ad's gradient beside it), and each
numba-compatible twin (``numba_twins.py``) against its NumPy hand gradient, run as plain Python
(and compiled, where Numba is installed).  No test here asserts a wall-clock time: the timings
are only checked to exist.
"""
import json
import os
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # the repository's top: benchmarks/

from benchmarks import compiled, first_calls, outside, report_first_calls  # noqa: E402
from benchmarks.cases import CASES, select  # noqa: E402
from benchmarks.check import TOLERANCE, check_case, max_abs_difference  # noqa: E402
from benchmarks.command_line import main  # noqa: E402
from benchmarks.measure import measure_case  # noqa: E402
from benchmarks.numba_twins import TWINS  # noqa: E402
from benchmarks.timing import QUICK  # noqa: E402

ROUNDING = 1e-12  # relative: what reordering the same arithmetic may change


def _numba_or_skip():
    """Numba, or a skip that says so.  Numba is an extra of its own, outside the extras job's
    S2S_AD_REQUIRE_EXTRAS=1 (JAX, SciPy); a job that installs it sets S2S_AD_REQUIRE_EXTRAS to a
    value naming numba, and its absence then fails instead."""
    numba, reason = compiled.numba_or_reason()
    if numba is None:
        if "numba" in os.environ.get("S2S_AD_REQUIRE_EXTRAS", "").lower():
            pytest.fail(f"S2S_AD_REQUIRE_EXTRAS names numba, but {reason}")
        pytest.skip(f"numba absent here ({reason}): an optional extra, checked where it is installed")
    return numba


def _relative(first, second):
    scale = max([1.0] + [float(np.max(np.abs(g))) for g in second])
    return max_abs_difference(first, second) / scale


@pytest.mark.parametrize("case", CASES, ids=[case.name for case in CASES])
def test_hand_gradient_and_ours_match_finite_differences(case):
    result = check_case(case)
    assert result.hand_error <= TOLERANCE, result
    assert result.ours_error <= TOLERANCE, result


def test_every_workload_has_a_numba_compatible_twin():
    assert set(TWINS) == {case.name for case in CASES}


@pytest.mark.parametrize("case", CASES, ids=[case.name for case in CASES])
def test_numba_twin_run_as_python_equals_the_hand_gradient(case):
    for small in (True, False):
        args = case.make_args(small)
        assert _relative(TWINS[case.name](*args), case.hand_gradient(*args)) <= ROUNDING


@pytest.mark.parametrize("case", CASES, ids=[case.name for case in CASES])
def test_numba_twin_compiled_equals_the_hand_gradient(case):
    _numba_or_skip()
    made = compiled.hand_numba(case)
    args = case.make_args(False)
    assert _relative(made.gradient(*args), case.hand_gradient(*args)) <= ROUNDING


def test_the_pendulum_fits_its_observations_at_the_true_parameters():
    """The pendulum's data come from length 1.2 and damping 0.5: the loss is smaller there, and the
    gradient at the starting guess points towards them (a check of the case, not of a gradient)."""
    case = select(["pendulum"])[0]
    length, damping, observed = case.make_args(False)
    assert case.function(1.2, 0.5, observed) < case.function(length, damping, observed)
    d_length, _ = case.hand_gradient(length, damping, observed)
    assert d_length < 0.0  # the loss falls as the length grows towards 1.2


def test_without_numba_the_compiled_columns_say_why(monkeypatch):
    monkeypatch.setitem(sys.modules, "numba", None)  # import numba now raises ImportError
    case = CASES[0]
    assert compiled.hand_numba(case).missing == compiled.NO_NUMBA
    assert compiled.s2s_ad_numba(case).missing == compiled.NO_NUMBA


def test_without_the_backend_keyword_the_s2s_ad_column_says_so(monkeypatch):
    monkeypatch.setattr(compiled, "numba_or_reason", lambda: (object(), None))
    monkeypatch.setattr(compiled.s2s_ad, "grad", lambda fn, wrt=0, has_aux=False, check=False: None)
    assert compiled.s2s_ad_numba(CASES[0]).missing == compiled.NO_BACKEND_KEYWORD


def test_a_compiled_column_is_timed_and_checked_when_there(monkeypatch):
    """Stand-ins for Numba and for a grad that takes ``backend=``: the column is filled, its ratio
    taken, and its gradient compared with the hand-written one."""
    real_grad = compiled.s2s_ad.grad
    calls = []

    def grad_with_backend(fn, wrt=0, has_aux=False, check=False, backend="python"):
        calls.append(backend)
        return real_grad(fn, wrt=wrt, has_aux=has_aux, check=check)
    monkeypatch.setattr(compiled, "numba_or_reason", lambda: (None, compiled.NO_NUMBA))
    monkeypatch.setattr(compiled, "s2s_ad_numba_missing", lambda: None)
    monkeypatch.setattr(compiled.s2s_ad, "grad", grad_with_backend)
    result = measure_case(select(["poly_loop"])[0], QUICK, [])
    assert "numba" in calls
    ours_numba = result.compiled["ours-numba"]
    assert ours_numba.seconds is not None and ours_numba.seconds > 0
    assert ours_numba.max_error is not None and ours_numba.max_error < 1e-12
    assert result.compiled["hand-numba"].failure == compiled.NO_NUMBA
    assert result.ratios()["ours-numba/hand-numba"] is None  # no reference to divide by


def _write_outside_folder(folder):
    """A two-workload stand-in for ../shared/bench, in its layout."""
    (folder / "workloads.py").write_text(textwrap.dedent('''
        def cube(x, y):
            return x * x * x * y
        '''))
    (folder / "specs.py").write_text(textwrap.dedent('''
        SPECS = {"rational": dict(fn="cube", make=lambda: (1.5, 2.0), wrt=(0, 1))}
        '''))
    (folder / "hand_grads.py").write_text(textwrap.dedent('''
        def cube_grad(x, y):
            return (3.0 * x * x * y, x * x * x)
        '''))


def test_outside_references_are_timed_beside_ours_and_the_tighter_ratio_is_reported(tmp_path):
    _write_outside_folder(tmp_path)
    references, line = outside.load(str(tmp_path))
    assert references is not None and str(tmp_path) in line
    result = measure_case(select(["rational"])[0], QUICK, [], references)
    assert result.outside is not None and result.outside.max_error < 1e-12
    ratios = result.ratios()
    assert ratios["ours/hand tighter"] == max(ratios["ours/hand"], ratios["ours/hand outside"])
    pendulum = measure_case(select(["pendulum"])[0], QUICK, [], references)  # not in the folder
    assert pendulum.outside is None and "ours/hand tighter" not in pendulum.ratios()


def test_without_the_outside_folder_the_projects_references_stand_alone(tmp_path, monkeypatch):
    monkeypatch.setattr(outside, "DEFAULT_FOLDER", str(tmp_path / "absent"))
    references, line = outside.load(None)
    assert references is None and "the project's own" in line
    with pytest.raises(SystemExit):
        outside.load(str(tmp_path / "missing"))


def test_a_first_call_probe_reports_its_times_and_gradient():
    probe = first_calls.run_probe(["probe", "s2s_ad", "rational"])
    assert probe.failure is None, probe
    assert probe.first_call > 0 and probe.steady > 0
    assert probe.max_error < 1e-12


def test_a_probe_past_its_time_limit_is_reported_as_timed_out():
    probe = first_calls.run_probe(["memory", "hand", "100000000"], time_limit=1.0)
    assert probe.failure == "timed out (1 s)"


def test_a_probe_past_its_memory_limit_is_reported_as_out_of_memory():
    probe = first_calls.run_probe(["memory", "hand", "10000000"], memory_limit=300 << 20)
    assert probe.failure == "out of memory (300 MB limit)"


def test_memory_of_a_long_loop_is_measured_and_the_gradient_kept():
    probe = first_calls.run_probe(["memory", "hand", "100000"])
    assert probe.failure is None, probe
    assert probe.extra["traced_peak"] > 100000 * 8  # one float kept per step at least
    reference = select(["poly_loop"])[0].hand_gradient(3.1, 0.2, 100000)
    assert max_abs_difference(tuple(probe.extra["gradient"]), reference) == 0.0


@pytest.mark.parametrize("workload", ["poly_loop", "pendulum"])
def test_the_lax_scan_rewrites_give_the_hand_gradient(workload):
    pytest.importorskip("jax", reason="JAX is not installed: its rewrites are checked where it is")
    probe = first_calls.run_probe(["probe", "jax.jit scan", workload])
    assert probe.failure is None, probe
    assert probe.max_error < 1e-10


def test_the_first_call_table_names_each_failure(capsys):
    rows = {"rk4": {"s2s_ad": first_calls.Probe(first_call=0.3, steady=1e-3, max_error=0.0),
                    "jax.jit": first_calls.Probe(failure="timed out (60 s)"),
                    "jax.jit scan": first_calls.Probe(failure="n/a (no lax.scan rewrite)")},
            "poly_loop": {"s2s_ad": first_calls.Probe(first_call=0.3, steady=2e-4, max_error=0.0),
                          "jax.jit": first_calls.Probe(failure="out of memory (6 GB limit)"),
                          "jax.jit scan": first_calls.Probe(first_call=0.5, steady=4e-5, max_error=0.0)}}
    report_first_calls.print_first_calls(rows)
    out = capsys.readouterr().out
    assert "timed out" in out and "out of memory" in out and "REWRITE" in out
    assert "jax.jit on rk4: timed out (60 s)" in out
    row = next(line.split() for line in out.splitlines() if line.startswith("poly_loop"))
    assert row[-1] == "5"  # ours/jax.jit = 2e-4 / 4e-5 (the scan rewrite's); no numba column without numba rows
    assert "numba/jax.jit" not in out


def test_a_quick_run_writes_every_column_to_json(tmp_path, capsys):
    path = tmp_path / "out.json"
    status = main(["--quick", "--no-peers", "--no-first-calls", "--only", "rational,pendulum",
                   "--json", str(path), "--outside", str(_outside_folder(tmp_path))])
    assert status == 0
    document = json.loads(path.read_text())
    rational, pendulum = document["workloads"]
    assert set(rational["compiled"]) == {"hand-numba", "ours-numba"}
    assert rational["outside"] is not None and pendulum["outside"] is None
    assert document["first_calls"] is None
    assert "first calls and memory: left out" in capsys.readouterr().out


def _outside_folder(tmp_path):
    folder = tmp_path / "outside"
    folder.mkdir()
    _write_outside_folder(folder)
    return folder


def test_a_numba_first_call_is_measured_cold_and_from_the_disk_cache():
    _numba_or_skip()
    found = first_calls.numba_first_calls("hand-numba", "poly_loop")
    names = ["hand-numba", "hand-numba cached"]
    if first_calls._scipy_hidden() is not None:  # SciPy installed: a third run with it hidden
        names.append("hand-numba cached, no SciPy")
    assert sorted(found) == sorted(names)
    for probe in found.values():
        assert probe.failure is None, found
        assert probe.first_call > 0 and probe.max_error == 0.0


def test_a_peer_slower_than_the_budget_allows_is_left_out_saying_so():
    import time

    from benchmarks.peers import Peer
    from benchmarks.timing import Budget

    def slow_hand(case, args):
        def gradient(*call_args):
            time.sleep(0.02)
            return case.hand_gradient(*call_args)
        return gradient
    result = measure_case(select(["rational"])[0], Budget(0.001, 1, slowest_call=0.01), [Peer("slow", slow_hand)])
    slow = result.peers["slow"]
    assert slow.seconds is None and slow.failure.startswith("left out of this mode")
    assert slow.max_error == 0.0  # still checked
