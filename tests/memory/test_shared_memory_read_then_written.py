"""Issue #12, "no silent wrong gradient": arrays that share memory, read and then written.

Each function in ``aliasing_functions.py`` reads an array (a slice, a row, a
column, an array handed to a helper) and writes into it afterwards.  The
reverse sweep must read what the forward sweep saw; ``vjp`` must not change
what it returned; arrays handed to users are writable and their own; and an
in-place update that NumPy would make through another name is refused,
never computed differently.  Oracles: central finite differences, closed
forms, and JAX where installed.
"""
from __future__ import annotations

import operator

import numpy as np
import pytest

import s2s_ad
from s2s_ad.core import ir
from s2s_ad.memory.sharing import Sharing, returns_shared
from s2s_ad.core.kinds import NUMBER, Array
from s2s_ad.driver.pipeline import lowered

import aliasing_functions as af
from conftest import assert_gradient_matches, numeric_grad

X = np.array([0.5, 1.5, 2.5])
M = np.arange(6.0).reshape(2, 3) / 3 + 0.2
U = np.array([0.3, 0.7, 1.1])


def numeric_hessian(f, args, h=1e-4):
    """Second differences of ``f`` by its first (array) argument."""
    x = np.array(args[0], dtype=float)
    n = x.size
    hess = np.zeros((n, n))
    at = lambda y: float(f(y.reshape(x.shape), *args[1:]))
    for i in range(n):
        for j in range(n):
            ei, ej = np.eye(n)[i] * h, np.eye(n)[j] * h
            flat = x.ravel()
            hess[i, j] = (at(flat + ei + ej) - at(flat + ei - ej) - at(flat - ei + ej) + at(flat - ei - ej)) / (4 * h * h)
    return hess


def check_every_mode(f, args):
    """grad, vjp, jvp and hessian of ``f`` by its first argument, against finite differences."""
    want = numeric_grad(f, args, 0)
    assert_gradient_matches(f, args)  # grad against finite differences, and jvp against grad
    out, pullback = s2s_ad.vjp(f, *args)
    np.testing.assert_allclose(out, f(*args), rtol=1e-12)
    np.testing.assert_allclose(pullback(1.0)[0], want, rtol=1e-5, atol=1e-6)
    direction = np.linspace(0.3, -0.7, np.size(args[0])).reshape(np.shape(args[0]))
    value, tangent = s2s_ad.jvp(f, args, (direction,) + tuple(np.zeros_like(a) for a in args[1:]))
    np.testing.assert_allclose(value, f(*args), rtol=1e-12)
    np.testing.assert_allclose(tangent, np.sum(want * direction), rtol=1e-5, atol=1e-6)
    hess = np.asarray(s2s_ad.hessian(f)(*args)).reshape(np.size(args[0]), np.size(args[0]))
    np.testing.assert_allclose(hess, numeric_hessian(f, args), rtol=1e-4, atol=1e-4)


# -- 2. a slice, row or column read into an operation and then overwritten ------------------


def test_a_slice_squared_into_itself_has_the_closed_form_gradient():
    # y[0:2] = y[0:2] ** 2 at x = [.5, 1.5, 2.5]: d/dx sum = [2 x0, 2 x1, 1] = [1, 3, 1] (was [0.5, 4.5, 1])
    np.testing.assert_allclose(s2s_ad.grad(af.slice_squared)(X), [1.0, 3.0, 1.0], rtol=1e-12)


@pytest.mark.parametrize("f, args", [
    (af.slice_squared, (X,)),
    (af.column_squared, (M,)),
    (af.tail_sine, (X,)),
    (af.slice_times_shifted, (X,)),
    (af.recurrence, (X, U)),
    (af.normalise_rows, (M,)),
], ids=lambda v: getattr(v, "__name__", ""))
def test_a_view_read_then_overwritten_gives_the_right_gradient_in_every_mode(f, args):
    check_every_mode(f, args)


@pytest.mark.parametrize("x", [X, -X], ids=["then", "else"])
def test_a_view_chosen_in_a_branch_read_then_overwritten(x):
    check_every_mode(af.branch_view_read_before_write, (x,))


@pytest.mark.parametrize("x", [X, -X], ids=["then", "else"])
def test_a_view_chosen_in_a_branch_read_after_the_write_shows_it(x):
    # NumPy shows the new y[1] through v: v is chosen again by the same test, from y as it is then (issue 31)
    check_every_mode(af.branch_view_read_after_write, (x,))


def test_the_recurrence_in_a_loop_by_its_second_argument():
    assert_gradient_matches(af.recurrence, (X, U), wrt=(0, 1))


def test_a_slice_read_then_overwritten_agrees_with_jax():
    jax = pytest.importorskip("jax")
    jax.config.update("jax_enable_x64", True)
    jnp = jax.numpy

    def recurrence(x, u):
        v = x
        for k in range(3):
            v = v.at[1:3].set(v[1:3] * u[k] + jnp.sin(v[0:2]))
        return jnp.sum(v * v)

    ours = s2s_ad.grad(af.recurrence, wrt=(0, 1))(X, U)
    theirs = jax.grad(recurrence, argnums=(0, 1))(X, U)
    for a, b in zip(ours, theirs):
        np.testing.assert_allclose(a, np.asarray(b), rtol=1e-10)
    np.testing.assert_allclose(s2s_ad.hessian(af.recurrence)(X, U), np.asarray(jax.hessian(recurrence)(X, U)),
                               rtol=1e-9, atol=1e-12)


def test_only_views_the_reverse_sweep_reads_are_copied():
    # the primal keeps NumPy's view, the reverse sweep reads a copy bound beside it (ad/kept_views.py)
    source = s2s_ad.source(af.slice_squared)
    assert "y_part = y[0:2]" in source and "y_part_kept = np.copy(y_part)" in source  # the square's adjoint
    assert "d_power * 2 * y_part_kept" in source  # reads it after the write
    source = s2s_ad.source(af.tail_sine)
    assert "y_part_kept = np.copy(y_part)" in source  # cos(y[1:]) is read after the write
    # a view whose adjoint nothing reads is not copied: the sum's adjoint needs no values
    assert "_kept = np.copy(" not in s2s_ad.source(af.slice_sum_shifted)


# -- 3. a local array handed to a helper and written afterwards ---------------------------


@pytest.mark.parametrize("f", [af.helper_then_write, af.helper_view_then_write, af.helper_reads_then_write],
                         ids=lambda f: f.__name__)
def test_an_array_handed_to_a_helper_and_written_afterwards(f):
    check_every_mode(f, (X,))


# -- 5. vjp does not change what it returned ------------------------------------------------


def test_vjp_leaves_its_output_alone_and_gives_the_same_answer_twice():
    x = np.array([1.5, 0.5, 2.5])
    out, pullback = s2s_ad.vjp(af.vjp_vector, x)
    before = out.copy()
    np.testing.assert_allclose(before, af.vjp_vector(x))
    cotangent = np.array([1.0, 2.0, 3.0])
    first = pullback(cotangent)[0]
    np.testing.assert_array_equal(out, before)  # was zeroed: the pullback restored a shared buffer
    second = pullback(cotangent)[0]
    np.testing.assert_array_equal(out, before)
    np.testing.assert_allclose(first, [2 * 1.5 * 1.0, 2.0, 3.0], rtol=1e-12)  # closed form
    np.testing.assert_array_equal(first, second)
    assert not np.shares_memory(first, second)


@pytest.mark.parametrize("f", [af.filled, af.filled_rows, af.updated_copy, af.vjp_vector], ids=lambda f: f.__name__)
def test_a_pullback_changes_neither_the_output_nor_the_cotangent(f):
    out, pullback = s2s_ad.vjp(f, X)
    kept = out.copy()
    cotangent = np.linspace(0.5, 1.5, out.size).reshape(out.shape)
    given = cotangent.copy()
    jacobian = np.array([numeric_grad(lambda x: np.sum(f(x) * cotangent), (X,), 0)])  # cotangent . J
    for _ in range(2):
        np.testing.assert_allclose(pullback(cotangent)[0], jacobian[0], rtol=1e-5, atol=1e-6)
        np.testing.assert_array_equal(out, kept)
        np.testing.assert_array_equal(cotangent, given)


@pytest.mark.parametrize("f", [af.helper_then_write, af.recurrence_of_one, af.vjp_vector_sum],
                         ids=lambda f: f.__name__)
def test_a_pullback_called_again_gives_the_same_answer(f):
    out, pullback = s2s_ad.vjp(f, X)
    want = numeric_grad(f, (X,), 0)
    for _ in range(3):
        np.testing.assert_allclose(pullback(1.0)[0], want, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(out, f(X), rtol=1e-12)


# -- 7. an in-place update of an array another name shares ----------------------------------


@pytest.mark.parametrize("f", [af.list_shared, af.view_shared, af.reshape_shared], ids=lambda f: f.__name__)
def test_an_update_another_name_sees_is_the_store_numpy_makes(f):
    """The kinds prove an array: ``a += v`` is ``a[...] = a + v``, which the other name sees (issue 31)."""
    check_every_mode(f, (X,))


def test_an_update_of_a_0d_array_another_name_shares_is_refused_where_it_runs():
    with pytest.raises(s2s_ad.TransformError, match="in-place update of a"):  # np.where's 0-d array: no kind proves it
        s2s_ad.grad(af.zero_d_shared)(X)


def test_an_update_of_unknown_rank_is_decided_when_it_runs():
    w = np.array([0.2, -0.4, 0.9])
    # a vector times a vector is a number: += makes a new one, as in Python
    assert_gradient_matches(af.shared_unknown_rank_updated, (X, w), wrt=(0, 1))
    hess = s2s_ad.hessian(af.shared_unknown_rank_updated)(X, w)  # the check survives differentiating again
    np.testing.assert_allclose(hess, numeric_hessian(af.shared_unknown_rank_updated, (X, w)), rtol=1e-4, atol=1e-4)
    # a matrix times a vector is an array that b shares: refused, not computed differently
    with pytest.raises(s2s_ad.TransformError, match="in-place update of a"):
        s2s_ad.grad(af.shared_unknown_rank_updated)(X, np.eye(3))


def test_a_shared_number_updated_is_still_fine():
    g = assert_gradient_matches(af.shared_number_updated, (X,))
    s = np.sum(X)
    np.testing.assert_allclose(g, np.full(3, 2 * s + 1.0), rtol=1e-12)  # d/dx s (s + 1)


# -- 11. a helper that returns its argument, or a view of it --------------------------------


@pytest.mark.parametrize("f", [af.write_after_checked_helper_returned_it, af.write_after_helper_returned_a_view,
                               af.checked_helper_returns_argument, af.helper_returns_view_write],
                         ids=lambda f: f.__name__)
def test_a_write_through_what_a_helper_returned_is_seen(f):
    """Helpers with a branch or a subscript, given an array the function writes into: lowered in place,
    so what they return is known to be the argument or a view of it, and a write through it is seen."""
    check_every_mode(f, (X,))


@pytest.mark.parametrize("f", [af.write_after_helper_returned_it, af.helper_returns_argument], ids=lambda f: f.__name__)
def test_a_write_through_what_a_short_helper_returned_is_seen_exactly(f):
    """``_same`` is lowered in place: that it returns its argument is seen, and the write through either
    name is differentiated as the write it is."""
    assert "d__same" not in s2s_ad.source(f, args=(X,))
    g = assert_gradient_matches(f, (X,))
    np.testing.assert_allclose(g, numeric_grad(f, (X,), 0), rtol=1e-6)


# -- arrays handed to users ------------------------------------------------------------------


def test_the_gradient_of_builtin_sum_is_a_writable_array_of_its_own():
    v = np.array([1.0, 2.0, 3.0])
    g = s2s_ad.grad(af.builtin_sum)(v)
    g *= 0.5  # was a read-only zero-stride array
    np.testing.assert_array_equal(g, [0.5, 0.5, 0.5])
    np.testing.assert_array_equal(s2s_ad.grad(af.builtin_sum)(v), [1.0, 1.0, 1.0])


def test_gradients_tangents_and_cotangents_share_memory_with_nothing_the_user_holds():
    x, y = np.array([1.0, 2.0]), np.array([3.0, 4.0])
    dx, dy = s2s_ad.grad(af.identity_sum, wrt=(0, 1))(x, y)
    for g in (dx, dy):
        assert g.flags.writeable
        assert not any(np.shares_memory(g, a) for a in (x, y))
    assert not np.shares_memory(dx, dy)
    np.testing.assert_array_equal(dx, y)
    tx = np.array([1.0, 0.0])
    out, t_out = s2s_ad.jvp(af.vjp_vector, (x,), (tx,))
    assert not np.shares_memory(t_out, tx) and t_out.flags.writeable
    out, pullback = s2s_ad.vjp(af.vjp_vector, x)
    c = np.array([1.0, 1.0])
    (d,) = pullback(c)
    assert not np.shares_memory(d, c) and not np.shares_memory(d, out) and d.flags.writeable


# -- the may-alias analysis ------------------------------------------------------------------


def test_the_analysis_follows_views_lists_and_helpers():
    _, ssa = lowered(af.helper_then_write)
    sharing = Sharing(ssa)
    (y,) = [s.target for s in ssa.body if isinstance(s, ir.Assign) and s.target.startswith("y")][:1]
    assert "x" not in sharing.of(y)  # a copy is an array of its own
    assert sharing.may_change(y)
    _, ssa = lowered(af.slice_squared)
    sharing = Sharing(ssa)
    part = next(s.target for s in ssa.body if isinstance(s, ir.Assign) and s.target.startswith("y_part"))
    assert sharing.shares(part, "y") and part in sharing.stale  # a view of y, which is written after it
    _, ssa = lowered(af.list_view_unwritten)
    assert not Sharing(ssa).stale  # nothing is written: nothing is stale


def test_the_analysis_knows_which_helpers_return_their_argument():
    assert returns_shared(lowered(af._same)[1])
    assert returns_shared(lowered(af._head)[1])
    assert not returns_shared(lowered(af._scaled)[1])
    assert not returns_shared(lowered(af._square_sum)[1])


# -- the tape: every pop has its push --------------------------------------------------------


def _adjoint_ir(f, kinds):
    from s2s_ad.passes.optimize import optimize
    from s2s_ad.driver.pipeline import _analysed, build_split
    from s2s_ad.ad.reverse import reverse

    _, ssa = lowered(f)
    ssa, facts = _analysed(ssa, ssa.params[:1], kinds)
    return optimize(reverse(ssa, ssa.params[:1], facts, callee=build_split), ssa.body)


def _pops(body):
    return [s for s in ir.walk(body) if isinstance(s, ir.Pop)]


def test_the_tape_checker_accepts_what_is_generated_and_catches_a_missing_pop():
    from s2s_ad.ad.tape import TapeViolation, check_tape

    adjoint = _adjoint_ir(af.recurrence, (Array(1), Array(1)))
    check_tape(adjoint)
    loop = next(s for s in adjoint.body if isinstance(s, ir.For) and s.reverse)
    pop = _pops(loop.body)[0]
    loop.body.remove(pop)  # a record the reverse sweep no longer takes back
    with pytest.raises(TapeViolation, match="pops"):
        check_tape(adjoint)
    loop.body.insert(0, ir.Pop(pop.slot, pop.targets[1:]))  # one value fewer than was pushed
    with pytest.raises(TapeViolation):
        check_tape(adjoint)


def test_the_tape_checker_follows_replayed_checkpoint_segments():
    from s2s_ad.ad.tape import TapeViolation, check_tape
    import checkpoint_functions as cf

    adjoint = _adjoint_ir(cf.mixed_body, (Array(1), NUMBER, NUMBER))
    check_tape(adjoint)
    segment = next(s for s in ir.walk(adjoint.body) if isinstance(s, ir.For) and s.reverse and _pops(s.body))
    segment.body.remove(_pops(segment.body)[0])
    with pytest.raises(TapeViolation):
        check_tape(adjoint)


def test_a_record_the_reverse_sweep_never_reads_is_taken_out_of_its_push_and_pop():
    from s2s_ad.ad.tape import check_tape, drop_unread_records

    adjoint = _adjoint_ir(af.recurrence, (Array(1), Array(1)))
    loop = next(s for s in adjoint.body if isinstance(s, ir.For) and s.reverse)
    pop = next(p for p in _pops(loop.body) if len(p.targets) > 1)
    unread = pop.targets[0]
    for stmt in ir.walk(loop.body):  # make the reverse sweep stop reading the first popped value
        if isinstance(stmt, ir.Assign) and unread in set(ir.names_read(stmt.value)):
            stmt.value = ir.Const(0.0)
    pushes = lambda fn: [s for s in ir.walk(fn.body) if isinstance(s, ir.Push) and s.slot == pop.slot]
    before = pushes(adjoint)
    tidied = drop_unread_records(adjoint)
    check_tape(tidied)  # still paired
    (new_pop,) = [p for p in _pops(tidied.body) if p.slot == pop.slot]
    assert unread not in new_pop.targets and len(new_pop.targets) == len(pop.targets) - 1
    after = pushes(tidied)
    assert before and len(after) == len(before) and all(len(p.values) == len(new_pop.targets) for p in after)
    assert [v.target for v in tidied.plan.slot(pop.slot).values] == list(new_pop.targets)  # the plan too
    assert drop_unread_records(_adjoint_ir(af.recurrence, (Array(1), Array(1)))).body  # nothing to drop: unchanged


def _element_carried_then_matrix_written(x):
    b = np.eye(3, 4)
    s = b[1, 0]
    for i in range(2):
        s = s * 0.7 + x[0, 0]
    b -= x * 0.5
    return s + np.sum(b)


def test_an_element_of_a_matrix_carried_through_a_loop_is_a_number_after_the_matrix_is_written():
    """np.eye's result is a matrix (declared: result_rank), so b[1, 0] is one number, a copy that keeps
    its value when b is written later; found refused by an outside generator (gen2.py) where the
    rank of np.eye(3, 4) was not known."""
    x = np.linspace(0.1, 1.2, 12).reshape(3, 4)
    gradient = s2s_ad.grad(_element_carried_then_matrix_written)(x)
    want = np.full((3, 4), -0.5)
    want[0, 0] += 0.7 + 1.0
    np.testing.assert_allclose(gradient, want, rtol=1e-14)
    np.testing.assert_allclose(gradient, numeric_grad(_element_carried_then_matrix_written, (x,), 0), rtol=1e-7)


def _view(name: str, of: str) -> ir.Assign:
    return ir.Assign(name, ir.Call(operator.getitem, (ir.Var(of), ir.Slice(ir.Const(1), None, None))))


def _new(name: str, of: str) -> ir.Assign:
    return ir.Assign(name, ir.Call(operator.mul, (ir.Var(of), ir.Const(2.0))))


def test_the_analysis_of_generated_code_is_the_same_in_any_order():
    # generated code binds names again and reads some before the binding it sees (a loop's carried
    # values): the answer must not depend on the order the statements are looked at in
    body = [_view("v", "b"), ir.Assign("pair", ir.Display("list", (ir.Var("v"), ir.Var("c")))),
            ir.Assign("item", ir.Call(operator.getitem, (ir.Var("pair"), ir.Const(0)))),
            _new("b", "x"), _new("c", "x"), ir.Assign("b", ir.Var("item"))]
    names = ["v", "pair", "item", "b", "c", "x"]
    forward, backward = Sharing.of_block(body), Sharing.of_block(body[::-1])
    assert {n: forward.of(n) for n in names} == {n: backward.of(n) for n in names}
    assert forward.shares("item", "c") and forward.shares("item", "v") and forward.shares("b", "v")
    assert not forward.shares("b", "x")  # b * 2.0 is an array of its own, and so is c


def test_the_analysis_follows_the_tape_and_leaves_numbers_alone():
    body = [_view("v", "b"), ir.Push("s0", (ir.Var("v"),)), ir.Pop("s0", ("w",)),
            ir.Assign("k", ir.Call(operator.getitem, (ir.Var("b"), ir.Const(0))))]
    sharing = Sharing.of_block(body, numbers=frozenset({"k"}))
    assert sharing.shares("w", "b")  # popped: what the slot's push recorded, a view of b
    assert not sharing.shares("k", "b")  # b[0] named a number: it shares nothing


def test_a_long_chain_of_views_is_analysed_without_recursion():
    body = [_new("v0", "x")] + [_view(f"v{i}", f"v{i - 1}") for i in range(1, 5000)]
    sharing = Sharing.of_block(body[::-1])
    assert sharing.shares("v4999", "v0") and not sharing.shares("v0", "x")
