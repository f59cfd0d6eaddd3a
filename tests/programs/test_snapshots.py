"""The generated source of the seed examples, checked in as expected text.

Any change to code generation shows up here as a diff to review.  To accept
new output: ``S2S_AD_UPDATE_SNAPSHOTS=1 pytest tests/programs/test_snapshots.py``,
then read the diff of ``tests/snapshots/`` before committing it.
"""
import os
import pathlib

import pytest

import s2s_ad
import seed_functions as seeds

SNAPSHOTS = pathlib.Path(__file__).resolve().parents[1] / "snapshots"

CASES = {
    "quadratic_numbers": (seeds.quadratic, ("a", "b", "c", "x"), (2.0, -3.0, 0.5, 1.5)),
    "tensor_example_numbers": (seeds.tensor_example, (0, 1), (3.0, 10.0)),
    "rational_numbers": (seeds.rational, ("x", "y"), (3.0, 2.0)),
    "rational_by_steps_numbers": (seeds.rational_by_steps, ("x", "y"), (3.0, 2.0)),
    "rational_by_steps_generic": (seeds.rational_by_steps, ("x", "y"), None),
    "square_plus_product_numbers": (seeds.square_plus_product, (0, 1), (2.0, 3.0)),
}


# The code ``grad`` runs (``df.source_for``): the gradient alone, without what only the value needs.
GRAD_CASES = {
    "quadratic_numbers_grad": (seeds.quadratic, ("a", "b", "c", "x"), (2.0, -3.0, 0.5, 1.5)),
    "rational_by_steps_numbers_grad": (seeds.rational_by_steps, ("x", "y"), (3.0, 2.0)),
}


def _matches_snapshot(name, text):
    path = SNAPSHOTS / f"{name}.py.txt"
    if os.environ.get("S2S_AD_UPDATE_SNAPSHOTS"):
        path.write_text(text)
    assert path.exists(), f"no snapshot {path.name}: run with S2S_AD_UPDATE_SNAPSHOTS=1 and review it"
    assert text == path.read_text()


@pytest.mark.parametrize("name", sorted(CASES))
def test_generated_source_matches_snapshot(name):
    fn, wrt, args = CASES[name]
    _matches_snapshot(name, s2s_ad.source(fn, wrt=wrt, args=args))


@pytest.mark.parametrize("name", sorted(GRAD_CASES))
def test_grads_generated_source_matches_snapshot(name):
    fn, wrt, args = GRAD_CASES[name]
    _matches_snapshot(name, s2s_ad.grad(fn, wrt=wrt).source_for(*args))


def test_rational_adjoint_is_as_short_as_a_hand_written_one():
    text = (SNAPSHOTS / "rational_by_steps_numbers.py.txt").read_text()
    sweep = text.split("# reverse sweep")[1]
    assert "unbroadcast" not in text and "zeros" not in text
    assert len([line for line in sweep.splitlines() if "=" in line]) <= 10
