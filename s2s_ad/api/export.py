"""A gradient written as a module that runs without s2s_ad (``s2s-ad export FILE:FUNC``).

Input: a user function, the parameters to differentiate by, and optionally example arguments (the
code is then specialised for their kinds, as a call with them would be; without, it is the code
for arguments of unknown kinds, which works for any numbers and arrays).
Output: ``exported(fn, wrt, args)``, the text of a Python module that needs NumPy and the standard
library alone:

* a docstring naming the source file, function and line, ``wrt``, the argument kinds, the s2s_ad
  version and the date, and how to call what follows;
* every helper of s2s_ad's the generated code calls (``runtime.*``, the templates' helpers), and
  what they call in turn, written out from their source (``inline.py``);
* the split adjoint of each of the user's helpers the code calls, as generated (``forward_helper``,
  ``backward_helper``) with a class ``d_helper`` holding the two, as the generated code calls them;
* the adjoint itself (``d_f(params..., d_out=1.0)``, returning the value and the gradient);
* ``grad_f`` and ``value_and_grad_f`` with the user's parameters and defaults, returning what
  ``s2s_ad.grad`` and ``s2s_ad.value_and_grad`` return (a gradient of its argument's dtype, an
  array of its own), and refusing a call whose arguments are not of the kinds the code was made for.

What cannot be written so (a container argument, a helper without source or one that needs s2s_ad,
a value with no literal) raises ``ExportError`` before anything is returned.
"""
from __future__ import annotations

import datetime
import inspect
import linecache
import numbers
import types
from typing import Any, Callable, Optional, Sequence

import numpy as np

from ..core import containers
from ..core.arguments import kinds_of, like
from ..driver.cache import SplitAdjoint, TangentCallee
from ..core.errors import ExportError
from ..core.identity import IdentitySet
from ..frontend.inline import Piece, assemble, literal_text
from ..core.kinds import UNKNOWN, Array, Constant, Number, Unknown
from ..targets.ownership import handed_out
from ..driver.pipeline import _kind_note, build_reverse
from ..targets.target import NumPyTarget
from ..driver.reach import is_generated
from ..core.version import __version__


def exported(fn: Callable, wrt: Optional[Sequence[str]] = None, args: Optional[tuple] = None,
             today: Optional[datetime.date] = None) -> str:
    """The module text (see the module docstring) of the gradient of ``fn`` by ``wrt`` (parameter
    names; the first parameter by default), specialised for ``args`` where given."""
    try:
        return _exported(fn, wrt, args, today)
    except ExportError as exc:
        code = getattr(fn, "__code__", None)
        where = f" ({code.co_filename}:{code.co_firstlineno})" if code is not None else ""
        raise ExportError(f"cannot export the gradient of {getattr(fn, '__qualname__', fn)}{where}: {exc}") from None


def _exported(fn: Callable, wrt: Optional[Sequence[str]], args: Optional[tuple],
              today: Optional[datetime.date]) -> str:
    if not isinstance(fn, types.FunctionType):
        raise ExportError(f"{fn!r} is not a plain function defined with def: only those are exported")
    signature = inspect.signature(fn)
    params = list(signature.parameters)
    for p in signature.parameters.values():
        if p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD):
            raise ExportError(f"{fn.__name__} takes *{p.name}: exported gradients take named parameters")
    names = tuple(wrt) if wrt else tuple(params[:1])
    for name in names:
        if name not in params:
            raise ValueError(f"--wrt {name}: {fn.__name__} has no parameter {name!r} (it has {', '.join(params)})")
    kinds = _kinds(fn, signature, args)
    for name in names:
        kind = kinds[params.index(name)]
        if isinstance(kind, Constant):
            raise ExportError(f"--wrt {name}: {name} = {kind.value!r} has no derivative (the code is specialised on "
                              "its value); differentiate with respect to a number or array")
    for p in signature.parameters.values():
        if args is None and isinstance(p.default, (list, tuple, dict)):
            raise ExportError(f"the default of {p.name} is a {type(p.default).__name__}, which s2s_ad reads as a "
                              "container (its items one by one): exported gradients take numbers and arrays; "
                              "make its items parameters of their own")
    built = build_reverse(fn, names, kinds, target=PORTABLE)
    adjoint = built.function
    if adjoint is None or len(inspect.signature(adjoint).parameters) != len(params) + 1:
        raise ExportError(f"the adjoint of {fn.__name__} does not take its parameters one for one")
    # (the order the names are given in: the user's functions, then the generated code's; the text
    # comes out in the order of what reads what)
    body = assemble([_wrappers(fn, signature, names, kinds, adjoint)] + _generated_modules(adjoint))
    return _header(fn, names, kinds, adjoint, today) + body


def _kinds(fn: Callable, signature: inspect.Signature, args: Optional[tuple]) -> tuple:
    """The kinds the code is specialised for: those of ``args`` (bound, defaults filled in), or
    unknown; a container refused."""
    if args is None:
        return (UNKNOWN,) * len(signature.parameters)
    try:
        bound = signature.bind(*args)
    except TypeError as exc:
        raise ValueError(f"--args do not fit {fn.__name__}{signature}: {exc}") from None
    bound.apply_defaults()
    kinds = kinds_of(fn, tuple(bound.arguments.values()))
    for name, kind in zip(signature.parameters, kinds):
        if isinstance(kind, containers.Tree):
            raise ExportError(f"{name} is a container ({containers.describe(kind)}): exported gradients take "
                              "numbers, arrays, strings and None; export the function that takes the leaves")
    return kinds


class PortableNumPyTarget(NumPyTarget):
    """The NumPy target for code that may run under another NumPy than the one it was made with:
    no spread adjoint folded into a 0-d array (``fills.py``), whose products NumPy 1 types by the
    value, not the dtype (float32 arrays would then compute in float32 where the code made on
    NumPy 2 computes in float64)."""

    name = "numpy-portable"

    def passes(self, form: str) -> tuple[str, ...]:
        return tuple(p for p in super().passes(form) if p != "fold_fills")


PORTABLE = PortableNumPyTarget()


# -- the generated modules ----------------------------------------------------------------------


def _generated_modules(adjoint: Callable) -> list[Piece]:
    """The generated code ``adjoint`` runs, one piece per generated module, and a class for each
    helper's split adjoint; ``adjoint``'s module first."""
    pieces: dict[str, Piece] = {}
    classes: list[Piece] = []
    pending = [adjoint]
    while pending:
        function = pending.pop()
        code = getattr(function, "__code__", None)
        if code is None or code.co_filename in pieces:
            continue
        space = getattr(function, "__globals__", {})
        defines = {name: value for name, value in space.items()
                   if is_generated(value) and value.__code__.co_filename == code.co_filename}
        reads = {name: value for name, value in space.items() if name != "__builtins__" and name not in defines}
        text = "".join(linecache.getlines(code.co_filename))
        if not text:
            raise ExportError(f"the text of generated code {code.co_filename} is no longer known")
        pieces[code.co_filename] = Piece(text, defines, reads)
        for value in reads.values():
            if isinstance(value, TangentCallee):
                raise ExportError(f"{value!r}: forward-mode code is not exported")
            if isinstance(value, SplitAdjoint):
                if value.forward is None or value.backward is None:
                    raise ExportError(f"{value!r} is not built")
                classes.append(_split_class(value))
                pending += [value.forward, value.backward]
    return list(pieces.values()) + _unique(classes)


def _unique(pieces: list[Piece]) -> list[Piece]:
    seen = IdentitySet()
    out = []
    for piece in pieces:
        (obj,) = piece.defines.values()
        if obj not in seen:
            seen.add(obj)
            out.append(piece)
    return out


def _split_class(split: SplitAdjoint) -> Piece:
    """The class generated code calls a helper's parts through: ``d_helper.forward(...)``."""
    forward, backward = split.forward, split.backward
    assert forward is not None and backward is not None
    text = (f"class {split.name}:\n"
            f'    """The split adjoint of {split.qualname}: forward(*args, tape) returns (result, tape),\n'
            f'    backward(d_result, tape) returns (*adjoints of the arguments, tape)."""\n'
            f"    forward = staticmethod({forward.__name__})\n"
            f"    backward = staticmethod({backward.__name__})\n")
    return Piece(text, {split.name: split}, {forward.__name__: forward, backward.__name__: backward})


# -- the functions with the user's parameters -----------------------------------------------------


def argument_pattern(args: tuple) -> tuple:
    """Each argument as s2s_ad reads its kind (``arguments.kinds_of``), for the check of exported
    code: "number" ("truth" for a bool), an array's axes (1 for a length of 1, equal lengths named
    alike, "a", "b"... in order of first appearance), ("value", v) for a string or None, "any" else."""
    names: dict = {}
    pattern: list = []
    for value in args:
        if type(value) is np.ndarray:
            axes: list = []
            for length in value.shape:
                if length != 1 and length not in names:
                    count = len(names)
                    names[length] = "abcdefghijklmnopqrstuvwxyz"[count] if count < 26 else f"n{count}"
                axes.append(1 if length == 1 else names[length])
            pattern.append(tuple(axes))
        elif type(value) is bool or type(value) is np.bool_:
            pattern.append("truth")
        elif type(value) is float or type(value) is int or isinstance(value, (numbers.Number, np.generic)):
            pattern.append("number")
        elif value is None or type(value) is str:
            pattern.append(("value", value))
        else:
            pattern.append("any")
    return tuple(pattern)


def check_arguments(args: tuple, expected: Optional[tuple], names: tuple, wrt: tuple) -> None:
    """Raise TypeError where exported code meets arguments it was not made for: with ``expected``
    (``s2s-ad export --args``), arguments of other kinds (``argument_pattern``); without, a
    container (the code takes numbers and arrays; s2s_ad flattens containers, this code does not);
    and a string or None to differentiate by (``wrt``), which has no derivative."""
    got = argument_pattern(args)
    for name, value, have, want in zip(names, args, got, expected or (None,) * len(args)):
        if name in wrt and (value is None or isinstance(value, str)):
            raise TypeError(f"{name} = {value!r} has no derivative: differentiate with respect to a number or array")
        if want is None and isinstance(value, (list, tuple, dict)):
            raise TypeError(f"{name}: a {type(value).__name__}; this exported code takes numbers and arrays")
        if want is not None and want != "any" and have != want:
            raise TypeError(f"{name}: exported for {want!r} (the pattern of the arguments' kinds and lengths "
                            f"given to s2s-ad export --args), called with {have!r}; export again for these "
                            "arguments, or without --args for code that takes any")


def _expected(kind: Any) -> Any:
    """``argument_pattern``'s entry for an argument of this kind."""
    if isinstance(kind, Number):
        return "truth" if kind.truth else "number"
    if isinstance(kind, Array) and kind.rank == 0:
        return ()
    if isinstance(kind, Array) and kind.dims is not None:
        return tuple(kind.dims)
    if isinstance(kind, Constant):
        return ("value", kind.value)
    if isinstance(kind, Unknown):
        return "any"
    raise ExportError(f"an argument of kind {kind} cannot be checked by exported code")


def _wrappers(fn: Callable, signature: inspect.Signature, wrt: tuple[str, ...], kinds: tuple,
              adjoint: Callable) -> Piece:
    """``value_and_grad_<f>`` and ``grad_<f>``: the user's parameters, the adjoint's result as the API
    hands it out (``like``, ``handed_out``), the arguments checked (``check_arguments``)."""
    params = list(signature.parameters)
    name = fn.__name__
    taken = set(params)
    fresh = lambda base: next(f"{base}_{n}" if n else base for n in range(len(taken) + 1)
                              if (f"{base}_{n}" if n else base) not in taken)
    value, gradient = fresh("value"), fresh("gradient")
    reads: dict[str, Any] = {}

    def read(base: str, obj: Any) -> str:
        spelled = fresh(base)
        taken.add(spelled)
        reads[spelled] = obj
        return spelled

    np_name, adjoint_name = read("np", np), read(adjoint.__name__, adjoint)
    like_name, handed_name, check_name = read("like", like), read("handed_out", handed_out), read(
        "check_arguments", check_arguments)
    arguments = ", ".join(params)
    as_tuple = f"({arguments},)" if len(params) == 1 else f"({arguments})"
    expected = None if all(k == UNKNOWN for k in kinds) else tuple(_expected(k) for k in kinds)
    by = ", ".join(wrt)
    if len(wrt) == 1:
        result = f"{handed_name}({like_name}({wrt[0]}, {gradient}), {as_tuple})"
    else:
        parts = ", ".join(f"{like_name}({w}, {gradient}[{i}])" for i, w in enumerate(wrt))
        result = f"{handed_name}(({parts}), {as_tuple})"
    text = (f"def value_and_grad_{name}({_parameters(signature)}):\n"
            f'    """({name}({arguments}), d {name} / d ({by})), as s2s_ad.value_and_grad({name}, wrt=...) '
            f'returns them."""\n'
            f"    {check_name}({as_tuple}, {literal_text(expected)}, {tuple(params)!r}, {tuple(wrt)!r})\n"
            f"    {value}, {gradient} = {adjoint_name}({arguments})\n"
            f"    if {np_name}.ndim({value}) != 0:\n"
            f"        raise TypeError(f\"{name} returned an array of shape {{{np_name}.shape({value})}}, not a number\")\n"
            f"    return {value}, {result}\n\n\n"
            f"def grad_{name}({_parameters(signature)}):\n"
            f'    """d {name} / d ({by}), as s2s_ad.grad({name}, wrt=...) returns it."""\n'
            f"    return value_and_grad_{name}({_passed(signature)})[1]\n")
    return Piece(text, {f"value_and_grad_{name}": _Defined(), f"grad_{name}": _Defined()}, reads)


class _Defined:
    """What stands for a function the exported module's own text defines (a name to keep)."""


def _passed(signature: inspect.Signature) -> str:
    """The user's parameters passed on as they were given (a keyword-only one by its name)."""
    return ", ".join(f"{p.name}={p.name}" if p.kind is p.KEYWORD_ONLY else p.name
                     for p in signature.parameters.values())


def _parameters(signature: inspect.Signature) -> str:
    """The user's parameter list, defaults written as literals."""
    parts: list[str] = []
    previous = None
    for p in signature.parameters.values():
        if previous is inspect.Parameter.POSITIONAL_ONLY and p.kind is not previous:
            parts.append("/")
        if p.kind is p.KEYWORD_ONLY and previous is not p.KEYWORD_ONLY:
            parts.append("*")
        previous = p.kind
        default = None if p.default is p.empty else literal_text(p.default)
        if p.default is not p.empty and default is None:
            raise ExportError(f"the default of {p.name} ({type(p.default).__name__}) has no literal form")
        parts.append(p.name if default is None else f"{p.name}={default}")
    if previous is inspect.Parameter.POSITIONAL_ONLY:
        parts.append("/")
    return ", ".join(parts)


def _header(fn: Callable, wrt: tuple[str, ...], kinds: tuple, adjoint: Callable,
            today: Optional[datetime.date]) -> str:
    """The module's docstring: where it came from, what it is specialised for, how to call it."""
    name = fn.__name__
    filename = inspect.getsourcefile(fn) or fn.__code__.co_filename
    line = inspect.getsourcelines(fn)[1]
    date = (today or datetime.datetime.now(datetime.timezone.utc).date()).isoformat()
    params = ", ".join(inspect.signature(fn).parameters)
    by = ", ".join(wrt)
    note = _kind_note(list(inspect.signature(fn).parameters), kinds).replace("\n# ", "\n")
    if all(k == UNKNOWN for k in kinds):
        note += "\nThis code works for any numbers and arrays."
    else:
        note += "\nA call with arguments of other kinds or another pattern of lengths raises TypeError."
    calls = [(f"grad_{name}({params})", f"d {name} / d ({by}), as s2s_ad.grad returns it"),
             (f"value_and_grad_{name}({params})", f"({name}(...), the gradient), as s2s_ad.value_and_grad"),
             (f"{adjoint.__name__}({params}, d_out=1.0)", "the adjoint: the value, and d_out times the gradient")]
    width = max(len(call) for call, _ in calls)
    usage = "".join(f"    {call.ljust(width)}  {what}\n" for call, what in calls)
    return (f'"""The gradient of {name} with respect to {by}, exported by s2s_ad {__version__} on {date}.\n\n'
            f"Source: {filename}, line {line}, function {name}({params}).\n"
            f"With respect to: {by}.\n"
            f"{note}\n\n"
            f"Needs NumPy and Python's standard library alone: s2s_ad's helpers that the code calls\n"
            f"are written out below.\n\n"
            f"{usage}"
            '"""\n')
