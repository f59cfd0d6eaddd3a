"""Issue 22, "errors that point at the right place": a run-time error names the user's line, a
library function without a rule is refused at the user's call (expm, eig), Hessian-vector products of
container arguments work, check_grad takes a float32 cast's noise for noise, and grad of a function
returning a string is a TypeError."""
from __future__ import annotations

import inspect

import numpy as np
import pytest

import s2s_ad
import error_location_functions as ef

jax = pytest.importorskip("jax")
jax.config.update("jax_enable_x64", True)
jnp = jax.numpy


def line_of(fn, marker: str) -> int:
    """The file line of ``fn``'s source line holding ``marker``."""
    lines, first = inspect.getsourcelines(fn)
    return first + next(i for i, text in enumerate(lines) if marker in text)


def test_a_run_time_shape_mismatch_in_generated_code_names_the_users_line():
    with pytest.raises(ValueError) as caught:
        s2s_ad.grad(ef.shape_mismatch)(np.ones(3), np.ones((2, 4)))
    note = "\n".join(getattr(caught.value, "__notes__", []))
    assert f"generated from line {line_of(ef.shape_mismatch, 'the shape mismatch')} of error_location_functions.py" \
        in note, note


@pytest.mark.skipif(ef.scipy is None, reason="SciPy is not installed")
def test_a_library_function_without_a_rule_is_refused_at_the_users_call_not_inside_scipy():
    with pytest.raises(s2s_ad.TransformError) as caught:
        s2s_ad.grad(ef.uses_expm)(np.eye(2))
    error = caught.value
    assert error.filename.endswith("error_location_functions.py")
    assert error.line == line_of(ef.uses_expm, "expm without a rule")
    assert "expm" in error.construct and "no derivative rule" in error.hint and "@s2s_ad.adjoint" in error.hint


def test_a_package_lent_from_another_environments_site_packages_is_a_librarys(tmp_path, monkeypatch):
    """A package found in a site-packages folder this interpreter's own paths do not name (lent by a
    .pth file from another environment, as SciPy is to a worktree's venv) is a library's: a call of
    its function with no rule is refused at the user's line naming the call (it named the package's
    own starred expression), and its objects are not read as the user's."""
    lent = tmp_path / "other-env" / "lib" / "site-packages"
    lent.mkdir(parents=True)
    (lent / "lentpkg.py").write_text("def spread(x):\n    parts = [x, x]\n    return sum(*[parts])\n")
    monkeypatch.syspath_prepend(str(lent))
    script = tmp_path / "mine.py"
    script.write_text("import lentpkg\n\n\ndef f(x):\n    y = x * 2.0\n    return lentpkg.spread(y)\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    import mine
    with pytest.raises(s2s_ad.TransformError) as caught:
        s2s_ad.grad(mine.f)(1.5)
    error = caught.value
    assert (error.filename, error.line) == (str(script), 6)
    assert "lentpkg.spread" in error.construct and "no derivative rule" in error.hint, str(error)


def test_a_library_function_without_a_rule_called_on_constants_simply_runs():
    np.testing.assert_allclose(s2s_ad.grad(ef.expm_of_a_constant)(1.5), np.sum(__import__("scipy").linalg.expm(np.eye(2))))


def test_eig_is_refused_as_eig_not_as_the_real_attribute_of_its_result():
    with pytest.raises(s2s_ad.TransformError) as caught:
        s2s_ad.grad(ef.uses_eig)(np.eye(2) + 0.1)
    error = caught.value
    assert "eig" in error.construct and ".real" not in error.construct
    assert error.line == line_of(ef.uses_eig, "eig without a rule")


X = np.array([0.5, -1.0])
W = np.array([[0.1, 0.2], [0.3, -0.4]])
B = np.array([0.1, 0.0])
VW = np.array([[1.0, -2.0], [0.5, 0.25]])
VB = np.array([0.3, -0.7])


def jax_hvp(loss, p, v, x):
    return jax.jvp(jax.grad(loss), (p, x), (v, jnp.zeros_like(x)))[1]


def test_a_hessian_vector_product_of_a_dict_argument_works():
    def loss(p, x):
        return jnp.sum(jnp.tanh(p["W"] @ x + p["b"]) ** 2)

    p, v = {"W": W, "b": B}, {"W": VW, "b": VB}
    gradient, product = s2s_ad.jvp(s2s_ad.grad(ef.loss_of_dict), (p, X), (v, None))
    want = jax_hvp(loss, p, v, X)
    assert set(product) == {"W", "b"}
    for key in ("W", "b"):
        np.testing.assert_allclose(product[key], want[key], rtol=1e-10)
        np.testing.assert_allclose(gradient[key], jax.grad(loss)(p, X)[key], rtol=1e-10)


def test_a_hessian_vector_product_of_a_tuple_argument_by_two_parameters_works():
    def loss(p, x):
        W_, b = p
        return jnp.sum(jnp.tanh(W_ @ x + b) ** 2) + jnp.sum(x * b)

    v, vx = (VW, VB), np.array([0.2, 0.9])
    _, product = s2s_ad.jvp(s2s_ad.grad(ef.loss_of_tuple, wrt=(0, 1)), ((W, B), X), (v, vx))
    want = jax.jvp(jax.grad(loss, argnums=(0, 1)), ((W, B), X), (v, vx))[1]
    for got, expected in zip(list(product[0]) + [product[1]], list(want[0]) + [want[1]]):
        np.testing.assert_allclose(got, expected, rtol=1e-10)
    hessian_vector = np.tensordot(s2s_ad.hessian(ef.loss_of_tuple)((W, B), X)[0][0], VW, 2) \
        + np.tensordot(s2s_ad.hessian(ef.loss_of_tuple)((W, B), X)[0][1], VB, 1)
    np.testing.assert_allclose(s2s_ad.jvp(s2s_ad.grad(ef.loss_of_tuple), ((W, B), X), (v, None))[1][0],
                               hessian_vector, rtol=1e-10)


def test_check_grad_does_not_report_the_noise_of_a_float32_cast_as_a_mismatch():
    report = s2s_ad.check_grad(ef.float32_inside, np.array([1.0, 0.3, -2.0]))
    assert report.ok, str(report)


def wrong_sin_32(x):
    return np.sin(x)


@s2s_ad.adjoint(wrong_sin_32)
def _(out, x, d_out):
    d_x = 1.01 * d_out * np.cos(x)  # deliberately 1% off


def uses_wrong_sin_32(x):
    return np.sum(wrong_sin_32(x.astype(np.float32)))


def test_check_grad_still_reports_a_one_percent_wrong_rule_in_a_float32_computation():
    report = s2s_ad.check_grad(uses_wrong_sin_32, np.array([1.0, 0.3]))
    assert not report.ok, str(report)


@pytest.mark.parametrize("how", ["grad", "value_and_grad"])
@pytest.mark.parametrize("x", [1.0, np.ones(2)])
def test_grad_of_a_function_returning_a_string_is_a_type_error(how, x):
    with pytest.raises(TypeError, match="returned a str"):
        getattr(s2s_ad, how)(ef.returns_a_string)(x)
