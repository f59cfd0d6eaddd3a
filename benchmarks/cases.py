"""The benchmark cases: each workload with its hand-written gradient, what to differentiate,
and its arguments at the benchmark's size and at the small size finite differences check."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

import numpy as np

from benchmarks import workloads as w


@dataclass(frozen=True)
class Case:
    """One workload: ``function(*args)`` is a number; ``hand_gradient(*args)`` is a tuple with
    the gradient by each parameter named in ``wrt``, in that order."""

    name: str
    function: Callable[..., Any]
    hand_gradient: Callable[..., tuple]
    wrt: tuple[str, ...]
    make_args: Callable[[bool], tuple]      # make_args(small) -> the arguments
    summary: str

    @property
    def argnums(self) -> tuple[int, ...]:
        """Positions of the ``wrt`` parameters, for peers that number arguments."""
        names = self.function.__code__.co_varnames[:self.function.__code__.co_argcount]
        return tuple(names.index(name) for name in self.wrt)


def _rng() -> np.random.Generator:
    return np.random.default_rng(20240601)


def _rational_args(small: bool) -> tuple:
    return 3.0, 2.0


def _poly_loop_args(small: bool) -> tuple:
    return 3.1, 0.2, 1000


def _building_args(small: bool) -> tuple:
    n = 40 if small else 1000
    rng = _rng()
    hours = np.arange(n) * 24.0 / 100.0
    outside = 5.0 + 6.0 * np.sin(2.0 * np.pi * hours / 24.0) + rng.normal(0.0, 0.5, n)
    heat = rng.uniform(0.0, 10.0, n)
    return heat, outside, 15.0, 0.05, 0.5, 20.0, 0.01


def _mlp_args(small: bool) -> tuple:
    batch, n_in, n_hidden, n_out = (7, 5, 6, 3) if small else (256, 64, 128, 10)
    rng = _rng()
    w1 = rng.normal(0.0, 1.0 / np.sqrt(n_in), (n_in, n_hidden))
    w2 = rng.normal(0.0, 1.0 / np.sqrt(n_hidden), (n_hidden, n_out))
    return w1, w2, rng.normal(size=(batch, n_in)), rng.normal(size=(batch, n_out))


def _deblur_args(small: bool) -> tuple:
    h, w_ = (7, 6) if small else (64, 64)
    rng = _rng()
    return rng.uniform(size=(h, w_)), rng.uniform(size=(h, w_))


def _rk4_args(small: bool) -> tuple:
    return 1.1, 0.4, 0.4, 0.1


def _logsumexp_ce_args(small: bool) -> tuple:
    n, k = (6, 5) if small else (512, 100)
    rng = _rng()
    logits = rng.normal(0.0, 3.0, (n, k))
    onehot = np.eye(k)[rng.integers(0, k, n)]
    return logits, onehot


def _pendulum_args(small: bool) -> tuple:
    """Angles observed from a pendulum 1.2 long damped at 0.5 (with noise), to fit from 1.0 and 0.3."""
    n = 40 if small else 1000
    rng = _rng()
    theta, omega = 1.0, 0.0
    observed = np.empty(n + 1)
    for t in range(n + 1):
        observed[t] = theta + rng.normal(0.0, 0.01)
        theta, omega = theta + 0.01 * omega, omega + 0.01 * (-w.GRAVITY / 1.2 * np.sin(theta) - 0.5 * omega)
    return 1.0, 0.3, observed


CASES: tuple[Case, ...] = (
    Case("rational", w.rational, w.rational_grad, ("x", "y"), _rational_args,
         "(x+1)(x-y)/(x+y+1) on floats"),
    Case("poly_loop", w.poly_loop, w.poly_loop_grad, ("r", "x"), _poly_loop_args,
         "s = r s (1-s) + 0.001 x, 1000 scalar steps"),
    Case("building", w.building, w.building_grad, ("heat",), _building_args,
         "1000-step heating simulation, array indexing in a loop"),
    Case("mlp", w.mlp, w.mlp_grad, ("w1", "w2"), _mlp_args,
         "2-layer tanh MLP, X 256x64, W1 64x128, W2 128x10, MSE"),
    Case("deblur", w.deblur, w.deblur_grad, ("guess",), _deblur_args,
         "sum((blur3x3(guess) - observed)**2), 64x64, edge padding"),
    Case("rk4", w.rk4, w.rk4_grad, ("alpha", "beta", "gamma", "delta"), _rk4_args,
         "Lotka-Volterra, 500 RK4 steps, helper returning a tuple"),
    Case("logsumexp_ce", w.logsumexp_ce, w.logsumexp_ce_grad, ("logits",), _logsumexp_ce_args,
         "softmax cross-entropy, 512x100 logits, one-hot labels"),
    Case("pendulum", w.pendulum, w.pendulum_grad, ("length", "damping"), _pendulum_args,
         "damped pendulum, 1000 Euler steps into preallocated arrays, squared error"),
)


def select(names: list[str] | None) -> tuple[Case, ...]:
    """The cases named (all when ``names`` is empty); an unknown name is an error."""
    if not names:
        return CASES
    known = {case.name: case for case in CASES}
    unknown = [name for name in names if name not in known]
    if unknown:
        raise SystemExit(f"unknown workload(s) {', '.join(unknown)}; choose from {', '.join(known)}")
    return tuple(known[name] for name in names)
