"""The state the parts of lowering share, made explicit (stage 2, lower).

Lowering one function (``lower.py``) is done by parts with one job each:
``lower_ssa`` (values to SSA statements), ``lower_containers`` (static
records), ``lower_writes`` (stores, in-place updates and the views they show
through; its parts ``lower_views``, ``lower_updates``; the views are ``memory.views``'s), ``lower_joins`` (the merges at if and loop joins), ``lower_calls``
(inlining), ``lower_loops`` (what a for loop walks), ``lower_control`` (blocks,
ifs and loops), and the driver in ``lower.py`` (statements).  They share this module's objects:

* ``Scope``: the state of the function body being lowered (its parse, the
  user's names and what they hold now, how often each is read, whether a
  raise ended it).  Inlining a call replaces it as one object and restores
  the caller's when the body is done.
* ``LoweringState``: what belongs to the whole function lowered, whatever
  body is being inlined: the block statements are emitted into, the names
  handed out, the arrays the function made, and the parts of the result
  (``ir.Function``'s in-place records, groups, aux).
* ``Lowerer``: the three entry points of the driver the parts recurse into
  (an expression holding a call whose body holds statements): ``statement``,
  ``bind`` and ``inline``.  The parts import nothing above themselves; they
  reach the driver through this protocol only.

Input: a ``ParsedFunction``.  Output: none of its own; the invariant kept is
that ``block`` is the block being filled, and ``scope`` the body being read.
"""
from __future__ import annotations

import contextlib
import dataclasses
from collections import Counter
from typing import Any, Callable, Iterator, Optional, Protocol

from ..core import ir
from ..core.errors import TransformError
from ..core.identity import Identity
from .expressions import ExpressionConverter, Inline
from .naming import Names
from ..frontend.parse import ParsedFunction, is_generated
from ..frontend.shared_updates import Store


@dataclasses.dataclass
class Scope:
    """The body being lowered: the function's own or one inlined at a call."""

    parsed: ParsedFunction  # its parse: names, errors and the snapshot of the globals it reads
    env: dict[str, Any]  # the user's local name -> what it holds now (an atom, a record, a def)
    reads: Counter  # the user's name -> how often the body reads it (a join keeps what is read later)
    # A raise that runs whenever the statements being lowered run (one a constant test chose):
    # what follows it in its block is never reached, and is not lowered (it may read names only
    # the other branches bind: ``return result`` after ``else: raise ValueError(kind)``).
    raised: bool = False


class Lowerer(Protocol):
    """The driver's entry points that the parts call back into."""

    def statement(self, stmt: Any) -> None:
        """Lower one statement of the current scope into the current block."""

    def bind(self, target: Any, value: Any) -> None:
        """Assign ``value`` to the gast target ``target`` (a name, a subscript, a tuple)."""

    def inline(self, call: Inline, callee: Optional[ParsedFunction] = None) -> ir.Expr:
        """Lower a call of the user's function in place; its result."""

    # The memory model's side of lowering (``lower_writes.WriteLowering``):

    def read_now(self, value: ir.Var) -> ir.Expr:
        """``value`` read now: a view of an array written since it was made is taken again (or refused)."""

    def made(self, name: str, value: Any) -> None:
        """``name`` was just bound to ``value`` (a call of atoms, a display, an ``aliasing.Chosen``)."""

    def passes_written(self, call: ir.Call) -> bool:
        """``call`` is given an array the function writes into somewhere, or a view of one."""

    def store_through_view(self, view: ir.Var, target: Any, value: ir.Expr) -> bool:
        """``target = value`` (a subscript of the name holding ``view``) written into the array ``view``
        views, as NumPy writes it; False where it is no view to write through that way."""


class LoweringState:
    """What the parts of one lowering share (see the module docstring)."""

    converter: ExpressionConverter  # the user's expressions as IR trees (set by the driver: it reads ``scope``)
    host: Lowerer  # the driver (dropped when lowering is done, see ``release``)

    def __init__(self, parsed: ParsedFunction, reads: Counter, structures: dict, has_aux: bool,
                 helper_shares: Callable[[Any], bool]) -> None:
        self.scope = Scope(parsed, {}, reads)
        self.filename = parsed.filename  # the file of the function lowered, whose lines ``line`` names
        self.structures = structures  # container parameters: their containers.Tree (or containers.Static)
        self.has_aux = has_aux
        # Code s2s_ad generated reads an element after a write only where it proved the element
        # is one number (reverse.py knows ranks this stage does not): it is not checked again.
        self.generated = is_generated(parsed.filename)
        self.helper_shares = helper_shares  # whether a user's function may return (a view of) an argument
        self.names = Names(set())
        self.user_names: set[str] = set()
        self.block: list[ir.Stmt] = []
        self.line: Optional[int] = None
        # Values already computed in this statement, by block: (Identity(block), operation) -> the atom.
        # Forgotten at each statement and each store, so a reused value is never stale.
        self.computed: dict[tuple, ir.Var] = {}
        self.callers: list[Scope] = []  # the scopes of the functions the current one is lowered in place for
        # updates b op= v (file, line, column) of helpers lowered in place, to lower as b[...] = b op v
        self.stores: frozenset[Store] = frozenset()
        # the calls inlined around the statement lowered now (shared_updates.Store), and how many were
        # inlined on that statement so far
        self.site: tuple = ()
        self.inlined_here = 0
        self.buffers: set[str] = set()  # arrays this function created: the only ones it may write into
        # the names desugar.py gives the result of a function with an early return: read only by its last
        # return, which runs only where one was set (a path that leaves it unbound never reads it)
        self.exit_results: set[str] = set()
        self.maybe_numbers: set[str] = set()  # buffers that may be numbers (np.exp(x)): += rebinds them
        # buffers bound by x.copy() of a value lowering cannot tell an array from a list (-> x): a list's copy
        # holds the list's own arrays, so a write through an item of it is deferred (ir.Function.writes_into_copies)
        self.maybe_list_copies: dict[str, ir.Expr] = {}
        self.writes_into_copies: list[tuple[ir.Expr, Exception]] = []
        # merge variables of a user's name that a branch or loop binds on some paths only (None on the
        # others): each read of the name is checked first (runtime.check_bound), as Python raises there
        self.maybe_unbound: dict[str, str] = {}
        # the parts of the result
        self.params: dict[str, str] = {}  # SSA name of each parameter -> the user's name
        self.groups: dict[str, list[str]] = {}
        self.result_tree: Any = None
        self.aux: Optional[ir.Expr] = None
        self.aux_tree: Any = None
        self.in_place: list[ir.InPlace] = []
        self.element_reads: list[ir.ElementRead] = []  # see ir.Function.element_reads
        self.refused_reads: list[Exception] = []  # see ir.Function.refused_reads
        # Lower every call of the user's helpers in place (lower.lower's inline_helpers), but for a
        # helper already being so lowered: a recursive call stays a call.
        self.inline_helpers = False
        # ... or only the short ones (lower_ssa.small_helper): the other helpers stay calls
        self.inline_small_helpers = False
        self.inline_view_helpers = False  # helpers that may hand back views of an array written later
        self.open_blocks: list[Identity] = []  # the blocks being lowered, innermost last (the body's not)
        self.helpers_inlined: list[Any] = []
        # the loops run as loops being lowered: each its scope's env and the names bound before it
        # (a list one of them grows by an object cannot be made while transforming)
        self.runtime_loops: list[tuple[Identity, frozenset]] = []
        self.displays: dict[str, ir.Display] = {}  # an SSA name bound to a tuple or list display -> the display

    @property
    def parsed(self) -> ParsedFunction:
        """The parse of the body being lowered (an inlined callee's while it is lowered)."""
        return self.scope.parsed

    def refusal(self, construct: str, hint: str) -> TransformError:
        """A ``TransformError`` located at the line being lowered."""
        return TransformError(construct, hint, filename=self.scope.parsed.filename, line=self.line)

    @contextlib.contextmanager
    def new_block(self) -> Iterator[list[ir.Stmt]]:
        """Statements emitted inside the ``with`` go into a new block, the one yielded (a branch, a loop
        body); the enclosing block is the current one again after it."""
        outer, self.block = self.block, []
        self.open_blocks.append(Identity(self.block))
        try:
            yield self.block
        finally:
            self.open_blocks.pop()
            self.block = outer

    def enter(self, scope: Scope) -> Scope:
        """Make ``scope`` the body being lowered (names resolved and errors located in its parse): a
        function lowered in place of its call; returns the scope it replaces (the caller's), for ``leave``."""
        outer, self.scope = self.scope, scope
        self.callers.append(outer)
        self.converter.resolver, self.converter.error = scope.parsed.resolver, scope.parsed.error
        return outer

    def leave(self, outer: Scope) -> None:
        """Make ``outer`` (what ``enter`` returned) the body being lowered again."""
        assert self.callers and self.callers[-1] is outer
        self.callers.pop()
        self.scope = outer
        self.converter.resolver, self.converter.error = outer.parsed.resolver, outer.parsed.error

    def holders(self, name: str) -> Iterator[tuple[str, Any]]:
        """Every other user's name, with what it holds, that can see an object ``name`` holds now: the
        other names of the body being lowered, and every name of the callers it is lowered in place
        for (an argument a helper updates in place is the caller's array: ``v *= c`` changes ``b``)."""
        for other, held in self.scope.env.items():
            if other != name:
                yield other, held
        for caller in reversed(self.callers):
            yield from caller.env.items()

    def release(self) -> None:
        """Drop the converter and the driver: they hold bound methods of the parts, a reference cycle
        that would keep the lowering and the whole tree it reaches until the cycle collector runs
        (tens of milliseconds for a big function)."""
        del self.converter
        del self.host


class Part:
    """One part of lowering: it works on the shared state, and reads the scope being lowered."""

    def __init__(self, state: LoweringState) -> None:
        self.state = state

    @property
    def scope(self) -> Scope:
        return self.state.scope

    def user_name_of(self, name: str) -> str:
        """A user's name bound now to the SSA name ``name`` (what a refusal shows), else ``name`` itself."""
        return next((k for k, v in self.scope.env.items() if v == ir.Var(name) and k.isidentifier()), name)

    def view_refusal_hint(self, shown: str, root: str, instead: str) -> str:
        """Why a write through ``shown``, a view of (or an item sharing) the SSA value ``root``, is refused,
        and what to write instead: ``instead`` (into ``root``'s array) where a name of the user's holds that
        array; where none does (an expression's value, an array a comprehension or a loop appended to a
        list, whose loop variable is gone), there is no such array to write into, and the hint says what to
        write."""
        owner = self.user_name_of(root)
        code = getattr(self.state.parsed.fn, "__code__", None)
        if code is None or owner in code.co_varnames + code.co_cellvars:  # (an SSA name may be the user's own)
            return f"{shown} may be a view of {owner}; {instead} instead"
        return (f"{shown} shares memory with an array the function made where no name of its own holds it now "
                "(an expression's value, or an item a comprehension or a loop put into a list), and other names may "
                "hold it too; give that array its final values where it is made, or keep such arrays as rows of one "
                "array (np.array(...)) and write into that by index")
