"""Stage 1: a Python function → its gast tree and what its free names mean.

Input: a plain Python function object.  Output: a ``ParsedFunction`` with
the ``gast.FunctionDef`` (decorators dropped, line numbers made absolute in
the user's file), a resolver for the free names (globals, closure cells,
builtins), and the parameters.  Before returning, everyday statements are
rewritten into the subset (``sugar.py``: annotated assignments, lambdas),
and the whole body is checked against the subset, so that refusals come
early with file, line and column.

What is parsed is what runs: a function a decorator wrapped is read as its
wrapper (or, for a pass-through wrapper or ``functools.cache``, as the
function it calls), and the text read from the file must compile to the
code Python runs (a file edited after import is refused: source.py).  The
resolver records what every free name, attribute and rule meant, and the code
of each function read, in a ``Snapshot`` (snapshot.py), for the caches.  The
subset is subset.py's.
"""
from __future__ import annotations

import ast
import builtins
import functools
import inspect
import linecache
import textwrap
import types
import weakref
from dataclasses import dataclass, field
from typing import Any, Callable, Optional, cast

import gast

from ..core.errors import TransformError
from . import sugar
from .chains import flatten_long_chains
from ..core.nodes import all_nodes
from .snapshot import _ABSENT, Snapshot
from .source import _check_source_runs, _compiles_to, _def_compiled_alone, _read_source, _source_changed, _source_lines
from .list_sharing import check_list_sharing
from .argument_updates import ParameterUpdate, updated_in
from .subset import _check_params, always_returns, check_subset

# (tests/frontend/test_source_reading.py reads _source_lines from here)
__all__ = ["ParsedFunction", "Resolver", "_source_lines", "is_generated", "parse_function", "transparent"]


@dataclass
class Resolver:
    """Finds what a free name of the user's function means, as CPython would,
    and records each answer in ``snapshot``."""

    globals: dict[str, Any]
    closure: dict[str, Any]  # name -> cell
    snapshot: Snapshot = field(default_factory=Snapshot)
    owner: Optional[types.FunctionType] = None  # the function whose closure ``closure`` is
    # False for code s2s_ad generated: its namespace is its own and never rebound, and holds the
    # function itself, which a snapshot in a cache keyed weakly on that function must not hold.
    record: bool = True

    def lookup(self, name: str) -> tuple[bool, Any]:
        cell = self.closure.get(name)
        if cell is not None:
            try:
                value = cell.cell_contents
            except ValueError:  # a cell not filled yet
                return False, None
            if self.record and self.owner is not None:
                # (mypy reads a FunctionType field with a default as a method bound to the instance; an
                # instance's field is the function itself)
                self.snapshot.record_cell(cast(types.FunctionType, self.owner), name, value)
            return True, value
        if name in self.globals:
            value = self.globals[name]
            if self.record:
                self.snapshot.record_global(self.globals, name, value)
            return True, value
        if name in vars(builtins):
            if self.record:
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


def _plain_function(fn: Any) -> types.FunctionType:
    """``fn``, refused unless it is a plain Python function (one with source and ``__code__``)."""
    if not isinstance(fn, types.FunctionType):
        raise TransformError(
            f"{getattr(fn, '__qualname__', repr(fn))!r} ({type(fn).__name__})",
            "only plain Python functions defined with def can be transformed; "
            "for a builtin or C function, give it a rule with @s2s_ad.adjoint",
        )
    return fn


def is_generated(filename: str) -> bool:
    """True for code s2s_ad generated (compiled under ``<s2s_ad ...>``, see cache.py)."""
    return filename.startswith("<s2s_ad ")


def transparent(fn: Any) -> Any:
    """``fn`` without the wrappers that call it unchanged: ``functools.lru_cache`` and
    ``functools.cache``.  Such a wrapper returns what the function returns for the same
    arguments (a cache hit returns an earlier result of the same call), so for the pure
    functions s2s_ad differentiates it is the function itself."""
    while isinstance(fn, _LRU_CACHE_WRAPPER) and isinstance(getattr(fn, "__wrapped__", None), types.FunctionType):
        fn = fn.__wrapped__
    return fn


_LRU_CACHE_WRAPPER = type(functools.lru_cache(maxsize=None)(lambda: None))


def parse_function(fn: Callable) -> ParsedFunction:
    """Parse ``fn`` and check its body against the supported subset.

    What is parsed is what runs: for a function a decorator wrapped (with
    ``functools.wraps``), the wrapper, never the ``__wrapped__`` function;
    and the text read from the file must still compile to ``fn.__code__``.
    """
    # (checked before ``__wrapped__`` is followed: a cache around a ufunc has one, and no source)
    fn = _plain_function(transparent(fn))
    wrapped = getattr(fn, "__wrapped__", None)
    if wrapped is None or wrapped is fn:
        return _parse(fn)
    inner = _passed_through(fn)
    if inner is not None:  # the wrapper calls inner with what it is given, and returns what it returns
        parsed = parse_function(inner[1])
        parsed.resolver.snapshot.record_cell(fn, *inner)
        parsed.resolver.snapshot.record_code(fn)  # (the wrapper's code, replaced, may call something else)
        return parsed
    what = (f"{fn.__qualname__!r} as decorated (the call runs the decorator's wrapper "
            f"{getattr(fn.__code__, 'co_qualname', fn.__code__.co_name)}, not the function it wraps)")
    try:
        parsed = _parse(fn)
    except TransformError as exc:
        raise TransformError(what, f"the wrapper cannot be differentiated: {exc.construct}"
                             + (f" ({exc.hint})" if exc.hint else "") + f"; differentiate the undecorated "
                             f"function ({fn.__name__}.__wrapped__), or write the wrapper with plain named "
                             f"parameters", filename=exc.filename, line=exc.line, column=exc.column) from None
    signature = [p for p in inspect.signature(fn).parameters]  # what callers bind to: the wrapped one's
    if signature != parsed.params:
        raise TransformError(what, f"the wrapper's parameters ({', '.join(parsed.params)}) are not those of the "
                             f"function it wraps ({', '.join(signature)}); name them alike, or differentiate "
                             f"{fn.__name__}.__wrapped__", filename=parsed.filename, line=parsed.line)
    return parsed


def _passed_through(wrapper: types.FunctionType) -> Optional[tuple[str, types.FunctionType]]:
    """``(free name, function)`` if ``wrapper``'s body is only ``return function(*args, **kwargs)`` of its
    own ``*args`` and ``**kwargs`` (a docstring aside), ``function`` a plain function in its closure
    cell: a transparent decorator, whose call is the function's call.  Else None."""
    code = wrapper.__code__
    if not code.co_flags & inspect.CO_VARARGS or code.co_argcount or code.co_kwonlyargcount:
        return None
    try:
        source, filename, firstline = _read_source(wrapper, exact=True)
        node = _parse_at(source, firstline).body[0]
    except (TransformError, SyntaxError):
        return None
    body = node.body
    if body and isinstance(body[0], gast.Expr) and isinstance(body[0].value, gast.Constant):
        body = body[1:]  # the docstring
    args = node.args
    if len(body) != 1 or not isinstance(body[0], gast.Return) or not isinstance(body[0].value, gast.Call):
        return None
    call = body[0].value
    star = [a.value.id for a in call.args if isinstance(a, gast.Starred) and isinstance(a.value, gast.Name)]
    double = [k.value.id for k in call.keywords if k.arg is None and isinstance(k.value, gast.Name)]
    if (not isinstance(call.func, gast.Name) or star != [args.vararg.id] or len(call.args) != 1
            or double != ([args.kwarg.id] if args.kwarg else []) or len(call.keywords) != len(double)):
        return None
    cell = _closure_cells(wrapper).get(call.func.id)
    try:
        function = cell.cell_contents if cell is not None else None
    except ValueError:
        return None
    if not isinstance(function, types.FunctionType):
        return None
    _check_source_runs(wrapper, filename, firstline)
    return call.func.id, function


def _parse(fn: types.FunctionType) -> ParsedFunction:
    """``parse_function`` of ``fn`` itself."""
    if fn.__name__ == "<lambda>":
        return _parse_lambda(fn)
    parsed = _parse_tree(fn)
    _check_subset(parsed)
    return parsed


def parse_rewritten(fn: types.FunctionType, rewrite: Callable[[gast.FunctionDef], None]) -> ParsedFunction:
    """``fn`` parsed, its tree changed by ``rewrite`` (in place), then checked against the subset as a
    function to differentiate is: an ``__init__`` that computes, read as a function returning what it
    assigns (``user_classes.computed_layout``)."""
    parsed = _parse_tree(fn)
    rewrite(parsed.node)
    parsed.params = _check_params(parsed.node, parsed.filename)
    _check_subset(parsed)
    return parsed


def def_as_written(fn: types.FunctionType) -> gast.FunctionDef:
    """``fn``'s def as written, neither rewritten nor checked against the subset: for a scan of the names
    it reads (``object_calls.not_handed_on``), where a store the subset refuses in it is the lowering's
    to judge (a method changing its object, ``attribute_stores.PRIVATE_SELF``)."""
    return _parse_tree(fn).node


def updated_parameters(fn: Callable) -> tuple[ParameterUpdate, ...]:
    """The parameters of ``fn`` its body updates in place before rebinding them (``argument_updates``),
    each with the helper's file; () where its source cannot be read (its own lowering says why, where it
    is called).  Read from the source as parsed, not checked: a helper the subset refuses may still run,
    kept as a call.  Asked at every call site the lowering meets, so kept per code object (a function
    defined again has a new one)."""
    try:
        plain = _plain_function(transparent(fn))
        code = plain.__code__
    except Exception:
        return ()
    found = _UPDATED_PARAMETERS.get(code)
    if found is None:
        try:
            parsed = _parse_tree(plain)
            found = tuple(update._replace(filename=parsed.filename) for update in updated_in(parsed.node))
        except Exception:
            found = ()
        _UPDATED_PARAMETERS[code] = found
    return found


_UPDATED_PARAMETERS: "weakref.WeakKeyDictionary[types.CodeType, tuple[ParameterUpdate, ...]]" = \
    weakref.WeakKeyDictionary()


def source_tree(fn: Callable) -> gast.FunctionDef:
    """``fn``'s def as parsed, not checked against the subset (what a syntactic question about a
    function the lowering may not differentiate asks: ``argument_updates``)."""
    return _parse_tree(_plain_function(transparent(fn))).node


def _parse_tree(fn: types.FunctionType) -> ParsedFunction:
    """``fn``'s def parsed (its source still the code that runs), not yet checked against the subset."""
    source, filename, firstline = _read_source(fn)
    moved = None
    if not is_generated(filename) and not _compiles_to(fn.__code__, filename, fn.__globals__):
        moved = _def_compiled_alone(fn, filename)
        if moved is None:
            raise _source_changed(fn, filename, firstline)
        source, firstline = moved
    try:
        try:
            module = _parse_at(source, firstline)
        except SyntaxError:  # the end found by indentation may be inside a string or brackets: ask inspect
            if moved is not None:
                raise
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
    parsed = ParsedFunction(fn, node, filename, Resolver(fn.__globals__, _closure_cells(fn), owner=fn,
                                                                   record=not is_generated(filename)), params)
    if parsed.resolver.record:
        parsed.resolver.snapshot.record_code(fn)
    return parsed


def _parse_lambda(fn: types.FunctionType) -> ParsedFunction:
    """``grad(lambda w: loss(w, X))``: the one lambda on its line with ``fn``'s parameters, read as
    ``def lambda_(w): return loss(w, X)``; refused where the line holds several such lambdas."""
    source, filename, firstline = _read_source(fn, exact=True)
    code = fn.__code__
    try:
        module = _parse_at(textwrap.dedent(source), firstline)
    except SyntaxError:
        module = None
    params = list(code.co_varnames[:code.co_argcount + code.co_kwonlyargcount])
    found = _lambdas_at(module, code.co_firstlineno, params)
    if not found and linecache.getlines(filename):  # a line not a statement of its own: "l1": lambda r: ...,
        try:
            found = _lambdas_at(_parse_at("".join(linecache.getlines(filename)), 1), code.co_firstlineno, params)
        except SyntaxError:
            found = []
    if len(found) != 1:
        raise TransformError("a lambda", "the line holding it could not be read on its own, or holds several "
                             "lambdas with the same parameters; define the function with def",
                             filename=filename, line=code.co_firstlineno)
    lam = found[0]
    ret = gast.Return(value=lam.body)
    gast.copy_location(ret, lam.body)
    node = gast.FunctionDef(name="lambda_", args=lam.args, body=[ret], decorator_list=[], returns=None,
                            type_comment=None, **({"type_params": []} if "type_params" in gast.FunctionDef._fields
                                                  else {}))
    gast.copy_location(node, lam)
    _check_source_runs(fn, filename, code.co_firstlineno)
    parsed = ParsedFunction(fn, node, filename, Resolver(fn.__globals__, _closure_cells(fn), record=True),
                            _check_params(node, filename))
    parsed.resolver.snapshot.record_code(fn)
    _check_subset(parsed)
    return parsed


def _lambdas_at(module: Optional[gast.Module], line: int, params: list[str]) -> list[gast.Lambda]:
    """The lambdas of ``module`` written on ``line`` with the parameters ``params``."""
    return [] if module is None else [
        n for n in gast.walk(module) if isinstance(n, gast.Lambda) and n.lineno == line
        and [a.id for a in n.args.posonlyargs + n.args.args + n.args.kwonlyargs] == params]


def _parse_at(source: str, firstline: int) -> gast.Module:
    """Parse with every node on its line in the user's file (blank lines first: cheaper than renumbering
    the tree).  A long if/elif chain is made shallow first (``chains.py``): gast's conversion, and
    every later walk of the tree, recurse as deep as the tree is."""
    module = ast.parse("\n" * (firstline - 1) + source)
    flatten_long_chains(module)
    return gast.ast_to_gast(module)


def _check_subset(parsed: ParsedFunction) -> None:
    """Every node of the tree in ``parsed.nodes`` (the everyday statements rewritten into the subset
    first: sugar.py), and the tree checked against the subset (subset.py)."""
    parsed.nodes = all_nodes(parsed.node)
    if any(sugar.rewritten(node) for node in parsed.nodes):
        sugar.rewrite(parsed.node)  # (it may add statements: a lambda called where made becomes a def)
        parsed.nodes = all_nodes(parsed.node)
    body = parsed.node.body
    if body and isinstance(body[0], gast.Expr) and isinstance(body[0].value, gast.Constant):
        body = body[1:]  # the docstring
    if body and not always_returns(body) and updated_in(parsed.node):
        # a helper that only changes what it is given (def normalise(v): v /= np.sum(v)) returns None,
        # as Python's does: its call is lowered where it is made (lower.updates_its_arguments)
        returned = gast.Return(value=gast.Constant(value=None, kind=None))
        parsed.node.body.append(gast.copy_location(returned, parsed.node.body[-1]))
        parsed.nodes = all_nodes(parsed.node)
        body = body + [returned]
    check_subset(parsed.node, parsed.nodes, body, parsed.error)
    check_list_sharing(parsed.node, body, parsed.error)
