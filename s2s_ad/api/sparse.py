"""Sparse Jacobians and Hessians: the sparsity pattern, a colouring, one pass per colour.

Input: a function, the one parameter to differentiate by (``wrt``) and a call's arguments.  Output:
the pattern (``jacobian_sparsity``, ``hessian_sparsity``: a SciPy sparse boolean matrix, outputs by
inputs, both flattened) or the matrix itself as a ``scipy.sparse.csr_matrix`` (``jacobian(f,
sparse=True)``, ``hessian(f, sparse=True)``).

The pattern is found by running the tangent code the dense Jacobian runs, once per input element,
with that element's tangent NaN and the others zero: NaN survives every arithmetic operation
(``NaN * 0`` and ``NaN - NaN`` are NaN, where numbers could cancel), so an output's tangent is NaN
wherever the code that computes it reads that input's tangent, through loops, element writes,
slices, reductions, products and library calls whose rules know nothing of sparsity (those count
as dense: a structural nonzero may be numerically zero, never the reverse).  What the arguments
decide (an ``if``, a loop's trip count, ``np.where``, which element ``max`` takes) is taken as these
arguments take it: the pattern is exact for the path taken, and another path may have other
nonzeros.  A Hessian's pattern is found the same way from Hessian-vector products (forward mode
over the gradient) and made symmetric.

The pattern and its colouring (colouring.py: distance-2 by columns or rows, star for a Hessian) are
kept per argument kinds on the object, so a Newton loop finds them once.  Each later call checks
them: a product with a nonzero in a row that no column of its colour has an entry in, or one more
pass along a random direction that differs from the matrix times that direction (a new nonzero the
colouring would have added to another entry), means the path changed: the pattern is found again
at those arguments, joined to the old one, and coloured again.  What the random direction cannot
see is a missed entry below 1e-9 of its row's scale, or one cancelled with probability zero.
What could hide a dependency from the NaN passes is code that filters tangents by their values
(``np.nan_to_num`` of a tangent, a comparison of tangents): s2s_ad's tangent rules select by the
primal values alone.
"""
from __future__ import annotations

import functools
import inspect
import warnings
from dataclasses import dataclass
from types import FunctionType
from typing import Any, Callable

import numpy as np

from ..core import arguments, containers
from ..core.arguments import float_dtype, kind_of, kind_tree
from ..core.draws import Draws
from ..driver.pipeline import may_draw_globally
from ..targets.backends import target_of
from .auto_backend import choose_backend
from . import colouring
from .calling import Wrt, _resolve_wrt, _user_facing, numpy_arrays_only, refuse_what_is_not_a_def
from .gradient import GradientFunction, _tangent_function
from .pullback import _pullback
from .batched import batched_sweep


def scipy_sparse() -> Any:
    """``scipy.sparse``, which sparse derivatives need (an optional extra of s2s_ad)."""
    try:
        import scipy.sparse
    except ImportError:
        raise ImportError("sparse Jacobians and Hessians (sparse=True, jacobian_sparsity, hessian_sparsity) "
                          "return scipy.sparse matrices and need SciPy: pip install scipy") from None
    return scipy.sparse


@dataclass
class Plan:
    """What a sparse matrix at one kind of arguments reuses: the pattern, the colours, and the mode."""

    sparsity: Any  # scipy.sparse.csr_matrix of bools, outputs by inputs
    colors: np.ndarray  # one colour per column (forward) or per row (reverse)
    mode: str  # "forward" or "reverse"
    shape: tuple  # the shape of the result (of the gradient, for a Hessian)
    covered: np.ndarray  # (rows by colours) where a colour's pattern has an entry: forward mode's check
    reads: tuple  # for each entry of the pattern (of its transpose in reverse mode): the product's row and colour
    colouring: str  # "distance-2 columns", "distance-2 rows" or "star" (a Hessian's)


class _Pattern:
    """The differentiated function, the parameter, and the pattern found by NaN tangents."""

    symmetric = False
    what = "jacobian"

    def __init__(self, fn: Callable, wrt: Wrt = 0, backend: str = "python") -> None:
        refuse_what_is_not_a_def(self.what, fn)
        self.fn = fn
        names, several = _resolve_wrt(fn, wrt)
        if several:
            raise TypeError(f"{self.what} of {getattr(fn, '__name__', fn)} with sparse=True: by one parameter "
                            f"at a time (wrt={wrt!r}); take one sparse matrix per parameter")
        self.wrt = names[0]
        self._asked = backend  # (pickled: "auto" chooses again)
        self.backend_chosen = choose_backend(fn, backend, "hessian" if self.symmetric else "jacobian")
        self._backend = self.backend_chosen.backend
        self._target = target_of(self._backend)
        functools.update_wrapper(self, fn, updated=())

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        raise NotImplementedError  # (the pattern, or the matrix: the subclasses')

    def source_of_api_object(self, args: Any) -> str:
        """``source(jacobian(f, sparse=True))``: refused, saying what to pass (``api.source``)."""
        of = "the function" if not self.symmetric else "its gradient (forward over reverse)"
        raise TypeError(f"source of {self.what}({getattr(self.fn, '__name__', self.fn)}, sparse=True): its passes run "
                        f"the forward-mode code of {of}; source(f, wrt=..., mode='forward', args=...) shows "
                        "the function's, hessian(f).source_for(*args) the gradient's")

    def __reduce__(self) -> tuple:
        """Pickled by reference, as ``jacobian`` (api.matrices): the function, ``wrt`` and the backend;
        the kept patterns are found again in the other process."""
        return (type(self), (self.fn, self.wrt, self._asked))

    def _differentiated(self) -> Callable:
        return self.fn

    def _bind(self, args: tuple, kwargs: dict) -> tuple[tuple, int]:
        scipy_sparse()
        label = f"{self.what} of {getattr(self.fn, '__qualname__', self.fn)}"
        numpy_arrays_only(label, args + tuple(kwargs.values()))
        bound = inspect.signature(self.fn).bind(*args, **kwargs)
        bound.apply_defaults()
        params, values = list(bound.arguments), tuple(bound.arguments.values())
        position = params.index(self.wrt)
        arguments.refuse_integer_wrt(self.what, self.fn, self.wrt, values[position])
        if any(isinstance(kind_tree(v), containers.Tree) for v in values):
            raise TypeError(f"{label} with sparse=True takes NumPy arrays and numbers as arguments, not containers "
                            "(dict, list, tuple, dataclass): pass the arrays as separate arguments")
        if not arguments.differentiable(values[position]):
            raise TypeError(f"{label}: {self.wrt} = {values[position]!r} is not a float or float array, "
                            "so it has no derivative")
        return values, position

    def _tangent(self, values: tuple) -> Callable:
        return _tangent_function(self._differentiated(), (self.wrt,), values, self._target)

    def _pattern(self, values: tuple, position: int, draws: Any) -> tuple[Any, tuple]:
        """The pattern at these arguments (outputs by inputs) and the shape of the result."""
        tangent = self._tangent(values)
        value = values[position]
        n = int(np.size(value))
        draws.replay()
        first = np.asarray(tangent(*values, _seed(value, np.zeros(n)))[1])
        shape = np.shape(first)
        rows, cols = [], []
        with np.errstate(all="ignore"), warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            for j in range(n):
                seed = np.zeros(n)
                seed[j] = np.nan
                draws.replay()
                try:
                    hit = np.flatnonzero(np.isnan(np.asarray(tangent(*values, _seed(value, seed))[1], dtype=float)))
                except Exception:  # (code that cannot take a NaN tangent: every output may depend on it)
                    hit = np.arange(first.size)
                rows.append(hit)
                cols.append(np.full(hit.size, j))
        sparse = scipy_sparse()
        row, col = np.concatenate(rows + [np.zeros(0, int)]), np.concatenate(cols + [np.zeros(0, int)])
        pattern = sparse.csr_matrix((np.ones(row.size, dtype=bool), (row, col)), shape=(first.size, n))
        if self.symmetric:
            pattern = (pattern + pattern.T).astype(bool).tocsr()
        pattern.sort_indices()
        return pattern, shape

    def _draws(self, values: tuple) -> Any:
        owner = self.fn.owner if isinstance(self.fn, GradientFunction) else self.fn
        if isinstance(self.fn, FunctionType) and not may_draw_globally(self.fn):
            return _NoDraws()
        return Draws(owner, values)


class _NoDraws:
    """``draws.Draws`` for a function that draws nothing: nothing to put back."""

    def replay(self) -> None:
        pass

    def finish(self) -> None:
        pass


def _seed(value: Any, flat: np.ndarray) -> Any:
    """A tangent for ``value`` from its flattened entries."""
    return flat.reshape(np.shape(value)) if isinstance(value, np.ndarray) else float(flat[0])


class JacobianSparsity(_Pattern):
    """``jacobian_sparsity(fn, wrt)(*args)``: the Jacobian's pattern at these arguments."""

    @_user_facing
    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        values, position = self._bind(args, kwargs)
        draws = self._draws(values)
        try:
            return self._pattern(values, position, draws)[0]
        finally:
            draws.finish()


class HessianSparsity(JacobianSparsity):
    """``hessian_sparsity(fn, wrt)(*args)``: the Hessian's symmetric pattern at these arguments."""

    symmetric = True
    what = "hessian"

    def _differentiated(self) -> Callable:
        return GradientFunction(self.fn, self.wrt, with_value=False, backend=self._backend)


class SparseJacobian(_Pattern):
    """``jacobian(fn, wrt, sparse=True)(*args)``: the Jacobian as a ``scipy.sparse.csr_matrix``,
    shaped (outputs, inputs), both flattened; one pass per colour.

    ``.sparsity``, ``.colors`` and ``.mode`` are those of the latest call; they are found once per
    argument kinds (shapes and dtypes) and kept.
    """

    def __init__(self, fn: Callable, wrt: Wrt = 0, backend: str = "python") -> None:
        super().__init__(fn, wrt, backend)
        self._plans: dict = {}
        self.sparsity: Any = None
        self.colors: Any = None
        self.mode: Any = None
        self.colouring: Any = None
        self._rng = np.random.default_rng(20260)  # the directions that check a kept pattern at new arguments

    @_user_facing
    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        values, position = self._bind(args, kwargs)
        draws = self._draws(values)
        try:
            key = tuple(map(kind_of, values))
            plan = self._plans.get(key)
            if plan is None:
                plan = self._plans[key] = self._plan(*self._pattern(values, position, draws))
                matrix = self._evaluate(plan, values, position, draws, verify=False)  # (exact for this path)
            else:
                matrix = self._evaluate(plan, values, position, draws, verify=True)
            if matrix is None:  # a nonzero outside the pattern: the path changed; find it again, joined
                pattern, shape = self._pattern(values, position, draws)
                plan = self._plans[key] = self._plan((pattern + plan.sparsity).astype(bool).tocsr(), shape)
                matrix = self._evaluate(plan, values, position, draws, verify=False)
                if matrix is None:
                    name = getattr(self.fn, "__name__", self.fn)
                    raise RuntimeError(f"{self.what} of {name} with sparse=True: the derivative has a "
                                       "nonzero its sparsity pattern lacks, found again at these arguments; "
                                       "take the dense matrix (sparse=False)")
        finally:
            draws.finish()
        self.sparsity, self.colors, self.mode, self.colouring = plan.sparsity, plan.colors, plan.mode, plan.colouring
        return matrix

    def _plan(self, pattern: Any, shape: tuple) -> Plan:
        pattern.sort_indices()
        columns = colouring.column_colors(pattern)
        mode, colors, structure, how = "forward", columns, pattern, "distance-2 columns"
        reads: Any = colouring.direct_reads(pattern, columns)
        if self.symmetric:
            star = colouring.star_colors(pattern)
            star_reads = colouring.symmetric_reads(pattern, star)
            if star_reads is not None and star.max(initial=-1) < columns.max(initial=-1):
                colors, reads, how = star, star_reads, "star"
        elif not isinstance(self.fn, GradientFunction):
            rows = colouring.row_colors(pattern)
            if rows.max(initial=-1) < columns.max(initial=-1):
                mode, colors, structure, how = "reverse", rows, pattern.T.tocsr(), "distance-2 rows"
                reads = colouring.direct_reads(structure, rows)
        covered = colouring.colour_counts(structure, colors) > 0
        return Plan(pattern, colors, mode, shape, covered, reads, how)

    def _evaluate(self, plan: Plan, values: tuple, position: int, draws: Any, verify: bool) -> Any:
        """The matrix from one pass per colour, or None where a product has a nonzero the pattern lacks.

        With ``verify`` (arguments other than those the pattern was found at, whose path through
        branches, ``np.where`` or ``max`` may differ), one more pass along a random direction ``r``
        is compared with the matrix times ``r``: a nonzero the pattern lacks makes them differ
        (unless it is below the rounding of the row, or with probability zero); the products alone
        see it only where no column of its colour has an entry in its row."""
        value = values[position]
        dtype = float_dtype(value)
        count = plan.covered.shape[1]
        if plan.mode == "forward":
            tangent = self._tangent(values)
            products = np.empty((plan.sparsity.shape[0], count), dtype=dtype)
            seeds = [np.asarray(_seed(value, (plan.colors == c).astype(float)), dtype=float) for c in range(count)]
            draws.replay()  # one vector sweep for every colour (batched.py), else one pass per colour
            swept = None
            if self._backend == "python" or not getattr(draws, "moved", False):  # (compiled: none to put back)
                swept = self._target.vector_sweep(tangent, values, [np.stack(seeds)])
            if swept is None and self._backend == "python" and count > 1:
                swept = batched_sweep(tangent, values, (np.stack(seeds),), count)
            if swept is not None and not isinstance(swept[1], tuple):
                products[...] = np.reshape(swept[1], (count, -1)).T
            else:
                for c in range(count):
                    draws.replay()
                    products[:, c] = np.ravel(tangent(*values, _seed(value, (plan.colors == c).astype(float)))[1])
            structure = plan.sparsity
            if verify:
                direction = self._rng.standard_normal(plan.sparsity.shape[1])
                draws.replay()
                along = np.ravel(tangent(*values, _seed(value, direction))[1])
        else:
            draws.replay()
            _, pull = _pullback(self.fn, values, [self.wrt], keep=False)
            products = np.empty((plan.sparsity.shape[1], count), dtype=dtype)
            for c in range(count):
                cotangent = (plan.colors == c).astype(float).reshape(plan.shape)
                products[:, c] = np.ravel(pull(cotangent if plan.shape else float(cotangent))[position])
            structure = plan.sparsity.T.tocsr()
            if verify:
                direction = self._rng.standard_normal(plan.sparsity.shape[0])
                along = np.ravel(pull(direction.reshape(plan.shape) if plan.shape else float(direction[0]))[position])
        if np.any(products[~plan.covered] != 0):
            return None
        data = products[plan.reads]
        matrix = scipy_sparse().csr_matrix((data, structure.indices.copy(), structure.indptr.copy()),
                                           shape=structure.shape)
        if verify:
            rounding = abs(matrix) @ np.abs(direction) + np.abs(along)
            if not np.all(np.abs(matrix @ direction - along) <= 1e-9 * rounding + 1e-300):
                return None
        return matrix if plan.mode == "forward" else matrix.T.tocsr()


class SparseHessian(SparseJacobian):
    """``hessian(fn, wrt, sparse=True)(*args)``: the Hessian as a ``scipy.sparse.csr_matrix``, one
    Hessian-vector product per colour of its symmetric pattern: a star colouring (symmetric direct
    recovery) where it takes fewer colours than the distance-2 colouring of the columns."""

    symmetric = True
    what = "hessian"

    def _differentiated(self) -> Callable:
        return GradientFunction(self.fn, self.wrt, with_value=False, backend=self._backend)


def jacobian_sparsity(fn: Callable, wrt: Wrt = 0, backend: str = "python") -> JacobianSparsity:
    """The sparsity pattern of ``fn``'s Jacobian by one parameter (docs/api.md, "Sparse derivatives").

    Called with ``fn``'s arguments, it returns a ``scipy.sparse.csr_matrix`` of bools shaped
    (outputs, inputs), both flattened: conservative (an entry may be numerically zero, a nonzero
    never lacks its entry) and exact for the path these arguments take through branches.
    """
    return JacobianSparsity(fn, wrt, backend)


def hessian_sparsity(fn: Callable, wrt: Wrt = 0, backend: str = "python") -> HessianSparsity:
    """The symmetric sparsity pattern of a scalar function's Hessian by one parameter (as
    ``jacobian_sparsity``: a ``scipy.sparse.csr_matrix`` of bools, inputs by inputs)."""
    return HessianSparsity(fn, wrt, backend)
