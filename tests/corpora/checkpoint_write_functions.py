"""Checkpointed loops that write into arrays (issue 35): a trajectory written into a preallocated
array, element writes on the state, each beside the same loop unmarked (``*_plain``), for
tests/ad/test_checkpointed_writes.py and the Numba comparisons."""
import numpy as np

import s2s_ad


def trajectory(u0, k, n, c):
    """The common case: the state written into row ``i`` of a preallocated array each step."""
    out = np.zeros((n, u0.shape[0]))
    u = u0
    for i in s2s_ad.checkpointed(range(n), snapshots=c):
        u = u + k * (u * u - u) * 0.1
        out[i] = u
    return np.sum(np.sin(out) * out)


def trajectory_plain(u0, k, n, c):
    out = np.zeros((n, u0.shape[0]))
    u = u0
    for i in range(n):
        u = u + k * (u * u - u) * 0.1
        out[i] = u
    return np.sum(np.sin(out) * out)


def ring(x0, k, n, c):
    """Element writes on the state itself, each reading what earlier steps wrote (no carried name)."""
    x = x0 * 1.0
    for i in s2s_ad.checkpointed(range(n), snapshots=c):
        j = i % 3
        x[j] = x[j] + k * np.sin(x[(j + 1) % 3]) * x[(j + 2) % 3]
    return np.sum(x * x)


def ring_plain(x0, k, n, c):
    x = x0 * 1.0
    for i in range(n):
        j = i % 3
        x[j] = x[j] + k * np.sin(x[(j + 1) % 3]) * x[(j + 2) % 3]
    return np.sum(x * x)


def accumulate(u0, k, n, c):
    """A running sum written in place, read back each step, and a state bound anew then written."""
    acc = np.ones(3)
    u = u0
    for i in s2s_ad.checkpointed(range(n), snapshots=c):
        u = np.tanh(u * k) + 0.1
        u[0] = u[1] * u[2]
        acc[i % 3] = acc[i % 3] * 0.5 + u[0] * acc[(i + 1) % 3]
    return np.sum(acc * acc) + np.sum(u)


def accumulate_plain(u0, k, n, c):
    acc = np.ones(3)
    u = u0
    for i in range(n):
        u = np.tanh(u * k) + 0.1
        u[0] = u[1] * u[2]
        acc[i % 3] = acc[i % 3] * 0.5 + u[0] * acc[(i + 1) % 3]
    return np.sum(acc * acc) + np.sum(u)


def sqrt_segments(u0, k, n, c):
    """The square-root segments (``checkpointed(steps)``) writing a trajectory: ``c`` unused."""
    out = np.zeros((n, u0.shape[0]))
    u = u0
    for i in s2s_ad.checkpointed(range(n)):
        u = u + k * (u * u - u) * 0.1
        out[i] = out[i - 1] * 0.5 + u
    return np.sum(out * out)


def sqrt_segments_plain(u0, k, n, c):
    out = np.zeros((n, u0.shape[0]))
    u = u0
    for i in range(n):
        u = u + k * (u * u - u) * 0.1
        out[i] = out[i - 1] * 0.5 + u
    return np.sum(out * out)


def online_trajectory(u0, k, n, c):
    """``while checkpointed(...)``: the trip count found by the test, the trajectory written by row."""
    out = np.zeros((n, u0.shape[0]))
    u = u0
    i = 0
    while s2s_ad.checkpointed(i < n, snapshots=c):
        u = u + k * (u * u - u) * 0.1
        out[i] = u * out[i - 1] + u
        i = i + 1
    return np.sum(out * out)


def online_trajectory_plain(u0, k, n, c):
    out = np.zeros((n, u0.shape[0]))
    u = u0
    i = 0
    while i < n:
        u = u + k * (u * u - u) * 0.1
        out[i] = u * out[i - 1] + u
        i = i + 1
    return np.sum(out * out)


def online_ring(x0, k, n, c):
    """``while checkpointed(...)`` whose test reads the array the body writes."""
    x = x0 * 1.0
    count = np.zeros(1)
    while s2s_ad.checkpointed(count[0] < n, snapshots=c):
        x[0] = x[0] + k * np.sin(x[1]) * x[2]
        x[1] = x[1] - k * x[0] * x[2]
        count[0] = count[0] + 1.0
    return np.sum(x * x)


def online_ring_plain(x0, k, n, c):
    x = x0 * 1.0
    count = np.zeros(1)
    while count[0] < n:
        x[0] = x[0] + k * np.sin(x[1]) * x[2]
        x[1] = x[1] - k * x[0] * x[2]
        count[0] = count[0] + 1.0
    return np.sum(x * x)


def through_a_view(u0, k, n, c):
    """Writes through a view made before the loop, a store before it and one after it (whose reverses
    read the array as it was there)."""
    x = u0 * 1.0
    x[0] = np.sin(x[1]) * k
    view = x[1:]
    for i in s2s_ad.checkpointed(range(n), snapshots=c):
        view[i % 2] = view[i % 2] * x[0] + k * np.cos(view[(i + 1) % 2])
    x[2] = x[2] * x[0]
    return np.sum(x * x) + np.sum(view)


def through_a_view_plain(u0, k, n, c):
    x = u0 * 1.0
    x[0] = np.sin(x[1]) * k
    view = x[1:]
    for i in range(n):
        view[i % 2] = view[i % 2] * x[0] + k * np.cos(view[(i + 1) % 2])
    x[2] = x[2] * x[0]
    return np.sum(x * x) + np.sum(view)


def scalar_cell(u0, k, n, c):
    """A 0-d array written in place: the restore writes ``a[...]`` (``a[:]`` would not do)."""
    a = np.zeros(())
    a[...] = np.sum(u0 * u0)
    for i in s2s_ad.checkpointed(range(n), snapshots=c):
        a[()] = a[()] * 0.5 + np.sin(a[()]) * k
    return a[()] * 2.0


def scalar_cell_plain(u0, k, n, c):
    a = np.zeros(())
    a[...] = np.sum(u0 * u0)
    for i in range(n):
        a[()] = a[()] * 0.5 + np.sin(a[()]) * k
    return a[()] * 2.0


def writes_what_it_binds_again(u0, k, n, c):
    """Refused: ``u[0] = ...`` writes, at the first step, the array ``u`` held before the loop."""
    u = u0 * 1.0
    for i in s2s_ad.checkpointed(range(n), snapshots=c):
        u[0] = u[1] * k
        u = u * 0.9
    return np.sum(u)
