"""The tape as IR statements made from one recording plan, and the split form cut from it (issue 18,
part 2; issue 19, item 1).

The split form (forward part / backward part: what ``vjp`` runs, and what runs when a differentiated
function calls a helper) once pushed a local array bound on some paths only on every path
(``UnboundLocalError`` at ``tape = (c, ..., tape)``) and read names the forward part never handed over
(``NameError``).  Each example is checked in ``vjp``, in ``grad`` of a caller and in ``grad``, against
central finite differences.  The functions are in recording_plan_functions.py.
"""
import dataclasses

import numpy as np
import pytest

import s2s_ad
from s2s_ad.core import ir
from s2s_ad.core.kinds import NUMBER
from s2s_ad.passes.optimize import optimize
from s2s_ad.driver.pipeline import _analysed, build_split, lowered
from s2s_ad.ad.plan import CUT
from s2s_ad.ad.reverse import reverse
from s2s_ad.ad.tape import TapeViolation, check_tape, drop_unread_records, split_parts
from s2s_ad.targets.target import TupleTape
import recording_plan_functions as rf
from conftest import assert_gradient_matches, numeric_grad

V = np.array([0.3, -0.7, 1.1, 0.4])


def _vjp_matches(f, args, wrt, cotangent=1.0):
    """``vjp(f)(cotangent)`` agrees with central differences of ``cotangent * f`` by each of ``wrt``."""
    out, pull = s2s_ad.vjp(f, *args)
    np.testing.assert_allclose(out, f(*args), rtol=1e-12)
    pulled = pull(cotangent)
    for i in wrt:
        want = numeric_grad(lambda *a: cotangent * f(*a), args, i)
        np.testing.assert_allclose(pulled[i], want, rtol=1e-5, atol=1e-6, err_msg=f"{f.__name__} d/d{i} at {args}")


# -- a value bound on some paths only is recorded only on those paths ----------------------------

@pytest.mark.parametrize("k", [0, 1])
def test_a_local_array_made_after_an_early_return_in_vjp_and_grad(k):
    _vjp_matches(rf.made_after_early_return, (0.7, k), [0])
    assert_gradient_matches(rf.made_after_early_return, (0.7, k))


@pytest.mark.parametrize("n", [0, 1, 3])
def test_a_local_array_made_in_a_loop_body_that_runs_zero_times_or_continues_before_it(n):
    for f in (rf.made_in_loop_body, rf.made_after_continue):
        _vjp_matches(f, (V, n), [0])
        assert_gradient_matches(f, (V, n))


def test_grad_of_a_caller_of_helpers_whose_array_is_bound_on_some_paths_only():
    assert_gradient_matches(rf.calls_early_return, (0.7,))
    assert_gradient_matches(rf.calls_continue, (V,))


@pytest.mark.parametrize("k", [0, 1, 3])
def test_a_recursive_helper_with_a_base_case_that_copies_and_updates_an_array(k):
    _vjp_matches(rf.copies_and_updates, (V, k), [0])
    assert_gradient_matches(rf.copies_and_updates, (V, k))
    got = assert_gradient_matches(rf.calls_the_recursive_helper, (V,))
    np.testing.assert_allclose(got, 1.5 * 2 * V * np.array([16.0, 1.0, 1.0, 1.0]))  # closed form


def test_the_forward_part_hands_over_no_array_bound_on_some_paths_only():
    source = build_split(rf.made_after_early_return, (NUMBER, NUMBER)).source
    forward = source[:source.index("def backward_")]
    handed = [line for line in forward.splitlines() if line.startswith("    tape.append(")][-1]  # the cut
    assert "b" not in handed.split("((", 1)[1].rsplit("))", 1)[0].split(", "), source
    assert "        tape.append((ones_3, b))" in forward  # recorded on the path that binds it (range(3): made again)


# -- the backward part reads only what the forward part hands over --------------------------------

def test_ones_then_two_updates_hands_x_over():
    """b = np.ones(4); b[1] += b[0] * x; b[2] = x: the backward part read x without it."""
    _vjp_matches(rf.ones_then_updates, (0.7,), [0])
    got = assert_gradient_matches(rf.ones_then_updates, (0.7,))
    assert got == pytest.approx(2 + 4 * 0.7)  # b = [1, 1 + x, x, 1]: d/dx sum(b * b) = 2 (1 + x) + 2 x
    assert_gradient_matches(rf.calls_ones_then_updates, (0.7,))


def test_a_slice_update_then_a_row_write_of_a_2d_buffer_returned_in_a_tuple():
    v = V[:3]
    out, pull = s2s_ad.vjp(rf.buffer_in_tuple, 0.7, v)
    cotangent = (np.arange(9.0).reshape(3, 3), 2.0)
    d_x, d_v = pull(cotangent)

    def scalar(x, v):
        buf, same = rf.buffer_in_tuple(x, v)
        return float(np.sum(buf * cotangent[0]) + 2.0 * same)
    np.testing.assert_allclose(d_x, numeric_grad(scalar, (0.7, v), 0), rtol=1e-6)
    np.testing.assert_allclose(d_v, numeric_grad(scalar, (0.7, v), 1), rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(d_v, cotangent[0][2])  # closed form: buf[2] = v * 1
    assert_gradient_matches(rf.calls_buffer_in_tuple, (0.7, v), wrt=(0, 1))


def test_a_sine_of_a_local_array_written_later_is_handed_over():
    _vjp_matches(rf.sine_of_local_array, (0.7,), [0])
    assert_gradient_matches(rf.sine_of_local_array, (0.7,))


@pytest.mark.parametrize("x, v", [(0.7, V), (0.7, -V), (-0.4, np.array([-0.3, 0.9, 0.2, 0.1]))])
def test_a_branch_test_computed_from_a_local_array_written_later(x, v):
    _vjp_matches(rf.test_from_array_written_later, (x, v), [0, 1])
    assert_gradient_matches(rf.test_from_array_written_later, (x, v), wrt=(0, 1))
    assert_gradient_matches(rf.calls_test_from_array_written_later, (x, v), wrt=(0, 1))


# -- the plan, and the checker that reads it ---------------------------------------------------------

def _split_adjoint(f, kinds):
    _, ssa = lowered(f)
    ssa, facts = _analysed(ssa, ssa.params, kinds)
    return optimize(reverse(ssa, ssa.params, facts, callee=build_split, split=True), ssa.body)


def test_pushes_and_pops_are_statements_made_from_the_plan():
    adjoint = _split_adjoint(rf.made_after_early_return, (NUMBER, NUMBER))
    plan = adjoint.plan
    nodes = [s for s in ir.walk(adjoint.body) if isinstance(s, (ir.Push, ir.Pop))]
    assert nodes and {n.slot for n in nodes} == plan.names()
    for pop in (n for n in nodes if isinstance(n, ir.Pop)):
        assert pop.targets == tuple(v.target for v in plan.slot(pop.slot).values)
    loop_slot = next(s for s in plan.slots if s.where.startswith("each trip of the loop"))
    (trips,) = loop_slot.trips  # one loop around it, its trip count known when it starts
    assert isinstance(trips, ir.Call) and trips.fn is len
    assert str(next(v.kind for v in loop_slot.values if v.target == "b_part")) == "number"
    assert "b" not in {v.target for v in plan.slot(CUT).values}  # bound on one path only
    check_tape(adjoint)
    spelled = TupleTape().spell(adjoint)
    assert not any(isinstance(s, (ir.Push, ir.Pop)) for s in ir.walk(spelled.body))


def test_the_checker_rejects_a_deliberately_unpaired_plan():
    adjoint = _split_adjoint(rf.made_after_early_return, (NUMBER, NUMBER))
    check_tape(adjoint)
    plan = adjoint.plan
    slot = plan.slots[0]
    # a slot the plan declares that nothing pops: an unread record
    pops = [s for s in ir.walk(adjoint.body) if isinstance(s, ir.Pop) and s.slot == slot.name]
    unpopped = dataclasses.replace(adjoint, body=ir.replace_statements(adjoint.body, {p.sid: None for p in pops}))
    with pytest.raises(TapeViolation, match="never read back"):
        check_tape(unpopped)
    # a slot holding one value fewer than its pushes and pops carry
    fewer = dataclasses.replace(plan, slots=(dataclasses.replace(slot, values=slot.values[1:]),) + plan.slots[1:])
    with pytest.raises(TapeViolation, match="holds"):
        check_tape(dataclasses.replace(adjoint, plan=fewer))
    # a pop of a slot the plan lacks
    with pytest.raises(TapeViolation, match="lacks"):
        check_tape(dataclasses.replace(adjoint, plan=plan.replaced({slot.name: None})))
    # pops out of order: the cut popped last, after every other slot, where it was pushed last
    cut_pop = adjoint.body[next(i for i, s in enumerate(adjoint.body) if isinstance(s, ir.Pop) and s.slot == CUT)]
    adjoint.body.remove(cut_pop)
    adjoint.body.insert(len(adjoint.body) - 1, cut_pop)
    with pytest.raises(TapeViolation, match="pops"):
        check_tape(adjoint)


def test_the_split_form_is_cut_from_the_plan_and_checked():
    adjoint = drop_unread_records(_split_adjoint(rf.ones_then_updates, (NUMBER,)))
    check_tape(adjoint)
    forward, backward = split_parts(adjoint, "ones_then_updates")
    assert isinstance(forward.body[-2], ir.Push) and forward.body[-2].slot == CUT
    assert isinstance(backward.body[0], ir.Pop) and backward.body[0].slot == CUT
    assert "x" in backward.body[0].targets
    # a backward part that reads what the cut does not hand over is refused, never run
    cut = adjoint.plan.slot(CUT)
    position = next(i for i, v in enumerate(cut.values) if v.target == "x")
    lacking = {}
    for stmt in ir.walk(adjoint.body):
        if isinstance(stmt, ir.Push) and stmt.slot == CUT:
            lacking[stmt.sid] = ir.Push(CUT, stmt.values[:position] + stmt.values[position + 1:])
        elif isinstance(stmt, ir.Pop) and stmt.slot == CUT:
            lacking[stmt.sid] = ir.Pop(CUT, stmt.targets[:position] + stmt.targets[position + 1:])
    broken = dataclasses.replace(adjoint, body=ir.replace_statements(adjoint.body, lacking),
                                 plan=adjoint.plan.replaced({CUT: cut.without({position})}))
    check_tape(broken)  # paired: only the cut is wrong
    with pytest.raises(TapeViolation, match=r"reads \['x'\]"):
        split_parts(broken, "ones_then_updates")


def test_the_facts_dump_prints_the_plan():
    text = s2s_ad.source(rf.made_after_early_return, stage="facts", args=(0.7, 1))
    assert "# recorded on the tape:" in text
    assert "#   s1: the store at line" in text and "the part of b it overwrites" in text
    assert "each trip of the loop at line" in text and "len(steps) records at most" in text
    assert "b_part (number)" in text


@pytest.mark.parametrize("n", [0, 1, 3])
def test_an_early_return_from_a_loop_then_a_buffer_written_by_index(n):
    args = (0.7, V, n)
    _vjp_matches(rf.returns_from_loop_then_writes_buffer, args, [0, 1])
    assert_gradient_matches(rf.returns_from_loop_then_writes_buffer, args, wrt=(0, 1))


@pytest.mark.parametrize("n", [0, 1, 5])
def test_a_checkpointed_loop_replayed_by_the_backward_part_gets_what_it_reads(n):
    _vjp_matches(rf.replayed_segment_reads_a_parameter, (0.7, n), [0])
    got = assert_gradient_matches(rf.replayed_segment_reads_a_parameter, (0.7, n))
    assert got == pytest.approx(2.0 * (1.0 - 0.5 ** n))  # closed form: s_n = x (1 + 1/2 + ... + 1/2^(n-1))
