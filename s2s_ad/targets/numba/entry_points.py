"""The compiled entry points a cached call of Python floats may call without Numba's dispatcher.

Input: a Numba dispatcher of generated code (``target.py``'s), the count of arguments a call passes.
Output: ``EntryPoints.slot(types)``: for a call whose arguments are all of exactly the classes
``types``, each ``float`` (or NumPy's ``float64``), a one-item list that holds the compiled entry point
of the dispatcher's overload for such a call once it has been compiled (None before, and again
after a fall-back to Python), and the values to pass after the call's arguments (the defaults of the
parameters the call leaves out); None for any other ``types``.

Why: a call of the dispatcher types each argument and folds in the defaults it leaves out before it
finds the overload; on a gradient of a few flops that costs more than the compiled code (on the
rational workload, 200 ns against the overload's own 85 ns).  The API's cached call has already
tested each argument's class exactly (``calling._hit_tests``), and Numba types a Python float as
``float64`` whatever its value, so the overload that call would find is known: its entry point,
given the call's arguments and then the omitted parameters' defaults (an ``Omitted`` parameter's
value is the default it was compiled with), runs the same machine code as the dispatcher would.
Only floats: an ``int`` is typed by its value (``int64``, or ``uint64`` past 2**63) and an array by
its layout and flags, which a class test does not prove.
"""
from __future__ import annotations

import inspect
from typing import Any, Callable, Optional

import numpy as np

_FLOATS = (float, np.float64)
_PASSED = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)


class EntryPoints:
    """The slots of one dispatcher's entry points, by the count of floats a call passes."""

    def __init__(self, dispatcher: Any) -> None:
        self.dispatcher = dispatcher
        self.slots: dict[int, tuple[list[Optional[Callable]], tuple]] = {}
        self.overloads_seen = -1  # (how many overloads the dispatcher had at the last fill: none new, nothing to do)

    def slot(self, types: tuple) -> Optional[tuple[list[Optional[Callable]], tuple]]:
        """The slot for calls of arguments of exactly the classes ``types`` and the values passed
        after them (see the module docstring); None where those are not all floats, or the
        parameters the call leaves out have no defaults."""
        if not types or not all(t in _FLOATS for t in types):
            return None
        count = len(types)
        if count not in self.slots:
            defaults = self._defaults_after(count)
            if defaults is None:
                return None
            self.slots[count] = ([None], defaults)
            self.overloads_seen = -1  # (a new slot: the next fill looks)
        return self.slots[count]

    def fill(self) -> None:
        """Put in each empty slot the entry point of its overload, where Numba has compiled it (after
        a call of the dispatcher that ran where its count of overloads is no longer ``overloads_seen``,
        tested in ``target.checked`` itself to spare a method call on the path every uncached call
        takes; and where a slot is asked for)."""
        self.overloads_seen = len(self.dispatcher.overloads)
        from numba.core import types as numba_types
        for count, (slot, defaults) in self.slots.items():
            if slot[0] is None:
                key = (numba_types.float64,) * count + tuple(numba_types.Omitted(d) for d in defaults)
                compiled = self.dispatcher.overloads.get(key)
                slot[0] = getattr(compiled, "entry_point", None)

    def clear(self) -> None:
        """Empty every slot: the code runs as Python from now on (a fall-back)."""
        for slot, _ in self.slots.values():
            slot[0] = None
        self.overloads_seen = -1

    def _defaults_after(self, count: int) -> Optional[tuple]:
        """The defaults of the parameters after the first ``count``, where every one has one."""
        try:
            parameters = list(inspect.signature(self.dispatcher.py_func).parameters.values())
        except (AttributeError, TypeError, ValueError):
            return None
        rest = parameters[count:]
        if len(parameters) < count or any(p.kind not in _PASSED for p in parameters) \
                or any(p.default is inspect.Parameter.empty for p in rest):
            return None
        return tuple(p.default for p in rest)
