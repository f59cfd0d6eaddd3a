"""Stage 6: IR → Python source text (via gast and astor).

Input: an ``ir.Function`` (SSA, adjoint or tangent form) and a header.
Output: an ``Emitted`` record: the module source, and the globals the code
needs (``np``, ``math``, runtime helpers, the user's arrays and black-box
functions, each bound once under a readable name).  Each statement is
printed by astor; a ``# line N`` comment marks where the user's line
changes, so every generated statement can be traced to its origin.
"""
from __future__ import annotations

import builtins
import math
import operator
from dataclasses import dataclass, field
from typing import Any, Optional

import astor
import gast
import numpy as np

from . import ir, runtime

_BINARY = {
    operator.add: gast.Add, operator.sub: gast.Sub, operator.mul: gast.Mult, operator.truediv: gast.Div,
    operator.floordiv: gast.FloorDiv, operator.mod: gast.Mod, operator.pow: gast.Pow,
    operator.matmul: gast.MatMult,
}
_UNARY = {operator.neg: gast.USub, operator.pos: gast.UAdd, operator.not_: gast.Not}
_COMPARE = {
    operator.lt: gast.Lt, operator.le: gast.LtE, operator.gt: gast.Gt, operator.ge: gast.GtE,
    operator.eq: gast.Eq, operator.ne: gast.NotEq, operator.is_: gast.Is, operator.is_not: gast.IsNot,
}
_MODULES = (("np", np), ("np.linalg", np.linalg), ("math", math))
_COMMENT_COLUMN = 32


def _name(id_: str, ctx: Any = None) -> gast.Name:
    return gast.Name(id=id_, ctx=ctx or gast.Load(), annotation=None, type_comment=None)


def _dotted(path: str) -> Any:
    parts = path.split(".")
    node: Any = _name(parts[0])
    for part in parts[1:]:
        node = gast.Attribute(value=node, attr=part, ctx=gast.Load())
    return node


@dataclass
class Namespace:
    """The globals of a generated module, and how code names each object."""

    globals: dict[str, Any] = field(default_factory=lambda: {"np": np, "math": math})
    avoid: set[str] = field(default_factory=set)  # the function's local names
    _names: dict[int, str] = field(default_factory=dict)

    def reference(self, obj: Any, hint: str = "value") -> Any:
        for prefix, module in _MODULES:
            name = getattr(obj, "__name__", None)
            if name and getattr(module, name, None) is obj:
                return _dotted(f"{prefix}.{name}")
        name = getattr(obj, "__name__", None)
        if name and getattr(builtins, name, None) is obj:
            return _name(name)
        return _name(self.bind(obj, name if name and getattr(runtime, name, None) is obj else name or hint))

    def bind(self, obj: Any, hint: str) -> str:
        if id(obj) in self._names:
            return self._names[id(obj)]
        base = "".join(c if c.isalnum() else "_" for c in hint).strip("_") or "value"
        name, n = base, 0
        while name in self.avoid or (name in self.globals and self.globals[name] is not obj):
            n += 1
            name = f"{base}_{n}"
        self.globals[name] = obj
        self._names[id(obj)] = name
        return name


class _Builder:
    def __init__(self, namespace: Namespace) -> None:
        self.ns = namespace

    def expr(self, e: ir.Expr) -> Any:
        if isinstance(e, ir.Var):
            return _name(e.name)
        if isinstance(e, ir.Const):
            return self.const(e.value)
        if isinstance(e, ir.Display):
            items = [self.expr(i) for i in e.items]
            return gast.Tuple(elts=items, ctx=gast.Load()) if e.kind == "tuple" else gast.List(elts=items, ctx=gast.Load())
        if isinstance(e, ir.Slice):
            return gast.Slice(*(None if p is None else self.expr(p) for p in (e.lower, e.upper, e.step)))
        return self.call(e)

    def const(self, value: Any) -> Any:
        if isinstance(value, np.generic):
            value = value.item()
        if isinstance(value, float) and not math.isfinite(value):
            node = _dotted("math.nan" if math.isnan(value) else "math.inf")
            return gast.UnaryOp(op=gast.USub(), operand=node) if value < 0 else node
        if isinstance(value, tuple):
            return gast.Tuple(elts=[self.const(v) for v in value], ctx=gast.Load())
        if isinstance(value, (int, float, complex, str, bytes, bool, type(None))):
            return gast.Constant(value=value, kind=None)
        return _name(self.ns.bind(value, "array" if isinstance(value, np.ndarray) else "constant"))

    def call(self, e: ir.Call) -> Any:
        fn, args = e.fn, [self.expr(a) for a in e.args]
        if fn in _BINARY and len(args) == 2 and not e.kwargs:
            return gast.BinOp(left=args[0], op=_BINARY[fn](), right=args[1])
        if fn in _UNARY and len(args) == 1:
            return gast.UnaryOp(op=_UNARY[fn](), operand=args[0])
        if fn in _COMPARE and len(args) == 2:
            return gast.Compare(left=args[0], ops=[_COMPARE[fn]()], comparators=[args[1]])
        if fn is operator.contains and len(args) == 2:
            return gast.Compare(left=args[1], ops=[gast.In()], comparators=[args[0]])
        if fn is operator.getitem and len(args) == 2:
            return gast.Subscript(value=args[0], slice=args[1], ctx=gast.Load())
        keywords = [gast.keyword(arg=k, value=self.expr(v)) for k, v in e.kwargs]
        return gast.Call(func=self.ns.reference(fn), args=args, keywords=keywords)

    def statement(self, stmt: ir.Stmt) -> str:
        if isinstance(stmt, ir.Return):
            node = gast.Return(value=self.expr(stmt.value))
        else:
            node = gast.Assign(targets=[_name(stmt.target, gast.Store())], value=self.expr(stmt.value),
                               type_comment=None)
        return astor.to_source(gast.gast_to_ast(node)).rstrip("\n")


@dataclass
class Emitted:
    source: str
    namespace: Namespace
    name: str


def emit(fn: ir.Function, header: list[str], defaults: Optional[dict[str, str]] = None,
         docstring: Optional[str] = None, sections: Optional[dict[int, str]] = None) -> Emitted:
    """Print ``fn`` as a module.

    ``header`` lines become comments above the def; ``defaults`` gives
    parameters default values as source text; ``sections`` maps a statement
    index to a comment line printed before it (``# reverse sweep``).
    """
    local_names = set(fn.params) | {s.target for s in fn.body if isinstance(s, ir.Assign)}
    builder = _Builder(Namespace(avoid=local_names))
    params = ", ".join(f"{p}={defaults[p]}" if defaults and p in defaults else p for p in fn.params)
    lines = [f"# {h}" for h in header] + [f"def {fn.name}({params}):"]
    if docstring:
        lines.append(f'    """{docstring}"""')
    last_line = None
    for index, stmt in enumerate(fn.body):
        if sections and index in sections:
            lines.append(f"    # {sections[index]}")
            last_line = None
        text = builder.statement(stmt)
        if stmt.line is not None and stmt.line != last_line and "\n" not in text:
            text = f"{text.ljust(_COMMENT_COLUMN - 4)}  # line {stmt.line}"
            last_line = stmt.line
        lines.extend("    " + part for part in text.split("\n"))
    return Emitted("\n".join(lines) + "\n", builder.ns, fn.name)
