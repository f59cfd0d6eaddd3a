"""The spread adjoints of reductions folded into the products that read them, and the copies of fresh
adjoints left out (s2s_ad/passes/fills.py): the same numbers, of the same dtypes and shapes, as the code that
fills and copies (bit for bit), and right against central differences."""
import types

import numpy as np
import pytest

import s2s_ad
from s2s_ad.passes import fills


def sum_of_squares(x):
    return np.sum(x ** 2)


def scaled_mean(x, c):
    return c * np.mean((x - 1.0) ** 2)


def softmax_cross_entropy(logits, onehot):
    shifted = logits - np.max(logits, axis=1, keepdims=True)
    log_norm = np.log(np.sum(np.exp(shifted), axis=1, keepdims=True))
    return -np.sum(onehot * (shifted - log_norm)) / logits.shape[0]


def row_weighted(x, r):
    return np.sum(x * r) + np.sum(np.sin(x) * x)


def heat_loop(heat, c):
    n = heat.shape[0]
    temp = np.zeros(n + 1)
    for t in range(n):
        temp[t + 1] = 0.9 * temp[t] + heat[t]
    return np.sum(temp ** 2) + c * np.sum(heat ** 2)


def shared_pair(x, y):
    return np.sum(x ** 2) + np.sum(x * y)


def written_after_read(x):
    buf = np.zeros(x.shape[0])
    buf[:] = x * x
    s = np.sum(buf ** 2)
    buf[0] = 5.0 * x[0]
    return s + np.sum(buf * x)


def _copy(fn):
    """A new function object of the same code: the cache of generated code is kept per function object."""
    return types.FunctionType(fn.__code__, fn.__globals__, fn.__name__, fn.__defaults__, fn.__closure__)


def _gradients(fn, args, wrt, monkeypatch):
    """The gradient with the folds, without them, and both sources."""
    folded = s2s_ad.grad(_copy(fn), wrt=wrt)
    with monkeypatch.context() as patch:
        patch.setattr(fills, "ZERO_D_TYPED", False)
        plain = s2s_ad.grad(_copy(fn), wrt=wrt)
        plain_result, plain_source = plain(*args), plain.source_for(*args)
    return folded(*args), plain_result, folded.source_for(*args), plain_source


def _differences(fn, args, position, h=1e-6):
    x = np.array(args[position], dtype=float)
    grad = np.zeros_like(x)
    for i in np.ndindex(x.shape):
        up, down = x.copy(), x.copy()
        up[i] += h
        down[i] -= h
        grad[i] = (fn(*args[:position], up, *args[position + 1:]) - fn(*args[:position], down, *args[position + 1:])) / (2 * h)
    return grad


RNG = np.random.default_rng(7)


def _r(*shape, dtype=float):
    return RNG.normal(size=shape).astype(dtype)


CASES = [
    ("sum of squares, odd length", sum_of_squares, (_r(7),), 0),
    ("sum of squares, a column", sum_of_squares, (_r(3, 1),), 0),
    ("sum of squares, rank 3", sum_of_squares, (_r(2, 3, 4),), 0),
    ("sum of squares, float32", sum_of_squares, (_r(5, dtype=np.float32),), 0),
    ("sum of squares, empty", sum_of_squares, (np.zeros(0),), 0),
    ("mean, a row", scaled_mean, (_r(1, 5), 3.0), 0),
    ("mean, float32 with a float64 factor", scaled_mean, (_r(4, 3, dtype=np.float32), np.float64(0.5)), 0),
    ("mean, a float32 factor", scaled_mean, (_r(4, 3), np.float32(0.25)), 0),
    ("keepdims reductions", softmax_cross_entropy, (_r(6, 5) * 3, np.eye(5)[RNG.integers(0, 5, 6)]), 0),
    ("keepdims reductions, float32", softmax_cross_entropy,
     (_r(3, 4, dtype=np.float32), np.eye(4, dtype=np.float32)[[0, 3, 1]]), 0),
    ("keepdims reductions, integer labels", softmax_cross_entropy, (_r(3, 4), np.eye(4, dtype=int)[[2, 2, 1]]), 0),
    ("a broadcast row", row_weighted, (_r(4, 3), _r(1, 3)), 0),
    ("a broadcast row, by the row", row_weighted, (_r(4, 3), _r(1, 3)), 1),
    ("an integer row", row_weighted, (_r(4, 3), np.arange(3).reshape(1, 3)), 0),
    ("a loop adding into the adjoints", heat_loop, (_r(9), 0.3), 0),
    ("a loop, float32", heat_loop, (_r(6, dtype=np.float32), 0.3), 0),
    ("a written array", written_after_read, (_r(5),), 0),
]


@pytest.mark.parametrize("name, fn, args, position", CASES, ids=[c[0] for c in CASES])
def test_folds_give_the_same_numbers_and_dtypes(name, fn, args, position, monkeypatch):
    wrt = fn.__code__.co_varnames[position]
    folded, plain, folded_source, plain_source = _gradients(fn, args, wrt, monkeypatch)
    assert fills.ZERO_D_TYPED == (np.lib.NumpyVersion(np.__version__) >= "2.0.0")
    if fills.ZERO_D_TYPED:
        assert folded_source.count("np.full(") < plain_source.count("np.full("), folded_source
    assert type(folded) is type(plain) and np.shape(folded) == np.shape(plain)
    assert np.result_type(folded) == np.result_type(plain) == np.result_type(args[position])
    np.testing.assert_array_equal(folded, plain)  # bit for bit: the same operations on the same values
    if np.result_type(args[position]) == np.float64:
        np.testing.assert_allclose(folded, _differences(fn, args, position), rtol=1e-6, atol=1e-7)


def test_a_loop_adds_into_the_fresh_adjoints_without_copying_them(monkeypatch):
    heat = _r(8)
    folded, plain, source, plain_source = _gradients(heat_loop, (heat, 0.3), "heat", monkeypatch)
    if fills.ZERO_D_TYPED:
        assert "writable_copy" not in source and "writable_copy" in plain_source, source
    np.testing.assert_array_equal(folded, plain)
    df = s2s_ad.grad(heat_loop, wrt="heat")
    first, second = df(heat, 0.3), df(heat, 0.3)
    assert first is not second and not np.shares_memory(first, second) and not np.shares_memory(first, heat)
    first[:] = 0.0  # the caller's own array: the next call is not changed by it
    np.testing.assert_array_equal(df(heat, 0.3), second)


def test_one_array_passed_for_both_arguments(monkeypatch):
    x = _r(5)
    folded, plain, _, _ = _gradients(shared_pair, (x, x), ("x", "y"), monkeypatch)
    for a, b in zip(folded, plain):
        np.testing.assert_array_equal(a, b)
    np.testing.assert_allclose(folded[0], 3 * x, rtol=1e-12)  # d/dx (x**2 + x*y) at y = x
    np.testing.assert_allclose(folded[1], x, rtol=1e-12)
    assert not np.shares_memory(folded[0], folded[1])


def test_the_benchmarks_fill_and_copy_nothing():
    """The adjoints of np.sum and np.mean in the array workloads fill no array of their input's size."""
    import importlib.util
    from pathlib import Path
    if not fills.ZERO_D_TYPED:
        pytest.skip("NumPy 1 types a 0-d array by its value: the fills stay there")
    spec = importlib.util.spec_from_file_location(
        "benchmark_workloads", Path(__file__).resolve().parents[2] / "benchmarks" / "workloads.py")
    workloads = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(workloads)
    heat = RNG.uniform(0.0, 10.0, 20)
    sources = [s2s_ad.grad(workloads.building, wrt="heat").source_for(heat, heat + 1.0, 15.0, 0.05, 0.5, 20.0, 0.01),
               s2s_ad.grad(workloads.mlp, wrt=(0, 1)).source_for(_r(5, 6), _r(6, 3), _r(7, 5), _r(7, 3)),
               s2s_ad.grad(workloads.logsumexp_ce).source_for(_r(6, 5), np.eye(5)[[0, 1, 2, 3, 4, 0]]),
               s2s_ad.grad(workloads.deblur).source_for(_r(7, 6), _r(7, 6))]
    for source in sources:
        assert "np.full(" not in source and "writable_copy(" not in source, source


def test_second_derivatives_read_the_folded_code_back():
    """A Hessian differentiates the gradient's code again: np.asarray(g) is differentiated like the fill."""
    x = _r(4)
    np.testing.assert_allclose(s2s_ad.hessian(_copy(sum_of_squares))(x), 2.0 * np.eye(4), rtol=1e-12)
    logits, onehot = _r(3, 4), np.eye(4)[[0, 3, 1]]
    hessian = s2s_ad.hessian(_copy(softmax_cross_entropy), wrt="logits")(logits, onehot)
    gradient = s2s_ad.grad(_copy(softmax_cross_entropy), wrt="logits")
    h = 1e-6
    for i in np.ndindex(logits.shape):
        up, down = logits.copy(), logits.copy()
        up[i] += h
        down[i] -= h
        column = (gradient(up, onehot) - gradient(down, onehot)) / (2 * h)
        np.testing.assert_allclose(hessian[(...,) + i], column, rtol=1e-5, atol=1e-7)


def row_sums_of_squares(x):
    return np.sum(x ** 2, axis=1)


def test_a_cotangent_spread_along_an_axis(monkeypatch):
    """vjp of a reduction along an axis: the spread adjoint is the cotangent with the axis put back."""
    x, cotangent = _r(3, 4), _r(3)
    (folded_vjp,) = s2s_ad.vjp(_copy(row_sums_of_squares), x)[1](cotangent)
    with monkeypatch.context() as patch:
        patch.setattr(fills, "ZERO_D_TYPED", False)
        (plain_vjp,) = s2s_ad.vjp(_copy(row_sums_of_squares), x)[1](cotangent)
    np.testing.assert_array_equal(folded_vjp, plain_vjp)
    np.testing.assert_allclose(folded_vjp, 2.0 * x * cotangent[:, None], rtol=1e-12)
    source = s2s_ad.grad(_copy(lambda_sum_of_rows), wrt="x").source_for(x)
    if fills.ZERO_D_TYPED:  # (the row sums' spread folds; np.arange's length is not known to be theirs)
        assert "np.asarray(np.expand_dims(" in source and source.count("np.full(") == 1, source
    np.testing.assert_allclose(s2s_ad.grad(lambda_sum_of_rows, wrt="x")(x), 2.0 * x * np.arange(1.0, 4.0)[:, None],
                               rtol=1e-12)


def lambda_sum_of_rows(x):
    return np.sum(np.sum(x ** 2, axis=1) * np.arange(1.0, 4.0))
