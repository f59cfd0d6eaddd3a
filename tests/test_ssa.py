"""The lowered form satisfies the SSA invariants, and the checker catches violations."""
import operator

import numpy as np
import pytest

from s2s_ad import ir
from s2s_ad.lower import lower
from s2s_ad.parse import parse_function
import seed_functions


def reassigning(x, y):
    x = x * 2.0
    x = x + y
    y = -x
    a, b = x, y
    a += np.sin(b) ** 2
    return a * b


def indexing(x):
    z = x[1:-1, 2] + x[0]
    return np.sum(z ** 2)


FUNCTIONS = [reassigning, indexing, seed_functions.rational, seed_functions.quadratic,
             seed_functions.deblur_loss]


@pytest.mark.parametrize("fn", FUNCTIONS, ids=lambda f: f.__name__)
def test_lowered_functions_satisfy_the_invariants(fn):
    ssa = lower(parse_function(fn))
    ir.check_ssa(ssa)
    for stmt in ssa.body[:-1]:
        assert isinstance(stmt.value, ir.Call)  # copies and constants are propagated, not emitted


def test_reassigned_names_get_versions():
    ssa = lower(parse_function(reassigning))
    targets = [s.target for s in ssa.body if isinstance(s, ir.Assign)]
    assert "x_1" in targets and "x_2" in targets
    assert len(targets) == len(set(targets))


def test_intermediates_are_named_after_the_users_names():
    ssa = lower(parse_function(seed_functions.rational))
    targets = [s.target for s in ssa.body if isinstance(s, ir.Assign)]
    assert targets[:2] == ["x_plus_1", "x_minus_y"]
    assert targets[-1] == "out"


def _function(body, params=("x",)):
    return ir.Function("f", list(params), body)


@pytest.mark.parametrize("body, complaint", [
    ([ir.Assign("a", ir.Call(operator.neg, (ir.Var("x"),))), ir.Assign("a", ir.Var("x")), ir.Return(ir.Var("a"))],
     "assigned twice"),
    ([ir.Assign("a", ir.Call(operator.neg, (ir.Var("b"),))), ir.Return(ir.Var("a"))], "read before"),
    ([ir.Assign("a", ir.Call(operator.neg, (ir.Call(operator.neg, (ir.Var("x"),)),))), ir.Return(ir.Var("a"))],
     "nested call"),
    ([ir.Assign("a", ir.Call(operator.neg, (ir.Var("x"),)))], "end with a Return"),
    ([ir.Return(ir.Call(operator.neg, (ir.Var("x"),)))], "compound"),
])
def test_the_checker_catches_each_violation(body, complaint):
    with pytest.raises(ir.SSAViolation, match=complaint):
        ir.check_ssa(_function(body))
