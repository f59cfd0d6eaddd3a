"""The s2s-ad command and the examples, run as a user would run them."""
import importlib.util
import pathlib
import re
import shutil
import subprocess
import sys

import numpy as np
import pytest

import s2s_ad

ROOT = pathlib.Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples"


def run(*args, **kwargs):
    return subprocess.run([sys.executable, *args], capture_output=True, text=True, timeout=120, **kwargs)


def test_cli_prints_the_adjoint():
    done = run("-m", "s2s_ad", f"{EXAMPLES / 'rational.py'}:f", "--wrt", "x,y", "--args", "3,2")
    assert done.returncode == 0, done.stderr
    assert "def d_f(x, y, d_out=1.0):" in done.stdout and "unbroadcast" not in done.stdout


def test_cli_stages():
    done = run("-m", "s2s_ad", f"{EXAMPLES / 'rational.py'}:f", "--stage", "ssa")
    assert done.returncode == 0 and "def f(x, y):" in done.stdout and "reverse sweep" not in done.stdout


def test_console_script_is_installed():
    script = pathlib.Path(sys.executable).with_name("s2s-ad")
    if not script.exists():
        pytest.skip("s2s-ad is not installed next to this interpreter")
    done = subprocess.run([str(script), f"{EXAMPLES / 'quadratic.py'}:quadratic"], capture_output=True, text=True)
    assert done.returncode == 0 and "def d_quadratic(" in done.stdout


@pytest.mark.parametrize("target", ["nope.py:f", "examples/rational.py:missing", "examples/no_such_file.py",
                                    "pyproject.toml:f"])  # a file Python cannot import as a module
def test_cli_errors_are_one_line_and_exit_2(target):
    done = run("-m", "s2s_ad", target, cwd=ROOT)
    assert done.returncode == 2
    assert len(done.stderr.strip().splitlines()) == 1 and "Traceback" not in done.stderr


def test_cli_transform_error_is_one_line(tmp_path):
    bad = tmp_path / "bad.py"
    bad.write_text("def f(x):\n    exec('y = 1')\n    return x\n")
    done = run("-m", "s2s_ad", f"{bad}:f")
    assert done.returncode == 2 and "bad.py:2" in done.stderr and "Traceback" not in done.stderr


def test_cli_help_shows_examples():
    done = run("-m", "s2s_ad", "--help")
    assert done.returncode == 0 and "examples:" in done.stdout


def test_rational_example_prints_the_seed_answer():
    done = run(str(EXAMPLES / "rational.py"))
    assert done.returncode == 0, done.stderr
    d_x, d_y = map(float, re.search(r"gradient at \(3, 2\): \(([-\d.]+), ([-\d.]+)\)", done.stdout).groups())
    assert d_x == pytest.approx(13 / 18, abs=1e-6) and d_y == pytest.approx(-7 / 9, abs=1e-6)
    assert "def d_f(" in done.stdout


def test_quadratic_example_prints_the_four_partials():
    done = run(str(EXAMPLES / "quadratic.py"))
    assert done.returncode == 0, done.stderr
    values = dict(re.findall(r"dy/d(\w) = ([-\d.]+)", done.stdout))
    a, b, x = 2.0, -3.0, 1.5
    assert float(values["a"]) == pytest.approx(x * x)
    assert float(values["b"]) == pytest.approx(x)
    assert float(values["c"]) == pytest.approx(1.0)
    assert float(values["x"]) == pytest.approx(2 * a * x + b)


def test_logistic_example_matches_finite_differences():
    done = run(str(EXAMPLES / "logistic.py"))
    assert done.returncode == 0, done.stderr
    ours, theirs = map(float, re.search(r"d/dr = ([-\d.]+) \(finite differences: ([-\d.]+)\)", done.stdout).groups())
    assert ours == pytest.approx(theirs, abs=1e-5)
    assert "tape.append(s)" in done.stdout and "s = tape.pop()" in done.stdout


def test_readme_shows_the_code_the_commands_print():
    readme = (ROOT / "README.md").read_text()
    done = run("-m", "s2s_ad", f"{EXAMPLES / 'rational.py'}:f", "--wrt", "x,y", "--args", "3,2")
    assert done.stdout.strip() in readme


# The listings and examples of docs/ (the loop and its tape, the forward-mode code, the rule
# example) run, and are compared with what they print, in test_docs_snippets.py.


def test_cli_forward_mode():
    done = run("-m", "s2s_ad", f"{EXAMPLES / 'rational.py'}:f", "--wrt", "x,y", "--mode", "forward", "--args", "3,2")
    assert done.returncode == 0, done.stderr
    assert "def jvp_f(x, y, t_x, t_y):" in done.stdout
    for line in ("t_b = t_x - t_y", "t_c = t_x * b + a * t_b"):
        assert line in done.stdout


def test_cli_lists_the_functions_of_a_file(tmp_path):
    script = tmp_path / "two.py"
    script.write_text("def fine(x):\n    return x * x\n\n\ndef refused(x):\n    try:\n        return x\n"
                      "    except ValueError:\n        return 0.0\n")
    done = run("-m", "s2s_ad", str(script))
    assert done.returncode == 0, done.stderr
    assert "fine(x)  ok (its gradient by x builds)\n" in done.stdout
    assert "refused(x)  refused:" in done.stdout and "a try statement" in done.stdout


def test_cli_listing_builds_the_gradient_so_a_call_without_a_rule_is_refused(tmp_path):
    """The listing says "ok" only for what the transform takes: a call of SciPy's lfilter (no rule,
    source that cannot be differentiated) lowers, but its gradient is refused, as FILE:FUNC says."""
    pytest.importorskip("scipy")
    script = tmp_path / "filters.py"
    script.write_text("import numpy as np\nfrom scipy.signal import lfilter\n\n\ndef smooth(x):\n"
                      "    return np.sum(lfilter([0.5, 0.5], [1.0], x) ** 2)\n\n\ndef none():\n    return 1.0\n")
    listing = run("-m", "s2s_ad", str(script))
    assert listing.returncode == 0, listing.stderr
    lines = listing.stdout.splitlines()
    assert lines[0] == "none()  ok as far as lowering (it has no parameter to differentiate by)"
    assert lines[1].startswith(f"smooth(x)  refused: {script}:6: cannot differentiate the call of "
                               "scipy.signal.lfilter: it has no derivative rule")
    single = run("-m", "s2s_ad", f"{script}:smooth")
    assert single.returncode == 2 and single.stderr == f"s2s-ad: {lines[1].split('refused: ', 1)[1]}\n"


def test_cli_second_order_by_an_array_prints_the_hessians_code(tmp_path):
    """--order 2 by an array parameter is the Hessian's code (what s2s_ad.hessian runs), not a refusal
    pointing to the Python API; above order 2 a refusal saying so."""
    script = tmp_path / "energy.py"
    script.write_text("import numpy as np\n\n\ndef energy(x):\n    return np.sum(x ** 3) + x[0] * x[1]\n")
    done = run("-m", "s2s_ad", f"{script}:energy", "--order", "2", "--args", "[1.0, 2.0]")
    assert done.returncode == 0, done.stderr
    header, _, code = done.stdout.partition("\n")
    assert header == ("# The Hessian of energy by x (s2s_ad.hessian): the code below runs once per element of x, "
                      "its tangent a unit vector, and gives the Hessian's column.")
    module = importlib.util.module_from_spec(importlib.util.spec_from_file_location("energy", script))
    module.__spec__.loader.exec_module(module)
    x = np.array([1.0, 2.0])
    assert code == s2s_ad.hessian(module.energy).source_for(x)
    np.testing.assert_allclose(s2s_ad.hessian(module.energy)(x), [[6.0, 1.0], [1.0, 12.0]])  # by hand
    third = run("-m", "s2s_ad", f"{script}:energy", "--order", "3", "--args", "[1.0, 2.0]")
    assert third.returncode == 2 and third.stderr == (
        "s2s-ad: --order 3 by x, an array: s2s-ad prints the code of derivatives of an array parameter up to "
        "the second, the Hessian's (--order 2)\n")


@pytest.mark.slow
def test_cli_higher_order_diff_and_no_optimize(tmp_path):
    script = tmp_path / "cubic.py"
    script.write_text("def cubic(x):\n    return x * x * x * 1.0 + (x - x) * 0.0\n")
    second = run("-m", "s2s_ad", f"{script}:cubic", "--order", "2", "--args", "0.5")
    assert second.returncode == 0 and "def derivative_gradient_cubic(x):" in second.stdout
    diff = run("-m", "s2s_ad", f"{script}:cubic", "--diff", "--args", "0.5")
    assert diff.returncode == 0 and "--- as generated" in diff.stdout and "+++ optimized" in diff.stdout
    raw = run("-m", "s2s_ad", f"{script}:cubic", "--no-optimize", "--args", "0.5")
    optimized = run("-m", "s2s_ad", f"{script}:cubic", "--args", "0.5")
    assert raw.stdout != optimized.stdout


def test_cli_check_compares_with_finite_differences(tmp_path):
    done = run("-m", "s2s_ad", f"{EXAMPLES / 'rational.py'}:f", "--wrt", "x,y", "--check", "3,2")
    assert done.returncode == 0 and done.stdout.startswith("ok: worst component")
    script = tmp_path / "wrong.py"
    script.write_text("import numpy as np\nimport s2s_ad\n\n\ndef box(x):\n    return float(np.cbrt(x))\n\n\n"
                      "@s2s_ad.adjoint(box)\ndef _(out, x, d_out):\n    d_x = d_out * 2.0\n\n\n"
                      "def uses(x):\n    return box(x) * x\n")
    done = run("-m", "s2s_ad", f"{script}:uses", "--check", "2.0")
    assert done.returncode == 1 and done.stdout.startswith("MISMATCH")


def test_cli_dot_graph_marks_the_adjoints_path():
    done = run("-m", "s2s_ad", f"{EXAMPLES / 'logistic.py'}:logistic", "--wrt", "r,x", "--format", "dot")
    assert done.returncode == 0, done.stderr
    text = done.stdout
    assert text.startswith('digraph "logistic" {') and text.rstrip().endswith("}")
    assert "subgraph cluster_0" in text and 'label="for i in steps"' in text
    assert '"r" -> "prod"' in text and '"prod" -> "r" [style=dashed' in text
    if shutil.which("dot"):  # Graphviz, where installed, draws it
        drawn = subprocess.run(["dot", "-Tsvg"], input=text, capture_output=True, text=True, timeout=60)
        assert drawn.returncode == 0 and "<svg" in drawn.stdout


def test_cli_names_a_missing_function_in_one_line():
    done = run("-m", "s2s_ad", f"{EXAMPLES / 'rational.py'}:nothing")
    assert done.returncode == 2 and done.stderr.count("\n") == 1 and "defines no function" in done.stderr


def test_objects_example_gradient_matches_differences_and_the_fit_improves():
    done = run(str(EXAMPLES / "objects.py"), "--steps", "15")
    assert done.returncode == 0, done.stderr
    assert float(re.search(r"largest difference: ([-\d.e+]+)", done.stdout).group(1)) < 1e-6
    before, after = map(float, re.search(r"misfit ([\d.]+) -> ([\d.]+)", done.stdout).groups())
    assert after < before


def test_layers_example_gradient_matches_differences_and_the_fit_improves():
    done = run(str(EXAMPLES / "layers.py"), "--steps", "30")
    assert done.returncode == 0, done.stderr
    assert float(re.search(r"largest difference from central differences: ([-\d.e+]+)", done.stdout).group(1)) < 1e-6
    before, after = map(float, re.search(r"loss ([\d.]+) -> ([\d.]+)", done.stdout).groups())
    assert after < 0.5 * before


def test_order_two_without_args_says_it_is_the_code_for_numbers(tmp_path):
    script = tmp_path / "cubes.py"
    script.write_text("import numpy as np\n\n\ndef cubes(x):\n    return np.sum(x ** 3)\n")
    done = run("-m", "s2s_ad", f"{script}:cubes", "--order", "2")
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("# The 2-th derivative's code for numbers") and "--args" in done.stdout.splitlines()[0]
    hessian = run("-m", "s2s_ad", f"{script}:cubes", "--order", "2", "--args", "[1.0, 2.0]")
    assert hessian.returncode == 0 and hessian.stdout.startswith("# The Hessian of cubes by x"), hessian.stderr
