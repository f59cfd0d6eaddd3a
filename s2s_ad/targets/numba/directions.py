"""Many directions of forward mode in one compiled call: the columns of a Jacobian, a Hessian's.

Input: the compiled tangent function ``run`` (``target.compiled_function``: ``run(*values, *tangents)``
returns the value and its tangent), the values, the positions of those the tangents move, and a seed
array per moved value (``count`` directions on its leading axis).  Output: the ``count`` tangents of the
result, stacked on a new leading axis, computed by one call of a small jitted loop (``_driver``) that
calls the compiled tangent function once per direction; or None where that cannot be done here, and
the caller then calls ``run`` once per direction, as before.

Why: a Hessian of 20 parameters is 20 passes of the tangent code, each a call from Python into the
compiled code costing about 12 us, over ten times the pass itself for a loop of 20 steps; from inside
compiled code a call costs nothing measurable (a 20-parameter Hessian: 0.41 ms to 0.022 ms here).

Only where it gives the same numbers as the calls one by one: the tangent function runs compiled (it
has not fallen back, it is not refused, it takes no module arrays as extra arguments), no argument has
a narrow float dtype (those calls run as Python), the result's tangent is a float64 array (a number, a
tuple: the calls one by one), and the function draws no random numbers (each pass would need the
generators put back).  A loop that raises or does not compile is not tried again for that function.
"""
from __future__ import annotations

import threading
from typing import Any, Callable, Optional

import numpy as np

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
    try:
        driver = _driver(tuple(positions), len(values))
        swept = driver(compiled, *values, *seeds)
    except Exception:  # (Numba cannot type the loop, or a pass raised: the calls one by one say why)
        state["directions"] = False
        return None
    return swept if swept.shape[1:] == out.shape else None


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
    namespace: dict[str, Any] = {"np": np}
    exec(compile(source, f"<s2s_ad directions {positions} of {arity}>", "exec"), namespace)
    return numba.njit(nogil=True)(namespace["sweep"])
