"""Writes of a slice under ``backend="numba"`` (issue 36: first calls): the Numba target spells
``a[i:j] = v`` and ``a[i:j] += v`` as ``write_into``/``add_into`` (``passes/slice_writes.py``), whose
compiled versions (``targets/numba/slice_writes.py``) copy by loops instead of Numba's store, which
compiles a shape-formatting error message for seconds.  Oracles: NumPy's own store on the same
arrays, and for gradients central differences and the Python backend."""
import operator
import warnings

import numpy as np
import pytest

import s2s_ad
from s2s_ad.core import ir, runtime
from s2s_ad.core.kinds import NUMBER
from s2s_ad.passes.slice_writes import writes_as_stores, writes_by_call
from conftest import check_compiled_gradient, compiled_by_numba, numeric_grad

numba = pytest.importorskip("numba")


def _store(array: str, index: ir.Expr, op=None) -> ir.Store:
    return ir.Store(array, index, ir.Var("v"), line=7, op=op)


def _rewritten(store: ir.Store, kinds=None) -> ir.Stmt:
    fn = ir.Function("f", ["a", "v"], [store, ir.Return(ir.Var("a"))])
    return writes_by_call(fn, kinds or {"i": NUMBER, "n": NUMBER}).body[0]


def test_a_store_of_a_slice_becomes_a_call_keeping_the_stores_identity_and_line():
    store = _store("a", ir.Display("tuple", (ir.Slice(ir.Var("i"), ir.Var("n"), None), ir.Const(2))), op=operator.add)
    made = _rewritten(store)
    assert isinstance(made, ir.Effect) and made.sid == store.sid and made.line == 7
    assert made.value.fn is runtime.add_into
    index = made.value.args[1]
    assert isinstance(index, ir.Display) and index.items[0] == ir.Call(slice, (ir.Var("i"), ir.Var("n")))


def test_the_calls_turn_back_into_the_stores_they_were():
    """Vector mode reads stores: it takes the tangent code with the calls turned back."""
    stores = [_store("a", ir.Display("tuple", (ir.Slice(None, ir.Var("n"), ir.Const(2)), ir.Var("i"))), op=operator.add),
              _store("a", ir.Slice(ir.Var("i"), None, None))]
    fn = ir.Function("f", ["a", "v"], stores + [ir.Return(ir.Var("a"))])
    called = writes_by_call(fn, {"i": NUMBER, "n": NUMBER})
    assert all(isinstance(s, ir.Effect) for s in called.body[:2])
    back = writes_as_stores(called).body[:2]
    assert back == stores[:2] and [s.sid for s in back[:2]] == [s.sid for s in stores]


@pytest.mark.parametrize("index", [
    ir.Var("i"),  # an element: no slice
    ir.Display("tuple", (ir.Slice(None, None, None), ir.Var("rows"))),  # a name of unknown kind (an array?)
    ir.Display("list", (ir.Const(0), ir.Const(1))),  # an array of integers: a copy
])
def test_a_store_that_may_not_pick_a_view_is_left_as_it_is(index):
    store = _store("a", index)
    assert _rewritten(store) is store


def test_another_update_than_addition_is_left_as_it_is():
    store = _store("a", ir.Slice(None, ir.Var("n"), None), op=np.multiply)
    assert _rewritten(store) is store


# (array, index, value) whose compiled write must equal NumPy's: broadcasting, shared memory both
# ways, a negative step, integers and None in the index, integer values, three axes (the general loop)
def _cases():
    a = np.arange(24.0).reshape(4, 6)
    return [
        (np.arange(6.0), slice(1, None), slice(None, -1)),  # the array's own memory, shifted right
        (np.arange(6.0), slice(None, -1), slice(1, None)),  # and left (a slice: the value is array[it])
        (a.copy(), (slice(1, 3), slice(None, None, -2)), np.array([10.0, 20.0, 30.0])),
        (a.copy(), (2, slice(0, 4)), np.arange(4)),
        (a.copy(), (None, slice(1, 3), 0), np.array([[5.0, 6.0]])),
        (a.copy(), (slice(None), slice(2, 3)), a.T[2:3, :4].T.copy()),
        (np.arange(60.0).reshape(3, 4, 5), (slice(0, 2), slice(None), slice(1, 4)), np.ones((4, 1))),
    ]


@pytest.mark.parametrize("adding", [False, True])
@pytest.mark.parametrize("case", range(7))
def test_compiled_writes_give_numpys_arrays(case, adding):
    array, index, value = _cases()[case]
    helper = runtime.add_into if adding else runtime.write_into
    f = compiled_by_numba("def f(a, k, v):\n    helper(a, k, v)\n    return a\n", {"helper": helper})
    want, got = array.copy(), array.copy()
    if isinstance(value, slice):
        want_value, got_value = want[value], got[value]
        assert np.shares_memory(got_value, got)
    else:
        want_value, got_value = value, value
    if adding:
        want[index] += want_value
    else:
        want[index] = want_value
    np.testing.assert_array_equal(f(got, index, got_value), want)


def test_a_value_that_does_not_fit_raises_valueerror_compiled():
    f = compiled_by_numba("def f(a, k, v):\n    helper(a, k, v)\n    return a\n", {"helper": runtime.write_into})
    with pytest.raises(ValueError):
        f(np.zeros(5), slice(0, 3), np.ones(2))


def shifted(x):
    out = np.zeros(x.shape[0] + 2)
    out[1:-1] = x * x
    out[:-2] += 0.5 * x
    out[2:] = out[2:] + np.sin(out[1:-1])
    return np.sum(out ** 2)


def blurred(image):
    h, w = image.shape
    padded = np.zeros((h + 2, w + 2))
    padded[1:h + 1, 1:w + 1] = image
    total = np.zeros((h, w))
    for i in range(3):
        for j in range(3):
            total = total + padded[i:i + h, j:j + w] * (i + 1.0)
    return np.sum(total ** 2)


@pytest.mark.parametrize("fn, x", [
    (shifted, np.array([0.3, -0.7, 1.1, 0.4])),
    (blurred, np.random.default_rng(0).normal(size=(4, 3))),
])
def test_gradients_writing_slices_compile_and_match_differences(fn, x):
    check_compiled_gradient(fn, x)
    np.testing.assert_allclose(s2s_ad.grad(fn, backend="numba")(x), s2s_ad.grad(fn)(x), rtol=1e-13)


def test_the_compiled_gradient_writes_its_slices_by_call():
    x = np.ones((3, 3))
    with warnings.catch_warnings():
        warnings.simplefilter("error", s2s_ad.CompileFallbackWarning)
        source = s2s_ad.grad(blurred, backend="numba").source_for(x)
    assert "add_into(d_padded, (slice(i, " in source, source
    assert "] = " not in source.split("reverse sweep")[1], source  # (no store of a slice left in it)
    np.testing.assert_allclose(s2s_ad.grad(blurred, backend="numba")(x), numeric_grad(blurred, (x,), 0), rtol=1e-6)
