"""The tables a gradient function keeps of the code built for its calls, per signature of arguments.

Input: a ``GradientFunction`` and a call's arguments (with their types), for a call its hot path did
not serve.  Output: the code for them, built on a miss (``built_code``) and remembered where the
next such call finds it first.  ``GradientFunction`` makes the tables, empty, whenever it reads its
function's parameters, and holds these functions as its methods (``_specialise``, ``_typed_entry``,
``_remember_hit``); ``calling.py`` makes the entries and the tests that pick them.

Without arrays, kinds follow from types alone: the hot path keys on types (``_by_types``).  With
arrays the shapes matter too (the code is specialised for the pattern of their lengths):
``_by_shapes`` maps the types to a function giving the arrays' shapes (``_shapes_of``), a table from
those to the entry and its hit function, the target, and the positions of arrays and of NumPy's
among them.  Containers and ``has_aux`` go through ``_by_kinds`` (the kinds of a container depend
on its contents).  ``_by_kinds`` holds ``Built`` records; ``_by_types`` and ``_by_shapes``
(function, snapshot) pairs, the snapshot None where the code reads no free name.  All are checked
against their snapshot at each call (which holds the function's code: replaced, the call takes the
slow path, which reads the parameters again).  The hot path's first question, ``_hit``: the
function of the entry the last such call ran, where this call's arguments have its types (and
arrays' shapes and dtypes) and its code is current, else False.  Before it, for calls of numbers
whose code's result is returned as it is, ``_run_hit``: the same test and the run, in one frame
(``calling._run_function``); for calls with arrays of a gradient by one argument, the test, the
run and the look that hands the gradient over as returned (``calling._run_function_of_arrays``), where
no value or self-check comes with it.
"""

from __future__ import annotations

from typing import Any, Callable, Optional

import numpy as np

from ..core import arguments, containers
from ..core.arguments import kind_of
from ..core.kinds import Array, Constant
from ..driver.cache import is_current
from ..driver.pipeline import Built
from ..driver.reach import whole_source
from ..targets.target import Target
from .calling import (_current, _entry, _hit_function, _never_hit, _never_runs, _run_function, _run_function_of_arrays,
                      _SHAPES_KEPT, _shapes_of, _target_of_arguments, Entry)
from .derivative import Tabled


def specialise(gradient: Tabled, args: tuple, kinds: Optional[tuple] = None,
               target: Optional[Target] = None) -> Built:
    """The code for a call no cached entry serves, by its kinds (read from ``args`` where not given),
    for ``target`` (this derivative's own by default); remembered by the kinds, and for a call of
    numbers alone by its types too (``_by_types``)."""
    # (every call no cached entry serves comes here first: an integer argument by wrt is never cached)
    for name, position in zip(gradient.wrt, gradient._positions):
        arguments.refuse_integer_wrt("value_and_grad" if gradient._with_value else "grad", gradient.fn, name,
                                     args[position])
    kinds = tuple(map(kind_of, args)) if kinds is None else kinds
    # (another library's arrays have NumPy's kinds: their code is kept apart by its target)
    key = kinds if target is None or target is gradient._target else (target, kinds)
    built = gradient._by_kinds.get(key)
    if built is None or not is_current(built):
        built = gradient._by_kinds[key] = gradient._adjoint(kinds, target) if gradient.inner is None \
            else gradient.function_for(kinds)
        gradient._last_source = built.source if gradient.inner is None else whole_source(built.function)
        gradient._last_kinds = kinds
    if gradient.inner is not None or key is not kinds:  # (a gradient of a gradient; another library's arrays)
        return built
    # (a string argument's value is in its kind, not in its type: those calls go through _by_kinds)
    if not gradient._has_aux and not any(isinstance(k, (containers.Tree, Array, Constant)) for k in kinds) \
            and not any(isinstance(a, np.generic) and a.dtype != np.float64 for a in args):  # those take like
        types = gradient._types_of(args)
        entry = _entry(built, gradient._target, args)
        run = _run_function(gradient.owner, types, entry) if gradient._bare and gradient._n_params == len(types) \
            else _never_runs  # (a method or partial binds its arguments first; a result to finish: _ran)
        gradient._by_types[types] = (entry, _hit_function(gradient.owner, types, entry), run)
    return built


def typed_entry(gradient: Tabled, args: tuple, types: tuple) -> tuple[Optional[Entry], tuple, Target]:
    """The ``Entry`` for a call ``_by_types`` does not serve (arrays or NumPy
    numbers among the arguments, or a stale entry), found by the types and the arrays' shapes,
    built and remembered on a miss; with the kinds where it computed them, and the target the
    code is for (the arguments' types choose it: another library's arrays run through their
    namespace, ``array_api.target``).  No entry for a call with containers or ``has_aux``:
    ``container_calls`` takes those."""
    table = gradient._by_shapes.get(types)
    if table is not None:
        found = table[1].get(table[0](args))
        if found is not None and _current(found[0]):
            remember_hit(gradient, types, found[1], found[2])
            return found[0], (), table[2]
        target = table[2]
    else:
        target = _target_of_arguments(args, types, gradient._target)
    kinds = target.argument_kinds(gradient.fn, args)
    if gradient._has_aux or any(isinstance(k, containers.Tree) for k in kinds):
        return None, kinds, target
    if gradient.inner is not None and target is not gradient._target:
        raise TypeError(f"{gradient!r}: higher derivatives are taken of NumPy arrays only, not of arrays of "
                        f"{getattr(target, 'library', target.name)}")
    entry = _entry(specialise(gradient, args, kinds, target), target, args)
    if any(isinstance(k, Constant) for k in kinds):
        return entry, kinds, target  # a string's kind is its value, not its type: no table keyed by types
    if table is None:
        arrays = tuple(i for i, k in enumerate(kinds) if isinstance(k, Array))  # whose kind is more than its type
        numpy_arrays = tuple(i for i in arrays if types[i] is np.ndarray)
        table = gradient._by_shapes[types] = (_shapes_of(arrays, numpy_arrays), {}, target, (arrays, numpy_arrays))
    if len(table[1]) >= _SHAPES_KEPT:
        table[1].clear()
    as_is = _as_returned(gradient, entry[0], args, target)
    hit = _hit_function(gradient.owner, types, entry, table[3], args, target, as_is)
    # (the test and the run in one frame, where the gradient may be handed over as returned, alone or in a
    # one-tuple: no value, no self-check; _run_function_of_arrays)
    run = _run_function_of_arrays(gradient.owner, types, entry, table[3], args, target, as_is, gradient._wrap_single) \
        if as_is is not None and gradient._n_params == len(types) else _never_runs
    table[1][table[0](args)] = (entry, hit, run)
    remember_hit(gradient, types, hit, run)
    return entry, kinds, target


def forget_hit(gradient: Tabled) -> None:
    """The checkpoints' stats are no longer as the last call left them (``runtime._stats_left``): no hit
    until the path that clears them has run."""
    use_hit(gradient, _never_hit, _never_runs)


def use_hit(gradient: Tabled, hit: Callable[[tuple], Any], run: Callable[[tuple], Any]) -> None:
    """The hot path's test and run become ``hit`` and ``run``; where ``run`` has a twin to be called
    as the gradient itself (``calling._as_call``: a cached call of a gradient of numbers), that is the
    ``__call__`` of the gradient's own class, made the first time (a subclass of its class for this
    object alone: Python looks a call's method up on the type), else its class's full ``__call__``."""
    gradient._hit, gradient._run_hit = hit, run
    call = getattr(run, "as_call", None)
    own = type(gradient)
    if call is not None and not own.__dict__.get("_of_one_object", False):
        own = type(own.__name__, (own,), {"_of_one_object": True, "__qualname__": own.__qualname__,
                                          "__module__": own.__module__, "__doc__": own.__doc__})
        object.__setattr__(gradient, "__class__", own)
    if own.__dict__.get("_of_one_object", False):
        own.__call__ = call if call is not None else own.call_in_full  # type: ignore[method-assign]


def remember_hit(gradient: Tabled, types: tuple, hit: Callable[[tuple], Any],
                 run: Callable[[tuple], Any] = _never_runs) -> None:
    """The hot path's test becomes ``hit`` (of a ``_by_shapes`` entry), and its run ``run`` (the
    entry's, where it has one), unless ``_by_types`` serves calls of these types (numbers whose
    gradients need no look: its own hit is the faster)."""
    if types not in gradient._by_types:
        use_hit(gradient, hit, run)


def _as_returned(derivative: Tabled, function: Callable, args: tuple,
                 target: Target) -> Optional[Callable[[Any], bool]]:
    """The test under which the gradient a cached call's code returns is handed over as it is,
    for calls like ``args`` (``Target.as_returned``), where there is one: a derivative returning
    the gradient by one argument, with no value and no self-check, of code that returns only
    new objects of its own (``sharing.fresh_returns``)."""
    if derivative._check or derivative._value_used or len(derivative.wrt) != 1 \
            or not getattr(function, "fresh_returns", False):
        return None
    return target.as_returned(args[derivative._positions[0]])
