"""The SSA data-flow graph of a function as Graphviz DOT text (``s2s-ad FILE:FUNC --format dot``).

Input: an SSA ``ir.Function`` and its ``Analysis``.  Output: DOT source with
a node per parameter and per value (labelled with the operation that makes
it), a solid edge from each operand to the value it feeds, and, where the
derivative flows (active values), a dashed red edge back: the path the
adjoints take in the reverse sweep.  Loops and branches are drawn as
clusters, labelled with their header.
"""
from __future__ import annotations

import itertools

from . import ir
from .analysis import Analysis
from .emit import Namespace, _Builder


def _quote(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


class _Graph:
    def __init__(self, fn: ir.Function, facts: Analysis) -> None:
        self.fn = fn
        self.facts = facts
        self.text = _Builder(Namespace()).text
        self.lines: list[str] = []
        self.clusters = itertools.count()

    def node(self, name: str, label: str, depth: int, shape: str = "box") -> None:
        colour = ', color="#c0392b"' if name in self.facts.active else ""
        self.lines.append("  " * depth + f"{_quote(name)} [label={_quote(label)}, shape={shape}{colour}];")

    def edges(self, target: str, expr: ir.Expr, depth: int) -> None:
        for source in dict.fromkeys(ir.names_read(expr)):
            self.lines.append("  " * depth + f"{_quote(source)} -> {_quote(target)};")
            if source in self.facts.active and target in self.facts.active:
                self.lines.append("  " * depth + f'{_quote(target)} -> {_quote(source)} '
                                  f'[style=dashed, color="#c0392b", constraint=false];')

    def block(self, body: list[ir.Stmt], depth: int) -> None:
        for stmt in body:
            if isinstance(stmt, ir.Assign):
                label = stmt.target if stmt.merge else f"{stmt.target} = {self.text(stmt.value)}"
                self.node(stmt.target, label, depth, "ellipse" if stmt.merge else "box")
                self.edges(stmt.target, stmt.value, depth)
            elif isinstance(stmt, ir.Store):
                self.node(stmt.array, f"{stmt.array}[{self.text(stmt.index)}] = {self.text(stmt.value)}", depth)
                self.edges(stmt.array, stmt.value, depth)
            elif isinstance(stmt, (ir.If, ir.For, ir.While)):
                header = {ir.If: lambda s: f"if {self.text(s.test)}", ir.For: lambda s: f"for {s.index} in "
                          f"{self.text(s.iterable)}", ir.While: lambda s: f"while {self.text(s.test)}"}[type(stmt)]
                self.lines.append("  " * depth + f"subgraph cluster_{next(self.clusters)} {{")
                self.lines.append("  " * (depth + 1) + f"label={_quote(header(stmt))}; style=rounded;")
                for inner in ir.blocks(stmt):
                    self.block(inner, depth + 1)
                self.lines.append("  " * depth + "}")
            elif isinstance(stmt, ir.Return):
                self.node("return", f"return {self.text(stmt.value)}", depth, "doubleoctagon")
                self.edges("return", stmt.value, depth)

    def dot(self) -> str:
        self.lines = [f"digraph {_quote(self.fn.name)} {{", '  node [fontname="monospace"];']
        for p in self.fn.params:
            self.node(p, p, 1, "ellipse")
        self.block(self.fn.body, 1)
        return "\n".join(self.lines + ["}"]) + "\n"


def to_dot(fn: ir.Function, facts: Analysis) -> str:
    """The DOT source of ``fn``'s data-flow graph (see the module docstring)."""
    return _Graph(fn, facts).dot()
