"""Stage 6: IR → Python source text (via ``ast`` nodes and astor).

Input: an ``ir.Function`` (SSA, adjoint or tangent form, its tape still as
``ir.Push``/``ir.Pop`` statements), a header and a ``Target`` (the NumPy one
by default), which spells each op, writes the tape and the stores, and says
what an op bound under a name is at run time.
Output: an ``Emitted`` record: the module source, and the globals the code
needs (the target's roots, such as ``np`` and ``math``, engine helpers, the
user's arrays and black-box functions, each bound once under a readable
name).  Each statement is printed by astor, or, if it is short and plain,
written directly as astor would print it (``linetext.py``); a ``# line N``
comment marks where the user's line changes, so every generated statement
can be traced to its origin.
An ``if``/``elif`` chain too long for Python to compile nested (the IR nests each
``elif`` in an ``else``) is laid out as a flat sequence of guarded links.
"""
from __future__ import annotations

import ast
import keyword
import math
import types
from dataclasses import dataclass, field, replace
from typing import Any, Callable, Optional

import astor

from ..core import ir, language
from ..core.identity import IdentityMap
from ..memory.sharing import fresh_returns
from .linetext import LineText, constant_hint, declared_operators
from .target import NUMPY, Target

_COMMENT_COLUMN = 32


def _name(id_: str, ctx: Any = None) -> ast.Name:
    return ast.Name(id=id_, ctx=ctx or ast.Load())


def _dotted(path: str) -> Any:
    parts = path.split(".")
    node: Any = _name(parts[0])
    for part in parts[1:]:
        node = ast.Attribute(value=node, attr=part, ctx=ast.Load())
    return node


_ITSELF = object()  # Namespace.bind: the global holds the object itself


@dataclass
class Namespace:
    """The globals of a generated module, and how code names each object (as ``target`` spells it)."""

    target: Target = NUMPY
    globals: dict[str, Any] = field(default_factory=dict)  # (starts with the target's roots)
    avoid: set[str] = field(default_factory=set)  # the function's local names
    _names: IdentityMap[Any, str] = field(default_factory=IdentityMap)  # obj -> its global's name (bind)
    _spellings: IdentityMap[Any, str] = field(default_factory=IdentityMap)  # obj -> how reference() spells it

    def __post_init__(self) -> None:
        self.globals = {**self.target.roots(), **self.globals}

    def reference(self, obj: Any, hint: str = "value") -> Any:
        """How generated code names ``obj``: ``abs``, ``np.sin``, ``math.cos``, or a bound global."""
        return _dotted(self.spelling(obj, hint))

    def spelling(self, obj: Any, hint: str = "value") -> str:
        """``reference`` as text."""
        spelling = self._spellings.get(obj)
        if spelling is None:
            spelling = self._spellings[obj] = self._spell(obj, hint)
        return spelling

    def _spell(self, obj: Any, hint: str) -> str:
        """The target's first spelling of ``obj`` whose root no local hides (its root bound here), else
        a name of its own holding the target's implementation of ``obj``."""
        for spelled in self.target.spellings(obj):
            root, module = spelled.root, spelled.module
            if root is None or (root not in self.avoid and self.globals.setdefault(root, module) is module):
                return spelled.text
        name = getattr(obj, "__name__", None)
        return self.bind(obj, name or hint, self.target.implementation(obj))

    def bind(self, obj: Any, hint: str, value: Any = _ITSELF) -> str:
        """A global name for ``obj``, holding ``value`` (``obj`` itself unless given)."""
        value = obj if value is _ITSELF else value
        if obj in self._names:
            return self._names[obj]
        base = "".join(c if c.isalnum() else "_" for c in hint).strip("_") or "value"
        if keyword.iskeyword(base) or base[0].isdigit():  # a lambda's name, "<lambda>", is no identifier
            base = f"{base}_function" if keyword.iskeyword(base) else f"value_{base}"
        name, n = base, 0
        while name in self.avoid or (name in self.globals and self.globals[name] is not value):
            n += 1
            name = f"{base}_{n}"
        self.globals[name] = value
        self._names[obj] = name
        return name


class _Builder:
    def __init__(self, namespace: Namespace) -> None:
        self.ns = namespace
        self.generator = astor.SourceGenerator(" " * 4)
        self.ops = declared_operators()  # which functions are written with an operator (their syntax facts)
        self.lines = LineText(self.ops, namespace.spelling, namespace.bind)

    def source(self, node: Any) -> str:
        """``astor.to_source(node)``, with one source generator for the whole module: building one per
        statement was most of the printing time.  (Its result list is shared with its ``write``
        closure, so it is cleared, not replaced; astor is pinned to 0.8.x, whose to_source this mirrors.)"""
        generator = self.generator
        generator.result.clear()
        generator.indentation, generator.new_lines, generator.colinfo = 0, 0, (0, 0)
        generator.visit(node)
        generator.result.append("\n")
        if set(generator.result[0]) == {"\n"}:
            generator.result[0] = ""
        return astor.source_repr.pretty_source(generator.result)

    def expr(self, e: ir.Expr) -> Any:
        if isinstance(e, ir.Var):
            return _name(e.name)
        if isinstance(e, ir.Const):
            return self.const(e.value)
        if isinstance(e, ir.Display):
            items = [self.expr(i) for i in e.items]
            return ast.Tuple(elts=items, ctx=ast.Load()) if e.kind == "tuple" else ast.List(elts=items, ctx=ast.Load())
        if isinstance(e, ir.Slice):  # outside a subscript, a slice is a slice() call
            parts = [ast.Constant(value=None) if p is None else self.expr(p)
                     for p in (e.lower, e.upper, e.step)]
            return ast.Call(func=_name("slice"), args=parts, keywords=[])
        if isinstance(e, ir.Zero):
            raise AssertionError("a symbolic zero reached emit: the generators write each as its kind's zero")
        return self.call(e)

    def index(self, e: ir.Expr) -> Any:
        """An index in a subscript, where ``a:b`` syntax is allowed."""
        if isinstance(e, ir.Slice):
            return ast.Slice(*(None if p is None else self.expr(p) for p in (e.lower, e.upper, e.step)))
        if isinstance(e, ir.Display) and e.kind == "tuple":
            return ast.Tuple(elts=[self.index(i) for i in e.items], ctx=ast.Load())
        return self.expr(e)

    def const(self, value: Any) -> Any:
        if language.is_library_scalar(value):
            value = value.item()
        if isinstance(value, float) and not math.isfinite(value):
            node = _dotted("math.nan" if math.isnan(value) else "math.inf")
            return ast.UnaryOp(op=ast.USub(), operand=node) if value < 0 else node
        if isinstance(value, tuple):
            return ast.Tuple(elts=[self.const(v) for v in value], ctx=ast.Load())
        if isinstance(value, (int, float)) and not isinstance(value, bool) and math.copysign(1, value) < 0:
            # -0.5 as minus 0.5: astor then parenthesises it by precedence, (-0.5) ** 2, never -0.5 ** 2
            return ast.UnaryOp(op=ast.USub(), operand=ast.Constant(value=-value))
        if isinstance(value, (int, float, complex, str, bytes, bool, type(None))) or value is Ellipsis:
            return ast.Constant(value=value)
        return _name(self.ns.bind(value, constant_hint(value)))

    def call(self, e: ir.Call) -> Any:
        positional, named = ir.spelled_arguments(e)
        e = ir.Call(e.fn, positional, named)
        fn, args, ops = e.fn, [self.expr(a) for a in e.args], self.ops
        if fn in ops.binary and len(args) == 2 and not e.kwargs:
            return ast.BinOp(left=args[0], op=ops.binary[fn](), right=args[1])
        if fn in ops.unary and len(args) == 1:
            return ast.UnaryOp(op=ops.unary[fn](), operand=args[0])
        if fn in ops.compare and len(args) == 2:
            return ast.Compare(left=args[0], ops=[ops.compare[fn]()], comparators=[args[1]])
        if fn in ops.membership and len(args) == 2:  # contains(a, b) is b in a
            return ast.Compare(left=args[1], ops=[ops.membership[fn]()], comparators=[args[0]])
        if fn in ops.subscript and len(args) == 2:
            return ast.Subscript(value=args[0], slice=self.index(e.args[1]), ctx=ast.Load())
        keywords = [ast.keyword(arg=k, value=self.expr(v)) for k, v in e.kwargs]
        if isinstance(fn, ir.Part):  # d_helper.forward(...)
            owner = _name(self.ns.bind(fn.owner, fn.owner.name))
            return ast.Call(func=ast.Attribute(value=owner, attr=fn.name, ctx=ast.Load()), args=args,
                             keywords=keywords)
        if isinstance(fn, types.MethodDescriptorType) and args:  # list.append(tape, x) -> tape.append(x)
            method = ast.Attribute(value=args[0], attr=fn.__name__, ctx=ast.Load())
            return ast.Call(func=method, args=args[1:], keywords=keywords)
        return ast.Call(func=self.ns.reference(fn), args=args, keywords=keywords)

    def tuple_text(self, e: ir.Display) -> str:
        """``(a, (b, c))``: a tuple display with every level's parentheses."""
        items = [self.tuple_text(i) if isinstance(i, ir.Display) and i.kind == "tuple" else self.text(i)
                 for i in e.items]
        return f"({', '.join(items)}{',' if len(items) == 1 else ''})"

    def text(self, e: ir.Expr) -> str:
        written = self.lines.expression(e)  # most are short and plain: no need for astor (see linetext.py)
        return written if written is not None else self.source(ast.Expr(value=self.expr(e))).strip()

    def simple(self, stmt: ir.Stmt) -> str:
        """One line of source for a statement that has no nested block."""
        written = self.lines.statement(stmt)
        if written is not None:
            return written
        node: ast.stmt
        if isinstance(stmt, ir.Return):
            node = ast.Return(value=self.expr(stmt.value))
        elif isinstance(stmt, ir.Effect):
            node = ast.Expr(value=self.expr(stmt.value))
        elif isinstance(stmt, ir.Release):
            return f"del {', '.join(stmt.names)}"
        elif isinstance(stmt, ir.Store):
            place = ast.Subscript(value=_name(stmt.array), slice=self.index(stmt.index), ctx=ast.Store())
            if stmt.op is None:
                node = ast.Assign(targets=[place], value=self.expr(stmt.value))
            else:
                node = ast.AugAssign(target=place, op=self.ops.binary[stmt.op](), value=self.expr(stmt.value))
        elif isinstance(stmt, ir.Unpack):
            names: list[ast.expr] = [_name(t, ast.Store()) for t in stmt.targets]
            node = ast.Assign(targets=[ast.Tuple(elts=names, ctx=ast.Store())], value=self.expr(stmt.value))
        elif not isinstance(stmt, ir.Assign):
            raise TypeError(f"emit: {type(stmt).__name__} is no simple statement")
        elif isinstance(stmt.value, ir.Display) and stmt.value.kind == "tuple":
            # astor drops the parentheses of a tuple on the right: keep them, the tape reads better
            return f"{stmt.target} = {self.tuple_text(stmt.value)}"
        else:
            node = ast.Assign(targets=[_name(stmt.target, ast.Store())], value=self.expr(stmt.value))
        return self.source(node).rstrip("\n")


class _Printer:
    """Lays statements out as indented lines with ``# line N`` comments."""

    def __init__(self, builder: _Builder, ranges: Optional[dict[str, ir.Call]] = None,
                 unprinted: frozenset[str] = frozenset()) -> None:
        self.builder = builder
        self.ranges = ranges or {}  # a reverse loop's range, where the target counts down (_counted_ranges)
        self.unprinted = unprinted  # ranges read only by loops counting down (_read_only_counting_down)
        self.lines: list[str] = []
        self.origins: list[Optional[int]] = []  # per printed line: the user's line it came from
        self.last_line: Optional[int] = None

    def put(self, depth: int, text: str, line: Optional[int]) -> None:
        pad = "    " * depth
        if line is not None and line != self.last_line and "\n" not in text:
            text = f"{text.ljust(_COMMENT_COLUMN - len(pad))}  # line {line}"
            self.last_line = line
        parts = text.split("\n")
        self.lines.extend(pad + part for part in parts)
        self.origins.extend([line if line is not None else self.last_line] * len(parts))

    def block(self, body: list[ir.Stmt], depth: int) -> None:
        if not any(not isinstance(s, ir.Comment) and not self._unprinted(s) for s in body):
            self.put(depth, "pass", None)
        for stmt in body:
            if not self._unprinted(stmt):
                self.statement(stmt, depth)

    def _unprinted(self, stmt: ir.Stmt) -> bool:
        return isinstance(stmt, ir.Assign) and stmt.target in self.unprinted

    def _exit(self, flag: Optional[ir.Expr], depth: int) -> None:
        if flag is not None:
            self.put(depth + 1, f"if {self.builder.text(flag)}:", None)
            self.put(depth + 2, "break", None)

    def statement(self, stmt: ir.Stmt, depth: int) -> None:
        text = self.builder.text
        if isinstance(stmt, (ir.If, ir.For, ir.While)):
            self.compound(stmt, depth, text)
            self.last_line = None  # what follows a block names its line again, even the block's last one
        elif isinstance(stmt, ir.Comment):
            self.lines.append("    " * depth + f"# {stmt.text}")
            self.origins.append(None)
            self.last_line = None
        elif isinstance(stmt, ir.Store):  # in place, or as the target writes it
            for written in self.builder.ns.target.store(stmt):
                self.put(depth, self.builder.simple(written), written.line)
        else:
            self.put(depth, self.builder.simple(stmt), stmt.line)

    def compound(self, stmt: ir.Stmt, depth: int, text: Callable[[ir.Expr], str]) -> None:
        if isinstance(stmt, ir.If):
            self.put(depth, f"if {text(stmt.test)}:", stmt.line)
            self.block(stmt.body, depth + 1)
            if stmt.orelse:
                self.put(depth, "else:", None)
                self.block(stmt.orelse, depth + 1)
        elif isinstance(stmt, ir.For):
            if stmt.reverse and isinstance(stmt.iterable, ir.Var) and stmt.iterable.name in self.ranges:
                steps = _counting_down(self.ranges[stmt.iterable.name], text)
            elif stmt.reverse:
                steps = f"{self.builder.ns.spelling(reversed)}({text(stmt.iterable)})"  # (the target's reversed)
            else:
                steps = text(stmt.iterable)
            self.put(depth, f"for {stmt.index} in {steps}:", stmt.line)
            self.block(stmt.body, depth + 1)
            self._exit(stmt.exit, depth)
        elif isinstance(stmt, ir.While):
            if stmt.test_block:
                self.put(depth, "while True:", stmt.line)
                self.block(stmt.test_block, depth + 1)
                self.put(depth + 1, f"if not {text(stmt.test)}:", None)
                self.put(depth + 2, "break", None)
            else:
                self.put(depth, f"while {text(stmt.test)}:", stmt.line)
            self.block(stmt.body, depth + 1)
            self._exit(stmt.exit, depth)


# Python refuses source indented 100 levels deep.  An ``elif`` chain the user wrote flat is, in the IR,
# an ``if`` nested in each ``else``: past this depth such chains are laid out flat (see ``_unnest``).
_MAX_NESTING = 40


def _nesting(stmt: ir.Stmt, memo: dict[int, int]) -> int:
    """How many blocks deep ``stmt`` reaches (0 for a simple statement); ``memo`` keeps it linear."""
    key = stmt.sid
    if key not in memo:
        inner = [s for block in ir.blocks(stmt) for s in block]
        memo[key] = 0 if not ir.blocks(stmt) else 1 + max((_nesting(s, memo) for s in inner), default=0)
    return memo[key]


def _unnest(body: list[ir.Stmt], taken: set[str], memo: dict[int, int]) -> list[ir.Stmt]:
    """``body`` with every ``if`` chain nested deeper than ``_MAX_NESTING`` laid out flat.

    ``if a: A  else: (pre; if b: B else: C; post)`` becomes ``live = False``,
    ``if a: A  else: pre; live = True``, then ``if live: (if b: B else: C)``,
    then ``if live: post``: the same statements run in the same order, one level deep
    per link instead of one level more per link.  The IR given is left as it is.
    """
    out: list[ir.Stmt] = []
    for stmt in body:
        if isinstance(stmt, ir.If) and _nesting(stmt, memo) > _MAX_NESTING:
            out.extend(_unchain(stmt, taken, memo))
        elif isinstance(stmt, ir.If):
            out.append(replace(stmt, body=_unnest(stmt.body, taken, memo), orelse=_unnest(stmt.orelse, taken, memo)))
        elif isinstance(stmt, ir.For):
            out.append(replace(stmt, body=_unnest(stmt.body, taken, memo)))
        elif isinstance(stmt, ir.While):
            out.append(replace(stmt, test_block=_unnest(stmt.test_block, taken, memo),
                               body=_unnest(stmt.body, taken, memo)))
        else:
            out.append(stmt)
    return out


def _unchain(stmt: ir.If, taken: set[str], memo: dict[int, int]) -> list[ir.Stmt]:
    """One deep ``if``/``else if`` chain as a flat sequence of guarded links (see ``_unnest``)."""
    out: list[ir.Stmt] = []
    afters: list[ir.Stmt] = []  # each link's statements after its inner ``if``, innermost last
    guard: Optional[str] = None
    current = stmt
    while _nesting(current, memo) > _MAX_NESTING and current.orelse:
        deepest = max(range(len(current.orelse)), key=lambda i: _nesting(current.orelse[i], memo))
        inner = current.orelse[deepest]
        if not isinstance(inner, ir.If):
            break
        live = ir.fresh_name("chain_live", taken)  # True once this link took its ``else``
        link = ir.If(current.test, _unnest(current.body, taken, memo),
                     _unnest(current.orelse[:deepest], taken, memo) + [ir.Assign(live, ir.Const(True))],
                     current.line)
        out.append(ir.Assign(live, ir.Const(False)))
        out.append(link if guard is None else ir.If(ir.Var(guard), [link], []))
        after = _unnest(current.orelse[deepest + 1:], taken, memo)
        if after:
            afters.append(ir.If(ir.Var(live), after, []))
        guard, current = live, inner
    last = replace(current, body=_unnest(current.body, taken, memo), orelse=_unnest(current.orelse, taken, memo))
    out.append(last if guard is None else ir.If(ir.Var(guard), [last], []))
    return out + afters[::-1]


@dataclass
class Emitted:
    source: str
    namespace: Namespace
    name: str
    origins: list = field(default_factory=list)  # per source line: the user's line it came from, or None
    # Every array the (first) function returns is a new object of its own (sharing.fresh_returns)
    fresh_returns: bool = False
    # What the target's ``finish`` may reason about: the functions as printed (their tape written by the
    # target), and the kinds of the first one's parameters that every call of the code has (by name).
    functions: list = field(default_factory=list)
    kinds: dict = field(default_factory=dict)


def emit(fn: ir.Function, header: list[str], defaults: Optional[dict[str, str]] = None,
         docstring: Optional[str] = None, target: Target = NUMPY, kinds: Optional[dict] = None) -> Emitted:
    """Print ``fn`` as a module for ``target``.

    ``header`` lines become comments above the def; ``defaults`` gives
    parameters default values as source text; ``kinds``, what every call
    of the code passes for some parameters (``kinds.Kind`` by name), is
    handed on for the target's ``finish``.
    """
    return emit_module([(fn, defaults, docstring)], header, target, kinds)


def emit_module(functions: list[tuple[ir.Function, Optional[dict[str, str]], Optional[str]]],
                header: list[str], target: Target = NUMPY, kinds: Optional[dict] = None) -> Emitted:
    """Print several functions as one module sharing one namespace; ``name`` is the first one's.
    The target writes each function's tape (``Target.tape``), its own spellings (``Target.written``),
    names its ops and writes its stores;
    given ``kinds`` (of the first function's parameters), its own index checks into the first
    (``Target.checked_indexes``)."""
    tape = target.tape()
    functions = [(target.written(tape.spell(f)), d, s) for f, d, s in functions]
    if kinds is not None:
        first, defaults, docstring = functions[0]
        functions[0] = (target.checked_indexes(first, kinds), defaults, docstring)
    local_names = ir.NameSet(set().union(*(set(f.params) | ir.assigned_names(f.body) | {f.name}
                                           for f, _, _ in functions)))
    memo: dict[int, int] = {}
    functions = [(replace(f, body=_unnest(f.body, local_names, memo)), d, s) for f, d, s in functions]
    builder = _Builder(Namespace(target, avoid=local_names))
    lines = [f"# {h}" for h in header]
    origins: list[Optional[int]] = [None] * len(lines)
    for fn, defaults, docstring in functions:
        params = ", ".join(f"{p}={defaults[p]}" if defaults and p in defaults else p for p in fn.params)
        ranges = _counted_ranges(fn) if target.capabilities.counts_down else None
        printer = _Printer(builder, ranges, _read_only_counting_down(fn, ranges or {}))
        printer.lines = [f"def {fn.name}({params}):"]
        printer.origins = [None]
        if docstring:
            printer.lines.append(f'    """{docstring}"""')
            printer.origins.append(None)
        printer.block(fn.body, 1)
        lines += printer.lines + [""]
        origins += printer.origins + [None]
    lines, origins = _one_per_line(lines[:-1], origins[:-1])
    return Emitted("\n".join(lines) + "\n", builder.ns, functions[0][0].name, origins,
                   functions=[f for f, _, _ in functions], kinds=dict(kinds or {}),
                   fresh_returns=fresh_returns(functions[0][0]))


def _counted_ranges(fn: ir.Function) -> dict[str, ir.Call]:
    """The names bound once to ``range(stop)`` or ``range(start, stop)`` of names bound at most once
    (or constants): a reverse loop over one may run ``range(stop - 1, start - 1, -1)`` (``Capabilities.counts_down``)."""
    bound: dict[str, list[ir.Stmt]] = {}
    for stmt in ir.walk(fn.body):
        for name in ir.targets_of(stmt):
            bound.setdefault(name, []).append(stmt)
    found = {}
    for name, stmts in bound.items():
        stmt = stmts[0]
        if len(stmts) != 1 or not isinstance(stmt, ir.Assign) or not isinstance(stmt.value, ir.Call) \
                or stmt.value.fn is not range or stmt.value.kwargs or not 1 <= len(stmt.value.args) <= 2:
            continue
        bounds = stmt.value.args
        if all(isinstance(b, ir.Const) and b.value.__class__ is int or
               isinstance(b, ir.Var) and len(bound.get(b.name, ())) <= 1 for b in bounds):
            found[name] = stmt.value
    return found


def _read_only_counting_down(fn: ir.Function, ranges: dict[str, ir.Call]) -> frozenset[str]:
    """The counted ranges ``fn`` reads only as the iterables of reverse loops, which run ``range(stop - 1,
    start - 1, -1)`` instead: their own assignments are not printed (dead in the printed code: a split
    adjoint's backward part, which makes a range again from what the forward part handed it)."""
    if not ranges:
        return frozenset()
    # (only an iterable that is the range's name is printed counting down: ``reversed(steps[:trips])``,
    # a loop cut short by a break, reads the range itself)
    read = {n for s in ir.walk(fn.body) for e in ir.exprs_of(s) for n in ir.names_read(e)
            if not (isinstance(s, ir.For) and s.reverse and e is s.iterable and isinstance(e, ir.Var))}
    return frozenset(name for name in ranges if name not in read)


def _counting_down(steps: ir.Call, text: Callable[[ir.Expr], str]) -> str:
    """``range(stop - 1, start - 1, -1)``: the values of ``steps``, a range of step 1, last first."""
    start, stop = (steps.args[0], steps.args[1]) if len(steps.args) == 2 else (ir.Const(0), steps.args[0])
    first = f"{text(stop)} - 1"
    past = "-1" if isinstance(start, ir.Const) and start.value == 0 else f"{text(start)} - 1"
    return f"range({first}, {past}, -1)"


def _one_per_line(texts: list[str], origins: list[Optional[int]]) -> tuple[list[str], list[Optional[int]]]:
    """``texts`` split at their line breaks (a header entry may hold several lines), each line with its
    text's origin: the origins must stay aligned with the source's lines, which tracebacks number."""
    lines: list[str] = []
    aligned: list[Optional[int]] = []
    for text, origin in zip(texts, origins):
        parts = text.split("\n")
        lines += parts
        aligned += [origin] * len(parts)
    return lines, aligned
