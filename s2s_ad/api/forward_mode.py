"""``jvp``: forward mode, the value of a function and its derivative along a direction.

Input: the function, its primals and one tangent per primal (containers' tangents with the
primal's structure).  Output: the value and the tangent of the result, from the tangent code the
driver builds (``build_forward``), cached like a gradient's; over a gradient function, forward mode
over the plain function it generates (a Hessian-vector product).
"""

from __future__ import annotations

import inspect
from types import FunctionType
from typing import Any, Callable, Sequence

import numpy as np

from ..core import arguments, containers
from ..driver.pipeline import build_forward, leaf_kinds
from ..targets.backends import target_of
from .auto_backend import choose_backend
from ..targets.target import NUMPY, Target
from .calling import _CACHE, _run, _TARGET, _target_of_arguments, _user_facing, refuse_what_is_not_a_def
from .container_calls import owned_outputs
from .batched import batched_sweep, direction, stacked
from .gradient import GradientFunction, _tangent_built, _without_prefix


def _bound_primals(fn: Callable, primals: Sequence[Any]) -> tuple[list[str], tuple]:
    """Parameter names and the full argument tuple (defaults filled in) for positional primals."""
    if not isinstance(primals, (tuple, list)):
        raise TypeError(f"primals must be a tuple of arguments, not {type(primals).__name__}")
    plain = _plainly_bound(fn, primals)
    if plain is not None:
        return plain
    signature = inspect.signature(fn)
    try:
        bound = signature.bind(*primals)
    except TypeError as exc:
        raise TypeError(f"the primals do not fit {fn.__name__}{signature}: {exc}") from None
    bound.apply_defaults()
    return list(signature.parameters), tuple(bound.arguments.values())


# a code object's flags for ``*args`` and ``**kwargs`` (the ``inspect`` module's CO_VARARGS, CO_VARKEYWORDS)
_STARRED = inspect.CO_VARARGS | inspect.CO_VARKEYWORDS


def _plainly_bound(fn: Callable, primals: Sequence[Any]) -> "tuple[list[str], tuple] | None":
    """``_bound_primals`` of a plain function read from its code object, without building a signature
    (``inspect.signature`` costs about 15 us, more than a compiled pendulum's forward sweep): where ``fn``
    is a ``def`` with no starred or keyword-only parameters and no ``__wrapped__`` or ``__signature__``
    (which ``inspect.signature`` follows), given between its required and all its positional parameters.
    None elsewhere: the signature decides (and words a mismatch)."""
    if type(fn) is not FunctionType or "__wrapped__" in fn.__dict__ or "__signature__" in fn.__dict__:
        return None
    code = fn.__code__
    count = code.co_argcount
    defaults = fn.__defaults__ or ()
    if code.co_flags & _STARRED or code.co_kwonlyargcount or not count - len(defaults) <= len(primals) <= count:
        return None
    filled = tuple(primals) + defaults[len(defaults) - (count - len(primals)):] if len(primals) < count \
        else tuple(primals)
    return list(code.co_varnames[:count]), filled


_check_tangent = arguments.checked_tangent


def _leaf_tangents(fn: Callable, name: str, primal: Any, tangent: Any, kind: Any) -> list:
    """The tangents of a container argument's leaves (zero where a leaf carries no derivative)."""
    primals = containers.leaves(primal, kind)
    try:
        tangents = [None] * len(primals) if tangent is None else containers.leaves(tangent, kind)
    except ValueError as exc:
        raise ValueError(f"jvp of {fn.__name__}: the tangent of {name} must have its structure: {exc}") from None
    checked = [_check_tangent(fn, name, p, t) for p, t in zip(primals, tangents)]
    return [np.zeros(np.shape(p)) if c is None and isinstance(p, np.ndarray) else 0.0 if c is None else c
            for p, c in zip(primals, checked)]


@_user_facing
def jvp(fn: Callable, primals: Sequence[Any], tangents: Sequence[Any], backend: str = "python",
        batched: bool = False) -> tuple[Any, Any]:
    """Forward mode: the value of ``fn`` and its derivative along a direction (docs/api.md).

    The tangent code runs each statement of ``fn`` followed by its tangent; no tape.

    Parameters
    ----------
    fn : callable
        A function whose source can be read (or a gradient, for forward over reverse).
    primals : tuple or list
        The arguments of ``fn``.
    tangents : tuple or list
        One per primal, of the primal's shape and structure (never broadcast);
        ``None`` or zero for an argument that is not a float (an integer, a boolean, a
        string).
    backend : {"python", "numba", "auto"}, default "python"
        As for ``grad``: ``"numba"`` compiles the tangent code.
    batched : bool, default False
        Vector mode: each tangent carries a leading axis of ``p`` directions, shaped
        ``(p,) + primal shape`` (a container's, each leaf), and one sweep of the tangent code
        pushes them all (``batched.py``; under ``backend="numba"``, the compiled vector tangent code).
        Where the code has an operation with no batched form, one sweep per direction, with the same
        numbers.

    Returns
    -------
    tuple
        ``(fn(*primals), derivative of fn along tangents)``, the second of the
        result's shape and structure (with ``batched``, a leading axis of ``p`` directions).

    Raises
    ------
    ValueError
        Not one tangent per primal; a tangent's shape differs from its primal's; a
        nonzero tangent for an argument that is not a float.
    TransformError
        ``fn`` cannot be differentiated.
    """
    refuse_what_is_not_a_def("jvp", fn)
    backend = choose_backend(fn, backend, "jvp").backend
    if batched:
        return _batched_jvp(fn, primals, tangents, backend)
    target = target_of(backend)
    params, args = _bound_primals(fn, primals)
    if not isinstance(tangents, (tuple, list)) or len(tangents) != len(primals):
        raise ValueError(f"jvp of {fn.__name__}: give one tangent per primal "
                         f"({len(primals)} primals, {len(tangents) if isinstance(tangents, (tuple, list)) else 'no tuple of'} tangents)")
    given = dict(zip(params, tangents))  # by name: a method's self or a default has none
    fn, params, args = _without_prefix(fn, params, args)
    asked, target = target, _target_of_arguments(args, tuple(map(type, args)), target)  # (another library's arrays: theirs)
    if target is not asked and isinstance(fn, GradientFunction):
        raise TypeError(f"jvp of {fn!r}: higher derivatives are taken of NumPy arrays only, not of arrays of "
                        f"{getattr(target, 'library', target.name)}")
    check_tangent: Callable[..., Any] = getattr(target, "check_tangent", _check_tangent)  # (another library's)
    kinds = target.argument_kinds(fn, args)
    wrt, tangent_args = [], []
    for p, a, k in zip(params, args, kinds):
        if p not in given:
            continue
        t = given[p]
        if t is None:
            continue
        checked = _leaf_tangents(fn, p, a, t, k) if isinstance(k, containers.Tree) else [check_tangent(fn, p, a, t)]
        if checked and checked[0] is not None:
            wrt.append(p)
            tangent_args += checked
    if isinstance(fn, GradientFunction) and any(isinstance(k, containers.Tree) for k in kinds):
        return _gradient_jvp_by_leaf(fn, params, args, kinds, wrt, tuple(tangent_args))
    built = _tangent_built(fn, tuple(wrt), kinds, target)
    out, t_out = _run(built.function, arguments.flat(args, kinds) + tuple(tangent_args))
    out = owned_outputs(target, built.function, out, args + tuple(tangent_args))
    if built.result_tree is not None:
        t_out = target.handed_out(t_out, args + tuple(tangent_args) + tuple(out))
        return containers.unflatten(built.result_tree, out), containers.unflatten(built.result_tree, t_out)
    if not target.alone(t_out):  # (as grad's gradients: see Target.alone)
        t_out = target.handed_out(t_out, args + tuple(tangent_args) + (out,))
    return out, t_out


def _batched_jvp(fn: Callable, primals: Sequence[Any], tangents: Sequence[Any], backend: str) -> tuple[Any, Any]:
    """``jvp(..., batched=True)``: one sweep of the tangent code for all directions where it has a batched
    form, else one ``jvp`` per direction.  A container's tangent has its structure, each leaf with the
    leading axis of directions."""
    params, args = _bound_primals(fn, primals)
    if not isinstance(tangents, (tuple, list)) or len(tangents) != len(primals):
        raise ValueError(f"jvp of {fn.__name__}: give one tangent per primal")
    counts = set()
    for name, primal, tangent in zip(params, primals, tangents):
        if tangent is None:
            continue
        structure = containers.structure_of(primal)
        if isinstance(structure, containers.Tree):
            try:
                pairs = list(zip(containers.leaves(primal, structure), containers.leaves(tangent, structure)))
            except ValueError as exc:
                raise ValueError(f"jvp of {fn.__name__} with batched=True: the tangent of {name} must have its "
                                 f"structure, each leaf with a leading axis of directions: {exc}") from None
        elif not isinstance(primal, (np.ndarray, float, int, np.number)):
            raise ValueError(f"jvp of {fn.__name__} with batched=True: {name} is a {type(primal).__name__}; "
                             "batched tangents are arrays of directions of arrays and numbers, or containers "
                             "(dict, list, tuple, dataclass) of them (call jvp once per direction for others)")
        else:
            pairs = [(primal, tangent)]
        for leaf, t in pairs:
            if np.ndim(t) != np.ndim(leaf) + 1 or np.shape(t)[1:] != np.shape(leaf):
                raise ValueError(f"jvp of {fn.__name__} with batched=True: the tangent of {name} (or of a leaf "
                                 f"of it) must be shaped (directions,) + {np.shape(leaf)}, not {np.shape(t)}")
            counts.add(np.shape(t)[0])
    if len(counts) != 1:
        raise ValueError(f"jvp of {fn.__name__} with batched=True: give tangents with one number of directions "
                         f"(a leading axis), not {sorted(counts) or 'none'}")
    count = counts.pop()
    if count == 0:
        raise ValueError(f"jvp of {fn.__name__} with batched=True: no directions (a leading axis of 0)")
    swept = _one_sweep(fn, params, args, dict(zip(params, tangents)), count, target_of(backend))
    if swept is not None:
        return swept
    each = [jvp(fn, primals, [None if t is None else direction(t, d) for t in tangents], backend)
            for d in range(count)]
    return each[0][0], stacked([t for _, t in each])


def _one_sweep(fn: Callable, params: list[str], args: tuple, given: dict, count: int, target: Target) -> Any:
    """The batched jvp from one sweep of the vector tangent code (``Target.vector_sweep``), on the Python
    backend else of the tangent code with its tangents wrapped (``batched.batched_sweep``); or None where
    it has no batched form."""
    fn, params, args = _without_prefix(fn, params, args)
    if _target_of_arguments(args, tuple(map(type, args)), target) is not target:
        return None
    kinds = target.argument_kinds(fn, args)
    if isinstance(fn, GradientFunction) and any(isinstance(k, containers.Tree) for k in kinds):
        return None  # (forward over the gradient by leaf: one direction at a time)
    wrt, data = [], []
    for p, a, k in zip(params, args, kinds):
        if given.get(p) is None:
            continue
        if isinstance(k, containers.Tree):  # each leaf's directions; a leaf with no derivative, zeros
            data += [t if arguments.differentiable(leaf) else np.zeros((count,) + np.shape(leaf))
                     for leaf, t in zip(containers.leaves(a, k), containers.leaves(given[p], k))]
        elif arguments.differentiable(a):
            data.append(given[p])
        else:
            return None  # (jvp says what is wrong with it)
        wrt.append(p)
    built = _tangent_built(fn, tuple(wrt), kinds, target)
    values = arguments.flat(args, kinds)
    # (a compiler's seeds as float64 arrays, as its tangent code's are; the Python backend's as given, its
    # vector code taking float64 only: other tangents keep their dtype, wrapped at run time)
    seeds = list(data) if target is NUMPY else [np.asarray(t, dtype=np.float64) for t in data]
    swept = target.vector_sweep(built.function, values, seeds)
    if swept is None and target is NUMPY:
        swept = batched_sweep(built.function, values, tuple(data), count)
    if swept is None:
        return None
    out, t_out = owned_outputs(target, built.function, swept[0], args), swept[1]
    if built.result_tree is not None:
        return containers.unflatten(built.result_tree, out), containers.unflatten(built.result_tree, t_out)
    return out, t_out


def _gradient_jvp_by_leaf(gradient: "GradientFunction", params: list[str], args: tuple, kinds: tuple,
                          wrt: list[str], tangents: tuple) -> tuple[Any, Any]:
    """``jvp(grad(f), ...)`` with container arguments (a Hessian-vector product): forward mode over the
    gradient as a plain function of the leaves (``function_for``), its leaves put back in the
    structure a call of the gradient returns."""
    if gradient._with_value or gradient._has_aux or gradient.inner is not None:
        raise TypeError(f"forward mode over {gradient!r} with containers (dict, list, tuple, dataclass) as "
                        "arguments: take it over s2s_ad.grad(f) (no value, no aux), or use s2s_ad.hessian")
    plain = gradient.function_for(kinds).function
    names = list(inspect.signature(plain).parameters)
    by = tuple(names[i] for i in arguments.leaf_positions(params, kinds, wrt))
    flat_kinds = leaf_kinds(kinds)
    tangent = _CACHE.get(plain, ("forward", plain.__code__, by, flat_kinds),
                         lambda: build_forward(plain, by, flat_kinds, target=_TARGET), _TARGET).function
    out, t_out = _run(tangent, arguments.flat(args, kinds) + tangents)

    def rebuild(leaves: Any) -> Any:
        leaves = list(leaves) if len(arguments.leaf_positions(params, kinds, gradient.wrt)) > 1 else [leaves]
        parts = []
        for w in gradient.wrt:
            kind = kinds[params.index(w)]
            count = containers.count(kind) if isinstance(kind, containers.Tree) else 1
            mine, leaves = leaves[:count], leaves[count:]
            parts.append(containers.unflatten(kind, mine) if isinstance(kind, containers.Tree) else mine[0])
        return tuple(parts) if gradient._several else parts[0]

    return rebuild(out), rebuild(t_out)
