"""The Numba target's compiled versions of ``templates/numpy_linalg.py``'s helpers: matmul's and dot's
adjoints (``matmul_grad_a``, ``matmul_grad_b``, ``dot_grad_a``, ``dot_grad_b``) for float vectors and
matrices, ``inverse_axes`` (which the adjoint of ``.T`` and ``np.transpose`` calls), ``solve_columns``,
``trace_grad``, np.einsum with ``einsum_grad`` (a loop nest written for the subscripts), ``cross_grad``
(np.cross's adjoint) of 3-vectors along the last axis, and np.kron's adjoint's ``kron_blocks``,
``kron_spread`` and ``kron_axes`` (reshapes and axes whose lengths the ranks fix when compiling; the
kron of two numbers runs as Python), and np.tensordot and np.inner (Numba has neither) with their adjoints'
``inner_axes`` and ``tensordot_adjoint_plan``, where the count of contracted axes is known when compiling.

Each version must do what the Python helper does for the types it accepts (tests/targets/test_numba_backend.py
compares the two); Numba is imported by no module here when loaded (``numba.rules``).
"""
from __future__ import annotations

import functools
from typing import Any, Optional

import numpy as np

from ....rules import compiled
from ..kernels import written_out
from .argument_types import rank_of
from .template_modules import template

linalg = template("numpy_linalg")


# -- matmul's and dot's adjoints: float vectors and matrices ------------------------------------------
# The same products of the same shapes as the helpers (a vector promoted to a row or column), by
# Numba's matrix product (BLAS, as NumPy's: the same sums, to the rounding of the BLAS each links).

def _vectors_or_matrices(types: Any, *operands: Any) -> bool:
    return all(isinstance(x, types.Array) and x.dtype == types.float64 and x.ndim in (1, 2) for x in operands)


def _product_adjoint(types: Any, which: int) -> Any:
    """The typing function of matmul_grad_a (``which`` 0) or matmul_grad_b (1) for these operands."""
    def typing(grad, a, b):
        if not _vectors_or_matrices(types, a, b):
            return None
        if a.ndim == 1 and b.ndim == 1:  # an inner product: grad is a number
            if not isinstance(grad, types.Float):
                return None
            return (lambda grad, a, b: grad * b) if which == 0 else (lambda grad, a, b: grad * a)
        if not _vectors_or_matrices(types, grad) or grad.ndim != a.ndim + b.ndim - 2:
            return None
        if a.ndim == 2 and b.ndim == 2:
            if which == 0:
                return lambda grad, a, b: np.ascontiguousarray(grad) @ np.ascontiguousarray(b).T
            return lambda grad, a, b: np.ascontiguousarray(a).T @ np.ascontiguousarray(grad)
        if a.ndim == 1:  # a row (1, k) times b (k, n): grad is a row (1, n)
            if which == 0:
                return lambda grad, a, b: (np.ascontiguousarray(grad).reshape((1, -1)) @ np.ascontiguousarray(b).T)[0]
            return lambda grad, a, b: np.ascontiguousarray(a).reshape((1, -1)).T @ np.ascontiguousarray(grad).reshape((1, -1))
        if which == 0:  # a (m, k) times b, a column (k, 1): grad is a column (m, 1)
            return lambda grad, a, b: np.ascontiguousarray(grad).reshape((-1, 1)) @ np.ascontiguousarray(b).reshape((-1, 1)).T
        return lambda grad, a, b: (np.ascontiguousarray(a).T @ np.ascontiguousarray(grad).reshape((-1, 1)))[:, 0].copy()
    return typing


# (np.dot of vectors and matrices is their matmul: dot_grad_a and dot_grad_b call matmul's adjoints there;
# declared below, integer operands included)


@compiled(linalg.inverse_axes)
def _inverse_axes(types):
    """inverse_axes compiled (the adjoint of ``.T`` and ``np.transpose(a, axes)`` calls it): None for None,
    and for a tuple of ints its argsort as a tuple of as many ints."""
    from numba.np.unsafe import ndarray as unsafe_ndarray
    to_fixed_tuple: Any = unsafe_ndarray.to_fixed_tuple  # (an intrinsic: its typing is Numba's, not mypy's)

    def typing(axes):
        if isinstance(axes, types.NoneType):
            return lambda axes: None
        if not isinstance(axes, types.BaseTuple) or not all(isinstance(t, types.Integer) for t in axes):
            return None
        count = len(axes)
        if count == 0:
            return lambda axes: ()

        def inverse(axes):
            return to_fixed_tuple(np.argsort(np.array(axes)), count)
        return inverse
    return typing


# -- np.dot of an integer array and a float one: the integers as floats, as NumPy casts them -----------

@compiled(np.dot)
def _dot(types):
    """np.dot(a, b) of vectors or matrices, one of integers and the other of float64 (Numba's own takes
    operands of one float dtype): the integers cast to float64 first, as NumPy does, then the product."""
    def typing(a, b, out=None):
        if out is not None and not isinstance(out, (types.NoneType, types.Omitted)):
            return None
        if not all(isinstance(x, types.Array) and x.ndim in (1, 2) for x in (a, b)):
            return None
        kinds = {a.dtype, b.dtype}
        if types.float64 not in kinds or len(kinds) != 2 or not all(
                d == types.float64 or isinstance(d, types.Integer) and not isinstance(d, types.Boolean) for d in kinds):
            return None
        return lambda a, b, out=None: np.dot(a.astype(np.float64), b.astype(np.float64))
    return typing


# (an integer operand of matmul's or dot's adjoint: cast to float64 first, as NumPy's product does)
def _integer_or_float(types: Any, *operands: Any) -> bool:
    return all(isinstance(x, types.Array) and x.ndim in (1, 2) and
               (x.dtype == types.float64 or isinstance(x.dtype, types.Integer) and not isinstance(x.dtype, types.Boolean))
               for x in operands)


def _product_adjoint_of_integers(types: Any, which: int) -> Any:
    """matmul's or dot's adjoint (``_product_adjoint``), the operand not differentiated possibly of
    integers (a constant ``np.arange(3)`` times x): cast to float64 first."""
    floats = _product_adjoint(types, which)

    def typing(grad, a, b):
        found = floats(grad, a, b)
        if found is not None:
            return found
        if not _integer_or_float(types, a, b) or (which == 1 and b.dtype != types.float64) or \
                (which == 0 and a.dtype != types.float64):
            return None
        cast_a, cast_b = types.Array(types.float64, a.ndim, "C"), types.Array(types.float64, b.ndim, "C")
        if floats(grad, cast_a, cast_b) is None:
            return None
        if which == 0:
            return lambda grad, a, b: linalg.matmul_grad_a(grad, a.astype(np.float64), b.astype(np.float64))
        return lambda grad, a, b: linalg.matmul_grad_b(grad, a.astype(np.float64), b.astype(np.float64))
    return typing


compiled(linalg.dot_grad_a)(lambda types: _product_adjoint_of_integers(types, 0))
compiled(linalg.dot_grad_b)(lambda types: _product_adjoint_of_integers(types, 1))
compiled(linalg.matmul_grad_a)(lambda types: _product_adjoint_of_integers(types, 0))
compiled(linalg.matmul_grad_b)(lambda types: _product_adjoint_of_integers(types, 1))


# -- np.linalg.solve's solve_columns, and np.trace's trace_grad ----------------------------------------

@compiled(linalg.solve_columns)
def _solve_columns(types):
    """solve_columns: ``x`` with a trailing axis of length 1 where np.linalg.solve reads ``b`` as vectors
    (1-d in NumPy 2, one dimension fewer than ``a`` in NumPy 1), else ``x`` itself."""
    vectors_only_1d = linalg._SOLVE_VECTORS_ONLY_1D

    def typing(x, a, b):
        if not isinstance(a, types.Array):
            return None
        b_ndim = b.ndim if isinstance(b, types.Array) else 0 if isinstance(b, (types.Float, types.Integer)) else None
        if b_ndim is None:
            return None
        vectors = b_ndim == 1 if vectors_only_1d else b_ndim == a.ndim - 1
        if isinstance(x, types.Array) and x.ndim >= 1 and vectors:
            return lambda x, a, b: np.expand_dims(x, -1)
        if isinstance(x, (types.Array, types.Float, types.Integer)):
            return lambda x, a, b: x
        return None
    return typing


@compiled(linalg.trace_grad)
def _trace_grad(types):
    """trace_grad of a matrix (the trace a number): ``grad`` on the ``offset`` diagonal of zeros."""
    def typing(grad, a, offset=0, axis1=0, axis2=1):
        if not isinstance(a, types.Array) or a.ndim != 2 or not isinstance(grad, (types.Float, types.Integer)) \
                or isinstance(grad, types.Boolean):
            return None

        def spread(grad, a, offset=0, axis1=0, axis2=1):
            rows, columns = a.shape[0], a.shape[1]
            if axis1 < -2 or axis1 > 1 or axis2 < -2 or axis2 > 1:
                raise ValueError("axis out of bounds")  # (run again as Python: NumPy's AxisError)
            first, second = axis1 % 2, axis2 % 2
            if first == second:
                raise ValueError("axis1 and axis2 cannot be the same")
            out = np.zeros((rows, columns))
            for i in range(rows):  # (a position (i, j) of axis1 i, axis2 j; swapped where axis1 is 1)
                for j in range(columns):
                    along, across = (i, j) if first == 0 else (j, i)
                    if across - along == offset:
                        out[i, j] = grad
            return out
        return spread
    return typing


# -- np.einsum and einsum_grad: subscripts of letters, float64 operands, by a loop nest -----------------
# The subscripts are constants in generated code: Numba types them as literals, and each version is
# written for its subscripts and ranks (one loop per letter, each operand read at its letters' indexes,
# a length 1 broadcast as NumPy broadcasts it).  Not compiled: "..." (broadcast axes), operands of other
# dtypes or of no axes, and np.einsum of one operand that sums nothing (NumPy's result is a view there).

def _einsum_terms(subscripts: str, ndims: tuple[int, ...]) -> Optional[tuple[list[str], str]]:
    """The operands' terms and the output's term of ``subscripts`` for operands of ``ndims`` axes, as
    np.einsum reads them (no "->": the letters met once, sorted); None where the versions do not compile."""
    spec = subscripts.replace(" ", "")
    inputs, arrow, output = spec.partition("->")
    terms = inputs.split(",")
    if "." in spec or len(terms) != len(ndims) or any(len(t) != n or n == 0 for t, n in zip(terms, ndims)):
        return None
    letters = "".join(terms)
    if not arrow:
        output = "".join(sorted(c for c in set(letters) if letters.count(c) == 1))
    if not all(c.isascii() and c.isalpha() for c in letters + output) or len(set(output)) != len(output) \
            or any(c not in letters for c in output):
        return None
    return terms, output


def _einsum_source(signature: str, bound: list[str], read: list[tuple[str, str]], into: tuple[str, str, str],
                   shaped: list[tuple[str, str]], zeros: str) -> str:
    """A function ``signature`` that binds ``bound``, takes each letter's length from the arrays
    ``shaped`` (name, term: equal lengths or 1, NumPy's broadcasting; a letter repeated within one term of
    one length), and sums the product of the arrays ``read`` (a name with no term: a number) over every
    letter into ``into`` (name, term, and the array of ``shaped`` whose shape it has, "" for the
    lengths of its letters; made by ``zeros``, a number where the term is empty)."""
    letters = "".join(dict.fromkeys("".join(term for _, term in shaped)))
    lines = [f"def impl({signature}):"] + [f"    {line}" for line in bound]
    lines += [f"    n_{c} = 1" for c in letters]
    for name, term in shaped:
        for axis, c in enumerate(term):
            first = term.index(c)
            if first < axis:  # (a diagonal: the same length, no broadcasting)
                lines.append(f"    if {name}.shape[{axis}] != {name}.shape[{first}]:")
                lines.append(f"        raise ValueError('einsum: the lengths of a repeated subscript differ')")
            lines.append(f"    n_{c} = _joined(n_{c}, {name}.shape[{axis}])")
    for name, term in shaped:  # (a step of 0 reads a length 1 broadcast)
        lines += [f"    s_{name}_{axis} = 1 if {name}.shape[{axis}] == n_{c} else 0" for axis, c in enumerate(term)]
    target, target_term, target_shape = into
    lines.append(f"    {target} = {zeros}")
    depth = "    "
    for c in letters:
        lines.append(f"{depth}for i_{c} in range(n_{c}):")
        depth += "    "

    def element(name: str, term: str, steps: str) -> str:
        if not term:
            return name
        if not steps:
            return f"{name}[{', '.join(f'i_{c}' for c in term)}]"
        return f"{name}[{', '.join(f'i_{c} * s_{steps}_{axis}' for axis, c in enumerate(term))}]"
    product = " * ".join(element(name, term, name) for name, term in read)
    lines.append(f"{depth}{element(target, target_term, target_shape)} += {product}")
    lines.append(f"    return {target}")
    return "\n".join(lines) + "\n"


@functools.cache
def _einsum_joined() -> Any:
    from numba.extending import register_jitable

    @register_jitable
    def joined(n, m):
        """The length of a letter met with lengths ``n`` and ``m`` (1 gives way), as NumPy broadcasts."""
        if n == 1 or n == m:
            return m
        if m == 1:
            return n
        raise ValueError("einsum: operands could not be broadcast together")
    return joined


def _einsum_function(source: str) -> Any:
    return written_out(source, "impl", "einsum", _joined=_einsum_joined())


def _float_arrays(types: Any, *operands: Any) -> bool:
    return all(isinstance(x, types.Array) and x.dtype == types.float64 and x.ndim >= 1 for x in operands)


@compiled(np.einsum)
def _einsum(types):
    """np.einsum(subscripts, *operands) of float64 arrays (Numba has none): the sum of products over
    the letters no output axis keeps, a number where the output has no axes (NumPy's float64)."""
    def typing(subscripts, *operands):
        if not isinstance(subscripts, types.StringLiteral) or not _float_arrays(types, *operands):
            return None
        parsed = _einsum_terms(subscripts.literal_value, tuple(op.ndim for op in operands))
        if parsed is None:
            return None
        terms, output = parsed
        if len(terms) == 1 and set(output) == set(terms[0]):
            return None  # (nothing summed: NumPy's result is a view of the operand)
        names = [f"a{i}" for i in range(len(terms))]
        shape = "".join(f"n_{c}, " for c in output)
        source = _einsum_source("subscripts, *operands", [f"{n} = operands[{i}]" for i, n in enumerate(names)],
                                list(zip(names, terms)), ("out", output, ""), list(zip(names, terms)),
                                f"np.zeros(({shape}))" if output else "0.0")
        return _einsum_function(source)
    return typing


@compiled(linalg.einsum_grad)
def _einsum_grad(types):
    """einsum_grad: the adjoint of operand ``which`` (shaped like ``like``) summed, for every letter,
    from the result's adjoint times the other operands; a letter repeated in the operand's term fills a
    diagonal, one its term alone has is spread, a length 1 of ``like`` sums what was broadcast."""
    def typing(grad, subscripts, which, like, *slots):
        if not isinstance(subscripts, types.StringLiteral) or not isinstance(which, types.IntegerLiteral):
            return None
        count = subscripts.literal_value.count(",") + 1
        mine = which.literal_value
        if not 0 <= mine < count <= len(slots) or not _float_arrays(types, like) \
                or not _float_arrays(types, *(slots[i] for i in range(count) if i != mine)):
            return None
        parsed = _einsum_terms(subscripts.literal_value, tuple(like.ndim if i == mine else slots[i].ndim
                                                               for i in range(count)))
        if parsed is None:
            return None
        terms, output = parsed
        number = isinstance(grad, (types.Float, types.Integer)) and not isinstance(grad, types.Boolean)
        if not number and not (_float_arrays(types, grad) and grad.ndim == len(output)):
            return None  # (a number: the adjoint of every element of the result, as broadcast)
        others = [(f"a{i}", terms[i]) for i in range(count) if i != mine]
        bound = [f"{name} = slots[{name[1:]}]" for name, _ in others]
        for i in range(count, len(slots)):  # (a slot past the operands holding 0: a missing tangent, zeros)
            if isinstance(slots[i], (types.Float, types.Integer)):
                bound += [f"if slots[{i}] == 0:", "    return np.zeros(like.shape)"]
            elif not isinstance(slots[i], (types.NoneType, types.Omitted)):
                return None
        shaped = ([] if number else [("grad", output)]) + others + [("like", terms[mine])]
        source = _einsum_source("grad, subscripts, which, like, *slots", bound,
                                [("grad", "" if number else output)] + others,
                                ("out", terms[mine], "like"), shaped, "np.zeros(like.shape)")
        return _einsum_function(source)
    return typing


# -- np.cross's adjoint ---------------------------------------------------------------------------

@compiled(linalg.cross_grad)
def _cross_grad(types):
    """cross_grad of 3-vectors along the last axis of each operand (the axes -1 or the last, no
    ``axis=``): ``sign * cross(other, grad)``, NumPy's products and differences, where ``other`` is
    shaped like ``grad`` or one 3-vector, and ``like`` is shaped like ``grad`` or one 3-vector (the
    rows' results then summed in order).  Other shapes and axes (2-vectors, another axis) raise
    ValueError here and run as Python."""
    def typing(grad, other, like, axis_other, axis_like, axisc, axis, sign):
        floats = all(isinstance(x, types.Array) and x.dtype == types.float64 and x.ndim >= 1 for x in (grad, other))
        axes = all(isinstance(a, types.Integer) and not isinstance(a, types.Boolean)
                   for a in (axis_other, axis_like, axisc))
        if not (floats and axes and isinstance(like, types.Array) and like.ndim >= 1
                and (other.ndim in (1, grad.ndim)) and (like.ndim in (1, grad.ndim))
                and isinstance(axis, types.NoneType) and isinstance(sign, (types.Float, types.Integer))):
            return None

        def crossed(grad, other, like, axis_other, axis_like, axisc, axis, sign):
            last = (axis_other % other.ndim == other.ndim - 1 and axis_like % like.ndim == like.ndim - 1
                    and axisc % grad.ndim == grad.ndim - 1)
            if not last or grad.shape[-1] != 3 or other.shape[-1] != 3 or like.shape[-1] != 3 \
                    or (other.ndim > 1 and other.shape != grad.shape) or (like.ndim > 1 and like.shape != grad.shape):
                raise ValueError("cross_grad: shapes or axes the compiled version leaves to Python")
            g = np.ascontiguousarray(grad).reshape(-1, 3)
            o = np.ascontiguousarray(other).reshape(-1, 3)
            rows = g.shape[0]
            summed = like.ndim == 1 and grad.ndim > 1
            out = np.zeros((1 if summed else rows, 3))
            for r in range(rows):
                q = r if o.shape[0] > 1 else 0
                at = 0 if summed else r
                out[at, 0] += (o[q, 1] * g[r, 2] - o[q, 2] * g[r, 1]) * sign
                out[at, 1] += (o[q, 2] * g[r, 0] - o[q, 0] * g[r, 2]) * sign
                out[at, 2] += (o[q, 0] * g[r, 1] - o[q, 1] * g[r, 0]) * sign
            return out.reshape(like.shape)
        return crossed
    return typing


# -- np.kron's adjoint: its blocks and spreads (reshapes, the ranks known when compiling) ---------------

def _interleaving(types: Any) -> Any:
    """``interleaved(first, second, template)`` (compiled, built once): the lengths of ``first`` and
    ``second`` (of one count) taken in turn, written into ``template`` (a tuple of twice that count)."""
    from numba.extending import register_jitable
    from ..kernels import tuple_setitem
    setitem = tuple_setitem()

    @register_jitable
    def interleaved(first, second, template):
        shape = template
        for k in range(len(first)):
            shape = setitem(shape, 2 * k, first[k])
            shape = setitem(shape, 2 * k + 1, second[k])
        return shape
    return interleaved


@compiled(linalg.kron_blocks)
def _kron_blocks(types):
    """kron_blocks: ``grad`` reshaped to the lengths of ``a`` and ``b`` in turn (each padded with leading
    1s to the larger rank), a copy where ``grad`` is not C-contiguous."""
    interleaved = _interleaving(types)

    def typing(grad, a, b):
        ranks = (rank_of(types, a), rank_of(types, b))
        if not isinstance(grad, types.Array) or min(ranks) < 0 or max(ranks) == 0:
            return None  # (two numbers: run as Python)
        nd = max(ranks)
        pad_a, pad_b, template = (1,) * (nd - ranks[0]), (1,) * (nd - ranks[1]), (0,) * (2 * nd)

        def blocks(grad, a, b):
            shape = interleaved(pad_a + np.shape(a), pad_b + np.shape(b), template)
            return np.ascontiguousarray(grad).reshape(shape)
        return blocks
    return typing


@compiled(linalg.kron_spread)
def _kron_spread(types):
    """kron_spread: ``x`` reshaped with a 1 in turn with each of its lengths (before them for operand 1,
    after them for operand 0), padded with leading 1s to the larger rank; ``which`` a literal."""
    interleaved = _interleaving(types)

    def typing(x, other, which):
        ranks = (rank_of(types, x), rank_of(types, other))
        if min(ranks) < 0 or max(ranks) == 0 or not isinstance(which, types.IntegerLiteral) \
                or which.literal_value not in (0, 1):
            return None  # (two numbers: run as Python)
        nd = max(ranks)
        pad, ones, template = (1,) * (nd - ranks[0]), (1,) * nd, (0,) * (2 * nd)
        first = which.literal_value == 0

        def spread(x, other, which):
            lengths = pad + np.shape(x)
            shape = interleaved(lengths, ones, template) if first else interleaved(ones, lengths, template)
            return np.ascontiguousarray(np.asarray(x)).reshape(shape)
        return spread
    return typing


@compiled(linalg.kron_axes)
def _kron_axes(types):
    """kron_axes: every other axis of the blocks, from 1 for operand 0 and from 0 for operand 1."""
    def typing(a, b, which):
        ranks = (rank_of(types, a), rank_of(types, b))
        if min(ranks) < 0 or not isinstance(which, types.IntegerLiteral):
            return None
        axes = linalg.kron_axes(np.zeros((1,) * ranks[0]), np.zeros((1,) * ranks[1]), which.literal_value)
        return lambda a, b, which: axes
    return typing


# -- np.tensordot and np.inner, and the plan of their adjoints -------------------------------------------
# A contraction compiles where the count of axes it contracts is known when compiling (the result's rank
# follows from it): ``axes`` an int literal (or tensordot's default, 2), a pair of ints (np.inner's last
# axes, ``inner_axes``) or a pair of int tuples of one length (what ``tensordot_adjoint_plan`` returns);
# which axes they are may be known only when running.  As NumPy computes it: both operands transposed
# so the contracted axes meet, made contiguous, reshaped to matrices and multiplied (Numba's matrix
# product: BLAS, as NumPy's; the same sums, to the rounding of the BLAS each links).

def _contracted_count(types: Any, axes: Any) -> Optional[int]:
    """How many axes of each operand ``axes`` contracts, where its type says so; else None."""
    if isinstance(axes, types.Omitted) or type(axes) is int:  # (the default left out, or the default itself)
        value = axes.value if isinstance(axes, types.Omitted) else axes
        return value if type(value) is int and value >= 0 else None
    if isinstance(axes, types.IntegerLiteral):
        return axes.literal_value if axes.literal_value >= 0 else None
    if not isinstance(axes, types.BaseTuple) or len(axes) != 2:
        return None
    if all(isinstance(side, types.Integer) and not isinstance(side, types.Boolean) for side in axes):
        return 1
    lengths = [_listed_length(types, side) for side in axes]
    return lengths[0] if lengths[0] is not None and lengths[0] == lengths[1] else None


def _listed_length(types: Any, side: Any) -> Optional[int]:
    """How many axes one side of tensordot's ``axes`` lists: a tuple of ints, or a list of ints written out
    in the code (Numba keeps a list literal's items as its ``initial_value``; the length is checked again
    when running: ``_axes_arrays``)."""
    def integer(t: Any) -> bool:
        return isinstance(t, types.Integer) and not isinstance(t, types.Boolean)
    if isinstance(side, types.BaseTuple) and all(integer(t) for t in side):
        return len(side)
    if isinstance(side, types.List) and integer(side.dtype) and getattr(side, "initial_value", None) is not None:
        return len(side.initial_value)
    return None


def _axes_arrays(types: Any, axes: Any, count: int) -> Any:
    """``lists(axes, na, nb)`` (compiled, for this type of ``axes``): the contracted axes of each operand as
    int arrays, each made non-negative (NumPy's ``% ndim``), in ``axes``'s order."""
    from numba.extending import register_jitable

    if isinstance(axes, (types.Omitted, types.IntegerLiteral)) or type(axes) is int:
        @register_jitable
        def last_and_first(axes, na, nb):
            return np.arange(na - count, na), np.arange(0, count)
        return last_and_first
    if count == 0:  # (two empty tuples: an outer product)
        @register_jitable
        def none_each(axes, na, nb):
            return np.empty(0, np.int64), np.empty(0, np.int64)
        return none_each
    if isinstance(axes[0], types.Integer):
        @register_jitable
        def one_each(axes, na, nb):
            return np.array([axes[0] % na]), np.array([axes[1] % nb])
        return one_each

    @register_jitable
    def listed(axes, na, nb):
        if len(axes[0]) != count or len(axes[1]) != count:  # (a list grown since it was written: Python's code)
            raise ValueError("tensordot: the axes changed length")
        first, second = np.empty(count, np.int64), np.empty(count, np.int64)
        for i in range(count):
            first[i] = axes[0][i] % na
            second[i] = axes[1][i] % nb
        return first, second
    return listed


def _contraction_helpers(types: Any) -> Any:
    """``(free, as_tuple)``, compiled: an operand's axes not among ``contracted`` (ascending), and an int
    array as a tuple of a length known when compiling (the empty tuple for 0)."""
    from numba.extending import register_jitable
    from numba.np.unsafe import ndarray as unsafe_ndarray
    to_fixed_tuple: Any = unsafe_ndarray.to_fixed_tuple  # (an intrinsic: its typing is Numba's, not mypy's)

    @register_jitable
    def free(contracted, rank):
        kept = np.empty(rank - contracted.size, np.int64)
        n = 0
        for axis in range(rank):
            if not np.any(contracted == axis):
                if n == kept.size:  # (an axis contracted twice: NumPy refuses it too)
                    raise ValueError("tensordot: an axis is contracted twice")
                kept[n] = axis
                n += 1
        return kept

    def as_tuple(length: int) -> Any:
        if length == 0:
            return register_jitable(lambda values: ())
        return register_jitable(lambda values: to_fixed_tuple(values, length))
    return free, as_tuple


def _contraction(types: Any, na: int, nb: int, count: int, lists: Any, as_number: bool) -> Any:
    """``contract(a, b, axes)`` (compiled) for float64 arrays of ranks ``na`` and ``nb`` contracting ``count``
    axes each: NumPy's tensordot (a 0-d array where nothing is left, a number where ``as_number``)."""
    from numba.extending import register_jitable
    from ..kernels import tuple_setitem
    free, as_tuple = _contraction_helpers(types)
    setitem = tuple_setitem()
    order_a, order_b = as_tuple(na), as_tuple(nb)
    rank = na + nb - 2 * count
    template_shape = (0,) * rank

    if rank == 0:  # (nothing left: no lengths to write into a shape)
        @register_jitable
        def shaped(product, a, b, fa, fb):
            return product.reshape(())
    else:
        @register_jitable
        def shaped(product, a, b, fa, fb):
            shape = template_shape
            for i in range(fa.size):
                shape = setitem(shape, i, a.shape[fa[i]])
            for i in range(fb.size):
                shape = setitem(shape, fa.size + i, b.shape[fb[i]])
            return product.reshape(shape)

    @register_jitable
    def contract(a, b, axes):
        ca, cb = lists(axes, na, nb)
        fa, fb = free(ca, na), free(cb, nb)
        m, k, n = 1, 1, 1
        for i in range(count):
            if a.shape[ca[i]] != b.shape[cb[i]]:
                raise ValueError("shape-mismatch for sum")
            k *= a.shape[ca[i]]
        for i in range(fa.size):
            m *= a.shape[fa[i]]
        for i in range(fb.size):
            n *= b.shape[fb[i]]
        left = np.ascontiguousarray(np.transpose(a, order_a(np.concatenate((fa, ca))))).reshape((m, k))
        right = np.ascontiguousarray(np.transpose(b, order_b(np.concatenate((cb, fb))))).reshape((k, n))
        product = np.zeros((m, n)) if m == 0 or n == 0 or k == 0 else left @ right
        if as_number:
            return product[0, 0]
        return shaped(product, a, b, fa, fb)
    return contract


def _float_operands(types: Any, a: Any, b: Any) -> tuple[int, int]:
    """The ranks of ``a`` and ``b`` where each is a float64 array or number, else (-1, -1)."""
    if not all(isinstance(x, types.Float) and x == types.float64 or isinstance(x, types.Array) and x.dtype == types.float64
               for x in (a, b)):
        return -1, -1
    return rank_of(types, a), rank_of(types, b)


@compiled(np.tensordot)
def _tensordot(types):
    """np.tensordot(a, b, axes) of float64 arrays where the count of contracted axes is known when compiling
    (Numba has none); a number times an array (axes 0) as their product, as NumPy's."""
    def typing(a, b, axes=2):
        na, nb = _float_operands(types, a, b)
        count = _contracted_count(types, axes)
        if min(na, nb) < 0 or count is None or count > min(na, nb):
            return None
        if min(na, nb) == 0:
            if count != 0 or max(na, nb) == 0:
                return None  # (two numbers: run as Python, whose result is a 0-d array)
            return lambda a, b, axes=2: a * b
        contract = _contraction(types, na, nb, count, _axes_arrays(types, axes, count), False)
        return lambda a, b, axes=2: contract(a, b, axes)
    return typing


@compiled(np.inner)
def _inner(types):
    """np.inner(a, b) of float64 arrays (Numba has none): tensordot over the last axis of each, a number for
    two vectors, as NumPy's."""
    def typing(a, b):
        na, nb = _float_operands(types, a, b)
        if min(na, nb) < 1:
            return None  # (a number's inner is a product: run as Python)
        contract = _contraction(types, na, nb, 1, _axes_arrays(types, types.UniTuple(types.int64, 2), 1),
                                na == 1 and nb == 1)
        return lambda a, b: contract(a, b, (na - 1, nb - 1))
    return typing


@compiled(linalg.inner_axes)
def _inner_axes(types):
    """inner_axes: the last axis of each (a pair of ints), for arrays; two numbers or one run as Python."""
    def typing(a, b):
        na, nb = rank_of(types, a), rank_of(types, b)
        if min(na, nb) < 1:
            return None
        return lambda a, b: (na - 1, nb - 1)
    return typing


@compiled(linalg.tensordot_adjoint_plan)
def _tensordot_adjoint_plan(types):
    """tensordot_adjoint_plan for arrays, ``axes`` of a count known when compiling, ``which`` a literal: the
    axes of the adjoint's own tensordot as a pair of int tuples and the permutation as a tuple, each of a
    length known when compiling (what the compiled np.tensordot and np.transpose take)."""
    from numba.extending import register_jitable
    free, as_tuple = _contraction_helpers(types)

    @register_jitable
    def partners(ordered, by, of):
        """For each axis in ``ordered`` (sorted), the axis of the other operand that ``of`` pairs with it."""
        out = np.empty(ordered.size, np.int64)
        for t in range(ordered.size):
            for p in range(by.size):
                if by[p] == ordered[t]:
                    out[t] = of[p]
        return out

    def typing(a, b, axes, which):
        na, nb = rank_of(types, a), rank_of(types, b)
        count = _contracted_count(types, axes)
        if min(na, nb) < 1 or count is None or count > min(na, nb) or not isinstance(which, types.IntegerLiteral) \
                or which.literal_value not in (0, 1):
            return None
        lists = _axes_arrays(types, axes, count)
        fa, fb = na - count, nb - count
        if which.literal_value == 0:  # tensordot(grad, b): grad's free_b axes with b's free axes
            first, second, permuted = as_tuple(fb), as_tuple(fb), as_tuple(na)

            def plan_a(a, b, axes, which):
                ca, cb = lists(axes, na, nb)
                free_a, free_b = free(ca, na), free(cb, nb)
                order = np.concatenate((free_a, partners(np.sort(cb), cb, ca)))
                return (first(np.arange(fa, fa + fb)), second(free_b)), permuted(np.argsort(order))
            return plan_a
        first, second, permuted = as_tuple(fa), as_tuple(fa), as_tuple(nb)

        def plan_b(a, b, axes, which):  # tensordot(a, grad): a's free axes with grad's first ones
            ca, cb = lists(axes, na, nb)
            free_a, free_b = free(ca, na), free(cb, nb)
            order = np.concatenate((partners(np.sort(ca), ca, cb), free_b))
            return (first(free_a), second(np.arange(0, fa))), permuted(np.argsort(order))
        return plan_b
    return typing
