"""Everyday Python, more of issue #13 (tests/corpora/everyday_more_functions.py): the types of the arguments
kept by every transform (float32, 0-d arrays, tuples), f-strings in print and logging, if/elif
chains that end in a raise and a raise chosen by a string argument, checkpointed(..., snapshots=c).

Oracles: central differences (conftest), JAX in float64 where installed, the same loop without
checkpointing."""
import logging

import numpy as np
import pytest

import s2s_ad
import everyday_more_functions as em
from conftest import assert_gradient_matches, numeric_grad

X = np.array([0.3, -0.7, 1.1])


def _jax():
    jax = pytest.importorskip("jax")
    jax.config.update("jax_enable_x64", True)
    return jax


def _numeric_hessian(f, x, *rest, eps=1e-5):
    """Central differences of the gradient by the first argument (checked against central
    differences of ``f`` itself wherever this is used)."""
    g = s2s_ad.grad(f)
    x = np.asarray(x, dtype=float)
    columns = []
    for index in np.ndindex(x.shape):
        up, down = x.copy(), x.copy()
        up[index] += eps
        down[index] -= eps
        columns.append((np.asarray(g(up, *rest)) - np.asarray(g(down, *rest))) / (2 * eps))
    return np.stack(columns, axis=-1).reshape(x.shape + x.shape) if columns else np.zeros(x.shape * 2)


# --- 1. types kept -------------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_every_transform_keeps_a_float_arrays_dtype(dtype):
    x = X.astype(dtype)
    g = s2s_ad.grad(em.energy)(x)
    h = s2s_ad.hessian(em.energy)(x)
    j = s2s_ad.jacobian(em.vector_field)(x)
    _, t = s2s_ad.jvp(em.vector_field, (x,), (np.ones_like(x),))
    _, pull = s2s_ad.vjp(em.vector_field, x)
    (c,) = pull(np.ones(3, dtype=dtype))
    for name, value, shape in [("grad", g, (3,)), ("hessian", h, (3, 3)), ("jacobian", j, (3, 3)),
                               ("jvp", t, (3,)), ("vjp", c, (3,))]:
        assert isinstance(value, np.ndarray) and value.dtype == dtype and value.shape == shape, (name, value)
    tol = 1e-4 if dtype == np.float32 else 1e-6
    x64 = X.astype(np.float64)
    np.testing.assert_allclose(g, numeric_grad(em.energy, (x64,), 0), rtol=tol, atol=tol)
    np.testing.assert_allclose(h, _numeric_hessian(em.energy, x64), rtol=tol, atol=tol)
    np.testing.assert_allclose(j, s2s_ad.jacobian(em.vector_field)(x64), rtol=tol, atol=tol)


@pytest.mark.slow
def test_float32_hessian_and_jacobian_match_jax_in_float32():
    jax = _jax()
    import jax.numpy as jnp
    x = X.astype(np.float32)

    def energy(x):
        return jnp.sum(jnp.sin(x) * x ** 2) + 0.5 * jnp.sum(x) ** 2

    def vector_field(x):
        return jnp.sin(x) * x[0] + jnp.cos(x[::-1])

    want_h, want_j = jax.hessian(energy)(jnp.asarray(x)), jax.jacfwd(vector_field)(jnp.asarray(x))
    got_h, got_j = s2s_ad.hessian(em.energy)(x), s2s_ad.jacobian(em.vector_field)(x)
    assert got_h.dtype == want_h.dtype == np.float32 and got_j.dtype == want_j.dtype == np.float32
    np.testing.assert_allclose(got_h, np.asarray(want_h), rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(got_j, np.asarray(want_j), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_a_zero_d_array_gives_zero_d_arrays(dtype):
    x = np.array(0.4, dtype=dtype)
    results = {"grad": s2s_ad.grad(em.energy)(x), "hessian": s2s_ad.hessian(em.energy)(x),
               "vjp": s2s_ad.vjp(em.energy, x)[1](1.0)[0]}
    for name, value in results.items():
        assert isinstance(value, np.ndarray) and value.shape == () and value.dtype == dtype, (name, value)
    # d/dx [sin(x) x^2 + x^2 / 2] and its derivative, in closed form
    x0 = 0.4
    tol = 1e-5 if dtype == np.float32 else 1e-12
    np.testing.assert_allclose(results["grad"], np.cos(x0) * x0 ** 2 + 2 * x0 * np.sin(x0) + x0, rtol=tol)
    np.testing.assert_allclose(results["vjp"], results["grad"], rtol=tol)
    np.testing.assert_allclose(results["hessian"], -np.sin(x0) * x0 ** 2 + 4 * x0 * np.cos(x0)
                               + 2 * np.sin(x0) + 1.0, rtol=tol)


def test_a_numpy_float32_number_keeps_its_type():
    x = np.float32(0.4)
    g = s2s_ad.grad(em.energy)(x)
    (c,) = s2s_ad.vjp(em.energy, x)[1](1.0)
    assert isinstance(g, np.float32) and isinstance(c, np.float32)
    np.testing.assert_allclose(g, numeric_grad(em.energy, (0.4,), 0), rtol=1e-5)
    assert s2s_ad.hessian(em.energy)(x).dtype == np.float32


def test_several_arguments_give_tuples_of_their_own_dtypes():
    w, b = X.astype(np.float32), np.array([0.5, 2.0, -1.0])
    g = s2s_ad.grad(em.two_arguments, wrt=(0, 1))(w, b)
    assert isinstance(g, tuple) and [a.dtype for a in g] == [np.float32, np.float64]
    h = s2s_ad.hessian(em.two_arguments, wrt=(0, 1))(w, b)
    assert isinstance(h, tuple) and all(isinstance(row, tuple) and len(row) == 2 for row in h)
    assert [[block.dtype for block in row] for row in h] == [[np.float32, np.float64]] * 2
    (cw, cb) = s2s_ad.vjp(em.two_arguments, w, b)[1](1.0)
    assert cw.dtype == np.float32 and cb.dtype == np.float64
    w64 = w.astype(np.float64)
    want = assert_gradient_matches(em.two_arguments, (w64, b), wrt=(0, 1))
    for got, expected in zip(g, want):
        np.testing.assert_allclose(got, expected, rtol=1e-5)
    np.testing.assert_allclose(cb, want[1], rtol=1e-5)


def test_integer_arguments_are_not_made_float32():
    # a float32 argument beside an integer index: the index has no derivative, the float32 keeps its type
    def pick(x, i):
        return x[i] * np.sum(x ** 2)

    h = s2s_ad.hessian(pick)(X.astype(np.float32), 1)
    assert h.dtype == np.float32
    np.testing.assert_allclose(h, _numeric_hessian(pick, X, 1), rtol=1e-4, atol=1e-4)


# --- 2. f-strings in print and logging ----------------------------------------------------------------

def test_f_strings_in_print_and_logging_run_in_the_forward_sweep(capsys, caplog):
    rng = np.random.default_rng(0)
    A, y = rng.normal(size=(5, 3)), rng.normal(size=5)
    with caplog.at_level(logging.DEBUG):
        g = assert_gradient_matches(em.logged_loss, (X, A, y))
    np.testing.assert_allclose(g, 2 * A.T @ (A @ X - y) / 5, rtol=1e-10)
    printed = capsys.readouterr().out
    loss = np.mean((A @ X - y) ** 2)
    assert f"loss {loss:.3f}" in printed and f"first {X[0]:+.2e}" in printed
    assert f"loss {loss:.4f}" in caplog.text
    h = s2s_ad.hessian(em.logged_loss)(X, A, y)
    np.testing.assert_allclose(h, 2 * A.T @ A / 5, rtol=1e-10, atol=1e-12)


# --- 3. a raise that may run --------------------------------------------------------------------------

@pytest.mark.parametrize("kind", ["relu", "tanh", "softplus"])
def test_an_elif_chain_ending_in_raise_is_differentiated(kind):
    assert_gradient_matches(em.activation, (X, kind))
    np.testing.assert_allclose(s2s_ad.hessian(em.activation)(X, kind),
                               _numeric_hessian(em.activation, X, kind), rtol=1e-5, atol=1e-6)


def test_an_elif_chain_matches_jax():
    jax = _jax()
    import jax.numpy as jnp
    fns = {"relu": lambda x: jnp.sum(jnp.maximum(x, 0.0) ** 2), "tanh": lambda x: jnp.sum(jnp.tanh(x) * x),
           "softplus": lambda x: jnp.sum(jnp.log1p(jnp.exp(x)))}
    for kind, fn in fns.items():
        np.testing.assert_allclose(s2s_ad.grad(em.activation)(X, kind), jax.grad(fn)(X), rtol=1e-12)
        np.testing.assert_allclose(s2s_ad.hessian(em.activation)(X, kind), jax.hessian(fn)(X), rtol=1e-12,
                                   atol=1e-14)
        _, t = s2s_ad.jvp(em.activation, (X, kind), (np.ones(3), None))
        np.testing.assert_allclose(t, jax.jvp(fn, (X,), (np.ones(3),))[1], rtol=1e-12)


def test_the_raise_taken_raises_the_users_exception_in_every_mode():
    with pytest.raises(ValueError, match="unknown activation 'gelu'"):
        s2s_ad.grad(em.activation)(X, "gelu")
    with pytest.raises(ValueError, match="unknown activation 'gelu'"):
        s2s_ad.jvp(em.activation, (X, "gelu"), (np.ones(3), None))
    with pytest.raises(ValueError, match="unknown activation 'gelu'"):
        s2s_ad.vjp(em.activation, X, "gelu")
    with pytest.raises(ValueError, match="unknown activation 'gelu'"):
        s2s_ad.hessian(em.activation)(X, "gelu")
    with pytest.raises(ValueError) as info:
        s2s_ad.grad(em.network)(X, X[::-1], "swish")
    assert info.value.args == ("swish",)


@pytest.mark.parametrize("kind", ["relu", "sin"])
def test_a_helper_that_ends_in_raise(kind):
    w = np.array([0.5, -1.2, 0.8])
    assert_gradient_matches(em.network, (w, X, kind))
    np.testing.assert_allclose(s2s_ad.hessian(em.network)(w, X, kind),
                               _numeric_hessian(em.network, w, X, kind), rtol=1e-5, atol=1e-6)


def test_a_guard_that_raises_on_bad_input():
    assert_gradient_matches(em.guarded, (X,))
    with pytest.raises(FloatingPointError, match="not finite"):
        s2s_ad.grad(em.guarded)(np.array([0.1, np.nan]))
    with pytest.raises(ValueError):
        s2s_ad.grad(em.guarded)(np.array([0.1]))


def test_a_raise_in_a_loop():
    assert_gradient_matches(em.raises_in_loop, (X, 3))
    with pytest.raises(IndexError, match="step 3 past the end"):
        s2s_ad.grad(em.raises_in_loop)(X, 4)


def test_try_except_is_still_refused():
    def with_try(x):
        try:
            return np.sum(np.log(x))
        except ValueError:
            return 0.0

    with pytest.raises(s2s_ad.TransformError, match="test_argument_types_fstrings_raises.py"):
        s2s_ad.grad(with_try)(X)


def test_a_bare_raise_is_refused_at_its_line():
    def bare(x):
        if x[0] > 0:
            raise
        return np.sum(x)

    with pytest.raises(s2s_ad.TransformError, match="raise"):
        s2s_ad.grad(bare)(X)


# --- 4. checkpointed(steps, snapshots=c) ------------------------------------------------------------

def test_checkpointed_with_snapshots():
    g = assert_gradient_matches(em.simulate, (X,))
    assert g.shape == (3,)
    np.testing.assert_allclose(s2s_ad.hessian(em.simulate)(X), _numeric_hessian(em.simulate, X),
                               rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("c", [1, 2, 3, 7, 20])
def test_any_number_of_snapshots_gives_the_plain_loops_gradient(c):
    got = s2s_ad.grad(em.simulate_snapshots_argument)(X, c)
    want = s2s_ad.grad(em.simulate_plain)(X, 7)
    np.testing.assert_allclose(got, want, rtol=1e-13, atol=1e-15)
    np.testing.assert_allclose(got, numeric_grad(lambda v: em.simulate_plain(v, 7), (X,), 0), rtol=1e-6)


def test_the_schedule_keeps_at_most_c_snapshots():
    from s2s_ad.core import revolve  # (the binomial schedule: tests/test_binomial_checkpointing.py)
    for n in range(1, 40):
        for c in range(1, 12):
            schedule = revolve.Schedule(n, c)
            schedule.forward()
            for step in range(n - 2, -1, -1):
                schedule.turn(step)
            assert schedule.peak <= c and schedule.advances == revolve.advances(n, c)
    with pytest.raises(ValueError, match="snapshots=0"):
        s2s_ad.grad(em.simulate_snapshots_argument)(X, 0)
    assert list(s2s_ad.checkpointed(range(3), snapshots=2)) == [0, 1, 2]  # plain Python: the steps


# --- 5. lambdas with defaults, lambdas called in place, a module-level dict of functions ----------------

LAMBDAS = ["lambda_with_a_module_default", "lambda_default_taken_when_made", "lambda_defaults_overridden",
           "lambda_defaults_in_a_loop", "lambda_with_default_passed", "lambda_called_in_place",
           "nested_def_with_constant_defaults", "lambda_default_then_name_rebound_in_a_loop",
           "lambda_redefined_with_another_default"]


@pytest.mark.parametrize("name", LAMBDAS)
def test_lambdas_with_defaults_and_called_in_place(name):
    fn = getattr(em, name)
    assert_gradient_matches(fn, (X,))
    np.testing.assert_allclose(s2s_ad.hessian(fn)(X), _numeric_hessian(fn, X), rtol=1e-5, atol=1e-6)


def test_a_default_is_the_value_when_the_lambda_was_made():
    # c is rebound to 10.0 after the lambda: Python's default is still x[0], so the gradient is 2 x[0] + sum(x) e_0
    want = np.full(3, X[0])
    want[0] += np.sum(X)
    np.testing.assert_allclose(s2s_ad.grad(em.lambda_default_taken_when_made)(X), want, rtol=1e-12)


def test_a_late_bound_default_of_a_nested_def_is_refused():
    def late(x):
        c = x[0]

        def f(z, k=c):
            return z * k
        c = 2.0
        return np.sum(f(x))

    with pytest.raises(s2s_ad.TransformError, match="nested function 'f'"):
        s2s_ad.grad(late)(X)


def test_a_function_from_a_module_level_dict():
    rng = np.random.default_rng(1)
    A, y = rng.normal(size=(6, 3)), rng.normal(size=6)
    w = np.array([0.4, -1.7, 2.2])  # both sides of the Huber kink
    g = assert_gradient_matches(em.loss_from_a_table, (w, A, y))
    huber = np.where(np.abs(w) < 1.0, w, np.sign(w))
    np.testing.assert_allclose(g, 2 * A.T @ (A @ w - y) + 0.1 * huber, rtol=1e-10)
    jax = _jax()
    import jax.numpy as jnp

    def twin(w):
        r = A @ w - y
        return jnp.sum(r ** 2) + 0.1 * jnp.sum(jnp.where(jnp.abs(w) < 1.0, 0.5 * w ** 2, jnp.abs(w) - 0.5))

    np.testing.assert_allclose(s2s_ad.hessian(em.loss_from_a_table)(w, A, y), jax.hessian(twin)(w), rtol=1e-10)


def test_rebinding_the_dicts_item_regenerates_the_code(monkeypatch):
    w, A, y = X, np.eye(3), np.zeros(3)
    g = s2s_ad.grad(em.loss_from_a_table)
    huber = np.where(np.abs(w) < 1.0, w, np.sign(w))
    np.testing.assert_allclose(g(w, A, y), 2 * w + 0.1 * huber, rtol=1e-12)
    monkeypatch.setitem(em.LOSSES, "l2", lambda r: np.sum(r ** 4))
    np.testing.assert_allclose(g(w, A, y), 4 * w ** 3 + 0.1 * huber, rtol=1e-12)


def test_a_function_chosen_by_a_key_computed_at_run_time_is_still_refused_clearly():
    def chosen(x):
        name = "l2" if x[0] > 0 else "huber"
        return em.LOSSES[name](x)

    with pytest.raises(s2s_ad.TransformError, match="constant key"):
        s2s_ad.grad(chosen)(X)
    # (chosen by a string argument, the code is specialised on it: tests/programs/test_everyday_refusals.py)


def test_a_raise_in_a_checkpointed_loop():
    # a segment run again sees the values it saw the first time: a raise that did not run does not run
    assert_gradient_matches(em.checkpointed_with_a_guard, (X,))
    np.testing.assert_allclose(s2s_ad.hessian(em.checkpointed_with_a_guard)(X),
                               _numeric_hessian(em.checkpointed_with_a_guard, X), rtol=1e-5, atol=1e-6)
    with pytest.raises(FloatingPointError, match="diverged at step 0"):
        s2s_ad.grad(em.checkpointed_with_a_guard)(np.array([1e7, 0.0, 0.0]))


@pytest.mark.parametrize("backend", ["python", "numba"])
def test_a_lambda_made_in_one_branch_with_a_computed_default_keeps_that_default(backend):
    # the default is computed where the lambda is made, in its branch, and joined with the choice of lambda
    if backend == "numba":
        pytest.importorskip("numba")

    def branches(x, flag):
        if flag:
            f = lambda z, c=x[0]: z * c  # noqa: E731
        else:
            f = lambda z, c=2.0: z + c  # noqa: E731
        return np.sum(f(x))

    x = np.asarray(X, dtype=float)
    chosen = np.zeros_like(x)
    chosen[0] = np.sum(x)
    np.testing.assert_allclose(s2s_ad.grad(branches, backend=backend)(x, True), x[0] + chosen, rtol=1e-12)
    np.testing.assert_allclose(s2s_ad.grad(branches, backend=backend)(x, False), np.ones_like(x), rtol=1e-12)
