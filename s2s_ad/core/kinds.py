"""What the analysis knows of a value: its kind, as a small type with a join.

``Number`` (a Python or NumPy number), ``Array(rank)`` (an array of that
rank; ``Array(None)``: a number or an array, rank unknown), ``Sequence(items, display)`` (a tuple or list whose
length and items' kinds are known) and ``Unknown``.  Facts about a variable
assigned on several paths (a branch's two sides, a loop's entry and its
back edge) are the ``join`` of the facts of its sources: the most that holds
on every path.  In particular a number joined with an array is ``Array(None)``
("a number or an array"), never a number: the generators then fall back to
what is right at run time (``unbroadcast``, ``zeros_like``).

An array's kind may also know its ``dims``: one entry per axis, a symbol
(``"a"``, ``"b"``...) standing for a length that is not 1, the number 1, or
None where nothing is known.  Two axes with the same symbol have the same
length on every run: the code is specialised for the pattern of equal
lengths among the arguments' axes (``x`` of shape (64, 20) and ``w`` of
shape (20, 30) are ``Array(2, ("a", "b"))`` and ``Array(2, ("b", "c"))``,
printed ``array of shape (a, b)``), and the functions
below carry them through broadcasting, reductions and products.  Arrays
whose dims are all known have provably equal shapes where the dims are
equal: the reverse generator then needs no run-time ``unbroadcast``.

The same objects describe the arguments a function is specialised for, from
the argument to the generated header (``arguments.kinds_of`` reads them off
the values): ``NUMBER`` (``TRUTH`` for a bool), ``Array(rank, dims)`` with
the pattern of equal lengths, a ``Constant`` for a string or None (the code
is specialised on its value, which the lowering reads as a constant:
``LOSSES[kind]``, ``if kind == "l2"``), ``UNKNOWN`` for any other object, and
for a container its ``containers.Tree`` with these kinds at its leaves.
They are frozen and hashable: they key the caches of generated code.  A
callee is told the kinds of its arguments as ``callee_kind`` reduces them.

The kind of a derivative (a tangent, an adjoint) is its own notion,
``derivative_kind``: today the primal's kind, since a derivative has the
shape of its value.  A batched (vector-mode) tangent will carry a leading
axis of its own, so every place that decides what a tangent or an adjoint
is asks ``derivative_kind`` rather than reading the primal's kind.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Optional, Union

from . import language

Dim = Union[str, int, None]  # a symbol (a length that is not 1), 1, or None (unknown)
Dims = Optional[tuple]  # one Dim per axis; None where not even the rank is known


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
class Opaque(Unknown):
    """An argument that is an object of a class of Python code whose attributes cannot be read as a
    record (``containers.unreadable_class`` says why: ``__slots__``, ``__getattr__``, a property with a
    setter): unknown, as any other object, but a read of its attributes or methods is refused with
    ``reason``.  Keyed on the class."""

    cls: type = object
    reason: str = field(default="", compare=False)

    def __str__(self) -> str:
        return "unknown"


@dataclass(frozen=True)
class Number(Kind):
    truth: bool = False  # it may be a truth value (True, np.True_): as an index it adds an axis, not picks one

    def join(self, other: Kind) -> Kind:
        if isinstance(other, Array):
            return Array(None)
        if isinstance(other, Number):
            return self if self.truth or not other.truth else other
        return UNKNOWN

    def __str__(self) -> str:
        return "number or truth value" if self.truth else "number"


@dataclass(frozen=True)
class Array(Kind):
    rank: Optional[int] = None
    dims: Dims = None  # (see the module docstring) None: no axis's length is known

    def __post_init__(self) -> None:
        if self.dims is not None and (self.rank != len(self.dims) or all(d is None for d in self.dims)):
            object.__setattr__(self, "dims", None)  # one form for "nothing known": equal kinds compare equal

    def join(self, other: Kind) -> Kind:
        if isinstance(other, Array):
            if self.rank != other.rank:
                return Array(None)
            if self.dims is None or other.dims is None:
                return Array(self.rank)
            return Array(self.rank, tuple(a if a == b else None for a, b in zip(self.dims, other.dims)))
        return Array(None) if isinstance(other, Number) else UNKNOWN

    def __str__(self) -> str:
        if self.rank is None:
            return "number or array"
        if self.dims is None:
            return f"array of rank {self.rank}"
        return f"array of shape ({', '.join('?' if d is None else str(d) for d in self.dims)}{',' if self.rank == 1 else ''})"

    @property
    def shape_known(self) -> bool:
        """True where every axis's length is a symbol or 1: equal such dims, equal shapes."""
        return self.dims is not None and None not in self.dims


@dataclass(frozen=True)
class Sequence(Kind):
    """A tuple or list display (``display`` "tuple" or "list") of known length."""

    items: tuple[Kind, ...]
    display: str = "tuple"
    depth: int = field(default=1, compare=False, repr=False)  # how many sequences deep it nests

    def __post_init__(self) -> None:
        # Sequences nest at most MAX_NESTING deep; what lies deeper is unknown.  The kinds then form a
        # lattice of finite height, so every fixed point settles: a tape that holds the tape of a
        # recursive call of the same function (tape = (c, tape_of_the_callee)) would otherwise nest one
        # level deeper at each round.  Unknown is always sound: the code asks at run time.
        inner = max((item.depth for item in self.items if isinstance(item, Sequence)), default=0)
        if inner >= MAX_NESTING:
            items = tuple(UNKNOWN if isinstance(item, Sequence) and item.depth >= MAX_NESTING else item
                          for item in self.items)
            object.__setattr__(self, "items", items)
            inner = max((item.depth for item in items if isinstance(item, Sequence)), default=0)
        object.__setattr__(self, "depth", inner + 1)

    def join(self, other: Kind) -> Kind:
        if isinstance(other, Sequence) and other.display == self.display and len(other.items) == len(self.items):
            return Sequence(tuple(a.join(b) for a, b in zip(self.items, other.items)), self.display)
        return UNKNOWN

    def __str__(self) -> str:
        inner = ", ".join(map(str, self.items))
        return f"({inner}{',' if len(self.items) == 1 else ''})" if self.display == "tuple" else f"[{inner}]"


UNKNOWN = Unknown()
MAX_NESTING = 8  # (see Sequence)
NUMBER = Number()
TRUTH = Number(truth=True)


def rank(kind: Kind) -> Optional[int]:
    """0 for a number, the rank of an array of known rank, else None."""
    if isinstance(kind, Number):
        return 0
    if isinstance(kind, Array):
        return kind.rank
    return None


# -- dims through operations ---------------------------------------------------

def dims_of(kind: Kind) -> Dims:
    """The dims of a value of this kind: () for a number, None where unknown."""
    if isinstance(kind, Number):
        return ()
    if isinstance(kind, Array) and kind.rank is not None:
        return kind.dims if kind.dims is not None else (None,) * kind.rank
    return None


def broadcast_dims(*operands: Dims) -> Dims:
    """The dims of a result NumPy broadcasts from operands of these dims.

    Per axis (aligned on the right), the result's length is the one length
    other than 1 among the operands (or NumPy raises): a symbol if any
    operand has one there, whatever the unknown ones are; 1 if every operand
    has 1; else unknown.  Two different symbols there cannot broadcast (a
    run raises), so nothing is claimed.
    """
    known = [d for d in operands if d is not None]
    if len(known) != len(operands):
        return None
    rank = max((len(d) for d in known), default=0)
    result: list[Dim] = []
    for axis in range(rank):
        here = [d[axis - rank + len(d)] for d in known if axis - rank + len(d) >= 0]
        symbols = {d for d in here if d is not None and d != 1}
        if len(symbols) == 1:
            result.append(symbols.pop())
        elif not symbols and all(d == 1 for d in here):
            result.append(1)
        else:
            result.append(None)
    return tuple(result)


def reduced_dims(dims: Dims, axis: Any, keepdims: Any) -> Dims:
    """The dims of a reduction (``np.sum(a, axis, keepdims=...)``) of an array of these dims;
    ``axis`` an int, a tuple of ints or None, ``keepdims`` a bool (else unknown)."""
    if dims is None or not language.is_truth_value(keepdims):
        return None
    rank = len(dims)
    if axis is None:
        axes = set(range(rank))
    else:
        axes_given = axis if isinstance(axis, tuple) else (axis,)
        if not all(isinstance(a, int) and not isinstance(a, bool) and -rank <= a < rank for a in axes_given):
            return None
        axes = {a % rank for a in axes_given}
    if keepdims:
        return tuple(1 if i in axes else d for i, d in enumerate(dims))
    return tuple(d for i, d in enumerate(dims) if i not in axes)


def matmul_dims(a: Dims, b: Dims) -> Dims:
    """The dims of ``a @ b`` (NumPy's rules for 1-d operands; leading axes broadcast)."""
    if a is None or b is None or not a or not b:
        return None
    if len(a) == 1 and len(b) == 1:
        return ()
    if len(a) == 1:
        return b[:-2] + b[-1:]
    if len(b) == 1:
        return a[:-1]
    batch = broadcast_dims(a[:-2], b[:-2])
    return None if batch is None else batch + (a[-2], b[-1])


def transposed_dims(a: Dims) -> Dims:
    """The dims of ``np.transpose(a)`` (axes reversed)."""
    return None if a is None else tuple(reversed(a))


def same_dims(a: Dims, *others: Any, **keywords: Any) -> Dims:
    """The dims of a result shaped as its first argument, whatever the others (``np.roll``)."""
    return a


def same_rank_dims(a: Dims, *others: Any, **keywords: Any) -> Dims:
    """The dims of a result of its first argument's rank whose lengths are not known (``np.pad``)."""
    return None if a is None else (None,) * len(a)


@dataclass(frozen=True)
class Constant(Kind):
    """A string, None or function argument, which the code is specialised on (as JAX's static arguments): its
    value is part of the kind, so code is found by the value, never by the argument's type alone."""

    value: Any  # a str, None or a function (arguments.FUNCTION_VALUES), compared by identity

    def __str__(self) -> str:
        return repr(self.value)


def constant_kind(value: Any) -> Optional[Constant]:
    """The kind of a value the code is specialised on (a ``str`` or None; a function, by
    ``arguments._plain_kind``); None for any other value."""
    if value is None or type(value) is str:
        return Constant(value)
    return None


def callee_kind(kind: Kind, dims: bool = False) -> Kind:
    """What a callee is told of an argument of this kind: a number or truth value, an array's rank
    (with its dims where ``dims``: a callee's code is specialised by ranks alone, but what it returns
    is found for the dims it is called with, ``pipeline.result_kind``), a tuple of those; else unknown."""
    if isinstance(kind, Number):
        return kind
    if isinstance(kind, Array) and kind.rank is not None:
        return kind if dims or kind.dims is None else Array(kind.rank)
    if isinstance(kind, Sequence) and kind.display == "tuple":
        return Sequence(tuple(callee_kind(item, dims) for item in kind.items), "tuple")
    return UNKNOWN


def as_fact(kind: Any) -> Kind:
    """What the analysis starts from for a parameter of this argument kind: a number, an array or a
    tuple as it is; a constant (read as a constant by the lowering) or anything else unknown."""
    return kind if isinstance(kind, (Number, Array, Sequence)) else UNKNOWN


def derivative_kind(primal: Kind) -> Kind:
    """The kind of a derivative (tangent or adjoint) of a value of kind ``primal``: the primal's own
    today (see the module docstring: a batched tangent will carry a leading axis)."""
    return primal


def argument_text(kind: Any) -> str:
    """How the header of generated code names the kind of an argument it is specialised for
    (``x array of shape (a, b)``); a container's kind is written by ``containers.describe``."""
    if isinstance(kind, Number):
        return "truth value" if kind.truth else "number"
    if isinstance(kind, Array):
        if kind.rank is None:
            return "array"
        return str(kind) if kind.dims is not None else f"{kind.rank}-d array"
    if isinstance(kind, Constant):
        return str(kind)
    return "any"
