"""``s2s-ad export``: gradients written as modules that run without s2s_ad (issue 21).

Each module is imported in another Python process where ``import s2s_ad`` fails (a package of that
name raising ImportError comes first on its path, and ``-I`` leaves out PYTHONPATH and the user's
site), and its gradients are compared with ``s2s_ad.grad`` here and with finite differences.
"""
import ast
import os
import pickle
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import s2s_ad
from s2s_ad.core.errors import ExportError
from s2s_ad.api.export import exported
from s2s_ad.frontend.inline import Piece, assemble

import export_functions as ef
from conftest import numeric_grad

ROOT = Path(__file__).resolve().parents[2]
rng = np.random.default_rng(21)
A = rng.normal(size=(3, 3)) + 3 * np.eye(3)

# name: (function, wrt, arguments of the call, arguments given to export (None: code for any))
CASES = {
    "numbers": (ef.numbers, ("x", "y"), (0.7, 1.3), None),
    "numbers_specialised": (ef.numbers, ("x", "y"), (0.7, 1.3), (0.5, 2.0)),
    "arrays": (ef.arrays, ("x", "w"), (rng.normal(size=(3, 4)), rng.normal(size=4)), None),
    "arrays_specialised": (ef.arrays, ("x",), (rng.normal(size=(3, 4)), rng.normal(size=4)),
                           (np.ones((5, 2)), np.ones(2))),
    "arrays_float32": (ef.arrays, ("x",), (rng.normal(size=(2, 3)).astype(np.float32), rng.normal(size=3)), None),
    "loop_writes": (ef.loop_writes, ("x",), (rng.normal(size=6),), None),
    "calls_helper": (ef.calls_helper, ("x", "y"), (rng.normal(size=4), rng.normal(size=4)), None),
    "calls_helper_numbers": (ef.calls_helper, ("y",), (0.3, -0.4), (1.0, 1.0)),
    "calls_stepped_helper": (ef.calls_stepped_helper, ("x", "y"), (rng.normal(size=4), rng.normal(size=4)), None),
    "padded": (ef.padded, ("x",), (rng.normal(size=5),), None),
    "solved": (ef.solved, ("A", "b"), (A, rng.normal(size=3)), None),
    "weighted": (ef.weighted, ("x", "scale"), (rng.normal(size=3), 1.5), None),
}

CHILD = """
import importlib.util, pickle, sys
sys.path.insert(0, sys.argv[1])  # the blocker first: a package s2s_ad that raises ImportError
try:
    import s2s_ad
except ImportError as exc:
    assert "blocked" in str(exc), exc
else:
    raise SystemExit("s2s_ad could be imported")
with open(sys.argv[2], "rb") as f:
    cases = pickle.load(f)
results = {}
for name, path, function, args in cases:
    spec = importlib.util.spec_from_file_location("exported_" + name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    gradient = getattr(module, "grad_" + function)(*args)
    value, again = getattr(module, "value_and_grad_" + function)(*args)
    results[name] = (gradient, value, again)
results["modules"] = sorted(m for m in sys.modules if m.startswith("s2s_ad"))
with open(sys.argv[3], "wb") as f:
    pickle.dump(results, f)
"""


@pytest.fixture(scope="module")
def run_without_s2s_ad(tmp_path_factory):
    """Run the CHILD script on exported modules in a Python where s2s_ad cannot be imported."""
    folder = tmp_path_factory.mktemp("no_s2s_ad")
    blocker = folder / "blocker" / "s2s_ad"
    blocker.mkdir(parents=True)
    (blocker / "__init__.py").write_text("raise ImportError('s2s_ad is blocked in this process')\n")
    script = folder / "child.py"
    script.write_text(CHILD)

    def run(cases):
        given, received = folder / "cases.pickle", folder / "results.pickle"
        given.write_bytes(pickle.dumps(cases))
        environment = {k: v for k, v in os.environ.items() if not k.startswith(("PYTHON", "S2S_AD"))}
        done = subprocess.run([sys.executable, "-I", str(script), str(folder / "blocker"), str(given), str(received)],
                              cwd=folder, capture_output=True, text=True, env=environment, timeout=120)
        assert done.returncode == 0, done.stderr
        return pickle.loads(received.read_bytes())
    return run


def _gradients(value):
    return value if isinstance(value, tuple) else (value,)


def test_exported_gradients_run_without_s2s_ad_and_agree(tmp_path, run_without_s2s_ad):
    cases = []
    for name, (fn, wrt, args, example) in CASES.items():
        path = tmp_path / f"d_{name}.py"
        path.write_text(exported(fn, wrt, example))
        cases.append((name, str(path), fn.__name__, args))
    results = run_without_s2s_ad(cases)
    assert results.pop("modules") == []
    for name, (fn, wrt, args, _) in CASES.items():
        gradient, value, again = results[name]
        want = s2s_ad.grad(fn, wrt=wrt)(*args)
        for got, expected, other, w in zip(_gradients(gradient), _gradients(want), _gradients(again), wrt):
            assert type(got) is type(expected) and np.shape(got) == np.shape(expected), (name, w)
            assert np.result_type(got) == np.result_type(expected), (name, w)
            np.testing.assert_allclose(got, expected, rtol=1e-12, atol=1e-14, err_msg=f"{name} d/d{w}")
            np.testing.assert_array_equal(other, got)
            position = list(fn.__code__.co_varnames).index(w)
            tolerance = 1e-3 if np.result_type(got) == np.float32 else 1e-6
            np.testing.assert_allclose(got, numeric_grad(fn, list(args), position), rtol=tolerance,
                                       atol=tolerance, err_msg=f"{name} d/d{w} against finite differences")
        np.testing.assert_allclose(value, fn(*args), rtol=1e-12)


def test_the_module_needs_no_s2s_ad_and_inlines_the_helpers():
    text = exported(ef.padded, ("x",))
    imports = re.findall(r"^\s*(?:import|from) (\S+)", text, re.MULTILINE)
    assert set(imports) <= {"__future__", "numpy", "math", "numbers", "typing", "operator"}, imports
    assert "def pad_grad(" in text and "def unbroadcast(" in text  # a template's helper and the runtime's
    # (from s2s_ad/templates/... where the package is installed, templates/... in a checkout)
    assert re.search(r"# s2s_ad\.templates\.numpy_shape\.pad_grad, from (s2s_ad/)?templates/numpy_shape\.py", text)
    helper = exported(ef.calls_stepped_helper, ("x", "y"))  # a helper with a loop: called through its adjoint
    assert "def forward_stepped_helper(" in helper and "class d_stepped_helper:" in helper \
        and "d_stepped_helper.backward(" in helper
    short = exported(ef.calls_helper, ("x", "y"))  # a short helper: lowered in place, nothing of its own
    assert "def forward_helper(" not in short and "d_helper" not in short and "np.exp(" in short


def test_the_header_names_source_line_wrt_kinds_version_and_date():
    import datetime

    text = exported(ef.arrays, ("x",), (np.ones((5, 2)), np.ones(2)), today=datetime.date(2026, 11, 26))
    header = text.split('"""')[1]
    assert "exported by s2s_ad 0.1.0 on 2026-11-26" in header
    assert f"Source: {ef.__file__}, line {ef.arrays.__code__.co_firstlineno}, function arrays(x, w)." in header
    assert "With respect to: x." in header
    assert "Specialised for: x array of shape (a, b), w array of shape (b,)." in header
    assert "grad_arrays(x, w)" in header and "value_and_grad_arrays(x, w)" in header
    assert "for any numbers and arrays" in exported(ef.arrays, ("x",)).split('"""')[1]


def _imported(tmp_path, text, name="exported_here"):
    import importlib.util

    path = tmp_path / f"{name}.py"
    path.write_text(text)
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_specialised_code_refuses_arguments_of_other_kinds(tmp_path):
    module = _imported(tmp_path, exported(ef.arrays, ("x",), (np.ones((5, 2)), np.ones(2))))
    module.grad_arrays(np.ones((7, 3)), np.ones(3))  # another length in the same pattern: the same code
    with pytest.raises(TypeError, match="x: exported for"):
        module.grad_arrays(np.ones(3), np.ones(3))
    with pytest.raises(TypeError, match="w: exported for"):
        module.grad_arrays(np.ones((5, 3)), np.ones(5))  # w's length is x's first, not its second: another pattern
    numbers = _imported(tmp_path, exported(ef.numbers, ("x",), (1.0, 2.0)), "exported_numbers")
    with pytest.raises(TypeError, match="y: exported for 'number'"):
        numbers.grad_numbers(1.0, np.ones(2))


def test_generic_code_refuses_containers_and_defaults_stay(tmp_path):
    module = _imported(tmp_path, exported(ef.weighted, ("x",)))
    x = np.array([0.5, -1.0, 2.0])
    np.testing.assert_allclose(module.grad_weighted(x), s2s_ad.grad(ef.weighted)(x))
    np.testing.assert_allclose(module.grad_weighted(x, 1.5, power=3), s2s_ad.grad(ef.weighted)(x, 1.5, power=3))
    with pytest.raises(TypeError, match="takes numbers and arrays"):
        module.grad_weighted([0.5, 1.0, 2.0])


def test_a_value_without_literal_form_is_refused_naming_it():
    with pytest.raises(ExportError, match=r"cannot export the gradient of noisy .*the method normal of a "
                                          r"numpy\.random\._generator\.Generator object"):
        exported(ef.noisy)


def test_a_helper_that_needs_s2s_ad_is_refused_naming_it():
    from s2s_ad.driver import pipeline

    reader = Piece("def f(x):\n    return _draws_privately(x, set())\n", {"f": object()},
                   {"_draws_privately": pipeline._draws_privately})
    with pytest.raises(ExportError, match=r"s2s_ad\.driver\.pipeline\._draws_privately needs s2s_ad: it "
                                          r"reads the module s2s_ad\.\w+\.\w+ \(as \w+\)"):
        assemble([reader])


def test_names_two_definitions_want_are_told_apart():
    """Two helpers named alike (here: ``like`` the function, and a user's constant ``like``)."""
    first = Piece("def f(x):\n    return like(x, 2.0)\n", {"f": object()}, {"like": s2s_ad.core.arguments.like})
    second = Piece("def g(x):\n    return x * like\n", {"g": object()}, {"like": 3.0})
    namespace = {}
    exec(compile(assemble([first, second]), "<assembled>", "exec"), namespace)
    assert namespace["f"](np.float32(1.0)).dtype == np.float32
    assert namespace["g"](2.0) == 6.0


def _cli(*words, cwd=ROOT):
    environment = dict(os.environ, PYTHONPATH=os.pathsep.join(
        [str(ROOT), str(ROOT / "tests")] + [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]))
    return subprocess.run([sys.executable, "-m", "s2s_ad", *words], cwd=cwd, capture_output=True, text=True,
                          env=environment, timeout=120)


def test_the_command_writes_the_module(tmp_path, run_without_s2s_ad):
    out = tmp_path / "d_solved.py"
    done = _cli("export", "tests/corpora/export_functions.py:solved", "--wrt", "A,b", "--args",
                "[[4, 1, 0], [1, 3, 0], [0, 1, 2]], [1, 2, 3]", "-o", str(out))
    assert done.returncode == 0 and done.stdout == f"s2s-ad: wrote {out}\n", done.stderr
    b = np.array([1.0, -2.0, 0.5])
    results = run_without_s2s_ad([("solved", str(out), "solved", (A, b))])
    want = s2s_ad.grad(ef.solved, wrt=("A", "b"))(A, b)
    for got, expected in zip(results["solved"][0], want):
        np.testing.assert_allclose(got, expected, rtol=1e-12)


def test_the_command_refuses_before_writing_anything(tmp_path):
    out = tmp_path / "d_noisy.py"
    done = _cli("export", "tests/corpora/export_functions.py:noisy", "-o", str(out))
    assert done.returncode == 2 and not out.exists()
    assert "cannot export the gradient of noisy" in done.stderr and "Generator" in done.stderr


def test_the_command_s_help_and_the_old_form_still_work():
    assert "needs NumPy alone" in _cli("export", "--help").stdout
    assert "s2s-ad export" in _cli("--help").stdout
    old = _cli("tests/corpora/export_functions.py:numbers")
    assert old.returncode == 0 and "def d_numbers(x, y, d_out=1.0):" in old.stdout
    printed = _cli("export", "tests/corpora/export_functions.py:numbers")
    assert printed.returncode == 0 and "def grad_numbers(x, y):" in printed.stdout


@pytest.mark.parametrize("example", ["quadratic.py:quadratic", "rational.py:f", "logistic.py:logistic"])
def test_the_seed_examples_export(tmp_path, example):
    done = _cli("export", f"examples/{example}", "-o", str(tmp_path / "out.py"))
    assert done.returncode == 0, done.stderr
    compile((tmp_path / "out.py").read_text(), "out.py", "exec")


@pytest.mark.slow
def test_every_user_program_exports_or_is_refused_and_agrees(tmp_path, monkeypatch):
    """tests/corpora/user_programs.py (simulations, in-place updates, np.linalg, loops with early exits...):
    each exported, for any arguments and for the case's, and its gradient equal to s2s_ad.grad's."""
    from conftest import TESTS
    monkeypatch.syspath_prepend(str(TESTS / "programs"))  # (its cases; not on the path where only this folder runs)
    import test_user_programs
    import user_programs

    checked = refused = 0
    for name, (args, _) in test_user_programs.CASES.items():
        fn = getattr(user_programs, name)
        if any(isinstance(a, (dict, list, tuple)) for a in args):
            continue  # containers are not exported (test_generic_code_refuses_containers...)
        want = s2s_ad.grad(fn)(*args)
        for example in (None, args):
            try:
                text = exported(fn, None, example)
            except ExportError as exc:
                assert "container" in str(exc), exc
                refused += 1
                continue
            module = _imported(tmp_path, text, f"exported_{name}_{example is None}")
            np.testing.assert_allclose(getattr(module, f"grad_{fn.__name__}")(*args), want, rtol=1e-12,
                                       atol=1e-14, err_msg=name)
            checked += 1
    assert checked > 100 and refused <= 4, (checked, refused)


@pytest.mark.parametrize("args", [
    (1.0, 2), (True, np.float32(1.0)), (np.ones((3, 1, 4)), np.ones(4), np.ones((4, 3))),
    (np.ones(()), np.ones(1), None, "l2"), (np.ones((30,)),) + tuple(np.ones(n) for n in range(2, 30)),
])
def test_the_check_of_exported_code_reads_kinds_as_s2s_ad_does(args):
    """``argument_pattern`` (run by exported code) gives for each argument what s2s_ad's kind of it
    says (``arguments.kinds_of``): the code is refused exactly where s2s_ad would run other code."""
    from s2s_ad.core.arguments import kinds_of
    from s2s_ad.api.export import _expected, argument_pattern

    assert argument_pattern(args) == tuple(_expected(k) for k in kinds_of(ef.numbers, args))


def test_a_string_to_differentiate_by_is_refused(tmp_path):
    with pytest.raises(ExportError, match="mode = 'l1' has no derivative"):
        exported(ef.by_mode, ("mode",), (np.ones(2), "l1"))
    module = _imported(tmp_path, exported(ef.by_mode, ("x", "mode")), "exported_by_mode")
    with pytest.raises(TypeError, match="mode = 'l1' has no derivative"):
        module.grad_by_mode(np.ones(2), "l1")
    generic = _imported(tmp_path, exported(ef.by_mode), "exported_by_mode_x")
    x = np.array([0.5, -1.5])
    for mode in ("l1", "l2"):  # code for any arguments: the branch taken at run time
        np.testing.assert_allclose(generic.grad_by_mode(x, mode), s2s_ad.grad(ef.by_mode)(x, mode))


def test_a_helper_whose_file_changed_since_import_is_refused(tmp_path, monkeypatch):
    """The source on disk must be the code that runs: a file edited after its import is not copied."""
    module = _imported(tmp_path, "def scaled(x):\n    return 2.0 * x\n", "edited_helper")
    monkeypatch.setitem(sys.modules, "edited_helper", module)
    (tmp_path / "edited_helper.py").write_text("def scaled(x):\n    return 3.0 * x\n")
    import linecache
    linecache.checkcache()
    reader = Piece("def f(x):\n    return scaled(x)\n", {"f": object()}, {"scaled": module.scaled})
    with pytest.raises(ExportError, match="is not the code that runs"):
        assemble([reader])


def test_exported_code_computes_float32_arrays_in_float64_under_any_numpy():
    # A reduction's adjoint spread into an array (np.full) is folded into a 0-d array where the code
    # runs in this process (fills.py); NumPy 1 types a product with a 0-d array by its value, so an
    # exported module, which may run under another NumPy, keeps the spread.
    x = np.linspace(0.5, 1.5, 3, dtype=np.float32)
    w = np.ones((3, 2), dtype=np.float32)
    text = exported(ef.arrays, ("x",), (x, w))
    assert "np.full(" in text and "np.asarray(d_" not in text
    in_process = s2s_ad.grad(ef.arrays, wrt="x")(x, w)
    from s2s_ad.passes.fills import ZERO_D_TYPED  # (in process the spread is folded on NumPy 2 alone)
    assert ("np.asarray(d_" in s2s_ad.grad(ef.arrays, wrt="x").source_for(x, w)) == ZERO_D_TYPED
    namespace: dict = {}
    exec(compile(text, "exported", "exec"), namespace)
    exported_gradient = namespace["grad_arrays"](x, w)
    np.testing.assert_array_equal(exported_gradient, in_process)
    assert exported_gradient.dtype == in_process.dtype


def test_a_global_array_keeps_the_users_name_in_generated_and_exported_code(tmp_path):
    """ef.weighted reads the module's WEIGHTS: the generated code and the exported module call it
    WEIGHTS (not a generic name such as ``array``), and the exported module's WEIGHTS gives the gradient
    2 * scale * WEIGHTS * x, worked out by hand."""
    x = np.array([0.5, -1.0, 2.0])
    generated = s2s_ad.grad(ef.weighted).source_for(x, 1.5)
    text = exported(ef.weighted, ("x",), None)
    for code in (generated, text):
        adjoint = next(node for node in ast.walk(ast.parse(code))
                       if isinstance(node, ast.FunctionDef) and node.name == "d_weighted")
        names = {node.id for node in ast.walk(adjoint) if isinstance(node, ast.Name)}
        assert "WEIGHTS" in names and not any(re.fullmatch(r"array(_\d+)?", n) for n in names), code
    assert "\nWEIGHTS = np.array([1.0, 2.0, 3.0], dtype=np.dtype('<f8'))\n" in text
    module = _imported(tmp_path, text)
    np.testing.assert_array_equal(module.WEIGHTS, ef.WEIGHTS)
    np.testing.assert_allclose(module.grad_weighted(x, 1.5), 2 * 1.5 * ef.WEIGHTS * x)
