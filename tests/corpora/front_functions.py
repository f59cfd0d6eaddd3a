"""Functions for tests/driver/test_stale_code_and_caches.py (s2s_ad reads their source, so they live in a file)."""
import functools

import numpy as np

import front_config  # a module whose attribute the tests rebind

# -- stale results (issue #12, item 14) ---------------------------------------

SIGN = 0.0  # rebound to -0.0 by a test: arctan2(SIGN, -1.0) is pi for 0.0, -pi for -0.0


class Cfg:
    K = 2.0


def scaled_by_class(x):
    return Cfg.K * x * x


def scaled_by_module(x):
    return front_config.K * x * x


def signed(x):
    return np.arctan2(SIGN, -1.0) * x


def ruled(x):
    """Given a rule by the test, twice."""
    return np.sin(x)


def calls_ruled(x):
    return 3.0 * ruled(x)


# -- threads and memory --------------------------------------------------------

def shared_helper(x):
    return np.sin(x) * x


def uses_helper(x):
    return x * x * x + shared_helper(x)


def make_pair(a):
    """A closure calling a closure of its own: each call makes both fresh (nothing cached yet)."""
    def inner(x):
        return np.sin(a * x) * x

    def outer(x):
        return x * inner(x) + a
    return outer


def make_closure(a):
    def closure(x):
        return a * x * x + shared_helper(x)
    return closure



# -- decorators (item 12) ------------------------------------------------------

def doubled(f):
    """A decorator that changes the result, and says it is ``f`` (functools.wraps)."""
    @functools.wraps(f)
    def wrapper(x):
        return 2.0 * f(x)
    return wrapper


def passthrough(f):
    """The usual logging-style decorator: it calls ``f`` with whatever it is given."""
    @functools.wraps(f)
    def wrapper(*args, **kwargs):
        return f(*args, **kwargs)
    return wrapper


def tripled(f):
    """Changes the result, and takes anything: it cannot be differentiated as it runs."""
    @functools.wraps(f)
    def wrapper(*args, **kwargs):
        return 3.0 * f(*args, **kwargs)
    return wrapper


def renamed(f):
    @functools.wraps(f)
    def wrapper(t):
        return f(t) + t
    return wrapper


@doubled
def doubled_square(x):
    return x * x


@passthrough
def passed_cube(x):
    return x * x * x


@tripled
def tripled_cube(x):
    return x * x * x


@passthrough
@doubled
def passed_doubled(x):
    return x * x


@renamed
def renamed_square(x):
    return x * x


@functools.lru_cache(maxsize=None)
def cached_wave(x):
    return np.sin(x) * x


@functools.cache
def cached_cube(x):
    return x ** 3


def calls_decorated(x):
    return doubled_square(x) + cached_wave(x) + 0.5 * cached_cube(x) + passed_cube(x) + passed_doubled(x)


# -- a nested def redefined (item 8) ------------------------------------------

def redefined_in_branch(x, flag):
    def g(t):
        return t * t
    if flag > 0:
        def g(t):
            return t * t * t
    return g(x)


def defined_in_both_branches(x, flag):
    if flag:
        def scale(t):
            return np.sin(t) * x
    else:
        def scale(t):
            return t * 3.0
    return scale(x) + 1.0


def redefined_in_loop_body(x):
    def g(t):
        return t
    s = 0.0
    for i in range(3):
        s = s + g(x)  # the first iteration calls the def above the loop, the others the one below
        def g(t):
            return t * t
    return s


def chosen_in_loop_branch(x, n):
    s = 0.0
    for i in range(n):
        if i % 2 == 0:
            def step(t):
                return t * x
        else:
            def step(t):
                return np.cos(t)
        s = s + step(s + x)
    return s


def redefined_in_while(x, n):
    def g(t):
        return t + 1.0
    s = x
    i = 0
    while i < n:
        s = g(s) * x
        if s > 5.0:
            def g(t):
                return np.sin(t) * 2.0
        i = i + 1
    return s


def aliased_after_branch(x, flag):
    def g(t):
        return t * 3.0
    if flag:
        def g(t):
            return t * t
    h = g
    return h(x)


def array_def_redefined(x, w):
    def g(t):
        return t * w
    for i in range(3):
        y = g(x)
        def g(t):
            return t * t * w
    return np.sum(y)


def defined_on_one_path_only(x, flag):
    if flag:
        def g(t):
            return t * t
    return g(x)


def unused_value_or_def(x, flag):
    g = 2.0
    if flag:
        def g(t):
            return t * t
    return x * x


def helper_reading_class(x):
    return Cfg.K * np.sin(x)


def calls_helper_reading_class(x):
    return helper_reading_class(x) * x


def plain_helper(x):
    """Differentiated from its source until a test gives it a rule."""
    return x * x * x


def calls_plain_helper(x):
    return plain_helper(x) + x


def apply_to(f, x):
    return f(x)


def passes_nested_function(x, flag):
    def g(t):
        return t * t
    if flag:
        def g(t):
            return t * 3.0
    return apply_to(g, x)


def nested_call_inside_comprehension_and_helper(x, flag):
    def g(t):
        return t * t
    if flag:
        def g(t):
            return t * 3.0

    def h(t):
        return g(t) + 1.0
    return sum([h(x * k) for k in range(3)]) + g(g(x))


def make_recursive(a):
    """A closure that calls itself through its own cell."""
    def power(x, n):
        if n <= 0:
            return x
        return a * power(x, n - 1) * x
    return power
