"""Batched forms: how vector mode runs an operation on ``p`` tangents (or adjoints) at once.

Input: declarations from the templates, beside the rule whose tangent or adjoint calls the operation
(a NumPy function such as ``np.cumsum``, or a template's helper such as ``cumsum_grad``)::

    @batched(np.cumsum, directions=("a",))
    def cumsum_batched(a, axis=None, dtype=None, out=None):
        ...                     # ``a`` shaped (p,) + a's shape: return (p,) + the result's shape

Output: ``form_of(fn)``, the declared ``BatchedForm`` or None.  The vector-mode target
(``targets/batched/rules.py``) calls the form with the arguments as given, each argument named in
``directions`` replaced by its ``p`` directions on a leading axis (the others as the one-direction
code has them), and wraps what it returns (an array, or a list or tuple of arrays) as directions
again.  A form must give, direction by direction, what the operation gives; where it cannot (an
option it does not take) it raises ``TypeError``, and the sweep then runs one direction per pass.
Nothing here runs a form or imports NumPy: the registry holds pure data, as for ``compiled``.
"""
from __future__ import annotations

import inspect
from dataclasses import dataclass
from typing import Any, Callable, Optional

from .registry import load_templates


@dataclass(frozen=True)
class BatchedForm:
    """``form`` runs ``fn`` on the arguments ``directions`` (parameter names) given with a leading axis of
    directions; ``signature`` is the form's, to bind a call's arguments by name."""

    fn: Any
    form: Callable[..., Any]
    directions: tuple[str, ...]
    signature: inspect.Signature


_BATCHED: dict[Any, BatchedForm] = {}


def batched(fn: Any, directions: tuple[str, ...]) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Declare ``form`` as ``fn``'s batched form (see the module's docstring); the form's parameters are named
    as ``fn``'s, every name of ``directions`` among them."""
    def register(form: Callable[..., Any]) -> Callable[..., Any]:
        signature = inspect.signature(form)
        missing = [d for d in directions if d not in signature.parameters]
        if missing:
            raise TypeError(f"the batched form {form.__name__} has no parameter {missing[0]!r} of its directions")
        _BATCHED[fn] = BatchedForm(fn, form, tuple(directions), signature)
        return form
    return register


def form_of(fn: Any) -> Optional[BatchedForm]:
    """The batched form declared for ``fn``, or None (an unhashable ``fn`` has none)."""
    load_templates()
    try:
        return _BATCHED.get(fn)
    except TypeError:
        return None


def declared_forms() -> dict[Any, BatchedForm]:
    """Every batched form declared, by operation (the templates loaded first)."""
    load_templates()
    return dict(_BATCHED)


def data_axis(axis: int, ndim: int) -> int:
    """The axis of a form's data (after the leading axis of directions) for ``axis`` of a value of rank
    ``ndim``: ``axis % ndim + 1``; out of range raises ``TypeError`` (refused: NumPy's own error then)."""
    axis = int(axis)
    if not -ndim <= axis < ndim:
        raise TypeError(f"axis {axis} out of range for rank {ndim}")
    return axis % ndim + 1
