"""Other automatic differentiation libraries to compare with, used only when installed.

None is required: each is imported inside a ``try``.  autograd and JAX (no
``jit``) run the very same workload source with ``np`` bound to their NumPy
wrapper; Tangent reads the source as s2s_ad does.  A peer that cannot run a
workload (JAX and autograd refuse ``temp[t + 1] = ...``, for instance) shows
as "n/a" with its reason.

PyTorch is not among them: it has no NumPy-compatible namespace, so it
would need a second copy of every workload, which this suite does not keep.
"""
from __future__ import annotations

import types
from dataclasses import dataclass
from typing import Any, Callable, Optional

from benchmarks.cases import Case

GradientMaker = Callable[[Case], Callable[..., tuple]]


@dataclass(frozen=True)
class Peer:
    """An installed library: ``make(case)`` returns ``gradient(*args) -> tuple`` like the hand-written one."""

    name: str
    make: GradientMaker


def _with_namespace(function: types.FunctionType, namespace: dict) -> types.FunctionType:
    copy = types.FunctionType(function.__code__, namespace, function.__name__,
                              function.__defaults__, function.__closure__)
    copy.__kwdefaults__ = function.__kwdefaults__
    return copy


def rebound(function: types.FunctionType, numpy_like: Any) -> types.FunctionType:
    """``function`` with ``np`` meaning ``numpy_like``, and so for the helpers of its module it calls."""
    namespace = dict(function.__globals__)
    namespace["np"] = numpy_like
    for name, value in list(namespace.items()):
        if isinstance(value, types.FunctionType) and value.__module__ == function.__module__:
            namespace[name] = _with_namespace(value, namespace)
    return namespace[function.__name__]


def _autograd() -> Optional[Peer]:
    try:
        import autograd
        import autograd.numpy as anp
    except Exception:  # not installed, or broken by its own dependencies
        return None

    def make(case: Case) -> Callable[..., tuple]:
        return autograd.grad(rebound(case.function, anp), case.argnums)
    return Peer("autograd", make)


def _jax() -> Optional[Peer]:
    try:
        import jax
        import jax.numpy as jnp
    except Exception:  # not installed, or broken by its own dependencies
        return None
    jax.config.update("jax_enable_x64", True)  # the workloads are float64

    def make(case: Case) -> Callable[..., tuple]:
        gradient = jax.grad(rebound(case.function, jnp), argnums=case.argnums)
        return lambda *args: jax.block_until_ready(gradient(*args))
    return Peer("jax", make)


def _tangent() -> Optional[Peer]:
    try:
        import tangent
    except Exception:  # not installed, or broken by its own dependencies
        return None

    def make(case: Case) -> Callable[..., tuple]:
        gradient = tangent.grad(case.function, wrt=case.argnums)
        if len(case.argnums) > 1:
            return gradient
        return lambda *args: (gradient(*args),)
    return Peer("tangent", make)


def installed_peers() -> list[Peer]:
    """The peers that import here, in a fixed order."""
    found = (_autograd(), _jax(), _tangent())
    return [peer for peer in found if peer is not None]
