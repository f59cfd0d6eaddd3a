"""The SSA data-flow graph of a function: as Graphviz DOT text (``s2s-ad FILE:FUNC --format dot``),
or as records to draw (``data_flow``: the derivative explorer's picture, explorer.py).

Input: an SSA ``ir.Function`` and its ``Analysis``.  Output: DOT source with
a node per parameter and per value (labelled with the operation that makes
it), a solid edge from each operand to the value it feeds, and, where the
derivative flows (active values), a dashed red edge back: the path the
adjoints take in the reverse sweep.  Loops and branches are drawn as
clusters, labelled with their header.
"""
from __future__ import annotations

import itertools
from dataclasses import dataclass, field
from typing import Optional

from ..core import ir
from ..analysis.facts import Analysis
from ..targets.emit import Namespace, _Builder


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


@dataclass
class FlowNode:
    name: str  # the SSA value (a parameter, a value, or "return")
    label: str  # the statement that makes it
    line: Optional[int]  # the user's line
    active: bool  # the derivative flows through it
    within: tuple[str, ...] = ()  # the headers of the loops and branches it is in, outermost first


@dataclass
class Flow:
    """``fn``'s data-flow graph as records: nodes in program order, and edges ``(source, target)``,
    positions in ``nodes``, from each operand (the latest node making that name) to the value it
    feeds; ``adjoint`` holds those the adjoints take back (both ends active)."""

    nodes: list[FlowNode] = field(default_factory=list)
    edges: list[tuple[int, int]] = field(default_factory=list)
    adjoint: set[tuple[int, int]] = field(default_factory=set)


def data_flow(fn: ir.Function, facts: Analysis) -> Flow:
    """The records of ``fn``'s data-flow graph (see ``Flow``), what ``to_dot`` draws."""
    text = _Builder(Namespace()).text
    flow = Flow([FlowNode(p, p, fn.firstline, p in facts.active) for p in fn.params])
    latest = {p: i for i, p in enumerate(fn.params)}

    def add(name: str, label: str, line: Optional[int], expr: ir.Expr, within: tuple[str, ...]) -> None:
        target = len(flow.nodes)
        flow.nodes.append(FlowNode(name, label, line, name in facts.active, within))
        for source in dict.fromkeys(ir.names_read(expr)):
            if source not in latest:  # (a global or a constant: no node)
                continue
            flow.edges.append((latest[source], target))
            if source in facts.active and name in facts.active:
                flow.adjoint.add((latest[source], target))
        latest[name] = target

    def block(body: list[ir.Stmt], within: tuple[str, ...]) -> None:
        for stmt in body:
            if isinstance(stmt, ir.Assign):
                add(stmt.target, stmt.target if stmt.merge else f"{stmt.target} = {text(stmt.value)}",
                    stmt.line, stmt.value, within)
            elif isinstance(stmt, ir.Store):
                add(stmt.array, f"{stmt.array}[{text(stmt.index)}] = {text(stmt.value)}", stmt.line, stmt.value,
                    within)
            elif isinstance(stmt, ir.Return):
                add("return", f"return {text(stmt.value)}", stmt.line, stmt.value, within)
            elif isinstance(stmt, ir.If):
                block(stmt.body, within + (f"if {text(stmt.test)}",))
                block(stmt.orelse, within + (f"else (if {text(stmt.test)})",))
            elif isinstance(stmt, ir.For):
                block(stmt.body, within + (f"for {stmt.index} in {text(stmt.iterable)}",))
            elif isinstance(stmt, ir.While):
                for inner in ir.blocks(stmt):
                    block(inner, within + (f"while {text(stmt.test)}",))

    block(fn.body, ())
    return flow
