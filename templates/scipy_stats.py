# mypy: disable-error-code="no-redef"
"""Rules for ``scipy.stats`` distributions, registered once the user imports ``scipy.stats`` (SciPy
is an optional extra, not imported otherwise).

A distribution's method is a bound method of the object ``scipy.stats`` holds (``stats.norm.pdf``);
a rule is keyed by it, and a call written ``stats.norm.logpdf(x, loc, scale)`` or ``norm.logpdf(x,
loc=..., scale=...)`` finds it.  Frozen distributions (``stats.norm(loc, scale).pdf(x)``) are refused
before anything runs, saying to write ``stats.norm.pdf(x, loc, scale)`` (``callables.frozen_refusal``):
a frozen distribution is an object holding the parameters, which the transformer does not carry.

- ``norm``, ``t``, ``chi2``, ``gamma``, ``beta``: ``pdf`` and ``logpdf`` by the point, ``loc``,
  ``scale`` and each shape parameter (``df``, ``a``, ``b``); ``cdf``, ``logcdf``, ``sf``, ``logsf`` by
  the point, ``loc`` and ``scale``.  Their derivatives by a shape parameter have no closed form (the
  incomplete gamma and beta functions' by their parameters): a call where one depends on the
  differentiated inputs is refused, naming it.  With ``z = (x - loc) / scale`` and ``log f(z)`` the
  standard density's logarithm, ``logpdf = log f(z) - log(scale)``; ``stats_<name>_score`` is
  ``d log f / dz``, ``stats_<name>_<shape>_score`` its derivative by that shape parameter.
- ``norm.ppf`` and ``norm.isf`` (the inverses of ``cdf`` and ``sf``) by the probability, ``loc`` and
  ``scale``.
- ``poisson``: ``pmf``, ``logpmf``, ``cdf``, ``logcdf``, ``sf``, ``logsf`` by ``mu`` (the count ``k`` and
  ``loc`` are integers: no derivative).  ``d cdf(k) / d mu = -pmf(floor(k))``.
- ``multivariate_normal``: ``logpdf`` and ``pdf`` by the point, the mean and the covariance (a number,
  the diagonal, or a matrix); ``entropy`` by the covariance (by the mean it is zero).  SciPy reads a
  covariance matrix's lower triangle only, so the derivative by the matrix is lower triangular: along
  a symmetric change of the matrix it is the derivative of the density, by an element above the
  diagonal it is zero, as SciPy's result is.
- ``dirichlet``: ``logpdf`` and ``pdf`` by the point (its k components, or k - 1 of them, the last
  one then being 1 minus their sum, as SciPy takes it) and by ``alpha``.  SciPy refuses a point off
  the simplex, so the derivative by the point is that of the density's formula, to be used through a
  point that stays on the simplex (a softmax).

The rules' bodies call the distributions' own methods and ``scipy.special``'s functions, which have
rules, so the code they generate is differentiated again (Hessians).
"""
import numpy as np

from s2s_ad.rules import adjoint, declare, nondifferentiable, tangent, when_imported
from s2s_ad.core.runtime import unbroadcast

stats = None  # scipy.stats, once imported (see _register)
special = None  # scipy.special (scipy.stats imports it)


# -- the standard densities' scores ---------------------------------------------------------------

def stats_norm_score(z):
    """d/dz of the standard normal log density."""
    return -z


def stats_t_score(z, df):
    return -(df + 1.0) * z / (df + z * z)


def stats_t_df_score(z, df):
    q = z * z
    return 0.5 * (special.psi((df + 1.0) / 2.0) - special.psi(df / 2.0) - 1.0 / df - np.log1p(q / df)
                  + (df + 1.0) * q / (df * (df + q)))


def stats_chi2_score(z, df):
    return (df / 2.0 - 1.0) / z - 0.5


def stats_chi2_df_score(z, df):
    return 0.5 * (np.log(z / 2.0) - special.psi(df / 2.0))


def stats_gamma_score(z, a):
    return (a - 1.0) / z - 1.0


def stats_gamma_a_score(z, a):
    return np.log(z) - special.psi(a)


def stats_beta_score(z, a, b):
    return (a - 1.0) / z - (b - 1.0) / (1.0 - z)


def stats_beta_a_score(z, a, b):
    return np.log(z) - special.psi(a) + special.psi(a + b)


def stats_beta_b_score(z, a, b):
    return np.log1p(-z) - special.psi(b) + special.psi(a + b)


# -- the multivariate normal --------------------------------------------------------------------

def stats_mvn_dim(mean, cov):
    """The dimension SciPy takes for a multivariate normal of this mean and covariance: the mean's
    size, else the covariance matrix's (a number or a diagonal alone: 1)."""
    if mean is not None:
        return np.size(mean)
    if np.ndim(cov) == 2:
        return np.shape(cov)[0]
    return 1


nondifferentiable(stats_mvn_dim)


def stats_mvn_matrix(cov, dim):
    """The covariance matrix SciPy reads from ``cov``: a number times the identity, a diagonal, or
    the lower triangle of a matrix mirrored."""
    if np.ndim(cov) == 0:
        return cov * np.eye(dim)
    if np.ndim(cov) == 1:
        return np.diag(cov)
    return np.tril(cov) + np.transpose(np.tril(cov, -1))


def stats_mvn_matrix_adjoint(grad, cov):
    """The transpose of ``stats_mvn_matrix``: the adjoint of the matrix read back onto ``cov``."""
    if np.ndim(cov) == 0:
        return np.trace(grad)
    if np.ndim(cov) == 1:
        return np.diagonal(grad)
    return np.tril(grad) + np.transpose(np.triu(grad, 1))


def stats_mvn_centred(x, mean, dim):
    """The points as rows of ``dim`` numbers (as SciPy reads ``x``), less the mean."""
    rows = np.reshape(x, (-1, dim))
    if mean is None:
        return rows
    return rows - mean


def stats_mvn_x_term(t_x, solved, out, dim):
    """The tangent of the log density along ``t_x``, shaped like ``out``."""
    return np.reshape(-np.sum(solved * np.reshape(t_x, (-1, dim)), axis=1), np.shape(out))


def stats_mvn_mean_term(t_mean, solved, out, dim):
    return np.reshape(solved @ (t_mean * np.ones(dim)), np.shape(out))


def stats_mvn_cov_term(t_cov, solved, matrix, out, dim):
    change = stats_mvn_matrix(t_cov, dim)
    quadratic = np.sum((solved @ change) * solved, axis=1)
    return np.reshape(0.5 * quadratic - 0.5 * np.sum(np.linalg.inv(matrix) * change), np.shape(out))


def stats_mvn_entropy_term(t_cov, cov, dim):
    """The tangent of the entropy, 0.5 log det(2 pi e matrix), along ``t_cov``."""
    return 0.5 * np.sum(np.linalg.inv(stats_mvn_matrix(cov, dim)) * stats_mvn_matrix(t_cov, dim))


declare(stats_mvn_x_term, stats_mvn_mean_term, stats_mvn_cov_term, stats_mvn_matrix, stats_mvn_entropy_term,
        factors=(0,))


# -- the Dirichlet distribution -----------------------------------------------------------------

def stats_dirichlet_points(x, alpha):
    """The points with their k components, as SciPy completes k - 1 of them (along axis 0)."""
    if np.shape(x)[0] == np.size(alpha) - 1:
        return np.concatenate([x, 1.0 - np.sum(x, axis=0, keepdims=True)], axis=0)
    return x


def stats_dirichlet_fold(grad, x, alpha):
    """The transpose of ``stats_dirichlet_points``: the adjoint of the completed points on ``x``."""
    if np.shape(x)[0] == np.size(alpha) - 1:
        return grad[:-1] - grad[-1:]
    return grad


def stats_dirichlet_column(alpha, x):
    """``alpha`` as a column along axis 0, beside points of ``x``'s rank."""
    return np.reshape(alpha, (-1,) + (1,) * (np.ndim(x) - 1))


def stats_dirichlet_alpha_scores(x, alpha):
    """d log density / d alpha for each point: log x - psi(alpha) + psi(sum alpha), along axis 0."""
    column = stats_dirichlet_column(alpha, x)
    return np.log(stats_dirichlet_points(x, alpha)) - special.psi(column) + special.psi(np.sum(alpha))


def stats_dirichlet_spread(t_x, alpha):
    """The change of the completed points along a change ``t_x`` of the points (linear in it)."""
    if np.shape(t_x)[0] == np.size(alpha) - 1:
        return np.concatenate([t_x, -np.sum(t_x, axis=0, keepdims=True)], axis=0)
    return t_x


def stats_dirichlet_x_term(t_x, x, alpha):
    """The tangent of the log density along ``t_x``."""
    column = stats_dirichlet_column(alpha, x)
    return np.sum(stats_dirichlet_spread(t_x, alpha) * (column - 1.0) / stats_dirichlet_points(x, alpha), axis=0)


def stats_dirichlet_alpha_term(t_alpha, x, alpha):
    """The tangent of the log density along ``t_alpha``."""
    return np.sum(stats_dirichlet_column(t_alpha, x) * stats_dirichlet_alpha_scores(x, alpha), axis=0)


declare(stats_dirichlet_spread, stats_dirichlet_fold, stats_dirichlet_x_term, stats_dirichlet_alpha_term, factors=(0,))


# -- examples (see EXAMPLES_FORM.md): points inside each support ---------------------------------

_NORM_EXAMPLES = ({"x": (3,)}, {"x": (3,), "loc": np.array(0.4), "scale": np.array(1.5)},
                  {"x": (2, 3), "loc": (3,), "scale": np.array(0.7)}, {"x": (), "loc": (), "scale": ()})
_NORM_Q_EXAMPLES = ({"q": (3,)}, {"q": (3,), "loc": np.array(0.4), "scale": np.array(1.5)},
                    {"q": (2, 3), "loc": (3,), "scale": np.array(0.7)}, {"q": (), "loc": (), "scale": ()})
# (shape parameters as float arrays, not shapes: tail probabilities take them undifferentiated, as given)
_T_EXAMPLES = ({"x": (3,), "df": np.array(3.5)},
               {"x": (2, 3), "df": np.array([0.7, 2.0, 9.0]), "loc": np.array(0.1), "scale": np.array(1.4)},
               {"x": (), "df": np.array(1.5), "loc": (), "scale": ()})
_CHI2_EXAMPLES = ({"x": (3,), "df": np.array(3.0)},
                  {"x": (2, 3), "df": np.array([0.8, 2.0, 5.0]), "loc": np.array(-0.5), "scale": np.array(1.3)},
                  {"x": np.array([0.4, 1.5, 3.0]), "df": np.array(2.5), "loc": np.array(0.1), "scale": np.array(0.9)})
_GAMMA_EXAMPLES = ({"x": (3,), "a": np.array(2.5)},
                   {"x": (2, 3), "a": np.array([0.8, 2.0, 5.0]), "loc": np.array(-0.5), "scale": np.array(1.3)},
                   {"x": np.array([0.4, 1.5, 3.0]), "a": np.array(0.8), "loc": np.array(0.1), "scale": np.array(0.9)})
_BETA_EXAMPLES = ({"x": (3,), "a": np.array(1.5), "b": np.array(2.5)},
                  {"x": (2, 3), "a": np.array([0.8, 2.0, 5.0]), "b": np.array(3.0), "loc": np.array(-0.1),
                   "scale": np.array(1.2)},
                  {"x": np.array([0.1, 0.5, 0.85]), "a": np.array(0.7), "b": np.array(1.4)})
_POISSON_EXAMPLES = ({"k": np.array([0, 1, 3, 5]), "mu": np.array(2.5)}, {"k": np.array([[0, 2], [4, 1]]), "mu": (2,)},
                     {"k": 3, "mu": (), "loc": 1}, {"k": np.array([0.0, 2.0, 4.0]), "mu": np.array(1.7)})
_MVN_COV = np.array([[1.2, 0.3, -0.2], [0.3, 0.9, 0.1], [-0.2, 0.1, 0.7]])
_MVN_EXAMPLES = ({"x": (3,), "mean": (3,), "cov": _MVN_COV.copy()},
                 {"x": (4, 3), "mean": (3,), "cov": _MVN_COV.copy()},
                 {"x": (2, 4, 3), "mean": (3,), "cov": _MVN_COV + np.triu(np.full((3, 3), 0.05), 1)},  # SciPy reads the lower triangle
                 {"x": (4, 3), "mean": (3,), "cov": np.array([0.5, 1.2, 0.8])}, {"x": (4,), "cov": np.array(0.8)},
                 {"x": (2, 2), "mean": (2,), "cov": np.array(0.6)},
                 {"x": (5,), "mean": np.array(0.3), "cov": np.array(1.4)},
                 {"x": (3,), "cov": _MVN_COV.copy(), "allow_singular": True})
# (points of k components are given as lists, not differentiated: SciPy refuses the nearby points off
# the simplex that finite differences would take; tests/rules/test_scipy_breadth.py checks them through a softmax)
_DIRICHLET_EXAMPLES = ({"x": [0.2, 0.3, 0.5], "alpha": np.array([1.5, 2.0, 3.0])},
                       {"x": [[0.2, 0.6], [0.3, 0.1], [0.5, 0.3]], "alpha": np.array([0.8, 2.0, 1.2])},
                       {"x": np.array([0.25, 0.35]), "alpha": np.array([1.5, 2.0, 3.0])},
                       {"x": np.array([[0.2, 0.6], [0.3, 0.1]]), "alpha": np.array([0.8, 2.0, 1.2])})


def _register(module) -> None:
    """Declare the rules below, given ``scipy.stats``."""
    global stats, special
    import scipy.special

    stats, special = module, scipy.special  # the names the rules' bodies and the helpers use

    # -- norm --

    @adjoint(stats.norm.logpdf, elementwise=True, examples=_NORM_EXAMPLES)
    def norm_logpdf(out, x, loc=0.0, scale=1.0, *, d_out):
        z = (x - loc) / scale
        g = d_out * stats_norm_score(z) / scale
        d_x = g
        d_loc = -g
        d_scale = -(g * z) - d_out / scale

    @adjoint(stats.norm.pdf, elementwise=True, examples=_NORM_EXAMPLES)
    def norm_pdf(out, x, loc=0.0, scale=1.0, *, d_out):
        z = (x - loc) / scale
        w = d_out * out
        g = w * stats_norm_score(z) / scale
        d_x = g
        d_loc = -g
        d_scale = -(g * z) - w / scale

    @adjoint(stats.norm.cdf, elementwise=True, examples=_NORM_EXAMPLES)
    def norm_cdf(out, x, loc=0.0, scale=1.0, *, d_out):
        g = d_out * stats.norm.pdf(x, loc, scale)
        d_x = g
        d_loc = -g
        d_scale = -(g * (x - loc) / scale)

    @adjoint(stats.norm.logcdf, elementwise=True, examples=_NORM_EXAMPLES)
    def norm_logcdf(out, x, loc=0.0, scale=1.0, *, d_out):
        g = d_out * np.exp(stats.norm.logpdf(x, loc, scale) - out)
        d_x = g
        d_loc = -g
        d_scale = -(g * (x - loc) / scale)

    @adjoint(stats.norm.sf, elementwise=True, examples=_NORM_EXAMPLES)
    def norm_sf(out, x, loc=0.0, scale=1.0, *, d_out):
        g = -d_out * stats.norm.pdf(x, loc, scale)
        d_x = g
        d_loc = -g
        d_scale = -(g * (x - loc) / scale)

    @adjoint(stats.norm.logsf, elementwise=True, examples=_NORM_EXAMPLES)
    def norm_logsf(out, x, loc=0.0, scale=1.0, *, d_out):
        g = -d_out * np.exp(stats.norm.logpdf(x, loc, scale) - out)
        d_x = g
        d_loc = -g
        d_scale = -(g * (x - loc) / scale)

    # the inverses of cdf and sf: loc + scale * ndtri(q), loc + scale * ndtri(1 - q)
    @adjoint(stats.norm.ppf, elementwise=True, examples=_NORM_Q_EXAMPLES)
    def norm_ppf(out, q, loc=0.0, scale=1.0, *, d_out):
        d_q = d_out / stats.norm.pdf(out, loc, scale)
        d_loc = d_out
        d_scale = d_out * (out - loc) / scale

    @adjoint(stats.norm.isf, elementwise=True, examples=_NORM_Q_EXAMPLES)
    def norm_isf(out, q, loc=0.0, scale=1.0, *, d_out):
        d_q = -d_out / stats.norm.pdf(out, loc, scale)
        d_loc = d_out
        d_scale = d_out * (out - loc) / scale

    # -- t (df) --

    @adjoint(stats.t.logpdf, elementwise=True, examples=_T_EXAMPLES)
    def t_logpdf(out, x, df, loc=0.0, scale=1.0, *, d_out):
        z = (x - loc) / scale
        g = d_out * stats_t_score(z, df) / scale
        d_x = g
        d_loc = -g
        d_scale = -(g * z) - d_out / scale
        d_df = d_out * stats_t_df_score(z, df)

    @adjoint(stats.t.pdf, elementwise=True, examples=_T_EXAMPLES)
    def t_pdf(out, x, df, loc=0.0, scale=1.0, *, d_out):
        z = (x - loc) / scale
        w = d_out * out
        g = w * stats_t_score(z, df) / scale
        d_x = g
        d_loc = -g
        d_scale = -(g * z) - w / scale
        d_df = w * stats_t_df_score(z, df)

    @adjoint(stats.t.cdf, elementwise=True, examples=_T_EXAMPLES)
    def t_cdf(out, x, df, loc=0.0, scale=1.0, *, d_out):
        g = d_out * stats.t.pdf(x, df, loc, scale)  # by df: no closed form
        d_x = g
        d_loc = -g
        d_scale = -(g * (x - loc) / scale)

    @adjoint(stats.t.logcdf, elementwise=True, examples=_T_EXAMPLES)
    def t_logcdf(out, x, df, loc=0.0, scale=1.0, *, d_out):
        g = d_out * np.exp(stats.t.logpdf(x, df, loc, scale) - out)  # by df: no closed form
        d_x = g
        d_loc = -g
        d_scale = -(g * (x - loc) / scale)

    @adjoint(stats.t.sf, elementwise=True, examples=_T_EXAMPLES)
    def t_sf(out, x, df, loc=0.0, scale=1.0, *, d_out):
        g = -d_out * stats.t.pdf(x, df, loc, scale)  # by df: no closed form
        d_x = g
        d_loc = -g
        d_scale = -(g * (x - loc) / scale)

    @adjoint(stats.t.logsf, elementwise=True, examples=_T_EXAMPLES)
    def t_logsf(out, x, df, loc=0.0, scale=1.0, *, d_out):
        g = -d_out * np.exp(stats.t.logpdf(x, df, loc, scale) - out)  # by df: no closed form
        d_x = g
        d_loc = -g
        d_scale = -(g * (x - loc) / scale)

    # -- chi2 (df) --

    @adjoint(stats.chi2.logpdf, elementwise=True, examples=_CHI2_EXAMPLES)
    def chi2_logpdf(out, x, df, loc=0.0, scale=1.0, *, d_out):
        z = (x - loc) / scale
        g = d_out * stats_chi2_score(z, df) / scale
        d_x = g
        d_loc = -g
        d_scale = -(g * z) - d_out / scale
        d_df = d_out * stats_chi2_df_score(z, df)

    @adjoint(stats.chi2.pdf, elementwise=True, examples=_CHI2_EXAMPLES)
    def chi2_pdf(out, x, df, loc=0.0, scale=1.0, *, d_out):
        z = (x - loc) / scale
        w = d_out * out
        g = w * stats_chi2_score(z, df) / scale
        d_x = g
        d_loc = -g
        d_scale = -(g * z) - w / scale
        d_df = w * stats_chi2_df_score(z, df)

    @adjoint(stats.chi2.cdf, elementwise=True, examples=_CHI2_EXAMPLES)
    def chi2_cdf(out, x, df, loc=0.0, scale=1.0, *, d_out):
        g = d_out * stats.chi2.pdf(x, df, loc, scale)  # by df: no closed form
        d_x = g
        d_loc = -g
        d_scale = -(g * (x - loc) / scale)

    @adjoint(stats.chi2.logcdf, elementwise=True, examples=_CHI2_EXAMPLES)
    def chi2_logcdf(out, x, df, loc=0.0, scale=1.0, *, d_out):
        g = d_out * np.exp(stats.chi2.logpdf(x, df, loc, scale) - out)  # by df: no closed form
        d_x = g
        d_loc = -g
        d_scale = -(g * (x - loc) / scale)

    @adjoint(stats.chi2.sf, elementwise=True, examples=_CHI2_EXAMPLES)
    def chi2_sf(out, x, df, loc=0.0, scale=1.0, *, d_out):
        g = -d_out * stats.chi2.pdf(x, df, loc, scale)  # by df: no closed form
        d_x = g
        d_loc = -g
        d_scale = -(g * (x - loc) / scale)

    @adjoint(stats.chi2.logsf, elementwise=True, examples=_CHI2_EXAMPLES)
    def chi2_logsf(out, x, df, loc=0.0, scale=1.0, *, d_out):
        g = -d_out * np.exp(stats.chi2.logpdf(x, df, loc, scale) - out)  # by df: no closed form
        d_x = g
        d_loc = -g
        d_scale = -(g * (x - loc) / scale)

    # -- gamma (a) --

    @adjoint(stats.gamma.logpdf, elementwise=True, examples=_GAMMA_EXAMPLES)
    def gamma_logpdf(out, x, a, loc=0.0, scale=1.0, *, d_out):
        z = (x - loc) / scale
        g = d_out * stats_gamma_score(z, a) / scale
        d_x = g
        d_loc = -g
        d_scale = -(g * z) - d_out / scale
        d_a = d_out * stats_gamma_a_score(z, a)

    @adjoint(stats.gamma.pdf, elementwise=True, examples=_GAMMA_EXAMPLES)
    def gamma_pdf(out, x, a, loc=0.0, scale=1.0, *, d_out):
        z = (x - loc) / scale
        w = d_out * out
        g = w * stats_gamma_score(z, a) / scale
        d_x = g
        d_loc = -g
        d_scale = -(g * z) - w / scale
        d_a = w * stats_gamma_a_score(z, a)

    @adjoint(stats.gamma.cdf, elementwise=True, examples=_GAMMA_EXAMPLES)
    def gamma_cdf(out, x, a, loc=0.0, scale=1.0, *, d_out):
        g = d_out * stats.gamma.pdf(x, a, loc, scale)  # by a: no closed form
        d_x = g
        d_loc = -g
        d_scale = -(g * (x - loc) / scale)

    @adjoint(stats.gamma.logcdf, elementwise=True, examples=_GAMMA_EXAMPLES)
    def gamma_logcdf(out, x, a, loc=0.0, scale=1.0, *, d_out):
        g = d_out * np.exp(stats.gamma.logpdf(x, a, loc, scale) - out)  # by a: no closed form
        d_x = g
        d_loc = -g
        d_scale = -(g * (x - loc) / scale)

    @adjoint(stats.gamma.sf, elementwise=True, examples=_GAMMA_EXAMPLES)
    def gamma_sf(out, x, a, loc=0.0, scale=1.0, *, d_out):
        g = -d_out * stats.gamma.pdf(x, a, loc, scale)  # by a: no closed form
        d_x = g
        d_loc = -g
        d_scale = -(g * (x - loc) / scale)

    @adjoint(stats.gamma.logsf, elementwise=True, examples=_GAMMA_EXAMPLES)
    def gamma_logsf(out, x, a, loc=0.0, scale=1.0, *, d_out):
        g = -d_out * np.exp(stats.gamma.logpdf(x, a, loc, scale) - out)  # by a: no closed form
        d_x = g
        d_loc = -g
        d_scale = -(g * (x - loc) / scale)

    # -- beta (a, b) --

    @adjoint(stats.beta.logpdf, elementwise=True, examples=_BETA_EXAMPLES)
    def beta_logpdf(out, x, a, b, loc=0.0, scale=1.0, *, d_out):
        z = (x - loc) / scale
        g = d_out * stats_beta_score(z, a, b) / scale
        d_x = g
        d_loc = -g
        d_scale = -(g * z) - d_out / scale
        d_a = d_out * stats_beta_a_score(z, a, b)
        d_b = d_out * stats_beta_b_score(z, a, b)

    @adjoint(stats.beta.pdf, elementwise=True, examples=_BETA_EXAMPLES)
    def beta_pdf(out, x, a, b, loc=0.0, scale=1.0, *, d_out):
        z = (x - loc) / scale
        w = d_out * out
        g = w * stats_beta_score(z, a, b) / scale
        d_x = g
        d_loc = -g
        d_scale = -(g * z) - w / scale
        d_a = w * stats_beta_a_score(z, a, b)
        d_b = w * stats_beta_b_score(z, a, b)

    @adjoint(stats.beta.cdf, elementwise=True, examples=_BETA_EXAMPLES)
    def beta_cdf(out, x, a, b, loc=0.0, scale=1.0, *, d_out):
        g = d_out * stats.beta.pdf(x, a, b, loc, scale)  # by a, b: no closed form
        d_x = g
        d_loc = -g
        d_scale = -(g * (x - loc) / scale)

    @adjoint(stats.beta.logcdf, elementwise=True, examples=_BETA_EXAMPLES)
    def beta_logcdf(out, x, a, b, loc=0.0, scale=1.0, *, d_out):
        g = d_out * np.exp(stats.beta.logpdf(x, a, b, loc, scale) - out)  # by a, b: no closed form
        d_x = g
        d_loc = -g
        d_scale = -(g * (x - loc) / scale)

    @adjoint(stats.beta.sf, elementwise=True, examples=_BETA_EXAMPLES)
    def beta_sf(out, x, a, b, loc=0.0, scale=1.0, *, d_out):
        g = -d_out * stats.beta.pdf(x, a, b, loc, scale)  # by a, b: no closed form
        d_x = g
        d_loc = -g
        d_scale = -(g * (x - loc) / scale)

    @adjoint(stats.beta.logsf, elementwise=True, examples=_BETA_EXAMPLES)
    def beta_logsf(out, x, a, b, loc=0.0, scale=1.0, *, d_out):
        g = -d_out * np.exp(stats.beta.logpdf(x, a, b, loc, scale) - out)  # by a, b: no closed form
        d_x = g
        d_loc = -g
        d_scale = -(g * (x - loc) / scale)

    # -- poisson (mu; the count k and loc are integers) --

    @adjoint(stats.poisson.logpmf, elementwise=True, domain=(0.5, 3.0), examples=_POISSON_EXAMPLES)
    def poisson_logpmf(out, k, mu, loc=0, *, d_out):
        d_mu = d_out * ((k - loc) / mu - 1.0)

    @adjoint(stats.poisson.pmf, elementwise=True, domain=(0.5, 3.0), examples=_POISSON_EXAMPLES)
    def poisson_pmf(out, k, mu, loc=0, *, d_out):
        d_mu = d_out * out * ((k - loc) / mu - 1.0)

    @adjoint(stats.poisson.cdf, elementwise=True, domain=(0.5, 3.0), examples=_POISSON_EXAMPLES)
    def poisson_cdf(out, k, mu, loc=0, *, d_out):
        d_mu = -d_out * stats.poisson.pmf(np.floor(k), mu, loc)

    @adjoint(stats.poisson.logcdf, elementwise=True, domain=(0.5, 3.0), examples=_POISSON_EXAMPLES)
    def poisson_logcdf(out, k, mu, loc=0, *, d_out):
        d_mu = -d_out * np.exp(stats.poisson.logpmf(np.floor(k), mu, loc) - out)

    @adjoint(stats.poisson.sf, elementwise=True, domain=(0.5, 3.0), examples=_POISSON_EXAMPLES)
    def poisson_sf(out, k, mu, loc=0, *, d_out):
        d_mu = d_out * stats.poisson.pmf(np.floor(k), mu, loc)

    @adjoint(stats.poisson.logsf, elementwise=True, domain=(0.5, 3.0), examples=_POISSON_EXAMPLES)
    def poisson_logsf(out, k, mu, loc=0, *, d_out):
        d_mu = d_out * np.exp(stats.poisson.logpmf(np.floor(k), mu, loc) - out)

    # -- multivariate_normal (the point, the mean, the covariance) --

    @adjoint(stats.multivariate_normal.logpdf, examples=_MVN_EXAMPLES)
    def multivariate_normal_logpdf(out, x, mean=None, cov=1, allow_singular=False, *, d_out):
        dim = stats_mvn_dim(mean, cov)
        matrix = stats_mvn_matrix(cov, dim)
        solved = np.transpose(np.linalg.solve(matrix, np.transpose(stats_mvn_centred(x, mean, dim))))
        weights = np.reshape(d_out, (-1, 1))
        d_x = np.reshape(-(weights * solved), np.shape(x))
        d_mean = unbroadcast(np.sum(weights * solved, axis=0), mean)
        d_cov = stats_mvn_matrix_adjoint(0.5 * (np.transpose(solved) @ (weights * solved)
                                                - np.sum(weights) * np.linalg.inv(matrix)), cov)

    @tangent(stats.multivariate_normal.logpdf)
    def multivariate_normal_logpdf_tangent(out, x, mean=None, cov=1, allow_singular=False, *, t_x, t_mean, t_cov):
        dim = stats_mvn_dim(mean, cov)
        matrix = stats_mvn_matrix(cov, dim)
        solved = np.transpose(np.linalg.solve(matrix, np.transpose(stats_mvn_centred(x, mean, dim))))
        t_out = (stats_mvn_x_term(t_x, solved, out, dim) + stats_mvn_mean_term(t_mean, solved, out, dim)
                 + stats_mvn_cov_term(t_cov, solved, matrix, out, dim))

    @adjoint(stats.multivariate_normal.pdf, examples=_MVN_EXAMPLES)
    def multivariate_normal_pdf(out, x, mean=None, cov=1, allow_singular=False, *, d_out):
        dim = stats_mvn_dim(mean, cov)
        matrix = stats_mvn_matrix(cov, dim)
        solved = np.transpose(np.linalg.solve(matrix, np.transpose(stats_mvn_centred(x, mean, dim))))
        weights = np.reshape(d_out * out, (-1, 1))
        d_x = np.reshape(-(weights * solved), np.shape(x))
        d_mean = unbroadcast(np.sum(weights * solved, axis=0), mean)
        d_cov = stats_mvn_matrix_adjoint(0.5 * (np.transpose(solved) @ (weights * solved)
                                                - np.sum(weights) * np.linalg.inv(matrix)), cov)

    @tangent(stats.multivariate_normal.pdf)
    def multivariate_normal_pdf_tangent(out, x, mean=None, cov=1, allow_singular=False, *, t_x, t_mean, t_cov):
        dim = stats_mvn_dim(mean, cov)
        matrix = stats_mvn_matrix(cov, dim)
        solved = np.transpose(np.linalg.solve(matrix, np.transpose(stats_mvn_centred(x, mean, dim))))
        t_out = out * (stats_mvn_x_term(t_x, solved, out, dim) + stats_mvn_mean_term(t_mean, solved, out, dim)
                       + stats_mvn_cov_term(t_cov, solved, matrix, out, dim))

    @adjoint(stats.multivariate_normal.entropy, zero_derivative=("mean",), examples=(
        {"mean": np.array([0.1, 0.2, 0.3]), "cov": _MVN_COV.copy()}, {"cov": _MVN_COV + np.triu(np.full((3, 3), 0.05), 1)},
        {"mean": np.array([0.1, 0.2]), "cov": np.array([0.5, 1.2])}, {"cov": np.array(0.8)}))
    def multivariate_normal_entropy(out, mean=None, cov=1, *, d_out):
        dim = stats_mvn_dim(mean, cov)
        d_cov = stats_mvn_matrix_adjoint(0.5 * d_out * np.linalg.inv(stats_mvn_matrix(cov, dim)), cov)  # mean: none

    @tangent(stats.multivariate_normal.entropy)
    def multivariate_normal_entropy_tangent(out, mean=None, cov=1, *, t_cov):
        t_out = stats_mvn_entropy_term(t_cov, cov, stats_mvn_dim(mean, cov))

    # -- dirichlet (the point and alpha) --

    @adjoint(stats.dirichlet.logpdf, examples=_DIRICHLET_EXAMPLES)
    def dirichlet_logpdf(out, x, alpha, *, d_out):
        column = stats_dirichlet_column(alpha, x)
        d_x = stats_dirichlet_fold(d_out * (column - 1.0) / stats_dirichlet_points(x, alpha), x, alpha)
        d_alpha = np.reshape(np.sum(np.reshape(d_out * stats_dirichlet_alpha_scores(x, alpha), (np.size(alpha), -1)),
                                    axis=1), np.shape(alpha))

    @tangent(stats.dirichlet.logpdf)
    def dirichlet_logpdf_tangent(out, x, alpha, *, t_x, t_alpha):
        t_out = stats_dirichlet_x_term(t_x, x, alpha) + stats_dirichlet_alpha_term(t_alpha, x, alpha)

    @adjoint(stats.dirichlet.pdf, examples=_DIRICHLET_EXAMPLES)
    def dirichlet_pdf(out, x, alpha, *, d_out):
        column = stats_dirichlet_column(alpha, x)
        d_x = stats_dirichlet_fold(d_out * out * (column - 1.0) / stats_dirichlet_points(x, alpha), x, alpha)
        d_alpha = np.reshape(np.sum(np.reshape(d_out * out * stats_dirichlet_alpha_scores(x, alpha),
                                               (np.size(alpha), -1)), axis=1), np.shape(alpha))

    @tangent(stats.dirichlet.pdf)
    def dirichlet_pdf_tangent(out, x, alpha, *, t_x, t_alpha):
        t_out = out * (stats_dirichlet_x_term(t_x, x, alpha) + stats_dirichlet_alpha_term(t_alpha, x, alpha))


when_imported("scipy.stats", _register)
