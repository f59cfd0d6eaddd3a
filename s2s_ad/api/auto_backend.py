"""``backend="auto"``: the Python backend or Numba's, chosen by the shape of the user's code.

Input: the function given to ``grad``, ``value_and_grad``, ``jvp``, ``vjp``, ``jacobian`` or ``hessian`` and
the ``backend=`` asked for.  Output: a ``BackendChoice``, the backend that runs ("python" or
"numba") and why, which a gradient keeps as ``backend_chosen`` (and ``source_for`` prints as its
first line where the choice was "auto's").

The rule: Numba wins where Python's interpreter is the cost, the Python backend where NumPy's calls
are (they run compiled already, and Numba's versions of whole-array calls are often slower).  So
"auto" is "numba" where the function, or a function of the user's that it calls, has a loop
(``for`` or ``while``) with work in it: one that reads or writes array elements
(``temp[t + 1] = temp[t] + ...``: an index without a slice), one that works on numbers alone, and
one that steps through whole-array operations (``total = total + padded[i:i + h]``,
``x = np.tanh(w @ x)``), whose steps then run without the interpreter's cost and temporaries each
(measured: deblur's nine slices 2.0x, a 20-step ``tanh(w @ x)`` 1.1x (256x64 by 64x64) to 13x
(16x16) faster compiled).  Code without loops (straight-line NumPy calls: mlp, softmax
cross-entropy; a formula of numbers) is "python".  Where Numba is not installed, "python", saying so.  Nothing is timed: the choice is made from the
source, once, when the derivative is made.  ``hessian``'s "auto" is "python": its forward mode
over the gradient compiles under Numba only where the gradient's tape can be preallocated float
arrays (``ReadBackSlotTape``: every value its loops record proven a float64, each recording loop a
``for`` over a range with no inner loop), which is decided on the generated gradient for the
arguments' kinds, after this choice; elsewhere it would fall back to Python after a compile.
``vjp``'s "numba" runs the Python backend's parts, without a warning, where the Numba target cannot
emit them apart (``numba/handed.py``: a slot recorded in a ``while`` loop, an inner loop, a value
not proven a float64), which is known once they are built: no compile is tried then.
"""
from __future__ import annotations

import ast
import dataclasses
import functools
import importlib.util
import inspect
import os
import textwrap
import types
from typing import Any, Callable, Iterator, Optional

import numpy as np

# what a method call on an array is, where it works on the whole array
_ARRAY_METHODS = frozenset({"sum", "dot", "mean", "max", "min", "prod", "reshape", "cumsum", "copy", "transpose",
                            "std", "var", "ravel", "flatten", "argmax", "argmin", "sort", "clip", "astype"})
_DEPTH = 4  # how deep calls of the user's own functions are followed


@dataclasses.dataclass(frozen=True)
class BackendChoice:
    """Which backend runs a derivative (``backend``: "python" or "numba"), what was asked
    (``asked``: "auto", "python" or "numba") and, for "auto", why (``reason``)."""

    backend: str
    asked: str
    reason: str

    def __str__(self) -> str:
        if self.asked != "auto":
            return f"backend={self.backend!r} (as asked)"
        return f"backend='auto' chose {self.backend!r}: {self.reason}"


def choose_backend(fn: Callable, backend: str, what: str = "grad") -> BackendChoice:
    """The backend that runs ``what`` of ``fn`` where ``backend`` was asked for (see the module's
    docstring); a name other than "auto" is kept as it is (``target_of`` says if it is unknown)."""
    if backend != "auto":
        return BackendChoice(backend, backend, "as asked")
    if importlib.util.find_spec("numba") is None:
        return BackendChoice("python", "auto", "Numba is not installed (pip install 's2s_ad[numba]' to have "
                                               "loops over elements compiled)")
    if what == "hessian":
        return BackendChoice("python", "auto", "a Hessian's forward mode over the gradient compiles under Numba "
                                               "only where every value the gradient's loops record is proven a "
                                               "float64 and each recording loop is a for over a range with no "
                                               "inner loop, known only once the gradient is built (elsewhere it "
                                               "falls back to Python after a compile); pass backend='numba' for "
                                               "such loops")
    found = _loop(_plain(fn))
    if found is not None:
        return BackendChoice("numba", "auto", found + ": loops run compiled, without the interpreter's cost "
                                                      "at each step")
    return BackendChoice("python", "auto", "no loop: straight-line code and whole-array NumPy calls, which "
                                           "NumPy runs compiled already")


def headed(source: str, chosen: Optional[BackendChoice]) -> str:
    """``source`` (what ``source_for`` shows) with the choice of "auto" as its first line."""
    return f"# {chosen}\n{source}" if chosen is not None and chosen.asked == "auto" else source


def _plain(fn: Any) -> Any:
    """The user's function under a gradient, a partial or a bound method."""
    for _ in range(16):
        inner = getattr(fn, "fn", None) if type(fn).__name__ in ("GradientFunction", "Jacobian", "Hessian") else None
        if inner is not None:
            fn = inner
        elif isinstance(fn, functools.partial):
            fn = fn.func
        elif isinstance(fn, types.MethodType):
            fn = fn.__func__
        else:
            break
    return fn


def _loop(fn: Any) -> Optional[str]:
    """Where ``fn`` or a function of the user's it calls has a loop with work in it, and what the
    loop does (in words), or None; a loop over elements is named before a loop over whole arrays."""
    scan = _Scan()
    over_arrays = None
    for function, tree in scan.functions(fn, _DEPTH, set()):
        for loop in (n for n in ast.walk(tree) if isinstance(n, (ast.For, ast.While))):
            elements, whole = [], []
            for part in loop.body if isinstance(loop, ast.For) else [loop.test, *loop.body]:  # (not range(...))
                found_elements, found_whole = scan.operations(part, function, _DEPTH)
                elements += found_elements
                whole += found_whole
            where = f"the loop at line {_line(function, loop)} of {_file(function)}"
            if elements:
                return f"{where} ({_head(loop)}) reads or writes array elements ({elements[0]})"
            if not whole and any(isinstance(n, (ast.BinOp, ast.AugAssign, ast.Call)) for n in ast.walk(loop)):
                return f"{where} ({_head(loop)}) works on numbers"
            if whole and over_arrays is None:
                over_arrays = f"{where} ({_head(loop)}) steps through whole-array operations ({whole[0]})"
    return over_arrays


class _Scan:
    """One look at a function and the user's functions it calls: each parsed once, each callee's
    operations found once (a helper called from four places, or recursively, is read once)."""

    def __init__(self) -> None:
        self._trees: dict[Any, Optional[ast.AST]] = {}
        self._found: dict[Any, tuple[list[str], list[str]]] = {}

    def tree(self, fn: Any) -> Optional[ast.AST]:
        """``fn``'s ``def`` as a syntax tree (None where its source cannot be read)."""
        if fn not in self._trees:
            self._trees[fn] = _parsed(fn)
        return self._trees[fn]

    def functions(self, fn: Any, depth: int, seen: set) -> Iterator[tuple[Any, ast.AST]]:
        """``fn``'s syntax tree and those of the user's functions it calls, to ``depth`` calls deep."""
        tree = self.tree(fn)
        if tree is None or fn in seen:
            return
        seen.add(fn)
        yield fn, tree
        if depth > 0:
            for call in (n for n in ast.walk(tree) if isinstance(n, ast.Call)):
                callee = _callee(call, fn)
                if callee is not None:
                    yield from self.functions(callee, depth - 1, seen)

    def operations(self, node: ast.AST, function: Any, depth: int) -> tuple[list[str], list[str]]:
        """In ``node`` (and the user's functions it calls): the element accesses and the whole-array
        operations, as written."""
        elements: list[str] = []
        whole: list[str] = []
        for n in ast.walk(node):
            if isinstance(n, ast.Subscript) and not (isinstance(n.value, ast.Attribute) and n.value.attr == "shape"):
                index = n.slice
                if any(isinstance(s, ast.Slice) for s in ast.walk(index)):
                    whole.append(ast.unparse(n))
                elif not (isinstance(index, ast.Constant) and isinstance(index.value, str)):
                    elements.append(ast.unparse(n))
            elif isinstance(n, ast.BinOp) and isinstance(n.op, ast.MatMult):
                whole.append(ast.unparse(n))
            elif isinstance(n, ast.Call):
                callee = _callee(n, function)
                if callee is not None and depth > 0:
                    inner_elements, inner_whole = self._callee_operations(callee, depth - 1)
                    elements += inner_elements
                    whole += inner_whole
                elif _whole_array_call(n):
                    whole.append(ast.unparse(n.func))
        return elements, whole

    def _callee_operations(self, callee: Any, depth: int) -> tuple[list[str], list[str]]:
        if callee not in self._found:
            self._found[callee] = ([], [])  # (a recursive call finds nothing more)
            elements: list[str] = []
            whole: list[str] = []
            for statement in getattr(self.tree(callee), "body", ()):  # (not its annotations: tuple[float, float])
                inner_elements, inner_whole = self.operations(statement, callee, depth)
                elements += inner_elements
                whole += inner_whole
            self._found[callee] = (elements, whole)
        return self._found[callee]


def _whole_array_call(call: ast.Call) -> bool:
    """A call of NumPy's other than a ufunc (``np.sum``, ``np.dot``, ``np.zeros``) or of an array method."""
    func = call.func
    if not isinstance(func, ast.Attribute):
        return False
    if isinstance(func.value, ast.Name) and func.value.id in ("np", "numpy"):
        return not isinstance(getattr(np, func.attr, None), np.ufunc)
    return func.attr in _ARRAY_METHODS


def _callee(call: ast.Call, function: Any) -> Any:
    """The user's own Python function a call names (a global or closure variable of ``function``)."""
    if not isinstance(call.func, ast.Name):
        return None
    name = call.func.id
    value = getattr(function, "__globals__", {}).get(name)
    closure = getattr(function, "__closure__", None) or ()
    for free, cell in zip(getattr(getattr(function, "__code__", None), "co_freevars", ()), closure):
        if free == name:
            try:
                value = cell.cell_contents
            except ValueError:
                value = None
    return value if isinstance(value, types.FunctionType) else None


def _parsed(fn: Any) -> Optional[ast.AST]:
    try:
        source = textwrap.dedent(inspect.getsource(fn))
        module = ast.parse(source)
    except (OSError, TypeError, SyntaxError, IndentationError):
        return None
    return module.body[0] if module.body else None


def _line(function: Any, node: ast.AST) -> int:
    code = getattr(function, "__code__", None)
    return getattr(node, "lineno", 1) + (code.co_firstlineno - 1 if code is not None else 0)


def _file(function: Any) -> str:
    code = getattr(function, "__code__", None)
    return os.path.basename(code.co_filename) if code is not None else "the user's file"


def _head(loop: ast.AST) -> str:
    """The loop's first line: ``for t in range(n)``."""
    if isinstance(loop, ast.For):
        return f"for {ast.unparse(loop.target)} in {ast.unparse(loop.iter)}"
    assert isinstance(loop, ast.While)
    return f"while {ast.unparse(loop.test)}"
