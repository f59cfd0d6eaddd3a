"""Stage 7: compile generated source, make tracebacks readable, and cache.

Input: an ``emit.Emitted`` module.  Output: the compiled function.  The
source is registered with ``linecache`` under a name like
``<s2s_ad d_f from rational.py:3 #1a2b3c>``, so a traceback raised inside generated
code shows the generated line (whose comment names the user's line).

``TransformCache`` maps a key to a built value and is safe to use from
several threads: a key is built once, by the first thread asking for it.
An entry with a ``snapshot`` (what the free names of its code meant) is
built again once that snapshot is no longer valid: a global rebound, a
closure cell changed, a helper redefined.
"""
from __future__ import annotations

import hashlib
import linecache
import os
import threading
from typing import Any, Callable, Hashable, Optional

from .emit import Emitted


# Generated file name -> (the user's file, the user's line of each generated line).
_ORIGINS: dict[str, tuple[str, list]] = {}


def compile_module(emitted: Emitted, origin: str) -> dict[str, Any]:
    """Compile generated source; return the module's namespace."""
    # One name per source text: specialisations of one function must not share a linecache entry.
    digest = hashlib.sha1(emitted.source.encode()).hexdigest()[:6]
    filename = f"<s2s_ad {emitted.name} from {origin} #{digest}>"
    lines = emitted.source.splitlines(True)
    linecache.cache[filename] = (len(emitted.source), None, lines, filename)
    _ORIGINS[filename] = (origin.rpartition(":")[0], emitted.origins)
    code = compile(emitted.source, filename, "exec")
    namespace = dict(emitted.namespace.globals)
    exec(code, namespace)
    return namespace


def name_the_users_line(exc: BaseException) -> None:
    """Add a note to an exception raised inside generated code naming the user's line it came from
    (Python 3.11 and later show notes; before that the traceback's ``# line N`` comments remain)."""
    tb, found = exc.__traceback__, None
    while tb is not None:
        entry = _ORIGINS.get(tb.tb_frame.f_code.co_filename)
        if entry is not None and 0 < tb.tb_lineno <= len(entry[1]) and entry[1][tb.tb_lineno - 1] is not None:
            found = (entry[0], entry[1][tb.tb_lineno - 1], tb.tb_frame.f_code.co_name)
        tb = tb.tb_next
    if found is not None and hasattr(exc, "add_note"):
        exc.add_note(f"s2s_ad: raised in {found[2]}, generated from line {found[1]} of {found[0]}")


def compile_emitted(emitted: Emitted, origin: str) -> Callable:
    return compile_module(emitted, origin)[emitted.name]


class SplitAdjoint:
    """The adjoint of a function the user's code calls, in two parts.

    ``forward(*args, tape)`` returns ``(result, tape)``, the tape with what
    ``backward(d_out, tape)`` needs to return ``(*adjoints, tape)``: the
    adjoint of every argument, and the tape as it was before ``forward``.
    Generated code calls them as ``d_helper.forward(...)`` and
    ``d_helper.backward(...)``.
    """

    generated_parts = ("forward", "backward")  # what generated code may call (expressions.py)

    def __init__(self, fn: Callable) -> None:
        self.fn = fn
        self.name = "d_" + getattr(fn, "__name__", "function")
        self.forward: Optional[Callable] = None
        self.backward: Optional[Callable] = None
        self.source = ""
        self.snapshot: Any = None  # set once built (see parse.Snapshot)
        self.result_tree: Any = None  # a container result's structure (containers.py), when called from the API

    def __repr__(self) -> str:
        return f"<split adjoint of {getattr(self.fn, '__qualname__', self.fn)}>"


class TangentCallee:
    """The tangent function of a function the user's code calls, in forward mode.

    ``jvp(*args, *tangents)`` returns ``(result, tangent of the result)``;
    tangents are passed for the arguments that carry one, in order.
    Generated code calls it as ``t_helper.jvp(...)``.
    """

    generated_parts = ("jvp",)

    def __init__(self, fn: Callable) -> None:
        self.fn = fn
        self.name = "t_" + getattr(fn, "__name__", "function")
        self.jvp: Optional[Callable] = None
        self.source = ""
        self.snapshot: Any = None
        self.result_tree: Any = None  # a container result's structure (containers.py)

    def __repr__(self) -> str:
        return f"<tangent function of {getattr(self.fn, '__qualname__', self.fn)}>"


def origin_of(filename: str, line: int) -> str:
    return f"{os.path.basename(filename)}:{line}"


class TransformCache:
    """A thread-safe map from keys to transformed functions."""

    def __init__(self) -> None:
        self._entries: dict[Hashable, Any] = {}
        self._lock = threading.RLock()

    def get(self, key: Hashable, build: Callable[[], Any]) -> Any:
        entry = self._entries.get(key)
        if entry is not None and is_current(entry):
            return entry
        with self._lock:
            entry = self._entries.get(key)
            if entry is None or not is_current(entry):
                entry = self._entries[key] = build()
            return entry


def is_current(entry: Any) -> bool:
    """False if the code was generated for names that mean something else now."""
    snapshot = getattr(entry, "snapshot", None)
    return snapshot is None or snapshot.valid()
