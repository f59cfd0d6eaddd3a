"""Builds that ask for other builds, nested no deeper than the stack allows.

Transforming a function transforms the helpers it calls, on demand, from
inside its own transformation (a helper's result kind while analysing, its
split adjoint or tangent function while generating code): a chain of 300
helpers, each calling the next, would nest 300 transformations on the
Python stack, each a few dozen frames deep, and raise ``RecursionError``.

``bounded(key, work, again)`` runs ``work()`` (one such nested build) unless
the stack has grown more than ``STACK_BUDGET`` frames since the outermost
build of this thread began.  Then it unwinds, with an exception no code in
between catches (a ``BaseException``), to that outermost build, which runs
``again()`` there, on a short stack, and then runs its own work again.
``again`` must cache what it makes (every caller here passes the cached
entry point), so the second attempt finds the helper made and gets past
the point where the first one gave up.  A chain of n helpers is thus built
in about n / (helpers per budget) short nests, each helper built at most
twice.  A key already being made again by an enclosing build is not
deferred a second time (a recursion through more helpers than a budget
holds): its build goes on nesting, so the retries always end.

Input/output invariant: ``bounded`` returns what ``work()`` returns and
raises what it raises; only the stack depth at which ``work`` runs changes.
"""
from __future__ import annotations

import sys
import types
import threading
from typing import Any, Callable, Hashable, Optional, TypeVar

T = TypeVar("T")

# Frames a nest of builds may add above the outermost one before the next build is deferred to it:
# a third of Python's default limit, leaving room for the deepest single transformation.
STACK_BUDGET = 300

_STATE = threading.local()  # base: the stack depth of the outermost build (None: none running); again: keys


class _Deferred(BaseException):
    """Raised to unwind to the outermost build, which runs ``again`` and retries."""

    def __init__(self, key: Hashable, again: Callable[[], Any]) -> None:
        super().__init__(key)
        self.key = key
        self.again = again


def _depth() -> int:
    frame: Optional[types.FrameType] = sys._getframe(1)
    depth = 0
    while frame is not None:
        frame, depth = frame.f_back, depth + 1
    return depth


def bounded(key: Hashable, work: Callable[[], T], again: Callable[[], Any]) -> T:
    """``work()``, run here, or after ``again()`` has run on a shorter stack (see the module's docstring)."""
    base = getattr(_STATE, "base", None)
    if base is None:
        return _outermost(work)
    remade = getattr(_STATE, "again", ())
    if _depth() - base > STACK_BUDGET and key not in remade:
        raise _Deferred(key, again)
    return work()


def _outermost(work: Callable[[], T]) -> T:
    """Run ``work`` as the outermost build of this thread: a deferred build runs here, then ``work`` again."""
    base = _depth()
    try:
        while True:
            _STATE.base = base
            try:
                return work()
            except _Deferred as deferred:
                pending = deferred
            _remake(pending)
    finally:
        _STATE.base = None


def _remake(deferred: _Deferred) -> None:
    """Run a deferred build as an outermost build of its own (it may defer builds in turn)."""
    remade = getattr(_STATE, "again", ())
    _STATE.again = remade + (deferred.key,)
    _STATE.base = None
    try:
        bounded(deferred.key, deferred.again, deferred.again)
    finally:
        _STATE.again = remade
