"""The seam between the adjoint IR and code that runs: one ``Target`` object per backend.

Everything above this module (lowering, analysis, the reverse and forward
generators, the optimiser) works on the IR, whose calls name *op
identities*: the Python objects of the source language (``np.sin``,
``operator.add``, ``math.cos``) and the engine's own ops (``runtime.unbroadcast``,
``runtime.zeros_like``).  Nothing there decides how those become text that
runs.  A ``Target`` does, in one place, as autograd's ``VSpace`` keeps what
it knows of one type together; ``emit``, ``cache`` and ``pipeline`` take
one, and it is part of every cache key (code generated for one target is
never handed to another).  ``NumPyTarget`` (``NUMPY``) is the default:
Python calling NumPy, as the user wrote it.

To add a target, subclass ``Target`` and implement:

* ``roots()`` and ``spellings(obj)``: how generated code names an op.
  ``roots`` gives the globals every generated module starts with (the
  NumPy target: ``np`` and ``math``; non-finite numbers are written
  ``math.inf``/``math.nan``, so keep ``math``).  ``spellings`` yields, best
  first, the dotted ``Spelling`` texts that name ``obj`` (``np.linalg.solve``,
  ``xp.sin``), each with the global its text starts from; ``emit`` takes
  the first whose root no local variable hides, and binds an op with none
  under a name of its own.  An array-API target spells ``np.sin`` as
  ``xp.sin`` with ``xp`` the library's namespace; a compiler target spells
  what its compiler accepts.
* ``implementation(obj)``: what such a bound op is at run time.  The engine
  ops (``runtime.*``) are op identities like any other; the NumPy target
  binds them as they are, another target may bind its own version of one
  (a helper written for its arrays), which must do what the NumPy one does.
* ``tape()``: the ``TapeForm`` that writes the recording plan's ``ir.Push``
  and ``ir.Pop`` statements (``plan.py``) as code; ``empty()``, the
  tape a caller hands to a split adjoint's forward part (a fresh one each
  time where the tape is mutable); and ``for_backward(tape)``, the tape one
  call of the backward part may consume, leaving ``tape`` whole for the
  next (a ``vjp`` pullback may be called twice).  The NumPy target's
  ``ListTape`` appends to and pops from one Python list; ``TupleTape``
  threads a persistent stack of nested tuples (the source language's form,
  see below); a compiler would preallocate a typed stack per slot from the
  plan (each slot says the kinds of its values and the trip counts that
  bound it).
* ``checked_indexes(fn, kinds)``: the code with the index checks the target
  writes itself (the Numba target: where an index is not proven in range
  and its code runs without Numba's own checks); ``fn`` by default.
* ``store(stmt)``: how ``array[index] = value`` (an ``ir.Store``; with
  ``op``, ``array[index] op= value``) is written, as statements for
  ``emit`` to print.  The NumPy target writes in place; a target without
  in-place writes rebinds (``a = a.at[i].set(v)``, as a call of an op it
  binds).  The adjoint's scatter-add is such a store with ``op=operator.add``
  where an index cannot repeat a position, and the engine op
  ``runtime.getitem_grad`` (``np.add.at`` inside) where it may: the first
  is ``store``'s, the second ``implementation``'s.
* ``argument_kinds(fn, args)``: the kinds (``kinds.Kind``) of a call's
  arguments, what the code is specialised for (``arguments.py`` reads
  NumPy's arrays: a rank and the pattern of equal lengths); a target whose
  arrays are another library's reads their rank and shape its own way.
* ``handed_out(values, held, copy_all)`` and ``alone(gradient)``: the
  ownership check of the results given to the user (``ownership.py`` for
  NumPy's arrays): each result writable and sharing memory with no argument
  and no other result, copied only where that cannot be shown.

``builtin_spelling`` and ``declared_spellings`` (how the templates declare
NumPy's and ``math``'s functions spelled, ``rules.spell_module``) are there
to build on: a target that renames a module maps what they yield.

A target's code is run, never read back: a derivative taken again (``grad``
of ``grad``, a Hessian) reads the code of the level below, so those levels
are written in the source language, by ``SOURCE`` (the NumPy target with the
tape as nested tuples, values the transformer follows through a tuple display
and an unpacking, where a list the code appends to would be state it would
have to follow through method calls: ``pipeline``'s level functions and the
adjoint they call); only the code of the outermost level, and the callees it
builds, are the target's.

The targets: ``NumPyTarget`` (``NUMPY``), ``numba.target.NumbaTarget`` (``backend="numba"``), and
``array_api.target.ArrayAPITarget(xp)``, one per array namespace, which the API chooses call by call
from the arguments' types (PyTorch, JAX, Dask arrays: their code calls ``xp``, the array's own
namespace).

A target is compared by identity (one object per backend and configuration),
and what it spells must mean, at run time, what the op means in the source
language: the tests run one defined outside the package
(``tests/targets/test_targets.py``) over a corpus of functions and compare with
the NumPy target's results.
"""
from __future__ import annotations

import abc
import builtins
import dataclasses
import math
import types
import warnings
from dataclasses import dataclass
from typing import Any, Callable, Iterator, Optional, Sequence

import numpy as np

from ..core import arguments, ir
from . import ownership
from ..rules import registry as rules


@dataclass(frozen=True)
class Spelling:
    """A dotted name generated code may use for an op: ``text`` (``np.linalg.solve``) starts from the
    global ``root`` (``np``), which holds ``module``; a builtin (``abs``) has no root."""

    text: str
    root: Optional[str] = None
    module: Any = None


class TapeForm(abc.ABC):
    """How a target writes the tape: the recording plan's pushes and pops as code that runs."""

    @abc.abstractmethod
    def spell(self, fn: ir.Function) -> ir.Function:
        """``fn`` with every ``ir.Push`` and ``ir.Pop`` written as statements of this form (``fn``
        itself where it has none and threads no tape)."""

    @abc.abstractmethod
    def empty(self) -> Any:
        """The tape a caller hands to a split adjoint's forward part (``vjp``): a fresh one at each
        call where the tape is mutable."""

    def for_backward(self, tape: Any) -> Any:
        """The tape one call of a split adjoint's backward part may consume, ``tape`` (what the
        forward part returned) left as it is for another call: ``tape`` itself where popping
        takes nothing from it (a persistent tape)."""
        return tape


@dataclass(frozen=True)
class Capabilities:
    """What a target's code can or cannot do that changes the code generated for it: the one way a
    target reaches into the stages above it.  The driver reads it and hands each stage its part
    (``pipeline.py``: lowering, reverse generation), and ``emit`` its own; which of the optional
    passes a target takes it names by ``Target.passes``.  Everything else a target does (spelling,
    the tape, stores) it does below, on the IR handed to it."""

    # Lowering (``lower.lower``): the user's helpers lowered in place of their calls, asked for by a
    # target whose code cannot hand a tape from one function to another (a compiler's typed stacks).
    inlines_helpers: bool = False
    # Reverse generation (``reverse.reverse``): the adjoints of several slices of one array added into
    # one array in place (``d_a[1:] += d_part``); a target whose stores are not all in place (JAX's,
    # Dask's) says no.
    slices_in_place: bool = True
    # Printing (``emit``): a reverse loop over ``range(n)`` or ``range(a, b)`` (bound once, its bounds
    # too) written ``range(n - 1, -1, -1)``: a compiler makes better code of a constant step.
    counts_down: bool = False
    # Forward mode (``ad/vector``): beside the tangent code, its vector version (every tangent
    # with a leading axis of directions), which ``vector_sweep`` runs.
    vector_tangents: bool = False
    # Vector mode: a number's tangent computed one direction at a time, in a loop over the directions
    # (a compiler keeps each in a register); else as one array of all directions (an interpreter pays
    # for every trip of a loop).
    loops_over_directions: bool = False


class Target(abc.ABC):
    """What turns the adjoint IR into runnable code for one backend (see the module docstring)."""

    name = "target"
    backend = "target"  # what the API's backend= calls it
    capabilities = Capabilities()  # what changes the code generated for it (see ``Capabilities``)

    def passes(self, form: str) -> tuple[str, ...]:
        """The optional passes of the declared pipelines (``driver/pass_manager.py``) this target
        takes on a function of ``form`` (``ir.ADJOINT``, ``ir.PARTS``, ``ir.TANGENT``), by name: a
        target names passes, it never imports or hosts one.  "fold_fills": the spread adjoint of a
        reduction that is only multiplied becomes a 0-d factor the product broadcasts (NumPy's
        promotion rules, and Numba's); "drop_dead_element_stores", "keep_cells", "keep_primal_cells",
        "carry_elements", "release_dead_arrays": the reverse loops' stores nothing reads left out, their
        adjoint vectors (and the vectors a forward loop fills) as lists of Python floats, the element a
        trip writes for the next kept in a local, ``del``
        after an array's last read; "hoist_reverse_invariants", "hoist_forward_invariants": a reverse
        loop's recomputed arithmetic, and a forward loop's own, that no trip changes run once before it
        (under the loop's test); "sum_before_factors": a reverse loop's sum of products by such a factor
        summed first and multiplied once; "math_on_numbers": an adjoint times ``np.cos`` of a number written
        with ``math``'s function (a Python float, not NumPy's float64).  None by default."""
        return ()

    def __repr__(self) -> str:
        return f"<s2s_ad target {self.name}>"

    # -- op spelling and the runtime -------------------------------------------------------------

    @abc.abstractmethod
    def roots(self) -> dict[str, Any]:
        """The globals every generated module starts with (the modules its spellings start from)."""

    @abc.abstractmethod
    def spellings(self, obj: Any) -> Iterator[Spelling]:
        """How generated code may name the op ``obj``, best first; none: bound under a name."""

    def finish(self, function: Callable, emitted: Any) -> Callable:
        """What runs for ``function``, just compiled from ``emitted`` (``emit.Emitted``): the function
        itself, or a compiler's version of it (which must give the same results)."""
        return function

    def implementation(self, obj: Any) -> Any:
        """What generated code calls for an op it binds under a name (an engine op, a user's
        function without a rule): ``obj`` itself unless this target has its own version."""
        return obj

    def directions(self, run: Callable, values: tuple, positions: list[int], seeds: list[Any], out: Any) -> Any:
        """The tangents of ``run``'s result (``run``: tangent code this target made, called as
        ``run(*values, *tangents)``) along every direction of ``seeds`` (one array per moved position,
        the directions on its leading axis), stacked, in one call; None (the default) where the
        caller is to call ``run`` once per direction."""
        return None

    def vector_sweep(self, run: Callable, values: tuple, seeds: list[Any]) -> Optional[tuple[Any, Any]]:
        """``(value, tangents)`` of ``run`` (tangent code this target made) along every direction of
        ``seeds`` (one float64 array per tangent parameter, the directions on its leading axis) from one
        run of its vector version (``Capabilities.vector_tangents``), the tangents stacked on that axis;
        None (the default) where there is none."""
        return None

    def read_back(self) -> "Target":
        """The target writing a gradient that forward mode reads back for code this target runs (a
        Hessian, ``jvp`` of a gradient): ``SOURCE``, the tape in nested tuples, unless this target
        compiles a form of its own better (Numba: preallocated arrays)."""
        return SOURCE

    def refused(self, function: Callable) -> Optional[str]:
        """Why ``function`` (code this target finished) will run as Python although this target compiles,
        where that is known before it runs; None (the default) where it is not so known."""
        return None

    def handed_split(self, forward: ir.Function, backward: ir.Function
                     ) -> Optional[tuple[ir.Function, ir.Function]]:
        """The API's split form (``vjp``) as two functions this target runs apart, the tape handed from
        the first to the second in a form of this target's own (their pushes and pops written, each
        part emitted and finished alone: Numba compiles both); None (the default) where the parts
        are emitted together and their tape is ``tape()``'s."""
        return None

    # -- the tape and stores ---------------------------------------------------------------------

    @abc.abstractmethod
    def tape(self) -> TapeForm:
        """How this target writes the tape."""

    @abc.abstractmethod
    def store(self, stmt: ir.Store) -> list[ir.Stmt]:
        """The statements that write ``stmt`` (``array[index] = value``, or ``op=`` it)."""

    def written(self, fn: ir.Function) -> ir.Function:
        """``fn`` (its tape written) as this target writes it where its compiler reads some form of the
        NumPy target's code otherwise (the same meaning, another spelling): ``fn`` itself by default."""
        return fn

    def checked_indexes(self, fn: ir.Function, kinds: dict[str, Any]) -> ir.Function:
        """``fn`` (its tape written) with what this target's code checks of its indexes itself
        written in, given ``kinds``, what every call passes for its parameters: a compiler that
        drops its bounds checks checks the indexes it cannot prove in range; ``fn`` itself by
        default (Python and NumPy check every index)."""
        return fn

    # -- arguments read ---------------------------------------------------------------------------

    @abc.abstractmethod
    def argument_kinds(self, fn: Any, args: Sequence[Any]) -> tuple:
        """The kind of each of a call's arguments (``kinds.Kind``, a container's tree of them), the
        first read by its attributes where ``fn`` is its method (``self``)."""

    def runner(self, function: Callable, args: tuple) -> Callable:
        """What a cached call runs of ``function`` (code this target finished) for calls like
        ``args``: calls that the API finds by their arguments' types, arrays' shapes and dtypes, so
        that what a target's wrapper would decide from those on every call may be decided here,
        once.  ``function`` itself by default."""
        return function

    # -- results handed to the user --------------------------------------------------------------

    def like(self, primal: Any, gradient: Any) -> Any:
        """``gradient`` given the type and precision of ``primal`` (a float32 argument, a float32
        gradient): NumPy's rules (``arguments.like``) unless the target's arrays have their own."""
        return arguments.like(primal, gradient)

    @abc.abstractmethod
    def handed_out(self, values: Any, held: tuple, copy_all: bool = False) -> Any:
        """``values`` (a result, or a tuple or list of them) as the user gets them: sharing memory
        with nothing in ``held`` nor with one another, writable (copied only where they would not
        be, or with ``copy_all`` always)."""

    def as_returned(self, primal: Any) -> Optional[Callable[[Any], bool]]:
        """For code that returns only new objects of its own (``sharing.fresh_returns``), a quick
        test of the gradient by ``primal`` it returned (``primal``: an argument of a call of the
        types, shapes and dtypes a cached entry is kept for): true only where ``like`` would leave
        the gradient as it is and ``handed_out`` would not copy it, so that the API hands it over
        untouched.  None (the default) where the target has no such test: every gradient then takes
        ``like`` and the ownership check.  The test may carry ``inline(name, namespace)``: the same
        test as a Python expression of ``name``, the objects it names put in ``namespace``, which a
        generated caller writes out in place of a call."""
        return None

    @abc.abstractmethod
    def alone(self, gradient: Any) -> bool:
        """The cheap check: True only where ``gradient`` (a result or a tuple of them, held in the
        caller's local variable) surely needs no copy (``handed_out`` is then skipped)."""


def _quiet_getattr(module: Any, name: str) -> Any:
    """``getattr`` without the DeprecationWarning old NumPy gives for aliases such as ``np.float``."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return getattr(module, name, None)


def declared_spellings(obj: Any) -> Iterator[Spelling]:
    """``np.sin`` for a public function of a module a template declared with ``rules.spell_module``
    (in the order declared), then ``np.add.reduce`` for a method of an object so spelled."""
    name = getattr(obj, "__name__", None)
    if not name or name.startswith("_"):
        return
    yield from _module_spellings(obj, name)
    # a method of an object a module names, bound to it: np.add.reduce (equal, not identical, each time)
    owner = getattr(obj, "__self__", None)
    if owner is not None and not isinstance(owner, types.ModuleType) and _quiet_getattr(owner, name) == obj:
        owner_name = getattr(owner, "__name__", None)
        if owner_name and not owner_name.startswith("_"):
            for base in _module_spellings(owner, owner_name):
                yield dataclasses.replace(base, text=f"{base.text}.{name}")


def _module_spellings(obj: Any, name: str) -> Iterator[Spelling]:
    for prefix, module, root, root_module in rules.module_spellings():  # declared in templates/
        if _quiet_getattr(module, name) is obj:
            yield Spelling(f"{prefix}.{name}", root, root_module)


def builtin_spelling(obj: Any) -> Optional[Spelling]:
    """``abs`` for a builtin: Python's own name (asked first: old NumPy has ``np.float is float``)."""
    name = getattr(obj, "__name__", None)
    return Spelling(name) if name and getattr(builtins, name, None) is obj else None


def pushed_onto(stack: str, push: ir.Push) -> ir.Stmt:
    """``stack.append(a)``: a push onto a list (a record of several values as one tuple)."""
    record = push.values[0] if len(push.values) == 1 else ir.Display("tuple", push.values)
    return ir.Effect(ir.Call(list.append, (ir.Var(stack), record)), push.line)


def popped_from(stack: str, pop: ir.Pop) -> ir.Stmt:
    """``a = stack.pop()`` (``a, b = stack.pop()``): a pop from a list."""
    popped = ir.Call(list.pop, (ir.Var(stack),))
    return ir.Assign(pop.targets[0], popped, pop.line) if len(pop.targets) == 1 \
        else ir.Unpack(pop.targets, popped, pop.line)


def _threaded(fn: ir.Function, push: Callable[[ir.Push], ir.Stmt], pop: Callable[[ir.Pop], ir.Stmt],
              empty: ir.Expr) -> ir.Function:
    """``fn`` with each push and pop written by ``push`` and ``pop``, its tape (``fn.plan.tape``)
    threaded: the one piece starts with ``tape = empty``, a part is handed the tape (its parameter);
    ``fn`` itself where it has none and threads no tape (``Target.tape``)."""
    tape = fn.plan.tape
    replaced: dict[int, Optional[ir.Stmt]] = {}
    for stmt in ir.walk(fn.body):
        if isinstance(stmt, ir.Push):
            replaced[stmt.sid] = push(stmt)
        elif isinstance(stmt, ir.Pop):
            replaced[stmt.sid] = pop(stmt)
    threaded = replaced or any(tape in ir.targets_of(s) for s in ir.walk(fn.body))  # helpers' parts
    if not threaded:
        return fn
    body = ir.replace_statements(fn.body, replaced)
    if tape not in fn.params:
        body.insert(0, ir.Assign(tape, empty))
    return dataclasses.replace(fn, body=body)


class TupleTape(TapeForm):
    """The tape as a persistent stack made of tuples: ``tape = (a, b, tape)`` pushes,
    ``a, b, tape = tape`` pops, ``None`` is the empty tape.  It is threaded through generated code
    (a callee's parts take the tape and return it), so that code stays pure Python and can be
    transformed again."""

    def spell(self, fn: ir.Function) -> ir.Function:
        """``fn`` with its pushes and pops written as assignments of nested tuples."""
        if fn.plan is None:
            return fn
        tape = fn.plan.tape
        return _threaded(fn, lambda push: ir.Assign(tape, ir.Display("tuple", push.values + (ir.Var(tape),)), push.line),
                         lambda pop: ir.Unpack(pop.targets + (tape,), ir.Var(tape), pop.line), ir.Const(None))

    def empty(self) -> Any:
        return None


class ListTape(TapeForm):
    """The tape as one Python list used as a stack: ``tape.append(a)`` (``tape.append((a, b))`` for
    a record of several values) pushes, ``a = tape.pop()`` (``a, b = tape.pop()``) pops, ``[]`` is
    the empty tape.  A helper's parts take the list and return it, as they do the tuple chain.

    Why not the tuple chain in code that runs: each link of ``(a, tape)`` holds the next, so every
    link stays tracked by Python's cycle collector, and a loop of 10^6 steps leaves 10^6 tracked
    tuples that each collection of the oldest generation walks (the gradient of such a loop took
    2.5x as long with the collector on as with it off).  Here the list is one tracked object; a
    record of one number or array is not tracked at all, and a record of several is a tuple of
    them, which the collector stops tracking the first time it sees it (it holds nothing that
    could make a cycle).  The backward part pops, so it consumes the tape: ``for_backward``
    hands it a copy (a pullback may be called again)."""

    def spell(self, fn: ir.Function) -> ir.Function:
        """``fn`` with its pushes and pops written as ``append`` and ``pop`` calls on one list."""
        if fn.plan is None:
            return fn
        tape = fn.plan.tape
        return _threaded(fn, lambda push: pushed_onto(tape, push), lambda pop: popped_from(tape, pop),
                         ir.Display("list", ()))

    def empty(self) -> Any:
        return []

    def for_backward(self, tape: Any) -> Any:
        return list(tape)  # the references alone are copied: the records are never written to


class NumPyTarget(Target):
    """Today's code: Python calling NumPy as the user's code does (``np.sin``, ``math.cos``), the
    engine ops bound as they are, the tape a list used as a stack, stores in place, and NumPy's
    arrays checked for ownership by their flags and reference counts (``ownership.py``)."""

    name = "numpy"
    backend = "python"  # the API's name for it
    # Vector tangents: a dense Jacobian of tanh(W @ x) of 200 numbers in 0.47 ms against 1.2 ms with each
    # tangent wrapped at run time (``targets/batched``), which stays for the code vector mode refuses.
    capabilities = Capabilities(vector_tangents=True)
    _tape: TapeForm = ListTape()

    def passes(self, form: str) -> tuple[str, ...]:
        return ("fold_fills", "drop_dead_element_stores", "keep_cells", "keep_primal_cells", "carry_elements",
                "hoist_reverse_invariants", "sum_before_factors", "hoist_forward_invariants", "release_dead_arrays",
                "grow_lists_in_place", "math_on_numbers")

    def roots(self) -> dict[str, Any]:
        return {"np": np, "math": math}

    def spellings(self, obj: Any) -> Iterator[Spelling]:
        builtin = builtin_spelling(obj)
        if builtin is not None:
            yield builtin
            return
        yield from declared_spellings(obj)

    def tape(self) -> TapeForm:
        return self._tape

    def store(self, stmt: ir.Store) -> list[ir.Stmt]:
        return [stmt]  # in place: a[i] = v, a[i] += v

    def vector_sweep(self, run: Callable, values: tuple, seeds: list[Any]) -> Optional[tuple[Any, Any]]:
        vector = getattr(run, "vector", None)
        if vector is None or not takes_directions(values, seeds):
            return None
        try:
            out, swept = vector(*values, *seeds)
        except Exception:  # (the one-direction code runs instead, and raises what the user's code raises)
            return None
        if not (isinstance(swept, np.ndarray) and swept.shape[:1] == (len(seeds[0]),)):
            return None
        return out, swept

    # Plain functions, as ``alone``: the API's hot path calls them for every call.
    argument_kinds = staticmethod(arguments.kinds_of)
    like = staticmethod(arguments.like)

    def handed_out(self, values: Any, held: tuple, copy_all: bool = False) -> Any:
        return ownership.handed_out(values, held, copy_all)

    def as_returned(self, primal: Any) -> Optional[Callable[[Any], bool]]:
        # an array of the primal's dtype, writable (fresh code can return a read-only view of its
        # own, np.broadcast_to's): what like leaves alone and needs no copy.  (Numba's arrays have
        # dtype objects of their own, equal to NumPy's.)
        if primal.__class__ is not np.ndarray:
            return None
        dtype = primal.dtype

        def writable_of_its_dtype(gradient: Any) -> bool:
            return gradient.__class__ is np.ndarray and gradient.dtype == dtype and gradient.flags.writeable

        def inline(name: str, namespace: dict[str, Any]) -> str:
            # the same test as an expression, for a generated caller to write out (calling.py): the
            # dtype object itself first (NumPy's and Numba's results hold the canonical one), else equal
            namespace.update(rNDARRAY=np.ndarray, rDTYPE=dtype)
            return (f"({name}.__class__ is rNDARRAY and ({name}.dtype is rDTYPE or {name}.dtype == rDTYPE)"
                    f" and {name}.flags.writeable)")
        setattr(writable_of_its_dtype, "inline", inline)
        return writable_of_its_dtype

    # A plain function, not a method: the reference counts it reads are calibrated for a call
    # made straight from the caller's frame (ownership._calibrated), with no frame in between.
    alone = staticmethod(ownership.alone)


class SourceLanguageTarget(NumPyTarget):
    """The NumPy target with the tape as nested tuples (``TupleTape``): the form of the code the
    transformer reads back, a level of ``grad(grad(f))`` or of a Hessian and the adjoint it calls
    (see the module docstring)."""

    name = "source"
    capabilities = Capabilities()  # (code read back and transformed again: no vector version beside it)
    _tape: TapeForm = TupleTape()

    def passes(self, form: str) -> tuple[str, ...]:
        return ("fold_fills",)  # no ``del``, no lists of floats: the code stays in the subset the transformer reads


def takes_directions(values: tuple, seeds: list[Any]) -> bool:
    """Whether vector code (``ad/vector``) gives the one-direction code's numbers for these arguments:
    every value a real number or an array of integers, truths or float64 (the tangents' zeros it makes
    are float64), and every seed a float64 array."""
    return all(isinstance(v, (float, int)) or isinstance(v, np.ndarray) and (v.dtype.kind in "iub" or v.dtype == np.float64)
               for v in values) and all(isinstance(s, np.ndarray) and s.dtype == np.float64 for s in seeds)


NUMPY = NumPyTarget()  # the default target
SOURCE = SourceLanguageTarget()  # the code of a level the next one reads back
