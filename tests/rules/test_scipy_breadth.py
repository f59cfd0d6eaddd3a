"""Issue 37: SciPy at autograd's breadth.  The scipy.special rules added for it (gamma and beta
functions, incomplete gamma and beta by x, inverse error functions, the normal distribution's, Bessel
functions by x), in functions written as a user would: reverse, forward and Hessians, against JAX's
jax.scipy where it has the function and central finite differences everywhere; refusals that name
SciPy's functions as the user writes them."""
import numpy as np
import pytest

import s2s_ad
from conftest import assert_gradient_matches, assert_hessian_matches_gradient_differences, numeric_grad

special = pytest.importorskip("scipy.special")


def _jax():
    jax = pytest.importorskip("jax")
    jax.config.update("jax_enable_x64", True)
    return jax, jax.numpy, pytest.importorskip("jax.scipy.special")


def gamma_family(x):
    shape = x + 2.0
    return (np.sum(special.gamma(x) * special.rgamma(shape)) + np.sum(special.loggamma(shape))
            + np.sum(special.gammainc(1.7, x) + special.gammaincc(2.5, x * x))
            + np.sum(special.beta(x, 1.3)) + np.sum(special.betainc(2.0, 3.0, x / 4.0))
            + np.sum(special.multigammaln(shape, 3)))


def jax_gamma_family(x, jnp, jsp):
    shape = x + 2.0
    return (jnp.sum(jsp.gamma(x) / jsp.gamma(shape)) + jnp.sum(jsp.gammaln(shape))
            + jnp.sum(jsp.gammainc(1.7, x) + jsp.gammaincc(2.5, x * x))
            + jnp.sum(jsp.beta(x, 1.3)) + jnp.sum(jsp.betainc(2.0, 3.0, x / 4.0))
            + jnp.sum(jsp.multigammaln(shape, 3)))


def error_family(x):
    p = x / 4.0
    return (np.sum(special.erfinv(p) ** 2) + np.sum(special.erfcinv(1.0 - p))
            + np.sum(special.ndtr(x) * special.log_ndtr(-x)) + np.sum(special.ndtri(0.2 + p))
            + np.sum(special.erfcx(x) + special.dawsn(x)))


def jax_error_family(x, jnp, jsp):
    p = x / 4.0
    return (jnp.sum(jsp.erfinv(p) ** 2) + jnp.sum(jsp.erfinv(p))  # erfcinv(1 - p) is erfinv(p)
            + jnp.sum(jsp.ndtr(x) * jsp.log_ndtr(-x)) + jnp.sum(jsp.ndtri(0.2 + p))
            + jnp.sum(jsp.erfcx(x) + jsp.dawsn(x)))


def modified_bessel(x):
    return (np.sum(special.i0(x) * special.i1(x)) + np.sum(special.i0e(x) + special.i1e(x) ** 2))


def jax_modified_bessel(x, jnp, jsp):
    return jnp.sum(jsp.i0(x) * jsp.i1(x)) + jnp.sum(jsp.i0e(x) + jsp.i1e(x) ** 2)


POINT = np.array([0.6, 1.1, 1.9, 2.7])


@pytest.mark.parametrize("f", [gamma_family, error_family, modified_bessel], ids=["gamma", "error", "modified-bessel"])
def test_special_functions_against_finite_differences_in_every_mode(f):
    x = POINT.copy()
    assert_gradient_matches(f, (x,))  # (and forward mode against reverse)
    assert_hessian_matches_gradient_differences(f, (x,))


@pytest.mark.slow  # (JAX's own Hessians of the incomplete gamma and beta functions take a while)
@pytest.mark.parametrize("f, reference", [(gamma_family, jax_gamma_family), (error_family, jax_error_family),
                                          (modified_bessel, jax_modified_bessel)],
                         ids=["gamma", "error", "modified-bessel"])
def test_special_functions_against_jax_in_every_mode(f, reference):
    jax, jnp, jsp = _jax()
    x = POINT.copy()
    want_grad = np.asarray(jax.grad(lambda x: reference(x, jnp, jsp))(x))
    np.testing.assert_allclose(s2s_ad.grad(f)(x), want_grad, rtol=1e-8, atol=1e-10)
    direction = np.array([0.3, -1.0, 0.7, 0.2])
    _, along = s2s_ad.jvp(f, (x,), (direction,))
    np.testing.assert_allclose(along, want_grad @ direction, rtol=1e-8)
    want_hessian = np.asarray(jax.hessian(lambda x: reference(x, jnp, jsp))(x))
    np.testing.assert_allclose(s2s_ad.hessian(f)(x), want_hessian, rtol=1e-7, atol=1e-9)


def bessel_of_every_kind(x, scale):
    orders = np.array([0.5, 1.0, 2.5, 3.0])
    return (np.sum(special.iv(1.5, x * scale) + special.ive(orders, x)) + np.sum(special.jv(orders, x) ** 2)
            + np.sum(special.jn(2, x) + special.j0(x) * special.j1(x)) + np.sum(special.yn(1, x) - special.y0(x))
            + np.sum(special.y1(x) * special.yv(0.5, x)) + np.sum(special.kv(orders, x) + special.kve(1.5, x))
            + np.sum(special.k0(x) * special.k1(x)) + np.sum(special.k0e(x) - special.k1e(x))
            + np.sum(special.kn(2, x * scale)))


def test_bessel_functions_against_finite_differences_in_every_mode():
    x, scale = POINT.copy(), 1.3
    assert_gradient_matches(bessel_of_every_kind, (x, scale), wrt=(0, 1))
    assert_hessian_matches_gradient_differences(bessel_of_every_kind, (x, scale))
    direction = np.array([0.3, -1.0, 0.7, 0.2])
    _, along = s2s_ad.jvp(bessel_of_every_kind, (x, scale), (direction, 0.5))
    want = numeric_grad(bessel_of_every_kind, (x, scale), 0) @ direction \
        + numeric_grad(bessel_of_every_kind, (x, scale), 1) * 0.5
    np.testing.assert_allclose(along, want, rtol=1e-6)


@pytest.mark.slow
def test_integer_order_bessel_functions_against_jax():
    jax, jnp, jsp = _jax()

    def reference(x):
        j = jsp.bessel_jn(x, v=3)  # J_0 .. J_3
        return jnp.sum(j[0] * j[1]) + jnp.sum(j[3])

    def mine(x):
        return np.sum(special.j0(x) * special.j1(x)) + np.sum(special.jn(3, x))
    x = POINT.copy()
    np.testing.assert_allclose(s2s_ad.grad(mine)(x), jax.grad(reference)(x), rtol=1e-7, atol=1e-10)
    np.testing.assert_allclose(s2s_ad.hessian(mine)(x), jax.hessian(reference)(x), rtol=1e-6, atol=1e-9)


def signed_gamma(x):
    return np.sum(special.gammasgn(x) * x ** 2)


def test_gammasgn_has_zero_derivative():
    x = np.array([-1.5, -0.5, 0.5, 2.5])
    np.testing.assert_allclose(s2s_ad.grad(signed_gamma)(x), special.gammasgn(x) * 2.0 * x)
    np.testing.assert_allclose(s2s_ad.hessian(signed_gamma)(x), np.diag(special.gammasgn(x) * 2.0))


def incomplete_gamma_by_shape(a, x):
    return special.gammainc(a, x) * 2.0


def bessel_by_order(v, x):
    return special.iv(v, x) + x


def bessel_j_by_order(v, x):
    return special.jv(v, x) * x


def unknown_special_function(x):
    return special.struve(1.0, x) * x


def test_derivatives_without_a_closed_form_are_refused_naming_the_argument():
    with pytest.raises(s2s_ad.TransformError, match=r"test_scipy_breadth.py:\d+: .*scipy\.special\.gammainc: "
                                                    r"its argument a depends on the differentiated inputs"):
        s2s_ad.grad(incomplete_gamma_by_shape, wrt=(0, 1))(1.5, 2.0)
    with pytest.raises(s2s_ad.TransformError, match=r"scipy\.special\.iv: its argument v depends"):
        s2s_ad.grad(bessel_by_order, wrt=0)(1.5, 2.0)
    with pytest.raises(s2s_ad.TransformError, match=r"scipy\.special\.iv: its argument v depends"):
        s2s_ad.jvp(bessel_by_order, (1.5, 2.0), (1.0, 0.0))
    with pytest.raises(s2s_ad.TransformError) as caught:
        s2s_ad.grad(bessel_j_by_order)(1.5, 2.0)
    assert "scipy.special.jv: its argument v depends" in str(caught.value) and "np.jv" not in str(caught.value)
    # by x alone the same calls are differentiated
    want = numeric_grad(incomplete_gamma_by_shape, (1.5, 2.0), 1)
    np.testing.assert_allclose(s2s_ad.grad(incomplete_gamma_by_shape, wrt=1)(1.5, 2.0), want, rtol=1e-7)


def test_a_scipy_function_without_a_rule_is_named_as_scipys():
    with pytest.raises(s2s_ad.TransformError) as caught:
        s2s_ad.grad(unknown_special_function)(0.7)
    message = str(caught.value)
    assert "scipy.special.struve" in message and "@s2s_ad.adjoint(scipy.special.struve)" in message, message
    assert "np.struve" not in message


def test_callables_are_described_as_users_write_them():
    stats = pytest.importorskip("scipy.stats")
    from s2s_ad.frontend.callables import describe_callable
    assert describe_callable(special.iv) == "scipy.special.iv"
    assert describe_callable(special.polygamma) == "scipy.special.polygamma"  # (defined in scipy.special._basic)
    assert describe_callable(stats.norm.pdf) == "scipy.stats.norm.pdf"
    assert describe_callable(stats.multivariate_normal.logpdf) == "scipy.stats.multivariate_normal.logpdf"
    assert describe_callable(np.sin) == "np.sin" and describe_callable(np.sum) == "np.sum"


# -- scipy.signal.convolve and correlate -------------------------------------------------------

signal = pytest.importorskip("scipy.signal")


def blurred_misfit(image, kernel, data, mode):
    blurred = signal.convolve(image, kernel, mode=mode)
    edges = signal.correlate(blurred, kernel, mode)
    return np.sum((blurred - data) ** 2) + 0.1 * np.sum(edges ** 2)


SIGNAL_CASES = [((7,), (3,), "full"), ((7,), (3,), "same"), ((7,), (3,), "valid"), ((3,), (6,), "valid"),
                ((5, 6), (2, 3), "full"), ((5, 6), (3, 2), "same"), ((5, 6), (2, 3), "valid"),
                ((2, 3), (4, 4), "same")]


def _signal_arguments(image_shape, kernel_shape, mode):
    rng = np.random.default_rng(11)
    image, kernel = rng.normal(size=image_shape), rng.normal(size=kernel_shape)
    data = rng.normal(size=np.shape(signal.convolve(image, kernel, mode=mode)))
    return image, kernel, data, mode


@pytest.mark.parametrize("image_shape, kernel_shape, mode", SIGNAL_CASES)
def test_convolve_in_every_mode_against_finite_differences(image_shape, kernel_shape, mode):
    args = _signal_arguments(image_shape, kernel_shape, mode)
    assert_gradient_matches(blurred_misfit, args, wrt=(0, 1))
    assert_hessian_matches_gradient_differences(blurred_misfit, args)


@pytest.mark.slow  # (JAX's Hessians here take a while)
@pytest.mark.parametrize("image_shape, kernel_shape, mode", SIGNAL_CASES)
def test_convolve_in_every_mode_against_jax(image_shape, kernel_shape, mode):
    jax, jnp, _ = _jax()
    jsignal = pytest.importorskip("jax.scipy.signal")
    image, kernel, data, mode = _signal_arguments(image_shape, kernel_shape, mode)

    def reference(image, kernel):
        blurred = jsignal.convolve(image, kernel, mode=mode)
        edges = jsignal.correlate(blurred, kernel, mode)
        return jnp.sum((blurred - data) ** 2) + 0.1 * jnp.sum(edges ** 2)
    d_image, d_kernel = s2s_ad.grad(blurred_misfit, wrt=(0, 1))(image, kernel, data, mode)
    want_image, want_kernel = jax.grad(reference, argnums=(0, 1))(image, kernel)
    np.testing.assert_allclose(d_image, want_image, rtol=1e-9, atol=1e-10)
    np.testing.assert_allclose(d_kernel, want_kernel, rtol=1e-9, atol=1e-10)
    t_image, t_kernel = np.ones(image.shape), np.linspace(-1.0, 1.0, kernel.size).reshape(kernel.shape)
    _, along = s2s_ad.jvp(blurred_misfit, (image, kernel, data, mode), (t_image, t_kernel, np.zeros(data.shape), None))
    _, want_along = jax.jvp(reference, (image, kernel), (t_image, t_kernel))
    np.testing.assert_allclose(along, want_along, rtol=1e-9)
    np.testing.assert_allclose(s2s_ad.hessian(blurred_misfit, wrt=1)(image, kernel, data, mode),
                               jax.hessian(reference, argnums=1)(image, kernel), rtol=1e-8, atol=1e-9)


# -- scipy.stats distributions -----------------------------------------------------------------

stats = pytest.importorskip("scipy.stats")

DATA = np.array([0.3, 1.7, 2.2, 0.9, 4.1, 1.3])


def student_t_fit(theta, data):
    loc, scale, df = theta[0], np.exp(theta[1]), np.exp(theta[2])
    return -np.sum(stats.t.logpdf(data, df, loc, scale))


def gamma_fit(theta, data):
    return -np.sum(stats.gamma.logpdf(data, np.exp(theta[0]), loc=theta[1], scale=np.exp(theta[2])))


def normal_everything(theta, data):
    loc, scale = theta[0], np.exp(theta[1])
    return (np.sum(stats.norm.logpdf(data, loc, scale)) + np.sum(stats.norm.pdf(data, loc, scale))
            + np.sum(stats.norm.cdf(data, loc, scale) ** 2) + np.sum(stats.norm.logcdf(data, loc, scale))
            + np.sum(stats.norm.sf(data, loc=loc, scale=scale)) + np.sum(stats.norm.logsf(data, loc, scale)))


def chi2_and_beta(theta, data):
    df, a, b = np.exp(theta)
    unit = data / 5.0
    return (np.sum(stats.chi2.logpdf(data, df)) + np.sum(stats.chi2.pdf(data, df, scale=1.5))
            + np.sum(stats.beta.logpdf(unit, a, b)) + np.sum(stats.beta.pdf(unit, a, b)))


def poisson_fit(theta, counts):
    mu = np.exp(theta)
    return -np.sum(stats.poisson.logpmf(counts, mu)) + np.sum(stats.poisson.pmf(counts, mu))


COUNTS = np.array([0, 2, 3, 1, 5, 2])


def jax_student_t_fit(theta, data, jnp, jstats):
    return -jnp.sum(jstats.t.logpdf(data, jnp.exp(theta[2]), theta[0], jnp.exp(theta[1])))


def jax_gamma_fit(theta, data, jnp, jstats):
    return -jnp.sum(jstats.gamma.logpdf(data, jnp.exp(theta[0]), loc=theta[1], scale=jnp.exp(theta[2])))


def jax_normal_everything(theta, data, jnp, jstats):
    loc, scale = theta[0], jnp.exp(theta[1])
    n = jstats.norm
    return (jnp.sum(n.logpdf(data, loc, scale)) + jnp.sum(n.pdf(data, loc, scale))
            + jnp.sum(n.cdf(data, loc, scale) ** 2) + jnp.sum(n.logcdf(data, loc, scale))
            + jnp.sum(n.sf(data, loc=loc, scale=scale)) + jnp.sum(n.logsf(data, loc, scale)))


def jax_chi2_and_beta(theta, data, jnp, jstats):
    df, a, b = jnp.exp(theta)
    unit = data / 5.0
    return (jnp.sum(jstats.chi2.logpdf(data, df)) + jnp.sum(jstats.chi2.pdf(data, df, scale=1.5))
            + jnp.sum(jstats.beta.logpdf(unit, a, b)) + jnp.sum(jstats.beta.pdf(unit, a, b)))


def jax_poisson_fit(theta, counts, jnp, jstats):
    mu = jnp.exp(theta)
    return -jnp.sum(jstats.poisson.logpmf(counts, mu)) + jnp.sum(jstats.poisson.pmf(counts, mu))


STATS_CASES = [(student_t_fit, jax_student_t_fit, np.array([1.2, -0.3, 1.1]), DATA),
               (gamma_fit, jax_gamma_fit, np.array([0.4, -0.2, 0.1]), DATA),
               (normal_everything, jax_normal_everything, np.array([1.1, 0.2]), DATA),
               (chi2_and_beta, jax_chi2_and_beta, np.array([0.9, 0.3, 0.6]), DATA),
               (poisson_fit, jax_poisson_fit, np.array(0.7), COUNTS)]
STATS_IDS = ["t", "gamma", "norm", "chi2-beta", "poisson"]


@pytest.mark.parametrize("f, reference, theta, data", STATS_CASES, ids=STATS_IDS)
def test_distributions_against_finite_differences(f, reference, theta, data):
    assert_gradient_matches(f, (theta, data))  # (and forward mode against reverse)
    if np.ndim(theta):
        assert_hessian_matches_gradient_differences(f, (theta, data))


@pytest.mark.slow  # (JAX's Hessians here take a while)
@pytest.mark.parametrize("f, reference, theta, data", STATS_CASES, ids=STATS_IDS)
def test_distributions_against_jax(f, reference, theta, data):
    jax, jnp, _ = _jax()
    jstats = pytest.importorskip("jax.scipy.stats")
    want = jax.grad(lambda t: reference(t, data, jnp, jstats))(theta)
    np.testing.assert_allclose(s2s_ad.grad(f)(theta, data), want, rtol=1e-9, atol=1e-11)
    np.testing.assert_allclose(s2s_ad.hessian(f)(theta, data), jax.hessian(lambda t: reference(t, data, jnp, jstats))(theta),
                               rtol=1e-8, atol=1e-10)
    direction = np.linspace(0.5, -1.0, np.size(theta)).reshape(np.shape(theta))
    _, along = s2s_ad.jvp(f, (theta, data), (direction, None))
    np.testing.assert_allclose(along, np.sum(np.asarray(want) * direction), rtol=1e-9)


def gaussian_likelihood(points, mean, factor):
    cov = factor @ factor.T + 0.5 * np.eye(3)
    return np.sum(stats.multivariate_normal.logpdf(points, mean, cov)) \
        + stats.multivariate_normal.pdf(points[0], mean=mean, cov=cov)


@pytest.mark.slow
def test_multivariate_normal_by_the_point_the_mean_and_the_covariance_against_jax():
    jax, jnp, _ = _jax()
    jstats = pytest.importorskip("jax.scipy.stats")
    rng = np.random.default_rng(12)
    points, mean, factor = rng.normal(size=(5, 3)), rng.normal(size=3), rng.normal(size=(3, 3))

    def reference(points, mean, factor):
        cov = factor @ factor.T + 0.5 * jnp.eye(3)
        return jnp.sum(jstats.multivariate_normal.logpdf(points, mean, cov)) \
            + jstats.multivariate_normal.pdf(points[0], mean, cov)
    args = (points, mean, factor)
    got = s2s_ad.grad(gaussian_likelihood, wrt=(0, 1, 2))(*args)
    want = jax.grad(reference, argnums=(0, 1, 2))(*args)
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, rtol=1e-9, atol=1e-11)
    for wrt in (1, 2):
        np.testing.assert_allclose(s2s_ad.hessian(gaussian_likelihood, wrt=wrt)(*args),
                                   jax.hessian(reference, argnums=wrt)(*args), rtol=1e-8, atol=1e-10)
    assert_gradient_matches(gaussian_likelihood, args, wrt=(0, 1, 2))


def covariance_by_element(cov, x):
    return stats.multivariate_normal.logpdf(x, np.zeros(2), cov)


def test_the_covariance_derivative_is_scipys_which_reads_the_lower_triangle():
    cov, x = np.array([[1.0, 0.3], [0.3, 0.8]]), np.array([0.3, -0.2])
    got = s2s_ad.grad(covariance_by_element)(cov, x)
    np.testing.assert_allclose(got, numeric_grad(covariance_by_element, (cov, x), 0), rtol=1e-6, atol=1e-9)
    assert got[0, 1] == 0.0 and got[1, 0] != 0.0


def dirichlet_fit(logits, alpha):
    x = special.softmax(logits, axis=0)
    return np.sum(stats.dirichlet.logpdf(x, alpha)) + np.sum(stats.dirichlet.pdf(x[:-1], alpha))


@pytest.mark.slow
def test_dirichlet_by_the_point_and_alpha_against_jax():
    jax, jnp, _ = _jax()
    jstats = pytest.importorskip("jax.scipy.stats")
    logits, alpha = np.array([[0.2, -0.4], [0.9, 0.1], [-0.3, 0.5]]), np.array([1.5, 2.0, 3.0])

    def reference(logits, alpha):
        x = jax.nn.softmax(logits, axis=0)
        return jnp.sum(jstats.dirichlet.logpdf(x, alpha)) + jnp.sum(jstats.dirichlet.pdf(x, alpha))
    got = s2s_ad.grad(dirichlet_fit, wrt=(0, 1))(logits, alpha)
    want = jax.grad(reference, argnums=(0, 1))(logits, alpha)
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, rtol=1e-9, atol=1e-11)
    np.testing.assert_allclose(s2s_ad.hessian(dirichlet_fit, wrt=1)(logits, alpha),
                               jax.hessian(reference, argnums=1)(logits, alpha), rtol=1e-8, atol=1e-10)
    assert_gradient_matches(dirichlet_fit, (logits, alpha), wrt=(0, 1))


def t_tail_by_df(df, x):
    return stats.t.cdf(x, df) + stats.t.logpdf(x, df)


def gamma_tail_by_shape(a, x):
    return np.sum(stats.gamma.sf(x, a, scale=2.0))


def test_tail_probabilities_by_a_shape_parameter_are_refused_naming_it():
    with pytest.raises(s2s_ad.TransformError, match=r"test_scipy_breadth.py:\d+: .*scipy\.stats\.t\.cdf: "
                                                    r"its argument df depends on the differentiated inputs"):
        s2s_ad.grad(t_tail_by_df)(3.0, 0.4)
    with pytest.raises(s2s_ad.TransformError, match=r"scipy\.stats\.gamma\.sf: its argument a depends"):
        s2s_ad.jvp(gamma_tail_by_shape, (2.0, np.array([0.5, 1.5])), (1.0, np.zeros(2)))
    # by the point alone they are differentiated
    np.testing.assert_allclose(s2s_ad.grad(t_tail_by_df, wrt=1)(3.0, 0.4), numeric_grad(t_tail_by_df, (3.0, 0.4), 1),
                               rtol=1e-7)
    _, along = s2s_ad.jvp(gamma_tail_by_shape, (2.0, np.array([0.5, 1.5])), (None, np.array([1.0, -0.5])))
    np.testing.assert_allclose(along, numeric_grad(gamma_tail_by_shape, (2.0, np.array([0.5, 1.5])), 1)
                               @ np.array([1.0, -0.5]), rtol=1e-7)


def normal_quantiles(theta, q):
    loc, scale = theta[0], np.exp(theta[1])
    return np.sum(stats.norm.ppf(q, loc, scale) ** 2) + np.sum(stats.norm.isf(0.5 * q, loc=loc, scale=scale))


def gaussian_entropy(factor):
    cov = factor @ factor.T + 0.5 * np.eye(3)
    return stats.multivariate_normal.entropy(cov=cov) + stats.multivariate_normal.entropy(np.zeros(3), 2.0 * cov)


def test_normal_quantiles_and_gaussian_entropy_against_finite_differences():
    theta, q = np.array([0.3, -0.2]), np.array([0.1, 0.45, 0.8])
    assert_gradient_matches(normal_quantiles, (theta, q), wrt=(0, 1))
    assert_hessian_matches_gradient_differences(normal_quantiles, (theta, q))
    factor = np.array([[1.0, 0.2, -0.3], [0.4, 0.9, 0.1], [-0.2, 0.3, 1.1]])
    assert_gradient_matches(gaussian_entropy, (factor,))
    assert_hessian_matches_gradient_differences(gaussian_entropy, (factor,))
    # 0.5 log det(2 pi e cov): by cov, 0.5 inv(cov) along any symmetric change
    cov = factor @ factor.T + 0.5 * np.eye(3)
    _, along = s2s_ad.jvp(lambda c: stats.multivariate_normal.entropy(cov=c), (cov,), (np.eye(3),))
    np.testing.assert_allclose(along, 0.5 * np.trace(np.linalg.inv(cov)), rtol=1e-10)


@pytest.mark.slow
def test_normal_quantiles_against_jax():
    jax, jnp, _ = _jax()
    jstats = pytest.importorskip("jax.scipy.stats")
    theta, q = np.array([0.3, -0.2]), np.array([0.1, 0.45, 0.8])

    def reference(theta):
        loc, scale = theta[0], jnp.exp(theta[1])
        return jnp.sum(jstats.norm.ppf(q, loc, scale) ** 2) + jnp.sum(jstats.norm.ppf(1.0 - 0.5 * q, loc, scale))
    np.testing.assert_allclose(s2s_ad.grad(normal_quantiles)(theta, q), jax.grad(reference)(theta), rtol=1e-9)
    np.testing.assert_allclose(s2s_ad.hessian(normal_quantiles)(theta, q), jax.hessian(reference)(theta), rtol=1e-8)


# -- scipy.linalg.solve_sylvester and solve_banded ---------------------------------------------

linalg = pytest.importorskip("scipy.linalg")

SYL_A = np.array([[1.5, 0.3, -0.2], [0.1, 2.0, 0.4], [-0.3, 0.2, 1.2]])
SYL_B = np.array([[0.7, -0.4], [0.5, 0.9]])
SYL_Q = np.array([[1.0, -0.5], [0.3, 0.2], [-0.7, 0.4]])


def sylvester_misfit(a, b, q):
    x = linalg.solve_sylvester(a, b, q)
    return np.sum(x ** 2) + np.sum(np.sin(x) * q)


def sylvester_misfit_by_b(b, a, q):
    return sylvester_misfit(a, b, q)


def sylvester_misfit_by_q(q, a, b):
    return sylvester_misfit(a, b, q)


def test_solve_sylvester_against_finite_differences_in_every_mode():
    args = (SYL_A.copy(), SYL_B.copy(), SYL_Q.copy())
    assert_gradient_matches(sylvester_misfit, args, wrt=(0, 1, 2))  # (and forward mode against reverse)
    assert_hessian_matches_gradient_differences(sylvester_misfit, args)
    assert_hessian_matches_gradient_differences(sylvester_misfit_by_b, (args[1], args[0], args[2]))
    assert_hessian_matches_gradient_differences(sylvester_misfit_by_q, (args[2], args[0], args[1]))
    rng = np.random.default_rng(3)
    directions = tuple(rng.normal(size=np.shape(a)) for a in args)
    _, along = s2s_ad.jvp(sylvester_misfit, args, directions)
    want = sum(np.sum(numeric_grad(sylvester_misfit, args, i) * d) for i, d in enumerate(directions))
    np.testing.assert_allclose(along, want, rtol=1e-6)


def sylvester_batch(a, b, q):
    return np.sum(linalg.solve_sylvester(a, b, q) ** 2)


def _scipy_batches_sylvester():
    try:
        linalg.solve_sylvester(np.ones((2, 1, 1)), np.ones((1, 1)), np.ones((1, 1)))
    except Exception:
        return False
    return True


@pytest.mark.skipif(not _scipy_batches_sylvester(),
                    reason="this SciPy does not batch solve_sylvester (older versions)")
def test_solve_sylvester_over_a_batch_sums_the_shared_matrix_adjoint():
    a, b, q = np.stack([SYL_A, 1.5 * SYL_A.T]), SYL_B.copy(), np.stack([SYL_Q, -SYL_Q])
    assert_gradient_matches(sylvester_batch, (a, b, q), wrt=(0, 1, 2))


@pytest.mark.slow
def test_solve_sylvester_against_jax():
    """JAX's solve_sylvester differentiates by q alone (its Schur decomposition has no rule): by a and
    b the reference solves the same equation as one linear system, (I kron a + b^T kron I) vec(x) =
    vec(q), x's columns stacked."""
    jax, jnp, _ = _jax()
    jlinalg = pytest.importorskip("jax.scipy.linalg")

    def as_one_system(a, b, q):
        m, n = q.shape
        operator = jnp.kron(jnp.eye(n), a) + jnp.kron(b.T, jnp.eye(m))
        return jnp.linalg.solve(operator, q.T.reshape(-1)).reshape(n, m).T

    def reference(a, b, q, solver=as_one_system):
        x = solver(a, b, q)
        return jnp.sum(x ** 2) + jnp.sum(jnp.sin(x) * q)
    args = (SYL_A.copy(), SYL_B.copy(), SYL_Q.copy())
    got = s2s_ad.grad(sylvester_misfit, wrt=(0, 1, 2))(*args)
    want = jax.grad(reference, argnums=(0, 1, 2))(*args)
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, rtol=1e-9, atol=1e-11)
    if hasattr(jlinalg, "solve_sylvester"):
        by_q = jax.grad(lambda q: reference(args[0], args[1], q, jlinalg.solve_sylvester))(args[2])
        np.testing.assert_allclose(got[2], by_q, rtol=1e-7, atol=1e-9)
    directions = (np.ones((3, 3)), np.eye(2), np.full((3, 2), 0.5))
    _, along = s2s_ad.jvp(sylvester_misfit, args, directions)
    _, want_along = jax.jvp(reference, args, directions)
    np.testing.assert_allclose(along, want_along, rtol=1e-9)
    for wrt in (0, 1, 2):
        np.testing.assert_allclose(s2s_ad.hessian(sylvester_misfit, wrt=wrt)(*args),
                                   jax.hessian(reference, argnums=wrt)(*args), rtol=1e-8, atol=1e-10)


# a diagonally dominant tridiagonal band; its corners (ab[0, 0] and ab[2, -1]) hold no entry of a
BAND = np.array([[9.0, 0.3, -0.2, 0.5, 0.1], [2.1, 1.8, 2.5, 1.9, 2.2], [0.4, -0.3, 0.2, 0.6, 7.0]])
BAND_RHS = np.array([0.3, -1.2, 0.8, 0.5, 1.1])
# a (2, 1)-band, 4 x 4; corners ab[0, 0], ab[2, -1], ab[3, -2:]
BAND_2_1 = np.array([[5.0, 0.2, 0.4, -0.1], [2.4, 2.1, 1.7, 2.6], [0.3, 0.5, -0.2, 6.0], [0.1, -0.4, 8.0, 9.0]])


def banded_misfit(ab, b):
    x = linalg.solve_banded((1, 1), ab, b)
    return np.sum(x ** 2) + np.sum(np.cos(x) * b)


def banded_misfit_by_b(b, ab):
    return banded_misfit(ab, b)


def banded_columns_misfit(ab, b):
    x = linalg.solve_banded((2, 1), ab, b)
    return np.sum(x ** 2 * np.arange(1.0, 1.0 + b.shape[1]))


def _dense(ab, lower, upper):
    n = ab.shape[1]
    a = np.zeros((n, n))
    for i in range(n):
        for j in range(max(0, i - lower), min(n, i + upper + 1)):
            a[i, j] = ab[upper + i - j, j]
    return a


def test_solve_banded_against_finite_differences_in_every_mode():
    args = (BAND.copy(), BAND_RHS.copy())
    got = assert_gradient_matches(banded_misfit, args, wrt=(0, 1))  # (and forward mode against reverse)
    assert got[0][0, 0] == 0.0 and got[0][2, -1] == 0.0  # the corners: no entry of a
    assert_hessian_matches_gradient_differences(banded_misfit, args)
    assert_hessian_matches_gradient_differences(banded_misfit_by_b, (args[1], args[0]))
    direction = (np.linspace(-1.0, 1.0, 15).reshape(3, 5), np.array([1.0, 0.5, -0.5, 0.2, 0.1]))
    _, along = s2s_ad.jvp(banded_misfit, args, direction)
    want = sum(np.sum(numeric_grad(banded_misfit, args, i) * d) for i, d in enumerate(direction))
    np.testing.assert_allclose(along, want, rtol=1e-6)
    # columns of b, a (2, 1)-band
    columns = (BAND_2_1.copy(), np.array([[0.3, -1.0, 0.5], [1.2, 0.4, -0.3], [0.8, 0.1, 0.9], [-0.6, 0.7, 0.2]]))
    got = assert_gradient_matches(banded_columns_misfit, columns, wrt=(0, 1))
    assert got[0][0, 0] == 0.0 and got[0][2, -1] == 0.0 and np.all(got[0][3, -2:] == 0.0)
    assert_hessian_matches_gradient_differences(banded_columns_misfit, columns)


@pytest.mark.slow
def test_solve_banded_against_jax_on_the_dense_matrix():
    """jax.scipy.linalg has no solve_banded: JAX solves the dense matrix the band holds, and its
    derivative by that matrix, read back on the band, is the derivative by ``ab``."""
    jax, jnp, _ = _jax()
    ab, b = BAND.copy(), BAND_RHS.copy()
    rows, cols = np.nonzero(_dense(np.ones_like(ab), 1, 1))

    def reference(ab, b):
        a = jnp.zeros((5, 5)).at[rows, cols].set(ab[1 + rows - cols, cols])
        x = jnp.linalg.solve(a, b)
        return jnp.sum(x ** 2) + jnp.sum(jnp.cos(x) * b)
    got = s2s_ad.grad(banded_misfit, wrt=(0, 1))(ab, b)
    want = jax.grad(reference, argnums=(0, 1))(ab, b)
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, rtol=1e-9, atol=1e-11)
    direction = (np.ones((3, 5)), np.linspace(0.0, 1.0, 5))
    _, along = s2s_ad.jvp(banded_misfit, (ab, b), direction)
    np.testing.assert_allclose(along, jax.jvp(reference, (ab, b), direction)[1], rtol=1e-9)
    np.testing.assert_allclose(s2s_ad.hessian(banded_misfit)(ab, b), jax.hessian(reference)(ab, b),
                               rtol=1e-8, atol=1e-10)


def overwriting_banded(ab, b):
    return np.sum(linalg.solve_banded((1, 1), ab, b, overwrite_b=True))


def test_solve_banded_that_may_overwrite_its_arguments_is_refused_before_it_runs():
    with pytest.raises(s2s_ad.TransformError, match=r"test_scipy_breadth.py:\d+:(\d+:)? .*scipy\.linalg\.solve_banded.*"
                                                    r"drop overwrite_ab and overwrite_b"):
        s2s_ad.grad(overwriting_banded)(BAND.copy(), BAND_RHS.copy())


# -- frozen distributions: refused before anything runs, saying what to write ---------------------

FROZEN = stats.norm(0.5, 2.0)  # frozen outside the function


def frozen_in_the_function(x, loc, scale):
    d = stats.norm(loc, scale)
    return np.sum(d.logpdf(x))


def frozen_and_called_at_once(x, df):
    return np.sum(stats.t(df, scale=2.0).cdf(x))


def frozen_at_module_level(x):
    return np.sum(FROZEN.logpdf(x))


def frozen_passed_in(x, d):
    return np.sum(d.pdf(x))


def unfrozen(x, loc, scale):
    return np.sum(stats.norm.logpdf(x, loc, scale)) + FROZEN.logpdf(0.3)  # (a constant: it runs)


def test_a_frozen_distribution_is_refused_saying_to_pass_the_parameters_to_the_method():
    x = np.array([0.3, 1.2, -0.4])
    with pytest.raises(s2s_ad.TransformError, match=r"test_scipy_breadth.py:\d+:(\d+:)? cannot differentiate the "
                                                    r"frozen distribution scipy\.stats\.norm\(\.\.\.\): .*write "
                                                    r"scipy\.stats\.norm\.logpdf\(x, <its parameters>\) instead"):
        s2s_ad.grad(frozen_in_the_function, wrt=(1, 2))(x, 0.5, 1.2)
    with pytest.raises(s2s_ad.TransformError, match=r"frozen distribution scipy\.stats\.t\(\.\.\.\): .*"
                                                    r"scipy\.stats\.t\.logpdf\(x, <its parameters>\)"):
        s2s_ad.jvp(frozen_and_called_at_once, (x, 3.0), (np.ones(3), 1.0))
    with pytest.raises(s2s_ad.TransformError, match=r"test_scipy_breadth.py:\d+:(\d+:)? .*not those of a frozen "
                                                    r"distribution; write scipy\.stats\.norm\.logpdf"):
        s2s_ad.grad(frozen_at_module_level)(x)
    with pytest.raises(s2s_ad.TransformError, match=r"the method \.pdf\(\): .*frozen scipy\.stats distribution.*"
                                                    r"scipy\.stats\.norm\.logpdf\(x, loc, scale\)"):
        s2s_ad.grad(frozen_passed_in)(x, FROZEN)
    # what the refusal says to write is differentiated, a frozen distribution's constant value included
    got = s2s_ad.grad(unfrozen, wrt=(0, 1, 2))(x, 0.5, 1.2)
    for i, g in enumerate(got):
        np.testing.assert_allclose(g, numeric_grad(unfrozen, (x, 0.5, 1.2), i), rtol=1e-6, atol=1e-9)
