"""Issue 33: nested defs and lambdas called with keyword arguments, directly or through a
functools.partial that fixes them (tests/frontend/test_nested_keywords.py)."""
import functools

import numpy as np


def partial_fixing_a_keyword(x):
    def scaled(v, scale=1.0, shift=0.0):
        return v * scale + shift
    g = functools.partial(scaled, scale=2.0)
    return np.sum(g(x) ** 2)


def partial_fixing_a_later_keyword(x):
    def scaled(v, scale=1.0, shift=0.0):
        return v * scale + shift
    g = functools.partial(scaled, shift=0.5)  # scale, skipped, keeps its default
    return np.sum(np.sin(g(x)))


def partial_keyword_overridden_at_the_call(x):
    def scaled(v, scale=1.0, shift=0.0):
        return v * scale + shift
    g = functools.partial(scaled, scale=2.0, shift=0.1)
    return np.sum(g(x, shift=x[0]) * x)


def keyword_of_an_array_computed_before(x):
    w = np.cos(x)

    def weighted(v, weights=None, power=2):
        return np.sum(weights * v ** power)
    return weighted(x, power=3, weights=w)


def lambda_called_by_keyword(x):
    f = lambda v, k=1.0: np.exp(k * v)
    return np.sum(f(x, k=0.5)) + np.sum(f(v=x))


def keyword_given_in_a_loop(x):
    def step(state, rate=0.1, damping=1.0):
        return state - rate * np.tanh(state) * damping
    s = x * 1.0
    for i in range(3):
        s = step(s, damping=0.5 + i)
    return np.sum(s ** 2)


def unknown_keyword(x):
    def scaled(v, scale=1.0):
        return v * scale
    return np.sum(scaled(x, factor=2.0))


def keyword_given_twice(x):
    def scaled(v, scale=1.0):
        return v * scale
    return np.sum(scaled(x, 2.0, scale=3.0))


def required_parameter_skipped(x):
    def combined(v, w, scale=1.0):
        return v * w * scale
    return np.sum(combined(x, scale=2.0))
