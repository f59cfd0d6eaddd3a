"""The Numba target's compiled versions of ``templates/numpy_shape.py``'s rules that copy elements:
np.tile, np.repeat along an axis (Numba's own repeats the flattened array only) and their adjoints
``tile_grad``, ``repeat_grad`` and ``take_grad`` (np.take's own is Numba's), each adding the adjoints
of an element's copies back into it; and np.ndim of an array or a number (Numba has none), which
np.hsplit's adjoint reads.

Input: float arrays (integer ones too for the NumPy functions), counts and indices as NumPy takes
them: ints, tuples of ints, integer arrays.  Output: NumPy's result, a new array.  A number where
NumPy takes an array, a 0-d array, or anything else runs as Python.

Each version must do what the Python function does for the types it accepts
(tests/targets/test_numba_copies.py compares the two); Numba is imported by no module here when loaded
(``numba.rules``).
"""
from __future__ import annotations

import functools
from typing import Any, Optional

import numpy as np

from ....rules import compiled
from ..kernels import axis_position, lengths_around, tuple_setitem as shared_tuple_setitem, written_out
from .argument_types import axis_form, is_int
from .template_modules import template

shape = template("numpy_shape")


def _reps_length(types: Any, reps: Any) -> Optional[int]:
    """How many counts ``reps`` gives np.tile (an int: one), or None where it is not ints."""
    if is_int(types, reps):
        return 1
    if isinstance(reps, types.UniTuple) and isinstance(reps.dtype, types.Integer) and len(reps) > 0:
        return len(reps)
    return None


def _tile_source(name: str, rank: int, count: int, reps_int: bool, adjoint: bool) -> str:
    """The source of np.tile (``adjoint`` False: ``name(A, reps)``) or of ``tile_grad``
    (``name(grad, a, reps)``) for an array of ``rank`` and ``count`` repetition counts, written out
    for their ranks (Numba types a tuple's length when compiling): ``full``, the array with ones put
    before its shape up to the result's rank, is read or added into at each position modulo its shape."""
    d = max(rank, count)
    array = "a" if adjoint else "A"  # (NumPy's names: Numba's overloads take the typing function's)
    sizes = ["1"] * (d - rank) + [f"{array}.shape[{i}]" for i in range(rank)]
    counts = ["1"] * (d - count) + (["reps"] if reps_int else [f"reps[{i}]" for i in range(count)])
    index = ", ".join(f"i{k}" for k in range(d))
    wrapped = ", ".join(f"i{k} % full.shape[{k}]" for k in range(d))
    body = [f"def {name}({'grad, a' if adjoint else 'A'}, reps):"]
    if adjoint:
        body += [f"    full = np.zeros(({', '.join(sizes)},), grad.dtype)",
                 f"    if grad.shape != ({', '.join(f'({c}) * full.shape[{k}]' for k, c in enumerate(counts))},):",
                 "        raise ValueError('the adjoint is not of the tiled shape')"]
        loops, shaped = "grad.shape", "    " * (d + 1) + f"full[{wrapped}] += grad[{index}]"
    else:
        body += [f"    full = np.ascontiguousarray(A).reshape(({', '.join(sizes)},))",
                 f"    out = np.empty(({', '.join(f'({c}) * full.shape[{k}]' for k, c in enumerate(counts))},), A.dtype)"]
        loops, shaped = "out.shape", "    " * (d + 1) + f"out[{index}] = full[{wrapped}]"
    body += ["    " * (k + 1) + f"for i{k} in range({loops}[{k}]):" for k in range(d)] + [shaped]
    body.append("    return full.reshape(a.shape)" if adjoint else "    return out")
    return "\n".join(body) + "\n"


@compiled(np.tile)
def _tile(types):
    """np.tile(A, reps) of an array of rank 1 or more, ``reps`` an int or a tuple of ints."""
    def typing(A, reps):
        count = _reps_length(types, reps)
        if not isinstance(A, types.Array) or A.ndim == 0 or count is None:
            return None
        return written_out(_tile_source("tiled", A.ndim, count, is_int(types, reps), False), "tiled", "tiled")
    return typing


@compiled(shape.tile_grad)
def _tile_grad(types):
    """tile_grad: each element of ``a`` the sum of the adjoints of its copies."""
    def typing(grad, a, reps):
        count = _reps_length(types, reps)
        if not isinstance(a, types.Array) or a.ndim == 0 or count is None or not isinstance(grad, types.Array) \
                or grad.dtype not in (types.float64, types.float32) or grad.ndim != max(a.ndim, count):
            return None
        return written_out(_tile_source("tile_summed", a.ndim, count, is_int(types, reps), True), "tile_summed",
                           "tile_summed")
    return typing


@functools.cache
def _repeating() -> Any:
    """``counts_of(repeats, n)``, ``repeated(a, counts, at)`` and ``gathered(grad, a, counts, at)``
    (compiled, Numba imported, built once): NumPy's counts broadcast to an axis of length ``n``
    (negative raise), the copies of ``a`` along the axis ``at``, and each position of ``a`` along it
    the sum of its copies' adjoints."""
    tuple_setitem = shared_tuple_setitem()
    from numba.extending import register_jitable

    @register_jitable
    def counts_of(repeats, n):
        given = np.asarray(repeats).ravel()
        if given.size != 1 and given.size != n:
            raise ValueError("operands could not be broadcast together")
        counts = np.empty(n, np.intp)
        for i in range(n):
            counts[i] = given[0 if given.size == 1 else i]
            if counts[i] < 0:
                raise ValueError("repeats may not contain negative values.")
        return counts

    around = lengths_around()

    @register_jitable
    def repeated(a, counts, at):
        outer, _, inner = around(a.shape, at)
        lined = np.ascontiguousarray(a).reshape((outer, a.shape[at], inner))
        out = np.empty((outer, counts.sum(), inner), a.dtype)
        k = 0
        for i in range(a.shape[at]):
            for _ in range(counts[i]):
                out[:, k, :] = lined[:, i, :]
                k += 1
        lengths: tuple = tuple_setitem(a.shape, at, counts.sum())
        return out.reshape(lengths)

    @register_jitable
    def gathered(grad, a_shape, counts, at):
        outer, _, inner = around(a_shape, at)
        total = counts.sum()
        if grad.size != outer * total * inner:
            raise ValueError("the adjoint is not of the repeated shape")
        lined = np.ascontiguousarray(grad).reshape((outer, total, inner))
        out = np.zeros((outer, a_shape[at], inner), grad.dtype)
        k = 0
        for i in range(a_shape[at]):
            for _ in range(counts[i]):
                out[:, i, :] += lined[:, k, :]
                k += 1
        return out.reshape(a_shape)

    return counts_of, repeated, gathered


def _counts(types: Any, repeats: Any) -> bool:
    """An int, or integers in a vector, a list or a tuple (``counts_of`` reads each by ``np.asarray``)."""
    if isinstance(repeats, types.List):
        return isinstance(repeats.dtype, types.Integer) and not isinstance(repeats.dtype, types.Boolean)
    if isinstance(repeats, types.BaseTuple):  # (a tuple the code spells: its items' literal types)
        return all(isinstance(t, types.Integer) and not isinstance(t, types.Boolean) for t in repeats.types)
    return is_int(types, repeats) or isinstance(repeats, types.Array) and isinstance(repeats.dtype, types.Integer) \
        and repeats.ndim <= 1


@compiled(np.repeat)
def _repeat(types):
    """np.repeat(a, repeats, axis) along an int axis or with axis=None given (Numba's own takes no axis)."""
    counts_of, repeated, _ = _repeating()
    axis_in = axis_position()

    def typing(a, repeats, axis=None):
        if not isinstance(a, types.Array) or a.ndim == 0 or not _counts(types, repeats):
            return None
        if axis is None or isinstance(axis, types.Omitted):  # no axis given: Numba's own, but for counts in a
            if is_int(types, repeats) or isinstance(repeats, types.Array):  # list or tuple, which it takes not
                return None
            return lambda a, repeats, axis=None: repeated(np.ascontiguousarray(a).reshape(-1),
                                                          counts_of(repeats, a.size), 0)
        kind = axis_form(types, axis)
        if not kind:
            return None
        if kind == "none":  # (given as None: the flattened array's elements repeated)
            return lambda a, repeats, axis=None: repeated(np.ascontiguousarray(a).reshape(-1),
                                                          counts_of(repeats, a.size), 0)
        return lambda a, repeats, axis=None: repeated(a, counts_of(repeats, a.shape[axis_in(axis, a.ndim)]),
                                                      axis_in(axis, a.ndim))
    return typing


@compiled(shape.repeat_grad)
def _repeat_grad(types):
    """repeat_grad: each element (along ``axis``: each position of it) the sum of its copies' adjoints."""
    counts_of, _, gathered = _repeating()
    axis_in = axis_position()

    def typing(grad, a, repeats, axis=None):
        kind = axis_form(types, axis)
        if not isinstance(a, types.Array) or a.ndim == 0 or not _counts(types, repeats) or not kind or \
                not isinstance(grad, types.Array) or grad.dtype not in (types.float64, types.float32):
            return None
        if kind == "none":
            return lambda grad, a, repeats, axis=None: \
                gathered(grad, (a.size,), counts_of(repeats, a.size), 0).reshape(a.shape)
        return lambda grad, a, repeats, axis=None: \
            gathered(grad, a.shape, counts_of(repeats, a.shape[axis_in(axis, a.ndim)]), axis_in(axis, a.ndim))
    return typing


@functools.cache
def _scattering() -> Any:
    """``scattered(grad, a_shape, flat_indices, at)`` (compiled, built once): zeros of ``a_shape``, each
    adjoint of ``grad`` (seen as (before, taken, after) around the axis ``at``) added at its index."""
    from numba.extending import register_jitable
    around = lengths_around()

    @register_jitable
    def scattered(grad, a_shape, indices, at):
        outer, n, inner = around(a_shape, at)
        if grad.size != outer * indices.size * inner:
            raise ValueError("the adjoint is not of the taken shape")
        lined = np.ascontiguousarray(grad).reshape((outer, indices.size, inner))
        out = np.zeros((outer, n, inner), grad.dtype)
        for k in range(indices.size):
            i = indices[k]
            if i < -n or i >= n:
                raise IndexError("index out of bounds")
            out[:, i + n if i < 0 else i, :] += lined[:, k, :]
        return out.reshape(a_shape)

    return scattered


@compiled(shape.take_grad)
def _take_grad(types):
    """take_grad: zeros of ``a``'s shape, each adjoint added at the index it was taken from (repeats add up)."""
    scattered = _scattering()
    axis_in = axis_position()

    def typing(grad, a, indices, axis=None):
        kind = axis_form(types, axis)
        taken = is_int(types, indices) or isinstance(indices, types.Array) and isinstance(indices.dtype, types.Integer)
        one = isinstance(grad, types.Float) and is_int(types, indices)  # (one element taken: its adjoint a number)
        if not isinstance(a, types.Array) or a.ndim == 0 or not taken or not kind or not one and \
                (not isinstance(grad, types.Array) or grad.dtype not in (types.float64, types.float32)):
            return None
        if kind == "none":
            return lambda grad, a, indices, axis=None: \
                scattered(np.asarray(grad), (a.size,), np.asarray(indices).ravel(), 0).reshape(a.shape)
        return lambda grad, a, indices, axis=None: \
            scattered(np.asarray(grad), a.shape, np.asarray(indices).ravel(), axis_in(axis, a.ndim))
    return typing


@compiled(np.ndim)
def _ndim(types):
    """np.ndim of an array (its rank, known when compiling) or of a number (0)."""
    def typing(a):
        if isinstance(a, types.Array):
            rank = a.ndim
            return lambda a: rank
        if isinstance(a, (types.Number, types.Boolean)):
            return lambda a: 0
        return None
    return typing
