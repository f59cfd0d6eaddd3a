"""The tape holds exactly what the reverse sweep needs, and is empty after a call."""
import s2s_ad
from s2s_ad.pipeline import build_reverse
import call_functions
import control_flow_functions as cf


def _instrumented(fn, wrt, kinds):
    """The compiled adjoint, with the tape swapped for a list that records its traffic."""
    built = build_reverse(fn, wrt, kinds)
    adjoint = built.function

    class Tape(list):
        log = []

        def append(self, value):
            Tape.log.append(value)
            super().append(value)

    source = built.source.replace("tape = []", "tape = Tape(); TAPES.append(tape)")
    namespace = dict(adjoint.__globals__, Tape=Tape, TAPES=[])
    exec(compile(source, "<instrumented>", "exec"), namespace)
    return namespace[adjoint.__name__], namespace["TAPES"], Tape.log


def test_tape_is_empty_after_each_call():
    for fn, args, kinds in [(cf.logistic_loop, (3.1, 0.2, 9), ("scalar",) * 3),
                            (cf.with_continue_and_break, (0.7, 10), ("scalar",) * 2),
                            (call_functions.calls_inside_loop, (0.3, 4), ("scalar",) * 2)]:
        adjoint, tapes, log = _instrumented(fn, (list(__import__("inspect").signature(fn).parameters)[0],), kinds)
        adjoint(*args)
        assert tapes and all(len(t) == 0 for t in tapes), fn.__name__
        assert log, fn.__name__


def test_a_loop_that_overwrites_nothing_records_nothing():
    # while_halving's reverse reads no value the loop overwrites: only the trip count is kept.
    text = s2s_ad.source(cf.while_halving, args=(5.0,))
    assert "tape" not in text
    assert "trips" in text


def test_the_recurrence_records_one_value_per_iteration():
    adjoint, tapes, log = _instrumented(cf.logistic_loop, ("r", "x"), ("scalar",) * 3)
    adjoint(3.1, 0.2, 7)
    assert len(log) == 7 and all(isinstance(v, float) for v in log)
