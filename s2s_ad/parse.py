"""Stage 1: a Python function → its gast tree and what its free names mean.

Input: a plain Python function object.  Output: a ``ParsedFunction`` with
the ``gast.FunctionDef`` (decorators dropped, line numbers made absolute in
the user's file), a resolver for the free names (globals, closure cells,
builtins), and the parameters.  Before returning, everyday statements are
rewritten into the subset (``sugar.py``: annotated assignments, lambdas),
and the whole body is checked against the subset, so that refusals come
early with file, line and column.
"""
from __future__ import annotations

import builtins
import inspect
import textwrap
import types
from dataclasses import dataclass, field
from typing import Any, Callable, Optional

import gast

from .errors import TransformError
from . import sugar
from .nodes import all_nodes

# Statements and expressions the lowering understands.  Anything else is
# refused here with a reason and a hint (see ``_REFUSALS``).
_STATEMENTS = (gast.Assign, gast.AugAssign, gast.Return, gast.Pass, gast.Expr, gast.If, gast.For, gast.While,
               gast.Break, gast.Continue, gast.FunctionDef, gast.Assert)
_EXPRESSIONS = (
    gast.BinOp, gast.UnaryOp, gast.Compare, gast.Call, gast.Attribute, gast.Subscript,
    gast.Name, gast.Constant, gast.Tuple, gast.List, gast.Slice, gast.keyword, gast.IfExp, gast.BoolOp,
    gast.ListComp,
)
_REFUSALS: dict[type, tuple[str, str]] = {
    gast.Try: ("a try statement", "exceptions cannot be differentiated; check inputs before calling the gradient"),
    gast.With: ("a with statement", "move the context manager outside the differentiated function"),
    gast.Raise: ("a raise statement", "check inputs before calling the gradient"),
    gast.Global: ("a global statement", "pass the value as an argument and return the result instead"),
    gast.Nonlocal: ("a nonlocal statement", "pass the value as an argument and return the result instead"),
    gast.Delete: ("a del statement", "drop the del; names go out of scope at return"),
    gast.AsyncFunctionDef: ("an async function", "differentiate a plain def"),
    gast.Lambda: ("a lambda that is not bound to a name", "bind it to a name in a statement of its own "
                  "(sq = lambda t: t * t) and call it by that name, or define the function with def"),
    gast.SetComp: ("a set comprehension", "sets cannot be differentiated"),
    gast.DictComp: ("a dict comprehension", "dicts are not supported; use separate variables"),
    gast.GeneratorExp: ("a generator expression", "write a list comprehension instead: sum([v * v for v in x])"),
    gast.Yield: ("yield", "generators cannot be differentiated; return a value"),
    gast.YieldFrom: ("yield from", "generators cannot be differentiated; return a value"),
    gast.Await: ("await", "differentiate a plain synchronous function"),
    gast.Import: ("an import inside the function", "import at module level"),
    gast.ImportFrom: ("an import inside the function", "import at module level"),
    gast.ClassDef: ("a class definition", "define classes at module level"),
    gast.Dict: ("a dict", "dicts are not supported; use separate variables"),
    gast.Set: ("a set", "sets cannot be differentiated"),
    gast.NamedExpr: ("the walrus operator :=", "assign in a statement of its own"),
    gast.Starred: ("a starred expression", "pass the arguments one by one"),
    gast.JoinedStr: ("an f-string", "strings cannot be differentiated; format outside the function"),
}


# The node types the whole-tree check looks at (gast makes a tree of its own classes only).  _SUSPECT:
# expressions _check_statements refuses where a statement holds them (so do chained comparisons).
_SUSPECT = {kind for kind in vars(gast).values() if isinstance(kind, type) and issubclass(kind, gast.expr)
            and not issubclass(kind, _EXPRESSIONS)}
_WATCHED = _SUSPECT | set(_REFUSALS) | {gast.For, gast.While, gast.Return, gast.Compare}

_ABSENT = object()
_PLAIN = (int, float, complex, bool, str, bytes, tuple, type(None))


def _same(current: Any, recorded: Any) -> bool:
    """The same object, or an equal plain constant (re-running ``SCALE = 3.0`` changes nothing)."""
    if current is recorded:
        return True
    return type(current) is type(recorded) and isinstance(current, _PLAIN) and current == recorded


class Snapshot:
    """What the free names of generated code meant when it was generated.

    Generated code inlines module constants and calls the adjoints of the
    helpers as they were.  ``valid()`` tells whether every name still means
    the same (a global, a closure cell, a builtin not shadowed since), so a
    cache never serves code built for an old value.
    """

    def __init__(self) -> None:
        self.names: dict[tuple[int, str], tuple[dict, str, Any]] = {}
        self.cells: dict[int, tuple[Any, Any]] = {}
        self._checks: Optional[tuple] = None  # names.values() as a tuple: valid() runs on every call

    def record_global(self, scope: dict, name: str, value: Any) -> None:
        self.names.setdefault((id(scope), name), (scope, name, value))
        self._checks = None

    def record_cell(self, cell: Any, value: Any) -> None:
        self.cells.setdefault(id(cell), (cell, value))

    def include(self, other: Optional["Snapshot"]) -> None:
        """Also depend on what ``other`` depends on (a helper's names)."""
        if other is not None and other is not self:
            for key, entry in other.names.items():
                self.names.setdefault(key, entry)
            for key, entry in other.cells.items():
                self.cells.setdefault(key, entry)
            self._checks = None

    def valid(self) -> bool:
        checks = self._checks
        if checks is None:
            checks = self._checks = tuple(self.names.values())
        for scope, name, value in checks:
            current = scope.get(name, _ABSENT)
            if current is not value and not _same(current, value):
                return False
        for cell, value in self.cells.values():
            try:
                current = cell.cell_contents
            except ValueError:
                return False
            if current is not value and not _same(current, value):
                return False
        return True


@dataclass
class Resolver:
    """Finds what a free name of the user's function means, as CPython would,
    and records each answer in ``snapshot``."""

    globals: dict[str, Any]
    closure: dict[str, Any]  # name -> cell
    snapshot: Snapshot = field(default_factory=Snapshot)

    def lookup(self, name: str) -> tuple[bool, Any]:
        cell = self.closure.get(name)
        if cell is not None:
            try:
                value = cell.cell_contents
            except ValueError:  # a cell not filled yet
                return False, None
            self.snapshot.record_cell(cell, value)
            return True, value
        if name in self.globals:
            value = self.globals[name]
            self.snapshot.record_global(self.globals, name, value)
            return True, value
        if name in vars(builtins):
            self.snapshot.record_global(self.globals, name, _ABSENT)  # a later global would shadow it
            return True, vars(builtins)[name]
        return False, None


@dataclass
class ParsedFunction:
    fn: Callable
    node: gast.FunctionDef
    filename: str
    resolver: Resolver
    params: list[str]
    # Every node of ``node`` as parsed, in ``gast.walk`` order: the subset check walks the tree once,
    # and lowering reads the names and node kinds from this list instead of walking it again.
    nodes: list = field(default_factory=list, repr=False)
    reported: Optional[set] = field(default=None, repr=False)  # ids of f-string nodes in prints (_reported)

    @property
    def name(self) -> str:
        return self.node.name

    @property
    def line(self) -> int:
        return self.node.lineno

    def error(self, construct: str, hint: str, node: Any = None) -> TransformError:
        line = getattr(node, "lineno", None) if node is not None else self.line
        column = getattr(node, "col_offset", None) if node is not None else None
        return TransformError(construct, hint, filename=self.filename, line=line,
                              column=None if column is None else column + 1)


def _closure_cells(fn: types.FunctionType) -> dict[str, Any]:
    return dict(zip(fn.__code__.co_freevars, fn.__closure__ or ()))


def _read_source(fn: Any, exact: bool = False) -> tuple[str, str, int]:
    """``fn``'s source text (dedented), file name and first line.  Unless ``exact``, the end of the
    function may be found by indentation alone (see ``_source_lines``)."""
    name = getattr(fn, "__qualname__", repr(fn))
    if not isinstance(fn, types.FunctionType):
        raise TransformError(
            f"{name!r} ({type(fn).__name__})",
            "only plain Python functions defined with def can be transformed; "
            "for a builtin or C function, give it a rule with @s2s_ad.adjoint",
        )
    filename = fn.__code__.co_filename
    try:
        lines, firstline = inspect.getsourcelines(fn) if exact else _source_lines(fn)
    except (OSError, TypeError) as exc:
        raise TransformError(
            f"{name!r}", "its source code cannot be read (it was typed into a bare REPL or made by exec); "
            "define it in a .py file, or give it a rule with @s2s_ad.adjoint",
            filename=filename, line=fn.__code__.co_firstlineno,
        ) from exc
    return textwrap.dedent("".join(lines)), filename, firstline


def _source_lines(fn: types.FunctionType) -> tuple[list[str], int]:
    """``inspect.getsourcelines(fn)``, with the end of a plain def found by its indentation.

    inspect tokenizes the whole function to find where it ends: a quarter
    of the time spent parsing a big function.  Indentation is enough unless a
    string or brackets reach back to the def's column; the text found then
    ends inside them and does not parse, and ``parse_function`` reads the
    source again, with inspect.
    """
    lines, start = inspect.findsource(inspect.unwrap(fn))
    end = _end_of_def(lines, start)
    if end is None:
        return inspect.getsourcelines(fn)
    return lines[start:end], start + 1


def _end_of_def(lines: list[str], start: int) -> Optional[int]:
    """The index after the last line of the def at ``lines[start]``: before the first line after it
    indented no deeper than the def (blank lines and comments aside).  None (ask inspect) for a
    decorated def, or indentation with anything but spaces, where columns are not character counts."""
    first = lines[start]
    column = len(first) - len(first.lstrip(" "))
    if not first.startswith("def ", column):
        return None
    end = len(lines)
    for k in range(start + 1, len(lines)):
        text = lines[k].lstrip(" ")
        if text[:1] in ("\t", "\f"):
            return None
        if text.strip() and not text.startswith("#") and len(lines[k]) - len(text) <= column:
            end = k
            break
    while end > start + 1 and (not lines[end - 1].strip() or lines[end - 1].lstrip().startswith("#")):
        end -= 1  # comments after the body, as inspect leaves out those at the def's column
    return end


def is_generated(filename: str) -> bool:
    """True for code s2s_ad generated (compiled under ``<s2s_ad ...>``, see cache.py)."""
    return filename.startswith("<s2s_ad ")


def parse_function(fn: Callable) -> ParsedFunction:
    """Parse ``fn`` and check its body against the supported subset."""
    source, filename, firstline = _read_source(fn)
    if fn.__name__ == "<lambda>":
        raise TransformError("a lambda", "define the function with def", filename=filename, line=firstline)
    try:
        try:
            module = _parse_at(source, firstline)
        except SyntaxError:  # the end found by indentation may be inside a string or brackets: ask inspect
            source, filename, firstline = _read_source(fn, exact=True)
            module = _parse_at(source, firstline)
    except SyntaxError as exc:
        raise TransformError(f"{fn.__qualname__!r}", f"its source does not parse on its own ({exc.msg})",
                             filename=filename, line=firstline) from exc
    node = module.body[0]
    if isinstance(node, gast.AsyncFunctionDef):
        raise TransformError("an async function", "differentiate a plain (synchronous) def",
                             filename=filename, line=firstline)
    if not isinstance(node, gast.FunctionDef):
        raise TransformError(f"{fn.__qualname__!r}", "its source is not a def statement",
                             filename=filename, line=firstline)
    node.decorator_list = []
    params = _check_params(node, filename)
    parsed = ParsedFunction(fn, node, filename, Resolver(fn.__globals__, _closure_cells(fn)), params)
    _check_subset(parsed)
    return parsed


def _parse_at(source: str, firstline: int) -> gast.Module:
    """Parse with every node on its line in the user's file (blank lines first: cheaper than renumbering
    the tree)."""
    return gast.parse("\n" * (firstline - 1) + source)


def _check_params(node: gast.FunctionDef, filename: str) -> list[str]:
    args = node.args
    for extra, what in ((args.vararg, "*args"), (args.kwarg, "**kwargs")):
        if extra is not None:
            raise TransformError(f"a function with {what}", "name each parameter",
                                 filename=filename, line=node.lineno)
    if args.kwonlyargs or getattr(args, "posonlyargs", None):
        pass  # bound by name through the signature; all are plain locals inside
    return [a.id for a in list(getattr(args, "posonlyargs", [])) + args.args + args.kwonlyargs]


def _check_subset(parsed: ParsedFunction) -> None:
    body = parsed.node.body
    if body and isinstance(body[0], gast.Expr) and isinstance(body[0].value, gast.Constant):
        body = body[1:]  # the docstring
    parsed.nodes = all_nodes(parsed.node)
    if any(isinstance(node, sugar.REWRITTEN) for node in parsed.nodes):
        sugar.rewrite(parsed.node)
        parsed.nodes = all_nodes(parsed.node)
        body = parsed.node.body[len(parsed.node.body) - len(body):]  # the docstring still left out
    suspects = False  # an expression the statement checks refuse (they look for it only if there is one)
    for node in parsed.nodes:  # first: a refused construct says more than a missing return
        kind = type(node)
        if kind not in _WATCHED:
            continue
        suspects = suspects or kind in _SUSPECT
        if node is not parsed.node and kind in _REFUSALS and not (kind is gast.JoinedStr and _reported(parsed, node)):
            raise parsed.error(*_REFUSALS[kind], node)
        if kind in (gast.For, gast.While) and node.orelse:
            raise parsed.error(f"an else clause on a {'for' if kind is gast.For else 'while'} loop",
                               "set a flag before break and test it after the loop", node)
        if kind is gast.Return and node.value is None:
            raise parsed.error("a bare return", "return the value to differentiate", node)
    if not always_returns(body):
        raise parsed.error(f"{parsed.name!r} without a final return", "end the function with return <scalar> "
                           "(or an if/else whose every branch returns)", body[-1] if body else None)
    _check_statements(parsed, body, suspects)


def _check_statements(parsed: ParsedFunction, body: list, suspects: bool) -> None:
    """Check each statement in ``body``; ``suspects`` False says the tree holds no expression to refuse
    (so the statements' own nodes need not be walked to find one)."""
    for stmt in body:
        for block in (getattr(stmt, "body", None), getattr(stmt, "orelse", None)):
            if isinstance(stmt, (gast.If, gast.For, gast.While)) and block:
                _check_statements(parsed, block, suspects)
        if isinstance(stmt, gast.For):
            _check_target(parsed, stmt.target)
        if isinstance(stmt, gast.FunctionDef):
            _check_nested(parsed, stmt, suspects)
            continue
        if isinstance(stmt, gast.Expr) and not _is_list_append(stmt) and not isinstance(stmt.value, gast.Call):
            raise parsed.error("an expression statement", "a differentiated function computes values: assign "
                               "the expression to a name, or drop it", stmt)
        if isinstance(stmt, gast.While) and any(isinstance(n, gast.ListComp) for n in gast.walk(stmt.test)):
            raise parsed.error("a list comprehension in a while condition", "compute it in the loop body", stmt)
        if isinstance(stmt, gast.Assign):
            for target in stmt.targets:
                _check_target(parsed, target)
        if isinstance(stmt, gast.AugAssign):
            _check_target(parsed, stmt.target, tuple_ok=False)
        if isinstance(stmt, gast.Assign) and len(stmt.targets) > 1 and any(
                isinstance(t, gast.Subscript) for t in stmt.targets):
            raise parsed.error("a chained assignment into an array", "assign one target at a time", stmt)
        if not isinstance(stmt, _STATEMENTS):
            raise parsed.error(f"the statement {type(stmt).__name__}", "rewrite it with assignments", stmt)
        for node in _own_nodes(stmt) if suspects else ():
            if isinstance(node, (gast.JoinedStr, gast.FormattedValue)) and _reported(parsed, node):
                continue
            if isinstance(node, gast.expr) and not isinstance(node, _EXPRESSIONS):
                raise parsed.error(f"the expression {type(node).__name__}", "rewrite it with simpler expressions", node)


def _check_nested(parsed: ParsedFunction, node: gast.FunctionDef, suspects: bool) -> None:
    """A function defined inside the differentiated one: inlined where it is called."""
    if node.decorator_list:
        raise parsed.error(f"a decorated nested function {node.name!r}", "drop the decorator", node)
    args = node.args
    if args.vararg or args.kwarg or args.kwonlyargs or args.defaults:
        what = "the lambda" if getattr(node, "from_lambda", False) else f"the nested function {node.name!r}"
        raise parsed.error(f"the parameters of {what}", "give it plain positional parameters without defaults "
                           "(a value it needs can be read from the enclosing function)", node)
    body = node.body
    if body and isinstance(body[0], gast.Expr) and isinstance(body[0].value, gast.Constant):
        body = body[1:]
    if not always_returns(body):
        raise parsed.error(f"the nested function {node.name!r} without a final return", "end it with return", node)
    if any(isinstance(n, (gast.Global, gast.Nonlocal)) for n in gast.walk(node)):
        raise parsed.error(f"nonlocal or global in {node.name!r}", "return the new value instead", node)
    _check_statements(parsed, body, suspects)


def _reported(parsed: ParsedFunction, node: Any) -> bool:
    """Whether ``node`` is part of an f-string only printed, logged, warned or asserted with: the
    arguments of a call made as a statement, or an assert's message (lower.py checks the call)."""
    if parsed.reported is None:
        parsed.reported = set()
        for stmt in parsed.nodes:
            parts = (stmt.value.args + [k.value for k in stmt.value.keywords]
                     if isinstance(stmt, gast.Expr) and isinstance(stmt.value, gast.Call) else
                     [stmt.msg] if isinstance(stmt, gast.Assert) and stmt.msg is not None else [])
            parsed.reported |= {id(n) for part in parts for n in gast.walk(part)
                                if isinstance(n, (gast.JoinedStr, gast.FormattedValue))}
    return id(node) in parsed.reported


def always_returns(body: list) -> bool:
    """Whether control cannot fall off the end of ``body``: it ends with a return, or with an
    if/else each of whose branches always returns (desugar.py turns those returns into one)."""
    if not body:
        return False
    last = body[-1]
    if isinstance(last, gast.If):
        return always_returns(last.body) and always_returns(last.orelse)
    if isinstance(last, gast.While) and isinstance(last.test, gast.Constant) and last.test.value is True:
        return not _breaks(last.body)  # while True: left only by a return
    return isinstance(last, gast.Return)


def _breaks(body: list) -> bool:
    """Whether a ``break`` in ``body`` leaves the loop whose body it is (not an inner loop's)."""
    for stmt in body:
        if isinstance(stmt, gast.Break):
            return True
        if isinstance(stmt, gast.If) and (_breaks(stmt.body) or _breaks(stmt.orelse)):
            return True
    return False


def _is_list_append(stmt: Any) -> bool:
    call = stmt.value
    return (isinstance(call, gast.Call) and isinstance(call.func, gast.Attribute) and call.func.attr == "append"
            and isinstance(call.func.value, gast.Name) and len(call.args) == 1 and not call.keywords)


def _own_nodes(stmt: Any) -> list:
    """The nodes of a statement, without those of its nested statement lists."""
    if isinstance(stmt, (gast.If, gast.While)):
        return list(gast.walk(stmt.test))
    if isinstance(stmt, gast.For):
        return list(gast.walk(stmt.iter)) + list(gast.walk(stmt.target))
    return list(gast.walk(stmt))


def _check_target(parsed: ParsedFunction, target: Any, tuple_ok: bool = True) -> None:
    if isinstance(target, gast.Name):
        return
    if tuple_ok and isinstance(target, (gast.Tuple, gast.List)):
        for element in target.elts:
            _check_target(parsed, element, tuple_ok=True)
        return
    if isinstance(target, gast.Subscript):
        if not isinstance(target.value, gast.Name):
            raise parsed.error("an assignment into a nested element", "index the array by name: a[i, j] = v",
                               target)
        return
    if isinstance(target, gast.Attribute):
        raise parsed.error("an assignment to an attribute", "the function must not mutate objects; "
                           "return the new value instead", target)
    raise parsed.error(f"an assignment to {type(target).__name__}", "assign to plain names", target)
