"""Functions defined in Jupyter cells, differentiated in a real kernel.

A notebook is built here with nbformat and run by nbclient in an IPython kernel (ipykernel) of
this Python, which imports the same s2s_ad as the tests.  Its cells are what a notebook user
writes: imports; a helper; a loss calling it; the helper redefined in a later cell, then the loss
itself, a cell run again as it was and one edited; a refused function; ``df.source``; the
notebook's display of a gradient (the explorer's page); a lambda; a global array reassigned and
changed in place; an error raised inside generated code; a module edited under
``%autoreload 2``; a function defined under the cell magic ``%%time``.  Each cell checks its
gradients against central finite differences in the kernel (``assert``) and prints ``ok``; the
tests read each cell's outputs.  What a kernel does that a script does not: the source of a cell
is in ``linecache`` only, under a temporary file name the kernel picked, which no refusal should
show (it names the cell as IPython's tracebacks do: ``Cell In[5], line 3``); helpers are globals of
``__main__``, rebound by each cell that defines them.

Skipped where ipykernel, nbclient or nbformat is missing (the ``notebook`` extra); a failure
then under ``S2S_AD_REQUIRE_EXTRAS`` (CI's notebook job names them).
"""
from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any
from unittest import mock

import pytest

import s2s_ad
from conftest import optional_import

nbformat = optional_import("nbformat")
nbclient = optional_import("nbclient")
ipykernel = optional_import("ipykernel")

pytestmark = pytest.mark.skipif(
    nbformat is None or nbclient is None or ipykernel is None,
    reason="ipykernel, nbclient or nbformat is not installed (pip install 's2s_ad[notebook]')")

# Where the kernel imports s2s_ad from: where the tests did.
PACKAGE_ROOT = str(Path(s2s_ad.__file__).resolve().parent.parent)

SETUP = f"""
import os, sys, linecache
sys.path.insert(0, {PACKAGE_ROOT!r})
sys.dont_write_bytecode = True  # (the autoreload cell edits a module twice within a second)
import numpy as np
import s2s_ad
assert sys.prefix == {sys.prefix!r}, ("a kernel of another Python", sys.prefix)
assert os.path.realpath(s2s_ad.__file__) == {str(Path(s2s_ad.__file__).resolve())!r}, s2s_ad.__file__

def fd(f, x, eps=1e-6):
    '''Central finite differences of scalar f at x (a number or an array).'''
    if np.ndim(x) == 0:
        return (f(x + eps) - f(x - eps)) / (2 * eps)
    x = np.asarray(x, dtype=float)
    g = np.zeros_like(x)
    for i in np.ndindex(x.shape):
        step = np.zeros_like(x)
        step[i] = eps
        g[i] = (f(x + step) - f(x - step)) / (2 * eps)
    return g

def close(a, b):
    np.testing.assert_allclose(a, b, rtol=1e-6, atol=1e-8)

def label_of(fn):
    '''How this IPython's tracebacks name the cell fn was defined in ("Cell In[5]").'''
    return " ".join(get_ipython().compile.format_code_name(fn.__code__.co_filename))

x = np.array([0.3, 1.2, -0.7])
print("ok setup", s2s_ad.__file__)
"""

# A notebook's first cell often imports and defines at once: from Python 3.11 the kernel's code for
# np.sum(...) then differs from that of the cell's text compiled whole (IPython compiles each
# statement alone).
IMPORTED = """
import numpy as np
from numpy import cos

def imported(x):
    return np.sum(np.sin(x) ** 2) + np.linalg.norm(cos(x))

close(s2s_ad.grad(imported)(x), fd(imported, x))
print("ok imported")
"""

HELPER = """
def helper(x):
    return np.sin(x) * x
"""

LOSS = """
def loss(x):
    y = helper(x)
    return np.sum(y ** 2)

dloss = s2s_ad.grad(loss)
first = dloss(x)
close(first, fd(loss, x))
close(first, 2 * np.sin(x) * x * (np.cos(x) * x + np.sin(x)))
close(s2s_ad.grad(loss)(0.4), fd(loss, 0.4))  # a number: the path keyed by types alone
print("ok loss")
"""

HELPER_REDEFINED = """
def helper(x):
    return np.cos(x) * x

second = dloss(x)  # the gradient taken before: its code called the old helper
close(second, fd(loss, x))
close(second, 2 * np.cos(x) * x * (np.cos(x) - np.sin(x) * x))
assert not np.allclose(second, first)
close(s2s_ad.grad(loss)(x), second)
close(s2s_ad.value_and_grad(loss)(x)[1], second)
close(s2s_ad.jvp(loss, (x,), (np.ones(3),))[1], np.sum(second))
close(s2s_ad.hessian(loss)(x) @ np.ones(3), fd(lambda t: np.sum(dloss(t)), x))
print("ok helper redefined")
"""

LOSS_REDEFINED = """
old_loss = loss

def loss(x):
    return np.sum(helper(x) ** 3)

dnew = s2s_ad.grad(loss)
close(dnew(x), fd(loss, x))
close(dnew(x), 3 * (np.cos(x) * x) ** 2 * (np.cos(x) - np.sin(x) * x))
close(dloss(x), fd(old_loss, x))  # the gradient of the old function is still of the old function
assert "** 3" in s2s_ad.source(loss)
print("ok loss redefined")
"""

# The same text run twice (a cell run again as it was: the kernel compiles it under the same file
# name), then edited (a cell run again with a new body).
SCALED = """
@s2s_ad.grad
def dscaled(x):
    return SCALE * np.sum(x ** {power})

SCALE = {scale}
close(dscaled(x), {power} * {scale} * x ** {power_less})
print("ok scaled {scale} {power}")
"""

REFUSED = """
def refused(x):
    total = 0.0
    try:
        total = np.sum(x)
    except ValueError:
        pass
    return total

print("label:", label_of(refused))
s2s_ad.grad(refused)(x)
"""

SOURCE = """
print(dnew.source)
"""

DISPLAY = """
dnew
"""

LAMBDA = """
squashed = lambda t: np.sum(np.tanh(t) ** 2)
close(s2s_ad.grad(squashed)(x), fd(squashed, x))
close(s2s_ad.grad(squashed)(x), 2 * np.tanh(x) / np.cosh(x) ** 2)
print("ok lambda")
"""

WEIGHTS = """
W = np.array([1.0, 2.0, 3.0])
"""

WEIGHTED = """
def weighted(x):
    return np.sum(W * x ** 2)

dweighted = s2s_ad.grad(weighted)
close(dweighted(x), 2 * W * x)
print("ok weighted")
"""

WEIGHTS_CHANGED = """
W = np.array([5.0, -1.0, 0.5])  # reassigned
close(dweighted(x), 2 * W * x)
close(dweighted(x), fd(weighted, x))
W[0] = 10.0  # changed in place
close(dweighted(x), np.array([20.0, -2.0, 1.0]) * x)
print("ok weights changed")
"""

INSIDE = """
def inverted(a):
    return np.sum(np.linalg.inv(a))

try:
    s2s_ad.grad(inverted)(np.zeros((2, 2)))
except np.linalg.LinAlgError as exc:
    print("notes:", getattr(exc, "__notes__", []))
"""

MODULE = """
import importlib, pathlib, time
folder = pathlib.Path("edited_modules")
folder.mkdir(exist_ok=True)
sys.path.insert(0, str(folder.resolve()))

def write(text):
    path = folder / "edited_wave.py"
    path.write_text(text)
    os.utime(path, (time.time() + 10, time.time() + 10))  # a new time, even on a coarse clock

write("import numpy as np\\n\\ndef wave(x, a=2.0):\\n    return a * np.sin(x) * x\\n")
%load_ext autoreload
%autoreload 2
import edited_wave

def wave_loss(x):
    return np.sum(edited_wave.wave(x) ** 2)

dwave = s2s_ad.grad(wave_loss)
close(dwave(x), fd(wave_loss, x))
print("ok module")
"""

MODULE_EDITED = """
write("import numpy as np\\n\\ndef wave(x, a=3.0):\\n    return a * np.cos(x) * x\\n")
"""

MODULE_RELOADED = """
close(edited_wave.wave(x), 3.0 * np.cos(x) * x)  # autoreload gave the old function the new code
close(dwave(x), fd(wave_loss, x))
close(dwave(x), 18 * np.cos(x) * x * (np.cos(x) - np.sin(x) * x))
close(s2s_ad.grad(edited_wave.wave, wrt=1)(0.5, 1.0), np.cos(0.5) * 0.5)
print("ok module reloaded")
"""

TIMED = """%%time
def timed(x):
    return np.sum(x ** 3)

try:
    s2s_ad.grad(timed)(x)
except s2s_ad.TransformError as exc:
    print("refused:", exc)
close(dnew(x), fd(loss, x))  # a gradient of a function from another cell: timed, it runs
print("ok timed call")
"""

CELLS = [
    ("setup", SETUP), ("imported", IMPORTED), ("helper", HELPER), ("loss", LOSS), ("helper redefined", HELPER_REDEFINED),
    ("loss redefined", LOSS_REDEFINED), ("scaled 2", SCALED.format(scale=2.0, power=2, power_less=1)),
    ("scaled 2 again", SCALED.format(scale=2.0, power=2, power_less=1)),
    ("scaled 5 cubed", SCALED.format(scale=5.0, power=3, power_less=2)),
    ("refused", REFUSED), ("source", SOURCE), ("display", DISPLAY), ("lambda", LAMBDA),
    ("weights", WEIGHTS), ("weighted", WEIGHTED), ("weights changed", WEIGHTS_CHANGED),
    ("inside", INSIDE), ("module", MODULE), ("module edited", MODULE_EDITED),
    ("module reloaded", MODULE_RELOADED), ("timed", TIMED),
]


@pytest.fixture(scope="module")
def notebook(tmp_path_factory: Any) -> dict:
    """The notebook, run: its cells by name."""
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell(text.strip("\n"), metadata={"name": name}) for name, text in CELLS]
    folder = tmp_path_factory.mktemp("notebook")
    client = nbclient.NotebookClient(nb, timeout=180, kernel_name="python3", allow_errors=True,
                                     resources={"metadata": {"path": str(folder)}})
    # the python3 kernel of this environment (ipykernel installs its kernelspec here), before any a
    # user installed for another Python (the setup cell checks it is this Python)
    with mock.patch.dict(os.environ, {"JUPYTER_PREFER_ENV_PATH": "1"}):
        client.execute()
    return {cell.metadata["name"]: cell for cell in nb.cells}


def _stdout(cell: Any) -> str:
    return "".join(o.get("text", "") for o in cell.outputs if o.output_type == "stream" and o.name == "stdout")


def _errors(cell: Any) -> list:
    return [o for o in cell.outputs if o.output_type == "error"]


def _ran(notebook: dict, name: str) -> str:
    """The cell ``name`` ran without an error: its printed text."""
    cell = notebook[name]
    errors = _errors(cell)
    assert not errors, f"cell {name!r}: {errors[0].ename}: {errors[0].evalue}\n" + "\n".join(errors[0].traceback)
    return _stdout(cell)


def test_the_kernel_imports_the_s2s_ad_under_test(notebook):
    assert "ok setup" in _ran(notebook, "setup")


def test_a_function_in_the_cell_that_imports_what_it_calls(notebook):
    assert "ok imported" in _ran(notebook, "imported")


def test_a_function_calling_a_helper_from_an_earlier_cell(notebook):
    _ran(notebook, "helper")
    assert "ok loss" in _ran(notebook, "loss")


def test_a_helper_redefined_in_a_later_cell_changes_the_gradient_taken_before(notebook):
    assert "ok helper redefined" in _ran(notebook, "helper redefined")


def test_the_function_redefined_in_a_later_cell(notebook):
    assert "ok loss redefined" in _ran(notebook, "loss redefined")


def test_a_cell_run_again_as_it_was_and_edited(notebook):
    assert "ok scaled 2.0 2" in _ran(notebook, "scaled 2")
    assert "ok scaled 2.0 2" in _ran(notebook, "scaled 2 again")
    assert "ok scaled 5.0 3" in _ran(notebook, "scaled 5 cubed")  # a new body and a new constant


def test_a_refusal_names_the_cell_and_its_line(notebook):
    cell = notebook["refused"]
    [error] = _errors(cell)
    assert error.ename == "TransformError"
    # As IPython's tracebacks name a cell (the kernel's file name for it is a temporary path)
    label = _stdout(cell).partition("label: ")[2].strip()
    assert label.startswith("Cell") and label.replace(" ", "").endswith(f"In[{cell.execution_count}]"), label
    assert error.evalue.startswith(f"{label}, line 3, column 5: cannot differentiate a try statement"), error.evalue
    assert "ipykernel_" not in error.evalue


def test_the_source_of_a_derivative(notebook):
    text = _ran(notebook, "source")
    assert "def d_loss(x, d_out=1.0):" in text
    assert f"Generated by s2s_ad from loss (Cell In[{notebook['loss redefined'].execution_count}], line 3)" in text
    assert "d_helper" in text  # the helper, from another cell, called through its own adjoint


def test_the_notebook_display_of_a_gradient_is_the_explorers_page(notebook):
    _ran(notebook, "display")
    [result] = [o for o in notebook["display"].outputs if o.output_type == "execute_result"]
    page = result.data["text/html"]
    assert "s2s_ad derivative explorer" in page
    assert "return np.sum(helper(x) ** 3)" in page  # the user's line, read from the cell
    assert "def d_loss" in page
    assert result.data["text/plain"] == "<gradient of loss with respect to x>"


def test_a_lambda_defined_in_a_cell(notebook):
    assert "ok lambda" in _ran(notebook, "lambda")


def test_a_global_array_from_an_earlier_cell_reassigned_and_changed_in_place(notebook):
    _ran(notebook, "weights")
    assert "ok weighted" in _ran(notebook, "weighted")
    assert "ok weights changed" in _ran(notebook, "weights changed")


def test_an_error_inside_generated_code_names_the_cells_line(notebook):
    cell = notebook["inside"]
    assert f"generated from line 2 of Cell In[{cell.execution_count}]" in _ran(notebook, "inside")


def test_a_module_edited_under_autoreload(notebook):
    assert "ok module" in _ran(notebook, "module")
    _ran(notebook, "module edited")
    assert "ok module reloaded" in _ran(notebook, "module reloaded")


def test_a_function_defined_under_a_cell_magic_is_refused_saying_why(notebook):
    text = _ran(notebook, "timed")
    assert "refused:" in text and "its source code cannot be read" in text
    assert "a notebook cell of its own (not one run by a cell magic such as %%time)" in text
    assert "ok timed call" in text
