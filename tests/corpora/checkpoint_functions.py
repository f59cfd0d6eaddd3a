"""Loops marked for checkpointing, each beside the same loop unmarked (tests/ad/test_checkpointing.py)."""
import numpy as np

import s2s_ad


def helper(v, r):
    return r * v * (1.0 - v)


def logistic(r, x, n, every=None):
    s = 0.5
    for i in s2s_ad.checkpointed(range(n), every=every):
        s = r * s * (1 - s) + 0.001 * x
    return s


def logistic_plain(r, x, n, every=None):
    s = 0.5
    for i in range(n):
        s = r * s * (1 - s) + 0.001 * x
    return s


def mixed_body(u0, k, n):
    u = u0
    total = 0.0
    for t in s2s_ad.checkpointed(range(n)):
        if t % 3 == 0:
            u = u + k * (u * u - u) * 0.01
        else:
            u = helper(u, 1.0 + 0.1 * k)
        for j in range(2):
            total = total + np.sum(u) * k * 0.001
    return np.sum(u * u) + total


def mixed_body_plain(u0, k, n):
    u = u0
    total = 0.0
    for t in range(n):
        if t % 3 == 0:
            u = u + k * (u * u - u) * 0.01
        else:
            u = helper(u, 1.0 + 0.1 * k)
        for j in range(2):
            total = total + np.sum(u) * k * 0.001
    return np.sum(u * u) + total


def inside_a_plain_loop(x, m, n):
    total = 0.0
    for j in range(m):
        s = x * (j + 1)
        for i in s2s_ad.checkpointed(range(n + j)):
            s = np.sin(s) * 0.9 + x
        total = total + s
    return total


def inside_a_plain_loop_plain(x, m, n):
    total = 0.0
    for j in range(m):
        s = x * (j + 1)
        for i in range(n + j):
            s = np.sin(s) * 0.9 + x
        total = total + s
    return total


def long_simulation(u0, k, n):
    u = u0
    for t in s2s_ad.checkpointed(range(n)):
        u = u + k * (u * u - u) * 0.01
    return np.sum(u * u)


def long_simulation_plain(u0, k, n):
    u = u0
    for t in range(n):
        u = u + k * (u * u - u) * 0.01
    return np.sum(u * u)
