"""The tape holds exactly what the reverse sweep needs, and is empty after a call.

The code that runs keeps the tape in one list used as a stack
(``tape.append(s)`` pushes, ``s = tape.pop()`` pops, ``[]`` is empty; a
record of several values is one tuple).  These tests run the generated
source with probes spliced in: a copy of the tape where the forward sweep
ends, the tape itself before the final return.
"""
import gc
import inspect

import pytest

import s2s_ad
from s2s_ad.driver.pipeline import build_reverse
from s2s_ad.core.kinds import NUMBER
import call_functions
import control_flow_functions as cf


def _records(tape) -> list:
    """What a tape holds, oldest record first: one tuple of values per push (the records of these
    functions hold numbers: a tuple is a record of several)."""
    return [record if isinstance(record, tuple) else (record,) for record in tape]


def _probed(fn, wrt, kinds):
    """The compiled adjoint; each call appends (tape after the forward sweep, tape at return) to TAPES."""
    built = build_reverse(fn, wrt, kinds)
    source = built.source.replace("    # reverse sweep\n", "    FORWARD_END = list(tape)\n    # reverse sweep\n")
    body_return = source.rindex("\n    return ")
    source = source[:body_return] + "\n    TAPES.append((FORWARD_END, tape))" + source[body_return:]
    namespace = dict(built.function.__globals__, TAPES=[])
    exec(compile(source, "<probed>", "exec"), namespace)
    return namespace[built.function.__name__], namespace["TAPES"]


def _first_param(fn):
    return (list(inspect.signature(fn).parameters)[0],)


def test_tape_is_empty_after_each_call():
    for fn, args, kinds in [(cf.logistic_loop, (3.1, 0.2, 9), (NUMBER,) * 3),
                            (cf.with_continue_and_break, (0.7, 10), (NUMBER,) * 2),
                            (call_functions.calls_inside_loop, (0.3, 4), (NUMBER,) * 2)]:
        adjoint, tapes = _probed(fn, _first_param(fn), kinds)
        adjoint(*args)
        (after_forward, at_return), = tapes
        assert _records(after_forward), f"{fn.__name__} recorded nothing"
        assert at_return == [], f"{fn.__name__} left {len(_records(at_return))} records on the tape"


def test_a_loop_that_overwrites_nothing_records_nothing():
    # while_halving's reverse reads no value the loop overwrites: only the trip count is kept.
    text = s2s_ad.source(cf.while_halving, args=(5.0,))
    assert "tape" not in text
    assert "trips" in text


def test_the_recurrence_records_one_value_per_iteration():
    adjoint, tapes = _probed(cf.logistic_loop, ("r", "x"), (NUMBER,) * 3)
    adjoint(3.1, 0.2, 7)
    records = _records(tapes[0][0])
    assert len(records) == 7 and all(len(r) == 1 and isinstance(r[0], float) for r in records)


def test_a_long_loop_leaves_the_cycle_collector_nothing_to_walk_on_the_tape():
    # A tape of nested tuples kept every link tracked (each holds the next): the collector walked
    # the whole tape again and again.  The list's records of numbers are not tracked at all, and a
    # record of several numbers is a tuple the collector stops tracking the first time it sees it.
    for fn, args, wrt in [(cf.logistic_loop, (3.1, 0.2, 1000), ("r", "x")),
                          (call_functions.calls_inside_loop, (0.3, 1000), ("x",))]:
        adjoint, tapes = _probed(fn, wrt, (NUMBER,) * len(args))
        adjoint(*args)
        gc.collect()
        after_forward = tapes[0][0]
        assert len(after_forward) >= 1000
        assert not any(gc.is_tracked(record) for record in after_forward), fn.__name__


def test_a_pullback_called_twice_finds_its_tape_whole():
    # The backward part pops: it consumes the list it is handed, so the pullback hands it a copy.
    r, x, n = 3.1, 0.2, 50
    out, pull = s2s_ad.vjp(cf.logistic_loop, r, x, n)
    first = pull(1.0)
    second = pull(2.0)
    grad = s2s_ad.grad(cf.logistic_loop, wrt=(0, 1))(r, x, n)
    assert first[:2] == pytest.approx(grad, rel=1e-12)
    assert second[:2] == pytest.approx(tuple(2.0 * g for g in grad), rel=1e-12)
