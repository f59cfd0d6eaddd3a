"""How a gradient function's calls find their code: the cached entries and the tests that pick them.

Input: a call's arguments, their types and (for arrays) shapes and dtypes.  Output: the code built
for those kinds (``Entry``), found by the last call's generated test (``_hit_function``), or by
dictionaries keyed on types and shapes, and the helpers ``gradient.GradientFunction`` and the
other transformations share: the transform cache (``_CACHE``), the default target, the unwrapping
of bound methods and ``functools.partial``, the resolution of ``wrt``.  A test that fails only
sends a call the slower way; no key is coarser than the kinds.
"""

from __future__ import annotations

import functools
import inspect
import os
import sys
import types
from typing import Any, Callable, Optional, Sequence, Union

import numpy as np

from ..driver.cache import TransformCache, name_the_users_line
from ..core import debugging
from ..core.errors import NotADef, TransformError
from ..frontend.parse import transparent
from ..frontend.callables import made_by_s2s_ad
from ..frontend.snapshot import QUICK_ERRORS, Snapshot, quick_function
from ..driver.pipeline import Built
from ..targets.target import NUMPY, Target


Wrt = Union[int, str, Sequence[Union[int, str]]]


_CACHE = TransformCache()


def _run(generated: Callable, args: tuple) -> Any:
    """Call generated code; an error inside it gets a note naming the user's line.  Under a
    debugger's ``step_into`` the debugger is on in the generated code alone (debugging.py)."""
    try:
        return generated(*args) if not debugging.SUSPENDED else debugging.run_traced(generated, args)
    except Exception as exc:
        name_the_users_line(exc)
        raise


# The folder of s2s_ad's own modules: their frames are left out of a TransformError's traceback.
_PACKAGE = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep


# Before Python 3.11 a bare ``raise`` re-raises the traceback the interpreter kept, not the exception's
# own: there the handler raises the error again, which shows its one frame of s2s_ad's below the user's.
BARE_RAISE_KEEPS_THE_TRIMMED_TRACEBACK = sys.version_info >= (3, 11)


def without_our_frames(exc: BaseException) -> None:
    """Leave s2s_ad's own frames and the error's causes out of ``exc``, a ``TransformError`` being
    handled: its message names the user's file, line and construct, which is what they need.  The
    handler then re-raises it with a bare ``raise``, which adds no frame of its own, so the traceback
    the user sees ends at their call (frames of theirs below it, a rule of theirs, say, stay)."""
    kept = []
    tb = exc.__traceback__
    while tb is not None:
        if not tb.tb_frame.f_code.co_filename.startswith(_PACKAGE):
            kept.append(tb)
        tb = tb.tb_next
    trimmed: Optional[types.TracebackType] = None
    for tb in reversed(kept):
        trimmed = types.TracebackType(trimmed, tb.tb_frame, tb.tb_lasti, tb.tb_lineno)
    exc.with_traceback(trimmed)
    exc.__cause__ = None
    exc.__suppress_context__ = True


def _user_facing(function: Callable) -> Callable:
    """A function of the API whose ``TransformError`` reaches the user without s2s_ad's own frames and
    causes (``without_our_frames``): the traceback ends at the user's call (before Python 3.11, at this
    wrapper's one line below it)."""
    @functools.wraps(function)
    def call(*args: Any, **kwargs: Any) -> Any:
        try:
            return function(*args, **kwargs)
        except TransformError as exc:
            without_our_frames(exc)
            if BARE_RAISE_KEEPS_THE_TRIMMED_TRACEBACK:
                raise
            raise exc
    return call


# The target whose code the API runs, and whose ownership check its results pass (target.py).
_TARGET = NUMPY


_gettrace = sys.gettrace


@functools.lru_cache(maxsize=None)
def _types_of(n: int) -> Callable[[tuple], tuple]:
    """A function giving the types of an n-tuple's items, the key of a cached gradient.
    Written out for each n it takes a third of the time of ``tuple(map(type, args))``."""
    items = "".join(f"type(args[{i}]), " for i in range(n))
    return eval(f"lambda args: ({items})", {"type": type})  # noqa: S307 (our own text, no user input)


@functools.lru_cache(maxsize=None)
def _shapes_of(positions: tuple[int, ...], numpy_arrays: tuple[int, ...] = ()) -> Callable[[tuple], tuple]:
    """A function giving the shapes of the arrays at ``positions`` of an argument tuple, and the
    dtypes of those at ``numpy_arrays`` (NumPy's): with the arguments' types, the key of a cached
    gradient for a call with arrays.  The key determines the kinds (``kinds_of``: an array's kind is
    its rank and which of its axes' lengths are 1 or equal to another's) and what a target decides
    once from the dtypes (``Target.runner``), so a call with the same key may run the same code.
    Written out, like ``_types_of``."""
    items = "".join(f"args[{i}].shape, " + (f"args[{i}].dtype, " if i in numpy_arrays else "") for i in positions)
    return eval(f"lambda args: ({items})", {})  # noqa: S307 (our own text, no user input)


# The argument types that are NumPy's or Python's own: a call with only these runs on the gradient's
# own target, with no further test (the rest may be arrays of another library: array_api.target).
_PLAIN_TYPES = frozenset({float, int, bool, complex, str, type(None), np.ndarray, np.float64, np.float32,
                          np.int64, np.int32, np.bool_, np.complex128})


def _target_of_arguments(args: tuple, types: tuple, default: Target) -> Target:
    """The target of a call: ``default``, unless an argument is an array of another library (then
    its namespace's, ``array_api.target``, imported here and not before)."""
    for t in types:
        if t not in _PLAIN_TYPES:
            from ..targets.array_api.target import target_of_arguments
            return target_of_arguments(args, default)
    return default


def numpy_arrays_only(what: str, args: Sequence[Any]) -> None:
    """Refuse, before anything runs, arrays of another library than NumPy where ``what`` (``vjp``,
    ``jacobian``, ``hessian``, ``check_grad``) takes NumPy's alone."""
    target = _target_of_arguments(tuple(args), tuple(map(type, args)), NUMPY)
    if target is not NUMPY:
        raise TypeError(f"{what} takes NumPy arrays only, not arrays of {getattr(target, 'library', target.name)}; "
                        "for those, grad, value_and_grad and jvp run through the array's own namespace "
                        "(docs/api.md, 'Arrays of other libraries')")


# Entries of one table of ``_by_shapes`` kept at most: calls whose shapes keep changing start it again.
_SHAPES_KEPT = 256


def _compiled(function: Optional[Callable]) -> Callable:
    """A generated function the API asked for compiled (``Built.function``, a split adjoint's parts
    once filled): never None, or a build went wrong."""
    if function is None:
        raise AssertionError("s2s_ad: generated code was asked for compiled and is not")
    return function


# What the hot path keeps of a built gradient: its function; the snapshot's quick check and the
# snapshot itself, where the code reads a free name (None, None where nothing can make it stale).
Entry = tuple[Callable, Optional[Callable[[], bool]], Optional[Snapshot]]


def _entry(built: Built, target: Target, args: tuple) -> Entry:
    """The ``Entry`` of a built gradient, for calls found by the types (and the arrays' shapes and
    dtypes) of ``args``: what ``target`` runs for those (``Target.runner``).  A cached call asks the
    quick check (one generated expression of identity tests, ``Snapshot.quick``); where it says no,
    the slow path asks ``Snapshot.valid``, which may still find the code current."""
    function = target.runner(_compiled(built.function), args)
    snapshot = built.snapshot
    if snapshot is None or snapshot.empty:
        return function, None, None
    return function, snapshot.quick(), snapshot


def _never_hit(args: tuple) -> Any:
    return False


# what the hot path's run gives where its test fails (no gradient is this object)
_MISSED = object()


def _never_runs(args: tuple) -> Any:
    return _MISSED


def _hit_function(owner: Callable, types: tuple, entry: Entry, arrays: Optional[tuple] = None, args: tuple = (),
                  target: Optional[Target] = None, as_is: Optional[Callable[[Any], bool]] = None
                  ) -> Callable[[tuple], Any]:
    """A function of a call's arguments, true only where the call may run ``entry``'s code, in one
    generated expression, the hot path's only call before the generated code (``_hit_tests``).  What
    it gives then: the entry's function (of a ``_by_types`` entry, for numbers), or ``(function, target,
    as_is)`` (of a ``_by_shapes`` entry, whose results the API checks, ``_ran``, unless ``as_is``
    passes them: ``_as_returned``); else False."""
    namespace: dict[str, Any] = {"hresult": entry[0] if arrays is None else (entry[0], target, as_is)}
    return quick_function("hit", "args", _hit_tests(owner, types, entry, arrays, args, namespace), namespace,
                          result="hresult")


class Unfinished:
    """What the hot path of a call with arrays gives where the gradient its code returned is not
    handed over as it is (``_run_function_of_arrays``): the gradient, and the function and target
    that made it, for ``gradient._handed`` to finish (``like`` its primal, the caller's own)."""

    __slots__ = ("gradient", "function", "target")

    def __init__(self, gradient: Any, function: Callable, target: Target) -> None:
        self.gradient, self.function, self.target = gradient, function, target


def _run_function_of_arrays(owner: Callable, types: tuple, entry: Entry, arrays: tuple, args: tuple,
                            target: Target, as_is: Callable[[Any], bool], wrapped: bool) -> Callable[[tuple], Any]:
    """``_run_function`` for a ``_by_shapes`` entry (the arrays' shapes and dtypes tested too, as
    ``_hit_function``'s) whose gradient may be handed over as returned (``as_is``: no value, no
    self-check, by one argument): where the tests pass it runs the entry's function and hands over
    the gradient it returns where ``as_is`` passes it (a tuple of it where ``wrapped``), else gives it
    back ``Unfinished``.  Where they fail: ``_MISSED``."""
    namespace: dict[str, Any] = {"hfunction": entry[0], "hMISSED": _MISSED, "QUICK_ERRORS": QUICK_ERRORS,
                                 "has_is": as_is, "hUnfinished": Unfinished, "htarget": target}
    names = [f"a{i}" for i in range(len(types))]
    tests = _hit_tests(owner, types, entry, arrays, args, namespace, names)
    given = "(gradient,)" if wrapped else "gradient"
    inline = getattr(as_is, "inline", None)  # (the look written out: no call of its own)
    looks = inline("gradient", namespace) if inline is not None else "has_is(gradient)"
    text = (f"def run(args):\n    try:\n        ({''.join(n + ', ' for n in names)}) = args\n"
            f"        passed = {' and '.join(tests)}\n"
            "    except QUICK_ERRORS:\n        passed = False\n"
            "    if not passed:\n        return hMISSED\n"
            + _running(entry[0], names, "gradient = ", namespace) +
            f"    return {given} if {looks} else hUnfinished(gradient, hfunction, htarget)\n")
    exec(text, namespace)  # noqa: S102 (our own text)
    return namespace.pop("run")


def _run_function(owner: Callable, types: tuple, entry: Entry) -> Callable[[tuple], Any]:
    """For a ``_by_types`` entry of a derivative whose calls return what its code returns
    (``GradientFunction._bare``): the hot path in one generated function, which runs the entry's
    function where ``_hit_tests`` pass for a call of exactly ``len(types)`` arguments, returning what
    it returns, and gives ``_MISSED`` otherwise.  (``GradientFunction.__call__`` asks it only where no
    debugger or other tracer is on: stepping takes the slower path, ``debugging.py``.)  Test and run
    in one frame; its twin, ``_as_call``, is the gradient's ``__call__`` itself.  The function runs
    outside the test's ``try``: an error of the user's code is never read as a failed test."""
    namespace: dict[str, Any] = {"hfunction": entry[0], "hMISSED": _MISSED, "QUICK_ERRORS": QUICK_ERRORS}
    names = [f"a{i}" for i in range(len(types))]
    tests = _hit_tests(owner, types, entry, None, (), namespace, names)
    # (the arguments unpacked: a call of another count raises ValueError, and the run is a plain call)
    running = _running(entry[0], names, "return ", namespace, types)
    text = (f"def run(args):\n    try:\n        ({''.join(n + ', ' for n in names)}) = args\n"
            f"        passed = {' and '.join(tests)}\n"
            "    except QUICK_ERRORS:\n        passed = False\n"
            "    if not passed:\n        return hMISSED\n" + running)
    exec(text, namespace)  # noqa: S102 (our own text)
    run = namespace.pop("run")
    run.as_call = _as_call(names, tests, running, namespace)
    return run


def _as_call(names: list[str], tests: list[str], running: str, namespace: dict[str, Any]) -> Callable:
    """The twin of a ``_run_function`` run that a gradient takes as its class's ``__call__``
    (``code_tables.use_hit``): the same tests and run, of the call's arguments themselves, so that a
    cached call of a gradient of numbers is the call of one generated function, which calls the
    code.  (Through the run, ``GradientFunction.__call__`` packs the arguments twice and adds a frame:
    a third of the cost of a call of a gradient of a few flops.)  Any other call, with keywords, of
    another count or type, or under a debugger, goes the whole way (``call_in_full``).  Its
    parameters are positional-only, so that no keyword of the user's function takes one's place;
    one the call leaves out is ``hABSENT``, whose type is no argument's."""
    namespace.update(hABSENT=_ABSENT, hgettrace=sys.gettrace, hraised=_raised_from_the_code)
    given = ", ".join(names)
    text = (f"def call(hself, {''.join(n + '=hABSENT, ' for n in names)}/, *rest, **kwargs):\n"
            f"    try:\n        passed = {' and '.join(tests)} and not rest and not kwargs and hgettrace() is None\n"
            "    except QUICK_ERRORS:\n        passed = False\n"
            "    if not passed:\n"
            f"        return hself.call_in_full(*[a for a in ({given},) if a is not hABSENT], *rest, **kwargs)\n"
            "    try:\n" + "".join("    " + line + "\n" for line in running.splitlines()) +
            "    except Exception as exc:\n        if hraised(exc):\n            raise exc\n        raise\n")
    exec(text, namespace)  # noqa: S102 (our own text)
    return namespace.pop("call")


# what a generated ``call`` holds for an argument a call leaves out (no argument's type is its type)
_ABSENT = object()


def _raised_from_the_code(exc: Exception) -> bool:
    """An error the generated code raised in a cached call, as ``GradientFunction.__call__`` treats
    it: named by the user's line it came from; a ``TransformError`` without our frames.  Whether the
    handler must raise it again by name (before Python 3.11, where a bare ``raise`` would put back
    the frames)."""
    name_the_users_line(exc)
    if not isinstance(exc, TransformError):
        return False
    without_our_frames(exc)
    return not BARE_RAISE_KEEPS_THE_TRIMMED_TRACEBACK


def _running(function: Callable, names: list[str], into: str, namespace: dict[str, Any],
             types: tuple = ()) -> str:
    """The lines of a generated run that call ``function`` (``hfunction``) on ``names``, starting
    ``into`` (``"return "``, ``"gradient = "``).  Where ``function`` carries ``direct`` (a one-item
    list: what a call of it comes down to once its code has compiled and run, else None; the Numba
    target's ``checked``), they call that without ``function``'s frame, and ``function`` where it is
    None or raises (which then runs it again and decides: falls back to Python, or raises the user's
    error from the Python code)."""
    call = f"({', '.join(names)})"
    direct = getattr(function, "direct", None)
    if direct is None:
        return f"    {into}hfunction{call}\n"
    namespace["hdirect"] = direct
    # (the fallback's call outside the handler: an error it raises is the user's, with no Numba error as its context)
    lines = ("    direct = hdirect[0]\n    if direct is not None:\n        try:\n"
             f"            {into}direct{call}\n        except Exception:\n            direct = None\n"
             f"    if direct is None:\n        {into}hfunction{call}\n")
    entry_slot = getattr(function, "entry_slot", None)
    found = entry_slot(types) if entry_slot is not None and into == "return " else None
    if found is None:
        return lines
    # Calls of floats alone: the compiled overload's entry point, where there is one (the Numba target's
    # ``entry_points.py``), else, or where it raises, the way above (which runs the call again and decides)
    slot, defaults = found
    namespace["hentry"] = slot
    passed = [*names, *(f"hdefault{i}" for i in range(len(defaults)))]
    namespace.update((f"hdefault{i}", value) for i, value in enumerate(defaults))
    return ("    entry = hentry[0]\n    if entry is not None:\n        try:\n"
            f"            return entry({', '.join(passed)})\n        except Exception:\n            pass\n" + lines)


def _hit_tests(owner: Callable, types: tuple, entry: Entry, arrays: Optional[tuple], args: tuple,
               namespace: dict[str, Any], names: Optional[list[str]] = None) -> list[str]:
    """The tests (expressions of ``args`` and of names put in ``namespace``) that hold only where a
    call may run ``entry``'s code: each argument of exactly the type in ``types``, the snapshot's
    quick tests passing; for a ``_by_shapes`` entry (``arrays``: its table's positions of arrays and
    of NumPy's among them) each array of the shape and NumPy's of the very dtype of ``args``'s.  Where
    the entry has no snapshot, the tests hold the code of ``owner`` (the user's function) instead:
    replaced in place, the call takes the slow path, which reads its parameters again.  (Its names
    start with ``h``, the snapshot's with ``q``; the arguments are ``args[i]``, or ``names`` where given.)"""
    tests = []
    given = names if names is not None else [f"args[{i}]" for i in range(len(types))]
    for i, t in enumerate(types):
        namespace[f"htype{i}"] = t
        tests.append(f"{given[i]}.__class__ is htype{i}")
    positions, numpy_arrays = arrays if arrays is not None else ((), ())
    for i in positions:
        namespace[f"hshape{i}"] = args[i].shape
        tests.append(f"{given[i]}.shape == hshape{i}")
        if i in numpy_arrays:  # (the very dtype object: another one equal to it takes the dictionary's look-up)
            namespace[f"hdtype{i}"] = args[i].dtype
            tests.append(f"{given[i]}.dtype is hdtype{i}")
    snapshot = entry[2]
    if snapshot is None:
        namespace.update(howner=owner, hcode=getattr(owner, "__code__", None))
        tests.append("getattr(howner, '__code__', None) is hcode")
    else:
        quick = snapshot.quick_tests(namespace, held=owner)  # (the derivative holds its function)
        if quick is None:  # (no quick tests to be made: the full check)
            namespace["hsnapshot"] = snapshot
            quick = ["hsnapshot.valid()"]
        tests += quick
    return tests


def _current(entry: Entry) -> bool:
    """Whether an entry's code may run: its quick check, else its snapshot's full one."""
    quick, snapshot = entry[1], entry[2]
    return quick is None or quick() or (snapshot is not None and snapshot.valid())


def _default_tails(signature: inspect.Signature) -> dict[int, tuple]:
    """For a function of positional parameters only (no ``*args``, ``**kwargs`` or keyword-only ones):
    for each count of positional arguments that leaves the rest to their defaults, those defaults,
    the same objects binding would fill in (``rk4(a, b, c, d)`` binds without ``Signature.bind``)."""
    params = list(signature.parameters.values())
    positional = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
    if any(p.kind not in positional for p in params):
        return {}
    tails = {}
    for count in range(len(params), -1, -1):
        if count < len(params) and params[count].default is inspect.Parameter.empty:
            break
        tails[count] = tuple(p.default for p in params[count:])
    return tails


def _unwrap(fn: Callable) -> tuple[Callable, tuple, dict]:
    """The plain function under a bound method or ``functools.partial``, with the arguments those
    fix: ``model.loss`` is ``Model.loss`` with ``model`` first."""
    prefix: tuple = ()
    fixed: dict = {}
    while True:
        if isinstance(fn, functools.partial):
            prefix, fixed, fn = fn.args + prefix, {**fn.keywords, **fixed}, fn.func
        elif inspect.ismethod(fn) and not isinstance(fn.__self__, type):
            prefix, fn = (fn.__self__,) + prefix, fn.__func__
        elif _callable_object(fn):  # grad(model): its __call__, with model as self
            prefix, fn = (fn,) + prefix, type(fn).__call__
        else:
            return fn, prefix, fixed


def spelled(fn: Any) -> str:
    """How the user most likely wrote ``fn``: ``np.sin``, ``abs``, ``scipy.special.erf``."""
    name = getattr(fn, "__name__", None) or type(fn).__name__
    module = getattr(fn, "__module__", None) or ("numpy" if isinstance(fn, np.ufunc) else None)
    if module in (None, "builtins"):
        return name
    if module == "numpy" or module.startswith("numpy."):
        return f"np.{name}" if hasattr(np, name) else f"{module.replace('numpy', 'np', 1)}.{name}"
    return f"{module}.{name}"


def refuse_what_is_not_a_def(what: str, fn: Any) -> None:
    """Refuse, where the API is given it, a function that s2s_ad cannot read the source of: a NumPy
    ufunc or function (``np.sin``, ``np.sum``), a builtin (``abs``), any callable without Python code
    of its own (after ``_unwrap``: a partial's or a bound method's function is looked at).  The error is
    a ``TransformError`` and a ``TypeError`` at once (``NotADef``), saying to wrap it in a def."""
    plain = _unwrap(fn)[0] if not made_by_s2s_ad(fn) else fn
    plain = transparent(plain)  # functools.cache(f) is f
    numpys_own = (getattr(plain, "__module__", None) or "").split(".")[0] == "numpy"  # (np.sum, a def before NumPy 1.25)
    if (isinstance(plain, (types.FunctionType, type)) and not numpys_own) \
            or made_by_s2s_ad(plain) or not callable(plain):
        return
    name = spelled(plain)
    raise NotADef(f"{what} of {name}", f"{name} ({type(plain).__name__}) is no function written with def: only "
                  f"plain Python functions defined with def can be transformed (s2s_ad reads their source); wrap it "
                  f"in one, def f(x): return {name}(x), and differentiate f")


def _callable_object(value: Any) -> bool:
    """An instance of the user's class with a ``__call__`` written in Python (not one of s2s_ad's own)."""
    call = getattr(type(value), "__call__", None)
    return (not isinstance(value, type) and inspect.isfunction(call)
            and not made_by_s2s_ad(value))


def _parameters_of(fn: Callable) -> tuple:
    """What a function's parameters and what binding fills in follow from: its code and defaults
    (the keyword-only ones as sorted items: that dict may be changed in place)."""
    keyword_defaults = getattr(fn, "__kwdefaults__", None)
    return (getattr(fn, "__code__", None), getattr(fn, "__defaults__", None),
            tuple(sorted(keyword_defaults.items())) if keyword_defaults else None)


def _resolve_wrt(fn: Callable, wrt: Wrt) -> tuple[tuple[str, ...], bool]:
    """Parameter names to differentiate by, and whether the caller gets a tuple."""
    params = list(inspect.signature(fn).parameters)
    several = isinstance(wrt, (tuple, list))
    names = []
    for item in (list(wrt) if isinstance(wrt, (tuple, list)) else [wrt]):
        if isinstance(item, bool) or not isinstance(item, (int, str)):
            raise TypeError(f"wrt must be a parameter position or name, not {item!r}")
        if isinstance(item, int):
            if not -len(params) <= item < len(params):
                raise ValueError(f"wrt={item}: {fn.__name__} has {len(params)} parameters")
            item = params[item]
        elif item not in params:
            raise ValueError(f"wrt={item!r}: {fn.__name__} has no parameter {item!r} (it has {', '.join(params)})")
        names.append(item)
    if len(set(names)) != len(names):
        raise ValueError(f"wrt names a parameter twice: {names}")
    if not names:
        raise ValueError(f"wrt={wrt!r} names no parameter: name at least one, by position or name")
    return tuple(names), several
