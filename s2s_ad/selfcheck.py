"""The self-check behind ``grad(f, check=True)`` and ``S2S_AD_CHECK=1``: the dot-product test.

For a random direction ``t`` over the arguments being differentiated, forward
mode gives the directional derivative ``df . t`` directly, and the reverse-mode
gradient ``g`` gives it as ``<g, t>``.  The two are computed by independent
transformations (forward.py and reverse.py) and independent rules (tangents
and adjoints), so a wrong rule or a wrong transformation almost never makes
them agree by chance: ``t`` is random, fresh at each call.

Only real floats and real float arrays take part: integers, booleans, ``None``
and other values keep a zero direction (they carry no derivative, or no
direction is defined for them here).  The tolerance follows the lowest
precision involved: the square root of its machine epsilon, relative to the
size of the terms summed (so cancellation in ``<g, t>`` is not mistaken for
a disagreement).

Input: the arguments, the gradient the reverse sweep returned, and a function
running forward mode.  Output: nothing, or ``GradientCheckError``.
"""
from __future__ import annotations

import os
from typing import Any, Callable, Sequence

import numpy as np

from .errors import GradientCheckError

ENVIRONMENT_VARIABLE = "S2S_AD_CHECK"

# forward(names, args, tangents) -> (value, directional derivative)
Forward = Callable[[tuple, tuple, tuple], tuple]


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
        return np.issubdtype(value.dtype, np.floating)
    return False


def _direction(rng: np.random.Generator, value: Any) -> Any:
    """A random direction shaped and typed like ``value`` (standard normal entries)."""
    if isinstance(value, np.ndarray):
        return rng.standard_normal(value.shape).astype(value.dtype)
    if isinstance(value, np.floating):
        return type(value)(rng.standard_normal())
    return float(rng.standard_normal())


def _tolerance_epsilon(values: Sequence[Any]) -> float:
    """Machine epsilon of the lowest float precision among ``values`` (float64 if none)."""
    epsilon = float(np.finfo(np.float64).eps)
    for value in values:
        dtype = np.result_type(value) if value is not None else None
        if dtype is not None and np.issubdtype(dtype, np.floating):
            epsilon = max(epsilon, float(np.finfo(dtype).eps))
    return epsilon


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
    terms = [np.asarray(g, dtype=np.float64) * np.asarray(t, dtype=np.float64)
             for (_, _, g), t in zip(chosen, directions)]
    reverse = float(sum(np.sum(term) for term in terms))
    along = float(np.real(along))
    if not (np.isfinite(reverse) and np.isfinite(along)):
        if np.isfinite(reverse) == np.isfinite(along):
            return  # both overflowed or are nan: nothing to compare
        raise GradientCheckError(function, along, reverse, 0.0)
    epsilon = _tolerance_epsilon([value, forward_value, along] + [g for _, _, g in chosen] + list(directions))
    scale = sum(float(np.sum(np.abs(term))) for term in terms) + abs(along)
    tolerance = np.sqrt(epsilon) * scale + np.finfo(np.float64).tiny  # tiny: exact zeros on both sides pass
    if abs(along - reverse) > tolerance:
        raise GradientCheckError(function, along, reverse, tolerance)
    _compare_values(function, value, forward_value, epsilon)


def _compare_values(function: str, value: Any, forward_value: Any, epsilon: float) -> None:
    """The function's value from the reverse sweep and from forward mode must agree too."""
    try:
        a, b = float(np.real(value)), float(np.real(forward_value))
    except (TypeError, ValueError):
        return  # not a number (has_aux pairs and the like are compared by their gradients alone)
    if np.isfinite(a) and np.isfinite(b) and abs(a - b) > np.sqrt(epsilon) * (abs(a) + abs(b)) + 1e-300:
        raise GradientCheckError(function, b, a, np.sqrt(epsilon) * (abs(a) + abs(b)), what="value")
