"""Reading a function's source: the end of a plain def is found by indentation (parse._source_lines),
and where that cuts a string or brackets short, the source is read again with inspect."""
import ast
import inspect
import textwrap

import numpy as np
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


def _run_as_a_cell(text, filename):
    """Run ``text`` as IPython runs a notebook cell: its text in linecache under a file name of its
    own, each top-level statement compiled alone (IPython.core.interactiveshell.run_ast_nodes).  The
    real kernel is tests/test_notebooks.py's; this is the reading alone, where no kernel is installed."""
    import linecache
    linecache.cache[filename] = (len(text), None, text.splitlines(True), filename)
    namespace = {"__name__": "__main__"}
    for statement in ast.parse(text).body:
        exec(compile(ast.Module(body=[statement], type_ignores=[]), filename, "exec"), namespace)
    return namespace


def test_a_def_calling_a_module_the_same_cell_imports_is_read_as_the_code_that_runs():
    # From Python 3.11 np.sum(...) compiles to other instructions when `import numpy as np` is in
    # the same compilation: the whole cell compiled at once is not what ran, each statement alone is.
    text = "import numpy as np\n\ndef wave(x):\n    return np.sum(np.sin(x) * x)\n"
    wave = _run_as_a_cell(text, "/tmp/ipykernel_0/test_source_reading_cell.py")["wave"]
    x = np.array([0.3, 1.2])
    np.testing.assert_allclose(s2s_ad.grad(wave)(x), np.cos(x) * x + np.sin(x))
