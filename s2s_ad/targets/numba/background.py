"""Compiling in a thread while the code runs as Python (``backend="auto"``'s choice of Numba, for
``grad`` and ``value_and_grad``: ``NumbaTarget(background=True)``).

Input: a Numba dispatcher of a generated function, and the first call's arguments.  Output:
``Background``, which the compiled function's ``checked`` (``target._compiled``) asks at each call
until Numba has compiled the code for the first call's argument types: until then the call runs the
same module's function as Python (the numbers the compiled code gives, to the rounding of the few
reductions Numba orders otherwise: every rule's compiled version is tested against its Python
helper), and from then on the compiled code.  So no call waits for a compile: the first runs at
once, the later ones as Python until the machine code is there (1 to 6 s on the project's workloads
with an empty disk cache, a fraction of a second from it).

Why a thread helps: Numba compiles under its own lock, and LLVM, most of a compile's time, runs
with Python's GIL released (llvmlite's calls are ctypes calls), so the caller's Python code goes on
beside it.  Where Numba cannot compile the code, the next call says so (``CompileFallbackWarning``,
from the caller's thread, as a first call would) and runs Python from then on.

At the interpreter's exit, compiles under way are waited for (``_wait_at_exit``): LLVM torn down
under a running compile could crash the process as it ends.  So they are before ``os.fork``: a child
forked in the middle of one would hold Numba's compiler lock (and LLVM's own) with no thread to
release them, and hang at its first compile.
"""
from __future__ import annotations

import atexit
import os
import threading
from typing import Any, Optional

_UNDER_WAY: set[threading.Thread] = set()
_UNDER_WAY_LOCK = threading.Lock()


class Background:
    """The compile of one dispatcher for the types of its first call's arguments, in a thread."""

    __slots__ = ("dispatcher", "ready", "failed", "_started", "_thread", "_lock")

    def __init__(self, dispatcher: Any) -> None:
        self.dispatcher = dispatcher
        self.ready = False  # True once the machine code for the first call's types is in the dispatcher
        self.failed: Optional[BaseException] = None  # why Numba could not compile it, until said
        self._started = False
        self._thread: Optional[threading.Thread] = None  # the compile's, while one may be under way
        self._lock = threading.Lock()

    def start(self, args: tuple) -> None:
        """Start compiling for the types of ``args`` (a call's positional arguments), unless started."""
        with self._lock:
            if self._started:
                return
            self._started = True
            try:
                signature = _signature(self.dispatcher, args)
            except Exception as untyped:  # (an argument Numba has no type for: Python's code runs, said)
                self.failed = untyped
                return
            thread = threading.Thread(target=self._compile, args=(signature,), daemon=True,
                                      name=f"s2s_ad: numba compiles {self.dispatcher.py_func.__name__}")
            with _UNDER_WAY_LOCK:
                _UNDER_WAY.add(thread)
            self._thread = thread
            thread.start()

    def wait(self, timeout: Optional[float] = None) -> bool:
        """Wait up to ``timeout`` seconds (None: as long as it takes) for the compile; whether it is
        over (compiled or failed), or was never started."""
        thread = self._thread
        if thread is None:
            return True
        thread.join(timeout)
        return not thread.is_alive()

    def _compile(self, signature: tuple) -> None:
        try:
            self.dispatcher.compile(signature)
        except BaseException as failed:  # said at the next call, in the caller's thread (target._compiled)
            self.failed = failed
        else:
            self.ready = True
        finally:
            with _UNDER_WAY_LOCK:
                _UNDER_WAY.discard(threading.current_thread())


def _signature(dispatcher: Any, args: tuple) -> tuple:
    """The Numba types a call of ``dispatcher`` with ``args`` compiles for: each argument's, then the
    parameters left out as Numba types them (``omitted``, their defaults)."""
    import numba
    from numba.core import types

    function = dispatcher.py_func
    count = function.__code__.co_argcount
    defaults = function.__defaults__ or ()
    missing = count - len(args)
    if missing > len(defaults) or missing < 0:  # (the API passes every parameter without a default)
        raise TypeError(f"{function.__name__} takes {count} arguments, {len(args)} given")
    left_out = [types.Omitted(value) for value in defaults[len(defaults) - missing:]] if missing else []
    return tuple(numba.typeof(arg) for arg in args) + tuple(left_out)


def wait_for_compiles(timeout: Optional[float] = None) -> bool:
    """Wait for every compile under way (at most ``timeout`` seconds each); whether all are over."""
    with _UNDER_WAY_LOCK:
        threads = list(_UNDER_WAY)
    for thread in threads:
        thread.join(timeout)
    return not any(thread.is_alive() for thread in threads)


@atexit.register
def _wait_at_exit() -> None:
    wait_for_compiles()


if hasattr(os, "register_at_fork"):  # (not on Windows, which does not fork)
    os.register_at_fork(before=wait_for_compiles)
