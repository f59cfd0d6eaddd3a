"""Everyday Python (issue #13): returns inside if/else, chained comparisons, print/assert/logging/
warnings, annotated assignments, constant calls (random draws, math.lgamma, data-object methods),
writes into arrays the function made, nested iterators, dtypes, Ellipsis, in-place updates at second
order, lambdas and functions passed as arguments.

Every function in everyday_functions.py is checked in reverse mode against central differences,
forward mode against reverse mode (assert_gradient_matches does both) and its Hessian against
central differences of the gradient; some also against JAX or a closed form."""
import inspect
import logging
import random
import warnings

import numpy as np
import pytest

import s2s_ad
import everyday_functions as ef
from conftest import assert_gradient_matches, numeric_grad

X = np.array([0.3, 0.7, -0.4])
# Functions checked elsewhere: random draws need the same draws in the oracle; float32 rounding
# swamps central differences; a view refusal; generator draws.
SPECIAL = {"with_random_noise", "noise_in_a_loop", "noise_from_a_generator", "float32_buffer",
           "noise_in_a_checkpointed_loop", "helper_draws_in_a_checkpointed_loop",
           "generator_draws_in_a_checkpointed_loop", "vector_of_generator_noise",
           "cast_to_int_carries_nothing", "chained_middle_is_random",
           "chained_short_circuit"}
FUNCTIONS = [fn for name, fn in inspect.getmembers(ef, inspect.isfunction)
             if fn.__module__ == ef.__name__ and not name.startswith("_") and name not in SPECIAL]
POINTS = [X, np.array([-0.6, 0.2, 0.9]), np.array([1.2, -0.3, 0.5])]


def _hessian_by_differences(fn, x, eps=1e-5):
    g = s2s_ad.grad(fn)
    return np.array([(g(x + eps * e) - g(x - eps * e)) / (2 * eps) for e in np.eye(len(x))])


@pytest.mark.parametrize("fn", FUNCTIONS, ids=lambda f: f.__name__)
@pytest.mark.parametrize("point", range(len(POINTS)))
def test_gradient_and_forward_mode(fn, point):
    assert_gradient_matches(fn, (POINTS[point],))


@pytest.mark.parametrize("fn", FUNCTIONS, ids=lambda f: f.__name__)
def test_hessian_and_grad_of_grad(fn):
    np.testing.assert_allclose(s2s_ad.hessian(fn)(X), _hessian_by_differences(fn, X), rtol=1e-4, atol=1e-5)


@pytest.mark.slow
def test_hessians_against_jax():
    jax = pytest.importorskip("jax")
    jax.config.update("jax_enable_x64", True)
    jnp = jax.numpy

    def masked(v):
        b = jnp.where(v > 0, v, 1.0) + v ** 2
        return jnp.sum(b * b)

    def augmented(v):
        return jnp.sum((v * v) * v)

    def chained(v):
        return jnp.sum(jnp.where((-1.0 < v) & (v <= 1.0), v ** 2, 2.0 * v))

    for ours, theirs in ((ef.masked_in_place, masked), (ef.augmented_array, augmented), (ef.chained_in_if, chained)):
        for x in POINTS:
            np.testing.assert_allclose(s2s_ad.hessian(ours)(x), jax.hessian(theirs)(x), rtol=1e-10, atol=1e-12,
                                       err_msg=ours.__name__)
            np.testing.assert_allclose(s2s_ad.grad(ours)(x), jax.grad(theirs)(x), rtol=1e-10, atol=1e-12)


# -- effects ---------------------------------------------------------------

@pytest.mark.self_check_off  # counts the prints or log records of one call
def test_print_runs_once_per_call_in_reverse_and_forward_mode(capsys):
    s2s_ad.grad(ef.with_print)(X)
    assert capsys.readouterr().out.count("y is") == 1
    s2s_ad.jvp(ef.with_print, (X,), (np.ones(3),))
    assert capsys.readouterr().out.count("y is") == 1  # tangent code runs the primal computation once too


def test_a_failing_assert_raises_from_the_gradient():
    with pytest.raises(AssertionError, match="wants 3 numbers"):
        s2s_ad.grad(ef.with_assert)(np.ones(4))
    with pytest.raises(AssertionError):
        s2s_ad.jvp(ef.with_assert, (np.ones(4),), (np.ones(4),))


@pytest.mark.self_check_off  # counts the prints or log records of one call
def test_logging_runs_once(caplog):
    with caplog.at_level(logging.DEBUG):
        s2s_ad.grad(ef.with_logging)(X)
    assert len([r for r in caplog.records if r.message.startswith("y = ")]) == 1
    assert len([r for r in caplog.records if r.message.startswith("starting with")]) == 1


def test_warnings_warn_runs():
    with pytest.warns(UserWarning, match="large input"):
        g = s2s_ad.grad(ef.with_warning)(np.full(3, 1e3))
    np.testing.assert_allclose(g, 2e3 * np.ones(3))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        s2s_ad.grad(ef.with_warning)(X)  # no warning where the branch is not taken


# -- constant calls: random draws are drawn once --------------------------------

def test_a_random_draw_is_drawn_once_and_not_redrawn_by_the_reverse_sweep():
    np.random.seed(3)
    noise = np.random.normal(size=3)
    after_one_call = np.random.get_state()[1].copy()
    np.random.seed(3)
    g = s2s_ad.grad(ef.with_random_noise)(X)
    np.testing.assert_allclose(g, 2 * X * noise)
    assert np.array_equal(np.random.get_state()[1], after_one_call)


def test_random_draws_in_a_loop_are_taped():
    np.random.seed(4)
    eps = np.array([np.random.normal() for _ in range(3)])
    np.random.seed(4)
    g = s2s_ad.grad(ef.noise_in_a_loop)(X)
    np.testing.assert_allclose(g, np.cos(X) * eps + eps * eps)
    np.random.seed(4)
    _, t = s2s_ad.jvp(ef.noise_in_a_loop, (X,), (np.ones(3),))
    np.testing.assert_allclose(t, np.sum(np.cos(X) * eps + eps * eps))


def test_a_hessian_sees_the_draws_of_one_call():
    np.random.seed(5)
    noise = np.random.normal(size=3)
    np.random.seed(5)
    np.testing.assert_allclose(s2s_ad.hessian(ef.with_random_noise)(X), np.diag(2 * noise))
    np.random.seed(5)
    np.testing.assert_allclose(s2s_ad.jacobian(s2s_ad.grad(ef.with_random_noise))(X), np.diag(2 * noise))


def test_python_random_is_replayed_too():
    random.seed(1)
    state = random.getstate()
    s2s_ad.hessian(ef.with_random_noise)(X)
    assert random.getstate() == state  # the function does not draw from it: left as it was


def test_draws_from_a_generator_object_at_first_and_second_order():
    """Issue 22: every pass of a hessian replays the module-level generator's draws."""
    state = ef.RNG.bit_generator.state
    eps = np.array([ef.RNG.normal() for _ in range(3)])
    ef.RNG.bit_generator.state = state
    np.testing.assert_allclose(s2s_ad.grad(ef.noise_from_a_generator)(X), 2 * X * eps)
    ef.RNG.bit_generator.state = state
    np.testing.assert_allclose(s2s_ad.hessian(ef.noise_from_a_generator)(X), np.diag(2 * eps))
    assert ef.RNG.bit_generator.state != state  # one call's draws taken, as the function takes them


def test_chained_comparison_evaluates_the_middle_once_and_short_circuits():
    np.random.seed(6)
    ef.chained_middle_is_random(X)
    once = np.random.get_state()[1].copy()
    np.random.seed(6)
    s2s_ad.grad(ef.chained_middle_is_random)(X)
    assert np.array_equal(np.random.get_state()[1], once)
    np.random.seed(7)
    before = np.random.get_state()[1].copy()
    g = s2s_ad.grad(ef.chained_short_circuit)(X)  # x[0] > 5.0 fails: the draw never happens
    assert np.array_equal(np.random.get_state()[1], before)
    np.testing.assert_allclose(g, [0.0, X[2], X[1]])


def test_a_call_with_no_rule_on_the_inputs_is_still_refused():
    def uses_opaque(x):
        return float(ef.OPAQUE(x[0]))
    with pytest.raises(s2s_ad.TransformError, match=r"the call of .*_opaque.*no derivative rule"):
        s2s_ad.grad(uses_opaque)(X)


# -- dtypes and casts ------------------------------------------------------------

def test_casts_carry_derivatives_only_to_floating_types():
    x = np.array([1.3, 2.7, -1.4])
    np.testing.assert_allclose(s2s_ad.grad(ef.cast_to_int_carries_nothing)(x), [11.0, 12.0, 9.0], rtol=1e-6)
    np.testing.assert_allclose(s2s_ad.grad(ef.float32_buffer)(X), [2 * X[0], 0.0, 0.0], rtol=1e-6)
    _, t = s2s_ad.jvp(ef.cast_to_int_carries_nothing, (x,), (np.ones(3),))
    assert t == pytest.approx(32.0, rel=1e-6)


# -- what stays refused ---------------------------------------------------------

def _writes_into_a_joined_list(x):
    ys = [x[0]] + [x[1], x[2]]
    ys[1] = ys[0] * 3.0
    return ys[0] * ys[1] + ys[2]


def _lambda_in_a_list(x):
    fs = [lambda t: t * 2.0]
    return fs[0](x[0])


def _method_on_the_inputs(x):
    return ef.SETTINGS.factor(x[0])


def _lambda_with_star_args(x):  # (a lambda with defaults is differentiated: tests/programs/test_argument_types_fstrings_raises.py)
    scale = lambda *t: t[0] * 2.0
    return np.sum(scale(x))


class _Scaled:
    def __init__(self, scale):
        self.scale = 2.0 * scale  # computed: __init__ read as a function returning its attributes


def _makes_an_object(x):
    settings = _Scaled(x[0])
    return np.sum(x) * 2.0


def _function_passed_to_numpy(x):
    return np.sum(np.apply_along_axis(ef._helper, 0, x))


def test_an_item_written_into_a_joined_list():  # (refused before items of lists could be written)
    x0, _, x2 = X
    expected = np.array([6.0 * x0, 0.0, 1.0])  # ys[0] * ys[1] + ys[2] = 3 x0^2 + x2
    np.testing.assert_allclose(s2s_ad.grad(_writes_into_a_joined_list)(X), expected, rtol=1e-15)


def test_a_lambda_in_a_list_called_by_its_index():  # (refused before functions were values: issue 33)
    np.testing.assert_allclose(s2s_ad.grad(_lambda_in_a_list)(X), np.eye(X.size)[0] * 2.0, rtol=1e-12)


@pytest.mark.parametrize("fn, words", [
    (_function_passed_to_numpy, "a function passed as an argument"),
    (_lambda_with_star_args, "the parameters of the lambda"),
])
def test_still_refused_with_a_reason(fn, words):
    with pytest.raises(s2s_ad.TransformError, match=words) as caught:
        s2s_ad.grad(fn)(X)
    assert caught.value.line is not None and caught.value.hint


def test_an_object_whose_init_computes_is_made_in_place():
    # (_Scaled.__init__ computes 2.0 * scale: read as a function of its argument, tests/lowering/test_computing_init.py)
    np.testing.assert_allclose(s2s_ad.grad(_makes_an_object)(X), np.full(X.size, 2.0), rtol=1e-15)


def test_a_method_of_a_module_level_object_is_followed():
    # (issue 33: once refused as "a method of a Settings object") SETTINGS.factor(x[0]) is scale * x[0]
    np.testing.assert_allclose(s2s_ad.grad(_method_on_the_inputs)(X), [ef.SETTINGS.scale, 0.0, 0.0])


def _row_of_a_matrix_read_after_write(x):
    out = np.zeros((2, 3))
    out[1] = x
    row = out[0]
    out[0, 0] = x[0]
    return np.sum(row * x)


def test_an_element_of_a_1d_array_is_a_number_but_a_row_is_a_view():
    # issue 18: the row is read as NumPy's view shows it after the write (no longer refused):
    # row * x = [x0, 0, 0] * x, so the gradient is [2 x0, 0, 0]
    np.testing.assert_allclose(s2s_ad.grad(_row_of_a_matrix_read_after_write)(X), [2 * X[0], 0.0, 0.0])
    np.testing.assert_allclose(s2s_ad.grad(_row_of_a_matrix_read_after_write)(X),
                               numeric_grad(_row_of_a_matrix_read_after_write, [X], 0), rtol=1e-6)
    np.testing.assert_allclose(s2s_ad.grad(ef.first_of_1d_is_a_number)(X),
                               numeric_grad(ef.first_of_1d_is_a_number, [X], 0), rtol=1e-6)


@pytest.mark.parametrize("fn", [ef.noise_in_a_checkpointed_loop, ef.helper_draws_in_a_checkpointed_loop],
                         ids=lambda f: f.__name__)
def test_a_checkpointed_loop_run_again_draws_the_same(fn):
    """The reverse sweep runs each segment again: it must see the first pass's draws, and leave the
    random state as one call of the function does."""
    np.random.seed(8)
    state = np.random.get_state()

    def same_draws(v):
        np.random.set_state(state)
        return fn(v)

    want = numeric_grad(same_draws, [0.5], 0)
    same_draws(0.5)
    after_one_call = np.random.get_state()[1].copy()
    np.random.set_state(state)
    assert s2s_ad.grad(fn)(0.5) == pytest.approx(want, rel=1e-6)
    assert np.array_equal(np.random.get_state()[1], after_one_call)


def _prints_in_a_checkpointed_loop(x):
    for t in s2s_ad.checkpointed(range(4)):
        print(t)
        x = np.sin(x)
    return x


def test_effects_in_a_checkpointed_loop_are_refused():
    with pytest.raises(s2s_ad.TransformError, match="print, assert, logging or warnings in a checkpointed loop"):
        s2s_ad.grad(_prints_in_a_checkpointed_loop)(0.5)


@pytest.mark.self_check_off  # counts the prints or log records of one call
def test_f_strings_in_prints_and_assert_messages(capsys):
    g = s2s_ad.grad(ef.with_fstring_print)(X)
    assert capsys.readouterr().out == f"sum {np.sum(np.sin(X)):.3f}, first {X[0]!r}\n"
    np.testing.assert_allclose(g, 2 * np.sin(X) * np.cos(X))


_NAMESPACE = {}
exec("def typed_in(n):\n    return n * 2.0\n", _NAMESPACE)
_TYPED_IN = _NAMESPACE["typed_in"]  # no readable source


def _calls_a_function_without_source(x):
    return np.sum(x * _TYPED_IN(3))


def test_a_function_without_source_runs_on_constants():
    np.testing.assert_allclose(s2s_ad.grad(_calls_a_function_without_source)(X), 6.0 * np.ones(3))


def test_a_data_object_method_sees_the_object_as_it_is_at_each_call():
    saved = ef.SETTINGS
    try:
        df = s2s_ad.grad(ef.with_data_method)
        np.testing.assert_allclose(df(X), 3.0 + 2 * X)
        ef.SETTINGS.scale = 2.0  # changed in place: the method reads it when it runs
        np.testing.assert_allclose(df(X), 4.0 + 2 * X)
        ef.SETTINGS = ef.Settings(0.5)  # rebound: the cached code is not stale
        np.testing.assert_allclose(df(X), 1.0 + 2 * X)
    finally:
        saved.scale = 1.5
        ef.SETTINGS = saved


def test_a_generator_object_drawn_from_in_a_checkpointed_loop_is_refused():
    with pytest.raises(s2s_ad.TransformError, match=r"a draw from a generator object \(Generator.normal\) in a "
                                                    "checkpointed loop") as caught:
        s2s_ad.grad(ef.generator_draws_in_a_checkpointed_loop)(0.5)
    assert caught.value.line == ef.generator_draws_in_a_checkpointed_loop.__code__.co_firstlineno + 2


def test_multi_pass_derivatives_of_generator_draws_replay_them():
    state = ef.RNG.bit_generator.state
    noise = ef.RNG.normal(size=3)
    ef.RNG.bit_generator.state = state
    np.testing.assert_allclose(s2s_ad.jacobian(ef.vector_of_generator_noise)(X), np.diag(2 * X * noise))
    np.random.seed(2)
    state = np.random.get_state()
    noise = np.random.normal(size=3)
    np.random.set_state(state)

    def vector_noise(x):
        return x * x * np.random.normal(size=3)
    np.testing.assert_allclose(s2s_ad.jacobian(vector_noise)(X), np.diag(2 * X * noise))


def test_second_derivative_through_a_checkpointed_loop_that_draws():
    np.random.seed(1)
    state = np.random.get_state()
    g = s2s_ad.grad(ef.noise_in_a_checkpointed_loop)

    def same_draws(v):
        np.random.set_state(state)
        return g(v)

    want = (same_draws(0.5 + 1e-5) - same_draws(0.5 - 1e-5)) / 2e-5
    np.random.set_state(state)
    assert s2s_ad.grad(g)(0.5) == pytest.approx(want, rel=1e-6)


def _slice_in_a_variable(x):
    out = np.zeros(3)
    s = slice(0, 2)
    part = out[s]
    out[0] = x[0]
    return np.sum(part * x[1:])


def test_an_index_that_is_not_a_number_still_makes_a_view():
    with pytest.raises(s2s_ad.TransformError, match="reading part after out was written"):
        s2s_ad.grad(_slice_in_a_variable)(X)


def test_a_function_that_ends_in_while_true_returning_inside():
    a = 2.0
    assert s2s_ad.grad(ef._newton_sqrt)(a) == pytest.approx(0.5 / np.sqrt(a), rel=1e-12)
    assert s2s_ad.grad(s2s_ad.grad(ef._newton_sqrt))(a) == pytest.approx(-0.25 * a ** -1.5, rel=1e-9)
