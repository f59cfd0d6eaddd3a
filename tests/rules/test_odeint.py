"""Issue 37: ``scipy.integrate.odeint`` differentiated, its dynamics a function passed as a value.

The derivatives are the ODE's forward sensitivities integrated by SciPy beside y
(templates/scipy_integrate.py), so their accuracy is the solver's: the calls below pass rtol = atol =
1e-10, where the measured relative error is about 1e-9 (docs/rules.md), and compare at rtol 1e-6,
well above it and well below what a wrong rule gives.  Oracles: the closed form of linear decay, y0
exp(-k t); central differences of the primal (SciPy's own odeint at the same tolerances: its
error at 1e-10 divided by the step 1e-5 stays near 1e-5 relative, hence the differences' tolerance);
JAX's jax.experimental.ode.odeint for Lotka-Volterra.  Both backends; every refusal names its line.
"""
import numpy as np
import pytest

import s2s_ad
from conftest import numeric_grad

integrate = pytest.importorskip("scipy.integrate")
from scipy.integrate import odeint  # noqa: E402

TIMES = np.linspace(0.0, 1.0, 5)
K, Y0 = 0.7, np.array([1.0, 2.0])
BACKENDS = ("python", pytest.param("numba", marks=pytest.mark.filterwarnings("ignore::s2s_ad.CompileFallbackWarning")))


def decay(y, t, k):
    return -k * y


def decay_loss(k, y0):
    ys = odeint(decay, y0, TIMES, args=(k,), rtol=1e-10, atol=1e-10)
    return np.sum(ys[-1] ** 2)


# decay_loss = |y0|^2 exp(-2k): its derivatives in closed form
def exact_gradient(k, y0):
    return -2.0 * np.sum(y0 ** 2) * np.exp(-2 * k), 2.0 * y0 * np.exp(-2 * k)


def exact_hessian(k, y0):
    e = np.exp(-2 * k)
    return ((4.0 * np.sum(y0 ** 2) * e, -4.0 * y0 * e), (-4.0 * y0 * e, 2.0 * e * np.eye(y0.size)))


def lotka_volterra(y, t, theta, scale):
    a, b, c, d = theta
    return scale * np.array([a * y[0] - b * y[0] * y[1], -c * y[1] + d * y[0] * y[1]])


LV_TIMES = np.linspace(0.0, 3.0, 7)
THETA, LV_Y0, SCALE = np.array([1.0, 0.5, 0.7, 0.3]), np.array([1.0, 2.0]), 0.9


def lv_loss(theta, y0, scale):
    ys = integrate.odeint(lotka_volterra, y0, LV_TIMES, args=(theta, scale), rtol=1e-10, atol=1e-10)
    return np.sum(ys ** 2) + np.sum(ys[:, 0] * ys[:, 1])


def assert_close(got, want, rtol=1e-6, atol=1e-9):
    np.testing.assert_allclose(np.asarray(got, dtype=float), np.asarray(want, dtype=float), rtol=rtol, atol=atol)


@pytest.mark.parametrize("backend", BACKENDS)
def test_decay_against_its_closed_form(backend):
    if backend == "numba":
        pytest.importorskip("numba")
    d_k, d_y0 = s2s_ad.grad(decay_loss, wrt=(0, 1), backend=backend)(K, Y0)
    want_k, want_y0 = exact_gradient(K, Y0)
    assert isinstance(d_k, float) and np.shape(d_y0) == (2,)
    assert_close(d_k, want_k)
    assert_close(d_y0, want_y0)
    value, (d_k, d_y0) = s2s_ad.value_and_grad(decay_loss, wrt=(0, 1), backend=backend)(K, Y0)
    assert value == decay_loss(K, Y0)  # the value is SciPy's own call
    assert_close(d_y0, want_y0)
    direction = (0.3, np.array([0.5, -1.0]))
    _, moved = s2s_ad.jvp(decay_loss, (K, Y0), direction, backend=backend)
    assert_close(moved, want_k * direction[0] + want_y0 @ direction[1])
    hessian = s2s_ad.hessian(decay_loss, wrt=(0, 1), backend=backend)(K, Y0)
    for got_row, want_row in zip(hessian, exact_hessian(K, Y0)):
        for got, want in zip(got_row, want_row):
            assert_close(got, want)


def test_decay_against_central_differences():
    d_k, d_y0 = s2s_ad.grad(decay_loss, wrt=(0, 1))(K, Y0)
    assert_close(d_k, numeric_grad(decay_loss, (K, Y0), 0, eps=1e-5), rtol=1e-5)
    assert_close(d_y0, numeric_grad(decay_loss, (K, Y0), 1, eps=1e-5), rtol=1e-5)


@pytest.mark.parametrize("backend", BACKENDS)
def test_lotka_volterra_against_central_differences(backend):
    """A nonlinear system, its parameters a vector and a number in args, y0 differentiated too."""
    if backend == "numba":
        pytest.importorskip("numba")
    args = (THETA, LV_Y0, SCALE)
    got = s2s_ad.grad(lv_loss, wrt=(0, 1, 2), backend=backend)(*args)
    for i, value in enumerate(got):
        assert np.shape(value) == np.shape(args[i])
        assert_close(value, numeric_grad(lv_loss, args, i, eps=1e-5), rtol=1e-5, atol=1e-7)
    direction = (np.array([0.2, -0.1, 0.3, 0.05]), np.array([-0.4, 0.1]), 0.7)
    _, moved = s2s_ad.jvp(lv_loss, args, direction, backend=backend)
    assert_close(moved, sum(float(np.sum(g * v)) for g, v in zip(got, direction)))


def test_lotka_volterra_hessian_against_differences_of_the_gradient():
    args = (THETA, LV_Y0, SCALE)
    hessian = s2s_ad.hessian(lv_loss, wrt=0)(*args)
    step = 1e-5
    for j in range(4):
        e = np.zeros(4)
        e[j] = step
        column = (s2s_ad.grad(lv_loss)(THETA + e, LV_Y0, SCALE) - s2s_ad.grad(lv_loss)(THETA - e, LV_Y0, SCALE)) / (2 * step)
        assert_close(hessian[:, j], column, rtol=1e-5, atol=1e-6)
    assert_close(hessian, hessian.T, rtol=1e-7)


def _jax_loss():
    jax = pytest.importorskip("jax")
    jax.config.update("jax_enable_x64", True)
    jnp = jax.numpy
    jax_odeint = pytest.importorskip("jax.experimental.ode").odeint

    def jax_loss(theta, y0, scale):
        def dynamics(y, t, theta, scale):
            a, b, c, d = theta
            return scale * jnp.array([a * y[0] - b * y[0] * y[1], -c * y[1] + d * y[0] * y[1]])
        ys = jax_odeint(dynamics, y0, jnp.asarray(LV_TIMES), theta, scale, rtol=1e-12, atol=1e-12)
        return jnp.sum(ys ** 2) + jnp.sum(ys[:, 0] * ys[:, 1])
    return jax, jnp, jax_loss


def test_lotka_volterra_against_jax_odeint():
    jax, jnp, jax_loss = _jax_loss()
    got = s2s_ad.grad(lv_loss, wrt=(0, 1, 2))(THETA, LV_Y0, SCALE)
    want = jax.grad(jax_loss, argnums=(0, 1, 2))(jnp.asarray(THETA), jnp.asarray(LV_Y0), SCALE)
    for g, w in zip(got, want):
        assert_close(g, np.asarray(w), rtol=1e-7)


@pytest.mark.slow
def test_lotka_volterra_hessian_against_jax_odeint():
    """JAX's odeint has no forward mode: its Hessian is reverse over reverse (half a minute)."""
    jax, jnp, jax_loss = _jax_loss()
    hessian = jax.jacrev(jax.grad(jax_loss))(jnp.asarray(THETA), jnp.asarray(LV_Y0), SCALE)
    assert_close(s2s_ad.hessian(lv_loss)(THETA, LV_Y0, SCALE), np.asarray(hessian), rtol=1e-7, atol=1e-8)


def with_lambda(k, y0):
    ys = odeint(lambda y, t, c: -c * y, y0, TIMES, args=(k,), rtol=1e-10, atol=1e-10)
    return np.sum(ys[-1] ** 2)


def with_nested_def(k, y0):
    def dynamics(y, t, c):
        return -c * y
    ys = odeint(dynamics, y0, TIMES, args=(k,), rtol=1e-10, atol=1e-10)
    return np.sum(ys[-1] ** 2)


def decay_time_first(t, y, k):
    return -k * y


def time_first(k, y0):
    ys = odeint(decay_time_first, y0, TIMES, args=(k,), rtol=1e-10, atol=1e-10, tfirst=True)
    return np.sum(ys[-1] ** 2)


@pytest.mark.parametrize("f", [with_lambda, with_nested_def, time_first])
def test_lambdas_nested_defs_and_tfirst(f):
    d_k, d_y0 = s2s_ad.grad(f, wrt=(0, 1))(K, Y0)
    want_k, want_y0 = exact_gradient(K, Y0)
    assert_close(d_k, want_k)
    assert_close(d_y0, want_y0)
    assert_close(s2s_ad.hessian(f, wrt=0)(K, Y0), exact_hessian(K, Y0)[0][0])


def every_time_of_a_number(k, y0):
    ys = odeint(decay, y0, TIMES, args=(k,), rtol=1e-10, atol=1e-10)  # y0 a number: ys is (5, 1)
    return np.sum(ys ** 2)


def test_a_number_as_y0_and_every_time_read():
    d_k, d_y0 = s2s_ad.grad(every_time_of_a_number, wrt=(0, 1))(K, 1.5)
    e = np.exp(-2 * K * TIMES)
    assert_close(d_k, np.sum(-2 * TIMES * 1.5 ** 2 * e))
    assert_close(d_y0, 2 * 1.5 * np.sum(e))
    assert isinstance(d_y0, float)


def decay_power(y, t, k, p):
    return -k * y ** p


def with_an_integer_in_args(k, y0):
    ys = odeint(decay_power, y0, TIMES, args=(k, 1), rtol=1e-10, atol=1e-10)  # p = 1: an integer, held constant
    return np.sum(ys[-1] ** 2)


def test_an_integer_in_args_is_held_constant():
    d_k, d_y0 = s2s_ad.grad(with_an_integer_in_args, wrt=(0, 1))(K, Y0)
    want_k, want_y0 = exact_gradient(K, Y0)
    assert_close(d_k, want_k)
    assert_close(d_y0, want_y0)
    assert_close(s2s_ad.hessian(with_an_integer_in_args, wrt=1)(K, Y0), exact_hessian(K, Y0)[1][1])


def decay_by_default(y, t, k=K):
    return -k * y


def no_args(y0):
    ys = odeint(decay_by_default, y0, TIMES, rtol=1e-10, atol=1e-10)
    return np.sum(ys[-1] ** 2)


def test_dynamics_with_a_default_and_no_args():
    assert_close(s2s_ad.grad(no_args)(Y0), exact_gradient(K, Y0)[1])
    assert_close(s2s_ad.hessian(no_args)(Y0), exact_hessian(K, Y0)[1][1])


def test_the_generated_code_names_the_dynamics():
    text = s2s_ad.source(decay_loss, wrt=(0, 1))
    assert "odeint(decay, y0," in text and "ode_sensitivity(decay, y0," in text


def too_few_steps(k, y0):
    ys = odeint(decay, y0, np.array([0.0, 100.0]), args=(k,), rtol=1e-12, atol=1e-12, mxstep=40)
    return np.sum(ys[-1] ** 2)


@pytest.mark.filterwarnings("ignore::scipy.integrate.ODEintWarning")  # (the primal's, SciPy's own)
def test_a_sensitivity_solve_that_fails_raises_rather_than_returns_a_number():
    with pytest.raises(FloatingPointError, match="could not integrate the derivatives.*mxstep"):
        s2s_ad.grad(too_few_steps)(K, Y0)


def test_a_third_derivative_is_refused():
    third = s2s_ad.grad(s2s_ad.grad(s2s_ad.grad(decay_loss)))
    with pytest.raises(s2s_ad.TransformError, match="second order only"):
        third(K, Y0)


# -- refusals ------------------------------------------------------------------------------------

def closure_lambda(k, y0):
    ys = odeint(lambda y, t: -k * y, y0, TIMES)
    return np.sum(ys[-1] ** 2)


def closure_def(k, y0):
    def dynamics(y, t):
        return -k * y
    ys = odeint(dynamics, y0, TIMES)
    return np.sum(ys[-1] ** 2)


def by_the_times(k, y0, ts):
    ys = odeint(decay, y0, ts, args=(k,))
    return np.sum(ys[-1] ** 2)


def with_full_output(k, y0):
    ys, info = odeint(decay, y0, TIMES, args=(k,), full_output=True)
    return np.sum(ys[-1] ** 2)


def decay_jacobian(y, t, k):
    return -k * np.eye(2)


def with_dfun(k, y0):
    ys = odeint(decay, y0, TIMES, args=(k,), Dfun=decay_jacobian)
    return np.sum(ys[-1] ** 2)


@pytest.mark.parametrize("f, args, words", [
    (closure_lambda, (K, Y0), r"test_odeint.py:\d+.*'k', read by .* from the function it is defined in.*pass k in "
                              r"args=\(\.\.\.\)"),
    (closure_def, (K, Y0), r"test_odeint.py:\d+.*'k', read by 'dynamics'.*pass k in args"),
    (by_the_times, (K, Y0, TIMES), r"test_odeint.py:\d+.*its argument t depends on the differentiated inputs"),
    (with_full_output, (K, Y0), r"test_odeint.py:\d+.*full_output=True.*without full_output"),
    (with_dfun, (K, Y0), r"test_odeint.py:\d+.*Dfun=.*drop Dfun"),
])
def test_refusals_name_the_line(f, args, words):
    with pytest.raises(s2s_ad.TransformError, match=words):
        s2s_ad.grad(f, wrt=tuple(range(len(args))))(*args)


def test_scipy_is_imported_only_by_the_users_code():
    """The rules wait for the user's import of scipy.integrate (rules.when_imported)."""
    import subprocess
    import sys
    code = "import sys, s2s_ad; print('scipy' in sys.modules)"
    printed = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert printed.strip() == "False"
