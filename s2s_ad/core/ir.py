"""The intermediate representation shared by the middle stages.

Expressions are small immutable trees: ``Var`` (a name), ``Const`` (a Python
value), ``Call`` (a call of a Python callable, recognised by identity: an
operator such as ``operator.add``, ``numpy.sin``, a runtime helper), ``Slice``
and ``Display`` (tuple and list displays, used for indices and shape
arguments); and, inside the generators only, ``Zero(kind)``, a derivative
known to be zero.

A ``Function`` holds parameters and a body of ``Assign`` statements ending in
``Return``.  Two forms use it:

* the **SSA form** made by ``lower.py``.  Its invariants, checked by
  :func:`check_ssa`, are: (1) every name is assigned once, parameters
  included; (2) every name is assigned before it is read; (3) every
  assignment is three-address: its value is an *atom* (``Var``/``Const``), a
  tuple or list display of atoms, or a single ``Call`` whose arguments are
  atoms, slices of atoms, or displays of atoms; (4) the body ends with one ``Return`` of an atom, and nothing else
  returns.
* the **adjoint form** made by ``reverse.py``: the same statements, but values
  may be nested expressions and adjoint names may be reassigned (``d_a = d_a
  + ...``), as a person writes accumulations.

``reverse.py`` and ``forward.py`` work on this IR only; only ``lower.py`` and
``emit.py`` know gast.
"""
from __future__ import annotations

import dataclasses
import itertools
from dataclasses import dataclass, field
from typing import Any, Callable, Iterator, Mapping, Optional, Union

from .identity import WeakIdentityMap
from .kinds import Kind

# Every statement has an identity of its own, ``sid``, drawn from this counter when it is made and kept
# by ``dataclasses.replace``: a statement rebuilt with a new value is still the same statement (the
# primal's, or the one a pass generated), which passes recognise by ``sid``, never by the Python object's
# identity.  Equality ignores it (two statements that read the same compare equal).
_STATEMENT_IDS = itertools.count(1)


@dataclass(frozen=True)
class Var:
    name: str


# The names the user's code gave the constants it read (a module-level array ``SCALE``), by the
# object's identity, held weakly: what generated code calls them (``name_constant``, ``constant_name``).
_CONSTANT_NAMES: WeakIdentityMap[Any, str] = WeakIdentityMap()


def name_constant(value: Any, name: str) -> None:
    """Remember that the user's code calls the constant ``value`` (an array it reads) ``name``."""
    try:
        _CONSTANT_NAMES[value] = name
    except TypeError:  # (an object that takes no weak reference keeps the generic name)
        pass


def constant_name(value: Any) -> Optional[str]:
    """The name the user's code gave the constant ``value`` (``name_constant``), if any."""
    return _CONSTANT_NAMES.get(value)


@dataclass(frozen=True, eq=False)
class Const:
    value: Any


@dataclass(frozen=True)
class Call:
    fn: Any
    args: tuple["Expr", ...]
    kwargs: tuple[tuple[str, "Expr"], ...] = ()


@dataclass(frozen=True)
class Slice:
    lower: Optional["Expr"]
    upper: Optional["Expr"]
    step: Optional["Expr"]


@dataclass(frozen=True)
class Display:
    kind: str  # "tuple" or "list"
    items: tuple["Expr", ...]


@dataclass(frozen=True, eq=False)
class Part:
    """A callable part of another generated adjoint: prints as ``d_helper.forward``.

    ``owner`` is filled in (``owner.forward``, ``owner.backward``) once the
    callee is compiled, which is what lets a function call itself.
    """

    owner: Any
    name: str


@dataclass(frozen=True)
class Zero:
    """A derivative known to be zero (the tangent of a value that carries none), of the kind of the
    derivative it stands for (``kinds.derivative_kind``).

    Only the generators hold one, while they build a derivative from a rule's template: they drop
    it wherever it can be (``0 * a``, ``a + 0``, a linear function of it) and write it as the zero of
    its kind where it cannot (``forward.TangentSweep.spelled``), so no ``Zero`` reaches the code that
    is emitted.  Unlike a ``Const(0.0)`` it cannot be mistaken for a zero the user wrote.
    """

    kind: Kind


Expr = Union[Var, Const, Call, Slice, Display, Zero]


@dataclass
class Assign:
    """``target = value``.  ``merge`` marks the copies that join control flow:
    a branch's value into the variable both branches assign, or an
    iteration's value into a loop-carried variable."""

    target: str
    value: Expr
    line: Optional[int] = None
    merge: bool = False
    sid: int = field(default_factory=lambda: next(_STATEMENT_IDS), compare=False, repr=False)


@dataclass
class Unpack:
    """``a, b = value`` (generated code only: restoring values from the tape)."""

    targets: tuple[str, ...]
    value: Expr
    line: Optional[int] = None
    sid: int = field(default_factory=lambda: next(_STATEMENT_IDS), compare=False, repr=False)


@dataclass
class Store:
    """``array[index] = value`` (``op`` set: ``array[index] op= value``), in place.

    In SSA form only into arrays the function created itself; ``array``
    keeps its name: the statement changes the object, not the binding.
    """

    array: str
    index: Expr
    value: Expr
    line: Optional[int] = None
    op: Any = None
    sid: int = field(default_factory=lambda: next(_STATEMENT_IDS), compare=False, repr=False)


@dataclass
class Effect:
    """A call made for its effect (generated code only: ``tape.append(x)``)."""

    value: Expr
    line: Optional[int] = None
    sid: int = field(default_factory=lambda: next(_STATEMENT_IDS), compare=False, repr=False)


@dataclass
class Push:
    """Record ``values`` in ``slot`` of the tape (generated code only).

    ``slot`` names a slot of the function's ``RecordingPlan`` (``plan.py``):
    what it holds and where it is read back.  How a push is written in Python
    (the NumPy target appends to a list) is decided in one place, the target's (``target.Target.tape``).
    """

    slot: str
    values: tuple[Expr, ...]
    line: Optional[int] = None
    sid: int = field(default_factory=lambda: next(_STATEMENT_IDS), compare=False, repr=False)


@dataclass
class Pop:
    """Take back into ``targets`` what the matching ``Push`` of ``slot`` recorded (generated code only)."""

    slot: str
    targets: tuple[str, ...]
    line: Optional[int] = None
    sid: int = field(default_factory=lambda: next(_STATEMENT_IDS), compare=False, repr=False)


@dataclass
class If:
    test: Expr
    body: list["Stmt"]
    orelse: list["Stmt"]
    line: Optional[int] = None
    sid: int = field(default_factory=lambda: next(_STATEMENT_IDS), compare=False, repr=False)


@dataclass
class For:
    """``for index in iterable: body``; ``iterable`` is an atom holding a range.

    ``exit``, if set, is a flag read after the body: the loop stops after an
    iteration that set it (this is what ``break`` and ``return`` become).
    ``trips``, if set, names a counter of completed iterations kept by the
    forward sweep of a loop that can stop early.
    """

    index: str
    iterable: Expr
    body: list["Stmt"]
    line: Optional[int] = None
    exit: Optional[Expr] = None
    reverse: bool = False  # generated code: iterate the range backwards
    # Set for a loop the user marked ``checkpointed``: the segment length asked for (``Const(None)``: about
    # the square root of the trip count).  Reverse mode then keeps snapshots, not every iteration.
    checkpoint: Optional[Expr] = None
    sid: int = field(default_factory=lambda: next(_STATEMENT_IDS), compare=False, repr=False)


@dataclass
class While:
    """``while True: <test_block>; if not test: break; body`` in structured form."""

    test_block: list["Stmt"]
    test: Expr
    body: list["Stmt"]
    line: Optional[int] = None
    exit: Optional[Expr] = None
    # Set for a loop the user marked ``while fixed_point(test):``: reverse mode records nothing in it and
    # reverses it as a fixed-point iteration of its own (``ad/fixed_point.py``).
    fixed_point: bool = False
    # Set for ``while checkpointed(test, snapshots=c):`` (``snapshots(c)``): reverse mode counts its trips
    # in a first pass, then follows the binomial schedule over them (``ad/online.py``).
    checkpoint: Optional[Expr] = None
    sid: int = field(default_factory=lambda: next(_STATEMENT_IDS), compare=False, repr=False)


@dataclass
class Return:
    value: Expr
    line: Optional[int] = None
    sid: int = field(default_factory=lambda: next(_STATEMENT_IDS), compare=False, repr=False)


@dataclass
class Comment:
    """A comment line in generated code (``# reverse sweep``)."""

    text: str
    line: Optional[int] = None
    sid: int = field(default_factory=lambda: next(_STATEMENT_IDS), compare=False, repr=False)


@dataclass
class Release:
    """``del a, b``: code that runs lets go of values nothing after it reads, so that their memory
    is reused at once (generated code only, added last by a target: ``release.py``)."""

    names: tuple[str, ...]
    line: Optional[int] = None
    sid: int = field(default_factory=lambda: next(_STATEMENT_IDS), compare=False, repr=False)


Stmt = Union[Assign, Unpack, Store, Effect, Push, Pop, If, For, While, Return, Comment, Release]
STATEMENTS = (Assign, Unpack, Store, Effect, Push, Pop, If, For, While, Return, Comment, Release)


# The forms of a generated function, which the passes after generation read and return (driver/
# pass_manager.py) and a target names its passes for: both sweeps in one function, a split adjoint's parts.
ADJOINT, PARTS, TANGENT = "adjoint", "split parts", "tangent"


@dataclass
class Function:
    """A function in IR form, with where it came from for comments and errors."""

    name: str
    params: list[str]
    body: list[Stmt]
    filename: str = "<unknown>"
    firstline: int = 1
    docstring: Optional[str] = None
    # Names bound in the generated module's globals (arrays, user black boxes).
    constants: dict[str, Any] = field(default_factory=dict)
    # ``name op= value`` statements (in place in Python) lowered as a new binding: right for numbers, wrong
    # for an array another name shares; checked once argument kinds are known (checks.check_in_place).
    in_place: list["InPlace"] = field(default_factory=list)
    # Reads of ``a[i]`` (integer index) after ``a`` was written: a number if ``a`` has as many dimensions as
    # the index has integers, else a view showing the write; checked once kinds are known (checks.py).
    element_reads: list["ElementRead"] = field(default_factory=list)
    # Reads lowering cannot follow if the code lowered so far is final: the pipeline raises the first once no
    # further lowering rewrites an update as a store (pipeline.lowered), which may make the read a plain one.
    refused_reads: list[Exception] = field(default_factory=list)
    # Writes through an item of ``x.copy()``, ``x`` maybe a list (whose copy holds its arrays): each copy's
    # argument and the refusal raised unless the kinds prove it an array or a number (pipeline.lowered).
    writes_into_copies: list[tuple["Expr", Exception]] = field(default_factory=list)
    # Containers (containers.py): the SSA parameters holding each container parameter's leaves, the
    # structure of a container result (returned as a tuple of its leaves) and, for has_aux, the
    # auxiliary result (an atom or a display of atoms) and its structure.
    groups: dict[str, list[str]] = field(default_factory=dict)
    result_tree: Any = None
    aux: Optional["Expr"] = None
    aux_tree: Any = None
    # Values the result provably does not depend on (shift_invariance.py: the maximum subtracted
    # before exp in a softmax): the analysis lets no derivative flow into them.
    derivative_free: frozenset[str] = frozenset()
    # Adjoint form: what the forward sweep records and the reverse sweep reads back (plan.RecordingPlan).
    plan: Any = None
    # Adjoint form: the parameters the gradient is taken by that are arrays (SSA names; of floats: the API
    # refuses to differentiate by an integer or boolean array)
    differentiated: frozenset[str] = frozenset()
    # Adjoint form: those of them known to be vectors (one axis)
    vectors: frozenset[str] = frozenset()
    # Adjoint form: the parameters every call passes a number for (an int or a float; SSA names)
    numbers: frozenset[str] = frozenset()


@dataclass(frozen=True)
class InPlace:
    value: str  # the SSA name updated
    name: str  # the user's name for it
    shared: str  # why the object may be shared: "the argument x", "the same object as a", "a view of x"
    line: Optional[int]
    column: Optional[int]
    base: Optional[str] = None  # for a view: the array it views
    integers: int = 0  # for a view by index: how many integer parts the index has
    keeps_dimension: bool = True  # for a view by index: a slice (or None, Ellipsis) keeps a dimension
    # the value is an array (or number) the function made, not a view: where the kinds prove an array,
    # the update is lowered again as the store NumPy makes (``pipeline.lowered``), not refused
    owned: bool = False
    filename: Optional[str] = None  # the file of the update's line (a helper lowered in place: the helper's)
    site: tuple = ()  # the calls inlined around it, where it was lowered (frontend/shared_updates.Store)
    # The run-time check before the new binding that the value is a number (``Effect``); the
    # pipeline drops it where the kinds prove that (checks.check_in_place).
    guard: Optional["Effect"] = field(default=None, compare=False)


@dataclass(frozen=True)
class ElementRead:
    """A read of ``name`` = ``array[index]`` after ``array`` was written (see ``Function.element_reads``)."""

    array: str
    name: str
    index: tuple  # the index's parts: atoms
    line: Optional[int]
    hint: str  # what the refusal says to do
    # True for ``row *= 3`` with ``row = a[1]``, lowered as a write into ``a``: right only where
    # ``a[1]`` is a view (``a`` has more dimensions than the index has parts), checked the other way round
    view: bool = False
    guard: Optional["Effect"] = None  # for a view: the run-time check, dropped where the kinds decide
    # ``top = B[0]`` read after ``B`` was written: the statement taking ``B[0]`` again (right where it is a
    # view), and the value taken before (right where it is a copy: one number, an integer-array index)
    retake: Optional["Assign"] = field(default=None, compare=False)
    kept: Optional[str] = None
    # for a view: the store into ``array`` (right where ``array[index]`` is a view), and the value the name
    # is rebound to where it is one number (``first *= 3`` of ``first = m[0]``, m 1-d: ``first * 3``, m unchanged)
    store: Optional["Store"] = field(default=None, compare=False)
    number: Any = None


def blocks(stmt: Stmt) -> list[list[Stmt]]:
    """The nested statement lists of a compound statement."""
    if isinstance(stmt, If):
        return [stmt.body, stmt.orelse]
    if isinstance(stmt, For):
        return [stmt.body]
    if isinstance(stmt, While):
        return [stmt.test_block, stmt.body]
    return []


def with_blocks(stmt: Stmt, rebuild: Callable[[list[Stmt]], list[Stmt]]) -> Stmt:
    """``stmt`` with each of its nested blocks replaced by what ``rebuild`` makes of it; ``stmt`` itself
    where it has no blocks, or ``rebuild`` returned every block as it was (the same list)."""
    if isinstance(stmt, If):
        body, orelse = rebuild(stmt.body), rebuild(stmt.orelse)
        if body is stmt.body and orelse is stmt.orelse:
            return stmt
        return dataclasses.replace(stmt, body=body, orelse=orelse)
    if isinstance(stmt, For):
        body = rebuild(stmt.body)
        return stmt if body is stmt.body else dataclasses.replace(stmt, body=body)
    if isinstance(stmt, While):
        test_block, body = rebuild(stmt.test_block), rebuild(stmt.body)
        if test_block is stmt.test_block and body is stmt.body:
            return stmt
        return dataclasses.replace(stmt, test_block=test_block, body=body)
    return stmt


def statements_rebuilt(body: list[Stmt], rebuild: Callable[[Stmt], Stmt]) -> list[Stmt]:
    """``body`` with each statement, nested blocks' too, replaced by what ``rebuild`` makes of it (its
    blocks then rebuilt the same way); a statement found in two places (a checkpointed loop's body, run
    again in the reverse sweep) is rebuilt once and the one result put in both."""
    done: dict[int, Stmt] = {}

    def block(stmts: list[Stmt]) -> list[Stmt]:
        return [one(stmt) for stmt in stmts]

    def one(stmt: Stmt) -> Stmt:
        if stmt.sid not in done:
            done[stmt.sid] = with_blocks(rebuild(stmt), block)
        return done[stmt.sid]

    return block(body)


def transformed(body: list[Stmt], visit: Callable[[Expr], Optional[Expr]]) -> list[Stmt]:
    """``body`` with every expression its statements read, nested blocks' too, rebuilt by ``transform``
    with ``visit`` (a Store's array, a name, stays as it is)."""
    return _expressions_rebuilt(body, lambda e: transform(e, visit), lambda array: array)


def _expressions_rebuilt(body: list[Stmt], expr: Callable[[Expr], Expr], array: Callable[[str], str]
                         ) -> list[Stmt]:
    """``body`` with every statement's expressions rebuilt by ``expr`` (a Store's array name by ``array``),
    nested blocks' too.  A statement found in two places (a checkpointed loop's body, run again in the
    reverse sweep, is the forward sweep's statements) is rebuilt once and the one result put in both:
    two rebuilt copies would share an identity (``check_identities``)."""
    done: dict[int, Stmt] = {}

    def maybe(e: Optional[Expr]) -> Optional[Expr]:
        return None if e is None else expr(e)

    def block(stmts: list[Stmt]) -> list[Stmt]:
        return [one(stmt) for stmt in stmts]

    def one(stmt: Stmt) -> Stmt:
        if stmt.sid in done:
            return done[stmt.sid]
        new = stmt
        if isinstance(stmt, (Assign, Unpack, Effect, Return)):
            new = dataclasses.replace(stmt, value=expr(stmt.value))
        elif isinstance(stmt, Store):
            new = dataclasses.replace(stmt, array=array(stmt.array), index=expr(stmt.index), value=expr(stmt.value))
        elif isinstance(stmt, Push):
            new = dataclasses.replace(stmt, values=tuple(expr(v) for v in stmt.values))
        elif isinstance(stmt, If):
            new = dataclasses.replace(stmt, test=expr(stmt.test))
        elif isinstance(stmt, For):
            new = dataclasses.replace(stmt, iterable=expr(stmt.iterable), exit=maybe(stmt.exit),
                                      checkpoint=maybe(stmt.checkpoint))
        elif isinstance(stmt, While):
            new = dataclasses.replace(stmt, test=expr(stmt.test), exit=maybe(stmt.exit))
        done[stmt.sid] = new = with_blocks(new, block)
        return new

    return block(body)


def block_key(body: list[Stmt]) -> tuple[int, ...]:
    """A block's identity: its statements' (a block that holds other statements is another block)."""
    return tuple(s.sid for s in body)


class IdentityViolation(Exception):
    """Two statements of one function share an identity (``sid``): raised by ``check_identities``."""


def check_identities(body: list[Stmt], after: str) -> None:
    """Raise ``IdentityViolation`` where two statements of ``body`` share a ``sid`` (``after``: the pass
    that made it, named in the message): passes that key statements by ``sid`` would mistake one for
    the other."""
    shared = shared_identities(body)
    if shared:
        raise IdentityViolation(f"internal error in s2s_ad: after the pass {after}, two statements share the "
                                f"identity of {shared[0]!r} (one was rebuilt with dataclasses.replace and both kept)")


def shared_identities(body: list[Stmt]) -> list[Stmt]:
    """The statements of ``body`` whose ``sid`` another statement there has too (none in well-formed IR:
    a statement copied into a second place must be made anew, not rebuilt with ``dataclasses.replace``)."""
    first: dict[int, Stmt] = {}
    shared: list[Stmt] = []
    for stmt in walk(body):
        seen = first.setdefault(stmt.sid, stmt)
        if seen is not stmt:
            shared.append(stmt)
    return shared


def replace_statements(body: list[Stmt], replaced: dict[int, Any]) -> list[Stmt]:
    """``body`` with statements swapped by identity (``sid``) (``None``: dropped; a list: several in its place),
    nested blocks rebuilt (a statement found in two places, once: see ``_expressions_rebuilt``)."""
    done: dict[int, Stmt] = {}

    def block(stmts: list[Stmt]) -> list[Stmt]:
        out: list[Stmt] = []
        for stmt in stmts:
            if stmt.sid not in replaced:
                if stmt.sid not in done:
                    done[stmt.sid] = with_blocks(stmt, block)
                out.append(done[stmt.sid])
                continue
            found = replaced[stmt.sid]
            if isinstance(found, list):
                out.extend(found)
            elif found is not None:
                out.append(found)
        return out

    return block(body)


def renamed(body: list[Stmt], mapping: dict[str, str]) -> list[Stmt]:
    """``body`` with every read of a name in ``mapping`` reading its replacement instead (a Store's
    array too), nested blocks' too."""
    swap: dict[str, Expr] = {old: Var(new) for old, new in mapping.items()}
    return _expressions_rebuilt(body, lambda e: substitute(e, swap), lambda array: mapping.get(array, array))


def walk(body: list[Stmt]) -> Iterator[Stmt]:
    """Every statement, nested ones included, in program order."""
    for stmt in body:
        yield stmt
        for block in blocks(stmt):
            yield from walk(block)


def exprs_of(stmt: Stmt) -> list[Expr]:
    """The expressions a statement itself reads (not its nested blocks')."""
    if isinstance(stmt, (Assign, Unpack, Effect, Return)):
        return [stmt.value]
    if isinstance(stmt, Store):
        return [Var(stmt.array), stmt.index, stmt.value]
    if isinstance(stmt, Push):
        return list(stmt.values)
    if isinstance(stmt, If):
        return [stmt.test]
    if isinstance(stmt, For):
        return [stmt.iterable] + [e for e in (stmt.exit, stmt.checkpoint) if e is not None]
    if isinstance(stmt, While):
        return [stmt.test] + ([stmt.exit] if stmt.exit is not None else [])
    return []  # Comment, Release (what it names is no read: nothing after reads those names)


def targets_of(stmt: Stmt) -> tuple[str, ...]:
    """The names a statement itself binds (not its nested blocks')."""
    if isinstance(stmt, Assign):
        return (stmt.target,)
    if isinstance(stmt, (Unpack, Pop)):
        return stmt.targets
    if isinstance(stmt, For):
        return (stmt.index,)
    return ()


def loop_carried(body: list[Stmt]) -> list[str]:
    """The values a loop body hands the next iteration: the merge copies closing it.

    (A merge copy earlier in the body starts a nested loop; it is not carried.)
    """
    carried = []
    for stmt in reversed(body):
        if not (isinstance(stmt, Assign) and stmt.merge):
            break
        carried.append(stmt.target)
    return carried[::-1]


def assigned_names(body: list[Stmt]) -> set[str]:
    return {t for stmt in walk(body) for t in targets_of(stmt)}


class NameSet(set):
    """A set of names taken, remembering per base how far ``fresh_name`` has counted
    (so naming stays linear in the size of the function)."""

    def __init__(self, names: Any = ()) -> None:
        super().__init__(names)
        self.counted: dict[str, int] = {}


def fresh_name(base: str, taken: set[str]) -> str:
    """``base``, or ``base_1``, ``base_2``... whichever is not yet in ``taken`` (which it joins)."""
    if base not in taken:
        taken.add(base)
        return base
    counted = getattr(taken, "counted", {})
    n = counted.get(base, 0)
    while True:
        n += 1
        name = f"{base}_{n}"
        if name not in taken:
            break
    counted[base] = n
    taken.add(name)
    return name


def index_parts(index: Expr) -> tuple:
    """The per-axis parts of the index in ``a[index]``.

    Only a tuple display (``a[i, j]``) is split: a list display (``a[[1, 1]]``)
    is one integer-array index, as NumPy reads it.
    """
    if isinstance(index, Display) and index.kind == "tuple":
        return index.items
    return (index,)


def call_of(stmt: Assign) -> Call:
    """The call ``stmt`` assigns, where the caller has made sure it assigns one (a rule's statement)."""
    call = stmt.value
    if not isinstance(call, Call):
        raise TypeError(f"line {stmt.line}: {stmt.target} is assigned no call")
    return call


def is_atom(expr: Expr) -> bool:
    return isinstance(expr, (Var, Const))


def value_key(atom: Any) -> Any:
    """``atom`` for comparing operations: constants by type and value (``Const`` compares by identity)."""
    if isinstance(atom, Const):
        value = atom.value
        return ("constant", type(value), repr(value) if isinstance(value, (float, complex)) else value)  # -0.0
    if isinstance(atom, Display):
        return (atom.kind,) + tuple(value_key(item) for item in atom.items)
    return atom


def is_const(expr: Optional[Expr], value: Any) -> bool:
    """True if ``expr`` is a numeric constant equal to ``value`` (never an array)."""
    if not isinstance(expr, Const):
        return False
    v = expr.value
    return isinstance(v, (int, float)) and not isinstance(v, bool) and v == value


def children(expr: Expr) -> Iterator[Expr]:
    if isinstance(expr, Call):
        yield from expr.args
        for _, v in expr.kwargs:
            yield v
    elif isinstance(expr, Slice):
        for part in (expr.lower, expr.upper, expr.step):
            if part is not None:
                yield part
    elif isinstance(expr, Display):
        yield from expr.items


def names_read(expr: Expr) -> Iterator[str]:
    """Every variable name the expression reads, with repeats."""
    if isinstance(expr, Var):
        yield expr.name
        return
    for child in children(expr):
        if isinstance(child, Var):  # most operands: read here, not through one more generator
            yield child.name
        elif not isinstance(child, Const):
            yield from names_read(child)


def calls_in(expr: Expr) -> Iterator[Call]:
    """Every call in the expression, nested ones included."""
    if isinstance(expr, Call):
        yield expr
    for child in children(expr):
        yield from calls_in(child)


def spelled_arguments(call: Call) -> tuple[tuple[Expr, ...], tuple[tuple[str, Expr], ...]]:
    """The positional and keyword arguments ``call`` must be written with.

    A call of the user's own function holds its arguments in parameter order
    (``expressions.py`` binds them so the generators can pair them with the
    callee's adjoint); the ones past the positional parameters belong to
    keyword-only parameters and are passed by name.
    """
    code = getattr(call.fn, "__code__", None)
    if code is None or call.kwargs or not code.co_kwonlyargcount or code.co_flags & _VARARGS:
        return call.args, call.kwargs
    count = code.co_argcount
    if len(call.args) <= count:
        return call.args, call.kwargs
    names = code.co_varnames[count:count + code.co_kwonlyargcount]
    return call.args[:count], tuple(zip(names, call.args[count:]))


_VARARGS = 0x04  # inspect.CO_VARARGS: a function taking *args accepts any number of positional arguments


def transform(expr: Expr, visit: Callable[[Expr], Optional[Expr]]) -> Expr:
    """Rebuild ``expr`` bottom-up; ``visit`` may return a replacement for a node."""
    if isinstance(expr, Call):
        args = tuple([transform(a, visit) for a in expr.args])
        kwargs = tuple([(k, transform(v, visit)) for k, v in expr.kwargs])
        expr = Call(expr.fn, args, kwargs)
    elif isinstance(expr, Slice):
        expr = Slice(*(None if p is None else transform(p, visit) for p in (expr.lower, expr.upper, expr.step)))
    elif isinstance(expr, Display):
        expr = Display(expr.kind, tuple(transform(i, visit) for i in expr.items))
    replaced = visit(expr)
    return expr if replaced is None else replaced


def substitute(expr: Expr, mapping: Mapping[str, Expr]) -> Expr:
    """Replace variables by expressions."""
    return transform(expr, lambda e: mapping.get(e.name) if isinstance(e, Var) else None)


class SSAViolation(AssertionError):
    """The lowered form broke one of the SSA invariants (a bug in lower.py)."""


def returned(fn: Function) -> Expr:
    """What ``fn`` returns: the value of the ``Return`` its body ends with (an SSA invariant)."""
    last = fn.body[-1] if fn.body else None
    if not isinstance(last, Return):
        raise SSAViolation("body must end with a Return")
    return last.value


def _is_operand(expr: Expr) -> bool:
    if is_atom(expr):
        return True
    if isinstance(expr, Slice):
        return all(p is None or is_atom(p) for p in (expr.lower, expr.upper, expr.step))
    if isinstance(expr, Display):
        return all(_is_operand(i) for i in expr.items)
    return False


def check_ssa(fn: Function) -> None:
    """Raise ``SSAViolation`` unless ``fn`` satisfies the SSA invariants above.

    With control flow the invariants read: a name is bound by one ordinary
    statement, or it is a *merge variable*, bound only by merge copies (one
    on each path into the join: both branches of an ``if``; before a loop
    and at the end of its body).  A name is read only where every path has
    bound it: after an ``if``, what both branches bound; after a loop, what
    was bound before it.
    """
    if len(set(fn.params)) != len(fn.params):
        raise SSAViolation(f"repeated parameter in {fn.params}")
    if not fn.body or not isinstance(fn.body[-1], Return):
        raise SSAViolation("body must end with a Return")
    ordinary: set[str] = set(fn.params)
    merged: set[str] = set()
    for stmt in walk(fn.body):
        if isinstance(stmt, Return) and stmt is not fn.body[-1]:
            raise SSAViolation("Return before the end of the body")
        if isinstance(stmt, Assign) and stmt.merge:
            merged.add(stmt.target)
        else:
            for name in targets_of(stmt):
                if name in ordinary:
                    raise SSAViolation(f"{name!r} assigned twice")
                ordinary.add(name)
    if merged & ordinary:
        raise SSAViolation(f"{sorted(merged & ordinary)} bound both by merges and ordinary statements")
    _check_block(fn.body, set(fn.params))


def _check_block(body: list[Stmt], defined: set[str]) -> set[str]:
    defined = set(defined)
    for stmt in body:
        for expr in exprs_of(stmt):
            if isinstance(stmt, (For, While)) and expr is stmt.exit:
                continue  # read after the body, checked there
            for name in names_read(expr):
                if name not in defined and not (isinstance(stmt, While) and expr is stmt.test):
                    raise SSAViolation(f"line {stmt.line}: {name!r} read before it is assigned")
        if isinstance(stmt, Return):
            if not is_atom(stmt.value):
                raise SSAViolation("Return of a compound expression")
        elif isinstance(stmt, Store):
            if not (_is_operand(stmt.index) and is_atom(stmt.value)):
                raise SSAViolation(f"line {stmt.line}: a store that is not three-address")
        elif isinstance(stmt, Assign):
            value = stmt.value
            if isinstance(value, Call):
                if not all(_is_operand(a) for a in value.args) or not all(_is_operand(v) for _, v in value.kwargs):
                    raise SSAViolation(f"line {stmt.line}: nested call in {stmt.target!r}")
            elif not (is_atom(value) or (isinstance(value, Display) and _is_operand(value))):
                raise SSAViolation(f"line {stmt.line}: {stmt.target!r} is not three-address")
            defined.add(stmt.target)
        elif isinstance(stmt, If):
            after_body = _check_block(stmt.body, defined)
            after_else = _check_block(stmt.orelse, defined)
            defined |= after_body & after_else
        elif isinstance(stmt, For):
            inner = _check_block(stmt.body, defined | {stmt.index})
            if stmt.exit is not None and not set(names_read(stmt.exit)) <= inner:
                raise SSAViolation(f"line {stmt.line}: loop exit flag read before it is assigned")
        elif isinstance(stmt, While):
            after_test = _check_block(stmt.test_block, defined)
            if not set(names_read(stmt.test)) <= after_test:
                raise SSAViolation(f"line {stmt.line}: loop test read before it is assigned")
            _check_block(stmt.body, after_test)
    return defined
