"""Arrays of other libraries (s2s_ad/targets/array_api/): PyTorch, JAX, Dask and array_api_strict.

For each library (CPU, float64), the functions of ``array_library_functions`` (numbers and arrays,
loops, element reads, a helper, reductions, broadcasting, elementwise functions, a matrix product)
and the everyday corpus (``everyday_functions``, slow) are differentiated with the library's arrays
as arguments.  The gradient must be an array of that library (computed by it: the generated code
names ``xp``, never ``np``), equal to the gradient of the same function of NumPy arrays to rounding
(compared after converting the *result* to NumPy, here in the test only), and the arguments must not
change.  What cannot work is refused before anything runs: a ``TransformError`` naming the user's
line, or a ``TypeError`` at the call.

Each library's tests skip, saying why, where it is not installed; under
``S2S_AD_REQUIRE_EXTRAS=torch,jax,dask,array_api_strict,array_api_compat`` (CI's job of the
``arrays`` extra) such a skip fails.
"""
from __future__ import annotations

import inspect
import subprocess
import sys
import warnings
from dataclasses import dataclass
from typing import Any, Callable

import numpy as np
import pytest

import s2s_ad
from s2s_ad import TransformError

import array_library_functions as af
import everyday_functions as ef


@dataclass
class Library:
    """How the tests make, read and recognise one library's arrays."""

    name: str
    make: Callable[[np.ndarray], Any]  # a float64 array of the library holding these numbers
    to_numpy: Callable[[Any], np.ndarray]  # (the test's own conversion, of results only)
    array_type: type


def _torch() -> Library:
    torch = pytest.importorskip("torch", reason="torch is not installed (the arrays extra's CI job has it)")
    return Library("torch", lambda a: torch.tensor(a, dtype=torch.float64), lambda t: t.numpy(), torch.Tensor)


def _jax() -> Library:
    jax = pytest.importorskip("jax", reason="jax is not installed (the arrays extra's CI job has it)")
    jax.config.update("jax_enable_x64", True)
    import jax.numpy as jnp
    return Library("jax", lambda a: jnp.asarray(a, dtype=jnp.float64), np.asarray, jax.Array)


def _dask() -> Library:
    pytest.importorskip("dask", reason="dask is not installed (the arrays extra's CI job has it)")
    da = pytest.importorskip("dask.array", reason="dask.array is not installed (pip install 'dask[array]')")
    return Library("dask", lambda a: da.from_array(a, chunks=2), lambda d: np.asarray(d.compute()), da.Array)


def _strict() -> Library:
    strict = pytest.importorskip("array_api_strict", reason="array_api_strict is not installed")
    return Library("array_api_strict", lambda a: strict.asarray(a, dtype=strict.float64),
                   lambda s: np.asarray(s._array), type(strict.asarray(0.0)))


MAKERS = {"torch": _torch, "jax": _jax, "dask": _dask, "array_api_strict": _strict}


@pytest.fixture(params=list(MAKERS))
def library(request) -> Library:
    pytest.importorskip("array_api_compat", reason="array_api_compat is not installed (pip install 's2s_ad[arrays]')")
    return MAKERS[request.param]()


def _library(name: str) -> Library:
    pytest.importorskip("array_api_compat", reason="array_api_compat is not installed (pip install 's2s_ad[arrays]')")
    return MAKERS[name]()


_RNG = np.random.default_rng(21)
X = np.array([0.3, 0.7, -0.4, 1.1])
CASES = {
    af.numbers_and_an_array: (X, 1.5),
    af.loop_over_elements: (X, 0.5),
    af.calls_a_helper: (X, 2.0),
    af.branches_on_a_value: (X, 3.0),
    af.matrix_and_vector: (_RNG.normal(size=(3, 4)), _RNG.normal(size=(2, 4))),
    af.concatenated_and_powered: (X, -0.5),
    af.outer_broadcast: (X, 1.25),
    af.accumulates_in_a_copy: (X, 2.0),
    af.flipped_and_rolled_by_position: (X, 1.5),
    af.reduced_along_an_axis_by_position: (X, 0.75),
    af.triangles_by_position: (X, -1.25),
    af.loop_down_a_range: (X, 0.5),
}
# Refused for one library, before anything runs: (library, function) -> words of the message.
REFUSED = {("jax", af.accumulates_in_a_copy): "immutable", ("dask", af.accumulates_in_a_copy): "not seen through"}
# Refused by the library itself, at run time, where NumPy's meaning is not its own: array_api_strict has
# no arithmetic on booleans (the derivatives of np.maximum and np.max multiply by a mask).
LIBRARY_REFUSES = {("array_api_strict", af.branches_on_a_value): "dtypes are allowed",
                   ("array_api_strict", af.outer_broadcast): "dtypes are allowed"}


def _as(library: Library, value: Any) -> Any:
    return library.make(value) if isinstance(value, np.ndarray) else value


def _params(fn: Callable) -> tuple[str, ...]:
    return tuple(inspect.signature(fn).parameters)


def _check_gradient(library: Library, got: Any, want: Any, primal: Any) -> None:
    """An array of the library where the argument is one (a 0-d one for a number), equal to NumPy's."""
    assert isinstance(got, library.array_type), f"{type(got).__name__}, not an array of {library.name}"
    numbers = library.to_numpy(got)
    assert numbers.shape == np.shape(want) and numbers.dtype == np.float64
    np.testing.assert_allclose(numbers, want, rtol=1e-12, atol=1e-13)


def _unchanged(library: Library, args: tuple, given: tuple) -> None:
    for before, after in zip(args, given):
        if isinstance(before, np.ndarray):
            np.testing.assert_array_equal(library.to_numpy(after), before)


@pytest.mark.parametrize("fn", list(CASES), ids=lambda f: f.__name__)
def test_value_and_grad_are_the_librarys_and_equal_numpys(library, fn):
    args = CASES[fn]
    wrt = tuple(range(len(args)))
    given = tuple(_as(library, a) for a in args)
    refused = REFUSED.get((library.name, fn))
    if refused:
        with pytest.raises(TransformError, match=refused) as caught:
            s2s_ad.value_and_grad(fn, wrt=wrt)(*given)
        assert f"{af.__file__}:" in str(caught.value)  # the user's line named
        return
    if (library.name, fn) in LIBRARY_REFUSES:
        with pytest.raises(TypeError, match=LIBRARY_REFUSES[(library.name, fn)]):
            s2s_ad.value_and_grad(fn, wrt=wrt)(*given)
        return
    want_value, want = s2s_ad.value_and_grad(fn, wrt=wrt)(*args)
    value, got = s2s_ad.value_and_grad(fn, wrt=wrt)(*given)
    assert isinstance(value, library.array_type)
    np.testing.assert_allclose(library.to_numpy(value), want_value, rtol=1e-12)
    for g, w, primal in zip(got, want, given):
        _check_gradient(library, g, w, primal)
    _unchanged(library, args, given)


@pytest.mark.parametrize("fn", list(CASES), ids=lambda f: f.__name__)
def test_jvp_is_the_librarys_and_equals_numpys(library, fn):
    args = CASES[fn]
    tangents = tuple(np.linspace(-1.0, 1.0, a.size).reshape(a.shape) if isinstance(a, np.ndarray) else 0.5
                     for a in args)
    given = tuple(_as(library, a) for a in args)
    given_tangents = tuple(_as(library, t) for t in tangents)
    if REFUSED.get((library.name, fn)):
        with pytest.raises(TransformError, match=REFUSED[(library.name, fn)]):
            s2s_ad.jvp(fn, given, given_tangents)
        return
    if (library.name, fn) in LIBRARY_REFUSES:
        with pytest.raises(TypeError, match=LIBRARY_REFUSES[(library.name, fn)]):
            s2s_ad.jvp(fn, given, given_tangents)
        return
    want_out, want_tangent = s2s_ad.jvp(fn, args, tangents)
    out, tangent = s2s_ad.jvp(fn, given, given_tangents)
    for got, want in ((out, want_out), (tangent, want_tangent)):
        assert isinstance(got, library.array_type)
        np.testing.assert_allclose(library.to_numpy(got), want, rtol=1e-12, atol=1e-13)
    _unchanged(library, args, given)
    _unchanged(library, tangents, given_tangents)


def test_one_gradient_serves_numpy_and_the_library_call_by_call(library):
    """A gradient made once is called with NumPy arrays and with the library's, in turn: each call
    runs the code of its arguments' target (cached apart), and gives gradients of their type."""
    df = s2s_ad.grad(af.calls_a_helper)
    want = df(X, 2.0)
    for _ in range(2):
        got = df(library.make(X), 2.0)
        _check_gradient(library, got, want, None)
        again = df(X, 2.0)
        assert isinstance(again, np.ndarray)
        np.testing.assert_array_equal(again, want)
    source = df.source_for(library.make(X), 2.0)
    assert "xp." in source and "np." not in source.replace("# ", "")


def test_a_float32_argument_gives_a_float32_gradient():
    _library("torch")
    import torch
    got = s2s_ad.grad(af.numbers_and_an_array)(torch.tensor(X, dtype=torch.float32), 1.5)
    assert got.dtype == torch.float32
    np.testing.assert_allclose(got.numpy(), s2s_ad.grad(af.numbers_and_an_array)(X.astype(np.float32), 1.5),
                               rtol=1e-5)


def test_a_gradient_shares_no_memory_with_the_arguments():
    """d/dy sum(x * y) holds x's numbers, and jvp's tangent of x + 0 is the tangent given: each is a
    tensor of its own, sharing no storage with an argument."""
    _library("torch")
    import torch
    x, y = torch.tensor(X), torch.tensor(X[::-1].copy())
    gx, gy = s2s_ad.grad(_sum_of_products, wrt=(0, 1))(x, y)
    for g in (gx, gy):
        for a in (x, y):
            assert g.untyped_storage().data_ptr() != a.untyped_storage().data_ptr()
    out, tangent = s2s_ad.jvp(_identity_plus_zero, (x,), (y,))
    assert tangent.untyped_storage().data_ptr() != y.untyped_storage().data_ptr()
    np.testing.assert_array_equal(tangent.numpy(), y.numpy())


def _sum_of_products(x, y):
    return np.sum(x * y)


def _identity_plus_zero(x):
    return x + 0.0


@pytest.mark.parametrize("name", ["torch", "jax", "dask", "array_api_strict"])
def test_a_function_outside_the_namespace_is_refused_naming_the_line(name):
    library = _library(name)
    with pytest.raises(TransformError) as caught:
        s2s_ad.grad(af.uses_linalg)(library.make(X), 2.0)
    message = str(caught.value)
    line = inspect.getsourcelines(af.uses_linalg)[1] + 2
    assert f"{af.__file__}:{line}" in message and "np.linalg.norm" in message and "NumPy arrays" in message


def test_torch_has_no_negative_steps():
    library = _library("torch")
    with pytest.raises(TransformError, match="negative step") as caught:
        s2s_ad.grad(af.reversed_by_a_step)(library.make(X), 2.0)
    assert f"{af.__file__}:{inspect.getsourcelines(af.reversed_by_a_step)[1] + 2}" in str(caught.value)


def test_mixed_arguments_are_refused_at_the_call(library):
    df = s2s_ad.grad(af.matrix_and_vector)
    with pytest.raises(TypeError, match="mix NumPy arrays and arrays of"):
        df(library.make(np.ones((2, 3))), np.ones((2, 3)))
    with pytest.raises(TypeError, match="mix NumPy arrays and arrays of"):
        s2s_ad.grad(_sum_of_pair)((library.make(X), X))
    with pytest.raises(TypeError, match="higher derivatives"):
        s2s_ad.grad(s2s_ad.grad(_scalar_cube))(library.make(np.array(0.5)))


def _sum_of_pair(pair):
    return np.sum(pair[0] * pair[1])


def _scalar_cube(x):
    return x * x * x


def test_a_tensor_that_requires_grad_is_refused():
    _library("torch")
    import torch
    with pytest.raises(TypeError, match="requires grad"):
        s2s_ad.grad(af.numbers_and_an_array)(torch.tensor(X, requires_grad=True), 1.0)


def test_backend_numba_takes_numpy_arrays_only(library):
    pytest.importorskip("numba", reason="numba is not installed (backend='numba')")
    with pytest.raises(TypeError, match="backend='numba'"):
        s2s_ad.grad(af.numbers_and_an_array, backend="numba")(library.make(X), 1.0)


def test_one_target_per_namespace_part_of_the_cache_key(library):
    from s2s_ad.targets.array_api import target as array_api_target
    a, b = library.make(X), library.make(X + 1.0)
    assert array_api_target.target_for(a) is array_api_target.target_for(b)
    df = s2s_ad.grad(af.calls_a_helper)
    df(a, 1.0)
    df(X, 1.0)
    assert len({key[0] for key in df._by_kinds if isinstance(key[0], array_api_target.ArrayAPITarget)}) == 1


def test_nothing_of_these_libraries_is_imported_unless_their_arrays_are_passed(tmp_path):
    """Importing s2s_ad and differentiating with numbers, NumPy arrays and a container imports no
    array library nor array-api-compat (the base install needs none of them)."""
    program = tmp_path / "program.py"
    program.write_text(
        "import numpy as np, s2s_ad, sys\n"
        "def f(x, w):\n    return np.sum(np.sin(x) * x) * w\n"
        "def g(p):\n    return np.sum(p['a'] * p['b'])\n"
        "s2s_ad.grad(f)(np.ones(3), 2.0)\n"
        "s2s_ad.grad(f, wrt=1)(np.ones(3), 2.0)\n"
        "s2s_ad.grad(g)({'a': np.ones(2), 'b': 3.0})\n"
        "s2s_ad.jvp(f, (np.ones(3), 2.0), (np.ones(3), 1.0))\n"
        "print(sorted(m for m in sys.modules if m.startswith(('torch', 'jax', 'dask', 'array_api'))))\n")
    out = subprocess.run([sys.executable, str(program)], capture_output=True, text=True, check=False)
    assert out.stdout.strip() == "[]", out.stdout + out.stderr


# -- the everyday corpus --------------------------------------------------------------------------

_EVERYDAY_LEFT_OUT = {  # draws (refused for every library: their generators are NumPy's), prints
    "with_random_noise", "noise_in_a_loop", "noise_from_a_generator", "chained_middle_is_random",
    "chained_short_circuit", "with_opaque_constant", "with_fstring_print",
    "list_of_zeros_written",  # (ys[0] + ys[1] * ys[2] of list items: add_adjoint has no version for other libraries)
    # refused for NumPy's arrays too
    "generator_draws_in_a_checkpointed_loop", "helper_draws_in_a_checkpointed_loop",
    "noise_in_a_checkpointed_loop", "vector_of_generator_noise"}
# Writes into arrays of the user's: refused for JAX (immutable) and Dask (a write is not seen through
# arrays made from the one written, as NumPy's views see it), naming the line.
_WRITES = {"alias_of_fresh", "augmented_array", "constant_array_then_store", "dtype_float", "dtype_float64",
           "element_read_and_written_in_a_loop", "ellipsis_store_and_read", "first_of_1d_is_a_number",
           "float32_buffer", "index_updates_in_a_loop", "masked_in_place", "masked_on_self", "neg_pos_pow",
           "product_written", "repeated_fancy_index_update", "self_reads", "write_into_concatenate",
           "write_into_copy", "write_into_exp", "write_into_scaled_copy", "zero_plus"}
_S2S_AD_REFUSES = {"torch": {"zip_in_zip"},  # x[::-1]: PyTorch has no negative steps
                   "jax": _WRITES, "dask": _WRITES, "array_api_strict": set()}
# What the library itself refuses of NumPy's meaning (its own error, at run time): array_api_strict keeps
# to the standard (no len(), no mixing of integers and floats, no arithmetic on booleans, no fancy stores).
_LIBRARY_REFUSES = {
    "torch": set(), "jax": set(), "dask": set(),
    "array_api_strict": {"cast_to_int_carries_nothing", "chained_value", "enumerate_reversed", "enumerate_zip",
                         "float32_buffer", "repeated_fancy_index_update", "twice_builtin", "zip_in_zip",
                         "zip_range"},
}
EVERYDAY = [fn for name, fn in inspect.getmembers(ef, inspect.isfunction)
            if fn.__module__ == ef.__name__ and not name.startswith("_") and name not in _EVERYDAY_LEFT_OUT]


@pytest.mark.slow
@pytest.mark.parametrize("fn", EVERYDAY, ids=lambda f: f.__name__)
def test_everyday_gradients_through_the_library(library, fn):
    """Each everyday function's gradient through the library equals NumPy's, or is refused as listed
    above: by s2s_ad before it runs (a TransformError naming a line of the function), or by the
    library where its standard says NumPy's meaning is not its own."""
    x = np.array([0.3, 0.7, -0.4])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        want = s2s_ad.grad(fn)(x)
        given = library.make(x)
        if fn.__name__ in _S2S_AD_REFUSES[library.name]:
            with pytest.raises(TransformError) as refused:
                s2s_ad.grad(fn)(given)
            assert f"{ef.__file__}:" in str(refused.value)
            return
        if fn.__name__ in _LIBRARY_REFUSES[library.name]:
            with pytest.raises(Exception) as raised:
                s2s_ad.grad(fn)(given)
            assert not isinstance(raised.value, TransformError)
            return
        got = s2s_ad.grad(fn)(given)
    _check_gradient(library, got, want, given)
    _unchanged(library, (x,), (given,))


def test_vjp_jacobian_hessian_and_check_grad_say_they_take_numpy_arrays(library):
    given = (library.make(X), 1.5)
    for name, call in (("vjp", lambda: s2s_ad.vjp(af.numbers_and_an_array, *given)),
                       ("jacobian", lambda: s2s_ad.jacobian(af.numbers_and_an_array)(*given)),
                       ("hessian", lambda: s2s_ad.hessian(af.numbers_and_an_array)(*given)),
                       ("check_grad", lambda: s2s_ad.check_grad(af.numbers_and_an_array, *given))):
        with pytest.raises(TypeError, match=f"{name} of numbers_and_an_array takes NumPy arrays only"):
            call()


def test_the_self_check_is_skipped_with_a_warning(library):
    from s2s_ad.api.selfcheck import SelfCheckSkipped
    with pytest.warns(SelfCheckSkipped, match="arrays of another library"):
        got = s2s_ad.value_and_grad(af.numbers_and_an_array, check=True)(library.make(X), 1.5)[1]
    np.testing.assert_allclose(library.to_numpy(got), s2s_ad.grad(af.numbers_and_an_array)(X, 1.5), rtol=1e-12)


def test_containers_and_has_aux(library):
    """A dict of the library's arrays and numbers gives a dict of gradients of the library's arrays (a
    float's a 0-d one); has_aux hands the auxiliary value back as computed."""
    params = {"w": library.make(X), "b": 0.3}
    got = s2s_ad.grad(_dict_loss)(params, library.make(X[::-1].copy()))
    want = s2s_ad.grad(_dict_loss)({"w": X, "b": 0.3}, X[::-1].copy())
    assert set(got) == {"w", "b"}
    _check_gradient(library, got["w"], want["w"], None)
    np.testing.assert_allclose(library.to_numpy(got["b"]), want["b"], rtol=1e-12)
    gradient, aux = s2s_ad.grad(_loss_with_aux, has_aux=True)(library.make(X))
    _check_gradient(library, gradient, s2s_ad.grad(_loss_with_aux, has_aux=True)(X)[0], None)
    assert isinstance(aux, library.array_type)
    np.testing.assert_allclose(library.to_numpy(aux), np.sin(X))


def _dict_loss(params, x):
    return np.sum((params["w"] * x + params["b"]) ** 2)


def _loss_with_aux(x):
    s = np.sin(x)
    return np.sum(s * s), s
