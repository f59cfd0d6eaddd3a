"""Stage 7: compile generated source, make tracebacks readable, and cache.

Input: an ``emit.Emitted`` module.  Output: the compiled function.  The
source is registered with ``linecache`` under a name like
``<s2s_ad d_f from rational.py:3 #1a2b3c>``, so a traceback raised inside generated
code shows the generated line (whose comment names the user's line).

``TransformCache`` maps a user function, a key and a target (``target.py``:
code generated for one target is never handed to another) to a built value,
holds the function weakly, and is safe to use from several threads: a key is
built once, by the first thread asking for it.
An entry with a ``snapshot`` (what the free names of its code meant) is
built again once that snapshot is no longer valid: a global rebound, a
closure cell changed, a helper redefined.
"""
from __future__ import annotations

import hashlib
import linecache
import os
import threading
import types
import weakref
from typing import Any, Callable, Hashable, Optional

from ..targets.emit import Emitted
from ..core.errors import cell_label
from ..targets.target import NUMPY, Target


# Generated file name -> (the user's file, the user's line of each generated line).
_ORIGINS: dict[str, tuple[str, list]] = {}


def compile_module(emitted: Emitted, origin: str) -> dict[str, Any]:
    """Compile generated source; return the module's namespace."""
    # One name per source text: specialisations of one function must not share a linecache entry.
    digest = hashlib.sha1(emitted.source.encode()).hexdigest()[:6]
    filename = f"<s2s_ad {emitted.name} from {origin} #{digest}>"
    lines = emitted.source.splitlines(True)
    with _ALIVE_LOCK:  # this compilation holds the text (a function of the same text may die meanwhile)
        _ALIVE[filename] = _ALIVE.get(filename, 0) + 1
        linecache.cache[filename] = (len(emitted.source), None, lines, filename)
        _ORIGINS[filename] = (origin.rpartition(":")[0], emitted.origins)
    try:
        code = compile(emitted.source, filename, "exec")
        namespace = dict(emitted.namespace.globals)
        exec(code, namespace)
        functions = [value for value in namespace.values()
                     if isinstance(value, types.FunctionType) and value.__code__.co_filename == filename]
        with _ALIVE_LOCK:
            _ALIVE[filename] += len(functions)
        for function in functions:
            weakref.finalize(function, _gone, filename).atexit = False  # nothing to tidy at exit
    finally:
        _gone(filename)  # the compilation's own hold
    return namespace


# Generated file name -> how many functions compiled under it are alive (and compilations under way).
# When none is, its linecache entry goes: the text of code for a function that is gone (a dropped
# closure) must not stay behind.  Reentrant: the cycle collector may run a finalizer while it is held.
_ALIVE: dict[str, int] = {}
_ALIVE_LOCK = threading.RLock()


def _gone(filename: str) -> None:
    with _ALIVE_LOCK:
        _ALIVE[filename] -= 1
        if _ALIVE[filename] > 0:
            return
        del _ALIVE[filename]
        linecache.cache.pop(filename, None)
        _ORIGINS.pop(filename, None)


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
        exc.add_note(f"s2s_ad: raised in {found[2]}, generated from line {found[1]} of "
                     f"{cell_label(user_file(found[0])) or found[0]}")


def compile_emitted(emitted: Emitted, origin: str) -> Callable:
    """The module's function, as its target runs it (``Target.finish``: a compiler's version of it)."""
    function = compile_module(emitted, origin)[emitted.name]
    # (read by the API's hot path, before the target wraps the function: functools.wraps copies it)
    setattr(function, "fresh_returns", emitted.fresh_returns)
    return emitted.namespace.target.finish(function, emitted)


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
        self.qualname = getattr(fn, "__qualname__", repr(fn))  # not fn: caches hold this, keyed weakly on fn
        self.name = "d_" + getattr(fn, "__name__", "function")
        self.forward: Optional[Callable] = None
        self.backward: Optional[Callable] = None
        self.source = ""
        self.snapshot: Any = None  # set once built (see snapshot.Snapshot)
        # Whether ``backward`` puts back slices of arrays the tape holds (its own or a helper's): then
        # a tape serves one backward call only.  Unknown (True) until built.
        self.restores = True
        self.result_tree: Any = None  # a container result's structure (containers.py), when called from the API
        # Whether its parts were emitted apart, each run as the target runs code (compiled by Numba), the
        # tape handed between them in the target's form (``Target.handed_split``; the API's vjp only)
        self.handed = False
        # Parameter positions whose float a rule inside would lose the derivative of, with where
        # (lost_derivatives.lost_derivative_parameters): the caller checks its argument there.
        self.lost: dict = {}

    def __repr__(self) -> str:
        return f"<split adjoint of {self.qualname}>"


class TangentCallee:
    """The tangent function of a function the user's code calls, in forward mode.

    ``jvp(*args, *tangents)`` returns ``(result, tangent of the result)``;
    tangents are passed for the arguments that carry one, in order.
    Generated code calls it as ``t_helper.jvp(...)``; vector mode's code (``ad/vector``) calls
    ``t_helper.vector(...)``, the same with every tangent carrying a leading axis of directions.
    """

    generated_parts = ("jvp",)

    def __init__(self, fn: Callable) -> None:
        self.qualname = getattr(fn, "__qualname__", repr(fn))  # not fn (see SplitAdjoint)
        self.name = "t_" + getattr(fn, "__name__", "function")
        self.jvp: Optional[Callable] = None
        self.source = ""
        self.snapshot: Any = None
        self.result_tree: Any = None  # a container result's structure (containers.py)
        self.primal_count: Optional[int] = None  # how many of jvp's arguments are values (the rest tangents)

    @property
    def vector(self) -> Optional[Callable]:
        """jvp's vector version (``ad/vector``), where the target made one."""
        return getattr(self.jvp, "vector", None)

    def __repr__(self) -> str:
        return f"<tangent function of {self.qualname}>"


def origin_of(filename: str, line: int) -> str:
    base = os.path.basename(filename)
    _FILES.setdefault(base, {})[filename] = None  # (the newest last: see user_file)
    return f"{base}:{line}"


# The user's files by the short name generated code calls them by (origin_of): full paths, oldest first.
_FILES: dict[str, dict[str, None]] = {}


def user_file(short: str, prefer: Optional[str] = None) -> Optional[str]:
    """The full path of the user's file generated code names ``short`` (``origin_of``): ``prefer``
    where it has that name, else the one most recently transformed; None if none is known."""
    paths = _FILES.get(short)
    if not paths:
        return None
    if prefer is not None and prefer in paths:
        return prefer
    return list(paths)[-1]


def origins(filename: str) -> Optional[tuple[str, list]]:
    """For a generated file: the file its ``# line N`` comments count in (the user's, by its short
    name, or the generated file a higher derivative was taken of) and the line each of its lines
    came from (None where none); None for a file s2s_ad did not generate (or whose code is gone)."""
    return _ORIGINS.get(filename)


# One lock for every cache: a build may need another (a helper's adjoint, a tangent callee), and
# with a lock of their own two threads could each hold one and wait for the other's.
_BUILD_LOCK = threading.RLock()


class TransformCache:
    """A thread-safe map from ``(owner, key, target)`` to transformed functions.

    ``owner`` is the user's function the entry was made from.  It is held
    weakly: code made for a function that is gone (a dropped closure) goes
    with it, so the cache keeps no user function alive.  Nothing in an entry
    may refer to its owner (see ``SplitAdjoint``).  An entry is built by the
    first thread asking for it, under one lock, and published only once
    complete, so another thread never sees it half made.
    """

    def __init__(self) -> None:
        self._entries: "weakref.WeakKeyDictionary[Any, dict]" = weakref.WeakKeyDictionary()
        self._strong: dict[Hashable, dict] = {}  # owners that cannot be weakly referenced

    def _table(self, owner: Any) -> dict:
        try:
            table = self._entries.get(owner)
            if table is None:
                table = self._entries[owner] = {}
        except TypeError:  # not weakly referable (a builtin): kept, as such owners live forever anyway
            table = self._strong.setdefault(owner, {})
        return table

    def get(self, owner: Any, key: Hashable, build: Callable[[], Any], target: Target = NUMPY) -> Any:
        """The entry of ``owner`` for ``key`` and ``target``, built by ``build`` if there is none (or it
        is stale)."""
        key = (target, key)
        try:
            entry = self._entries.get(owner, _EMPTY).get(key)
        except TypeError:
            entry = None
        if entry is not None and is_current(entry):
            return entry
        with _BUILD_LOCK:
            table = self._table(owner)
            entry = table.get(key)
            if entry is None or not is_current(entry):
                entry = build()
                table[key] = entry
            return entry


_EMPTY: dict = {}


def is_current(entry: Any) -> bool:
    """False if the code was generated for names that mean something else now."""
    snapshot = getattr(entry, "snapshot", None)
    return snapshot is None or snapshot.valid()
