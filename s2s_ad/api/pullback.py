"""``vjp``: the value of a function and a pullback, which maps a cotangent of the result to
cotangents of the arguments.

Input: the function and its primals, copied when ``vjp`` is called (as JAX does: changing an
argument afterwards changes no pullback).  Output: the value and a ``Pullback`` (picklable), which
runs the split adjoint's reverse part on the tape its forward part recorded.
"""

from __future__ import annotations

import copy
import warnings
from types import FunctionType
from typing import Any, Callable, Optional, Sequence

import numpy as np

from ..core import arguments, containers
from ..core.arguments import like
from ..core.draws import NO_DRAWS, Draws, NoDraws
from ..core.errors import CompileFallbackWarning
from ..core.kinds import Constant
from ..driver.pipeline import build_split, check_lost_arguments, may_draw_globally
from ..targets.backends import target_of
from .auto_backend import choose_backend
from ..targets.target import NUMPY, Target
from ..targets.numba.target import users_stacklevel
from .calling import _compiled, numpy_arrays_only, _run, _TARGET, _user_facing, refuse_what_is_not_a_def
from .gradient import GradientFunction, _without_prefix
from .forward_mode import _bound_primals
from .batched import batched_pullback, stacked


@_user_facing
def vjp(fn: Callable, *primals: Any, backend: str = "python") -> tuple[Any, Callable]:
    """Reverse mode: the value of ``fn`` and a function pulling cotangents back (docs/api.md).

    The forward sweep runs once, here; each call of ``vjp_fn`` runs the reverse sweep
    alone, so pulling back many cotangents costs one sweep each (where ``fn`` writes
    into arrays, the reverse sweep puts the overwritten slices back as it goes: calls
    after the first run the forward sweep again).

    Parameters
    ----------
    fn : callable
        A function whose source can be read; not a gradient (reverse over reverse is
        not done).
    *primals
        The arguments of ``fn``.
    backend : {"python", "numba", "auto"}, default "python"
        Keyword only.  Under ``"numba"`` the split form's two parts (the forward sweep here,
        the reverse sweep at each ``vjp_fn`` call) compile apart, the tape handed from one to
        the other as a tuple of arrays, where every value a loop records is proven a float64
        recorded in a ``for`` loop over a range with no inner loop; elsewhere the Python
        backend's parts run, a ``CompileFallbackWarning`` says so (under ``"auto"``, nothing).

    Returns
    -------
    tuple
        ``(fn(*primals), vjp_fn)``.  ``vjp_fn(cotangent)``, the cotangent of the result's
        shape and structure, returns a tuple with one adjoint per primal, each of its
        primal's type and shape (``None`` for a string or ``None`` primal).
        ``vjp_fn(cotangents, batched=True)``: each leaf of ``cotangents`` with a leading axis
        of ``p`` directions, pulled back by one reverse sweep (one per direction where an
        operation has no batched form); each adjoint gets the leading axis.

    Raises
    ------
    TypeError
        ``fn`` is a gradient: use ``jvp`` of the gradient, or ``hessian``.
    TransformError
        ``fn`` cannot be differentiated.
    """
    refuse_what_is_not_a_def("vjp", fn)
    chosen = choose_backend(fn, backend, "vjp")
    return _pullback(fn, primals, None, target=target_of(chosen.backend), warn=chosen.asked != "auto")


def _split_form_fallback(fn: Callable, target: Target) -> Warning:
    """The warning of a vjp asked of a compiling backend whose parts it could not emit apart: its split
    form runs as Python."""
    return CompileFallbackWarning(
        f"vjp of {getattr(fn, '__qualname__', fn)} with backend={target.backend!r}: the split form (a tape handed "
        "from the forward sweep to each vjp_fn call) runs as Python (the same numbers): it compiles where each "
        "value a loop records is proven a float64 and each such loop is a for over a range with no inner "
        "loop; grad and value_and_grad compile the rest")


def _pullback(fn: Callable, primals: Sequence[Any], wrt: Optional[Sequence[str]],
              keep: bool = True, target: Target = NUMPY, warn: bool = True) -> tuple[Any, "Pullback"]:
    """``vjp``, its derivatives wanted by the parameters ``wrt`` alone (all the primals where None):
    only those are refused where a rule inside would lose their derivative (a constant ``c`` beside
    them, or a default, may reach ``np.pad(a, 1, constant_values=c)``).  With ``keep`` the pullback
    holds copies of ``fn`` and ``primals`` (``_kept``); without, the caller promises not to change
    them while it uses the pullback (``jacobian``'s rows, pulled back at once).  A ``target`` other than
    NumPy's runs the parts where it can emit them apart (``Target.handed_split``), else the Python
    backend's parts run, said in a warning where ``warn``."""
    if isinstance(fn, GradientFunction):
        raise TypeError("vjp of a gradient would be reverse over reverse, which s2s_ad does not do; "
                        "use s2s_ad.jvp of the gradient, or s2s_ad.hessian (forward over reverse)")
    numpy_arrays_only(f"vjp of {getattr(fn, '__qualname__', fn)}", primals)
    if keep:
        fn, primals = _kept(fn, tuple(primals))
    original = fn
    params, args = _bound_primals(fn, primals)
    visible = params[:len(primals)]
    fn, params, args = _without_prefix(fn, params, args)
    kinds = _TARGET.argument_kinds(fn, args)
    split = build_split(fn, kinds, target, api=target is not NUMPY)
    if not split.handed and target is not NUMPY:  # the Python backend's parts, which its passes made for Python
        if warn:
            warnings.warn(_split_form_fallback(original, target), stacklevel=users_stacklevel())
        target = NUMPY
        split = build_split(fn, kinds, target)
    flat_args = arguments.flat(args, kinds)
    wanted = set(arguments.leaf_positions(params, kinds, visible if wrt is None else wrt))
    # every argument wanted is differentiated: a float one whose derivative a rule loses is refused
    check_lost_arguments(split, tuple(a if i in wanted else None for i, a in enumerate(flat_args)))
    # a forward part run again (below) replays the draws; not read where no pass can draw
    draws = Draws(fn, args) if not isinstance(fn, FunctionType) or may_draw_globally(fn) else NO_DRAWS
    out, tape = _run(_compiled(split.forward), flat_args + (target.tape().empty(),))
    # The backward part puts back what the forward part overwrote, in arrays the result may be, and
    # the tape keeps referring to them: the caller gets arrays of its own.
    out = _TARGET.handed_out(out, args, copy_all=True)
    tree = split.result_tree
    result = containers.unflatten(tree, out) if tree is not None else out
    positions = [params.index(p) for p in visible]
    pullback = Pullback(split, kinds, args, flat_args, out, tape, tree, result, positions, draws,
                        made_from=(original, tuple(primals), None if wrt is None else tuple(wrt)), target=target)
    return result, pullback


def _kept(fn: Callable, primals: tuple) -> tuple[Callable, tuple]:
    """``fn`` and ``primals`` as a pullback keeps them: copies of the caller's objects, arrays
    included (a bound method's instance, a partial's arguments too), so that changing them after
    ``vjp`` returned (``x -= lr * g``, a buffer filled again) changes nothing a ``vjp_fn`` call or
    a pickled one reads: JAX's behaviour (docs/api.md, vjp).  ``deepcopy`` keeps one copy of an
    object given twice.  Where an argument cannot be deep-copied (it holds a module, a lock), its
    arrays and those of the lists, tuples and dicts holding them are copied."""
    if type(fn) is FunctionType and all(type(p) in _ATOMS or _plain_array(p) for p in primals):
        copies: dict[int, np.ndarray] = {}  # an array given twice is copied once, as deepcopy does
        for p in primals:
            if type(p) is np.ndarray and id(p) not in copies:
                copies[id(p)] = p.copy(order="K")  # its layout kept, as deepcopy keeps it
        return fn, tuple(copies.get(id(p), p) for p in primals)
    try:
        return copy.deepcopy((fn, primals))
    except Exception:  # (whatever an object's __deepcopy__ or __reduce_ex__ raises)
        return fn, tuple(_arrays_copied(p) for p in primals)


# what deepcopy hands back as it is (a plain function, too: ``copy`` treats functions as atoms)
_ATOMS = frozenset((float, int, bool, complex, str, type(None)))


def _plain_array(value: Any) -> bool:
    """A NumPy array of numbers (not of objects, which deepcopy copies one by one)."""
    return type(value) is np.ndarray and value.dtype.kind != "O"


def _arrays_copied(value: Any) -> Any:
    """``value`` with its NumPy arrays copied, in the lists, tuples and dicts that hold them."""
    if isinstance(value, np.ndarray):
        return value.copy()
    if type(value) in (list, tuple):
        return type(value)(_arrays_copied(v) for v in value)
    if type(value) is dict:
        return {k: _arrays_copied(v) for k, v in value.items()}
    return value


class Pullback:
    """``vjp_fn`` of ``vjp``: each call runs the reverse sweep alone on the tape the forward sweep
    left.  It pickles by reference, as the user's function and primals: another process runs the
    forward sweep again (refused where that sweep drew random numbers: the draws would differ)."""

    def __init__(self, split: Any, kinds: tuple, args: tuple, flat_args: tuple, out: Any, tape: Any,
                 tree: Any, result: Any, positions: list[int], draws: "Draws | NoDraws", made_from: tuple,
                 target: Target = NUMPY) -> None:
        self._split, self._kinds, self._args, self._flat_args = split, kinds, args, flat_args
        self._out, self._tape, self._tree, self._result = out, tape, tree, result
        self._positions, self._draws, self._made_from = positions, draws, made_from
        self._pulled = False
        self._target = target  # (its tape form: the tape handed to the parts)
        # until a batched reverse sweep meets an operation with no batched form; a compiled backward part
        # takes no batched tangent (each direction is one compiled call)
        self._batches = not split.handed
        self._drew = draws.drew()
        self.__name__ = f"vjp_{getattr(made_from[0], '__name__', 'f')}"

    @_user_facing
    def __call__(self, cotangent: Any, batched: bool = False) -> tuple:
        if batched:
            return self._batched(cotangent)
        fn, split, kinds, args = self._made_from[0], self._split, self._kinds, self._args
        cotangent = _matching_cotangent(fn, cotangent, self._result, self._tree)
        adjoints = _run(split.backward, (cotangent, self._taped()))
        # each adjoint with its primal's type: float32 stays float32, a 0-d array a 0-d array (as grad)
        adjoints = arguments.regroup(tuple(map(like, self._flat_args, adjoints[:-1])), kinds)
        # a string or None primal (a static argument) has no derivative: None, as jvp takes for its tangent
        return _TARGET.handed_out(tuple(None if isinstance(kinds[i], Constant) else adjoints[i]
                                        for i in self._positions), args + (self._out, cotangent))

    @property
    def adjoint_size(self) -> int:
        """The numbers of one pullback's adjoints, of every argument (what the reverse sweep makes)."""
        return sum(int(np.size(a)) for a in self._flat_args if not isinstance(a, str))

    def _taped(self) -> Any:
        """The tape one run of the reverse sweep consumes: the forward sweep's, or, where the reverse sweep
        puts overwritten slices back and has run before, the forward sweep's again (its draws replayed)."""
        split = self._split
        tape_form = self._target.tape()
        taped = tape_form.for_backward(self._tape)  # the backward part may consume what it is handed
        if split.restores and self._pulled:  # the first call put overwritten slices back: record them again
            self._draws.replay()
            try:
                taped = _run(split.forward, self._flat_args + (tape_form.empty(),))[1]
            finally:
                self._draws.finish()
        self._pulled = True
        return taped

    def _batched(self, cotangents: Any) -> tuple:
        """``vjp_fn(cotangents, batched=True)``: each leaf of ``cotangents`` with a leading axis of ``p``
        directions, pulled back by one run of the reverse sweep (``batched.batched_pullback``), or one run
        per direction where the sweep has an operation with no batched form; each adjoint gets the leading
        axis (a container's leaves each)."""
        fn, kinds = self._made_from[0], self._kinds
        name = getattr(fn, "__name__", "f")
        structure = containers.structure_of(self._result)
        try:
            pairs = list(zip(containers.leaves(cotangents, structure), containers.leaves(self._result, structure)))
        except ValueError as exc:
            raise ValueError(f"vjp of {name} with batched=True: the cotangents must have the result's structure, "
                             f"each leaf with a leading axis of directions: {exc}") from None
        for c, o in pairs:
            if np.ndim(c) != np.ndim(o) + 1 or np.shape(c)[1:] != np.shape(o):
                raise ValueError(f"vjp of {name} with batched=True: a cotangent must be shaped (directions,) + "
                                 f"{np.shape(o)} (the result's shape after a leading axis), not {np.shape(c)}")
        counts = {np.shape(c)[0] for c, _ in pairs}
        if len(counts) != 1 or 0 in counts:
            raise ValueError(f"vjp of {name} with batched=True: give cotangents with one number of directions "
                             f"(a leading axis, at least 1), not {sorted(counts)}")
        count = counts.pop()
        leaves = [_inexact(np.asarray(c)) for c, _ in pairs]
        seeds = tuple(leaves) if self._tree is not None else leaves[0] if len(leaves) == 1 else None
        # the flat positions (leaves) of the parameters whose adjoints are returned: no others are copied out
        starts = np.cumsum([0] + [containers.count(k) if isinstance(k, containers.Tree) else 1 for k in kinds])
        wanted = {j for i in self._positions for j in range(starts[i], starts[i + 1])}
        swept = None if seeds is None or count < 2 or not self._batches else \
            batched_pullback(self._split.backward, seeds, self._taped(), self._flat_args, count, wanted)
        if swept is None:  # one reverse sweep per direction (and from now on: the tape is the same)
            self._batches = self._batches and (seeds is None or count < 2)
            each = [self(containers.unflatten(structure, [c[d] for c in leaves]) if isinstance(
                structure, containers.Tree) else leaves[0][d]) for d in range(count)]
            return tuple(stacked([e[k] for e in each]) for k in range(len(self._positions)))
        adjoints = arguments.regroup(tuple(map(_batched_like, self._flat_args, swept)), kinds)
        return tuple(None if isinstance(kinds[i], Constant) else adjoints[i] for i in self._positions)

    def __reduce__(self) -> tuple:
        if self._drew:
            raise TypeError(f"this vjp_fn of {getattr(self._made_from[0], '__qualname__', 'f')} cannot be "
                            "pickled: its forward sweep drew random numbers, which another process would "
                            "draw differently; pickle the function and its primals and call vjp there")
        return (_pullback_again, self._made_from + (self._target.backend,))

    def __repr__(self) -> str:
        return f"<vjp_fn of {getattr(self._made_from[0], '__qualname__', self._made_from[0])!s}>"


def _pullback_again(fn: Callable, primals: tuple, wrt: Optional[tuple], backend: str = "python") -> Pullback:
    """An unpickled ``vjp_fn``: the forward sweep run again in this process, by the same backend."""
    return _pullback(fn, primals, wrt, target=target_of(backend))[1]


def _matching_cotangent(fn: Callable, cotangent: Any, out: Any, tree: Any) -> Any:
    """The cotangent as the generated code takes it, after checking it has the result's structure and shapes."""
    structure = containers.structure_of(out)
    try:
        pairs = list(zip(containers.leaves(cotangent, structure), containers.leaves(out, structure)))
    except ValueError as exc:
        raise ValueError(f"vjp of {fn.__name__}: the cotangent must have the result's structure: {exc}") from None
    for c, o in pairs:
        if np.shape(c) != np.shape(o):
            raise ValueError(f"vjp of {fn.__name__}: the cotangent has shape {np.shape(c)}, but the "
                             f"result has shape {np.shape(o)}; cotangents are never broadcast")
    if tree is not None:
        return tuple(_inexact(c) for c, _ in pairs)
    return _inexact(cotangent) if len(pairs) == 1 else cotangent


def _batched_like(primal: Any, adjoints: Any) -> Any:
    """``p`` adjoints of ``primal`` (a leading axis) with the dtype ``like`` gives each: a float32 primal's
    float32; None stays None."""
    if adjoints is None or not isinstance(primal, (np.ndarray, np.generic)):
        return adjoints
    want = primal.dtype
    if want.kind in "fc" and adjoints.dtype != want and (
            adjoints.dtype.kind == want.kind or (adjoints.dtype.kind == "f" and want.kind == "c")):
        return np.asarray(adjoints, dtype=want)
    return adjoints


def _inexact(cotangent: Any) -> Any:
    """An integer or boolean cotangent as floats: adjoints are never integers (the generated code
    fills arrays with them, ``np.full(shape, d_out)``, and takes their dtype)."""
    if isinstance(cotangent, (float, complex)) or np.issubdtype(np.asarray(cotangent).dtype, np.inexact):
        return cotangent
    return np.asarray(cotangent, dtype=float) if isinstance(cotangent, np.ndarray) else float(cotangent)
