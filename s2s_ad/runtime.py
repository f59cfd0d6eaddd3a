"""The few helpers generated code may call.

Generated code calls a helper only where the shape of a value is not known
when the code is generated; where it is known, the generator writes the
plain NumPy expression instead.  Every helper here is small, has no state,
and is itself differentiable by the templates (so generated code can be
transformed again for higher derivatives).
"""
from __future__ import annotations

from typing import Any

import numpy as np


def unbroadcast(grad: Any, like: Any) -> Any:
    """Sum ``grad`` down to the shape of ``like`` (undoing NumPy broadcasting).

    ``grad`` has the broadcast shape of an elementwise operation that ``like``
    took part in; the result has ``like``'s shape.  A Python number ``like``
    gets a NumPy scalar.
    """
    shape = np.shape(like)
    grad_shape = np.shape(grad)
    if grad_shape == shape:
        return grad
    if not shape:
        return np.sum(grad)
    extra = len(grad_shape) - len(shape)
    if extra < 0:  # a scalar adjoint flowing into an array (seeded results)
        return np.broadcast_to(grad, shape).copy()
    axes = tuple(range(extra)) + tuple(
        extra + i for i, n in enumerate(shape) if n == 1 and grad_shape[extra + i] != 1
    )
    return np.sum(grad, axis=axes).reshape(shape)


def zeros_like(value: Any) -> Any:
    """The zero gradient of ``value``: ``0.0`` for a number, else an array of zeros."""
    if isinstance(value, (int, float)):
        return 0.0
    return np.zeros(np.shape(value), dtype=np.result_type(value, 1.0))


def writable_copy(grad: Any, like: Any) -> np.ndarray:
    """A fresh float array of ``like``'s shape holding ``grad``, for in-place updates."""
    return np.array(np.broadcast_to(grad, np.shape(like)), dtype=np.result_type(grad, 1.0))


def list_append(items: list, item: Any) -> list:
    """``items + [item]``: what ``items.append(item)`` means in differentiated code."""
    return items + [item]
