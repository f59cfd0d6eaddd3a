"""Workloads rewritten for JAX by hand, with ``lax.scan`` in place of the Python loop.

``jax.jit`` traces a Python loop by unrolling it, so the compiled program holds every step and
its compile grows with the trip count (poly_loop's 1000 steps compile for tens of seconds;
building and pendulum, which write into preallocated arrays, cannot be traced at all).  A JAX
user would rewrite such a loop as a ``lax.scan``; these are those rewrites, so that a compiled
JAX time exists to compare with.  They are *rewrites*, not the workload as written, and the
report labels them so.  Same arithmetic, same arguments as ``workloads.py``.

Imports JAX: import this module only where JAX is installed.
"""
from __future__ import annotations

from typing import Any, Callable

import jax.numpy as jnp
from jax import lax

from benchmarks.workloads import GRAVITY


def poly_loop(r: Any, x: Any, n: int = 1000) -> Any:
    """``workloads.poly_loop`` as a scan over n steps (n static)."""
    def step(s: Any, _: Any) -> tuple[Any, None]:
        return r * s * (1.0 - s) + 0.001 * x, None
    s, _ = lax.scan(step, jnp.asarray(0.5, dtype=jnp.float64), None, length=n)
    return s


def pendulum(length: Any, damping: Any, observed: Any, theta0: float = 1.0, dt: float = 0.01) -> Any:
    """``workloads.pendulum`` as a scan that returns each step's angle."""
    def step(state: tuple[Any, Any], _: Any) -> tuple[tuple[Any, Any], Any]:
        theta, omega = state
        new_theta = theta + dt * omega
        new_omega = omega + dt * (-GRAVITY / length * jnp.sin(theta) - damping * omega)
        return (new_theta, new_omega), new_theta
    start = jnp.asarray(theta0, dtype=jnp.float64)
    _, angles = lax.scan(step, (start, jnp.zeros((), dtype=jnp.float64)), None, length=observed.shape[0] - 1)
    theta = jnp.concatenate([start[None], angles])
    return jnp.sum((theta - observed) ** 2)


REWRITES: dict[str, Callable[..., Any]] = {"poly_loop": poly_loop, "pendulum": pendulum}
