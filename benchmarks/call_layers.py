"""What a cached call of a gradient costs, layer by layer (``python -m benchmarks.call_layers [NAME ...]``).

For each workload named (default: ``rational`` and ``building``), in one process, the best of
several repeats, in nanoseconds per call, of:

* ``hand``: the hand-written NumPy gradient (``workloads.py``);
* ``generated``: the code s2s_ad generated, called alone (the Python backend's function);
* ``grad``: ``s2s_ad.grad(f, wrt=...)`` called, what the user pays (the API layer on top);
* with Numba installed, ``hand-numba`` (the twin in ``numba_twins.py`` compiled by ``numba.njit``),
  ``dispatcher`` (Numba's dispatcher of the generated code, called alone), ``run`` (the wrapper
  ``numba_target`` puts around it: fallback and dtype checks) and ``grad-numba``
  (``backend="numba"``).

``grad`` minus ``generated`` (and ``grad-numba`` minus ``dispatcher``) is the API layer's cost:
reading the arguments' kinds, finding the cached code, unpacking the result.  Ratios only mean
something within one run (a loaded machine moves every figure together).
"""
from __future__ import annotations

import sys
import timeit
from typing import Any, Callable

from benchmarks.cases import CASES


def _best(function: Callable, args: tuple, number: int) -> float:
    """Nanoseconds per call, the best of 9 repeats of ``number`` calls, less the empty loop's cost."""
    empty = min(timeit.repeat(lambda: None, number=number, repeat=9)) / number
    best = min(timeit.repeat(lambda: function(*args), number=number, repeat=9)) / number
    return (best - empty) * 1e9


def _cached_functions(gradient: Any) -> list[Callable]:
    """The generated functions a gradient's tables hold (what its cached calls run)."""
    found = [entry[0] for entry in gradient._by_types.values()]
    for table in gradient._by_shapes.values():
        found += [entry[0] for entry in table[1].values()]
    return found


def layers(name: str, number: int) -> dict[str, float]:
    """The figures of one workload (see the module docstring)."""
    import s2s_ad
    case = next(c for c in CASES if c.name == name)
    args = case.make_args(False)
    found: dict[str, float] = {"hand": _best(case.hand_gradient, args, number)}
    gradient = s2s_ad.grad(case.function, wrt=case.wrt)
    gradient(*args)
    found["generated"] = _best(_cached_functions(gradient)[0], args, number)
    found["grad"] = _best(gradient, args, number)
    try:
        import numba
    except ImportError:
        return found
    from benchmarks.numba_twins import TWINS
    hand = numba.njit(TWINS[name])
    hand(*args)
    found["hand-numba"] = _best(hand, args, number)
    compiled = s2s_ad.grad(case.function, wrt=case.wrt, backend="numba")
    compiled(*args)
    run = _cached_functions(compiled)[0]
    found["dispatcher"] = _best(getattr(run, "compiled"), args, number)
    found["run"] = _best(run, args, number)
    found["grad-numba"] = _best(compiled, args, number)
    return found


def main(argv: list[str]) -> None:
    names = argv or ["rational", "building"]
    for name in names:
        number = 20000 if name == "rational" else 2000
        found = layers(name, number)
        print(f"{name}: " + ", ".join(f"{key} {value:.0f} ns" for key, value in found.items()))
        print(f"  API layer: python {found['grad'] - found['generated']:.0f} ns"
              f" (grad/generated {found['grad'] / found['generated']:.2f})"
              + (f", numba {found['grad-numba'] - found['dispatcher']:.0f} ns"
                 f" (run {found['run'] - found['dispatcher']:.0f} ns of it)" if "dispatcher" in found else ""))


if __name__ == "__main__":
    main(sys.argv[1:])
