"""Rules for Python builtins: ``abs``, ``min``/``max`` of two values, ``float``."""
import numpy as np

from s2s_ad.rules import adjoint, declare, nondifferentiable

nondifferentiable(int, round, bool, len, range, isinstance, slice)


@adjoint(abs, elementwise=True, domain=(-0.8, 0.8), arithmetic=True)
def abs(out, x, d_out):
    d_x = d_out * (1.0 - 2.0 * (x < 0))  # +1 at the kink x = 0, as JAX


@adjoint(max, elementwise=True, returns_operand=True)
def max(out, a, b, d_out):
    first = (a > b) + 0.5 * (a == b)  # a tie splits the adjoint evenly, as JAX does
    d_a = d_out * first
    d_b = d_out * (1.0 - first)


@adjoint(min, elementwise=True, returns_operand=True)
def min(out, a, b, d_out):
    first = (a < b) + 0.5 * (a == b)
    d_a = d_out * first
    d_b = d_out * (1.0 - first)


@adjoint(float, elementwise=True, arithmetic=True)
def float(out, x, d_out):
    d_x = d_out


# Facts about operations with no rule here (see s2s_ad.rules.FACTS).
declare(len, int, bool, counts=True)
declare(int, arithmetic=True)
