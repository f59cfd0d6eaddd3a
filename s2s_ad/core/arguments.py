"""Arguments as the generated code sees them: their kinds, read off NumPy values, and their leaves.

Input: a user function and the values of a call's arguments (bound: the
defaults filled in).  Output: ``kinds_of(fn, args)``, one ``kinds.Kind`` per
argument, the key the generated code is specialised and cached on:

* ``NUMBER`` for a number (Python's, NumPy's, another ``numbers.Number``),
  ``TRUTH`` for a bool (a number, but as an index it adds an axis);
* ``Array(rank, dims)`` for an ``np.ndarray``, its dims the pattern of its
  lengths among all the arguments' axes: a length of 1 is ``1``, equal
  lengths share a name (``"a"``, ``"b"``... in order of first appearance),
  so arrays of other lengths in the same pattern share the code;
* ``Constant(value)`` for a string, None or a function (the code is specialised on its
  value: a function by identity);
* for a container (dict, list, tuple, namedtuple, dataclass) its
  ``containers.Tree`` with the kind of each leaf in the leaf's place; the
  first argument read by its attributes where its class defines ``fn``
  (``self`` of ``model.loss``);
* ``UNKNOWN`` for any other object (an opaque value).

A complex number or array, anywhere among the arguments (a container's leaf
too), is refused with a ``TransformError`` (``ComplexArgument``): the rules
are written for real values, and a complex value among them gives numbers
that are no derivative under any convention (``np.abs(z)``'s gradient would
come out real, a complex product stored into a float adjoint would lose its
imaginary part).

This is where NumPy's array type is read; the engine below sees kinds only.
The rest are the moves between the user's arguments and the generated
code's: a container argument flattened to its leaves (``flat``), per-leaf
results put back in the argument's structure (``regroup``, ``leaf_positions``),
and a derivative given its primal's dtype (``like``, ``float_dtype``).
"""
from __future__ import annotations

import functools
import inspect
import numbers
import types
from typing import Any, Callable, Optional, Sequence, Union

import numpy as np

from . import containers
from .errors import TransformError
from .kinds import NUMBER, TRUTH, UNKNOWN, Array, Constant, Kind, Opaque, constant_kind

# The kind of one argument: a kind, or a container's structure with kinds at its leaves.
ArgumentKind = Union[Kind, containers.Tree]


_COMPLEX_HINT = ("s2s_ad's rules are written for real values, and on complex ones they would give numbers "
                 "that are no derivative; pass the real and imaginary parts as two real arrays (np.real(z), "
                 "np.imag(z)) and write the complex arithmetic on them")


class ComplexArgument(TransformError):
    """A complex value among the arguments (``kinds_of`` says which argument it is)."""

    def __init__(self, value: Any) -> None:
        super().__init__(f"a call with {_complex_shown(value)} among its arguments", _COMPLEX_HINT)
        self.value = value


def _complex_shown(value: Any) -> str:
    return "a complex array" if isinstance(value, np.ndarray) else f"the complex number {value!r}"


def _plain_kind(value: Any) -> Optional[Kind]:
    """The kind of a number, an array (its rank alone), a string or None; None for anything else.
    Raises ``ComplexArgument`` for a complex number or array."""
    cls = type(value)
    if cls is np.ndarray:
        if value.dtype.kind == "c":
            raise ComplexArgument(value)
        return Array(value.ndim)
    if cls is bool or cls is np.bool_:
        return TRUTH  # a number, but as an index it adds an axis
    if cls is float or cls is int:
        return NUMBER
    if cls is complex or isinstance(value, (complex, np.complexfloating)):
        raise ComplexArgument(value)
    if isinstance(value, (numbers.Number, np.generic)):
        return NUMBER
    if isinstance(value, FUNCTION_VALUES):
        return Constant(value)
    return constant_kind(value)


# Functions passed as arguments are static, as strings are (jax.jit's static_argnums): the code calls
# the one passed, so another function, or this one redefined (another object), gets code of its own.
FUNCTION_VALUES = (types.FunctionType, types.BuiltinFunctionType, np.ufunc, functools.partial)


def kind_of(value: Any) -> Kind:
    """The kind of one argument, an array's by its rank alone (no lengths: ``kinds_of`` names those);
    ``UNKNOWN`` for a container or any other object."""
    kind = _plain_kind(value)
    return UNKNOWN if kind is None else kind


def kind_tree(value: Any, objects: bool = False) -> ArgumentKind:
    """``kind_of`` a number, array, string or None; for a container, its structure with each leaf's
    kind in place.  ``objects``: a plain object counts as a container of its attributes (``self``)."""
    kind = _plain_kind(value)
    if kind is not None:
        return kind
    structure = containers.structure_of(value, objects=objects)
    if not isinstance(structure, containers.Tree):
        return UNKNOWN
    return containers.relabel(structure, iter(map(kind_of, containers.leaves(value, structure))))


def kinds_of(fn: Callable, args: Sequence[Any]) -> tuple[ArgumentKind, ...]:
    """The kind of each argument of a call of ``fn`` (see the module docstring), arrays' lengths named;
    a ``TransformError`` naming the argument where one is complex or holds a complex value."""
    try:
        return _kinds_of(fn, args)
    except ComplexArgument as found:
        raise _complex_refused(fn, args, found.value) from None


def _complex_refused(fn: Callable, args: Sequence[Any], value: Any) -> TransformError:
    """The refusal of a call whose argument ``value`` (or a leaf of one) is complex."""
    try:
        names = list(inspect.signature(fn).parameters)
    except (TypeError, ValueError):
        names = []
    position = next((i for i, a in enumerate(args) if a is value), None)
    if position is not None and position < len(names):
        which = f"its argument {names[position]}"
    elif position is not None:
        which = f"its argument {position + 1}"
    else:
        which = "a value inside one of its arguments"
    what = "a complex array" if isinstance(value, np.ndarray) else f"the complex number {value!r}"
    code = getattr(fn, "__code__", None)
    return TransformError(
        f"a call of {getattr(fn, '__name__', fn)!r} where {which} is {what}",
        "s2s_ad's rules are written for real values, and on complex ones they would give numbers "
        "that are no derivative; pass the real and imaginary parts as two real arrays (np.real(z), np.imag(z)) and "
        "write the complex arithmetic on them",
        filename=code.co_filename if code is not None else None,
        line=code.co_firstlineno if code is not None else None)


def _kinds_of(fn: Callable, args: Sequence[Any]) -> tuple[ArgumentKind, ...]:
    # The common case, numbers and arrays, is looked up by the arrays' shapes and the others' types
    # (a complex array's key is None: it is never cached, its kind is refused).
    key = tuple([(a.shape if a.dtype.kind != "c" else None) if a.__class__ is np.ndarray else a.__class__
                 for a in args])
    known = _PLAIN_KINDS.get(key)
    if known is not None:
        return known
    plain = [_plain_kind(a) for a in args]
    if None not in plain:
        known = _with_lengths(plain, args)
        if not any(isinstance(k, Constant) for k in plain):  # (a string's kind is its value, not its type)
            if len(_PLAIN_KINDS) > 4096:  # (shapes that keep changing: start again rather than grow)
                _PLAIN_KINDS.clear()
            _PLAIN_KINDS[key] = known
        return known
    kinds = [kind_tree(a) if k is None else k for a, k in zip(args, plain)]
    is_self = False
    if kinds[0] == UNKNOWN or isinstance(kinds[0], containers.Tree):
        name = getattr(fn, "__name__", None)
        found = inspect.getattr_static(type(args[0]), name, None) if name else None
        if getattr(found, "__func__", found) is fn:
            kinds[0] = kind_tree(args[0], objects=True)
            is_self = True
    for i, (a, k) in enumerate(zip(args, kinds)):
        if k == UNKNOWN and not (i == 0 and is_self) and containers.user_object(a):
            kinds[i] = object_kind(a)
    return _with_lengths(kinds, args)


def object_kind(value: Any) -> ArgumentKind:
    """The kind of an object of a class of Python code passed as an argument: the ``containers.Tree``
    of its attributes (``vars(obj)``: numbers and arrays its leaves, as a dataclass's fields), its
    class part of the kind; an ``Opaque`` kind naming why where they cannot be read so
    (``containers.unreadable_class``: ``__slots__``, ``__getattr__``, a property with a setter)."""
    cls = type(value)
    reason = containers.unreadable_class(cls)
    if reason is None and not isinstance(getattr(value, "__dict__", None), dict):
        reason = f"{cls.__name__} objects have no __dict__ of their attributes"
    if reason is None:
        try:
            return kind_tree(value, objects=True)
        except ValueError as exc:  # (an object that holds itself)
            reason = str(exc)
    return Opaque(cls, reason)


_LENGTH_NAMES = "abcdefghijklmnopqrstuvwxyz"
# (shapes of the arrays, types of the other arguments) -> their kinds, for calls of numbers and arrays
_PLAIN_KINDS: dict[tuple, tuple[ArgumentKind, ...]] = {}


def _with_lengths(kinds: list, args: Sequence[Any]) -> tuple[ArgumentKind, ...]:
    """``kinds`` with each array's kind naming its axes' lengths (``Array(2, ("a", "b"))``): a
    length of 1 is ``1``, equal lengths get the same name, in order of first appearance.  The code
    is specialised for this pattern, not for the lengths: arrays of other lengths in the same
    pattern share it."""
    names: dict[int, str] = {}
    for i, value in enumerate(args):
        if value.__class__ is np.ndarray and value.ndim:
            axes: list[Union[str, int]] = []
            for length in value.shape:
                if length == 1:
                    axes.append(1)
                    continue
                name = names.get(length)
                if name is None:
                    count = len(names)
                    name = names[length] = _LENGTH_NAMES[count] if count < 26 else f"n{count}"
                axes.append(name)
            kinds[i] = Array(value.ndim, tuple(axes))
    return tuple(kinds)


def like(primal: Any, gradient: Any) -> Any:
    """``gradient`` with the type of ``primal``: a float32 array gives a float32 gradient, a 0-d array a
    0-d array, a NumPy float32 number a NumPy float32 number, a Python float a float (``np.sum(x)`` of a
    float ``x`` leaves a 0-d array)."""
    if gradient.__class__ is np.ndarray and primal.__class__ is np.ndarray and gradient.dtype == primal.dtype:
        return gradient  # the common case, kept cheap (what the tests below give it)
    if gradient.__class__ is float and primal.__class__ is float:
        return gradient  # (a number's: as cheap)
    if isinstance(primal, float) and isinstance(gradient, np.ndarray) and gradient.shape == ():
        return gradient[()] if gradient.dtype.kind == "f" else gradient
    if gradient is None or not isinstance(primal, (np.ndarray, np.generic)):
        return gradient
    have, want = np.result_type(gradient), primal.dtype
    # only a change of precision: never drop an imaginary part, never round to an integer
    cast = want.kind in "fc" and have != want and (have.kind == want.kind or (have.kind == "f" and want.kind == "c"))
    if isinstance(primal, np.ndarray):
        if cast:
            return np.asarray(gradient, dtype=want)
        return gradient if isinstance(gradient, np.ndarray) else np.asarray(gradient)
    return want.type(gradient) if cast else gradient


def float_dtype(value: Any) -> np.dtype:
    """The dtype a derivative by ``value`` is given: its own floating dtype (a float32 argument gives
    float32 blocks, as JAX), float64 for Python numbers and anything else."""
    dtype = np.result_type(value) if isinstance(value, (np.ndarray, np.generic)) else np.dtype(float)
    return dtype if dtype.kind == "f" else np.dtype(float)


def flat(args: tuple, kinds: Sequence[ArgumentKind]) -> tuple:
    """The arguments of generated code: each container argument replaced by its leaves."""
    if not any(isinstance(k, containers.Tree) for k in kinds):
        return args
    return tuple(leaf for a, k in zip(args, kinds)
                 for leaf in (containers.leaves(a, k) if isinstance(k, containers.Tree) else (a,)))


def regroup(leaves: Sequence[Any], kinds: Sequence[ArgumentKind]) -> list:
    """Per-leaf values (gradients, tangents) back into one value per parameter, containers rebuilt."""
    out, i = [], 0
    for kind in kinds:
        if isinstance(kind, containers.Tree):
            n = containers.count(kind)
            out.append(containers.unflatten(kind, leaves[i:i + n]))
        else:
            n = 1
            out.append(leaves[i])
        i += n
    return out


def leaf_positions(params: list[str], kinds: Sequence[ArgumentKind], names: Sequence[str]) -> list[int]:
    """Where the leaves of the parameters ``names`` are among the generated code's parameters."""
    starts, at = {}, 0
    for p, k in zip(params, kinds):
        n = containers.count(k) if isinstance(k, containers.Tree) else 1
        starts[p] = range(at, at + n)
        at += n
    return [i for name in names for i in starts[name]]


def differentiable(value: Any) -> bool:
    """True for values that carry derivatives: floats and float (or complex) arrays."""
    if isinstance(value, (bool, np.bool_, str)) or value is None:
        return False
    if isinstance(value, (int, np.integer)):
        return False
    return np.issubdtype(np.result_type(value), np.inexact) if kind_of(value) != UNKNOWN else False


def refuse_integer_wrt(what: str, fn: Callable, name: str, value: Any) -> None:
    """Refuse to differentiate ``fn`` by its argument ``name`` where ``value`` is an integer or a
    boolean (Python's, NumPy's, or an array of them), as JAX's ``grad`` does: such an argument has no
    derivative, and a gradient of it would be a made-up number.  ``what``: ``grad``, ``jacobian``..."""
    if isinstance(value, (bool, np.bool_)):
        kind, instead = "a boolean", f"a float ({float(value)!r})"
    elif isinstance(value, (int, np.integer)):
        kind, instead = f"an integer ({type(value).__name__})", f"a float ({float(value)!r})"
    elif isinstance(value, np.ndarray) and value.dtype.kind in "biu":
        kind = f"{'a boolean' if value.dtype.kind == 'b' else 'an integer'} array ({value.dtype})"
        instead = f"a float array ({name}.astype(float))"
    else:
        return
    shown = repr(value) if not isinstance(value, np.ndarray) else f"array of shape {value.shape}"
    raise TypeError(f"{what} of {getattr(fn, '__name__', fn)!r} with respect to {name}: {name} = {shown} is "
                    f"{kind}, which has no derivative ({what} takes float arguments alone, as JAX's does); "
                    f"pass {instead}, or leave {name} out of wrt")


def checked_tangent(fn: Callable, name: str, primal: Any, tangent: Any) -> Any:
    """``jvp``'s tangent of ``primal`` as the code takes it: None where ``primal`` carries no
    derivative (its tangent must then be None or zero), else of the primal's shape (never
    broadcast), as floats (an integer tangent would truncate what is written into it)."""
    if not differentiable(primal):
        if tangent is not None and np.any(np.asarray(tangent) != 0):
            raise ValueError(f"jvp of {fn.__name__}: {name} = {primal!r} carries no derivative "
                             f"(it is not a float), so its tangent must be None or zero")
        return None
    if np.shape(tangent) != np.shape(primal):
        raise ValueError(f"jvp of {fn.__name__}: the tangent of {name} has shape {np.shape(tangent)}, "
                         f"but {name} has shape {np.shape(primal)}; tangents are never broadcast")
    if isinstance(tangent, np.ndarray) or isinstance(primal, np.ndarray):
        return np.asarray(tangent, dtype=np.result_type(tangent, primal, 1.0))
    return complex(tangent) if np.iscomplexobj(tangent) else float(tangent)
