"""What the parts of a gradient function read of it: one ``typing.Protocol`` per part.

A ``GradientFunction`` (gradient.py) holds the functions of its parts (built_code.py, code_tables.py,
container_calls.py, showing.py, pickling.py) as its methods.  Each part types the object it is given
by the protocol below that lists what it reads and writes, not by the class, so no part imports
gradient.py and the api package's imports have no cycle.  ``GradientFunction`` meets every one of
them (mypy checks it wherever the class hands itself to a part).
"""

from __future__ import annotations

import inspect
from typing import Any, Callable, Optional, Protocol

from ..driver.pipeline import Built
from ..targets.target import Target
from .calling import Entry


class Derivative(Protocol):
    """What every part reads: the user's function, what it is differentiated by, the target, and the
    code for arguments of given kinds."""

    @property
    def fn(self) -> Callable: ...
    @property
    def wrt(self) -> tuple[str, ...]: ...
    @property
    def inner(self) -> Optional[Derivative]: ...  # the gradient this one is of (grad(grad(f))), or None
    @property
    def _target(self) -> Target: ...
    @property
    def _has_aux(self) -> bool: ...
    @property
    def _signature(self) -> inspect.Signature: ...
    def _adjoint(self, kinds: tuple, target: Optional[Target] = None, with_value: Optional[bool] = None) -> Built: ...
    def function_for(self, kinds: tuple, source: Target = ...) -> Built: ...


class Building(Derivative, Protocol):
    """What built_code.py reads: the options that make the code differ, and the cache's key and owner."""

    @property
    def inner(self) -> Optional[Building]: ...
    @property
    def key(self) -> tuple: ...
    @property
    def owner(self) -> Callable: ...
    @property
    def _several(self) -> bool: ...
    @property
    def _value_used(self) -> bool: ...
    @property
    def _wrap_single(self) -> bool: ...
    def check_scalar_result(self, kinds: tuple) -> None: ...


class Tabled(Derivative, Protocol):
    """What code_tables.py reads and writes: the tables of code per signature, and the hot path's test."""

    _hit: Callable[[tuple], Any]
    _run_hit: Callable[[tuple], Any]

    def call_in_full(self, *args: Any, **kwargs: Any) -> Any: ...
    _last_source: Optional[str]
    _last_kinds: Optional[tuple]

    @property
    def owner(self) -> Callable: ...
    @property
    def _with_value(self) -> bool: ...
    @property
    def _value_used(self) -> bool: ...
    @property
    def _check(self) -> bool: ...
    @property
    def _positions(self) -> list[int]: ...
    @property
    def _types_of(self) -> Callable[[tuple], tuple]: ...
    @property
    def _by_types(self) -> dict[tuple, tuple[Entry, Callable[[tuple], Any], Callable[[tuple], Any]]]: ...
    @property
    def _bare(self) -> bool: ...
    @property
    def _wrap_single(self) -> bool: ...
    @property
    def _n_params(self) -> int: ...
    @property
    def _by_shapes(self) -> dict[tuple, tuple[Callable[[tuple], tuple], dict, Target, tuple]]: ...
    @property
    def _by_kinds(self) -> dict[tuple, Built]: ...


class CalledWithContainers(Derivative, Protocol):
    """What container_calls.py reads: what a call returns, and the code for its kinds."""

    @property
    def _value_used(self) -> bool: ...
    @property
    def _with_value(self) -> bool: ...
    @property
    def _several(self) -> bool: ...
    def _specialise(self, args: tuple, kinds: Optional[tuple] = None, target: Optional[Target] = None) -> Built: ...
    def _refuse_result(self, value: Any) -> None: ...


class Shown(Derivative, Protocol):
    """What showing.py reads and writes: the last call's source and kinds, and how a call binds."""

    _last_source: Optional[str]
    _last_kinds: Optional[tuple]

    def _bind(self, args: tuple, kwargs: dict) -> tuple: ...


class Pickled(Protocol):
    """What pickling.py reads: the function and options the derivative was made from."""

    @property
    def _made_from(self) -> tuple: ...
