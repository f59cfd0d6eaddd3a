"""Issue 33: a run without the optional extras says once, at its end, how many tests were skipped for
them and the one command that installs them; each skip still names its own reason."""
import os
import subprocess
import sys
from pathlib import Path

import conftest

TESTS = Path(__file__).resolve().parents[1]
ROOT = TESTS.parent


def test_the_command_installs_what_ci_s_job_with_every_extra_installs():
    ci = (ROOT / ".ci" / "run").read_text()
    assert '".[test,notebook,distributed,numba,arrays]" jax scipy "torch==' in ci  # CI's job 4, torch pinned there
    assert conftest.EXTRAS_COMMAND == ('pip install ".[test,notebook,distributed,numba,arrays]" jax scipy '
                                       '"torch==2.13.0" "dask[array]" array-api-strict')
    assert conftest.EXTRAS_COMMAND in (ROOT / "README.md").read_text()


def test_a_run_with_missing_extras_says_how_many_and_what_to_install(tmp_path):
    (tmp_path / "test_some.py").write_text(
        "import pytest\n\n"
        "def test_runs():\n    pass\n\n"
        "def test_needs_an_extra():\n    pytest.importorskip('no_such_extra_of_s2s_ad')\n\n"
        "def test_needs_another():\n    pytest.importorskip('nor_this_one_of_s2s_ad', reason='it is not installed')\n\n"
        "def test_skipped_for_another_reason():\n    pytest.skip('not on this platform')\n")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(TESTS), str(ROOT), os.environ.get("PYTHONPATH", "")])}
    env.pop(conftest.REQUIRE_EXTRAS, None)
    done = subprocess.run([sys.executable, "-m", "pytest", "-q", "-rs", "-p", "conftest", "-p", "no:cacheprovider",
                           "-p", "no:xdist", str(tmp_path)], capture_output=True, text=True, cwd=tmp_path, env=env, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
    summary = ("2 tests (or modules of tests) skipped for optional extras that are not installed (Numba, JAX, SciPy, "
               "Dask, PyTorch, array libraries, notebooks); to run them too: " + conftest.EXTRAS_COMMAND)
    assert done.stdout.count(summary) == 1, done.stdout
    assert "could not import 'no_such_extra_of_s2s_ad'" in done.stdout  # each skip still says why
    assert "not on this platform" in done.stdout and "1 passed, 3 skipped" in done.stdout
