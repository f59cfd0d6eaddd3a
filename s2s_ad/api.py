"""The public interface: ``grad``, ``value_and_grad``, ``jvp``, ``vjp``,
``jacobian``, ``source``.

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
import random
import threading
from dataclasses import dataclass
from typing import Any, Callable, Optional, Sequence, Union

import numpy as np

from .cache import TransformCache, is_current, name_the_users_line
from .errors import TransformError
from .parse import Snapshot
from .pipeline import (STAGES, Built, build_derivative_of, build_forward, build_gradient_only, build_reverse,
                       build_split, private_draw_in)

Wrt = Union[int, str, Sequence[Union[int, str]]]

_CACHE = TransformCache()


def _run(generated: Callable, args: tuple) -> Any:
    """Call generated code; an error inside it gets a note naming the user's line."""
    try:
        return generated(*args)
    except Exception as exc:
        name_the_users_line(exc)
        raise


def _user_facing(function: Callable) -> Callable:
    """Let a ``TransformError`` reach the user without s2s_ad's own frames and causes:
    its message names the user's file, line and construct, which is what they need."""
    @functools.wraps(function)
    def call(*args: Any, **kwargs: Any) -> Any:
        try:
            return function(*args, **kwargs)
        except TransformError as exc:
            raise exc.with_traceback(None) from None
    return call


@functools.lru_cache(maxsize=None)
def _types_of(n: int) -> Callable[[tuple], tuple]:
    """A function giving the types of an n-tuple's items, the key of a cached gradient.
    Written out for each n it takes a third of the time of ``tuple(map(type, args))``."""
    items = "".join(f"type(args[{i}]), " for i in range(n))
    return eval(f"lambda args: ({items})", {"type": type})  # noqa: S307 (our own text, no user input)


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
    """The gradient of a function; call it like the function itself.

    ``fn`` may itself be a gradient (``grad(grad(f))``): then this is forward
    mode over the plain function the inner gradient generates (see
    ``function_for``), to any order.
    """

    def __init__(self, fn: Callable, wrt: Wrt, with_value: bool) -> None:
        if not callable(fn):
            raise TypeError(f"grad expects a function, got {type(fn).__name__}")
        if isinstance(fn, GradientFunction) and fn._with_value:
            raise TypeError("grad of value_and_grad(f) returns a pair; differentiate grad(f) instead")
        self.fn = fn
        self.inner = fn if isinstance(fn, GradientFunction) else None
        try:
            self._signature = inspect.signature(fn)
        except (TypeError, ValueError):  # a builtin or ufunc without one (older NumPy)
            raise TransformError(f"{getattr(fn, '__qualname__', fn)!r} ({type(fn).__name__})",
                                 "only plain Python functions defined with def can be transformed; for a "
                                 "builtin or C function, give it a rule with @s2s_ad.adjoint") from None
        self._n_params = len(self._signature.parameters)
        self._types_of = _types_of(self._n_params)
        self.wrt, self._several = _resolve_wrt(fn, wrt)
        self._with_value = with_value
        # Without arrays, kinds follow from types alone: the hot path keys on types.
        # With arrays the rank matters too, so those calls go through _by_kinds.
        # _by_kinds holds Built records; _by_types (function, snapshot) pairs, the snapshot None
        # where the code reads no free name.  Both are checked against their snapshot at each call.
        self._by_types: dict[tuple, tuple[Callable, Optional[Snapshot]]] = {}
        self._by_kinds: dict[tuple, Built] = {}
        self._wrap_single = self._several and len(self.wrt) == 1
        self._last_source: Optional[str] = None
        self._lock = threading.Lock()
        functools.update_wrapper(self, fn, updated=())  # not __dict__: fn may be a gradient
        self.__name__ = f"grad_{getattr(fn, '__name__', 'f')}"

    @property
    def key(self) -> tuple:
        """What this derivative is, for the transform cache: equal keys, equal code."""
        base = self.inner.key if self.inner is not None else (self.fn, getattr(self.fn, "__code__", None))
        return ("grad", base, self.wrt, self._several, self._wrap_single)

    @_user_facing
    def _adjoint(self, kinds: tuple) -> Built:
        key = (self.fn, getattr(self.fn, "__code__", None), self.wrt, kinds)
        return _CACHE.get(key, lambda: build_reverse(self.fn, self.wrt, kinds))

    @_user_facing
    def function_for(self, kinds: tuple) -> Built:
        """This derivative as a plain generated function of the same parameters, returning
        exactly what a call returns, for arguments of these kinds.  It is valid input to
        the transformer: that is how the next order is taken."""
        params = list(self._signature.parameters)
        if self.inner is None:
            adjoint = self._adjoint(kinds)
            return _CACHE.get(self.key + (kinds,), lambda: build_gradient_only(
                self.fn, adjoint, params, self.wrt, self._wrap_single))
        self.inner.check_scalar_result(kinds)
        inner = self.inner.function_for(kinds)
        return _CACHE.get(self.key + (kinds,), lambda: build_derivative_of(
            inner, params, kinds, self.wrt, self._several))

    def check_scalar_result(self, kinds: tuple) -> None:
        """Refuse to be differentiated by ``grad`` where the gradient is not a number."""
        params = list(self._signature.parameters)
        arrays = [w for w in self.wrt if (kinds[params.index(w)] or "").startswith("array")]
        if self._several or arrays:
            what = "a tuple" if self._several else f"an array (the gradient by {arrays[0]})"
            raise TypeError(f"grad of {self!r}: its result is {what}, not a number; "
                            f"use s2s_ad.hessian or s2s_ad.jacobian")

    def _specialise(self, args: tuple) -> Callable:
        kinds = tuple(map(_kind, args))
        built = self._by_kinds.get(kinds)
        if built is None or not is_current(built):
            built = self._by_kinds[kinds] = self._adjoint(kinds) if self.inner is None else self.function_for(kinds)
            self._last_source = built.source
        if not any(k and k.startswith("array") for k in kinds):
            snapshot = built.snapshot
            depends = snapshot is not None and bool(snapshot.names or snapshot.cells)
            self._by_types[self._types_of(args)] = (built.function, snapshot if depends else None)
        return built.function

    def _bind(self, args: tuple, kwargs: dict) -> tuple:
        bound = self._signature.bind(*args, **kwargs)
        bound.apply_defaults()
        return tuple(bound.arguments.values())

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        if kwargs or len(args) != self._n_params:
            args = self._bind(args, kwargs)
        if self.inner is not None:
            gradient = _run(self._specialise(args), args)
            return (self.inner(*args), gradient) if self._with_value else gradient
        # The hot path: one dictionary look-up, and the snapshot only where there is one.
        entry = self._by_types.get(self._types_of(args))
        if entry is None or (entry[1] is not None and not entry[1].valid()):
            adjoint = self._specialise(args)
        else:
            adjoint = entry[0]
        try:  # _run, inlined: this is every cached call
            value, gradient = adjoint(*args)
        except Exception as exc:
            name_the_users_line(exc)
            raise
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
            unknown = (None,) * self._n_params
            self._last_source = (self._adjoint(unknown) if self.inner is None else self.function_for(unknown)).source
        return self._last_source

    def source_for(self, *args: Any, **kwargs: Any) -> str:
        """The adjoint's source specialised for these arguments (nothing is run)."""
        kinds = tuple(map(_kind, self._bind(args, kwargs)))
        return (self._adjoint(kinds) if self.inner is None else self.function_for(kinds)).source

    def __repr__(self) -> str:
        return f"<gradient of {getattr(self.fn, '__qualname__', self.fn)!s} with respect to {', '.join(self.wrt)}>"


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


@_user_facing
def source(fn: Callable, wrt: Wrt = 0, mode: str = "reverse", stage: str = "optimized",
           args: Optional[tuple] = None) -> str:
    """The generated code for ``fn`` as Python source.

    ``stage`` is "ssa" (the lowered three-address form), "adjoint" (as
    generated) or "optimized" (as run).  ``args``, if given, specialises the
    code for arguments like these (numbers vs arrays), as a call would.
    """
    if stage not in STAGES:
        raise ValueError(f"stage must be one of {', '.join(STAGES)}, not {stage!r}")
    if mode not in ("reverse", "forward"):
        raise ValueError(f"mode must be 'reverse' or 'forward', not {mode!r}")
    names, _ = _resolve_wrt(fn, wrt)
    n = len(inspect.signature(fn).parameters)
    kinds = (None,) * n if args is None else tuple(map(_kind, args))
    build = build_reverse if mode == "reverse" else build_forward
    return build(fn, names, kinds, stage=stage, compile_it=False).source


# -- forward mode, vjp and Jacobians ------------------------------------------


def _differentiable(value: Any) -> bool:
    """True for values that carry derivatives: floats and float (or complex) arrays."""
    if isinstance(value, (bool, np.bool_)) or value is None:
        return False
    if isinstance(value, (int, np.integer)):
        return False
    return np.issubdtype(np.result_type(value), np.inexact) if _kind(value) else False


def _bound_primals(fn: Callable, primals: Sequence[Any]) -> tuple[list[str], tuple]:
    """Parameter names and the full argument tuple (defaults filled in) for positional primals."""
    if not isinstance(primals, (tuple, list)):
        raise TypeError(f"primals must be a tuple of arguments, not {type(primals).__name__}")
    signature = inspect.signature(fn)
    try:
        bound = signature.bind(*primals)
    except TypeError as exc:
        raise TypeError(f"the primals do not fit {fn.__name__}{signature}: {exc}") from None
    bound.apply_defaults()
    return list(signature.parameters), tuple(bound.arguments.values())


def _check_tangent(fn: Callable, name: str, primal: Any, tangent: Any) -> Any:
    if not _differentiable(primal):
        if tangent is not None and np.any(np.asarray(tangent) != 0):
            raise ValueError(f"jvp of {fn.__name__}: {name} = {primal!r} carries no derivative "
                             f"(it is not a float), so its tangent must be None or zero")
        return None
    if np.shape(tangent) != np.shape(primal):
        raise ValueError(f"jvp of {fn.__name__}: the tangent of {name} has shape {np.shape(tangent)}, "
                         f"but {name} has shape {np.shape(primal)}; tangents are never broadcast")
    if isinstance(tangent, np.ndarray) or isinstance(primal, np.ndarray):
        # float, not integer: an integer tangent would truncate what is written into it
        return np.asarray(tangent, dtype=np.result_type(tangent, primal, 1.0))
    return complex(tangent) if np.iscomplexobj(tangent) else float(tangent)


def _plain(fn: Callable, args: tuple) -> Callable:
    """``fn`` itself, or for a gradient the plain function it generates for such arguments."""
    if isinstance(fn, GradientFunction):
        return fn.function_for(tuple(map(_kind, args))).function
    return fn


@_user_facing
def _tangent_function(fn: Callable, wrt: tuple[str, ...], args: tuple) -> Callable:
    fn = _plain(fn, args)
    kinds = tuple(map(_kind, args))
    key = ("forward", fn, getattr(fn, "__code__", None), wrt, kinds)
    return _CACHE.get(key, lambda: build_forward(fn, wrt, kinds)).function


def jvp(fn: Callable, primals: Sequence[Any], tangents: Sequence[Any]) -> tuple[Any, Any]:
    """Forward mode: ``(fn(*primals), directional derivative of fn along tangents)``.

    ``tangents`` has one entry per primal, of the primal's shape; arguments
    that are not floats (integers, booleans) take ``None`` or zero.
    """
    params, args = _bound_primals(fn, primals)
    if not isinstance(tangents, (tuple, list)) or len(tangents) != len(primals):
        raise ValueError(f"jvp of {fn.__name__}: give one tangent per primal "
                         f"({len(primals)} primals, {len(tangents) if isinstance(tangents, (tuple, list)) else 'no tuple of'} tangents)")
    checked = [_check_tangent(fn, p, a, t) for p, a, t in zip(params, args, tangents)]
    wrt = tuple(p for p, t in zip(params, checked) if t is not None)
    tangent_args = tuple(t for t in checked if t is not None)
    return _run(_tangent_function(fn, wrt, args), args + tangent_args)


@_user_facing
def vjp(fn: Callable, *primals: Any) -> tuple[Any, Callable]:
    """Reverse mode: ``(fn(*primals), vjp_fn)``; ``vjp_fn(cotangent)`` returns one adjoint per primal.

    The forward sweep runs once, here; each call of ``vjp_fn`` runs the
    reverse sweep alone, so pulling back many cotangents costs one sweep each.
    """
    if isinstance(fn, GradientFunction):
        raise TypeError("vjp of a gradient would be reverse over reverse, which s2s_ad does not do; "
                        "use s2s_ad.jvp of the gradient, or s2s_ad.hessian (forward over reverse)")
    params, args = _bound_primals(fn, primals)
    kinds = tuple(map(_kind, args))
    split = build_split(fn, kinds)
    out, tape = _run(split.forward, args + (None,))

    def vjp_fn(cotangent: Any) -> tuple:
        if np.shape(cotangent) != np.shape(out):
            raise ValueError(f"vjp of {fn.__name__}: the cotangent has shape {np.shape(cotangent)}, but the "
                             f"result has shape {np.shape(out)}; cotangents are never broadcast")
        adjoints = _run(split.backward, (cotangent, tape))  # the tape is persistent: reading it takes nothing
        return tuple(adjoints[:len(primals)])

    return out, vjp_fn


class Jacobian:
    """``jacobian(fn, wrt)(*args)``: the array of partial derivatives, shaped ``out.shape + arg.shape``.

    Forward mode (one jvp per input element) when the inputs are fewer than
    the outputs, reverse mode (one vjp per output element) otherwise.
    """

    def __init__(self, fn: Callable, wrt: Wrt) -> None:
        self.fn = fn
        self.wrt, self._several = _resolve_wrt(fn, wrt)
        functools.update_wrapper(self, fn, updated=())  # not __dict__: fn may be a gradient

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        bound = inspect.signature(self.fn).bind(*args, **kwargs)
        bound.apply_defaults()
        params, values = list(bound.arguments), tuple(bound.arguments.values())
        positions = [params.index(w) for w in self.wrt]
        for i in positions:
            if not _differentiable(values[i]):
                raise TypeError(f"jacobian of {self.fn.__name__}: {params[i]} = {values[i]!r} is not a float "
                                f"or float array, so it has no derivative")
        draws = _Draws()
        out = self.fn(*values)
        inputs = sum(np.size(values[i]) for i in positions)
        if inputs <= np.size(out) or isinstance(self.fn, GradientFunction):  # no reverse over reverse
            blocks = self._forward(values, positions, out, draws)
        else:
            draws.replay()
            blocks = self._reverse(values, positions, out)
        return tuple(blocks) if self._several else blocks[0]

    def _forward(self, values: tuple, positions: list[int], out: Any, draws: _Draws) -> list:
        tangent_fn = _tangent_function(self.fn, self.wrt, values)
        passes = sum(np.size(values[i]) for i in positions)
        found = private_draw_in(self.fn) if passes > 1 and not isinstance(self.fn, GradientFunction) else None
        if found:  # (a gradient's code is checked where it is transformed: analysis.check_constant_calls)
            raise TransformError(f"the jacobian of {self.fn.__name__}, which draws from a generator object "
                                 f"({found})", "forward mode takes a pass per input element, and each would "
                                 "draw other numbers; draw with np.random.* (replayed in each pass), or pass "
                                 "the draws in as an argument")
        zeros = [np.zeros_like(values[i], dtype=float) for i in positions]
        blocks = []
        for k, i in enumerate(positions):
            columns = []
            for index in np.ndindex(np.shape(values[i])):
                tangents = [z if isinstance(values[j], np.ndarray) else 0.0 for j, z in zip(positions, zeros)]
                unit = np.zeros(np.shape(values[i]))
                unit[index] = 1.0
                tangents[k] = unit if isinstance(values[i], np.ndarray) else 1.0
                draws.replay()
                columns.append(np.asarray(tangent_fn(*values, *tangents)[1], dtype=float))
            stacked = np.stack(columns, axis=-1) if columns else np.zeros(np.shape(out) + (0,))
            blocks.append(stacked.reshape(np.shape(out) + np.shape(values[i])))
        return blocks

    def _reverse(self, values: tuple, positions: list[int], out: Any) -> list:
        _, pull = vjp(self.fn, *values)
        rows = {i: [] for i in positions}
        for index in np.ndindex(np.shape(out)):
            unit = np.zeros(np.shape(out))
            unit[index] = 1.0
            adjoints = pull(unit if np.ndim(out) else 1.0)
            for i in positions:
                rows[i].append(np.asarray(adjoints[i], dtype=float))
        return [np.stack(rows[i]).reshape(np.shape(out) + np.shape(values[i])) for i in positions]


class _Draws:
    """The global random states (NumPy's ``np.random.*``, Python's ``random.*``) as a derivative
    taken in several passes found them: each pass replays them, so every pass sees the draws of
    one call of the function (``analysis.check_constant_calls`` refuses draws from other generators
    in code run more than once)."""

    def __init__(self) -> None:
        self.numpy, self.python = np.random.get_state(), random.getstate()

    def replay(self) -> None:
        np.random.set_state(self.numpy)
        random.setstate(self.python)


def jacobian(fn: Callable, wrt: Wrt = 0) -> Jacobian:
    """The Jacobian of ``fn`` with respect to ``wrt`` (a tuple ``wrt`` gives a tuple of blocks)."""
    return Jacobian(fn, wrt)


class Hessian:
    """``hessian(fn, wrt)(*args)``: second derivatives, forward mode over the generated gradient.

    With one ``wrt``, an array shaped ``arg.shape + arg.shape``; with a tuple,
    nested tuples of blocks ``H[i][j]`` = d²fn / d wrt_i d wrt_j.
    """

    def __init__(self, fn: Callable, wrt: Wrt) -> None:
        self.fn = fn
        self.wrt, self._several = _resolve_wrt(fn, wrt)
        functools.update_wrapper(self, fn, updated=())  # not __dict__: fn may be a gradient

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        by = self.wrt if self._several else self.wrt[0]
        rows = tuple(Jacobian(GradientFunction(self.fn, w, with_value=False), by)(*args, **kwargs) for w in self.wrt)
        return rows if self._several else rows[0]


def hessian(fn: Callable, wrt: Wrt = 0) -> Hessian:
    """The Hessian of scalar ``fn`` with respect to ``wrt`` (forward over reverse)."""
    return Hessian(fn, wrt)


# -- checking a gradient ------------------------------------------------------


@dataclass
class GradCheck:
    """How far ``grad(fn)`` is from central finite differences (``check_grad``)."""

    ok: bool
    worst: str  # the component furthest off, e.g. "d/dx[2]"
    ours: float
    numeric: float
    error: float  # |ours - numeric| there, over atol + rtol * |numeric| (ok means <= 1)

    def __str__(self) -> str:
        verdict = "ok" if self.ok else "MISMATCH"
        return (f"{verdict}: worst component {self.worst}: ours {self.ours:.10g}, finite differences "
                f"{self.numeric:.10g} ({self.error:.3g} of the tolerance)")


def check_grad(fn: Callable, *args: Any, wrt: Optional[Wrt] = None, eps: float = 1e-6, rtol: float = 1e-5,
               atol: float = 1e-6) -> GradCheck:
    """Compare ``grad(fn, wrt)(*args)`` with central differences; report the worst component.

    ``wrt`` defaults to every float argument.  Use it to check a rule you
    wrote with ``@s2s_ad.adjoint``: ``assert s2s_ad.check_grad(f, x).ok``.
    """
    params = list(inspect.signature(fn).parameters)
    positions = [i for i, a in enumerate(args) if _differentiable(a)] if wrt is None else [
        params.index(w) for w in _resolve_wrt(fn, wrt)[0]]
    if not positions:
        raise TypeError(f"check_grad of {fn.__name__}: no argument is a float or float array")
    gradients = GradientFunction(fn, tuple(positions), with_value=False)(*args)
    worst = GradCheck(True, "", 0.0, 0.0, -1.0)
    for i, ours in zip(positions, gradients):
        x = np.asarray(args[i], dtype=float)
        for index in np.ndindex(x.shape):
            step = np.zeros_like(x)
            step[index] = eps
            moved = [list(args), list(args)]
            for sign, values in zip((1, -1), moved):
                values[i] = x + sign * step if isinstance(args[i], np.ndarray) else float(x + sign * step)
            numeric = (float(fn(*moved[0])) - float(fn(*moved[1]))) / (2 * eps)
            value = float(np.asarray(ours)[index])
            error = abs(value - numeric) / (atol + rtol * abs(numeric))
            if error > worst.error:
                label = f"d/d{params[i]}" + (f"[{', '.join(map(str, index))}]" if index else "")
                worst = GradCheck(error <= 1.0, label, value, numeric, error)
    return worst
