"""All the generated code a derivative runs: the modules reached from one generated function.

Input: a function s2s_ad compiled (``cache.compile_module``: its code's file
name is a ``<s2s_ad ...>`` pseudo-file whose text ``linecache`` holds).
Output: ``reached(function)``, each generated module its code calls into,
transitively, once, in the order first reached (depth first): a helper's
split adjoint (``d_helper.forward``/``backward``), a tangent callee
(``t_helper.jvp``, or from vector code ``t_helper.vector``), the function a higher derivative's wrapper calls (the
level below, as forward mode over it).  Each comes as a ``GeneratedModule``:
its file name, its lines, and for each line where it came from in the
user's code (``(user's file, line)``, following a higher derivative's
``# line N`` through the generated code it was taken of, down to the
user's line), or None.  ``whole_source(function)`` is their texts joined:
what ``grad(grad(f)).source_for(...)`` shows.

Nothing here builds or runs code; it reads what the caches made.
"""
from __future__ import annotations

import linecache
import os
import types
from dataclasses import dataclass
from typing import Any, Callable, Iterator, Optional

from .cache import SplitAdjoint, TangentCallee, origins, user_file

GENERATED_PREFIX = "<s2s_ad "  # how compile_module names the file of generated code

Place = tuple[str, int]  # (the user's file, a line of it)


@dataclass
class GeneratedModule:
    filename: str
    lines: list[str]  # without line ends
    places: list[Optional[Place]]  # per line: the user's line it came from, or None

    @property
    def text(self) -> str:
        return "\n".join(self.lines) + "\n"


def is_generated(function: Any) -> bool:
    """True for a plain function whose code s2s_ad generated."""
    return isinstance(function, types.FunctionType) and \
        function.__code__.co_filename.startswith(GENERATED_PREFIX)


def _called(function: types.FunctionType) -> Iterator[types.FunctionType]:
    """The generated functions ``function``'s code can call: those its globals hold, directly or
    as the parts of a helper's split adjoint or tangent callee."""
    for value in list(function.__globals__.values()):
        if isinstance(value, SplitAdjoint):
            parts: list = [value.forward, value.backward]
        elif isinstance(value, TangentCallee):  # (vector code calls the helper's vector version)
            parts = [value.vector if getattr(function, "pushes_directions", False) else value.jvp]
        else:
            parts = [getattr(value, "__wrapped__", value)]
        yield from (part for part in parts if is_generated(part) and part is not function)


def reached(function: Optional[Callable], prefer: Optional[str] = None) -> list[GeneratedModule]:
    """The generated modules ``function`` runs (see the module docstring; none if it is not generated
    code); ``prefer``: the user's file to read a short file name as where several share it
    (``cache.user_file``)."""
    seen: dict[str, GeneratedModule] = {}
    function = getattr(function, "__wrapped__", function)  # a compiled function's Python code (numba.target)
    stack = [function] if isinstance(function, types.FunctionType) and is_generated(function) else []
    while stack:
        current = stack.pop()
        filename = current.__code__.co_filename
        if filename in seen:
            continue
        lines = [line.rstrip("\n") for line in linecache.getlines(filename)]
        seen[filename] = GeneratedModule(filename, lines, [place(filename, n, prefer)
                                                            for n in range(1, len(lines) + 1)])
        stack.extend(reversed(list(_called(current))))
    return list(seen.values())


def place(filename: str, line: int, prefer: Optional[str] = None) -> Optional[Place]:
    """The user's line that line ``line`` of generated ``filename`` came from, following generated
    code taken of generated code down to the user's; None where no line is known."""
    for _ in range(64):  # (a derivative of order 64 is far past any use; a bound keeps this a loop)
        found = origins(filename)
        if found is None or not 0 < line <= len(found[1]) or found[1][line - 1] is None:
            return None
        filename, line = found[0], found[1][line - 1]
        if not filename.startswith(GENERATED_PREFIX):
            path = user_file(filename, prefer if prefer and os.path.basename(prefer) == filename else None)
            return (path, line) if path is not None else None
    return None


def whole_source(*functions: Optional[Callable]) -> str:
    """The text of every generated module ``functions`` run, each once, the first one's first."""
    modules = {m.filename: m for function in functions for m in reached(function)}
    return "\n\n".join(module.text.rstrip("\n") for module in modules.values()) + "\n"
