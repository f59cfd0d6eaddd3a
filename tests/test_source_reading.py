"""Reading a function's source: the end of a plain def is found by indentation (parse._source_lines),
and where that cuts a string or brackets short, the source is read again with inspect."""
import ast
import inspect
import textwrap

import pytest

import s2s_ad
from s2s_ad import parse


def plain(x):
    y = x * x
    # a comment in the body
    return y * 3.0
    # a comment after the last statement


def string_at_the_def_column(x):
    note = """
a line at column 0"""
    return x * 2.0


def brackets_at_the_def_column(x):
    y = (x +
x)
    return y * y


class Holder:
    def method(x):
        return x * 5.0
# a comment at the class's column


def _tree(lines):
    return ast.dump(ast.parse(textwrap.dedent("".join(lines))))


@pytest.mark.parametrize("fn", [plain, string_at_the_def_column, brackets_at_the_def_column, Holder.method])
def test_the_quick_read_gives_inspects_function_or_text_that_does_not_parse(fn):
    lines, first = parse._source_lines(fn)
    exact, exact_first = inspect.getsourcelines(fn)
    assert first == exact_first
    try:
        tree = _tree(lines)
    except SyntaxError:
        assert fn in (string_at_the_def_column, brackets_at_the_def_column)
        return
    assert tree == _tree(exact)


@pytest.mark.parametrize("fn, slope", [(plain, 6.0), (string_at_the_def_column, 2.0),
                                       (brackets_at_the_def_column, 8.0), (Holder.method, 5.0)])
def test_functions_read_either_way_are_differentiated(fn, slope):
    assert s2s_ad.grad(fn)(1.0) == pytest.approx(slope)
