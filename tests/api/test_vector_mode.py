"""Vector forward mode (issue 34): ``jvp(..., batched=True)`` pushes p directions through one sweep of the
tangent code (s2s_ad/api/batched.py); ``jacobian`` and ``hessian`` sweep ``chunk`` directions at a time.

Oracles: p separate ``jvp`` calls, central differences, closed forms.  Each batched case also asserts
that the sweep really was batched (``batched_sweep`` answers), and each fallback case that it was not, so
that neither path can pass for the other."""
from __future__ import annotations

import numpy as np
import pytest

import s2s_ad
from s2s_ad.api import matrices
from s2s_ad.api.batched import Batched, NotBatched, batched_sweep
from s2s_ad.targets.target import NUMPY
from s2s_ad.api.gradient import GradientFunction, _tangent_function


def elementwise(x, y):
    return np.sin(x) * y + np.exp(0.1 * x) / (1.0 + y * y) - x ** 3


def reductions(x, y):
    return np.sum(x * x) * y + np.mean(np.cos(x)) - np.sum(x) * np.max(y)


def reduce_axes(a, y):
    return np.sum(np.sin(a) * 2.0, axis=0) * y + np.mean(a * a, axis=1).sum() - np.sum(a, axis=-1, keepdims=True)[0]


def matmul_both_sides(a, y):
    m = a.T @ a
    return m @ np.sin(y) + (y @ a.T) @ a[:, 0] + np.dot(a, y)[1] * y


def indexing_and_writes(x, y):
    out = np.zeros(4)
    for i in range(4):
        out[i] = x[i] * y[i % 3] + x[(i + 1) % 4] ** 2
    out[1:3] = out[1:3] * 2.0 + x[:2]
    return out * x[::-1] + x[np.array([0, 0, 2, 3])]


def loop_and_branch(x, y):
    s = 0.0
    v = x.copy()
    for k in range(3):
        if np.sum(v) > 0.5:
            v = np.tanh(v) * y[k]
        else:
            v = v * v + y[k]
        s = s + np.sum(v)
    return v * s


def shapes(a, y):
    b = np.reshape(a, (3, 4)).T
    return np.where(b > 0.0, b * 2.0, np.sin(b)).reshape(-1)[:5] * y[0] + np.transpose(b)[0, 1]


def rolled_and_joined(a, y):
    m = a.reshape(3, 4)
    r = np.roll(m, 1, axis=0) + np.roll(m, -1, axis=1) - 2.0 * m + np.roll(a, 2).reshape(3, 4)
    wide = np.concatenate([m, m * m], axis=-1).ravel()[:5]
    return np.concatenate([np.ravel(r * m), y * a[:3], np.ones(2), wide])


def stacked(a, y):
    m = a.reshape(3, 4)
    both = np.stack([m[0] * y[0], np.cos(m[1])], axis=-1)  # (4, 2)
    return np.stack([both.ravel()[:3], y * m[2, :3]]).ravel()


def scalar_arguments(x, y):
    return np.sin(x) * y[0] + x * x * np.sum(y)


def no_batched_form(x, y):  # a running sum by np.convolve, which has no batched form: one sweep per direction
    return np.convolve(x * y[0], np.ones(4))[:4] + x


RNG = np.random.default_rng(34)
V4, V3 = RNG.normal(size=4), RNG.normal(size=3)
A43 = RNG.normal(size=(4, 3))
A12 = RNG.normal(size=12)
BATCHED = [
    (elementwise, (V3.copy(), V3[::-1].copy())),
    (reductions, (V4, V3)),
    (reduce_axes, (A43, V3)),
    (matmul_both_sides, (A43, V3)),
    (indexing_and_writes, (V4, V3)),
    (loop_and_branch, (V4 * 0.3, V3)),
    (loop_and_branch, (V4 * 0.3 - 2.0, V3)),  # the other branch
    (shapes, (A12, V3)),
    (rolled_and_joined, (A12, V3)),
    (stacked, (A12, V3)),
    (scalar_arguments, (0.7, V3)),
]


def _tangents(args, count, which):
    return tuple(RNG.normal(size=(count,) + np.shape(a)) if k in which else None for k, a in enumerate(args))


def _central(fn, args, tangents, eps=1e-6):
    def at(s):
        return np.asarray(fn(*(a if t is None else a + s * t for a, t in zip(args, tangents))), dtype=float)
    return (at(eps) - at(-eps)) / (2 * eps)


@pytest.mark.parametrize("fn, args", BATCHED, ids=lambda v: getattr(v, "__name__", ""))
@pytest.mark.parametrize("which", [(0,), (0, 1)])
def test_batched_jvp_equals_separate_calls_and_differences(fn, args, which):
    count = 5
    tangents = _tangents(args, count, which)
    value, batched = s2s_ad.jvp(fn, args, tangents, batched=True)
    np.testing.assert_allclose(value, fn(*args), rtol=1e-13, atol=1e-13)
    assert batched.shape == (count,) + np.shape(value)
    for d in range(count):
        one = [None if t is None else t[d] for t in tangents]
        np.testing.assert_allclose(batched[d], s2s_ad.jvp(fn, args, one)[1], rtol=1e-12, atol=1e-12)
        np.testing.assert_allclose(batched[d], _central(fn, args, one), rtol=1e-5, atol=1e-6)
    # it was one sweep: the tangent code took every direction at once
    names = tuple(["x", "a"][fn.__code__.co_varnames[0] == "a"] if k == 0 else "y" for k in which)
    code = _tangent_function(fn, names, args)
    swept = batched_sweep(code, args, tuple(t for t in tangents if t is not None), count)
    assert swept is not None
    np.testing.assert_allclose(swept[1], batched, rtol=0, atol=0)


def test_the_fallback_runs_one_sweep_per_direction_with_the_same_numbers(monkeypatch):
    monkeypatch.setattr(matrices, "FEWEST", 2)
    args = (V4, V3)
    tangents = _tangents(args, 4, (0, 1))
    code = _tangent_function(no_batched_form, ("x", "y"), args)
    assert batched_sweep(code, args, tuple(tangents), 4) is None  # np.convolve: refused, not guessed
    _, batched = s2s_ad.jvp(no_batched_form, args, tangents, batched=True)
    for d in range(4):
        one = [t[d] for t in tangents]
        np.testing.assert_allclose(batched[d], s2s_ad.jvp(no_batched_form, args, one)[1], rtol=1e-13)
        np.testing.assert_allclose(batched[d], _central(no_batched_form, args, one), rtol=1e-5, atol=1e-6)
    J = s2s_ad.jacobian(no_batched_form, wrt=(0, 1), chunk=3)(*args)
    np.testing.assert_allclose(J[0], np.tril(np.ones((4, 4))) * V3[0] + np.eye(4), rtol=1e-13)
    np.testing.assert_allclose(J[1][:, 0], np.cumsum(V4), rtol=1e-13)


def test_operations_without_an_exact_batched_form_are_refused():
    t = Batched(np.ones((2, 3, 4, 5)))
    with pytest.raises(NotBatched):
        t[np.array([0, 1]), :, np.array([1, 2])]  # advanced indices apart: NumPy would move the axes
    with pytest.raises(NotBatched):
        float(Batched(np.ones(2)))
    with pytest.raises(NotBatched):
        np.asarray(t)
    with pytest.raises(TypeError):
        np.convolve(t, np.ones(2))
    with pytest.raises(NotBatched):
        t @ t
    # the rank of a lower-rank tangent is lifted, never aligned with the direction axis
    s = Batched(np.arange(3.0))  # three directions of a scalar tangent
    np.testing.assert_array_equal((s * np.ones(3)).data, np.arange(3.0)[:, None] * np.ones((3, 3)))


def test_batched_jvp_refuses_tangents_without_a_direction_axis():
    with pytest.raises(ValueError, match="directions"):
        s2s_ad.jvp(elementwise, (V3, V3), (V3, None), batched=True)
    with pytest.raises(ValueError, match="one number of directions"):
        s2s_ad.jvp(elementwise, (V3, V3), (np.ones((2, 3)), np.ones((3, 3))), batched=True)
    with pytest.raises(ValueError, match=r"must be shaped \(directions,\) \+ \(3,\)"):  # (a container's leaf)
        s2s_ad.jvp(lambda d: d["a"] * 2.0, ({"a": V3},), ({"a": np.ones(3)},), batched=True)
    with pytest.raises(ValueError, match="containers"):  # (neither an array, a number nor a container)
        s2s_ad.jvp(lambda s: 2.0, ("text",), ("text",), batched=True)


def _reference_jacobian(fn, args, k):
    columns = []
    for index in np.ndindex(np.shape(args[k])):
        unit = np.zeros(np.shape(args[k]))
        unit[index] = 1.0
        columns.append(s2s_ad.jvp(fn, args, tuple(unit if j == k else None for j in range(len(args))))[1])
    return np.stack(columns, axis=-1).reshape(np.shape(fn(*args)) + np.shape(args[k]))


@pytest.mark.parametrize("chunk", [1, 2, 5, 64])
@pytest.mark.parametrize("fn, args", [(elementwise, (V3, V3)), (matmul_both_sides, (A43, V3)),
                                      (indexing_and_writes, (V4, V3)), (loop_and_branch, (V4 * 0.3, V3))],
                         ids=lambda v: getattr(v, "__name__", ""))
def test_jacobian_in_chunks_equals_one_pass_per_element(fn, args, chunk, monkeypatch):
    monkeypatch.setattr(matrices, "FEWEST", 2)  # (small chunks batched too: the path under test)
    J = s2s_ad.jacobian(fn, wrt=(0, 1), chunk=chunk)(*args)
    for k in range(2):
        if np.size(fn(*args)) >= np.size(args[0]) + np.size(args[1]):  # (forward mode: the chunked path)
            np.testing.assert_allclose(J[k], _reference_jacobian(fn, args, k), rtol=1e-12, atol=1e-12)
        for index in np.ndindex(np.shape(args[k])):
            unit = np.zeros(np.shape(args[k]))
            unit[index] = 1.0
            tangents = tuple(unit if j == k else None for j in range(2))
            np.testing.assert_allclose(J[k][(...,) + index], _central(fn, args, tangents), rtol=1e-5, atol=1e-6)


def rosenbrock(x):
    return np.sum(100.0 * (x[1:] - x[:-1] ** 2) ** 2 + (1.0 - x[:-1]) ** 2)


def quartic(x, w):
    return np.sum(np.sin(x) * w) ** 2 + x[0] * np.sum(x ** 4)


def _rosenbrock_hessian(x):
    n = len(x)
    H = np.zeros((n, n))
    for i in range(n - 1):
        H[i, i] += 1200.0 * x[i] ** 2 - 400.0 * x[i + 1] + 2.0
        H[i + 1, i + 1] += 200.0
        H[i, i + 1] = H[i + 1, i] = -400.0 * x[i]
    return H


@pytest.mark.parametrize("chunk", [1, 3, 64])
def test_hessian_in_chunks_equals_closed_form_and_one_pass_per_element(chunk, monkeypatch):
    monkeypatch.setattr(matrices, "FEWEST", 2)
    x = RNG.normal(size=7)
    np.testing.assert_allclose(s2s_ad.hessian(rosenbrock, chunk=chunk)(x), _rosenbrock_hessian(x), rtol=1e-12,
                               atol=1e-9)
    w = RNG.normal(size=7)
    H = s2s_ad.hessian(quartic, wrt=(0, 1), chunk=chunk)(x, w)
    H1 = s2s_ad.hessian(quartic, wrt=(0, 1), chunk=1)(x, w)
    g = s2s_ad.grad(quartic, wrt=(0, 1))
    for i in range(2):
        for j in range(2):
            np.testing.assert_allclose(H[i][j], H1[i][j], rtol=1e-12, atol=1e-12)
            for index in range(7):  # column index of block (i, j): differences of the gradient by i
                unit = np.zeros(7)
                unit[index] = 1.0
                shifted = [(x, w), (x, w)]
                shifted = [tuple(a + s * unit if k == j else a for k, a in enumerate((x, w))) for s in (1e-6, -1e-6)]
                column = (g(*shifted[0])[i] - g(*shifted[1])[i]) / 2e-6
                np.testing.assert_allclose(H[i][j][:, index], column, rtol=1e-5, atol=1e-5)


def stencil_energy(u):  # reverse sweep reads d_out[i], then zeroes it: the read must be a copy
    out = np.zeros(len(u))
    for i in range(1, len(u) - 1):
        out[i] = u[i - 1] - 2.0 * u[i] + u[i + 1]
    return np.sum(out * out * u)


def test_element_reads_are_copies_and_scalar_updates_rebind(monkeypatch):
    monkeypatch.setattr(matrices, "FEWEST", 2)
    u = RNG.normal(size=6)
    np.testing.assert_allclose(s2s_ad.hessian(stencil_energy)(u), s2s_ad.hessian(stencil_energy, chunk=1)(u),
                               rtol=1e-12, atol=1e-12)
    t = Batched(np.arange(6.0).reshape(2, 3))
    first = t[0]
    t[0] = 0.0
    np.testing.assert_array_equal(first.data, [0.0, 3.0])
    alias = first
    first += 1.0
    np.testing.assert_array_equal(alias.data, [0.0, 3.0])  # a scalar's tangent is a number: += rebinds
    row = t[0:2]
    row += 1.0
    np.testing.assert_array_equal(t.data, [[1.0, 2.0, 2.0], [1.0, 5.0, 5.0]])  # an array's: in place, as NumPy


def masked_gain(v, g):  # (tests/corpora/round3_user_programs.py)
    c = v[v > 0.0]
    c *= g
    d = v[[3, 1, 2]]
    d[0] = d[0] + g
    b = v * 1.0
    b[::-1] = b
    return np.sum(c ** 2) + np.sum(d * b[:3])


def masked_and_fancy_writes(v, g):  # writes by a mask and by a list of indices (advanced: not views)
    c = v[v > 0.0]
    c *= g
    d = v[[3, 1, 2]]
    d[0] = d[0] + g
    b = v * 1.0
    b[::-1] = b
    e = np.zeros(4)
    e[v > 0.0] = v[v > 0.0] ** 2
    e[[0, 2]] = e[[0, 2]] * v[1]
    return np.sum(c ** 2) + np.sum(d * b[:3]) + np.sum(e * v)


def test_writes_by_masks_and_index_lists(monkeypatch):
    monkeypatch.setattr(matrices, "FEWEST", 2)
    args = (np.array([0.3, -0.5, 0.7, 1.1]), 0.8)
    H = s2s_ad.hessian(masked_and_fancy_writes)(*args)
    np.testing.assert_allclose(H, s2s_ad.hessian(masked_and_fancy_writes, chunk=1)(*args), rtol=1e-12, atol=1e-12)
    g = s2s_ad.grad(masked_and_fancy_writes)
    for i in range(4):
        step = np.zeros(4)
        step[i] = 1e-6
        column = (g(args[0] + step, args[1]) - g(args[0] - step, args[1])) / 2e-6
        np.testing.assert_allclose(H[:, i], column, rtol=1e-5, atol=1e-5)
    # the writes into c, d, b are swept batched (e's rescaling by a list, stored_part, runs per direction)
    code = _tangent_function(GradientFunction(masked_gain, "v", with_value=False), ("v",), args)
    swept = batched_sweep(code, args, (np.eye(4),), 4)
    assert swept is not None
    np.testing.assert_allclose(swept[1], s2s_ad.hessian(masked_gain, chunk=1)(*args), rtol=1e-12, atol=1e-12)
    tangents = (RNG.normal(size=(3, 4)), RNG.normal(size=3))
    _, batched = s2s_ad.jvp(masked_and_fancy_writes, args, tangents, batched=True)
    for d in range(3):
        np.testing.assert_allclose(batched[d], s2s_ad.jvp(masked_and_fancy_writes, args,
                                                          (tangents[0][d], tangents[1][d]))[1], rtol=1e-12)


def matrix_products(x, w):  # the adjoints of a @ b with vectors and matrices on either side
    m = w @ w.T
    return np.sum(np.tanh(w @ x) ** 2) + (x @ w) @ x + np.dot(x, np.dot(m, x)) * np.sum(x @ m) + np.sum(np.sin(m))


@pytest.mark.parametrize("by", [0, 1])
def test_hessians_through_matrix_products_are_batched_and_right(by, monkeypatch):
    monkeypatch.setattr(matrices, "FEWEST", 2)
    x, w = RNG.normal(size=4), RNG.normal(size=(4, 4)) * 0.5
    args = (x, w)
    H = s2s_ad.hessian(matrix_products, wrt=by)(*args)
    np.testing.assert_allclose(H, s2s_ad.hessian(matrix_products, wrt=by, chunk=1)(*args), rtol=1e-12, atol=1e-12)
    g = s2s_ad.grad(matrix_products, wrt=by)
    for index in np.ndindex(args[by].shape):
        step = np.zeros(args[by].shape)
        step[index] = 1e-6
        shifted = [tuple(a + sign * step if k == by else a for k, a in enumerate(args)) for sign in (1, -1)]
        column = (g(*shifted[0]) - g(*shifted[1])) / 2e-6
        np.testing.assert_allclose(H[(...,) + index], column, rtol=1e-5, atol=1e-5)
    name = ("x", "w")[by]
    code = _tangent_function(GradientFunction(matrix_products, name, with_value=False), (name,), args)
    seeds = np.eye(args[by].size).reshape((-1,) + args[by].shape)
    assert batched_sweep(code, args, (seeds,), len(seeds)) is not None


def test_the_hessian_sweep_is_batched():
    x = RNG.normal(size=5)
    code = _tangent_function(GradientFunction(rosenbrock, "x", with_value=False), ("x",), (x,))
    swept = batched_sweep(code, (x,), (np.eye(5),), 5)
    assert swept is not None
    np.testing.assert_allclose(swept[1], _rosenbrock_hessian(x), rtol=1e-12, atol=1e-9)


def test_few_directions_run_one_pass_each(monkeypatch):
    """A sweep with its tangents wrapped sets up more than a small pass costs: where the code has no vector
    version, fewer than matrices.FEWEST directions run one pass each."""
    monkeypatch.setattr(type(NUMPY), "vector_sweep", lambda *a: None)
    calls = []
    real = matrices.batched_sweep
    monkeypatch.setattr(matrices, "batched_sweep", lambda *a: calls.append(a[-1]) or real(*a))
    x = RNG.normal(size=matrices.FEWEST + 3)
    s2s_ad.jacobian(elementwise)(x, x)
    assert calls == [x.size]
    calls.clear()
    s2s_ad.jacobian(elementwise, chunk=matrices.FEWEST + 1)(x, x)
    assert calls == [matrices.FEWEST + 1]  # the remainder of 2 runs per direction


def test_the_vector_version_takes_every_chunk_few_directions_too(monkeypatch):
    """The tangent code's vector version (``ad/vector``) sets nothing up: a chunk of any size is one run
    of it, and the wrapped sweep is not asked; the Jacobian equals one pass per element and differences."""
    runs, real = [], type(NUMPY).vector_sweep
    monkeypatch.setattr(type(NUMPY), "vector_sweep", lambda *a: runs.append(len(a[3][0])) or real(*a))
    monkeypatch.setattr(matrices, "batched_sweep", lambda *a: pytest.fail("the wrapped sweep ran"))
    x, y = RNG.normal(size=matrices.FEWEST + 3), RNG.normal(size=matrices.FEWEST + 3)
    J = s2s_ad.jacobian(reductions, chunk=matrices.FEWEST + 1)(x, y)
    assert runs == [matrices.FEWEST + 1, 2]
    monkeypatch.undo()
    np.testing.assert_allclose(J, s2s_ad.jacobian(reductions, chunk=1)(x, y), rtol=1e-13, atol=1e-14)
    for i in range(x.size):
        e = np.eye(x.size)[i] * 1e-6
        np.testing.assert_allclose(J[:, i] if J.ndim == 2 else J[i], (reductions(x + e, y) - reductions(x - e, y)) / 2e-6,
                                   rtol=1e-6, atol=1e-7)


def test_chunk_must_be_a_positive_int():
    with pytest.raises(ValueError, match="chunk"):
        s2s_ad.jacobian(elementwise, chunk=0)
    with pytest.raises(ValueError, match="chunk"):
        s2s_ad.hessian(rosenbrock, chunk=2.5)


def test_chunk_none_is_the_default_as_the_contract_writes_it():
    x = np.linspace(0.1, 0.9, 8)
    np.testing.assert_array_equal(s2s_ad.jacobian(elementwise, chunk=None)(x, 0.5), s2s_ad.jacobian(elementwise)(x, 0.5))
    np.testing.assert_array_equal(s2s_ad.hessian(rosenbrock, chunk=None)(x), s2s_ad.hessian(rosenbrock)(x))


def test_numba_batched_jvp_and_chunked_matrices_agree_with_python(monkeypatch):
    monkeypatch.setattr(matrices, "FEWEST", 2)
    pytest.importorskip("numba")
    args = (A43, V3)
    tangents = _tangents(args, 3, (0, 1))
    _, compiled = s2s_ad.jvp(matmul_both_sides, args, tangents, batched=True, backend="numba")
    _, python = s2s_ad.jvp(matmul_both_sides, args, tangents, batched=True)
    np.testing.assert_allclose(compiled, python, rtol=1e-12, atol=1e-12)
    J = s2s_ad.jacobian(indexing_and_writes, wrt=(0, 1), chunk=3, backend="numba")(V4, V3)
    J1 = s2s_ad.jacobian(indexing_and_writes, wrt=(0, 1), chunk=1)(V4, V3)
    for a, b in zip(J, J1):
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-12)
    x = RNG.normal(size=6)
    np.testing.assert_allclose(s2s_ad.hessian(rosenbrock, chunk=4, backend="numba")(x), _rosenbrock_hessian(x),
                               rtol=1e-12, atol=1e-9)


def repeated_reads(x):  # the adjoint of a read by an index list that repeats adds each part (np.add.at)
    return np.sum(x[np.array([0, 0, 2])] ** 3 * x[1]) + np.sum(x[[1, 1]] * x[0]) \
        + np.sum(x.reshape(2, 2)[np.array([0, 1, 1]), 1] ** 2)


def test_hessians_through_repeated_index_reads(monkeypatch):
    monkeypatch.setattr(matrices, "FEWEST", 2)
    x = np.array([0.3, -0.7, 1.1, 0.5])
    H = s2s_ad.hessian(repeated_reads)(x)
    np.testing.assert_allclose(H, s2s_ad.hessian(repeated_reads, chunk=1)(x), rtol=1e-12, atol=1e-12)
    g = s2s_ad.grad(repeated_reads)
    for i, e in enumerate(np.eye(4)):
        np.testing.assert_allclose(H[:, i], (g(x + 1e-6 * e) - g(x - 1e-6 * e)) / 2e-6, rtol=1e-5, atol=1e-6)
    code = _tangent_function(GradientFunction(repeated_reads, "x", with_value=False), ("x",), (x,))
    assert batched_sweep(code, (x,), (np.eye(4),), 4) is not None


def test_batched_jvp_of_a_gradient_gives_hessian_vector_products():
    x = RNG.normal(size=5)
    directions = RNG.normal(size=(3, 5))
    g = s2s_ad.grad(rosenbrock)
    value, products = s2s_ad.jvp(g, (x,), (directions,), batched=True)
    np.testing.assert_allclose(value, g(x), rtol=1e-13)
    np.testing.assert_allclose(products, directions @ _rosenbrock_hessian(x).T, rtol=1e-11, atol=1e-9)
