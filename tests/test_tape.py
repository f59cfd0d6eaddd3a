"""The tape holds exactly what the reverse sweep needs, and is empty after a call.

The tape is a persistent stack of tuples (``tape = (s, tape)`` pushes,
``s, tape = tape`` pops, ``None`` is empty).  These tests run the generated
source with probes spliced in: one where the forward sweep ends, one before
the final return.
"""
import inspect

import s2s_ad
from s2s_ad.pipeline import build_reverse
from s2s_ad.kinds import NUMBER
import call_functions
import control_flow_functions as cf


def _records(tape) -> list:
    """What a tape holds, oldest record first: one tuple of values per push."""
    records = []
    while tape is not None:
        *values, tape = tape
        records.append(tuple(values))
    return records[::-1]


def _probed(fn, wrt, kinds):
    """The compiled adjoint; each call appends (tape after the forward sweep, tape at return) to TAPES."""
    built = build_reverse(fn, wrt, kinds)
    source = built.source.replace("    # reverse sweep\n", "    FORWARD_END = tape\n    # reverse sweep\n")
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
        assert at_return is None, f"{fn.__name__} left {len(_records(at_return))} records on the tape"


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
