"""The Numba target's compiled versions of ``templates/operators.py``'s helpers: ``add_adjoint`` and
``mul_adjoint`` (the adjoints of ``a + b`` and ``a * b``), their tangents (``add_tangent``,
``mul_tangent``) and the second-order helpers of ``a * b`` (``mul_adjoint_cross``, ``mul_tangent_cross``,
``tangent_sum``, ``pair_sum``: what Hessians and forward-over-reverse code call), for numbers and arrays
only, never sequences (whose ``+`` concatenates and ``*`` repeats: those calls run as Python).

Each version must do what the Python helper does for the types it accepts (tests/targets/test_numba_backend.py
compares the two); Numba is imported by no module here when loaded (``numba.rules``).
"""
from __future__ import annotations

from ....core.runtime import unbroadcast
from ....rules import compiled
from .template_modules import template

ops = template("operators")


def _arithmetic_operands(types, a, b):
    """Both operands numbers or arrays: ``+`` and ``*`` are arithmetic (no concatenation, no repetition)."""
    plain = (types.Float, types.Integer, types.Array)
    return isinstance(a, plain) and isinstance(b, plain) and not isinstance(a, types.Boolean) \
        and not isinstance(b, types.Boolean)


@compiled(ops.add_adjoint)
def _add_adjoint(types):
    def typing(grad, a, b):
        if _arithmetic_operands(types, a, b):
            return lambda grad, a, b: (unbroadcast(grad, a), unbroadcast(grad, b))
        return None
    return typing


@compiled(ops.mul_adjoint)
def _mul_adjoint(types):
    def typing(grad, a, b):
        if _arithmetic_operands(types, a, b):
            return lambda grad, a, b: (unbroadcast(grad * b, a), unbroadcast(grad * a, b))
        return None
    return typing


def _arithmetic_tangents(types, *values):
    """Tangents and operands numbers or arrays (a zero tangent is the number 0.0): arithmetic."""
    plain = (types.Float, types.Integer, types.Array)
    return all(isinstance(v, plain) and not isinstance(v, types.Boolean) for v in values)


@compiled(ops.add_tangent)
def _add_tangent(types):
    def typing(tangent_a, tangent_b, a, b):
        if _arithmetic_tangents(types, tangent_a, tangent_b, a, b):
            return lambda tangent_a, tangent_b, a, b: tangent_a + tangent_b
        return None
    return typing


@compiled(ops.mul_tangent)
def _mul_tangent(types):
    def typing(tangent_a, tangent_b, a, b):
        if _arithmetic_tangents(types, tangent_a, tangent_b, a, b):
            return lambda tangent_a, tangent_b, a, b: tangent_a * b + a * tangent_b
        return None
    return typing


@compiled(ops.mul_adjoint_cross)
def _mul_adjoint_cross(types):
    def typing(grad, a, b, tangent_a, tangent_b):
        if _arithmetic_tangents(types, grad, a, b, tangent_a, tangent_b):
            return lambda grad, a, b, tangent_a, tangent_b: (unbroadcast(grad * tangent_b, a),
                                                             unbroadcast(grad * tangent_a, b))
        return None
    return typing


@compiled(ops.mul_tangent_cross)
def _mul_tangent_cross(types):
    def typing(tangent_a, tangent_b, second_a, second_b, a, b):
        if _arithmetic_tangents(types, tangent_a, tangent_b, second_a, second_b, a, b):
            return lambda tangent_a, tangent_b, second_a, second_b, a, b: tangent_a * second_b + second_a * tangent_b
        return None
    return typing


@compiled(ops.tangent_sum)
def _tangent_sum(types):
    def typing(x, y):
        if _arithmetic_tangents(types, x, y):
            return lambda x, y: x + y
        return None
    return typing


@compiled(ops.pair_sum)
def _pair_sum(types):
    def typing(p, q):
        pair = (types.BaseTuple,)
        if isinstance(p, pair) and isinstance(q, pair) and len(p) == 2 and len(q) == 2 and \
                _arithmetic_tangents(types, *p.types, *q.types):
            return lambda p, q: (p[0] + q[0], p[1] + q[1])
        return None
    return typing
