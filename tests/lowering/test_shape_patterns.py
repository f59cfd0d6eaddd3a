"""Code specialised for the pattern of the arguments' lengths (kinds.py, ``array2:a,b``).

Equal symbols are equal lengths on every run the code is used for: the reverse sweep then reduces
a broadcast contribution with ``np.sum`` over the axes it knows, or not at all, instead of asking
``runtime.unbroadcast`` at run time.  Every test checks the numbers against central finite
differences (and JAX where installed), including calls whose lengths are 1, coincide, or change
between calls of the same gradient function.
"""
import numpy as np
import pytest

import s2s_ad
from s2s_ad.core import kinds
import shape_pattern_functions as sp
from conftest import assert_gradient_matches, function_from_file, numeric_grad

RNG = np.random.default_rng(7)


def _r(*shape):
    return RNG.uniform(0.3, 0.9, size=shape)


CASES = [
    (sp.bias_layer, lambda: (_r(5, 3), _r(3, 4), _r(4)), (0, 1, 2)),
    (sp.bias_layer, lambda: (_r(4, 4), _r(4, 4), _r(4)), (0, 1, 2)),  # every length the same
    (sp.bias_layer, lambda: (_r(1, 3), _r(3, 1), _r(1)), (0, 1, 2)),  # lengths of 1
    (sp.bias_layer, lambda: (_r(5, 3), _r(3, 4), _r(1, 4)), (0, 1, 2)),
    (sp.column_and_row, lambda: (_r(3, 1), _r(1, 4)), (0, 1)),
    (sp.column_and_row, lambda: (_r(3, 1), _r(3, 4)), (0, 1)),
    (sp.column_and_row, lambda: (_r(3, 4), _r(4)), (0, 1)),
    (sp.centred, lambda: (_r(4, 3),), (0,)),
    (sp.centred, lambda: (_r(1, 3),), (0,)),
    (sp.softmax_rows, lambda: (_r(4, 5), _r(4, 5)), (0, 1)),
    (sp.softmax_rows, lambda: (_r(4, 5), _r(5)), (0, 1)),  # one target for every row
    (sp.softmax_rows, lambda: (_r(2, 3, 4), _r(3, 1)), (0, 1)),
    (sp.norm_by_rows, lambda: (_r(3, 4),), (0,)),
    (sp.batched_products, lambda: (_r(2, 3, 4), _r(4, 5)), (0, 1)),
    (sp.batched_products, lambda: (_r(2, 3, 4), _r(1, 4, 3)), (0, 1)),
    (sp.batched_products, lambda: (_r(1, 3, 4), _r(2, 4, 3)), (0, 1)),
    (sp.vector_matrix, lambda: (_r(3), _r(3, 4), _r(4)), (0, 1, 2)),
    (sp.transposed_sum, lambda: (_r(3, 4), _r(4, 3)), (0, 1)),
    (sp.transposed_sum, lambda: (_r(3, 4), _r(4, 1)), (0, 1)),
    (sp.transposed_sum, lambda: (_r(3, 4), _r(3)), (0, 1)),
    (sp.first_row_scaled, lambda: (_r(2, 4), _r(3, 4)), (0, 1)),
    (sp.first_row_scaled, lambda: (_r(2, 4), _r(3, 1)), (0, 1)),
    (sp.grows_in_a_loop, lambda: (_r(2, 3), _r(3)), (0, 1)),
    (sp.grows_in_a_loop, lambda: (_r(3, 3), _r(3, 1)), (0, 1)),
    (sp.square_coincidence, lambda: (_r(3, 3), _r(3)), (0, 1)),
    (sp.square_coincidence, lambda: (_r(3, 3), _r(3, 1)), (0, 1)),
    (sp.mean_over_axes, lambda: (_r(2, 3, 4), _r(3, 4)), (0, 1)),
    (sp.mean_over_axes, lambda: (_r(2, 3, 4), _r(2, 1, 4)), (0, 1)),
    (sp.filled_by_rows, lambda: (_r(3, 4), _r(4)), (0, 1)),
    (sp.filled_by_rows, lambda: (_r(3, 4), _r(1)), (0, 1)),
    (sp.filled_by_rows, lambda: (_r(3, 1), _r(1)), (0, 1)),
    (sp.column_from_len, lambda: (_r(3, 2), _r(3, 4)), (0, 1)),
    (sp.column_from_len, lambda: (_r(3, 2), _r(3, 1)), (0, 1)),
    (sp.column_from_len, lambda: (_r(1, 2), _r(1, 4)), (0, 1)),
    (sp.smoothed, lambda: (_r(4, 5),), (0,)),
    (sp.smoothed, lambda: (_r(4, 4),), (0,)),
    (sp.smoothed, lambda: (_r(1, 5),), (0,)),
    (sp.zeros_like_shape, lambda: (_r(3, 4), _r(3)), (0, 1)),
    (sp.zeros_like_shape, lambda: (_r(3, 1), _r(3)), (0, 1)),
    (sp.steps_into_preallocated, lambda: (_r(6), _r(6)), (0, 1)),
    (sp.steps_into_preallocated, lambda: (_r(1), _r(1)), (0, 1)),
    (sp.steps_into_preallocated, lambda: (_r(2), _r(2)), (0, 1)),
    (sp.steps_into_preallocated, lambda: (_r(5), _r(1)), (0, 1)),  # y broadcast over the path
    (sp.one_longer, lambda: (_r(4),), (0,)),
    (sp.one_longer, lambda: (_r(1),), (0,)),
    (sp.shorter_then_back, lambda: (_r(3), _r(1)), (0, 1)),  # k = 4 against one element
    (sp.shorter_then_back, lambda: (_r(1), _r(2)), (0, 1)),  # k = 2 against y of two
]


@pytest.mark.parametrize("fn, make, wrt", CASES, ids=[f"{c[0].__name__}-{i}" for i, c in enumerate(CASES)])
def test_gradient_by_shape_pattern(fn, make, wrt):
    assert_gradient_matches(fn, make(), wrt=wrt, rtol=1e-5)


@pytest.mark.parametrize("flag", [1.0, -1.0])
def test_branches_of_different_shapes(flag):
    args = (_r(3), _r(2, 3), flag)
    assert_gradient_matches(sp.branch_shapes, args, wrt=(0, 1), rtol=1e-5)


def test_one_gradient_function_over_calls_of_many_lengths():
    """The same gradient function, called with lengths that keep the pattern, change it (a
    length becomes 1, two lengths coincide) and change it back: every answer right."""
    g = s2s_ad.grad(sp.bias_layer, wrt=(0, 1, 2))
    for shapes in [((5, 3), (3, 4), (4,)), ((6, 2), (2, 7), (7,)), ((5, 3), (3, 1), (1,)),
                   ((3, 3), (3, 3), (3,)), ((5, 3), (3, 4), (1, 4)), ((2, 5), (5, 4), (4,))]:
        args = tuple(_r(*s) for s in shapes)
        got = g(*args)
        for i in range(3):
            np.testing.assert_allclose(got[i], numeric_grad(sp.bias_layer, args, i), rtol=1e-5, atol=1e-8)


def test_forward_mode_and_hessian_follow_the_pattern():
    x, w, b = _r(4, 3), _r(3, 2), _r(2)
    direction = (_r(4, 3), _r(3, 2), _r(2))
    _, tangent = s2s_ad.jvp(sp.bias_layer, (x, w, b), direction)
    gradients = s2s_ad.grad(sp.bias_layer, wrt=(0, 1, 2))(x, w, b)
    assert np.isclose(tangent, sum(np.sum(g * d) for g, d in zip(gradients, direction)), rtol=1e-9)
    h = s2s_ad.hessian(sp.column_and_row)(_r(3, 1), _r(1, 2))
    eps, col, row = 1e-5, _r(3, 1), _r(1, 2)
    h = s2s_ad.hessian(sp.column_and_row)(col, row)
    g = s2s_ad.grad(sp.column_and_row)
    for i in range(3):
        step = np.zeros((3, 1))
        step[i, 0] = eps
        column = (g(col + step, row) - g(col - step, row)) / (2 * eps)
        np.testing.assert_allclose(h[:, :, i, 0], column, rtol=1e-5, atol=1e-8)


def test_vjp_of_a_broadcast_result():
    def f(x, b):
        return np.tanh(x + b)
    x, b = _r(3, 4), _r(4)
    out, pullback = s2s_ad.vjp(f, x, b)
    cotangent = _r(3, 4)
    for _ in range(2):
        dx, db = pullback(cotangent)
        np.testing.assert_allclose(dx, cotangent * (1 - out ** 2), rtol=1e-12)
        np.testing.assert_allclose(db, np.sum(cotangent * (1 - out ** 2), axis=0), rtol=1e-12)


def test_an_integer_cotangent_gives_float_adjoints():
    def f(x):
        return np.sum(x, axis=0)
    _, pullback = s2s_ad.vjp(f, _r(2, 3))
    (dx,) = pullback(np.array([1, 2, 3]))
    assert dx.dtype == np.float64
    np.testing.assert_array_equal(dx, [[1.0, 2.0, 3.0], [1.0, 2.0, 3.0]])


def test_np_full_carries_the_fill_values_derivative():
    def f(x, row):
        return np.sum(np.full(3, x) * np.arange(3.0)) + np.sum(np.full((2, 3), row) ** 2)
    assert_gradient_matches(f, (1.5, _r(3)), wrt=(0, 1))

    def g(x, a):
        return np.sum(np.full_like(a, x) * a) + np.sum(np.full_like(np.arange(3), x))  # integers: no derivative
    a = _r(2, 3)
    assert np.isclose(s2s_ad.grad(g)(0.7, a), np.sum(a), rtol=1e-12)


def test_the_benchmarks_call_no_broadcasting_helper():
    """Issue 14: specialised for their arguments, mlp and logsumexp_ce call no runtime helper."""
    import importlib.util
    from pathlib import Path
    spec = importlib.util.spec_from_file_location(
        "benchmark_workloads", Path(__file__).resolve().parents[2] / "benchmarks" / "workloads.py")
    workloads = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(workloads)
    w1, w2, x, y = _r(20, 30), _r(30, 5), _r(64, 20), _r(64, 5)
    logits, onehot = _r(64, 10), np.eye(10)[RNG.integers(0, 10, 64)]
    sources = [s2s_ad.grad(workloads.mlp, wrt=(0, 1)).source_for(w1, w2, x, y),
               s2s_ad.grad(workloads.logsumexp_ce).source_for(logits, onehot)]
    helpers = [name for name in dir(s2s_ad.core.runtime) if callable(getattr(s2s_ad.core.runtime, name))]
    helpers += sorted(s2s_ad.rules.registry.helper_names())  # those of the template modules
    for source in sources:
        body = source.split("def ", 1)[1]
        called = [h for h in helpers if f"{h}(" in body and f"np.{h}(" not in body]
        assert not called, (called, source)


def test_lengths_read_from_shapes_name_the_arrays_made_from_them():
    """n, m = x.shape; np.zeros((n, m)) has x's dims, so a broadcast against x needs no run-time check;
    a helper's result has the dims its argument gives it."""
    x, w = _r(3, 4), _r(4)
    source = s2s_ad.grad(sp.filled_by_rows, wrt=(0, 1)).source_for(x, w)
    assert "unbroadcast(" not in source, source
    source = s2s_ad.grad(sp.smoothed).source_for(_r(4, 5))
    assert "unbroadcast(" not in source.split("def d_smoothed", 1)[1].split("\n\n")[0], source


def test_lengths_shifted_by_constants_and_back_name_the_arrays_made_from_them():
    """n = len(x) - 1, then np.zeros(n + 1): x's length again, so the adjoint of path - y needs no
    run-time unbroadcast; a length shifted and not back (n + 1 of n = len(x)) claims nothing."""
    x, y = _r(6), _r(6)
    source = s2s_ad.grad(sp.steps_into_preallocated, wrt=(0, 1)).source_for(x, y)
    assert "unbroadcast(" not in source, source
    source = s2s_ad.grad(sp.shorter_then_back, wrt=(0, 1)).source_for(_r(3), _r(1))
    assert "unbroadcast(" in source, source  # k = n + 1 against y: only the run time can tell


def test_dims_through_operations():
    """The dims algebra, against NumPy's own shapes for sample lengths."""
    lengths = {"a": 5, "b": 3, "c": 4, 1: 1}

    def shape(dims):
        return tuple(lengths[d] for d in dims)

    for x, y in [(("a", "b"), ("b",)), (("a", 1), (1, "c")), ((1,), ("a", "b")), (("a", "b"), ("a", "b")),
                 (("c", 1, "b"), ("a", "b"))]:
        assert shape(kinds.broadcast_dims(x, y)) == np.broadcast_shapes(shape(x), shape(y))
    assert kinds.broadcast_dims(("a", None), (None, "b")) == ("a", "b")  # the unknown one is 1 or the same
    assert kinds.broadcast_dims((None,), (1,)) == (None,)
    assert kinds.broadcast_dims(("a",), ("b",)) == (None,)  # NumPy raises: nothing is claimed
    for dims, axis, keep in [(("a", "b", "c"), 1, True), (("a", "b", "c"), (0, -1), False),
                             (("a", "b", "c"), None, True), (("a", "b"), -1, False)]:
        want = np.sum(np.zeros(shape(dims)), axis=axis, keepdims=keep).shape
        assert shape(kinds.reduced_dims(dims, axis, keep)) == want
    assert kinds.reduced_dims(("a", "b"), 2, False) is None  # out of range: NumPy raises
    for x, y in [(("a", "b"), ("b", "c")), (("b",), ("b", "c")), (("a", "b"), ("b",)), (("b",), ("b",)),
                 (("c", "a", "b"), ("b", "c")), ((1, "a", "b"), ("c", "b", "a"))]:
        assert shape(kinds.matmul_dims(x, y)) == np.matmul(np.zeros(shape(x)), np.zeros(shape(y))).shape


@pytest.mark.slow
def test_against_jax():
    jax = pytest.importorskip("jax")
    jax.config.update("jax_enable_x64", True)
    jnp = jax.numpy

    def softmax_rows(z, target):
        shifted = z - jnp.max(z, axis=-1, keepdims=True)
        p = jnp.exp(shifted) / jnp.sum(jnp.exp(shifted), axis=-1, keepdims=True)
        return -jnp.sum(target * jnp.log(p))

    def bias_layer(x, w, b):
        return jnp.sum(jnp.tanh(x @ w + b) ** 2)

    for ours, theirs, args in [(sp.softmax_rows, softmax_rows, (_r(2, 3, 4), _r(3, 1))),
                               (sp.bias_layer, bias_layer, (_r(5, 3), _r(3, 1), _r(1)))]:
        wrt = tuple(range(len(args)))
        got = s2s_ad.grad(ours, wrt=wrt)(*args)
        want = jax.grad(theirs, argnums=wrt)(*args)
        for g, w in zip(got, want):
            np.testing.assert_allclose(g, np.asarray(w), rtol=1e-10)


# -- random broadcasting programs over random shapes ---------------------------------------


def _broadcast_shapes(rng: np.random.Generator) -> list:
    """Three shapes that broadcast together: a common full shape of rank 1 to 3 with lengths 1 to 3,
    each operand a suffix of it with some lengths replaced by 1."""
    full = tuple(int(n) for n in rng.integers(1, 4, size=rng.integers(1, 4)))
    shapes = []
    for _ in range(3):
        rank = int(rng.integers(0, len(full) + 1))
        shapes.append(tuple(1 if rng.random() < 0.3 else n for n in full[len(full) - rank:]))
    return shapes


def _program(rng: np.random.Generator) -> str:
    ops = ["+", "-", "*", "/"]
    pick = lambda options: options[int(rng.integers(len(options)))]  # noqa: E731
    inner = f"(a {pick(ops)} b)"
    if rng.random() < 0.5:
        inner = f"np.{pick(['sin', 'exp', 'tanh'])}{inner}"
    inner = f"({inner} {pick(ops)} c)"
    if rng.random() < 0.5:
        inner = f"({inner} - np.mean({inner}, axis=-1, keepdims=True))"
    if rng.random() < 0.4:
        inner = f"np.sum({inner} ** 2, axis=0, keepdims={pick(['True', 'False'])})"
    return f"import numpy as np\n\n\ndef f(a, b, c):\n    z = {inner}\n    return np.sum(z * z)\n"


@pytest.mark.parametrize("seed", range(40))
def test_random_broadcasts_against_finite_differences(seed, tmp_path):
    rng = np.random.default_rng(seed)
    source = _program(rng)
    f = function_from_file(tmp_path, f"broadcast_{seed}", source)
    for _ in range(2):  # two shape patterns through the same function
        args = tuple(rng.uniform(0.5, 1.5, size=s) if s else float(rng.uniform(0.5, 1.5))
                     for s in _broadcast_shapes(rng))
        try:
            f(*args)
        except ValueError:  # np.mean over an axis of a 0-d value, or shapes that do not broadcast
            continue
        got = s2s_ad.grad(f, wrt=(0, 1, 2))(*args)
        for i in range(3):
            want = numeric_grad(f, args, i)
            np.testing.assert_allclose(got[i], want, rtol=1e-5, atol=1e-7, err_msg=f"{source}\n{args}")
            assert np.shape(got[i]) == np.shape(args[i])


@pytest.mark.parametrize("fn, extra", [(sp.flag_index, ()), (sp.flag_argument, (True,)),
                                       (sp.flag_argument, (np.True_,)), (sp.flag_argument, (1,)),
                                       (sp.flag_through_helper, ())])
def test_an_index_that_is_a_truth_value_adds_an_axis(fn, extra):
    """A truth value is a number to Python but not to NumPy's indexing: ``x[True]`` is ``x[None]``.
    Taken for an element, the gradient summed every element's contribution into each (a wrong number)."""
    args = (np.array([0.3, 0.5, 0.7]), np.array([0.4, 0.6, 0.8])) + extra
    got = s2s_ad.grad(fn, wrt=(0, 1))(*args)
    for i in range(2):
        np.testing.assert_allclose(got[i], numeric_grad(fn, args, i), rtol=1e-6, atol=1e-9)
        assert np.shape(got[i]) == np.shape(args[i])
