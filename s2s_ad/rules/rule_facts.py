"""A rule's declared facts, checked against NumPy by running the rule's examples.

Input: a ``rules.Rule`` (its ``fn``, ``inputs``, ``examples``, ``elementwise`` and ``form``), the
facts declared about its function (``rules.FACTS``: ``view``, ``may_view``, ``result_dims``...) and
whether the registry holds the function to make fresh values (``fresh_arrays``/``fresh_values``,
or elementwise).  Output: ``contradictions(...)``, one sentence per fact NumPy contradicts on an
example (an empty list where every fact holds).  Nothing here differentiates: each check calls the
primal function itself, so the whole registry is checked in well under a second.  The adjoint
against the tangent (the dot-product test) needs the transformer and lives in the test suite
(``tests/rules/test_rule_facts_against_numpy.py``).

Checks, for each example (``example_call`` turns one into arguments, as EXAMPLES_FORM.md says):

- sharing: a result (or an item of one) that shares memory with an input must be declared
  ``view`` (the first input), ``may_view`` or ``returns_operand``; a fresh one must never share;
- shape and type: ``elementwise`` (the broadcast shape), ``result_dims``, ``result_rank``,
  ``reduction``, ``counts``, ``arithmetic``, ``returns_float``, ``fill_operand``, ``items``, ``returns_sequence``; a differentiable
  result of float inputs is floats;
- linearity: ``linear`` (in all differentiable inputs together) and ``bilinear`` (in each);
- ``shape_only``: other values of the same shape give the same result; ``zero_derivative``: a value
  nudged by a billionth gives the same result;
- ``shift``: the result moves as declared when the arguments are shifted or scaled (a reduction's by
  values that vary along the axes it keeps);
- ``on_a_number``: the declared function gives NumPy's result on each element of the example, as a
  Python float and as NumPy's float64 (within one ulp), and NumPy's own result on the whole array.

This module imports no other part of s2s_ad but ``kinds`` (the registry calls it, in the debug
mode ``S2S_AD_CHECK_RULES=1``, without a cycle).
"""
from __future__ import annotations

import inspect
import warnings
from dataclasses import dataclass, field
from typing import Any, Callable, Mapping, Sequence

import numpy as np

from ..core import runtime
from ..core.kinds import reduced_dims

ENVIRONMENT_VARIABLE = "S2S_AD_CHECK_RULES"


@dataclass
class ExampleCall:
    """One example turned into a call: positional and keyword arguments, the differentiable values
    (name -> an array, a float or a list of them) and where each input given sits (name -> its
    position, or its name where passed by keyword)."""

    args: list
    kwargs: dict
    differentiable: dict
    where: dict = field(default_factory=dict)

    def with_values(self, values: Mapping[str, Any]) -> "ExampleCall":
        """The same call with some differentiable inputs replaced (by name)."""
        args, kwargs = list(self.args), dict(self.kwargs)
        for name, value in values.items():
            place = self.where[name]
            if isinstance(place, int):
                args[place] = value
            else:
                kwargs[place] = value
        return ExampleCall(args, kwargs, {**self.differentiable, **values}, self.where)

    def run(self, fn: Any) -> Any:
        # (an example NumPy deprecates, np.cross of 2-vectors, or one whose default NumPy 1 means to
        # change, lstsq's rcond, still says what the rule does: the user's own calls keep their
        # warnings, these checks do not add to them)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DeprecationWarning)
            warnings.simplefilter("ignore", FutureWarning)
            return fn(*self.args, **self.kwargs)


def is_shape(value: Any) -> bool:
    return isinstance(value, tuple) and all(isinstance(n, int) and not isinstance(n, bool) for n in value)


def _draw(shape: tuple, rng: np.random.Generator, domain: Sequence[float]) -> Any:
    low, high = domain
    return float(rng.uniform(low, high)) if shape == () else rng.uniform(low, high, size=shape)


def _takes_arrays(fn: Any) -> bool:
    module = getattr(fn, "__module__", None) or ""
    return isinstance(fn, np.ufunc) or module in ("_operator", "operator") or module.startswith("numpy")


def examples_of(rule: Any, declared: Sequence[dict] = ()) -> list[dict]:
    """The examples declared for the rule's function (``declared``: the rule's own, or those of the
    other rule of its function); for an elementwise rule with none, synthesised calls (numbers,
    vectors and broadcasting pairs where the function takes arrays)."""
    if declared or not rule.elementwise:
        return list(declared)
    inputs = rule.differentiable_inputs()
    examples: list[dict] = [{name: () for name in inputs}]
    if _takes_arrays(rule.fn):
        examples.append({name: (3,) for name in inputs})
        if len(inputs) == 2:
            examples.append({inputs[0]: (2, 3), inputs[1]: (3,)})
            examples.append({inputs[0]: (2, 1), inputs[1]: (1, 3)})
            examples.append({inputs[0]: (), inputs[1]: (2, 3)})
    return examples


def example_call(rule: Any, example: Mapping[str, Any], rng: np.random.Generator) -> ExampleCall:
    """The arguments of one example (see EXAMPLES_FORM.md): differentiable inputs given a shape (or
    a list of shapes) are drawn from ``rule.domain``; a float array there is that point; any other
    value is passed as it is.  Raises ``ValueError`` for a name the rule does not take."""
    unknown = sorted(set(example) - set(rule.inputs))
    if unknown:
        raise ValueError(f"the example {dict(example)!r} names {unknown[0]!r}, which is not an input of the rule")
    differentiable = set(rule.differentiable_inputs())
    values: dict[str, Any] = {}
    chosen: dict[str, Any] = {}
    for name, given in example.items():
        if name in differentiable and isinstance(given, list) and given and all(is_shape(s) for s in given):
            values[name] = [_draw(s, rng, rule.domain) for s in given]
        elif name in differentiable and is_shape(given):
            values[name] = _draw(given, rng, rule.domain)
        elif name in differentiable and isinstance(given, np.ndarray) and given.dtype.kind == "f":
            values[name] = given.copy()
        else:
            values[name] = given.copy() if isinstance(given, np.ndarray) else given
            continue
        chosen[name] = values[name]
    args: list = []
    kwargs: dict = {}
    where: dict = {}
    for index, name in enumerate(rule.inputs):
        if name not in values:
            continue
        if len(args) == index and index < rule.positional:
            where[name] = len(args)
            args.append(values[name])
        else:
            where[name] = name
            kwargs[name] = values[name]
    return ExampleCall(args, kwargs, chosen, where)


# -- the checks ------------------------------------------------------------------------------

def _arrays_in(value: Any) -> list[np.ndarray]:
    """The arrays a value holds (itself, or the items of a tuple or list)."""
    if isinstance(value, np.ndarray):
        return [value]
    if isinstance(value, (tuple, list)):
        return [a for item in value for a in _arrays_in(item)]
    return []


def _items(value: Any) -> list:
    return list(value) if isinstance(value, (tuple, list)) else [value]


def _may_view(facts: Mapping[str, Any], call: ExampleCall) -> bool:
    declared = facts.get("may_view")
    if callable(declared):
        try:
            return bool(declared(len(call.args)))
        except TypeError:
            return True
    return bool(declared) or bool(facts.get("returns_operand"))


def _check_sharing(result: Any, call: ExampleCall, facts: Mapping[str, Any], never_view: bool) -> list[str]:
    inputs = [(i, a) for i, value in enumerate(call.args + list(call.kwargs.values())) for a in _arrays_in(value)]
    shared = [i for i, a in inputs if any(np.shares_memory(r, a) for r in _arrays_in(result))]
    if not shared:
        return []
    if never_view:
        return ["NumPy returns memory of an input, but the rule's function is declared to make a new array "
                "(fresh_arrays, fresh_values or elementwise)"]
    if _may_view(facts, call) or (facts.get("view") and set(shared) <= {0}):
        return []
    if facts.get("view"):
        return ["NumPy returns a view of an argument other than the first; view=True covers the first only: "
                "declare may_view=True"]
    return ["NumPy returns the input itself or a view of it, but the rule declares neither view=True nor "
            "may_view=True (a later write into the input would change the result)"]


def _check_retake(rule: Any, result: Any, call: ExampleCall, facts: Mapping[str, Any]) -> list[str]:
    """``retake``: the result is a view of the first argument (a C-contiguous array in every example);
    called again, it shows the same values; ``write_back``: the declared inverse gives the base back."""
    how, back = facts.get("retake"), facts.get("write_back")
    if not (how or back) or not call.args or not isinstance(call.args[0], np.ndarray):
        return []
    base = call.args[0]
    pieces = _arrays_in(result)
    if how and base.flags.c_contiguous and not all(np.shares_memory(r, base) for r in pieces):
        return [f'retake="{how}", but NumPy gives an array of its own here (not a view of the first argument)']
    if back == "reshape" and not np.array_equal(np.reshape(result, np.shape(base)), base):
        return ['write_back="reshape", but np.reshape(result, np.shape(base)) is not the base']
    if back == "transpose" and len(call.args) == 1 and not call.kwargs and not np.array_equal(np.transpose(result), base):
        return ['write_back="transpose", but np.transpose(result) is not the base']
    if back == "pieces":
        return _check_pieces(rule, result, call)
    return []


def _check_pieces(rule: Any, result: Any, call: ExampleCall) -> list[str]:
    """``write_back="pieces"``: each piece is the base indexed where ``runtime.split_piece`` says, the
    same memory (the same first item and steps), so a store there is a write through the piece."""
    base = call.args[0]
    sections = call.args[1] if len(call.args) > 1 else call.kwargs["indices_or_sections"]
    axis = call.args[2] if len(call.args) > 2 else call.kwargs.get("axis", 0)
    for k, piece in enumerate(result):
        there = base[runtime.split_piece(np.shape(base), rule.fn.__name__, sections, axis, k)]
        same = there.shape == piece.shape and there.strides == piece.strides and \
            (piece.size == 0 or there.__array_interface__["data"] == piece.__array_interface__["data"])
        if not same:
            return [f'write_back="pieces", but piece {k} is not base[runtime.split_piece(...)] here']
    return []


def _shape_of_number(value: Any) -> bool:
    return isinstance(value, (int, float, complex, np.number, np.ndarray, bool, np.bool_))


def _dims(value: Any) -> Any:
    """kinds' dims of an argument: its shape for a number or an array, None for anything else."""
    if isinstance(value, (bool, np.bool_)) or value is None or isinstance(value, str):
        return None
    if isinstance(value, (int, float, complex, np.number)):
        return ()
    if isinstance(value, np.ndarray):
        return value.shape
    return None


def _fits(dims: Any, shape: tuple) -> bool:
    """Whether declared dims (None: unknown; an axis None: unknown length) describe ``shape``."""
    if dims is None:
        return True
    return len(dims) == len(shape) and all(d is None or not isinstance(d, int) or d == n
                                           for d, n in zip(dims, shape))


def _check_shapes(rule: Any, result: Any, call: ExampleCall, facts: Mapping[str, Any],
                  example: Mapping[str, Any]) -> list[str]:
    found: list[str] = []
    items = facts.get("items_declared")
    sequence = isinstance(result, (tuple, list))
    if sequence and not (facts.get("returns_sequence") or items):
        found.append(f"NumPy returns a {type(result).__name__}, but the rule declares neither returns_sequence "
                     f"nor items")
    if isinstance(items, int) and items and (not sequence or len(result) != items):
        found.append(f"the rule declares items={items}, but NumPy returns "
                     f"{len(result) if sequence else 'one value, not'} {'items' if sequence else 'a tuple'}")
    if callable(items) and sequence:
        try:
            count = items(**{n: example.get(n, rule.defaults.get(n)) for n in _parameter_names(items)})
        except (TypeError, ValueError, KeyError):
            count = 0
        if count and count != len(result):
            found.append(f"the rule's items gives {count} for this call, but NumPy returns {len(result)} items")
    if sequence:
        return found
    shape = np.shape(result)
    operands = [a for a in call.args + list(call.kwargs.values()) if _shape_of_number(a)]
    if rule.elementwise and operands:
        try:
            broadcast = np.broadcast_shapes(*(np.shape(a) for a in operands))
        except ValueError:
            broadcast = None
        if broadcast is not None and shape != broadcast:
            found.append(f"the rule is elementwise, but NumPy's result has shape {shape}, not the inputs' "
                         f"broadcast shape {broadcast}")
    declared_dims = facts.get("result_dims")
    if declared_dims is not None:
        try:
            dims = declared_dims(*(_dims(a) for a in call.args), **{k: _dims(v) for k, v in call.kwargs.items()})
        except TypeError:
            dims = None
        if not _fits(dims, shape):
            found.append(f"the declared result_dims give {dims}, but NumPy's result has shape {shape}")
    declared_rank = facts.get("result_rank")
    if declared_rank is not None and not call.kwargs:
        ranks = [np.ndim(a) for a in call.args]
        rank = declared_rank(*ranks)
        if rank is not None and rank != len(shape):
            found.append(f"the declared result_rank gives {rank} for ranks {ranks}, but NumPy's result has rank "
                         f"{len(shape)}")
    if facts.get("reduction"):
        found += _check_reduction(rule, shape, call, example)
    if facts.get("counts") and not (np.ndim(result) == 0 and isinstance(result, (int, np.integer))):
        found.append(f"the rule declares counts (one whole number), but NumPy returns {result!r}")
    if facts.get("arithmetic") and call.args and all(type(a) in (int, float) for a in call.args) \
            and not call.kwargs and isinstance(result, np.ndarray):
        found.append("the rule declares arithmetic (a number on numbers), but NumPy returns a 0-d array")
    if facts.get("returns_float") and call.args and all(type(a) in (int, float) for a in call.args) \
            and not call.kwargs and type(result) is not float:
        found.append(f"the rule declares returns_float (a Python float on numbers), but it returns {result!r}")
    return found


def _parameter_names(fn: Callable) -> list[str]:
    return list(inspect.signature(fn).parameters)


def _check_reduction(rule: Any, shape: tuple, call: ExampleCall, example: Mapping[str, Any]) -> list[str]:
    first = rule.inputs[0]
    others = set(example) - {first}
    if not others and shape != ():
        return [f"the rule declares reduction (one number on one argument), but NumPy's result has shape {shape}"]
    if others <= {"axis", "keepdims"} and first in call.differentiable:
        axis = example.get("axis", rule.defaults.get("axis"))
        keepdims = example.get("keepdims", rule.defaults.get("keepdims", False))
        want = reduced_dims(np.shape(call.differentiable[first]), axis, keepdims)
        if want is not None and not _fits(want, shape):
            return [f"a reduction over axis={axis!r}, keepdims={keepdims!r} has dims {want}, but NumPy's result "
                    f"has shape {shape}"]
    return []


def _zero_d_typed() -> bool:
    """NumPy 2's promotion: a 0-d float64 array keeps float32 operands' results float64, as an array does."""
    return bool((np.asarray(1.0) * np.ones(1, dtype=np.float32)).dtype == np.float64)


def _check_fill_operand(rule: Any, result: Any, call: ExampleCall, facts: Mapping[str, Any]) -> list[str]:
    """``fill_operand``: each array operand filled with its first value, and given as the 0-d array of
    that value, beside the other operands as they are and (NumPy 2) in float32, give the same result,
    dtype included."""
    if not facts.get("fill_operand") or not isinstance(result, np.ndarray) or call.kwargs:
        return []
    found: list[str] = []
    for position, operand in enumerate(call.args):
        if not isinstance(operand, np.ndarray) or operand.size == 0:
            continue
        value = np.asarray(operand.flat[0], dtype=np.result_type(operand, 1.0))
        for single in (False, True) if _zero_d_typed() else (False,):  # (NumPy 1: float32 results by value)
            args = [a.astype(np.float32) if single and isinstance(a, np.ndarray) else a for a in call.args]
            filled, zero_d = list(args), list(args)
            filled[position], zero_d[position] = np.full(operand.shape, value), value
            try:
                with np.errstate(all="ignore"):
                    a = rule.fn(*filled)
            except Exception:  # (what NumPy refuses in float32 says nothing of the fact)
                continue
            try:
                with np.errstate(all="ignore"):
                    b = rule.fn(*zero_d)
            except Exception as exc:
                found.append(f"fill_operand: operand {position} as a 0-d array is refused: {type(exc).__name__}: {exc}")
                continue
            if np.shape(a) != np.shape(b):
                continue
            if not np.array_equal(a, b, equal_nan=True) or np.result_type(a) != np.result_type(b):
                found.append(f"fill_operand: operand {position} filled gives {np.result_type(a)} {a!r:.60}, as a 0-d "
                             f"array {np.result_type(b)} {b!r:.60}")
    return found


def _check_rank_from(rule: Any, result: Any, call: ExampleCall, facts: Mapping[str, Any]) -> list[str]:
    """``rank_from="shape"``: the result has as many dimensions as the argument ``shape`` has items."""
    name = facts.get("rank_from")
    if not name:
        return []
    position = list(rule.inputs).index(name)
    given = call.kwargs[name] if name in call.kwargs else call.args[position] if position < len(call.args) else None
    if given is None:
        return []
    want = len(given) if isinstance(given, (tuple, list)) else 1
    if np.ndim(result) != want:
        return [f"rank_from={name!r}, but NumPy's result has {np.ndim(result)} dimensions, not {want}"]
    return []


def _check_floats(rule: Any, result: Any, call: ExampleCall) -> list[str]:
    """A differentiable result of float inputs alone (no ``dtype=``, no integer array) is floats."""
    if not rule.differentiable_inputs() or not call.differentiable or isinstance(result, (tuple, list)):
        return []
    arguments = call.args + list(call.kwargs.values())
    if "dtype" in call.where or any(isinstance(a, np.ndarray) and a.dtype.kind not in "fc" for a in arguments):
        return []
    if isinstance(result, (np.ndarray, np.number, float, int)) and not isinstance(result, (bool, np.bool_)):
        if np.result_type(result).kind not in "fc":
            return [f"a differentiable result of float inputs must be floats, but NumPy returns "
                    f"{np.result_type(result)}"]
    return []


_ULPS = 4  # how far a twin declared ``on_a_number`` may be from NumPy's value (see below)


def _check_on_a_number(rule: Any, result: Any, call: ExampleCall, facts: Mapping[str, Any]) -> list[str]:
    """``on_a_number`` (see rules.FACTS): on each element of a one-argument call's float64 example, as a
    Python float and as NumPy's float64, the declared function gives NumPy's element of the result
    within four ulps (``_ULPS``: NumPy 1.22 to 1.26 compute float64 sin and cos by vector code of their
    own on AVX-512 machines, 3 ulps from the C library's seen), a float; on the array, NumPy's result."""
    on_a_number = facts.get("on_a_number")
    if on_a_number is None:
        return []
    if len(call.args) != 1 or call.kwargs or np.result_type(call.args[0]) != np.float64:
        return []  # (an example of another dtype, or with options: nothing to compare)
    values, found = np.asarray(call.args[0]), []
    for value, want in zip(values.ravel().tolist(), np.asarray(result).ravel().tolist()):
        for number in (value, np.float64(value)):
            got = on_a_number(number)
            # (near a zero of the function, ulps of 1e-3: vector code's error there is absolute)
            if not isinstance(got, float) or abs(got - want) > _ULPS * np.spacing(max(abs(want), 1e-3)):
                found.append(f"on_a_number({number!r}) gives {got!r}, NumPy {want!r}")
    if values.ndim and not np.array_equal(on_a_number(values), result):
        found.append("on_a_number of the example array differs from NumPy's result")
    return found[:3]


def _combine(a: Any, b: Any, alpha: float, beta: float) -> Any:
    if isinstance(a, list):
        return [_combine(x, y, alpha, beta) for x, y in zip(a, b)]
    return alpha * a + beta * b


def _close(a: Any, b: Any) -> bool:
    a_items, b_items = _items(a), _items(b)
    if len(a_items) != len(b_items):
        return False
    try:
        return all(np.allclose(np.asarray(x, dtype=complex), np.asarray(y, dtype=complex), rtol=1e-7, atol=1e-9)
                   for x, y in zip(a_items, b_items))
    except (TypeError, ValueError):
        return False


def _check_linear(rule: Any, call: ExampleCall, names: Sequence[str], rng: np.random.Generator,
                  what: str) -> list[str]:
    """f(a x + b y) == a f(x) + b f(y), varying the inputs ``names`` together."""
    if not names:
        return []
    other = {n: _redraw(call.differentiable[n], rng, rule.domain) for n in names}
    alpha, beta = 0.7, -1.3
    mixed = {n: _combine(call.differentiable[n], other[n], alpha, beta) for n in names}
    at_x = call.run(rule.fn)
    at_y = call.with_values(other).run(rule.fn)
    at_mix = call.with_values(mixed).run(rule.fn)
    want = [alpha * np.asarray(x) + beta * np.asarray(y) for x, y in zip(_items(at_x), _items(at_y))]
    if not _close(at_mix if isinstance(at_mix, (tuple, list)) else [at_mix], want):
        return [f"the rule declares {what}, but NumPy's f(0.7 x + -1.3 y) is not 0.7 f(x) + -1.3 f(y) "
                f"in {', '.join(names)}"]
    return []


def _check_linear_in(rule: Any, call: ExampleCall, facts: Mapping[str, Any], rng: np.random.Generator) -> list[str]:
    """The declared ``linear_in`` positions: f linear in each of those inputs, the others held."""
    problems: list[str] = []
    for position in facts.get("linear_in", ()):
        name = rule.inputs[position] if position < len(rule.inputs) else ""
        if name in call.differentiable:
            problems += _check_linear(rule, call, [name], rng, f"linear_in={facts['linear_in']}")
    return problems


def _redraw(value: Any, rng: np.random.Generator, domain: Sequence[float]) -> Any:
    if isinstance(value, list):
        return [_redraw(v, rng, domain) for v in value]
    return _draw(np.shape(value), rng, domain)


def _check_shape_only(rule: Any, result: Any, call: ExampleCall, facts: Mapping[str, Any],
                      rng: np.random.Generator) -> list[str]:
    positions = facts.get("shape_only")
    if positions is None:
        return []
    positions = positions if isinstance(positions, tuple) else (positions,)
    changed = {}
    for position in positions:
        if position < len(call.args) and isinstance(call.args[position], (np.ndarray, float)):
            name = rule.inputs[position]
            changed[name] = _redraw(call.args[position], rng, (-3.0, 3.0))
    if not changed:
        return []
    args = list(call.args)
    for name, value in changed.items():
        args[rule.inputs.index(name)] = value
    again = rule.fn(*args, **call.kwargs)
    if not _close(again, result):
        return [f"the rule declares shape_only={positions}, but other values there change NumPy's result"]
    return []


def _nudged(value: Any, rng: np.random.Generator) -> Any:
    """``value`` moved by about a billionth of itself (a float or a float array; None for others)."""
    if isinstance(value, float):
        return value * (1.0 + 1e-9 * rng.uniform(0.5, 1.0)) + 1e-12
    if isinstance(value, np.ndarray) and value.dtype.kind == "f":
        return value * (1.0 + 1e-9 * rng.uniform(0.5, 1.0, size=value.shape)) + 1e-12
    return None


def _check_zero_derivative(rule: Any, result: Any, call: ExampleCall, facts: Mapping[str, Any],
                           rng: np.random.Generator) -> list[str]:
    """Inputs declared ``zero_derivative`` (piecewise constant there, or read for the shape): nudging
    one by a billionth leaves NumPy's result as it was."""
    found = []
    for name in facts.get("zero_derivative", ()):
        place = call.where.get(name)
        value = None if place is None else call.args[place] if isinstance(place, int) else call.kwargs[place]
        nudged = _nudged(value, rng)
        if nudged is None:
            continue
        args, kwargs = list(call.args), dict(call.kwargs)
        if isinstance(place, int):
            args[place] = nudged
        else:
            kwargs[place] = nudged
        again = rule.fn(*args, **kwargs)
        same = len(_items(again)) == len(_items(result)) and all(
            np.allclose(np.asarray(a, dtype=complex), np.asarray(b, dtype=complex), rtol=1e-12, atol=1e-15)
            for a, b in zip(_items(again), _items(result)))
        if not same:
            found.append(f"the rule declares zero_derivative for {name!r}, but nudging it changes NumPy's result")
    return found


_SHIFT, _SCALE = 0.37, 1.7  # c and e**c's stand-in for the ``shift`` checks


def _check_shift(rule: Any, result: Any, call: ExampleCall, facts: Mapping[str, Any],
                 example: Mapping[str, Any], rng: np.random.Generator) -> list[str]:
    """``shift`` (see rules.FACTS): NumPy's result moves as declared when the arguments are shifted
    by a constant or scaled by a positive one (for a reduction, one that varies along the axes kept)."""
    how = facts.get("shift")
    if how is None or not call.differentiable:
        return []
    names = [n for n in rule.inputs if n in call.differentiable]
    if how in ("homogeneous", "equivariant"):
        if set(example) - {names[0], "axis", "keepdims"}:
            return []  # where=, initial=: the reduction reads other values too
        return _check_reduction_shift(rule, result, call, names[0], how, rng)
    first = call.differentiable[names[0]]
    if how == "exp":
        moved, want = {names[0]: first + _SHIFT}, np.asarray(result) * np.exp(_SHIFT)
    elif how == "log":
        moved, want = {names[0]: first * _SCALE}, np.asarray(result) + np.log(_SCALE)
    elif how == "negation":
        moved, want = {names[0]: first + _SHIFT}, np.asarray(result) - _SHIFT
    elif how == "index":
        moved, want = {names[0]: first * _SCALE + _SHIFT}, np.asarray(result) * _SCALE + _SHIFT
    elif how in ("product", "quotient") and len(names) == 2:
        second = call.differentiable[names[1]]
        factor = _SCALE * 0.6 if how == "product" else _SCALE / 0.6
        moved, want = {names[0]: first * _SCALE, names[1]: second * 0.6}, np.asarray(result) * factor
    else:
        return [f"the rule declares shift={how!r}, which s2s_ad does not know for a function of its inputs"]
    if not _close(call.with_values(moved).run(rule.fn), want):
        return [f"the rule declares shift={how!r}, but NumPy's result does not move so"]
    return []


def _check_reduction_shift(rule: Any, result: Any, call: ExampleCall, name: str, how: str,
                           rng: np.random.Generator) -> list[str]:
    """A reduction: its argument scaled by ``s`` (and, "equivariant", shifted by ``c``), where ``s``
    and ``c`` are one number along the reduced axes and vary along the others, moves the result alike."""
    a = call.differentiable[name]
    axis = call.kwargs.get("axis", call.args[1] if len(call.args) > 1 else None)
    kept_shape = np.sum(np.zeros(np.shape(a)), axis=axis, keepdims=True).shape
    c = rng.uniform(0.5, 2.0, size=kept_shape)
    problems = []
    scaled = call.with_values({name: a * c}).run(rule.fn)
    if not _close(scaled, np.asarray(result) * np.reshape(c, np.shape(result))):
        problems.append(f"the rule declares shift={how!r}, but NumPy's result does not scale with its argument")
    shifted = call.with_values({name: a + c}).run(rule.fn)
    if how == "equivariant" and not _close(shifted, np.asarray(result) + np.reshape(c, np.shape(result))):
        problems.append(f"the rule declares shift={how!r}, but NumPy's result does not shift with its argument")
    return problems


def contradictions(rule: Any, examples: Sequence[dict], facts: Mapping[str, Any], never_view: bool,
                   items: Any = 0, seed: int = 0) -> list[str]:
    """What NumPy contradicts among the facts declared about ``rule.fn``, on each of ``examples``
    (see ``examples_of``; "example 2 (...): ..."); an empty list where every fact holds.
    ``never_view``: the function is declared to make new arrays; ``items``: its declared ``items``
    (a count or a function of some inputs)."""
    facts = {**facts, "items_declared": items}
    found: list[str] = []
    refused: list[str] = []
    all_examples = examples_of(rule, examples)
    for index, example in enumerate(all_examples):
        rng = np.random.default_rng(seed + index)
        try:
            call = example_call(rule, example, rng)
        except Exception as exc:  # an example the rule's inputs do not take is itself a wrong declaration
            found.append(f"example {index} ({_describe(example)}): NumPy refuses it: {type(exc).__name__}: {exc}")
            continue
        try:
            result = call.run(rule.fn)
        except Exception as exc:
            # an input this NumPy refuses (np.cross of 2-vectors, removed in NumPy 2.5) tells nothing
            # of the facts; a rule none of whose examples NumPy takes is itself wrongly declared
            refused.append(f"example {index} ({_describe(example)}): NumPy refuses it: {type(exc).__name__}: {exc}")
            continue
        problems = _check_sharing(result, call, facts, never_view)
        problems += _check_retake(rule, result, call, facts)
        problems += _check_shapes(rule, result, call, facts, example)
        problems += _check_floats(rule, result, call)
        problems += _check_rank_from(rule, result, call, facts)
        problems += _check_fill_operand(rule, result, call, facts)
        problems += _check_shape_only(rule, result, call, facts, rng)
        problems += _check_zero_derivative(rule, result, call, facts, rng)
        problems += _check_shift(rule, result, call, facts, example, rng)
        problems += _check_on_a_number(rule, result, call, facts)
        problems += _check_linear_in(rule, call, facts, rng)
        differentiable = [n for n in rule.differentiable_inputs() if n in call.differentiable]
        if rule.form == "linear":
            problems += _check_linear(rule, call, differentiable, rng, "linear=True")
        elif rule.form == "bilinear":
            for name in differentiable:
                problems += _check_linear(rule, call, [name], rng, "bilinear=True")
        found += [f"example {index} ({_describe(example)}): {p}" for p in problems]
    if all_examples and len(refused) == len(all_examples):
        found += refused
    return found


def _describe(example: Mapping[str, Any]) -> str:
    parts = []
    for name, value in example.items():
        text = f"array{value.shape}" if isinstance(value, np.ndarray) else repr(value)
        parts.append(f"{name}={text}")
    return ", ".join(parts)
