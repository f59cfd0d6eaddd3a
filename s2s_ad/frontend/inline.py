"""Definitions as source: the top-level statements that bind a set of globals in a module of its own.

Input: ``Piece`` records, each a text of top-level statements (generated code, a wrapper) with the
globals it reads (name -> object).  Output: ``assemble(pieces)``, one module text defining every
object the pieces read, directly or through what those objects read in turn:

* a module (NumPy, ``math``) or an object a standard or installed module defines (``typing.Any``,
  ``np.ndarray``, ``operator.getitem``): an ``import`` statement;
* a function or class of s2s_ad (``runtime.unbroadcast``, a template's helper) or of the user's
  code: its source, taken with ``inspect.getsource`` (decorators that handed back the function
  itself left out), and what it reads followed in turn;
* a constant of s2s_ad's modules (``FANCY_STORES_COPY_OVERLAP``): its assignment statement, so it is
  computed again where the module runs; any other number, string, tuple or NumPy array: a literal.

Each object gets one global name; where two want the same name, the later is renamed in the texts
that read it (by token, never inside a local scope that binds the same name: ``symtable`` says).
What cannot be written this way (a helper without source, one that reads an s2s_ad module itself,
an object with no literal) raises ``ExportError`` naming it, before anything is written.
The statements come out in an order where each reads only what is defined above it.
"""
from __future__ import annotations

import __future__
import ast
import builtins
import importlib
import inspect
import io
import keyword
import math
import os
import re
import symtable
import sys
import sysconfig
import textwrap
import tokenize
import types
from dataclasses import dataclass, field
from typing import Any, Hashable, Iterator, Optional, Union

import numpy as np

from ..core.errors import ExportError
from ..core.identity import Identity

_OWN_PACKAGES = ("s2s_ad",)  # whose code is inlined, never imported (the templates are s2s_ad.templates)


@dataclass
class Piece:
    """Top-level statements: ``text``, which binds ``defines`` (name -> object) and reads ``reads``
    (name -> object) as globals; ``title``, a comment line above it (or ""); ``module``, the module
    whose globals the text came from (an inlined definition's), where its constants are looked up.
    ``key`` names the piece; each object defined or read is known by a key too (``_object_key``)."""

    text: str
    defines: dict[str, Any]
    reads: dict[str, Any]
    title: str = ""
    key: Hashable = None
    module: Optional[types.ModuleType] = None
    imports: Optional[tuple[str, Optional[str]]] = None  # an import's (module, name taken from it or None)
    define_keys: dict[str, Hashable] = field(default_factory=dict)  # (set by the collector)
    read_keys: dict[str, Hashable] = field(default_factory=dict)
    renames: dict[str, str] = field(default_factory=dict)


def assemble(roots: list[Piece]) -> str:
    """The statements of ``roots`` and of every definition they need, in dependency order, with
    the names renamed where two objects wanted one (see the module docstring)."""
    collector = _Collector()
    for piece in roots:  # every root's definitions known before any is read (they may read each other)
        collector.register(piece)
    for piece in roots:
        collector.resolve(piece)
    ordered = collector.ordered(roots)
    _allocate(roots + [piece for piece in ordered if piece not in roots])
    imports = [piece for piece in ordered if piece.imports is not None]  # (they read nothing: first)
    blocks = [_import_block([_import_text(piece) for piece in imports])]
    for piece in ordered:
        if piece in imports:
            continue
        text = _renamed(piece.text, piece.renames) if piece.renames else piece.text
        blocks.append((f"# {piece.title}\n" if piece.title else "") + text.rstrip("\n") + "\n")
    # annotations are never evaluated: a helper's may name what only a type checker reads
    return "from __future__ import annotations\n\n" + "\n\n".join(blocks)


def _import_text(piece: Piece) -> str:
    """An import piece's statement, binding the name given to it."""
    assert piece.imports is not None
    (wished,) = piece.defines
    name = piece.renames.get(wished, wished)
    module, taken = piece.imports
    if taken is None:
        return f"import {module}" if name == module else f"import {module} as {name}"
    return f"from {module} import {taken}" if name == taken else f"from {module} import {taken} as {name}"


def _import_block(lines: list[str]) -> str:
    """One-line imports as one block: the standard library's first, then the others (NumPy); the
    names taken from one module by ``from`` joined in one statement."""
    plain: list[str] = []
    taken: dict[str, list[str]] = {}
    for line in lines:
        words = line.strip().split(" ", 3)
        if words[0] == "from":
            taken.setdefault(words[1], []).append(words[3])
        else:
            plain.append(line.strip())
    statements = plain + [f"from {module} import {', '.join(sorted(names))}" for module, names in taken.items()]
    return "\n".join(sorted(statements, key=_import_order)) + "\n"


def _import_order(statement: str) -> tuple:
    """The standard library's modules first, then the others (NumPy), each by module name."""
    top = statement.split()[1].split(".")[0]
    return (top not in _STANDARD and top not in getattr(sys, "stdlib_module_names", ()), statement.split()[1], statement)


_STANDARD = ("math", "numbers", "operator", "typing", "random", "functools", "itertools")  # (before 3.10)


def _object_key(name: str, obj: Any, reader: Optional[Piece]) -> Hashable:
    """What identifies the definition of ``obj``, read as ``name`` by ``reader``: the object itself for
    a module, function or class; for a constant of one of s2s_ad's modules, its name there (its
    assignment runs again where the export runs, and may give another value than here); else the
    value (written as a literal)."""
    if isinstance(obj, (types.ModuleType, types.FunctionType, type, types.BuiltinFunctionType)):
        return ("object", Identity(obj))
    module = reader.module if reader is not None else None
    if module is not None and module.__name__.split(".")[0] in _OWN_PACKAGES and vars(module).get(name) is obj \
            and _import_of(name, obj) is None:  # (typing.Optional is imported, whoever reads it)
        return ("assignment", module.__name__, name)
    return ("object", Identity(obj))


class _Collector:
    """The pieces that define what the roots read, found transitively (each definition once)."""

    def __init__(self) -> None:
        self.pieces: dict[Hashable, Piece] = {}
        self.defined_by: dict[Hashable, Hashable] = {}  # an object's key -> the key of the piece defining it

    def register(self, piece: Piece) -> None:
        """Know what ``piece`` defines."""
        if piece.key is None:
            piece.key = ("piece", len(self.pieces))
        self.pieces[piece.key] = piece
        for name, obj in piece.defines.items():
            key = piece.define_keys.setdefault(name, _object_key(name, obj, None))
            self.defined_by[key] = piece.key

    def resolve(self, piece: Piece) -> None:
        """Find a definition of everything ``piece`` reads."""
        for name, obj in piece.reads.items():
            piece.read_keys[name] = self.need(name, obj, piece)

    def need(self, name: str, obj: Any, reader: Piece) -> Hashable:
        """The key of ``obj`` (read as ``name`` by ``reader``), a piece defining it made where none is."""
        key = _object_key(name, obj, reader)
        if key not in self.defined_by:
            found = _definition(name, obj, reader)
            found.define_keys[name] = key
            self.register(found)
            self.resolve(found)
        return key

    def ordered(self, roots: list[Piece]) -> list[Piece]:
        """Every piece, each after the pieces defining what it reads (depth first, the roots last)."""
        done: dict[Hashable, Piece] = {}
        visiting: set[Hashable] = set()

        def visit(piece: Piece) -> None:
            if piece.key in done or piece.key in visiting:  # (a cycle: functions reading each other)
                return
            visiting.add(piece.key)
            for key in piece.read_keys.values():
                visit(self.pieces[self.defined_by[key]])
            visiting.discard(piece.key)
            done[piece.key] = piece

        for root in roots:
            visit(root)
        return list(done.values())


# -- one definition ---------------------------------------------------------------------------


def _definition(name: str, obj: Any, reader: Piece) -> Piece:
    """The piece defining ``obj`` (read as ``name``): an import, a source, an assignment or a literal."""
    if isinstance(obj, types.ModuleType):
        return _module_import(name, obj)
    module_name = getattr(obj, "__module__", None) if isinstance(obj, (type, types.FunctionType,
                                                                        types.BuiltinFunctionType)) else None
    if isinstance(obj, (types.FunctionType, type)) and module_name and _inlined(module_name):
        return _source_piece(name, obj)
    importable = _import_of(name, obj)
    if importable is not None:
        return importable
    own_module = reader.module
    if own_module is not None and own_module.__name__.split(".")[0] in _OWN_PACKAGES:
        assigned = _assignment(own_module, name, obj)
        if assigned is not None:
            return assigned
    literal = literal_text(obj)
    if literal is None:
        raise ExportError(f"{name} ({_described(obj)}) cannot be written as source: it has no source of its "
                          f"own, no import and no literal form")
    return Piece(f"{name} = {literal}", {name: obj}, _literal_reads(obj),
                 f"{name}: a value the code reads, as it was when the module was written")


def _described(obj: Any) -> str:
    owner = getattr(obj, "__self__", None)
    if owner is not None and not isinstance(owner, types.ModuleType):
        return f"the method {getattr(obj, '__name__', '?')} of a {type(owner).__module__}.{type(owner).__name__} object"
    module = getattr(obj, "__module__", None)
    return f"a {type(obj).__name__}" + (f" of {module}" if module else "")


def _inlined(module_name: str) -> bool:
    """Whether code of this module is written out (s2s_ad's, the user's), not imported (the
    standard library's, NumPy's, an installed package's)."""
    if module_name.split(".")[0] in _OWN_PACKAGES:
        return True
    return not _standard_or_installed(module_name)


def _standard_or_installed(module_name: str) -> bool:
    top = module_name.split(".")[0]
    if top in getattr(sys, "stdlib_module_names", ()) or top in sys.builtin_module_names:
        return True
    module = sys.modules.get(top)
    path = getattr(module, "__file__", None)
    if module is None or path is None:
        return module is not None  # a module without a file: built in
    path = os.path.realpath(path)
    paths = sysconfig.get_paths()
    if path.startswith(os.path.realpath(paths["stdlib"]) + os.sep) and "-packages" not in path:
        return True
    return any(part in ("site-packages", "dist-packages") for part in path.split(os.sep))


def _module_import(name: str, module: types.ModuleType) -> Piece:
    full = module.__name__
    if full.split(".")[0] in _OWN_PACKAGES:
        raise ExportError(f"the module {full} (read as {name}) is s2s_ad's own: the exported code would need s2s_ad")
    if not _standard_or_installed(full):
        raise ExportError(f"the module {full} (read as {name}) is neither the standard library's nor installed")
    text = f"import {full}" if name == full else f"import {full} as {name}"
    return Piece(text, {name: module}, {}, imports=(full, None))


def _import_of(name: str, obj: Any) -> Optional[Piece]:
    """``from module import qualname as name`` where a standard or installed module names ``obj``."""
    module_name = getattr(obj, "__module__", None)
    qualname = getattr(obj, "__qualname__", None) or getattr(obj, "__name__", None)
    if not isinstance(module_name, str) or not isinstance(qualname, str) or _inlined(module_name):
        return None
    candidates = [module_name.lstrip("_"), module_name] if module_name.startswith("_") else [module_name]
    for candidate in candidates:
        try:
            found: Any = importlib.import_module(candidate)
        except ImportError:
            continue
        # a top-level name of the module; a bound method its module names too (np.random.normal)
        short = qualname if "." not in qualname else getattr(obj, "__name__", "")
        if short and vars(found).get(short) is obj:
            alias = "" if name == short else f" as {name}"
            return Piece(f"from {candidate} import {short}{alias}", {name: obj}, {}, imports=(candidate, short))
    return None


def _source_piece(name: str, obj: Union[types.FunctionType, type]) -> Piece:
    """A function's or class's own source, and the globals it reads."""
    label = f"{obj.__module__}.{obj.__qualname__}"
    if obj.__qualname__ != obj.__name__ or "<" in obj.__name__:
        raise ExportError(f"{label} is not defined at the top of its module (a lambda, a nested function or a "
                          f"method), so its source cannot be written on its own")
    module = sys.modules.get(obj.__module__)
    if module is None or getattr(module, obj.__name__, None) is not obj:
        raise ExportError(f"{label} is not what its module names {obj.__name__}: its source is not its definition")
    try:
        text = textwrap.dedent(inspect.getsource(obj))
    except (OSError, TypeError) as exc:
        raise ExportError(f"the source of {label} cannot be read ({exc})") from None
    text = _without_decorators(text, label)
    if isinstance(obj, types.FunctionType) and not _compiles_to(text, obj):
        raise ExportError(f"the source of {label} in {inspect.getsourcefile(obj)} is not the code that runs (the "
                          "file changed after it was imported): export again in a new process")
    reads = {}
    for read in sorted(global_reads(text) - {obj.__name__}):
        if read in vars(module):
            reads[read] = vars(module)[read]
        elif not hasattr(builtins, read):
            raise ExportError(f"{label} reads {read}, which its module does not define")
    for read, value in reads.items():
        if isinstance(value, types.ModuleType) and value.__name__.split(".")[0] in _OWN_PACKAGES:
            raise ExportError(f"{label} needs s2s_ad: it reads the module {value.__name__} (as {read})")
    for read in sorted(_annotation_names(text) - set(reads)):  # imported where they can be (typing.Any)
        value = vars(module).get(read)
        if value is not None and _import_of(read, value) is not None:
            reads[read] = value
    where = inspect.getsourcefile(obj) or "?"
    title = f"{label}, from {_short(where)}"
    return Piece(text, {obj.__name__: obj}, reads, title, module=module)


def _compiles_to(text: str, function: types.FunctionType) -> bool:
    """Whether ``text`` (a ``def``) compiles to ``function``'s code, as far as the compiler's version
    leaves it alone: the names it reads, its locals, its constants (its docstring among them), and
    those of the functions nested in it.  (The file read may have changed since the function was
    compiled from it.)"""
    flags = function.__code__.co_flags & __future__.annotations.compiler_flag
    try:
        module = compile(text, "<export>", "exec", flags=flags, dont_inherit=True)
    except SyntaxError:
        return False
    made = [c for c in module.co_consts if isinstance(c, types.CodeType) and c.co_name == function.__name__]
    return len(made) == 1 and _same_code(made[0], function.__code__)


def _same_code(a: types.CodeType, b: types.CodeType) -> bool:
    def parts(code: types.CodeType) -> tuple:
        constants = tuple(c for c in code.co_consts if not isinstance(c, types.CodeType))
        return (code.co_names, code.co_varnames, code.co_argcount, code.co_kwonlyargcount, repr(constants))

    inner_a = [c for c in a.co_consts if isinstance(c, types.CodeType)]
    inner_b = [c for c in b.co_consts if isinstance(c, types.CodeType)]
    return (parts(a) == parts(b) and len(inner_a) == len(inner_b)
            and all(_same_code(x, y) for x, y in zip(inner_a, inner_b)))


def _short(path: str) -> str:
    """A path as the header shows it: from the package's folder down for s2s_ad's files."""
    parts = os.path.normpath(path).split(os.sep)
    for top in ("s2s_ad", "templates"):
        if top in parts:
            return "/".join(parts[parts.index(top):])
    return os.path.basename(path)


def _without_decorators(text: str, label: str) -> str:
    """``text`` without its decorator lines: the object its module names is the function itself
    (checked by the caller), so a decorator only registered it (a rule's helper)."""
    tree = ast.parse(text)
    node = tree.body[0]
    if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        raise ExportError(f"the source of {label} is not a definition")
    if not node.decorator_list:
        return text
    lines = text.splitlines(True)
    first = node.lineno - 1  # (the def line; decorators lie above it)
    return "".join(lines[first:])


def _assignment(module: types.ModuleType, name: str, obj: Any) -> Optional[Piece]:
    """The top-level assignment of ``name`` in one of s2s_ad's modules, run again where the export runs."""
    try:
        source = inspect.getsource(module)
    except (OSError, TypeError):
        return None
    found = None
    for node in ast.parse(source).body:  # (the last assignment at the top: what the name holds)
        targets = node.targets if isinstance(node, ast.Assign) else [node.target] if isinstance(node, ast.AnnAssign) else []
        if any(isinstance(t, ast.Name) and t.id == name for t in targets) and getattr(node, "value", None) is not None:
            found = node
    if found is None:
        return None
    text = ast.get_source_segment(source, found) or ""
    reads = {read: vars(module)[read] for read in sorted(global_reads(text) - {name}) if read in vars(module)}
    return Piece(text, {name: obj}, reads, f"{module.__name__}.{name}", module=module)


# -- literals ---------------------------------------------------------------------------------


def literal_text(value: Any) -> Optional[str]:
    """Source text that makes ``value`` again (NumPy as ``np``), or None where there is none."""
    if value is None or isinstance(value, (bool, int, str, bytes)):
        return repr(value)
    if value is Ellipsis:
        return "Ellipsis"
    if type(value) is slice:
        parts = [literal_text(part) for part in (value.start, value.stop, value.step)]
        return None if None in parts else f"slice({', '.join(p for p in parts if p is not None)})"
    if isinstance(value, float):
        return repr(value) if math.isfinite(value) else f"float({str(value)!r})"
    if isinstance(value, complex):
        return f"complex({literal_text(value.real)}, {literal_text(value.imag)})"
    if type(value) in (tuple, list):
        items = [literal_text(v) for v in value]
        if any(t is None for t in items):
            return None
        inner = ", ".join(t for t in items if t is not None)
        return f"({inner}{',' if len(items) == 1 else ''})" if isinstance(value, tuple) else f"[{inner}]"
    if type(value) is dict:
        pairs = [(literal_text(k), literal_text(v)) for k, v in value.items()]
        if any(k is None or v is None for k, v in pairs):
            return None
        return "{" + ", ".join(f"{k}: {v}" for k, v in pairs) + "}"
    if isinstance(value, np.ndarray) and value.dtype.kind in "biufc":
        array = f"np.array({_numbers(value.tolist())}, dtype=np.dtype({value.dtype.str!r}))"
        return array if value.size else f"{array}.reshape({value.shape!r})"
    if isinstance(value, np.generic) and np.dtype(type(value)).kind in "biufc":
        return f"np.dtype({value.dtype.str!r}).type({literal_text(value.item())})"
    return None


def _numbers(value: Any) -> str:
    """A nested list of numbers as source (non-finite floats spelled as ``float("inf")``)."""
    if isinstance(value, list):
        return "[" + ", ".join(_numbers(v) for v in value) + "]"
    return literal_text(value) or repr(value)


def _literal_reads(value: Any) -> dict[str, Any]:
    """What ``literal_text(value)`` reads: NumPy for arrays and NumPy numbers."""
    return {"np": np} if "np." in (literal_text(value) or "") else {}


# -- names ------------------------------------------------------------------------------------


def global_reads(text: str) -> set[str]:
    """The global names a module text reads (in any of its scopes), annotations left out: an exported
    module starts with ``from __future__ import annotations``, so they are never evaluated."""
    stripped = ast.unparse(_Unannotated().visit(ast.parse(text)))
    table = symtable.symtable(stripped, "<export>", "exec")
    found = {s.get_name() for s in table.get_symbols()
             if s.is_referenced() and not (s.is_assigned() or s.is_imported() or s.is_namespace())}
    for scope in _scopes(table):
        found |= {s.get_name() for s in scope.get_symbols() if s.is_global() and s.is_referenced()}
    return found


def _scopes(table: symtable.SymbolTable) -> Iterator[symtable.SymbolTable]:
    for child in table.get_children():
        yield child
        yield from _scopes(child)


def _locals(text: str) -> set[str]:
    """The names some scope of ``text`` other than the top binds as its own locals."""
    table = symtable.symtable(ast.unparse(_Unannotated().visit(ast.parse(text))), "<export>", "exec")
    return {s.get_name() for scope in _scopes(table) for s in scope.get_symbols() if s.is_local()}


def _annotation_names(text: str) -> set[str]:
    """The names the annotations of ``text`` read."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(text)):
        annotations: list[Optional[ast.expr]] = []
        if isinstance(node, ast.arg):
            annotations.append(node.annotation)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            annotations.append(node.returns)
        elif isinstance(node, ast.AnnAssign):
            annotations.append(node.annotation)
        for annotation in annotations:
            if annotation is not None:
                found |= {n.id for n in ast.walk(annotation) if isinstance(n, ast.Name)}
    return found


class _Unannotated(ast.NodeTransformer):
    """Annotations removed (an annotated assignment with a value kept as a plain one)."""

    def visit_arg(self, node: ast.arg) -> ast.arg:
        node.annotation = None
        return node

    def visit_FunctionDef(self, node: ast.FunctionDef) -> ast.FunctionDef:
        node.returns = None
        self.generic_visit(node)
        return node

    def visit_AsyncFunctionDef(self, node: ast.AsyncFunctionDef) -> ast.AsyncFunctionDef:
        node.returns = None
        self.generic_visit(node)
        return node

    def visit_AnnAssign(self, node: ast.AnnAssign) -> Any:
        if node.value is None:
            return ast.copy_location(ast.Pass(), node)
        assign = ast.Assign(targets=[node.target], value=node.value)
        return ast.copy_location(self.visit(assign), node)


def _allocate(pieces: list[Piece]) -> None:
    """One global name per definition, the first pieces' wishes first, never a name that a piece
    reading it has as a local; each piece's ``renames`` set where a name it wrote differs from the
    one given."""
    local_names = {piece.key: _locals(piece.text) for piece in pieces}
    forbidden: dict[Hashable, set[str]] = {}
    for piece in pieces:
        for key in {**piece.define_keys, **piece.read_keys}.values():
            forbidden.setdefault(key, set()).update(local_names[piece.key])
    words = {word for piece in pieces for word in _identifiers(piece.text)}
    taken: set[str] = set()
    given: dict[Hashable, str] = {}
    for piece in pieces:
        for name, key in piece.define_keys.items():
            if key in given:
                continue
            new, n = name, 1
            while new in taken or new in forbidden[key] or (new != name and new in words) or keyword.iskeyword(new):
                n += 1
                new = f"{name}_{n}"
            taken.add(new)
            given[key] = new
    for piece in pieces:
        for name, key in {**piece.define_keys, **piece.read_keys}.items():
            if given[key] != name:
                if name in local_names[piece.key]:  # (a token rename would change the local too)
                    raise ExportError(f"the global {name} would be renamed {given[key]} in code that also has "
                                      f"a local {name}: two definitions need the same name")
                piece.renames[name] = given[key]


def _identifiers(text: str) -> set[str]:
    return {tok.string for tok in _tokens(text) if tok.type == tokenize.NAME}


def _tokens(text: str) -> list[tokenize.TokenInfo]:
    return list(tokenize.generate_tokens(io.StringIO(text).readline))


def _renamed(text: str, renames: dict[str, str]) -> str:
    """``text`` with each global name of ``renames`` replaced: every name token that is not an
    attribute (after ``.``) nor a keyword argument (``f(axis=...)``)."""
    tokens = [t for t in _tokens(text) if t.type not in (tokenize.NL, tokenize.COMMENT)]
    for tok in tokens:  # before Python 3.12 an f-string is one token: a name inside it cannot be renamed
        if tok.type == tokenize.STRING and "f" in tok.string.split(tok.string[-1])[0].lower() and any(
                re.search(rf"\b{re.escape(name)}\b", tok.string) for name in renames):
            raise ExportError(f"a global to be renamed ({', '.join(renames)}) may be read inside an f-string "
                              f"({tok.string[:40]}...), which this Python cannot rename")
    edits: list[tuple[int, int, int, str]] = []
    depth = 0
    for i, tok in enumerate(tokens):
        if tok.type == tokenize.OP and tok.string in "([{":
            depth += 1
        elif tok.type == tokenize.OP and tok.string in ")]}":
            depth -= 1
        if tok.type != tokenize.NAME or tok.string not in renames:
            continue
        after_dot = i > 0 and tokens[i - 1].string == "."
        keyword_argument = depth > 0 and i + 1 < len(tokens) and tokens[i + 1].string == "="
        if not after_dot and not keyword_argument:
            edits.append((tok.start[0], tok.start[1], tok.end[1], renames[tok.string]))
    lines = text.splitlines(True)
    for row, start, end, new in sorted(edits, reverse=True):
        line = lines[row - 1]
        lines[row - 1] = line[:start] + new + line[end:]
    return "".join(lines)
