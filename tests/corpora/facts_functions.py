"""Loops that compute the same number expression twice (issue #18, part 3): loop-invariant hoisting
computes it once and the loop reads the first copy, which may be one the function never uses, only
tests or asserts.  Each function is written as a user would; tests/analysis/test_facts_through_passes.py
checks them against closed forms, central differences and JAX (the twins at the end of the test file)."""
import numpy as np


def unused_square(y, n):
    """The issue's example: the first y * y is unused, the second reaches the result."""
    s = 0.0
    for i in range(n):
        a = y * y
        s = s + np.sin(y * y)
    return s


def tested_square(y, n):
    """y * y only tested in the loop, then used: the test's copy is the one hoisting keeps."""
    s = 0.0
    for i in range(n):
        if y * y > 0.01:
            s = s + 1.0
        s = s + np.sin(y * y)
    return s


def tested_square_inside(y, n):
    """The issue's second form: the test's y * y, and the one in the branch it guards."""
    s = 0.0
    for i in range(n):
        big = y * y > 0.01
        if big:
            s = s + np.sin(y * y)
    return s


def asserted_decay(v, k, dt, n):
    """``assert k * dt < 1.0`` then ``v = v - k * dt * v`` in a loop (explicit Euler on v' = -k v)."""
    for i in range(n):
        assert k * dt < 1.0, "unstable step"
        v = v - k * dt * v
    return v


def asserted_decay_array(u, k, dt, n):
    """The same on an array, the assert before the loop and in it."""
    assert k * dt < 1.0
    for i in range(n):
        assert k * dt < 1.0
        u = u - k * dt * u
    return np.sum(u ** 2)


def logged_half_step(x, v, dt, n):
    """Leapfrog where the half step 0.5 * dt is first computed for a test only."""
    for i in range(n):
        half = 0.5 * dt
        if half > 1.0:
            print("large step")
        v = v - 0.5 * dt * x
        x = x + dt * v
        v = v - 0.5 * dt * x
    return x * x + v * v


def three_copies(y, n):
    """y * y three times: unused, tested, used."""
    s = 0.0
    for i in range(n):
        unused = y * y
        if y * y < 100.0:
            s = s + np.cos(y * y)
    return s


def nested_loops_square(h, x, n, m):
    """h * h unused in the outer loop, used in the inner one: hoisted from both, merged once."""
    s = 0.0
    for i in range(n):
        r = h * h
        for j in range(m):
            s = s + np.cos(h * h) * x
    return s


def negated_rate(y, k, n):
    """-k (a negation) and k * y: each computed twice, the first copies unused or tested."""
    for i in range(n):
        rate = -k
        if -k < 0.0:
            y = y + 0.1 * (-k) * y
    return y


def damped_spring(x, v, k, c, dt, n):
    """A damped spring: k * dt and c * dt repeated, the first copies for a stability test."""
    for i in range(n):
        if k * dt + c * dt > 1.0:
            raise ValueError("step too large")
        a = -(k * dt) * x - (c * dt) * v
        v = v + a
        x = x + dt * v
    return x


def reused_sum(a, b, n):
    """a + b tested, then used twice in the loop body."""
    s = 0.0
    for i in range(n):
        if a + b > 0.0:
            s = s + (a + b) * (a + b)
    return s
