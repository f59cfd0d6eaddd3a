"""Everyday idioms of issue 22 (test_everyday_idioms.py): builtins and small idioms, functions
passed as arguments, module-level lists and dicts of numbers."""
import functools

import numpy as np


def dtype_of_an_argument(x):
    y = np.zeros(3, dtype=x.dtype)
    return np.sum(x * x) + np.sum(y)


def last_item_updated(u):
    a = u[-1]
    a += 2.0
    return a * a


def item_of_a_one_element_array(x):
    return x.item() ** 2 + np.sin(x.item())


def asserts_allclose(x):
    y = x * 2.0
    assert np.allclose(y, 2.0 * x)
    return np.sum(y ** 2)


def asserts_allclose_in_a_loop(x):
    s = 0.0
    for i in range(3):
        y = x * (i + 1.0)
        assert np.allclose(y / (i + 1.0), x), "scaled back"
        s = s + np.sum(np.sin(y))
    return s


def nested_def_inside_a_loop(x):
    s = 0.0
    for i in range(3):
        def g(t):
            return t * (i + 1.0) + np.sin(t)
        s = s + g(x)
    return s


def _scaled(t, c):
    return t * c


SCALE3 = functools.partial(_scaled, c=3.0)


def partial_held_in_a_module_global(x):
    return SCALE3(x) ** 2


def lambdas_defined_inside_a_loop(x):
    s = 0.0
    for c in (1.0, 2.0):
        f = lambda t: np.sin(t * c)
        s = s + f(x)
    return s


def lambda_inside_a_lambda(x):
    f = lambda t: (lambda u: u * t)(2.0)
    return f(x) * np.cos(x)


SQUARE = lambda t: t * t
ACTIVATIONS = {"square": lambda t: t * t, "tanh": np.tanh, "sin": np.sin}


def module_lambda_called_on_a_constant(x):
    return SQUARE(3.0) * x


def module_dict_lambda_picked_by_a_string(x, kind="square"):
    return ACTIVATIONS[kind](2.0) * x + ACTIVATIONS[kind](x)


def apply(fn, x):
    return fn(x)


def square(t):
    return t * t


def passes_a_module_function(x):
    return apply(square, x) + apply(np.sin, x)


def passes_a_lambda(x):
    return apply(lambda t: t ** 3, x)


COEF = [1.0, 2.0, 3.0]
CONFIG = {"scale": 4.0, "layers": [0.5, 1.5]}


def module_list_read_by_constant_index(x):
    return COEF[1] * x + COEF[-1] * x ** 2


def module_dict_read_by_constant_key(x):
    return CONFIG["scale"] * x + CONFIG["layers"][1] * np.sin(x)


def activation_checked_and_applied(z, kind="tanh"):
    if kind not in ACTIVATIONS:
        raise ValueError(f"unknown activation {kind}")
    return apply(ACTIVATIONS[kind], z) * z
