"""Issue 33, functions as values: a closure (or lambda, or partial) a helper makes and the caller
calls, its captured values constants or values computed from the inputs; a function passed as an
argument (a default of the differentiated function, one the caller passes, one passed to a helper);
functools.partial made in the function.  Lines marked REFUSED are where a refusal must point."""
from __future__ import annotations

import functools
from functools import partial

import numpy as np

from function_value_elsewhere import make_elsewhere


def make_act(a):
    def act(z):
        return np.maximum(z, a * z)
    return act


def make_scaled(s):
    def f(z):
        return s * z ** 2
    return f


def make_lam(c):
    return lambda z: c * np.sin(z)


def make_offset(a):
    b = a * 2.0  # a name the factory computes, read by the closure
    def f(z):
        return b * z + a
    return f


def make_composed(g, c):
    def f(z):
        return g(c * z)
    return f


def make_squared_act(a):
    inner = make_act(a)  # a factory calling a factory

    def f(z):
        return inner(z) ** 2
    return f


def make_partial(c):
    return functools.partial(scale, c=c)


def apply(f, x):
    return f(x)


def cube(z):
    return z ** 3


def scale(z, c):
    return c * z ** 2


def closure_with_a_constant(x):
    act = make_act(0.1)
    return np.sum(act(x))


def closure_over_a_value_of_the_inputs(x):
    f = make_scaled(x[0])
    return np.sum(f(x))


def lambda_a_helper_returns(x):
    g = make_lam(2.0)
    return np.sum(g(x) * x)


def closure_reading_names_its_factory_computed(x):
    f = make_offset(x[1] * x[2])
    return np.sum(f(x) ** 2)


def closure_over_a_function_passed_to_its_factory(x):
    f = make_composed(np.tanh, 0.5)
    h = make_composed(cube, x[0])
    return np.sum(f(x)) + np.sum(h(x))


def factory_calling_a_factory(x):
    f = make_squared_act(0.2)
    return np.sum(f(x))


def closure_passed_to_a_helper(x):
    act = make_act(0.3)
    return np.sum(apply(act, x) ** 2)


def closure_called_in_a_loop(x):
    f = make_scaled(x[2])
    total = 0.0
    for i in range(3):
        total = total + f(x[i])
    return total


def two_closures_of_one_factory(x):
    f = make_scaled(2.0)
    g = make_scaled(x[1])
    return np.sum(f(x) + g(x))


def closure_after_a_write(x):
    y = x * 1.0
    f = make_scaled(y[0])  # y[0] as it is now: the write below does not change it
    y[0] = 5.0
    return np.sum(f(y))


def partial_a_helper_returns(x):
    g = make_partial(x[0])
    return np.sum(g(x))


def loss_with_a_default_activation(x, act=np.tanh):
    return np.sum(act(x) ** 2)


def loss_of_a_function_passed(x, act):
    return np.sum(act(x) * x)


def numpy_function_passed_to_a_helper(x):
    return np.sum(apply(np.sin, x))


def lambda_passed_to_a_helper(x):
    return np.sum(apply(lambda z: z ** 2, x))


def def_passed_to_a_helper(x):
    return np.sum(apply(cube, x))


def partial_with_a_constant(x):
    g = functools.partial(scale, c=3.0)
    return np.sum(g(x))


def partial_with_a_value_of_the_inputs(x):
    g = partial(scale, c=x[1])
    return np.sum(g(x))


def partial_of_a_lambda(x):
    g = functools.partial(lambda c, z: c * np.cos(z), 1.5)
    return np.sum(g(x))


def partial_passed_to_a_helper(x):
    g = functools.partial(scale, c=x[2])
    return np.sum(apply(g, x))


def partial_of_a_partial(x):
    g = functools.partial(functools.partial(scale), c=0.5)
    return np.sum(g(x) + g(x, c=2.0))


# -- refused ---------------------------------------------------------------

def closure_called_in_a_while_test(x):
    n = 0
    while make_act(0.1)(x[0]) > -5.0 and n < 3:  # REFUSED
        x = x * 0.5
        n += 1
    return np.sum(x)


def closure_used_as_a_value(x):
    return make_scaled(x[0])  # REFUSED


def factory_of_another_module(x):
    f = make_elsewhere(2.0)  # REFUSED
    return np.sum(f(x))


def make_on_one_path(a):
    def f(z):
        return a * z
    if a > 0:
        return f
    return None  # REFUSED


def factory_returning_a_function_on_one_path(x):
    f = make_on_one_path(2.0)  # REFUSED
    return np.sum(f(x))


def function_argument_returned(x, act):
    return act  # REFUSED


def _loss_of(w, x, act=np.tanh):
    return np.sum(act(w * x))


def _squared(z):
    return z * z


def _penalty(z, kind=_squared, scale=0.5):
    return scale * np.sum(kind(z))


def _shifted(z, f=lambda t: t * t + t):
    return np.sum(f(z))


def helper_with_a_function_default(x):
    """A helper's parameter whose default is a function (act=np.tanh, a def of yours, a lambda), left
    out by the call: the default called (it was refused as a default that is not a number); a lambda
    as a default too (helper_with_a_lambda_default)."""
    return _loss_of(x, 2.0) + _loss_of(x, 1.0, act=np.sin) + _penalty(x) + _penalty(x, scale=2.0)


def helper_with_a_lambda_default(x):
    return _shifted(x)


class Unit:
    def __init__(self, w, activation):
        self.w = w
        self.activation = activation

    def forward(self, v):
        return REGISTRY[self.activation](self.w * v)


REGISTRY = {"tanh": np.tanh, "square": _squared}


def registry_indexed_by_an_attribute(x):
    """A module-level dict of functions indexed by an object's string attribute (refused before: 'a
    call of Subscript'); the object made here, so the string is known while transforming."""
    return np.sum(Unit(x[0], "tanh").forward(x)) + np.sum(Unit(2.0, "square").forward(x))
