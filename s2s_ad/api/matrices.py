"""Jacobians and Hessians: whole matrices of derivatives, one jvp or vjp per column or row.

Input: a function, the parameters to differentiate by (``wrt``) and a call's
arguments.  Output: blocks shaped ``out.shape + arg.shape`` (a Jacobian) or
``arg.shape + arg.shape`` (a Hessian), a tuple of blocks for a tuple ``wrt``,
and for container arguments or results containers of blocks, as JAX gives
them.  A Jacobian takes forward mode (``api.jvp``'s code, one pass per input
element) where the inputs are fewer than the outputs, else reverse mode (one
pullback per output element); a Hessian is forward mode over the generated
gradient.  The global random states a pass may draw from are put back
before each pass (``draws.Draws``), so every column sees the same draws.
"""
from __future__ import annotations

import abc
import functools
import inspect
from types import FunctionType
from typing import Any, Callable, Optional

import numpy as np

from ..core import arguments, containers
from . import explorer
from ..targets.backends import target_of
from .auto_backend import choose_backend, headed
from .calling import _CACHE, _TARGET, Wrt, _resolve_wrt, _run, _user_facing, numpy_arrays_only, refuse_what_is_not_a_def
from .gradient import GradientFunction, _tangent_function
from .forward_mode import jvp
from .pullback import _pullback
from .batched import batched_sweep
from ..core.arguments import float_dtype, kind_tree
from ..core.draws import NO_DRAWS, Draws
from ..driver.pipeline import build_forward, leaf_kinds, may_draw_globally
from ..driver.reach import whole_source


# Directions per sweep of vector forward mode: a chunk's tangents take chunk times a value's memory.
DEFAULT_CHUNK = 64
# Fewer directions than this (a small problem, or a chunk's remainder) run one pass each (measured: a
# Jacobian of 6 numbers as fast either way, of 2 or 3 half as fast again batched).
FEWEST = 6
# Rows of a reverse-mode Jacobian pulled back by one sweep only where a row's adjoints (of every argument:
# the reverse sweep makes them all) hold at most this many numbers: with a large one (a matrix argument's),
# a sweep of many rows moves more memory than it saves (measured, a Jacobian of tanh(w @ x) * sum(x * x) by
# x of 200 numbers: w of 8x200, 1.4x faster batched; of 30x200, 1.1x slower; of 100x200, 2.6x slower).
ROW_ELEMENTS = 2048


class _MatrixOf(abc.ABC):
    """What a Jacobian and a Hessian share: the function, the parameters by name, and pickling."""

    def __init__(self, fn: Callable, wrt: Wrt, backend: str = "python", chunk: Optional[int] = DEFAULT_CHUNK) -> None:
        refuse_what_is_not_a_def(type(self).__name__.lower(), fn)
        chunk = DEFAULT_CHUNK if chunk is None else chunk  # (None: the default, as the API contract writes it)
        if not isinstance(chunk, int) or isinstance(chunk, bool) or chunk < 1:
            raise ValueError(f"chunk must be a positive int (directions per sweep), not {chunk!r}")
        self._chunk = chunk
        self.fn = fn
        self.wrt, self._several = _resolve_wrt(fn, wrt)
        self._asked = backend  # (pickled: "auto" chooses again)
        # which backend runs (backend="auto": chosen by the code's shape, auto_backend.py), and why
        self.backend_chosen = choose_backend(fn, backend, type(self).__name__.lower())
        self._backend = self.backend_chosen.backend
        self._target = target_of(self._backend)
        functools.update_wrapper(self, fn, updated=())  # not __dict__: fn may be a gradient

    def __reduce__(self) -> tuple:
        """Pickled by reference: the user's function and ``wrt`` (api.GradientFunction.__reduce__)."""
        return (type(self), (self.fn, self.wrt if self._several else self.wrt[0], self._asked, self._chunk))

    @abc.abstractmethod
    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        """The matrix at these arguments (called as ``fn`` is)."""


class Jacobian(_MatrixOf):
    """``jacobian(fn, wrt)(*args)``: the array of partial derivatives, shaped ``out.shape + arg.shape``.

    Forward mode (one jvp per input element) when the inputs are fewer than
    the outputs, reverse mode (one vjp per output element) otherwise.
    """

    def source_of_api_object(self, args: Any) -> str:
        """``source(jacobian(f))``: refused, saying what to pass (``api.source``)."""
        raise TypeError(f"source of jacobian({getattr(self.fn, '__name__', self.fn)}): a Jacobian runs forward mode "
                        "(fewer inputs than outputs) or reverse mode over the function: pass the function itself, "
                        "source(f, wrt=..., mode='forward' or 'reverse', args=...)")

    @_user_facing
    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        numpy_arrays_only(f"jacobian of {getattr(self.fn, '__qualname__', self.fn)}", args + tuple(kwargs.values()))
        bound = inspect.signature(self.fn).bind(*args, **kwargs)
        bound.apply_defaults()
        params, values = list(bound.arguments), tuple(bound.arguments.values())
        positions = [params.index(w) for w in self.wrt]
        for i in positions:
            arguments.refuse_integer_wrt("jacobian", self.fn, params[i], values[i])
        # The states of the generators a pass may draw from, put back before each pass; not read where
        # no pass can draw (reading and putting them back costs more than a small function's pass).
        # (a gradient's passes draw where the function it differentiates may)
        user = self.fn.fn if isinstance(self.fn, GradientFunction) else self.fn
        draws = Draws(_owner(self.fn), values) \
            if not isinstance(user, FunctionType) or may_draw_globally(user) else NO_DRAWS
        try:
            return self._blocks(params, values, positions, draws)
        finally:
            draws.finish()

    def _blocks(self, params: list[str], values: tuple, positions: list[int], draws: Any) -> Any:
        out = self.fn(*values)
        if not isinstance(self.fn, GradientFunction) and (
                any(isinstance(kind_tree(value), containers.Tree) for value in values)
                or isinstance(containers.structure_of(out), containers.Tree)):
            blocks = [self._by_leaf(values, i, out, draws) for i in positions]
            return tuple(blocks) if self._several else blocks[0]
        for i in positions:
            if not arguments.differentiable(values[i]):
                raise TypeError(f"jacobian of {self.fn.__name__}: {params[i]} = {values[i]!r} is not a float "
                                f"or float array, so it has no derivative")
        inputs = sum(np.size(values[i]) for i in positions)
        if inputs <= np.size(out) or isinstance(self.fn, GradientFunction):  # no reverse over reverse
            blocks = self._forward(values, positions, out, draws)
        else:
            draws.replay()
            blocks = self._reverse(values, positions, out)
        return tuple(blocks) if self._several else blocks[0]

    def _by_leaf(self, values: tuple, i: int, out: Any, draws: Draws) -> Any:
        """The Jacobian by argument ``i`` where it or the result is a container: one jvp per input
        element; a container of blocks per result leaf, each a container by input leaf (as JAX)."""
        kind = kind_tree(values[i])
        inputs = containers.leaves(values[i], kind) if isinstance(kind, containers.Tree) else [values[i]]
        structure = containers.structure_of(out)
        outputs = containers.leaves(out, structure)
        columns: list = [[[] for _ in outputs] for _ in inputs]
        for j, leaf in enumerate(inputs):
            for index in np.ndindex(np.shape(leaf)):
                units = [np.zeros(np.shape(x)) if isinstance(x, np.ndarray) else 0.0 for x in inputs]
                unit = np.zeros(np.shape(leaf))
                unit[index] = 1.0
                units[j] = unit if isinstance(leaf, np.ndarray) else 1.0
                tangents: list[Any] = [None] * len(values)
                tangents[i] = containers.unflatten(kind, units) if isinstance(kind, containers.Tree) else units[0]
                draws.replay()
                t_out = jvp(self.fn, values, tangents, backend=self._backend)[1]
                for o, t in enumerate(containers.leaves(t_out, structure)):
                    columns[j][o].append(np.asarray(t, dtype=float_dtype(leaf)))

        def block(o: int, j: int) -> np.ndarray:
            shape = np.shape(outputs[o]) + np.shape(inputs[j])
            if not columns[j][o]:
                return np.zeros(shape, dtype=float_dtype(inputs[j]))
            return np.stack(columns[j][o], axis=-1).reshape(shape)

        def by_input(o: int) -> Any:
            parts = [block(o, j) for j in range(len(inputs))]
            return containers.unflatten(kind, parts) if isinstance(kind, containers.Tree) else parts[0]

        return containers.unflatten(structure, [by_input(o) for o in range(len(outputs))])

    def _forward(self, values: tuple, positions: list[int], out: Any, draws: Draws) -> list:
        """One column per input element, from sweeps of the tangent code pushing ``chunk`` directions at once
        (vector mode, ``batched.py``); one sweep per direction where the code has no batched form."""
        tangent_fn = _tangent_function(self.fn, self.wrt, values, self._target)
        sizes = [int(np.size(values[i])) for i in positions]
        total, columns = sum(sizes), []
        batching = self._chunk > 1 and self._backend == "python"  # (compiled code takes one direction)
        for start in range(0, total, max(self._chunk, 1)):
            count = min(max(self._chunk, 1), total - start)
            seeds = _unit_seeds(sizes, [np.shape(values[i]) for i in positions], start, count)
            draws.replay()
            # (the vector version, of two directions or more: one direction runs the one-direction code)
            swept = self._target.vector_sweep(tangent_fn, values, seeds) \
                if self._backend == "python" and count > 1 else None
            if swept is None and batching and count >= FEWEST:
                # (each tangent wrapped at run time; a sweep of few directions so costs more than one pass
                # per direction: batching sets up ~0.2 ms)
                swept = batched_sweep(tangent_fn, values, tuple(seeds), count)
            if swept is not None and not isinstance(swept[1], tuple):
                columns.append(swept[1])  # (count,) + out.shape
                continue
            batching = False  # (this code has no batched form: one sweep per direction from now on)
            # (compiled code: every direction in one call, where the passes draw nothing to put back)
            together = None if getattr(draws, "moved", False) else \
                self._target.directions(tangent_fn, values, positions, seeds, out)
            if together is not None:
                columns.append(together)
                continue
            for d in range(count):
                tangents = [s[d] if isinstance(values[i], np.ndarray) else float(s[d]) for i, s in zip(positions, seeds)]
                draws.replay()
                columns.append(np.asarray(tangent_fn(*values, *tangents)[1])[None])
        rows = np.concatenate(columns) if columns else np.zeros((0,) + np.shape(out))  # one per direction
        blocks, offset = [], 0
        for i, size in zip(positions, sizes):
            mine = np.moveaxis(np.asarray(rows[offset:offset + size], dtype=float_dtype(values[i])), 0, -1)
            offset += size
            # (np.array, not np.ascontiguousarray: that makes a number's block of shape () one of shape (1,))
            blocks.append(np.array(mine.reshape(np.shape(out) + np.shape(values[i])), order="C"))
        return blocks

    def _reverse(self, values: tuple, positions: list[int], out: Any) -> list:
        """One row per output element, from runs of the reverse sweep pulling ``chunk`` cotangents back at
        once (vector reverse mode, ``Pullback._batched``); one run per row where the sweep has no batched form."""
        params = list(inspect.signature(self.fn).parameters)
        _, pull = _pullback(self.fn, values, [params[i] for i in positions], keep=False)  # (used here and now)
        total = int(np.size(out))
        chunk = max(self._chunk, 1) if pull.adjoint_size <= ROW_ELEMENTS else 1
        rows: dict[int, list[np.ndarray]] = {i: [] for i in positions}
        for start in range(0, total, chunk):
            count = min(chunk, total - start)
            if count >= FEWEST:
                units = np.zeros((count, total))
                units[np.arange(count), start + np.arange(count)] = 1.0
                adjoints = pull(units.reshape((count,) + np.shape(out)), batched=True)
                for i in positions:
                    rows[i].extend(np.asarray(adjoints[i], dtype=float_dtype(values[i])))
                continue
            for index in range(start, start + count):
                unit = np.zeros(total)
                unit[index] = 1.0
                adjoints = pull(unit.reshape(np.shape(out)) if np.ndim(out) else 1.0)
                for i in positions:
                    rows[i].append(np.asarray(adjoints[i], dtype=float_dtype(values[i])))
        return [np.stack(rows[i]).reshape(np.shape(out) + np.shape(values[i])) for i in positions]


def _unit_seeds(sizes: list[int], shapes: list[tuple], start: int, count: int) -> list[np.ndarray]:
    """The seeds of directions ``start`` to ``start + count`` (of all inputs' elements, in order): per input,
    ``count`` arrays of its shape on a leading axis, direction ``d`` a one at the element it seeds."""
    seeds, offset = [], 0
    for size, shape in zip(sizes, shapes):
        seed = np.zeros((count, size))
        first, last = max(start, offset), min(start + count, offset + size)  # (the directions in this input)
        if first < last:
            seed[np.arange(first - start, last - start), np.arange(first - offset, last - offset)] = 1.0
        seeds.append(seed.reshape((count,) + shape))
        offset += size
    return seeds


def _owner(fn: Callable) -> Callable:
    """The user's function behind ``fn`` (a gradient's, or ``fn`` itself): whose free names may hold
    the generators it draws from (``draws.Draws``)."""
    return fn.owner if isinstance(fn, GradientFunction) else fn


def jacobian(fn: Callable, wrt: Wrt = 0, backend: str = "python", sparse: bool = False,
             chunk: Optional[int] = DEFAULT_CHUNK) -> Any:
    """The Jacobian of ``fn``: every partial derivative of its result by ``wrt`` (docs/api.md).

    Forward mode (tangent sweeps of ``chunk`` input elements each) where the inputs are fewer
    than the outputs, reverse mode (one pullback per output element) otherwise.

    Parameters
    ----------
    fn : callable
        A function whose source can be read (or a gradient).
    wrt : int, str or tuple of them, default 0
        The arguments to differentiate by, by position or name.
    backend : {"python", "numba", "auto"}, default "python"
        As for ``grad``.
    sparse : bool, default False
        Find the sparsity pattern and a colouring once per argument kinds and return a
        ``scipy.sparse.csr_matrix`` shaped (outputs, inputs), both flattened, from one pass per
        colour (``sparse.SparseJacobian``; one ``wrt`` parameter; needs SciPy).
    chunk : int or None, default 64 (None: 64)
        Directions pushed by one sweep of the tangent code (vector forward mode): the columns of a
        forward-mode Jacobian, the Hessian-vector products of a Hessian, ``chunk`` at a time, their
        tangents taking ``chunk`` times an argument's memory; the rows of a reverse-mode Jacobian
        likewise, ``chunk`` cotangents pulled back by one reverse sweep (vector reverse mode).  Where
        the code has an operation with no batched form (and, in forward mode, under
        ``backend="numba"``), one sweep per direction, as ``chunk=1``.

    Returns
    -------
    Jacobian
        Called with ``fn``'s arguments, it returns an array shaped
        ``out.shape + arg.shape``; a tuple of them for a tuple ``wrt``; for containers, a
        container (by result leaf) of containers (by argument leaf) of blocks, as JAX.

    Raises
    ------
    ValueError
        ``wrt`` names no parameter.
    TransformError
        At a call, where ``fn`` cannot be differentiated.
    """
    if sparse:
        from .sparse import SparseJacobian  # (SciPy, an optional extra, is imported at a call)
        return SparseJacobian(fn, wrt, backend)
    return Jacobian(fn, wrt, backend, chunk)


class Hessian(_MatrixOf):
    """``hessian(fn, wrt)(*args)``: second derivatives, forward mode over the generated gradient.

    With one ``wrt``, an array shaped ``arg.shape + arg.shape``; with a tuple,
    nested tuples of blocks ``H[i][j]`` = d²fn / d wrt_i d wrt_j.
    """

    def source_of_api_object(self, args: Any) -> str:
        """``source(hessian(f), args=...)``: the code a call with those arguments runs (``api.source``)."""
        return self.source_for(*(args or ()))

    @_user_facing
    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        numpy_arrays_only(f"hessian of {getattr(self.fn, '__qualname__', self.fn)}", args + tuple(kwargs.values()))
        gradient = self._gradient()
        full = gradient._bind(args, kwargs)
        for name, position in zip(gradient.wrt, gradient._positions):
            arguments.refuse_integer_wrt("hessian", self.fn, name, full[position])
        kinds = _TARGET.argument_kinds(gradient.fn, full)
        if any(isinstance(k, containers.Tree) for k in kinds):
            return self._by_leaf(gradient, full, kinds)
        rows = tuple(self._rows_by(w)(*args, **kwargs) for w in self.wrt)
        return rows if self._several else rows[0]

    def _gradient(self) -> GradientFunction:
        """The gradient by every ``wrt``, made once (a call's kinds and code are cached in it)."""
        made = self.__dict__.get("_made_gradient")
        if made is None:
            made = self.__dict__["_made_gradient"] = GradientFunction(self.fn, self.wrt, with_value=False)
        return made

    def _rows_by(self, w: str) -> "Jacobian":
        """The Jacobian of the gradient by ``w``, its rows of the Hessian, made once per ``w``: a call
        after the first runs the code already built for the arguments' kinds, not the lookups that
        make a gradient and a Jacobian anew (half the time of a compiled 20-parameter Hessian)."""
        made = self.__dict__.setdefault("_made_rows", {})
        if w not in made:
            by = self.wrt if self._several else self.wrt[0]
            made[w] = Jacobian(GradientFunction(self.fn, w, with_value=False, backend=self._backend), by,
                               self._backend, self._chunk)
        return made[w]

    @_user_facing
    def source_for(self, *args: Any, **kwargs: Any) -> str:
        """The generated code a call with these arguments runs (nothing is run): forward mode over the
        gradient by each ``wrt``, with every generated module it calls (``reach.py``), and its vector
        version, which pushes a chunk of directions in one run, where there is one."""
        functions = self._tangent_functions(args, kwargs)
        vectors = [getattr(f, "vector", None) for f in functions]
        return headed(whole_source(*functions, *[v for v in vectors if v is not None]), self.backend_chosen)

    @_user_facing
    def html_for(self, *args: Any, **kwargs: Any) -> str:
        """The derivative explorer's page (explorer.py) for the code a call with these arguments runs."""
        gradient = GradientFunction(self.fn, self.wrt, with_value=False)
        kinds = _TARGET.argument_kinds(gradient.fn, gradient._bind(args, kwargs))
        title = f"∂²/∂{','.join(self.wrt)}² {getattr(gradient.fn, '__name__', gradient.fn)} (Hessian)"
        return explorer.page_for(gradient.fn, self._tangent_functions(args, kwargs), self.wrt, kinds, title)

    def _tangent_functions(self, args: tuple, kwargs: dict) -> list[Callable]:
        """The generated functions a call runs: forward mode over the gradient by each ``wrt``."""
        gradient = GradientFunction(self.fn, self.wrt, with_value=False)
        full = gradient._bind(args, kwargs)
        kinds = _TARGET.argument_kinds(gradient.fn, full)
        if any(isinstance(k, containers.Tree) for k in kinds):
            return [self._leaf_tangent(gradient, kinds)[0]]
        return [_tangent_function(GradientFunction(self.fn, w, with_value=False), self.wrt, full, self._target)
                for w in self.wrt]

    def _leaf_tangent(self, gradient: GradientFunction, kinds: tuple) -> tuple[Callable, list[int], dict]:
        """Forward mode over the gradient as a function of the leaves, the leaves by ``wrt`` and which
        leaves each ``wrt`` parameter has."""
        plain = gradient.function_for(kinds).function
        names = list(inspect.signature(plain).parameters)
        params = list(gradient._signature.parameters)
        groups = {w: arguments.leaf_positions(params, kinds, (w,)) for w in self.wrt}
        wrt_leaves = [i for w in self.wrt for i in groups[w]]
        flat_kinds = leaf_kinds(kinds)
        by = tuple(names[i] for i in wrt_leaves)
        tangent = _CACHE.get(plain, ("forward", plain.__code__, by, flat_kinds),
                             lambda: build_forward(plain, by, flat_kinds)).function
        return tangent, wrt_leaves, groups

    def _by_leaf(self, gradient: GradientFunction, full: tuple, kinds: tuple) -> Any:
        """With container arguments: forward mode over the gradient as a function of the leaves; the
        block of two containers is a container (by the first) of containers (by the second), as JAX."""
        tangent, wrt_leaves, groups = self._leaf_tangent(gradient, kinds)
        params = list(gradient._signature.parameters)
        flat = arguments.flat(full, kinds)
        draws = Draws(gradient.owner, full)
        try:
            return self._blocks(full, kinds, params, groups, wrt_leaves, flat, tangent, draws)
        finally:
            draws.finish()

    def _blocks(self, full: tuple, kinds: tuple, params: list[str], groups: dict, wrt_leaves: list[int],
                flat: tuple, tangent: Callable, draws: Draws) -> Any:
        columns: dict = {(a, b): [] for a in wrt_leaves for b in wrt_leaves}
        passes = 0
        for b in wrt_leaves:
            for index in np.ndindex(np.shape(flat[b])):
                tangents = [np.zeros(np.shape(flat[i])) if isinstance(flat[i], np.ndarray) else 0.0
                            for i in wrt_leaves]
                unit = np.zeros(np.shape(flat[b]))
                unit[index] = 1.0
                tangents[wrt_leaves.index(b)] = unit if isinstance(flat[b], np.ndarray) else 1.0
                if passes:
                    draws.replay()  # the draws of the first pass
                passes += 1
                t_gradient = _run(tangent, flat + tuple(tangents))[1]
                t_gradient = (t_gradient,) if len(wrt_leaves) == 1 else t_gradient
                for a, t in zip(wrt_leaves, t_gradient):
                    columns[a, b].append(np.asarray(t, dtype=float_dtype(flat[b])))

        def block(a: int, b: int) -> np.ndarray:
            shape = np.shape(flat[a]) + np.shape(flat[b])
            if not columns[a, b]:
                return np.zeros(shape, dtype=float_dtype(flat[b]))
            return np.stack(columns[a, b], axis=-1).reshape(shape)

        def rebuild(w: str, parts: list) -> Any:
            kind = kinds[params.index(w)]
            return containers.unflatten(kind, parts) if isinstance(kind, containers.Tree) else parts[0]

        def pair(w1: str, w2: str) -> Any:
            return rebuild(w1, [rebuild(w2, [block(a, b) for b in groups[w2]]) for a in groups[w1]])

        if self._several:
            return tuple(tuple(pair(w1, w2) for w2 in self.wrt) for w1 in self.wrt)
        return pair(self.wrt[0], self.wrt[0])


def hessian(fn: Callable, wrt: Wrt = 0, backend: str = "python", sparse: bool = False,
             chunk: Optional[int] = DEFAULT_CHUNK) -> Any:
    """The Hessian of a scalar function: forward mode over its gradient (docs/api.md).

    Parameters
    ----------
    fn : callable
        A function returning a scalar, whose source can be read.
    wrt : int, str or tuple of them, default 0
        The arguments to differentiate by, by position or name.
    backend : {"python", "numba", "auto"}, default "python"
        The backend the gradient and the forward mode over it run on ("numba" compiles what it can and
        runs the rest as Python, saying so in a warning; "auto" is "python" for now, ``backend_chosen``
        saying why).
    sparse : bool, default False
        A ``scipy.sparse.csr_matrix`` from one Hessian-vector product per colour of the symmetric
        sparsity pattern, found and coloured once per argument kinds (``sparse.SparseHessian``).
    chunk : int or None, default 64 (None: 64)
        Directions pushed by one sweep of the tangent code (vector forward mode): the columns of a
        forward-mode Jacobian, the Hessian-vector products of a Hessian, ``chunk`` at a time, their
        tangents taking ``chunk`` times an argument's memory.  Where the code has an operation with no
        batched form (and under ``backend="numba"``), one sweep per direction, as ``chunk=1``.

    Returns
    -------
    Hessian
        Called with ``fn``'s arguments, it returns an array shaped
        ``arg.shape + arg.shape``; for a tuple ``wrt``, nested tuples of blocks
        ``H[i][j]`` = d2 fn / d wrt_i d wrt_j; by a container, containers of blocks
        (``H["w"]["b"]``).

    Raises
    ------
    ValueError
        ``wrt`` names no parameter.
    TypeError
        At a call, where ``fn``'s result is not a scalar.
    TransformError
        At a call, where ``fn`` cannot be differentiated.
    """
    if sparse:
        from .sparse import SparseHessian
        return SparseHessian(fn, wrt, backend)
    return Hessian(fn, wrt, backend, chunk)
