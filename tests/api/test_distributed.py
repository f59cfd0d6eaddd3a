"""Gradients computed on a real Dask cluster of worker processes (issue 21, the distributed extra):
the gradient of a loss summed over shards, each shard's on a worker by the pickled
``s2s_ad.value_and_grad``, against the whole loss's gradient computed here and finite differences;
and ``examples/distributed_fit.py`` run end to end, on a LocalCluster of its own and on a cluster
given by its scheduler's address.

Skipped, saying why, where dask.distributed is not installed; a failure then under
S2S_AD_REQUIRE_EXTRAS (CI's job for the extra installs it: .ci/run).
"""
import os
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import s2s_ad
from conftest import numeric_grad, optional_import

distributed = optional_import("dask.distributed")
if distributed is None:
    pytest.skip("could not import dask.distributed (the distributed extra: pip install 's2s_ad[distributed]')",
                allow_module_level=True)

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "distributed_fit.py"
sys.path.insert(0, str(EXAMPLE.parent))
import distributed_fit as model  # noqa: E402  (the example's module, as its workers import it)


@pytest.fixture(scope="module")
def cluster():
    """A LocalCluster of two worker processes, one thread each (what the example starts by default)."""
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                  dashboard_address=None) as local:
        yield local


@pytest.fixture(scope="module")
def client(cluster):
    with distributed.Client(cluster) as connected:
        connected.upload_file(str(EXAMPLE))  # as the example does: the workers import distributed_fit
        yield connected


def test_the_workers_are_other_processes(client):
    pids = set(client.run(os.getpid).values())
    assert len(pids) == 2 and os.getpid() not in pids


def test_the_gradient_summed_over_shards_on_workers_is_the_whole_losss(client):
    shards = model.make_shards(3, 40, seed=1)
    futures = [tuple(client.scatter([features, labels])) for features, labels in shards]
    w = np.array([0.4, -0.3, 0.2])
    loss, gradient = model.distributed_loss_and_gradient(client, w, futures)
    np.testing.assert_allclose(loss, model.whole_loss(w, shards), rtol=1e-12)
    np.testing.assert_allclose(gradient, s2s_ad.grad(model.whole_loss)(w, shards), rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(gradient, numeric_grad(model.whole_loss, [w, shards], 0), rtol=1e-6, atol=1e-7)


def test_each_task_ran_the_pickled_gradient_on_a_worker(client):
    """The task is the gradient object itself, unpickled in the worker (by reference to
    distributed_fit.shard_loss), and its code generated there."""
    features, labels = model.make_shards(1, 30, seed=2)[0]
    w = np.array([1.0, 0.5, -0.5])
    done = client.submit(model.shard_loss_and_gradient, w, features, labels, pure=False)
    value, gradient = done.result()
    assert client.who_has(done)[done.key]  # held by a worker: computed there, not here
    np.testing.assert_allclose(value, model.shard_loss(w, features, labels), rtol=1e-12)
    np.testing.assert_allclose(gradient, numeric_grad(model.shard_loss, [w, features, labels], 0), rtol=1e-6)


def _run_example(*options):
    environment = dict(os.environ, PYTHONPATH=os.pathsep.join(
        [str(ROOT)] + [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]))
    done = subprocess.run([sys.executable, str(EXAMPLE), "--shards", "3", "--per-shard", "100", "--steps", "15",
                           *options], cwd=ROOT, capture_output=True, text=True, env=environment, timeout=180)
    assert done.returncode == 0, done.stderr
    difference = float(re.search(r"max difference ([\d.e+-]+)", done.stdout).group(1))
    first, last = map(float, re.search(r"mean loss: ([\d.]+) -> ([\d.]+)", done.stdout).groups())
    assert difference < 1e-10 and last < 0.5 * first, done.stdout
    return done.stdout


def test_the_example_runs_on_a_local_cluster_of_its_own():
    printed = _run_example("--workers", "2")
    assert printed.startswith("2 workers, 3 shards of 100 points")


def test_the_example_runs_on_a_cluster_given_by_its_scheduler_address(cluster):
    printed = _run_example("--scheduler", cluster.scheduler_address)
    assert printed.startswith("2 workers")


def test_neither_s2s_ad_nor_the_example_imports_dask():
    """Dask is imported only where the feature is used (the example's main)."""
    code = "import sys, s2s_ad, distributed_fit; print(sorted(m for m in sys.modules if m.startswith('dask')))"
    environment = dict(os.environ, PYTHONPATH=os.pathsep.join([str(ROOT), str(EXAMPLE.parent)]))
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=environment, timeout=60)
    assert done.returncode == 0 and done.stdout.strip() == "[]", done.stdout + done.stderr
