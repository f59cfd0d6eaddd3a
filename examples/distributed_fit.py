"""Logistic regression fitted on a Dask cluster: the loss is a sum over data shards, each shard's
loss and gradient computed on a worker by an s2s_ad gradient shipped to it, the gradients summed here.

Run: python examples/distributed_fit.py [--scheduler ADDRESS] [--workers N] [--shards N] [--steps N]
(needs the distributed extra: pip install "s2s_ad[distributed]").  Without --scheduler it starts a
dask.distributed.LocalCluster of worker processes on this machine; with it, it uses the cluster
whose scheduler listens there (tcp://host:8786).

How the gradient reaches a worker.  ``s2s_ad.value_and_grad(shard_loss)`` pickles by reference:
the module and qualified name of ``shard_loss`` and the options, not code.  A worker unpickles it by
importing that module, reads ``shard_loss``'s source and generates the gradient's code itself, once
per worker process (then it is cached there).  So ``shard_loss`` must be importable on each worker
under the module name it has here.  Run as a script, this file is ``__main__``, a name that means
another module in a worker; so ``main`` imports the functions from this file under its own module
name, ``distributed_fit`` (the script's folder is first on ``sys.path``), and
``client.upload_file(__file__)`` sends this file to every worker, which puts it on its path and
imports it: the workers of a LocalCluster and of a remote cluster alike.  Each worker needs s2s_ad
and NumPy installed (a remote cluster: in its workers' environment); Dask itself is imported only
in ``main``, so that a worker importing this file, and the tests, need nothing more.

The same works with any module of your own in place of this file: put the loss in an importable
module (installed on the workers, or sent with ``client.upload_file``), and hand the workers
``s2s_ad.value_and_grad(loss)``.
"""
import argparse
import os
import sys
import time

import numpy as np

import s2s_ad

TRUE_WEIGHTS = np.array([2.0, -1.0, 0.5])  # two features' weights and the bias


def shard_loss(w, features, labels):
    """The logistic loss of one shard: sum of log(1 + exp(-y (x . w[:2] + w[2]))), labels y = +-1."""
    margins = labels * (features @ w[:2] + w[2])
    return np.sum(np.logaddexp(0.0, -margins))


def whole_loss(w, shards):
    """The loss of every shard, summed here in one process (what the cluster's sum must equal)."""
    total = 0.0
    for features, labels in shards:
        total = total + shard_loss(w, features, labels)
    return total


# What a worker runs: pickled by reference to distributed_fit.shard_loss (see the module docstring).
shard_loss_and_gradient = s2s_ad.value_and_grad(shard_loss)


def make_shards(n_shards, per_shard, seed=0):
    """Synthetic data: points in the plane labelled by the sign of a noisy linear score."""
    rng = np.random.default_rng(seed)
    shards = []
    for _ in range(n_shards):
        features = rng.normal(size=(per_shard, 2))
        score = features @ TRUE_WEIGHTS[:2] + TRUE_WEIGHTS[2] + 0.3 * rng.normal(size=per_shard)
        shards.append((features, np.where(score > 0, 1.0, -1.0)))
    return shards


def distributed_loss_and_gradient(client, w, shard_futures):
    """The loss and its gradient by ``w``, summed over the shards: one task per shard, each run on a
    worker by the pickled ``shard_loss_and_gradient``, gathered and summed here."""
    tasks = [client.submit(shard_loss_and_gradient, w, features, labels, pure=False)
             for features, labels in shard_futures]
    results = client.gather(tasks)
    return sum(value for value, _ in results), sum(gradient for _, gradient in results)


def fit(client, shards, steps, learning_rate):
    """Gradient descent on the mean loss; the shards stay on the workers (scattered once)."""
    shard_futures = [tuple(client.scatter([features, labels])) for features, labels in shards]
    count = sum(len(labels) for _, labels in shards)
    w = np.zeros(3)
    first = None
    for _ in range(steps):
        loss, gradient = distributed_loss_and_gradient(client, w, shard_futures)
        first = loss / count if first is None else first
        w = w - learning_rate * gradient / count
    loss, _ = distributed_loss_and_gradient(client, w, shard_futures)
    return w, first, loss / count


def _client(scheduler, workers):
    """A client of the cluster at ``scheduler``, or of a new LocalCluster of worker processes."""
    from dask.distributed import Client, LocalCluster  # the extra, imported only where it is used

    if scheduler:
        return Client(scheduler), None
    cluster = LocalCluster(n_workers=workers, threads_per_worker=1, processes=True, dashboard_address=None)
    return Client(cluster), cluster


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--scheduler", default=None, metavar="ADDRESS",
                        help="a running cluster's scheduler (tcp://host:8786); default: a LocalCluster")
    parser.add_argument("--workers", type=int, default=2, help="LocalCluster worker processes (default 2)")
    parser.add_argument("--shards", type=int, default=4)
    parser.add_argument("--per-shard", type=int, default=500, help="points per shard")
    parser.add_argument("--steps", type=int, default=60)
    parser.add_argument("--learning-rate", type=float, default=2.0)
    options = parser.parse_args(argv)

    # this file under its module name, not __main__: what a worker can import (module docstring)
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import distributed_fit as model

    client, cluster = _client(options.scheduler, options.workers)
    try:
        client.upload_file(os.path.abspath(model.__file__))
        shards = model.make_shards(options.shards, options.per_shard)
        w0 = np.array([0.3, 0.2, -0.1])
        futures = [tuple(client.scatter([f, y])) for f, y in shards]
        _, on_cluster = model.distributed_loss_and_gradient(client, w0, futures)
        here = s2s_ad.grad(model.whole_loss)(w0, shards)
        print(f"{len(client.scheduler_info()['workers'])} workers, {options.shards} shards of "
              f"{options.per_shard} points")
        print(f"gradient summed over the shards vs the whole loss's gradient here: "
              f"max difference {float(np.max(np.abs(on_cluster - here))):.1e}")
        start = time.perf_counter()
        w, first, last = model.fit(client, shards, options.steps, options.learning_rate)
        print(f"mean loss: {first:.4f} -> {last:.4f} in {options.steps} steps "
              f"({time.perf_counter() - start:.1f} s)")
        print(f"direction of the fitted weights: {np.round(w / np.linalg.norm(w), 3).tolist()} "
              f"(true: {np.round(TRUE_WEIGHTS / np.linalg.norm(TRUE_WEIGHTS), 3).tolist()})")
    finally:
        client.close()
        if cluster is not None:
            cluster.close()


if __name__ == "__main__":
    main()
