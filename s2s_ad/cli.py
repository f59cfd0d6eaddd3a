"""``s2s-ad FILE:FUNC``: print the code s2s_ad generates for a function.

Errors print one readable line to stderr and exit with status 2.
"""
from __future__ import annotations

import argparse
import ast
import importlib.util
import os
import sys
from typing import Optional, Sequence

import numpy as np

from .api import source
from .errors import TransformError
from .pipeline import STAGES

_EXAMPLES = """examples:
  s2s-ad examples/rational.py:f                 the gradient with respect to the first parameter
  s2s-ad examples/rational.py:f --wrt x,y       with respect to x and y
  s2s-ad examples/rational.py:f --stage ssa     the lowered three-address form
  s2s-ad examples/rational.py:f --args 3,2      the code a call with two numbers runs
  s2s-ad model.py:loss --args "[[0.5, 0.2], [0.1, 0.3]], 0.1"   an array and a number
"""


def _load(path: str, name: str):
    if not os.path.isfile(path):
        raise SystemExit(f"s2s-ad: no such file: {path}")
    module_name = "_s2s_ad_cli_" + "".join(c if c.isalnum() else "_" for c in os.path.splitext(os.path.basename(path))[0])
    spec = importlib.util.spec_from_file_location(module_name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[module_name] = module
    sys.path.insert(0, os.path.dirname(os.path.abspath(path)))
    spec.loader.exec_module(module)
    fn = getattr(module, name, None)
    if fn is None:
        raise SystemExit(f"s2s-ad: {path} defines no function {name!r}")
    return fn


def _parse_args(text: str) -> tuple:
    """``3,2`` or ``[1, 2], 0.5``: numbers stay numbers, lists become float arrays."""
    try:
        values = ast.literal_eval(f"({text},)")
    except (ValueError, SyntaxError) as exc:
        raise ValueError(f"--args must be Python literals separated by commas, not {text!r}") from exc
    return tuple(np.asarray(v, dtype=float) if isinstance(v, (list, tuple)) else float(v) for v in values)


def main(argv: Optional[Sequence[str]] = None) -> int:
    parser = argparse.ArgumentParser(
        prog="s2s-ad", description="Print the code s2s_ad generates for a function.",
        epilog=_EXAMPLES, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("target", help="FILE:FUNC, e.g. examples/rational.py:f")
    parser.add_argument("--wrt", default=None, help="parameters to differentiate by, comma-separated (default: the first)")
    parser.add_argument("--mode", choices=("reverse", "forward"), default="reverse")
    parser.add_argument("--stage", choices=STAGES, default="optimized")
    parser.add_argument("--args", default=None, metavar="VALUES",
                        help="example arguments, as Python literals separated by commas: the code is "
                             "specialised for them (numbers or arrays) as a call would be")
    options = parser.parse_args(argv)
    path, _, name = options.target.rpartition(":")
    if not path or not name:
        print("s2s-ad: give the target as FILE:FUNC", file=sys.stderr)
        return 2
    try:
        fn = _load(path, name)
        wrt = 0 if options.wrt is None else tuple(w.strip() for w in options.wrt.split(","))
        args = None if options.args is None else _parse_args(options.args)
        print(source(fn, wrt=wrt, mode=options.mode, stage=options.stage, args=args), end="")
    except SystemExit as exc:
        print(exc, file=sys.stderr)
        return 2
    except (TransformError, ValueError, TypeError) as exc:
        print(f"s2s-ad: {exc}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
