"""Compiled kernels shared by the compiled versions in ``numba.rules`` (``rules.compiled``, backend="numba").

Input: nothing at import (Numba is imported only when a kernel is first asked for).  Output: functions
compiled once per process and called by every typing specialisation that needs them, so that each
overload does not compile (and LLVM optimise) its own inlined copy.  The numbers are NumPy's, bit for
bit: ``summed_line`` adds as NumPy's float reductions do (pairwise along a contiguous line, as
numpy's ``pairwise_sum``, from 0.0; in order along a strided one).
"""
from __future__ import annotations

import functools
from typing import Any

import numpy as np


def written_out(source: str, name: str, label: str, **around: Any) -> Any:
    """The function ``name`` that ``source`` defines: code written out for one case's types (a count of
    items, an axis, the operands of an einsum), which Numba compiles where it cannot loop over them.
    Its globals are NumPy as ``np`` and ``around``; ``label`` names it in a traceback."""
    namespace: dict[str, Any] = {"np": np, **around}
    exec(compile(source, f"<s2s_ad numba {label}>", "exec"), namespace)  # noqa: S102 (our own text)
    return namespace[name]


@functools.cache
def pairwise_sum() -> Any:
    """numpy's pairwise_sum of ``flat[start:start + n]``, compiled (njit: it calls itself)."""
    from numba import njit

    @njit(cache=False)
    def pairwise(flat: Any, start: int, n: int) -> float:
        if n < 8:
            total = 0.0
            for i in range(n):
                total += flat[start + i]
            return total
        if n <= 128:
            r0, r1, r2, r3 = flat[start], flat[start + 1], flat[start + 2], flat[start + 3]
            r4, r5, r6, r7 = flat[start + 4], flat[start + 5], flat[start + 6], flat[start + 7]
            i = 8
            while i < n - n % 8:
                r0 += flat[start + i]
                r1 += flat[start + i + 1]
                r2 += flat[start + i + 2]
                r3 += flat[start + i + 3]
                r4 += flat[start + i + 4]
                r5 += flat[start + i + 5]
                r6 += flat[start + i + 6]
                r7 += flat[start + i + 7]
                i += 8
            total = ((r0 + r1) + (r2 + r3)) + ((r4 + r5) + (r6 + r7))
            while i < n:
                total += flat[start + i]
                i += 1
            return total
        half = n // 2
        half -= half % 8
        return pairwise(flat, start, half) + pairwise(flat, start + half, n - half)
    return pairwise


@functools.cache
def summed_line() -> Any:
    """``summed(flat, base, count, inner)``: the float sum of ``flat[base + i * inner]`` for i < count,
    as np.sum over that axis of a C-contiguous array adds it (pairwise where ``inner`` is 1)."""
    from numba import njit
    pairwise = pairwise_sum()

    @njit(cache=False)
    def summed(flat: Any, base: int, count: int, inner: int) -> float:
        if inner == 1:
            return pairwise(flat, base, count)
        total = 0.0
        for i in range(count):
            total += flat[base + i * inner]
        return total
    return summed


@functools.cache
def lengths_around() -> Any:
    """``around(shape, position)``: (the count of elements before the axis ``position`` of an array of
    that shape, the axis's length, the count after it): a C-contiguous array read as
    ``flat[(p * count + i) * inner + k]``, the lines along the axis one per (p, k).  Inlined where it
    is called (register_jitable): it is a few multiplications."""
    from numba.extending import register_jitable

    @register_jitable
    def around(shape: Any, position: int) -> tuple[int, int, int]:
        outer = 1
        for j in range(position):
            outer *= shape[j]
        inner = 1
        for j in range(position + 1, len(shape)):
            inner *= shape[j]
        return outer, shape[position], inner
    return around


@functools.cache
def axis_position() -> Any:
    """``axis_in(axis, ndim)``: NumPy's axis (negative counts from the end) as a position in
    ``range(ndim)``; out of range raises ValueError (NumPy's AxisError is one).  Inlined where called."""
    from numba.extending import register_jitable

    @register_jitable
    def axis_in(axis: int, ndim: int) -> int:
        if axis < -ndim or axis >= ndim:
            raise ValueError("axis is out of bounds for array")
        return axis + ndim if axis < 0 else axis
    return axis_in


@functools.cache
def tuple_setitem() -> Any:
    """Numba's ``tuple_setitem(t, i, v)``: ``t`` with its item ``i`` replaced (an index tuple changed in
    one axis, in compiled code).  An intrinsic: its typing is Numba's, not mypy's."""
    from numba.cpython.unsafe import tuple as unsafe_tuple
    return unsafe_tuple.tuple_setitem
