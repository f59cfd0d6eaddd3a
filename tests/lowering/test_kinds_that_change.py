"""Issue #12, "No silent wrong gradient": values whose kind or shape changes along the way.

1. A loop-carried value that starts as a number and becomes an array (and
   arrays whose shape changes on the first trip, broadcasting that differs
   from trip to trip, while loops, branches).
9. A float written into an integer array: NumPy truncates, so no derivative.
10. Tuple and list concatenation and repetition are not arithmetic.

Each is checked in reverse mode (grad, vjp), forward mode (jvp) and second
order (hessian) against central finite differences, closed forms, and JAX
where it is installed.
"""
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import s2s_ad
from conftest import assert_gradient_matches, numeric_grad
import kinds_functions as kf
from s2s_ad.core import ir
from s2s_ad.analysis.facts import infer
from s2s_ad.core.kinds import NUMBER, TRUTH, UNKNOWN, Array, Sequence, callee_kind
from s2s_ad.driver.pipeline import lowered

RNG = np.random.default_rng(12)
ROOT = Path(__file__).resolve().parents[2]


def _direction(value):
    return RNG.normal(size=np.shape(value)) if np.ndim(value) else float(RNG.normal())


def check_all_modes(f, args, wrt, hessian=True):
    """grad, vjp, jvp and (optionally) the Hessian of ``f`` by argument ``wrt``, against finite differences."""
    want = numeric_grad(f, args, wrt)
    got = s2s_ad.grad(f, wrt=wrt)(*args)
    assert np.shape(got) == np.shape(args[wrt]), f.__name__
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6, err_msg=f"{f.__name__} grad")
    _, pull = s2s_ad.vjp(f, *args)
    np.testing.assert_allclose(pull(1.7)[wrt], 1.7 * want, rtol=1e-5, atol=1e-6, err_msg=f"{f.__name__} vjp")
    tangents = [0.0 if np.ndim(a) == 0 else np.zeros(np.shape(a)) for a in args]
    tangents[wrt] = _direction(args[wrt])
    _, directional = s2s_ad.jvp(f, tuple(args), tuple(tangents))
    np.testing.assert_allclose(directional, np.sum(want * tangents[wrt]), rtol=1e-5, atol=1e-6,
                               err_msg=f"{f.__name__} jvp")
    if hessian:
        check_hessian(f, args, wrt)
    return got


def check_hessian(f, args, wrt, eps=1e-5):
    """``s2s_ad.hessian`` against central differences of the (already checked) gradient."""
    g = s2s_ad.grad(f, wrt=wrt)
    x = np.asarray(args[wrt], dtype=float)
    want = np.zeros(x.shape + x.shape)
    for k in np.ndindex(*x.shape):
        plus, minus = list(args), list(args)
        xp, xm = x.copy(), x.copy()
        xp[k] += eps
        xm[k] -= eps
        plus[wrt], minus[wrt] = (xp, xm) if x.ndim else (float(xp), float(xm))
        want[(Ellipsis,) + k] = (np.asarray(g(*plus)) - np.asarray(g(*minus))) / (2 * eps)
    got = np.asarray(s2s_ad.hessian(f, wrt=wrt)(*args))
    np.testing.assert_allclose(got.reshape(want.shape), want, rtol=1e-4, atol=1e-5, err_msg=f"{f.__name__} hessian")


# -- 1. a loop-carried value that starts as a number and becomes an array ---------------------------

def test_acc_starting_as_a_number_then_an_array_has_gradient_one_and_a_half():
    # acc = 0.0; for i in range(2): acc = acc * 0.5 + v: sum(acc) = 1.5 * sum(v), not 2 * sum(v)
    got = check_all_modes(kf.number_then_array, (np.array([1.0, 2.0]), 2), 0)
    np.testing.assert_allclose(got, [1.5, 1.5])


@pytest.mark.parametrize("n", [0, 1, 2, 3])
def test_a_b_equals_b_v_in_a_loop(n):
    v = np.array([1.0, 2.0])
    got = check_all_modes(kf.swap_number_for_array, (v, n), 0)
    closed = {0: [0.0, 0.0], 1: [1.0, 1.0], 2: 2 * v, 3: 2 * v}[n]  # a * b is 0*1, 1*v, v*v, v*v
    np.testing.assert_allclose(got, closed)


@pytest.mark.parametrize("n", [1, 2, 3])
@pytest.mark.parametrize("fn", [kf.shape_changes_on_first_trip, kf.previous_only, kf.previous_plus_start],
                         ids=lambda f: f.__name__)
def test_carried_array_whose_shape_changes_on_the_first_trip(fn, n):
    x, y = RNG.normal(size=3), RNG.normal(size=(2, 3))
    got = check_all_modes(fn, (x, y, n), 0)
    assert np.shape(got) == (3,)  # once came back with y's shape (2, 3)
    check_all_modes(fn, (x, y, n), 1, hessian=False)


@pytest.mark.parametrize("n", [1, 2, 3, 4])
def test_shapes_broadcast_differently_on_different_trips(n):
    args = (0.7, RNG.normal(size=(3, 1)), RNG.normal(size=4), n)
    for wrt in (0, 1, 2):
        check_all_modes(kf.broadcasts_differently_each_trip, args, wrt, hessian=wrt != 1)


@pytest.mark.parametrize("limit", [0, 1, 3])
def test_while_loop_total_starts_as_a_number(limit):
    v = np.array([0.5, 1.5])
    got = check_all_modes(kf.while_number_to_array, (v, limit), 0)
    np.testing.assert_allclose(got, 2 * v * sum(0.9 ** k for k in range(limit)))


@pytest.mark.parametrize("c", [-1.0, 1.0])
def test_branch_number_on_one_path_array_on_the_other(c):
    x = np.array([0.5, 1.5])
    got = check_all_modes(kf.branch_number_or_array, (x, c), 0)
    np.testing.assert_allclose(got, 4 * x if c > 0 else [3.0, 3.0])


@pytest.mark.parametrize("n", [1, 2, 3])
def test_number_joins_an_array_in_a_loop_branch(n):
    check_all_modes(kf.number_joins_array_in_loop_branch, (np.array([0.5, 1.5]), n), 0)


@pytest.mark.parametrize("n", [0, 1, 2])
def test_carried_array_grows_its_rank(n):
    args = (RNG.normal(size=3), RNG.normal(size=(2, 1)), n)
    check_all_modes(kf.grows_rank, args, 0)
    check_all_modes(kf.grows_rank, args, 1, hessian=False)


def test_against_jax():
    jax = pytest.importorskip("jax")
    jax.config.update("jax_enable_x64", True)
    jnp = jax.numpy

    def jax_version(v, n):
        acc = 0.0
        for _ in range(n):
            acc = acc * 0.5 + v
        return jnp.sum(acc)

    v = np.array([0.3, -1.2, 2.0])
    np.testing.assert_allclose(s2s_ad.grad(kf.number_then_array)(v, 3), jax.grad(jax_version)(v, 3))
    np.testing.assert_allclose(s2s_ad.hessian(kf.number_then_array)(v, 3), jax.hessian(jax_version)(v, 3),
                               atol=1e-12)


# -- 9. a float written into an integer array ------------------------------------------------------

def test_float_stored_into_arange_is_truncated_so_no_derivative():
    # b = np.arange(4); b[1] = 3 * x: b is [0, 3, 2, 3] near x = 1.3, so sum(b * x) = 8 x
    got = check_all_modes(kf.store_into_arange, (1.3,), 0)
    assert got == pytest.approx(8.0)


def test_float_stored_into_integer_zeros():
    got = check_all_modes(kf.store_into_int_zeros, (1.3,), 0)  # sum(b) * x with b = [1, 0, 1]
    assert got == pytest.approx(2.0)


def test_integer_conversion_then_store():
    a = np.array([1.5, 2.5, 3.5])
    check_all_modes(kf.store_into_astype_int, (1.3, a), 0)
    got = check_all_modes(kf.store_into_astype_int, (1.3, a), 1, hessian=False)
    np.testing.assert_allclose(got, [1.0, 1.0, 3.0])  # b = [1, int(x), 3]: the conversion has no derivative


@pytest.mark.parametrize("fn, args", [(kf.store_into_float_zeros, (1.3,)),
                                      (kf.store_into_copy, (1.3, np.array([1.5, 2.5, 3.5])))],
                         ids=["zeros", "copy"])
def test_float_arrays_keep_the_stored_derivative(fn, args):
    check_all_modes(fn, args, 0)


def test_store_into_a_float_array_reads_as_before():
    text = s2s_ad.source(kf.store_into_float_zeros, args=(1.3,))
    assert "if_inexact" not in text  # provably floats: no run-time check
    assert "if_inexact(" in s2s_ad.source(kf.store_into_arange, args=(1.3,))


# -- 10. tuple and list concatenation and repetition -------------------------------------------------

@pytest.mark.parametrize("fn, args", [
    (kf.concat_lists, (1.5, 2.5)),
    (kf.concat_tuples, (1.5, 2.5)),
    (kf.repeat_list, (1.5,)),
    (kf.repeat_list_on_the_left, (1.5, 0.5)),
    (kf.rotate_list, (1.5, 2.5, 3.5)),
    (kf.concat_then_array, (1.5, 2.5)),
    (kf.concat_arrays_in_lists, (RNG.normal(size=3), RNG.normal(size=3))),
    (kf.concat_unknown_kinds, (1.5, 2.5)),
    (kf.repeat_unknown_kinds, (1.5,)),
    (kf.arithmetic_still_arithmetic, (1.5, 2.5)),
], ids=lambda v: getattr(v, "__name__", ""))
def test_sequence_concatenation_and_repetition(fn, args):
    for wrt in range(len(args)):
        check_all_modes(fn, args, wrt)


def test_sequence_closed_forms():
    assert s2s_ad.grad(kf.concat_lists, wrt=(0, 1))(1.5, 2.5) == pytest.approx((5.0, 3.0))  # x * 2y
    assert s2s_ad.grad(kf.concat_tuples, wrt=(0, 1))(1.5, 2.5) == pytest.approx((2.5, 1.5))
    assert s2s_ad.grad(kf.repeat_list)(1.5) == pytest.approx(3 * 1.5 ** 2)  # x ** 3
    # [y, z, x] weighted 1, 2, 3
    assert s2s_ad.grad(kf.rotate_list, wrt=(0, 1, 2))(1.5, 2.5, 3.5) == pytest.approx((3.0, 1.0, 2.0))


@pytest.mark.parametrize("n", [0, 1, 3])
def test_list_grown_by_concatenation_in_a_loop(n):
    got = check_all_modes(kf.concat_in_loop, (1.1, n), 0)
    assert got == pytest.approx((n + 1) * 1.1 ** n + 1.0)  # x ** (n + 1) + x


# -- the analysis: kinds, the fixed point, and the facts stage --------------------------------------

def test_kind_joins():
    assert NUMBER.join(NUMBER) == NUMBER
    assert NUMBER.join(Array(1)) == Array(None) != NUMBER  # a number joined with an array is not a number
    assert Array(1).join(Array(2)) == Array(None)
    assert Array(2).join(Array(2)) == Array(2)
    pair = Sequence((NUMBER, Array(1)), "tuple")
    assert pair.join(Sequence((Array(1), Array(1)), "tuple")) == Sequence((Array(None), Array(1)), "tuple")
    assert pair.join(Sequence((NUMBER,), "tuple")) == UNKNOWN
    assert pair.join(Sequence((NUMBER, Array(1)), "list")) == UNKNOWN
    # what a callee is told: ranks (dims only where asked), tuples of those, nothing of lists or joins
    assert callee_kind(Array(2, ("a", 1))) == Array(2) and callee_kind(Array(2, ("a", 1)), dims=True) == Array(2, ("a", 1))
    assert callee_kind(Sequence((TRUTH, Array(1, ("b",))), "tuple")) == Sequence((TRUTH, Array(1)), "tuple")
    assert callee_kind(Sequence((NUMBER,), "list")) == UNKNOWN and callee_kind(Array(None)) == UNKNOWN


def _facts_of(fn, kinds):
    parsed, ssa = lowered(fn)
    return ssa, infer(ssa, dict(zip(ssa.params, kinds)))


def test_merge_of_number_and_array_is_not_a_number():
    ssa, (shape, kind) = _facts_of(kf.number_then_array, (Array(1), NUMBER))
    merged = [s.target for s in ir.walk(ssa.body) if isinstance(s, ir.Assign) and s.merge]
    assert merged and all(kind[m] != NUMBER and shape[m] != "scalar" for m in merged)


def test_facts_settle_over_nested_loops_with_many_carried_values():
    ssa, (shape, kind) = _facts_of(kf.broadcasts_differently_each_trip, (NUMBER, Array(2), Array(1), NUMBER))
    assert kind["z"] == Array(None) and shape["z"] != shape["x"]  # x * col * row ...: no shape proven
    # facts are a fixed point: one more pass changes nothing
    parsed, again = lowered(kf.broadcasts_differently_each_trip)
    assert infer(again, dict(zip(again.params, (NUMBER, Array(2), Array(1), NUMBER))))[1] == kind


def test_facts_stage_shows_kinds_activity_and_the_tape():
    text = s2s_ad.source(kf.number_then_array, stage="facts", args=(np.ones(2), 2))
    rows = {line.split()[1]: line for line in text.splitlines() if line.startswith("#   ")}
    assert "number or array" in rows["acc"] and "merge" in rows["acc"] and "active" in rows["acc"]
    assert "array of shape (a,)" in rows["v"]  # its length named: the code is specialised for the pattern
    assert "number" in rows["n"] and "constant" in rows["n"]
    assert "# recorded on the tape: shape(prod)" in text
    assert "def number_then_array(v, n):" in text  # the SSA form it describes
    forward = s2s_ad.source(kf.concat_lists, stage="facts", mode="forward", args=(1.5, 2.5))
    assert "[number, number]" in forward and "recorded on the tape" not in forward


def test_cli_prints_the_facts_stage():
    result = subprocess.run([sys.executable, "-m", "s2s_ad", "tests/corpora/kinds_functions.py:concat_tuples", "--wrt", "x",
                             "--args", "1.5,2.5", "--stage", "facts"], cwd=ROOT, capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    assert "(number, number)" in result.stdout and "active" in result.stdout


def test_everyday_loops_still_match():
    assert_gradient_matches(kf.number_then_array, (RNG.normal(size=4), 5))


def test_the_fallback_when_passes_do_not_settle_assumes_nothing_of_merges(monkeypatch):
    from s2s_ad.analysis import inference as analysis  # (the fixed point and its pass limit)

    monkeypatch.setattr(analysis, "_pass_limit", lambda merges: 0)  # as if the passes never settled
    parsed, ssa = lowered(kf.pessimistic_probe)
    shape, kind = analysis.infer(ssa, dict(zip(ssa.params, (Array(1), Array(2), NUMBER))))
    merged = {s.target for s in ir.walk(ssa.body) if isinstance(s, ir.Assign) and s.merge}
    assert merged and all(kind[m] == UNKNOWN for m in merged)
    assert len({shape[m] for m in merged}) == len(merged)
    # code generated from such facts is slower, never wrong
    args = (RNG.normal(size=3), RNG.normal(size=(2, 3)), 2)
    for wrt in (0, 1):
        check_all_modes(kf.pessimistic_probe, args, wrt, hessian=wrt == 0)


@pytest.mark.parametrize("c", [-1.0, 1.0])
def test_tuple_made_on_one_path_of_a_branch(c):
    # once: the adjoint reaching s was dropped where s = (y, x * x) on one path (a silent 0)
    for wrt in (0, 1):
        check_all_modes(kf.tuple_chosen_by_a_branch, (0.7, 1.3, c), wrt)


@pytest.mark.parametrize("n", [0, 1, 4])
def test_tuple_remade_in_a_loop(n):
    for wrt in (0, 1):
        check_all_modes(kf.tuple_rotated_in_a_loop, (0.7, 1.3, n), wrt)


# -- code written as users write it, against JAX (the same source, run with jax.numpy) ---------------

def _jax_twin(fn):
    """``fn`` with ``np`` meaning ``jax.numpy``: the same source, differentiated by JAX."""
    jax = pytest.importorskip("jax")
    jax.config.update("jax_enable_x64", True)
    import types
    namespace = dict(fn.__globals__, np=jax.numpy)
    return types.FunctionType(fn.__code__, namespace, fn.__name__), jax


_W, _U, _XS = RNG.normal(size=(2, 2)), RNG.normal(size=2), RNG.normal(size=(3, 2))


@pytest.mark.parametrize("fn, args, wrt", [
    (kf.rnn_loss, (_W, _U, _XS, 3), (0, 1)),
    (kf.moving_average, (RNG.normal(size=(3, 2)), 0.3), (0, 1)),
    (kf.polynomial_features, (0.7, 1.3), (0, 1)),
    (kf.shift_register, (RNG.normal(size=3), 4), (0,)),
    (kf.momentum, (RNG.normal(size=2), 0.1, 3), (0, 1)),
], ids=lambda v: getattr(v, "__name__", ""))
@pytest.mark.slow
def test_user_code_against_jax(fn, args, wrt):
    twin, jax = _jax_twin(fn)
    for i in wrt:
        want = jax.grad(twin, argnums=i)(*args)
        np.testing.assert_allclose(s2s_ad.grad(fn, wrt=i)(*args), want, rtol=1e-7, atol=1e-9)
        hessian = np.asarray(s2s_ad.hessian(fn, wrt=i)(*args))
        want_hessian = jax.hessian(twin, argnums=i)(*args)
        np.testing.assert_allclose(hessian.reshape(np.shape(want_hessian)), want_hessian, rtol=1e-6, atol=1e-8)
        tangents = [np.zeros(np.shape(a)) if np.ndim(a) else 0.0 for a in args]
        tangents[i] = _direction(args[i])
        _, directional = s2s_ad.jvp(fn, args, tuple(tangents))
        np.testing.assert_allclose(directional, np.sum(np.asarray(want) * tangents[i]), rtol=1e-7, atol=1e-9)


def test_extending_a_list_another_name_shares_is_refused():
    # xs += [...] extends the list in place, which ys sees: lowering it as xs = xs + [...] would be wrong
    assert kf.extend_shared_list(0.7, 1.3) == pytest.approx((0.7 + 1.4 + 1.69) * 0.7)
    with pytest.raises(s2s_ad.TransformError, match=r"kinds_functions.py:\d+.*in-place update of xs.*list"):
        s2s_ad.grad(kf.extend_shared_list)(0.7, 1.3)
