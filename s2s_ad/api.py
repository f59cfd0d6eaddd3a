"""The public interface: ``grad``, ``value_and_grad``, ``source``.

A gradient function binds its arguments like the user's function (defaults,
keywords), classifies each argument as a number or an array, and calls the
adjoint generated for that combination of kinds (built on first use, then
cached).  Knowing which arguments are numbers lets the generator drop every
broadcasting reduction from scalar code.
"""
from __future__ import annotations

import functools
import inspect
import numbers
import threading
from typing import Any, Callable, Optional, Sequence, Union

import numpy as np

from .cache import TransformCache
from .errors import TransformError
from .pipeline import STAGES, build_reverse

Wrt = Union[int, str, Sequence[Union[int, str]]]

_CACHE = TransformCache()


def _kind(value: Any) -> Optional[str]:
    """``"scalar"`` for a number, ``"array<N>"`` for an N-dimensional array, else ``None``."""
    cls = type(value)
    if cls is float or cls is int or cls is bool or isinstance(value, (numbers.Number, np.generic)):
        return "scalar"
    if cls is np.ndarray:
        return f"array{value.ndim}"
    return None


def _resolve_wrt(fn: Callable, wrt: Wrt) -> tuple[tuple[str, ...], bool]:
    """Parameter names to differentiate by, and whether the caller gets a tuple."""
    params = list(inspect.signature(fn).parameters)
    several = isinstance(wrt, (tuple, list))
    names = []
    for item in (wrt if several else (wrt,)):
        if isinstance(item, bool) or not isinstance(item, (int, str)):
            raise TypeError(f"wrt must be a parameter position or name, not {item!r}")
        if isinstance(item, int):
            if not -len(params) <= item < len(params):
                raise ValueError(f"wrt={item}: {fn.__name__} has {len(params)} parameters")
            item = params[item]
        elif item not in params:
            raise ValueError(f"wrt={item!r}: {fn.__name__} has no parameter {item!r} (it has {', '.join(params)})")
        names.append(item)
    if len(set(names)) != len(names):
        raise ValueError(f"wrt names a parameter twice: {names}")
    return tuple(names), several


class GradientFunction:
    """The gradient of a function; call it like the function itself."""

    def __init__(self, fn: Callable, wrt: Wrt, with_value: bool) -> None:
        if not callable(fn):
            raise TypeError(f"grad expects a function, got {type(fn).__name__}")
        self.fn = fn
        self._signature = inspect.signature(fn)
        self._n_params = len(self._signature.parameters)
        self.wrt, self._several = _resolve_wrt(fn, wrt)
        self._with_value = with_value
        # Without arrays, kinds follow from types alone: the hot path keys on types.
        # With arrays the rank matters too, so those calls go through _by_kinds.
        self._by_types: dict[tuple, Callable] = {}
        self._by_kinds: dict[tuple, Callable] = {}
        self._wrap_single = self._several and len(self.wrt) == 1
        self._last_source: Optional[str] = None
        self._lock = threading.Lock()
        functools.update_wrapper(self, fn)
        self.__name__ = f"grad_{getattr(fn, '__name__', 'f')}"

    def _specialise(self, args: tuple) -> Callable:
        kinds = tuple(map(_kind, args))
        adjoint = self._by_kinds.get(kinds)
        if adjoint is None:
            key = (self.fn, getattr(self.fn, "__code__", None), self.wrt, kinds)
            built = _CACHE.get(key, lambda: build_reverse(self.fn, self.wrt, kinds))
            adjoint = self._by_kinds[kinds] = built.function
            self._last_source = built.source
        if not any(k and k.startswith("array") for k in kinds):
            self._by_types[tuple(map(type, args))] = adjoint
        return adjoint

    def _bind(self, args: tuple, kwargs: dict) -> tuple:
        bound = self._signature.bind(*args, **kwargs)
        bound.apply_defaults()
        return tuple(bound.arguments.values())

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        if kwargs or len(args) != self._n_params:
            args = self._bind(args, kwargs)
        adjoint = self._by_types.get(tuple(map(type, args))) or self._specialise(args)
        value, gradient = adjoint(*args)
        if value.__class__ is not float and np.ndim(value) != 0:
            raise TypeError(
                f"grad needs {self.fn.__name__} to return a scalar, but it returned an array of shape "
                f"{np.shape(value)}; use s2s_ad.vjp or s2s_ad.jacobian for non-scalar results")
        if self._wrap_single:
            gradient = (gradient,)
        return (value, gradient) if self._with_value else gradient

    @property
    def source(self) -> str:
        """The adjoint's source: the one the last call ran, or before any call the generic one."""
        if self._last_source is None:
            self._last_source = build_reverse(self.fn, self.wrt, (None,) * self._n_params).source
        return self._last_source

    def source_for(self, *args: Any, **kwargs: Any) -> str:
        """The adjoint's source specialised for these arguments (nothing is run)."""
        kinds = tuple(map(_kind, self._bind(args, kwargs)))
        return _CACHE.get((self.fn, getattr(self.fn, "__code__", None), self.wrt, kinds),
                          lambda: build_reverse(self.fn, self.wrt, kinds)).source

    def __repr__(self) -> str:
        return f"<gradient of {getattr(self.fn, '__qualname__', self.fn)} with respect to {', '.join(self.wrt)}>"


def _decorator_or_call(fn: Optional[Callable], wrt: Wrt, with_value: bool) -> Any:
    if fn is None:
        return lambda f: GradientFunction(f, wrt, with_value)
    return GradientFunction(fn, wrt, with_value)


def grad(fn: Optional[Callable] = None, wrt: Wrt = 0) -> Any:
    """The gradient of a scalar function with respect to ``wrt`` (see API.md)."""
    return _decorator_or_call(fn, wrt, with_value=False)


def value_and_grad(fn: Optional[Callable] = None, wrt: Wrt = 0) -> Any:
    """Like ``grad``, but the call returns ``(fn(*args), gradient)``."""
    return _decorator_or_call(fn, wrt, with_value=True)


def source(fn: Callable, wrt: Wrt = 0, mode: str = "reverse", stage: str = "optimized",
           args: Optional[tuple] = None) -> str:
    """The generated code for ``fn`` as Python source.

    ``stage`` is "ssa" (the lowered three-address form), "adjoint" (as
    generated) or "optimized" (as run).  ``args``, if given, specialises the
    code for arguments like these (numbers vs arrays), as a call would.
    """
    if stage not in STAGES:
        raise ValueError(f"stage must be one of {', '.join(STAGES)}, not {stage!r}")
    if mode != "reverse":
        if mode == "forward":
            raise TransformError("in forward mode", "forward mode (jvp) is not available in this version; "
                                 "use mode='reverse'")
        raise ValueError(f"mode must be 'reverse' or 'forward', not {mode!r}")
    names, _ = _resolve_wrt(fn, wrt)
    n = len(inspect.signature(fn).parameters)
    kinds = (None,) * n if args is None else tuple(map(_kind, args))
    return build_reverse(fn, names, kinds, stage=stage, compile_it=False).source
