"""``s2s-ad FILE:FUNC``: print the code s2s_ad generates for a function (or its graph, or a check);
``s2s-ad export FILE:FUNC``: write its gradient as a module that runs without s2s_ad (``export.py``).

The word ``export`` first picks the second form (a file named ``export`` is ``./export``); anything
else is the first, as it always was.  Errors print one readable line to stderr and exit with status 2.
"""
from __future__ import annotations

import argparse
import ast
import difflib
import inspect
import importlib.util
import os
import sys
import types
from typing import Any, Callable, Optional, Sequence, Union

import numpy as np

from ..analysis.facts import analyse
from .transforms import grad, source
from ..core.arguments import kind_of
from .gradcheck import check_grad
from .graph import to_dot
from ..core.kinds import UNKNOWN
from .matrices import hessian
from ..core.errors import ExportError, TransformError
from .export import exported
from ..driver.pipeline import STAGES, lowered

_EXAMPLES = """examples:
  s2s-ad examples/rational.py                   the functions in a file, and whether each one's gradient builds
  s2s-ad examples/rational.py:f                 the gradient with respect to the first parameter
  s2s-ad examples/rational.py:f --wrt x,y       with respect to x and y
  s2s-ad examples/rational.py:f --stage ssa     the lowered three-address form
  s2s-ad examples/rational.py:f --stage facts --args 3,2   what the analysis proved of each value
  s2s-ad examples/rational.py:f --args 3,2      the code a call with two numbers runs
  s2s-ad examples/rational.py:f --mode forward  the tangent (jvp) code
  s2s-ad examples/rational.py:f --order 2 --args 3,2     the second derivative's code
  s2s-ad examples/rational.py:f --diff          what the optimizer changed
  s2s-ad examples/rational.py:f --check 3,2     the gradient at (3, 2) against finite differences
  s2s-ad examples/deblur.py:loss --format dot | dot -Tpng > loss.png     the data-flow graph
  s2s-ad model.py:loss --args "[[0.5, 0.2], [0.1, 0.3]], 0.1"   an array and a number
  s2s-ad export model.py:loss --wrt w -o d_loss.py   the gradient as a module needing NumPy alone
                                                (s2s-ad export --help)
"""

_EXPORT_EXAMPLES = """examples:
  s2s-ad export examples/rational.py:f -o d_f.py            d f / d x for any numbers and arrays
  s2s-ad export examples/rational.py:f --wrt x,y -o d_f.py  with respect to x and y
  s2s-ad export model.py:loss --args "[0.5, 0.2], 0.1"      specialised for an array of 2 and a number

The module defines grad_FUNC and value_and_grad_FUNC, with FUNC's parameters, returning what
s2s_ad.grad and s2s_ad.value_and_grad return, and the adjoint d_FUNC(..., d_out=1.0); its
docstring names the source, the parameters differentiated, the argument kinds, the s2s_ad
version and the date.  It needs NumPy and Python's standard library alone: the helpers of
s2s_ad's that the code calls are written out in it.  Without --args the code works for any
numbers and arrays; with --args a call with arguments of other kinds raises TypeError.
Where a helper cannot be written out, an error names it and nothing is written.
"""


def _module(path: str) -> types.ModuleType:
    if not os.path.isfile(path):
        raise SystemExit(f"s2s-ad: no such file: {path}")
    module_name = "_s2s_ad_cli_" + "".join(c if c.isalnum() else "_" for c in os.path.splitext(os.path.basename(path))[0])
    spec = importlib.util.spec_from_file_location(module_name, path)
    if spec is None or spec.loader is None:  # a file with no Python extension, say
        raise SystemExit(f"s2s-ad: not a Python module: {path}")
    module = importlib.util.module_from_spec(spec)
    sys.modules[module_name] = module
    sys.path.insert(0, os.path.dirname(os.path.abspath(path)))
    spec.loader.exec_module(module)
    return module


def _load(path: str, name: str) -> Callable[..., Any]:
    fn = getattr(_module(path), name, None)
    if fn is None:
        raise SystemExit(f"s2s-ad: {path} defines no function {name!r}")
    return fn


def _list_functions(path: str) -> str:
    """Each function the file defines, and whether s2s_ad can transform it: its gradient by its first
    parameter is built (the generic code, as ``s2s-ad FILE:FUNC`` prints it), so a refusal anywhere,
    in the function, its helpers or the functions it calls, is found; nothing is run."""
    module = _module(path)
    lines = []
    for name, fn in inspect.getmembers(module, inspect.isfunction):
        if fn.__module__ != module.__name__:
            continue
        params = list(inspect.signature(fn).parameters)
        try:
            if not params:
                lowered(fn)
                status = "ok as far as lowering (it has no parameter to differentiate by)"
            else:
                source(fn, wrt=0)
                status = f"ok (its gradient by {params[0]} builds)"
        except TransformError as exc:
            status = f"refused: {exc}"
        except (TypeError, ValueError) as exc:
            status = f"not checked: {exc}"
        lines.append(f"{name}{inspect.signature(fn)}  {status}")
    return "\n".join(lines) + "\n" if lines else f"{path} defines no functions\n"


def _parse_args(text: str) -> tuple:
    """``3,2`` or ``[1, 2], 0.5``: numbers become floats, lists float arrays, a dict a dict of such
    values; a string, None or True/False stays what it is (the code is specialised on it, as a call)."""
    try:
        values = ast.literal_eval(f"({text},)")
    except (ValueError, SyntaxError) as exc:
        raise ValueError(f"--args must be Python literals separated by commas, not {text!r}") from exc
    return tuple(_argument(v) for v in values)


def _argument(value: Any) -> Any:
    if isinstance(value, (str, bool)) or value is None:
        return value
    if isinstance(value, dict):
        return {k: _argument(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return np.asarray(value, dtype=float)
    return float(value)


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="s2s-ad", description="Print the code s2s_ad generates for a function; "
        "s2s-ad export FILE:FUNC writes its gradient as a module that runs without s2s_ad (s2s-ad export --help).",
        epilog=_EXAMPLES, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("target", help="FILE:FUNC (e.g. examples/rational.py:f), or FILE to list its functions")
    parser.add_argument("--wrt", default=None, help="parameters to differentiate by, comma-separated (default: the first)")
    parser.add_argument("--mode", choices=("reverse", "forward"), default="reverse")
    parser.add_argument("--stage", choices=STAGES, default="optimized")
    parser.add_argument("--no-optimize", action="store_true", help="the code as generated (--stage adjoint)")
    parser.add_argument("--order", type=int, default=1, help="the N-th derivative (forward over reverse above 1)")
    parser.add_argument("--diff", action="store_true", help="a unified diff: as generated -> optimized")
    parser.add_argument("--format", choices=("python", "dot"), default="python",
                        help="dot: the SSA data-flow graph with the adjoints' path, for Graphviz")
    parser.add_argument("--args", default=None, metavar="VALUES",
                        help="example arguments, as Python literals separated by commas: the code is "
                             "specialised for them (numbers or arrays) as a call would be")
    parser.add_argument("--html", default=None, metavar="OUT.html",
                        help="write the derivative explorer: your code and the generated code side by side, "
                             "linked line by line, the tape's pushes and pops marked, and the data-flow graph "
                             "(one self-contained page)")
    parser.add_argument("--check", default=None, metavar="VALUES",
                        help="evaluate the gradient at these arguments and compare it with finite differences")
    parser.add_argument("--backend", choices=("python", "numba", "auto"), default="python",
                        help="numba: the code backend='numba' compiles (a typed stack per tape slot, helpers inlined); "
                             "auto: the code of the backend backend='auto' chooses for the function")
    return parser


def _output(fn: Callable[..., Any], options: argparse.Namespace, wrt: Union[int, tuple[str, ...]],
            args: Optional[tuple]) -> str:
    stage = "adjoint" if options.no_optimize else options.stage
    if options.format == "dot":
        parsed, ssa = lowered(fn)
        names = [wrt] if not isinstance(wrt, tuple) else list(wrt)
        names = [parsed.params[w] if isinstance(w, int) else w for w in names]
        kinds = tuple(map(kind_of, args)) if args else (UNKNOWN,) * len(ssa.params)
        facts = analyse(ssa, [ssa.params[parsed.params.index(w)] for w in names], dict(zip(ssa.params, kinds)))
        return to_dot(ssa, facts)
    if options.diff:
        before = source(fn, wrt=wrt, mode=options.mode, stage="adjoint", args=args).splitlines(True)
        after = source(fn, wrt=wrt, mode=options.mode, stage="optimized", args=args).splitlines(True)
        diff = "".join(difflib.unified_diff(before, after, "as generated", "optimized"))
        return diff or "# the optimizer changed nothing\n"
    if options.order > 1:
        return _higher_order_source(fn, options.order, wrt, args)
    return source(fn, wrt=wrt, mode=options.mode, stage=stage, args=args, backend=options.backend)


def _explorer_page(fn: Callable, options: argparse.Namespace, wrt: Union[int, tuple], args: Optional[tuple]) -> str:
    """The explorer's page for the derivative the options name (reverse mode, or ``--order`` N)."""
    if options.mode != "reverse":
        raise ValueError("--html shows reverse mode and the derivatives built on it (--order); "
                         "for forward mode's code, leave out --html")
    names: tuple = wrt if isinstance(wrt, tuple) else (wrt,)
    if options.order > 1 and (len(names) > 1 or _by_an_array(fn, names, args, options.order)):
        if options.order != 2:
            raise ValueError(f"--order {options.order} with several --wrt parameters: above order 2 name one parameter")
        return hessian(fn, wrt=names).html_for(*(args or ()))
    derivative = grad(fn, wrt=names if options.order == 1 else names[0])
    for _ in range(options.order - 1):
        derivative = grad(derivative, wrt=names[0])
    return derivative.html_for(*args) if args else derivative._repr_html_()


def _higher_order_source(fn: Callable, order: int, wrt: Union[int, tuple], args: Optional[tuple]) -> str:
    """The code of the ``order``-th derivative by one parameter (``grad`` of ``grad``...), or, by
    several, of the Hessian (order 2): every generated module a call with ``args`` runs."""
    names: tuple = wrt if isinstance(wrt, tuple) else (wrt,)
    if len(names) > 1 or _by_an_array(fn, names, args, order):
        if order != 2:
            raise ValueError(f"--order {order} with several --wrt parameters: above order 2 name one parameter")
        matrix = hessian(fn, wrt=names if len(names) > 1 else names[0])
        by = ", ".join(matrix.wrt)
        return (f"# The Hessian of {getattr(fn, '__name__', fn)} by {by} (s2s_ad.hessian): the code below runs once "
                f"per element of {by}, its tangent a unit vector, and gives the Hessian's column.\n"
                + matrix.source_for(*(args or ())))
    derivative = grad(fn, wrt=names[0])
    for _ in range(order - 1):
        derivative = grad(derivative, wrt=names[0])
    if args:
        return derivative.source_for(*args)
    return (f"# The {order}-th derivative's code for numbers (grad of grad: each derivative's tangent 1.0); "
            "for an array parameter, give --args with an array ([1.0, 2.0]) to see the Hessian's code.\n"
            + derivative.source)


def _by_an_array(fn: Callable, names: tuple, args: Optional[tuple], order: int) -> bool:
    """Whether the one parameter ``names`` holds is an array among ``args``: its second derivative is
    the Hessian (whose code ``--order 2`` prints); a higher one is refused here, naming what to ask."""
    if len(names) != 1 or not args:
        return False
    params = list(inspect.signature(fn).parameters)
    position = names[0] if isinstance(names[0], int) else params.index(names[0])
    if not (-len(args) <= position < len(args) and isinstance(args[position], np.ndarray)):
        return False
    if order != 2:
        raise ValueError(f"--order {order} by {params[position]}, an array: s2s-ad prints the code of derivatives "
                         f"of an array parameter up to the second, the Hessian's (--order 2)")
    return True


def _coloured(text: str) -> str:
    """Syntax colouring on a terminal, when Pygments is installed (an optional extra)."""
    if not sys.stdout.isatty():
        return text
    try:
        from pygments import highlight
        from pygments.formatters import TerminalFormatter
        from pygments.lexers import PythonLexer
    except ImportError:
        return text
    return highlight(text, PythonLexer(), TerminalFormatter())


def _export_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="s2s-ad export", description="Write a function's gradient as a Python module that needs NumPy alone "
        "(no s2s_ad).", epilog=_EXPORT_EXAMPLES, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("target", help="FILE:FUNC (e.g. examples/rational.py:f)")
    parser.add_argument("--wrt", default=None, help="parameters to differentiate by, comma-separated (default: the first)")
    parser.add_argument("--args", default=None, metavar="VALUES",
                        help="example arguments, as Python literals separated by commas: the code is specialised "
                             "for their kinds (and refuses calls with others); default: code for any arguments")
    parser.add_argument("-o", "--output", default=None, metavar="OUT.py", help="the file to write (default: print it)")
    return parser


def _export(argv: Sequence[str]) -> int:
    """``s2s-ad export``: the module text made in full before anything is written."""
    options = _export_parser().parse_args(argv)
    path, _, name = options.target.rpartition(":")
    try:
        if not path:
            raise SystemExit(f"s2s-ad export: name the function, FILE:FUNC, not {options.target!r}")
        fn = _load(path, name)
        wrt = None if options.wrt is None else tuple(w.strip() for w in options.wrt.split(","))
        args = None if options.args is None else _parse_args(options.args)
        text = exported(fn, wrt, args)
        if options.output is None:
            print(text, end="")
            return 0
        with open(options.output, "w", encoding="utf-8") as out:
            out.write(text)
        print(f"s2s-ad: wrote {options.output}")
    except SystemExit as exc:
        print(exc, file=sys.stderr)
        return 2
    except (ExportError, TransformError, ValueError, TypeError) as exc:
        print(f"s2s-ad export: {exc}", file=sys.stderr)
        return 2
    return 0


def main(argv: Optional[Sequence[str]] = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv[:1] == ["export"]:
        return _export(argv[1:])
    options = _parser().parse_args(argv)
    path, _, name = options.target.rpartition(":")
    try:
        if not path:  # FILE alone
            print(_list_functions(options.target), end="")
            return 0
        fn = _load(path, name)
        wrt = 0 if options.wrt is None else tuple(w.strip() for w in options.wrt.split(","))
        if options.check is not None:
            report = check_grad(fn, *_parse_args(options.check), wrt=None if options.wrt is None else wrt)
            print(report)
            return 0 if report.ok else 1
        args = None if options.args is None else _parse_args(options.args)
        if options.html is not None:
            with open(options.html, "w", encoding="utf-8") as out:
                out.write(_explorer_page(fn, options, wrt, args))
            print(f"s2s-ad: wrote {options.html}")
            return 0
        text = _output(fn, options, wrt, args)
        print(_coloured(text) if options.format == "python" else text, end="")
    except SystemExit as exc:
        print(exc, file=sys.stderr)
        return 2
    except (TransformError, ValueError, TypeError) as exc:
        print(f"s2s-ad: {exc}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
