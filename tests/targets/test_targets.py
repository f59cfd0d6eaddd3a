"""A backend is a new ``Target``, not a change across the engine (s2s_ad/targets/target.py).

``RecordingTarget`` is defined here, outside the package, from ``Target``'s
abstract methods alone.  It spells every NumPy op through a namespace object
``xp`` whose functions count their calls and forward to NumPy, binds its own
(counting) versions of the engine ops, writes the tape as calls of its own
``push``/``pop`` on a linked record, and writes each store as a call of its
own setter.  A corpus of the test functions runs through it in grad, vjp,
jvp and Hessian-vector form; the results must equal the NumPy target's (the
default), the generated code must name NumPy nowhere, and the counts must
show the code really went through ``xp``, the engine ops and the tape of
this target.
"""
from __future__ import annotations

import dataclasses
import inspect
import math
import operator
import re
import types
from collections import Counter
from typing import Any, Iterator

import numpy as np
import pytest

import s2s_ad
from s2s_ad.core import ir
from s2s_ad.driver import pipeline
from s2s_ad.core import runtime
from s2s_ad.driver.cache import TransformCache
from s2s_ad.targets.target import NUMPY, Spelling, TapeForm, Target, builtin_spelling, declared_spellings

import everyday_functions as ef
import seed_functions as sf
from conftest import numeric_grad


class Recorder:
    """A stand-in for NumPy, one of its modules or one of its callables, seen as ``path``: calling it
    counts the call under ``path`` and forwards it; an attribute that is callable or a module is
    another recorder, any other (a number, None) the attribute itself."""

    def __init__(self, wrapped: Any, path: str, calls: Counter) -> None:
        self._wrapped, self._path, self._calls = wrapped, path, calls
        self._members: dict[str, Any] = {}

    def __getattr__(self, name: str) -> Any:
        members = self.__dict__["_members"]
        if name not in members:
            value = getattr(self._wrapped, name)
            callable_ = callable(value) or isinstance(value, types.ModuleType)
            members[name] = Recorder(value, f"{self._path}.{name}", self._calls) if callable_ else value
        return members[name]

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        self._calls[self._path] += 1
        return self._wrapped(*args, **kwargs)

    def __repr__(self) -> str:
        return f"<recorder {self._path}>"


class _Record:
    """One record of the linked tape: the values of one push, and the tape before it."""

    __slots__ = ("values", "rest")

    def __init__(self, values: tuple, rest: Any) -> None:
        self.values, self.rest = values, rest


class LinkedTape(TapeForm):
    """The tape as a linked list of ``_Record`` objects, pushed and popped by calls of the target's
    own ``push`` and ``pop`` (persistent, as ``vjp``'s repeated pullbacks need)."""

    def __init__(self, calls: Counter) -> None:
        self.calls = calls
        self._push, self._pop = self.push, self.pop  # one object each: generated code binds it once

    def push(self, tape: Any, values: tuple) -> _Record:
        self.calls["tape.push"] += 1
        return _Record(values, tape)

    def pop(self, tape: Any) -> tuple:
        self.calls["tape.pop"] += 1
        assert isinstance(tape, _Record), "a pop without a record: the pushes and pops do not pair up"
        return tape.values + (tape.rest,)

    def spell(self, fn: ir.Function) -> ir.Function:
        if fn.plan is None:
            return fn
        tape = fn.plan.tape
        replaced: dict[int, Any] = {}
        for stmt in ir.walk(fn.body):
            if isinstance(stmt, ir.Push):
                record = ir.Call(self._push, (ir.Var(tape), ir.Display("tuple", stmt.values)))
                replaced[stmt.sid] = ir.Assign(tape, record, stmt.line)
            elif isinstance(stmt, ir.Pop):
                replaced[stmt.sid] = ir.Unpack(stmt.targets + (tape,), ir.Call(self._pop, (ir.Var(tape),)), stmt.line)
        if not replaced and not any(tape in ir.targets_of(s) for s in ir.walk(fn.body)):
            return fn
        body = ir.replace_statements(fn.body, replaced)
        if tape not in fn.params:
            body.insert(0, ir.Assign(tape, ir.Const(None)))
        return dataclasses.replace(fn, body=body)

    def empty(self) -> Any:
        return None


_IN_PLACE = {operator.add: operator.iadd, operator.sub: operator.isub, operator.mul: operator.imul,
             operator.truediv: operator.itruediv}


class RecordingTarget(Target):
    """NumPy's semantics, spelled through ``xp`` (see the module docstring)."""

    name = "recording xp"

    def passes(self, form):
        return ("fold_fills",)  # NumPy's promotion rules: the same code as the NumPy target's (fills.py)

    def __init__(self) -> None:
        self.calls: Counter = Counter()
        self.xp = Recorder(np, "xp", self.calls)
        self._tape = LinkedTape(self.calls)
        self._engine: dict[int, Any] = {}
        self._set_item, self._update_item = self.set_item, self.update_item  # bound once (see LinkedTape)

    def roots(self) -> dict[str, Any]:
        return {"xp": self.xp, "math": math}

    def spellings(self, obj: Any) -> Iterator[Spelling]:
        builtin = builtin_spelling(obj)
        if builtin is not None:
            yield builtin
            return
        for spelled in declared_spellings(obj):
            if spelled.root == "np":  # np.linalg.solve -> xp.linalg.solve
                yield Spelling("xp" + spelled.text[len("np"):], "xp", self.xp)
            else:
                yield spelled

    def implementation(self, obj: Any) -> Any:
        """The engine ops (``runtime.*``) counted, then run as NumPy's."""
        if getattr(obj, "__module__", None) != runtime.__name__ or not callable(obj):
            return obj
        if id(obj) not in self._engine:
            self._engine[id(obj)] = Recorder(obj, f"engine.{obj.__name__}", self.calls)
        return self._engine[id(obj)]

    def tape(self) -> TapeForm:
        return self._tape

    def store(self, stmt: ir.Store) -> list[ir.Stmt]:
        """``a[i] = v`` as ``set_item(a, i, v)``; ``a[i] op= v`` as ``update_item(a, i, iop, v)``."""
        array, index, value = ir.Var(stmt.array), stmt.index, stmt.value
        if stmt.op is None:
            call = ir.Call(self._set_item, (array, index, value))
        else:
            call = ir.Call(self._update_item, (array, index, ir.Const(_IN_PLACE[stmt.op]), value))
        return [ir.Effect(call, stmt.line)]

    def set_item(self, array: Any, index: Any, value: Any) -> None:
        self.calls["store"] += 1
        array[index] = value

    def update_item(self, array: Any, index: Any, in_place: Any, value: Any) -> None:
        self.calls["store"] += 1
        array[index] = in_place(array[index], value)  # what a[i] op= v does

    def argument_kinds(self, fn: Any, args: Any) -> tuple:
        self.calls["argument_kinds"] += 1
        return NUMPY.argument_kinds(fn, args)  # NumPy's arrays: read as the NumPy target reads them

    def handed_out(self, values: Any, held: tuple, copy_all: bool = False) -> Any:
        return NUMPY.handed_out(values, held, copy_all)

    def alone(self, gradient: Any) -> bool:
        return False  # always compared: handed_out decides


XP = RecordingTarget()

# -- the corpus -----------------------------------------------------------------------------------

X = np.array([0.3, 0.7, -0.4])
_RNG = np.random.default_rng(4)
_EVERYDAY_LEFT_OUT = {  # draws (each run draws other numbers), float32 rounding, refusals (test_everyday's SPECIAL)
    "with_random_noise", "noise_in_a_loop", "noise_from_a_generator", "float32_buffer",
    "noise_in_a_checkpointed_loop", "helper_draws_in_a_checkpointed_loop", "generator_draws_in_a_checkpointed_loop",
    "vector_of_generator_noise", "cast_to_int_carries_nothing", "chained_middle_is_random",
    "chained_short_circuit"}
# Run by default (the rest of the corpus is slow): NumPy calls, branches, loops, stores into arrays,
# a scatter-add, helpers, numbers only, and a 2-d seed.
_FAST = {"returns_in_both_branches", "write_into_copy", "index_updates_in_a_loop", "repeated_fancy_index_update",
         "passes_through_two_helpers", "masked_in_place", "rational", "deblur_loss"}
_CASES = [(fn, (X,)) for name, fn in inspect.getmembers(ef, inspect.isfunction)
          if fn.__module__ == ef.__name__ and not name.startswith("_") and name not in _EVERYDAY_LEFT_OUT]
_CASES += [(sf.quadratic, (0.5, -1.5, 2.0, 0.75)), (sf.rational, (3.0, 2.0)), (sf.rational_by_steps, (3.0, 2.0)),
           (sf.square_plus_product, (2.0, 3.0)), (sf.tensor_example, (3.0, 10.0)),
           (sf.deblur_loss, (_RNG.uniform(size=(4, 5)), _RNG.uniform(size=(4, 5))))]
CORPUS = [pytest.param(fn, args, id=fn.__name__, marks=() if fn.__name__ in _FAST else pytest.mark.slow)
          for fn, args in _CASES]
ARRAY_CORPUS = [case for case, (_, args) in zip(CORPUS, _CASES) if isinstance(args[0], np.ndarray)]


def _kinds(fn: Any, args: tuple) -> tuple:
    return XP.argument_kinds(fn, args)  # read through the target (it counts the readings)


def _params(fn: Any) -> tuple[str, ...]:
    return tuple(inspect.signature(fn).parameters)


def _spelled_alike(numpy_source: str, target_source: str) -> None:
    """The target's code names NumPy nowhere, and names through ``xp`` every NumPy op the NumPy
    target's code for the same function names (``np.linalg.solve``: ``xp.linalg.solve``)."""
    assert not re.search(r"\bnp\.", target_source), target_source
    by_numpy = set(re.findall(r"\bnp\.([\w.]+)", numpy_source))
    assert set(re.findall(r"\bxp\.([\w.]+)", target_source)) == by_numpy, target_source


def _counted(numpy_source: str) -> None:
    """Where the NumPy target's code calls a NumPy function, this target's code counted calls."""
    if re.search(r"\bnp\.[\w.]+\(", numpy_source):
        assert sum(XP.calls.values()) > 0, "the generated code called nothing of the target"


def _unit(args: tuple, i: int, index: Any = None) -> list:
    tangents = [np.zeros_like(a, dtype=float) if isinstance(a, np.ndarray) else 0.0 for a in args]
    if isinstance(args[i], np.ndarray):
        tangents[i][index] = 1.0
    else:
        tangents[i] = 1.0
    return tangents


@pytest.fixture(autouse=True)
def _fresh_counts() -> None:
    XP.calls.clear()


def _close(got: Any, want: Any) -> None:
    np.testing.assert_allclose(np.asarray(got, dtype=float), np.asarray(want, dtype=float), rtol=1e-12, atol=1e-14)


@pytest.mark.parametrize("fn, args", CORPUS)
def test_grad_through_a_target_defined_outside_the_package(fn, args):
    params = _params(fn)
    wrt = params[:1] if isinstance(args[0], np.ndarray) else params
    kinds = _kinds(fn, args)
    built = pipeline.build_reverse(fn, wrt, kinds, target=XP)
    numpy_source = pipeline.build_reverse(fn, wrt, kinds, compile_it=False).source
    _spelled_alike(numpy_source, built.source)
    value, gradient = built.function(*args)
    expected = s2s_ad.value_and_grad(fn, wrt=wrt if len(wrt) > 1 else wrt[0])(*args)
    _close(value, expected[0])
    _close(gradient, expected[1])
    _counted(numpy_source)


@pytest.mark.parametrize("fn, args", CORPUS)
def test_jvp_through_a_target_defined_outside_the_package(fn, args):
    params = _params(fn)
    tangents = [np.linspace(-1.0, 1.0, np.size(a)).reshape(np.shape(a)) if isinstance(a, np.ndarray) else 0.5
                for a in args]
    kinds = _kinds(fn, args)
    built = pipeline.build_forward(fn, params, kinds, target=XP)
    numpy_source = pipeline.build_forward(fn, params, kinds, compile_it=False).source
    _spelled_alike(numpy_source, built.source)
    out, t_out = built.function(*args, *tangents)
    expected_out, expected_t = s2s_ad.jvp(fn, args, tangents)
    _close(out, expected_out)
    _close(t_out, expected_t)
    _counted(numpy_source)


@pytest.mark.parametrize("fn, args", CORPUS)
def test_vjp_through_a_target_defined_outside_the_package(fn, args):
    kinds = _kinds(fn, args)
    split = pipeline.build_split(fn, kinds, XP)
    numpy_source = pipeline.build_split(fn, kinds).source
    _spelled_alike(numpy_source, split.source)
    out, tape = split.forward(*args, XP.tape().empty())
    expected_out, pullback = s2s_ad.vjp(fn, *args)
    _close(out, expected_out)
    for cotangent in (1.0, -2.5):  # the tape read twice (recorded again where backward restores slices)
        if split.restores and cotangent != 1.0:
            tape = split.forward(*args, XP.tape().empty())[1]
        adjoints = split.backward(cotangent, tape)[:-1]
        for got, want in zip(adjoints, pullback(cotangent)):
            _close(got, want)
    _counted(numpy_source)


@pytest.mark.parametrize("fn, args", ARRAY_CORPUS)
def test_hessian_through_a_target_defined_outside_the_package(fn, args):
    """Forward mode over the gradient (as ``s2s_ad.hessian`` takes it), generated for the target: the
    gradient as a plain function is in the source language (the transformer reads it back), its
    tangent code and the tangent code of the adjoint it calls are the target's."""
    kinds = _kinds(fn, args)
    plain = s2s_ad.grad(fn).function_for(kinds).function
    by = _params(plain)[:1]
    tangent = pipeline.build_forward(plain, by, kinds, target=XP)
    _spelled_alike(pipeline.build_forward(plain, by, kinds, compile_it=False).source, tangent.source)
    x = args[0]
    columns = []
    for j in np.ndindex(np.shape(x)):
        columns.append(tangent.function(*args, _unit(args, 0, j)[0])[1])
    hessian = np.stack(columns, axis=-1).reshape(np.shape(x) + np.shape(x))
    np.testing.assert_allclose(hessian, s2s_ad.hessian(fn)(*args), rtol=1e-10, atol=1e-12)


def test_every_part_of_the_target_is_used():
    """Code generated for a few functions that call NumPy, loop, branch and write into arrays counted
    calls through ``xp``, of the target's engine ops, tape records and stores (so the corpus above
    could not pass by running code spelled for NumPy)."""
    for fn in (ef.index_updates_in_a_loop, ef.write_into_copy, ef.returns_in_both_branches):
        pipeline.build_reverse(fn, ("x",), _kinds(fn, (X,)), target=XP).function(X)
    used = {key.partition(".")[0] for key in XP.calls}
    assert {"xp", "engine", "tape", "store", "argument_kinds"} <= used, XP.calls


def test_the_target_is_part_of_the_cache_key():
    def f(x):
        return np.sum(np.sin(x) * x)

    kinds = _kinds(f, (X,))
    by_numpy, by_xp = pipeline.build_split(f, kinds), pipeline.build_split(f, kinds, XP)
    assert by_numpy is not by_xp
    assert "np.sin" in by_numpy.source and "xp.sin" in by_xp.source
    assert pipeline.build_split(f, kinds, XP) is by_xp and pipeline.build_split(f, kinds) is by_numpy
    assert len(pipeline._SPLITS._table(f)) == 2  # one entry per target

    cache, built = TransformCache(), []
    for target in (NUMPY, XP, NUMPY, XP):
        cache.get(f, "key", lambda: built.append(target) or len(built), target)
    assert built == [NUMPY, XP]


def test_a_helper_is_built_for_the_target_of_its_caller():
    def helper(x):  # (a loop: it stays a call, with a split adjoint of its own)
        total = x * 0.0
        for _ in range(2):
            total = total + np.cos(x) * x
        return total

    def f(x):
        return np.sum(helper(x) + x)

    built = pipeline.build_reverse(f, ("x",), _kinds(f, (X,)), target=XP)
    value, gradient = built.function(X)
    np.testing.assert_allclose(gradient, s2s_ad.grad(f)(X), rtol=1e-12)
    np.testing.assert_allclose(gradient, numeric_grad(f, (X,), 0), rtol=1e-6)
    callees = [v for v in built.function.__globals__.values() if isinstance(v, pipeline.SplitAdjoint)]
    assert callees and all("xp.cos" in c.source and not re.search(r"\bnp\.", c.source) for c in callees)


def test_a_short_helper_is_lowered_in_place_for_the_target_of_its_caller():
    def helper(x):
        return np.cos(x) * x

    def f(x):
        return np.sum(helper(x) + x)

    built = pipeline.build_reverse(f, ("x",), _kinds(f, (X,)), target=XP)
    value, gradient = built.function(X)
    np.testing.assert_allclose(gradient, numeric_grad(f, (X,), 0), rtol=1e-6)
    assert not [v for v in built.function.__globals__.values() if isinstance(v, pipeline.SplitAdjoint)]
    assert "xp.cos" in built.source and "xp.sin" in built.source and not re.search(r"\bnp\.", built.source)
