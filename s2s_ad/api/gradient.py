"""A gradient function (``GradientFunction``): what ``grad`` and ``value_and_grad`` return.

A gradient function binds its arguments like the user's function (defaults,
keywords), reads each argument's kind (``arguments.kinds_of``: a number, an
array and the pattern of its lengths, a string's value, a container's
structure), and calls the adjoint generated for that combination of kinds
(built on first use, then cached).  Knowing which arguments are numbers lets
the generator drop every broadcasting reduction from scalar code.

A cached call does not read the kinds again.  The kinds follow from the
arguments' types and their NumPy arrays' shapes (``kinds_of``), so calls are
found by those, with the arrays' dtypes (which a target may decide from once,
``Target.runner``): the last call's, in one generated test that also holds
the code's staleness check (``_hit_function``, ``Snapshot.quick``), then in
dictionaries keyed on them (``_by_types`` for numbers, ``_by_shapes`` for
arrays).  A test that fails only sends the call the slower way, which reads
the kinds, and the full staleness check (``Snapshot.valid``); no key is
coarser than the kinds, so a call never runs code made for other kinds.

The code a call runs returns the function's value beside the gradient only where the call uses
it (``value_and_grad``: ``_value_used``); ``grad``'s returns the gradient alone and computes only
what the gradient reads (``pipeline.build_reverse``), the self-check on or off: the code a user
reads is the code that runs either way.  The cache keys say which.

Container arguments (dicts, lists, tuples, namedtuples, dataclasses) are
flattened here to their leaves, and gradients, tangents and adjoints rebuilt
with the argument's structure (``containers.py``); bound methods and
``functools.partial`` objects are unwrapped to the plain function and the
arguments they fix.  Whole Jacobians and Hessians are built on these in
``matrices.py``, ``check_grad`` in ``gradcheck.py``.

The target whose code runs (target.py) is the gradient's own (``backend=``), except where a call's
arguments are arrays of another library (PyTorch, JAX, Dask): then that namespace's
(``array_api.target``), chosen from the arguments' types in ``_call_typed`` (the cached call of
numbers never asks), and kept with the code in the tables keyed by types.

This module holds the object and its call; its other parts are modules of their own, whose functions
the class holds as its methods: ``built_code`` (the code for given kinds, built on first use),
``code_tables`` (the tables of that code per signature, and how a call finds it there),
``container_calls`` (a call with containers or ``has_aux``), ``showing`` (``source``, ``source_for``,
the explorer's page) and ``pickling``.
"""

from __future__ import annotations

import functools
import inspect
import operator
import threading
import warnings
import weakref
from typing import TYPE_CHECKING, Any, Callable, Optional

import numpy as np

from ..core import containers
from ..core.runtime import check_one_number, one_number as _one_number
from ..core.runtime import checkpoint_caller, checkpoint_stats, clear_checkpoint_stats
from ..core.arguments import kind_of
from ..driver.cache import name_the_users_line
from ..core import debugging
from ..core.draws import Draws
from ..core.errors import CompileFallbackWarning, TransformError, place
from ..driver.pipeline import Built, build_forward
from ..targets.backends import target_of
from ..targets.target import NUMPY, Target
from ..targets.numba.target import users_stacklevel
from .auto_backend import BackendChoice, choose_backend
from .selfcheck import NoForwardMode, SelfCheckSkipped, dot_product_test, switched_on_by_environment
from .calling import (_CACHE, _compiled, _default_tails, Entry, _gettrace, _MISSED, _never_hit, _never_runs, _parameters_of, _resolve_wrt,
                      _run, _target_of_arguments, _types_of, Unfinished, _unwrap, _user_facing, without_our_frames, Wrt,
                      BARE_RAISE_KEEPS_THE_TRIMMED_TRACEBACK,
                      refuse_what_is_not_a_def)
# The parts of a GradientFunction, each a module of its own: it holds their functions as its methods.
from . import built_code, code_tables, container_calls, pickling, showing

if TYPE_CHECKING:
    from .derivative import Building, CalledWithContainers, Pickled, Shown, Tabled


class GradientFunction:
    """The gradient of a function; call it like the function itself.

    ``fn`` may itself be a gradient (``grad(grad(f))``): then this is forward
    mode over the plain function the inner gradient generates (see
    ``function_for``), to any order.
    """

    _with_value: bool
    _has_aux: bool

    def __init__(self, fn: Callable, wrt: Wrt, with_value: bool, has_aux: bool = False, check: bool = False,
                 backend: str = "python") -> None:
        if not callable(fn):
            raise TypeError(f"grad expects a function, got {type(fn).__name__}")
        if isinstance(fn, GradientFunction) and fn._with_value:
            raise TypeError("grad of value_and_grad(f) returns a pair; differentiate grad(f) instead")
        if isinstance(fn, GradientFunction) and (has_aux or fn._has_aux):
            raise TypeError("has_aux=True applies to the first derivative only; for higher derivatives "
                            "differentiate a function that returns the value alone")
        if not isinstance(fn, GradientFunction):
            refuse_what_is_not_a_def("value_and_grad" if with_value else "grad", fn)
        self._has_aux = has_aux
        # which backend runs (backend="auto": chosen by the code's shape, auto_backend.py), and why
        self.backend_chosen: BackendChoice = choose_backend(fn, backend)
        # whose code runs and checks the results (target.py); "auto"'s Numba compiles in a thread, the calls
        # running the code as Python meanwhile: no call waits for a compile (numba/background.py)
        self._target = target_of(self.backend_chosen.backend, in_background=_compiles_in_background(self.backend_chosen, fn))
        # what pickling and copying rebuild this derivative from (pickling.py)
        self._made_from = (fn, wrt, with_value, has_aux, bool(check), backend)
        fn, self._prefix, self._fixed = _unwrap(fn) if not isinstance(fn, GradientFunction) else (fn, (), {})
        self.fn = fn
        self.inner = fn if isinstance(fn, GradientFunction) else None
        self._with_value = with_value
        self._lock = threading.Lock()
        self._as_caller = weakref.ref(self)  # how checkpoint_stats names its caller: compared on every call
        # The self-check (selfcheck.py): switched on here, or for the whole program by S2S_AD_CHECK,
        # read once, now, so the hot path pays one attribute test.  Its own generator: the user's
        # np.random state is left alone.
        self._check = bool(check) or switched_on_by_environment()
        self._check_asked = bool(check)  # (not only by the environment: see _self_check)
        # Whether a call's code returns the function's value beside the gradient: for the caller
        # (value_and_grad).  Else the code returns the gradient alone (with has_aux, beside the aux),
        # and computes only what it needs; the self-check then compares the gradients alone with
        # forward mode (the value, where there is one, too), so that the code is the same either way.
        self._value_used = with_value
        self._rng = np.random.default_rng() if self._check else None
        # The generators' states before the call being checked, per thread: its forward pass replays them.
        self._draws = threading.local()
        self._read_parameters()
        functools.update_wrapper(self, fn, updated=())  # not __dict__: fn may be a gradient
        self.__name__ = f"grad_{getattr(fn, '__name__', 'f')}"

    def _read_parameters(self) -> None:
        """What follows from the parameters of the user's function and their defaults, as they are
        now, and no code yet: at the start, and again where the function's code or defaults were
        replaced in place (IPython's %autoreload does so when the file of its module is edited)."""
        fn, visible, wrt = self.fn, self._made_from[0], self._made_from[1]  # (wrt: as the caller sees them)
        try:
            self._signature = inspect.signature(fn)
        except (TypeError, ValueError):  # a builtin or ufunc without one (older NumPy)
            raise TransformError(f"{getattr(fn, '__qualname__', fn)!r} ({type(fn).__name__})",
                                 "only plain Python functions defined with def can be transformed; for a "
                                 "builtin or C function, give it a rule with @s2s_ad.adjoint") from None
        self._read_from = _parameters_of(self.owner)
        self.wrt, self._several = _resolve_wrt(visible, wrt)
        # a method or partial: every call binds, to put in what they fix (-1 never equals a count)
        self._n_params = -1 if self._prefix or self._fixed else len(self._signature.parameters)
        self._tails = _default_tails(self._signature) if self._n_params >= 0 else {}
        self._types_of = _types_of(len(self._signature.parameters))
        self._positions = [list(self._signature.parameters).index(w) for w in self.wrt]
        self._primals_of = operator.itemgetter(*self._positions)  # the argument, or a tuple of them
        # The tables of the code per signature, empty: code_tables.py fills them, and says what each holds.
        self._by_types: dict[tuple, tuple[Entry, Callable[[tuple], Any], Callable[[tuple], Any]]] = {}  # (hit, run)
        self._hit: Callable[[tuple], Any] = _never_hit  # (the hot path's first question)
        self._run_hit: Callable[[tuple], Any] = _never_runs  # (before it, for numbers: the run itself)
        self._by_shapes: dict[tuple, tuple[Callable[[tuple], tuple], dict, Target, tuple]] = {}
        self._by_kinds: dict[tuple, Built] = {}
        self._wrap_single = self._several and len(self.wrt) == 1
        self._last_source: Optional[str] = None
        self._last_kinds: Optional[tuple] = None  # (what the notebook display shows)
        self._bare = not (self._check or self._wrap_single or self._with_value)  # the call returns the gradient alone

    def _parameters_current(self) -> None:
        """Read the parameters again if the function's code or defaults are not those read."""
        if _parameters_of(self.owner) != self._read_from:
            with self._lock:
                if _parameters_of(self.owner) != self._read_from:
                    self._read_parameters()

    @property
    def key(self) -> tuple:
        """What this derivative is, for the transform cache: equal keys, equal code."""
        base = self.inner.key if self.inner is not None else (getattr(self.fn, "__code__", None),)
        return ("grad", base, self.wrt, self._several, self._wrap_single) + (("aux",) if self._has_aux else ())

    @property
    def owner(self) -> Callable:
        """The user's function this derivative is of (the cache holds it weakly)."""
        return self.inner.owner if self.inner is not None else self.fn

    # Pickled and deep-copied by reference: the user's function and the options (pickling.py)
    __reduce__ = pickling.by_reference
    __deepcopy__ = pickling.copied

    # The code for arguments of given kinds, built on first use (built_code.py)
    _adjoint = built_code.adjoint
    function_for = built_code.function_for
    check_scalar_result = built_code.check_scalar_result

    # The code a call runs, found in the tables per signature or added to them (code_tables.py)
    _specialise = code_tables.specialise
    _typed_entry = code_tables.typed_entry
    _remember_hit = code_tables.remember_hit
    checkpoint_stats_changed = code_tables.forget_hit  # (runtime: the stats counted into, or cleared for another)
    _call_with_containers = container_calls.call_with_containers  # (leaves in, structures out)

    # What it shows of its code (showing.py)
    source = property(showing.source)
    source_for = showing.source_for
    html_for = showing.html_for
    _repr_html_ = showing.repr_html
    stats = showing.stats  # what its checkpointed loops did in the last call

    def _bind(self, args: tuple, kwargs: dict) -> tuple:
        self._parameters_current()  # (defaults replaced in place: the call binds the new ones)
        if not kwargs:  # positional arguments, the rest left to their defaults: what binding would give
            tail = self._tails.get(len(args))
            if tail is not None:
                return args + tail
        bound = self._signature.bind(*self._prefix, *args, **{**self._fixed, **kwargs})
        bound.apply_defaults()
        return tuple(bound.arguments.values())

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        # (a TransformError leaves without our frames, ending at the user's call; a try costs nothing unraised)
        try:
            if _gettrace() is not None:  # a debugger stepping: its next step is the generated code
                if debugging.stepping(_gettrace()):
                    return debugging.step_into(_gettrace(), self._called, args, kwargs)
            elif not kwargs:  # numbers of the last call's types: its code run, its result returned (calling.py)
                try:
                    returned = self._run_hit(args)
                except Exception as exc:
                    name_the_users_line(exc)
                    raise
                if returned is not _MISSED:
                    # (arrays: a gradient the API does not hand over as it is comes back to be finished)
                    return returned if returned.__class__ is not Unfinished else \
                        _handed(self, returned.function, args, returned.target, None, returned.gradient)
            if kwargs or len(args) != self._n_params:
                args = self._bind(args, kwargs)
            if self._check:  # the self-check's forward pass replays the draws this call makes (draws.py)
                self._draws.current = Draws(self.owner, args)
            # The hot path: the last call's types (arrays' shapes and dtypes) and code, one generated test;
            # for numbers, else one dictionary look-up and the snapshot's quick check (no hit: stats cleared).
            function = self._hit(args)
            if function.__class__ is tuple:  # the last call's arrays' shapes and dtypes: (function, target, as_is)
                return self._ran(function[0], args, function[1], function[2])
            if function is False:
                if checkpoint_stats or checkpoint_caller[0] is not self._as_caller:
                    clear_checkpoint_stats(self, self._as_caller)
                types = self._types_of(args)
                found = self._by_types.get(types)
                if found is None or (found[0][1] is not None and not found[0][1]()):
                    return self._call_typed(args, types)
                function = found[0][0]
                code_tables.use_hit(self, found[1], found[2])
            try:  # _run, inlined: this is every cached call
                returned = function(*args)
            except Exception as exc:
                name_the_users_line(exc)
                raise
            # (no array argument (see _specialise): its gradients are numbers, nothing to copy)
            if self._bare:  # the gradient alone, the code computed no value
                return returned
            if not self._value_used:
                return _finished(self, args, None, returned)
            value, gradient = returned
            if value.__class__ is not float and not _one_number(value):
                self._refuse_result(value)
            return _finished(self, args, value, gradient)
        except TransformError as exc:
            without_our_frames(exc)
            if BARE_RAISE_KEEPS_THE_TRIMMED_TRACEBACK:
                raise
            raise exc

    call_in_full = __call__  # (where the __call__ of this object's own class does not serve: code_tables.use_hit)

    def _called(self, args: tuple, kwargs: dict) -> Any:
        """A call as ``__call__`` makes it but for its hot path (under a debugger: debugging.py)."""
        if checkpoint_stats or checkpoint_caller[0] is not self._as_caller:
            clear_checkpoint_stats(self, self._as_caller)
        if kwargs or len(args) != self._n_params:
            args = self._bind(args, kwargs)
        if self._check:
            self._draws.current = Draws(self.owner, args)
        return self._call_typed(args, self._types_of(args))

    def _call_typed(self, args: tuple, types: tuple) -> Any:
        """A call ``_by_types`` does not serve: arrays or NumPy numbers among the arguments (found
        by their types and shapes), a gradient of a gradient, containers, ``has_aux``, a first call,
        a call whose code is stale."""
        table = self._by_shapes.get(types)
        if table is not None:  # a cached call with arrays: the entry for their shapes (and NumPy's dtypes)
            found = table[1].get(table[0](args))
            if found is not None and found[0][1] is not None and found[0][1]():
                self._remember_hit(types, found[1], found[2])
                return self._ran(found[0][0], args, table[2])
        # (an entry's quick check tests the function's code: replaced, none serves, and it comes here;
        # one without a snapshot, which has no quick check, too)
        if _parameters_of(self.owner) != self._read_from:  # the code replaced: its parameters may differ
            self._parameters_current()
            if 0 <= self._n_params != len(args):  # (-1: a method or partial, which __call__ bound anew)
                args = self._bind(args, {})
            types = self._types_of(args)
        if self.inner is not None:
            if _target_of_arguments(args, types, self._target) is not self._target:
                raise TypeError(f"{self!r}: higher derivatives are taken of NumPy arrays only, not of arrays "
                                "of another library")
            built = self._specialise(args, self._target.argument_kinds(self.fn, args))
            gradient = self._target.handed_out(_run(_compiled(built.function), args), args)
            if self._check:
                _self_check(self, args, None, gradient if self._several else (gradient,))
            return (self.inner(*args), gradient) if self._with_value else gradient
        entry, kinds, target = self._typed_entry(args, types)
        if entry is None:
            return self._call_with_containers(args, kinds, target)
        return self._ran(entry[0], args, target)

    def _ran(self, function: Callable, args: tuple, target: Target, as_is: Optional[Callable] = None) -> Any:
        """What a call returns, running ``function`` (an entry's, for ``target``) on ``args``."""
        value, gradient = _run(function, args) if self._value_used else (None, _run(function, args))
        if as_is is not None and as_is(gradient):  # (_as_returned)
            return (gradient,) if self._wrap_single else gradient
        return _handed(self, function, args, target, value, gradient)

    def _refuse_result(self, value: Any) -> None:  # grad of a function whose result is not a number
        check_one_number(value, self.fn.__name__)

    def wait_compiled(self, timeout: Optional[float] = None) -> bool:
        """Wait up to ``timeout`` seconds (None: as long as it takes) for the compiles this derivative's
        calls started in the background (``backend="auto"`` choosing Numba); whether none is under way
        now.  Later calls then run the compiled code (or, where Numba could not compile it, say so)."""
        started = [getattr(built.function, "background", None) for built in list(self._by_kinds.values())]
        return all(compiling.wait(timeout) for compiling in started if compiling is not None)

    def __repr__(self) -> str:
        return f"<gradient of {getattr(self.fn, '__qualname__', self.fn)!s} with respect to {', '.join(self.wrt)}>"


if TYPE_CHECKING:
    def _meets_what_its_parts_read(gradient: GradientFunction
                                   ) -> tuple[Building, Tabled, CalledWithContainers, Shown, Pickled]:
        """(for mypy alone: a GradientFunction is what each of its parts takes, derivative.py)"""
        return gradient, gradient, gradient, gradient, gradient


def _compiles_in_background(chosen: BackendChoice, fn: Callable) -> bool:
    """Whether Numba compiles a derivative's code in a thread, the calls running it as Python meanwhile:
    where "auto" chose Numba (a first call never waits seconds for what the choice was made for), for
    the user's function (a gradient of a gradient compiles as asked)."""
    return chosen.asked == "auto" and chosen.backend == "numba" and not isinstance(fn, GradientFunction)


def _handed(derivative: GradientFunction, function: Callable, args: tuple, target: Target, value: Any,
            gradient: Any) -> Any:
    """What a call returns, from what ``function`` (for ``target``) returned on ``args``: the value
    checked to be a number, each gradient like its primal and the caller's own."""
    if derivative._value_used and value.__class__ is not float and value.__class__ is not np.float64 \
            and not _one_number(value):
        derivative._refuse_result(value)
    # gradients of their arguments' dtypes, arrays of their own
    primals = derivative._primals_of(args)
    like_primal = target.like
    gradient = tuple(map(like_primal, primals, gradient)) if len(derivative.wrt) > 1 else like_primal(primals, gradient)
    if gradient.__class__ is not float and not _surely_fresh(function, gradient) and not target.alone(gradient):
        gradient = target.handed_out(gradient, args)
    return gradient if derivative._bare else _finished(derivative, args, value, gradient, target is derivative._target)


def _finished(derivative: GradientFunction, args: tuple, value: Any, gradient: Any, numpy_arrays: bool = True) -> Any:
    """What a call returns, from the value and the gradient(s): with the value
    (``value_and_grad``), a single ``wrt`` given as a tuple, after the self-check (of NumPy's
    arrays: another library's are not checked, and a warning says so)."""
    if derivative._check and not numpy_arrays:
        warnings.warn(SelfCheckSkipped(f"the self-check of {derivative!r} compares with forward mode on NumPy "
                                       "arrays: skipped for arrays of another library"), stacklevel=4)
    elif derivative._check:
        several = derivative._several and not derivative._wrap_single
        _self_check(derivative, args, value, gradient if several else (gradient,))
    if derivative._wrap_single:
        gradient = (gradient,)
    if value.__class__ is np.ndarray:  # a 0-d array the function returned: maybe the caller's own
        value = value.copy()
    return (value, gradient) if derivative._with_value else gradient


def _self_check(gradient: GradientFunction, args: tuple, value: Any, gradients: tuple) -> None:
    """The dot-product test of a call's gradients (one per ``wrt``) against forward mode (the
    gradient-check of ``S2S_AD_CHECK=1`` or ``check=True``)."""
    code = getattr(gradient.fn, "__code__", None)
    where = f" ({place(code.co_filename, code.co_firstlineno)})" if code is not None else ""
    name = f"grad of {getattr(gradient.fn, '__qualname__', gradient.fn)}{where}"

    draws = getattr(gradient._draws, "current", None) or Draws(gradient.owner, args)
    gradient._draws.current = None

    def forward(names: tuple, values: tuple, tangents: tuple) -> tuple:
        try:
            tangent_function = _tangent_function(gradient.fn, names, values)
        except TransformError as exc:  # (a rule of the user's with an adjoint alone: no forward mode)
            if gradient._check_asked:
                raise
            raise NoForwardMode(name, exc) from None
        draws.replay()  # the draws the reverse sweep saw
        try:
            return _run(tangent_function, values + tangents)
        finally:
            draws.finish()

    try:
        rng = gradient._rng if gradient._rng is not None else np.random.default_rng()  # (set wherever _check is)
        dot_product_test(name, list(gradient._signature.parameters), args, gradient.wrt, gradients, value, forward, rng)
    except NoForwardMode as skipped:  # S2S_AD_CHECK=1 checks what it can, and breaks no program that runs
        warnings.warn(SelfCheckSkipped(str(skipped)), stacklevel=4)


def _surely_fresh(function: Callable, gradient: Any) -> bool:
    """The gradient (an array or a tuple of values) needs no copy because the code that made it returns
    only new objects of its own (``sharing.fresh_returns``, proven on the generated code) and each
    array is writable.  For the Numba target, whose arrays ``Target.alone`` cannot read (each is
    based on a memory record of Numba's), this spares comparing them with every argument."""
    if not getattr(function, "fresh_returns", False):
        return False
    if gradient.__class__ is tuple:
        for value in gradient:  # (a loop, not all() of a generator: this is every call)
            if value.__class__ is not float and not _writable_or_number(value):
                return False
        return True
    return _writable_or_number(gradient)


def _writable_or_number(value: Any) -> bool:
    flags = getattr(value, "flags", None)
    return bool(flags.writeable) if flags is not None else isinstance(value, (int, float, complex, np.generic))


def _decorator_or_call(fn: Optional[Callable], wrt: Wrt, with_value: bool, has_aux: bool, check: bool,
                       backend: str) -> Any:
    if backend != "auto":
        target_of(backend)  # (an unknown backend, or Numba missing, is said at once)
    if fn is None:
        return lambda f: GradientFunction(f, wrt, with_value, has_aux, check, backend)
    return GradientFunction(fn, wrt, with_value, has_aux, check, backend)


def _plain(fn: Callable, args: tuple) -> Callable:
    """``fn`` itself, or for a gradient the plain function it generates for such arguments."""
    if isinstance(fn, GradientFunction):
        return fn.function_for(tuple(map(kind_of, args))).function
    return fn


@_user_facing
def _tangent_function(fn: Callable, wrt: tuple[str, ...], args: tuple, target: Target = NUMPY) -> Callable:
    return _tangent_built(fn, wrt, tuple(map(kind_of, args)), target).function


@_user_facing
def _tangent_built(fn: Callable, wrt: tuple[str, ...], kinds: tuple, target: Target = NUMPY) -> Built:
    """The forward-mode code of ``fn`` (or of the plain function a gradient generates) for these kinds."""
    gradient = fn
    if isinstance(fn, GradientFunction):
        if any(isinstance(k, containers.Tree) for k in kinds):
            raise TypeError(f"forward mode over {fn!r} with containers (dict, list, tuple, dataclass) as "
                            "arguments: use s2s_ad.hessian, or pass the arrays as separate arguments")
        fn = fn.function_for(kinds, target.read_back()).function
    key = ("forward", getattr(fn, "__code__", None), wrt, kinds)
    built = _CACHE.get(fn, key, lambda: build_forward(fn, wrt, kinds, target=target), target)
    why = target.refused(built.function) if gradient is not fn else None
    if why is None:
        return built
    # Forward mode over a gradient the compiler refuses (its tape read back as tuples): the Python backend's
    # code, which the Python target's passes made for Python, runs instead of this target's run as Python.
    if built.function not in _REFUSALS_SAID:  # (said once: a Hessian asks for its tangent code at each call)
        _REFUSALS_SAID.add(built.function)
        warnings.warn(CompileFallbackWarning(
            f"backend={target.backend!r} cannot compile forward mode over {gradient!r}: {why}; the Python "
            "backend's code runs instead (the same numbers, at Python's speed)"), stacklevel=users_stacklevel())
    return _tangent_built(gradient, wrt, kinds, NUMPY)


_REFUSALS_SAID: "weakref.WeakSet[Callable]" = weakref.WeakSet()  # tangent code whose refusal was said


def _without_prefix(fn: Callable, params: list[str], args: tuple) -> tuple[Callable, list[str], tuple]:
    """For a bound method or partial: the plain function, all its parameters and arguments."""
    if isinstance(fn, GradientFunction):
        return fn, params, args
    plain, prefix, fixed = _unwrap(fn)
    if plain is fn:
        return fn, params, args
    signature = inspect.signature(plain)
    bound = signature.bind(*prefix, **{**fixed, **dict(zip(params, args))})
    bound.apply_defaults()
    return plain, list(signature.parameters), tuple(bound.arguments.values())
