"""Vector forward mode: one sweep of the tangent code pushes ``p`` directions at once.

Input: a generated tangent function (Python backend), the primals and, per
differentiated argument, an array of ``p`` tangents (a leading direction axis).
Output: the result and its ``p`` tangents (leading axis), or ``None`` when the
sweep could not be batched, so that the caller runs one sweep per direction.

The generated code is the ordinary tangent code (``source_for`` shows it): each
tangent it receives is a ``Batched``, an array of ``p`` tangents that answers every
NumPy operation it supports as the one-direction tangent would, direction by
direction, and refuses every other (``NotBatched``, a ``TypeError`` from NumPy
for an unknown function, an ``AttributeError``): the caller then falls back to
one sweep per direction.  So an operation is either batched exactly or not at
all -- never a wrong number.  A tangent's logical shape is the primal's; its data
is shaped ``(p,) + shape``; operands of lower rank are lifted (``_lifted``) so
that NumPy's trailing alignment never pairs the direction axis with a primal axis.
"""
from __future__ import annotations

import functools
from types import FunctionType
from typing import Any, Callable, Optional

import numpy as np

from ..core import arguments, containers, runtime
from ..driver.reach import _called, is_generated
from ..rules.batched_forms import BatchedForm, form_of
from ..targets.batched.rules import Batched, NotBatched, _axes, _key, _lifted, _ndim, run_declared
from ..core.identity import IdentitySet


def _zero_tangent(count: int) -> Callable:
    def zero_tangent(value: Any) -> Any:
        if isinstance(value, tuple) or value is None:
            raise NotBatched("the zero tangent of a tuple")
        return Batched(np.zeros((count,) + np.shape(value), dtype=np.result_type(value, float)))
    return zero_tangent


def _has_batched(values: Any) -> bool:
    return any(isinstance(v, Batched) or isinstance(v, (tuple, list)) and _has_batched(v) for v in values)


def _getitem_grad(original: Callable) -> Callable:
    def getitem_grad(grad: Any, a: Any, index: Any) -> Any:
        if not isinstance(grad, Batched):
            return original(grad, a, index)
        if runtime._ragged(a) or isinstance(a, (list, tuple)):
            raise NotBatched("the adjoint of an item of a list")
        result = Batched(np.zeros((grad.data.shape[0],) + runtime._adjoint_shape(a), dtype=grad.data.dtype))
        view_ndim = result.data[_key(index)].ndim - 1
        if runtime._never_repeats(index):
            result[index] = grad
        else:
            np.add.at(result.data, _key(index), _lifted(grad, view_ndim))
        return result
    return getitem_grad


def _if_inexact(original: Callable) -> Callable:
    def if_inexact(grad: Any, like: Any) -> Any:
        if not isinstance(grad, Batched):
            return original(grad, like)
        probe = np.ones(())
        return grad if original(probe, like) is probe else Batched(np.zeros_like(grad.data))
    return if_inexact


def _writable_copy(original: Callable) -> Callable:
    def writable_copy(grad: Any, like: Any) -> Any:
        if not isinstance(grad, Batched):
            return original(grad, like)
        if runtime._ragged(like) or isinstance(like, (list, tuple)):
            raise NotBatched("a tangent of a list")
        copy = np.empty((grad.data.shape[0],) + np.shape(like), dtype=np.result_type(grad.data, 1.0))
        copy[...] = _lifted(grad, np.ndim(like))
        return Batched(copy)
    return writable_copy


def _guarded(original: Callable) -> Callable:
    """A helper with no batched form: refuses batched tangents (the sweep then runs direction by direction)."""
    def guarded(*args: Any, **kwargs: Any) -> Any:
        if _has_batched(args) or _has_batched(kwargs.values()):
            if REFUSALS is not None:
                REFUSALS.append(original.__name__)
            raise NotBatched(f"{original.__name__} has no batched form")
        return original(*args, **kwargs)
    return guarded


class _NumPy:
    """NumPy for a batched sweep: ``np.asarray`` and ``np.array`` (which read an array through ``__array__``,
    and so cannot take a ``Batched``) take tangents too; everything else is NumPy's."""

    def __getattr__(self, name: str) -> Any:
        return getattr(np, name)

    @staticmethod
    def asarray(a: Any, dtype: Any = None, **kwargs: Any) -> Any:
        if not isinstance(a, Batched):
            return np.asarray(a, dtype=dtype, **kwargs)
        if kwargs or (dtype is not None and np.dtype(dtype) != a.data.dtype):
            raise NotBatched("asarray of a tangent with a dtype or options")
        return a

    @staticmethod
    def array(a: Any, dtype: Any = None, **kwargs: Any) -> Any:
        if not isinstance(a, Batched):
            return np.array(a, dtype=dtype, **kwargs)
        if kwargs or (dtype is not None and np.dtype(dtype) != a.data.dtype):
            raise NotBatched("array of a tangent with a dtype or options")
        return a.copy()

    @staticmethod
    def full(shape: Any, fill_value: Any, dtype: Any = None, **kwargs: Any) -> Any:
        """``np.full`` of a tangent (an adjoint spread over a reduction's input): the tangent broadcast
        to ``shape`` in every direction."""
        if not isinstance(fill_value, Batched):
            return np.full(shape, fill_value, dtype=dtype, **kwargs)
        shape = (shape,) if isinstance(shape, (int, np.integer)) else tuple(shape)
        if kwargs or fill_value.ndim > len(shape):
            raise NotBatched("np.full of a tangent with options or of a higher rank than the shape")
        data = np.broadcast_to(_lifted(fill_value, len(shape)), (fill_value.data.shape[0],) + shape)
        return Batched(np.array(data, dtype=dtype))


_NUMPY = _NumPy()

def _zeros_like(original: Callable) -> Callable:
    def zeros_like(value: Any) -> Any:
        return Batched(np.zeros_like(value.data)) if isinstance(value, Batched) else original(value)
    return zeros_like


def _adjoint_zeros(count: int) -> Callable[[Callable], Callable]:
    """``zeros_like`` in a batched reverse sweep, where it starts an adjoint that others are added into in
    place (``d_y[i] += ...``): zeros in every direction, as a ``Batched`` (of an array or a number)."""
    def batched(original: Callable) -> Callable:
        def zeros_like(value: Any) -> Any:
            if isinstance(value, Batched):
                return Batched(np.zeros_like(value.data))
            if isinstance(value, (np.ndarray, np.generic, int, float)) and not isinstance(value, bool):
                zero = original(value)
                return Batched(np.zeros((count,) + np.shape(zero), dtype=np.result_type(zero)))
            return original(value)  # (a list's, a string's: as they are, refused where met with an adjoint)
        return zeros_like
    return batched


def _as_it_is(original: Callable) -> Callable:
    """A helper whose every operation on its argument is one ``Batched`` takes exactly (read to be so)."""
    return original


def _of_a_number(original: Callable) -> Callable:
    """``cos_of_number(x, d_out, d_x)`` (core/number_functions.py): ``x`` is a value of the primal, never
    batched; the adjoints beside it, batched, are arrays of directions, whose dtype NumPy's function keeps."""
    def of_a_number(x: Any, factor: Any = 1.0, addend: Any = 0.0) -> Any:
        return original(x, factor.data if isinstance(factor, Batched) else factor,
                        addend.data if isinstance(addend, Batched) else addend)
    return of_a_number


def _of_arrays(original: Callable) -> Callable:
    """``add_tangent``, ``mul_tangent`` (templates/operators.py): for array and number operands, ``+`` and the
    product rule, which ``Batched`` takes exactly; for sequences (concatenation, repetition) refused."""
    def of_arrays(*args: Any) -> Any:
        if _has_batched(args) and any(isinstance(a, (list, tuple)) for a in args):
            raise NotBatched(f"{original.__name__} of sequences")
        return original(*args)
    return of_arrays


def _matmul_grad(side: str) -> Callable[[Callable], Callable]:
    """``matmul_grad_a``/``_b`` (and ``dot_grad_*``), the adjoints of ``a @ b``, for vectors and matrices: written
    with the operations ``Batched`` takes exactly (one of the three a tangent); stacks refused."""
    def batched(original: Callable) -> Callable:
        def matmul_grad(grad: Any, a: Any, b: Any) -> Any:
            if not _has_batched((grad, a, b)):
                return original(grad, a, b)
            if sum(isinstance(v, Batched) for v in (grad, a, b)) != 1 or \
                    not all(1 <= _ndim(v) <= 2 for v in (a, b)):
                raise NotBatched(f"{original.__name__} beyond one tangent of vectors and matrices")
            if _ndim(a) == 1 and _ndim(b) == 1:
                return grad * (b if side == "a" else a)
            if side == "a":  # grad @ b.T, an outer product where b is a vector
                return grad[:, None] * b[None, :] if _ndim(b) == 1 else grad @ _t(b)
            return a[:, None] * grad[None, :] if _ndim(a) == 1 else _t(a) @ grad  # a.T @ grad
        return matmul_grad
    return batched


def _joined_grad(kind: str) -> Callable[[Callable], Callable]:
    """``concatenate_grad``/``stack_grad`` (templates/numpy_shape.py), the adjoints of ``np.concatenate`` and
    ``np.stack`` of a list or tuple: the batched adjoint split (or sliced) along the same logical axis, one
    piece per item, as the one-direction one is; of an array (NumPy iterating it), refused."""
    def batched(original: Callable) -> Callable:
        def joined_grad(grad: Any, arrays: Any, axis: Any = 0) -> Any:
            if not isinstance(grad, Batched):
                return original(grad, arrays, axis)
            if not isinstance(arrays, (list, tuple)) or _has_batched(arrays):
                raise NotBatched(f"{original.__name__} of an array, or of tangents")
            count = grad.data.shape[0]
            if kind == "stack":
                moved = np.moveaxis(grad.data, _axes(axis, grad.ndim), 1)
                return [Batched(moved[:, i]) for i in range(moved.shape[1])]
            if axis is None:
                flat = grad.data.reshape(count, -1)
                parts = np.split(flat, np.cumsum([np.size(a) for a in arrays])[:-1], axis=1)
                return [Batched(p.reshape((count,) + np.shape(a))) for p, a in zip(parts, arrays)]
            return [Batched(p) for p in np.split(grad.data, np.cumsum([np.shape(a)[axis] for a in arrays])[:-1],
                                                 axis=_axes(axis, grad.ndim))]
        return joined_grad
    return batched


def _declared(declared: BatchedForm) -> Callable:
    """A template's helper with a batched form declared beside it (``rules.batched``)."""
    def batched_helper(*args: Any, **kwargs: Any) -> Any:
        return run_declared(declared, args, kwargs)
    return batched_helper


def _t(x: Any) -> Any:
    return x.T if isinstance(x, Batched) or np.ndim(x) == 2 else x


# Where a list is put here, the helpers that refused batched tangents are appended to it (to see which to batch).
REFUSALS: Optional[list] = None

# s2s_ad's runtime helpers that take batched tangents (any other refuses them)
_HELPERS = {"getitem_grad": _getitem_grad, "if_inexact": _if_inexact, "writable_copy": _writable_copy,
            "zeros_like": _zeros_like,
            # np.shape, np.broadcast_to, .copy(), np.sum(axis=...), .reshape: all batched exactly
            "unbroadcast": _as_it_is, "unbroadcast_to": _as_it_is,
            "sin_of_number": _of_a_number, "cos_of_number": _of_a_number,
            "add_tangent": _of_arrays, "mul_tangent": _of_arrays, "mul_tangent_cross": _of_arrays,
            "matmul_grad_a": _matmul_grad("a"), "matmul_grad_b": _matmul_grad("b"),
            "dot_grad_a": _matmul_grad("a"), "dot_grad_b": _matmul_grad("b"),
            "concatenate_grad": _joined_grad("concatenate"), "stack_grad": _joined_grad("stack")}


def _ours(value: Any) -> bool:
    """One of s2s_ad's helpers (not generated code, which a sweep runs with its helpers replaced)."""
    module = getattr(value, "__module__", None) or ""
    return callable(value) and not is_generated(value) and not isinstance(value, type) and (
        module.startswith("s2s_ad.") or module.startswith("templates"))


def _replacements(function: FunctionType, count: int, reverse: bool = False) -> list[tuple[dict, str, Any]]:
    """For every generated module ``function`` runs, its helpers' batched (or refusing) stand-ins; with
    ``reverse``, for a reverse sweep whose adjoints are batched (``zeros_like`` starts one)."""
    helpers = dict(_HELPERS, zeros_like=_adjoint_zeros(count)) if reverse else _HELPERS
    changes: list[tuple[dict, str, Any]] = []
    seen, stack = IdentitySet(), [function]
    while stack:
        current = stack.pop()
        names = current.__globals__
        if names in seen:
            continue
        seen.add(names)
        stack.extend(_called(current))
        for name, value in names.items():
            if value is np:
                changes.append((names, name, _NUMPY))
            elif name == "zero_tangent":
                changes.append((names, name, _zero_tangent(count)))
            elif name in helpers:
                changes.append((names, name, helpers[name](value)))
            elif callable(value) and (declared := form_of(value)) is not None:
                changes.append((names, name, _declared(declared)))
            elif _ours(value.func if isinstance(value, functools.partial) else value):
                changes.append((names, name, _guarded(value)))
    return changes


class _BatchedHelpers:
    """While in it, the generated modules ``function`` runs (and the helpers they call) see the batched forms
    of their helpers and of ``np`` (``_replacements``); on leaving, their own again."""

    def __init__(self, function: FunctionType, count: int, reverse: bool = False) -> None:
        self._changes = _replacements(function, count, reverse)
        self._saved = [(names, name, names[name]) for names, name, _ in self._changes]

    def __enter__(self) -> None:
        for names, name, value in self._changes:
            names[name] = value

    def __exit__(self, *_: Any) -> None:
        for names, name, value in self._saved:
            names[name] = value


# what a sweep with an operation that has no batched form raises (see the module's docstring)
_REFUSED = (NotBatched, TypeError, AttributeError, ValueError, IndexError)


def batched_sweep(function: Callable, primals: tuple, tangents: tuple, count: int) -> Optional[tuple]:
    """``(result, tangents of the result with a leading axis of count)`` from one sweep of the tangent code
    ``function(*primals, *tangents)``, each tangent shaped ``(count,) + shape``; ``None`` where the sweep has
    an operation with no batched form (or ``function`` is compiled): the caller runs one sweep per direction."""
    if not isinstance(function, FunctionType) or not is_generated(function):
        return None  # (compiled code takes arrays only)
    try:
        with _BatchedHelpers(function, count):
            out, t_out = function(*primals, *(Batched(np.array(t, dtype=np.result_type(t, float)))
                                              for t in tangents))
            t_out = _unbatched(t_out, out, count)
    except _REFUSED:
        return None
    return out, t_out


def batched_pullback(backward: Callable, cotangent: Any, tape: Any, primals: tuple, count: int,
                     wanted: Optional[set] = None) -> Optional[tuple]:
    """Vector reverse mode: the adjoints of ``primals`` (the generated code's flat arguments), each shaped
    ``(count,) + primal.shape``, from one run of the split adjoint's reverse part ``backward(cotangent, tape)``
    with ``cotangent`` (an array, or a tuple of them for a container result) holding ``count`` directions on a
    leading axis.  The adjoint rules are the ordinary reverse sweep's; each adjoint is a ``Batched``, and every
    operation on it is taken direction by direction or refused, as in ``batched_sweep``.  ``None`` where the
    sweep has an operation with no batched form (the tape may be consumed and overwritten slices put back:
    the caller records it again) or ``backward`` is compiled: the caller pulls back one direction at a time.
    Only the adjoints of the positions ``wanted`` (all where None) are given; the others are None.""" 
    if not isinstance(backward, FunctionType) or not is_generated(backward):
        return None
    seeds = tuple(Batched(np.array(c, dtype=np.result_type(c, float))) for c in cotangent) \
        if isinstance(cotangent, tuple) else Batched(np.array(cotangent, dtype=np.result_type(cotangent, float)))
    try:
        with _BatchedHelpers(backward, count, reverse=True):
            adjoints = backward(seeds, tape)[:-1]
            return tuple(None if (a is None and not arguments.differentiable(p)) or (
                wanted is not None and i not in wanted) else _unbatched(a, p, count)
                for i, (a, p) in enumerate(zip(adjoints, primals)))
    except _REFUSED:
        return None


def stacked(values: list) -> Any:
    """One derivative per direction (an array, a number, a container of them, or None) stacked on a leading
    axis: a container's leaves each."""
    if values[0] is None:
        return None
    structure = containers.structure_of(values[0])
    if not isinstance(structure, containers.Tree):
        return np.stack([np.asarray(v) for v in values])
    leaves = [containers.leaves(v, structure) for v in values]
    return containers.unflatten(structure, [stacked([one[k] for one in leaves]) for k in range(len(leaves[0]))])


def direction(value: Any, d: int) -> Any:
    """Direction ``d`` of ``value``, an array with a leading axis of directions or a container of them."""
    structure = containers.structure_of(value)
    if not isinstance(structure, containers.Tree):
        return value[d]
    return containers.unflatten(structure, [leaf[d] for leaf in containers.leaves(value, structure)])


def _unbatched(tangent: Any, primal: Any, count: int) -> Any:
    """The data of a batched tangent of the result; a tangent that is all zero (no direction reached it)
    as ``count`` zeros of the result's shape; of a tuple or list result, a tuple or list of them."""
    if isinstance(primal, (tuple, list)) and type(tangent) is type(primal) and len(tangent) == len(primal):
        return type(primal)(_unbatched(t, o, count) for t, o in zip(tangent, primal))  # (a tuple result's)
    if isinstance(tangent, Batched):
        if tangent.data.shape[0] != count or tangent.shape != np.shape(primal):
            raise NotBatched("a result tangent of another shape")
        return np.array(tangent.data)
    if tangent is None or isinstance(tangent, tuple) or np.any(np.asarray(tangent) != 0):
        raise NotBatched("a result tangent that is not batched")
    return np.zeros((count,) + np.shape(primal))
