"""Random time-stepping programs: what the Python target's list adjoints (s2s_ad/passes/scalar_cells.py) are for.

``make_program(seed)`` gives the source of ``f(x, c)``: one to three state vectors of length
``len(x) + 1``, each started at a constant and stepped in a loop from t = 1 by a recurrence that reads
its own and the other states at t - 1, t and t + 1, ``x[t]`` and ``c``, through + - * and a division
by a positive denominator, NumPy functions of elements, an if/else on ``x[t]``, and an update of the
current element after the step; the result sums squashed states and, for some seeds, reads
single elements after the loop (the first state's first element times ``c``, the last one's last).
"""
from __future__ import annotations

import random

_FUNCTIONS = ("np.sin", "np.cos", "np.tanh", "np.exp", "np.log1p")


def _term(r: random.Random, states: list[str], depth: int = 0) -> str:
    kinds = ["state", "input", "c", "constant"] + (["binary", "binary", "function"] if depth < 2 else [])
    kind = r.choice(kinds)
    if kind == "state":
        return f"{r.choice(states)}[{r.choice(['t', 't - 1', 't + 1'])}]"
    if kind == "input":
        return "x[t]"
    if kind == "c":
        return "c"
    if kind == "constant":
        return repr(round(r.uniform(-1.5, 1.5), 2))
    if kind == "function":
        name, inner = r.choice(_FUNCTIONS), _term(r, states, depth + 1)
        return f"{name}(0.3 * {inner})" if name in ("np.exp", "np.log1p") else f"{name}({inner})"
    left, right = _term(r, states, depth + 1), _term(r, states, depth + 1)
    operator = r.choice(["+", "-", "*", "*", "/"])
    if operator == "/":
        return f"({left}) / (2.0 + {right} * {right})"
    return f"({left} {operator} {right})"


def make_program(seed: int) -> str:
    """The source of a module defining ``f(x, c)`` (see the module docstring)."""
    r = random.Random(seed)
    states = [f"s{i}" for i in range(r.randint(1, 3))]
    lines = ["def f(x, c):", "    n = x.shape[0]"]
    for state in states:
        lines += [f"    {state} = np.zeros(n + 1)", f"    {state}[0] = {round(r.uniform(-1, 1), 2)}"]
    lines.append("    for t in range(1, n):")
    for state in states:
        if r.random() < 0.3:
            lines += [f"        if x[t] > {round(r.uniform(-0.5, 0.5), 2)}:",
                      f"            {state}[t + 1] = {state}[t] * 0.5 + 0.1 * {_term(r, states)}",
                      "        else:",
                      f"            {state}[t + 1] = {state}[t] * 0.3 - 0.2 * {_term(r, states)}"]
        else:
            lines.append(f"        {state}[t + 1] = {state}[t] * {round(r.uniform(0.2, 0.8), 2)} + 0.1 * {_term(r, states)}")
        if r.random() < 0.3:
            lines.append(f"        {state}[t] = {state}[t] + 0.05 * x[t - 1]")
    result = " + ".join(f"np.sum(np.tanh({state}) ** 2)" for state in states)
    if r.random() < 0.5:
        result += f" + {states[0]}[0] * c + {states[-1]}[n]"
    lines.append(f"    return {result}")
    return "import numpy as np\n\n\n" + "\n".join(lines) + "\n"
