"""Vector forward mode compiled: under ``backend="numba"`` a Jacobian's, a Hessian's and a batched ``jvp``'s
directions go through one run of the tangent code's vector version (``s2s_ad/ad/vector``: every tangent
with the directions on a leading axis), where the code has one.

Oracles: the Python backend's Jacobians and Hessians (checked against differences and JAX across the
suite), central differences, and the one-direction compiled code run once per direction.  Each test
also says whether the vector version ran, so a form that silently stops being chosen fails here.
"""
from __future__ import annotations

import warnings

import numpy as np
import pytest

import s2s_ad
from conftest import optional_import, programs_from_source

numba = optional_import("numba")
pytestmark = [pytest.mark.skipif(numba is None, reason="numba is not installed (pip install 's2s_ad[numba]')"),
              pytest.mark.usefixtures("own_numba_cache")]

from s2s_ad.ad.vector import vector_tangents  # noqa: E402
from s2s_ad.api.gradient import GradientFunction, _tangent_function  # noqa: E402
from s2s_ad.targets.numba.target import NUMBA  # noqa: E402

PROGRAMS = programs_from_source("numba_vector_program_", """
    import numpy as np

    def dense_map(x, w):
        return np.tanh(w @ x) + x ** 2 * np.sum(np.sin(x))

    def recurrent(x, W):
        h = np.zeros(W.shape[0])
        for t in range(x.shape[0]):
            h = np.tanh(W @ h + x[t])
        return h

    def branches(x):
        y = np.zeros(x.shape[0])
        for i in range(x.shape[0]):
            if x[i] > 0.0:
                y[i] = x[i] ** 2
            else:
                y[i] = np.sin(x[i])
        return y * np.sum(x)

    def write_through_view(x):
        a = x * 2.0
        v = a[1:]
        v[0] = v[0] * x[0]
        v *= 3.0
        return a

    def swap_ends(x):
        # a number read from an array, the array then written: the number keeps the old value
        a = x * x
        first = a[0]
        a[0] = a[-1] * 2.0
        a[-1] = first * 3.0
        return a * np.mean(x)

    def rows_of(A):
        out = np.zeros(A.shape[0])
        for i in range(A.shape[0]):
            r = A[i]
            out[i] = np.sum(r * r) + r[0]
        return out

    def where_and_maximum(x):
        return np.where(x > 0.1, x ** 2, -x) + np.maximum(x, 0.3)

    def slices(x):
        r = 2.0 * x + x ** 3
        r[1:] -= x[:-1]
        r[:-1] -= x[1:]
        return r

    def scaled(x, a):
        return np.tanh(a * x) * np.sum(x) + a ** 2

    def energy(x, W):
        return np.sum(np.tanh(W @ x) ** 2) + np.sum(x ** 4) * np.mean(x)

    def rosenbrock(x):
        return np.sum(100.0 * (x[1:] - x[:-1] ** 2) ** 2 + (1.0 - x[:-1]) ** 2)

    def products(x, W):
        A = np.outer(x, x) + W
        return np.trace(A.T @ A) * np.cumsum(x) + np.transpose(A) @ x + (W @ A.T)[0]

    def outer_rows(x, W):
        return np.outer(x, W[0])[1] + np.outer(W[1], x)[2] * np.sum(x)

    def layer(x, W):
        return np.sum(np.tanh(W @ x)) + np.sum(np.sin(x @ W))

    def quartic(x, W):
        y = W @ x
        return np.sum(y ** 4) / 4.0 + np.dot(x, W @ W.T @ x)

    def logsumexp(x, W):
        z = W @ x
        m = np.max(z)
        return m + np.log(np.sum(np.exp(z - m))) + 0.5 * np.sum(x * x)

    def banded(u):
        r = u ** 3 - 2.0 * u
        for k in range(1, 4):
            r[k:] += 0.1 * k * np.sin(u[:-k])
            r[:-k] -= 0.2 * u[k:] ** 2
        return r

    def stencil(u, k):
        n = u.shape[0]
        new = u.copy()
        for i in range(1, n - 1):
            new[i] = u[i] + k * (u[i - 1] - 2.0 * u[i] + u[i + 1])
        return new
""")

RNG = np.random.default_rng(7)
N = 9
W = RNG.normal(size=(N, N)) / 3

JACOBIANS = [
    ("dense_map", (RNG.normal(size=N), W), 0),
    ("recurrent", (RNG.normal(size=N), W), 0),
    ("recurrent", (RNG.normal(size=N), W), 1),  # a matrix's tangent: a product per direction
    ("branches", (RNG.normal(size=N),), 0),
    ("write_through_view", (RNG.normal(size=N),), 0),
    ("swap_ends", (RNG.normal(size=N),), 0),
    ("rows_of", (RNG.normal(size=(N, 3)),), 0),
    ("where_and_maximum", (RNG.normal(size=N),), 0),
    ("slices", (RNG.normal(size=N),), 0),
    ("scaled", (RNG.normal(size=N), 0.7), 1),  # a number's seeds: a vector of directions
    ("products", (RNG.normal(size=N), W), 0),  # outer, trace, cumsum, transposes, a matrix's tangent times one
    ("outer_rows", (RNG.normal(size=N), W), 0),  # a tangent as the column of an outer product, and as its row
]


def _differences(fn, args, wrt, eps=1e-6):
    x = np.asarray(args[wrt], dtype=float)
    columns = []
    for j in range(x.size):
        step = np.zeros(x.size)
        step[j] = eps
        plus, minus = list(args), list(args)
        plus[wrt] = (x.ravel() + step).reshape(x.shape) if x.ndim else float(x) + eps
        minus[wrt] = (x.ravel() - step).reshape(x.shape) if x.ndim else float(x) - eps
        columns.append((np.asarray(fn(*plus)) - np.asarray(fn(*minus))) / (2 * eps))
    out = np.asarray(fn(*args))
    return np.stack(columns, axis=-1).reshape(out.shape + x.shape)


def _vector_ran(tangent_function) -> bool:
    """Whether the tangent code has a vector version and it ran (Numba compiled it, nothing fell back)."""
    return tangent_function.vector is not None and tangent_function.state.get("vector") is not False


def _tangent_code(fn, wrt, args, gradient=False):
    import inspect
    name = list(inspect.signature(fn).parameters)[wrt]
    if gradient:
        fn = GradientFunction(fn, name, with_value=False)
    return _tangent_function(fn, (name,), args, NUMBA)


@pytest.mark.parametrize("name, args, wrt", JACOBIANS, ids=[f"{n}-{w}" for n, _, w in JACOBIANS])
def test_jacobian_runs_the_vector_code_and_matches_the_python_backend_and_differences(name, args, wrt):
    fn = getattr(PROGRAMS, name)
    kept = [np.copy(a) for a in args]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        compiled = s2s_ad.jacobian(fn, wrt=wrt, backend="numba", chunk=6)(*args)
    assert _vector_ran(_tangent_code(fn, wrt, args)), _tangent_code(fn, wrt, args).not_vector
    python = s2s_ad.jacobian(fn, wrt=wrt)(*args)
    np.testing.assert_allclose(compiled, python, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(compiled, _differences(fn, args, wrt), rtol=1e-6, atol=1e-7)
    for before, after in zip(kept, args):
        np.testing.assert_array_equal(before, after)


HESSIANS = [("energy", (RNG.normal(size=N), W), 0), ("rosenbrock", (RNG.normal(size=N),), 0),
            ("layer", (RNG.normal(size=N), W), 0),
            ("layer", (RNG.normal(size=N), W), 1),  # by the matrix: the adjoints of @ as outer products
            ("quartic", (RNG.normal(size=N), W), 0),  # np.dot's adjoints, the tangent as either operand
            ("logsumexp", (RNG.normal(size=N), W), 1)]  # np.max's tangent: np.sum(..., keepdims=False) compiled


@pytest.mark.parametrize("name, args, wrt", HESSIANS, ids=[f"{n}-{w}" for n, _, w in HESSIANS])
def test_hessian_runs_the_vector_code_of_forward_over_reverse(name, args, wrt):
    fn = getattr(PROGRAMS, name)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        compiled = s2s_ad.hessian(fn, wrt=wrt, backend="numba", chunk=6)(*args)
    assert _vector_ran(_tangent_code(fn, wrt, args, gradient=True))
    np.testing.assert_allclose(compiled, s2s_ad.hessian(fn, wrt=wrt)(*args), rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(compiled, _differences(s2s_ad.grad(fn, wrt=wrt), args, wrt, 1e-5), rtol=1e-5, atol=1e-6)


def test_batched_jvp_under_numba_is_one_vector_run_equal_to_jvp_per_direction():
    x, tangents = RNG.normal(size=N), RNG.normal(size=(5, N))
    fn = PROGRAMS.dense_map
    value, swept = s2s_ad.jvp(fn, (x, W), (tangents, None), batched=True, backend="numba")
    assert _vector_ran(_tangent_code(fn, 0, (x, W)))
    assert swept.shape == (5, N)
    for d in range(5):
        one_value, one = s2s_ad.jvp(fn, (x, W), (tangents[d], None), backend="numba")
        np.testing.assert_allclose(swept[d], one, rtol=1e-12, atol=1e-13)
        np.testing.assert_allclose(value, one_value, rtol=1e-15)
    # a number's tangent: a vector of directions, the seeds left as given
    seeds = np.array([1.0, -2.0, 0.5])
    value, swept = s2s_ad.jvp(PROGRAMS.scaled, (x, 0.7), (np.zeros((3, N)), seeds), batched=True, backend="numba")
    np.testing.assert_array_equal(seeds, [1.0, -2.0, 0.5])
    for d in range(3):
        np.testing.assert_allclose(swept[d], s2s_ad.jvp(PROGRAMS.scaled, (x, 0.7), (np.zeros(N), seeds[d]))[1],
                                   rtol=1e-12, atol=1e-13)


def test_a_hessian_vector_product_batched_under_numba_matches_the_python_backend():
    x, tangents = RNG.normal(size=N), RNG.normal(size=(4, N))
    gradient = s2s_ad.grad(PROGRAMS.energy)
    compiled = s2s_ad.jvp(gradient, (x, W), (tangents, None), batched=True, backend="numba")[1]
    python = s2s_ad.jvp(gradient, (x, W), (tangents, None), batched=True)[1]
    np.testing.assert_allclose(compiled, python, rtol=1e-12, atol=1e-12)


def test_loops_of_numbers_keep_one_pass_per_direction_and_say_why():
    args = (RNG.normal(size=N), 0.1)
    tangent = _tangent_code(PROGRAMS.stencil, 0, args)
    assert tangent.vector is None and "one pass per direction" in tangent.not_vector
    compiled = s2s_ad.jacobian(PROGRAMS.stencil, backend="numba")(*args)
    np.testing.assert_allclose(compiled, s2s_ad.jacobian(PROGRAMS.stencil)(*args), rtol=1e-12, atol=1e-13)


def test_hessian_source_shows_the_vector_code():
    x = RNG.normal(size=4)
    text = s2s_ad.hessian(PROGRAMS.rosenbrock, backend="numba").source_for(x)
    assert "def jvp_gradient_rosenbrock(" in text and "def jvp_gradient_rosenbrock_directions(" in text
    assert "directions = np.shape(t_x)[0]" in text


def test_an_operation_with_no_vector_form_is_refused_with_its_name():
    from s2s_ad.core import ir
    t = ir.Function("jvp_f", ["x", "t_x"], [
        ir.Assign("y", ir.Call(np.roll, (ir.Var("x"), ir.Const(1)))),
        ir.Assign("t_y", ir.Call(np.roll, (ir.Var("t_x"), ir.Const(1)))),
        ir.Return(ir.Display("tuple", (ir.Var("y"), ir.Var("t_y")))),
    ])
    from s2s_ad.core.kinds import Array
    vector, why, _ = vector_tangents(t, ["t_x"], {"x": Array(1), "t_x": Array(1)})
    assert vector is None and "roll of a tangent along an axis that is not one constant" in why


def test_a_hessian_vector_product_compiles_one_direction_too():
    """``jvp(grad(f), ..., backend="numba")``: forward mode over the gradient, compiled (it was refused as
    if NumPy's arrays under Numba were another library's)."""
    x, t = RNG.normal(size=N), RNG.normal(size=N)
    gradient = s2s_ad.grad(PROGRAMS.energy)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        compiled = s2s_ad.jvp(gradient, (x, W), (t, None), backend="numba")[1]
    np.testing.assert_allclose(compiled, s2s_ad.hessian(PROGRAMS.energy)(x, W) @ t, rtol=1e-12, atol=1e-12)


def test_a_sparse_jacobian_evaluates_its_colours_in_one_vector_run():
    u = RNG.normal(size=40)
    sparse = s2s_ad.jacobian(PROGRAMS.banded, sparse=True, backend="numba")
    sparse(u)  # (the pattern found and coloured)
    got = sparse(u * 1.1)
    assert int(sparse.colors.max()) + 1 == 7
    assert _tangent_code(PROGRAMS.banded, 0, (u,)).state.get("vector") is True
    np.testing.assert_allclose(got.toarray(), s2s_ad.jacobian(PROGRAMS.banded)(u * 1.1), rtol=1e-12, atol=1e-13)
