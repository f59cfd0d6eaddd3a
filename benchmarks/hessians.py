"""Hessians of loop functions of 20 parameters: ``backend="numba"`` against the Python backend (and
JAX's ``jax.hessian`` where JAX is installed), ratios taken in one run.

    python -m benchmarks.hessians [--quick]

Three functions a user writes with a loop over the parameters: a recurrence through ``tanh`` of
two coupled numbers, a chain of softplus steps, and a sum of logistic losses.  A Hessian is
forward mode over the generated gradient; under ``backend="numba"`` the gradient read back keeps
its tape in preallocated arrays, so the forward mode over it compiles (``docs/generated-code.md``).
Each Hessian is called once first (building, and for Numba compiling it), then timed: the least
time per call over a few repeats.  Every column is compared with the Python backend's Hessian; a
fallback to Python under Numba is said in its row.
"""
from __future__ import annotations

import argparse
import time
import warnings
from typing import Any, Callable

import numpy as np

import s2s_ad


def coupled(x):
    a, b = 0.3, 0.2
    for i in range(x.shape[0]):
        a = a + np.tanh(x[i] * b)
        b = b * 0.9 + x[i] * a * 0.05
    return a * b


def softplus_chain(x):
    h = 0.1
    for i in range(x.shape[0]):
        h = np.log(1.0 + np.exp(h * x[i] + 0.2))
    return h


def logistic_losses(x):
    s = 0.0
    for i in range(x.shape[0]):
        s = s + np.log(1.0 + np.exp(-x[i] * (i + 1.0) * 0.1))
    return s


FUNCTIONS = {"coupled tanh recurrence": coupled, "softplus chain": softplus_chain, "logistic losses": logistic_losses}


def least_seconds(call: Callable[[], Any], repeats: int, number: int) -> float:
    """The least time of one call, over ``repeats`` runs of ``number`` calls."""
    best = float("inf")
    for _ in range(repeats):
        start = time.perf_counter()
        for _ in range(number):
            call()
        best = min(best, (time.perf_counter() - start) / number)
    return best


def jax_hessian(name: str) -> Any:
    """JAX's Hessian of the same function written with ``jax.numpy``, or None without JAX."""
    try:
        import jax
        import jax.numpy as jnp
    except ImportError:
        return None
    jax.config.update("jax_enable_x64", True)
    globals_ = dict(FUNCTIONS[name].__globals__, np=jnp)
    function = type(FUNCTIONS[name])(FUNCTIONS[name].__code__, globals_)
    return jax.jit(jax.hessian(function))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="fewer repeats (a test runs it so)")
    options = parser.parse_args()
    repeats, number = (2, 5) if options.quick else (5, 50)
    x = np.linspace(0.1, 0.9, 20)
    print("| function (20 parameters) | numba | python | python / numba | jax.jit(jax.hessian) | largest difference | "
          "fallback |")
    print("|---|---|---|---|---|---|---|")
    for name, function in FUNCTIONS.items():
        python = s2s_ad.hessian(function)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always", s2s_ad.CompileFallbackWarning)
            compiled = s2s_ad.hessian(function, backend="numba")
            difference = float(np.abs(compiled(x) - python(x)).max())
        fell = "yes" if caught else "no"
        t_numba = least_seconds(lambda: compiled(x), repeats, number)
        t_python = least_seconds(lambda: python(x), repeats, number)
        theirs = jax_hessian(name)
        t_jax = "n/a (JAX not installed)"
        if theirs is not None:
            theirs(x).block_until_ready()
            t_jax = f"{least_seconds(lambda: theirs(x).block_until_ready(), repeats, number) * 1e3:.3f} ms"
        print(f"| {name} | {t_numba * 1e3:.3f} ms | {t_python * 1e3:.3f} ms | {t_python / t_numba:.1f} | {t_jax} | "
              f"{difference:.1e} | {fell} |")


if __name__ == "__main__":
    main()
