"""No class of the engine grows past what a reader takes in at once (issue 32, "the pipeline in plain
sight"): a class over about 300 lines is split along its seams into parts of their own, each a module
saying its one job (``api/gradient.py``'s parts, ``lowering/calls.py``'s).  ``GradientFunction``,
the object ``grad`` returns and the first a user reads, is held to 250."""
from __future__ import annotations

import ast
from pathlib import Path

import s2s_ad

PACKAGE = Path(s2s_ad.__file__).parent
MOST_LINES = 300
MOST_LINES_OF = {
    "api/gradient.py:GradientFunction": 250,
}


def _class_lengths() -> dict[str, int]:
    """Each class defined under s2s_ad/ (nested ones too), as ``package/module.py:Name``, with the
    lines it spans."""
    lengths = {}
    for module in sorted(PACKAGE.rglob("*.py")):
        for node in ast.walk(ast.parse(module.read_text())):
            if isinstance(node, ast.ClassDef):
                lengths[module.relative_to(PACKAGE).as_posix() + ":" + node.name] = node.end_lineno - node.lineno + 1
    return lengths


def test_no_class_spans_more_than_its_most_lines():
    lengths = _class_lengths()
    too_long = {where: lines for where, lines in lengths.items() if lines > MOST_LINES_OF.get(where, MOST_LINES)}
    assert not too_long, too_long


def test_every_exception_names_a_class_there_is():
    assert set(MOST_LINES_OF) <= set(_class_lengths()), set(MOST_LINES_OF) - set(_class_lengths())
