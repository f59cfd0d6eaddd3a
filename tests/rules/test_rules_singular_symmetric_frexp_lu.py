"""Issue 38, from JAX's own gradient tests: determinants at singular matrices, pseudo-inverses at
rank-deficient ones, functions of symmetric matrices to second order, np.frexp and np.ldexp, and
scipy.linalg.lu; each in grad, jvp and hessian, against JAX (float64) and central differences."""
import warnings

import numpy as np
import pytest

import s2s_ad
from conftest import assert_gradient_matches, assert_hessian_matches_gradient_differences, numeric_grad, optional_import

scipy_linalg = optional_import("scipy.linalg")  # None where SciPy is not installed: its tests skip, saying so

RANK_2 = np.array([[50.0, -30.0, 45.0], [-30.0, 90.0, -81.0], [45.0, -81.0, 81.0]]) / 50.0  # JAX's corank 1
RANK_1 = np.array([[36.0, -42.0, 18.0], [-42.0, 49.0, -21.0], [18.0, -21.0, 9.0]]) / 40.0  # JAX's corank 2
SINGULAR = (RANK_2, RANK_1, np.zeros((3, 3)), np.outer([1.0, -2.0, 0.5, 3.0], [0.2, 1.0, -1.0, 0.4]))


def _jax():
    jax = pytest.importorskip("jax")
    jax.config.update("jax_enable_x64", True)
    return jax, jax.numpy


def _close(got, want, scale=1.0):
    np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=1e-9, atol=1e-11 * scale)


# -- the determinant at singular matrices -------------------------------------------------------

def weighted_det(a):
    return np.sum(np.linalg.det(a) * np.arange(1.0, 1.0 + np.size(np.linalg.det(a))))


def det_of_product(a):
    return np.linalg.det(a @ a.T) + np.linalg.det(a) ** 2  # rank-deficient a: both singular


@pytest.mark.slow
def test_det_gradient_jvp_and_hessian_at_singular_matrices_match_jax():
    jax, jnp = _jax()

    def jax_weighted(a):
        return jnp.sum(jnp.linalg.det(a) * jnp.arange(1.0, 1.0 + np.prod(a.shape[:-2])))

    rng = np.random.default_rng(38)
    points = SINGULAR + (np.stack([RANK_2, np.eye(3) + 0.1, RANK_1]), rng.normal(size=(2, 4, 4)), rng.normal(size=(1, 1)))
    for a in points:
        scale = max(1.0, float(np.max(np.abs(jax.hessian(jax_weighted)(a)))))
        _close(s2s_ad.grad(weighted_det)(a), jax.grad(jax_weighted)(a), scale)
        _close(s2s_ad.hessian(weighted_det)(a), jax.hessian(jax_weighted)(a), scale)
        t = rng.normal(size=a.shape)
        _close(s2s_ad.jvp(weighted_det, (a,), (t,))[1], jax.jvp(jax_weighted, (a,), (t,))[1], scale)


def test_det_at_singular_matrices_matches_differences_to_second_order():
    # the determinant is a polynomial: differences are exact to their rounding, singular or not
    for a in SINGULAR[:3]:
        assert_gradient_matches(weighted_det, (a,), rtol=1e-6, atol=1e-7)
        assert_hessian_matches_gradient_differences(weighted_det, (a,))
    a = SINGULAR[3][:3, :3]  # rank 1: det(a a^T) and det(a)^2 have a zero gradient and Hessian there
    assert_gradient_matches(det_of_product, (a,), rtol=1e-6, atol=1e-7)
    assert_hessian_matches_gradient_differences(det_of_product, (a,))
    np.testing.assert_allclose(s2s_ad.hessian(det_of_product)(a), 0.0, atol=1e-12)


CUBIC_M = np.array([[1.0, 2.0, 0.0], [0.5, 1.0, 3.0], [1.0, 1.0, 1.0]])


def det_along_a_line(x):
    return np.linalg.det(RANK_2 + x * CUBIC_M)  # a cubic in x, singular at 0


def test_det_second_derivative_along_a_line_and_third_refused_not_wrong():
    second = s2s_ad.grad(s2s_ad.grad(det_along_a_line))
    eps = 1e-4
    want = (det_along_a_line(eps) - 2.0 * det_along_a_line(0.0) + det_along_a_line(-eps)) / eps ** 2
    np.testing.assert_allclose(second(0.0), want, rtol=1e-6)
    # the third derivative would go through the SVD's rule, whose divisions by singular values make
    # rounding a finite wrong number at a singular matrix: refused before it runs
    with pytest.raises(s2s_ad.TransformError, match="second order only"):
        s2s_ad.grad(second)(0.0)


def sign_times_sum(a):
    sign, _ = np.linalg.slogdet(a)
    return sign * np.sum(a ** 2)


def log_abs_det(a):
    return np.sum(np.linalg.slogdet(a)[1])


def test_slogdet_sign_at_singular_matrices_and_log_det_near_them():
    jax, jnp = _jax()
    # the sign is 0 at a singular matrix and piecewise constant: its derivative is 0, no LinAlgError
    for a in SINGULAR:
        np.testing.assert_array_equal(s2s_ad.grad(sign_times_sum)(a), 0.0)
        np.testing.assert_array_equal(s2s_ad.jvp(sign_times_sum, (a,), (np.ones_like(a),))[1], 0.0)
    # near a singular matrix log|det| has a large but finite derivative, inv(a)^T, and JAX's Hessian
    rng = np.random.default_rng(39)
    for a in (RANK_2 + 1e-6 * np.eye(3), np.stack([RANK_1 + 1e-4 * np.eye(3), rng.normal(size=(3, 3))])):
        def jax_log(x):
            return jnp.sum(jnp.linalg.slogdet(x)[1])

        want = jax.grad(jax_log)(a)
        np.testing.assert_allclose(s2s_ad.grad(log_abs_det)(a), want, rtol=1e-7, atol=1e-9 * np.max(np.abs(want)))
        hess = jax.hessian(jax_log)(a)
        np.testing.assert_allclose(s2s_ad.hessian(log_abs_det)(a), hess, rtol=1e-6, atol=1e-9 * np.max(np.abs(hess)))
    assert_gradient_matches(log_abs_det, (rng.normal(size=(2, 3, 3)),))
    # at a singular matrix log|det| is -inf: its derivative is not finite (as JAX's), never a finite number
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        assert not np.all(np.isfinite(s2s_ad.grad(log_abs_det)(np.zeros((3, 3)))))


def test_numba_backend_gives_the_same_determinant_derivatives_at_singular_matrices():
    pytest.importorskip("numba")
    for a in SINGULAR[:3]:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # where Numba cannot compile the cofactors, the Python code runs
            np.testing.assert_allclose(s2s_ad.grad(weighted_det, backend="numba")(a), s2s_ad.grad(weighted_det)(a),
                                       rtol=1e-12, atol=1e-14)
            np.testing.assert_array_equal(s2s_ad.grad(sign_times_sum, backend="numba")(a), 0.0)


# -- the pseudo-inverse at rank-deficient matrices: the derivative along rank-keeping perturbations -

def pinv_score(a, w):
    x = np.linalg.pinv(a)
    return np.sum(w * x) + np.sum(x ** 2)


def _rank_deficient(rng):
    """(matrix, its left factor, its right factor): a = left @ right of rank 1 or 2."""
    out = []
    for m, n, r in ((3, 4, 1), (3, 3, 2), (5, 3, 2), (2, 2, 1)):
        left, right = rng.normal(size=(m, r)), rng.normal(size=(r, n))
        out.append((left @ right, left, right))
    return out


@pytest.mark.slow
def test_pinv_at_rank_deficient_matrices_matches_jax_in_every_mode():
    jax, jnp = _jax()
    rng = np.random.default_rng(40)
    for a, _, _ in _rank_deficient(rng) + [(np.zeros((2, 3)), None, None)]:
        w = rng.normal(size=a.shape[::-1])

        def jax_score(x):
            p = jnp.linalg.pinv(x)
            return jnp.sum(w * p) + jnp.sum(p ** 2)

        scale = max(1.0, float(np.max(np.abs(jax.hessian(jax_score)(a)))))
        _close(s2s_ad.grad(pinv_score)(a, w), jax.grad(jax_score)(a), scale)
        _close(s2s_ad.hessian(pinv_score)(a, w), jax.hessian(jax_score)(a), scale)
        t = rng.normal(size=a.shape)
        _close(s2s_ad.jvp(pinv_score, (a, w), (t, np.zeros_like(w)))[1], jax.jvp(jax_score, (a,), (t,))[1], scale)


def pinv_of_a_parameter(p):
    return np.linalg.pinv(np.array([[0.0, 0.0], [-p, 1.0]]) / (1.0 + p ** 2))  # JAX's issue 2792: rank 1


def test_pinv_jacobian_of_jax_issue_2792():
    np.testing.assert_allclose(s2s_ad.jacobian(pinv_of_a_parameter)(2.0), [[0.0, -1.0], [0.0, 0.0]], atol=1e-12)
    np.testing.assert_allclose(s2s_ad.jacobian(pinv_of_a_parameter)(2.0),
                               (pinv_of_a_parameter(2.0 + 1e-6) - pinv_of_a_parameter(2.0 - 1e-6)) / 2e-6, atol=1e-8)


def test_pinv_at_rank_deficient_matrices_matches_differences_along_the_rank_it_keeps():
    rng = np.random.default_rng(41)
    for a, left, right in _rank_deficient(rng):
        w = rng.normal(size=a.shape[::-1])
        d_left, d_right = rng.normal(size=left.shape), rng.normal(size=right.shape)

        def along(t):  # a curve of matrices of the same rank through a
            return (left + t * d_left) @ (right + t * d_right)

        direction = d_left @ right + left @ d_right  # its tangent at a
        eps = 1e-6
        want = (pinv_score(along(eps), w) - pinv_score(along(-eps), w)) / (2 * eps)
        np.testing.assert_allclose(np.sum(s2s_ad.grad(pinv_score)(a, w) * direction), want, rtol=1e-6, atol=1e-7)
        np.testing.assert_allclose(s2s_ad.jvp(pinv_score, (a, w), (direction, np.zeros_like(w)))[1], want,
                                   rtol=1e-6, atol=1e-7)
        # second order: the Hessian times the curve's tangent, against differences of the gradient along
        # the curve (which leaves the tangent line at order eps**2 only)
        gradient = s2s_ad.grad(pinv_score)
        moved = (gradient(along(eps), w) - gradient(along(-eps), w)) / (2 * eps)
        hessian = s2s_ad.hessian(pinv_score)(a, w)
        np.testing.assert_allclose(np.tensordot(hessian, direction, axes=2), moved, rtol=1e-5,
                                   atol=1e-6 * np.max(np.abs(moved)))


# -- functions of symmetric matrices: derivatives of the triangle NumPy reads, to every order --------

def _symmetric_cases(rng):
    """(s2s_ad function, JAX function, point): the JAX one symmetrizes its argument, NumPy's reads one
    triangle; the point has junk in the triangle NumPy does not read."""
    _, jnp = _jax()
    factor = rng.normal(size=(4, 8))
    spd = factor @ factor.T / 8.0 + np.eye(4)
    junk = np.triu(rng.normal(size=(4, 4)), 1)
    w = rng.normal(size=(4, 4))
    v = rng.normal(size=4)

    def chol(a):
        return np.sum(w * np.linalg.cholesky(a) ** 2)

    def chol_upper(a):
        return np.sum(w * np.sin(np.linalg.cholesky(a, upper=True)))

    def eigen(a):
        values, vectors = np.linalg.eigh(a)
        return np.sum(v * values ** 3) + np.sum(w * vectors ** 2)

    def eigen_upper(a):
        return np.sum(v * np.linalg.eigvalsh(a, UPLO="U") ** 2)

    def hermitian_pinv(a):
        return np.sum(w * np.linalg.pinv(a, hermitian=True) ** 2)

    def j_chol(a):
        return jnp.sum(w * jnp.linalg.cholesky(a) ** 2)

    def j_chol_upper(a):
        return jnp.sum(w * jnp.sin(jnp.linalg.cholesky(a, upper=True)))

    def j_eigen(a):
        values, vectors = jnp.linalg.eigh(a)
        return jnp.sum(v * values ** 3) + jnp.sum(w * vectors ** 2)

    def j_eigen_upper(a):
        return jnp.sum(v * jnp.linalg.eigvalsh(a, UPLO="U") ** 2)

    def j_hermitian_pinv(a):
        return jnp.sum(w * jnp.linalg.pinv(a, hermitian=True) ** 2)

    lower, upper = spd + junk, spd + junk.T
    cases = [(chol, j_chol, lower), (eigen, j_eigen, lower), (eigen_upper, j_eigen_upper, upper),
             (hermitian_pinv, j_hermitian_pinv, lower)]
    if np.lib.NumpyVersion(np.__version__) >= "2.0.0":  # cholesky's upper arrived in NumPy 2
        cases.append((chol_upper, j_chol_upper, upper))
    return cases


def _symmetrized(x):
    return (x + np.swapaxes(x, -1, -2)) / 2.0


@pytest.mark.slow
def test_symmetric_functions_read_one_triangle_to_second_order():
    """The convention: a function of a symmetric matrix is differentiated as NumPy computes it, from
    the triangle it reads.  Its gradient then matches differences in every direction, its Hessian the
    differences of that gradient in every direction, and, in symmetric directions (where NumPy's and
    JAX's conventions meet), JAX's: the symmetrized gradient is JAX's gradient."""
    jax, _ = _jax()
    rng = np.random.default_rng(42)
    for f, jf, a in _symmetric_cases(rng):
        seen = np.tril(a) + np.tril(a, -1).T if f.__name__ != "eigen_upper" and f.__name__ != "chol_upper" \
            else np.triu(a) + np.triu(a, 1).T  # the symmetric matrix NumPy reads; JAX is given it
        g = s2s_ad.grad(f)(a)
        np.testing.assert_allclose(g, numeric_grad(f, (a,), 0), rtol=1e-5, atol=1e-7, err_msg=f.__name__)
        np.testing.assert_allclose(_symmetrized(g), jax.grad(jf)(seen), rtol=1e-8, atol=1e-10, err_msg=f.__name__)
        assert_hessian_matches_gradient_differences(f, (a,))
        h = s2s_ad.hessian(f)(a)
        jh = jax.hessian(jf)(seen)
        for _ in range(3):
            s, t = _symmetrized(rng.normal(size=a.shape)), _symmetrized(rng.normal(size=a.shape))
            np.testing.assert_allclose(np.tensordot(np.tensordot(h, s, axes=2), t, axes=2),
                                       np.tensordot(np.tensordot(jh, s, axes=2), t, axes=2), rtol=1e-7, atol=1e-9,
                                       err_msg=f.__name__)
            np.testing.assert_allclose(s2s_ad.jvp(f, (a,), (s,))[1], jax.jvp(jf, (seen,), (s,))[1], rtol=1e-9,
                                       atol=1e-11, err_msg=f.__name__)


# -- np.frexp and np.ldexp -----------------------------------------------------------------------

def mantissas_and_scales(x, y):
    m, e = np.frexp(x * y)
    return np.sum(np.ldexp(m ** 2, e) + np.sin(m) * e + np.ldexp(x, 3) + np.ldexp(y * x, -e))


def test_frexp_and_ldexp_match_jax_and_differences():
    jax, jnp = _jax()

    def jax_version(x, y):
        m, e = jnp.frexp(x * y)
        return jnp.sum(jnp.ldexp(m ** 2, e) + jnp.sin(m) * e + jnp.ldexp(x, 3) + jnp.ldexp(y * x, -e))

    x = np.array([3.0, -5.5, 0.3, 12.5])
    y = np.array([0.7, 1.1, -2.0, 0.4])
    got = s2s_ad.grad(mantissas_and_scales, wrt=(0, 1))(x, y)
    want = jax.grad(jax_version, argnums=(0, 1))(x, y)
    for g, w in zip(got, want):
        _close(g, w)
    for i in (0, 1):
        for j in (0, 1):
            _close(s2s_ad.hessian(mantissas_and_scales, wrt=(0, 1))(x, y)[i][j],
                   jax.hessian(jax_version, argnums=(0, 1))(x, y)[i][j])
    t = (np.linspace(-1.0, 1.0, 4), np.linspace(0.5, 2.0, 4))
    _close(s2s_ad.jvp(mantissas_and_scales, (x, y), t)[1], jax.jvp(jax_version, (x, y), t)[1])
    assert_gradient_matches(mantissas_and_scales, (x, y), wrt=(0, 1))
    assert_hessian_matches_gradient_differences(mantissas_and_scales, (x, y))


def mantissa(x):
    return np.frexp(x)[0]


def scaled_by_eight(x):
    return np.ldexp(x, 3)


def test_frexp_and_ldexp_at_zero():
    jax, jnp = _jax()
    # frexp's mantissa is 0 at 0, x itself nearby up to a power of 2: its slope there is 1, as JAX's
    assert s2s_ad.grad(mantissa)(0.0) == 1.0 == jax.grad(lambda x: jnp.frexp(x)[0])(0.0)
    # ldexp(x, 3) is 8 x everywhere: slope 8 at 0 too (JAX's own ldexp gives 1 there, through frexp)
    assert s2s_ad.grad(scaled_by_eight)(0.0) == 8.0 == numeric_grad(scaled_by_eight, (0.0,), 0)
    assert s2s_ad.jvp(scaled_by_eight, (np.zeros(2),), (np.ones(2),))[1].tolist() == [8.0, 8.0]


# -- scipy.linalg.lu -----------------------------------------------------------------------------

def _lu_functions(linalg, w):
    def factors(a):
        p, l, u = linalg.lu(a)
        return np.sum(w[0] * l ** 2) + np.sum(w[1] * np.sin(u)) + np.sum(p @ a)

    def permuted(a):
        pl, u = linalg.lu(a, permute_l=True)
        return np.sum(w[0] * pl ** 3) + np.sum(w[1] * u)

    return factors, permuted


@pytest.mark.slow
def test_lu_matches_jax_in_every_mode():
    jax, jnp = _jax()
    pytest.importorskip("scipy.linalg")
    jax_linalg = pytest.importorskip("jax.scipy.linalg")
    rng = np.random.default_rng(43)
    for shape in ((3, 3), (5, 3), (3, 5), (4, 4)):
        a = rng.normal(size=shape)
        _, l, u = scipy_linalg.lu(a)
        w = (rng.normal(size=l.shape), rng.normal(size=u.shape))
        factors, permuted = _lu_functions(scipy_linalg, w)

        def j_factors(x):
            p, l, u = jax_linalg.lu(x)
            return jnp.sum(w[0] * l ** 2) + jnp.sum(w[1] * jnp.sin(u)) + jnp.sum(p @ x)

        def j_permuted(x):
            pl, u = jax_linalg.lu(x, permute_l=True)
            return jnp.sum(w[0] * pl ** 3) + jnp.sum(w[1] * u)

        for f, jf in ((factors, j_factors), (permuted, j_permuted)):
            _close(s2s_ad.grad(f)(a), jax.grad(jf)(a))
            _close(s2s_ad.hessian(f)(a), jax.hessian(jf)(a), 100.0)
            t = rng.normal(size=shape)
            _close(s2s_ad.jvp(f, (a,), (t,))[1], jax.jvp(jf, (a,), (t,))[1])


def indices_form(a):
    rows, l, u = scipy_linalg.lu(a, p_indices=True)
    return np.sum(l[rows] ** 2) + np.sum(np.tanh(u))


def test_lu_batched_and_with_indices_matches_differences():
    pytest.importorskip("scipy.linalg")
    rng = np.random.default_rng(44)
    a = rng.normal(size=(2, 4, 3))
    _, l, u = scipy_linalg.lu(a)
    factors, permuted = _lu_functions(scipy_linalg, (rng.normal(size=l.shape), rng.normal(size=u.shape)))
    for f in (factors, permuted):
        assert_gradient_matches(f, (a,))
        assert_hessian_matches_gradient_differences(f, (a,))
    assert_gradient_matches(indices_form, (rng.normal(size=(4, 4)),))


def overwriting_lu(a):
    return np.sum(scipy_linalg.lu(a, overwrite_a=True)[2])


def test_lu_that_may_write_over_its_argument_is_refused():
    pytest.importorskip("scipy.linalg")
    with pytest.raises(s2s_ad.TransformError, match="overwrite_a"):
        s2s_ad.grad(overwriting_lu)(np.eye(3) + 0.5)
