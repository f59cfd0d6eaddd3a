"""Debugging a derivative: ``step`` at a gradient's call goes straight into the generated code.

Input: the trace function a debugger installed (``sys.gettrace()``), seen at
the top of a gradient's call.  Output: the call's result, computed with the
debugger kept out of s2s_ad's own work.  Two parts:

* ``stepping(tracer)``: for a debugger built on ``bdb`` (``pdb``,
  ``breakpoint()``, and the debuggers made from them), s2s_ad's own modules
  join the modules it does not stop in (``Bdb.skip``, the glob patterns
  ``pdb.Pdb(skip=...)`` takes), once per debugger, to stay, as ``pdb``'s own
  ``skip`` does.  Generated code's globals name no module, so it is never
  skipped, and ``linecache`` holds its text (``cache.compile_module``).
* ``step_into(tracer, call, ...)``: runs the call with tracing off (what
  s2s_ad calls in the standard library and NumPy, binding arguments,
  reading the cache, building code on a first call, is not stepped through
  either) and on again around each call of generated code (``run_traced``,
  which ``api._run`` uses while a ``step_into`` is under way).

So ``step`` at a call of a gradient stops in the generated code after a
handful of steps (a hundred or more before), and ``step`` at its ``return``
comes back to the caller.  A debugger that removed itself meanwhile
(``continue`` without breakpoints) is not put back.  While s2s_ad's own
work runs, a breakpoint set in it does not stop: ``S2S_AD_DEBUG_LIBRARY=1``
(read when this module loads) leaves debuggers as they are, for stepping
through s2s_ad itself.  A ``bdb`` that would fail on a frame whose globals
name no module (older Pythons may) is given no skip: only ``step_into``.
"""
from __future__ import annotations

import bdb
import os
import sys
import threading
from typing import Any, Callable, Optional

LIBRARY_MODULES = frozenset({"s2s_ad", "s2s_ad.*"})  # the patterns added to a debugger's skip


def _names_may_be_missing() -> bool:
    """Whether ``bdb``'s skip test takes a frame whose globals name no module (as generated code's
    do): Python's ``bdb`` since 3.10 does (it never skips such a frame); an older one may fail."""
    unnamed: Any = None  # (what bdb is given for such a frame: ``f_globals.get("__name__")``)
    try:
        return bdb.Bdb(skip=LIBRARY_MODULES).is_skipped_module(unnamed) is False
    except TypeError:
        return False


# Whether to keep debuggers out of s2s_ad's work (not where asked not to), and to add s2s_ad's
# modules to their skip (not where bdb would fail on generated code).
_HIDE = os.environ.get("S2S_AD_DEBUG_LIBRARY") != "1"
_SKIP = _HIDE and _names_may_be_missing()


def stepping(tracer: Any) -> bool:
    """Whether ``tracer`` is a ``bdb`` debugger's, to be kept out of s2s_ad's work (``step_into``);
    if so, its skip now holds s2s_ad's modules.  Its first lines do that: the debugger stops on each
    line until then (a gradient's call asks this first)."""
    debugger = getattr(tracer, "__self__", None)
    if _SKIP and isinstance(debugger, bdb.Bdb) and not LIBRARY_MODULES <= (debugger.skip or set()):
        debugger.skip = set(debugger.skip or ()) | LIBRARY_MODULES
    return _HIDE and isinstance(debugger, bdb.Bdb)


class _Suspended(threading.local):
    tracer: Optional[Callable] = None  # the debugger's trace function while its step_into runs


_STATE = _Suspended()
SUSPENDED = 0  # step_into calls under way, in any thread: the cheap test before reading _STATE
_COUNT_LOCK = threading.Lock()


def step_into(tracer: Any, call: Callable[..., Any], *args: Any) -> Any:
    """``call(*args)`` with the debugger ``tracer`` off but in generated code (``run_traced``)."""
    global SUSPENDED
    outer, _STATE.tracer = _STATE.tracer, tracer
    with _COUNT_LOCK:
        SUSPENDED += 1
    sys.settrace(None)
    try:
        return call(*args)
    finally:
        with _COUNT_LOCK:
            SUSPENDED -= 1
        tracer_now, _STATE.tracer = _STATE.tracer, outer
        sys.settrace(tracer_now)  # (None where the debugger removed itself in the generated code)


def run_traced(generated: Callable, args: tuple) -> Any:
    """``generated(*args)``, traced by the debugger a ``step_into`` of this thread holds off, if any."""
    tracer = _STATE.tracer
    if tracer is None:
        return generated(*args)
    sys.settrace(tracer)
    try:
        return generated(*args)
    finally:
        _STATE.tracer = sys.gettrace()
        sys.settrace(None)
