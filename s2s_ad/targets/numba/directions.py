"""Many directions of forward mode in one compiled call: the columns of a Jacobian, a Hessian's, a batched jvp.

Input: the compiled tangent function ``run`` (``target.compiled_function``: ``run(*values, *tangents)``
returns the value and its tangent), the values, the positions of those the tangents move, and a seed
array per moved value (``count`` directions on its leading axis).  Output: the ``count`` tangents of the
result, stacked on a new leading axis, or None where that cannot be done here, and the caller then
calls ``run`` once per direction, as before.  Two ways, the first that serves:

* **vector mode** (``vector_sweep``): one run of ``run.vector``, the tangent code with every tangent
  carrying the directions on a leading axis (``ad/vector``, made beside ``run`` where each
  of its statements has an exact vector form): the primal is computed once for all directions, and a
  matrix product of the primal with a tangent becomes one product with all of them (a dense Jacobian
  of ``tanh(W @ x)`` of 200 numbers: 2.9 ms to 0.9 ms here);
* **a compiled loop over the directions** (``_driver``): a small jitted loop calling the compiled
  tangent function once per direction.  Why: a Hessian of 20 parameters is 20 passes of the tangent
  code, each a call from Python into the compiled code costing about 12 us, over ten times the pass
  itself for a loop of 20 steps; from inside compiled code a call costs nothing measurable (a
  20-parameter Hessian: 0.41 ms to 0.022 ms here).

Only where it gives the same numbers as the calls one by one: the tangent function runs compiled (it
has not fallen back, it is not refused, it takes no module arrays as extra arguments), no argument has
a narrow float dtype (the calls one by one: the target's ``run`` widens each, ``narrow.py``), the
result's tangent is a float64 array (a number, a tuple: the calls one by one; a batched ``jvp`` takes a
number's too, from vector mode), and the function
draws no random numbers (each pass would need the generators put back).  A way that raises or does
not compile is not tried again for that function.
"""
from __future__ import annotations

import threading
from typing import Any, Callable, Optional

import numpy as np

from ..target import takes_directions
from .kernels import written_out

# Fewer directions than this run the one-direction code (a compiled loop over them, or the caller's calls):
# compiling the vector code costs a second or more, and a few directions gain little from it, or lose
# (a sparse Hessian of 3 colours: first call 2.4 s to 8.0 s with it, later calls 0.39 ms to 0.56 ms).
FEWEST = 6
# (the moved positions, the number of values) -> the jitted loop (Numba compiles it per argument types)
_DRIVERS: dict[tuple[tuple[int, ...], int], Callable[..., Any]] = {}
_LOCK = threading.Lock()


def tangents_of_directions(run: Callable[..., Any], values: tuple, positions: list[int], seeds: list[np.ndarray],
                           out: Any) -> Optional[np.ndarray]:
    """The tangents of ``run``'s result along each direction of ``seeds``, stacked (see the module
    docstring), or None where they are to be computed one call at a time."""
    state, compiled = getattr(run, "state", None), getattr(run, "compiled", None)
    if state is None or state.get("directions") is False or state["run"] is not compiled:
        return None
    if not (isinstance(out, np.ndarray) and out.dtype == np.float64 and out.ndim >= 1):
        return None
    if any(getattr(v, "dtype", np.dtype(np.float64)).char in "efgFG" for v in values):
        return None
    vector = vector_sweep(run, values, seeds)
    if vector is not None and vector[1].shape[1:] == out.shape:
        return vector[1]
    try:
        driver = _driver(tuple(positions), len(values))
        swept = driver(compiled, *values, *seeds)
    except Exception:  # (Numba cannot type the loop, or a pass raised: the calls one by one say why)
        state["directions"] = False
        return None
    return swept if swept.shape[1:] == out.shape else None


def vector_sweep(run: Callable[..., Any], values: tuple, seeds: list[np.ndarray]) -> Optional[tuple[Any, Any]]:
    """``(value, tangents)`` from one call of ``run``'s vector version (``run.vector``: every tangent with
    the directions on a leading axis, ``ad/vector``), the tangents stacked on that axis; or
    None where it has none, where a value is not a real number or array (its zeros are float64), or
    where it does not compile (not tried again: the caller's other ways run)."""
    state, vector = getattr(run, "state", None), getattr(run, "vector", None)
    if state is None or vector is None or state.get("vector") is False or vector.refused is not None:
        return None
    if len(seeds[0]) < FEWEST:
        return None  # (too few directions to gain from it, or to pay for compiling it)
    if not takes_directions(values, seeds):
        return None
    try:
        out, swept = vector.state["run"](*values, *seeds)
    except Exception:  # (Numba cannot type it, or its helpers refuse these shapes)
        state["vector"] = False
        return None
    state["vector"] = True
    if not (isinstance(swept, np.ndarray) and swept.shape[:1] == (len(seeds[0]),)):
        return None
    return out, swept


def _driver(positions: tuple[int, ...], arity: int) -> Callable[..., Any]:
    """A jitted ``sweep(tangent_function, *values, *seeds)`` for ``arity`` values, those at ``positions``
    moved (a number's seeds a vector, an array's an array with one more axis), made once per such call."""
    key = (positions, arity)
    with _LOCK:
        if key not in _DRIVERS:
            _DRIVERS[key] = _compiled_driver(positions, arity)
        return _DRIVERS[key]


def _compiled_driver(positions: tuple[int, ...], arity: int) -> Callable[..., Any]:
    import numba
    values = [f"v{i}" for i in range(arity)]
    seeds = [f"s{k}" for k in range(len(positions))]
    tangents = [f"s{k}[d]" for k in range(len(positions))]  # (a number's seeds are a vector: s[d] is a float)
    call = f"tangent_function({', '.join(values + tangents)})[1]"
    source = "\n".join([
        f"def sweep(tangent_function, {', '.join(values + seeds)}):",
        f"    count = {seeds[0]}.shape[0]",
        "    d = 0",
        f"    first = {call}",
        "    swept = np.empty((count,) + first.shape)",
        "    swept[0] = first",
        "    for d in range(1, count):",
        f"        swept[d] = {call}",
        "    return swept",
    ])
    return numba.njit(nogil=True)(written_out(source, "sweep", f"directions {positions} of {arity}"))
