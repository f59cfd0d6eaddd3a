"""A small run of the three random-program generators written outside the project (../shared/fuzz).

They live beside the repository, not in it (their README asks that they stay outside), and CI lays
``shared/`` beside its clone; where the folder is missing the test says so in its skip reason.  Each
generator's programs are checked by that folder's own harness (``run.py``: value_and_grad against
central differences at two step sizes, jvp, vjp, second order, arguments unchanged); any status but
ok, a program that itself raises, one too large for differences, or a documented refusal fails.
"""
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SHARED_FUZZ = ROOT.parent / "shared" / "fuzz"
COUNT = int(os.environ.get("S2S_SHARED_FUZZ_EXAMPLES", "40"))
FINE = {"ok", "py_error", "skip_big", "refused"}

pytestmark = [pytest.mark.slow,
              pytest.mark.skipif(not (SHARED_FUZZ / "run.py").exists(),
                                 reason=f"the shared generators are not beside the repository ({SHARED_FUZZ})")]


@pytest.mark.parametrize("generator", ["gen", "gen2", "gen3"])
def test_a_small_run_of_the_shared_generator(generator, tmp_path):
    out = tmp_path / f"{generator}.jsonl"
    start = 20_000_000 + 1_000 * ["gen", "gen2", "gen3"].index(generator)
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])))
    done = subprocess.run([sys.executable, "run.py", str(start), str(COUNT), str(out), "--workers", "1",
                           "--gen", generator], cwd=SHARED_FUZZ, env=env, capture_output=True, text=True,
                          timeout=900)
    assert done.returncode == 0, done.stderr[-2000:]
    rows = [json.loads(line) for line in out.read_text().splitlines() if line.strip()]
    assert len(rows) == COUNT
    bad = [row for row in rows if row["status"] not in FINE]
    assert not bad, "\n\n".join(f"{r['status']} (seed {r['seed']}): {r.get('detail', '')[:500]}\n{r.get('source', '')}"
                                for r in bad[:3])
    refused = [row for row in rows if row["status"] == "refused"]
    assert all(row.get("located") for row in refused), "a refusal that names no file and line"
