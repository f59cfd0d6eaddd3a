"""Random draws, replayed in every pass of a derivative taken in several.

A derivative that runs the function's primal computation more than once (the
self-check's forward pass after the reverse sweep, a Hessian's or a forward
Jacobian's pass per input element, a pullback called again, ``check_grad``'s
differences) must see the same draws in every pass: the derivative is that
of the function as it ran once.  ``Draws`` keeps the state of every generator
a call can draw from, before the first pass:

* the global ones, NumPy's ``np.random.*`` and Python's ``random.*``;
* generator objects (``np.random.Generator``, ``RandomState``, ``random.Random``)
  among the arguments, inside containers among them, or among an argument
  object's attributes (``self.rng``);
* generator objects the function or a function it calls reads from a module
  global, a closure cell or a module attribute (``RNG.normal()``,
  ``config.rng.normal()``).

A generator made in the function with a seed (``np.random.default_rng(0)``) is
made again, alike, in each pass; one made without a seed is refused where it
is made (``expressions``), since nothing could replay it.

``replay()`` puts the states back before a pass after the first;
``finish()`` leaves every generator as the first pass left it, so the caller
sees the draws of one call, as if the function had run once.

Input: the function and its arguments.  Output: states, put back on request.
This module reads values only; it imports nothing of the engine.
"""
from __future__ import annotations

import random
import types
from typing import Any, Callable, Iterator, Optional

import numpy as np

from .identity import IdentitySet

# The generator objects whose draws are replayed (a BitGenerator is what a Generator draws through).
GENERATOR_TYPES: tuple[type, ...] = (np.random.Generator, np.random.RandomState, random.Random)

# The methods of generator objects that draw (what ``rng.<name>(...)`` on a value may call): not those
# that set or hand out state, which a differentiated function has no reason to call.
_NOT_DRAWS = {"seed", "set_state", "get_state", "setstate", "getstate", "jumpahead", "spawn", "bit_generator"}
DRAW_METHODS: frozenset[str] = frozenset(
    name for cls in GENERATOR_TYPES for name in dir(cls)
    if not name.startswith("_") and name not in _NOT_DRAWS and callable(getattr(cls, name)))

# How deep containers among the arguments are searched for generators (a dict of lists of ...).
_DEPTH = 4


def is_generator(value: Any) -> bool:
    """Whether ``value`` is a random generator object whose state ``Draws`` keeps."""
    return isinstance(value, GENERATOR_TYPES)


def is_draw(fn: Any) -> bool:
    """Whether calling ``fn`` draws (changes a generator's state): a method of a generator object,
    the global ones included (``np.random.normal`` is a method of NumPy's global ``RandomState``).
    Such a call is never dropped as unused, moved or merged: later draws depend on it."""
    owner = getattr(fn, "__self__", None)
    return isinstance(owner, GENERATOR_TYPES) or isinstance(owner, np.random.BitGenerator)


def seeds(fn: Any) -> bool:
    """Whether ``fn`` seeds one of the global generators, ``np.random.seed`` or ``random.seed`` (a
    statement made for its effect in the function: kept in place, as a draw is, so the draws after it
    are those NumPy's or Python's own run gives; the states ``Draws`` keeps are taken before it)."""
    return fn is np.random.seed or fn is random.seed


def unseeded(seed_keyword: Optional[str], positional: int, keywords: tuple[str, ...], seed_is_none: bool) -> bool:
    """Whether a call of a function that makes a generator (declared ``seeded_by`` its seed's keyword
    in templates/: ``np.random.default_rng``) makes it from fresh entropy: called with no seed (no
    argument), or with the seed given as None.  False for any other function (``seed_keyword`` None)."""
    if seed_keyword is None:
        return False
    return seed_is_none or (positional == 0 and seed_keyword not in keywords)


def _state(generator: Any) -> Any:
    if isinstance(generator, np.random.Generator):
        return generator.bit_generator.state
    if isinstance(generator, np.random.RandomState):
        return generator.get_state()
    return generator.getstate()


def _set_state(generator: Any, state: Any) -> None:
    if isinstance(generator, np.random.Generator):
        generator.bit_generator.state = state
    elif isinstance(generator, np.random.RandomState):
        generator.set_state(state)
    else:
        generator.setstate(state)


def _in_value(value: Any, depth: int) -> Iterator[Any]:
    """Generators in an argument: itself, items of its containers, an object's attributes."""
    if is_generator(value):
        yield value
        return
    if depth <= 0 or isinstance(value, (np.ndarray, np.generic, str, bytes, int, float, complex, type(None))):
        return
    if isinstance(value, (tuple, list)):
        items: Any = value
    elif isinstance(value, dict):
        items = value.values()
    else:
        items = getattr(value, "__dict__", {}).values() if not isinstance(value, (type, types.ModuleType)) else ()
    for item in items:
        yield from _in_value(item, depth - 1)


def _read_by(fn: Any, seen: IdentitySet) -> Iterator[Any]:
    """Generators ``fn`` reads by a free name (a global, a closure cell, an attribute of a module
    named in its code), and those the functions it reads that way read, transitively."""
    fn = getattr(fn, "__func__", fn)
    wrapped = getattr(fn, "__wrapped__", None)  # a decorated function: what its wrapper calls
    if isinstance(wrapped, types.FunctionType):
        yield from _read_by(wrapped, seen)
    code = getattr(fn, "__code__", None)
    if not isinstance(fn, types.FunctionType) or code is None or fn in seen:
        return
    seen.add(fn)
    names = _names_of(code)
    values = [fn.__globals__[n] for n in names if n in fn.__globals__]
    values += [cell.cell_contents for cell in (fn.__closure__ or ()) if _filled(cell)]
    for value in values:
        yield from _reached(value, names, seen)


def _reached(value: Any, names: set[str], seen: IdentitySet, depth: int = _DEPTH) -> Iterator[Any]:
    """Generators reachable from a value the code reads by name: the value itself, a bound draw's
    generator (``normal = RNG.normal``), a function's own (transitively), a container's items, and
    the attributes named in the code of a module, class or object (``config.rng``, ``SETTINGS.rng``)."""
    owner = getattr(value, "__self__", None)
    if is_generator(value) or is_generator(owner):
        yield value if is_generator(value) else owner
    elif isinstance(value, types.FunctionType):
        yield from _read_by(value, seen)
    elif isinstance(value, (tuple, list, dict)):
        yield from _in_value(value, 2)
    elif depth > 0 and value not in seen and not (
            isinstance(value, types.ModuleType) and value.__name__.split(".")[0] in ("numpy", "random")):
        seen.add(value)
        attributes = getattr(value, "__dict__", None)
        if isinstance(attributes, (dict, types.MappingProxyType)):
            for name in names & set(attributes):
                yield from _reached(attributes[name], names, seen, depth - 1)


def _names_of(code: types.CodeType) -> set[str]:
    """The names ``code`` and the code nested in it (lambdas, comprehensions) read."""
    names = set(code.co_names) | set(code.co_freevars)
    for constant in code.co_consts:
        if isinstance(constant, types.CodeType):
            names |= _names_of(constant)
    return names


def _filled(cell: Any) -> bool:
    try:
        cell.cell_contents
    except ValueError:  # an empty cell: a name assigned later
        return False
    return True


def generators_of(fn: Callable, args: tuple) -> list[Any]:
    """Every generator object a call ``fn(*args)`` can draw from (see the module docstring), once each."""
    found = IdentitySet()  # (in the order found)
    for arg in args:
        for generator in _in_value(arg, _DEPTH):
            found.add(generator)
    for generator in _read_by(fn, IdentitySet()):
        found.add(generator)
    return list(found)


def _equal_states(a: Any, b: Any) -> bool:
    """Two generator states (nested tuples and dicts holding arrays) are the same."""
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_equal_states(a[k], b[k]) for k in a)
    if isinstance(a, (tuple, list)) and isinstance(b, (tuple, list)):
        return len(a) == len(b) and all(_equal_states(x, y) for x, y in zip(a, b))
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        return bool(np.array_equal(a, b))
    return bool(a == b)


class Draws:
    """The states of every generator a call can draw from, as they were before its first pass."""

    def __init__(self, fn: Optional[Callable] = None, args: tuple = ()) -> None:
        self.generators = generators_of(fn, args) if fn is not None else []
        self.before = self._states()
        self.after: Optional[tuple] = None
        self.moved = False  # (whether the first pass drew: known at the first replay)

    def _states(self) -> tuple:
        return (np.random.get_state(), random.getstate(), [_state(g) for g in self.generators])

    def _put(self, states: tuple) -> None:
        numpy_state, python_state, own = states
        np.random.set_state(numpy_state)
        random.setstate(python_state)
        for generator, state in zip(self.generators, own):
            _set_state(generator, state)

    def drew(self) -> bool:
        """Whether anything was drawn since these states were taken (asked right after a first pass)."""
        return self._moved(self._states())

    def replay(self) -> None:
        """Before a pass after the first: every generator as the first pass found it.  (The first
        call notes where the first pass left them, for ``finish``.)  Where the first pass drew
        nothing, no pass draws (the same code on the same values) and nothing is put back: putting
        NumPy's and Python's states back costs ~40 us, more than a compiled pass of a loop."""
        if self.after is None:
            self.after = self._states()
            self.moved = self._moved(self.after)
        if self.moved:
            self._put(self.before)

    def _moved(self, states: tuple) -> bool:
        numpy_state, python_state, own = states
        before_numpy, before_python, before_own = self.before
        return (python_state != before_python or not _equal_states(numpy_state, before_numpy)
                or any(not _equal_states(a, b) for a, b in zip(own, before_own)))

    def finish(self) -> None:
        """After the last pass: every generator as the first pass left it (one call's draws)."""
        if self.after is not None and self.moved:
            self._put(self.after)


class NoDraws:
    """``Draws`` of a call that cannot draw (``pipeline.may_draw_globally`` says so of its function):
    nothing to read or to put back (reading the states costs more than a small function's pass)."""

    def drew(self) -> bool:
        return False

    def replay(self) -> None:
        pass

    def finish(self) -> None:
        pass


NO_DRAWS = NoDraws()
