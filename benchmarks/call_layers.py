"""What a cached call of a gradient costs, layer by layer (``python -m benchmarks.call_layers [NAME ...]``).

For each workload named (default: ``rational`` and ``building``), in one process, the best of
several rounds (the layers taking turns in each), in nanoseconds per call, of:

* ``hand``: the hand-written NumPy gradient (``workloads.py``);
* ``generated``: the code s2s_ad generated, called alone (the Python backend's function);
* ``grad``: ``s2s_ad.grad(f, wrt=...)`` called, what the user pays (the API layer on top);
* with Numba installed, ``hand-numba`` (the twin in ``numba_twins.py`` compiled by ``numba.njit``),
  ``dispatcher`` (Numba's dispatcher of the generated code, called alone), ``run`` (the wrapper
  ``targets/numba/target.py`` puts around it: fallback and dtype checks; a cached call of the gradient
  skips it, the dtypes known from the call's key: once the code has compiled and run, its generated
  test calls the dispatcher itself, ``checked.direct``, and for arguments that are all floats the
  compiled overload's entry point, ``targets/numba/entry_points.py``) and ``grad-numba``
  (``backend="numba"``).

``grad`` minus ``generated`` (and ``grad-numba`` minus ``dispatcher``) is the API layer's cost:
reading the arguments' kinds, finding the cached code, unpacking the result.  Ratios only mean
something within one run (a loaded machine moves every figure together).
"""
from __future__ import annotations

import inspect
import sys
import timeit
from typing import Any, Callable

from benchmarks.cases import CASES


def _interleaved(functions: dict[str, tuple[Callable, tuple]], number: int, rounds: int = 25) -> dict[str, float]:
    """Nanoseconds per call of each function, less the empty loop's cost: the best of ``rounds``
    rounds of ``number`` calls, the functions taking turns within each round, so that a load on the
    machine that comes and goes falls on all of them alike."""
    best = {name: float("inf") for name in ["(empty)", *functions]}
    for _ in range(rounds):
        for name in best:
            function, args = functions.get(name, (None, ()))
            call = (lambda: None) if function is None else (lambda: function(*args))
            best[name] = min(best[name], timeit.timeit(call, number=number) / number)
    empty = best.pop("(empty)")
    return {name: (seconds - empty) * 1e9 for name, seconds in best.items()}


def _built_functions(gradient: Any) -> list[Callable]:
    """The functions the code built for a gradient's calls so far finished as (the Python backend's
    generated function; the Numba backend's ``run`` wrapper, with its dispatcher as ``compiled``)."""
    return [built.function for built in gradient._by_kinds.values()]


def _with_defaults(function: Callable, args: tuple) -> tuple:
    """``args`` with the defaults of the parameters they leave out, in order."""
    bound = inspect.signature(function).bind(*args)
    bound.apply_defaults()
    return tuple(bound.arguments.values())


def layers(name: str, number: int) -> dict[str, float]:
    """The figures of one workload (see the module docstring)."""
    import s2s_ad
    case = next(c for c in CASES if c.name == name)
    args = case.make_args(False)
    gradient = s2s_ad.grad(case.function, wrt=case.wrt)
    gradient(*args)
    full = _with_defaults(case.function, args)  # the generated code takes every parameter
    functions: dict[str, tuple[Callable, tuple]] = {
        "hand": (case.hand_gradient, args), "generated": (_built_functions(gradient)[0], full),
        "grad": (gradient, args)}
    try:
        import numba
    except ImportError:
        return _interleaved(functions, number)
    from benchmarks.numba_twins import TWINS
    hand = numba.njit(TWINS[name])
    hand(*args)
    compiled = s2s_ad.grad(case.function, wrt=case.wrt, backend="numba")
    compiled(*args)
    run = _built_functions(compiled)[0]
    functions.update({"hand-numba": (hand, args), "dispatcher": (getattr(run, "compiled"), full),
                      "run": (run, full), "grad-numba": (compiled, args)})
    return _interleaved(functions, number)


def main(argv: list[str]) -> None:
    names = argv or ["rational", "building"]
    for name in names:
        number = 2000 if name == "rational" else 100
        found = layers(name, number)
        print(f"{name}: " + ", ".join(f"{key} {value:.0f} ns" for key, value in found.items()))
        print(f"  API layer: python {found['grad'] - found['generated']:.0f} ns"
              f" (grad/generated {found['grad'] / found['generated']:.2f})"
              + (f", numba {found['grad-numba'] - found['dispatcher']:.0f} ns"
                 f" (run {found['run'] - found['dispatcher']:.0f} ns of it)" if "dispatcher" in found else ""))


if __name__ == "__main__":
    main(sys.argv[1:])
