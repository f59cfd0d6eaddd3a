"""Issue 22, "debugging the derivative": ``pdb`` stepping into a gradient's call reaches the generated
code in a few steps (it took about 140 through s2s_ad's internals), and shows its text there, as
tracebacks do.  The steps are counted by a scripted ``pdb`` session: ``step`` until the frame's file
is generated code; the bound is a count, never a time."""
from __future__ import annotations

import io
import pdb
import sys
import traceback

import numpy as np
import pytest

import s2s_ad
import visible_functions as vf
from conftest import numeric_grad
from s2s_ad.driver.reach import GENERATED_PREFIX

MOST_STEPS = 8  # from the caller's line to the generated function's first stop: six today


class _Stepper:
    """``pdb``'s input: ``step`` until the current frame is generated code, then ``commands`` there,
    then ``continue``; counts the steps."""

    def __init__(self, commands: tuple = ()) -> None:
        self.debugger: pdb.Pdb
        self.steps = 0
        self.arrived: str = ""
        self.commands = list(commands)
        self.then: list[str] = []  # the functions it stopped in after arriving

    def readline(self) -> str:
        frame = self.debugger.curframe
        if frame.f_code.co_filename.startswith(GENERATED_PREFIX) and not self.arrived:
            self.arrived = frame.f_code.co_filename
        if self.arrived:
            self.then.append(frame.f_code.co_name)
            return self.commands.pop(0) + "\n" if self.commands else "continue\n"
        self.steps += 1
        return "step\n" if self.steps < 1000 else "continue\n"


def _step_into(call, *args, commands: tuple = ()) -> tuple[_Stepper, str]:
    stepper, shown = _Stepper(commands), io.StringIO()
    debugger = pdb.Pdb(stdin=stepper, stdout=shown)
    debugger.use_rawinput = False
    stepper.debugger = debugger
    tracer = sys.gettrace()  # (a coverage tool's, put back after)
    try:
        debugger.runcall(call, *args)
    finally:
        sys.settrace(tracer)
    return stepper, shown.getvalue()


@pytest.mark.parametrize("make, args", [
    (lambda: s2s_ad.grad(vf.looped), (0.7,)),
    (lambda: s2s_ad.value_and_grad(vf.shaped, wrt=(0, 1)), (np.linspace(0.1, 0.5, 4), 0.3)),
    (lambda: s2s_ad.grad(s2s_ad.grad(vf.looped)), (0.7,)),
])
@pytest.mark.parametrize("cached", [True, False])
def test_stepping_into_a_gradient_reaches_the_generated_code_in_a_few_steps(make, args, cached):
    gradient = make()
    if cached:
        gradient(*args)
    stepper, _ = _step_into(gradient, *args)
    assert stepper.arrived, "pdb never reached the generated code"
    assert stepper.steps <= MOST_STEPS, f"{stepper.steps} steps to the generated code"


@pytest.mark.parametrize("fn, shows", [
    (vf.looped_call, "d_stepped_bump.forward("),  # a helper with a loop: called through its adjoint
    (vf.looped, "sin_x = np.sin(x)"),  # a short helper, lowered in place
])
def test_pdb_shows_the_generated_source_where_it_stops(fn, shows):
    gradient = s2s_ad.grad(fn)
    stepper, shown = _step_into(gradient, 0.7, commands=("list", "where"))
    assert f"d_{fn.__name__}" in stepper.arrived
    assert f"def d_{fn.__name__}(x, y, d_out=1.0):" in shown and shows in shown  # list: the text
    assert stepper.arrived in shown  # where: the frame, named by its generated file
    assert gradient(0.7) == pytest.approx(s2s_ad.grad(fn)(0.7))
    assert gradient(0.7) == pytest.approx(numeric_grad(fn, (0.7,), 0), rel=1e-6)


def test_a_traceback_shows_the_generated_line_and_names_the_users_line():
    with pytest.raises(ValueError) as caught:
        s2s_ad.grad(vf.failing)(1.0)
    text = "".join(traceback.format_exception(caught.type, caught.value, caught.tb))
    generated = [frame for frame in traceback.extract_tb(caught.tb) if frame.filename.startswith(GENERATED_PREFIX)]
    assert generated and generated[-1].line, "the generated frame shows no source line"
    assert generated[-1].line in text
    if sys.version_info >= (3, 11):
        line = vf.failing.__code__.co_firstlineno + 3
        assert f"generated from line {line} of visible_functions.py" in text


@pytest.mark.self_check_off  # (the check's forward pass is generated code too: the step would go there)
def test_stepping_out_of_the_generated_code_comes_back_to_the_caller():
    gradient = s2s_ad.grad(vf.looped)

    def caller(x):
        slope = gradient(x)
        return slope * 2.0

    stepper, _ = _step_into(caller, 0.7, commands=("return", "step", "step"))
    assert stepper.arrived and stepper.steps <= MOST_STEPS + 1
    assert stepper.then[:2] == ["d_looped", "d_looped"] and stepper.then[2] == "caller", stepper.then


def test_a_tracer_that_is_no_debugger_is_left_alone():
    """A coverage or profiling tool's trace function keeps seeing s2s_ad's frames."""
    seen = set()

    def tracer(frame, event, arg):
        seen.add(frame.f_globals.get("__name__"))
        return None

    gradient = s2s_ad.grad(vf.looped)
    old = sys.gettrace()
    sys.settrace(tracer)
    try:
        value = gradient(0.7)
    finally:
        sys.settrace(old)
    assert "s2s_ad.api.gradient" in seen and "s2s_ad.driver.cache" in seen  # the cache looked up, traced
    assert value == pytest.approx(s2s_ad.grad(vf.looped)(0.7))
