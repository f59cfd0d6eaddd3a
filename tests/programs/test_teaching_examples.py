"""The teaching examples, run as a user would run them (with fewer steps), checked by what they print."""
import pytest
import pathlib
import re
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parents[2]


def run_example(name, *options):
    """Run examples/<name>.py from the repository's top folder; return its output."""
    done = subprocess.run([sys.executable, f"examples/{name}.py", *options], cwd=ROOT,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    return done.stdout


def numbers(pattern, text):
    return [float(value) for value in re.search(pattern, text).groups()]


def test_deblur_gets_closer_to_the_sharp_image(tmp_path):
    printed = run_example("deblur", "--steps", "120", "--out", str(tmp_path))
    errors = [float(e) for e in re.findall(r"^\s*\d+\s+[\d.]+\s+([\d.]+)$", printed, re.MULTILINE)]
    assert len(errors) >= 3 and all(later < earlier for earlier, later in zip(errors, errors[1:]))
    blurred, recovered = numbers(r"error to truth: ([\d.]+) blurred -> ([\d.]+) recovered", printed)
    assert recovered < 0.5 * blurred
    if "no PNGs written" not in printed:
        assert sorted(p.name for p in tmp_path.iterdir()) == ["blurred.png", "recovered.png", "sharp.png"]


@pytest.mark.slow
def test_heating_schedule_costs_less():
    printed = run_example("building_heating", "--iterations", "100")
    before, after = numbers(r"cost: ([\d.]+) -> ([\d.]+)", printed)
    assert after < 0.5 * before
    assert "day 3, hour by hour" in printed


@pytest.mark.slow
def test_mlp_learns_two_moons():
    printed = run_example("mlp", "--epochs", "1000")
    start, end = numbers(r"training accuracy: ([\d.]+)% -> ([\d.]+)%", printed)
    (held_out,) = numbers(r"accuracy on \d+ new points: ([\d.]+)%", printed)
    assert start < 60 and end > 90 and held_out > 90


def test_newton_reaches_the_minimum_of_rosenbrock():
    printed = run_example("newton")
    hessian = re.search(r"from s2s_ad.hessian: (.*)", printed).group(1)
    by_hand = re.search(r"by hand, .*\]\]: (.*)", printed).group(1)
    assert hessian == by_hand == "[[1330.0, 480.0], [480.0, 200.0]]"
    for n in (2, 4):
        (error,) = numbers(rf"n={n}: max \|x - 1\| = ([\d.e+-]+)", printed)
        assert error < 1e-6


@pytest.mark.slow
def test_checkpointing_saves_memory_and_changes_nothing():
    printed = run_example("checkpointing", "--steps", "4000")
    assert "gradients identical: True" in printed
    (ratio,) = numbers(r"memory ratio \(checkpointed / plain\): ([\d.]+)", printed)
    assert ratio < 0.5


def test_fit_distributions_finds_the_maximum_likelihood_of_scipys_fit():
    pytest.importorskip("scipy.stats")
    printed = run_example("fit_distributions", "--samples", "600")
    fitted = [numbers(pattern, printed) for pattern in (
        r"fitted: +loc ([-\d.]+) +scale ([\d.]+) +df ([\d.]+) +nll ([-\d.]+)",
        r"fitted: +a ([\d.]+) +scale ([\d.]+) +nll ([-\d.]+)")]
    scipys = [numbers(pattern, printed) for pattern in (
        r"SciPy's fit: loc ([-\d.]+) +scale ([\d.]+) +df ([\d.]+) +nll ([-\d.]+)",
        r"SciPy's fit: a ([\d.]+) +scale ([\d.]+) +nll ([-\d.]+)")]
    for ours, theirs in zip(fitted, scipys):
        assert ours[-1] <= theirs[-1] + 1e-6  # a likelihood at least as high as SciPy's own fit's
        assert ours[:-1] == pytest.approx(theirs[:-1], rel=2e-3)
    for run in printed.split("fitted:")[:2]:  # each Newton run ends where the gradient vanishes
        gradients = [float(g) for g in re.findall(r"^\s+\d+\s+[-\d.]+\s+([\d.e+-]+)\s", run, re.MULTILINE)]
        assert len(gradients) >= 2 and gradients[-1] < 1e-5 * gradients[0]


def test_sparse_newton_converges_quadratically_with_few_colours():
    pytest.importorskip("scipy.sparse")
    printed = run_example("sparse_newton", "--grid", "8", "--steps", "2")
    steps = re.findall(r"^step \d+: (\d+) Newton iterations, \|G\| (.*?);", printed, re.MULTILINE)
    assert len(steps) == 2
    for _, norms in steps:
        values = [float(v) for v in norms.split(" -> ")]
        assert values[-1] < 1e-10 and values[-2] < 1e-6  # the last steps square the residual
    assert int(re.search(r"(\d+) colours", printed).group(1)) <= 12
