"""The compiled path: generated code run by Numba (``backend="numba"``), a ``Target`` of its own.

Input: the adjoint (or tangent) IR of the NumPy target, with three
differences this target asks for, and the module ``emit`` prints from it.
Output: a function that runs the module's function compiled by
``numba.njit`` (nopython mode), or, where Numba cannot compile it, runs the
same Python code and says so once (``CompileFallbackWarning``, naming what
Numba refused and the user's line).  Either way the numbers are those of
the Python backend (to rounding: Numba may contract or reorder nothing
but what LLVM's strict floating point allows, so in practice bit for bit).

What this target changes:

* **The tape**: one typed stack per slot of the recording plan (``plan.py``),
  local to the function (``numba/tape.py``): a float64 array preallocated
  just before the loop that records the slot where its size is known on
  entry to that loop, else a list (``tape_s.append(s)`` ... ``s = tape_s.pop()``),
  which Numba types from the values pushed and grows by doubling; the
  NumPy target's nested tuple has a different type at every depth, which
  no compiler can type.
* **Helpers are inlined** (``Capabilities.inlines_helpers``): the user's helpers are
  lowered in place of their calls, so one function holds every slot and no
  tape crosses a call.  A helper that cannot be (a recursive one) stays a
  call, which Numba does not compile: the function falls back.
* **Bounds checks where an index is not proven in range**: Numba's checks
  (``boundscheck=True``) make an index out of range raise IndexError, as in
  Python, instead of reading or writing past the array (a wrong number).
  The code compiles without them exactly when ``index_ranges`` proves every
  element access of the function in range, from the kinds every call of it
  passes (the tape stacks by their construction, ``numba.tape.proven_stacks``);
  where a few are not proven (at most four, each a name or a number into an
  array of known rank), ``check_index`` written before their statements
  raises NumPy's IndexError instead (``checked_indexes``), and the rest still
  runs unchecked.  The engine ops keep their own checks.
* **Module-level arrays as arguments**: an array the code reads from outside (bound
  as a global of the module: a global, a closure cell, an attribute, an item of a
  global tuple or dict) would be compiled by Numba as a constant, a copy taken at
  the first call; the compiled function takes each such global as a parameter
  instead, and every call passes the object itself (``_passed_globals``), so a
  change made in place is seen as the Python code sees it.
* **Its runtime** (``numba/runtime.py``): Numba implementations of the engine
  ops the code calls (``unbroadcast``, ``zeros_like`` ...), registered with
  ``numba.extending.overload`` on the very functions the NumPy target binds,
  so one module namespace serves the compiled and the Python run; and
  ``reversed`` over a loop's ``range``, which Numba lacks.

Compiled code is cached in memory with the Python code (per argument kinds),
and on disk across processes: the module's source is written to a file
named by a digest of the source, the values it binds as globals, the
options it is compiled with, and the versions of s2s_ad, Numba and NumPy,
and compiled with ``cache=True`` (a
changed function, rule or global gives another file).  Where a bound value
has no digest (an object s2s_ad cannot fingerprint), the code is compiled
without the disk cache.  ``S2S_AD_CACHE_DIR`` names the directory (default:
``$XDG_CACHE_HOME/s2s_ad`` or ``~/.cache/s2s_ad``), made owner-only (0700); one that others could
write to, or another user owns, is not used (``cache_safety.py``: warned of once, compiled in memory).

A call of float32 (or float16, complex64) data runs the float64 code compiled and casts its results
to the types NumPy's run gives them (``narrow.py``; long double data runs as Python): ``run`` looks at each
argument's dtype; a cached call of the API skips the look (``NumbaTarget.runner`` decides it once
for the arguments' types and dtypes, which key the call, and hands out ``run``'s ``checked`` part).

Numba is imported when the first function is compiled, never before.
"""
from __future__ import annotations

import dataclasses
import functools
import hashlib
import operator
import os
import re
import sys
import threading
import types
import warnings
from typing import Any, Callable, Iterator, Optional

import numpy as np

from ...analysis import index_ranges
from ...core import ir
from ...core.errors import CompileFallbackWarning
from .background import Background
from .cache_safety import safe_directory
from .entry_points import EntryPoints
from .handed import handed_parts
from .list_indexes import positions_as_arrays
from .names import names_kept_apart
from .narrow import NARROW, UNCOMPILED, NarrowCalls
from .tape import ReadBackSlotTape, SlotTape, proven_stacks
from ..target import Capabilities, NumPyTarget, SourceLanguageTarget, Spelling, TapeForm, Target


class NumbaTarget(NumPyTarget):
    """NumPy's spellings, compiled by Numba (see the module docstring)."""

    name = "numba"
    backend = "numba"
    # helpers inlined: no tape crosses a call.  Counting down: reversed_steps' range has its step at run
    # time, and a loop down a constant step of -1 is about a third faster on building's reverse sweep,
    # which LLVM then treats as a counted loop.
    # Vector tangents: a Jacobian's directions pushed through one run of typed code (directions.py).
    capabilities = Capabilities(inlines_helpers=True, counts_down=True, vector_tangents=True,
                                loops_over_directions=True)
    _tape = SlotTape()

    def __init__(self, background: bool = False) -> None:
        # background: Numba compiles in a thread, the calls meanwhile run the code as Python
        # (background.py; backend="auto"'s grad and value_and_grad).  A target of its own, so that
        # the code built for it (TransformCache keys on the target) is never handed to backend="numba".
        self.background = background

    def passes(self, form: str) -> tuple[str, ...]:
        # no lists of floats (Numba types a list by its items) and no ``del`` (Numba refuses it; its
        # reference counts free a temporary at its last use)
        # (a write of a slice by call: Numba's own formats shapes into an error message, seconds to compile)
        return ("fold_fills", "drop_dead_element_stores", "grow_lists_in_place", "draws_by_position",
                "slice_writes_by_call")

    def spellings(self, obj: Any) -> Iterator[Spelling]:
        if obj is reversed:  # Numba has no reversed(): bound to the runtime's (a range's reverse)
            return
        if _raising_math(obj):  # Numba's math.sqrt(-1.0) is nan: bound to the runtime's, which raises
            return
        if obj is np.matmul:  # a ufunc to Numba, which lowers a call of it elementwise: bound to the runtime's
            return
        yield from super().spellings(obj)

    def implementation(self, obj: Any) -> Any:
        from . import runtime as numba_runtime
        if obj is reversed:
            return numba_runtime.reversed_steps
        if obj is np.matmul:
            return numba_runtime.matmul
        return numba_runtime.CHECKED_MATH.get(obj, obj) if _raising_math(obj) else obj

    def tape(self) -> TapeForm:
        return self._tape

    def read_back(self) -> Target:
        return READ_BACK

    def refused(self, function: Callable) -> Optional[str]:
        return getattr(function, "refused", None)

    def handed_split(self, forward: ir.Function, backward: ir.Function
                     ) -> Optional[tuple[ir.Function, ir.Function]]:
        return handed_parts(forward, backward)

    def directions(self, run: Callable, values: tuple, positions: list[int], seeds: list[Any], out: Any) -> Any:
        from .directions import tangents_of_directions
        return tangents_of_directions(run, values, positions, seeds, out)

    def vector_sweep(self, run: Callable, values: tuple, seeds: list[Any]) -> Optional[tuple[Any, Any]]:
        from .directions import vector_sweep
        return vector_sweep(run, values, seeds)

    def store(self, stmt: ir.Store) -> list[ir.Stmt]:
        """``a[i] op= v`` as ``a[i] = a[i] op v``: Numba's in-place operators on an array do not buffer
        a right side that overlaps the left (``a[1:] += a[:-1]`` adds values it has just written, where
        NumPy adds the old ones); its plain stores do, as NumPy's.  (Its read of ``a[...]``, as ``written``'s.)"""
        if stmt.op is None:
            return [stmt]
        old = ir.Call(operator.getitem, (ir.Var(stmt.array), _WHOLE if _is_ellipsis(stmt.index) else stmt.index))
        return [ir.Store(stmt.array, stmt.index, ir.Call(stmt.op, (old, stmt.value)), stmt.line)]

    def written(self, fn: ir.Function) -> ir.Function:
        """``fn`` with each read by an index that is Ellipsis alone (``b[...]``, the whole of an array that
        a write through a view of it reads: lower_writes, store_adjoints) written ``b[(...,)]``, the same
        index to NumPy: Numba types ``b[...]`` but cannot lower the read, where it compiles the tuple.
        (Numba compiles a store ``b[...] = v``: left as it is.)  And ``np.shape(v)`` of a name bound to
        None on some path (a name a loop or branch binds first: Numba's Optional, which its np.shape
        refuses) as the runtime's ``shape(v)``.  Its names first kept apart for Numba's fused kernels
        (``names.py``: ``d_y`` and ``d_y_1`` collide there), and a list literal of positions indexing
        an array written as an array (``list_indexes.py``: Numba indexes by arrays only)."""
        fn = positions_as_arrays(names_kept_apart(fn))
        calls = [call for stmt in ir.walk(fn.body) for e in ir.exprs_of(stmt) for call in ir.calls_in(e)]
        optional = _bound_to_none(fn.body)
        if not any(_reads_whole(call) or _shape_of(call, optional) for call in calls):
            return fn  # (most code: nothing rebuilt)
        from . import runtime as numba_runtime

        def rewritten(e: ir.Expr) -> Optional[ir.Expr]:
            if isinstance(e, ir.Call) and _shape_of(e, optional):
                return ir.Call(numba_runtime.shape, e.args)
            return _whole_as_tuple(e)
        return dataclasses.replace(fn, body=ir.transformed(fn.body, rewritten))

    def checked_indexes(self, fn: ir.Function, kinds: dict[str, Any]) -> ir.Function:
        """``fn`` with ``check_index`` before the few accesses not proven in range (``index_ranges``):
        the rest of the code then needs no bounds check (``unchecked_accesses``)."""
        return index_ranges.with_checks(fn, kinds, proven_stacks(fn))

    def finish(self, function: Callable, emitted: Any) -> Callable:
        return _compiled(function, emitted, self.background)

    def runner(self, function: Callable, args: tuple) -> Callable:
        """``function``'s ``checked`` (the compiled code without ``run``'s look at each argument's
        dtype) where no argument of a call like ``args`` can be of a narrow dtype: each a Python
        number, string or None, a NumPy number (its type is its dtype) or an array (the caller keys
        on its dtype); else ``function`` itself, which looks."""
        checked = getattr(function, "checked", None)
        if checked is None:
            return function
        for arg in args:
            kind = type(arg)
            if kind in _NO_DTYPE:
                continue
            if (kind is np.ndarray or issubclass(kind, np.generic)) and arg.dtype.char not in _NARROW:
                continue
            return function
        return checked


NUMBA = NumbaTarget()
NUMBA_IN_BACKGROUND = NumbaTarget(background=True)


class ReadBackForNumba(SourceLanguageTarget):
    """The code of a gradient that forward mode reads back for Numba to compile (a Hessian under
    ``backend="numba"``): the source language (``SOURCE``), its tape in preallocated arrays where every
    slot can be one (``ReadBackSlotTape``), which Numba types, where nested tuples it cannot."""

    name = "source for numba"
    capabilities = Capabilities(inlines_helpers=True)  # no tape handed to a helper's part: arrays, not tuples
    _tape = ReadBackSlotTape()


READ_BACK = ReadBackForNumba()


_WHOLE = ir.Display("tuple", (ir.Const(Ellipsis),))


def _is_ellipsis(e: ir.Expr) -> bool:
    return isinstance(e, ir.Const) and e.value is Ellipsis


def _reads_whole(e: ir.Expr) -> bool:
    """Whether ``e`` is a read ``a[...]``."""
    return isinstance(e, ir.Call) and e.fn is operator.getitem and len(e.args) == 2 and _is_ellipsis(e.args[1])


def _whole_as_tuple(e: ir.Expr) -> Optional[ir.Expr]:
    """A read ``a[...]`` as ``a[(...,)]`` (``NumbaTarget.written``); anything else as it is (None)."""
    if _reads_whole(e):
        assert isinstance(e, ir.Call)
        return ir.Call(e.fn, (e.args[0], _WHOLE), e.kwargs)
    return None


def _bound_to_none(body: list[ir.Stmt]) -> set[str]:
    """The names ``body`` binds to None somewhere (a merge variable of a name unbound on some path)."""
    return {stmt.target for stmt in ir.walk(body) if isinstance(stmt, ir.Assign)
            and isinstance(stmt.value, ir.Const) and stmt.value.value is None}


def _shape_of(call: ir.Call, names: set[str]) -> bool:
    """Whether ``call`` is ``np.shape(v)`` of one of ``names``."""
    return call.fn is np.shape and len(call.args) == 1 and not call.kwargs and isinstance(call.args[0], ir.Var) \
        and call.args[0].name in names


def _raising_math(obj: Any) -> bool:
    """Whether ``obj`` is one of ``math``'s functions that raise outside their domain or range where
    Numba's return nan or inf (``numba.runtime.CHECKED_MATH``)."""
    from . import runtime as numba_runtime
    try:
        return obj in numba_runtime.CHECKED_MATH
    except TypeError:  # (an unhashable object)
        return False


# -- compiling, with the fallback ---------------------------------------------------------------

def _compiled(function: Callable, emitted: Any, background: bool = False) -> Callable:
    """A function running ``function`` compiled by Numba at its first call (for each new type of
    arguments), or ``function`` itself from the first time Numba cannot compile it.  ``background``:
    the first call starts the compile in a thread and runs ``function``, as every call does until the
    compile is over (``background.py``)."""
    from . import runtime as numba_runtime  # numba imported here, at the first build for this target

    numba_runtime.register()
    unproven = unchecked_accesses(emitted)
    options = {**_OPTIONS, "boundscheck": bool(unproven)}
    dispatcher = _dispatcher(function, emitted, options)
    errors = numba_runtime.compile_errors()
    lock = threading.Lock()
    state: dict[str, Callable] = {"run": dispatcher}
    refused = _not_to_compile(emitted)
    if refused is not None:  # compiled, it would give other numbers: the Python code runs, said at the first call
        state["run"] = functools.partial(_refuse_at_first_call, refused)
    passed = _passed_globals(emitted)
    if passed:  # the compiled code takes the module's arrays as arguments (see _passed_globals)
        state["run"] = _with_globals_passed(state["run"], function, tuple(emitted.namespace.globals[n] for n in passed))
    # (in a thread only where the call runs the dispatcher itself: its types are the call's arguments')
    compiling: Optional[Background] = Background(dispatcher) \
        if background and state["run"] is dispatcher and hasattr(dispatcher, "py_func") \
        else None

    # What a call of ``checked`` comes down to once the code has compiled and run (the dispatcher, or
    # the wrapper passing it the module's arrays), None before and from a fallback on: the API's hot
    # path calls it without ``checked``'s frame and tests, and calls ``checked`` where it raises, which
    # then runs it again and decides as ever (``calling._run_function``).
    direct: list[Optional[Callable]] = [None]
    # A hot path of Python floats alone calls the overload's entry point itself (entry_points.py)
    entries = EntryPoints(dispatcher) if state["run"] is dispatcher and hasattr(dispatcher, "py_func") \
        and hasattr(dispatcher, "overloads") else None

    def entry_slot(types: tuple) -> Optional[tuple[list[Optional[Callable]], tuple]]:
        if entries is None:
            return None
        found = entries.slot(types)
        if found is not None and direct[0] is not None:
            entries.fill()  # (compiled and run already: the overload may be there)
        return found

    @functools.wraps(function)
    def run(*args: Any) -> Any:
        if state["run"] is not function:
            for arg in args:
                if arg.__class__ in _NO_DTYPE:
                    continue
                if getattr(arg, "dtype", _WIDE).char in _NARROW:  # computed in float64, cast back (narrow.py)
                    return narrow_calls(args) if refused is None else checked(*args)
        return checked(*args)

    def checked(*args: Any) -> Any:
        """``run`` for arguments known to be of no narrow dtype (``NumbaTarget.runner``)."""
        nonlocal compiling
        current = state["run"]
        if current is function:
            return function(*args)
        if compiling is not None:  # compiling in a thread (background.py): Python's code runs until it is over
            if not compiling.ready and compiling.failed is None:
                compiling.start(args)
            if compiling.failed is not None:  # Numba could not compile it: said here, in the caller's thread
                fall_back(compiling.failed)
                return function(*args)
            if not compiling.ready:
                return function(*args)
            compiling = None  # (compiled: the hot path tests no more than this)
        try:
            returned = current(*args)
        except (_Refused, *errors) as refused:  # Numba cannot compile it: the Python code runs from now on
            fall_back(refused)
            return function(*args)
        except Exception as raised:
            # The code raised (the user's error: Python's code raises it too, from the generated line
            # named in its traceback) or Numba failed where Python would not: then Python's code runs.
            result = function(*args)
            fall_back(raised)
            return result
        if direct[0] is not current and state["run"] is current:  # (compiled and run: see ``direct``)
            direct[0] = current
        if entries is not None and len(dispatcher.overloads) != entries.overloads_seen and state["run"] is current:
            entries.fill()  # (a new overload compiled for this call)
        return returned

    def say_narrow(why: str) -> None:
        if not state.get("narrow"):
            state["narrow"] = function
            warnings.warn(CompileFallbackWarning(f"backend='numba' runs {emitted.name} as Python for {why}"),
                          stacklevel=users_stacklevel())

    narrow_calls = NarrowCalls(function, checked, say_narrow)

    def fall_back(reason: BaseException) -> None:
        with lock:
            direct[0] = None
            if entries is not None:
                entries.clear()
            if state["run"] is not function:
                state["run"] = function
                warnings.warn(CompileFallbackWarning(_fallback_message(function, emitted, reason)),
                              stacklevel=users_stacklevel())

    for wrapper in (run, checked):  # (the dispatcher and what runs now, the options and why: for tests)
        setattr(wrapper, "refused", refused)  # (NumbaTarget.refused: known before the first call)
        setattr(wrapper, "compiled", dispatcher)
        setattr(wrapper, "state", state)
        setattr(wrapper, "options", options)
        setattr(wrapper, "unproven", unproven)
        setattr(wrapper, "background", compiling)
    setattr(run, "checked", checked)
    setattr(checked, "direct", direct)  # (checked's alone: run looks at dtypes first)
    setattr(checked, "entry_slot", entry_slot)
    setattr(checked, "fresh_returns", getattr(function, "fresh_returns", False))  # (run has it: functools.wraps)
    return run


# Float types narrower or wider than float64: a call with them computes in float64 and casts back
# (float16, float32, complex64) or runs as Python (long double): ``narrow.py``
_NARROW = NARROW | UNCOMPILED
_NO_DTYPE = frozenset({float, int, bool, complex, str, type(None)})  # (what run's look finds no dtype on)
_WIDE = np.dtype(np.float64)


# s2s_ad's own folder: its frames (and generated code's) are not the user's call site
_PACKAGE = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))) + os.sep


def users_stacklevel() -> int:
    """The ``stacklevel`` of ``warnings.warn`` that names the user's call (for its caller): the first
    frame above it that is neither s2s_ad's own (the API's call path, this module) nor generated
    code (``<s2s_ad ...>`` or a file of the cache directory), however many of those the call went
    through (a gradient, a gradient's callee, the cached call path)."""
    cached = cache_directory() or "<none>"
    frame = sys._getframe(1)
    level = 1
    while frame is not None:
        name = frame.f_code.co_filename
        if not (name.startswith(_PACKAGE) or name.startswith("<s2s_ad") or name.startswith(cached)):
            return level
        frame = frame.f_back  # type: ignore[assignment]
        level += 1
    return 1


class _Refused(Exception):
    """Why code is not handed to Numba at all (raised at its first call, to fall back as for Numba's refusals)."""


def _refuse_at_first_call(reason: str, *args: Any) -> Any:
    raise _Refused(reason)


_DRAWS = re.compile(r"\b(?:np\.random|random)\.\w+\(")


def _not_to_compile(emitted: Any) -> Optional[str]:
    """Why the module's code must run as Python although Numba might compile it, if it must: it draws
    random numbers from a global generator, a generator it holds as a constant or the states a
    checkpointed loop keeps (Numba's global generators are its own, not NumPy's or Python's: other
    numbers, and a derivative that replays the draws of a pass would replay none).  Draws from a
    generator object the code reads as a value (``runtime.draw``) compile where ``numba.draws``
    reproduces NumPy's numbers, and Numba refuses the rest by name."""
    bound = list(emitted.namespace.globals.values())
    if _DRAWS.search(emitted.source) or any(_draws(value) for value in bound):
        return ("it draws random numbers from a global generator, and Numba's are not NumPy's or Python's (draws "
                "from an np.random.Generator passed in compile)")
    nested = next((name for fn in emitted.functions for name in _tuples_holding_themselves(fn.body)), None)
    if nested is not None:
        return (f"a loop makes {nested} a tuple holding {nested}'s value of the trip before (as the Python "
                f"backend's tape of a loop does, which forward mode reads): its type is another at every trip, "
                f"which Numba cannot type")
    return None


def _tuples_holding_themselves(body: list) -> Iterator[str]:
    """The names a loop of ``body`` rebinds to a tuple that holds, through names bound to names and
    tuples, the name's own earlier value (``items = (x, tape); tape = items``): a type nested one level
    deeper at every trip.  Numba searches for a type that holds all of them until Python's recursion
    limit stops it, after minutes (a Hessian of a checkpointed loop took eleven), so the code is not
    handed to it."""
    for loop in ir.walk(body):
        if not isinstance(loop, (ir.For, ir.While)):
            continue
        holds: dict[str, set[tuple[str, bool]]] = {}  # target -> (name its value holds or is, held in a tuple)
        for stmt in ir.walk([loop]):
            if isinstance(stmt, ir.Assign) and isinstance(stmt.value, ir.Var):
                holds.setdefault(stmt.target, set()).add((stmt.value.name, False))
            elif isinstance(stmt, ir.Assign) and isinstance(stmt.value, ir.Display) and stmt.value.kind == "tuple":
                for item in stmt.value.items:
                    if isinstance(item, ir.Var):
                        holds.setdefault(stmt.target, set()).add((item.name, True))
        # (a name bound to another first: ``tape``, of ``items = (x, tape); tape = items``, not ``items``)
        for name in sorted(holds, key=lambda name: any(in_tuple for _, in_tuple in holds[name])):
            if _reaches_itself_through_a_tuple(name, holds):
                yield name
                break


def _reaches_itself_through_a_tuple(start: str, holds: dict[str, set[tuple[str, bool]]]) -> bool:
    seen: set[tuple[str, bool]] = set()
    stack = [(held, in_tuple) for held, in_tuple in holds.get(start, ())]
    while stack:
        name, through_tuple = stack.pop()
        if name == start and through_tuple:
            return True
        if (name, through_tuple) in seen:
            continue
        seen.add((name, through_tuple))
        stack.extend((held, through_tuple or in_tuple) for held, in_tuple in holds.get(name, ()))
    return False


def _draws(value: Any) -> bool:
    """Whether a global of generated code may draw from a random generator (np.random's functions,
    ``random``'s, a generator's methods bound as constants, the states a checkpointed loop keeps)."""
    import random

    from ...core import runtime
    if value is runtime.random_states or value is runtime.set_random_states:
        return True
    owner = getattr(value, "__self__", None)
    if isinstance(owner, (np.random.RandomState, np.random.Generator, random.Random)):
        return True
    module = getattr(value, "__module__", None) or ""
    return module == "random" or module.startswith("numpy.random")


# How the code is compiled (in every cache file's digest, with this module's and the runtime's source:
# Numba's disk cache does not see a change of its options or of the overloads the code inlines).
# Python's errors: x / 0.0 raises ZeroDivisionError as for Python's floats (where the Python code gives
# inf instead, on NumPy's numbers, the call runs again as Python: see _compiled), and an index out of
# range raises IndexError (Numba's default reads whatever memory is there: a wrong number).  The bounds
# checks go only where every element access of the code is proven in range (``unchecked_accesses``).
_OPTIONS: dict[str, Any] = dict(error_model="python", boundscheck=True)


def unchecked_accesses(emitted: Any) -> list:
    """The element accesses of the module's function not proven in range (``index_ranges.Access``):
    none, and it compiles without bounds checks.  The proof reads the function as printed (its tape
    stacks proven by their construction, ``numba.tape.proven_stacks``) and the kinds of its
    parameters that every call has (``Emitted.kinds``).  The engine ops it calls keep their own checks
    (``numba.runtime``'s overloads are compiled with options of their own)."""
    if not emitted.functions:
        return [index_ranges.Access("the function's code is not known", None)]
    fn = emitted.functions[0]
    return index_ranges.unproven_accesses(fn, emitted.kinds, proven_stacks(fn))


@functools.lru_cache(maxsize=None)
def _compiler_fingerprint() -> str:
    """What else the machine code depends on: the options, this module, the runtime's overloads and
    the files declaring the compiled versions (``rules.compiled``, target "numba": ``numba.rules``'
    modules and users' templates; edited in a checkout, their machine code on disk must not be taken
    for the new one's) and the kernels they share."""
    from . import kernels as numba_kernels, revolve as numba_revolve, rules as numba_rules, runtime as numba_runtime
    from ...rules import registry as rules
    digest = hashlib.sha256(repr(sorted(_OPTIONS.items())).encode())
    files = [numba_runtime.__file__ or "", numba_kernels.__file__ or "", numba_revolve.__file__ or "", __file__]
    declaring = {factory.__code__.co_filename for factory in rules.compiled_versions("numba").values()}
    folder = os.path.dirname(numba_rules.__file__ or "")
    declaring |= {os.path.join(folder, name) for name in os.listdir(folder) if name.endswith(".py")}
    files += sorted(declaring)
    for name in files:
        with open(name, "rb") as source:
            digest.update(source.read())
    return digest.hexdigest()


# -- arrays the code reads from outside, passed at each call --------------------------------------

def _holds_array(value: Any) -> bool:
    """Whether ``value`` is a NumPy array or a tuple holding one (at any depth)."""
    if isinstance(value, np.ndarray):
        return True
    return isinstance(value, tuple) and any(_holds_array(v) for v in value)


def _passed_globals(emitted: Any) -> list[str]:
    """The globals of the module that hold arrays (the user's global arrays, closure cells, module or
    class attributes, items of a global tuple or dict, bound by ``emit.Namespace``), sorted.  Numba
    compiles a global array as a constant, a copy taken at the first call: changed in place later,
    the compiled code would keep the old numbers while the Python code reads the array itself.  So
    the compiled function takes each of them as a parameter of its own (``_with_parameters``) and
    every call passes the object the global holds (``_with_globals_passed``)."""
    return sorted(name for name, value in emitted.namespace.globals.items() if _holds_array(value))


def _with_parameters(emitted: Any, names: list[str]) -> str:
    """The module's source with ``names`` added as the last parameters of its function (each with the
    default None, after the defaults it has): in its body they then name the parameters, not the
    globals.  The def is one line (``emit_module``), so the lines keep their numbers (the user's
    lines, ``Emitted.origins``).  A name another function of the module reads stays a global there:
    ``_Refused`` (the code runs as Python, which reads the array itself)."""
    if not names:
        return emitted.source
    lines = emitted.source.splitlines(keepends=True)
    header = re.compile(rf"def {re.escape(emitted.name)}\((.*)\):\s*$")
    found = [i for i, line in enumerate(lines) if header.match(line)]
    others = [i for i, line in enumerate(lines) if line.startswith("def ") and i not in found]
    if len(found) != 1:
        raise _Refused(f"the function {emitted.name} reads module-level arrays and its def could not be found")
    start = found[0]
    end = min([i for i in others if i > start], default=len(lines))
    before = min(others, default=start)  # (the comments above the first def name no code)
    outside = "".join(line.split("#")[0] for line in lines[min(before, start):start] + lines[end:])
    if any(re.search(rf"\b{re.escape(n)}\b", outside) for n in names):
        raise _Refused("a function of the code other than the first reads a module-level array, which Numba "
                       "would compile as a constant (a change made in place later would not be seen)")
    match = header.match(lines[start])
    assert match is not None
    params = match.group(1)
    added = ", ".join(f"{n}=None" for n in names)
    lines[start] = f"def {emitted.name}({params + ', ' if params else ''}{added}):\n"
    return "".join(lines)


def _with_globals_passed(compiled: Callable, function: Callable, values: tuple) -> Callable:
    """``compiled`` (taking ``values`` after the parameters of ``function``) called as ``function`` is:
    the defaults a call leaves out filled in, then ``values`` (the objects themselves: a change made
    in place is seen at the next call)."""
    count = function.__code__.co_argcount
    defaults = function.__defaults__ or ()
    first_default = count - len(defaults)

    def call(*args: Any) -> Any:
        if len(args) < count:
            args = args + defaults[len(args) - first_default:]
        return compiled(*args, *values)
    return call


def _dispatcher(function: Callable, emitted: Any, options: dict[str, Any]) -> Any:
    """``numba.njit`` of the module's function with ``options``: from a file of the cache directory (so
    that Numba caches the machine code on disk) where the module can be fingerprinted, else as it is.
    Its module-level arrays become parameters (``_passed_globals``); a module whose other functions
    read them is not compiled (``_Refused``, at the first call)."""
    import numba

    try:
        source = _with_parameters(emitted, _passed_globals(emitted))
    except _Refused as refused:
        return functools.partial(_refuse_at_first_call, str(refused))
    path = _cache_file(emitted, options)
    if path is None:
        if source is emitted.source:
            return numba.njit(**options)(function)
        namespace = dict(function.__globals__)
        exec(compile(source, function.__code__.co_filename, "exec"), namespace)
        return numba.njit(**options)(namespace[emitted.name])
    # Numba caches code whose globals name an importable module (it rebuilds its environment from it).
    namespace = {**function.__globals__, "__name__": __name__}
    try:
        exec(compile(source, path, "exec"), namespace)
    except OSError:
        return numba.njit(**options)(function)
    return numba.njit(cache=True, **options)(namespace[emitted.name])


def cache_directory() -> Optional[str]:
    """Where compiled code is kept across processes (``S2S_AD_CACHE_DIR``, else the user's cache)."""
    chosen = os.environ.get("S2S_AD_CACHE_DIR")
    if not chosen:
        base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
        chosen = os.path.join(base, "s2s_ad")
    return os.path.join(chosen, "numba")


def _cache_file(emitted: Any, options: dict[str, Any]) -> Optional[str]:
    """The file holding the module's source in the cache directory (written if new), named by its
    fingerprint and the options it is compiled with (with bounds checks or without: Numba's own key
    does not tell them apart); None where a global cannot be fingerprinted or the directory cannot be
    written."""
    import numba

    from ...core.version import __version__
    digest = hashlib.sha256()
    for part in (__version__, numba.__version__, np.__version__, _compiler_fingerprint(), emitted.source,
                 repr(sorted(options.items()))):
        digest.update(part.encode())
    passed = set(_passed_globals(emitted))
    for name in sorted(emitted.namespace.globals):
        value = emitted.namespace.globals[name]
        # (an array passed at each call: the machine code depends on its type alone, Numba's own key)
        printed = f"passed {_argument_type(value)}" if name in passed else _fingerprint(value)
        if printed is None:
            return None
        digest.update(f"\0{name}={printed}".encode())
    directory = cache_directory()
    if directory is None or not safe_directory(directory, users_stacklevel):
        return None
    path = os.path.join(directory, f"{emitted.name}_{digest.hexdigest()[:24]}.py")
    try:
        if not os.path.exists(path):
            partial = f"{path}.{os.getpid()}.{threading.get_ident()}"
            with open(partial, "w", encoding="utf-8") as out:
                out.write(_with_parameters(emitted, sorted(passed)))
            os.replace(partial, path)  # whole or absent, for processes racing to write it
    except OSError:
        return None
    return path


def _argument_type(value: Any) -> str:
    """What Numba types an array (or a tuple holding arrays) passed as an argument by."""
    if isinstance(value, np.ndarray):
        return f"array {value.dtype.str} {value.ndim} {value.flags.c_contiguous} {value.flags.f_contiguous}"
    if isinstance(value, tuple):
        return "(" + ", ".join(_argument_type(v) for v in value) + ")"
    return _fingerprint(value) or type(value).__name__


def _fingerprint(value: Any) -> Optional[str]:
    """Text that changes whenever what generated code reads of ``value`` may (None: not known how)."""
    if value is None or isinstance(value, (bool, int, float, complex, str)):
        return repr(value)
    if isinstance(value, types.ModuleType):
        return f"module {value.__name__}"
    if isinstance(value, np.ndarray):
        return f"array {value.dtype.str} {value.shape} {hashlib.sha256(np.ascontiguousarray(value).tobytes()).hexdigest()}"
    if isinstance(value, np.generic):
        return f"{type(value).__name__} {value!r}"
    if isinstance(value, tuple):
        items = [_fingerprint(v) for v in value]
        return None if any(i is None for i in items) else "(" + ", ".join(i for i in items if i is not None) + ")"
    if isinstance(value, types.FunctionType):
        return f"function {value.__module__}.{value.__qualname__} {_code_fingerprint(value.__code__)}"
    if isinstance(value, (types.BuiltinFunctionType, np.ufunc, type)):
        return f"{type(value).__name__} {getattr(value, '__module__', '')}.{getattr(value, '__qualname__', value)}"
    py_func = getattr(value, "py_func", None)  # a Numba dispatcher
    if isinstance(py_func, types.FunctionType):
        return "jitted " + (_fingerprint(py_func) or "")
    return None


def _code_fingerprint(code: types.CodeType) -> str:
    """A digest of what ``code`` does: its bytecode, names and constants, a nested function's or generator
    expression's code by its own digest (their repr holds the address they were loaded at, another in
    every process: a disk cache keyed by it was never read again)."""
    digest = hashlib.sha256(code.co_code)
    for constant in code.co_consts:  # (a frozenset's order is its strings' hashes: another in every process)
        digest.update((_code_fingerprint(constant) if isinstance(constant, types.CodeType) else
                       repr(sorted(map(repr, constant))) if isinstance(constant, frozenset) else repr(constant)).encode())
        digest.update(b"\0")
    digest.update(repr(code.co_names).encode())
    return digest.hexdigest()


_GENERATED_LINE = re.compile(r'File "([^"]*)", line (\d+)')


def _fallback_message(function: Callable, emitted: Any, refused: BaseException) -> str:
    """What Numba refused, where in the user's code, and what happens instead."""
    text = str(refused)
    reason = text if isinstance(refused, _Refused) else _first_reason(text, emitted.namespace.globals)
    where = ""
    for found in _GENERATED_LINE.finditer(text):
        if found.group(1).startswith("<s2s_ad") or found.group(1).endswith(".py") and \
                os.path.basename(found.group(1)).startswith(emitted.name):
            number = int(found.group(2))
            if 0 < number <= len(emitted.origins) and emitted.origins[number - 1] is not None:
                lines = emitted.source.splitlines()
                statement = lines[number - 1].split("#")[0].strip() if number <= len(lines) else ""
                where = f" at line {emitted.origins[number - 1]} of {_user_file(function)}" + \
                        (f" ({statement})" if statement else "")
                break
    return (f"backend='numba' cannot compile {emitted.name}{where}: {reason}; it runs as Python instead "
            f"(the same numbers, at Python's speed)")


def _first_reason(text: str, bound: Optional[dict] = None) -> str:
    """What a Numba error says it refused, in a line: the call it has no implementation of, the name
    it cannot type (a derivative rule's helper: named as one, ``bound`` being the code's globals), or
    its first line of substance."""
    call = re.search(r">>> (.+)", text)
    if "No implementation of function" in text and call and call.group(1).strip().startswith("draw("):
        return ("the draw " + call.group(1).strip()[:120] + " is not one Numba makes as NumPy does: compiled draws are "
                "those of an np.random.Generator argument, with numbers for the distribution's parameters "
                "(docs/rules.md lists the methods)")
    if "No implementation of function" in text and call:
        return f"Numba has no implementation of {call.group(1).strip()}"[:240]
    untyped = re.search(r"Untyped global name '([^']+)'", text)
    if untyped:
        module = getattr((bound or {}).get(untyped.group(1)), "__module__", None) or ""
        if module.startswith("s2s_ad.templates."):
            return (f"{untyped.group(1)}, a helper of the derivative rules of {module.rsplit('.', 1)[1]}, has no "
                    "compiled version (docs/rules.md lists what compiles under backend='numba')")
        return f"{untyped.group(1)} is a Python function Numba cannot compile"
    skipped = ("Failed in ", "During:", "File ", "<source", "^", "This error", "- argument")
    for line in text.splitlines():
        line = line.strip()
        if line and not line.startswith(skipped):
            return line[:240]
    return text.strip().splitlines()[0][:240] if text.strip() else "an error Numba gave no words for"


def _user_file(function: Callable) -> str:
    """The user's file, from the name ``cache.compile_module`` gives generated code
    (``<s2s_ad d_f from file.py:12 #1a2b3c>``)."""
    found = re.search(r" from (.+?):\d+ #", function.__code__.co_filename)
    return os.path.basename(found.group(1)) if found else "the user's file"
