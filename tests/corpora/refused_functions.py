"""One function per construct s2s_ad refuses. Each offending line ends with a
``# REFUSED: <words the error must contain>`` marker read by tests/test_refusals.py."""
import numpy as np

import s2s_ad


def helper_without_rule_or_source(x):
    return x


helper_without_rule_or_source = np.frompyfunc(lambda v: v, 1, 1)


def generator(x):
    yield x * 2.0  # REFUSED: yield
    return x


def try_statement(x):
    try:  # REFUSED: a try statement
        y = x * 2.0
    except ValueError:
        y = x
    return y


def with_statement(x):
    with np.errstate(all="ignore"):  # REFUSED: a with statement
        y = x * 2.0
    return y


def global_statement(x):
    global COUNTER  # REFUSED: a global statement
    return x


def nonlocal_statement(x):
    def inner(v):
        nonlocal x  # REFUSED: a nonlocal statement
        return v
    return inner(x)


async def async_function(x):  # REFUSED: an async function
    return x


def uses_eval(x):
    return eval("x * 2.0")  # REFUSED: the call of eval


def uses_exec(x):
    exec("y = 1")  # REFUSED: the call of exec() made for its effect
    return x


def sorts_in_place(x):
    y = x * 2.0
    y.sort()  # REFUSED: the call of .sort() made for its effect
    return np.sum(y)


def attribute_write(x):
    x.flags = None  # REFUSED: an assignment to an attribute
    return x


def writes_into_argument(x):
    x[0] = 2.0  # REFUSED: an assignment into x[...]
    return np.sum(x)


def dict_comprehension(x):
    d = {k: x for k in "ab"}  # REFUSED: a dict comprehension
    return d["a"]


def set_literal(x):
    s = {x}  # REFUSED: a set
    return x


def lambda_passed_to_numpy(x):
    return np.sum(np.apply_along_axis(lambda v: v * 2.0, 0, x))  # REFUSED: a function passed as an argument to np.apply_along_axis


def while_else(x):
    while x > 1.0:  # REFUSED: an else clause on a while loop
        x = x / 2.0
    else:
        x = x * 1.0
    return x


def starred_call(x):
    args = (x, 2.0)
    return np.hypot(*args)  # REFUSED: a starred expression


def undefined_name(x):
    return x * not_defined_anywhere  # REFUSED: the name 'not_defined_anywhere'


def no_rule(x):
    return helper_without_rule_or_source(x)  # REFUSED: the call of


def no_return(x):
    y = x * 2.0  # REFUSED: without a final return


def complex_literal(x):
    return np.sum(np.abs(x * (1.0 + 2j)))  # REFUSED: the complex value 2j


def walrus(x):
    if (y := x * 2.0) > 1.0:  # REFUSED: the walrus operator
        return y
    return x


def _square(v):
    return v * v


_d_square = s2s_ad.grad(_square)


def calls_a_gradient(x):
    return np.sum(_d_square(x[0]) * x)  # REFUSED: the call of the gradient


def generator_bound_to_a_name(x):
    squares = (v * v for v in x)  # REFUSED: write a list comprehension instead
    return sum(squares)


def in_place_on_an_argument(x):
    y = x
    y *= 2.0  # REFUSED: y is the argument x
    return np.sum(y * x)


def in_place_on_a_view_of_an_argument(x):
    rest = x[1:]
    rest += 1.0  # REFUSED: rest is a view of x
    return np.sum(x * x)


def in_place_on_an_array_shared_on_some_paths(x):
    a = np.ones(2)
    c = a
    if x[0] > 0:
        c = np.zeros(2)
    c += x  # REFUSED: c is the same object as a on some paths
    return np.sum(a * x)


class _Point:
    def __init__(self, x, y):
        self.x = x
        self.y = y


def iterating_an_object(x):
    p = _Point(x[0], x[1])
    total = 0.0
    for item in p:  # REFUSED: Python raises TypeError: '_Point' object is not iterable
        total = total + item
    return total


def checkpointed_write_into_what_it_binds_again(x):
    u = x * 1.0
    for i in s2s_ad.checkpointed(range(3), snapshots=2):  # REFUSED: writes in place into the array u held before it, and binds u again
        u[0] = u[1] * 2.0
        u = u * 0.9
    return np.sum(u)
