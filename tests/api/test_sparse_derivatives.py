"""Sparse Jacobians and Hessians (api/sparse.py, api/colouring.py): patterns, colours and values.

Oracles: the dense ``jacobian`` and ``hessian``, central differences, and closed forms (the
tridiagonal residual, the chained Rosenbrock Hessian).  The patterns are checked to be supersets of
the nonzeros of the dense Jacobian at several random points, and equal to the known structure."""
from __future__ import annotations

import re
import subprocess
import sys
import warnings
from pathlib import Path

import numpy as np
import pytest

import s2s_ad
from s2s_ad.api import colouring
from conftest import optional_import

sparse = pytest.importorskip("scipy.sparse")
sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # the repository's top: benchmarks/ (not installed)
from benchmarks.jacobians import brusselator, rosenbrock, tridiagonal  # noqa: E402  (the benchmark's problems; it needs SciPy)
numba = optional_import("numba")
BACKENDS = ["python", pytest.param("numba", marks=pytest.mark.skipif(
    numba is None, reason="numba is not installed (pip install 's2s_ad[numba]')"))]


@pytest.fixture(autouse=True)
def _quiet_fallbacks():
    """Numba's fallbacks to Python are allowed here: the numbers are what is checked."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", s2s_ad.CompileFallbackWarning)
        yield


def tridiagonal_loop(u):
    n = u.shape[0]
    r = np.zeros(n)
    r[0] = 2.0 * u[0] - u[1] + u[0] ** 3
    for i in range(1, n - 1):
        r[i] = -u[i - 1] + 2.0 * u[i] - u[i + 1]
        r[i] += u[i] ** 3
    r[n - 1] = 2.0 * u[n - 1] - u[n - 2] + u[n - 1] ** 3
    return r


def branch(x):
    if x[0] > 0.0:
        y = x * x[1]
    else:
        y = x * 2.0
    return y


def where_map(x):
    return np.where(x > 0.0, x ** 2, np.sin(x)) + 0.5 * x


def dense_block(x):
    a = np.arange(12.0).reshape(4, 3) + 1.0
    return np.concatenate([a @ x[:3], np.tanh(x[3:])])


def reduction(x):
    y = np.exp(x)
    y[0] = np.sum(x ** 2)
    return y


def shapes(x):
    m = x.reshape(2, 3)
    s = np.stack([m[0] * m[1], m[1] - m[0] ** 2])
    return (s * m[:, :1]).ravel()


def where_mask(x):
    return np.where(x > 0.0, x * x[0], x ** 3)


def few_outputs(x):
    return np.array([np.sum(x ** 2), x[0] * x[1]])


def central_differences(f, x, *rest, h=1e-6):
    columns = []
    for j in range(x.size):
        e = np.zeros_like(x)
        e[j] = h
        columns.append((f(x + e, *rest) - f(x - e, *rest)) / (2 * h))
    return np.stack(columns, axis=-1)


def tridiagonal_pattern(n):
    return sparse.diags([np.ones(n - 1), np.ones(n), np.ones(n - 1)], [-1, 0, 1]).astype(bool).toarray()


RNG = np.random.default_rng(3)


@pytest.mark.parametrize("f", [tridiagonal_loop, tridiagonal])
@pytest.mark.parametrize("backend", BACKENDS)
def test_tridiagonal_pattern_values_and_three_colours(f, backend):
    x = RNG.normal(size=50)
    pattern = s2s_ad.jacobian_sparsity(f, backend=backend)(x)
    assert isinstance(pattern, sparse.csr_matrix) and pattern.dtype == bool and pattern.shape == (50, 50)
    assert (pattern.toarray() == tridiagonal_pattern(50)).all()
    jac = s2s_ad.jacobian(f, sparse=True, backend=backend)
    got = jac(x)
    assert isinstance(got, sparse.csr_matrix) and jac.colors.max() + 1 <= 3 and jac.mode == "forward"
    np.testing.assert_allclose(got.toarray(), s2s_ad.jacobian(f, backend=backend)(x), rtol=0, atol=1e-12)
    np.testing.assert_allclose(got.toarray(), central_differences(f, x), rtol=1e-6, atol=1e-6)
    assert (jac.sparsity != pattern).nnz == 0


def test_tridiagonal_of_2000_unknowns_closed_form():
    x = RNG.normal(size=2000)
    jac = s2s_ad.jacobian(tridiagonal, sparse=True)
    got = jac(x)
    assert jac.colors.max() + 1 <= 3
    closed = sparse.diags([-np.ones(1999), 2.0 + 3.0 * x ** 2, -np.ones(1999)], [-1, 0, 1]).toarray()
    np.testing.assert_allclose(got.toarray(), closed, rtol=1e-13, atol=1e-13)
    colors = jac.colors
    y = RNG.normal(size=2000)
    np.testing.assert_allclose(jac(y).toarray(), sparse.diags([-np.ones(1999), 2.0 + 3.0 * y ** 2, -np.ones(1999)],
                                                              [-1, 0, 1]).toarray(), rtol=1e-13, atol=1e-13)
    assert jac.colors is colors  # found once for these argument kinds


@pytest.mark.parametrize("backend", BACKENDS)
def test_brusselator_8x8_equals_dense_and_differences(backend):
    n = 8
    y = RNG.uniform(size=2 * n * n)
    jac = s2s_ad.jacobian(brusselator, sparse=True, backend=backend)
    got = jac(y, n).toarray()
    np.testing.assert_allclose(got, s2s_ad.jacobian(brusselator)(y, n), rtol=0, atol=1e-12)
    np.testing.assert_allclose(got, central_differences(brusselator, y, n), rtol=1e-6, atol=1e-5)
    assert jac.sparsity.nnz == 2 * n * n * 6  # five-point stencil of its own species, the other at the cell
    assert colouring.direct_recovery(jac.sparsity, jac.colors)


def test_brusselator_32x32_takes_at_most_12_colours():
    n = 32
    y = RNG.uniform(size=2 * n * n)
    jac = s2s_ad.jacobian(brusselator, sparse=True)
    got = jac(y, n)
    assert jac.colors.max() + 1 <= 12
    product = RNG.normal(size=2 * n * n)  # one column of the dense Jacobian would cost a jvp: compare products
    np.testing.assert_allclose(got @ product, s2s_ad.jvp(brusselator, (y, n), (product, None))[1], rtol=1e-12,
                               atol=1e-12)


def rosenbrock_hessian(x):
    n = x.size
    diagonal = np.zeros(n)
    diagonal[:-1] += 1200.0 * x[:-1] ** 2 - 400.0 * x[1:] + 2.0
    diagonal[1:] += 200.0
    return sparse.diags([-400.0 * x[:-1], diagonal, -400.0 * x[:-1]], [-1, 0, 1]).toarray()


@pytest.mark.parametrize("backend", BACKENDS)
def test_rosenbrock_sparse_hessian_of_50(backend):
    x = RNG.normal(size=50)
    hess = s2s_ad.hessian(rosenbrock, sparse=True, backend=backend)
    got = hess(x)
    assert isinstance(got, sparse.csr_matrix) and hess.colors.max() + 1 <= 3
    np.testing.assert_allclose(got.toarray(), s2s_ad.hessian(rosenbrock)(x), rtol=0, atol=1e-9)
    np.testing.assert_allclose(got.toarray(), rosenbrock_hessian(x), rtol=1e-12, atol=1e-9)
    pattern = s2s_ad.hessian_sparsity(rosenbrock)(x)
    assert (pattern.toarray() == tridiagonal_pattern(50)).all() and (pattern != pattern.T).nnz == 0


def test_rosenbrock_sparse_hessian_of_2000():
    x = RNG.normal(size=2000)
    hess = s2s_ad.hessian(rosenbrock, sparse=True)
    got = hess(x)
    assert hess.colors.max() + 1 <= 3
    np.testing.assert_allclose(got.toarray(), rosenbrock_hessian(x), rtol=1e-12, atol=1e-8)


CASES = [(branch, 6), (where_map, 7), (where_mask, 6), (dense_block, 6), (reduction, 5), (shapes, 6), (few_outputs, 9),
         (tridiagonal_loop, 9)]


@pytest.mark.parametrize("f,n", CASES, ids=[f.__name__ for f, _ in CASES])
@pytest.mark.parametrize("backend", BACKENDS)
def test_small_functions_equal_dense_and_differences(f, n, backend):
    for _ in range(3):
        x = RNG.normal(size=n)
        jac = s2s_ad.jacobian(f, sparse=True, backend=backend)
        got = jac(x).toarray()
        dense = s2s_ad.jacobian(f)(x)
        np.testing.assert_allclose(got, dense, rtol=0, atol=1e-12)
        np.testing.assert_allclose(got, central_differences(f, x), rtol=1e-6, atol=1e-6)
        structure = jac.sparsity if jac.mode == "forward" else jac.sparsity.T.tocsr()
        assert colouring.direct_recovery(structure, jac.colors)


@pytest.mark.parametrize("f,n", CASES, ids=[f.__name__ for f, _ in CASES])
def test_pattern_holds_every_nonzero_at_random_points(f, n):
    for _ in range(5):
        x = RNG.normal(size=n)
        pattern = s2s_ad.jacobian_sparsity(f)(x).toarray()
        nonzero = s2s_ad.jacobian(f)(x) != 0
        assert not (nonzero & ~pattern).any()


def test_known_patterns_of_the_constructs():
    x = np.array([0.5, -1.0, 2.0, 0.3, -0.2, 1.5])
    assert (s2s_ad.jacobian_sparsity(where_map)(x).toarray() == np.eye(6, dtype=bool)).all()
    block = s2s_ad.jacobian_sparsity(dense_block)(x).toarray()
    expected = np.zeros((7, 6), dtype=bool)
    expected[:4, :3] = True
    expected[4:, 3:] = np.eye(3, dtype=bool)
    assert (block == expected).all()
    dense_row = s2s_ad.jacobian_sparsity(reduction)(x[:5]).toarray()
    expected = np.eye(5, dtype=bool)
    expected[0] = True
    assert (dense_row == expected).all()
    # the branch: the pattern of the path these arguments take
    assert (s2s_ad.jacobian_sparsity(branch)(x).toarray() == (np.eye(6, dtype=bool) | (np.arange(6) == 1))).all()
    assert (s2s_ad.jacobian_sparsity(branch)(-x).toarray() == np.eye(6, dtype=bool)).all()


def test_a_changed_path_finds_the_pattern_again():
    jac = s2s_ad.jacobian(branch, sparse=True)
    x = -np.abs(RNG.normal(size=6))  # the diagonal path first
    np.testing.assert_allclose(jac(x).toarray(), 2.0 * np.eye(6), rtol=0, atol=0)
    y = np.abs(RNG.normal(size=6))  # now every output reads x[1] too
    np.testing.assert_allclose(jac(y).toarray(), s2s_ad.jacobian(branch)(y), rtol=0, atol=1e-14)
    assert jac.sparsity.nnz == 11


@pytest.mark.parametrize("f,n", CASES, ids=[f.__name__ for f, _ in CASES])
def test_one_object_over_points_that_take_other_paths(f, n):
    """The pattern kept from the first call is checked at each later one (a random direction): where a
    path adds nonzeros (branch, where_mask), it is found again, never used to give a wrong number."""
    jac = s2s_ad.jacobian(f, sparse=True)
    for _ in range(8):
        x = RNG.normal(size=n)
        np.testing.assert_allclose(jac(x).toarray(), s2s_ad.jacobian(f)(x), rtol=0, atol=1e-12)


def test_rows_coloured_where_fewer_reverse_mode():
    x = RNG.normal(size=40)
    jac = s2s_ad.jacobian(few_outputs, sparse=True)
    got = jac(x)
    assert jac.mode == "reverse" and jac.colors.max() + 1 == 2
    np.testing.assert_allclose(got.toarray(), s2s_ad.jacobian(few_outputs)(x), rtol=0, atol=1e-12)


def test_colourings_recover_directly():
    pattern = sparse.random(60, 40, density=0.08, random_state=4, format="csr").astype(bool)
    columns = colouring.column_colors(pattern)
    assert colouring.direct_recovery(pattern, columns)
    assert colouring.direct_recovery(pattern.T.tocsr(), colouring.row_colors(pattern))
    assert not colouring.direct_recovery(pattern, np.zeros(40, dtype=int))


def test_one_parameter_at_a_time_and_scipy_named_where_missing(monkeypatch):
    with pytest.raises(TypeError, match="one parameter at a time"):
        s2s_ad.jacobian(brusselator, wrt=(0, 1), sparse=True)
    monkeypatch.setitem(sys.modules, "scipy.sparse", None)
    with pytest.raises(ImportError, match="need SciPy"):
        s2s_ad.jacobian(tridiagonal, sparse=True)(np.ones(4))


def test_dense_calls_unchanged():
    x = RNG.normal(size=5)
    assert isinstance(s2s_ad.jacobian(tridiagonal)(x), np.ndarray)
    assert isinstance(s2s_ad.hessian(rosenbrock)(x), np.ndarray)


ROOT = Path(__file__).resolve().parents[2]


def _run(*command):
    done = subprocess.run([sys.executable, *command], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_the_benchmark_runs_and_matches_the_dense_matrices():
    printed = _run("benchmarks/jacobians.py", "--quick")
    rows = re.findall(r"^(tridiagonal residual|Brusselator 6x6|chained Rosenbrock Hessian)\s+\d+\s+(\d+)\s+\w+"
                      r"\s+[\d.]+\s+[\d.]+\s+[\d.]+\s+[\d.]+\s+(\S+)$", printed, re.MULTILINE)
    assert len(rows) == 3 and all(float(diff) <= 1e-12 for _, _, diff in rows)
    assert int(rows[0][1]) <= 3 and int(rows[1][1]) <= 12 and int(rows[2][1]) <= 3
    # vector forward mode against one pass per element and separate jvp calls: the same matrices
    dense = re.findall(r"^(dense Jacobian 40->40|dense Hessian of 40)\s+(40 separate jvp calls|one pass per element)"
                       r"\s+[\d.]+\s+[\d.]+\s+[\d.]+\s+(\S+)$", printed, re.MULTILINE)
    assert len(dense) == 3 and all(float(diff) <= 1e-12 for _, _, diff in dense)


def test_pickled_by_reference():
    import pickle
    x = RNG.normal(size=10)
    for made in (s2s_ad.jacobian(tridiagonal, sparse=True), s2s_ad.hessian(rosenbrock, sparse=True),
                 s2s_ad.jacobian_sparsity(tridiagonal)):
        made(x)
        again = pickle.loads(pickle.dumps(made))
        assert type(again) is type(made) and (again(x) != made(x)).nnz == 0


def coupled(x, a, k):
    return np.sum(a * x ** 4) + k * np.sum(x[1:] * x[:-1])


def test_a_zero_coefficient_keeps_its_entries_in_the_pattern():
    """The pattern is structural: a coefficient that is zero at these arguments (k) keeps its entries
    (NaN times 0 is NaN), so it stays right when k changes."""
    x, a = np.linspace(0.1, 1.0, 7), np.arange(7.0)
    assert (s2s_ad.hessian_sparsity(coupled)(x, a, 0.0).toarray() == tridiagonal_pattern(7)).all()
    hess = s2s_ad.hessian(coupled, sparse=True)
    np.testing.assert_allclose(hess(x, a, 0.0).toarray(), np.diag(12.0 * a * x ** 2), rtol=1e-14, atol=0)
    expected = np.diag(12.0 * a * x ** 2) + np.diag(0.5 * np.ones(6), 1) + np.diag(0.5 * np.ones(6), -1)
    np.testing.assert_allclose(hess(x, a, 0.5).toarray(), expected, rtol=1e-14, atol=0)


def arrow(x):
    return x[0] * np.sum(x ** 2) + np.sum(x ** 4)


@pytest.mark.parametrize("backend", BACKENDS)
def test_an_arrow_hessian_takes_two_colours_by_star_colouring(backend):
    x = RNG.normal(size=30)
    hess = s2s_ad.hessian(arrow, sparse=True, backend=backend)
    got = hess(x).toarray()
    assert hess.colouring == "star" and hess.colors.max() + 1 == 2  # distance-2: one colour per column
    expected = np.diag(2.0 * x[0] + 12.0 * x ** 2)
    expected[0, :] += 2.0 * x
    expected[:, 0] += 2.0 * x
    expected[0, 0] = 2.0 * x[0] + 4.0 * x[0] + 12.0 * x[0] ** 2  # d2/dx0^2 of x0*x0^2 = 6 x0, of x0*rest: 0
    np.testing.assert_allclose(got, s2s_ad.hessian(arrow)(x), rtol=0, atol=1e-12)
    np.testing.assert_allclose(got, expected, rtol=1e-12, atol=1e-12)


def test_star_colourings_of_random_symmetric_patterns_recover_every_entry():
    for seed in range(20):
        half = sparse.random(40, 40, density=0.06, random_state=seed, format="csr").astype(bool)
        pattern = (half + half.T + sparse.eye(40, dtype=bool)).astype(bool).tocsr()
        pattern.sort_indices()
        star = colouring.star_colors(pattern)
        assert colouring.symmetric_reads(pattern, star) is not None
        rows, cols = pattern.nonzero()
        off = rows != cols
        assert (star[rows[off]] != star[cols[off]]).all()  # a distance-1 colouring


def switching(x):
    if x[0] > 0.0:
        return np.sum(x ** 4)
    return np.sum(x[1:] * x[:-1]) + np.sum(x ** 2)


def test_a_hessian_object_over_points_that_take_other_paths():
    hess = s2s_ad.hessian(switching, sparse=True)
    for sign in (1.0, -1.0, 1.0, -1.0):
        x = RNG.normal(size=8)
        x[0] = sign * abs(x[0])
        np.testing.assert_allclose(hess(x).toarray(), s2s_ad.hessian(switching)(x), rtol=0, atol=1e-12)
    assert hess.sparsity.nnz == 8 + 2 * 7  # the diagonal path first, then the tridiagonal one joined


def test_source_of_a_sparse_matrix_says_what_to_pass():
    with pytest.raises(TypeError, match="mode='forward'"):
        s2s_ad.source(s2s_ad.jacobian(tridiagonal, sparse=True))
