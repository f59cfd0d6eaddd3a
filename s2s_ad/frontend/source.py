"""A function's source text, read as the code that runs.

Input: a plain Python function.  Output: its source text (dedented), file
name and first line (``_read_source``; the end of a plain def found by its
indentation where that is enough, by inspect where not), or a
``TransformError`` where the text cannot be read or does not compile to the
function's ``__code__`` (a file edited after import: ``_check_source_runs``).
``_compiles_to`` and ``_def_compiled_alone`` compare the code compiled from the
file's current text, whole as at import or statement by statement as IPython
runs a cell, with the code that runs.  ``readable_source`` says whether a
function's source can be read so (for the callers deciding whether to inline
one).  Parsing the text is parse.py's.
"""
from __future__ import annotations

import ast
import inspect
import linecache
import sys
import textwrap
import threading
import types
from typing import Any, Optional

from ..core.errors import TransformError
from .snapshot import _same


# Where a function whose source cannot be read may be defined instead (IPython runs a cell under a
# cell magic, %%time, through exec of text it keeps nowhere).
_WHERE_TO_DEFINE = ("define it in a .py file or a notebook cell of its own (not one run by a cell magic such as "
                    "%%time), or give it a rule with @s2s_ad.adjoint")


def _read_source(fn: types.FunctionType, exact: bool = False) -> tuple[str, str, int]:
    """``fn``'s source text (dedented), file name and first line.  Unless ``exact``, the end of the
    function may be found by indentation alone (see ``_source_lines``)."""
    name = fn.__qualname__
    filename = fn.__code__.co_filename
    try:
        # fn.__code__, not fn: inspect would follow __wrapped__ to the function a decorator wrapped,
        # and the code that runs is the wrapper's.
        lines, firstline = _exact_source_lines(fn) if exact else _source_lines(fn)
    except (OSError, TypeError) as exc:
        raise TransformError(
            f"{name!r}", f"its source code cannot be read (it was typed into a bare REPL or made by exec); "
            f"{_WHERE_TO_DEFINE}",
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
    lines, start = _find_source(fn)
    end = _end_of_def(lines, start)
    if end is None:
        return inspect.getblock(lines[start:]), start + 1
    return lines[start:end], start + 1


def _exact_source_lines(fn: types.FunctionType) -> tuple[list[str], int]:
    """``inspect.getsourcelines(fn.__code__)``: the def's lines, its end found by tokenizing."""
    lines, start = _find_source(fn)
    return inspect.getblock(lines[start:]), start + 1


def _find_source(fn: types.FunctionType) -> tuple[list[str], int]:
    """``inspect.findsource(fn.__code__)`` (the lines of ``fn``'s file and the index of its def), not
    following ``__wrapped__``.  Given the code alone, inspect finds the module (whose loader may
    supply the lines) by scanning the file of every module loaded, tens of milliseconds once Numba
    is in; given the function, by its ``__module__``: asked so where that module's globals are the
    function's own, the same module the scan would find."""
    code = fn.__code__
    if code.co_filename.startswith("<s2s_ad "):
        # code s2s_ad generated (its text in linecache, its def on its first line): read as inspect
        # would, without the scan, which a Hessian of a deep chain of helpers asked thousands of times
        lines = linecache.getlines(code.co_filename)
        start = code.co_firstlineno - 1
        if 0 <= start < len(lines) and lines[start].lstrip().startswith("def "):
            return lines, start
    module = sys.modules.get(getattr(fn, "__module__", None) or "")
    if module is not None and getattr(module, "__dict__", None) is fn.__globals__:
        return inspect.findsource(fn)  # (a function: inspect reads its __code__, as below, with this module)
    return inspect.findsource(fn.__code__)


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


def readable_source(fn: types.FunctionType) -> bool:
    """Whether ``fn``'s source can be read as the code that runs: a file's text, or the text s2s_ad
    registered for generated code; not another program's text that ``linecache`` holds under the
    same pseudo-name (``<string>``: Python 3.13 keeps the ``python -c`` program there)."""
    try:
        inspect.getsource(fn)
    except (OSError, TypeError):
        return False
    filename = fn.__code__.co_filename
    if not (filename.startswith("<") and filename.endswith(">")):
        return True
    try:
        return _compiles_to(fn.__code__, filename, fn.__globals__)
    except SyntaxError:
        return False


def _check_source_runs(fn: types.FunctionType, filename: str, firstline: int) -> None:
    """Refuse if the text read for ``fn`` does not compile to the code that runs.

    The file may have been edited since its module was imported: Python
    runs the old code, inspect reads the new text.  The file's text, as
    inspect read it (``linecache``), is compiled whole, so that its imports,
    classes and closures shape the code as they did at import, and the
    code object of the def at ``fn``'s line is compared with ``fn.__code__``.
    """
    if not _compiles_to(fn.__code__, filename, fn.__globals__):
        raise _source_changed(fn, filename, firstline)


def _source_changed(fn: types.FunctionType, filename: str, firstline: int) -> TransformError:
    """The refusal of a function whose source, as read, does not compile to the code that runs."""
    if filename.startswith("<") and filename.endswith(">"):
        # no file: exec'd or typed-in code, whose pseudo-name (<string>, <stdin>) linecache may hold
        # other text for (Python 3.13 keeps the `python -c` program under <string>)
        return TransformError(
            f"{fn.__qualname__!r}", "its source code cannot be read (it was typed into a bare REPL or made "
            f"by exec); {_WHERE_TO_DEFINE}",
            filename=filename, line=firstline)
    return TransformError(
        f"{fn.__qualname__!r}", f"its source file changed after the function was defined: Python runs the "
        f"code it compiled then, and the text now at line {firstline} is different; reload the module "
        f"(importlib.reload) or restart Python, then take the gradient again", filename=filename, line=firstline)


def _def_compiled_alone(fn: types.FunctionType, filename: str) -> Optional[tuple[str, int]]:
    """The text (dedented) and first line of the one def in ``filename``'s current text whose code is
    ``fn``'s, line numbers aside, for code that names another line: IPython's %autoreload (its
    deduperreload, the default from IPython 9) compiles the text of an edited def alone, so its code
    says line 1 of the module's file.  None where no def, or more than one, matches."""
    code = fn.__code__
    found = {line for whole in (True, False)
             for (name, line), candidates in _file_codes(filename, fn.__globals__, whole).items()
             if name == code.co_name and any(_same_code(candidate, code) for candidate in candidates)}
    if len(found) != 1:
        return None
    start = found.pop() - 1
    lines = linecache.getlines(filename, fn.__globals__)
    try:
        block = inspect.getblock(lines[start:])
    except (IndexError, SyntaxError):  # (tokenize's errors on text that does not tokenize)
        return None
    return textwrap.dedent("".join(block)), start + 1


def _compiles_to(code: types.CodeType, filename: str, scope: dict) -> bool:
    """Whether the current text of ``filename`` compiles to ``code``: compiled whole, as a module is
    imported, or else each top-level statement alone, as IPython runs a notebook cell.  The two can
    differ: from Python 3.11 a method call on a name the same text imports (``import m`` then, in a
    def, ``m.f(x)``) compiles to other instructions when the import is in the same compilation."""
    key = (code.co_name, code.co_firstlineno)
    return any(_same_code(candidate, code) for whole in (True, False)
               for candidate in _file_codes(filename, scope, whole).get(key, ()))


# (file name, compiled whole) -> (its lines as compiled, its code objects)
_FILE_CODES: dict[tuple[str, bool], tuple[list, dict]] = {}
_FILE_CODES_LOCK = threading.Lock()


def _file_codes(filename: str, scope: dict, whole: bool = True) -> dict[tuple[str, int], list[types.CodeType]]:
    """Every code object compiled from ``filename``'s current text, by name and first line: the
    text compiled whole, or (``whole`` False) each of its top-level statements alone (cached for as
    long as linecache holds the same text)."""
    lines = linecache.getlines(filename, scope)
    with _FILE_CODES_LOCK:
        cached = _FILE_CODES.get((filename, whole))
        if cached is not None and cached[0] is lines:
            return cached[1]
    codes: dict[tuple[str, int], list[types.CodeType]] = {}
    try:
        # dont_inherit: as at import, the file's own __future__ statements alone set the flags
        text = "".join(lines)
        queue = [compile(text, filename, "exec", dont_inherit=True)] if whole else [
            compile(ast.Module(body=[statement], type_ignores=[]), filename, "exec", dont_inherit=True)
            for statement in ast.parse(text).body]
    except (SyntaxError, ValueError):
        queue = []
    while queue:
        current = queue.pop()
        codes.setdefault((current.co_name, current.co_firstlineno), []).append(current)
        queue.extend(c for c in current.co_consts if isinstance(c, types.CodeType))
    with _FILE_CODES_LOCK:
        _FILE_CODES[filename, whole] = (lines, codes)
    return codes


def _same_code(a: types.CodeType, b: types.CodeType) -> bool:
    """The same operations on the same names and constants (line numbers aside)."""
    fields = ("co_code", "co_names", "co_varnames", "co_freevars", "co_cellvars", "co_argcount",
              "co_posonlyargcount", "co_kwonlyargcount")
    if any(getattr(a, f) != getattr(b, f) for f in fields) or len(a.co_consts) != len(b.co_consts):
        return False
    return all(_same_constant(x, y) for x, y in zip(a.co_consts, b.co_consts))


def _same_constant(x: Any, y: Any) -> bool:
    if isinstance(x, types.CodeType) and isinstance(y, types.CodeType):
        return _same_code(x, y)
    if isinstance(x, (tuple, frozenset)) and type(x) is type(y):
        return len(x) == len(y) and all(map(_same_constant, sorted(x, key=repr) if isinstance(x, frozenset) else x,
                                            sorted(y, key=repr) if isinstance(y, frozenset) else y))
    return _same(x, y) or (type(x) is type(y) and x == y and not isinstance(x, (float, complex)))
