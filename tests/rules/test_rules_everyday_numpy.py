"""Issue 22, "missing NumPy rules that everyday code calls": np.asarray and its kin, np.interp,
np.polyval, np.convolve, np.correlate, np.vdot, np.trapezoid, np.cov, np.corrcoef, the nan*
reductions, np.logspace, np.meshgrid, np.copysign, np.ediff1d, np.rollaxis, np.r_ and np.c_, the
ufunc methods reduce and accumulate, where= and initial= on reductions, einsum's sublist form,
eigh(a, "U"), svd(compute_uv=False), np.real/imag/conj of real values, np.linalg.norm of a list, and
einsum over an empty batch.

Each is called from user code (tests/corpora/everyday_numpy_functions.py) and checked through every
transform (grad, value_and_grad, vjp, jvp, hessian, jacobian) against central differences and
against JAX, which runs the same code object with ``np`` bound to ``jax.numpy``; in float64 and in
float32.  What cannot be supported is a TransformError before anything runs.
"""
from __future__ import annotations

import types
from typing import Any, Callable

import numpy as np
import pytest

import everyday_numpy_functions as uf
import s2s_ad
from conftest import function_from_file, numeric_grad, optional_import
from s2s_ad.core.errors import TransformError

jax = optional_import("jax")
# Every test here also compares with JAX: without it the file is skipped, saying so (CI installs JAX
# in one environment, where a missing extra fails the run).
pytestmark = pytest.mark.skipif(jax is None, reason="could not import 'jax': JAX is not installed")
if jax is not None:
    import jax.numpy as jnp
    jax.config.update("jax_enable_x64", True)

_rng = np.random.default_rng(22)


def _draw(*shape: int, low: float = 0.2, high: float = 0.9) -> np.ndarray:
    return _rng.uniform(low, high, size=shape)


def _symmetric(n: int) -> np.ndarray:
    a = _rng.normal(size=(n, n))
    return a + a.T + np.diag(np.arange(n) * 3.0)  # distinct eigenvalues, far apart


def _eigh_upper(a):
    """The symmetric matrix NumPy's eigh(a, "U") reads, made from the upper triangle alone (JAX's eigh
    differentiates as if both triangles were read)."""
    w, v = jnp.linalg.eigh(jnp.triu(a) + jnp.triu(a, 1).T)
    return jnp.sum(w ** 2) + jnp.sum(v[:, 0] ** 2 * w[0]) + jnp.sum(w ** 3)


def _norm_of_list(x):
    return jnp.linalg.norm(jnp.stack([x[0], x[1] + 2.0])) + jnp.linalg.norm(jnp.stack([x[0] * x[1], 1.0, x[1]]), 1)


# name -> (function, arguments as made for each shape, the JAX oracle where the twin cannot run the code)
LOSSES: dict[str, tuple[Callable, list, Any]] = {
    "asarray": (uf.normalised_energy, [(_draw(3, 3),), (_draw(2, 4),)], None),
    "real_imag_conj": (uf.real_part_loss, [(_draw(4),), (_draw(2, 3),)], None),
    "asarray_of_list": (uf.list_converted, [(_draw(3),)], None),
    "norm_of_list": (uf.norm_of_list, [(_draw(2),), (np.array([-0.7, 0.4]),)], _norm_of_list),
    "interp": (uf.interpolation_loss, [(_draw(5), 0.05), (_draw(5, low=-1.0, high=1.0), -0.1)], None),
    "interp_left_right": (uf.interpolation_with_ends, [(_draw(5), 0.3)], None),
    "polyval": (uf.polynomial_fit_loss, [(_draw(4), _draw(6)), (_draw(1), _draw(3)), (_draw(3), _draw(2, 3))], None),
    "convolve": (uf.smoothed_roughness, [(_draw(7), _draw(3)), (_draw(4), _draw(6)), (_draw(5), _draw(2))], None),
    "correlate": (uf.matched_filter, [(_draw(7), _draw(3)), (_draw(3), _draw(5))], None),
    "vdot": (uf.vdot_energy, [(_draw(2, 3), _draw(2, 3)), (_draw(4), _draw(4))], None),
    "trapezoid": (uf.area_under_curve, [(_draw(6), np.cumsum(_draw(6))), (_draw(3), _draw(3))], None),
    "ediff1d": (uf.increments_loss, [(_draw(5),), (_draw(2, 3),)], None),
    "cov": (uf.covariance_penalty, [(_draw(6),)], None),
    "cov_rowvar": (uf.column_covariance, [(_draw(5, 3), _draw(5, 1)), (_draw(4, 3), _draw(4, 2))], None),
    "corrcoef": (uf.correlation_loss, [(_draw(6),), (_draw(9),)], None),
    "nan_reductions": (uf.nan_statistics, [(_draw(3, 4),), (_draw(4),)], None),
    "where_initial_ufunc_methods": (uf.masked_reductions, [(_draw(3, 4),)], None),
    "logspace": (uf.logspace_weights, [(_draw(2),)], None),
    "meshgrid": (uf.grid_potential, [(_draw(3), _draw(2)), (_draw(1), _draw(4))], None),
    "copysign": (uf.signed_magnitudes, [(_draw(4, low=-0.9, high=0.9),)], None),
    "rollaxis": (uf.rolled_batches, [(_draw(3, 2, 4),)], None),
    "r_and_c_": (uf.joined_features, [(_draw(3), 0.7)], None),
    "eigh_upper": (uf.spectrum_from_upper, [(_symmetric(3),), (_symmetric(4),)], _eigh_upper),
    "svd_values": (uf.singular_value_penalty, [(_draw(3, 3),), (_draw(4, 2),)], None),
    "einsum_sublists": (uf.sublist_contraction, [(_draw(3, 3), _draw(3, 2))], None),
    "einsum_empty_batch": (uf.empty_batch_contraction, [(np.zeros((0, 3)), _draw(3)), (_draw(2, 3), _draw(3))], None),
}

MAPS: dict[str, tuple[Callable, tuple]] = {
    "interp": (uf.interpolated_curve, (_draw(5),)),
    "convolve": (uf.smoothed, (_draw(6),)),
    "polyval": (uf.polynomial_curve, (_draw(4),)),
    "cov": (uf.covariance_matrix, (_draw(5),)),
    "nanmean": (uf.column_means, (_draw(3, 4),)),
    "r_": (uf.stacked_rows, (_draw(3),)),
}

CASES = [(name, k) for name, (_, shapes, _) in LOSSES.items() for k in range(len(shapes))]


class _JaxNumPy:
    """jax.numpy as the twins' np: it has no ascontiguousarray or asanyarray (no layouts, no subclasses)."""

    def __getattr__(self, name: str) -> Any:
        return jnp.asarray if name in ("ascontiguousarray", "asanyarray") else getattr(jnp, name)


def _twin(fn: Callable, oracle: Any = None) -> Callable:
    """The JAX oracle: the same code object with np bound to jax.numpy (or the one given)."""
    return oracle or types.FunctionType(fn.__code__, dict(fn.__globals__, np=_JaxNumPy()), fn.__name__)


def _float_positions(args: tuple) -> tuple:
    return tuple(i for i, a in enumerate(args) if isinstance(a, (float, np.ndarray)) and np.size(a) > 0)


def _case(name: str, k: int) -> tuple[Callable, tuple, Callable, tuple]:
    fn, shapes, oracle = LOSSES[name]
    args = shapes[k]
    return fn, args, _twin(fn, oracle), _float_positions(args)


def _jax_grads(twin: Callable, args: tuple, wrt: tuple) -> tuple:
    return tuple(np.asarray(g) for g in jax.grad(twin, argnums=wrt)(*args))


@pytest.mark.parametrize("name,k", CASES)
def test_gradient_of_everyday_numpy_call_matches_differences_and_jax(name, k):
    fn, args, twin, wrt = _case(name, k)
    ours = s2s_ad.grad(fn, wrt=wrt)(*args)
    jax_grads = _jax_grads(twin, args, wrt)
    for position, got, want in zip(wrt, ours, jax_grads):
        assert np.shape(got) == np.shape(args[position])
        assert np.all(np.isfinite(got)), (name, position, got)
        np.testing.assert_allclose(got, numeric_grad(fn, args, position), rtol=1e-5, atol=1e-6,
                                   err_msg=f"{name}: d/d{position} against central differences")
        np.testing.assert_allclose(got, want, rtol=1e-9, atol=1e-10, err_msg=f"{name}: d/d{position} against JAX")


@pytest.mark.parametrize("name,k", CASES)
def test_value_and_grad_and_vjp_agree_with_grad(name, k):
    fn, args, twin, wrt = _case(name, k)
    value, gradient = s2s_ad.value_and_grad(fn, wrt=wrt)(*args)
    np.testing.assert_allclose(value, fn(*args), rtol=1e-12)
    primal, pull_back = s2s_ad.vjp(fn, *args)
    np.testing.assert_allclose(primal, fn(*args), rtol=1e-12)
    pulled = pull_back(2.5)
    for position, g in zip(wrt, gradient):
        np.testing.assert_allclose(pulled[position], 2.5 * np.asarray(g), rtol=1e-12, atol=1e-14)


@pytest.mark.parametrize("name,k", CASES)
def test_jvp_matches_jax(name, k):
    fn, args, twin, wrt = _case(name, k)
    tangents = tuple(_rng.normal(size=np.shape(a)) if i in wrt else (np.zeros(np.shape(a)) if isinstance(a, np.ndarray)
                                                                     else 0.0) for i, a in enumerate(args))
    value, ours = s2s_ad.jvp(fn, args, tangents)
    _, want = jax.jvp(twin, args, tuple(jnp.asarray(t) for t in tangents))
    np.testing.assert_allclose(value, fn(*args), rtol=1e-12)
    np.testing.assert_allclose(ours, want, rtol=1e-9, atol=1e-10)


@pytest.mark.parametrize("name,k", [(name, k) for name, k in CASES if k == 0])  # (the first shape: hessians are slow)
def test_hessian_matches_jax(name, k):
    fn, args, twin, wrt = _case(name, k)
    position = wrt[0]
    ours = s2s_ad.hessian(fn, wrt=position)(*args)
    want = np.asarray(jax.hessian(twin, argnums=position)(*args))
    assert np.shape(ours) == np.shape(args[position]) * 2
    np.testing.assert_allclose(ours, want, rtol=1e-7, atol=1e-8, err_msg=f"{name}: hessian against JAX")


@pytest.mark.parametrize("name,k", [c for c in CASES if c[0] not in ("einsum_empty_batch",)])
def test_float32_arguments_give_float32_gradients_close_to_jax(name, k):
    fn, args, twin, wrt = _case(name, k)
    single = tuple(np.asarray(a, dtype=np.float32) if isinstance(a, np.ndarray) else a for a in args)
    ours = s2s_ad.grad(fn, wrt=wrt)(*single)
    want = _jax_grads(twin, args, wrt)  # the float64 answer
    for position, got, w in zip(wrt, ours, want):
        if isinstance(single[position], np.ndarray):
            assert np.asarray(got).dtype == np.float32, (name, position, np.asarray(got).dtype)
        np.testing.assert_allclose(got, w, rtol=2e-3, atol=2e-3 * max(1.0, float(np.max(np.abs(w)))))


@pytest.mark.parametrize("name", sorted(MAPS))
def test_jacobian_vjp_and_jvp_of_array_valued_calls_match_jax(name):
    fn, args = MAPS[name]
    twin = _twin(fn)
    want = np.asarray(jax.jacobian(twin)(*args))
    ours = s2s_ad.jacobian(fn)(*args)
    np.testing.assert_allclose(ours, want, rtol=1e-9, atol=1e-10)
    cotangent = _rng.normal(size=np.shape(fn(*args)))
    _, pull_back = s2s_ad.vjp(fn, *args)
    np.testing.assert_allclose(pull_back(cotangent)[0], np.tensordot(cotangent, want, axes=np.ndim(cotangent)),
                               rtol=1e-9, atol=1e-10)
    tangent = _rng.normal(size=np.shape(args[0]))
    np.testing.assert_allclose(s2s_ad.jvp(fn, args, (tangent,))[1],
                               np.tensordot(want, tangent, axes=np.ndim(tangent)), rtol=1e-9, atol=1e-10)


# -- kinks and edge cases NumPy defines ------------------------------------------------------------

NAN_REDUCTIONS = ["nanmax", "nanmin", "nanmean", "nansum", "nanprod", "nanvar", "nanstd", "nanmedian"]


@pytest.mark.parametrize("reduce", NAN_REDUCTIONS)
def test_nan_elements_get_zero_gradient_and_all_nan_slices_zero(tmp_path, reduce):
    source = (f"import numpy as np\n\nDATA = np.array([[np.nan, np.nan, np.nan], [0.5, np.nan, 0.25]])\n\n\n"
              f"def f(w, row):\n    return np.{reduce}(DATA + w, axis=1)[row]\n")
    f = function_from_file(tmp_path, f"nan_rows_{reduce}", source)
    w = np.array([0.1, 0.2, 0.3])
    with np.errstate(all="ignore"), __import__("warnings").catch_warnings():
        __import__("warnings").simplefilter("ignore", RuntimeWarning)
        present = s2s_ad.grad(f)(w, 1)
        all_missing = s2s_ad.grad(f)(w, 0)
    np.testing.assert_array_equal(all_missing, 0.0)  # NumPy gives NaN there: nothing moves it
    assert present[1] == 0.0  # the NaN element
    want = jax.grad(lambda v: getattr(jnp, reduce)(jnp.asarray(f.__globals__["DATA"])[1] + v))(w)
    np.testing.assert_allclose(present, np.asarray(want), rtol=1e-12, atol=1e-12)


def test_ties_in_nanmax_share_the_gradient_evenly():
    got = s2s_ad.grad(uf_ties)(np.array([0.5, np.nan, 0.5, 0.25]))
    np.testing.assert_allclose(got, [0.5, 0.0, 0.5, 0.0])
    np.testing.assert_allclose(got, np.asarray(jax.grad(lambda x: jnp.nanmax(x))(jnp.array([0.5, np.nan, 0.5, 0.25]))))


def uf_ties(x):
    return np.nanmax(x)


def test_copysign_reads_the_sign_bit_of_negative_zero():
    got = s2s_ad.grad(uf.signed_magnitudes)(np.array([0.3, 0.4, 0.5, 0.6]))
    np.testing.assert_allclose(got, [1.0, -2.0, -3.0, 4.0])
    got = s2s_ad.grad(uf.signed_magnitudes)(np.array([-0.3, -0.4, -0.5, -0.6]))
    np.testing.assert_allclose(got, [-1.0, 2.0, 3.0, -4.0])


def test_interp_at_knots_takes_the_segment_to_the_right_as_jax():
    values = np.array([0.0, 1.0, 3.0, 2.0, 5.0])
    for shift in (0.0, 0.5 - uf.QUERY[2], 3.0 - uf.QUERY[-2]):  # on no knot, on a knot, on the last knot
        ours = s2s_ad.grad(uf.interpolation_loss, wrt=(0, 1))(values, shift)
        want = jax.grad(_twin(uf.interpolation_loss), argnums=(0, 1))(values, shift)
        for got, w in zip(ours, want):
            np.testing.assert_allclose(got, np.asarray(w), rtol=1e-12, atol=1e-12)


def test_svd_values_of_repeated_singular_values_are_finite():
    # the nuclear norm of the identity: gradient I, though every gap between singular values is zero
    got = s2s_ad.grad(uf.singular_value_penalty)(np.eye(3))
    np.testing.assert_allclose(got, np.eye(3) + 2.0 * np.diag([1.0, 0.0, 0.0]), atol=1e-12)


def test_einsum_over_an_empty_batch_has_an_empty_gradient():
    batch, w = np.zeros((0, 3)), np.array([0.2, 0.5, 0.7])
    d_batch, d_w = s2s_ad.grad(uf.empty_batch_contraction, wrt=(0, 1))(batch, w)
    assert d_batch.shape == (0, 3)
    np.testing.assert_allclose(d_w, 2.0 * w)


def test_mean_with_where_that_reads_nothing_in_a_row_is_zero_there():
    got = s2s_ad.grad(_masked_rows)(np.ones((2, 3)))
    np.testing.assert_allclose(got[0], 0.0)
    np.testing.assert_allclose(got[1], [0.5, 0.0, 0.5])


def _masked_rows(x):
    return np.mean(x, axis=1, where=np.array([[False, False, False], [True, False, True]]))[1]


def test_generated_code_spells_ufunc_methods_and_einsum_subscripts():
    text = s2s_ad.grad(uf.masked_reductions).source_for(_draw(3, 4))
    assert "np.add.reduce(" in text and "np.multiply.accumulate(" in text and "np.maximum.reduce(" in text
    text = s2s_ad.grad(uf.sublist_contraction).source_for(_draw(3, 3), _draw(3, 2))
    assert "np.einsum('ab,bc->ac', a, b)" in text


# -- what cannot be supported is refused before anything runs ----------------------------------------

@pytest.mark.parametrize("body,named", [
    ("return np.sum(np.r_[0:3, x])", "np.r_[...] with a slice or a directive string"),
    ("return np.sum(np.r_['0,2', x, x])", "np.r_[...] with a slice or a directive string"),
    ("return np.sum(np.cov(np.stack([x, x ** 2]), fweights=np.array([1, 2, 1])))", "fweights"),
    ("return np.sum(np.interp(np.array([0.5]), np.array([0.0, 1.0, 2.0]), x, period=2.0))", "period"),
    ("return np.nanquantile(x, 0.5)", "np.nanquantile"),
])
def test_unsupported_forms_are_a_transform_error_naming_the_line(tmp_path, body, named):
    f = function_from_file(tmp_path, "refused_everyday", f"import numpy as np\n\n\ndef f(x):\n    {body}\n")
    transformed = s2s_ad.grad(f)
    with pytest.raises(TransformError) as caught:
        transformed(np.array([0.2, 0.4, 0.9]))
    message = str(caught.value)
    assert "refused_everyday.py:5" in message and named in message, message
