"""Complex values made from constants, refused: the rules are written for real values.

Input: a function in SSA form as lowered, and its parse (for the file the
refusal names).  Output: nothing where it makes no complex value from
constants; otherwise a ``TransformError`` naming the first one
(``complex(1, 2)``, ``np.complex128(1)``, a call declared ``makes_complex``,
``dtype=complex``) and its line.  The lowering refuses complex literals and
names where it reads them; pipeline.py runs this check on every function it
lowers.
"""
from __future__ import annotations

from typing import Any, Optional

from ..core import ir, language
from ..rules import registry as rules
from ..core.errors import TransformError
from ..frontend.parse import ParsedFunction


def _refuse_complex_constants(parsed: ParsedFunction, ssa: ir.Function) -> None:
    """Refuse a complex value made from constants (``complex(1, 2)``, ``np.complex128(1)``,
    ``np.fft.fft(w)``) or a complex dtype (``dtype=complex``, ``.astype("complex128")``): the rules
    are written for real values (``arguments``' module docstring says what they would give on
    complex ones).  The lowering refuses complex literals and names where it reads them."""
    for stmt in ir.walk(ssa.body):
        for expr in ir.exprs_of(stmt):
            found = _complex_constant(expr)
            if found is not None:
                raise TransformError(found, "s2s_ad's rules are written for real "
                                     "values; write the real and imaginary parts as two real values and "
                                     "the complex arithmetic on them", filename=parsed.filename, line=stmt.line)


def _complex_constant(expr: ir.Expr) -> Optional[str]:
    """What complex constant ``expr`` holds, in words, or None where it holds none: a complex number or
    array, a call making complex values, or a complex type or dtype given to a function that reads it
    as a dtype (``np.zeros(3, complex)``, ``dtype="complex128"``; ``isinstance(x, complex)`` is fine)."""
    if isinstance(expr, ir.Const):
        return f"the complex value {expr.value!r}" if language.is_complex_value(expr.value) else None
    if isinstance(expr, ir.Call):
        if (isinstance(expr.fn, type) and language.is_complex_type(expr.fn)) or _declared_complex(expr.fn):
            return f"the complex value made by {getattr(expr.fn, '__name__', expr.fn)}(...)"
        named = [v for k, v in expr.kwargs if k == "dtype"]  # (where a string names a dtype)
        if getattr(expr.fn, "__name__", None) == "astype":
            named += list(expr.args[1:2])
        given = list(ir.children(expr)) if language.takes_dtypes(expr.fn) else named
        for value in given:
            if isinstance(value, ir.Const) and language.is_complex_type(value.value, named=value in named):
                return f"the complex dtype {getattr(value.value, '__name__', value.value)!r}"
    for child in ir.children(expr):
        found = _complex_constant(child)
        if found is not None:
            return found
    return None


def _declared_complex(fn: Any) -> bool:
    """Whether ``fn`` is declared to make complex values (templates/numpy_fft.py: ``makes_complex``)."""
    try:
        return bool(rules.fact(fn, "makes_complex"))
    except TypeError:  # (an unhashable callable)
        return False
