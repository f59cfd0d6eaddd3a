"""What the analysis knows of a value: its kind, as a small type with a join.

``Number`` (a Python or NumPy number), ``Array(rank)`` (an ndarray of that
rank; ``Array(None)``: a number or an array, rank unknown), ``Sequence(items, display)`` (a tuple or list whose
length and items' kinds are known) and ``Unknown``.  Facts about a variable
assigned on several paths (a branch's two sides, a loop's entry and its
back edge) are the ``join`` of the facts of its sources: the most that holds
on every path.  In particular a number joined with an array is ``Array(None)``
("a number or an array"), never a number: the generators then fall back to
what is right at run time (``unbroadcast``, ``zeros_like``).

The rest of the pipeline (argument kinds from ``api.py``, the kinds a
callee is specialised for) speaks in strings: ``"scalar"``, ``"array<N>"``,
a tuple of those, or None; ``from_string`` and ``to_string`` convert at
that boundary.  A string argument, or None, is ``"const:<repr>"``
(``constant_kind``): the code is specialised on its value, which the
lowering reads as a constant (``LOSSES[kind]``, ``if kind == "l2"``).
"""
from __future__ import annotations

import ast
from dataclasses import dataclass
from typing import Any, Optional


@dataclass(frozen=True)
class Kind:
    """A fact about a value; the base class is never instantiated."""

    def join(self, other: "Kind") -> "Kind":
        """The most that holds of a value that is either ``self`` or ``other``."""
        return self if self == other else UNKNOWN


@dataclass(frozen=True)
class Unknown(Kind):
    def __str__(self) -> str:
        return "unknown"


@dataclass(frozen=True)
class Number(Kind):
    def join(self, other: Kind) -> Kind:
        if isinstance(other, Array):
            return Array(None)
        return self if self == other else UNKNOWN

    def __str__(self) -> str:
        return "number"


@dataclass(frozen=True)
class Array(Kind):
    rank: Optional[int] = None

    def join(self, other: Kind) -> Kind:
        if isinstance(other, Array):
            return self if self.rank == other.rank else Array(None)
        return Array(None) if isinstance(other, Number) else UNKNOWN

    def __str__(self) -> str:
        return "number or array" if self.rank is None else f"array of rank {self.rank}"


@dataclass(frozen=True)
class Sequence(Kind):
    """A tuple or list display (``display`` "tuple" or "list") of known length."""

    items: tuple[Kind, ...]
    display: str = "tuple"

    def join(self, other: Kind) -> Kind:
        if isinstance(other, Sequence) and other.display == self.display and len(other.items) == len(self.items):
            return Sequence(tuple(a.join(b) for a, b in zip(self.items, other.items)), self.display)
        return UNKNOWN

    def __str__(self) -> str:
        inner = ", ".join(map(str, self.items))
        return f"({inner}{',' if len(self.items) == 1 else ''})" if self.display == "tuple" else f"[{inner}]"


UNKNOWN = Unknown()
NUMBER = Number()


def from_string(kind: Any) -> Kind:
    """``"scalar"`` / ``"array<N>"`` / a tuple of those / None, as a ``Kind``."""
    if kind == "scalar":
        return NUMBER
    if isinstance(kind, str) and kind.startswith("array"):
        return Array(int(kind[5:])) if kind[5:].isdigit() else Array(None)
    if isinstance(kind, tuple):
        return Sequence(tuple(map(from_string, kind)), "tuple")
    return UNKNOWN


def to_string(kind: Kind) -> Any:
    """The inverse of ``from_string``: what a callee is told (None where nothing useful is known)."""
    if isinstance(kind, Number):
        return "scalar"
    if isinstance(kind, Array) and kind.rank is not None:
        return f"array{kind.rank}"
    if isinstance(kind, Sequence) and kind.display == "tuple":
        return tuple(map(to_string, kind.items))
    return None


def rank(kind: Kind) -> Optional[int]:
    """0 for a number, the rank of an array of known rank, else None."""
    if isinstance(kind, Number):
        return 0
    if isinstance(kind, Array):
        return kind.rank
    return None


_CONSTANT = "const:"


def constant_kind(value: Any) -> Optional[str]:
    """The kind of a value the code is specialised on (a ``str`` or None, as JAX's static
    arguments): ``"const:'l2'"``; None for any other value."""
    if value is None or type(value) is str:
        return f"{_CONSTANT}{value!r}"
    return None


def constant_value(kind: Any) -> tuple[bool, Any]:
    """``(True, value)`` for a kind made by ``constant_kind``, else ``(False, None)``."""
    if isinstance(kind, str) and kind.startswith(_CONSTANT):
        return True, ast.literal_eval(kind[len(_CONSTANT):])
    return False, None
