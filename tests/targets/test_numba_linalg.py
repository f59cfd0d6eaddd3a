"""np.linalg's factorizations and determinants under ``backend="numba"``: their rules' helpers compiled for
a float64 matrix (``targets/numba/rules/numpy_linalg_factors.py``), np.linalg.cholesky's ``upper=``,
np.linalg.eigh's ``UPLO``, np.expand_dims of a tuple of axes.

Oracles: the Python backend's gradient (checked against JAX and differences across the suite) and central
differences; every function must compile (a ``CompileFallbackWarning`` fails the test), so a helper whose
compiled version stops being used fails here.
"""
from __future__ import annotations

import warnings

import numpy as np
import pytest

import s2s_ad
from conftest import numeric_grad, optional_import, programs_from_source

numba = optional_import("numba")
pytestmark = [pytest.mark.skipif(numba is None, reason="numba is not installed (pip install 's2s_ad[numba]')"),
              pytest.mark.usefixtures("own_numba_cache")]

from s2s_ad import CompileFallbackWarning  # noqa: E402


PROGRAMS = None


def _programs():
    global PROGRAMS
    if PROGRAMS is None:
        PROGRAMS = programs_from_source("numba_linalg_program_", """
            import numpy as np

            def squared_det(a):
                return np.linalg.det(a) ** 2

            def log_det(a):
                sign, logdet = np.linalg.slogdet(a)
                return 2.0 * logdet

            def cholesky_energy(a):
                lower = np.linalg.cholesky(a)
                return np.sum(lower ** 2) + np.sum(np.diag(lower))

            def upper_cholesky(a):
                return np.sum(np.sin(np.linalg.cholesky(a, upper=True)))

            def gaussian_nll(a, x):
                lower = np.linalg.cholesky(a)
                z = np.linalg.solve(lower, x)
                return 0.5 * np.sum(z ** 2) + np.sum(np.log(np.diag(lower)))

            def eigen_energy(a):
                w, v = np.linalg.eigh(a)
                return np.sum(w ** 2) + np.sum(v[:, 0] ** 2 * w)

            def cubed_eigenvalues(a):
                return np.sum(np.linalg.eigvalsh(a) ** 3)

            def norms(a):
                return np.linalg.norm(a) + np.linalg.norm(a[0]) + np.linalg.norm(a[1], 3) + np.linalg.norm(a[2], np.inf)

            def triangular_part(a):
                q, r = np.linalg.qr(a)
                return np.sum(r ** 2) + np.sum(np.abs(q[:, 0]))

            def pseudo_inverse(a):
                return np.sum(np.linalg.pinv(a) ** 2)

            def expanded(a):
                return np.sum(np.expand_dims(a[0], (0, 2)) * np.expand_dims(np.sum(a), (-2, -1)))
        """)
    return PROGRAMS


def _matrices():
    rng = np.random.default_rng(7)
    a = rng.normal(size=(4, 4))
    symmetric = a @ a.T + 4.0 * np.eye(4)
    return a, symmetric, rng.normal(size=4)


CASES = ["squared_det", "log_det", "cholesky_energy", "upper_cholesky", "gaussian_nll", "eigen_energy",
         "cubed_eigenvalues", "norms", "triangular_part", "pseudo_inverse", "expanded"]


@pytest.mark.parametrize("name", CASES)
def test_each_compiles_and_gives_the_python_backends_gradient_and_differences(name):
    fn = getattr(_programs(), name)
    a, symmetric, x = _matrices()
    args = (symmetric, x) if name == "gaussian_nll" else \
        (a,) if name in ("squared_det", "triangular_part", "pseudo_inverse", "expanded", "norms") else (symmetric,)
    with warnings.catch_warnings():
        warnings.simplefilter("error", CompileFallbackWarning)
        compiled = s2s_ad.grad(fn, backend="numba")(*args)
    python = s2s_ad.grad(fn)(*args)
    np.testing.assert_allclose(compiled, python, rtol=1e-10, atol=1e-12)
    if name in ("cholesky_energy", "upper_cholesky", "gaussian_nll", "eigen_energy", "cubed_eigenvalues"):
        # the rules read one triangle: differences move the matrix symmetrically, the gradient's two
        # mirror elements (one of them zero) summed
        moved = lambda e: fn(*((args[0] + e * (np.eye(4)[i][:, None] * np.eye(4)[j][None, :] +
                                               np.eye(4)[j][:, None] * np.eye(4)[i][None, :]) / (1 + (i == j)),) + args[1:]))
        for i, j in ((0, 0), (2, 1), (3, 0)):
            difference = (moved(1e-6) - moved(-1e-6)) / 2e-6
            assert compiled[i, j] + (compiled[j, i] if i != j else 0.0) == pytest.approx(difference, rel=1e-5, abs=1e-7)
    else:
        np.testing.assert_allclose(compiled, numeric_grad(fn, args, 0), rtol=1e-5, atol=1e-7)


def test_a_singular_matrix_gives_the_python_backends_cofactors_and_log_det_derivative():
    singular = np.array([[1.0, 2.0, 3.0], [2.0, 4.0, 6.0], [0.5, -1.0, 2.0]])
    for name in ("squared_det", "log_det"):
        fn = getattr(_programs(), name)
        with warnings.catch_warnings():
            warnings.simplefilter("error", CompileFallbackWarning)
            warnings.simplefilter("ignore", RuntimeWarning)  # (1 / 0 in log|det|'s inverse, as Python's)
            compiled = s2s_ad.grad(fn, backend="numba")(singular)
            python = s2s_ad.grad(fn)(singular)
        np.testing.assert_allclose(compiled, python, atol=1e-12, equal_nan=True)


def test_the_upper_triangle_of_eigh_and_a_stack_of_matrices_run_as_python_saying_so():
    module = programs_from_source("numba_linalg_python_", """
        import numpy as np

        def upper_eigenvalues(a):
            return np.sum(np.linalg.eigvalsh(a, UPLO="U") ** 2)

        def stacked_determinants(a):
            return np.sum(np.linalg.det(a) ** 2)
    """)
    _, symmetric, _ = _matrices()
    stack = np.stack([symmetric, symmetric + np.eye(4)])
    for fn, arg in ((module.upper_eigenvalues, symmetric), (module.stacked_determinants, stack)):
        with pytest.warns(CompileFallbackWarning):
            compiled = s2s_ad.grad(fn, backend="numba")(arg)
        np.testing.assert_allclose(compiled, s2s_ad.grad(fn)(arg), rtol=1e-12)
