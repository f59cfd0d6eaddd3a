"""Everyday code that used to be refused (tests/corpora/everyday_refusal_functions.py): string arguments
(the code is specialised on their value), dict comprehensions and loops over known keys,
in-place updates through a view of a local array.

Oracles: central differences (conftest), JAX in float64 where installed, closed forms."""
import numpy as np
import pytest

import s2s_ad
import everyday_refusal_functions as er
from conftest import assert_gradient_matches, numeric_grad

RNG = np.random.default_rng(7)
W = np.array([0.3, -0.7, 1.1])
X = RNG.normal(size=(5, 3))
Y = RNG.normal(size=5)


def _jax():
    jax = pytest.importorskip("jax")
    jax.config.update("jax_enable_x64", True)
    return jax


# --- 1. string arguments --------------------------------------------------------------------------

@pytest.mark.parametrize("kind", ["l2", "l1", "huber"])
def test_a_loss_picked_from_a_table_by_a_string_argument(kind):
    assert_gradient_matches(er.loss_by_table, (W, X, Y, kind))


@pytest.mark.parametrize("kind", ["l2", "l1", "log-cosh"])
def test_a_loss_picked_by_if_elif_on_a_string_argument(kind):
    assert_gradient_matches(er.loss_by_branches, (W, X, Y, kind))


def test_one_gradient_function_serves_every_string_and_is_never_stale():
    g = s2s_ad.grad(er.loss_by_table)
    for kind in ["l2", "l1", "l2", "huber", "l1"]:
        want = numeric_grad(lambda w: er.loss_by_table(w, X, Y, kind), (W,), 0)
        np.testing.assert_allclose(g(W, X, Y, kind), want, rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(g(W, X, Y, kind=kind), want, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(g(W, X, Y), numeric_grad(lambda w: er.loss_by_table(w, X, Y), (W,), 0),
                               rtol=1e-5, atol=1e-6)  # the default


def test_the_generated_code_is_specialised_on_the_string():
    text = s2s_ad.source(er.loss_by_table, args=(W, X, Y, "l1"))
    l1_line = f"# line {er.l1.__code__.co_firstlineno + 1}"  # l1, a short helper, is lowered in place
    assert "kind 'l1'" in text and l1_line in text and "np.abs" in text and "LOSSES" not in text and "l2" not in text


@pytest.mark.parametrize("name", ["tanh", "sin", "exp"])
def test_getattr_of_numpy_by_a_string_argument_in_a_helper(name):
    assert_gradient_matches(er.network, (W, X, name))
    jax = _jax()
    jnp = jax.numpy
    want = jax.grad(lambda w: jnp.sum(getattr(jnp, name)(jnp.asarray(X) @ w) ** 2))(W)
    np.testing.assert_allclose(s2s_ad.grad(er.network)(W, X, name), want, rtol=1e-10)


@pytest.mark.parametrize("reg", [None, "l1", "l2"])
def test_none_and_strings_as_optional_arguments(reg):
    assert_gradient_matches(er.penalised, (W, reg))
    assert_gradient_matches(er.penalised, (W, reg, 0.3), wrt=(0, 2))


def test_value_and_grad_jvp_vjp_and_hessian_with_a_string_argument():
    jax = _jax()
    jnp = jax.numpy
    jl = {"l2": lambda r: jnp.sum(r ** 2), "l1": lambda r: jnp.sum(jnp.abs(r))}
    for kind in ["l2", "l1"]:
        value, gradient = s2s_ad.value_and_grad(er.loss_by_table)(W, X, Y, kind)
        f = lambda w: jl[kind](jnp.asarray(X) @ w - Y)  # noqa: E731
        np.testing.assert_allclose(value, f(W), rtol=1e-12)
        np.testing.assert_allclose(gradient, jax.grad(f)(W), rtol=1e-10)
        tangent = np.array([0.2, -0.1, 0.4])
        primal, out = s2s_ad.jvp(er.loss_by_table, (W, X, Y, kind), (tangent, None, None, None))
        np.testing.assert_allclose(out, jax.jvp(f, (W,), (tangent,))[1], rtol=1e-10)
        out, pullback = s2s_ad.vjp(er.loss_vector, W, kind)
        cot = np.array([1.0, -2.0, 0.5])
        fv = lambda w: jl[kind](w) * jnp.cos(w)  # noqa: E731
        np.testing.assert_allclose(out, fv(W), rtol=1e-12)
        np.testing.assert_allclose(pullback(cot)[0], jax.vjp(fv, W)[1](cot)[0], rtol=1e-10)
        np.testing.assert_allclose(s2s_ad.hessian(er.loss_by_table)(W, X, Y, kind), jax.hessian(f)(W),
                                   rtol=1e-9, atol=1e-12)
        np.testing.assert_allclose(s2s_ad.jacobian(er.loss_vector)(W, kind), jax.jacobian(fv)(W), rtol=1e-10)


@pytest.mark.parametrize("mode", ["sum", "prod"])
def test_a_string_tested_inside_a_loop(mode):
    assert_gradient_matches(er.mode_in_loop, (W, mode))


def test_a_string_that_is_no_key_of_the_table_is_refused_where_it_is_used():
    with pytest.raises(s2s_ad.TransformError, match=r"everyday_refusal_functions.py:\d+.*'l3'.*no such key"):
        s2s_ad.grad(er.loss_unknown_key)(W, "l3")


def test_an_unknown_string_still_raises_the_users_error():
    with pytest.raises(ValueError, match="unknown loss cosh"):
        s2s_ad.grad(er.loss_by_branches)(W, X, Y, "cosh")


def test_a_raise_chosen_by_a_string_in_a_loop_and_a_helper():
    assert_gradient_matches(er.checked_kind, (W, "sq"))
    with pytest.raises(KeyError, match="no such kind: cube"):
        s2s_ad.grad(er.checked_kind)(W, "cube")
    with pytest.raises(KeyError, match="no such kind: cube"):
        s2s_ad.jvp(er.checked_kind, (W, "cube"), (W, None))


@pytest.mark.parametrize("which", ["first", "second"])
def test_a_dict_read_with_a_string_argument(which):
    params = {"first": RNG.normal(size=3), "second": RNG.normal(size=3)}
    got = s2s_ad.grad(er.pick_layer)(params, X, which)
    other = "second" if which == "first" else "first"
    assert np.all(got[other] == 0)
    want = numeric_grad(lambda w: er.pick_layer({**params, which: w}, X, which), (params[which],), 0)
    np.testing.assert_allclose(got[which], want, rtol=1e-6, atol=1e-8)


# --- 2. dict comprehensions, loops over known keys, generators consumed whole --------------------

P = {"w": RNG.normal(size=3), "b": np.array(0.4)}
PV = {"w": RNG.normal(size=3), "b": RNG.normal(size=3)}


def _dict_numeric_grad(f, params, *rest):
    out = {}
    for k, v in params.items():
        out[k] = numeric_grad(lambda leaf: f({**params, k: leaf}, *rest), (v,), 0)
    return out


def _assert_dict_close(got, want, rtol=1e-6, atol=1e-8):
    assert set(got) == set(want)
    for k in want:
        np.testing.assert_allclose(got[k], want[k], rtol=rtol, atol=atol, err_msg=k)


def _check_dict_gradient(f, params, *rest):
    """grad against central differences, jvp against the gradient (a random direction)."""
    got = s2s_ad.grad(f)(params, *rest)
    _assert_dict_close(got, _dict_numeric_grad(f, params, *rest), rtol=1e-5, atol=1e-7)
    direction = {k: np.cos(np.arange(np.size(v)) + 1.0).reshape(np.shape(v)) for k, v in params.items()}
    _, tangent = s2s_ad.jvp(f, (params,) + rest, (direction,) + (None,) * len(rest))
    np.testing.assert_allclose(tangent, sum(np.sum(got[k] * direction[k]) for k in params), rtol=1e-9)
    return got


def test_a_dict_comprehension_over_items_in_a_gradient_step():
    jax = _jax()
    jnp = jax.numpy

    def twin(params, x, y, lr):
        r = x @ params["w"] + params["b"] - y
        grads = {"w": 2 * x.T @ r / len(y), "b": 2 * jnp.mean(r)}
        new = {k: v - lr * grads[k] for k, v in params.items()}
        return jnp.mean((x @ new["w"] + new["b"] - y) ** 2)

    got = _check_dict_gradient(er.sgd_step_loss, P, X, Y, 0.1)
    _assert_dict_close(got, jax.grad(twin)(P, X, Y, 0.1), rtol=1e-10)
    value, both = s2s_ad.value_and_grad(er.sgd_step_loss, wrt=(0, 3))(P, X, Y, 0.1)
    np.testing.assert_allclose(value, twin(P, X, Y, 0.1), rtol=1e-12)
    np.testing.assert_allclose(both[1], jax.grad(twin, argnums=3)(P, X, Y, 0.1), rtol=1e-10)


@pytest.mark.parametrize("f", [er.l2_penalty, er.sum_of_generator, er.largest_norm, er.filtered_comprehension,
                               er.enumerated_names], ids=lambda f: f.__name__)
def test_loops_and_generators_over_known_keys(f):
    _check_dict_gradient(f, PV)


def test_the_closed_forms_of_the_key_loops():
    _assert_dict_close(s2s_ad.grad(er.l2_penalty)(PV), {k: 2 * v for k, v in PV.items()})
    got = s2s_ad.grad(er.penalty_by_module_names, wrt=(0, 1))(PV, 0.5)
    _assert_dict_close(got[0], {k: v for k, v in PV.items()})
    np.testing.assert_allclose(got[1], sum(np.sum(v ** 2) for v in PV.values()))
    got = s2s_ad.grad(er.filtered_comprehension)(PV)
    _assert_dict_close(got, {"w": 81.0 * PV["w"] ** 2, "b": np.zeros(3)})


def test_a_dict_of_zeros_made_by_a_comprehension():
    x = np.array([0.3, -0.2, 0.9])
    np.testing.assert_allclose(s2s_ad.grad(er.zeros_then_fill)(x),
                               np.cos(x) * x ** 2 + np.sin(x) * 2 * x, rtol=1e-12)
    assert_gradient_matches(er.zeros_then_fill, (x,))


def test_a_dict_comprehension_over_a_constant_range():
    x = np.array([0.3, -0.2, 0.9])
    assert_gradient_matches(er.comprehension_over_range, (x,))
    jax = _jax()
    want = jax.hessian(lambda v: v[0] + v[1] ** 2 * v[2] ** 3)(x)
    np.testing.assert_allclose(s2s_ad.hessian(er.comprehension_over_range)(x), want, rtol=1e-10, atol=1e-12)


def test_a_dict_comprehension_whose_keys_are_not_known_is_refused_at_its_line():
    with pytest.raises(s2s_ad.TransformError, match=r"everyday_refusal_functions.py:\d+.*dict comprehension whose "
                                                    r"keys are not known.*loop over a tuple or list of strings"):
        s2s_ad.grad(er.comprehension_with_runtime_keys)(np.ones(3), 2)


def test_a_loop_over_strings_that_breaks_stays_a_loop():
    x = np.array([0.5, -1.5])
    for stop, count in [("b", 1.0), ("zz", 3.0)]:
        np.testing.assert_allclose(s2s_ad.grad(er.stops_at_a_name)(x, stop), 2 * count * x, rtol=1e-12)


# --- 3. in-place updates through a view of a local array -----------------------------------------

def _twin_scale_a_row(jnp, x):
    x = jnp.asarray(x)
    m = jnp.stack([x, x ** 2, jnp.sin(x)])
    m = m.at[1].multiply(3.0)
    return jnp.sum(jnp.sin(m)) + jnp.sum(m[1] ** 2)


def _twin_add_to_a_column(jnp, x, v):
    x = jnp.asarray(x)
    m = jnp.ones((3, 4)) * x[:, None]
    m = m.at[:, 0].add(v * x)
    return jnp.sum(m ** 3) + jnp.prod(m[:, 0])


def _twin_block_in_a_loop(jnp, x):
    x = jnp.asarray(x)
    m = jnp.zeros((4, 3)) + jnp.cos(x)
    for i in range(3):
        m = m.at[1:3, :].multiply(x)
        m = m.at[1:3, :].add(-0.1 * i)
    return jnp.sum(m * jnp.arange(12.0).reshape(4, 3)) + jnp.sum(m[1:3, :])


X3 = np.array([0.4, -0.8, 1.3])


@pytest.mark.parametrize("f, twin, args", [
    (er.scale_a_row, _twin_scale_a_row, (X3,)),
    (er.add_to_a_column, _twin_add_to_a_column, (X3, 0.7)),
    (er.update_a_block_in_a_loop, _twin_block_in_a_loop, (X3,)),
], ids=["row", "column", "block_in_a_loop"])
def test_an_update_through_a_view_changes_the_array(f, twin, args):
    assert_gradient_matches(f, args, wrt=tuple(range(len(args))) if len(args) > 1 else 0)
    jax = _jax()
    jnp = jax.numpy
    np.testing.assert_allclose(f(*args), twin(jnp, *args), rtol=1e-12)  # the twin computes what NumPy does
    np.testing.assert_allclose(s2s_ad.grad(f)(*args), jax.grad(lambda x: twin(jnp, x, *args[1:]))(args[0]),
                               rtol=1e-10)
    np.testing.assert_allclose(s2s_ad.hessian(f)(*args), jax.hessian(lambda x: twin(jnp, x, *args[1:]))(args[0]),
                               rtol=1e-9, atol=1e-12)


def test_a_vector_result_through_a_view_update():
    jax = _jax()
    jnp = jax.numpy

    def twin(x):
        x = jnp.asarray(x)
        m = jnp.zeros((2, 3)) + jnp.sin(x)
        m = m.at[0, 1:].power(2)
        return m[0] + m[1] * x

    np.testing.assert_allclose(er.vector_of_a_view_update(X3), twin(X3), rtol=1e-12)
    np.testing.assert_allclose(s2s_ad.jacobian(er.vector_of_a_view_update)(X3), jax.jacobian(twin)(X3), rtol=1e-10)
    out, pullback = s2s_ad.vjp(er.vector_of_a_view_update, X3)
    cot = np.array([0.3, -1.0, 2.0])
    np.testing.assert_allclose(pullback(cot)[0], jax.vjp(twin, X3)[1](cot)[0], rtol=1e-10)
    t = np.array([1.0, 0.5, -0.2])
    np.testing.assert_allclose(s2s_ad.jvp(er.vector_of_a_view_update, (X3,), (t,))[1],
                               jax.jvp(twin, (X3,), (t,))[1], rtol=1e-10)


@pytest.mark.parametrize("f, args, message", [
    (er.view_of_an_argument, (np.ones((3, 3)),), r"the in-place update of row: row is a view of m"),
    (er.view_by_a_computed_index, (X3, 1), r"an in-place update of row: row may be a view of m"),
    (er.view_rebound_in_the_loop, (X3,), r"block, a view of m carried through a loop: block is a view of m before "
                                         r"the loop and something else after an iteration"),
], ids=["argument", "computed_index", "view_rebound_in_the_loop"])
def test_other_updates_through_views_are_still_refused_at_their_line(f, args, message):
    with pytest.raises(s2s_ad.TransformError, match=r"everyday_refusal_functions.py:\d+.*" + message):
        s2s_ad.grad(f)(*args)


def test_a_row_of_a_matrix_of_unknown_rank_is_checked_when_the_function_runs():
    jax = _jax()
    jnp = jax.numpy

    def twin(x):
        m = jnp.outer(x, x).at[1].multiply(3.0)
        return jnp.sum(jnp.sin(m)) + jnp.sum(m[1])

    # NumPy's rule decides where it runs: written into m where m[1] is a row, else row alone rebound
    assert "is_row_of_m = ndim_m > 1" in s2s_ad.source(er.row_of_a_matrix_of_unknown_rank, args=(X3,))
    assert "is_row_of" not in s2s_ad.source(er.scale_a_row, args=(X3,))  # rank known: no check
    np.testing.assert_allclose(er.row_of_a_matrix_of_unknown_rank(X3), twin(X3), rtol=1e-12)
    assert_gradient_matches(er.row_of_a_matrix_of_unknown_rank, (X3,))
    np.testing.assert_allclose(s2s_ad.grad(er.row_of_a_matrix_of_unknown_rank)(X3), jax.grad(twin)(X3), rtol=1e-10)
    from s2s_ad.core import runtime
    runtime.check_view_update(np.ones((2, 3)), 1, "row", "hint", "f.py", 3)  # a row: a view
    with pytest.raises(s2s_ad.TransformError, match=r"f.py:3.*the in-place update of row: hint"):
        runtime.check_view_update(np.ones(3), 1, "row", "hint", "f.py", 3)  # one number: a copy


def test_a_slice_read_after_its_array_was_written_shows_the_write():
    x = np.array([0.7, -1.1, 0.4])
    assert er.slice_read_after_a_write(x) == pytest.approx(2.0 * x[0] * x[1])
    np.testing.assert_allclose(s2s_ad.grad(er.slice_read_after_a_write)(x), [2 * x[1], 2 * x[0], 0.0], rtol=1e-12)
    assert_gradient_matches(er.slice_read_after_a_write, (x,))


def test_a_column_read_in_a_loop_that_writes_its_array():
    jax = _jax()
    jnp = jax.numpy

    def twin(x):
        m = jnp.zeros((3, 3))
        total = 0.0
        for i in range(3):
            m = m.at[i, :].set(x * (i + 1.0))
            total = total + jnp.sum(m[:, 1] * x)
        return total + jnp.sum(jnp.sin(m[:, 1]))

    x = np.array([0.7, -1.1, 0.4])
    np.testing.assert_allclose(er.column_read_in_a_loop_that_writes(x), twin(x), rtol=1e-12)
    assert_gradient_matches(er.column_read_in_a_loop_that_writes, (x,))
    np.testing.assert_allclose(s2s_ad.grad(er.column_read_in_a_loop_that_writes)(x), jax.grad(twin)(x), rtol=1e-10)
    np.testing.assert_allclose(s2s_ad.hessian(er.column_read_in_a_loop_that_writes)(x), jax.hessian(twin)(x),
                               rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize("steps, closed_form", [
    ("sin,square", lambda x: 2 * np.sin(x) * np.cos(x)),
    ("SQUARE,sin", lambda x: np.cos(x ** 2) * 2 * x),
    ("sin", np.cos),
])
def test_string_methods_of_a_string_argument_are_computed_while_transforming(steps, closed_form):
    x = np.array([0.7, -1.1, 0.4])
    np.testing.assert_allclose(s2s_ad.grad(er.pipeline_of_named_steps)(x, steps), closed_form(x), rtol=1e-12)
    assert_gradient_matches(er.pipeline_of_named_steps, (x, steps))
    with pytest.raises(ValueError, match="unknown step cube"):
        s2s_ad.grad(er.pipeline_of_named_steps)(x, "sin,cube")


@pytest.mark.parametrize("f", [er.raise_in_one_of_two_defs, er.raise_in_a_conditional_expression],
                         ids=lambda f: f.__name__)
def test_a_raise_a_string_chose_on_one_path_only_leaves_the_other_path_differentiated(f):
    x = np.array([0.7, -1.1, 0.4])
    np.testing.assert_allclose(s2s_ad.grad(f)(x, "bad", -1.0), 18.0 * x, rtol=1e-12)
    assert_gradient_matches(f, (x, "bad", -1.0))
    with pytest.raises(ValueError, match="bad kind"):
        s2s_ad.grad(f)(x, "bad", 1.0)


def test_rebinding_the_item_a_string_picked_regenerates_the_code(monkeypatch):
    g = s2s_ad.grad(er.loss_by_table)
    r = X @ W - Y
    np.testing.assert_allclose(g(W, X, Y, "l2"), 2 * X.T @ r, rtol=1e-12)
    monkeypatch.setitem(er.LOSSES, "l2", er.l1)
    np.testing.assert_allclose(g(W, X, Y, "l2"), X.T @ np.sign(r), rtol=1e-12)


def test_a_membership_test_on_a_string_argument_keeps_one_branch():
    x = np.array([0.7, -1.1, 0.4])
    np.testing.assert_allclose(s2s_ad.grad(er.guarded_activation)(x, "relu"), 2 * np.maximum(x, 0), rtol=1e-12)
    assert_gradient_matches(er.guarded_activation, (x, "tanh"))
    with pytest.raises(ValueError, match="unsupported activation sigmoid"):  # not "no such key"
        s2s_ad.grad(er.guarded_activation)(x, "sigmoid")


def test_rows_and_columns_updated_in_a_loop_over_range():
    jax = _jax()
    jnp = jax.numpy

    def twin_rows(x):
        m = jnp.stack([jnp.exp(x), jnp.exp(-x), x ** 2 + 1.0])
        m = m / jnp.sum(m, axis=1, keepdims=True)
        return jnp.sum(m * jnp.arange(9.0).reshape(3, 3))

    def twin_columns(x):
        m = jnp.ones((2, 3)) * x
        m = m * (x + 1.0)
        return jnp.sum(jnp.sin(m))

    x = np.array([0.7, -1.1, 0.4])
    for f, twin in [(er.normalise_rows_in_a_loop, twin_rows), (er.scale_columns_backwards, twin_columns)]:
        np.testing.assert_allclose(f(x), twin(x), rtol=1e-12)
        assert_gradient_matches(f, (x,))
        np.testing.assert_allclose(s2s_ad.grad(f)(x), jax.grad(twin)(x), rtol=1e-10)
        np.testing.assert_allclose(s2s_ad.hessian(f)(x), jax.hessian(twin)(x), rtol=1e-9, atol=1e-12)


def test_a_view_by_a_number_computed_in_the_loop_is_still_refused():
    with pytest.raises(s2s_ad.TransformError, match=r"everyday_refusal_functions.py:\d+.*in-place update of row: "
                                                    r"row may be a view of m"):
        s2s_ad.grad(er.view_by_a_computed_number)(np.ones(3))


def test_an_update_that_reads_the_rows_own_values_in_a_loop():
    jax = _jax()
    jnp = jax.numpy

    def twin(x):
        m = jnp.stack([jnp.sin(x), x * 2.0])
        m = m * m
        m = m + x * m
        return jnp.sum(m ** 2) + jnp.sum(m[1])

    x = np.array([0.7, -1.1, 0.4])
    np.testing.assert_allclose(er.square_rows_in_a_loop(x), twin(x), rtol=1e-12)
    np.testing.assert_allclose(s2s_ad.grad(er.square_rows_in_a_loop)(x), jax.grad(twin)(x), rtol=1e-10)
    np.testing.assert_allclose(s2s_ad.hessian(er.square_rows_in_a_loop)(x), jax.hessian(twin)(x), rtol=1e-9,
                               atol=1e-12)
    assert_gradient_matches(er.square_rows_in_a_loop, (x,))


def test_a_view_taken_before_a_loop_and_updated_in_it():
    jax = _jax()
    jnp = jax.numpy

    def twin(x):
        m = jnp.zeros((4, 3)) + jnp.cos(x)
        for i in range(3):
            m = m.at[1:3, :].multiply(x)
            m = m.at[1:3, :].add(0.1 * i)
        return jnp.sum(m * jnp.arange(12.0).reshape(4, 3)) + jnp.sum(jnp.sin(m[1:3, :]))

    x = np.array([0.7, -1.1, 0.4])
    np.testing.assert_allclose(er.view_taken_before_the_loop(x), twin(x), rtol=1e-12)
    assert_gradient_matches(er.view_taken_before_the_loop, (x,))
    np.testing.assert_allclose(s2s_ad.grad(er.view_taken_before_the_loop)(x), jax.grad(twin)(x), rtol=1e-10)
    np.testing.assert_allclose(s2s_ad.hessian(er.view_taken_before_the_loop)(x), jax.hessian(twin)(x), rtol=1e-9,
                               atol=1e-12)


def test_a_row_carried_through_a_while_loop():
    jax = _jax()
    jnp = jax.numpy

    def twin(x):
        m = jnp.stack([x, jnp.cos(x)])
        total = 0.0
        for _ in range(3):
            m = m.at[1].multiply(x)
            m = m.at[0].set(m[0] + m[1])
            total = total + jnp.sum(m[1] * m[0])
        return total + jnp.sum(m ** 2)

    x = np.array([0.7, -1.1, 0.4])
    np.testing.assert_allclose(er.row_carried_through_a_while_loop(x), twin(x), rtol=1e-12)
    assert_gradient_matches(er.row_carried_through_a_while_loop, (x,))
    np.testing.assert_allclose(s2s_ad.grad(er.row_carried_through_a_while_loop)(x), jax.grad(twin)(x), rtol=1e-10)


def test_a_conditional_expression_on_a_string_keeps_only_the_part_chosen():
    a = np.array([1.0, 2.0, 3.0])
    for f, kind in [(er.chosen_by_expression, "no"), (er.scaled_by_and_or, "double"), (er.scaled_by_and_or, "x")]:
        args = (a, 0.5, kind)
        got = s2s_ad.grad(f, wrt=(0, 1))(*args)
        for i in range(2):
            np.testing.assert_allclose(got[i], numeric_grad(f, args, i), rtol=1e-7)
        _, pullback = s2s_ad.vjp(f, *args)
        np.testing.assert_allclose(pullback(1.0)[0], got[0])
