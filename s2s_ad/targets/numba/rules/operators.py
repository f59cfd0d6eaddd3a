"""The Numba target's compiled versions of ``templates/operators.py``'s helpers: ``add_adjoint`` and
``mul_adjoint`` (the adjoints of ``a + b`` and ``a * b``) for numbers and arrays only, never sequences
(whose ``+`` concatenates and ``*`` repeats: those calls run as Python).

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
