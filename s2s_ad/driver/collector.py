"""The cyclic garbage collector, paused while a transformation runs.

Input: a transformation to run (the body of ``with collector_paused():``).
Output: the same transformation, run with the collector disabled; nested and
concurrent transformations share one pause, and once the last ends the
collector is enabled again if it was when the first began (the state handed
on is the one found).  pipeline.py builds every function under it.
"""
from __future__ import annotations

import gc
import threading
from contextlib import contextmanager
from typing import Iterator


_PAUSE_LOCK = threading.Lock()
_pauses = 0  # transformations running (nested or in other threads)
_collector_was_enabled = False


@contextmanager
def collector_paused() -> Iterator[None]:
    """Run a transformation without the cyclic garbage collector.

    A transformation makes a few hundred thousand small objects (trees, IR,
    text) and frees them by reference counting, yet their allocation keeps
    triggering the collector, which then walks the whole, growing heap again
    and again: a quarter of the time for a big function.  Nested and
    concurrent transformations share one pause; the collector runs again
    once the last ends, if it was enabled when the first began.
    """
    global _pauses, _collector_was_enabled
    with _PAUSE_LOCK:
        if _pauses == 0:
            _collector_was_enabled = gc.isenabled()
            gc.disable()
        _pauses += 1
    try:
        yield
    finally:
        with _PAUSE_LOCK:
            _pauses -= 1
            if _pauses == 0 and _collector_was_enabled:
                gc.enable()
