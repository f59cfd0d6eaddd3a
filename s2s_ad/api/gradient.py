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
(``array_api_target``), chosen from the arguments' types in ``_call_typed`` (the cached call of
numbers never asks), and kept with the code in the tables keyed by types.
"""

from __future__ import annotations

import functools
import html
import inspect
import operator
import sys
import threading
import warnings
from typing import Any, Callable, Optional, Union

import numpy as np

from ..core import arguments, containers
from ..core.runtime import check_one_number, one_number as _one_number
from ..core.arguments import kind_of
from ..driver.cache import is_current, name_the_users_line
from ..core import debugging
from . import explorer
from ..core.draws import Draws
from ..core.errors import TransformError, place
from ..core.kinds import UNKNOWN, Array, Constant
from ..driver.higher_order import build_derivative_of, build_gradient_only, lost_outside
from ..driver.pipeline import Built, build_forward, build_reverse
from ..driver.reach import whole_source
from ..targets.backends import target_of
from ..targets.target import NUMPY, SOURCE, Target
from .selfcheck import NoForwardMode, SelfCheckSkipped, dot_product_test, switched_on_by_environment
from .calling import (_CACHE, _compiled, _current, _default_tails, Entry, _entry, _gettrace, _hit_function,
                      _never_hit, _parameters_of, _resolve_wrt, _run, _SHAPES_KEPT, _shapes_of, _target_of_arguments,
                      _types_of, _unwrap, _user_facing, without_our_frames, Wrt, BARE_RAISE_KEEPS_THE_TRIMMED_TRACEBACK,
                      refuse_what_is_not_a_def)


def _as_returned(derivative: "GradientFunction", function: Callable, args: tuple,
                 target: Target) -> Optional[Callable[[Any], bool]]:
    """The test under which the gradient a cached call's code returns is handed over as it is,
    for calls like ``args`` (``Target.as_returned``), where there is one: a derivative returning
    the gradient by one argument, with no value and no self-check, of code that returns only
    new objects of its own (``aliasing.fresh_returns``)."""
    if derivative._check or derivative._value_used or len(derivative.wrt) != 1 \
            or not getattr(function, "fresh_returns", False):
        return None
    return target.as_returned(args[derivative._positions[0]])


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
        self._target = target_of(backend)  # whose code runs and checks the results (target.py)
        # what pickling and copying rebuild this derivative from (see __reduce__)
        self._made_from = (fn, wrt, with_value, has_aux, bool(check), backend)
        fn, self._prefix, self._fixed = _unwrap(fn) if not isinstance(fn, GradientFunction) else (fn, (), {})
        self.fn = fn
        self.inner = fn if isinstance(fn, GradientFunction) else None
        self._with_value = with_value
        self._lock = threading.Lock()
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
        # Without arrays, kinds follow from types alone: the hot path keys on types.
        # With arrays the shapes matter too (the code is specialised for the pattern of their
        # lengths): _by_shapes maps the types to a function giving the arrays' shapes (_shapes_of)
        # and a table from those to the entry.  Containers and has_aux go through _by_kinds (the
        # kinds of a container depend on its contents).
        # _by_kinds holds Built records; _by_types and _by_shapes (function, snapshot) pairs, the
        # snapshot None where the code reads no free name.  All are checked against their snapshot
        # at each call (which holds the function's code: replaced, the call takes the slow path,
        # which reads the parameters again).
        self._by_types: dict[tuple, tuple[Entry, Callable[[tuple], Any]]] = {}  # (with _hit_function's)
        # The hot path's first question: the function of the _by_types entry the last such call ran,
        # where this call's arguments have its types and its code is current, else False.
        self._hit: Callable[[tuple], Any] = _never_hit
        # _by_shapes: types -> (the key function, {key: (entry, its hit function)}, target, the
        # positions of arrays and of NumPy's among them)
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

    def __reduce__(self) -> Union[str, tuple]:
        """Pickled (and deep-copied) by reference: the user's function, by its module and qualified
        name, and the options; another process builds the code again from them.  A derivative that
        is itself what its module names (``@s2s_ad.grad`` on a ``def``) is pickled as that name."""
        if _named_by_its_module(self):
            return str(getattr(self, "__qualname__"))  # (set by functools.update_wrapper)
        return (GradientFunction, self._made_from)

    def __deepcopy__(self, memo: dict) -> "GradientFunction":
        return GradientFunction(*self._made_from)

    @property
    def key(self) -> tuple:
        """What this derivative is, for the transform cache: equal keys, equal code."""
        base = self.inner.key if self.inner is not None else (getattr(self.fn, "__code__", None),)
        return ("grad", base, self.wrt, self._several, self._wrap_single) + (("aux",) if self._has_aux else ())

    @property
    def owner(self) -> Callable:
        """The user's function this derivative is of (the cache holds it weakly)."""
        return self.inner.owner if self.inner is not None else self.fn

    @_user_facing
    def _adjoint(self, kinds: tuple, target: Optional[Target] = None, with_value: Optional[bool] = None) -> Built:
        """The adjoint for arguments of these kinds, as ``target`` writes it: this derivative's own
        target for code a call runs, ``SOURCE`` for the adjoint a higher level reads back (``function_for``).
        ``with_value``: whether the code returns the function's value beside the gradient; by default,
        where a call uses it (``_value_used``).  Without it, what only the value needs is not computed;
        the cache keeps the two apart (``grad(f)`` and ``value_and_grad(f)`` share the cache)."""
        target = self._target if target is None else target
        with_value = self._value_used if with_value is None else with_value
        _refuse_constant_wrt(self.fn, self._signature, self.wrt, kinds)
        key = (getattr(self.fn, "__code__", None), self.wrt, kinds) + (("aux",) if self._has_aux else ()) \
            + (("with value",) if with_value else ())
        return _CACHE.get(self.fn, key, lambda: build_reverse(self.fn, self.wrt, kinds, has_aux=self._has_aux,
                                                              target=target, with_value=with_value), target)

    @_user_facing
    def function_for(self, kinds: tuple) -> Built:
        """This derivative as a plain generated function of the same parameters, returning
        exactly what a call returns, for arguments of these kinds.  It is valid input to
        the transformer: that is how the next order is taken."""
        params = list(self._signature.parameters)
        _refuse_constant_wrt(self.fn, self._signature, self.wrt, kinds)
        if any(isinstance(k, containers.Tree) for k in kinds):
            if self.inner is not None or self._has_aux:
                raise TypeError(f"higher derivatives of {self!r} with containers (dict, list, tuple, dataclass) "
                                "as arguments: use s2s_ad.hessian, or pass the arrays as separate arguments")
            # A function of the leaves returning the gradient's leaves (a tuple if more than one).
            adjoint = self._adjoint(kinds, SOURCE, with_value=False)  # read back by the next level: its tape in tuples
            leaf_params = list(inspect.signature(adjoint.function).parameters)[:-1]
            by = tuple(leaf_params[i] for i in arguments.leaf_positions(params, kinds, self.wrt))
            return _CACHE.get(self.owner, self.key + (kinds,), lambda: build_gradient_only(
                self.fn, adjoint, leaf_params, by, False, lost_outside(self.fn, kinds, leaf_params, by)))
        if self.inner is None:  # (no value: forward mode over it would only carry the value's tangent along)
            adjoint = self._adjoint(kinds, SOURCE, with_value=False)  # read back by the next level: its tape in tuples
            return _CACHE.get(self.owner, self.key + (kinds,), lambda: build_gradient_only(
                self.fn, adjoint, params, self.wrt, self._wrap_single,
                lost_outside(self.fn, kinds, params, self.wrt), has_aux=self._has_aux))
        self.inner.check_scalar_result(kinds)
        inner = self.inner.function_for(kinds)
        return _CACHE.get(self.owner, self.key + (kinds,), lambda: build_derivative_of(
            inner, params, kinds, self.wrt, self._several))

    def check_scalar_result(self, kinds: tuple) -> None:
        """Refuse to be differentiated by ``grad`` where the gradient is not a number."""
        params = list(self._signature.parameters)
        arrays = [w for w in self.wrt if isinstance(kinds[params.index(w)], Array)]
        if self._several or arrays:
            what = "a tuple" if self._several else f"an array (the gradient by {arrays[0]})"
            raise TypeError(f"grad of {self!r}: its result is {what}, not a number; "
                            f"use s2s_ad.hessian or s2s_ad.jacobian")

    def _specialise(self, args: tuple, kinds: Optional[tuple] = None, target: Optional[Target] = None) -> Built:
        # (every call no cached entry serves comes here first: an integer argument by wrt is never cached)
        for name, position in zip(self.wrt, self._positions):
            arguments.refuse_integer_wrt("value_and_grad" if self._with_value else "grad", self.fn, name,
                                         args[position])
        kinds = tuple(map(kind_of, args)) if kinds is None else kinds
        # (another library's arrays have NumPy's kinds: their code is kept apart by its target)
        key = kinds if target is None or target is self._target else (target, kinds)
        built = self._by_kinds.get(key)
        if built is None or not is_current(built):
            built = self._by_kinds[key] = self._adjoint(kinds, target) if self.inner is None \
                else self.function_for(kinds)
            self._last_source = built.source if self.inner is None else whole_source(built.function)
            self._last_kinds = kinds
        if self.inner is not None or key is not kinds:  # (a gradient of a gradient; another library's arrays)
            return built
        # (a string argument's value is in its kind, not in its type: those calls go through _by_kinds)
        if not self._has_aux and not any(isinstance(k, (containers.Tree, Array, Constant)) for k in kinds) \
                and not any(isinstance(a, np.generic) and a.dtype != np.float64 for a in args):  # those take like
            types = self._types_of(args)
            entry = _entry(built, self._target, args)
            self._by_types[types] = (entry, _hit_function(self.owner, types, entry))
        return built

    def _typed_entry(self, args: tuple, types: tuple) -> tuple[Optional[Entry], tuple, Target]:
        """The ``Entry`` for a call ``_by_types`` does not serve (arrays or NumPy
        numbers among the arguments, or a stale entry), found by the types and the arrays' shapes,
        built and remembered on a miss; with the kinds where it computed them, and the target the
        code is for (the arguments' types choose it: another library's arrays run through their
        namespace, ``array_api_target``).  No entry for a call with containers or ``has_aux``:
        ``_call_with_containers`` takes those."""
        table = self._by_shapes.get(types)
        if table is not None:
            found = table[1].get(table[0](args))
            if found is not None and _current(found[0]):
                self._remember_hit(types, found[1])
                return found[0], (), table[2]
            target = table[2]
        else:
            target = _target_of_arguments(args, types, self._target)
        kinds = target.argument_kinds(self.fn, args)
        if self._has_aux or any(isinstance(k, containers.Tree) for k in kinds):
            return None, kinds, target
        if self.inner is not None and target is not self._target:
            raise TypeError(f"{self!r}: higher derivatives are taken of NumPy arrays only, not of arrays of "
                            f"{getattr(target, 'library', target.name)}")
        entry = _entry(self._specialise(args, kinds, target), target, args)
        if any(isinstance(k, Constant) for k in kinds):
            return entry, kinds, target  # a string's kind is its value, not its type: no table keyed by types
        if table is None:
            arrays = tuple(i for i, k in enumerate(kinds) if isinstance(k, Array))  # whose kind is more than its type
            numpy_arrays = tuple(i for i in arrays if types[i] is np.ndarray)
            table = self._by_shapes[types] = (_shapes_of(arrays, numpy_arrays), {}, target, (arrays, numpy_arrays))
        if len(table[1]) >= _SHAPES_KEPT:
            table[1].clear()
        as_is = _as_returned(self, entry[0], args, target)
        hit = _hit_function(self.owner, types, entry, table[3], args, target, as_is)
        table[1][table[0](args)] = (entry, hit)
        self._remember_hit(types, hit)
        return entry, kinds, target

    def _remember_hit(self, types: tuple, hit: Callable[[tuple], Any]) -> None:
        """The hot path's test becomes ``hit`` (of a ``_by_shapes`` entry), unless ``_by_types`` serves
        calls of these types (numbers whose gradients need no look: its own hit is the faster)."""
        if types not in self._by_types:
            self._hit = hit

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
        # (a TransformError leaves without s2s_ad's frames: the traceback ends at the user's call; a try
        # costs nothing where nothing is raised)
        try:
            if _gettrace() is not None and debugging.stepping(_gettrace()):  # its next step: the generated code
                return debugging.step_into(_gettrace(), self._called, args, kwargs)
            if kwargs or len(args) != self._n_params:
                args = self._bind(args, kwargs)
            if self._check:  # the self-check's forward pass replays the draws this call makes (draws.py)
                self._draws.current = Draws(self.owner, args)
            # The hot path: the last call's types (arrays' shapes and dtypes) and code, one generated test;
            # for numbers, else one dictionary look-up and the snapshot's quick check.
            function = self._hit(args)
            if function.__class__ is tuple:  # the last call's arrays' shapes and dtypes: (function, target, as_is)
                return self._ran(function[0], args, function[1], function[2])
            if function is False:
                types = self._types_of(args)
                found = self._by_types.get(types)
                if found is None or (found[0][1] is not None and not found[0][1]()):
                    return self._call_typed(args, types)
                function, self._hit = found[0][0], found[1]
            try:  # _run, inlined: this is every cached call
                returned = function(*args)
            except Exception as exc:
                name_the_users_line(exc)
                raise
            # (no array argument (see _specialise): its gradients are numbers, nothing to copy)
            if self._bare:  # the gradient alone, the code computed no value
                return returned
            if not self._value_used:
                return self._finish(args, None, returned)
            value, gradient = returned
            if value.__class__ is not float and not _one_number(value):
                self._refuse_result(value)
            return self._finish(args, value, gradient)
        except TransformError as exc:
            without_our_frames(exc)
            if BARE_RAISE_KEEPS_THE_TRIMMED_TRACEBACK:
                raise
            raise exc

    def _called(self, args: tuple, kwargs: dict) -> Any:
        """A call, as ``__call__`` makes it but for its hot path (the generated code is called by
        ``_run`` alone: under a debugger, see debugging.py)."""
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
                self._remember_hit(types, found[1])
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
        if self._value_used and value.__class__ is not float and value.__class__ is not np.float64 \
                and not _one_number(value):
            self._refuse_result(value)
        # gradients of their arguments' dtypes, arrays of their own
        primals = self._primals_of(args)
        like_primal = target.like
        gradient = tuple(map(like_primal, primals, gradient)) if len(self.wrt) > 1 else like_primal(primals, gradient)
        if gradient.__class__ is not float and not _surely_fresh(function, gradient) and not target.alone(gradient):
            gradient = target.handed_out(gradient, args)
        return gradient if self._bare else self._finish(args, value, gradient, target is self._target)

    def _refuse_result(self, value: Any) -> None:  # grad of a function whose result is not a number
        check_one_number(value, self.fn.__name__)

    def _finish(self, args: tuple, value: Any, gradient: Any, numpy_arrays: bool = True) -> Any:
        """What a call returns, from the value and the gradient(s): with the value
        (``value_and_grad``), a single ``wrt`` given as a tuple, after the self-check (of NumPy's
        arrays: another library's are not checked, and a warning says so)."""
        if self._check and not numpy_arrays:
            warnings.warn(SelfCheckSkipped(f"the self-check of {self!r} compares with forward mode on NumPy arrays: "
                                           "skipped for arrays of another library"), stacklevel=4)
        elif self._check:
            _self_check(self, args, value, gradient if self._several and not self._wrap_single else (gradient,))
        if self._wrap_single:
            gradient = (gradient,)
        if value.__class__ is np.ndarray:  # a 0-d array the function returned: maybe the caller's own
            value = value.copy()
        return (value, gradient) if self._with_value else gradient

    def _call_with_containers(self, args: tuple, kinds: tuple, target: Optional[Target] = None) -> Any:
        """A call with container arguments or ``has_aux``: leaves in, the gradient rebuilt with the
        structure of each argument differentiated (for ``target``, this derivative's own by default)."""
        target = self._target if target is None else target
        built = self._specialise(args, kinds, target)
        leaves = arguments.flat(args, kinds)
        loss, aux_leaves, gradient = _parts_returned(_run(_compiled(built.function), leaves), self._value_used,
                                                     self._has_aux)
        aux_leaves = _owned_outputs(target, built.function, tuple(aux_leaves), leaves)
        held = leaves + tuple(aux_leaves)  # what the gradients must not share memory with: every leaf in, the aux out
        aux = containers.unflatten(built.aux_tree, aux_leaves) if self._has_aux else None
        if self._value_used and loss.__class__ is not float and np.ndim(loss) != 0:
            self._refuse_result(loss)
        if loss.__class__ is np.ndarray:  # a 0-d array the function returned: maybe the caller's own
            loss = loss.copy()
        params = list(self._signature.parameters)
        by = [kinds[params.index(w)] for w in self.wrt]
        primals = arguments.flat(tuple(args[params.index(w)] for w in self.wrt), tuple(by))
        flat = (gradient,) if len(primals) == 1 else tuple(gradient)
        gradients = arguments.regroup(target.handed_out(tuple(map(target.like, primals, flat)), held), by)
        gradient = tuple(gradients) if self._several else gradients[0]
        if self._with_value:
            return ((loss, aux) if self._has_aux else loss), gradient
        return (gradient, aux) if self._has_aux else gradient

    @property
    @_user_facing
    def source(self) -> str:
        """The adjoint's source: the one the last call ran, or before any call the generic one."""
        if self._last_source is None:
            self._last_source = self._source_of((UNKNOWN,) * len(self._signature.parameters))
        return self._last_source

    @_user_facing
    def source_for(self, *args: Any, **kwargs: Any) -> str:
        """The adjoint's source specialised for these arguments (nothing is run).  A higher
        derivative shows every generated module it runs: the wrapper, forward mode over the order
        below, and the tangents of the adjoints of the helpers and of their tapes.  For arrays of
        another library, the code that runs through its namespace (``xp``)."""
        args = self._bind(args, kwargs)
        target = _target_of_arguments(args, tuple(map(type, args)), self._target)
        return self._source_of(target.argument_kinds(self.fn, args), target)

    def _source_of(self, kinds: tuple, target: Optional[Target] = None) -> str:
        if self.inner is None:
            return self._adjoint(kinds, target).source
        return whole_source(self.function_for(kinds).function)

    @_user_facing
    def html_for(self, *args: Any, **kwargs: Any) -> str:
        """The derivative explorer's page (explorer.py) for the code a call with these arguments runs."""
        return _page(self, self._target.argument_kinds(self.fn, self._bind(args, kwargs)))

    def _repr_html_(self) -> str:
        """A notebook's display: the explorer's page for the code the last call ran (before any call,
        for arguments of unknown kinds); for a function s2s_ad refuses, why."""
        try:
            return _page(self, self._last_kinds or (UNKNOWN,) * len(self._signature.parameters))
        except TransformError as exc:
            return f"<pre>{html.escape(f'{self!r}: {exc}')}</pre>"

    def __repr__(self) -> str:
        return f"<gradient of {getattr(self.fn, '__qualname__', self.fn)!s} with respect to {', '.join(self.wrt)}>"


def _owned_outputs(target: Target, function: Optional[Callable], values: Any, held: tuple) -> Any:
    """``values`` (an aux's leaves, ``jvp``'s primal output: a value, or a tuple or list of them) as
    the caller gets them, sharing memory with nothing the caller holds (docs/api.md): not only the
    arguments in ``held`` but a module-level array the function returned, and what an earlier call
    returned.  Copied unless the code that made them returns only new objects of its own
    (``aliasing.fresh_returns``); then compared with ``held`` alone.  Arrays that cannot be written
    (JAX's) are never copied: nothing can see them shared."""
    if getattr(function, "fresh_returns", False) or getattr(target, "memory", None) == "immutable":
        return target.handed_out(values, held)
    return target.handed_out(values, held, copy_all=True)


def _parts_returned(returned: Any, with_value: bool, has_aux: bool) -> tuple[Any, tuple, Any]:
    """The value (None where the code returns none), the aux's leaves (empty without ``has_aux``) and
    the gradient, of what an adjoint returned: the gradient, beside it the value, the aux's leaves,
    or both as a pair (``pipeline.build_reverse``)."""
    if not (with_value or has_aux):
        return None, (), returned
    beside, gradient = returned
    if with_value and has_aux:
        return beside[0], tuple(beside[1]), gradient
    return (beside, (), gradient) if with_value else (None, tuple(beside), gradient)


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


def _page(gradient: GradientFunction, kinds: tuple) -> str:
    """The derivative explorer's page (explorer.py) for the code ``gradient`` runs for ``kinds``."""
    first, by = gradient, []
    while first.inner is not None:
        by.append(first.wrt)
        first = first.inner
    by.append(first.wrt)
    entry = gradient._adjoint(kinds).function if gradient.inner is None else gradient.function_for(kinds).function
    title = " ".join(f"∂/∂{','.join(w)}" for w in by) + f" {getattr(first.fn, '__name__', first.fn)}"
    return explorer.page_for(first.fn, [entry], first.wrt, kinds, title)


def _named_by_its_module(obj: Any) -> bool:
    """``obj`` is what its module calls it by its qualified name (a decorated ``def``)."""
    module = sys.modules.get(getattr(obj, "__module__", None) or "")
    found: Any = module
    for part in (getattr(obj, "__qualname__", "") or "<none>").split("."):
        found = getattr(found, part, None)
    return found is obj


def _refuse_constant_wrt(fn: Callable, signature: inspect.Signature, wrt: tuple, kinds: tuple) -> None:
    """Refuse to differentiate by a string, None or function argument: the code is specialised on its value
    (a static argument), so it has no derivative; a zero would be made up (checked when the
    code for these kinds is built, so never on the hot path)."""
    params = list(signature.parameters)
    for w in wrt:
        kind = kinds[params.index(w)]
        if isinstance(kind, Constant):
            value = kind.value
            what = 'None' if value is None else 'a string' if isinstance(value, str) else 'a function'
            raise TypeError(f"grad of {getattr(fn, '__name__', fn)!r} with respect to {w}: "
                            f"{w} = {value!r} is {what}, which has no "
                            f"derivative (the code is specialised on its value); differentiate with respect "
                            f"to a float argument (wrt=...)")


def _surely_fresh(function: Callable, gradient: Any) -> bool:
    """The gradient (an array or a tuple of values) needs no copy because the code that made it returns
    only new objects of its own (``aliasing.fresh_returns``, proven on the generated code) and each
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
    if isinstance(fn, GradientFunction):
        if any(isinstance(k, containers.Tree) for k in kinds):
            raise TypeError(f"forward mode over {fn!r} with containers (dict, list, tuple, dataclass) as "
                            "arguments: use s2s_ad.hessian, or pass the arrays as separate arguments")
        fn = fn.function_for(kinds).function
    key = ("forward", getattr(fn, "__code__", None), wrt, kinds)
    return _CACHE.get(fn, key, lambda: build_forward(fn, wrt, kinds, target=target), target)


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
