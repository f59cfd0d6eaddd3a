"""The Python target's reverse loops keep an adjoint vector as a list of Python floats.

Input: a generated adjoint-form ``ir.Function`` ready for the NumPy target
(optimized; its tape still pushes and pops, written when printed), and ``known``, the names the primal facts
know (every other name is the generator's: an adjoint, a tape record).
Output: the same function where, for some adjoint arrays ``d_x`` that a
reverse loop reads and writes element by element only,

    d_x = cells(d_x)            # before the loop: a list, where d_x is a float64 vector
    for t in reversed(steps):
        ... d_x[t + 1] ... d_x[t] += ...
    d_x = cells_array(d_x)      # after it, where anything reads d_x later

Why: in CPython an element read of a NumPy array makes a NumPy scalar, whose
arithmetic costs three times a Python float's, and a store into an array costs
twice a list's.  A hand-written adjoint of a time-stepping loop keeps its
adjoints in Python floats (``.tolist()``); on the building workload this takes
the gradient from 2.0 to 1.3 times the hand-written one's time.

``cells`` decides at run time: only a one-dimensional float64 array becomes a
list (``tolist`` gives its exact values); anything else, another dtype or rank,
stays as it is, and the same loop code runs on it as before.  ``cells_array``
turns the list back into a float64 array (a store into a NumPy array converts
each value the same way).

Which arrays: a name the facts do not know (the generator's own), bound at
the top level only, before the loop, the last time by a call that makes a new
array (no other name shares its memory), and read by nothing between that
binding and the loop.  In the loop
it is read only as ``d_x[i]`` and written only as ``d_x[i] = v`` or
``d_x[i] op= v``, where ``i`` is proven an integer (a loop's index, a length:
``len(x)``, ``x.shape[k]``, or sums and differences of those and integer
constants): on a list such an index picks
the same element as on a vector, and raises where it does.  Where it is read
after the loop, ``cells_array`` comes first.

What changes: values read from the list are Python floats where they were
NumPy's float64, and so is what is computed from them.  The two give the same
numbers for ``+``, ``-``, ``*``, comparisons and NumPy's functions; they differ
where Python raises: division by zero raises ``ZeroDivisionError`` where NumPy
gives ``inf`` (the gradient there is infinite or NaN either way; docs/supported-python.md
says so), and ``**``, ``//`` and ``%`` on a negative or zero Python float can
raise or give a complex number.  So an array is left alone where a value
computed from its elements reaches ``**``, ``//``, ``%``, ``divmod`` or a
function that is neither NumPy's, ``math``'s, a builtin nor s2s_ad's runtime
(a user's function, a helper's split adjoint).
"""
from __future__ import annotations

import dataclasses
import operator
from typing import Any, Iterator, Optional

import numpy as np

from ..memory import aliasing
from ..core import float_lists, ir, language, runtime
from ..rules import registry as rules


def keep_cells(fn: ir.Function, known: set[str]) -> ir.Function:
    """``fn`` with the adjoint vectors its top-level reverse loops read and write element by
    element kept as lists there (see the module docstring); ``fn`` itself where there are none."""
    if mentions_narrow_floats(fn):
        return fn
    integers = integer_names(fn)
    body = list(fn.body)
    loops = [stmt for stmt in body if isinstance(stmt, ir.For) and stmt.reverse]
    around = tuple(ir.Var(param) for param in fn.params)
    for loop in loops:
        for name in sorted(element_vectors(body, _at(body, loop), known, integers)):
            if taint_is_harmless(body, _at(body, loop), name):
                body = _converted(body, _at(body, loop), name, around)
    return dataclasses.replace(fn, body=body) if len(body) != len(fn.body) else fn


def _at(body: list[ir.Stmt], stmt: ir.Stmt) -> int:
    return next(i for i, s in enumerate(body) if s is stmt)


# -- which arrays ------------------------------------------------------------------------------

def element_vectors(body: list[ir.Stmt], position: int, known: set[str], integers: set[str]) -> set[str]:
    """The names the loop at ``body[position]`` reads and writes element by element only, bound at
    the top level before it only, the last time by a call making a new array, and read by nothing
    between that binding and the loop."""
    loop = body[position]
    assert isinstance(loop, ir.For)
    written = {s.array for s in ir.walk(loop.body) if isinstance(s, ir.Store)}
    found = set()
    for name in written - known:
        binding = last_binding(body, name, position)
        if binding is None:
            continue
        if any(name in names_in(stmt) for stmt in body[binding + 1:position]):
            continue
        if only_elements(loop.body, name, integers):
            found.add(name)
    return found


def last_binding(body: list[ir.Stmt], name: str, position: int) -> Optional[int]:
    """Where ``name`` is last bound before ``body[position]``, if every binding of it is a top-level
    assignment before that statement and the last one a call making a new array (``d_s = np.full(...)``
    then ``d_s = writable_copy(d_s, s)``: the second)."""
    at = None
    for i, stmt in enumerate(body):
        for inner in ir.walk([stmt]):
            if name in ir.targets_of(inner):
                if inner is not stmt or not isinstance(stmt, ir.Assign) or i >= position:
                    return None
                at = i
    if at is None:
        return None
    stmt = body[at]
    assert isinstance(stmt, ir.Assign)
    fresh = isinstance(stmt.value, ir.Call) and aliasing.new_object(stmt.value, lambda _: True)
    return at if fresh else None


def only_elements(block: list[ir.Stmt], name: str, integers: set[str]) -> bool:
    """Whether every read of ``name`` in ``block`` is ``name[i]`` and every write ``name[i] (op)= v``,
    ``i`` an integer, and nothing binds it there."""
    for stmt in ir.walk(block):
        if name in ir.targets_of(stmt) or (isinstance(stmt, ir.For) and stmt.index == name):
            return False
        exprs = ir.exprs_of(stmt)
        if isinstance(stmt, ir.Store):
            exprs = [stmt.index, stmt.value]  # (not the array it writes into)
            if stmt.array == name and not _integer(stmt.index, integers):
                return False
        if isinstance(stmt, ir.Release) and name in stmt.names:
            return False
        if not all(_reads_elements_only(e, name, integers) for e in exprs):
            return False
    return True


def _reads_elements_only(expr: ir.Expr, name: str, integers: set[str]) -> bool:
    if isinstance(expr, ir.Var):
        return expr.name != name
    if element_read(expr, name):
        assert isinstance(expr, ir.Call)
        return _integer(expr.args[1], integers)
    return all(_reads_elements_only(child, name, integers) for child in ir.children(expr))


def element_read(expr: ir.Expr, name: str) -> bool:
    """Whether ``expr`` is ``name[i]``."""
    return isinstance(expr, ir.Call) and expr.fn is operator.getitem and len(expr.args) == 2 and \
        not expr.kwargs and isinstance(expr.args[0], ir.Var) and expr.args[0].name == name


def _integer(expr: ir.Expr, integers: set[str]) -> bool:
    """Whether ``expr`` is proven a Python integer (not a bool: as an index it adds an axis): also
    ``len(x)`` (an operation declaring the fact ``axis_length``: ``x.shape[0]``, a Python int)."""
    if isinstance(expr, ir.Const):
        return expr.value.__class__ is int
    if isinstance(expr, ir.Var):
        return expr.name in integers
    if isinstance(expr, ir.Call) and len(expr.args) == 1 and not expr.kwargs and _declares_length(expr.fn):
        return True
    if isinstance(expr, ir.Call) and _index_arithmetic(expr.fn) and not expr.kwargs and len(expr.args) == 2:
        return all(_integer(a, integers) for a in expr.args)
    return False


def _declares_length(fn: Any) -> bool:
    return rules.fact(fn, "axis_length") is not None


def _index_arithmetic(fn: Any) -> bool:
    """A sum or difference: of integers, an integer."""
    return sum_sign(fn) is not None


def sum_sign(fn: Any) -> Optional[int]:
    """+1 for a sum, -1 for a difference (``rules.FACTS``' "sum": ``+``, ``np.add``...), else None."""
    fact = rules.fact(fn, "sum")
    return {"+": 1, "-": -1}.get(fact) if isinstance(fact, str) else None


def integer_names(fn: ir.Function) -> set[str]:
    """The names every binding of which gives an integer: the index of a loop over a name bound to
    ``range(...)`` only, a length (``len(x)``, ``np.shape(x)[i]``: NumPy's shapes are tuples of
    Python ints), and sums and differences of such names and integer constants."""
    bindings: dict[str, list[Optional[ir.Expr]]] = {}
    ranges = _range_names(fn)
    shapes = _names_bound_to(fn, language.shape)
    for stmt in ir.walk(fn.body):
        if isinstance(stmt, ir.For):
            over_range = isinstance(stmt.iterable, ir.Var) and stmt.iterable.name in ranges
            # (None: the index of a loop over a range; else never proven)
            bindings.setdefault(stmt.index, []).append(None if over_range else ir.Var(stmt.index))
        elif isinstance(stmt, ir.Assign):
            bindings.setdefault(stmt.target, []).append(None if _length(stmt.value, shapes) else stmt.value)
        else:
            for target in ir.targets_of(stmt):
                bindings.setdefault(target, []).append(ir.Var(target))  # (unknown: never proven)
    for param in fn.params:
        bindings.setdefault(param, []).append(ir.Var(param))
    return _proven_integers(bindings)


def _proven_integers(bindings: dict[str, list[Optional[ir.Expr]]]) -> set[str]:
    """The least set of names each of whose bindings is an integer given the set (None: proven by
    itself), grown by a work list: a name is looked at again only when a name it needs is proven
    (a fixed point over every name at each step took minutes on a function of 500 branches)."""
    waiting: dict[str, set[str]] = {}
    for name, values in bindings.items():
        needs = _names_all_need(name, values)
        if needs is not None:
            waiting[name] = needs
    needed_by: dict[str, list[str]] = {}
    for name, needs in waiting.items():
        for other in needs:
            needed_by.setdefault(other, []).append(name)
    proven = [name for name, needs in waiting.items() if not needs]
    integers: set[str] = set()
    while proven:
        name = proven.pop()
        integers.add(name)
        for other in needed_by.get(name, ()):
            needs = waiting[other]
            if name in needs:
                needs.discard(name)
                if not needs:
                    proven.append(other)
    return integers


def _names_all_need(name: str, values: list[Optional[ir.Expr]]) -> Optional[set[str]]:
    """The names that, proven integers, make every binding of ``name`` one; None if nothing can (a
    binding of an unknown value, or of the name itself)."""
    needs: set[str] = set()
    for value in values:
        if value is None:
            continue
        more = _names_an_integer_needs(value)
        if more is None or (isinstance(value, ir.Var) and value.name == name):
            return None
        needs |= more
    return needs


def _names_an_integer_needs(expr: ir.Expr) -> Optional[set[str]]:
    """The names that, proven integers, make ``expr`` one (``_integer``); None if nothing can."""
    if isinstance(expr, ir.Const):
        return set() if expr.value.__class__ is int else None
    if isinstance(expr, ir.Var):
        return {expr.name}
    if isinstance(expr, ir.Call) and len(expr.args) == 1 and not expr.kwargs and _declares_length(expr.fn):
        return set()
    if isinstance(expr, ir.Call) and _index_arithmetic(expr.fn) and not expr.kwargs and len(expr.args) == 2:
        first, second = (_names_an_integer_needs(a) for a in expr.args)
        return None if first is None or second is None else first | second
    return None


def _range_names(fn: ir.Function) -> set[str]:
    """The names every binding of which is a call of ``range``."""
    return _names_bound_to(fn, range)


def _names_bound_to(fn: ir.Function, maker: Any) -> set[str]:
    """The names (not parameters) every binding of which is a call of ``maker``."""
    seen: dict[str, bool] = {}
    for stmt in ir.walk(fn.body):
        for target in ir.targets_of(stmt):
            made = isinstance(stmt, ir.Assign) and isinstance(stmt.value, ir.Call) and stmt.value.fn is maker
            seen[target] = seen.get(target, True) and made
    return {name for name, made in seen.items() if made and name not in fn.params}


def _length(expr: ir.Expr, shapes: set[str]) -> bool:
    """``shape[i]`` of a name bound only to ``np.shape(...)`` (``language.shape``), ``i`` an integer
    constant: NumPy's shapes are tuples of Python ints."""
    return isinstance(expr, ir.Call) and expr.fn is operator.getitem and len(expr.args) == 2 \
        and isinstance(expr.args[0], ir.Var) and expr.args[0].name in shapes \
        and isinstance(expr.args[1], ir.Const) and expr.args[1].value.__class__ is int


# -- what the Python floats reach ----------------------------------------------------------------

def taint_is_harmless(body: list[ir.Stmt], position: int, name: str) -> bool:
    """Whether no value computed from ``name``'s elements in the loop at ``body[position]`` reaches an
    operation where a Python float behaves otherwise than NumPy's float64 short of raising on a
    zero divisor (see the module docstring)."""
    loop = body[position]
    assert isinstance(loop, ir.For)
    tainted = tainted_names(body, loop, name)

    def harmless(expr: ir.Expr) -> bool:
        if not isinstance(expr, ir.Call):
            return True
        if _carries(expr, tainted, loop, name) and not _passes_floats(expr.fn):
            return False
        return all(harmless(child) for child in ir.children(expr))

    for stmt in ir.walk(body):
        if isinstance(stmt, ir.Store) and stmt.op is not None and not _passes_floats(stmt.op) and \
                (_carries(stmt.value, tainted, loop, name) or stmt.array == name):
            return False
        if not all(harmless(e) for e in ir.exprs_of(stmt)):
            return False
    return True


def tainted_names(body: list[ir.Stmt], loop: ir.For, name: str) -> set[str]:
    """The names bound (anywhere, flow-insensitively) to a value computed from an element of
    ``name`` read in ``loop``, or from another such name."""
    in_loop = {s.sid for s in ir.walk(loop.body)}
    tainted: set[str] = set()
    while True:
        grown = set(tainted)
        for stmt in ir.walk(body):
            inside = stmt.sid in in_loop
            for expr in ir.exprs_of(stmt):
                if reads_tainted(expr, tainted, name if inside else None):
                    grown.update(ir.targets_of(stmt))
        if grown == tainted:
            return tainted
        tainted = grown


def _carries(expr: ir.Expr, tainted: set[str], loop: ir.For, name: str) -> bool:
    """Whether an argument of the call ``expr`` may be a Python float from ``name``'s cells."""
    assert isinstance(expr, ir.Call)
    return any(reads_tainted(arg, tainted, name) for arg in ir.children(expr))


def reads_tainted(expr: ir.Expr, tainted: set[str], cells_of: Optional[str]) -> bool:
    if isinstance(expr, ir.Var):
        return expr.name in tainted
    if cells_of is not None and element_read(expr, cells_of):
        return True
    return any(reads_tainted(child, tainted, cells_of) for child in ir.children(expr))


def _passes_floats(fn: Any) -> bool:
    """Whether ``fn`` treats a Python float as NumPy's float64 (short of ``/`` by zero raising)."""
    try:
        if rules.fact(fn, "python_floats_differ"):
            return False
    except TypeError:  # (an unhashable callable: not a library's)
        return False
    module = getattr(fn, "__module__", None) or ""
    if fn.__class__.__name__ == "ufunc":
        return True
    return module in ("_operator", "operator", "math", "builtins") or module.startswith("numpy") or \
        module in (runtime.__name__, float_lists.__name__)


# -- floats narrower than float64 ------------------------------------------------------------------

_NARROW = (np.dtype(np.float16), np.dtype(np.float32), np.dtype(np.complex64))


def mentions_narrow_floats(fn: ir.Function) -> bool:
    """Whether ``fn`` may make a float narrower than float64 of what its parameters are not: it calls
    ``np.float32`` (``np.float16``, ``np.complex64``), passes one as a value (``dtype=np.float32``,
    ``.astype("float32")``), or reads a global array or number of one.  A Python float meets such a
    value as a float32 where NumPy's float64 met it as a float64 (NEP 50): lists of Python floats would
    round to float32 what NumPy computed in float64.  (Of the parameters, ``cells`` asks when it runs.)"""
    if any(_narrow(value) for value in fn.constants.values()):
        return True
    for stmt in ir.walk(fn.body):
        for expr in ir.exprs_of(stmt):
            if _narrow_in(expr):
                return True
    return False


def _narrow_in(expr: ir.Expr) -> bool:
    if isinstance(expr, ir.Const) and _narrow(expr.value):
        return True
    if isinstance(expr, ir.Call) and _narrow(expr.fn):
        return True
    return any(_narrow_in(child) for child in ir.children(expr))


def _narrow(value: Any) -> bool:
    """A narrow float type, dtype, dtype's name, or a number or array of one."""
    if isinstance(value, (np.ndarray, np.generic)):
        return value.dtype in _NARROW
    if isinstance(value, (type, np.dtype, str)):
        try:
            return np.dtype(value) in _NARROW
        except (TypeError, ValueError, SyntaxError):
            return False
    return False


# -- the conversion ------------------------------------------------------------------------------

def _converted(body: list[ir.Stmt], position: int, name: str, around: tuple[ir.Var, ...]) -> list[ir.Stmt]:
    """``body`` with ``name = cells(name, *around)`` before its loop at ``position`` and, where anything
    after the loop reads ``name``, ``name = cells_array(name)`` after it."""
    loop = body[position]
    before = ir.Assign(name, ir.Call(float_lists.cells, (ir.Var(name),) + around), getattr(loop, "line", None))
    out = body[:position] + [before, loop]
    if any(name in names_in(stmt) for stmt in body[position + 1:]):
        out.append(ir.Assign(name, ir.Call(float_lists.cells_array, (ir.Var(name),)), getattr(loop, "line", None)))
    return out + body[position + 1:]


def names_in(stmt: ir.Stmt) -> set[str]:
    """Every name a statement (its nested blocks included) reads or writes into."""
    return set(_names_iter(stmt))


def _names_iter(stmt: ir.Stmt) -> Iterator[str]:
    for inner in ir.walk([stmt]):
        if isinstance(inner, ir.Store):
            yield inner.array
        if isinstance(inner, ir.Release):
            yield from inner.names
        for expr in ir.exprs_of(inner):
            yield from ir.names_read(expr)
