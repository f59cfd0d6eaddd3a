"""User code whose names look like the ones s2s_ad generates (tests/passes/test_hygiene.py)."""
import functools
import math


def names_like_ours(x, d_x, tape, t_x):
    trips = x * d_x
    steps = trips + tape * t_x
    stride = steps * x
    for start in range(3):
        segment = stride * 0.5 + start * x
        stride = math.sin(segment) + d_x
    out = stride * tape
    d_out = out + x
    return d_out * t_x


def local_named_np(x):
    np = x * 2.0 + 1.0  # a local named np; the adjoint of ** below needs NumPy's np.log
    return np ** x + math.sin(np)


def shadows_builtins(x, sum, abs, len):
    max = x * sum
    return max * abs + len * x


def uses_underscore_names(x, _stack, _t17):
    value, gradient = x * _stack, x * _t17
    result = value * gradient
    returned = result + x
    return returned * x


class Model:
    def __init__(self, scale):
        self.scale = scale

    def loss(self, x):
        return self.scale * x * x


def scaled(x, scale):
    return scale * x * x


half_scaled = functools.partial(scaled, scale=0.5)


def long_loop(x, n):
    s = x
    for i in range(n):
        s = math.sin(s) * 0.5 + x * 0.5  # nonlinear: the tape keeps one value per iteration
    return s
