"""Let go of arrays as soon as nothing reads them: ``del`` after their last read.

Input: a generated ``ir.Function`` after the passes before it (its tape still ``ir.Push`` and ``ir.Pop``,
which the target writes when it prints the function), and the
names its facts know to hold arrays (``analysis.Analysis``: a primal value
of rank 1 or more).  Output: the same function with an ``ir.Release``
(``del a, b``) after the top-level statement that reads such a value last.

Why: generated code names every intermediate value, where the user's
``np.tanh(X @ W1 + b1)`` named none; each name holds its array until the
function returns.  With several large arrays alive at once the allocator
hands memory back to the system and takes it again at the next call, paying
a page fault for every 4 KiB touched: the MLP benchmark's gradient took 98
page faults a call, the hand-written one none.  Released as soon as it is
dead, an array's memory is reused by the next one.

Which values: a name bound by an assignment at the function's top level
(bound on every path from there on; not a loop's index, not what a pop
takes back from the tape), not a parameter, read for the last time
by a later top-level statement (its reads inside that statement's blocks
included), and holding an array: one the facts say is, or (an adjoint, a
value the facts do not know) one computed from such a value.  Nothing else
changes: a value the tape holds stays alive there; a value returned is read
by the return and never released.  Only for code that runs: code read back
by the transformer (``target.SOURCE``) stays in the language it reads.
"""
from __future__ import annotations

import dataclasses

from ..core import ir


def release_dead_arrays(fn: ir.Function, arrays: set[str], known: set[str]) -> ir.Function:
    """``fn`` with ``del`` after the last top-level read of each array temporary (see the module
    docstring); ``arrays``: the names the facts say hold arrays, ``known``: every name they know."""
    body = fn.body
    large = _array_values(body, arrays, known) - set(fn.params) - ({fn.plan.tape} if fn.plan is not None else set())
    first_bound: dict[str, int] = {}
    last_read: dict[str, int] = {}
    for i, stmt in enumerate(body):
        # (a loop's index is unbound where it runs no trip; what a pop takes back was made by the forward
        # sweep, and is left to the return: a del per record would bury the reverse sweep)
        if isinstance(stmt, (ir.Assign, ir.Unpack)):
            for name in ir.targets_of(stmt):
                first_bound.setdefault(name, i)
        for inner in ir.walk([stmt]):
            for expr in ir.exprs_of(inner):
                for name in ir.names_read(expr):
                    last_read[name] = i
    dead_after: dict[int, list[str]] = {}
    for name in sorted(large):
        last = last_read.get(name)
        if last is None or name not in first_bound or first_bound[name] >= last or isinstance(body[last], ir.Return):
            continue
        dead_after.setdefault(last, []).append(name)
    if not dead_after:
        return fn
    out: list[ir.Stmt] = []
    for i, stmt in enumerate(body):
        out.append(stmt)
        if i in dead_after:
            out.append(ir.Release(tuple(dead_after[i]), getattr(stmt, "line", None)))
    return dataclasses.replace(fn, body=out)


def _array_values(body: list[ir.Stmt], arrays: set[str], known: set[str]) -> set[str]:
    """``arrays``, and the names the facts do not know that are computed from one of them (to a
    fixed point: an adjoint of an adjoint of an array)."""
    found = set(arrays)
    while True:
        grown = set(found)
        for stmt in ir.walk(body):
            targets = [t for t in ir.targets_of(stmt) if t not in known and t not in grown]
            if targets and any(n in grown for e in ir.exprs_of(stmt) for n in ir.names_read(e)):
                grown.update(targets)
        if grown == found:
            return found
        found = grown
