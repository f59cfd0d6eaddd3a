"""The tangent of a value that carries none is a symbolic ``ir.Zero`` of its derivative's kind.

Forward mode hands it to a rule's template, drops the terms it zeroes (``0 * inf`` never becomes
``nan``), and writes what is left as code: no ``Zero`` reaches the generated function.
"""
from __future__ import annotations

import math
import operator

import numpy as np

import s2s_ad
from s2s_ad.ad import forward
from s2s_ad.core import ir
from s2s_ad.core.kinds import NUMBER, UNKNOWN, Array, derivative_kind


def _scaled_sine(x, y):
    return np.sin(x) * y + np.exp(y) * x


def _hypot(x, y):
    return np.hypot(x, y)


def test_a_zero_is_typed_and_no_constant():
    zero = ir.Zero(Array(1, ("a",)))
    assert zero.kind == Array(1, ("a",)) and zero == ir.Zero(Array(1, ("a",))) and zero != ir.Zero(NUMBER)
    assert not isinstance(zero, ir.Const)  # a zero the user wrote (Const(0.0)) is never dropped as one
    assert derivative_kind(Array(2, ("a", "b"))) == Array(2, ("a", "b")) and derivative_kind(NUMBER) == NUMBER


def test_zeros_are_dropped_from_sums_and_products():
    a = ir.Var("a")
    zero = ir.Zero(NUMBER)
    assert forward._without_zeros(ir.Call(operator.add, (zero, a))) is a
    assert forward._without_zeros(ir.Call(operator.sub, (a, zero))) is a
    assert forward._without_zeros(ir.Call(operator.sub, (zero, a))) == ir.Call(operator.neg, (a,))
    assert isinstance(forward._without_zeros(ir.Call(operator.mul, (a, zero))), ir.Zero)
    assert forward._without_zeros(ir.Call(operator.add, (ir.Const(0.0), a))) is None  # the user's zero stays
    assert forward.TangentSweep.spelled(ir.Call(operator.add, (a, ir.Zero(UNKNOWN)))) \
        .args[1].value == 0.0


def _no_zero_objects(fn, wrt, args):
    source = s2s_ad.source(fn, wrt=wrt, mode="forward", args=args)
    assert "Zero" not in source
    return source


def test_forward_mode_by_one_argument_leaves_the_others_terms_out():
    source = _no_zero_objects(_scaled_sine, 0, (0.3, 2.0))
    assert "t_y" not in source
    value, tangent = s2s_ad.jvp(_scaled_sine, (0.3, 2.0), (1.0, None))
    assert math.isclose(tangent, math.cos(0.3) * 2.0 + math.exp(2.0))
    x, y = np.array([0.5, 1.5]), np.array([2.0, 3.0])
    _no_zero_objects(_hypot, 0, (x, y))
    _, t = s2s_ad.jvp(_hypot, (x, y), (np.ones(2), None))
    assert np.allclose(t, x / np.hypot(x, y))


def test_a_missing_tangent_beside_an_infinite_one_is_no_nan():
    _, tangent = s2s_ad.jvp(lambda x, y: x * y, (np.inf, 2.0), (1.0, None))
    assert tangent == 2.0  # t_x * y, and no x * 0 (inf * 0 would be nan)
