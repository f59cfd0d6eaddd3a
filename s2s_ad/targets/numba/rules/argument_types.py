"""What the typing functions of ``numba.rules`` ask of an argument's Numba type.

Input: ``numba.types`` (handed to each factory) and the type Numba gives an argument: a type, a
``types.Omitted`` for a default left out, or the default itself.  Output: yes or no (or which of
two forms), the same answer in every module here.
"""
from __future__ import annotations

from typing import Any


def is_none(types: Any, value: Any) -> bool:
    """None given, or a default of None left out."""
    return value is None or isinstance(value, types.NoneType) or \
        (isinstance(value, types.Omitted) and value.value is None)


def is_int(types: Any, value: Any) -> bool:
    """An int given (a bool is not one here: NumPy reads it as a mask or a flag)."""
    return type(value) is int or isinstance(value, types.Integer) and not isinstance(value, types.Boolean)


def axis_form(types: Any, axis: Any) -> str:
    """"int" (given, or an int default left out), "none" (None, given or left out) or "" (neither)."""
    if is_int(types, axis) or isinstance(axis, types.Omitted) and type(axis.value) is int:
        return "int"
    return "none" if is_none(types, axis) else ""


def is_truth(types: Any, value: Any) -> bool:
    """A truth value: given (a bool, literal or not) or a default left out."""
    if isinstance(value, types.Omitted):
        value = value.value
    return type(value) is bool or isinstance(value, types.Boolean)


def rank_of(types: Any, value: Any) -> int:
    """An array's rank, 0 for a number (not a truth value), -1 for anything else."""
    if isinstance(value, types.Array):
        return int(value.ndim)
    return 0 if isinstance(value, (types.Float, types.Integer)) and not isinstance(value, types.Boolean) else -1


def known(types: Any, value: Any, kind: type) -> Any:
    """The value of an argument of Python type ``kind`` (bool, str) where it is known when compiling: a
    literal, a default left out, or the default itself; else None."""
    if isinstance(value, types.Omitted):
        value = value.value
    elif isinstance(value, types.Literal):
        value = value.literal_value
    return value if isinstance(value, kind) else None
