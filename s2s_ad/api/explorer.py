"""The derivative explorer: one self-contained HTML page showing the user's code and the generated code.

Input: the user's function, the generated functions a derivative runs (their
modules are found by ``reach.reached``), a title and, where it could be
made, the data-flow graph (``graph.Flow``).  Output: ``page(...)``, the text
of one HTML page with its CSS and JavaScript inline (it loads nothing: it
opens offline, from a file or in a notebook):

* left, the user's functions the generated lines come from (each line
  ``id="u-F-L"``: file ``F``, line ``L``), each linked to the first
  generated line made from it, with how many there are;
* right, every generated module (each line ``id="g-M-N"``: module ``M``,
  line ``N``), each line linked to the user's line it comes from
  (``data-user``; the ``# line N`` comments, followed through a higher
  derivative's code down to the user's line: ``reach.place``);
* the tape marked: ``class="push"``/``"pop"`` on the lines that push and
  pop (``target.ListTape`` spells them ``tape.append(...)`` and
  ``... = tape.pop()``, ``target.TupleTape`` ``tape = (..., tape)`` and
  ``..., tape = tape``; a higher derivative's line is marked as the line
  it was taken of), ``"helper"`` on the calls that thread the tape through a
  helper's adjoint;
* below, the data-flow graph drawn as an arc diagram in SVG (values in
  program order, an edge from each operand to what it feeds, the adjoints'
  path dashed in red), each value linked to its user's line.

Clicking a generated line highlights (``class="hl"``) it and its user's
line; clicking a user's line highlights it and every generated line made
from it; ``#g-M-N`` or ``#u-F-L`` in the address does the same on load.
"""
from __future__ import annotations

import ast
import html
import linecache
import os
from typing import Callable, Optional, Sequence

from ..analysis.facts import analyse
from ..driver.cache import origins
from ..core.errors import TransformError
from .graph import Flow, data_flow
from ..driver.pipeline import leaf_kinds, lowered, ssa_params_of
from ..driver.reach import GENERATED_PREFIX, GeneratedModule, Place, reached

_MARKS = ("push", "pop", "helper")


def page_for(fn: Callable, entries: Sequence[Optional[Callable]], wrt: Sequence[str], kinds: tuple,
             title: str) -> str:
    """``page`` for the derivative by ``wrt`` of ``fn`` called with arguments of ``kinds``, its graph
    drawn where ``fn`` lowers for them."""
    try:
        parsed, ssa = lowered(fn, kinds)
        ssa_wrt = [p for w in wrt for p in ssa_params_of(parsed, ssa, w)]
        flow: Optional[Flow] = data_flow(ssa, analyse(ssa, ssa_wrt, dict(zip(ssa.params, leaf_kinds(kinds)))))
        why = ""
    except (TransformError, TypeError, ValueError) as exc:
        flow, why = None, str(exc)
    return page(fn, entries, title, flow, why)


def page(fn: Callable, entries: Sequence[Optional[Callable]], title: str, flow: Optional[Flow] = None,
         flow_note: str = "") -> str:
    """The explorer's page for the derivative of ``fn`` whose generated ``entries`` run (see the module
    docstring); ``flow_note``: why there is no graph."""
    user_file = getattr(getattr(fn, "__code__", None), "co_filename", None)
    modules: dict[str, GeneratedModule] = {}
    for entry in entries:
        for module in reached(entry, prefer=user_file):
            modules.setdefault(module.filename, module)
    generated = list(modules.values())
    note = next((line.lstrip("# ") for module in generated for line in module.lines
                 if line.startswith(("# Specialised for", "# Argument kinds unknown"))), "")
    files = _user_files(fn, generated)
    right = "\n".join(_generated_section(k, module, files) for k, module in enumerate(generated))
    left = _user_section(fn, files, generated)
    graph = _graph_section(flow, files, user_file) if flow is not None else \
        f'<p class="note">No data-flow graph: {html.escape(flow_note)}</p>'
    return _PAGE.format(title=html.escape(title), note=html.escape(note), left=left, right=right, graph=graph,
                        style=_STYLE, script=_SCRIPT)


# -- the user's side ---------------------------------------------------------------------------------

def _user_files(fn: Callable, generated: list[GeneratedModule]) -> dict[str, int]:
    """Each user's file the page shows, numbered: ``fn``'s first, then those the generated lines name."""
    files: dict[str, int] = {}
    own = getattr(getattr(fn, "__code__", None), "co_filename", None)
    if own:
        files[own] = 0
    for module in generated:
        for place in module.places:
            if place is not None and place[0] not in files:
                files[place[0]] = len(files)
    return files


def _user_id(files: dict[str, int], place: Place) -> str:
    return f"u-{files[place[0]]}-{place[1]}"


def _function_ranges(path: str) -> list[tuple[int, int]]:
    """The (first, last) lines of each function ``path`` defines, decorators included."""
    try:
        tree = ast.parse("".join(linecache.getlines(path)))
    except (SyntaxError, ValueError):
        return []
    ranges = []
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            first = min([node.lineno] + [d.lineno for d in node.decorator_list])
            ranges.append((first, node.end_lineno or node.lineno))
        elif isinstance(node, ast.Lambda):
            ranges.append((node.lineno, node.end_lineno or node.lineno))
    return ranges


def _shown_lines(path: str, wanted: set[int]) -> list[tuple[int, int]]:
    """The ranges of ``path`` to show: the innermost function around each wanted line (the line
    alone where none is), merged."""
    ranges = _function_ranges(path)
    chosen = set()
    for line in wanted:
        around = [r for r in ranges if r[0] <= line <= r[1]]
        chosen.add(min(around, key=lambda r: r[1] - r[0]) if around else (line, line))
    merged: list[tuple[int, int]] = []
    for first, last in sorted(chosen):
        if merged and first <= merged[-1][1] + 1:
            merged[-1] = (merged[-1][0], max(merged[-1][1], last))
        else:
            merged.append((first, last))
    return merged


def _user_section(fn: Callable, files: dict[str, int], generated: list[GeneratedModule]) -> str:
    made_from: dict[str, list[str]] = {}
    for k, module in enumerate(generated):
        for n, place in enumerate(module.places, 1):
            if place is not None:
                made_from.setdefault(_user_id(files, place), []).append(f"g-{k}-{n}")
    code = getattr(fn, "__code__", None)
    parts = []
    for path, number in files.items():
        wanted = {int(i.split("-")[2]) for i in made_from if i.startswith(f"u-{number}-")}
        if code is not None and path == code.co_filename:
            wanted.add(code.co_firstlineno)
        lines = linecache.getlines(path)
        rows: list[str] = []
        for first, last in _shown_lines(path, wanted):
            if rows:
                rows.append('<span class="gap">⋮</span>')
            for line in range(first, min(last, len(lines)) + 1):
                rows.append(_user_row(f"u-{number}-{line}", line, lines[line - 1].rstrip("\n"),
                                      made_from.get(f"u-{number}-{line}", [])))
        parts.append(f'<section class="file"><h3>{html.escape(os.path.basename(path))}'
                     f' <small>{html.escape(path)}</small></h3><pre>{"".join(rows)}</pre></section>')
    return "\n".join(parts)


def _user_row(row_id: str, line: int, text: str, made: list[str]) -> str:
    link = (f'<a class="to" href="#{made[0]}" title="the generated lines made from it">→{len(made)}</a>'
            if made else '<span class="to"></span>')
    return (f'<span class="line" id="{row_id}" data-generated="{" ".join(made)}">'
            f'<span class="ln">{line}</span>{link}{html.escape(text) or " "}</span>')


# -- the generated side ------------------------------------------------------------------------------

def _generated_section(k: int, module: GeneratedModule, files: dict[str, int]) -> str:
    marks = tape_marks(module.filename)
    rows = []
    for n, (text, place) in enumerate(zip(module.lines, module.places), 1):
        mark = marks.get(n)
        classes = "line" + (f" {mark}" if mark else "")
        badge = f'<span class="mark">{mark}</span>' if mark else '<span class="mark"></span>'
        if place is not None:
            target = _user_id(files, place)
            link = f'<a class="from" href="#{target}" title="from line {place[1]}">{place[1]}</a>'
            attrs = f' data-user="{target}"'
        else:
            link, attrs = '<span class="from"></span>', ""
        rows.append(f'<span class="{classes}" id="g-{k}-{n}"{attrs}><span class="ln">{n}</span>{link}{badge}'
                    f'{html.escape(text) or " "}</span>')
    name = module.filename[len(GENERATED_PREFIX):-1] if module.filename.endswith(">") else module.filename
    return (f'<section class="module" id="m-{k}"><h3>{html.escape(name)}</h3>'
            f'<pre>{"".join(rows)}</pre></section>')


def tape_marks(filename: str, depth: int = 0) -> dict[int, str]:
    """For generated ``filename``: the lines that push on the tape, pop from it, or hand it to a
    helper's adjoint (``"push"``, ``"pop"``, ``"helper"``), as ``target.ListTape`` (the code that
    runs) and ``target.TupleTape`` (a level read back) spell them; a line of code taken of generated
    code (a higher derivative) is marked as the line it was taken of."""
    text = "".join(linecache.getlines(filename))
    marks: dict[int, str] = {}
    try:
        tree = ast.parse(text)
    except SyntaxError:
        return marks
    tapes = _list_tapes(tree)
    for node in ast.walk(tree):
        mark = None
        if not isinstance(node, ast.stmt):
            continue
        if isinstance(node, ast.Assign) and len(node.targets) == 1:
            mark = _tape_statement(node.targets[0], node.value) or ("pop" if _on_list(node.value, "pop", tapes)
                                                                     else None)
        elif isinstance(node, ast.Expr) and _on_list(node.value, "append", tapes):
            mark = "push"
        if mark:
            marks[node.lineno] = mark
    found = origins(filename)
    if found is not None and found[0].startswith(GENERATED_PREFIX) and depth < 64:
        below = tape_marks(found[0], depth + 1)
        for n, line in enumerate(found[1], 1):
            if line is not None and line in below and n not in marks:
                marks[n] = below[line]
    return marks


def _list_tapes(tree: ast.AST) -> set[str]:
    """The names of the list tapes in generated code: bound to ``[]`` (the one piece starts with the
    empty tape), or the last parameter of a part that returns it last (a helper's parts are handed
    the tape and give it back)."""
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign) and isinstance(node.value, ast.List) and not node.value.elts:
            names.update(t.id for t in node.targets if isinstance(t, ast.Name))
        elif isinstance(node, ast.FunctionDef) and node.args.args:
            last = node.args.args[-1].arg
            returned = [r.value for r in ast.walk(node) if isinstance(r, ast.Return)]
            if any(isinstance(v, ast.Tuple) and v.elts and isinstance(v.elts[-1], ast.Name) and v.elts[-1].id == last
                   for v in returned):
                names.add(last)
    return names


def _on_list(value: ast.expr, method: str, tapes: set[str]) -> bool:
    """Whether ``value`` is ``tape.<method>(...)`` on one of the list tapes."""
    return isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute) and value.func.attr == method \
        and isinstance(value.func.value, ast.Name) and value.func.value.id in tapes


def _tape_statement(target: ast.expr, value: ast.expr) -> Optional[str]:
    """``"push"`` for ``tape = (..., tape)``, ``"pop"`` for ``..., tape = tape``, ``"helper"`` for
    ``..., tape = d_helper.forward(..., tape)`` or ``.backward(...)``; None for anything else.
    (In SSA form no other statement assigns a name it reads, so these are the tape's alone.)"""
    if isinstance(target, ast.Name) and isinstance(value, ast.Tuple) and value.elts:
        last = value.elts[-1]
        return "push" if isinstance(last, ast.Name) and last.id == target.id else None
    if isinstance(target, ast.Tuple) and target.elts and isinstance(target.elts[-1], ast.Name):
        tape = target.elts[-1].id
        if isinstance(value, ast.Name) and value.id == tape:
            return "pop"
        if isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute) \
                and value.func.attr in ("forward", "backward") \
                and any(isinstance(a, ast.Name) and a.id == tape for a in value.args):
            return "helper"
    return None


# -- the data-flow graph -----------------------------------------------------------------------------

_ROW, _LEFT, _WIDTH = 24, 300, 940  # (left of the arcs: the loops and branches a value is in)


def _graph_section(flow: Flow, files: dict[str, int], user_file: Optional[str]) -> str:
    """The data-flow graph as an arc diagram: one row per value, operand edges on the left, the
    adjoints' path on the right."""
    height = _ROW * (len(flow.nodes) + 1)
    parts = [f'<svg class="flow" width="{_WIDTH}" height="{height}" viewBox="0 0 {_WIDTH} {height}" role="img">']
    for i, j in flow.edges:
        parts.append(_arc(i, j, _LEFT, -1, "edge"))
    for i, j in sorted(flow.adjoint):
        parts.append(_arc(i, j, _LEFT + 300, 1, "adjoint"))
    for i, node in enumerate(flow.nodes):
        y = _ROW * (i + 1)
        target = f"u-{files[user_file]}-{node.line}" if user_file in files and node.line else ""
        within = " / ".join(node.within)
        classes = "node" + (" active" if node.active else "")
        parts.append(f'<g class="{classes}" id="n-{i}" data-user="{target}"><title>{html.escape(within)}</title>'
                     f'<circle cx="{_LEFT}" cy="{y}" r="4"></circle>'
                     f'<text x="{_LEFT + 10}" y="{y + 4}">{html.escape(node.label[:60])}</text>'
                     f'<text class="within" x="8" y="{y + 4}">{html.escape(within[-36:])}</text></g>')
    parts.append("</svg>")
    legend = ('<p class="note">Values in program order; grey arcs: each operand to the value it feeds; '
              'dashed red arcs: the path the adjoints take back (both ends active). Click a value for its line.</p>')
    return legend + "".join(parts)


def _arc(i: int, j: int, x: int, side: int, cls: str) -> str:
    y1, y2 = _ROW * (i + 1), _ROW * (j + 1)
    bulge = side * min(240, 12 + 10 * abs(j - i))
    return f'<path class="{cls}" d="M {x} {y1} C {x + bulge} {y1}, {x + bulge} {y2}, {x} {y2}"></path>'


_STYLE = """
.s2s-ad-explorer { font-family: system-ui, sans-serif; margin: 1em; color: #222; }
.s2s-ad-explorer h1 { font-size: 1.3em; margin: 0 0 .2em 0; }
.s2s-ad-explorer h2 { font-size: 1.1em; margin: 1em 0 .3em 0; }
.s2s-ad-explorer h3 { font-size: .95em; margin: .6em 0 .2em 0; }
.s2s-ad-explorer h3 small { color: #888; font-weight: normal; }
.s2s-ad-explorer .note { color: #555; margin: .2em 0; }
.s2s-ad-explorer .columns { display: flex; gap: 1em; align-items: flex-start; }
.s2s-ad-explorer .columns > div { flex: 1 1 50%; min-width: 0; }
.s2s-ad-explorer pre { background: #fafafa; border: 1px solid #ddd; padding: .4em 0; overflow-x: auto; margin: 0;
      font-size: 12.5px; line-height: 1.45; }
.s2s-ad-explorer .line { display: block; white-space: pre; padding-right: 1em; cursor: pointer; }
.s2s-ad-explorer .line:hover { background: #eef3fb; }
.s2s-ad-explorer .ln { display: inline-block; width: 3.2em; color: #999; text-align: right;
      padding-right: .6em; }
.s2s-ad-explorer .from, .s2s-ad-explorer .to { display: inline-block; width: 2.6em; color: #3867b5;
      text-decoration: none; }
.s2s-ad-explorer .mark { display: inline-block; width: 3.4em; font-size: 10px; text-transform: uppercase; }
.s2s-ad-explorer .push { background: #eaf7ea; } .s2s-ad-explorer .push .mark { color: #207a20; }
.s2s-ad-explorer .pop { background: #fbeeee; } .s2s-ad-explorer .pop .mark { color: #a02828; }
.s2s-ad-explorer .helper { background: #f3eefb; } .s2s-ad-explorer .helper .mark { color: #6a3fb0; }
.s2s-ad-explorer .line.hl, .s2s-ad-explorer .node.hl text { background: #ffe48a; font-weight: bold; }
.s2s-ad-explorer .line.hl { outline: 1px solid #d9a400; }
.s2s-ad-explorer .gap { display: block; color: #aaa; padding-left: 3.6em; }
.s2s-ad-explorer svg.flow { border: 1px solid #ddd; background: #fff; }
.s2s-ad-explorer svg .edge { fill: none; stroke: #9aa3ad; stroke-width: 1; }
.s2s-ad-explorer svg .adjoint { fill: none; stroke: #c0392b; stroke-width: 1.2; stroke-dasharray: 4 3; }
.s2s-ad-explorer svg .node circle { fill: #9aa3ad; } .s2s-ad-explorer svg .node.active circle { fill: #c0392b; }
.s2s-ad-explorer svg .node text { font: 12px monospace; cursor: pointer; }
.s2s-ad-explorer svg .node .within { fill: #999; font-size: 10px; }
.s2s-ad-explorer svg .node.hl circle { r: 6; fill: #d9a400; }
.s2s-ad-explorer .legend span { display: inline-block; padding: 0 .5em; margin-right: .5em; }
"""

_SCRIPT = """
(function () {
  // (in a notebook several pages may share a document: each script looks in its own page only)
  var root = document.currentScript ? document.currentScript.parentElement : document.body;
  function byId(id) { return id ? root.querySelector('[id="' + id + '"]') : null; }
  function clear() {
    root.querySelectorAll('.hl').forEach(function (e) { e.classList.remove('hl'); });
  }
  function show(element) {
    if (element && element.scrollIntoView) { element.scrollIntoView({block: 'nearest'}); }
  }
  function select(id) {
    var element = byId(id);
    if (!element) { return; }
    clear();
    element.classList.add('hl');
    if (element.dataset.generated !== undefined) {  // a user's line: every generated line made from it
      var made = element.dataset.generated ? element.dataset.generated.split(' ') : [];
      made.forEach(function (g) { var e = byId(g); if (e) { e.classList.add('hl'); } });
      show(byId(made[0]));
    } else if (element.dataset.user) {  // a generated line or a value: the user's line it comes from
      var user = byId(element.dataset.user);
      if (user) { user.classList.add('hl'); show(user); }
    }
    root.dataset.selected = id;
  }
  root.addEventListener('click', function (event) {
    var element = event.target.closest('.line[id], .node[id]');
    if (!element) { return; }
    var link = event.target.closest('a[href^="#"]');
    var id = link ? link.getAttribute('href').slice(1) : element.id;
    event.preventDefault();
    select(id);
    if (history.replaceState) { history.replaceState(null, '', '#' + id); }
  });
  if (location.hash.length > 1) { select(location.hash.slice(1)); }
  window.s2sAdSelect = select;
})();
"""

_PAGE = """<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>{title} · s2s_ad derivative explorer</title>
<style>{style}</style>
</head>
<body>
<div class="s2s-ad-explorer">
<h1>{title}</h1>
<p class="note">{note}</p>
<p class="note legend">Click a generated line for the line of yours it comes from, or one of your lines for the
code made from it. Tape: <span class="push">push</span><span class="pop">pop</span><span class="helper">helper
(the tape through a helper's adjoint)</span></p>
<div class="columns">
<div><h2>Your code</h2>
{left}
</div>
<div><h2>Generated code</h2>
{right}
</div>
</div>
<h2>Data-flow graph</h2>
{graph}
<script>{script}</script>
</div>
</body>
</html>
"""
