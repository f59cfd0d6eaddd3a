"""The lowered form satisfies the SSA invariants, and the checker catches violations."""
import ast
import operator
import sys
from pathlib import Path

import gast
import numpy as np
import pytest

import s2s_ad.lowering.lower
import s2s_ad.lowering.lower_scan
import s2s_ad.core.nodes
import s2s_ad.frontend.parse
from s2s_ad.core import ir
from s2s_ad.lowering.lower import lower
from s2s_ad.frontend.parse import parse_function
import seed_functions
from conftest import function_from_file


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



def _branchy(n):
    """f(x): an if whose branches assign n names, read after it."""
    then = "".join(f"        a{i} = x * {i + 1}.0\n" for i in range(n))
    orelse = "".join(f"        a{i} = x\n" for i in range(n))
    total = " + ".join(f"a{i}" for i in range(n))
    return f"def f(x):\n    if x > 0:\n{then}    else:\n{orelse}    return {total}\n"


def test_lowering_walks_a_block_a_fixed_number_of_times(tmp_path, monkeypatch):
    """Parsing and lowering walk the tree, or an if or loop in it, a number of times that does not grow
    with the number of names the block assigns (it once walked the block again for each name)."""
    walks = []

    def counting(walk):
        def counted(node):
            walks.append(node)
            return walk(node)
        return counted

    monkeypatch.setattr(gast, "walk", counting(gast.walk))
    # every module of parsing and lowering that walks a tree (lowering is split into parts: lower_*.py)
    walkers = [module for name, module in sorted(sys.modules.items())
               if name.startswith("s2s_ad.") and getattr(module, "all_nodes", None) is s2s_ad.core.nodes.all_nodes]
    assert {s2s_ad.frontend.parse, s2s_ad.lowering.lower_scan} <= set(walkers)
    for module in walkers:
        monkeypatch.setattr(module, "all_nodes", counting(module.all_nodes))
    counts = []
    for n in (3, 30):
        walks.clear()
        ssa = lower(parse_function(function_from_file(tmp_path, f"branchy_{n}", _branchy(n))))
        ir.check_ssa(ssa)
        counts.append(len(walks))
    assert counts[0] == counts[1]


# The parts of lowering, each below the ones after it (lower.py's docstring): a part imports only parts before it.
LOWERING_PARTS = ["lower_scan", "lower_state", "lower_ssa", "lower_containers", "lower_views",
                  "lower_updates", "lower_writes", "lower_loops", "lower_joins", "lower_calls", "lower_control", "lower"]


def test_the_parts_of_lowering_import_downward_only():
    for i, part in enumerate(LOWERING_PARTS):
        tree = ast.parse(Path(s2s_ad.lowering.lower.__file__).with_name(f"{part}.py").read_text())
        imported = {node.module for node in ast.walk(tree)
                    if isinstance(node, ast.ImportFrom) and node.level == 1 and node.module in LOWERING_PARTS}
        assert imported <= set(LOWERING_PARTS[:i]), f"{part} imports {sorted(imported - set(LOWERING_PARTS[:i]))}"
    assert "lower_ssa" in imported and "lower_state" in imported  # (the driver's own imports were read)
