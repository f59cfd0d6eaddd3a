"""The self-check behind ``grad(f, check=True)`` and ``S2S_AD_CHECK=1``: the dot-product test.

For a random direction ``t`` over the arguments being differentiated, forward
mode gives the directional derivative ``df . t`` directly, and the reverse-mode
gradient ``g`` gives it as ``<g, t>``.  The two are computed by independent
transformations (forward.py and reverse.py) and independent rules (tangents
and adjoints), so a wrong rule or a wrong transformation almost never makes
them agree by chance: ``t`` is random, fresh at each call.  The forward pass sees the
random draws the reverse sweep saw (``api`` replays them: ``draws.Draws``).

Only real floats and real float arrays take part: integers, booleans, ``None``
and other values keep a zero direction (they carry no derivative, or no
direction is defined for them here).  A nan or inf on either side is not
compared: it is not silent, and the modes differ there by convention.  The tolerance follows the lowest
precision involved: the square root of its machine epsilon, relative to the
size of the terms summed (so cancellation in ``<g, t>`` is not mistaken for
a disagreement); where that fails, a second look adds the derivative's size at two
points a relative 1e-6 away, since at a point where the derivative vanishes
(an optimiser's converged step) both modes return rounding noise of terms that
cancel inside the function, which no result shows (``_size_nearby``).

Input: the arguments, the gradient the reverse sweep returned, and a function
running forward mode.  Output: nothing, or ``GradientCheckError``; the forward function raises
``NoForwardMode`` where forward mode cannot be built (a user's rule with an adjoint and no
tangent), which the caller turns into a ``SelfCheckSkipped`` warning under ``S2S_AD_CHECK=1``.
"""
from __future__ import annotations

import functools
import math
import os
from typing import Any, Callable, Sequence

import numpy as np

from ..core.errors import GradientCheckError

ENVIRONMENT_VARIABLE = "S2S_AD_CHECK"
_FLOAT64_EPSILON = float(np.finfo(np.float64).eps)
_TINY = float(np.finfo(np.float64).tiny)

# forward(names, args, tangents) -> (value, directional derivative)
Forward = Callable[[tuple, tuple, tuple], tuple]


class SelfCheckSkipped(UserWarning):
    """``S2S_AD_CHECK=1`` could not compare this call: forward mode cannot be built for the function (a
    rule declared with ``@s2s_ad.adjoint`` and no ``@s2s_ad.tangent``).  The gradient is returned
    unchecked.  (``check=True``, asked for one function, raises the ``TransformError`` instead.)"""


class NoForwardMode(Exception):
    """Raised by the forward function ``dot_product_test`` is given where forward mode cannot be built."""

    def __init__(self, function: str, reason: Exception) -> None:
        super().__init__(f"{function}: the gradient was not self-checked, since forward mode cannot be built for "
                         f"it: {reason}")


def switched_on_by_environment() -> bool:
    """True when ``S2S_AD_CHECK`` is set to anything but "", "0", "false", "no" or "off"."""
    return os.environ.get(ENVIRONMENT_VARIABLE, "").strip().lower() not in ("", "0", "false", "no", "off")


def _real_float(value: Any) -> bool:
    """True for a real float or a real float array: the values a direction is drawn for."""
    if isinstance(value, (bool, np.bool_)):
        return False
    if isinstance(value, float):
        return True
    if isinstance(value, (np.ndarray, np.floating)):
        return value.dtype.kind == "f"
    return False


def _direction(rng: np.random.Generator, value: Any) -> Any:
    """A random direction shaped and typed like ``value`` (standard normal entries)."""
    if isinstance(value, np.ndarray):
        shape: tuple[int, ...] = value.shape  # (typed: an untyped shape picks the overload that returns a float)
        return rng.standard_normal(shape).astype(value.dtype)
    if isinstance(value, np.floating):
        return type(value)(rng.standard_normal())
    return float(rng.standard_normal())


@functools.lru_cache(maxsize=None)
def _epsilon_of(dtype: np.dtype) -> float:
    return float(np.finfo(dtype).eps)


def _tolerance_epsilon(values: Sequence[Any]) -> float:
    """Machine epsilon of the lowest float precision among ``values`` (float64 for Python floats)."""
    epsilon = _FLOAT64_EPSILON
    for value in values:
        dtype = getattr(value, "dtype", None)
        if dtype is not None and dtype.kind == "f" and dtype.itemsize < 8:
            epsilon = max(epsilon, _epsilon_of(dtype))
    return epsilon


def _inner_products(gradient: Any, direction: Any) -> tuple[float, float]:
    """``<gradient, direction>`` and ``<|gradient|, |direction|>`` in float64 (the second sizes the
    rounding the first can carry).  Plain floats skip NumPy: a scalar np.sum costs microseconds."""
    if isinstance(direction, np.ndarray):
        g = np.asarray(gradient, dtype=np.float64).ravel()
        t = direction.astype(np.float64, copy=False).ravel()
        return float(g @ t), float(np.abs(g) @ np.abs(t))
    product = float(gradient) * float(direction)
    return product, abs(product)


def dot_product_test(function: str, params: Sequence[str], args: tuple, wrt: Sequence[str],
                     gradients: Sequence[Any], value: Any, forward: Forward, rng: np.random.Generator) -> None:
    """Raise ``GradientCheckError`` unless forward mode along a random direction matches ``<gradients, t>``.

    ``gradients`` has one entry per name in ``wrt`` (the reverse sweep's result);
    ``value`` is the function's value from the same sweep.
    """
    chosen = [(name, args[params.index(name)], g) for name, g in zip(wrt, gradients)
              if _real_float(args[params.index(name)])]
    if not chosen:
        return  # nothing differentiable by a direction: integers, None, containers only
    directions = tuple(_direction(rng, a) for _, a, _ in chosen)
    forward_value, along = forward(tuple(name for name, _, _ in chosen), args, directions)
    products = [_inner_products(g, t) for (_, _, g), t in zip(chosen, directions)]
    reverse = sum(p for p, _ in products)
    along = float(along.real) if isinstance(along, complex) else float(along)
    if not (math.isfinite(reverse) and math.isfinite(along)):
        # Nothing to compare, and nothing silent: the user sees the nan or inf.  The modes may
        # legitimately differ here: where(x > 0, sqrt(x), 0) at x < 0 is nan in reverse mode
        # (0 * nan, as in JAX) and finite in forward mode (docs/conventions.md).
        return
    epsilon = _tolerance_epsilon([value, forward_value, along] + [g for _, _, g in chosen] + list(directions))
    scale = sum(size for _, size in products) + abs(along)
    tolerance = math.sqrt(epsilon) * scale + _TINY  # tiny: exact zeros on both sides pass
    if abs(along - reverse) > tolerance:
        tolerance = math.sqrt(epsilon) * (scale + _size_nearby(params, args, chosen, directions, forward, rng)) + _TINY
        if abs(along - reverse) > tolerance:
            raise GradientCheckError(function, along, reverse, tolerance)
    _compare_values(function, value, forward_value, epsilon)


_NEARBY = 1e-6  # the radius, relative to each argument's size, of the second look


def _size_nearby(params: Sequence[str], args: tuple, chosen: list, directions: tuple, forward: Forward,
                 rng: np.random.Generator) -> float:
    """The largest size of the derivative along the same directions at two points a relative 1e-6 away.

    Where the derivative vanishes at the point itself (an optimiser at convergence, a determinant of
    a rank-deficient matrix), both modes return rounding noise: sums of terms that cancel, whose size
    the results no longer show.  Near the point the derivative has the size those terms have, so
    that size bounds the noise; a wrong rule or transformation away from such points still fails the
    first comparison, and one at them still fails where its error is larger than ``sqrt(eps)`` of the
    derivative's size a relative 1e-6 away.  A nearby point where forward mode raises or is not
    finite adds nothing."""
    largest = 0.0
    names = tuple(name for name, _, _ in chosen)
    for _ in range(2):
        moved = list(args)
        for name, a, _ in chosen:
            size = float(np.sqrt(np.mean(np.square(np.abs(a))))) if np.size(a) else 0.0
            step = _NEARBY * (size if size > 0.0 else 1.0)
            moved[params.index(name)] = _moved(a, _direction(rng, a), step)
        try:
            along = forward(names, tuple(moved), directions)[1]
            along = float(along.real) if isinstance(along, complex) else float(along)
        except Exception:  # (a nearby point outside the domain: no second look from there)
            continue
        if math.isfinite(along):
            largest = max(largest, abs(along))
    return largest


def _moved(value: Any, direction: Any, step: float) -> Any:
    """``value + step * direction``, of ``value``'s type and precision."""
    if isinstance(value, np.ndarray):
        return value + (direction * step).astype(value.dtype)
    return type(value)(value + direction * step)


def _compare_values(function: str, value: Any, forward_value: Any, epsilon: float) -> None:
    """The function's value from the reverse sweep and from forward mode must agree too."""
    try:
        a, b = float(value), float(forward_value)
    except (TypeError, ValueError):
        return  # not a real number (has_aux pairs, complex values): compared by their gradients alone
    allowed = math.sqrt(epsilon) * (abs(a) + abs(b)) + _TINY
    if math.isfinite(a) and math.isfinite(b) and abs(a - b) > allowed:
        raise GradientCheckError(function, b, a, allowed, what="value")
