"""The helpers the engine itself writes into generated code.

Input: what the generators emit a call of (``unbroadcast``, ``zeros_like``,
``getitem_grad``, ``held_apart``, ``draw``, ``random_states``, the checks and
the checkpoint stride...).  The helpers of one operation (``cumsum_grad``,
``matmul_grad_a``) are not here: they are defined beside the rules that call
them, in ``templates/``, so adding an operation touches ``templates/`` only
(tests/analysis/test_engine_tables.py checks that every public name here is one the
engine uses).  Generated code calls a helper only where the shape of a value
is not known when the code is generated; where it is known, the generator
writes the plain NumPy expression instead.  Every helper here is small, has
no state, and is itself differentiable by ``templates/runtime_helpers.py``
(so generated code can be transformed again for higher derivatives).
"""
from __future__ import annotations

import math
from operator import index as operator_index
import numbers
from typing import Any, Callable, Optional

import random
import weakref

import numpy as np

from .draws import is_generator
from .revolve import Schedule
from .errors import TransformError


def checkpointed(steps: Any, every: Optional[int] = None, snapshots: Optional[int] = None) -> Any:
    """Mark a loop for checkpointing: ``for t in s2s_ad.checkpointed(range(n)):``.

    Run as plain Python it is ``steps`` itself.  Reverse mode then keeps the
    loop's state once every ``every`` iterations (about sqrt(n) by default)
    instead of every iteration, and runs each segment again when its reverse
    needs it: memory about 2 sqrt(n) records instead of n, one more forward
    pass of the loop, the same gradient.  ``snapshots=c`` keeps at most ``c``
    states and follows the binomial schedule (Griewank and Walther's Revolve,
    ``core/revolve.py``): it records each step once and runs the fewest steps
    again that ``c`` snapshots allow, ``t(n, c) = r n - C(c + r, c + 1)``
    unrecorded steps in all (the forward sweep's included), ``r`` the
    smallest integer with ``C(c + r, c) >= n``: each step runs unrecorded at
    most ``r`` times.  For ``n = 10000`` and ``c = 38``, ``r = 3`` and
    ``t = 29180``.
    """
    return steps


def fixed_point(iterating: Any) -> bool:
    """Mark a convergence loop: ``while s2s_ad.fixed_point(err > tol):``.

    Run as plain Python it is ``bool(iterating)``.  The loop must compute the
    fixed point of its body, ``x = G(x, p)``, iterated until the test fails.
    Reverse mode then records nothing while the loop runs and reverses it as a
    fixed-point iteration of its own (Christianson's two-phase adjoint): from
    the converged state, ``w = x_bar + (dG/dx)^T w`` iterated as many times as
    the forward loop ran, then ``p_bar += (dG/dp)^T w``.  Its memory is one
    state whatever the number of iterations; the gradient is that of the fixed
    point itself (the starting state gets none), which agrees with the fully
    recorded loop's to the solver's tolerance.
    """
    return bool(iterating)


class Snapshots(int):
    """``checkpointed(steps, snapshots=c)``'s ``c`` in generated code: a number of snapshots, where a
    plain int is ``every`` (iterations per segment).  Such a loop follows the binomial schedule
    (``revolve``, ``ad/binomial.py``)."""


def snapshots(count: int) -> Snapshots:
    """``count`` marked as a number of snapshots for ``revolve``."""
    if int(count) < 1:
        raise ValueError(f"checkpointed(..., snapshots={count}): at least one snapshot is needed")
    return Snapshots(int(count))


def checkpoint_stride(n: int, every: Optional[int] = None) -> int:
    """Iterations per checkpointed segment: ``every``, else the ceiling of sqrt(n).  (A loop with
    ``snapshots=c`` has no segments: it follows the binomial schedule, ``revolve``.)"""
    if every is not None:
        if int(every) < 1:
            raise ValueError(f"checkpointed(..., every={every}): a segment needs at least one iteration")
        return int(every)
    return math.isqrt(n - 1) + 1 if n > 0 else 1


# -- the binomial schedule of checkpointed(steps, snapshots=c) (core/revolve.py) --------------------

# What the checkpointed loops with a binomial schedule did since ``clear_checkpoint_stats``, by line:
# {"line", "steps", "snapshots", "advances", "taped", "peak_snapshots", "peak_bytes", "runs"}.
checkpoint_stats: dict[Optional[int], dict[str, Any]] = {}


class _NoCaller:
    """Who made checkpoint_stats before any derivative's call did."""


_NO_CALLER = _NoCaller()
# The derivative whose call made checkpoint_stats, held weakly (a derivative dropped by the user, and the
# function it holds, must be freed): ``checkpoint_caller[0]()`` is it.
checkpoint_caller: list["weakref.ref[Any]"] = [weakref.ref(_NO_CALLER)]
checkpoint_history: "weakref.WeakKeyDictionary[Any, list]" = weakref.WeakKeyDictionary()  # others' last


def _stats_left(owner: Any) -> None:
    """The stats are no longer as ``owner``'s last call left them (counted into, or cleared for another
    derivative): a derivative whose cached calls skip clearing them (``checkpoint_stats_changed``, the
    API's ``GradientFunction``) takes the path that clears them at its next call."""
    changed = getattr(owner, "checkpoint_stats_changed", None)
    if changed is not None:
        changed()


def clear_checkpoint_stats(caller: Any = None, reference: "Optional[weakref.ref[Any]]" = None) -> None:
    """A call of ``caller`` (a derivative) begins: what the last one counted is kept as its own.
    ``reference``: the caller's own weak reference to itself, which ``checkpoint_caller`` then holds."""
    previous = checkpoint_caller[0]()
    if previous is not caller:
        _stats_left(previous)
    if previous is not None and previous is not _NO_CALLER and checkpoint_stats:
        checkpoint_history[previous] = [dict(entry) for entry in checkpoint_stats.values()]
    if caller is not None:
        checkpoint_history.pop(caller, None)
    checkpoint_stats.clear()
    checkpoint_caller[0] = reference if reference is not None else weakref.ref(_NO_CALLER if caller is None else caller)


def checkpoint_stats_of(caller: Any) -> list[dict[str, Any]]:
    """What the checkpointed loops on the binomial schedule counted in ``caller``'s last call."""
    if checkpoint_caller[0]() is caller:
        return [dict(entry) for entry in checkpoint_stats.values()]
    return [dict(entry) for entry in checkpoint_history.get(caller, [])]


def _stats_entry(line: Optional[int], snapshots: int) -> dict[str, Any]:
    """The stats of the checkpointed loop at ``line`` in this call, made empty where it has none yet."""
    if not checkpoint_stats:
        _stats_left(checkpoint_caller[0]())
    return checkpoint_stats.setdefault(line, dict(
        line=line, steps=0, snapshots=int(snapshots), advances=0, taped=0, peak_snapshots=0, peak_bytes=0, runs=0))


def _stats(schedule: Schedule) -> dict[str, Any]:
    return _stats_entry(schedule.line, schedule.c)


def _count(schedule: Schedule, segments: list, state: tuple) -> list:
    """Add what ``segments`` advance (and the step recorded with them) to the loop's stats."""
    stats = _stats(schedule)
    stats["advances"] += sum(s.stop - s.start for s in segments)
    stats["taped"] += 1
    stats["peak_snapshots"] = max(stats["peak_snapshots"], schedule.peak)
    size = sum(int(getattr(v, "nbytes", 0)) or 8 for v in state)  # (a number: 8 bytes)
    stats["peak_bytes"] = max(stats["peak_bytes"], schedule.peak * size)
    return segments


def add_checkpoint_stats(line: Optional[int], snapshots: int, steps: int, advances: int, taped: int,
                         peak_snapshots: int, peak_bytes: int, runs: int) -> None:
    """Add what a compiled sweep of a checkpointed loop counted (``targets/numba/revolve.py``) to its
    stats, as the Python schedule's calls add theirs."""
    stats = _stats_entry(line, snapshots)
    stats["steps"] += int(steps)
    stats["advances"] += int(advances)
    stats["taped"] += int(taped)
    stats["peak_snapshots"] = max(stats["peak_snapshots"], int(peak_snapshots))
    stats["peak_bytes"] = max(stats["peak_bytes"], int(peak_bytes))
    stats["runs"] += int(runs)


def revolve(n: int, snapshots: int, line: Optional[int] = None, counted: int = 0) -> Schedule:
    """The binomial schedule of a checkpointed loop of ``n`` steps keeping at most ``snapshots``
    states, for its forward sweep; ``counted``: the steps a checkpointed while loop ran unrecorded
    to count them (``ad/online.py``), advances too."""
    schedule = Schedule(n, snapshots, line)
    stats = _stats(schedule)
    stats["steps"] += schedule.n
    stats["advances"] += counted
    stats["runs"] += 1
    return schedule


def revolve_forward(schedule: Schedule, *state: Any) -> list:
    """The forward sweep's segments (slices of the steps): keep a snapshot of the state (``state``,
    measured for the stats) at the start of each, advance it unrecorded; the last step is recorded."""
    segments = schedule.forward()
    return _count(schedule, segments, state) if schedule.n else segments


def revolve_last(schedule: Schedule) -> slice:
    """The step the forward sweep records: the last one (none for no steps)."""
    return slice(max(schedule.n - 1, 0), schedule.n)


def revolve_reverse(n: int, snapshots: int, line: Optional[int] = None) -> Schedule:
    """The schedule as the forward sweep left it (its snapshots on the tape), for the reverse sweep."""
    schedule = Schedule(n, snapshots, line)
    schedule.forward()
    return schedule


def revolve_turn(schedule: Schedule, step: int, *state: Any) -> list:
    """Step ``step`` (``< n - 1``) of the reverse sweep, the newest snapshot just restored into
    ``state``: the segments to advance (a snapshot kept at the start of each) before recording it."""
    return _count(schedule, schedule.turn(step), state)


def stop_gradient(x: Any) -> Any:
    """``x`` itself; differentiation treats it as a constant (``s2s_ad.stop_gradient``)."""
    return x


def unbroadcast(grad: Any, like: Any) -> Any:
    """``grad`` brought to the shape of ``like``: summed over the axes NumPy broadcast.

    ``grad`` is the adjoint of a result that ``like`` took part in.  Where
    ``grad`` is the smaller one in some axis (a scalar seed flowing into an
    array), it is spread over that axis first.  A Python number ``like`` gets
    a NumPy scalar.
    """
    # the common cases first, without np.shape: this runs for many statements of generated code
    if type(grad) is np.ndarray and type(like) is np.ndarray and grad.shape == like.shape:
        return grad
    if type(grad) is float and type(like) is float:
        return grad
    return unbroadcast_to(grad, np.shape(like))


def unbroadcast_to(grad: Any, shape: tuple) -> Any:
    """``unbroadcast`` given the shape alone (what loops record when the value is not needed)."""
    grad_shape = grad.shape if type(grad) is np.ndarray else np.shape(grad)
    if grad_shape == shape:
        return grad
    if not shape:
        return np.sum(grad)
    full = np.broadcast_shapes(grad_shape, shape)
    if full != grad_shape:
        grad = np.broadcast_to(grad, full)
        if full == shape:
            return grad.copy()  # writable, like every other adjoint
    extra = len(full) - len(shape)
    axes = tuple(range(extra)) + tuple(extra + i for i, n in enumerate(shape) if n == 1 and full[extra + i] != 1)
    return np.sum(grad, axis=axes).reshape(shape)


def zeros_like(value: Any) -> Any:
    """The zero gradient of ``value``: ``0.0`` for a number, else an array of zeros."""
    if isinstance(value, (int, float)):
        return 0.0
    if value.__class__ is RecordStack:  # (its tangent records: zeros where nothing is recorded yet)
        return np.full(value.shape, 0.0, dtype=object).view(RecordStack)
    if _ragged(value) or _holds_adjoints(value):
        return ragged_zeros(value)
    dtype = np.result_type(value, 1.0) if isinstance(value, (np.ndarray, np.generic)) else float
    return np.zeros(_adjoint_shape(value), dtype=dtype)


def _ragged(value: Any) -> bool:
    """A tuple or list of arrays of different shapes (the pieces of np.array_split)."""
    return isinstance(value, (list, tuple)) and len({np.shape(item) for item in value}) > 1


def ragged_zeros(value: Any) -> np.ndarray:
    """The zero adjoint of a tuple or list of arrays of different shapes: an array of objects holding
    one array of zeros per item (read by a constant index, each is that item's adjoint)."""
    result = np.empty(len(value), dtype=object)
    for i, item in enumerate(value):
        result[i] = np.zeros(np.shape(item))
    return result


def _adjoint_shape(value: Any) -> tuple:
    """The shape of ``value``'s adjoint, an array; a list of arrays of different shapes (the pieces of
    np.array_split) has none, and is refused with what to write instead."""
    # (asked outright: NumPy 2 raises on such a list, NumPy 1 makes an array of objects of it)
    if isinstance(value, (list, tuple)) and len({np.shape(item) for item in value}) > 1:
        raise ValueError("s2s_ad has no adjoint for a list of arrays of different shapes read by a variable "
                         "index, a loop or a slice; unpack it (a, b, c = np.array_split(x, 3)) or read it "
                         "by constant indices (parts[0])")
    return np.shape(value)


def zero_tangent(value: Any) -> Any:
    """The zero tangent of ``value`` in forward mode, shaped like it: 0.0 for a number, zeros for
    an array, ``None`` for ``None``, a tuple of zeros for a tuple (the tape included: its chain is
    walked without recursion, however long)."""
    if not isinstance(value, tuple):
        return None if value is None else zeros_like(value)
    chain = []
    while isinstance(value, tuple) and value:
        chain.append(value[:-1])
        value = value[-1]
    tail = () if isinstance(value, tuple) else zero_tangent(value)
    for items in reversed(chain):
        tail = tuple(zero_tangent(item) for item in items) + (tail,)
    return tail


def write_into(array: Any, index: Any, value: Any) -> None:
    """``array[index] = value``: a write of a slice as the Numba target spells it
    (``passes/slice_writes.py``; compiled by ``targets/numba/slice_writes.py``)."""
    array[index] = value


def add_into(array: Any, index: Any, value: Any) -> None:
    """``array[index] += value``, spelled as ``write_into``."""
    array[index] += value


def writable_copy(grad: Any, like: Any) -> np.ndarray:
    """A fresh float array of ``like``'s shape holding ``grad``, for in-place updates; for a tuple or list
    of items of different shapes (a ``(h, c)`` state of an array and a number carried through a loop), an
    array of objects holding a fresh array per item (as ``ragged_zeros``), ``grad``'s item added to each."""
    if _ragged(like):
        copy = ragged_zeros(like)
        itemwise = isinstance(grad, (np.ndarray, list, tuple)) and np.ndim(grad) == 1 and len(grad) == len(copy)
        for i in range(len(copy)):
            copy[i] = copy[i] + (grad[i] if itemwise else grad)
        return copy
    if isinstance(grad, (list, tuple)):  # a list's adjoint as pieces (stack_grad's): a row per piece
        grad = np.asarray(grad)
    copy = np.empty(np.shape(like), dtype=np.result_type(grad, 1.0))
    copy[...] = grad  # filled in place, as in broadcast_reduced
    return copy


def _fancy_stores_copy_overlap() -> bool:
    """Whether this NumPy copies the right side of an integer-array store that overlaps the array
    (``b[[3, 2, 1, 0]] = b`` reverses ``b`` from NumPy 2.0 on; before, it wrote element by element)."""
    b = np.arange(4.0)
    b[[3, 2, 1, 0]] = b
    return bool(b[0] == 3.0)


FANCY_STORES_COPY_OVERLAP = _fancy_stores_copy_overlap()


def held_apart(value: Any) -> Any:
    """``value`` with each array in it copied (a tuple or list of numbers and arrays, nested, or one
    array): what a result handed to the caller holds, kept apart from arrays the reverse sweep puts
    back afterwards."""
    if isinstance(value, np.ndarray):
        return value.copy()
    if type(value) in (tuple, list):
        return type(value)(held_apart(item) for item in value)
    return value


def stored_part(grad: np.ndarray, index: Any, value: Any) -> Any:
    """The adjoint of ``value`` in ``array[index] = value`` (``grad`` is the adjoint of ``array``).

    ``grad[index]``, copied (the caller zeroes ``grad[index]`` next) and
    reduced to ``value``'s shape.  Where an integer-array index names an
    element twice, NumPy keeps one of the writes; replaying the store with
    positions finds which, and only that position takes the adjoint.
    """
    part = np.array(grad[index], dtype=np.result_type(grad, 1.0))
    positions = np.arange(part.size).reshape(part.shape)
    kept = np.full(np.shape(grad), -1, dtype=np.intp)
    kept[index] = positions
    return unbroadcast(np.where(kept[index] == positions, part, 0.0), value)


def one_number(value: Any) -> bool:
    """Whether ``value`` is one number (a Python, NumPy or other library's scalar, or a 0-d array of
    numbers): what ``grad`` differentiates.  A string, None or a 0-d array of objects is not."""
    if isinstance(value, (str, bytes)) or value is None or np.ndim(value) != 0:
        return False
    dtype = getattr(value, "dtype", None)
    return getattr(dtype, "kind", "f") in "biufc"


def check_one_number(value: Any, name: str) -> None:
    """Refuse a result ``grad`` cannot differentiate, one that is not a number: the API's check of the
    value ``value_and_grad`` returns, and the generated check of a gradient that returns no value
    where the facts do not prove the result a number (``reverse.ReverseSweep``, before the reverse
    sweep: the seed is one number)."""
    if value.__class__ is float or one_number(value):
        return
    if np.ndim(value) == 0:
        raise TypeError(f"grad needs {name} to return a number, but it returned a "
                        f"{type(value).__name__} ({value!r:.40}), which has no derivative")
    raise TypeError(f"grad needs {name} to return a scalar, but it returned an array of shape "
                    f"{np.shape(value)}; use s2s_ad.vjp or s2s_ad.jacobian for non-scalar results")


def check_number_update(value: Any, name: str, shared: str, filename: str, line: int) -> None:
    """Before ``name op= v`` runs as a new binding (Python's meaning for a number): refuse an object
    that ``op=`` would change in place (an array, 0-d included, or a list) while ``shared`` (another
    name, the argument) sees it."""
    if not isinstance(value, (numbers.Number, np.generic, tuple, str)):
        raise TransformError(f"the in-place update of {name}", f"{name} is {shared}, and it holds an array here: "
                             f"NumPy would change that array too; write {name} = {name} + ... (a new array), or "
                             f"copy it first", filename=filename, line=line)


def check_no_derivative(value: Any, function: str, name: str, filename: str, line: int) -> None:
    """Before a call whose rule gives no derivative in its input ``name``, where the argument depends
    on what is differentiated: an integer (an axis, a count) has none to lose; a float would lose its
    derivative silently, so it is refused."""
    try:
        held = np.asarray(value)
    except (ValueError, TypeError):  # a ragged list: not a number NumPy would read as one
        return
    inexact = held.size > 0 and held.dtype.kind in "fc"  # an empty shape () reads as an empty float array
    if inexact:
        raise TransformError(f"the call of {function}", f"its argument {name} depends on the differentiated "
                             f"inputs, but its rule gives no derivative in {name}; pass a value that does not "
                             f"depend on them (wrap it in s2s_ad.stop_gradient(...) if a zero derivative is "
                             f"meant), or add a rule (see docs/rules.md, 'Adding a rule')", filename=filename, line=line)


def derivative_lost_by(value: Any, function: str, name: str, filename: str, line: int) -> None:
    """A mark in a gradient's plain function (``higher_order.build_gradient_only``) for a parameter the
    gradient is not taken by whose float would reach a rule input without a derivative (``function``'s
    ``name``, at ``filename:line``).  It does nothing when it runs; forward mode over the gradient by
    that parameter turns it into ``check_no_derivative`` (``lost_derivatives.guard_lost_derivatives``)."""


def check_bound(value: Any, name: str, filename: str, line: int) -> None:
    """Before a read of the user's ``name`` that a branch or loop binds on some paths only (lowering gives
    it None on the others): raise Python's UnboundLocalError where this path left it unbound, as the
    user's function does (the gradient's code may not compute every value the function reads)."""
    if value is None:
        raise UnboundLocalError(f"{name} is read at line {line} of {filename}, but no path that reached the "
                                f"read bound it (a loop that ran no trip, or a branch not taken)")


def check_out_cast(value: Any, out: Any, function: str, filename: str, line: int) -> None:
    """Before ``out[...] = value`` that stands for ``function(..., out=out)`` (a NumPy ufunc writing its
    result into ``out``): raise NumPy's error where that call raises it, which the store would not
    (it casts any dtype into any other): ``out`` not an array, or a result whose dtype does not cast
    to ``out``'s under the ufunc's rule (``same_kind``: a float result into an integer array)."""
    if not isinstance(out, np.ndarray):
        raise TypeError(f"{function}(..., out=...) at line {line} of {filename}: out must be an array, "
                        f"not {type(out).__name__}")
    dtype = np.result_type(value)
    if not np.can_cast(dtype, out.dtype, casting="same_kind"):
        raise TypeError(f"{function}(..., out=...) at line {line} of {filename}: cannot cast the result "
                        f"from {dtype} to {out.dtype} with casting rule 'same_kind', as NumPy's ufunc refuses")


def check_view_update(array: Any, parts: int, name: str, hint: str, filename: str, line: int) -> None:
    """Before ``name op= v`` with ``name = array[i]`` runs as a write into ``array`` (NumPy's meaning
    where ``array[i]`` is a view): refuse where ``array`` has no more dimensions than the index has
    parts, so that ``array[i]`` is one number (a copy, which ``op=`` would only rebind)."""
    if np.ndim(array) <= parts:
        raise TransformError(f"the in-place update of {name}", hint, filename=filename, line=line)


def check_view_kept(view: Any, base: Any, name: str, filename: str, line: int) -> None:
    """Before ``name``, read after its array was written, is taken again by a step that may or may not
    have made a view (``np.reshape`` of an array that is not contiguous, ``B[0]`` of a vector: copies):
    refuse where NumPy made a copy, which keeps the values it had, where taking it again would show
    the write."""
    if isinstance(base, np.ndarray) and not (isinstance(view, np.ndarray) and np.may_share_memory(view, base)):
        raise TransformError(f"reading {name} after its array was written", f"{name} is a copy of part of that "
                             "array here (one number, or a reshape of an array that is not contiguous), which keeps "
                             "the values it had, not a view; copy it where you take it (.copy(), or float(...) for "
                             "one number) to say so", filename=filename, line=line)


# -- a view read after a write into its array, where no chain of steps takes it again -----------------
# (lower_views.ViewRetaking.by_positions: a view carried out of the iteration that took it, a recursive
# helper's, one joined over a loop).  Generated code writes into an array it made in place, so a view of
# it shows the write by itself; what the derivative needs is where the view's elements lie in the array.

def view_positions(view: Any, base: Any, name: str = "the value", filename: Optional[str] = None,
                   line: Optional[int] = None) -> Any:
    """Where each element of ``view`` lies in ``base``: flat (C-order) positions of ``base``, an
    integer array of the view's shape; -1 for one number (read by index: a copy, which the write did
    not reach).  An array that is no view of ``base``'s elements here is refused, naming ``name`` at
    ``filename:line``: the generated code may hold a copy where NumPy's would be a view (a value the
    reverse sweep records), so no value is kept as it was on that ground; a container (which may
    hold views of ``base``) is refused too."""
    if isinstance(view, (np.generic, numbers.Number)):
        return np.full((), -1, dtype=np.intp)
    if not isinstance(view, np.ndarray):
        raise TransformError(f"reading {name} after its array was written", f"{name} is a "
                             f"{type(view).__name__} that may hold views of that array, taken where they "
                             "cannot be taken again; copy each view where you take it (.copy())",
                             filename=filename, line=line)
    if view.size == 0:
        return np.zeros(view.shape, dtype=np.intp)
    if isinstance(base, np.ndarray) and view.dtype == base.dtype and np.may_share_memory(view, base):
        found = _addresses(base).reshape(-1)
        order = np.argsort(found, kind="stable")
        ordered = found[order]
        wanted = _addresses(view).reshape(-1)
        at = np.minimum(np.searchsorted(ordered, wanted), ordered.size - 1)
        if np.array_equal(ordered[at], wanted):
            return order[at].reshape(view.shape)
    raise TransformError(f"reading {name} after its array was written", f"{name} may be a view of that array, "
                         "taken where it cannot be taken again, and is not one here as s2s_ad computes it; copy "
                         "it where you take it (.copy())", filename=filename, line=line)


def _addresses(a: np.ndarray) -> np.ndarray:
    """The byte address of every element of ``a``, in an array of its shape."""
    addresses = np.full(a.shape, a.__array_interface__["data"][0], dtype=np.int64)
    for axis, (length, stride) in enumerate(zip(a.shape, a.strides)):
        steps = np.arange(length, dtype=np.int64) * stride
        addresses += steps.reshape((length,) + (1,) * (a.ndim - axis - 1))
    return addresses


def retaken_view(base: Any, stale: Any, positions: Any) -> Any:
    """``stale``, a view of ``base`` bound before a write into ``base``, read after it, as NumPy's view
    shows it now: ``base``'s elements at ``positions`` (``view_positions``: the same values, since
    generated code writes into ``base`` in place, taken as a function of ``base`` for the derivative);
    ``stale`` itself where it is one number (or empty)."""
    return stale if _kept(positions) else np.take(base, positions)


def _kept(positions: Any) -> bool:
    """``positions`` say the value read was one number or empty (``view_positions``), kept as it was."""
    return bool(positions.size == 0 or positions.reshape(-1)[0] < 0)


def positions_grad(grad: Any, positions: Any, base: Any) -> Any:
    """The adjoint ``retaken_view`` gives ``base``: ``grad`` added into zeros shaped like ``base`` at
    ``positions`` (a view's elements are distinct: no position repeats)."""
    out = np.zeros(np.shape(base), dtype=np.result_type(grad, 1.0))
    if not _kept(positions):
        out.reshape(-1)[positions.reshape(-1)] = np.reshape(grad, -1)
    return out


def stale_grad(grad: Any, positions: Any) -> Any:
    """The adjoint ``retaken_view`` gives ``stale``: ``grad`` where it is no view of the array written,
    else zeros (the derivative went to the array)."""
    return grad if _kept(positions) else np.zeros(np.shape(grad), dtype=np.result_type(grad, 1.0))


def split_piece(shape: tuple, how: str, sections: Any, axis: Any, k: int) -> tuple:
    """The basic index of piece ``k`` of ``np.<how>(a, sections, axis)`` (``how``: split, array_split,
    hsplit, vsplit or dsplit) for an array ``a`` of shape ``shape``: ``a[index]`` is that piece, the
    same view, so a write through the piece is a store into ``a`` there.  NumPy's own bounds: an
    integer count gives the first ``n % count`` pieces one item more; a list of indices cuts at each
    (a slice of Python's, so negative and out-of-range cuts mean what they mean there)."""
    if how == "hsplit":
        axis = 1 if len(shape) > 1 else 0
    elif how == "vsplit":
        axis = 0
    elif how == "dsplit":
        axis = 2
    axis = int(axis) % len(shape)
    length = shape[axis]
    if np.ndim(sections) == 0:
        count = int(sections)
        each, extra = divmod(length, count)
        sizes = [each + 1] * extra + [each] * (count - extra)
        bounds = [0] + [int(b) for b in np.cumsum(sizes)]
    else:
        bounds = [0] + [int(i) for i in sections] + [length]
    k %= len(bounds) - 1
    return (slice(None),) * axis + (slice(bounds[k], bounds[k + 1]),)


def random_states() -> tuple:
    """The global random states (``np.random.*``, Python's ``random.*``): a checkpointed loop
    keeps them per segment, so a segment run again draws what it drew the first time."""
    return np.random.get_state(), random.getstate()


def set_random_states(states: tuple) -> None:
    """Put back what ``random_states`` returned."""
    np.random.set_state(states[0])
    random.setstate(states[1])


def draw(generator: Any, method: str, *args: Any, **kwargs: Any) -> Any:
    """``generator.<method>(*args, **kwargs)``: a draw from a generator object the code reads as a value
    (an argument, one it made, ``rng.normal(size=3)``).  ``api`` replays its state in every pass of a
    derivative taken in several (``draws.Draws``); anything but a generator is refused here."""
    if not is_generator(generator):
        raise TypeError(f"{type(generator).__name__}.{method}() was called as a random draw, but only the "
                        "methods of np.random.Generator, np.random.RandomState and random.Random objects, "
                        "and the array methods with a rule, can be called in a differentiated function")
    return getattr(generator, method)(*args, **kwargs)


_CONVERSIONS: dict[int, Callable[[Any], str]] = {115: str, 114: repr, 97: ascii}  # !s, !r, !a (ast's codes)


def formatted(layout: tuple, *values: Any) -> str:
    """An f-string: ``layout`` holds its text and, for each value, (conversion, format spec)."""
    out, next_value = [], iter(values)
    for part in layout:
        if isinstance(part, str):
            out.append(part)
            continue
        conversion, spec = part
        value = next(next_value)
        convert = _CONVERSIONS.get(conversion)
        out.append(format(convert(value) if convert is not None else value, spec))
    return "".join(out)


def percent_formatted(text: str, values: Any) -> str:
    """``"%.6f" % v``: a string's ``%`` formats (never the numeric modulo), as Python does."""
    return text % values


def format_method(text: str, *args: Any, **kwargs: Any) -> str:
    """``"{:.2f}".format(v)``: the string method, as Python runs it."""
    return text.format(*args, **kwargs)


def joined(text: str, items: Any) -> str:
    """``", ".join(parts)``: the string method, as Python runs it (a message, which carries no derivative)."""
    return text.join(items)


def check_index(index: Any, array: Any, axis: int) -> None:
    """Raise NumPy's IndexError where ``index`` is out of range for ``array``'s axis ``axis``: what compiled
    code checks, before the statement that indexes, where an index was not proven in range
    (``index_ranges.with_checks``; the rest of that code runs without bounds checks)."""
    length = np.shape(array)[axis]
    if not -length <= index < length:
        raise IndexError(f"index {index} is out of bounds for axis {axis} with size {length}")


def check_assertion(test: Any, message: Any = None) -> None:
    """``assert test, message`` in generated code (the message is computed before the test)."""
    if not test:
        raise AssertionError(message) if message is not None else AssertionError


def raise_exception(kind: type, *args: Any, **kwargs: Any) -> None:
    """``raise kind(*args, **kwargs)`` in generated code: the user's exception, raised in the forward
    sweep where the primal function would raise it (so no derivative is ever computed past it)."""
    raise kind(*args, **kwargs)


def added_at(a: Any, index: Any, value: Any) -> np.ndarray:
    """A copy of ``a`` after ``np.add.at(a, index, value)``: what the adjoint's in-place
    accumulation means when forward mode differentiates generated code (second derivatives)."""
    out = np.array(a, dtype=np.result_type(a, value, 1.0))
    np.add.at(out, index, value)
    return out


class RecordStack(np.ndarray):
    """What ``float_stack`` makes when run as Python: an array of objects, told apart from the arrays of
    objects that hold a ragged adjoint (``ragged_zeros``) by its class, so that its zero tangent, in
    forward mode over code that records into it (a Hessian's gradient read back), is one of its shape."""


def float_stack(shape: Any) -> np.ndarray:
    """A tape slot of float64 records, preallocated (the Numba target's tape, ``targets/numba/tape.py``):
    compiled, ``np.empty(shape)``; run as Python, an array of objects (``RecordStack``), which gives back
    each value as it was pushed (a float stays a float; a complex or an array, which Numba refuses to
    store, is not cast)."""
    return np.empty(shape, dtype=object).view(RecordStack)


def list_append(items: list, item: Any) -> list:
    """A new list: ``items`` then ``item``.  What ``items.append(item)`` means in differentiated code.

    ``items`` may also be an array of rows (a zero tangent or adjoint of a
    list): it is read row by row, never added to.
    """
    return [*items, item]


def list_with(items: Any, index: Any, item: Any) -> Any:
    """A new list: ``items`` with the item at ``index`` replaced by ``item``.  What ``items[index] = item``
    means in differentiated code (the frontend's ``list_sharing`` proved no other name holds the list);
    an index out of range or not an integer raises as Python does.  ``items`` may also be an array of
    rows (a zero tangent or adjoint of a list): a copy with that row replaced."""
    changed = items.copy() if isinstance(items, np.ndarray) else list(items)
    changed[operator_index(index)] = item
    return changed


def list_set(items: list, index: Any, item: Any) -> None:
    """``items[index] = item``: ``list_with`` written in place where no later read can tell the list as it
    was from the new one (``memory.lists``; the pass ``grow_lists_in_place``)."""
    items[operator_index(index)] = item


def list_without(grad: Any, index: Any) -> Any:
    """The adjoint of ``items`` in ``items[index] = item``: ``grad`` (a list's adjoint: an array with a row
    per item, or a piece per item) with the piece at ``index`` zero: the item written over reaches no value."""
    kept = grad.copy() if isinstance(grad, np.ndarray) else list(grad)
    kept[index] = zeros_like(kept[index])
    return kept


def adjoints_added(current: Any, contribution: Any) -> Any:
    """Two adjoints of one list added: item by item where either is a list or tuple (a list's adjoint,
    one piece per item: ``+`` would join the two lists), else with ``+`` (an array with a row per item)."""
    if isinstance(current, (list, tuple)) or isinstance(contribution, (list, tuple)):
        if len(current) != len(contribution):
            raise ValueError(f"two adjoints of one list with {len(current)} and {len(contribution)} items")
        return [a + b for a, b in zip(current, contribution)]
    return current + contribution


def getitem_grad(grad: Any, a: Any, index: Any) -> np.ndarray:
    """The adjoint of ``a[index]``: ``grad`` scattered into zeros shaped like ``a``.

    Where an integer index (an array, a list, a tuple inside the index) may
    name an element twice, each reading adds its part (``np.add.at``); a basic
    index (numbers, slices, ``None``, ``...``) or a boolean mask never repeats,
    and is written directly.
    """
    if _ragged(a) and isinstance(index, int):
        # an item of a tuple or list of arrays of different shapes ([v[:1], v[1:]] from a helper, or joined
        # over an if), read by a constant index: its adjoint holds one adjoint per item, in an array of
        # objects, so that adjoints of two reads add item by item as lists of equal arrays' do
        result = ragged_zeros(a)
        result[index] = result[index] + grad
        return result
    shape = _adjoint_shape(a)
    if isinstance(grad, (list, tuple)):  # the items of a list of equal arrays (np.split's pieces sliced)
        grad = np.asarray(grad)
    result = np.zeros(shape, dtype=np.result_type(grad, 1.0))
    if _never_repeats(index):
        result[index] = grad
    else:
        np.add.at(result, index, grad)
    return result


def _never_repeats(index: Any) -> bool:
    """True if ``a[index]`` names each element of ``a`` at most once (NumPy's basic indexing, or masks)."""
    parts = index if isinstance(index, tuple) else (index,)
    for part in parts:
        if isinstance(part, (bool, np.bool_)) or part is None or part is Ellipsis:
            continue
        if isinstance(part, (int, np.integer, slice)):
            continue
        if isinstance(part, np.ndarray) and (part.dtype == np.bool_ or part.ndim == 0):
            continue
        return False
    return True


def if_inexact(grad: Any, like: Any) -> Any:
    """``grad`` where ``like`` holds floats (or complex numbers), zeros where it holds integers or
    booleans: a value stored into such an array, or converted to one, is truncated, and so has no
    derivative (``b = np.arange(4); b[1] = 3 * x``, ``np.array(x, dtype="int32")``).  A list or
    tuple holds what is stored into it as it is (``layers[k] = W``, whatever its items' shapes), and
    so does an array of objects (the adjoint of such a list: ``ragged_zeros``): nothing is truncated."""
    if isinstance(like, (list, tuple)) or _holds_adjoints(like) or np.issubdtype(np.asarray(like).dtype, np.inexact):
        return grad
    return zeros_like(grad)


def _holds_adjoints(value: Any) -> bool:
    """An array of objects: the adjoint of a tuple or list of items of different shapes (``ragged_zeros``),
    one float adjoint per item."""
    return isinstance(value, np.ndarray) and value.dtype == object


def item(a: Any) -> Any:
    """``a.item()``: the one number of a one-element array (or a NumPy number) as a Python number."""
    return a.item() if hasattr(a, "item") else a


