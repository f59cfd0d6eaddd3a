"""Functions for tests/ad/test_online_checkpointing.py: while loops marked checkpointed(test,
snapshots=c), each beside the same loop unmarked (``_plain``: recorded step by step)."""
import numpy as np

import s2s_ad


def orbit(k, dt, c):
    t = 0.0
    u = 1.0
    v = 0.0
    while s2s_ad.checkpointed(t < 3.0, snapshots=c):
        a = -k * u
        u = u + dt * v
        v = v + dt * a
        t = t + dt
    return u * u + v


def orbit_plain(k, dt, c):
    t = 0.0
    u = 1.0
    v = 0.0
    while t < 3.0:
        a = -k * u
        u = u + dt * v
        v = v + dt * a
        t = t + dt
    return u * u + v


def heat(u0, rate, c):
    u = u0
    total = np.sum(u)
    steps = 0
    while s2s_ad.checkpointed(total > 0.5, snapshots=c):
        spread = np.roll(u, 1) - 2.0 * u + np.roll(u, -1)
        if steps % 2 == 0:
            u = u + rate * spread - 0.02 * u
        else:
            u = u * (1.0 - 0.03 * rate)
        total = np.sum(u)
        steps = steps + 1
    return np.sum(u * u) + total


def heat_plain(u0, rate, c):
    u = u0
    total = np.sum(u)
    steps = 0
    while total > 0.5:
        spread = np.roll(u, 1) - 2.0 * u + np.roll(u, -1)
        if steps % 2 == 0:
            u = u + rate * spread - 0.02 * u
        else:
            u = u * (1.0 - 0.03 * rate)
        total = np.sum(u)
        steps = steps + 1
    return np.sum(u * u) + total


def never_runs(x, c):
    y = x * 2.0
    while s2s_ad.checkpointed(y > 100.0, snapshots=c):
        y = y * 0.5
    return y * x


def never_runs_plain(x, c):
    y = x * 2.0
    while y > 100.0:
        y = y * 0.5
    return y * x


def noisy(x, c):
    y = x
    n = 0
    while s2s_ad.checkpointed(n < 12, snapshots=c):
        y = np.sin(y) + 0.01 * np.random.normal()
        n = n + 1
    return y


def noisy_plain(x, c):
    y = x
    n = 0
    while n < 12:
        y = np.sin(y) + 0.01 * np.random.normal()
        n = n + 1
    return y
